//! `check` over copies of the sample registry: clean, each registry-wide rule with its
//! code, file and pointer, and derived files that disagree with the entries (hand
//! edits), with and without npm metadata.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod registry_support;

use std::fs;

use curupira_diagnostics::Severity;
use registry_support::{Copy, found, one, with_code};
use serde_json::json;
use spirit_registry::{RegistryError, check, codes};

/// `(severity, code, file, pointer)` in a form easy to write down.
fn diag(
    severity: Severity,
    code: &str,
    file: &str,
    path: &str,
) -> (Severity, String, String, String) {
    (severity, code.to_owned(), file.to_owned(), path.to_owned())
}

const ERROR: Severity = Severity::Error;
const WARNING: Severity = Severity::Warning;

#[test]
fn the_sample_as_committed_checks_clean_but_for_its_missing_derived_files() {
    let root = registry_support::sample();
    let report = check(&root, None).unwrap();
    let mut expected: Vec<_> = registry_support::IDS
        .iter()
        .map(|id| {
            diag(
                WARNING,
                "registry/missing-derived",
                &format!("registry/extensions/{id}/detail.json"),
                "",
            )
        })
        .collect();
    expected.push(diag(
        WARNING,
        "registry/missing-derived",
        "registry/catalog.json",
        "",
    ));
    assert_eq!(found(&report), expected, "{}", report.render_human(false));
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn a_hand_edited_catalog_is_caught_without_metadata() {
    let copy = Copy::new();
    copy.build_clean();
    copy.edit_json("registry/catalog.json", |catalog| {
        catalog["items"][1]["defaultVersion"] = json!("0.2.0-beta.1");
    });
    let report = check(&copy.root, None).unwrap();
    assert_eq!(
        found(&report),
        [diag(
            ERROR,
            "registry/stale-derived",
            "registry/catalog.json",
            "/items/1/defaultVersion"
        )]
    );
    let error = &report.diagnostics()[0];
    assert!(
        error.message.contains("`items[1].defaultVersion` is `0.2.0-beta.1` here but `0.1.0` in `registry/extensions/example.spirit-extension/entry.json`"),
        "{}",
        error.message
    );
    assert!(error.line().is_some(), "located in catalog.json");
}

#[test]
fn a_hand_edited_catalog_is_caught_with_metadata_byte_for_byte() {
    let copy = Copy::new();
    copy.build_clean();
    // A change to what comes from npm: the entries cannot tell, the metadata can.
    copy.edit_json("registry/catalog.json", |catalog| {
        catalog["items"][0]["displayName"] = json!("Acme Lookup Pro");
    });
    let without = check(&copy.root, None).unwrap();
    assert_eq!(found(&without), [], "{}", without.render_human(false));
    let with = check(&copy.root, Some(&copy.npm())).unwrap();
    assert_eq!(
        found(&with),
        [diag(
            ERROR,
            "registry/stale-derived",
            "registry/catalog.json",
            "/items/0/displayName"
        )]
    );
    assert!(
        with.diagnostics()[0]
            .message
            .contains("it has `\"Acme Lookup Pro\"` where the build writes `\"Acme Lookup\"`"),
        "{}",
        with.diagnostics()[0].message
    );
}

#[test]
fn a_catalog_listing_a_hidden_entry_or_missing_a_listed_one_is_stale() {
    let copy = Copy::new();
    copy.build_clean();
    copy.edit_json("registry/catalog.json", |catalog| {
        let items = catalog["items"].as_array_mut().unwrap();
        items.remove(1);
        items.push(json!({
            "extensionId": "notes.quick-notes", "packageName": "spirit-quick-notes",
            "status": "hidden", "featured": false, "defaultVersion": "2.0.0",
            "defaultChannel": "experimental", "defaultReviewStatus": "unverified",
            "detailPath": "extensions/notes.quick-notes/detail.json",
            "displayName": "Quick notes", "description": "A scratch pad.",
            "keywords": [], "supportedHosts": ["cli"], "requestedCapabilities": []
        }));
    });
    let report = check(&copy.root, None).unwrap();
    let error = one(&report, codes::STALE_DERIVED);
    assert_eq!(error.path.as_str(), "/items/1");
    assert!(
        error
            .message
            .contains("`notes.quick-notes` is in the catalog but its entry's status is `hidden`")
            && error
                .message
                .contains("`example.spirit-extension` (status `listed`) is missing"),
        "{}",
        error.message
    );
}

#[test]
fn a_detail_that_disagrees_with_its_entry_is_stale() {
    let copy = Copy::new();
    copy.build_clean();
    copy.edit_entry("acme.lookup", |entry| {
        entry["versions"][1]["reviewStatus"] = json!("verified");
        entry["defaultReviewStatus"] = json!("verified");
    });
    let report = check(&copy.root, None).unwrap();
    assert_eq!(
        found(&report),
        [
            diag(
                ERROR,
                "registry/stale-derived",
                "registry/extensions/acme.lookup/detail.json",
                "/versions/1/reviewStatus"
            ),
            diag(
                ERROR,
                "registry/stale-derived",
                "registry/catalog.json",
                "/items/0/defaultReviewStatus"
            ),
        ],
        "{}",
        report.render_human(false)
    );
    let message = &report.diagnostics()[0].message;
    assert!(
        message.contains("`versions[1].reviewStatus` is `unverified` here but `verified`"),
        "{message}"
    );
    let message = &report.diagnostics()[1].message;
    assert!(
        message.contains(
            "`items[0].defaultReviewStatus` is `unverified` here but `verified` in `registry/extensions/acme.lookup/entry.json`"
        ),
        "{message}"
    );
}

#[test]
fn a_reformatted_derived_file_is_stale_only_with_metadata() {
    let copy = Copy::new();
    copy.build_clean();
    let path = copy.extension("notes.quick-notes", "detail.json");
    let value: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    fs::write(&path, serde_json::to_string(&value).unwrap()).unwrap();
    assert_eq!(found(&check(&copy.root, None).unwrap()), []);
    let report = check(&copy.root, Some(&copy.npm())).unwrap();
    let error = one(&report, codes::STALE_DERIVED);
    assert_eq!(
        error.file,
        "registry/extensions/notes.quick-notes/detail.json"
    );
    assert!(
        error.message.contains("not its layout"),
        "{}",
        error.message
    );
}

#[test]
fn check_with_metadata_reports_what_build_reports_and_writes_nothing() {
    let copy = Copy::new();
    copy.build_clean();
    let before = copy.derived();
    copy.edit_npm("spirit-quick-notes", |document| {
        document["versions"]["2.0.0"]["spiritExtension"]
            .as_object_mut()
            .unwrap()
            .remove("schemaVersion");
    });
    let report = check(&copy.root, Some(&copy.npm())).unwrap();
    assert_eq!(
        found(&report),
        [diag(
            ERROR,
            "spirit/registry-required",
            "npm:spirit-quick-notes@2.0.0",
            "/spiritExtension/schemaVersion"
        )],
        "{}",
        report.render_human(false)
    );
    assert_eq!(copy.derived(), before);
}

#[test]
fn a_stray_dist_folder_and_a_tarball_are_errors() {
    let copy = Copy::new();
    fs::create_dir_all(copy.extension("acme.lookup", "dist")).unwrap();
    fs::write(
        copy.extension("acme.lookup", "dist/index.js"),
        "export {}\n",
    )
    .unwrap();
    fs::write(
        copy.extension("acme.lookup", "lookup-1.1.0.tgz"),
        [0x1f, 0x8b, 0x08],
    )
    .unwrap();
    let report = check(&copy.root, None).unwrap();
    let strays: Vec<_> = with_code(&report, codes::STRAY_FILE)
        .into_iter()
        .map(|d| (d.file.as_str(), d.message.as_str()))
        .collect();
    assert_eq!(strays.len(), 2, "{}", report.render_human(false));
    assert_eq!(strays[0].0, "registry/extensions/acme.lookup/dist/");
    assert!(
        strays[0].1.contains("a build output folder"),
        "{}",
        strays[0].1
    );
    assert_eq!(
        strays[1].0,
        "registry/extensions/acme.lookup/lookup-1.1.0.tgz"
    );
    assert!(strays[1].1.contains("a tarball"), "{}", strays[1].1);
    assert!(
        strays[1].1.contains("not a package store"),
        "{}",
        strays[1].1
    );
}

#[test]
fn other_stray_files_are_errors_too() {
    let copy = Copy::new();
    for name in ["package.json", "ext.zip", "readme.md"] {
        fs::write(copy.extension("notes.quick-notes", name), "{}").unwrap();
    }
    fs::create_dir(copy.extension("notes.quick-notes", "src")).unwrap();
    fs::write(
        copy.path("registry/extensions/NOTES.txt"),
        "a file among the folders",
    )
    .unwrap();
    let report = check(&copy.root, None).unwrap();
    let files: Vec<&str> = with_code(&report, codes::STRAY_FILE)
        .into_iter()
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(
        files,
        [
            "registry/extensions/NOTES.txt",
            "registry/extensions/notes.quick-notes/ext.zip",
            "registry/extensions/notes.quick-notes/package.json",
            "registry/extensions/notes.quick-notes/readme.md",
            "registry/extensions/notes.quick-notes/src/",
        ]
    );
    let readme = with_code(&report, codes::STRAY_FILE)[3];
    assert!(
        readme.message.contains("rename it to `README.md`"),
        "{}",
        readme.message
    );
}

#[test]
fn a_folder_not_named_after_its_id_is_an_error() {
    let copy = Copy::new();
    fs::rename(
        copy.path("registry/extensions/acme.lookup"),
        copy.path("registry/extensions/acme.lookups"),
    )
    .unwrap();
    let report = check(&copy.root, None).unwrap();
    let error = one(&report, codes::FOLDER_MISMATCH);
    assert_eq!(
        (error.file.as_str(), error.path.as_str()),
        (
            "registry/extensions/acme.lookups/entry.json",
            "/extensionId"
        )
    );
    assert_eq!((error.line(), error.column()), (Some(3), Some(18)));
    assert!(error.message.contains("`acme.lookup`") && error.message.contains("`acme.lookups`"));
}

#[test]
fn two_entries_sharing_a_package_name_name_each_other() {
    let copy = Copy::new();
    copy.edit_entry("notes.quick-notes", |entry| {
        entry["packageName"] = json!("@acme/lookup")
    });
    let report = check(&copy.root, None).unwrap();
    let duplicates = with_code(&report, codes::DUPLICATE_ENTRY);
    let seen: Vec<(&str, &str)> = duplicates
        .iter()
        .map(|d| (d.file.as_str(), d.path.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("registry/extensions/acme.lookup/entry.json", "/packageName"),
            (
                "registry/extensions/notes.quick-notes/entry.json",
                "/packageName"
            ),
        ]
    );
    assert!(
        duplicates[0]
            .message
            .contains("`registry/extensions/notes.quick-notes/entry.json`")
    );
    assert!(
        duplicates[1]
            .message
            .contains("`registry/extensions/acme.lookup/entry.json`")
    );
    assert!(duplicates.iter().all(|d| d.line().is_some()));
}

#[test]
fn two_entries_sharing_an_id_name_each_other() {
    let copy = Copy::new();
    copy.edit_entry("notes.quick-notes", |entry| {
        entry["extensionId"] = json!("acme.lookup")
    });
    let report = check(&copy.root, None).unwrap();
    let duplicates = with_code(&report, codes::DUPLICATE_ENTRY);
    assert_eq!(duplicates.len(), 2, "{}", report.render_human(false));
    assert!(duplicates.iter().all(|d| d.path.as_str() == "/extensionId"));
    assert!(
        duplicates[1]
            .message
            .contains("`registry/extensions/acme.lookup/entry.json`")
    );
    one(&report, codes::FOLDER_MISMATCH);
}

#[test]
fn a_missing_or_blank_readme_is_an_error() {
    let copy = Copy::new();
    fs::remove_file(copy.extension("acme.lookup", "README.md")).unwrap();
    fs::write(copy.extension("notes.quick-notes", "README.md"), " \n\t\n").unwrap();
    let report = check(&copy.root, None).unwrap();
    let files: Vec<&str> = with_code(&report, codes::MISSING_README)
        .into_iter()
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(
        files,
        [
            "registry/extensions/acme.lookup/README.md",
            "registry/extensions/notes.quick-notes/README.md",
        ]
    );
    assert!(with_code(&report, codes::README_UNRELATED).is_empty());
}

#[test]
fn a_readme_naming_neither_package_nor_default_version_is_a_warning() {
    let copy = Copy::new();
    fs::write(
        copy.extension("acme.lookup", "README.md"),
        "# Lookups\n\nFinds things fast.\n",
    )
    .unwrap();
    // Naming only the default version is enough.
    fs::write(
        copy.extension("notes.quick-notes", "README.md"),
        "# Notes\n\nVersion 2.0.0.\n",
    )
    .unwrap();
    let report = check(&copy.root, None).unwrap();
    let warning = one(&report, codes::README_UNRELATED);
    assert_eq!(warning.severity, WARNING);
    assert_eq!(warning.file, "registry/extensions/acme.lookup/README.md");
    assert!(warning.message.contains("`@acme/lookup`") && warning.message.contains("`1.1.0`"));
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn a_revoked_default_version_is_a_warning() {
    let copy = Copy::new();
    copy.edit_entry("acme.lookup", |entry| {
        entry["versions"][1]["reviewStatus"] = json!("revoked")
    });
    copy.edit_entry("notes.quick-notes", |entry| {
        entry["defaultReviewStatus"] = json!("revoked")
    });
    let report = check(&copy.root, None).unwrap();
    let revoked: Vec<_> = with_code(&report, codes::REVOKED_DEFAULT)
        .into_iter()
        .map(|d| (d.severity, d.file.as_str(), d.path.as_str()))
        .collect();
    assert_eq!(
        revoked,
        [
            (
                WARNING,
                "registry/extensions/acme.lookup/entry.json",
                "/versions/1/reviewStatus"
            ),
            (
                WARNING,
                "registry/extensions/notes.quick-notes/entry.json",
                "/defaultReviewStatus"
            ),
        ]
    );
}

#[test]
fn a_folder_without_entry_json_is_an_error() {
    let copy = Copy::new();
    fs::create_dir(copy.path("registry/extensions/acme.empty")).unwrap();
    fs::write(
        copy.path("registry/extensions/acme.empty/README.md"),
        "# Empty\n",
    )
    .unwrap();
    let report = check(&copy.root, None).unwrap();
    let error = one(&report, codes::MISSING_ENTRY);
    assert_eq!(error.file, "registry/extensions/acme.empty/entry.json");
}

#[test]
fn entry_errors_come_through_and_their_derived_files_are_left_alone() {
    let copy = Copy::new();
    copy.build_clean();
    copy.edit_entry("acme.lookup", |entry| entry["featured"] = json!("yes"));
    let report = check(&copy.root, None).unwrap();
    assert_eq!(
        found(&report),
        [diag(
            ERROR,
            "registry/invalid-type",
            "registry/extensions/acme.lookup/entry.json",
            "/featured"
        )],
        "{}",
        report.render_human(false)
    );
}

#[test]
fn the_report_is_in_folder_order_and_the_same_every_time() {
    let copy = Copy::new();
    for id in registry_support::IDS {
        fs::write(copy.extension(id, "notes.txt"), "x").unwrap();
    }
    let first = check(&copy.root, None).unwrap();
    let files: Vec<&str> = with_code(&first, codes::STRAY_FILE)
        .into_iter()
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(
        files,
        [
            "registry/extensions/acme.lookup/notes.txt",
            "registry/extensions/example.spirit-extension/notes.txt",
            "registry/extensions/notes.quick-notes/notes.txt",
        ]
    );
    for _ in 0..3 {
        assert_eq!(
            check(&copy.root, None).unwrap().render_json(),
            first.render_json()
        );
    }
}

#[test]
fn a_root_without_registry_extensions_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let error = check(tmp.path(), None).unwrap_err();
    assert!(
        matches!(error, RegistryError::NotARegistry { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("registry/extensions") || message.contains("registry\\extensions"),
        "{message}"
    );
}

/// The diagnostics with a `registry/reader-…` code: `(code, file, pointer)`.
fn reader_found(report: &curupira_diagnostics::Report) -> Vec<(String, String, String)> {
    report
        .diagnostics()
        .iter()
        .filter(|d| d.code.starts_with("registry/reader-"))
        .map(|d| {
            (
                d.code.to_string(),
                d.file.clone(),
                d.path.as_str().to_owned(),
            )
        })
        .collect()
}

fn reader(code: &str, file: &str, path: &str) -> (String, String, String) {
    (code.to_owned(), file.to_owned(), path.to_owned())
}

#[test]
fn a_catalog_in_the_old_shape_is_one_the_reader_refuses() {
    let copy = Copy::new();
    copy.build_clean();
    copy.edit_json("registry/catalog.json", |catalog| {
        let items = catalog["items"].take();
        catalog.as_object_mut().unwrap().remove("items");
        catalog["extensions"] = items;
    });
    let report = check(&copy.root, None).unwrap();
    assert_eq!(
        reader_found(&report),
        [reader(
            codes::READER_TYPE,
            "registry/catalog.json",
            "/items"
        )],
        "{}",
        report.render_human(false)
    );
    let error = with_code(&report, codes::READER_TYPE)[0];
    assert!(
        error.message.contains("`items` must be an array")
            && error.message.contains("`extensions`"),
        "{}",
        error.message
    );
    // It is stale too: the build writes `items`.
    one(&report, codes::STALE_DERIVED);
    assert_eq!(report.exit_code(), 1);
}

#[test]
fn a_catalog_item_the_reader_refuses_is_located() {
    let copy = Copy::new();
    copy.build_clean();
    copy.edit_json("registry/catalog.json", |catalog| {
        catalog["items"][1]["description"] = json!("   ");
    });
    // Not a member the entries decide: only the reader check (and, with metadata, the
    // byte comparison) sees it.
    let report = check(&copy.root, None).unwrap();
    assert_eq!(
        found(&report),
        [diag(
            ERROR,
            codes::READER_EMPTY,
            "registry/catalog.json",
            "/items/1/description"
        )],
        "{}",
        report.render_human(false)
    );
    assert!(report.diagnostics()[0].line().is_some());
}

#[test]
fn a_detail_path_to_no_file_and_an_http_readme_path_are_refused() {
    let copy = Copy::new();
    copy.build_clean();
    copy.edit_json("registry/catalog.json", |catalog| {
        catalog["items"][0]["detailPath"] = json!("extensions/acme.lookup/nope.json");
    });
    copy.edit_json(
        "registry/extensions/notes.quick-notes/detail.json",
        |detail| detail["readmePath"] = json!("http://registry.test/README.md"),
    );
    let report = check(&copy.root, None).unwrap();
    assert_eq!(
        reader_found(&report),
        [
            reader(
                codes::READER_MISSING_FILE,
                "registry/catalog.json",
                "/items/0/detailPath"
            ),
            reader(
                codes::READER_URL,
                "registry/extensions/notes.quick-notes/detail.json",
                "/readmePath"
            ),
        ],
        "{}",
        report.render_human(false)
    );
    // Both disagree with what the build writes, too.
    let stale: Vec<&str> = with_code(&report, codes::STALE_DERIVED)
        .into_iter()
        .map(|d| d.path.as_str())
        .collect();
    assert_eq!(stale, ["/readmePath", "/items/0/detailPath"]);
}

#[test]
fn a_version_without_a_tarball_or_a_wrong_id_or_no_json_is_refused() {
    let copy = Copy::new();
    copy.build_clean();
    copy.edit_json("registry/extensions/acme.lookup/detail.json", |detail| {
        detail["versions"][0]
            .as_object_mut()
            .unwrap()
            .remove("tarballUrl");
    });
    copy.edit_json(
        "registry/extensions/example.spirit-extension/detail.json",
        |detail| detail["extensionId"] = json!("example.other"),
    );
    fs::write(
        copy.extension("notes.quick-notes", "detail.json"),
        "{\"schemaVersion\": 1,",
    )
    .unwrap();
    let report = check(&copy.root, None).unwrap();
    assert_eq!(
        reader_found(&report),
        [
            reader(
                codes::READER_NOT_INSTALLABLE,
                "registry/extensions/acme.lookup/detail.json",
                "/versions/0/tarballUrl"
            ),
            reader(
                codes::READER_ID_MISMATCH,
                "registry/extensions/example.spirit-extension/detail.json",
                "/extensionId"
            ),
            reader(
                codes::READER_JSON,
                "registry/extensions/notes.quick-notes/detail.json",
                ""
            ),
        ],
        "{}",
        report.render_human(false)
    );
}

#[test]
fn a_catalog_larger_than_the_reader_reads_is_refused() {
    let copy = Copy::new();
    copy.build_clean();
    let path = copy.path("registry/catalog.json");
    let mut text = fs::read_to_string(&path).unwrap();
    text.push_str(&" ".repeat(512 * 1024));
    fs::write(&path, text).unwrap();
    let report = check(&copy.root, None).unwrap();
    assert_eq!(
        found(&report),
        [diag(
            ERROR,
            codes::READER_TOO_LARGE,
            "registry/catalog.json",
            ""
        )],
        "{}",
        report.render_human(false)
    );
}
