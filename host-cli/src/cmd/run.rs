//! `curupira run [--config FILE] [--once | --watch | --size N] [--dry-run] [--automation NAME]…
//! [--format human|json] [-v]`: runs the config's automations (SPEC section 7; the
//! pipeline is `curupira_orchestrator::runner`, the events `curupira_host::events`).
//!
//! - stdout: one line per event (`--format json`: one JSON object per line).
//! - stderr: the log (`RUST_LOG`, `-q`, `-v`, `-vv`), the agent's output, and the
//!   config's diagnostics in human form (with `--format json`, a config with errors
//!   has its diagnostics on stdout instead, as the one-line object of
//!   `validate --format json`; nothing runs then).
//! - Exit codes: 0 when every automation ran without failure (warnings allowed); 1
//!   when any automation failed, any task's agent failed, or an extension failed at
//!   shutdown; 2 when the config (or a manifest) has errors, an `--automation` is not
//!   in the config, or a file cannot be read.
//! - Without `--once` or `--watch` it drains, as the reference host's `run`: rounds
//!   while they hand over something new (`--size N`: at most N tasks), waits for the
//!   retries, then exits. `--watch` runs a round every interval until SIGINT/SIGTERM,
//!   and takes up a changed configuration ([`curupira_host::reload`]'s watcher).
//!   A SIGINT/SIGTERM lets the task in flight finish, starts no new poll, shuts the
//!   extensions down, and exits 130 (SIGINT) or 143 (SIGTERM), as a shell reports the
//!   signal. A second signal kills the agent in flight.
//! - Before the first poll (not in a dry run): the state folder is made, `run.lock`
//!   taken (a second `run` on the same state exits 2), the ledger opened (a damaged
//!   one is an error naming it, exit 2) and the watchdog started
//!   (`curupira_workspace::state`, `curupira_ledger`, `curupira_process::watchdog`). A
//!   dry run only reads the ledger, when there is one.

use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context;
use curupira_host::config::{Config, Form, Loaded};
use curupira_host::cron::CronContext;
use curupira_host::events::{self, EventWriter, ReferenceKeys};
use curupira_host::format::Format;
use curupira_host::live_line::LiveLine;
use curupira_host::reload::{Fingerprint, Watching};
use curupira_host::resolve::Plan;
use curupira_http::{Limits, Metrics, Server};
use curupira_ledger::{self as ledger, Ledger, WriterThread};
use curupira_orchestrator::events::{Event, EventSink};
use curupira_orchestrator::reload::Reloads;
use curupira_orchestrator::runner::{self, RunLedger, RunOptions};
use curupira_orchestrator::status::{HostInfo, Live, Publisher};
use curupira_process::stop::Stop;
use curupira_process::watchdog::{self, StartingWatchdog, Watchdog};
use curupira_workspace::state::{self, RUN_LOCK, RunLock};

use super::{ConfigArg, Verbosity, load_config};

/// Arguments of `curupira run`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: ConfigArg,
    /// One round per automation, then shut down.
    #[arg(long, conflicts_with = "watch")]
    once: bool,
    /// Run continuously: a round every interval, until SIGINT or SIGTERM (without it,
    /// `run` drains: rounds while they hand over something new, then exits).
    #[arg(long, conflicts_with = "dry_run")]
    watch: bool,
    /// Process at most N tasks (drain only), then exit.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with_all = ["watch", "dry_run"])]
    size: Option<u32>,
    /// Poll and render the prompts; start no agent, send no onStarted/onFinished.
    #[arg(long)]
    dry_run: bool,
    /// Run only this automation (repeatable).
    #[arg(long = "automation", value_name = "NAME")]
    automations: Vec<String>,
    /// `human`: one sentence per event on stdout; `json`: one object per event per
    /// line (`docs/HOST.md`), or, when the config has errors, its diagnostics as one
    /// `{"diagnostics": …}` object, as `validate --format json` prints them.
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    format: Format,
    /// Serve the status page, the JSON API and the metrics on this address while the
    /// run runs (`127.0.0.1:8080`; port 0: one the system picks, logged); loopback
    /// only unless `--listen-remote` (`[settings.http] listen`).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<std::net::SocketAddr>,
    /// Allow `--listen` on another address than loopback: anyone who reaches it can
    /// read the tasks and ask for retries (`[settings.http] allow_remote`).
    #[arg(long)]
    listen_remote: bool,
    #[command(flatten)]
    verbosity: Verbosity,
}

/// Runs `curupira run`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (host_exe, loaded) = load_config(&args.config, &args.verbosity)?;
    // The files as this run read them, for `--watch` to see them change.
    let fingerprint = args
        .watch
        .then(|| Fingerprint::of(&args.config.path(), loaded.readable()));
    let mut options = RunOptions {
        once: args.once,
        drain: !args.once && !args.watch,
        max_tasks: args.size,
        dry_run: args.dry_run,
        ledger: None,
        watch: None,
        live: None,
        idle_notice: None,
        reloads: None,
    };
    let Some((config, resolved)) =
        plan(loaded, &host_exe, &options, &args.automations, args.format)?
    else {
        return Ok(ExitCode::from(2));
    };
    // The cron automations' state: in the state folder when the run keeps a ledger
    // (read here, written only by a run holding the state folder's lock).
    let cron = if config.settings.ledger.enabled {
        CronContext::in_folder(&config.settings.ledger.state_dir())?
    } else {
        CronContext::in_memory()
    };
    let plan = curupira_host::plan::orchestrator_plan(&config, &resolved, &args.automations, &cron);
    options.idle_notice = config.settings.status.idle_notice;

    let stop = Stop::new();
    let first_signal = Arc::new(std::sync::OnceLock::new());
    let seen = Arc::clone(&first_signal);
    stop.count_signals(move |name, count| {
        let _ = seen.set(name);
        say_stop(name, count);
    })
    .context("cannot install the SIGINT/SIGTERM handlers")?;
    let settings = &config.settings.ledger;
    let mut held = None;
    let mut served_metrics = None;
    if options.dry_run && (args.listen.is_some() || config.settings.http.listen.is_some()) {
        tracing::warn!("a dry run serves no status page or API (`--listen` is ignored)");
    }
    if options.dry_run {
        if settings.enabled {
            options.ledger = Ledger::open_existing(&settings.path)?.map(|reader| RunLedger {
                reader: Arc::new(Mutex::new(reader)),
                writer: None,
            });
        }
    } else {
        let state_dir = settings.state_dir();
        state::ensure_folder(&config.dir, &state_dir)
            .with_context(|| format!("cannot create the state folder `{}`", state_dir.display()))?;
        let lock = match RunLock::acquire(&state_dir.join(RUN_LOCK)) {
            Ok(lock) => lock,
            Err(busy) => {
                eprintln!("error: {busy}");
                return Ok(ExitCode::from(2));
            }
        };
        // The reference host's per-user lock, taken the same way: while either host
        // dispatches from a reference-form file, the other refuses to.
        let dispatch_lock = match config.form {
            Form::Reference => match take_dispatch_lock()? {
                DispatchLock::Held(file) => Some(file),
                DispatchLock::NoHome => None,
                DispatchLock::Busy => {
                    eprintln!(
                        "Dispatch error: another curupira process is already running (it \
                         holds ~/.curupira/{DISPATCH_LOCK}: the reference host or another \
                         curupira run)"
                    );
                    return Ok(ExitCode::from(1));
                }
            },
            Form::Ours => None,
        };
        // Started first, waited for last: the ledger opens while its executable loads.
        let dog = spawn_watchdog(&host_exe, &state_dir)?;
        let mut writer_thread = None;
        // The reader, as this function keeps it to close it at the end (the run
        // knows it as a `RunBackend` only).
        let mut sqlite_reader = None;
        if settings.enabled {
            // The writer's connection first: it creates or migrates the file.
            let thread = WriterThread::start_with(
                Ledger::open(&settings.path)?,
                curupira_host::config::retention(settings),
            )
            .context("cannot start the ledger's writer thread")?;
            let reader = Arc::new(Mutex::new({
                let mut reader = Ledger::open(&settings.path)?;
                // Under the run lock (see `Ledger::read_in_snapshots`).
                reader.read_in_snapshots(ledger::READER_SNAPSHOT_AGE);
                reader
            }));
            options.ledger = Some(RunLedger {
                reader: Arc::clone(&reader) as _,
                writer: Some(thread.writer()),
            });
            writer_thread = Some(thread);
            sqlite_reader = Some(reader);
        }
        let dog = dog
            .map(|dog| dog.ready())
            .transpose()
            .context("cannot start the watchdog that stops agents if this host dies")?;
        if let Some(dog) = &dog {
            tracing::debug!("watchdog started (pid {})", dog.id());
        }
        options.watch = dog.as_ref().map(Watchdog::watch);
        if let Some(ledger) = &options.ledger {
            // After the watchdog is ready: an earlier host's agents are stopped by now.
            let marked = ledger
                .reader
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .mark_unrecorded()?;
            if !marked.is_empty() {
                tracing::warn!(
                    "{} task(s) were left running by a host that ended without recording \
                     how they ended (killed, or its disk full); the ledger marks them \
                     interrupted (reason `{}`), and a later poll that hands one over runs \
                     it again: {}",
                    marked.len(),
                    ledger::UNRECORDED,
                    some_tasks(&marked)
                );
            }
        }
        let live = Live::new(HostInfo::this_process(
            format!("curupira {}", env!("CARGO_PKG_VERSION")),
            Some(
                std::path::absolute(args.config.path())
                    .unwrap_or_else(|_| args.config.path())
                    .display()
                    .to_string(),
            ),
        ));
        let status_path = state_dir.join(state::STATUS_FILE);
        let publisher = Publisher::start(live.clone(), &status_path)
            .context("cannot start the thread that publishes the run's status")?;
        let server = match serve(&args, &config, &state_dir, &live)? {
            Served::Refused => return Ok(ExitCode::from(2)),
            Served::Off => None,
            Served::On(server, metrics) => {
                served_metrics = Some(metrics);
                Some(server)
            }
        };
        cron.publish_to(&live);
        options.live = Some(live);
        held = Some((
            (lock, dispatch_lock),
            dog,
            writer_thread,
            sqlite_reader,
            publisher,
            server,
        ));
    }
    // The live line, on a terminal, with human events (see `curupira_host::live_line`).
    let line = options
        .live
        .clone()
        .filter(|_| args.format == Format::Human && config.settings.status.live_line)
        .and_then(LiveLine::start);
    let out: Box<dyn io::Write + Send> = match &line {
        Some(line) => Box::new(line.writer(io::stdout())),
        None => Box::new(io::stdout()),
    };
    let mut writer = EventWriter::new(out, args.format).dry_run(options.dry_run);
    let reference_keys: ReferenceKeys = Arc::new(Mutex::new(events::reference_keys(&plan)));
    if config.form == Form::Reference {
        // The reference host's lines, which scripts that run it parse.
        writer = writer.reference(Arc::clone(&reference_keys));
    }
    let mut events = Observed {
        inner: writer,
        metrics: served_metrics.clone(),
    };
    let watcher = match fingerprint {
        Some(fingerprint) => {
            let reloads = Reloads::new();
            options.reloads = Some(reloads.clone());
            let watching = Watching {
                path: args.config.path(),
                host_exe: host_exe.clone(),
                selection: args.automations.clone(),
                cron: cron.clone(),
                started: config.clone(),
                fingerprint,
                listen_given: args.listen.is_some(),
                keys: (config.form == Form::Reference).then(|| Arc::clone(&reference_keys)),
            };
            Some(
                curupira_host::reload::watch(watching, reloads)
                    .context("cannot start the thread that watches the configuration")?,
            )
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let ran = runner::run(&plan, &options, &stop, &mut events);
    if let Some(watcher) = watcher {
        watcher.stop();
    }
    let mut events = events.inner;
    if ran.is_ok() {
        events.finish_reference()?;
    }
    if ran.is_ok() && config.form == Form::Ours {
        tracing::info!("{}", events.summary(started.elapsed()));
    }
    if let Some(line) = line {
        line.finish();
    }
    let mut closed = Ok(());
    if let Some(((lock, dispatch_lock), dog, writer_thread, sqlite_reader, publisher, server)) =
        held
    {
        if let Some(server) = server {
            server.stop();
        }
        let path = publisher.path().to_owned();
        if let Err(err) = publisher.finish() {
            tracing::warn!(
                "cannot write the run's last status to `{}`: {err}",
                path.display()
            );
        }
        if let Some(thread) = writer_thread {
            thread.close();
        }
        // The reader is the file's last connection now: closing it checkpoints the
        // write-ahead log into `ledger.sqlite` (a copy of that file alone holds every
        // row), under the run lock.
        drop(options.ledger.take());
        if let Some(reader) = sqlite_reader
            && let Ok(reader) = Arc::try_unwrap(reader)
        {
            closed = reader
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .close();
        }
        if let Some(dog) = dog {
            dog.close(Duration::from_secs(5));
        }
        drop(dispatch_lock);
        drop(lock);
    }
    ran?;
    closed?;
    // Stopped by a signal: as a shell reports a process it ended (the reference host
    // exits 130 on SIGINT), once everything stopped cleanly.
    Ok(ExitCode::from(match first_signal.get() {
        Some(&"SIGINT") => 130,
        Some(_) => 143,
        None if events.configuration_failed() => 2,
        None => u8::from(events.had_failure()),
    }))
}

/// The first tasks of `tasks` as `automation 0123456789ab`, and how many more.
fn some_tasks(tasks: &[(String, String)]) -> String {
    const SHOWN: usize = 10;
    let mut listed = tasks
        .iter()
        .take(SHOWN)
        .map(|(automation, task_id)| format!("{automation} {}", events::short_id(task_id)))
        .collect::<Vec<_>>()
        .join(", ");
    if tasks.len() > SHOWN {
        listed.push_str(&format!(" and {} more", tasks.len() - SHOWN));
    }
    listed
}

/// The run's watchdog (Unix), started; it is ready once no earlier host's watchdog is
/// stopping agents any more ([`StartingWatchdog::ready`]).
fn spawn_watchdog(host_exe: &Path, state_dir: &Path) -> anyhow::Result<Option<StartingWatchdog>> {
    if !cfg!(unix) {
        return Ok(None);
    }
    let dog = Watchdog::spawn(host_exe, &state_dir.join(watchdog::LOCK_FILE))
        .context("cannot start the watchdog that stops agents if this host dies")?;
    Ok(Some(dog))
}

/// Plans the run from the loaded config: the manifests, the triggers, the agents and
/// the selected automation names. Prints the diagnostics (every problem, even in a
/// config with errors: on stderr, or as JSON on stdout with `--format json`); `None`
/// when there is an error (exit 2).
fn plan(
    loaded: Loaded,
    host_exe: &Path,
    options: &RunOptions,
    selection: &[String],
    format: Format,
) -> anyhow::Result<Option<(Config, Plan)>> {
    let mut report = loaded.report;
    let planned = loaded.config.or(loaded.partial).map(|config| {
        let (plan, found) =
            curupira_host::plan::plan_run(&config, host_exe, options.dry_run, selection);
        report.append(found);
        (config, plan)
    });
    if !report.diagnostics().is_empty() {
        super::write_diagnostics_beside_events(&report, format)?;
    }
    match planned {
        Some((config, Some(plan))) => {
            config.check_selection(selection)?;
            Ok(Some((config, plan)))
        }
        _ => Ok(None),
    }
}

/// The reference host's lock file, in `~/.curupira/`.
const DISPATCH_LOCK: &str = "dispatch.lock";

/// The reference host's `~/.curupira/dispatch.lock`, as [`take_dispatch_lock`] found it.
enum DispatchLock {
    /// Taken: the open file, held for the run.
    Held(std::fs::File),
    /// Another process holds it.
    Busy,
    /// No home folder to find it in (nor would the reference host have one).
    NoHome,
}

/// Takes the reference host's `~/.curupira/dispatch.lock` (an `flock`, as the reference
/// takes it; a file no process holds does not block).
fn take_dispatch_lock() -> anyhow::Result<DispatchLock> {
    let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) else {
        return Ok(DispatchLock::NoHome);
    };
    let folder = Path::new(&home).join(".curupira");
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create `{}`", folder.display()))?;
    let path = folder.join(DISPATCH_LOCK);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open `{}`", path.display()))?;
    let taken = curupira_process::lock::try_lock(&file)
        .with_context(|| format!("cannot lock `{}`", path.display()))?;
    Ok(if taken {
        DispatchLock::Held(file)
    } else {
        DispatchLock::Busy
    })
}

/// What the first, the second and any later stop signal mean to a run, in its log.
fn say_stop(name: &'static str, seen: usize) {
    match seen {
        1 => tracing::warn!(
            "received {name}: no new task or retry starts; the running agents are waited \
             for, then the extensions are shut down; a task waiting for a retry, or failing \
             from now on with retries left, is interrupted, not finished: a later run hands \
             it over again (send {name} again to stop the agents)"
        ),
        2 => tracing::warn!(
            "received {name} again: stopping the running agents (SIGTERM to each one's \
             process group, SIGKILL after its grace)"
        ),
        _ => tracing::warn!("received {name} again; the agents are stopping"),
    }
}

/// Hands each event to the metrics (when served) before the writer.
struct Observed<S> {
    inner: S,
    metrics: Option<Arc<Metrics>>,
}

impl<S: EventSink> EventSink for Observed<S> {
    fn emit(&mut self, event: &Event) -> io::Result<()> {
        if let Some(metrics) = &self.metrics {
            metrics.observe(event);
        }
        self.inner.emit(event)
    }
}

/// Whether `run --listen` serves.
enum Served {
    /// Not asked.
    Off,
    /// Asked for an address it may not use (said on stderr): exit 2.
    Refused,
    /// Serving.
    On(Server, Arc<Metrics>),
}

/// Starts the HTTP server when `--listen` or `[settings.http] listen` asks for one.
fn serve(args: &Args, config: &Config, state_dir: &Path, live: &Live) -> anyhow::Result<Served> {
    let Some(addr) = args.listen.or(config.settings.http.listen) else {
        return Ok(Served::Off);
    };
    let allow_remote = args.listen_remote || config.settings.http.allow_remote;
    let listener = match curupira_http::bind(addr, allow_remote) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(Served::Refused);
        }
    };
    if !addr.ip().is_loopback() {
        tracing::warn!(
            "serving on {addr}, which is not loopback: anyone who reaches it can read the \
             tasks and their logs and ask for retries (there is no authentication)"
        );
    }
    let settings = &config.settings.ledger;
    let ledger = if settings.enabled {
        Some((
            settings.path.clone(),
            Mutex::new(Ledger::open(&settings.path)?),
        ))
    } else {
        None
    };
    let api = super::http::HostApi {
        state_dir: state_dir.to_owned(),
        live: Some(live.clone()),
        read_only: false,
        ledger,
    };
    let metrics = Arc::new(Metrics::new(Some(live.clone())));
    let server = Server::start(
        listener,
        Arc::new(api),
        Arc::clone(&metrics),
        Limits::default(),
    )
    .context("cannot start the HTTP server")?;
    tracing::info!(
        "the status page is at http://{}/ (the API under /api/v1/, metrics at /metrics)",
        server.local_addr()
    );
    Ok(Served::On(server, metrics))
}
