//! The manifest corpus: `corpus/valid/*.toml` check without any diagnostic (or exactly
//! the warnings in a sibling `.expected`), `corpus/invalid/*.toml` give exactly the
//! diagnostics in their sibling `.expected` file, one per line:
//!
//! ```text
//! error manifest/missing-key /launch/package 10:1
//! ```
//!
//! Set `UPDATE_EXPECTED=1` to rewrite the `.expected` files from the current output
//! (then read the diff: it is the review).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use curupira_diagnostics::{JsonPointer, Severity};
use curupira_manifest::{Checked, check_bytes, check_str, codes};
use curupira_test_support::diagnostics::describe;
use curupira_test_support::fs::files_with_extension;

fn corpus(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(dir);
    files_with_extension(&dir, "toml")
}

fn check_file(path: &Path) -> Checked {
    let name = path.file_name().unwrap().to_str().unwrap();
    check_bytes(&fs::read(path).unwrap(), name)
}

/// Compares with the `.expected` file (missing = no diagnostics), or rewrites it.
fn assert_expected(path: &Path, checked: &Checked) {
    let expected_path = path.with_extension("expected");
    let actual: Vec<String> = checked.diagnostics().iter().map(describe).collect();
    if std::env::var_os("UPDATE_EXPECTED").is_some() {
        if actual.is_empty() {
            let _ = fs::remove_file(&expected_path);
        } else {
            fs::write(&expected_path, actual.join("\n") + "\n").unwrap();
        }
        return;
    }
    let expected = fs::read_to_string(&expected_path).unwrap_or_default();
    let expected: Vec<&str> = expected.lines().collect();
    assert_eq!(
        actual,
        expected,
        "{}:\n{}",
        path.display(),
        checked.report.render_human(false)
    );
}

#[test]
fn valid_manifests_check_clean_and_round_trip() {
    let files = corpus("valid");
    assert!(files.len() >= 4);
    for path in files {
        let checked = check_file(&path);
        assert_expected(&path, &checked);
        assert_eq!(checked.report.errors(), 0, "{}", path.display());
        let manifest = checked.manifest.expect("a manifest without errors");
        let printed = manifest.to_toml();
        let again = check_str(&printed, "printed.toml");
        assert_eq!(again.report.errors(), 0, "{printed}");
        assert_eq!(again.manifest.as_ref(), Some(&manifest), "{printed}");
    }
}

#[test]
fn every_invalid_case_reports_exactly_its_diagnostics() {
    let files = corpus("invalid");
    assert!(files.len() >= 30);
    for path in files {
        let checked = check_file(&path);
        assert!(
            !checked.diagnostics().is_empty(),
            "{} reports nothing",
            path.display()
        );
        assert_expected(&path, &checked);
        // A manifest comes out exactly when there is no error.
        assert_eq!(
            checked.manifest.is_some(),
            checked.report.errors() == 0,
            "{}",
            path.display()
        );
        for diagnostic in checked.diagnostics() {
            assert!(JsonPointer::parse(diagnostic.path.as_str()).is_ok());
            assert!(diagnostic.position.is_some(), "{}", describe(diagnostic));
            assert!(!diagnostic.message.contains('\n'), "{}", diagnostic.message);
        }
    }
}

#[test]
fn each_case_file_is_named_after_what_it_shows() {
    // `invalid-name-start.toml` must report `manifest/invalid-name`, and so on.
    for path in corpus("invalid") {
        let stem = path.file_stem().unwrap().to_str().unwrap();
        if stem == "many-problems" {
            continue;
        }
        let checked = check_file(&path);
        let codes: Vec<_> = checked
            .diagnostics()
            .iter()
            .map(|d| d.code.to_string())
            .collect();
        assert!(
            codes
                .iter()
                .any(|code| stem.starts_with(code.trim_start_matches("manifest/"))),
            "{stem} reports {codes:?}"
        );
    }
}

#[test]
fn every_code_has_a_case() {
    let mut seen = BTreeSet::new();
    for path in corpus("invalid") {
        for diagnostic in check_file(&path).diagnostics() {
            seen.insert(diagnostic.code.to_string());
        }
    }
    // Not UTF-8 cannot be a readable fixture; it has its own test below.
    seen.insert(not_utf8().diagnostics()[0].code.to_string());
    let all: BTreeSet<_> = codes::ALL.iter().map(|c| c.code.to_owned()).collect();
    assert_eq!(seen, all);
    for code in codes::ALL {
        for path in corpus("invalid") {
            for diagnostic in check_file(&path).diagnostics() {
                if diagnostic.code == code.code {
                    assert_eq!(diagnostic.severity, code.severity, "{}", code.code);
                }
            }
        }
    }
}

fn not_utf8() -> Checked {
    check_bytes(b"manifest_version = 1\nname = \"caf\xe9\"\n", "latin1.toml")
}

#[test]
fn bytes_that_are_not_utf8_give_one_located_error() {
    let checked = not_utf8();
    let found: Vec<_> = checked.diagnostics().iter().map(describe).collect();
    assert_eq!(found, [r#"error manifest/encoding "" 2:12"#]);
    assert!(checked.diagnostics()[0].message.contains("byte 0xE9"));
    assert!(checked.manifest.is_none());
}

#[test]
fn a_file_with_many_problems_reports_each_on_its_own_line() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/invalid/many-problems.toml");
    let checked = check_file(&path);
    let lines: Vec<u32> = checked
        .diagnostics()
        .iter()
        .map(|d| d.line().unwrap())
        .collect();
    assert_eq!(lines.len(), 12, "{}", checked.report.render_human(false));
    let distinct: BTreeSet<_> = lines.iter().collect();
    assert_eq!(distinct.len(), lines.len(), "{lines:?}");
    // Each diagnostic's line is the line of the key it is about.
    let text = fs::read_to_string(&path).unwrap();
    for diagnostic in checked.diagnostics() {
        let line = text
            .lines()
            .nth(diagnostic.line().unwrap() as usize - 1)
            .unwrap();
        let key = diagnostic.path.last().unwrap();
        let key = if key.bytes().all(|b| b.is_ascii_digit()) {
            diagnostic.path.parent().unwrap().last().unwrap()
        } else {
            key
        };
        assert!(
            line.starts_with(&key),
            "{} is not on `{line}`",
            diagnostic.path
        );
    }
    assert_eq!((checked.report.errors(), checked.report.warnings()), (8, 4));
}

#[test]
fn syntax_errors_have_line_and_column() {
    let checked = check_str(
        "manifest_version = 1\nname = \"unterminated\nkind = 'trigger'\n",
        "broken.toml",
    );
    let diagnostic = &checked.diagnostics()[0];
    assert_eq!(diagnostic.code, codes::SYNTAX);
    assert_eq!(diagnostic.severity, Severity::Error);
    assert_eq!(
        (diagnostic.line(), diagnostic.column()),
        (Some(2), Some(21))
    );
    assert!(checked.manifest.is_none());
}

#[test]
fn human_rendering_matches_the_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    for case in ["many-problems", "missing-key-launch-package"] {
        let source = dir.join(format!("corpus/invalid/{case}.toml"));
        let rendered = check_file(&source).report.render_human(false);
        let snapshot = dir.join(format!("snapshots/{case}.txt"));
        if std::env::var_os("UPDATE_EXPECTED").is_some() {
            fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
            fs::write(&snapshot, &rendered).unwrap();
            continue;
        }
        assert_eq!(rendered, fs::read_to_string(&snapshot).unwrap(), "{case}");
    }
}

#[test]
fn json_rendering_has_the_spec_shape() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/invalid/many-problems.toml");
    let checked = check_file(&path);
    let json: serde_json::Value = serde_json::from_str(&checked.report.render_json()).unwrap();
    let object = json.as_object().unwrap();
    let keys: BTreeSet<_> = object.keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["diagnostics", "errors", "warnings"]));
    assert_eq!(json["errors"], 8);
    assert_eq!(json["warnings"], 4);
    let diagnostics = json["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 12);
    for (value, diagnostic) in diagnostics.iter().zip(checked.diagnostics()) {
        let keys: BTreeSet<_> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            BTreeSet::from([
                "severity", "code", "file", "path", "line", "column", "message"
            ])
        );
        assert_eq!(value["severity"], diagnostic.severity.as_str());
        assert_eq!(value["file"], "many-problems.toml");
        assert_eq!(value["path"], diagnostic.path.as_str());
        assert_eq!(value["line"], diagnostic.line().unwrap());
        assert_eq!(value["column"], diagnostic.column().unwrap());
        assert_eq!(value["message"], diagnostic.message.as_str());
    }
    assert_eq!(
        diagnostics[0]["code"],
        "manifest/unsupported-manifest-version"
    );
}
