//! Drive a Curupira extension from any Rust program: start it, speak protocol 2 to it
//! with a deadline on every call, and never leave its process behind.
//!
//! A [`Client`] is one conversation with one extension. [`Client::spawn`] starts the
//! extension as a child process ([`LaunchCommand`]); [`memory::duplex`] connects to an
//! extension running in this process, which is how tests talk to a `Trigger` without
//! a process. Either way the calls are typed: [`Client::request`] sends any method of
//! [`curupira_protocol::method`] and reads its result strictly, and
//! [`initialize`](Client::initialize), [`describe`](Client::describe),
//! [`schema`](Client::schema), [`validate`](Client::validate), [`poll`](Client::poll),
//! [`on_started`](Client::on_started), [`on_finished`](Client::on_finished) and
//! [`shutdown`](Client::shutdown) are the protocol's steps by name. Frames are
//! `curupira-framing`'s, messages `curupira-jsonrpc`'s, the rules about params and
//! results `curupira-protocol`'s: this crate owns the transport, the deadlines and the
//! processes.
//!
//! ```
//! use std::io::BufReader;
//! use std::thread;
//!
//! use curupira_client::curupira_protocol::{PeerInfo, PollParams, ValidateResult};
//! use curupira_client::serde_json::json;
//! use curupira_client::{Ending, Options, memory};
//! use curupira_extension_sdk::{
//!     Arguments, Pair, ServeOptions, Trigger, TriggerDescription, TriggerError,
//!     TriggerSchema, ValidateError, serve,
//! };
//!
//! /// Hands out a countdown, one number per poll.
//! struct Countdown(u32);
//!
//! impl Trigger for Countdown {
//!     fn describe(&self) -> Vec<TriggerDescription> {
//!         vec![TriggerDescription::new("countdown", ["n"])]
//!     }
//!     fn schema(&self, _: &str) -> Result<TriggerSchema, TriggerError> {
//!         let schema = json!({"type": "object", "properties": {"step": {"default": 1}}});
//!         Ok(TriggerSchema::new(schema, ["n"]))
//!     }
//!     fn validate(&self, _: &str, _: &Arguments) -> Result<(), ValidateError> {
//!         Ok(())
//!     }
//!     fn poll(&mut self, _: &str, _: &Arguments) -> Result<Option<Vec<Pair>>, TriggerError> {
//!         if self.0 == 0 {
//!             return Ok(None);
//!         }
//!         self.0 -= 1;
//!         Ok(Some(vec![Pair::new("n", (self.0 + 1).to_string())]))
//!     }
//! }
//!
//! // The extension runs `serve` on its end of the pair, in a thread.
//! let (mut client, extension) = memory::duplex("countdown", Options::default());
//! let server = thread::spawn(move || {
//!     let (reader, writer) = extension.split();
//!     let options = ServeOptions::new("countdown", "1.0.0");
//!     serve(&mut Countdown(2), BufReader::new(reader), writer, &options)
//! });
//!
//! let hello = client.initialize(PeerInfo::new("my-host", "0.1.0"))?;
//! assert_eq!(hello.server_info, PeerInfo::new("countdown", "1.0.0"));
//! assert_eq!(client.describe()?.triggers[0].trigger_type, "countdown");
//!
//! // The automation's whole table, the host's core keys included; the verdict is a
//! // result, and an accepted table comes back normalised (its defaults filled in).
//! let table = json!({"trigger_type": "cd/countdown", "repository": "demo", "prompt": "${n}"});
//! let table = table.as_object().cloned().unwrap_or_default();
//! let ValidateResult::Accepted { configuration } = client.validate("countdown", &table)? else {
//!     panic!("rejected");
//! };
//! let automation = configuration.unwrap_or(table);
//! assert_eq!(automation["step"], 1);
//!
//! // Every poll gets that normalised table.
//! let poll = PollParams { trigger_type: "countdown".into(), automation, limit: Some(100), preview: false };
//! let item = client.poll(&poll)?.expect("an item");
//! assert_eq!((item[0].key.as_str(), item[0].value.as_str()), ("n", "2"));
//! client.on_started("countdown", &item)?;
//! client.on_finished("countdown", &item)?;
//! client.poll(&poll)?;
//! assert_eq!(client.poll(&poll)?, None);
//!
//! // `shutdown` is answered, then the serve loop returns and drops its end.
//! assert_eq!(client.shutdown()?, Ending::Exited("closed its end".into()));
//! server.join().expect("the serve thread")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A child process is the same conversation:
//!
//! ```no_run
//! use curupira_client::curupira_protocol::PeerInfo;
//! use curupira_client::{Client, LaunchCommand, Options};
//!
//! let launch = LaunchCommand::new("npx", ".").args(["--yes", "@acme/trigger@1.2.0"]);
//! let mut client = Client::spawn("acme", &launch, Options::default())?;
//! client.initialize(PeerInfo::new("my-host", "0.1.0"))?;
//! for trigger in client.describe()?.triggers {
//!     println!("{}: {}", trigger.trigger_type, trigger.prompt_fields.join(", "));
//! }
//! client.shutdown()?;
//! # Ok::<(), curupira_client::CallError>(())
//! ```
//!
//! # The conversation
//!
//! [`Client::spawn`] starts the extension with three pipes:
//!
//! - stdin and stdout carry frames, written and read by the thread that makes the call
//!   (on Unix: non-blocking pipes and `poll(2)`; elsewhere a reader and a writer
//!   thread, `ext-NAME-out` and `ext-NAME-in`). Every wait is bounded by the call's
//!   deadline, so a child that never reads its stdin, or never finishes a reply,
//!   cannot hold the caller past the timeout. On Unix a wait also watches the child
//!   itself (a pidfd in the same `poll(2)` on Linux, a `waitid` check every 50 ms
//!   elsewhere): a child that exits while something it started still holds its stdout
//!   ends the call at once, reported with its exit status. Frames are decoded with
//!   [`Limits::max_frame_bytes`], and a framing error is final (the decoder is fused).
//! - `ext-NAME-err`, a thread, drains stderr continuously, in 8 KiB reads, and hands
//!   each line to a [`StderrSink`] (by default [`log_stderr_line`]: `tracing` target
//!   [`STDERR_TARGET`], prefixed with `[NAME]`, at the level [`stderr_line_level`]
//!   reads off the line: `warning:` and `error:` lines at `warn` and `error`). A line longer than
//!   [`Limits::stderr_line_bytes`] is cut there (the rest is counted, not kept), so
//!   20 MB without a newline costs 4 KiB of memory.
//!
//! Each call sends a request with a fresh integer id and waits for the reply with a
//! deadline from [`Timeouts`]: `initialize` for `initialize`, `shutdown` for
//! `shutdown`, `request` for everything else. The deadline covers the whole exchange:
//! writing the request and reading every byte of the reply. The memory transport keeps
//! the same deadlines and reports the same failures.
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
//! | the process exited without a reply while stdout stays open (a process it started, in a session of its own, holds it): noticed when it exits, not at the deadline, and named by its exit status (Unix) | -32000 transport failure | dead |
//! | a body that is not UTF-8 JSON | -32700 parse error | dead |
//! | JSON that is not a JSON-RPC 2.0 message (`"jsonrpc": "1.0"`, …) | -32600 invalid request | dead |
//! | a response with another id; a request or notification from the extension | -32001 protocol failure | dead |
//! | a result of the wrong shape (`` member `/server_info` is required ``, `` member `/triggers/0/trigger_type` is required ``, `` member `/ok` is required ``, `` `/values/0/value` must be a string, found 1 ``) | -32001 protocol failure | alive |
//! | an `initialize` result with another protocol major | -32001 protocol failure | dead |
//! | an error reply (a -32003 from `trigger/validate`, a -32002 from a poll or a hook, …) | the reply's code and message (`data` kept; a -32003's `data.errors` are appended to the message) | alive |
//!
//! A rejected configuration is not a failure: `trigger/validate` answers the result
//! `{"ok": false, "error": "…"}`, which [`Client::validate`] returns as
//! `Ok(ValidateResult::Rejected { .. })`. What a failure means for the host is the
//! host's to decide: the reference host fails a task whose `trigger/onStarted` fails
//! and ignores a failed `trigger/onFinished`, which the client reports as an error
//! all the same.
//!
//! -32700/-32600 are used rather than a blanket -32001 because they are exactly what
//! the protocol's table says those codes mean, and they tell an extension author more.
//! "Dead" means the conversation cannot be trusted any more (a reply may have been
//! lost or mismatched): the process is killed at once and every later call fails
//! immediately with the same cause.
//!
//! # Processes
//!
//! On Unix the extension runs in a process group of its own: a Ctrl-C in the terminal
//! reaches only the host (which then shuts extensions down in order), and killing the
//! group also kills whatever the extension started (`npx` starts `node`). The child
//! lives in a [`ProcessGuard`] whose `Drop` kills the group and waits for the child,
//! so no path, panics included, leaves a zombie or a running extension behind. Any
//! other child a program starts can live in one too; [`ProcessGuard::terminate`]
//! stops one gracefully (SIGTERM to the group, a grace, then SIGKILL).
//!
//! [`Client::shutdown`] follows SPEC section 1: send `shutdown`, wait for the reply
//! (the shutdown timeout), close stdin, wait the same time again for the process to
//! exit, then kill; always reap.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod client;
mod error;
mod launch;
pub mod memory;
mod options;
pub mod print_manifest;
#[cfg(feature = "probe")]
pub mod probe;
mod stderr;
mod wire;

pub use client::{Client, Ending};
pub use curupira_process::{ProcessGuard, describe_status};
pub use error::CallError;
pub use launch::LaunchCommand;
pub use options::{Limits, Options, Timeouts};
pub use stderr::{STDERR_TARGET, StderrLevel, StderrSink, log_stderr_line, stderr_line_level};

/// The `curupira-protocol` crate, whose types the calls take and return
/// ([`Configuration`](curupira_protocol::Configuration), [`PeerInfo`](curupira_protocol::PeerInfo),
/// the [`method`](curupira_protocol::method)s of [`Client::request`]): re-exported so a
/// user names them with the very version this crate uses, without a dependency of
/// their own.
pub use curupira_protocol;

/// The `curupira-jsonrpc` crate, whose [`ErrorCode`](curupira_jsonrpc::ErrorCode) every
/// [`CallError`] has: re-exported for the same reason.
pub use curupira_jsonrpc;

/// The `serde_json` crate, whose `Value` [`Client::call`] takes and returns and a
/// [`CallError`]'s data is: re-exported for the same reason.
pub use serde_json;

/// The README's examples, compiled (and the second one run) as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
