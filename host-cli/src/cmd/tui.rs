//! `curupira tui [--config FILE] [--attach] [--automation NAME]… [--log-level LEVEL]`:
//! the config's automations run as `run --watch` under an interactive dashboard
//! (`curupira_tui`); `--attach` opens the dashboard on the host already running on the
//! config's state folder and leaves it running.
//!
//! - Without a terminal (stdout or stdin not one), as the reference host's `tui`: says
//!   `TUI: no terminal attached; running dispatch in status mode (Ctrl+C to stop)` on
//!   stderr and runs `run --watch` itself, its output and exit codes included (130 on
//!   SIGINT). `--attach` then has nothing to show: exit 2.
//! - On a terminal: this executable runs as `run --watch` in a child, its output in
//!   `<state folder>/tui-host.log`; the dashboard exits with the host's code (130
//!   after `q`). Another host on the state folder: exit 2, pointing to `--attach`.

use clap::Command as Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args as _, FromArgMatches as _};

use super::{ConfigArg, Verbosity};

/// Arguments of `curupira tui`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: ConfigArg,
    /// Open the dashboard on the host already running on the config's state folder
    /// (started by `curupira run --watch`), instead of running one; quitting leaves it
    /// running.
    #[arg(long)]
    attach: bool,
    /// Run only this automation (repeatable), as `run --automation`.
    #[arg(long = "automation", value_name = "NAME", conflicts_with = "attach")]
    automations: Vec<String>,
    #[command(flatten)]
    verbosity: Verbosity,
}

/// Runs `curupira tui`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let watch = watch_arguments(&args);
    if !(std::io::stdout().is_terminal() && std::io::stdin().is_terminal()) {
        if args.attach {
            eprintln!(
                "error: `curupira tui --attach` needs a terminal to draw on; `curupira status` \
                 says what the host does"
            );
            return Ok(ExitCode::from(2));
        }
        eprintln!("TUI: no terminal attached; running dispatch in status mode (Ctrl+C to stop)");
        // `run`'s own argument parser (a clap command, not a process), given
        // `run --watch …`.
        let matches =
            super::run::Args::augment_args(Parser::new("run")).try_get_matches_from(&watch)?;
        return super::run::run(super::run::Args::from_arg_matches(&matches)?);
    }
    let config = super::tasks::ledger_config(&args.config, &args.verbosity)?;
    let settings = &config.settings.ledger;
    let source = curupira_tui::Source::new(
        settings.state_dir(),
        settings.enabled.then(|| settings.path.clone()),
    );
    if args.attach {
        curupira_tui::attach(&source)?;
        return Ok(ExitCode::SUCCESS);
    }
    let program =
        curupira_host::host_executable().context("cannot find the curupira executable")?;
    let host = curupira_tui::HostCommand::new(program, &watch, &config.dir);
    let code = curupira_tui::dispatch(&source, &host)?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// `run --watch` with what `tui` was given: the config, the automations, the log.
fn watch_arguments(args: &Args) -> Vec<std::ffi::OsString> {
    let mut watch: Vec<std::ffi::OsString> = vec!["run".into(), "--watch".into()];
    // As given: without it, `run` looks for the file in the same folder as `tui` did.
    if let Some(config) = &args.config.config {
        watch.push("--config".into());
        watch.push(config.into());
    }
    for automation in &args.automations {
        watch.push("--automation".into());
        watch.push(automation.into());
    }
    let verbosity = &args.verbosity;
    if let Some(level) = verbosity.log_level {
        watch.push("--log-level".into());
        watch.push(level.as_str().into());
    } else if verbosity.quiet {
        watch.push("--quiet".into());
    }
    for _ in 0..verbosity.verbose {
        watch.push("--verbose".into());
    }
    watch
}
