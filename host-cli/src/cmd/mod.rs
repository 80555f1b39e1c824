//! One module per subcommand. Each exposes `run(…) -> anyhow::Result<ExitCode>` and
//! what it takes: `Args` (clap `Args`) for a command of its own, or `Command` (clap
//! `Subcommand`) for one with subcommands (`curupira manifest check`). An `Err` is
//! reported by `main` and exits 2.
//!
//! What several commands share lives here, once: the `--config`, `--format` (of a
//! report) and `-v` arguments and loading the config behind them, reading standard
//! input (`-`) and its text, and printing a report.

pub mod builtin;
pub mod frame;
pub mod identity;
pub mod manifest;
pub mod plugins;
pub mod probe;
pub mod registry;
pub mod render;
pub mod run;
pub mod spirit;
pub mod tasks;
pub mod validate;
pub mod watchdog;

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use curupira_diagnostics::{Report, color_enabled};
use curupira_host::config::{self, Loaded};
use curupira_host::format::Format;
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
    /// How to print the diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// `-v`/`-vv`, for the commands that read the config and log what they do.
#[derive(clap::Args)]
pub struct Verbosity {
    /// More log on stderr (-v debug, -vv trace); `RUST_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
}

/// The start of every command that reads the config: the log at `verbosity`, this
/// executable (it runs the built-in extensions), and the config checked. An `Err`
/// when the executable cannot be found or the file cannot be read (exit 2).
pub fn load_config(config: &ConfigArg, verbosity: &Verbosity) -> anyhow::Result<(PathBuf, Loaded)> {
    curupira_host::logging::init(verbosity.verbose);
    let host_exe = runner::host_executable().context("cannot find the curupira executable")?;
    let loaded = config::load(&config.config)?;
    Ok((host_exe, loaded))
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
