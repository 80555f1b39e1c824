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
//! `curupira plugins install SOURCE [--yes] | info NAME | uninstall NAME`: the
//! extensions installed in `~/.curupira/extensions/`, as the reference host installs
//! them (`curupira_host::installed`). `install` asks `Install extension from SOURCE?
//! [y/N]` on stderr unless `--yes`, and reads the answer from stdin before it fetches
//! anything (`y` or `yes`, any case; anything else, or the end of input, cancels: exit
//! 1); then `Installed extension NAME` on stdout. `info` prints the kept manifest;
//! `uninstall` removes it (`Uninstalled extension NAME`). A source, a fetch or a
//! manifest that fails, or a name not installed, exits 1 with one sentence on stderr
//! (a manifest's diagnostics before it).
//!
//! A run that fails (cannot start, times out, exits non-zero, prints no valid
//! manifest) is a `config/extension-failed` error (or the printed manifest's own
//! `manifest/…` errors, under the file name `NAME --curupira-print-manifest`).
//! A config with errors still lists every extension whose own table is fine, beside
//! the config's diagnostics. Exit codes: 0 every extension listed (warnings allowed),
//! 1 errors, 2 the config cannot be read.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use anyhow::Context;
use curupira_diagnostics::color_enabled;
use curupira_host::format::Format;
use curupira_host::installed::{self, InstalledError, Source};
use curupira_host::plugins::{self, render_human, render_json};

use super::{ConfigArg, Verbosity, load_config, write_stdout};
use curupira_host::config;

/// The subcommands of `curupira plugins`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// List the configured extensions from their `--curupira-print-manifest` output
    /// (a `[plugins]` entry from its `describe`).
    List(ListArgs),
    /// Install an extension from pip:, npm: or path: into ~/.curupira/extensions/
    /// (asks first, unless --yes).
    Install(InstallArgs),
    /// Print the manifest of an installed extension.
    Info(NameArgs),
    /// Remove an installed extension.
    Uninstall(NameArgs),
}

/// Arguments of `curupira plugins install`.
#[derive(clap::Args)]
pub struct InstallArgs {
    /// `pip:PACKAGE[==VERSION]`, `npm:PACKAGE[@VERSION]` or `path:FOLDER`.
    source: String,
    /// Install without asking.
    #[arg(long)]
    yes: bool,
}

/// Arguments of `curupira plugins info` and `uninstall`.
#[derive(clap::Args)]
pub struct NameArgs {
    /// The extension's name (its manifest's `name`).
    name: String,
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
        Command::Install(args) => installed_outcome(install(&args)),
        Command::Info(args) => installed_outcome(info(&args)),
        Command::Uninstall(args) => installed_outcome(uninstall(&args)),
    }
}

/// What `install`, `info` and `uninstall` end with: 0, or their sentence and 1.
fn installed_outcome(done: Result<bool, InstalledError>) -> anyhow::Result<ExitCode> {
    match done {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::from(1)),
        Err(error) => {
            if let InstalledError::Invalid { report, .. } = &error {
                eprint!("{}", report.render_human(color_enabled(&io::stderr())));
            }
            eprintln!("error: {error}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The store under the user's home folder.
fn store() -> Result<std::path::PathBuf, InstalledError> {
    installed::store(
        std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .as_deref(),
    )
}

/// `plugins install`: `Ok(false)` when the answer was no.
fn install(args: &InstallArgs) -> Result<bool, InstalledError> {
    let source = Source::parse(&args.source)?;
    let store = store()?;
    if !args.yes {
        let mut err = io::stderr().lock();
        let _ = write!(err, "Install extension from {}? [y/N] ", args.source);
        let _ = err.flush();
        let mut answer = String::new();
        let read = io::stdin().lock().read_line(&mut answer);
        let yes =
            read.is_ok() && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
        if !yes {
            let _ = writeln!(err, "installation cancelled");
            return Ok(false);
        }
    }
    let cwd = std::env::current_dir().map_err(|error| InstalledError::Read {
        path: ".".into(),
        error,
    })?;
    let fetched = installed::fetch(&source, &args.source, &cwd)?;
    if !fetched.warnings.diagnostics().is_empty() {
        eprint!(
            "{}",
            fetched.warnings.render_human(color_enabled(&io::stderr()))
        );
    }
    installed::install(&store, &fetched)?;
    println!("Installed extension {}", fetched.name);
    Ok(true)
}

/// `plugins info`.
fn info(args: &NameArgs) -> Result<bool, InstalledError> {
    // As the reference prints it: the file, then a line end.
    println!("{}", installed::info(&store()?, &args.name)?);
    Ok(true)
}

/// `plugins uninstall`.
fn uninstall(args: &NameArgs) -> Result<bool, InstalledError> {
    installed::uninstall(&store()?, &args.name)?;
    println!("Uninstalled extension {}", args.name);
    Ok(true)
}

fn list(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let (installed, problems) = store()
        .map(|store| installed::list(&store))
        .unwrap_or_default();
    for problem in &problems {
        eprintln!("warning: {problem}");
    }
    // No config named and none found: the reference host's listing (its users run
    // `plugins list` without one), as for a file in its form.
    let none_found = args.config.config.is_none() && !args.config.path().exists();
    if none_found {
        args.verbosity
            .init_logging_for(config::Form::Reference, None);
        return reference_list(&installed, args.format);
    }
    let (host_exe, loaded) = load_config(&args.config, &args.verbosity)?;
    if loaded
        .readable()
        .is_some_and(|config| config.form == config::Form::Reference)
        && !loaded.report.has_errors()
    {
        return reference_list(&installed, args.format);
    }
    // A config with errors still lists the extensions whose own tables are fine.
    let (listed, checked) = match loaded.readable() {
        Some(config) => plugins::list(config, &host_exe),
        None => (Vec::new(), Default::default()),
    };
    let mut report = loaded.report;
    report.append(checked);
    let mut output = match args.format {
        // With what is installed beside what is configured.
        Format::Json => match serde_json::from_str(&render_json(&listed, &report)) {
            Ok(serde_json::Value::Object(mut listing)) => {
                listing.insert(
                    "installed".to_owned(),
                    serde_json::Value::Array(installed_json(&installed)),
                );
                serde_json::Value::Object(listing).to_string() + "\n"
            }
            _ => render_json(&listed, &report) + "\n",
        },
        Format::Human => render_human(&listed, &report, color_enabled(&io::stdout())),
    };
    if args.format == Format::Human && !installed.is_empty() {
        output.push_str("installed in ~/.curupira/extensions/ (curupira plugins install):\n");
        for line in installed::reference_lines(&installed, env!("CARGO_PKG_VERSION")) {
            if !line.starts_with("agent:") {
                output.push_str(&format!("  {line}\n"));
            }
        }
    }
    write_stdout(&output).context("cannot write the list to standard output")?;
    Ok(ExitCode::from(report.exit_code()))
}

/// What is installed, as the JSON listings show it: `[{"name", "version",
/// "trigger_types", "path"}]`.
fn installed_json(installed: &[installed::Installed]) -> Vec<serde_json::Value> {
    installed
        .iter()
        .map(|ext| {
            serde_json::json!({
                "name": ext.name,
                "version": ext.version,
                "trigger_types": ext.trigger_types,
                "path": ext.path.display().to_string(),
            })
        })
        .collect()
}

/// The reference host's listing: its tab-separated lines (human), or `{"installed":
/// [{"name", "version", "trigger_types", "path"}], "agents": [{"provider", "program"}]}`.
fn reference_list(installed: &[installed::Installed], format: Format) -> anyhow::Result<ExitCode> {
    let output = match format {
        Format::Human => {
            let lines = installed::reference_lines(installed, env!("CARGO_PKG_VERSION"));
            lines
                .iter()
                .map(|line| format!("{line}\n"))
                .collect::<String>()
        }
        Format::Json => {
            let installed = installed_json(installed);
            let agents: Vec<serde_json::Value> = curupira_agents::Provider::ALL
                .iter()
                .map(|p| serde_json::json!({"provider": p.name(), "program": p.spec().program}))
                .collect();
            serde_json::json!({"installed": installed, "agents": agents}).to_string() + "\n"
        }
    };
    write_stdout(&output).context("cannot write the list to standard output")?;
    Ok(ExitCode::SUCCESS)
}
