//! `curupira manifest check PATH|- [--format human|json]`: checks a
//! `curupira-extension.toml` (SPEC section 2) and reports every problem.
//!
//! Exit codes (SPEC section 7): 0 when the manifest has no error (warnings allowed),
//! 1 when it has errors, 2 when it cannot be read or the arguments are wrong. `-`
//! reads standard input, shown as `<stdin>` in diagnostics. Output goes to stdout;
//! human output is coloured only on a terminal and never with `NO_COLOR` set.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{ReportFormat, STDIN_NAME, finish_report, read_if_stdin};

/// The subcommands of `curupira manifest`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Check a manifest and report every problem with its line and column.
    Check(CheckArgs),
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The manifest file, or `-` to read standard input.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    #[command(flatten)]
    report: ReportFormat,
}

/// Runs `curupira manifest …`.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Check(args) => check(&args),
    }
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let checked = match read_if_stdin(&args.path, "the manifest")? {
        Some(bytes) => curupira_manifest::check_bytes(&bytes, STDIN_NAME),
        None => curupira_manifest::check_path(&args.path)?,
    };
    finish_report(&checked.report, args.report.format)
}
