//! `TaskId`: SHA-256 of a pair list's canonical bytes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

use crate::pairs::{AsPair, write_pairs};
use crate::sink::HashSink;

/// The identity of a work item: SHA-256 of the canonical JSON of its pairs (SPEC
/// section 6). Shown, parsed and serialized as 64 lowercase hexadecimal digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId([u8; 32]);

impl TaskId {
    /// The identity of a pair list, in the order given. The canonical bytes are
    /// streamed into the hasher; no JSON tree or intermediate string is built.
    pub fn of_pairs<I>(pairs: I) -> TaskId
    where
        I: IntoIterator,
        I::Item: AsPair,
    {
        let mut sink = HashSink::new();
        write_pairs(pairs, &mut sink);
        TaskId(sink.finish())
    }

    /// A task id from its 32 digest bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> TaskId {
        TaskId(bytes)
    }

    /// The 32 digest bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TaskId({self})")
    }
}

/// Text that is not a task id.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseTaskIdError {
    /// Not 64 characters long.
    #[error("a task id is 64 lowercase hexadecimal digits, found {0} characters")]
    Length(usize),
    /// A character other than `0-9a-f`.
    #[error(
        "a task id is 64 lowercase hexadecimal digits, found {character:?} at position {position}"
    )]
    Digit {
        /// The offending character.
        character: char,
        /// Its 0-based position.
        position: usize,
    },
}

/// Parses exactly the form `Display` writes: 64 lowercase hex digits. Uppercase is
/// refused so that equal ids are always equal strings.
impl FromStr for TaskId {
    type Err = ParseTaskIdError;

    fn from_str(text: &str) -> Result<TaskId, ParseTaskIdError> {
        let count = text.chars().count();
        if count != 64 {
            return Err(ParseTaskIdError::Length(count));
        }
        let mut bytes = [0u8; 32];
        let mut digits = text
            .chars()
            .enumerate()
            .map(|(position, character)| match character {
                '0'..='9' => Ok(character as u8 - b'0'),
                'a'..='f' => Ok(character as u8 - b'a' + 10),
                _ => Err(ParseTaskIdError::Digit {
                    character,
                    position,
                }),
            });
        for byte in &mut bytes {
            let high = digits.next().unwrap_or(Ok(0))?;
            let low = digits.next().unwrap_or(Ok(0))?;
            *byte = high << 4 | low;
        }
        Ok(TaskId(bytes))
    }
}

impl Serialize for TaskId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TaskId, D::Error> {
        struct HexVisitor;
        impl serde::de::Visitor<'_> for HexVisitor {
            type Value = TaskId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a task id (64 lowercase hexadecimal digits)")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<TaskId, E> {
                text.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(HexVisitor)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use sha2::{Digest, Sha256};

    use super::*;
    use crate::{Pair, canonical_pairs};

    #[test]
    fn empty_list_is_sha256_of_brackets() {
        // printf '[]' | sha256sum
        assert_eq!(
            TaskId::of_pairs(Vec::<Pair>::new()).to_string(),
            "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
        );
    }

    #[test]
    fn borrowed_and_owned_pairs_agree() {
        let owned = vec![
            Pair::new("issue", "42"),
            Pair::new("title", "Crash \"now\""),
        ];
        let borrowed = [("issue", "42"), ("title", "Crash \"now\"")];
        let expected = TaskId::from_bytes(Sha256::digest(canonical_pairs(&owned)).into());
        assert_eq!(TaskId::of_pairs(&owned), expected);
        assert_eq!(TaskId::of_pairs(borrowed), expected);
        assert_eq!(
            TaskId::of_pairs(owned.iter().map(|p| (&p.key, &p.value))),
            expected
        );
    }

    #[test]
    fn large_values_hash_like_their_canonical_bytes() {
        let big = "v".repeat(100_000) + "\n" + &"w".repeat(20_000);
        let pairs = [("a", big.as_str()), ("b", "x"), ("c", big.as_str())];
        let expected: [u8; 32] = Sha256::digest(canonical_pairs(pairs)).into();
        assert_eq!(TaskId::of_pairs(pairs).as_bytes(), &expected);
    }

    #[test]
    fn display_and_parse_round_trip() {
        let id = TaskId::of_pairs([("k", "v")]);
        let text = id.to_string();
        assert_eq!(text.len(), 64);
        assert!(
            text.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
        assert_eq!(text.parse::<TaskId>().unwrap(), id);
        assert_eq!(format!("{id:?}"), format!("TaskId({text})"));
    }

    #[test]
    fn parse_errors_say_what_and_where() {
        assert_eq!(
            "abc".parse::<TaskId>().unwrap_err().to_string(),
            "a task id is 64 lowercase hexadecimal digits, found 3 characters"
        );
        let mut text = "0".repeat(64);
        text.replace_range(10..11, "A");
        assert_eq!(
            text.parse::<TaskId>().unwrap_err(),
            ParseTaskIdError::Digit {
                character: 'A',
                position: 10
            }
        );
        let mut text = "0".repeat(63);
        text.push('é');
        assert_eq!(
            text.parse::<TaskId>().unwrap_err(),
            ParseTaskIdError::Digit {
                character: 'é',
                position: 63
            }
        );
    }

    #[test]
    fn serde_is_the_hex_string() {
        let id = TaskId::of_pairs([("k", "v")]);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{id}\""));
        assert_eq!(serde_json::from_str::<TaskId>(&json).unwrap(), id);
        let err = serde_json::from_str::<TaskId>("\"xyz\"").unwrap_err();
        assert!(err.to_string().contains("found 3 characters"), "{err}");
        assert!(serde_json::from_str::<TaskId>("12").is_err());
    }
}
