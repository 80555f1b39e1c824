//! The error-code table of the protocol.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The `code` of an error object.
///
/// The codes this protocol names are associated constants; any other integer is
/// representable too (an extension may send codes of its own), and displays as
/// `code 7` (or `server error (-32050)` inside JSON-RPC's reserved server range).
///
/// ```
/// use curupira_jsonrpc::ErrorCode;
/// assert_eq!(ErrorCode::INVALID_REQUEST.to_string(), "invalid request (-32600)");
/// assert_eq!(ErrorCode::from(-32004), ErrorCode::TIMEOUT);
/// assert_eq!(ErrorCode::from(7).to_string(), "code 7");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(i64);

impl ErrorCode {
    /// -32700: the body is not valid JSON (or not UTF-8).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: valid JSON, not a valid JSON-RPC message.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: the receiver does not implement the method.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: the params do not fit the method.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: the receiver failed in a way of its own.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32000: framing broke, the pipe closed, the process died.
    pub const TRANSPORT_FAILURE: ErrorCode = ErrorCode(-32000);
    /// -32001: a peer broke this protocol's rules, or the versions differ.
    pub const PROTOCOL_FAILURE: ErrorCode = ErrorCode(-32001);
    /// -32002: the extension failed running an external command.
    pub const COMMAND_FAILURE: ErrorCode = ErrorCode(-32002);
    /// -32003: `trigger/validate` rejected the automation's configuration.
    pub const CONFIGURATION_INVALID: ErrorCode = ErrorCode(-32003);
    /// -32004: no answer in time.
    pub const TIMEOUT: ErrorCode = ErrorCode(-32004);

    /// Every code the protocol names, in the order of the specification's table.
    pub const NAMED: [ErrorCode; 10] = [
        ErrorCode::PARSE_ERROR,
        ErrorCode::INVALID_REQUEST,
        ErrorCode::METHOD_NOT_FOUND,
        ErrorCode::INVALID_PARAMS,
        ErrorCode::INTERNAL_ERROR,
        ErrorCode::TRANSPORT_FAILURE,
        ErrorCode::PROTOCOL_FAILURE,
        ErrorCode::COMMAND_FAILURE,
        ErrorCode::CONFIGURATION_INVALID,
        ErrorCode::TIMEOUT,
    ];

    /// The code for an integer.
    pub const fn new(code: i64) -> ErrorCode {
        ErrorCode(code)
    }

    /// The integer sent on the wire.
    pub const fn code(self) -> i64 {
        self.0
    }

    /// The name the protocol gives this code (`"invalid request"`), or `None` for a
    /// code it does not name.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            -32700 => "parse error",
            -32600 => "invalid request",
            -32601 => "method not found",
            -32602 => "invalid params",
            -32603 => "internal error",
            -32000 => "transport failure",
            -32001 => "protocol or version failure",
            -32002 => "command failure",
            -32003 => "configuration validation failure",
            -32004 => "timeout",
            _ => return None,
        })
    }
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> Self {
        ErrorCode(code)
    }
}

impl From<ErrorCode> for i64 {
    fn from(code: ErrorCode) -> Self {
        code.0
    }
}

/// `invalid request (-32600)` for a named code, `server error (-32050)` for an unnamed
/// code in JSON-RPC's server range (-32099 to -32000), `code 7` for any other.
impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None if (-32099..=-32000).contains(&self.0) => write!(f, "server error ({})", self.0),
            None => write!(f, "code {}", self.0),
        }
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.0)
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        i64::deserialize(deserializer).map(ErrorCode)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_table_of_the_specification() {
        let table = [
            (-32700, "parse error"),
            (-32600, "invalid request"),
            (-32601, "method not found"),
            (-32602, "invalid params"),
            (-32603, "internal error"),
            (-32000, "transport failure"),
            (-32001, "protocol or version failure"),
            (-32002, "command failure"),
            (-32003, "configuration validation failure"),
            (-32004, "timeout"),
        ];
        assert_eq!(ErrorCode::NAMED.len(), table.len());
        for (code, (number, name)) in ErrorCode::NAMED.into_iter().zip(table) {
            assert_eq!(code.code(), number);
            assert_eq!(code.name(), Some(name));
            assert_eq!(code.to_string(), format!("{name} ({number})"));
        }
    }

    #[test]
    fn unnamed_codes_are_representable() {
        assert_eq!(ErrorCode::from(-32050).name(), None);
        assert_eq!(ErrorCode::from(-32050).to_string(), "server error (-32050)");
        assert_eq!(ErrorCode::from(-32099).to_string(), "server error (-32099)");
        assert_eq!(ErrorCode::from(-32100).to_string(), "code -32100");
        assert_eq!(ErrorCode::from(42).to_string(), "code 42");
        assert_eq!(i64::from(ErrorCode::new(i64::MIN)), i64::MIN);
    }

    #[test]
    fn serde_is_the_bare_integer() {
        assert_eq!(
            serde_json::to_string(&ErrorCode::TIMEOUT).unwrap(),
            "-32004"
        );
        assert_eq!(
            serde_json::from_str::<ErrorCode>("-32601").unwrap(),
            ErrorCode::METHOD_NOT_FOUND
        );
        assert!(serde_json::from_str::<ErrorCode>("1.5").is_err());
    }
}
