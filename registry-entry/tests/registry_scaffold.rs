//! `scaffold` (`curupira registry add`): the exact `entry.json` and `README.md` written
//! for a package of the sample's npm folder, and the refusals.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod registry_support;

use std::fs;

use curupira_diagnostics::Severity;
use registry_support::{Copy, assert_golden, found, one, with_code};
use serde_json::json;
use spirit_registry::{RegistryError, build, check, codes, scaffold};

#[test]
fn scaffold_writes_the_golden_entry_and_readme() {
    let copy = Copy::new();
    let done = scaffold(&copy.root, "@acme/weather", "acme.weather", &copy.npm()).unwrap();
    let dir = copy.path("registry/extensions/acme.weather");
    assert_eq!(
        done.written,
        [dir.join("entry.json"), dir.join("README.md")]
    );
    assert_golden(
        "scaffold/acme.weather/entry.json",
        &fs::read(dir.join("entry.json")).unwrap(),
    );
    assert_golden(
        "scaffold/acme.weather/README.md",
        &fs::read(dir.join("README.md")).unwrap(),
    );
    // 0.1.0 fails registry-strict validation and 0.2.0 is published under another
    // name: both are left out, with warnings that say so.
    assert_eq!(
        done.report.errors(),
        0,
        "{}",
        done.report.render_human(false)
    );
    let left_out: Vec<(&str, &str)> = done
        .report
        .diagnostics()
        .iter()
        .map(|d| (d.file.as_str(), d.code.as_ref()))
        .collect();
    assert_eq!(
        left_out,
        [
            ("npm:@acme/weather@0.1.0", "spirit/registry-required"),
            ("npm:@acme/weather@0.2.0", "registry/package-name-mismatch"),
        ]
    );
    assert!(done.report.diagnostics().iter().all(|d| {
        d.severity == Severity::Warning && d.message.contains("is left out of the entry")
    }));
    // Only the two files: nothing temporary is left.
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["README.md", "entry.json"]);
}

#[test]
fn the_scaffolded_entry_builds_and_checks_clean() {
    let copy = Copy::new();
    scaffold(&copy.root, "@acme/weather", "acme.weather", &copy.npm()).unwrap();
    let built = build(&copy.root, &copy.npm()).unwrap();
    assert_eq!(
        found(&built.report),
        [],
        "{}",
        built.report.render_human(false)
    );
    let report = check(&copy.root, Some(&copy.npm())).unwrap();
    assert_eq!(found(&report), [], "{}", report.render_human(false));
}

#[test]
fn scaffold_refuses_an_existing_folder() {
    let copy = Copy::new();
    let error = scaffold(&copy.root, "@acme/weather", "acme.lookup", &copy.npm()).unwrap_err();
    assert!(
        matches!(error, RegistryError::AlreadyExists { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("already exists"), "{error}");
}

#[test]
fn scaffold_checks_the_id_before_using_it_as_a_path() {
    let copy = Copy::new();
    for id in ["../escape", "Acme.Weather", "weather"] {
        let done = scaffold(&copy.root, "@acme/weather", id, &copy.npm()).unwrap();
        let error = one(&done.report, codes::INVALID_EXTENSION_ID);
        assert_eq!(error.path.as_str(), "/extensionId");
        assert!(done.written.is_empty());
    }
    assert!(!copy.root.join("registry/escape").exists());
    let done = scaffold(&copy.root, "@Acme/Weather", "acme.weather", &copy.npm()).unwrap();
    assert!(!with_code(&done.report, codes::INVALID_PACKAGE_NAME).is_empty());
    assert!(!copy.path("registry/extensions/acme.weather").exists());
}

#[test]
fn scaffold_refuses_a_package_already_listed() {
    let copy = Copy::new();
    let done = scaffold(&copy.root, "@acme/lookup", "acme.lookup-two", &copy.npm()).unwrap();
    let error = one(&done.report, codes::DUPLICATE_ENTRY);
    assert_eq!(
        (error.file.as_str(), error.path.as_str()),
        (
            "registry/extensions/acme.lookup-two/entry.json",
            "/packageName"
        )
    );
    assert!(
        error
            .message
            .contains("`registry/extensions/acme.lookup/entry.json`")
    );
    assert!(done.written.is_empty());
    assert!(!copy.path("registry/extensions/acme.lookup-two").exists());
}

#[test]
fn scaffold_needs_a_latest_that_passes() {
    let copy = Copy::new();
    copy.edit_npm("@acme/weather", |document| {
        document["dist-tags"]["latest"] = json!("0.1.0");
    });
    let done = scaffold(&copy.root, "@acme/weather", "acme.weather", &copy.npm()).unwrap();
    // The default's own problem stays an error; the default is refused.
    let strict = with_code(&done.report, "spirit/registry-required");
    assert_eq!(strict.len(), 1);
    assert_eq!(strict[0].severity, Severity::Error);
    let error = one(&done.report, codes::DEFAULT_VERSION_NOT_LISTED);
    assert!(error.message.contains("`0.1.0`"), "{}", error.message);
    assert!(done.written.is_empty());
    assert!(!copy.path("registry/extensions/acme.weather").exists());
}

#[test]
fn scaffold_of_an_unknown_package_is_a_metadata_error() {
    let copy = Copy::new();
    let error = scaffold(&copy.root, "@acme/nowhere", "acme.nowhere", &copy.npm()).unwrap_err();
    assert!(matches!(error, RegistryError::Metadata(_)), "{error:?}");
    assert!(error.to_string().contains("`@acme/nowhere`"), "{error}");
    assert!(!copy.path("registry/extensions/acme.nowhere").exists());
}

#[test]
fn scaffold_starts_a_new_registry_in_an_empty_folder() {
    let copy = Copy::new();
    let empty = tempfile::tempdir().unwrap();
    let root = empty.path();
    // A refused id writes nothing, not even the registry's folders.
    let done = scaffold(root, "@acme/weather", "../escape", &copy.npm()).unwrap();
    assert!(done.written.is_empty());
    assert!(!root.join("registry").exists());

    let done = scaffold(root, "@acme/weather", "acme.weather", &copy.npm()).unwrap();
    let dir = root.join("registry/extensions/acme.weather");
    assert_eq!(
        done.written,
        [dir.join("entry.json"), dir.join("README.md")]
    );
    assert_golden(
        "scaffold/acme.weather/entry.json",
        &fs::read(dir.join("entry.json")).unwrap(),
    );
    let built = build(root, &copy.npm()).unwrap();
    assert_eq!(
        found(&built.report),
        [],
        "{}",
        built.report.render_human(false)
    );
    let report = check(root, Some(&copy.npm())).unwrap();
    assert_eq!(found(&report), [], "{}", report.render_human(false));
}

#[test]
fn scaffold_refuses_a_root_that_is_not_a_folder() {
    let copy = Copy::new();
    let empty = tempfile::tempdir().unwrap();
    let missing = empty.path().join("nope");
    let error = scaffold(&missing, "@acme/weather", "acme.weather", &copy.npm()).unwrap_err();
    assert!(
        matches!(error, RegistryError::NotARegistry { .. }),
        "{error:?}"
    );
    assert!(!missing.exists());
    // `registry/extensions` there but a file: not a registry either.
    fs::create_dir(empty.path().join("registry")).unwrap();
    fs::write(empty.path().join("registry/extensions"), "").unwrap();
    let error = scaffold(empty.path(), "@acme/weather", "acme.weather", &copy.npm()).unwrap_err();
    assert!(
        matches!(error, RegistryError::NotARegistry { .. }),
        "{error:?}"
    );
}
