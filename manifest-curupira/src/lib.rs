//! `curupira-extension.toml`, manifest format 1: parsing, validation and printing.
//!
//! A manifest lets a host list an extension without running it (SPEC section 2). The
//! checker reports **every** problem in one pass, each as a
//! [`Diagnostic`] with a stable code (see [`codes`] and the repository's
//! [`docs/DIAGNOSTICS.md`](https://example.invalid/curupira/blob/main/docs/DIAGNOSTICS.md)),
//! a JSON Pointer, and the line and column in the file; a missing key is reported at
//! the pointer it would have (`/launch/program`), located at its enclosing table. Only a
//! manifest without errors becomes a [`Manifest`]; warnings (unknown keys, an unknown
//! runtime, an npx launch without a version, …) do not stop it.
//!
//! `[launch]` takes the three forms the reference host (`curupira` 0.4.0) accepts, and
//! only those ([`Launch`]):
//!
//! ```toml
//! [launch]            # uv's uvx runs `executable` from the Python package
//! type = "uvx"
//! package = "curupira-plugins"
//! executable = "curupira-plugins"
//! # version = "0.1.0", args = ["--quiet"]: optional
//! ```
//!
//! ```toml
//! [launch]            # npx runs the npm package; no `version` is a warning
//! type = "npx"
//! package = "@acme/curupira-ext"
//! version = "1.2.0"
//! # bin = "acme-ext", args = [...]: optional
//! ```
//!
//! ```toml
//! [launch]            # a program: with a `/`, relative to the manifest's folder;
//! type = "executable" # without, looked up on PATH
//! program = "./bin/acme-ext"
//! args = ["--serve"]
//! ```
//!
//! `type = "command"` (with `command = …`) is refused, as the reference host refuses
//! it, with the fix in the message:
//!
//! ```
//! use curupira_manifest::check_str;
//!
//! let text = r#"
//! manifest_version = 1
//! name = "Acme"
//! version = "v1.2.0"
//! protocol_version = 2
//! runtime = "node"
//! kind = "trigger"
//! trigger_types = ["github-issue"]
//! colour = "red"
//!
//! [launch]
//! type = "command"
//! command = "./bin/acme-ext"
//! "#;
//! let checked = check_str(text, "curupira-extension.toml");
//! assert!(checked.manifest.is_none());
//! let found: Vec<_> = checked
//!     .report
//!     .diagnostics()
//!     .iter()
//!     .map(|d| (d.code.as_ref(), d.path.as_str(), d.line().unwrap_or(0)))
//!     .collect();
//! assert_eq!(
//!     found,
//!     [
//!         ("manifest/invalid-name", "/name", 3),
//!         ("manifest/invalid-version", "/version", 4),
//!         ("manifest/unknown-key", "/colour", 9),
//!         ("manifest/command-launch", "/launch/type", 12),
//!     ]
//! );
//! let fix = &checked.report.diagnostics()[3].message;
//! assert!(fix.contains(r#"write `type = "executable"` with `program = "./bin/acme-ext"`"#));
//! assert_eq!(checked.report.errors(), 3);
//! ```
//!
//! The other tables: `[package]` (`source` `pip` or `npm`, `name`, optional `version`:
//! where the extension is installed from, [`Package`]), `[capabilities]`
//! (`permissions`, [`Capabilities`]) and `agent_providers`, which must be empty: the
//! reference host refuses an extension that provides coding agents, as it refuses
//! `kind = "agent"`.
//!
//! The value rules live with the types: [`ExtensionName`], [`TriggerType`],
//! [`NpmPackageName`], [`PythonPackage`] and [`Program`] can only hold valid values, so
//! any [`Manifest`] prints ([`Manifest::to_toml`]) as a manifest that checks without
//! errors.
//!
//! With the `schema` feature, [`Manifest`] implements `schemars::JsonSchema`: the schema of
//! the file for editors (descriptions from these doc comments, every closed set as an
//! `enum`, the checkers' name patterns), printed by `curupira schema extension-manifest`.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod codes;
#[cfg(feature = "schema")]
mod json_schema;
mod model;
mod rules;
mod validate;

use std::path::{Path, PathBuf};
use std::str::FromStr;

use curupira_diagnostics::{Collector, Diagnostic, Report};

pub use curupira_protocol::PROTOCOL_VERSION;
pub use model::{
    Capabilities, ExtensionName, InvalidValue, Kind, Launch, MANIFEST_VERSION, Manifest,
    NpmPackageName, Package, PackageSource, Program, ProtocolVersion, PythonPackage, Runtime,
    TriggerType, TriggerTypes,
};
pub use semver::Version;

/// The `curupira-diagnostics` crate, whose [`Report`] and [`Diagnostic`] every check
/// returns: re-exported so a user names them (and renders or counts them) with the
/// very version this crate uses, without a dependency of their own.
pub use curupira_diagnostics;

/// The manifest's file name in an extension's folder.
pub const FILE_NAME: &str = "curupira-extension.toml";

/// The outcome of checking one manifest.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The manifest, when there is no error (warnings allowed).
    pub manifest: Option<Manifest>,
    /// Every diagnostic, in file order, with the file's text for rendering.
    pub report: Report,
}

impl Checked {
    /// The diagnostics, in file order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        self.report.diagnostics()
    }
}

/// Why a manifest could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("could not read the manifest `{}`", path.display())]
    Read {
        /// The path given.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The manifest has errors; `report` has all of them.
    #[error("{}", invalid_summary(.report))]
    Invalid {
        /// Every diagnostic, warnings included, with the text for rendering.
        report: Report,
    },
}

fn invalid_summary(report: &Report) -> String {
    let file = report.files().first().map_or(FILE_NAME, String::as_str);
    let errors = report.errors();
    let plural = if errors == 1 { "" } else { "s" };
    match report.diagnostics().iter().find(|d| d.is_error()) {
        Some(first) => {
            let place = match first.position {
                Some(p) => format!(" at line {}, column {}", p.line, p.column),
                None => String::new(),
            };
            format!(
                "`{file}` is not a valid manifest ({errors} error{plural}); the first{place}: {} [{}]",
                first.message, first.code
            )
        }
        None => format!("`{file}` is not a valid manifest"),
    }
}

/// Checks manifest text; `file` is the name diagnostics show (`<stdin>` for standard
/// input).
pub fn check_str(text: &str, file: &str) -> Checked {
    let mut report = Report::new();
    report.add_source(file, text);
    let document = match curupira_diagnostics::toml::parse(text, file, codes::SYNTAX) {
        Ok(document) => document,
        Err(diagnostics) => {
            report.extend(diagnostics);
            return Checked {
                manifest: None,
                report,
            };
        }
    };
    let mut collector = Collector::new(file, text, document.source_map.clone());
    let manifest = validate::validate(&document, &mut collector);
    report.extend(collector.finish());
    Checked { manifest, report }
}

/// Checks manifest bytes: text that is not UTF-8 is one `manifest/encoding` error at
/// the first bad byte.
pub fn check_bytes(bytes: &[u8], file: &str) -> Checked {
    match curupira_diagnostics::decode_utf8(bytes, file, codes::ENCODING) {
        Ok(text) => check_str(text, file),
        Err(report) => Checked {
            manifest: None,
            report,
        },
    }
}

/// Reads and checks a manifest file (the file name shown is the path as given).
pub fn check_path(path: &Path) -> Result<Checked, ManifestError> {
    let bytes = std::fs::read(path).map_err(|source| ManifestError::Read {
        path: path.to_owned(),
        source,
    })?;
    Ok(check_bytes(&bytes, &path.display().to_string()))
}

impl Manifest {
    /// Reads a manifest file; any error is [`ManifestError::Invalid`] with the whole
    /// report. Use [`check_path`] to also see the warnings of a valid manifest.
    pub fn from_path(path: &Path) -> Result<Self, ManifestError> {
        let checked = check_path(path)?;
        checked.manifest.ok_or(ManifestError::Invalid {
            report: checked.report,
        })
    }

    /// The manifest as TOML, in SPEC section 2's key order, then `[launch]`,
    /// `[package]` (when there is one) and `[capabilities]` (when it lists a
    /// permission); empty `args` are left out. Parsing the output gives back an equal
    /// manifest with no error.
    pub fn to_toml(&self) -> String {
        // Every field serializes to a TOML string, integer, array or table, which
        // cannot fail; an empty string would only hide a bug the round-trip tests catch.
        toml::to_string(self).unwrap_or_default()
    }
}

/// Parses manifest text named `curupira-extension.toml` in diagnostics.
impl FromStr for Manifest {
    type Err = ManifestError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let checked = check_str(text, FILE_NAME);
        checked.manifest.ok_or(ManifestError::Invalid {
            report: checked.report,
        })
    }
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
