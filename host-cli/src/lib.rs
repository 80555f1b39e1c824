//! The machinery of the Curupira toolkit's host, behind the `curupira` binary.
//!
//! The binary (`src/main.rs` and `src/cmd/`) only parses arguments and wires things
//! together; what a host *does* lives here so that tests and benchmarks can drive it
//! directly.
//!
//! ```
//! use curupira_host::forge::forge_identity;
//!
//! let id = forge_identity("git@github.com:Acme/Widgets.git").unwrap();
//! assert_eq!(id, "Acme/Widgets");
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod builtin;
pub mod config;
pub mod dispatch;
pub mod events;
pub mod extensions;
pub mod forge;
pub mod format;
mod journal;
pub mod logging;
pub mod plugins;
pub mod preflight;
pub mod resolve;
pub mod runner;
pub mod state;
pub mod workspace;

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
