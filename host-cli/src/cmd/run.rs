//! `curupira run [--config FILE] [--once] [--dry-run] [--automation NAME]…
//! [--format human|json] [-v]`: runs the config's automations (SPEC section 7; the
//! pipeline is `curupira_host::runner`, the events `curupira_host::events`).
//!
//! - stdout: one line per event (`--format json`: one JSON object per line).
//! - stderr: the log (`RUST_LOG`, `-v`, `-vv`), the agent's output, and the config's
//!   diagnostics (always in human form).
//! - Exit codes: 0 when every automation ran without failure (warnings allowed); 1
//!   when any automation failed, any task's agent failed, or an extension failed at
//!   shutdown; 2 when the config (or a manifest) has errors, an `--automation` is not
//!   in the config, or a file cannot be read.
//! - Without `--once` it runs until SIGINT/SIGTERM. With or without `--once`, a
//!   SIGINT/SIGTERM lets the task in flight finish, starts no new poll, and shuts the
//!   extensions down; the exit code still says whether anything failed. A second
//!   signal kills the agent in flight.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use curupira_diagnostics::{Report, color_enabled};
use curupira_host::config::{self, Config};
use curupira_host::events::EventWriter;
use curupira_host::format::Format;
use curupira_host::resolve::Plan;
use curupira_host::runner::{self, RunOptions};
use curupira_host::stop::Stop;

/// Arguments of `curupira run`.
#[derive(clap::Args)]
pub struct Args {
    /// The config file.
    #[arg(long, short = 'c', value_name = "FILE", default_value = config::FILE_NAME)]
    config: PathBuf,
    /// One round per automation, then shut down.
    #[arg(long)]
    once: bool,
    /// Poll and render the prompts; start no agent, send no onStarted/onFinished.
    #[arg(long)]
    dry_run: bool,
    /// Run only this automation (repeatable).
    #[arg(long = "automation", value_name = "NAME")]
    automations: Vec<String>,
    /// How to print events on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// More log on stderr (-v debug, -vv trace); `RUST_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
}

/// Runs `curupira run`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    curupira_host::logging::init(args.verbose);
    let host_exe = runner::host_executable().context("cannot find the curupira executable")?;
    let options = RunOptions {
        once: args.once,
        dry_run: args.dry_run,
        automations: args.automations,
    };
    let Some((config, plan)) = load(&args.config, &host_exe, &options)? else {
        return Ok(ExitCode::from(2));
    };

    let stop = Stop::new();
    stop.install_signal_handlers()
        .context("cannot install the SIGINT/SIGTERM handlers")?;
    let mut events = EventWriter::new(io::stdout().lock(), args.format);
    runner::run(&config, &plan, &options, &stop, &mut events)
        .context("cannot write events to standard output")?;
    Ok(ExitCode::from(u8::from(events.had_failure())))
}

/// Loads and checks the config, the manifests and the selected automation names.
/// Prints the diagnostics on stderr (every problem, even in a config with errors);
/// `None` when there is an error (exit 2).
fn load(
    path: &Path,
    host_exe: &Path,
    options: &RunOptions,
) -> anyhow::Result<Option<(Config, Plan)>> {
    let loaded = config::load(path)?;
    let mut report = loaded.report;
    let checked = loaded.config.or(loaded.partial).map(|config| {
        let (plan, found) = runner::plan_run(&config, host_exe, options);
        report.append(found);
        (config, plan)
    });
    if !report.diagnostics().is_empty() {
        print_report(&report)?;
    }
    match checked {
        Some((config, Some(plan))) => {
            config.check_selection(&options.automations)?;
            Ok(Some((config, plan)))
        }
        _ => Ok(None),
    }
}

fn print_report(report: &Report) -> anyhow::Result<()> {
    let stderr = io::stderr();
    let text = report.render_human(color_enabled(&stderr));
    let mut err = stderr.lock();
    err.write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .context("cannot write to standard error")
}
