//! The layout of `curupira.toml` as editors see it: one type per table, next to the
//! checker (`config::check`) that reads the same keys by hand. It reads by hand because
//! it reports every problem of a file in one pass, each at its line and column: a serde
//! reader stops at the first error, and a lenient one (each leaf an untagged "this
//! type, or whatever was written") loses `toml`'s spans, which serde's buffering of
//! untagged enums and `flatten` drops (toml-rs/toml#535 and #589). So these types are
//! the single description of the file's *layout* (the schema, [`docs/CONFIG.md`](https://example.invalid/curupira/blob/main/docs/CONFIG.md)), the
//! checker the single description of its *meaning*, and tests bind the two in both
//! directions, for both forms: every key here is one the checker knows, and every
//! file the checker takes without a warning fits. [`config_schema`] derives the JSON Schema from
//! these types (`curupira schema config`, `schemas/curupira.schema.json`), and
//! [`docs/CONFIG.md`](https://example.invalid/curupira/blob/main/docs/CONFIG.md) is generated from that schema. Defaults are the checker's
//! constants; `x-codes` lists the diagnostic codes a key can raise besides
//! `config/invalid-type` and `config/unknown-key`. A test checks that every key here is
//! one the checker knows and that the checker's full example fits the schema.

use std::collections::BTreeMap;

pub mod reference;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::model::{
    BUILTINS, Cleanup, DEFAULT_BATCH_SIZE, DEFAULT_HISTORY_DAYS, DEFAULT_HISTORY_PER_TASK,
    DEFAULT_HOOK_TIMEOUT_SECONDS, DEFAULT_IDLE_NOTICE_SECONDS, DEFAULT_INITIALIZE_TIMEOUT,
    DEFAULT_INTERVAL_SECONDS, DEFAULT_KILL_GRACE_SECONDS, DEFAULT_LEDGER_PATH,
    DEFAULT_LOG_MAX_BYTES, DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_RETRY_BACKOFF_SECONDS,
    DEFAULT_REQUEST_TIMEOUT, DEFAULT_RETRY_BACKOFF_SECONDS, DEFAULT_SHUTDOWN_TIMEOUT,
    DEFAULT_WORKTREE_ROOT, LogLevel, MAX_CONCURRENT_LIMIT, MAX_HISTORY_DAYS, MAX_HISTORY_PER_TASK,
    MAX_LOG_MAX_BYTES, MAX_RETRIES, MAX_SECONDS, MIN_LOG_MAX_BYTES, PluginType, Unfilled,
    WorkspaceMode,
};

/// `curupira.toml`: the host's configuration.
#[derive(JsonSchema)]
#[schemars(
    title = "curupira.toml",
    description = "The Curupira host's configuration: settings, the extensions that offer triggers, and the automations that hand their items to an agent. Reference: docs/CONFIG.md.",
    deny_unknown_fields
)]
pub struct ConfigFile {
    /// Settings for the whole run.
    pub settings: Option<SettingsFile>,
    /// The extensions, by name (the `NAME` of `trigger = "NAME/type"`; no `/` in a
    /// name, and none the same as a key of `[plugins]`).
    #[schemars(extend("propertyNames" = { "pattern": "^[^/]+$" }))]
    pub extensions: Option<BTreeMap<String, ExtensionFile>>,
    /// Extensions registered as the reference host registers them, by alias (the
    /// `NAME` of `trigger = "NAME/type"`, one namespace with `[extensions]`; no `/` in
    /// a name). No manifest: the host asks each one `describe` for its trigger types.
    #[schemars(extend("propertyNames" = { "pattern": "^[^/]+$" }, "x-codes" = ["config/duplicate-name"]))]
    pub plugins: Option<BTreeMap<String, PluginFile>>,
    /// The automations, by name, run in file order.
    #[schemars(extend("x-codes" = ["config/no-automations"]))]
    pub automations: Option<BTreeMap<String, AutomationFile>>,
}

/// `[settings]`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SettingsFile {
    /// The repository (`acme/widgets`) for `${repository}`; default: derived from `git
    /// remote get-url origin` in the config's folder (its last two path segments).
    #[schemars(length(min = 1), extend("x-codes" = ["config/invalid-value", "config/repository"]))]
    pub repository: Option<String>,
    /// Polling of every automation (an automation's `polling` overrides it key by key).
    pub polling: Option<PollingFile>,
    /// How agents run (an automation's `agent` overrides it key by key).
    pub agent: Option<AgentFile>,
    /// Where agents run (an automation's `workspace` overrides it key by key).
    pub workspace: Option<WorkspaceFile>,
    /// The extension protocol.
    pub protocol: Option<ProtocolFile>,
    /// How long to wait for extensions' replies, in seconds.
    pub timeouts: Option<TimeoutsFile>,
    /// The durable task ledger.
    pub ledger: Option<LedgerFile>,
    /// What `run` tells people while it runs.
    pub status: Option<StatusFile>,
    /// `run`'s status page, JSON API and metrics over HTTP.
    pub http: Option<HttpFile>,
}

/// `[settings.http]`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HttpFile {
    /// Serve the status page (`/`), the JSON API (`/api/v1/…`) and the metrics
    /// (`/metrics`) on this address and port while `run` runs, e.g. `127.0.0.1:8080`
    /// (`run --listen` overrides it). Off when not written.
    #[schemars(length(min = 1), extend("x-codes" = ["config/invalid-value", "config/invalid-type"]))]
    pub listen: Option<String>,
    /// Allow `listen` to be another address than loopback. The server has no
    /// authentication: anyone who reaches the address can read the tasks and ask for
    /// retries.
    #[schemars(extend("default" = false, "x-codes" = ["config/invalid-type"]))]
    pub allow_remote: Option<bool>,
}

/// `[settings.status]`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StatusFile {
    /// After this many seconds with no attempt running nor waiting for a retry, a
    /// continuous run says it waits and when its next round is (`host.waiting`), and
    /// again each time as long passes; 0: never.
    #[schemars(range(min = 0, max = MAX_SECONDS), extend("default" = DEFAULT_IDLE_NOTICE_SECONDS, "x-codes" = ["config/invalid-value", "config/invalid-type"]))]
    pub idle_notice_seconds: Option<u64>,
    /// Whether `run --format human` keeps a live status line (running tasks and their
    /// time, waiting retries, the next round) at the bottom of a terminal; never when
    /// its output is not a terminal.
    #[schemars(extend("default" = true, "x-codes" = ["config/invalid-type"]))]
    pub live_line: Option<bool>,
}

/// `[settings.polling]` or an automation's `polling`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PollingFile {
    /// The most new items in one round (items already handled do not count; at most
    /// 10 × this many polls in all).
    #[schemars(range(min = 1), extend("default" = DEFAULT_BATCH_SIZE, "x-codes" = ["config/batch-size"]))]
    pub batch_size: Option<u32>,
    /// Seconds between rounds when running continuously (integer or fractional).
    #[schemars(range(min = 0.0, max = 999_999_999.0), extend("default" = DEFAULT_INTERVAL_SECONDS, "x-codes" = ["config/invalid-value"]))]
    pub interval_seconds: Option<f64>,
}

/// `[settings.agent]` or an automation's `agent`: durations are whole seconds, at most
/// one year.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AgentFile {
    /// The agent program and its arguments; the prompt goes to its stdin. The program
    /// (the first element) may not be empty.
    #[schemars(length(min = 1), extend("prefixItems" = [{ "type": "string", "minLength": 1 }], "x-codes" = ["config/invalid-value", "config/missing-agent", "config/agent-not-runnable"]))]
    pub command: Option<Vec<String>>,
    /// A coding-agent CLI the host knows (see the agents reference): it decides the command
    /// line, reads the CLI's stream and resumes its session. Not with `command`.
    #[schemars(extend("enum" = ["claude", "codex", "cursor", "gemini", "copilot", "kilo", "opencode", "pi", "qwen"], "x-codes" = ["config/invalid-value", "config/agent-conflict", "config/agent-not-runnable", "config/agent-version", "config/agent-version-unknown"]))]
    pub provider: Option<String>,
    /// Provider option: the model (all providers; Kilo's as `provider/model`).
    #[schemars(length(min = 1), extend("x-codes" = ["config/provider-option"]))]
    pub model: Option<String>,
    /// Provider option: the CLI's named agent, mode or profile (claude, codex, cursor,
    /// copilot, kilo, opencode).
    #[schemars(length(min = 1), extend("x-codes" = ["config/provider-option"]))]
    pub agent: Option<String>,
    /// Provider option: the reasoning effort or variant (claude, codex, copilot, kilo,
    /// opencode, pi).
    #[schemars(length(min = 1), extend("x-codes" = ["config/provider-option", "config/provider-option-ignored"]))]
    pub effort: Option<String>,
    /// Provider option (claude): `--permission-mode`.
    #[schemars(length(min = 1), extend("x-codes" = ["config/provider-option"]))]
    pub permission_mode: Option<String>,
    /// Provider option (claude): `--permission-prompts`.
    #[schemars(length(min = 1), extend("x-codes" = ["config/provider-option"]))]
    pub permission_prompts: Option<String>,
    /// Provider option (codex): `--sandbox`.
    #[schemars(length(min = 1), extend("x-codes" = ["config/provider-option"]))]
    pub sandbox: Option<String>,
    /// Provider option (codex): approvals on request, answered by the auto reviewer.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub auto_review: Option<bool>,
    /// Provider option (cursor): `--force`.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub force: Option<bool>,
    /// Provider option (cursor): `--trust`.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub trust: Option<bool>,
    /// Provider option (gemini, qwen): `--approval-mode`.
    #[schemars(length(min = 1), extend("x-codes" = ["config/provider-option"]))]
    pub approval_mode: Option<String>,
    /// Provider option (gemini): `--skip-trust`.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub skip_trust: Option<bool>,
    /// Provider option (copilot): `--allow-all-tools`.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub allow_all_tools: Option<bool>,
    /// Provider option (copilot): `--allow-tool=`, no entry with a comma.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub allow_tools: Option<Vec<String>>,
    /// Provider option (copilot): `--deny-tool=`, no entry with a comma.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub deny_tools: Option<Vec<String>>,
    /// Provider option (kilo, opencode): `--auto`.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub auto_approve: Option<bool>,
    /// Provider option (opencode): `v1`, `v2`, or `auto` (from `opencode --version`).
    #[schemars(extend("enum" = ["v1", "v2", "auto"], "default" = "auto", "x-codes" = ["config/provider-option", "config/agent-version"]))]
    pub api: Option<String>,
    /// Provider option (pi): `--provider`; needs `model`.
    #[schemars(length(min = 1), extend("x-codes" = ["config/provider-option"]))]
    pub model_provider: Option<String>,
    /// Provider option (pi): `--tools`.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub tools: Option<Vec<String>>,
    /// Provider option (pi): `--exclude-tools`.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub exclude_tools: Option<Vec<String>>,
    /// Provider option (pi): `--approve`, or `--no-approve` when false.
    #[schemars(extend("x-codes" = ["config/provider-option"]))]
    pub approve: Option<bool>,
    /// Provider option (qwen): `--max-session-turns`.
    #[schemars(range(min = 1), extend("x-codes" = ["config/provider-option"]))]
    pub max_session_turns: Option<u64>,
    /// With a provider: whether a task interrupted mid-session (the host's death, a
    /// timeout, a stall, a stop) resumes that session on its next attempt.
    #[schemars(extend("default" = true, "x-codes" = ["config/invalid-value"]))]
    pub resume: Option<bool>,
    /// With a provider: what a resumed session is told before the task's prompt
    /// (default: the reference host's continue prompt).
    #[schemars(length(min = 1), extend("x-codes" = ["config/invalid-value"]))]
    pub continue_prompt: Option<String>,
    /// In `[settings.agent]`: the most agents at once, all automations together. In an
    /// automation: the most of its own agents at once, under that limit.
    #[schemars(range(min = 1, max = MAX_CONCURRENT_LIMIT), extend("default" = DEFAULT_MAX_CONCURRENT, "x-codes" = ["config/invalid-value", "config/shared-workspace"]))]
    pub max_concurrent: Option<u32>,
    /// The longest one agent run may take (wall clock); default: no limit.
    #[schemars(range(min = 1, max = MAX_SECONDS), extend("x-codes" = ["config/invalid-value"]))]
    pub timeout_seconds: Option<u64>,
    /// The longest an agent may write nothing on stdout or stderr; default: no limit.
    #[schemars(range(min = 1, max = MAX_SECONDS), extend("x-codes" = ["config/invalid-value"]))]
    pub stall_seconds: Option<u64>,
    /// Seconds between SIGTERM to the agent's process group and SIGKILL.
    #[schemars(range(max = MAX_SECONDS), extend("default" = DEFAULT_KILL_GRACE_SECONDS, "x-codes" = ["config/invalid-value"]))]
    pub kill_grace_seconds: Option<u64>,
    /// Attempts after a failed first one.
    #[schemars(range(max = MAX_RETRIES), extend("default" = 0, "x-codes" = ["config/invalid-value"]))]
    pub retries: Option<u32>,
    /// The pause before the first retry; it doubles for each later one.
    #[schemars(range(max = MAX_SECONDS), extend("default" = DEFAULT_RETRY_BACKOFF_SECONDS, "x-codes" = ["config/invalid-value"]))]
    pub retry_backoff_seconds: Option<u64>,
    /// The longest pause between retries; not below `retry_backoff_seconds` (default:
    /// 300, or `retry_backoff_seconds` when that is longer).
    #[schemars(range(max = MAX_SECONDS), extend("default" = DEFAULT_MAX_RETRY_BACKOFF_SECONDS, "x-codes" = ["config/invalid-value"]))]
    pub max_retry_backoff_seconds: Option<u64>,
}

/// `[settings.workspace]` or an automation's `workspace`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WorkspaceFile {
    /// Where agents run: `shared` (the config's folder, all agents together) or
    /// `worktree` (each task in its own `git worktree` under `root`).
    #[schemars(extend("default" = WorkspaceMode::default().as_str(), "x-codes" = ["config/invalid-value", "config/worktree-unavailable"]))]
    pub mode: Option<WorkspaceMode>,
    /// The folder that holds the worktrees, relative to the config's folder.
    #[schemars(length(min = 1), extend("default" = DEFAULT_WORKTREE_ROOT, "x-codes" = ["config/invalid-value"]))]
    pub root: Option<String>,
    /// The Git revision worktrees start from; default: `HEAD` when the run started.
    /// Must not start with `-` or hold control characters.
    #[schemars(pattern(r"^[^-\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"), extend("x-codes" = ["config/invalid-value", "config/unknown-base"]))]
    pub base: Option<String>,
    /// When a task's worktree is removed (its branch never is): `on-success` (a failed
    /// task's worktree stays for inspection), `always` or `never`.
    #[schemars(extend("default" = Cleanup::default().as_str(), "x-codes" = ["config/invalid-value"]))]
    pub cleanup: Option<Cleanup>,
    /// The longest one hook may run, in whole seconds.
    #[schemars(range(min = 1, max = MAX_SECONDS), extend("default" = DEFAULT_HOOK_TIMEOUT_SECONDS, "x-codes" = ["config/invalid-value"]))]
    pub hook_timeout_seconds: Option<u64>,
    /// Shell commands run in the workspace at points of its life.
    pub hooks: Option<HooksFile>,
}

/// `hooks`: shell commands (`sh -c`), in the order they run.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HooksFile {
    /// After the worktree is created; its failure fails the task.
    #[schemars(pattern(r"\S"), extend("x-codes" = ["config/invalid-value"]))]
    pub after_create: Option<String>,
    /// Before each agent attempt; its failure fails the attempt.
    #[schemars(pattern(r"\S"), extend("x-codes" = ["config/invalid-value"]))]
    pub before_run: Option<String>,
    /// After each agent attempt; its failure is logged.
    #[schemars(pattern(r"\S"), extend("x-codes" = ["config/invalid-value"]))]
    pub after_run: Option<String>,
    /// Before the worktree is removed; its failure is logged.
    #[schemars(pattern(r"\S"), extend("x-codes" = ["config/invalid-value"]))]
    pub before_remove: Option<String>,
}

/// `[settings.protocol]`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProtocolFile {
    /// The largest frame body accepted from or sent to an extension, in bytes.
    #[schemars(range(min = 1, max = 4_294_967_295_u64), extend("default" = curupira_framing::DEFAULT_MAX_BODY, "x-codes" = ["config/invalid-value"]))]
    pub max_frame_bytes: Option<u64>,
}

/// `[settings.timeouts]`: seconds, integer or fractional, above 0.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TimeoutsFile {
    /// How long to wait for the `initialize` reply.
    #[schemars(range(max = 999_999_999.0), extend("exclusiveMinimum" = 0, "default" = DEFAULT_INITIALIZE_TIMEOUT, "x-codes" = ["config/invalid-value"]))]
    pub initialize: Option<f64>,
    /// How long to wait for the reply to any other request but `shutdown`.
    #[schemars(range(max = 999_999_999.0), extend("exclusiveMinimum" = 0, "default" = DEFAULT_REQUEST_TIMEOUT, "x-codes" = ["config/invalid-value"]))]
    pub request: Option<f64>,
    /// How long to wait for the `shutdown` reply, and again for the process to exit.
    #[schemars(range(max = 999_999_999.0), extend("exclusiveMinimum" = 0, "default" = DEFAULT_SHUTDOWN_TIMEOUT, "x-codes" = ["config/invalid-value"]))]
    pub shutdown: Option<f64>,
}

/// `[settings.ledger]`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LedgerFile {
    /// `false` keeps task identities for the process only.
    #[schemars(extend("default" = true))]
    pub enabled: Option<bool>,
    /// The ledger's SQLite file, relative to the config's folder; its folder also holds
    /// `run.lock` and `watchdog.lock`.
    #[schemars(length(min = 1), extend("default" = DEFAULT_LEDGER_PATH, "x-codes" = ["config/invalid-value", "config/ledger-unreadable"]))]
    pub path: Option<String>,
    /// Days an ended attempt stays in the ledger's attempt history (`tasks show`); the
    /// ledger's writer thread prunes older ones while a host runs.
    #[schemars(range(min = 1, max = MAX_HISTORY_DAYS), extend("default" = DEFAULT_HISTORY_DAYS, "x-codes" = ["config/invalid-value", "config/invalid-type"]))]
    pub history_days: Option<u32>,
    /// Attempts of one task the history keeps, the newest.
    #[schemars(range(min = 1, max = MAX_HISTORY_PER_TASK), extend("default" = DEFAULT_HISTORY_PER_TASK, "x-codes" = ["config/invalid-value", "config/invalid-type"]))]
    pub history_per_task: Option<u32>,
    /// The most bytes one attempt's log keeps (`tasks log`): past it, its oldest half
    /// goes behind a marker line.
    #[schemars(range(min = MIN_LOG_MAX_BYTES, max = MAX_LOG_MAX_BYTES), extend("default" = DEFAULT_LOG_MAX_BYTES, "x-codes" = ["config/invalid-value", "config/invalid-type"]))]
    pub log_max_bytes: Option<u64>,
}

/// `[extensions.NAME]`: exactly one of `path` and `builtin`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, extend("x-codes" = ["config/missing-key", "config/extension-conflict", "config/extension-failed"]))]
pub struct ExtensionFile {
    /// A folder with a `curupira-extension.toml`, relative to the config's folder.
    #[schemars(length(min = 1), extend("x-codes" = ["config/invalid-value", "config/missing-manifest"]))]
    pub path: Option<String>,
    /// An extension built into `curupira`, run from its own executable.
    #[schemars(extend("x-codes" = ["config/unknown-builtin"]))]
    pub builtin: Option<Builtin>,
    /// How long one process of it serves: `"round"` (one process per round: polls and
    /// the hooks of the round's tasks, as extensions written for the reference host
    /// expect) or `"run"` (one for the whole run). Default: `"run"` for a built-in,
    /// `"round"` otherwise.
    #[schemars(extend("x-codes" = ["config/invalid-value"]))]
    pub process: Option<ProcessModeName>,
}

/// `"round"` or `"run"` ([`crate::ProcessMode`]).
pub struct ProcessModeName;

impl JsonSchema for ProcessModeName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProcessMode".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "enum": crate::ProcessMode::NAMES })
    }
}

/// `[plugins.NAME]`: the reference host's registration, launched as `uvx ARGS…` or
/// `npx ARGS…` verbatim, in the host's own working directory (not the config's
/// folder: relative paths in `args` start there). It has no manifest: before anything
/// else (`validate`, `run`, `plugins list`), the host starts it once, asks
/// `initialize` and `describe`, and shuts it down; the trigger types `describe` lists
/// are what automations can name.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, extend("x-codes" = ["config/missing-key", "config/extension-failed"]))]
pub struct PluginFile {
    /// The program that runs `args`: `uvx` or `npx` (the reference host accepts no
    /// other).
    #[schemars(rename = "type", extend("x-codes" = ["config/plugin-type"]))]
    pub launcher: PluginType,
    /// What `uvx` or `npx` runs, as written (`["--from", "curupira-plugins",
    /// "curupira-plugins"]`).
    #[schemars(length(min = 1), extend("x-codes" = ["config/invalid-value"]))]
    pub args: Vec<String>,
}

/// `[automations.NAME]`: `trigger` and exactly one of `prompt` and `prompt_file`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AutomationFile {
    /// The trigger type (`github-issue`) when one extension offers it, or
    /// `NAME/type` (`acme/github-issue`: an `[extensions]` or `[plugins]` name, then
    /// the type), which is always valid. `NAME:type` is refused with the `/` spelling.
    #[schemars(pattern(r"^(?:[^/]+/[^/]+|[^/:]+)$"), extend("x-codes" = ["config/missing-key", "config/invalid-value", "config/colon-trigger", "config/unknown-trigger", "config/ambiguous-trigger", "config/unknown-extension"]))]
    pub trigger: String,
    /// The prompt template (`${field}` placeholders).
    #[schemars(extend("x-codes" = ["config/missing-key", "config/prompt-conflict", "config/unknown-placeholder", "config/repository"]))]
    pub prompt: Option<String>,
    /// A file holding the prompt template, relative to the config's folder.
    #[schemars(length(min = 1), extend("x-codes" = ["config/prompt-conflict", "config/prompt-file", "config/unknown-placeholder"]))]
    pub prompt_file: Option<String>,
    /// The trigger's arguments (any TOML value; the trigger's own schema checks them).
    #[schemars(extend("x-codes" = ["config/invalid-value", "config/core-key-argument", "config/trigger-rejected", "config/trigger-failed"]))]
    pub arguments: Option<serde_json::Map<String, serde_json::Value>>,
    /// Overrides `[settings.polling]`, key by key.
    pub polling: Option<PollingFile>,
    /// Overrides `[settings.agent]`, key by key; its `max_concurrent` caps this
    /// automation under the global limit.
    pub agent: Option<AgentFile>,
    /// Overrides `[settings.workspace]`, key by key (`hooks` one hook at a time).
    pub workspace: Option<WorkspaceFile>,
    /// What a task whose rendered prompt leaves a `${key}` that neither its item nor
    /// the host fills gets: `warn` (it runs, the placeholder as written) or `fail` (it
    /// is refused before its agent starts, not finished). The run says so either way
    /// (`task.unfilled`), once per automation and key.
    #[schemars(extend("default" = Unfilled::default().as_str(), "x-codes" = ["config/invalid-value"]))]
    pub unfilled: Option<Unfilled>,
}

/// The closed sets of the file: a string, one of the set's values.
macro_rules! closed_set_schemas {
    ($($ty:ident),* $(,)?) => {$(
        impl JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({ "type": "string", "enum": $ty::names().collect::<Vec<_>>() })
            }
        }
    )*};
}

closed_set_schemas!(WorkspaceMode, Cleanup, PluginType, Unfilled, LogLevel);

/// `builtin = "…"`: the name of an extension built into this host ([`BUILTINS`]).
pub struct Builtin;

impl JsonSchema for Builtin {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Builtin".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "enum": BUILTINS })
    }
}

/// The JSON Schema of `curupira.toml` (draft 2020-12), as `curupira schema config`
/// prints it.
pub fn config_schema() -> Schema {
    generator().into_root_schema_for::<ConfigFile>()
}

/// The generator every `curupira schema` uses: draft 2020-12; an optional key is left
/// out, never `null` (TOML has none, and the JSON files' checkers refuse it).
pub fn generator() -> SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12()
        .with_transform(no_null)
        .into_generator()
}

/// Takes `null` out of what an `Option` allows: `"type": ["x", "null"]` becomes
/// `"type": "x"`, `"anyOf": [S, {"type": "null"}]` becomes S.
fn no_null(schema: &mut Schema) {
    schemars::transform::transform_subschemas(&mut no_null, schema);
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(serde_json::Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            object.insert("type".to_owned(), only);
        }
    }
    let is_null = |s: &serde_json::Value| s.get("type").is_some_and(|t| t == "null");
    if let Some(serde_json::Value::Array(any_of)) = object.get("anyOf")
        && any_of.len() == 2
        && any_of.iter().any(is_null)
    {
        let rest = any_of.iter().find(|s| !is_null(s)).cloned();
        object.remove("anyOf");
        if let Some(serde_json::Value::Object(rest)) = rest {
            for (key, value) in rest {
                object.entry(key).or_insert(value);
            }
        }
    }
}

/// The configuration reference ([`docs/CONFIG.md`](https://example.invalid/curupira/blob/main/docs/CONFIG.md)): every key of `schema` (the
/// [`config_schema`]), table by table, with its type, default, diagnostic codes and
/// description, so the page cannot drift from the schema.
pub fn config_reference(schema: &Schema) -> String {
    let root = schema.as_value();
    let mut out = String::from(
        "<!-- Generated by `curupira schema config --markdown > docs/CONFIG.md`; do not edit: \
         the text comes from the doc comments of config/src/schema.rs. -->\n\
         # `curupira.toml` reference\n\n\
         Every key of the host's configuration: its type, its default when it is left out, \
         and the diagnostic codes it can raise (see [DIAGNOSTICS.md](DIAGNOSTICS.md)). \
         Besides those listed, any key can raise `config/invalid-type` (a value of the wrong \
         TOML type), and a key not listed here is `config/unknown-key` (a warning). Paths \
         are relative to the folder of the config file (a `[plugins]` entry's `args` run in \
         the host's own working directory instead). The same facts, as a JSON Schema for \
         editors, are in [`schemas/curupira.schema.json`](../schemas/curupira.schema.json) \
         (`curupira schema config`).\n",
    );
    let mut seen = Vec::new();
    reference_table(root, root, "", "", &mut seen, &mut out);
    out
}

/// The second part of [`docs/CONFIG.md`](https://example.invalid/curupira/blob/main/docs/CONFIG.md): the reference host's `settings.toml`
/// ([`reference::settings_schema`]), every key as this host reads it, its headings
/// marked `(settings.toml)` so that they never take the anchors of the first part's.
/// The tables it shares with `ours` (the [`config_schema`]) are not described again:
/// their rows say "the keys of" the first part's table.
pub fn settings_reference(schema: &Schema, ours: &Schema) -> String {
    let mut seen = Vec::new();
    let ours = ours.as_value();
    reference_table(ours, ours, "", "", &mut seen, &mut String::new());
    let root = schema.as_value();
    let mut out = String::from(
        "\n# The reference host's `settings.toml`\n\n\
         A file with `[repositories]` or `[agents]`, an automation with `trigger_type`, or a \
         file called `settings.toml` with nothing of the form above, is read as the reference \
         host `curupira` 0.4.0 reads it, with the same verdicts at `validate` (see \
         [HOST.md](HOST.md), \"The reference host's settings.toml\"). Its keys, and the tables \
         of the form above that it also takes (marked **This host's**), are below. What the \
         reference host accepts without using it is read with a warning that says what this \
         host does (`config/reference-key`), and is left out of the JSON Schema, \
         [`schemas/curupira-settings.schema.json`](../schemas/curupira-settings.schema.json) \
         (`curupira schema settings`), so that an editor marks it where `validate` warns. \
         Paths may start with `~`; a relative path starts at the config's folder.\n",
    );
    reference_table(root, root, "", SETTINGS_SUFFIX, &mut seen, &mut out);
    out
}

/// What the headings of [`settings_reference`] end with.
const SETTINGS_SUFFIX: &str = " (settings.toml)";

/// One table (`path` is its dotted name, `""` for the file) and the tables under it.
/// `suffix` ends each heading (and so each anchor).
fn reference_table(
    root: &serde_json::Value,
    table: &serde_json::Value,
    path: &str,
    suffix: &str,
    seen: &mut Vec<(String, String)>,
    out: &mut String,
) {
    use std::fmt::Write as _;
    let table = resolve(root, table);
    let heading = if path.is_empty() {
        format!("The file{suffix}")
    } else {
        format!("`[{path}]`{suffix}")
    };
    let _ = write!(out, "\n## {heading}\n\n");
    if let Some(text) = table.get("description").and_then(serde_json::Value::as_str) {
        let _ = writeln!(out, "{}\n", one_line(text));
    }
    if let Some(codes) = codes_of(table) {
        let _ = writeln!(out, "Codes of the table: {codes}.\n");
    }
    let Some(properties) = table
        .get("properties")
        .and_then(serde_json::Value::as_object)
    else {
        return;
    };
    let required: Vec<&str> = table
        .get("required")
        .and_then(serde_json::Value::as_array)
        .map(|r| r.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("| Key | Type | Default | Codes | Description |\n");
    out.push_str("| --- | --- | --- | --- | --- |\n");
    let mut below = Vec::new();
    let mut keys: Vec<(&String, &serde_json::Value)> = properties.iter().collect();
    keys.sort_by_key(|(key, _)| {
        let first = TABLE_ORDER.iter().position(|k| k == key);
        (first.unwrap_or(TABLE_ORDER.len()), key.as_str())
    });
    for (key, member) in keys {
        let target = resolve(root, member);
        let here = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        let description = member
            .get("description")
            .or_else(|| target.get("description"))
            .and_then(serde_json::Value::as_str)
            .map(one_line)
            .unwrap_or_default();
        let (kind, sub) = if target.get("properties").is_some() {
            let reference = member.get("$ref").and_then(serde_json::Value::as_str);
            match reference.and_then(|r| seen.iter().find(|(s, _)| s == r)) {
                Some((_, first)) => (format!("table, the keys of `[{first}]`"), None),
                None => {
                    if let Some(r) = reference {
                        seen.push((r.to_owned(), here.clone()));
                    }
                    (
                        format!("table, [below](#{})", anchor(&format!("{here}{suffix}"))),
                        Some(here.clone()),
                    )
                }
            }
        } else if let Some(values) = target
            .get("additionalProperties")
            .filter(|v| v.get("properties").is_some() || v.get("$ref").is_some())
        {
            let name = format!("{here}.NAME");
            let reference = values.get("$ref").and_then(serde_json::Value::as_str);
            match reference.and_then(|r| seen.iter().find(|(s, _)| s == r)) {
                Some((_, first)) => (format!("tables by name, the keys of `[{first}]`"), None),
                None => {
                    if let Some(r) = reference {
                        seen.push((r.to_owned(), name.clone()));
                    }
                    let link = anchor(&format!("{name}{suffix}"));
                    below.push((values.clone(), name));
                    (format!("tables by name, [below](#{link})"), None)
                }
            }
        } else {
            (type_of(target), None)
        };
        if let Some(sub) = sub {
            below.push((member.clone(), sub));
        }
        let default = member
            .get("default")
            .or_else(|| target.get("default"))
            .map(|d| format!("`{d}`"))
            .unwrap_or_else(|| {
                if required.contains(&key.as_str()) {
                    "required".to_owned()
                } else {
                    "—".to_owned()
                }
            });
        let codes = codes_of(member).unwrap_or_else(|| "—".to_owned());
        let _ = writeln!(
            out,
            "| `{key}` | {kind} | {default} | {codes} | {description} |"
        );
    }
    for (schema, name) in below {
        reference_table(root, &schema, &name, suffix, seen, out);
    }
}

/// Keys documented first, in this order (the rest alphabetically): the file's tables
/// in the order they are usually written, so `[settings.*]` lists the shared keys.
const TABLE_ORDER: [&str; 4] = ["settings", "extensions", "plugins", "automations"];

/// The schema `value` refers to (`$ref` into `$defs`), or `value` itself.
fn resolve<'a>(root: &'a serde_json::Value, value: &'a serde_json::Value) -> &'a serde_json::Value {
    value
        .get("$ref")
        .and_then(serde_json::Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
        .unwrap_or(value)
}

/// A value's type in words, with its range, pattern or set.
fn type_of(schema: &serde_json::Value) -> String {
    use serde_json::Value;
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = values.iter().map(|v| format!("`{}`", text_of(v))).collect();
        return format!("string, one of {}", names.join(", "));
    }
    let mut kind = match schema.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "object" => "table".to_owned(),
            "number" => "number (integer or fractional)".to_owned(),
            other => other.to_owned(),
        },
        _ => "any".to_owned(),
    };
    if kind == "array"
        && let Some(items) = schema.get("items")
    {
        let item = type_of(items);
        kind = if item.contains(',') {
            format!("array of ({item})")
        } else {
            format!("array of {item}")
        };
    }
    let bound = |key: &str| schema.get(key).map(text_of);
    match (
        bound("minimum").or(bound("exclusiveMinimum").map(|m| format!("> {m}"))),
        bound("maximum"),
    ) {
        (Some(min), Some(max)) if min.starts_with('>') => {
            kind.push_str(&format!(" {min}, ≤ {max}"))
        }
        (Some(min), Some(max)) => kind.push_str(&format!(" {min}..{max}")),
        (Some(min), None) if min.starts_with('>') => kind.push_str(&format!(" {min}")),
        (Some(min), None) => kind.push_str(&format!(" ≥ {min}")),
        (None, Some(max)) => kind.push_str(&format!(" ≤ {max}")),
        (None, None) => {}
    }
    if schema.get("minLength").is_some() || schema.get("minItems").is_some() {
        kind.push_str(", not empty");
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        // A `|` ends a table cell even inside a code span, unless escaped.
        kind.push_str(&format!(", matching `{}`", pattern.replace('|', "\\|")));
    }
    kind
}

/// A JSON value as Markdown text: strings without quotes.
fn text_of(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The `x-codes` of a key or table, as Markdown.
fn codes_of(schema: &serde_json::Value) -> Option<String> {
    let codes = schema.get("x-codes")?.as_array()?;
    let codes: Vec<String> = codes.iter().map(|c| format!("`{}`", text_of(c))).collect();
    Some(codes.join(", "))
}

/// A description on one line (a table cell), `|` escaped.
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// GitHub's anchor of a heading `` `[path]` ``.
fn anchor(path: &str) -> String {
    path.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| {
            if c == ' ' {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}
