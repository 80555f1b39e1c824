//! `curupira probe [--trigger T] [--arguments JSON] [--timeout S] [--max-frame-bytes N]
//! [--format human|json] [-q|-v|-vv] -- CMD ARGS…`: drives any extension through every protocol
//! step and reports each step's conformance (the rules are in
//! `curupira_client::probe`).
//!
//! Output, one line per step as soon as it ends: `pass initialize (protocol 2, name
//! local-queue, version 0.1.0)`, `fail trigger/poll: timeout (-32004): no reply within
//! 10 s`, `skip trigger/onStarted (the poll returned no item)`; with `--format json`,
//! one object per line: `{"step": s, "status": "pass"|"fail"|"skip", "detail": s}`.
//! Then the verdict, always the last line: `the extension conforms: …`, or with
//! `--format json` `{"verdict": "pass"|"fail", "passed": n, "failed": n, "skipped": n}`
//! (`curupira_client::probe::Verdict`; the fields are documented in `docs/HOST.md`).
//!
//! Exit codes: 0 every step that ran passed, 1 any step failed, 2 bad arguments.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use curupira_client::probe::{ProbeOptions, Step, Tally, probe};
use curupira_client::{LaunchCommand, Limits, Options, Timeouts};
use curupira_host::format::Format;
use curupira_host::host_info;
use serde_json::{Map, Value};

use super::Verbosity;

/// Arguments of `curupira probe`.
#[derive(clap::Args)]
pub struct Args {
    /// The trigger type to exercise (default: the first one `describe` lists).
    #[arg(long, value_name = "TYPE")]
    trigger: Option<String>,
    /// The trigger's arguments, a JSON object (the schema's defaults are added).
    #[arg(long, value_name = "JSON", default_value = "{}")]
    arguments: String,
    /// Seconds to wait for each reply, and for the process to exit after `shutdown`.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    timeout: f64,
    /// The largest frame body accepted from the extension.
    #[arg(long, value_name = "BYTES", default_value_t = curupira_framing::DEFAULT_MAX_BODY)]
    max_frame_bytes: usize,
    /// `human`: one line per step (`pass …`, `fail STEP: …`, `skip …`), then the
    /// verdict sentence; `json`: one object per step (`step`, `status`, `detail`), then
    /// the verdict object (`verdict`, `passed`, `failed`, `skipped`), one per line.
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    format: Format,
    #[command(flatten)]
    verbosity: Verbosity,
    /// The extension's command line, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Runs `curupira probe`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.verbosity.init_logging();
    let arguments: Map<String, Value> = match serde_json::from_str(&args.arguments) {
        Ok(Value::Object(object)) => object,
        Ok(other) => anyhow::bail!(
            "`--arguments` must be a JSON object, found {}",
            curupira_jsonrpc::describe(&other)
        ),
        Err(err) => anyhow::bail!("`--arguments` is not valid JSON: {err}"),
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout < 1.0e9) {
        anyhow::bail!(
            "`--timeout` must be a number of seconds above 0, found {}",
            args.timeout
        );
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    let Some((program, rest)) = args.command.split_first() else {
        anyhow::bail!("give the extension's command after `--`");
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let launch = LaunchCommand::new(program, cwd).args(rest);
    let options = ProbeOptions {
        trigger: args.trigger,
        arguments,
        client: Options {
            timeouts: Timeouts::uniform(timeout),
            limits: Limits {
                max_frame_bytes: args.max_frame_bytes,
                ..Limits::default()
            },
        },
        client_info: host_info(),
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut write_error = None;
    let mut tally = Tally::default();
    let passed = probe(&launch, &options, |step: &Step| {
        tally.count(step);
        let line = match args.format {
            Format::Human => step.to_string(),
            Format::Json => serde_json::to_string(step).unwrap_or_default(),
        };
        if let Err(err) = writeln!(out, "{line}").and_then(|()| out.flush()) {
            write_error.get_or_insert(err);
        }
    });
    let verdict = match args.format {
        Format::Human => tally.to_string(),
        Format::Json => serde_json::to_string(&tally.verdict()).unwrap_or_default(),
    };
    if let Err(err) = writeln!(out, "{verdict}").and_then(|()| out.flush()) {
        write_error.get_or_insert(err);
    }
    if let Some(err) = write_error {
        return Err(err).context("cannot write to standard output");
    }
    Ok(ExitCode::from(u8::from(!passed)))
}
