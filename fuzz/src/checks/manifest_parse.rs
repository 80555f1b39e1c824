//! Any bytes through the manifest checker: it never panics, every diagnostic is
//! well-formed (valid JSON Pointer, a span inside the text with its line and column),
//! a manifest comes out exactly when there is no error, both renderings work, and a
//! manifest that comes out prints (`to_toml`) as one that checks back to itself.

use curupira_diagnostics::{JsonPointer, LineIndex};
use curupira_manifest::{check_bytes, check_str};

/// Runs every check on one input: the bytes libFuzzer hands the target.
pub fn check(data: &[u8]) {
    let checked = check_bytes(data, "fuzz.toml");
    let report = &checked.report;
    let text = report
        .source("fuzz.toml")
        .expect("the checked text is kept");
    let lines = LineIndex::new(text);
    for diagnostic in report.diagnostics() {
        assert!(JsonPointer::parse(diagnostic.path.as_str()).is_ok());
        assert!(diagnostic.code.starts_with("manifest/"));
        assert!(!diagnostic.message.is_empty() && !diagnostic.message.contains('\n'));
        assert_eq!(diagnostic.position.is_some(), diagnostic.span.is_some());
        if let (Some(span), Some(position)) = (&diagnostic.span, diagnostic.position) {
            assert!(span.start <= span.end && span.end <= text.len(), "{span:?}");
            assert_eq!(lines.position(span.start), position);
        }
    }
    assert_eq!(checked.manifest.is_some(), report.errors() == 0);
    let json: serde_json::Value = serde_json::from_str(&report.render_json()).expect("JSON output");
    assert_eq!(json["errors"].as_u64(), Some(report.errors() as u64));
    assert!(!report.render_human(true).is_empty());
    if let Some(manifest) = &checked.manifest {
        let printed = manifest.to_toml();
        let again = check_str(&printed, "printed.toml");
        assert_eq!(again.manifest.as_ref(), Some(manifest), "{printed}");
    }
}
