//! `curupira validate [--config FILE] [--format human|json] [-q|-v]`: everything `run`
//! does before the first poll, reported as diagnostics (SPEC section 7): the config,
//! the manifests, trigger resolution and agents, then each extension an automation
//! uses is started and asked for its trigger's schema and to validate the arguments.
//! Every problem is reported in one pass, even when the config has errors: whatever
//! could be read is resolved and checked live; the steps and their codes are
//! `curupira_host::preflight`.
//!
//! Exit codes, as the reference host's: 0 no error (warnings allowed); 2 the config has
//! errors or cannot be read; 1 when the only errors are extensions that failed when
//! started or asked (`config/extension-failed`, `config/trigger-failed`: the
//! reference's "Plugin error").

use std::process::ExitCode;

use curupira_diagnostics::Report;
use curupira_host::config::codes;
use curupira_host::preflight;

use super::{ConfigArg, ReportFormat, Verbosity, exit, load_config, write_report};

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
    write_report(&report, args.report.format)?;
    Ok(ExitCode::from(exit_code(&report)))
}

/// The errors that are an extension failing, not the file being wrong.
const EXTENSION_FAILURES: [&str; 2] = [codes::EXTENSION_FAILED, codes::TRIGGER_FAILED];

/// 0 without errors, 1 when every error is an extension that failed, else 2.
fn exit_code(report: &Report) -> u8 {
    let mut errors = report
        .diagnostics()
        .iter()
        .filter(|d| d.is_error())
        .peekable();
    if errors.peek().is_none() {
        return exit::SUCCESS.code;
    }
    if errors.all(|d| EXTENSION_FAILURES.contains(&d.code.as_ref())) {
        exit::FAILURE.code
    } else {
        exit::ERROR.code
    }
}
