//! One module per subcommand. Each exposes `run(…) -> anyhow::Result<ExitCode>` and
//! what it takes: `Args` (clap `Args`) for a command of its own, or `Command` (clap
//! `Subcommand`) for one with subcommands (`curupira manifest check`). An `Err` is
//! reported by `main` and exits 2.
//!
//! What several commands share lives here, once: the `--config`, `--format` (of a
//! report) and `-q`/`-v` arguments and loading the config behind them, reading standard
//! input (`-`) and its text, and printing a report.

pub mod builtin;
pub mod completions;
pub mod frame;
pub mod identity;
pub mod man;
pub mod manifest;
pub mod plugins;
pub mod probe;
pub mod registry;
pub mod render;
pub mod run;
pub mod spirit;
pub mod validate;

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use curupira_diagnostics::{Report, color_enabled};
use curupira_host::config::{self, LoadError, Loaded};
use curupira_host::format::Format;
use curupira_host::logging::{self, Level};
use curupira_host::runner;

/// `--config FILE`, for the commands that read `curupira.toml`.
#[derive(clap::Args)]
pub struct ConfigArg {
    /// The config file.
    #[arg(long, short = 'c', value_name = "FILE", default_value = config::FILE_NAME)]
    pub config: PathBuf,
}

/// `--format` of a command that prints a report of diagnostics.
#[derive(clap::Args)]
pub struct ReportFormat {
    /// `human`: each diagnostic rustc-like, with its source line, then a summary
    /// line; `json`: one object on one line, `{"diagnostics": [...], "errors": n,
    /// "warnings": n}` (`docs/DIAGNOSTICS.md`).
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    pub format: Format,
}

/// `-q` / `-v` / `-vv`, for the commands that log what they do.
#[derive(clap::Args)]
pub struct Verbosity {
    /// More log on stderr: -v debug, -vv trace (every frame sent and received).
    /// `RUST_LOG`, when set, overrides -q and -v.
    #[arg(short, long, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    verbose: u8,
    /// Only errors on stderr: no info or warning log lines (an extension's stderr
    /// lines included). `RUST_LOG`, when set, overrides it.
    #[arg(short, long)]
    quiet: bool,
}

impl Verbosity {
    /// Installs the stderr log at this verbosity (see `curupira_host::logging`).
    pub fn init_logging(&self) {
        let level = if self.quiet {
            Level::Quiet
        } else {
            Level::from_verbose(self.verbose)
        };
        logging::init_level(level);
    }
}

/// The start of every command that reads the config: the log at `verbosity`, this
/// executable (it runs the built-in extensions), and the config checked. An `Err`
/// when the executable cannot be found or the file cannot be read (exit 2); a missing
/// `./curupira.toml` says how to name another file.
pub fn load_config(config: &ConfigArg, verbosity: &Verbosity) -> anyhow::Result<(PathBuf, Loaded)> {
    verbosity.init_logging();
    let host_exe = runner::host_executable().context("cannot find the curupira executable")?;
    let loaded = match config::load(&config.config) {
        Err(LoadError::Read { path, source })
            if source.kind() == io::ErrorKind::NotFound
                && path.as_os_str() == config::FILE_NAME =>
        {
            anyhow::bail!(
                "cannot read the config file `{}`: there is none in the current folder; \
                 name the config file with `--config FILE` (`-c FILE`), or run curupira in \
                 the folder that holds it",
                config::FILE_NAME
            )
        }
        other => other?,
    };
    Ok((host_exe, loaded))
}

/// Prints the diagnostics of a command whose stdout carries something else (`run`'s
/// events). When they stop the command (any error) and `format` is JSON, they go to
/// stdout as the one-line object every checking command prints (`{"diagnostics":
/// [...], "errors": n, "warnings": n}`), the only thing on stdout then: a program
/// reading stdout gets them in the same shape everywhere. Otherwise (human format, or
/// only warnings, where events follow) they go to stderr, rustc-like, so stdout stays
/// one event per line.
pub fn write_diagnostics_beside_events(report: &Report, format: Format) -> anyhow::Result<()> {
    match format {
        Format::Json if report.has_errors() => write_report(report, Format::Json),
        Format::Json | Format::Human => {
            let stderr = io::stderr();
            let text = report.render_human(color_enabled(&stderr));
            let mut err = stderr.lock();
            err.write_all(text.as_bytes())
                .and_then(|()| err.flush())
                .context("cannot write to standard error")
        }
    }
}

/// A checking command's report for stdout: rustc-like text (coloured only on a
/// terminal without `NO_COLOR`), or SPEC section 7's JSON object on one line.
pub fn report_output(report: &Report, format: Format) -> String {
    match format {
        Format::Json => report.render_json() + "\n",
        Format::Human => report.render_human(color_enabled(&io::stdout())),
    }
}

/// Writes a checking command's report on stdout (see [`report_output`]).
pub fn write_report(report: &Report, format: Format) -> anyhow::Result<()> {
    write_stdout(&report_output(report, format))
        .context("could not write the report to standard output")
}

/// Writes a checking command's report on stdout and gives its exit code: 0 when it
/// has no error (warnings allowed), 1 when it has errors.
pub fn finish_report(report: &Report, format: Format) -> anyhow::Result<ExitCode> {
    write_report(report, format)?;
    Ok(ExitCode::from(report.exit_code()))
}

/// Writes `text` to standard output and flushes it.
pub fn write_stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// How diagnostics name standard input, read when the path given is `-`.
pub const STDIN_NAME: &str = "<stdin>";

/// The most bytes a checking command reads from standard input: far above any real
/// manifest or `package.json`, checked before more memory is spent.
pub const MAX_STDIN_BYTES: u64 = 16 * 1024 * 1024;

/// All of standard input, however large: for the commands that read a stream of their
/// own (`identity`, `render --pairs -`), not a document to check.
pub fn read_all_stdin() -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .context("cannot read standard input")?;
    Ok(bytes)
}

/// The text of `bytes`, or `None` after an `error:` line on stderr saying where
/// `name` stops being UTF-8.
pub fn utf8_or_report<'b>(bytes: &'b [u8], name: &str) -> Option<&'b str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(err) => {
            eprintln!(
                "error: {name} is not UTF-8 (invalid byte at offset {})",
                err.valid_up_to()
            );
            None
        }
    }
}

/// When `path` is `-`: all of standard input (see [`read_stdin`]); `None` for any
/// other path, which the caller reads as a file.
pub fn read_if_stdin(path: &Path, what: &str) -> anyhow::Result<Option<Vec<u8>>> {
    if path.as_os_str() == "-" {
        read_stdin(what).map(Some)
    } else {
        Ok(None)
    }
}

/// Reads all of standard input, refusing more than [`MAX_STDIN_BYTES`]; `what` names
/// the document in the error (`the manifest`, `package.json`).
fn read_stdin(what: &str) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    io::stdin()
        .lock()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| anyhow::anyhow!("could not read {what} from standard input: {error}"))?;
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        anyhow::bail!(
            "{what} on standard input is larger than {MAX_STDIN_BYTES} bytes; no such file is that large"
        );
    }
    Ok(bytes)
}
