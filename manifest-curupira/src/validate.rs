//! The validator: one walk over the spanned TOML document that reports every problem.

use std::collections::HashMap;

use curupira_diagnostics::toml::{TomlDocument, dotted, type_name, unknown_keys};
use curupira_diagnostics::version::{VersionError, parse_version};
use curupira_diagnostics::{Anchor, Collector, JsonPointer, Severity, did_you_mean};
use curupira_protocol::PROTOCOL_VERSION;
use semver::Version;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::codes;
use crate::model::{
    Capabilities, ExtensionName, Kind, Launch, MANIFEST_VERSION, Manifest, NpmPackageName, Package,
    PackageSource, Program, ProtocolVersion, PythonPackage, Runtime, TriggerType, TriggerTypes,
};
use crate::rules::{self, Problem};

type Value<'i> = Spanned<DeValue<'i>>;

const ROOT_KEYS: [&str; 11] = [
    "manifest_version",
    "name",
    "version",
    "protocol_version",
    "runtime",
    "kind",
    "trigger_types",
    "launch",
    "package",
    "agent_providers",
    "capabilities",
];

const UVX_KEYS: [&str; 5] = ["type", "package", "version", "executable", "args"];
const NPX_KEYS: [&str; 5] = ["type", "package", "version", "bin", "args"];
const EXECUTABLE_KEYS: [&str; 3] = ["type", "program", "args"];
/// Every key of some launch type, for a `[launch]` whose type is unknown.
const LAUNCH_KEYS: [&str; 7] = [
    "type",
    "package",
    "version",
    "executable",
    "bin",
    "program",
    "args",
];
const PACKAGE_KEYS: [&str; 3] = ["source", "name", "version"];
const CAPABILITIES_KEYS: [&str; 1] = ["permissions"];

/// The reference host's reason for refusing `kind = "agent"` and `agent_providers`.
const AGENT_REASON: &str =
    "coding-agent extensions are no longer supported; agents are built into the Rust core";

/// The launch types a `[launch]` key belongs to, for the unused-key warning.
fn launch_key_owner(key: &str) -> Option<&'static str> {
    match key {
        "package" | "version" => Some("`type = \"uvx\"` and `type = \"npx\"`"),
        "executable" => Some("`type = \"uvx\"`"),
        "bin" => Some("`type = \"npx\"`"),
        "program" => Some("`type = \"executable\"`"),
        _ => None,
    }
}

/// What to write when the required key at `pointer` is missing.
fn missing_hint(pointer: &JsonPointer) -> &'static str {
    match pointer.as_str() {
        "/manifest_version" => "add `manifest_version = 1`",
        "/name" => "add the extension's name, e.g. `name = \"acme-curupira-ext\"`",
        "/version" => "add the extension's SemVer version, e.g. `version = \"1.0.0\"`",
        "/protocol_version" => "add `protocol_version = 2`",
        "/runtime" => "add what it runs on, e.g. `runtime = \"node\"`",
        "/kind" => "add `kind = \"trigger\"`",
        "/trigger_types" => {
            "list the triggers it offers, e.g. `trigger_types = [\"github-issue\"]`"
        }
        "/launch" => {
            "add a `[launch]` table with `type = \"uvx\"`, `type = \"npx\"` or `type = \"executable\"`"
        }
        "/launch/type" => "add `type = \"uvx\"`, `type = \"npx\"` or `type = \"executable\"`",
        "/launch/executable" => {
            "a uvx launch needs the executable its package installs, e.g. `executable = \"curupira-plugins\"`"
        }
        "/package/source" => {
            "say which registry it is installed from: `source = \"pip\"` or `source = \"npm\"`"
        }
        "/package/name" => {
            "give the package's name in that registry, e.g. `name = \"curupira-plugins\"`"
        }
        _ => "it is required",
    }
}

/// Checks the document and returns the manifest when nothing is an error.
pub(crate) fn validate(document: &TomlDocument<'_>, out: &mut Collector<'_>) -> Option<Manifest> {
    Validator { out }.manifest(document.table.get_ref())
}

struct Validator<'o, 'a> {
    out: &'o mut Collector<'a>,
}

impl Validator<'_, '_> {
    fn manifest(&mut self, table: &DeTable<'_>) -> Option<Manifest> {
        let root = JsonPointer::root();
        self.unknown_keys(table, &root, &ROOT_KEYS);
        let manifest_version = self
            .required(table, &root, "manifest_version")
            .and_then(|(v, at)| self.manifest_version(v, &at));
        let name = self
            .required(table, &root, "name")
            .and_then(|(v, at)| self.name(v, &at));
        let version = self
            .required(table, &root, "version")
            .and_then(|(v, at)| self.version(v, &at));
        let protocol_version = self
            .required(table, &root, "protocol_version")
            .and_then(|(v, at)| self.protocol_version(v, &at));
        let runtime = self
            .required(table, &root, "runtime")
            .and_then(|(v, at)| self.runtime(v, &at));
        let kind = self
            .required(table, &root, "kind")
            .and_then(|(v, at)| self.kind(v, &at));
        let trigger_types = self
            .required(table, &root, "trigger_types")
            .and_then(|(v, at)| self.trigger_types(v, &at));
        let launch = self
            .required(table, &root, "launch")
            .and_then(|(v, at)| self.launch(v, &at, version.as_ref()));
        let package = match table.get("package") {
            Some(value) => self
                .package(value, &root.key("package"), version.as_ref())
                .map(Some),
            None => Some(None),
        };
        let agent_providers = match table.get("agent_providers") {
            Some(value) => self.agent_providers(value, &root.key("agent_providers")),
            None => Some(()),
        };
        let capabilities = match table.get("capabilities") {
            Some(value) => self.capabilities(value, &root.key("capabilities")),
            None => Some(Capabilities::default()),
        };
        manifest_version?;
        agent_providers?;
        if self.out.has_errors() {
            return None;
        }
        Some(Manifest {
            name: name?,
            version: version?,
            protocol_version: protocol_version?,
            runtime: runtime?,
            kind: kind?,
            trigger_types: trigger_types?,
            launch: launch?,
            package: package?,
            capabilities: capabilities?,
        })
    }

    // ----- keys ---------------------------------------------------------------

    fn required<'t, 'i>(
        &mut self,
        table: &'t DeTable<'i>,
        at: &JsonPointer,
        key: &str,
    ) -> Option<(&'t Value<'i>, JsonPointer)> {
        let pointer = at.key(key);
        match table.get(key) {
            Some(value) => Some((value, pointer)),
            None => {
                let hint = missing_hint(&pointer);
                self.missing(at, key, hint);
                None
            }
        }
    }

    /// Reports that the table at `at` has no `key`, with `hint` saying what to write.
    fn missing(&mut self, at: &JsonPointer, key: &str, hint: &str) {
        let message = if at.is_root() {
            format!("required key `{key}` is missing; {hint}")
        } else {
            format!("`[{}]` has no `{key}`; {hint}", dotted(at))
        };
        self.out.error(codes::MISSING_KEY, &at.key(key), message);
    }

    /// Warns about keys outside `known`.
    fn unknown_keys(&mut self, table: &DeTable<'_>, at: &JsonPointer, known: &[&str]) {
        let keys = table.iter().map(|(key, _)| key.get_ref().as_ref());
        unknown_keys(self.out, codes::UNKNOWN_KEY, keys, at, known);
    }

    /// Warns about the keys of a `[launch]` of one type: keys of another launch type
    /// are unused, `command` (of the refused `type = "command"`) points to its
    /// replacement, the rest are unknown.
    fn launch_keys(
        &mut self,
        table: &DeTable<'_>,
        at: &JsonPointer,
        known: &[&str],
        replacement: Option<&str>,
    ) {
        let mut rest = Vec::new();
        for (key, _) in table {
            let key = key.get_ref().as_ref();
            if known.contains(&key) {
                continue;
            }
            let pointer = at.key(key);
            if let Some(owner) = launch_key_owner(key) {
                let message = format!(
                    "`{}` is ignored here; it belongs to {owner}",
                    dotted(&pointer)
                );
                self.out.push(
                    Severity::Warning,
                    codes::UNUSED_KEY,
                    &pointer,
                    Anchor::Key,
                    message,
                );
            } else if let ("command", Some(replacement)) = (key, replacement) {
                let message = format!(
                    "unknown key `command` in `{}` is ignored: it belonged to the refused `type = \"command\"`, and here `{replacement}` names what runs",
                    dotted(at)
                );
                self.out.push(
                    Severity::Warning,
                    codes::UNKNOWN_KEY,
                    &pointer,
                    Anchor::Key,
                    message,
                );
            } else {
                rest.push(key);
            }
        }
        unknown_keys(self.out, codes::UNKNOWN_KEY, rest, at, known);
    }

    // ----- types --------------------------------------------------------------

    fn wrong_type(&mut self, value: &Value<'_>, at: &JsonPointer, expected: &str, hint: &str) {
        let message = format!(
            "`{}` must be {expected}, but it is {}{hint}",
            dotted(at),
            type_name(value.get_ref())
        );
        self.out.error(codes::INVALID_TYPE, at, message);
    }

    fn string<'v>(&mut self, value: &'v Value<'_>, at: &JsonPointer) -> Option<&'v str> {
        match value.get_ref() {
            DeValue::String(text) => Some(text.as_ref()),
            _ => {
                self.wrong_type(value, at, "a string", "");
                None
            }
        }
    }

    /// Reports `problems` of the string `value` at `at`, pointing at the characters.
    fn problems(&mut self, value: &str, at: &JsonPointer, problems: Vec<Problem>) -> bool {
        let clean = problems.iter().all(|p| p.severity != Severity::Error);
        for problem in problems {
            let message = format!(
                "`{}` `{}` {}",
                dotted(at),
                value.escape_debug(),
                problem.text
            );
            match problem.range {
                Some(range) => self.out.push_in_string(
                    problem.severity,
                    problem.code,
                    at,
                    value,
                    range,
                    message,
                ),
                None => self
                    .out
                    .push(problem.severity, problem.code, at, Anchor::Value, message),
            }
        }
        clean
    }

    // ----- top-level values ---------------------------------------------------

    fn manifest_version(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<()> {
        match value.get_ref() {
            DeValue::Integer(integer) => {
                let number = integer_text(integer);
                if integer_value(integer) == Some(MANIFEST_VERSION) {
                    Some(())
                } else {
                    self.out.error(
                        codes::UNSUPPORTED_MANIFEST_VERSION,
                        at,
                        format!("`manifest_version` is {number}, but only manifest format {MANIFEST_VERSION} exists; write `manifest_version = 1`"),
                    );
                    None
                }
            }
            _ => {
                self.wrong_type(value, at, "an integer", "; write `manifest_version = 1`");
                None
            }
        }
    }

    fn name(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<ExtensionName> {
        let text = self.string(value, at)?;
        if self.problems(text, at, rules::name_problems(text)) {
            ExtensionName::new(text).ok()
        } else {
            None
        }
    }

    fn version(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<Version> {
        let text = self.string(value, at)?;
        match parse_version(text) {
            Ok(version) => Some(version),
            Err(error) => {
                let message = match error {
                    VersionError::Empty => format!(
                        "`{}` is empty; write a SemVer version such as `1.0.0`",
                        dotted(at)
                    ),
                    other => format!("`{}` {other}", dotted(at)),
                };
                self.out.error(codes::INVALID_VERSION, at, message);
                None
            }
        }
    }

    fn protocol_version(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<ProtocolVersion> {
        const EXPECTED: &str = "write `protocol_version = 2`, or a string such as `\"2.1\"`";
        let (version, written) = match value.get_ref() {
            DeValue::Integer(integer) => {
                match integer_value(integer).and_then(|n| u64::try_from(n).ok()) {
                    Some(major) => (
                        ProtocolVersion::new(major, None),
                        format!("is {}", integer_text(integer)),
                    ),
                    None => {
                        self.out.error(
                            codes::INVALID_PROTOCOL_VERSION,
                            at,
                            format!(
                                "`protocol_version` {} is not a protocol version; {EXPECTED}",
                                integer_text(integer)
                            ),
                        );
                        return None;
                    }
                }
            }
            DeValue::String(text) => match text.parse::<ProtocolVersion>() {
                Ok(version) => (
                    version,
                    format!("`\"{text}\"` has major version {}", version.major()),
                ),
                Err(_) => {
                    self.out.error(
                        codes::INVALID_PROTOCOL_VERSION,
                        at,
                        format!(
                            "`protocol_version` `\"{}\"` is not a protocol version (`MAJOR` or `MAJOR.MINOR`); {EXPECTED}",
                            text.escape_debug()
                        ),
                    );
                    return None;
                }
            },
            DeValue::Float(float) => {
                self.out.error(
                    codes::INVALID_PROTOCOL_VERSION,
                    at,
                    format!(
                        "`protocol_version` {} is a float; write the integer `2`, or a string such as `\"{}\"`",
                        float.as_str(),
                        float.as_str()
                    ),
                );
                return None;
            }
            _ => {
                self.wrong_type(
                    value,
                    at,
                    "an integer or a string",
                    &format!("; {EXPECTED}"),
                );
                return None;
            }
        };
        if !version.is_compatible() {
            self.out.error(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                at,
                format!(
                    "`protocol_version` {written}, but this host speaks protocol {PROTOCOL_VERSION}"
                ),
            );
            return None;
        }
        Some(version)
    }

    fn runtime(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<Runtime> {
        let text = self.string(value, at)?;
        let runtime = Runtime::from_name(text);
        if !runtime.is_known() {
            let known = Runtime::KNOWN.join(", ");
            let message = match did_you_mean(text, Runtime::KNOWN) {
                Some(suggestion) => format!(
                    "`runtime` `{}` is not a runtime this host knows ({known}); did you mean `{suggestion}`?",
                    text.escape_debug()
                ),
                None => format!(
                    "`runtime` `{}` is not a runtime this host knows ({known}); it is kept as written",
                    text.escape_debug()
                ),
            };
            self.out.warning(codes::UNKNOWN_RUNTIME, at, message);
        }
        Some(runtime)
    }

    fn kind(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<Kind> {
        let text = self.string(value, at)?;
        if text == Kind::Trigger.as_str() {
            return Some(Kind::Trigger);
        }
        if text == "agent" {
            self.out.error(
                codes::AGENT_EXTENSION,
                at,
                format!("`kind = \"agent\"` is refused by the reference host: {AGENT_REASON}; an extension offers triggers (`kind = \"trigger\"`)"),
            );
            return None;
        }
        self.out.error(
            codes::INVALID_KIND,
            at,
            format!(
                "`kind` `{}` is not supported; write `kind = \"trigger\"`",
                text.escape_debug()
            ),
        );
        None
    }

    fn trigger_types(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<TriggerTypes> {
        let DeValue::Array(array) = value.get_ref() else {
            let hint = match value.get_ref() {
                DeValue::String(text) => {
                    format!("; write `trigger_types = [\"{}\"]`", text.escape_debug())
                }
                _ => "; write e.g. `trigger_types = [\"github-issue\"]`".to_owned(),
            };
            self.wrong_type(value, at, "an array of strings", &hint);
            return None;
        };
        if array.is_empty() {
            self.out.error(
                codes::EMPTY_TRIGGER_TYPES,
                at,
                "`trigger_types` is empty; an extension offers at least one trigger, e.g. `[\"github-issue\"]`",
            );
            return None;
        }
        let mut types = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut clean = true;
        for (index, element) in array.iter().enumerate() {
            let pointer = at.index(index);
            let Some(text) = self.string(element, &pointer) else {
                clean = false;
                continue;
            };
            if let Some(first) = seen.get(text) {
                self.out.error(
                    codes::DUPLICATE_TRIGGER_TYPE,
                    &pointer,
                    format!(
                        "`trigger_types[{index}]` `{}` is already listed at `trigger_types[{first}]`; list each trigger type once",
                        text.escape_debug()
                    ),
                );
                clean = false;
                continue;
            }
            seen.insert(text, index);
            if self.problems(text, &pointer, rules::trigger_type_problems(text)) {
                types.extend(TriggerType::new(text).ok());
            } else {
                clean = false;
            }
        }
        if clean {
            TriggerTypes::new(types).ok()
        } else {
            None
        }
    }

    // ----- [launch] -----------------------------------------------------------

    fn launch(
        &mut self,
        value: &Value<'_>,
        at: &JsonPointer,
        version: Option<&Version>,
    ) -> Option<Launch> {
        let DeValue::Table(table) = value.get_ref() else {
            self.wrong_type(
                value,
                at,
                "a table",
                "; write a `[launch]` table with `type = \"uvx\"`, `type = \"npx\"` or `type = \"executable\"`",
            );
            return None;
        };
        let launch_type = match table.get("type") {
            None => {
                self.required(table, at, "type");
                None
            }
            Some(value) => self.launch_type(table, value, &at.key("type")),
        };
        match launch_type {
            Some("uvx") => {
                self.launch_keys(table, at, &UVX_KEYS, Some("executable"));
                self.uvx(table, at, version)
            }
            Some("npx") => {
                self.launch_keys(table, at, &NPX_KEYS, None);
                self.npx(table, at, version)
            }
            Some("executable") => {
                self.launch_keys(table, at, &EXECUTABLE_KEYS, Some("program"));
                self.executable(table, at)
            }
            refused => {
                // Without a usable type, still check whatever keys are there on
                // their own (`command` is part of the refused type's error).
                let mut known = LAUNCH_KEYS.to_vec();
                if refused == Some("command") {
                    known.push("command");
                }
                self.unknown_keys(table, at, &known);
                for (key, value) in table {
                    let pointer = at.key(key.get_ref());
                    match key.get_ref().as_ref() {
                        "package" => {
                            self.string(value, &pointer);
                        }
                        "version" => {
                            self.version(value, &pointer);
                        }
                        "executable" | "bin" | "program" => {
                            self.program(value, &pointer);
                        }
                        "args" => {
                            self.args(value, &pointer);
                        }
                        _ => {}
                    }
                }
                None
            }
        }
    }

    /// `launch.type`: one of [`Launch::TYPES`] or `"command"` (already reported).
    fn launch_type<'t>(
        &mut self,
        table: &DeTable<'_>,
        value: &'t Value<'_>,
        at: &JsonPointer,
    ) -> Option<&'t str> {
        let text = self.string(value, at)?;
        if Launch::TYPES.contains(&text) {
            return Some(text);
        }
        if text == "command" {
            let program = match table.get("command").map(Spanned::get_ref) {
                Some(DeValue::String(command)) if !command.trim().is_empty() => format!(
                    "`program = \"{}\"` in place of `command`",
                    command.escape_debug()
                ),
                _ => "`program = …`, the program to run".to_owned(),
            };
            self.out.error(
                codes::COMMAND_LAUNCH,
                at,
                format!(
                    "`launch.type = \"command\"` is refused by the reference host (unknown variant `command`, expected one of `uvx`, `npx`, `executable`); write `type = \"executable\"` with {program}"
                ),
            );
            return Some("command");
        }
        let suggestion = match did_you_mean(text, Launch::TYPES) {
            Some(suggestion) => format!("did you mean `{suggestion}`?"),
            None => {
                "write `type = \"uvx\"`, `type = \"npx\"` or `type = \"executable\"`".to_owned()
            }
        };
        self.out.error(
            codes::INVALID_LAUNCH_TYPE,
            at,
            format!(
                "`launch.type` `{}` is not a launch type (`uvx`, `npx` or `executable`); {suggestion}",
                text.escape_debug()
            ),
        );
        None
    }

    fn uvx(
        &mut self,
        table: &DeTable<'_>,
        at: &JsonPointer,
        version: Option<&Version>,
    ) -> Option<Launch> {
        let package = match table.get("package") {
            Some(value) => self.python_package(value, &at.key("package")),
            None => {
                self.missing(
                    at,
                    "package",
                    "a uvx launch needs the Python package to install, e.g. `package = \"curupira-plugins\"`",
                );
                None
            }
        };
        let executable = self
            .required(table, at, "executable")
            .and_then(|(v, p)| self.program(v, &p));
        let launch_version = self.launch_version(table, at, version);
        let args = self.optional_args(table, at);
        Some(Launch::Uvx {
            package: package?,
            executable: executable?,
            version: launch_version?,
            args: args?,
        })
    }

    fn npx(
        &mut self,
        table: &DeTable<'_>,
        at: &JsonPointer,
        version: Option<&Version>,
    ) -> Option<Launch> {
        let package = match table.get("package") {
            Some(value) => self.npm_package(value, &at.key("package")),
            None => {
                self.missing(
                    at,
                    "package",
                    "an npx launch needs the npm package to run, e.g. `package = \"@acme/curupira-ext\"`",
                );
                None
            }
        };
        let launch_version = self.launch_version(table, at, version);
        if let (Some(None), Some(package)) = (&launch_version, &package) {
            let example = version.map_or_else(|| "1.0.0".to_owned(), Version::to_string);
            self.out.warning(
                codes::UNPINNED_VERSION,
                &at.key("version"),
                format!(
                    "`[{}]` has no `version`: npx will fetch the latest version of `{package}` each time the host starts it; pin one, e.g. `version = \"{example}\"`",
                    dotted(at)
                ),
            );
        }
        let bin = match table.get("bin") {
            Some(value) => self.program(value, &at.key("bin")).map(Some),
            None => Some(None),
        };
        let args = self.optional_args(table, at);
        Some(Launch::Npx {
            package: package?,
            version: launch_version?,
            bin: bin?,
            args: args?,
        })
    }

    fn executable(&mut self, table: &DeTable<'_>, at: &JsonPointer) -> Option<Launch> {
        let program = match table.get("program") {
            Some(value) => self.program(value, &at.key("program")),
            None => {
                let hint = match table.get("command").map(Spanned::get_ref) {
                    Some(DeValue::String(command)) => format!(
                        "an executable launch names what it runs with `program`, not `command`: write `program = \"{}\"`",
                        command.escape_debug()
                    ),
                    _ => "an executable launch needs the program to run, e.g. `program = \"./bin/ext\"` (relative to the manifest's folder) or `program = \"python3\"` (looked up on PATH)".to_owned(),
                };
                self.missing(at, "program", &hint);
                None
            }
        };
        let args = self.optional_args(table, at);
        Some(Launch::Executable {
            program: program?,
            args: args?,
        })
    }

    /// `launch.version`, optional: `Some(None)` when missing, `None` when invalid.
    fn launch_version(
        &mut self,
        table: &DeTable<'_>,
        at: &JsonPointer,
        version: Option<&Version>,
    ) -> Option<Option<Version>> {
        let Some(value) = table.get("version") else {
            return Some(None);
        };
        let pointer = at.key("version");
        let parsed = self.version(value, &pointer)?;
        if let Some(manifest) = version
            && parsed != *manifest
        {
            self.out.warning(
                codes::VERSION_MISMATCH,
                &pointer,
                format!("`launch.version` {parsed} differs from `version` {manifest}; the host would list {manifest} and run {parsed}"),
            );
        }
        Some(Some(parsed))
    }

    fn optional_args(&mut self, table: &DeTable<'_>, at: &JsonPointer) -> Option<Vec<String>> {
        match table.get("args") {
            Some(value) => self.args(value, &at.key("args")),
            None => Some(Vec::new()),
        }
    }

    fn npm_package(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<NpmPackageName> {
        let text = self.string(value, at)?;
        if self.problems(text, at, rules::package_name_problems(text)) {
            NpmPackageName::new(text).ok()
        } else {
            None
        }
    }

    fn python_package(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<PythonPackage> {
        let text = self.string(value, at)?;
        if self.problems(text, at, rules::python_package_problems(text)) {
            PythonPackage::new(text).ok()
        } else {
            None
        }
    }

    fn program(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<Program> {
        let text = self.string(value, at)?;
        if self.problems(text, at, rules::program_problems(text)) {
            Program::new(text).ok()
        } else {
            None
        }
    }

    /// An array of strings (`args`, `agent_providers`, `permissions`).
    fn strings(
        &mut self,
        value: &Value<'_>,
        at: &JsonPointer,
        example: &str,
    ) -> Option<Vec<String>> {
        let DeValue::Array(array) = value.get_ref() else {
            self.wrong_type(
                value,
                at,
                "an array of strings",
                &format!("; write e.g. `{example}`"),
            );
            return None;
        };
        let mut strings = Vec::with_capacity(array.len());
        let mut clean = true;
        for (index, element) in array.iter().enumerate() {
            match self.string(element, &at.index(index)) {
                Some(text) => strings.push(text.to_owned()),
                None => clean = false,
            }
        }
        clean.then_some(strings)
    }

    // ----- [package], agent_providers, [capabilities] ---------------------------

    fn package(
        &mut self,
        value: &Value<'_>,
        at: &JsonPointer,
        version: Option<&Version>,
    ) -> Option<Package> {
        let DeValue::Table(table) = value.get_ref() else {
            self.wrong_type(
                value,
                at,
                "a table",
                "; write a `[package]` table with `source`, `name` and `version`",
            );
            return None;
        };
        self.unknown_keys(table, at, &PACKAGE_KEYS);
        let source = self
            .required(table, at, "source")
            .and_then(|(v, p)| self.package_source(v, &p));
        let name = self
            .required(table, at, "name")
            .and_then(|(v, p)| self.package_name(v, &p));
        let package_version = match table.get("version") {
            Some(value) => {
                let pointer = at.key("version");
                let parsed = self.version(value, &pointer);
                if let (Some(package), Some(manifest)) = (&parsed, version)
                    && package != manifest
                {
                    self.out.warning(
                        codes::VERSION_MISMATCH,
                        &pointer,
                        format!("`package.version` {package} differs from `version` {manifest}; the host would list {manifest} for a package installed at {package}"),
                    );
                }
                parsed.map(Some)
            }
            None => Some(None),
        };
        Some(Package {
            source: source?,
            name: name?,
            version: package_version?,
        })
    }

    fn package_source(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<PackageSource> {
        let text = self.string(value, at)?;
        let source = PackageSource::from_name(text);
        if !source.is_known() {
            let hint = match did_you_mean(text, PackageSource::KNOWN) {
                Some(suggestion) => format!("did you mean `{suggestion}`?"),
                None => "it is kept as written".to_owned(),
            };
            self.out.warning(
                codes::UNKNOWN_PACKAGE_SOURCE,
                at,
                format!(
                    "`package.source` `{}` is neither `pip` nor `npm`, the registries the reference host installs from; {hint}",
                    text.escape_debug()
                ),
            );
        }
        Some(source)
    }

    fn package_name(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<String> {
        let text = self.string(value, at)?;
        if text.trim().is_empty() {
            self.out.warning(
                codes::EMPTY_PACKAGE_NAME,
                at,
                "`package.name` is empty; give the package's name in its registry, e.g. `name = \"curupira-plugins\"`",
            );
        }
        Some(text.to_owned())
    }

    /// `agent_providers`: an array of strings that must be empty.
    fn agent_providers(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<()> {
        let providers = self.strings(value, at, "agent_providers = []")?;
        let Some(first) = providers.first() else {
            return Some(());
        };
        let listed = match providers.len() {
            1 => format!("`{}`", first.escape_debug()),
            n => format!("`{}` and {} more", first.escape_debug(), n - 1),
        };
        self.out.error(
            codes::AGENT_EXTENSION,
            at,
            format!("`agent_providers` lists {listed}, and the reference host refuses an extension that provides agents: {AGENT_REASON}; remove the key or leave it empty"),
        );
        None
    }

    fn capabilities(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<Capabilities> {
        let DeValue::Table(table) = value.get_ref() else {
            self.wrong_type(
                value,
                at,
                "a table",
                "; write a `[capabilities]` table with `permissions = [...]`",
            );
            return None;
        };
        self.unknown_keys(table, at, &CAPABILITIES_KEYS);
        let permissions = match table.get("permissions") {
            Some(value) => {
                self.strings(value, &at.key("permissions"), "permissions = [\"network\"]")?
            }
            None => Vec::new(),
        };
        Some(Capabilities { permissions })
    }

    fn args(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<Vec<String>> {
        self.strings(value, at, "args = [\"--verbose\"]")
    }
}

fn integer_value(integer: &toml::de::DeInteger<'_>) -> Option<i64> {
    i64::from_str_radix(integer.as_str(), integer.radix()).ok()
}

fn integer_text(integer: &toml::de::DeInteger<'_>) -> String {
    integer.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_paths_read_like_toml() {
        // The rule is `curupira_diagnostics::toml::dotted`'s; this is how the manifest
        // names its places.
        let at = JsonPointer::root().key("launch").key("args").index(2);
        assert_eq!(dotted(&at), "launch.args[2]");
        assert_eq!(dotted(&JsonPointer::root().key("a b")), "\"a b\"");
    }
}
