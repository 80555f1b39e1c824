//! Installing a package from a ZIP or marketplace `.tgz` into a Spirit data folder in
//! the Spirit app's own layout, listing and removing what is installed there (by the
//! app or by us), the app's per-extension settings file, and moving installs of the old
//! `<name>/` and `@scope/name/` layout into the app's.
//!
//! The app's layout, per host (`<data dir>/extensions/<host>/`, [`host_dir`]):
//! - `pkg-<base64url(id), no padding>/` ([`directory_name`]): the package root;
//! - `extensions.json` ([`INDEX_FILE`]): `{"entries": [{"id", "directoryName",
//!   "installedAtUnixMs", "archiveFileName"?, "installSource"?}]}` sorted by id,
//!   pretty-printed with two spaces and a final newline ([`IndexEntry`]);
//! - `extension-state/` ([`STATE_DIR`]): `ext-<base64url(id)>.json` holds the stored
//!   setting values as a plain JSON object ([`settings_file`]); removing a package
//!   leaves it in place.
//!
//! The app reads a package as every direct sub-folder of the host folder that holds a
//! `package.json`, keyed by its manifest `name` whatever the folder is called; a
//! scoped `@scope/name/` folder (our old layout) is one level too deep for it.
//! [`list`] reads the same folders, plus the old layout's scoped folders (marked
//! [`Layout::Legacy`], as is every direct folder not named [`directory_name`]);
//! [`sync_index`] lists and rewrites `extensions.json` as the app's listing does.
//!
//! An install either completes or leaves nothing but what the app leaves: for a ZIP the
//! host folder and its `extension-state/` (the app makes them before it reads the
//! archive), for a `.tgz` nothing unless the archive could be listed. The archive is
//! listed and checked before anything is written ([`Archive::open`]), unpacked into
//! `.spirit-install-…/package/` inside the host folder (one level down, so that the app
//! never lists it), validated there for the host, and only then renamed into place; the
//! index is written to a temporary file and renamed over `extensions.json`, and the
//! package is moved out again if that fails. A ZIP never replaces an installed id (the
//! app's "already exists; remove it before importing") unless
//! [`InstallOptions::replace`] asks for it; a marketplace `.tgz` always does. A
//! replaced copy — and any other direct folder the app would read as the same id — is
//! moved to `.spirit-old-…` and deleted once the new copy is in place (moved back if it
//! could not be). Names starting with `.` in the host folder are never packages.

use curupira_diagnostics::js::JsTrim;
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use curupira_diagnostics::Report;
use serde_json::{Map, Value};

use crate::archive::{Archive, ArchiveError, Format, Limits};
use crate::{CheckError, Checked, Host, Options, PACKAGE_JSON, PackageJson, check_folder};

/// The folder under the data dir that holds one folder per host.
pub const EXTENSIONS_DIR: &str = "extensions";

/// The app's index of installed packages in each host folder.
pub const INDEX_FILE: &str = "extensions.json";

/// The app's folder of per-extension state (settings) in each host folder.
pub const STATE_DIR: &str = "extension-state";

/// Where and how to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallOptions {
    /// Spirit's data dir; packages go to `<data_dir>/extensions/<host>/`.
    pub data_dir: PathBuf,
    /// The host installed for: the package's `supportedHosts` must list it.
    pub host: Host,
    /// Replace an installed package with the same id even from a ZIP (a marketplace
    /// `.tgz` always replaces, as in the app).
    pub replace: bool,
    /// The archive limits (entries, unpacked bytes).
    pub limits: Limits,
}

impl InstallOptions {
    /// Installs for `host` under `data_dir`, replacing only from a `.tgz`, with the
    /// default limits.
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
    /// The folder it was installed to (`<host dir>/pkg-…`).
    pub path: PathBuf,
    /// Whether it replaced an installed copy.
    pub replaced: bool,
    /// The entry written to `extensions.json`.
    pub entry: IndexEntry,
}

/// How a package came to be installed, as `extensions.json` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallSource {
    /// A ZIP import (`"archive"`).
    Archive,
    /// A marketplace tarball (`"marketplace"`).
    Marketplace,
}

impl InstallSource {
    /// The value in `extensions.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            InstallSource::Archive => "archive",
            InstallSource::Marketplace => "marketplace",
        }
    }
}

/// One entry of `extensions.json`. Members other than these are dropped when the index
/// is rewritten by a listing, as the app drops them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    /// The extension id (package name).
    pub id: String,
    /// The folder's name in the host folder.
    pub directory_name: String,
    /// When it was installed (milliseconds since 1970; a listed folder with no entry
    /// gets its modification time).
    pub installed_at_unix_ms: u64,
    /// The archive's file name, when it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_file_name: Option<String>,
    /// `archive`, `marketplace` (or whatever the app wrote), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_source: Option<String>,
}

/// Which layout an installed folder is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The app's: a direct sub-folder named [`directory_name`] of its id.
    App,
    /// Our old layout (`<name>/`, or `@scope/name/`, which the app does not see), or
    /// any other direct folder not named after its id: [`migrate`] moves it.
    Legacy,
}

/// An installed package folder, checked again for its host.
#[derive(Debug, Clone)]
pub struct InstalledPackage {
    /// The host folder it is in.
    pub host: Host,
    /// Its id: the manifest's `name` (for an unreadable manifest, the folder name).
    pub id: String,
    /// The folder's path relative to the host folder (`pkg-…`, `plain-ext`,
    /// `@scope/name`).
    pub directory_name: String,
    /// The package folder.
    pub path: PathBuf,
    /// Its layout.
    pub layout: Layout,
    /// Whether the app sees it (a direct sub-folder whose `package.json` names a
    /// package); a scoped folder of the old layout is not seen.
    pub seen_by_app: bool,
    /// Its `extensions.json` entry, when it has one.
    pub entry: Option<IndexEntry>,
    /// The check of the folder for its host (as [`check_folder`] does).
    pub checked: Checked,
    /// The package as the app loads it: the checked package, or, when the check found
    /// only errors the app installs anyway (it breaks at run time: tools without
    /// `main`, a `main` that is a folder, …), the manifest read as the app reads it.
    pub loaded: Option<PackageJson>,
    /// Problems outside the package's own diagnostics: an unreadable manifest, another
    /// folder holding the same id.
    pub problems: Vec<String>,
}

impl InstalledPackage {
    /// The package, when it still validates.
    pub fn package(&self) -> Option<&PackageJson> {
        self.checked.package.as_ref()
    }

    /// The package as the app loads it ([`loaded`](Self::loaded)): what names its tools
    /// among the installed ones, even when it does not validate.
    pub fn loaded(&self) -> Option<&PackageJson> {
        self.loaded.as_ref()
    }

    /// Whether the package validates without errors and nothing else is wrong with it.
    pub fn is_valid(&self) -> bool {
        self.checked.package.is_some() && self.problems.is_empty()
    }
}

/// A folder [`migrate`] moved, or left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The host folder.
    pub host: Host,
    /// The id.
    pub id: String,
    /// Where it was.
    pub from: PathBuf,
    /// Where it is now (`<host dir>/pkg-…`), or `None` when it was left.
    pub to: Option<PathBuf>,
    /// Why it was left, when it was.
    pub skipped: Option<String>,
}

/// Why an install, list, removal or migration failed.
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
    /// The id is installed and the ZIP may not replace it.
    #[error(
        "`{id}` is already installed for {host} in `{}`; it was left as it is (remove it first, or install with `--replace`)",
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
    #[error(
        "`{id}` is not installed for {host}: no folder in `{}` holds a package.json named `{id}`",
        path.display()
    )]
    NotInstalled {
        /// The id asked for.
        id: String,
        /// The host.
        host: Host,
        /// The host folder.
        path: PathBuf,
    },
    /// The id is not a package name.
    #[error(
        "`{id}` is not a package name; expected `name` or `@scope/name` made of lowercase letters, digits, `.`, `_` and `-`, each part starting with a letter or digit"
    )]
    InvalidId {
        /// The id as given.
        id: String,
    },
    /// The package's settings file is not a JSON object.
    #[error(
        "the settings file `{}` is not a JSON object of setting values: {detail}",
        path.display()
    )]
    BadSettingsFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
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

/// `<data_dir>/extensions/<host>/extensions.json`.
pub fn index_file(data_dir: &Path, host: Host) -> PathBuf {
    host_dir(data_dir, host).join(INDEX_FILE)
}

/// `base64url(id)` without padding, as the app names folders and state files.
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        let sextets = chunk.len() + 1;
        for i in 0..sextets {
            let index = (n >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(ALPHABET[index as usize]));
        }
    }
    out
}

/// The app's folder name for `id`: `pkg-` and the id's UTF-8 bytes in unpadded
/// base64url.
///
/// ```
/// use spirit_manifest::install::directory_name;
///
/// assert_eq!(directory_name("@example/spirit-extension"), "pkg-QGV4YW1wbGUvc3Bpcml0LWV4dGVuc2lvbg");
/// assert_eq!(directory_name("plain-ext"), "pkg-cGxhaW4tZXh0");
/// ```
pub fn directory_name(id: &str) -> String {
    format!("pkg-{}", base64url(id.as_bytes()))
}

/// `<data_dir>/extensions/<host>/extension-state/ext-<base64url(id)>.json`: the stored
/// setting values of `id`, as the app keeps them.
pub fn settings_file(data_dir: &Path, host: Host, id: &str) -> PathBuf {
    host_dir(data_dir, host)
        .join(STATE_DIR)
        .join(format!("ext-{}.json", base64url(id.as_bytes())))
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

fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

fn mtime_unix_ms(path: &Path) -> u64 {
    fs::metadata(path)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

/// Installs the package in `archive` for `options.host`; see the module documentation
/// for the steps and what is left behind on failure.
pub fn install(archive: &Path, options: &InstallOptions) -> Result<Installed, InstallError> {
    let host = options.host;
    let refused = |source| InstallError::Archive {
        archive: archive.to_owned(),
        source,
    };
    let host_dir = host_dir(&options.data_dir, host);
    let state_dir = host_dir.join(STATE_DIR);
    // The app makes the host folder and its state folder before it reads a ZIP; for a
    // tarball, once it is unpacked. Both are what a refused install may leave.
    // An empty file is a ZIP to the app's import ("The extension ZIP is empty.").
    let format = match crate::archive::sniff_path(archive) {
        Ok(format) => Some(format),
        Err(ArchiveError::Empty) => None,
        Err(error) => return Err(refused(error)),
    };
    if format != Some(Format::TarGz) {
        fs::create_dir_all(&state_dir).map_err(io_error("create the folder", &state_dir))?;
    }
    if format.is_none() {
        return Err(refused(ArchiveError::Empty));
    }
    let opened = Archive::open(archive, options.limits).map_err(refused)?;
    fs::create_dir_all(&state_dir).map_err(io_error("create the folder", &state_dir))?;
    let (source, replace) = match opened.format() {
        Format::Zip => (InstallSource::Archive, options.replace),
        Format::TarGz => (InstallSource::Marketplace, true),
    };

    // Fail fast on an installed id, before unpacking anything.
    let index = read_index(&host_dir.join(INDEX_FILE));
    if !replace
        && let Some(id) = declared_name(&opened)
        && let Some(path) = installed_path(&host_dir, &index, &id)?
    {
        return Err(InstallError::AlreadyInstalled { id, host, path });
    }

    let staging = tempfile::Builder::new()
        .prefix(".spirit-install-")
        .tempdir_in(&host_dir)
        .map_err(io_error("create a temporary folder in", &host_dir))?;
    let unpacked = staging.path().join("package");
    fs::create_dir(&unpacked).map_err(io_error("create the folder", &unpacked))?;
    opened.extract(&unpacked).map_err(refused)?;
    drop(opened);

    let checked = check_folder(
        &unpacked,
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
            report: Box::new(rename_files(checked.report, &unpacked, archive)),
        });
    };
    let id = package.name;
    if !is_valid_id(&id) {
        return Err(InstallError::InvalidId { id });
    }
    if !replace && let Some(path) = installed_path(&host_dir, &index, &id)? {
        return Err(InstallError::AlreadyInstalled { id, host, path });
    }
    let name = directory_name(&id);
    let target = host_dir.join(&name);
    // Every other direct folder the app reads as this id goes too: one id, one folder.
    let mut aside: Vec<PathBuf> = app_folders(&host_dir)?
        .into_iter()
        .filter(|(folder, folder_id)| folder_id == &id && folder != &name)
        .map(|(folder, _)| host_dir.join(folder))
        .collect();
    if exists(&target) {
        aside.push(target.clone());
    }
    let replaced = !aside.is_empty();
    let entry = IndexEntry {
        id: id.clone(),
        directory_name: name,
        installed_at_unix_ms: now_unix_ms(),
        archive_file_name: archive
            .file_name()
            .map(|file| file.to_string_lossy().js_trim().to_owned())
            .filter(|file| !file.is_empty()),
        install_source: Some(source.as_str().to_owned()),
    };
    set_installed_mode(&unpacked)?;

    let old = tempfile::Builder::new()
        .prefix(".spirit-old-")
        .tempdir_in(&host_dir)
        .map_err(io_error("create a temporary folder in", &host_dir))?;
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    let put_back = |moved: &[(PathBuf, PathBuf)]| -> bool {
        moved
            .iter()
            .rev()
            .all(|(from, to)| fs::rename(to, from).is_ok())
    };
    for (n, folder) in aside.iter().enumerate() {
        let to = old.path().join(n.to_string());
        if let Err(source) = fs::rename(folder, &to) {
            if !put_back(&moved) {
                let _ = old.keep();
            }
            return Err(InstallError::Io {
                action: "move the installed copy aside from",
                path: folder.clone(),
                source,
            });
        }
        moved.push((folder.clone(), to));
    }
    let placed = fs::rename(&unpacked, &target)
        .map_err(io_error("move the unpacked package to", &target))
        .and_then(|()| {
            let mut entries: Vec<Map<String, Value>> = index
                .into_iter()
                .filter(|entry| entry.get("id").and_then(Value::as_str) != Some(id.as_str()))
                .collect();
            entries.push(entry_object(&entry));
            write_index(&host_dir, entries).inspect_err(|_| {
                // Out again: the package is not installed without its entry.
                let _ = fs::rename(&target, &unpacked);
            })
        });
    match placed {
        Ok(()) => {
            // Best effort: the new copy is in place whatever happens to the old ones.
            let _ = old.close();
            Ok(Installed {
                id,
                version: package.version,
                path: target,
                replaced,
                entry,
            })
        }
        Err(error) => {
            if !put_back(&moved) {
                // Keep the old copies rather than delete the only ones left.
                let _ = old.keep();
            }
            Err(error)
        }
    }
}

#[cfg(unix)]
fn set_installed_mode(path: &Path) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(io_error("set the permissions of", path))
}

#[cfg(not(unix))]
fn set_installed_mode(_path: &Path) -> Result<(), InstallError> {
    Ok(())
}

/// Where `id` is installed as the app sees it: its `pkg-…` folder, any direct folder
/// whose `package.json` names it, or an index entry naming it (as the app refuses a
/// ZIP for any of these).
fn installed_path(
    host_dir: &Path,
    index: &[Map<String, Value>],
    id: &str,
) -> Result<Option<PathBuf>, InstallError> {
    let target = host_dir.join(directory_name(id));
    if exists(&target) {
        return Ok(Some(target));
    }
    if let Some((folder, _)) = app_folders(host_dir)?
        .into_iter()
        .find(|(_, folder_id)| folder_id == id)
    {
        return Ok(Some(host_dir.join(folder)));
    }
    let listed = index.iter().find_map(|entry| {
        (entry.get("id").and_then(Value::as_str) == Some(id))
            .then(|| entry.get("directoryName").and_then(Value::as_str))
            .flatten()
    });
    Ok(listed.map(|folder| host_dir.join(folder)))
}

/// The `name` of the archive's `package.json`, when it is readable and a package name.
fn declared_name(archive: &Archive) -> Option<String> {
    use crate::PackageFiles;
    let path = crate::RelativePath::parse(PACKAGE_JSON).ok()?;
    let bytes = archive.read(&path, crate::files::MAX_JSON_BYTES).ok()?;
    manifest_name(&bytes)
}

/// The trimmed `name` of `package.json` bytes, when it is a package name (how the app
/// keys a folder; a folder whose manifest the app cannot parse is not listed).
fn manifest_name(bytes: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let name = value.get("name")?.as_str()?.js_trim();
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

// ---------------------------------------------------------------------------------------
// The index

/// The entries of `extensions.json` that have a string `id` and `directoryName`, as the
/// app reads them; a missing or unreadable file is no entry.
fn read_index(path: &Path) -> Vec<Map<String, Value>> {
    let Ok(bytes) = fs::read(path) else {
        return Vec::new();
    };
    let Ok(Value::Object(mut index)) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    let Some(Value::Array(entries)) = index.remove("entries") else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter_map(|entry| match entry {
            Value::Object(entry)
                if entry.get("id").is_some_and(Value::is_string)
                    && entry.get("directoryName").is_some_and(Value::is_string) =>
            {
                Some(entry)
            }
            _ => None,
        })
        .collect()
}

/// The parsed entries of `<host dir>/extensions.json`, keyed by id (the last of two
/// entries with one id wins, as in the app).
pub fn read_entries(data_dir: &Path, host: Host) -> BTreeMap<String, IndexEntry> {
    read_index(&index_file(data_dir, host))
        .into_iter()
        .filter_map(|entry| serde_json::from_value::<IndexEntry>(Value::Object(entry)).ok())
        .map(|entry| (entry.id.clone(), entry))
        .collect()
}

fn entry_object(entry: &IndexEntry) -> Map<String, Value> {
    match serde_json::to_value(entry) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// The index text the app writes: entries sorted by id as the app sorts them
/// ([`crate::compare_ids`]), two-space indent, newline;
/// within an entry the app's members first, in the app's order, then any others.
fn index_text(mut entries: Vec<Map<String, Value>>) -> String {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Ordered {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        directory_name: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        installed_at_unix_ms: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        archive_file_name: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        install_source: Option<Value>,
        #[serde(flatten)]
        rest: Map<String, Value>,
    }
    #[derive(serde::Serialize)]
    struct Index {
        entries: Vec<Ordered>,
    }
    let id = |entry: &Map<String, Value>| {
        entry
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    // As the app sorts them: `localeCompare(other, "en")`, not bytes.
    entries.sort_by(|a, b| crate::compare_ids(&id(a), &id(b)));
    let entries = entries
        .into_iter()
        .map(|mut rest| Ordered {
            id: rest.remove("id"),
            directory_name: rest.remove("directoryName"),
            installed_at_unix_ms: rest.remove("installedAtUnixMs"),
            archive_file_name: rest.remove("archiveFileName"),
            install_source: rest.remove("installSource"),
            rest,
        })
        .collect();
    // Values and maps always serialize.
    serde_json::to_string_pretty(&Index { entries }).unwrap_or_default() + "\n"
}

/// Writes `extensions.json` through a temporary file renamed over it.
fn write_index(host_dir: &Path, entries: Vec<Map<String, Value>>) -> Result<(), InstallError> {
    write_atomic(&host_dir.join(INDEX_FILE), index_text(entries).as_bytes())
}

/// Writes `path` through a temporary file in its folder, renamed over it.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), InstallError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::Builder::new()
        .prefix(".spirit-write-")
        .tempfile_in(dir)
        .map_err(io_error("create a temporary file in", dir))?;
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .map_err(io_error("write", file.path()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(file.path(), fs::Permissions::from_mode(0o644))
            .map_err(io_error("set the permissions of", path))?;
    }
    file.persist(path)
        .map_err(|error| io_error("write", path)(error.error))?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Listing

/// The direct sub-folders of `host_dir` the app reads as packages: `(folder name, id)`
/// for each whose `package.json` names a package, in name order. Names starting with
/// `.` and `extension-state` are skipped; a missing folder has none.
fn app_folders(host_dir: &Path) -> Result<Vec<(String, String)>, InstallError> {
    Ok(folders(host_dir)?
        .into_iter()
        .filter_map(|folder| {
            let bytes = read_small(&host_dir.join(&folder).join(PACKAGE_JSON))?;
            manifest_name(&bytes).map(|id| (folder, id))
        })
        .collect())
}

/// A file's bytes, when it is a readable file of at most the JSON size limit.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > crate::files::MAX_JSON_BYTES {
        return None;
    }
    fs::read(path).ok()
}

/// The names of the folders (or links to folders) in `dir` not starting with `.` and
/// not `extension-state`, sorted; none when `dir` does not exist.
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
        if name.starts_with('.') || name == STATE_DIR {
            continue;
        }
        if fs::metadata(entry.path()).is_ok_and(|meta| meta.is_dir()) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Every installed package folder for `host` (or every host), checked again, sorted by
/// host, id, then folder: every direct sub-folder of the host folder holding a
/// `package.json` (the app's packages, and our old `<name>/` folders), and every
/// `@scope/name/` folder of the old layout. Nothing is written; a missing extensions
/// folder is an empty list.
pub fn list(data_dir: &Path, host: Option<Host>) -> Result<Vec<InstalledPackage>, InstallError> {
    let hosts = host.map_or_else(|| Host::ALL.to_vec(), |host| vec![host]);
    let mut found = Vec::new();
    for host in hosts {
        found.extend(list_host(data_dir, host)?);
    }
    found.sort_by(|a, b| {
        (a.host, &a.id, &a.directory_name).cmp(&(b.host, &b.id, &b.directory_name))
    });
    Ok(found)
}

fn list_host(data_dir: &Path, host: Host) -> Result<Vec<InstalledPackage>, InstallError> {
    let dir = host_dir(data_dir, host);
    let entries = read_entries(data_dir, host);
    let mut found = Vec::new();
    for name in folders(&dir)? {
        let path = dir.join(&name);
        if path.join(PACKAGE_JSON).exists() {
            found.push(installed(host, name, path, true, &entries));
        } else if name.starts_with('@') {
            for inner in folders(&path)? {
                let inner_path = path.join(&inner);
                if inner_path.join(PACKAGE_JSON).exists() {
                    let folder = format!("{name}/{inner}");
                    found.push(installed(host, folder, inner_path, false, &entries));
                }
            }
        }
    }
    // Two folders the app reads as one id.
    let mut holders: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in found.iter().filter(|p| p.seen_by_app) {
        holders
            .entry(package.id.clone())
            .or_default()
            .push(package.directory_name.clone());
    }
    for package in found.iter_mut().filter(|p| p.seen_by_app) {
        if let Some(all) = holders.get(&package.id).filter(|all| all.len() > 1) {
            let others: Vec<String> = all
                .iter()
                .filter(|folder| **folder != package.directory_name)
                .map(|folder| format!("`{folder}`"))
                .collect();
            package.problems.push(format!(
                "the folder `{}` holds `{}`, and so does {}: the app loads the id twice; remove one (`curupira spirit migrate` keeps the app's `{}`)",
                package.directory_name,
                package.id,
                others.join(", "),
                directory_name(&package.id)
            ));
        }
    }
    Ok(found)
}

fn installed(
    host: Host,
    folder: String,
    path: PathBuf,
    direct: bool,
    entries: &BTreeMap<String, IndexEntry>,
) -> InstalledPackage {
    let mut problems = Vec::new();
    let name = read_small(&path.join(PACKAGE_JSON)).and_then(|bytes| manifest_name(&bytes));
    if name.is_none() {
        problems.push(
            "its package.json has no readable package `name`, so the Spirit app does not list it"
                .to_owned(),
        );
    }
    let id = name.clone().unwrap_or_else(|| folder.clone());
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
    let loaded = crate::loaded_package(&path, &checked);
    let layout = if direct && folder == directory_name(&id) {
        Layout::App
    } else {
        Layout::Legacy
    };
    let entry = entries
        .get(&id)
        .filter(|entry| entry.directory_name == folder)
        .cloned();
    InstalledPackage {
        host,
        id,
        directory_name: folder,
        path,
        layout,
        seen_by_app: direct && name.is_some(),
        entry,
        checked,
        loaded,
        problems,
    }
}

/// Lists `host`'s packages ([`list`]) and rewrites its `extensions.json` as the app's
/// listing does: one entry per folder the app sees (its entry kept when it names that
/// id, else the folder's modification time and no source), stale entries dropped,
/// written only when it changes. Each listed package's [`InstalledPackage::entry`] is
/// the entry written.
pub fn sync_index(data_dir: &Path, host: Host) -> Result<Vec<InstalledPackage>, InstallError> {
    sync(data_dir, host, false)
}

/// [`sync_index`]; `always` writes the index even when it does not change (the app's
/// removal does).
fn sync(data_dir: &Path, host: Host, always: bool) -> Result<Vec<InstalledPackage>, InstallError> {
    let dir = host_dir(data_dir, host);
    let file = dir.join(INDEX_FILE);
    let current = read_index(&file);
    let known = read_entries(data_dir, host);
    let mut packages = list(data_dir, Some(host))?;
    let mut next = Vec::new();
    for package in packages.iter_mut().filter(|p| p.seen_by_app) {
        let entry = match known.get(&package.id) {
            Some(known) => IndexEntry {
                directory_name: package.directory_name.clone(),
                ..known.clone()
            },
            None => IndexEntry {
                id: package.id.clone(),
                directory_name: package.directory_name.clone(),
                installed_at_unix_ms: mtime_unix_ms(&package.path),
                archive_file_name: None,
                install_source: None,
            },
        };
        next.push(entry_object(&entry));
        package.entry = Some(entry);
    }
    // As the app: written when the text changes (no file reads as no entry).
    let text = index_text(next);
    if dir.is_dir() && (always || index_text(current) != text) {
        write_atomic(&file, text.as_bytes())?;
    }
    Ok(packages)
}

/// Finds the package `id` installed for `host`: its app-layout folder first, then any
/// other direct folder the app reads as `id`, then an old-layout folder. `Ok(None)`
/// when it is not installed.
pub fn find(data_dir: &Path, host: Host, id: &str) -> Result<Option<PathBuf>, InstallError> {
    if !is_valid_id(id) {
        return Err(InstallError::InvalidId { id: id.to_owned() });
    }
    let dir = host_dir(data_dir, host);
    let target = dir.join(directory_name(id));
    if target.join(PACKAGE_JSON).is_file() {
        return Ok(Some(target));
    }
    if let Some((folder, _)) = app_folders(&dir)?
        .into_iter()
        .find(|(_, folder_id)| folder_id == id)
    {
        return Ok(Some(dir.join(folder)));
    }
    let legacy = dir.join(id);
    Ok(legacy
        .join(PACKAGE_JSON)
        .is_file()
        .then_some(legacy)
        .filter(|_| id.contains('/')))
}

// ---------------------------------------------------------------------------------------
// Removing and migrating

/// Removes the package `id` installed for `host` — every folder holding it, the app's
/// and the old layout's — rewrites `extensions.json` as the app does, leaves the
/// settings in `extension-state/`, and returns the folders removed.
pub fn remove(data_dir: &Path, host: Host, id: &str) -> Result<Vec<PathBuf>, InstallError> {
    if !is_valid_id(id) {
        return Err(InstallError::InvalidId { id: id.to_owned() });
    }
    let host_dir = host_dir(data_dir, host);
    let packages = list(data_dir, Some(host))?;
    let targets: Vec<&InstalledPackage> = packages.iter().filter(|p| p.id == id).collect();
    if targets.is_empty() {
        return Err(InstallError::NotInstalled {
            id: id.to_owned(),
            host,
            path: host_dir,
        });
    }
    let trash = tempfile::Builder::new()
        .prefix(".spirit-remove-")
        .tempdir_in(&host_dir)
        .map_err(io_error("create a temporary folder in", &host_dir))?;
    let mut removed = Vec::new();
    for (n, package) in targets.iter().enumerate() {
        fs::rename(&package.path, trash.path().join(n.to_string()))
            .map_err(io_error("move aside the package folder", &package.path))?;
        if let Some((scope, _)) = package.directory_name.split_once('/') {
            // Only succeeds when the scope folder is empty.
            let _ = fs::remove_dir(host_dir.join(scope));
        }
        removed.push(package.path.clone());
    }
    let trash_path = trash.path().to_owned();
    trash
        .close()
        .map_err(io_error("delete the removed package in", &trash_path))?;
    sync(data_dir, host, true)?;
    Ok(removed)
}

/// Moves every [`Layout::Legacy`] install of `host` (or every host) into the app's
/// layout: renamed to its `pkg-…` folder and given an `extensions.json` entry (its
/// folder's modification time). A folder is left, with the reason, when the id's
/// `pkg-…` folder is already taken or its manifest names no package. Empty `@scope`
/// folders are removed.
pub fn migrate(data_dir: &Path, host: Option<Host>) -> Result<Vec<Migrated>, InstallError> {
    let hosts = host.map_or_else(|| Host::ALL.to_vec(), |host| vec![host]);
    let mut report = Vec::new();
    for host in hosts {
        let dir = host_dir(data_dir, host);
        let packages = list(data_dir, Some(host))?;
        let mut moved_any = false;
        for package in packages.iter().filter(|p| p.layout == Layout::Legacy) {
            let mut item = Migrated {
                host,
                id: package.id.clone(),
                from: package.path.clone(),
                to: None,
                skipped: None,
            };
            let target = dir.join(directory_name(&package.id));
            if !is_valid_id(&package.id) || package.problems.iter().any(|p| p.contains("`name`")) {
                item.skipped =
                    Some("its package.json names no package, so it has no folder name".to_owned());
            } else if exists(&target) {
                item.skipped = Some(format!(
                    "`{}` already holds `{}`; remove one of the two (`curupira spirit remove` removes both)",
                    target.display(),
                    package.id
                ));
            } else {
                fs::rename(&package.path, &target)
                    .map_err(io_error("move the package folder", &package.path))?;
                if let Some((scope, _)) = package.directory_name.split_once('/') {
                    let _ = fs::remove_dir(dir.join(scope));
                }
                item.to = Some(target);
                moved_any = true;
            }
            report.push(item);
        }
        if moved_any {
            fs::create_dir_all(dir.join(STATE_DIR))
                .map_err(io_error("create the folder", &dir.join(STATE_DIR)))?;
            sync_index(data_dir, host)?;
        }
    }
    Ok(report)
}

// ---------------------------------------------------------------------------------------
// Settings

/// The stored setting values of `id` for `host` (`extension-state/ext-….json`); an
/// empty map when none are stored.
pub fn read_settings(
    data_dir: &Path,
    host: Host,
    id: &str,
) -> Result<crate::settings::Values, InstallError> {
    let path = settings_file(data_dir, host, id);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => return Err(io_error("read", &path)(source)),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(values)) => Ok(values),
        Ok(other) => Err(InstallError::BadSettingsFile {
            path,
            detail: format!("it holds {}", curupira_diagnostics::json::type_name(&other)),
        }),
        Err(error) => Err(InstallError::BadSettingsFile {
            path,
            detail: error.to_string(),
        }),
    }
}

/// Writes the stored setting values of `id` for `host` as the app keeps them (a JSON
/// object, two-space indent), through a temporary file; `extension-state/` is created
/// when missing. The values are not checked here: see [`crate::settings`].
pub fn write_settings(
    data_dir: &Path,
    host: Host,
    id: &str,
    values: &crate::settings::Values,
) -> Result<PathBuf, InstallError> {
    let path = settings_file(data_dir, host, id);
    let dir = host_dir(data_dir, host).join(STATE_DIR);
    fs::create_dir_all(&dir).map_err(io_error("create the folder", &dir))?;
    let text = serde_json::to_string_pretty(values).unwrap_or_default() + "\n";
    write_atomic(&path, text.as_bytes())?;
    Ok(path)
}
