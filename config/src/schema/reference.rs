//! The layout of the reference host's `settings.toml` (the reference form,
//! [`crate::Form::Reference`]) as editors see it, beside this host's own
//! (`super::ConfigFile`): one type per table, the same checker behind both
//! (`config::check`, module `reference`). [`settings_schema`] derives the JSON Schema
//! (`curupira schema settings`, `schemas/curupira-settings.schema.json`), and the
//! second part of [`docs/CONFIG.md`](https://example.invalid/curupira/blob/main/docs/CONFIG.md) is generated from it.
//!
//! What the reference host accepts without using, and this host reads with a warning
//! (`config/reference-key`, `config/unknown-key`), is outside the schema: an editor
//! shows it where `validate` warns. Our own `[settings.*]` tables, `[extensions]` and
//! `[plugins]` are read in this form too.

use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value, json};

use super::{
    AgentFile, ExtensionFile, HttpFile, LedgerFile, PluginFile, ProtocolFile, StatusFile,
    TimeoutsFile, WorkspaceFile, generator,
};
use crate::model::{DEFAULT_BATCH_SIZE, LogLevel, MAX_BATCH_SIZE, MAX_CONCURRENT_LIMIT};

/// The names the reference host takes for automations, repositories and plugins.
const NAME_PATTERN: &str = "^[A-Za-z0-9_-]+$";

/// The reference host's `settings.toml`.
#[derive(JsonSchema)]
#[schemars(
    title = "settings.toml",
    description = "The reference host's configuration (curupira 0.4.0), as this host reads it: repositories, agent profiles, plugins and automations whose other keys are their trigger's parameters. Reference: docs/CONFIG.md.",
    deny_unknown_fields
)]
pub struct SettingsToml {
    /// The reference host's settings, and this host's `[settings.*]` tables.
    pub settings: Option<ReferenceSettingsFile>,
    /// The repositories automations work in, by alias (what an automation's
    /// `repository` names and what its extension receives as `repository`).
    #[schemars(extend("propertyNames" = { "pattern": NAME_PATTERN }, "x-codes" = ["config/missing-key", "config/invalid-name"]))]
    pub repositories: BTreeMap<String, RepositoryFile>,
    /// The coding agents: the default profile and the profiles by name.
    #[schemars(extend("x-codes" = ["config/missing-key"]))]
    pub agents: AgentsFile,
    /// Extensions registered as the reference host registers them, by alias (the
    /// `ALIAS` of `trigger_type = "ALIAS/type"`).
    #[schemars(extend("propertyNames" = { "pattern": NAME_PATTERN }, "x-codes" = ["config/duplicate-name", "config/invalid-name"]))]
    pub plugins: Option<BTreeMap<String, PluginFile>>,
    /// **This host's**: extensions with a manifest, by name, beside `[plugins]` (one
    /// namespace).
    #[schemars(extend("propertyNames" = { "pattern": "^[^/]+$" }))]
    pub extensions: Option<BTreeMap<String, ExtensionFile>>,
    /// The automations, by name, run in file order.
    #[schemars(extend("propertyNames" = { "pattern": NAME_PATTERN }, "x-codes" = ["config/missing-key", "config/invalid-name"]))]
    pub automations: BTreeMap<String, ReferenceAutomationFile>,
}

/// `[settings]` of the reference form.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReferenceSettingsFile {
    /// The most agents at once (this host's `[settings.agent] max_concurrent`; the
    /// two keys must agree when both are written).
    #[schemars(range(min = 1, max = MAX_CONCURRENT_LIMIT), extend("default" = 1, "x-codes" = ["config/reference-key", "config/invalid-value"]))]
    pub max_active_tasks: Option<u32>,
    /// Accepted and kept; neither host changes anything for it.
    #[schemars(extend("x-codes" = ["config/reference-key"]))]
    pub max_pending_tasks: Option<u32>,
    /// Where a repository without `path` is cloned, as `workspace_dir/ALIAS` (`~`
    /// is the home folder; a relative value starts at the config's folder).
    #[schemars(length(min = 1), extend("default" = "~/.curupira/workspaces", "x-codes" = ["config/reference-key"]))]
    pub workspace_dir: Option<String>,
    /// The reference host's state database: this host never opens it (its ledger is
    /// `~/.curupira/curupira-rs/ledger.sqlite`, or `[settings.ledger] path`).
    #[schemars(length(min = 1), extend("x-codes" = ["config/reference-key"]))]
    pub state_db_path: Option<String>,
    /// The log's level, as `--log-level` names it (`DEBUG` is `-v`, `WARNING` and
    /// above `-q`).
    #[schemars(extend("default" = "INFO"))]
    pub log_level: Option<LogLevel>,
    /// A task's time limit in minutes; 0 is none (this host's `[settings.agent]
    /// timeout_seconds`).
    #[schemars(extend("default" = 0))]
    pub task_timeout_minutes: Option<u64>,
    /// Accepted; this host exports no OpenTelemetry (`validate` says so).
    #[schemars(length(min = 1), extend("x-codes" = ["config/reference-key"]))]
    pub otlp_endpoint: Option<String>,
    /// Polling of every automation.
    pub polling: Option<ReferencePollingFile>,
    /// **This host's**: the repository for `${repository}` in this host's own form;
    /// in this form an automation's `repository` names it.
    #[schemars(length(min = 1))]
    pub repository: Option<String>,
    /// **This host's**: how agents run, on top of the profile.
    pub agent: Option<AgentFile>,
    /// **This host's**: workspace policies (hooks, cleanup) on top of the
    /// repository's worktrees.
    pub workspace: Option<WorkspaceFile>,
    /// **This host's**: the extension protocol.
    pub protocol: Option<ProtocolFile>,
    /// **This host's**: how long to wait for extensions' replies, in seconds.
    pub timeouts: Option<TimeoutsFile>,
    /// **This host's**: the durable task ledger.
    pub ledger: Option<LedgerFile>,
    /// **This host's**: what `run` tells people while it runs.
    pub status: Option<StatusFile>,
    /// **This host's**: `run`'s status page, JSON API and metrics over HTTP.
    pub http: Option<HttpFile>,
}

/// `[settings.polling]` of the reference form.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReferencePollingFile {
    /// Seconds between rounds of `run --watch`.
    #[schemars(extend("default" = 30))]
    pub poll_interval_seconds: Option<u64>,
    /// The most new items in one round (items already handled do not count; at most
    /// 10 × this many polls in all); the reference host documents 1..1000.
    #[schemars(range(min = 1, max = MAX_BATCH_SIZE), extend("default" = DEFAULT_BATCH_SIZE, "x-codes" = ["config/reference-key", "config/batch-size"]))]
    pub batch_size: Option<u32>,
    /// Seconds between the rounds of a `cron` automation in `run --watch` (at least
    /// 1). The reference host 0.4.0 reads it but polls cron at
    /// `poll_interval_seconds`, which is also the default here.
    #[schemars(extend("x-codes" = ["config/reference-key"]))]
    pub cron_poll_interval_seconds: Option<u64>,
    /// **This host's** spelling of `poll_interval_seconds` (integer or fractional);
    /// the two must agree when both are written.
    #[schemars(range(min = 0.0, max = 999_999_999.0))]
    pub interval_seconds: Option<f64>,
}

/// `[repositories.ALIAS]`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RepositoryFile {
    /// What `git clone` is given (required, as the reference requires it, also beside
    /// an existing `path`; `validate` takes an empty one, as the reference's does).
    pub remote: String,
    /// The checkout: used as it is when it exists (no clone, no setup), else the
    /// remote is cloned there. Default `workspace_dir/ALIAS`.
    #[schemars(length(min = 1), extend("x-codes" = ["config/reference-key"]))]
    pub path: Option<String>,
    /// A program run once in each new clone, in it; a failure removes the clone (an
    /// empty one runs nothing).
    #[schemars(extend("x-codes" = ["config/reference-key"]))]
    pub setup_script: Option<String>,
}

/// `[agents]`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AgentsFile {
    /// The profile of an automation that names none.
    pub defaults: AgentDefaultsFile,
    /// The profiles, by name.
    #[schemars(extend("x-codes" = ["config/unknown-reference"]))]
    pub profiles: Option<BTreeMap<String, ProfileFile>>,
}

/// `[agents.defaults]`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AgentDefaultsFile {
    /// A key of `[agents.profiles]`.
    #[schemars(extend("x-codes" = ["config/unknown-reference"]))]
    pub profile: String,
    /// The time zone of a `cron` automation without its own `timezone` (an IANA
    /// name; default UTC).
    #[schemars(extend("x-codes" = ["config/schedule"]))]
    pub timezone: Option<String>,
}

/// `[agents.profiles.NAME]`: a coding agent's provider and the options the reference
/// host reads for it (each provider takes its own; `model`, `agent` and `effort` are
/// read for every one).
pub struct ProfileFile;

impl JsonSchema for ProfileFile {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProfileFile".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        use curupira_agents::{COMMON_KEYS, Kind, Provider};
        let kind_schema = |kind: Kind| match kind {
            Kind::Text => json_schema!({ "type": "string", "minLength": 1 }),
            Kind::Bool => json_schema!({ "type": "boolean" }),
            Kind::List => json_schema!({ "type": "array", "items": { "type": "string" } }),
            Kind::Count => json_schema!({ "type": "integer", "minimum": 1 }),
        };
        // Every key any provider reads, with the providers that read it.
        let mut keys: BTreeMap<&str, (Vec<&str>, Vec<Kind>, &str)> = BTreeMap::new();
        let mut per_provider = Vec::new();
        for provider in Provider::ALL {
            let spec = provider.spec();
            let mut taken = vec![Value::from("provider")];
            for option in spec.options {
                let entry = keys
                    .entry(option.key)
                    .or_insert((Vec::new(), Vec::new(), ""));
                entry.0.push(provider.name());
                entry.1.push(option.kind);
                if entry.2.is_empty() {
                    entry.2 = option.doc;
                }
                taken.push(Value::from(option.key));
            }
            for key in COMMON_KEYS {
                if !spec.options.iter().any(|option| option.key == key) {
                    taken.push(Value::from(key));
                }
            }
            per_provider.push(json!({
                "if": { "properties": { "provider": { "const": provider.name() } } },
                "then": { "propertyNames": { "enum": taken } },
            }));
        }
        let mut properties = Map::new();
        properties.insert(
            "provider".to_owned(),
            json!({
                "description": "The coding agent's CLI.",
                "type": "string",
                "enum": Provider::ALL.map(Provider::name),
                "x-codes": ["config/missing-key", "config/invalid-value"],
            }),
        );
        for (key, (providers, kinds, doc)) in keys {
            let mut schema = match kinds.first() {
                Some(first) if kinds.iter().all(|kind| kind == first) => kind_schema(*first),
                _ => Schema::default(),
            };
            schema.insert(
                "description".to_owned(),
                Value::from(format!(
                    "{}. Read for: {}.",
                    sentence(doc),
                    providers.join(", ")
                )),
            );
            properties.insert(key.to_owned(), schema.to_value());
        }
        for key in COMMON_KEYS {
            properties.entry(key).or_insert_with(|| {
                json!({ "type": "string", "minLength": 1, "description": "Read for every provider." })
            });
        }
        json_schema!({
            "type": "object",
            "properties": properties,
            "required": ["provider"],
            "additionalProperties": false,
            "allOf": per_provider,
            "x-codes": ["config/profile-fails", "config/reference-key"],
        })
    }
}

/// `[automations.NAME]` of the reference form: the keys below are the host's; every
/// other key is a parameter of the trigger, sent to its extension as written (with
/// `profile` and `checkout`), and checked by the trigger's own schema.
#[derive(JsonSchema)]
pub struct ReferenceAutomationFile {
    /// `ALIAS/type`: a `[plugins]` (or `[extensions]`) alias, then one of its trigger
    /// types; or `cron`, the built-in schedule trigger (`schedule`, `timezone`,
    /// `start_date`, `end_date`). Left out, it is `plugins-py/github-issues`, the
    /// reference host's default (a warning says so). Another bare type is refused, as
    /// the reference refuses it.
    #[schemars(pattern(r"^(cron|[^/]+/[^/]+)$"), extend("default" = "plugins-py/github-issues", "x-codes" = ["config/reference-default", "config/unknown-trigger"]))]
    pub trigger_type: Option<String>,
    /// A key of `[repositories]`: the checkout the tasks run in.
    #[schemars(extend("x-codes" = ["config/missing-key", "config/unknown-reference"]))]
    pub repository: String,
    /// A key of `[agents.profiles]`; default `[agents.defaults] profile`.
    #[schemars(extend("x-codes" = ["config/unknown-reference", "config/profile-fails"]))]
    pub profile: Option<String>,
    /// `"main"`: the tasks run in the repository's shared checkout (no worktree, no
    /// fetch, no branch switch). Any other value gives each task its worktree, as
    /// when it is left out (a warning says so).
    #[schemars(extend("x-codes" = ["config/reference-key"]))]
    pub checkout: Option<String>,
    /// The prompt, a Jinja template (`{{ issue_title }}`) over the trigger's fields
    /// and `repository`, `automation`; then `${key}` is replaced in what it rendered.
    #[schemars(extend("x-codes" = ["config/missing-key", "config/template", "config/unknown-placeholder"]))]
    pub prompt: String,
    /// `cron`: five fields, `minute hour day-of-month month day-of-week`, read as the
    /// reference reads them (day-of-week 1 = Sunday … 7 = Saturday, or `MON`–`SUN`);
    /// required there.
    #[schemars(extend("x-codes" = ["config/schedule", "config/cron-weekday"]))]
    pub schedule: Option<String>,
    /// `cron`: the IANA zone the schedule is read in; default `[agents.defaults]
    /// timezone`, else UTC.
    #[schemars(extend("x-codes" = ["config/schedule"]))]
    pub timezone: Option<String>,
    /// `cron`: the window's first instant, inclusive: `YYYY-MM-DD` (midnight in the
    /// zone) or an RFC 3339 date-time with its offset. Left out, the window starts
    /// when a host first sees the automation.
    #[schemars(extend("x-codes" = ["config/schedule", "config/cron-window"]))]
    pub start_date: Option<String>,
    /// `cron`: the window's last instant, inclusive, as `start_date`.
    #[schemars(extend("x-codes" = ["config/schedule", "config/cron-window"]))]
    pub end_date: Option<String>,
    /// The trigger's parameters.
    #[schemars(flatten)]
    pub parameters: Map<String, Value>,
}

/// `doc` (an option's description, a phrase) with a capital first letter.
fn sentence(doc: &str) -> String {
    let mut chars = doc.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The JSON Schema of the reference host's `settings.toml` (draft 2020-12), as
/// `curupira schema settings` prints it.
pub fn settings_schema() -> Schema {
    generator().into_root_schema_for::<SettingsToml>()
}
