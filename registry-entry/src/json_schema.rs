//! `JsonSchema` for the `entry.json` model (feature `schema`): the closed sets' values
//! and the patterns of the checks in [`crate::check_entry_str`], for editors.

/// `extensionId`: two or more `.`-separated segments of lowercase letters and digits,
/// a hyphen only between two of them.
pub(crate) const EXTENSION_ID: &str = r"^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+$";

/// An npm package name, optionally scoped (npm's rule for new packages).
pub(crate) const NPM_NAME: &str = r"^(?:@[a-z0-9-*~][a-z0-9-*._~]*/)?[a-z0-9-~][a-z0-9-._~]*$";

/// A SemVer 2.0.0 version (semver.org's pattern).
pub(crate) const SEMVER: &str = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$";

/// `JsonSchema` for closed sets: a string, one of the set's values.
macro_rules! closed_set_schemas {
    ($($ty:ident),* $(,)?) => {$(
        impl schemars::JsonSchema for crate::model::$ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "enum": crate::model::$ty::names().collect::<Vec<_>>(),
                })
            }
        }
    )*};
}

closed_set_schemas!(Status, Channel, ReviewStatus);
