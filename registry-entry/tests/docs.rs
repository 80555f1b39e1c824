//! `docs/DIAGNOSTICS.md` lists every code of this crate, with its severity and meaning,
//! exactly as `codes::ALL` has them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use curupira_diagnostics::{Code, doc_table_rows};
use spirit_registry::codes;

#[test]
fn the_code_table_matches_the_crate() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/DIAGNOSTICS.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let expected: Vec<String> = codes::ALL.iter().map(Code::doc_row).collect();
    assert_eq!(doc_table_rows(&doc, "registry/"), expected);
}
