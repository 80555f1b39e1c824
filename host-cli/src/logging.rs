//! The host's log: `tracing` events on stderr, never on stdout (stdout carries events
//! and reports), through [`curupira_process::stderr`], so no thread waits for a stderr nobody
//! reads.
//!
//! The level is `RUST_LOG` when set (any `tracing-subscriber` filter, e.g.
//! `RUST_LOG=curupira::extension=warn`), whatever `-q`/`-v` say; otherwise `info`,
//! `warn` with `-q` (warnings and errors), `debug` with `-v`, `trace` with `-vv`
//! (`trace` shows every frame body sent and received). Extension stderr lines are
//! logged with the target [`curupira_client::STDERR_TARGET`] at the level the line
//! names ([`curupira_client::stderr_line_level`]: `warning: …` at `warn`, `error: …`
//! at `error`, free text at `info`), so `-q` hides an extension's chatter and keeps
//! its warnings and errors. Colour only on a
//! terminal and never with `NO_COLOR` set.
//!
//! ```
//! use curupira_host::logging::Level;
//!
//! assert_eq!(Level::from_verbose(0), Level::Normal);
//! assert_eq!(Level::from_verbose(2), Level::Trace);
//! assert_eq!(Level::Quiet.filter(), "warn");
//! ```

use std::io::{self, IsTerminal};

use tracing_subscriber::EnvFilter;

/// How much the host logs when `RUST_LOG` is not set: `-q`, nothing, `-v`, `-vv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `-q`: warnings and errors.
    Quiet,
    /// The default: `info` (what the host does, each extension's stderr lines).
    Normal,
    /// `-v`: `debug`.
    Debug,
    /// `-vv` (or more): `trace`, with every frame body.
    Trace,
}

impl Level {
    /// The level of a `-v` count.
    pub fn from_verbose(count: u8) -> Self {
        match count {
            0 => Self::Normal,
            1 => Self::Debug,
            _ => Self::Trace,
        }
    }

    /// The `tracing-subscriber` filter of this level.
    pub fn filter(self) -> &'static str {
        match self {
            Self::Quiet => "warn",
            Self::Normal => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }
}

/// Installs the stderr logger for a verbosity (`-v` count). Calling it twice keeps
/// the first logger.
pub fn init(verbosity: u8) {
    init_level(Level::from_verbose(verbosity));
}

/// Installs the stderr logger at `level`, unless `RUST_LOG` is set (non-empty), which
/// wins. Calling it twice keeps the first logger.
pub fn init_level(level: Level) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::new(spec),
        _ => EnvFilter::new(level.filter()),
    };
    let color = io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(MakeStderr)
        .with_ansi(color)
        .with_target(false)
        .try_init();
}

/// A `tracing-subscriber` writer for the host's log: each log line goes whole to
/// [`curupira_process::stderr::write`], which never waits for stderr's reader.
#[derive(Debug, Clone, Copy, Default)]
pub struct MakeStderr;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for MakeStderr {
    type Writer = curupira_process::stderr::LineWriter;

    fn make_writer(&'a self) -> Self::Writer {
        curupira_process::stderr::LineWriter::new()
    }
}
