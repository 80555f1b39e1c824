//! The durable task ledger of a Curupira host: what every `curupira run` on one state
//! did with each task, in an SQLite database (`<config folder>/.curupira/ledger.sqlite`
//! by default, SQLite compiled in), so that "once per identity" holds across processes.
//!
//! It owns the schema and its migrations ([`MIGRATIONS`]), the rule that dispatches,
//! skips or makes a polled task wait ([`decide`], [`Ledger::decide`]), the marking of
//! rows a dead host left `running` ([`Ledger::mark_unrecorded`]), and the writer
//! thread that commits a run's changes in batches ([`WriterThread`], module
//! [`writer`]). What a run and `curupira tasks` ask of a ledger is two small traits,
//! [`RunBackend`] and [`TasksBackend`], which [`Ledger`] implements: the seam for a
//! second backend (below).
//!
//! Beside each task's row it keeps the history of its attempts (schema version 3;
//! version 4 indexes them by outcome, and the tasks by their end, for
//! [`Ledger::outcome_counts`] and [`Ledger::finished_per_hour`]):
//! one row per attempt, opened by [`Ledger::attempt_started_on`], ended by
//! [`Ledger::attempt_ended`] (or the task's [`Ledger::finished`], or, for one a dead
//! host left, [`Ledger::mark_unrecorded`]), read by [`Ledger::attempts`], and pruned
//! to a [`Retention`] by [`Ledger::prune_attempts`], which the writer thread calls
//! ([`WriterThread::start_with`]).
//!
//! A task recorded as finished is skipped by the next process that opens the ledger;
//! an identity never recorded is dispatched:
//!
//! ```
//! use curupira_ledger::{Decision, Ledger, Status};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("ledger.sqlite");
//! let mut ledger = Ledger::open(&path)?;
//! let id = "ab".repeat(32);
//! assert_eq!(ledger.decide("fix", &id)?, Decision::Dispatch);
//! ledger.attempt_started("fix", &id, r#"[{"key":"issue","value":"7"}]"#, "/work", 4242)?;
//! ledger.finished("fix", &id, Status::Succeeded, Some(0), "exit")?;
//! drop(ledger);
//!
//! // Another process, later: the same identity is skipped, a new one dispatched.
//! let mut reopened = Ledger::open(&path)?;
//! assert_eq!(reopened.decide("fix", &id)?, Decision::Skip(Status::Succeeded));
//! assert_eq!(reopened.decide("fix", &"cd".repeat(32))?, Decision::Dispatch);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The seam for a second backend
//!
//! SQLite is the embedded default. A second backend (PostgreSQL, so that several hosts
//! share one ledger) implements two traits and leaves the run loop untouched:
//!
//! - [`RunBackend`], what a run needs: [`decide`](RunBackend::decide) for every
//!   polled task (reading the row and applying the free function [`decide`], the one
//!   copy of the rule), [`apply`](RunBackend::apply) a batch of [`Change`]s in one
//!   transaction (all the writer thread calls), [`requested`](RunBackend::requested)
//!   (the tasks `tasks retry` asked for), [`has_row`](RunBackend::has_row) (a task
//!   `tasks forget` deleted), [`mark_unrecorded`](RunBackend::mark_unrecorded) at a
//!   run's start, and [`end_old_snapshot`](RunBackend::end_old_snapshot) while the
//!   run is idle (nothing to do for a backend that keeps no read snapshot).
//! - [`TasksBackend`], what `curupira tasks` needs: [`list`](TasksBackend::list),
//!   [`find`](TasksBackend::find) (by id prefix), [`keys`](TasksBackend::keys),
//!   [`request_retry`](TasksBackend::request_retry) and
//!   [`forget`](TasksBackend::forget).
//!
//! What stays the same for any backend: [`WriterThread::start`] takes any
//! [`RunBackend`], so batching, ticket order and "printed means committed" are the
//! same code; a row means what the sections below say, wherever it is stored; errors
//! are [`LedgerError`]s (`#[non_exhaustive]`: a backend adds a variant of its own;
//! the run loop only reports one and stops).
//!
//! What stays each backend's own, outside the traits, called by the program's wiring
//! before a run starts or after it ended: opening ([`Ledger::open`],
//! [`Ledger::open_existing`]), the check `curupira validate` makes without writing
//! ([`Ledger::check_existing`]), SQLite's read snapshots
//! ([`Ledger::read_in_snapshots`]) and the close that checkpoints the write-ahead log
//! ([`Ledger::close`]).
//!
//! The cost of the seam: a run holds its reading connection as `dyn RunBackend`
//! behind a mutex, so [`decide`](RunBackend::decide) is one indirect call per polled
//! task beside the mutex and an SQLite read of microseconds: nothing measurable. The
//! writer thread is generic over its backend (monomorphised), and the [`Writer`]
//! handle that the dispatch loop and the agents' threads hand changes to is one type
//! for every backend, so the per-task path has no indirect call more than before.
//!
//! Two helpers serve a host beside the ledger: [`lower_priority`] (the host's event
//! printer, which waits for the writer's commits, runs at [`NICE`] too) and
//! [`LedgerError::disk_full`] / [`LedgerError::is_disk_full`] (a full disk told,
//! and made for tests, without naming SQLite's error types).
//!
//! # Rows
//!
//! One row per (automation, task id), in the table `tasks`:
//!
//! | column | meaning |
//! |---|---|
//! | `id` | the row's number, in the order rows were made (a change writes the table's last pages, not a random one) |
//! | `automation`, `task_id` | the key (a unique index): the automation's name and the task identity (64 hex digits) |
//! | `pairs` | the item's pairs as polled, JSON `[{"key", "value"}, …]`: what `tasks retry` dispatches again |
//! | `status` | `running`, `succeeded`, `failed` or `interrupted` ([`Status`]) |
//! | `attempts` | agent attempts started, over every run |
//! | `exit_code`, `reason` | how the last attempt ended (`exit`, `timeout`, `stalled`, `signal`, `spawn-failed`, `hook-failed`, `interrupted`, `retry-interrupted` (its last attempt failed and the host stopped before its retry: `exit_code` is that attempt's), `unrecorded` (its host ended without recording it), …) |
//! | `workspace` | the last attempt's working directory |
//! | `host_pid` | the `curupira run` that wrote the row last |
//! | `agent_pid`, `agent_start` | the running agent's pid (= its process group) and, on Linux, its start time (clock ticks since boot, as `/proc/PID/stat` shows it; told by the boot clock around the spawn when that stayed within one tick: `curupira_process::watchdog::SpawnWindow`) |
//! | `retry` | 1 after `tasks retry`: the next `run` dispatches it from `pairs` |
//! | `created_at`, `updated_at` | milliseconds since the Unix epoch (UTC); `curupira tasks` shows them as ISO 8601 |
//! | `attempt_started_at`, `ended_at` | (version 2) when the last attempt started and when the task ended after it (milliseconds, as above; `ended_at` cleared by a new attempt): the last attempt's duration, which `updated_at` alone cannot tell once `tasks retry` changed the row |
//!
//! # Rules
//!
//! - A task found `succeeded` or `failed` is skipped ([`Decision::Skip`]), as a
//!   repeated identity in one process always was.
//! - One found `interrupted` (the host stopped it, or its agent could not start) is
//!   dispatched again.
//! - One found `running` was left so by a host that died (the run lock says no other
//!   host runs): it is dispatched again, unless its agent is provably still alive
//!   ([`Decision::Wait`]): its process group still exists and, on Linux, its leader
//!   still has the recorded start time. The host then waits and checks again.
//! - A run marks, before its first poll, every `running` row whose agent is gone
//!   `interrupted` with reason `unrecorded` ([`Ledger::mark_unrecorded`]): its host
//!   ended without recording the end (killed, or a full disk). Dispatched again when
//!   polled, as before; but `tasks list` no longer shows it running when its item is
//!   never handed over again.
//! - A run hands every state change to one writer thread ([`WriterThread`]), which
//!   writes the changes of a few milliseconds in one transaction; each change is
//!   committed before the event that reports it is printed. The database is in WAL
//!   mode with
//!   `synchronous = NORMAL`: a crash of the host (SIGKILL included) loses nothing that
//!   was committed; a power loss may lose the last commits but never corrupts the
//!   file. The last connection to close checkpoints the log into the file and
//!   deletes it (SQLite's default, and [`Ledger::close`] reports its failure), so
//!   after a clean end of a run `ledger.sqlite` alone holds every row: a user who
//!   copies or backs up the file the docs name gets it all. A crash leaves the log
//!   beside the file, and the next opener recovers it (SQLite's guarantee). A new,
//!   empty file's switch to WAL is not synced.
//! - Readers (`curupira tasks`) and the host share the file through SQLite's locking
//!   (with a busy timeout): a reader sees each row as of a committed transaction,
//!   never half of a change.
//! - The schema has a version (`PRAGMA user_version`, [`SCHEMA_VERSION`]) and an
//!   application id; a file written by an older version is migrated on open, one step
//!   per version ([`MIGRATIONS`]); a newer one is refused. A file that is not an SQLite
//!   database, is damaged, or belongs to another program is refused with an error
//!   naming it: the ledger is never silently started afresh.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

mod backend;
pub mod writer;

pub use backend::{RunBackend, TasksBackend};
pub use writer::{
    Change, LINGER, MAX_QUEUED, NICE, NotWritten, Ticket, TicketState, Writer, WriterThread,
    lower_priority,
};

/// The reason [`Ledger::mark_unrecorded`] gives a `running` row whose host ended
/// without recording how its task ended (written into its statement as is).
pub const UNRECORDED: &str = "unrecorded";

/// The ledger's file name in the state folder.
pub const FILE_NAME: &str = "ledger.sqlite";

/// How long a running host's reader answers [`Ledger::decide`] from one snapshot
/// ([`Ledger::read_in_snapshots`]).
pub const READER_SNAPSHOT_AGE: Duration = Duration::from_millis(100);

/// The schema version this host writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 5;

/// `PRAGMA application_id` of a ledger: "CURU".
const APPLICATION_ID: i64 = 0x4355_5255;

/// How long a statement waits for another process's lock before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The schema, one step per version: `MIGRATIONS[n]` takes a ledger from version `n`
/// to `n + 1`. Steps are never edited once released; a change is a new step.
pub const MIGRATIONS: &[&str] = &[
    // 1: the first release. Rows are kept in the order they were made (`id`), so a
    // change writes the table's last pages, not a random one per task id; the key
    // (task_id, automation) is an index of its own, written once per task.
    "CREATE TABLE tasks (
        id INTEGER PRIMARY KEY,
        automation TEXT NOT NULL,
        task_id TEXT NOT NULL,
        pairs TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted')),
        attempts INTEGER NOT NULL DEFAULT 0,
        exit_code INTEGER,
        reason TEXT,
        workspace TEXT,
        host_pid INTEGER,
        agent_pid INTEGER,
        agent_start INTEGER,
        retry INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (task_id, automation)
    );
    CREATE INDEX tasks_by_time ON tasks (updated_at);
    CREATE INDEX tasks_by_automation ON tasks (automation, updated_at);
    CREATE INDEX tasks_by_status ON tasks (status, updated_at);
    CREATE INDEX tasks_to_retry ON tasks (automation) WHERE retry = 1;",
    // 2: when the last attempt started and the task ended, for its duration (a
    // row of version 1 has neither: no duration is shown for it).
    "ALTER TABLE tasks ADD COLUMN attempt_started_at INTEGER;
    ALTER TABLE tasks ADD COLUMN ended_at INTEGER;",
    // 3: one row per attempt (the task's row keeps its last attempt's summary). A
    // ledger of version 2 knew each task's last attempt only: that one becomes its
    // row, the earlier ones are gone.
    "CREATE TABLE attempts (
        id INTEGER PRIMARY KEY,
        automation TEXT NOT NULL,
        task_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        outcome TEXT CHECK (outcome IN ('succeeded', 'failed', 'interrupted')),
        reason TEXT,
        exit_code INTEGER,
        error TEXT,
        workspace TEXT,
        branch TEXT,
        log_path TEXT,
        host_pid INTEGER,
        agent_pid INTEGER,
        UNIQUE (task_id, automation, attempt)
    );
    CREATE INDEX attempts_by_end ON attempts (ended_at);
    INSERT INTO attempts (automation, task_id, attempt, started_at, ended_at, outcome,
                          reason, exit_code, workspace, host_pid, agent_pid)
        SELECT automation, task_id, attempts, COALESCE(attempt_started_at, updated_at),
               CASE WHEN status = 'running' THEN NULL ELSE COALESCE(ended_at, updated_at) END,
               CASE WHEN status = 'running' THEN NULL ELSE status END,
               reason, exit_code, workspace, host_pid, agent_pid
        FROM tasks WHERE attempts > 0;",
    // 4: the attempts by outcome and end, so counting one outcome over a window
    // (`curupira status`) counts a range of this index, reading no row; the tasks by
    // their end, for the tasks finished per hour (`run --listen`'s chart).
    "CREATE INDEX attempts_by_outcome ON attempts (outcome, ended_at);
    CREATE INDEX tasks_by_end ON tasks (ended_at, status);",
    // 5: what a coding-agent provider's stream said of an attempt: its session (for
    // a resume), whether the attempt resumed one, its final answer, tokens and cost,
    // and what was wrong with the stream (one message per line).
    "ALTER TABLE attempts ADD COLUMN provider TEXT;
    ALTER TABLE attempts ADD COLUMN session_id TEXT;
    ALTER TABLE attempts ADD COLUMN resumed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE attempts ADD COLUMN answer TEXT;
    ALTER TABLE attempts ADD COLUMN input_tokens INTEGER;
    ALTER TABLE attempts ADD COLUMN output_tokens INTEGER;
    ALTER TABLE attempts ADD COLUMN cache_read_tokens INTEGER;
    ALTER TABLE attempts ADD COLUMN cache_write_tokens INTEGER;
    ALTER TABLE attempts ADD COLUMN cost_usd REAL;
    ALTER TABLE attempts ADD COLUMN stream_diagnostics TEXT;
    ALTER TABLE tasks ADD COLUMN fresh INTEGER NOT NULL DEFAULT 0;",
];

/// The longest final answer kept on an attempt, in bytes: a longer one is cut (at a
/// character boundary) and marked with `…`; the whole stream is in the attempt's log.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// `answer`, cut to [`MAX_ANSWER_BYTES`] at a character boundary (then ending in `…`).
fn cut_answer(answer: &str) -> String {
    if answer.len() <= MAX_ANSWER_BYTES {
        return answer.to_owned();
    }
    let mut end = MAX_ANSWER_BYTES - '…'.len_utf8();
    while !answer.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &answer[..end])
}

/// The current time as the ledger writes it: milliseconds since the Unix epoch. An
/// integer keeps the three indexes on `updated_at` small and costs no formatting per
/// change; [`COLUMNS`] shows it as ISO 8601. A macro, so that the statements using it
/// are constants (`concat!`), not strings made per change.
macro_rules! now {
    () => {
        "CAST(round(unixepoch('subsec') * 1000) AS INTEGER)"
    };
}

/// The columns [`Ledger::read_attempts`] reads, in its order, times as ISO 8601.
macro_rules! attempt_columns {
    () => {
        "attempt, outcome, reason, exit_code, error, workspace, branch, log_path, host_pid,
         agent_pid, strftime('%Y-%m-%dT%H:%M:%fZ', started_at / 1000.0, 'unixepoch'),
         strftime('%Y-%m-%dT%H:%M:%fZ', ended_at / 1000.0, 'unixepoch'),
         (ended_at - started_at) / 1000.0, automation, task_id, provider, session_id,
         resumed, answer, input_tokens, output_tokens, cache_read_tokens,
         cache_write_tokens, cost_usd, stream_diagnostics"
    };
}

/// The pairs of an attempt's task, one point read of the tasks' unique index: the
/// column after [`attempt_columns!`] where a reader wants to name the item.
macro_rules! task_pairs {
    () => {
        "(SELECT t.pairs FROM tasks t
          WHERE t.task_id = attempts.task_id AND t.automation = attempts.automation)"
    };
}

/// A task's status in the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// An agent runs it (or ran it when its host died).
    Running,
    /// Its agent succeeded; it is finished.
    Succeeded,
    /// Its agent failed after its retries; it is finished.
    Failed,
    /// It did not finish (the host stopped it, or its agent could not start): the next
    /// poll that returns it dispatches it again.
    Interrupted,
}

impl Status {
    /// Every status, in the order `tasks list --status` documents them.
    pub const ALL: [Status; 4] = [
        Status::Running,
        Status::Succeeded,
        Status::Failed,
        Status::Interrupted,
    ];

    /// The status's name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        }
    }

    /// The status named `name`.
    pub fn parse(name: &str) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == name)
    }

    /// Whether the task is finished (skipped when polled again).
    pub fn is_finished(self) -> bool {
        matches!(self, Status::Succeeded | Status::Failed)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What went wrong with the ledger; every message names the file.
///
/// Not exhaustive: a second backend ([`RunBackend`]) adds a variant of its own.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The file is not an SQLite database, or is damaged.
    #[error(
        "the task ledger `{}` is damaged or is not an SQLite database ({source}); \
         curupira does not start a new one in its place: restore it, or move it aside \
         to start with an empty ledger",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// An SQLite database of another program.
    #[error(
        "`{}` is an SQLite database but not a curupira task ledger (application id \
         {found:#x}, expected {APPLICATION_ID:#x}); point `[settings.ledger] path` at \
         another file",
        path.display()
    )]
    Foreign {
        /// The file.
        path: PathBuf,
        /// Its application id.
        found: i64,
    },
    /// Written by a newer curupira.
    #[error(
        "the task ledger `{}` has schema version {found}, newer than this curupira \
         knows ({SCHEMA_VERSION}); use a newer curupira",
        path.display()
    )]
    TooNew {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
    },
    /// The path names a folder.
    #[error(
        "the task ledger `{}` is a folder, not a file; point `[settings.ledger] path` at \
         a file",
        path.display()
    )]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// A row that this version cannot read.
    #[error("the task ledger `{}` has a row it cannot read: {what}", path.display())]
    BadRow {
        /// The file.
        path: PathBuf,
        /// What is wrong, in a few words.
        what: String,
    },
    /// Any other failure to open, read or write it.
    #[error("cannot {action} the task ledger `{}`: {source}", path.display())]
    Sql {
        /// What was being done: `open`, `read`, `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
}

impl LedgerError {
    /// The error of a write (or other `action`) on the ledger at `path` that failed
    /// because the disk is full, as SQLite reports one (`SQLITE_FULL`, "database or
    /// disk is full"): for the tests of code that reports a ledger's failures, which
    /// cannot fill a disk at will.
    pub fn disk_full(action: &'static str, path: impl Into<PathBuf>) -> LedgerError {
        LedgerError::Sql {
            action,
            path: path.into(),
            source: rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
                Some("database or disk is full".into()),
            ),
        }
    }

    /// Whether the ledger failed because its disk (or the database's size limit) is
    /// full.
    pub fn is_disk_full(&self) -> bool {
        match self {
            LedgerError::Corrupt { source, .. } | LedgerError::Sql { source, .. } => {
                source.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
            }
            _ => false,
        }
    }
}

/// What [`Ledger::decide`] says about a polled task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Never seen, interrupted, or left running by a dead host with no agent alive.
    Dispatch,
    /// Finished in an earlier process.
    Skip(Status),
    /// Left running by a dead host whose agent is still alive: wait, then decide again.
    Wait(AgentProcess),
}

/// A running agent, as recorded: enough to tell later whether it is still alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AgentProcess {
    /// Its pid, which is also its process group id.
    pub pid: u32,
    /// Linux: its start time in clock ticks since boot (`/proc/PID/stat`, field 22).
    pub start: Option<u64>,
}

impl AgentProcess {
    /// Whether the agent's process group still has a live process (not a zombie)
    /// and, on Linux, its leader, if still there, is the same process (same start
    /// time): see [`curupira_process::watchdog::group_alive`].
    pub fn is_alive(&self) -> bool {
        curupira_process::watchdog::group_alive(self.pid, self.start)
    }
}

/// One row of the ledger, as `curupira tasks` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRecord {
    /// The automation.
    pub automation: String,
    /// The task identity.
    pub task_id: String,
    /// The item's pairs as polled.
    pub values: serde_json::Value,
    /// Its status.
    pub status: Status,
    /// Agent attempts started, over every run.
    pub attempts: u32,
    /// The last attempt's exit status, when it had one.
    pub exit_code: Option<i32>,
    /// How the last attempt ended.
    pub reason: Option<String>,
    /// The last attempt's working directory.
    pub workspace: Option<String>,
    /// The host that wrote the row last.
    pub host_pid: Option<u32>,
    /// The agent's pid while it runs (or ran, for a finished task).
    pub agent_pid: Option<u32>,
    /// Whether `tasks retry` asked the next run to dispatch it again.
    pub retry_requested: bool,
    /// When the row was first written (UTC).
    pub created_at: String,
    /// When it last changed (UTC).
    pub updated_at: String,
    /// How long its last attempt took, in seconds, from its start to the task's end
    /// (`None` while it runs, or when the ledger did not record it: a row written by
    /// a `curupira` before schema version 2).
    pub duration_seconds: Option<f64>,
}

/// One attempt of a task ([`Ledger::attempts`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptRecord {
    /// Its number, from 1, over every run.
    pub attempt: u32,
    /// How it ended; `None` while it runs.
    pub outcome: Option<Status>,
    /// How it ended, in a word (`exit`, `signal`, `timeout`, `stall`, `shutdown`,
    /// `unrecorded`, …).
    pub reason: Option<String>,
    /// Its agent's exit status, when it had one.
    pub exit_code: Option<i32>,
    /// What went wrong, in a sentence, when the host knew.
    pub error: Option<String>,
    /// Its working directory.
    pub workspace: Option<String>,
    /// Its Git branch, in a worktree of its own.
    pub branch: Option<String>,
    /// Its log file, when one was written.
    pub log_path: Option<String>,
    /// The host that ran it.
    pub host_pid: Option<u32>,
    /// Its agent's pid.
    pub agent_pid: Option<u32>,
    /// When it started (UTC).
    pub started_at: String,
    /// When it ended (UTC); `None` while it runs.
    pub ended_at: Option<String>,
    /// How long it took, in seconds; `None` while it runs.
    pub duration_seconds: Option<f64>,
    /// The coding-agent provider that ran it, when the automation names one.
    pub provider: Option<String>,
    /// The provider's session, once announced (what a resume goes on with).
    pub session_id: Option<String>,
    /// Whether it resumed the session of an earlier attempt.
    pub resumed: bool,
    /// The agent's final answer, as its stream gave it (at most
    /// [`MAX_ANSWER_BYTES`]).
    pub answer: Option<String>,
    /// Tokens used, as the stream said.
    pub usage: Option<StreamUsage>,
    /// What it cost in US dollars, as the stream said.
    pub cost_usd: Option<f64>,
    /// What was wrong with the provider's stream, one sentence each.
    pub stream_diagnostics: Vec<String>,
}

/// Token counts of an attempt, as the provider's stream said them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StreamUsage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from a cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to a cache.
    pub cache_write_tokens: u64,
}

/// What a provider's stream said of an attempt ([`Ledger::attempt_stream`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamRecord {
    /// The final answer (cut to [`MAX_ANSWER_BYTES`] when written).
    pub answer: Option<String>,
    /// Tokens used.
    pub usage: Option<StreamUsage>,
    /// The cost in US dollars.
    pub cost_usd: Option<f64>,
    /// What was wrong with the stream.
    pub diagnostics: Vec<String>,
}

/// An attempt, with the task it belongs to ([`Ledger::open_attempts`],
/// [`Ledger::last_failures`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskAttempt {
    /// The task's automation.
    pub automation: String,
    /// The task's identity.
    pub task_id: String,
    /// The task's pairs as stored with its row (`[{"key", "value"}, …]`), so that a
    /// reader can say which item it is; `[]` when the row is gone.
    pub values: serde_json::Value,
    /// The attempt.
    #[serde(flatten)]
    pub attempt: AttemptRecord,
}

/// How many attempts ([`Ledger::outcome_counts`]) or tasks ([`Ledger::task_counts`])
/// ended with each outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct OutcomeCounts {
    /// Attempts whose agent succeeded (tasks that succeeded).
    pub succeeded: u64,
    /// Attempts that failed (tasks that failed, after their retries).
    pub failed: u64,
    /// Attempts stopped before they ended: a shutdown, a host that died (tasks not
    /// finished).
    pub interrupted: u64,
}

/// How much attempt history a ledger keeps ([`Ledger::prune_attempts`]): ended
/// attempts older than `max_age`, and beyond the newest `max_per_task` of a task, are
/// deleted. `None` keeps everything on that count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Retention {
    /// The longest an ended attempt is kept.
    pub max_age: Option<Duration>,
    /// The most attempts kept per task.
    pub max_per_task: Option<u32>,
}

/// Which rows [`Ledger::list`] returns.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this automation's.
    pub automation: Option<String>,
    /// Only those with this status.
    pub status: Option<Status>,
}

/// A task's last attempt, as a resume needs it ([`Ledger::resume_point`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePoint {
    /// Its number.
    pub attempt: u32,
    /// The provider it ran.
    pub provider: Option<String>,
    /// Its session.
    pub session_id: Option<String>,
    /// How it ended, in a word (`timeout`, `stalled`, `interrupted`, `unrecorded`, …);
    /// `None` while open.
    pub reason: Option<String>,
    /// It never ended (a host died and no run marked it yet).
    pub open: bool,
    /// Its working directory.
    pub workspace: Option<String>,
    /// `tasks retry --fresh` asked for a fresh start.
    pub fresh: bool,
}

/// A task a run dispatches again from its stored pairs, whether or not its extension
/// hands it over again: one `tasks retry` asked for ([`RunBackend::requested`]), or,
/// at a run's start, one not finished ([`RunBackend::unfinished`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    /// The task identity.
    pub task_id: String,
    /// The stored pairs, JSON.
    pub pairs: String,
    /// Its attempts so far, over every run: its next attempt is this plus one.
    pub attempts: u32,
}

/// An open ledger (one SQLite connection).
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    connection: Connection,
    /// How long [`decide`](Self::decide) may read one snapshot
    /// ([`read_in_snapshots`](Self::read_in_snapshots)); `None`: each call reads anew.
    snapshot_age: Option<Duration>,
    /// When the snapshot being read began (a transaction is open).
    snapshot_since: Option<Instant>,
}

/// The columns of a [`TaskRecord`], times as ISO 8601 (UTC, milliseconds).
const COLUMNS: &str = "automation, task_id, pairs, status, attempts, exit_code, reason, \
     workspace, host_pid, agent_pid, retry, \
     strftime('%Y-%m-%dT%H:%M:%fZ', created_at / 1000.0, 'unixepoch'), \
     strftime('%Y-%m-%dT%H:%M:%fZ', updated_at / 1000.0, 'unixepoch'), \
     (ended_at - attempt_started_at) / 1000.0";

impl Ledger {
    /// Opens the ledger at `path`, creating it (not its folder) when missing, and
    /// migrates it to [`SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Ledger, LedgerError> {
        Self::open_with(path, OpenFlags::SQLITE_OPEN_CREATE)
    }

    /// Opens the ledger at `path` if it exists (`None` when it does not), migrating it
    /// as [`open`](Self::open) does.
    pub fn open_existing(path: &Path) -> Result<Option<Ledger>, LedgerError> {
        if !path.exists() {
            return Ok(None);
        }
        Self::open_with(path, OpenFlags::empty()).map(Some)
    }

    /// Checks, without writing to it, that the ledger at `path` would open: what
    /// `curupira validate` reports before a `run` refuses it. `Ok(false)` when there
    /// is no file (a run creates it); the errors are those of [`open`](Self::open)
    /// for a damaged, foreign, newer or unreadable file. Nothing is migrated or set.
    pub fn check_existing(path: &Path) -> Result<bool, LedgerError> {
        if path.symlink_metadata().is_err() {
            return Ok(false);
        }
        Self::connect(path, OpenFlags::empty())?
            .header()
            .map(|_| true)
    }

    /// A connection to `path` with its busy timeout, nothing read yet.
    fn connect(path: &Path, extra: OpenFlags) -> Result<Ledger, LedgerError> {
        if path.is_dir() {
            return Err(LedgerError::NotAFile {
                path: path.to_owned(),
            });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | extra;
        let connection =
            Connection::open_with_flags(path, flags).map_err(|source| LedgerError::Sql {
                action: "open",
                path: path.to_owned(),
                source: without_path(source, path),
            })?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|source| classify(path, "open", source))?;
        Ok(Ledger {
            path: path.to_owned(),
            connection,
            snapshot_age: None,
            snapshot_since: None,
        })
    }

    fn open_with(path: &Path, extra: OpenFlags) -> Result<Ledger, LedgerError> {
        let mut ledger = Self::connect(path, extra)?;
        // Two processes setting up one new file at once (a `curupira tasks` beside a
        // first `run`): switching to WAL reads, then writes, in one statement, and
        // SQLite answers "busy" to the second without waiting (its deadlock rule).
        // Setting up again is safe (every step checks what is there): retry, within
        // the busy timeout.
        let started = std::time::Instant::now();
        loop {
            match ledger.prepare() {
                Err(LedgerError::Sql { source, .. })
                    if source.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                        && started.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                prepared => return prepared.map(|()| ledger),
            }
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the connection. When it is the file's last one, SQLite checkpoints the
    /// write-ahead log into the file and deletes it, so the file alone holds every
    /// row; a failure to close is returned (dropping a [`Ledger`] closes it too, but
    /// says nothing of a failure).
    pub fn close(self) -> Result<(), LedgerError> {
        let path = self.path;
        self.connection
            .close()
            .map_err(|(_, source)| classify(&path, "close", source))
    }

    /// The file's schema version and how many schema objects it has, once its
    /// header says it is a ledger this version can open.
    ///
    /// Reading the header first tells a foreign or damaged file before anything is
    /// written to it. One read transaction, so the three figures are of one moment:
    /// another process creating the ledger meanwhile (a `curupira tasks` beside a
    /// first `run`) otherwise showed an id of 0 with its tables: "foreign".
    fn header(&mut self) -> Result<(i64, i64), LedgerError> {
        let path = self.path.clone();
        let classify = move |source: rusqlite::Error| classify(&path, "open", source);
        let (application_id, version, objects) = {
            let snapshot = self.connection.transaction().map_err(&classify)?;
            let application_id: i64 = snapshot
                .pragma_query_value(None, "application_id", |row| row.get(0))
                .map_err(&classify)?;
            let version: i64 = snapshot
                .pragma_query_value(None, "user_version", |row| row.get(0))
                .map_err(&classify)?;
            let objects: i64 = snapshot
                .query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
                .map_err(&classify)?;
            snapshot.commit().map_err(&classify)?;
            (application_id, version, objects)
        };
        if application_id != APPLICATION_ID && (application_id != 0 || objects > 0) {
            return Err(LedgerError::Foreign {
                path: self.path.clone(),
                found: application_id,
            });
        }
        if version > SCHEMA_VERSION {
            return Err(LedgerError::TooNew {
                path: self.path.clone(),
                found: version,
            });
        }
        Ok((version, objects))
    }

    /// Settings of the connection, then the schema checked and migrated.
    fn prepare(&mut self) -> Result<(), LedgerError> {
        let path = self.path.clone();
        let classify = move |source: rusqlite::Error| classify(&path, "open", source);
        let (version, objects) = self.header()?;
        // WAL is a property of the file: set once, by the first opener. Asking again
        // would take a lock that readers beside a running host need not wait for.
        let mode: String = self
            .connection
            .pragma_query_value(None, "journal_mode", |row| row.get(0))
            .map_err(&classify)?;
        if !mode.eq_ignore_ascii_case("wal") {
            // A new, empty file holds nothing a power loss could take: its switch
            // to WAL is not synced (four `fsync`s of a rollback journal otherwise).
            // A file with content keeps every sync.
            if objects == 0 {
                self.connection
                    .pragma_update(None, "synchronous", "OFF")
                    .map_err(&classify)?;
            }
            let mode: String = self
                .connection
                .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
                .map_err(&classify)?;
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::debug!("the task ledger is in journal mode {mode}, not WAL");
            }
        }
        self.connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(&classify)?;
        if version < SCHEMA_VERSION {
            self.migrate(version).map_err(&classify)?;
        }
        Ok(())
    }

    /// Applies the migrations after `from`, each in its own transaction with the
    /// version it reaches.
    fn migrate(&mut self, from: i64) -> rusqlite::Result<()> {
        let from = usize::try_from(from).unwrap_or(0);
        for (step, sql) in MIGRATIONS.iter().enumerate().skip(from) {
            // IMMEDIATE: the write lock first (waiting for it), so a reader that opens
            // the file while a host creates it waits instead of failing at once.
            let transaction = self
                .connection
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            // Another process may have migrated meanwhile.
            let current: i64 =
                transaction.pragma_query_value(None, "user_version", |row| row.get(0))?;
            if usize::try_from(current).unwrap_or(0) > step {
                continue;
            }
            transaction.execute_batch(sql)?;
            transaction.pragma_update(None, "application_id", APPLICATION_ID)?;
            transaction.pragma_update(None, "user_version", step as i64 + 1)?;
            transaction.commit()?;
        }
        Ok(())
    }

    fn error(&self, action: &'static str) -> impl Fn(rusqlite::Error) -> LedgerError + '_ {
        move |source| classify(&self.path, action, source)
    }

    /// Lets [`decide`](Self::decide) answer from one read snapshot of the file for up to
    /// `max_age` before it takes a new one, instead of a new one per call: a read
    /// transaction of its own costs locks, and every page read again after any commit
    /// (SQLite drops its cache then), about 20 µs per polled task.
    ///
    /// For a host's reader, under its run lock: the rows this host writes meanwhile
    /// are known to it anyway (a task it dispatched is not decided again; one it
    /// released reads as to dispatch in any snapshot), so only another process's
    /// change (`tasks forget`, `tasks retry`) is seen up to `max_age` late. Only
    /// `decide` reads the snapshot: every other call ends it first
    /// ([`requested`](Self::requested) reads anew). An open snapshot holds back the
    /// write-ahead log's reset: the reader's owner ends an old one while it waits
    /// ([`end_old_snapshot`](Self::end_old_snapshot)).
    pub fn read_in_snapshots(&mut self, max_age: Duration) {
        self.snapshot_age = Some(max_age);
    }

    /// Makes sure a snapshot not older than the allowed age is being read (see
    /// [`read_in_snapshots`](Self::read_in_snapshots)).
    fn in_snapshot(&mut self) -> rusqlite::Result<()> {
        let Some(max_age) = self.snapshot_age else {
            return Ok(());
        };
        match self.snapshot_since {
            Some(since) if since.elapsed() < max_age => return Ok(()),
            Some(_) => self.connection.execute_batch("COMMIT; BEGIN")?,
            None => self.connection.execute_batch("BEGIN")?,
        }
        self.snapshot_since = Some(Instant::now());
        Ok(())
    }

    /// Ends the snapshot being read when it is older than the allowed age (see
    /// [`read_in_snapshots`](Self::read_in_snapshots)), so that one does not outlive
    /// its age while nothing is decided: an open snapshot keeps the write-ahead log
    /// from being reset.
    pub fn end_old_snapshot(&mut self) -> Result<(), LedgerError> {
        let old = self
            .snapshot_since
            .zip(self.snapshot_age)
            .is_some_and(|(since, age)| since.elapsed() >= age);
        if old {
            self.end_snapshot().map_err(self.error("read"))?;
        }
        Ok(())
    }

    /// Ends the snapshot being read, if any: the next read sees every commit.
    fn end_snapshot(&mut self) -> rusqlite::Result<()> {
        if self.snapshot_since.take().is_some() {
            self.connection.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    /// What to do with a task a poll returned (see the crate's rules). Reads only.
    pub fn decide(&mut self, automation: &str, task_id: &str) -> Result<Decision, LedgerError> {
        self.in_snapshot().map_err(self.error("read"))?;
        let found = self
            .connection
            .prepare_cached(
                "SELECT status, agent_pid, agent_start FROM tasks
                 WHERE automation = ?1 AND task_id = ?2",
            )
            .and_then(|mut statement| {
                statement
                    .query_row(params![automation, task_id], |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, Option<i64>>(1)?,
                            row.get::<_, Option<i64>>(2)?,
                        ))
                    })
                    .optional()
            })
            .map_err(self.error("read"))?;
        let Some((status, agent_pid, agent_start)) = found else {
            return Ok(Decision::Dispatch);
        };
        let status = self.status(&status)?;
        Ok(decide(
            status,
            agent(agent_pid, agent_start),
            AgentProcess::is_alive,
        ))
    }

    fn status(&self, name: &str) -> Result<Status, LedgerError> {
        Status::parse(name).ok_or_else(|| LedgerError::BadRow {
            path: self.path.clone(),
            what: format!("unknown status `{name}`"),
        })
    }

    /// An attempt of the task starts (its first in this process, or a retry): the row
    /// is made `running` under this host, its attempts counted, the last outcome and
    /// agent and any retry request cleared.
    pub fn attempt_started(
        &mut self,
        automation: &str,
        task_id: &str,
        pairs: &str,
        workspace: &str,
        host_pid: u32,
    ) -> Result<(), LedgerError> {
        self.attempt_started_on(automation, task_id, pairs, workspace, None, host_pid)
    }

    /// [`attempt_started`](Self::attempt_started), with the attempt's Git branch when
    /// it works in a worktree of its own: the task's row, and a new attempt row
    /// ([`attempts`](Self::attempts)) numbered after the task's earlier ones.
    pub fn attempt_started_on(
        &mut self,
        automation: &str,
        task_id: &str,
        pairs: &str,
        workspace: &str,
        branch: Option<&str>,
        host_pid: u32,
    ) -> Result<(), LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        const SQL: &str = concat!(
            "INSERT INTO tasks (automation, task_id, pairs, status, attempts, workspace,
                                host_pid, created_at, updated_at, attempt_started_at)
             VALUES (?1, ?2, ?3, 'running', 1, ?4, ?5, ",
            now!(),
            ", ",
            now!(),
            ", ",
            now!(),
            ")
             ON CONFLICT (task_id, automation) DO UPDATE SET
                pairs = excluded.pairs, status = 'running', attempts = attempts + 1,
                exit_code = NULL, reason = NULL, workspace = excluded.workspace,
                host_pid = excluded.host_pid, agent_pid = NULL, agent_start = NULL,
                retry = 0, fresh = 0, updated_at = excluded.updated_at,
                attempt_started_at = excluded.attempt_started_at, ended_at = NULL"
        );
        self.connection
            .prepare_cached(SQL)
            .and_then(|mut statement| {
                statement.execute(params![automation, task_id, pairs, workspace, host_pid])
            })
            .map_err(self.error("write"))?;
        // A row left open by an earlier attempt (a host that died with it) ended when
        // this one started; its outcome is unknown.
        self.connection
            .prepare_cached(
                "UPDATE attempts SET ended_at = (SELECT attempt_started_at FROM tasks
                     WHERE automation = ?1 AND task_id = ?2),
                     outcome = 'interrupted', reason = COALESCE(reason, 'unrecorded')
                 WHERE automation = ?1 AND task_id = ?2 AND ended_at IS NULL",
            )
            .and_then(|mut statement| statement.execute(params![automation, task_id]))
            .map_err(self.error("write"))?;
        self.connection
            .prepare_cached(
                "INSERT INTO attempts (automation, task_id, attempt, started_at, workspace,
                                       branch, host_pid)
                 SELECT automation, task_id, attempts, attempt_started_at, workspace, ?3,
                        host_pid
                 FROM tasks WHERE automation = ?1 AND task_id = ?2
                 ON CONFLICT (task_id, automation, attempt) DO UPDATE SET
                    started_at = excluded.started_at, ended_at = NULL, outcome = NULL,
                    reason = NULL, exit_code = NULL, error = NULL,
                    workspace = excluded.workspace, branch = excluded.branch,
                    log_path = NULL, host_pid = excluded.host_pid, agent_pid = NULL",
            )
            .and_then(|mut statement| statement.execute(params![automation, task_id, branch]))
            .map_err(self.error("write"))?;
        Ok(())
    }

    /// The task's running attempt writes its output to `log_path` (nothing when
    /// `None`).
    pub fn attempt_log(
        &mut self,
        automation: &str,
        task_id: &str,
        log_path: Option<&str>,
    ) -> Result<(), LedgerError> {
        let Some(log_path) = log_path else {
            return Ok(());
        };
        self.connection
            .prepare_cached(
                "UPDATE attempts SET log_path = ?3
                 WHERE automation = ?1 AND task_id = ?2 AND ended_at IS NULL",
            )
            .and_then(|mut statement| statement.execute(params![automation, task_id, log_path]))
            .map_err(self.error("write"))?;
        Ok(())
    }

    /// The task's running attempt ended with `outcome`: `exit_code` (or none: killed
    /// by a signal, never started), how it ended (`reason`) and the error that says
    /// why it failed, when it did. The task's own row changes only when the task
    /// ends ([`finished`](Self::finished)).
    pub fn attempt_ended(
        &mut self,
        automation: &str,
        task_id: &str,
        outcome: Status,
        exit_code: Option<i32>,
        reason: &str,
        error: Option<&str>,
    ) -> Result<(), LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        const SQL: &str = concat!(
            "UPDATE attempts SET ended_at = ",
            now!(),
            ", outcome = ?3, exit_code = ?4, reason = ?5, error = ?6
             WHERE automation = ?1 AND task_id = ?2 AND ended_at IS NULL"
        );
        self.connection
            .prepare_cached(SQL)
            .and_then(|mut statement| {
                statement.execute(params![
                    automation,
                    task_id,
                    outcome.as_str(),
                    exit_code,
                    reason,
                    error
                ])
            })
            .map_err(self.error("write"))?;
        Ok(())
    }

    /// Every attempt of a task, the first first.
    pub fn attempts(
        &self,
        automation: &str,
        task_id: &str,
    ) -> Result<Vec<AttemptRecord>, LedgerError> {
        const SQL: &str = concat!(
            "SELECT ",
            attempt_columns!(),
            ", NULL FROM attempts WHERE automation = ?1 AND task_id = ?2 ORDER BY attempt"
        );
        let rows = self.read_attempts(SQL, params![automation, task_id])?;
        Ok(rows.into_iter().map(|attempt| attempt.attempt).collect())
    }

    /// The attempts that have not ended, the oldest first: those a running host runs,
    /// or those a host that died left open (the next run records them as interrupted,
    /// reason [`UNRECORDED`]).
    pub fn open_attempts(&self) -> Result<Vec<TaskAttempt>, LedgerError> {
        const SQL: &str = concat!(
            "SELECT ",
            attempt_columns!(),
            ", ",
            task_pairs!(),
            " FROM attempts WHERE ended_at IS NULL ORDER BY started_at, id"
        );
        self.read_attempts(SQL, params![])
    }

    /// The last `limit` attempts that failed or were interrupted, the newest first.
    pub fn last_failures(&self, limit: u32) -> Result<Vec<TaskAttempt>, LedgerError> {
        const SQL: &str = concat!(
            "SELECT ",
            attempt_columns!(),
            ", ",
            task_pairs!(),
            // `+outcome`: read backwards along the end index (no sort), not the failed
            // rows gathered by the outcome index and sorted.
            " FROM attempts WHERE ended_at IS NOT NULL AND +outcome IN ('failed', 'interrupted')
              ORDER BY ended_at DESC, id DESC LIMIT ?1"
        );
        self.read_attempts(SQL, params![limit])
    }

    /// How many attempts ended with each outcome in the last `long` and in the last
    /// `short` (by their end): one count of a range of the `attempts_by_outcome` index
    /// per outcome and window, which reads no row (a `GROUP BY` over the windows would
    /// sort them: 20 times slower over 100,000 attempts).
    pub fn outcome_counts(
        &self,
        long: Duration,
        short: Duration,
    ) -> Result<(OutcomeCounts, OutcomeCounts), LedgerError> {
        const SQL: &str = concat!(
            "SELECT count(*) FROM attempts WHERE outcome = ?1 AND ended_at >= ",
            now!(),
            " - ?2"
        );
        let mut statement = self
            .connection
            .prepare_cached(SQL)
            .map_err(self.error("read"))?;
        let mut count = |outcome: Status, window: Duration| {
            let millis = i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
            statement
                .query_row(params![outcome.as_str(), millis], |row| {
                    row.get::<_, u64>(0)
                })
                .map_err(self.error("read"))
        };
        let mut counts = |window: Duration| -> Result<OutcomeCounts, LedgerError> {
            Ok(OutcomeCounts {
                succeeded: count(Status::Succeeded, window)?,
                failed: count(Status::Failed, window)?,
                interrupted: count(Status::Interrupted, window)?,
            })
        };
        Ok((counts(long)?, counts(short)?))
    }

    /// How many tasks ended in the last `long` and in the last `short` (by their
    /// row's end: the end of their last attempt, or of the wait for a retry), each
    /// counted once, by how it ended (its status now: `succeeded`, `failed`, or
    /// `interrupted`, not finished). A task that failed three times is one failed
    /// task, where [`outcome_counts`](Self::outcome_counts) counts three failed
    /// attempts. A range of the index on `ended_at` per window.
    pub fn task_counts(
        &self,
        long: Duration,
        short: Duration,
    ) -> Result<(OutcomeCounts, OutcomeCounts), LedgerError> {
        const SQL: &str = concat!(
            "SELECT status, count(*) FROM tasks WHERE ended_at >= ",
            now!(),
            " - ?1 AND status != 'running' GROUP BY status"
        );
        let mut statement = self
            .connection
            .prepare_cached(SQL)
            .map_err(self.error("read"))?;
        let mut counts = |window: Duration| -> Result<OutcomeCounts, LedgerError> {
            let millis = i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
            let rows = statement
                .query_map(params![millis], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, u64>(1)?))
                })
                .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                .map_err(self.error("read"))?;
            let mut counts = OutcomeCounts::default();
            for (status, count) in rows {
                match self.status(&status)? {
                    Status::Succeeded => counts.succeeded = count,
                    Status::Failed => counts.failed = count,
                    Status::Interrupted => counts.interrupted = count,
                    Status::Running => {}
                }
            }
            Ok(counts)
        };
        Ok((counts(long)?, counts(short)?))
    }

    /// The tasks that ended in the last `hours` hours, per hour and status: `(the
    /// hour's start in milliseconds since the Unix epoch, status, count)`, the oldest
    /// hour first; hours with none are not listed.
    pub fn finished_per_hour(&self, hours: u32) -> Result<Vec<(i64, Status, u64)>, LedgerError> {
        const SQL: &str = concat!(
            "SELECT ended_at / 3600000 * 3600000 AS hour, status, count(*) FROM tasks
             WHERE ended_at >= (",
            now!(),
            " / 3600000 - ?1 + 1) * 3600000 AND status != 'running'
             GROUP BY hour, status ORDER BY hour"
        );
        let mut statement = self
            .connection
            .prepare_cached(SQL)
            .map_err(self.error("read"))?;
        let rows = statement
            .query_map(params![hours], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, u64>(2)?,
                ))
            })
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(self.error("read"))?;
        rows.into_iter()
            .map(|(hour, status, count)| Ok((hour, self.status(&status)?, count)))
            .collect()
    }

    /// Runs `sql` (its columns [`attempt_columns!`]'s) and reads its rows.
    fn read_attempts(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<TaskAttempt>, LedgerError> {
        let mut statement = self
            .connection
            .prepare_cached(sql)
            .map_err(self.error("read"))?;
        let rows = statement
            .query_map(params, |row| {
                let outcome: Option<String> = row.get(1)?;
                Ok((
                    outcome,
                    TaskAttempt {
                        automation: row.get(13)?,
                        task_id: row.get(14)?,
                        values: row
                            .get::<_, Option<String>>(25)?
                            .and_then(|pairs| serde_json::from_str(&pairs).ok())
                            .unwrap_or_else(|| serde_json::Value::Array(Vec::new())),
                        attempt: AttemptRecord {
                            attempt: row.get(0)?,
                            outcome: None,
                            reason: row.get(2)?,
                            exit_code: row.get(3)?,
                            error: row.get(4)?,
                            workspace: row.get(5)?,
                            branch: row.get(6)?,
                            log_path: row.get(7)?,
                            host_pid: row.get(8)?,
                            agent_pid: row.get(9)?,
                            started_at: row.get(10)?,
                            ended_at: row.get(11)?,
                            duration_seconds: row.get(12)?,
                            provider: row.get(15)?,
                            session_id: row.get(16)?,
                            resumed: row.get::<_, i64>(17)? != 0,
                            answer: row.get(18)?,
                            usage: match (
                                row.get::<_, Option<u64>>(19)?,
                                row.get::<_, Option<u64>>(20)?,
                            ) {
                                (None, None) => None,
                                (input, output) => Some(StreamUsage {
                                    input_tokens: input.unwrap_or(0),
                                    output_tokens: output.unwrap_or(0),
                                    cache_read_tokens: row.get::<_, Option<u64>>(21)?.unwrap_or(0),
                                    cache_write_tokens: row.get::<_, Option<u64>>(22)?.unwrap_or(0),
                                }),
                            },
                            cost_usd: row.get(23)?,
                            stream_diagnostics: row
                                .get::<_, Option<String>>(24)?
                                .map(|text| text.lines().map(str::to_owned).collect())
                                .unwrap_or_default(),
                        },
                    },
                ))
            })
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(self.error("read"))?;
        rows.into_iter()
            .map(|(outcome, mut record)| {
                record.attempt.outcome = outcome.map(|text| self.status(&text)).transpose()?;
                Ok(record)
            })
            .collect()
    }

    /// Deletes the attempt rows `retention` does not keep (ended ones only; a task's
    /// own row stays); returns how many. What the writer thread calls now and then.
    pub fn prune_attempts(&mut self, retention: &Retention) -> Result<usize, LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        let mut deleted = 0;
        if let Some(age) = retention.max_age {
            let age_ms = i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
            const SQL: &str = concat!(
                "DELETE FROM attempts WHERE ended_at IS NOT NULL AND ended_at < ",
                now!(),
                " - ?1"
            );
            deleted += self
                .connection
                .prepare_cached(SQL)
                .and_then(|mut statement| statement.execute(params![age_ms]))
                .map_err(self.error("write"))?;
        }
        if let Some(count) = retention.max_per_task {
            deleted += self
                .connection
                .prepare_cached(
                    "DELETE FROM attempts WHERE ended_at IS NOT NULL AND id IN (
                        SELECT id FROM (
                            SELECT id, row_number() OVER (
                                PARTITION BY automation, task_id ORDER BY attempt DESC
                            ) AS newer
                            FROM attempts
                        ) WHERE newer > ?1
                    )",
                )
                .and_then(|mut statement| statement.execute(params![count]))
                .map_err(self.error("write"))?;
        }
        Ok(deleted)
    }

    /// The task's agent process started.
    pub fn agent_started(
        &mut self,
        automation: &str,
        task_id: &str,
        agent: AgentProcess,
    ) -> Result<(), LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        let start = agent.start.and_then(|start| i64::try_from(start).ok());
        self.connection
            .prepare_cached(
                "UPDATE tasks SET agent_pid = ?3, agent_start = ?4
                 WHERE automation = ?1 AND task_id = ?2",
            )
            .and_then(|mut statement| {
                statement.execute(params![automation, task_id, agent.pid, start])
            })
            .map_err(self.error("write"))?;
        self.connection
            .prepare_cached(
                "UPDATE attempts SET agent_pid = ?3
                 WHERE automation = ?1 AND task_id = ?2 AND ended_at IS NULL",
            )
            .and_then(|mut statement| statement.execute(params![automation, task_id, agent.pid]))
            .map_err(self.error("write"))?;
        Ok(())
    }

    /// The running attempt of a task runs `provider` in session `session_id`
    /// (`resumed`: going on with an earlier attempt's session). Written as soon as the
    /// session is known, so that a host killed a moment later leaves it for a resume.
    pub fn attempt_session(
        &mut self,
        automation: &str,
        task_id: &str,
        provider: &str,
        session_id: &str,
        resumed: bool,
    ) -> Result<(), LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        self.connection
            .prepare_cached(
                "UPDATE attempts SET provider = ?3, session_id = ?4, resumed = ?5
                 WHERE automation = ?1 AND task_id = ?2 AND ended_at IS NULL",
            )
            .and_then(|mut statement| {
                statement.execute(params![automation, task_id, provider, session_id, resumed])
            })
            .map_err(self.error("write"))?;
        Ok(())
    }

    /// What the running attempt's stream said, once it ended.
    pub fn attempt_stream(
        &mut self,
        automation: &str,
        task_id: &str,
        stream: &StreamRecord,
    ) -> Result<(), LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        let answer = stream.answer.as_deref().map(cut_answer);
        let usage = stream.usage;
        let diagnostics = (!stream.diagnostics.is_empty()).then(|| stream.diagnostics.join("\n"));
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.connection
            .prepare_cached(
                "UPDATE attempts SET answer = ?3, input_tokens = ?4, output_tokens = ?5,
                 cache_read_tokens = ?6, cache_write_tokens = ?7, cost_usd = ?8,
                 stream_diagnostics = ?9
                 WHERE automation = ?1 AND task_id = ?2 AND ended_at IS NULL",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    automation,
                    task_id,
                    answer,
                    usage.map(|u| count(u.input_tokens)),
                    usage.map(|u| count(u.output_tokens)),
                    usage.map(|u| count(u.cache_read_tokens)),
                    usage.map(|u| count(u.cache_write_tokens)),
                    stream.cost_usd,
                    diagnostics
                ])
            })
            .map_err(self.error("write"))?;
        Ok(())
    }

    /// The task ended in this process with `status` (`succeeded`, `failed` or
    /// `interrupted`), its last attempt with `exit_code` and `reason`.
    pub fn finished(
        &mut self,
        automation: &str,
        task_id: &str,
        status: Status,
        exit_code: Option<i32>,
        reason: &str,
    ) -> Result<(), LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        const SQL: &str = concat!(
            "UPDATE tasks SET status = ?3, exit_code = ?4, reason = ?5, updated_at = ",
            now!(),
            ", ended_at = ",
            now!(),
            " WHERE automation = ?1 AND task_id = ?2"
        );
        self.connection
            .prepare_cached(SQL)
            .and_then(|mut statement| {
                statement.execute(params![
                    automation,
                    task_id,
                    status.as_str(),
                    exit_code,
                    reason
                ])
            })
            .map_err(self.error("write"))?;
        // Its last attempt, when nothing ended it before (an `attempt_ended` did).
        self.attempt_ended(automation, task_id, status, exit_code, reason, None)
    }

    /// The tasks of `automation` that `tasks retry` asked to dispatch again, oldest
    /// request first; read afresh.
    pub fn requested(&mut self, automation: &str) -> Result<Vec<Requested>, LedgerError> {
        self.requested_where(automation, "retry = 1")
    }

    /// The tasks of `automation` that a run dispatches again at its start: those
    /// `tasks retry` asked for, and every one not finished (`interrupted`: the host's
    /// shutdown stopped it or its wait for a retry, its agent or worktree could not
    /// start, or its host died without recording its end); oldest change first,
    /// read afresh.
    pub fn unfinished(&mut self, automation: &str) -> Result<Vec<Requested>, LedgerError> {
        self.requested_where(automation, "(retry = 1 OR status = 'interrupted')")
    }

    fn requested_where(
        &mut self,
        automation: &str,
        condition: &'static str,
    ) -> Result<Vec<Requested>, LedgerError> {
        self.end_snapshot().map_err(self.error("read"))?;
        let sql = format!(
            "SELECT task_id, pairs, attempts FROM tasks WHERE automation = ?1 AND {condition}
             ORDER BY updated_at"
        );
        let mut statement = self
            .connection
            .prepare_cached(&sql)
            .map_err(self.error("read"))?;
        let rows: Vec<Requested> = statement
            .query_map(params![automation], |row| {
                Ok(Requested {
                    task_id: row.get(0)?,
                    pairs: row.get(1)?,
                    attempts: row.get(2)?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|source| classify(&self.path, "read", source))?;
        Ok(rows)
    }

    /// How many attempts of the task the ledger counts, over every run (0 without a
    /// row): its next attempt's number is this plus one. Read as
    /// [`decide`](Self::decide) reads (in the current snapshot, when reading in
    /// snapshots).
    pub fn attempts_started(
        &mut self,
        automation: &str,
        task_id: &str,
    ) -> Result<u32, LedgerError> {
        self.in_snapshot().map_err(self.error("read"))?;
        self.connection
            .prepare_cached("SELECT attempts FROM tasks WHERE automation = ?1 AND task_id = ?2")
            .and_then(|mut statement| {
                statement
                    .query_row(params![automation, task_id], |row| row.get::<_, u32>(0))
                    .optional()
            })
            .map(Option::unwrap_or_default)
            .map_err(self.error("read"))
    }

    /// The most recently changed rows matching `filter`, newest first, at most
    /// `limit`.
    pub fn list(&self, filter: &Filter, limit: u32) -> Result<Vec<TaskRecord>, LedgerError> {
        let mut sql = format!("SELECT {COLUMNS} FROM tasks");
        let mut conditions = Vec::new();
        let mut values: Vec<&dyn rusqlite::ToSql> = Vec::new();
        if let Some(automation) = &filter.automation {
            values.push(automation);
            conditions.push(format!("automation = ?{}", values.len()));
        }
        let status = filter.status.map(Status::as_str);
        if let Some(status) = &status {
            values.push(status);
            conditions.push(format!("status = ?{}", values.len()));
        }
        if !conditions.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&conditions.join(" AND "));
        }
        values.push(&limit);
        sql.push_str(&format!(
            // Each index on `updated_at` ends with the row's `id`: this order is the
            // index's, read backwards, so the first page costs as much as a plain
            // `SELECT … LIMIT`.
            " ORDER BY updated_at DESC, id DESC LIMIT ?{}",
            values.len()
        ));
        self.query(&sql, values.as_slice())
    }

    /// The rows whose task id starts with `prefix` (lowercase hex), of `automation`
    /// when given; at most `limit`.
    pub fn find(
        &self,
        prefix: &str,
        automation: Option<&str>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, LedgerError> {
        // Every task id is lowercase hex: all ids with the prefix sort between it and
        // the prefix followed by `g`.
        let upper = format!("{prefix}g");
        match automation {
            Some(automation) => self.query(
                &format!(
                    "SELECT {COLUMNS} FROM tasks WHERE task_id >= ?1 AND task_id < ?2
                     AND automation = ?3 ORDER BY task_id, automation LIMIT ?4"
                ),
                params![prefix, upper, automation, limit],
            ),
            None => self.query(
                &format!(
                    "SELECT {COLUMNS} FROM tasks WHERE task_id >= ?1 AND task_id < ?2
                     ORDER BY task_id, automation LIMIT ?3"
                ),
                params![prefix, upper, limit],
            ),
        }
    }

    /// Every row of `automation` (`None`: of every automation) with `status`.
    pub fn keys(
        &self,
        automation: Option<&str>,
        status: Option<Status>,
    ) -> Result<Vec<(String, String, Status)>, LedgerError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT automation, task_id, status FROM tasks
                 WHERE (?1 IS NULL OR automation = ?1) AND (?2 IS NULL OR status = ?2)
                 ORDER BY automation, task_id",
            )
            .map_err(self.error("read"))?;
        let rows: Vec<(String, String, String)> = statement
            .query_map(params![automation, status.map(Status::as_str)], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .and_then(Iterator::collect)
            .map_err(self.error("read"))?;
        rows.into_iter()
            .map(|(automation, task_id, status)| Ok((automation, task_id, self.status(&status)?)))
            .collect()
    }

    /// Asks the next `run` to dispatch these tasks again from their stored pairs;
    /// returns how many rows changed. One transaction.
    pub fn request_retry(&mut self, keys: &[(String, String)]) -> Result<usize, LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        self.each_key(
            keys,
            &[concat!(
                "UPDATE tasks SET retry = 1, updated_at = ",
                now!(),
                " WHERE automation = ?1 AND task_id = ?2"
            )],
        )
    }

    /// [`request_retry`](Self::request_retry), and the next attempt starts its agent's
    /// session over rather than resume it (`tasks retry --fresh`).
    pub fn request_fresh_retry(&mut self, keys: &[(String, String)]) -> Result<usize, LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        self.each_key(
            keys,
            &[concat!(
                "UPDATE tasks SET retry = 1, fresh = 1, updated_at = ",
                now!(),
                " WHERE automation = ?1 AND task_id = ?2"
            )],
        )
    }

    /// Where the task's next attempt could go on from: its last attempt (over every
    /// run), with the provider and session it ran and how it ended, and whether a
    /// fresh start was asked for. `None` when the task has no attempt. Read afresh.
    pub fn resume_point(
        &mut self,
        automation: &str,
        task_id: &str,
    ) -> Result<Option<ResumePoint>, LedgerError> {
        self.end_snapshot().map_err(self.error("read"))?;
        self.connection
            .prepare_cached(
                "SELECT a.attempt, a.provider, a.session_id, a.reason, a.ended_at IS NULL,
                        a.workspace, t.fresh
                 FROM attempts a JOIN tasks t
                   ON t.automation = a.automation AND t.task_id = a.task_id
                 WHERE a.automation = ?1 AND a.task_id = ?2
                 ORDER BY a.attempt DESC LIMIT 1",
            )
            .and_then(|mut statement| {
                statement
                    .query_row(params![automation, task_id], |row| {
                        Ok(ResumePoint {
                            attempt: row.get(0)?,
                            provider: row.get(1)?,
                            session_id: row.get(2)?,
                            reason: row.get(3)?,
                            open: row.get(4)?,
                            workspace: row.get(5)?,
                            fresh: row.get::<_, i64>(6)? != 0,
                        })
                    })
                    .optional()
            })
            .map_err(self.error("read"))
    }

    /// Whether the ledger has a row for the task, read afresh (not from a snapshot):
    /// for a running host to tell a task someone forgot (`tasks forget`) from one it
    /// finished itself, once its own changes are committed.
    pub fn has_row(&mut self, automation: &str, task_id: &str) -> Result<bool, LedgerError> {
        self.end_snapshot().map_err(self.error("read"))?;
        self.connection
            .prepare_cached("SELECT 1 FROM tasks WHERE automation = ?1 AND task_id = ?2")
            .and_then(|mut statement| statement.exists(params![automation, task_id]))
            .map_err(self.error("read"))
    }

    /// Marks `interrupted`, with reason [`UNRECORDED`], every `running` row whose agent
    /// does not run any more ([`AgentProcess::is_alive`]), and returns their keys
    /// (automation, task id). For a run's start, under the run lock and once an
    /// earlier host's watchdog has stopped that host's agents: every `running` row then
    /// was left by a host that ended without recording how its task ended (it was
    /// killed, or its disk was full), so `tasks list` would show it running for ever
    /// when the item is not handed over again. The rules treat both alike (dispatched
    /// again when polled); a row whose agent still runs stays `running`
    /// ([`Decision::Wait`]). The rows are written in one transaction.
    pub fn mark_unrecorded(&mut self) -> Result<Vec<(String, String)>, LedgerError> {
        self.end_snapshot().map_err(self.error("read"))?;
        let running: Vec<(String, String, Option<AgentProcess>)> = self
            .connection
            .prepare(
                "SELECT automation, task_id, agent_pid, agent_start FROM tasks
                 WHERE status = 'running'",
            )
            .and_then(|mut statement| {
                statement
                    .query_map([], |row| {
                        Ok((row.get(0)?, row.get(1)?, agent(row.get(2)?, row.get(3)?)))
                    })?
                    .collect()
            })
            .map_err(self.error("read"))?;
        let ended: Vec<(String, String)> = running
            .into_iter()
            .filter(|(_, _, agent)| !agent.is_some_and(|agent| agent.is_alive()))
            .map(|(automation, task_id, _)| (automation, task_id))
            .collect();
        if !ended.is_empty() {
            // Still `running` when written: under the run lock, `tasks retry` and
            // `forget` leave such rows alone, and nothing else writes them.
            self.each_key(
                &ended,
                &[
                    concat!(
                        "UPDATE tasks SET status = 'interrupted', reason = 'unrecorded', \
                         updated_at = ",
                        now!(),
                        " WHERE automation = ?1 AND task_id = ?2 AND status = 'running'"
                    ),
                    concat!(
                        "UPDATE attempts SET outcome = 'interrupted', reason = 'unrecorded', \
                         ended_at = ",
                        now!(),
                        " WHERE automation = ?1 AND task_id = ?2 AND ended_at IS NULL"
                    ),
                ],
            )?;
        }
        Ok(ended)
    }

    /// Forgets these tasks (deletes their rows); returns how many were deleted. One
    /// transaction.
    pub fn forget(&mut self, keys: &[(String, String)]) -> Result<usize, LedgerError> {
        self.end_snapshot().map_err(self.error("write"))?;
        self.each_key(
            keys,
            &[
                "DELETE FROM tasks WHERE automation = ?1 AND task_id = ?2",
                "DELETE FROM attempts WHERE automation = ?1 AND task_id = ?2",
            ],
        )
    }

    /// Runs each statement of `sql` for every key, in one transaction; returns how
    /// many rows the first statement changed.
    fn each_key(&mut self, keys: &[(String, String)], sql: &[&str]) -> Result<usize, LedgerError> {
        let path = self.path.clone();
        let error = |source| classify(&path, "write", source);
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(error)?;
        let mut changed = 0;
        for (at, sql) in sql.iter().enumerate() {
            let mut statement = transaction.prepare(sql).map_err(error)?;
            for (automation, task_id) in keys {
                let rows = statement
                    .execute(params![automation, task_id])
                    .map_err(error)?;
                if at == 0 {
                    changed += rows;
                }
            }
        }
        transaction.commit().map_err(error)?;
        Ok(changed)
    }

    fn query(
        &self,
        sql: &str,
        values: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<TaskRecord>, LedgerError> {
        let mut statement = self.connection.prepare(sql).map_err(self.error("read"))?;
        let rows: Vec<RawRecord> = statement
            .query_map(values, RawRecord::read)
            .and_then(Iterator::collect)
            .map_err(self.error("read"))?;
        rows.into_iter().map(|raw| raw.into_record(self)).collect()
    }
}

/// A row as read, before its status and pairs are checked.
struct RawRecord {
    automation: String,
    task_id: String,
    pairs: String,
    status: String,
    attempts: i64,
    exit_code: Option<i64>,
    reason: Option<String>,
    workspace: Option<String>,
    host_pid: Option<i64>,
    agent_pid: Option<i64>,
    retry: i64,
    created_at: String,
    updated_at: String,
    duration_seconds: Option<f64>,
}

impl RawRecord {
    fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawRecord> {
        Ok(RawRecord {
            automation: row.get(0)?,
            task_id: row.get(1)?,
            pairs: row.get(2)?,
            status: row.get(3)?,
            attempts: row.get(4)?,
            exit_code: row.get(5)?,
            reason: row.get(6)?,
            workspace: row.get(7)?,
            host_pid: row.get(8)?,
            agent_pid: row.get(9)?,
            retry: row.get(10)?,
            created_at: row.get(11)?,
            updated_at: row.get(12)?,
            duration_seconds: row.get(13)?,
        })
    }

    fn into_record(self, ledger: &Ledger) -> Result<TaskRecord, LedgerError> {
        let values = serde_json::from_str(&self.pairs).map_err(|err| LedgerError::BadRow {
            path: ledger.path.clone(),
            what: format!("the pairs of task {} are not JSON ({err})", self.task_id),
        })?;
        Ok(TaskRecord {
            status: ledger.status(&self.status)?,
            automation: self.automation,
            task_id: self.task_id,
            values,
            attempts: u32::try_from(self.attempts).unwrap_or(0),
            exit_code: self.exit_code.and_then(|code| i32::try_from(code).ok()),
            reason: self.reason,
            workspace: self.workspace,
            host_pid: self.host_pid.and_then(|pid| u32::try_from(pid).ok()),
            agent_pid: self.agent_pid.and_then(|pid| u32::try_from(pid).ok()),
            retry_requested: self.retry != 0,
            created_at: self.created_at,
            updated_at: self.updated_at,
            duration_seconds: self.duration_seconds.filter(|seconds| *seconds >= 0.0),
        })
    }
}

/// The recorded agent of a row.
fn agent(pid: Option<i64>, start: Option<i64>) -> Option<AgentProcess> {
    let pid = u32::try_from(pid?).ok()?;
    Some(AgentProcess {
        pid,
        start: start.and_then(|start| u64::try_from(start).ok()),
    })
}

/// The rule of [`Ledger::decide`], apart from the database: `alive` tells whether a
/// recorded agent still runs.
pub fn decide(
    status: Status,
    agent: Option<AgentProcess>,
    alive: impl Fn(&AgentProcess) -> bool,
) -> Decision {
    match status {
        Status::Succeeded | Status::Failed => Decision::Skip(status),
        Status::Interrupted => Decision::Dispatch,
        Status::Running => match agent {
            Some(agent) if alive(&agent) => Decision::Wait(agent),
            _ => Decision::Dispatch,
        },
    }
}

/// `source` without the `: PATH` that SQLite's "cannot open" message ends with (the
/// ledger's error names the file already).
fn without_path(source: rusqlite::Error, path: &Path) -> rusqlite::Error {
    match source {
        rusqlite::Error::SqliteFailure(code, Some(message)) => {
            let suffix = format!(": {}", path.display());
            let message = message
                .strip_suffix(&suffix)
                .map_or_else(|| message.clone(), str::to_owned);
            rusqlite::Error::SqliteFailure(code, Some(message))
        }
        other => other,
    }
}

/// An SQLite error as a ledger error: a damaged or foreign file is `Corrupt`.
fn classify(path: &Path, action: &'static str, source: rusqlite::Error) -> LedgerError {
    use rusqlite::ffi::ErrorCode;
    match source.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => LedgerError::Corrupt {
            path: path.to_owned(),
            source,
        },
        _ => LedgerError::Sql {
            action,
            path: path.to_owned(),
            source,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIRS: &str = r#"[{"key":"issue","value":"1"}]"#;

    fn id(n: u8) -> String {
        format!("{n:02x}").repeat(32)
    }

    #[test]
    fn a_ledger_that_cannot_be_opened_is_named_once_and_a_folder_is_said_to_be_one() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("ledger.sqlite");
        std::fs::create_dir(&folder).unwrap();
        let error = Ledger::open(&folder).err().unwrap();
        assert!(matches!(error, LedgerError::NotAFile { .. }), "{error}");
        assert!(
            error.to_string().contains("is a folder, not a file"),
            "{error}"
        );

        // SQLite's own message ends with the path; the error names it once.
        let missing = dir.path().join("no/such/folder/ledger.sqlite");
        let error = Ledger::open(&missing).err().unwrap().to_string();
        assert_eq!(
            error.matches(&missing.display().to_string()).count(),
            1,
            "{error}"
        );
        assert!(error.contains("unable to open database file"), "{error}");
    }

    #[test]
    fn a_reader_in_snapshots_sees_other_commits_after_its_age_and_requests_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut writer = Ledger::open(&path).unwrap();
        let mut reader = Ledger::open(&path).unwrap();
        let age = Duration::from_millis(300);
        reader.read_in_snapshots(age);
        let first = Instant::now();
        assert_eq!(reader.decide("fix", &id(1)).unwrap(), Decision::Dispatch);
        writer
            .attempt_started("fix", &id(1), PAIRS, "/work", 1)
            .unwrap();
        writer
            .finished("fix", &id(1), Status::Succeeded, Some(0), "exit")
            .unwrap();
        if first.elapsed() < age / 2 {
            // Still the first snapshot: the commit is not seen yet.
            assert_eq!(reader.decide("fix", &id(1)).unwrap(), Decision::Dispatch);
        }
        reader.end_old_snapshot().unwrap();
        if first.elapsed() < age / 2 {
            assert!(
                reader.snapshot_since.is_some(),
                "a young snapshot stays open"
            );
        }
        std::thread::sleep(age);
        reader.end_old_snapshot().unwrap();
        assert!(
            reader.snapshot_since.is_none(),
            "an old one is ended while idle"
        );
        assert_eq!(
            reader.decide("fix", &id(1)).unwrap(),
            Decision::Skip(Status::Succeeded)
        );
        writer.request_retry(&[("fix".to_owned(), id(1))]).unwrap();
        let requested = reader.requested("fix").unwrap();
        assert_eq!(requested.len(), 1, "requested reads anew");
        // A write through the reader ends its snapshot (open again by `decide`)
        // instead of staying uncommitted in it.
        reader.decide("fix", &id(2)).unwrap();
        reader.forget(&[("fix".to_owned(), id(1))]).unwrap();
        assert_eq!(writer.decide("fix", &id(1)).unwrap(), Decision::Dispatch);
    }

    #[test]
    fn the_last_connection_to_close_leaves_the_file_self_contained() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let wal = dir.path().join("ledger.sqlite-wal");
        let mut ledger = Ledger::open(&path).unwrap();
        let mut other = Ledger::open(&path).unwrap();
        ledger
            .attempt_started("fix", &id(3), PAIRS, "/work", 1)
            .unwrap();
        ledger
            .finished("fix", &id(3), Status::Failed, Some(1), "exit")
            .unwrap();
        ledger.close().unwrap();
        // Another connection is open: the log stays for it.
        assert!(wal.exists());
        assert_eq!(
            other.decide("fix", &id(3)).unwrap(),
            Decision::Skip(Status::Failed)
        );
        other.close().unwrap();
        assert!(
            !wal.exists(),
            "the last close checkpoints and deletes the log"
        );
        // The file alone, copied elsewhere, holds the row.
        let copy = tempfile::tempdir().unwrap();
        std::fs::copy(&path, copy.path().join("ledger.sqlite")).unwrap();
        let mut copied = Ledger::open(&copy.path().join("ledger.sqlite")).unwrap();
        assert_eq!(
            copied.decide("fix", &id(3)).unwrap(),
            Decision::Skip(Status::Failed)
        );
    }

    #[test]
    fn a_crash_leaves_the_log_and_the_next_opener_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut ledger = Ledger::open(&path).unwrap();
        ledger
            .attempt_started("fix", &id(3), PAIRS, "/work", 1)
            .unwrap();
        // A process that dies closes nothing: as if it had been killed.
        std::mem::forget(ledger);
        assert!(dir.path().join("ledger.sqlite-wal").exists());
        let reopened = Ledger::open(&path).unwrap();
        let rows = reopened.find(&id(3), Some("fix"), 2).unwrap();
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0].status, Status::Running);
    }

    #[test]
    fn the_rule_of_decide() {
        let agent = AgentProcess {
            pid: 99,
            start: None,
        };
        let alive = |_: &AgentProcess| true;
        let dead = |_: &AgentProcess| false;
        assert_eq!(
            decide(Status::Succeeded, None, alive),
            Decision::Skip(Status::Succeeded)
        );
        assert_eq!(
            decide(Status::Failed, Some(agent), alive),
            Decision::Skip(Status::Failed)
        );
        assert_eq!(
            decide(Status::Interrupted, Some(agent), alive),
            Decision::Dispatch
        );
        assert_eq!(
            decide(Status::Running, Some(agent), alive),
            Decision::Wait(agent)
        );
        assert_eq!(
            decide(Status::Running, Some(agent), dead),
            Decision::Dispatch
        );
        assert_eq!(decide(Status::Running, None, alive), Decision::Dispatch);
    }

    #[test]
    fn a_row_goes_through_its_states_and_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let mut ledger = Ledger::open(&path).unwrap();
        ledger.attempt_started("a", &id(1), PAIRS, "/w", 7).unwrap();
        ledger.attempt_started("a", &id(1), PAIRS, "/w", 7).unwrap();
        ledger
            .agent_started(
                "a",
                &id(1),
                AgentProcess {
                    pid: 1234,
                    start: Some(5),
                },
            )
            .unwrap();
        ledger
            .finished("a", &id(1), Status::Failed, Some(3), "exit")
            .unwrap();
        ledger.attempt_started("b", &id(2), PAIRS, "/w", 7).unwrap();
        ledger
            .finished("b", &id(2), Status::Interrupted, None, "interrupted")
            .unwrap();
        drop(ledger);

        let mut ledger = Ledger::open(&path).unwrap();
        assert_eq!(
            ledger.decide("a", &id(1)).unwrap(),
            Decision::Skip(Status::Failed)
        );
        assert_eq!(ledger.decide("b", &id(2)).unwrap(), Decision::Dispatch);
        assert_eq!(ledger.decide("b", &id(1)).unwrap(), Decision::Dispatch);
        let rows = ledger.list(&Filter::default(), 10).unwrap();
        assert_eq!(rows.len(), 2);
        let a = rows.iter().find(|row| row.automation == "a").unwrap();
        assert_eq!(
            (a.status, a.attempts, a.exit_code, a.agent_pid),
            (Status::Failed, 2, Some(3), Some(1234))
        );
        assert_eq!(
            a.values,
            serde_json::json!([{"key": "issue", "value": "1"}])
        );
        // Stored as milliseconds, shown as ISO 8601 UTC with milliseconds, today.
        for time in [&a.created_at, &a.updated_at] {
            let shape: String = time
                .chars()
                .map(|c| if c.is_ascii_digit() { '0' } else { c })
                .collect();
            assert_eq!(shape, "0000-00-00T00:00:00.000Z", "{time}");
        }
        assert!(a.created_at <= a.updated_at);
        let today = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            / 86_400;
        let year = 1970 + today / 366;
        assert!(
            a.created_at[..4].parse::<u64>().unwrap() >= year,
            "{}",
            a.created_at
        );
        let failed = Filter {
            status: Some(Status::Failed),
            ..Filter::default()
        };
        assert_eq!(ledger.list(&failed, 10).unwrap().len(), 1);

        // Not finished, not asked for: only a run's start dispatches it again.
        let b = Requested {
            task_id: id(2),
            pairs: PAIRS.to_owned(),
            attempts: 1,
        };
        assert!(ledger.requested("b").unwrap().is_empty());
        assert_eq!(ledger.unfinished("b").unwrap(), std::slice::from_ref(&b));
        assert!(ledger.unfinished("a").unwrap().is_empty(), "a failed task");
        assert_eq!(
            (
                ledger.attempts_started("a", &id(1)).unwrap(),
                ledger.attempts_started("a", &id(9)).unwrap()
            ),
            (2, 0)
        );

        let keys = vec![("a".to_owned(), id(1))];
        assert_eq!(ledger.request_retry(&keys).unwrap(), 1);
        let requested = ledger.requested("a").unwrap();
        let a = Requested {
            task_id: id(1),
            pairs: PAIRS.to_owned(),
            attempts: 2,
        };
        assert_eq!(requested, std::slice::from_ref(&a));
        assert_eq!(ledger.unfinished("a").unwrap(), [a], "asked for again");
        ledger.attempt_started("a", &id(1), PAIRS, "/w", 8).unwrap();
        assert!(
            ledger.requested("a").unwrap().is_empty(),
            "a new attempt clears it"
        );
        assert!(ledger.unfinished("a").unwrap().is_empty(), "running");
        ledger
            .finished("a", &id(1), Status::Interrupted, None, "interrupted")
            .unwrap();
        assert_eq!(
            ledger.unfinished("a").unwrap()[0].attempts,
            3,
            "interrupted after its retry: dispatched again by the next run"
        );
        assert!(ledger.requested("a").unwrap().is_empty());
        assert_eq!(ledger.find(&id(1)[..5], None, 10).unwrap().len(), 1);
        assert_eq!(ledger.find("0", None, 10).unwrap().len(), 2);
        assert_eq!(ledger.forget(&keys).unwrap(), 1);
        assert_eq!(ledger.decide("a", &id(1)).unwrap(), Decision::Dispatch);
    }

    /// Version 2 records the last attempt's duration; a version 1 ledger is migrated
    /// and its rows have none until a new attempt ends.
    #[test]
    fn the_last_attempt_has_a_duration_and_a_version_1_ledger_is_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let connection = Connection::open(&path).unwrap();
        connection.execute_batch(MIGRATIONS[0]).unwrap();
        connection
            .execute_batch(
                "INSERT INTO tasks (automation, task_id, pairs, status, attempts, created_at,
                                    updated_at)
                 VALUES ('a', 'old', '[]', 'succeeded', 1, 0, 1000)",
            )
            .unwrap();
        connection
            .pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        connection.pragma_update(None, "user_version", 1).unwrap();
        drop(connection);

        let mut ledger = Ledger::open(&path).unwrap();
        let old = &ledger.find("old", None, 2).unwrap()[0];
        assert_eq!(
            (old.status, old.duration_seconds),
            (Status::Succeeded, None)
        );
        ledger.attempt_started("a", &id(1), PAIRS, "/w", 7).unwrap();
        assert_eq!(
            ledger.find(&id(1), None, 2).unwrap()[0].duration_seconds,
            None
        );
        std::thread::sleep(Duration::from_millis(30));
        ledger
            .finished("a", &id(1), Status::Succeeded, Some(0), "exit")
            .unwrap();
        // A retry request changes `updated_at`, not the duration.
        std::thread::sleep(Duration::from_millis(500));
        ledger.request_retry(&[("a".to_owned(), id(1))]).unwrap();
        let row = &ledger.find(&id(1), None, 2).unwrap()[0];
        let seconds = row.duration_seconds.unwrap();
        assert!((0.03..0.5).contains(&seconds), "{seconds}");
        ledger.attempt_started("a", &id(1), PAIRS, "/w", 7).unwrap();
        assert_eq!(
            ledger.find(&id(1), None, 2).unwrap()[0].duration_seconds,
            None,
            "a new attempt runs"
        );
    }

    /// A `sleep 30` leading a process group of its own, as an agent does, and its
    /// record.
    #[cfg(unix)]
    fn agent_sleeping() -> (std::process::Child, AgentProcess) {
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let agent = AgentProcess {
            pid: child.id(),
            start: curupira_process::watchdog::process_start(child.id()),
        };
        (child, agent)
    }

    #[cfg(unix)]
    #[test]
    fn a_running_row_waits_only_for_a_live_agent() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::open(&dir.path().join(FILE_NAME)).unwrap();
        ledger.attempt_started("a", &id(1), PAIRS, "/w", 7).unwrap();
        assert_eq!(ledger.decide("a", &id(1)).unwrap(), Decision::Dispatch);
        let (mut child, agent) = agent_sleeping();
        assert_eq!(agent.start.is_some(), cfg!(target_os = "linux"));
        ledger.agent_started("a", &id(1), agent).unwrap();
        assert_eq!(ledger.decide("a", &id(1)).unwrap(), Decision::Wait(agent));
        if let Some(start) = agent.start {
            let stranger = AgentProcess {
                start: Some(start + 1),
                ..agent
            };
            assert!(
                !stranger.is_alive(),
                "a pid reused by another process is not the agent"
            );
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(ledger.decide("a", &id(1)).unwrap(), Decision::Dispatch);
    }

    #[cfg(unix)]
    #[test]
    fn running_rows_whose_agent_is_gone_are_marked_unrecorded_and_one_whose_agent_runs_kept() {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::open(&dir.path().join(FILE_NAME)).unwrap();
        // 1: no agent yet; 2: an agent that ended; 3: an agent that runs; 4: finished.
        for n in 1..=4 {
            ledger.attempt_started("a", &id(n), PAIRS, "/w", 7).unwrap();
        }
        let mut ended = std::process::Command::new("true")
            .process_group(0)
            .spawn()
            .unwrap();
        let ended_pid = ended.id();
        ended.wait().unwrap();
        ledger
            .agent_started(
                "a",
                &id(2),
                AgentProcess {
                    pid: ended_pid,
                    start: None,
                },
            )
            .unwrap();
        let (mut running, live) = agent_sleeping();
        ledger.agent_started("a", &id(3), live).unwrap();
        ledger
            .finished("a", &id(4), Status::Succeeded, Some(0), "exit")
            .unwrap();

        let marked = ledger.mark_unrecorded().unwrap();
        running.kill().unwrap();
        running.wait().unwrap();
        assert_eq!(marked, [("a".to_owned(), id(1)), ("a".to_owned(), id(2))]);
        let row = |n: u8| {
            let rows = ledger.find(&id(n), Some("a"), 2).unwrap();
            (rows[0].status, rows[0].reason.clone())
        };
        let unrecorded = (Status::Interrupted, Some(UNRECORDED.to_owned()));
        assert_eq!(row(1), unrecorded);
        assert_eq!(row(2), unrecorded);
        assert_eq!(row(3), (Status::Running, None), "its agent still ran");
        assert_eq!(row(4), (Status::Succeeded, Some("exit".to_owned())));
        assert_eq!(ledger.decide("a", &id(1)).unwrap(), Decision::Dispatch);
        // Now that the agent of 3 ended, it is marked too; nothing twice.
        let marked = ledger.mark_unrecorded().unwrap();
        assert_eq!(marked, [("a".to_owned(), id(3))]);
    }

    #[test]
    fn processes_creating_one_ledger_at_once_all_open_it() {
        // A `curupira tasks` starting beside the first `run` of a config: each opener
        // finds the file new, or made, never half made.
        const OPENERS: usize = 4;
        let dir = tempfile::tempdir().unwrap();
        for round in 0..60 {
            let path = dir.path().join(format!("ledger-{round}.sqlite"));
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(OPENERS));
            let openers: Vec<_> = (0..OPENERS)
                .map(|_| {
                    let path = path.clone();
                    let barrier = std::sync::Arc::clone(&barrier);
                    std::thread::spawn(move || {
                        barrier.wait();
                        Ledger::open(&path)
                            .map(|_| ())
                            .map_err(|error| error.to_string())
                    })
                })
                .collect();
            for opener in openers {
                opener.join().unwrap().unwrap();
            }
        }
    }

    #[test]
    fn a_full_disk_is_told_from_other_failures() {
        let full = LedgerError::disk_full("write", "state/ledger.sqlite");
        assert!(full.is_disk_full());
        assert_eq!(
            full.to_string(),
            "cannot write the task ledger `state/ledger.sqlite`: database or disk is full"
        );
        let folder = LedgerError::NotAFile {
            path: "state".into(),
        };
        assert!(!folder.is_disk_full());
    }

    #[test]
    fn a_damaged_or_foreign_file_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("garbage.sqlite");
        std::fs::write(&garbage, vec![b'x'; 8192]).unwrap();
        let error = Ledger::open(&garbage).unwrap_err();
        assert!(matches!(error, LedgerError::Corrupt { .. }), "{error:?}");
        assert!(error.to_string().contains("garbage.sqlite"), "{error}");
        assert_eq!(
            std::fs::read(&garbage).unwrap(),
            vec![b'x'; 8192],
            "left as it was"
        );

        let foreign = dir.path().join("other.sqlite");
        let connection = Connection::open(&foreign).unwrap();
        connection.execute_batch("CREATE TABLE t (x)").unwrap();
        drop(connection);
        let error = Ledger::open(&foreign).unwrap_err();
        assert!(matches!(error, LedgerError::Foreign { .. }), "{error:?}");

        let newer = dir.path().join("newer.sqlite");
        drop(Ledger::open(&newer).unwrap());
        let connection = Connection::open(&newer).unwrap();
        connection.pragma_update(None, "user_version", 99).unwrap();
        drop(connection);
        let error = Ledger::open(&newer).unwrap_err().to_string();
        assert!(error.contains("schema version 99"), "{error}");
        assert!(
            Ledger::open_existing(&dir.path().join("none"))
                .unwrap()
                .is_none()
        );
    }
}

/// The README's example, run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
