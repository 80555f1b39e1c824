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
/// `agent_providers` has no field: the reference host refuses an extension that lists
/// any (coding agents are built into it), so the only valid value is the empty list,
/// which [`Manifest::to_toml`] leaves out.
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
    /// `[package]`: where the extension is installed from, when the manifest says.
    pub package: Option<Package>,
    /// `[capabilities]` (empty when the table is missing).
    pub capabilities: Capabilities,
}

/// How the host starts the extension: the three forms the reference host accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// `type = "uvx"`: uv's `uvx` runs `executable`, installed from the Python package
    /// `package` (at `version` when one is given).
    Uvx {
        /// The Python package that provides the executable.
        package: PythonPackage,
        /// The executable the package installs.
        executable: Program,
        /// The package version to run; without one, uv picks it.
        version: Option<Version>,
        /// The executable's arguments (may be empty).
        args: Vec<String>,
    },
    /// `type = "npx"`: `npx` runs the npm package `package` (at `version` when one is
    /// given, else the latest one, fetched each time), its binary `bin` when given.
    Npx {
        /// The npm package.
        package: NpmPackageName,
        /// The package version to run; a manifest without one gets a warning.
        version: Option<Version>,
        /// Which of the package's binaries to run, when it has several.
        bin: Option<Program>,
        /// The binary's arguments (may be empty).
        args: Vec<String>,
    },
    /// `type = "executable"`: a program with arguments. A `program` containing `/` is
    /// a path relative to the manifest's folder; any other is looked up on `PATH`.
    Executable {
        /// The program.
        program: Program,
        /// Its arguments (may be empty).
        args: Vec<String>,
    },
}

impl Launch {
    /// The three values of `launch.type`, in the reference host's order.
    pub const TYPES: [&'static str; 3] = ["uvx", "npx", "executable"];

    /// `"uvx"`, `"npx"` or `"executable"`, the value of `launch.type`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Launch::Uvx { .. } => "uvx",
            Launch::Npx { .. } => "npx",
            Launch::Executable { .. } => "executable",
        }
    }

    /// The arguments given to what is started.
    pub fn args(&self) -> &[String] {
        match self {
            Launch::Uvx { args, .. }
            | Launch::Npx { args, .. }
            | Launch::Executable { args, .. } => args,
        }
    }

    /// The package as its launcher names it, pinned when `version` is given: uvx's
    /// requirement (`acme-ext==1.2.0`), npx's spec (`@acme/ext@1.2.0`); `None` for an
    /// `executable`.
    ///
    /// ```
    /// # use curupira_manifest::check_str;
    /// let text = "manifest_version = 1\nname = \"x\"\nversion = \"1.2.0\"\n\
    ///             protocol_version = 2\nruntime = \"python\"\nkind = \"trigger\"\n\
    ///             trigger_types = [\"t\"]\n[launch]\ntype = \"uvx\"\n\
    ///             package = \"acme-ext\"\nexecutable = \"acme-ext\"\nversion = \"1.2.0\"\n";
    /// let manifest = check_str(text, "curupira-extension.toml").manifest.unwrap();
    /// assert_eq!(manifest.launch.package_spec().as_deref(), Some("acme-ext==1.2.0"));
    /// ```
    pub fn package_spec(&self) -> Option<String> {
        match self {
            Launch::Uvx {
                package, version, ..
            } => Some(match version {
                Some(version) => format!("{}=={version}", package.as_str()),
                None => package.as_str().to_owned(),
            }),
            Launch::Npx {
                package, version, ..
            } => Some(match version {
                Some(version) => format!("{package}@{version}"),
                None => package.to_string(),
            }),
            Launch::Executable { .. } => None,
        }
    }
}

/// `[package]`: where the extension is installed from (what `curupira plugins install
/// pip:…` or `npm:…` records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// The registry: `pip` or `npm` (another name is kept, with a warning when checked).
    pub source: PackageSource,
    /// The package's name in that registry (an empty one is kept, with a warning).
    pub name: String,
    /// The installed version, when the manifest says.
    pub version: Option<Version>,
}

/// `package.source`. Unknown sources are allowed (with a warning when checked, as the
/// reference host accepts any string) and kept as [`PackageSource::Other`].
#[derive(Debug, Clone)]
pub enum PackageSource {
    /// `pip`: the Python Package Index.
    Pip,
    /// `npm`: the npm registry.
    Npm,
    /// Any other name. `Other("pip")` equals `Pip`: values compare by name.
    Other(String),
}

impl PackageSource {
    /// The sources the reference host installs from, by name.
    pub const KNOWN: [&'static str; 2] = ["pip", "npm"];

    /// The source called `name` (exact, case-sensitive).
    pub fn from_name(name: &str) -> Self {
        match name {
            "pip" => PackageSource::Pip,
            "npm" => PackageSource::Npm,
            other => PackageSource::Other(other.to_owned()),
        }
    }

    /// The name as written in the manifest.
    pub fn as_str(&self) -> &str {
        match self {
            PackageSource::Pip => "pip",
            PackageSource::Npm => "npm",
            PackageSource::Other(name) => name,
        }
    }

    /// Whether it is one of [`PackageSource::KNOWN`].
    pub fn is_known(&self) -> bool {
        Self::KNOWN.contains(&self.as_str())
    }
}

impl PartialEq for PackageSource {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for PackageSource {}

impl fmt::Display for PackageSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[capabilities]`: what the extension asks to be allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// The permissions it asks for, as written (the reference host gives them no
    /// meaning yet).
    pub permissions: Vec<String>,
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
    /// `executable`: a program that needs no runtime (what the reference host
    /// `curupira` 0.4.0 calls a compiled extension; it accepts only `python`, `node`
    /// and `executable`).
    Executable,
    /// Any other name. `Other("node")` equals `Node`: values compare by name.
    Other(String),
}

impl Runtime {
    /// The runtimes this host knows, by name.
    pub const KNOWN: [&'static str; 6] = ["node", "python", "deno", "bun", "native", "executable"];

    /// The runtime called `name` (exact, case-sensitive).
    pub fn from_name(name: &str) -> Self {
        match name {
            "node" => Runtime::Node,
            "python" => Runtime::Python,
            "deno" => Runtime::Deno,
            "bun" => Runtime::Bun,
            "native" => Runtime::Native,
            "executable" => Runtime::Executable,
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
            Runtime::Executable => "executable",
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

/// The kind of extension. Format 1 has one: the reference host refuses `kind = "agent"`
/// (coding agents are built into it).
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
    /// What a launch starts (`program`, uvx's `executable`, npx's `bin`): not empty,
    /// not only whitespace.
    Program,
    "program",
    rules::program_problems
);

checked_string!(
    /// The package of a `uvx` launch: a PyPI project name or another requirement uv
    /// accepts; not empty, not only whitespace.
    PythonPackage,
    "Python package",
    rules::python_package_problems
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

/// The TOML layout: the keys in the order of SPEC section 2, then the tables
/// `[launch]`, `[package]` and `[capabilities]`.
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
    #[cfg_attr(feature = "schema", schemars(schema_with = "runtime_schema"))]
    runtime: &'a str,
    /// What kind of extension it is: `trigger` (the reference host refuses `agent`).
    #[cfg_attr(feature = "schema", schemars(schema_with = "kind_schema"))]
    kind: &'static str,
    /// The triggers it offers, by local name (`github-issue`): at least one, no repeats.
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::json_schema::trigger_types")
    )]
    trigger_types: &'a [TriggerType],
    /// The coding-agent providers it offers: none (the reference host refuses an
    /// extension that lists any; agents are built into it).
    #[cfg_attr(
        feature = "schema",
        schemars(default, schema_with = "crate::json_schema::agent_providers")
    )]
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    agent_providers: &'a [String],
    /// How the host starts it: `type = "uvx"` with `package` and `executable`,
    /// `type = "npx"` with `package`, or `type = "executable"` with `program`.
    launch: WireLaunch<'a>,
    /// Where the extension is installed from.
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<WirePackage<'a>>,
    /// What the extension asks to be allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    capabilities: Option<WireCapabilities<'a>>,
}

/// `[launch]`, by its `type`.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(tag = "type", rename_all = "lowercase")]
enum WireLaunch<'a> {
    /// uv's `uvx` runs `executable`, installed from the Python package `package`.
    Uvx {
        /// The Python package that provides the executable (not empty).
        #[cfg_attr(feature = "schema", schemars(with = "String", pattern(r"\S")))]
        package: &'a PythonPackage,
        /// The package version to run (SemVer); without one, uv picks it.
        #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::SEMVER)))]
        #[serde(skip_serializing_if = "Option::is_none")]
        version: Option<String>,
        /// The executable the package installs (not empty).
        #[cfg_attr(feature = "schema", schemars(with = "String", pattern(r"\S")))]
        executable: &'a Program,
        /// The executable's arguments.
        #[cfg_attr(feature = "schema", schemars(default))]
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        args: &'a [String],
    },
    /// `npx` runs the npm package `package`.
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
        /// The package version to run (SemVer); without one, npx fetches the latest
        /// version each time (a warning).
        #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::SEMVER)))]
        #[serde(skip_serializing_if = "Option::is_none")]
        version: Option<String>,
        /// Which of the package's binaries to run, when it has several (not empty).
        #[cfg_attr(feature = "schema", schemars(with = "Option<String>", pattern(r"\S")))]
        #[serde(skip_serializing_if = "Option::is_none")]
        bin: Option<&'a Program>,
        /// The binary's arguments.
        #[cfg_attr(feature = "schema", schemars(default))]
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        args: &'a [String],
    },
    /// A program with arguments. A `program` containing `/` is a path relative to the
    /// manifest's folder; any other is looked up on `PATH`.
    Executable {
        /// The program (not empty).
        #[cfg_attr(feature = "schema", schemars(with = "String", pattern(r"\S")))]
        program: &'a Program,
        /// Its arguments.
        #[cfg_attr(feature = "schema", schemars(default))]
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        args: &'a [String],
    },
}

/// `[package]`.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
struct WirePackage<'a> {
    /// The registry it is installed from: `pip` or `npm` (another name is a warning).
    #[cfg_attr(feature = "schema", schemars(schema_with = "package_source_schema"))]
    source: &'a str,
    /// The package's name in that registry.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    name: &'a str,
    /// The installed version (SemVer).
    #[cfg_attr(feature = "schema", schemars(pattern(crate::json_schema::SEMVER)))]
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<String>,
}

/// `[capabilities]`.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
struct WireCapabilities<'a> {
    /// The permissions it asks for.
    #[cfg_attr(feature = "schema", schemars(default))]
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    permissions: &'a [String],
}

/// The manifest's schema is the schema of its TOML layout.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Manifest {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CurupiraExtensionManifest".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Wire<'static> as schemars::JsonSchema>::json_schema(generator)
    }
}

/// `runtime`: a known runtime, or any other name (a warning when checked).
#[cfg(feature = "schema")]
fn runtime_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    crate::json_schema::open_set(&Runtime::KNOWN)
}

/// `kind`: format 1 has one.
#[cfg(feature = "schema")]
fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    crate::json_schema::closed_set(&[Kind::Trigger.as_str()])
}

/// `package.source`: a known registry, or any other name (a warning when checked).
#[cfg(feature = "schema")]
fn package_source_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    crate::json_schema::open_set(&PackageSource::KNOWN)
}

/// Serializes as the manifest's TOML layout (so `serde_json` gives the same keys).
impl Serialize for Manifest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let version = |v: &Option<Version>| v.as_ref().map(Version::to_string);
        Wire {
            manifest_version: MANIFEST_VERSION,
            name: &self.name,
            version: self.version.to_string(),
            protocol_version: self.protocol_version,
            runtime: self.runtime.as_str(),
            kind: self.kind.as_str(),
            trigger_types: &self.trigger_types,
            agent_providers: &[],
            launch: match &self.launch {
                Launch::Uvx {
                    package,
                    executable,
                    version: v,
                    args,
                } => WireLaunch::Uvx {
                    package,
                    version: version(v),
                    executable,
                    args,
                },
                Launch::Npx {
                    package,
                    version: v,
                    bin,
                    args,
                } => WireLaunch::Npx {
                    package,
                    version: version(v),
                    bin: bin.as_ref(),
                    args,
                },
                Launch::Executable { program, args } => WireLaunch::Executable { program, args },
            },
            package: self.package.as_ref().map(|p| WirePackage {
                source: p.source.as_str(),
                name: &p.name,
                version: version(&p.version),
            }),
            capabilities: (!self.capabilities.permissions.is_empty()).then(|| WireCapabilities {
                permissions: &self.capabilities.permissions,
            }),
        }
        .serialize(serializer)
    }
}
