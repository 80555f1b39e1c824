//! The JavaScript dialect of the JSON reader: what `JSON.parse` accepts and RFC 8259
//! refuses — lone surrogate escapes, numbers beyond `f64`, deep nesting — and the strict
//! dialect left as it was.

#![cfg(feature = "json")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::single_range_in_vec_init
)]

use curupira_diagnostics::json::{
    Deferred, Dialect, JAVASCRIPT_MAX_DEPTH, JsonDocument, Place, STRICT_MAX_DEPTH, parse,
    parse_with,
};
use curupira_diagnostics::{Anchor, Diagnostic, JsonPointer, Severity};
use serde_json::{Map, Value};

fn js(text: &str) -> JsonDocument {
    parse_with(
        text,
        "f.json",
        "t/syntax",
        "t/duplicate",
        Dialect::JavaScript,
    )
    .unwrap()
}

fn js_err(text: &str) -> Diagnostic {
    parse_with(
        text,
        "f.json",
        "t/syntax",
        "t/duplicate",
        Dialect::JavaScript,
    )
    .unwrap_err()
}

fn strict_err(text: &str) -> Diagnostic {
    parse(text, "f.json", "t/syntax", "t/duplicate").unwrap_err()
}

/// Runs `f` on a thread with Rust's default 2 MiB stack for spawned threads, whatever
/// `RUST_MIN_STACK` says.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn nested_objects(depth: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
}

// ----- lone surrogates -------------------------------------------------------------

#[test]
fn a_lone_high_surrogate_is_read_as_the_replacement_character() {
    let document = js(r#""a\ud800b""#);
    assert_eq!(document.value, "a\u{FFFD}b");
    assert_eq!(document.lone_surrogates().collect::<Vec<_>>(), [2..8]);
    // At the end of the string, too.
    assert_eq!(js(r#""\uD800""#).value, "\u{FFFD}");
    assert!(
        strict_err(r#""a\ud800b""#)
            .message
            .contains("low surrogate")
    );
}

#[test]
fn a_lone_low_surrogate_is_read_as_the_replacement_character() {
    let document = js(r#"["\udc00", "\uDFFFz"]"#);
    assert_eq!(document.value[0], "\u{FFFD}");
    assert_eq!(document.value[1], "\u{FFFD}z");
    assert_eq!(
        document.lone_surrogates().collect::<Vec<_>>(),
        [2..8, 12..18]
    );
    assert!(
        strict_err(r#""\udc00""#)
            .message
            .contains("lone UTF-16 low surrogate")
    );
}

#[test]
fn a_high_surrogate_followed_by_anything_but_a_low_one_is_lone() {
    assert_eq!(js(r#""\ud800\u0041""#).value, "\u{FFFD}A");
    assert_eq!(js(r#""\ud800\n""#).value, "\u{FFFD}\n");
    assert_eq!(js(r#""\ud800x""#).value, "\u{FFFD}x");
    // Two high surrogates: the first is lone, the second starts a pair.
    let document = js(r#""\ud800\ud83d\ude00""#);
    assert_eq!(document.value, "\u{FFFD}\u{1F600}");
    assert_eq!(document.lone_surrogates().collect::<Vec<_>>(), [1..7]);
    // A pair is still a pair.
    assert_eq!(js(r#""\ud83d\ude00""#).value, "\u{1F600}");
    assert_eq!(js(r#""\ud83d\ude00""#).lone_surrogates().count(), 0);
}

#[test]
fn a_reversed_pair_is_two_lone_surrogates() {
    let document = js(r#""\udc00\ud800""#);
    assert_eq!(document.value, "\u{FFFD}\u{FFFD}");
    assert_eq!(
        document.lone_surrogates().collect::<Vec<_>>(),
        [1..7, 7..13]
    );
}

#[test]
fn a_broken_escape_after_a_high_surrogate_is_still_an_error() {
    let error = js_err(r#""\ud800\u12x4""#);
    assert_eq!(
        error.message,
        "invalid JSON: expected four hexadecimal digits after `\\u`, found `x`"
    );
    assert_eq!(error.span, Some(11..12));
    assert!(
        js_err(r#""\ud800"#)
            .message
            .contains("the text ends inside a string")
    );
}

#[test]
fn member_names_with_lone_surrogates_are_mapped() {
    let text = r#"{"k\ud800": {"\udc00": 1}}"#;
    let document = js(text);
    let inner = JsonPointer::root().key("k\u{FFFD}").key("\u{FFFD}");
    assert_eq!(document.value["k\u{FFFD}"]["\u{FFFD}"], 1);
    let map = document.source_map();
    let spans = map.get(&inner).unwrap();
    assert_eq!(&text[spans.key.clone().unwrap()], r#""\udc00""#);
    assert_eq!(&text[spans.value.clone()], "1");
}

#[test]
fn messages_of_the_reader_show_the_escape_as_written() {
    let document = js(r#"{"\ud800": 1, "\ud800": 2}"#);
    assert_eq!(document.value["\u{FFFD}"], 2);
    let duplicate = &document.duplicates[0];
    assert!(
        duplicate
            .message
            .starts_with("member `\\ud800` appears more than once in this object"),
        "{}",
        duplicate.message
    );
    assert_eq!(duplicate.span, Some(14..22));

    let error = js_err(r#"{"a\uDC00b" 1}"#);
    assert_eq!(
        error.message,
        "invalid JSON: expected `:` after the member name `a\\uDC00b`, found `1`"
    );
    let error = js_err(r#"{"\ud800": }"#);
    assert_eq!(
        error.message,
        "invalid JSON: expected the value of the member `\\ud800`, found `}`"
    );
    let error = js_err(r#"{"\ud800": 1 ]"#);
    assert_eq!(
        error.message,
        "invalid JSON: expected `,` or `}` after the member `\\ud800`, found `]`"
    );
}

#[test]
fn validator_messages_show_the_escape_as_written() {
    let text =
        "{\n  \"name\": \"a\\ud800b\",\n  \"\\udc00\": 1,\n  \"both\": \"\\udfff\\ud800!\"\n}";
    let document = js(text);
    let name = document.value["name"].as_str().unwrap().to_owned();
    let both = document.value["both"].as_str().unwrap().to_owned();
    let mut out = Deferred::new();
    let root = Place::Root;
    out.error(
        "t/name",
        &root.key("name"),
        format!(
            "`name` is `{}`, which is not a valid name",
            name.escape_debug()
        ),
    );
    out.push(
        Severity::Warning,
        "t/unknown",
        &root.key("\u{FFFD}"),
        Anchor::Key,
        "unknown member `\u{FFFD}` in the document".to_owned(),
    );
    // Two different escapes, one U+FFFD each: replaced in order.
    out.error("t/both", &root.key("both"), format!("`both` is `{both}`"));
    let diagnostics = out.finish("f.json", text, &document);
    let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`name` is `a\\ud800b`, which is not a valid name",
            "unknown member `\\udc00` in the document",
            "`both` is `\\udfff\\ud800!`",
        ]
    );
    assert_eq!(
        (diagnostics[0].line(), diagnostics[0].column()),
        (Some(2), Some(11))
    );
    assert_eq!(
        (diagnostics[1].line(), diagnostics[1].column()),
        (Some(3), Some(3))
    );
}

#[test]
fn an_ambiguous_replacement_character_is_left_alone() {
    // The string also holds a U+FFFD of its own: which one is the escape is unknown.
    let text = "{\"name\": \"\u{FFFD}\\ud800\"}";
    let document = js(text);
    let mut out = Deferred::new();
    out.error(
        "t/name",
        &Place::Root.key("name"),
        "`name` is `\u{FFFD}\u{FFFD}`".to_owned(),
    );
    let diagnostics = out.finish("f.json", text, &document);
    assert_eq!(diagnostics[0].message, "`name` is `\u{FFFD}\u{FFFD}`");
}

// ----- numbers beyond f64 ------------------------------------------------------------

#[test]
fn numbers_beyond_f64_are_kept_as_the_largest_float_and_listed() {
    let document =
        js(r#"{"up": 1e400, "down": [-1e400], "max": 1.7976931348623157e308, "tiny": 1e-400}"#);
    assert_eq!(document.value["up"].as_f64(), Some(f64::MAX));
    assert_eq!(document.value["down"][0].as_f64(), Some(-f64::MAX));
    assert_eq!(document.value["max"].as_f64(), Some(f64::MAX));
    assert_eq!(document.value["tiny"].as_f64(), Some(0.0));
    let infinite: Vec<String> = document
        .infinite_numbers()
        .iter()
        .map(|p| p.as_str().to_owned())
        .collect();
    assert_eq!(infinite, ["/up", "/down/0"]);
    assert_eq!(js("-1e400").infinite_numbers(), [JsonPointer::root()]);
    assert_eq!(js("123456789e999999999999").value.as_f64(), Some(f64::MAX));
}

#[test]
fn an_infinite_number_replaced_by_a_later_member_is_not_listed() {
    let document = js(r#"{"a": {"b": 1e400}, "a": 2, "c": [1e999]}"#);
    let infinite: Vec<String> = document
        .infinite_numbers()
        .iter()
        .map(|p| p.as_str().to_owned())
        .collect();
    assert_eq!(infinite, ["/c/0"]);
}

#[test]
fn the_strict_dialect_still_refuses_what_javascript_accepts() {
    assert_eq!(
        strict_err("[0, 1e400]").message,
        "invalid JSON: number out of range: `1e400` is beyond the largest 64-bit float"
    );
    assert_eq!(
        strict_err("-1e400").message,
        "invalid JSON: number out of range: `-1e400` is beyond the largest 64-bit float"
    );
    assert!(parse(&nested_arrays(STRICT_MAX_DEPTH + 1), "f", "s", "d").is_err());
    assert_eq!(Dialect::default(), Dialect::Strict);
    // What neither accepts stays an error in both.
    for text in ["NaN", "Infinity", "[1,]", "'a'", "\"\\x\""] {
        assert!(js_err(text).message.starts_with("invalid JSON: "), "{text}");
    }
}

// ----- nesting -----------------------------------------------------------------------

#[test]
fn nesting_130_levels_deep_is_accepted() {
    let document = js(&nested_arrays(130));
    assert_eq!(document.source_map().len(), 130);
    let document = js(&nested_objects(130));
    let pointer = JsonPointer::parse(&"/a".repeat(130)).unwrap();
    assert_eq!(
        document.value.pointer(pointer.as_str()),
        Some(&Value::from(1))
    );
}

#[test]
fn nesting_up_to_the_limit_is_safe_on_a_small_stack() {
    on_small_stack(|| {
        for text in [
            nested_arrays(JAVASCRIPT_MAX_DEPTH),
            nested_objects(JAVASCRIPT_MAX_DEPTH),
        ] {
            let document = js(&text);
            // What callers do with the value — all recursive in serde_json — fits too.
            let copy = document.value.clone();
            assert!(copy == document.value);
            assert_eq!(serde_json::to_string(&copy).unwrap().len(), text.len());
            let read: Value = serde_json::from_value(copy).unwrap();
            drop(read);
            assert_eq!(
                document.source_map().len(),
                JAVASCRIPT_MAX_DEPTH + usize::from(text.starts_with('{'))
            );
            drop(document);
        }
    });
}

/// One diagnostic, at the first bracket beyond the limit, naming the limit.
fn assert_too_deep(text: &str, bracket: usize) {
    let error = js_err(text);
    assert_eq!(error.code, "t/syntax");
    assert_eq!(error.severity, Severity::Error);
    assert_eq!(error.path, JsonPointer::root());
    assert_eq!(
        error.message,
        format!(
            "invalid JSON: arrays and objects are nested more than {JAVASCRIPT_MAX_DEPTH} levels deep"
        )
    );
    assert_eq!(error.span, Some(bracket..bracket + 1));
    assert_eq!(error.line(), Some(1));
}

#[test]
fn one_level_beyond_the_limit_is_one_clear_diagnostic() {
    assert_too_deep(
        &nested_arrays(JAVASCRIPT_MAX_DEPTH + 1),
        JAVASCRIPT_MAX_DEPTH,
    );
}

#[test]
fn nesting_10_000_levels_deep_is_one_diagnostic_without_a_crash() {
    on_small_stack(|| {
        assert_too_deep(&nested_arrays(10_000), JAVASCRIPT_MAX_DEPTH);
        assert_too_deep(&nested_objects(10_000), JAVASCRIPT_MAX_DEPTH * 5);
    });
}

#[test]
fn nesting_100_000_levels_deep_is_one_diagnostic_without_a_crash() {
    on_small_stack(|| {
        let started = std::time::Instant::now();
        assert_too_deep(&nested_arrays(100_000), JAVASCRIPT_MAX_DEPTH);
        // Never closed, mixed, and wider than deep.
        assert_too_deep(&"[{\"a\":".repeat(100_000), JAVASCRIPT_MAX_DEPTH / 2 * 6);
        let wide = format!("[{}1]", "[1],".repeat(100_000));
        assert_eq!(js(&wide).value.as_array().unwrap().len(), 100_001);
        assert!(started.elapsed().as_secs() < 30);
    });
}

#[test]
fn a_deep_value_built_by_hand_is_not_the_readers_concern() {
    // The reader never builds a value deeper than its limit: the depth of what it
    // returns is bounded whatever the text.
    let mut value = Value::Null;
    for _ in 0..JAVASCRIPT_MAX_DEPTH {
        let mut map = Map::new();
        map.insert("a".to_owned(), value);
        value = Value::Object(map);
    }
    let text = value.to_string();
    on_small_stack(move || assert_eq!(js(&text).value, value));
}
