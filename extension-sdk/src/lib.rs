//! Write a Curupira trigger extension in Rust: implement [`Trigger`], call [`run`].
//!
//! A Curupira extension is a separate process that speaks JSON-RPC 2.0 in
//! length-prefixed frames on its stdin/stdout (the repository's
//! [`docs/PROTOCOL.md`](https://example.invalid/curupira/blob/main/docs/PROTOCOL.md)). This crate does
//! everything but the trigger itself: framing (`curupira-framing`), message parsing
//! (`curupira-jsonrpc`), `initialize` and the version check, params checking by the rules
//! of `curupira-protocol` (whose types it re-exports), error
//! replies, `shutdown`, and `--curupira-print-manifest`. It also re-exports
//! [`serde_json`], whose `Value`s arguments and schemas are, and [`curupira_framing`],
//! whose errors [`ServeError`] carries and whose frames a test of a trigger writes, so a
//! trigger needs no other dependency.
//!
//! ```
//! use curupira_extension_sdk::{
//!     Arguments, Pair, ServeOptions, Trigger, TriggerDescription, TriggerError,
//!     TriggerSchema, ValidateError, ValidationError, serve,
//! };
//! use curupira_extension_sdk::curupira_framing::{FrameReader, FrameWriter};
//! use curupira_extension_sdk::serde_json::{self, Value, json};
//!
//! /// Hands out the numbers 1 to `max`, one per poll.
//! struct Counter { next: u32 }
//!
//! impl Trigger for Counter {
//!     fn describe(&self) -> Vec<TriggerDescription> {
//!         vec![TriggerDescription::new("count", "Counts up to `max`.")]
//!     }
//!     fn schema(&self, _: &str) -> Result<TriggerSchema, TriggerError> {
//!         Ok(TriggerSchema { schema: json!({"type": "object"}), prompt_fields: vec![] })
//!     }
//!     fn validate(&self, _: &str, arguments: &Arguments) -> Result<(), ValidateError> {
//!         match arguments.get("max") {
//!             Some(max) if max.is_u64() => Ok(()),
//!             _ => Err(ValidationError::member("max", "`max` must be an integer").into()),
//!         }
//!     }
//!     fn poll(&mut self, _: &str, arguments: &Arguments)
//!         -> Result<Option<Vec<Pair>>, TriggerError>
//!     {
//!         let max = arguments.get("max").and_then(Value::as_u64).unwrap_or(0);
//!         if u64::from(self.next) > max {
//!             return Ok(None);
//!         }
//!         self.next += 1;
//!         Ok(Some(vec![Pair::new("n", (self.next - 1).to_string())]))
//!     }
//! }
//!
//! // What a host would write on the extension's stdin.
//! let mut input = FrameWriter::new(Vec::new());
//! for request in [
//!     json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
//!            "params": {"protocol_version": 2, "host": {"name": "doc", "version": "0"}}}),
//!     json!({"jsonrpc": "2.0", "id": 2, "method": "trigger/poll",
//!            "params": {"trigger_type": "count", "arguments": {"max": 3}}}),
//!     json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
//! ] {
//!     input.write_frame(request.to_string().as_bytes())?;
//! }
//! let input = input.into_inner();
//!
//! let mut output = Vec::new();
//! let options = ServeOptions::new("counter", "1.0.0");
//! serve(&mut Counter { next: 1 }, &input[..], &mut output, &options)?;
//!
//! let replies: Vec<Value> = FrameReader::new(&output[..])
//!     .map(|body| serde_json::from_slice(&body.unwrap()).unwrap())
//!     .collect();
//! assert_eq!(replies, [
//!     json!({"jsonrpc": "2.0", "id": 1,
//!            "result": {"protocol_version": 2, "name": "counter", "version": "1.0.0"}}),
//!     json!({"jsonrpc": "2.0", "id": 2,
//!            "result": {"values": [{"key": "n", "value": "1"}]}}),
//!     json!({"jsonrpc": "2.0", "id": 3, "result": null}),
//! ]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What the serve loop decides
//!
//! Where the protocol is silent, [`serve`] does this (the same list is in
//! [`docs/PROTOCOL.md`](https://example.invalid/curupira/blob/main/docs/PROTOCOL.md)):
//!
//! - `initialize` must be the first request. `describe` and the `trigger/*` methods
//!   before it get protocol or version failure (-32001) `` `initialize` must come
//!   first``; a second `initialize` is refused the same way. `shutdown` works any time.
//! - `protocol_version` is a non-negative integer or a string `MAJOR` or `MAJOR.MINOR`
//!   (`"2"`, `"2.1"`; `"3.0.1"` is not a version); only the major part is compared with [`PROTOCOL_VERSION`]. Another
//!   major is -32001 naming both versions; a missing or malformed version is invalid
//!   params (-32602). `host` is optional; when present its `name` and `version` must be
//!   strings.
//! - Params are checked strictly: `trigger_type` (a string) is required by every
//!   `trigger/*` method, `arguments` (an object) by `validate` and `poll`, `values` (an
//!   array of objects with exactly the string members `key` and `value`) by
//!   `onStarted` and `onFinished`. Members a method does not name are ignored. Each
//!   -32602 message names the offending member as a JSON Pointer into the params.
//! - A `trigger_type` that [`Trigger::describe`] does not list is -32602 naming the
//!   types the extension offers; the trait is not called.
//! - A validation failure is -32003 whose message lists every problem and whose
//!   `data` is `{"errors": [{"path", "message"}, …]}`.
//! - A polled item with an empty, repeated or reserved key (`repository`,
//!   `automation`) is never sent: the reply is -32603 naming the key.
//! - Notifications and responses from the host are ignored and never answered (a line
//!   on stderr says so). Batches are refused with one -32600 reply.
//! - A framing error on the input ends the loop with [`ServeError::Read`]: the stream
//!   cannot be resynchronised, so nothing is answered. [`run`] logs it on stderr and
//!   exits 1.
//!
//! Nothing but frames is written on stdout; log lines go to stderr, prefixed with the
//! extension's name. Keep `println!` out of trigger code: it would corrupt the stream.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod run;
mod serve;
mod trigger;

pub use curupira_jsonrpc::ErrorCode;
pub use curupira_protocol::{
    Arguments, CORE_KEYS, Configuration, PROTOCOL_VERSION, Pair, TriggerDescription, TriggerSchema,
    ValidationError,
};
pub use run::{ManifestInfoError, Mode, PRINT_MANIFEST_FLAG, print_manifest, run, run_as};
pub use serve::{ServeError, ServeOptions, ServeOutcome, serve};
pub use trigger::{PollContext, Trigger, TriggerError, ValidateError};

/// The `serde_json` crate, whose `Value` and `Map` the [`Arguments`], a
/// [`TriggerSchema`]'s schema and a [`TriggerError`]'s data are: re-exported so a
/// trigger builds and reads them (`curupira_extension_sdk::serde_json::json!`) with
/// the very version this crate uses, without a dependency of its own.
pub use serde_json;

/// The `curupira-framing` crate, whose errors [`ServeError`] carries: re-exported so
/// that a test of a trigger can write the frames [`serve`] reads, and read back its
/// replies, with the very codec it uses.
pub use curupira_framing;

/// The README's example, compiled as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
