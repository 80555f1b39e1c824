//! The patterns and shapes of the validator's rules that the `JsonSchema` of
//! `curupira-extension.toml` (feature `schema`) is built from, for editors. The schema
//! itself is derived in [`crate::model`] from the file's layout (the model's serialized
//! form); this module knows nothing of the model, so the dependency goes one way.

use schemars::{Schema, SchemaGenerator, json_schema};

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

/// A string that is one of `known`, or any other name (a warning when checked): the
/// shape of `runtime` and `package.source`.
pub(crate) fn open_set(known: &[&str]) -> Schema {
    json_schema!({
        "anyOf": [
            { "type": "string", "enum": known },
            { "type": "string", "minLength": 1 },
        ],
    })
}

/// A string that is one of `values`: the shape of `kind`.
pub(crate) fn closed_set(values: &[&str]) -> Schema {
    json_schema!({ "type": "string", "enum": values })
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
