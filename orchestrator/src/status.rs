//! What a run is doing right now, published for whoever wants to look: `curupira
//! status`, a terminal's status line, an HTTP server.
//!
//! - **[`Live`]** is the run's state, kept by the dispatch loop as it goes: the attempts
//!   running (with their agent's pid once it started, their workspace and branch), the
//!   tasks waiting for a retry and until when, and each automation's rounds. A change
//!   costs one uncontended mutex and a map insert or removal; nothing is written or
//!   formatted on the dispatch loop's thread. [`Live::snapshot`] copies it out as a
//!   [`Published`] document.
//! - **[`Publisher`]** writes that document to a file (`<state folder>/status.json` for
//!   `curupira run`) on a thread of its own: when something changed, at most once per
//!   [`PUBLISH_EVERY`], each time to a temporary file renamed over the last, so a
//!   reader sees a whole document, the last or the one before, never half of one. A
//!   reader never blocks the run: the file is not locked, and the run never reads it.
//!   When the run ends, [`Publisher::finish`] writes a last document with `ended_at`
//!   set and nothing running. A host killed with SIGKILL leaves its last document as
//!   it was: whether a host still runs is the state folder's `run.lock`'s to say, not
//!   this file's.
//!
//! The document is versioned ([`VERSION`]); a member may be added within a version,
//! none is removed or changes meaning. Times are RFC 3339, UTC, in milliseconds.
//!
//! ```
//! use std::time::SystemTime;
//! use curupira_orchestrator::status::{HostInfo, Live, RunningAttempt};
//!
//! let live = Live::new(HostInfo::this_process("my-host 0.1.0", Some("curupira.toml".into())));
//! live.attempt_started(RunningAttempt::new("fix", "ab12", 1, SystemTime::now()));
//! live.agent_spawned("fix", "ab12", 4242);
//! let snapshot = live.snapshot();
//! assert_eq!(snapshot.running[0].pid, Some(4242));
//! live.attempt_ended("fix", "ab12");
//! assert!(live.snapshot().running.is_empty());
//! ```

use std::collections::HashMap;
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use curupira_task_identity::Pair;
use serde::{Deserialize, Serialize};

/// Whether a host runs on a state folder, as `curupira status`, the dashboard and
/// the page name it: from who holds its `run.lock` and what it last published.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostState {
    /// No host ever published its state here.
    #[default]
    None,
    /// A host holds `run.lock`.
    Running,
    /// No host does; the last one ended.
    Stopped,
    /// No host does, and the last one ended without saying so (killed).
    Gone,
}

/// The one rule of [`HostState`]: `holder` is who holds the state folder's
/// `run.lock`, `published` the last `status.json`. Returns the state and the document
/// that describes it: none when the holder is not the host that published (it has
/// only just started, and has not published yet).
pub fn host_state(
    holder: curupira_workspace::state::Holder,
    published: Option<Published>,
) -> (HostState, Option<Published>) {
    use curupira_workspace::state::Holder;
    match (holder, published) {
        (Holder::Held { pid }, Some(doc)) if pid.is_some_and(|pid| pid != doc.host.pid) => {
            (HostState::Running, None)
        }
        (Holder::Held { .. }, doc) => (HostState::Running, doc),
        (Holder::Free, Some(doc)) if doc.ended_at.is_some() => (HostState::Stopped, Some(doc)),
        (Holder::Free, Some(doc)) => (HostState::Gone, Some(doc)),
        (Holder::Free, None) => (HostState::None, None),
    }
}

/// The version of the [`Published`] document.
pub const VERSION: u32 = 1;

/// The longest a change waits before it is published, and the least time between two
/// writes of the file.
pub const PUBLISH_EVERY: Duration = Duration::from_secs(1);

/// A time as the document writes it: RFC 3339, UTC, milliseconds.
pub fn timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// A time the document wrote ([`timestamp`]'s form), or `None` when it is not one.
pub fn parse_timestamp(text: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(text.trim_end_matches('Z')).ok()
}

/// Seconds from the document's time `text` to `now`: negative when `text` is later,
/// 0 when it is not a time.
pub fn seconds_since(text: &str, now: SystemTime) -> f64 {
    match parse_timestamp(text).map(|time| now.duration_since(time)) {
        Some(Ok(elapsed)) => elapsed.as_secs_f64(),
        Some(Err(ahead)) => -ahead.duration().as_secs_f64(),
        None => 0.0,
    }
}

/// The host that runs: what it says of itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Its process id.
    pub pid: u32,
    /// When it started.
    pub started_at: String,
    /// Its name and version (e.g. `curupira 0.1.0`).
    pub version: String,
    /// The configuration it runs, as it was given.
    pub config: Option<String>,
}

impl HostInfo {
    /// This process, started now.
    pub fn this_process(version: impl Into<String>, config: Option<String>) -> HostInfo {
        HostInfo {
            pid: std::process::id(),
            started_at: timestamp(SystemTime::now()),
            version: version.into(),
            config,
        }
    }
}

/// An attempt that runs now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningAttempt {
    /// Its automation.
    pub automation: String,
    /// The task's identity (64 hex digits).
    pub task_id: String,
    /// Its number, as `task.started` numbers it (the ledger's, over every run).
    pub attempt: u32,
    /// When it started (its workspace and hooks included).
    pub started_at: String,
    /// Its agent's pid, once the agent started.
    pub pid: Option<u32>,
    /// Its working directory.
    pub workspace: Option<String>,
    /// Its Git branch, in a worktree of its own.
    pub branch: Option<String>,
    /// Its log file, when the run keeps logs.
    pub log_path: Option<String>,
    /// The task's pairs, so that a reader can say which item it is (none in a
    /// document of a host before they were published).
    #[serde(default)]
    pub values: Vec<Pair>,
}

impl RunningAttempt {
    /// An attempt of `task_id` started at `started_at`, with nothing else known yet.
    pub fn new(automation: &str, task_id: &str, attempt: u32, started_at: SystemTime) -> Self {
        RunningAttempt {
            automation: automation.to_owned(),
            task_id: task_id.to_owned(),
            attempt,
            started_at: timestamp(started_at),
            pid: None,
            workspace: None,
            branch: None,
            log_path: None,
            values: Vec::new(),
        }
    }
}

/// A task whose attempt failed, waiting for its next one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingRetry {
    /// Its automation.
    pub automation: String,
    /// The task's identity.
    pub task_id: String,
    /// The number of the attempt it waits for.
    pub attempt: u32,
    /// When that attempt is due (it starts then, or as soon as a slot is free).
    pub due_at: String,
    /// How the attempt before ended, in a word (`exit`, `timeout`, `stall`, …).
    pub reason: String,
    /// What went wrong, in a sentence, when the host knew.
    pub error: Option<String>,
    /// The agent's exit status, when it had one.
    pub exit_code: Option<i32>,
    /// The task's pairs (none in a document of a host before they were published).
    #[serde(default)]
    pub values: Vec<Pair>,
}

/// An automation's rounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutomationState {
    /// Its name.
    pub name: String,
    /// Whether it still runs (an automation that failed is stopped).
    pub active: bool,
    /// Rounds started so far.
    pub rounds: u32,
    /// Whether a round is in progress (polling, or waiting for its tasks).
    pub round_running: bool,
    /// When its last round started.
    pub last_round_started_at: Option<String>,
    /// When its last round ended.
    pub last_round_ended_at: Option<String>,
    /// When its next round is due; `None` while one runs, in a `--once` run, or when
    /// it is stopped.
    pub next_round_at: Option<String>,
    /// A schedule's next tick (a `cron` automation), when its trigger says
    /// ([`Live::next_tick`]); `None` for other automations, or when its window ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_tick: Option<String>,
}

/// The document a run publishes ([`Live::snapshot`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Published {
    /// [`VERSION`].
    pub version: u32,
    /// The host.
    pub host: HostInfo,
    /// When this document was made.
    pub updated_at: String,
    /// When the run ended; `None` while it runs (or when it was killed).
    pub ended_at: Option<String>,
    /// Whether the run is stopping (no new task starts).
    pub stopping: bool,
    /// What runs now, the oldest first.
    pub running: Vec<RunningAttempt>,
    /// What waits for a retry, the soonest first.
    pub retrying: Vec<WaitingRetry>,
    /// Each automation of the run, in the run's order.
    pub automations: Vec<AutomationState>,
}

/// Why [`read`] could not give a document.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// The file cannot be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// The file is not a document of this version.
    #[error("`{}` is not a status document of version {VERSION}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

/// Reads the document a [`Publisher`] wrote at `path`: `None` when there is none.
pub fn read(path: &Path) -> Result<Option<Published>, StatusError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StatusError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    let invalid = |message: String| StatusError::Invalid {
        path: path.to_owned(),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|err| invalid(err.to_string()))?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(version) if version == u64::from(VERSION) => {}
        Some(version) => return Err(invalid(format!("its version is {version}"))),
        None => return Err(invalid("it has no `version`".to_owned())),
    }
    serde_json::from_value(value)
        .map(Some)
        .map_err(|err| invalid(err.to_string()))
}

/// The run's live state, shared: cloning gives another handle to the same state.
#[derive(Debug, Clone)]
pub struct Live {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Bumped at every change: what the publisher compares.
    generation: AtomicU64,
}

#[derive(Debug)]
struct State {
    host: HostInfo,
    ended_at: Option<SystemTime>,
    stopping: bool,
    running: HashMap<(String, String), RunningAttempt>,
    retrying: HashMap<(String, String), WaitingRetry>,
    automations: Vec<AutomationState>,
}

impl Live {
    /// The state of a run of `host` that has done nothing yet.
    pub fn new(host: HostInfo) -> Live {
        Live {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    host,
                    ended_at: None,
                    stopping: false,
                    running: HashMap::new(),
                    retrying: HashMap::new(),
                    automations: Vec::new(),
                }),
                generation: AtomicU64::new(0),
            }),
        }
    }

    fn change(&self, change: impl FnOnce(&mut State)) {
        let mut state = self.lock();
        change(&mut state);
        self.shared.generation.fetch_add(1, Ordering::Release);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A number that changes whenever the state does.
    pub fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::Acquire)
    }

    /// An automation of the run, before its first round (in the run's order); one
    /// known already (a reloaded configuration changed it) is active again, its round
    /// due at `next_round_at` unless one runs.
    pub fn automation_added(&self, name: &str, next_round_at: Option<SystemTime>) {
        self.change(|state| {
            if let Some(known) = state.automations.iter_mut().find(|a| a.name == name) {
                known.active = true;
                if !known.round_running {
                    known.next_round_at = next_round_at.map(timestamp);
                }
                return;
            }
            state.automations.push(AutomationState {
                name: name.to_owned(),
                active: true,
                rounds: 0,
                round_running: false,
                last_round_started_at: None,
                last_round_ended_at: None,
                next_round_at: next_round_at.map(timestamp),
                next_tick: None,
            });
        });
    }

    /// The next tick of `automation`'s schedule is at `tick` (`None`: it has no more),
    /// as its trigger worked out at its last poll.
    pub fn next_tick(&self, automation: &str, tick: Option<SystemTime>) {
        let text = tick.map(timestamp);
        let unchanged = self
            .lock()
            .automations
            .iter()
            .any(|a| a.name == automation && a.next_tick == text);
        if unchanged {
            return;
        }
        self.change(|state| {
            if let Some(run) = state.automations.iter_mut().find(|a| a.name == automation) {
                run.next_tick = text;
            }
        });
    }

    /// A round of `automation` started.
    pub fn round_started(&self, automation: &str) {
        let now = timestamp(SystemTime::now());
        self.change(|state| {
            if let Some(run) = state.automations.iter_mut().find(|a| a.name == automation) {
                run.rounds += 1;
                run.round_running = true;
                run.last_round_started_at = Some(now);
                run.next_round_at = None;
            }
        });
    }

    /// A round of `automation` ended; the next is due at `next` (`None`: none is).
    pub fn round_ended(&self, automation: &str, next: Option<SystemTime>) {
        let now = timestamp(SystemTime::now());
        self.change(|state| {
            if let Some(run) = state.automations.iter_mut().find(|a| a.name == automation) {
                run.round_running = false;
                run.last_round_ended_at = Some(now);
                run.next_round_at = next.filter(|_| run.active).map(timestamp);
            }
        });
    }

    /// `automation` failed and is stopped: it has no next round.
    pub fn automation_stopped(&self, automation: &str) {
        self.change(|state| {
            if let Some(run) = state.automations.iter_mut().find(|a| a.name == automation) {
                run.active = false;
                run.next_round_at = None;
            }
        });
    }

    /// A reloaded configuration removed `automation`: it is no longer listed (its
    /// running attempts are, until they end).
    pub fn automation_removed(&self, automation: &str) {
        self.change(|state| state.automations.retain(|a| a.name != automation));
    }

    /// An attempt started (its workspace is being prepared; its agent follows).
    pub fn attempt_started(&self, attempt: RunningAttempt) {
        self.change(|state| {
            let key = (attempt.automation.clone(), attempt.task_id.clone());
            state.retrying.remove(&key);
            state.running.insert(key, attempt);
        });
    }

    /// The agent of `task_id`'s running attempt started as `pid`.
    pub fn agent_spawned(&self, automation: &str, task_id: &str, pid: u32) {
        self.change(|state| {
            let key = (automation.to_owned(), task_id.to_owned());
            if let Some(attempt) = state.running.get_mut(&key) {
                attempt.pid = Some(pid);
            }
        });
    }

    /// `task_id`'s running attempt ended.
    pub fn attempt_ended(&self, automation: &str, task_id: &str) {
        self.change(|state| {
            state
                .running
                .remove(&(automation.to_owned(), task_id.to_owned()));
        });
    }

    /// A task waits for a retry.
    pub fn retry_waiting(&self, retry: WaitingRetry) {
        self.change(|state| {
            let key = (retry.automation.clone(), retry.task_id.clone());
            state.retrying.insert(key, retry);
        });
    }

    /// A task no longer waits for a retry (its attempt started, or the run stopped).
    pub fn retry_dropped(&self, automation: &str, task_id: &str) {
        self.change(|state| {
            state
                .retrying
                .remove(&(automation.to_owned(), task_id.to_owned()));
        });
    }

    /// The run is stopping: no new task starts.
    pub fn stopping(&self) {
        self.change(|state| state.stopping = true);
    }

    /// The run ended: nothing runs or waits any more.
    pub fn ended(&self) {
        self.change(|state| {
            state.ended_at = Some(SystemTime::now());
            state.running.clear();
            state.retrying.clear();
            for run in &mut state.automations {
                run.round_running = false;
                run.next_round_at = None;
            }
        });
    }

    /// The state as a document, made now.
    pub fn snapshot(&self) -> Published {
        let state = self.lock();
        let mut running: Vec<RunningAttempt> = state.running.values().cloned().collect();
        running.sort_by(|a, b| {
            (&a.started_at, &a.automation, &a.task_id).cmp(&(
                &b.started_at,
                &b.automation,
                &b.task_id,
            ))
        });
        let mut retrying: Vec<WaitingRetry> = state.retrying.values().cloned().collect();
        retrying.sort_by(|a, b| {
            (&a.due_at, &a.automation, &a.task_id).cmp(&(&b.due_at, &b.automation, &b.task_id))
        });
        Published {
            version: VERSION,
            host: state.host.clone(),
            updated_at: timestamp(SystemTime::now()),
            ended_at: state.ended_at.map(timestamp),
            stopping: state.stopping,
            running,
            retrying,
            automations: state.automations.clone(),
        }
    }
}

/// Writes a [`Live`] state's document to a file, on a thread of its own (see the
/// module's documentation).
#[derive(Debug)]
pub struct Publisher {
    live: Live,
    path: PathBuf,
    signal: Arc<(Mutex<bool>, Condvar)>,
    failed: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Publisher {
    /// Writes `live`'s document to `path` now, then whenever it changes (at most once
    /// per [`PUBLISH_EVERY`]) until [`finish`](Self::finish). The file is for others
    /// to read, never the run's own state: a write that fails (a full disk) is logged,
    /// once, and the run goes on; the next change is written again. The error is a
    /// thread that cannot start.
    pub fn start(live: Live, path: &Path) -> io::Result<Publisher> {
        // Read before the document is made: a change made meanwhile is written again.
        let written = live.generation();
        let failed = Arc::new(AtomicBool::new(false));
        if let Err(err) = write_atomically(path, &document(&live)) {
            warn_once(&failed, path, &err);
        }
        let signal = Arc::new((Mutex::new(false), Condvar::new()));
        let thread = {
            let live = live.clone();
            let path = path.to_owned();
            let signal = Arc::clone(&signal);
            let failed = Arc::clone(&failed);
            std::thread::Builder::new()
                .name("curupira-status".to_owned())
                .spawn(move || publish(&live, &path, written, &signal, &failed))?
        };
        Ok(Publisher {
            live,
            path: path.to_owned(),
            signal,
            failed,
            thread: Some(thread),
        })
    }

    /// The file it writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Marks the run ended, writes the last document, and stops the thread.
    pub fn finish(mut self) -> io::Result<()> {
        self.stop_thread();
        self.live.ended();
        write_atomically(&self.path, &document(&self.live))
    }

    fn stop_thread(&mut self) {
        let (done, wake) = &*self.signal;
        *done.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    /// Whether a write failed.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

fn document(live: &Live) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(&live.snapshot()).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// The publisher's thread: looks every [`PUBLISH_EVERY`], writes when the state
/// changed.
fn publish(
    live: &Live,
    path: &Path,
    mut written: u64,
    signal: &(Mutex<bool>, Condvar),
    failed: &AtomicBool,
) {
    let (done, wake) = signal;
    let mut stopped = done.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if *stopped {
            return;
        }
        let (guard, _) = wake
            .wait_timeout(stopped, PUBLISH_EVERY)
            .unwrap_or_else(PoisonError::into_inner);
        stopped = guard;
        if *stopped {
            return;
        }
        let generation = live.generation();
        if generation == written {
            continue;
        }
        written = generation;
        if let Err(err) = write_atomically(path, &document(live)) {
            warn_once(failed, path, &err);
        }
    }
}

/// Logs a failed write, the first time only.
fn warn_once(failed: &AtomicBool, path: &Path, err: &io::Error) {
    if !failed.swap(true, Ordering::AcqRel) {
        tracing::warn!(
            "cannot publish the run's status to `{}`: {err}; `curupira status` shows an \
             older state",
            path.display()
        );
    }
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`: a
/// reader sees the old document or the new one, whole. Not synced to disk: after a
/// crash of the machine the file may be empty, which a reader reports as not a
/// document.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&temporary)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> HostInfo {
        HostInfo::this_process("test 1.0", Some("curupira.toml".to_owned()))
    }

    #[test]
    fn a_retry_replaces_nothing_and_an_attempt_takes_the_retry_up() {
        let live = Live::new(host());
        live.automation_added("fix", None);
        live.round_started("fix");
        live.attempt_started(RunningAttempt::new("fix", "a", 1, SystemTime::now()));
        live.attempt_ended("fix", "a");
        live.retry_waiting(WaitingRetry {
            automation: "fix".to_owned(),
            task_id: "a".to_owned(),
            attempt: 2,
            due_at: timestamp(SystemTime::now()),
            reason: "exit".to_owned(),
            error: None,
            exit_code: Some(3),
            values: Vec::new(),
        });
        let snapshot = live.snapshot();
        assert!(snapshot.running.is_empty());
        assert_eq!(snapshot.retrying[0].attempt, 2);
        assert_eq!(snapshot.retrying[0].exit_code, Some(3));
        assert!(snapshot.automations[0].round_running);
        assert_eq!(snapshot.automations[0].rounds, 1);

        live.attempt_started(RunningAttempt::new("fix", "a", 2, SystemTime::now()));
        let snapshot = live.snapshot();
        assert!(snapshot.retrying.is_empty(), "{snapshot:?}");
        assert_eq!(snapshot.running[0].attempt, 2);
    }

    #[test]
    fn a_round_that_ends_says_when_the_next_is_due_unless_the_automation_stopped() {
        let live = Live::new(host());
        live.automation_added("fix", Some(SystemTime::now()));
        live.automation_added("triage", None);
        live.round_started("fix");
        assert_eq!(live.snapshot().automations[0].next_round_at, None);
        let next = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
        live.round_ended("fix", Some(next));
        let fix = &live.snapshot().automations[0];
        assert_eq!(
            fix.next_round_at.as_deref(),
            Some("2033-05-18T03:33:20.000Z")
        );
        assert!(fix.last_round_ended_at.is_some());
        live.automation_stopped("fix");
        live.round_ended("fix", Some(next));
        assert_eq!(live.snapshot().automations[0].next_round_at, None);
        assert!(!live.snapshot().automations[0].active);
    }

    #[test]
    fn the_publisher_writes_whole_documents_and_a_last_one_at_the_end() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("status.json");
        let live = Live::new(host());
        live.automation_added("fix", None);
        let publisher = Publisher::start(live.clone(), &path).unwrap();
        let first = read(&path).unwrap().unwrap();
        assert_eq!(first.version, VERSION);
        assert_eq!(first.host.pid, std::process::id());
        assert!(first.running.is_empty());

        live.attempt_started(RunningAttempt::new("fix", "a", 1, SystemTime::now()));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while read(&path).unwrap().unwrap().running.is_empty() {
            assert!(std::time::Instant::now() < deadline, "never published");
            std::thread::sleep(Duration::from_millis(20));
        }
        publisher.finish().unwrap();
        let last = read(&path).unwrap().unwrap();
        assert!(last.ended_at.is_some());
        assert!(last.running.is_empty());
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(folder.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["status.json"]);
    }

    #[test]
    fn a_file_that_is_not_a_document_says_why() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("status.json");
        assert!(read(&path).unwrap().is_none());
        std::fs::write(&path, "").unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(
            err.contains("is not a status document of version 1"),
            "{err}"
        );
        std::fs::write(&path, r#"{"version": 9}"#).unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(err.ends_with("its version is 9"), "{err}");
    }

    #[test]
    fn timestamps_read_back() {
        let time = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        assert_eq!(parse_timestamp(&timestamp(time)), Some(time));
        assert_eq!(parse_timestamp("yesterday"), None);
    }
}
