//! The pieces of the `entry.json` model's `JsonSchema` (feature `schema`): the patterns
//! of the checks in [`crate::check_entry_str`] and the shape of the closed sets, for
//! editors. The model ([`crate::model`]) uses them; this module knows nothing of it.

/// `extensionId`: two or more `.`-separated segments of lowercase letters and digits,
/// a hyphen only between two of them.
pub(crate) const EXTENSION_ID: &str = r"^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+$";

/// An npm package name, optionally scoped (npm's rule for new packages).
pub(crate) const NPM_NAME: &str = r"^(?:@[a-z0-9-*~][a-z0-9-*._~]*/)?[a-z0-9-~][a-z0-9-._~]*$";

/// A SemVer 2.0.0 version (semver.org's pattern).
pub(crate) const SEMVER: &str = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$";

/// `JsonSchema` for closed sets: a string, one of the set's values. Called where the
/// types live ([`crate::model`]), so this module knows nothing of the model.
macro_rules! closed_set_schemas {
    ($($ty:ident),* $(,)?) => {$(
        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "enum": $ty::names().collect::<Vec<_>>(),
                })
            }
        }
    )*};
}

pub(crate) use closed_set_schemas;
