//! The text corpus: each `corpus/text/*.json` gives exactly the diagnostics in its
//! sibling `.expected` file, one per line (`error spirit/missing-key /name 3:5`), and
//! the human rendering of each quotes the right line.
//!
//! Set `UPDATE_EXPECTED=1` to rewrite the `.expected` files from the current output
//! (then read the diff: it is the review).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use curupira_test_support::diagnostics::describe;
use curupira_test_support::fs::files_with_extension;
use spirit_manifest::{Checked, Options, check_bytes};

fn corpus() -> Vec<PathBuf> {
    files_with_extension(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/text"),
        "json",
    )
}

fn check(path: &Path) -> Checked {
    let name = path.file_name().unwrap().to_str().unwrap();
    check_bytes(&fs::read(path).unwrap(), name, &Options::default())
}

#[test]
fn every_file_gives_exactly_its_expected_diagnostics() {
    let files = corpus();
    assert!(files.len() >= 5);
    for path in files {
        let checked = check(&path);
        let actual: Vec<String> = checked.diagnostics().iter().map(describe).collect();
        let expected_path = path.with_extension("expected");
        if std::env::var_os("UPDATE_EXPECTED").is_some() {
            fs::write(&expected_path, actual.join("\n") + "\n").unwrap();
            continue;
        }
        let expected = fs::read_to_string(&expected_path).unwrap();
        let expected: Vec<&str> = expected.lines().collect();
        assert_eq!(
            actual,
            expected,
            "{}:\n{}",
            path.display(),
            checked.report.render_human(false)
        );
        assert_eq!(
            checked.package.is_none(),
            checked.report.has_errors(),
            "{}",
            path.display()
        );
    }
}

#[test]
fn a_duplicate_member_is_a_warning_at_the_second_one_and_the_last_wins() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/text/duplicate-member.json");
    let checked = check(&path);
    let first = &checked.diagnostics()[0];
    assert_eq!(first.code, "spirit/duplicate-key");
    assert_eq!(first.path.as_str(), "/spiritExtension/displayName");
    assert_eq!((first.line(), first.column()), (Some(7), Some(5)));
    assert!(
        first.message.contains("first at line 5, column 5"),
        "{}",
        first.message
    );
    // The app reads the last of each, as the model does.
    let package = checked.package.expect("duplicates are advice");
    let text = fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(package.name, value["name"].as_str().unwrap());
    assert_eq!(
        package.spirit_extension.display_name,
        value["spiritExtension"]["displayName"].as_str().unwrap()
    );
}

#[test]
fn a_byte_order_mark_is_refused_and_invalid_utf8_is_advice() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/text");
    let bom = check(&dir.join("bom.json"));
    let found: Vec<String> = bom.diagnostics().iter().map(describe).collect();
    assert_eq!(found, ["error spirit/byte-order-mark \"\" 1:1"]);
    // Without the mark the same file is a clean package.
    let bytes = fs::read(dir.join("bom.json")).unwrap();
    let plain = check_bytes(&bytes[3..], "package.json", &Options::default());
    assert!(plain.package.is_some(), "{:?}", plain.diagnostics());
    assert!(plain.diagnostics().is_empty(), "{:?}", plain.diagnostics());
    // An invalid byte is read as U+FFFD, as the app does: a warning, and the rest
    // of the rules still run.
    let mut bytes = bytes[3..].to_vec();
    let at = bytes.iter().position(|b| *b == b'H').unwrap();
    bytes[at] = 0xFF;
    let lossy = check_bytes(&bytes, "package.json", &Options::default());
    let found: Vec<String> = lossy.diagnostics().iter().map(describe).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("warning spirit/encoding"), "{found:?}");
    let package = lossy.package.unwrap();
    assert!(
        package
            .spirit_extension
            .display_name
            .starts_with('\u{FFFD}')
    );
}

#[test]
fn a_syntax_error_has_its_line_and_column() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/text/syntax-trailing-comma.json");
    let checked = check(&path);
    assert_eq!(checked.diagnostics().len(), 1);
    let error = &checked.diagnostics()[0];
    assert_eq!(error.code, "spirit/syntax");
    assert_eq!((error.line(), error.column()), (Some(7), Some(3)));
    let human = checked.report.render_human(false);
    assert!(
        human.contains("--> syntax-trailing-comma.json:7:3"),
        "{human}"
    );
    assert!(human.contains("7 |   }"), "{human}");
}

#[test]
fn many_problems_are_reported_in_one_pass() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/text/many-problems.json");
    let checked = check(&path);
    assert!(
        checked.report.errors() >= 15,
        "{}",
        checked.report.render_human(false)
    );
    // The bad schema's diagnostic points inside the schema.
    assert!(checked.diagnostics().iter().any(|d| d.path.as_str()
        == "/spiritExtension/contributes/tools/0/inputSchema/properties/id/type"
        && d.code == "spirit/invalid-schema"));
    // The uppercase letter of the scope is underlined, not the whole name.
    let name = checked
        .diagnostics()
        .iter()
        .find(|d| d.path.as_str() == "/name")
        .unwrap();
    assert_eq!((name.line(), name.column()), (Some(2), Some(13)));
}
