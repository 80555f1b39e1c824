//! `curupira status [--config FILE] [--format human|json]`: what the host on this
//! config's state folder is doing (`curupira_host::status`): whether one runs, what
//! runs now and for how long, what waits for a retry, each automation's rounds, the
//! attempts of the last hour and day by outcome, the last failures. It reads the state
//! folder and the ledger only; a running host never waits for it.
//!
//! - stdout: the report (`--format json`: the versioned document, one object on one
//!   line, `docs/HOST.md`).
//! - `--serve ADDR` (loopback only): serves the status page, the JSON API and the
//!   metrics `run --listen` serves, read-only, from the state folder and the ledger,
//!   until SIGINT or SIGTERM: for a look at what a run did after it ended (a retry
//!   from the page is refused; `tasks retry` asks for one).
//! - Exit codes: 0 when it could say (whether or not a host runs); 2 when the config's
//!   `[settings.ledger]` has errors, or the state folder or the ledger cannot be read.

use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Context;
use curupira_host::format::Format;
use curupira_host::status;
use curupira_ledger::{Ledger, TasksBackend};

use super::{ConfigArg, Verbosity, write_stdout};

/// Arguments of `curupira status`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: ConfigArg,
    /// `human`: a few aligned blocks for people; `json`: the versioned status document
    /// on one line (`docs/HOST.md`, "curupira status").
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    format: Format,
    /// Serve the status page at this loopback address (`127.0.0.1:8080`; port 0 picks
    /// one), read-only, until SIGINT or SIGTERM, instead of printing.
    #[arg(long, value_name = "ADDR")]
    serve: Option<std::net::SocketAddr>,
    #[command(flatten)]
    verbosity: Verbosity,
}

/// Runs `curupira status`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = super::tasks::ledger_config(&args.config, &args.verbosity)?;
    let settings = &config.settings.ledger;
    if let Some(addr) = args.serve {
        return serve(addr, &config);
    }
    let ledger = if settings.enabled {
        Ledger::open_existing(&settings.path)?
    } else {
        None
    };
    let backend = ledger
        .as_ref()
        .map(|ledger| (settings.path.as_path(), ledger as &dyn TasksBackend));
    let report = status::collect(&settings.state_dir(), backend, SystemTime::now())?;
    let text = match args.format {
        // A document of strings and numbers always serializes.
        Format::Json => serde_json::to_string(&report).unwrap_or_default() + "\n",
        Format::Human => status::human(&report),
    };
    write_stdout(&text).context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// `--serve ADDR`: the page, the API and the metrics, read-only, until a signal.
fn serve(
    addr: std::net::SocketAddr,
    config: &curupira_host::config::Config,
) -> anyhow::Result<ExitCode> {
    let listener = match curupira_http::bind(addr, false) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::from(2));
        }
    };
    let settings = &config.settings.ledger;
    let ledger = if settings.enabled {
        Ledger::open_existing(&settings.path)?
            .map(|ledger| (settings.path.clone(), std::sync::Mutex::new(ledger)))
    } else {
        None
    };
    let api = super::http::HostApi {
        state_dir: settings.state_dir(),
        live: None,
        read_only: true,
        ledger,
    };
    let stop = curupira_orchestrator::Stop::new();
    stop.count_signals(|_, _| {})
        .context("cannot install the SIGINT/SIGTERM handlers")?;
    let metrics = std::sync::Arc::new(curupira_http::Metrics::new(None));
    let server = curupira_http::Server::start(
        listener,
        std::sync::Arc::new(api),
        metrics,
        curupira_http::Limits::default(),
    )
    .context("cannot start the HTTP server")?;
    eprintln!(
        "the status page is at http://{}/ (read-only; SIGINT or SIGTERM stops it)",
        server.local_addr()
    );
    while !stop.requested() {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(server);
    Ok(ExitCode::SUCCESS)
}
