//! `curupira validate [--config FILE] [--format human|json] [-v]`: everything `run`
//! does before the first poll, reported as diagnostics (SPEC section 7): the config,
//! the manifests, trigger resolution and agents, then each extension an automation
//! uses is started and asked for its trigger's schema and to validate the arguments.
//! Every problem is reported in one pass, even when the config has errors: whatever
//! could be read is resolved and checked live; the steps and their codes are
//! `curupira_host::preflight`.
//!
//! Exit codes: 0 no error (warnings allowed), 1 errors, 2 the config cannot be read.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use curupira_host::config;
use curupira_host::format::Format;
use curupira_host::{preflight, runner};

use super::{report_output, write_stdout};

/// Arguments of `curupira validate`.
#[derive(clap::Args)]
pub struct Args {
    /// The config file.
    #[arg(long, short = 'c', value_name = "FILE", default_value = config::FILE_NAME)]
    config: PathBuf,
    /// How to print the diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// More log on stderr (-v debug, -vv trace); `RUST_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
}

/// Runs `curupira validate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    curupira_host::logging::init(args.verbose);
    let host_exe = runner::host_executable().context("cannot find the curupira executable")?;
    let loaded = config::load(&args.config)?;
    let found = loaded
        .readable()
        .map(|config| preflight::report(config, &host_exe));
    let mut report = loaded.report;
    if let Some(found) = found {
        report.append(found);
    }
    write_stdout(&report_output(&report, args.format))
        .context("cannot write the report to standard output")?;
    Ok(ExitCode::from(report.exit_code()))
}
