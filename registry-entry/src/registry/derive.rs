//! With npm metadata: every listed version checked against its package document, and
//! the derived files computed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use curupira_diagnostics::{Diagnostic, JsonPointer, Severity};
use semver::{BuildMetadata, Version};
use serde::Serialize;
use serde_json::Value;
use spirit_manifest::{Options, check_value};

use super::walk::{Folder, Registry, default_index};
use super::{CATALOG_FILE, DETAIL_JSON, README_MD, RegistryError};
use crate::codes;
use crate::metadata::{MetadataError, MetadataSource};
use crate::model::{
    Catalog, CatalogItem, Detail, DetailVersion, Entry, Listing, ManifestSummary, PackageDocument,
    SCHEMA_VERSION, Status,
};
use crate::reader::{integrity_well_formed, shasum_well_formed};

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
    /// What the marketplace shows of it and its tarball, when it passed registry-strict
    /// validation and the reader's needs (a description, a usable `dist`).
    listed: Option<(Listing, Dist)>,
    /// Its `name`, when it is a string.
    name: Option<String>,
}

/// A published version's tarball, from the npm document's `dist`.
#[derive(Clone)]
struct Dist {
    /// `dist.tarball`, https.
    tarball: String,
    /// `dist.integrity`, when well-formed.
    integrity: Option<String>,
    /// `dist.shasum`, when well-formed.
    shasum: Option<String>,
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
        let Some((listing, dist)) = checked.listed else {
            complete = false;
            continue;
        };
        versions.push(DetailVersion {
            version: listed.version.clone(),
            channel: listed.channel,
            review_status: listed.review_status,
            listing,
            published_at: document.time.get(&key).cloned(),
            tarball_url: dist.tarball,
            integrity: dist.integrity,
            shasum: dist.shasum,
            changelog: listed.changelog.clone(),
        });
    }
    let readme_path = format!("extensions/{}/{README_MD}", entry.extension_id);
    complete.then_some(Detail {
        schema_version: entry.schema_version,
        extension_id: entry.extension_id,
        package_name: entry.package_name,
        status: entry.status,
        featured: entry.featured,
        default_version: entry.default_version,
        readme_path,
        versions,
    })
}

/// Checks one published manifest in registry-strict mode, then what the marketplace
/// reader needs of it (a description, a `dist` to install from); its diagnostics go to
/// `folder`.
fn check_manifest(folder: &mut Folder, package: &str, key: &str, value: Value) -> Checked {
    let file = npm_file(package, key);
    let name = value.get("name").and_then(Value::as_str).map(str::to_owned);
    let listing = listing(&value);
    let dist = dist(&value, &file);
    let checked = check_value(value, &file, &strict());
    let mut passed = !checked.report.has_errors();
    let description_reported = checked
        .report
        .diagnostics()
        .iter()
        .any(|d| d.is_error() && d.path.as_str() == "/description");
    folder.report.append(checked.report);
    if listing.description.is_empty() && !description_reported {
        folder.report.add_file(file.clone());
        folder.report.push(Diagnostic::error(
            codes::MISSING_DESCRIPTION,
            file.clone(),
            JsonPointer::root().key("description"),
            format!(
                "the published `package.json` of `{package}@{key}` has no non-empty `description`: the marketplace reader refuses a catalog item or version without one, and one such item makes the whole catalog unreadable; publish a version with a description"
            ),
        ));
        passed = false;
    }
    let dist = match dist {
        Ok(dist) => Some(dist),
        Err(problems) => {
            folder.report.add_file(file.clone());
            folder.report.extend(problems);
            None
        }
    };
    Checked {
        listed: passed.then_some(listing).zip(dist),
        name,
    }
}

/// The reader's flat metadata of a published manifest (read leniently: only used for
/// manifests that pass validation).
fn listing(manifest: &Value) -> Listing {
    let text = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    let texts = |value: Option<&Value>| -> Vec<String> {
        value
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(|item| text(Some(item))).collect())
            .unwrap_or_default()
    };
    // A string as published, or the named member of an object.
    let string_or = |value: Option<&Value>, member: &str| match value {
        Some(Value::Object(object)) => text(object.get(member)),
        other => text(other),
    };
    let spirit = manifest.get("spiritExtension");
    let member = |key: &str| spirit.and_then(|s| s.get(key));
    Listing {
        display_name: text(member("displayName")).unwrap_or_default(),
        description: text(manifest.get("description")).unwrap_or_default(),
        author: string_or(manifest.get("author"), "name"),
        homepage_url: text(manifest.get("homepage")),
        repository_url: string_or(manifest.get("repository"), "url"),
        keywords: texts(manifest.get("keywords")),
        supported_hosts: texts(member("supportedHosts")),
        requested_capabilities: texts(member("requestedCapabilities")),
    }
}

/// The tarball of a published version from its `dist`: an https `tarball` and a
/// well-formed `integrity` or `shasum` (each one present must be well-formed: the app
/// checks every one it is given). Else the `registry/unusable-dist` errors.
fn dist(manifest: &Value, file: &str) -> Result<Dist, Vec<Diagnostic>> {
    let dist = manifest.get("dist");
    let at = JsonPointer::root().key("dist");
    let member = |key: &str| {
        dist.and_then(|d| d.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
    };
    let mut problems = Vec::new();
    let mut problem = |at: JsonPointer, message: String| {
        problems.push(Diagnostic::error(codes::UNUSABLE_DIST, file, at, message));
    };
    let tarball = member("tarball");
    match tarball {
        None => problem(
            at.key("tarball"),
            format!(
                "`{file}` has no `dist.tarball`: the marketplace has no `tarballUrl` to install it from"
            ),
        ),
        Some(url)
            if !url
                .get(..8)
                .is_some_and(|head| head.eq_ignore_ascii_case("https://")) =>
        {
            problem(
                at.key("tarball"),
                format!(
                    "`dist.tarball` of `{file}` is `{url}`: the app downloads tarballs over https only; use an https npm registry"
                ),
            )
        }
        Some(_) => {}
    }
    let integrity = member("integrity");
    let shasum = member("shasum");
    if integrity.is_none() && shasum.is_none() {
        problem(
            at.clone(),
            format!(
                "`{file}` has neither `dist.integrity` nor `dist.shasum`: the app refuses a download it cannot verify"
            ),
        );
    }
    if let Some(integrity) = integrity
        && !integrity_well_formed(integrity)
    {
        problem(
            at.key("integrity"),
            format!(
                "`dist.integrity` of `{file}` is `{integrity}`, which has no SRI entry the app can verify (`sha256-`, `sha384-` or `sha512-` and a base64 digest of that size)"
            ),
        );
    }
    if let Some(shasum) = shasum
        && !shasum_well_formed(shasum)
    {
        problem(
            at.key("shasum"),
            format!(
                "`dist.shasum` of `{file}` is `{shasum}`, not a SHA-1 digest (40 hexadecimal digits)"
            ),
        );
    }
    match tarball {
        Some(tarball) if problems.is_empty() => Ok(Dist {
            tarball: tarball.to_owned(),
            integrity: integrity.map(str::to_owned),
            shasum: shasum.map(str::to_owned),
        }),
        _ => Err(problems),
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
    let mut items = Vec::new();
    for (folder, detail) in folders.iter().zip(details) {
        let entry = folder.entry.as_ref()?;
        if !shown(entry.status) {
            continue;
        }
        items.push(catalog_item(entry, detail.as_ref()?)?);
    }
    items.sort_by(|a, b| a.extension_id.cmp(&b.extension_id));
    Some(Catalog {
        schema_version: SCHEMA_VERSION,
        items,
    })
}

/// One item of the catalog: its governance, where its detail is, and its default
/// version's listing.
fn catalog_item(entry: &Entry, detail: &Detail) -> Option<CatalogItem> {
    let index = default_index(entry)?;
    let default = detail.versions.get(index)?;
    let listed = entry.versions.get(index)?;
    Some(CatalogItem {
        extension_id: entry.extension_id.clone(),
        package_name: entry.package_name.clone(),
        status: entry.status,
        featured: entry.featured,
        default_version: entry.default_version.clone(),
        default_channel: listed.channel,
        default_review_status: entry.default_review_status,
        detail_path: detail_path(&entry.extension_id),
        listing: default.listing.clone(),
    })
}

/// `extensions/<id>/detail.json`: where the catalog says an extension's detail is,
/// relative to the folder that holds `catalog.json`.
pub(super) fn detail_path(extension_id: &str) -> String {
    format!("extensions/{extension_id}/{DETAIL_JSON}")
}
