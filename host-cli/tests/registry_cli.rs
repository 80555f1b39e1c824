//! `curupira registry check|build|add` as a maintainer runs them: the real binary on a
//! copy of the sample registry of `registry-entry/tests/sample`, exit codes 0/1/2, and
//! what is (not) written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use curupira_test_support::fs::copy_dir;

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../registry-entry/tests/sample")
}

/// A copy of the sample registry (its `registry/` and `npm/`) in a new folder.
fn copy_of_sample() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&sample().join("registry"), &tmp.path().join("registry"));
    copy_dir(&sample().join("npm"), &tmp.path().join("npm"));
    tmp
}

/// `curupira registry ARGS…` run in `dir`.
fn registry(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_curupira"))
        .arg("registry")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn build_writes_the_golden_files_and_check_then_passes() {
    let tmp = copy_of_sample();
    let root = tmp.path();
    // Before the build the derived files are missing: warnings only.
    let before = registry(root, &["check", "."]);
    assert_eq!(before.status.code(), Some(0), "{}", stdout(&before));
    assert!(
        stdout(&before).contains("warning[registry/missing-derived]"),
        "{}",
        stdout(&before)
    );

    let built = registry(root, &["build", ".", "--npm-metadata", "npm"]);
    assert_eq!(
        built.status.code(),
        Some(0),
        "{}{}",
        stdout(&built),
        stderr(&built)
    );
    assert!(
        stdout(&built).contains("wrote registry/catalog.json\n"),
        "{}",
        stdout(&built)
    );
    let golden = sample().join("golden/registry");
    assert_eq!(
        fs::read(root.join("registry/catalog.json")).unwrap(),
        fs::read(golden.join("catalog.json")).unwrap()
    );
    for id in [
        "acme.lookup",
        "example.spirit-extension",
        "notes.quick-notes",
    ] {
        let detail = format!("extensions/{id}/detail.json");
        assert_eq!(
            fs::read(root.join("registry").join(&detail)).unwrap(),
            fs::read(golden.join(&detail)).unwrap(),
            "{detail}"
        );
    }

    let checked = registry(
        root,
        &["check", ".", "--npm-metadata", "npm", "--format", "json"],
    );
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
    let report: serde_json::Value = serde_json::from_str(&stdout(&checked)).unwrap();
    assert_eq!(report["errors"], 0);
    assert_eq!(report["warnings"], 0);
}

#[test]
fn a_hand_edited_catalog_is_caught_and_a_failing_build_writes_nothing() {
    let tmp = copy_of_sample();
    let root = tmp.path();
    assert_eq!(
        registry(root, &["build", ".", "--npm-metadata", "npm"])
            .status
            .code(),
        Some(0)
    );
    let catalog = root.join("registry/catalog.json");
    let edited = fs::read_to_string(&catalog).unwrap().replacen(
        "\"featured\": false",
        "\"featured\": true",
        1,
    );
    fs::write(&catalog, &edited).unwrap();
    let checked = registry(root, &["check", ".", "--npm-metadata", "npm"]);
    assert_eq!(checked.status.code(), Some(1), "{}", stdout(&checked));
    assert!(
        stdout(&checked).contains("error[registry/stale-derived]"),
        "{}",
        stdout(&checked)
    );

    // A version npm never published: the build refuses and leaves every file as it was.
    let entry = root.join("registry/extensions/acme.lookup/entry.json");
    let text = fs::read_to_string(&entry).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["versions"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "version": "9.9.9", "channel": "stable", "reviewStatus": "unverified"
        }));
    fs::write(&entry, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    let built = registry(root, &["build", ".", "--npm-metadata", "npm"]);
    assert_eq!(built.status.code(), Some(1), "{}", stdout(&built));
    assert!(
        stdout(&built).contains("error[registry/unpublished-version]"),
        "{}",
        stdout(&built)
    );
    assert!(!stdout(&built).contains("wrote "), "{}", stdout(&built));
    assert_eq!(fs::read_to_string(&catalog).unwrap(), edited);
}

#[test]
fn add_scaffolds_an_entry_and_readme() {
    let tmp = copy_of_sample();
    let root = tmp.path();
    let added = registry(
        root,
        &[
            "add",
            ".",
            "--package",
            "@acme/weather",
            "--id",
            "acme.weather",
            "--npm-metadata",
            "npm",
        ],
    );
    assert_eq!(
        added.status.code(),
        Some(0),
        "{}{}",
        stdout(&added),
        stderr(&added)
    );
    let golden = sample().join("golden/scaffold/acme.weather");
    let folder = root.join("registry/extensions/acme.weather");
    for file in ["entry.json", "README.md"] {
        assert_eq!(
            fs::read_to_string(folder.join(file)).unwrap(),
            fs::read_to_string(golden.join(file)).unwrap(),
            "{file}"
        );
    }
    // Adding the same id again is refused and changes nothing.
    let again = registry(
        root,
        &[
            "add",
            ".",
            "--package",
            "@acme/weather",
            "--id",
            "acme.weather",
            "--npm-metadata",
            "npm",
        ],
    );
    assert_ne!(again.status.code(), Some(0));
    assert_eq!(
        fs::read_to_string(folder.join("entry.json")).unwrap(),
        fs::read_to_string(golden.join("entry.json")).unwrap()
    );
}

#[test]
fn add_starts_a_registry_in_an_empty_folder_that_check_and_build_accept() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&sample().join("npm"), &tmp.path().join("npm"));
    fs::create_dir(tmp.path().join("new")).unwrap();
    let run = |args: &[&str]| {
        let output = registry(tmp.path(), args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}{}",
            stdout(&output),
            stderr(&output)
        );
        output
    };
    run(&[
        "add",
        "new",
        "--package",
        "@acme/weather",
        "--id",
        "acme.weather",
        "--npm-metadata",
        "npm",
    ]);
    assert!(
        tmp.path()
            .join("new/registry/extensions/acme.weather/entry.json")
            .is_file()
    );
    run(&["build", "new", "--npm-metadata", "npm"]);
    run(&["check", "new", "--npm-metadata", "npm"]);
}

#[test]
fn usage_and_io_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    // build needs a metadata source.
    let no_source = registry(tmp.path(), &["build", "."]);
    assert_eq!(no_source.status.code(), Some(2));
    assert!(
        stderr(&no_source).contains("--npm-metadata DIR"),
        "{}",
        stderr(&no_source)
    );
    assert_eq!(stdout(&no_source), "");
    // Both sources at once is a usage error.
    let both = registry(
        tmp.path(),
        &[
            "check",
            ".",
            "--npm-metadata",
            "npm",
            "--npm-registry",
            "http://127.0.0.1:9",
        ],
    );
    assert_eq!(both.status.code(), Some(2));
    // A registry URL that is not one.
    let bad_url = registry(
        tmp.path(),
        &["check", ".", "--npm-registry", "ftp://example.com"],
    );
    assert_eq!(bad_url.status.code(), Some(2), "{}", stderr(&bad_url));
    assert_eq!(stderr(&bad_url).lines().count(), 1, "{}", stderr(&bad_url));
}

#[test]
fn check_names_the_document_pointer_and_rule_the_marketplace_reader_refuses() {
    let tmp = copy_of_sample();
    let root = tmp.path();
    assert_eq!(
        registry(root, &["build", ".", "--npm-metadata", "npm"])
            .status
            .code(),
        Some(0)
    );
    // The catalog's shape before the reader's: items under `extensions`.
    let catalog = root.join("registry/catalog.json");
    let text = fs::read_to_string(&catalog).unwrap();
    fs::write(&catalog, text.replacen("\"items\"", "\"extensions\"", 1)).unwrap();
    let checked = registry(root, &["check", ".", "--format", "json"]);
    assert_eq!(checked.status.code(), Some(1), "{}", stdout(&checked));
    let report: serde_json::Value = serde_json::from_str(&stdout(&checked)).unwrap();
    let refused: Vec<(&str, &str, &str)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"].as_str().unwrap().starts_with("registry/reader-"))
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["file"].as_str().unwrap(),
                d["path"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [("registry/reader-type", "registry/catalog.json", "/items")]
    );
    // In human form, the reader's rule in words.
    let human = registry(root, &["check", "."]);
    assert!(
        stdout(&human).contains("error[registry/reader-type]")
            && stdout(&human).contains("`items` must be an array"),
        "{}",
        stdout(&human)
    );
}

/// `../shared/conformance/spirit-app/marketplace`, when this clone has it.
fn marketplace_vectors() -> Option<PathBuf> {
    let dir = curupira_test_support::conformance::folder("spirit-app/marketplace");
    if dir.is_dir() {
        return Some(dir);
    }
    println!(
        "skipped: {} is missing, so `registry build` was not run on the app's marketplace input",
        dir.display()
    );
    None
}

#[test]
fn build_on_the_marketplace_input_writes_what_the_app_reads() {
    let Some(dir) = marketplace_vectors() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("input");
    copy_dir(&dir.join("input"), &input);
    let built = registry(
        tmp.path(),
        &["build", "input", "--npm-metadata", "input/npm"],
    );
    assert_eq!(
        built.status.code(),
        Some(0),
        "{}{}",
        stdout(&built),
        stderr(&built)
    );
    let expected: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("expected-build.json")).unwrap()).unwrap();
    let read = |file: &str| -> serde_json::Value {
        serde_json::from_slice(&fs::read(input.join("registry").join(file)).unwrap()).unwrap()
    };
    let catalog = read("catalog.json");
    let members = |key: &str| -> Vec<String> {
        expected["compare"][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_owned())
            .collect()
    };
    let items = catalog["items"].as_array().unwrap();
    let wanted = expected["catalog"]["items"].as_array().unwrap();
    assert_eq!(items.len(), wanted.len());
    for (item, wanted) in items.iter().zip(wanted) {
        for key in members("item") {
            assert_eq!(item.get(&key), wanted.get(&key), "catalog item `{key}`");
        }
    }
    for (id, wanted) in expected["details"].as_object().unwrap() {
        let detail = read(&format!("extensions/{id}/detail.json"));
        for key in members("detail") {
            assert_eq!(detail.get(&key), wanted.get(&key), "{id} `{key}`");
        }
        let versions = detail["versions"].as_array().unwrap();
        let wanted_versions = wanted["versions"].as_array().unwrap();
        assert_eq!(versions.len(), wanted_versions.len(), "{id}");
        for (version, wanted) in versions.iter().zip(wanted_versions) {
            for key in members("version") {
                assert_eq!(version.get(&key), wanted.get(&key), "{id} version `{key}`");
            }
        }
    }
    // `registry check` runs the reader's rules on what was written: nothing refused.
    let checked = registry(
        tmp.path(),
        &["check", "input", "--npm-metadata", "input/npm"],
    );
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
}
