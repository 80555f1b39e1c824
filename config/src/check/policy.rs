//! The agent and workspace policies: `[settings.agent]`, `[settings.workspace]` and
//! an automation's `agent = { … }` / `workspace = { … }`. Each table is read into an
//! override (what it writes), then an automation's override is merged over the
//! global one, key by key, into the [model](super::super::model)'s policies.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use curupira_diagnostics::toml::dotted;
use curupira_diagnostics::{JsonPointer, did_you_mean, one_of};
use toml::Value as TomlValue;

use super::Checker;
use crate::codes;
use crate::model::{
    AgentPolicy, Cleanup, DEFAULT_HOOK_TIMEOUT_SECONDS, DEFAULT_KILL_GRACE_SECONDS,
    DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_RETRY_BACKOFF_SECONDS, DEFAULT_RETRY_BACKOFF_SECONDS,
    DEFAULT_WORKTREE_ROOT, Hooks, MAX_CONCURRENT_LIMIT, MAX_RETRIES, MAX_SECONDS, WorkspaceMode,
    WorkspacePolicy,
};

/// The keys of `[settings.agent]` and of an automation's `agent`, in documentation
/// order.
const AGENT_KEYS: &[&str] = &[
    "command",
    "max_concurrent",
    "timeout_seconds",
    "stall_seconds",
    "kill_grace_seconds",
    "retries",
    "retry_backoff_seconds",
    "max_retry_backoff_seconds",
    "provider",
    "resume",
    "continue_prompt",
];

/// Every option key some provider takes (`model`, `effort`, …), in table order:
/// also keys of an agent table, checked against its provider.
fn provider_option_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = Vec::new();
    for spec in &curupira_agents::TABLE {
        for option in spec.options {
            if !keys.contains(&option.key) {
                keys.push(option.key);
            }
        }
    }
    keys
}

/// The keys of `[settings.workspace]` and of an automation's `workspace`.
const WORKSPACE_KEYS: &[&str] = &[
    "mode",
    "root",
    "base",
    "cleanup",
    "hook_timeout_seconds",
    "hooks",
];

/// The keys of `hooks`, in the order they run.
const HOOK_KEYS: &[&str] = &["after_create", "before_run", "after_run", "before_remove"];

/// What one `agent` table writes; `None` where a key is absent or its value wrong.
#[derive(Debug, Default)]
pub(super) struct AgentOverride {
    /// `command`.
    pub(super) command: Option<Vec<String>>,
    /// `provider`, when it names a known one.
    pub(super) provider: Option<curupira_agents::Provider>,
    /// The provider options written in this table, as JSON.
    pub(super) options: serde_json::Map<String, serde_json::Value>,
    /// `resume`.
    pub(super) resume: Option<bool>,
    /// `continue_prompt`.
    pub(super) continue_prompt: Option<String>,
    pub(super) max_concurrent: Option<u32>,
    pub(super) timeout: Option<u64>,
    stall: Option<u64>,
    kill_grace: Option<u64>,
    retries: Option<u32>,
    retry_backoff: Option<u64>,
    max_retry_backoff: Option<u64>,
}

/// What one `workspace` table writes; `None` where a key is absent or its value wrong.
#[derive(Debug, Default)]
pub(super) struct WorkspaceOverride {
    mode: Option<WorkspaceMode>,
    /// Already made absolute.
    root: Option<PathBuf>,
    base: Option<String>,
    cleanup: Option<Cleanup>,
    hook_timeout: Option<u64>,
    hooks: Hooks,
}

/// `own` merged over `global` over the defaults. `own`'s `max_concurrent` is the
/// automation's cap; the global one stays the limit.
pub(super) fn merged_agent(global: &AgentOverride, own: &AgentOverride) -> AgentPolicy {
    let seconds = |own: Option<u64>, global: Option<u64>| own.or(global).map(Duration::from_secs);
    let retry_backoff = own
        .retry_backoff
        .or(global.retry_backoff)
        .unwrap_or(DEFAULT_RETRY_BACKOFF_SECONDS);
    // Unwritten, the longest pause is the default or the first pause when that is
    // longer; written too short it was reported, and is taken as the first pause.
    let max_retry_backoff = own
        .max_retry_backoff
        .or(global.max_retry_backoff)
        .unwrap_or(DEFAULT_MAX_RETRY_BACKOFF_SECONDS)
        .max(retry_backoff);
    AgentPolicy {
        max_concurrent: global.max_concurrent.unwrap_or(DEFAULT_MAX_CONCURRENT),
        cap: own.max_concurrent,
        timeout: seconds(own.timeout, global.timeout),
        stall: seconds(own.stall, global.stall),
        kill_grace: Duration::from_secs(
            own.kill_grace
                .or(global.kill_grace)
                .unwrap_or(DEFAULT_KILL_GRACE_SECONDS),
        ),
        retries: own.retries.or(global.retries).unwrap_or(0),
        retry_backoff: Duration::from_secs(retry_backoff),
        max_retry_backoff: Duration::from_secs(max_retry_backoff),
    }
}

/// `own` merged over `global` over the defaults of a config in `dir`; hooks one by
/// one.
pub(super) fn merged_workspace(
    dir: &Path,
    global: &WorkspaceOverride,
    own: &WorkspaceOverride,
) -> WorkspacePolicy {
    let pick =
        |own: &Option<String>, global: &Option<String>| own.as_ref().or(global.as_ref()).cloned();
    WorkspacePolicy {
        mode: own.mode.or(global.mode).unwrap_or_default(),
        root: own
            .root
            .as_ref()
            .or(global.root.as_ref())
            .cloned()
            .unwrap_or_else(|| dir.join(DEFAULT_WORKTREE_ROOT)),
        base: pick(&own.base, &global.base),
        cleanup: own.cleanup.or(global.cleanup).unwrap_or_default(),
        hook_timeout: Duration::from_secs(
            own.hook_timeout
                .or(global.hook_timeout)
                .unwrap_or(DEFAULT_HOOK_TIMEOUT_SECONDS),
        ),
        hooks: Hooks {
            after_create: pick(&own.hooks.after_create, &global.hooks.after_create),
            before_run: pick(&own.hooks.before_run, &global.hooks.before_run),
            after_run: pick(&own.hooks.after_run, &global.hooks.after_run),
            before_remove: pick(&own.hooks.before_remove, &global.hooks.before_remove),
        },
    }
}

/// `a whole number of seconds from MIN to one year`, for messages.
fn seconds_from(min: u64) -> String {
    format!("a whole number of seconds from {min} to {MAX_SECONDS} (one year)")
}

impl Checker<'_> {
    /// Reads `[settings.agent]` (`parent` is `None`) or an automation's `agent` table
    /// (`parent` is `[settings.agent]` and its pointer), at `at`.
    pub(super) fn agent(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        parent: Option<(&AgentOverride, &JsonPointer)>,
    ) -> AgentOverride {
        let option_keys = provider_option_keys();
        let known: Vec<&str> = AGENT_KEYS
            .iter()
            .copied()
            .chain(option_keys.iter().copied())
            .collect();
        self.unknown_keys(table, at, &known);
        let count = |n: u64| u32::try_from(n).ok();
        let max_concurrent = self
            .whole(
                table,
                at,
                "max_concurrent",
                1..=u64::from(MAX_CONCURRENT_LIMIT),
                &format!(
                    "a whole number from 1 to {MAX_CONCURRENT_LIMIT} (agents running at once)"
                ),
            )
            .and_then(count);
        let retries = self
            .whole(
                table,
                at,
                "retries",
                0..=u64::from(MAX_RETRIES),
                &format!("a whole number from 0 to {MAX_RETRIES} (attempts after the first)"),
            )
            .and_then(count);
        let provider = self.provider(table, at);
        let mut options = serde_json::Map::new();
        for key in &option_keys {
            if let Some(value) = table.get(*key)
                && let Some(json) = self.json_of(value, &at.key(key))
            {
                options.insert((*key).to_owned(), json);
            }
        }
        let resume = match table.get("resume") {
            None => None,
            Some(TomlValue::Boolean(resume)) => Some(*resume),
            Some(other) => {
                self.wrong_type(&at.key("resume"), "true or false", other);
                None
            }
        };
        let continue_prompt = self.string_member(table, at, "continue_prompt", true);
        let read = AgentOverride {
            command: self.command(table, at),
            provider,
            options,
            resume,
            continue_prompt,
            max_concurrent,
            timeout: self.seconds_whole(table, at, "timeout_seconds", 1),
            stall: self.seconds_whole(table, at, "stall_seconds", 1),
            kill_grace: self.seconds_whole(table, at, "kill_grace_seconds", 0),
            retries,
            retry_backoff: self.seconds_whole(table, at, "retry_backoff_seconds", 0),
            max_retry_backoff: self.seconds_whole(table, at, "max_retry_backoff_seconds", 0),
        };
        self.retry_backoffs(parent, &read, at);
        read
    }

    /// `provider`: a known provider's name (`claude`, `codex`, …), and not beside
    /// `command`.
    fn provider(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
    ) -> Option<curupira_agents::Provider> {
        let name = self.string_member(table, at, "provider", true)?;
        let at = at.key("provider");
        if table.contains_key("command") {
            self.collector.error(
                codes::AGENT_CONFLICT,
                &at,
                format!(
                    "`{}` and `command` are both set: name a provider, or give the command of \
                     any other agent, not both",
                    dotted(&at)
                ),
            );
            return None;
        }
        let provider = curupira_agents::Provider::parse(&name);
        if provider.is_none() {
            let names: Vec<&str> = curupira_agents::Provider::ALL.map(|p| p.name()).to_vec();
            let hint = did_you_mean(&name, names.iter().copied())
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            self.collector.error(
                codes::INVALID_VALUE,
                &at,
                format!(
                    "unknown provider `{name}` at `{}`{hint}; expected {}",
                    dotted(&at),
                    one_of(&names)
                ),
            );
        }
        provider
    }

    /// The provider agent of an automation, from its own agent table over
    /// `[settings.agent]`: a table naming `provider` or `command` replaces the global
    /// agent; one naming neither takes the global provider with its own options over
    /// the global ones. Profile errors are reported at the option (or at `provider`).
    pub(super) fn provider_agent(
        &mut self,
        global: &AgentOverride,
        own: &AgentOverride,
        own_at: Option<&JsonPointer>,
    ) -> Option<crate::model::ProviderAgent> {
        let global_at = JsonPointer::root().key("settings").key("agent");
        let (provider, options, at) = if own.provider.is_some() {
            (
                own.provider?,
                own.options.clone(),
                own_at.cloned().unwrap_or(global_at),
            )
        } else if own.command.is_some() {
            return None;
        } else {
            let provider = global.provider?;
            let mut options = global.options.clone();
            options.extend(own.options.clone());
            let at = match own_at {
                Some(own_at) if !own.options.is_empty() => own_at.clone(),
                _ => global_at,
            };
            (provider, options, at)
        };
        match curupira_agents::Profile::new(provider, &options) {
            Ok(profile) => {
                if let Some(warning) = profile.warning() {
                    self.collector.warning(
                        codes::PROVIDER_OPTION_IGNORED,
                        &at.key("effort"),
                        warning,
                    );
                }
                Some(crate::model::ProviderAgent {
                    profile,
                    resume: own.resume.or(global.resume).unwrap_or(true),
                    continue_prompt: own
                        .continue_prompt
                        .clone()
                        .or_else(|| global.continue_prompt.clone())
                        .unwrap_or_else(|| curupira_agents::CONTINUE_PROMPT.to_owned()),
                })
            }
            Err(error) => {
                let key = match &error {
                    curupira_agents::ProfileError::WrongKind { key, .. }
                    | curupira_agents::ProfileError::Empty { key }
                    | curupira_agents::ProfileError::BelowOne { key }
                    | curupira_agents::ProfileError::Unsupported { key, .. }
                    | curupira_agents::ProfileError::Unknown { key, .. } => key.clone(),
                    curupira_agents::ProfileError::Rule(_) => "provider".to_owned(),
                };
                self.collector.error(
                    codes::PROVIDER_OPTION,
                    &at.key(&key),
                    format!("`{}`: {error}", dotted(&at.key(&key))),
                );
                None
            }
        }
    }

    /// Reports a longest pause between retries shorter than the first pause, once, at
    /// the table that made it so: `own` (at `at`), merged over `parent` (at
    /// `parent_at`) when `own` is an automation's. Nothing when `own` writes neither
    /// key, since then the parent's own check covers it.
    fn retry_backoffs(
        &mut self,
        parent: Option<(&AgentOverride, &JsonPointer)>,
        own: &AgentOverride,
        at: &JsonPointer,
    ) {
        if own.max_retry_backoff.is_none() && own.retry_backoff.is_none() {
            return;
        }
        let parent_agent = parent.map(|(agent, _)| agent);
        // Where the effective value of `key` comes from, as `` `place` is N ``.
        let written = |key: &str, own_value: Option<u64>, parent_value: Option<u64>| match (
            own_value, parent,
        ) {
            (Some(value), _) => Some((value, format!("`{}` is {value}", dotted(&at.key(key))))),
            (None, Some((_, parent_at))) => parent_value.map(|value| {
                (
                    value,
                    format!("`{}` is {value}", dotted(&parent_at.key(key))),
                )
            }),
            (None, None) => None,
        };
        let Some((longest, longest_text)) = written(
            "max_retry_backoff_seconds",
            own.max_retry_backoff,
            parent_agent.and_then(|p| p.max_retry_backoff),
        ) else {
            return;
        };
        let (first, first_text) = written(
            "retry_backoff_seconds",
            own.retry_backoff,
            parent_agent.and_then(|p| p.retry_backoff),
        )
        .unwrap_or((
            DEFAULT_RETRY_BACKOFF_SECONDS,
            format!("`retry_backoff_seconds` is {DEFAULT_RETRY_BACKOFF_SECONDS} by default"),
        ));
        if longest >= first {
            return;
        }
        let key = if own.max_retry_backoff.is_some() {
            "max_retry_backoff_seconds"
        } else {
            "retry_backoff_seconds"
        };
        self.collector.error(
            codes::INVALID_VALUE,
            &at.key(key),
            format!(
                "{longest_text} but {first_text}: the longest pause between retries must be \
                 at least the first one; raise `max_retry_backoff_seconds` or lower \
                 `retry_backoff_seconds`"
            ),
        );
    }

    /// The agent `command` of `table`: a non-empty array of strings whose first one
    /// (the program) is not empty.
    fn command(&mut self, table: &toml::Table, at: &JsonPointer) -> Option<Vec<String>> {
        let value = table.get("command")?;
        let at = at.key("command");
        let TomlValue::Array(items) = value else {
            self.wrong_type(&at, "an array of strings", value);
            return None;
        };
        if items.is_empty() {
            self.collector.error(
                codes::INVALID_VALUE,
                &at,
                "the agent `command` is empty: give the program and its arguments, e.g. \
                 [\"my-agent\", \"--print\"]",
            );
            return None;
        }
        let mut command = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match item {
                TomlValue::String(s) => command.push(s.clone()),
                other => self.wrong_type(&at.index(index), "a string", other),
            }
        }
        if command.first().is_some_and(String::is_empty) {
            self.collector.error(
                codes::INVALID_VALUE,
                &at.index(0),
                "the agent program (the first element of `command`) is an empty string",
            );
            return None;
        }
        (command.len() == items.len()).then_some(command)
    }

    /// Reads `[settings.workspace]` or an automation's `workspace` table, at `at`.
    pub(super) fn workspace(&mut self, table: &toml::Table, at: &JsonPointer) -> WorkspaceOverride {
        self.unknown_keys(table, at, WORKSPACE_KEYS);
        let mode = self.closed(
            table,
            at,
            "mode",
            WorkspaceMode::from_name,
            WorkspaceMode::names(),
        );
        let root = self
            .string_member(table, at, "root", true)
            .map(|root| self.dir.join(root));
        let base = self.base(table, at);
        let cleanup = self.closed(table, at, "cleanup", Cleanup::from_name, Cleanup::names());
        let hook_timeout = self.seconds_whole(table, at, "hook_timeout_seconds", 1);
        let hooks = match self.table_member(table, at, "hooks") {
            Some(hooks) => self.hooks(hooks, &at.key("hooks")),
            None => Hooks::default(),
        };
        WorkspaceOverride {
            mode,
            root,
            base,
            cleanup,
            hook_timeout,
            hooks,
        }
    }

    /// `base`: a Git revision, handed to `git` as an argument, so it may not look
    /// like an option nor hold control characters.
    fn base(&mut self, table: &toml::Table, at: &JsonPointer) -> Option<String> {
        let base = self.string_member(table, at, "base", true)?;
        let at = at.key("base");
        let problem = if base.starts_with('-') {
            Some("cannot start with `-` (Git would read it as an option)")
        } else if base.chars().any(char::is_control) {
            Some("cannot hold control characters")
        } else {
            None
        };
        match problem {
            Some(problem) => {
                self.collector.error(
                    codes::INVALID_VALUE,
                    &at,
                    format!(
                        "`{}` must be a Git revision (a branch, tag or commit such as `main`), \
                         and {problem}; found `{}`",
                        dotted(&at),
                        base.escape_debug()
                    ),
                );
                None
            }
            None => Some(base),
        }
    }

    /// `hooks = { … }`: each a non-empty shell command.
    fn hooks(&mut self, table: &toml::Table, at: &JsonPointer) -> Hooks {
        self.unknown_keys(table, at, HOOK_KEYS);
        let mut hook = |key: &str| {
            let value = table.get(key)?;
            let at = at.key(key);
            match value {
                TomlValue::String(command) if command.trim().is_empty() => {
                    self.collector.error(
                        codes::INVALID_VALUE,
                        &at,
                        format!(
                            "`{}` must not be empty: give a shell command, or leave the hook out",
                            dotted(&at)
                        ),
                    );
                    None
                }
                TomlValue::String(command) => Some(command.clone()),
                other => {
                    self.wrong_type(&at, "a string (a shell command)", other);
                    None
                }
            }
        };
        Hooks {
            after_create: hook("after_create"),
            before_run: hook("before_run"),
            after_run: hook("after_run"),
            before_remove: hook("before_remove"),
        }
    }

    /// A string member that must be one of a closed set of `names`.
    pub(super) fn closed<T>(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        key: &str,
        from_name: fn(&str) -> Option<T>,
        names: impl Iterator<Item = &'static str> + Clone,
    ) -> Option<T> {
        let text = self.string_member(table, at, key, false)?;
        if let Some(value) = from_name(&text) {
            return Some(value);
        }
        let at = at.key(key);
        let hint = did_you_mean(&text, names.clone())
            .map(|close| format!("; did you mean `{close}`?"))
            .unwrap_or_default();
        self.collector.error(
            codes::INVALID_VALUE,
            &at,
            format!(
                "`{}` must be {}, found `{}`{hint}",
                dotted(&at),
                one_of(names),
                text.escape_debug()
            ),
        );
        None
    }

    /// A duration in whole seconds, from `min` to [`MAX_SECONDS`].
    fn seconds_whole(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        key: &str,
        min: u64,
    ) -> Option<u64> {
        self.whole(table, at, key, min..=MAX_SECONDS, &seconds_from(min))
    }

    /// An integer in `range`; `expected` says what is expected, for messages. A float
    /// is a wrong type (these are whole numbers), an integer outside `range` a wrong
    /// value.
    pub(super) fn whole(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        key: &str,
        range: RangeInclusive<u64>,
        expected: &str,
    ) -> Option<u64> {
        let value = table.get(key)?;
        let at = at.key(key);
        match value {
            TomlValue::Integer(n) => match u64::try_from(*n) {
                Ok(n) if range.contains(&n) => Some(n),
                _ => {
                    self.collector.error(
                        codes::INVALID_VALUE,
                        &at,
                        format!("`{}` must be {expected}, found {n}", dotted(&at)),
                    );
                    None
                }
            },
            TomlValue::Float(f) => {
                self.collector.error(
                    codes::INVALID_TYPE,
                    &at,
                    format!("`{}` must be {expected}, found {f:?}", dotted(&at)),
                );
                None
            }
            other => {
                self.wrong_type(&at, expected, other);
                None
            }
        }
    }
}
