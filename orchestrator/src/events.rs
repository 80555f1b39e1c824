//! What a run reports: [`Event`]s, handed to an [`EventSink`] in order. A host prints
//! them (`curupira run` writes one per line, as JSON with `--format json` or as a
//! sentence); [`JsonLines`] writes the JSON form, and a `Vec<Event>` collects them.
//!
//! The JSON events (every one has `event` and `automation`, except
//! `extension.failed`, which has `extension`, and the `config.*` events, which are
//! about the whole configuration):
//!
//! | `event` | members | when |
//! |---|---|---|
//! | `task.started` | `task_id`, `values`, `attempt`, `workspace` | each attempt (`attempt`: the ledger's number, over every run); `trigger/onStarted` before the first |
//! | `task.retrying` | `task_id`, `attempt`, `delay_seconds`, `reason`, `exit_code`, `error`?, `duration_seconds` (of the attempt that failed) | an attempt failed and `retries` allows another, after `delay_seconds` |
//! | `task.finished` | `task_id`, `values`, `exit_code`, `error`?, `reason`, `duration_seconds` | after the last attempt and `trigger/onFinished` (not sent for `spawn-failed` and `workspace-failed`: the agent never started, the task is reported, not finished) |
//! | `task.interrupted` | `task_id`, `values`, `reason` | a started task will not finish in this process: the host's shutdown stopped it or its wait for a retry (`shutdown`), or the task ledger could not be written (`ledger-failed`); no `trigger/onFinished`, so a later run hands it over again |
//! | `workspace.created` | `task_id`, `workspace`, `branch`, `reused` | worktree mode: the task's worktree was made (or an earlier run's taken up); printed then, after `task.started`, while its hooks and agent run |
//! | `workspace.removed` | `task_id`, `workspace` | worktree mode: removed after the task, per `cleanup` (the branch stays) |
//! | `task.skipped` | `task_id`, `values` | a poll returned an identity this automation already handled: in this process, or (with the durable ledger) finished in an earlier one |
//! | `task.rendered` | `task_id`, `values`, `prompt` | `--dry-run`: instead of started/finished |
//! | `task.unfilled` | `task_id`, `values`, `placeholders` (`[{key, did_you_mean?}]`), `refused` | the task's prompt leaves placeholders no item key and no host variable fills: once per automation and key, and for every task refused for it (`unfilled = "fail"`: not started, not finished) |
//! | `round.finished` | `polled`, `dispatched`, `skipped`, `failed`, `rejected` | after each complete round |
//! | `automation.failed` | `code`, `message`, `extension`?, `method`? | the automation stops (for the rest of the process) |
//! | `extension.failed` | `extension`, `method`, `code`, `message` | an extension failed outside any automation's step (at `shutdown`) |
//! | `config.reloaded` | `added`, `removed`, `changed` (`[{automation, what}]`), `restart_needed` | `run --watch`: the configuration changed and checks; applied between rounds ([`crate::reload`]). `what` names what changed (`prompt`, `agent`, `trigger`, …); `restart_needed` what only a restart applies (kept as running) |
//! | `config.refused` | `diagnostics` (one line each) | `run --watch`: the configuration changed but does not check, or an automation it adds or changes cannot be prepared; the running configuration is kept |
//! | `host.waiting` | `idle_seconds`, `next_round_at`, `next_round_in_seconds` | a continuous run with `idle_notice` set: nothing ran or waited for a retry for that long; said again each time it passes. `automation` is the one whose round is next |
//!
//! - `values` is the item's pairs as polled: `[{"key": k, "value": v}, …]`.
//! - `exit_code` is the agent's exit status, or `null` when it was killed by a signal
//!   or could not be started; then `error` says why.
//! - `polled` counts the items the round's polls returned (a final `null` is not an
//!   item); `dispatched` the items handed to the agent (rendered, in a dry run);
//!   `skipped` the repeated identities; `failed` the dispatched tasks whose agent
//!   failed.
//! - `code` is the protocol error number (-32004, …); `message` is the whole sentence,
//!   naming the extension, the method and the code.

use std::io::{self, Write};

use curupira_task_identity::Pair;
use serde::Serialize;

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event")]
pub enum Event {
    /// An attempt of a task starts (`trigger/onStarted` was sent before the first).
    #[serde(rename = "task.started")]
    TaskStarted {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The item's pairs.
        values: Vec<Pair>,
        /// The attempt's number, the durable ledger's: counted over every run, from 1
        /// (from 1 in this run without a ledger).
        attempt: u32,
        /// The agent's working directory.
        workspace: String,
    },
    /// An attempt of a task failed and another will run after a pause (no slot is held
    /// meanwhile).
    #[serde(rename = "task.retrying")]
    TaskRetrying {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The number of the attempt to come, as `task.started` numbers it.
        attempt: u32,
        /// The pause before it, in seconds.
        delay_seconds: f64,
        /// How the attempt before it ended: `exit`, `timeout`, `stalled`, `signal`,
        /// `spawn-failed`, `hook-failed` or `workspace-failed`.
        reason: String,
        /// That attempt's exit status; `None` when it had none.
        exit_code: Option<i32>,
        /// Why it has no exit status, or why the agent could not run.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// How long the attempt that failed took, in seconds.
        duration_seconds: f64,
    },
    /// A started task will not finish in this process (no `trigger/onFinished`): a
    /// later run hands it over again.
    #[serde(rename = "task.interrupted")]
    TaskInterrupted {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The item's pairs.
        values: Vec<Pair>,
        /// Why: `shutdown` (the host's own shutdown stopped its agent, its hook or its
        /// wait for a retry) or `ledger-failed` (the task ledger could not be written).
        reason: String,
    },
    /// A task ended: the agent exited and `trigger/onFinished` was sent.
    #[serde(rename = "task.finished")]
    TaskFinished {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The item's pairs.
        values: Vec<Pair>,
        /// The agent's exit status; `None` when it had none.
        exit_code: Option<i32>,
        /// Why there is no exit status, or why the agent could not run.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// How the last attempt ended: `exit`, `timeout`, `stalled`, `signal`,
        /// `spawn-failed`, `hook-failed` or `workspace-failed`.
        reason: String,
        /// The last attempt's duration, in seconds.
        duration_seconds: f64,
        /// When it failed: the end of what its agent wrote, as the reference host
        /// quotes it (its stderr, trimmed, else its stdout's last non-blank line; at
        /// most 600 characters, behind `…` when cut). Left out when it succeeded or
        /// wrote nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
    },
    /// An attempt goes on with the session of an earlier one (a provider's agent whose
    /// attempt did not end by itself): sent before its agent starts.
    #[serde(rename = "task.resumed")]
    TaskResumed {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The attempt's number, as `task.started` numbers it.
        attempt: u32,
        /// The provider (`claude`, `codex`, …).
        provider: String,
        /// The session it resumes.
        session_id: String,
    },
    /// A task's worktree was made (or an earlier run's taken up again).
    #[serde(rename = "workspace.created")]
    WorkspaceCreated {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The worktree's folder.
        workspace: String,
        /// Its branch.
        branch: String,
        /// Whether an earlier run's worktree was taken up as it was.
        reused: bool,
    },
    /// A task's worktree was removed (its branch stays).
    #[serde(rename = "workspace.removed")]
    WorkspaceRemoved {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The worktree's folder.
        workspace: String,
    },
    /// A poll returned an identity already handled: by this process, or finished by an
    /// earlier one (the durable ledger).
    #[serde(rename = "task.skipped")]
    TaskSkipped {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The item's pairs.
        values: Vec<Pair>,
    },
    /// `--dry-run`: the prompt a task would get.
    #[serde(rename = "task.rendered")]
    TaskRendered {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The item's pairs.
        values: Vec<Pair>,
        /// The rendered prompt.
        prompt: String,
    },
    /// A task's prompt leaves placeholders that neither its item nor the host fills:
    /// they would reach the agent as written (`${titel}`). Said once per automation and
    /// key in a run (a task whose unfilled keys were all said already says nothing), and
    /// for every task refused for it (`unfilled = "fail"`): no `trigger/onStarted`, no
    /// agent, nothing in the ledger; not finished, so a later run hands it over again
    /// once the prompt (or the item) is mended.
    #[serde(rename = "task.unfilled")]
    TaskUnfilled {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The item's pairs.
        values: Vec<Pair>,
        /// Every placeholder of the prompt left unfilled for this task, once each, in
        /// the prompt's order.
        placeholders: Vec<UnfilledPlaceholder>,
        /// Whether the task was refused (`unfilled = "fail"`) rather than dispatched with
        /// the placeholders as written.
        refused: bool,
    },
    /// A task refused before its agent because its prompt cannot be rendered for its
    /// item (a Jinja prompt using a field the item lacks, an unknown filter): no
    /// `trigger/onStarted`, no agent, nothing in the ledger; not finished, so a later
    /// run hands it over again. The run counts it as a failure (exit 1), as the
    /// reference host does.
    #[serde(rename = "task.refused")]
    TaskRefused {
        /// The automation.
        automation: String,
        /// The task identity.
        task_id: String,
        /// The item's pairs.
        values: Vec<Pair>,
        /// Why, in the reference host's words (`automation "e1": prompt template
        /// error: …`).
        reason: String,
    },
    /// A round of polls ended normally.
    #[serde(rename = "round.finished")]
    RoundFinished {
        /// The automation.
        automation: String,
        /// Items the polls returned.
        polled: u32,
        /// Items dispatched (rendered, in a dry run).
        dispatched: u32,
        /// Repeated identities skipped.
        skipped: u32,
        /// Dispatched tasks whose agent failed.
        failed: u32,
        /// Entries of its source (queue lines, for `local-queue`) its trigger skipped
        /// as unreadable during the round's polls, as the extension counted them
        /// (**ours**: only an extension that reports it, to a host that announced it
        /// reads it; 0 from any other).
        rejected: u64,
    },
    /// The automation failed and is stopped.
    #[serde(rename = "automation.failed")]
    AutomationFailed {
        /// The automation.
        automation: String,
        /// The protocol error code.
        code: i64,
        /// The whole sentence.
        message: String,
        /// The extension involved, when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        extension: Option<String>,
        /// The method that failed, when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        method: Option<String>,
    },
    /// A continuous run has been idle (no attempt ran or waited for a retry) for its
    /// notice interval ([`crate::RunOptions::idle_notice`]): said once per interval.
    #[serde(rename = "host.waiting")]
    Waiting {
        /// The automation whose round is next.
        automation: String,
        /// How long nothing ran, in seconds.
        idle_seconds: f64,
        /// When that round is due (RFC 3339, UTC).
        next_round_at: String,
        /// In how many seconds it is due.
        next_round_in_seconds: f64,
    },
    /// A changed configuration was taken up ([`crate::reload`]).
    #[serde(rename = "config.reloaded")]
    ConfigReloaded {
        /// The automations it added, in its order.
        added: Vec<String>,
        /// The automations it removed: they poll no more; their tasks finish.
        removed: Vec<String>,
        /// The automations it changed, and what changed in each.
        changed: Vec<ChangedAutomation>,
        /// The changes only a restart applies (the running value is kept).
        restart_needed: Vec<String>,
    },
    /// A changed configuration was refused: the running one is kept.
    #[serde(rename = "config.refused")]
    ConfigRefused {
        /// Why, one line each (the config's diagnostics, or the preparation's failures).
        diagnostics: Vec<String>,
    },
    /// An extension failed outside any automation's step (at shutdown).
    #[serde(rename = "extension.failed")]
    ExtensionFailed {
        /// The extension.
        extension: String,
        /// The method that failed.
        method: String,
        /// The protocol error code.
        code: i64,
        /// The whole sentence.
        message: String,
    },
}

/// An automation a reload changed ([`Event::ConfigReloaded`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangedAutomation {
    /// Its name.
    pub automation: String,
    /// What changed: some of `trigger`, `arguments`, `prompt`, `agent`, `limits`,
    /// `retries`, `polling`, `workspace`, `repository`; `restored` for one an earlier
    /// reload had removed.
    pub what: Vec<String>,
}

/// A placeholder a task's prompt leaves unfilled ([`Event::TaskUnfilled`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnfilledPlaceholder {
    /// Its key, as written between `${` and `}`.
    pub key: String,
    /// The closest key the item or the host has, when one is close (`title` for
    /// `titel`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub did_you_mean: Option<String>,
}

impl Event {
    /// Whether this event means the run had a failure (exit code 1).
    pub fn is_failure(&self) -> bool {
        match self {
            Event::TaskFinished {
                exit_code, error, ..
            } => *exit_code != Some(0) || error.is_some(),
            Event::AutomationFailed { .. }
            | Event::ExtensionFailed { .. }
            | Event::TaskRefused { .. } => true,
            Event::TaskUnfilled { refused, .. } => *refused,
            Event::TaskStarted { .. }
            | Event::TaskRetrying { .. }
            | Event::TaskResumed { .. }
            | Event::WorkspaceCreated { .. }
            | Event::WorkspaceRemoved { .. }
            | Event::TaskSkipped { .. }
            | Event::TaskInterrupted { .. }
            | Event::TaskRendered { .. }
            | Event::RoundFinished { .. }
            | Event::Waiting { .. }
            | Event::ConfigReloaded { .. }
            | Event::ConfigRefused { .. } => false,
        }
    }
}

/// A task id as people read it: its first 12 digits (as Git shortens commit ids), in
/// human events, logs and forwarded output lines alike; the JSON events carry it whole.
///
/// ```
/// assert_eq!(curupira_orchestrator::events::short_id(&"ab".repeat(32)), "abababababab");
/// ```
pub fn short_id(task_id: &str) -> &str {
    task_id.get(..12).unwrap_or(task_id)
}

/// Where a run's events go, in the order they happened. A sink that fails (a closed
/// stdout) stops the run with that error.
pub trait EventSink {
    /// Takes one event.
    fn emit(&mut self, event: &Event) -> io::Result<()>;
}

/// Collects the events.
impl EventSink for Vec<Event> {
    fn emit(&mut self, event: &Event) -> io::Result<()> {
        self.push(event.clone());
        Ok(())
    }
}

impl<S: EventSink + ?Sized> EventSink for &mut S {
    fn emit(&mut self, event: &Event) -> io::Result<()> {
        (**self).emit(event)
    }
}

/// Writes each event as one line of JSON (the members of the table above), flushed at
/// once so a reader sees it.
///
/// ```
/// use curupira_orchestrator::events::{Event, EventSink, JsonLines};
///
/// let mut out = JsonLines::new(Vec::new());
/// out.emit(&Event::RoundFinished {
///     automation: "triage".into(),
///     polled: 2,
///     dispatched: 1,
///     skipped: 1,
///     failed: 0,
///     rejected: 0,
/// })?;
/// assert_eq!(
///     String::from_utf8(out.into_inner()).unwrap(),
///     "{\"event\":\"round.finished\",\"automation\":\"triage\",\"polled\":2,\"dispatched\":1,\"skipped\":1,\"failed\":0,\"rejected\":0}\n"
/// );
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct JsonLines<W: Write> {
    out: W,
}

impl<W: Write> JsonLines<W> {
    /// Events to `out`.
    pub fn new(out: W) -> Self {
        Self { out }
    }

    /// The underlying stream.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> EventSink for JsonLines<W> {
    fn emit(&mut self, event: &Event) -> io::Result<()> {
        let line = serde_json::to_string(event).map_err(io::Error::other)?;
        writeln!(self.out, "{line}")?;
        self.out.flush()
    }
}
