//! `registry add`: a new `entry.json` and `README.md` for a published package, what an
//! author writes by hand in step 2 of the publishing guide.

use curupira_diagnostics::js::JsTrim;
use std::fs;
use std::io;
use std::path::Path;

use curupira_diagnostics::{Diagnostic, JsonPointer, Report, Severity};
use semver::Version;
use serde_json::Value;
use spirit_manifest::{Options, check_value};

use super::derive::{encode, npm_file, summarize};
use super::walk::{Registry, extensions_dir, merge};
use super::{ENTRY_JSON, README_MD, RegistryError, Scaffolded, extension_file, write};
use crate::codes;
use crate::entry::check_entry_bytes;
use crate::metadata::MetadataSource;
use crate::model::{
    Channel, Entry, EntryVersion, ManifestSummary, ReviewStatus, SCHEMA_VERSION, Status,
};

/// Scaffolds `ROOT/registry/extensions/<id>/entry.json` and `README.md` for the npm
/// package `package`, from its document in `metadata`:
///
/// - the entry: status `listed`, not featured, every published version whose manifest
///   passes registry-strict validation and is named `package`, in SemVer order, each
///   `stable` (or `preview` when it has a prerelease tag) and `unverified`; the default
///   is the `latest` dist-tag, `unverified`;
/// - the README: the package, the default version, its hosts and capabilities, and the
///   sections an author fills in.
///
/// `id` and `package` are checked with the entry rules before anything is read (an
/// invalid id never becomes a path). The report holds the new entry's diagnostics,
/// errors when another entry already lists the package or id, and, as warnings with
/// their own codes, why published versions were left out; when `latest` cannot be the
/// default, its diagnostics stay errors. Nothing is written when the report has an
/// error; otherwise both files are written atomically into a new folder.
///
/// A `root` without `registry/extensions/` yet is a new registry: the folders are made
/// with the entry's (`root` itself must be a folder).
///
/// `Err`: `root` is not a folder, `root/registry/extensions` is not one, the folder exists already
/// ([`RegistryError::AlreadyExists`]), the package's document could not be had, or
/// the files could not be written.
pub fn scaffold(
    root: &Path,
    package: &str,
    id: &str,
    metadata: &dyn MetadataSource,
) -> Result<Scaffolded, RegistryError> {
    // A new registry has no `registry/extensions/` yet: made below, with the entry.
    let (extensions, new_registry) = match extensions_dir(root) {
        Ok(dir) => (dir, false),
        Err(RegistryError::NotARegistry { path })
            if fs::symlink_metadata(&path).is_err() && root.is_dir() =>
        {
            (path, true)
        }
        Err(error) => return Err(error),
    };
    let file = extension_file(id, ENTRY_JSON);
    let nothing = |report: Report| {
        Ok(Scaffolded {
            report: tidy(report),
            written: Vec::new(),
        })
    };

    // The id and the package name first: the id becomes a path.
    let provisional = entry(id, package, "0.0.0", vec![version_of("0.0.0")]);
    let checked = check_entry_bytes(&encode(&provisional, &file)?, &file);
    if checked.report.has_errors() {
        return nothing(checked.report);
    }
    let dir = extensions.join(id);
    if fs::symlink_metadata(&dir).is_ok() {
        return Err(RegistryError::AlreadyExists { path: dir });
    }

    let mut report = Report::new();
    report.add_file(file.clone());
    let folders = if new_registry {
        Vec::new()
    } else {
        Registry::read(root)?.folders
    };
    for folder in folders {
        let Some(other) = &folder.entry else {
            continue;
        };
        for (key, what, mine, theirs) in [
            (
                "packageName",
                "package",
                package,
                other.package_name.as_str(),
            ),
            (
                "extensionId",
                "extension id",
                id,
                other.extension_id.as_str(),
            ),
        ] {
            if mine == theirs {
                report.push(Diagnostic::error(
                    codes::DUPLICATE_ENTRY,
                    file.clone(),
                    JsonPointer::root().key(key),
                    format!(
                        "{what} `{mine}` is already listed by `{}`; `extensionId` and `packageName` are each unique in the registry",
                        folder.entry_file()
                    ),
                ));
            }
        }
    }

    let mut document = metadata.fetch(package)?;
    let latest = document.dist_tags.get("latest").cloned();
    let mut published: Vec<(Version, String)> = document
        .versions
        .keys()
        .filter_map(|key| Version::parse(key).ok().map(|v| (v, key.clone())))
        .collect();
    published.sort();

    let mut kept: Vec<(Version, String, ManifestSummary)> = Vec::new();
    for (version, key) in published {
        let value = document.versions.remove(&key).unwrap_or(Value::Null);
        let npm = npm_file(package, &key);
        let name = value.get("name").and_then(Value::as_str).map(str::to_owned);
        let summary = summarize(&value);
        let checked = check_value(
            value,
            &npm,
            &Options {
                registry_strict: true,
                host: None,
            },
        );
        let mut problems = checked.report;
        if let Some(name) = name.filter(|name| name != package) {
            problems.push(Diagnostic::error(
                codes::PACKAGE_NAME_MISMATCH,
                npm.clone(),
                JsonPointer::root().key("name"),
                format!("the published `package.json` is named `{name}`, not `{package}`"),
            ));
        }
        if !problems.has_errors() {
            report.append(problems);
            kept.push((version, key, summary));
        } else if latest.as_deref() == Some(key.as_str()) {
            report.append(problems);
        } else {
            report.add_file(npm);
            report.extend(problems.into_diagnostics().into_iter().map(|mut d| {
                if d.severity == Severity::Error {
                    d.severity = Severity::Warning;
                    d.message = format!("version `{key}` is left out of the entry: {}", d.message);
                }
                d
            }));
        }
    }

    if kept.is_empty() {
        report.push(Diagnostic::error(
            codes::EMPTY_VALUE,
            file.clone(),
            JsonPointer::root().key("versions"),
            format!(
                "no published version of `{package}` passes registry-strict validation under that name, so there is nothing to list"
            ),
        ));
    }
    let default = latest
        .as_deref()
        .and_then(|latest| kept.iter().find(|(_, key, _)| key == latest));
    let Some((_, default_version, default_manifest)) = default else {
        let why = match &latest {
            None => {
                format!("`{package}` has no `latest` dist-tag to take the default version from")
            }
            Some(latest) => format!(
                "the `latest` dist-tag of `{package}`, `{latest}`, cannot be the default version: it is not a published version that passes registry-strict validation (see above)"
            ),
        };
        report.push(Diagnostic::error(
            codes::DEFAULT_VERSION_NOT_LISTED,
            file,
            JsonPointer::root().key("defaultVersion"),
            format!("{why}; publish a fixed version and tag it `latest`"),
        ));
        return nothing(report);
    };
    if report.has_errors() {
        return nothing(report);
    }

    let versions = kept
        .iter()
        .map(|(version, key, _)| EntryVersion {
            channel: if version.pre.is_empty() {
                Channel::Stable
            } else {
                Channel::Preview
            },
            ..version_of(key)
        })
        .collect();
    let new = entry(id, package, default_version, versions);
    let entry_bytes = encode(&new, &file)?;
    let checked = check_entry_bytes(&entry_bytes, &file);
    let clean = !checked.report.has_errors();
    report.append(checked.report);
    if !clean {
        return nothing(report);
    }
    let readme = readme(package, default_version, default_manifest);

    if new_registry && let Err(source) = fs::create_dir_all(&extensions) {
        return Err(RegistryError::Io {
            action: "create",
            path: extensions,
            source,
        });
    }
    if let Err(source) = fs::create_dir(&dir) {
        return Err(if source.kind() == io::ErrorKind::AlreadyExists {
            RegistryError::AlreadyExists { path: dir }
        } else {
            RegistryError::Io {
                action: "create",
                path: dir,
                source,
            }
        });
    }
    let files = [
        (dir.join(ENTRY_JSON), entry_bytes),
        (dir.join(README_MD), readme.into_bytes()),
    ];
    match write::replace_all(&files) {
        Ok(written) => Ok(Scaffolded {
            report: tidy(report),
            written,
        }),
        Err(error) => {
            // The folder is new and ours: leave nothing behind.
            let _ = fs::remove_dir_all(&dir);
            Err(error)
        }
    }
}

/// `report` with only the files that have a diagnostic, as a registry report has them.
fn tidy(report: Report) -> Report {
    let mut tidy = Report::new();
    merge(&mut tidy, report);
    tidy
}

/// A new entry: listed, not featured, unverified.
fn entry(id: &str, package: &str, default: &str, versions: Vec<EntryVersion>) -> Entry {
    Entry {
        schema_version: SCHEMA_VERSION,
        extension_id: id.to_owned(),
        package_name: package.to_owned(),
        status: Status::Listed,
        featured: false,
        default_version: default.to_owned(),
        default_review_status: ReviewStatus::Unverified,
        versions,
    }
}

/// A new listed version: stable, unverified, no changelog.
fn version_of(version: &str) -> EntryVersion {
    EntryVersion {
        version: version.to_owned(),
        channel: Channel::Stable,
        review_status: ReviewStatus::Unverified,
        changelog: None,
    }
}

/// The README skeleton: what the entry lists, then the sections an author writes.
fn readme(package: &str, version: &str, manifest: &ManifestSummary) -> String {
    let title = if manifest.display_name.js_trim().is_empty() {
        package
    } else {
        manifest.display_name.as_str()
    };
    let mut text = format!("# {title}\n\n");
    if let Some(description) = manifest.description.as_deref().map(str::trim)
        && !description.is_empty()
    {
        text.push_str(description);
        text.push_str("\n\n");
    }
    let list = |items: &[String], none: &str| {
        if items.is_empty() {
            none.to_owned()
        } else {
            items
                .iter()
                .map(|item| format!("`{item}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    text.push_str(&format!("- Package: `{package}`\n"));
    text.push_str(&format!("- Default version: `{version}`\n"));
    text.push_str(&format!(
        "- Hosts: {}\n",
        list(&manifest.supported_hosts, "none")
    ));
    text.push_str(&format!(
        "- Capabilities: {}\n",
        list(&manifest.requested_capabilities, "none requested")
    ));
    if !manifest.tools.is_empty() {
        text.push_str(&format!("- Tools: {}\n", list(&manifest.tools, "none")));
    }
    text.push_str(concat!(
        "\n## What it does\n\n",
        "TODO: what the extension does and when to use it, for marketplace readers.\n",
        "\n## Notes for marketplace readers\n\n",
        "TODO: setup, the settings and secrets it asks for, known limitations.\n",
    ));
    text
}
