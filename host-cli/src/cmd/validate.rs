//! `curupira validate [--config FILE] [--format human|json] [-v]`: everything `run`
//! does before the first poll, reported as diagnostics (SPEC section 7).
//!
//! Checked, in one pass, every problem reported:
//!
//! 1. the config file and every extension manifest (`config/…`, `manifest/…`);
//!    trigger resolution; a missing agent command (`config/missing-agent`);
//! 2. `${repository}`: an automation whose prompt uses it when no repository is known
//!    (`config/repository`);
//! 3. each extension used by an automation is started: `initialize` and `describe`
//!    (`config/extension-failed`, once per extension; `describe` not matching the
//!    manifest's `trigger_types` is `config/describe-mismatch`, a warning);
//! 4. each automation: `trigger/schema`, defaults, `trigger/validate`. A rejection
//!    gives one `config/trigger-rejected` per reported error, at
//!    `/automations/NAME/arguments` + the error's path; any other failure is
//!    `config/trigger-failed`;
//! 5. prompt placeholders that no prompt field of the trigger and no host variable
//!    (`repository`, `automation`) fills: `config/unknown-placeholder`, a warning with
//!    a did-you-mean, located at the placeholder (in the config, or in the prompt
//!    file). A trigger that lists **no** prompt fields is taken not to know its fields
//!    in advance (`local-queue`'s come from each queue line), so its prompts are not
//!    checked;
//! 6. every started extension is shut down; a failure there is
//!    `config/extension-failed`.
//!
//! Exit codes: 0 no error (warnings allowed), 1 errors, 2 the config cannot be read.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use super::Format;

use anyhow::Context;
use curupira_diagnostics::{
    Diagnostic, JsonPointer, LineIndex, Report, Severity, color_enabled, did_you_mean,
};
use curupira_host::config::{self, Automation, Config, codes};
use curupira_host::protocol::validation_errors;
use curupira_host::resolve::{display_path, resolve};
use curupira_host::runner::{self, Extensions, prepare, repository_missing, uses_repository};
use curupira_jsonrpc::ErrorCode;
use curupira_template::Template;

/// Arguments of `curupira validate`.
#[derive(clap::Args)]
pub struct Args {
    /// The config file.
    #[arg(long, short = 'c', value_name = "FILE", default_value = config::FILE_NAME)]
    config: PathBuf,
    /// How to print the diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// More log on stderr (-v debug, -vv trace); `RUST_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
}

/// Runs `curupira validate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    curupira_host::logging::init(args.verbose);
    let host_exe = runner::host_executable().context("cannot find the curupira executable")?;
    let loaded = config::load(&args.config)?;
    let mut report = loaded.report;
    if let Some(config) = loaded.config {
        let (plan, resolved) = resolve(&config, &host_exe);
        report.append(resolved);
        report.extend(config.missing_agents(&config.automations));
        if let Some(plan) = plan {
            check_live(&config, &plan, &mut report);
        }
    }
    let stdout = io::stdout();
    let output = match args.format {
        Format::Json => report.render_json() + "\n",
        Format::Human => report.render_human(color_enabled(&stdout)),
    };
    let mut out = stdout.lock();
    out.write_all(output.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write the report to standard output")?;
    Ok(ExitCode::from(report.exit_code()))
}

/// Steps 2 to 6: talks to the extensions.
fn check_live(config: &Config, plan: &curupira_host::resolve::Plan, report: &mut Report) {
    let repository = runner::repository(config);
    let mut extensions = Extensions::new(plan);
    let mut reported_extensions = HashSet::new();
    for automation in &config.automations {
        let Some(planned) = plan.automation(&automation.name) else {
            continue;
        };
        let at = JsonPointer::root().key("automations").key(&automation.name);
        let template = Template::parse(&automation.prompt);
        if let (true, Err(reason)) = (uses_repository(&template), &repository) {
            let pointer = prompt_pointer(automation, &at);
            report.push(config.diagnostic(
                Severity::Error,
                codes::REPOSITORY,
                &pointer,
                repository_missing(&automation.name, reason),
            ));
        }
        let ready = extensions.ready(
            &planned.extension,
            config.settings.max_frame_bytes,
            config.settings.timeouts,
        );
        let ready = match ready {
            Ok(ready) => ready,
            Err(error) => {
                if reported_extensions.insert(planned.extension.clone()) {
                    report.push(
                        config.diagnostic(
                            Severity::Error,
                            codes::EXTENSION_FAILED,
                            &JsonPointer::root()
                                .key("extensions")
                                .key(&planned.extension),
                            error.to_string(),
                        ),
                    );
                }
                continue;
            }
        };
        if let Some(mismatch) = &ready.mismatch {
            if reported_extensions.insert(planned.extension.clone()) {
                report.push(
                    config.diagnostic(
                        Severity::Warning,
                        codes::DESCRIBE_MISMATCH,
                        &JsonPointer::root()
                            .key("extensions")
                            .key(&planned.extension),
                        mismatch.clone(),
                    ),
                );
            }
        }
        let prepared = match prepare(ready.process, &planned.trigger_type, automation) {
            Ok(prepared) => prepared,
            Err(error) => {
                let rejected = validation_errors(error.data.as_ref());
                if error.code == ErrorCode::CONFIGURATION_INVALID
                    && error.method == "trigger/validate"
                    && !rejected.is_empty()
                {
                    for (path, message) in rejected {
                        let mut pointer = at.key("arguments");
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
                } else {
                    let pointer = if error.method == "trigger/validate" {
                        at.key("arguments")
                    } else {
                        at.key("trigger")
                    };
                    report.push(config.diagnostic(
                        Severity::Error,
                        codes::TRIGGER_FAILED,
                        &pointer,
                        format!("automation `{}`: {error}", automation.name),
                    ));
                }
                continue;
            }
        };
        let fields: Vec<&str> = prepared
            .schema
            .prompt_fields
            .iter()
            .map(|f| f.key.as_str())
            .collect();
        if !fields.is_empty() {
            let warnings = unknown_placeholders(config, automation, &at, &template, &fields);
            if let (Some(file), false) = (&automation.prompt_file, warnings.is_empty()) {
                report.add_source(display_path(file), automation.prompt.clone());
            }
            report.extend(warnings);
        }
    }
    for error in extensions.shutdown_all() {
        report.push(config.diagnostic(
            Severity::Error,
            codes::EXTENSION_FAILED,
            &JsonPointer::root().key("extensions").key(&error.extension),
            error.to_string(),
        ));
    }
}

fn prompt_pointer(automation: &Automation, at: &JsonPointer) -> JsonPointer {
    if automation.prompt_file.is_some() {
        at.key("prompt_file")
    } else {
        at.key("prompt")
    }
}

/// One warning per placeholder that neither a prompt field nor a host variable fills.
fn unknown_placeholders(
    config: &Config,
    automation: &Automation,
    at: &JsonPointer,
    template: &Template,
    fields: &[&str],
) -> Vec<Diagnostic> {
    let mut known: Vec<&str> = fields.to_vec();
    known.extend(["repository", "automation"]);
    let mut out = Vec::new();
    for placeholder in template.placeholders() {
        let key = placeholder.key();
        if known.contains(&key) {
            continue;
        }
        let hint = did_you_mean(key, known.iter().copied())
            .map(|close| format!("; did you mean `${{{close}}}`?"))
            .unwrap_or_default();
        let message = format!(
            "automation `{}`: the placeholder `{}` is filled by no prompt field of its trigger \
             ({}) and no host variable (repository, automation), so it stays as written{hint}",
            automation.name,
            placeholder.as_written(),
            fields.join(", ")
        );
        let diagnostic = match &automation.prompt_file {
            Some(file) => {
                let span = placeholder.span();
                let position = LineIndex::new(&automation.prompt).position(span.start);
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
