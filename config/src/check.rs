//! The checker: turns the TOML of `curupira.toml` into the [model](super::model) and
//! diagnostics, reporting every problem in one pass. What an error makes unusable is
//! decided here too ([`Unusable`]), so that a partial config can still be resolved.

use std::path::{Path, PathBuf};
use std::time::Duration;

use curupira_diagnostics::toml::{dotted, type_name};
use curupira_diagnostics::{
    Anchor, Collector, Diagnostic, JsonPointer, Severity, did_you_mean, one_of,
};
use serde_json::{Map, Value};
use toml::Value as TomlValue;

use super::codes;
use super::model::{
    Automation, BUILTINS, Config, DEFAULT_BATCH_SIZE, DEFAULT_INTERVAL_SECONDS, ExtensionConfig,
    ExtensionSource, HttpSettings, LedgerSettings, MAX_BATCH_SIZE, MAX_HISTORY_DAYS,
    MAX_HISTORY_PER_TASK, MAX_LOG_MAX_BYTES, MAX_SECONDS, MIN_LOG_MAX_BYTES, PluginType, Polling,
    ProcessMode, Settings, StatusSettings, Timeouts, TriggerRef, Unfilled, Unusable,
    UnusableAutomation,
};
use crate::model::{Checkout, Form, REFERENCE_LEDGER_PATH, ReferenceSettings};
use policy::{AgentOverride, WorkspaceOverride, merged_agent, merged_workspace};

mod cron;
mod policy;
mod reference;

pub use reference::{
    DEFAULT_POLL_INTERVAL_SECONDS, DEFAULT_TRIGGER_TYPE, DEFAULT_WORKSPACE_DIR, REFERENCE_FILE_NAME,
};

/// Checks the UTF-8 text of a config file; `file` is the name diagnostics show, `dir`
/// the folder relative paths start from and `home` the folder `~` names (the reference
/// form's paths). Returns the config, complete when no diagnostic is an error and
/// partial otherwise, with every diagnostic; no config when the text is not TOML.
pub(super) fn check(
    text: &str,
    file: &str,
    dir: &Path,
    home: Option<&Path>,
) -> (Option<Config>, Vec<Diagnostic>) {
    let document = match curupira_diagnostics::toml::parse(text, file, codes::SYNTAX) {
        Ok(document) => document,
        Err(diagnostics) => return (None, diagnostics),
    };
    let root: toml::Table = match toml::from_str(text) {
        Ok(root) => root,
        Err(error) => {
            let diagnostic = Diagnostic::error(
                codes::SYNTAX,
                file,
                JsonPointer::root(),
                format!("invalid TOML: {}", error.message()),
            );
            return (None, vec![diagnostic]);
        }
    };
    let mut checker = Checker {
        collector: Collector::new(file, text, document.source_map.clone()),
        dir,
        home: home.map(Path::to_owned),
        form: if reference::is_reference(&root, file) {
            Form::Reference
        } else {
            Form::Ours
        },
    };
    let parts = checker.config(&root);
    let diagnostics = checker.collector.finish();
    let errors: Vec<&JsonPointer> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| &d.path)
        .collect();
    let broken = |at: &JsonPointer| errors.iter().any(|error| within(error, at));
    let complete = errors.is_empty();
    let settings_at = JsonPointer::root().key("settings");
    let whole_settings = errors.contains(&&settings_at);
    let mut unusable = Unusable {
        connection: whole_settings
            || ["repository", "protocol", "timeouts"]
                .iter()
                .any(|key| broken(&settings_at.key(key))),
        agent: whole_settings
            || errors.contains(&&settings_at.key("agent"))
            || broken(&settings_at.key("agent").key("command"))
            || broken(&settings_at.key("agent").key("provider")),
        workspace: whole_settings || broken(&settings_at.key("workspace")),
        ..Unusable::default()
    };
    let mut extensions = Vec::new();
    for (section, name, extension) in parts.extensions {
        match extension {
            Some(extension) if !broken(&JsonPointer::root().key(section).key(&name)) => {
                extensions.push(extension);
            }
            _ => unusable.extensions.push(name),
        }
    }
    let mut automations = Vec::new();
    let mut order = Vec::new();
    for read in parts.automations {
        order.push(read.name.clone());
        match read.automation {
            Some(automation)
                if !broken(&JsonPointer::root().key("automations").key(&read.name)) =>
            {
                automations.push(automation);
            }
            _ => unusable.automations.push(UnusableAutomation {
                without_agent: !read.own_agent
                    && parts.default_agent.command.is_none()
                    && parts.default_agent.provider.is_none()
                    && !unusable.agent,
                name: read.name,
                trigger: read.trigger,
            }),
        }
    }
    let config = Config {
        file: file.to_owned(),
        dir: dir.to_owned(),
        form: checker.form,
        settings: parts.settings,
        extensions,
        automations,
        unusable,
        complete,
        order,
        text: text.to_owned(),
        source_map: document.source_map,
    };
    (Some(config), diagnostics)
}

/// Whether `pointer` is `at` or inside it.
fn within(pointer: &JsonPointer, at: &JsonPointer) -> bool {
    pointer == at
        || pointer
            .as_str()
            .strip_prefix(at.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Walks the parsed TOML and records every problem.
struct Checker<'a> {
    collector: Collector<'a>,
    dir: &'a Path,
    /// The folder `~` names in the reference form's paths.
    home: Option<PathBuf>,
    /// The file's form.
    form: Form,
}

/// `[settings.polling]`-shaped values read from one table; `None` where not given.
#[derive(Default)]
struct PollingOverride {
    batch_size: Option<u32>,
    interval_seconds: Option<f64>,
}

/// What `[settings]` gives every automation, before the automation's own tables.
struct Defaults {
    /// What the reference form gives (its repositories, its profiles).
    reference: Option<(ReferenceSettings, Vec<(String, reference::Profile)>)>,
    polling: PollingOverride,
    agent: AgentOverride,
    /// `[settings.agent]`'s provider with its options, checked once.
    provider: Option<crate::model::ProviderAgent>,
    workspace: WorkspaceOverride,
}

/// What [`Checker::config`] read, before the errors decide what is usable.
struct Parts {
    settings: Settings,
    /// `[settings.agent]` as written (its `command` when set and readable).
    default_agent: AgentOverride,
    /// Every `[extensions.*]` key in file order, then every `[plugins.*]` key, each
    /// with its table's name and the extension when its source could be read.
    extensions: Vec<(&'static str, String, Option<ExtensionConfig>)>,
    /// Every `[automations.*]` key in file order.
    automations: Vec<ReadAutomation>,
}

/// One `[automations.NAME]` as far as it could be read.
struct ReadAutomation {
    name: String,
    trigger: Option<TriggerRef>,
    /// The automation, when its trigger, prompt and arguments could be read.
    automation: Option<Automation>,
    /// Whether it gives an agent command of its own (readable or not).
    own_agent: bool,
}

impl Checker<'_> {
    fn config(&mut self, root: &toml::Table) -> Parts {
        let at = JsonPointer::root();
        let reference = self.form == Form::Reference;
        let mut known = vec!["settings", "extensions", "plugins", "automations"];
        if reference {
            known.extend(["repositories", "agents", "assistant", "environment"]);
            self.ignored_tables(root);
            for key in ["repositories", "agents", "automations"] {
                if !root.contains_key(key) {
                    self.collector.error(
                        codes::MISSING_KEY,
                        &at.key(key),
                        format!(
                            "a file in the reference host's form (it has `[repositories]`, \
                             `[agents]` or an automation with `trigger_type`) needs \
                             `[{key}]`, as the reference host requires"
                        ),
                    );
                }
            }
        }
        self.unknown_keys(root, &at, &known);

        let empty = toml::Table::new();
        let settings_table = self.table_member(root, &at, "settings").unwrap_or(&empty);
        let (mut settings, mut defaults) = self.settings(settings_table);
        if let Some(reference) = &mut defaults.reference {
            if let Some(table) = self.table_member(root, &at, "repositories") {
                let workspace_dir = reference.0.workspace_dir.clone();
                reference.0.repositories = self.repositories(table, &workspace_dir);
            }
            if let Some(table) = self.table_member(root, &at, "agents") {
                reference.1 = self.agents(table, &mut reference.0);
            }
            settings.reference = Some(reference.0.clone());
        }

        let mut extensions = match self.table_member(root, &at, "extensions") {
            Some(table) => self.extensions(table),
            None => Vec::new(),
        };
        if let Some(table) = self.table_member(root, &at, "plugins") {
            let plugins = self.plugins(table, &extensions);
            extensions.extend(plugins);
        }

        let automations_table = self.table_member(root, &at, "automations");
        let automations = match automations_table {
            Some(table) => self.automations(table, &defaults),
            None => Vec::new(),
        };
        let required = reference && automations_table.is_none();
        if !required && automations_table.is_none_or(toml::Table::is_empty) {
            self.collector.warning(
                codes::NO_AUTOMATIONS,
                &at.key("automations"),
                "the config defines no automation, so `run` has nothing to do; add an \
                 `[automations.NAME]` table",
            );
        }
        Parts {
            settings,
            default_agent: defaults.agent,
            extensions,
            automations,
        }
    }

    fn settings(&mut self, table: &toml::Table) -> (Settings, Defaults) {
        let at = JsonPointer::root().key("settings");
        let mut known = vec![
            "repository",
            "polling",
            "agent",
            "workspace",
            "protocol",
            "timeouts",
            "ledger",
            "status",
            "http",
        ];
        if self.form == Form::Reference {
            known.extend(reference::SETTINGS_KEYS);
        } else {
            known.extend(self.reference_keys_here(table, &at, reference::SETTINGS_KEYS));
        }
        self.unknown_keys(table, &at, &known);
        let repository = self.string_member(table, &at, "repository", true);
        let polling_table = self.table_member(table, &at, "polling");
        let mut polling = match polling_table {
            Some(polling) => self.polling(polling, &at.key("polling")),
            None => PollingOverride::default(),
        };
        let mut agent = match self.table_member(table, &at, "agent") {
            Some(agent) => self.agent(agent, &at.key("agent"), None),
            None => AgentOverride::default(),
        };
        let reference = (self.form == Form::Reference).then(|| {
            let (reference, shared) = self.reference_settings(table, polling_table);
            let agent_at = at.key("agent");
            if let Some(n) = shared.max_active_tasks {
                self.one_meaning(
                    &at.key("max_active_tasks"),
                    &agent_at.key("max_concurrent"),
                    agent.max_concurrent.is_some(),
                );
                agent.max_concurrent.get_or_insert(n);
            }
            if let Some(timeout) = shared.task_timeout {
                self.one_meaning(
                    &at.key("task_timeout_minutes"),
                    &agent_at.key("timeout_seconds"),
                    agent.timeout.is_some(),
                );
                if agent.timeout.is_none() {
                    agent.timeout = timeout.map(|t| t.as_secs());
                }
            }
            let interval = shared
                .poll_interval
                .unwrap_or(Duration::from_secs(DEFAULT_POLL_INTERVAL_SECONDS));
            let polling_at = at.key("polling");
            self.one_meaning(
                &polling_at.key("poll_interval_seconds"),
                &polling_at.key("interval_seconds"),
                shared.poll_interval.is_some() && polling.interval_seconds.is_some(),
            );
            #[allow(clippy::cast_precision_loss)]
            polling
                .interval_seconds
                .get_or_insert(interval.as_secs() as f64);
            (reference, Vec::new())
        });
        let workspace = match self.table_member(table, &at, "workspace") {
            Some(workspace) => self.workspace(workspace, &at.key("workspace")),
            None => WorkspaceOverride::default(),
        };
        let mut max_frame_bytes = curupira_framing::DEFAULT_MAX_BODY;
        if let Some(protocol) = self.table_member(table, &at, "protocol") {
            let at = at.key("protocol");
            self.unknown_keys(protocol, &at, &["max_frame_bytes"]);
            if let Some(value) = protocol.get("max_frame_bytes") {
                let at = at.key("max_frame_bytes");
                match value {
                    TomlValue::Integer(n) if (1..=i64::from(u32::MAX)).contains(n) => {
                        max_frame_bytes = usize::try_from(*n).unwrap_or(usize::MAX);
                    }
                    TomlValue::Integer(n) => self.collector.error(
                        codes::INVALID_VALUE,
                        &at,
                        format!(
                            "`max_frame_bytes` must be from 1 to 4294967295 (what a frame \
                             header can announce), found {n}"
                        ),
                    ),
                    other => self.wrong_type(&at, "an integer", other),
                }
            }
        }
        let mut timeouts = Timeouts::default();
        if let Some(table) = self.table_member(table, &at, "timeouts") {
            let at = at.key("timeouts");
            self.unknown_keys(table, &at, &["initialize", "request", "shutdown"]);
            for (key, slot) in [
                ("initialize", &mut timeouts.initialize),
                ("request", &mut timeouts.request),
                ("shutdown", &mut timeouts.shutdown),
            ] {
                if let Some(seconds) = self.seconds(table, &at, key, false) {
                    *slot = Duration::from_secs_f64(seconds);
                }
            }
        }
        let ledger = match self.table_member(table, &at, "ledger") {
            Some(ledger) => self.ledger(ledger, &at.key("ledger")),
            None => self.default_ledger(),
        };
        let status = match self.table_member(table, &at, "status") {
            Some(status) => self.status(status, &at.key("status")),
            None => StatusSettings::default(),
        };
        let http = match self.table_member(table, &at, "http") {
            Some(http) => self.http(http, &at.key("http")),
            None => HttpSettings::default(),
        };
        let settings = Settings {
            repository,
            max_frame_bytes,
            timeouts,
            ledger,
            status,
            http,
            reference: None,
            agent: merged_agent(&agent, &AgentOverride::default()),
            workspace: merged_workspace(self.dir, &workspace, &WorkspaceOverride::default()),
        };
        let provider = self.provider_agent(&agent, &AgentOverride::default(), None);
        let defaults = Defaults {
            reference,
            polling,
            agent,
            provider,
            workspace,
        };
        (settings, defaults)
    }

    /// `[settings.http]`: `listen` (an `IP:PORT`), `allow_remote` (a boolean).
    fn http(&mut self, table: &toml::Table, at: &JsonPointer) -> HttpSettings {
        self.unknown_keys(table, at, &["listen", "allow_remote"]);
        let mut http = HttpSettings::default();
        if let Some(text) = self.string_member(table, at, "listen", true) {
            match text.parse() {
                Ok(addr) => http.listen = Some(addr),
                Err(_) => self.collector.error(
                    codes::INVALID_VALUE,
                    &at.key("listen"),
                    format!(
                        "`settings.http.listen` must be an address and port such as \
                         `127.0.0.1:8080` or `[::1]:8080`, found `{text}`"
                    ),
                ),
            }
        }
        match table.get("allow_remote") {
            Some(TomlValue::Boolean(on)) => http.allow_remote = *on,
            Some(other) => self.wrong_type(&at.key("allow_remote"), "a boolean", other),
            None => {}
        }
        http
    }

    /// `[settings.status]`: `idle_notice_seconds` (0 to [`MAX_SECONDS`], 0 for never),
    /// `live_line` (a boolean).
    fn status(&mut self, table: &toml::Table, at: &JsonPointer) -> StatusSettings {
        self.unknown_keys(table, at, &["idle_notice_seconds", "live_line"]);
        let mut status = StatusSettings::default();
        if let Some(seconds) = self.whole(
            table,
            at,
            "idle_notice_seconds",
            0..=MAX_SECONDS,
            &format!("a whole number from 0 (never) to {MAX_SECONDS} (seconds)"),
        ) {
            status.idle_notice = (seconds > 0).then(|| Duration::from_secs(seconds));
        }
        match table.get("live_line") {
            Some(TomlValue::Boolean(on)) => status.live_line = *on,
            Some(other) => self.wrong_type(&at.key("live_line"), "a boolean", other),
            None => {}
        }
        status
    }

    /// `[settings.ledger]`: `enabled` (a boolean), `path` (a non-empty string, relative
    /// to the config's folder).
    fn ledger(&mut self, table: &toml::Table, at: &JsonPointer) -> LedgerSettings {
        self.unknown_keys(
            table,
            at,
            &[
                "enabled",
                "path",
                "history_days",
                "history_per_task",
                "log_max_bytes",
            ],
        );
        let mut ledger = self.default_ledger();
        match table.get("enabled") {
            Some(TomlValue::Boolean(enabled)) => ledger.enabled = *enabled,
            Some(other) => self.wrong_type(&at.key("enabled"), "a boolean", other),
            None => {}
        }
        if let Some(path) = self.string_member(table, at, "path", true) {
            ledger.path = self.dir.join(path);
        }
        let whole = |checker: &mut Self, key: &str, max: u32, what: &str| {
            checker
                .whole(
                    table,
                    at,
                    key,
                    1..=u64::from(max),
                    &format!("a whole number from 1 to {max} ({what})"),
                )
                .and_then(|n| u32::try_from(n).ok())
        };
        if let Some(days) = whole(self, "history_days", MAX_HISTORY_DAYS, "days") {
            ledger.history_days = days;
        }
        if let Some(count) = whole(
            self,
            "history_per_task",
            MAX_HISTORY_PER_TASK,
            "attempts kept per task",
        ) {
            ledger.history_per_task = count;
        }
        if let Some(bytes) = self.whole(
            table,
            at,
            "log_max_bytes",
            MIN_LOG_MAX_BYTES..=MAX_LOG_MAX_BYTES,
            &format!("a whole number from {MIN_LOG_MAX_BYTES} to {MAX_LOG_MAX_BYTES} (bytes)"),
        ) {
            ledger.log_max_bytes = bytes;
        }
        ledger
    }

    fn polling(&mut self, table: &toml::Table, at: &JsonPointer) -> PollingOverride {
        let mut known = vec!["batch_size", "interval_seconds"];
        let reference = self.form == Form::Reference && at.as_str() == "/settings/polling";
        if reference {
            known.extend(reference::POLLING_KEYS);
        } else {
            known.extend(self.reference_keys_here(table, at, reference::POLLING_KEYS));
        }
        self.unknown_keys(table, at, &known);
        let batch_size = table.get("batch_size").and_then(|value| {
            let at = at.key("batch_size");
            match value {
                // The reference host reads any u32 and documents 1..=1000.
                TomlValue::Integer(n)
                    if reference
                        && (0..=i64::from(u32::MAX)).contains(n)
                        && !(1..=i64::from(MAX_BATCH_SIZE)).contains(n) =>
                {
                    let made = (*n).clamp(1, i64::from(MAX_BATCH_SIZE));
                    self.collector.warning(
                        codes::REFERENCE_KEY,
                        &at,
                        format!(
                            "`batch_size = {n}` is outside 1..{MAX_BATCH_SIZE}, the reference \
                             host's documented range (it does not check it); this host polls \
                             {made} time(s) per round"
                        ),
                    );
                    u32::try_from(made).ok()
                }
                TomlValue::Integer(n) if (1..=i64::from(u32::MAX)).contains(n) => {
                    u32::try_from(*n).ok()
                }
                TomlValue::Integer(n) => {
                    self.collector.error(
                        codes::BATCH_SIZE,
                        &at,
                        format!("`batch_size` must be at least 1 (polls per round), found {n}"),
                    );
                    None
                }
                other => {
                    self.wrong_type(&at, "an integer", other);
                    None
                }
            }
        });
        let interval_seconds = self.seconds(table, at, "interval_seconds", true);
        PollingOverride {
            batch_size,
            interval_seconds,
        }
    }

    /// `[extensions.NAME]` and `[plugins.NAME]`: a name automations can write before
    /// the `/` of `NAME/type`.
    fn extension_name(&mut self, name: &str, at: &JsonPointer, what: &str) {
        if name.is_empty() || name.contains('/') {
            self.collector.push(
                Severity::Error,
                codes::INVALID_VALUE,
                at,
                Anchor::Key,
                format!(
                    "the {what} name `{name}` cannot be used: it must be non-empty and may not \
                     contain `/`, which separates `{what}/type` in `trigger`"
                ),
            );
        }
    }

    fn extensions(
        &mut self,
        table: &toml::Table,
    ) -> Vec<(&'static str, String, Option<ExtensionConfig>)> {
        let mut extensions = Vec::new();
        for (name, at, value) in self.members(table, "extensions") {
            let Some(ext) = self.table(value, &at) else {
                extensions.push(("extensions", name, None));
                continue;
            };
            self.extension_name(&name, &at, "extension");
            self.unknown_keys(ext, &at, &["path", "builtin", "process"]);
            let path = self.string_member(ext, &at, "path", true);
            let builtin = self.string_member(ext, &at, "builtin", true);
            let process = self
                .string_member(ext, &at, "process", true)
                .and_then(|mode| match ProcessMode::from_name(&mode) {
                    Some(mode) => Some(mode),
                    None => {
                        let hint = did_you_mean(&mode, ProcessMode::NAMES.iter().copied())
                            .map(|known| format!("; did you mean `{known}`?"))
                            .unwrap_or_default();
                        self.collector.error(
                            codes::INVALID_VALUE,
                            &at.key("process"),
                            format!(
                                "`process` of extension `{name}` must be `round` (one process \
                                 per round) or `run` (one for the whole run), found \
                                 `{mode}`{hint}"
                            ),
                        );
                        None
                    }
                });
            let source = match (path, builtin) {
                (Some(_), Some(_)) => {
                    self.collector.error(
                        codes::EXTENSION_CONFLICT,
                        &at.key("builtin"),
                        format!(
                            "extension `{name}` has both `path` and `builtin`; keep exactly one"
                        ),
                    );
                    None
                }
                (None, None) => {
                    if !ext.contains_key("path") && !ext.contains_key("builtin") {
                        self.collector.error(
                            codes::MISSING_KEY,
                            &at.key("path"),
                            format!(
                                "extension `{name}` needs `path = \"folder\"` (a folder with a \
                                 curupira-extension.toml) or `builtin = \"local-queue\"`"
                            ),
                        );
                    }
                    None
                }
                (Some(path), None) => Some(ExtensionSource::Folder(self.dir.join(path))),
                (None, Some(builtin)) => {
                    if BUILTINS.contains(&builtin.as_str()) {
                        Some(ExtensionSource::Builtin(builtin))
                    } else {
                        let hint = did_you_mean(&builtin, BUILTINS.iter().copied())
                            .map(|known| format!("; did you mean `{known}`?"))
                            .unwrap_or_default();
                        self.collector.error(
                            codes::UNKNOWN_BUILTIN,
                            &at.key("builtin"),
                            format!(
                                "`{builtin}` is not an extension built into curupira (known: \
                                 {}){hint}",
                                BUILTINS.join(", ")
                            ),
                        );
                        None
                    }
                }
            };
            let extension = source.map(|source| ExtensionConfig {
                name: name.clone(),
                source,
                process,
            });
            extensions.push(("extensions", name, extension));
        }
        extensions
    }

    /// `[plugins.NAME] type = "uvx" | "npx", args = [...]`, the reference host's
    /// registration, checked as it checks it (`type` from its two, `args` a non-empty
    /// array of strings), its other keys warnings. A name that `[extensions]` has
    /// already (`extensions`) is `config/duplicate-name`.
    fn plugins(
        &mut self,
        table: &toml::Table,
        extensions: &[(&'static str, String, Option<ExtensionConfig>)],
    ) -> Vec<(&'static str, String, Option<ExtensionConfig>)> {
        let mut plugins = Vec::new();
        for (name, at, value) in self.members(table, "plugins") {
            let Some(plugin) = self.table(value, &at) else {
                plugins.push(("plugins", name, None));
                continue;
            };
            self.extension_name(&name, &at, "plugin");
            if self.form == Form::Reference && !name.contains('/') && !reference::valid_name(&name)
            {
                self.invalid_name(&at, "plugins alias", &name);
            }
            if extensions.iter().any(|(_, taken, _)| taken == &name) {
                self.collector.push(
                    Severity::Error,
                    codes::DUPLICATE_NAME,
                    &at,
                    Anchor::Key,
                    format!(
                        "`[plugins.{name}]` has the name of `[extensions.{name}]`: both tables \
                         share one namespace, since an automation names either as \
                         `{name}/type`; rename one of them"
                    ),
                );
            }
            self.unknown_keys(plugin, &at, &["type", "args"]);
            let launcher = self.plugin_type(plugin, &at, &name);
            let args = self.plugin_args(plugin, &at, &name, launcher);
            let extension = launcher.zip(args).map(|(launcher, args)| ExtensionConfig {
                name: name.clone(),
                source: ExtensionSource::Plugin { launcher, args },
                process: None,
            });
            plugins.push(("plugins", name, extension));
        }
        plugins
    }

    /// `[plugins.NAME] type`: required, `uvx` or `npx`.
    fn plugin_type(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        name: &str,
    ) -> Option<PluginType> {
        if !table.contains_key("type") {
            self.collector.error(
                codes::MISSING_KEY,
                &at.key("type"),
                format!(
                    "plugin `{name}` needs `type = \"uvx\"` or `type = \"npx\"`: the program \
                     that runs its `args`"
                ),
            );
            return None;
        }
        let text = self.string_member(table, at, "type", false)?;
        if let Some(launcher) = PluginType::from_name(&text) {
            return Some(launcher);
        }
        let hint = match did_you_mean(&text, PluginType::names()) {
            Some(close) => format!("; did you mean `{close}`?"),
            None => format!(
                "; to run a program directly, register it as `[extensions.{name}] path = \
                 \"folder\"` with a manifest whose `[launch]` has `type = \"executable\"`"
            ),
        };
        self.collector.error(
            codes::PLUGIN_TYPE,
            &at.key("type"),
            format!(
                "`plugins.{name}.type` must be {} (the reference host launches plugins with \
                 nothing else), found `{}`{hint}",
                one_of(PluginType::names()),
                text.escape_debug()
            ),
        );
        None
    }

    /// `[plugins.NAME] args`: required, a non-empty array of strings, run verbatim.
    fn plugin_args(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        name: &str,
        launcher: Option<PluginType>,
    ) -> Option<Vec<String>> {
        let launcher = launcher.map_or("uvx` or `npx", PluginType::as_str);
        let Some(value) = table.get("args") else {
            self.collector.error(
                codes::MISSING_KEY,
                &at.key("args"),
                format!(
                    "plugin `{name}` needs `args = [...]`: what `{launcher}` runs, such as \
                     `[\"--from\", \"curupira-plugins\", \"curupira-plugins\"]`"
                ),
            );
            return None;
        };
        let at = at.key("args");
        let TomlValue::Array(items) = value else {
            self.wrong_type(&at, "an array of strings", value);
            return None;
        };
        if items.is_empty() {
            self.collector.error(
                codes::INVALID_VALUE,
                &at,
                format!("`plugins.{name}.args` must not be empty: it is what `{launcher}` runs"),
            );
            return None;
        }
        let mut args = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match item {
                TomlValue::String(arg) => args.push(arg.clone()),
                other => self.wrong_type(&at.index(index), "a string", other),
            }
        }
        (args.len() == items.len()).then_some(args)
    }

    fn automations(&mut self, table: &toml::Table, defaults: &Defaults) -> Vec<ReadAutomation> {
        let mut automations = Vec::new();
        for (name, at, value) in self.members(table, "automations") {
            let Some(auto) = self.table(value, &at) else {
                automations.push(ReadAutomation {
                    name,
                    trigger: None,
                    automation: None,
                    own_agent: false,
                });
                continue;
            };
            let ours = auto.contains_key("trigger");
            if ours && auto.contains_key("trigger_type") {
                self.collector.error(
                    codes::FORM_CONFLICT,
                    &at.key("trigger_type"),
                    format!(
                        "automation `{name}` has both `trigger` (this host's form, with \
                         `arguments`) and `trigger_type` (the reference host's, whose other keys \
                         are the trigger's parameters): keep `trigger_type` to share the file \
                         with the reference host, else `trigger`"
                    ),
                );
                automations.push(ReadAutomation {
                    name,
                    trigger: None,
                    automation: None,
                    own_agent: true,
                });
                continue;
            }
            if !ours && self.form == Form::Reference {
                let read = self.reference_automation(name, &at, auto, defaults);
                automations.push(read);
                continue;
            }
            self.unknown_keys(
                auto,
                &at,
                &[
                    "trigger",
                    "prompt",
                    "prompt_file",
                    "arguments",
                    "polling",
                    "agent",
                    "workspace",
                    "unfilled",
                ],
            );
            let trigger = self.trigger(auto, &at, &name);
            let prompt = self.prompt(auto, &at, &name);
            let arguments = match auto.get("arguments") {
                None => Some(Map::new()),
                Some(TomlValue::Table(arguments)) => {
                    let mut object = Map::new();
                    let mut ok = true;
                    for (key, value) in arguments {
                        if curupira_protocol::is_core_key(key) {
                            self.collector.warning(
                                codes::CORE_KEY_ARGUMENT,
                                &at.key("arguments").key(key),
                                format!(
                                    "automation `{name}`: the argument `{key}` is never seen by \
                                     the extension: the host sends its own `{key}` in the \
                                     configuration of every trigger; rename the argument"
                                ),
                            );
                        }
                        match self.json_of(value, &at.key("arguments").key(key)) {
                            Some(json) => {
                                object.insert(key.clone(), json);
                            }
                            None => ok = false,
                        }
                    }
                    ok.then_some(object)
                }
                Some(other) => {
                    self.wrong_type(&at.key("arguments"), "a table", other);
                    None
                }
            };
            let own_polling = match self.table_member(auto, &at, "polling") {
                Some(polling) => self.polling(polling, &at.key("polling")),
                None => PollingOverride::default(),
            };
            let polling = Polling {
                batch_size: own_polling
                    .batch_size
                    .or(defaults.polling.batch_size)
                    .unwrap_or(DEFAULT_BATCH_SIZE),
                interval: Duration::from_secs_f64(
                    own_polling
                        .interval_seconds
                        .or(defaults.polling.interval_seconds)
                        .unwrap_or(DEFAULT_INTERVAL_SECONDS),
                ),
            };
            let own_agent = match auto.get("agent") {
                Some(TomlValue::Table(agent)) => {
                    agent.contains_key("command") || agent.contains_key("provider")
                }
                Some(_) => true,
                None => false,
            };
            let settings_agent_at = JsonPointer::root().key("settings").key("agent");
            let agent_override = match self.table_member(auto, &at, "agent") {
                Some(agent) => self.agent(
                    agent,
                    &at.key("agent"),
                    Some((&defaults.agent, &settings_agent_at)),
                ),
                None => AgentOverride::default(),
            };
            let workspace_override = match self.table_member(auto, &at, "workspace") {
                Some(workspace) => self.workspace(workspace, &at.key("workspace")),
                None => WorkspaceOverride::default(),
            };
            let agent_policy = merged_agent(&defaults.agent, &agent_override);
            let workspace_policy =
                merged_workspace(self.dir, &defaults.workspace, &workspace_override);
            let provider = if agent_override.provider.is_none()
                && agent_override.command.is_none()
                && agent_override.options.is_empty()
                && agent_override.resume.is_none()
                && agent_override.continue_prompt.is_none()
            {
                defaults.provider.clone()
            } else {
                self.provider_agent(&defaults.agent, &agent_override, Some(&at.key("agent")))
            };
            let agent = match (&agent_override.command, &agent_override.provider) {
                (Some(command), _) => Some(command.clone()),
                (None, Some(_)) => None,
                (None, None) if provider.is_some() => None,
                (None, None) => defaults.agent.command.clone(),
            };
            let unfilled = self
                .closed(
                    auto,
                    &at,
                    "unfilled",
                    Unfilled::from_name,
                    Unfilled::names(),
                )
                .unwrap_or_default();
            let automation = match (&trigger, prompt, arguments) {
                (Some(trigger), Some((prompt, prompt_file)), Some(arguments)) => Some(Automation {
                    name: name.clone(),
                    trigger: trigger.clone(),
                    prompt,
                    prompt_file,
                    arguments,
                    polling,
                    agent,
                    provider,
                    agent_policy,
                    workspace_policy,
                    unfilled,
                    form: Form::Ours,
                    repository: None,
                    checkout: Checkout::Worktree,
                    profile: None,
                    agent_error: None,
                }),
                _ => None,
            };
            automations.push(ReadAutomation {
                name,
                trigger,
                automation,
                own_agent,
            });
        }
        automations
    }

    fn trigger(&mut self, table: &toml::Table, at: &JsonPointer, name: &str) -> Option<TriggerRef> {
        if !table.contains_key("trigger") {
            self.collector.error(
                codes::MISSING_KEY,
                &at.key("trigger"),
                format!(
                    "automation `{name}` needs `trigger`: the trigger type, or \
                     `extension/type` when two extensions offer it"
                ),
            );
            return None;
        }
        let text = self.string_member(table, at, "trigger", true)?;
        let (extension, trigger_type) = match text.split_once('/') {
            Some((extension, trigger_type)) => (Some(extension.to_owned()), trigger_type),
            None => (None, text.as_str()),
        };
        if extension.is_none()
            && let Some((extension, trigger_type)) = text.split_once(':')
            && !extension.is_empty()
            && !trigger_type.is_empty()
            && !trigger_type.contains(':')
        {
            self.collector.error(
                codes::COLON_TRIGGER,
                &at.key("trigger"),
                format!(
                    "`trigger = \"{}\"` uses `:`, which no longer separates the extension from \
                     the trigger type; did you mean `{extension}/{trigger_type}`?",
                    text.escape_debug()
                ),
            );
            return None;
        }
        if trigger_type.is_empty()
            || trigger_type.contains('/')
            || extension.as_deref() == Some("")
            || (extension.is_none() && trigger_type.contains(':'))
        {
            self.collector.error(
                codes::INVALID_VALUE,
                &at.key("trigger"),
                format!(
                    "`trigger = \"{}\"` is not a trigger: write the type (`github-issue`) \
                     or `extension/type` (`acme/github-issue`)",
                    text.escape_debug()
                ),
            );
            return None;
        }
        Some(TriggerRef {
            extension,
            trigger_type: trigger_type.to_owned(),
        })
    }

    fn prompt(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        name: &str,
    ) -> Option<(String, Option<PathBuf>)> {
        let inline = self.string_member(table, at, "prompt", false);
        let file = self.string_member(table, at, "prompt_file", true);
        match (inline, file) {
            (Some(_), Some(_)) => {
                self.collector.error(
                    codes::PROMPT_CONFLICT,
                    &at.key("prompt_file"),
                    format!(
                        "automation `{name}` has both `prompt` and `prompt_file`; keep exactly one"
                    ),
                );
                None
            }
            (Some(prompt), None) => Some((prompt, None)),
            (None, Some(file)) => {
                let path = self.dir.join(&file);
                match std::fs::read(&path) {
                    Ok(bytes) => match String::from_utf8(bytes) {
                        Ok(text) => Some((text, Some(path))),
                        Err(_) => {
                            self.collector.error(
                                codes::PROMPT_FILE,
                                &at.key("prompt_file"),
                                format!("the prompt file `{}` is not UTF-8 text", path.display()),
                            );
                            None
                        }
                    },
                    Err(error) => {
                        self.collector.error(
                            codes::PROMPT_FILE,
                            &at.key("prompt_file"),
                            format!("cannot read the prompt file `{}`: {error}", path.display()),
                        );
                        None
                    }
                }
            }
            (None, None) => {
                if !table.contains_key("prompt") && !table.contains_key("prompt_file") {
                    self.collector.error(
                        codes::MISSING_KEY,
                        &at.key("prompt"),
                        format!(
                            "automation `{name}` needs a prompt: `prompt = \"…\"` or \
                             `prompt_file = \"file.md\"`"
                        ),
                    );
                }
                None
            }
        }
    }

    /// The TOML value as JSON, or `None` after recording why it cannot be.
    fn json_of(&mut self, value: &TomlValue, at: &JsonPointer) -> Option<Value> {
        Some(match value {
            TomlValue::String(s) => Value::String(s.clone()),
            TomlValue::Integer(n) => Value::from(*n),
            TomlValue::Float(f) => match serde_json::Number::from_f64(*f) {
                Some(number) => Value::Number(number),
                None => {
                    self.collector.error(
                        codes::INVALID_VALUE,
                        at,
                        format!("{f} cannot be sent to the extension: JSON has no NaN or infinity"),
                    );
                    return None;
                }
            },
            TomlValue::Boolean(b) => Value::Bool(*b),
            TomlValue::Datetime(datetime) => Value::String(datetime.to_string()),
            TomlValue::Array(items) => {
                let mut array = Vec::with_capacity(items.len());
                let mut ok = true;
                for (index, item) in items.iter().enumerate() {
                    match self.json_of(item, &at.index(index)) {
                        Some(json) => array.push(json),
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                Value::Array(array)
            }
            TomlValue::Table(table) => {
                let mut object = Map::new();
                let mut ok = true;
                for (key, item) in table {
                    match self.json_of(item, &at.key(key)) {
                        Some(json) => {
                            object.insert(key.clone(), json);
                        }
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                Value::Object(object)
            }
        })
    }

    /// Keys of `table` in the order they appear in the file.
    fn file_order(&self, table: &toml::Table, at: &JsonPointer) -> Vec<String> {
        let map = self.collector.source_map();
        let mut keys: Vec<(usize, String)> = table
            .keys()
            .map(|key| {
                let start = map.get(&at.key(key)).map_or(usize::MAX, |spans| {
                    spans.key.as_ref().unwrap_or(&spans.value).start
                });
                (start, key.clone())
            })
            .collect();
        keys.sort();
        keys.into_iter().map(|(_, key)| key).collect()
    }

    /// The members of the section `table` (`[extensions]`, `[automations]`), in file
    /// order, each with its pointer.
    fn members<'t>(
        &self,
        table: &'t toml::Table,
        section: &str,
    ) -> Vec<(String, JsonPointer, &'t TomlValue)> {
        self.members_at(table, &JsonPointer::root().key(section))
    }

    /// The members of the table at `at`, in file order, each with its pointer.
    fn members_at<'t>(
        &self,
        table: &'t toml::Table,
        at: &JsonPointer,
    ) -> Vec<(String, JsonPointer, &'t TomlValue)> {
        self.file_order(table, at)
            .into_iter()
            .filter_map(|name| {
                let value = table.get(&name)?;
                let at = at.key(&name);
                Some((name, at, value))
            })
            .collect()
    }

    /// The ledger when `[settings.ledger]` does not say where: beside the file, in
    /// its `.curupira/`; for a file in the reference form, per user as the reference
    /// keeps its state, in `~/.curupira/curupira-rs/` (never the reference's own files).
    fn default_ledger(&self) -> LedgerSettings {
        match (self.form, &self.home) {
            (Form::Reference, Some(home)) => {
                let mut ledger = LedgerSettings::new(self.dir);
                ledger.path = home.join(REFERENCE_LEDGER_PATH);
                ledger
            }
            _ => LedgerSettings::new(self.dir),
        }
    }

    /// An error at `theirs` when `ours`, a key of this host's form with the same
    /// meaning, is written too (`written`): one value per meaning.
    fn one_meaning(&mut self, theirs: &JsonPointer, ours: &JsonPointer, written: bool) {
        if written {
            self.collector.error(
                codes::FORM_CONFLICT,
                theirs,
                format!(
                    "`{}` (the reference host's) and `{}` (this host's) say the same thing; \
                     keep one",
                    dotted(theirs),
                    dotted(ours)
                ),
            );
        }
    }

    /// Warns about the keys of `table` (at `at`) outside `known`.
    fn unknown_keys(&mut self, table: &toml::Table, at: &JsonPointer, known: &[&str]) {
        let keys = table.keys().map(String::as_str);
        curupira_diagnostics::toml::unknown_keys(
            &mut self.collector,
            codes::UNKNOWN_KEY,
            keys,
            at,
            known,
        );
    }

    fn table<'v>(&mut self, value: &'v TomlValue, at: &JsonPointer) -> Option<&'v toml::Table> {
        match value {
            TomlValue::Table(table) => Some(table),
            other => {
                self.wrong_type(at, "a table", other);
                None
            }
        }
    }

    fn table_member<'v>(
        &mut self,
        table: &'v toml::Table,
        at: &JsonPointer,
        key: &str,
    ) -> Option<&'v toml::Table> {
        let value = table.get(key)?;
        self.table(value, &at.key(key))
    }

    /// A string member; `non_empty` refuses `""`.
    fn string_member(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        key: &str,
        non_empty: bool,
    ) -> Option<String> {
        let value = table.get(key)?;
        let at = at.key(key);
        match value {
            TomlValue::String(s) if non_empty && s.is_empty() => {
                self.collector.error(
                    codes::INVALID_VALUE,
                    &at,
                    format!("`{}` must not be empty", dotted(&at)),
                );
                None
            }
            TomlValue::String(s) => Some(s.clone()),
            other => {
                self.wrong_type(&at, "a string", other);
                None
            }
        }
    }

    /// A number of seconds; `allow_zero` accepts 0.
    fn seconds(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        key: &str,
        allow_zero: bool,
    ) -> Option<f64> {
        let value = table.get(key)?;
        let at = at.key(key);
        #[allow(clippy::cast_precision_loss)]
        let seconds = match value {
            TomlValue::Integer(n) => *n as f64,
            TomlValue::Float(f) => *f,
            other => {
                self.wrong_type(&at, "a number of seconds", other);
                return None;
            }
        };
        let in_range = seconds.is_finite()
            && seconds < 1.0e9
            && (seconds > 0.0 || (allow_zero && seconds == 0.0));
        if !in_range {
            let expected = if allow_zero {
                "at least 0"
            } else {
                "more than 0"
            };
            self.collector.error(
                codes::INVALID_VALUE,
                &at,
                format!(
                    "`{}` must be {expected} seconds (and below 10^9), found {seconds}",
                    dotted(&at)
                ),
            );
            return None;
        }
        Some(seconds)
    }

    fn wrong_type(&mut self, at: &JsonPointer, expected: &str, found: &TomlValue) {
        self.collector.error(
            codes::INVALID_TYPE,
            at,
            format!(
                "`{}` must be {expected}, found {}",
                dotted(at),
                type_name(found)
            ),
        );
    }
}
