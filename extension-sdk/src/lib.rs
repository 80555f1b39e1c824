//! Write a Curupira trigger extension in Rust: a typed trigger ([`TypedTrigger`]) in an
//! [`App`], served by [`run`].
//!
//! A Curupira extension is a separate process that speaks JSON-RPC 2.0 in
//! length-prefixed frames on its stdin/stdout (the repository's
//! [`docs/PROTOCOL.md`](https://example.invalid/curupira/blob/main/docs/PROTOCOL.md)), in
//! the shapes the reference host `curupira` 0.4.0 and the official Python SDK
//! `curupira-sdk` 0.1.0 speak. This crate does everything but the trigger itself:
//! framing (`curupira-framing`), message parsing (`curupira-jsonrpc`), `initialize` and
//! the version check, params checking by the rules of `curupira-protocol` (whose types
//! it re-exports), error replies, `shutdown`, and `--curupira-print-manifest`.
//!
//! A trigger is written as the official Python SDK has it written: its parameters are
//! a `serde` struct whose JSON Schema `schemars` derives, its items a struct whose
//! fields are the prompt fields; the [`App`] binds and checks an automation's table,
//! answers `trigger/validate` with the defaults filled in, and turns items into pairs
//! (its rules are on [`App`]). The lower-level [`Trigger`] trait, in the protocol's
//! own terms, is there for what the typed one cannot say.
//!
//! The crate re-exports [`serde`], [`schemars`] and [`serde_json`], so a trigger needs
//! no other dependency: derive through them (`use curupira_extension_sdk::prelude::*`
//! brings the derives, and `#[serde(crate = "curupira_extension_sdk::serde")]` tells
//! serde's derive where serde is), or add `serde` and `schemars` 1 to your own
//! dependencies and derive as usual. It also re-exports [`curupira_framing`], whose
//! errors [`ServeError`] carries and whose frames a test of a trigger writes.
//!
//! ```
//! use curupira_extension_sdk::prelude::*;
//! use curupira_extension_sdk::curupira_framing::{FrameReader, FrameWriter};
//! use curupira_extension_sdk::serde_json::{self, Value, json};
//! use curupira_extension_sdk::{ServeOptions, serve};
//!
//! /// The parameters of `count`.
//! #[derive(Deserialize, Serialize, JsonSchema)]
//! #[serde(crate = "curupira_extension_sdk::serde")]
//! struct CountParams {
//!     /// The last number handed out.
//!     max: u64,
//!     /// What each number counts.
//!     #[serde(default = "sheep")]
//!     what: String,
//! }
//!
//! fn sheep() -> String {
//!     "sheep".to_owned()
//! }
//!
//! /// One item: the prompt's `${n}` and `${what}`.
//! #[derive(Serialize, JsonSchema)]
//! #[serde(crate = "curupira_extension_sdk::serde")]
//! struct Number {
//!     n: u64,
//!     what: String,
//! }
//!
//! /// Hands out the numbers 1 to `max`, one per poll.
//! struct Counter {
//!     next: u64,
//! }
//!
//! impl TypedTrigger for Counter {
//!     type Params = CountParams;
//!     type Item = Number;
//!
//!     fn poll(&mut self, params: &CountParams, _: PollContext)
//!         -> Result<Option<Number>, BoxError>
//!     {
//!         if self.next > params.max {
//!             return Ok(None);
//!         }
//!         let (n, what) = (self.next, params.what.clone());
//!         self.next += 1;
//!         Ok(Some(Number { n, what }))
//!     }
//!
//!     fn check(&self, params: &CountParams) -> Result<(), String> {
//!         match params.max {
//!             0 => Err("max must be at least 1".to_owned()),
//!             _ => Ok(()),
//!         }
//!     }
//! }
//!
//! // What a host would write on the extension's stdin.
//! let mut input = FrameWriter::new(Vec::new());
//! for request in [
//!     json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
//!            "params": {"protocol_version": 2,
//!                       "client_info": {"name": "doc", "version": "0"}}}),
//!     json!({"jsonrpc": "2.0", "id": 2, "method": "trigger/validate",
//!            "params": {"trigger_type": "count",
//!                       "configuration": {"trigger_type": "mine/count", "max": 0}}}),
//!     json!({"jsonrpc": "2.0", "id": 3, "method": "trigger/validate",
//!            "params": {"trigger_type": "count",
//!                       "configuration": {"trigger_type": "mine/count", "max": 2}}}),
//!     json!({"jsonrpc": "2.0", "id": 4, "method": "trigger/poll",
//!            "params": {"trigger_type": "mine/count", "limit": 5, "preview": false,
//!                       "automation": {"trigger_type": "mine/count", "max": 2,
//!                                      "what": "sheep"}}}),
//!     json!({"jsonrpc": "2.0", "id": 5, "method": "shutdown", "params": null}),
//! ] {
//!     input.write_frame(request.to_string().as_bytes())?;
//! }
//! let input = input.into_inner();
//!
//! let mut output = Vec::new();
//! let mut app = App::new().trigger("count", Counter { next: 1 });
//! serve(&mut app, &input[..], &mut output, &ServeOptions::new("counter", "1.0.0"))?;
//!
//! let replies: Vec<Value> = FrameReader::new(&output[..])
//!     .map(|body| serde_json::from_slice(&body.unwrap()).unwrap())
//!     .collect();
//! assert_eq!(replies, [
//!     json!({"jsonrpc": "2.0", "id": 1, "result": {"protocol_version": 2,
//!            "server_info": {"name": "counter", "version": "1.0.0"}}}),
//!     json!({"jsonrpc": "2.0", "id": 2,
//!            "result": {"ok": false, "error": "max must be at least 1"}}),
//!     json!({"jsonrpc": "2.0", "id": 3, "result": {"ok": true, "configuration":
//!            {"trigger_type": "mine/count", "max": 2, "what": "sheep"}}}),
//!     json!({"jsonrpc": "2.0", "id": 4, "result": {"values": [
//!            {"key": "n", "value": "1"}, {"key": "what", "value": "sheep"}]}}),
//!     json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
//! ]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What the serve loop decides
//!
//! Where the protocol is silent, [`serve`] does this, for any [`Trigger`] (what the
//! [`App`] adds for typed triggers is on [`App`]):
//!
//! - `initialize` must be the first request: `describe` and the `trigger/*` methods
//!   before it get protocol or version failure (-32001) `` `initialize` must come
//!   first``. Its result is `{"protocol_version": 2, "server_info": {"name",
//!   "version"}}`, from [`ServeOptions`] (the manifest's, with [`run`]). A second
//!   `initialize` is answered like the first, as the official SDK answers it.
//!   `shutdown` works any time, is answered `{}` and ends the loop.
//! - `protocol_version` is a non-negative integer or a string `MAJOR` or `MAJOR.MINOR`
//!   (`"2"`, `"2.1"`; `"3.0.1"` is not a version); only the major part is compared
//!   with [`PROTOCOL_VERSION`]. Another major is -32001 naming both versions; a
//!   missing or malformed version is invalid params (-32602). `client_info` is
//!   optional (unknown members such as an older host's `host` are ignored).
//! - `"params": null` is absent params. `trigger_type` (a string) is required by every
//!   `trigger/*` method (-32602 without it); `trigger/validate` reads `configuration`
//!   and `trigger/poll` reads `automation`, `limit` and `preview`, each absent one
//!   read as empty, none and false (a host that sends `arguments` instead is seen as
//!   sending no parameters, as by the official SDK); `values` (an array of objects
//!   with exactly the string members `key` and `value`) is required by `onStarted`
//!   and `onFinished`. Members a method does not name are ignored. Each -32602
//!   message names the offending member as a JSON Pointer into the params.
//! - `trigger_type` is resolved by its last `/` segment (`alias/local` and `local`
//!   both work). A type that [`Trigger::describe`] does not list is configuration
//!   validation failure (-32003) `unsupported trigger_type 'nope'`, with the offered
//!   types as `data` (`{"trigger_types": […]}`); in `trigger/validate` it is the
//!   verdict `{"ok": false, "error": "unsupported trigger_type 'nope'"}`. The trait is
//!   not called.
//! - `trigger/validate` answers a verdict, never a -32003: `{"ok": true,
//!   "configuration": …}` with [`Trigger::validate_configuration`]'s table (by
//!   default the one received, core keys kept, with the schema's top-level
//!   `default`s filled in), or `{"ok": false, "error": "…"}` with every problem of
//!   [`ValidateError::Invalid`] (`trigger 'count': /max: …; /min: …`) or the sentence
//!   of [`ValidateError::Rejected`]. Only [`ValidateError::Failed`] is an error reply,
//!   with its own code.
//! - `trigger/poll` gives the trait the parameters: `automation` without its core
//!   keys ([`CORE_KEYS`]), with `limit` and `preview` as a [`PollContext`]. A polled
//!   item with an empty, repeated or reserved key (`repository`, `automation`) is
//!   never sent: the reply is internal error (-32603) naming the key.
//! - `trigger/onStarted`, `trigger/onFinished` and `shutdown` are answered `{}`.
//! - Notifications and responses from the host are ignored and never answered (a line
//!   on stderr says so), as JSON-RPC 2.0 requires (the official SDK answers a request
//!   without `id` with `id: null`; no host sends one). Batches are refused with one
//!   -32600 reply.
//! - A framing error on the input ends the loop with [`ServeError::Read`]: the stream
//!   cannot be resynchronised, so nothing is answered. [`run`] logs it on stderr and
//!   exits 1.
//!
//! Nothing but frames is written on stdout; log lines go to stderr, prefixed with the
//! extension's name. Keep `println!` out of trigger code: it would corrupt the stream.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod quote;
mod run;
mod serve;
mod trigger;
mod typed;

pub use curupira_jsonrpc::ErrorCode;
pub use curupira_protocol::{
    Arguments, CORE_KEYS, Configuration, PROTOCOL_VERSION, Pair, TriggerDescription, TriggerSchema,
    ValidationError,
};
pub use run::{ManifestInfoError, Mode, PRINT_MANIFEST_FLAG, print_manifest, run, run_as};
pub use serve::{ServeError, ServeOptions, ServeOutcome, serve};
pub use trigger::{PollContext, Trigger, TriggerError, ValidateError};
pub use typed::{App, BoxError, RegistrationError, TypedTrigger};

/// What a typed trigger's code needs, in one glob import: the [`App`], the
/// [`TypedTrigger`] trait and what its methods trade, and the derives of `serde` and
/// `schemars` (with the `schemars` crate itself, which its derive names).
///
/// `#[derive(Deserialize, Serialize)]` from here also needs
/// `#[serde(crate = "curupira_extension_sdk::serde")]` on the type, unless `serde` is
/// a dependency of your own crate: serde's derive looks for a crate named `serde`.
pub mod prelude {
    pub use crate::{App, BoxError, PollContext, TypedTrigger, run};
    pub use schemars::{self, JsonSchema};
    pub use serde::{Deserialize, Serialize};
}

/// The `serde` crate, whose traits a trigger's parameters and items implement:
/// re-exported so they derive them without a dependency of their own
/// (`#[serde(crate = "curupira_extension_sdk::serde")]`).
pub use serde;

/// The `schemars` crate (1.x), whose `JsonSchema` gives a typed trigger its JSON
/// Schema and prompt fields: re-exported so they derive it without a dependency of
/// their own.
pub use schemars;

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
