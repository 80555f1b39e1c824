//! `curupira validate [--config FILE] [--format human|json] [-q|-v]`: everything `run`
//! does before the first poll, reported as diagnostics (SPEC section 7): the config,
//! the manifests, trigger resolution and agents, then each extension an automation
//! uses is started and asked for its trigger's schema and to validate the arguments.
//! Every problem is reported in one pass, even when the config has errors: whatever
//! could be read is resolved and checked live; the steps and their codes are
//! `curupira_host::preflight`.
//!
//! Exit codes: 0 no error (warnings allowed), 1 errors, 2 the config cannot be read.

use std::process::ExitCode;

use curupira_host::preflight;

use super::{ConfigArg, ReportFormat, Verbosity, finish_report, load_config};

/// Arguments of `curupira validate`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: ConfigArg,
    #[command(flatten)]
    report: ReportFormat,
    #[command(flatten)]
    verbosity: Verbosity,
}

/// Runs `curupira validate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (host_exe, loaded) = load_config(&args.config, &args.verbosity)?;
    let found = loaded
        .readable()
        .map(|config| preflight::report(config, &host_exe));
    let mut report = loaded.report;
    if let Some(found) = found {
        report.append(found);
    }
    finish_report(&report, args.report.format)
}
