//! The methods of protocol 2, typed, over an [`ExtensionProcess`]: what the host sends
//! and the checks it applies to what comes back (SPEC section 1).
//!
//! Every result that breaks the protocol's shape is a -32001 protocol failure naming
//! the extension, the method and the offending member. Such a failure does not make
//! the extension unusable (the conversation itself is intact), except a version
//! mismatch in `initialize`, after which nothing else can be sent.
//!
//! Decisions where the specification is silent:
//!
//! - `initialize`: the result must be an object with `protocol_version` (an integer,
//!   or a string whose part before the first `.` is an integer); `name` and `version`,
//!   when present, must be strings.
//! - `describe`: `triggers` must be an array of objects with a non-empty string `type`
//!   (`description`, when present, a string).
//! - `trigger/schema`: `schema` must be present and be an object or a boolean (the two
//!   JSON Schema forms); `prompt_fields` may be absent (no fields) but when present is
//!   an array of objects with a non-empty string `key`.
//! - `trigger/validate`, `trigger/onStarted`, `trigger/onFinished`: any successful
//!   result is accepted (the protocol says `{}`; nothing depends on it).

use std::collections::HashSet;

use curupira_jsonrpc::ErrorCode;
use curupira_task_identity::Pair;
use serde_json::{Map, Value, json};

use crate::supervisor::{CallError, ExtensionProcess, short_json};

/// The protocol major version this host speaks.
pub const PROTOCOL_VERSION: u64 = 2;
/// Item keys the host provides itself; an extension may not send them.
pub const RESERVED_KEYS: [&str; 2] = ["repository", "automation"];

/// What `initialize` told about the extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The protocol version as the extension wrote it (`2`, `"2.1"`).
    pub protocol_version: String,
    /// The extension's name, when it gave one.
    pub name: Option<String>,
    /// The extension's version, when it gave one.
    pub version: Option<String>,
}

/// One trigger listed by `describe`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerInfo {
    /// The trigger type.
    pub trigger_type: String,
    /// Its description, when given.
    pub description: Option<String>,
}

/// A prompt field listed by `trigger/schema`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptField {
    /// The key the trigger's items carry.
    pub key: String,
    /// What it holds, when given.
    pub description: Option<String>,
}

/// The result of `trigger/schema`.
#[derive(Debug, Clone, PartialEq)]
pub struct TriggerSchema {
    /// The JSON Schema of the trigger's arguments.
    pub schema: Value,
    /// The keys its items carry.
    pub prompt_fields: Vec<PromptField>,
}

/// `initialize`: sends the host's protocol version and checks the major version of the
/// reply. A different major is a -32001 error naming both versions, and the extension
/// is then unusable.
pub fn initialize(process: &mut ExtensionProcess) -> Result<Hello, CallError> {
    const METHOD: &str = "initialize";
    let params = json!({
        "protocol_version": PROTOCOL_VERSION,
        "host": {"name": "curupira", "version": env!("CARGO_PKG_VERSION")},
    });
    let result = process.call(METHOD, Some(params))?;
    let extension = process.name().to_owned();
    let fail = |message: String| protocol_error(&extension, METHOD, message);
    let Value::Object(object) = &result else {
        return Err(fail(format!(
            "the result must be an object, found {}",
            short_json(&result)
        )));
    };
    let (written, major) = match object.get("protocol_version") {
        None => return Err(fail("the result has no `protocol_version`".to_owned())),
        Some(Value::Number(number)) => match number.as_u64() {
            Some(major) => (number.to_string(), major),
            None => {
                return Err(fail(format!(
                    "`protocol_version` must be an integer or a string like \"2.1\", found {number}"
                )));
            }
        },
        Some(Value::String(text)) => {
            let head = text.split('.').next().unwrap_or_default();
            let rest_ok = text
                .split('.')
                .skip(1)
                .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
            match head.parse::<u64>() {
                Ok(major) if head.bytes().all(|b| b.is_ascii_digit()) && rest_ok => {
                    (format!("\"{text}\""), major)
                }
                _ => {
                    return Err(fail(format!(
                        "`protocol_version` must be an integer or a string like \"2.1\", found \"{text}\""
                    )));
                }
            }
        }
        Some(other) => {
            return Err(fail(format!(
                "`protocol_version` must be an integer or a string like \"2.1\", found {}",
                short_json(other)
            )));
        }
    };
    if major != PROTOCOL_VERSION {
        let error = CallError::new(
            process.name(),
            METHOD,
            ErrorCode::PROTOCOL_FAILURE,
            format!(
                "protocol version mismatch: the host speaks version {PROTOCOL_VERSION}, the \
                 extension answered {written} (major {major})"
            ),
        );
        process.kill_with(&error);
        return Err(error);
    }
    let name = optional_string(object, "name").map_err(&fail)?;
    let version = optional_string(object, "version").map_err(&fail)?;
    Ok(Hello {
        protocol_version: written,
        name,
        version,
    })
}

/// `describe`: the triggers the extension offers.
pub fn describe(process: &mut ExtensionProcess) -> Result<Vec<TriggerInfo>, CallError> {
    const METHOD: &str = "describe";
    let result = process.call(METHOD, Some(json!({})))?;
    let extension = process.name().to_owned();
    let fail = |message: String| protocol_error(&extension, METHOD, message);
    let Some(triggers) = result.get("triggers") else {
        return Err(fail(format!(
            "the result must be an object with a `triggers` array, found {}",
            short_json(&result)
        )));
    };
    let Value::Array(items) = triggers else {
        return Err(fail(format!(
            "`triggers` must be an array, found {}",
            short_json(triggers)
        )));
    };
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Value::Object(object) = item else {
            return Err(fail(format!(
                "`triggers[{index}]` must be an object, found {}",
                short_json(item)
            )));
        };
        let trigger_type = match object.get("type") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                return Err(fail(format!(
                    "`triggers[{index}].type` must be a non-empty string"
                )));
            }
        };
        let description = optional_string(object, "description")
            .map_err(|message| fail(format!("`triggers[{index}]`: {message}")))?;
        out.push(TriggerInfo {
            trigger_type,
            description,
        });
    }
    Ok(out)
}

/// `trigger/schema`: the arguments' JSON Schema and the prompt fields.
pub fn schema(
    process: &mut ExtensionProcess,
    trigger_type: &str,
) -> Result<TriggerSchema, CallError> {
    const METHOD: &str = "trigger/schema";
    let result = process.call(METHOD, Some(json!({"trigger_type": trigger_type})))?;
    let extension = process.name().to_owned();
    let fail = |message: String| protocol_error(&extension, METHOD, message);
    let Value::Object(object) = &result else {
        return Err(fail(format!(
            "the result must be an object, found {}",
            short_json(&result)
        )));
    };
    let schema = match object.get("schema") {
        Some(schema @ (Value::Object(_) | Value::Bool(_))) => schema.clone(),
        Some(other) => {
            return Err(fail(format!(
                "`schema` must be a JSON Schema (an object or a boolean), found {}",
                short_json(other)
            )));
        }
        None => return Err(fail("the result has no `schema`".to_owned())),
    };
    let mut prompt_fields = Vec::new();
    match object.get("prompt_fields") {
        None => {}
        Some(Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                let key = match item.get("key") {
                    Some(Value::String(key)) if !key.is_empty() => key.clone(),
                    _ => {
                        return Err(fail(format!(
                            "`prompt_fields[{index}]` must be an object with a non-empty string `key`, found {}",
                            short_json(item)
                        )));
                    }
                };
                let description = match item.get("description") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(other) => {
                        return Err(fail(format!(
                            "`prompt_fields[{index}].description` must be a string, found {}",
                            short_json(other)
                        )));
                    }
                };
                prompt_fields.push(PromptField { key, description });
            }
        }
        Some(other) => {
            return Err(fail(format!(
                "`prompt_fields` must be an array, found {}",
                short_json(other)
            )));
        }
    }
    Ok(TriggerSchema {
        schema,
        prompt_fields,
    })
}

/// `trigger/validate`. A rejection (-32003) keeps the extension's message and appends
/// the reported errors ([`rejection_message`]); `data` stays available on the error.
pub fn validate(
    process: &mut ExtensionProcess,
    trigger_type: &str,
    arguments: &Map<String, Value>,
) -> Result<(), CallError> {
    let params = json!({"trigger_type": trigger_type, "arguments": arguments});
    match process.call("trigger/validate", Some(params)) {
        Ok(_) => Ok(()),
        Err(mut error) => {
            if error.code == ErrorCode::CONFIGURATION_INVALID {
                error.message = rejection_message(&error.message, error.data.as_ref());
            }
            Err(error)
        }
    }
}

/// A -32003 reply's message followed by each `data.errors` entry as `path: message`,
/// leaving out entries the message already contains (the SDK's message lists them).
pub fn rejection_message(message: &str, data: Option<&Value>) -> String {
    let listed: Vec<String> = validation_errors(data)
        .into_iter()
        .map(|(path, problem)| {
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            format!("{path}: {problem}")
        })
        .filter(|entry| !message.contains(entry.as_str()))
        .collect();
    if listed.is_empty() {
        message.to_owned()
    } else {
        format!("{message}; {}", listed.join("; "))
    }
}

/// The `(path, message)` pairs of a -32003 reply's `data.errors`, skipping entries that
/// do not have that shape.
pub fn validation_errors(data: Option<&Value>) -> Vec<(String, String)> {
    let Some(Value::Array(errors)) = data.and_then(|data| data.get("errors")) else {
        return Vec::new();
    };
    errors
        .iter()
        .filter_map(|entry| {
            let message = entry.get("message")?.as_str()?.to_owned();
            let path = entry
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            Some((path, message))
        })
        .collect()
}

/// `trigger/poll`: `None` when nothing was found, else one item's pairs, checked
/// (SPEC section 1, "Poll results").
pub fn poll(
    process: &mut ExtensionProcess,
    trigger_type: &str,
    arguments: &Map<String, Value>,
) -> Result<Option<Vec<Pair>>, CallError> {
    const METHOD: &str = "trigger/poll";
    let params = json!({"trigger_type": trigger_type, "arguments": arguments});
    let result = process.call(METHOD, Some(params))?;
    check_poll_result(&result).map_err(|message| protocol_error(process.name(), METHOD, message))
}

/// Checks a poll result; the error is one sentence naming the offending member.
///
/// ```
/// use curupira_host::protocol::check_poll_result;
/// use serde_json::json;
///
/// assert_eq!(check_poll_result(&json!({"values": null})), Ok(None));
/// assert_eq!(check_poll_result(&json!({"values": []})), Ok(Some(vec![])));
/// assert_eq!(
///     check_poll_result(&json!({"values": [{"key": "n", "value": 1}]})).unwrap_err(),
///     "`values[0].value` (key `n`) must be a string, found 1"
/// );
/// ```
pub fn check_poll_result(result: &Value) -> Result<Option<Vec<Pair>>, String> {
    let Value::Object(object) = result else {
        return Err(format!(
            "the result must be an object with a `values` member, found {}",
            short_json(result)
        ));
    };
    let items = match object.get("values") {
        None => {
            return Err(
                "the result has no `values` member (write `\"values\": null` when \
                        nothing was found)"
                    .to_owned(),
            );
        }
        Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(format!(
                "`values` must be null or an array of {{\"key\", \"value\"}} objects, found {}",
                short_json(other)
            ));
        }
    };
    let mut pairs = Vec::with_capacity(items.len());
    let mut seen = HashSet::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Value::Object(member) = item else {
            return Err(format!(
                "`values[{index}]` must be an object with `key` and `value`, found {}",
                short_json(item)
            ));
        };
        if let Some(extra) = member.keys().find(|k| *k != "key" && *k != "value") {
            return Err(format!(
                "`values[{index}]` has the member `{extra}`; an element has exactly `key` and `value`"
            ));
        }
        let key = string_member(member, index, "key", None)?;
        if key.is_empty() {
            return Err(format!(
                "`values[{index}].key` is empty; keys are non-empty"
            ));
        }
        if RESERVED_KEYS.contains(&key.as_str()) {
            return Err(format!(
                "`values[{index}]` uses the key `{key}`, which is reserved: the host provides it"
            ));
        }
        let value = string_member(member, index, "value", Some(key))?;
        if !seen.insert(key.as_str()) {
            return Err(format!(
                "`values[{index}]` repeats the key `{key}`; a key may appear once per item"
            ));
        }
        pairs.push(Pair::new(key.clone(), value.clone()));
    }
    Ok(Some(pairs))
}

/// The member `name` of the poll item `values[index]`, which must be a string; `key`
/// is the item's key once known, named in the messages.
fn string_member<'v>(
    member: &'v Map<String, Value>,
    index: usize,
    name: &str,
    key: Option<&str>,
) -> Result<&'v String, String> {
    let whose = || key.map(|key| format!(" (key `{key}`)")).unwrap_or_default();
    match member.get(name) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(format!(
            "`values[{index}].{name}`{} must be a string, found {}",
            whose(),
            short_json(other)
        )),
        None => Err(format!("`values[{index}]`{} has no `{name}`", whose())),
    }
}

/// `trigger/onStarted` with exactly the polled pairs.
pub fn on_started(
    process: &mut ExtensionProcess,
    trigger_type: &str,
    pairs: &[Pair],
) -> Result<(), CallError> {
    task_call(process, "trigger/onStarted", trigger_type, pairs)
}

/// `trigger/onFinished` with exactly the polled pairs.
pub fn on_finished(
    process: &mut ExtensionProcess,
    trigger_type: &str,
    pairs: &[Pair],
) -> Result<(), CallError> {
    task_call(process, "trigger/onFinished", trigger_type, pairs)
}

/// `onStarted` and `onFinished`: the polled pairs sent back, any result ignored.
fn task_call(
    process: &mut ExtensionProcess,
    method: &str,
    trigger_type: &str,
    pairs: &[Pair],
) -> Result<(), CallError> {
    let params = json!({"trigger_type": trigger_type, "values": pairs});
    process.call(method, Some(params)).map(drop)
}

fn protocol_error(extension: &str, method: &str, message: String) -> CallError {
    CallError::new(extension, method, ErrorCode::PROTOCOL_FAILURE, message)
}

fn optional_string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "`{key}` must be a string, found {}",
            short_json(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn err(value: Value) -> String {
        check_poll_result(&value).unwrap_err()
    }

    #[test]
    fn null_ends_and_empty_array_is_an_item() {
        assert_eq!(check_poll_result(&json!({"values": null})), Ok(None));
        assert_eq!(check_poll_result(&json!({"values": []})), Ok(Some(vec![])));
    }

    #[test]
    fn pairs_keep_their_order() {
        let pairs = check_poll_result(&json!({"values": [
            {"key": "b", "value": "2"}, {"value": "1", "key": "a"}, {"key": "issue-number", "value": ""}
        ]}))
        .unwrap()
        .unwrap();
        assert_eq!(
            pairs,
            [
                Pair::new("b", "2"),
                Pair::new("a", "1"),
                Pair::new("issue-number", "")
            ]
        );
    }

    #[test]
    fn missing_values_differs_from_null() {
        assert!(err(json!({})).contains("no `values` member"));
        assert!(err(json!({"value": null})).contains("no `values` member"));
        assert!(err(json!([])).contains("must be an object"));
    }

    #[test]
    fn each_rule_names_the_offending_member() {
        assert!(err(json!({"values": {}})).contains("`values` must be null or an array"));
        assert!(err(json!({"values": ["x"]})).contains("`values[0]` must be an object"));
        assert_eq!(
            err(json!({"values": [{"key": "a", "value": "1", "extra": 1}]})),
            "`values[0]` has the member `extra`; an element has exactly `key` and `value`"
        );
        assert!(err(json!({"values": [{"value": "1"}]})).contains("`values[0]` has no `key`"));
        assert!(
            err(json!({"values": [{"key": 1, "value": "1"}]}))
                .contains("`values[0].key` must be a string")
        );
        assert!(err(json!({"values": [{"key": "", "value": "1"}]})).contains("is empty"));
        for bad in [json!(1), json!(true), json!(null), json!({}), json!([])] {
            let message = err(json!({"values": [{"key": "n", "value": bad}]}));
            assert!(
                message.starts_with("`values[0].value` (key `n`) must be a string"),
                "{message}"
            );
        }
        assert!(err(json!({"values": [{"key": "n"}]})).contains("has no `value`"));
        for reserved in RESERVED_KEYS {
            let message = err(json!({"values": [{"key": reserved, "value": "x"}]}));
            assert!(
                message.contains(&format!("the key `{reserved}`, which is reserved")),
                "{message}"
            );
        }
        assert_eq!(
            err(json!({"values": [{"key": "a", "value": "1"}, {"key": "a", "value": "2"}]})),
            "`values[1]` repeats the key `a`; a key may appear once per item"
        );
    }

    #[test]
    fn rejection_message_lists_each_error_once() {
        let data = json!({"errors": [
            {"path": "/path", "message": "`path` is required"},
            {"path": "", "message": "unknown member `x`"},
        ]});
        assert_eq!(
            rejection_message("the arguments do not fit", Some(&data)),
            "the arguments do not fit; /path: `path` is required; /: unknown member `x`"
        );
        assert_eq!(
            rejection_message(
                "1 problem: /path: `path` is required",
                Some(&json!({"errors": [
                    {"path": "/path", "message": "`path` is required"},
                ]}))
            ),
            "1 problem: /path: `path` is required"
        );
        assert_eq!(rejection_message("bad", None), "bad");
    }

    #[test]
    fn validation_errors_are_read_from_data() {
        let data = json!({"errors": [
            {"path": "/labels", "message": "must be an array"},
            {"message": "no path"},
            {"path": "/x"}
        ]});
        assert_eq!(
            validation_errors(Some(&data)),
            [
                ("/labels".to_owned(), "must be an array".to_owned()),
                (String::new(), "no path".to_owned())
            ]
        );
        assert!(validation_errors(None).is_empty());
    }
}
