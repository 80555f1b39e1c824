//! What the configured extensions say about themselves, from
//! `--curupira-print-manifest`, without sending a frame: the work behind
//! `curupira plugins list` (SPEC section 7). A `[plugins.NAME]` entry (the reference
//! host's registration) has no manifest to print and is not given a flag its
//! `args` do not have: it is listed from what it answered to `initialize` and
//! `describe` when the plan was made ([`crate::resolve`]), the one case where frames
//! are sent.
//!
//! For each `[extensions.NAME]`, in file order: the launch command is worked out (a
//! `path` extension's from its on-disk manifest, a built-in's is this executable with
//! `builtin NAME`), run with `--curupira-print-manifest` appended, stdin closed, in the
//! config's folder, for at most `[settings.timeouts] initialize` seconds (then its
//! process group is killed). Its stdout (at most 1 MiB kept) is checked as a manifest;
//! its stderr goes to the log.
//!
//! The bound holds whatever the extension's children do
//! ([`curupira_client::print_manifest`]): the wait is for the extension's own exit, and
//! the pipes are then read for at most [`PIPE_GRACE`] more.
//!
//! A run that fails (cannot start, times out, exits non-zero, prints no valid
//! manifest) is a `config/extension-failed` error (or the printed manifest's own
//! `manifest/…` errors, under the file name `NAME --curupira-print-manifest`).

use std::path::Path;

use curupira_client::{log_stderr_line, print_manifest};
use curupira_diagnostics::{Report, Severity};
use curupira_manifest::{Launch, Manifest};
use curupira_protocol::InitializeResult;
use serde_json::{Value, json};

use crate::config::{Config, PluginType, codes};
use crate::resolve::{Origin, PlannedExtension, display_path, load_extensions};

/// What a listed `[plugins]` entry shows as its source: where what is listed came from.
const DESCRIBED: &str = "describe";

/// How long the pipes are read after the extension exited (or was killed).
pub use curupira_client::print_manifest::PIPE_GRACE;

/// One extension that printed a valid manifest, or a `[plugins]` entry that answered
/// `describe`.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The configured extension: its name, the manifest the host read (or, for a
    /// `[plugins]` entry, what it answered to `initialize` and `describe`), where that
    /// came from, and its launch command.
    pub planned: PlannedExtension,
    /// The manifest it printed; `None` for a `[plugins]` entry, which is listed from
    /// its [`Origin::Plugin`].
    pub printed: Option<Manifest>,
}

/// Runs every configured extension with `--curupira-print-manifest`; a `[plugins]`
/// entry is listed from its `describe` instead. Returns those that printed a valid
/// manifest (or answered `describe`), in file order, and the diagnostics of the
/// others (including their on-disk manifests' own).
pub fn list(config: &Config, host_exe: &Path) -> (Vec<Listed>, Report) {
    let (extensions, _broken, mut report) = load_extensions(config, host_exe);
    let mut listed = Vec::new();
    for planned in extensions {
        if let Origin::Plugin { .. } = planned.origin {
            listed.push(Listed {
                planned,
                printed: None,
            });
        } else if let Some(printed) = print_manifest(config, &planned, &mut report) {
            listed.push(Listed {
                planned,
                printed: Some(printed),
            });
        }
    }
    (listed, report)
}

/// Runs the extension with `--curupira-print-manifest` and checks what it prints.
fn print_manifest(
    config: &Config,
    planned: &PlannedExtension,
    report: &mut Report,
) -> Option<Manifest> {
    let at = config.extension_at(&planned.name);
    let fail = |report: &mut Report, message: String| {
        report.push(config.diagnostic(Severity::Error, codes::EXTENSION_FAILED, &at, message));
    };
    let shown = format!("{} --curupira-print-manifest", planned.launch);
    let limit = config.settings.timeouts.initialize;
    let printed = match print_manifest::print_manifest(&planned.launch, limit) {
        Ok(printed) => printed,
        Err(err) => {
            fail(
                report,
                format!(
                    "extension `{}`: cannot start `{shown}`: {}",
                    planned.name,
                    planned.launch.start_failure(&err)
                ),
            );
            return None;
        }
    };
    let print_manifest::Printed {
        status,
        stdout: bytes,
        stdout_ended,
        stderr: stderr_text,
    } = printed;
    for line in stderr_text.lines() {
        log_stderr_line(&planned.name, line);
    }
    if !stdout_ended && status.is_some() {
        tracing::warn!(
            "[{}] `{shown}` exited, but a process it started still holds its stdout; \
             using what it printed before it exited",
            planned.name
        );
    }
    let Some(status) = status else {
        fail(
            report,
            format!(
                "extension `{}`: `{shown}` did not exit within {} s; killed",
                planned.name,
                limit.as_secs_f64()
            ),
        );
        return None;
    };
    if !status.success() {
        let last = stderr_text.lines().last().unwrap_or("").trim();
        let said = if last.is_empty() {
            String::new()
        } else {
            format!(": {last}")
        };
        fail(
            report,
            format!(
                "extension `{}`: `{shown}` failed ({status}){said}",
                planned.name
            ),
        );
        return None;
    }
    let file = format!("{} --curupira-print-manifest", planned.name);
    let checked = curupira_manifest::check_bytes(&bytes, &file);
    report.append(checked.report);
    if checked.manifest.is_none() {
        fail(
            report,
            format!(
                "extension `{}`: `{shown}` did not print a valid manifest (see `{file}`)",
                planned.name
            ),
        );
    }
    checked.manifest
}

/// The listing as one JSON object: `extensions` (one object per listed extension)
/// beside the report's `diagnostics`, `errors` and `warnings`. Members are in key
/// order.
pub fn render_json(listed: &[Listed], report: &Report) -> String {
    let extensions: Vec<Value> = listed.iter().map(listed_json).collect();
    let mut out = serde_json::Map::new();
    out.insert("extensions".to_owned(), Value::Array(extensions));
    // A report is strings and integers: turning it into a JSON object cannot fail.
    if let Ok(Value::Object(mut diagnostics)) = serde_json::to_value(report) {
        out.append(&mut diagnostics);
    }
    Value::Object(out).to_string()
}

/// What a listing shows of one extension.
enum Shown<'a> {
    /// A manifest: the printed one, else the one the host read.
    Manifest(&'a Manifest),
    /// A `[plugins]` entry's `type` and `initialize` reply.
    Plugin(PluginType, &'a InitializeResult),
}

impl Listed {
    fn shown(&self) -> Shown<'_> {
        match (&self.printed, &self.planned.origin) {
            (Some(manifest), _) => Shown::Manifest(manifest),
            (None, Origin::File { manifest, .. } | Origin::Builtin { manifest, .. }) => {
                Shown::Manifest(manifest)
            }
            (
                None,
                Origin::Plugin {
                    launcher, hello, ..
                },
            ) => Shown::Plugin(*launcher, hello),
        }
    }
}

/// One listed extension as JSON. A `[plugins]` entry has the name and version of its
/// `initialize` reply, no `runtime` (`null`), and as `launch` its table
/// (`{"type", "args"}`).
fn listed_json(item: &Listed) -> Value {
    let planned = &item.planned;
    let command_line = planned.launch.to_string();
    match item.shown() {
        Shown::Manifest(m) => json!({
            "extension": planned.name,
            "source": source(planned),
            "name": m.name.as_str(),
            "version": m.version.to_string(),
            "protocol_version": m.protocol_version.to_string(),
            "runtime": m.runtime.as_str(),
            "kind": m.kind.as_str(),
            "trigger_types": trigger_types_of(m),
            "launch": launch_json(&m.launch),
            "command_line": command_line,
        }),
        Shown::Plugin(launcher, hello) => json!({
            "extension": planned.name,
            "source": source(planned),
            "name": hello.server_info.name,
            "version": hello.server_info.version,
            "protocol_version": hello.protocol_version.to_string(),
            "runtime": Value::Null,
            "kind": "trigger",
            "trigger_types": planned.trigger_types(),
            "launch": json!({"type": launcher.as_str(), "args": plugin_args(planned)}),
            "command_line": command_line,
        }),
    }
}

/// A manifest's `trigger_types`.
fn trigger_types_of(manifest: &Manifest) -> Vec<&str> {
    manifest
        .trigger_types
        .as_slice()
        .iter()
        .map(|t| t.as_str())
        .collect()
}

/// The `args` of a `[plugins]` entry: its launch's arguments, which are them verbatim.
fn plugin_args(planned: &PlannedExtension) -> Vec<String> {
    planned
        .launch
        .args
        .iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect()
}

/// The listing for people: one block per listed extension, then the report's
/// diagnostics (coloured with `color`) when there are any.
pub fn render_human(listed: &[Listed], report: &Report, color: bool) -> String {
    let mut out = String::new();
    for item in listed {
        out.push_str(&listed_human(item));
    }
    if listed.is_empty() && report.diagnostics().is_empty() {
        out.push_str("no extension is configured\n");
    }
    if !report.diagnostics().is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&report.render_human(color));
    }
    out
}

/// One listed extension's block for people.
fn listed_human(item: &Listed) -> String {
    let planned = &item.planned;
    let (head, types, launch) = match item.shown() {
        Shown::Manifest(m) => (
            format!(
                "{} {} (protocol {}, runtime {}, {})",
                m.name,
                m.version,
                m.protocol_version,
                m.runtime.as_str(),
                m.kind.as_str()
            ),
            trigger_types_of(m).join(", "),
            launch_text(&m.launch),
        ),
        Shown::Plugin(launcher, hello) => {
            let mut words = vec![launcher.as_str().to_owned()];
            words.extend(plugin_args(planned));
            (
                format!(
                    "{} {} (protocol {}, a [plugins] entry: no manifest)",
                    hello.server_info.name, hello.server_info.version, hello.protocol_version
                ),
                planned.trigger_types().join(", "),
                words.join(" "),
            )
        }
    };
    format!(
        "{}: {head}\n  triggers: {types}\n  launch: {launch}\n  runs as: {}\n  from: {}\n",
        planned.name,
        planned.launch,
        source(planned),
    )
}

/// `builtin local-queue`, the extension's folder, or `describe` for a `[plugins]`
/// entry.
fn source(planned: &PlannedExtension) -> String {
    match &planned.origin {
        Origin::Builtin { name, .. } => format!("builtin {name}"),
        Origin::File { path, .. } => display_path(path.parent().unwrap_or(path)),
        Origin::Plugin { .. } => DESCRIBED.to_owned(),
    }
}

/// A manifest's `[launch]` table as JSON, its members as the manifest names them.
fn launch_json(launch: &Launch) -> Value {
    match launch {
        Launch::Uvx {
            package,
            executable,
            version,
            args,
        } => json!({
            "type": "uvx",
            "package": package.as_str(),
            "version": version.as_ref().map(ToString::to_string),
            "executable": executable.as_str(),
            "args": args,
        }),
        Launch::Npx {
            package,
            version,
            bin,
            args,
        } => json!({
            "type": "npx",
            "package": package.as_str(),
            "version": version.as_ref().map(ToString::to_string),
            "bin": bin.as_ref().map(|bin| bin.as_str()),
            "args": args,
        }),
        Launch::Executable { program, args } => {
            json!({"type": "executable", "program": program.as_str(), "args": args})
        }
    }
}

/// `uvx acme-ext==1.2.0 acme-ext`, `npx @acme/ext@1.2.3`, `executable ./ext --flag`:
/// the launch type, then what it names.
fn launch_text(launch: &Launch) -> String {
    let mut words = vec![launch.type_name().to_owned()];
    words.extend(launch.package_spec());
    match launch {
        Launch::Uvx { executable, .. } => words.push(executable.as_str().to_owned()),
        Launch::Npx { bin, .. } => words.extend(bin.as_ref().map(|bin| bin.as_str().to_owned())),
        Launch::Executable { program, .. } => words.push(program.as_str().to_owned()),
    }
    words.extend(launch.args().iter().cloned());
    words.join(" ")
}
