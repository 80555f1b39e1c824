//! The validator: one walk over the parsed `package.json` (and the CLI hooks file) that
//! reports every problem, each at one of the levels [`codes`] names — what the Spirit
//! app refuses, what it installs but cannot run as declared, and advice.
//!
//! Places are tracked as a [`Place`] chain on the stack and become JSON Pointers only
//! when something is reported, and the pointer → span map of the document is built
//! only when there is something to locate: a clean package costs a parse and a walk.

use curupira_diagnostics::js::JsTrim;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io;

use curupira_diagnostics::json::{self, Deferred, Place, type_name};
use curupira_diagnostics::names::{self, ValueProblem};
use curupira_diagnostics::version::parse_version;
use curupira_diagnostics::{Anchor, Diagnostic, JsonPointer, Report, Severity};
use serde_json::{Map, Value};

use crate::files::{FileKind, MAX_JSON_BYTES, PackageFiles};
use crate::model::{
    ActivationEvent, ApprovalMode, Capability, ExecutionMode, HooksFile, Host, PackageJson,
    SettingType, Slot, TokenRole, Variant, keys,
};
use crate::settings::expectation;
use crate::{Checked, Options, PACKAGE_JSON, RelativePath, codes, schema};

/// Longest extension id the Spirit app can install: its staging folder
/// `pkg-<base64url(id)>.stage-XXXXXX` must fit the 255-byte file-name limit, which leaves
/// 238 base64url characters, 178 bytes of id.
const MAX_ID_BYTES: usize = 178;

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

// ----- entry points -----------------------------------------------------------------

/// Checks a `package.json` that is already a JSON value (a published manifest inside
/// an npm package document): the structure rules, with pointers but no positions.
pub(crate) fn check_value(value: serde_json::Value, file: &str, options: &Options) -> Checked {
    let mut checker = Checker::new(options, false);
    checker.package(&value);
    let mut report = Report::new();
    report.add_file(file);
    report.extend(checker.out.finish_without_source(file));
    let package = if report.has_errors() {
        None
    } else {
        let mut value = value;
        normalise_package(&mut value);
        PackageJson::from_checked(value).ok()
    };
    Checked {
        package,
        hooks: None,
        report,
    }
}

/// The text of a JSON file of the package as the app reads it: a byte-order mark is
/// refused (the report), invalid UTF-8 becomes U+FFFD with a warning.
fn read_text<'b>(bytes: &'b [u8], file: &str) -> Result<(Cow<'b, str>, Vec<Diagnostic>), Report> {
    if bytes.starts_with(BOM) {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let position = curupira_diagnostics::LineIndex::new(&text).position(0);
        let mut report = Report::new();
        report.add_file(file);
        report.push(
            Diagnostic::error(
                codes::BYTE_ORDER_MARK,
                file,
                JsonPointer::root(),
                "the file starts with a UTF-8 byte-order mark, which the Spirit app does not read as JSON; save it without the mark".to_owned(),
            )
            .with_location(0..BOM.len(), position),
        );
        report.add_source(file, text);
        return Err(report);
    }
    match crate::decode(bytes, file) {
        Ok(text) => Ok((Cow::Borrowed(text), Vec::new())),
        Err(report) => {
            let warnings = report
                .diagnostics()
                .iter()
                .cloned()
                .map(|mut diagnostic| {
                    diagnostic.severity = Severity::Warning;
                    diagnostic.message.push_str(
                        " (the Spirit app reads each invalid byte as U+FFFD and goes on)",
                    );
                    diagnostic
                })
                .collect();
            Ok((
                Cow::Owned(String::from_utf8_lossy(bytes).into_owned()),
                warnings,
            ))
        }
    }
}

/// Checks `package.json` bytes; with `files`, also the paths it names and the hooks file.
pub(crate) fn check_bytes(
    bytes: &[u8],
    file: &str,
    options: &Options,
    files: Option<&dyn PackageFiles>,
) -> Checked {
    match read_text(bytes, file) {
        Ok((text, prelude)) => check_text_with(&text, file, options, files, prelude),
        Err(report) => Checked {
            package: None,
            hooks: None,
            report,
        },
    }
}

/// Checks `package.json` text; with `files`, also the paths it names and the hooks file.
pub(crate) fn check_text(
    text: &str,
    file: &str,
    options: &Options,
    files: Option<&dyn PackageFiles>,
) -> Checked {
    check_text_with(text, file, options, files, Vec::new())
}

fn check_text_with(
    text: &str,
    file: &str,
    options: &Options,
    files: Option<&dyn PackageFiles>,
    prelude: Vec<Diagnostic>,
) -> Checked {
    let mut report = Report::new();
    // The text is kept for quoting only when there is something to quote.
    report.add_file(file);
    if !prelude.is_empty() {
        report.add_source(file, text);
        report.extend(prelude);
    }
    let mut document = match read_json(text, file) {
        Ok(document) => document,
        Err(diagnostic) => {
            report.add_source(file, text);
            report.push(diagnostic);
            return Checked {
                package: None,
                hooks: None,
                report,
            };
        }
    };
    // The app reads the last of repeated members, as the rules do: a warning.
    for duplicate in &mut document.duplicates {
        duplicate.severity = Severity::Warning;
    }
    let mut checker = Checker::new(options, files.is_some());
    checker.infinite = document.infinite_numbers();
    checker.package(&document.value);
    let paths = checker.paths.take().unwrap_or_default();
    let mut hooks = None;
    let mut hooks_report = None;
    if let Some(files) = files {
        // Each path's kind is asked once; the hooks file is read only when it is a file.
        let mut hooks_path = None;
        for (kind, path, pointer) in &paths {
            let strict = options.registry_strict;
            if check_file(files, &mut checker.out, strict, *kind, path, pointer)
                && *kind == PathKind::Hooks
            {
                hooks_path = Some(path);
            }
        }
        if let Some(path) = hooks_path {
            match read_hooks(files, path) {
                Ok((file_hooks, count, file_report)) => {
                    hooks = file_hooks;
                    hooks_report = Some(file_report);
                    if let Some(count) = count {
                        checker.cli_pairing(count > 0);
                    }
                }
                Err(error) => checker.out.push_at(
                    Severity::Error,
                    codes::MISSING_FILE,
                    pointer_of(&paths, PathKind::Hooks),
                    Anchor::Value,
                    format!("the hooks file `{path}` could not be read: {error}"),
                ),
            }
        }
    }
    let diagnostics = checker.out.finish(file, text, &document);
    if !diagnostics.is_empty() {
        report.add_source(file, text);
    }
    report.extend(diagnostics);
    if let Some(hooks_report) = hooks_report {
        report.append(hooks_report);
    }
    let package = if report.has_errors() {
        None
    } else {
        let mut value = document.value;
        normalise_package(&mut value);
        match PackageJson::from_checked(value) {
            Ok(package) => Some(package),
            Err(error) => {
                // The checks above accept only what the model can hold; reaching this
                // is a bug, reported rather than hidden.
                report.push(Diagnostic::error(
                    codes::INVALID_TYPE,
                    file,
                    JsonPointer::root(),
                    format!("the package passed every check but could not be read into the model ({error}); please report this"),
                ));
                None
            }
        }
    };
    Checked {
        package,
        hooks,
        report,
    }
}

/// Parses a JSON file of the package as the app's `JSON.parse` reads it.
#[allow(clippy::result_large_err)]
fn read_json(text: &str, file: &str) -> Result<json::JsonDocument, Diagnostic> {
    json::parse_with(
        text,
        file,
        codes::SYNTAX,
        codes::DUPLICATE_KEY,
        json::Dialect::JavaScript,
    )
}

fn pointer_of(paths: &[(PathKind, RelativePath, JsonPointer)], kind: PathKind) -> JsonPointer {
    paths
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map_or_else(JsonPointer::root, |(_, _, pointer)| pointer.clone())
}

/// Checks the package `files` hold.
pub(crate) fn check_package(files: &dyn PackageFiles, options: &Options) -> io::Result<Checked> {
    let root = RelativePath::parse(PACKAGE_JSON).map_err(|e| io::Error::other(e.to_string()))?;
    let file = files.display_name(&root);
    let mut prelude = Vec::new();
    let problem = match files.kind(&root) {
        FileKind::File => None,
        FileKind::Missing => Some((
            codes::MISSING_FILE,
            "there is no `package.json` at the package root".to_owned(),
        )),
        FileKind::Folder | FileKind::Special => Some((
            codes::NOT_A_FILE,
            "`package.json` at the package root is not a regular file".to_owned(),
        )),
        FileKind::Escapes { target } => {
            prelude.push(Diagnostic::warning(
                codes::PATH_ESCAPES,
                file.clone(),
                JsonPointer::root(),
                format!("`package.json` is a symlink to `{target}`, outside the package; the installed copy keeps the link"),
            ));
            None
        }
    };
    if let Some((code, message)) = problem {
        let mut report = Report::new();
        report.add_file(file.clone());
        report.push(Diagnostic::error(code, file, JsonPointer::root(), message));
        return Ok(Checked {
            package: None,
            hooks: None,
            report,
        });
    }
    let bytes = files.read(&root, MAX_JSON_BYTES)?;
    let mut checked = check_bytes(&bytes, &file, options, Some(files));
    if !prelude.is_empty() {
        let mut report = Report::new();
        report.add_file(file);
        report.extend(prelude);
        report.append(checked.report);
        checked.report = report;
    }
    Ok(checked)
}

/// Reads and checks the hooks file: its own diagnostics, under its own name, and how
/// many hooks it lists when it could be read as `{ "hooks": [...] }`.
fn read_hooks(
    files: &dyn PackageFiles,
    path: &RelativePath,
) -> io::Result<(Option<HooksFile>, Option<usize>, Report)> {
    let bytes = files.read(path, MAX_JSON_BYTES)?;
    let file = files.display_name(path);
    let (text, prelude) = match read_text(&bytes, &file) {
        Ok(read) => read,
        Err(report) => return Ok((None, None, report)),
    };
    let mut report = Report::new();
    report.add_file(file.clone());
    if !prelude.is_empty() {
        report.add_source(file.clone(), text.as_ref());
        report.extend(prelude);
    }
    let mut document = match read_json(&text, &file) {
        Ok(document) => document,
        Err(diagnostic) => {
            report.add_source(file.clone(), text.as_ref());
            report.push(diagnostic);
            return Ok((None, None, report));
        }
    };
    for duplicate in &mut document.duplicates {
        duplicate.severity = Severity::Warning;
    }
    let options = Options::default();
    let mut checker = Checker::new(&options, false);
    let count = checker.hooks_file(&document.value);
    let diagnostics = checker.out.finish(&file, &text, &document);
    if !diagnostics.is_empty() {
        report.add_source(file.clone(), text.as_ref());
    }
    report.extend(diagnostics);
    let hooks = if report.has_errors() {
        None
    } else {
        let mut value = document.value;
        normalise_hooks_file(&mut value);
        HooksFile::from_checked(value).ok()
    };
    Ok((hooks, count, report))
}

/// Checks that the file a manifest path names is what the app needs there; true when
/// it can be read (a regular file, possibly through a link out of the package).
///
/// An icon or style sheet the package lacks is advice (the app installs and runs the
/// package, without the icon or the style); in registry-strict mode a declared icon
/// must be there as well (`spirit/registry-required`), since the marketplace shows it.
fn check_file(
    files: &dyn PackageFiles,
    out: &mut Deferred,
    registry_strict: bool,
    kind: PathKind,
    path: &RelativePath,
    pointer: &JsonPointer,
) -> bool {
    let what = kind.what();
    let asset = matches!(kind, PathKind::Icon | PathKind::Css);
    let found = files.kind(path);
    if registry_strict && kind == PathKind::Icon && found != FileKind::File {
        out.push_at(
            Severity::Error,
            codes::REGISTRY_REQUIRED,
            pointer.clone(),
            Anchor::Value,
            format!(
                "registry-strict mode needs the declared icon `{path}` in the package, as a regular file; the marketplace shows it"
            ),
        );
    }
    let (code, message) = match found {
        FileKind::File => return true,
        FileKind::Missing if asset => (
            codes::MISSING_ASSET,
            format!(
                "{what} `{path}` does not exist in the package; the app installs it anyway, {}",
                kind.effect()
            ),
        ),
        FileKind::Missing => (
            codes::MISSING_FILE,
            format!("{what} `{path}` does not exist in the package"),
        ),
        FileKind::Folder | FileKind::Special if asset => (
            codes::MISSING_ASSET,
            format!("{what} `{path}` is not a regular file; {}", kind.effect()),
        ),
        FileKind::Folder | FileKind::Special if kind == PathKind::Main => (
            codes::MAIN_NOT_A_FILE,
            format!(
                "`main` `{path}` is not a regular file (a folder?); the app installs it, but loading it fails whenever the extension is activated"
            ),
        ),
        FileKind::Folder | FileKind::Special => (
            codes::NOT_A_FILE,
            format!("{what} `{path}` is not a regular file; it must name a file"),
        ),
        FileKind::Escapes { target } => {
            out.push_at(
                Severity::Warning,
                codes::PATH_ESCAPES,
                pointer.clone(),
                Anchor::Value,
                format!(
                    "{what} `{path}` resolves through a symlink to `{target}`, outside the package; the installed copy keeps the link, which points elsewhere on another machine"
                ),
            );
            // A link whose target is no regular file is judged as that target.
            let target = std::path::Path::new(&target);
            if target.is_absolute() && !target.is_file() {
                let (code, what_it_is) = match (asset, kind, target.exists()) {
                    (true, _, _) => (codes::MISSING_ASSET, "not a regular file"),
                    (false, PathKind::Main, true) => (codes::MAIN_NOT_A_FILE, "not a regular file"),
                    (false, _, true) => (codes::NOT_A_FILE, "not a regular file"),
                    (false, _, false) => (codes::MISSING_FILE, "missing"),
                };
                out.push_at(
                    severity_of(code),
                    code,
                    pointer.clone(),
                    Anchor::Value,
                    format!(
                        "{what} `{path}` is a symlink to `{}`, which is {what_it_is}",
                        target.display()
                    ),
                );
                return false;
            }
            return true;
        }
    };
    out.push_at(
        severity_of(code),
        code,
        pointer.clone(),
        Anchor::Value,
        message,
    );
    false
}

/// The severity `code` is declared with in [`codes`] (an error for a code it lacks).
fn severity_of(code: &str) -> Severity {
    codes::ALL
        .iter()
        .find(|c| c.code == code)
        .map_or(Severity::Error, |c| c.severity)
}

// ----- the checker ------------------------------------------------------------------

/// Which manifest path a [`RelativePath`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathKind {
    Main,
    Icon,
    Css,
    Hooks,
}

impl PathKind {
    fn what(self) -> &'static str {
        match self {
            PathKind::Main => "`main`",
            PathKind::Icon => "the icon",
            PathKind::Css => "the style sheet",
            PathKind::Hooks => "the CLI hooks file",
        }
    }

    /// What a missing asset does at run time.
    fn effect(self) -> &'static str {
        match self {
            PathKind::Css => "but the style sheet is never applied",
            _ => "but no icon is shown",
        }
    }
}

/// Whether a value declares something (a non-empty array or object).
fn has_content(value: &Value) -> bool {
    match value {
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
        _ => false,
    }
}

struct Checker<'o> {
    out: Deferred,
    options: &'o Options,
    /// The package paths found valid, to check against the files when they are at hand
    /// (`None` when they are not: then nothing is recorded).
    paths: Option<Vec<(PathKind, RelativePath, JsonPointer)>>,
    /// The CLI pairing left until the hooks file is read: `Some` with where `cli-ui`
    /// is listed, if it is.
    cli_pending: Option<Option<usize>>,
    /// Where the text has a number beyond the range of `f64`: `JSON.parse` reads it as
    /// `Infinity`, the value holds `±f64::MAX`.
    infinite: Vec<JsonPointer>,
}

/// What the walk of `spiritExtension` learnt, for the rules that span members.
#[derive(Default)]
struct Facts {
    /// Capabilities and where each is listed (first occurrence).
    capabilities: Vec<(Capability, usize)>,
    activation_events: usize,
    tools: usize,
    /// `contributes.desktop` declares a style sheet or a settings page.
    desktop: bool,
    /// `contributes.cli.hooks` names a hooks file.
    cli: bool,
    secret_slots: usize,
}

impl Facts {
    fn capability(&self, capability: Capability) -> Option<usize> {
        self.capabilities
            .iter()
            .find(|(c, _)| *c == capability)
            .map(|(_, i)| *i)
    }
}

impl<'o> Checker<'o> {
    fn new(options: &'o Options, with_files: bool) -> Self {
        Checker {
            out: Deferred::new(),
            options,
            paths: with_files.then(Vec::new),
            cli_pending: None,
            infinite: Vec::new(),
        }
    }
}

impl Checker<'_> {
    // ----- types ------------------------------------------------------------------

    fn wrong_type(&mut self, value: &Value, at: &Place<'_>, expected: &str) {
        let message = format!(
            "{} must be {expected}, but it is {}; the app refuses the package",
            at.quoted(),
            type_name(value)
        );
        self.out.error(codes::INVALID_TYPE, at, message);
    }

    /// A wrong-typed member the app ignores: a warning.
    fn ignored(&mut self, value: &Value, at: &Place<'_>, expected: &str) {
        let message = format!(
            "{} should be {expected}, but it is {}; the app ignores it",
            at.quoted(),
            type_name(value)
        );
        self.out.warning(codes::IGNORED_VALUE, at, message);
    }

    /// A wrong-typed container: ignored, an error when it declares something.
    fn ignored_block(&mut self, value: &Value, at: &Place<'_>, expected: &str) {
        if has_content(value) {
            let message = format!(
                "{} must be {expected}, but it is {}; the app ignores it, so nothing it declares exists at run time",
                at.quoted(),
                type_name(value)
            );
            self.out.error(codes::IGNORED_DECLARATION, at, message);
        } else {
            self.ignored(value, at, expected);
        }
    }

    fn null(&mut self, at: &Place<'_>) {
        let message = format!(
            "{} is `null`, which the app reads as absent; leave the member out",
            at.quoted()
        );
        self.out.warning(codes::NULL_VALUE, at, message);
    }

    /// An optional member: `None` when absent or `null` (with a warning).
    fn optional<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        at: &Place<'_>,
        key: &str,
    ) -> Option<&'v Value> {
        match object.get(key) {
            None => None,
            Some(Value::Null) => {
                self.null(&at.key(key));
                None
            }
            Some(value) => Some(value),
        }
    }

    fn object<'v>(&mut self, value: &'v Value, at: &Place<'_>) -> Option<&'v Map<String, Value>> {
        match value {
            Value::Object(map) => Some(map),
            _ => {
                self.wrong_type(value, at, "an object");
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

    /// The string the app uses: trimmed, with a warning when that changed it.
    fn trimmed<'v>(&mut self, text: &'v str, at: &Place<'_>) -> &'v str {
        let trimmed = text.js_trim();
        if trimmed.len() != text.len() && !trimmed.is_empty() {
            let message = format!(
                "{} is `{}`, with whitespace around it; the app trims it to `{}`",
                at.quoted(),
                text.escape_debug(),
                trimmed.escape_debug()
            );
            self.out.warning(codes::UNTRIMMED_VALUE, at, message);
        }
        trimmed
    }

    /// A string that must have content (not only whitespace), trimmed.
    fn text<'v>(&mut self, value: &'v Value, at: &Place<'_>) -> Option<&'v str> {
        let text = self.string(value, at)?;
        if text.js_trim().is_empty() {
            self.out.error(
                codes::EMPTY_VALUE,
                at,
                format!(
                    "{} is empty; it must say something (the app refuses the package)",
                    at.quoted()
                ),
            );
            return None;
        }
        Some(self.trimmed(text, at))
    }

    /// An optional string the app reads only when it is one (`description` of a
    /// setting, a hook's `prefix`, ...).
    fn loose_string(&mut self, object: &Map<String, Value>, at: &Place<'_>, key: &str) {
        if let Some(value) = self.optional(object, at, key)
            && !value.is_string()
        {
            self.ignored(value, &at.key(key), "a string");
        }
    }

    /// An optional boolean the app reads only when it is one.
    fn loose_boolean(&mut self, object: &Map<String, Value>, at: &Place<'_>, key: &str) {
        if let Some(value) = self.optional(object, at, key)
            && !value.is_boolean()
        {
            self.ignored(value, &at.key(key), "`true` or `false`");
        }
    }

    /// An optional top-level string the app refuses when it is not one.
    fn optional_string(&mut self, object: &Map<String, Value>, at: &Place<'_>, key: &str) {
        if let Some(value) = self.optional(object, at, key)
            && let Some(text) = self.string(value, &at.key(key))
        {
            self.trimmed(text, &at.key(key));
        }
    }

    fn required<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        at: &Place<'_>,
        key: &str,
        hint: &str,
    ) -> Option<&'v Value> {
        match object.get(key) {
            Some(value) if !value.is_null() => Some(value),
            found => {
                let null = if found.is_some() {
                    " (it is `null`)"
                } else {
                    ""
                };
                let message = match at {
                    Place::Root => format!("required member `{key}` is missing{null}; {hint}"),
                    _ => format!("{} has no `{key}`{null}; {hint}", at.quoted()),
                };
                self.out.error(codes::MISSING_KEY, &at.key(key), message);
                None
            }
        }
    }

    fn unknown_keys(&mut self, object: &Map<String, Value>, at: &Place<'_>, known: &[&str]) {
        self.unknown_keys_but(object, at, known, "");
    }

    /// Like `unknown_keys`, leaving out `reported`, which the caller reports itself.
    fn unknown_keys_but(
        &mut self,
        object: &Map<String, Value>,
        at: &Place<'_>,
        known: &[&str],
        reported: &str,
    ) {
        self.out
            .unknown_members(codes::UNKNOWN_KEY, object, at, known, reported);
    }

    /// A value of a closed set (trimmed, as the app compares it), with did-you-mean.
    fn closed<T: Copy>(
        &mut self,
        value: &Value,
        at: &Place<'_>,
        from_name: fn(&str) -> Option<T>,
        names: impl Iterator<Item = &'static str> + Clone,
    ) -> Option<T> {
        let text = self.string(value, at)?;
        if let Some(found) = from_name(text.js_trim()) {
            self.trimmed(text, at);
            return Some(found);
        }
        self.out.not_one_of(codes::UNKNOWN_VALUE, at, text, names);
        None
    }

    /// An array of closed-set values; repeats are warnings (the app drops them).
    fn closed_list<T: Copy + PartialEq>(
        &mut self,
        items: &[Value],
        at: &Place<'_>,
        from_name: fn(&str) -> Option<T>,
        names: impl Iterator<Item = &'static str> + Clone,
    ) -> Vec<(T, usize)> {
        let mut found: Vec<(T, usize)> = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let here = at.index(index);
            let Some(value) = self.closed(item, &here, from_name, names.clone()) else {
                continue;
            };
            if let Some((_, first)) = found.iter().find(|(v, _)| *v == value) {
                let text = item.as_str().unwrap_or_default().js_trim();
                let message = format!(
                    "`{text}` is listed again in {} (first at index {first}); the app drops the repetition",
                    at.quoted()
                );
                self.out.warning(codes::REPEATED_VALUE, &here, message);
                continue;
            }
            found.push((value, index));
        }
        found
    }

    /// Problems of a trimmed string, located in the string as written.
    fn problems(
        &mut self,
        code: &'static str,
        at: &Place<'_>,
        written: &str,
        what: &str,
        problems: Vec<ValueProblem>,
    ) -> bool {
        let any = !problems.is_empty();
        let lead = written.len() - written.js_trim_start().len();
        let value = written.js_trim();
        for problem in problems {
            let message = format!("{what} `{}` {}", value.escape_debug(), problem.text);
            let range = problem.range.map(|r| r.start + lead..r.end + lead);
            self.out.error_in_string(code, at, written, range, message);
        }
        any
    }

    /// A tool name, setting key or secret key: trimmed, non-empty, the identifier
    /// pattern; `Some` when valid.
    fn identifier<'v>(
        &mut self,
        value: &'v Value,
        at: &Place<'_>,
        what: &str,
        example: &str,
    ) -> Option<&'v str> {
        let written = self.string(value, at)?;
        let text = self.text(value, at)?;
        let problems = names::identifier(text, &format!("a {what}"), example);
        if self.problems(codes::INVALID_IDENTIFIER, at, written, what, problems) {
            return None;
        }
        Some(text)
    }

    /// A relative path inside the package; remembered for the file checks. `""` is
    /// absent for `main` and `icon`; backslashes are read as `/` except in `main`.
    fn package_path(&mut self, value: &Value, at: &Place<'_>, kind: PathKind) -> bool {
        let Some(written) = self.string(value, at) else {
            return false;
        };
        let text = if matches!(kind, PathKind::Main | PathKind::Icon) {
            let text = written.js_trim();
            if text.is_empty() {
                return false;
            }
            self.trimmed(written, at)
        } else {
            match self.text(value, at) {
                Some(text) => text,
                None => return false,
            }
        };
        if kind == PathKind::Main && text.contains('\\') {
            return self.main_with_backslash(text, at);
        }
        let read: Cow<'_, str> = if text.contains('\\') {
            let message = format!(
                "{} is `{}`, with a backslash; the app reads it as `/`, write `{}`",
                at.quoted(),
                text.escape_debug(),
                text.replace('\\', "/").escape_debug()
            );
            self.out.warning(codes::BACKSLASH_PATH, at, message);
            Cow::Owned(text.replace('\\', "/"))
        } else {
            Cow::Borrowed(text)
        };
        match RelativePath::parse_declared(&read) {
            Ok(path) => {
                if let Some(paths) = &mut self.paths {
                    paths.push((kind, path, at.pointer()));
                }
                true
            }
            Err(problem) => {
                let message = format!(
                    "{} is `{}`, which the app refuses as a package path: {problem}",
                    at.quoted(),
                    text.escape_debug()
                );
                self.out.error(codes::INVALID_PATH, at, message);
                false
            }
        }
    }

    /// `main` with a backslash, as the app takes it: its safety is judged with the
    /// backslashes read as `/` (no `..`, nothing absolute), but its file is looked up
    /// with them as written, part of a file name on Linux and macOS. So the package
    /// installs where a file of that very name exists; said as a warning, since on
    /// Windows the same `main` names another file.
    fn main_with_backslash(&mut self, text: &str, at: &Place<'_>) -> bool {
        let slashed = text.replace('\\', "/");
        if let Err(problem) = RelativePath::parse_declared(&slashed) {
            let message = format!(
                "{} is `{}`, which the app refuses as a package path (it reads a backslash as `/` for this check): {problem}",
                at.quoted(),
                text.escape_debug()
            );
            self.out.error(codes::INVALID_PATH, at, message);
            return false;
        }
        let message = format!(
            "{} is `{}`, with a backslash: on Linux and macOS the app loads the file of that very name in the package's root folder, on Windows `{}`; write `/` so that both are one file",
            at.quoted(),
            text.escape_debug(),
            slashed.escape_debug()
        );
        self.out.warning(codes::BACKSLASH_PATH, at, message);
        if let Some(paths) = &mut self.paths {
            paths.push((
                PathKind::Main,
                RelativePath::main_as_looked_up(text),
                at.pointer(),
            ));
        }
        true
    }

    // ----- package.json -----------------------------------------------------------

    fn package(&mut self, value: &Value) {
        let root = Place::Root;
        let Some(object) = self.object(value, &root) else {
            return;
        };
        let strict = self.options.registry_strict;
        if let Some(value) = self.required(
            object,
            &root,
            "name",
            "add the extension id, the npm package name, e.g. `\"name\": \"@acme/spirit-lookup\"`",
        ) {
            self.name(value, &root.key("name"));
        }
        if let Some(value) = self.required(
            object,
            &root,
            "version",
            "add the version, e.g. `\"version\": \"1.0.0\"`",
        ) {
            let at = root.key("version");
            if let Some(text) = self.text(value, &at)
                && let Err(error) = parse_version(text)
            {
                if strict {
                    self.out.error(
                        codes::REGISTRY_REQUIRED,
                        &at,
                        format!("`version` {error}; registry-strict mode needs SemVer, the only versions npm publishes"),
                    );
                } else {
                    self.out.warning(
                        codes::INVALID_VERSION,
                        &at,
                        format!("`version` {error} (the app takes any non-empty version; npm and the registry need SemVer)"),
                    );
                }
            }
        }
        self.optional_string(object, &root, "description");
        if strict
            && object
                .get("description")
                .and_then(Value::as_str)
                .is_none_or(|d| d.js_trim().is_empty())
        {
            self.out.error(
                codes::REGISTRY_REQUIRED,
                &root.key("description"),
                "registry-strict mode needs a non-empty `description`: the marketplace reader rejects the whole catalog when an item has none".to_owned(),
            );
        }
        self.optional_string(object, &root, "homepage");
        if let Some(author) = self.optional(object, &root, "author") {
            self.author(author, &root.key("author"));
        }
        if let Some(repository) = self.optional(object, &root, "repository") {
            self.repository(repository, &root.key("repository"));
        }
        if let Some(keywords) = self.optional(object, &root, "keywords") {
            let at = root.key("keywords");
            match keywords {
                Value::Array(items) => {
                    for (index, item) in items.iter().enumerate() {
                        if !item.is_string() {
                            self.ignored(
                                item,
                                &at.index(index),
                                "a string (npm's `keywords`; the app does not read them)",
                            );
                        }
                    }
                }
                other => self.ignored(
                    other,
                    &at,
                    "an array of strings (npm's `keywords`; the app does not read them)",
                ),
            }
        }
        let mut has_main = false;
        if let Some(main) = self.optional(object, &root, "main") {
            has_main = self.package_path(main, &root.key("main"), PathKind::Main);
        }
        let at = root.key("spiritExtension");
        let Some(spirit) = object.get("spiritExtension").filter(|v| !v.is_null()) else {
            let near = object
                .keys()
                .find(|k| curupira_diagnostics::did_you_mean(k, ["spiritExtension"]).is_some());
            let message = match near {
                Some(near) => format!(
                    "required member `spiritExtension` is missing; `{}` looks like a misspelling of it",
                    near.escape_debug()
                ),
                None => "required member `spiritExtension` is missing; a Spirit extension's `package.json` describes it in a `spiritExtension` object".to_owned(),
            };
            self.out.error(codes::MISSING_KEY, &at, message);
            return;
        };
        let Some(spirit) = self.object(spirit, &at) else {
            return;
        };
        let facts = self.spirit_extension(spirit, &at);
        // `main` that is there but refused is reported as such, not as missing.
        let main_written = object.get("main").is_some_and(|main| match main {
            Value::Null => false,
            Value::String(text) => !text.js_trim().is_empty(),
            _ => true,
        });
        self.pairing(&facts, has_main || main_written, &at);
    }

    fn name(&mut self, value: &Value, at: &Place<'_>) {
        let Some(written) = self.string(value, at) else {
            return;
        };
        let Some(name) = self.text(value, at) else {
            return;
        };
        let mut problems = Vec::new();
        match name.strip_prefix('@') {
            Some(scoped) => match scoped.split_once('/') {
                Some((scope, rest)) => {
                    let part = |problems: Vec<ValueProblem>,
                                what: &str,
                                value: &str,
                                offset: usize|
                     -> Vec<ValueProblem> {
                        problems
                            .into_iter()
                            .map(|p| ValueProblem {
                                text: format!(
                                    "has {what} `{}` that {}",
                                    value.escape_debug(),
                                    p.text
                                ),
                                range: p.range.map(|r| r.start + offset..r.end + offset),
                            })
                            .collect()
                    };
                    problems.extend(part(
                        names::lowercase_name(scope, "a scope"),
                        "a scope",
                        scope,
                        1,
                    ));
                    problems.extend(part(
                        names::lowercase_name(rest, "a package name"),
                        "a name after the scope",
                        rest,
                        scope.len() + 2,
                    ));
                }
                None => problems.push(ValueProblem {
                    text: "has a scope but no `/name` after it; write `@scope/name`".to_owned(),
                    range: None,
                }),
            },
            None => problems.extend(names::lowercase_name(name, "a package name")),
        }
        if name.len() > MAX_ID_BYTES {
            problems.push(ValueProblem {
                text: format!(
                    "is {} characters long; the app cannot install an id longer than {MAX_ID_BYTES} (its staging folder `pkg-<base64url(id)>.stage-XXXXXX` would pass the 255-byte file-name limit)",
                    name.len()
                ),
                range: None,
            });
        }
        self.problems(codes::INVALID_NAME, at, written, "`name`", problems);
    }

    fn author(&mut self, value: &Value, at: &Place<'_>) {
        match value {
            Value::String(text) => {
                self.trimmed(text, at);
            }
            Value::Object(object) => {
                if let Some(name) = self.optional(object, at, "name")
                    && let Some(text) = self.string(name, &at.key("name"))
                {
                    self.trimmed(text, &at.key("name"));
                }
            }
            Value::Array(_) => self.ignored(value, at, "a string or an object with a `name`"),
            other => self.wrong_type(other, at, "a string or an object with a `name`"),
        }
    }

    fn repository(&mut self, value: &Value, at: &Place<'_>) {
        const NPM: &str = "a string or an object with string `type` and `url` (npm's `repository`; the app does not read it)";
        match value {
            Value::String(_) => {}
            Value::Object(object)
                if ["type", "url"]
                    .iter()
                    .all(|k| object.get(*k).is_some_and(Value::is_string)) => {}
            other => self.ignored(other, at, NPM),
        }
    }

    // ----- spiritExtension --------------------------------------------------------

    fn spirit_extension(&mut self, object: &Map<String, Value>, at: &Place<'_>) -> Facts {
        let mut facts = Facts::default();
        if object.contains_key("main") {
            let message =
                "`main` belongs at the top of `package.json`, not inside `spiritExtension`"
                    .to_owned();
            self.out.push(
                Severity::Warning,
                codes::UNKNOWN_KEY,
                &at.key("main"),
                Anchor::Key,
                message,
            );
        }
        self.unknown_keys_but(object, at, &keys::SPIRIT, "main");
        let strict = self.options.registry_strict;

        match object.get("schemaVersion") {
            Some(value) => {
                let here = at.key("schemaVersion");
                match value.as_f64() {
                    Some(1.0) => {}
                    Some(_) => self.out.error(
                        codes::UNSUPPORTED_SCHEMA_VERSION,
                        &here,
                        format!("`spiritExtension.schemaVersion` is {value}; the only schema version is 1"),
                    ),
                    None => self.wrong_type(value, &here, "the number 1"),
                }
            }
            None if strict => self.registry_required(at, "schemaVersion", "`\"schemaVersion\": 1`"),
            None => {}
        }

        if let Some(value) = self.required(
            object,
            at,
            "displayName",
            "add the name people see, e.g. `\"displayName\": \"Lookup\"`",
        ) {
            self.text(value, &at.key("displayName"));
        }
        if let Some(icon) = self.optional(object, at, "icon") {
            self.package_path(icon, &at.key("icon"), PathKind::Icon);
        }

        if let Some(value) = self.required(
            object,
            at,
            "supportedHosts",
            "list where it runs, e.g. `\"supportedHosts\": [\"cli\", \"desktop\"]`",
        ) {
            self.supported_hosts(value, &at.key("supportedHosts"));
        }

        if let Some(value) = self.optional(object, at, "activationEvents") {
            let here = at.key("activationEvents");
            match value {
                Value::Array(items) => {
                    let found = self.closed_list(
                        items,
                        &here,
                        ActivationEvent::from_name,
                        ActivationEvent::names(),
                    );
                    facts.activation_events = found.len();
                }
                other => self.ignored(other, &here, "an array of activation events"),
            }
        }

        match self.optional(object, at, "requestedCapabilities") {
            Some(value) => {
                let here = at.key("requestedCapabilities");
                match value {
                    Value::Array(items) => {
                        facts.capabilities = self.closed_list(
                            items,
                            &here,
                            Capability::from_name,
                            Capability::names(),
                        );
                    }
                    other => self.ignored(
                        other,
                        &here,
                        "an array of capabilities (so no capability is requested)",
                    ),
                }
            }
            None if strict => self.registry_required(
                at,
                "requestedCapabilities",
                "the capabilities, `[]` when none",
            ),
            None => {}
        }

        if let Some(value) = self.optional(object, at, "contributes") {
            let here = at.key("contributes");
            match value {
                Value::Object(contributes) => self.contributes(contributes, &here, &mut facts),
                other => self.ignored_block(other, &here, "an object"),
            }
        }
        if let Some(value) = self.optional(object, at, "settingsSchema") {
            let here = at.key("settingsSchema");
            match value {
                Value::Array(items) => self.settings_schema(items, &here),
                other => self.ignored_block(other, &here, "an array of setting objects"),
            }
        }
        if let Some(value) = self.optional(object, at, "secretSlots") {
            let here = at.key("secretSlots");
            match value {
                Value::Array(items) => {
                    self.secret_slots(items, &here);
                    facts.secret_slots = items.len();
                }
                other => self.ignored_block(other, &here, "an array of secret slot objects"),
            }
        }
        facts
    }

    fn registry_required(&mut self, at: &Place<'_>, key: &str, write: &str) {
        let message = format!(
            "registry-strict mode needs `spiritExtension.{key}` written out explicitly; add {write}"
        );
        self.out
            .error(codes::REGISTRY_REQUIRED, &at.key(key), message);
    }

    fn supported_hosts(&mut self, value: &Value, at: &Place<'_>) {
        let Some(items) = self.array(value, at, "hosts") else {
            return;
        };
        if items.is_empty() {
            self.out.error(
                codes::EMPTY_VALUE,
                at,
                "`spiritExtension.supportedHosts` is empty; list `\"cli\"`, `\"desktop\"` or both"
                    .to_owned(),
            );
            return;
        }
        let found = self.closed_list(items, at, Host::from_name, Host::names());
        if let Some(host) = self.options.host {
            let all_known = items.iter().all(|item| {
                item.as_str()
                    .and_then(|t| Host::from_name(t.js_trim()))
                    .is_some()
            });
            if all_known && !found.iter().any(|(h, _)| *h == host) {
                let listed: Vec<&str> = found.iter().map(|(h, _)| h.as_str()).collect();
                let message = format!(
                    "the package supports {} only, not `{host}`, the host it is checked for",
                    curupira_diagnostics::all_of(&listed)
                );
                self.out.error(codes::UNSUPPORTED_HOST, at, message);
            }
        }
    }

    fn contributes(&mut self, object: &Map<String, Value>, at: &Place<'_>, facts: &mut Facts) {
        self.unknown_keys(object, at, &keys::CONTRIBUTES);
        if let Some(value) = self.optional(object, at, "tools") {
            let here = at.key("tools");
            match value {
                Value::Array(items) => {
                    facts.tools = items.len();
                    let mut names: HashMap<&str, usize> = HashMap::new();
                    for (index, item) in items.iter().enumerate() {
                        let tool = here.index(index);
                        if let Some(object) = self.object(item, &tool) {
                            self.tool(object, &tool, index, &mut names);
                        }
                    }
                }
                other => self.ignored_block(other, &here, "an array of tool objects"),
            }
        }
        if let Some(value) = self.optional(object, at, "desktop") {
            let here = at.key("desktop");
            match value {
                Value::Object(desktop) => facts.desktop = self.desktop(desktop, &here),
                other => self.ignored(
                    other,
                    &here,
                    "an object (so there is no desktop contribution)",
                ),
            }
        }
        if let Some(value) = self.optional(object, at, "cli") {
            let here = at.key("cli");
            match value {
                Value::Object(cli) => facts.cli = self.cli(cli, &here),
                other => self.ignored(other, &here, "an object (so there is no CLI contribution)"),
            }
        }
    }

    fn tool<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        at: &Place<'_>,
        index: usize,
        names: &mut HashMap<&'v str, usize>,
    ) {
        self.unknown_keys(object, at, &keys::TOOL);
        if let Some(value) = self.required(
            object,
            at,
            "name",
            "add the tool's name, e.g. `\"name\": \"lookup_item\"`",
        ) {
            let here = at.key("name");
            if let Some(name) = self.identifier(value, &here, "tool name", "lookup_item") {
                if let Some(first) = names.get(name) {
                    let message = format!(
                        "tool name `{name}` is used twice (first by `contributes.tools[{first}]`); the app accepts it, but give each tool its own name"
                    );
                    self.out.warning(codes::DUPLICATE_VALUE, &here, message);
                } else {
                    names.insert(name, index);
                }
            }
        }
        if let Some(value) = self.required(
            object,
            at,
            "description",
            "say what the tool does; the model reads it to decide when to call it",
        ) {
            self.text(value, &at.key("description"));
        }
        if let Some(value) = self.required(object, at, "inputSchema", "add the JSON Schema of the arguments, e.g. `{ \"type\": \"object\", \"properties\": {} }`") {
            let here = at.key("inputSchema");
            if self.json_schema(value, &here) && value.get("type").and_then(Value::as_str) != Some("object") {
                let message = format!(
                    "{} does not say `\"type\": \"object\"`; model tool-calling APIs expect the arguments to be an object",
                    here.quoted()
                );
                self.out.warning(codes::INPUT_SCHEMA_NOT_OBJECT, &here, message);
            }
        }
        if let Some(value) = self.optional(object, at, "outputSchema") {
            self.json_schema(value, &at.key("outputSchema"));
        }
        if let Some(value) = self.optional(object, at, "approvalMode") {
            self.closed(
                value,
                &at.key("approvalMode"),
                ApprovalMode::from_name,
                ApprovalMode::names(),
            );
        }
        if let Some(value) = self.optional(object, at, "executionMode") {
            self.closed(
                value,
                &at.key("executionMode"),
                ExecutionMode::from_name,
                ExecutionMode::names(),
            );
        }
    }

    /// An object that is a valid JSON Schema; true when it is. An array passes the
    /// app (it is an object to JavaScript) and is advice here, like an invalid schema.
    fn json_schema(&mut self, value: &Value, at: &Place<'_>) -> bool {
        match value {
            Value::Object(_) => {}
            Value::Array(_) => {
                let message = format!(
                    "{} is an array, not a JSON Schema object; the app passes it to the model provider as it is, which may refuse the tool",
                    at.quoted()
                );
                self.out.warning(codes::INVALID_SCHEMA, at, message);
                return false;
            }
            other => {
                self.wrong_type(other, at, "a JSON Schema object");
                return false;
            }
        }
        let problems = schema::check(value);
        let valid = problems.is_empty();
        for problem in problems {
            let pointer = format!("{}{}", at.pointer(), problem.pointer);
            let path = JsonPointer::parse(&pointer).unwrap_or_else(|_| at.pointer());
            let message = format!(
                "{} is not a valid JSON Schema: {}; the app passes it to the model provider as it is, which may refuse the tool",
                at.quoted(),
                problem.message
            );
            self.out.push_at(
                Severity::Warning,
                codes::INVALID_SCHEMA,
                path,
                Anchor::Value,
                message,
            );
        }
        valid
    }

    /// Checks `contributes.desktop`; true when it declares something (a style sheet
    /// or a settings page), which is what `desktop-ui` pairs with.
    fn desktop(&mut self, object: &Map<String, Value>, at: &Place<'_>) -> bool {
        self.unknown_keys(object, at, &keys::DESKTOP);
        let mut declares = false;
        if let Some(value) = self.optional(object, at, "css") {
            let here = at.key("css");
            match value {
                Value::Array(items) => {
                    declares |= !items.is_empty();
                    for (index, item) in items.iter().enumerate() {
                        let entry = here.index(index);
                        let Some(css) = self.object(item, &entry) else {
                            continue;
                        };
                        self.unknown_keys(css, &entry, &keys::STYLESHEET);
                        if let Some(path) = self.required(
                            css,
                            &entry,
                            "path",
                            "add the CSS file's path, e.g. `\"path\": \"styles/desktop.css\"`",
                        ) {
                            self.package_path(path, &entry.key("path"), PathKind::Css);
                        }
                        self.loose_string(css, &entry, "media");
                    }
                }
                other => self.ignored_block(other, &here, "an array of `{ \"path\" }` objects"),
            }
        }
        if let Some(value) = object.get("settingsPage") {
            let here = at.key("settingsPage");
            match value {
                Value::Null | Value::Bool(false) => {}
                Value::Bool(true) => declares = true,
                Value::Object(page) => {
                    declares = true;
                    self.unknown_keys(page, &here, &keys::SETTINGS_PAGE);
                    self.loose_string(page, &here, "title");
                }
                Value::Array(_) => {
                    declares = true;
                    self.ignored(
                        value,
                        &here,
                        "`true` or an object (the app reads an array as `{}`)",
                    );
                }
                other => {
                    self.wrong_type(other, &here, "`true`, `false`, `{}` or `{ \"title\": … }`")
                }
            }
        }
        declares
    }

    /// Checks `contributes.cli`; true when it declares hooks (a refused `hooks` too:
    /// its own error says what is wrong, the pairing would only repeat it).
    fn cli(&mut self, object: &Map<String, Value>, at: &Place<'_>) -> bool {
        self.unknown_keys(object, at, &keys::CLI);
        let Some(value) = self.optional(object, at, "hooks") else {
            return false;
        };
        let here = at.key("hooks");
        match value {
            Value::Array(_) => {
                let message = "`spiritExtension.contributes.cli.hooks` is an inline array; write `\"hooks\": { \"path\": \"cli-hooks.json\" }` and put `{ \"hooks\": [...] }` in that file".to_owned();
                self.out.error(codes::INLINE_HOOKS, &here, message);
            }
            Value::Object(hooks) => {
                self.unknown_keys(hooks, &here, &keys::HOOKS_REF);
                if let Some(path) = self.required(
                    hooks,
                    &here,
                    "path",
                    "name the hooks file, e.g. `\"path\": \"cli-hooks.json\"`",
                ) {
                    self.package_path(path, &here.key("path"), PathKind::Hooks);
                }
            }
            other => {
                self.wrong_type(other, &here, "an object `{ \"path\": \"cli-hooks.json\" }`");
            }
        }
        true
    }

    fn settings_schema(&mut self, items: &[Value], at: &Place<'_>) {
        let mut keys: HashMap<&str, usize> = HashMap::new();
        for (index, item) in items.iter().enumerate() {
            let here = at.index(index);
            let Some(object) = self.object(item, &here) else {
                continue;
            };
            self.unknown_keys(object, &here, &keys::SETTING);
            if let Some(value) = self.required(
                object,
                &here,
                "key",
                "add the setting's key, e.g. `\"key\": \"region\"`",
            ) {
                let key_at = here.key("key");
                if let Some(key) = self.identifier(value, &key_at, "setting key", "region") {
                    if let Some(first) = keys.get(key) {
                        let message = format!(
                            "setting key `{key}` is used twice (first by `settingsSchema[{first}]`); the app accepts it, but which one a read finds is not said"
                        );
                        self.out.warning(codes::DUPLICATE_VALUE, &key_at, message);
                    } else {
                        keys.insert(key, index);
                    }
                }
            }
            let kind = self
                .required(
                    object,
                    &here,
                    "type",
                    "add `\"type\"`: `\"string\"`, `\"boolean\"`, `\"number\"` or `\"select\"`",
                )
                .and_then(|v| {
                    self.closed(
                        v,
                        &here.key("type"),
                        SettingType::from_name,
                        SettingType::names(),
                    )
                });
            if let Some(value) = self.required(
                object,
                &here,
                "title",
                "add the label the settings UI shows",
            ) {
                self.text(value, &here.key("title"));
            }
            self.loose_string(object, &here, "description");
            self.loose_string(object, &here, "placeholder");
            self.loose_boolean(object, &here, "required");
            let options = match (kind, self.optional(object, &here, "options")) {
                (Some(SettingType::Select), Some(value)) => {
                    self.select_options(value, &here.key("options"))
                }
                (Some(SettingType::Select), None) => {
                    let message = format!(
                        "{} is a `select` without `options`; the app accepts it, but there is nothing to choose",
                        here.quoted()
                    );
                    self.out.warning(codes::NO_OPTIONS, &here, message);
                    None
                }
                (Some(other), Some(_)) => {
                    let message = format!(
                        "`options` on a setting of type `{other}`: the app refuses the package, only `select` settings may declare options"
                    );
                    self.out.push(
                        Severity::Error,
                        codes::UNUSED_KEY,
                        &here.key("options"),
                        Anchor::Key,
                        message,
                    );
                    None
                }
                (None, _) | (Some(_), None) => None,
            };
            if let (Some(kind), Some(default)) =
                (kind, self.optional(object, &here, "defaultValue"))
            {
                self.default_value(kind, default, options.as_deref(), &here.key("defaultValue"));
            }
        }
    }

    /// The values of a select's options, when they could all be read.
    fn select_options(&mut self, value: &Value, at: &Place<'_>) -> Option<Vec<String>> {
        let items = self.array(value, at, "`{ \"value\", \"label\" }` objects")?;
        if items.is_empty() {
            self.out.warning(
                codes::NO_OPTIONS,
                at,
                format!(
                    "{} is empty; the app accepts it, but there is nothing to choose",
                    at.quoted()
                ),
            );
            return None;
        }
        let mut values: Vec<String> = Vec::new();
        let mut complete = true;
        for (index, item) in items.iter().enumerate() {
            let here = at.index(index);
            let Some(option) = self.object(item, &here) else {
                complete = false;
                continue;
            };
            self.unknown_keys(option, &here, &keys::OPTION);
            match self
                .required(
                    option,
                    &here,
                    "value",
                    "add the value stored when this option is chosen",
                )
                .and_then(|v| self.text(v, &here.key("value")))
            {
                Some(text) => {
                    if let Some(first) = values.iter().position(|v| v == text) {
                        let message = format!(
                            "option value `{}` is used twice (first by option {first}); the app accepts it, but the choices cannot be told apart",
                            text.escape_debug()
                        );
                        self.out
                            .warning(codes::DUPLICATE_VALUE, &here.key("value"), message);
                    }
                    values.push(text.to_owned());
                }
                None => complete = false,
            }
            if let Some(label) = self.required(
                option,
                &here,
                "label",
                "add the text the user sees for this option",
            ) {
                self.text(label, &here.key("label"));
            }
            self.loose_string(option, &here, "description");
        }
        complete.then_some(values)
    }

    fn default_value(
        &mut self,
        kind: SettingType,
        value: &Value,
        options: Option<&[String]>,
        at: &Place<'_>,
    ) {
        let fits = match (kind, value) {
            (SettingType::String, Value::String(_)) | (SettingType::Boolean, Value::Bool(_)) => {
                true
            }
            (SettingType::Number, Value::Number(number)) => {
                if !self.infinite.is_empty() && self.infinite.contains(&at.pointer()) {
                    let infinity = if number.as_f64().is_some_and(|n| n < 0.0) {
                        "-Infinity"
                    } else {
                        "Infinity"
                    };
                    let message = format!(
                        "`defaultValue` is beyond the largest 64-bit float, so the app reads it as `{infinity}`; a `number` setting's default must be a finite number (the app refuses the package)"
                    );
                    self.out.error(codes::INVALID_DEFAULT, at, message);
                    return;
                }
                number.as_f64().is_some_and(f64::is_finite)
            }
            (SettingType::Select, Value::String(text)) => {
                if let Some(options) = options
                    && !options.iter().any(|o| o == text)
                {
                    let mut shown: Vec<String> = Vec::new();
                    for option in options {
                        let quoted = format!("`{}`", option.escape_debug());
                        if !shown.contains(&quoted) {
                            shown.push(quoted);
                        }
                    }
                    let message = format!(
                        "`defaultValue` `{}` is not one of the options' values ({}); the app does not check it",
                        text.escape_debug(),
                        shown.join(", ")
                    );
                    self.out.warning(codes::DEFAULT_NOT_AN_OPTION, at, message);
                }
                true
            }
            _ => false,
        };
        if !fits {
            let expected = expectation(kind);
            let message = format!(
                "`defaultValue` is {} but the setting's type is `{kind}`; it must be {expected} (the app refuses the package)",
                type_name(value)
            );
            self.out.error(codes::INVALID_DEFAULT, at, message);
        }
    }

    /// Checks the entries of `secretSlots`.
    fn secret_slots(&mut self, items: &[Value], at: &Place<'_>) {
        let mut keys: HashMap<&str, usize> = HashMap::new();
        for (index, item) in items.iter().enumerate() {
            let here = at.index(index);
            let Some(object) = self.object(item, &here) else {
                continue;
            };
            self.unknown_keys(object, &here, &keys::SECRET);
            if let Some(value) = self.required(
                object,
                &here,
                "key",
                "add the secret's key, e.g. `\"key\": \"api_token\"`",
            ) {
                let key_at = here.key("key");
                if let Some(key) = self.identifier(value, &key_at, "secret key", "api_token") {
                    if let Some(first) = keys.get(key) {
                        let message = format!(
                            "secret key `{}` is used twice (first by `secretSlots[{first}]`); the app accepts it, but which one a read finds is not said",
                            key.escape_debug()
                        );
                        self.out.warning(codes::DUPLICATE_VALUE, &key_at, message);
                    } else {
                        keys.insert(key, index);
                    }
                }
            }
            if let Some(value) = self.required(object, &here, "title", "add the label the UI shows")
            {
                self.text(value, &here.key("title"));
            }
            self.loose_string(object, &here, "description");
            self.loose_boolean(object, &here, "required");
        }
    }

    // ----- rules across members ---------------------------------------------------

    fn pairing(&mut self, facts: &Facts, has_main: bool, at: &Place<'_>) {
        let caps = at.key("requestedCapabilities");
        let contributes = at.key("contributes");
        let defs = facts.capability(Capability::ToolDefinitions);
        let exec = facts.capability(Capability::ToolExecution);
        let has_tools = facts.tools > 0;

        if has_tools && (defs.is_none() || exec.is_none()) {
            let missing: Vec<&str> = [(defs, "tool-definitions"), (exec, "tool-execution")]
                .iter()
                .filter(|(found, _)| found.is_none())
                .map(|(_, name)| *name)
                .collect();
            let message = format!(
                "`contributes.tools` lists tools, but without {} in `requestedCapabilities` the app never offers them to the model; add {}",
                curupira_diagnostics::all_of(&missing),
                if missing.len() == 1 { "it" } else { "them" }
            );
            self.out
                .error(codes::TOOLS_NOT_EXPOSED, &contributes.key("tools"), message);
        } else if !has_tools {
            match (defs, exec) {
                (Some(index), None) | (None, Some(index)) => {
                    let (has, lacks) = if defs.is_some() {
                        ("tool-definitions", "tool-execution")
                    } else {
                        ("tool-execution", "tool-definitions")
                    };
                    let message = format!(
                        "`{has}` is requested without `{lacks}` and without tools; tools need both"
                    );
                    self.out
                        .warning(codes::UNUSED_CAPABILITY, &caps.index(index), message);
                }
                (Some(index), Some(_)) => {
                    let message = "`tool-definitions` and `tool-execution` are requested but `contributes.tools` lists no tool".to_owned();
                    self.out
                        .warning(codes::UNUSED_CAPABILITY, &caps.index(index), message);
                }
                (None, None) => {}
            }
        }

        self.ui_pairing(
            facts.capability(Capability::DesktopUi),
            facts.desktop,
            "desktop",
            Capability::DesktopUi,
            at,
        );
        let cli_ui = facts.capability(Capability::CliUi);
        if facts.cli && self.paths.is_some() {
            // Whether the hooks file lists a hook decides; it is read later.
            self.cli_pending = Some(cli_ui);
        } else {
            self.ui_pairing(cli_ui, facts.cli, "cli", Capability::CliUi, at);
        }

        match (
            facts.capability(Capability::SecretStorage),
            facts.secret_slots > 0,
        ) {
            (None, true) => {
                let message = "`secretSlots` without the capability `secret-storage` in `requestedCapabilities`; the app lets the secrets work anyway, but request it".to_owned();
                self.out.warning(
                    codes::UNDECLARED_CAPABILITY,
                    &at.key("secretSlots"),
                    message,
                );
            }
            (Some(index), false) => {
                let message =
                    "`secret-storage` is requested but `secretSlots` declares no secret".to_owned();
                self.out
                    .warning(codes::UNUSED_CAPABILITY, &caps.index(index), message);
            }
            _ => {}
        }

        self.main_required(facts, has_main, exec);
    }

    /// `desktop-ui` ⇔ a desktop contribution, `cli-ui` ⇔ a CLI contribution.
    fn ui_pairing(
        &mut self,
        requested: Option<usize>,
        present: bool,
        what: &str,
        capability: Capability,
        at: &Place<'_>,
    ) {
        match (requested, present) {
            (Some(index), false) => {
                let message = format!(
                    "`{capability}` is requested but there is no `contributes.{what}` that declares anything; the app refuses the package (add the contribution or drop the capability)"
                );
                self.out.error(
                    codes::CAPABILITY_MISMATCH,
                    &at.key("requestedCapabilities").index(index),
                    message,
                );
            }
            (None, true) => {
                let message = format!(
                    "`contributes.{what}` needs the capability `{capability}` in `requestedCapabilities`; the app refuses the package without it"
                );
                self.out.error(
                    codes::CAPABILITY_MISMATCH,
                    &at.key("contributes").key(what),
                    message,
                );
            }
            _ => {}
        }
    }

    /// The CLI pairing once the hooks file has been read: `has_hooks` when it lists at
    /// least one hook.
    fn cli_pairing(&mut self, has_hooks: bool) {
        if let Some(cli_ui) = self.cli_pending.take() {
            let root = Place::Root;
            let at = root.key("spiritExtension");
            self.ui_pairing(cli_ui, has_hooks, "cli", Capability::CliUi, &at);
        }
    }

    fn main_required(&mut self, facts: &Facts, has_main: bool, exec: Option<usize>) {
        if !has_main {
            let mut reasons = Vec::new();
            if facts.activation_events > 0 {
                reasons.push("lists `activationEvents`");
            }
            if exec.is_some() {
                reasons.push("requests `tool-execution`");
            }
            if facts.capability(Capability::SystemPrompt).is_some() {
                reasons.push("requests `system-prompt`");
            }
            if !reasons.is_empty() {
                let message = format!(
                    "`main` is missing, but the extension {}: the app installs it, but every tool call fails and no system prompt is contributed; add e.g. `\"main\": \"dist/index.js\"`",
                    reasons.join(" and ")
                );
                self.out
                    .error(codes::MAIN_REQUIRED, &Place::Root.key("main"), message);
            }
        }
    }

    // ----- the hooks file ---------------------------------------------------------

    /// Checks the hooks file; the number of hooks when it is `{ "hooks": [...] }`.
    fn hooks_file(&mut self, value: &Value) -> Option<usize> {
        let root = Place::Root;
        let object = self.object(value, &root)?;
        self.unknown_keys(object, &root, &keys::HOOKS_FILE);
        let hooks = self.required(object, &root, "hooks", "the file is `{ \"hooks\": [ … ] }`")?;
        let at = root.key("hooks");
        let items = self.array(hooks, &at, "hook objects")?;
        for (index, item) in items.iter().enumerate() {
            let here = at.index(index);
            let Some(hook) = self.object(item, &here) else {
                continue;
            };
            self.unknown_keys(hook, &here, &keys::HOOK);
            if let Some(slot) = self.required(
                hook,
                &here,
                "slot",
                "name the slot it styles, e.g. `\"slot\": \"input.frame\"`",
            ) {
                self.closed(slot, &here.key("slot"), Slot::from_name, Slot::names());
            }
            if let Some(variant) = self.optional(hook, &here, "variant") {
                self.closed(
                    variant,
                    &here.key("variant"),
                    Variant::from_name,
                    Variant::names(),
                );
            }
            if let Some(tokens) = self.optional(hook, &here, "tokens") {
                let tokens_at = here.key("tokens");
                match tokens {
                    Value::Object(tokens) => {
                        self.unknown_keys(tokens, &tokens_at, &keys::TOKENS);
                        for key in keys::TOKENS {
                            if let Some(role) = self.optional(tokens, &tokens_at, key) {
                                self.closed(
                                    role,
                                    &tokens_at.key(key),
                                    TokenRole::from_name,
                                    TokenRole::names(),
                                );
                            }
                        }
                    }
                    other => self.ignored(other, &tokens_at, "an object of token roles"),
                }
            }
            self.loose_string(hook, &here, "prefix");
            self.loose_string(hook, &here, "suffix");
        }
        Some(items.len())
    }
}

// ----- the package as the app reads it ----------------------------------------------

/// The package the app loads from `value` (a `package.json` whose check found only
/// errors the app installs anyway, [`Level::BreaksAtRunTime`](crate::codes::Level)):
/// normalised as a clean package is; `None` when the model cannot hold it (a member of
/// the wrong type the app ignores).
pub(crate) fn as_loaded(mut value: Value) -> Option<PackageJson> {
    normalise_package(&mut value);
    PackageJson::from_checked(value).ok()
}

/// Rewrites a package that passed the checks into what the app reads from it, the
/// form the model holds: strings trimmed, `null` and ignored members dropped, enum
/// lists without repeats, backslashes of asset paths read as `/`.
fn normalise_package(value: &mut Value) {
    let Some(root) = value.as_object_mut() else {
        return;
    };
    trim_member(root, "name");
    trim_member(root, "version");
    for key in ["description", "homepage", "main"] {
        keep_text(root, key);
    }
    match root.get_mut("author") {
        Some(Value::String(text)) => {
            let trimmed = text.js_trim().to_owned();
            if trimmed.is_empty() {
                root.remove("author");
            } else {
                *text = trimmed;
            }
        }
        Some(Value::Object(author)) => {
            keep_text(author, "name");
            if !author.contains_key("name") {
                root.remove("author");
            }
        }
        Some(_) => {
            root.remove("author");
        }
        None => {}
    }
    let repository_ok = match root.get("repository") {
        None | Some(Value::String(_)) => true,
        Some(Value::Object(object)) => ["type", "url"]
            .iter()
            .all(|k| object.get(*k).is_some_and(Value::is_string)),
        Some(_) => false,
    };
    if !repository_ok {
        root.remove("repository");
    }
    match root.get_mut("keywords") {
        Some(Value::Array(items)) => items.retain(Value::is_string),
        Some(_) => {
            root.remove("keywords");
        }
        None => {}
    }
    let Some(Value::Object(spirit)) = root.get_mut("spiritExtension") else {
        return;
    };
    if spirit.contains_key("schemaVersion") {
        spirit.insert("schemaVersion".to_owned(), Value::from(1u64));
    }
    trim_member(spirit, "displayName");
    keep_text(spirit, "icon");
    slashes(spirit, "icon");
    for key in [
        "supportedHosts",
        "activationEvents",
        "requestedCapabilities",
    ] {
        enum_list(spirit, key);
    }
    if !spirit.get("contributes").is_some_and(Value::is_object) {
        spirit.remove("contributes");
    }
    if let Some(Value::Object(contributes)) = spirit.get_mut("contributes") {
        if !contributes.get("tools").is_some_and(Value::is_array) {
            contributes.remove("tools");
        }
        if let Some(Value::Array(tools)) = contributes.get_mut("tools") {
            for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
                trim_member(tool, "name");
                for key in ["approvalMode", "executionMode"] {
                    drop_null(tool, key);
                    trim_member(tool, key);
                }
                drop_null(tool, "outputSchema");
            }
        }
        if !contributes.get("desktop").is_some_and(Value::is_object) {
            contributes.remove("desktop");
        }
        if let Some(Value::Object(desktop)) = contributes.get_mut("desktop") {
            if !desktop.get("css").is_some_and(Value::is_array) {
                desktop.remove("css");
            }
            if let Some(Value::Array(css)) = desktop.get_mut("css") {
                for entry in css.iter_mut().filter_map(Value::as_object_mut) {
                    trim_member(entry, "path");
                    slashes(entry, "path");
                    loose(entry, "media", Value::is_string);
                }
            }
            match desktop.get_mut("settingsPage") {
                Some(Value::Null | Value::Bool(false)) => {
                    desktop.remove("settingsPage");
                }
                Some(page @ Value::Array(_)) => *page = Value::Object(Map::new()),
                Some(Value::Object(page)) => loose(page, "title", Value::is_string),
                _ => {}
            }
        }
        if !contributes.get("cli").is_some_and(Value::is_object) {
            contributes.remove("cli");
        }
        if let Some(Value::Object(cli)) = contributes.get_mut("cli") {
            drop_null(cli, "hooks");
            if let Some(Value::Object(hooks)) = cli.get_mut("hooks") {
                trim_member(hooks, "path");
                slashes(hooks, "path");
            }
        }
    }
    if !spirit.get("settingsSchema").is_some_and(Value::is_array) {
        spirit.remove("settingsSchema");
    }
    if let Some(Value::Array(settings)) = spirit.get_mut("settingsSchema") {
        for setting in settings.iter_mut().filter_map(Value::as_object_mut) {
            trim_member(setting, "key");
            trim_member(setting, "type");
            loose(setting, "description", Value::is_string);
            loose(setting, "placeholder", Value::is_string);
            loose(setting, "required", Value::is_boolean);
            drop_null(setting, "defaultValue");
            drop_null(setting, "options");
            if let Some(Value::Array(options)) = setting.get_mut("options") {
                for option in options.iter_mut().filter_map(Value::as_object_mut) {
                    trim_member(option, "value");
                    loose(option, "description", Value::is_string);
                }
            }
        }
    }
    if !spirit.get("secretSlots").is_some_and(Value::is_array) {
        spirit.remove("secretSlots");
    }
    if let Some(Value::Array(slots)) = spirit.get_mut("secretSlots") {
        for slot in slots.iter_mut().filter_map(Value::as_object_mut) {
            trim_member(slot, "key");
            loose(slot, "description", Value::is_string);
            loose(slot, "required", Value::is_boolean);
        }
    }
}

/// The hooks file as the app reads it (see [`normalise_package`]).
fn normalise_hooks_file(value: &mut Value) {
    let Some(Value::Array(hooks)) = value.get_mut("hooks") else {
        return;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        trim_member(hook, "slot");
        drop_null(hook, "variant");
        trim_member(hook, "variant");
        if !hook.get("tokens").is_some_and(Value::is_object) {
            hook.remove("tokens");
        }
        if let Some(Value::Object(tokens)) = hook.get_mut("tokens") {
            for key in keys::TOKENS {
                drop_null(tokens, key);
                trim_member(tokens, key);
            }
        }
        loose(hook, "prefix", Value::is_string);
        loose(hook, "suffix", Value::is_string);
    }
}

fn trim_member(object: &mut Map<String, Value>, key: &str) {
    if let Some(Value::String(text)) = object.get_mut(key) {
        let trimmed = text.js_trim();
        if trimmed.len() != text.len() {
            *text = trimmed.to_owned();
        }
    }
}

/// A string member that is absent when `null` or empty (after trimming).
fn keep_text(object: &mut Map<String, Value>, key: &str) {
    trim_member(object, key);
    if object
        .get(key)
        .is_some_and(|v| v.is_null() || v.as_str() == Some(""))
    {
        object.remove(key);
    }
}

fn drop_null(object: &mut Map<String, Value>, key: &str) {
    if object.get(key).is_some_and(Value::is_null) {
        object.remove(key);
    }
}

/// An optional member the app reads only when it has the right type.
fn loose(object: &mut Map<String, Value>, key: &str, right: fn(&Value) -> bool) {
    if object.get(key).is_some_and(|v| !right(v)) {
        object.remove(key);
    }
}

fn slashes(object: &mut Map<String, Value>, key: &str) {
    if let Some(Value::String(text)) = object.get_mut(key)
        && text.contains('\\')
    {
        *text = text.replace('\\', "/");
    }
}

/// An enum list trimmed and without repeats; dropped when it is not an array.
fn enum_list(object: &mut Map<String, Value>, key: &str) {
    match object.get_mut(key) {
        Some(Value::Array(items)) => {
            for item in items.iter_mut() {
                if let Value::String(text) = item {
                    let trimmed = text.js_trim();
                    if trimmed.len() != text.len() {
                        *text = trimmed.to_owned();
                    }
                }
            }
            // Lists are a handful of values: a quadratic look is the cheapest.
            let repeated = (1..items.len()).any(|i| items[..i].contains(&items[i]));
            if repeated {
                let mut seen: Vec<Value> = Vec::with_capacity(items.len());
                for item in items.drain(..) {
                    if !seen.contains(&item) {
                        seen.push(item);
                    }
                }
                *items = seen;
            }
        }
        Some(_) => {
            object.remove(key);
        }
        None => {}
    }
}
