//! The vocabulary of Curupira protocol 2, with one copy of each of its rules.
//!
//! A host and an extension trade JSON-RPC 2.0 messages (`curupira-jsonrpc`) in frames
//! (`curupira-framing`); this crate says what those messages mean: the method names
//! and their params and result types ([`method`]), the protocol version and the one
//! compatibility rule ([`ProtocolVersion`], [`check_compatible`]), the item rules every
//! polled item obeys ([`check_item`], [`RESERVED_KEYS`]), the host's core keys of an
//! automation's table ([`CORE_KEYS`], [`parameters`]), the schema `default`s a host
//! fills into an automation's arguments before `trigger/validate`
//! ([`apply_defaults`]), and the problems a validation
//! reports ([`ValidationError`]). Every type reads strictly ([`Wire::read`]), with a
//! [`ShapeError`] that names the offending member by its JSON Pointer.
//!
//! The Rust SDK reads params and writes results with it; the host writes params and
//! reads results with it; the Curupira manifest validator reads `protocol_version`
//! with it. No I/O, no processes: see `curupira-client` for driving an extension.
//!
//! ```
//! use curupira_protocol::method::{Method, Poll};
//! use curupira_protocol::serde_json::json;
//! use curupira_protocol::{ItemProblem, Problem, Wire};
//!
//! // A host reads what `trigger/poll` answered.
//! let result = json!({"values": [{"key": "issue", "value": "7"}]});
//! let item = <Poll as Method>::Result::read(Some(&result))?;
//! assert_eq!(item.values.unwrap()[0].value, "7");
//!
//! // Nothing found is `null`; a reserved key is refused, naming the pair.
//! assert_eq!(<Poll as Method>::Result::read(Some(&json!({"values": null})))?.values, None);
//! let error = <Poll as Method>::Result::read(Some(&json!({
//!     "values": [{"key": "repository", "value": "x"}]
//! })))
//! .unwrap_err();
//! assert_eq!(error.pointer, "/values/0");
//! assert!(matches!(
//!     error.problem,
//!     Problem::Item(ref item) if item.problem == ItemProblem::ReservedKey("repository".into())
//! ));
//! # Ok::<(), curupira_protocol::ShapeError>(())
//! ```
//!
//! # Decisions where the specification is silent
//!
//! - A version is a non-negative integer or a string `MAJOR` / `MAJOR.MINOR` of
//!   digits; only majors are compared (`"3.0.1"` is not a version anywhere).
//! - Members a definition does not name are ignored; a pair has exactly `key` and
//!   `value`. Optional strings are absent or strings (`null` is refused).
//! - `initialize`'s result needs `server_info` with the strings `name` and `version`
//!   (the reference host fails without it); its params' `client_info` may be absent.
//! - `describe`'s triggers need a non-empty `trigger_type` (`type` alone is refused, a
//!   `type` beside it is ignored); `prompt_fields` are strings (objects are refused,
//!   in `describe` and in `trigger/schema`) and may be absent, as may `agents`;
//!   `schema` is an object or a boolean.
//! - `trigger/validate` answers a result with a boolean `ok` ([`ValidateResult`]):
//!   `{}` and `null` are refused; `ok: false` may carry an `error` sentence, `ok:
//!   true` a normalised `configuration`. The results of `trigger/onStarted`,
//!   `trigger/onFinished` and `shutdown` are accepted whatever they are, `null`
//!   included ([`Ack`]).
//! - On reading, an absent `configuration` (validate) or `automation` (poll) is an
//!   empty table, as the official SDK reads it (an `arguments` member is not read); an
//!   absent poll `limit` is none and an absent `preview` false; `describe` and
//!   `shutdown` take absent, `null` or object params alike ([`NoParams`], written as
//!   `null` and sent as no `params` member).
//!
//! The shapes themselves are the ecosystem's: what the reference host `curupira`
//! 0.4.0 sends and accepts and what the official Python SDK `curupira-sdk` 0.1.0
//! answers ([`docs/PROTOCOL.md`](https://example.invalid/curupira/blob/main/docs/PROTOCOL.md)).

pub mod defaults;
mod item;
mod messages;
pub mod method;
mod shape;
mod validation;
mod version;

pub use curupira_task_identity::Pair;
pub use defaults::apply_defaults;
pub use item::{ItemError, ItemProblem, RESERVED_KEYS, check_item, is_reserved};
pub use messages::{
    Ack, Arguments, CORE_KEYS, Configuration, DescribeResult, HostCapabilities, InitializeParams,
    InitializeResult, NoParams, PeerInfo, PollParams, PollResult, SchemaParams, TaskParams,
    TriggerDescription, TriggerSchema, ValidateParams, ValidateResult, Wire, is_core_key,
    local_trigger_type, parameters,
};
pub use shape::{Problem, Root, ShapeError};
pub use validation::{ValidationError, rejection_message, validation_data, validation_errors};
pub use version::{
    PROTOCOL_VERSION, Peer, ProtocolVersion, VersionError, VersionMismatch, check_compatible,
};

/// The `serde_json` crate, whose `Value` every reader takes ([`Wire::read`]) and
/// whose `Map` a [`Configuration`] is: re-exported so a user writes them
/// (`curupira_protocol::serde_json::json!`) with the very version this crate uses,
/// without a dependency of their own.
pub use serde_json;

/// Writes a params or result value as JSON.
///
/// Fails only if a value inside (an argument, a schema) cannot be written as JSON,
/// which a `serde_json::Value` always can.
pub fn to_json<T: Wire>(value: &T) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::to_value(value)
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
