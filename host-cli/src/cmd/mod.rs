//! One module per subcommand. Each exposes `run(…) -> anyhow::Result<ExitCode>` and
//! what it takes: `Args` (clap `Args`) for a command of its own, or `Command` (clap
//! `Subcommand`) for one with subcommands (`curupira manifest check`). An `Err` is
//! reported by `main` and exits 2.
//!
//! What several commands share lives here, once: the `--config`, `--format` (of a
//! report) and `-q`/`-v` arguments and loading the config behind them, reading standard
//! input (`-`) and its text, printing a report or a generated document, and the exit
//! statuses ([`exit`]).

pub mod builtin;
pub mod completions;
pub mod frame;
pub mod http;
pub mod identity;
pub mod man;
pub mod manifest;
pub mod plugins;
pub mod probe;
pub mod registry;
pub mod render;
pub mod run;
pub mod schema;
pub mod spirit;
pub mod status;
pub mod tasks;
pub mod tui;
pub mod validate;
pub mod watchdog;

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use curupira_diagnostics::{Report, color_enabled};
use curupira_host::config::{self, LoadError, Loaded};
use curupira_host::format::Format;
use curupira_host::logging::{self, Level};
use serde::Deserialize as _;

/// `--config FILE`, for the commands that read `curupira.toml`.
#[derive(clap::Args)]
pub struct ConfigArg {
    /// The config file [default: `curupira.toml` when the current folder has one, else
    /// the reference host's `~/.curupira/settings.toml`].
    #[arg(long, short = 'c', value_name = "FILE")]
    config: Option<PathBuf>,
}

impl ConfigArg {
    /// The file to read: the one named, else `./curupira.toml` when it exists, else the
    /// reference host's `~/.curupira/settings.toml` when that exists, else
    /// `curupira.toml` (which `load_config` says is missing).
    pub fn path(&self) -> PathBuf {
        if let Some(path) = &self.config {
            return path.clone();
        }
        let ours = PathBuf::from(config::FILE_NAME);
        if ours.exists() {
            return ours;
        }
        match reference_settings_file() {
            Some(theirs) if theirs.exists() => theirs,
            _ => ours,
        }
    }
}

/// The reference host's configuration file, `$HOME/.curupira/settings.toml`.
pub fn reference_settings_file() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty())?;
    Some(
        PathBuf::from(home)
            .join(".curupira")
            .join(config::REFERENCE_FILE_NAME),
    )
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
    /// Only warnings and errors on stderr: no info log lines (an extension's stderr
    /// lines included, but those that start with `warning:` or `error:`). `RUST_LOG`,
    /// when set, overrides it.
    #[arg(short, long)]
    quiet: bool,
    /// The reference host's level names, in any case: DEBUG is `-v`, INFO the default,
    /// WARNING, ERROR and CRITICAL `-q`.
    #[arg(long, value_name = "LOG_LEVEL", value_parser = LogLevelParser, conflicts_with_all = ["verbose", "quiet"])]
    log_level: Option<config::LogLevel>,
}

/// `--log-level`: one of the reference's five names, case-insensitive on the command
/// line as there, refused in the reference's words; the names are the argument's
/// possible values, so the shells' completion scripts offer them.
#[derive(Clone)]
struct LogLevelParser;

impl clap::builder::TypedValueParser for LogLevelParser {
    type Value = config::LogLevel;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<config::LogLevel, clap::Error> {
        parse_log_level.parse_ref(command, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            config::LogLevel::names().map(clap::builder::PossibleValue::new),
        ))
    }
}

/// One of the reference's five names, in any case.
fn parse_log_level(text: &str) -> Result<config::LogLevel, String> {
    config::LogLevel::from_name(&text.to_ascii_uppercase()).ok_or_else(|| {
        format!("invalid log level {text:?}; expected DEBUG, INFO, WARNING, ERROR, or CRITICAL")
    })
}

impl Verbosity {
    /// Installs the stderr log at this verbosity (see `curupira_host::logging`).
    pub fn init_logging(&self) {
        self.init_logging_for(config::Form::Ours, None);
    }

    /// [`init_logging`](Self::init_logging) for a config in `form` whose `[settings]
    /// log_level` is `file_level`: `-v`, `-q` and `--log-level` win; then the file's
    /// level; then, for the reference form, whose host writes nothing on stderr but
    /// its `fail` lines, `-q` (warnings and errors).
    pub fn init_logging_for(&self, form: config::Form, file_level: Option<config::LogLevel>) {
        let named = |level: config::LogLevel| match level {
            config::LogLevel::Debug => Level::Debug,
            config::LogLevel::Info => Level::Normal,
            _ => Level::Quiet,
        };
        let level = match self.log_level {
            Some(level) => named(level),
            None if self.quiet => Level::Quiet,
            None if self.verbose > 0 => Level::from_verbose(self.verbose),
            None => match file_level {
                Some(level) => named(level),
                None if form == config::Form::Reference => Level::Quiet,
                None => Level::Normal,
            },
        };
        logging::init_level(level);
    }
}

/// The start of every command that reads the config: the log at `verbosity`, this
/// executable (it runs the built-in extensions), and the config checked. An `Err`
/// when the executable cannot be found or the file cannot be read (exit 2); a missing
/// `./curupira.toml` says how to name another file.
pub fn load_config(config: &ConfigArg, verbosity: &Verbosity) -> anyhow::Result<(PathBuf, Loaded)> {
    let host_exe =
        curupira_host::host_executable().context("cannot find the curupira executable")?;
    let loaded = match config::load(&config.path()) {
        Err(LoadError::Read { path, source })
            if source.kind() == io::ErrorKind::NotFound
                && config.config.is_none()
                && path.as_os_str() == config::FILE_NAME =>
        {
            anyhow::bail!(
                "cannot read the config file `{}`: there is none in the current folder, and \
                 no `~/.curupira/{}` (the reference host's); name the config file with \
                 `--config FILE` (`-c FILE`), or run curupira in the folder that holds it",
                config::FILE_NAME,
                config::REFERENCE_FILE_NAME
            )
        }
        other => other?,
    };
    let form = loaded
        .readable()
        .map_or(config::Form::Ours, |config| config.form);
    let file_level = loaded
        .readable()
        .and_then(|config| config.settings.reference.as_ref())
        .and_then(|reference| reference.log_level);
    verbosity.init_logging_for(form, file_level);
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

/// Writes a generated document (a completion script, a manual page) to standard
/// output, as [`write_stdout`] does, except that a reader that closed the pipe before
/// the end (`curupira completions bash | head -1`) is no error: it took what it
/// wanted, and the command ends quietly with its own exit status.
pub fn write_document(text: &str) -> io::Result<()> {
    match write_stdout(text) {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The exit statuses every command shares (SPEC section 7): one table, which `main`
/// exits with and the manual pages' EXIT STATUS section is written from.
pub mod exit {
    /// An exit status and what it means.
    pub struct Status {
        /// The process's exit code.
        pub code: u8,
        /// What it means, one sentence.
        pub meaning: &'static str,
    }

    /// Nothing failed.
    pub const SUCCESS: Status = Status {
        code: 0,
        meaning: "Success: what was checked has no error (warnings are allowed), or the run \
                  had no failure.",
    };

    /// What was checked has errors, or the run had failures.
    pub const FAILURE: Status = Status {
        code: 1,
        meaning: "What was checked or read has errors (a manifest, a Spirit package, a \
                  registry, an extension's conformance, a pair list or frames that are not \
                  valid); the run had failures (a task that failed after its retries, an \
                  automation that failed); or `validate` found no error in the config but an \
                  extension that failed when started or asked.",
    };

    /// Nothing could be checked or run as asked.
    pub const ERROR: Status = Status {
        code: 2,
        meaning: "A configuration error (of `validate`, or one that keeps `run` from \
                  starting anything, as the reference host exits), or a usage, I/O or \
                  internal error: a bad command line, a file that cannot be read or \
                  written, another `run` on the same state folder.",
    };

    /// Every exit status, in order.
    pub const ALL: [Status; 3] = [SUCCESS, FAILURE, ERROR];
}

/// How diagnostics name standard input, read when the path given is `-`.
pub const STDIN_NAME: &str = "<stdin>";

/// The most bytes a checking command reads from standard input: far above any real
/// manifest or `package.json`, checked before more memory is spent.
pub const MAX_STDIN_BYTES: u64 = 16 * 1024 * 1024;

/// The most bytes `identity` and `render --pairs` read: far above any real pair list.
pub const MAX_PAIRS_BYTES: u64 = 64 * 1024 * 1024;

/// Reads one JSON document from `reader` (named `name` in messages) for a command
/// that then parses it strictly (`identity`, `render --pairs`), without reading
/// further than needed: reading stops at the first byte that is not UTF-8 (reported
/// here: `Ok(None)`, exit 1), at the first byte that cannot continue a JSON document
/// (the text read so far, which holds that byte, is returned for the strict parser to
/// name the first problem), or past [`MAX_PAIRS_BYTES`] (an `Err`, exit 2). So invalid
/// input costs as much memory as its first invalid byte needs, however long it goes
/// on, and valid input at most the limit.
pub fn read_json_document(reader: impl Read, name: &str) -> anyhow::Result<Option<String>> {
    let mut tee = Tee {
        inner: reader,
        kept: Vec::new(),
        checked: 0,
        problem: None,
    };
    // The buffer sits above the tee, so the tee sees reads of 64 KiB rather than the
    // byte-at-a-time reads of the scanner: the scan stops at most that far past the
    // byte that decided.
    let mut deserializer =
        serde_json::Deserializer::from_reader(io::BufReader::with_capacity(64 * 1024, &mut tee));
    let scanned =
        serde::de::IgnoredAny::deserialize(&mut deserializer).and_then(|_| deserializer.end());
    drop(deserializer);
    match (tee.problem, scanned) {
        (Some(Problem::TooLarge), _) => anyhow::bail!(
            "{name} is larger than {MAX_PAIRS_BYTES} bytes (64 MiB), the most a pair list may \
             take; nothing was read past that"
        ),
        (Some(Problem::NotUtf8(offset)), _) => {
            eprintln!("error: {name} is not UTF-8 (invalid byte at offset {offset})");
            Ok(None)
        }
        (None, Err(err)) if err.is_io() => Err(anyhow::anyhow!("cannot read {name}: {err}")),
        // Valid UTF-8 but for an unfinished character the scan stopped at.
        (None, _) => Ok(Some(String::from_utf8_lossy(&tee.kept).into_owned())),
    }
}

/// Why [`Tee`] stopped.
#[derive(Debug, Clone, Copy)]
enum Problem {
    TooLarge,
    /// The offset of the first byte that is not UTF-8.
    NotUtf8(usize),
}

/// Keeps what is read through it, checking that it is UTF-8 as it goes and that it
/// stays within [`MAX_PAIRS_BYTES`]; either failure ends reading with an error.
struct Tee<R> {
    inner: R,
    kept: Vec<u8>,
    /// `kept[..checked]` is UTF-8; the rest is an unfinished character.
    checked: usize,
    problem: Option<Problem>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.problem.is_some() {
            return Err(io::Error::other("reading stopped"));
        }
        let n = self.inner.read(buffer)?;
        if self.kept.len() as u64 + n as u64 > MAX_PAIRS_BYTES {
            self.problem = Some(Problem::TooLarge);
            return Err(io::Error::other("too large"));
        }
        let needed = self.kept.len() + n;
        if needed > self.kept.capacity() {
            // Doubling, but never past the limit: the buffer's size is the bound.
            let limit = usize::try_from(MAX_PAIRS_BYTES).unwrap_or(usize::MAX);
            let grown = (self.kept.capacity() * 2).clamp(needed, limit.max(needed));
            self.kept.reserve_exact(grown - self.kept.len());
        }
        self.kept.extend_from_slice(&buffer[..n]);
        match std::str::from_utf8(&self.kept[self.checked..]) {
            Ok(_) => self.checked = self.kept.len(),
            Err(err) if err.error_len().is_none() => self.checked += err.valid_up_to(),
            Err(err) => {
                self.problem = Some(Problem::NotUtf8(self.checked + err.valid_up_to()));
                return Err(io::Error::other("not UTF-8"));
            }
        }
        Ok(n)
    }
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
