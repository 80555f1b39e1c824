//! `package.json` read as the Spirit app reads it, with JavaScript's `JSON.parse`: lone
//! surrogate escapes, numbers beyond `f64` and deep nesting are accepted where the app
//! accepts them, and still judged where the app judges them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use spirit_manifest::curupira_diagnostics::Severity;
use spirit_manifest::curupira_diagnostics::json::JAVASCRIPT_MAX_DEPTH;
use spirit_manifest::{Checked, Options, check_str, codes};

/// A small valid package; `{extra}` is replaced by more top-level members, `{setting}`
/// by the members of a `number` setting after its `key`, `type` and `title`.
const TEMPLATE: &str = r#"{
  "name": "hello",
  "version": "1.0.0",
  "description": "Says hello.",
  {extra}
  "spiritExtension": {
    "schemaVersion": 1,
    "displayName": "Hello",
    "supportedHosts": ["cli"],
    "requestedCapabilities": [],
    "settingsSchema": [
      { "key": "limit", "type": "number", "title": "Limit"{setting} }
    ]
  }
}
"#;

fn package(extra: &str, setting: &str) -> String {
    TEMPLATE
        .replace("{extra}", extra)
        .replace("{setting}", setting)
}

fn check(text: &str) -> Checked {
    check_str(text, "package.json", &Options::default())
}

fn errors(checked: &Checked) -> Vec<(String, String, String)> {
    checked
        .diagnostics()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            (
                d.code.to_string(),
                d.path.as_str().to_owned(),
                d.message.clone(),
            )
        })
        .collect()
}

fn assert_installs(text: &str) -> Checked {
    let checked = check(text);
    assert_eq!(errors(&checked), [], "{text}");
    assert!(checked.package.is_some(), "{text}");
    checked
}

#[test]
fn the_template_is_a_valid_package() {
    assert_installs(&package("", ""));
    assert_installs(&package("", r#", "defaultValue": 5"#));
    assert_installs(&package("", r#", "defaultValue": 1e300"#));
}

#[test]
fn a_lone_surrogate_in_the_description_is_accepted() {
    for description in [r"\ud800", r"a\udc00b", r"\udc00\ud800", r"\ud800\u0041"] {
        let text = package("", "").replace("Says hello.", description);
        let checked = assert_installs(&text);
        let package = checked.package.unwrap();
        assert!(
            package.description.unwrap().contains('\u{FFFD}'),
            "{description}"
        );
    }
}

#[test]
fn a_lone_surrogate_in_a_checked_member_is_shown_as_written() {
    // The name breaks the npm name rules with the lone surrogate as with U+FFFD: the
    // message shows the escape the file has.
    let text = package("", "").replace(r#""name": "hello""#, r#""name": "hel\ud800lo""#);
    let checked = check(&text);
    let name_errors: Vec<_> = errors(&checked)
        .into_iter()
        .filter(|(_, path, _)| path == "/name")
        .collect();
    assert!(!name_errors.is_empty(), "{:?}", checked.diagnostics());
    for (_, _, message) in &name_errors {
        assert!(!message.contains('\u{FFFD}'), "{message}");
    }
    assert!(
        name_errors
            .iter()
            .any(|(_, _, message)| message.contains(r"hel\ud800lo")),
        "{name_errors:?}"
    );
}

#[test]
fn a_number_beyond_f64_in_an_ignored_member_is_accepted() {
    assert_installs(&package(r#""x": 1e400,"#, ""));
    assert_installs(&package(r#""x": [-1e400, {"y": 1e999}],"#, ""));
    assert_installs(&package(r#""keywords": ["a", 1e400],"#, ""));
}

#[test]
fn an_infinite_default_value_is_refused_as_non_finite() {
    for (literal, infinity) in [("1e400", "`Infinity`"), ("-1e400", "`-Infinity`")] {
        let text = package("", &format!(r#", "defaultValue": {literal}"#));
        let checked = check(&text);
        let errors = errors(&checked);
        assert_eq!(errors.len(), 1, "{errors:?}");
        let (code, path, message) = &errors[0];
        assert_eq!(code, codes::INVALID_DEFAULT);
        assert_eq!(path, "/spiritExtension/settingsSchema/0/defaultValue");
        assert!(message.contains(infinity), "{message}");
        assert!(message.contains("finite number"), "{message}");
        assert!(checked.package.is_none());
        let diagnostic = checked
            .diagnostics()
            .iter()
            .find(|d| d.severity == Severity::Error)
            .unwrap();
        assert_eq!(diagnostic.line(), Some(12));
    }
    // The largest finite float is a finite number, as for the app.
    assert_installs(&package("", r#", "defaultValue": 1.7976931348623157e308"#));
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn nesting_130_deep_in_an_ignored_member_is_accepted() {
    assert_installs(&package(&format!(r#""extra": {},"#, nested(130)), ""));
    let objects = format!("{}1{}", "{\"a\":".repeat(130), "}".repeat(130));
    assert_installs(&package(&format!(r#""extra": {objects},"#), ""));
}

#[test]
fn nesting_at_the_limit_is_checked_on_a_small_stack() {
    // The package is read, checked and turned into the model on a thread with Rust's
    // default 2 MiB stack for spawned threads.
    let limit = JAVASCRIPT_MAX_DEPTH - 2;
    let objects = format!("{}1{}", "{\"a\":".repeat(limit), "}".repeat(limit));
    let text = package(&format!(r#""extra": {objects},"#), "");
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            assert_installs(&text);
            let deeper = format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
            let checked = check(&package(&format!(r#""extra": {deeper},"#), ""));
            let errors = errors(&checked);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(errors[0].0, codes::SYNTAX);
            assert!(
                errors[0].2.contains(&format!(
                    "nested more than {JAVASCRIPT_MAX_DEPTH} levels deep"
                )),
                "{errors:?}"
            );
        })
        .unwrap()
        .join()
        .unwrap();
}
