//! The host's log: `tracing` events on stderr, never on stdout (stdout carries events
//! and reports).
//!
//! The level is `RUST_LOG` when set (any `tracing-subscriber` filter, e.g.
//! `RUST_LOG=curupira::extension=warn`); otherwise `info`, `debug` with `-v`, `trace`
//! with `-vv` (`trace` shows every frame body sent and received). Extension stderr
//! lines are logged at `info` with the target [`curupira_client::STDERR_TARGET`].
//! Colour only on a terminal and never with `NO_COLOR` set.

use std::io::{self, IsTerminal};

use tracing_subscriber::EnvFilter;

/// Installs the stderr logger for a verbosity (`-v` count). Calling it twice keeps
/// the first logger.
pub fn init(verbosity: u8) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::new(spec),
        _ => EnvFilter::new(match verbosity {
            0 => "info",
            1 => "debug",
            _ => "trace",
        }),
    };
    let color = io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(color)
        .with_target(false)
        .try_init();
}
