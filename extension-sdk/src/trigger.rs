//! The [`Trigger`] trait an extension implements, and the values it trades with the
//! serve loop.

use curupira_jsonrpc::{ErrorCode, ErrorObject};
use curupira_protocol::{
    Arguments, Configuration, Pair, TriggerDescription, TriggerSchema, ValidationError,
    is_core_key, parameters,
};
use serde_json::Value;

/// What a host said about a poll besides the trigger's parameters: `limit` and
/// `preview` of `trigger/poll`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PollContext {
    /// The most items the host takes this round (the automation's `batch_size`), when
    /// it said; the host stops polling after that many anyway.
    pub limit: Option<u64>,
    /// Whether this is a dry run: the host will start no agent for what this poll
    /// returns, so change nothing on its account (nothing marked as handed out).
    pub preview: bool,
}

impl PollContext {
    /// A context with `limit` and `preview`, for calling a trigger's poll in a test.
    pub fn new(limit: Option<u64>, preview: bool) -> Self {
        PollContext { limit, preview }
    }
}

/// What a trigger extension does. The serve loop ([`serve`](crate::serve)) calls these
/// methods, one request at a time, and turns their results into protocol replies.
///
/// One extension may offer several trigger types: every method except
/// [`describe`](Self::describe) receives the local name of the `trigger_type` the host
/// asked for (`gh/github-issues` is resolved to `github-issues`, by its last `/`
/// segment, as the official SDK does), and the serve loop has already checked that it
/// is one of the types `describe` lists (another type is answered with configuration
/// validation failure, -32003 `unsupported trigger_type …`, or `ok: false` in
/// `trigger/validate`, without calling the trait).
///
/// The methods receive the trigger's *parameters*: the automation's table without the
/// host's core keys (`trigger_type`, `repository`, `prompt`, `profile`, `checkout`).
///
/// This is the low-level interface, in the protocol's own terms (JSON Schema and
/// arguments as JSON values, items as pairs). [`App`](crate::App) implements it for
/// typed triggers ([`TypedTrigger`](crate::TypedTrigger)), which is usually what an
/// extension wants.
///
/// A panic inside a method ends the process; the host sees the pipe close (a transport
/// failure). Return a [`TriggerError`] instead.
pub trait Trigger {
    /// The trigger types this extension offers (`describe`). Called for every request
    /// that names a trigger type, so keep it cheap and stable.
    fn describe(&self) -> Vec<TriggerDescription>;

    /// The JSON Schema of a trigger type's parameters and the prompt fields its items
    /// carry (`trigger/schema`). By default
    /// [`validate_configuration`](Self::validate_configuration) fills in the `default`
    /// of each top-level property the automation leaves out before it calls
    /// [`validate`](Self::validate).
    fn schema(&self, trigger_type: &str) -> Result<TriggerSchema, TriggerError>;

    /// Checks an automation's parameters, defaults filled in (`trigger/validate`).
    /// Report every problem at once as [`ValidateError::Invalid`] (the serve loop
    /// answers `{"ok": false, "error": "…"}` listing them), or say it in your own
    /// sentence with [`ValidateError::Rejected`].
    fn validate(&self, trigger_type: &str, arguments: &Arguments) -> Result<(), ValidateError>;

    /// What `trigger/validate` answers: the automation's whole table (`configuration`,
    /// core keys included) normalised, which the host sends back as `automation` with
    /// every later poll; or why it does not fit.
    ///
    /// By default: the `default` of each top-level property of the trigger's
    /// [`schema`](Self::schema) that the table lacks is filled in (core keys never
    /// are), [`validate`](Self::validate) checks the parameters (the table without its
    /// core keys), and the filled-in table is the answer. Override it when the
    /// normalised table is more than the defaults ([`App`](crate::App) fills in every
    /// parameter of its typed struct).
    fn validate_configuration(
        &self,
        trigger_type: &str,
        configuration: Configuration,
    ) -> Result<Configuration, ValidateError> {
        let schema = self.schema(trigger_type)?;
        let mut configuration = configuration;
        fill_defaults(&schema.schema, &mut configuration);
        self.validate(trigger_type, &parameters(&configuration))?;
        Ok(configuration)
    }

    /// The next work item, or `None` when there is nothing to do (`trigger/poll`).
    /// `Some(vec![])` is an item without fields.
    ///
    /// The serve loop refuses to send an item the host would reject (an empty key, a
    /// key that appears twice, or the reserved keys `repository` and `automation`) and
    /// answers internal error (-32603) instead, naming the key.
    fn poll(
        &mut self,
        trigger_type: &str,
        arguments: &Arguments,
    ) -> Result<Option<Vec<Pair>>, TriggerError>;

    /// [`poll`](Self::poll) with what else the host said (`limit`, `preview`): what
    /// the serve loop calls. Calls `poll` by default; override it when a dry run must
    /// change nothing or the limit matters.
    fn poll_in(
        &mut self,
        trigger_type: &str,
        arguments: &Arguments,
        context: PollContext,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        let _ = context;
        self.poll(trigger_type, arguments)
    }

    /// How many entries of its source the last [`poll_in`](Self::poll_in) skipped
    /// because it could not read them, counted since the last call: the serve loop
    /// calls it after each poll and sends the count as the result's `rejected` to a
    /// host that announced it reads it (**ours**, [`HostCapabilities::poll_rejected`];
    /// never to the reference host, which refuses the member). Say why on stderr as
    /// well: the count is for the host's round summary. 0 by default.
    ///
    /// [`HostCapabilities::poll_rejected`]: curupira_protocol::HostCapabilities::poll_rejected
    fn take_rejected(&mut self) -> u64 {
        0
    }

    /// The host is about to work on an item this extension polled
    /// (`trigger/onStarted`); `values` are exactly the polled pairs. Does nothing by
    /// default.
    fn on_started(&mut self, trigger_type: &str, values: &[Pair]) -> Result<(), TriggerError> {
        let _ = (trigger_type, values);
        Ok(())
    }

    /// The host is done with an item, whether the agent succeeded or not
    /// (`trigger/onFinished`); `values` are exactly the polled pairs. Does nothing by
    /// default.
    fn on_finished(&mut self, trigger_type: &str, values: &[Pair]) -> Result<(), TriggerError> {
        let _ = (trigger_type, values);
        Ok(())
    }
}

/// Fills in the `default` of each top-level property of `schema` that
/// `configuration` lacks (core keys are the host's, never filled).
fn fill_defaults(schema: &Value, configuration: &mut Configuration) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (key, property) in properties {
        if is_core_key(key) || configuration.contains_key(key) {
            continue;
        }
        if let Some(default) = property.get("default") {
            configuration.insert(key.clone(), default.clone());
        }
    }
}

/// Why [`Trigger::validate`] did not accept the parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidateError {
    /// The parameters do not fit: answered with `{"ok": false, "error": "…"}`, the
    /// error listing every problem (`trigger 'count': /max: must be at least 1`).
    #[error("{}", list(.0))]
    Invalid(Vec<ValidationError>),
    /// The parameters do not fit, in the trigger's own words: answered with
    /// `{"ok": false, "error": "…"}` carrying exactly this sentence.
    #[error("{0}")]
    Rejected(String),
    /// Checking failed for another reason (a command could not run): answered with
    /// the error's own code.
    #[error(transparent)]
    Failed(TriggerError),
}

/// `path: message` of every problem, separated by `; `.
fn list(errors: &[ValidationError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl From<Vec<ValidationError>> for ValidateError {
    fn from(errors: Vec<ValidationError>) -> Self {
        ValidateError::Invalid(errors)
    }
}

impl From<ValidationError> for ValidateError {
    fn from(error: ValidationError) -> Self {
        ValidateError::Invalid(vec![error])
    }
}

impl From<TriggerError> for ValidateError {
    fn from(error: TriggerError) -> Self {
        ValidateError::Failed(error)
    }
}

/// A failed trigger method, answered with its code, message and optional `data`.
///
/// Pick the code that says whose fault it is: [`internal`](Self::internal) (-32603)
/// for the extension's own failures (a file it cannot read, a line it cannot parse),
/// [`command_failed`](Self::command_failed) (-32002) when an external command it ran
/// failed, [`invalid_params`](Self::invalid_params) (-32602) when the request does not
/// fit. The message is one sentence naming what failed and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct TriggerError {
    code: ErrorCode,
    message: String,
    data: Option<Value>,
}

impl TriggerError {
    /// An error with any code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        TriggerError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Internal error (-32603): the extension failed in a way of its own.
    pub fn internal(message: impl Into<String>) -> Self {
        TriggerError::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// Command failure (-32002): an external command the extension ran failed.
    pub fn command_failed(message: impl Into<String>) -> Self {
        TriggerError::new(ErrorCode::COMMAND_FAILURE, message)
    }

    /// Invalid params (-32602): the request does not fit this trigger.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        TriggerError::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// The same error with a `data` member in the reply.
    pub fn with_data(self, data: Value) -> Self {
        TriggerError {
            data: Some(data),
            ..self
        }
    }

    /// The error code of the reply.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The one-sentence message of the reply.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `data` member of the reply, if any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }

    pub(crate) fn into_error_object(self) -> ErrorObject {
        let error = ErrorObject::new(self.code, self.message);
        match self.data {
            Some(data) => error.with_data(data),
            None => error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_error_display_shows_code_name_and_number() {
        let err = TriggerError::command_failed("`gh` exited with status 1");
        assert_eq!(
            err.to_string(),
            "command failure (-32002): `gh` exited with status 1"
        );
    }
}
