//! `curupira plugins list [--config FILE] [--format human|json] [-v]`: what each
//! configured extension says about itself, from `--curupira-print-manifest`, without
//! sending a frame (SPEC section 7); a `[plugins.NAME]` entry, which has no manifest,
//! from what it answers to `initialize` and `describe`. How each extension is run and
//! checked is `curupira_host::plugins`.
//!
//! Human output: one block per extension listed, then the diagnostics when there are
//! any. JSON output: `{"extensions": [{"extension", "source", "name", "version",
//! "protocol_version", "runtime", "kind", "trigger_types", "launch", "command_line"}],
//! "diagnostics": [...], "errors": n, "warnings": n}` where `launch` is the printed
//! manifest's `[launch]` table (a plugin's `{"type", "args"}`, with `runtime` null and
//! `source` `describe`) and `command_line` what the host runs.
//!
//! A run that fails (cannot start, times out, exits non-zero, prints no valid
//! manifest) is a `config/extension-failed` error (or the printed manifest's own
//! `manifest/…` errors, under the file name `NAME --curupira-print-manifest`).
//! A config with errors still lists every extension whose own table is fine, beside
//! the config's diagnostics. Exit codes: 0 every extension listed (warnings allowed),
//! 1 errors, 2 the config cannot be read.

use std::io;
use std::process::ExitCode;

use anyhow::Context;
use curupira_diagnostics::color_enabled;
use curupira_host::format::Format;
use curupira_host::plugins::{self, render_human, render_json};

use super::{ConfigArg, Verbosity, load_config, write_stdout};

/// The subcommands of `curupira plugins`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// List the configured extensions from their `--curupira-print-manifest` output
    /// (a `[plugins]` entry from its `describe`).
    List(ListArgs),
}

#[derive(clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// `human`: one block per extension, then the diagnostics; `json`: one object,
    /// `{"extensions": [...], "diagnostics": [...], "errors": n, "warnings": n}`.
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    format: Format,
    #[command(flatten)]
    verbosity: Verbosity,
}

/// Runs `curupira plugins …`.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::List(args) => list(&args),
    }
}

fn list(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let (host_exe, loaded) = load_config(&args.config, &args.verbosity)?;
    // A config with errors still lists the extensions whose own tables are fine.
    let (listed, checked) = match loaded.readable() {
        Some(config) => plugins::list(config, &host_exe),
        None => (Vec::new(), Default::default()),
    };
    let mut report = loaded.report;
    report.append(checked);
    let output = match args.format {
        Format::Json => render_json(&listed, &report) + "\n",
        Format::Human => render_human(&listed, &report, color_enabled(&io::stdout())),
    };
    write_stdout(&output).context("cannot write the list to standard output")?;
    Ok(ExitCode::from(report.exit_code()))
}
