//! `JsonSchema` for `curupira-extension.toml` (feature `schema`): the file's layout is
//! the model's serialized form, so the schema is derived from that layout, with the
//! patterns and sets of the validator's rules, for editors.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use crate::model::{Manifest, PackageSource, Runtime};

/// Extension names: `^[a-z0-9][a-z0-9._-]*$`.
pub(crate) const NAME: &str = r"^[a-z0-9][a-z0-9._-]*$";

/// Trigger types: lowercase letters and digits, single `.`, `_` or `-` between them.
pub(crate) const TRIGGER_TYPE: &str = r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$";

/// An npm package name, optionally scoped (npm's rule for new packages).
pub(crate) const NPM_NAME: &str = r"^(?:@[a-z0-9-*~][a-z0-9-*._~]*/)?[a-z0-9-~][a-z0-9-._~]*$";

/// A SemVer 2.0.0 version (semver.org's pattern).
pub(crate) const SEMVER: &str = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$";

/// `protocol_version`: the major version as an integer, or `"MAJOR.MINOR"`.
pub(crate) fn protocol_version(_: &mut SchemaGenerator) -> Schema {
    let major = curupira_protocol::PROTOCOL_VERSION;
    json_schema!({
        "anyOf": [
            { "type": "integer", "const": major },
            { "type": "string", "pattern": format!(r"^{major}(?:\.(?:0|[1-9]\d*))?$") },
        ],
    })
}

/// `runtime`: a known runtime, or any other name (a warning when checked).
pub(crate) fn runtime(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "anyOf": [
            { "type": "string", "enum": Runtime::KNOWN },
            { "type": "string", "minLength": 1 },
        ],
    })
}

/// `kind`: format 1 has one.
pub(crate) fn kind(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": [crate::model::Kind::Trigger.as_str()] })
}

/// `trigger_types`: a non-empty list of distinct trigger types.
pub(crate) fn trigger_types(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "minItems": 1,
        "uniqueItems": true,
        "items": { "type": "string", "pattern": TRIGGER_TYPE },
    })
}

/// `agent_providers`: the reference host refuses any provider, so only the empty list.
pub(crate) fn agent_providers(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "maxItems": 0,
        "items": { "type": "string" },
    })
}

/// `package.source`: a known registry, or any other name (a warning when checked).
pub(crate) fn package_source(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "anyOf": [
            { "type": "string", "enum": PackageSource::KNOWN },
            { "type": "string", "minLength": 1 },
        ],
    })
}

/// The manifest's schema is the schema of its TOML layout.
impl JsonSchema for Manifest {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CurupiraExtensionManifest".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        crate::model::wire_schema(generator)
    }
}
