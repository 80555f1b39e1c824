//! The protocol version and the one compatibility rule.

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::Value;

/// The protocol major version this crate describes, spoken by the host and the SDK.
pub const PROTOCOL_VERSION: u64 = 2;

/// A protocol version as a peer wrote it: `2`, `"2"` or `"2.1"`.
///
/// The one rule for reading a version (the same in `initialize`, in its result and in
/// a manifest's `protocol_version`): a non-negative integer, or a string `MAJOR` or
/// `MAJOR.MINOR` of ASCII digits. Anything else — `"3.0.1"`, `"v2"`, `" 2"`, `2.5`,
/// `-2` — is not a version. Two versions are compatible when their majors are equal.
///
/// ```
/// use curupira_protocol::ProtocolVersion;
///
/// let v: ProtocolVersion = "2.1".parse()?;
/// assert_eq!((v.major(), v.minor()), (2, Some(1)));
/// assert!(v.is_compatible());
/// assert!("3.0.1".parse::<ProtocolVersion>().is_err());
/// # Ok::<(), curupira_protocol::VersionError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProtocolVersion {
    major: u64,
    minor: Option<u64>,
}

/// A value that is not a protocol version (see [`ProtocolVersion`] for the rule).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{found} is not a protocol version: write a non-negative integer such as 2, or a string \
     `MAJOR` or `MAJOR.MINOR` such as \"2.1\""
)]
pub struct VersionError {
    /// The value as found, shortened (`"3.0.1"`, `2.5`, `an array`).
    pub found: String,
}

impl ProtocolVersion {
    /// The version this crate speaks: `2`, no minor.
    pub const CURRENT: Self = Self {
        major: PROTOCOL_VERSION,
        minor: None,
    };

    /// A version from its parts.
    pub const fn new(major: u64, minor: Option<u64>) -> Self {
        Self { major, minor }
    }

    /// The major version, the only part compared.
    pub fn major(self) -> u64 {
        self.major
    }

    /// The minor version, when one was written.
    pub fn minor(self) -> Option<u64> {
        self.minor
    }

    /// Whether a peer speaking this version can talk to this crate's side: the majors
    /// are equal.
    pub fn is_compatible(self) -> bool {
        self.major == PROTOCOL_VERSION
    }

    /// Reads a JSON value by the rule of [`ProtocolVersion`].
    pub fn from_json(value: &Value) -> Result<Self, VersionError> {
        match value {
            Value::Number(number) => number
                .as_u64()
                .map(|major| Self::new(major, None))
                .ok_or_else(|| VersionError {
                    found: number.to_string(),
                }),
            Value::String(text) => text.parse(),
            other => Err(VersionError {
                found: curupira_jsonrpc::describe(other),
            }),
        }
    }
}

impl std::str::FromStr for ProtocolVersion {
    type Err = VersionError;

    /// `MAJOR` or `MAJOR.MINOR`, ASCII digits only.
    fn from_str(text: &str) -> Result<Self, VersionError> {
        let number = |part: &str| -> Option<u64> {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            part.parse().ok()
        };
        let parsed = match text.split_once('.') {
            None => number(text).map(|major| Self::new(major, None)),
            Some((major, minor)) => {
                number(major).and_then(|major| Some(Self::new(major, Some(number(minor)?))))
            }
        };
        parsed.ok_or_else(|| VersionError {
            found: curupira_jsonrpc::describe(&Value::from(text)),
        })
    }
}

impl fmt::Display for ProtocolVersion {
    /// `2` or `2.1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.minor {
            None => write!(f, "{}", self.major),
            Some(minor) => write!(f, "{}.{minor}", self.major),
        }
    }
}

impl Serialize for ProtocolVersion {
    /// The integer `2` without a minor, the string `"2.1"` with one.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.minor {
            None => serializer.serialize_u64(self.major),
            Some(_) => serializer.collect_str(self),
        }
    }
}

/// Which side of the conversation wrote the incompatible version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// The host (as read by an extension, in `initialize`).
    Host,
    /// The extension (as read by a host, in the `initialize` result).
    Extension,
}

/// Two sides that speak different protocol majors: a -32001 protocol failure, after
/// which nothing else may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub struct VersionMismatch {
    /// What the other side wrote.
    pub theirs: ProtocolVersion,
    /// Who the other side is.
    pub peer: Peer,
}

impl fmt::Display for VersionMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (host, extension) = match self.peer {
            Peer::Host => (self.theirs, ProtocolVersion::CURRENT),
            Peer::Extension => (ProtocolVersion::CURRENT, self.theirs),
        };
        write!(
            f,
            "protocol version mismatch: the host speaks protocol {host}, the extension speaks \
             protocol {extension} (only the major version is compared)"
        )
    }
}

/// The compatibility rule as a result: `Ok` when the majors are equal.
pub fn check_compatible(theirs: ProtocolVersion, peer: Peer) -> Result<(), VersionMismatch> {
    if theirs.is_compatible() {
        Ok(())
    } else {
        Err(VersionMismatch { theirs, peer })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn integers_and_major_minor_strings_are_versions() {
        let read = |v: Value| ProtocolVersion::from_json(&v).map(|v| (v.major(), v.minor()));
        assert_eq!(read(json!(2)), Ok((2, None)));
        assert_eq!(read(json!(0)), Ok((0, None)));
        assert_eq!(read(json!("2")), Ok((2, None)));
        assert_eq!(read(json!("2.1")), Ok((2, Some(1))));
        assert_eq!(read(json!("3.0")), Ok((3, Some(0))));
        assert_eq!(read(json!("02.10")), Ok((2, Some(10))));
    }

    #[test]
    fn anything_else_is_not_a_version() {
        for bad in [
            json!(-2),
            json!(2.5),
            json!("3.0.1"),
            json!("2.1.0"),
            json!("two"),
            json!("v2"),
            json!("+2"),
            json!(" 2"),
            json!("2."),
            json!(".1"),
            json!(""),
            json!("99999999999999999999999"),
            json!(null),
            json!(true),
            json!([2]),
            json!({}),
        ] {
            assert!(ProtocolVersion::from_json(&bad).is_err(), "{bad}");
        }
        assert_eq!(
            ProtocolVersion::from_json(&json!("3.0.1"))
                .unwrap_err()
                .to_string(),
            "\"3.0.1\" is not a protocol version: write a non-negative integer such as 2, or a \
             string `MAJOR` or `MAJOR.MINOR` such as \"2.1\""
        );
    }

    #[test]
    fn only_the_major_is_compared() {
        assert!(ProtocolVersion::new(2, Some(7)).is_compatible());
        assert!(!ProtocolVersion::new(3, None).is_compatible());
        assert!(!ProtocolVersion::new(1, Some(2)).is_compatible());
        assert_eq!(
            check_compatible(ProtocolVersion::new(3, Some(1)), Peer::Extension)
                .unwrap_err()
                .to_string(),
            "protocol version mismatch: the host speaks protocol 2, the extension speaks \
             protocol 3.1 (only the major version is compared)"
        );
        assert_eq!(
            check_compatible(ProtocolVersion::new(1, None), Peer::Host)
                .unwrap_err()
                .to_string(),
            "protocol version mismatch: the host speaks protocol 1, the extension speaks \
             protocol 2 (only the major version is compared)"
        );
    }

    #[test]
    fn versions_print_as_they_are_written() {
        assert_eq!(
            serde_json::to_value(ProtocolVersion::CURRENT).unwrap(),
            json!(2)
        );
        assert_eq!(
            serde_json::to_value(ProtocolVersion::new(2, Some(1))).unwrap(),
            json!("2.1")
        );
        assert_eq!(ProtocolVersion::new(2, Some(1)).to_string(), "2.1");
    }
}
