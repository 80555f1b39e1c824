//! Installed extensions, kept as the reference host keeps them: one manifest per
//! extension in `~/.curupira/extensions/<name>/curupira-extension.toml`, so that either
//! host sees what the other installed (`curupira plugins install | info | uninstall`,
//! recorded in `recordings/reference-host/plugins.json`).
//!
//! A source is `pip:PKG[==V]` (the manifest asked of `uvx --from PKG[==V] python -m
//! <PKG with `_` for `-`> --curupira-print-manifest`), `npm:PKG[@V]` (`npx --yes
//! PKG[@V] --curupira-print-manifest`) or `path:DIR` (`DIR/curupira-extension.toml`,
//! relative to the working directory). Each manifest is checked with this host's
//! manifest rules before anything is written. A package's manifest is written as the
//! reference writes it (re-serialized: its keys in the reference's order, the defaults
//! it adds, `agent_providers = []`, `args = []`, `[capabilities] permissions = []`); a
//! folder's is copied as it is. The file is replaced atomically.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use curupira_client::LaunchCommand;
use curupira_client::print_manifest::print_manifest;
use curupira_diagnostics::Report;

/// The manifest's file name, in a folder and in the store.
pub const MANIFEST_FILE: &str = "curupira-extension.toml";

/// The longest a package may take to print its manifest (a first `uvx` or `npx`
/// downloads it).
pub const FETCH_LIMIT: Duration = Duration::from_secs(300);

/// Where an extension comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `pip:PKG[==V]`: `spec` as written after `pip:`, `package` its name.
    Pip {
        /// `PKG` or `PKG==V`.
        spec: String,
        /// `PKG`.
        package: String,
    },
    /// `npm:PKG[@V]`: `spec` as written after `npm:`.
    Npm {
        /// `PKG` or `PKG@V` (a scope included: `@acme/ext@1.0.0`).
        spec: String,
    },
    /// `path:DIR`.
    Path(PathBuf),
}

/// Why an install, an `info` or an `uninstall` failed: one sentence each.
#[derive(Debug, thiserror::Error)]
pub enum InstalledError {
    /// The source has none of the three prefixes.
    #[error(
        "unsupported extension source {0:?}; use pip:<package>[==<version>], \
         npm:<package>[@<version>] or path:<folder>"
    )]
    Source(String),
    /// The source names nothing after its prefix.
    #[error("the extension source {0:?} names no package or folder after its prefix")]
    Empty(String),
    /// No home folder to keep installs in.
    #[error("no home folder (HOME is not set), so there is no ~/.curupira/extensions/")]
    NoHome,
    /// The package's program could not start or did not print a manifest.
    #[error("cannot get the manifest of {from}: {reason}")]
    Fetch {
        /// The source, as written.
        from: String,
        /// What went wrong.
        reason: String,
    },
    /// A folder's manifest cannot be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
    /// The manifest does not pass this host's rules (its diagnostics, rendered).
    #[error("the manifest of {from} has errors; nothing was installed")]
    Invalid {
        /// The source, as written.
        from: String,
        /// The diagnostics.
        report: Box<Report>,
    },
    /// `info` or `uninstall` of a name that is not installed.
    #[error("extension {0:?} is not installed (see `curupira plugins list`)")]
    NotInstalled(String),
    /// The store cannot be written or removed from.
    #[error("cannot write {path}: {error}")]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
}

impl Source {
    /// Reads `pip:…`, `npm:…` or `path:…`.
    pub fn parse(text: &str) -> Result<Source, InstalledError> {
        let (kind, rest) = text
            .split_once(':')
            .ok_or_else(|| InstalledError::Source(text.to_owned()))?;
        if rest.is_empty() && matches!(kind, "pip" | "npm" | "path") {
            return Err(InstalledError::Empty(text.to_owned()));
        }
        match kind {
            "pip" => Ok(Source::Pip {
                spec: rest.to_owned(),
                package: rest.split("==").next().unwrap_or(rest).to_owned(),
            }),
            "npm" => Ok(Source::Npm {
                spec: rest.to_owned(),
            }),
            "path" => Ok(Source::Path(PathBuf::from(rest))),
            _ => Err(InstalledError::Source(text.to_owned())),
        }
    }
}

/// The store: `home/.curupira/extensions`.
pub fn store(home: Option<&Path>) -> Result<PathBuf, InstalledError> {
    let home = home.ok_or(InstalledError::NoHome)?;
    Ok(home.join(".curupira").join("extensions"))
}

/// The command that prints a package's manifest (without the flag, which
/// [`print_manifest`] adds), run in `cwd`; `None` for a folder.
pub fn manifest_command(source: &Source, cwd: &Path) -> Option<LaunchCommand> {
    match source {
        Source::Pip { spec, package } => Some(pip_command(spec, package, cwd)),
        Source::Npm { spec } => Some(npm_command(spec, cwd)),
        Source::Path(_) => None,
    }
}

/// `uvx --from SPEC python -m MODULE`.
fn pip_command(spec: &str, package: &str, cwd: &Path) -> LaunchCommand {
    LaunchCommand::new("uvx", cwd)
        .arg("--from")
        .arg(spec)
        .arg("python")
        .arg("-m")
        .arg(package.replace('-', "_"))
}

/// `npx --yes SPEC`.
fn npm_command(spec: &str, cwd: &Path) -> LaunchCommand {
    LaunchCommand::new("npx", cwd).arg("--yes").arg(spec)
}

/// The manifest `source` gives (its text, checked), and the text to keep for it.
/// `written` is the source as the user wrote it, for messages.
pub fn fetch(source: &Source, written: &str, cwd: &Path) -> Result<Fetched, InstalledError> {
    let text = match source {
        Source::Pip { spec, package } => printed(&pip_command(spec, package, cwd), written)?,
        Source::Npm { spec } => printed(&npm_command(spec, cwd), written)?,
        Source::Path(dir) => {
            let path = cwd.join(dir).join(MANIFEST_FILE);
            fs::read(&path).map_err(|error| InstalledError::Read { path, error })?
        }
    };
    let file = match source {
        Source::Path(dir) => dir.join(MANIFEST_FILE).display().to_string(),
        _ => format!("{written} --curupira-print-manifest"),
    };
    let checked = curupira_manifest::check_bytes(&text, &file);
    let Some(manifest) = checked.manifest else {
        return Err(InstalledError::Invalid {
            from: written.to_owned(),
            report: Box::new(checked.report),
        });
    };
    let kept = match source {
        Source::Path(_) => String::from_utf8_lossy(&text).into_owned(),
        _ => normalized(
            &String::from_utf8_lossy(&text),
            matches!(source, Source::Npm { .. }),
        ),
    };
    Ok(Fetched {
        name: manifest.name.to_string(),
        kept,
        warnings: checked.report,
    })
}

/// What `command --curupira-print-manifest` printed on stdout, when it exited 0.
fn printed(command: &LaunchCommand, written: &str) -> Result<Vec<u8>, InstalledError> {
    let failed = |reason: String| InstalledError::Fetch {
        from: written.to_owned(),
        reason,
    };
    let printed = print_manifest(command, FETCH_LIMIT)
        .map_err(|error| failed(command.start_failure(&error)))?;
    match printed.status {
        Some(status) if status.success() => Ok(printed.stdout),
        Some(status) => {
            let said = printed.stderr.trim();
            Err(failed(if said.is_empty() {
                format!("`{command}` exited with {status}")
            } else {
                format!("`{command}` exited with {status}: {said}")
            }))
        }
        None => Err(failed(format!(
            "`{command}` printed no manifest within {} s and was stopped",
            FETCH_LIMIT.as_secs()
        ))),
    }
}

/// A fetched manifest.
#[derive(Debug)]
pub struct Fetched {
    /// The extension's name: the folder it is kept in.
    pub name: String,
    /// The text to keep.
    pub kept: String,
    /// The checker's warnings (no errors).
    pub warnings: Report,
}

/// The manifest `text` (checked already) as the reference host writes a package's
/// and prints any (`plugins info`): its keys in the reference's order with the
/// defaults it adds; the tables' other keys kept, the file's other top-level keys
/// (`description`) left out, as there; for an npm package, without `[launch]
/// executable` (which the reference drops there).
pub fn normalized(text: &str, npm: bool) -> String {
    let Ok(mut table) = text.parse::<toml::Table>() else {
        return text.to_owned();
    };
    let mut take = |key: &str| table.remove(key);
    let empty = || toml::Value::Array(Vec::new());
    let mut launch = match take("launch") {
        Some(toml::Value::Table(launch)) => launch,
        _ => toml::Table::new(),
    };
    if npm {
        launch.remove("executable");
    }
    let mut capabilities = match take("capabilities") {
        Some(toml::Value::Table(capabilities)) => capabilities,
        _ => toml::Table::new(),
    };
    let kept = Kept {
        manifest_version: take("manifest_version"),
        name: take("name"),
        version: take("version"),
        protocol_version: take("protocol_version"),
        runtime: take("runtime"),
        kind: take("kind"),
        trigger_types: take("trigger_types"),
        agent_providers: take("agent_providers").unwrap_or_else(empty),
        launch: KeptLaunch {
            kind: launch.remove("type"),
            package: launch.remove("package"),
            executable: launch.remove("executable"),
            program: launch.remove("program"),
            args: launch.remove("args").unwrap_or_else(empty),
            rest: launch,
        },
        package: match take("package") {
            Some(toml::Value::Table(mut package)) => Some(KeptPackage {
                source: package.remove("source"),
                name: package.remove("name"),
                version: package.remove("version"),
                rest: package,
            }),
            _ => None,
        },
        capabilities: KeptCapabilities {
            permissions: capabilities.remove("permissions").unwrap_or_else(empty),
            rest: capabilities,
        },
    };
    // Other top-level keys (`description`, …) are not the reference's: it leaves them
    // out, and so does this.
    drop(table);
    toml::to_string_pretty(&kept).unwrap_or_else(|_| text.to_owned())
}

/// A package's manifest in the order the reference host writes it.
#[derive(serde::Serialize)]
struct Kept {
    #[serde(skip_serializing_if = "Option::is_none")]
    manifest_version: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol_version: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trigger_types: Option<toml::Value>,
    agent_providers: toml::Value,
    launch: KeptLaunch,
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<KeptPackage>,
    capabilities: KeptCapabilities,
}

/// `[package]` as the reference writes it.
#[derive(serde::Serialize)]
struct KeptPackage {
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<toml::Value>,
    #[serde(flatten)]
    rest: toml::Table,
}

/// `[launch]` as the reference writes it.
#[derive(serde::Serialize)]
struct KeptLaunch {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    executable: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    program: Option<toml::Value>,
    /// Other keys (`version`, `bin`, …), as written.
    #[serde(flatten)]
    rest: toml::Table,
    args: toml::Value,
}

/// `[capabilities]` as the reference writes it.
#[derive(serde::Serialize)]
struct KeptCapabilities {
    permissions: toml::Value,
    #[serde(flatten)]
    rest: toml::Table,
}

/// Keeps `fetched` in `store`, replacing what was kept under its name; the file.
pub fn install(store: &Path, fetched: &Fetched) -> Result<PathBuf, InstalledError> {
    let dir = store.join(&fetched.name);
    let path = dir.join(MANIFEST_FILE);
    let failed = |path: &Path, error| InstalledError::Write {
        path: path.to_path_buf(),
        error,
    };
    fs::create_dir_all(&dir).map_err(|error| failed(&dir, error))?;
    let partial = dir.join(format!(".{MANIFEST_FILE}.partial"));
    fs::write(&partial, &fetched.kept).map_err(|error| failed(&partial, error))?;
    fs::rename(&partial, &path).map_err(|error| failed(&path, error))?;
    Ok(path)
}

/// The kept manifest of `name` as the reference host prints it ([`normalized`]).
pub fn info(store: &Path, name: &str) -> Result<String, InstalledError> {
    let path = kept_path(store, name)?;
    let text = fs::read_to_string(&path).map_err(|error| InstalledError::Read { path, error })?;
    Ok(normalized(&text, false))
}

/// Removes the kept manifest of `name` (its folder).
pub fn uninstall(store: &Path, name: &str) -> Result<(), InstalledError> {
    let path = kept_path(store, name)?;
    let dir = path.parent().unwrap_or(store).to_path_buf();
    fs::remove_dir_all(&dir).map_err(|error| InstalledError::Write { path: dir, error })
}

/// One installed extension, as `plugins list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// Its name (its folder in the store).
    pub name: String,
    /// Its version.
    pub version: String,
    /// The trigger types it offers.
    pub trigger_types: Vec<String>,
    /// Its kept manifest.
    pub path: PathBuf,
}

/// Every extension of `store` whose kept manifest passes this host's rules, by name;
/// and a sentence for each one that does not (it is left out).
pub fn list(store: &Path) -> (Vec<Installed>, Vec<String>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let Ok(entries) = fs::read_dir(store) else {
        return (found, problems);
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    dirs.sort();
    for dir in dirs {
        let path = dir.join(MANIFEST_FILE);
        let Ok(bytes) = fs::read(&path) else {
            continue;
        };
        let checked = curupira_manifest::check_bytes(&bytes, &path.display().to_string());
        match checked.manifest {
            Some(manifest) => found.push(Installed {
                name: manifest.name.to_string(),
                version: manifest.version.to_string(),
                trigger_types: manifest
                    .trigger_types
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                path,
            }),
            None => problems.push(format!(
                "the installed manifest {} has errors (see `curupira manifest check {}`); it is \
                 left out",
                path.display(),
                path.display()
            )),
        }
    }
    (found, problems)
}

/// The reference host's `plugins list` lines (tab-separated: the trigger type or
/// `agent:PROVIDER`, who offers it, then its prompt fields or program), for this
/// host (`curupira VERSION (built-in)`): the built-in `cron`, the agent providers,
/// then every installed trigger type, by name.
pub fn reference_lines(installed: &[Installed], version: &str) -> Vec<String> {
    let mut providers: Vec<(&str, &str)> = curupira_agents::Provider::ALL
        .iter()
        .map(|provider| (provider.name(), provider.spec().program))
        .collect();
    providers.sort_unstable();
    let mut lines = vec![format!(
        "{}\tcurupira {version} (built-in)\tprompt fields: -",
        curupira_cron::TRIGGER_TYPE
    )];
    lines.extend(providers.into_iter().map(|(name, program)| {
        format!("agent:{name}\tcurupira {version} (built-in)\texecutable: {program}")
    }));
    let mut triggers: Vec<String> = installed
        .iter()
        .flat_map(|ext| {
            ext.trigger_types.iter().map(move |trigger| {
                format!(
                    "{trigger}\t{} {}\tprompt fields: (see extension)",
                    ext.name, ext.version
                )
            })
        })
        .collect();
    triggers.sort();
    lines.extend(triggers);
    lines
}

/// The file of an installed `name`; an error when there is none (or the name is not
/// one folder's).
fn kept_path(store: &Path, name: &str) -> Result<PathBuf, InstalledError> {
    let single = !name.is_empty()
        && Path::new(name).components().count() == 1
        && !matches!(name, "." | "..");
    let path = store.join(name).join(MANIFEST_FILE);
    if single && path.is_file() {
        Ok(path)
    } else {
        Err(InstalledError::NotInstalled(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn sources_are_read_as_the_reference_reads_them() {
        assert_eq!(
            Source::parse("pip:curupira-plugins==0.1.0").unwrap(),
            Source::Pip {
                spec: "curupira-plugins==0.1.0".into(),
                package: "curupira-plugins".into()
            }
        );
        assert_eq!(
            Source::parse("npm:@acme/ext@1.0.0").unwrap(),
            Source::Npm {
                spec: "@acme/ext@1.0.0".into()
            }
        );
        assert_eq!(
            Source::parse("path:../x").unwrap(),
            Source::Path("../x".into())
        );
        for bad in ["git:https://example.invalid/x", "curupira-plugins"] {
            assert!(
                matches!(Source::parse(bad), Err(InstalledError::Source(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Source::parse("pip:"),
            Err(InstalledError::Empty(_))
        ));
        let command =
            manifest_command(&Source::parse("pip:a-b==1").unwrap(), Path::new("/")).unwrap();
        assert_eq!(command.program, Path::new("uvx"));
        assert_eq!(command.args, ["--from", "a-b==1", "python", "-m", "a_b"]);
    }

    #[test]
    fn names_outside_the_store_are_never_installed() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(MANIFEST_FILE), "x").unwrap();
        for name in ["", ".", "..", "../x", "a/b"] {
            assert!(matches!(
                info(&dir.path().join("store"), name),
                Err(InstalledError::NotInstalled(_))
            ));
        }
    }
}
