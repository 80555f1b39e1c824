//! The ledger's writer thread: every state change of a run goes through it, so the
//! SQLite work runs beside the dispatch loop instead of inside it.
//!
//! - Any thread hands a [`Change`] to [`Writer::write`] and gets a [`Ticket`] at
//!   once; the writer thread applies the changes in the order they were handed over.
//!   Nobody waits for a change before going on: the dispatch loop hands over a task's
//!   `running` row and starts its agent, the agent's thread hands over its pid.
//! - After a batch's first change the thread waits [`LINGER`] for more, then writes
//!   them all **in one transaction** (group commit): under load a batch holds the
//!   changes of several tasks, and the pages they share (the ends of the table and of
//!   the time-ordered indexes) are written once for all of them. Someone waiting with
//!   [`Writer::wait`] cuts the pause short.
//! - A host's event printer (`curupira-host`'s `journal`) waits with
//!   [`Writer::wait_in_turn`] for the ticket of the last change made before each
//!   event, so an event is printed only once what it reports is committed.
//! - The thread runs at nice [`NICE`] (Linux): its work is never on the path of a
//!   task, so it takes the CPU the rest of the run leaves.
//! - It writes to any [`RunBackend`] ([`WriterThread::start`] is generic over it):
//!   all it calls is [`RunBackend::apply`], once per batch.
//! - The first failure (a full disk, a lock held too long by another process) is
//!   kept: that batch and every later change fail, and [`Writer::take_error`] gives the
//!   error once for the run's exit; the run stops starting tasks.
//!
//! What a crash can lose: the changes of the last [`LINGER`] (plus a commit). The
//! next run treats such a task as the rules of [`crate`] say for the row it
//! finds: no row, or a `running` row without an agent, is dispatched again; the
//! run's watchdog (`curupira_process::watchdog`) has stopped its agent by then.
//!
//! ```
//! use curupira_ledger::{Change, Decision, Ledger, Status, TicketState, WriterThread};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("ledger.sqlite");
//! let thread = WriterThread::start(Ledger::open(&path)?)?;
//! let writer = thread.writer();
//! let id = "ab".repeat(32);
//! writer.write(Change::AttemptStarted {
//!     automation: "fix".into(),
//!     task_id: id.clone(),
//!     pairs: r#"[{"key":"issue","value":"7"}]"#.into(),
//!     workspace: "/work".into(),
//!     branch: None,
//!     log_path: None,
//!     host_pid: 4242,
//! });
//! let ticket = writer.write(Change::Finished {
//!     automation: "fix".into(),
//!     task_id: id.clone(),
//!     status: Status::Succeeded,
//!     exit_code: Some(0),
//!     reason: "exit".into(),
//! });
//! assert!(writer.wait(ticket).is_ok());
//! assert_eq!(writer.state(ticket), TicketState::Committed);
//! thread.close();
//! assert_eq!(Ledger::open(&path)?.decide("fix", &id)?, Decision::Skip(Status::Succeeded));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::{AgentProcess, Ledger, LedgerError, Retention, RunBackend, Status};

/// How long the writer waits after a batch's first change for more to join it,
/// unless someone waits for a ticket. Under load a batch then holds the changes of
/// several tasks (a task's `running` row and its agent's pid mostly land in one), and
/// the pages they share are written once; when little happens, an event waits this
/// long at most before it is printed.
pub const LINGER: Duration = Duration::from_millis(2);

/// The writer thread's nice value (Linux). Nobody waits for its commits but the
/// event printer and the end of the run, so on a busy machine it gives way to the
/// dispatch loop, the agents' threads and the agents: measured on 2 cores, 10,000
/// no-op tasks took 8.6 % longer with the ledger at the default priority and 1.3 %
/// at this one (the repository's
/// [`docs/BENCHMARKS.md`](https://example.invalid/curupira/blob/main/docs/BENCHMARKS.md)).
/// On an idle core it runs as soon as it has work.
pub const NICE: i32 = 10;

/// How often the writer thread prunes the attempt history at most
/// ([`WriterThread::start_with`]).
pub const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// The most changes waiting for the writer thread before [`Writer::write`] waits.
pub const MAX_QUEUED: usize = 65_536;

/// Queued changes that make the writer write at once instead of lingering for more (a
/// batch takes every change queued when it starts, so it may hold more).
const MAX_BATCH: usize = 512;

/// One change of a task's row, as [`Ledger`]'s methods of the same names make it.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// [`Ledger::attempt_started`].
    AttemptStarted {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The item's pairs, JSON.
        pairs: String,
        /// The attempt's working directory.
        workspace: String,
        /// Its Git branch, when it works in a worktree of its own.
        branch: Option<String>,
        /// Its log file, when it writes one.
        log_path: Option<String>,
        /// This host's pid.
        host_pid: u32,
    },
    /// [`Ledger::attempt_ended`]: an attempt ended (the task may run another).
    AttemptEnded {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// How the attempt ended.
        outcome: Status,
        /// Its exit status.
        exit_code: Option<i32>,
        /// How it ended, in a word.
        reason: String,
        /// What went wrong, when something did.
        error: Option<String>,
    },
    /// [`Ledger::agent_started`].
    AgentStarted {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The agent's process.
        agent: AgentProcess,
    },
    /// [`Ledger::attempt_session`].
    AttemptSession {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The provider.
        provider: String,
        /// Its session.
        session_id: String,
        /// Whether the attempt resumed it.
        resumed: bool,
    },
    /// [`Ledger::attempt_stream`].
    AttemptStream {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// What the stream said.
        stream: crate::StreamRecord,
    },
    /// [`Ledger::finished`].
    Finished {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// How the task ended in this process.
        status: Status,
        /// The last attempt's exit status.
        exit_code: Option<i32>,
        /// How the last attempt ended.
        reason: String,
    },
}

impl Ledger {
    /// Applies `changes` in order, in one transaction: all or none.
    pub fn apply(&mut self, changes: &[Change]) -> Result<(), LedgerError> {
        let error = |ledger: &Ledger, source| crate::classify(&ledger.path, "write", source);
        // IMMEDIATE: the write lock first, waiting (busy timeout) for a `curupira
        // tasks` that holds it, rather than failing halfway.
        self.connection
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|source| error(self, source))?;
        let applied = changes.iter().try_for_each(|change| self.apply_one(change));
        let ended = match applied {
            Ok(()) => self.connection.execute_batch("COMMIT"),
            Err(failed) => {
                let _ = self.connection.execute_batch("ROLLBACK");
                return Err(failed);
            }
        };
        ended.map_err(|source| {
            let _ = self.connection.execute_batch("ROLLBACK");
            error(self, source)
        })
    }

    fn apply_one(&mut self, change: &Change) -> Result<(), LedgerError> {
        match change {
            Change::AttemptStarted {
                automation,
                task_id,
                pairs,
                workspace,
                branch,
                log_path,
                host_pid,
            } => self
                .attempt_started_on(
                    automation,
                    task_id,
                    pairs,
                    workspace,
                    branch.as_deref(),
                    *host_pid,
                )
                .and_then(|()| self.attempt_log(automation, task_id, log_path.as_deref())),
            Change::AttemptEnded {
                automation,
                task_id,
                outcome,
                exit_code,
                reason,
                error,
            } => self.attempt_ended(
                automation,
                task_id,
                *outcome,
                *exit_code,
                reason,
                error.as_deref(),
            ),
            Change::AgentStarted {
                automation,
                task_id,
                agent,
            } => self.agent_started(automation, task_id, *agent),
            Change::AttemptSession {
                automation,
                task_id,
                provider,
                session_id,
                resumed,
            } => self.attempt_session(automation, task_id, provider, session_id, *resumed),
            Change::AttemptStream {
                automation,
                task_id,
                stream,
            } => self.attempt_stream(automation, task_id, stream),
            Change::Finished {
                automation,
                task_id,
                status,
                exit_code,
                reason,
            } => self.finished(automation, task_id, *status, *exit_code, reason),
        }
    }
}

/// A change handed to the writer: changes are numbered from 1 in the order they
/// were handed over, and committed in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(u64);

/// Where a ticket's change is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TicketState {
    /// Queued or being written.
    Pending,
    /// Committed: a crash no longer loses it.
    Committed,
    /// Its batch, or an earlier one, failed: it is not in the ledger.
    Failed,
}

/// What [`Writer::wait`] returns for a change that was not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the task ledger could not be written")]
pub struct NotWritten;

/// A handle on the writer thread, cheap to clone: every thread of a run that changes
/// the ledger holds one.
#[derive(Clone)]
pub struct Writer {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer thread: a first change queued, a full batch, someone waiting,
    /// closing.
    work: Condvar,
    /// Wakes the waiters: a batch was committed or failed.
    done: Condvar,
}

#[derive(Default)]
struct State {
    queue: Vec<Change>,
    /// The last ticket handed out.
    issued: u64,
    /// Every ticket up to this one is committed.
    committed: u64,
    /// Set by the first failure: from then on nothing is written.
    failed: bool,
    error: Option<LedgerError>,
    closing: bool,
    /// Someone waits for a ticket: the batch being gathered goes now.
    urgent: bool,
}

impl Writer {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Only plain assignments happen under the lock: nothing is left half done.
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits on `condvar` with the state's lock (a poisoned lock as the lock).
    fn wait_on<'a>(
        &self,
        condvar: &Condvar,
        state: MutexGuard<'a, State>,
    ) -> MutexGuard<'a, State> {
        condvar.wait(state).unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the writer thread to write the batch it gathers now.
    fn hurry(&self, state: &mut State) {
        if !state.urgent {
            state.urgent = true;
            self.shared.work.notify_one();
        }
    }

    /// Queues `change` for the writer thread. Waits only when [`MAX_QUEUED`] changes
    /// are already waiting (a slow disk, or another process holding the ledger's
    /// lock, holds the writer up), until the writer has written a batch: memory stays
    /// bounded, and the run slows down instead.
    pub fn write(&self, change: Change) -> Ticket {
        let mut state = self.lock();
        while state.queue.len() >= MAX_QUEUED && !state.failed {
            self.hurry(&mut state);
            state = self.wait_on(&self.shared.done, state);
        }
        state.issued += 1;
        if !state.failed {
            state.queue.push(change);
            // The thread waits for a first change, or lingers for a full batch:
            // nothing else is worth waking it for.
            if state.queue.len() == 1 || state.queue.len() == MAX_BATCH {
                self.shared.work.notify_one();
            }
        }
        Ticket(state.issued)
    }

    /// The last ticket handed out, by any thread: once it is committed, every change
    /// made so far is.
    pub fn last_issued(&self) -> Ticket {
        Ticket(self.lock().issued)
    }

    /// Where `ticket`'s change is, without waiting.
    pub fn state(&self, ticket: Ticket) -> TicketState {
        let state = self.lock();
        ticket_state(&state, ticket)
    }

    /// Waits until `ticket`'s change is committed, or failed; the batch being
    /// gathered is written at once.
    pub fn wait(&self, ticket: Ticket) -> Result<(), NotWritten> {
        self.wait_for(ticket, true)
    }

    /// Waits until every change handed over so far is committed, or failed; the batch
    /// being gathered is written at once. What this process reads from the file
    /// afterwards includes its own changes.
    pub fn wait_all(&self) -> Result<(), NotWritten> {
        self.wait(self.last_issued())
    }

    /// Waits until `ticket`'s change is committed, or failed, without cutting the
    /// batch being gathered short (the event printer waits so).
    pub fn wait_in_turn(&self, ticket: Ticket) -> Result<(), NotWritten> {
        self.wait_for(ticket, false)
    }

    fn wait_for(&self, ticket: Ticket, urgent: bool) -> Result<(), NotWritten> {
        let mut state = self.lock();
        loop {
            match ticket_state(&state, ticket) {
                TicketState::Committed => return Ok(()),
                TicketState::Failed => return Err(NotWritten),
                TicketState::Pending => {
                    if urgent {
                        self.hurry(&mut state);
                    }
                    state = self.wait_on(&self.shared.done, state);
                }
            }
        }
    }

    /// Whether a change failed to be written.
    pub fn failed(&self) -> bool {
        self.lock().failed
    }

    /// The first failure, once (the run's exit reports it).
    pub fn take_error(&self) -> Option<LedgerError> {
        self.lock().error.take()
    }
}

fn ticket_state(state: &State, ticket: Ticket) -> TicketState {
    if ticket.0 <= state.committed {
        TicketState::Committed
    } else if state.failed {
        TicketState::Failed
    } else {
        TicketState::Pending
    }
}

impl fmt::Debug for Writer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("Writer")
            .field("issued", &state.issued)
            .field("committed", &state.committed)
            .field("failed", &state.failed)
            .finish_non_exhaustive()
    }
}

/// The writer thread itself: [`close`](Self::close) (or dropping it) writes what is
/// queued and ends it.
#[derive(Debug)]
pub struct WriterThread {
    writer: Writer,
    thread: Option<thread::JoinHandle<()>>,
}

impl WriterThread {
    /// Starts the thread that writes to `ledger`: a [`Ledger`], or any other
    /// [`RunBackend`], of which it calls only [`apply`](RunBackend::apply).
    pub fn start<B: RunBackend + 'static>(ledger: B) -> std::io::Result<WriterThread> {
        Self::start_with(ledger, Retention::default())
    }

    /// [`start`](Self::start), pruning the attempt history to `retention`
    /// ([`RunBackend::prune_attempts`]) once at the start and then at most every
    /// [`PRUNE_EVERY`], after a batch: on this thread, never on the run loop's.
    pub fn start_with<B: RunBackend + 'static>(
        ledger: B,
        retention: Retention,
    ) -> std::io::Result<WriterThread> {
        let writer = Writer {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                work: Condvar::new(),
                done: Condvar::new(),
            }),
        };
        let thread = {
            let writer = writer.clone();
            thread::Builder::new()
                .name("ledger".to_owned())
                .spawn(move || serve(ledger, &writer, retention))?
        };
        Ok(WriterThread {
            writer,
            thread: Some(thread),
        })
    }

    /// A handle to hand changes to the thread.
    pub fn writer(&self) -> Writer {
        self.writer.clone()
    }

    /// Writes what is queued, ends the thread and waits for it.
    pub fn close(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.writer.lock().closing = true;
            self.writer.shared.work.notify_one();
            let _ = thread.join();
        }
    }
}

impl Drop for WriterThread {
    fn drop(&mut self) {
        self.end();
    }
}

/// Sets the calling thread's nice value to [`NICE`] (Linux: `PRIO_PROCESS` of 0 is
/// the calling thread alone; lowering one's own priority needs no privilege, and
/// failing to is harmless). Elsewhere nothing. The writer thread and a host's event
/// printer (which waits for the writer's commits) call it: nothing of a task waits
/// for either.
pub fn lower_priority() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::setpriority_process(None, NICE);
}

/// The writer thread's loop: take every queued change, write them in one
/// transaction, publish the outcome, until closed with an empty queue.
fn serve<B: RunBackend>(mut ledger: B, writer: &Writer, retention: Retention) {
    lower_priority();
    let prunes = retention != Retention::default();
    let mut pruned_at: Option<Instant> = None;
    loop {
        if prunes && pruned_at.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            pruned_at = Some(Instant::now());
            match ledger.prune_attempts(&retention) {
                Ok(0) => {}
                Ok(deleted) => tracing::debug!("ledger: {deleted} old attempt row(s) pruned"),
                // History is kept a while longer; the run goes on.
                Err(error) => tracing::warn!("cannot prune the ledger's attempt history: {error}"),
            }
        }
        let (batch, last) = {
            let mut state = writer.lock();
            while state.queue.is_empty() && !state.closing {
                state = writer.wait_on(&writer.shared.work, state);
            }
            if state.queue.is_empty() {
                return;
            }
            // Lets the changes of the next moments join this batch.
            let deadline = Instant::now() + LINGER;
            while !state.closing && !state.urgent && state.queue.len() < MAX_BATCH {
                let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                    break;
                };
                state = writer
                    .shared
                    .work
                    .wait_timeout(state, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            state.urgent = false;
            (std::mem::take(&mut state.queue), state.issued)
        };
        let written = ledger.apply(&batch);
        {
            let mut state = writer.lock();
            match written {
                Ok(()) => state.committed = last,
                Err(error) => {
                    tracing::error!("{error}");
                    state.failed = true;
                    state.queue.clear();
                    state.error.get_or_insert(error);
                }
            }
            writer.shared.done.notify_all();
        }
    }
}

/// A writer thread held up: another connection holds the ledger's write lock until
/// `blocker` commits, so nothing handed to `thread` commits meanwhile.
#[cfg(test)]
pub(crate) struct HeldUp {
    /// The ledger's folder, removed when dropped.
    _dir: tempfile::TempDir,
    /// The writer thread, stuck until `blocker` commits.
    pub thread: WriterThread,
    /// The connection holding the write lock (`BEGIN IMMEDIATE`).
    pub blocker: rusqlite::Connection,
}

#[cfg(test)]
impl HeldUp {
    #[allow(clippy::unwrap_used)]
    pub(crate) fn new() -> HeldUp {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let thread = WriterThread::start(Ledger::open(&path).unwrap()).unwrap();
        let blocker = rusqlite::Connection::open(&path).unwrap();
        blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
        HeldUp {
            _dir: dir,
            thread,
            blocker,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::Decision;

    fn id(n: u8) -> String {
        format!("{n:02x}").repeat(32)
    }

    /// A writer thread on a new ledger, and the ledger's path (in the folder).
    fn fresh() -> (tempfile::TempDir, std::path::PathBuf, WriterThread) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let thread = WriterThread::start(Ledger::open(&path).unwrap()).unwrap();
        (dir, path, thread)
    }

    fn started(n: u8) -> Change {
        Change::AttemptStarted {
            automation: "fix".into(),
            task_id: id(n),
            pairs: "[]".into(),
            workspace: "/w".into(),
            branch: None,
            log_path: None,
            host_pid: 1,
        }
    }

    fn finished(n: u8, status: Status) -> Change {
        Change::Finished {
            automation: "fix".into(),
            task_id: id(n),
            status,
            exit_code: Some(0),
            reason: "exit".into(),
        }
    }

    #[test]
    fn changes_from_several_threads_are_all_committed_in_order() {
        let (_dir, path, thread) = fresh();
        let writers: Vec<_> = (0..4u8)
            .map(|t| {
                let writer = thread.writer();
                thread::spawn(move || {
                    let mut last = Ticket(0);
                    for n in 0..25u8 {
                        let n = t * 25 + n;
                        let first = writer.write(started(n));
                        let second = writer.write(finished(n, Status::Failed));
                        assert!(first < second);
                        last = second;
                    }
                    writer.wait(last).unwrap();
                    last
                })
            })
            .collect();
        let mut tickets: Vec<Ticket> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        tickets.sort();
        assert_eq!(tickets.last(), Some(&Ticket(200)));
        assert_eq!(thread.writer().last_issued(), Ticket(200));
        thread.close();
        let mut ledger = Ledger::open(&path).unwrap();
        for n in 0..100u8 {
            // The `finished` of each task came after its `attempt_started`.
            assert_eq!(
                ledger.decide("fix", &id(n)).unwrap(),
                Decision::Skip(Status::Failed),
                "task {n}"
            );
        }
    }

    #[test]
    fn a_writer_held_up_makes_write_wait_past_the_queue_limit() {
        // The writer thread is stuck in its first batch, so what follows queues up.
        let HeldUp {
            thread, blocker, ..
        } = HeldUp::new();
        let writer = thread.writer();
        let first = writer.write(started(0));
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let filler = {
            let writer = writer.clone();
            thread::spawn(move || {
                for n in 0..=MAX_QUEUED {
                    writer.write(Change::AgentStarted {
                        automation: "fix".into(),
                        task_id: format!("{n:064x}"),
                        agent: AgentProcess {
                            pid: 1,
                            start: None,
                        },
                    });
                }
                done_tx.send(()).unwrap();
            })
        };
        assert!(
            done_rx
                .recv_timeout(std::time::Duration::from_millis(500))
                .is_err(),
            "the change past the limit waits"
        );
        assert_eq!(writer.state(first), TicketState::Pending);
        blocker.execute_batch("COMMIT").unwrap();
        done_rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("it goes on once the writer could write");
        filler.join().unwrap();
        writer.wait(writer.last_issued()).unwrap();
        thread.close();
    }

    #[test]
    fn close_writes_what_is_queued() {
        let (_dir, path, thread) = fresh();
        let writer = thread.writer();
        for n in 0..50 {
            writer.write(started(n));
        }
        drop(thread);
        assert_eq!(writer.state(Ticket(50)), TicketState::Committed);
        let mut ledger = Ledger::open(&path).unwrap();
        assert_eq!(ledger.decide("fix", &id(49)).unwrap(), Decision::Dispatch);
        let rows = ledger.list(&crate::Filter::default(), 100).unwrap();
        assert_eq!(rows.len(), 50);
        assert!(rows.iter().all(|row| row.status == Status::Running));
    }

    #[test]
    fn a_failed_batch_fails_every_later_change_and_keeps_the_first_error() {
        let (_dir, path, thread) = fresh();
        let writer = thread.writer();
        let good = writer.write(started(1));
        writer.wait(good).unwrap();
        // Another connection holds the write lock past the busy timeout's reach: make
        // the table disappear instead, so the next statement fails at once.
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("DROP TABLE tasks")
            .unwrap();
        let bad = writer.write(started(2));
        assert_eq!(writer.wait(bad), Err(NotWritten));
        assert_eq!(writer.state(bad), TicketState::Failed);
        assert_eq!(writer.state(good), TicketState::Committed);
        let later = writer.write(started(3));
        assert_eq!(writer.wait(later), Err(NotWritten));
        assert!(writer.failed());
        let error = writer.take_error().expect("the first error is kept");
        assert!(
            error.to_string().contains("ledger.sqlite"),
            "the error names the file: {error}"
        );
        assert!(writer.take_error().is_none(), "given once");
        thread.close();
    }
}
