//! Arbitrary bytes → if they are JSON, canonicalize them (RFC 8785) and check that the
//! canonical form is JSON equal to the input, and a fixed point: canonicalizing it again
//! gives the same bytes. Pair lists among the inputs also go through the streaming
//! pair canonicalization and must agree with the general one.

use curupira_task_identity::{
    TaskId, canonical_pairs, canonicalize, canonicalize_json, parse_pairs,
};
use serde_json::Value;

/// Runs every check on one input: the bytes libFuzzer hands the target.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        assert!(canonicalize_json(text).is_err());
        return;
    };

    let canonical = canonicalize(&value);
    assert_eq!(
        canonicalize_json(text).ok().as_deref(),
        Some(&canonical[..])
    );
    let canonical_text = std::str::from_utf8(&canonical).expect("canonical form is UTF-8");
    let reparsed: Value = serde_json::from_str(canonical_text).expect("canonical form is JSON");
    // Numbers are compared as ECMAScript sees them (all f64); the rest exactly.
    assert!(
        same_json(&value, &reparsed),
        "{text:?} → {canonical_text:?}"
    );
    assert_eq!(
        canonicalize(&reparsed),
        canonical,
        "not idempotent: {text:?}"
    );
    assert!(
        !canonical_text.contains(|c: char| c < ' '),
        "raw control in {canonical_text:?}"
    );

    if let Ok(pairs) = parse_pairs(text) {
        assert_eq!(canonical_pairs(&pairs), canonical);
        assert_eq!(
            TaskId::of_pairs(&pairs),
            TaskId::of_pairs(parse_pairs(canonical_text).expect("pairs"))
        );
    }
}

fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}
