//! Spirit extension packages: `package.json` with its `spiritExtension` object, package
//! folders and archives, checked against every rule of the Spirit extension format; the
//! settings and secrets rules a Spirit host applies at run time; the tool names a model
//! sees; and (feature `install`) a safe install from a ZIP or marketplace `.tgz`.
//!
//! The checker reports **every** problem in one pass, each as a
//! [`Diagnostic`] with a stable code (see [`codes`] and the repository's
//! [`docs/DIAGNOSTICS.md`](https://example.invalid/curupira/blob/main/docs/DIAGNOSTICS.md)),
//! the file, an RFC 6901 pointer and the line and column. The Spirit app's extension
//! host is the reference, and each code has one level: an error where the app refuses
//! the package, an error where it installs it but the package cannot work as declared
//! (tools the model never sees, a `main` it cannot load), a warning where the app
//! installs and runs it but the format or good practice says otherwise (values it
//! trims, `null` members, ignored wrong-typed members, a version that is not SemVer,
//! repeats, invalid JSON Schemas). Only a package without errors becomes a
//! [`PackageJson`], read as the app reads it (trimmed, `null` and ignored members
//! dropped).
//!
//! ```
//! use spirit_manifest::{check_str, Options};
//!
//! let text = r#"{
//!   "name": "@acme/Lookup",
//!   "version": "1.0.0",
//!   "main": "../index.js",
//!   "spiritExtension": {
//!     "displayName": "Lookup",
//!     "supportedHosts": ["cli", "web"],
//!     "requestedCapabilities": ["system-prompt"],
//!     "colour": "red"
//!   }
//! }"#;
//! let checked = check_str(text, "package.json", &Options::default());
//! assert!(checked.package.is_none());
//! let found: Vec<_> = checked
//!     .report
//!     .diagnostics()
//!     .iter()
//!     .map(|d| (d.code.as_ref(), d.path.as_str(), d.line().unwrap_or(0)))
//!     .collect();
//! assert_eq!(
//!     found,
//!     [
//!         ("spirit/invalid-name", "/name", 2),
//!         ("spirit/invalid-path", "/main", 4),
//!         ("spirit/unknown-value", "/spiritExtension/supportedHosts/1", 7),
//!         ("spirit/unknown-key", "/spiritExtension/colour", 9),
//!     ]
//! );
//! ```
//!
//! Three inputs, one set of rules:
//! - [`check_str`] / [`check_bytes`]: a `package.json` text alone (structure rules);
//! - [`check_folder`]: a package folder — also every path the manifest names must be a
//!   regular file inside the folder (no symlink out of it), and the CLI hooks file is
//!   read and checked under its own name;
//! - `check_archive` (feature `archive`): a ZIP (exactly one `package.json`, whose
//!   folder is the root) or a marketplace `.tgz` (`package/` at the root), checked
//!   without unpacking.
//!
//! [`Options`] add registry-strict mode and the host the package is meant for.
//!
//! At run time a host calls [`settings::check_update`], [`settings::with_defaults`],
//! [`settings::check_values`], [`settings::check_secret_key`],
//! which keep the rules of the Spirit app's settings accessors; [`runtime`] has the
//! same rules as operations (`ctx.settings`, `ctx.secrets` on a host with or without
//! secret storage) and checks a tool's arguments and result against its schemas (the
//! app does not, so a host reports, not refuses).
//!
//! The names the model sees for tools are the Spirit app's: [`invocation_name`] builds
//! one tool's (`extension__{id}__{tool}__{hash}`), and [`offered_tools`] names every tool
//! of a host's installed extensions as the app does — sorted by display name and id
//! ([`installed_order`]; exact ICU collation with the `collation` feature, exact for
//! ASCII without it), only extensions requesting both tool capabilities
//! ([`offers_tools`]), a `__N` suffix on a name already taken.
//!
//! With the `schema` feature, [`PackageJson`] implements `schemars::JsonSchema`: the schema of
//! the file for editors (descriptions from these doc comments, every closed set as an
//! `enum`, the checkers' name patterns), printed by `curupira schema spirit-package`.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

#[cfg(feature = "archive")]
pub mod archive;
pub mod codes;
pub mod files;
#[cfg(feature = "install")]
pub mod install;
mod invocation;
#[cfg(feature = "schema")]
mod json_schema;
mod model;
mod paths;
pub mod runtime;
mod schema;
pub mod settings;
mod validate;

use std::io;
use std::path::{Path, PathBuf};

use curupira_diagnostics::{Diagnostic, Report};

pub use files::{FileKind, Folder, PackageFiles};
pub use invocation::{
    MAX_INVOCATION_NAME, OfferedTool, compare_ids, installed_order, invocation_name, offered_tools,
    offered_tools_in_order, offers_tools,
};
pub use model::{
    ActivationEvent, ApprovalMode, Capability, CliContribution, CliHook, Contributes,
    DesktopContribution, ExecutionMode, HooksFile, HooksRef, Host, Other, PackageJson, Person,
    Repository, SCHEMA_VERSION, SecretSlot, SelectOption, SettingDef, SettingType, SettingsPage,
    Slot, SpiritExtension, Stylesheet, TokenRole, Tokens, Tool, Variant,
};
pub use paths::{PathProblem, RelativePath};

/// The `curupira-diagnostics` crate, whose [`Report`] and [`Diagnostic`] every check
/// returns: re-exported so a user names them with the very version this crate uses,
/// without a dependency of their own.
pub use curupira_diagnostics;

/// The `serde_json` crate, whose `Value` tool schemas, settings and [`check_value`]'s
/// input are: re-exported for the same reason.
pub use serde_json;

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The package's own file.
pub const PACKAGE_JSON: &str = "package.json";

/// How strictly to check, and for which host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Registry-strict mode: `schemaVersion`, `displayName`, `supportedHosts` and
    /// `requestedCapabilities` must be written out, and a declared `icon` must be in
    /// the package (checked when the package's files are at hand).
    pub registry_strict: bool,
    /// The host the package is checked or installed for: `supportedHosts` must list it.
    pub host: Option<Host>,
}

/// The outcome of checking one package.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The package, when there is no error (warnings allowed).
    pub package: Option<PackageJson>,
    /// The CLI hooks file, when the package names one, its files were at hand, and it
    /// has no error.
    pub hooks: Option<HooksFile>,
    /// Every diagnostic (file order within each file), with the texts for rendering.
    pub report: Report,
}

impl Checked {
    /// The diagnostics.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        self.report.diagnostics()
    }
}

/// Why a package could not be checked at all (as opposed to a package with problems,
/// which is a [`Checked`] with errors).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A file could not be read.
    #[error("could not read `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

/// The package the Spirit app loads from the folder `dir` that `checked` checked: the
/// checked package, or, when every error found is one the app installs anyway (it
/// breaks at run time: tools without `main`, a `main` that is a folder, …), its
/// `package.json` read as the app reads it. `None` when the app would refuse it (or the
/// model cannot hold what it declares).
pub fn loaded_package(dir: &Path, checked: &Checked) -> Option<PackageJson> {
    if let Some(package) = &checked.package {
        return Some(package.clone());
    }
    let only_run_time = checked
        .diagnostics()
        .iter()
        .all(|d| !d.is_error() || codes::level(&d.code) == Some(codes::Level::BreaksAtRunTime));
    if !only_run_time || checked.diagnostics().is_empty() {
        return None;
    }
    let file = std::fs::File::open(dir.join(PACKAGE_JSON)).ok()?;
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut io::Read::take(file, MAX_LOADED_BYTES), &mut bytes).ok()?;
    validate::as_loaded(serde_json::from_slice(&bytes).ok()?)
}

/// The most bytes of `package.json` [`loaded_package`] reads (far above any real one).
const MAX_LOADED_BYTES: u64 = 16 * 1024 * 1024;

/// Checks a `package.json` text (structure rules only); `file` is the name diagnostics
/// show (`<stdin>` for standard input).
pub fn check_str(text: &str, file: &str, options: &Options) -> Checked {
    validate::check_text(text, file, options, None)
}

/// Checks a `package.json` that is already a JSON value — a published manifest inside
/// an npm package document, say — with the structure rules; diagnostics have pointers
/// but no line and column, and `file` names the value (`npm:@acme/lookup@1.0.0`).
///
/// ```
/// use spirit_manifest::serde_json::json;
/// use spirit_manifest::{check_value, Options};
///
/// let published = json!({"name": "lookup", "version": "1.0.0", "description": "Looks things up.",
///     "spiritExtension": {"displayName": "Lookup", "supportedHosts": ["cli"]}});
/// let strict = Options { registry_strict: true, host: None };
/// let checked = check_value(published, "npm:lookup@1.0.0", &strict);
/// let paths: Vec<_> = checked.diagnostics().iter().map(|d| d.path.as_str()).collect();
/// assert_eq!(paths, ["/spiritExtension/schemaVersion", "/spiritExtension/requestedCapabilities"]);
/// ```
pub fn check_value(value: serde_json::Value, file: &str, options: &Options) -> Checked {
    validate::check_value(value, file, options)
}

/// Checks `package.json` bytes as the Spirit app reads them: a leading byte-order mark
/// is a `spirit/byte-order-mark` error (the app refuses it); text that is not UTF-8 is
/// a `spirit/encoding` warning at the first bad byte and is checked with each invalid
/// byte read as U+FFFD, as the app does.
pub fn check_bytes(bytes: &[u8], file: &str, options: &Options) -> Checked {
    validate::check_bytes(bytes, file, options, None)
}

/// Checks a package folder: the structure rules, every path the manifest names, and
/// the CLI hooks file.
pub fn check_folder(dir: &Path, options: &Options) -> Result<Checked, CheckError> {
    check_package(&Folder::new(dir), options).map_err(|source| CheckError::Read {
        path: dir.join(PACKAGE_JSON),
        source,
    })
}

/// Checks the package whose files `files` gives: its `package.json` at the root, every
/// path the manifest names, and the CLI hooks file. A missing `package.json` is a
/// `spirit/missing-file` error; an `Err` means a file could not be read.
pub fn check_package(files: &dyn PackageFiles, options: &Options) -> io::Result<Checked> {
    validate::check_package(files, options)
}

/// Checks a ZIP or marketplace `.tgz` without unpacking it; a layout or safety problem
/// of the archive is reported as a diagnostic (`spirit/archive-…`).
#[cfg(feature = "archive")]
pub fn check_archive(path: &Path, options: &Options) -> Result<Checked, CheckError> {
    archive::check(path, options)
}

/// UTF-8 text without its byte-order mark, or a report with the one encoding error.
pub(crate) fn decode<'b>(bytes: &'b [u8], file: &str) -> Result<&'b str, Report> {
    curupira_diagnostics::decode_utf8(bytes, file, codes::ENCODING)
}
