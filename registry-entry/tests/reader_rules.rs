//! `spirit_registry::reader`: each rule of the app's marketplace reader on the sample's
//! golden `catalog.json` and `detail.json` with one change, asserting the code and the
//! pointer (the crate's own vectors; `marketplace_conformance` runs the app's).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod registry_support;

use std::fs;

use serde_json::{Value, json};
use spirit_registry::codes;
use spirit_registry::reader::{
    self, Document, Location, install_problems, installability, integrity_well_formed,
    prepare_install, read_catalog, read_detail, resolve, shasum_well_formed,
};

fn golden(file: &str) -> Value {
    serde_json::from_slice(&fs::read(registry_support::golden(file)).unwrap()).unwrap()
}

fn catalog() -> Value {
    golden("registry/catalog.json")
}

/// `example.spirit-extension`'s detail: two versions, the default `0.1.0` first.
fn detail() -> Value {
    golden("registry/extensions/example.spirit-extension/detail.json")
}

/// `(code, pointer)` of every problem.
fn problems(found: &[reader::Problem]) -> Vec<(&'static str, String)> {
    found
        .iter()
        .map(|p| (p.code, p.at.as_str().to_owned()))
        .collect()
}

/// The catalog with `change` applied: its problems.
fn catalog_with(change: impl FnOnce(&mut Value)) -> Vec<(&'static str, String)> {
    let mut value = catalog();
    change(&mut value);
    problems(&read_catalog(&value).problems)
}

/// The detail with `change` applied: its problems.
fn detail_with(change: impl FnOnce(&mut Value)) -> Vec<(&'static str, String)> {
    let mut value = detail();
    change(&mut value);
    problems(&read_detail(&value, Some("example.spirit-extension")).problems)
}

fn one(code: &'static str, at: &str) -> Vec<(&'static str, String)> {
    vec![(code, at.to_owned())]
}

fn remove(value: &mut Value, key: &str) {
    value.as_object_mut().unwrap().remove(key);
}

#[test]
fn the_built_documents_are_accepted_and_installable() {
    let reading = read_catalog(&catalog());
    assert!(reading.accepted(), "{:?}", reading.problems);
    let ids: Vec<(&str, &str)> = reading
        .items
        .iter()
        .map(|i| (i.extension_id.as_str(), i.detail_path.as_str()))
        .collect();
    assert_eq!(
        ids,
        [
            ("acme.lookup", "extensions/acme.lookup/detail.json"),
            (
                "example.spirit-extension",
                "extensions/example.spirit-extension/detail.json"
            ),
        ]
    );
    for id in registry_support::IDS {
        let value = golden(&format!("registry/extensions/{id}/detail.json"));
        let reading = read_detail(&value, Some(id));
        assert!(reading.accepted(), "{id}: {:?}", reading.problems);
        assert_eq!(installability(&reading), [], "{id}");
    }
}

#[test]
fn catalog_document_rules() {
    assert_eq!(
        problems(&read_catalog(&json!([1])).problems),
        one(codes::READER_TYPE, "")
    );
    assert_eq!(
        catalog_with(|c| c["schemaVersion"] = json!(2)),
        one(codes::READER_SCHEMA_VERSION, "/schemaVersion")
    );
    assert_eq!(
        catalog_with(|c| c["schemaVersion"] = json!("1")),
        one(codes::READER_SCHEMA_VERSION, "/schemaVersion")
    );
    // The number 1 written as a float is the number 1.
    assert_eq!(catalog_with(|c| c["schemaVersion"] = json!(1.0)), []);
    // The shape of older builds: items under `extensions`.
    let mut old = catalog();
    let items = old["items"].take();
    remove(&mut old, "items");
    old["extensions"] = items;
    let found = read_catalog(&old).problems;
    assert_eq!(problems(&found), one(codes::READER_TYPE, "/items"));
    assert!(
        found[0].message.contains("`extensions`") && found[0].document == Document::Catalog,
        "{}",
        found[0].message
    );
    assert_eq!(
        catalog_with(|c| c["items"][1] = json!("example.spirit-extension")),
        one(codes::READER_TYPE, "/items/1")
    );
    // No items is a readable (empty) catalog.
    assert_eq!(catalog_with(|c| c["items"] = json!([])), []);
}

#[test]
fn every_required_item_string_must_be_non_empty_once_trimmed() {
    for key in [
        "extensionId",
        "packageName",
        "status",
        "defaultVersion",
        "detailPath",
        "displayName",
        "description",
        "defaultChannel",
        "defaultReviewStatus",
    ] {
        let at = format!("/items/1/{key}");
        assert_eq!(
            catalog_with(|c| remove(&mut c["items"][1], key)),
            one(codes::READER_EMPTY, &at),
            "{key} missing"
        );
        assert_eq!(
            catalog_with(|c| c["items"][1][key] = json!("  \t")),
            one(codes::READER_EMPTY, &at),
            "{key} blank"
        );
        assert_eq!(
            catalog_with(|c| c["items"][1][key] = json!(7)),
            one(codes::READER_EMPTY, &at),
            "{key} a number"
        );
    }
    // Surrounding whitespace is trimmed, not refused.
    assert_eq!(
        catalog_with(|c| c["items"][1]["defaultChannel"] = json!(" stable ")),
        []
    );
}

#[test]
fn item_types_and_closed_sets() {
    assert_eq!(
        catalog_with(|c| c["items"][0]["featured"] = json!("yes")),
        one(codes::READER_TYPE, "/items/0/featured")
    );
    assert_eq!(
        catalog_with(|c| remove(&mut c["items"][0], "featured")),
        one(codes::READER_TYPE, "/items/0/featured")
    );
    assert_eq!(
        catalog_with(|c| c["items"][0]["defaultChannel"] = json!("beta")),
        one(codes::READER_VALUE, "/items/0/defaultChannel")
    );
    assert_eq!(
        catalog_with(|c| c["items"][0]["defaultReviewStatus"] = json!("approved")),
        one(codes::READER_VALUE, "/items/0/defaultReviewStatus")
    );
    // `status` is any non-empty string: the reader does not filter on it.
    assert_eq!(
        catalog_with(|c| c["items"][0]["status"] = json!("blocked")),
        []
    );
}

#[test]
fn item_hosts_keywords_and_capabilities() {
    assert_eq!(
        catalog_with(|c| c["items"][0]["supportedHosts"] = json!([])),
        one(codes::READER_EMPTY, "/items/0/supportedHosts")
    );
    assert_eq!(
        catalog_with(|c| remove(&mut c["items"][0], "supportedHosts")),
        one(codes::READER_EMPTY, "/items/0/supportedHosts")
    );
    assert_eq!(
        catalog_with(|c| c["items"][0]["supportedHosts"] = json!(["cli", "web"])),
        one(codes::READER_VALUE, "/items/0/supportedHosts/1")
    );
    assert_eq!(
        catalog_with(|c| c["items"][0]["supportedHosts"] = json!("cli")),
        one(codes::READER_TYPE, "/items/0/supportedHosts")
    );
    for key in ["keywords", "requestedCapabilities"] {
        assert_eq!(
            catalog_with(|c| c["items"][0][key] = json!(null)),
            [],
            "{key}"
        );
        assert_eq!(
            catalog_with(|c| remove(&mut c["items"][0], key)),
            [],
            "{key}"
        );
        assert_eq!(
            catalog_with(|c| c["items"][0][key] = json!("spirit")),
            one(codes::READER_TYPE, &format!("/items/0/{key}"))
        );
        assert_eq!(
            catalog_with(|c| c["items"][0][key] = json!(["a", " "])),
            one(codes::READER_EMPTY, &format!("/items/0/{key}/1"))
        );
    }
}

#[test]
fn optional_and_unknown_item_members_are_never_refused() {
    assert_eq!(
        catalog_with(|c| {
            let item = &mut c["items"][0];
            item["author"] = json!({"name": "Acme"});
            item["homepageUrl"] = json!(3);
            item["repositoryUrl"] = json!("");
            item["iconUrl"] = json!("assets/icon.svg");
            item["manifest"] = json!({"displayName": "x"});
            item["versions"] = json!(["1.0.0"]);
        }),
        []
    );
}

#[test]
fn one_bad_item_is_reported_where_it_is() {
    let found = catalog_with(|c| {
        remove(&mut c["items"][0], "description");
        c["items"][1]["defaultChannel"] = json!("nightly");
    });
    assert_eq!(
        found,
        [
            (codes::READER_EMPTY, "/items/0/description".to_owned()),
            (codes::READER_VALUE, "/items/1/defaultChannel".to_owned()),
        ]
    );
}

#[test]
fn detail_document_rules() {
    assert_eq!(
        detail_with(|d| d["schemaVersion"] = json!(2)),
        one(codes::READER_SCHEMA_VERSION, "/schemaVersion")
    );
    assert_eq!(
        detail_with(|d| d["versions"] = json!([])),
        one(codes::READER_EMPTY, "/versions")
    );
    assert_eq!(
        detail_with(|d| d["versions"] = json!({})),
        one(codes::READER_TYPE, "/versions")
    );
    assert_eq!(
        detail_with(|d| d["versions"][1] = json!("0.2.0")),
        one(codes::READER_TYPE, "/versions/1")
    );
    assert_eq!(
        detail_with(|d| remove(d, "featured")),
        one(codes::READER_TYPE, "/featured")
    );
    for key in [
        "extensionId",
        "packageName",
        "status",
        "defaultVersion",
        "readmePath",
    ] {
        assert_eq!(
            detail_with(|d| remove(d, key)),
            one(codes::READER_EMPTY, &format!("/{key}")),
            "{key}"
        );
    }
    let mut other = detail();
    other["extensionId"] = json!("example.other");
    let found = read_detail(&other, Some("example.spirit-extension")).problems;
    assert_eq!(
        problems(&found),
        one(codes::READER_ID_MISMATCH, "/extensionId")
    );
    assert_eq!(found[0].document, Document::Detail);
    // Without an id to compare with, any id is read.
    assert!(read_detail(&other, None).accepted());
}

#[test]
fn detail_version_rules() {
    for key in [
        "version",
        "displayName",
        "description",
        "channel",
        "reviewStatus",
    ] {
        assert_eq!(
            detail_with(|d| remove(&mut d["versions"][1], key)),
            one(codes::READER_EMPTY, &format!("/versions/1/{key}")),
            "{key}"
        );
    }
    assert_eq!(
        detail_with(|d| d["versions"][0]["channel"] = json!("beta")),
        one(codes::READER_VALUE, "/versions/0/channel")
    );
    assert_eq!(
        detail_with(|d| remove(&mut d["versions"][0], "supportedHosts")),
        one(codes::READER_EMPTY, "/versions/0/supportedHosts")
    );
    assert_eq!(
        detail_with(|d| d["versions"][0]["changelog"] = json!({"summary": "x"})),
        one(codes::READER_EMPTY, "/versions/0/changelog/body")
    );
    // A changelog that is not an object, and optional strings of another type, are
    // dropped, not refused.
    assert_eq!(
        detail_with(|d| {
            d["versions"][0]["changelog"] = json!("Initial release");
            d["versions"][0]["publishedAt"] = json!(1767225600000_u64);
            d["versions"][1]["author"] = json!({"name": "example"});
        }),
        []
    );
}

#[test]
fn install_needs_a_listed_version_an_https_tarball_and_a_digest() {
    let reading = |change: &dyn Fn(&mut Value)| {
        let mut value = detail();
        change(&mut value);
        read_detail(&value, Some("example.spirit-extension"))
    };
    let base = reading(&|_| {});
    assert_eq!(prepare_install(&base, None), Ok(0));
    assert_eq!(prepare_install(&base, Some(" 0.2.0-beta.1 ")), Ok(1));
    assert_eq!(install_problems(&base, 0, Some("cli")), []);

    let unlisted = reading(&|d| d["defaultVersion"] = json!("9.9.9"));
    let refused = prepare_install(&unlisted, None).unwrap_err();
    assert_eq!(
        (refused.code, refused.at.as_str()),
        (codes::READER_NOT_INSTALLABLE, "/defaultVersion")
    );
    assert_eq!(
        problems(&installability(&unlisted)),
        one(codes::READER_NOT_INSTALLABLE, "/defaultVersion")
    );
    let refused = prepare_install(&base, Some("1.0.0")).unwrap_err();
    assert_eq!(refused.at.as_str(), "/versions");

    let http = reading(&|d| d["versions"][0]["tarballUrl"] = json!("http://x.test/a.tgz"));
    let refused = prepare_install(&http, None).unwrap_err();
    assert_eq!(
        (refused.code, refused.at.as_str()),
        (codes::READER_URL, "/versions/0/tarballUrl")
    );

    let cli_only = reading(&|d| d["versions"][0]["supportedHosts"] = json!(["cli"]));
    assert_eq!(install_problems(&cli_only, 0, Some("cli")), []);
    assert_eq!(
        problems(&install_problems(&cli_only, 0, Some("desktop"))),
        one(codes::READER_NOT_INSTALLABLE, "/versions/0/supportedHosts")
    );

    let no_tarball = reading(&|d| remove(&mut d["versions"][0], "tarballUrl"));
    assert_eq!(
        problems(&install_problems(&no_tarball, 0, None)),
        one(codes::READER_NOT_INSTALLABLE, "/versions/0/tarballUrl")
    );
    let no_digest = reading(&|d| {
        remove(&mut d["versions"][0], "integrity");
        remove(&mut d["versions"][0], "shasum");
    });
    assert_eq!(
        problems(&install_problems(&no_digest, 0, None)),
        one(codes::READER_NOT_INSTALLABLE, "/versions/0")
    );
    let shasum_only = reading(&|d| remove(&mut d["versions"][0], "integrity"));
    assert_eq!(install_problems(&shasum_only, 0, None), []);
    // Each digest present is checked by the app, so a malformed one fails even beside a
    // good one.
    let bad_integrity = reading(&|d| d["versions"][0]["integrity"] = json!("sha1-abc="));
    assert_eq!(
        problems(&install_problems(&bad_integrity, 0, None)),
        one(codes::READER_NOT_INSTALLABLE, "/versions/0/integrity")
    );
    let bad_shasum = reading(&|d| d["versions"][1]["shasum"] = json!("not-hex"));
    assert_eq!(
        problems(&installability(&bad_shasum)),
        one(codes::READER_NOT_INSTALLABLE, "/versions/1/shasum")
    );
}

#[test]
fn digest_forms() {
    let sha512 = "sha512-uvhT7ECoJrn9XqPNJhJE5dlB8zFyVKb8SXlbuxLFn6JI1utw0oG8pHF5hsKD3QU0MUFGLcHPqTqzpWtKqcWzOQ==";
    assert!(integrity_well_formed(sha512));
    assert!(integrity_well_formed(
        &sha512.replacen("sha512", "SHA512", 1)
    ));
    assert!(integrity_well_formed(&format!("sha1-abc {sha512}")));
    assert!(integrity_well_formed(
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    ));
    assert!(integrity_well_formed(
        "sha384-OLBgp1GsljhM2TJ+sbHjaiH9txEUvgdDTAzHv2P24donTt6/529l+9Ua0vFImLlb"
    ));
    // Wrong size for the algorithm, no padding, bad alphabet, unknown algorithm.
    assert!(!integrity_well_formed(
        "sha512-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    ));
    assert!(!integrity_well_formed(
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"
    ));
    assert!(!integrity_well_formed(
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSu!U="
    ));
    assert!(!integrity_well_formed("md5-1B2M2Y8AsgTpgAmY7PhCfg=="));
    assert!(!integrity_well_formed(""));
    assert!(shasum_well_formed(
        "64ad799fe1f69812c607571c5f1c9d6e26ac06f9"
    ));
    assert!(shasum_well_formed(
        "64AD799FE1F69812C607571C5F1C9D6E26AC06F9"
    ));
    assert!(!shasum_well_formed(
        "64ad799fe1f69812c607571c5f1c9d6e26ac06f"
    ));
    assert!(!shasum_well_formed(
        "g4ad799fe1f69812c607571c5f1c9d6e26ac06f9"
    ));
}

#[test]
fn paths_resolve_as_the_reader_fetches_them() {
    let registry = |p: &str| Ok(Location::Registry(p.to_owned()));
    assert_eq!(
        resolve("extensions/a.b/detail.json", None),
        registry("extensions/a.b/detail.json")
    );
    assert_eq!(
        resolve(" ./extensions/a.b/detail.json ", None),
        registry("extensions/a.b/detail.json")
    );
    assert_eq!(
        resolve("extensions/x/../a.b/./README.md", None),
        registry("extensions/a.b/README.md")
    );
    assert_eq!(
        resolve("extensions/a%20b/README.md", None),
        registry("extensions/a b/README.md")
    );
    assert_eq!(
        resolve(
            "https://registry.test/registry/extensions/a.b/detail.json",
            Some("https://registry.test/registry/")
        ),
        registry("extensions/a.b/detail.json")
    );
    assert_eq!(
        resolve(
            "https://cdn.test/a.b/detail.json",
            Some("https://registry.test/registry/")
        ),
        Ok(Location::Remote(
            "https://cdn.test/a.b/detail.json".to_owned()
        ))
    );
    // Leaving the registry folder is a place on the host, not a file of the registry.
    assert!(matches!(
        resolve("../catalog.json", None),
        Ok(Location::Remote(_))
    ));
    assert!(matches!(
        resolve("/registry/catalog.json", None),
        Ok(Location::Remote(_))
    ));
    for refused in [
        "http://registry.test/registry/extensions/a.b/detail.json",
        "file:///etc/passwd",
        "C:/registry/detail.json",
        "https://",
        "",
    ] {
        assert!(resolve(refused, None).is_err(), "{refused}");
    }
}
