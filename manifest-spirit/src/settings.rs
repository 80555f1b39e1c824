//! The settings and secrets rules a Spirit host applies at run time.
//!
//! An extension declares its settings in `spiritExtension.settingsSchema` (each a
//! [`SettingDef`]: a key, a [`SettingType`], whether it is `required`, an optional
//! `defaultValue`) and its secrets in `spiritExtension.secretSlots` (each a
//! [`SecretSlot`]). The package validator has already checked those declarations; the
//! functions here check what the extension and the user do with them:
//!
//! - a setting value is a JSON string, number, boolean or `null`. A `string` setting
//!   takes a string, a `number` setting any JSON number, a `boolean` setting `true` or
//!   `false`, a `select` setting a string equal to one of its `options[].value`;
//! - `null` clears a setting that is not `required`; a `required` setting cannot be
//!   cleared;
//! - only declared keys can be read ([`check_setting_key`]), written ([`check_update`],
//!   what `ctx.settings.set` and `setAll` may do) or stored ([`check_values`], which also wants a value, written or
//!   default, for every `required` setting);
//! - what `ctx.settings.getAll()` returns is the stored map with the declared defaults
//!   filled in ([`with_defaults`]);
//! - `ctx.secrets` reaches only the keys of `secretSlots` ([`check_secret_key`]).
//!
//! Every problem is reported, not only the first, each naming the key, what was found
//! and what was expected.
//!
//! ```
//! use spirit_manifest::SettingDef;
//! use spirit_manifest::serde_json::{self, json};
//! use spirit_manifest::settings::{Values, check_update, with_defaults};
//!
//! let schema: Vec<SettingDef> = serde_json::from_value(json!([
//!     { "key": "region", "type": "select", "title": "Region", "required": true,
//!       "defaultValue": "us",
//!       "options": [{ "value": "us", "label": "US" }, { "value": "eu", "label": "EU" }] },
//!     { "key": "limit", "type": "number", "title": "Limit" }
//! ]))?;
//!
//! let changes: Values = serde_json::from_value(json!({ "limit": null, "region": "eu" }))?;
//! assert!(check_update(&schema, &changes).is_ok());
//!
//! let changes: Values = serde_json::from_value(json!({
//!     "region": "asia", "limit": "10", "regoin": "eu"
//! }))?;
//! let errors = check_update(&schema, &changes).unwrap_err();
//! let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
//! assert_eq!(
//!     messages,
//!     [
//!         "setting `limit` has type `number`: expected a number, found a string",
//!         "setting `region` has no option \"asia\": expected one of \"us\", \"eu\"",
//!         "setting `regoin` is not declared in `settingsSchema`: did you mean `region`?",
//!     ]
//! );
//!
//! let all = with_defaults(&schema, &Values::new());
//! assert_eq!(serde_json::Value::Object(all), json!({ "region": "us" }));
//! # Ok::<(), serde_json::Error>(())
//! ```

use curupira_diagnostics::did_you_mean;
use curupira_diagnostics::json::type_name;
use serde_json::Value;

use crate::model::{SecretSlot, SettingDef, SettingType};

/// A map of setting values by key: what `ctx.settings.setAll` receives and
/// `ctx.settings.getAll` returns.
pub type Values = serde_json::Map<String, Value>;

/// A setting value that breaks a rule of the extension's `settingsSchema`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// The key is not declared in `settingsSchema`.
    #[error("{}", undeclared("setting", "settingsSchema", key, suggestion.as_deref(), declared))]
    UnknownKey {
        /// The key written.
        key: String,
        /// The declared key it is probably a typo of.
        suggestion: Option<String>,
        /// Every declared key, in schema order.
        declared: Vec<String>,
    },
    /// The value's JSON type is not the setting's type.
    #[error("setting `{key}` has type `{expected}`: expected {}, found {found}", expectation(*expected))]
    WrongType {
        /// The setting.
        key: String,
        /// The setting's type.
        expected: SettingType,
        /// The JSON type found: `a string`, `an array`…
        found: &'static str,
    },
    /// A string for a `select` setting that is none of its options.
    #[error(
        "setting `{key}` has no option {}: expected one of {}",
        quoted(value),
        quoted_list(options)
    )]
    NotAnOption {
        /// The setting.
        key: String,
        /// The string found.
        value: String,
        /// The `options[].value`s, in schema order.
        options: Vec<String>,
    },
    /// `null` for a `required` setting, which cannot be cleared.
    #[error("setting `{key}` is required and cannot be cleared: expected {}, found null", expectation(*expected))]
    RequiredNull {
        /// The setting.
        key: String,
        /// The setting's type.
        expected: SettingType,
    },
    /// A `required` setting with no value and no `defaultValue`.
    #[error("setting `{key}` is required but has no value and no `defaultValue`: expected {}", expectation(*expected))]
    Required {
        /// The setting.
        key: String,
        /// The setting's type.
        expected: SettingType,
    },
}

/// Secret access to a key that `secretSlots` does not declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", undeclared("secret", "secretSlots", key, suggestion.as_deref(), declared))]
pub struct SecretKeyError {
    /// The key asked for.
    pub key: String,
    /// The declared key it is probably a typo of.
    pub suggestion: Option<String>,
    /// Every declared key, in `secretSlots` order (empty when there are none).
    pub declared: Vec<String>,
}

/// Checks the changes `ctx.settings.set(key, value)` or `setAll(values)` would write:
/// every key is declared, every value has its setting's type (a `select` value is one
/// of its options), and `null`, which clears a setting, is given only to settings that
/// are not `required`. Reports every problem, in the order of `changes`.
pub fn check_update(schema: &[SettingDef], changes: &Values) -> Result<(), Vec<SettingError>> {
    let errors: Vec<SettingError> = changes
        .iter()
        .filter_map(|(key, value)| check_one(schema, key, value))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Checks a complete stored settings map: the rules of [`check_update`] for every
/// entry, then (in schema order) that every `required` setting has a value, in
/// `values` or as its `defaultValue`.
pub fn check_values(schema: &[SettingDef], values: &Values) -> Result<(), Vec<SettingError>> {
    let mut errors = match check_update(schema, values) {
        Ok(()) => Vec::new(),
        Err(errors) => errors,
    };
    for def in schema.iter().filter(|def| def.required) {
        if !values.contains_key(&def.key) && default_of(def).is_none() {
            errors.push(SettingError::Required {
                key: def.key.clone(),
                expected: def.kind,
            });
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// What `ctx.settings.getAll()` returns: `values`, plus the `defaultValue` of every
/// declared setting that is missing or `null` in it. A setting with no default keeps
/// its `null` (or stays missing); entries the schema does not declare are kept as they
/// are.
pub fn with_defaults(schema: &[SettingDef], values: &Values) -> Values {
    let mut all = values.clone();
    for def in schema {
        let Some(default) = default_of(def) else {
            continue;
        };
        if all.get(&def.key).is_none_or(Value::is_null) {
            all.insert(def.key.clone(), default.clone());
        }
    }
    all
}

/// Checks that the extension may read or write the secret `key`: only keys declared in
/// `secretSlots` are reachable.
pub fn check_secret_key(slots: &[SecretSlot], key: &str) -> Result<(), SecretKeyError> {
    if slots.iter().any(|slot| slot.key == key) {
        return Ok(());
    }
    Err(SecretKeyError {
        key: key.to_owned(),
        suggestion: did_you_mean(key, slots.iter().map(|slot| slot.key.as_str()))
            .map(str::to_owned),
        declared: slots.iter().map(|slot| slot.key.clone()).collect(),
    })
}

/// Checks that `key` is declared in `settingsSchema` (what `ctx.settings.get` may
/// read) and returns its declaration.
pub fn check_setting_key<'s>(
    schema: &'s [SettingDef],
    key: &str,
) -> Result<&'s SettingDef, SettingError> {
    schema
        .iter()
        .find(|def| def.key == key)
        .ok_or_else(|| SettingError::UnknownKey {
            key: key.to_owned(),
            suggestion: did_you_mean(key, schema.iter().map(|def| def.key.as_str()))
                .map(str::to_owned),
            declared: schema.iter().map(|def| def.key.clone()).collect(),
        })
}

/// The problem with writing `value` to `key`, if there is one.
fn check_one(schema: &[SettingDef], key: &str, value: &Value) -> Option<SettingError> {
    let def = match check_setting_key(schema, key) {
        Ok(def) => def,
        Err(error) => return Some(error),
    };
    match (def.kind, value) {
        (_, Value::Null) if def.required => Some(SettingError::RequiredNull {
            key: key.to_owned(),
            expected: def.kind,
        }),
        (_, Value::Null)
        | (SettingType::String, Value::String(_))
        | (SettingType::Number, Value::Number(_))
        | (SettingType::Boolean, Value::Bool(_)) => None,
        (SettingType::Select, Value::String(text)) => {
            if def.options.iter().any(|option| option.value == *text) {
                None
            } else {
                Some(SettingError::NotAnOption {
                    key: key.to_owned(),
                    value: text.clone(),
                    options: def.options.iter().map(|o| o.value.clone()).collect(),
                })
            }
        }
        _ => Some(SettingError::WrongType {
            key: key.to_owned(),
            expected: def.kind,
            found: type_name(value),
        }),
    }
}

/// The setting's `defaultValue`, unless it has none (a `null` default counts as none).
fn default_of(def: &SettingDef) -> Option<&Value> {
    def.default_value.as_ref().filter(|value| !value.is_null())
}

/// What a value of a setting of type `kind` must be.
pub(crate) fn expectation(kind: SettingType) -> &'static str {
    match kind {
        SettingType::String => "a string",
        SettingType::Number => "a number",
        SettingType::Boolean => "`true` or `false`",
        SettingType::Select => "a string naming one of its options",
    }
}

/// `text` as a JSON string literal, the way it would be written in `settings.json`.
fn quoted(text: &str) -> String {
    Value::from(text).to_string()
}

/// `"a", "b", "c"`.
fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| quoted(item))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The message for a key that `member` (`settingsSchema`, `secretSlots`) does not
/// declare.
fn undeclared(
    what: &str,
    member: &str,
    key: &str,
    suggestion: Option<&str>,
    declared: &[String],
) -> String {
    match (suggestion, declared) {
        (Some(suggestion), _) => {
            format!("{what} `{key}` is not declared in `{member}`: did you mean `{suggestion}`?")
        }
        (None, []) => {
            format!("{what} `{key}` is not declared: the extension declares no `{member}`")
        }
        (None, declared) => {
            let keys: Vec<String> = declared.iter().map(|k| format!("`{k}`")).collect();
            format!(
                "{what} `{key}` is not declared in `{member}`: expected one of {}",
                keys.join(", ")
            )
        }
    }
}
