//! What a validation reports: one [`ValidationError`] per problem with an automation's
//! parameters, listed in an `ok: false` verdict's `error`, and the `data.errors` of a
//! -32003 error reply (the shape this project's earlier hosts read; the reference host
//! reports such a reply as a plugin error, and the official SDK uses -32003 only for
//! an unsupported `trigger_type`).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One problem with an automation's parameters: `{"path": pointer, "message": s}` in
/// a -32003 reply's `data.errors`, `path: message` in an `ok: false` verdict's `error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationError {
    /// RFC 6901 JSON Pointer into the trigger's parameters (`/labels/0`); a missing
    /// member is reported at the pointer it would have (`/path`). `""` is the whole
    /// object.
    pub path: String,
    /// One sentence saying what is wrong and what was expected.
    pub message: String,
}

impl ValidationError {
    /// A problem at a JSON Pointer written out by the caller (`"/labels/0"`).
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ValidationError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A problem with the top-level member `name`; the pointer is `/name`, with `~`
    /// and `/` escaped as RFC 6901 requires.
    pub fn member(name: &str, message: impl Into<String>) -> Self {
        ValidationError::new(crate::shape::child("", name), message)
    }
}

impl fmt::Display for ValidationError {
    /// `path: message`, with `(root)` for the whole object.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// The `data` of a -32003 reply: `{"errors": [{"path", "message"}, …]}`.
pub fn validation_data(errors: &[ValidationError]) -> Value {
    json!({ "errors": errors })
}

/// The entries of a -32003 reply's `data.errors`, skipping those without a string
/// `message` (a missing `path` is the whole object).
pub fn validation_errors(data: Option<&Value>) -> Vec<ValidationError> {
    error_entries(data.and_then(|data| data.get("errors")))
}

/// The entries of an `errors` array (`data.errors`, or an `ok: false` verdict's
/// `errors`), by the rules of [`validation_errors`].
pub(crate) fn error_entries(errors: Option<&Value>) -> Vec<ValidationError> {
    let Some(Value::Array(errors)) = errors else {
        return Vec::new();
    };
    errors
        .iter()
        .filter_map(|entry| {
            let message = entry.get("message")?.as_str()?;
            let path = entry.get("path").and_then(Value::as_str).unwrap_or("");
            Some(ValidationError::new(path, message))
        })
        .collect()
}

/// A -32003 reply's message followed by each `data.errors` entry (`path: message`)
/// that the message does not already contain (the Rust SDK's messages list them).
pub fn rejection_message(message: &str, data: Option<&Value>) -> String {
    let listed: Vec<String> = validation_errors(data)
        .iter()
        .map(ToString::to_string)
        .filter(|entry| !message.contains(entry.as_str()))
        .collect();
    if listed.is_empty() {
        message.to_owned()
    } else {
        format!("{message}; {}", listed.join("; "))
    }
}
