//! Any bytes through the `entry.json` checker (`spirit-registry`): it never panics;
//! every diagnostic is well-formed (a known `registry/…` code with its documented
//! severity, the file, a valid RFC 6901 pointer, a one-line message, a span inside the
//! kept text with its line and column, and a position on every diagnostic of a UTF-8
//! input); an entry comes out exactly when there is no error; both renderings work and
//! the JSON one reads back with the right counts; the outcome agrees with the JSON reader
//! it is built on; and an entry that comes out serializes to JSON that checks back to
//! itself.

use curupira_diagnostics::json;
use curupira_diagnostics::{JsonPointer, LineIndex};
use serde_json::Value;
use spirit_registry::{check_entry_bytes, check_entry_str, codes};

const FILE: &str = "entry.json";

/// Runs every check on one input: the bytes libFuzzer hands the target.
pub fn check(data: &[u8]) {
    let utf8 = std::str::from_utf8(data).ok();

    let checked = check_entry_bytes(data, FILE);
    let report = &checked.report;
    assert_eq!(report.files(), [FILE]);
    // The text is kept exactly when there is something to quote.
    let text = report.source(FILE).unwrap_or("");
    assert_eq!(
        report.source(FILE).is_some(),
        !report.diagnostics().is_empty()
    );
    let lines = LineIndex::new(text);
    for diagnostic in report.diagnostics() {
        let code = codes::ALL
            .iter()
            .find(|code| code.code == diagnostic.code)
            .unwrap_or_else(|| panic!("unknown code {diagnostic:?}"));
        assert_eq!(code.severity, diagnostic.severity, "{diagnostic:?}");
        assert_eq!(diagnostic.file, FILE);
        assert!(JsonPointer::parse(diagnostic.path.as_str()).is_ok());
        assert!(
            !diagnostic.message.is_empty() && !diagnostic.message.contains('\n'),
            "{diagnostic:?}"
        );
        assert_eq!(diagnostic.position.is_some(), diagnostic.span.is_some());
        if utf8.is_some() {
            assert!(diagnostic.position.is_some(), "no position: {diagnostic:?}");
        }
        if let (Some(span), Some(position)) = (&diagnostic.span, diagnostic.position) {
            assert!(
                span.start <= span.end && span.end <= text.len(),
                "{span:?} outside {} bytes: {diagnostic:?}",
                text.len()
            );
            assert!(
                text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
                "{span:?} not on character boundaries: {diagnostic:?}"
            );
            assert_eq!(lines.position(span.start), position, "{diagnostic:?}");
        }
    }
    assert_eq!(checked.entry.is_some(), report.errors() == 0);

    let rendered: Value = serde_json::from_str(&report.render_json()).expect("JSON output");
    assert_eq!(rendered["errors"].as_u64(), Some(report.errors() as u64));
    assert_eq!(
        rendered["warnings"].as_u64(),
        Some(report.warnings() as u64)
    );
    assert_eq!(
        rendered["diagnostics"].as_array().map(Vec::len),
        Some(report.diagnostics().len())
    );
    assert!(!report.render_human(false).is_empty());
    assert!(!report.render_human(true).is_empty());
    assert!(!report.summary().is_empty());

    let Some(utf8) = utf8 else {
        // Not UTF-8: exactly the one encoding error.
        assert_eq!(report.diagnostics().len(), 1);
        assert_eq!(report.diagnostics()[0].code, codes::ENCODING);
        return;
    };
    let text = utf8.strip_prefix('\u{feff}').unwrap_or(utf8);
    assert!(
        report
            .diagnostics()
            .iter()
            .all(|d| d.code != codes::ENCODING)
    );

    // The outcome agrees with the JSON reader the checker is built on.
    match json::parse(text, FILE, codes::SYNTAX, codes::DUPLICATE_KEY) {
        Err(syntax) => assert_eq!(report.diagnostics(), [syntax]),
        Ok(document) => {
            assert!(report.diagnostics().iter().all(|d| d.code != codes::SYNTAX));
            let duplicates = report
                .diagnostics()
                .iter()
                .filter(|d| d.code == codes::DUPLICATE_KEY)
                .count();
            assert_eq!(duplicates, document.duplicates.len());
            if let Some(entry) = &checked.entry {
                // What the model holds is what the document says.
                let value = &document.value;
                assert_eq!(value["extensionId"], entry.extension_id.as_str());
                assert_eq!(value["packageName"], entry.package_name.as_str());
                assert_eq!(value["defaultVersion"], entry.default_version.as_str());
                assert_eq!(
                    value["versions"].as_array().map(Vec::len),
                    Some(entry.versions.len())
                );
                assert!(!entry.versions.is_empty());
                assert!(
                    entry
                        .versions
                        .iter()
                        .any(|v| v.version == entry.default_version),
                    "a clean entry lists its default version"
                );
            }
        }
    }

    // An entry prints as JSON that checks back to the same entry, with no diagnostic.
    if let Some(entry) = &checked.entry {
        let printed = serde_json::to_string_pretty(entry).expect("an entry serializes");
        let again = check_entry_str(&printed, "printed.json");
        assert!(
            again.report.diagnostics().is_empty(),
            "{printed}\n{}",
            again.report.render_human(false)
        );
        assert_eq!(again.entry.as_ref(), Some(entry), "{printed}");
    }
}
