//! Reading `registry/extensions/*` and the registry-wide rules: folder = id, nothing
//! but `entry.json`, `README.md` and `detail.json` in an extension folder, a README
//! that is there and says what it lists, unique package names and ids, and a default
//! version that is not revoked.

use curupira_diagnostics::js::JsTrim;
use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use curupira_diagnostics::json;
use curupira_diagnostics::{
    Anchor, Diagnostic, JsonPointer, Report, Severity, SourceMap, decode_utf8,
};
use semver::Version;

use super::{DETAIL_JSON, ENTRY_JSON, EXTENSIONS_DIR, README_MD, RegistryError, extension_file};
use crate::codes;
use crate::entry::check_entry_bytes;
use crate::model::{Entry, ReviewStatus};

/// How many other files a `registry/duplicate-entry` message names.
const SHOWN_DUPLICATES: usize = 5;

/// The registry as read: every extension folder, in name order, with its diagnostics so
/// far.
pub(super) struct Registry {
    /// The extension folders, sorted by name.
    pub(super) folders: Vec<Folder>,
    /// Diagnostics about what lies directly in `registry/extensions/` (stray files).
    top: Report,
}

/// One extension folder: what it holds and its diagnostics.
pub(super) struct Folder {
    /// The folder's name (lossy UTF-8).
    pub(super) name: String,
    /// The folder itself.
    pub(super) dir: PathBuf,
    /// The typed entry, when `entry.json` is there and has no error.
    pub(super) entry: Option<Entry>,
    /// The text of `entry.json` when it has no error, to locate later diagnostics.
    entry_text: Option<String>,
    /// Its pointer → span map, built on the first diagnostic that needs it.
    entry_map: OnceCell<Option<SourceMap>>,
    /// Whether `detail.json` is there (as a file).
    pub(super) has_detail: bool,
    /// Every diagnostic about this folder, in report order.
    pub(super) report: Report,
}

impl Registry {
    /// Reads the registry under `root` and applies every rule that needs no npm
    /// metadata and no derived file.
    pub(super) fn read(root: &Path) -> Result<Self, RegistryError> {
        let dir = extensions_dir(root)?;
        let mut top = Report::new();
        let mut folders = Vec::new();
        for (name, path, is_dir) in list(&dir)? {
            let name = name.to_string_lossy().into_owned();
            if is_dir {
                folders.push(Folder::read(name, path)?);
            } else {
                let file = format!("{EXTENSIONS_DIR}/{name}");
                top.add_file(file.clone());
                top.push(Diagnostic::error(
                    codes::STRAY_FILE,
                    file,
                    JsonPointer::root(),
                    format!(
                        "`{name}` is {} directly in `{EXTENSIONS_DIR}/`, which holds only extension folders (`<extensionId>/` with `entry.json` and `README.md`); remove it",
                        describe(&name, false)
                    ),
                ));
            }
        }
        let mut registry = Registry { folders, top };
        registry.duplicates();
        Ok(registry)
    }

    /// Every diagnostic, in report order: stray files directly under
    /// `registry/extensions/`, then each folder's.
    pub(super) fn into_report(self) -> Report {
        let mut report = self.top;
        for folder in self.folders {
            merge(&mut report, folder.report);
        }
        report
    }

    /// `registry/duplicate-entry`: ids and package names grouped in hash maps; each
    /// member of a group names the others.
    fn duplicates(&mut self) {
        let mut found: Vec<(usize, &'static str, String)> = Vec::new();
        for (key, what) in [("extensionId", "extension id"), ("packageName", "package")] {
            let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
            for (index, folder) in self.folders.iter().enumerate() {
                if let Some(entry) = &folder.entry {
                    let value = if key == "extensionId" {
                        entry.extension_id.as_str()
                    } else {
                        entry.package_name.as_str()
                    };
                    groups.entry(value).or_default().push(index);
                }
            }
            for (value, members) in groups {
                if members.len() < 2 {
                    continue;
                }
                for &index in &members {
                    let mut others: Vec<String> = members
                        .iter()
                        .filter(|&&other| other != index)
                        .take(SHOWN_DUPLICATES)
                        .filter_map(|&other| self.folders.get(other))
                        .map(|other| format!("`{}`", other.entry_file()))
                        .collect();
                    let more = members.len().saturating_sub(1 + others.len());
                    if more > 0 {
                        others.push(format!("{more} more"));
                    }
                    found.push((
                        index,
                        key,
                        format!(
                            "{what} `{value}` is also listed by {}; `extensionId` and `packageName` are each unique in the registry",
                            others.join(", ")
                        ),
                    ));
                }
            }
        }
        // Hash map order is not deterministic; the report is.
        found.sort();
        for (index, key, message) in found {
            if let Some(folder) = self.folders.get_mut(index) {
                folder.entry_diagnostic(
                    Severity::Error,
                    codes::DUPLICATE_ENTRY,
                    JsonPointer::root().key(key),
                    message,
                );
            }
        }
    }
}

impl Folder {
    /// Reads one extension folder and applies the rules about it alone.
    fn read(name: String, dir: PathBuf) -> Result<Self, RegistryError> {
        let mut folder = Folder {
            name,
            dir,
            entry: None,
            entry_text: None,
            entry_map: OnceCell::new(),
            has_detail: false,
            report: Report::new(),
        };
        let mut strays = Vec::new();
        let mut entry_path = None;
        let mut readme_path = None;
        for (child, path, is_dir) in list(&folder.dir)? {
            let child = child.to_string_lossy().into_owned();
            match (child.as_str(), is_dir) {
                (ENTRY_JSON, false) => entry_path = Some(path),
                (README_MD, false) => readme_path = Some(path),
                (DETAIL_JSON, false) => folder.has_detail = true,
                _ => strays.push(folder.stray(&child, is_dir)),
            }
        }

        let entry_file = folder.entry_file();
        match entry_path {
            Some(path) => {
                let bytes = fs::read(&path).map_err(RegistryError::io("read", &path))?;
                let checked = check_entry_bytes(&bytes, &entry_file);
                folder.report.append(checked.report);
                if checked.entry.is_some() {
                    folder.entry_text = decode_utf8(&bytes, &entry_file, codes::ENCODING)
                        .ok()
                        .map(str::to_owned);
                }
                folder.entry = checked.entry;
            }
            None => {
                folder.report.add_file(entry_file.clone());
                folder.report.push(Diagnostic::error(
                    codes::MISSING_ENTRY,
                    entry_file,
                    JsonPointer::root(),
                    format!(
                        "the extension folder `{}` has no `entry.json`; every folder in `{EXTENSIONS_DIR}/` lists one extension",
                        folder.name
                    ),
                ));
            }
        }
        folder.entry_rules();
        folder.report.extend(strays);
        let readme = match readme_path {
            Some(path) => Some(fs::read(&path).map_err(RegistryError::io("read", &path))?),
            None => None,
        };
        folder.readme_rules(readme.as_deref());
        Ok(folder)
    }

    /// `registry/extensions/<folder>/entry.json`.
    pub(super) fn entry_file(&self) -> String {
        extension_file(&self.name, ENTRY_JSON)
    }

    /// `registry/extensions/<folder>/<name>`.
    pub(super) fn file(&self, name: &str) -> String {
        extension_file(&self.name, name)
    }

    /// Adds a diagnostic about `entry.json` at `path`, with its line and column.
    pub(super) fn entry_diagnostic(
        &mut self,
        severity: Severity,
        code: &'static str,
        path: JsonPointer,
        message: String,
    ) {
        let file = self.entry_file();
        let mut diagnostic = Diagnostic::new(severity, code, file.clone(), path, message);
        if let Some(text) = &self.entry_text {
            let map = self.entry_map.get_or_init(|| {
                json::parse(text, &file, codes::SYNTAX, codes::DUPLICATE_KEY)
                    .ok()
                    .map(|document| document.source_map())
            });
            if let Some(map) = map {
                diagnostic = diagnostic.locate(map, text, Anchor::Value);
                if self.report.source(&file).is_none() {
                    self.report.add_source(file, text.clone());
                }
            }
        }
        self.report.push(diagnostic);
    }

    /// `registry/stray-file` for `name` in this folder.
    fn stray(&mut self, name: &str, is_dir: bool) -> Diagnostic {
        let shown = if is_dir {
            format!("{name}/")
        } else {
            name.to_owned()
        };
        let file = self.file(&shown);
        self.report.add_file(file.clone());
        let hint = [ENTRY_JSON, README_MD, DETAIL_JSON]
            .into_iter()
            .find(|known| known.eq_ignore_ascii_case(name) && !is_dir)
            .map(|known| format!(" (rename it to `{known}`)"))
            .unwrap_or_default();
        Diagnostic::error(
            codes::STRAY_FILE,
            file,
            JsonPointer::root(),
            format!(
                "`{shown}` is {} in the extension folder `{}`, which holds only `entry.json`, `README.md` and the derived `detail.json`: the registry is an index, not a package store, so remove it{hint}",
                describe(name, is_dir),
                self.name
            ),
        )
    }

    /// The rules on an entry that has no error: folder = id, default not revoked.
    fn entry_rules(&mut self) {
        let Some(entry) = &self.entry else {
            return;
        };
        let mut found: Vec<(Severity, &'static str, JsonPointer, String)> = Vec::new();
        if entry.extension_id != self.name {
            found.push((
                Severity::Error,
                codes::FOLDER_MISMATCH,
                JsonPointer::root().key("extensionId"),
                format!(
                    "`extensionId` is `{}` but the folder is named `{}`; an extension folder is named after its `extensionId`",
                    entry.extension_id, self.name
                ),
            ));
        }
        let default = default_index(entry);
        let version_revoked = default
            .and_then(|index| entry.versions.get(index).map(|v| (index, v)))
            .filter(|(_, v)| v.review_status == ReviewStatus::Revoked);
        if let Some((index, version)) = version_revoked {
            let also = if entry.default_review_status == ReviewStatus::Revoked {
                " (and `defaultReviewStatus` is `revoked`)"
            } else {
                ""
            };
            found.push((
                Severity::Warning,
                codes::REVOKED_DEFAULT,
                JsonPointer::root()
                    .key("versions")
                    .index(index)
                    .key("reviewStatus"),
                format!(
                    "the default version `{}` has the review status `revoked`{also}: the marketplace would offer a revoked version by default; make another version the default",
                    version.version
                ),
            ));
        } else if entry.default_review_status == ReviewStatus::Revoked {
            found.push((
                Severity::Warning,
                codes::REVOKED_DEFAULT,
                JsonPointer::root().key("defaultReviewStatus"),
                format!(
                    "`defaultReviewStatus` is `revoked`: the marketplace would offer the revoked version `{}` by default; make another version the default",
                    entry.default_version
                ),
            ));
        }
        for (severity, code, path, message) in found {
            self.entry_diagnostic(severity, code, path, message);
        }
    }

    /// `registry/missing-readme` and `registry/readme-unrelated`.
    fn readme_rules(&mut self, readme: Option<&[u8]>) {
        let file = self.file(README_MD);
        self.report.add_file(file.clone());
        let text = readme.map(String::from_utf8_lossy);
        let problem = match &text {
            None => Some(format!(
                "the extension folder `{}` has no `README.md`; it is the marketplace's text for the extension",
                self.name
            )),
            Some(text) if text.js_trim().is_empty() => Some(
                "`README.md` is empty; it is the marketplace's text for the extension".to_owned(),
            ),
            Some(_) => None,
        };
        if let Some(message) = problem {
            self.report.push(Diagnostic::error(
                codes::MISSING_README,
                file,
                JsonPointer::root(),
                message,
            ));
            return;
        }
        if let (Some(text), Some(entry)) = (&text, &self.entry)
            && !text.contains(entry.package_name.as_str())
            && !text.contains(entry.default_version.as_str())
        {
            self.report.push(Diagnostic::warning(
                codes::README_UNRELATED,
                file,
                JsonPointer::root(),
                format!(
                    "`README.md` names neither the package `{}` nor the default version `{}`; say which package and version the marketplace text is about",
                    entry.package_name, entry.default_version
                ),
            ));
        }
    }
}

/// Moves `part` into `report`, registering only the files that have a diagnostic (with
/// their text when `part` kept it).
///
/// A registry has several files per extension, and `Report` keeps its files in a list
/// it searches on every addition: registering every file checked would make a report of
/// 10,000 clean entries quadratic. So the files of a registry report are the files with
/// something to say.
pub(super) fn merge(report: &mut Report, part: Report) {
    let concerned: HashSet<&str> = part.diagnostics().iter().map(|d| d.file.as_str()).collect();
    for file in part.files() {
        if !concerned.contains(file.as_str()) {
            continue;
        }
        match part.source(file) {
            Some(text) => report.add_source(file.clone(), text),
            None => report.add_file(file.clone()),
        }
    }
    report.extend(part.into_diagnostics());
}

/// `ROOT/registry/extensions`, which must be a folder.
pub(super) fn extensions_dir(root: &Path) -> Result<PathBuf, RegistryError> {
    let dir = root.join(EXTENSIONS_DIR);
    match fs::metadata(&dir) {
        Ok(metadata) if metadata.is_dir() => Ok(dir),
        Ok(_) => Err(RegistryError::NotARegistry { path: dir }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(RegistryError::NotARegistry { path: dir })
        }
        Err(source) => Err(RegistryError::Io {
            action: "read",
            path: dir,
            source,
        }),
    }
}

/// The index in `versions` of `defaultVersion` (equal as SemVer, else as text).
pub(super) fn default_index(entry: &Entry) -> Option<usize> {
    let default = Version::parse(&entry.default_version).ok();
    entry.versions.iter().position(|v| match &default {
        Some(default) => Version::parse(&v.version).is_ok_and(|version| &version == default),
        None => v.version == entry.default_version,
    })
}

/// The children of `dir`, sorted by name: name, path, and whether it is a folder (a
/// link is followed).
fn list(dir: &Path) -> Result<Vec<(OsString, PathBuf, bool)>, RegistryError> {
    let mut children = Vec::new();
    for child in fs::read_dir(dir).map_err(RegistryError::io("list", dir))? {
        let child = child.map_err(RegistryError::io("list", dir))?;
        let path = child.path();
        let kind = child
            .file_type()
            .map_err(RegistryError::io("read", &path))?;
        let is_dir = if kind.is_symlink() {
            fs::metadata(&path).is_ok_and(|m| m.is_dir())
        } else {
            kind.is_dir()
        };
        children.push((child.file_name(), path, is_dir));
    }
    children.sort();
    Ok(children)
}

/// What a stray `name` is, for messages: "a folder (a source tree or build output)",
/// "a tarball", …
fn describe(name: &str, is_dir: bool) -> &'static str {
    let lower = name.to_ascii_lowercase();
    if is_dir {
        return match lower.as_str() {
            "dist" | "build" | "out" | "lib" => "a build output folder",
            "src" | "source" => "a source tree",
            "node_modules" => "an installed dependency tree",
            "package" => "an unpacked package",
            _ => "a folder",
        };
    }
    let ends = |suffixes: &[&str]| suffixes.iter().any(|s| lower.ends_with(s));
    if lower == "package.json" {
        "a package manifest (the published `package.json` comes from npm)"
    } else if ends(&[".tgz", ".tar.gz", ".tar", ".tar.xz", ".tar.bz2"]) {
        "a tarball"
    } else if ends(&[".zip", ".vsix", ".7z", ".rar"]) {
        "an archive"
    } else if ends(&[
        ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".map",
    ]) {
        "source code"
    } else if ends(&[".exe", ".dll", ".so", ".dylib", ".wasm", ".node", ".bin"]) {
        "a binary"
    } else {
        "a file"
    }
}
