//! With npm metadata: every listed version checked against its package document, and
//! the derived files computed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use curupira_diagnostics::{JsonPointer, Severity};
use semver::{BuildMetadata, Version};
use serde::Serialize;
use serde_json::Value;
use spirit_manifest::{Options, check_value};

use super::walk::{Folder, Registry, default_index};
use super::{CATALOG_FILE, DETAIL_JSON, RegistryError};
use crate::codes;
use crate::metadata::{MetadataError, MetadataSource};
use crate::model::{
    Catalog, CatalogEntry, Detail, DetailVersion, Entry, ManifestSummary, PackageDocument,
    SCHEMA_VERSION, Status,
};

/// How many published versions an "is not published" message shows.
const SHOWN_VERSIONS: usize = 10;

/// What the build writes, as far as the metadata allowed.
pub(super) struct Derived {
    /// Per folder, in the registry's order: its `detail.json`, when the entry has no
    /// error and every listed version passed.
    pub(super) details: Vec<Option<Detail>>,
    /// `catalog.json`, when every folder has a usable entry and every entry shown has
    /// its detail.
    pub(super) catalog: Option<Catalog>,
}

impl Derived {
    /// Every derived file with its bytes: each `detail.json` in folder order, then
    /// `catalog.json`. Only call when the report has no error (every part is there).
    pub(super) fn files(&self, root: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, RegistryError> {
        let mut files = Vec::with_capacity(self.details.len() + 1);
        for detail in self.details.iter().flatten() {
            // Without errors, every folder is named after its entry's id.
            let file = super::extension_file(&detail.extension_id, DETAIL_JSON);
            files.push((root.join(&file), encode(detail, &file)?));
        }
        if let Some(catalog) = &self.catalog {
            files.push((root.join(CATALOG_FILE), encode(catalog, CATALOG_FILE)?));
        }
        Ok(files)
    }
}

/// The bytes the build writes for `value`: pretty JSON (2 spaces) and a newline.
pub(super) fn encode<T: Serialize>(value: &T, file: &str) -> Result<Vec<u8>, RegistryError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|source| RegistryError::Encode {
        file: file.to_owned(),
        source,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The options every published manifest is checked with.
fn strict() -> Options {
    Options {
        registry_strict: true,
        host: None,
    }
}

/// `npm:<package>@<version>`: the name a published manifest's diagnostics show.
pub(super) fn npm_file(package: &str, version: &str) -> String {
    format!("npm:{package}@{version}")
}

/// One package's document and the versions of it checked so far.
struct Package {
    document: Result<PackageDocument, MetadataError>,
    /// Checked versions (taken out of `document.versions`), by published key.
    checked: HashMap<String, Checked>,
}

/// A published manifest, checked.
#[derive(Clone)]
struct Checked {
    /// Its summary, when it passed registry-strict validation.
    summary: Option<ManifestSummary>,
    /// Its `name`, when it is a string.
    name: Option<String>,
}

/// Checks every listed version of every entry against `source` (adding diagnostics to
/// the folders) and computes the derived files.
pub(super) fn derive(registry: &mut Registry, source: &dyn MetadataSource) -> Derived {
    let mut names: Vec<String> = registry
        .folders
        .iter()
        .filter_map(|folder| folder.entry.as_ref().map(|e| e.package_name.clone()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut documents = source.fetch_all(&names).into_iter();
    let mut packages: HashMap<String, Package> = HashMap::with_capacity(names.len());
    for name in names {
        let document = documents.next().unwrap_or_else(|| {
            Err(MetadataError::NotFound {
                package: name.clone(),
                place: source.describe(),
            })
        });
        packages.insert(
            name,
            Package {
                document,
                checked: HashMap::new(),
            },
        );
    }

    let described = source.describe();
    let details: Vec<Option<Detail>> = registry
        .folders
        .iter_mut()
        .map(|folder| detail(folder, &mut packages, &described))
        .collect();
    let catalog = catalog(&registry.folders, &details);
    Derived { details, catalog }
}

/// Checks `folder`'s listed versions; its detail when all pass.
fn detail(
    folder: &mut Folder,
    packages: &mut HashMap<String, Package>,
    source: &str,
) -> Option<Detail> {
    let entry = folder.entry.clone()?;
    let Some(package) = packages.get_mut(&entry.package_name) else {
        // Every entry's package was fetched above.
        return None;
    };
    let document = match &mut package.document {
        Ok(document) => document,
        Err(error) => {
            folder.entry_diagnostic(
                Severity::Error,
                codes::METADATA,
                JsonPointer::root().key("packageName"),
                format!("{error}; every listed version is checked against it"),
            );
            return None;
        }
    };
    let mut versions = Vec::with_capacity(entry.versions.len());
    let mut complete = true;
    for (index, listed) in entry.versions.iter().enumerate() {
        let at = JsonPointer::root()
            .key("versions")
            .index(index)
            .key("version");
        let Some(key) = published_key(document, &package.checked, &listed.version) else {
            folder.entry_diagnostic(
                Severity::Error,
                codes::UNPUBLISHED_VERSION,
                at,
                format!(
                    "version `{}` of `{}` is not published on npm (the document from `{source}` has {}); list only published versions",
                    listed.version,
                    entry.package_name,
                    published_list(document, &package.checked)
                ),
            );
            complete = false;
            continue;
        };
        let checked = match package.checked.get(&key) {
            Some(checked) => checked.clone(),
            None => {
                let value = document.versions.remove(&key).unwrap_or(Value::Null);
                let checked = check_manifest(folder, &entry.package_name, &key, value);
                package.checked.insert(key.clone(), checked.clone());
                checked
            }
        };
        if let Some(name) = &checked.name
            && name != &entry.package_name
        {
            folder.entry_diagnostic(
                Severity::Error,
                codes::PACKAGE_NAME_MISMATCH,
                at,
                format!(
                    "the published `package.json` of version `{key}` (`{}`) is named `{name}`, not `{}`; the entry lists one npm package",
                    npm_file(&entry.package_name, &key),
                    entry.package_name
                ),
            );
            complete = false;
            continue;
        }
        let Some(manifest) = checked.summary else {
            complete = false;
            continue;
        };
        versions.push(DetailVersion {
            version: listed.version.clone(),
            channel: listed.channel,
            review_status: listed.review_status,
            changelog: listed.changelog.clone(),
            published_at: document.time.get(&key).cloned(),
            manifest,
        });
    }
    complete.then_some(Detail {
        schema_version: entry.schema_version,
        extension_id: entry.extension_id,
        package_name: entry.package_name,
        status: entry.status,
        featured: entry.featured,
        default_version: entry.default_version,
        default_review_status: entry.default_review_status,
        versions,
    })
}

/// Checks one published manifest in registry-strict mode; its diagnostics go to
/// `folder`.
fn check_manifest(folder: &mut Folder, package: &str, key: &str, value: Value) -> Checked {
    let name = value.get("name").and_then(Value::as_str).map(str::to_owned);
    let summary = summarize(&value);
    let checked = check_value(value, &npm_file(package, key), &strict());
    let passed = !checked.report.has_errors();
    folder.report.append(checked.report);
    Checked {
        summary: passed.then_some(summary),
        name,
    }
}

/// The key of `version` in the document's `versions`: as written, else without build
/// metadata (npm drops it when publishing).
fn published_key(
    document: &PackageDocument,
    checked: &HashMap<String, Checked>,
    version: &str,
) -> Option<String> {
    let has = |key: &str| document.versions.contains_key(key) || checked.contains_key(key);
    if has(version) {
        return Some(version.to_owned());
    }
    let mut parsed = Version::parse(version).ok()?;
    if parsed.build.is_empty() {
        return None;
    }
    parsed.build = BuildMetadata::EMPTY;
    let bare = parsed.to_string();
    has(&bare).then_some(bare)
}

/// "0.9.0, 1.0.0 and 1.1.0" (SemVer order, at most [`SHOWN_VERSIONS`], the newest),
/// or "no versions".
fn published_list(document: &PackageDocument, checked: &HashMap<String, Checked>) -> String {
    let mut versions: Vec<(Option<Version>, &str)> = document
        .versions
        .keys()
        .chain(checked.keys())
        .map(|key| (Version::parse(key).ok(), key.as_str()))
        .collect();
    versions.sort();
    let skipped = versions.len().saturating_sub(SHOWN_VERSIONS);
    let shown: Vec<String> = versions
        .iter()
        .skip(skipped)
        .map(|(_, key)| format!("`{key}`"))
        .collect();
    match shown.as_slice() {
        [] => "no versions".to_owned(),
        [one] => format!("only {one}"),
        [rest @ .., last] => {
            let more = if skipped > 0 {
                format!("{skipped} older versions, ")
            } else {
                String::new()
            };
            format!("{more}{} and {last}", rest.join(", "))
        }
    }
}

/// What the marketplace shows of a published manifest (read leniently: only called on
/// manifests that pass validation for the summary to be used).
pub(super) fn summarize(manifest: &Value) -> ManifestSummary {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let texts = |value: Option<&Value>| -> Vec<String> {
        value
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let spirit = manifest.get("spiritExtension");
    let member = |key: &str| spirit.and_then(|s| s.get(key));
    let tools = member("contributes")
        .and_then(|c| c.get("tools"))
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| text(tool.get("name")))
                .collect()
        })
        .unwrap_or_default();
    ManifestSummary {
        name: text(manifest.get("name")).unwrap_or_default(),
        version: text(manifest.get("version")).unwrap_or_default(),
        description: text(manifest.get("description")),
        author: manifest.get("author").filter(|v| !v.is_null()).map(sorted),
        repository: manifest
            .get("repository")
            .filter(|v| !v.is_null())
            .map(sorted),
        homepage: text(manifest.get("homepage")),
        keywords: texts(manifest.get("keywords")),
        display_name: text(member("displayName")).unwrap_or_default(),
        supported_hosts: texts(member("supportedHosts")),
        requested_capabilities: texts(member("requestedCapabilities")),
        icon: text(member("icon")),
        tools,
    }
}

/// `value` with every object's members in name order, whatever `serde_json`'s map
/// keeps (its `preserve_order` feature may be on in a bigger build).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(members) => {
            let mut members: Vec<(&String, &Value)> = members.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                members
                    .into_iter()
                    .map(|(key, value)| (key.clone(), sorted(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Whether the catalog shows an entry with `status`.
pub(super) fn shown(status: Status) -> bool {
    matches!(status, Status::Listed | Status::Deprecated)
}

/// `catalog.json`, when every folder has a usable entry and every entry shown has its
/// detail.
fn catalog(folders: &[Folder], details: &[Option<Detail>]) -> Option<Catalog> {
    let mut extensions = Vec::new();
    for (folder, detail) in folders.iter().zip(details) {
        let entry = folder.entry.as_ref()?;
        if !shown(entry.status) {
            continue;
        }
        extensions.push(catalog_entry(entry, detail.as_ref()?)?);
    }
    extensions.sort_by(|a, b| a.extension_id.cmp(&b.extension_id));
    Some(Catalog {
        schema_version: SCHEMA_VERSION,
        extensions,
    })
}

/// One entry of the catalog: its governance and its default version's summary.
fn catalog_entry(entry: &Entry, detail: &Detail) -> Option<CatalogEntry> {
    let default = detail.versions.get(default_index(entry)?)?;
    Some(CatalogEntry {
        extension_id: entry.extension_id.clone(),
        package_name: entry.package_name.clone(),
        status: entry.status,
        featured: entry.featured,
        default_version: entry.default_version.clone(),
        default_review_status: entry.default_review_status,
        versions: entry.versions.iter().map(|v| v.version.clone()).collect(),
        manifest: default.manifest.clone(),
    })
}
