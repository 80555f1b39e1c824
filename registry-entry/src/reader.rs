//! The Spirit app's marketplace reader, as rules: whether the app would accept a
//! `catalog.json` and a `detail.json`, and whether it could install a version of them.
//! Pure functions over JSON values (no files, no network); `registry check` runs them
//! on the derived files and `registry build` on what it is about to write.
//!
//! The rules are those the app's reader applies (recorded in the conformance vectors
//! `spirit-app/marketplace/`), each problem a [`Problem`] with a stable code
//! (`registry/reader-…`, in [`crate::codes`]), the document and an RFC 6901 pointer:
//!
//! - **`catalog.json`**: an object; `schemaVersion` the number 1; `items` an array of
//!   objects, each with non-empty strings `extensionId`, `packageName`, `status`,
//!   `defaultVersion`, `detailPath`, `displayName`, `description`; a boolean
//!   `featured`; `defaultChannel` one of `stable`, `preview`, `experimental`;
//!   `defaultReviewStatus` one of `unverified`, `verified`, `revoked`;
//!   `supportedHosts` a non-empty array of `cli` / `desktop`; `keywords` and
//!   `requestedCapabilities`, when present and not `null`, arrays of non-empty
//!   strings. `author`, `homepageUrl`, `repositoryUrl` and `iconUrl` are kept only when
//!   they are non-empty strings and never refused; other members are ignored; `status`
//!   is not filtered on. Strings are trimmed before they are judged. One bad item makes
//!   the whole catalog unreadable.
//! - **`detail.json`**: an object; `schemaVersion` the number 1; a non-empty array
//!   `versions`; non-empty strings `extensionId` (equal to the catalog item's),
//!   `packageName`, `status`, `defaultVersion`, `readmePath`; a boolean `featured`.
//!   Each version: non-empty strings `version`, `displayName`, `description`;
//!   `channel` and `reviewStatus` as above; `supportedHosts`, `keywords`,
//!   `requestedCapabilities` as in an item; a `changelog` that is an object needs
//!   non-empty strings `summary` and `body` (any other `changelog` is ignored);
//!   `publishedAt`, `tarballUrl`, `integrity`, `shasum` are kept when non-empty
//!   strings (anything else counts as absent).
//! - **Paths** (`detailPath`, `readmePath`): an `https://` URL, or a path relative to
//!   the folder that holds `catalog.json` (one leading `./` dropped); `http` and other
//!   schemes are refused. See [`resolve`].
//! - **Install** ([`prepare_install`], [`install_problems`]): the version asked for (or
//!   `defaultVersion`) must be listed; a `tarballUrl` present must be https; to
//!   install, the version must support the host, have a `tarballUrl`, and an
//!   `integrity` (one or more SRI entries, one of sha256/384/512 must match) or a
//!   `shasum` (SHA-1 hex); each one present is checked against the download, so a
//!   malformed one can never pass. A version that is not `verified` needs the user's
//!   explicit acknowledgement: that is the caller's to ask, not a rule of the
//!   documents.
//!
//! - **Sizes**: the reader refuses a `catalog.json` or `detail.json` larger than
//!   [`MAX_JSON_BYTES`] and a README larger than [`MAX_README_BYTES`] (a registry of
//!   many thousands of extensions outgrows one catalog); `registry check` and
//!   `registry build` check the files' sizes.
//!
//! What these functions cannot tell offline: whether an https URL answers, and whether
//! a tarball's bytes match its `integrity` / `shasum` (they check the form only).
//!
//! ```
//! use spirit_registry::reader::read_catalog;
//! use spirit_registry::serde_json::json;
//!
//! // The catalog shape of older builds: the reader finds no `items`.
//! let old = json!({ "schemaVersion": 1, "extensions": [] });
//! let reading = read_catalog(&old);
//! assert!(!reading.accepted());
//! assert_eq!(reading.problems[0].code, "registry/reader-type");
//! assert_eq!(reading.problems[0].at.as_str(), "/items");
//!
//! // An item without a description makes the whole catalog unreadable.
//! let catalog = json!({ "schemaVersion": 1, "items": [{
//!     "extensionId": "acme.lookup", "packageName": "@acme/lookup", "status": "listed",
//!     "featured": false, "defaultVersion": "1.0.0", "defaultChannel": "stable",
//!     "defaultReviewStatus": "verified", "detailPath": "extensions/acme.lookup/detail.json",
//!     "displayName": "Acme Lookup", "supportedHosts": ["cli"]
//! }]});
//! let found: Vec<_> = read_catalog(&catalog)
//!     .problems
//!     .iter()
//!     .map(|p| (p.code, p.at.as_str().to_owned()))
//!     .collect();
//! assert_eq!(found, [("registry/reader-empty", "/items/0/description".to_owned())]);
//! ```

use curupira_diagnostics::JsonPointer;
use curupira_diagnostics::js::JsTrim;
use serde_json::{Map, Value};

use crate::codes;

/// The largest `catalog.json` or `detail.json` the reader reads: 512 KiB.
pub const MAX_JSON_BYTES: u64 = 512 * 1024;
/// The largest `README.md` the reader reads: 2 MiB.
pub const MAX_README_BYTES: u64 = 2 * 1024 * 1024;

/// The release channels the reader knows.
const CHANNELS: [&str; 3] = ["stable", "preview", "experimental"];
/// The review statuses the reader knows.
const REVIEW_STATUSES: [&str; 3] = ["unverified", "verified", "revoked"];
/// The hosts the reader knows.
const HOSTS: [&str; 2] = ["cli", "desktop"];
/// The SRI algorithms the app verifies, with their digest sizes in bytes.
const SRI_ALGORITHMS: [(&str, usize); 3] = [("sha256", 32), ("sha384", 48), ("sha512", 64)];

/// Which document a [`Problem`] is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// `catalog.json`.
    Catalog,
    /// A `detail.json`.
    Detail,
}

/// One reason the app's reader would refuse a document (or could not install from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The document concerned.
    pub document: Document,
    /// Where in it.
    pub at: JsonPointer,
    /// The stable code (`registry/reader-…`).
    pub code: &'static str,
    /// One sentence: what is wrong and the reader's rule.
    pub message: String,
}

/// What [`read_catalog`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatalogReading {
    /// Every problem; the reader accepts the catalog only when there is none.
    pub problems: Vec<Problem>,
    /// The items whose `extensionId` and `detailPath` could be read (trimmed), in
    /// order, with their index in `items`.
    pub items: Vec<ItemRef>,
}

impl CatalogReading {
    /// Whether the reader accepts the catalog.
    pub fn accepted(&self) -> bool {
        self.problems.is_empty()
    }

    /// The first item with `extension_id`, as the reader looks it up.
    pub fn item(&self, extension_id: &str) -> Option<&ItemRef> {
        self.items
            .iter()
            .find(|item| item.extension_id == extension_id.js_trim())
    }
}

/// A catalog item, as far as finding its detail goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRef {
    /// Its index in `items`.
    pub index: usize,
    /// `extensionId`, trimmed.
    pub extension_id: String,
    /// `detailPath`, trimmed.
    pub detail_path: String,
}

/// What [`read_detail`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DetailReading {
    /// Every problem; the reader accepts the detail only when there is none.
    pub problems: Vec<Problem>,
    /// `defaultVersion`, trimmed, when it is a non-empty string.
    pub default_version: Option<String>,
    /// `readmePath`, trimmed, when it is a non-empty string.
    pub readme_path: Option<String>,
    /// The versions that are objects, in order.
    pub versions: Vec<VersionRef>,
}

impl DetailReading {
    /// Whether the reader accepts the detail.
    pub fn accepted(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A detail version, as far as installing it goes (every string trimmed; members the
/// reader drops are `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRef {
    /// Its index in `versions`.
    pub index: usize,
    /// `version`.
    pub version: Option<String>,
    /// `reviewStatus`.
    pub review_status: Option<String>,
    /// `supportedHosts` (the strings among them).
    pub supported_hosts: Vec<String>,
    /// `tarballUrl`.
    pub tarball_url: Option<String>,
    /// `integrity`.
    pub integrity: Option<String>,
    /// `shasum`.
    pub shasum: Option<String>,
}

/// Where a `detailPath` or `readmePath` leads, per [`resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file of the registry: the path relative to the folder that holds
    /// `catalog.json`, `/`-separated, dot segments resolved, percent escapes decoded.
    Registry(String),
    /// An https URL outside the registry folder (or the base URL not given): it cannot
    /// be checked offline.
    Remote(String),
}

/// Reads `catalog.json` as the app's reader does.
pub fn read_catalog(value: &Value) -> CatalogReading {
    let mut reading = CatalogReading::default();
    let mut out = Out::new(Document::Catalog, &mut reading.problems);
    let Some(root) = out.object(value, &JsonPointer::root(), "the catalog") else {
        return reading;
    };
    out.schema_version(root, "catalog");
    let at = JsonPointer::root().key("items");
    let Some(items) = root.get("items").and_then(Value::as_array) else {
        let hint = if root.contains_key("extensions") {
            " (it has `extensions`, the shape of older builds: run `curupira registry build` again)"
        } else {
            ""
        };
        out.push(
            codes::READER_TYPE,
            at,
            format!(
                "`items` must be an array: the reader reads the catalog's extensions from it{hint}"
            ),
        );
        return reading;
    };
    for (index, item) in items.iter().enumerate() {
        let at = at.index(index);
        let Some(item) = out.object(item, &at, "a catalog item") else {
            continue;
        };
        let extension_id = out.text(item, &at, "extensionId");
        for key in ["packageName", "status"] {
            out.text(item, &at, key);
        }
        out.boolean(item, &at, "featured");
        out.text(item, &at, "defaultVersion");
        out.one_of(item, &at, "defaultChannel", &CHANNELS);
        out.one_of(item, &at, "defaultReviewStatus", &REVIEW_STATUSES);
        let detail_path = out.text(item, &at, "detailPath");
        out.text(item, &at, "displayName");
        out.text(item, &at, "description");
        out.texts(item, &at, "keywords");
        out.hosts(item, &at);
        out.texts(item, &at, "requestedCapabilities");
        if let (Some(extension_id), Some(detail_path)) = (extension_id, detail_path) {
            reading.items.push(ItemRef {
                index,
                extension_id,
                detail_path,
            });
        }
    }
    reading
}

/// Reads a `detail.json` as the app's reader does; `extension_id` is the id of the
/// catalog item (or extension folder) it belongs to, when known.
pub fn read_detail(value: &Value, extension_id: Option<&str>) -> DetailReading {
    let mut reading = DetailReading::default();
    let mut out = Out::new(Document::Detail, &mut reading.problems);
    let Some(root) = out.object(value, &JsonPointer::root(), "the detail") else {
        return reading;
    };
    out.schema_version(root, "detail");
    let at = JsonPointer::root().key("versions");
    match root.get("versions").and_then(Value::as_array) {
        None => out.push(
            codes::READER_TYPE,
            at,
            "`versions` must be an array: the reader reads the installable versions from it"
                .to_owned(),
        ),
        Some(versions) if versions.is_empty() => out.push(
            codes::READER_EMPTY,
            at,
            "`versions` is empty: the reader needs at least one version".to_owned(),
        ),
        Some(versions) => {
            for (index, version) in versions.iter().enumerate() {
                if let Some(found) = detail_version(&mut out, version, &at.index(index), index) {
                    reading.versions.push(found);
                }
            }
        }
    }
    let root_at = JsonPointer::root();
    let found_id = out.text(root, &root_at, "extensionId");
    out.text(root, &root_at, "packageName");
    out.text(root, &root_at, "status");
    out.boolean(root, &root_at, "featured");
    reading.default_version = out.text(root, &root_at, "defaultVersion");
    reading.readme_path = out.text(root, &root_at, "readmePath");
    if let (Some(found), Some(expected)) = (found_id, extension_id.map(str::trim))
        && found != expected
    {
        out.push(
            codes::READER_ID_MISMATCH,
            root_at.key("extensionId"),
            format!(
                "`extensionId` is `{found}` but the detail belongs to `{expected}`: the reader refuses a detail of another extension"
            ),
        );
    }
    reading
}

/// One version of a detail: its problems into `out`, what installing it needs.
fn detail_version(
    out: &mut Out<'_>,
    value: &Value,
    at: &JsonPointer,
    index: usize,
) -> Option<VersionRef> {
    let version = out.object(value, at, "a detail version")?;
    if let Some(Value::Object(changelog)) = version.get("changelog") {
        let changelog_at = at.key("changelog");
        out.text(changelog, &changelog_at, "summary");
        out.text(changelog, &changelog_at, "body");
    }
    let name = out.text(version, at, "version");
    out.one_of(version, at, "channel", &CHANNELS);
    let review_status = out.one_of(version, at, "reviewStatus", &REVIEW_STATUSES);
    out.text(version, at, "displayName");
    out.text(version, at, "description");
    out.texts(version, at, "keywords");
    let supported_hosts = out.hosts(version, at);
    out.texts(version, at, "requestedCapabilities");
    let kept = |key: &str| optional_text(version.get(key));
    Some(VersionRef {
        index,
        version: name,
        review_status,
        supported_hosts,
        tarball_url: kept("tarballUrl"),
        integrity: kept("integrity"),
        shasum: kept("shasum"),
    })
}

/// The app's `prepareInstall` on an accepted detail: the version asked for (or, when
/// `version` is `None` or blank, `defaultVersion`) must be listed, and its
/// `tarballUrl`, when present, must be https. Returns the index in
/// [`DetailReading::versions`].
pub fn prepare_install(detail: &DetailReading, version: Option<&str>) -> Result<usize, Problem> {
    let asked = version.map(str::trim).filter(|v| !v.is_empty());
    let wanted = asked.or(detail.default_version.as_deref()).unwrap_or("");
    let at = if asked.is_some() {
        JsonPointer::root().key("versions")
    } else {
        JsonPointer::root().key("defaultVersion")
    };
    let Some(position) = detail
        .versions
        .iter()
        .position(|v| v.version.as_deref() == Some(wanted))
    else {
        let which = if asked.is_some() {
            "the version asked for"
        } else {
            "`defaultVersion`"
        };
        return Err(problem(
            codes::READER_NOT_INSTALLABLE,
            at,
            format!(
                "{which} `{wanted}` is not one of `versions`: the app cannot prepare its install"
            ),
        ));
    };
    let found = detail.versions.get(position);
    if let Some(found) = found
        && let Some(url) = &found.tarball_url
        && let Err(why) = https_url(url)
    {
        return Err(problem(
            codes::READER_URL,
            version_at(found).key("tarballUrl"),
            format!("`tarballUrl` `{url}` {why}: the app downloads tarballs over https only"),
        ));
    }
    Ok(position)
}

/// What stops the app's `install` of `detail.versions[index]` once prepared, apart
/// from the review acknowledgement and the download itself: `host` (`cli` or
/// `desktop`, when given) must be supported, `tarballUrl` present (and https), and an
/// `integrity` or `shasum` present; each one present must be able to match a download.
pub fn install_problems(detail: &DetailReading, index: usize, host: Option<&str>) -> Vec<Problem> {
    let Some(version) = detail.versions.get(index) else {
        return Vec::new();
    };
    let at = version_at(version);
    let name = version.version.as_deref().unwrap_or("?");
    let mut problems = Vec::new();
    if let Some(host) = host
        && !version.supported_hosts.iter().any(|h| h == host)
    {
        problems.push(problem(
            codes::READER_NOT_INSTALLABLE,
            at.key("supportedHosts"),
            format!("version `{name}` does not support the host `{host}`"),
        ));
    }
    match &version.tarball_url {
        None => problems.push(problem(
            codes::READER_NOT_INSTALLABLE,
            at.key("tarballUrl"),
            format!("version `{name}` has no `tarballUrl`: the app has nothing to download"),
        )),
        Some(url) => {
            if let Err(why) = https_url(url) {
                problems.push(problem(
                    codes::READER_URL,
                    at.key("tarballUrl"),
                    format!(
                        "`tarballUrl` `{url}` {why}: the app downloads tarballs over https only"
                    ),
                ));
            }
        }
    }
    if version.integrity.is_none() && version.shasum.is_none() {
        problems.push(problem(
            codes::READER_NOT_INSTALLABLE,
            at.clone(),
            format!(
                "version `{name}` has neither `integrity` nor `shasum`: the app refuses a download it cannot verify"
            ),
        ));
    }
    if let Some(integrity) = &version.integrity
        && !integrity_well_formed(integrity)
    {
        problems.push(problem(
            codes::READER_NOT_INSTALLABLE,
            at.key("integrity"),
            format!(
                "`integrity` `{integrity}` has no SRI entry the app can verify (`sha256-`, `sha384-` or `sha512-` and the base64 digest of that size): every download would fail its check"
            ),
        ));
    }
    if let Some(shasum) = &version.shasum
        && !shasum_well_formed(shasum)
    {
        problems.push(problem(
            codes::READER_NOT_INSTALLABLE,
            at.key("shasum"),
            format!(
                "`shasum` `{shasum}` is not a SHA-1 digest (40 hexadecimal digits): every download would fail its check"
            ),
        ));
    }
    problems
}

/// Everything that stops the app from installing any version of an accepted detail
/// (for any host): `defaultVersion` listed, and every version installable per
/// [`install_problems`].
pub fn installability(detail: &DetailReading) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Err(found) = prepare_install(detail, None)
        && found.code == codes::READER_NOT_INSTALLABLE
    {
        problems.push(found);
    }
    for index in 0..detail.versions.len() {
        problems.extend(install_problems(detail, index, None));
    }
    problems
}

/// Whether `integrity` (SRI: entries separated by whitespace) has an entry the app can
/// verify: `sha256-`, `sha384-` or `sha512-` (any case) and a padded base64 digest of
/// that algorithm's size (the form only: whether it matches a download is not known
/// offline).
pub fn integrity_well_formed(integrity: &str) -> bool {
    integrity.split_whitespace().any(|entry| {
        let Some((algorithm, digest)) = entry.split_once('-') else {
            return false;
        };
        SRI_ALGORITHMS
            .iter()
            .any(|(name, size)| algorithm.eq_ignore_ascii_case(name) && base64_of(digest, *size))
    })
}

/// Whether `digest` has the form of `size` bytes in padded standard base64: the length,
/// the alphabet and the padding (the unused bits of the last character are not looked
/// at).
fn base64_of(digest: &str, size: usize) -> bool {
    let length = size.div_ceil(3) * 4;
    let padding = (3 - size % 3) % 3;
    let bytes = digest.as_bytes();
    let Some((body, pad)) = bytes.split_at_checked(length.saturating_sub(padding)) else {
        return false;
    };
    bytes.len() == length
        && body
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
        && pad.iter().all(|&b| b == b'=')
}

/// Whether `shasum` is a SHA-1 digest: 40 hexadecimal digits (any case).
pub fn shasum_well_formed(shasum: &str) -> bool {
    shasum.len() == 40 && shasum.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Where the reader fetches `path` (a `detailPath` or `readmePath`) from: an https URL
/// is [`Location::Remote`], or [`Location::Registry`] when it lies under `base_url` (the
/// URL of the folder that holds `catalog.json`, when known); a relative path (one
/// leading `./` dropped) resolves against that folder. `Err` says why the reader
/// refuses it: `http`, another scheme, or empty.
///
/// A path that climbs above the registry folder (`../x`) or starts with `/` leaves it:
/// [`Location::Remote`], on the same host.
pub fn resolve(path: &str, base_url: Option<&str>) -> Result<Location, String> {
    let path = path.js_trim();
    if path.is_empty() {
        return Err("is empty".to_owned());
    }
    if let Some(scheme) = scheme(path) {
        if !scheme.eq_ignore_ascii_case("https") {
            return Err(format!(
                "uses `{scheme}:`; the reader fetches only https URLs or paths relative to the registry"
            ));
        }
        https_url(path)?;
        if let Some(base) = base_url
            && let Some(rest) = strip_prefix_ignore_case(path, base.trim_end_matches('/'))
            && let Some(rest) = rest.strip_prefix('/')
        {
            return Ok(relative(rest, path));
        }
        return Ok(Location::Remote(path.to_owned()));
    }
    if path.starts_with('/') || path.starts_with('\\') {
        return Ok(Location::Remote(path.to_owned()));
    }
    let path_without_dot = path.strip_prefix("./").unwrap_or(path);
    Ok(relative(path_without_dot, path))
}

/// `rest` (relative to the registry folder) resolved; `original` for a path that leaves.
fn relative(rest: &str, original: &str) -> Location {
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let rest = rest.get(..end).unwrap_or(rest);
    let mut segments: Vec<String> = Vec::new();
    let pieces: Vec<&str> = rest.split(['/', '\\']).collect();
    let last = pieces.len().saturating_sub(1);
    for (index, piece) in pieces.into_iter().enumerate() {
        let decoded = percent_encoding::percent_decode_str(piece)
            .decode_utf8_lossy()
            .into_owned();
        match decoded.as_str() {
            "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Location::Remote(original.to_owned());
                }
            }
            "" if index != last => {}
            _ => segments.push(decoded),
        }
    }
    Location::Registry(segments.join("/"))
}

/// The scheme of `text`, when it starts with one (`https:`, `http:`, `file:`).
fn scheme(text: &str) -> Option<&str> {
    let colon = text.find(':')?;
    let candidate = text.get(..colon)?;
    let mut chars = candidate.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(candidate)
}

/// `Ok` when `url` is an `https://` URL with a host; else why not.
fn https_url(url: &str) -> Result<(), String> {
    let url = url.js_trim();
    match scheme(url) {
        Some(scheme) if scheme.eq_ignore_ascii_case("https") => {}
        Some(scheme) => return Err(format!("uses `{scheme}:`, not https")),
        None => return Err("is not an absolute URL".to_owned()),
    }
    let rest = url.get("https:".len()..).unwrap_or("");
    let host = rest
        .trim_start_matches(['/', '\\'])
        .split(['/', '\\', '?', '#'])
        .next()
        .unwrap_or("");
    if !rest.starts_with("//") || host.is_empty() {
        return Err("has no host".to_owned());
    }
    Ok(())
}

/// `text` without `prefix`, compared ignoring ASCII case.
fn strip_prefix_ignore_case<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text.get(prefix.len()..))
        .flatten()
}

/// A problem in a detail.
fn problem(code: &'static str, at: JsonPointer, message: String) -> Problem {
    Problem {
        document: Document::Detail,
        at,
        code,
        message,
    }
}

/// `/versions/<index>`.
fn version_at(version: &VersionRef) -> JsonPointer {
    JsonPointer::root().key("versions").index(version.index)
}

/// A string kept by the reader: trimmed, non-empty.
fn optional_text(value: Option<&Value>) -> Option<String> {
    let text = value?.as_str()?.js_trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// "a string", "a number", … for messages.
fn kind(value: Option<&Value>) -> &'static str {
    match value {
        None => "missing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    }
}

/// The problems of one document, collected.
struct Out<'p> {
    document: Document,
    problems: &'p mut Vec<Problem>,
}

impl<'p> Out<'p> {
    fn new(document: Document, problems: &'p mut Vec<Problem>) -> Self {
        Self { document, problems }
    }

    fn push(&mut self, code: &'static str, at: JsonPointer, message: String) {
        self.problems.push(Problem {
            document: self.document,
            at,
            code,
            message,
        });
    }

    /// `value` as an object, else a problem.
    fn object<'v>(
        &mut self,
        value: &'v Value,
        at: &JsonPointer,
        what: &str,
    ) -> Option<&'v Map<String, Value>> {
        if let Value::Object(map) = value {
            return Some(map);
        }
        self.push(
            codes::READER_TYPE,
            at.clone(),
            format!(
                "{what} must be a JSON object, not {}: the reader refuses it",
                kind(Some(value))
            ),
        );
        None
    }

    /// `schemaVersion` the number 1.
    fn schema_version(&mut self, root: &Map<String, Value>, document: &str) {
        let at = JsonPointer::root().key("schemaVersion");
        match root.get("schemaVersion") {
            Some(Value::Number(number)) if number.as_f64() == Some(1.0) => {}
            Some(Value::Number(number)) => self.push(
                codes::READER_SCHEMA_VERSION,
                at,
                format!(
                    "`schemaVersion` is {number}: the reader supports only {document} schemaVersion 1"
                ),
            ),
            other => self.push(
                codes::READER_SCHEMA_VERSION,
                at,
                format!(
                    "`schemaVersion` must be the number 1, not {}: the reader refuses the {document}",
                    kind(other)
                ),
            ),
        }
    }

    /// A required non-empty string (trimmed), else a problem.
    fn text(&mut self, map: &Map<String, Value>, at: &JsonPointer, key: &str) -> Option<String> {
        let value = map.get(key);
        if let Some(text) = optional_text(value) {
            return Some(text);
        }
        let what = match value {
            Some(Value::String(_)) => "blank",
            other => kind(other),
        };
        self.push(
            codes::READER_EMPTY,
            at.key(key),
            format!("`{key}` must be a non-empty string, but it is {what}: the reader requires it"),
        );
        None
    }

    /// A required boolean, else a problem.
    fn boolean(&mut self, map: &Map<String, Value>, at: &JsonPointer, key: &str) {
        let value = map.get(key);
        if !matches!(value, Some(Value::Bool(_))) {
            self.push(
                codes::READER_TYPE,
                at.key(key),
                format!(
                    "`{key}` must be a boolean, but it is {}: the reader requires it",
                    kind(value)
                ),
            );
        }
    }

    /// A required string in `allowed` (trimmed), else a problem.
    fn one_of(
        &mut self,
        map: &Map<String, Value>,
        at: &JsonPointer,
        key: &str,
        allowed: &[&str],
    ) -> Option<String> {
        let text = self.text(map, at, key)?;
        if allowed.contains(&text.as_str()) {
            return Some(text);
        }
        self.push(
            codes::READER_VALUE,
            at.key(key),
            format!(
                "`{key}` is `{text}`: the reader knows only {}",
                allowed
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        None
    }

    /// An optional array of non-empty strings (`null` counts as absent); the strings.
    fn texts(&mut self, map: &Map<String, Value>, at: &JsonPointer, key: &str) -> Vec<String> {
        self.indexed_texts(map, at, key)
            .into_iter()
            .map(|(_, text)| text)
            .collect()
    }

    /// [`Out::texts`], each string with its index in the array.
    fn indexed_texts(
        &mut self,
        map: &Map<String, Value>,
        at: &JsonPointer,
        key: &str,
    ) -> Vec<(usize, String)> {
        let items = match map.get(key) {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.push(
                    codes::READER_TYPE,
                    at.key(key),
                    format!(
                        "`{key}` must be an array of strings, not {}: the reader refuses it",
                        kind(Some(other))
                    ),
                );
                return Vec::new();
            }
        };
        let at = at.key(key);
        let mut found = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match optional_text(Some(item)) {
                Some(text) => found.push((index, text)),
                None => self.push(
                    codes::READER_EMPTY,
                    at.index(index),
                    format!(
                        "`{key}[{index}]` must be a non-empty string, but it is {}: the reader refuses it",
                        match item {
                            Value::String(_) => "blank",
                            other => kind(Some(other)),
                        }
                    ),
                ),
            }
        }
        found
    }

    /// `supportedHosts`: a non-empty array of `cli` / `desktop`.
    fn hosts(&mut self, map: &Map<String, Value>, at: &JsonPointer) -> Vec<String> {
        let before = self.problems.len();
        let hosts = self.indexed_texts(map, at, "supportedHosts");
        let at = at.key("supportedHosts");
        for (index, host) in &hosts {
            if !HOSTS.contains(&host.as_str()) {
                self.push(
                    codes::READER_VALUE,
                    at.index(*index),
                    format!("host `{host}` is unknown: the reader knows only `cli` and `desktop`"),
                );
            }
        }
        if hosts.is_empty() && self.problems.len() == before {
            self.push(
                codes::READER_EMPTY,
                at,
                "`supportedHosts` is missing or empty: the reader requires at least one host"
                    .to_owned(),
            );
        }
        hosts.into_iter().map(|(_, host)| host).collect()
    }
}
