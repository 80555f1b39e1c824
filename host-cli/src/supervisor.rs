//! One extension process: started, spoken to in frames, timed, and always reaped.
//!
//! [`ExtensionProcess::spawn`] starts the extension with three pipes:
//!
//! - stdin and stdout carry frames, written and read by the thread that makes the call
//!   (on Unix: non-blocking pipes and `poll(2)`; elsewhere a reader and a writer
//!   thread, `ext-NAME-out` and `ext-NAME-in`). Every wait is bounded by the call's
//!   deadline, so a child that never reads its stdin, or never finishes a reply,
//!   cannot hold the host past the timeout. Frames are decoded with the configured
//!   maximum, and a framing error is final (the decoder is fused). See `wire.rs`.
//! - `ext-NAME-err`, a thread, drains stderr continuously, in 8 KiB reads, and forwards
//!   each line to the host's log (target `curupira::extension`) prefixed with
//!   `[NAME]`. A line longer than 4 KiB is cut there (the rest is counted, not kept),
//!   so 20 MB without a newline costs 4 KiB of memory.
//!
//! [`ExtensionProcess::call`] sends a request with a fresh integer id and waits for
//! the reply with a deadline: `[settings.timeouts] initialize` for `initialize`,
//! `shutdown` for `shutdown`, `request` for everything else. The deadline covers the
//! whole exchange: writing the request and reading every byte of the reply.
//!
//! # How failures are classified
//!
//! Every failure is a [`CallError`] naming the extension, the method and the code:
//!
//! | what happened | code | extension afterwards |
//! |---|---|---|
//! | no reply before the deadline | -32004 timeout | dead (killed) |
//! | bad frame header, frame over the maximum, stream ended inside a frame | -32000 transport failure | dead |
//! | stdout closed (the process exited or crashed), stdin closed, cannot start | -32000 transport failure | dead |
//! | a body that is not UTF-8 JSON | -32700 parse error | dead |
//! | JSON that is not a JSON-RPC 2.0 message (`"jsonrpc": "1.0"`, …) | -32600 invalid request | dead |
//! | a response with another id; a request or notification from the extension | -32001 protocol failure | dead |
//! | an error reply | the reply's code and message (`data` kept) | alive |
//!
//! -32700/-32600 are used rather than a blanket -32001 because they are exactly what
//! the protocol's table says those codes mean, and they tell an extension author more.
//! "Dead" means the conversation cannot be trusted any more (a reply may have been
//! lost or mismatched): the process is killed at once and every later call fails
//! immediately with the same cause (`extension already failed: …`).
//!
//! # Processes
//!
//! On Unix the extension runs in a process group of its own: a Ctrl-C in the terminal
//! reaches only the host (which then shuts extensions down in order), and killing the
//! group also kills whatever the extension started (`npx` starts `node`). The child
//! lives in a guard whose `Drop` kills the group and waits for the child, so no path,
//! panics included, leaves a zombie or a running extension behind.
//!
//! [`ExtensionProcess::shutdown`] follows SPEC section 1: send `shutdown`, wait for the
//! reply (the shutdown timeout), close stdin, wait the same time again for the process
//! to exit, then kill; always reap.

use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use curupira_framing::FrameEncoder;
use curupira_jsonrpc::{ErrorCode, Id, Message, Params, Request};
use serde_json::Value;

use crate::config::Timeouts;

mod wire;

use wire::{Event, TimedOut, Wire};

/// The log target extension stderr lines are forwarded to.
pub const STDERR_TARGET: &str = "curupira::extension";
/// Longest stderr line forwarded whole; the rest of a longer line is counted, not kept.
const STDERR_LINE_CAP: usize = 4096;
/// How often waits for a process check on it.
const POLL_STEP: Duration = Duration::from_millis(5);
/// How long to wait for the I/O threads to end once the process is gone.
const THREAD_GRACE: Duration = Duration::from_millis(500);

/// How to start an extension: a program, its arguments and its working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchCommand {
    /// The program: a path, or a name looked up on `PATH`.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The working directory.
    pub cwd: PathBuf,
}

impl LaunchCommand {
    /// A `std::process::Command` for this launch, in a process group of its own on
    /// Unix. Pipes are the caller's choice.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).current_dir(&self.cwd);
        own_process_group(&mut command);
        command
    }
}

impl fmt::Display for LaunchCommand {
    /// The program and arguments as one line (arguments with spaces quoted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program.display())?;
        for arg in &self.args {
            let arg = arg.to_string_lossy();
            if arg.is_empty() || arg.contains(char::is_whitespace) {
                write!(f, " '{arg}'")?;
            } else {
                write!(f, " {arg}")?;
            }
        }
        Ok(())
    }
}

/// Puts a command's child in a new process group (Unix).
pub(crate) fn own_process_group(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    #[cfg(not(unix))]
    let _ = command;
}

/// A failed call: which extension, which method, which code, and why.
///
/// ```
/// use curupira_host::supervisor::CallError;
/// use curupira_jsonrpc::ErrorCode;
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
    /// The extension's configured name.
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

/// Why an extension stopped being usable: the first fatal failure.
#[derive(Debug, Clone)]
struct Fatal {
    code: ErrorCode,
    message: String,
}

/// A running extension process and the conversation with it.
pub struct ExtensionProcess {
    name: String,
    guard: Option<ProcessGuard>,
    /// Boxed: its buffers and codec state would make this handle large to move.
    wire: Box<Wire>,
    encoder: FrameEncoder,
    next_id: u64,
    fatal: Option<Fatal>,
    timeouts: Timeouts,
    threads: Vec<JoinHandle<()>>,
}

impl fmt::Debug for ExtensionProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionProcess")
            .field("name", &self.name)
            .field("pid", &self.guard.as_ref().map(|g| g.child.id()))
            .field("fatal", &self.fatal)
            .finish_non_exhaustive()
    }
}

/// How a shut-down extension ended, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself (after `shutdown` and the closing of stdin).
    Exited(String),
    /// It did not exit within the grace period and was killed.
    Killed,
    /// It had already failed and was killed then.
    AlreadyFailed,
}

impl ExtensionProcess {
    /// Starts an extension. A failure to start is a -32000 [`CallError`] for method
    /// `start`.
    pub fn spawn(
        name: &str,
        launch: &LaunchCommand,
        max_frame_bytes: usize,
        timeouts: Timeouts,
    ) -> Result<Self, CallError> {
        let mut command = launch.command();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|err| {
            CallError::new(
                name,
                "start",
                ErrorCode::TRANSPORT_FAILURE,
                format!("cannot start `{launch}` in {}: {err}", launch.cwd.display()),
            )
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let guard = ProcessGuard::new(child);
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            return Err(CallError::new(
                name,
                "start",
                ErrorCode::TRANSPORT_FAILURE,
                "the extension's pipes could not be opened",
            ));
        };
        // On failure the guard is dropped, which kills and reaps the child; a thread
        // already started ends when its pipe closes.
        let started = spawn_thread(format!("ext-{name}-err"), {
            let name = name.to_owned();
            move || drain_stderr(&name, stderr)
        })
        .and_then(|drain| {
            let (wire, mut threads) = wire::start(name, stdin, stdout, max_frame_bytes)?;
            threads.push(drain);
            Ok((wire, threads))
        });
        let (wire, threads) = started.map_err(|err| {
            CallError::new(
                name,
                "start",
                ErrorCode::TRANSPORT_FAILURE,
                format!("cannot set up the I/O with the extension: {err}"),
            )
        })?;
        let process = Self {
            name: name.to_owned(),
            guard: Some(guard),
            wire: Box::new(wire),
            encoder: FrameEncoder::with_max_body(max_frame_bytes),
            next_id: 1,
            fatal: None,
            timeouts,
            threads,
        };
        tracing::debug!(extension = %name, pid = process.pid(), "started `{launch}`");
        Ok(process)
    }

    /// The extension's configured name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The process id, while the process is held.
    pub fn pid(&self) -> Option<u32> {
        self.guard.as_ref().map(|guard| guard.child.id())
    }

    /// The configured timeouts.
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// Whether an earlier failure made the extension unusable.
    pub fn is_dead(&self) -> bool {
        self.fatal.is_some()
    }

    /// The failure that made the extension unusable, as an error for `method`.
    pub fn failure(&self, method: &str) -> Option<CallError> {
        self.fatal.as_ref().map(|_| self.error_for(method))
    }

    /// Sends a request and waits for its result with the timeout for `method`
    /// (`initialize`, `shutdown`, or `request` for any other).
    pub fn call(&mut self, method: &str, params: Option<Value>) -> Result<Value, CallError> {
        let timeout = match method {
            "initialize" => self.timeouts.initialize,
            "shutdown" => self.timeouts.shutdown,
            _ => self.timeouts.request,
        };
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
        let request = Message::from(Request::new(id, method, params));
        let body = request.to_vec();
        if let Err(err) = self.encoder.header(body.len()) {
            return Err(CallError::new(
                &self.name,
                method,
                ErrorCode::TRANSPORT_FAILURE,
                format!("the request cannot be sent: {err} (`max_frame_bytes`)"),
            ));
        }
        tracing::trace!(extension = %self.name, "→ {}", String::from_utf8_lossy(&body));
        // A deadline too far away to express (`Duration::MAX`) is no deadline.
        let deadline = Instant::now()
            .checked_add(timeout)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(100 * 365 * 86_400));
        // One request is in flight at a time, so the next event settles this call.
        let event = match self.wire.exchange(&body, deadline) {
            Ok(event) => event,
            Err(TimedOut) => {
                self.die(
                    ErrorCode::TIMEOUT,
                    format!("no reply within {}", seconds(timeout)),
                );
                return Err(self.error_for(method));
            }
        };
        match event {
            Event::Message(Ok(Message::Response(response))) => {
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
            Event::Message(Ok(Message::Request(request))) => {
                self.die(
                    ErrorCode::PROTOCOL_FAILURE,
                    format!(
                        "it sent a request (`{}`) while the host waited for a reply; \
                         extensions only answer",
                        request.method
                    ),
                );
            }
            Event::Message(Ok(Message::Notification(notification))) => {
                self.die(
                    ErrorCode::PROTOCOL_FAILURE,
                    format!(
                        "it sent a notification (`{}`) while the host waited for a reply; \
                         extensions only answer",
                        notification.method
                    ),
                );
            }
            Event::Message(Err(failure)) => {
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
            Event::BadFrame(err) => {
                self.die(
                    ErrorCode::TRANSPORT_FAILURE,
                    format!("bad frame on stdout: {err}"),
                );
            }
            Event::Closed => {
                let status = self.exit_status_soon();
                self.die(
                    ErrorCode::TRANSPORT_FAILURE,
                    format!("the extension closed its stdout ({status})"),
                );
            }
            Event::WriteFailed(err) => {
                let status = self.exit_status_soon();
                self.die(
                    ErrorCode::TRANSPORT_FAILURE,
                    format!("cannot write to the extension's stdin: {err} ({status})"),
                );
            }
            Event::WaitFailed(err) => {
                self.die(
                    ErrorCode::TRANSPORT_FAILURE,
                    format!("cannot wait for the extension's pipes: {err}"),
                );
            }
        }
        Err(self.error_for(method))
    }

    /// Shuts the extension down (SPEC section 1) and reaps it. Returns how it ended, or
    /// the error of the `shutdown` request (a missing or error reply, or one that is
    /// not `null`); the process is gone either way.
    pub fn shutdown(mut self) -> Result<Ending, CallError> {
        if self.fatal.is_some() {
            self.finish();
            return Ok(Ending::AlreadyFailed);
        }
        let reply = self.call("shutdown", None);
        let outcome = match reply {
            Ok(Value::Null) => Ok(()),
            Ok(other) => Err(CallError::new(
                &self.name,
                "shutdown",
                ErrorCode::PROTOCOL_FAILURE,
                format!(
                    "the reply to `shutdown` must be null, found {}",
                    short_json(&other)
                ),
            )),
            Err(err) => Err(err),
        };
        if self.fatal.is_some() {
            // Timed out or broke: already killed.
            self.finish();
            return outcome.map(|()| Ending::AlreadyFailed);
        }
        // Close stdin, then give the process the grace period to exit.
        self.wire.close_stdin();
        let grace = self.timeouts.shutdown;
        let ending = match self.guard.as_mut().and_then(|guard| guard.wait_for(grace)) {
            Some(status) => Ending::Exited(describe_status(status)),
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

    /// Records the first fatal failure and kills the process.
    fn die(&mut self, code: ErrorCode, message: String) {
        if self.fatal.is_none() {
            tracing::debug!(extension = %self.name, "unusable from now on: {code}: {message}");
            self.fatal = Some(Fatal { code, message });
        }
        if let Some(guard) = self.guard.as_mut() {
            guard.kill();
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
                "the host lost track of the failure",
            ),
        }
    }

    /// How the process ended, waiting briefly for it (its stdout just closed, so it
    /// is usually exiting).
    fn exit_status_soon(&mut self) -> String {
        match self
            .guard
            .as_mut()
            .and_then(|guard| guard.wait_for(Duration::from_millis(200)))
        {
            Some(status) => describe_status(status),
            None => "the process is still running".to_owned(),
        }
    }

    /// Kills what is left, reaps the child and lets the I/O threads end.
    fn finish(&mut self) {
        self.wire.close_stdin();
        if let Some(mut guard) = self.guard.take() {
            guard.kill();
            guard.reap();
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

impl Drop for ExtensionProcess {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Owns a child process: `Drop` kills its process group and reaps it.
pub(crate) struct ProcessGuard {
    child: Child,
    reaped: bool,
}

impl ProcessGuard {
    pub(crate) fn new(child: Child) -> Self {
        Self {
            child,
            reaped: false,
        }
    }

    /// Kills the process group (Unix) and the child itself. Does nothing once the child
    /// is reaped: its group was killed then (see [`try_wait_and_kill_group`]), and its
    /// id may since belong to someone else.
    pub(crate) fn kill(&mut self) {
        if !self.reaped {
            kill_group(&self.child);
            let _ = self.child.kill();
        }
    }

    /// Waits for the child to exit for at most `limit`.
    pub(crate) fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            match try_wait_and_kill_group(&mut self.child) {
                Ok(Some(status)) => {
                    self.reaped = true;
                    return Some(status);
                }
                Ok(None) if Instant::now() < deadline => thread::sleep(POLL_STEP),
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Waits for the child (call after [`kill`](Self::kill)).
    pub(crate) fn reap(&mut self) {
        if !self.reaped {
            let _ = self.child.wait();
            self.reaped = true;
        }
    }
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        self.kill();
        self.reap();
    }
}

/// `try_wait` that also kills what the child left in its process group, at the one
/// moment that is safe: after the child has exited but before it is reaped. While the
/// exited leader is a zombie its id cannot be reused, so the group signal cannot reach
/// a stranger; once reaped, it could. Elsewhere than Unix this is `try_wait`.
pub fn try_wait_and_kill_group(child: &mut Child) -> io::Result<Option<ExitStatus>> {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
        let pid = i32::try_from(child.id()).ok().and_then(Pid::from_raw);
        if let Some(pid) = pid {
            let peek = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
            match waitid(WaitId::Pid(pid), peek) {
                Ok(Some(_)) => kill_group(child),
                Ok(None) => return Ok(None),
                // Already reaped elsewhere, or not ours: let `try_wait` say so.
                Err(_) => {}
            }
        }
    }
    child.try_wait()
}

/// Sends SIGKILL to the process group a child leads (children started through
/// [`LaunchCommand::command`] lead their own). Does nothing elsewhere than Unix.
pub fn kill_group(child: &Child) {
    #[cfg(unix)]
    {
        let pid = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        // Never signal group 1 (`kill(-1)` means "every process").
        if let Some(pid) = pid.filter(|pid| pid.as_raw_nonzero().get() > 1) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
}

fn spawn_thread(name: String, body: impl FnOnce() + Send + 'static) -> io::Result<JoinHandle<()>> {
    thread::Builder::new().name(name).spawn(body)
}

/// Forwards stderr to the log line by line, holding at most [`STDERR_LINE_CAP`] bytes.
fn drain_stderr(name: &str, mut stderr: ChildStderr) {
    let mut chunk = vec![0_u8; 8192];
    let mut line = LineBuffer::default();
    loop {
        let n = match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        for piece in chunk[..n].split_inclusive(|&byte| byte == b'\n') {
            let (content, ends) = match piece.strip_suffix(b"\n") {
                Some(content) => (content, true),
                None => (piece, false),
            };
            line.push(name, content);
            if ends {
                line.end(name);
            }
        }
    }
    line.end(name);
}

/// One stderr line being assembled.
#[derive(Default)]
struct LineBuffer {
    bytes: Vec<u8>,
    /// The head of an over-long line was already logged.
    logged_head: bool,
    /// Bytes of the current line past the cap.
    dropped: u64,
}

impl LineBuffer {
    fn push(&mut self, name: &str, content: &[u8]) {
        let room = STDERR_LINE_CAP.saturating_sub(self.bytes.len());
        let take = room.min(content.len());
        self.bytes.extend_from_slice(&content[..take]);
        self.dropped += (content.len() - take) as u64;
        if self.dropped > 0 && !self.logged_head {
            log_line(name, &format!("{}…", lossy_line(&self.bytes)));
            self.logged_head = true;
        }
    }

    fn end(&mut self, name: &str) {
        if self.logged_head {
            log_line(
                name,
                &format!("… ({} more bytes of that line not shown)", self.dropped),
            );
        } else if !self.bytes.is_empty() {
            log_line(name, &lossy_line(&self.bytes));
        }
        self.bytes.clear();
        self.logged_head = false;
        self.dropped = 0;
    }
}

fn lossy_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

/// Logs one line an extension wrote on stderr, as `[NAME] line`.
pub(crate) fn log_line(name: &str, line: &str) {
    tracing::info!(target: STDERR_TARGET, "[{name}] {line}");
}

/// `exited with status 3`, `was killed by signal 9`.
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    "ended".to_owned()
}

/// `30 s`, `1.5 s`.
pub fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if duration.subsec_nanos() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{secs} s")
    }
}

/// A JSON value shortened for a message.
pub fn short_json(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> LaunchCommand {
        LaunchCommand {
            program: PathBuf::from("sh"),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::temp_dir(),
        }
    }

    fn timeouts(seconds: f64) -> Timeouts {
        let d = Duration::from_secs_f64(seconds);
        Timeouts {
            initialize: d,
            request: d,
            shutdown: d,
        }
    }

    /// Whether a process with this id still exists (a zombie counts).
    fn exists(pid: u32) -> bool {
        Path::new(&format!("/proc/{pid}")).exists()
    }

    use std::path::Path;

    #[test]
    fn what_a_child_leaves_in_its_group_is_killed_before_it_is_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("straggler.pid");
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(
            "sleep 30 & echo $! > '{}'; exit 0",
            pid_file.display()
        ));
        own_process_group(&mut command);
        let mut child = command.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let status = loop {
            if let Some(status) = try_wait_and_kill_group(&mut child).unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the shell never exited");
            thread::sleep(Duration::from_millis(5));
        };
        assert!(status.success());
        let straggler: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SIGKILL is delivered asynchronously and the orphan is reaped by whoever
        // adopted it; give both a moment.
        let deadline = Instant::now() + Duration::from_secs(5);
        while exists(straggler) && !is_zombie(straggler) {
            assert!(Instant::now() < deadline, "the background `sleep` survived");
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether `/proc/<pid>/stat` says the process is a zombie (dead, not yet reaped).
    fn is_zombie(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let after_name = stat.rsplit_once(") ")?.1.to_owned();
                after_name.chars().next()
            })
            .is_some_and(|state| state == 'Z')
    }

    #[test]
    fn a_silent_extension_times_out_and_stays_failed() {
        let mut process =
            ExtensionProcess::spawn("mute", &sh("exec sleep 10"), 1024, timeouts(0.3)).unwrap();
        let pid = process.pid().unwrap();
        let started = Instant::now();
        let err = process.call("describe", None).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(err.code, ErrorCode::TIMEOUT);
        assert_eq!(
            err.to_string(),
            "extension `mute`: describe failed: timeout (-32004): no reply within 0.3 s"
        );
        let started = Instant::now();
        let again = process.call("trigger/poll", None).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_millis(100),
            "fails at once"
        );
        assert_eq!(
            (again.code, again.method.as_str()),
            (ErrorCode::TIMEOUT, "trigger/poll")
        );
        assert_eq!(process.shutdown(), Ok(Ending::AlreadyFailed));
        assert!(!exists(pid), "killed and reaped");
    }

    #[test]
    fn an_exit_is_a_transport_failure_with_the_status() {
        let mut process =
            ExtensionProcess::spawn("quits", &sh("exit 3"), 1024, timeouts(2.0)).unwrap();
        let err = process.call("initialize", None).unwrap_err();
        assert_eq!(err.code, ErrorCode::TRANSPORT_FAILURE);
        assert!(err.message.contains("exited with status 3"), "{err}");
    }

    #[test]
    fn a_reply_is_correlated_and_an_error_reply_keeps_the_extension() {
        // Replies need not wait for their requests: they queue up in order. Request 1
        // gets a result, request 2 an error reply, request 3 a reply for id 9.
        let script = r#"
            printf '00000026{"jsonrpc":"2.0","id":1,"result":"ok"}'
            printf '00000041{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"nope"}}'
            printf '00000026{"jsonrpc":"2.0","id":9,"result":"ok"}'
            exec sleep 10
        "#;
        let mut process =
            ExtensionProcess::spawn("corr", &sh(script), 1024, timeouts(2.0)).unwrap();
        assert_eq!(process.call("describe", None), Ok(Value::from("ok")));
        let err = process.call("trigger/xyz", None).unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
        assert!(!process.is_dead());
        let err = process.call("describe", None).unwrap_err();
        assert_eq!(err.code, ErrorCode::PROTOCOL_FAILURE);
        assert_eq!(
            err.message,
            "it answered request id 3 with a response for id 9"
        );
        assert!(process.is_dead());
    }

    #[test]
    fn long_stderr_lines_are_cut_not_buffered() {
        let mut line = LineBuffer::default();
        let chunk = vec![b'x'; 8192];
        for _ in 0..2560 {
            line.push("flood", &chunk);
        }
        assert_eq!(line.bytes.len(), STDERR_LINE_CAP);
        assert_eq!(line.dropped, 2560 * 8192 - STDERR_LINE_CAP as u64);
        assert!(line.logged_head);
        line.end("flood");
        assert!(line.bytes.is_empty() && line.dropped == 0 && !line.logged_head);
    }

    #[test]
    fn a_launch_command_shows_as_one_line() {
        let launch = LaunchCommand {
            program: PathBuf::from("npx"),
            args: vec!["--yes".into(), "a b".into(), "".into()],
            cwd: PathBuf::from("."),
        };
        assert_eq!(launch.to_string(), "npx --yes 'a b' ''");
    }
}
