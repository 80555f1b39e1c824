//! Any UTF-8 text through the span-recording JSON reader of `curupira-diagnostics`
//! (`json::parse`, the reader under the Spirit checker), compared with serde_json:
//!
//! - it accepts exactly what serde_json accepts, and reads the same value (numbers
//!   compared exactly: integer or float, and the float's bits), the one documented
//!   difference being nesting (it accepts 128 levels, serde_json 127);
//! - a syntax error is one well-formed diagnostic (root pointer, `invalid JSON: …`, one
//!   line, a span inside the text on character boundaries, its line and column);
//! - the source map has one entry for each value in the document (root, members,
//!   elements) and nothing else; every pointer in it resolves in the value, its value
//!   span is text that serde_json reads as that same value (or, for a value 128 levels
//!   deep, refuses for its recursion limit), and its key span (members
//!   only) is a string literal that reads as the pointer's last token;
//! - each reported duplicate is located at a key literal naming its pointer's last
//!   token (the pointer need not resolve: the repetition may sit inside a member that a
//!   later one replaced).

use curupira_diagnostics::json;
use curupira_diagnostics::{JsonPointer, LineIndex};
use serde_json::Value;

/// The deepest nesting the reader accepts (serde_json stops one level earlier).
const MAX_DEPTH: usize = 128;

/// Runs every check on one input: the bytes libFuzzer hands the target.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ours = json::parse(text, "f.json", "t/syntax", "t/duplicate");
    let theirs = serde_json::from_str::<Value>(text);
    let lines = LineIndex::new(text);

    let document = match (ours, theirs) {
        (Err(syntax), Err(_)) => {
            assert_eq!(syntax.code, "t/syntax");
            assert!(syntax.path.is_root());
            assert!(
                syntax.message.starts_with("invalid JSON: ") && !syntax.message.contains('\n'),
                "{syntax:?}"
            );
            let span = syntax.span.clone().expect("a syntax error has a span");
            assert!(
                span.start <= span.end && span.end <= text.len(),
                "{syntax:?}"
            );
            assert!(
                text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
                "{syntax:?}"
            );
            assert_eq!(syntax.position, Some(lines.position(span.start)));
            return;
        }
        (Err(syntax), Ok(value)) => panic!("serde_json reads {value:?}, we refuse: {syntax:?}"),
        (Ok(document), Ok(value)) => {
            assert!(
                same(&document.value, &value),
                "{:?} != serde_json's {value:?}",
                document.value
            );
            document
        }
        (Ok(document), Err(error)) => {
            assert!(
                error.to_string().contains("recursion limit")
                    && depth(&document.value) == MAX_DEPTH,
                "we read {:?}, serde_json refuses: {error}",
                document.value
            );
            document
        }
    };
    let value = &document.value;
    assert!(depth(value) <= MAX_DEPTH);

    let map = document.source_map();
    assert_eq!(map.len(), count(value), "one entry per value");
    for (pointer, spans) in map.iter() {
        let at = value
            .pointer(pointer.as_str())
            .unwrap_or_else(|| panic!("{pointer:?} is not in the value"));
        let span = spans.value.clone();
        let slice = text
            .get(span.clone())
            .unwrap_or_else(|| panic!("value span {span:?} of {pointer:?}"));
        match serde_json::from_str::<Value>(slice) {
            Ok(read) => assert!(same(&read, at), "{pointer:?}: {slice:?} is not {at:?}"),
            // The 128th level, which serde_json refuses.
            Err(error) => assert!(
                error.to_string().contains("recursion limit") && depth(at) == MAX_DEPTH,
                "{pointer:?}: {slice:?} is not JSON: {error}"
            ),
        }
        match (&spans.key, pointer.tokens().last()) {
            (None, last) => {
                // The root, or an array element.
                let parent = pointer.parent().map(|p| value.pointer(p.as_str()));
                assert!(
                    last.is_none() || matches!(parent, Some(Some(Value::Array(_)))),
                    "{pointer:?} has no key span"
                );
            }
            (Some(key), Some(last)) => {
                let literal = text
                    .get(key.clone())
                    .unwrap_or_else(|| panic!("key span {key:?} of {pointer:?}"));
                let name: Value = serde_json::from_str(literal).expect("a key literal");
                assert_eq!(name.as_str(), Some(last.as_str()), "{pointer:?}");
                assert!(key.end <= span.start, "{pointer:?}: key after value");
                let parent = pointer.parent().and_then(|p| value.pointer(p.as_str()));
                assert!(matches!(parent, Some(Value::Object(_))), "{pointer:?}");
            }
            (Some(key), None) => panic!("the root has a key span {key:?}"),
        }
    }

    for duplicate in &document.duplicates {
        assert_eq!(duplicate.code, "t/duplicate");
        let span = duplicate.span.clone().expect("a duplicate has a span");
        let literal = text.get(span.clone()).expect("a span inside the text");
        let name: Value = serde_json::from_str(literal).expect("a key literal");
        assert_eq!(
            name.as_str().map(str::to_owned),
            duplicate.path.tokens().last(),
            "{duplicate:?}"
        );
        assert_eq!(duplicate.position, Some(lines.position(span.start)));
        assert!(JsonPointer::parse(duplicate.path.as_str()).is_ok());
    }
}

/// Equal values, numbers compared exactly (integer or float, and the float's bits).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            (
                x.as_u64(),
                x.as_i64(),
                x.is_f64(),
                x.as_f64().map(f64::to_bits),
            ) == (
                y.as_u64(),
                y.as_i64(),
                y.is_f64(),
                y.as_f64().map(f64::to_bits),
            )
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Arrays and objects inside one another (0 for a scalar).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Values in the document, the root included.
fn count(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count).sum(),
        Value::Object(members) => members.values().map(count).sum(),
        _ => 0,
    }
}
