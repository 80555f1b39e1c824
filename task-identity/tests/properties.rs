//! Properties of pair-list canonicalization and identity (SPEC section 6).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_task_identity::{
    Pair, TaskId, canonical_pairs, canonicalize, canonicalize_json, parse_pairs,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Strings rich in what escaping and delimiting must get right.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-c\"\\\\,:{}\\[\\] \u{0}\u{1}\u{1f}\u{7f}\u{2028}\u{e9}\u{fb01}\u{1f600}]{0,6}",
        1 => any::<String>(),
    ]
}

fn pair() -> impl Strategy<Value = Pair> {
    (text(), text()).prop_map(|(key, value)| Pair { key, value })
}

fn pairs() -> impl Strategy<Value = Vec<Pair>> {
    prop::collection::vec(pair(), 0..6)
}

/// A list close to `pairs`: text moved across a key/value or pair boundary, pairs
/// split, merged, swapped or dropped. These are the edits a weak encoding confuses.
fn nearby(pairs: Vec<Pair>) -> impl Strategy<Value = Vec<Pair>> {
    let len = pairs.len();
    (
        0..8u8,
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        text(),
    )
        .prop_map(move |(edit, i, j, extra)| {
            let mut out = pairs.clone();
            if out.is_empty() {
                out.push(Pair::new(extra.clone(), extra));
                return out;
            }
            let i = i.index(len);
            let j = j.index(len);
            match edit {
                0 => {
                    // Move the key's last char to the front of the value.
                    if let Some(c) = out[i].key.pop() {
                        out[i].value.insert(0, c);
                    }
                }
                1 => {
                    // Move the value's last char to the next pair's key.
                    if let Some(c) = out[i].value.pop()
                        && let Some(next) = out.get_mut(i + 1)
                    {
                        next.key.insert(0, c);
                    }
                }
                2 => {
                    let p = out.remove(i);
                    out.push(Pair::new(format!("{}{}", p.key, p.value), String::new()));
                }
                3 => out.swap(i, j),
                4 => {
                    out.remove(i);
                }
                5 => out.insert(i, Pair::new(extra.clone(), extra)),
                6 => out[i].value.push_str(&extra),
                _ => {
                    let p = out.remove(i);
                    out.insert(i, Pair::new(p.key, String::new()));
                    out.insert(i + 1, Pair::new(String::new(), p.value));
                }
            }
            out
        })
}

fn as_value(pairs: &[Pair]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|p| json!({ "key": p.key, "value": p.value }))
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn injective_on_independent_lists(a in pairs(), b in pairs()) {
        prop_assert_eq!(a == b, canonical_pairs(&a) == canonical_pairs(&b));
    }

    #[test]
    fn injective_on_nearby_lists((a, b) in pairs().prop_flat_map(|a| (Just(a.clone()), nearby(a)))) {
        prop_assert_eq!(a == b, canonical_pairs(&a) == canonical_pairs(&b));
        prop_assert_eq!(a == b, TaskId::of_pairs(&a) == TaskId::of_pairs(&b));
    }

    #[test]
    fn order_matters(a in pair(), b in pair(), rest in pairs()) {
        prop_assume!(a != b);
        let mut first = vec![a.clone(), b.clone()];
        first.extend(rest.iter().cloned());
        let mut second = vec![b, a];
        second.extend(rest);
        prop_assert_ne!(canonical_pairs(&first), canonical_pairs(&second));
        prop_assert_ne!(TaskId::of_pairs(&first), TaskId::of_pairs(&second));
    }

    #[test]
    fn canonical_bytes_read_back_as_the_same_pairs(list in pairs()) {
        let bytes = canonical_pairs(&list);
        let text = std::str::from_utf8(&bytes).unwrap();
        prop_assert_eq!(&serde_json::from_str::<Vec<Pair>>(text).unwrap(), &list);
        prop_assert_eq!(&parse_pairs(text).unwrap(), &list);
        // Already canonical: a fixed point of general canonicalization.
        prop_assert_eq!(canonicalize_json(text).unwrap(), bytes);
    }

    #[test]
    fn streaming_equals_general_canonicalization(list in pairs()) {
        let general = canonicalize(&as_value(&list));
        prop_assert_eq!(&canonical_pairs(&list), &general);
        let digest: [u8; 32] = Sha256::digest(&general).into();
        prop_assert_eq!(TaskId::of_pairs(&list), TaskId::from_bytes(digest));
        let borrowed: Vec<(&str, &str)> =
            list.iter().map(|p| (p.key.as_str(), p.value.as_str())).collect();
        prop_assert_eq!(TaskId::of_pairs(borrowed), TaskId::from_bytes(digest));
    }

    #[test]
    fn general_canonicalization_is_idempotent(value in json_value()) {
        let once = canonicalize(&value);
        let reparsed: Value = serde_json::from_slice(&once).unwrap();
        prop_assert_eq!(canonicalize(&reparsed), once);
    }
}

/// Arbitrary JSON values (finite numbers of every kind serde_json holds).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}
