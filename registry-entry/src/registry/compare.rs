//! The derived files on disk against the entries: field by field without metadata,
//! byte for byte against what the build writes with it.

use std::collections::{HashMap, HashSet};
use std::fmt::Display;
use std::fs;
use std::path::Path;

use curupira_diagnostics::json;
use curupira_diagnostics::{Anchor, Diagnostic, JsonPointer, Report};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::derive::{Derived, detail_path, encode, shown};
use super::walk::{Registry, default_index};
use super::{CATALOG_FILE, DETAIL_JSON, README_MD, RegistryError};
use crate::codes;
use crate::model::{Catalog, Detail, Entry, SCHEMA_VERSION, Status};

/// How many differences one message lists.
const SHOWN_DIFFERENCES: usize = 5;
/// How many characters of a JSON value a message shows.
const SHOWN_VALUE_CHARS: usize = 60;
/// The end of every `registry/stale-derived` message.
const REBUILD: &str =
    "derived files are never edited by hand: run `curupira registry build` to regenerate them";

/// One difference between a derived file and the entries: where in the derived file,
/// and what, in words.
struct Difference {
    at: JsonPointer,
    what: String,
}

/// Why a derived file is stale: where to point and the whole message.
struct Stale {
    at: JsonPointer,
    message: String,
}

/// Compares every `detail.json` (into its folder's report) and `catalog.json` (into
/// `catalog_report`) with the entries, and with `derived` when npm metadata was used.
pub(super) fn compare(
    root: &Path,
    registry: &mut Registry,
    derived: Option<&Derived>,
    catalog_report: &mut Report,
) -> Result<(), RegistryError> {
    for (index, folder) in registry.folders.iter_mut().enumerate() {
        let Some(entry) = &folder.entry else {
            continue;
        };
        let file = folder.file(DETAIL_JSON);
        folder.report.add_file(file.clone());
        if !folder.has_detail {
            folder.report.push(missing(&file));
            continue;
        }
        let path = folder.dir.join(DETAIL_JSON);
        let bytes = fs::read(&path).map_err(RegistryError::io("read", &path))?;
        let expected = derived
            .and_then(|derived| derived.details.get(index))
            .and_then(Option::as_ref);
        let stale = judge(&file, &bytes, expected, |detail: &Detail| {
            detail_differences(detail, entry)
        })?;
        if let Some(stale) = stale {
            push_stale(&mut folder.report, &file, &bytes, stale);
        }
    }

    catalog_report.add_file(CATALOG_FILE);
    let path = root.join(CATALOG_FILE);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            catalog_report.push(missing(CATALOG_FILE));
            return Ok(());
        }
        Err(source) => {
            return Err(RegistryError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    let expected = derived.and_then(|derived| derived.catalog.as_ref());
    let stale = judge(CATALOG_FILE, &bytes, expected, |catalog: &Catalog| {
        catalog_differences(catalog, registry)
    })?;
    if let Some(stale) = stale {
        push_stale(catalog_report, CATALOG_FILE, &bytes, stale);
    }
    Ok(())
}

/// `registry/missing-derived` for `file`.
fn missing(file: &str) -> Diagnostic {
    Diagnostic::warning(
        codes::MISSING_DERIVED,
        file,
        JsonPointer::root(),
        format!("`{file}` does not exist yet; run `curupira registry build` to write it"),
    )
}

/// Whether the derived `file` (its `bytes`) is stale: against the entries
/// (`differences`), then, when the build's version is known (`expected`), byte for
/// byte.
fn judge<T: Serialize + DeserializeOwned>(
    file: &str,
    bytes: &[u8],
    expected: Option<&T>,
    differences: impl FnOnce(&T) -> Vec<Difference>,
) -> Result<Option<Stale>, RegistryError> {
    let expected_bytes = expected.map(|value| encode(value, file)).transpose()?;
    if expected_bytes.as_deref() == Some(bytes) {
        return Ok(None);
    }
    let unreadable = |why: String| Stale {
        at: JsonPointer::root(),
        message: format!("`{file}` is not a file the build writes: {why}; {REBUILD}"),
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(Some(unreadable("it is not UTF-8".to_owned())));
    };
    let parsed: T = match serde_json::from_str(text) {
        Ok(parsed) => parsed,
        Err(error) => return Ok(Some(unreadable(error.to_string()))),
    };
    let found = differences(&parsed);
    if let Some(first) = found.first() {
        let at = first.at.clone();
        let listed: Vec<&str> = found
            .iter()
            .take(SHOWN_DIFFERENCES)
            .map(|d| d.what.as_str())
            .collect();
        let more = match found.len().saturating_sub(SHOWN_DIFFERENCES) {
            0 => String::new(),
            n => format!("; and {n} more"),
        };
        return Ok(Some(Stale {
            at,
            message: format!(
                "`{file}` disagrees with the entries: {}{more}; {REBUILD}",
                listed.join("; ")
            ),
        }));
    }
    let Some(expected) = expected else {
        return Ok(None);
    };
    // The entries agree; something that comes from npm, or the layout, differs.
    let wanted = serde_json::to_value(expected).map_err(|source| RegistryError::Encode {
        file: file.to_owned(),
        source,
    })?;
    let actual: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let stale = match first_difference(&wanted, &actual, JsonPointer::root()) {
        Some((at, wanted, actual)) => {
            let place = at.as_str();
            let what = match (wanted, actual) {
                (Some(wanted), Some(actual)) => format!(
                    "at `{place}` it has {} where the build writes {}",
                    show(actual),
                    show(wanted)
                ),
                (Some(wanted), None) => {
                    format!(
                        "it lacks `{place}`, where the build writes {}",
                        show(wanted)
                    )
                }
                (None, Some(actual)) => format!(
                    "it has `{place}` ({}), which the build does not write",
                    show(actual)
                ),
                (None, None) => "it differs".to_owned(),
            };
            Stale {
                at,
                message: format!("`{file}` is not what the build writes: {what}; {REBUILD}"),
            }
        }
        None => Stale {
            at: JsonPointer::root(),
            message: format!(
                "`{file}` has the content the build writes but not its layout (2-space indentation, members in a fixed order, a trailing newline); {REBUILD}"
            ),
        },
    };
    Ok(Some(stale))
}

/// Adds the `registry/stale-derived` error, located in the file when it is JSON.
fn push_stale(report: &mut Report, file: &str, bytes: &[u8], stale: Stale) {
    let mut diagnostic = Diagnostic::error(codes::STALE_DERIVED, file, stale.at, stale.message);
    if let Ok(text) = std::str::from_utf8(bytes)
        && let Ok(document) = json::parse(text, file, codes::SYNTAX, codes::DUPLICATE_KEY)
    {
        diagnostic = diagnostic.locate(&document.source_map(), text, Anchor::Value);
        report.add_source(file, text);
    }
    report.push(diagnostic);
}

/// The first place where `actual` differs from `wanted`: the pointer, and the value
/// each has there (`None` where it has none).
fn first_difference<'v>(
    wanted: &'v Value,
    actual: &'v Value,
    at: JsonPointer,
) -> Option<(JsonPointer, Option<&'v Value>, Option<&'v Value>)> {
    match (wanted, actual) {
        (Value::Object(wanted), Value::Object(actual)) => {
            for (key, value) in wanted {
                match actual.get(key) {
                    Some(other) => {
                        if let Some(found) = first_difference(value, other, at.key(key)) {
                            return Some(found);
                        }
                    }
                    None => return Some((at.key(key), Some(value), None)),
                }
            }
            actual
                .iter()
                .find(|(key, _)| !wanted.contains_key(*key))
                .map(|(key, value)| (at.key(key), None, Some(value)))
        }
        (Value::Array(wanted), Value::Array(actual)) => {
            for index in 0..wanted.len().max(actual.len()) {
                match (wanted.get(index), actual.get(index)) {
                    (Some(value), Some(other)) => {
                        if let Some(found) = first_difference(value, other, at.index(index)) {
                            return Some(found);
                        }
                    }
                    (value, other) => return Some((at.index(index), value, other)),
                }
            }
            None
        }
        _ => (wanted != actual).then_some((at, Some(wanted), Some(actual))),
    }
}

/// A JSON value for a message: `` `"text"` ``, `` `[1,2]` ``, shortened.
fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN_VALUE_CHARS {
        return format!("`{text}`");
    }
    let short: String = text.chars().take(SHOWN_VALUE_CHARS).collect();
    format!("`{short}…`")
}

/// Collects differences between a derived file's governance fields and an entry's.
struct Differences<'a> {
    found: Vec<Difference>,
    /// Where the compared object is in the derived file.
    base: JsonPointer,
    /// `items[1].` in the catalog, empty in a detail.
    prefix: String,
    /// The entry file, as messages name it.
    entry_file: &'a str,
}

impl Differences<'_> {
    fn field<T: PartialEq + Display>(&mut self, key: &str, derived: T, entry: T) {
        if derived != entry {
            self.found.push(Difference {
                at: self.base.key(key),
                what: format!(
                    "`{}{key}` is `{derived}` here but `{entry}` in `{}`",
                    self.prefix, self.entry_file
                ),
            });
        }
    }

    /// The members a detail and a catalog item share with the entry.
    fn governance(
        &mut self,
        extension_id: &str,
        package_name: &str,
        status: Status,
        featured: bool,
        default_version: &str,
        entry: &Entry,
    ) {
        self.field("extensionId", extension_id, &entry.extension_id);
        self.field("packageName", package_name, &entry.package_name);
        self.field("status", status, entry.status);
        self.field("featured", featured, entry.featured);
        self.field("defaultVersion", default_version, &entry.default_version);
    }

    /// A detail's list of versions against the entry's.
    fn versions(&mut self, versions: &[&str], entry: &Entry) {
        let listed: Vec<&str> = entry.versions.iter().map(|v| v.version.as_str()).collect();
        if versions != listed.as_slice() {
            self.found.push(Difference {
                at: self.base.key("versions"),
                what: format!(
                    "`{}versions` lists {} here but {} in `{}`",
                    self.prefix,
                    words(versions),
                    words(&listed),
                    self.entry_file
                ),
            });
        }
    }
}

/// "`1.0.0`, `1.1.0`" or "nothing".
fn words(versions: &[&str]) -> String {
    if versions.is_empty() {
        return "nothing".to_owned();
    }
    versions
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where `detail` disagrees with `entry`.
fn detail_differences(detail: &Detail, entry: &Entry) -> Vec<Difference> {
    let entry_file = "entry.json";
    let mut diff = Differences {
        found: Vec::new(),
        base: JsonPointer::root(),
        prefix: String::new(),
        entry_file,
    };
    diff.field("schemaVersion", detail.schema_version, entry.schema_version);
    diff.governance(
        &detail.extension_id,
        &detail.package_name,
        detail.status,
        detail.featured,
        &detail.default_version,
        entry,
    );
    let readme = format!("extensions/{}/{README_MD}", entry.extension_id);
    diff.field("readmePath", detail.readme_path.as_str(), readme.as_str());
    let versions: Vec<&str> = detail.versions.iter().map(|v| v.version.as_str()).collect();
    diff.versions(&versions, entry);
    if versions.len() == entry.versions.len() {
        for (index, (derived, listed)) in detail.versions.iter().zip(&entry.versions).enumerate() {
            let mut inner = Differences {
                found: Vec::new(),
                base: JsonPointer::root().key("versions").index(index),
                prefix: format!("versions[{index}]."),
                entry_file,
            };
            inner.field("channel", derived.channel, listed.channel);
            inner.field("reviewStatus", derived.review_status, listed.review_status);
            if derived.changelog != listed.changelog {
                inner.found.push(Difference {
                    at: inner.base.key("changelog"),
                    what: format!("`versions[{index}].changelog` differs from `{entry_file}`"),
                });
            }
            diff.found.extend(inner.found);
        }
    }
    diff.found
}

/// Where `catalog` disagrees with the registry's entries. Ids of folders whose entry
/// has errors are left alone (what they should be is unknown).
fn catalog_differences(catalog: &Catalog, registry: &Registry) -> Vec<Difference> {
    let mut found = Vec::new();
    let items = JsonPointer::root().key("items");
    if catalog.schema_version != SCHEMA_VERSION {
        found.push(Difference {
            at: JsonPointer::root().key("schemaVersion"),
            what: format!(
                "`schemaVersion` is `{}`, not `{SCHEMA_VERSION}`",
                catalog.schema_version
            ),
        });
    }
    let mut known: HashMap<&str, (&Entry, String)> = HashMap::new();
    let mut unknown: HashSet<&str> = HashSet::new();
    for folder in &registry.folders {
        match &folder.entry {
            Some(entry) => {
                known
                    .entry(entry.extension_id.as_str())
                    .or_insert_with(|| (entry, folder.entry_file()));
            }
            None => {
                unknown.insert(folder.name.as_str());
            }
        }
    }

    let mut seen: HashSet<&str> = HashSet::new();
    let mut ids = Vec::with_capacity(catalog.items.len());
    for (index, item) in catalog.items.iter().enumerate() {
        let id = item.extension_id.as_str();
        let at = items.index(index);
        if !seen.insert(id) {
            found.push(Difference {
                at,
                what: format!("`{id}` is in the catalog twice"),
            });
            continue;
        }
        ids.push(id);
        if unknown.contains(id) {
            continue;
        }
        let Some((entry, entry_file)) = known.get(id) else {
            found.push(Difference {
                at: at.key("extensionId"),
                what: format!("`{id}` is in the catalog but no entry has that id"),
            });
            continue;
        };
        if !shown(entry.status) {
            found.push(Difference {
                at,
                what: format!(
                    "`{id}` is in the catalog but its entry's status is `{}` (hidden and blocked entries are left out)",
                    entry.status
                ),
            });
            continue;
        }
        let mut diff = Differences {
            found: Vec::new(),
            base: at,
            prefix: format!("items[{index}]."),
            entry_file,
        };
        diff.governance(
            id,
            &item.package_name,
            item.status,
            item.featured,
            &item.default_version,
            entry,
        );
        if let Some(default) = default_index(entry).and_then(|i| entry.versions.get(i)) {
            diff.field("defaultChannel", item.default_channel, default.channel);
        }
        diff.field(
            "defaultReviewStatus",
            item.default_review_status,
            entry.default_review_status,
        );
        diff.field(
            "detailPath",
            item.detail_path.as_str(),
            detail_path(&entry.extension_id).as_str(),
        );
        found.extend(diff.found);
    }
    for folder in &registry.folders {
        if let Some(entry) = &folder.entry
            && shown(entry.status)
            && !seen.contains(entry.extension_id.as_str())
        {
            found.push(Difference {
                at: items.clone(),
                what: format!(
                    "`{}` (status `{}`) is missing from the catalog",
                    entry.extension_id, entry.status
                ),
            });
        }
    }
    if !ids.is_sorted() {
        found.push(Difference {
            at: items,
            what: "`items` is not sorted by `extensionId`".to_owned(),
        });
    }
    found
}
