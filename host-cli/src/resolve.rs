//! From a checked config to a plan: each extension's manifest and launch command, and
//! each automation's extension and trigger type (SPEC section 1, step 1).
//!
//! - `path = "folder"`: the folder's `curupira-extension.toml` is read and checked with
//!   `curupira-manifest`; its diagnostics join the report under the manifest's own
//!   file name and codes (`manifest/…`).
//! - `builtin = "local-queue"`: the manifest is the one compiled into this host (the
//!   table in [`crate::builtin`]), and the launch is this host's own executable with
//!   `builtin local-queue`.
//! - Launch (SPEC section 2): `uvx` runs `uvx --from PACKAGE[==VERSION] EXECUTABLE`,
//!   `npx` runs `npx --yes PACKAGE[@VERSION]`, `executable` runs the program with its
//!   `args`, a program containing `/` being relative to the manifest's folder
//!   (otherwise looked up on `PATH`). Every `[extensions]` extension runs with the
//!   config's folder as its working directory.
//! - `[plugins.NAME] type = "uvx" | "npx", args = [...]` (SPEC section 1,
//!   "Registration and addressing"): the launch is `uvx ARGS…` / `npx ARGS…` verbatim,
//!   in the host's own working directory (the process's, not the config's folder), as
//!   the reference host runs it. Such an entry has no manifest, so its trigger types
//!   are learnt as the reference host learns them: the entry is started in a process
//!   of its own, asked `initialize` and `describe`, and shut down
//!   ([`Origin::Plugin`] keeps what it said). A failure there is
//!   `config/extension-failed` at `/plugins/NAME`. No process is started when the
//!   settings used to talk to extensions have an error (`Unusable::connection`);
//!   such an entry is then left out like a broken one.
//! - A trigger is `NAME/type` or a bare type. `NAME/type` always works: `NAME` must be
//!   a key of `[extensions]` or `[plugins]`, or the name of an extension installed with
//!   `curupira plugins install` (`~/.curupira/extensions/NAME/`, which the reference
//!   host does not let automations name), else `config/unknown-extension`; and offer
//!   the type (`config/unknown-trigger`). A bare type works when exactly one extension
//!   offers it; when several do, `config/ambiguous-trigger` lists the `NAME/type`
//!   spellings to choose from.

use std::path::{Path, PathBuf};

use curupira_client::{CallError, Client, Ending, LaunchCommand, Options};
use curupira_diagnostics::{Diagnostic, JsonPointer, Report, Severity, did_you_mean};
use curupira_manifest::{FILE_NAME as MANIFEST_FILE, Launch, Manifest};
use curupira_protocol::{InitializeResult, TriggerDescription};

use crate::builtin;
use crate::config::{Config, ExtensionConfig, ExtensionSource, PluginType, ProcessMode, codes};

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
    /// Its name in the config (`[extensions.NAME]` or `[plugins.NAME]`).
    pub name: String,
    /// What the host knows of it, and where that came from.
    pub origin: Origin,
    /// How to start it.
    pub launch: LaunchCommand,
    /// Whether one process serves the whole run rather than one per round
    /// ([`curupira_orchestrator::extensions`]): `process = "run"`, the default of built-ins.
    pub persistent: bool,
}

impl PlannedExtension {
    /// Its manifest; `None` for a `[plugins]` entry, which has none.
    pub fn manifest(&self) -> Option<&Manifest> {
        match &self.origin {
            Origin::File { manifest, .. } | Origin::Builtin { manifest, .. } => Some(manifest),
            Origin::Plugin { .. } => None,
        }
    }

    /// The trigger types it offers, as automations are resolved against them: the
    /// manifest's `trigger_types`, or what a `[plugins]` entry's `describe` listed.
    pub fn trigger_types(&self) -> Vec<&str> {
        match &self.origin {
            Origin::File { manifest, .. } | Origin::Builtin { manifest, .. } => manifest
                .trigger_types
                .as_slice()
                .iter()
                .map(|t| t.as_str())
                .collect(),
            Origin::Plugin { triggers, .. } => {
                triggers.iter().map(|t| t.trigger_type.as_str()).collect()
            }
        }
    }

    /// Whether it offers the trigger type `local`.
    fn offers(&self, local: &str) -> bool {
        self.trigger_types().contains(&local)
    }
}

/// What the host knows of an extension before it runs it, and where that came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A `curupira-extension.toml` file (`[extensions.NAME] path`).
    File {
        /// The manifest file.
        path: PathBuf,
        /// What it says.
        manifest: Manifest,
    },
    /// Built into this host (`[extensions.NAME] builtin`).
    Builtin {
        /// The built-in's name (`local-queue`).
        name: String,
        /// Its compiled-in manifest.
        manifest: Manifest,
    },
    /// A `[plugins.NAME]` entry, which has no manifest: what it answered to
    /// `initialize` and `describe` in a process started for that alone.
    Plugin {
        /// Its `type`.
        launcher: PluginType,
        /// `initialize`'s result: its name, version and protocol version.
        hello: InitializeResult,
        /// `describe`'s triggers.
        triggers: Vec<TriggerDescription>,
    },
}

/// Which extension and trigger type an automation uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedAutomation {
    /// The automation's name.
    pub name: String,
    /// The configured name of the extension offering its trigger.
    pub extension: String,
    /// The trigger type, as that extension names it (the local name).
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

/// Loads every usable extension's manifest (and asks every usable `[plugins]` entry
/// `describe`), and resolves the trigger of every automation whose `trigger` could be
/// read ([`Config::triggers`]), so that a partial config gets every resolution problem
/// too. The plan holds what resolved: only a report without errors (and a complete
/// config) makes it runnable.
///
/// An extension whose table or manifest is broken (or whose `describe` failed) has its
/// own errors reported; an automation that may use it (it names it, or its trigger is
/// found nowhere else) gets no second error.
pub fn resolve(config: &Config, host_exe: &Path) -> (Plan, Report) {
    let (mut extensions, broken, mut report) = load_extensions(config, host_exe);
    let store =
        crate::installed::store(std::env::var_os("HOME").map(PathBuf::from).as_deref()).ok();
    // A name set aside in one table may be usable in the other (`[plugins.acme]`
    // beside `[extensions.acme]`, `config/duplicate-name`): that one is not broken.
    let broken: Vec<&str> = broken
        .iter()
        .chain(&config.unusable.extensions)
        .map(String::as_str)
        .filter(|name| !extensions.iter().any(|e| e.name == *name))
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
                if !extensions.iter().any(|e| &e.name == named)
                    && let Some(installed) = store
                        .as_deref()
                        .and_then(|store| installed_extension(store, named, config))
                {
                    extensions.push(installed);
                }
                let Some(extension) = extensions.iter().find(|e| &e.name == named) else {
                    let names = extensions.iter().map(|e| e.name.as_str());
                    let hint = did_you_mean(named, names)
                        .map(|known| format!("; did you mean `{known}/{wanted}`?"))
                        .unwrap_or_default();
                    report.push(error(
                        codes::UNKNOWN_EXTENSION,
                        format!(
                            "automation `{name}` names the extension `{named}`, which is \
                             configured neither in `[extensions]` nor in `[plugins]`, nor \
                             installed (`curupira plugins install`){hint}"
                        ),
                    ));
                    continue;
                };
                if !extension.offers(wanted) {
                    let offered = offered_list(std::slice::from_ref(extension));
                    let types = extension.trigger_types();
                    let hint = did_you_mean(wanted, types.iter().copied())
                        .map(|known| format!("; did you mean `{named}/{known}`?"))
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
                let candidates: Vec<&PlannedExtension> =
                    extensions.iter().filter(|e| e.offers(wanted)).collect();
                let reference_form = config
                    .automations
                    .iter()
                    .any(|a| a.name == name && a.form == crate::config::Form::Reference);
                if trigger.is_builtin_cron() && (reference_form || candidates.is_empty()) {
                    // The built-in `cron`, served in this process: an extension of
                    // its own per automation (`crate::cron`).
                    automations.push(PlannedAutomation {
                        name: name.to_owned(),
                        extension: crate::cron::extension_name(name),
                        trigger_type: wanted.clone(),
                    });
                    continue;
                }
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
                                 `{name}` ({offered}){hint}"
                            ),
                        ));
                    }
                    many => {
                        let names: Vec<String> =
                            many.iter().map(|e| format!("`{}`", e.name)).collect();
                        let forms: Vec<String> = many
                            .iter()
                            .map(|e| format!("`{}/{wanted}`", e.name))
                            .collect();
                        report.push(error(
                            codes::AMBIGUOUS_TRIGGER,
                            format!(
                                "the trigger `{wanted}` of automation `{name}` is offered by the \
                                 extensions {}; write {} to choose",
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

/// Loads every configured extension's manifest and launch command; a `[plugins]` entry
/// is asked `describe` instead (`describe_plugin`), unless the settings used to talk
/// to extensions have an error. Returns the extensions that loaded, the names of
/// those that did not (their diagnostics, if any, are in the report), and the report.
pub fn load_extensions(
    config: &Config,
    host_exe: &Path,
) -> (Vec<PlannedExtension>, Vec<String>, Report) {
    let mut report = Report::new();
    let mut extensions = Vec::new();
    let mut broken = Vec::new();
    for extension in &config.extensions {
        let at = extension.pointer();
        match &extension.source {
            ExtensionSource::Builtin(name) => match builtin::find(name)
                .and_then(|builtin| Some((builtin, builtin.parse_manifest()?)))
            {
                Some((builtin, manifest)) => extensions.push(PlannedExtension {
                    name: extension.name.clone(),
                    origin: Origin::Builtin {
                        name: name.clone(),
                        manifest,
                    },
                    launch: LaunchCommand::new(host_exe, &config.dir).args(builtin.launch_args()),
                    persistent: extension.process != Some(ProcessMode::Round),
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
                            origin: Origin::File {
                                path: file,
                                manifest,
                            },
                            launch,
                            persistent: extension.process == Some(ProcessMode::Run),
                        });
                    }
                    None => broken.push(extension.name.clone()),
                }
            }
            ExtensionSource::Plugin { launcher, args } => {
                if config.unusable.connection {
                    // Talking to it would use settings the user did not write; the
                    // settings' own errors are reported.
                    broken.push(extension.name.clone());
                    continue;
                }
                let launch = plugin_launch(*launcher, args, &host_cwd());
                match describe_plugin(
                    extension,
                    &launch,
                    crate::config::client_options(&config.settings),
                ) {
                    Ok(described) => {
                        if let Some(error) = described.shutdown {
                            report.push(plugin_failure(config, extension, &error));
                        }
                        extensions.push(PlannedExtension {
                            name: extension.name.clone(),
                            origin: Origin::Plugin {
                                launcher: *launcher,
                                hello: described.hello,
                                triggers: described.triggers,
                            },
                            launch,
                            persistent: extension.process == Some(ProcessMode::Run),
                        });
                    }
                    Err(error) => {
                        broken.push(extension.name.clone());
                        report.push(plugin_failure(config, extension, &error));
                    }
                }
            }
        }
    }
    (extensions, broken, report)
}

/// The extension `name` installed in `store` (`curupira plugins install`), when its
/// kept manifest is there and passes the manifest rules: started from that manifest,
/// one process per round, as a `[extensions]` folder would be (a relative program is
/// taken from the store's folder, where the reference host keeps only the manifest).
fn installed_extension(store: &Path, name: &str, config: &Config) -> Option<PlannedExtension> {
    let folder = store.join(name);
    let file = folder.join(MANIFEST_FILE);
    let bytes = std::fs::read(&file).ok()?;
    let manifest = curupira_manifest::check_bytes(&bytes, &display_path(&file)).manifest?;
    Some(PlannedExtension {
        name: name.to_owned(),
        launch: launch_command(&manifest.launch, &folder, &config.dir),
        origin: Origin::File {
            path: file,
            manifest,
        },
        persistent: false,
    })
}

/// The launch of a `[plugins]` entry: `uvx ARGS…` or `npx ARGS…`, nothing added, in
/// `cwd` (the host's own working directory).
pub fn plugin_launch(launcher: PluginType, args: &[String], cwd: &Path) -> LaunchCommand {
    LaunchCommand::new(launcher.as_str(), cwd).args(args)
}

/// The host's own working directory, where `[plugins]` entries run; `.` (the same
/// directory, unnamed) when the system cannot say which it is.
fn host_cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

/// What a `[plugins]` entry said in its `describe` process.
struct Described {
    hello: InitializeResult,
    triggers: Vec<TriggerDescription>,
    /// How `shutdown` failed, when it did (what it said is still used).
    shutdown: Option<CallError>,
}

/// Starts a `[plugins]` entry in a process of its own, as the reference host does for
/// `describe`: `initialize`, `describe`, `shutdown`. Each call is bounded by the
/// configured timeouts.
fn describe_plugin(
    plugin: &ExtensionConfig,
    launch: &LaunchCommand,
    options: Options,
) -> Result<Described, CallError> {
    let mut client = Client::spawn(&plugin.name, launch, options)?;
    let said = client.initialize(crate::host_info()).and_then(|hello| {
        let described = client.describe()?;
        Ok((hello, described.triggers))
    });
    match said {
        Ok((hello, triggers)) => {
            let shutdown = match client.shutdown() {
                Ok(Ending::Exited(how)) => {
                    tracing::debug!("[{}] described and shut down: {how}", plugin.name);
                    None
                }
                Ok(Ending::Killed | Ending::AlreadyFailed) => None,
                Err(error) => Some(error),
            };
            Ok(Described {
                hello,
                triggers,
                shutdown,
            })
        }
        Err(error) => {
            if !client.is_dead() {
                // The conversation is intact: say goodbye properly (bounded).
                let _ = client.shutdown();
            }
            Err(error)
        }
    }
}

/// `config/extension-failed` at `/plugins/NAME`: its `describe` process failed.
fn plugin_failure(config: &Config, plugin: &ExtensionConfig, error: &CallError) -> Diagnostic {
    config.diagnostic(
        Severity::Error,
        codes::EXTENSION_FAILED,
        &plugin.pointer(),
        format!(
            "plugin `{}` has no manifest, so its trigger types are asked with `describe`, \
             which failed: {error}",
            plugin.name
        ),
    )
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
    extensions
        .iter()
        .flat_map(|e| e.trigger_types().into_iter().map(move |t| (e, t)))
}

fn types_of(extensions: &[PlannedExtension]) -> Vec<String> {
    offered(extensions).map(|(_, t)| t.to_owned()).collect()
}

/// `` `acme/a`, `other/b` ``: every trigger type offered, qualified; `no trigger` when
/// there is none.
fn offered_list(extensions: &[PlannedExtension]) -> String {
    let items: Vec<String> = offered(extensions)
        .map(|(e, t)| format!("`{}/{t}`", e.name))
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
    fn a_plugin_runs_its_args_verbatim_in_the_directory_given() {
        let args = ["--from", "curupira-plugins", "curupira-plugins"].map(str::to_owned);
        let launch = plugin_launch(PluginType::Uvx, &args, Path::new("/where/the/host/runs"));
        assert_eq!(
            launch.to_string(),
            "uvx --from curupira-plugins curupira-plugins"
        );
        assert_eq!(launch.cwd, Path::new("/where/the/host/runs"));
        let launch = plugin_launch(
            PluginType::Npx,
            &["-y".to_owned(), "a b".to_owned()],
            Path::new("."),
        );
        assert_eq!(launch.to_string(), "npx -y 'a b'");
        assert!(launch.env.is_empty());
    }

    #[test]
    fn a_plugin_set_aside_for_its_name_does_not_hide_the_extension_of_that_name() {
        let dir = tempfile::tempdir().unwrap();
        let text = "[extensions.local]\nbuiltin = \"local-queue\"\n\n\
                    [plugins.local]\ntype = \"uvx\"\nargs = [\"x\"]\n\n\
                    [automations.a]\ntrigger = \"local/jsonl\"\nprompt = \"p\"\n\n\
                    [automations.b]\ntrigger = \"jsonl\"\nprompt = \"p\"\n";
        let loaded = crate::config::check_bytes(text.as_bytes(), "curupira.toml", dir.path());
        let found: Vec<&str> = loaded
            .report
            .diagnostics()
            .iter()
            .map(|d| d.code.as_ref())
            .collect();
        assert_eq!(found, [codes::DUPLICATE_NAME]);
        let config = loaded.partial.expect("a partial config");
        let (plan, report) = resolve(&config, Path::new("/usr/bin/curupira"));
        assert!(
            report.diagnostics().is_empty(),
            "{:?}",
            report.diagnostics()
        );
        let planned: Vec<(&str, &str, &str)> = plan
            .automations
            .iter()
            .map(|a| {
                (
                    a.name.as_str(),
                    a.extension.as_str(),
                    a.trigger_type.as_str(),
                )
            })
            .collect();
        assert_eq!(planned, [("a", "local", "jsonl"), ("b", "local", "jsonl")]);
        assert!(matches!(plan.extensions[0].origin, Origin::Builtin { .. }));
        assert_eq!(plan.extensions.len(), 1, "the plugin is not started");
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
