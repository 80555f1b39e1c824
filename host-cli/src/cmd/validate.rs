//! `curupira validate [--config FILE] [--format human|json] [-q|-v]`: everything `run`
//! does before the first poll, reported as diagnostics (SPEC section 7): the config,
//! the manifests, trigger resolution and agents, then each extension an automation
//! uses is started and asked for its trigger's schema and to validate the arguments.
//! Every problem is reported in one pass, even when the config has errors: whatever
//! could be read is resolved and checked live; the steps and their codes are
//! `curupira_host::preflight`.
//!
//! Exit codes, as the reference host's: 0 no error (warnings allowed); 2 the config has
//! errors or cannot be read; 1 when the only errors are extensions that failed when
//! started or asked (`config/extension-failed`, `config/trigger-failed`: the
//! reference's "Plugin error").

use std::process::ExitCode;

use std::io::Write as _;

use anyhow::Context as _;
use curupira_diagnostics::{Report, color_enabled};
use curupira_host::config::{Form, codes};
use curupira_host::format::Format;
use curupira_host::preflight;

use super::{ConfigArg, ReportFormat, Verbosity, exit, load_config, write_report, write_stdout};

/// Arguments of `curupira validate`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: ConfigArg,
    #[command(flatten)]
    report: ReportFormat,
    #[command(flatten)]
    verbosity: Verbosity,
}

/// Runs `curupira validate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (host_exe, loaded) = load_config(&args.config, &args.verbosity)?;
    // A file that is not even TOML is in the reference form when it has its name.
    let named = args.config.path().file_name()
        == Some(std::ffi::OsStr::new(
            curupira_host::config::REFERENCE_FILE_NAME,
        ));
    let loaded_form = loaded
        .readable()
        .map_or(if named { Form::Reference } else { Form::Ours }, |config| {
            config.form
        });
    let found = loaded
        .readable()
        .map(|config| preflight::report(config, &host_exe));
    let mut report = loaded.report;
    if let Some(found) = found {
        report.append(found);
    }
    let reference = loaded_form == Form::Reference && args.report.format == Format::Human;
    if reference {
        // The reference host's stdout, which scripts read: one line when the file is
        // valid; the diagnostics go to stderr.
        if !report.diagnostics().is_empty() {
            let stderr = std::io::stderr();
            let text = report.render_human(color_enabled(&stderr));
            write!(stderr.lock(), "{text}").context("cannot write to standard error")?;
        }
        if !report.has_errors() {
            write_stdout(&format!(
                "Configuration is valid: {}\n",
                args.config.path().display()
            ))
            .context("cannot write to standard output")?;
        }
    } else {
        write_report(&report, args.report.format)?;
    }
    Ok(ExitCode::from(exit_code(&report)))
}

/// The errors that are an extension failing, not the file being wrong.
const EXTENSION_FAILURES: [&str; 2] = [codes::EXTENSION_FAILED, codes::TRIGGER_FAILED];

/// 0 without errors, 1 when every error is an extension that failed, else 2.
fn exit_code(report: &Report) -> u8 {
    let mut errors = report
        .diagnostics()
        .iter()
        .filter(|d| d.is_error())
        .peekable();
    if errors.peek().is_none() {
        return exit::SUCCESS.code;
    }
    if errors.all(|d| EXTENSION_FAILURES.contains(&d.code.as_ref())) {
        exit::FAILURE.code
    } else {
        exit::ERROR.code
    }
}
