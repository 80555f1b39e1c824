//! The strict JSON reader: spans, syntax errors with their places, duplicates, and
//! agreement with `serde_json`.

#![cfg(feature = "json")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_diagnostics::json::{JsonDocument, parse};
use curupira_diagnostics::{Diagnostic, JsonPointer, Severity};
use proptest::prelude::*;
use serde_json::{Number, Value};

fn ok(text: &str) -> JsonDocument {
    parse(text, "f.json", "t/syntax", "t/duplicate").unwrap()
}

fn err(text: &str) -> Diagnostic {
    parse(text, "f.json", "t/syntax", "t/duplicate").unwrap_err()
}

fn pointer(text: &str) -> JsonPointer {
    JsonPointer::parse(text).unwrap()
}

#[test]
fn every_member_element_and_the_root_are_mapped() {
    let text = concat!(
        " \n{\n",
        "  \"name\": \"acme\",\n",
        "  \"a/b\": {\"c~d\": [1, true, null, {\"e\": -1.5e3}, []]},\n",
        "  \"esc\\u0061pe\\n\": \"x\\\"y\",\n",
        "  \"empty\": {},\n",
        "  \"\": \"\"\n",
        "}\n\t"
    );
    let document = ok(text);
    let map = document.source_map();
    let value = |p: &str| &text[map.get(&pointer(p)).unwrap().value.clone()];
    let key = |p: &str| {
        map.get(&pointer(p))
            .unwrap()
            .key
            .clone()
            .map(|span| &text[span])
    };

    assert!(value("").starts_with('{') && value("").ends_with('}'));
    assert_eq!(map.get(&pointer("")).unwrap().value.start, 2);
    assert_eq!(key(""), None);
    assert_eq!(
        (key("/name"), value("/name")),
        (Some("\"name\""), "\"acme\"")
    );
    assert_eq!(key("/a~1b"), Some("\"a/b\""));
    assert_eq!(
        value("/a~1b"),
        "{\"c~d\": [1, true, null, {\"e\": -1.5e3}, []]}"
    );
    assert_eq!(key("/a~1b/c~0d"), Some("\"c~d\""));
    assert_eq!(value("/a~1b/c~0d"), "[1, true, null, {\"e\": -1.5e3}, []]");
    assert_eq!(value("/a~1b/c~0d/0"), "1");
    assert_eq!(value("/a~1b/c~0d/1"), "true");
    assert_eq!(value("/a~1b/c~0d/2"), "null");
    assert_eq!(value("/a~1b/c~0d/3"), "{\"e\": -1.5e3}");
    assert_eq!(key("/a~1b/c~0d/3"), None);
    assert_eq!(
        (key("/a~1b/c~0d/3/e"), value("/a~1b/c~0d/3/e")),
        (Some("\"e\""), "-1.5e3")
    );
    assert_eq!(value("/a~1b/c~0d/4"), "[]");
    // The pointer holds the decoded name; the key span its spelling.
    assert_eq!(key("/escape\n"), Some("\"esc\\u0061pe\\n\""));
    assert_eq!(value("/escape\n"), "\"x\\\"y\"");
    assert_eq!(document.value["escape\n"], "x\"y");
    assert_eq!(value("/empty"), "{}");
    assert_eq!((key("/"), value("/")), (Some("\"\""), "\"\""));
    assert_eq!(map.len(), 13);
    assert!(document.duplicates.is_empty());
}

#[test]
fn a_scalar_root_is_mapped() {
    let map = ok("  \"x\"  ").source_map();
    assert_eq!(map.len(), 1);
    assert_eq!(map.get(&JsonPointer::root()).unwrap().value, 2..5);
}

#[test]
fn each_syntax_error_is_placed_and_explained() {
    let cases: &[(&str, u32, u32, &str)] = &[
        ("", 1, 1, "the document is empty"),
        (" \n\t", 2, 2, "the document is empty"),
        (
            "{\n  \"a\": 1,\n}",
            3,
            1,
            "expected a member name after `,`, found `}`; JSON allows no trailing comma",
        ),
        (
            "[1, 2,]",
            1,
            7,
            "expected a value after `,` in the array, found `]`; JSON allows no trailing comma",
        ),
        (
            "{\"a\": 1} x",
            1,
            10,
            "trailing characters after the document: `x`",
        ),
        ("[1]]", 1, 4, "trailing characters after the document: `]`"),
        ("1 2", 1, 3, "trailing characters after the document: `2`"),
        (
            "{\"a\": 1 \"b\": 2}",
            1,
            9,
            "expected `,` or `}` after the member `a`, found `\"`",
        ),
        (
            "{\"name\": \"x\"]",
            1,
            13,
            "expected `,` or `}` after the member `name`, found `]`",
        ),
        (
            "[1 2]",
            1,
            4,
            "expected `,` or `]` after the element at index 0, found `2`",
        ),
        (
            "[\n  1,\n  2",
            3,
            4,
            "expected `,` or `]` after the element at index 1, found the end of the text \
             (the array that starts at line 1, column 1 is never closed)",
        ),
        (
            "{\"a\":{\"b\":1",
            1,
            12,
            "expected `,` or `}` after the member `b`, found the end of the text \
             (the object that starts at line 1, column 6 is never closed)",
        ),
        (
            "{\"a\" 1}",
            1,
            6,
            "expected `:` after the member name `a`, found `1`",
        ),
        (
            "{\"a\": }",
            1,
            7,
            "expected the value of the member `a`, found `}`",
        ),
        (
            "{",
            1,
            2,
            "expected a member name or `}`, found the end of the text",
        ),
        (
            "{'a': 1}",
            1,
            2,
            "expected a member name or `}`, found `'`; member names are strings in double quotes",
        ),
        (
            "{a: 1}",
            1,
            2,
            "expected a member name or `}`, found `a`; member names are strings in double quotes",
        ),
        (
            "{\"a\":1,,}",
            1,
            8,
            "expected a member name after `,`, found `,`",
        ),
        ("[,1]", 1, 2, "expected a value or `]`, found `,`"),
        (
            "['a']",
            1,
            2,
            "expected a value or `]`, found `'`; JSON strings are written in double quotes",
        ),
        (
            "// note\n{}",
            1,
            1,
            "expected a value (an object, array, string, number, `true`, `false` or `null`), \
             found `/`; JSON has no comments",
        ),
        (
            "[1, /* x */ 2]",
            1,
            5,
            "expected a value after `,` in the array, found `/`; JSON has no comments",
        ),
        (
            "\u{feff}{}",
            1,
            1,
            "expected a value (an object, array, string, number, `true`, `false` or `null`), \
             found `\\u{feff}`",
        ),
        (
            "\u{c}1",
            1,
            1,
            "expected a value (an object, array, string, number, `true`, `false` or `null`), \
             found `\\u{c}`",
        ),
        (
            "1\u{a0}",
            1,
            2,
            "trailing characters after the document: `\\u{a0}`",
        ),
        (
            "[True]",
            1,
            2,
            "expected a value or `]`, found `True`; \
             the JSON literals are `true`, `false` and `null`, in lowercase",
        ),
        ("[tru]", 1, 2, "expected a value or `]`, found `tru`"),
        (
            "nul",
            1,
            1,
            "expected a value (an object, array, string, number, `true`, `false` or `null`), found `nul`",
        ),
        (
            "[NaN]",
            1,
            2,
            "expected a value or `]`, found `NaN`; JSON numbers cannot be infinite or NaN",
        ),
        (
            "[-Infinity]",
            1,
            3,
            "expected a digit after `-`, found `Infinity`; JSON numbers cannot be infinite or NaN",
        ),
        (
            "-",
            1,
            2,
            "expected a digit after `-`, found the end of the text",
        ),
        (
            "[+1]",
            1,
            2,
            "expected a value or `]`, found `+`; a JSON number has no `+` sign",
        ),
        (
            "[.5]",
            1,
            2,
            "expected a value or `]`, found `.`; a JSON number starts with a digit, as in `0.5`",
        ),
        (
            "01",
            1,
            2,
            "the number `01` has a leading zero, which JSON does not allow",
        ),
        (
            "[-007]",
            1,
            4,
            "the number `-007` has a leading zero, which JSON does not allow",
        ),
        (
            "1.",
            1,
            3,
            "expected a digit after the decimal point of `1.`, found the end of the text",
        ),
        (
            "[1.e5]",
            1,
            4,
            "expected a digit after the decimal point of `1.`, found `e`",
        ),
        (
            "1e",
            1,
            3,
            "expected a digit in the exponent of `1e`, found the end of the text",
        ),
        (
            "1E+x",
            1,
            4,
            "expected a digit in the exponent of `1E+`, found `x`",
        ),
        (
            "[0, 1e400]",
            1,
            5,
            "number out of range: `1e400` is beyond the largest 64-bit float",
        ),
        (
            "-1e400",
            1,
            1,
            "number out of range: `-1e400` is beyond the largest 64-bit float",
        ),
        (
            "\"abc",
            1,
            5,
            "the text ends inside a string that starts at line 1, column 1",
        ),
        (
            "{\n  \"a\": \"x\",\n  \"b\": \"unterminated\\\"}",
            3,
            24,
            "the text ends inside a string that starts at line 3, column 8",
        ),
        (
            "\"a\u{1}b\"",
            1,
            3,
            "the control character U+0001 must be escaped in a string, as `\\u0001`",
        ),
        (
            "{\"k\": \"line\nbreak\"}",
            1,
            12,
            "the control character U+000A must be escaped in a string, as `\\n`",
        ),
        (
            "\"tab\there\"",
            1,
            5,
            "the control character U+0009 must be escaped in a string, as `\\t`",
        ),
        (
            "\"\\x41\"",
            1,
            3,
            "expected one of `\"`, `\\`, `/`, `b`, `f`, `n`, `r`, `t` or `u` after `\\` in a string, \
             found `x`",
        ),
        (
            "\"\\'\"",
            1,
            3,
            "expected one of `\"`, `\\`, `/`, `b`, `f`, `n`, `r`, `t` or `u` after `\\` in a string, \
             found `'`",
        ),
        (
            "\"\\u12G4\"",
            1,
            6,
            "expected four hexadecimal digits after `\\u`, found `G`",
        ),
        (
            "\"\\uD800\"",
            1,
            2,
            "expected a low surrogate escape (`\\uDC00` to `\\uDFFF`) after the high surrogate \
             `\\uD800`, found `\"`",
        ),
        (
            "\"\\ud83d\\u0041\"",
            1,
            2,
            "expected a low surrogate escape (`\\uDC00` to `\\uDFFF`) after the high surrogate \
             `\\ud83d`, found `\\u0041`",
        ),
        (
            "\"\\uDC00\"",
            1,
            2,
            "`\\uDC00` is a lone UTF-16 low surrogate: it must follow a high surrogate escape \
             (`\\uD800` to `\\uDBFF`)",
        ),
        (
            "{\n  \"name\": \"\u{e9}\",\n  \"x\": tru\n}",
            3,
            8,
            "expected the value of the member `x`, found `tru`",
        ),
    ];
    for &(text, line, column, message) in cases {
        let diagnostic = err(text);
        assert_eq!(
            (
                diagnostic.line(),
                diagnostic.column(),
                diagnostic.message.as_str()
            ),
            (
                Some(line),
                Some(column),
                format!("invalid JSON: {message}").as_str()
            ),
            "{text:?}"
        );
        assert_eq!(diagnostic.severity, Severity::Error);
        assert_eq!(diagnostic.code, "t/syntax");
        assert_eq!(diagnostic.file, "f.json");
        assert!(diagnostic.path.is_root());
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
    }
}

#[test]
fn the_span_of_a_syntax_error_starts_at_the_offending_byte() {
    assert_eq!(err("{\n  \"a\": 1,\n}").span, Some(12..13));
    assert_eq!(err("[True]").span, Some(1..5));
    assert_eq!(err("[0, 1e400]").span, Some(4..9));
    assert_eq!(err("\"abc").span, Some(4..4));
    assert_eq!(err("\"\\uD800x\"").span, Some(1..7));
}

#[test]
fn every_escape_decodes() {
    let document = ok(r#""\" \\ \/ \b \f \n \r \t \u00e9 \u00E9 \ud83d\ude00 \u0000 \u2028""#);
    assert_eq!(
        document.value,
        "\" \\ / \u{8} \u{c} \n \r \t \u{e9} \u{e9} \u{1f600} \u{0} \u{2028}"
    );
    // Non-ASCII text and DEL pass through unescaped.
    assert_eq!(ok("\"\u{7f}é😀\"").value, "\u{7f}é😀");
}

#[test]
fn nesting_is_limited_without_overflowing_the_stack() {
    let deep = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(parse(&deep(128), "f", "s", "d").is_ok());
    // The one place where serde_json is stricter: it stops at 127 levels.
    assert!(serde_json::from_str::<Value>(&deep(127)).is_ok());
    assert!(serde_json::from_str::<Value>(&deep(128)).is_err());
    let error = err(&deep(129));
    assert_eq!(
        (error.column(), error.message.as_str()),
        (
            Some(129),
            "invalid JSON: arrays and objects are nested more than 128 levels deep"
        )
    );
    // A fuzzer's input: no closing brackets at all, arrays and objects mixed.
    assert_eq!(err(&"[".repeat(100_000)).column(), Some(129));
    assert_eq!(err(&"{\"a\":".repeat(100_000)).column(), Some(128 * 5 + 1));
    assert_eq!(err(&"[{\"a\":".repeat(100_000)).column(), Some(64 * 6 + 1));
}

#[test]
fn repeated_members_keep_the_last_value_and_are_each_reported() {
    let text = concat!(
        "{\n",
        "  \"a\": 1,\n",
        "  \"b\": {\"c\": [1], \"c\": 2},\n",
        "  \"a\": {\"x\": 1},\n",
        "  \"a\": {\"z\": 3}\n",
        "}\n"
    );
    let document = ok(text);
    assert_eq!(
        document.value,
        serde_json::json!({"a": {"z": 3}, "b": {"c": 2}})
    );
    assert_eq!(document.value, serde_json::from_str::<Value>(text).unwrap());
    let found: Vec<_> = document
        .duplicates
        .iter()
        .map(|d| {
            (
                d.path.as_str(),
                d.line().unwrap(),
                d.column().unwrap(),
                d.message.as_str(),
            )
        })
        .collect();
    let message = |name: &str, line: u32, column: u32| {
        format!(
            "member `{name}` appears more than once in this object (first at line {line}, column {column}); \
             JSON parsers disagree on which one wins, so keep exactly one"
        )
    };
    assert_eq!(
        found,
        [
            ("/b/c", 3, 19, message("c", 3, 9).as_str()),
            ("/a", 4, 3, message("a", 2, 3).as_str()),
            ("/a", 5, 3, message("a", 2, 3).as_str()),
        ]
    );
    for duplicate in &document.duplicates {
        assert_eq!(duplicate.severity, Severity::Error);
        assert_eq!(duplicate.code, "t/duplicate");
        assert_eq!(duplicate.file, "f.json");
        assert_eq!(
            &text[duplicate.span.clone().unwrap()],
            "\"a\"".replace('a', &duplicate.path.last().unwrap())
        );
    }
    // The map describes the values kept, and nothing of the discarded ones.
    let map = document.source_map();
    let pointers: Vec<_> = map.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(pointers, ["", "/a", "/a/z", "/b", "/b/c"]);
    let spans = map.get(&pointer("/a")).unwrap();
    assert_eq!(&text[spans.value.clone()], "{\"z\": 3}");
    assert_eq!(
        spans.key.clone().unwrap().start,
        text.rfind("\"a\"").unwrap()
    );
    assert_eq!(&text[map.get(&pointer("/b/c")).unwrap().value.clone()], "2");
}

#[test]
fn repetitions_inside_a_discarded_member_are_still_reported() {
    let text = r#"{"a":{"x":1,"x":2},"\u0061":3}"#;
    let document = ok(text);
    assert_eq!(document.value, serde_json::json!({"a": 3}));
    let paths: Vec<_> = document
        .duplicates
        .iter()
        .map(|d| (d.path.as_str(), d.column()))
        .collect();
    assert_eq!(paths, [("/a/x", Some(13)), ("/a", Some(20))]);
    assert!(
        document.duplicates[1]
            .message
            .starts_with("member `a` appears")
    );
    let map = document.source_map();
    let pointers: Vec<_> = map.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(pointers, ["", "/a"]);
    assert_eq!(&text[map.get(&pointer("/a")).unwrap().value.clone()], "3");
}

#[test]
fn many_repetitions_stay_linear() {
    let members: Vec<_> = (0..20_000).map(|i| format!("\"k{}\":{i}", i % 3)).collect();
    let text = format!("{{{}}}", members.join(","));
    let document = ok(&text);
    assert_eq!(document.duplicates.len(), 20_000 - 3);
    assert_eq!(document.value["k0"], 19_998);
    assert_eq!(document.source_map().len(), 4);
}

// ----- agreement with serde_json -----

/// Equal values, floats within a few units in the last place: without its
/// `float_roundtrip` feature serde_json does not always round correctly.
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => {
            if a.is_f64() != b.is_f64() {
                return false;
            }
            match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) if a.is_f64() => {
                    x == y
                        || (x - y).abs() <= 1e-15 * x.abs().max(y.abs())
                        || (x - y).abs() < 1e-300
                }
                _ => a == b,
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| close(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| close(a, b)))
        }
        _ => a == b,
    }
}

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z/~]{0,6}",
        any::<String>(),
        "[\\x00-\\x1f\"\\\\/é😀\u{2028}\u{7f}a]{0,8}",
    ]
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (0u64..1000).prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            -1.5,
            1e300,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            5e-324,
            9007199254740993.0,
            18446744073709551616.0,
        ])
        .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((arb_string(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// Every pointer in `value`.
fn pointers(value: &Value, at: &JsonPointer, out: &mut Vec<JsonPointer>) {
    out.push(at.clone());
    match value {
        Value::Array(elements) => {
            for (index, element) in elements.iter().enumerate() {
                pointers(element, &at.index(index), out);
            }
        }
        Value::Object(members) => {
            for (key, member) in members {
                pointers(member, &at.key(key), out);
            }
        }
        _ => {}
    }
}

fn check_round_trip(value: &Value, text: &str) -> Result<(), TestCaseError> {
    let document = ok(text);
    // Exactly the value serialized (floats are printed so that they read back).
    prop_assert_eq!(&document.value, value);
    prop_assert_eq!(
        serde_json::to_string(&document.value).unwrap(),
        serde_json::to_string(value).unwrap()
    );
    let theirs: Value = serde_json::from_str(text).unwrap();
    prop_assert!(close(&document.value, &theirs));
    prop_assert!(document.duplicates.is_empty());

    let map = document.source_map();
    let mut all = Vec::new();
    pointers(value, &JsonPointer::root(), &mut all);
    prop_assert_eq!(map.len(), all.len());
    for pointer in &all {
        let spans = map.get(pointer).unwrap();
        let expected = value.pointer(pointer.as_str()).unwrap();
        let slice = &text[spans.value.clone()];
        prop_assert!(close(
            &serde_json::from_str::<Value>(slice).unwrap(),
            expected
        ));
        prop_assert_eq!(&ok(slice).value, expected);
        match (&spans.key, pointer.last()) {
            (Some(key), Some(name)) => {
                prop_assert_eq!(
                    serde_json::from_str::<String>(&text[key.clone()]).unwrap(),
                    name
                );
            }
            (None, _) => {
                let parent = pointer
                    .parent()
                    .and_then(|p| value.pointer(p.as_str()).cloned());
                prop_assert!(parent.is_none_or(|p| p.is_array()));
            }
            (Some(_), None) => prop_assert!(false, "the root has a key span"),
        }
    }
    Ok(())
}

const ALPHABET: &[char] = &[
    '{', '}', '[', ']', ',', ':', '"', '"', '\\', ' ', '\n', '\t', '\r', '0', '1', '9', '-', '+',
    '.', 'e', 'E', 't', 'r', 'u', 'n', 'l', 'f', 'a', 's', '/', '\'', '\u{1}', '\u{7f}', 'é', '😀',
    '\u{feff}', 'x', 'D', '8', 'd',
];

const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"a\"",
    "\"b\"",
    "\"\\u0061\"",
    "\"\\ud83d\\ude00\"",
    "\"\\ud800\"",
    "\"\\udc00\"",
    "\"\\\"",
    "\"",
    "1",
    "-0",
    "1.5e3",
    "1e999",
    "-",
    "01",
    "1.",
    "true",
    "false",
    "null",
    "nul",
    " ",
    "\n",
    "18446744073709551616",
    "-9223372036854775809",
    "0.1e-5",
    "\"\\x\"",
    "\"\t\"",
    "/",
    "1E+2",
];

/// Whatever ours says, serde_json says the same (both ways), and ours never panics.
fn check_agreement(text: &str) -> Result<(), TestCaseError> {
    let ours = parse(text, "f.json", "t/syntax", "t/duplicate");
    let theirs = serde_json::from_str::<Value>(text);
    match (&ours, &theirs) {
        (Ok(document), Ok(value)) => {
            prop_assert!(close(&document.value, value), "{:?}", text);
            for (_, spans) in document.source_map().iter() {
                prop_assert!(text.get(spans.value.clone()).is_some());
            }
            for duplicate in &document.duplicates {
                prop_assert!(
                    duplicate
                        .span
                        .clone()
                        .is_some_and(|s| text.get(s).is_some())
                );
            }
        }
        (Err(diagnostic), Err(_)) => {
            prop_assert!(diagnostic.message.starts_with("invalid JSON: "));
            prop_assert!(
                !diagnostic.message.chars().any(char::is_control),
                "{:?}",
                diagnostic.message
            );
            let span = diagnostic.span.clone().unwrap();
            prop_assert!(span.start <= span.end && span.end <= text.len());
            prop_assert!(diagnostic.position.is_some());
        }
        _ => prop_assert!(
            false,
            "{:?}: ours {:?}, serde_json {:?}",
            text,
            ours.map(|d| d.value),
            theirs
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn serialized_values_read_back_with_every_span(value in arb_value()) {
        check_round_trip(&value, &serde_json::to_string(&value).unwrap())?;
        check_round_trip(&value, &serde_json::to_string_pretty(&value).unwrap())?;
    }

    #[test]
    fn arbitrary_text_is_judged_like_serde_json(
        chars in prop::collection::vec(prop::sample::select(ALPHABET), 0..24),
    ) {
        check_agreement(&String::from_iter(chars))?;
    }

    #[test]
    fn token_soup_is_judged_like_serde_json(
        tokens in prop::collection::vec(prop::sample::select(TOKENS), 0..12),
    ) {
        check_agreement(&tokens.concat())?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..48)) {
        check_agreement(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn mutated_documents_are_judged_like_serde_json(
        value in arb_value(),
        pretty in any::<bool>(),
        edits in prop::collection::vec(
            (any::<prop::sample::Index>(), 0u8..3, prop::sample::select(ALPHABET)),
            1..4,
        ),
    ) {
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        let mut chars: Vec<char> = text.chars().collect();
        for (index, kind, c) in edits {
            let at = index.index(chars.len() + 1);
            match kind {
                0 => chars.insert(at, c),
                1 if at < chars.len() => { chars.remove(at); }
                _ if at < chars.len() => chars[at] = c,
                _ => chars.push(c),
            }
        }
        check_agreement(&String::from_iter(chars))?;
    }
}
