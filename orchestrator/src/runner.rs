//! The automation pipeline behind `curupira run` (SPEC section 1, "What the host does
//! with an automation").
//!
//! # Order of work
//!
//! 1. **Prepare** every selected automation, in the config's order: check that
//!    `${repository}` can be filled if the prompt uses it; start its extension if this
//!    is the first automation using it (`initialize`, then `describe`, compared with
//!    the manifest's `trigger_types`: a difference is logged as a warning);
//!    `trigger/schema`; fill the arguments with the schema's `default`s
//!    ([`curupira_protocol::apply_defaults`]); `trigger/validate`.
//! 2. **Rounds and dispatch** (the `Scheduler` loop, bookkeeping in
//!    [`crate::dispatch`]). Each automation's round polls until `batch_size` items
//!    were new work (an item this process has in flight or the ledger finished does
//!    not count), at most 10 × `batch_size` times in all, stopping at the first
//!    `null`, but takes the next item only when an agent slot is
//!    free (`[settings.agent] max_concurrent`, default 1, and the automation's own
//!    `max_concurrent` cap), so an item an extension hands over is always dispatched
//!    at once, never queued. Automations wanting a slot are served round robin. Each
//!    item gets its task identity and is skipped (`task.skipped`) when this process
//!    has it in flight or finished; otherwise its prompt is rendered with the pairs
//!    plus `repository` and `automation`, `trigger/onStarted` is sent, and the agent
//!    runs on a worker thread (a pool that grows to the most attempts ever running at
//!    once, at most `max_concurrent`, and is reused). Polls and every extension call
//!    stay on this thread, in
//!    order: one request in flight per extension. When an attempt ends: a failure with
//!    `retries` left emits `task.retrying` and waits `retry_backoff_seconds` (doubling,
//!    capped) *without a slot*; due retries start before new polls. Otherwise
//!    `trigger/onFinished` is sent (even when the agent failed), `task.finished` is
//!    emitted and the identity is recorded; a worktree the cleanup policy removes goes
//!    on a worker thread (its slot is free already), then `workspace.removed`. A
//!    round ends (`round.finished`) when its polls are done, its last task finished
//!    and its last worktree removal ended. With `--once` there is one round per
//!    automation; otherwise an automation's next round starts `interval_seconds`
//!    after its last one ended.
//! 3. **Shutdown** of every started extension, in the order they were started.
//!
//! Extension processes ([`crate::extensions`]): the preparation uses one process per
//! extension, shut down before the first round; each round then joins a process of
//! its extension at its first poll (shared with the rounds of other automations on
//! it, never with an earlier round of its own automation), sends its polls and its
//! tasks' `onStarted` / `onFinished` there, and leaves it when its last task
//! finished: a process no round holds is shut down. The built-in `local-queue` keeps
//! one process for the whole run.
//!
//! Besides this loop and the agents' worker threads, a run with a ledger has two
//! threads that nothing waits for, both at a lower priority: the ledger's writer
//! ([`curupira_ledger::WriterThread`], which the caller starts) and the event printer
//! (`crate::journal`), which prints each event once the ledger changes made before it
//! are committed. Without a ledger the loop prints its events itself. [`run`] returns
//! when every change is committed and every event printed.
//!
//! # Failures
//!
//! A failure of any extension step (an error reply, a protocol violation, a timeout, a
//! crash) emits `automation.failed` and stops that automation for the rest of the
//! process (its running tasks still finish); the others go on. A transport failure or
//! a timeout also makes the extension unusable, so every automation sharing it fails
//! with the same cause when it next needs it (within the process: the next round of
//! another automation starts a fresh one; a persistent extension is not restarted).
//! When no automation
//! is left, continuous mode ends. A task whose agent fails (after its retries) is
//! reported in `task.finished` and makes the run's exit code 1 without stopping the
//! automation.
//!
//! `${repository}` with no `settings.repository` and no Git remote fails (with -32003,
//! "configuration validation failure") only the automations whose prompt uses it.
//!
//! # Stopping
//!
//! [`Stop`] counts SIGINT/SIGTERM. Once one arrived, no new poll and no new attempt
//! starts; tasks waiting for a retry are *interrupted* (no `onFinished`, identity
//! forgotten, so a later run hands them over again), and so is a running task whose
//! attempt fails from then on while it has retries left (it would have been retried);
//! running agents are waited for,
//! then every extension gets `shutdown`. A second signal kills the running agents;
//! such a task is interrupted too. The loop waits in steps of at most 50 ms, checking
//! for a signal.
//!
//! # Dry run
//!
//! `--dry-run` prepares and polls exactly as a real run does, records identities the
//! same way (so a trigger that keeps returning the same item shows it once, then
//! skips it), and emits `task.rendered` with the prompt instead of starting anything:
//! no agent, no `onStarted`, no `onFinished`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use curupira_client::{CallError, Client};
use curupira_jsonrpc::ErrorCode;
use curupira_ledger::{
    AgentProcess, Change, Decision, LedgerError, Requested, RunBackend, Status, Writer,
};
use curupira_protocol::{
    Configuration, PollParams, TriggerSchema, ValidateResult, ValidationError, is_core_key,
};
use curupira_task_identity::{Pair, TaskId};
use curupira_template::jinja::JinjaPrompt;
use curupira_template::{Chain, Template};

use crate::agent::{
    AgentLimits, AgentObserver, AgentRun, AttemptOutcome, EndReason, run_attempt_observed,
};
use crate::dispatch::{Claim, Ledger, RetryQueue, Slots};
use crate::events::{ChangedAutomation, Event, EventSink, UnfilledPlaceholder, short_id};
use crate::journal::Journal;
use crate::plan::{Automation, Plan, PromptSyntax, Unfilled};
use crate::reload::{Offer, Reloads};
use crate::status::{Live, RunningAttempt, WaitingRetry};
use curupira_process::stop::Stop;
use curupira_process::watchdog::{Label, SpawnWindow, Watch};
use curupira_workspace::{
    ExpectedAdd, Finished, HookError, HookKind, HookOutput, Origin, Workspace, WorkspaceError,
    WorkspaceMode, WorkspaceSpec, Workspaces, expect_add,
};

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// One round per automation, then shut down.
    pub once: bool,
    /// Rounds while they hand over something new, then shut down (the reference
    /// host's `run`): a round that dispatched a task is followed at once by another;
    /// an automation whose round dispatched nothing is drained; the run ends when every
    /// automation is drained and nothing runs or waits for a retry. Neither `once` nor
    /// `drain`: rounds every interval until stopped.
    pub drain: bool,
    /// The most tasks the run dispatches (`run --size N`): once as many were
    /// dispatched, no poll or round starts and the run ends when they are done.
    pub max_tasks: Option<u32>,
    /// Poll and render only.
    pub dry_run: bool,
    /// The durable task ledger, when enabled ([`curupira_ledger`]): consulted for every
    /// polled task, written at every change of a task's state (read only in a dry
    /// run). `None`: identities are kept for this process only.
    pub ledger: Option<RunLedger>,
    /// The run's watchdog ([`curupira_process::watchdog`]): told about every agent's process
    /// group, so none outlives a host that died.
    pub watch: Option<Watch>,
    /// Where the run keeps its live state for others to read ([`crate::status`]):
    /// what runs, what waits for a retry, each automation's rounds.
    pub live: Option<Live>,
    /// In a continuous run: once nothing ran nor waited for a retry for this long, an
    /// [`Event::Waiting`] says when the next round is, and again each time as long
    /// passes. `None`: never.
    pub idle_notice: Option<Duration>,
    /// Where a continuous run takes reloaded configurations from ([`crate::reload`]).
    /// `None`: the plan it started with is the one it runs.
    pub reloads: Option<crate::reload::Reloads>,
}

impl RunOptions {
    /// The ledger's writer, when this run writes a ledger.
    fn ledger_writer(&self) -> Option<Writer> {
        self.ledger
            .as_ref()
            .and_then(|ledger| ledger.writer.clone())
    }
}

/// The ledger as a run uses it: the dispatch loop reads on a connection of its own
/// (`decide`, the tasks `tasks retry` asked for), and every change goes through the
/// writer thread ([`curupira_ledger::WriterThread`]'s rules), which the worker threads use
/// too (the agent's pid, once it started). Events are printed behind the changes
/// (`crate::journal`).
///
/// The run knows its ledger only as a [`RunBackend`] (SQLite's
/// [`curupira_ledger::Ledger`], or another backend): one indirect call per polled
/// task, beside the mutex and the read itself.
#[derive(Debug, Clone)]
pub struct RunLedger {
    /// The connection the dispatch loop reads on.
    pub reader: Arc<Mutex<dyn RunBackend>>,
    /// The writer thread's handle; `None` in a dry run, which writes nothing.
    pub writer: Option<Writer>,
}

/// Why [`run`] ended early.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The events could not be written.
    #[error("cannot write events to standard output: {0}")]
    Events(#[from] io::Error),
    /// The ledger could not be read or written: the run stopped as on a signal (no
    /// new task, running agents waited for).
    #[error("{0}; the run was stopped")]
    Ledger(#[from] LedgerError),
}

/// How long a task whose earlier agent (of a host that died) still runs waits before
/// the host looks again.
const ORPHAN_RECHECK: Duration = Duration::from_secs(1);

/// A round polls at most this many times its `batch_size`, items already handled
/// included: an extension that hands over the same finished items forever (or
/// restarts its listing in each process, as the official `curupira-plugins` do)
/// ends its round there instead of spinning.
const POLLS_PER_BATCH_ITEM: u32 = 10;

use crate::extensions::Generation;
pub use crate::extensions::{Extensions, Ready};

/// The extension process of `round`, joined on its first use.
fn round_process<'e>(
    extensions: &'e mut Extensions,
    extension: &str,
    automation: &str,
    round: &mut Round,
) -> Result<Ready<'e>, CallError> {
    let process = match round.process {
        Some(process) => process,
        None => {
            let process = extensions.join_round(extension, automation)?;
            round.process = Some(process);
            process
        }
    };
    extensions.round(extension, process)
}

/// An automation made ready: its trigger's schema read and its configuration
/// validated.
pub struct Prepared {
    /// What every `trigger/poll` of the automation sends: the configuration
    /// `trigger/validate` returned (else the one sent), `limit` and `preview`.
    pub poll: PollParams,
    /// What `trigger/schema` returned.
    pub schema: TriggerSchema,
}

/// Why [`prepare`] failed, with the schema when `trigger/schema` had answered (so
/// that `validate` can still check the prompt's placeholders against it).
pub struct Unprepared {
    /// The failed call; a rejection (`ok: false`) is a -32003 error for
    /// `trigger/validate` whose message quotes the extension's.
    pub error: CallError,
    /// What `trigger/schema` returned, when the failure came after it.
    pub schema: Option<Box<TriggerSchema>>,
    /// The extension's verdict, when it rejected the configuration with `ok: false`.
    pub rejection: Option<Rejection>,
}

/// An `ok: false` verdict of `trigger/validate`.
pub struct Rejection {
    /// The extension's sentence (`no reason given` when it gave none).
    pub error: String,
    /// Each problem at its pointer into the parameters, when it listed them.
    pub errors: Vec<ValidationError>,
}

/// What the host knows of an automation when it prepares it.
#[derive(Debug, Clone, Copy)]
pub struct Preparing<'a> {
    /// The automation (its extension and trigger type among the rest).
    pub automation: &'a Automation,
    /// The value of `${repository}`, when known.
    pub repository: Option<&'a str>,
    /// Whether this is a dry run (`preview` in every poll).
    pub preview: bool,
}

/// The automation's table as the reference host sends it to `trigger/validate`: the
/// trigger's parameters (`arguments`, the schema's defaults applied) and the core
/// keys `trigger_type` (`extension/type`), `repository` (when known) and `prompt`
/// (the template's text, also when it came from `prompt_file`). The host's own keys
/// (`polling`, `agent`, …) are never in it.
pub fn configuration(preparing: &Preparing<'_>, schema: &TriggerSchema) -> Configuration {
    let Preparing {
        automation,
        repository,
        ..
    } = *preparing;
    let mut configuration = automation.arguments.clone();
    curupira_protocol::apply_defaults(&schema.schema, &mut configuration);
    // A parameter named like a core key cannot be told apart from it: the host's
    // value is the one an extension reads (the config check warns about it). An
    // automation of the reference form (its own repository alias) passes its table's
    // `profile` and `checkout` as written, as the reference host does.
    let reference = automation.configuration_repository.is_some();
    configuration.retain(|key, _| {
        !is_core_key(key)
            || (reference && !matches!(key.as_str(), "trigger_type" | "repository" | "prompt"))
    });
    configuration.insert(
        "trigger_type".to_owned(),
        format!("{}/{}", automation.extension, automation.trigger_type).into(),
    );
    if let Some(repository) = repository {
        configuration.insert("repository".to_owned(), repository.into());
    }
    configuration.insert("prompt".to_owned(), automation.prompt.clone().into());
    configuration
}

/// Step 2 of the protocol's "what the host does with an automation": schema, then
/// validate, whose verdict is kept: a rejection (`ok: false`) fails the automation
/// with the extension's sentence.
pub fn prepare(
    client: &mut Client,
    preparing: &Preparing<'_>,
) -> Result<Prepared, Box<Unprepared>> {
    let trigger_type = &preparing.automation.trigger_type;
    let schema = client.schema(trigger_type).map_err(|error| {
        Box::new(Unprepared {
            error,
            schema: None,
            rejection: None,
        })
    })?;
    let configuration = configuration(preparing, &schema);
    let automation = match client.validate(trigger_type, &configuration) {
        Ok(ValidateResult::Accepted {
            configuration: normalised,
        }) => normalised.unwrap_or(configuration),
        Ok(ValidateResult::Rejected { error, errors }) => {
            let message = match &error {
                Some(error) => format!(
                    "rejected the configuration of automation `{}`: {error}",
                    preparing.automation.name
                ),
                None => format!(
                    "rejected the configuration of automation `{}` without saying why",
                    preparing.automation.name
                ),
            };
            return Err(Box::new(Unprepared {
                rejection: Some(Rejection {
                    error: error.unwrap_or_else(|| "no reason given".to_owned()),
                    errors,
                }),
                error: CallError::new(
                    client.name(),
                    "trigger/validate",
                    ErrorCode::CONFIGURATION_INVALID,
                    message,
                ),
                schema: Some(Box::new(schema)),
            }));
        }
        Err(error) => {
            return Err(Box::new(Unprepared {
                error,
                schema: Some(Box::new(schema)),
                rejection: None,
            }));
        }
    };
    let poll = PollParams {
        trigger_type: trigger_type.clone(),
        automation,
        limit: Some(u64::from(preparing.automation.polling.batch_size)),
        preview: preparing.preview,
    };
    Ok(Prepared { poll, schema })
}

/// Whether a prompt uses `${repository}`.
pub fn uses_repository(template: &Template) -> bool {
    template.keys().any(|key| key == "repository")
}

/// The message for a prompt that needs a repository nobody knows.
pub fn repository_missing(automation: &str, reason: &str) -> String {
    format!(
        "automation `{automation}`: the prompt uses ${{repository}}, but no repository is known: \
         set `repository` in `[settings]` or give the config's folder a Git remote `origin` \
         ({reason})"
    )
}

/// How preparing one automation went, before its workspaces are known.
enum Step {
    /// Its prompt needs `${repository}` and none is known: this message.
    RepositoryMissing(String),
    /// Its template, and its extension's preparation.
    Prepared(Template, Result<Prepared, CallError>),
}

struct AutomationRun {
    automation: Arc<Automation>,
    template: Template,
    /// Its prompt, when it is a Jinja template ([`PromptSyntax::Jinja`]).
    jinja: Option<JinjaPrompt>,
    /// What each `trigger/poll` sends.
    poll: PollParams,
    ledger: Ledger<TaskId>,
    active: bool,
    next_due: Instant,
    /// The round in progress, if any.
    round: Option<Round>,
    /// Rounds started so far.
    rounds: u32,
    /// In a draining run: its last round dispatched nothing, so it has no round again.
    drained: bool,
    /// Where its agents work (the base of worktrees resolved at the start of the run).
    workspaces: Workspaces,
    /// Tasks to dispatch without a poll, each when due: those `tasks retry` asked for,
    /// those an earlier run left unfinished (read by the first round), and those
    /// waiting for an earlier host's agent to end. Each is claimed in `ledger` and
    /// counted in its round's `outstanding`.
    pending: VecDeque<Pending>,
    /// The durable ledger's count of each task's attempts, as this process knows it:
    /// the last attempt it started, or the count the ledger gave for a task it read
    /// from there. A task not in it asks the ledger ([`RunBackend::attempts_started`]).
    /// So the number of an attempt in events, logs and the live state is the ledger's.
    attempts: HashMap<TaskId, u32>,
    /// The unfilled placeholder keys said already ([`Event::TaskUnfilled`]: once per
    /// automation and key in a run).
    unfilled_said: HashSet<String>,
    /// Tasks refused in this run for an unfilled placeholder (`unfilled = "fail"`):
    /// not dispatched again by it, handed over again by a later run.
    refused: HashSet<TaskId>,
    /// Its reloaded version, waiting for its open round to end (its polls ended).
    next: Option<Box<Version>>,
    /// Removed from the configuration by a reload: it polls no more; its tasks finish.
    removed: bool,
}

/// Ends the polls of every round and releases the tasks that wait without one (not
/// started: the ledger keeps them for the next run).
fn end_polling(runs: &mut [AutomationRun]) {
    for run in runs.iter_mut() {
        if let Some(round) = &mut run.round {
            round.polling_done = true;
            for pending in run.pending.drain(..) {
                run.ledger.release(&pending.task_id);
                round.outstanding = round.outstanding.saturating_sub(1);
            }
        }
    }
}

/// A task to dispatch from its stored pairs rather than from a poll.
#[derive(Debug)]
struct Pending {
    task_id: TaskId,
    /// Its id as written ([`crate::plan::ItemIdentity::of`]).
    id_text: String,
    pairs: Vec<Pair>,
    due: Instant,
    /// The agent of a host that died, still running the task: the task waits for it.
    waiting_for: Option<AgentProcess>,
}

/// One round of one automation: its polls, and the tasks they dispatched until the
/// last of them finished.
#[derive(Debug, Default)]
struct Round {
    /// The extension process its polls and hooks go to, once it joined one
    /// ([`Extensions::join_round`]).
    process: Option<Generation>,
    /// Polls left that may hand over new work: `batch_size` at the start; an item
    /// already handled does not use one up.
    polls_left: u32,
    /// Polls left in all, items already handled included: 10 × `batch_size` at the
    /// start ([`POLLS_PER_BATCH_ITEM`]), so an extension that repeats itself cannot
    /// keep a round going.
    polls_cap: u32,
    polling_done: bool,
    /// Tasks dispatched by this round that have not finished (running or waiting for
    /// a retry).
    outstanding: usize,
    polled: u32,
    dispatched: u32,
    skipped: u32,
    failed: u32,
    /// Entries of its source the trigger said its polls skipped as unreadable.
    rejected: u64,
}

/// A task handed to an agent: everything an attempt needs, owned, so it can go to a
/// worker thread and come back.
#[derive(Debug)]
struct Task {
    /// Index of its automation in the run list.
    run: usize,
    /// Its automation as it was when the task was dispatched: its attempts and retries
    /// keep that agent and those limits through a reload of the configuration.
    automation: Arc<Automation>,
    task_id: TaskId,
    id_text: String,
    pairs: Vec<Pair>,
    prompt: String,
    /// The number of its running attempt, the durable ledger's: counted over every
    /// run (1 during its first ever).
    attempt: u32,
    /// Attempts started since this process dispatched it (1 during the first): what
    /// its `retries` and their backoff count.
    tries: u32,
    /// Its workspace, once prepared (by its first attempt); kept for the retries.
    workspace: Option<Workspace>,
    /// The provider session its next attempt resumes (one an earlier attempt left
    /// unfinished: the host's death, a timeout, a stall, a stop).
    resume: Option<String>,
    /// The session its last attempt ran, when its provider's stream said it.
    session: Option<String>,
    /// While it waits for a retry: its last attempt failed, with this exit status.
    failed_with: Option<Option<i32>>,
}

/// An attempt that ended, sent back by its worker thread.
struct Attempted {
    task: Task,
    outcome: AttemptOutcome,
}

/// What a worker thread needs besides the task: owned copies.
struct AttemptSpec {
    command: Vec<String>,
    /// The provider, when the automation names one: it decides the command line.
    provider: Option<crate::plan::ProviderAgent>,
    config_dir: PathBuf,
    automation: String,
    repository: String,
    limits: AgentLimits,
    workspaces: Workspaces,
    stop: Stop,
    observer: TaskObserver,
    /// The worktree add this attempt announced, dropped once its workspace is
    /// prepared (see [`curupira_workspace::ExpectedAdd`]).
    expected_add: Option<ExpectedAdd>,
}

/// Tells the watchdog and the ledger about one task's agent process.
#[derive(Debug)]
struct TaskObserver {
    automation: String,
    task_id: String,
    grace: Duration,
    /// The watchdog, and the label of this attempt's agent.
    watch: Option<(Watch, Label)>,
    writer: Option<Writer>,
    /// The run's live state: told the agent's pid.
    live: Option<Live>,
    /// This attempt's log (its agent's and its hooks' output), when the plan keeps
    /// logs.
    log: Option<crate::log::SharedLog>,
    /// The provider the agent is, when the automation names one.
    provider: Option<curupira_agents::Provider>,
    /// The session the attempt runs, once known (announced, named by the host, or
    /// resumed).
    seen: Mutex<Option<String>>,
    /// Whether the attempt resumes an earlier attempt's session.
    resuming: std::sync::atomic::AtomicBool,
}

impl AgentObserver for TaskObserver {
    fn run_label(&self) -> Option<&str> {
        self.watch.as_ref().map(|(_, label)| label.value())
    }

    fn spawned(&self, pid: u32, window: SpawnWindow) {
        if let Some((watch, label)) = &self.watch {
            watch.add(pid, self.grace, label);
        }
        if let Some(writer) = &self.writer {
            // Not waited for: the agent runs already. A host killed before this commits
            // leaves a `running` row without an agent, dispatched again by the next
            // run; its watchdog stops the agent meanwhile.
            writer.write(Change::AgentStarted {
                automation: self.automation.clone(),
                task_id: self.task_id.clone(),
                agent: AgentProcess {
                    pid,
                    start: window.start_of(pid),
                },
            });
        }
        if let Some(live) = &self.live {
            live.agent_spawned(&self.automation, &self.task_id, pid);
        }
    }

    fn reaped(&self, pid: u32) {
        if let Some((watch, _)) = &self.watch {
            watch.remove(pid);
        }
    }

    fn output_log(&self) -> Option<crate::log::SharedLog> {
        self.log.clone()
    }

    fn session(&self, session_id: &str) {
        let Some(provider) = self.provider else {
            return;
        };
        tracing::debug!(
            "automation `{}`: the {provider} agent of task {} runs session {session_id}",
            self.automation,
            short_id(&self.task_id)
        );
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = Some(session_id.to_owned());
        if let Some(writer) = &self.writer {
            // Not waited for; the writer commits it within its batch (milliseconds).
            writer.write(Change::AttemptSession {
                automation: self.automation.clone(),
                task_id: self.task_id.clone(),
                provider: provider.name().to_owned(),
                session_id: session_id.to_owned(),
                resumed: self.resuming.load(std::sync::atomic::Ordering::Relaxed),
            });
        }
    }

    fn stream_read(&self, summary: curupira_agents::stream::Summary) {
        let Some(provider) = self.provider else {
            return;
        };
        if let Some(first) = summary.diagnostics.first() {
            tracing::warn!(
                "automation `{}`: the {provider} stream of task {} is not what {provider} \
                 prints ({} finding(s); the first: {} [{}]); the task's outcome is its exit \
                 status",
                self.automation,
                short_id(&self.task_id),
                summary.diagnostic_count,
                first.message,
                first.code
            );
        }
        if let Some(writer) = &self.writer {
            writer.write(Change::AttemptStream {
                automation: self.automation.clone(),
                task_id: self.task_id.clone(),
                stream: curupira_ledger::StreamRecord {
                    answer: summary.answer,
                    usage: summary.usage.map(|u| curupira_ledger::StreamUsage {
                        input_tokens: u.input_tokens,
                        output_tokens: u.output_tokens,
                        cache_read_tokens: u.cache_read_tokens,
                        cache_write_tokens: u.cache_write_tokens,
                    }),
                    cost_usd: summary.cost_usd,
                    diagnostics: summary
                        .diagnostics
                        .into_iter()
                        .map(|d| format!("{} [{}]", d.message, d.code))
                        .collect(),
                },
            });
        }
    }
}

/// Where an attempt of a task logs: `<attempt>.log` in its folder, or, when an
/// earlier run left a log of that number (the attempt numbers of one run start at
/// 1), the first `<attempt>-<n>.log` not taken.
fn attempt_log_path(
    policy: &crate::plan::LogPolicy,
    automation: &str,
    task_id: &str,
    attempt: u32,
) -> PathBuf {
    let path = crate::log::log_path(&policy.dir, automation, task_id, attempt);
    if !path.exists() {
        return path;
    }
    (2..)
        .map(|n| path.with_file_name(format!("{attempt}-{n}.log")))
        .find(|path| !path.exists())
        .unwrap_or(path)
}

/// Work for a worker thread.
enum Job {
    /// An attempt: the task, and what the attempt needs besides it.
    Attempt(Box<(Task, AttemptSpec)>),
    /// A finished task's worktree to remove (see [`Removal`]).
    Remove(Box<Removal>),
}

/// A finished task's workspace, removed on a worker thread so that the dispatch loop
/// (and the slot the task held) need not wait for `git worktree remove`: its
/// `workspace.removed` follows the task's `task.finished`, and its round ends after
/// it.
struct Removal {
    run: usize,
    task_id: String,
    workspace: Workspace,
    succeeded: bool,
}

/// What a worker thread reports.
enum Done {
    /// An attempt made its task's worktree (or took up an earlier run's): reported at
    /// once, so `workspace.created` comes while the agent works, not after it.
    Prepared {
        run: usize,
        task_id: String,
        workspace: String,
        branch: String,
        reused: bool,
    },
    /// An attempt resumes a provider's session (`task.resumed`).
    Resumed {
        run: usize,
        task_id: String,
        attempt: u32,
        provider: &'static str,
        session_id: String,
    },
    /// An attempt ended (boxed: a task is the largest thing a worker sends).
    Attempted(Box<Attempted>),
    /// A removal ended: the task (its automation's index and its id), its
    /// workspace's path, and how it went.
    Removed {
        run: usize,
        task_id: String,
        path: String,
        finished: Result<Finished, WorkspaceError>,
    },
}

impl Removal {
    /// Removes the workspace (here, on the calling thread).
    fn run(self) -> Done {
        let path = self.workspace.path().display().to_string();
        Done::Removed {
            run: self.run,
            task_id: self.task_id,
            path,
            finished: self.workspace.finish(self.succeeded),
        }
    }
}

/// The threads that run attempts (and remove finished tasks' worktrees). One is
/// started when a job finds no idle one, and kept for the next jobs, so a run has at
/// most as many as jobs ever ran at once (the global `max_concurrent`, plus the
/// worktree removals under way), however many tasks it dispatches; a thread
/// per attempt cost the host a `clone` and its stack each time. Each thread has an
/// inbox of its own, so a job wakes exactly the thread that runs it.
struct Workers {
    /// Each thread's inbox, by index; emptied by [`finish`](Self::finish).
    inboxes: Vec<mpsc::Sender<Job>>,
    /// What the threads share with the dispatcher.
    shared: Arc<Mutex<Idle>>,
    results: mpsc::Sender<Done>,
    threads: Vec<thread::JoinHandle<()>>,
}

/// The threads waiting for a job, and the jobs waiting for a thread (only when no
/// thread could be started for them).
#[derive(Default)]
struct Idle {
    threads: Vec<usize>,
    jobs: std::collections::VecDeque<Job>,
    /// Threads started that have not looked at `jobs` yet: each takes a queued job,
    /// or goes idle.
    starting: usize,
}

impl Workers {
    /// No thread yet; attempts that end are sent to `results`.
    fn new(results: mpsc::Sender<Done>) -> Self {
        Workers {
            inboxes: Vec::new(),
            shared: Arc::default(),
            results,
            threads: Vec::new(),
        }
    }

    /// Hands `job` to an idle thread, or to a new one. Gives the job back when no
    /// thread exists and none can be started; when some exist, the job waits for the
    /// first of them to be free.
    fn submit(&mut self, job: Job) -> Result<(), (Box<Job>, io::Error)> {
        let idle = {
            let mut shared = self.lock();
            let idle = shared.threads.pop();
            // A thread on its way with no queued job left for it (another thread
            // took the one it was started for) takes this one: no new thread.
            if idle.is_none() && shared.starting > shared.jobs.len() {
                shared.jobs.push_back(job);
                return Ok(());
            }
            idle
        };
        let job = match idle {
            Some(index) => match self.hand_to(index, job) {
                Ok(()) => return Ok(()),
                Err(job) => *job,
            },
            None => job,
        };
        let (job, error) = match self.spawn(job) {
            Ok(()) => return Ok(()),
            Err(failed) if self.threads.is_empty() => return Err(failed),
            Err(failed) => failed,
        };
        tracing::warn!(
            "cannot start another thread for agents ({error}); the task waits for a free one"
        );
        // Checked and queued under one lock, as a thread checks the queue and goes
        // idle under it: a queued job always has a thread coming for it.
        let mut shared = self.lock();
        match shared.threads.pop() {
            Some(index) => {
                drop(shared);
                self.hand_to(index, *job)
                    .map_err(|job| (job, io::Error::other("the agent threads have ended")))
            }
            None => {
                shared.jobs.push_back(*job);
                Ok(())
            }
        }
    }

    /// Sends `job` to the idle thread `index`; gives it back when that thread is gone.
    fn hand_to(&self, index: usize, job: Job) -> Result<(), Box<Job>> {
        match self.inboxes.get(index) {
            Some(inbox) => inbox
                .send(job)
                .map_err(|mpsc::SendError(job)| Box::new(job)),
            None => Err(Box::new(job)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Idle> {
        lock_idle(&self.shared)
    }

    /// Starts a thread whose first job is `job` (queued for it, so a thread that
    /// cannot start gives it back).
    fn spawn(&mut self, job: Job) -> Result<(), (Box<Job>, io::Error)> {
        let index = self.threads.len();
        {
            let mut shared = self.lock();
            shared.jobs.push_back(job);
            shared.starting += 1;
        }
        let (inbox, jobs) = mpsc::channel();
        let shared = Arc::clone(&self.shared);
        let results = self.results.clone();
        let started = thread::Builder::new()
            .name(format!("agents-{}", index + 1))
            .spawn(move || work(index, &jobs, &shared, &results));
        match started {
            Ok(thread) => {
                self.threads.push(thread);
                self.inboxes.push(inbox);
                Ok(())
            }
            // Taken back, unless a running thread took it meanwhile.
            Err(error) => {
                let mut shared = self.lock();
                shared.starting = shared.starting.saturating_sub(1);
                match shared.jobs.pop_back() {
                    Some(job) => Err((Box::new(job), error)),
                    None => Ok(()),
                }
            }
        }
    }

    /// Lets the threads end once their attempts did, and waits for them. Call it when
    /// no attempt runs; dropping `Workers` instead lets them end without waiting.
    fn finish(&mut self) {
        self.inboxes.clear();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn lock_idle(shared: &Mutex<Idle>) -> std::sync::MutexGuard<'_, Idle> {
    // Only plain pushes and pops happen under the lock: nothing is left half done.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A worker thread's loop: run a job, then take a queued one or note itself idle —
/// before it reports, so the dispatcher finds it idle once the report arrives — and
/// wait on its inbox, until the inbox closes.
fn work(
    index: usize,
    inbox: &mpsc::Receiver<Job>,
    shared: &Mutex<Idle>,
    results: &mpsc::Sender<Done>,
) {
    let take_or_idle = |starting: bool| {
        let mut idle = lock_idle(shared);
        if starting {
            idle.starting = idle.starting.saturating_sub(1);
        }
        let next = idle.jobs.pop_front();
        if next.is_none() {
            idle.threads.push(index);
        }
        next
    };
    let mut next = take_or_idle(true);
    loop {
        let job = match next.take() {
            Some(job) => job,
            None => match inbox.recv() {
                Ok(job) => job,
                Err(_) => return,
            },
        };
        let report = match job {
            Job::Attempt(job) => {
                let (task, spec) = *job;
                Done::Attempted(Box::new(attempt(task, spec, results)))
            }
            Job::Remove(removal) => removal.run(),
        };
        next = take_or_idle(false);
        // The dispatcher owns the receiver until every job came back.
        let _ = results.send(report);
    }
}

/// Runs the selected automations of `plan` until done (`--once`), stopped, or out of
/// automations, writing events to `events`. Returns an I/O error only when the events
/// cannot be written.
pub fn run<S: EventSink + Send>(
    plan: &Plan,
    options: &RunOptions,
    stop: &Stop,
    events: &mut S,
) -> Result<(), RunError> {
    let writer = options.ledger_writer();
    let (ran, printed) = Journal::scope(events, writer.clone(), |journal| {
        let ran = run_journaled(plan, options, stop, journal);
        if let Some(writer) = &writer {
            // Every change of the run committed (or failed) before the last events
            // are printed, without waiting out the writer's pause.
            let _ = writer.wait_all();
        }
        ran
    })?;
    ran?;
    printed?;
    match writer.and_then(|writer| writer.take_error()) {
        Some(error) => Err(RunError::Ledger(error)),
        None => Ok(()),
    }
}

fn run_journaled(
    plan: &Plan,
    options: &RunOptions,
    stop: &Stop,
    events: &mut Journal<'_>,
) -> Result<(), RunError> {
    let repository = plan.repository.clone();
    let mut extensions = Extensions::new(plan).with_watch(options.watch.clone());
    let planned: Vec<Arc<Automation>> = plan.automations.iter().cloned().map(Arc::new).collect();
    let mut runs = Vec::new();
    for version in prepare_versions(&planned, &repository, options, stop, &mut extensions) {
        match version {
            Ok(version) => runs.push(AutomationRun::new(version)),
            Err(failed) => events.emit(*failed)?,
        }
    }

    if let Some(live) = &options.live {
        for run in &runs {
            live.automation_added(&run.automation.name, Some(SystemTime::now()));
        }
    }
    // Rounds start processes of their own (persistent extensions keep theirs).
    extensions.end_preparation();
    let repository = repository.unwrap_or_default();
    let (results, finished) = mpsc::channel();
    let mut scheduler = Scheduler {
        writer: options.ledger_writer(),
        plan,
        options,
        stop,
        repository: &repository,
        slots: Slots::new(plan.max_concurrent),
        retries: RetryQueue::new(),
        running: 0,
        workers: Workers::new(results),
        finished,
        removing: 0,
        host_pid: std::process::id(),
        deferred_removals: Vec::new(),
        ledger_error: None,
        said_stopping: false,
        quiet_since: Instant::now(),
        dispatched: 0,
    };
    for run in &runs {
        scheduler
            .slots
            .add_automation(&run.automation.name, cap_of(&run.automation));
    }
    scheduler.run(&mut runs, &mut extensions, events)?;

    for error in extensions.shutdown_all() {
        events.emit(extension_failed(&error))?;
    }
    match scheduler.ledger_error {
        Some(error) => Err(RunError::Ledger(error)),
        None => Ok(()),
    }
}

/// One version of an automation, made ready to poll: what a reload of the
/// configuration replaces as a whole.
struct Version {
    automation: Arc<Automation>,
    template: Template,
    /// Its prompt, when it is a Jinja template ([`PromptSyntax::Jinja`]).
    jinja: Option<JinjaPrompt>,
    /// What each `trigger/poll` sends.
    poll: PollParams,
    /// Where its agents work.
    workspaces: Workspaces,
}

/// Prepares `planned` in order (step 1 of the module doc): each one ready to poll, or
/// the `automation.failed` that says why not. Stops early (a shorter list) once a stop
/// is requested. Worktree bases are resolved (a `git rev-parse` each) on a thread of
/// their own while the extensions start.
fn prepare_versions(
    planned: &[Arc<Automation>],
    repository: &Result<String, String>,
    options: &RunOptions,
    stop: &Stop,
    extensions: &mut Extensions,
) -> Vec<Result<Version, Box<Event>>> {
    let specs: Vec<WorkspaceSpec> = planned
        .iter()
        .map(|automation| {
            let mut spec = automation.workspace.clone();
            if options.dry_run {
                // A dry run starts no agent: it needs no worktree, nor Git.
                spec.mode = WorkspaceMode::Shared;
            }
            spec
        })
        .collect();
    // Worktree bases are resolved (a `git rev-parse` each) on a thread of their own
    // while the extensions start; the events of each automation keep their order.
    let resolve_all = || -> Vec<Result<Workspaces, WorkspaceError>> {
        specs
            .iter()
            .zip(planned)
            .map(|(spec, automation)| match &automation.checkout {
                // A dry run clones nothing, as the reference host's.
                Some(checkout) if !options.dry_run => Ok(Workspaces::in_repository(
                    spec.clone(),
                    checkout.repository.clone(),
                    checkout.checkout.clone(),
                )),
                _ => Workspaces::new(spec.clone()),
            })
            .collect()
    };
    let (steps, resolved) = thread::scope(|scope| {
        let resolving = specs
            .iter()
            .any(|spec| spec.mode == WorkspaceMode::Worktree)
            .then(|| scope.spawn(resolve_all));
        let mut steps = Vec::new();
        for automation in planned {
            if stop.requested() {
                break;
            }
            let template = Template::parse(&automation.prompt);
            // An automation with a repository of its own (the reference form) needs none
            // from the plan; the extension gets its alias when it has one.
            let own = automation.repository.as_deref();
            let sent = automation
                .configuration_repository
                .as_deref()
                .or(own)
                .or(repository.as_deref().ok());
            let needs = own.is_none()
                && automation.prompt_syntax == PromptSyntax::Placeholders
                && uses_repository(&template);
            if let (true, Err(reason)) = (needs, &repository) {
                steps.push(Step::RepositoryMissing(repository_missing(
                    &automation.name,
                    reason,
                )));
                continue;
            }
            let prepared = extensions.ready(&automation.extension).and_then(|ready| {
                if !ready
                    .triggers
                    .iter()
                    .any(|t| t.trigger_type == automation.trigger_type)
                {
                    tracing::warn!(
                        "extension `{}`: `describe` does not list the trigger `{}` used by \
                         automation `{}`; trying it anyway",
                        automation.extension,
                        automation.trigger_type,
                        automation.name
                    );
                }
                let preparing = Preparing {
                    automation: automation.as_ref(),
                    repository: sent,
                    preview: options.dry_run,
                };
                prepare(ready.client, &preparing).map_err(|unprepared| unprepared.error)
            });
            steps.push(Step::Prepared(template, prepared));
        }
        let resolved = match resolving {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => resolve_all(),
        };
        (steps, resolved)
    });

    let mut versions = Vec::new();
    for ((step, automation), workspaces) in steps.into_iter().zip(planned).zip(resolved) {
        let (template, prepared) = match step {
            Step::RepositoryMissing(message) => {
                versions.push(Err(configuration_refused(automation, message)));
                continue;
            }
            Step::Prepared(template, prepared) => (template, prepared),
        };
        let workspaces = match workspaces {
            Ok(workspaces) => workspaces
                .with_stop(stop.clone())
                .with_watch(options.watch.clone()),
            Err(error) => {
                let message = format!("automation `{}`: {error}", automation.name);
                versions.push(Err(configuration_refused(automation, message)));
                continue;
            }
        };
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(error) => {
                versions.push(Err(failure(&automation.name, &error)));
                continue;
            }
        };
        let jinja = match automation.prompt_syntax {
            PromptSyntax::Jinja => {
                // As the reference host checks it before its first poll: the template
                // compiles and uses only the trigger's fields and the host variables.
                let mut declared = vec!["automation", "repository"];
                declared.extend(prepared.schema.prompt_fields.iter().map(String::as_str));
                match JinjaPrompt::compile(&automation.prompt, &declared) {
                    Ok(jinja) => Some(jinja),
                    Err(error) => {
                        let message = format!("automation \"{}\": {error}", automation.name);
                        versions.push(Err(configuration_refused(automation, message)));
                        continue;
                    }
                }
            }
            PromptSyntax::Placeholders => None,
        };
        versions.push(Ok(Version {
            automation: Arc::clone(automation),
            template,
            jinja,
            poll: prepared.poll,
            workspaces,
        }));
    }
    versions
}

impl AutomationRun {
    /// Takes a reloaded version (no round of it is open): its next round polls with
    /// it, due no later than the new interval from now. An automation that had failed
    /// runs again.
    fn apply(&mut self, version: Version) {
        let Version {
            automation,
            template,
            jinja,
            poll,
            workspaces,
        } = version;
        self.next_due = self
            .next_due
            .min(Instant::now() + automation.polling.interval);
        self.automation = automation;
        self.template = template;
        self.jinja = jinja;
        self.poll = poll;
        self.workspaces = workspaces;
        self.active = true;
        self.drained = false;
        self.unfilled_said.clear();
    }

    /// An automation of the run, its first round due now.
    fn new(version: Version) -> AutomationRun {
        let Version {
            automation,
            template,
            jinja,
            poll,
            workspaces,
        } = version;
        AutomationRun {
            automation,
            template,
            jinja,
            poll,
            ledger: Ledger::new(),
            active: true,
            next_due: Instant::now(),
            round: None,
            rounds: 0,
            drained: false,
            workspaces,
            pending: VecDeque::new(),
            attempts: HashMap::new(),
            unfilled_said: HashSet::new(),
            refused: HashSet::new(),
            next: None,
            removed: false,
        }
    }
}

/// The dispatch loop's state (see the module doc, "Concurrency"). The extensions and
/// the event stream stay on the calling thread; only agents run on worker threads.
struct Scheduler<'a> {
    /// The ledger's writer thread, when the run writes a ledger.
    writer: Option<Writer>,
    plan: &'a Plan,
    options: &'a RunOptions,
    stop: &'a Stop,
    repository: &'a str,
    slots: Slots,
    retries: RetryQueue<Task>,
    /// Attempts running on worker threads (or handed to them).
    running: usize,
    /// The threads that run attempts.
    workers: Workers,
    /// Where the workers report the attempts and removals that ended.
    finished: mpsc::Receiver<Done>,
    /// Removals handed to the workers (or deferred) and not reported yet.
    removing: usize,
    /// This process's id, for the ledger's rows (looked up once).
    host_pid: u32,
    /// Removals of tasks that ended, handed to the workers once this loop turn's polls
    /// dispatched what they could: a removal lets the worktree adds announced before it
    /// go first ([`curupira_workspace::ExpectedAdd`]), so the next task's agent starts
    /// without waiting for it.
    deferred_removals: Vec<Removal>,
    /// The first ledger failure: from then on the run stops as on a signal.
    ledger_error: Option<LedgerError>,
    /// Whether the live state was told the run is stopping.
    said_stopping: bool,
    /// Since when no attempt started or ended (or since the last `host.waiting`).
    quiet_since: Instant,
    /// Tasks dispatched by this run, for [`RunOptions::max_tasks`].
    dispatched: u32,
}

/// The longest the loop sleeps before it looks at signals again.
const TICK: Duration = Duration::from_millis(50);

impl Scheduler<'_> {
    fn run(
        &mut self,
        runs: &mut Vec<AutomationRun>,
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<()> {
        loop {
            let mut progressed = false;
            if !self.stopping()
                && let Some(offer) = self.options.reloads.as_ref().and_then(Reloads::take)
            {
                self.reload(offer, runs, extensions, events)?;
                progressed = true;
            }
            while let Ok(report) = self.finished.try_recv() {
                self.reported(report, runs, extensions, events)?;
                progressed = true;
            }
            events.check()?;
            if self.stopping() {
                if let Some(live) = self.options.live.as_ref().filter(|_| !self.said_stopping) {
                    live.stopping();
                    self.said_stopping = true;
                }
                // No new poll, no new attempt: what waits for a retry is interrupted.
                for (_, task) in self.retries.drain() {
                    self.interrupted(task, runs, events)?;
                }
                // Not started: the ledger keeps them for the next run.
                end_polling(runs);
            } else {
                progressed |= self.start_due_retries(runs, events)?;
                self.start_due_rounds(runs);
                progressed |= self.poll_while_slots_are_free(runs, extensions, events)?;
            }
            self.submit_removals(runs, extensions, events)?;
            self.close_finished_rounds(runs, extensions, events)?;

            if self.running == 0 && self.removing == 0 && self.retries.is_empty() {
                let rounds_open = runs.iter().any(|run| run.round.is_some());
                if self.stopping() && !rounds_open {
                    break;
                }
                if self.options.once
                    && !rounds_open
                    && runs.iter().all(|run| !run.active || run.rounds > 0)
                {
                    break;
                }
                if !rounds_open
                    && (self.at_max_tasks()
                        || (self.options.drain
                            && runs.iter().all(|run| !run.active || run.drained)))
                {
                    break;
                }
                // A configuration a reload emptied waits for the next one.
                let emptied = self.options.reloads.is_some() && runs.iter().all(|run| run.removed);
                if !runs.iter().any(|run| run.active) && !rounds_open && !emptied {
                    if !self.options.once {
                        tracing::warn!("no automation is left running; stopping");
                    }
                    break;
                }
            }
            self.notice_idle(runs, events)?;
            if !progressed {
                if let Some(ledger) = &self.options.ledger {
                    let ended = ledger
                        .reader
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .end_old_snapshot();
                    if let Err(error) = ended {
                        self.ledger_failed(error);
                    }
                }
                let wait = self.idle_wait(runs);
                match self.finished.recv_timeout(wait) {
                    Ok(report) => self.reported(report, runs, extensions, events)?,
                    Err(mpsc::RecvTimeoutError::Timeout | mpsc::RecvTimeoutError::Disconnected) => {
                    }
                }
            }
        }
        // Nothing runs any more: the workers are idle.
        self.workers.finish();
        Ok(())
    }

    /// Whether the run dispatched its [`RunOptions::max_tasks`].
    fn at_max_tasks(&self) -> bool {
        self.options
            .max_tasks
            .is_some_and(|max| self.dispatched >= max)
    }

    /// Says `host.waiting` when the run has been idle for its `idle_notice`.
    fn notice_idle(&mut self, runs: &[AutomationRun], events: &mut Journal<'_>) -> io::Result<()> {
        let Some(every) = self.options.idle_notice else {
            return Ok(());
        };
        let now = Instant::now();
        let idle = now.saturating_duration_since(self.quiet_since);
        if self.options.once
            || idle < every
            || self.running > 0
            || !self.retries.is_empty()
            || self.stopping()
            || runs.iter().any(|run| !run.pending.is_empty())
        {
            return Ok(());
        }
        let next = runs
            .iter()
            .filter(|run| run.active && run.round.is_none())
            .min_by_key(|run| run.next_due);
        let Some(next) = next else {
            // Every round is polling now: nothing to say about the next one.
            return Ok(());
        };
        let due_in = next.next_due.saturating_duration_since(now);
        self.quiet_since = now;
        events.emit(Event::Waiting {
            automation: next.automation.name.clone(),
            idle_seconds: idle.as_secs_f64(),
            next_round_at: crate::status::timestamp(SystemTime::now() + due_in),
            next_round_in_seconds: due_in.as_secs_f64(),
        })
    }

    /// How long nothing can happen but an attempt ending or a signal.
    fn idle_wait(&self, runs: &[AutomationRun]) -> Duration {
        let now = Instant::now();
        let mut wait = TICK;
        if let Some(due) = self.retries.next_due() {
            wait = wait.min(due.saturating_duration_since(now));
        }
        for run in runs.iter().filter(|run| run.active && run.round.is_none()) {
            if !self.options.once {
                wait = wait.min(run.next_due.saturating_duration_since(now));
            }
        }
        for pending in runs.iter().flat_map(|run| run.pending.iter()) {
            wait = wait.min(pending.due.saturating_duration_since(now));
        }
        wait.max(Duration::from_millis(1))
    }

    fn start_due_retries(
        &mut self,
        runs: &mut [AutomationRun],
        events: &mut Journal<'_>,
    ) -> io::Result<bool> {
        let mut started = false;
        let now = Instant::now();
        while let Some((name, mut task)) = self.retries.take_due(now, |name| {
            // Only automations still running get their retries.
            self.slots.can_start(name)
        }) {
            if !self.slots.take(&name) {
                self.retries.defer(&name, now, task);
                break;
            }
            task.attempt += 1;
            task.tries += 1;
            self.spawn_attempt(task, runs, events)?;
            started = true;
        }
        Ok(started)
    }

    fn start_due_rounds(&mut self, runs: &mut [AutomationRun]) {
        let now = Instant::now();
        // Retry requests are read once this process's own changes are committed: the
        // attempt of a request taken up clears it, and a request read before that
        // commit would run the task again.
        let mut own_changes_committed = false;
        for run in runs.iter_mut() {
            if !run.active || run.round.is_some() || run.drained || self.at_max_tasks() {
                continue;
            }
            let due = if self.options.once {
                run.rounds == 0
            } else {
                now >= run.next_due
            };
            if due {
                run.rounds += 1;
                if let Some(live) = &self.options.live {
                    live.round_started(&run.automation.name);
                }
                let batch = run.automation.polling.batch_size;
                let mut round = Round {
                    polls_left: batch,
                    polls_cap: batch.saturating_mul(POLLS_PER_BATCH_ITEM),
                    polling_done: batch == 0,
                    ..Round::default()
                };
                if !self.options.dry_run
                    && let Some(ledger) = &self.options.ledger
                {
                    if !own_changes_committed && let Some(writer) = &self.writer {
                        // A failed write stops the run; nothing is read from it here.
                        let _ = writer.wait_all();
                        own_changes_committed = true;
                    }
                    // The first round also takes up what an earlier run left unfinished
                    // (interrupted, its agent or worktree never started, its host dead):
                    // dispatched from the stored pairs, whether or not the extension
                    // hands it over again (it may have recorded it as done already, as
                    // `local-queue` does once a task finished before a `tasks retry`).
                    let mut reader = ledger.reader.lock().unwrap_or_else(PoisonError::into_inner);
                    let requested = if run.rounds == 1 {
                        reader.unfinished(&run.automation.name)
                    } else {
                        reader.requested(&run.automation.name)
                    };
                    drop(reader);
                    match requested {
                        Ok(requested) => {
                            for task in requested {
                                queue_requested(run, &mut round, task, now);
                            }
                        }
                        Err(error) => {
                            tracing::error!("{error}");
                            self.ledger_error.get_or_insert(error);
                        }
                    }
                }
                run.round = Some(round);
            }
        }
    }

    /// Whether the run is stopping: a signal, or the ledger failed (a read here, or a
    /// write on the writer thread).
    fn stopping(&self) -> bool {
        self.stop.requested()
            || self.ledger_error.is_some()
            || self.writer.as_ref().is_some_and(Writer::failed)
    }

    /// A ledger failure: logged, kept (the first) for the exit, and the run stops.
    fn ledger_failed(&mut self, error: LedgerError) {
        tracing::error!("{error}; no new task starts");
        self.ledger_error.get_or_insert(error);
    }

    /// What the ledger says about a polled task: `Dispatch` without a ledger.
    fn decide(&mut self, automation: &str, task_id: &str) -> Decision {
        let Some(ledger) = &self.options.ledger else {
            return Decision::Dispatch;
        };
        let decided = ledger
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .decide(automation, task_id);
        decided.unwrap_or_else(|error| {
            self.ledger_failed(error);
            // Not dispatched: the stop that follows interrupts nothing of it.
            Decision::Skip(Status::Interrupted)
        })
    }

    /// Records in the ledger (when there is one) that `task` ended in this process
    /// with `status`.
    fn record_end(
        &mut self,
        automation: &str,
        task: &Task,
        status: Status,
        exit_code: Option<i32>,
        reason: &str,
    ) {
        if let Some(writer) = &self.writer {
            // Committed before the events that follow are printed (see `Journal`).
            writer.write(Change::Finished {
                automation: automation.to_owned(),
                task_id: task.id_text.clone(),
                status,
                exit_code,
                reason: reason.to_owned(),
            });
        }
    }

    /// Polls automations, fairly, while an agent slot is free: an item is taken from
    /// an extension only when it can be dispatched at once.
    fn poll_while_slots_are_free(
        &mut self,
        runs: &mut [AutomationRun],
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<bool> {
        let mut progressed = false;
        loop {
            if self.at_max_tasks() {
                // `--size N` reached: nothing more is polled or dispatched; what waits
                // without a poll stays in the ledger for the next run.
                end_polling(runs);
                return Ok(progressed);
            }
            let now = Instant::now();
            let wants = |name: &str| {
                runs.iter().any(|run| {
                    run.automation.name == name
                        && run.active
                        && run.round.as_ref().is_some_and(|round| {
                            !round.polling_done || run.pending.iter().any(|p| p.due <= now)
                        })
                })
            };
            let Some(name) = self.slots.next_to_serve(wants) else {
                return Ok(progressed);
            };
            let Some(index) = runs.iter().position(|run| run.automation.name == name) else {
                return Ok(progressed);
            };
            progressed = true;
            // Tasks that wait for no poll come first, as due retries do.
            let ready = runs[index].pending.iter().position(|p| p.due <= now);
            let served = match ready.and_then(|at| runs[index].pending.remove(at)) {
                Some(pending) => self.dispatch_pending(index, pending, runs, extensions, events)?,
                None => self.poll_one(index, runs, extensions, events)?,
            };
            if let Err(error) = served {
                emit_failure(events, &name, &error)?;
                if let Some(live) = &self.options.live {
                    live.automation_stopped(&name);
                }
                let run = &mut runs[index];
                run.active = false;
                if let Some(round) = &mut run.round {
                    round.polling_done = true;
                }
            }
            if self.stopping() {
                return Ok(progressed);
            }
        }
    }

    /// One poll of one automation, and what follows from its item. The outer `Result`
    /// is the event stream failing; the inner one the automation.
    fn poll_one(
        &mut self,
        index: usize,
        runs: &mut [AutomationRun],
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<Result<(), CallError>> {
        let run = &mut runs[index];
        let Some(round) = run.round.as_mut() else {
            return Ok(Ok(()));
        };
        round.polls_cap = round.polls_cap.saturating_sub(1);
        if round.polls_cap == 0 {
            round.polling_done = true;
            tracing::debug!(
                "automation `{}`: the round ends after {} polls (10 × batch_size), most of \
                 them items already handled",
                run.automation.name,
                run.automation
                    .polling
                    .batch_size
                    .saturating_mul(POLLS_PER_BATCH_ITEM)
            );
        }
        let name = run.automation.name.clone();
        let client = match round_process(extensions, &run.automation.extension, &name, round) {
            Ok(ready) => ready.client,
            Err(error) => return Ok(Err(error)),
        };
        let polled = match client.poll_result(&run.poll) {
            Ok(polled) => polled,
            Err(error) => return Ok(Err(error)),
        };
        round.rejected = round.rejected.saturating_add(polled.rejected.unwrap_or(0));
        let Some(pairs) = polled.values else {
            round.polling_done = true;
            return Ok(Ok(()));
        };
        round.polled += 1;
        let (task_id, id_text) = run.automation.identity.of(&pairs);
        if run.refused.contains(&task_id) {
            // Refused earlier in this run, and said so then.
            round.skipped += 1;
            return Ok(Ok(()));
        }
        let claim = run.ledger.claim(&task_id);
        if claim == Claim::Finished && self.forgotten(&name, &id_text) {
            // `tasks forget` since this process finished it: handed over, it runs again,
            // its attempts counted afresh as the ledger counts them.
            runs[index].ledger.reopen(&task_id);
            runs[index].attempts.remove(&task_id);
        } else if claim != Claim::New {
            let run = &mut runs[index];
            let Some(round) = run.round.as_mut() else {
                return Ok(Ok(()));
            };
            round.skipped += 1;
            events.emit(Event::TaskSkipped {
                automation: name,
                task_id: id_text,
                values: pairs,
            })?;
            return Ok(Ok(()));
        }
        let decision = self.decide(&name, &id_text);
        if !matches!(&decision, Decision::Skip(status) if status.is_finished())
            && let Some(round) = runs[index].round.as_mut()
        {
            // New work (or a task the ledger could not answer for): it uses up one of
            // the round's `batch_size` polls.
            round.polls_left = round.polls_left.saturating_sub(1);
            if round.polls_left == 0 {
                round.polling_done = true;
            }
        }
        match decision {
            Decision::Dispatch => {}
            Decision::Skip(status) => {
                // Finished by an earlier process (or the ledger failed: not started).
                let run = &mut runs[index];
                if status.is_finished() {
                    run.ledger.finish(&task_id);
                    if let Some(round) = &mut run.round {
                        round.skipped += 1;
                    }
                    events.emit(Event::TaskSkipped {
                        automation: name,
                        task_id: id_text,
                        values: pairs,
                    })?;
                } else {
                    run.ledger.release(&task_id);
                }
                return Ok(Ok(()));
            }
            Decision::Wait(agent) => {
                tracing::warn!(
                    "automation `{name}`: task {} was left running by a host that died, and \
                     its agent (process group {}) is still alive; the task waits for it to end",
                    short_id(&id_text),
                    agent.pid
                );
                let run = &mut runs[index];
                if let Some(round) = &mut run.round {
                    round.outstanding += 1;
                }
                run.pending.push_back(Pending {
                    task_id,
                    id_text,
                    pairs,
                    due: Instant::now() + ORPHAN_RECHECK,
                    waiting_for: Some(agent),
                });
                return Ok(Ok(()));
            }
        }
        self.dispatch(
            index,
            (task_id, id_text, pairs),
            false,
            runs,
            extensions,
            events,
        )
    }

    /// Whether a task this process finished was forgotten since (`tasks forget`): its
    /// ledger row is gone. Read once this process's own changes are committed, and
    /// afresh, so the task's own row, still on its way to the file, is never taken for
    /// a forgotten one. Without a ledger (or when it fails) nothing is forgotten.
    fn forgotten(&mut self, automation: &str, task_id: &str) -> bool {
        let (Some(writer), Some(ledger)) = (&self.writer, &self.options.ledger) else {
            return false;
        };
        if writer.wait_all().is_err() {
            return false;
        }
        let found = ledger
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .has_row(automation, task_id);
        match found {
            Ok(found) => !found,
            Err(error) => {
                self.ledger_failed(error);
                false
            }
        }
    }

    /// A task that waited for no poll: one `tasks retry` asked for, or one whose
    /// earlier agent was still alive (looked at again: still alive, it waits again).
    fn dispatch_pending(
        &mut self,
        index: usize,
        mut pending: Pending,
        runs: &mut [AutomationRun],
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<Result<(), CallError>> {
        let run = &mut runs[index];
        if pending.waiting_for.is_some_and(|agent| agent.is_alive()) {
            pending.due = Instant::now() + ORPHAN_RECHECK;
            run.pending.push_back(pending);
            return Ok(Ok(()));
        }
        self.dispatch(
            index,
            (pending.task_id, pending.id_text, pending.pairs),
            true,
            runs,
            extensions,
            events,
        )
    }

    /// Dispatches a claimed task: its prompt, `onStarted`, then its first attempt (a
    /// dry run renders it instead). `counted`: the round counts it as outstanding
    /// already (a pending task).
    fn dispatch(
        &mut self,
        index: usize,
        (task_id, id_text, pairs): (TaskId, String, Vec<Pair>),
        counted: bool,
        runs: &mut [AutomationRun],
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<Result<(), CallError>> {
        let run = &mut runs[index];
        let name = run.automation.name.clone();
        let Some(round) = run.round.as_mut() else {
            run.ledger.release(&task_id);
            return Ok(Ok(()));
        };
        let repository = run
            .automation
            .repository
            .as_deref()
            .unwrap_or(self.repository);
        let values = PromptValues::new(
            run.automation.identity.prompt_pairs(&pairs),
            repository,
            &name,
        );
        let prompt = match &run.jinja {
            None => run.template.render(&values.lookup()),
            Some(jinja) => match jinja.render(values.item.iter().chain(&values.host).copied()) {
                Ok(prompt) => prompt,
                Err(error) => {
                    // Before `onStarted` and the ledger: not started, so not finished.
                    run.ledger.release(&task_id);
                    run.refused.insert(task_id);
                    if counted {
                        round.outstanding = round.outstanding.saturating_sub(1);
                    }
                    round.failed += 1;
                    events.emit(Event::TaskRefused {
                        automation: name.clone(),
                        task_id: id_text,
                        values: pairs,
                        reason: format!("automation \"{name}\": {error}"),
                    })?;
                    return Ok(Ok(()));
                }
            },
        };
        let placeholders = match run.jinja {
            None => values.unfilled(&run.template),
            Some(_) => Vec::new(),
        };
        if !placeholders.is_empty() {
            let refused = run.automation.unfilled == Unfilled::Fail;
            let mut new = false;
            for placeholder in &placeholders {
                new |= run.unfilled_said.insert(placeholder.key.clone());
            }
            if refused {
                // Before `onStarted` and the ledger: not started, so not finished.
                run.ledger.release(&task_id);
                run.refused.insert(task_id);
                if counted {
                    round.outstanding = round.outstanding.saturating_sub(1);
                }
            }
            if refused || new {
                events.emit(Event::TaskUnfilled {
                    automation: name.clone(),
                    task_id: id_text.clone(),
                    values: pairs.clone(),
                    placeholders,
                    refused,
                })?;
            }
            if refused {
                return Ok(Ok(()));
            }
        }
        round.dispatched += 1;
        self.dispatched = self.dispatched.saturating_add(1);
        if self.at_max_tasks() {
            // `--size N`: the last one; no poll more.
            round.polling_done = true;
        }
        if self.options.dry_run {
            run.ledger.finish(&task_id);
            events.emit(Event::TaskRendered {
                automation: name,
                task_id: id_text,
                values: pairs,
                prompt,
            })?;
            return Ok(Ok(()));
        }
        let trigger_type = &run.automation.trigger_type;
        let started = round_process(extensions, &run.automation.extension, &name, round)
            .and_then(|ready| ready.client.on_started(trigger_type, &pairs));
        if let Err(error) = started {
            run.ledger.release(&task_id);
            if counted {
                round.outstanding = round.outstanding.saturating_sub(1);
            }
            return Ok(Err(error));
        }
        if !counted {
            round.outstanding += 1;
        }
        if !self.slots.take(&name) {
            // `next_to_serve` said a slot was free; it still is (nothing ran between).
            tracing::warn!("automation `{name}`: no agent slot after a poll; running anyway");
        }
        let automation = Arc::clone(&runs[index].automation);
        let resume = self.resume_point(&automation, &id_text);
        let attempt = self.attempts_before(&runs[index], &task_id, &id_text) + 1;
        let task = Task {
            run: index,
            automation,
            task_id,
            id_text,
            pairs,
            prompt,
            attempt,
            tries: 1,
            workspace: None,
            resume,
            session: None,
            failed_with: None,
        };
        self.spawn_attempt(task, runs, events)?;
        Ok(Ok(()))
    }

    /// How many attempts of a task the durable ledger counts before the one about to
    /// start: what this process knows of it, else what the ledger says (0 without a
    /// ledger, or when it cannot be read: the run stops on that failure anyway).
    fn attempts_before(&mut self, run: &AutomationRun, task_id: &TaskId, id_text: &str) -> u32 {
        if let Some(&known) = run.attempts.get(task_id) {
            return known;
        }
        let Some(ledger) = &self.options.ledger else {
            return 0;
        };
        let counted = ledger
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .attempts_started(&run.automation.name, id_text);
        counted.unwrap_or_else(|error| {
            self.ledger_failed(error);
            0
        })
    }

    /// The session a task's first attempt in this run resumes: the one its last
    /// attempt (an earlier run's) ran with this automation's provider, when that
    /// attempt did not end by itself (the host died, a timeout, a stall, a stop) and
    /// no fresh start was asked for (`tasks retry --fresh`). `None` without a ledger,
    /// a provider, or `resume`.
    fn resume_point(
        &mut self,
        automation: &crate::plan::Automation,
        task_id: &str,
    ) -> Option<String> {
        let agent = automation.provider.as_ref().filter(|agent| agent.resume)?;
        let ledger = self.options.ledger.as_ref()?;
        let point = ledger
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .resume_point(&automation.name, task_id);
        let point = match point {
            Ok(point) => point?,
            Err(error) => {
                tracing::warn!(
                    "automation `{}`: cannot read the last attempt of task {} ({error}); it \
                     starts its session over",
                    automation.name,
                    short_id(task_id)
                );
                return None;
            }
        };
        let provider = agent.profile.provider();
        if point.provider.as_deref() != Some(provider.name()) {
            return None;
        }
        let session = point.session_id?;
        if point.fresh {
            tracing::info!(
                "automation `{}`: task {} starts its {provider} session over (tasks retry \
                 --fresh)",
                automation.name,
                short_id(task_id)
            );
            return None;
        }
        let unfinished = point.open
            || point
                .reason
                .as_deref()
                .is_some_and(|reason| RESUMED_AFTER.contains(&reason));
        unfinished.then(|| {
            tracing::info!(
                "automation `{}`: task {} resumes {provider} session {session} (its attempt {} \
                 ended: {})",
                automation.name,
                short_id(task_id),
                point.attempt,
                point.reason.as_deref().unwrap_or("its host died")
            );
            session
        })
    }

    /// Starts one attempt of `task` on a worker thread (its slot is already taken),
    /// after its `task.started` event.
    fn spawn_attempt(
        &mut self,
        task: Task,
        runs: &mut [AutomationRun],
        events: &mut Journal<'_>,
    ) -> io::Result<()> {
        runs[task.run].attempts.insert(task.task_id, task.attempt);
        let run = &runs[task.run];
        let automation = Arc::clone(&task.automation);
        let limits = automation.agent_policy.limits();
        let workspace = match &task.workspace {
            Some(workspace) => workspace.path().to_owned(),
            None => run.workspaces.planned_path(&automation.name, &task.id_text),
        }
        .display()
        .to_string();
        let log = self
            .plan
            .logs
            .as_ref()
            .filter(|_| !self.options.dry_run)
            .map(|policy| {
                (
                    attempt_log_path(policy, &automation.name, &task.id_text, task.attempt),
                    policy.max_bytes,
                )
            });
        let branch = run
            .workspaces
            .planned_branch(&automation.name, &task.id_text);
        let log_path = log.as_ref().map(|(path, _)| path.display().to_string());
        // Handed to the writer thread, not waited for (see `curupira_ledger::writer`):
        // the `task.started` below is printed once it is committed.
        if let Some(writer) = &self.writer {
            writer.write(Change::AttemptStarted {
                automation: automation.name.clone(),
                task_id: task.id_text.clone(),
                pairs: serde_json::to_string(&task.pairs).unwrap_or_default(),
                workspace: workspace.clone(),
                branch: branch.clone(),
                log_path: log_path.clone(),
                host_pid: self.host_pid,
            });
        }
        if let Some(live) = &self.options.live {
            live.attempt_started(RunningAttempt {
                workspace: Some(workspace.clone()),
                branch,
                log_path,
                values: task.pairs.clone(),
                ..RunningAttempt::new(
                    &automation.name,
                    &task.id_text,
                    task.attempt,
                    SystemTime::now(),
                )
            });
        }
        let spec = AttemptSpec {
            command: automation.agent.clone(),
            provider: automation.provider.clone(),
            config_dir: self.plan.dir.clone(),
            automation: automation.name.clone(),
            repository: automation
                .repository
                .clone()
                .unwrap_or_else(|| self.repository.to_owned()),
            limits,
            workspaces: run.workspaces.clone(),
            stop: self.stop.clone(),
            observer: TaskObserver {
                automation: automation.name.clone(),
                task_id: task.id_text.clone(),
                grace: limits.kill_grace,
                watch: self
                    .options
                    .watch
                    .as_ref()
                    .map(|watch| (watch.clone(), watch.label())),
                writer: self.writer.clone(),
                live: self.options.live.clone(),
                log: log.and_then(|(path, max_bytes)| {
                    crate::log::AttemptLog::create(&path, max_bytes)
                        .ok()
                        .map(|log| Arc::new(Mutex::new(log)))
                }),
                provider: automation
                    .provider
                    .as_ref()
                    .map(|agent| agent.profile.provider()),
                seen: Mutex::new(None),
                resuming: std::sync::atomic::AtomicBool::new(false),
            },
            expected_add: (task.workspace.is_none() && run.workspaces.adds_worktrees())
                .then(expect_add),
        };
        events.emit(Event::TaskStarted {
            automation: spec.automation.clone(),
            task_id: task.id_text.clone(),
            values: task.pairs.clone(),
            attempt: task.attempt,
            workspace,
        })?;
        self.running += 1;
        self.quiet_since = Instant::now();
        if let Err((job, error)) = self.workers.submit(Job::Attempt(Box::new((task, spec)))) {
            // No thread could take the task: it is not finished, so it is released and
            // a later poll hands it over again.
            let Job::Attempt(job) = *job else {
                return Ok(());
            };
            let (task, _) = *job;
            let name = runs[task.run].automation.name.clone();
            self.record_end(&name, &task, Status::Interrupted, None, "thread-failed");
            if let Some(live) = &self.options.live {
                live.attempt_ended(&name, &task.id_text);
            }
            let run = &mut runs[task.run];
            tracing::error!(
                "automation `{}`: cannot start a thread for an agent ({error}); the task is \
                 not finished",
                run.automation.name
            );
            self.running -= 1;
            self.slots.give_back(&run.automation.name);
            run.ledger.release(&task.task_id);
            if let Some(round) = &mut run.round {
                round.outstanding = round.outstanding.saturating_sub(1);
            }
        }
        Ok(())
    }

    /// An attempt came back: retry it, or finish the task.
    fn attempt_ended(
        &mut self,
        attempted: Attempted,
        runs: &mut [AutomationRun],
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<()> {
        self.running = self.running.saturating_sub(1);
        self.quiet_since = Instant::now();
        let Attempted { mut task, outcome } = attempted;
        let run = &mut runs[task.run];
        let name = run.automation.name.clone();
        self.slots.give_back(&name);
        if let Some(live) = &self.options.live {
            live.attempt_ended(&name, &task.id_text);
        }
        let policy = task.automation.agent_policy;
        if let Some(writer) = &self.writer {
            // The attempt's own row, whatever the task does next.
            writer.write(Change::AttemptEnded {
                automation: name.clone(),
                task_id: task.id_text.clone(),
                outcome: if outcome.reason == EndReason::Interrupted {
                    Status::Interrupted
                } else if outcome.succeeded() {
                    Status::Succeeded
                } else {
                    Status::Failed
                },
                exit_code: outcome.exit_code(),
                reason: outcome.reason.as_str().to_owned(),
                error: outcome.error(),
            });
        }
        if outcome.reason == EndReason::Interrupted {
            // Killed by the host's own shutdown: not finished, handed over again later.
            self.interrupted(task, runs, events)?;
            return Ok(());
        }
        // A refused command line would be refused again: no retry.
        let retryable = !matches!(outcome.reason, EndReason::Refused { .. });
        if !outcome.succeeded() && retryable && task.tries <= policy.retries {
            if self.stopping() {
                // It has retries left, but no new attempt starts once the run stops:
                // interrupted, as a task waiting for its retry is, and handed over again
                // by a later run (finishing it here burnt its retries).
                task.failed_with = Some(outcome.exit_code());
                self.interrupted(task, runs, events)?;
                return Ok(());
            }
            let delay = policy.retry_delay(task.tries);
            let resumes = task
                .automation
                .provider
                .as_ref()
                .is_some_and(|agent| agent.resume)
                && matches!(
                    outcome.reason,
                    EndReason::Timeout { .. } | EndReason::Stalled { .. }
                );
            task.resume = if resumes { task.session.clone() } else { None };
            events.emit(Event::TaskRetrying {
                automation: name.clone(),
                task_id: task.id_text.clone(),
                attempt: task.attempt + 1,
                delay_seconds: delay.as_secs_f64(),
                reason: outcome.reason.as_str().to_owned(),
                exit_code: outcome.exit_code(),
                error: outcome.error(),
                duration_seconds: outcome.duration.as_secs_f64(),
            })?;
            if let Some(live) = &self.options.live {
                live.retry_waiting(WaitingRetry {
                    automation: name.clone(),
                    task_id: task.id_text.clone(),
                    attempt: task.attempt + 1,
                    due_at: crate::status::timestamp(SystemTime::now() + delay),
                    reason: outcome.reason.as_str().to_owned(),
                    error: outcome.error(),
                    exit_code: outcome.exit_code(),
                    values: task.pairs.clone(),
                });
            }
            task.failed_with = Some(outcome.exit_code());
            self.retries.defer(&name, Instant::now() + delay, task);
            return Ok(());
        }
        let finishes = outcome.finishes_task();
        let mut removal = None;
        if finishes && let Some(workspace) = task.workspace.take() {
            // Removed on a worker thread: the slot is free already, the loop goes on.
            if workspace.removes(outcome.succeeded()) {
                removal = Some(Removal {
                    run: task.run,
                    task_id: task.id_text.clone(),
                    workspace,
                    succeeded: outcome.succeeded(),
                });
            }
        }
        let finished = if finishes {
            let trigger_type = &run.automation.trigger_type;
            let sent = match run.round.as_mut() {
                Some(round) => round_process(extensions, &run.automation.extension, &name, round)
                    .and_then(|ready| ready.client.on_finished(trigger_type, &task.pairs)),
                None => Err(CallError::new(
                    &run.automation.extension,
                    "trigger/onFinished",
                    ErrorCode::INTERNAL_ERROR,
                    "the task's round ended before it did",
                )),
            };
            run.ledger.finish(&task.task_id);
            sent
        } else {
            // The agent never ran: reported, not finished (no `onFinished`, identity
            // forgotten), so the extension hands the item over again later. Not in this
            // run when it drains: a workspace that cannot be made would be tried again
            // round after round, and the run would never end.
            run.ledger.release(&task.task_id);
            if self.options.drain {
                run.refused.insert(task.task_id);
            }
            Ok(())
        };
        let status = match (finishes, outcome.succeeded()) {
            (false, _) => Status::Interrupted,
            (true, true) => Status::Succeeded,
            (true, false) => Status::Failed,
        };
        self.record_end(
            &name,
            &task,
            status,
            outcome.exit_code(),
            outcome.reason.as_str(),
        );
        let run = &mut runs[task.run];
        if let Some(round) = &mut run.round {
            // A task whose worktree is being removed stays outstanding until it is.
            if removal.is_none() {
                round.outstanding = round.outstanding.saturating_sub(1);
            }
            if !outcome.succeeded() {
                round.failed += 1;
            }
        }
        events.emit(Event::TaskFinished {
            automation: name.clone(),
            task_id: task.id_text,
            values: task.pairs,
            exit_code: outcome.exit_code(),
            error: outcome.error(),
            reason: outcome.reason.as_str().to_owned(),
            duration_seconds: outcome.duration.as_secs_f64(),
            output: if outcome.succeeded() {
                None
            } else {
                outcome.output.clone()
            },
        })?;
        if let Err(error) = finished
            && run.active
        {
            emit_failure(events, &name, &error)?;
            if let Some(live) = &self.options.live {
                live.automation_stopped(&name);
            }
            run.active = false;
            if let Some(round) = &mut run.round {
                round.polling_done = true;
            }
        }
        if let Some(removal) = removal {
            self.removing += 1;
            self.deferred_removals.push(removal);
        }
        Ok(())
    }

    /// Hands the deferred removals to the workers (see `deferred_removals`).
    fn submit_removals(
        &mut self,
        runs: &mut [AutomationRun],
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<()> {
        for removal in std::mem::take(&mut self.deferred_removals) {
            if let Err((job, error)) = self.workers.submit(Job::Remove(Box::new(removal))) {
                tracing::warn!(
                    "cannot start a thread to remove a worktree ({error}); removing it here"
                );
                if let Job::Remove(removal) = *job {
                    let report = removal.run();
                    self.reported(report, runs, extensions, events)?;
                }
            }
        }
        Ok(())
    }

    /// A worker's report: an attempt or a removal ended.
    fn reported(
        &mut self,
        report: Done,
        runs: &mut [AutomationRun],
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<()> {
        match report {
            Done::Prepared {
                run,
                task_id,
                workspace,
                branch,
                reused,
            } => events.emit(Event::WorkspaceCreated {
                automation: runs[run].automation.name.clone(),
                task_id,
                workspace,
                branch,
                reused,
            }),
            Done::Resumed {
                run,
                task_id,
                attempt,
                provider,
                session_id,
            } => events.emit(Event::TaskResumed {
                automation: runs[run].automation.name.clone(),
                task_id,
                attempt,
                provider: provider.to_owned(),
                session_id,
            }),
            Done::Attempted(attempted) => self.attempt_ended(*attempted, runs, extensions, events),
            Done::Removed {
                run,
                task_id,
                path,
                finished,
            } => {
                self.removing = self.removing.saturating_sub(1);
                let run = &mut runs[run];
                if let Some(round) = &mut run.round {
                    round.outstanding = round.outstanding.saturating_sub(1);
                }
                let automation = run.automation.name.clone();
                match finished {
                    Ok(Finished::Removed) => events.emit(Event::WorkspaceRemoved {
                        automation,
                        task_id,
                        workspace: path,
                    }),
                    Ok(Finished::Kept) => Ok(()),
                    Err(error) => {
                        tracing::warn!("automation `{automation}`: {error}");
                        Ok(())
                    }
                }
            }
        }
    }

    /// A task that will not finish in this process: no `onFinished`, its identity
    /// forgotten, so a later poll (or run) hands it over again.
    fn interrupted(
        &mut self,
        task: Task,
        runs: &mut [AutomationRun],
        events: &mut Journal<'_>,
    ) -> io::Result<()> {
        let name = runs[task.run].automation.name.clone();
        // One whose last attempt failed keeps that attempt's exit status beside the
        // reason its retry never started, so the task's row and its last attempt's
        // (`failed`) tell one story.
        match task.failed_with {
            Some(exit_code) => self.record_end(
                &name,
                &task,
                Status::Interrupted,
                exit_code,
                RETRY_INTERRUPTED,
            ),
            None => self.record_end(&name, &task, Status::Interrupted, None, "interrupted"),
        }
        if let Some(live) = &self.options.live {
            live.retry_dropped(&name, &task.id_text);
        }
        let run = &mut runs[task.run];
        let reason = if self.writer.as_ref().is_some_and(Writer::failed) {
            "ledger-failed"
        } else {
            "shutdown"
        };
        run.ledger.release(&task.task_id);
        if let Some(round) = &mut run.round {
            round.outstanding = round.outstanding.saturating_sub(1);
        }
        events.emit(Event::TaskInterrupted {
            automation: name,
            task_id: task.id_text,
            values: task.pairs,
            reason: reason.to_owned(),
        })
    }

    fn close_finished_rounds(
        &mut self,
        runs: &mut [AutomationRun],
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<()> {
        for run in runs.iter_mut() {
            if !run.active
                && let Some(round) = &mut run.round
            {
                // An automation that failed dispatches nothing more.
                for pending in run.pending.drain(..) {
                    run.ledger.release(&pending.task_id);
                    round.outstanding = round.outstanding.saturating_sub(1);
                }
            }
            let done = run
                .round
                .as_ref()
                .is_some_and(|round| round.polling_done && round.outstanding == 0);
            if !done {
                continue;
            }
            let Some(round) = run.round.take() else {
                continue;
            };
            if let Some(process) = round.process {
                extensions.leave_round(&run.automation.extension, process);
                for error in extensions.take_ended_failures() {
                    events.emit(extension_failed(&error))?;
                }
            }
            if run.active {
                events.emit(Event::RoundFinished {
                    automation: run.automation.name.clone(),
                    polled: round.polled,
                    dispatched: round.dispatched,
                    skipped: round.skipped,
                    failed: round.failed,
                    rejected: round.rejected,
                })?;
            }
            run.next_due = Instant::now() + run.automation.polling.interval;
            if self.options.drain {
                // Straight on while it hands over work; done once it hands over none.
                run.next_due = Instant::now();
                run.drained = round.dispatched == 0;
            }
            if let Some(version) = run.next.take() {
                // A reload waited for this round to end.
                run.apply(*version);
            }
            if let Some(live) = &self.options.live {
                let next = (run.active
                    && !self.options.once
                    && (!self.options.drain || !run.drained)
                    && !self.stopping())
                .then(|| SystemTime::now() + run.automation.polling.interval);
                live.round_ended(&run.automation.name, next);
            }
        }
        Ok(())
    }

    /// Takes up what a watcher offered ([`crate::reload`]'s rules).
    fn reload(
        &mut self,
        offer: Offer,
        runs: &mut Vec<AutomationRun>,
        extensions: &mut Extensions,
        events: &mut Journal<'_>,
    ) -> io::Result<()> {
        let (plan, mut restart_needed) = match offer {
            Offer::Refused(diagnostics) => {
                tracing::warn!(
                    "the configuration changed but does not check; the running one is kept:\n{}",
                    diagnostics.join("\n")
                );
                return events.emit(Event::ConfigRefused { diagnostics });
            }
            Offer::Plan {
                plan,
                restart_needed,
            } => (plan, restart_needed),
        };
        if plan.repository != self.plan.repository {
            restart_needed.push("the repository (`${repository}`)".to_owned());
        }
        if plan.logs != self.plan.logs {
            restart_needed.push("the attempt logs (the state folder)".to_owned());
        }
        if plan.dir != self.plan.dir {
            restart_needed.push("the configuration's folder".to_owned());
        }
        // What the new plan adds or changes, in its order, and what it removes.
        let mut changed = Vec::new();
        let mut prepared = Vec::new();
        for automation in &plan.automations {
            let what = match runs
                .iter()
                .find(|run| run.automation.name == automation.name)
            {
                None => None,
                Some(run) => {
                    // Against the version it will run next: the one waiting for its
                    // round to end, if a reload left one.
                    let current = run
                        .next
                        .as_ref()
                        .map_or(&run.automation, |next| &next.automation);
                    let mut what = differences(current, automation);
                    if run.removed {
                        what.push("restored");
                    }
                    if what.is_empty() {
                        continue;
                    }
                    Some(what)
                }
            };
            changed.push(what);
            prepared.push(Arc::new(automation.clone()));
        }
        let removed: Vec<usize> = runs
            .iter()
            .enumerate()
            .filter(|(_, run)| !run.removed && plan.automation(&run.automation.name).is_none())
            .map(|(index, _)| index)
            .collect();
        // Prepared on processes of their own, so that a refused reload leaves the
        // running extensions as they are.
        let mut preparing = Extensions::new(&plan).with_watch(self.options.watch.clone());
        let versions = prepare_versions(
            &prepared,
            &plan.repository,
            self.options,
            self.stop,
            &mut preparing,
        );
        for error in preparing.shutdown_all() {
            tracing::warn!("{error}");
        }
        if versions.len() < prepared.len() {
            // Stopped meanwhile: nothing is applied.
            return Ok(());
        }
        let mut versions_ok = Vec::new();
        let mut refused = Vec::new();
        for version in versions {
            match version {
                Ok(version) => versions_ok.push(version),
                Err(failed) => refused.push(match *failed {
                    Event::AutomationFailed { message, .. } => message,
                    other => format!("{other:?}"),
                }),
            }
        }
        if !refused.is_empty() {
            tracing::warn!(
                "the configuration changed, but an automation it adds or changes cannot be \
                 prepared; the running configuration is kept:\n{}",
                refused.join("\n")
            );
            return events.emit(Event::ConfigRefused {
                diagnostics: refused,
            });
        }

        for name in extensions.update(&plan) {
            restart_needed.push(format!(
                "extension `{name}` (a persistent extension: its running process keeps its \
                 old definition)"
            ));
        }
        self.slots.set_limit(plan.max_concurrent);
        let mut added = Vec::new();
        let mut changes = Vec::new();
        for (version, what) in versions_ok.into_iter().zip(changed) {
            let name = version.automation.name.clone();
            self.slots.set_cap(&name, cap_of(&version.automation));
            let index = runs.iter().position(|run| run.automation.name == name);
            match (index, what) {
                (Some(index), Some(what)) => {
                    let run = &mut runs[index];
                    run.removed = false;
                    match &mut run.round {
                        Some(round) => {
                            // Its round polls no more; the new version takes over once
                            // the round's last task finished.
                            round.polling_done = true;
                            run.next = Some(Box::new(version));
                        }
                        None => run.apply(version),
                    }
                    changes.push(ChangedAutomation {
                        automation: name.clone(),
                        what: what.into_iter().map(str::to_owned).collect(),
                    });
                }
                _ => {
                    runs.push(AutomationRun::new(version));
                    added.push(name.clone());
                }
            }
            if let Some(live) = &self.options.live {
                live.automation_added(&name, Some(SystemTime::now()));
            }
        }
        let mut removed_names = Vec::new();
        for index in removed {
            let run = &mut runs[index];
            run.removed = true;
            run.active = false;
            run.next = None;
            if let Some(round) = &mut run.round {
                round.polling_done = true;
            }
            if let Some(live) = &self.options.live {
                live.automation_removed(&run.automation.name);
            }
            removed_names.push(run.automation.name.clone());
        }
        if added.is_empty()
            && removed_names.is_empty()
            && changes.is_empty()
            && restart_needed.is_empty()
        {
            tracing::debug!("the configuration changed; nothing the run uses did");
            return Ok(());
        }
        events.emit(Event::ConfigReloaded {
            added,
            removed: removed_names,
            changed: changes,
            restart_needed,
        })
    }
}

/// One attempt on a worker thread: the workspace (prepared by the first attempt, with
/// `after_create`), `before_run`, the agent, `after_run`.
fn attempt(mut task: Task, mut spec: AttemptSpec, results: &mpsc::Sender<Done>) -> Attempted {
    let started = Instant::now();
    let failed = |task: Task, reason: EndReason| Attempted {
        task,
        outcome: AttemptOutcome {
            reason,
            duration: started.elapsed(),
            output: None,
        },
    };

    // A hook the host's own shutdown killed did not fail: the task is interrupted (not
    // finished, handed over again later), as when the shutdown kills an agent.
    let hook_ended = |error: HookError| match error {
        HookError::Stopped { .. } => EndReason::Interrupted,
        error => EndReason::HookFailed {
            error: error.to_string(),
        },
    };
    // Nothing of a task starts once the host was told to stop a second time: no
    // worktree, no hook (one could take minutes), no agent.
    if spec.stop.forced() {
        return failed(task, EndReason::Interrupted);
    }
    // This attempt's hooks write into its log too.
    let hook_output = spec.observer.log.clone().map(|log| {
        HookOutput::new(move |kind, stream, chunk| {
            crate::log::lock(&log).take_from(kind.name(), stream, chunk);
        })
    });
    if let Some(workspace) = task.workspace.as_mut() {
        workspace.set_output(hook_output.clone());
    }
    // A new worktree holds none of an earlier session's work.
    let mut new_worktree = false;
    if task.workspace.is_none() {
        let prepared = spec.workspaces.prepare(&spec.automation, &task.id_text);
        // Removals waiting for this add may go now.
        drop(spec.expected_add.take());
        match prepared {
            Ok(mut workspace) => {
                workspace.set_output(hook_output.clone());
                let origin = workspace.origin();
                new_worktree = matches!(origin, Origin::Created | Origin::Recreated);
                if origin != Origin::Shared {
                    // The dispatcher owns the receiver until every job came back.
                    let _ = results.send(Done::Prepared {
                        run: task.run,
                        task_id: task.id_text.clone(),
                        workspace: workspace.path().display().to_string(),
                        branch: workspace.branch().unwrap_or_default().to_owned(),
                        reused: origin == Origin::Reused,
                    });
                }
                if spec.stop.forced() {
                    task.workspace = Some(workspace);
                    return failed(task, EndReason::Interrupted);
                }
                let created = workspace.run_hook(HookKind::AfterCreate);
                task.workspace = Some(workspace);
                if let Err(error) = created {
                    return failed(task, hook_ended(error));
                }
            }
            Err(error) => {
                let reason = EndReason::WorkspaceFailed {
                    error: error.to_string(),
                };
                return failed(task, reason);
            }
        }
    }
    let Some(workspace) = task.workspace.as_ref() else {
        let reason = EndReason::WorkspaceFailed {
            error: "the workspace is gone".to_owned(),
        };
        return failed(task, reason);
    };
    if spec.stop.forced() {
        return failed(task, EndReason::Interrupted);
    }
    if let Err(error) = workspace.run_hook(HookKind::BeforeRun) {
        return failed(task, hook_ended(error));
    }
    let mut resume = task.resume.take();
    if let Some(session) = resume.as_deref().filter(|_| new_worktree) {
        tracing::warn!(
            "automation `{}`: the worktree of task {} was removed (its cleanup policy), so \
             its session {session} is not resumed: the attempt starts over in a new worktree",
            spec.automation,
            short_id(&task.id_text)
        );
        resume = None;
    }
    if let (Some(session), Some(agent)) = (&resume, &spec.provider) {
        // The dispatcher owns the receiver until every job came back.
        let _ = results.send(Done::Resumed {
            run: task.run,
            task_id: task.id_text.clone(),
            attempt: task.attempt,
            provider: agent.profile.provider().name(),
            session_id: session.clone(),
        });
    }
    let (command, stdin, env) = match &spec.provider {
        None => (spec.command.clone(), task.prompt.clone(), Vec::new()),
        Some(agent) => match provider_command(
            agent,
            &task.prompt,
            workspace.path(),
            &spec.config_dir,
            &spec.observer,
            resume.as_deref(),
        ) {
            Ok(call) => call,
            Err(error) => return failed(task, EndReason::Refused { error }),
        },
    };
    let outcome = run_attempt_observed(
        &AgentRun {
            command: &command,
            config_dir: &spec.config_dir,
            cwd: workspace.path(),
            prompt: &stdin,
            automation: &spec.automation,
            task_id: &task.id_text,
            repository: &spec.repository,
            branch: workspace.branch(),
            env: &env,
            stream: spec.provider.as_ref().map(|agent| agent.profile.provider()),
        },
        &spec.limits,
        &spec.stop,
        Some(&spec.observer),
    );
    if let Err(error) = workspace.run_hook(HookKind::AfterRun) {
        tracing::warn!("automation `{}`: {error}", spec.automation);
    }
    task.session = spec
        .observer
        .seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    Attempted { task, outcome }
}

/// How an attempt ended, in the ledger's words (its row's `reason`), when its agent's
/// session is worth resuming: it did not end by itself (`unrecorded`: a dead host's).
const RESUMED_AFTER: [&str; 4] = ["timeout", "stalled", "interrupted", "unrecorded"];

/// The reason of a task interrupted after its last attempt failed, while it waited for
/// (or was about to wait for) a retry that the host's stop kept from starting; the
/// task's row keeps that attempt's exit status.
pub const RETRY_INTERRUPTED: &str = "retry-interrupted";

/// Program and arguments, what goes to stdin, and the variables added.
type AgentCall = (Vec<String>, String, Vec<(String, String)>);

/// A provider's command line for one attempt: program and arguments, what goes to
/// its stdin (empty: nothing), the variables it adds. A session the host names itself
/// (Copilot's) is told to the observer now, before the agent starts. OpenCode's
/// program is looked up as an agent's is (relative `PATH` folders from `config_dir`).
fn provider_command(
    agent: &crate::plan::ProviderAgent,
    prompt: &str,
    worktree: &std::path::Path,
    config_dir: &std::path::Path,
    observer: &TaskObserver,
    resume: Option<&str>,
) -> Result<AgentCall, String> {
    let provider = agent.profile.provider();
    let mut profile = agent.profile.clone();
    if profile.opencode_api() == curupira_agents::OpencodeApi::Auto
        && provider == curupira_agents::Provider::Opencode
    {
        // As the reference host: the major version decides, read before each attempt.
        let program =
            crate::agent::check_agent_program(&[provider.program().to_owned()], config_dir)?;
        let output = crate::agent::program_version(&program, worktree)?;
        let api = curupira_agents::opencode_api(&program.display().to_string(), &output)
            .map_err(|error| error.to_string())?;
        profile = profile.with_opencode_api(api);
    }
    let named = match resume {
        Some(session) => Some(session.to_owned()),
        None => curupira_agents::host_session(provider),
    };
    let request = curupira_agents::Request {
        session: named.as_deref(),
        resuming: resume.is_some(),
        continue_prompt: &agent.continue_prompt,
        ..curupira_agents::Request::fresh(prompt, worktree)
    };
    if resume.is_some() {
        observer
            .resuming
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let call = profile
        .invocation(&request)
        .map_err(|error| format!("cannot start the {provider} agent: {error}"))?;
    if let Some(session) = &named {
        observer.session(session);
    }
    let mut command = Vec::with_capacity(call.args.len() + 1);
    command.push(call.program.to_owned());
    command.extend(call.args);
    Ok((command, call.stdin.unwrap_or_default(), call.env))
}

/// What differs between two versions of an automation, in the words of
/// [`ChangedAutomation::what`].
fn differences(old: &Automation, new: &Automation) -> Vec<&'static str> {
    let mut what = Vec::new();
    let mut differs = |name: &'static str, differ: bool| {
        if differ {
            what.push(name);
        }
    };
    differs(
        "trigger",
        old.extension != new.extension || old.trigger_type != new.trigger_type,
    );
    differs("arguments", old.arguments != new.arguments);
    differs(
        "prompt",
        old.prompt != new.prompt
            || old.prompt_syntax != new.prompt_syntax
            || old.unfilled != new.unfilled,
    );
    differs(
        "agent",
        old.agent != new.agent || old.provider != new.provider,
    );
    differs(
        "limits",
        old.agent_policy.cap != new.agent_policy.cap
            || old.agent_policy.limits != new.agent_policy.limits,
    );
    differs(
        "retries",
        old.agent_policy.retries != new.agent_policy.retries
            || old.agent_policy.retry_backoff != new.agent_policy.retry_backoff
            || old.agent_policy.max_retry_backoff != new.agent_policy.max_retry_backoff,
    );
    differs("polling", old.polling != new.polling);
    differs(
        "workspace",
        old.workspace != new.workspace
            || format!("{:?}", old.checkout) != format!("{:?}", new.checkout),
    );
    differs(
        "repository",
        old.repository != new.repository
            || old.configuration_repository != new.configuration_repository
            || old.identity != new.identity,
    );
    what
}

/// The `automation.failed` of an automation refused before its first poll for its
/// configuration (-32003), with `message`.
fn configuration_refused(automation: &Automation, message: String) -> Box<Event> {
    Box::new(Event::AutomationFailed {
        automation: automation.name.clone(),
        code: ErrorCode::CONFIGURATION_INVALID.code(),
        message,
        extension: None,
        method: None,
    })
}

/// The `automation.failed` of an extension call that failed.
fn failure(automation: &str, error: &CallError) -> Box<Event> {
    Box::new(Event::AutomationFailed {
        automation: automation.to_owned(),
        code: error.code.code(),
        message: error.to_string(),
        extension: Some(error.extension.clone()),
        method: Some(error.method.clone()),
    })
}

/// The `extension.failed` of an extension that failed outside any automation's step.
fn extension_failed(error: &CallError) -> Event {
    Event::ExtensionFailed {
        extension: error.extension.clone(),
        method: error.method.clone(),
        code: error.code.code(),
        message: error.to_string(),
    }
}

/// An automation's own agent cap, as [`Slots`] counts it.
fn cap_of(automation: &Automation) -> Option<usize> {
    automation
        .agent_policy
        .cap
        .map(|cap| usize::try_from(cap).unwrap_or(usize::MAX))
}

fn emit_failure(events: &mut Journal<'_>, automation: &str, error: &CallError) -> io::Result<()> {
    events.emit(*failure(automation, error))
}

/// Keys and their values, in order.
type Values<'a> = [(&'a str, &'a str)];

/// What fills an item's prompt: its pairs, then `repository` (when known) and
/// `automation`, made once per dispatched task for its render and its unfilled check.
struct PromptValues<'a> {
    item: Vec<(&'a str, &'a str)>,
    host: Vec<(&'a str, &'a str)>,
}

impl<'a> PromptValues<'a> {
    fn new(
        pairs: impl IntoIterator<Item = &'a Pair>,
        repository: &'a str,
        automation: &'a str,
    ) -> Self {
        let item = pairs
            .into_iter()
            .map(|p| (p.key.as_str(), p.value.as_str()))
            .collect();
        let mut host = vec![("automation", automation)];
        if !repository.is_empty() {
            host.push(("repository", repository));
        }
        PromptValues { item, host }
    }

    fn lookup(&self) -> Chain<&Values<'a>, &Values<'a>> {
        Chain(self.item.as_slice(), self.host.as_slice())
    }

    /// The placeholders of `template` that neither fills, once each, in the prompt's
    /// order, each with the closest key there is (`title` for `titel`).
    fn unfilled(&self, template: &Template) -> Vec<UnfilledPlaceholder> {
        let lookup = self.lookup();
        let mut found: Vec<UnfilledPlaceholder> = Vec::new();
        for placeholder in template.unfilled(&lookup) {
            let key = placeholder.key();
            if found.iter().any(|seen| seen.key == key) {
                continue;
            }
            let known = self.item.iter().chain(&self.host).map(|(key, _)| *key);
            found.push(UnfilledPlaceholder {
                key: key.to_owned(),
                did_you_mean: curupira_diagnostics::did_you_mean(key, known).map(str::to_owned),
            });
        }
        found
    }
}

/// The prompt of one item: its pairs, then `repository` (when known) and `automation`.
pub fn render(template: &Template, pairs: &[Pair], repository: &str, automation: &str) -> String {
    template.render(&PromptValues::new(pairs, repository, automation).lookup())
}

/// Queues a task `tasks retry` asked for, also one this process finished already
/// (asked for again); not one it has in flight (its attempts go on: the next one
/// clears the request).
fn queue_requested(run: &mut AutomationRun, round: &mut Round, task: Requested, now: Instant) {
    let pairs: Vec<Pair> = match serde_json::from_str(&task.pairs) {
        Ok(pairs) => pairs,
        Err(error) => {
            tracing::error!(
                "automation `{}`: the ledger's pairs of task {} cannot be read ({error}); \
                 it is not retried",
                run.automation.name,
                short_id(&task.task_id)
            );
            return;
        }
    };
    let (task_id, id_text) = run.automation.identity.of(&pairs);
    if run.refused.contains(&task_id) {
        return;
    }
    if id_text != task.task_id {
        tracing::error!(
            "automation `{}`: the ledger's pairs of task {} have another identity; it is \
             not retried",
            run.automation.name,
            short_id(&task.task_id)
        );
        return;
    }
    match run.ledger.claim(&task_id) {
        Claim::New => {}
        // Asked for again by someone (the point of `tasks retry` on a running host).
        Claim::Finished => {
            run.ledger.reopen(&task_id);
        }
        // Its attempts go on; they are what was asked for.
        Claim::InFlight => return,
    }
    // Read once this process's changes were committed: the ledger's count is exact.
    run.attempts.insert(task_id, task.attempts);
    round.outstanding += 1;
    run.pending.push_back(Pending {
        task_id,
        id_text,
        pairs,
        due: now,
        waiting_for: None,
    });
}
