//! The registry folder (SPEC section 4): its walk and registry-wide rules, the build of
//! the derived files, the check of a registry, and the scaffold of a new entry.
//!
//! ROOT is the folder that holds `registry/`. Every file name in a diagnostic is
//! relative to ROOT with `/` separators (`registry/extensions/acme.lookup/entry.json`);
//! a published manifest is named `npm:<package>@<version>` (no line or column: it is
//! not a file of the registry).
//!
//! The stages, one module each:
//! - `walk`: reads `registry/extensions/*` (sorted by folder name), checks each
//!   `entry.json`, and applies the registry-wide rules.
//! - `derive`: with npm metadata, checks every listed version and computes
//!   `detail.json` and `catalog.json`.
//! - `compare`: the derived files on disk against the entries (and, with metadata,
//!   against the bytes the build writes).
//! - `readable`: the derived files against the Spirit app's marketplace reader
//!   ([`crate::reader`]): on disk for `check`, before writing for `build`.
//! - `write`: atomic replacement (write beside, rename).
//! - `scaffold`: a new `entry.json` and `README.md` for a published package.
//!
//! Decisions where the issue leaves room:
//! - **A missing `registry/extensions`** is a [`RegistryError::NotARegistry`], not a
//!   diagnostic: the ROOT given is most likely wrong, and nothing else can be checked.
//! - **Anything in `registry/extensions/` that is not a folder** is a
//!   `registry/stray-file` too (that folder holds extension folders only).
//! - **`registry/revoked-default`** is one warning per entry when the default version's
//!   `reviewStatus` is `revoked` (at `/versions/<i>/reviewStatus`) or, failing that,
//!   when `defaultReviewStatus` is `revoked` (at `/defaultReviewStatus`).
//! - **`README.md`** is read as UTF-8 with invalid bytes replaced; it "names" the package
//!   or the default version when it contains `packageName` or `defaultVersion` as
//!   plain text.
//! - **A listed version is looked up** in the package document's `versions` as
//!   written, then without its build metadata (npm drops build metadata when it
//!   publishes).
//! - **`registry/package-name-mismatch`** is reported on the entry, at the version
//!   (`/versions/<i>/version`), naming the published manifest.
//! - **The derived files' shapes** are the app's marketplace reader's: `catalog.json`
//!   is `{schemaVersion, items}`, each item the entry's governance, `defaultChannel`
//!   (the default version's channel), `detailPath` (`extensions/<id>/detail.json`) and
//!   the default version's flat metadata; `detail.json` has `readmePath`
//!   (`extensions/<id>/README.md`) and per version the flat metadata with `tarballUrl`,
//!   `integrity` and `shasum` from the npm document's `dist`. Both paths are relative to
//!   the folder that holds `catalog.json`. The flat metadata maps the published
//!   manifest: `displayName`, `description` (trimmed), `author` (a string as is, or an
//!   author object's `name`), `homepageUrl` (`homepage`), `repositoryUrl` (a string as
//!   is, or the object's `url`), `keywords`, `supportedHosts`,
//!   `requestedCapabilities`. No `iconUrl` is written: a package's `icon` is a path in
//!   its tarball, not a URL the app can load.
//! - **What the reader needs of npm** is checked by the build on each listed version:
//!   a non-empty `description` (`registry/missing-description`, unless registry-strict
//!   validation already reported `/description`) and a usable `dist`
//!   (`registry/unusable-dist`: an https `tarball`, and a well-formed `integrity` or
//!   `shasum`, each one present well-formed). The build then runs the reader rules on
//!   the documents it is about to write and writes nothing if one would be refused.
//! - **The reader check of `check`** reads `catalog.json` and every `detail.json` it
//!   leads to, then the `detail.json` of every entry it does not list (hidden, blocked,
//!   or an unreadable catalog), each once; a `detailPath` or `readmePath` must name a
//!   file of the registry (an https URL is not fetched), and every version of a detail
//!   the reader accepts must be installable (`defaultVersion` listed, an https
//!   `tarballUrl`, a well-formed `integrity` or `shasum`); no JSON document over
//!   512 KiB, no README over 2 MiB (the reader's limits; the build checks them on what
//!   it writes). It runs beside the entry comparison: a file in an old shape is both
//!   `registry/stale-derived` and refused by the reader.
//! - **Registry-wide diagnostics on an `entry.json`** get the line and column of their
//!   pointer; `registry/stray-file`, `registry/missing-entry` and the README rules are
//!   reported on the file concerned, at the root pointer.
//! - **Order of the report**: stray files directly under `registry/extensions/`, then each
//!   extension folder in name order (its `entry.json` diagnostics, the folder and
//!   README rules, the registry-wide rules, the npm checks with the published
//!   manifests' own diagnostics, its `detail.json`), then `catalog.json`, then the
//!   reader check (`catalog.json`, the details it leads to, the other details).
//! - **The files of a report** are the files that have a diagnostic (a clean check says
//!   "ok: no problems"): `Report` searches its file list on every addition, and
//!   registering every file of a 10,000-entry registry would make the check quadratic.
//! - **Check without metadata** compares a derived file with the entries field by field
//!   (`extensionId`, `packageName`, `status`, `featured`, `defaultVersion`; a detail's
//!   `schemaVersion`, `readmePath` and every version's `version`, `channel`,
//!   `reviewStatus` and `changelog`; an item's `defaultChannel`, `defaultReviewStatus`
//!   and `detailPath`; the catalog's set and order of ids); what comes from npm (the
//!   flat metadata, publish times, tarballs and digests) is compared only with
//!   metadata, byte for byte. A derived file of an entry that has errors is not
//!   compared.
//! - **The build rewrites every derived file** (and lists each in `written`) when the
//!   report has no error; it writes nothing otherwise. Files are not synced to disk:
//!   the rename makes each replacement atomic for readers, and the files can always be
//!   rebuilt.

mod compare;
mod derive;
mod readable;
mod scaffold;
mod walk;
mod write;

use std::io;
use std::path::{Path, PathBuf};

use curupira_diagnostics::Report;

use crate::metadata::{MetadataError, MetadataSource};

pub use scaffold::scaffold;

/// `registry/catalog.json`, relative to ROOT.
const CATALOG_FILE: &str = "registry/catalog.json";
/// `registry/extensions`, relative to ROOT.
const EXTENSIONS_DIR: &str = "registry/extensions";
/// The hand-written entry of an extension folder.
const ENTRY_JSON: &str = "entry.json";
/// The hand-written marketplace text of an extension folder.
const README_MD: &str = "README.md";
/// The derived file of an extension folder.
const DETAIL_JSON: &str = "detail.json";

/// Why a registry could not be checked, built or added to at all (problems *in* the
/// registry are diagnostics in a [`Report`] instead).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// ROOT does not hold `registry/extensions/`.
    #[error("`{}` is not a folder: ROOT must be the folder that holds `registry/extensions/`", path.display())]
    NotARegistry {
        /// The `registry/extensions` path looked for.
        path: PathBuf,
    },
    /// A file or folder could not be read, written, renamed or created.
    #[error("could not {action} `{}`", path.display())]
    Io {
        /// What was being done: `read`, `write`, `rename`, `create`, `list`.
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// `registry add` was asked for an extension folder that already exists.
    #[error("`{}` already exists; `registry add` never replaces an extension folder", path.display())]
    AlreadyExists {
        /// The extension folder.
        path: PathBuf,
    },
    /// `registry add` could not get the package's npm document.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// A derived file could not be encoded as JSON (a bug: the models always encode).
    #[error("could not encode `{file}` as JSON")]
    Encode {
        /// The file, relative to ROOT.
        file: String,
        /// What serde_json said.
        source: serde_json::Error,
    },
}

impl RegistryError {
    /// An I/O error while doing `action` on `path`.
    fn io<'p>(action: &'static str, path: &'p Path) -> impl FnOnce(io::Error) -> Self + 'p {
        move |source| RegistryError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    }
}

/// The outcome of [`build`]: every diagnostic, and the derived files written (none
/// when the report has an error).
#[derive(Debug)]
pub struct Built {
    /// Every diagnostic of the entries, the registry-wide rules and the npm checks.
    pub report: Report,
    /// The files written (`ROOT/registry/catalog.json` and each `detail.json`), in
    /// the order they were renamed into place; empty when the report has an error.
    pub written: Vec<PathBuf>,
}

/// The outcome of [`scaffold`]: every diagnostic, and the files written (none when the
/// report has an error).
#[derive(Debug)]
pub struct Scaffolded {
    /// The diagnostics: the new entry's, and, as warnings, why published versions were
    /// left out of it.
    pub report: Report,
    /// `ROOT/registry/extensions/<id>/entry.json` and `README.md`; empty when the
    /// report has an error.
    pub written: Vec<PathBuf>,
}

/// Checks the registry under `root`: every `entry.json`, the registry-wide rules and
/// the derived files. Without `metadata`, derived files must agree with the entries;
/// with it, every listed version is checked against npm as [`build`] does, and each
/// derived file must be byte for byte what the build would write. Either way the
/// derived files are checked with the Spirit app's marketplace reader rules
/// ([`crate::reader`], codes `registry/reader-…`). Nothing is written.
///
/// An `Err` means the registry could not be read at all (no `registry/extensions/`, a
/// file that cannot be read); every problem in it is a diagnostic in the report.
pub fn check(root: &Path, metadata: Option<&dyn MetadataSource>) -> Result<Report, RegistryError> {
    let mut registry = walk::Registry::read(root)?;
    let derived = metadata.map(|source| derive::derive(&mut registry, source));
    let mut catalog = Report::new();
    compare::compare(root, &mut registry, derived.as_ref(), &mut catalog)?;
    let mut readable = Report::new();
    readable::check(root, &registry, &mut readable)?;
    let mut report = registry.into_report();
    walk::merge(&mut report, catalog);
    walk::merge(&mut report, readable);
    Ok(report)
}

/// Builds the derived files of the registry under `root` from its entries and npm
/// `metadata`: every listed version must be published, pass registry-strict validation,
/// be named `packageName`, have a description and a `dist` the app can install from.
/// The files are in the shapes the Spirit app's marketplace reader requires, and are
/// checked with its rules before anything is written. When the report has no error,
/// `registry/catalog.json` and every `detail.json` are written (each to a temporary
/// file beside it, then renamed into place); otherwise nothing is written.
///
/// Same inputs, same bytes: JSON with 2-space indentation, members in a fixed order, a
/// trailing newline, and no timestamp of the build.
pub fn build(root: &Path, metadata: &dyn MetadataSource) -> Result<Built, RegistryError> {
    let mut registry = walk::Registry::read(root)?;
    let derived = derive::derive(&mut registry, metadata);
    let mut report = registry.into_report();
    if !report.has_errors() {
        readable::guard(root, &derived, &mut report)?;
    }
    if report.has_errors() {
        return Ok(Built {
            report,
            written: Vec::new(),
        });
    }
    let files = derived.files(root)?;
    let written = write::replace_all(&files)?;
    Ok(Built { report, written })
}

/// `name` inside extension folder `folder`, relative to ROOT.
fn extension_file(folder: &str, name: &str) -> String {
    format!("{EXTENSIONS_DIR}/{folder}/{name}")
}
