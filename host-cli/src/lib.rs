//! The machinery of the Curupira toolkit's host, behind the `curupira` binary.
//!
//! The binary (`src/main.rs` and `src/cmd/`) only parses arguments and wires things
//! together; what a host *does* lives here so that tests and benchmarks can drive it
//! directly.
//!
//! ```
//! use curupira_host::events::{duration_text, short_id};
//!
//! // How `run`'s human events show a task: its id's first 12 digits, how long it took.
//! assert_eq!(short_id(&"ab".repeat(32)), "abababababab");
//! assert_eq!(duration_text(125.4), "2 min 5 s");
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod builtin;
pub mod config;
pub mod cron;
pub mod events;
pub mod format;
pub mod installed;
pub mod live_line;
pub mod logging;
pub mod plan;
pub mod plugins;
pub mod preflight;
pub mod reload;
pub mod resolve;
pub mod status;

/// What the host tells an extension about itself in `initialize` (`client_info`):
/// `curupira` and this crate's version.
pub fn host_info() -> curupira_protocol::PeerInfo {
    curupira_protocol::PeerInfo::new("curupira", env!("CARGO_PKG_VERSION"))
}

/// The path of this executable, which runs the built-in extensions and the watchdog.
pub fn host_executable() -> std::io::Result<std::path::PathBuf> {
    std::env::current_exe()
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
