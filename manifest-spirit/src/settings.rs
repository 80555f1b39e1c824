//! The settings and secrets rules a Spirit host applies at run time, as the Spirit
//! app's settings accessors apply them.
//!
//! An extension declares its settings in `spiritExtension.settingsSchema` (each a
//! [`SettingDef`]: a key, a [`SettingType`], whether it is `required`, an optional
//! `defaultValue`) and its secrets in `spiritExtension.secretSlots` (each a
//! [`SecretSlot`]). The package validator has already checked those declarations; the
//! functions here check what the extension and the user do with them:
//!
//! - a setting value is a JSON string, number, boolean or `null`. A `string` setting
//!   takes a string (not blank when the setting is `required`), a `number` setting
//!   any JSON number, a `boolean` setting `true` or `false`, a `select` setting a
//!   string, one of its `options[].value` when it has options;
//! - `null` clears a setting; only a `required` setting without a `defaultValue`
//!   cannot be cleared;
//! - only declared keys can be written ([`check_update`], what `ctx.settings.set`
//!   and `setAll` may do); reading an undeclared key gives nothing, not an error;
//! - what `ctx.settings.getAll()` returns ([`with_defaults`]) is, in `settingsSchema`
//!   order, each declared setting's stored value, else its `defaultValue`; a stored
//!   value that breaks its setting makes the read fail (every read: `get` reads the
//!   same map). A `required` setting with no value and no default is simply absent;
//!   [`check_values`] lists it, with every other problem of a stored map, for a
//!   diagnostic;
//! - `ctx.secrets` reaches only the keys of `secretSlots` ([`check_secret_key`]).
//!
//! Each problem names the key, what was found and what was expected; what the
//! extension itself sees when Spirit refuses is [`SettingError::spirit_message`].
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
//! assert_eq!(errors[0].spirit_message(), "Extension setting limit must be a number.");
//!
//! let all = with_defaults(&schema, &Values::new()).unwrap();
//! assert_eq!(serde_json::Value::Object(all), json!({ "region": "us" }));
//! # Ok::<(), serde_json::Error>(())
//! ```

use curupira_diagnostics::did_you_mean;
use curupira_diagnostics::js::JsTrim;
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
    /// `null` for a `required` setting without a `defaultValue`, which cannot be
    /// cleared.
    #[error("setting `{key}` is required and has no `defaultValue`, so it cannot be cleared: expected {}, found null", expectation(*expected))]
    RequiredNull {
        /// The setting.
        key: String,
        /// The setting's type.
        expected: SettingType,
    },
    /// A blank string (empty or only whitespace) for a `required` string setting.
    #[error(
        "setting `{key}` is required: expected a string that is not blank, found {}",
        quoted(value)
    )]
    Blank {
        /// The setting.
        key: String,
        /// The string found.
        value: String,
    },
    /// A stored `null` (a cleared setting is removed from the stored map, never kept
    /// as `null`): Spirit cannot read it.
    #[error("setting `{key}` is stored as null: expected {} (a cleared setting is left out of the stored values)", expectation(*expected))]
    StoredNull {
        /// The setting.
        key: String,
        /// The setting's type.
        expected: SettingType,
    },
    /// A `required` setting with no value and no `defaultValue`: Spirit reads it as
    /// absent (`undefined`).
    #[error("setting `{key}` is required but has no value and no `defaultValue`: Spirit reads it as undefined; expected {}", expectation(*expected))]
    Required {
        /// The setting.
        key: String,
        /// The setting's type.
        expected: SettingType,
    },
}

impl SettingError {
    /// The setting the problem is about.
    pub fn key(&self) -> &str {
        match self {
            Self::UnknownKey { key, .. }
            | Self::WrongType { key, .. }
            | Self::NotAnOption { key, .. }
            | Self::RequiredNull { key, .. }
            | Self::Blank { key, .. }
            | Self::StoredNull { key, .. }
            | Self::Required { key, .. } => key,
        }
    }

    /// The message the extension's promise rejects with in the Spirit app (the
    /// words its settings accessors use), so that an extension that shows or
    /// matches the message behaves the same under this host. [`Required`] is never
    /// a rejection; its text is the same as its `Display`.
    ///
    /// [`Required`]: SettingError::Required
    pub fn spirit_message(&self) -> String {
        match self {
            Self::UnknownKey { key, .. } => {
                format!("The extension does not declare the setting: {key}")
            }
            Self::WrongType { key, expected, .. } => {
                let kind = match expected {
                    SettingType::Number => "number",
                    SettingType::Boolean => "boolean",
                    SettingType::String | SettingType::Select => "string",
                };
                format!("Extension setting {key} must be a {kind}.")
            }
            Self::NotAnOption { key, value, .. } => {
                format!("Extension setting {key} has an invalid value: {value}")
            }
            Self::RequiredNull { key, .. } => {
                format!("Extension setting {key} is required and cannot be cleared.")
            }
            Self::Blank { key, .. } | Self::StoredNull { key, .. } => {
                format!("Extension setting {key} must not be empty.")
            }
            Self::Required { .. } => self.to_string(),
        }
    }
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

impl SecretKeyError {
    /// The message the extension's promise rejects with in the Spirit app.
    pub fn spirit_message(&self) -> String {
        format!(
            "The extension does not declare the secret slot: {}",
            self.key
        )
    }
}

/// Checks the changes `ctx.settings.set(key, value)` or `setAll(values)` would write:
/// every key is declared, every value has its setting's type (a `select` value is one
/// of its options when it has any; a `required` string is not blank), and `null`,
/// which clears a setting, is not given to a `required` setting without a
/// `defaultValue`. Reports every problem, in the order of `changes`; Spirit refuses
/// the whole change at the first one.
pub fn check_update(schema: &[SettingDef], changes: &Values) -> Result<(), Vec<SettingError>> {
    let errors: Vec<SettingError> = changes
        .iter()
        .filter_map(|(key, value)| {
            let def = match check_setting_key(schema, key) {
                Ok(def) => def,
                Err(error) => return Some(error),
            };
            if value.is_null() {
                return (def.required && default_of(def).is_none()).then(|| {
                    SettingError::RequiredNull {
                        key: key.clone(),
                        expected: def.kind,
                    }
                });
            }
            check_value(def, value)
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Every problem of a stored settings map, in schema order: a declared setting whose
/// stored value breaks it (a stored `null` included), which makes every read fail,
/// and a `required` setting with neither a stored value nor a `defaultValue`
/// ([`SettingError::Required`]), which reads as absent. Entries the schema does not
/// declare are not read and not a problem.
pub fn check_values(schema: &[SettingDef], values: &Values) -> Result<(), Vec<SettingError>> {
    let mut errors = Vec::new();
    for def in schema {
        match values.get(&def.key) {
            Some(value) => errors.extend(check_stored(def, value)),
            None if def.required && default_of(def).is_none() => {
                errors.push(SettingError::Required {
                    key: def.key.clone(),
                    expected: def.kind,
                });
            }
            None => {}
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// What `ctx.settings.getAll()` returns for the stored `values`: each declared
/// setting's stored value, else its `defaultValue` (Spirit gives them in
/// `settingsSchema` order; [`Values`] keeps its keys sorted, and
/// `runtime::SettingsStore::get_all_in_order` keeps the schema's); a setting
/// with neither is left out, and so is every entry the schema does not declare. The
/// first stored value (in schema order) that breaks its setting is the error: Spirit
/// then fails every read.
pub fn with_defaults(schema: &[SettingDef], values: &Values) -> Result<Values, SettingError> {
    let mut all = Values::new();
    for def in schema {
        if let Some(value) = values.get(&def.key) {
            if let Some(error) = check_stored(def, value) {
                return Err(error);
            }
            all.insert(def.key.clone(), value.clone());
        } else if let Some(default) = default_of(def) {
            all.insert(def.key.clone(), default.clone());
        }
    }
    Ok(all)
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

/// Checks that `key` is declared in `settingsSchema` (what `ctx.settings.set` may
/// write) and returns its declaration.
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

/// The problem with a stored `value` of `def`, if there is one (`null` is one).
fn check_stored(def: &SettingDef, value: &Value) -> Option<SettingError> {
    if value.is_null() {
        return Some(SettingError::StoredNull {
            key: def.key.clone(),
            expected: def.kind,
        });
    }
    check_value(def, value)
}

/// The problem with the value (not `null`) `value` of `def`, if there is one.
fn check_value(def: &SettingDef, value: &Value) -> Option<SettingError> {
    let key = &def.key;
    match (def.kind, value) {
        (SettingType::String, Value::String(text)) => (def.required && text.js_trim().is_empty())
            .then(|| SettingError::Blank {
                key: key.clone(),
                value: text.clone(),
            }),
        (SettingType::Number, Value::Number(_)) | (SettingType::Boolean, Value::Bool(_)) => None,
        (SettingType::Select, Value::String(text)) => {
            if def.options.is_empty() || def.options.iter().any(|option| option.value == *text) {
                None
            } else {
                Some(SettingError::NotAnOption {
                    key: key.clone(),
                    value: text.clone(),
                    options: def.options.iter().map(|o| o.value.clone()).collect(),
                })
            }
        }
        _ => Some(SettingError::WrongType {
            key: key.clone(),
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
