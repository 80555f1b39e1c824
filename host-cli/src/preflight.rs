//! The pre-flight: everything `run` does before the first poll, reported as
//! diagnostics — the work behind `curupira validate` (SPEC section 7). Not to be
//! confused with [`crate::plan::plan_run`], which only resolves the plan `run` needs
//! (no extension is started), nor with the protocol's `trigger/validate`, one of the
//! calls made here.
//!
//! Checked, in one pass, every problem reported:
//!
//! 1. the config file and every extension manifest (`config/…`, `manifest/…`);
//!    trigger resolution; a missing agent command (`config/missing-agent`); a durable
//!    ledger that exists but would not open (`config/ledger-unreadable`);
//! 2. `${repository}`: an automation whose prompt uses it when no repository is known
//!    (`config/repository`);
//! 3. each extension used by an automation is started: `initialize` and `describe`
//!    (`config/extension-failed`, once per extension; `describe` not matching the
//!    manifest's `trigger_types` is `config/describe-mismatch`, a warning);
//! 4. each automation: `trigger/schema`, defaults, `trigger/validate` with the
//!    automation's configuration ([`curupira_orchestrator::runner::configuration`]). A rejection
//!    (`ok: false`, or a -32003 error reply) is `config/trigger-rejected`: the
//!    extension's sentence at `/automations/NAME/arguments`, or one diagnostic per
//!    listed error at that pointer + the error's path; any other failure (a reply
//!    that is no verdict, such as `{}`) is `config/trigger-failed`;
//! 5. once `trigger/schema` answered (even if `trigger/validate` then failed), prompt
//!    placeholders that no prompt field of the trigger and no host variable
//!    (`repository`, `automation`) fills: `config/unknown-placeholder`, a warning with
//!    a did-you-mean, located at the placeholder (in the config, or in the prompt
//!    file). A trigger that lists **no** prompt fields is taken not to know its fields
//!    in advance (`local-queue`'s come from each queue line), so only the placeholders
//!    that look like a misspelt host variable (`${automaton}`) are warned about there;
//! 6. every started extension is shut down; a failure there is
//!    `config/extension-failed`.
//!
//! The config file itself is checked by [`crate::config::load`]; [`report`] starts from
//! what of it could be read (complete or partial), so one run reports every problem.

use std::collections::HashSet;
use std::path::Path;

use curupira_diagnostics::{Diagnostic, JsonPointer, Position, Report, Severity, did_you_mean};
use curupira_jsonrpc::ErrorCode;
use curupira_protocol::{ValidationError, validation_errors};
use curupira_template::Template;
use curupira_template::jinja::{JinjaErrorKind, JinjaPrompt};

use crate::config::{Automation, Config, Form, Probe, codes};
use crate::resolve::{Plan, display_path, resolve};
use curupira_orchestrator::runner::{
    Extensions, Preparing, Rejection, Unprepared, prepare, repository_missing, uses_repository,
};

/// Steps 1 (after the config file itself) to 6: the manifests, the triggers and the
/// agents, then a conversation with every extension a usable, resolved automation
/// uses. `config` may be [partial](crate::config::Loaded::partial): every automation
/// and extension that is itself fine is checked all the way, whatever errors the
/// others have; only an error in the settings used to talk to extensions
/// (`repository`, `[settings.protocol]`, `[settings.timeouts]`) skips steps 2 to 6.
pub fn report(config: &Config, host_exe: &Path) -> Report {
    let (plan, mut report) = resolve(config, host_exe);
    report.extend(config.missing_agents(&[]));
    report.extend(
        config
            .unrunnable_agents(&[])
            .into_iter()
            .map(|diagnostic| as_the_reference_sees_it(config, diagnostic)),
    );
    let workspace = config.workspace_problems(&[]);
    // The bases are looked up only in a repository worktrees can be made of.
    let worktrees_usable = !workspace
        .iter()
        .any(|diagnostic| diagnostic.code == codes::WORKTREE_UNAVAILABLE);
    report.extend(workspace);
    report.extend(config.ledger_problems());
    if worktrees_usable {
        report.extend(config.base_problems());
    }
    if !config.unusable.connection {
        talk_to_extensions(config, &plan, &mut report);
    }
    report
}

/// A problem with a profile's agent program, which the reference host finds only when
/// a task starts (`spawn claude: No such file or directory`): a warning at `validate`
/// for a profile of the reference form, so that the verdict on the file stays the
/// reference's; `run` still refuses to start on it.
fn as_the_reference_sees_it(config: &Config, mut diagnostic: Diagnostic) -> Diagnostic {
    let profile = diagnostic.path.as_str().starts_with("/agents/profiles/");
    if config.form == Form::Reference && profile && diagnostic.is_error() {
        diagnostic.severity = Severity::Warning;
        diagnostic.message.push_str(
            "; the reference host accepts this file and fails each task at dispatch, and \
             `curupira run` refuses to start",
        );
    }
    diagnostic
}

/// Steps 2 to 6: talks to the extensions of the automations `plan` resolved.
fn talk_to_extensions(config: &Config, plan: &Plan, report: &mut Report) {
    let repository = crate::plan::repository(config);
    let orchestrated =
        crate::plan::orchestrator_plan(config, plan, &[], &crate::cron::CronContext::in_memory());
    let mut extensions = Extensions::new(&orchestrated);
    let mut reported_extensions = HashSet::new();
    for automation in &config.automations {
        let Some(planned) = orchestrated.automation(&automation.name) else {
            continue;
        };
        let at = JsonPointer::root().key("automations").key(&automation.name);
        let template = Template::parse(&automation.prompt);
        // The reference form's repository is its table's: the extension gets its alias.
        let sent_repository = match automation.form {
            Form::Reference => automation.repository.as_deref().ok_or(""),
            Form::Ours => repository.as_deref().map_err(|_| ""),
        };
        if let (Form::Ours, true, Err(reason)) =
            (automation.form, uses_repository(&template), &repository)
        {
            let pointer = prompt_pointer(automation, &at);
            report.push(config.diagnostic(
                Severity::Error,
                codes::REPOSITORY,
                &pointer,
                repository_missing(&automation.name, reason),
            ));
        }
        let ready = match extensions.ready(&planned.extension) {
            Ok(ready) => ready,
            Err(error) => {
                if reported_extensions.insert(planned.extension.clone()) {
                    report.push(extension_diagnostic(
                        config,
                        Severity::Error,
                        codes::EXTENSION_FAILED,
                        &planned.extension,
                        error.to_string(),
                    ));
                }
                report.extend(jinja_problems(config, automation, &at, None));
                continue;
            }
        };
        if let Some(mismatch) = &ready.mismatch
            && reported_extensions.insert(planned.extension.clone())
        {
            report.push(extension_diagnostic(
                config,
                Severity::Warning,
                codes::DESCRIBE_MISMATCH,
                &planned.extension,
                mismatch.clone(),
            ));
        }
        let preparing = Preparing {
            automation: planned,
            repository: sent_repository.ok(),
            preview: false,
        };
        let schema = match prepare(ready.client, &preparing) {
            Ok(prepared) => prepared.schema,
            Err(unprepared) => {
                let Unprepared {
                    error,
                    schema,
                    rejection,
                } = *unprepared;
                let arguments = at.key("arguments");
                // The problems at their pointers: an `ok: false` verdict's `errors`,
                // else a -32003 error reply's `data.errors`.
                let (rejected, sentence) = match rejection {
                    Some(Rejection { error, errors }) => (errors, Some(error)),
                    None if error.code == ErrorCode::CONFIGURATION_INVALID
                        && error.method == "trigger/validate" =>
                    {
                        (validation_errors(error.data.as_ref()), None)
                    }
                    None => (Vec::new(), None),
                };
                if !rejected.is_empty() {
                    for ValidationError { path, message } in rejected {
                        let mut pointer = arguments.clone();
                        if let Ok(inner) = JsonPointer::parse(&path) {
                            for token in inner.tokens() {
                                pointer.push_key(&token);
                            }
                        }
                        report.push(config.diagnostic(
                            Severity::Error,
                            codes::TRIGGER_REJECTED,
                            &pointer,
                            format!(
                                "extension `{}` rejected the arguments of automation `{}` at \
                                 `{}`: {message}",
                                planned.extension,
                                automation.name,
                                if path.is_empty() { "/" } else { &path }
                            ),
                        ));
                    }
                } else if let Some(sentence) = sentence {
                    report.push(config.diagnostic(
                        Severity::Error,
                        codes::TRIGGER_REJECTED,
                        &arguments,
                        format!(
                            "extension `{}` rejected the configuration of automation `{}`: \
                             {sentence}",
                            planned.extension, automation.name
                        ),
                    ));
                } else {
                    let (code, pointer) = match (error.method.as_str(), error.code) {
                        ("trigger/validate", ErrorCode::CONFIGURATION_INVALID) => {
                            (codes::TRIGGER_REJECTED, arguments)
                        }
                        ("trigger/validate", _) => (codes::TRIGGER_FAILED, arguments),
                        _ => (codes::TRIGGER_FAILED, at.key("trigger")),
                    };
                    report.push(config.diagnostic(
                        Severity::Error,
                        code,
                        &pointer,
                        format!("automation `{}`: {error}", automation.name),
                    ));
                }
                // The placeholders need only the schema: check them whenever it came.
                let Some(schema) = schema else {
                    report.extend(jinja_problems(config, automation, &at, None));
                    continue;
                };
                *schema
            }
        };
        let fields: Vec<&str> = schema.prompt_fields.iter().map(String::as_str).collect();
        if automation.form == Form::Reference {
            report.extend(jinja_problems(config, automation, &at, Some(&fields)));
            continue;
        }
        let warnings = unknown_placeholders(config, automation, &at, &template, &fields);
        if let (Some(file), false) = (&automation.prompt_file, warnings.is_empty()) {
            report.add_source(display_path(file), automation.prompt.clone());
        }
        report.extend(warnings);
    }
    for error in extensions.shutdown_all() {
        report.push(extension_diagnostic(
            config,
            Severity::Error,
            codes::EXTENSION_FAILED,
            &error.extension,
            error.to_string(),
        ));
    }
}

/// The reference form's prompt, checked as the reference's `validate` checks it: a
/// Jinja template that compiles, using no variable but `automation`, `repository` and
/// the trigger's prompt fields (`None` when the trigger could not be asked: then only
/// whether it compiles). One `config/template` error, at the place in the prompt, with
/// the reference's sentence.
fn jinja_problems(
    config: &Config,
    automation: &Automation,
    at: &JsonPointer,
    fields: Option<&[&str]>,
) -> Vec<Diagnostic> {
    if automation.form != Form::Reference {
        return Vec::new();
    }
    let mut declared = vec!["automation", "repository"];
    declared.extend(fields.unwrap_or_default());
    let Err(error) = JinjaPrompt::compile(&automation.prompt, &declared) else {
        return Vec::new();
    };
    if fields.is_none() && matches!(error.kind(), JinjaErrorKind::UnknownFields { .. }) {
        return Vec::new();
    }
    let start = error.location().map_or(0, |location| location.offset);
    let end = automation.prompt[start..]
        .chars()
        .next()
        .map_or(start, |c| start + c.len_utf8());
    vec![config.diagnostic_in_string(
        Severity::Error,
        codes::TEMPLATE,
        &at.key("prompt"),
        &automation.prompt,
        start..end,
        format!("automation \"{}\": {error}", automation.name),
    )]
}

/// A diagnostic about the extension configured as `[extensions.NAME]` or
/// `[plugins.NAME]`.
fn extension_diagnostic(
    config: &Config,
    severity: Severity,
    code: &'static str,
    name: &str,
    message: String,
) -> Diagnostic {
    let at = config.extension_at(name);
    config.diagnostic(severity, code, &at, message)
}

fn prompt_pointer(automation: &Automation, at: &JsonPointer) -> JsonPointer {
    if automation.prompt_file.is_some() {
        at.key("prompt_file")
    } else {
        at.key("prompt")
    }
}

/// One warning per placeholder that neither a prompt field nor a host variable fills.
/// When the trigger lists no prompt fields (it cannot know them in advance), only the
/// placeholders close to a host variable are warned about: any other may be a field.
fn unknown_placeholders(
    config: &Config,
    automation: &Automation,
    at: &JsonPointer,
    template: &Template,
    fields: &[&str],
) -> Vec<Diagnostic> {
    let mut known: Vec<&str> = fields.to_vec();
    known.extend(curupira_protocol::RESERVED_KEYS);
    let mut out = Vec::new();
    for placeholder in template.placeholders() {
        let key = placeholder.key();
        if known.contains(&key) {
            continue;
        }
        let close = did_you_mean(key, known.iter().copied());
        let hint = close
            .map(|close| format!("; did you mean `${{{close}}}`?"))
            .unwrap_or_default();
        let message = if fields.is_empty() {
            if close.is_none() {
                continue;
            }
            format!(
                "automation `{}`: the placeholder `{}` is no host variable (repository, \
                 automation), and its trigger lists no prompt fields, so it is filled only if \
                 an item has that key{hint}",
                automation.name,
                placeholder.as_written(),
            )
        } else {
            format!(
                "automation `{}`: the placeholder `{}` is filled by no prompt field of its \
                 trigger ({}) and no host variable (repository, automation), so it stays as \
                 written{hint}",
                automation.name,
                placeholder.as_written(),
                fields.join(", ")
            )
        };
        let diagnostic = match &automation.prompt_file {
            Some(file) => {
                let span = placeholder.span();
                let position = Position::of(&automation.prompt, span.start);
                Diagnostic::warning(
                    codes::UNKNOWN_PLACEHOLDER,
                    display_path(file),
                    JsonPointer::root(),
                    message,
                )
                .with_location(span, position)
            }
            None => config.diagnostic_in_string(
                Severity::Warning,
                codes::UNKNOWN_PLACEHOLDER,
                &at.key("prompt"),
                &automation.prompt,
                placeholder.span(),
                message,
            ),
        };
        out.push(diagnostic);
    }
    out
}
