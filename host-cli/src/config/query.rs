//! Questions the commands ask of a checked config: which automations run, which have
//! no agent, which triggers to resolve, how to talk to extensions, and diagnostics
//! located in the file.

use std::path::Path;

use curupira_client::{Limits, Options, Timeouts};
use curupira_diagnostics::{Anchor, Diagnostic, JsonPointer, Severity, did_you_mean};

use super::codes;
use super::model::{
    AgentPolicy, Automation, Cleanup, Config, Settings, TriggerRef, WorkspaceMode, WorkspacePolicy,
};
use curupira_orchestrator::agent::AgentLimits;
use curupira_workspace::WorkspaceSpec;

/// `run --automation NAME` names an automation the config does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`--automation {name}`: `{file}` has no automation called `{name}` (it has: {}){}",
    if .known.is_empty() { "none".to_owned() } else { .known.join(", ") },
    .suggestion.as_ref().map(|close| format!("; did you mean `{close}`?")).unwrap_or_default()
)]
pub struct UnknownAutomation {
    /// The name given.
    pub name: String,
    /// The config file, as the user named it.
    pub file: String,
    /// The config's automations, in file order.
    pub known: Vec<String>,
    /// The closest known name, when one is close enough.
    pub suggestion: Option<String>,
}

impl Settings {
    /// The options every extension's client is created with: `[settings.timeouts]`
    /// and `[settings.protocol] max_frame_bytes` (the client's defaults for the rest).
    /// The one place the config's model becomes the client's.
    pub fn client_options(&self) -> Options {
        Options {
            timeouts: Timeouts {
                initialize: self.timeouts.initialize,
                request: self.timeouts.request,
                shutdown: self.timeouts.shutdown,
            },
            limits: Limits {
                max_frame_bytes: self.max_frame_bytes,
                ..Limits::default()
            },
        }
    }
}

impl AgentPolicy {
    /// The time limits of one attempt: the one place the config's agent policy becomes
    /// the agent runner's.
    pub fn limits(&self) -> AgentLimits {
        AgentLimits {
            timeout: self.timeout,
            stall: self.stall,
            kill_grace: self.kill_grace,
        }
    }
}

impl WorkspacePolicy {
    /// The workspace crate's spec for a config in `repo_dir`: the one place the
    /// config's workspace policy becomes it (with the three conversions below).
    pub fn spec(&self, repo_dir: &Path) -> WorkspaceSpec {
        WorkspaceSpec {
            mode: self.mode.into(),
            repo_dir: repo_dir.to_owned(),
            root: self.root.clone(),
            base: self.base.clone(),
            cleanup: self.cleanup.into(),
            hook_timeout: self.hook_timeout,
            hooks: self.hooks.clone(),
        }
    }
}

impl From<WorkspaceMode> for curupira_workspace::WorkspaceMode {
    fn from(mode: WorkspaceMode) -> Self {
        match mode {
            WorkspaceMode::Shared => Self::Shared,
            WorkspaceMode::Worktree => Self::Worktree,
        }
    }
}

impl From<Cleanup> for curupira_workspace::Cleanup {
    fn from(cleanup: Cleanup) -> Self {
        match cleanup {
            Cleanup::OnSuccess => Self::OnSuccess,
            Cleanup::Always => Self::Always,
            Cleanup::Never => Self::Never,
        }
    }
}

impl Config {
    /// A diagnostic about this config file at `path`, located by the file's source map
    /// (a pointer that is not in the file, such as a default-filled argument, is
    /// located at its nearest enclosing member).
    pub fn diagnostic(
        &self,
        severity: Severity,
        code: &'static str,
        path: &JsonPointer,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(severity, code, self.file.clone(), path.clone(), message).locate(
            &self.source_map,
            &self.text,
            Anchor::Value,
        )
    }

    /// A diagnostic about `span` (byte range) inside the string value at `path`, when
    /// the file spells that string literally between single quotes or double quotes
    /// without escapes; otherwise about the whole value.
    pub fn diagnostic_in_string(
        &self,
        severity: Severity,
        code: &'static str,
        path: &JsonPointer,
        value: &str,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(severity, code, self.file.clone(), path.clone(), message).locate_in_string(
            &self.source_map,
            &self.text,
            value,
            span,
        )
    }

    /// The pointer of the table that configures the extension called `name`:
    /// `/plugins/NAME` for a `[plugins.NAME]` entry, else `/extensions/NAME`.
    pub fn extension_at(&self, name: &str) -> JsonPointer {
        if let Some(extension) = self.extensions.iter().find(|e| e.name == name) {
            return extension.pointer();
        }
        let extension = JsonPointer::root().key("extensions").key(name);
        let plugin = JsonPointer::root().key("plugins").key(name);
        if self.source_map.get(&extension).is_none() && self.source_map.get(&plugin).is_some() {
            plugin
        } else {
            extension
        }
    }

    /// Every automation whose `trigger` could be read, usable or not, in file order,
    /// with that trigger: what [`crate::resolve`] resolves.
    pub fn triggers(&self) -> Vec<(&str, &TriggerRef)> {
        self.order
            .iter()
            .filter_map(|name| match self.automation(name) {
                Some(automation) => Some((name.as_str(), &automation.trigger)),
                None => self
                    .unusable
                    .automations
                    .iter()
                    .find(|a| &a.name == name)
                    .and_then(|a| a.trigger.as_ref())
                    .map(|trigger| (name.as_str(), trigger)),
            })
            .collect()
    }

    /// The usable automations `names` selects (`run --automation NAME`…), in file
    /// order; every usable automation when `names` is empty. A name that is not in the
    /// config selects nothing: [`Config::check_selection`] reports it.
    pub fn selected(&self, names: &[String]) -> Vec<&Automation> {
        self.automations
            .iter()
            .filter(|a| names.is_empty() || names.contains(&a.name))
            .collect()
    }

    /// An error for the first of `names` that is not an automation of this config,
    /// with a did-you-mean.
    pub fn check_selection(&self, names: &[String]) -> Result<(), UnknownAutomation> {
        match names.iter().find(|name| !self.order.contains(name)) {
            None => Ok(()),
            Some(name) => Err(UnknownAutomation {
                name: name.clone(),
                file: self.file.clone(),
                suggestion: did_you_mean(name, self.order.iter().map(String::as_str))
                    .map(str::to_owned),
                known: self.order.clone(),
            }),
        }
    }

    /// One `config/agent-not-runnable` error for each agent program of the automations
    /// that `names` selects (every one when empty) that cannot be run, by the rule the
    /// spawn uses ([`curupira_orchestrator::agent::check_agent_program`]). Located at the command that
    /// sets it (the automation's own, else `[settings.agent]`); a program several
    /// automations share is reported once.
    pub fn unrunnable_agents(&self, names: &[String]) -> Vec<Diagnostic> {
        let mut reported = Vec::new();
        let mut out = Vec::new();
        for automation in &self.automations {
            if !(names.is_empty() || names.contains(&automation.name)) {
                continue;
            }
            if let Some(agent) = &automation.provider {
                let at = self
                    .written_at(&automation.name, "agent", "provider")
                    .unwrap_or_else(|| settings_key("agent", "provider"));
                if !reported.contains(&at) {
                    out.extend(self.provider_problems(&automation.name, agent, &at));
                    reported.push(at);
                }
                continue;
            }
            let Some(command) = &automation.agent else {
                continue;
            };
            let at = self
                .written_at(&automation.name, "agent", "command")
                .unwrap_or_else(|| settings_key("agent", "command"));
            if reported.contains(&at) {
                continue;
            }
            if let Err(reason) =
                curupira_orchestrator::agent::check_agent_program(command, &self.dir)
            {
                out.push(self.diagnostic(
                    Severity::Error,
                    codes::AGENT_NOT_RUNNABLE,
                    &at.index(0),
                    format!(
                        "automation `{}` cannot start its agent: {reason}",
                        automation.name
                    ),
                ));
                reported.push(at);
            }
        }
        out
    }

    /// A provider's program: on `PATH` (else `config/agent-not-runnable`), and its
    /// version: OpenCode's must be readable and 1.x or later when `api` is `auto` (the
    /// reference host refuses it otherwise: `config/agent-version`, an error); another
    /// CLI whose `--version` shows no `x.y.z` gets a `config/agent-version` warning.
    fn provider_problems(
        &self,
        automation: &str,
        agent: &curupira_orchestrator::plan::ProviderAgent,
        at: &JsonPointer,
    ) -> Vec<Diagnostic> {
        let provider = agent.profile.provider();
        let command = [provider.program().to_owned()];
        let program = match curupira_orchestrator::agent::check_agent_program(&command, &self.dir) {
            Ok(program) => program,
            Err(reason) => {
                return vec![self.diagnostic(
                    Severity::Error,
                    codes::AGENT_NOT_RUNNABLE,
                    at,
                    format!(
                        "automation `{automation}` cannot start its agent (provider {provider}): \
                         {reason}"
                    ),
                )];
            }
        };
        let output = curupira_orchestrator::agent::program_version(&program, &self.dir);
        let opencode_auto = provider == curupira_agents::Provider::Opencode
            && agent.profile.opencode_api() == curupira_agents::OpencodeApi::Auto;
        match output {
            Ok(output) if opencode_auto => {
                match curupira_agents::opencode_api(&program.display().to_string(), &output) {
                    Ok(_) => Vec::new(),
                    Err(error) => vec![self.diagnostic(
                        Severity::Error,
                        codes::AGENT_VERSION,
                        at,
                        format!("automation `{automation}`: {error}"),
                    )],
                }
            }
            Ok(output) if has_version(&output) => Vec::new(),
            Ok(output) => vec![self.diagnostic(
                Severity::Warning,
                codes::AGENT_VERSION_UNKNOWN,
                at,
                format!(
                    "automation `{automation}`: `{} --version` shows no x.y.z version ({:?}); \
                     the command line is the one curupira 0.4.0 uses, check that this {provider} \
                     takes it",
                    program.display(),
                    output.trim()
                ),
            )],
            Err(reason) => vec![self.diagnostic(
                Severity::Warning,
                codes::AGENT_VERSION_UNKNOWN,
                at,
                format!("automation `{automation}`: {reason}"),
            )],
        }
    }

    /// For the automations that `names` selects (every one when empty): a
    /// `config/worktree-unavailable` error, once, when one runs in worktree mode and
    /// [`check_worktree_mode`](curupira_workspace::check_worktree_mode) fails, located at
    /// the `mode` that chose worktrees; and a
    /// `config/shared-workspace` warning for each that may run several agents at once
    /// in the shared folder.
    pub fn workspace_problems(&self, names: &[String]) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut worktree_checked = false;
        for automation in &self.automations {
            if !(names.is_empty() || names.contains(&automation.name)) {
                continue;
            }
            let at = JsonPointer::root().key("automations").key(&automation.name);
            match automation.workspace_policy.mode {
                WorkspaceMode::Worktree if !worktree_checked => {
                    worktree_checked = true;
                    if let Err(reason) = curupira_workspace::check_worktree_mode(&self.dir) {
                        // At the `mode` that chose worktrees (the automation's own, or
                        // `[settings.workspace]`'s).
                        let mode = self.written_at(&automation.name, "workspace", "mode");
                        out.push(self.diagnostic(
                            Severity::Error,
                            codes::WORKTREE_UNAVAILABLE,
                            mode.as_ref().unwrap_or(&at),
                            format!(
                                "automation `{}` runs its agents in Git worktrees, but {reason}",
                                automation.name
                            ),
                        ));
                    }
                }
                WorkspaceMode::Shared if automation.agent_policy.concurrency() > 1 => {
                    out.push(self.diagnostic(
                        Severity::Warning,
                        codes::SHARED_WORKSPACE,
                        &at,
                        format!(
                            "automation `{}` may run {} agents at once in the shared folder, \
                             where they would work on the same files; set \
                             `workspace = {{ mode = \"worktree\" }}` to give each task its own",
                            automation.name,
                            automation.agent_policy.concurrency()
                        ),
                    ));
                }
                _ => {}
            }
        }
        out
    }

    /// A `config/ledger-unreadable` error when the enabled ledger exists but would not
    /// open ([`curupira_ledger::Ledger::check_existing`]: read, never written), at
    /// `[settings.ledger] path` when the config sets it. `validate` asks it; `run`
    /// fails with the same sentence when it opens the ledger.
    pub fn ledger_problems(&self) -> Vec<Diagnostic> {
        let ledger = &self.settings.ledger;
        if !ledger.enabled {
            return Vec::new();
        }
        match curupira_ledger::Ledger::check_existing(&ledger.path) {
            Ok(_) => Vec::new(),
            Err(error) => {
                let path = settings_key("ledger", "path");
                let at = if self.source_map.get(&path).is_some() {
                    path
                } else {
                    JsonPointer::root()
                };
                vec![self.diagnostic(
                    Severity::Error,
                    codes::LEDGER_UNREADABLE,
                    &at,
                    error.to_string(),
                )]
            }
        }
    }

    /// Where `TABLE.KEY` of `automation` is written: its own `TABLE = { … }`, else
    /// `[settings.TABLE]`; `None` when neither writes it.
    fn written_at(&self, automation: &str, table: &str, key: &str) -> Option<JsonPointer> {
        let own = JsonPointer::root()
            .key("automations")
            .key(automation)
            .key(table)
            .key(key);
        [own, settings_key(table, key)]
            .into_iter()
            .find(|at| self.source_map.get(at).is_some())
    }

    /// One `config/unknown-base` error for each worktree-mode automation whose `base`
    /// (default `HEAD`) names no commit now (`git rev-parse`), located at the `base`
    /// that sets it (the automation's own, else `[settings.workspace]`'s, else the
    /// automation); a base several automations share is looked up and reported once.
    /// Ask it only when worktree mode is available (no `config/worktree-unavailable`
    /// from [`workspace_problems`](Self::workspace_problems), which has looked at the
    /// repository already). `validate` asks it; `run` resolves the bases anyway and
    /// fails such an automation before its first poll.
    pub fn base_problems(&self) -> Vec<Diagnostic> {
        let worktrees = self
            .automations
            .iter()
            .filter(|automation| automation.workspace_policy.mode == WorkspaceMode::Worktree);
        let mut looked_up: Vec<&Option<String>> = Vec::new();
        let mut out = Vec::new();
        for automation in worktrees {
            let policy = &automation.workspace_policy;
            if looked_up.contains(&&policy.base) {
                continue;
            }
            looked_up.push(&policy.base);
            let Err(error) = curupira_workspace::resolve_base(&policy.spec(&self.dir)) else {
                continue;
            };
            let at = self
                .written_at(&automation.name, "workspace", "base")
                .unwrap_or_else(|| JsonPointer::root().key("automations").key(&automation.name));
            out.push(self.diagnostic(
                Severity::Error,
                codes::UNKNOWN_BASE,
                &at,
                format!(
                    "automation `{}` cannot make worktrees: {error}",
                    automation.name
                ),
            ));
        }
        out
    }

    /// One `config/missing-agent` error for each automation that `names` selects
    /// (every one when `names` is empty), usable or not, that has no agent command, in
    /// file order. An automation whose agent could not be read is not reported again.
    pub fn missing_agents(&self, names: &[String]) -> Vec<Diagnostic> {
        self.order
            .iter()
            .filter(|name| names.is_empty() || names.contains(name))
            .filter(|name| match self.automation(name) {
                Some(automation) => {
                    automation.agent.is_none()
                        && automation.provider.is_none()
                        && !self.unusable.agent
                }
                None => self
                    .unusable
                    .automations
                    .iter()
                    .any(|a| &a.name == *name && a.without_agent),
            })
            .map(|name| {
                self.diagnostic(
                    Severity::Error,
                    codes::MISSING_AGENT,
                    &JsonPointer::root()
                        .key("automations")
                        .key(name)
                        .key("agent")
                        .key("command"),
                    format!(
                        "automation `{name}` has no agent command: set `command` in \
                         `[settings.agent]` or `agent = {{ command = [...] }}` in the automation"
                    ),
                )
            })
            .collect()
    }
}

/// `/settings/TABLE/KEY`.
fn settings_key(table: &str, key: &str) -> JsonPointer {
    JsonPointer::root().key("settings").key(table).key(key)
}

/// Whether `output` holds an `x.y.z` version.
fn has_version(output: &str) -> bool {
    !matches!(
        curupira_agents::opencode_api("", output),
        Err(curupira_agents::VersionError::Unreadable { .. })
    )
}
