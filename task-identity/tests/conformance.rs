//! The upstream RFC 8785 test vectors in `../shared/conformance/jcs/` (see its
//! SOURCE.txt). A clone without that folder skips this test, and the skip shows in
//! `cargo test`'s own output and summary: `test upstream_jcs_vectors ... ignored
//! (… is missing …)`, counted among the ignored tests. (A plain `#[test]` cannot decide
//! at run time that it was skipped, so this file has its own harness,
//! `libtest-mimic`, which mimics libtest's output and arguments.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use curupira_task_identity::canonicalize_json;
use libtest_mimic::{Arguments, Completion, Trial};
use sha2::{Digest, Sha256};

fn folder() -> PathBuf {
    curupira_test_support::conformance::folder("jcs")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn main() {
    let args = Arguments::from_args();
    let trials = vec![Trial::ignorable_test("upstream_jcs_vectors", || {
        let dir = folder();
        if !dir.is_dir() {
            return Ok(Completion::ignored_with(format!(
                "skipped: {} is missing, so the upstream vectors were not checked",
                dir.display()
            )));
        }
        upstream_jcs_vectors(&dir);
        Ok(Completion::Completed)
    })];
    libtest_mimic::run(&args, trials).exit();
}

fn upstream_jcs_vectors(dir: &Path) {
    let sums: BTreeMap<String, String> = fs::read_to_string(dir.join("output-sha256.txt"))
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once("  "))
        .map(|(sum, name)| (name.to_owned(), sum.to_owned()))
        .collect();

    let mut names: Vec<String> = fs::read_dir(dir.join("input"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
    assert_eq!(sums.len(), names.len());

    for name in &names {
        let input = fs::read_to_string(dir.join("input").join(name)).unwrap();
        let expected = fs::read(dir.join("output").join(name)).unwrap();
        let actual = canonicalize_json(&input).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&actual),
            String::from_utf8_lossy(&expected),
            "{name}"
        );

        let stem = name.strip_suffix(".json").unwrap();
        let outhex = fs::read_to_string(dir.join("outhex").join(format!("{stem}.txt"))).unwrap();
        let from_hex: Vec<u8> = outhex
            .split_whitespace()
            .map(|byte| u8::from_str_radix(byte, 16).unwrap())
            .collect();
        assert_eq!(actual, from_hex, "{name} against outhex");

        assert_eq!(&hex(&Sha256::digest(&actual)), &sums[name], "{name} sha256");
    }
    println!("checked {} upstream JCS vectors", names.len());
}
