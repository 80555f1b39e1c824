//! The validator: one walk over the parsed `package.json` (and the CLI hooks file) that
//! reports every problem.
//!
//! Places are tracked as a [`Place`] chain on the stack and become JSON Pointers only
//! when something is reported, and the pointer → span map of the document is built
//! only when there is something to locate: a clean package costs a parse and a walk.

use std::collections::HashMap;
use std::io;

use curupira_diagnostics::json::{self, Deferred, Place, type_name};
use curupira_diagnostics::names::{self, ValueProblem};
use curupira_diagnostics::version::parse_version;
use curupira_diagnostics::{Anchor, Diagnostic, JsonPointer, Report, Severity, all_of};
use serde_json::{Map, Value};

use crate::files::{FileKind, MAX_JSON_BYTES, PackageFiles};
use crate::model::{
    ActivationEvent, ApprovalMode, Capability, ExecutionMode, HooksFile, Host, PackageJson,
    SCHEMA_VERSION, SettingType, Slot, TokenRole, Variant, keys,
};
use crate::settings::expectation;
use crate::{Checked, Options, PACKAGE_JSON, RelativePath, codes, schema};

/// Longest package name npm publishes.
const MAX_NAME_CHARS: usize = 214;

// ----- entry points -----------------------------------------------------------------

/// Checks a `package.json` that is already a JSON value (a published manifest inside
/// an npm package document): the structure rules, with pointers but no positions.
pub(crate) fn check_value(value: serde_json::Value, file: &str, options: &Options) -> Checked {
    let mut checker = Checker {
        out: Deferred::new(),
        options,
        paths: None,
    };
    checker.package(&value);
    let mut report = Report::new();
    report.add_file(file);
    report.extend(checker.out.finish_without_source(file));
    let package = if report.has_errors() {
        None
    } else {
        PackageJson::from_checked(value).ok()
    };
    Checked {
        package,
        hooks: None,
        report,
    }
}

/// Checks `package.json` text; with `files`, also the paths it names and the hooks file.
pub(crate) fn check_text(
    text: &str,
    file: &str,
    options: &Options,
    files: Option<&dyn PackageFiles>,
) -> Checked {
    let mut report = Report::new();
    // The text is kept for quoting only when there is something to quote.
    report.add_file(file);
    let document = match json::parse(text, file, codes::SYNTAX, codes::DUPLICATE_KEY) {
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
    let mut checker = Checker {
        out: Deferred::new(),
        options,
        paths: files.map(|_| Vec::new()),
    };
    checker.package(&document.value);
    let Checker { mut out, paths, .. } = checker;
    let paths = paths.unwrap_or_default();
    let mut hooks = None;
    let mut hooks_report = None;
    if let Some(files) = files {
        // Each path's kind is asked once; the hooks file is read only when it is a file.
        let mut hooks_path = None;
        for (kind, path, pointer) in &paths {
            if check_file(files, &mut out, *kind, path, pointer) && *kind == PathKind::Hooks {
                hooks_path = Some(path);
            }
        }
        if let Some(path) = hooks_path {
            match read_hooks(files, path) {
                Ok((file_hooks, file_report)) => {
                    hooks = file_hooks;
                    hooks_report = Some(file_report);
                }
                Err(error) => out.push_at(
                    Severity::Error,
                    codes::MISSING_FILE,
                    pointer_of(&paths, PathKind::Hooks),
                    Anchor::Value,
                    format!("the hooks file `{path}` could not be read: {error}"),
                ),
            }
        }
    }
    let diagnostics = out.finish(file, text, &document);
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
        match PackageJson::from_checked(document.value) {
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
        FileKind::Escapes { target } => Some((
            codes::PATH_ESCAPES,
            format!("`package.json` is a symlink to `{target}`, outside the package"),
        )),
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
    Ok(match crate::decode(&bytes, &file) {
        Ok(text) => check_text(text, &file, options, Some(files)),
        Err(report) => Checked {
            package: None,
            hooks: None,
            report,
        },
    })
}

/// Reads and checks the hooks file: its own diagnostics, under its own name.
fn read_hooks(
    files: &dyn PackageFiles,
    path: &RelativePath,
) -> io::Result<(Option<HooksFile>, Report)> {
    let bytes = files.read(path, MAX_JSON_BYTES)?;
    let file = files.display_name(path);
    let text = match crate::decode(&bytes, &file) {
        Ok(text) => text,
        Err(report) => return Ok((None, report)),
    };
    let mut report = Report::new();
    report.add_file(file.clone());
    let document = match json::parse(text, &file, codes::SYNTAX, codes::DUPLICATE_KEY) {
        Ok(document) => document,
        Err(diagnostic) => {
            report.add_source(file.clone(), text);
            report.push(diagnostic);
            return Ok((None, report));
        }
    };
    let options = Options::default();
    let mut checker = Checker {
        out: Deferred::new(),
        options: &options,
        paths: None,
    };
    checker.hooks_file(&document.value);
    let diagnostics = checker.out.finish(&file, text, &document);
    if !diagnostics.is_empty() {
        report.add_source(file.clone(), text);
    }
    report.extend(diagnostics);
    let hooks = if report.has_errors() {
        None
    } else {
        HooksFile::from_checked(document.value).ok()
    };
    Ok((hooks, report))
}

/// Checks that the file a manifest path names is a regular file inside the package;
/// true when it is.
fn check_file(
    files: &dyn PackageFiles,
    out: &mut Deferred,
    kind: PathKind,
    path: &RelativePath,
    pointer: &JsonPointer,
) -> bool {
    let what = kind.what();
    let (code, message) = match files.kind(path) {
        FileKind::File => return true,
        FileKind::Missing => (
            codes::MISSING_FILE,
            format!("{what} `{path}` does not exist in the package"),
        ),
        FileKind::Folder => (
            codes::NOT_A_FILE,
            format!("{what} `{path}` is a folder; it must name a file"),
        ),
        FileKind::Special => (
            codes::NOT_A_FILE,
            format!("{what} `{path}` is not a regular file"),
        ),
        FileKind::Escapes { target } => (
            codes::PATH_ESCAPES,
            format!(
                "{what} `{path}` resolves through a symlink to `{target}`, outside the package"
            ),
        ),
    };
    out.push_at(
        Severity::Error,
        code,
        pointer.clone(),
        Anchor::Value,
        message,
    );
    false
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
}

struct Checker<'o> {
    out: Deferred,
    options: &'o Options,
    /// The package paths found valid, to check against the files when they are at hand
    /// (`None` when they are not: then nothing is recorded).
    paths: Option<Vec<(PathKind, RelativePath, JsonPointer)>>,
}

/// What the walk of `spiritExtension` learnt, for the rules that span members.
#[derive(Default)]
struct Facts {
    /// Capabilities and where each is listed (first occurrence).
    capabilities: Vec<(Capability, usize)>,
    activation_events: usize,
    tools: Option<usize>,
    desktop: bool,
    cli: bool,
    secret_slots: usize,
    /// A member the pairing rules read (`requestedCapabilities`, `contributes`, its
    /// `tools`, `secretSlots`) had the wrong type: pairing them would only repeat that.
    unsure: bool,
}

impl Facts {
    fn capability(&self, capability: Capability) -> Option<usize> {
        self.capabilities
            .iter()
            .find(|(c, _)| *c == capability)
            .map(|(_, i)| *i)
    }
}

impl Checker<'_> {
    // ----- types ------------------------------------------------------------------

    fn wrong_type(&mut self, value: &Value, at: &Place<'_>, expected: &str) {
        let message = format!(
            "{} must be {expected}, but it is {}",
            at.quoted(),
            type_name(value)
        );
        self.out.error(codes::INVALID_TYPE, at, message);
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

    /// A string that must have content (not only whitespace).
    fn text<'v>(&mut self, value: &'v Value, at: &Place<'_>) -> Option<&'v str> {
        let text = self.string(value, at)?;
        if text.trim().is_empty() {
            self.out.error(
                codes::EMPTY_VALUE,
                at,
                format!("{} is empty; it must say something", at.quoted()),
            );
            return None;
        }
        Some(text)
    }

    fn boolean(&mut self, value: &Value, at: &Place<'_>) -> Option<bool> {
        match value {
            Value::Bool(b) => Some(*b),
            _ => {
                self.wrong_type(value, at, "`true` or `false`");
                None
            }
        }
    }

    fn optional_string(&mut self, object: &Map<String, Value>, at: &Place<'_>, key: &str) {
        if let Some(value) = object.get(key) {
            self.string(value, &at.key(key));
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
            Some(value) => Some(value),
            None => {
                let message = match at {
                    Place::Root => format!("required member `{key}` is missing; {hint}"),
                    _ => format!("{} has no `{key}`; {hint}", at.quoted()),
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

    /// An array of closed-set values; `unique` repeats are errors, others warnings.
    fn closed_list<T: Copy + PartialEq>(
        &mut self,
        value: &Value,
        at: &Place<'_>,
        of: &str,
        unique: bool,
        from_name: fn(&str) -> Option<T>,
        names: impl Iterator<Item = &'static str> + Clone,
    ) -> Option<Vec<(T, usize)>> {
        let items = self.array(value, at, of)?;
        let mut found: Vec<(T, usize)> = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let here = at.index(index);
            let Some(value) = self.closed(item, &here, from_name, names.clone()) else {
                continue;
            };
            if let Some((_, first)) = found.iter().find(|(v, _)| *v == value) {
                let text = item.as_str().unwrap_or_default();
                if unique {
                    let message = format!(
                        "`{text}` is listed twice in {} (first at index {first}); list it once",
                        at.quoted()
                    );
                    self.out.error(codes::DUPLICATE_VALUE, &here, message);
                } else {
                    let message = format!(
                        "`{text}` is listed again in {} (first at index {first}); the repetition has no effect",
                        at.quoted()
                    );
                    self.out.warning(codes::REPEATED_VALUE, &here, message);
                }
                continue;
            }
            found.push((value, index));
        }
        Some(found)
    }

    fn problems(
        &mut self,
        code: &'static str,
        at: &Place<'_>,
        value: &str,
        what: &str,
        problems: Vec<ValueProblem>,
    ) -> bool {
        let any = !problems.is_empty();
        for problem in problems {
            let message = format!("{what} `{}` {}", value.escape_debug(), problem.text);
            self.out
                .error_in_string(code, at, value, problem.range, message);
        }
        any
    }

    /// A relative path inside the package; remembered for the file checks.
    fn package_path(&mut self, value: &Value, at: &Place<'_>, kind: PathKind) {
        let Some(text) = self.string(value, at) else {
            return;
        };
        match RelativePath::parse(text) {
            Ok(path) => {
                if let Some(paths) = &mut self.paths {
                    paths.push((kind, path, at.pointer()));
                }
            }
            Err(problem) => {
                let message = format!(
                    "{} is `{}`, which is not a relative path inside the package: {problem}",
                    at.quoted(),
                    text.escape_debug()
                );
                self.out.error(codes::INVALID_PATH, at, message);
            }
        }
    }

    // ----- package.json -----------------------------------------------------------

    fn package(&mut self, value: &Value) {
        let root = Place::Root;
        let Some(object) = self.object(value, &root) else {
            return;
        };
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
            "add the SemVer version, e.g. `\"version\": \"1.0.0\"`",
        ) {
            let at = root.key("version");
            if let Some(text) = self.string(value, &at)
                && let Err(error) = parse_version(text)
            {
                self.out
                    .error(codes::INVALID_VERSION, &at, format!("`version` {error}"));
            }
        }
        self.optional_string(object, &root, "description");
        self.optional_string(object, &root, "homepage");
        if let Some(author) = object.get("author") {
            self.author(author, &root.key("author"));
        }
        if let Some(repository) = object.get("repository") {
            self.repository(repository, &root.key("repository"));
        }
        if let Some(keywords) = object.get("keywords") {
            let at = root.key("keywords");
            if let Some(items) = self.array(keywords, &at, "strings") {
                for (index, item) in items.iter().enumerate() {
                    self.string(item, &at.index(index));
                }
            }
        }
        let main = object.get("main");
        if let Some(main) = main {
            self.package_path(main, &root.key("main"), PathKind::Main);
        }
        let at = root.key("spiritExtension");
        let Some(spirit) = object.get("spiritExtension") else {
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
        self.pairing(&facts, main.is_some(), &at);
    }

    fn name(&mut self, value: &Value, at: &Place<'_>) {
        let Some(name) = self.string(value, at) else {
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
        let length = name.chars().count();
        if length > MAX_NAME_CHARS {
            problems.push(ValueProblem {
                text: format!("is {length} characters long; npm's limit is {MAX_NAME_CHARS}"),
                range: None,
            });
        }
        self.problems(codes::INVALID_NAME, at, name, "`name`", problems);
    }

    fn author(&mut self, value: &Value, at: &Place<'_>) {
        match value {
            Value::String(_) => {}
            Value::Object(object) => {
                if let Some(name) = self.required(
                    object,
                    at,
                    "name",
                    "an author object is `{ \"name\": \"…\" }`",
                ) {
                    self.string(name, &at.key("name"));
                }
            }
            other => self.wrong_type(other, at, "a string or an object with a `name`"),
        }
    }

    fn repository(&mut self, value: &Value, at: &Place<'_>) {
        match value {
            Value::String(_) => {}
            Value::Object(object) => {
                for key in ["type", "url"] {
                    if let Some(v) = self.required(
                        object,
                        at,
                        key,
                        "a repository object is `{ \"type\": \"git\", \"url\": \"…\" }`",
                    ) {
                        self.string(v, &at.key(key));
                    }
                }
            }
            other => self.wrong_type(other, at, "a string or an object with `type` and `url`"),
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
                match value.as_u64() {
                    Some(SCHEMA_VERSION) => {}
                    Some(other) => self.out.error(
                        codes::UNSUPPORTED_SCHEMA_VERSION,
                        &here,
                        format!("`spiritExtension.schemaVersion` is {other}; the only schema version is 1"),
                    ),
                    None if value.is_number() => self.out.error(
                        codes::UNSUPPORTED_SCHEMA_VERSION,
                        &here,
                        format!("`spiritExtension.schemaVersion` is {value}; the only schema version is the integer 1"),
                    ),
                    None => self.wrong_type(value, &here, "the integer 1"),
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
        if let Some(icon) = object.get("icon") {
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

        if let Some(value) = object.get("activationEvents") {
            let here = at.key("activationEvents");
            if let Some(found) = self.closed_list(
                value,
                &here,
                "activation events",
                false,
                ActivationEvent::from_name,
                ActivationEvent::names(),
            ) {
                facts.activation_events = found.len();
            }
        }

        match object.get("requestedCapabilities") {
            Some(value) => {
                let here = at.key("requestedCapabilities");
                match self.closed_list(
                    value,
                    &here,
                    "capabilities",
                    false,
                    Capability::from_name,
                    Capability::names(),
                ) {
                    Some(found) => facts.capabilities = found,
                    None => facts.unsure = true,
                }
            }
            None if strict => self.registry_required(
                at,
                "requestedCapabilities",
                "the capabilities, `[]` when none",
            ),
            None => {}
        }

        if let Some(value) = object.get("contributes") {
            let here = at.key("contributes");
            match self.object(value, &here) {
                Some(contributes) => self.contributes(contributes, &here, &mut facts),
                None => facts.unsure = true,
            }
        }
        if let Some(value) = object.get("settingsSchema") {
            self.settings_schema(value, &at.key("settingsSchema"));
        }
        if let Some(value) = object.get("secretSlots") {
            match self.secret_slots(value, &at.key("secretSlots")) {
                Some(count) => facts.secret_slots = count,
                None => facts.unsure = true,
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
        let Some(found) =
            self.closed_list(value, at, "hosts", true, Host::from_name, Host::names())
        else {
            return;
        };
        if value.as_array().is_some_and(|items| items.is_empty()) {
            self.out.error(
                codes::EMPTY_VALUE,
                at,
                "`spiritExtension.supportedHosts` is empty; list `\"cli\"`, `\"desktop\"` or both"
                    .to_owned(),
            );
            return;
        }
        if let Some(host) = self.options.host {
            let all_known = value
                .as_array()
                .is_some_and(|items| items.len() == found.len());
            if all_known && !found.iter().any(|(h, _)| *h == host) {
                let listed: Vec<&str> = found.iter().map(|(h, _)| h.as_str()).collect();
                let message = format!(
                    "the package supports {} only, not `{host}`, the host it is checked for",
                    all_of(&listed)
                );
                self.out.error(codes::UNSUPPORTED_HOST, at, message);
            }
        }
    }

    fn contributes(&mut self, object: &Map<String, Value>, at: &Place<'_>, facts: &mut Facts) {
        self.unknown_keys(object, at, &keys::CONTRIBUTES);
        if let Some(value) = object.get("tools") {
            let here = at.key("tools");
            if let Some(items) = self.array(value, &here, "tool objects") {
                facts.tools = Some(items.len());
            } else {
                facts.unsure = true;
            }
            if let Some(items) = value.as_array() {
                let mut names: HashMap<&str, usize> = HashMap::new();
                for (index, item) in items.iter().enumerate() {
                    let tool = here.index(index);
                    if let Some(object) = self.object(item, &tool) {
                        self.tool(object, &tool, index, &mut names);
                    }
                }
            }
        }
        if let Some(value) = object.get("desktop") {
            facts.desktop = true;
            let here = at.key("desktop");
            if let Some(desktop) = self.object(value, &here) {
                self.desktop(desktop, &here);
            }
        }
        if let Some(value) = object.get("cli") {
            facts.cli = true;
            let here = at.key("cli");
            if let Some(cli) = self.object(value, &here) {
                self.cli(cli, &here);
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
            if let Some(name) = self.string(value, &here) {
                let problems = names::identifier(name, "a tool name", "lookup_item");
                if !self.problems(
                    codes::INVALID_IDENTIFIER,
                    &here,
                    name,
                    "tool name",
                    problems,
                ) {
                    if let Some(first) = names.get(name) {
                        let message = format!(
                            "tool name `{name}` is used twice (first by `contributes.tools[{first}]`); tool names must be unique"
                        );
                        self.out.error(codes::DUPLICATE_VALUE, &here, message);
                    } else {
                        names.insert(name, index);
                    }
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
        if let Some(value) = object.get("outputSchema") {
            self.json_schema(value, &at.key("outputSchema"));
        }
        if let Some(value) = object.get("approvalMode") {
            self.closed(
                value,
                &at.key("approvalMode"),
                ApprovalMode::from_name,
                ApprovalMode::names(),
            );
        }
        if let Some(value) = object.get("executionMode") {
            self.closed(
                value,
                &at.key("executionMode"),
                ExecutionMode::from_name,
                ExecutionMode::names(),
            );
        }
    }

    /// An object that is a valid JSON Schema; true when it is.
    fn json_schema(&mut self, value: &Value, at: &Place<'_>) -> bool {
        if !value.is_object() {
            self.wrong_type(value, at, "a JSON Schema object");
            return false;
        }
        let problems = schema::check(value);
        let valid = problems.is_empty();
        for problem in problems {
            let pointer = format!("{}{}", at.pointer(), problem.pointer);
            let path = JsonPointer::parse(&pointer).unwrap_or_else(|_| at.pointer());
            let message = format!(
                "{} is not a valid JSON Schema: {}",
                at.quoted(),
                problem.message
            );
            self.out.push_at(
                Severity::Error,
                codes::INVALID_SCHEMA,
                path,
                Anchor::Value,
                message,
            );
        }
        valid
    }

    fn desktop(&mut self, object: &Map<String, Value>, at: &Place<'_>) {
        self.unknown_keys(object, at, &keys::DESKTOP);
        if let Some(value) = object.get("css") {
            let here = at.key("css");
            if let Some(items) = self.array(value, &here, "`{ \"path\" }` objects") {
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
                    self.optional_string(css, &entry, "media");
                }
            }
        }
        if let Some(value) = object.get("settingsPage") {
            let here = at.key("settingsPage");
            match value {
                Value::Bool(true) => {}
                Value::Object(page) => {
                    self.unknown_keys(page, &here, &keys::SETTINGS_PAGE);
                    self.optional_string(page, &here, "title");
                }
                other => self.wrong_type(
                    other,
                    &here,
                    "`true`, `{}` or `{ \"title\": … }` (leave it out for no page)",
                ),
            }
        }
    }

    fn cli(&mut self, object: &Map<String, Value>, at: &Place<'_>) {
        self.unknown_keys(object, at, &keys::CLI);
        let Some(value) = object.get("hooks") else {
            return;
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
            other => self.wrong_type(other, &here, "an object `{ \"path\": \"cli-hooks.json\" }`"),
        }
    }

    fn settings_schema(&mut self, value: &Value, at: &Place<'_>) {
        let Some(items) = self.array(value, at, "setting objects") else {
            return;
        };
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
                if let Some(key) = self.string(value, &key_at) {
                    let problems = names::identifier(key, "a setting key", "region");
                    if !self.problems(
                        codes::INVALID_IDENTIFIER,
                        &key_at,
                        key,
                        "setting key",
                        problems,
                    ) {
                        if let Some(first) = keys.get(key) {
                            let message = format!(
                                "setting key `{key}` is used twice (first by `settingsSchema[{first}]`); keys must be unique"
                            );
                            self.out.error(codes::DUPLICATE_VALUE, &key_at, message);
                        } else {
                            keys.insert(key, index);
                        }
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
            self.optional_string(object, &here, "description");
            self.optional_string(object, &here, "placeholder");
            if let Some(value) = object.get("required") {
                self.boolean(value, &here.key("required"));
            }
            let options = match (kind, object.get("options")) {
                (Some(SettingType::Select), Some(value)) => {
                    self.select_options(value, &here.key("options"))
                }
                (Some(SettingType::Select), None) => {
                    self.required(object, &here, "options", "a `select` needs its choices, e.g. `[{ \"value\": \"us\", \"label\": \"US\" }]`");
                    None
                }
                (Some(other), Some(_)) => {
                    let message = format!(
                        "`options` has no effect on a setting of type `{other}`; only `select` settings have options"
                    );
                    self.out.push(
                        Severity::Warning,
                        codes::UNUSED_KEY,
                        &here.key("options"),
                        Anchor::Key,
                        message,
                    );
                    None
                }
                (None, _) => None,
                (Some(_), None) => None,
            };
            if let (Some(kind), Some(default)) = (kind, object.get("defaultValue")) {
                self.default_value(kind, default, options.as_deref(), &here.key("defaultValue"));
            }
        }
    }

    /// The values of a select's options, when they could all be read.
    fn select_options(&mut self, value: &Value, at: &Place<'_>) -> Option<Vec<String>> {
        let items = self.array(value, at, "`{ \"value\", \"label\" }` objects")?;
        if items.is_empty() {
            self.out.error(
                codes::EMPTY_VALUE,
                at,
                format!(
                    "{} is empty; a `select` needs at least one option",
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
                .and_then(|v| self.string(v, &here.key("value")))
            {
                Some(text) => {
                    if let Some(first) = values.iter().position(|v| v == text) {
                        let message = format!(
                            "option value `{}` is used twice (first by option {first}); values must be unique",
                            text.escape_debug()
                        );
                        self.out
                            .error(codes::DUPLICATE_VALUE, &here.key("value"), message);
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
            self.optional_string(option, &here, "description");
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
            (_, Value::Null) => true,
            (SettingType::String, Value::String(_))
            | (SettingType::Boolean, Value::Bool(_))
            | (SettingType::Number, Value::Number(_)) => true,
            (SettingType::Select, Value::String(text)) => {
                match options {
                    Some(options) if !options.iter().any(|o| o == text) => {
                        let message = format!(
                            "`defaultValue` `{}` is not one of the options' values ({})",
                            text.escape_debug(),
                            {
                                let mut shown: Vec<String> = Vec::new();
                                for option in options {
                                    let quoted = format!("`{}`", option.escape_debug());
                                    if !shown.contains(&quoted) {
                                        shown.push(quoted);
                                    }
                                }
                                shown.join(", ")
                            }
                        );
                        self.out.error(codes::INVALID_DEFAULT, at, message);
                    }
                    _ => {}
                }
                true
            }
            _ => false,
        };
        if !fits {
            let expected = expectation(kind);
            let message = format!(
                "`defaultValue` is {} but the setting's type is `{kind}`; it must be {expected}",
                type_name(value)
            );
            self.out.error(codes::INVALID_DEFAULT, at, message);
        }
    }

    /// Checks `secretSlots`; returns how many there are, if it is an array.
    fn secret_slots(&mut self, value: &Value, at: &Place<'_>) -> Option<usize> {
        let items = self.array(value, at, "secret slot objects")?;
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
                if let Some(key) = self.text(value, &key_at) {
                    if let Some(first) = keys.get(key) {
                        let message = format!(
                            "secret key `{}` is used twice (first by `secretSlots[{first}]`); keys must be unique",
                            key.escape_debug()
                        );
                        self.out.error(codes::DUPLICATE_VALUE, &key_at, message);
                    } else {
                        keys.insert(key, index);
                    }
                }
            }
            if let Some(value) = self.required(object, &here, "title", "add the label the UI shows")
            {
                self.text(value, &here.key("title"));
            }
            self.optional_string(object, &here, "description");
            if let Some(value) = object.get("required") {
                self.boolean(value, &here.key("required"));
            }
        }
        Some(items.len())
    }

    // ----- rules across members ---------------------------------------------------

    fn pairing(&mut self, facts: &Facts, has_main: bool, at: &Place<'_>) {
        let caps = at.key("requestedCapabilities");
        let contributes = at.key("contributes");
        let defs = facts.capability(Capability::ToolDefinitions);
        let exec = facts.capability(Capability::ToolExecution);
        let has_tools = facts.tools.is_some_and(|n| n > 0);
        if facts.unsure {
            self.main_required(facts, has_main, exec);
            return;
        }

        if has_tools && (defs.is_none() || exec.is_none()) {
            let missing: Vec<&str> = [(defs, "tool-definitions"), (exec, "tool-execution")]
                .iter()
                .filter(|(found, _)| found.is_none())
                .map(|(_, name)| *name)
                .collect();
            let message = format!(
                "`contributes.tools` needs the capabilities `tool-definitions` and `tool-execution`; add {} to `requestedCapabilities`",
                all_of(&missing)
            );
            self.out.error(
                codes::CAPABILITY_MISMATCH,
                &contributes.key("tools"),
                message,
            );
        } else {
            match (defs, exec) {
                (Some(index), None) | (None, Some(index)) => {
                    let (has, lacks) = if defs.is_some() {
                        ("tool-definitions", "tool-execution")
                    } else {
                        ("tool-execution", "tool-definitions")
                    };
                    let message = format!(
                        "`{has}` is requested without `{lacks}`; tools need both (add `{lacks}`)"
                    );
                    self.out
                        .error(codes::CAPABILITY_MISMATCH, &caps.index(index), message);
                }
                (Some(index), Some(_)) if !has_tools => {
                    let message = "`tool-definitions` and `tool-execution` are requested but `contributes.tools` lists no tool".to_owned();
                    self.out
                        .warning(codes::UNUSED_CAPABILITY, &caps.index(index), message);
                }
                _ => {}
            }
        }

        for (capability, present, what) in [
            (Capability::DesktopUi, facts.desktop, "desktop"),
            (Capability::CliUi, facts.cli, "cli"),
        ] {
            match (facts.capability(capability), present) {
                (Some(index), false) => {
                    let message = format!(
                        "`{capability}` is requested but there is no `contributes.{what}`; add it or drop the capability"
                    );
                    self.out
                        .error(codes::CAPABILITY_MISMATCH, &caps.index(index), message);
                }
                (None, true) => {
                    let message = format!(
                        "`contributes.{what}` needs the capability `{capability}` in `requestedCapabilities`"
                    );
                    self.out
                        .error(codes::CAPABILITY_MISMATCH, &contributes.key(what), message);
                }
                _ => {}
            }
        }

        match (
            facts.capability(Capability::SecretStorage),
            facts.secret_slots > 0,
        ) {
            (None, true) => {
                let message = "`secretSlots` needs the capability `secret-storage` in `requestedCapabilities`".to_owned();
                self.out
                    .error(codes::CAPABILITY_MISMATCH, &at.key("secretSlots"), message);
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
                    "`main` is missing, but the extension {}: Spirit needs a module to `activate`; add e.g. `\"main\": \"dist/index.js\"`",
                    reasons.join(" and ")
                );
                self.out
                    .error(codes::MAIN_REQUIRED, &Place::Root.key("main"), message);
            }
        }
    }

    // ----- the hooks file ---------------------------------------------------------

    fn hooks_file(&mut self, value: &Value) {
        let root = Place::Root;
        let Some(object) = self.object(value, &root) else {
            return;
        };
        self.unknown_keys(object, &root, &keys::HOOKS_FILE);
        let Some(hooks) =
            self.required(object, &root, "hooks", "the file is `{ \"hooks\": [ … ] }`")
        else {
            return;
        };
        let at = root.key("hooks");
        let Some(items) = self.array(hooks, &at, "hook objects") else {
            return;
        };
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
            if let Some(variant) = hook.get("variant") {
                self.closed(
                    variant,
                    &here.key("variant"),
                    Variant::from_name,
                    Variant::names(),
                );
            }
            if let Some(tokens) = hook.get("tokens") {
                let tokens_at = here.key("tokens");
                if let Some(tokens) = self.object(tokens, &tokens_at) {
                    self.unknown_keys(tokens, &tokens_at, &keys::TOKENS);
                    for key in keys::TOKENS {
                        if let Some(role) = tokens.get(key) {
                            self.closed(
                                role,
                                &tokens_at.key(key),
                                TokenRole::from_name,
                                TokenRole::names(),
                            );
                        }
                    }
                }
            }
            self.optional_string(hook, &here, "prefix");
            self.optional_string(hook, &here, "suffix");
        }
    }
}
