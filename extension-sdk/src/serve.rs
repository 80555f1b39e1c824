//! The serve loop: frames in, one reply per request out.

use std::io::{Read, Write};

use curupira_framing::{DEFAULT_MAX_BODY, DecodeError, EncodeError, FrameReader, FrameWriter};
use curupira_jsonrpc::{ErrorCode, ErrorObject, Message, Request, Response, parse_message};
use curupira_protocol::method::{self, Method};
use curupira_protocol::{
    Ack, Configuration, DescribeResult, InitializeResult, NoParams, Pair, Peer, PeerInfo,
    PollParams, PollResult, ProtocolVersion, SchemaParams, ShapeError, TaskParams, ValidateParams,
    ValidateResult, ValidationError, Wire, check_compatible, check_item, local_trigger_type,
    parameters,
};
use serde_json::{Value, json};

use crate::quote::quoted;
use crate::trigger::{PollContext, Trigger, ValidateError};

/// How [`serve`] runs: what `initialize` reports and how large a frame may be.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeOptions {
    /// The extension's name, sent as `server_info.name` in the `initialize` result
    /// and used as the prefix of its log lines on stderr. Usually the manifest's
    /// `name`; without one, `server_info` names this SDK.
    pub name: Option<String>,
    /// The extension's version, sent as `server_info.version`. Usually the manifest's
    /// `version`; without one, this SDK's version.
    pub version: Option<String>,
    /// The largest frame body read or written, in bytes; [`DEFAULT_MAX_BODY`] (16 MiB)
    /// unless changed.
    pub max_frame_bytes: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            name: None,
            version: None,
            max_frame_bytes: DEFAULT_MAX_BODY,
        }
    }
}

impl ServeOptions {
    /// Options that report `name` and `version` in `initialize`, with the default
    /// frame limit.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServeOptions {
            name: Some(name.into()),
            version: Some(version.into()),
            ..ServeOptions::default()
        }
    }

    /// The same options with another frame limit.
    pub fn with_max_frame_bytes(self, max_frame_bytes: usize) -> Self {
        ServeOptions {
            max_frame_bytes,
            ..self
        }
    }

    fn log(&self, message: &str) {
        let name = self.name.as_deref().unwrap_or("extension");
        eprintln!("{name}: {message}");
    }
}

/// Why [`serve`] returned normally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServeOutcome {
    /// The host sent `shutdown`; it got its `{}` reply.
    Shutdown,
    /// The input ended at a frame boundary (the host closed stdin).
    EndOfInput,
}

/// Why [`serve`] stopped early. Neither can be answered: there is no way to reply on a
/// stream that broke.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The input broke: a bad frame header, a frame over the limit, a truncated frame,
    /// or a read error. The stream cannot be resynchronised.
    #[error("cannot read the next request: {0}")]
    Read(DecodeError),
    /// A reply could not be written (the host closed the pipe).
    #[error("cannot write a reply: {0}")]
    Write(EncodeError),
}

/// Serves the protocol on `reader`/`writer` (stdin and stdout in production) until the
/// host sends `shutdown` or closes the input.
///
/// Give it a buffered `reader` (a locked stdin is one): a frame is read as its header
/// and then its body, which a buffer turns into one `read` per request. Each reply goes
/// to `writer` in one `write` (header and body together, for bodies up to 8 KiB) and
/// is flushed.
///
/// - Each request gets exactly one reply, written as a frame and flushed before the
///   next frame is read. Notifications and responses are ignored (a line on stderr
///   says so); nothing but frames is ever written to `writer`.
/// - `initialize` must come first: any trigger method or `describe` before it is
///   answered with protocol or version failure (-32001). A second `initialize` is
///   answered like the first. `shutdown` is answered (`{}`) at any time.
/// - A body that is not JSON gets parse error (-32700, `id: null`); JSON that is not a
///   valid request gets invalid request (-32600, with the request's id when it could
///   be read); a batch is refused with -32600.
/// - Unknown methods get method not found (-32601); params that do not fit the method
///   get invalid params (-32602) naming the member; a `trigger_type` that
///   [`Trigger::describe`] does not list gets configuration validation failure
///   (-32003) `unsupported trigger_type '…'` (in `trigger/validate`, the verdict
///   `ok: false` with that sentence).
/// - A reply larger than `max_frame_bytes` is replaced by an internal error (-32603)
///   saying so.
///
/// The crate docs list every decision ("What the serve loop decides").
pub fn serve<T, R, W>(
    trigger: &mut T,
    reader: R,
    writer: W,
    options: &ServeOptions,
) -> Result<ServeOutcome, ServeError>
where
    T: Trigger + ?Sized,
    R: Read,
    W: Write,
{
    let mut input = FrameReader::with_max_body(reader, options.max_frame_bytes);
    let mut output = FrameWriter::with_max_body(writer, options.max_frame_bytes);
    let mut session = Session {
        trigger,
        options,
        initialized: false,
        poll_rejected: false,
    };
    loop {
        let body = match input.read_frame() {
            Ok(Some(body)) => body,
            Ok(None) => return Ok(ServeOutcome::EndOfInput),
            Err(err) => return Err(ServeError::Read(err)),
        };
        let reply = match parse_message(&body) {
            Err(failure) => failure.into_reply(),
            Ok(Message::Request(request)) => {
                let shutdown = request.method == "shutdown";
                let reply = session.handle(request);
                if shutdown {
                    send(&mut output, reply, options)?;
                    return Ok(ServeOutcome::Shutdown);
                }
                reply
            }
            Ok(Message::Notification(notification)) => {
                options.log(&format!(
                    "ignoring notification {}: this protocol has none, and notifications are \
                     never answered",
                    Value::from(notification.method)
                ));
                continue;
            }
            Ok(Message::Response(response)) => {
                options.log(&format!(
                    "ignoring a response with id {}: an extension sends no requests",
                    response.id
                ));
                continue;
            }
        };
        send(&mut output, reply, options)?;
    }
}

fn send<W: Write>(
    output: &mut FrameWriter<W>,
    reply: Response,
    options: &ServeOptions,
) -> Result<(), ServeError> {
    let id = reply.id.clone();
    let mut body = Message::from(reply).to_vec();
    if body.len() > options.max_frame_bytes {
        let message = format!(
            "the reply is {} bytes, more than the maximum frame size of {} bytes",
            body.len(),
            options.max_frame_bytes
        );
        options.log(&message);
        body = Message::from(Response::internal_error(id, message)).to_vec();
    }
    output.write_frame(&body).map_err(ServeError::Write)?;
    output.flush().map_err(ServeError::Write)
}

struct Session<'a, T: ?Sized> {
    trigger: &'a mut T,
    options: &'a ServeOptions,
    initialized: bool,
    /// The host announced it reads a poll result's `rejected`.
    poll_rejected: bool,
}

impl<T: Trigger + ?Sized> Session<'_, T> {
    fn handle(&mut self, request: Request) -> Response {
        let Request { id, method, params } = request;
        let params = params.map(Value::from);
        let result = if method == method::Shutdown::NAME {
            read::<method::Shutdown>(params.as_ref()).and_then(|NoParams| to_value(&Ack))
        } else if method == method::Initialize::NAME {
            self.initialize(params.as_ref())
        } else if method::requires_initialize(&method) {
            if self.initialized {
                self.call(&method, params.as_ref())
            } else {
                Err(ErrorObject::new(
                    ErrorCode::PROTOCOL_FAILURE,
                    format!("`initialize` must come first: received `{method}` before it"),
                ))
            }
        } else {
            Err(ErrorObject::method_not_found(&method))
        };
        match result {
            Ok(value) => Response::ok(id, value),
            Err(error) => Response::err(id, error),
        }
    }

    fn initialize(&mut self, params: Option<&Value>) -> Result<Value, ErrorObject> {
        let params = read::<method::Initialize>(params)?;
        check_compatible(params.protocol_version, Peer::Host).map_err(|mismatch| {
            ErrorObject::new(ErrorCode::PROTOCOL_FAILURE, mismatch.to_string())
        })?;
        self.initialized = true;
        self.poll_rejected = params.capabilities.poll_rejected;
        let server_info = match (&self.options.name, &self.options.version) {
            (Some(name), Some(version)) => PeerInfo::new(name, version),
            (Some(name), None) => PeerInfo::new(name, env!("CARGO_PKG_VERSION")),
            (None, _) => PeerInfo::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
        };
        to_value(&InitializeResult {
            protocol_version: ProtocolVersion::CURRENT,
            server_info,
        })
    }

    /// A method that needs `initialize` first.
    fn call(&mut self, name: &str, params: Option<&Value>) -> Result<Value, ErrorObject> {
        if name == method::Describe::NAME {
            let NoParams = read::<method::Describe>(params)?;
            return to_value(&DescribeResult {
                triggers: self.trigger.describe(),
                agents: Vec::new(),
            });
        }
        if name == method::Schema::NAME {
            let SchemaParams { trigger_type } = read::<method::Schema>(params)?;
            let local = self.known(&trigger_type)?;
            let schema = self
                .trigger
                .schema(local)
                .map_err(|err| err.into_error_object())?;
            return to_value(&schema);
        }
        if name == method::Validate::NAME {
            let ValidateParams {
                trigger_type,
                configuration,
            } = read::<method::Validate>(params)?;
            return to_value(&self.validate(&trigger_type, configuration)?);
        }
        if name == method::Poll::NAME {
            let PollParams {
                trigger_type,
                automation,
                limit,
                preview,
            } = read::<method::Poll>(params)?;
            let local = self.known(&trigger_type)?;
            let context = PollContext { limit, preview };
            let polled = self
                .trigger
                .poll_in(local, &parameters(&automation), context);
            // Taken whether or not the poll succeeded, so that a count never carries
            // over to the next poll.
            let rejected = self.trigger.take_rejected();
            let values = polled.map_err(|err| err.into_error_object())?;
            if let Some(pairs) = &values {
                refuse_bad_item(local, pairs).inspect_err(|err| {
                    self.options.log(&err.message);
                })?;
            }
            let rejected = (self.poll_rejected && rejected > 0).then_some(rejected);
            return to_value(&PollResult { values, rejected });
        }
        // `trigger/onStarted` and `trigger/onFinished` take the same params.
        let started = name == method::OnStarted::NAME;
        let TaskParams {
            trigger_type,
            values,
        } = if started {
            read::<method::OnStarted>(params)?
        } else {
            read::<method::OnFinished>(params)?
        };
        let local = self.known(&trigger_type)?;
        let done = if started {
            self.trigger.on_started(local, &values)
        } else {
            self.trigger.on_finished(local, &values)
        };
        done.map_err(|err| err.into_error_object())?;
        to_value(&Ack)
    }

    /// `trigger/validate`: the verdict is a result; only a failure to check (the
    /// schema or the check itself failed) is an error reply.
    fn validate(
        &mut self,
        trigger_type: &str,
        configuration: Configuration,
    ) -> Result<ValidateResult, ErrorObject> {
        let local = match self.known(trigger_type) {
            Ok(local) => local.to_owned(),
            Err(error) => {
                return Ok(ValidateResult::Rejected {
                    error: Some(error.message),
                    errors: Vec::new(),
                });
            }
        };
        match self.trigger.validate_configuration(&local, configuration) {
            Ok(configuration) => Ok(ValidateResult::Accepted {
                configuration: Some(configuration),
            }),
            Err(ValidateError::Invalid(errors)) => Ok(ValidateResult::Rejected {
                error: Some(rejection(&local, &errors)),
                errors,
            }),
            Err(ValidateError::Rejected(error)) => Ok(ValidateResult::Rejected {
                error: Some(error),
                errors: Vec::new(),
            }),
            Err(ValidateError::Failed(err)) => Err(err.into_error_object()),
        }
    }

    /// The local name of `trigger_type` (its last `/` segment), when `describe` lists
    /// it; else the -32003 reply the official SDK gives, word for word
    /// (`unsupported trigger_type 'nope'`), with the types this extension offers as
    /// `data`: `{"trigger_types": ["…"]}`.
    fn known<'t>(&self, trigger_type: &'t str) -> Result<&'t str, ErrorObject> {
        let local = local_trigger_type(trigger_type);
        let known: Vec<String> = self
            .trigger
            .describe()
            .into_iter()
            .map(|d| d.trigger_type)
            .collect();
        if known.iter().any(|t| t == local) {
            return Ok(local);
        }
        Err(ErrorObject::new(
            ErrorCode::CONFIGURATION_INVALID,
            format!("unsupported trigger_type {}", quoted(trigger_type)),
        )
        .with_data(json!({ "trigger_types": known })))
    }
}

/// The `error` of an `ok: false` verdict: every problem, so a log line is enough.
fn rejection(trigger_type: &str, errors: &[ValidationError]) -> String {
    let listed = errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    if errors.is_empty() {
        format!("the parameters do not fit trigger {}", quoted(trigger_type))
    } else {
        format!("trigger {}: {listed}", quoted(trigger_type))
    }
}

/// A method's params read by the protocol's rules; a misfit is -32602 naming the
/// method and the member.
fn read<M: Method>(params: Option<&Value>) -> Result<M::Params, ErrorObject> {
    M::Params::read(params).map_err(|error: ShapeError| {
        ErrorObject::invalid_params(format!("invalid params for `{}`: {error}", M::NAME))
    })
}

/// Refuses an item the host would reject (the protocol's item rules), so the author
/// sees the mistake here.
fn refuse_bad_item(trigger_type: &str, pairs: &[Pair]) -> Result<(), ErrorObject> {
    check_item(pairs).map_err(|error| {
        ErrorObject::internal_error(format!(
            "trigger {} polled an item the host would reject: {error}",
            quoted(trigger_type)
        ))
    })
}

fn to_value(value: &impl serde::Serialize) -> Result<Value, ErrorObject> {
    serde_json::to_value(value).map_err(|err| {
        ErrorObject::internal_error(format!("cannot write the result as JSON: {err}"))
    })
}
