//! `curupira tasks list|show|retry|forget`: the durable ledger's tasks
//! (`curupira_ledger`), read and changed while a host may be running (SQLite's
//! locking: every command is one transaction, and a reader never sees half of one).
//!
//! - `list [--automation A] [--status S] [--limit N]`: the most recently changed tasks
//!   first, at most `--limit` (default 50; 0: every task); human: a table with a
//!   header, columns aligned.
//! - `show ID`: one task with everything the ledger holds, its branch (worktree
//!   mode), and whether its worktree is still there.
//! - `retry ID | --failed`: the next round of a running host, or else the next `run`,
//!   dispatches the task (every failed task) again from its stored pairs, through the
//!   normal path (`onStarted`, the agent, `onFinished`).
//! - `forget ID | --automation A [--force]`: deletes the task (every task of A), so
//!   the extension's next poll that returns it dispatches it again (in a running host
//!   too). A finished (succeeded or failed) task only with `--force`: its row holds
//!   the pairs `retry` runs it from, and whether a poll returns it again is the
//!   extension's choice (`local-queue` never hands out an item in its done file).
//!
//! ID is the full task id or a unique prefix of it (hex digits); `--automation`
//! narrows it. While a host runs on the ledger (its `run.lock` is held), a `running`
//! task can be neither retried nor forgotten. Exit codes: 0 done, 2 anything else
//! (an unknown or ambiguous ID, a damaged ledger, a config error).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use curupira_diagnostics::JsonPointer;
use curupira_host::config::{Cleanup, Config, LedgerSettings};
use curupira_host::events::duration_text;
use curupira_host::format::{Format, aligned, one_line, time_text};
use curupira_ledger::{AttemptRecord, Filter, Ledger, Status, TaskRecord, TasksBackend};
use curupira_workspace::state::{RUN_LOCK, RunLock};
use curupira_workspace::{task_branch, task_folder_tail};

use super::{ConfigArg, Verbosity, load_config, write_stdout};

/// The subcommands of `curupira tasks`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// List the ledger's tasks, most recently changed first.
    List(ListArgs),
    /// Show one task.
    Show(ShowArgs),
    /// Have the next `run` dispatch a task again (or every failed one).
    Retry(RetryArgs),
    /// Forget a task (or every task of an automation): the next poll that returns it
    /// dispatches it.
    ///
    /// A finished (succeeded or failed) task is forgotten only with `--force`: its row
    /// holds the pairs `curupira tasks retry ID` runs it again from, and whether a poll
    /// returns it again is its extension's choice (the built-in `local-queue` never
    /// hands out an item recorded in its done file). To run a finished task again, use
    /// `curupira tasks retry ID`.
    Forget(ForgetArgs),
    /// Print an attempt's log: its agent's output, whole lines behind their time and
    /// stream (`--follow`: and what comes, until the attempt ends).
    Log(LogArgs),
}

/// What every `tasks` command takes.
#[derive(clap::Args)]
pub struct Common {
    #[command(flatten)]
    config: ConfigArg,
    /// `human`: `list` prints a table (a header, then one line per task: short id,
    /// automation, status, attempts, last outcome, duration, time, pairs), `show` one
    /// `name value` line per column; `json`: one object per task per line, with every
    /// column (`docs/HOST.md`). `retry` and `forget` print one sentence either way.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    verbosity: Verbosity,
}

/// Arguments of `tasks list`.
#[derive(clap::Args)]
pub struct ListArgs {
    /// Only this automation's tasks.
    #[arg(long, value_name = "NAME")]
    automation: Option<String>,
    /// Only tasks with this status.
    #[arg(long, value_name = "STATUS", value_parser = ["running", "succeeded", "failed", "interrupted"])]
    status: Option<String>,
    /// The most tasks to print, most recently changed first; 0 prints every task.
    #[arg(long, value_name = "N", default_value_t = 50)]
    limit: u32,
    #[command(flatten)]
    common: Common,
}

/// Arguments of `tasks show`.
#[derive(clap::Args)]
pub struct ShowArgs {
    /// The task id, or a unique prefix of it.
    id: String,
    /// The task's automation, when the id alone is ambiguous.
    #[arg(long, value_name = "NAME")]
    automation: Option<String>,
    #[command(flatten)]
    common: Common,
}

/// Arguments of `tasks retry`.
#[derive(clap::Args)]
pub struct RetryArgs {
    /// The task id, or a unique prefix of it.
    #[arg(required_unless_present = "failed", conflicts_with = "failed")]
    id: Option<String>,
    /// Every failed task (of `--automation`, when given).
    #[arg(long)]
    failed: bool,
    /// The task's automation; with `--failed`, only its tasks.
    #[arg(long, value_name = "NAME")]
    automation: Option<String>,
    /// Start the agent's session over: a provider's next attempt does not resume the
    /// session an interrupted attempt left.
    #[arg(long)]
    fresh: bool,
    #[command(flatten)]
    common: Common,
}

/// Arguments of `tasks forget`.
#[derive(clap::Args)]
pub struct ForgetArgs {
    /// The task id, or a unique prefix of it.
    #[arg(required_unless_present = "automation")]
    id: Option<String>,
    /// The task's automation; without an ID, every task of it.
    #[arg(long, value_name = "NAME")]
    automation: Option<String>,
    /// Forget finished (succeeded or failed) tasks too, though `tasks retry` can then
    /// no longer run them and their extension may never hand them over again.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    common: Common,
}

/// Arguments of `tasks log`.
#[derive(clap::Args)]
pub struct LogArgs {
    /// The task id, or a unique prefix of it.
    id: String,
    /// The task's automation, when the id alone is ambiguous.
    #[arg(long, value_name = "NAME")]
    automation: Option<String>,
    /// Which attempt (`tasks show` numbers them); the last by default.
    #[arg(long, value_name = "N")]
    attempt: Option<u32>,
    /// Keep printing what the attempt writes, until it ends (or its host is gone).
    #[arg(long)]
    follow: bool,
    #[command(flatten)]
    common: Common,
}

/// Runs a `tasks` subcommand.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::List(args) => list(args),
        Command::Show(args) => show(args),
        Command::Retry(args) => retry(args),
        Command::Forget(args) => forget(args),
        Command::Log(args) => log(args),
    }
}

/// The ledger the config names: `None` when no run wrote one yet.
struct Opened {
    settings: LedgerSettings,
    /// SQLite's [`Ledger`], opened at `settings.path`; what the commands ask of it is
    /// a [`TasksBackend`]'s.
    ledger: Option<Box<dyn TasksBackend>>,
    /// The config's folder (relative workspaces are under it).
    dir: PathBuf,
    /// Each automation's `cleanup` policy, as the config says now.
    cleanups: Vec<(String, Cleanup)>,
}

impl Opened {
    fn ledger(&mut self) -> anyhow::Result<&mut dyn TasksBackend> {
        match &mut self.ledger {
            Some(ledger) => Ok(ledger.as_mut()),
            None => bail!(
                "there is no task ledger at `{}` yet (no `curupira run` has recorded a task)",
                self.settings.path.display()
            ),
        }
    }

    /// Whether a host runs on this ledger now.
    fn host_running(&self) -> anyhow::Result<bool> {
        let lock = self.settings.state_dir().join(RUN_LOCK);
        RunLock::is_held(&lock).with_context(|| format!("cannot look at `{}`", lock.display()))
    }
}

/// The config of `config`, when its `[settings.ledger]` can be trusted (errors
/// elsewhere in the file do not matter to the ledger's commands): what `tasks` and
/// `status` open.
pub(crate) fn ledger_config(config: &ConfigArg, verbosity: &Verbosity) -> anyhow::Result<Config> {
    let (_, loaded) = load_config(config, verbosity)?;
    let settings_at = JsonPointer::root().key("settings");
    let ledger_at = settings_at.key("ledger");
    let broken: Vec<String> = loaded
        .report
        .diagnostics()
        .iter()
        .filter(|d| {
            d.is_error()
                && (d.path == settings_at
                    || d.path == JsonPointer::root()
                    || d.path.as_str().starts_with(ledger_at.as_str()))
        })
        .map(|d| format!("{}: {}", d.path, d.message))
        .collect();
    let found: Option<Config> = loaded.config.or(loaded.partial);
    let Some(found) = found.filter(|_| broken.is_empty()) else {
        bail!(
            "cannot tell where the task ledger is: `{}` has errors in `[settings.ledger]` \
             ({}); `curupira validate` lists them",
            config.path().display(),
            if broken.is_empty() {
                "the file cannot be read".to_owned()
            } else {
                broken.join("; ")
            }
        );
    };
    Ok(found)
}

fn open(common: &Common) -> anyhow::Result<Opened> {
    let config = ledger_config(&common.config, &common.verbosity)?;
    let settings = config.settings.ledger.clone();
    if !settings.enabled {
        bail!(
            "the task ledger is disabled in `{}` (`[settings.ledger] enabled = false`)",
            common.config.path().display()
        );
    }
    let ledger = Ledger::open_existing(&settings.path)?;
    Ok(Opened {
        settings,
        ledger: ledger.map(|ledger| Box::new(ledger) as Box<dyn TasksBackend>),
        dir: config.dir.clone(),
        cleanups: config
            .automations
            .iter()
            .map(|automation| (automation.name.clone(), automation.workspace_policy.cleanup))
            .collect(),
    })
}

fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let opened = open(&args.common)?;
    let Some(ledger) = &opened.ledger else {
        tracing::info!(
            "no task ledger at `{}` yet: no task recorded",
            opened.settings.path.display()
        );
        return Ok(ExitCode::SUCCESS);
    };
    let filter = Filter {
        automation: args.automation,
        status: args.status.as_deref().and_then(Status::parse),
    };
    // `--limit 0`: every task (no SQLite table holds more than u32::MAX of them here).
    let limit = if args.limit == 0 {
        u32::MAX
    } else {
        args.limit
    };
    let rows = ledger.list(&filter, limit.saturating_add(1))?;
    let shown = rows.len().min(usize::try_from(limit).unwrap_or(usize::MAX));
    let out = match args.common.format {
        Format::Json => rows[..shown].iter().map(json_line).collect(),
        Format::Human => table(&rows[..shown]),
    };
    write_out(&out)?;
    if rows.len() > shown && args.common.format == Format::Human {
        let tasks = if shown == 1 { "task" } else { "tasks" };
        eprintln!(
            "(the {shown} most recently changed {tasks}; `--limit N` shows more, `--limit 0` \
             all of them)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The ledger, and the one task `id` (a unique prefix, of `automation` when given)
/// names in it.
fn open_task(
    common: &Common,
    id: &str,
    automation: Option<&str>,
) -> anyhow::Result<(Opened, TaskRecord)> {
    let mut opened = open(common)?;
    let path = opened.settings.path.clone();
    let row = resolve(opened.ledger()?, &path, id, automation)?;
    Ok((opened, row))
}

fn show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let (mut opened, row) = open_task(&args.common, &args.id, args.automation.as_deref())?;
    let attempts = opened.ledger()?.attempts(&row.automation, &row.task_id)?;
    let text = match args.common.format {
        Format::Json => {
            // A record of strings, numbers and JSON values always serializes.
            let mut shown = serde_json::to_value(&row).unwrap_or_default();
            if let Some(object) = shown.as_object_mut() {
                object.insert(
                    "history".to_owned(),
                    serde_json::to_value(&attempts).unwrap_or_default(),
                );
            }
            shown.to_string() + "\n"
        }
        Format::Human => details(&row, &opened) + &history(&attempts),
    };
    write_out(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The attempts as `show` lists them under the task: one line each, the columns
/// aligned, the error last. Nothing when the ledger kept none.
fn history(attempts: &[AttemptRecord]) -> String {
    const HEADER: [&str; 6] = ["#", "OUTCOME", "LAST", "STARTED (UTC)", "DURATION", "ERROR"];
    if attempts.is_empty() {
        return String::new();
    }
    let cells: Vec<[String; 6]> = attempts
        .iter()
        .map(|attempt| {
            [
                attempt.attempt.to_string(),
                attempt
                    .outcome
                    .map_or_else(|| "running".to_owned(), |outcome| outcome.to_string()),
                last_text(attempt.reason.as_deref(), attempt.exit_code),
                time_text(&attempt.started_at),
                attempt
                    .duration_seconds
                    .map_or_else(|| "-".to_owned(), duration_text),
                attempt
                    .error
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), one_line),
            ]
        })
        .collect();
    let table = aligned(&HEADER, &cells, 0);
    let mut out = String::from("history\n");
    for line in table.lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    for attempt in attempts.iter().filter(|a| a.provider.is_some()) {
        out.push_str(&agent_lines(attempt));
    }
    out
}

/// What a provider's stream said of one attempt, for `show`: its session, tokens,
/// cost, answer (first line) and stream diagnostics.
fn agent_lines(attempt: &AttemptRecord) -> String {
    let mut out = format!(
        "attempt {} ({}{})\n",
        attempt.attempt,
        attempt.provider.as_deref().unwrap_or("-"),
        if attempt.resumed {
            ", resumed its session"
        } else {
            ""
        }
    );
    if let Some(session) = &attempt.session_id {
        out.push_str(&format!("  session  {session}\n"));
    }
    if let Some(usage) = attempt.usage {
        out.push_str(&format!(
            "  tokens   {} in ({} from cache, {} to cache), {} out\n",
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.output_tokens
        ));
    }
    if let Some(cost) = attempt.cost_usd {
        out.push_str(&format!("  cost     ${cost:.4}\n"));
    }
    if let Some(answer) = &attempt.answer {
        out.push_str(&format!("  answer   {}\n", one_line(answer)));
    }
    for diagnostic in &attempt.stream_diagnostics {
        out.push_str(&format!("  stream   {diagnostic}\n"));
    }
    out
}

fn log(args: LogArgs) -> anyhow::Result<ExitCode> {
    use std::io::{Read, Seek, SeekFrom, Write};

    let (mut opened, row) = open_task(&args.common, &args.id, args.automation.as_deref())?;
    let path = opened.settings.path.clone();
    let attempt_of = |opened: &mut Opened| -> anyhow::Result<AttemptRecord> {
        let attempts = opened.ledger()?.attempts(&row.automation, &row.task_id)?;
        match (attempt_numbered(attempts, args.attempt), args.attempt) {
            (Some(attempt), _) => Ok(attempt),
            (None, Some(n)) => bail!(
                "task {} of automation `{}` has no attempt {n} in the ledger's history (see \
                 `curupira tasks show {}`)",
                row.task_id,
                row.automation,
                short(&row.task_id)
            ),
            (None, None) => bail!(
                "task {} of automation `{}` has no attempt in the ledger's history",
                row.task_id,
                row.automation
            ),
        }
    };
    let attempt = attempt_of(&mut opened)?;
    let Some(log_path) = attempt.log_path.clone() else {
        bail!(
            "attempt {} of task {} of automation `{}` has no log (it ran without the ledger's \
             logs: a `curupira` before them, or a dry run)",
            attempt.attempt,
            row.task_id,
            row.automation
        );
    };
    let mut out = std::io::stdout().lock();
    let mut offset = 0u64;
    // What the log holds past `offset`. A log is made at its attempt's first line (a
    // missing one is empty), and a log at its cap is rewritten shorter: then it is
    // read again from its start.
    let mut copy = |offset: &mut u64| -> anyhow::Result<()> {
        let mut file = match std::fs::File::open(&log_path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => {
                return Err(err).with_context(|| format!("cannot read the log `{log_path}`"));
            }
        };
        if file.metadata().map(|meta| meta.len()).unwrap_or(0) < *offset {
            *offset = 0;
        }
        file.seek(SeekFrom::Start(*offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .with_context(|| format!("cannot read the log `{log_path}`"))?;
        *offset += bytes.len() as u64;
        out.write_all(&bytes)
            .and_then(|()| out.flush())
            .context("cannot write to standard output")
    };
    copy(&mut offset)?;
    if !args.follow {
        return Ok(ExitCode::SUCCESS);
    }
    loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let ended = attempt_of(&mut opened)?.ended_at.is_some();
        let host_gone = !ended && !opened.host_running()?;
        // What was written before the end, then stop.
        copy(&mut offset)?;
        if ended {
            return Ok(ExitCode::SUCCESS);
        }
        if host_gone {
            eprintln!(
                "curupira: no host runs on `{}` any more, and attempt {} never ended",
                path.display(),
                attempt.attempt
            );
            return Ok(ExitCode::from(1));
        }
    }
}

fn retry(args: RetryArgs) -> anyhow::Result<ExitCode> {
    let mut opened = open(&args.common)?;
    let host_running = opened.host_running()?;
    let path = opened.settings.path.clone();
    let ledger = opened.ledger()?;
    let keys = match &args.id {
        Some(id) => {
            let row = resolve(ledger, &path, id, args.automation.as_deref())?;
            if row.status == Status::Running && host_running {
                bail!(
                    "task {} of automation `{}` is running (a host runs on `{}`); retry it \
                     once it ended",
                    row.task_id,
                    row.automation,
                    path.display()
                );
            }
            vec![(row.automation, row.task_id)]
        }
        None => ledger
            .keys(args.automation.as_deref(), Some(Status::Failed))?
            .into_iter()
            .map(|(automation, task_id, _)| (automation, task_id))
            .collect(),
    };
    let changed = if args.fresh {
        ledger.request_fresh_retry(&keys)?
    } else {
        ledger.request_retry(&keys)?
    };
    let message = match (&args.id, keys.first()) {
        (Some(_), Some((automation, task_id))) => format!(
            "task {task_id} of automation `{automation}` will be dispatched again by the next \
             round of a running host, or else the next `curupira run`\n"
        ),
        _ => format!(
            "{changed} failed task(s) will be dispatched again by the next round of a running \
             host, or else the next `curupira run`\n"
        ),
    };
    write_out(&message)?;
    Ok(ExitCode::SUCCESS)
}

fn forget(args: ForgetArgs) -> anyhow::Result<ExitCode> {
    let mut opened = open(&args.common)?;
    let host_running = opened.host_running()?;
    let path = opened.settings.path.clone();
    let ledger = opened.ledger()?;
    let (keys, kept, finished) = match (&args.id, &args.automation) {
        (Some(id), automation) => {
            let row = resolve(ledger, &path, id, automation.as_deref())?;
            if row.status == Status::Running && host_running {
                bail!(
                    "task {} of automation `{}` is running (a host runs on `{}`); forget it \
                     once it ended",
                    row.task_id,
                    row.automation,
                    path.display()
                );
            }
            if row.status.is_finished() && !args.force {
                bail!(
                    "task {} of automation `{}` {}: forgetting it deletes the stored pairs \
                     `tasks retry` runs it again from, and its extension may never hand it \
                     over again (the built-in `local-queue` does not hand out an item in its \
                     done file); to run it again, use `curupira tasks retry {}`, or forget \
                     it anyway with `--force`",
                    row.task_id,
                    row.automation,
                    row.status,
                    short(&row.task_id)
                );
            }
            let finished = usize::from(row.status.is_finished());
            (vec![(row.automation, row.task_id)], 0, finished)
        }
        (None, automation) => {
            let rows = ledger.keys(automation.as_deref(), None)?;
            let total = rows.len();
            let rows: Vec<(String, String, Status)> = rows
                .into_iter()
                .filter(|(_, _, status)| !(host_running && *status == Status::Running))
                .collect();
            let finished = rows.iter().filter(|(_, _, s)| s.is_finished()).count();
            if finished > 0 && !args.force {
                let whose = automation
                    .as_deref()
                    .map_or_else(String::new, |a| format!(" of automation `{a}`"));
                bail!(
                    "{finished} of the {} task(s){whose} finished (succeeded or failed): \
                     forgetting them deletes the stored pairs `tasks retry` runs them again \
                     from, and their extension may never hand them over again (the built-in \
                     `local-queue` does not hand out an item in its done file); to run \
                     them again, use `curupira tasks retry ID` (`--failed` for the failed \
                     ones), or forget them anyway with `--force`",
                    rows.len()
                );
            }
            let keys: Vec<(String, String)> = rows
                .into_iter()
                .map(|(automation, task_id, _)| (automation, task_id))
                .collect();
            let kept = total - keys.len();
            (keys, kept, finished)
        }
    };
    let forgotten = ledger.forget(&keys)?;
    if finished > 0 {
        eprintln!(
            "warning: forgot {finished} finished task(s): the next poll that returns one \
             dispatches it, but only if its extension hands it over again (the built-in \
             `local-queue` does not hand out an item in its done file); `tasks retry` \
             cannot run it any more"
        );
    }
    let mut message = match (&args.id, keys.first()) {
        (Some(_), Some((automation, task_id))) => {
            format!("forgot task {task_id} of automation `{automation}`\n")
        }
        _ => format!("forgot {forgotten} task(s)\n"),
    };
    if kept > 0 {
        message.push_str(&format!(
            "kept {kept} running task(s): a host runs on `{}`\n",
            path.display()
        ));
    }
    write_out(&message)?;
    Ok(ExitCode::SUCCESS)
}

/// The one row `id` (a full id or a unique prefix) names, in the ledger at `path`.
/// Attempt `n` of a task's `attempts` (`tasks show`'s numbers), or its last when `n`
/// is `None`.
pub(crate) fn attempt_numbered(
    attempts: Vec<AttemptRecord>,
    n: Option<u32>,
) -> Option<AttemptRecord> {
    match n {
        Some(n) => attempts.into_iter().find(|attempt| attempt.attempt == n),
        None => attempts.into_iter().last(),
    }
}

/// Why an id names no one task ([`resolve`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unresolved {
    /// Not 1 to 64 hex digits.
    #[error("`{0}` is not a task id: expected 1 to 64 hexadecimal digits")]
    NotAnId(String),
    /// No task has such an id.
    #[error("{0}")]
    NotFound(String),
    /// Several tasks do.
    #[error("{0}")]
    Ambiguous(String),
    /// The ledger could not be read.
    #[error(transparent)]
    Ledger(#[from] curupira_ledger::LedgerError),
}

/// The one task whose id starts with `id` (of `automation` when given).
pub(crate) fn resolve(
    ledger: &dyn TasksBackend,
    path: &Path,
    id: &str,
    automation: Option<&str>,
) -> Result<TaskRecord, Unresolved> {
    const SHOWN: usize = 10;
    let prefix = id.to_ascii_lowercase();
    if prefix.is_empty() || prefix.len() > 64 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Unresolved::NotAnId(id.to_owned()));
    }
    let mut rows = ledger.find(&prefix, automation, SHOWN as u32 + 1)?;
    let within = automation.map_or_else(String::new, |a| format!(" of automation `{a}`"));
    match rows.len() {
        0 => Err(Unresolved::NotFound(format!(
            "no task{within} in `{}` has an id starting with `{prefix}`",
            path.display()
        ))),
        1 => Ok(rows.remove(0)),
        count => {
            let mut candidates: Vec<String> = rows
                .iter()
                .take(SHOWN)
                .map(|row| format!("{} ({})", row.task_id, row.automation))
                .collect();
            if count > SHOWN {
                candidates.push("…".to_owned());
            }
            Err(Unresolved::Ambiguous(format!(
                "`{id}` is ambiguous: it starts the ids of several tasks{within}: {}; give more \
                 digits{}",
                candidates.join(", "),
                if automation.is_none() {
                    " or `--automation`"
                } else {
                    ""
                }
            )))
        }
    }
}

/// One row as one JSON line, with every column.
fn json_line(row: &TaskRecord) -> String {
    // A record of strings, numbers and JSON values always serializes.
    serde_json::to_string(row).unwrap_or_default() + "\n"
}

/// A task id as a table shows it: its first 12 digits.
fn short(task_id: &str) -> &str {
    curupira_host::events::short_id(task_id)
}

/// The rows as a table: a header, then one line per row, each column as wide as its
/// widest cell on a terminal (`unicode-width`), the attempts right-aligned; the last
/// column (the pairs, cut to about 60 characters) is not padded. No rows, no header.
fn table(rows: &[TaskRecord]) -> String {
    const HEADER: [&str; 8] = [
        "TASK",
        "AUTOMATION",
        "STATUS",
        "ATTEMPTS",
        "LAST",
        "DURATION",
        "UPDATED (UTC)",
        "VALUES",
    ];
    const RIGHT: usize = 3;
    if rows.is_empty() {
        return String::new();
    }
    let cells: Vec<[String; 8]> = rows
        .iter()
        .map(|row| {
            [
                short(&row.task_id).to_owned(),
                one_line(&row.automation),
                status_text(row),
                row.attempts.to_string(),
                outcome(row),
                duration(row),
                time_text(&row.updated_at),
                values(row, 60),
            ]
        })
        .collect();
    aligned(&HEADER, &cells, RIGHT)
}

/// Everything about one row, one field per line: the worktree's branch (worktree
/// mode) and whether the worktree is still there, as the disk says now.
fn details(row: &TaskRecord, opened: &Opened) -> String {
    let or_dash = |value: Option<String>| value.unwrap_or_else(|| "-".to_owned());
    let (workspace, branch) = workspace_text(row, opened);
    let branch = branch.map_or_else(String::new, |branch| format!("branch      {branch}\n"));
    format!(
        "task        {}\nautomation  {}\nstatus      {}\nattempts    {}\nlast        {}\n\
         duration    {}\nworkspace   {workspace}\n{branch}host pid    {}\nagent pid   {}\n\
         created     {}\nupdated     {}\nvalues      {}\n",
        row.task_id,
        one_line(&row.automation),
        status_text(row),
        row.attempts,
        outcome(row),
        duration(row),
        or_dash(row.host_pid.map(|pid| pid.to_string())),
        or_dash(row.agent_pid.map(|pid| pid.to_string())),
        row.created_at,
        row.updated_at,
        values(row, usize::MAX)
    )
}

/// The row's workspace as `show` says it, and its branch when it is a task's worktree
/// (its folder named as the workspace code names it: `<automation>/<task>` under the
/// root). A worktree that is gone is said to be, with the cleanup policy that removed
/// it when the config's policy explains it.
fn workspace_text(row: &TaskRecord, opened: &Opened) -> (String, Option<String>) {
    let Some(recorded) = &row.workspace else {
        return ("-".to_owned(), None);
    };
    let shown = one_line(recorded);
    let path = opened.dir.join(recorded);
    let exists = path.exists();
    let worktree = Path::new(recorded).ends_with(task_folder_tail(&row.automation, &row.task_id));
    if !worktree {
        // The shared folder (the config's), or a worktree of another naming.
        return if exists {
            (shown, None)
        } else {
            (format!("{shown} (no longer exists)"), None)
        };
    }
    let branch = Some(task_branch(&row.automation, &row.task_id));
    if exists {
        return (shown, branch);
    }
    let cleanup = opened
        .cleanups
        .iter()
        .find(|(automation, _)| *automation == row.automation)
        .map(|(_, cleanup)| *cleanup);
    let text = match cleanup {
        Some(cleanup)
            if row.status.is_finished()
                && curupira_host::config::workspace_cleanup(cleanup)
                    .removes(row.status == Status::Succeeded) =>
        {
            format!(
                "{shown} (removed after the task {}: cleanup = \"{cleanup}\"; the branch \
                 stays)",
                row.status
            )
        }
        _ => format!("{shown} (no longer exists)"),
    };
    (text, branch)
}

/// How long the row's last attempt took, as people read it; `-` when not recorded.
fn duration(row: &TaskRecord) -> String {
    row.duration_seconds
        .map_or_else(|| "-".to_owned(), duration_text)
}

fn status_text(row: &TaskRecord) -> String {
    if row.retry_requested {
        format!("{} (retry requested)", row.status)
    } else {
        row.status.to_string()
    }
}

fn outcome(row: &TaskRecord) -> String {
    last_text(row.reason.as_deref(), row.exit_code)
}

/// How an attempt ended, as the `LAST` columns say it: `exit 3`, `timeout`, `-`.
fn last_text(reason: Option<&str>, exit_code: Option<i32>) -> String {
    match (reason, exit_code) {
        (Some("exit"), Some(code)) => format!("exit {code}"),
        (Some(reason), Some(code)) => format!("{reason} (exit {code})"),
        (Some(reason), None) => reason.to_owned(),
        (None, _) => "-".to_owned(),
    }
}

/// The pairs as `key=value, …`, cut to about `limit` characters.
fn values(row: &TaskRecord, limit: usize) -> String {
    let text = row
        .values
        .as_array()
        .map(|pairs| {
            pairs
                .iter()
                .map(|pair| {
                    let key = pair["key"].as_str().unwrap_or_default();
                    let value = pair["value"].as_str().unwrap_or_default();
                    format!("{key}={value}")
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let text = text.replace(['\n', '\r', '\t'], " ");
    if text.chars().count() > limit {
        let cut: String = text.chars().take(limit.saturating_sub(1)).collect();
        cut + "…"
    } else {
        text
    }
}

fn write_out(text: &str) -> anyhow::Result<()> {
    write_stdout(text).context("cannot write to standard output")
}
