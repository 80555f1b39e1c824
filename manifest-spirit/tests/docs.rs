//! `docs/DIAGNOSTICS.md` lists every code of this crate, with its severity and meaning,
//! exactly as `codes::ALL` has them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use curupira_diagnostics::{Code, doc_table_rows};
use spirit_manifest::codes;

#[test]
fn the_code_table_matches_the_crate() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/DIAGNOSTICS.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let expected: Vec<String> = codes::ALL.iter().map(Code::doc_row).collect();
    assert_eq!(doc_table_rows(&doc, "spirit/"), expected);
}

#[test]
fn codes_are_unique_and_namespaced() {
    let mut seen = std::collections::HashSet::new();
    for code in codes::ALL {
        assert!(code.code.starts_with("spirit/"), "{}", code.code);
        assert!(seen.insert(code.code), "{} twice", code.code);
    }
}

/// Every code names its level, and the level agrees with its severity: refused and
/// broken-at-run-time, registry and archive codes are errors, advice is a warning; a
/// run-time finding is either (a failed call, or something the app runs past).
#[test]
fn every_code_has_one_level_that_fits_its_severity() {
    use curupira_diagnostics::Severity;
    use spirit_manifest::codes::Level;
    for code in codes::ALL {
        let level = codes::level(code.code)
            .unwrap_or_else(|| panic!("{} names no level: {}", code.code, code.meaning));
        let expected = match level {
            Level::Advice => Severity::Warning,
            Level::RunTime => continue,
            _ => Severity::Error,
        };
        assert_eq!(code.severity, expected, "{}", code.code);
    }
}
