//! RFC 8785 (JSON Canonicalization Scheme) serialization of `serde_json::Value`.

use std::cmp::Ordering;
use std::io;

use serde_json::{Number, Value};
use thiserror::Error;

use crate::sink::{IoSink, Sink};

/// Writes the canonical form of `value` to `out`.
///
/// The only possible error is one `out` returns; writing stops at the first.
pub fn write_canonical<W: io::Write + ?Sized>(value: &Value, out: &mut W) -> io::Result<()> {
    let mut sink = IoSink::new(out);
    write_value(value, &mut sink);
    sink.finish()
}

/// The canonical form of `value`, as UTF-8 bytes.
pub fn canonicalize(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write_value(value, &mut out);
    out
}

/// The canonical form of `value`, as a `String`.
pub fn canonicalize_to_string(value: &Value) -> String {
    // The writers emit only whole UTF-8 sequences (escapes cut runs at ASCII bytes),
    // so the conversion cannot fail; were it to, it would degrade to U+FFFD, not panic.
    String::from_utf8(canonicalize(value))
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

/// Parses JSON text and returns its canonical form.
///
/// The text is read by `serde_json`: numbers become `f64` as ECMAScript reads them
/// (correctly rounded), and when an object repeats a member name the **last** one is
/// kept (RFC 8785 expects I-JSON input, which has no duplicates; this function does
/// not refuse them).
pub fn canonicalize_json(text: &str) -> Result<Vec<u8>, JsonError> {
    let value: Value = serde_json::from_str(text).map_err(JsonError::from_serde)?;
    Ok(canonicalize(&value))
}

/// JSON text that `serde_json` could not read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("the input is not valid JSON: {message} at line {line}, column {column}")]
pub struct JsonError {
    /// What is wrong, e.g. `expected value` or `trailing characters`.
    pub message: String,
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based column of the problem (0 when the input is empty).
    pub column: usize,
}

impl JsonError {
    /// Splits serde_json's "MESSAGE at line L column C" into its parts.
    pub(crate) fn from_serde(err: serde_json::Error) -> Self {
        let (line, column) = (err.line(), err.column());
        let full = err.to_string();
        let suffix = format!(" at line {line} column {column}");
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
        JsonError {
            message,
            line,
            column,
        }
    }
}

pub(crate) fn write_value<S: Sink>(value: &Value, out: &mut S) {
    match value {
        Value::Null => out.put(b"null"),
        Value::Bool(true) => out.put(b"true"),
        Value::Bool(false) => out.put(b"false"),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.put(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                write_value(item, out);
            }
            out.put(b"]");
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by(|a, b| cmp_utf16(a.0, b.0));
            out.put(b"{");
            for (i, (name, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                write_string(name, out);
                out.put(b":");
                write_value(member, out);
            }
            out.put(b"}");
        }
    }
}

/// ECMAScript `Number.prototype.toString` of the number's `f64` value (RFC 8785 §3.2.2.3).
///
/// Integers are converted to `f64` first, as ECMAScript does: `9007199254740993`
/// becomes `9007199254740992`. Without serde_json's `arbitrary_precision` every
/// `Number` has an `f64` value; with it, a number outside the `f64` range has none and
/// is written `null`, as `JSON.stringify` writes `Infinity`.
fn write_number<S: Sink>(n: &Number, out: &mut S) {
    match n.as_f64() {
        Some(f) if f.is_finite() => out.put(ryu_js::Buffer::new().format_finite(f).as_bytes()),
        _ => out.put(b"null"),
    }
}

/// Compares two strings by their UTF-16 code units (RFC 8785 §3.2.3).
///
/// UTF-8 byte order equals code point order, which differs from UTF-16 order only when
/// a supplementary character (surrogates D800–DFFF) meets one in U+E000–U+FFFF. So the
/// strings are compared at their first differing character only.
pub(crate) fn cmp_utf16(a: &str, b: &str) -> Ordering {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // The shared prefix is the same bytes in both, so a char boundary in `a` at or
    // before `common` is one in `b` too.
    let mut start = common;
    while !a.is_char_boundary(start) {
        start -= 1;
    }
    let next_a = a.get(start..).and_then(|rest| rest.chars().next());
    let next_b = b.get(start..).and_then(|rest| rest.chars().next());
    match (next_a, next_b) {
        (Some(x), Some(y)) => {
            let (mut ua, mut ub) = ([0u16; 2], [0u16; 2]);
            (*x.encode_utf16(&mut ua)).cmp(&*y.encode_utf16(&mut ub))
        }
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
    }
}

/// Whether the RFC 8785 string serialization escapes this byte: `"`, `\` and the
/// controls below U+0020. Bytes of multi-byte UTF-8 sequences are all ≥ 0x80, so they
/// are never escaped (U+007F, U+2028, U+2029 and non-BMP characters stay raw).
#[inline]
const fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Bytes scanned per step in long strings: without an early exit inside a block, the
/// compiler turns the check into SIMD compares. A tail of 32 bytes or more gets one
/// half-size block, so short values do not fall back to words.
const SCAN_BLOCK: usize = 64;

/// Whether any byte of a block needs escaping (branch-free, vectorizable).
#[inline(always)]
fn block_needs_escape<const N: usize>(block: &[u8; N]) -> bool {
    block
        .iter()
        .fold(0u8, |any, &b| any | u8::from(needs_escape(b)))
        != 0
}

/// The bytes of `word` (little-endian) that need escaping, as their high bits, by
/// word-wide arithmetic: the "has a byte less than n" and "has a zero byte" tricks.
/// A borrow can flag a byte above a true match, never below one, so the lowest set
/// bit always marks the first byte that needs escaping, and the mask is 0 exactly
/// when no byte does.
#[inline(always)]
const fn escape_mask(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * b'"' as u64);
    let backslash = word ^ (ONES * b'\\' as u64);
    let has_quote = quote.wrapping_sub(ONES) & !quote;
    let has_backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | has_quote | has_backslash) & HIGH
}

/// Index of the first byte of `part` (which starts at `offset`) that needs escaping:
/// 8-byte words, then the last few bytes one by one.
#[inline(always)]
fn first_in_words(part: &[u8], mut offset: usize) -> Option<usize> {
    let mut words = part.chunks_exact(8);
    for word in &mut words {
        let mut le = [0u8; 8];
        le.copy_from_slice(word);
        let mask = escape_mask(u64::from_le_bytes(le));
        if mask != 0 {
            return Some(offset + (mask.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| needs_escape(b))
        .map(|i| offset + i)
}

/// Index of the first byte at or after `from` that needs escaping: whole blocks are
/// checked with SIMD compares, the block with a hit and the tail word by word.
#[inline(always)]
fn find_escape(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let mut offset = from;
    let mut blocks = rest.chunks_exact(SCAN_BLOCK);
    for block in &mut blocks {
        if let Ok(array) = <&[u8; SCAN_BLOCK]>::try_from(block)
            && block_needs_escape(array)
        {
            return first_in_words(block, offset);
        }
        offset += SCAN_BLOCK;
    }
    let tail = blocks.remainder();
    if let Some((half, rest)) = tail.split_first_chunk::<{ SCAN_BLOCK / 2 }>() {
        if block_needs_escape(half) {
            return first_in_words(half, offset);
        }
        return first_in_words(rest, offset + SCAN_BLOCK / 2);
    }
    first_in_words(tail, offset)
}

/// Writes `s` as a quoted JSON string, escaped as RFC 8785 §3.2.2.2 says.
pub(crate) fn write_string<S: Sink>(s: &str, out: &mut S) {
    out.put(b"\"");
    write_string_contents(s, out);
    out.put(b"\"");
}

/// Writes the escaped contents of a JSON string, without the quotes. Runs of bytes
/// that need no escape go to `out` in one piece.
pub(crate) fn write_string_contents<S: Sink>(s: &str, out: &mut S) {
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some(at) = find_escape(bytes, start) {
        if at > start
            && let Some(run) = bytes.get(start..at)
        {
            out.put(run);
        }
        let byte = bytes.get(at).copied().unwrap_or_default();
        match byte {
            b'"' => out.put(b"\\\""),
            b'\\' => out.put(b"\\\\"),
            0x08 => out.put(b"\\b"),
            b'\t' => out.put(b"\\t"),
            b'\n' => out.put(b"\\n"),
            0x0c => out.put(b"\\f"),
            b'\r' => out.put(b"\\r"),
            control => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.put(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(control >> 4)],
                    HEX[usize::from(control & 0x0f)],
                ]);
            }
        }
        start = at + 1;
    }
    if let Some(run) = bytes.get(start..)
        && !run.is_empty()
    {
        out.put(run);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn string(s: &str) -> String {
        canonicalize_to_string(&Value::String(s.to_owned()))
    }

    #[test]
    fn short_escapes() {
        assert_eq!(string("\u{8}\t\n\u{c}\r"), r#""\b\t\n\f\r""#);
        assert_eq!(string(r#"say "hi""#), r#""say \"hi\"""#);
        assert_eq!(string(r"a\b"), r#""a\\b""#);
        assert_eq!(string("/"), r#""/""#);
    }

    #[test]
    fn other_controls_are_lowercase_u_escapes() {
        assert_eq!(string("\u{0}"), r#""\u0000""#);
        assert_eq!(string("\u{1}\u{f}\u{1f}"), r#""\u0001\u000f\u001f""#);
        assert_eq!(string("\u{b}"), r#""\u000b""#);
        for byte in 0u8..0x20 {
            let out = string(&char::from(byte).to_string());
            assert!(out.starts_with("\"\\"), "{byte:#x} → {out}");
            assert!(!out.bytes().any(|b| b < 0x20), "{byte:#x} → {out}");
        }
    }

    #[test]
    fn everything_else_is_raw_utf8() {
        for s in [
            "\u{7f}",
            "\u{80}",
            "\u{2028}\u{2029}",
            "é€",
            "😀",
            "\u{10ffff}",
            " ",
        ] {
            assert_eq!(string(s), format!("\"{s}\""));
        }
    }

    #[test]
    fn escapes_are_found_at_every_position_of_every_length() {
        for len in 1..=140 {
            for at in 0..len {
                let mut s = "x".repeat(len);
                s.replace_range(at..=at, "\"");
                let out = string(&s);
                assert_eq!(out.len(), len + 3, "quote at {at} of {len}");
                assert_eq!(out.find("\\\""), Some(at + 1), "quote at {at} of {len}");
            }
        }
    }

    #[test]
    fn word_mask_finds_the_first_byte_to_escape() {
        let first = |word: [u8; 8]| {
            let mask = escape_mask(u64::from_le_bytes(word));
            (mask != 0).then(|| mask.trailing_zeros() as usize / 8)
        };
        let expected = |word: [u8; 8]| word.iter().position(|&b| needs_escape(b));
        for byte in 0..=u8::MAX {
            for position in 0..8 {
                let mut word = [b'a'; 8];
                word[position] = byte;
                assert_eq!(first(word), expected(word), "{byte:#x} at {position}");
                // Neighbours that need no escape but sit next to the borrow boundary.
                let mut word = [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x80, 0xff, 0x7f];
                word[position] = byte;
                assert_eq!(
                    first(word),
                    expected(word),
                    "{byte:#x} at {position}, neighbours"
                );
                // Several matches: the lowest one is reported, whatever follows it.
                let mut word = [0x00, 0x22, 0x01, 0x5c, 0x1f, 0x20, 0x00, 0x22];
                word[position] = byte;
                assert_eq!(
                    first(word),
                    expected(word),
                    "{byte:#x} at {position}, matches"
                );
            }
        }
    }

    #[test]
    fn members_sort_by_utf16_code_units() {
        // U+1F600 is D83D DE00 in UTF-16: before U+FB01 there, after it by code point.
        let value = json!({ "\u{fb01}": 1, "\u{1f600}": 2, "z": 3, "": 4 });
        assert_eq!(
            canonicalize_to_string(&value),
            "{\"\":4,\"z\":3,\"\u{1f600}\":2,\"\u{fb01}\":1}"
        );
    }

    #[test]
    fn prefix_sorts_first_and_nested_objects_sort_too() {
        let value = json!({ "ab": {"b": 1, "a": 2}, "a": [ {"y": 1, "x": 2} ] });
        assert_eq!(
            canonicalize_to_string(&value),
            r#"{"a":[{"x":2,"y":1}],"ab":{"a":2,"b":1}}"#
        );
    }

    #[test]
    fn numbers_follow_ecmascript() {
        let cases = [
            (json!(0), "0"),
            (json!(-0.0), "0"),
            (json!(1.0), "1"),
            (json!(56.0), "56"),
            (json!(4.5), "4.5"),
            (json!(0.002), "0.002"),
            (json!(1e-7), "1e-7"),
            (json!(1e21), "1e+21"),
            (json!(1e20), "100000000000000000000"),
            (json!(u64::MAX), "18446744073709552000"),
            (json!(i64::MIN), "-9223372036854776000"),
            (json!(9_007_199_254_740_993_u64), "9007199254740992"),
            (json!(f64::MAX), "1.7976931348623157e+308"),
            (json!(5e-324), "5e-324"),
        ];
        for (value, expected) in cases {
            assert_eq!(canonicalize_to_string(&value), expected, "{value}");
        }
    }

    #[test]
    fn json_text_errors_carry_position() {
        let err = canonicalize_json("[1,\n  x]").unwrap_err();
        assert_eq!((err.line, err.column), (2, 3));
        assert_eq!(err.message, "expected value");
        assert_eq!(
            err.to_string(),
            "the input is not valid JSON: expected value at line 2, column 3"
        );
    }

    #[test]
    fn duplicate_members_keep_the_last() {
        assert_eq!(
            canonicalize_json(r#"{"a":1,"b":2,"a":3}"#).unwrap(),
            br#"{"a":3,"b":2}"#
        );
    }

    #[test]
    fn string_and_bytes_agree() {
        let value = json!({"k": ["\u{0}", 1.5, null, true, "é\u{1f600}"]});
        assert_eq!(
            canonicalize_to_string(&value).into_bytes(),
            canonicalize(&value)
        );
        let mut written = Vec::new();
        write_canonical(&value, &mut written).unwrap();
        assert_eq!(written, canonicalize(&value));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn cmp_utf16_equals_comparing_encode_utf16(a in "\\PC{0,6}", b in "\\PC{0,6}") {
            prop_assert_eq!(cmp_utf16(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        }

        #[test]
        fn cmp_utf16_on_shared_prefixes(
            prefix in "[a\u{e9}\u{fb01}\u{1f600}]{0,3}",
            a in "[a\u{e9}\u{fb01}\u{1f600}\u{1f601}\u{ffff}]{0,3}",
            b in "[a\u{e9}\u{fb01}\u{1f600}\u{1f601}\u{ffff}]{0,3}",
        ) {
            let (a, b) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
            prop_assert_eq!(cmp_utf16(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        }

        #[test]
        fn any_string_round_trips(s in any::<String>()) {
            let out = string(&s);
            prop_assert_eq!(serde_json::from_str::<String>(&out).unwrap(), s);
        }
    }
}
