//! From a checked config to a plan: each extension's manifest and launch command, and
//! each automation's extension and trigger type (SPEC section 1, step 1).
//!
//! - `path = "folder"`: the folder's `curupira-extension.toml` is read and checked with
//!   `curupira-manifest`; its diagnostics join the report under the manifest's own
//!   file name and codes (`manifest/…`).
//! - `builtin = "local-queue"`: the manifest is the one compiled into this host (the
//!   table in [`crate::builtin`]), and the launch is this host's own executable with
//!   `builtin local-queue`.
//! - Launch (SPEC section 2): `npx` runs `npx --yes <package>@<version>`; `command`
//!   runs the program with its `args`, a program containing `/` being relative to the
//!   manifest's folder (otherwise looked up on `PATH`). Every extension runs with the
//!   config's folder as its working directory.
//! - A trigger is found by type among the manifests' `trigger_types`; when two
//!   extensions offer it, `trigger` must say `extension:type`
//!   (`config/ambiguous-trigger` names the candidates). With `extension:type`, the
//!   named extension must be configured (`config/unknown-extension`) and offer the
//!   type (`config/unknown-trigger`).

use std::path::{Path, PathBuf};

use curupira_diagnostics::{JsonPointer, Report, Severity, did_you_mean};
use curupira_manifest::{FILE_NAME as MANIFEST_FILE, Launch, Manifest};

use curupira_client::LaunchCommand;

use crate::builtin;
use crate::config::{Config, ExtensionSource, codes};

/// Everything `run` and `validate` need to start extensions and find triggers.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The configured extensions, in file order.
    pub extensions: Vec<PlannedExtension>,
    /// Each resolved automation's extension and trigger type, in file order.
    pub automations: Vec<PlannedAutomation>,
}

/// One configured extension, ready to start.
#[derive(Debug, Clone)]
pub struct PlannedExtension {
    /// Its name in the config (`[extensions.NAME]`).
    pub name: String,
    /// Its manifest.
    pub manifest: Manifest,
    /// Where the manifest came from.
    pub origin: Origin,
    /// How to start it.
    pub launch: LaunchCommand,
    /// Whether one process serves the whole run (the built-in `local-queue`), rather
    /// than one per round ([`crate::extensions`]).
    pub persistent: bool,
}

/// Where an extension's manifest came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A `curupira-extension.toml` file.
    File(PathBuf),
    /// Built into this host.
    Builtin(String),
}

/// Which extension and trigger type an automation uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedAutomation {
    /// The automation's name.
    pub name: String,
    /// The configured name of the extension offering its trigger.
    pub extension: String,
    /// The trigger type, as that extension names it.
    pub trigger_type: String,
}

impl Plan {
    /// The extension called `name`.
    pub fn extension(&self, name: &str) -> Option<&PlannedExtension> {
        self.extensions.iter().find(|e| e.name == name)
    }

    /// The plan of the automation called `name`.
    pub fn automation(&self, name: &str) -> Option<&PlannedAutomation> {
        self.automations.iter().find(|a| a.name == name)
    }
}

/// Loads every usable extension's manifest and resolves the trigger of every
/// automation whose `trigger` could be read ([`Config::triggers`]), so that a partial
/// config gets every resolution problem too. The plan holds what resolved: only a
/// report without errors (and a complete config) makes it runnable.
///
/// An extension whose table or manifest is broken has its own errors reported; an
/// automation that may use it (it names it, or its trigger is found nowhere else) gets
/// no second error.
pub fn resolve(config: &Config, host_exe: &Path) -> (Plan, Report) {
    let (extensions, broken, mut report) = load_extensions(config, host_exe);
    let broken: Vec<&str> = broken
        .iter()
        .chain(&config.unusable.extensions)
        .map(String::as_str)
        .collect();

    let mut automations = Vec::new();
    for (name, trigger) in config.triggers() {
        let at = JsonPointer::root()
            .key("automations")
            .key(name)
            .key("trigger");
        let wanted = &trigger.trigger_type;
        let error = |code: &'static str, message: String| {
            config.diagnostic(Severity::Error, code, &at, message)
        };
        match &trigger.extension {
            Some(named) => {
                if broken.contains(&named.as_str()) {
                    continue; // its own errors are already reported
                }
                let Some(extension) = extensions.iter().find(|e| &e.name == named) else {
                    let names = extensions.iter().map(|e| e.name.as_str());
                    let hint = did_you_mean(named, names)
                        .map(|known| format!("; did you mean `{known}`?"))
                        .unwrap_or_default();
                    report.push(error(
                        codes::UNKNOWN_EXTENSION,
                        format!(
                            "automation `{}` names the extension `{named}`, which is not \
                             configured in `[extensions]`{hint}",
                            name
                        ),
                    ));
                    continue;
                };
                if !extension.manifest.trigger_types.contains(wanted) {
                    let offered = offered_list(std::slice::from_ref(extension));
                    let types = types_of(std::slice::from_ref(extension));
                    let hint = did_you_mean(wanted, types.iter().map(String::as_str))
                        .map(|known| format!("; did you mean `{named}:{known}`?"))
                        .unwrap_or_default();
                    report.push(error(
                        codes::UNKNOWN_TRIGGER,
                        format!(
                            "extension `{named}` offers no trigger `{wanted}` (it offers {offered}){hint}"
                        ),
                    ));
                    continue;
                }
                automations.push(PlannedAutomation {
                    name: name.to_owned(),
                    extension: named.clone(),
                    trigger_type: wanted.clone(),
                });
            }
            None => {
                let candidates: Vec<&PlannedExtension> = extensions
                    .iter()
                    .filter(|e| e.manifest.trigger_types.contains(wanted))
                    .collect();
                match candidates.as_slice() {
                    [one] => automations.push(PlannedAutomation {
                        name: name.to_owned(),
                        extension: one.name.clone(),
                        trigger_type: wanted.clone(),
                    }),
                    [] if !broken.is_empty() => {
                        // Perhaps offered by an extension whose manifest failed; its
                        // errors are reported already.
                    }
                    [] => {
                        let types = types_of(&extensions);
                        let hint = did_you_mean(wanted, types.iter().map(String::as_str))
                            .map(|known| format!("; did you mean `{known}`?"))
                            .unwrap_or_default();
                        let offered = if extensions.is_empty() {
                            "no extension is configured".to_owned()
                        } else {
                            format!(
                                "the configured extensions offer {}",
                                offered_list(&extensions)
                            )
                        };
                        report.push(error(
                            codes::UNKNOWN_TRIGGER,
                            format!(
                                "no extension offers the trigger `{wanted}` used by automation \
                                 `{}` ({offered}){hint}",
                                name
                            ),
                        ));
                    }
                    many => {
                        let names: Vec<String> =
                            many.iter().map(|e| format!("`{}`", e.name)).collect();
                        let forms: Vec<String> = many
                            .iter()
                            .map(|e| format!("`{}:{wanted}`", e.name))
                            .collect();
                        report.push(error(
                            codes::AMBIGUOUS_TRIGGER,
                            format!(
                                "the trigger `{wanted}` of automation `{}` is offered by the \
                                 extensions {}; write {} to choose",
                                name,
                                join_and(&names),
                                join_or(&forms)
                            ),
                        ));
                    }
                }
            }
        }
    }

    let plan = Plan {
        extensions,
        automations,
    };
    (plan, report)
}

/// Loads every configured extension's manifest and launch command. Returns the
/// extensions that loaded, the names of those that did not (their diagnostics are in
/// the report), and the report.
pub fn load_extensions(
    config: &Config,
    host_exe: &Path,
) -> (Vec<PlannedExtension>, Vec<String>, Report) {
    let mut report = Report::new();
    let mut extensions = Vec::new();
    let mut broken = Vec::new();
    for extension in &config.extensions {
        let at = JsonPointer::root().key("extensions").key(&extension.name);
        match &extension.source {
            ExtensionSource::Builtin(name) => match builtin::find(name)
                .and_then(|builtin| Some((builtin, builtin.parse_manifest()?)))
            {
                Some((builtin, manifest)) => extensions.push(PlannedExtension {
                    name: extension.name.clone(),
                    manifest,
                    origin: Origin::Builtin(name.clone()),
                    launch: LaunchCommand::new(host_exe, &config.dir).args(builtin.launch_args()),
                    persistent: true,
                }),
                None => {
                    broken.push(extension.name.clone());
                    report.push(config.diagnostic(
                        Severity::Error,
                        codes::UNKNOWN_BUILTIN,
                        &at.key("builtin"),
                        format!("`{name}` is not an extension built into curupira"),
                    ));
                }
            },
            ExtensionSource::Folder(folder) => {
                let file = folder.join(MANIFEST_FILE);
                let checked = match std::fs::read(&file) {
                    Ok(bytes) => curupira_manifest::check_bytes(&bytes, &display_path(&file)),
                    Err(err) => {
                        broken.push(extension.name.clone());
                        report.push(config.diagnostic(
                            Severity::Error,
                            codes::MISSING_MANIFEST,
                            &at.key("path"),
                            format!(
                                "extension `{}`: cannot read `{}`: {err}",
                                extension.name,
                                display_path(&file)
                            ),
                        ));
                        continue;
                    }
                };
                report.append(checked.report);
                match checked.manifest {
                    Some(manifest) => {
                        let launch = launch_command(&manifest.launch, folder, &config.dir);
                        extensions.push(PlannedExtension {
                            name: extension.name.clone(),
                            manifest,
                            origin: Origin::File(file),
                            launch,
                            persistent: false,
                        });
                    }
                    None => broken.push(extension.name.clone()),
                }
            }
        }
    }
    (extensions, broken, report)
}

/// The launch command a manifest describes, run in `cwd`:
///
/// - `uvx`: `uvx --from PACKAGE[==VERSION] EXECUTABLE ARGS…`;
/// - `npx`: `npx --yes PACKAGE[@VERSION] ARGS…`, or with `bin`,
///   `npx --yes --package PACKAGE[@VERSION] BIN ARGS…`;
/// - `executable`: `PROGRAM ARGS…`, a `PROGRAM` containing `/` taken relative to the
///   manifest's folder, any other looked up on `PATH`.
pub fn launch_command(launch: &Launch, manifest_dir: &Path, cwd: &Path) -> LaunchCommand {
    let package = launch.package_spec().unwrap_or_default();
    match launch {
        Launch::Uvx {
            executable, args, ..
        } => LaunchCommand::new("uvx", cwd)
            .arg("--from")
            .arg(package)
            .arg(executable.as_str())
            .args(args),
        Launch::Npx { bin, args, .. } => {
            let command = LaunchCommand::new("npx", cwd).arg("--yes");
            let command = match bin {
                Some(bin) => command.arg("--package").arg(package).arg(bin.as_str()),
                None => command.arg(package),
            };
            command.args(args)
        }
        Launch::Executable { program, args } => {
            let program = program.as_str();
            let program = if program.contains('/') {
                manifest_dir.join(program)
            } else {
                PathBuf::from(program)
            };
            LaunchCommand::new(program, cwd).args(args)
        }
    }
}

/// A path for messages: relative to the current directory when it is inside it.
pub fn display_path(path: &Path) -> String {
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    match relative {
        Some(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// Every trigger type `extensions` offer, with the extension that offers it, in order.
fn offered(extensions: &[PlannedExtension]) -> impl Iterator<Item = (&PlannedExtension, &str)> {
    extensions.iter().flat_map(|e| {
        e.manifest
            .trigger_types
            .as_slice()
            .iter()
            .map(move |t| (e, t.as_str()))
    })
}

fn types_of(extensions: &[PlannedExtension]) -> Vec<String> {
    offered(extensions).map(|(_, t)| t.to_owned()).collect()
}

/// `` `acme:a`, `other:b` ``: every trigger type offered, qualified; `no trigger` when
/// there is none.
fn offered_list(extensions: &[PlannedExtension]) -> String {
    let items: Vec<String> = offered(extensions)
        .map(|(e, t)| format!("`{}:{t}`", e.name))
        .collect();
    if items.is_empty() {
        "no trigger".to_owned()
    } else {
        items.join(", ")
    }
}

fn join_with(items: &[String], word: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} {word} {last}", init.join(", ")),
    }
}

fn join_and(items: &[String]) -> String {
    join_with(items, "and")
}

fn join_or(items: &[String]) -> String {
    join_with(items, "or")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command line `launch_command` makes of a manifest's `[launch]` table.
    fn line(launch: &str) -> String {
        let text = format!(
            "manifest_version = 1\nname = \"x\"\nversion = \"1.2.0\"\nprotocol_version = 2\n\
             runtime = \"python\"\nkind = \"trigger\"\ntrigger_types = [\"t\"]\n[launch]\n{launch}"
        );
        let checked = curupira_manifest::check_str(&text, "curupira-extension.toml");
        let manifest = checked.manifest.expect("a valid manifest");
        launch_command(&manifest.launch, Path::new("/ext"), Path::new("/cfg")).to_string()
    }

    #[test]
    fn each_launch_form_becomes_its_command_line() {
        assert_eq!(
            line(
                "type = \"uvx\"\npackage = \"acme-ext\"\nexecutable = \"acme\"\nversion = \"1.2.0\"\nargs = [\"-q\"]\n"
            ),
            "uvx --from acme-ext==1.2.0 acme -q"
        );
        assert_eq!(
            line("type = \"uvx\"\npackage = \"acme-ext\"\nexecutable = \"acme\"\n"),
            "uvx --from acme-ext acme"
        );
        assert_eq!(
            line("type = \"npx\"\npackage = \"@acme/ext\"\nversion = \"1.2.0\"\n"),
            "npx --yes @acme/ext@1.2.0"
        );
        assert_eq!(
            line(
                "type = \"npx\"\npackage = \"@acme/ext\"\nversion = \"1.2.0\"\nbin = \"ext-cli\"\nargs = [\"serve\"]\n"
            ),
            "npx --yes --package @acme/ext@1.2.0 ext-cli serve"
        );
        assert_eq!(
            line("type = \"executable\"\nprogram = \"./bin/ext\"\nargs = [\"a b\"]\n"),
            "/ext/./bin/ext 'a b'"
        );
        assert_eq!(
            line("type = \"executable\"\nprogram = \"python3\"\n"),
            "python3"
        );
    }
}
