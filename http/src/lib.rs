//! Serves a running Curupira host over HTTP, for people and monitoring on the same
//! machine: a versioned JSON API of its state, tasks, attempts and logs, one guarded
//! mutation (a retry), an OpenAPI 3.1 document of all of it, Prometheus metrics and a
//! self-contained status page.
//!
//! The server only reads: what it serves comes from an [`Api`] of the host's (the
//! `curupira` binary answers from the run's published state and its ledger), and the
//! metrics from the events the host hands [`Metrics::observe`]. It runs on a thread
//! and a Tokio runtime of its own ([`Server::start`]), so a slow or stalled client
//! never holds up the run: each request's headers and body are bounded in size and
//! time ([`Limits`]), and so is the number of connections.
//!
//! - **Loopback only** unless asked ([`bind`]): a non-loopback address is refused
//!   without `allow_remote`.
//! - **No cross-site request, no DNS rebinding**: every request's `Host` must name the
//!   listening address (on loopback, `localhost` too); the one mutation (`POST
//!   /api/v1/tasks/<id>/retry`) accepts only `application/json`, and an `Origin`, when
//!   sent, must be that same host.
//!
//! | method and path | answer |
//! |---|---|
//! | `GET /` | the status page (HTML, no external resource) |
//! | `GET /api/v1/state` | [`Api::state`]: the `curupira status` document |
//! | `GET /api/v1/tasks?status=&automation=&limit=` | [`Api::tasks`] |
//! | `GET /api/v1/tasks/<id>` | [`Api::task`]: the task and its attempts |
//! | `GET /api/v1/tasks/<id>/log?attempt=N` | [`Api::log`], as text |
//! | `POST /api/v1/tasks/<id>/retry` | [`Api::retry`] |
//! | `GET /api/v1/outcomes?hours=N` | [`Api::outcomes`]: tasks finished per hour |
//! | `GET /api/v1/openapi.json` | the OpenAPI 3.1 document ([`openapi::document`]) |
//! | `GET /metrics` | Prometheus text format ([`Metrics`]) |
//!
//! Errors are `{"error": {"code": "...", "message": "..."}}` with the HTTP status the
//! code names ([`ApiError`]).
//!
//! ```
//! use std::sync::Arc;
//! use curupira_http::{Api, ApiError, Limits, Metrics, Server, TasksQuery, bind};
//! use serde_json::{Value, json};
//!
//! struct Empty;
//! impl Api for Empty {
//!     fn state(&self) -> Result<Value, ApiError> { Ok(json!({"version": 1})) }
//!     fn tasks(&self, _: &TasksQuery) -> Result<Value, ApiError> { Ok(json!([])) }
//!     fn task(&self, id: &str) -> Result<Value, ApiError> { Err(ApiError::not_found(format!("no task `{id}`"))) }
//!     fn log(&self, id: &str, _: Option<u32>) -> Result<String, ApiError> { Err(ApiError::not_found(format!("no task `{id}`"))) }
//!     fn retry(&self, id: &str) -> Result<Value, ApiError> { Err(ApiError::not_found(format!("no task `{id}`"))) }
//!     fn outcomes(&self, _: u32) -> Result<Value, ApiError> { Ok(json!([])) }
//! }
//!
//! let listener = bind("127.0.0.1:0".parse()?, false)?;
//! let server = Server::start(listener, Arc::new(Empty), Arc::new(Metrics::new(None)), Limits::default())?;
//! assert!(server.local_addr().ip().is_loopback());
//! server.stop();
//! // Another address than loopback needs `allow_remote`.
//! assert!(bind("0.0.0.0:0".parse()?, false).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod metrics;
pub mod openapi;
mod page;
pub mod server;

/// The orchestrator whose events and state this crate serves.
pub use curupira_orchestrator;
pub use metrics::Metrics;
/// The JSON values [`Api`] answers with.
pub use serde_json;
pub use server::{BindError, Limits, Server, bind};

use serde_json::Value;

/// What the server serves, answered by the host. Each call runs on a blocking thread
/// of the server's runtime, never on the run's.
pub trait Api: Send + Sync + 'static {
    /// The `curupira status` document, of the running host.
    fn state(&self) -> Result<Value, ApiError>;
    /// The tasks `query` selects, the most recently changed first: a JSON array.
    fn tasks(&self, query: &TasksQuery) -> Result<Value, ApiError>;
    /// One task (its id or a unique prefix), with `attempts`.
    fn task(&self, id: &str) -> Result<Value, ApiError>;
    /// An attempt's log (the last attempt's when `attempt` is `None`).
    fn log(&self, id: &str, attempt: Option<u32>) -> Result<String, ApiError>;
    /// Asks the host to run a finished task again.
    fn retry(&self, id: &str) -> Result<Value, ApiError>;
    /// Tasks finished in each of the last `hours` hours, by outcome: a JSON array.
    fn outcomes(&self, hours: u32) -> Result<Value, ApiError>;
}

/// `GET /api/v1/tasks`'s query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TasksQuery {
    /// `status=`: only tasks with this status.
    pub status: Option<String>,
    /// `automation=`: only this automation's tasks.
    pub automation: Option<String>,
    /// `limit=`: at most this many (50 by default, at most [`MAX_TASKS`]).
    pub limit: u32,
}

/// The most tasks one `GET /api/v1/tasks` returns.
pub const MAX_TASKS: u32 = 1000;

/// An answer that is not a success: an HTTP status, a stable code and one sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// The stable code (`not-found`, `bad-request`, `conflict`, …).
    pub code: &'static str,
    /// What is wrong, in one sentence.
    pub message: String,
}

impl ApiError {
    /// 404 `not-found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "not-found", message)
    }
    /// 400 `bad-request`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "bad-request", message)
    }
    /// 409 `conflict`: the request is understood, the task's state refuses it.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(409, "conflict", message)
    }
    /// 500 `internal`: the host could not answer (its ledger could not be read).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "internal", message)
    }
    /// Any status and code.
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// The error's JSON body.
    pub fn body(&self) -> Value {
        serde_json::json!({"error": {"code": self.code, "message": self.message}})
    }
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
