//! Request ids: an integer, a string or `null`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::describe;

/// The id of a request, echoed unchanged in its response.
///
/// JSON-RPC 2.0 allows a number, a string or `null`. This protocol narrows "number" to
/// integers (from `i64::MIN` to `u64::MAX`); a number with a fraction or an exponent
/// (`1.5`, `1e3`) is not a valid id. The integer `1` and the string `"1"` are different
/// ids, and [`Display`](fmt::Display) writes the JSON form so the difference shows:
///
/// ```
/// use curupira_jsonrpc::Id;
/// assert_eq!(Id::from(1).to_string(), "1");
/// assert_eq!(Id::from("1").to_string(), "\"1\"");
/// assert_eq!(Id::Null.to_string(), "null");
/// assert_ne!(Id::from(1), Id::from("1"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    /// An integer id.
    Integer(IdInteger),
    /// A string id.
    String(String),
    /// The `null` id: allowed in requests, and used in error replies whose request id
    /// could not be read.
    Null,
}

/// An integer id, anywhere from `i64::MIN` to `u64::MAX`.
///
/// A JSON integer may use either range; this type holds both so that an id like
/// `18446744073709551615` survives a round trip unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdInteger(i128);

impl IdInteger {
    /// The id as an `i64`, when it fits.
    pub fn as_i64(self) -> Option<i64> {
        i64::try_from(self.0).ok()
    }

    /// The id as a `u64`, when it fits (it is not negative).
    pub fn as_u64(self) -> Option<u64> {
        u64::try_from(self.0).ok()
    }
}

impl fmt::Display for IdInteger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

macro_rules! integer_conversions {
    ($($t:ty),*) => {$(
        impl From<$t> for IdInteger {
            fn from(n: $t) -> Self {
                IdInteger(i128::from(n))
            }
        }
        impl From<$t> for Id {
            fn from(n: $t) -> Self {
                Id::Integer(IdInteger::from(n))
            }
        }
    )*};
}

integer_conversions!(i8, i16, i32, i64, u8, u16, u32, u64);

impl From<IdInteger> for Id {
    fn from(n: IdInteger) -> Self {
        Id::Integer(n)
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        Id::String(s)
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_owned())
    }
}

impl Id {
    /// Reads an id from a JSON value, or says in one sentence fragment what was found
    /// instead (`1.5`, `an object`).
    pub(crate) fn from_value(value: &Value) -> Result<Id, String> {
        match value {
            Value::Null => Ok(Id::Null),
            Value::String(s) => Ok(Id::String(s.clone())),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Id::from(i))
                } else if let Some(u) = n.as_u64() {
                    Ok(Id::from(u))
                } else {
                    Err(describe(value))
                }
            }
            Value::Bool(_) | Value::Array(_) | Value::Object(_) => Err(describe(value)),
        }
    }

    /// Whether this is the `null` id.
    pub fn is_null(&self) -> bool {
        matches!(self, Id::Null)
    }
}

/// Writes the id's JSON form: `1`, `"1"` (with JSON escapes) or `null`.
impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Integer(n) => fmt::Display::fmt(n, f),
            Id::String(s) => crate::write_json(f, s),
            Id::Null => f.write_str("null"),
        }
    }
}

impl Serialize for IdInteger {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match (self.as_i64(), self.as_u64()) {
            (Some(i), _) => serializer.serialize_i64(i),
            (None, Some(u)) => serializer.serialize_u64(u),
            // Unreachable by construction (every constructor takes an i64 or a u64);
            // i128 is still a faithful answer for serializers that support it.
            (None, None) => serializer.serialize_i128(self.0),
        }
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Integer(n) => n.serialize(serializer),
            Id::String(s) => serializer.serialize_str(s),
            Id::Null => serializer.serialize_unit(),
        }
    }
}

/// Accepts exactly what [`Id`] allows: an integer, a string or `null`.
impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Id::from_value(&value).map_err(|found| {
            serde::de::Error::custom(format_args!(
                "an id must be an integer, a string or null, found {found}"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn display_distinguishes_integer_string_and_null() {
        assert_eq!(Id::from(7).to_string(), "7");
        assert_eq!(Id::from(-7).to_string(), "-7");
        assert_eq!(Id::from("7").to_string(), "\"7\"");
        assert_eq!(Id::from("a\"b\n").to_string(), r#""a\"b\n""#);
        assert_eq!(Id::from("").to_string(), "\"\"");
        assert_eq!(Id::Null.to_string(), "null");
        assert_eq!(Id::from(u64::MAX).to_string(), "18446744073709551615");
    }

    #[test]
    fn integer_and_string_ids_differ() {
        assert_ne!(Id::from(1), Id::from("1"));
        assert_eq!(Id::from(1u8), Id::from(1i64));
        assert_eq!(Id::from(1u64), Id::from(1i32));
    }

    #[test]
    fn integer_range_covers_i64_and_u64() {
        for value in [json!(i64::MIN), json!(-1), json!(0), json!(u64::MAX)] {
            let id = Id::from_value(&value).unwrap();
            assert_eq!(serde_json::to_value(&id).unwrap(), value);
        }
        let big = IdInteger::from(u64::MAX);
        assert_eq!(big.as_u64(), Some(u64::MAX));
        assert_eq!(big.as_i64(), None);
        let negative = IdInteger::from(-3);
        assert_eq!(negative.as_i64(), Some(-3));
        assert_eq!(negative.as_u64(), None);
    }

    #[test]
    fn fractions_exponents_and_other_types_are_refused() {
        let cases = [
            ("1.5", "1.5"),
            ("1.0", "1.0"),
            ("1e3", "1000.0"),
            ("18446744073709551616", "1.8446744073709552e+19"),
            ("true", "true"),
            ("[1]", "an array"),
            ("{}", "an object"),
        ];
        for (text, found) in cases {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(Id::from_value(&value), Err(found.to_owned()), "{text}");
            let err = serde_json::from_str::<Id>(text).unwrap_err().to_string();
            assert!(err.contains(found), "{err}");
        }
    }

    #[test]
    fn deserialize_accepts_the_three_kinds() {
        assert_eq!(serde_json::from_str::<Id>("12").unwrap(), Id::from(12));
        assert_eq!(serde_json::from_str::<Id>("\"x\"").unwrap(), Id::from("x"));
        assert_eq!(serde_json::from_str::<Id>("null").unwrap(), Id::Null);
    }
}
