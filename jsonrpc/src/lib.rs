//! JSON-RPC 2.0 messages for the Curupira extension protocol: the types, strict parsing
//! of one frame body, and the error-code table.
//!
//! A host and an extension exchange one JSON-RPC 2.0 message per frame (the frames
//! themselves are `curupira-framing`'s business). This crate turns a frame body into a
//! [`Message`], or into a [`ParseFailure`] that already knows the error reply JSON-RPC
//! requires, and writes messages back as bytes.
//!
//! ```
//! use curupira_jsonrpc::serde_json::json;
//! use curupira_jsonrpc::{ErrorCode, Id, Message, Response, parse_message};
//!
//! // An extension reads a request and answers it.
//! let message = parse_message(br#"{"jsonrpc":"2.0","id":1,"method":"describe"}"#)?;
//! let Message::Request(request) = message else { panic!("expected a request") };
//! assert_eq!(request.method, "describe");
//! let reply = Response::ok(request.id, json!({"triggers": []}));
//! assert_eq!(
//!     Message::from(reply).to_string(),
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"triggers":[]}}"#
//! );
//!
//! // A body that is JSON but not a message gets a -32600 reply carrying its id.
//! let failure = parse_message(br#"{"jsonrpc":"2.0","id":"a","method":5}"#).unwrap_err();
//! assert_eq!(failure.code(), ErrorCode::INVALID_REQUEST);
//! assert_eq!(failure.id(), &Id::from("a"));
//! assert_eq!(
//!     failure.to_string(),
//!     "invalid request (-32600): member `method` must be a string, found 5"
//! );
//! # Ok::<(), curupira_jsonrpc::ParseFailure>(())
//! ```
//!
//! # Classification
//!
//! [`parse`] reads the body once (UTF-8 check, then one JSON pass that keeps only the
//! members JSON-RPC names) and decides by which members are present, never by trying
//! shapes in turn (no `#[serde(untagged)]`):
//!
//! 1. An empty body, invalid UTF-8, or anything that is not one JSON value
//!    (including JSON nested deeper than 128 levels) → **-32700 parse error**, id
//!    `null`.
//! 2. A JSON array → a batch. An empty array is one -32600 failure with id `null`;
//!    otherwise every element is classified on its own by the rules below (an element
//!    that is not an object is -32600 with id `null`).
//! 3. Any other non-object → -32600, id `null`.
//! 4. In an object, the id the failure carries is recovered first: the `id` member's
//!    value when it is a valid id, else `null`.
//! 5. A member JSON-RPC names (`jsonrpc`, `id`, `method`, `params`, `result`, `error`)
//!    appearing twice → -32600.
//! 6. `jsonrpc` missing, or anything but the string `"2.0"` → -32600.
//! 7. `method` present → a **request** when an `id` member is present (even
//!    `"id": null`), else a **notification**. `method` must be a string; `params`,
//!    when present, an array, an object or `null`, which is read as absent params
//!    (the reference Curupira host sends `"params": null`; this crate writes absent
//!    params by leaving the member out); `id` an integer, a string or `null`;
//!    `result` and `error` must be absent.
//! 8. Otherwise `result` or `error` present → a **response**. Both together, or
//!    `params` (other than `null`), or a missing or invalid `id` → -32600. `error` must be an object with
//!    an integer `code` and a string `message`; `data` is optional and any value.
//!    `"id": null` is accepted in both successful and error responses (a request may
//!    have had a null id).
//! 9. None of `method`, `result`, `error` → -32600.
//!
//! Members JSON-RPC 2.0 does not name are ignored, at the top of a message and inside
//! an error object: the specification is silent, and ignoring them keeps peers that
//! add tracing fields working. Ids are integers from `i64::MIN` to `u64::MAX`, strings
//! or `null`; a number with a fraction or an exponent (`1.5`, `1.0`, `1e3`) is not a
//! valid id, and neither is `-0`, which JSON parsers read as the float -0.0. Method names are not checked beyond being strings (a `rpc.`-prefixed name
//! is a valid request that a receiver answers with "method not found").
//!
//! The first rule broken is the one reported, as one sentence in
//! [`ParseFailure::message`]; [`ParseFailure::reply`] is the response to send back.
//!
//! Numbers inside `params`, `result` and `data` are read with exact float precision
//! (serde_json's `float_roundtrip`), so a value passed through is written back
//! unchanged.
//!
//! # Writing
//!
//! Serializing a [`Message`] always writes `"jsonrpc":"2.0"` first, then `id`, then
//! `method` and `params` or exactly one of `result` and `error`; `None` params and
//! `data` are left out. [`Message::to_vec`] gives the compact bytes of a frame body.

mod error_code;
mod id;
mod message;
mod parse;

pub use error_code::ErrorCode;
pub use id::{Id, IdInteger};
pub use message::{
    ErrorObject, Message, Notification, Params, ParamsNotStructured, RemoteError, Request, Response,
};
pub use parse::{Incoming, ParseFailure, parse, parse_message};

/// The `serde_json` crate, whose `Value` params, results and error data are:
/// re-exported so a user builds and reads them (`curupira_jsonrpc::serde_json::json!`)
/// with the very version this crate uses, without a dependency of their own.
pub use serde_json;

use std::{fmt, io};

use serde::Serialize;
use serde_json::Value;

/// Says what a JSON value is, for "…, found X" messages: `"1.0"`, `1.5`, `null`,
/// `true`, `an array`, `an object`. Long strings are cut after 40 characters.
///
/// Every peer that checks params or results (the SDK, a host) words its messages the
/// same way with it:
///
/// ```
/// use curupira_jsonrpc::describe;
/// use curupira_jsonrpc::serde_json::json;
///
/// assert_eq!(format!("must be a string, found {}", describe(&json!(5))), "must be a string, found 5");
/// assert_eq!(describe(&json!({"a": 1})), "an object");
/// ```
pub fn describe(value: &Value) -> String {
    const MAX_CHARS: usize = 40;
    match value {
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        Value::String(s) => match s.char_indices().nth(MAX_CHARS) {
            Some((cut, _)) => format!("{}…", Value::from(&s[..cut])),
            None => value.to_string(),
        },
        Value::Null | Value::Bool(_) | Value::Number(_) => value.to_string(),
    }
}

/// Writes `value` as compact JSON straight into a formatter.
pub(crate) fn write_json(f: &mut fmt::Formatter<'_>, value: &impl Serialize) -> fmt::Result {
    struct Adapter<'a, 'b>(&'a mut fmt::Formatter<'b>);

    impl io::Write for Adapter<'_, '_> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            // serde_json hands over whole UTF-8 fragments (string pieces are cut at
            // ASCII escapes), so each chunk is valid on its own.
            let text = std::str::from_utf8(buf).map_err(io::Error::other)?;
            self.0.write_str(text).map_err(io::Error::other)?;
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    serde_json::to_writer(Adapter(f), value).map_err(|_| fmt::Error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describe_names_the_value() {
        assert_eq!(describe(&json!("1.0")), "\"1.0\"");
        assert_eq!(describe(&json!(1.5)), "1.5");
        assert_eq!(describe(&json!(null)), "null");
        assert_eq!(describe(&json!(false)), "false");
        assert_eq!(describe(&json!([1])), "an array");
        assert_eq!(describe(&json!({})), "an object");
        let long = "é".repeat(50);
        assert_eq!(
            describe(&Value::from(long)),
            format!("\"{}\"…", "é".repeat(40))
        );
    }
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
