//! RFC 6901 JSON Pointers, built token by token so escaping is never done by hand.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An RFC 6901 JSON Pointer such as `/launch/package` or `/trigger_types/0`.
///
/// The pointer is stored in its escaped string form: `~` in a member name is written
/// `~0` and `/` is written `~1`, so `{"a/b": {"c~d": 1}}` has the pointer `/a~1b/c~0d`.
/// The empty pointer `""` designates the whole document.
///
/// ```
/// use curupira_diagnostics::JsonPointer;
///
/// let pointer = JsonPointer::root().key("launch").key("a/b~c").index(3);
/// assert_eq!(pointer.as_str(), "/launch/a~1b~0c/3");
/// assert_eq!(pointer.tokens().collect::<Vec<_>>(), ["launch", "a/b~c", "3"]);
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JsonPointer(String);

/// Why a string is not an RFC 6901 JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointerError {
    /// A non-empty pointer must start with `/`.
    #[error(
        "a JSON Pointer must be empty or start with `/`, but `{pointer}` starts with `{first}`"
    )]
    MissingLeadingSlash {
        /// The rejected text.
        pointer: String,
        /// Its first character.
        first: char,
    },
    /// `~` must be followed by `0` or `1`.
    #[error(
        "a `~` in a JSON Pointer must be followed by `0` or `1`, but `{pointer}` has an invalid escape at byte {offset}"
    )]
    InvalidEscape {
        /// The rejected text.
        pointer: String,
        /// Byte offset of the `~`.
        offset: usize,
    },
}

impl JsonPointer {
    /// The empty pointer, designating the whole document.
    pub fn root() -> Self {
        Self(String::new())
    }

    /// Parses an escaped pointer, checking the leading `/` and every `~` escape.
    pub fn parse(text: &str) -> Result<Self, PointerError> {
        if let Some(first) = text.chars().next()
            && first != '/'
        {
            return Err(PointerError::MissingLeadingSlash {
                pointer: text.to_owned(),
                first,
            });
        }
        let bytes = text.as_bytes();
        for (offset, byte) in bytes.iter().enumerate() {
            if *byte == b'~' && !matches!(bytes.get(offset + 1), Some(b'0' | b'1')) {
                return Err(PointerError::InvalidEscape {
                    pointer: text.to_owned(),
                    offset,
                });
            }
        }
        Ok(Self(text.to_owned()))
    }

    /// The pointer to the member `name` of the object this pointer designates.
    #[must_use]
    pub fn key(&self, name: &str) -> Self {
        let mut child = self.clone();
        child.push_key(name);
        child
    }

    /// The pointer to element `index` of the array this pointer designates.
    #[must_use]
    pub fn index(&self, index: usize) -> Self {
        let mut child = self.clone();
        child.push_index(index);
        child
    }

    /// Appends a member name, escaping `~` and `/`.
    pub fn push_key(&mut self, name: &str) {
        self.0.reserve(name.len() + 1);
        self.0.push('/');
        for c in name.chars() {
            match c {
                '~' => self.0.push_str("~0"),
                '/' => self.0.push_str("~1"),
                other => self.0.push(other),
            }
        }
    }

    /// Appends an array index.
    pub fn push_index(&mut self, index: usize) {
        self.0.push('/');
        self.0.push_str(&index.to_string());
    }

    /// The pointer one level up, or `None` for the root.
    pub fn parent(&self) -> Option<Self> {
        let cut = self.0.rfind('/')?;
        Some(Self(self.0[..cut].to_owned()))
    }

    /// The last reference token, unescaped, or `None` for the root.
    pub fn last(&self) -> Option<String> {
        let cut = self.0.rfind('/')?;
        Some(unescape(&self.0[cut + 1..]))
    }

    /// Whether this is the root pointer `""`.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The escaped text, as it appears in JSON output.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The reference tokens, unescaped (`~1` back to `/`, `~0` back to `~`).
    pub fn tokens(&self) -> impl Iterator<Item = String> + '_ {
        self.0.split('/').skip(1).map(unescape)
    }
}

fn unescape(token: &str) -> String {
    // RFC 6901 section 4: `~1` first, then `~0`, so `~01` decodes to `~1`, not `/`.
    token.replace("~1", "/").replace("~0", "~")
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonPointer({:?})", self.0)
    }
}

impl AsRef<str> for JsonPointer {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for JsonPointer {
    type Err = PointerError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl Serialize for JsonPointer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for JsonPointer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_6901_examples_escape_and_unescape() {
        // The member names of RFC 6901 section 5 and their pointers.
        let cases = [
            ("foo", "/foo"),
            ("", "/"),
            ("a/b", "/a~1b"),
            ("c%d", "/c%d"),
            ("e^f", "/e^f"),
            ("g|h", "/g|h"),
            ("i\\j", "/i\\j"),
            ("k\"l", "/k\"l"),
            (" ", "/ "),
            ("m~n", "/m~0n"),
        ];
        for (name, expected) in cases {
            let pointer = JsonPointer::root().key(name);
            assert_eq!(pointer.as_str(), expected);
            assert_eq!(pointer.tokens().collect::<Vec<_>>(), [name]);
            assert_eq!(JsonPointer::parse(expected).unwrap(), pointer);
        }
    }

    #[test]
    fn tilde_one_in_a_name_survives_a_round_trip() {
        let pointer = JsonPointer::root().key("~1");
        assert_eq!(pointer.as_str(), "/~01");
        assert_eq!(pointer.last().as_deref(), Some("~1"));
    }

    #[test]
    fn parent_and_last() {
        let pointer = JsonPointer::root().key("launch").key("package");
        assert_eq!(pointer.parent().unwrap().as_str(), "/launch");
        assert_eq!(pointer.last().as_deref(), Some("package"));
        assert!(JsonPointer::root().parent().is_none());
        assert_eq!(
            JsonPointer::root().key("a").parent(),
            Some(JsonPointer::root())
        );
    }

    #[test]
    fn parse_rejects_bad_pointers() {
        assert!(matches!(
            JsonPointer::parse("launch"),
            Err(PointerError::MissingLeadingSlash { first: 'l', .. })
        ));
        assert!(matches!(
            JsonPointer::parse("/a~2"),
            Err(PointerError::InvalidEscape { offset: 2, .. })
        ));
        assert!(matches!(
            JsonPointer::parse("/a~"),
            Err(PointerError::InvalidEscape { offset: 2, .. })
        ));
        assert_eq!(JsonPointer::parse("").unwrap(), JsonPointer::root());
    }

    proptest::proptest! {
        #[test]
        fn any_names_round_trip(names in proptest::collection::vec(".*", 0..5)) {
            let mut pointer = JsonPointer::root();
            for name in &names {
                pointer.push_key(name);
            }
            proptest::prop_assert_eq!(pointer.tokens().collect::<Vec<_>>(), names);
            proptest::prop_assert_eq!(JsonPointer::parse(pointer.as_str()).unwrap(), pointer);
        }
    }
}
