//! Pair lists: the type, their canonical bytes (streamed, no `Value` tree), and a strict
//! reader for pair lists written as JSON text.

use std::fmt;
use std::io;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::jcs::{JsonError, write_string_contents};
use crate::sink::{IoSink, Sink};

/// One field of a work item: a string key and a string value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pair {
    /// The field's name, e.g. `issue_number`.
    pub key: String,
    /// The field's value; always a string.
    pub value: String,
}

impl Pair {
    /// A pair from anything string-like.
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Self {
        Pair {
            key: key.into(),
            value: value.into(),
        }
    }
}

impl<K: Into<String>, V: Into<String>> From<(K, V)> for Pair {
    fn from((key, value): (K, V)) -> Self {
        Pair::new(key, value)
    }
}

/// Anything that can be read as a pair without copying it: [`Pair`], `(K, V)` tuples of
/// string-likes such as `(&str, &str)` or `(String, String)`, and references to them.
pub trait AsPair {
    /// The pair's key.
    fn key(&self) -> &str;
    /// The pair's value.
    fn value(&self) -> &str;
}

impl AsPair for Pair {
    fn key(&self) -> &str {
        &self.key
    }
    fn value(&self) -> &str {
        &self.value
    }
}

impl<K: AsRef<str>, V: AsRef<str>> AsPair for (K, V) {
    fn key(&self) -> &str {
        self.0.as_ref()
    }
    fn value(&self) -> &str {
        self.1.as_ref()
    }
}

impl<T: AsPair + ?Sized> AsPair for &T {
    fn key(&self) -> &str {
        (**self).key()
    }
    fn value(&self) -> &str {
        (**self).value()
    }
}

/// Streams the canonical bytes of a pair list: `[{"key":k,"value":v},…]` in the given
/// order. JCS sorts members and `"key"` < `"value"`, so each object is fixed-shape and
/// only the strings need escaping.
pub(crate) fn write_pairs<I, S>(pairs: I, out: &mut S)
where
    I: IntoIterator,
    I::Item: AsPair,
    S: Sink,
{
    // Each structural piece carries the quotes around it, so a pair is three fixed
    // pieces plus the escaped contents of its two strings.
    out.put(b"[");
    for (i, pair) in pairs.into_iter().enumerate() {
        out.put(if i == 0 {
            b"{\"key\":\""
        } else {
            b",{\"key\":\""
        });
        write_string_contents(pair.key(), out);
        out.put(b"\",\"value\":\"");
        write_string_contents(pair.value(), out);
        out.put(b"\"}");
    }
    out.put(b"]");
}

/// The canonical JSON bytes of a pair list (SPEC section 6): exactly what
/// [`canonicalize`](crate::canonicalize) gives for the equivalent array of
/// `{"key": k, "value": v}` objects, computed without building that array.
pub fn canonical_pairs<I>(pairs: I) -> Vec<u8>
where
    I: IntoIterator,
    I::Item: AsPair,
{
    let mut out = Vec::new();
    write_pairs(pairs, &mut out);
    out
}

/// Writes the canonical JSON bytes of a pair list to `out`.
pub fn write_canonical_pairs<I, W>(pairs: I, out: &mut W) -> io::Result<()>
where
    I: IntoIterator,
    I::Item: AsPair,
    W: io::Write + ?Sized,
{
    let mut sink = IoSink::new(out);
    write_pairs(pairs, &mut sink);
    sink.finish()
}

/// A pair list in JSON text that is not a pair list: what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{kind} (line {line}, column {column})")]
pub struct PairsError {
    /// What is wrong.
    pub kind: PairsErrorKind,
    /// 1-based line where reading stopped.
    pub line: usize,
    /// 1-based column where reading stopped (0 when the input is empty).
    pub column: usize,
}

/// What is wrong with a pair list. Element indexes count from 0, as in a JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PairsErrorKind {
    /// The text is not JSON at all.
    #[error("the input is not valid JSON: {message}")]
    NotJson {
        /// serde_json's description, e.g. `expected value`.
        message: String,
    },
    /// The top-level value is not an array.
    #[error("the input is {found}, expected an array of {{\"key\": …, \"value\": …}} objects")]
    NotArray {
        /// What was found, e.g. `an object`.
        found: &'static str,
    },
    /// An element is not an object.
    #[error(
        "element {index} is {found}, expected an object with string members \"key\" and \"value\""
    )]
    NotObject {
        /// The element's index.
        index: usize,
        /// What was found.
        found: &'static str,
    },
    /// An element has a member other than `key` and `value`.
    #[error(
        "element {index} has an unexpected member {member:?}; only \"key\" and \"value\" are allowed"
    )]
    UnknownMember {
        /// The element's index.
        index: usize,
        /// The unexpected member's name.
        member: String,
    },
    /// An element has `key` or `value` twice.
    #[error("element {index} has the member \"{member}\" twice")]
    DuplicateMember {
        /// The element's index.
        index: usize,
        /// `key` or `value`.
        member: &'static str,
    },
    /// An element lacks `key` or `value`.
    #[error("element {index} has no \"{member}\" member")]
    MissingMember {
        /// The element's index.
        index: usize,
        /// `key` or `value`.
        member: &'static str,
    },
    /// An element's `key` or `value` is not a string.
    #[error("element {index} has a \"{member}\" that is {found}; keys and values are strings")]
    NotString {
        /// The element's index.
        index: usize,
        /// `key` or `value`.
        member: &'static str,
        /// What was found, e.g. `a number`.
        found: &'static str,
    },
}

/// Reads a pair list from JSON text: an array whose elements are objects with exactly
/// the string members `key` and `value`. Anything else is refused with the first
/// problem found and its position. Keys are not checked further (empty or repeated keys
/// are accepted here: the identity is defined for any list).
pub fn parse_pairs(text: &str) -> Result<Vec<Pair>, PairsError> {
    let mut problem = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let read = ListSeed {
        problem: &mut problem,
    }
    .deserialize(&mut de)
    .and_then(|pairs| de.end().map(|()| pairs));
    read.map_err(|err| {
        let (line, column) = (err.line(), err.column());
        let kind = problem.unwrap_or_else(|| PairsErrorKind::NotJson {
            message: JsonError::from_serde(err).message,
        });
        PairsError { kind, line, column }
    })
}

/// Records `kind` for [`parse_pairs`] and stops serde_json, which adds the position.
fn fail<T, E: de::Error>(
    problem: &mut Option<PairsErrorKind>,
    kind: PairsErrorKind,
) -> Result<T, E> {
    let message = kind.to_string();
    *problem = Some(kind);
    Err(E::custom(message))
}

/// Describes a JSON value met where another kind was expected.
fn found(unexpected: de::Unexpected<'_>) -> &'static str {
    match unexpected {
        de::Unexpected::Bool(_) => "a boolean",
        de::Unexpected::Unsigned(_) | de::Unexpected::Signed(_) | de::Unexpected::Float(_) => {
            "a number"
        }
        de::Unexpected::Str(_) => "a string",
        de::Unexpected::Unit | de::Unexpected::Option => "null",
        de::Unexpected::Seq => "an array",
        de::Unexpected::Map => "an object",
        _ => "not a JSON value",
    }
}

/// Visitor methods for every JSON kind, each reporting "found X" through `$on_other`.
macro_rules! refuse_other_kinds {
    ($on_other:ident) => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            self.$on_other(de::Unexpected::Bool(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            self.$on_other(de::Unexpected::Unsigned(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            self.$on_other(de::Unexpected::Signed(v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            self.$on_other(de::Unexpected::Float(v))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            self.$on_other(de::Unexpected::Unit)
        }
    };
}

/// The whole list.
struct ListSeed<'p> {
    problem: &'p mut Option<PairsErrorKind>,
}

impl ListSeed<'_> {
    fn other<T, E: de::Error>(self, unexpected: de::Unexpected<'_>) -> Result<T, E> {
        fail(
            self.problem,
            PairsErrorKind::NotArray {
                found: found(unexpected),
            },
        )
    }
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = Vec<Pair>;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Vec<Pair>, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = Vec<Pair>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of {\"key\", \"value\"} objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Pair>, A::Error> {
        let mut pairs = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(pair) = seq.next_element_seed(ElementSeed {
            index: pairs.len(),
            problem: &mut *self.problem,
        })? {
            pairs.push(pair);
        }
        Ok(pairs)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<Pair>, E> {
        self.other(de::Unexpected::Str(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Vec<Pair>, A::Error> {
        self.other(de::Unexpected::Map)
    }

    refuse_other_kinds!(other);
}

/// One element of the list.
struct ElementSeed<'p> {
    index: usize,
    problem: &'p mut Option<PairsErrorKind>,
}

impl ElementSeed<'_> {
    fn other<T, E: de::Error>(self, unexpected: de::Unexpected<'_>) -> Result<T, E> {
        fail(
            self.problem,
            PairsErrorKind::NotObject {
                index: self.index,
                found: found(unexpected),
            },
        )
    }
}

impl<'de> DeserializeSeed<'de> for ElementSeed<'_> {
    type Value = Pair;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Pair, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ElementSeed<'_> {
    type Value = Pair;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with string members \"key\" and \"value\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pair, A::Error> {
        let index = self.index;
        let (mut key, mut value) = (None, None);
        while let Some(name) = map.next_key::<String>()? {
            let (member, slot) = match name.as_str() {
                "key" => ("key", &mut key),
                "value" => ("value", &mut value),
                _ => {
                    return fail(
                        self.problem,
                        PairsErrorKind::UnknownMember {
                            index,
                            member: name,
                        },
                    );
                }
            };
            if slot.is_some() {
                return fail(
                    self.problem,
                    PairsErrorKind::DuplicateMember { index, member },
                );
            }
            *slot = Some(map.next_value_seed(StringSeed {
                index,
                member,
                problem: &mut *self.problem,
            })?);
        }
        match (key, value) {
            (Some(key), Some(value)) => Ok(Pair { key, value }),
            (None, _) => fail(
                self.problem,
                PairsErrorKind::MissingMember {
                    index,
                    member: "key",
                },
            ),
            (_, None) => fail(
                self.problem,
                PairsErrorKind::MissingMember {
                    index,
                    member: "value",
                },
            ),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Pair, E> {
        self.other(de::Unexpected::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Pair, A::Error> {
        self.other(de::Unexpected::Seq)
    }

    refuse_other_kinds!(other);
}

/// The `key` or `value` of an element.
struct StringSeed<'p> {
    index: usize,
    member: &'static str,
    problem: &'p mut Option<PairsErrorKind>,
}

impl StringSeed<'_> {
    fn other<T, E: de::Error>(self, unexpected: de::Unexpected<'_>) -> Result<T, E> {
        fail(
            self.problem,
            PairsErrorKind::NotString {
                index: self.index,
                member: self.member,
                found: found(unexpected),
            },
        )
    }
}

impl<'de> DeserializeSeed<'de> for StringSeed<'_> {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<String, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StringSeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        self.other(de::Unexpected::Seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        self.other(de::Unexpected::Map)
    }

    refuse_other_kinds!(other);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn kind(text: &str) -> PairsErrorKind {
        parse_pairs(text).unwrap_err().kind
    }

    #[test]
    fn reads_a_pair_list_in_order() {
        let pairs =
            parse_pairs(r#"[{"value": "7", "key": "n"}, {"key": "t", "value": "a\"b"}]"#).unwrap();
        assert_eq!(pairs, vec![Pair::new("n", "7"), Pair::new("t", "a\"b")]);
        assert_eq!(parse_pairs(" [ ] \n").unwrap(), vec![]);
    }

    #[test]
    fn keeps_empty_and_repeated_keys() {
        let pairs = parse_pairs(r#"[{"key":"","value":""},{"key":"","value":"x"}]"#).unwrap();
        assert_eq!(pairs, vec![Pair::new("", ""), Pair::new("", "x")]);
    }

    #[test]
    fn not_json() {
        let err = parse_pairs("[{\"key\": \"a\",\n \"value\": ]").unwrap_err();
        assert_eq!(
            err.kind,
            PairsErrorKind::NotJson {
                message: "expected value".into()
            }
        );
        assert_eq!((err.line, err.column), (2, 11));
        assert_eq!(
            err.to_string(),
            "the input is not valid JSON: expected value (line 2, column 11)"
        );
        assert!(matches!(kind(""), PairsErrorKind::NotJson { .. }));
        assert!(
            matches!(kind("[] []"), PairsErrorKind::NotJson { message } if message == "trailing characters")
        );
    }

    #[test]
    fn not_an_array() {
        assert_eq!(
            kind(r#"{"key":"a","value":"b"}"#),
            PairsErrorKind::NotArray { found: "an object" }
        );
        assert_eq!(kind("null"), PairsErrorKind::NotArray { found: "null" });
        assert_eq!(
            kind("\"x\""),
            PairsErrorKind::NotArray { found: "a string" }
        );
        assert_eq!(kind("1.5"), PairsErrorKind::NotArray { found: "a number" });
    }

    #[test]
    fn element_not_an_object() {
        assert_eq!(
            kind(r#"[{"key":"a","value":"b"}, ["a","b"]]"#),
            PairsErrorKind::NotObject {
                index: 1,
                found: "an array"
            }
        );
        assert_eq!(
            kind(r#"["a"]"#),
            PairsErrorKind::NotObject {
                index: 0,
                found: "a string"
            }
        );
    }

    #[test]
    fn extra_member() {
        let err = parse_pairs(r#"[{"key":"a","value":"b","x":1}]"#).unwrap_err();
        assert_eq!(
            err.kind,
            PairsErrorKind::UnknownMember {
                index: 0,
                member: "x".into()
            }
        );
        assert_eq!(
            err.to_string(),
            r#"element 0 has an unexpected member "x"; only "key" and "value" are allowed (line 1, column 27)"#
        );
    }

    #[test]
    fn duplicate_member() {
        assert_eq!(
            kind(r#"[{"key":"a","key":"b","value":"c"}]"#),
            PairsErrorKind::DuplicateMember {
                index: 0,
                member: "key"
            }
        );
    }

    #[test]
    fn missing_members() {
        assert_eq!(
            kind(r#"[{"value":"b"}]"#),
            PairsErrorKind::MissingMember {
                index: 0,
                member: "key"
            }
        );
        assert_eq!(
            kind(r#"[{"key":"a","value":"b"},{"key":"a"}]"#),
            PairsErrorKind::MissingMember {
                index: 1,
                member: "value"
            }
        );
    }

    #[test]
    fn values_and_keys_are_strings() {
        let err = parse_pairs(r#"[{"key":"n","value":7}]"#).unwrap_err();
        assert_eq!(
            err.kind,
            PairsErrorKind::NotString {
                index: 0,
                member: "value",
                found: "a number"
            }
        );
        assert_eq!(
            err.to_string(),
            r#"element 0 has a "value" that is a number; keys and values are strings (line 1, column 21)"#
        );
        for (text, found) in [
            ("true", "a boolean"),
            ("null", "null"),
            ("{}", "an object"),
            ("[\"x\"]", "an array"),
            ("-1", "a number"),
        ] {
            assert_eq!(
                kind(&format!(r#"[{{"key":"k","value":{text}}}]"#)),
                PairsErrorKind::NotString {
                    index: 0,
                    member: "value",
                    found
                },
                "{text}"
            );
        }
        assert_eq!(
            kind(r#"[{"key":1,"value":"v"}]"#),
            PairsErrorKind::NotString {
                index: 0,
                member: "key",
                found: "a number"
            }
        );
    }

    #[test]
    fn deeply_nested_values_are_refused_without_recursing() {
        let text = format!(r#"[{{"key":"k","value":{}}}]"#, "[".repeat(100_000));
        assert_eq!(
            kind(&text),
            PairsErrorKind::NotString {
                index: 0,
                member: "value",
                found: "an array"
            }
        );
    }

    #[test]
    fn serde_derive_agrees_on_valid_input() {
        let text = r#"[{"key":"a","value":"1"},{"value":"2","key":"b"}]"#;
        let derived: Vec<Pair> = serde_json::from_str(text).unwrap();
        assert_eq!(parse_pairs(text).unwrap(), derived);
        assert!(serde_json::from_str::<Vec<Pair>>(r#"[{"key":"a","value":"1","x":"2"}]"#).is_err());
        assert!(serde_json::from_str::<Vec<Pair>>(r#"[{"key":"a","value":1}]"#).is_err());
    }
}
