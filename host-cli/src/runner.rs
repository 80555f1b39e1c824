//! The automation pipeline behind `curupira run` (SPEC section 1, "What the host does
//! with an automation").
//!
//! # Order of work
//!
//! Automations run **sequentially**, in the order of the config file: simple,
//! deterministic, and what the protocol's one-request-at-a-time conversation allows
//! anyway when two automations share an extension.
//!
//! 1. **Prepare** every selected automation, in order: check that `${repository}` can
//!    be filled if the prompt uses it; start its extension if this is the first
//!    automation using it (`initialize`, then `describe`, compared with the manifest's
//!    `trigger_types`: a difference is logged as a warning); `trigger/schema`; fill the
//!    arguments with the schema's `default`s ([`crate::defaults`]); `trigger/validate`.
//! 2. **Rounds.** For each prepared automation: up to `batch_size` polls, stopping at
//!    the first `null`. Each item is checked ([`curupira_client::Client::poll`]),
//!    gets its task identity, and is skipped (`task.skipped`) when this process has
//!    already handled that identity for that automation. Otherwise its prompt is
//!    rendered with the pairs plus `repository` and `automation`, and the task runs:
//!    `trigger/onStarted` → agent → `trigger/onFinished` (sent even when the agent
//!    failed). With `--once` there is one round per automation; otherwise each
//!    automation's next round starts `interval_seconds` after its last one ended.
//! 3. **Shutdown** of every started extension, in the order they were started.
//!
//! # Failures
//!
//! A failure of any step (an error reply, a protocol violation, a timeout, a crash)
//! emits `automation.failed` and stops that automation for the rest of the process;
//! the others go on. A transport failure or a timeout also makes the extension
//! unusable, so every automation sharing it fails with the same cause when it next
//! needs it. There is no restart. When no automation is left, continuous mode ends.
//! A task whose agent fails is reported in `task.finished` and makes the run's exit
//! code 1 ("the run had failures") without stopping the automation.
//!
//! `${repository}` with no `settings.repository` and no Git remote fails (with -32003,
//! "configuration validation failure") only the automations whose prompt uses it.
//!
//! # Stopping
//!
//! [`Stop`] counts SIGINT/SIGTERM. Once one arrived, no new poll starts: the task in
//! flight finishes (its agent, `onFinished`), then every extension gets `shutdown`. A
//! second signal kills the agent in flight. Sleeps between rounds are taken in steps
//! of 50 ms, checking for a signal.
//!
//! # Dry run
//!
//! `--dry-run` prepares and polls exactly as a real run does, records identities the
//! same way (so a trigger that keeps returning the same item shows it once, then
//! skips it), and emits `task.rendered` with the prompt instead of starting anything:
//! no agent, no `onStarted`, no `onFinished`.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use curupira_client::{CallError, Client, Ending, Options};
use curupira_diagnostics::Report;
use curupira_jsonrpc::ErrorCode;
use curupira_protocol::{Arguments, HostInfo, TriggerDescription, TriggerSchema};
use curupira_task_identity::{Pair, TaskId};
use curupira_template::{Chain, Template};

use crate::agent::{AgentRun, run_agent};
use crate::config::{Automation, Config};
use crate::events::{Event, EventWriter};
use crate::resolve::{Plan, PlannedAutomation, PlannedExtension, resolve};
use crate::stop::Stop;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// One round per automation, then shut down.
    pub once: bool,
    /// Poll and render only.
    pub dry_run: bool,
    /// The automations to run, by name; empty means all.
    pub automations: Vec<String>,
}

/// The plan `run` follows, and what stands in its way, worked out before anything
/// starts (after the config file itself): every extension's manifest and every
/// automation's trigger ([`resolve`]), and, unless `dry_run`, that each selected
/// automation has an agent command. No extension is started here; that, with the
/// schema and `trigger/validate` calls, is [`crate::preflight::report`]'s work. A
/// partial config (see [`crate::config::Loaded::partial`]) is planned as far as it
/// goes, so the report lists every problem; the plan is `None` when the report has an
/// error or the config is not complete.
pub fn plan_run(config: &Config, host_exe: &Path, options: &RunOptions) -> (Option<Plan>, Report) {
    let (plan, mut report) = resolve(config, host_exe);
    if !options.dry_run {
        report.extend(config.missing_agents(&options.automations));
    }
    let plan = (config.is_complete() && !report.has_errors()).then_some(plan);
    (plan, report)
}

/// What the host tells an extension about itself in `initialize`.
pub fn host_info() -> HostInfo {
    HostInfo {
        name: Some("curupira".to_owned()),
        version: Some(env!("CARGO_PKG_VERSION").to_owned()),
    }
}

/// The started extensions of one host process, started on first use.
pub struct Extensions<'p> {
    plan: &'p Plan,
    options: Options,
    slots: Vec<Slot<'p>>,
}

struct Slot<'p> {
    planned: &'p PlannedExtension,
    state: SlotState,
}

enum SlotState {
    Ready {
        client: Client,
        triggers: Vec<TriggerDescription>,
        mismatch: Option<String>,
    },
    Failed(CallError),
}

/// A started extension and what `describe` said.
pub struct Ready<'a> {
    /// The conversation with it.
    pub client: &'a mut Client,
    /// The triggers `describe` listed.
    pub triggers: &'a [TriggerDescription],
    /// The manifest's `trigger_types` that `describe` did not list, and the types
    /// `describe` listed that the manifest does not: a warning, not an error.
    pub mismatch: Option<String>,
}

impl<'p> Extensions<'p> {
    /// No extension started yet; each will be started with `options`.
    pub fn new(plan: &'p Plan, options: Options) -> Self {
        Self {
            plan,
            options,
            slots: Vec::new(),
        }
    }

    /// The extension called `name`, started, initialized and described if this is
    /// its first use. A failure is remembered: later uses get the same error.
    pub fn ready(&mut self, name: &str) -> Result<Ready<'_>, CallError> {
        let index = match self.slots.iter().position(|slot| slot.planned.name == name) {
            Some(index) => index,
            None => {
                let Some(planned) = self.plan.extension(name) else {
                    return Err(CallError::new(
                        name,
                        "start",
                        ErrorCode::INTERNAL_ERROR,
                        "the extension is not in the plan",
                    ));
                };
                let state = start(planned, self.options);
                self.slots.push(Slot { planned, state });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[index];
        match &mut slot.state {
            SlotState::Failed(error) => Err(error.clone()),
            SlotState::Ready {
                client,
                triggers,
                mismatch,
            } => Ok(Ready {
                client,
                triggers,
                mismatch: mismatch.clone(),
            }),
        }
    }

    /// Shuts every started extension down, in the order they were started, and
    /// returns the failures of those that did not shut down cleanly.
    pub fn shutdown_all(&mut self) -> Vec<CallError> {
        let mut failures = Vec::new();
        for slot in self.slots.drain(..) {
            if let SlotState::Ready { client, .. } = slot.state {
                let name = client.name().to_owned();
                match client.shutdown() {
                    Ok(Ending::Exited(how)) => tracing::debug!("[{name}] shut down: {how}"),
                    Ok(Ending::Killed) => {
                        tracing::debug!("[{name}] shut down: killed after the grace period")
                    }
                    Ok(Ending::AlreadyFailed) => tracing::debug!("[{name}] had failed; killed"),
                    Err(error) => failures.push(error),
                }
            }
        }
        failures
    }
}

fn start(planned: &PlannedExtension, options: Options) -> SlotState {
    let mut client = match Client::spawn(&planned.name, &planned.launch, options) {
        Ok(client) => client,
        Err(error) => return SlotState::Failed(error),
    };
    let described = client.initialize(Some(host_info())).and_then(|hello| {
        tracing::debug!(
            "[{}] initialized: protocol {}, name {}, version {}",
            planned.name,
            hello.protocol_version,
            hello.name.as_deref().unwrap_or("-"),
            hello.version.as_deref().unwrap_or("-"),
        );
        client.describe()
    });
    match described {
        Ok(triggers) => {
            let mismatch = describe_mismatch(planned, &triggers);
            if let Some(mismatch) = &mismatch {
                tracing::warn!("{mismatch}");
            }
            SlotState::Ready {
                client,
                triggers,
                mismatch,
            }
        }
        Err(error) => {
            if !client.is_dead() {
                // The conversation is intact: say goodbye properly (bounded).
                let _ = client.shutdown();
            }
            SlotState::Failed(error)
        }
    }
}

fn describe_mismatch(
    planned: &PlannedExtension,
    triggers: &[TriggerDescription],
) -> Option<String> {
    let described: Vec<&str> = triggers.iter().map(|t| t.trigger_type.as_str()).collect();
    let declared: Vec<&str> = planned
        .manifest
        .trigger_types
        .as_slice()
        .iter()
        .map(|t| t.as_str())
        .collect();
    let missing: Vec<&str> = declared
        .iter()
        .copied()
        .filter(|t| !described.contains(t))
        .collect();
    let extra: Vec<&str> = described
        .iter()
        .copied()
        .filter(|t| !declared.contains(t))
        .collect();
    if missing.is_empty() && extra.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!(
            "its manifest declares {} but `describe` does not list them",
            missing.join(", ")
        ));
    }
    if !extra.is_empty() {
        parts.push(format!(
            "`describe` lists {} which its manifest does not declare",
            extra.join(", ")
        ));
    }
    Some(format!(
        "extension `{}`: {}",
        planned.name,
        parts.join("; ")
    ))
}

/// An automation made ready: its trigger's schema applied and validated.
pub struct Prepared {
    /// The arguments sent to `trigger/validate` and `trigger/poll` (defaults applied).
    pub arguments: Arguments,
    /// What `trigger/schema` returned.
    pub schema: TriggerSchema,
}

/// Why [`prepare`] failed, with the schema when `trigger/schema` had answered (so
/// that `validate` can still check the prompt's placeholders against it).
pub struct Unprepared {
    /// The failed call.
    pub error: CallError,
    /// What `trigger/schema` returned, when the failure came after it.
    pub schema: Option<Box<TriggerSchema>>,
}

/// Step 2 of SPEC section 1 for one automation: schema, defaults, validate.
pub fn prepare(
    client: &mut Client,
    trigger_type: &str,
    automation: &Automation,
) -> Result<Prepared, Unprepared> {
    let schema = client.schema(trigger_type).map_err(|error| Unprepared {
        error,
        schema: None,
    })?;
    let mut arguments = automation.arguments.clone();
    crate::defaults::apply_defaults(&schema.schema, &mut arguments);
    match client.validate(trigger_type, &arguments) {
        Ok(()) => Ok(Prepared { arguments, schema }),
        Err(error) => Err(Unprepared {
            error,
            schema: Some(Box::new(schema)),
        }),
    }
}

/// The value of `${repository}`: `settings.repository`, else the forge identity of the
/// config folder's `origin` remote.
pub fn repository(config: &Config) -> Result<String, String> {
    match &config.settings.repository {
        Some(repository) => Ok(repository.clone()),
        None => {
            crate::forge::forge_identity_of_checkout(&config.dir).map_err(|err| err.to_string())
        }
    }
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

struct AutomationRun<'c> {
    automation: &'c Automation,
    planned: &'c PlannedAutomation,
    template: Template,
    arguments: Arguments,
    ledger: HashSet<TaskId>,
    active: bool,
    next_due: Instant,
}

/// Runs the selected automations of `plan` until done (`--once`), stopped, or out of
/// automations, writing events to `events`. Returns an I/O error only when the events
/// cannot be written.
pub fn run<W: Write>(
    config: &Config,
    plan: &Plan,
    options: &RunOptions,
    stop: &Stop,
    events: &mut EventWriter<W>,
) -> io::Result<()> {
    let selected = config.selected(&options.automations);
    let repository = repository(config);
    let mut extensions = Extensions::new(plan, config.settings.client_options());
    let mut runs = Vec::new();

    for automation in selected {
        if stop.requested() {
            break;
        }
        let Some(planned) = plan.automation(&automation.name) else {
            continue;
        };
        let template = Template::parse(&automation.prompt);
        if let (true, Err(reason)) = (uses_repository(&template), &repository) {
            events.emit(&Event::AutomationFailed {
                automation: automation.name.clone(),
                code: ErrorCode::CONFIGURATION_INVALID.code(),
                message: repository_missing(&automation.name, reason),
                extension: None,
                method: None,
            })?;
            continue;
        }
        let prepared = extensions.ready(&planned.extension).and_then(|ready| {
            if !ready
                .triggers
                .iter()
                .any(|t| t.trigger_type == planned.trigger_type)
            {
                tracing::warn!(
                    "extension `{}`: `describe` does not list the trigger `{}` used by \
                         automation `{}`; trying it anyway",
                    planned.extension,
                    planned.trigger_type,
                    automation.name
                );
            }
            prepare(ready.client, &planned.trigger_type, automation)
                .map_err(|unprepared| unprepared.error)
        });
        match prepared {
            Ok(prepared) => runs.push(AutomationRun {
                automation,
                planned,
                template,
                arguments: prepared.arguments,
                ledger: HashSet::new(),
                active: true,
                next_due: Instant::now(),
            }),
            Err(error) => emit_failure(events, &automation.name, &error)?,
        }
    }

    let repository = repository.unwrap_or_default();
    let context = Context {
        config,
        options,
        stop,
        repository: &repository,
    };
    loop {
        for run in runs.iter_mut().filter(|run| run.active) {
            if stop.requested() {
                break;
            }
            if !options.once && Instant::now() < run.next_due {
                continue;
            }
            let outcome = round(&context, run, &mut extensions, events)?;
            if let Err(error) = outcome {
                emit_failure(events, &run.automation.name, &error)?;
                run.active = false;
            }
            run.next_due = Instant::now() + run.automation.polling.interval;
        }
        if options.once || stop.requested() {
            break;
        }
        let Some(next_due) = runs.iter().filter(|r| r.active).map(|r| r.next_due).min() else {
            tracing::warn!("no automation is left running; stopping");
            break;
        };
        while !stop.requested() {
            let now = Instant::now();
            if now >= next_due {
                break;
            }
            thread::sleep((next_due - now).min(Duration::from_millis(50)));
        }
    }

    for error in extensions.shutdown_all() {
        events.emit(&Event::ExtensionFailed {
            extension: error.extension.clone(),
            method: error.method.clone(),
            code: error.code.code(),
            message: error.to_string(),
        })?;
    }
    Ok(())
}

struct Context<'a> {
    config: &'a Config,
    options: &'a RunOptions,
    stop: &'a Stop,
    repository: &'a str,
}

fn emit_failure<W: Write>(
    events: &mut EventWriter<W>,
    automation: &str,
    error: &CallError,
) -> io::Result<()> {
    events.emit(&Event::AutomationFailed {
        automation: automation.to_owned(),
        code: error.code.code(),
        message: error.to_string(),
        extension: Some(error.extension.clone()),
        method: Some(error.method.clone()),
    })
}

/// One round of one automation. The outer `Result` is the event stream failing; the
/// inner one the automation.
fn round<W: Write>(
    context: &Context<'_>,
    run: &mut AutomationRun<'_>,
    extensions: &mut Extensions<'_>,
    events: &mut EventWriter<W>,
) -> io::Result<Result<(), CallError>> {
    let config = context.config;
    let name = &run.automation.name;
    let trigger_type = &run.planned.trigger_type;
    let (mut polled, mut dispatched, mut skipped, mut failed) = (0, 0, 0, 0);
    for _ in 0..run.automation.polling.batch_size {
        if context.stop.requested() {
            break;
        }
        let client = match extensions.ready(&run.planned.extension) {
            Ok(ready) => ready.client,
            Err(error) => return Ok(Err(error)),
        };
        let pairs = match client.poll(trigger_type, &run.arguments) {
            Ok(Some(pairs)) => pairs,
            Ok(None) => break,
            Err(error) => return Ok(Err(error)),
        };
        polled += 1;
        let task_id = TaskId::of_pairs(&pairs);
        let id_text = task_id.to_string();
        if !run.ledger.insert(task_id) {
            skipped += 1;
            events.emit(&Event::TaskSkipped {
                automation: name.clone(),
                task_id: id_text,
                values: pairs,
            })?;
            continue;
        }
        let prompt = render(&run.template, &pairs, context.repository, name);
        dispatched += 1;
        if context.options.dry_run {
            events.emit(&Event::TaskRendered {
                automation: name.clone(),
                task_id: id_text,
                values: pairs,
                prompt,
            })?;
            continue;
        }
        events.emit(&Event::TaskStarted {
            automation: name.clone(),
            task_id: id_text.clone(),
            values: pairs.clone(),
        })?;
        if let Err(error) = client.on_started(trigger_type, &pairs) {
            return Ok(Err(error));
        }
        let command = run.automation.agent.as_deref().unwrap_or_default();
        let outcome = run_agent(
            &AgentRun {
                command,
                config_dir: &config.dir,
                cwd: &config.dir,
                prompt: &prompt,
                automation: name,
                task_id: &id_text,
                repository: context.repository,
                branch: None,
            },
            context.stop,
        );
        if !outcome.succeeded() {
            failed += 1;
        }
        let finished = client.on_finished(trigger_type, &pairs);
        events.emit(&Event::TaskFinished {
            automation: name.clone(),
            task_id: id_text,
            values: pairs,
            exit_code: outcome.exit_code,
            error: outcome.error,
        })?;
        if let Err(error) = finished {
            return Ok(Err(error));
        }
    }
    events.emit(&Event::RoundFinished {
        automation: name.clone(),
        polled,
        dispatched,
        skipped,
        failed,
    })?;
    Ok(Ok(()))
}

/// The prompt of one item: its pairs, then `repository` (when known) and `automation`.
pub fn render(template: &Template, pairs: &[Pair], repository: &str, automation: &str) -> String {
    let item: Vec<(&str, &str)> = pairs
        .iter()
        .map(|p| (p.key.as_str(), p.value.as_str()))
        .collect();
    let mut host: Vec<(&str, &str)> = vec![("automation", automation)];
    if !repository.is_empty() {
        host.push(("repository", repository));
    }
    template.render(&Chain(item.as_slice(), host.as_slice()))
}

/// The path of this executable, which runs the built-in extensions.
pub fn host_executable() -> io::Result<PathBuf> {
    std::env::current_exe()
}
