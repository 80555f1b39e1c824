//! The configuration as this host runs it: [`curupira_config`]'s checked model (re-exported
//! here, so `crate::config::Config` is the one model), plus what only a running host can
//! ask of it — whether agent programs start, whether Git can make worktrees, whether the
//! ledger opens ([`Probe`]) — and the conversions from the config's types to those of the
//! crates that run them (the client's options, the orchestrator's limits, the workspace's
//! spec).

use std::path::Path;

pub use curupira_config::*;

use curupira_client::{Limits, Options};
use curupira_diagnostics::{Diagnostic, JsonPointer, Severity};
use curupira_orchestrator::agent::AgentLimits;
use curupira_workspace::WorkspaceSpec;

/// The client options every extension's client is created with: `[settings.timeouts]`
/// and `[settings.protocol] max_frame_bytes` (the client's defaults for the rest). The
/// one place the config's model becomes the client's.
pub fn client_options(settings: &Settings) -> Options {
    Options {
        timeouts: curupira_client::Timeouts {
            initialize: settings.timeouts.initialize,
            request: settings.timeouts.request,
            shutdown: settings.timeouts.shutdown,
        },
        limits: Limits {
            max_frame_bytes: settings.max_frame_bytes,
            ..Limits::default()
        },
    }
}

/// The time limits of one attempt: the one place the config's agent policy becomes the
/// agent runner's.
pub fn agent_limits(policy: &AgentPolicy) -> AgentLimits {
    AgentLimits {
        timeout: policy.timeout,
        stall: policy.stall,
        kill_grace: policy.kill_grace,
    }
}

/// The workspace crate's spec for a config in `repo_dir`: the one place the config's
/// workspace policy becomes it.
pub fn workspace_spec(policy: &WorkspacePolicy, repo_dir: &Path) -> WorkspaceSpec {
    WorkspaceSpec {
        mode: match policy.mode {
            WorkspaceMode::Shared => curupira_workspace::WorkspaceMode::Shared,
            WorkspaceMode::Worktree => curupira_workspace::WorkspaceMode::Worktree,
        },
        repo_dir: repo_dir.to_owned(),
        root: policy.root.clone(),
        base: policy.base.clone(),
        cleanup: workspace_cleanup(policy.cleanup),
        hook_timeout: policy.hook_timeout,
        hooks: curupira_workspace::Hooks {
            after_create: policy.hooks.after_create.clone(),
            before_run: policy.hooks.before_run.clone(),
            after_run: policy.hooks.after_run.clone(),
            before_remove: policy.hooks.before_remove.clone(),
        },
    }
}

/// The workspace crate's cleanup rule for the config's `cleanup`.
pub fn workspace_cleanup(cleanup: Cleanup) -> curupira_workspace::Cleanup {
    match cleanup {
        Cleanup::OnSuccess => curupira_workspace::Cleanup::OnSuccess,
        Cleanup::Always => curupira_workspace::Cleanup::Always,
        Cleanup::Never => curupira_workspace::Cleanup::Never,
    }
}

/// What the ledger's writer thread prunes the attempt history to.
pub fn retention(ledger: &LedgerSettings) -> curupira_ledger::Retention {
    curupira_ledger::Retention {
        max_age: Some(ledger.history_age()),
        max_per_task: Some(ledger.history_per_task),
    }
}

/// The questions about a checked config that need the machine: programs on `PATH`, Git,
/// the ledger's file. `validate` asks them all; `run` asks those of what it runs.
pub trait Probe {
    /// One `config/agent-not-runnable` error for each agent program of the automations
    /// that `names` selects (every one when empty) that cannot be run, by the rule the
    /// spawn uses ([`curupira_orchestrator::agent::check_agent_program`]). Located at the
    /// command that sets it (the automation's own, else `[settings.agent]`); a program
    /// several automations share is reported once.
    fn unrunnable_agents(&self, names: &[String]) -> Vec<Diagnostic>;
    /// For the automations that `names` selects (every one when empty): a
    /// `config/worktree-unavailable` error, once, when one runs in worktree mode and
    /// [`check_worktree_mode`](curupira_workspace::check_worktree_mode) fails, located at
    /// the `mode` that chose worktrees; and a `config/shared-workspace` warning for each
    /// that may run several agents at once in the shared folder.
    fn workspace_problems(&self, names: &[String]) -> Vec<Diagnostic>;
    /// A `config/ledger-unreadable` error when the enabled ledger exists but would not
    /// open ([`curupira_ledger::Ledger::check_existing`]: read, never written), at
    /// `[settings.ledger] path` when the config sets it. `validate` asks it; `run` fails
    /// with the same sentence when it opens the ledger.
    fn ledger_problems(&self) -> Vec<Diagnostic>;
    /// One `config/unknown-base` error for each worktree-mode automation whose `base`
    /// (default `HEAD`) names no commit now (`git rev-parse`), located at the `base`
    /// that sets it (the automation's own, else `[settings.workspace]`'s, else the
    /// automation); a base several automations share is looked up and reported once.
    /// Ask it only when worktree mode is available (no `config/worktree-unavailable`
    /// from [`workspace_problems`](Self::workspace_problems)). `run` resolves the bases
    /// anyway and fails such an automation before its first poll.
    fn base_problems(&self) -> Vec<Diagnostic>;
}

impl Probe for Config {
    fn unrunnable_agents(&self, names: &[String]) -> Vec<Diagnostic> {
        let mut reported = Vec::new();
        let mut out = Vec::new();
        for automation in &self.automations {
            if !(names.is_empty() || names.contains(&automation.name)) {
                continue;
            }
            if let Some(agent) = &automation.provider {
                let at = self.agent_at(automation, "provider");
                if !reported.contains(&at) {
                    // The reference host runs no `--version` but OpenCode's (at dispatch):
                    // for its form, neither does this one.
                    let version = automation.form == Form::Ours
                        || agent.profile.provider() == curupira_agents::Provider::Opencode;
                    out.extend(provider_problems(
                        self,
                        &automation.name,
                        agent,
                        &at,
                        version,
                    ));
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

    fn workspace_problems(&self, names: &[String]) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut worktree_checked = false;
        for automation in &self.automations {
            // A reference-form automation works in its repository's checkout, not in
            // the config's folder.
            if !(names.is_empty() || names.contains(&automation.name))
                || automation.form == Form::Reference
            {
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

    fn ledger_problems(&self) -> Vec<Diagnostic> {
        let ledger = &self.settings.ledger;
        if !ledger.enabled {
            return Vec::new();
        }
        match curupira_ledger::Ledger::check_existing(&ledger.path) {
            Ok(_) => Vec::new(),
            Err(error) => {
                let path = settings_key("ledger", "path");
                let at = if self.is_written(&path) {
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

    fn base_problems(&self) -> Vec<Diagnostic> {
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
            let Err(error) = curupira_workspace::resolve_base(&workspace_spec(policy, &self.dir))
            else {
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
}

/// A provider's program: on `PATH` (else `config/agent-not-runnable`), and its
/// version: OpenCode's must be readable and 1.x or later when `api` is `auto` (the
/// reference host refuses it otherwise: `config/agent-version`, an error); another CLI
/// whose `--version` shows no `x.y.z` gets a `config/agent-version` warning.
fn provider_problems(
    config: &Config,
    automation: &str,
    agent: &ProviderAgent,
    at: &JsonPointer,
    version: bool,
) -> Vec<Diagnostic> {
    let provider = agent.profile.provider();
    let command = [provider.program().to_owned()];
    let program = match curupira_orchestrator::agent::check_agent_program(&command, &config.dir) {
        Ok(program) => program,
        Err(reason) => {
            return vec![config.diagnostic(
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
    if !version {
        return Vec::new();
    }
    let output = curupira_orchestrator::agent::program_version(&program, &config.dir);
    let opencode_auto = provider == curupira_agents::Provider::Opencode
        && agent.profile.opencode_api() == curupira_agents::OpencodeApi::Auto;
    match output {
        Ok(output) if opencode_auto => {
            match curupira_agents::opencode_api(&program.display().to_string(), &output) {
                Ok(_) => Vec::new(),
                Err(error) => vec![config.diagnostic(
                    Severity::Error,
                    codes::AGENT_VERSION,
                    at,
                    format!("automation `{automation}`: {error}"),
                )],
            }
        }
        Ok(output) if has_version(&output) => Vec::new(),
        Ok(output) => vec![config.diagnostic(
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
        Err(reason) => vec![config.diagnostic(
            Severity::Warning,
            codes::AGENT_VERSION_UNKNOWN,
            at,
            format!("automation `{automation}`: {reason}"),
        )],
    }
}

/// Whether `output` holds an `x.y.z` version.
fn has_version(output: &str) -> bool {
    !matches!(
        curupira_agents::opencode_api("", output),
        Err(curupira_agents::VersionError::Unreadable { .. })
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn check(text: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        check_bytes(text.as_bytes(), "curupira.toml", dir.path())
            .config
            .unwrap()
    }

    #[test]
    fn the_settings_give_the_client_options() {
        let config = check(
            "[settings.protocol]\nmax_frame_bytes = 1048576\n\n[settings.timeouts]\n\
             initialize = 2\nrequest = 3.5\nshutdown = 1\n\n\
             [automations.a]\ntrigger = \"t\"\nprompt = \"p\"\n",
        );
        let options = client_options(&config.settings);
        assert_eq!(
            options.timeouts,
            curupira_client::Timeouts {
                initialize: Duration::from_secs(2),
                request: Duration::from_millis(3500),
                shutdown: Duration::from_secs(1),
            }
        );
        assert_eq!(
            options.limits,
            Limits {
                max_frame_bytes: 1_048_576,
                ..Limits::default()
            }
        );
        let unset = check("[automations.a]\ntrigger = \"t\"\nprompt = \"p\"\n");
        assert_eq!(
            client_options(&unset.settings),
            Options::default(),
            "the config's defaults are the client's"
        );
    }

    /// The config crate writes its defaults as numbers (it depends on none of the crates
    /// that run them); they are the running crates' own.
    #[test]
    fn the_config_s_defaults_are_those_of_the_crates_that_run_them() {
        assert_eq!(
            Duration::from_secs(DEFAULT_KILL_GRACE_SECONDS),
            curupira_orchestrator::agent::DEFAULT_KILL_GRACE
        );
        assert_eq!(
            Duration::from_secs(DEFAULT_HOOK_TIMEOUT_SECONDS),
            curupira_workspace::DEFAULT_HOOK_TIMEOUT
        );
        assert_eq!(DEFAULT_WORKTREE_ROOT, curupira_workspace::DEFAULT_ROOT);
        assert_eq!(
            DEFAULT_LOG_MAX_BYTES,
            curupira_orchestrator::log::DEFAULT_MAX_BYTES
        );
        assert_eq!(BUILTINS, crate::builtin::NAMES);
    }

    #[test]
    fn retry_pauses_double_up_to_the_longest() {
        let policy = AgentPolicy::default();
        let delay = |policy: &AgentPolicy, retry| {
            curupira_orchestrator::dispatch::backoff(
                retry,
                policy.retry_backoff,
                policy.max_retry_backoff,
            )
        };
        let delays: Vec<u64> = (1..=8)
            .map(|retry| delay(&policy, retry).as_secs())
            .collect();
        assert_eq!(delays, [10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(delay(&policy, u32::MAX), Duration::from_secs(300));
        let none = AgentPolicy {
            retry_backoff: Duration::ZERO,
            ..policy
        };
        assert_eq!(delay(&none, 5), Duration::ZERO);
    }

    #[test]
    fn hooks_and_cleanup_reach_the_workspace_spec() {
        let config = check(
            "[settings.workspace]\nmode = \"worktree\"\ncleanup = \"always\"\n\
             hooks = { after_create = \"npm ci\", before_remove = \"git status\" }\n\n\
             [automations.a]\ntrigger = \"t\"\nprompt = \"p\"\n",
        );
        let spec = workspace_spec(&config.automations[0].workspace_policy, &config.dir);
        assert_eq!(spec.mode, curupira_workspace::WorkspaceMode::Worktree);
        assert_eq!(spec.cleanup, curupira_workspace::Cleanup::Always);
        assert_eq!(spec.hooks.after_create.as_deref(), Some("npm ci"));
        assert_eq!(spec.hooks.before_remove.as_deref(), Some("git status"));
        assert_eq!(spec.hooks.before_run, None);
        assert_eq!(spec.root, config.dir.join(DEFAULT_WORKTREE_ROOT));
    }
}
