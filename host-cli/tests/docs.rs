//! `docs/DIAGNOSTICS.md` lists every `config/…` code, with its severity and meaning,
//! exactly as `config::codes::ALL` has them, in the same order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use curupira_diagnostics::{Code, doc_table_rows};
use curupira_host::config::codes;

#[test]
fn the_documentation_lists_every_code_in_order() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/DIAGNOSTICS.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let expected: Vec<String> = codes::ALL.iter().map(Code::doc_row).collect();
    assert_eq!(doc_table_rows(&doc, "config/"), expected);
}
