//! The typed config: what `curupira.toml` means once checked, with its defaults. Only
//! types and their small accessors live here; [`super::check`] fills them and
//! [`super::query`] answers questions about them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use curupira_diagnostics::{JsonPointer, SourceMap};
use serde_json::{Map, Value};

/// The default config file name, looked up in the current directory.
pub const FILE_NAME: &str = "curupira.toml";
/// New items per round when nothing is configured.
pub const DEFAULT_BATCH_SIZE: u32 = 100;
/// The most polls per round the reference form's `batch_size` means (its documented
/// range is 1 to 1000).
pub const MAX_BATCH_SIZE: u32 = 1000;
/// Seconds between rounds when nothing is configured.
pub const DEFAULT_INTERVAL_SECONDS: f64 = 60.0;
/// Seconds to wait for the `initialize` reply.
pub const DEFAULT_INITIALIZE_TIMEOUT: f64 = 10.0;
/// Seconds to wait for the reply to any other request.
pub const DEFAULT_REQUEST_TIMEOUT: f64 = 30.0;
/// Seconds to wait for the `shutdown` reply, and again for the process to exit.
pub const DEFAULT_SHUTDOWN_TIMEOUT: f64 = 5.0;
/// The names `builtin = "…"` accepts: the extensions built into the `curupira` binary.
pub const BUILTINS: &[&str] = &["local-queue"];
/// Agents running at once when nothing is configured: one, as before concurrency.
pub const DEFAULT_MAX_CONCURRENT: u32 = 1;
/// The most agents at once a config may allow, globally or per automation.
pub const MAX_CONCURRENT_LIMIT: u32 = 1000;
/// Seconds between SIGTERM and SIGKILL when an agent is stopped.
pub const DEFAULT_KILL_GRACE_SECONDS: u64 = 10;
/// The most retries a config may ask for.
pub const MAX_RETRIES: u32 = 1000;
/// Seconds before the first retry.
pub const DEFAULT_RETRY_BACKOFF_SECONDS: u64 = 10;
/// The longest pause between retries when `max_retry_backoff_seconds` is not written
/// (raised to `retry_backoff_seconds` when that is longer).
pub const DEFAULT_MAX_RETRY_BACKOFF_SECONDS: u64 = 300;
/// Seconds a workspace hook may run.
pub const DEFAULT_HOOK_TIMEOUT_SECONDS: u64 = 60;
/// The longest duration any `*_seconds` key of `[settings.agent]` and
/// `[settings.workspace]` accepts: one year (365 days). Longer is a typo, not a policy.
pub const MAX_SECONDS: u64 = 365 * 24 * 60 * 60;
/// Where worktrees go when `root` is not written, relative to the config's folder.
pub const DEFAULT_WORKTREE_ROOT: &str = ".curupira/worktrees";
/// Where the task ledger is when `[settings.ledger] path` is not written, relative to
/// the config's folder.
pub const DEFAULT_LEDGER_PATH: &str = ".curupira/ledger.sqlite";
/// Where the task ledger of a file in the reference form is when `[settings.ledger]
/// path` is not written, relative to the home folder: per user, as the reference host
/// keeps its state, in a folder of this host's own beside the reference's files.
pub const REFERENCE_LEDGER_PATH: &str = ".curupira/curupira-rs/ledger.sqlite";
/// Days an ended attempt stays in the ledger's history when `history_days` is not
/// written.
pub const DEFAULT_HISTORY_DAYS: u32 = 30;
/// Attempts of one task kept in the ledger's history when `history_per_task` is not
/// written.
pub const DEFAULT_HISTORY_PER_TASK: u32 = 100;
/// The most `history_days` accepts: a hundred years.
pub const MAX_HISTORY_DAYS: u32 = 36_500;
/// The most `history_per_task` accepts.
pub const MAX_HISTORY_PER_TASK: u32 = 1_000_000;
/// The most bytes one attempt's log keeps when `log_max_bytes` is not written.
pub const DEFAULT_LOG_MAX_BYTES: u64 = 10 << 20;
/// The least `log_max_bytes` accepts (a log keeps at least this much).
pub const MIN_LOG_MAX_BYTES: u64 = 4096;
/// The most `log_max_bytes` accepts: 1 GiB.
pub const MAX_LOG_MAX_BYTES: u64 = 1 << 30;
/// Seconds an idle continuous run waits before it says so, when `idle_notice_seconds`
/// is not written: ten minutes.
pub const DEFAULT_IDLE_NOTICE_SECONDS: u64 = 600;

/// A checked `curupira.toml`.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file as the user named it (used in diagnostics).
    pub file: String,
    /// The form the file is in: the reference's when it has `[repositories]` or
    /// `[agents]` or an automation with `trigger_type`.
    pub form: Form,
    /// The folder that holds the file, absolute: the base of relative paths and the
    /// working directory of extensions and agents.
    pub dir: PathBuf,
    /// `[settings]`.
    pub settings: Settings,
    /// `[extensions.*]` in file order, then `[plugins.*]` in file order: those with no
    /// error in their own table. Both tables share one namespace of names.
    pub extensions: Vec<ExtensionConfig>,
    /// `[automations.*]`, in file order: those with no error in their own table.
    pub automations: Vec<Automation>,
    /// The parts of a [partial](super::Loaded::partial) config that could not be read (all
    /// empty in a complete one).
    pub unusable: Unusable,
    /// Whether the file has no error (warnings allowed): only a complete config runs.
    pub(super) complete: bool,
    /// Every `[automations.*]` key, usable or not, in file order.
    pub(super) order: Vec<String>,
    /// The file's text, for locating diagnostics.
    pub(super) text: String,
    /// Pointer → spans of the file's text.
    pub(super) source_map: SourceMap,
}

/// What a config with errors could not give: a part is unusable when an error points
/// into it (`/automations/NAME/…`, `/extensions/NAME/…`, `/settings/agent/…`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Unusable {
    /// `settings.repository`, `[settings.protocol]`, `[settings.timeouts]` (or
    /// `[settings]` as a whole) has an error: talking to extensions would use values the
    /// user did not write, so `validate` does not start any.
    pub connection: bool,
    /// `[settings.agent]` as a whole or its `command` (or `[settings]` as a whole) has
    /// an error, so an automation without an agent command of its own cannot be said
    /// to have none. An error in another key of `[settings.agent]` does not set it.
    pub agent: bool,
    /// `[settings.workspace]` (or `[settings]` as a whole) has an error: the workspace
    /// policies were filled with defaults where the file is wrong.
    pub workspace: bool,
    /// The extensions (`[extensions.*]`, then `[plugins.*]`) with an error in their own
    /// table, in file order.
    pub extensions: Vec<String>,
    /// The automations with an error in their own table, in file order.
    pub automations: Vec<UnusableAutomation>,
}

/// An automation whose own table has an error: what is still known about it.
#[derive(Debug, Clone, PartialEq)]
pub struct UnusableAutomation {
    /// The table's key.
    pub name: String,
    /// `trigger`, when that key could be read (so it can still be resolved).
    pub trigger: Option<TriggerRef>,
    /// Neither its own `agent` nor `[settings.agent]` gives a command (both read
    /// without error), so `config/missing-agent` applies to it too.
    pub without_agent: bool,
}

/// `[settings]`, with defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `settings.repository`, when set.
    pub repository: Option<String>,
    /// `[settings.protocol] max_frame_bytes`.
    pub max_frame_bytes: usize,
    /// `[settings.timeouts]`.
    pub timeouts: Timeouts,
    /// `[settings.agent]` with defaults filled in (no automation's override, so
    /// [`AgentPolicy::cap`] is `None`). `max_concurrent` here is the global limit.
    pub agent: AgentPolicy,
    /// `[settings.workspace]` with defaults filled in (no automation's override).
    pub workspace: WorkspacePolicy,
    /// `[settings.ledger]` with defaults filled in.
    pub ledger: LedgerSettings,
    /// `[settings.status]` with defaults filled in.
    pub status: StatusSettings,
    /// `[settings.http]`.
    pub http: HttpSettings,
    /// What only the reference form gives (`[repositories]`, `[agents]`, the
    /// reference's `[settings]` keys); `None` in a file of this host's own form.
    pub reference: Option<ReferenceSettings>,
}

/// Which of the two forms of configuration a file or an automation is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// This host's `curupira.toml`: `[settings.*]`, `[extensions]`, automations with
    /// `trigger` and `arguments`.
    #[default]
    Ours,
    /// The reference host's `settings.toml` (`curupira` 0.4.0): `[repositories]`,
    /// `[agents]`, automations with `trigger_type` whose other keys are the trigger's
    /// parameters.
    Reference,
}

/// What a file in the reference form gives beyond the shared model: its
/// repositories, its agent profiles' default and the `[settings]` keys only the
/// reference host reads. The keys that mean what one of ours means are in the shared
/// model instead (`max_active_tasks` is [`AgentPolicy::max_concurrent`],
/// `task_timeout_minutes` [`AgentPolicy::timeout`], `poll_interval_seconds`
/// [`Polling::interval`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReferenceSettings {
    /// `[settings] workspace_dir`, absolute (`~` expanded, a relative value from the
    /// config's folder): where a repository without `path` is cloned, as
    /// `workspace_dir/<alias>`. Default `~/.curupira/workspaces`.
    pub workspace_dir: PathBuf,
    /// `[settings] state_db_path`, absolute: the reference host's own state database,
    /// which this host never opens or writes.
    pub state_db_path: Option<PathBuf>,
    /// `[settings] max_pending_tasks`: read and kept; it changes nothing (nor, as
    /// recorded, in the reference host).
    pub max_pending_tasks: Option<u32>,
    /// `[settings] log_level`.
    pub log_level: Option<LogLevel>,
    /// `[settings] otlp_endpoint`: read and kept; this host exports no OpenTelemetry.
    pub otlp_endpoint: Option<String>,
    /// `[settings.polling] cron_poll_interval_seconds`.
    pub cron_poll_interval: Option<Duration>,
    /// `[agents.defaults] timezone`, unchecked (as the reference leaves it).
    pub timezone: Option<String>,
    /// `[agents.defaults] profile`.
    pub default_profile: Option<String>,
    /// `[repositories.*]`, in file order.
    pub repositories: Vec<Repository>,
}

impl ReferenceSettings {
    /// The repository called `alias`.
    pub fn repository(&self, alias: &str) -> Option<&Repository> {
        self.repositories.iter().find(|r| r.alias == alias)
    }
}

/// One `[repositories.ALIAS]` of the reference form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// The table's key: what an automation's `repository` names, and what the
    /// extension receives as `repository`.
    pub alias: String,
    /// `remote`: what `git clone` is given, as written.
    pub remote: String,
    /// `path`, absolute (`~` expanded, a relative value from the config's folder).
    pub path: Option<PathBuf>,
    /// Where the base checkout is: `path`, else `workspace_dir/<alias>`.
    pub checkout: PathBuf,
    /// `setup_script`: run once in a fresh clone, relative to it.
    pub setup_script: Option<String>,
}

impl Repository {
    /// The value of `${repository}` for an automation on this repository, as the
    /// reference host gives it: the last two `/`-separated segments of `remote`, with
    /// a trailing `.git` removed (`https://github.com/acme/api.git` gives `acme/api`,
    /// `git@github.com:acme/api.git` gives `api`).
    pub fn identity(&self) -> String {
        reference_identity(&self.remote)
    }
}

/// See [`Repository::identity`]: the last two `/`-separated segments of `remote`,
/// the first of them left out when it holds a `:` (the host of an scp-like
/// `git@host:owner/name`, or a URL's scheme), then a trailing `.git` removed. As
/// recorded (`recordings/reference-host`): `ssh://git@example.com:2222/group/sub/proj.git`
/// gives `sub/proj`, `https://gitlab.com/g/sub/proj.git/` gives `proj.git/`, and
/// `not a url` itself.
pub fn reference_identity(remote: &str) -> String {
    let segments: Vec<&str> = remote.split('/').collect();
    let mut tail = &segments[segments.len().saturating_sub(2)..];
    if tail.len() == 2 && tail[0].contains(':') {
        tail = &tail[1..];
    }
    let tail = tail.join("/");
    tail.strip_suffix(".git").map(str::to_owned).unwrap_or(tail)
}

curupira_diagnostics::closed_set! {
    /// `[settings] log_level` and `--log-level`: the reference host's level names.
    LogLevel {
        /// Everything.
        Debug = "DEBUG",
        /// What the host does.
        Info = "INFO",
        /// Warnings and errors.
        Warning = "WARNING",
        /// Errors.
        Error = "ERROR",
        /// Only what stops the host.
        Critical = "CRITICAL",
    }
}

/// An automation's `checkout` in the reference form: where its agents work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Checkout {
    /// Each task in a worktree of its own (any value but `"main"`, and the default).
    #[default]
    Worktree,
    /// `checkout = "main"`: in the repository's base checkout itself, not fetched.
    Main,
}

/// `[settings.http]`: `run`'s status page, API and metrics (`curupira-http`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HttpSettings {
    /// `listen`: the address to serve on; `None` (the default): no server.
    pub listen: Option<std::net::SocketAddr>,
    /// `allow_remote`: whether `listen` may be another address than loopback.
    pub allow_remote: bool,
}

/// `[settings.status]`: what `run` tells people while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusSettings {
    /// `idle_notice_seconds`: after this long with nothing running nor waiting for a
    /// retry, a continuous run says it waits and when its next round is (`host.waiting`),
    /// and again each time as long passes; `None` (`0` in the file): never.
    pub idle_notice: Option<std::time::Duration>,
    /// `live_line`: whether `run --format human` keeps a status line at the bottom of
    /// a terminal (never when its output is not one).
    pub live_line: bool,
}

impl Default for StatusSettings {
    fn default() -> Self {
        StatusSettings {
            idle_notice: Some(std::time::Duration::from_secs(DEFAULT_IDLE_NOTICE_SECONDS)),
            live_line: true,
        }
    }
}

/// `[settings.ledger]`: the durable task ledger (the `curupira-ledger` crate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerSettings {
    /// `enabled` (default `true`): `false` keeps identities for the process only.
    pub enabled: bool,
    /// `path`, absolute (relative paths start at the config's folder); default
    /// `<config folder>/.curupira/ledger.sqlite`.
    pub path: PathBuf,
    /// `history_days`: how long an ended attempt stays in the history.
    pub history_days: u32,
    /// `history_per_task`: how many attempts of one task the history keeps.
    pub history_per_task: u32,
    /// `log_max_bytes`: the most one attempt's log keeps (its tail).
    pub log_max_bytes: u64,
}

impl LedgerSettings {
    /// The defaults for a config in `dir`: enabled, in `dir/.curupira/`.
    pub fn new(dir: &Path) -> Self {
        LedgerSettings {
            enabled: true,
            path: dir.join(DEFAULT_LEDGER_PATH),
            history_days: DEFAULT_HISTORY_DAYS,
            history_per_task: DEFAULT_HISTORY_PER_TASK,
            log_max_bytes: DEFAULT_LOG_MAX_BYTES,
        }
    }

    /// How long an ended attempt stays in the history: `history_days`.
    pub fn history_age(&self) -> Duration {
        Duration::from_secs(u64::from(self.history_days) * 24 * 60 * 60)
    }

    /// The state folder: the ledger's folder (`<config folder>/.curupira` by default),
    /// which also holds `run.lock` and `watchdog.lock`. With the ledger disabled it is
    /// still the folder `path` names, so the lock works the same.
    pub fn state_dir(&self) -> PathBuf {
        self.path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_owned)
    }
}

/// `[settings.timeouts]`, in the config's own model (read from seconds);
/// the host (`curupira-host`, `config::client_options`) turns it into the client's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// How long to wait for the `initialize` reply.
    pub initialize: Duration,
    /// How long to wait for the reply to any other request but `shutdown`.
    pub request: Duration,
    /// How long to wait for the `shutdown` reply, and then for the process to exit.
    pub shutdown: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            initialize: Duration::from_secs_f64(DEFAULT_INITIALIZE_TIMEOUT),
            request: Duration::from_secs_f64(DEFAULT_REQUEST_TIMEOUT),
            shutdown: Duration::from_secs_f64(DEFAULT_SHUTDOWN_TIMEOUT),
        }
    }
}

/// Polling settings of one automation (never sent to the extension).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Polling {
    /// `batch_size`: new items per round at most (the `limit` of each poll); items
    /// already handled do not count, up to 10 × this many polls.
    pub batch_size: u32,
    /// `interval_seconds`: the pause between the end of a round and the next
    /// (continuous runs).
    pub interval: Duration,
}

/// One `[extensions.NAME]` or `[plugins.NAME]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionConfig {
    /// The table's key: how automations name it in `NAME/type`.
    pub name: String,
    /// Where it comes from.
    pub source: ExtensionSource,
    /// `process`, when written: how long one of its processes serves.
    pub process: Option<ProcessMode>,
}

/// `[extensions.NAME] process`: how long one process of an extension serves
/// (the host).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessMode {
    /// `"round"`: one process per round (the default, except for built-ins), as
    /// extensions written for the reference host expect.
    Round,
    /// `"run"`: one process for the whole run (the default of the built-in
    /// `local-queue`), for an extension that keeps what it needs in memory.
    Run,
}

impl ProcessMode {
    /// The values of `process`, as written.
    pub const NAMES: [&'static str; 2] = ["round", "run"];

    /// The mode called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "round" => Some(ProcessMode::Round),
            "run" => Some(ProcessMode::Run),
            _ => None,
        }
    }
}

impl ExtensionConfig {
    /// The table it is written in: `extensions`, or `plugins` for a
    /// [`ExtensionSource::Plugin`].
    pub fn section(&self) -> &'static str {
        match self.source {
            ExtensionSource::Plugin { .. } => "plugins",
            ExtensionSource::Folder(_) | ExtensionSource::Builtin(_) => "extensions",
        }
    }

    /// The pointer of its table: `/extensions/NAME` or `/plugins/NAME`.
    pub fn pointer(&self) -> JsonPointer {
        JsonPointer::root().key(self.section()).key(&self.name)
    }
}

/// Where an extension comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtensionSource {
    /// `path = "…"`: a folder with a `curupira-extension.toml`, made absolute.
    Folder(PathBuf),
    /// `builtin = "…"`: one of [`BUILTINS`], run from the host's own executable.
    Builtin(String),
    /// `[plugins.NAME] type = "uvx" | "npx", args = [...]`, the reference host's
    /// registration: no manifest, launched as `uvx ARGS…` / `npx ARGS…` verbatim in
    /// the host's own working directory; its trigger types are what `describe` lists.
    Plugin {
        /// `type`.
        launcher: PluginType,
        /// `args`, never empty.
        args: Vec<String>,
    },
}

curupira_diagnostics::closed_set! {
    /// `[plugins.NAME] type`: the program that launches the extension, as the
    /// reference host accepts it (nothing else: `executable` and `command` are refused
    /// there too).
    PluginType {
        /// `uvx ARGS…`.
        Uvx = "uvx",
        /// `npx ARGS…`.
        Npx = "npx",
    }
}

/// One `[automations.NAME]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Automation {
    /// The table's key.
    pub name: String,
    /// `trigger`.
    pub trigger: TriggerRef,
    /// The prompt template's text (inline, or read from `prompt_file`).
    pub prompt: String,
    /// `prompt_file`, made absolute, when the prompt came from a file.
    pub prompt_file: Option<PathBuf>,
    /// `arguments`, as the JSON sent to the extension (before schema defaults).
    pub arguments: Map<String, Value>,
    /// `polling`, merged over `[settings.polling]`.
    pub polling: Polling,
    /// `agent.command`, or `[settings.agent] command`; `None` when neither is set.
    pub agent: Option<Vec<String>>,
    /// The coding-agent provider its agents are (`provider = "…"`, its own or
    /// `[settings.agent]`'s), with its options; then [`agent`](Self::agent) is `None`.
    pub provider: Option<ProviderAgent>,
    /// How its agents run: `[settings.agent]` with the automation's `agent = { … }`
    /// merged over it, key by key.
    pub agent_policy: AgentPolicy,
    /// Where its agents run: `[settings.workspace]` with the automation's
    /// `workspace = { … }` merged over it, key by key (hooks one by one).
    pub workspace_policy: WorkspacePolicy,
    /// `unfilled`: what a task whose prompt leaves a placeholder unfilled gets.
    pub unfilled: Unfilled,
    /// The form its table is written in. In the reference form the prompt is a Jinja
    /// template and `arguments` holds every key of the table but the protocol's core
    /// keys.
    pub form: Form,
    /// `repository` (the reference form): the alias of its `[repositories.*]`.
    pub repository: Option<String>,
    /// `checkout` (the reference form).
    pub checkout: Checkout,
    /// `profile` (the reference form), else `[agents.defaults] profile`: the profile
    /// its agents are.
    pub profile: Option<String>,
    /// Why its profile cannot make an agent, where the reference host accepts the
    /// file and fails each task at dispatch (a Gemini profile with `effort`, a `model`
    /// that is not a string): `validate` warns, `run` refuses the automation.
    pub agent_error: Option<String>,
}

curupira_diagnostics::closed_set! {
    /// `[automations.NAME] unfilled`: what a task whose rendered prompt leaves a
    /// `${key}` that neither its item nor the host fills gets (the run says so either
    /// way, in a `task.unfilled` event, once per automation and key).
    #[derive(Default)]
    Unfilled {
        /// The task runs, the placeholder as written (the default).
        #[default]
        Warn = "warn",
        /// The task is refused before its agent starts; not finished, so a later run
        /// hands it over again.
        Fail = "fail",
    }
}

/// How an automation's agents are run: concurrency, time limits and retries, from
/// `[settings.agent]` and the automation's `agent = { … }`. Durations are whole
/// seconds in the file. The command itself is [`Automation::agent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentPolicy {
    /// `[settings.agent] max_concurrent`: the most agents running at once in the
    /// whole run, all automations together. The same in every automation.
    pub max_concurrent: u32,
    /// The automation's own `max_concurrent`: the most of *its* agents at once, under
    /// the global limit. `None` when it writes none (only the global limit applies).
    pub cap: Option<u32>,
    /// `timeout_seconds`: the longest one agent run may take (wall clock); `None` is
    /// no limit.
    pub timeout: Option<Duration>,
    /// `stall_seconds`: the longest an agent may write nothing on stdout or stderr;
    /// `None` is no limit.
    pub stall: Option<Duration>,
    /// `kill_grace_seconds`: between SIGTERM to the agent's process group and
    /// SIGKILL.
    pub kill_grace: Duration,
    /// `retries`: attempts after the first one that failed.
    pub retries: u32,
    /// `retry_backoff_seconds`: the pause before the first retry; it doubles for each
    /// later one.
    pub retry_backoff: Duration,
    /// `max_retry_backoff_seconds`: the longest pause between retries; never shorter
    /// than `retry_backoff`.
    pub max_retry_backoff: Duration,
}

impl Default for AgentPolicy {
    fn default() -> Self {
        Self {
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            cap: None,
            timeout: None,
            stall: None,
            kill_grace: Duration::from_secs(DEFAULT_KILL_GRACE_SECONDS),
            retries: 0,
            retry_backoff: Duration::from_secs(DEFAULT_RETRY_BACKOFF_SECONDS),
            max_retry_backoff: Duration::from_secs(DEFAULT_MAX_RETRY_BACKOFF_SECONDS),
        }
    }
}

impl AgentPolicy {
    /// The most agents of this automation running at once: its cap, never above the
    /// global limit.
    pub fn concurrency(&self) -> u32 {
        self.cap
            .map_or(self.max_concurrent, |cap| cap.min(self.max_concurrent))
    }
}

curupira_diagnostics::closed_set! {
    /// `[settings.workspace] mode`: where an automation's agents run.
    #[derive(Default)]
    WorkspaceMode {
        /// In the config's folder, all agents together (the default).
        #[default]
        Shared = "shared",
        /// Each task in its own `git worktree` under the workspace `root`.
        Worktree = "worktree",
    }
}

curupira_diagnostics::closed_set! {
    /// `[settings.workspace] cleanup`: when a task's worktree is removed (its branch
    /// never is).
    #[derive(Default)]
    Cleanup {
        /// When the task succeeded; a failed task's worktree stays for inspection (the
        /// default).
        #[default]
        OnSuccess = "on-success",
        /// After every task.
        Always = "always",
        /// Never: worktrees stay until removed by hand.
        Never = "never",
    }
}

/// `[settings.workspace] hooks`: shell commands run in the workspace at points of its
/// life; `None` where not set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hooks {
    /// `after_create`: after the worktree is created; its failure fails the task.
    pub after_create: Option<String>,
    /// `before_run`: before each agent attempt; its failure fails the attempt.
    pub before_run: Option<String>,
    /// `after_run`: after each agent attempt; its failure is logged.
    pub after_run: Option<String>,
    /// `before_remove`: before the worktree is removed; its failure is logged.
    pub before_remove: Option<String>,
}

/// An automation's agent when it is a known coding-agent CLI (`provider = "…"`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderAgent {
    /// The provider and its options, checked.
    pub profile: curupira_agents::Profile,
    /// `resume`: whether an interrupted session is resumed on the task's next attempt.
    pub resume: bool,
    /// `continue_prompt`: what a resumed session is told before the prompt.
    pub continue_prompt: String,
}

/// Where an automation's agents run, from `[settings.workspace]` and the
/// automation's `workspace = { … }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePolicy {
    /// `mode`.
    pub mode: WorkspaceMode,
    /// `root`, absolute: the folder that holds the worktrees (a relative `root` is
    /// relative to the config's folder; by default [`DEFAULT_WORKTREE_ROOT`] there).
    pub root: PathBuf,
    /// `base`: the Git revision worktrees start from; `None` is `HEAD` at the time the
    /// run started.
    pub base: Option<String>,
    /// `cleanup`.
    pub cleanup: Cleanup,
    /// `hook_timeout_seconds`: the longest one hook may run.
    pub hook_timeout: Duration,
    /// `hooks`.
    pub hooks: Hooks,
}

impl WorkspacePolicy {
    /// The policy when nothing is written, for a config in the folder `dir`.
    pub fn defaults_in(dir: &Path) -> Self {
        Self {
            mode: WorkspaceMode::default(),
            root: dir.join(DEFAULT_WORKTREE_ROOT),
            base: None,
            cleanup: Cleanup::default(),
            hook_timeout: Duration::from_secs(DEFAULT_HOOK_TIMEOUT_SECONDS),
            hooks: Hooks::default(),
        }
    }
}

/// An automation's `trigger`: a type, optionally qualified by the extension
/// (`NAME/type`, the reference host's `alias/local`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerRef {
    /// The `NAME` of `NAME/type`: a key of `[extensions]` or `[plugins]`.
    pub extension: Option<String>,
    /// The trigger type, as the extension names it (the local name).
    pub trigger_type: String,
}

impl TriggerRef {
    /// Whether it is the built-in `cron` trigger: the bare type `cron` (which a
    /// configured extension offering a `cron` of its own takes over in this host's
    /// form).
    pub fn is_builtin_cron(&self) -> bool {
        self.extension.is_none() && self.trigger_type == curupira_cron::TRIGGER_TYPE
    }
}

impl std::fmt::Display for TriggerRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.extension {
            Some(extension) => write!(f, "{extension}/{}", self.trigger_type),
            None => f.write_str(&self.trigger_type),
        }
    }
}

impl Config {
    /// The text of the config file (for reports that quote it).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// `[settings.agent] max_concurrent`: the most agents running at once in the whole
    /// run, all automations together.
    pub fn global_max_concurrent(&self) -> u32 {
        self.settings.agent.max_concurrent
    }

    /// The automation called `name`.
    pub fn automation(&self, name: &str) -> Option<&Automation> {
        self.automations.iter().find(|a| a.name == name)
    }

    /// Whether the file has no error (warnings allowed). A
    /// [partial](super::Loaded::partial) config is not complete, and nothing may run
    /// from it.
    pub fn is_complete(&self) -> bool {
        self.complete
    }
}
