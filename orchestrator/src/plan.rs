//! The plan a run follows: plain data, made by whoever reads a configuration (the
//! `curupira` binary turns `curupira.toml` into one). Nothing here parses a file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use curupira_client::{Client, LaunchCommand, Options};
use curupira_protocol::PeerInfo;
use curupira_workspace::WorkspaceSpec;
use serde_json::{Map, Value};

use crate::agent::AgentLimits;

/// Everything a run needs: the extensions it may start, the automations it runs (in
/// order; only those selected), and the limits they share.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The working directory of extensions and agents (the config's folder): the base
    /// of a shared workspace.
    pub dir: PathBuf,
    /// The value of `${repository}`, or why none is known (then only the automations
    /// whose prompt uses it fail).
    pub repository: Result<String, String>,
    /// The most agents running at once, all automations together (at least 1).
    pub max_concurrent: usize,
    /// How the host talks to extensions: deadlines, frame size.
    pub client: Options,
    /// What the host says of itself in `initialize` (`client_info`).
    pub client_info: PeerInfo,
    /// The extensions, by name; one starts only when an automation needs it.
    pub extensions: Vec<ExtensionPlan>,
    /// The automations to run.
    pub automations: Vec<Automation>,
    /// Where each attempt's output is also written ([`crate::log`]); `None`: to the
    /// host's stderr only.
    pub logs: Option<LogPolicy>,
}

/// Where attempts log, and how much each log keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPolicy {
    /// The logs' folder (`<state folder>/logs` for `curupira run`).
    pub dir: PathBuf,
    /// The most bytes one attempt's log keeps (its tail).
    pub max_bytes: u64,
}

impl Plan {
    /// The extension called `name`.
    pub fn extension(&self, name: &str) -> Option<&ExtensionPlan> {
        self.extensions.iter().find(|e| e.name == name)
    }

    /// The automation called `name`.
    pub fn automation(&self, name: &str) -> Option<&Automation> {
        self.automations.iter().find(|a| a.name == name)
    }
}

/// One extension: how to start it, and what it says it offers.
#[derive(Debug, Clone)]
pub struct ExtensionPlan {
    /// Its name (the config's `[extensions.NAME]` or `[plugins.NAME]`).
    pub name: String,
    /// How to start it.
    pub launch: Launch,
    /// Whether one process serves the whole run rather than one per round
    /// ([`crate::extensions`]).
    pub persistent: bool,
    /// The trigger types it declares (its manifest's, or what its `describe` listed
    /// when it was registered): what its `describe` at the run's start is compared
    /// with, a difference being a warning.
    pub trigger_types: Vec<String>,
}

/// What starts an extension in this process: called with its name and the client
/// options, it returns a client connected to a fresh instance.
pub type Connect = Arc<dyn Fn(&str, Options) -> Client + Send + Sync>;

/// How an extension is started: as a process, or in this one.
#[derive(Clone)]
pub enum Launch {
    /// A child process ([`curupira_client::Client::spawn`]), with the run's watchdog
    /// label in its environment.
    Process(LaunchCommand),
    /// In this process: each start calls the function with the extension's name and
    /// the client options, and it returns a client connected to a fresh instance
    /// (e.g. [`curupira_client::memory::duplex`], the other end served on a thread).
    InProcess(Connect),
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Launch::Process(command) => f.debug_tuple("Process").field(command).finish(),
            Launch::InProcess(_) => f.write_str("InProcess(..)"),
        }
    }
}

/// One automation: a trigger of an extension, the prompt its items become, and how
/// their agents run.
#[derive(Debug, Clone)]
pub struct Automation {
    /// Its name.
    pub name: String,
    /// The extension offering its trigger (an [`ExtensionPlan::name`]).
    pub extension: String,
    /// The trigger type, as that extension names it.
    pub trigger_type: String,
    /// The prompt template's text (`${key}` placeholders).
    pub prompt: String,
    /// The trigger's parameters (the schema's `default`s are added when it is
    /// prepared).
    pub arguments: Map<String, Value>,
    /// How often and how much it polls.
    pub polling: Polling,
    /// The agent's command line (program first); it reads the prompt on stdin. Not
    /// used when [`provider`](Self::provider) is set.
    pub agent: Vec<String>,
    /// The coding-agent CLI its agents are, when it names one (`provider = "…"`): the
    /// command line, the stream and the resume come from `curupira-agents`' table.
    pub provider: Option<ProviderAgent>,
    /// Its agents' cap, time limits and retries.
    pub agent_policy: AgentPolicy,
    /// Where its agents work.
    pub workspace: WorkspaceSpec,
    /// What a task whose prompt leaves a placeholder unfilled gets.
    pub unfilled: Unfilled,
    /// How its prompt is written.
    pub prompt_syntax: PromptSyntax,
    /// Its own value of the host variable `repository`, when it has one (the
    /// reference form's repository, `owner/name`); `None`: the plan's
    /// [`Plan::repository`].
    pub repository: Option<String>,
    /// What the extension receives as `repository` in the automation's configuration,
    /// when that is not the prompt's value (the reference form sends the repository's
    /// alias); `None`: the prompt's value.
    pub configuration_repository: Option<String>,
    /// Where its tasks work when it has a repository of its own (the reference form's
    /// `[repositories.<alias>]`): then [`workspace`](Self::workspace) gives only the
    /// hooks and their time limit.
    pub checkout: Option<RepositoryCheckout>,
    /// How its items are told apart.
    pub identity: ItemIdentity,
}

/// How an automation's items are told apart: what a task's id is, in the ledger, the
/// events and the reference host's `ok` lines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ItemIdentity {
    /// The task identity of all its pairs, 64 hex digits (the protocol's rule).
    #[default]
    Pairs,
    /// The value of the pair with this key, as written: a `cron` tick's is its due
    /// time in Unix seconds (`curupira_cron::TICK_KEY`), as the reference host names
    /// it. That pair is not a prompt variable: the prompt knows only the host's
    /// (`automation`, `repository`). An item without the pair is told apart by its
    /// pairs.
    Pair(String),
}

impl ItemIdentity {
    /// The id of an item with `pairs`: its in-process key and the id as written.
    pub fn of(
        &self,
        pairs: &[curupira_task_identity::Pair],
    ) -> (curupira_task_identity::TaskId, String) {
        let task_id = curupira_task_identity::TaskId::of_pairs(pairs);
        let text = match self {
            ItemIdentity::Pair(key) => pairs
                .iter()
                .find(|pair| &pair.key == key)
                .map(|pair| pair.value.clone()),
            ItemIdentity::Pairs => None,
        };
        let text = text.unwrap_or_else(|| task_id.to_string());
        (task_id, text)
    }

    /// The pairs a prompt sees of an item's `pairs`.
    pub fn prompt_pairs<'p>(
        &self,
        pairs: &'p [curupira_task_identity::Pair],
    ) -> impl Iterator<Item = &'p curupira_task_identity::Pair> + use<'p, '_> {
        pairs.iter().filter(move |pair| match self {
            ItemIdentity::Pair(key) => &pair.key != key,
            ItemIdentity::Pairs => true,
        })
    }
}

/// An automation's repository checkout (the reference form): the run's handle of the
/// repository, shared by the automations on it, and where in it each task works.
#[derive(Debug, Clone)]
pub struct RepositoryCheckout {
    /// The repository, cloned, set up and fetched once per run.
    pub repository: curupira_workspace::repository::Repository,
    /// A worktree per task, or the base checkout itself.
    pub checkout: curupira_workspace::repository::TaskCheckout,
}

/// How an automation's prompt is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptSyntax {
    /// `${key}` placeholders, substituted in one pass (this host's form).
    #[default]
    Placeholders,
    /// A Jinja template, rendered as the reference host renders it
    /// ([`curupira_template::jinja`]): a prompt that cannot be rendered for an item
    /// refuses that task ([`Event::TaskRefused`](crate::Event::TaskRefused)).
    Jinja,
}

/// What a task whose rendered prompt leaves a `${key}` that neither its item nor the
/// host fills gets ([`Event::TaskUnfilled`](crate::Event::TaskUnfilled) says so either
/// way, once per automation and key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unfilled {
    /// Dispatched, the placeholder as written (the default).
    #[default]
    Warn,
    /// Refused before `trigger/onStarted` and its agent: not finished, so a later run
    /// hands it over again.
    Fail,
}

/// An automation's agent when it is a known coding-agent CLI.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderAgent {
    /// The provider and its options, checked.
    pub profile: curupira_agents::Profile,
    /// Whether an interrupted session is resumed on the task's next attempt.
    pub resume: bool,
    /// What a resumed session is told before `"\n\nTask:\n"` and the prompt.
    pub continue_prompt: String,
}

/// How an automation polls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Polling {
    /// Polls per round at most (`limit` of each poll).
    pub batch_size: u32,
    /// The pause between the end of a round and the next (continuous runs).
    pub interval: Duration,
}

/// How an automation's agents are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentPolicy {
    /// The most of this automation's agents at once, under the plan's
    /// [`Plan::max_concurrent`]; `None`: only that limit applies.
    pub cap: Option<u32>,
    /// The time limits of one attempt.
    pub limits: AgentLimits,
    /// Attempts after the first one that failed.
    pub retries: u32,
    /// The pause before the first retry; it doubles for each later one.
    pub retry_backoff: Duration,
    /// The longest pause between retries.
    pub max_retry_backoff: Duration,
}

impl AgentPolicy {
    /// The time limits of one attempt.
    pub fn limits(&self) -> AgentLimits {
        self.limits
    }

    /// The pause before retry number `retry` (1 for the first): `retry_backoff`,
    /// doubled for each earlier retry, at most `max_retry_backoff`.
    pub fn retry_delay(&self, retry: u32) -> Duration {
        crate::dispatch::backoff(retry, self.retry_backoff, self.max_retry_backoff)
    }
}
