//! What a Spirit host does at run time with `ctx.settings`, `ctx.secrets` and a tool's
//! schemas, as operations over stores that keep the rules of [`crate::settings`].
//!
//! - [`SettingsStore`]: `get(key)`, `getAll()`, `set(key, value)`, `setAll(values)`.
//!   Only declared keys are reachable; a value must have its setting's type (a
//!   `select` value is one of its options); `null` clears a setting (it is removed
//!   from the stored values, so its `defaultValue` shows again) and is refused for a
//!   `required` one. `setAll` merges its values into the stored ones and is
//!   all-or-nothing: one bad entry and nothing changes.
//! - [`SecretStore`]: `get(key)`, `has(key)`, `set(key, value)`, `delete(key)`, only
//!   for the keys of `secretSlots`; a secret's value is a string. Its `Debug` shows
//!   the keys, never a value, and no error carries a value.
//! - [`check_instance`]: a tool's arguments against its `inputSchema`, or its result
//!   against its `outputSchema`, every problem with its RFC 6901 pointer inside the
//!   checked value.
//!
//! ```
//! use spirit_manifest::serde_json::{self, json};
//! use spirit_manifest::{SecretSlot, SettingDef};
//! use spirit_manifest::runtime::{SecretStore, SettingsStore};
//!
//! let schema: Vec<SettingDef> = serde_json::from_value(json!([
//!     { "key": "region", "type": "select", "title": "Region", "required": true,
//!       "defaultValue": "us",
//!       "options": [{ "value": "us", "label": "US" }, { "value": "eu", "label": "EU" }] }
//! ]))?;
//! let mut settings = SettingsStore::new(&schema, serde_json::Map::new()).unwrap();
//! assert_eq!(settings.get("region").unwrap(), Some(json!("us")));
//! assert!(settings.set("region", json!("asia")).is_err());
//! assert!(settings.set("region", json!(null)).is_err());
//! settings.set("region", json!("eu")).unwrap();
//! assert_eq!(settings.get_all(), *json!({ "region": "eu" }).as_object().unwrap());
//!
//! let slots: Vec<SecretSlot> =
//!     serde_json::from_value(json!([{ "key": "api_token", "title": "API token" }]))?;
//! let mut secrets = SecretStore::new(&slots, serde_json::Map::new()).unwrap();
//! assert_eq!(secrets.has("api_token").unwrap(), false);
//! secrets.set("api_token", &json!("s3cret")).unwrap();
//! assert_eq!(secrets.get("api_token").unwrap(), Some("s3cret"));
//! let error = secrets.get("token").unwrap_err();
//! assert_eq!(error.to_string(), "secret `token` is not declared in `secretSlots`: expected one of `api_token`");
//! assert!(!format!("{secrets:?}").contains("s3cret"));
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use curupira_diagnostics::json::type_name;
use serde_json::Value;

use crate::model::{SecretSlot, SettingDef};
use crate::settings::{
    SecretKeyError, SettingError, Values, check_secret_key, check_setting_key, check_update,
    check_values, with_defaults,
};

/// The settings of one extension: its `settingsSchema` and the values stored for it.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsStore {
    schema: Vec<SettingDef>,
    values: Values,
}

impl SettingsStore {
    /// A store holding `values`, which must be a valid stored map for `schema`
    /// ([`check_values`]: declared keys, right types, every `required` setting with a
    /// value or a default). A `null` value is a cleared setting and is dropped.
    pub fn new(schema: &[SettingDef], values: Values) -> Result<Self, Vec<SettingError>> {
        check_values(schema, &values)?;
        let values = values.into_iter().filter(|(_, v)| !v.is_null()).collect();
        Ok(Self {
            schema: schema.to_vec(),
            values,
        })
    }

    /// `ctx.settings.get(key)`: the stored value, else the `defaultValue`, else `None`.
    /// An undeclared key is an error.
    pub fn get(&self, key: &str) -> Result<Option<Value>, SettingError> {
        check_setting_key(&self.schema, key)?;
        Ok(self.get_all().remove(key).filter(|value| !value.is_null()))
    }

    /// `ctx.settings.getAll()`: the stored values with the declared defaults filled in.
    pub fn get_all(&self) -> Values {
        with_defaults(&self.schema, &self.values)
    }

    /// `ctx.settings.set(key, value)`: checked as one change of `setAll`.
    pub fn set(&mut self, key: &str, value: Value) -> Result<(), Vec<SettingError>> {
        let mut changes = Values::new();
        changes.insert(key.to_owned(), value);
        self.set_all(changes)
    }

    /// `ctx.settings.setAll(values)`: every entry is checked ([`check_update`]) before
    /// any is applied; then each value is stored, a `null` removing its key.
    pub fn set_all(&mut self, changes: Values) -> Result<(), Vec<SettingError>> {
        check_update(&self.schema, &changes)?;
        for (key, value) in changes {
            if value.is_null() {
                self.values.remove(&key);
            } else {
                self.values.insert(key, value);
            }
        }
        Ok(())
    }

    /// The stored values (no defaults), what a settings file holds.
    pub fn values(&self) -> &Values {
        &self.values
    }
}

/// A secret operation that breaks a rule of `secretSlots`. No variant carries a
/// secret's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// The key is not declared in `secretSlots`.
    #[error(transparent)]
    Undeclared(#[from] SecretKeyError),
    /// A value that is not a string.
    #[error("secret `{key}` takes a string: found {found}")]
    NotAString {
        /// The secret.
        key: String,
        /// The JSON type found: `a number`, `null`…
        found: &'static str,
    },
}

/// The secrets of one extension: its `secretSlots` and the values stored for them.
#[derive(Clone, PartialEq)]
pub struct SecretStore {
    slots: Vec<SecretSlot>,
    values: BTreeMap<String, String>,
}

impl fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretStore")
            .field(
                "slots",
                &self.slots.iter().map(|s| &s.key).collect::<Vec<_>>(),
            )
            .field("stored", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl SecretStore {
    /// A store holding `values`: every key declared, every value a string. Reports
    /// every problem.
    pub fn new(
        slots: &[SecretSlot],
        values: serde_json::Map<String, Value>,
    ) -> Result<Self, Vec<SecretError>> {
        let mut errors = Vec::new();
        let mut stored = BTreeMap::new();
        for (key, value) in values {
            match checked_value(slots, &key, &value) {
                Ok(text) => {
                    stored.insert(key, text.to_owned());
                }
                Err(error) => errors.push(error),
            }
        }
        if errors.is_empty() {
            Ok(Self {
                slots: slots.to_vec(),
                values: stored,
            })
        } else {
            Err(errors)
        }
    }

    /// `ctx.secrets.get(key)`: the value, or `None` when none is stored.
    pub fn get(&self, key: &str) -> Result<Option<&str>, SecretError> {
        check_secret_key(&self.slots, key)?;
        Ok(self.values.get(key).map(String::as_str))
    }

    /// `ctx.secrets.has(key)`.
    pub fn has(&self, key: &str) -> Result<bool, SecretError> {
        Ok(self.get(key)?.is_some())
    }

    /// `ctx.secrets.set(key, value)`: `value` must be a string.
    pub fn set(&mut self, key: &str, value: &Value) -> Result<(), SecretError> {
        let text = checked_value(&self.slots, key, value)?;
        self.values.insert(key.to_owned(), text.to_owned());
        Ok(())
    }

    /// `ctx.secrets.delete(key)`: whether a value was stored.
    pub fn delete(&mut self, key: &str) -> Result<bool, SecretError> {
        check_secret_key(&self.slots, key)?;
        Ok(self.values.remove(key).is_some())
    }

    /// The `required` slots that have no value, in `secretSlots` order.
    pub fn missing_required(&self) -> Vec<&str> {
        self.slots
            .iter()
            .filter(|slot| slot.required && !self.values.contains_key(&slot.key))
            .map(|slot| slot.key.as_str())
            .collect()
    }

    /// The stored values, what a secrets file holds. Never print them.
    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }
}

/// `value` as the string a secret `key` may hold.
fn checked_value<'v>(
    slots: &[SecretSlot],
    key: &str,
    value: &'v Value,
) -> Result<&'v str, SecretError> {
    check_secret_key(slots, key)?;
    value.as_str().ok_or_else(|| SecretError::NotAString {
        key: key.to_owned(),
        found: type_name(value),
    })
}

/// One way a value breaks a tool's `inputSchema` or `outputSchema`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceProblem {
    /// RFC 6901 pointer inside the checked value (`""` for the value itself).
    pub pointer: String,
    /// One sentence.
    pub message: String,
}

/// Checks `instance` against `schema` (a tool's `inputSchema` or `outputSchema`, which
/// the package check found valid); every problem, in the validator's order. A schema
/// that cannot be compiled (a `$ref` to a document that is not at hand) is one problem
/// at the root.
///
/// ```
/// use spirit_manifest::runtime::check_instance;
/// use spirit_manifest::serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]});
/// assert!(check_instance(&schema, &json!({"id": "7"})).is_ok());
/// let problems = check_instance(&schema, &json!({"id": 7})).unwrap_err();
/// assert_eq!(problems[0].pointer, "/id");
/// assert_eq!(problems[0].message, "7 is not of type \"string\"");
/// ```
pub fn check_instance(schema: &Value, instance: &Value) -> Result<(), Vec<InstanceProblem>> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(validator) => validator,
        Err(error) => {
            return Err(vec![InstanceProblem {
                pointer: String::new(),
                message: format!(
                    "the schema could not be compiled: {}",
                    one_line(&error.to_string())
                ),
            }]);
        }
    };
    if validator.is_valid(instance) {
        return Ok(());
    }
    Err(validator
        .iter_errors(instance)
        .map(|error| InstanceProblem {
            pointer: error.instance_path().as_str().to_owned(),
            message: one_line(&error.to_string()),
        })
        .collect())
}

/// The validator's message on one line and at most 200 characters (it quotes the
/// offending value, which can be large).
fn one_line(message: &str) -> String {
    let line: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= 200 {
        return line;
    }
    let cut: String = line.chars().take(199).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Vec<SettingDef> {
        serde_json::from_value(json!([
            { "key": "region", "type": "select", "title": "Region", "required": true,
              "defaultValue": "us",
              "options": [{ "value": "us", "label": "US" }, { "value": "eu", "label": "EU" }] },
            { "key": "limit", "type": "number", "title": "Limit", "defaultValue": 5 },
            { "key": "label", "type": "string", "title": "Label" }
        ]))
        .unwrap()
    }

    fn values(value: Value) -> Values {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn get_falls_back_to_the_default_and_refuses_undeclared_keys() {
        let store = SettingsStore::new(&schema(), values(json!({"limit": 9}))).unwrap();
        assert_eq!(store.get("limit").unwrap(), Some(json!(9)));
        assert_eq!(store.get("region").unwrap(), Some(json!("us")));
        assert_eq!(store.get("label").unwrap(), None);
        let error = store.get("regoin").unwrap_err();
        assert_eq!(
            error.to_string(),
            "setting `regoin` is not declared in `settingsSchema`: did you mean `region`?"
        );
    }

    #[test]
    fn null_clears_and_the_default_shows_again() {
        let mut store = SettingsStore::new(&schema(), values(json!({"limit": 9}))).unwrap();
        store.set("limit", Value::Null).unwrap();
        assert_eq!(store.values(), &Values::new());
        assert_eq!(store.get("limit").unwrap(), Some(json!(5)));
        let errors = store.set("region", Value::Null).unwrap_err();
        assert!(matches!(errors[0], SettingError::RequiredNull { .. }));
    }

    #[test]
    fn set_all_is_all_or_nothing() {
        let mut store = SettingsStore::new(&schema(), Values::new()).unwrap();
        let errors = store
            .set_all(values(
                json!({"label": "x", "region": "asia", "limit": "3"}),
            ))
            .unwrap_err();
        assert_eq!(errors.len(), 2);
        assert_eq!(store.values(), &Values::new());
        store
            .set_all(values(json!({"label": "x", "region": "eu"})))
            .unwrap();
        assert_eq!(
            store.values(),
            &values(json!({"label": "x", "region": "eu"}))
        );
    }

    #[test]
    fn a_stored_map_is_checked_when_the_store_is_made() {
        let errors =
            SettingsStore::new(&schema(), values(json!({"limit": true, "x": 1}))).unwrap_err();
        assert_eq!(errors.len(), 2);
    }

    #[test]
    fn secrets_are_strings_of_declared_slots_and_never_shown() {
        let slots: Vec<SecretSlot> = serde_json::from_value(json!([
            { "key": "api_token", "title": "API token", "required": true },
            { "key": "other", "title": "Other" }
        ]))
        .unwrap();
        let errors = SecretStore::new(&slots, values(json!({"api_token": 42, "nope": "hidden"})))
            .unwrap_err();
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "secret `api_token` takes a string: found a number",
                "secret `nope` is not declared in `secretSlots`: expected one of `api_token`, `other`"
            ]
        );
        let mut store = SecretStore::new(&slots, Values::new()).unwrap();
        assert_eq!(store.missing_required(), ["api_token"]);
        store.set("api_token", &json!("hidden-value")).unwrap();
        assert!(store.missing_required().is_empty());
        let error = store.set("other", &json!(null)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "secret `other` takes a string: found null"
        );
        assert!(store.delete("api_token").unwrap());
        assert!(!store.delete("api_token").unwrap());
        assert!(store.has("nope").is_err());
        store.set("other", &json!("hidden-value")).unwrap();
        assert!(!format!("{store:?}").contains("hidden-value"));
    }

    #[test]
    fn instance_problems_point_inside_the_value() {
        let schema = json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
            "required": ["name"]
        });
        let problems = check_instance(&schema, &json!({"items": [1, "two"]})).unwrap_err();
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert!(pointers.contains(&"/items/1"), "{problems:?}");
        assert!(pointers.contains(&""), "{problems:?}");
    }
}
