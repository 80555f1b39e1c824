//! Installing a package from a ZIP or marketplace `.tgz` into
//! `<data dir>/extensions/<host>/<package name>/` (a scoped `@scope/name` nests like
//! `node_modules`), listing what is installed, and removing it.
//!
//! An install either completes or leaves nothing behind: the archive is listed and
//! checked before anything is written ([`Archive::open`]), unpacked into a temporary
//! `.spirit-install-…` folder inside the host folder, validated there for the host, and
//! only then renamed into place. An id that is already installed is not replaced unless
//! [`InstallOptions::replace`] asks for it; then the old copy is moved aside to a
//! `.spirit-old-…` folder, the new one renamed in, and the old one deleted (or moved back
//! if the new one could not be renamed in). Removal renames the package to a
//! `.spirit-remove-…` folder before deleting it, so a half-deleted package never looks
//! installed. Names starting with `.` in the host folders are never packages.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use curupira_diagnostics::Report;

use crate::archive::{Archive, ArchiveError, Limits};
use crate::{CheckError, Checked, Host, Options, PACKAGE_JSON, PackageJson, check_folder};

/// The folder under the data dir that holds one folder per host.
pub const EXTENSIONS_DIR: &str = "extensions";

/// Where and how to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallOptions {
    /// Spirit's data dir; packages go to `<data_dir>/extensions/<host>/`.
    pub data_dir: PathBuf,
    /// The host installed for: the package's `supportedHosts` must list it.
    pub host: Host,
    /// Replace an installed package with the same id.
    pub replace: bool,
    /// The archive limits (entries, unpacked bytes).
    pub limits: Limits,
}

impl InstallOptions {
    /// Installs for `host` under `data_dir`, never replacing, with the default limits.
    pub fn new(data_dir: impl Into<PathBuf>, host: Host) -> Self {
        Self {
            data_dir: data_dir.into(),
            host,
            replace: false,
            limits: Limits::default(),
        }
    }
}

/// A package that was installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The package name (the extension id).
    pub id: String,
    /// Its version.
    pub version: String,
    /// The folder it was installed to.
    pub path: PathBuf,
    /// Whether it replaced an installed copy.
    pub replaced: bool,
}

/// An installed package folder, checked again for its host.
#[derive(Debug, Clone)]
pub struct InstalledPackage {
    /// The host folder it is in.
    pub host: Host,
    /// The id its folder says (`name` or `@scope/name`).
    pub id: String,
    /// The package folder.
    pub path: PathBuf,
    /// The check of the folder for its host (as [`check_folder`] does).
    pub checked: Checked,
    /// Problems outside the package's own diagnostics: a folder name that differs from
    /// the package's `name` or is not a package name, a folder that could not be read.
    pub problems: Vec<String>,
}

impl InstalledPackage {
    /// The package, when it still validates.
    pub fn package(&self) -> Option<&PackageJson> {
        self.checked.package.as_ref()
    }

    /// Whether the package validates without errors and sits in the folder its name
    /// gives.
    pub fn is_valid(&self) -> bool {
        self.checked.package.is_some() && self.problems.is_empty()
    }
}

/// Why an install, list or removal failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The archive was refused or could not be read or unpacked.
    #[error("the archive `{}` cannot be installed", archive.display())]
    Archive {
        /// The archive.
        archive: PathBuf,
        /// Why.
        source: ArchiveError,
    },
    /// The unpacked package does not validate for the host; nothing was installed.
    #[error(
        "the package in `{}` is not valid for {host} ({} error(s), listed in the report); nothing was installed",
        archive.display(), report.errors()
    )]
    Invalid {
        /// The archive.
        archive: PathBuf,
        /// The host installed for.
        host: Host,
        /// Every diagnostic, files named `<archive>:<path>` (boxed: it is large, and
        /// the other errors are small).
        report: Box<Report>,
    },
    /// The id is installed and replacing was not asked for.
    #[error(
        "`{id}` is already installed for {host} in `{}`; it was left as it is (replace it to install over it: `--replace` on the command line)",
        path.display()
    )]
    AlreadyInstalled {
        /// The package name.
        id: String,
        /// The host.
        host: Host,
        /// The installed folder.
        path: PathBuf,
    },
    /// Nothing is installed under that id.
    #[error("`{id}` is not installed for {host}: there is no folder `{}`", path.display())]
    NotInstalled {
        /// The id asked for.
        id: String,
        /// The host.
        host: Host,
        /// Where it would be.
        path: PathBuf,
    },
    /// The id is not a package name (and could name a path outside the host folder).
    #[error(
        "`{id}` is not a package name; expected `name` or `@scope/name` made of lowercase letters, digits, `.`, `_` and `-`, each part starting with a letter or digit"
    )]
    InvalidId {
        /// The id as given.
        id: String,
    },
    /// A file system operation failed.
    #[error("could not {action} `{}`", path.display())]
    Io {
        /// What was being done (`create the folder`, `rename`, …).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> InstallError {
    let path = path.to_owned();
    move |source| InstallError::Io {
        action,
        path,
        source,
    }
}

/// `<data_dir>/extensions/<host>`.
pub fn host_dir(data_dir: &Path, host: Host) -> PathBuf {
    data_dir.join(EXTENSIONS_DIR).join(host.as_str())
}

/// Whether `id` is a package name: `^(?:@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$`.
/// Such a name never climbs out of a folder: no `..`, no `.`, no absolute path, at most
/// one `/`, after an `@scope`.
pub fn is_valid_id(id: &str) -> bool {
    fn part(text: &str) -> bool {
        let mut chars = text.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && chars.all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
            })
    }
    match id.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(scope, name)| part(scope) && part(name)),
        None => part(id),
    }
}

/// Installs the package in `archive` for `options.host`; see the module documentation
/// for the steps and what is left behind on failure (nothing).
pub fn install(archive: &Path, options: &InstallOptions) -> Result<Installed, InstallError> {
    let host = options.host;
    let refused = |source| InstallError::Archive {
        archive: archive.to_owned(),
        source,
    };
    let opened = Archive::open(archive, options.limits).map_err(refused)?;
    let host_dir = host_dir(&options.data_dir, host);

    // Fail fast on an installed id, before writing anything.
    if !options.replace
        && let Some(id) = declared_name(&opened)
        && exists(&host_dir.join(&id))
    {
        let path = host_dir.join(&id);
        return Err(InstallError::AlreadyInstalled { id, host, path });
    }

    // Folders this install creates are removed again if it fails (declared before the
    // temporary folder, so dropped after it).
    let mut created = CreatedFolders::missing_up_to(&host_dir);
    fs::create_dir_all(&host_dir).map_err(io_error("create the folder", &host_dir))?;
    let unpacked = tempfile::Builder::new()
        .prefix(".spirit-install-")
        .tempdir_in(&host_dir)
        .map_err(io_error("create a temporary folder in", &host_dir))?;
    opened.extract(unpacked.path()).map_err(refused)?;
    drop(opened);

    let checked = check_folder(
        unpacked.path(),
        &Options {
            registry_strict: false,
            host: Some(host),
        },
    )
    .map_err(|CheckError::Read { path, source }| InstallError::Io {
        action: "read",
        path,
        source,
    })?;
    let Some(package) = checked.package else {
        return Err(InstallError::Invalid {
            archive: archive.to_owned(),
            host,
            report: Box::new(rename_files(checked.report, unpacked.path(), archive)),
        });
    };
    let id = package.name;
    if !is_valid_id(&id) {
        return Err(InstallError::InvalidId { id });
    }
    let target = host_dir.join(&id);
    let parent = target.parent().unwrap_or(&host_dir).to_owned();
    let made_scope = parent != host_dir && !exists(&parent);
    let result = move_into_place(&unpacked, &target, &host_dir, options.replace);
    match result {
        Ok(replaced) => {
            // The folder is in place: nothing left to clean up.
            let _ = unpacked.keep();
            created.keep();
            Ok(Installed {
                id,
                version: package.version,
                path: target,
                replaced,
            })
        }
        Err(error) => {
            drop(unpacked);
            if made_scope {
                // Only succeeds when empty.
                let _ = fs::remove_dir(&parent);
            }
            Err(match error {
                Placed::Exists => InstallError::AlreadyInstalled {
                    id,
                    host,
                    path: target,
                },
                Placed::Io(error) => error,
            })
        }
    }
}

/// The folders an install had to create (`<data_dir>/extensions/<host>` and whichever
/// of its parents were missing), removed on drop — each only if empty — unless kept.
struct CreatedFolders(Vec<PathBuf>);

impl CreatedFolders {
    /// `folder` and its missing ancestors, deepest first.
    fn missing_up_to(folder: &Path) -> Self {
        let missing = folder
            .ancestors()
            .take_while(|ancestor| !ancestor.as_os_str().is_empty() && !exists(ancestor))
            .map(Path::to_path_buf)
            .collect();
        Self(missing)
    }

    fn keep(&mut self) {
        self.0.clear();
    }
}

impl Drop for CreatedFolders {
    fn drop(&mut self) {
        for folder in &self.0 {
            // Fails, harmlessly, when something else put a file there meanwhile.
            let _ = fs::remove_dir(folder);
        }
    }
}

/// Why the unpacked folder could not be moved into place.
enum Placed {
    Exists,
    Io(InstallError),
}

/// Renames `unpacked` to `target`, moving an existing `target` aside first when
/// `replace`; `Ok(true)` when a copy was replaced.
fn move_into_place(
    unpacked: &tempfile::TempDir,
    target: &Path,
    host_dir: &Path,
    replace: bool,
) -> Result<bool, Placed> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // A temporary folder is private (0o700); an installed one is not.
        fs::set_permissions(unpacked.path(), fs::Permissions::from_mode(0o755)).map_err(
            |source| {
                Placed::Io(InstallError::Io {
                    action: "set the permissions of",
                    path: unpacked.path().to_owned(),
                    source,
                })
            },
        )?;
    }
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent)
            .map_err(|source| Placed::Io(io_error("create the folder", parent)(source)))?;
    }
    let rename_in = || {
        fs::rename(unpacked.path(), target).map_err(|source| {
            if matches!(
                source.kind(),
                io::ErrorKind::AlreadyExists | io::ErrorKind::DirectoryNotEmpty
            ) {
                Placed::Exists
            } else {
                Placed::Io(InstallError::Io {
                    action: "move the unpacked package to",
                    path: target.to_owned(),
                    source,
                })
            }
        })
    };
    if !exists(target) {
        return rename_in().map(|()| false);
    }
    if !replace {
        return Err(Placed::Exists);
    }
    let old = tempfile::Builder::new()
        .prefix(".spirit-old-")
        .tempdir_in(host_dir)
        .map_err(|source| Placed::Io(io_error("create a temporary folder in", host_dir)(source)))?;
    let aside = old.path().join("package");
    fs::rename(target, &aside).map_err(|source| {
        Placed::Io(InstallError::Io {
            action: "move the installed copy aside from",
            path: target.to_owned(),
            source,
        })
    })?;
    match rename_in() {
        Ok(()) => {
            // Best effort: the new copy is in place whatever happens to the old one.
            let _ = old.close();
            Ok(true)
        }
        Err(error) => {
            if fs::rename(&aside, target).is_err() {
                // Keep the old copy rather than delete the only one left.
                let _ = old.keep();
            }
            Err(error)
        }
    }
}

/// The `name` of the archive's `package.json`, when it is readable and a package name.
fn declared_name(archive: &Archive) -> Option<String> {
    use crate::PackageFiles;
    let path = crate::RelativePath::parse(PACKAGE_JSON).ok()?;
    let bytes = archive.read(&path, crate::files::MAX_JSON_BYTES).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let name = value.get("name")?.as_str()?;
    is_valid_id(name).then(|| name.to_owned())
}

/// Whether something (even a dangling link) is at `path`.
fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// The report with `<unpacked>/x` file names shown as `<archive>:x`.
fn rename_files(report: Report, unpacked: &Path, archive: &Path) -> Report {
    let prefix = format!("{}/", unpacked.display());
    let archive = archive.display().to_string();
    let rename = |file: &str| match file.strip_prefix(&prefix) {
        Some(rest) => format!("{archive}:{rest}"),
        None => file.to_owned(),
    };
    let mut renamed = Report::new();
    for file in report.files() {
        match report.source(file) {
            Some(text) => renamed.add_source(rename(file), text),
            None => renamed.add_file(rename(file)),
        }
    }
    renamed.extend(report.diagnostics().iter().cloned().map(|mut diagnostic| {
        diagnostic.file = rename(&diagnostic.file);
        diagnostic
    }));
    renamed
}

/// Every installed package folder for `host` (or every host), checked again, sorted by
/// host then id. A missing extensions folder is an empty list.
pub fn list(data_dir: &Path, host: Option<Host>) -> Result<Vec<InstalledPackage>, InstallError> {
    let hosts = host.map_or_else(|| Host::ALL.to_vec(), |host| vec![host]);
    let mut found = Vec::new();
    for host in hosts {
        let dir = host_dir(data_dir, host);
        for name in folders(&dir)? {
            if name.starts_with('@') {
                for inner in folders(&dir.join(&name))? {
                    let id = format!("{name}/{inner}");
                    found.push(installed(host, id, dir.join(&name).join(&inner)));
                }
            } else {
                let path = dir.join(&name);
                found.push(installed(host, name, path));
            }
        }
    }
    found.sort_by(|a, b| (a.host, &a.id).cmp(&(b.host, &b.id)));
    Ok(found)
}

/// The names of the folders (or links to folders) in `dir` not starting with `.`; none
/// when `dir` does not exist.
fn folders(dir: &Path) -> Result<Vec<String>, InstallError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(io_error("read the folder", dir)(source)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_error("read the folder", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if fs::metadata(entry.path()).is_ok_and(|meta| meta.is_dir()) {
            names.push(name);
        }
    }
    Ok(names)
}

fn installed(host: Host, id: String, path: PathBuf) -> InstalledPackage {
    let mut problems = Vec::new();
    if !is_valid_id(&id) {
        problems.push(format!(
            "the folder name `{id}` is not a package name; expected `name` or `@scope/name` in lowercase"
        ));
    }
    let checked = match check_folder(
        &path,
        &Options {
            registry_strict: false,
            host: Some(host),
        },
    ) {
        Ok(checked) => checked,
        Err(CheckError::Read { path, source }) => {
            problems.push(format!("could not read `{}`: {source}", path.display()));
            Checked {
                package: None,
                hooks: None,
                report: Report::new(),
            }
        }
    };
    if let Some(package) = &checked.package
        && package.name != id
    {
        problems.push(format!(
            "the folder is named `{id}` but its package.json `name` is `{}`; reinstall the package",
            package.name
        ));
    }
    InstalledPackage {
        host,
        id,
        path,
        checked,
        problems,
    }
}

/// Removes the package `id` installed for `host` and returns the folder it was in.
pub fn remove(data_dir: &Path, host: Host, id: &str) -> Result<PathBuf, InstallError> {
    if !is_valid_id(id) {
        return Err(InstallError::InvalidId { id: id.to_owned() });
    }
    let host_dir = host_dir(data_dir, host);
    let target = host_dir.join(id);
    if !exists(&target) {
        return Err(InstallError::NotInstalled {
            id: id.to_owned(),
            host,
            path: target,
        });
    }
    let trash = tempfile::Builder::new()
        .prefix(".spirit-remove-")
        .tempdir_in(&host_dir)
        .map_err(io_error("create a temporary folder in", &host_dir))?;
    fs::rename(&target, trash.path().join("package"))
        .map_err(io_error("move aside the package folder", &target))?;
    let trash_path = trash.path().to_owned();
    trash
        .close()
        .map_err(io_error("delete the removed package in", &trash_path))?;
    if let Some((scope, _)) = id.split_once('/') {
        // Only succeeds when the scope folder is empty.
        let _ = fs::remove_dir(host_dir.join(scope));
    }
    Ok(target)
}
