//! `curupira tui`: a terminal dashboard of a Curupira host, drawn with ratatui from
//! what the host already publishes for anyone to read — `<state folder>/status.json`,
//! the task ledger's tasks and attempts, each attempt's log — so it needs nothing of
//! the host but its state folder, and never holds the host up.
//!
//! It shows what runs now and for how long (automation, task, attempt, agent pid,
//! item), the retry queue (when each task retries, and after what), each automation's
//! rounds and its next round (or a cron automation's next tick, when the host
//! publishes one), and the ledger's recent outcomes. ↑/↓ select a task; Enter opens
//! the selected attempt's log and follows it live, as `curupira tasks log --follow`
//! does (Esc or `q` goes back); `r` on a failed task asks for it to run again, exactly
//! as `curupira tasks retry` does; `q` or Esc quits (Ctrl-C too). It is drawn anew at
//! every size the terminal takes, and a host that stops under it is said ("host
//! stopped"), not fatal: it keeps looking, and a host started again appears.
//!
//! Two ways to run it, as the host's `curupira tui` does
//! ([`docs/HOST.md`](https://example.invalid/curupira/blob/main/docs/HOST.md),
//! "`curupira tui`"):
//!
//! - [`attach`]: on a host that runs beside it (or will). It only reads, but for the
//!   retry a person asks for; quitting leaves the host running.
//! - [`dispatch`]: runs its own host, [`HostCommand`] (the `curupira` executable as
//!   `run --watch`), as a child in a process group of its own, its output in
//!   `<state folder>/tui-host.log` ([`HOST_OUTPUT`]) so nothing scribbles over the
//!   screen. `q` stops it by its stop protocol: a first SIGINT (no new task starts;
//!   the running agents are waited for, and the dashboard says so), `q` again a second
//!   (the running agents are stopped), `q` a third time kills it. A host that exits by
//!   itself ends the dashboard, and its output's end is printed on stderr. SIGHUP,
//!   SIGINT or SIGTERM to the dashboard stop its host within bounds (a request, 3 s, a
//!   second request, 30 s, then SIGKILL), and every other way out (an error, a panic)
//!   stops and reaps it too.
//!
//! The pieces: [`Source`] reads a [`Snapshot`] of the state folder (pure data), a
//! [`Dashboard`] holds it with the cursor and the open log and turns a [`Key`] into an
//! [`Action`] (pure), [`Dashboard::draw`] lays it out on any ratatui backend (tested
//! on ratatui's `TestBackend`), and a loop of one thread reads, draws and waits for a
//! key in turn on the real terminal, whose raw mode and alternate screen are given
//! back on every way out, a panic included. Without a terminal there is nothing to
//! draw: the caller decides what to do instead (`curupira tui` runs `run --watch`).
//!
//! ```
//! use curupira_tui::{Dashboard, Mode, Source};
//! use curupira_tui::ratatui::{Terminal, backend::TestBackend};
//!
//! // A state folder no host ever ran on.
//! let source = Source::new(std::env::temp_dir().join("no-curupira-host-here"), None);
//! let mut dashboard = Dashboard::new(Mode::Attached, source.state_dir());
//! dashboard.update(source.read());
//! let mut terminal = Terminal::new(TestBackend::new(100, 30))?;
//! terminal.draw(|frame| dashboard.draw(frame))?;
//! let buffer = terminal.backend().buffer();
//! let top: String = (0..100).map(|x| buffer[(x, 0)].symbol()).collect();
//! assert!(top.contains("host stopped: none runs on"), "{top}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod app;
mod dashboard;
mod host;
mod log;
mod snapshot;
mod source;
mod terminal;
#[cfg(test)]
mod test_data;
mod text;
mod view;

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use curupira_workspace::state::{self, Holder, RUN_LOCK, RunLock};

pub use dashboard::{Action, Dashboard, Key, Mode, Stopping, Target};
pub use host::{HOST_OUTPUT, HostCommand};
/// The ratatui the dashboard draws with, for drawing it on a backend of one's own.
pub use ratatui;
pub use snapshot::{Automation, Host, HostState, LedgerState, Snapshot};
pub use source::{RECENT, Source};

use app::Ended;
use host::HostChild;
use terminal::{Keys, Screen, Signals};

/// How much of its host's output a dashboard prints when the host exited by itself.
const OUTPUT_TAIL: u64 = 16 * 1024;

/// Why the dashboard could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TuiError {
    /// The terminal could not be set up (raw mode, the alternate screen).
    #[error("cannot set up the terminal for the dashboard: {0}")]
    Terminal(std::io::Error),
    /// The signal handlers could not be installed.
    #[error("cannot install the SIGHUP/SIGINT/SIGTERM handlers: {0}")]
    Signals(std::io::Error),
    /// The state folder could not be made.
    #[error("cannot create the state folder `{}`: {source}", path.display())]
    StateFolder {
        /// The folder.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// Another host runs on the state folder: [`dispatch`] would start a second.
    #[error(
        "another `curupira run` ({}) is using `{}`; one host runs per state: `curupira tui \
         --attach` shows the one that runs",
        pid.map_or_else(|| "pid unknown".to_owned(), |pid| format!("pid {pid}")),
        path.display()
    )]
    HostRunning {
        /// Its `run.lock`.
        path: PathBuf,
        /// The pid it wrote there.
        pid: Option<u32>,
    },
    /// The host could not be started.
    #[error("cannot start the host `{}`: {source}", program.display())]
    Host {
        /// The program.
        program: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The file for the host's output could not be made.
    #[error("cannot write the host's output to `{}`: {source}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
}

/// Shows the dashboard on the terminal (stdout and the keyboard) for the host that
/// runs on `source`'s state folder, until `q`, Esc or Ctrl-C (or SIGHUP, SIGINT,
/// SIGTERM). It only reads, but for a retry asked for with `r`; the host, when one
/// runs, keeps running.
pub fn attach(source: &Source) -> Result<(), TuiError> {
    let signals = Signals::install().map_err(TuiError::Signals)?;
    let mut screen = Screen::enter().map_err(TuiError::Terminal)?;
    app::run(
        screen.terminal(),
        &mut Keys::new(),
        source,
        Mode::Attached,
        None,
        &|| signals.seen(),
    );
    Ok(())
}

/// Runs `command` as the host of `source`'s state folder and shows the dashboard on
/// it until it quits (the host stopped then) or the host exits by itself (then the
/// end of its output is printed on stderr). Returns the host's exit code: 130 after
/// the stop `q` asks for, as `run --watch` exits on SIGINT.
pub fn dispatch(source: &Source, command: &HostCommand) -> Result<i32, TuiError> {
    let state_dir = source.state_dir();
    state::ensure_folder(command.config_dir(), state_dir).map_err(|source| {
        TuiError::StateFolder {
            path: state_dir.to_owned(),
            source,
        }
    })?;
    let lock = state_dir.join(RUN_LOCK);
    if let Ok(Holder::Held { pid }) = RunLock::holder(&lock) {
        return Err(TuiError::HostRunning { path: lock, pid });
    }
    let signals = Signals::install().map_err(TuiError::Signals)?;
    let output = state_dir.join(HOST_OUTPUT);
    let mut host = HostChild::spawn(command, &output)?;
    let ended = {
        let mut screen = Screen::enter().map_err(TuiError::Terminal)?;
        app::run(
            screen.terminal(),
            &mut Keys::new(),
            source,
            Mode::Dispatching,
            Some(&mut host),
            &|| signals.seen(),
        )
    };
    Ok(match ended {
        Ended::Host { code, asked: true } => code,
        Ended::Host { code, asked: false } => {
            eprintln!(
                "curupira tui: the host exited with status {code}; its output (`{}`) ends:",
                output.display()
            );
            eprint!("{}", tail(&output));
            code
        }
        Ended::Quit => host.kill(),
    })
}

/// The last [`OUTPUT_TAIL`] bytes of the file, from a line's start.
fn tail(path: &std::path::Path) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map_or(0, |meta| meta.len());
    let from = len.saturating_sub(OUTPUT_TAIL);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let text = match (from, text.find('\n')) {
        (1.., Some(at)) => &text[at + 1..],
        _ => &text[..],
    };
    let mut text = text.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
