//! The extension processes of one host process, and their lifecycle.
//!
//! The reference host `curupira` 0.4.0 starts a new extension process for every phase
//! (`describe`, `trigger/schema` + `trigger/validate`, each poll cycle, each hook), and
//! official extensions rely on a fresh process now and then: `curupira-plugins` keeps
//! what it has already seen in memory, per process. Starting one per call would cost a
//! Python start for every message, so this host does it per **round**:
//!
//! - **Preparation** (`describe`, `trigger/schema`, `trigger/validate` of every
//!   automation) uses one process per extension ([`Extensions::ready`]), shut down once
//!   every automation is prepared ([`Extensions::end_preparation`]).
//! - **Rounds.** An automation's round joins a process of its extension
//!   ([`Extensions::join_round`]) at its first poll: its polls and the `onStarted` /
//!   `onFinished` of the tasks it dispatched go to that process
//!   ([`Extensions::round`]), and the round leaves it when its last task finished
//!   ([`Extensions::leave_round`]). The rounds of several automations behind one
//!   extension share a process, as the reference host's poll cycle does; a process
//!   takes at most one round of each automation, so an automation's next round always
//!   starts in a process that has not served it yet. A process no round holds any more
//!   is shut down. An extension that died between rounds is simply started again for
//!   the next one.
//! - **Persistent extensions** keep one process for the whole run, as every extension
//!   did before: the built-in `local-queue` (which keeps its hand-outs in memory) and
//!   any extension whose `[extensions.NAME]` says so. A failure to start one is
//!   remembered: later uses get the same error.
//!
//! Every process is initialized and described when it starts; a `describe` that
//! disagrees with the manifest is a warning, said for the first process only.

use curupira_client::{CallError, Client, Ending, Options};
use curupira_jsonrpc::ErrorCode;
use curupira_protocol::TriggerDescription;

use crate::plan::{ExtensionPlan, Launch, Plan};
use curupira_process::watchdog::{Label, RUN_VAR, Watch};

/// Which process of an extension a round uses (see [`Extensions::join_round`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generation(u64);

/// The started extensions of one host process, started on first use.
pub struct Extensions {
    /// The extensions it may start, by name.
    catalog: Vec<ExtensionPlan>,
    /// What the host says of itself in `initialize`.
    client_info: curupira_protocol::PeerInfo,
    options: Options,
    /// The run's watchdog: each extension starts with a label of its own.
    watch: Option<Watch>,
    slots: Vec<Slot>,
    next_generation: u64,
    /// Processes that did not shut down cleanly when their last round left them.
    ended_failures: Vec<CallError>,
}

struct Slot {
    planned: ExtensionPlan,
    /// One process for the whole run.
    persistent: bool,
    /// Its live processes, oldest first; the last one takes new rounds unless it is
    /// retired.
    processes: Vec<Process>,
    /// The failure to start it, remembered (persistent extensions; and, for the
    /// others, until the preparation ends).
    failed: Option<CallError>,
    /// Whether `describe`'s disagreement with the manifest was said already.
    mismatch_said: bool,
}

struct Process {
    generation: Generation,
    client: Client,
    triggers: Vec<TriggerDescription>,
    mismatch: Option<String>,
    /// Rounds using it.
    holds: usize,
    /// The automations whose rounds it took.
    served: Vec<String>,
    /// Takes no new round.
    retired: bool,
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

impl Extensions {
    /// No extension started yet; each will be started with the plan's client options.
    pub fn new(plan: &Plan) -> Self {
        Self {
            catalog: plan.extensions.clone(),
            client_info: plan.client_info.clone(),
            options: plan.client,
            watch: None,
            slots: Vec::new(),
            next_generation: 1,
            ended_failures: Vec::new(),
        }
    }

    /// The same extensions, each started with a label of the run's watchdog in its
    /// environment ([`curupira_process::watchdog::RUN_VAR`]): what one leaves running, detached
    /// from its process group, is stopped when the run ends or the host dies.
    pub fn with_watch(mut self, watch: Option<Watch>) -> Self {
        self.watch = watch;
        self
    }

    /// The extension called `name` for preparing automations (and for `validate`):
    /// its newest process, started, initialized and described if there is none. A
    /// failure is remembered: later uses get the same error.
    pub fn ready(&mut self, name: &str) -> Result<Ready<'_>, CallError> {
        let index = self.slot(name)?;
        let slot = &self.slots[index];
        if let Some(error) = &slot.failed {
            return Err(error.clone());
        }
        if slot.processes.iter().all(|process| process.retired) {
            self.start_in(index)?;
        }
        let slot = &mut self.slots[index];
        let process = slot
            .processes
            .iter_mut()
            .rev()
            .find(|process| !process.retired)
            .ok_or_else(|| lost(&slot.planned))?;
        Ok(process.ready())
    }

    /// Ends the preparation: every process of an extension that is not persistent is
    /// shut down (rounds start their own), and failures to start one are forgotten
    /// (each round tries again).
    pub fn end_preparation(&mut self) {
        for index in 0..self.slots.len() {
            let slot = &mut self.slots[index];
            if slot.persistent {
                continue;
            }
            slot.failed = None;
            let idle: Vec<Process> = {
                let (idle, kept) = std::mem::take(&mut slot.processes)
                    .into_iter()
                    .partition(|process| process.holds == 0);
                slot.processes = kept;
                idle
            };
            for process in idle {
                self.end(process);
            }
        }
    }

    /// A process of the extension called `name` for a round of `automation`: the
    /// newest one if it takes rounds and has not served this automation yet (the
    /// newest is then retired from taking more), else a new one. The round holds it
    /// until [`leave_round`](Self::leave_round).
    pub fn join_round(&mut self, name: &str, automation: &str) -> Result<Generation, CallError> {
        let index = self.slot(name)?;
        let slot = &mut self.slots[index];
        if slot.persistent {
            if let Some(error) = &slot.failed {
                return Err(error.clone());
            }
        } else {
            slot.failed = None;
        }
        let reusable = slot.processes.last().is_some_and(|process| {
            !process.retired && (slot.persistent || !process.served.iter().any(|a| a == automation))
        });
        if !reusable {
            if let Some(newest) = slot.processes.last_mut() {
                newest.retired = true;
            }
            self.start_in(index)?;
            self.shut_down_idle(index);
        }
        let slot = &mut self.slots[index];
        let process = slot
            .processes
            .last_mut()
            .ok_or_else(|| lost(&slot.planned))?;
        process.holds += 1;
        process.served.push(automation.to_owned());
        Ok(process.generation)
    }

    /// The process a round joined.
    pub fn round(&mut self, name: &str, generation: Generation) -> Result<Ready<'_>, CallError> {
        let index = self.slot(name)?;
        let slot = &mut self.slots[index];
        let planned = &slot.planned;
        slot.processes
            .iter_mut()
            .find(|process| process.generation == generation)
            .map(Process::ready)
            .ok_or_else(|| lost(planned))
    }

    /// A round is done with its process: one that no round holds any more is shut
    /// down, unless the extension is persistent.
    pub fn leave_round(&mut self, name: &str, generation: Generation) {
        let Ok(index) = self.slot(name) else {
            return;
        };
        let slot = &mut self.slots[index];
        if let Some(process) = slot
            .processes
            .iter_mut()
            .find(|process| process.generation == generation)
        {
            process.holds = process.holds.saturating_sub(1);
        }
        if !slot.persistent {
            for process in &mut slot.processes {
                if process.holds == 0 {
                    process.retired = true;
                }
            }
            self.shut_down_idle(index);
        }
    }

    /// Takes the extensions of a reloaded plan (and its client options) for the processes
    /// started from now on: a new name is added, a known one's definition replaced. A
    /// process already running keeps the definition it started with; it ends as usual
    /// (a round's process when its round leaves it). Returns the persistent extensions
    /// whose running process no longer matches its definition (another command, other
    /// trigger types, no longer persistent): they keep it until the host restarts.
    pub fn update(&mut self, plan: &Plan) -> Vec<String> {
        self.options = plan.client;
        self.client_info = plan.client_info.clone();
        let mut stale = Vec::new();
        for planned in &plan.extensions {
            match self.catalog.iter_mut().find(|e| e.name == planned.name) {
                Some(known) => *known = planned.clone(),
                None => self.catalog.push(planned.clone()),
            }
            let Some(slot) = self
                .slots
                .iter_mut()
                .find(|s| s.planned.name == planned.name)
            else {
                continue;
            };
            if slot.persistent && !slot.processes.is_empty() {
                if !same_definition(&slot.planned, planned) {
                    stale.push(planned.name.clone());
                }
                continue;
            }
            slot.planned = planned.clone();
            slot.persistent = planned.persistent;
            slot.failed = None;
            slot.mismatch_said = false;
        }
        stale
    }

    /// The processes that did not shut down cleanly when their last round left them,
    /// since the last call.
    pub fn take_ended_failures(&mut self) -> Vec<CallError> {
        std::mem::take(&mut self.ended_failures)
    }

    /// Shuts every started extension down, in the order they were started, and
    /// returns the failures of those that did not shut down cleanly (with those of
    /// processes ended earlier and not taken yet).
    pub fn shutdown_all(&mut self) -> Vec<CallError> {
        let slots = std::mem::take(&mut self.slots);
        for slot in slots {
            for process in slot.processes {
                self.end(process);
            }
        }
        self.take_ended_failures()
    }

    /// The index of the slot of `name`, made on first use.
    fn slot(&mut self, name: &str) -> Result<usize, CallError> {
        if let Some(index) = self.slots.iter().position(|slot| slot.planned.name == name) {
            return Ok(index);
        }
        let Some(planned) = self.catalog.iter().find(|e| e.name == name).cloned() else {
            return Err(CallError::new(
                name,
                "start",
                ErrorCode::INTERNAL_ERROR,
                "the extension is not in the plan",
            ));
        };
        self.slots.push(Slot {
            persistent: planned.persistent,
            planned,
            processes: Vec::new(),
            failed: None,
            mismatch_said: false,
        });
        Ok(self.slots.len() - 1)
    }

    /// Starts a new process in slot `index`; a failure is remembered in the slot.
    fn start_in(&mut self, index: usize) -> Result<(), CallError> {
        let label = self.watch.as_ref().map(Watch::label);
        let generation = Generation(self.next_generation);
        self.next_generation += 1;
        let slot = &mut self.slots[index];
        match start(
            &slot.planned,
            self.options,
            &self.client_info,
            label.as_ref(),
            generation,
        ) {
            Ok(process) => {
                if let (Some(mismatch), false) = (&process.mismatch, slot.mismatch_said) {
                    tracing::warn!("{mismatch}");
                    slot.mismatch_said = true;
                }
                slot.processes.push(process);
                Ok(())
            }
            Err(error) => {
                slot.failed = Some(error.clone());
                Err(error)
            }
        }
    }

    /// Shuts down the retired processes of slot `index` that no round holds.
    fn shut_down_idle(&mut self, index: usize) {
        let slot = &mut self.slots[index];
        let (idle, kept): (Vec<Process>, Vec<Process>) = std::mem::take(&mut slot.processes)
            .into_iter()
            .partition(|process| process.retired && process.holds == 0);
        slot.processes = kept;
        for process in idle {
            self.end(process);
        }
    }

    /// Shuts one process down (bounded), keeping a failure for the caller.
    fn end(&mut self, process: Process) {
        let name = process.client.name().to_owned();
        match process.client.shutdown() {
            Ok(Ending::Exited(how)) => tracing::debug!("[{name}] shut down: {how}"),
            Ok(Ending::Killed) => {
                tracing::debug!("[{name}] shut down: killed after the grace period")
            }
            Ok(Ending::AlreadyFailed) => tracing::debug!("[{name}] had failed; killed"),
            Err(error) => self.ended_failures.push(error),
        }
    }
}

/// Whether two definitions of an extension start the same process (an in-process one
/// is taken as unchanged: its code is the host's).
fn same_definition(a: &ExtensionPlan, b: &ExtensionPlan) -> bool {
    let launch = match (&a.launch, &b.launch) {
        (Launch::Process(a), Launch::Process(b)) => a == b,
        (Launch::InProcess(_), Launch::InProcess(_)) => true,
        _ => false,
    };
    launch && a.persistent == b.persistent && a.trigger_types == b.trigger_types
}

impl Process {
    fn ready(&mut self) -> Ready<'_> {
        Ready {
            client: &mut self.client,
            triggers: &self.triggers,
            mismatch: self.mismatch.clone(),
        }
    }
}

/// The error for a round whose process is gone (which the bookkeeping above rules
/// out).
fn lost(planned: &ExtensionPlan) -> CallError {
    CallError::new(
        &planned.name,
        "start",
        ErrorCode::INTERNAL_ERROR,
        "the host lost track of the extension's process",
    )
}

fn start(
    planned: &ExtensionPlan,
    options: Options,
    client_info: &curupira_protocol::PeerInfo,
    label: Option<&Label>,
    generation: Generation,
) -> Result<Process, CallError> {
    let mut client = match &planned.launch {
        Launch::Process(command) => {
            let launch = match label {
                Some(label) => command.clone().env(RUN_VAR, label.value()),
                None => command.clone(),
            };
            Client::spawn(&planned.name, &launch, options)?
        }
        Launch::InProcess(connect) => connect(&planned.name, options),
    };
    let described = client.initialize(client_info.clone()).and_then(|hello| {
        tracing::debug!(
            "[{}] initialized (process {}, pid {}): protocol {}, name {}, version {}",
            planned.name,
            generation.0,
            client.pid().unwrap_or(0),
            hello.protocol_version,
            hello.server_info.name,
            hello.server_info.version,
        );
        client.describe().map(|described| described.triggers)
    });
    match described {
        Ok(triggers) => {
            let mismatch = describe_mismatch(planned, &triggers);
            Ok(Process {
                generation,
                client,
                triggers,
                mismatch,
                holds: 0,
                served: Vec::new(),
                retired: false,
            })
        }
        Err(error) => {
            if !client.is_dead() {
                // The conversation is intact: say goodbye properly (bounded).
                let _ = client.shutdown();
            }
            Err(error)
        }
    }
}

fn describe_mismatch(planned: &ExtensionPlan, triggers: &[TriggerDescription]) -> Option<String> {
    let described: Vec<&str> = triggers.iter().map(|t| t.trigger_type.as_str()).collect();
    let declared: Vec<&str> = planned.trigger_types.iter().map(String::as_str).collect();
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
