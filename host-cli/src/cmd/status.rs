//! `curupira status [--config FILE] [--format human|json]`: what the host on this
//! config's state folder is doing (`curupira_host::status`): whether one runs, what
//! runs now and for how long, what waits for a retry, each automation's rounds, the
//! attempts of the last hour and day by outcome, the last failures. It reads the state
//! folder and the ledger only; a running host never waits for it.
//!
//! - stdout: the report (`--format json`: the versioned document, one object on one
//!   line, `docs/HOST.md`).
//! - Exit codes: 0 when it could say (whether or not a host runs); 2 when the config's
//!   `[settings.ledger]` has errors, or the state folder or the ledger cannot be read.

use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Context;
use curupira_host::format::Format;
use curupira_host::status;
use curupira_ledger::{Ledger, TasksBackend};

use super::{ConfigArg, Verbosity, write_stdout};

/// Arguments of `curupira status`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: ConfigArg,
    /// `human`: a few aligned blocks for people; `json`: the versioned status document
    /// on one line (`docs/HOST.md`, "curupira status").
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    format: Format,
    #[command(flatten)]
    verbosity: Verbosity,
}

/// Runs `curupira status`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = super::tasks::ledger_config(&args.config, &args.verbosity)?;
    let settings = &config.settings.ledger;
    let ledger = if settings.enabled {
        Ledger::open_existing(&settings.path)?
    } else {
        None
    };
    let backend = ledger
        .as_ref()
        .map(|ledger| (settings.path.as_path(), ledger as &dyn TasksBackend));
    let report = status::collect(&settings.state_dir(), backend, SystemTime::now())?;
    let text = match args.format {
        // A document of strings and numbers always serializes.
        Format::Json => serde_json::to_string(&report).unwrap_or_default() + "\n",
        Format::Human => status::human(&report),
    };
    write_stdout(&text).context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}
