//! The Spirit marketplace registry: a Git repository of hand-written
//! `registry/extensions/<extensionId>/entry.json` + `README.md`, from which
//! `registry/catalog.json` and each `detail.json` are derived (SPEC section 4).
//!
//! - [`check_entry_str`] / [`check_entry_bytes`]: one `entry.json`, every rule, each
//!   problem a [`Diagnostic`](curupira_diagnostics::Diagnostic) with a stable code
//!   ([`codes`]), the file, an RFC 6901 pointer, the line and column.
//! - [`check`]: a whole registry folder — every entry, the registry-wide rules
//!   (folder = id, nothing but `entry.json`, `README.md` and `detail.json` in an
//!   extension folder, unique package names and ids, a README that says what it
//!   lists), and the derived files against the entries (byte for byte with metadata).
//! - [`build`]: the derived files from the entries and npm metadata, in the shapes the
//!   Spirit app's marketplace reader requires, deterministic (same inputs, same
//!   bytes), written only when nothing is wrong, each atomically.
//! - [`scaffold`]: a new entry and README for a published package.
//! - [`reader`]: the Spirit app's marketplace reader as rules, pure functions over the
//!   JSON of `catalog.json` and `detail.json`: whether the app would read them and
//!   could install each version. `check` runs them on the derived files; `build`
//!   writes only documents they accept.
//!
//! npm metadata comes from a [`MetadataSource`]: a folder of saved package documents
//! ([`FolderSource`], offline) or, with the `http` feature, an npm registry URL.
//!
//! ```
//! use spirit_registry::check_entry_str;
//!
//! let text = r#"{
//!   "schemaVersion": 1,
//!   "extensionId": "lookup",
//!   "packageName": "@acme/lookup",
//!   "status": "listed",
//!   "featured": "no",
//!   "defaultVersion": "1.1.0",
//!   "defaultReviewStatus": "unverified",
//!   "versions": [{ "version": "1.0.0", "channel": "stable", "reviewStatus": "unverified" }]
//! }"#;
//! let checked = check_entry_str(text, "registry/extensions/lookup/entry.json");
//! let found: Vec<_> = checked
//!     .report
//!     .diagnostics()
//!     .iter()
//!     .map(|d| (d.code.as_ref(), d.path.as_str(), d.line().unwrap_or(0)))
//!     .collect();
//! assert_eq!(
//!     found,
//!     [
//!         ("registry/invalid-extension-id", "/extensionId", 3),
//!         ("registry/invalid-type", "/featured", 6),
//!         ("registry/default-version-not-listed", "/defaultVersion", 7),
//!     ]
//! );
//! assert!(checked.entry.is_none());
//! ```
//!
//! With the `schema` feature, [`Entry`] implements `schemars::JsonSchema`: the schema of
//! the file for editors (descriptions from these doc comments, every closed set as an
//! `enum`, the checkers' name patterns), printed by `curupira schema registry-entry`.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod codes;
mod entry;
#[cfg(feature = "schema")]
mod json_schema;
mod metadata;
mod model;
pub mod reader;
mod registry;

pub use entry::{CheckedEntry, check_entry_bytes, check_entry_str};
#[cfg(feature = "http")]
pub use metadata::RegistrySource;
pub use metadata::{FolderSource, MetadataError, MetadataSource, package_file_name};
pub use model::{
    Catalog, CatalogItem, Changelog, Channel, Detail, DetailVersion, Entry, EntryVersion, Listing,
    ManifestSummary, PackageDocument, ReviewStatus, SCHEMA_VERSION, Status,
};
pub use registry::{Built, RegistryError, Scaffolded, build, check, scaffold};

/// The `curupira-diagnostics` crate, whose `Report` and `Diagnostic` every check
/// returns ([`CheckedEntry`], [`check`]): re-exported so a user names them with the
/// very version this crate uses, without a dependency of their own.
pub use curupira_diagnostics;

/// The `serde_json` crate, whose `Value` the npm metadata in [`ManifestSummary`] and
/// [`PackageDocument`] holds: re-exported for the same reason.
pub use serde_json;

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
