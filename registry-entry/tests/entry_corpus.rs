//! The `entry.json` corpus: each `corpus/entries/*.json` gives exactly the diagnostics
//! in its sibling `.expected` file, one per line (`error registry/missing-key
//! /packageName 3:5`; an empty file for a clean entry), and the human rendering of each
//! quotes the right line.
//!
//! Set `UPDATE_EXPECTED=1` to rewrite the `.expected` files from the current output
//! (then read the diff: it is the review).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use curupira_test_support::diagnostics::describe;
use curupira_test_support::fs::files_with_extension;
use spirit_registry::{CheckedEntry, check_entry_bytes, codes};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/entries")
}

fn corpus() -> Vec<PathBuf> {
    files_with_extension(&dir(), "json")
}

fn check(path: &Path) -> CheckedEntry {
    let name = path.file_name().unwrap().to_str().unwrap();
    check_entry_bytes(&fs::read(path).unwrap(), name)
}

fn check_named(name: &str) -> CheckedEntry {
    check(&dir().join(name))
}

#[test]
fn every_file_gives_exactly_its_expected_diagnostics() {
    let files = corpus();
    assert!(files.len() >= 10);
    for path in files {
        let checked = check(&path);
        let actual: Vec<String> = checked.diagnostics().iter().map(describe).collect();
        let expected_path = path.with_extension("expected");
        if std::env::var_os("UPDATE_EXPECTED").is_some() {
            let text: String = actual.iter().map(|line| format!("{line}\n")).collect();
            fs::write(&expected_path, text).unwrap();
            continue;
        }
        let expected = fs::read_to_string(&expected_path)
            .unwrap_or_else(|_| panic!("no {}", expected_path.display()));
        let expected: Vec<&str> = expected.lines().collect();
        let human = checked.report.render_human(false);
        assert_eq!(actual, expected, "{}:\n{human}", path.display());
        assert_eq!(
            checked.entry.is_some(),
            checked.report.errors() == 0,
            "{}",
            path.display()
        );
        // Every diagnostic is located, and the rendering quotes its line.
        for diagnostic in checked.diagnostics() {
            let line = diagnostic.line().unwrap();
            assert!(human.contains(&format!("--> {}:{line}:", diagnostic.file)));
        }
    }
}

#[test]
fn the_seed_example_is_clean() {
    let checked = check_named("seed-example.json");
    assert!(checked.diagnostics().is_empty());
    let entry = checked.entry.unwrap();
    assert_eq!(entry.extension_id, "example.spirit-extension");
    assert_eq!(entry.versions[0].version, "0.1.0");
}

#[test]
fn unknown_members_are_only_warnings() {
    let checked = check_named("unknown-members.json");
    assert_eq!(checked.report.errors(), 0);
    assert_eq!(checked.report.warnings(), 4);
    assert!(checked.entry.is_some());
    let messages: Vec<&str> = checked
        .diagnostics()
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert!(
        messages.contains(&"unknown member `featuerd` in the document; did you mean `featured`?"),
        "{messages:#?}"
    );
    assert!(
        messages.contains(
            &"unknown member `reviewStatsu` in `versions[0]`; did you mean `reviewStatus`?"
        ),
        "{messages:#?}"
    );
}

#[test]
fn a_duplicate_member_is_an_error_at_the_second_one() {
    let checked = check_named("duplicate-member.json");
    let first = &checked.diagnostics()[0];
    assert_eq!(first.code, codes::DUPLICATE_KEY);
    assert_eq!(first.path.as_str(), "/status");
    assert_eq!((first.line(), first.column()), (Some(7), Some(3)));
    assert!(
        first.message.contains("first at line 5, column 3"),
        "{}",
        first.message
    );
    let second = &checked.diagnostics()[1];
    assert_eq!(second.path.as_str(), "/versions/0/channel");
    assert_eq!((second.line(), second.column()), (Some(15), Some(7)));
    assert!(checked.entry.is_none());
}

#[test]
fn a_syntax_error_has_its_line_and_column_and_nothing_else() {
    let checked = check_named("syntax-trailing-comma.json");
    assert_eq!(checked.diagnostics().len(), 1);
    let error = &checked.diagnostics()[0];
    assert_eq!(error.code, codes::SYNTAX);
    assert_eq!((error.line(), error.column()), (Some(14), Some(5)));
    let human = checked.report.render_human(false);
    assert!(
        human.contains("--> syntax-trailing-comma.json:14:5"),
        "{human}"
    );
    assert!(human.contains("14 |     }"), "{human}");
}

#[test]
fn text_that_is_not_utf8_is_one_encoding_error() {
    let checked = check_named("not-utf8.json");
    assert_eq!(checked.diagnostics().len(), 1);
    let error = &checked.diagnostics()[0];
    assert_eq!(error.code, codes::ENCODING);
    assert_eq!((error.line(), error.column()), (Some(15), Some(26)));
    assert!(
        error
            .message
            .starts_with("the file is not UTF-8: byte 0xE8"),
        "{}",
        error.message
    );
    assert!(checked.entry.is_none());
}

#[test]
fn many_problems_are_reported_in_one_pass() {
    let checked = check_named("many-problems.json");
    let human = checked.report.render_human(false);
    assert!(checked.report.errors() >= 15, "{human}");
    // Every rule's code is there at once.
    for code in [
        codes::UNSUPPORTED_SCHEMA_VERSION,
        codes::INVALID_EXTENSION_ID,
        codes::INVALID_PACKAGE_NAME,
        codes::UNKNOWN_VALUE,
        codes::INVALID_TYPE,
        codes::INVALID_VERSION,
        codes::MISSING_KEY,
        codes::EMPTY_VALUE,
        codes::DUPLICATE_VERSION,
        codes::UNKNOWN_KEY,
    ] {
        assert!(
            checked.diagnostics().iter().any(|d| d.code == code),
            "no {code}:\n{human}"
        );
    }
    // The first offending character of the id (its `E`) is underlined, not the whole id.
    let id = checked
        .diagnostics()
        .iter()
        .find(|d| d.path.as_str() == "/extensionId")
        .unwrap();
    assert_eq!((id.line(), id.column()), (Some(3), Some(19)));
    assert!(
        id.message.contains("uppercase letter `E`"),
        "{}",
        id.message
    );
    assert!(
        human.contains("3 |   \"extensionId\": \"Example.spirit--extension\","),
        "{human}"
    );
}
