//! `curupira manifest check PATH|- [--format human|json]`: checks a
//! `curupira-extension.toml` (SPEC section 2) and reports every problem.
//!
//! Exit codes (SPEC section 7): 0 when the manifest has no error (warnings allowed),
//! 1 when it has errors, 2 when it cannot be read or the arguments are wrong. `-`
//! reads standard input, shown as `<stdin>` in diagnostics. Output goes to stdout;
//! human output is coloured only on a terminal and never with `NO_COLOR` set.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use curupira_host::format::Format;

use super::{read_stdin, report_output, write_stdout};

/// Arguments of `curupira manifest`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Check a manifest and report every problem with its line and column.
    Check(CheckArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// The manifest file, or `-` to read standard input.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    /// How to print the diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

/// Runs `curupira manifest …`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Check(args) => check(&args),
    }
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let checked = if args.path.as_os_str() == "-" {
        curupira_manifest::check_bytes(&read_stdin("the manifest")?, "<stdin>")
    } else {
        curupira_manifest::check_path(&args.path)?
    };
    write_stdout(&report_output(&checked.report, args.format))
        .context("could not write the report to standard output")?;
    Ok(ExitCode::from(checked.report.exit_code()))
}
