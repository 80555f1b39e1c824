//! The typed `entry.json` and the derived `detail.json` / `catalog.json`: serde types
//! only, no checking logic.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The only `schemaVersion` of `entry.json`.
pub const SCHEMA_VERSION: u64 = 1;

/// `registry/extensions/<extensionId>/entry.json`: the marketplace's governance of one
/// extension, written by hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(title = "entry.json (Spirit registry)"))]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Always 1.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1)))]
    pub schema_version: u64,
    /// `yourteam.some-extension`: two or more `.`-separated lowercase segments; the
    /// folder's name.
    #[cfg_attr(
        feature = "schema",
        schemars(pattern(crate::json_schema::EXTENSION_ID))
    )]
    pub extension_id: String,
    /// The npm package this entry lists.
    #[cfg_attr(
        feature = "schema",
        schemars(pattern(crate::json_schema::NPM_NAME), length(min = 1, max = 214))
    )]
    pub package_name: String,
    /// Whether and how the marketplace shows it.
    pub status: Status,
    /// Whether it is featured.
    pub featured: bool,
    /// The version installed by default; one of `versions`.
    #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::SEMVER)))]
    pub default_version: String,
    /// The review status shown for the default version.
    pub default_review_status: ReviewStatus,
    /// The listed versions (published on npm).
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub versions: Vec<EntryVersion>,
}

/// One listed version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct EntryVersion {
    /// The SemVer version, as published.
    #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::SEMVER)))]
    pub version: String,
    /// Its release channel.
    pub channel: Channel,
    /// Where its review stands.
    pub review_status: ReviewStatus,
    /// What changed, when said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog: Option<Changelog>,
}

/// A version's changelog: both members required and non-empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Changelog {
    /// One line.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub summary: String,
    /// The details (Markdown).
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub body: String,
}

curupira_diagnostics::closed_set! {
    /// How the marketplace treats an entry.
    Status {
        /// Shown and installable.
        Listed = "listed",
        /// Installable by id, not shown (left out of the catalog).
        Hidden = "hidden",
        /// Shown as deprecated.
        Deprecated = "deprecated",
        /// Not installable (left out of the catalog).
        Blocked = "blocked",
    }
}

curupira_diagnostics::closed_set! {
    /// A version's release channel.
    Channel {
        /// For everyone.
        Stable = "stable",
        /// Early access.
        Preview = "preview",
        /// Try at your own risk.
        Experimental = "experimental",
    }
}

curupira_diagnostics::closed_set! {
    /// Where a version's review stands.
    ReviewStatus {
        /// Not reviewed yet; where new versions start.
        Unverified = "unverified",
        /// Reviewed and approved.
        Verified = "verified",
        /// Approval withdrawn.
        Revoked = "revoked",
    }
}

/// `registry/extensions/<id>/detail.json`, derived, in the shape the Spirit app's
/// marketplace reader requires: the entry's governance fields, where its README is, and
/// per listed version the flat metadata of its published manifest and where to download
/// it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Detail {
    /// As in the entry.
    pub schema_version: u64,
    /// As in the entry.
    pub extension_id: String,
    /// As in the entry.
    pub package_name: String,
    /// As in the entry.
    pub status: Status,
    /// As in the entry.
    pub featured: bool,
    /// As in the entry.
    pub default_version: String,
    /// `extensions/<id>/README.md`: the marketplace text, relative to the folder that
    /// holds `catalog.json`.
    pub readme_path: String,
    /// Every listed version, in the entry's order.
    pub versions: Vec<DetailVersion>,
}

/// One listed version in `detail.json`: the entry's governance of it, what its
/// published manifest says, and its tarball as npm serves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailVersion {
    /// The version, as the entry lists it.
    pub version: String,
    /// As in the entry.
    pub channel: Channel,
    /// As in the entry.
    pub review_status: ReviewStatus,
    /// What the published `package.json` says, flat.
    #[serde(flatten)]
    pub listing: Listing,
    /// When npm says it was published (`time[version]`), if it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    /// `dist.tarball` of the npm document: an https URL.
    pub tarball_url: String,
    /// `dist.integrity` (Subresource Integrity), when npm has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<String>,
    /// `dist.shasum` (SHA-1, hexadecimal), when npm has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shasum: Option<String>,
    /// As in the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog: Option<Changelog>,
}

/// What the marketplace shows of a published `package.json`, in the reader's flat
/// members (shared by a catalog item and a detail version).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// `spiritExtension.displayName`, trimmed.
    pub display_name: String,
    /// `description`, trimmed (never empty: the reader refuses a catalog without one).
    pub description: String,
    /// `author`: a string as published, or the `name` of an author object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// `homepage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage_url: Option<String>,
    /// `repository`: a string as published, or the `url` of a repository object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
    /// `keywords` (the non-empty strings, in the published order).
    pub keywords: Vec<String>,
    /// `spiritExtension.supportedHosts`.
    pub supported_hosts: Vec<String>,
    /// `spiritExtension.requestedCapabilities`.
    pub requested_capabilities: Vec<String>,
}

/// A summary of a published `package.json`: what `scaffold` reads of each version
/// (the derived files carry a [`Listing`] instead).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestSummary {
    /// `name`.
    pub name: String,
    /// `version`.
    pub version: String,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `author`, as published (a string or an object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Value>,
    /// `repository`, as published (a string or an object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Value>,
    /// `homepage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// `keywords`, in the published order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// `spiritExtension.displayName`.
    pub display_name: String,
    /// `spiritExtension.supportedHosts`.
    pub supported_hosts: Vec<String>,
    /// `spiritExtension.requestedCapabilities`.
    pub requested_capabilities: Vec<String>,
    /// `spiritExtension.icon`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// The names of `spiritExtension.contributes.tools`, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

/// `registry/catalog.json`, derived: every `listed` or `deprecated` entry, sorted by
/// id, in the shape the Spirit app's marketplace reader requires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalog {
    /// Always 1.
    pub schema_version: u64,
    /// The entries shown, sorted by `extensionId`.
    pub items: Vec<CatalogItem>,
}

/// One extension in `catalog.json`: its governance, where its detail is, and its
/// default version's flat metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogItem {
    /// As in the entry.
    pub extension_id: String,
    /// As in the entry.
    pub package_name: String,
    /// `listed` or `deprecated`.
    pub status: Status,
    /// As in the entry.
    pub featured: bool,
    /// As in the entry.
    pub default_version: String,
    /// The default version's channel.
    pub default_channel: Channel,
    /// As in the entry.
    pub default_review_status: ReviewStatus,
    /// `extensions/<id>/detail.json`, relative to the folder that holds `catalog.json`.
    pub detail_path: String,
    /// The default version's published manifest, flat.
    #[serde(flatten)]
    pub listing: Listing,
}

/// A package document as the npm registry serves it (`GET /<name>`): only what the
/// build reads.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PackageDocument {
    /// The package name.
    #[serde(default)]
    pub name: String,
    /// `latest` and the other dist-tags.
    #[serde(rename = "dist-tags", default)]
    pub dist_tags: BTreeMap<String, String>,
    /// Every published version's `package.json`, as the registry normalised it.
    #[serde(default)]
    pub versions: BTreeMap<String, Value>,
    /// Publish times by version (plus `created` and `modified`).
    #[serde(default)]
    pub time: BTreeMap<String, String>,
}

#[cfg(feature = "schema")]
crate::json_schema::closed_set_schemas!(Status, Channel, ReviewStatus);
