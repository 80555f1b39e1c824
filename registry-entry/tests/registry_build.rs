//! `build` over the sample registry: the derived files byte for byte against the
//! golden files, determinism, and each failing case built from a copy of the sample
//! with one change (nothing is written then).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod registry_support;

use std::fs;

use curupira_diagnostics::Severity;
use registry_support::{Copy, IDS, assert_golden, derived_files, found, one, with_code};
use serde_json::{Value, json};
use spirit_registry::{Catalog, FolderSource, build, check, codes};

#[test]
fn build_writes_the_golden_files() {
    let copy = Copy::new();
    let built = build(&copy.root, &copy.npm()).unwrap();
    assert_eq!(
        found(&built.report),
        [],
        "{}",
        built.report.render_human(false)
    );
    let written: Vec<String> = built
        .written
        .iter()
        .map(|path| {
            path.strip_prefix(&copy.root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    assert_eq!(written, derived_files());
    for (file, bytes) in copy.derived() {
        assert_golden(&file, &bytes.expect(&file));
    }
    // No temporary file is left beside the derived files.
    for id in IDS {
        let mut names: Vec<String> = fs::read_dir(copy.root.join("registry/extensions").join(id))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["README.md", "detail.json", "entry.json"]);
    }
}

#[test]
fn a_second_build_is_byte_identical() {
    let copy = Copy::new();
    copy.build_clean();
    let first = copy.derived();
    copy.build_clean();
    assert_eq!(copy.derived(), first);
    // And a build of another copy, elsewhere, writes the same bytes.
    let other = Copy::new();
    other.build_clean();
    assert_eq!(other.derived(), first);
}

#[test]
fn the_built_registry_checks_clean_with_and_without_metadata() {
    let copy = Copy::new();
    copy.build_clean();
    let report = check(&copy.root, None).unwrap();
    assert_eq!(found(&report), [], "{}", report.render_human(false));
    let report = check(&copy.root, Some(&copy.npm())).unwrap();
    assert_eq!(found(&report), [], "{}", report.render_human(false));
}

#[test]
fn hidden_and_blocked_entries_are_left_out_of_the_catalog() {
    let copy = Copy::new();
    // `notes.quick-notes` is hidden in the sample; block `acme.lookup` too.
    copy.edit_entry("acme.lookup", |entry| entry["status"] = json!("blocked"));
    copy.build_clean();
    let catalog: Catalog =
        serde_json::from_slice(&fs::read(copy.path("registry/catalog.json")).unwrap()).unwrap();
    let ids: Vec<&str> = catalog
        .items
        .iter()
        .map(|e| e.extension_id.as_str())
        .collect();
    assert_eq!(ids, ["example.spirit-extension"]);
    // Hidden and blocked entries still get their detail.json.
    for id in ["acme.lookup", "notes.quick-notes"] {
        let detail: Value =
            serde_json::from_slice(&fs::read(copy.extension(id, "detail.json")).unwrap()).unwrap();
        assert_eq!(detail["extensionId"], id);
    }
}

#[test]
fn a_version_missing_from_npm_is_an_error_and_nothing_is_written() {
    let copy = Copy::new();
    copy.edit_entry("acme.lookup", |entry| {
        entry["versions"]
            .as_array_mut()
            .unwrap()
            .push(json!({"version": "1.2.0", "channel": "stable", "reviewStatus": "unverified"}));
    });
    let built = build(&copy.root, &copy.npm()).unwrap();
    assert_eq!(
        found(&built.report),
        [(
            Severity::Error,
            "registry/unpublished-version".to_owned(),
            "registry/extensions/acme.lookup/entry.json".to_owned(),
            "/versions/2/version".to_owned()
        )]
    );
    let error = &built.report.diagnostics()[0];
    assert!(error.line().is_some(), "located in entry.json: {error:?}");
    assert!(
        error.message.contains("`1.2.0`") && error.message.contains("`1.1.0`"),
        "{}",
        error.message
    );
    assert!(built.written.is_empty());
    assert!(copy.derived().iter().all(|(_, bytes)| bytes.is_none()));
}

#[test]
fn a_build_metadata_suffix_names_the_published_version() {
    let copy = Copy::new();
    copy.edit_entry("notes.quick-notes", |entry| {
        entry["versions"][0]["version"] = json!("2.0.0+build.7");
        entry["defaultVersion"] = json!("2.0.0+build.7");
    });
    let built = build(&copy.root, &copy.npm()).unwrap();
    assert_eq!(
        found(&built.report),
        [],
        "{}",
        built.report.render_human(false)
    );
    let detail: Value = serde_json::from_slice(
        &fs::read(copy.extension("notes.quick-notes", "detail.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(detail["versions"][0]["version"], "2.0.0+build.7");
    // The published 2.0.0's tarball and digests.
    assert_eq!(
        detail["versions"][0]["tarballUrl"],
        "https://registry.npmjs.org/spirit-quick-notes/-/spirit-quick-notes-2.0.0.tgz"
    );
    assert_eq!(
        detail["versions"][0]["shasum"],
        "bd9144ea188f56bbc0b519339f84fab8975cca34"
    );
    assert_eq!(
        detail["versions"][0]["publishedAt"],
        "2026-03-10T07:45:00.000Z"
    );
}

#[test]
fn a_published_manifest_without_requested_capabilities_fails_registry_strict() {
    let copy = Copy::new();
    copy.edit_npm("@acme/lookup", |document| {
        let spirit = &mut document["versions"]["1.1.0"]["spiritExtension"];
        spirit
            .as_object_mut()
            .unwrap()
            .remove("requestedCapabilities");
    });
    let built = build(&copy.root, &copy.npm()).unwrap();
    // Without the capabilities, `contributes.tools` lacks its pairing too: every
    // diagnostic is the published manifest's own, under its `npm:` name.
    let missing = one(&built.report, "spirit/registry-required");
    assert_eq!(missing.file, "npm:@acme/lookup@1.1.0");
    assert_eq!(
        missing.path.as_str(),
        "/spiritExtension/requestedCapabilities"
    );
    assert!(
        built
            .report
            .diagnostics()
            .iter()
            .all(|d| d.file == "npm:@acme/lookup@1.1.0"),
        "{}",
        built.report.render_human(false)
    );
    assert!(built.written.is_empty());
    assert!(copy.derived().iter().all(|(_, bytes)| bytes.is_none()));
}

#[test]
fn a_published_name_other_than_the_package_name_is_an_error() {
    let copy = Copy::new();
    copy.edit_npm("@acme/lookup", |document| {
        document["versions"]["1.0.0"]["name"] = json!("@acme/lookup-fork");
    });
    let built = build(&copy.root, &copy.npm()).unwrap();
    assert_eq!(
        found(&built.report),
        [(
            Severity::Error,
            "registry/package-name-mismatch".to_owned(),
            "registry/extensions/acme.lookup/entry.json".to_owned(),
            "/versions/0/version".to_owned()
        )],
        "{}",
        built.report.render_human(false)
    );
    let message = &built.report.diagnostics()[0].message;
    assert!(
        message.contains("`@acme/lookup-fork`") && message.contains("npm:@acme/lookup@1.0.0"),
        "{message}"
    );
    assert!(built.written.is_empty());
}

#[test]
fn a_missing_package_document_is_a_metadata_error() {
    let copy = Copy::new();
    fs::remove_file(copy.path("npm/spirit-quick-notes.json")).unwrap();
    let built = build(&copy.root, &copy.npm()).unwrap();
    let error = one(&built.report, codes::METADATA);
    assert_eq!(
        (error.file.as_str(), error.path.as_str()),
        (
            "registry/extensions/notes.quick-notes/entry.json",
            "/packageName"
        )
    );
    assert!(
        error.message.contains("`spirit-quick-notes`"),
        "{}",
        error.message
    );
    assert_eq!(built.report.errors(), 1);
    assert!(built.written.is_empty());
}

#[test]
fn each_package_document_is_fetched_once() {
    use std::sync::Mutex;

    use spirit_registry::{MetadataError, MetadataSource, PackageDocument};

    /// Records what is asked of a folder source.
    struct Counting {
        inner: FolderSource,
        asked: Mutex<Vec<Vec<String>>>,
    }
    impl MetadataSource for Counting {
        fn describe(&self) -> String {
            self.inner.describe()
        }
        fn fetch(&self, package: &str) -> Result<PackageDocument, MetadataError> {
            self.asked.lock().unwrap().push(vec![package.to_owned()]);
            self.inner.fetch(package)
        }
        fn fetch_all(&self, packages: &[String]) -> Vec<Result<PackageDocument, MetadataError>> {
            self.asked.lock().unwrap().push(packages.to_vec());
            packages.iter().map(|p| self.inner.fetch(p)).collect()
        }
    }

    let copy = Copy::new();
    let source = Counting {
        inner: copy.npm(),
        asked: Mutex::new(Vec::new()),
    };
    let built = build(&copy.root, &source).unwrap();
    assert_eq!(built.report.errors(), 0);
    assert_eq!(
        source.asked.into_inner().unwrap(),
        [vec![
            "@acme/lookup".to_owned(),
            "@example/spirit-extension".to_owned(),
            "spirit-quick-notes".to_owned()
        ]]
    );
}

#[test]
fn nothing_is_written_when_any_error_is_found() {
    let copy = Copy::new();
    copy.build_clean();
    let before = copy.derived();
    // A change the build would carry into the files, and an error elsewhere.
    copy.edit_entry("example.spirit-extension", |entry| {
        entry["featured"] = json!(false)
    });
    fs::create_dir(copy.extension("acme.lookup", "dist")).unwrap();
    let built = build(&copy.root, &copy.npm()).unwrap();
    assert_eq!(
        built.report.errors(),
        1,
        "{}",
        built.report.render_human(false)
    );
    one(&built.report, codes::STRAY_FILE);
    assert!(built.written.is_empty());
    assert_eq!(copy.derived(), before);
}

#[test]
fn warnings_do_not_stop_the_build() {
    let copy = Copy::new();
    fs::write(
        copy.extension("acme.lookup", "README.md"),
        "# Lookups\n\nFinds things.\n",
    )
    .unwrap();
    let built = build(&copy.root, &copy.npm()).unwrap();
    assert_eq!(
        found(&built.report),
        [(
            Severity::Warning,
            "registry/readme-unrelated".to_owned(),
            "registry/extensions/acme.lookup/README.md".to_owned(),
            String::new()
        )]
    );
    assert_eq!(built.written.len(), 4);
    assert!(with_code(&built.report, "registry/stale-derived").is_empty());
}

#[test]
fn a_published_manifest_without_a_description_does_not_build() {
    for description in [None, Some("  ")] {
        let copy = Copy::new();
        copy.edit_npm("@acme/lookup", |document| {
            let manifest = document["versions"]["1.1.0"].as_object_mut().unwrap();
            match description {
                None => {
                    manifest.remove("description");
                }
                Some(text) => {
                    manifest.insert("description".to_owned(), json!(text));
                }
            }
        });
        let built = build(&copy.root, &copy.npm()).unwrap();
        // Exactly one error says so, at the published manifest's `description`: this
        // crate's own, or registry-strict validation's when it checks descriptions.
        let errors: Vec<_> = built
            .report
            .diagnostics()
            .iter()
            .filter(|d| d.is_error())
            .map(|d| (d.file.as_str(), d.path.as_str()))
            .collect();
        assert_eq!(
            errors,
            [("npm:@acme/lookup@1.1.0", "/description")],
            "{}",
            built.report.render_human(false)
        );
        if let Some(own) = with_code(&built.report, codes::MISSING_DESCRIPTION).first() {
            assert!(
                own.message.contains("`@acme/lookup@1.1.0`"),
                "{}",
                own.message
            );
        }
        assert!(built.written.is_empty());
        assert!(copy.derived().iter().all(|(_, bytes)| bytes.is_none()));
    }
}

#[test]
fn a_dist_the_app_cannot_install_from_does_not_build() {
    let cases: [(&str, Value, &str); 4] = [
        (
            "http tarball",
            json!({"tarball": "http://registry.test/lookup-1.0.0.tgz", "shasum": "c41f441fe86387afd7a28bc9f368abc0d40a28c5"}),
            "/dist/tarball",
        ),
        (
            "no digest",
            json!({"tarball": "https://registry.npmjs.org/@acme/lookup/-/lookup-1.0.0.tgz"}),
            "/dist",
        ),
        (
            "bad shasum",
            json!({"tarball": "https://registry.npmjs.org/@acme/lookup/-/lookup-1.0.0.tgz", "shasum": "c41f"}),
            "/dist/shasum",
        ),
        ("no dist", Value::Null, "/dist/tarball"),
    ];
    for (what, dist, at) in cases {
        let copy = Copy::new();
        copy.edit_npm("@acme/lookup", |document| {
            let version = document["versions"]["1.0.0"].as_object_mut().unwrap();
            if dist.is_null() {
                version.remove("dist");
            } else {
                version.insert("dist".to_owned(), dist.clone());
            }
        });
        let built = build(&copy.root, &copy.npm()).unwrap();
        let found: Vec<_> = found(&built.report)
            .into_iter()
            .filter(|(severity, ..)| *severity == Severity::Error)
            .collect();
        let mut expected = vec![(
            Severity::Error,
            codes::UNUSABLE_DIST.to_owned(),
            "npm:@acme/lookup@1.0.0".to_owned(),
            at.to_owned(),
        )];
        if what == "no dist" {
            expected.push((
                Severity::Error,
                codes::UNUSABLE_DIST.to_owned(),
                "npm:@acme/lookup@1.0.0".to_owned(),
                "/dist".to_owned(),
            ));
        }
        assert_eq!(
            found,
            expected,
            "{what}: {}",
            built.report.render_human(false)
        );
        assert!(built.written.is_empty(), "{what}");
    }
}

#[test]
fn the_built_documents_have_the_readers_shapes() {
    let copy = Copy::new();
    copy.build_clean();
    let catalog: Value =
        serde_json::from_slice(&fs::read(copy.path("registry/catalog.json")).unwrap()).unwrap();
    let item = &catalog["items"][0];
    assert_eq!(item["detailPath"], "extensions/acme.lookup/detail.json");
    // The default version's channel; the author object's name; the repository's url.
    assert_eq!(item["defaultChannel"], "stable");
    assert_eq!(item["author"], "Acme Tools");
    assert_eq!(
        item["repositoryUrl"],
        "git+https://github.com/acme/lookup.git"
    );
    assert!(item.get("manifest").is_none() && item.get("versions").is_none());
    let detail: Value =
        serde_json::from_slice(&fs::read(copy.extension("acme.lookup", "detail.json")).unwrap())
            .unwrap();
    assert_eq!(detail["readmePath"], "extensions/acme.lookup/README.md");
    let version = &detail["versions"][1];
    assert_eq!(version["displayName"], "Acme Lookup");
    assert_eq!(
        version["tarballUrl"],
        "https://registry.npmjs.org/@acme/lookup/-/lookup-1.1.0.tgz"
    );
    assert!(
        version["integrity"]
            .as_str()
            .unwrap()
            .starts_with("sha512-")
    );
}

#[test]
fn a_document_larger_than_the_reader_reads_does_not_build() {
    // A changelog of 600 KB makes the detail.json larger than the reader's 512 KiB.
    let copy = Copy::new();
    copy.edit_entry("notes.quick-notes", |entry| {
        entry["versions"][0]["changelog"] =
            json!({"summary": "Big.", "body": "x".repeat(600 * 1024)});
    });
    let built = build(&copy.root, &copy.npm()).unwrap();
    assert_eq!(
        found(&built.report),
        [(
            Severity::Error,
            codes::READER_TOO_LARGE.to_owned(),
            "registry/extensions/notes.quick-notes/detail.json".to_owned(),
            String::new()
        )],
        "{}",
        built.report.render_human(false)
    );
    assert!(built.written.is_empty());

    // A README over 2 MiB: the reader would not fetch it.
    let copy = Copy::new();
    let readme = copy.extension("acme.lookup", "README.md");
    let mut text = fs::read_to_string(&readme).unwrap();
    text.push_str(&"more text\n".repeat(220 * 1024));
    fs::write(&readme, text).unwrap();
    let built = build(&copy.root, &copy.npm()).unwrap();
    let error = one(&built.report, codes::READER_TOO_LARGE);
    assert_eq!(error.file, "registry/extensions/acme.lookup/README.md");
    assert!(error.message.contains("2048 KiB"), "{}", error.message);
    assert!(built.written.is_empty());
}
