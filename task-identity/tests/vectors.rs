//! Our own RFC 8785 vectors (`tests/vectors/`, see its README).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use curupira_task_identity::{
    TaskId, canonical_pairs, canonicalize, canonicalize_json, parse_pairs,
};
use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

fn names() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(vectors().join("input"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn every_input_canonicalizes_to_its_output() {
    let names = names();
    assert!(names.len() >= 7, "vectors missing: {names:?}");
    for name in names {
        let input = fs::read_to_string(vectors().join("input").join(&name)).unwrap();
        let expected = fs::read(vectors().join("output").join(&name)).unwrap();
        let actual = canonicalize_json(&input).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&actual),
            String::from_utf8_lossy(&expected),
            "{name}"
        );
        // Canonical text is a fixed point.
        assert_eq!(
            canonicalize_json(std::str::from_utf8(&expected).unwrap()).unwrap(),
            expected,
            "{name} is not idempotent"
        );
    }
}

#[test]
fn pair_vector_streams_to_the_same_bytes() {
    let input = fs::read_to_string(vectors().join("input/pairs.json")).unwrap();
    let expected = fs::read(vectors().join("output/pairs.json")).unwrap();
    let pairs = parse_pairs(&input).unwrap();
    assert_eq!(pairs.len(), 4);
    assert_eq!(canonical_pairs(&pairs), expected);
    let digest: [u8; 32] = Sha256::digest(&expected).into();
    assert_eq!(TaskId::of_pairs(&pairs), TaskId::from_bytes(digest));
}

#[test]
fn rfc_appendix_b_number_samples() {
    let table = fs::read_to_string(vectors().join("es6-numbers.txt")).unwrap();
    let mut checked = 0;
    for line in table.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (bits, expected) = line.split_once(' ').unwrap();
        let number = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
        let value = Value::Number(Number::from_f64(number).unwrap());
        assert_eq!(
            String::from_utf8(canonicalize(&value)).unwrap(),
            expected,
            "bits {bits}"
        );
        // The expected text reads back as the same double (0 also as -0).
        assert_eq!(expected.parse::<f64>().unwrap(), number, "bits {bits}");
        checked += 1;
    }
    assert_eq!(checked, 24);
}
