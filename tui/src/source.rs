//! Reading what a host publishes, without ever holding it up ([`Source`]).
//!
//! Three things are read, each as `curupira status` and `curupira tasks` read them:
//!
//! - **`run.lock`** ([`RunLock::holder`]): whether a host holds the state folder now.
//!   The look takes the lock for an instant when it is free, as `status` does; a
//!   host's `RunLock::acquire` tries again for that.
//! - **`status.json`** ([`status::read`]): what the host last published (at most a
//!   second old): what runs, what waits for a retry, each automation's rounds. Never
//!   locked; the host writes it to a temporary file renamed over the last. Each
//!   automation's `next_tick`, a member a host may add for a cron automation, is read
//!   from the same file when it is there.
//! - **The ledger**: opened for each look and closed after it ([`Ledger::open_existing`],
//!   as `tasks list` opens it), so the dashboard never keeps a connection a host's
//!   last close would wait for, and each query is a read of its own (SQLite's WAL: a
//!   reader never blocks the host's writer). The one write is the retry a person asks
//!   for, [`Source::request_retry`], exactly as `curupira tasks retry` writes it.

use std::path::{Path, PathBuf};

use curupira_ledger::{AttemptRecord, Filter, Ledger, Status, TasksBackend};
use curupira_orchestrator::status::{self, Published};
use curupira_workspace::state::{Holder, RUN_LOCK, RunLock, STATUS_FILE};

use crate::snapshot::{Automation, Host, HostState, LedgerState, Snapshot};
use crate::text::short_id;

/// How many of the ledger's recent tasks a [`Snapshot`] holds.
pub const RECENT: u32 = 50;

/// A host's state folder and its ledger, as the dashboard reads them.
///
/// ```
/// use curupira_tui::{HostState, Source};
///
/// let folder = tempfile::tempdir()?;
/// let source = Source::new(folder.path(), Some(folder.path().join("ledger.sqlite")));
/// let snapshot = source.read();
/// assert_eq!(snapshot.host.state, HostState::None);
/// assert!(snapshot.running.is_empty() && snapshot.problems.is_empty());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Source {
    state_dir: PathBuf,
    ledger: Option<PathBuf>,
}

impl Source {
    /// The state folder `state_dir` (where `run.lock` and `status.json` are) and the
    /// ledger's file (`None`: the config turned the ledger off).
    pub fn new(state_dir: impl Into<PathBuf>, ledger: Option<PathBuf>) -> Source {
        Source {
            state_dir: state_dir.into(),
            ledger,
        }
    }

    /// The state folder.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Whether a host holds the state folder's `run.lock` now (`false` when it cannot
    /// be looked at).
    pub fn host_running(&self) -> bool {
        matches!(
            RunLock::holder(&self.state_dir.join(RUN_LOCK)),
            Ok(Holder::Held { .. })
        )
    }

    /// One look at the state folder and the ledger. What cannot be read is said in
    /// [`Snapshot::problems`]; nothing here fails.
    pub fn read(&self) -> Snapshot {
        let mut snapshot = Snapshot::default();
        let lock = self.state_dir.join(RUN_LOCK);
        let holder = RunLock::holder(&lock).unwrap_or_else(|err| {
            snapshot
                .problems
                .push(format!("cannot look at `{}`: {err}", lock.display()));
            Holder::Free
        });
        let status_path = self.state_dir.join(STATUS_FILE);
        let published = status::read(&status_path).unwrap_or_else(|err| {
            snapshot.problems.push(err.to_string());
            None
        });
        let (state, published) = status::host_state(holder, published);
        snapshot.host = host(state, holder, published.as_ref());
        if let Some(doc) = published {
            snapshot.automations = doc
                .automations
                .into_iter()
                .map(|mut state_of| {
                    let next_tick = state_of.next_tick.take();
                    if state != HostState::Running {
                        // No host: no round is coming.
                        state_of.round_running = false;
                        state_of.next_round_at = None;
                    }
                    Automation {
                        state: state_of,
                        next_tick: next_tick.filter(|_| state == HostState::Running),
                    }
                })
                .collect();
            if state == HostState::Running {
                snapshot.running = doc.running;
                snapshot.retrying = doc.retrying;
            }
        }
        match &self.ledger {
            None => snapshot.ledger = LedgerState::Off,
            Some(path) => match Ledger::open_existing(path) {
                Ok(None) => snapshot.ledger = LedgerState::Missing,
                Ok(Some(ledger)) => {
                    snapshot.ledger = LedgerState::Read;
                    match ledger.list(&Filter::default(), RECENT) {
                        Ok(rows) => {
                            snapshot.recent = rows
                                .into_iter()
                                .filter(|row| row.status != Status::Running)
                                .collect();
                        }
                        Err(err) => snapshot.problems.push(err.to_string()),
                    }
                }
                Err(err) => snapshot.problems.push(err.to_string()),
            },
        }
        snapshot
    }

    /// Attempt `attempt` of a task (its last when `None`), as the ledger's history has
    /// it: where its log is and whether it ended. `Ok(None)` when there is no ledger
    /// or no such attempt.
    pub fn attempt(
        &self,
        automation: &str,
        task_id: &str,
        attempt: Option<u32>,
    ) -> Result<Option<AttemptRecord>, String> {
        let Some(path) = &self.ledger else {
            return Ok(None);
        };
        let Some(ledger) = Ledger::open_existing(path).map_err(|err| err.to_string())? else {
            return Ok(None);
        };
        let attempts = ledger
            .attempts(automation, task_id)
            .map_err(|err| err.to_string())?;
        Ok(match attempt {
            Some(n) => attempts.into_iter().find(|a| a.attempt == n),
            None => attempts.into_iter().last(),
        })
    }

    /// Asks the host to dispatch a failed task again, as `curupira tasks retry ID`
    /// does (the ledger's retry request, which a running host's next round takes up,
    /// else the next `run`): the sentence to show, or why it was not asked.
    pub fn request_retry(&self, automation: &str, task_id: &str) -> Result<String, String> {
        let short = short_id(task_id);
        let Some(path) = &self.ledger else {
            return Err(
                "the ledger is off (`[settings.ledger] enabled = false`): nothing to retry from"
                    .to_owned(),
            );
        };
        let mut ledger = Ledger::open_existing(path)
            .map_err(|err| err.to_string())?
            .ok_or_else(|| format!("there is no task ledger at `{}` yet", path.display()))?;
        let ledger: &mut dyn TasksBackend = &mut ledger;
        let row = ledger
            .find(task_id, Some(automation), 2)
            .map_err(|err| err.to_string())?
            .into_iter()
            .find(|row| row.task_id == task_id)
            .ok_or_else(|| format!("task {short} of `{automation}` is no longer in the ledger"))?;
        if row.status != Status::Failed {
            return Err(format!(
                "task {short} of `{automation}` is {}, not failed: only a failed task is \
                 retried from here (`curupira tasks retry {short}` retries any that is not \
                 running)",
                row.status
            ));
        }
        if !row.retry_requested {
            let keys = [(row.automation.clone(), row.task_id.clone())];
            ledger.request_retry(&keys).map_err(|err| err.to_string())?;
        }
        Ok(format!(
            "task {short} of `{automation}`: retry asked; the host's next round runs it again"
        ))
    }
}

/// The host's line of the snapshot.
fn host(state: HostState, holder: Holder, doc: Option<&Published>) -> Host {
    let holder_pid = match holder {
        Holder::Held { pid } => pid,
        Holder::Free => None,
    };
    Host {
        state,
        pid: doc.map(|doc| doc.host.pid).or(holder_pid),
        started_at: doc.map(|doc| doc.host.started_at.clone()),
        ended_at: doc.and_then(|doc| doc.ended_at.clone()),
        published_at: doc.map(|doc| doc.updated_at.clone()),
        config: doc.and_then(|doc| doc.host.config.clone()),
        stopping: doc.is_some_and(|doc| doc.stopping && doc.ended_at.is_none()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use curupira_orchestrator::status::{HostInfo, Live, Publisher, RunningAttempt};
    use std::time::SystemTime;

    #[test]
    fn a_published_document_no_lock_holds_is_a_gone_host_with_nothing_running() {
        let dir = tempfile::tempdir().unwrap();
        let live = Live::new(HostInfo::this_process("curupira test", None));
        live.automation_added("fix", Some(SystemTime::now()));
        live.attempt_started(RunningAttempt::new("fix", "ab", 1, SystemTime::now()));
        let publisher = Publisher::start(live, &dir.path().join(STATUS_FILE)).unwrap();
        // Never finished: as a host killed with SIGKILL leaves it.
        std::mem::forget(publisher);
        let snapshot = Source::new(dir.path(), None).read();
        assert_eq!(snapshot.host.state, HostState::Gone);
        assert!(snapshot.running.is_empty());
        assert_eq!(snapshot.automations[0].state.next_round_at, None);
        assert_eq!(snapshot.ledger, LedgerState::Off);
    }

    #[test]
    fn a_held_lock_shows_what_runs_and_the_next_ticks() {
        let dir = tempfile::tempdir().unwrap();
        let _lock = RunLock::acquire(&dir.path().join(RUN_LOCK)).unwrap();
        let live = Live::new(HostInfo::this_process("curupira test", None));
        live.automation_added("nightly", Some(SystemTime::now()));
        live.attempt_started(RunningAttempt::new("nightly", "cd", 2, SystemTime::now()));
        let publisher = Publisher::start(live, &dir.path().join(STATUS_FILE)).unwrap();
        publisher.finish().unwrap();
        // A host that writes each cron automation's next tick.
        let path = dir.path().join(STATUS_FILE);
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        doc["ended_at"] = serde_json::Value::Null;
        doc["running"] =
            serde_json::json!([RunningAttempt::new("nightly", "cd", 2, SystemTime::now())]);
        doc["automations"][0]["next_tick"] = "2027-01-15T02:00:00.000Z".into();
        std::fs::write(&path, doc.to_string()).unwrap();
        let snapshot = Source::new(dir.path(), None).read();
        assert_eq!(snapshot.host.state, HostState::Running);
        assert_eq!(snapshot.running.len(), 1);
        assert_eq!(
            snapshot.automations[0].next_tick.as_deref(),
            Some("2027-01-15T02:00:00.000Z")
        );
    }

    #[test]
    fn a_damaged_status_file_or_ledger_is_said_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(STATUS_FILE), "{").unwrap();
        std::fs::write(dir.path().join("ledger.sqlite"), "not a database at all").unwrap();
        let source = Source::new(dir.path(), Some(dir.path().join("ledger.sqlite")));
        let snapshot = source.read();
        assert_eq!(snapshot.host.state, HostState::None);
        assert_eq!(snapshot.problems.len(), 2, "{:?}", snapshot.problems);
        assert!(source.request_retry("fix", &"ab".repeat(32)).is_err());
    }

    #[test]
    fn only_a_failed_task_is_retried_and_the_request_is_the_ledger_s() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut ledger = Ledger::open(&path).unwrap();
        let (failed, fine) = ("ab".repeat(32), "cd".repeat(32));
        ledger
            .attempt_started("fix", &failed, "[]", "/work", 4242)
            .unwrap();
        ledger
            .finished("fix", &failed, Status::Failed, Some(4), "exit")
            .unwrap();
        ledger
            .attempt_started("fix", &fine, "[]", "/work", 4243)
            .unwrap();
        ledger
            .finished("fix", &fine, Status::Succeeded, Some(0), "exit")
            .unwrap();
        let source = Source::new(dir.path(), Some(path));
        let said = source.request_retry("fix", &failed).unwrap();
        assert!(said.contains("retry asked"), "{said}");
        let refused = source.request_retry("fix", &fine).unwrap_err();
        assert!(refused.contains("succeeded, not failed"), "{refused}");
        let rows = ledger.list(&Filter::default(), 10).unwrap();
        let row = rows.iter().find(|row| row.task_id == failed).unwrap();
        assert!(row.retry_requested);
        let snapshot = source.read();
        assert_eq!(snapshot.recent.len(), 2);
        assert_eq!(
            source
                .attempt("fix", &failed, None)
                .unwrap()
                .unwrap()
                .attempt,
            1
        );
    }
}
