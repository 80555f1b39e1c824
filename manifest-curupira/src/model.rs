//! The typed manifest. Every type here holds only values the validator accepts, so a
//! `Manifest` always prints (`to_toml`) as a manifest that checks without errors.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::str::FromStr;

pub use curupira_protocol::ProtocolVersion;
use semver::Version;
use serde::{Serialize, Serializer};

use crate::rules;

/// The only manifest format this crate reads: `manifest_version = 1`.
pub const MANIFEST_VERSION: i64 = 1;

/// A value that breaks a manifest rule, with the sentence saying which and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InvalidValue {
    /// The diagnostic code the validator would report (`manifest/invalid-name`).
    pub code: &'static str,
    /// One sentence.
    pub message: String,
}

impl InvalidValue {
    fn new(code: &'static str, what: &str, value: &str, problem: &str) -> Self {
        Self {
            code,
            message: format!("{what} `{}` {problem}", value.escape_debug()),
        }
    }
}

/// A parsed, valid `curupira-extension.toml`.
///
/// ```
/// use curupira_manifest::{Launch, Manifest, Runtime};
///
/// let manifest: Manifest = r#"
/// manifest_version = 1
/// name = "acme-curupira-ext"
/// version = "1.2.0"
/// protocol_version = 2
/// runtime = "node"
/// kind = "trigger"
/// trigger_types = ["github-issue"]
///
/// [launch]
/// type = "npx"
/// package = "@acme/curupira-ext"
/// version = "1.2.0"
/// "#.parse()?;
/// assert_eq!(manifest.name.as_str(), "acme-curupira-ext");
/// assert_eq!(manifest.runtime, Runtime::Node);
/// assert!(matches!(&manifest.launch, Launch::Npx { package, .. } if package.as_str() == "@acme/curupira-ext"));
/// assert_eq!(manifest.to_toml().parse::<Manifest>()?, manifest);
/// # Ok::<(), curupira_manifest::ManifestError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The extension's name, `^[a-z0-9][a-z0-9._-]*$`, at most 214 characters.
    pub name: ExtensionName,
    /// The extension's version.
    pub version: Version,
    /// The protocol it speaks (major version 2).
    pub protocol_version: ProtocolVersion,
    /// What it runs on.
    pub runtime: Runtime,
    /// What kind of extension it is.
    pub kind: Kind,
    /// The triggers it offers, by local name.
    pub trigger_types: TriggerTypes,
    /// How the host starts it.
    pub launch: Launch,
}

/// How the host starts the extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// `npx --yes <package>@<version>`.
    Npx {
        /// The npm package.
        package: NpmPackageName,
        /// The exact version to run.
        version: Version,
    },
    /// A program with arguments. A `command` containing `/` is a path relative to the
    /// manifest's folder; otherwise it is looked up on `PATH`.
    Command {
        /// The program.
        command: Program,
        /// Its arguments (may be empty).
        args: Vec<String>,
    },
}

impl Launch {
    /// `"npx"` or `"command"`, the value of `launch.type`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Launch::Npx { .. } => "npx",
            Launch::Command { .. } => "command",
        }
    }
}

/// What the extension runs on. Unknown runtimes are allowed (with a warning when
/// checked) and kept as [`Runtime::Other`].
#[derive(Debug, Clone)]
pub enum Runtime {
    /// `node`
    Node,
    /// `python`
    Python,
    /// `deno`
    Deno,
    /// `bun`
    Bun,
    /// `native`
    Native,
    /// Any other name. `Other("node")` equals `Node`: values compare by name.
    Other(String),
}

impl Runtime {
    /// The runtimes this host knows, by name.
    pub const KNOWN: [&'static str; 5] = ["node", "python", "deno", "bun", "native"];

    /// The runtime called `name` (exact, case-sensitive).
    pub fn from_name(name: &str) -> Self {
        match name {
            "node" => Runtime::Node,
            "python" => Runtime::Python,
            "deno" => Runtime::Deno,
            "bun" => Runtime::Bun,
            "native" => Runtime::Native,
            other => Runtime::Other(other.to_owned()),
        }
    }

    /// The name as written in the manifest.
    pub fn as_str(&self) -> &str {
        match self {
            Runtime::Node => "node",
            Runtime::Python => "python",
            Runtime::Deno => "deno",
            Runtime::Bun => "bun",
            Runtime::Native => "native",
            Runtime::Other(name) => name,
        }
    }

    /// Whether it is one of [`Runtime::KNOWN`].
    pub fn is_known(&self) -> bool {
        Self::KNOWN.contains(&self.as_str())
    }
}

impl PartialEq for Runtime {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Runtime {}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of extension. Format 1 has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Kind {
    /// `kind = "trigger"`
    #[default]
    Trigger,
}

impl Kind {
    /// `"trigger"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Trigger => "trigger",
        }
    }
}

macro_rules! checked_string {
    ($(#[$doc:meta])* $name:ident, $what:literal, $check:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            /// Checks `value` and wraps it.
            pub fn new(value: impl Into<String>) -> Result<Self, InvalidValue> {
                let value = value.into();
                match $check(&value).into_iter().next() {
                    None => Ok(Self(value)),
                    Some(problem) => Err(InvalidValue::new(problem.code, $what, &value, &problem.text)),
                }
            }

            /// The value.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = InvalidValue;

            fn from_str(value: &str) -> Result<Self, Self::Err> {
                Self::new(value)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }
    };
}

checked_string!(
    /// An extension name: `^[a-z0-9][a-z0-9._-]*$`, at most 214 characters.
    ExtensionName,
    "extension name",
    rules::name_problems
);

checked_string!(
    /// A trigger type: `^[a-z0-9]+(?:[._-][a-z0-9]+)*$`, e.g. `github-issue`.
    TriggerType,
    "trigger type",
    rules::trigger_type_problems
);

checked_string!(
    /// An npm package name, plain or scoped. Names that only break npm's newer rules
    /// (uppercase, core module names, …) are accepted: such packages exist.
    NpmPackageName,
    "npm package name",
    rules::package_name_errors
);

checked_string!(
    /// The program of a `command` launch: not empty, not only whitespace.
    Program,
    "launch command",
    rules::command_problems
);

/// The `trigger_types` list: at least one, no repetitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerTypes(Vec<TriggerType>);

impl TriggerTypes {
    /// Checks that `types` is non-empty and has no repetition.
    pub fn new(types: Vec<TriggerType>) -> Result<Self, InvalidValue> {
        if types.is_empty() {
            return Err(InvalidValue {
                code: crate::codes::EMPTY_TRIGGER_TYPES,
                message: "an extension must offer at least one trigger type".to_owned(),
            });
        }
        let mut seen = HashMap::with_capacity(types.len());
        for (index, trigger) in types.iter().enumerate() {
            if let Some(first) = seen.insert(trigger.as_str(), index) {
                return Err(InvalidValue {
                    code: crate::codes::DUPLICATE_TRIGGER_TYPE,
                    message: format!(
                        "trigger type `{trigger}` is listed at positions {} and {}",
                        first + 1,
                        index + 1
                    ),
                });
            }
        }
        Ok(Self(types))
    }

    /// The types in manifest order.
    pub fn as_slice(&self) -> &[TriggerType] {
        &self.0
    }

    /// Whether `name` is one of them.
    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|t| t.as_str() == name)
    }
}

impl Deref for TriggerTypes {
    type Target = [TriggerType];

    fn deref(&self) -> &[TriggerType] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a TriggerTypes {
    type Item = &'a TriggerType;
    type IntoIter = std::slice::Iter<'a, TriggerType>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// The TOML layout: the keys in the order of SPEC section 2, `[launch]` last.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        title = "curupira-extension.toml",
        description = "A Curupira extension's manifest (format 1): who the extension is, what it offers and how the host starts it.",
        deny_unknown_fields
    )
)]
struct Wire<'a> {
    /// The manifest format: always 1.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1)))]
    manifest_version: i64,
    /// The extension's name, `^[a-z0-9][a-z0-9._-]*$`, at most 214 characters.
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "String",
            pattern(crate::json_schema::NAME),
            length(min = 1, max = 214)
        )
    )]
    name: &'a ExtensionName,
    /// The extension's version (SemVer).
    #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::SEMVER)))]
    version: String,
    /// The protocol it speaks: the major version (`2`) or `"MAJOR.MINOR"` (`"2.1"`).
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::json_schema::protocol_version")
    )]
    protocol_version: ProtocolVersion,
    /// What it runs on: `node`, `python`, `deno`, `bun` or `native` (another name is a
    /// warning).
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::json_schema::runtime")
    )]
    runtime: &'a str,
    /// What kind of extension it is: `trigger`.
    #[cfg_attr(feature = "schema", schemars(schema_with = "crate::json_schema::kind"))]
    kind: &'static str,
    /// The triggers it offers, by local name (`github-issue`): at least one, no repeats.
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::json_schema::trigger_types")
    )]
    trigger_types: &'a [TriggerType],
    /// How the host starts it: `type = "npx"` with `package` and `version`, or
    /// `type = "command"` with `command` and `args`.
    launch: WireLaunch<'a>,
}

/// `[launch]`, by its `type`.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(tag = "type", rename_all = "lowercase")]
enum WireLaunch<'a> {
    /// `npx --yes <package>@<version>`.
    Npx {
        /// The npm package.
        #[cfg_attr(
            feature = "schema",
            schemars(
                with = "String",
                pattern(crate::json_schema::NPM_NAME),
                length(min = 1, max = 214)
            )
        )]
        package: &'a NpmPackageName,
        /// The exact version to run (SemVer).
        #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::SEMVER)))]
        version: String,
    },
    /// A program with arguments. A `command` containing `/` is a path relative to the
    /// manifest's folder; otherwise it is looked up on `PATH`.
    Command {
        /// The program (not empty).
        #[cfg_attr(feature = "schema", schemars(with = "String", pattern(r"\S")))]
        command: &'a Program,
        /// Its arguments (may be empty).
        #[cfg_attr(feature = "schema", schemars(default))]
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        args: &'a [String],
    },
}

/// The schema of the TOML layout ([`Manifest`]'s `JsonSchema`).
#[cfg(feature = "schema")]
pub(crate) fn wire_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    <Wire<'static> as schemars::JsonSchema>::json_schema(generator)
}

/// Serializes as the manifest's TOML layout (so `serde_json` gives the same keys).
impl Serialize for Manifest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Wire {
            manifest_version: MANIFEST_VERSION,
            name: &self.name,
            version: self.version.to_string(),
            protocol_version: self.protocol_version,
            runtime: self.runtime.as_str(),
            kind: self.kind.as_str(),
            trigger_types: &self.trigger_types,
            launch: match &self.launch {
                Launch::Npx { package, version } => WireLaunch::Npx {
                    package,
                    version: version.to_string(),
                },
                Launch::Command { command, args } => WireLaunch::Command { command, args },
            },
        }
        .serialize(serializer)
    }
}
