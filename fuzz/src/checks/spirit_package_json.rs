//! Any bytes through the Spirit `package.json` checker (`spirit-manifest`): it never
//! panics; every diagnostic is well-formed (a known `spirit/…` code with its documented
//! severity, a valid RFC 6901 pointer, a one-line message, a span inside the kept text
//! with its line and column, and a position on every diagnostic of a UTF-8 input); the
//! text is kept exactly when there is a diagnostic to quote; a package comes out exactly
//! when there is no error; both renderings work and the JSON
//! one reads back with the right counts; the outcome agrees with the JSON reader it is
//! built on; and a package that comes out serializes to JSON that checks back to itself.
//!
//! Options: when the first byte is 0xF8–0xFF (never part of UTF-8 text), its low three
//! bits are the options (bit 0: registry-strict; bits 1–2: host none, `cli`, `desktop`,
//! none) and the rest is the text; otherwise the options are the defaults and every byte
//! is the text, so a plain `package.json` is a seed as it is.

use curupira_diagnostics::json;
use curupira_diagnostics::{JsonPointer, LineIndex};
use serde_json::Value;
use spirit_manifest::{Host, Options, check_bytes, check_str, codes};

const FILE: &str = "package.json";

/// Runs every check on one input: the bytes libFuzzer hands the target.
pub fn check(data: &[u8]) {
    let (options, bytes) = match data.split_first() {
        Some((&first, rest)) if first >= 0xF8 => (
            Options {
                registry_strict: first & 1 != 0,
                host: match (first >> 1) & 3 {
                    1 => Some(Host::Cli),
                    2 => Some(Host::Desktop),
                    _ => None,
                },
            },
            rest,
        ),
        _ => (Options::default(), data),
    };
    let utf8 = std::str::from_utf8(bytes).ok();

    let checked = check_bytes(bytes, FILE, &options);
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
    assert_eq!(checked.package.is_some(), report.errors() == 0);
    assert!(
        checked.hooks.is_none(),
        "no hooks file without the package's files"
    );

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

    if bytes.starts_with(b"\xEF\xBB\xBF") {
        // A byte-order mark, which the Spirit app refuses: that one error alone.
        assert_eq!(report.diagnostics().len(), 1);
        assert_eq!(report.diagnostics()[0].code, codes::BYTE_ORDER_MARK);
        return;
    }
    // Not UTF-8: one encoding warning first, and the text read as the app reads it,
    // each invalid byte as U+FFFD.
    let lossy = String::from_utf8_lossy(bytes);
    let encoding = report
        .diagnostics()
        .iter()
        .filter(|d| d.code == codes::ENCODING)
        .count();
    assert_eq!(encoding, usize::from(utf8.is_none()));
    if utf8.is_none() {
        assert_eq!(report.diagnostics()[0].code, codes::ENCODING);
    }
    let text: &str = &lossy;

    // The outcome agrees with the JSON reader the checker is built on, in the dialect
    // the app's `JSON.parse` reads.
    let parsed = json::parse_with(
        text,
        FILE,
        codes::SYNTAX,
        codes::DUPLICATE_KEY,
        json::Dialect::JavaScript,
    );
    // The encoding warning of a text that is not UTF-8 comes first, before anything
    // the reader says.
    let after_encoding = &report.diagnostics()[usize::from(utf8.is_none())..];
    match parsed {
        Err(syntax) => {
            assert_eq!(after_encoding, [syntax]);
        }
        Ok(document) => {
            assert!(report.diagnostics().iter().all(|d| d.code != codes::SYNTAX));
            let duplicates = report
                .diagnostics()
                .iter()
                .filter(|d| d.code == codes::DUPLICATE_KEY)
                .count();
            assert_eq!(duplicates, document.duplicates.len());
            // serde_json reads the same value where the two agree: not a lone
            // surrogate escape (U+FFFD here, an error there), not a number beyond f64
            // (`±f64::MAX` here, an error there), and not nesting beyond serde_json's
            // 127 levels.
            if document.lone_surrogates().next().is_none() && document.infinite_numbers().is_empty()
            {
                match serde_json::from_str::<Value>(text) {
                    Ok(value) => assert_eq!(value, document.value),
                    Err(error) => assert!(error.to_string().contains("recursion limit"), "{error}"),
                }
            }
            if let Some(package) = &checked.package {
                // Unknown top-level members are kept exactly as written.
                for (key, value) in &package.other {
                    assert_eq!(document.value.get(key), Some(value), "{key}");
                }
            }
        }
    }

    // A package prints as JSON that checks back to the same package. (Not registry-strict:
    // serializing leaves out empty lists such as `requestedCapabilities: []`, which that
    // mode wants written out; and not compared with the input, which may omit defaults
    // that serializing writes, e.g. `schemaVersion` and `required: false`.)
    if let Some(package) = &checked.package {
        let printed = serde_json::to_string(package).expect("a package serializes");
        let lenient = Options {
            registry_strict: false,
            ..options
        };
        let again = check_str(&printed, "printed.json", &lenient);
        assert_eq!(
            again.package.as_ref(),
            Some(package),
            "{printed}\n{}",
            again.report.render_human(false)
        );
    }
}
