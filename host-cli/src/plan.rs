//! `curupira.toml` turned into the orchestrator's plan: what the config resolves to
//! ([`crate::resolve`]), checked for what a run needs, then made into plain data
//! ([`curupira_orchestrator::Plan`]) that the engine runs without knowing the file.

use std::collections::HashMap;
use std::path::Path;

use curupira_diagnostics::{JsonPointer, Report, Severity};
use curupira_orchestrator::plan::{self, AgentPolicy, ExtensionPlan, Launch};

use curupira_workspace::repository::{BaseCheckout, Repository, TaskCheckout};

use crate::config::{self, Automation, Config, Probe, Unfilled, codes};
use crate::resolve::{self, PlannedAutomation, PlannedExtension, resolve};

/// The plan `run` follows, and what stands in its way, worked out before anything
/// starts (after the config file itself): every extension's manifest and every
/// automation's trigger ([`resolve()`]), and, unless `dry_run`, that each automation of
/// `selection` (all when empty) has an agent command that can start and a workspace it
/// can use. No extension is started here; that, with the schema and
/// `trigger/validate` calls, is [`crate::preflight::report`]'s work. A partial config
/// (see [`crate::config::Loaded::partial`]) is planned as far as it goes, so the
/// report lists every problem; the plan is `None` when the report has an error or the
/// config is not complete.
pub fn plan_run(
    config: &Config,
    host_exe: &Path,
    dry_run: bool,
    selection: &[String],
) -> (Option<resolve::Plan>, Report) {
    let (plan, mut report) = resolve(config, host_exe);
    for automation in config.selected(selection) {
        let Some(repository) = reference_repository(config, automation) else {
            continue;
        };
        if let Err(error) = base_checkout(repository) {
            report.push(
                config.diagnostic(
                    Severity::Error,
                    codes::INVALID_VALUE,
                    &JsonPointer::root()
                        .key("repositories")
                        .key(&repository.alias),
                    format!("repository `{}`: {error}", repository.alias),
                ),
            );
        }
        if let (Some(error), false) = (&automation.agent_error, dry_run) {
            // The reference host fails each of its tasks at dispatch; this one says so
            // before anything starts.
            report.push(config.diagnostic(
                Severity::Error,
                codes::MISSING_AGENT,
                &JsonPointer::root().key("automations").key(&automation.name),
                format!("automation `{}` has no agent: {error}", automation.name),
            ));
        }
    }
    if !dry_run {
        report.extend(config.missing_agents(selection));
        report.extend(config.unrunnable_agents(selection));
        report.extend(config.workspace_problems(selection));
    }
    let plan = (config.is_complete() && !report.has_errors()).then_some(plan);
    (plan, report)
}

/// The value of `${repository}`: `settings.repository`, else the `owner/name` of the
/// config folder's `origin` remote.
pub fn repository(config: &Config) -> Result<String, String> {
    match &config.settings.repository {
        Some(repository) => Ok(repository.clone()),
        None => curupira_workspace::forge::forge_identity_of_checkout(&config.dir)
            .map_err(|err| err.to_string()),
    }
}

/// The orchestrator's plan for the automations of `selection` (all when empty) that
/// `resolved` resolved, in the config's order, with every extension `resolved` holds.
pub fn orchestrator_plan(
    config: &Config,
    resolved: &resolve::Plan,
    selection: &[String],
    cron: &crate::cron::CronContext,
) -> plan::Plan {
    let default_zone = config
        .settings
        .reference
        .as_ref()
        .and_then(|reference| reference.timezone.clone());
    plan::Plan {
        dir: config.dir.clone(),
        repository: repository(config),
        max_concurrent: usize::try_from(config.global_max_concurrent())
            .unwrap_or(1)
            .max(1),
        client: config::client_options(&config.settings),
        client_info: crate::host_info(),
        extensions: resolved
            .extensions
            .iter()
            .map(extension_plan)
            .chain(
                resolved
                    .automations
                    .iter()
                    .filter(|planned| crate::cron::is_cron_extension(&planned.extension))
                    .map(|planned| cron.extension_plan(&planned.name, default_zone.clone())),
            )
            .collect(),
        automations: {
            // One handle per repository, shared by its automations: cloned, set up and
            // fetched once per run.
            let mut repositories: HashMap<String, Repository> = HashMap::new();
            config
                .selected(selection)
                .into_iter()
                .filter_map(|automation| {
                    let planned = resolved.automation(&automation.name)?;
                    let mut plan = automation_plan(config, automation, planned);
                    if crate::cron::is_cron_extension(&planned.extension) {
                        cron_automation(config, &mut plan);
                    }
                    if let Some(repository) = reference_repository(config, automation) {
                        let handle = match repositories.get(&repository.alias) {
                            Some(handle) => handle.clone(),
                            None => {
                                let handle = Repository::new(base_checkout(repository).ok()?);
                                repositories.insert(repository.alias.clone(), handle.clone());
                                handle
                            }
                        };
                        plan.prompt_syntax = plan::PromptSyntax::Jinja;
                        plan.repository = Some(repository.identity());
                        plan.configuration_repository = Some(repository.alias.clone());
                        plan.checkout = Some(plan::RepositoryCheckout {
                            repository: handle,
                            checkout: match automation.checkout {
                                config::Checkout::Main => TaskCheckout::Main,
                                config::Checkout::Worktree => TaskCheckout::Worktree {
                                    trigger_type: reference_trigger_type(
                                        &planned.extension,
                                        &planned.trigger_type,
                                    ),
                                },
                            },
                        });
                    }
                    Some(plan)
                })
                .collect()
        },
        // Logs are found through the ledger's attempt rows: without a ledger, none.
        logs: config.settings.ledger.enabled.then(|| plan::LogPolicy {
            dir: config.settings.ledger.state_dir().join(LOGS_FOLDER),
            max_bytes: config.settings.ledger.log_max_bytes,
        }),
    }
}

/// An automation's `trigger_type` as the reference host writes it in task keys and
/// worktree names: `ALIAS/type`, or `cron` for the built-in one.
pub fn reference_trigger_type(extension: &str, trigger_type: &str) -> String {
    if crate::cron::is_cron_extension(extension) {
        trigger_type.to_owned()
    } else {
        format!("{extension}/{trigger_type}")
    }
}

/// What a `cron` automation has of its own: a tick's id is its due time; one tick at
/// a time (it never runs beside itself); `[settings.polling]
/// cron_poll_interval_seconds` between its rounds when given (the reference host
/// 0.4.0 reads the key but polls cron at `poll_interval_seconds`, so that is the
/// default).
fn cron_automation(config: &Config, plan: &mut plan::Automation) {
    plan.identity = plan::ItemIdentity::Pair(curupira_cron::TICK_KEY.to_owned());
    plan.agent_policy.cap = Some(1);
    plan.polling.batch_size = 1;
    if let Some(interval) = config
        .settings
        .reference
        .as_ref()
        .and_then(|reference| reference.cron_poll_interval)
    {
        // 0 (which the reference accepts) would poll without a pause.
        plan.polling.interval = interval.max(std::time::Duration::from_secs(1));
    }
}

/// The `[repositories.<alias>]` of a reference-form automation.
pub fn reference_repository<'c>(
    config: &'c Config,
    automation: &Automation,
) -> Option<&'c config::Repository> {
    let alias = automation.repository.as_deref()?;
    config.settings.reference.as_ref()?.repository(alias)
}

/// The workspace crate's base checkout of a repository of the reference form.
fn base_checkout(
    repository: &config::Repository,
) -> Result<BaseCheckout, curupira_workspace::repository::RepositoryError> {
    let base = BaseCheckout::new(repository.remote.clone(), repository.checkout.clone())?;
    Ok(match &repository.setup_script {
        Some(script) => base.with_setup_script(script.clone()),
        None => base,
    })
}

/// The attempts' logs' folder in the state folder.
pub const LOGS_FOLDER: &str = "logs";

fn extension_plan(planned: &PlannedExtension) -> ExtensionPlan {
    ExtensionPlan {
        name: planned.name.clone(),
        launch: Launch::Process(planned.launch.clone()),
        persistent: planned.persistent,
        trigger_types: planned
            .trigger_types()
            .into_iter()
            .map(str::to_owned)
            .collect(),
    }
}

fn automation_plan(
    config: &Config,
    automation: &Automation,
    planned: &PlannedAutomation,
) -> plan::Automation {
    let policy = &automation.agent_policy;
    plan::Automation {
        name: automation.name.clone(),
        extension: planned.extension.clone(),
        trigger_type: planned.trigger_type.clone(),
        prompt: automation.prompt.clone(),
        arguments: automation.arguments.clone(),
        polling: plan::Polling {
            batch_size: automation.polling.batch_size,
            interval: automation.polling.interval,
        },
        agent: automation.agent.clone().unwrap_or_default(),
        provider: automation
            .provider
            .as_ref()
            .map(|agent| plan::ProviderAgent {
                profile: agent.profile.clone(),
                resume: agent.resume,
                continue_prompt: agent.continue_prompt.clone(),
            }),
        agent_policy: AgentPolicy {
            cap: policy.cap,
            limits: config::agent_limits(policy),
            retries: policy.retries,
            retry_backoff: policy.retry_backoff,
            max_retry_backoff: policy.max_retry_backoff,
        },
        workspace: config::workspace_spec(&automation.workspace_policy, &config.dir),
        unfilled: match automation.unfilled {
            Unfilled::Warn => plan::Unfilled::Warn,
            Unfilled::Fail => plan::Unfilled::Fail,
        },
        prompt_syntax: plan::PromptSyntax::Placeholders,
        repository: None,
        configuration_repository: None,
        checkout: None,
        identity: plan::ItemIdentity::Pairs,
    }
}
