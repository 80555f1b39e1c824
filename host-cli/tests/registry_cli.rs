//! `curupira registry check|build|add` as a maintainer runs them: the real binary on a
//! copy of the sample registry of `registry-entry/tests/sample`, exit codes 0/1/2, and
//! what is (not) written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../registry-entry/tests/sample")
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
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
