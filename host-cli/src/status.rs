//! `curupira status`: what a host is doing, from what it publishes and what its ledger
//! keeps, without ever blocking it.
//!
//! [`collect`] reads three things, none of which a running host waits for:
//!
//! - **`run.lock`** ([`curupira_workspace::state::RunLock::holder`]): whether a host
//!   holds the state folder now, and its pid. This, not the status file, says whether
//!   a host runs: the kernel releases the lock however the host ends (SIGKILL too).
//! - **`status.json`** ([`curupira_orchestrator::status`]): what the host published,
//!   at most a second old: what runs, what waits for a retry, each automation's rounds.
//! - **The ledger** (its attempt history): the attempts that ended in the last hour
//!   and day by outcome, the last failures, and, when no host runs, the attempts a
//!   host that died left open.
//!
//! The document ([`Status`], `--format json`) is versioned ([`VERSION`]) and
//! documented in `docs/HOST.md`; the HTTP API serves the same one.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use curupira_ledger::{LedgerError, OutcomeCounts, TaskAttempt, TasksBackend};
use curupira_orchestrator::status::{self as live, AutomationState, Published, StatusError};
use curupira_workspace::state::{Holder, RUN_LOCK, RunLock, STATUS_FILE};
use serde::Serialize;

use crate::events::{duration_text, short_id};
use crate::format::{aligned, one_line, time_text};

/// The version of the [`Status`] document.
pub const VERSION: u32 = 1;

/// How many of the last failures the document lists.
pub const LAST_FAILURES: u32 = 10;

/// The `curupira status` document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// [`VERSION`].
    pub version: u32,
    /// When it was made.
    pub generated_at: String,
    /// The state folder it describes.
    pub state_dir: String,
    /// The host.
    pub host: Host,
    /// What runs now, the oldest first (empty unless a host runs).
    pub running: Vec<Running>,
    /// What waits for a retry, the soonest first (empty unless a host runs).
    pub retrying: Vec<Retrying>,
    /// Each automation of the (last) host's run.
    pub automations: Vec<AutomationState>,
    /// When no host runs: the attempts the ledger still has open, left by a host that
    /// ended without recording how they ended; the next `run` records them as
    /// interrupted (`unrecorded`).
    pub left_open: Vec<TaskAttempt>,
    /// Attempts that ended in the last hour and day, by outcome; `None` without a
    /// ledger. A task that failed three times counts three failed attempts here.
    pub counts: Option<Counts>,
    /// Tasks that ended in the last hour and day, each once, by how it ended;
    /// `None` without a ledger. A task that failed three times is one failed task.
    pub task_counts: Option<Counts>,
    /// The last attempts that failed or were interrupted, the newest first.
    pub last_failures: Vec<TaskAttempt>,
    /// The ledger's file, when there is one.
    pub ledger: Option<String>,
}

/// Whether a host holds the state folder, and what it said of itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Host {
    /// `running` (a host holds `run.lock`), `gone` (none does, and the last one ended
    /// without saying so: killed), `stopped` (none does; the last one ended), or
    /// `none` (no host ever published here).
    pub state: HostState,
    /// Its pid (the running one's, or the last one's).
    pub pid: Option<u32>,
    /// When it started.
    pub started_at: Option<String>,
    /// When it ended (`stopped` only).
    pub ended_at: Option<String>,
    /// Its name and version.
    pub version: Option<String>,
    /// The configuration it runs (ran).
    pub config: Option<String>,
    /// When it last published its state (`status.json`).
    pub published_at: Option<String>,
    /// Whether it is stopping (no new task starts).
    pub stopping: bool,
}

/// [`Host::state`]: the orchestrator's rule, shared with the dashboard.
pub use curupira_orchestrator::status::HostState;

/// An attempt that runs now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Running {
    /// What the host published of it.
    #[serde(flatten)]
    pub attempt: live::RunningAttempt,
    /// How long it has run, in seconds.
    pub elapsed_seconds: f64,
}

/// A task waiting for a retry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retrying {
    /// What the host published of it.
    #[serde(flatten)]
    pub retry: live::WaitingRetry,
    /// In how many seconds its attempt is due (0 when it is due already).
    pub due_in_seconds: f64,
}

/// Attempts, or tasks, by outcome over two windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Those that ended in the last hour.
    pub last_hour: OutcomeCounts,
    /// Those that ended in the last 24 hours.
    pub last_day: OutcomeCounts,
}

/// Why [`collect`] could not make the document.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// `run.lock` cannot be looked at.
    #[error("cannot look at `{}`: {source}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The ledger cannot be read.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// The document for the state folder `state_dir`, with its `ledger` (when there is
/// one), as of `now`. A status file that cannot be read is not an error: the
/// document says what the lock and the ledger say, and the reason is logged.
pub fn collect(
    state_dir: &Path,
    ledger: Option<(&Path, &dyn TasksBackend)>,
    now: SystemTime,
) -> Result<Status, CollectError> {
    let lock = state_dir.join(RUN_LOCK);
    let holder = RunLock::holder(&lock).map_err(|source| CollectError::Lock {
        path: lock.clone(),
        source,
    })?;
    let status_path = state_dir.join(STATUS_FILE);
    let published = live::read(&status_path).unwrap_or_else(|err: StatusError| {
        tracing::warn!("{err}");
        None
    });
    collect_from(state_dir, holder, published, ledger, now)
}

/// The document from what `collect` reads: `holder` of `run.lock`, the `published`
/// document, the `ledger`. The running host's own server passes its live state and
/// itself as the holder.
pub fn collect_from(
    state_dir: &Path,
    holder: Holder,
    published: Option<Published>,
    ledger: Option<(&Path, &dyn TasksBackend)>,
    now: SystemTime,
) -> Result<Status, CollectError> {
    let (state, published) = live::host_state(holder, published);
    let holder_pid = match holder {
        Holder::Held { pid } => pid,
        Holder::Free => None,
    };
    let host = host(state, holder_pid, published.as_ref());
    let mut running = Vec::new();
    let mut retrying = Vec::new();
    let mut automations = Vec::new();
    if let Some(doc) = published {
        automations = doc.automations;
        if state == HostState::Running {
            running = doc
                .running
                .into_iter()
                .map(|attempt| Running {
                    elapsed_seconds: live::seconds_since(&attempt.started_at, now),
                    attempt,
                })
                .collect();
            retrying = doc
                .retrying
                .into_iter()
                .map(|retry| Retrying {
                    due_in_seconds: -live::seconds_since(&retry.due_at, now).min(0.0),
                    retry,
                })
                .collect();
        } else {
            // No host: no round is coming.
            for automation in &mut automations {
                automation.round_running = false;
                automation.next_round_at = None;
            }
        }
    }
    let (left_open, counts, task_counts, last_failures) = match ledger {
        Some((_, ledger)) => {
            let (day, hour) = (Duration::from_secs(24 * 3600), Duration::from_secs(3600));
            let (last_day, last_hour) = ledger.outcome_counts(day, hour)?;
            let (tasks_day, tasks_hour) = ledger.task_counts(day, hour)?;
            (
                if state == HostState::Running {
                    Vec::new()
                } else {
                    ledger.open_attempts()?
                },
                Some(Counts {
                    last_hour,
                    last_day,
                }),
                Some(Counts {
                    last_hour: tasks_hour,
                    last_day: tasks_day,
                }),
                ledger.last_failures(LAST_FAILURES)?,
            )
        }
        None => (Vec::new(), None, None, Vec::new()),
    };
    Ok(Status {
        version: VERSION,
        generated_at: live::timestamp(now),
        state_dir: state_dir.display().to_string(),
        host,
        running,
        retrying,
        automations,
        left_open,
        counts,
        task_counts,
        last_failures,
        ledger: ledger.map(|(path, _)| path.display().to_string()),
    })
}

fn host(state: HostState, holder_pid: Option<u32>, doc: Option<&Published>) -> Host {
    Host {
        state,
        pid: doc.map(|doc| doc.host.pid).or(holder_pid),
        started_at: doc.map(|doc| doc.host.started_at.clone()),
        ended_at: doc.and_then(|doc| doc.ended_at.clone()),
        version: doc.map(|doc| doc.host.version.clone()),
        config: doc.and_then(|doc| doc.host.config.clone()),
        published_at: doc.map(|doc| doc.updated_at.clone()),
        stopping: doc.is_some_and(|doc| doc.stopping && doc.ended_at.is_none()),
    }
}

/// The document as people read it: the host, then one block per non-empty part.
pub fn human(status: &Status) -> String {
    let mut out = String::new();
    out.push_str(&host_line(status));
    out.push('\n');
    if !status.running.is_empty() {
        out.push_str(&format!("\nrunning ({}):\n", status.running.len()));
        let cells: Vec<[String; 6]> = status
            .running
            .iter()
            .map(|running| {
                let attempt = &running.attempt;
                [
                    short_id(&attempt.task_id).to_owned(),
                    one_line(&attempt.automation),
                    attempt.attempt.to_string(),
                    duration_text(running.elapsed_seconds),
                    attempt
                        .pid
                        .map_or_else(|| "-".to_owned(), |pid| pid.to_string()),
                    one_line(
                        attempt
                            .branch
                            .as_deref()
                            .or(attempt.workspace.as_deref())
                            .unwrap_or("-"),
                    ),
                ]
            })
            .collect();
        out.push_str(&aligned(
            &[
                "TASK",
                "AUTOMATION",
                "ATTEMPT",
                "ELAPSED",
                "PID",
                "BRANCH OR WORKSPACE",
            ],
            &cells,
            2,
        ));
    }
    if !status.retrying.is_empty() {
        out.push_str(&format!(
            "\nwaiting for a retry ({}):\n",
            status.retrying.len()
        ));
        let cells: Vec<[String; 5]> = status
            .retrying
            .iter()
            .map(|retrying| {
                let retry = &retrying.retry;
                [
                    short_id(&retry.task_id).to_owned(),
                    one_line(&retry.automation),
                    retry.attempt.to_string(),
                    format!(
                        "in {} ({})",
                        duration_text(retrying.due_in_seconds),
                        time_text(&retry.due_at)
                    ),
                    one_line(&why(&retry.reason, retry.exit_code, retry.error.as_deref())),
                ]
            })
            .collect();
        out.push_str(&aligned(
            &["TASK", "AUTOMATION", "ATTEMPT", "DUE (UTC)", "AFTER"],
            &cells,
            2,
        ));
    }
    if !status.automations.is_empty() {
        out.push_str("\nautomations:\n");
        let cells: Vec<[String; 4]> = status
            .automations
            .iter()
            .map(|automation| {
                let next = if !automation.active {
                    "stopped (failed)".to_owned()
                } else if automation.round_running {
                    "a round runs now".to_owned()
                } else {
                    automation
                        .next_round_at
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), time_text)
                };
                // A schedule's next tick (a `cron` automation).
                let next = match automation.next_tick.as_deref() {
                    Some(tick) => format!("{next} (next tick {})", time_text(tick)),
                    None => next,
                };
                [
                    one_line(&automation.name),
                    automation.rounds.to_string(),
                    automation
                        .last_round_ended_at
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), time_text),
                    next,
                ]
            })
            .collect();
        out.push_str(&aligned(
            &[
                "AUTOMATION",
                "ROUNDS",
                "LAST ROUND ENDED (UTC)",
                "NEXT ROUND (UTC)",
            ],
            &cells,
            1,
        ));
    }
    if !status.left_open.is_empty() {
        out.push_str(&format!(
            "\nleft open by a host that ended without recording them ({}; the next run \
             records them as interrupted and runs them again):\n",
            status.left_open.len()
        ));
        out.push_str(&attempts_table(&status.left_open, |a| {
            a.attempt.started_at.clone()
        }));
    }
    if let Some(counts) = &status.task_counts {
        out.push_str(&format!(
            "\ntasks ended: last hour {}; last day {}\n",
            counts_text(&counts.last_hour),
            counts_text(&counts.last_day)
        ));
    }
    match &status.counts {
        Some(counts) => out.push_str(&format!(
            "{}attempts ended: last hour {}; last day {}\n",
            if status.task_counts.is_some() {
                ""
            } else {
                "\n"
            },
            counts_text(&counts.last_hour),
            counts_text(&counts.last_day)
        )),
        None => out.push_str("\nno task ledger: no history of tasks or attempts\n"),
    }
    if !status.last_failures.is_empty() {
        out.push_str("\nlast failures:\n");
        out.push_str(&attempts_table(&status.last_failures, |a| {
            a.attempt.ended_at.clone().unwrap_or_default()
        }));
    }
    out
}

fn host_line(status: &Status) -> String {
    let host = &status.host;
    let pid = host
        .pid
        .map_or_else(|| "pid unknown".to_owned(), |pid| format!("pid {pid}"));
    let config = host
        .config
        .as_deref()
        .map_or_else(String::new, |config| format!(", config {config}"));
    let started = host
        .started_at
        .as_deref()
        .map_or_else(String::new, |at| format!(", started {} UTC", time_text(at)));
    match host.state {
        HostState::Running => format!(
            "host: running ({pid}{started}{config}){}",
            if host.stopping { "; stopping" } else { "" }
        ),
        HostState::Gone => format!(
            "host: gone: no host runs on `{}`; the last one ({pid}{started}) ended without \
             saying so (killed?); it last published at {} UTC",
            status.state_dir,
            host.published_at.as_deref().map_or("-", |at| at)
        ),
        HostState::Stopped => format!(
            "host: none runs on `{}`; the last one ({pid}{started}) stopped at {} UTC",
            status.state_dir,
            host.ended_at.as_deref().map_or("-".to_owned(), time_text)
        ),
        HostState::None => format!(
            "host: none runs on `{}` (no `curupira run` has published its state here)",
            status.state_dir
        ),
    }
}

fn attempts_table(attempts: &[TaskAttempt], time: impl Fn(&TaskAttempt) -> String) -> String {
    let cells: Vec<[String; 5]> = attempts
        .iter()
        .map(|a| {
            [
                time_text(&time(a)),
                short_id(&a.task_id).to_owned(),
                one_line(&a.automation),
                a.attempt.attempt.to_string(),
                one_line(&match a.attempt.outcome {
                    Some(outcome) => format!(
                        "{outcome}: {}",
                        why(
                            a.attempt.reason.as_deref().unwrap_or("-"),
                            a.attempt.exit_code,
                            a.attempt.error.as_deref()
                        )
                    ),
                    None => "running when its host ended".to_owned(),
                }),
            ]
        })
        .collect();
    aligned(
        &["TIME (UTC)", "TASK", "AUTOMATION", "ATTEMPT", "OUTCOME"],
        &cells,
        3,
    )
}

/// How an attempt ended, in words: its error when the host knew it, else its reason
/// and exit status.
fn why(reason: &str, exit_code: Option<i32>, error: Option<&str>) -> String {
    match (error, exit_code) {
        (Some(error), _) => error.to_owned(),
        (None, Some(code)) => format!("{reason} {code}"),
        (None, None) => reason.to_owned(),
    }
}

fn counts_text(counts: &OutcomeCounts) -> String {
    format!(
        "{} succeeded, {} failed, {} interrupted",
        counts.succeeded, counts.failed, counts.interrupted
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use curupira_orchestrator::status::{HostInfo, Live, Publisher, RunningAttempt};

    #[test]
    fn no_host_and_no_ledger_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let status = collect(dir.path(), None, SystemTime::now()).unwrap();
        assert_eq!(status.host.state, HostState::None);
        assert_eq!(status.host.pid, None);
        assert!(status.counts.is_none());
        let text = human(&status);
        assert!(text.starts_with("host: none runs on `"), "{text}");
        assert!(text.contains("no task ledger"), "{text}");
    }

    #[test]
    fn a_document_no_lock_holds_is_a_gone_host_and_its_attempts_are_not_shown_running() {
        let dir = tempfile::tempdir().unwrap();
        let live = Live::new(HostInfo::this_process("curupira test", None));
        live.automation_added("fix", Some(SystemTime::now()));
        live.attempt_started(RunningAttempt::new("fix", "ab", 1, SystemTime::now()));
        let publisher = Publisher::start(live, &dir.path().join(STATUS_FILE)).unwrap();
        // Never finished: as a host killed with SIGKILL leaves it.
        std::mem::forget(publisher);
        let status = collect(dir.path(), None, SystemTime::now()).unwrap();
        assert_eq!(status.host.state, HostState::Gone);
        assert_eq!(status.host.pid, Some(std::process::id()));
        assert!(status.running.is_empty());
        assert_eq!(status.automations[0].next_round_at, None);
        assert!(human(&status).contains("ended without saying so"));
    }

    #[test]
    fn a_held_lock_with_the_publisher_s_pid_shows_what_runs() {
        let dir = tempfile::tempdir().unwrap();
        let _lock = RunLock::acquire(&dir.path().join(RUN_LOCK)).unwrap();
        let live = Live::new(HostInfo::this_process("curupira test", None));
        let started = SystemTime::now() - Duration::from_secs(90);
        live.attempt_started(RunningAttempt::new("fix", &"cd".repeat(32), 2, started));
        live.agent_spawned("fix", &"cd".repeat(32), 99);
        let publisher = Publisher::start(live, &dir.path().join(STATUS_FILE)).unwrap();
        let status = collect(dir.path(), None, SystemTime::now()).unwrap();
        assert_eq!(status.host.state, HostState::Running);
        assert_eq!(status.running.len(), 1);
        assert!((89.0..120.0).contains(&status.running[0].elapsed_seconds));
        let text = human(&status);
        assert!(text.contains("cdcdcdcdcdcd  fix"), "{text}");
        assert!(
            text.contains("1 min 30 s") || text.contains("1 min 31 s"),
            "{text}"
        );
        drop(publisher);
    }
}
