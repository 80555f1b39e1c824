//! The derived files against the Spirit app's marketplace reader ([`crate::reader`]):
//! on disk for `check`, and what the build is about to write for `build`.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::Path;

use curupira_diagnostics::json;
use curupira_diagnostics::{Anchor, Diagnostic, JsonPointer, Report};
use serde::Serialize;
use serde_json::Value;

use super::derive::{Derived, encode};
use super::walk::Registry;
use super::{CATALOG_FILE, DETAIL_JSON, README_MD, RegistryError, extension_file};
use crate::codes;
use crate::reader::{self, Document, Location, Problem};

/// The folder of `catalog.json`, relative to ROOT: the base of every registry path.
const BASE: &str = "registry";

/// Checks `catalog.json`, every `detail.json` it leads to, and the `detail.json` of
/// every entry it does not list, with the reader's rules; each path the reader would
/// follow must name a file of the registry. Remote https paths are not followed.
pub(super) fn check(
    root: &Path,
    registry: &Registry,
    report: &mut Report,
) -> Result<(), RegistryError> {
    let mut checked: HashSet<String> = HashSet::new();
    if let Some((text, value)) = read_json(root, CATALOG_FILE, report)? {
        let reading = reader::read_catalog(&value);
        let mut found = reading.problems.clone();
        let mut details = Vec::new();
        for item in &reading.items {
            let at = JsonPointer::root()
                .key("items")
                .index(item.index)
                .key("detailPath");
            match reader::resolve(&item.detail_path, None) {
                Err(why) => {
                    found.push(path_problem(Document::Catalog, at, &item.detail_path, &why))
                }
                Ok(Location::Remote(_)) => {}
                Ok(Location::Registry(relative)) => {
                    let file = format!("{BASE}/{relative}");
                    if !is_file(root, &file) {
                        found.push(missing_file(
                            Document::Catalog,
                            at,
                            "detailPath",
                            &item.detail_path,
                            &file,
                        ));
                    } else if checked.insert(file.clone()) {
                        details.push((file, item.extension_id.clone()));
                    }
                }
            }
        }
        push_located(report, CATALOG_FILE, Some(&text), found);
        for (file, id) in details {
            check_detail(root, &file, &id, report)?;
        }
    }
    for folder in &registry.folders {
        let Some(entry) = &folder.entry else {
            continue;
        };
        let file = extension_file(&folder.name, DETAIL_JSON);
        if folder.has_detail && checked.insert(file.clone()) {
            check_detail(root, &file, &entry.extension_id, report)?;
        }
    }
    Ok(())
}

/// Checks one `detail.json` of `extension_id`: the reader's rules, its `readmePath`,
/// and whether every version could be installed.
fn check_detail(
    root: &Path,
    file: &str,
    extension_id: &str,
    report: &mut Report,
) -> Result<(), RegistryError> {
    let Some((text, value)) = read_json(root, file, report)? else {
        return Ok(());
    };
    let reading = reader::read_detail(&value, Some(extension_id));
    let mut found = reading.problems.clone();
    if reading.accepted() {
        if let Some(readme) = &reading.readme_path {
            let at = JsonPointer::root().key("readmePath");
            match reader::resolve(readme, None) {
                Err(why) => found.push(path_problem(Document::Detail, at, readme, &why)),
                Ok(Location::Remote(_)) => {}
                Ok(Location::Registry(relative)) => {
                    let target = format!("{BASE}/{relative}");
                    if !is_file(root, &target) {
                        found.push(missing_file(
                            Document::Detail,
                            at,
                            "readmePath",
                            readme,
                            &target,
                        ));
                    } else {
                        readme_size(root, &target, report);
                    }
                }
            }
        }
        found.extend(reader::installability(&reading));
    }
    push_located(report, file, Some(&text), found);
    Ok(())
}

/// What the build is about to write, against the reader's rules and sizes (only the
/// READMEs' sizes are read): errors on the derived files when the reader would refuse
/// one. Only called when every part was derived.
pub(super) fn guard(
    root: &Path,
    derived: &Derived,
    report: &mut Report,
) -> Result<(), RegistryError> {
    for detail in derived.details.iter().flatten() {
        let file = extension_file(&detail.extension_id, DETAIL_JSON);
        json_size(&file, &encode(detail, &file)?, report);
        readme_size(
            root,
            &extension_file(&detail.extension_id, README_MD),
            report,
        );
        let reading = reader::read_detail(&to_value(detail, &file)?, Some(&detail.extension_id));
        let mut found = reading.problems.clone();
        if reading.accepted() {
            found.extend(reader::installability(&reading));
        }
        push_located(report, &file, None, found);
    }
    if let Some(catalog) = &derived.catalog {
        json_size(CATALOG_FILE, &encode(catalog, CATALOG_FILE)?, report);
        let reading = reader::read_catalog(&to_value(catalog, CATALOG_FILE)?);
        push_located(report, CATALOG_FILE, None, reading.problems);
    }
    Ok(())
}

/// `value` as JSON.
fn to_value<T: Serialize>(value: &T, file: &str) -> Result<Value, RegistryError> {
    serde_json::to_value(value).map_err(|source| RegistryError::Encode {
        file: file.to_owned(),
        source,
    })
}

/// `ROOT/<file>` read as UTF-8 JSON; `None` when it does not exist (reported
/// elsewhere) or is not JSON (reported here, `registry/reader-json`).
fn read_json(
    root: &Path,
    file: &str,
    report: &mut Report,
) -> Result<Option<(String, Value)>, RegistryError> {
    let path = root.join(file);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(RegistryError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    let limit = reader::MAX_JSON_BYTES;
    if bytes.len() as u64 > limit {
        report.add_file(file);
        report.push(too_large(file, bytes.len() as u64, limit));
    }
    let unreadable = |why: String| {
        Diagnostic::error(
            codes::READER_JSON,
            file,
            JsonPointer::root(),
            format!("`{file}` is not JSON the marketplace reader can read: {why}"),
        )
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => {
            report.add_file(file);
            report.push(unreadable("it is not UTF-8".to_owned()));
            return Ok(None);
        }
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(value) => Ok(Some((text, value))),
        Err(error) => {
            report.add_file(file);
            report.push(unreadable(error.to_string()));
            Ok(None)
        }
    }
}

/// Whether `ROOT/<file>` is a file.
fn is_file(root: &Path, file: &str) -> bool {
    fs::metadata(root.join(file)).is_ok_and(|m| m.is_file())
}

/// `registry/reader-url` for a path the reader refuses.
fn path_problem(document: Document, at: JsonPointer, path: &str, why: &str) -> Problem {
    let key = at.last().unwrap_or_default();
    Problem {
        document,
        at,
        code: codes::READER_URL,
        message: format!(
            "`{key}` `{path}` {why}: the reader fetches https URLs or paths relative to the folder that holds `catalog.json` only"
        ),
    }
}

/// `registry/reader-missing-file` for a path that names no file.
fn missing_file(document: Document, at: JsonPointer, key: &str, path: &str, file: &str) -> Problem {
    Problem {
        document,
        at,
        code: codes::READER_MISSING_FILE,
        message: format!(
            "`{key}` `{path}` names `{file}`, which the registry does not have: the reader would get a 404"
        ),
    }
}

/// Adds `problems` as errors on `file`, located in `text` when it is given and parses.
fn push_located(report: &mut Report, file: &str, text: Option<&str>, problems: Vec<Problem>) {
    if problems.is_empty() {
        return;
    }
    let map = text.and_then(|text| {
        json::parse(text, file, codes::SYNTAX, codes::DUPLICATE_KEY)
            .ok()
            .map(|document| (text, document.source_map()))
    });
    match map {
        Some((text, _)) => report.add_source(file, text),
        None => report.add_file(file),
    }
    for problem in problems {
        let mut diagnostic = Diagnostic::error(problem.code, file, problem.at, problem.message);
        if let Some((text, map)) = &map {
            diagnostic = diagnostic.locate(map, text, Anchor::Value);
        }
        report.push(diagnostic);
    }
}

/// `registry/reader-too-large` for `file` of `size` bytes over `limit`.
fn too_large(file: &str, size: u64, limit: u64) -> Diagnostic {
    Diagnostic::error(
        codes::READER_TOO_LARGE,
        file,
        JsonPointer::root(),
        format!(
            "`{file}` is {size} bytes: the marketplace reader refuses a response larger than {limit} bytes ({} KiB)",
            limit / 1024
        ),
    )
}

/// The size rule on the bytes of a JSON document about to be written.
fn json_size(file: &str, bytes: &[u8], report: &mut Report) {
    let size = bytes.len() as u64;
    if size > reader::MAX_JSON_BYTES {
        report.add_file(file);
        report.push(too_large(file, size, reader::MAX_JSON_BYTES));
    }
}

/// The size rule on `ROOT/<file>`, a README (nothing when it cannot be read: the
/// README rules say so).
fn readme_size(root: &Path, file: &str, report: &mut Report) {
    let Ok(metadata) = fs::metadata(root.join(file)) else {
        return;
    };
    if metadata.len() > reader::MAX_README_BYTES {
        report.add_file(file);
        report.push(too_large(file, metadata.len(), reader::MAX_README_BYTES));
    }
}
