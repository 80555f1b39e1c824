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
    ExtensionName, Kind, Launch, MANIFEST_VERSION, Manifest, NpmPackageName, Program,
    ProtocolVersion, Runtime, TriggerType, TriggerTypes,
};
use crate::rules::{self, Problem};

type Value<'i> = Spanned<DeValue<'i>>;

const ROOT_KEYS: [&str; 8] = [
    "manifest_version",
    "name",
    "version",
    "protocol_version",
    "runtime",
    "kind",
    "trigger_types",
    "launch",
];

const LAUNCH_KEYS: [&str; 5] = ["type", "package", "version", "command", "args"];
const NPX_KEYS: [&str; 2] = ["package", "version"];
const COMMAND_KEYS: [&str; 2] = ["command", "args"];

/// What to write when a required key is missing.
fn missing_hint(key: &str) -> &'static str {
    match key {
        "manifest_version" => "add `manifest_version = 1`",
        "name" => "add the extension's name, e.g. `name = \"acme-curupira-ext\"`",
        "version" => "add the extension's SemVer version, e.g. `version = \"1.0.0\"`",
        "protocol_version" => "add `protocol_version = 2`",
        "runtime" => "add what it runs on, e.g. `runtime = \"node\"`",
        "kind" => "add `kind = \"trigger\"`",
        "trigger_types" => "list the triggers it offers, e.g. `trigger_types = [\"github-issue\"]`",
        "launch" => "add a `[launch]` table with `type = \"npx\"` or `type = \"command\"`",
        "type" => "add `type = \"npx\"` or `type = \"command\"`",
        "package" => {
            "an npx launch needs the npm package to run, e.g. `package = \"@acme/curupira-ext\"`"
        }
        "command" => "a command launch needs the program to run, e.g. `command = \"./bin/ext\"`",
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
        self.unknown_keys(table, &root, &ROOT_KEYS, &[]);
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
        manifest_version?;
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
                let message = if at.is_root() {
                    format!("required key `{key}` is missing; {}", missing_hint(key))
                } else {
                    format!("`[{}]` has no `{key}`; {}", dotted(at), missing_hint(key))
                };
                self.out.error(codes::MISSING_KEY, &pointer, message);
                None
            }
        }
    }

    /// Warns about keys outside `known`; keys in `other` belong to the other launch type.
    fn unknown_keys(
        &mut self,
        table: &DeTable<'_>,
        at: &JsonPointer,
        known: &[&str],
        other: &[(&str, &str)],
    ) {
        let mut rest = Vec::new();
        for (key, _) in table {
            let key = key.get_ref().as_ref();
            let Some((_, belongs)) = other.iter().find(|(name, _)| *name == key) else {
                rest.push(key);
                continue;
            };
            let pointer = at.key(key);
            let message = format!(
                "`{}` is ignored here; it belongs to `type = \"{belongs}\"`",
                dotted(&pointer)
            );
            self.out.push(
                Severity::Warning,
                codes::UNUSED_KEY,
                &pointer,
                Anchor::Key,
                message,
            );
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
                "; write a `[launch]` table with `type = \"npx\"` or `type = \"command\"`",
            );
            return None;
        };
        let launch_type = match table.get("type") {
            None => {
                self.required(table, at, "type");
                None
            }
            Some(value) => {
                let pointer = at.key("type");
                self.string(value, &pointer).and_then(|text| match text {
                    "npx" | "command" => Some(text),
                    other => {
                        let hint = match did_you_mean(other, ["npx", "command"]) {
                            Some(suggestion) => format!("did you mean `{suggestion}`?"),
                            None => "write `type = \"npx\"` or `type = \"command\"`".to_owned(),
                        };
                        self.out.error(
                            codes::INVALID_LAUNCH_TYPE,
                            &pointer,
                            format!(
                                "`launch.type` `{}` is not a launch type; {hint}",
                                other.escape_debug()
                            ),
                        );
                        None
                    }
                })
            }
        };
        match launch_type {
            Some("npx") => {
                let other: Vec<_> = COMMAND_KEYS.iter().map(|key| (*key, "command")).collect();
                self.unknown_keys(table, at, &LAUNCH_KEYS, &other);
                self.npx(table, at, version)
            }
            Some(_) => {
                let other: Vec<_> = NPX_KEYS.iter().map(|key| (*key, "npx")).collect();
                self.unknown_keys(table, at, &LAUNCH_KEYS, &other);
                self.command(table, at)
            }
            None => {
                // Without a usable type, still check whatever keys are there.
                self.unknown_keys(table, at, &LAUNCH_KEYS, &[]);
                for (key, value) in table {
                    let pointer = at.key(key.get_ref());
                    match key.get_ref().as_ref() {
                        "package" => {
                            self.package(value, &pointer);
                        }
                        "version" => {
                            self.version(value, &pointer);
                        }
                        "command" => {
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

    fn npx(
        &mut self,
        table: &DeTable<'_>,
        at: &JsonPointer,
        version: Option<&Version>,
    ) -> Option<Launch> {
        let package = self
            .required(table, at, "package")
            .and_then(|(v, p)| self.package(v, &p));
        let launch_version = match table.get("version") {
            Some(value) => {
                let pointer = at.key("version");
                let parsed = self.version(value, &pointer);
                if let (Some(launch), Some(manifest)) = (&parsed, version)
                    && launch != manifest
                {
                    self.out.warning(
                            codes::VERSION_MISMATCH,
                            &pointer,
                            format!("`launch.version` {launch} differs from `version` {manifest}; the host would list {manifest} and run {launch}"),
                        );
                }
                parsed
            }
            None => {
                let hint = match version {
                    Some(version) => format!(
                        "an npx launch needs the exact version to run, e.g. `version = \"{version}\"`"
                    ),
                    None => {
                        "an npx launch needs the exact version to run, e.g. `version = \"1.0.0\"`"
                            .to_owned()
                    }
                };
                self.out.error(
                    codes::MISSING_KEY,
                    &at.key("version"),
                    format!("`[{}]` has no `version`; {hint}", dotted(at)),
                );
                None
            }
        };
        Some(Launch::Npx {
            package: package?,
            version: launch_version?,
        })
    }

    fn command(&mut self, table: &DeTable<'_>, at: &JsonPointer) -> Option<Launch> {
        let command = self
            .required(table, at, "command")
            .and_then(|(v, p)| self.program(v, &p));
        let args = match table.get("args") {
            Some(value) => self.args(value, &at.key("args")),
            None => Some(Vec::new()),
        };
        Some(Launch::Command {
            command: command?,
            args: args?,
        })
    }

    fn package(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<NpmPackageName> {
        let text = self.string(value, at)?;
        if self.problems(text, at, rules::package_name_problems(text)) {
            NpmPackageName::new(text).ok()
        } else {
            None
        }
    }

    fn program(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<Program> {
        let text = self.string(value, at)?;
        if self.problems(text, at, rules::command_problems(text)) {
            Program::new(text).ok()
        } else {
            None
        }
    }

    fn args(&mut self, value: &Value<'_>, at: &JsonPointer) -> Option<Vec<String>> {
        let DeValue::Array(array) = value.get_ref() else {
            self.wrong_type(
                value,
                at,
                "an array of strings",
                "; write e.g. `args = [\"--verbose\"]`",
            );
            return None;
        };
        let mut args = Vec::with_capacity(array.len());
        let mut clean = true;
        for (index, element) in array.iter().enumerate() {
            match self.string(element, &at.index(index)) {
                Some(text) => args.push(text.to_owned()),
                None => clean = false,
            }
        }
        clean.then_some(args)
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
