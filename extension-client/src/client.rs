//! [`Client`]: one conversation with one extension.

use std::fmt;
use std::process::Stdio;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use curupira_framing::FrameEncoder;
use curupira_jsonrpc::{ErrorCode, Id, Message, Params, Request};
use curupira_protocol::method::{
    Describe, Initialize, Method, OnFinished, OnStarted, Poll, Schema, Shutdown, Validate,
};
use curupira_protocol::{
    Configuration, DescribeResult, HostCapabilities, InitializeParams, InitializeResult, NoParams,
    Pair, Peer, PeerInfo, PollParams, PollResult, ProtocolVersion, SchemaParams, TaskParams,
    TriggerSchema, ValidateParams, ValidateResult, Wire as _, check_compatible, rejection_message,
};
use serde_json::Value;

use crate::memory::{PipeReader, PipeWriter};
use crate::stderr::{StderrSink, drain, log_stderr_line};
use crate::wire::{MemoryWire, Received, TimedOut, Wire};
use crate::{CallError, LaunchCommand, Options};
use curupira_process::{ProcessGuard, describe_status};

/// How long to wait for the I/O threads to end once the process is gone.
const THREAD_GRACE: Duration = Duration::from_millis(500);
/// How often the wait for the I/O threads checks on them.
const POLL_STEP: Duration = Duration::from_millis(5);
/// How long a transport failure waits for the process's exit status, to name it.
const STATUS_WAIT: Duration = Duration::from_millis(200);

/// Why an extension stopped being usable: the first fatal failure.
#[derive(Debug, Clone)]
struct Fatal {
    code: ErrorCode,
    message: String,
}

/// A conversation with one extension, a child process ([`Client::spawn`]) or an
/// extension in this process ([`memory::duplex`](crate::memory::duplex)): one request
/// at a time, each with a fresh integer id and a deadline.
///
/// A failure that leaves the conversation in doubt (see the crate's table) makes the
/// client *dead*: the process is killed at once and every later call fails
/// immediately with the same cause. Dropping the client kills and reaps the process;
/// [`shutdown`](Self::shutdown) ends it politely first.
pub struct Client {
    name: String,
    /// Boxed: its buffers and codec state would make this handle large to move.
    wire: Box<Wire>,
    /// The child process; `None` in memory, and once it was reaped.
    process: Option<ProcessGuard>,
    /// The stderr drain (and, off Unix, the pipe threads).
    threads: Vec<JoinHandle<()>>,
    encoder: FrameEncoder,
    next_id: u64,
    fatal: Option<Fatal>,
    options: Options,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.name)
            .field("pid", &self.pid())
            .field("fatal", &self.fatal)
            .finish_non_exhaustive()
    }
}

/// How an extension ended after [`Client::shutdown`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself after `shutdown` and the closing of its stdin: how
    /// (`exited with status 0`). In memory: it dropped its end (`closed its end`).
    Exited(String),
    /// It did not exit within the grace period and was killed (in memory: its ends
    /// were dropped).
    Killed,
    /// It had already failed, and was killed then.
    AlreadyFailed,
}

impl Client {
    /// Starts an extension, its stderr lines logged with [`log_stderr_line`]. A failure
    /// to start is a -32000 [`CallError`] for method `start`.
    pub fn spawn(name: &str, launch: &LaunchCommand, options: Options) -> Result<Self, CallError> {
        let extension = name.to_owned();
        let sink: StderrSink = Box::new(move |line: &str| log_stderr_line(&extension, line));
        Self::spawn_with_stderr(name, launch, options, sink)
    }

    /// Starts an extension whose stderr lines go to `stderr` (called on a thread of
    /// its own, `ext-NAME-err`, until the extension's stderr closes).
    pub fn spawn_with_stderr(
        name: &str,
        launch: &LaunchCommand,
        options: Options,
        mut stderr: StderrSink,
    ) -> Result<Self, CallError> {
        let start_failure =
            |message: String| CallError::new(name, "start", ErrorCode::TRANSPORT_FAILURE, message);
        let mut command = launch.command();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut guard = ProcessGuard::spawn(&mut command).map_err(|err| {
            start_failure(format!(
                "cannot start `{launch}` in {}: {}",
                launch.cwd.display(),
                launch.start_failure(&err)
            ))
        })?;
        let (Some(stdin), Some(stdout), Some(errors)) =
            (guard.take_stdin(), guard.take_stdout(), guard.take_stderr())
        else {
            return Err(start_failure(
                "the extension's pipes could not be opened".to_owned(),
            ));
        };
        // On failure the guard is dropped, which kills and reaps the child; a thread
        // already started ends when its pipe closes.
        let thread_name = name.replace('\0', "");
        let cap = options.limits.stderr_line_bytes;
        let pid = guard.id();
        let started = thread::Builder::new()
            .name(format!("ext-{thread_name}-err"))
            .spawn(move || drain(errors, cap, &mut stderr))
            .and_then(|drain| {
                let (wire, mut threads) = Wire::pipes(
                    &thread_name,
                    stdin,
                    stdout,
                    options.limits.max_frame_bytes,
                    pid,
                )?;
                threads.push(drain);
                Ok((wire, threads))
            });
        let (wire, threads) = started.map_err(|err| {
            start_failure(format!("cannot set up the I/O with the extension: {err}"))
        })?;
        let client = Self::new(name, wire, Some(guard), threads, options);
        tracing::debug!(extension = %name, pid, "started `{launch}`");
        Ok(client)
    }

    /// A client over memory pipes (see [`memory::duplex`](crate::memory::duplex)).
    pub(crate) fn over_memory(
        name: &str,
        output: PipeWriter,
        input: PipeReader,
        options: Options,
    ) -> Self {
        let wire = MemoryWire::new(output, input, options.limits.max_frame_bytes);
        Self::new(name, Wire::Memory(wire), None, Vec::new(), options)
    }

    fn new(
        name: &str,
        wire: Wire,
        process: Option<ProcessGuard>,
        threads: Vec<JoinHandle<()>>,
        options: Options,
    ) -> Self {
        Client {
            name: name.to_owned(),
            wire: Box::new(wire),
            process,
            threads,
            encoder: FrameEncoder::with_max_body(options.limits.max_frame_bytes),
            next_id: 1,
            fatal: None,
            options,
        }
    }

    /// The extension's name, as the client was given it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The process id, while there is a process (never in memory).
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ProcessGuard::id)
    }

    /// The options the client was created with.
    pub fn options(&self) -> Options {
        self.options
    }

    /// Whether an earlier failure made the extension unusable.
    pub fn is_dead(&self) -> bool {
        self.fatal.is_some()
    }

    /// The failure that made the extension unusable, as an error for `method`.
    pub fn failure(&self, method: &str) -> Option<CallError> {
        self.fatal.as_ref().map(|_| self.error_for(method))
    }

    /// Sends a request of method `M` and reads its result strictly
    /// ([`Wire::read`](curupira_protocol::Wire::read)). A result of the wrong shape is
    /// a -32001 protocol failure whose message is the [`ShapeError`] sentence
    /// (`` `/values/0/value` must be a string, found 1 ``); it leaves the conversation
    /// intact, so the client stays alive.
    ///
    /// [`ShapeError`]: curupira_protocol::ShapeError
    pub fn request<M: Method>(&mut self, params: &M::Params) -> Result<M::Result, CallError> {
        let params = curupira_protocol::to_json(params).map_err(|err| {
            CallError::new(
                &self.name,
                M::NAME,
                ErrorCode::INVALID_PARAMS,
                format!("the params cannot be written as JSON: {err}"),
            )
        })?;
        // Params written as `null` (`describe`, `shutdown`) are sent as no `params`
        // member: JSON-RPC 2.0 allows only structured params, and every extension
        // reads absent and `null` params alike.
        let params = (!params.is_null()).then_some(params);
        let result = self.call(M::NAME, params)?;
        self.read_result::<M>(&result)
    }

    /// Reads the result of a request of method `M`.
    fn read_result<M: Method>(&self, result: &Value) -> Result<M::Result, CallError> {
        M::Result::read(Some(result)).map_err(|shape| {
            CallError::new(
                &self.name,
                M::NAME,
                ErrorCode::PROTOCOL_FAILURE,
                shape.to_string(),
            )
        })
    }

    /// `initialize`: sends protocol version 2, who the host is (`client_info`) and
    /// what the client reads beyond the reference protocol
    /// ([`HostCapabilities::ALL`], which the official SDK ignores), and checks the version of the reply ([`check_compatible`]). A different major
    /// is a -32001 error naming both versions, and the extension is killed: nothing
    /// else may be sent.
    pub fn initialize(&mut self, client_info: PeerInfo) -> Result<InitializeResult, CallError> {
        let params = InitializeParams {
            protocol_version: ProtocolVersion::CURRENT,
            client_info: Some(client_info),
            capabilities: HostCapabilities::ALL,
        };
        let result = self.request::<Initialize>(&params)?;
        if let Err(mismatch) = check_compatible(result.protocol_version, Peer::Extension) {
            let error = CallError::new(
                &self.name,
                Initialize::NAME,
                ErrorCode::PROTOCOL_FAILURE,
                mismatch.to_string(),
            );
            self.kill_with(&error);
            return Err(error);
        }
        Ok(result)
    }

    /// `describe`: the trigger types (and agent providers) the extension offers.
    pub fn describe(&mut self) -> Result<DescribeResult, CallError> {
        self.request::<Describe>(&NoParams)
    }

    /// `trigger/schema`: a trigger type's parameters schema and prompt fields.
    pub fn schema(&mut self, trigger_type: &str) -> Result<TriggerSchema, CallError> {
        self.request::<Schema>(&SchemaParams {
            trigger_type: trigger_type.to_owned(),
        })
    }

    /// `trigger/validate` with the automation's table. The extension's verdict is the
    /// result, `Ok` whether it accepted or rejected the configuration: a rejection is
    /// [`ValidateResult::Rejected`], never an error. A -32003 error reply (how
    /// extensions written for this project's earlier hosts reject; the reference host
    /// reports it as a plugin error, not a configuration error) is an error that keeps
    /// the extension's message and appends each reported error ([`rejection_message`]);
    /// `data` stays on the error.
    pub fn validate(
        &mut self,
        trigger_type: &str,
        configuration: &Configuration,
    ) -> Result<ValidateResult, CallError> {
        let params = ValidateParams {
            trigger_type: trigger_type.to_owned(),
            configuration: configuration.clone(),
        };
        self.request::<Validate>(&params).map_err(|mut error| {
            if error.code == ErrorCode::CONFIGURATION_INVALID {
                error.message = rejection_message(&error.message, error.data.as_ref());
            }
            error
        })
    }

    /// `trigger/poll`: `None` when nothing was found, else one item's pairs, checked
    /// against the item rules (a broken rule is a -32001 naming the pair).
    pub fn poll(&mut self, params: &PollParams) -> Result<Option<Vec<Pair>>, CallError> {
        self.poll_result(params).map(|result| result.values)
    }

    /// `trigger/poll`, with everything its result says: the item and, from an
    /// extension that reports it (the client announces
    /// [`HostCapabilities::poll_rejected`] in [`initialize`](Self::initialize)), how
    /// many entries of its source it skipped as unreadable during this poll.
    pub fn poll_result(&mut self, params: &PollParams) -> Result<PollResult, CallError> {
        self.request::<Poll>(params)
    }

    /// `trigger/onStarted` with exactly the polled pairs; any result is accepted.
    pub fn on_started(&mut self, trigger_type: &str, values: &[Pair]) -> Result<(), CallError> {
        self.request::<OnStarted>(&task_params(trigger_type, values))
            .map(drop)
    }

    /// `trigger/onFinished` with exactly the polled pairs; any result is accepted.
    pub fn on_finished(&mut self, trigger_type: &str, values: &[Pair]) -> Result<(), CallError> {
        self.request::<OnFinished>(&task_params(trigger_type, values))
            .map(drop)
    }

    /// Sends a request of any method with any params and waits for its result with the
    /// timeout for `method` ([`Timeouts::for_method`](crate::Timeouts::for_method)).
    /// The result is not checked: see [`request`](Self::request) for that.
    pub fn call(&mut self, method: &str, params: Option<Value>) -> Result<Value, CallError> {
        let timeout = self.options.timeouts.for_method(method);
        self.call_with_timeout(method, params, timeout)
    }

    /// Sends a request and waits at most `timeout` for its result.
    pub fn call_with_timeout(
        &mut self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        if self.fatal.is_some() {
            return Err(self.error_for(method));
        }
        let params = match params.map(Params::try_from).transpose() {
            Ok(params) => params,
            Err(err) => {
                return Err(CallError::new(
                    &self.name,
                    method,
                    ErrorCode::INVALID_PARAMS,
                    format!("the host built invalid params: {err}"),
                ));
            }
        };
        let id = self.next_id;
        self.next_id += 1;
        let body = Message::from(Request::new(id, method, params)).to_vec();
        if let Err(err) = self.encoder.header(body.len()) {
            return Err(CallError::new(
                &self.name,
                method,
                ErrorCode::TRANSPORT_FAILURE,
                format!("the request cannot be sent: {err} (`max_frame_bytes`)"),
            ));
        }
        tracing::trace!(extension = %self.name, "→ {}", String::from_utf8_lossy(&body));
        let deadline = deadline_after(timeout);
        // One request is in flight at a time, so the next thing received settles it.
        let received = match self.wire.exchange(&body, deadline) {
            Ok(received) => received,
            Err(TimedOut) => {
                self.die(
                    ErrorCode::TIMEOUT,
                    format!("no reply within {}", seconds(timeout)),
                );
                return Err(self.error_for(method));
            }
        };
        match received {
            Received::Message(Ok(Message::Response(response))) => {
                if response.id != Id::from(id) {
                    self.die(
                        ErrorCode::PROTOCOL_FAILURE,
                        format!(
                            "it answered request id {id} with a response for id {}",
                            response.id
                        ),
                    );
                    return Err(self.error_for(method));
                }
                return match response.result {
                    Ok(result) => {
                        tracing::trace!(extension = %self.name, "← {method}: {result}");
                        Ok(result)
                    }
                    Err(error) => Err(CallError {
                        extension: self.name.clone(),
                        method: method.to_owned(),
                        code: error.code,
                        message: format!("the extension replied with an error: {}", error.message),
                        data: error.data,
                    }),
                };
            }
            Received::Message(Ok(Message::Request(request))) => self.die(
                ErrorCode::PROTOCOL_FAILURE,
                format!(
                    "it sent a request (`{}`) while the host waited for a reply; extensions \
                     only answer",
                    request.method
                ),
            ),
            Received::Message(Ok(Message::Notification(notification))) => self.die(
                ErrorCode::PROTOCOL_FAILURE,
                format!(
                    "it sent a notification (`{}`) while the host waited for a reply; \
                     extensions only answer",
                    notification.method
                ),
            ),
            Received::Message(Err(failure)) => {
                let what = if failure.code() == ErrorCode::PARSE_ERROR {
                    "a frame body that is not JSON"
                } else {
                    "a message that is not valid JSON-RPC 2.0"
                };
                self.die(
                    failure.code(),
                    format!("it sent {what}: {}", failure.message()),
                );
            }
            Received::BadFrame(err) => self.die(
                ErrorCode::TRANSPORT_FAILURE,
                format!("bad frame on stdout: {err}"),
            ),
            Received::Closed => {
                let status = self.exit_status_soon();
                self.die(
                    ErrorCode::TRANSPORT_FAILURE,
                    format!("the extension closed its stdout ({status})"),
                );
            }
            Received::WriteFailed(err) => {
                let status = self.exit_status_soon();
                self.die(
                    ErrorCode::TRANSPORT_FAILURE,
                    format!("cannot write to the extension's stdin: {err} ({status})"),
                );
            }
            Received::Exited => {
                let status = self.exit_status_soon();
                self.die(
                    ErrorCode::TRANSPORT_FAILURE,
                    format!(
                        "the extension {status} without replying (a process it started still \
                         holds its stdout)"
                    ),
                );
            }
            Received::WaitFailed(err) => self.die(
                ErrorCode::TRANSPORT_FAILURE,
                format!("cannot wait for the extension's pipes: {err}"),
            ),
        }
        Err(self.error_for(method))
    }

    /// Shuts the extension down (SPEC section 1): sends `shutdown`, waits for the reply
    /// (the shutdown timeout), closes its stdin, waits the same time again for the
    /// process to exit, then kills it; it is reaped either way. Returns how it ended,
    /// or the error of the `shutdown` request.
    pub fn shutdown(mut self) -> Result<Ending, CallError> {
        if self.fatal.is_some() {
            self.finish();
            return Ok(Ending::AlreadyFailed);
        }
        // Without params, as the protocol's table shows `shutdown`.
        let outcome = self
            .call(Shutdown::NAME, None)
            .and_then(|result| self.read_result::<Shutdown>(&result))
            .map(drop);
        if self.fatal.is_some() {
            // Timed out or broke: already killed.
            self.finish();
            return outcome.map(|()| Ending::AlreadyFailed);
        }
        self.wire.close_input();
        let grace = self.options.timeouts.shutdown;
        let exited = match (self.process.as_mut(), self.wire.as_mut()) {
            (Some(guard), _) => guard.wait_for(grace).map(describe_status),
            (None, Wire::Memory(wire)) => wire
                .wait_closed(deadline_after(grace))
                .then(|| "closed its end".to_owned()),
            #[cfg(unix)]
            (None, Wire::Polled(_)) => None,
            #[cfg(not(unix))]
            (None, Wire::Threaded(_)) => None,
        };
        let ending = match exited {
            Some(how) => Ending::Exited(how),
            None => {
                tracing::warn!(
                    "[{}] did not exit within {} of `shutdown`; killing it",
                    self.name,
                    seconds(grace)
                );
                Ending::Killed
            }
        };
        self.finish();
        outcome.map(|()| ending)
    }

    /// Makes the extension unusable because of `error` (a failure found above the
    /// transport, such as a version mismatch): the process is killed and later calls
    /// fail with the same cause.
    pub fn kill_with(&mut self, error: &CallError) {
        self.die(error.code, error.message.clone());
    }

    /// Records the first fatal failure and kills the process (in memory: closes the
    /// extension's input).
    fn die(&mut self, code: ErrorCode, message: String) {
        if self.fatal.is_none() {
            tracing::debug!(extension = %self.name, "unusable from now on: {code}: {message}");
            self.fatal = Some(Fatal { code, message });
        }
        match self.process.as_mut() {
            Some(guard) => guard.kill(),
            None => self.wire.close_input(),
        }
    }

    /// The recorded fatal failure as an error for `method`.
    fn error_for(&self, method: &str) -> CallError {
        match &self.fatal {
            Some(fatal) => CallError::new(&self.name, method, fatal.code, fatal.message.clone()),
            None => CallError::new(
                &self.name,
                method,
                ErrorCode::INTERNAL_ERROR,
                "the client lost track of the failure",
            ),
        }
    }

    /// How the process ended, waiting briefly for it (its stdout just closed, so it
    /// is usually exiting).
    fn exit_status_soon(&mut self) -> String {
        match self.process.as_mut() {
            Some(guard) => match guard.wait_for(STATUS_WAIT) {
                Some(status) => describe_status(status),
                None => "the process is still running".to_owned(),
            },
            None => "its in-memory end was dropped".to_owned(),
        }
    }

    /// Kills what is left, reaps the child and lets the I/O threads end.
    fn finish(&mut self) {
        self.wire.close_input();
        if let Some(mut guard) = self.process.take() {
            guard.kill();
            let _ = guard.wait();
        }
        let deadline = Instant::now() + THREAD_GRACE;
        for handle in self.threads.drain(..) {
            while !handle.is_finished() && Instant::now() < deadline {
                thread::sleep(POLL_STEP);
            }
            if handle.is_finished() {
                let _ = handle.join();
            }
            // Otherwise a descendant that left the process group still holds a pipe;
            // the thread ends when that pipe closes.
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.finish();
    }
}

fn task_params(trigger_type: &str, values: &[Pair]) -> TaskParams {
    TaskParams {
        trigger_type: trigger_type.to_owned(),
        values: values.to_vec(),
    }
}

/// `timeout` from now; a timeout too long to express (`Duration::MAX`) is a century.
fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400))
}

/// `30 s`, `1.5 s`: a duration in a message.
fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}
