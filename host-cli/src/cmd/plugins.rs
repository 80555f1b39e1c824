//! `curupira plugins list [--config FILE] [--format human|json] [-v]`: what each
//! configured extension says about itself, from `--curupira-print-manifest`, without
//! sending a frame (SPEC section 7).
//!
//! For each `[extensions.NAME]`, in file order: the launch command is worked out (a
//! `path` extension's from its on-disk manifest, a built-in's is this executable with
//! `builtin NAME`), run with `--curupira-print-manifest` appended, stdin closed, in the
//! config's folder, for at most `[settings.timeouts] initialize` seconds (then its
//! process group is killed). Its stdout (at most 1 MiB kept) is checked as a manifest;
//! its stderr goes to the log.
//!
//! Human output: one block per extension listed, then the diagnostics when there are
//! any. JSON output: `{"extensions": [{"extension", "source", "name", "version",
//! "protocol_version", "runtime", "kind", "trigger_types", "launch", "command_line"}],
//! "diagnostics": [...], "errors": n, "warnings": n}` where `launch` is the printed
//! manifest's `[launch]` table and `command_line` what the host runs.
//!
//! A run that fails (cannot start, times out, exits non-zero, prints no valid
//! manifest) is a `config/extension-failed` error (or the printed manifest's own
//! `manifest/…` errors, under the file name `NAME --curupira-print-manifest`).
//! Exit codes: 0 every extension listed (warnings allowed), 1 errors, 2 the config
//! cannot be read.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use curupira_diagnostics::{JsonPointer, Report, Severity, color_enabled};
use curupira_host::config::{self, Config, codes};
use curupira_host::resolve::{Origin, PlannedExtension, display_path, load_extensions};
use curupira_host::runner;
use curupira_manifest::{Launch, Manifest};
use serde_json::{Value, json};

use super::Format;

/// Most stdout bytes kept from `--curupira-print-manifest`.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Arguments of `curupira plugins`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// List the configured extensions from their `--curupira-print-manifest` output.
    List(ListArgs),
}

#[derive(clap::Args)]
struct ListArgs {
    /// The config file.
    #[arg(long, short = 'c', value_name = "FILE", default_value = config::FILE_NAME)]
    config: PathBuf,
    /// How to print the list.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// More log on stderr (-v debug, -vv trace); `RUST_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
}

/// Runs `curupira plugins …`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::List(args) => list(&args),
    }
}

/// One listed extension.
struct Listed {
    planned: PlannedExtension,
    printed: Manifest,
}

fn list(args: &ListArgs) -> anyhow::Result<ExitCode> {
    curupira_host::logging::init(args.verbose);
    let host_exe = runner::host_executable().context("cannot find the curupira executable")?;
    let loaded = config::load(&args.config)?;
    let mut report = loaded.report;
    let mut listed = Vec::new();
    if let Some(config) = loaded.config {
        let (extensions, _broken, loaded) = load_extensions(&config, &host_exe);
        report.append(loaded);
        for planned in extensions {
            if let Some(printed) = print_manifest(&config, &planned, &mut report) {
                listed.push(Listed { planned, printed });
            }
        }
    }
    let stdout = io::stdout();
    let output = match args.format {
        Format::Json => json_output(&listed, &report)? + "\n",
        Format::Human => human_output(&listed, &report, color_enabled(&stdout)),
    };
    let mut out = stdout.lock();
    out.write_all(output.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write the list to standard output")?;
    Ok(ExitCode::from(report.exit_code()))
}

/// Runs the extension with `--curupira-print-manifest` and checks what it prints.
fn print_manifest(
    config: &Config,
    planned: &PlannedExtension,
    report: &mut Report,
) -> Option<Manifest> {
    let at = JsonPointer::root().key("extensions").key(&planned.name);
    let fail = |report: &mut Report, message: String| {
        report.push(config.diagnostic(Severity::Error, codes::EXTENSION_FAILED, &at, message));
    };
    let mut command = planned.launch.command();
    command
        .arg("--curupira-print-manifest")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let shown = format!("{} --curupira-print-manifest", planned.launch);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            fail(
                report,
                format!(
                    "extension `{}`: cannot start `{shown}`: {err}",
                    planned.name
                ),
            );
            return None;
        }
    };
    let stdout = child.stdout.take().map(|stdout| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stdout.take(MAX_MANIFEST_BYTES).read_to_end(&mut bytes);
            bytes
        })
    });
    let stderr = child.stderr.take().map(|stderr| {
        let name = planned.name.clone();
        thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.take(64 * 1024).read_to_string(&mut text);
            for line in text.lines() {
                tracing::info!(target: curupira_host::supervisor::STDERR_TARGET, "[{name}] {line}");
            }
            text
        })
    });
    let limit = config.settings.timeouts.initialize;
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
            Ok(None) | Err(_) => break None,
        }
    };
    curupira_host::supervisor::kill_group(&child);
    let _ = child.kill();
    let _ = child.wait();
    let bytes = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr_text = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    let Some(status) = status else {
        fail(
            report,
            format!(
                "extension `{}`: `{shown}` did not exit within {} s; killed",
                planned.name,
                limit.as_secs_f64()
            ),
        );
        return None;
    };
    if !status.success() {
        let last = stderr_text.lines().last().unwrap_or("").trim();
        let said = if last.is_empty() {
            String::new()
        } else {
            format!(": {last}")
        };
        fail(
            report,
            format!(
                "extension `{}`: `{shown}` failed ({status}){said}",
                planned.name
            ),
        );
        return None;
    }
    let file = format!("{} --curupira-print-manifest", planned.name);
    let checked = curupira_manifest::check_bytes(&bytes, &file);
    report.append(checked.report);
    if checked.manifest.is_none() {
        fail(
            report,
            format!(
                "extension `{}`: `{shown}` did not print a valid manifest (see `{file}`)",
                planned.name
            ),
        );
    }
    checked.manifest
}

fn source(planned: &PlannedExtension) -> String {
    match &planned.origin {
        Origin::Builtin(name) => format!("builtin {name}"),
        Origin::File(file) => display_path(file.parent().unwrap_or(file)),
    }
}

fn launch_json(launch: &Launch) -> Value {
    match launch {
        Launch::Npx { package, version } => {
            json!({"type": "npx", "package": package.as_str(), "version": version.to_string()})
        }
        Launch::Command { command, args } => {
            json!({"type": "command", "command": command.as_str(), "args": args})
        }
    }
}

fn launch_text(launch: &Launch) -> String {
    match launch {
        Launch::Npx { package, version } => format!("npx {package}@{version}"),
        Launch::Command { command, args } => {
            let mut text = format!("command {}", command.as_str());
            for arg in args {
                text.push(' ');
                text.push_str(arg);
            }
            text
        }
    }
}

fn json_output(listed: &[Listed], report: &Report) -> anyhow::Result<String> {
    let extensions: Vec<Value> = listed
        .iter()
        .map(|item| {
            let m = &item.printed;
            json!({
                "extension": item.planned.name,
                "source": source(&item.planned),
                "name": m.name.as_str(),
                "version": m.version.to_string(),
                "protocol_version": m.protocol_version.to_string(),
                "runtime": m.runtime.as_str(),
                "kind": m.kind.as_str(),
                "trigger_types": m.trigger_types.as_slice().iter().map(|t| t.as_str()).collect::<Vec<_>>(),
                "launch": launch_json(&m.launch),
                "command_line": item.planned.launch.to_string(),
            })
        })
        .collect();
    let mut object: serde_json::Map<String, Value> =
        serde_json::from_str(&report.render_json()).context("cannot build the JSON output")?;
    let mut out = serde_json::Map::new();
    out.insert("extensions".to_owned(), Value::Array(extensions));
    out.append(&mut object);
    Ok(Value::Object(out).to_string())
}

fn human_output(listed: &[Listed], report: &Report, color: bool) -> String {
    let mut out = String::new();
    for item in listed {
        let m = &item.printed;
        let types: Vec<&str> = m
            .trigger_types
            .as_slice()
            .iter()
            .map(|t| t.as_str())
            .collect();
        out.push_str(&format!(
            "{}: {} {} (protocol {}, runtime {}, {})\n  triggers: {}\n  launch: {}\n  runs as: {}\n  from: {}\n",
            item.planned.name,
            m.name,
            m.version,
            m.protocol_version,
            m.runtime.as_str(),
            m.kind.as_str(),
            types.join(", "),
            launch_text(&m.launch),
            item.planned.launch,
            source(&item.planned),
        ));
    }
    if listed.is_empty() && report.diagnostics().is_empty() {
        out.push_str("no extension is configured\n");
    }
    if !report.diagnostics().is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&report.render_human(color));
    }
    out
}
