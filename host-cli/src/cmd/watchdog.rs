//! `curupira watchdog --lock FILE [--run TAG]` (hidden): the watchdog a `curupira run` starts to
//! stop its agents if it dies (`curupira_process::watchdog`). Reads `add`/`remove` lines
//! on stdin, says `ready` on stdout once it holds the lock.

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

/// Arguments of `curupira watchdog`.
#[derive(clap::Args)]
pub struct Args {
    /// The lock held while the watchdog lives (`<state folder>/watchdog.lock`).
    #[arg(long, value_name = "FILE")]
    lock: PathBuf,
    /// The run's tag: what its agents and hooks leave behind carries it in
    /// `CURUPIRA_RUN`.
    #[arg(long, value_name = "TAG")]
    run: Option<String>,
}

/// Runs the watchdog until its stdin ends.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    curupira_process::watchdog::serve(
        &args.lock,
        args.run.as_deref(),
        io::stdin().lock(),
        io::stdout().lock(),
    )
    .with_context(|| format!("watchdog on `{}`", args.lock.display()))?;
    Ok(ExitCode::SUCCESS)
}
