//! Strict reading of each method's `params`, with -32602 messages that say what is
//! wrong and where (a JSON Pointer into the params).
//!
//! Members a method does not name are ignored, as JSON-RPC 2.0 ignores unnamed members
//! of a message: a later minor protocol version may add some.

use std::fmt;

use curupira_jsonrpc::{ErrorObject, Params, describe};
use serde_json::{Map, Value};

use crate::trigger::{Arguments, Pair};

/// The protocol major version this SDK speaks.
pub const PROTOCOL_VERSION: u64 = 2;

/// `initialize` params, as far as the serve loop needs them.
#[derive(Debug)]
pub(crate) struct InitializeParams {
    /// The host's version exactly as written (`2`, `"2.1"`), for messages.
    pub(crate) version_text: String,
    /// Its major part.
    pub(crate) major: u64,
}

/// Why a method's params were refused: an -32602 reply.
pub(crate) fn invalid(method: &str, detail: impl fmt::Display) -> ErrorObject {
    ErrorObject::invalid_params(format!("invalid params for `{method}`: {detail}"))
}

/// The params as an object. `expected` describes the object for the message when the
/// params are missing.
pub(crate) fn object(
    method: &str,
    params: Option<Params>,
    expected: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match params {
        Some(Params::Object(map)) => Ok(map),
        Some(Params::Array(_)) => Err(invalid(
            method,
            format!("params must be an object {expected}, found an array"),
        )),
        None => Err(invalid(
            method,
            format!("params are missing; expected an object {expected}"),
        )),
    }
}

/// Params that may be absent or an object whose members are ignored (`describe`).
pub(crate) fn none_or_object(method: &str, params: Option<Params>) -> Result<(), ErrorObject> {
    match params {
        None | Some(Params::Object(_)) => Ok(()),
        Some(Params::Array(_)) => Err(invalid(
            method,
            "params must be absent or an object, found an array",
        )),
    }
}

pub(crate) fn initialize(params: Option<Params>) -> Result<InitializeParams, ErrorObject> {
    const METHOD: &str = "initialize";
    let map = object(
        METHOD,
        params,
        r#"like {"protocol_version": 2, "host": {"name": "…", "version": "…"}}"#,
    )?;
    let version = map
        .get("protocol_version")
        .ok_or_else(|| invalid(METHOD, "member `/protocol_version` is required"))?;
    let (version_text, major) = protocol_major(version).ok_or_else(|| {
        invalid(
            METHOD,
            format!(
                "`/protocol_version` must be a non-negative integer or a string of dot-separated \
                 digits like \"2\" or \"2.1\", found {}",
                describe(version)
            ),
        )
    })?;
    if let Some(host) = map.get("host") {
        let Value::Object(host) = host else {
            return Err(invalid(
                METHOD,
                format!(
                    "`/host` must be an object with `name` and `version`, found {}",
                    describe(host)
                ),
            ));
        };
        for member in ["name", "version"] {
            if let Some(value) = host.get(member)
                && !value.is_string()
            {
                return Err(invalid(
                    METHOD,
                    format!(
                        "`/host/{member}` must be a string, found {}",
                        describe(value)
                    ),
                ));
            }
        }
    }
    Ok(InitializeParams {
        version_text,
        major,
    })
}

/// `2` → `("2", 2)`, `"2.1"` → `("2.1", 2)`; `None` for anything else (a negative or
/// fractional number, an empty part, a sign, a `v` prefix…).
fn protocol_major(value: &Value) -> Option<(String, u64)> {
    match value {
        Value::Number(n) => n.as_u64().map(|major| (major.to_string(), major)),
        Value::String(s) => {
            let parts_ok = s
                .split('.')
                .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
            if !parts_ok {
                return None;
            }
            let major = s.split('.').next()?.parse().ok()?;
            Some((s.clone(), major))
        }
        _ => None,
    }
}

/// The required `trigger_type` string member.
pub(crate) fn trigger_type(method: &str, map: &Map<String, Value>) -> Result<String, ErrorObject> {
    match map.get("trigger_type") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(invalid(
            method,
            format!(
                "`/trigger_type` must be a string, found {}",
                describe(other)
            ),
        )),
        None => Err(invalid(method, "member `/trigger_type` is required")),
    }
}

/// The required `arguments` object member.
pub(crate) fn arguments(
    method: &str,
    map: &mut Map<String, Value>,
) -> Result<Arguments, ErrorObject> {
    match map.remove("arguments") {
        Some(Value::Object(arguments)) => Ok(arguments),
        Some(other) => Err(invalid(
            method,
            format!("`/arguments` must be an object, found {}", describe(&other)),
        )),
        None => Err(invalid(method, "member `/arguments` is required")),
    }
}

/// The required `values` member: an array of `{"key": s, "value": s}` objects with
/// exactly those two members.
pub(crate) fn values(method: &str, map: &Map<String, Value>) -> Result<Vec<Pair>, ErrorObject> {
    let items = match map.get("values") {
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(invalid(
                method,
                format!(
                    "`/values` must be an array of {{\"key\": …, \"value\": …}} objects, found {}",
                    describe(other)
                ),
            ));
        }
        None => return Err(invalid(method, "member `/values` is required")),
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| pair(method, index, item))
        .collect()
}

fn pair(method: &str, index: usize, item: &Value) -> Result<Pair, ErrorObject> {
    let Value::Object(members) = item else {
        return Err(invalid(
            method,
            format!(
                "`/values/{index}` must be an object with string members `key` and `value`, \
                 found {}",
                describe(item)
            ),
        ));
    };
    if let Some(unknown) = members.keys().find(|k| *k != "key" && *k != "value") {
        return Err(invalid(
            method,
            format!(
                "`/values/{index}` has an unknown member {}; a pair has only `key` and `value`",
                Value::from(unknown.as_str())
            ),
        ));
    }
    let string = |member: &str| match members.get(member) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(invalid(
            method,
            format!(
                "`/values/{index}/{member}` must be a string, found {}",
                describe(other)
            ),
        )),
        None => Err(invalid(
            method,
            format!("member `/values/{index}/{member}` is required"),
        )),
    };
    Ok(Pair {
        key: string("key")?,
        value: string("value")?,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn params(value: Value) -> Option<Params> {
        Some(Params::try_from(value).unwrap())
    }

    #[test]
    fn protocol_versions_take_the_major_part() {
        assert_eq!(protocol_major(&json!(2)), Some(("2".to_owned(), 2)));
        assert_eq!(protocol_major(&json!("2")), Some(("2".to_owned(), 2)));
        assert_eq!(protocol_major(&json!("2.1")), Some(("2.1".to_owned(), 2)));
        assert_eq!(
            protocol_major(&json!("3.0.1")),
            Some(("3.0.1".to_owned(), 3))
        );
        for bad in [
            json!(-2),
            json!(2.5),
            json!("v2"),
            json!("+2"),
            json!(" 2"),
            json!("2."),
            json!(""),
            json!(null),
            json!([2]),
        ] {
            assert_eq!(protocol_major(&bad), None, "{bad}");
        }
    }

    #[test]
    fn initialize_needs_a_version() {
        let err = initialize(params(json!({"host": {"name": "h"}}))).unwrap_err();
        assert_eq!(
            err.message,
            "invalid params for `initialize`: member `/protocol_version` is required"
        );
        let err = initialize(params(json!({"protocol_version": "two"}))).unwrap_err();
        assert!(err.message.contains(r#"found "two""#), "{}", err.message);
        let err =
            initialize(params(json!({"protocol_version": 2, "host": {"name": 1}}))).unwrap_err();
        assert_eq!(
            err.message,
            "invalid params for `initialize`: `/host/name` must be a string, found 1"
        );
        let err = initialize(None).unwrap_err();
        assert!(err.message.starts_with(
            "invalid params for `initialize`: params are missing; expected an object like"
        ));
    }

    #[test]
    fn values_are_read_strictly() {
        let map = |v: Value| v.as_object().unwrap().clone();
        let ok = values("m", &map(json!({"values": [{"key": "a", "value": "1"}]}))).unwrap();
        assert_eq!(ok, vec![Pair::new("a", "1")]);
        let cases = [
            (json!({}), "member `/values` is required"),
            (
                json!({"values": {}}),
                r#"`/values` must be an array of {"key": …, "value": …} objects, found an object"#,
            ),
            (
                json!({"values": [1]}),
                "`/values/0` must be an object with string members `key` and `value`, found 1",
            ),
            (
                json!({"values": [{"key": "a", "value": 5}]}),
                "`/values/0/value` must be a string, found 5",
            ),
            (
                json!({"values": [{"key": "a", "value": "1"}, {"value": "2"}]}),
                "member `/values/1/key` is required",
            ),
            (
                json!({"values": [{"key": "a", "value": "1", "extra": 1}]}),
                r#"`/values/0` has an unknown member "extra"; a pair has only `key` and `value`"#,
            ),
        ];
        for (input, expected) in cases {
            let err = values("m", &map(input)).unwrap_err();
            assert_eq!(err.message, format!("invalid params for `m`: {expected}"));
        }
    }
}
