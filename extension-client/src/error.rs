//! The one error of a call.

use curupira_jsonrpc::ErrorCode;
use serde_json::Value;

/// A failed call: which extension, which method, which code, and why.
///
/// ```
/// use curupira_client::CallError;
/// use curupira_client::curupira_jsonrpc::ErrorCode;
///
/// let err = CallError::new("acme", "trigger/poll", ErrorCode::TIMEOUT, "no reply within 30 s");
/// assert_eq!(
///     err.to_string(),
///     "extension `acme`: trigger/poll failed: timeout (-32004): no reply within 30 s"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("extension `{extension}`: {method} failed: {code}: {message}")]
pub struct CallError {
    /// The extension's name, as the client was given it.
    pub extension: String,
    /// The method that failed (`trigger/poll`), or `start` when the process could not
    /// be started.
    pub method: String,
    /// The protocol error code.
    pub code: ErrorCode,
    /// One sentence saying what happened.
    pub message: String,
    /// The `data` of an error reply, when the extension sent one.
    pub data: Option<Value>,
}

impl CallError {
    /// A call error without data.
    pub fn new(
        extension: impl Into<String>,
        method: impl Into<String>,
        code: ErrorCode,
        message: impl Into<String>,
    ) -> Self {
        Self {
            extension: extension.into(),
            method: method.into(),
            code,
            message: message.into(),
            data: None,
        }
    }
}
