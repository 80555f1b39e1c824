//! The seam for a second backend: what a run asks of its ledger ([`RunBackend`]) and
//! what `curupira tasks` asks of it ([`TasksBackend`]). [`Ledger`], on SQLite,
//! implements both by calling its own methods of the same names; the crate's docs say
//! which of them a PostgreSQL backend would write.

use std::fmt;
use std::time::Duration;

use crate::{
    AttemptRecord, Change, Decision, Filter, Ledger, LedgerError, OutcomeCounts, Requested,
    ResumePoint, Retention, Status, TaskAttempt, TaskRecord,
};

/// What a run needs of a durable ledger: the decision for every polled task, the
/// changes of a task's row (written by the [`WriterThread`](crate::WriterThread), the
/// only caller of [`apply`](Self::apply)), and what other processes asked for since
/// (`tasks retry`, `tasks forget`).
///
/// A run opens two: one for the writer thread, one it reads on (behind a mutex, as
/// `dyn RunBackend`). Every row means what the crate's docs say, whatever stores it;
/// a backend reads a row and applies the one copy of the rule, [`decide`](crate::decide).
///
/// ```
/// use curupira_ledger::{Decision, Ledger, RunBackend, Status};
///
/// fn skipped(ledger: &mut dyn RunBackend, automation: &str, task_id: &str) -> bool {
///     matches!(ledger.decide(automation, task_id), Ok(Decision::Skip(_)))
/// }
///
/// let dir = tempfile::tempdir()?;
/// let mut ledger = Ledger::open(&dir.path().join("ledger.sqlite"))?;
/// let id = "ab".repeat(32);
/// assert!(!skipped(&mut ledger, "fix", &id));
/// ledger.attempt_started("fix", &id, "[]", "/work", 4242)?;
/// ledger.finished("fix", &id, Status::Failed, Some(1), "exit")?;
/// assert!(skipped(&mut ledger, "fix", &id));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait RunBackend: Send + fmt::Debug {
    /// What to do with a task a poll returned: [`Decision::Dispatch`] when the ledger
    /// has no row for it, else what [`decide`](crate::decide) says of its row. Reads
    /// only; called for every polled task, on the dispatch loop's thread.
    fn decide(&mut self, automation: &str, task_id: &str) -> Result<Decision, LedgerError>;

    /// Applies `changes` in order, in one transaction: all or none. The writer
    /// thread's one call, once per batch.
    fn apply(&mut self, changes: &[Change]) -> Result<(), LedgerError>;

    /// The tasks of `automation` that `tasks retry` asked to dispatch again, read
    /// afresh, oldest request first. What every round of a run reads.
    fn requested(&mut self, automation: &str) -> Result<Vec<Requested>, LedgerError>;

    /// What a run's first round of `automation` reads instead of
    /// [`requested`](Self::requested): those tasks and every task not finished
    /// (`interrupted`), read afresh, oldest change first. A task the ledger holds as
    /// not finished is dispatched again by the next run from its stored pairs, whether
    /// or not its extension hands it over again.
    fn unfinished(&mut self, automation: &str) -> Result<Vec<Requested>, LedgerError>;

    /// How many attempts of the task the ledger counts over every run (0 without a
    /// row): the number of its next attempt, less one. Read as
    /// [`decide`](Self::decide) reads; called once per task a run dispatches.
    fn attempts_started(&mut self, automation: &str, task_id: &str) -> Result<u32, LedgerError>;

    /// Whether the ledger has a row for the task, read afresh: a task whose row is
    /// gone was forgotten (`tasks forget`).
    fn has_row(&mut self, automation: &str, task_id: &str) -> Result<bool, LedgerError>;

    /// At a run's start, under its run lock: marks `interrupted` (reason
    /// [`UNRECORDED`](crate::UNRECORDED)) every `running` row whose agent does not run
    /// any more, and returns their keys (automation, task id).
    fn mark_unrecorded(&mut self) -> Result<Vec<(String, String)>, LedgerError>;

    /// The task's last attempt, for a resume of its agent's session; read afresh. A
    /// backend that keeps no history has none.
    fn resume_point(
        &mut self,
        automation: &str,
        task_id: &str,
    ) -> Result<Option<ResumePoint>, LedgerError> {
        let _ = (automation, task_id);
        Ok(None)
    }

    /// Called while the run has nothing to do: ends a read snapshot older than its
    /// allowed age (see [`Ledger::read_in_snapshots`]). A backend that keeps no
    /// snapshot has nothing to do.
    fn end_old_snapshot(&mut self) -> Result<(), LedgerError> {
        Ok(())
    }

    /// Deletes the ended attempt rows `retention` does not keep; how many. What the
    /// writer thread calls now and then ([`crate::WriterThread::start_with`]); a
    /// backend that keeps no history does nothing.
    fn prune_attempts(&mut self, retention: &Retention) -> Result<usize, LedgerError> {
        let _ = retention;
        Ok(0)
    }
}

/// What `curupira tasks` needs of a durable ledger: the rows, newest first or by id
/// prefix, their keys, and the two requests a running host reads
/// ([`RunBackend::requested`], [`RunBackend::has_row`]).
pub trait TasksBackend {
    /// The most recently changed rows matching `filter`, newest first, at most
    /// `limit`.
    fn list(&self, filter: &Filter, limit: u32) -> Result<Vec<TaskRecord>, LedgerError>;

    /// The rows whose task id starts with `prefix` (lowercase hex), of `automation`
    /// when given, ordered by task id; at most `limit`.
    fn find(
        &self,
        prefix: &str,
        automation: Option<&str>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, LedgerError>;

    /// The key and status of every row of `automation` (`None`: of every automation)
    /// with `status` (`None`: any), ordered by automation and task id.
    fn keys(
        &self,
        automation: Option<&str>,
        status: Option<Status>,
    ) -> Result<Vec<(String, String, Status)>, LedgerError>;

    /// Asks the next run to dispatch these tasks again from their stored pairs;
    /// returns how many rows changed. One transaction.
    fn request_retry(&mut self, keys: &[(String, String)]) -> Result<usize, LedgerError>;

    /// [`request_retry`](Self::request_retry), the next attempt starting its agent's
    /// session over (`tasks retry --fresh`).
    fn request_fresh_retry(&mut self, keys: &[(String, String)]) -> Result<usize, LedgerError>;

    /// Forgets these tasks (deletes their rows); returns how many were deleted. One
    /// transaction.
    fn forget(&mut self, keys: &[(String, String)]) -> Result<usize, LedgerError>;

    /// Every attempt of a task, the first first.
    fn attempts(&self, automation: &str, task_id: &str) -> Result<Vec<AttemptRecord>, LedgerError>;

    /// The attempts that have not ended, the oldest first.
    fn open_attempts(&self) -> Result<Vec<TaskAttempt>, LedgerError>;

    /// The last `limit` attempts that failed or were interrupted, the newest first.
    fn last_failures(&self, limit: u32) -> Result<Vec<TaskAttempt>, LedgerError>;

    /// The tasks that ended in the last `hours` hours, per hour and status.
    fn finished_per_hour(&self, hours: u32) -> Result<Vec<(i64, Status, u64)>, LedgerError>;

    /// How many tasks ended in the last `long` and in the last `short`, each once, by
    /// how it ended (its status).
    fn task_counts(
        &self,
        long: Duration,
        short: Duration,
    ) -> Result<(OutcomeCounts, OutcomeCounts), LedgerError>;

    /// How many attempts ended with each outcome in the last `long` and in the last
    /// `short`.
    fn outcome_counts(
        &self,
        long: Duration,
        short: Duration,
    ) -> Result<(OutcomeCounts, OutcomeCounts), LedgerError>;
}

impl RunBackend for Ledger {
    fn decide(&mut self, automation: &str, task_id: &str) -> Result<Decision, LedgerError> {
        Ledger::decide(self, automation, task_id)
    }

    fn resume_point(
        &mut self,
        automation: &str,
        task_id: &str,
    ) -> Result<Option<ResumePoint>, LedgerError> {
        Ledger::resume_point(self, automation, task_id)
    }

    fn apply(&mut self, changes: &[Change]) -> Result<(), LedgerError> {
        Ledger::apply(self, changes)
    }

    fn requested(&mut self, automation: &str) -> Result<Vec<Requested>, LedgerError> {
        Ledger::requested(self, automation)
    }

    fn unfinished(&mut self, automation: &str) -> Result<Vec<Requested>, LedgerError> {
        Ledger::unfinished(self, automation)
    }

    fn attempts_started(&mut self, automation: &str, task_id: &str) -> Result<u32, LedgerError> {
        Ledger::attempts_started(self, automation, task_id)
    }

    fn has_row(&mut self, automation: &str, task_id: &str) -> Result<bool, LedgerError> {
        Ledger::has_row(self, automation, task_id)
    }

    fn mark_unrecorded(&mut self) -> Result<Vec<(String, String)>, LedgerError> {
        Ledger::mark_unrecorded(self)
    }

    fn prune_attempts(&mut self, retention: &Retention) -> Result<usize, LedgerError> {
        Ledger::prune_attempts(self, retention)
    }

    fn end_old_snapshot(&mut self) -> Result<(), LedgerError> {
        Ledger::end_old_snapshot(self)
    }
}

impl TasksBackend for Ledger {
    fn list(&self, filter: &Filter, limit: u32) -> Result<Vec<TaskRecord>, LedgerError> {
        Ledger::list(self, filter, limit)
    }

    fn find(
        &self,
        prefix: &str,
        automation: Option<&str>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, LedgerError> {
        Ledger::find(self, prefix, automation, limit)
    }

    fn keys(
        &self,
        automation: Option<&str>,
        status: Option<Status>,
    ) -> Result<Vec<(String, String, Status)>, LedgerError> {
        Ledger::keys(self, automation, status)
    }

    fn request_retry(&mut self, keys: &[(String, String)]) -> Result<usize, LedgerError> {
        Ledger::request_retry(self, keys)
    }

    fn request_fresh_retry(&mut self, keys: &[(String, String)]) -> Result<usize, LedgerError> {
        Ledger::request_fresh_retry(self, keys)
    }

    fn forget(&mut self, keys: &[(String, String)]) -> Result<usize, LedgerError> {
        Ledger::forget(self, keys)
    }

    fn attempts(&self, automation: &str, task_id: &str) -> Result<Vec<AttemptRecord>, LedgerError> {
        Ledger::attempts(self, automation, task_id)
    }

    fn open_attempts(&self) -> Result<Vec<TaskAttempt>, LedgerError> {
        Ledger::open_attempts(self)
    }

    fn last_failures(&self, limit: u32) -> Result<Vec<TaskAttempt>, LedgerError> {
        Ledger::last_failures(self, limit)
    }

    fn outcome_counts(
        &self,
        long: Duration,
        short: Duration,
    ) -> Result<(OutcomeCounts, OutcomeCounts), LedgerError> {
        Ledger::outcome_counts(self, long, short)
    }

    fn task_counts(
        &self,
        long: Duration,
        short: Duration,
    ) -> Result<(OutcomeCounts, OutcomeCounts), LedgerError> {
        Ledger::task_counts(self, long, short)
    }

    fn finished_per_hour(&self, hours: u32) -> Result<Vec<(i64, Status, u64)>, LedgerError> {
        Ledger::finished_per_hour(self, hours)
    }
}

#[cfg(test)]
mod tests {
    //! The rules, run through the traits: what the run loop and `curupira tasks` see
    //! of any backend.

    use super::*;
    use crate::{AgentProcess, WriterThread};

    fn id(n: u8) -> String {
        format!("{n:02x}").repeat(32)
    }

    fn open(path: &std::path::Path) -> Box<dyn RunBackend> {
        Box::new(Ledger::open(path).unwrap())
    }

    /// A task a run records through the writer thread (generic over the backend) is
    /// decided through `dyn RunBackend` by the next process: skipped once finished,
    /// dispatched when interrupted or never seen; its retry request and its row are
    /// read through the trait too.
    #[test]
    fn the_dispatch_decision_through_the_trait_across_two_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let thread = WriterThread::start(Ledger::open(&path).unwrap()).unwrap();
        let writer = thread.writer();
        let mut reader = open(&path);
        assert_eq!(reader.decide("fix", &id(1)).unwrap(), Decision::Dispatch);
        for (n, status) in [(1, Status::Succeeded), (2, Status::Interrupted)] {
            writer.write(Change::AttemptStarted {
                automation: "fix".into(),
                task_id: id(n),
                pairs: "[]".into(),
                workspace: "/w".into(),
                branch: None,
                log_path: None,
                host_pid: 7,
            });
            writer.write(Change::Finished {
                automation: "fix".into(),
                task_id: id(n),
                status,
                exit_code: None,
                reason: "exit".into(),
            });
        }
        writer.wait_all().unwrap();
        thread.close();
        reader.end_old_snapshot().unwrap();
        drop(reader);

        let mut reader = open(&path);
        assert_eq!(
            reader.decide("fix", &id(1)).unwrap(),
            Decision::Skip(Status::Succeeded)
        );
        assert_eq!(reader.decide("fix", &id(2)).unwrap(), Decision::Dispatch);
        assert_eq!(reader.decide("fix", &id(3)).unwrap(), Decision::Dispatch);
        assert_eq!(reader.decide("other", &id(1)).unwrap(), Decision::Dispatch);
        assert!(reader.has_row("fix", &id(2)).unwrap());
        assert!(!reader.has_row("fix", &id(3)).unwrap());
        assert!(reader.requested("fix").unwrap().is_empty());
        assert!(reader.mark_unrecorded().unwrap().is_empty());
    }

    /// What `curupira tasks` does, through `dyn TasksBackend`, as a running host's
    /// reader (`dyn RunBackend`) then sees it.
    #[test]
    fn tasks_requests_through_the_trait_reach_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut run: Box<dyn RunBackend> = open(&path);
        run.apply(&[
            Change::AttemptStarted {
                automation: "fix".into(),
                task_id: id(1),
                pairs: r#"[{"key":"issue","value":"1"}]"#.into(),
                workspace: "/w".into(),
                branch: None,
                log_path: None,
                host_pid: 7,
            },
            Change::AgentStarted {
                automation: "fix".into(),
                task_id: id(1),
                agent: AgentProcess {
                    pid: 4242,
                    start: None,
                },
            },
            Change::Finished {
                automation: "fix".into(),
                task_id: id(1),
                status: Status::Failed,
                exit_code: Some(1),
                reason: "exit".into(),
            },
        ])
        .unwrap();
        let mut ledger = Ledger::open(&path).unwrap();
        let tasks: &mut dyn TasksBackend = &mut ledger;
        let failed = Filter {
            status: Some(Status::Failed),
            ..Filter::default()
        };
        let rows = tasks.list(&failed, 10).unwrap();
        assert_eq!(
            (rows.len(), rows[0].agent_pid, rows[0].attempts),
            (1, Some(4242), 1)
        );
        assert_eq!(tasks.find(&id(1)[..3], Some("fix"), 10).unwrap().len(), 1);
        let keys: Vec<(String, String)> = tasks
            .keys(None, Some(Status::Failed))
            .unwrap()
            .into_iter()
            .map(|(automation, task_id, _)| (automation, task_id))
            .collect();
        assert_eq!(keys, [("fix".to_owned(), id(1))]);
        assert_eq!(tasks.request_retry(&keys).unwrap(), 1);
        assert_eq!(
            run.requested("fix").unwrap(),
            [Requested {
                task_id: id(1),
                pairs: r#"[{"key":"issue","value":"1"}]"#.into(),
                attempts: 1,
            }]
        );
        assert_eq!(tasks.forget(&keys).unwrap(), 1);
        assert!(!run.has_row("fix", &id(1)).unwrap());
        assert_eq!(run.decide("fix", &id(1)).unwrap(), Decision::Dispatch);
    }
}
