//! `curupira`, the reference host: a thin binary that parses arguments and hands each
//! subcommand to its module in `cmd/`. Protocol and validation logic lives in the
//! library crates; nothing here should be more than wiring.
//!
//! Exit codes (SPEC section 7): 0 success (warnings allowed), 1 the checked thing has
//! errors or the run had failures, 2 usage, I/O or internal errors.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The reference host for Curupira trigger extensions.
#[derive(Parser)]
#[command(name = "curupira", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the config's automations: poll triggers, dispatch each new item to the agent.
    Run(cmd::run::Args),
    /// Check the config, its extensions and its automations, without polling.
    Validate(cmd::validate::Args),
    /// List the configured extensions from `--curupira-print-manifest`.
    #[command(subcommand)]
    Plugins(cmd::plugins::Command),
    /// Drive an extension through every protocol step and report its conformance.
    Probe(cmd::probe::Args),
    /// Encode lines into protocol frames, or decode frames into lines.
    #[command(subcommand)]
    Frame(cmd::frame::Command),
    /// Print the task identity (or canonical JSON) of a pair list read on stdin.
    Identity(cmd::identity::Args),
    /// Render a prompt template against pairs and host variables.
    Render(cmd::render::Args),
    /// Check a `curupira-extension.toml` manifest.
    #[command(subcommand)]
    Manifest(cmd::manifest::Command),
    /// Check, build and add to the Spirit marketplace registry.
    #[command(subcommand)]
    Registry(cmd::registry::Command),
    /// Check, install, list and remove Spirit extension packages; show and run their tools.
    #[command(subcommand)]
    Spirit(cmd::spirit::Command),
    /// List, show, retry and forget the tasks of the durable ledger.
    #[command(subcommand)]
    Tasks(cmd::tasks::Command),
    /// Run an extension built into this executable (used by the host itself).
    #[command(hide = true)]
    Builtin(cmd::builtin::Args),
    /// Stop a run's agents if the run dies (started by `run` itself).
    #[command(hide = true)]
    Watchdog(cmd::watchdog::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Validate(args) => cmd::validate::run(args),
        Command::Plugins(command) => cmd::plugins::run(command),
        Command::Probe(args) => cmd::probe::run(args),
        Command::Frame(command) => cmd::frame::run(command),
        Command::Identity(args) => cmd::identity::run(args),
        Command::Render(args) => cmd::render::run(args),
        Command::Manifest(command) => cmd::manifest::run(command),
        Command::Registry(command) => cmd::registry::run(command),
        Command::Spirit(command) => cmd::spirit::run(command),
        Command::Tasks(command) => cmd::tasks::run(command),
        Command::Builtin(args) => cmd::builtin::run(args),
        Command::Watchdog(args) => cmd::watchdog::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
