//! The pieces of the `package.json` model's `JsonSchema` (feature `schema`): the name
//! patterns of [`crate::check_str`]'s rules and the shape of the closed sets, for
//! editors. The model ([`crate::model`]) uses them; this module knows nothing of it.

/// `name`: `^[a-z0-9][a-z0-9._-]*$`, optionally after a scope `@scope/` of the same form.
pub(crate) const PACKAGE_NAME: &str = r"^(?:@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$";

/// Tool names and setting keys: lowercase letters and digits, single `.`, `_` or `-`
/// between them.
pub(crate) const IDENTIFIER: &str = r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$";

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
