//! The reference form: the reference host's `settings.toml` (`curupira` 0.4.0), read
//! into the same model as this host's own form. What the reference refuses at
//! `validate` is an error here too; what it accepts without using (unknown keys,
//! `otlp_endpoint`, profile options its provider does not take, …) is a warning that
//! says so, so that the verdict on a file stays the reference's. The recordings this
//! follows are in `recordings/reference-host/` (its README lists the findings).

use std::path::{Path, PathBuf};
use std::time::Duration;

use curupira_diagnostics::toml::dotted;
use curupira_diagnostics::{JsonPointer, did_you_mean, one_of};
use serde_json::Map;
use toml::Value as TomlValue;

use super::Checker;
use crate::codes;
use crate::model::{
    Checkout, LogLevel, MAX_CONCURRENT_LIMIT, ProviderAgent, ReferenceSettings, Repository,
    TriggerRef,
};

/// The reference's `[settings]` keys.
pub(super) const SETTINGS_KEYS: &[&str] = &[
    "max_active_tasks",
    "max_pending_tasks",
    "workspace_dir",
    "state_db_path",
    "log_level",
    "task_timeout_minutes",
    "otlp_endpoint",
];

/// The reference's `[settings.polling]` keys (`batch_size` is shared with ours).
pub(super) const POLLING_KEYS: &[&str] = &["poll_interval_seconds", "cron_poll_interval_seconds"];

/// The keys of a reference-form automation the host sends the extension itself
/// (with its own values) in every configuration; every other key of the table,
/// `profile` and `checkout` included, is passed as written, as the reference passes it.
const HOST_SENT_KEYS: &[&str] = &["trigger_type", "repository", "prompt"];

/// What the reference's `u32` keys take, for messages.
const U32: &str = "a whole number from 0 to 4294967295";
/// What the reference's `u64` keys take, for messages.
const U64: &str = "a whole number of at least 0";

/// The trigger a reference-form automation without `trigger_type` gets.
pub const DEFAULT_TRIGGER_TYPE: &str = "plugins-py/github-issues";

/// The reference host's default `poll_interval_seconds`.
pub const DEFAULT_POLL_INTERVAL_SECONDS: u64 = 30;

/// The reference host's default `[settings] workspace_dir`, under the home folder.
pub const DEFAULT_WORKSPACE_DIR: &str = ".curupira/workspaces";

/// The reference host's file name: a file called so is in the reference form unless
/// it is plainly in ours (`[extensions]`, or an automation with `trigger`).
pub const REFERENCE_FILE_NAME: &str = "settings.toml";

/// Whether a parsed file is in the reference form: it has `[repositories]` or
/// `[agents]`, or an automation with `trigger_type`; or it is called
/// [`REFERENCE_FILE_NAME`] and nothing in it is of this host's form.
pub(super) fn is_reference(root: &toml::Table, file: &str) -> bool {
    let automations = || {
        root.get("automations")
            .and_then(TomlValue::as_table)
            .into_iter()
            .flat_map(|automations| automations.values())
            .filter_map(TomlValue::as_table)
    };
    let named = Path::new(file).file_name() == Some(std::ffi::OsStr::new(REFERENCE_FILE_NAME));
    let ours = root.contains_key("extensions") || automations().any(|a| a.contains_key("trigger"));
    (named && !ours) || has_reference_tables(root)
}

/// Whether the file has a table only the reference form has, or an automation with
/// `trigger_type`.
fn has_reference_tables(root: &toml::Table) -> bool {
    root.contains_key("repositories")
        || root.contains_key("agents")
        || root
            .get("automations")
            .and_then(TomlValue::as_table)
            .is_some_and(|automations| {
                automations.values().any(|automation| {
                    automation
                        .as_table()
                        .is_some_and(|table| table.contains_key("trigger_type"))
                })
            })
}

/// Whether `name` is a name the reference host accepts for an automation, a
/// repository or a plugin: ASCII letters, digits, `_` and `-`, at least one.
pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The reference's `[settings]` keys that map onto the shared model.
#[derive(Debug, Default)]
pub(super) struct SharedSettings {
    /// `max_active_tasks`, made 1..=[`MAX_CONCURRENT_LIMIT`].
    pub(super) max_active_tasks: Option<u32>,
    /// `task_timeout_minutes`; 0 is no limit.
    pub(super) task_timeout: Option<Option<Duration>>,
    /// `poll_interval_seconds`.
    pub(super) poll_interval: Option<Duration>,
}

/// A profile of `[agents.profiles]`: its agent, or why it cannot make one.
pub(super) type Profile = Result<ProviderAgent, String>;

impl Checker<'_> {
    /// The reference's `[settings]` keys of `table` (at `/settings`), and
    /// `[settings.polling]`'s.
    pub(super) fn reference_settings(
        &mut self,
        table: &toml::Table,
        polling: Option<&toml::Table>,
    ) -> (ReferenceSettings, SharedSettings) {
        let at = JsonPointer::root().key("settings");
        let mut shared = SharedSettings::default();
        let mut reference = ReferenceSettings::default();
        if let Some(n) = self.whole(table, &at, "max_active_tasks", 0..=u32::MAX.into(), U32) {
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            if n == 0 || n > MAX_CONCURRENT_LIMIT {
                let made = n.clamp(1, MAX_CONCURRENT_LIMIT);
                self.collector.warning(
                    codes::REFERENCE_KEY,
                    &at.key("max_active_tasks"),
                    format!(
                        "`settings.max_active_tasks = {n}`: this host runs at most {made} agent(s) \
                         at once (from 1 to {MAX_CONCURRENT_LIMIT}; the reference host runs one \
                         with 0)"
                    ),
                );
                shared.max_active_tasks = Some(made);
            } else {
                shared.max_active_tasks = Some(n);
            }
        }
        if let Some(n) = self.whole(table, &at, "max_pending_tasks", 0..=u32::MAX.into(), U32) {
            reference.max_pending_tasks = u32::try_from(n).ok();
            self.collector.warning(
                codes::REFERENCE_KEY,
                &at.key("max_pending_tasks"),
                "`settings.max_pending_tasks` changes nothing here (nor, as recorded, in the \
                 reference host): a round takes what free agent slots and `batch_size` allow",
            );
        }
        if let Some(minutes) =
            self.whole(table, &at, "task_timeout_minutes", 0..=u32::MAX.into(), U32)
        {
            shared.task_timeout = Some((minutes > 0).then(|| Duration::from_secs(minutes * 60)));
        }
        reference.workspace_dir = match self.reference_path(table, &at, "workspace_dir") {
            Some(path) => path,
            None => self.home().join(DEFAULT_WORKSPACE_DIR),
        };
        reference.state_db_path = self.reference_path(table, &at, "state_db_path");
        if reference.state_db_path.is_some() {
            self.collector.warning(
                codes::REFERENCE_KEY,
                &at.key("state_db_path"),
                "`settings.state_db_path` is the reference host's own state database: this host \
                 never opens or writes it, and keeps its ledger in `[settings.ledger] path` \
                 (default `.curupira/ledger.sqlite` beside this file)",
            );
        }
        reference.log_level = self.log_level(table, &at);
        if let Some(endpoint) = self.string_member(table, &at, "otlp_endpoint", false) {
            self.collector.warning(
                codes::REFERENCE_KEY,
                &at.key("otlp_endpoint"),
                format!(
                    "`settings.otlp_endpoint = \"{}\"`: this host exports no OpenTelemetry \
                     traces; its events (`--format json`), `status` and the metrics of \
                     `[settings.http]` tell what happened",
                    endpoint.escape_debug()
                ),
            );
            reference.otlp_endpoint = Some(endpoint);
        }
        if let Some(polling) = polling {
            let at = at.key("polling");
            if let Some(seconds) =
                self.whole(polling, &at, "poll_interval_seconds", 0..=u64::MAX, U64)
            {
                shared.poll_interval = Some(Duration::from_secs(seconds.min(999_999_999)));
            }
            if let Some(seconds) = self.whole(
                polling,
                &at,
                "cron_poll_interval_seconds",
                0..=u64::MAX,
                U64,
            ) {
                reference.cron_poll_interval = Some(Duration::from_secs(seconds.min(999_999_999)));
            }
        }
        (reference, shared)
    }

    /// `[settings] log_level`: one of the reference's five names, case and all.
    fn log_level(&mut self, table: &toml::Table, at: &JsonPointer) -> Option<LogLevel> {
        let text = self.string_member(table, at, "log_level", false)?;
        if let Some(level) = LogLevel::from_name(&text) {
            return Some(level);
        }
        let at = at.key("log_level");
        let upper = text.to_ascii_uppercase();
        let hint = LogLevel::from_name(&upper)
            .map(|level| format!("; did you mean `{level}`? (the file's names are upper case)"))
            .or_else(|| {
                did_you_mean(&upper, LogLevel::names())
                    .map(|near| format!("; did you mean `{near}`?"))
            })
            .unwrap_or_default();
        self.collector.error(
            codes::INVALID_VALUE,
            &at,
            format!(
                "`{}` must be {}, found `{}`{hint}",
                dotted(&at),
                one_of(LogLevel::names()),
                text.escape_debug()
            ),
        );
        None
    }

    /// A path of the reference form: `~` and `~/…` from the home folder, a relative
    /// path from the config's folder (with a warning: the reference host keeps it
    /// relative, and its tasks then fail).
    fn reference_path(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        key: &str,
    ) -> Option<PathBuf> {
        let text = self.string_member(table, at, key, false)?;
        let at = at.key(key);
        if text == "~" {
            return Some(self.home());
        }
        if let Some(rest) = text.strip_prefix("~/") {
            return Some(self.home().join(rest));
        }
        let path = Path::new(&text);
        if path.is_absolute() {
            return Some(path.to_owned());
        }
        let resolved = self.dir.join(path);
        if key != "state_db_path" {
            self.collector.warning(
                codes::REFERENCE_KEY,
                &at,
                format!(
                    "`{}` is relative: this host reads it from the config's folder ({}), where \
                     the reference host keeps it relative and fails its tasks; write an \
                     absolute path or `~/…` so that both hosts agree",
                    dotted(&at),
                    resolved.display()
                ),
            );
        }
        Some(resolved)
    }

    /// The home folder, for `~` (the current folder when none is known).
    fn home(&self) -> PathBuf {
        self.home.clone().unwrap_or_else(|| PathBuf::from("."))
    }

    /// `[repositories.*]`, in file order.
    pub(super) fn repositories(
        &mut self,
        table: &toml::Table,
        workspace_dir: &Path,
    ) -> Vec<Repository> {
        let mut repositories = Vec::new();
        for (alias, at, value) in self.members(table, "repositories") {
            if !valid_name(&alias) {
                self.invalid_name(&at, "repository alias", &alias);
            }
            let Some(repo) = self.table(value, &at) else {
                continue;
            };
            self.unknown_keys_ignored(repo, &at, &["remote", "path", "setup_script"]);
            if !repo.contains_key("remote") {
                self.collector.error(
                    codes::MISSING_KEY,
                    &at.key("remote"),
                    format!(
                        "repository `{alias}` needs `remote`, the URL `git clone` is given (the \
                         reference host requires it even beside `path`)"
                    ),
                );
            }
            let remote = self.string_member(repo, &at, "remote", false);
            let path = self.reference_path(repo, &at, "path");
            let setup_script = self.string_member(repo, &at, "setup_script", false);
            if let Some(script) = &setup_script {
                let relative = Path::new(script);
                if relative.is_absolute()
                    || relative
                        .components()
                        .any(|part| part == std::path::Component::ParentDir)
                {
                    self.collector.error(
                        codes::INVALID_VALUE,
                        &at.key("setup_script"),
                        format!(
                            "repository \"{alias}\" setup_script must be a relative path without \
                             '..' (it runs in the repository's checkout)"
                        ),
                    );
                } else if script.chars().any(char::is_whitespace) {
                    self.collector.warning(
                        codes::REFERENCE_KEY,
                        &at.key("setup_script"),
                        format!(
                            "repository `{alias}`: `setup_script = \"{}\"` is one program's path, \
                             not a command line: both hosts run the whole string as the program \
                             (no arguments), so it fails unless a file has that name",
                            script.escape_debug()
                        ),
                    );
                }
            }
            if let Some(remote) = remote {
                repositories.push(Repository {
                    checkout: path.clone().unwrap_or_else(|| workspace_dir.join(&alias)),
                    alias,
                    remote,
                    path,
                    setup_script,
                });
            }
        }
        repositories
    }

    /// `[agents]`: `defaults` (`profile`, `timezone`) and `profiles`, each profile
    /// checked into its agent.
    pub(super) fn agents(
        &mut self,
        table: &toml::Table,
        reference: &mut ReferenceSettings,
    ) -> Vec<(String, Profile)> {
        let at = JsonPointer::root().key("agents");
        self.unknown_keys_ignored(table, &at, &["defaults", "profiles"]);
        match self.table_member(table, &at, "defaults") {
            Some(defaults) => {
                let at = at.key("defaults");
                self.unknown_keys_ignored(defaults, &at, &["profile", "timezone"]);
                if !defaults.contains_key("profile") {
                    self.collector.error(
                        codes::MISSING_KEY,
                        &at.key("profile"),
                        "`[agents.defaults]` needs `profile`, the `[agents.profiles.NAME]` an \
                         automation without `profile` uses",
                    );
                }
                reference.default_profile = self.string_member(defaults, &at, "profile", false);
                reference.timezone = self.string_member(defaults, &at, "timezone", false);
            }
            None if !table.contains_key("defaults") => self.collector.error(
                codes::MISSING_KEY,
                &at.key("defaults"),
                "`[agents]` needs `[agents.defaults]` with `profile`, the `[agents.profiles.NAME]` \
                 an automation without `profile` uses",
            ),
            None => {}
        }
        let mut profiles = Vec::new();
        if let Some(table) = self.table_member(table, &at, "profiles") {
            for (name, at, value) in self.members_at(table, &at.key("profiles")) {
                let Some(profile) = self.table(value, &at) else {
                    continue;
                };
                if let Some(profile) = self.profile(&name, profile, &at) {
                    profiles.push((name, profile));
                }
            }
        }
        if let Some(name) = &reference.default_profile
            && !profiles.iter().any(|(known, _)| known == name)
        {
            let hint = did_you_mean(name, profiles.iter().map(|(known, _)| known.as_str()))
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            self.collector.error(
                codes::UNKNOWN_REFERENCE,
                &at.key("defaults").key("profile"),
                format!(
                    "agents.defaults.profile \"{}\" is not defined in agents.profiles{hint}",
                    name.escape_debug()
                ),
            );
        }
        profiles
    }

    /// One `[agents.profiles.NAME]`: `provider` (one of the reference's, exactly) and
    /// the options the reference host reads for it. `None` when it has no usable
    /// provider (an error).
    fn profile(&mut self, name: &str, table: &toml::Table, at: &JsonPointer) -> Option<Profile> {
        if !table.contains_key("provider") {
            self.collector.error(
                codes::MISSING_KEY,
                &at.key("provider"),
                format!(
                    "profile `{name}` needs `provider`: {}",
                    curupira_agents::Provider::names()
                ),
            );
            return None;
        }
        let text = self.string_member(table, at, "provider", false)?;
        let Some(provider) = curupira_agents::Provider::parse(&text) else {
            let names: Vec<&str> = curupira_agents::Provider::ALL.map(|p| p.name()).to_vec();
            let hint = did_you_mean(&text, names.iter().copied())
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            self.collector.error(
                codes::INVALID_VALUE,
                &at.key("provider"),
                format!(
                    "agents.profiles.{name}: unknown coding-agent provider \"{}\"{hint}; expected \
                     one of: {}",
                    text.escape_debug(),
                    curupira_agents::Provider::names()
                ),
            );
            return None;
        };
        let spec = provider.spec();
        let mut options = Map::new();
        for (key, value) in table {
            if key == "provider" {
                continue;
            }
            let taken = spec.options.iter().any(|option| option.key == key)
                || curupira_agents::COMMON_KEYS.contains(&key.as_str());
            if !taken {
                self.collector.warning(
                    codes::REFERENCE_KEY,
                    &at.key(key),
                    format!(
                        "profile `{name}`: `{key}` is not an option of {} (it takes {}); the \
                         reference host ignores it, and so does this host",
                        spec.title,
                        one_of(spec.options.iter().map(|option| option.key))
                    ),
                );
                continue;
            }
            if let Some(json) = self.json_of(value, &at.key(key)) {
                options.insert(key.clone(), json);
            }
        }
        Some(match curupira_agents::Profile::new(provider, &options) {
            Ok(profile) => Ok(ProviderAgent {
                profile,
                resume: true,
                continue_prompt: curupira_agents::CONTINUE_PROMPT.to_owned(),
            }),
            Err(error) => {
                self.collector.warning(
                    codes::PROFILE_FAILS,
                    at,
                    format!(
                        "profile `{name}`: {error}. The reference host accepts this file and fails \
                         each task of an automation with this profile; this host refuses such an \
                         automation when `run` starts"
                    ),
                );
                Err(format!("profile `{name}`: {error}"))
            }
        })
    }

    /// `trigger_type` of a reference-form automation: `alias/type` (a bare type is
    /// refused, as the reference refuses it); the reference's default when absent.
    pub(super) fn trigger_type(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        name: &str,
    ) -> Option<TriggerRef> {
        let text = if table.contains_key("trigger_type") {
            self.string_member(table, at, "trigger_type", false)?
        } else {
            self.collector.warning(
                codes::REFERENCE_DEFAULT,
                &at.key("trigger_type"),
                format!(
                    "automation `{name}` has no `trigger_type`, so it is \
                     `{DEFAULT_TRIGGER_TYPE}`, the reference host's default (it needs a \
                     `[plugins.plugins-py]` registration); write `trigger_type` to say which \
                     trigger it is"
                ),
            );
            DEFAULT_TRIGGER_TYPE.to_owned()
        };
        if text == curupira_cron::TRIGGER_TYPE {
            // Built in, as the reference host's.
            return Some(TriggerRef {
                extension: None,
                trigger_type: text,
            });
        }
        match text.split_once('/') {
            Some((alias, trigger_type))
                if !alias.is_empty() && !trigger_type.is_empty() && !trigger_type.contains('/') =>
            {
                Some(TriggerRef {
                    extension: Some(alias.to_owned()),
                    trigger_type: trigger_type.to_owned(),
                })
            }
            _ => {
                self.collector.error(
                    codes::INVALID_VALUE,
                    &at.key("trigger_type"),
                    format!(
                        "automation \"{name}\": no [plugins.<alias>] registration provides \
                         trigger_type \"{}\" (register under [plugins.<alias>] with type/args \
                         and use <alias>/<trigger>)",
                        text.escape_debug()
                    ),
                );
                None
            }
        }
    }

    /// `repository`, `profile` and `checkout` of a reference-form automation.
    pub(super) fn reference_links<'p>(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        name: &str,
        reference: &ReferenceSettings,
        profiles: &'p [(String, Profile)],
    ) -> (
        Option<String>,
        Checkout,
        Option<String>,
        Option<&'p Profile>,
    ) {
        if !table.contains_key("repository") {
            self.collector.error(
                codes::MISSING_KEY,
                &at.key("repository"),
                format!(
                    "automation `{name}` needs `repository`, the alias of a `[repositories.ALIAS]`"
                ),
            );
        }
        let repository = self.string_member(table, at, "repository", false);
        if let Some(alias) = &repository
            && reference.repository(alias).is_none()
        {
            let hint = did_you_mean(
                alias,
                reference.repositories.iter().map(|r| r.alias.as_str()),
            )
            .map(|near| format!(" (did you mean `{near}`?)"))
            .unwrap_or_default();
            self.collector.error(
                codes::UNKNOWN_REFERENCE,
                &at.key("repository"),
                format!(
                    "automation \"{name}\" references unknown repository \"{}\"{hint}",
                    alias.escape_debug()
                ),
            );
        }
        let own_profile = self.string_member(table, at, "profile", false);
        if let Some(profile) = &own_profile
            && !profiles.iter().any(|(known, _)| known == profile)
        {
            let hint = did_you_mean(profile, profiles.iter().map(|(known, _)| known.as_str()))
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            self.collector.error(
                codes::UNKNOWN_REFERENCE,
                &at.key("profile"),
                format!(
                    "automation \"{name}\" references unknown profile \"{}\"{hint}",
                    profile.escape_debug()
                ),
            );
        }
        let profile = own_profile.or_else(|| reference.default_profile.clone());
        let agent = profile
            .as_ref()
            .and_then(|profile| profiles.iter().find(|(known, _)| known == profile))
            .map(|(_, agent)| agent);
        let checkout = match self.string_member(table, at, "checkout", false) {
            Some(text) if text == "main" => Checkout::Main,
            Some(text) => {
                self.collector.warning(
                    codes::REFERENCE_KEY,
                    &at.key("checkout"),
                    format!(
                        "automation `{name}`: `checkout = \"{}\"` gives each task a worktree of \
                         its own, as when it is not written: only `\"main\"` (the shared \
                         checkout) changes anything, in both hosts",
                        text.escape_debug()
                    ),
                );
                Checkout::Worktree
            }
            None => Checkout::Worktree,
        };
        (repository, checkout, profile, agent)
    }

    /// In a file of this host's form, the keys of `keys` (the reference's own keys of
    /// this table) that `table` writes, each with a warning that it is read only in
    /// the reference form, rather than a did-you-mean to a key of ours that means
    /// something else (`workspace_dir` is not `workspace`). Returns them, to be left
    /// out of the unknown-key check.
    pub(super) fn reference_keys_here(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        keys: &[&'static str],
    ) -> Vec<&'static str> {
        let written: Vec<&'static str> = keys
            .iter()
            .copied()
            .filter(|key| table.contains_key(*key))
            .collect();
        for key in &written {
            self.collector.warning(
                codes::UNKNOWN_KEY,
                &at.key(key),
                format!(
                    "`{}` is a key of the reference host's `settings.toml`, read only in a file of \
                     that form (one with `[repositories]`, `[agents]` or an automation with \
                     `trigger_type`); this file is in curupira.toml's form, so it is ignored",
                    dotted(&at.key(key))
                ),
            );
        }
        written
    }

    /// A name the reference host refuses.
    pub(super) fn invalid_name(&mut self, at: &JsonPointer, what: &str, name: &str) {
        self.collector.error(
            codes::INVALID_NAME,
            at,
            format!(
                "invalid {what} \"{}\": the reference host takes only ASCII letters, digits, `_` \
                 and `-`",
                name.escape_debug()
            ),
        );
    }

    /// Warns about the keys of `table` outside `known` that the reference host
    /// ignores without a word: the same `config/unknown-key` as elsewhere, saying so.
    pub(super) fn unknown_keys_ignored(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        known: &[&str],
    ) {
        self.unknown_keys(table, at, known);
    }

    /// `[assistant]` and `[environment]`: accepted in any shape, and ignored by both
    /// hosts' `run`.
    pub(super) fn ignored_tables(&mut self, root: &toml::Table) {
        for (key, what) in [
            ("assistant", "the reference host's terminal assistant"),
            (
                "environment",
                "the reference host's environment table (its values do not reach the agent there either)",
            ),
        ] {
            if root.contains_key(key) {
                self.collector.warning(
                    codes::REFERENCE_KEY,
                    &JsonPointer::root().key(key),
                    format!("`[{key}]` is {what}; this host does not read it"),
                );
            }
        }
    }
}

impl Checker<'_> {
    /// One `[automations.NAME]` in the reference form: `trigger_type`, `repository`,
    /// `profile`, `checkout` and `prompt` are the host's; every other key is a
    /// parameter of the trigger, passed as the reference host passes it. The agent is
    /// the profile's; the policies are `[settings.agent]` and `[settings.workspace]`
    /// where this host's keys are written there.
    pub(super) fn reference_automation(
        &mut self,
        name: String,
        at: &JsonPointer,
        table: &toml::Table,
        defaults: &super::Defaults,
    ) -> super::ReadAutomation {
        if !valid_name(&name) {
            self.invalid_name(at, "automation name", &name);
        }
        let empty = (ReferenceSettings::default(), Vec::new());
        let (reference, profiles) = defaults.reference.as_ref().unwrap_or(&empty);
        let trigger = self.trigger_type(table, at, &name);
        let (repository, checkout, profile, agent) =
            self.reference_links(table, at, &name, reference, profiles);
        if !table.contains_key("prompt") {
            self.collector.error(
                codes::MISSING_KEY,
                &at.key("prompt"),
                format!(
                    "automation `{name}` needs `prompt` (the reference host does not read \
                     `prompt_file`)"
                ),
            );
        }
        let prompt = self.string_member(table, at, "prompt", false);
        if table.contains_key("prompt_file") {
            self.collector.warning(
                codes::REFERENCE_KEY,
                &at.key("prompt_file"),
                format!(
                    "automation `{name}`: in the reference form `prompt_file` is not a prompt but \
                     a parameter of the trigger, passed to it as written; the prompt is `prompt`"
                ),
            );
        }
        let mut arguments = Map::new();
        let mut readable = true;
        for (key, value) in table {
            if HOST_SENT_KEYS.contains(&key.as_str()) {
                continue;
            }
            match self.json_of(value, &at.key(key)) {
                Some(json) => {
                    arguments.insert(key.clone(), json);
                }
                None => readable = false,
            }
        }
        if readable && trigger.as_ref().is_some_and(TriggerRef::is_builtin_cron) {
            readable = self.cron_arguments(&name, at, &arguments, reference.timezone.as_deref());
        }
        let (provider, agent_error) = match agent {
            Some(Ok(agent)) => (Some(agent.clone()), None),
            Some(Err(error)) => (None, Some(error.clone())),
            None => (None, None),
        };
        let automation = match (&trigger, prompt, readable) {
            (Some(trigger), Some(prompt), true) => Some(crate::model::Automation {
                name: name.clone(),
                trigger: trigger.clone(),
                prompt,
                prompt_file: None,
                arguments,
                polling: crate::model::Polling {
                    batch_size: defaults
                        .polling
                        .batch_size
                        .unwrap_or(crate::model::DEFAULT_BATCH_SIZE),
                    interval: Duration::from_secs_f64(
                        defaults
                            .polling
                            .interval_seconds
                            .unwrap_or(crate::model::DEFAULT_INTERVAL_SECONDS),
                    ),
                },
                agent: None,
                provider,
                agent_policy: super::merged_agent(
                    &defaults.agent,
                    &super::AgentOverride::default(),
                ),
                workspace_policy: super::merged_workspace(
                    self.dir,
                    &defaults.workspace,
                    &super::WorkspaceOverride::default(),
                ),
                unfilled: crate::model::Unfilled::default(),
                form: crate::model::Form::Reference,
                repository,
                checkout,
                profile,
                agent_error,
            }),
            _ => None,
        };
        super::ReadAutomation {
            name,
            trigger,
            automation,
            own_agent: true,
        }
    }
}
