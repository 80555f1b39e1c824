//! Runs one call of a Spirit extension in Node.js, as the Spirit app's extension host
//! does: a tool or the system prompt (what `curupira spirit run-tool` and `curupira
//! spirit system-prompt` do), on `spirit-manifest`'s rules. Node.js 18 or later must be
//! on `PATH`.
//!
//! ```
//! use std::time::Duration;
//!
//! use spirit_manifest::{Host, Options, check_folder};
//! use spirit_runtime::{Call, Invocation, Produced, Stores, run};
//!
//! // A package with one tool, written where a test keeps its fixtures.
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("package.json"), r#"{
//!   "name": "greeter", "version": "1.0.0", "main": "index.mjs",
//!   "spiritExtension": {"displayName": "Greeter", "supportedHosts": ["cli"],
//!     "requestedCapabilities": ["tool-definitions", "tool-execution"],
//!     "contributes": {"tools": [{"name": "greet", "description": "Says hello.",
//!       "inputSchema": {"type": "object"}}]}}}"#)?;
//! std::fs::write(
//!     dir.path().join("index.mjs"),
//!     "export function activate() {\n  return { tools: { greet: ({ arguments: a }) => `hello, ${a.who}` } };\n}\n",
//! )?;
//! let package = check_folder(dir.path(), &Options::default())?.package.expect("valid");
//!
//! let mut stores = Stores::load(&package, Host::Cli, None, false, None)?;
//! let invocation = Invocation {
//!     package: &package,
//!     dir: dir.path(),
//!     host: Host::Cli,
//!     event: None,
//!     call: Call::Tool {
//!         name: "greet".into(),
//!         arguments: serde_json::json!({"who": "Spirit"}),
//!         tool_call_id: None,
//!         questions_result: None,
//!     },
//!     timeout: Duration::from_secs(30),
//!     message_box_response: None,
//! };
//! # if std::process::Command::new("node").arg("--version").output().is_err() {
//! #     return Ok(()); // no Node.js here: nothing to run
//! # }
//! let outcome = run(&invocation, &mut stores, &mut std::io::sink())?;
//! let Ok(Produced::Text { text, .. }) = outcome.result else { panic!("{:?}", outcome.result) };
//! assert_eq!(text, "hello, Spirit");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **This is a test harness, not a sandbox**: the extension's code runs with the
//! user's rights, in the package folder, with the user's environment.
//!
//! # How it runs
//!
//! A small ES module, the *loader* (`loader.mjs`, shipped inside this crate), is
//! written to a private temporary folder and run with `node` from `PATH` (version
//! [`node::MIN_MAJOR`] or later). It imports the package's `main` by file URL,
//! finds `activate` (`export function activate`, a default export of that function,
//! or `export default { activate }`), calls it with a `ctx` as the app builds it
//! (`extension.name` the display name, `main` the manifest's string, no
//! `activationEvent` for a tool call), keeps as the API what `activate` returned when
//! it has a known member of the right type, else the module's named exports, and
//! calls the tool (`invokeTool`, else `tools[name]`, without `this`) or collects the
//! system prompt (`getSystemPrompt()`, else `systemPrompt`, trimmed). Neither
//! `onEvent` nor `dispose` is called, except that an [`Invocation::event`] is first
//! delivered as the app's event dispatch delivers one: the activation gets it as
//! `ctx.activationEvent`, then `onEvent(event)` runs. What the app silently ignores
//! (members of the wrong type, the members of a default export object) comes back as
//! [`Outcome::notes`].
//!
//! # The channel
//!
//! Node's **fd 0 is one end of a socket pair** whose other end this process keeps: one
//! JSON object per line each way. That is the simplest robust design: no path to
//! agree on, no fd beyond the three standard ones to pass (which std cannot do
//! without `unsafe`), and Node sees an ordinary socket (`net.Socket({fd: 0})`). The
//! loader hides it from the extension (`process.stdin` is an empty stream). Node's
//! **fd 1 is this process's stderr**: whatever the extension prints, with
//! `console.log` or a raw write to fd 1, lands on stderr and can never corrupt the
//! channel or the result. fd 2 is inherited.
//!
//! On the channel the host sends the job first (`{"type": "job", …}`); the loader
//! sends `{"type": "request", "id", "method", "params"}` for every settings, secrets
//! and message-box operation, answered by `{"type": "response", "id", "result"}` (no
//! `result`: `undefined`; `entries`, `[key, value]` pairs, instead: an object with its
//! members in that order) or `{"type": "response", "id", "error": "…"}` (the promise
//! rejects with that message); `{"type": "log", "message"}` for `ctx.log`; and
//! finally one `{"type": "done", "outcome"?, "failure"?, "notes"?}`.
//!
//! **The rules stay in Rust**: every settings and secrets operation is decided here by
//! `spirit_manifest::runtime` (writes to declared keys only, types, select options,
//! `null` clears unless the setting is required without a default, `setAll`
//! all-or-nothing, no secret storage on the CLI host), and a
//! change is written to the `--settings` / `--secrets` file before it is
//! acknowledged. The extension sees the app's own words when an operation is refused;
//! the harness prints its fuller sentence on the progress stream. A secret's value
//! travels only on the channel: it is never logged, printed or put in an error.
//!
//! # Limits
//!
//! The whole call is bounded by a timeout: when it runs out, Node's process group
//! (Node and everything it started) gets SIGTERM, then SIGKILL after a grace
//! ([`ProcessGuard::terminate`]), and is reaped. A line on the channel is at most
//! [`MAX_LINE_BYTES`]. After `done`, Node is given [`EXIT_GRACE`] to exit before its
//! group is stopped the same way.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod checks;
mod message_box;
pub mod node;
mod stores;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use curupira_process::{ProcessGuard, describe_status};
use serde::Serialize;
use serde_json::{Value, json};
use spirit_manifest::codes;
use spirit_manifest::{ActivationEvent, Host, PackageJson};

pub use stores::{StoreError, Stores};

/// The JSON values a call takes (a tool's arguments) and returns.
pub use serde_json;
/// The crate whose rules and types ([`PackageJson`], [`Host`], the settings and
/// secrets stores) every run uses, re-exported so that a caller needs no second
/// dependency to check a package and run it.
pub use spirit_manifest;

use spirit_manifest::runtime::SecretStorage;

/// The loader module, written to a temporary file for each run.
pub const LOADER: &str = include_str!("loader.mjs");

/// The longest line accepted on the channel (a tool's result travels on one line).
pub const MAX_LINE_BYTES: u64 = 16 * 1024 * 1024;

/// How long Node may take to exit after it reported `done`.
pub const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Between SIGTERM and SIGKILL when Node's group is stopped.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// What to call.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// A tool of `contributes.tools`.
    Tool {
        /// Its manifest name.
        name: String,
        /// `ctx.arguments`.
        arguments: Value,
        /// `ctx.toolCallId`, when given.
        tool_call_id: Option<String>,
        /// `ctx.questionsResult`, when given.
        questions_result: Option<Value>,
    },
    /// `getSystemPrompt()` (awaited), else `systemPrompt`.
    SystemPrompt,
}

/// One run: which package, for which host, after which event, what to call, within
/// what time.
#[derive(Debug, Clone)]
pub struct Invocation<'a> {
    /// The package (already checked).
    pub package: &'a PackageJson,
    /// Its folder; Node runs there.
    pub dir: &'a Path,
    /// `cli` (`ctx.host` is `{}`) or `desktop` (`ctx.host.showMessageBox`).
    pub host: Host,
    /// An event to deliver first, as the app's event dispatch does (activation with
    /// `ctx.activationEvent`, then `onEvent`); `None` for a plain call, which the app
    /// makes with no activation event and no `onEvent`.
    pub event: Option<ActivationEvent>,
    /// The call.
    pub call: Call,
    /// The whole run's limit.
    pub timeout: Duration,
    /// The button `showMessageBox` resolves to (else its `defaultId`, else 0).
    pub message_box_response: Option<u64>,
}

/// What a call produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Produced {
    /// The text the model receives for a string (as it is) or `undefined` (`""`).
    Text {
        /// The text.
        text: String,
        /// What the tool returned: `a string` or `undefined`.
        returned: String,
    },
    /// Anything else: `JSON.stringify(value, null, 2)` and the value it denotes.
    Json {
        /// The text Node made.
        text: String,
        /// The same, parsed (for `outputSchema`).
        value: Value,
        /// What the tool returned: `an object`, `null`, `a number`…
        returned: String,
    },
    /// No text at all: what the tool returned (a function, a symbol) is something
    /// `JSON.stringify` turns into `undefined`.
    NoText {
        /// `a function`, `a symbol`.
        returned: String,
    },
    /// The system prompt, and where it came from (`getSystemPrompt`, `systemPrompt`).
    Prompt {
        /// The text.
        text: String,
        /// The member that gave it.
        source: String,
    },
    /// No system prompt.
    NoPrompt,
}

/// Why a call did not produce anything.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Failure {
    /// The extension threw or rejected: `stage` is `load`, `activate`, `onEvent`,
    /// `tool`, `systemPrompt`, `uncaught` or `harness`.
    #[error("{}", threw(stage, message))]
    Threw {
        /// Where.
        stage: String,
        /// The error's message.
        message: String,
    },
    /// The timeout ran out; Node's group was stopped.
    #[error(
        "the call did not finish within {seconds} s: node and everything it started were stopped"
    )]
    Timeout {
        /// The limit.
        seconds: f64,
    },
    /// Node ended without reporting.
    #[error("node {} before the call finished", status)]
    Exited {
        /// `exited with status 3`.
        status: String,
    },
    /// Node broke the channel's rules (a bug of the loader, or an extension writing to
    /// fd 0).
    #[error("the channel to node broke: {0}")]
    Channel(String),
}

fn threw(stage: &str, message: &str) -> String {
    match stage {
        "load" => format!("could not load `main`: {message}"),
        "activate" => format!("`activate` failed: {message}"),
        "onEvent" => format!("`onEvent` failed: {message}"),
        "uncaught" => format!("uncaught error: {message}"),
        _ => message.to_owned(),
    }
}

/// A change `ctx.settings` made, in the order made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingChange {
    /// The setting.
    pub key: String,
    /// Its new value (`null`: cleared).
    pub value: Value,
}

/// A change `ctx.secrets` made, without the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretChange {
    /// The secret.
    pub key: String,
    /// `set` or `delete`.
    pub action: &'static str,
}

/// Something the app would do silently that may hide an author's mistake: a
/// diagnostic code of `spirit_manifest::codes` and one sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunNote {
    /// The diagnostic code.
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The call's result, or why there is none.
    pub result: Result<Produced, Failure>,
    /// `ctx.log` messages, in order.
    pub logs: Vec<String>,
    /// What `ctx.settings` changed.
    pub settings_changes: Vec<SettingChange>,
    /// What `ctx.secrets` changed.
    pub secret_changes: Vec<SecretChange>,
    /// What the app would have ignored or let pass silently, in the order seen.
    pub notes: Vec<RunNote>,
    /// Node's version.
    pub node_version: String,
}

/// Why the call could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No `node` on `PATH`.
    #[error(
        "`node` was not found on PATH: running a Spirit extension needs Node.js {} or later",
        node::MIN_MAJOR
    )]
    NodeMissing,
    /// `node --version` failed.
    #[error(
        "`node --version` failed (it printed \"{found}\"): running a Spirit extension needs Node.js {} or later",
        node::MIN_MAJOR
    )]
    NodeUnusable {
        /// What it printed.
        found: String,
    },
    /// Node is older than the minimum.
    #[error(
        "`node` is version \"{found}\": running a Spirit extension needs Node.js {} or later",
        node::MIN_MAJOR
    )]
    NodeTooOld {
        /// What `node --version` printed.
        found: String,
    },
    /// The package has no `main`.
    #[error("The extension does not declare main and cannot execute: {package}")]
    NoMain {
        /// The package name.
        package: String,
    },
    /// A local I/O step failed (temporary folder, spawn, channel).
    #[error("could not {action}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
    /// Only on Unix.
    #[error("running a Spirit extension needs a Unix system (the channel is a socket pair)")]
    Unsupported,
}

fn io(action: &'static str) -> impl FnOnce(std::io::Error) -> RunError {
    move |source| RunError::Io { action, source }
}

/// Runs `invocation` with `stores`; `progress` receives what is printed as it happens
/// (`ctx.log` lines prefixed with the extension id, message boxes, notes), normally
/// stderr.
pub fn run(
    invocation: &Invocation<'_>,
    stores: &mut Stores,
    progress: &mut dyn Write,
) -> Result<Outcome, RunError> {
    let node_version = node::check_node()?;
    run_checked(invocation, stores, progress, node_version)
}

#[cfg(not(unix))]
fn run_checked(
    _invocation: &Invocation<'_>,
    _stores: &mut Stores,
    _progress: &mut dyn Write,
    _node_version: String,
) -> Result<Outcome, RunError> {
    Err(RunError::Unsupported)
}

/// What the reader thread hands over.
enum Incoming {
    Line(Vec<u8>),
    TooLong,
    End,
}

#[cfg(unix)]
fn run_checked(
    invocation: &Invocation<'_>,
    stores: &mut Stores,
    progress: &mut dyn Write,
    node_version: String,
) -> Result<Outcome, RunError> {
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;

    let package = invocation.package;
    let main = package.main.as_deref().ok_or_else(|| RunError::NoMain {
        package: package.name.clone(),
    })?;
    let dir = std::path::absolute(invocation.dir).map_err(io("resolve the package folder"))?;
    let main_path = dir.join(main);

    let temp = tempfile::Builder::new()
        .prefix("curupira-spirit-")
        .tempdir()
        .map_err(io("create a temporary folder for the loader"))?;
    let loader = temp.path().join("loader.mjs");
    std::fs::write(&loader, LOADER).map_err(io("write the loader"))?;

    let (ours, theirs) = UnixStream::pair().map_err(io("create the channel"))?;
    let started = Instant::now();
    let mut guard = {
        let mut command = Command::new(node::NODE);
        command
            .arg(&loader)
            .current_dir(&dir)
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::from(std::io::stderr()))
            .stderr(Stdio::inherit());
        // The command (and its copy of the channel's far end) is dropped at the end of
        // this block, so the channel ends when Node does.
        ProcessGuard::spawn(&mut command).map_err(io("start node"))?
    };

    let mut session = Session {
        invocation,
        stores,
        progress,
        writer: ours.try_clone().map_err(io("use the channel"))?,
        logs: Vec::new(),
        settings_changes: Vec::new(),
        secret_changes: Vec::new(),
        notes: Vec::new(),
    };
    let job = job_line(invocation, &dir, &main_path, main);
    let deadline = started.checked_add(invocation.timeout);
    let remaining = || deadline.map(|d| d.saturating_duration_since(Instant::now()));
    let _ = ours.set_write_timeout(remaining().filter(|d| !d.is_zero()));
    let wrote_job = session.send(&job);

    let (sender, receiver) = mpsc::channel();
    let reader_stream = ours.try_clone().map_err(io("use the channel"))?;
    std::thread::Builder::new()
        .name("spirit-channel".to_owned())
        .spawn(move || read_lines(reader_stream, &sender))
        .map_err(io("start the channel reader"))?;

    let done = if wrote_job.is_err() {
        Err(Failure::Channel("node did not take the job".to_owned()))
    } else {
        session.serve(&receiver, deadline, invocation.timeout)
    };
    let status = match &done {
        Err(Failure::Timeout { .. }) | Err(Failure::Channel(_)) => guard.terminate(KILL_GRACE).ok(),
        _ => match guard.wait_for(EXIT_GRACE) {
            Some(status) => Some(status),
            None => guard.terminate(KILL_GRACE).ok(),
        },
    };
    // Unblocks the reader thread should something outside the group hold the far end.
    let _ = ours.shutdown(std::net::Shutdown::Both);
    drop(guard);
    drop(temp);

    let Session {
        logs,
        settings_changes,
        secret_changes,
        mut notes,
        ..
    } = session;
    let result = match done {
        Ok((result, loader_notes)) => {
            notes.extend(loader_notes.into_iter().map(|message| RunNote {
                code: codes::IGNORED_EXPORT,
                message,
            }));
            result
        }
        Err(Failure::Exited { .. }) => Err(Failure::Exited {
            status: status.map_or_else(|| "ended".to_owned(), describe_status),
        }),
        Err(failure) => Err(failure),
    };
    Ok(Outcome {
        result,
        logs,
        settings_changes,
        secret_changes,
        notes,
        node_version,
    })
}

/// The job line: what the loader needs to make `ctx` and the call.
fn job_line(invocation: &Invocation<'_>, dir: &Path, main_path: &Path, main: &str) -> Value {
    let package = invocation.package;
    let call = match &invocation.call {
        Call::Tool {
            name,
            arguments,
            tool_call_id,
            questions_result,
        } => {
            let mut call = json!({"kind": "tool", "toolName": name, "arguments": arguments});
            if let Some(id) = tool_call_id {
                call["toolCallId"] = Value::from(id.as_str());
            }
            if let Some(result) = questions_result {
                call["questionsResult"] = result.clone();
            }
            call
        }
        Call::SystemPrompt => json!({"kind": "systemPrompt"}),
    };
    json!({
        "type": "job",
        "extension": {
            "id": package.name,
            "name": package.spirit_extension.display_name,
            "version": package.version,
            "directoryPath": path_text(dir),
            "manifestPath": path_text(&dir.join(spirit_manifest::PACKAGE_JSON)),
            // The app's reader drops a leading `./`.
            "main": main.strip_prefix("./").unwrap_or(main),
        },
        "host": invocation.host.as_str(),
        "event": invocation.event.map(|event| event.as_str()),
        "mainPath": path_text(main_path),
        "call": call,
    })
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

/// Reads the channel line by line into `sender` until it ends, breaks or sends a line
/// over the limit.
fn read_lines(stream: impl Read, sender: &mpsc::Sender<Incoming>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = Vec::new();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut line);
        let incoming = match read {
            Ok(0) | Err(_) => Incoming::End,
            Ok(_) if line.len() as u64 > MAX_LINE_BYTES => Incoming::TooLong,
            Ok(_) => Incoming::Line(line),
        };
        let last = !matches!(incoming, Incoming::Line(_));
        if sender.send(incoming).is_err() || last {
            return;
        }
    }
}

/// The host's side of one conversation with the loader.
#[cfg(unix)]
struct Session<'r, 'i> {
    invocation: &'r Invocation<'i>,
    stores: &'r mut Stores,
    progress: &'r mut dyn Write,
    writer: std::os::unix::net::UnixStream,
    logs: Vec<String>,
    settings_changes: Vec<SettingChange>,
    secret_changes: Vec<SecretChange>,
    notes: Vec<RunNote>,
}

/// What an operation resolves to.
enum Answer {
    /// `undefined`.
    Undefined,
    /// A JSON value.
    Value(Value),
    /// An object whose members come in this order.
    Ordered(Vec<(String, Value)>),
}

impl From<&str> for Answer {
    fn from(text: &str) -> Self {
        Self::Value(Value::from(text))
    }
}

/// The `done` report: the result and the loader's notes.
type Report = (Result<Produced, Failure>, Vec<String>);

#[cfg(unix)]
impl Session<'_, '_> {
    fn send(&mut self, message: &Value) -> std::io::Result<()> {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes())
    }

    /// Answers requests until `done`, the end of the channel, or the deadline.
    fn serve(
        &mut self,
        receiver: &mpsc::Receiver<Incoming>,
        deadline: Option<Instant>,
        timeout: Duration,
    ) -> Result<Report, Failure> {
        let timed_out = || Failure::Timeout {
            seconds: timeout.as_secs_f64(),
        };
        loop {
            let incoming = match deadline {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match receiver.recv_timeout(left) {
                        Ok(incoming) => incoming,
                        Err(mpsc::RecvTimeoutError::Timeout) => return Err(timed_out()),
                        Err(mpsc::RecvTimeoutError::Disconnected) => Incoming::End,
                    }
                }
                None => receiver.recv().unwrap_or(Incoming::End),
            };
            let line = match incoming {
                Incoming::Line(line) => line,
                Incoming::TooLong => {
                    return Err(Failure::Channel(format!(
                        "node sent a line longer than {MAX_LINE_BYTES} bytes"
                    )));
                }
                Incoming::End => {
                    return Err(Failure::Exited {
                        status: String::new(),
                    });
                }
            };
            let message: Value = serde_json::from_slice(&line).map_err(|error| {
                Failure::Channel(format!("node sent a line that is not JSON: {error}"))
            })?;
            match message.get("type").and_then(Value::as_str) {
                Some("log") => self.log(&message),
                Some("request") => {
                    let reply = self.answer(&message);
                    // A reply Node cannot take shows up as the end of the channel.
                    let _ = self.send(&reply);
                }
                Some("done") => return Ok(done(&message)),
                _ => {
                    return Err(Failure::Channel(
                        "node sent a message of no known type".to_owned(),
                    ));
                }
            }
        }
    }

    fn log(&mut self, message: &Value) {
        let text = message
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let _ = writeln!(self.progress, "[{}] {}", self.invocation.package.name, text);
        self.logs.push(text);
    }

    /// The response to one request.
    fn answer(&mut self, message: &Value) -> Value {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match self.apply(method, &params) {
            Ok(Answer::Value(result)) => json!({"type": "response", "id": id, "result": result}),
            Ok(Answer::Ordered(pairs)) => {
                let entries: Vec<Value> = pairs
                    .into_iter()
                    .map(|(key, value)| json!([key, value]))
                    .collect();
                json!({"type": "response", "id": id, "entries": entries})
            }
            Ok(Answer::Undefined) => json!({"type": "response", "id": id}),
            Err(error) => json!({"type": "response", "id": id, "error": error}),
        }
    }

    /// Prints a refusal's fuller sentence on the progress stream and gives the words
    /// the extension sees.
    fn refuse(&mut self, operation: &str, ours: &str, theirs: String) -> String {
        let _ = writeln!(
            self.progress,
            "[{}] note: {operation} refused: {ours}",
            self.invocation.package.name
        );
        theirs
    }

    fn note(&mut self, code: &'static str, message: String) {
        if !self
            .notes
            .iter()
            .any(|n| n.code == code && n.message == message)
        {
            self.notes.push(RunNote { code, message });
        }
    }

    /// Applies one operation.
    fn apply(&mut self, method: &str, params: &Value) -> Result<Answer, String> {
        let key = || -> Result<&str, String> {
            match params.get("key") {
                Some(Value::String(key)) => Ok(key),
                other => Err(format!(
                    "{method} takes a string key, found {}",
                    other.map_or(
                        "undefined",
                        spirit_manifest::curupira_diagnostics::json::type_name
                    )
                )),
            }
        };
        let value = || -> Result<Value, String> {
            params.get("value").cloned().ok_or_else(|| {
                format!("{method} takes a value (a JSON value; `null` clears), found undefined")
            })
        };
        let extension = self.invocation.package.name.clone();
        match method {
            "settings.get" | "settings.getAll" => {
                let read = if method == "settings.get" {
                    let key = key()?.to_owned();
                    if !self.stores.settings.declares(&key) {
                        self.note(
                            codes::UNDECLARED_SETTING,
                            format!(
                                "`ctx.settings.get(\"{}\")` read a setting that `settingsSchema` does not declare: Spirit gives undefined, not an error",
                                key.escape_debug()
                            ),
                        );
                    }
                    self.stores
                        .settings
                        .get(&key)
                        .map(|value| value.map_or(Answer::Undefined, Answer::Value))
                } else {
                    self.stores.settings.get_all_in_order().map(Answer::Ordered)
                };
                read.map_err(|error| {
                    let theirs = error.spirit_message();
                    self.refuse(&format!("ctx.{method}"), &error.to_string(), theirs)
                })
            }
            "settings.set" | "settings.setAll" => {
                let changes = if method == "settings.set" {
                    let mut changes = serde_json::Map::new();
                    changes.insert(key()?.to_owned(), value()?);
                    changes
                } else {
                    match params.get("values") {
                        Some(Value::Object(values)) => values.clone(),
                        other => {
                            return Err(format!(
                                "settings.setAll takes an object of values, found {}",
                                other.map_or(
                                    "undefined",
                                    spirit_manifest::curupira_diagnostics::json::type_name
                                )
                            ));
                        }
                    }
                };
                let mut next = self.stores.settings.clone();
                if let Err(errors) = next.set_all(changes.clone()) {
                    let ours = errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ");
                    // Spirit stops at the first problem.
                    let theirs = errors
                        .first()
                        .map(|error| error.spirit_message())
                        .unwrap_or_default();
                    return Err(self.refuse(&format!("ctx.{method}"), &ours, theirs));
                }
                self.stores
                    .commit_settings(next)
                    .map_err(|error| error.to_string())?;
                self.settings_changes.extend(
                    changes
                        .into_iter()
                        .map(|(key, value)| SettingChange { key, value }),
                );
                if method == "settings.set" {
                    return Ok(Answer::Undefined);
                }
                // `setAll` resolves to what `getAll` now gives (after the write).
                match self.stores.settings.get_all_in_order() {
                    Ok(values) => Ok(Answer::Ordered(values)),
                    Err(error) => {
                        let theirs = error.spirit_message();
                        Err(self.refuse("ctx.settings.setAll", &error.to_string(), theirs))
                    }
                }
            }
            "secrets.get" | "secrets.has" => {
                let key = key()?.to_owned();
                let read = if method == "secrets.get" {
                    self.stores
                        .secrets
                        .get(&key)
                        .map(|value| value.map_or(Answer::Undefined, Answer::from))
                } else {
                    self.stores
                        .secrets
                        .has(&key)
                        .map(|has| Answer::Value(Value::Bool(has)))
                };
                read.map_err(|error| {
                    let theirs = error.spirit_message(&extension);
                    self.refuse(&format!("ctx.{method}"), &error.to_string(), theirs)
                })
            }
            "secrets.set" | "secrets.delete" => {
                let key = key()?.to_owned();
                let mut next = self.stores.secrets.clone();
                let mut trimmed = false;
                let done = if method == "secrets.set" {
                    next.set(&key, &value()?).map(|was_trimmed| {
                        trimmed = was_trimmed;
                        Some("set")
                    })
                } else {
                    next.delete(&key)
                        .map(|_| (next.storage() != SecretStorage::None).then_some("delete"))
                };
                let action = match done {
                    Ok(action) => action,
                    Err(error) => {
                        let theirs = error.spirit_message(&extension);
                        return Err(self.refuse(
                            &format!("ctx.{method}"),
                            &error.to_string(),
                            theirs,
                        ));
                    }
                };
                if let Some(action) = action {
                    if trimmed {
                        self.note(
                            codes::SECRET_STORAGE,
                            format!(
                                "`ctx.secrets.set(\"{key}\", …)` gave a value with spaces around it: the desktop keyring keeps it trimmed"
                            ),
                        );
                    }
                    self.stores
                        .commit_secrets(next)
                        .map_err(|error| error.to_string())?;
                    self.secret_changes.push(SecretChange { key, action });
                }
                Ok(Answer::Undefined)
            }
            "host.showMessageBox" if self.invocation.host == Host::Desktop => {
                let options = params.get("options").cloned().unwrap_or(Value::Null);
                let problems = message_box::check(&options);
                if !problems.is_empty() {
                    return Err(problems.join("; "));
                }
                let response =
                    message_box::response(&options, self.invocation.message_box_response);
                let box_text =
                    message_box::describe(&self.invocation.package.name, &options, &response);
                let _ = self.progress.write_all(box_text.as_bytes());
                Ok(Answer::Value(json!({ "response": response })))
            }
            other => Err(format!(
                "the {} host has no operation `{}`",
                self.invocation.host,
                other.escape_debug()
            )),
        }
    }
}

/// Reads the `done` message.
fn done(message: &Value) -> Report {
    let notes = message
        .get("notes")
        .and_then(Value::as_array)
        .map(|notes| {
            notes
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if let Some(failure) = message.get("failure") {
        let text = |key: &str| {
            failure
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        return (
            Err(Failure::Threw {
                stage: text("stage"),
                message: text("message"),
            }),
            notes,
        );
    }
    let outcome = message.get("outcome").cloned().unwrap_or(Value::Null);
    let field = |key: &str| outcome.get(key).and_then(Value::as_str).map(str::to_owned);
    let returned = field("returned").unwrap_or_default();
    let produced = match (outcome.get("kind").and_then(Value::as_str), field("text")) {
        (Some("undefined"), _) => Ok(Produced::NoText { returned }),
        (Some("string"), Some(text)) => match field("source") {
            Some(source) => Ok(Produced::Prompt { text, source }),
            None => Ok(Produced::Text { text, returned }),
        },
        (Some("json"), Some(text)) => match serde_json::from_str(&text) {
            Ok(value) => Ok(Produced::Json {
                text,
                value,
                returned,
            }),
            Err(error) => Err(Failure::Channel(format!(
                "the result's JSON text does not parse: {error}"
            ))),
        },
        (Some("none"), _) => Ok(Produced::NoPrompt),
        _ => Err(Failure::Channel(
            "node reported an outcome of no known kind".to_owned(),
        )),
    };
    (produced, notes)
}

/// The README's example, compiled as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
