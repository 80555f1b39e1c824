//! One `entry.json` (SPEC section 4): every rule, every problem in one pass, each a
//! diagnostic with its code, pointer, line and column.
//!
//! The text is read by `curupira_diagnostics::json`, the span-keeping reader shared with
//! `spirit-manifest`. Places are tracked as a [`Place`] chain on the stack and become JSON
//! Pointers only when something is reported, and the pointer → span map of the document
//! is built only when there is something to locate: a clean entry costs a parse, a walk
//! and the conversion into [`Entry`].
//!
//! Where the spec is silent:
//! - **Versions** are SemVer 2.0.0 as the `semver` crate reads them; npm's extras
//!   (`v1.0.0`, spaces) are refused with a hint.
//! - **Two listed versions are the same** when they differ at most in build metadata
//!   (`1.0.0` and `1.0.0+build`): SemVer gives build metadata no precedence, and npm
//!   drops it when publishing, so both would name one npm version.
//! - **`defaultVersion`** must equal a listed version as a `semver::Version`, build
//!   metadata included: it names one entry of `versions` exactly (a default that differs
//!   from a listed version only in build metadata gets a hint saying so).
//! - **`packageName`** must be publishable: npm's rules for new packages (its *warnings*:
//!   uppercase, `~'!()*`, core module names, length) are errors here too.
//! - **`extensionId`** gets one diagnostic at its first offending character, and another
//!   when it has a single segment; the lowercased id is suggested when it would be valid.
//! - A changelog's `summary` or `body` made only of whitespace is empty.

use curupira_diagnostics::js::JsTrim;
use std::collections::HashMap;
use std::collections::hash_map;

use curupira_diagnostics::json::{self, Deferred, Place, type_name};
use curupira_diagnostics::names::ValueProblem;
use curupira_diagnostics::npm::{self, NameProblem};
use curupira_diagnostics::version::parse_version;
use curupira_diagnostics::{
    Diagnostic, JsonPointer, Report, all_of, decode_utf8, did_you_mean, one_of,
};
use semver::{BuildMetadata, Version};
use serde_json::{Map, Value};

use crate::codes;
use crate::model::{Channel, Entry, ReviewStatus, SCHEMA_VERSION, Status};

/// The members each object of `entry.json` defines, in the documentation's order (the
/// serde names of [`Entry`], [`crate::EntryVersion`] and [`crate::Changelog`]; a unit test
/// keeps them in step).
mod keys {
    pub(super) const ENTRY: [&str; 8] = [
        "schemaVersion",
        "extensionId",
        "packageName",
        "status",
        "featured",
        "defaultVersion",
        "defaultReviewStatus",
        "versions",
    ];
    pub(super) const VERSION: [&str; 4] = ["version", "channel", "reviewStatus", "changelog"];
    pub(super) const CHANGELOG: [&str; 2] = ["summary", "body"];
}

/// How to add a missing member, put into words only when one is missing.
#[derive(Clone, Copy)]
enum Hint {
    /// What to write.
    Say(&'static str),
    /// The values of a closed set, listed by the function.
    OneOf(fn() -> String),
}

impl Hint {
    fn text(self) -> String {
        match self {
            Hint::Say(text) => text.to_owned(),
            Hint::OneOf(values) => format!("add one of {}", values()),
        }
    }
}

/// How many listed versions a "not one of" message shows.
const SHOWN_VERSIONS: usize = 10;

/// An `entry.json` checked: the entry when there is no error, and every diagnostic.
#[derive(Debug, Clone)]
pub struct CheckedEntry {
    /// The typed entry, present exactly when the report has no error (warnings allowed).
    pub entry: Option<Entry>,
    /// Every diagnostic, in file order, with the text to quote when there are some.
    pub report: Report,
}

impl CheckedEntry {
    /// The diagnostics, in file order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        self.report.diagnostics()
    }
}

/// Checks the text of an `entry.json`; `file` is the name diagnostics show
/// (`registry/extensions/<id>/entry.json`, `<stdin>`).
///
/// ```
/// use spirit_registry::check_entry_str;
///
/// let text = r#"{"schemaVersion": 1, "extensionId": "acme.lookup", "packageName": "@acme/lookup",
///   "status": "listed", "featured": "false", "defaultVersion": "1.0.0",
///   "defaultReviewStatus": "unverified",
///   "versions": [{"version": "1.0.0", "channel": "stable", "reviewStatus": "unverified"}]}"#;
/// let checked = check_entry_str(text, "entry.json");
/// assert!(checked.entry.is_none());
/// let error = &checked.report.diagnostics()[0];
/// assert_eq!((error.code.as_ref(), error.path.as_str()), ("registry/invalid-type", "/featured"));
/// assert_eq!((error.line(), error.column()), (Some(2), Some(35)));
/// assert_eq!(
///     error.message,
///     "`featured` must be `true` or `false`, but it is the string `\"false\"`; write `false` without quotes"
/// );
/// ```
pub fn check_entry_str(text: &str, file: &str) -> CheckedEntry {
    let mut report = Report::new();
    report.add_file(file);
    let document = match json::parse(text, file, codes::SYNTAX, codes::DUPLICATE_KEY) {
        Ok(document) => document,
        Err(diagnostic) => {
            report.add_source(file, text);
            report.push(diagnostic);
            return CheckedEntry {
                entry: None,
                report,
            };
        }
    };
    let mut checker = Checker::default();
    checker.entry(&document.value);
    let diagnostics = checker.out.finish(file, text, &document);
    if !diagnostics.is_empty() {
        // The text is kept for quoting only when there is something to quote.
        report.add_source(file, text);
    }
    report.extend(diagnostics);
    let entry = if report.has_errors() {
        None
    } else {
        match serde_json::from_value::<Entry>(document.value) {
            Ok(entry) => Some(entry),
            Err(error) => {
                // The checks above accept only what the model can hold; reaching this
                // is a bug, reported rather than hidden.
                report.push(Diagnostic::error(
                    codes::INVALID_TYPE,
                    file,
                    JsonPointer::root(),
                    format!("the entry passed every check but could not be read into the model ({error}); please report this"),
                ));
                None
            }
        }
    };
    CheckedEntry { entry, report }
}

/// Checks the bytes of an `entry.json`: text that is not UTF-8 is one
/// `registry/encoding` error at the first bad byte; a leading byte-order mark is
/// ignored.
pub fn check_entry_bytes(bytes: &[u8], file: &str) -> CheckedEntry {
    match decode_utf8(bytes, file, codes::ENCODING) {
        Ok(text) => check_entry_str(text, file),
        Err(report) => CheckedEntry {
            entry: None,
            report,
        },
    }
}

// ----- messages ---------------------------------------------------------------------

/// A version without its build metadata: what makes two listed versions the same.
fn identity(version: &Version) -> Version {
    Version {
        build: BuildMetadata::EMPTY,
        ..version.clone()
    }
}

// ----- the extension id -------------------------------------------------------------

/// What breaks `extensionId`'s pattern: the first offending character (if any), then a
/// single segment. Empty when the id is valid.
fn extension_id_problems(id: &str) -> Vec<ValueProblem> {
    if id.is_empty() {
        return vec![ValueProblem {
            text:
                "is empty; write two or more `.`-separated segments, e.g. `yourteam.some-extension`"
                    .to_owned(),
            range: None,
        }];
    }
    let mut problems = Vec::new();
    let bad = first_bad_character(id);
    let segment_ok = bad.is_none();
    problems.extend(bad);
    if !id.contains('.') {
        let example = if segment_ok {
            format!("`yourteam.{id}`")
        } else {
            "`yourteam.some-extension`".to_owned()
        };
        problems.push(ValueProblem {
            text: format!(
                "has only one segment; an extension id is two or more `.`-separated segments, e.g. {example}"
            ),
            range: None,
        });
    }
    problems
}

/// The first character that breaks `[a-z0-9]+(?:-[a-z0-9]+)*` in a segment, or the
/// segment structure, described.
fn first_bad_character(id: &str) -> Option<ValueProblem> {
    let mut previous: Option<char> = None;
    for (offset, c) in id.char_indices() {
        let next = id[offset + c.len_utf8()..].chars().next();
        let at = || id[..offset].chars().count() + 1;
        let one = offset..offset + c.len_utf8();
        let problem = match c {
            'a'..='z' | '0'..='9' => None,
            '.' => match (previous, next) {
                (None, _) => Some((
                    "starts with `.`; an extension id starts with a lowercase letter or digit"
                        .to_owned(),
                    one,
                )),
                (Some('.'), _) => Some((
                    format!(
                        "has an empty segment (`..` at character {}); segments are separated by a single `.`",
                        at() - 1
                    ),
                    offset - 1..offset + 1,
                )),
                (_, None) => Some((
                    "ends with `.`; an extension id ends with a lowercase letter or digit"
                        .to_owned(),
                    one,
                )),
                _ => None,
            },
            '-' => match (previous, next) {
                (None | Some('.'), _) => Some((
                    format!(
                        "has a segment starting with `-` (character {}); a hyphen must stand between letters or digits",
                        at()
                    ),
                    one,
                )),
                (_, Some('-')) => Some((
                    format!(
                        "has `--` at character {}; a hyphen must stand between letters or digits",
                        at()
                    ),
                    offset..offset + 2,
                )),
                (_, None) => Some((
                    "ends with `-`; a hyphen must stand between letters or digits".to_owned(),
                    one,
                )),
                (_, Some('.')) => Some((
                    format!(
                        "has a segment ending with `-` (character {}); a hyphen must stand between letters or digits",
                        at()
                    ),
                    one,
                )),
                _ => None,
            },
            c if c.is_uppercase() => Some((
                format!(
                    "has the uppercase letter `{c}` at character {}; extension ids are lowercase",
                    at()
                ),
                one,
            )),
            c => Some((
                format!(
                    "has `{}` at character {}; only lowercase letters, digits, `-` within a segment and `.` between segments are allowed",
                    c.escape_debug(),
                    at()
                ),
                one,
            )),
        };
        if let Some((text, range)) = problem {
            return Some(ValueProblem {
                text,
                range: Some(range),
            });
        }
        previous = Some(c);
    }
    None
}

// ----- the checker ------------------------------------------------------------------

/// The versions `versions` lists, as far as they could be read.
struct Listed<'v> {
    /// Each readable version, with its text, in order.
    found: Vec<(Version, &'v str)>,
    /// Whether every element gave a version (so a default missing from `found` is
    /// missing from the list, not hidden behind an unreadable element).
    complete: bool,
}

#[derive(Default)]
struct Checker {
    out: Deferred,
}

impl Checker {
    // ----- types ------------------------------------------------------------------

    fn wrong_type(&mut self, value: &Value, at: &Place<'_>, expected: &str) {
        let message = format!(
            "{} must be {expected}, but it is {}",
            at.quoted(),
            type_name(value)
        );
        self.out.error(codes::INVALID_TYPE, at, message);
    }

    /// A string where `fits` wanted another type: says so, and how to write it when the
    /// string's content, unquoted, is what was wanted (`"true"`, `"1"`).
    fn quoted_value(
        &mut self,
        text: &str,
        at: &Place<'_>,
        expected: &str,
        fits: fn(&Value) -> bool,
    ) {
        let unquoted = serde_json::from_str::<Value>(text.trim()).ok().filter(fits);
        let message = match unquoted {
            Some(value) => format!(
                "{} must be {expected}, but it is the string `\"{}\"`; write `{value}` without quotes",
                at.quoted(),
                text.escape_debug()
            ),
            None => format!("{} must be {expected}, but it is a string", at.quoted()),
        };
        self.out.error(codes::INVALID_TYPE, at, message);
    }

    fn object<'v>(
        &mut self,
        value: &'v Value,
        at: &Place<'_>,
        expected: &str,
    ) -> Option<&'v Map<String, Value>> {
        match value {
            Value::Object(map) => Some(map),
            _ => {
                self.wrong_type(value, at, expected);
                None
            }
        }
    }

    fn array<'v>(&mut self, value: &'v Value, at: &Place<'_>, of: &str) -> Option<&'v [Value]> {
        match value {
            Value::Array(items) => Some(items),
            _ => {
                self.wrong_type(value, at, &format!("an array of {of}"));
                None
            }
        }
    }

    fn string<'v>(&mut self, value: &'v Value, at: &Place<'_>) -> Option<&'v str> {
        match value {
            Value::String(text) => Some(text),
            _ => {
                self.wrong_type(value, at, "a string");
                None
            }
        }
    }

    /// A string that must have content (not only whitespace).
    fn text(&mut self, value: &Value, at: &Place<'_>) {
        if let Some(text) = self.string(value, at)
            && text.js_trim().is_empty()
        {
            self.out.error(
                codes::EMPTY_VALUE,
                at,
                format!("{} is empty; it must say something", at.quoted()),
            );
        }
    }

    /// The member `key` of `object`, or a `registry/missing-key` error saying how to add
    /// it (or which member of `object` looks like a misspelling of it).
    fn required<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        at: &Place<'_>,
        known: &[&str],
        key: &str,
        hint: Hint,
    ) -> Option<&'v Value> {
        if let Some(value) = object.get(key) {
            return Some(value);
        }
        let misspelt = object.keys().find(|other| {
            !known.contains(&other.as_str())
                && did_you_mean(other, known.iter().copied()) == Some(key)
        });
        let missing = match at {
            Place::Root => format!("required member `{key}` is missing"),
            _ => format!("{} has no `{key}`", at.quoted()),
        };
        let message = match misspelt {
            Some(other) => format!(
                "{missing}; `{}` looks like a misspelling of it",
                other.escape_debug()
            ),
            None => format!("{missing}; {}", hint.text()),
        };
        self.out.error(codes::MISSING_KEY, &at.key(key), message);
        None
    }

    fn unknown_keys(&mut self, object: &Map<String, Value>, at: &Place<'_>, known: &[&str]) {
        self.out
            .unknown_members(codes::UNKNOWN_KEY, object, at, known, "");
    }

    /// A value of a closed set, with did-you-mean.
    fn closed<T: Copy>(
        &mut self,
        value: &Value,
        at: &Place<'_>,
        from_name: fn(&str) -> Option<T>,
        names: impl Iterator<Item = &'static str> + Clone,
    ) -> Option<T> {
        let text = self.string(value, at)?;
        if let Some(found) = from_name(text) {
            return Some(found);
        }
        self.out.not_one_of(codes::UNKNOWN_VALUE, at, text, names);
        None
    }

    /// A SemVer version, with its text.
    fn version<'v>(&mut self, value: &'v Value, at: &Place<'_>) -> Option<(Version, &'v str)> {
        let text = self.string(value, at)?;
        match parse_version(text) {
            Ok(version) => Some((version, text)),
            Err(error) => {
                let message = format!("{} {error}", at.quoted());
                self.out.error(codes::INVALID_VERSION, at, message);
                None
            }
        }
    }

    // ----- entry.json -------------------------------------------------------------

    fn entry(&mut self, value: &Value) {
        let root = Place::Root;
        let known = &keys::ENTRY;
        let Some(object) = self.object(
            value,
            &root,
            "an object (`{ \"schemaVersion\": 1, \"extensionId\": …, … }`)",
        ) else {
            return;
        };
        self.unknown_keys(object, &root, known);

        if let Some(value) = self.required(
            object,
            &root,
            known,
            "schemaVersion",
            Hint::Say("add `\"schemaVersion\": 1`"),
        ) {
            self.schema_version(value, &root.key("schemaVersion"));
        }
        if let Some(value) = self.required(
            object,
            &root,
            known,
            "extensionId",
            Hint::Say("add the id, two or more `.`-separated segments, e.g. `\"extensionId\": \"yourteam.some-extension\"`"),
        ) {
            self.extension_id(value, &root.key("extensionId"));
        }
        if let Some(value) = self.required(
            object,
            &root,
            known,
            "packageName",
            Hint::Say("add the npm package this entry lists, e.g. `\"packageName\": \"@yourteam/some-extension\"`"),
        ) {
            self.package_name(value, &root.key("packageName"));
        }
        if let Some(value) = self.required(
            object,
            &root,
            known,
            "status",
            Hint::OneOf(|| one_of(Status::names())),
        ) {
            self.closed(
                value,
                &root.key("status"),
                Status::from_name,
                Status::names(),
            );
        }
        if let Some(value) = self.required(
            object,
            &root,
            known,
            "featured",
            Hint::Say("add `\"featured\": false` (or `true`)"),
        ) {
            let at = root.key("featured");
            match value {
                Value::Bool(_) => {}
                Value::String(text) => {
                    self.quoted_value(text, &at, "`true` or `false`", Value::is_boolean)
                }
                other => self.wrong_type(other, &at, "`true` or `false`"),
            }
        }
        let default = self
            .required(
                object,
                &root,
                known,
                "defaultVersion",
                Hint::Say("add the version installed by default, one of `versions`, e.g. `\"defaultVersion\": \"1.0.0\"`"),
            )
            .and_then(|value| self.version(value, &root.key("defaultVersion")));
        if let Some(value) = self.required(
            object,
            &root,
            known,
            "defaultReviewStatus",
            Hint::OneOf(|| one_of(ReviewStatus::names())),
        ) {
            self.closed(
                value,
                &root.key("defaultReviewStatus"),
                ReviewStatus::from_name,
                ReviewStatus::names(),
            );
        }
        let listed = self
            .required(
                object,
                &root,
                known,
                "versions",
                Hint::Say("add the listed versions, e.g. `\"versions\": [{ \"version\": \"1.0.0\", \"channel\": \"stable\", \"reviewStatus\": \"unverified\" }]`"),
            )
            .and_then(|value| self.versions(value, &root.key("versions")));

        if let (Some((default, text)), Some(listed)) = (default, listed)
            && listed.complete
            && !listed.found.iter().any(|(version, _)| *version == default)
        {
            self.default_not_listed(&default, text, &listed, &root.key("defaultVersion"));
        }
    }

    fn schema_version(&mut self, value: &Value, at: &Place<'_>) {
        match value {
            Value::Number(number) => match number.as_u64() {
                Some(SCHEMA_VERSION) => {}
                Some(other) => self.out.error(
                    codes::UNSUPPORTED_SCHEMA_VERSION,
                    at,
                    format!("`schemaVersion` is {other}; the only schema version is 1"),
                ),
                None => self.out.error(
                    codes::UNSUPPORTED_SCHEMA_VERSION,
                    at,
                    format!(
                        "`schemaVersion` is {number}; the only schema version is the integer 1"
                    ),
                ),
            },
            Value::String(text) => self.quoted_value(text, at, "the integer 1", |value| {
                value.as_u64() == Some(SCHEMA_VERSION)
            }),
            other => self.wrong_type(other, at, "the integer 1"),
        }
    }

    fn extension_id(&mut self, value: &Value, at: &Place<'_>) {
        let Some(id) = self.string(value, at) else {
            return;
        };
        let problems = extension_id_problems(id);
        if problems.is_empty() {
            return;
        }
        let lower = id.to_lowercase();
        let mut suggestion = (lower != id && extension_id_problems(&lower).is_empty())
            .then(|| format!("; did you mean `{lower}`?"));
        for problem in problems {
            let message = format!(
                "`extensionId` `{}` {}{}",
                id.escape_debug(),
                problem.text,
                suggestion.take().unwrap_or_default()
            );
            self.out
                .error_in_string(codes::INVALID_EXTENSION_ID, at, id, problem.range, message);
        }
    }

    fn package_name(&mut self, value: &Value, at: &Place<'_>) {
        let Some(name) = self.string(value, at) else {
            return;
        };
        let check = npm::check_package_name(name);
        if check.valid_for_new_packages() {
            return;
        }
        let lower = name.to_lowercase();
        let lowercase_works =
            lower != name && npm::check_package_name(&lower).valid_for_new_packages();
        // npm's errors, then its warnings: a registry lists only publishable packages,
        // so both are errors here.
        for problem in check.errors.iter().chain(&check.warnings) {
            let extra = match problem {
                NameProblem::CoreModule => {
                    "; npm publishes no new package under such a name".to_owned()
                }
                NameProblem::Uppercase(_) if lowercase_works => {
                    format!("; did you mean `{}`?", lower.escape_debug())
                }
                _ => String::new(),
            };
            let message = format!("`packageName` `{}` {problem}{extra}", name.escape_debug());
            self.out.error_in_string(
                codes::INVALID_PACKAGE_NAME,
                at,
                name,
                problem.bytes(),
                message,
            );
        }
    }

    fn versions<'v>(&mut self, value: &'v Value, at: &Place<'_>) -> Option<Listed<'v>> {
        let items = self.array(value, at, "version objects")?;
        if items.is_empty() {
            self.out.error(
                codes::EMPTY_VALUE,
                at,
                "`versions` is empty; list at least one published version, e.g. `[{ \"version\": \"1.0.0\", \"channel\": \"stable\", \"reviewStatus\": \"unverified\" }]`".to_owned(),
            );
            return None;
        }
        let known = &keys::VERSION;
        let mut listed = Listed {
            found: Vec::with_capacity(items.len()),
            complete: true,
        };
        // Version without build metadata → (index, text) of its first listing.
        let mut seen: HashMap<Version, (usize, &str)> = HashMap::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let here = at.index(index);
            let Some(object) = self.object(
                item,
                &here,
                "an object `{ \"version\", \"channel\", \"reviewStatus\" }`",
            ) else {
                listed.complete = false;
                continue;
            };
            self.unknown_keys(object, &here, known);
            let version = self
                .required(
                    object,
                    &here,
                    known,
                    "version",
                    Hint::Say("add the published SemVer version, e.g. `\"version\": \"1.0.0\"`"),
                )
                .and_then(|value| self.version(value, &here.key("version")));
            match version {
                Some((version, text)) => {
                    match seen.entry(identity(&version)) {
                        hash_map::Entry::Occupied(first) => {
                            let (first, first_text) = *first.get();
                            self.duplicate_version(text, first, first_text, &here.key("version"));
                        }
                        hash_map::Entry::Vacant(slot) => {
                            slot.insert((index, text));
                        }
                    }
                    listed.found.push((version, text));
                }
                None => listed.complete = false,
            }
            if let Some(value) = self.required(
                object,
                &here,
                known,
                "channel",
                Hint::OneOf(|| one_of(Channel::names())),
            ) {
                self.closed(
                    value,
                    &here.key("channel"),
                    Channel::from_name,
                    Channel::names(),
                );
            }
            if let Some(value) = self.required(
                object,
                &here,
                known,
                "reviewStatus",
                Hint::OneOf(|| one_of(ReviewStatus::names())),
            ) {
                self.closed(
                    value,
                    &here.key("reviewStatus"),
                    ReviewStatus::from_name,
                    ReviewStatus::names(),
                );
            }
            if let Some(value) = object.get("changelog") {
                self.changelog(value, &here.key("changelog"));
            }
        }
        Some(listed)
    }

    fn duplicate_version(&mut self, text: &str, first: usize, first_text: &str, at: &Place<'_>) {
        let message = if text == first_text {
            format!(
                "version `{}` is listed twice (first at `versions[{first}]`); list each version once",
                text.escape_debug()
            )
        } else {
            format!(
                "version `{}` is the same version as `{}` at `versions[{first}]`: they differ only in build metadata, which SemVer ignores and npm drops when publishing; list each version once",
                text.escape_debug(),
                first_text.escape_debug()
            )
        };
        self.out.error(codes::DUPLICATE_VERSION, at, message);
    }

    fn default_not_listed(
        &mut self,
        default: &Version,
        text: &str,
        listed: &Listed<'_>,
        at: &Place<'_>,
    ) {
        let mut shown: Vec<&str> = Vec::new();
        for (_, listed_text) in &listed.found {
            if !shown.contains(listed_text) {
                shown.push(listed_text);
            }
        }
        let more = shown.len().saturating_sub(SHOWN_VERSIONS);
        shown.truncate(SHOWN_VERSIONS);
        let mut listing = all_of(&shown);
        if more > 0 {
            listing.push_str(&format!(" and {more} more"));
        }
        let default_identity = identity(default);
        let near = listed
            .found
            .iter()
            .find(|(version, _)| identity(version) == default_identity);
        let message = match near {
            Some((_, near)) => format!(
                "`defaultVersion` `{}` is not one of the listed versions ({listing}): `{}` differs from it only in build metadata; write the default exactly as listed",
                text.escape_debug(),
                near.escape_debug()
            ),
            None => format!(
                "`defaultVersion` `{}` is not one of the listed versions ({listing}); list it in `versions` or make one of those the default",
                text.escape_debug()
            ),
        };
        self.out
            .error(codes::DEFAULT_VERSION_NOT_LISTED, at, message);
    }

    fn changelog(&mut self, value: &Value, at: &Place<'_>) {
        let Some(object) = self.object(value, at, "an object `{ \"summary\", \"body\" }`") else {
            return;
        };
        let known = &keys::CHANGELOG;
        self.unknown_keys(object, at, known);
        if let Some(value) = self.required(
            object,
            at,
            known,
            "summary",
            Hint::Say("a changelog has both `summary` and `body`; add a one-line summary"),
        ) {
            self.text(value, &at.key("summary"));
        }
        if let Some(value) = self.required(
            object,
            at,
            known,
            "body",
            Hint::Say("a changelog has both `summary` and `body`; add the details (Markdown)"),
        ) {
            self.text(value, &at.key("body"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Changelog, EntryVersion};

    #[test]
    fn the_key_lists_are_the_model_s_member_names() {
        let entry = Entry {
            schema_version: SCHEMA_VERSION,
            extension_id: "a.b".to_owned(),
            package_name: "b".to_owned(),
            status: Status::Listed,
            featured: false,
            default_version: "1.0.0".to_owned(),
            default_review_status: ReviewStatus::Unverified,
            versions: vec![EntryVersion {
                version: "1.0.0".to_owned(),
                channel: Channel::Stable,
                review_status: ReviewStatus::Unverified,
                changelog: Some(Changelog {
                    summary: "s".to_owned(),
                    body: "b".to_owned(),
                }),
            }],
        };
        let value = serde_json::to_value(&entry).unwrap();
        let names = |value: &Value| -> Vec<String> {
            let mut names: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
            names.sort();
            names
        };
        let sorted = |known: &[&str]| -> Vec<String> {
            let mut known: Vec<String> = known.iter().map(|k| (*k).to_owned()).collect();
            known.sort();
            known
        };
        assert_eq!(names(&value), sorted(&keys::ENTRY));
        assert_eq!(names(&value["versions"][0]), sorted(&keys::VERSION));
        assert_eq!(
            names(&value["versions"][0]["changelog"]),
            sorted(&keys::CHANGELOG)
        );
    }

    fn ranges(id: &str) -> Vec<Option<std::ops::Range<usize>>> {
        extension_id_problems(id)
            .into_iter()
            .map(|p| p.range)
            .collect()
    }

    #[test]
    fn extension_ids_follow_the_pattern() {
        for good in [
            "a.b",
            "spiritagent.system-message-demo",
            "yourteam.some-extension",
            "a1.b-2.c-d-e",
            "0.0",
        ] {
            assert!(extension_id_problems(good).is_empty(), "{good}");
        }
        assert_eq!(ranges(""), [None]);
        assert_eq!(ranges("abc"), [None]);
        assert_eq!(ranges("Abc"), [Some(0..1), None]);
        assert_eq!(ranges("a.B"), [Some(2..3)]);
        assert_eq!(ranges("a.b-"), [Some(3..4)]);
        assert_eq!(ranges("a.-b"), [Some(2..3)]);
        assert_eq!(ranges("a-.b"), [Some(1..2)]);
        assert_eq!(ranges("a.b--c"), [Some(3..5)]);
        assert_eq!(ranges("a..b"), [Some(1..3)]);
        assert_eq!(ranges(".a.b"), [Some(0..1)]);
        assert_eq!(ranges("a.b."), [Some(3..4)]);
        assert_eq!(ranges("a.b_c"), [Some(3..4)]);
        assert_eq!(ranges("a.é"), [Some(2..4)]);
        assert_eq!(ranges("-"), [Some(0..1), None]);
    }

    #[test]
    fn build_metadata_does_not_make_another_version() {
        let a = Version::parse("1.0.0").unwrap();
        let b = Version::parse("1.0.0+build.5").unwrap();
        assert_ne!(a, b);
        assert_eq!(identity(&a), identity(&b));
        assert_ne!(
            identity(&a),
            identity(&Version::parse("1.0.0-rc.1+b").unwrap())
        );
    }
}
