//! What a Spirit host does at run time with `ctx.settings`, `ctx.secrets` and a tool's
//! schemas, as operations over stores that keep the rules of [`crate::settings`] the
//! way the Spirit app's accessors keep them.
//!
//! - [`SettingsStore`]: `get(key)`, `getAll()`, `set(key, value)`, `setAll(values)`.
//!   The store holds the values as stored, unchecked: reads check them, and a stored
//!   value that breaks its setting makes every read fail. `get` of an undeclared key
//!   gives nothing; a write to one is refused. A value must have its setting's type
//!   (a `select` value is one of its options, a `required` string is not blank);
//!   `null` clears a setting (it is removed from the stored values, so its
//!   `defaultValue` shows again) and is refused only for a `required` setting without
//!   a default. `setAll` is all-or-nothing and gives the values as `getAll` would.
//! - [`SecretStore`]: `get(key)`, `has(key)`, `set(key, value)`, `delete(key)`, only
//!   for the keys of `secretSlots`, over a [`SecretStorage`]: none at all (the CLI
//!   host: nothing is ever stored, `set` fails) or a keyring that trims values (the
//!   desktop host). Its `Debug` shows the keys, never a value, and no error carries a
//!   value.
//! - [`check_instance`]: a tool's arguments against its `inputSchema`, or its result
//!   against its `outputSchema`, every problem with its RFC 6901 pointer inside the
//!   checked value. Spirit checks neither; a host reports what this finds without
//!   changing the outcome.
//!
//! ```
//! use spirit_manifest::serde_json::{self, json};
//! use spirit_manifest::{SecretSlot, SettingDef};
//! use spirit_manifest::runtime::{SecretStorage, SecretStore, SettingsStore};
//!
//! let schema: Vec<SettingDef> = serde_json::from_value(json!([
//!     { "key": "region", "type": "select", "title": "Region", "required": true,
//!       "defaultValue": "us",
//!       "options": [{ "value": "us", "label": "US" }, { "value": "eu", "label": "EU" }] }
//! ]))?;
//! let mut settings = SettingsStore::new(&schema, serde_json::Map::new());
//! assert_eq!(settings.get("region").unwrap(), Some(json!("us")));
//! assert_eq!(settings.get("undeclared").unwrap(), None);
//! assert!(settings.set("region", json!("asia")).is_err());
//! settings.set("region", json!("eu")).unwrap();
//! assert_eq!(settings.get_all().unwrap(), *json!({ "region": "eu" }).as_object().unwrap());
//! settings.set("region", json!(null)).unwrap(); // cleared: the default shows again
//! assert_eq!(settings.get("region").unwrap(), Some(json!("us")));
//!
//! let slots: Vec<SecretSlot> =
//!     serde_json::from_value(json!([{ "key": "api_token", "title": "API token" }]))?;
//! let mut secrets = SecretStore::new(&slots, serde_json::Map::new(), SecretStorage::Keyring).unwrap();
//! assert_eq!(secrets.has("api_token").unwrap(), false);
//! secrets.set("api_token", &json!("  s3cret ")).unwrap();
//! assert_eq!(secrets.get("api_token").unwrap(), Some("s3cret"));
//! let error = secrets.get("token").unwrap_err();
//! assert_eq!(error.to_string(), "secret `token` is not declared in `secretSlots`: expected one of `api_token`");
//! assert!(!format!("{secrets:?}").contains("s3cret"));
//!
//! let mut cli = SecretStore::new(&slots, serde_json::Map::new(), SecretStorage::None).unwrap();
//! assert!(cli.set("api_token", &json!("s3cret")).is_err());
//! assert_eq!(cli.get("api_token").unwrap(), None);
//! # Ok::<(), serde_json::Error>(())
//! ```

use curupira_diagnostics::js::JsTrim;
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
    /// A store holding `values` as they are stored, unchecked (Spirit checks them
    /// when they are read; [`SettingsStore::problems`] says what a read would find).
    pub fn new(schema: &[SettingDef], values: Values) -> Self {
        Self {
            schema: schema.to_vec(),
            values,
        }
    }

    /// `ctx.settings.get(key)`: the value `getAll` has for `key`; `None` for an
    /// undeclared key or a setting with no value and no default. A stored value that
    /// breaks its setting is the error, whatever `key` is.
    pub fn get(&self, key: &str) -> Result<Option<Value>, SettingError> {
        Ok(self.get_all()?.remove(key))
    }

    /// `ctx.settings.getAll()`: [`with_defaults`] of the stored values.
    pub fn get_all(&self) -> Result<Values, SettingError> {
        with_defaults(&self.schema, &self.values)
    }

    /// [`SettingsStore::get_all`] in `settingsSchema` order, the order of the
    /// members of the object Spirit gives the extension (a [`Values`] map keeps its
    /// keys sorted).
    pub fn get_all_in_order(&self) -> Result<Vec<(String, Value)>, SettingError> {
        let mut all = self.get_all()?;
        Ok(self
            .schema
            .iter()
            .filter_map(|def| all.remove(&def.key).map(|value| (def.key.clone(), value)))
            .collect())
    }

    /// `ctx.settings.set(key, value)`: checked as one change of `setAll`.
    pub fn set(&mut self, key: &str, value: Value) -> Result<(), Vec<SettingError>> {
        let mut changes = Values::new();
        changes.insert(key.to_owned(), value);
        self.set_all(changes)
    }

    /// `ctx.settings.setAll(values)`: every entry is checked ([`check_update`]) before
    /// any is applied; then each value is stored, a `null` removing its key. Stored
    /// entries the changes do not name are kept as they are.
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

    /// Whether `key` is declared in `settingsSchema`.
    pub fn declares(&self, key: &str) -> bool {
        check_setting_key(&self.schema, key).is_ok()
    }

    /// What is wrong with the stored values ([`check_values`]): values every read
    /// fails on, `required` settings that read as absent.
    pub fn problems(&self) -> Vec<SettingError> {
        check_values(&self.schema, &self.values)
            .err()
            .unwrap_or_default()
    }

    /// The stored values (no defaults), what a settings file holds.
    pub fn values(&self) -> &Values {
        &self.values
    }
}

/// Where a host keeps secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretStorage {
    /// None at all (the Spirit CLI host): `get` gives nothing, `has` is false, `set`
    /// fails, `delete` does nothing.
    None,
    /// A keyring that trims values when it saves and loads them, and holds a blank
    /// value as no value (the Spirit desktop host).
    Keyring,
}

/// A secret operation that breaks a rule of `secretSlots`, or that the host cannot
/// do. No variant carries a secret's value.
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
    /// `set` on a host with no secret storage.
    #[error("this host has no secret storage: `ctx.secrets.set(\"{key}\", …)` always fails")]
    NoStorage {
        /// The secret.
        key: String,
    },
}

impl SecretError {
    /// The message the extension's promise rejects with in the Spirit app, for the
    /// extension `extension` (its id).
    pub fn spirit_message(&self, extension: &str) -> String {
        match self {
            Self::Undeclared(error) => error.spirit_message(),
            // The desktop store trims what it is given (`value.trim()`): V8's TypeError.
            Self::NotAString { found: "null", .. } => {
                "Cannot read properties of null (reading 'trim')".to_owned()
            }
            Self::NotAString { .. } => "value.trim is not a function".to_owned(),
            Self::NoStorage { .. } => {
                format!("The current host does not implement extension secret storage: {extension}")
            }
        }
    }
}

/// The secrets of one extension: its `secretSlots`, where they are kept, and the
/// values stored for them.
#[derive(Clone, PartialEq)]
pub struct SecretStore {
    slots: Vec<SecretSlot>,
    storage: SecretStorage,
    values: BTreeMap<String, String>,
    trimmed: Vec<String>,
}

impl fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretStore")
            .field(
                "slots",
                &self.slots.iter().map(|s| &s.key).collect::<Vec<_>>(),
            )
            .field("storage", &self.storage)
            .field("stored", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl SecretStore {
    /// A store holding `values` (every key declared, every value a string; reports
    /// every problem). With [`SecretStorage::None`] nothing is kept, whatever
    /// `values` holds; with [`SecretStorage::Keyring`] each value is trimmed.
    pub fn new(
        slots: &[SecretSlot],
        values: serde_json::Map<String, Value>,
        storage: SecretStorage,
    ) -> Result<Self, Vec<SecretError>> {
        let mut store = Self {
            slots: slots.to_vec(),
            storage,
            values: BTreeMap::new(),
            trimmed: Vec::new(),
        };
        let mut errors = Vec::new();
        for (key, value) in values {
            match checked_value(slots, &key, &value) {
                Ok(text) => store.keep(&key, text),
                Err(error) => errors.push(error),
            }
        }
        if errors.is_empty() {
            Ok(store)
        } else {
            Err(errors)
        }
    }

    fn keep(&mut self, key: &str, text: &str) {
        if self.storage == SecretStorage::None {
            return;
        }
        let trimmed = text.js_trim();
        if trimmed.len() != text.len() && !self.trimmed.iter().any(|k| k == key) {
            self.trimmed.push(key.to_owned());
        }
        self.values.insert(key.to_owned(), trimmed.to_owned());
    }

    /// Where the secrets are kept.
    pub fn storage(&self) -> SecretStorage {
        self.storage
    }

    /// `ctx.secrets.get(key)`: the value, or `None` when none (or a blank one) is
    /// stored.
    pub fn get(&self, key: &str) -> Result<Option<&str>, SecretError> {
        check_secret_key(&self.slots, key)?;
        Ok(self
            .values
            .get(key)
            .map(String::as_str)
            .filter(|value| !value.is_empty()))
    }

    /// `ctx.secrets.has(key)`.
    pub fn has(&self, key: &str) -> Result<bool, SecretError> {
        Ok(self.get(key)?.is_some())
    }

    /// `ctx.secrets.set(key, value)`: `value` must be a string; the keyring keeps it
    /// trimmed (`Ok(true)` when that removed something). Fails on a host with no
    /// secret storage.
    pub fn set(&mut self, key: &str, value: &Value) -> Result<bool, SecretError> {
        check_secret_key(&self.slots, key)?;
        if self.storage == SecretStorage::None {
            return Err(SecretError::NoStorage {
                key: key.to_owned(),
            });
        }
        let text = checked_value(&self.slots, key, value)?;
        self.keep(key, text);
        Ok(text.js_trim().len() != text.len())
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
            .filter(|slot| slot.required && !self.has(&slot.key).unwrap_or(false))
            .map(|slot| slot.key.as_str())
            .collect()
    }

    /// The keys whose value had spaces around it that the keyring trimmed, in the
    /// order first trimmed.
    pub fn trimmed(&self) -> &[String] {
        &self.trimmed
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
            { "key": "label", "type": "string", "title": "Label" },
            { "key": "endpoint", "type": "string", "title": "Endpoint", "required": true }
        ]))
        .unwrap()
    }

    fn values(value: Value) -> Values {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn get_falls_back_to_the_default_and_reads_undeclared_keys_as_nothing() {
        let store = SettingsStore::new(&schema(), values(json!({"limit": 9})));
        assert_eq!(store.get("limit").unwrap(), Some(json!(9)));
        assert_eq!(store.get("region").unwrap(), Some(json!("us")));
        assert_eq!(store.get("label").unwrap(), None);
        assert_eq!(store.get("endpoint").unwrap(), None);
        assert_eq!(store.get("regoin").unwrap(), None);
        assert!(!store.declares("regoin"));
        // getAll follows the schema's order.
        let store = SettingsStore::new(&schema(), values(json!({"endpoint": "e"})));
        let keys: Vec<String> = store
            .get_all_in_order()
            .unwrap()
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        assert_eq!(keys, ["region", "limit", "endpoint"]);
    }

    #[test]
    fn a_stored_value_that_breaks_its_setting_fails_every_read() {
        let store = SettingsStore::new(&schema(), values(json!({"region": "asia", "x": 1})));
        for key in ["region", "limit", "x"] {
            let error = store.get(key).unwrap_err();
            assert_eq!(
                error.spirit_message(),
                "Extension setting region has an invalid value: asia"
            );
        }
        let problems = store.problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(matches!(problems[1], SettingError::Required { .. }));
    }

    #[test]
    fn null_clears_unless_required_without_a_default() {
        let mut store = SettingsStore::new(&schema(), values(json!({"limit": 9, "region": "eu"})));
        store.set("limit", Value::Null).unwrap();
        store.set("region", Value::Null).unwrap();
        assert_eq!(store.values(), &Values::new());
        assert_eq!(store.get("limit").unwrap(), Some(json!(5)));
        let errors = store.set("endpoint", Value::Null).unwrap_err();
        assert_eq!(
            errors[0].spirit_message(),
            "Extension setting endpoint is required and cannot be cleared."
        );
        let errors = store.set("endpoint", json!("  ")).unwrap_err();
        assert_eq!(
            errors[0].spirit_message(),
            "Extension setting endpoint must not be empty."
        );
        store.set("label", json!("")).unwrap();
    }

    #[test]
    fn set_all_is_all_or_nothing() {
        let mut store = SettingsStore::new(&schema(), Values::new());
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
    fn secrets_are_strings_of_declared_slots_and_never_shown() {
        let slots: Vec<SecretSlot> = serde_json::from_value(json!([
            { "key": "api_token", "title": "API token", "required": true },
            { "key": "other", "title": "Other" }
        ]))
        .unwrap();
        let errors = SecretStore::new(
            &slots,
            values(json!({"api_token": 42, "nope": "hidden"})),
            SecretStorage::Keyring,
        )
        .unwrap_err();
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "secret `api_token` takes a string: found a number",
                "secret `nope` is not declared in `secretSlots`: expected one of `api_token`, `other`"
            ]
        );
        let mut store = SecretStore::new(&slots, Values::new(), SecretStorage::Keyring).unwrap();
        assert_eq!(store.missing_required(), ["api_token"]);
        store.set("api_token", &json!(" hidden-value\n")).unwrap();
        assert_eq!(store.get("api_token").unwrap(), Some("hidden-value"));
        assert_eq!(store.trimmed(), ["api_token"]);
        assert!(store.missing_required().is_empty());
        let error = store.set("other", &json!(null)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "secret `other` takes a string: found null"
        );
        // What the extension's promise rejects with: the desktop store's `value.trim()`.
        assert_eq!(
            error.spirit_message("x"),
            "Cannot read properties of null (reading 'trim')"
        );
        let error = store.set("other", &json!(42)).unwrap_err();
        assert_eq!(error.spirit_message("x"), "value.trim is not a function");
        // A blank value is kept as no value.
        store.set("other", &json!("   ")).unwrap();
        assert!(!store.has("other").unwrap());
        assert!(store.delete("api_token").unwrap());
        assert!(!store.delete("api_token").unwrap());
        assert!(store.has("nope").is_err());
        store.set("other", &json!("hidden-value")).unwrap();
        assert!(!format!("{store:?}").contains("hidden-value"));
    }

    #[test]
    fn without_storage_nothing_is_kept_and_set_fails() {
        let slots: Vec<SecretSlot> =
            serde_json::from_value(json!([{ "key": "api_token", "title": "API token" }])).unwrap();
        let mut store = SecretStore::new(
            &slots,
            values(json!({"api_token": "x"})),
            SecretStorage::None,
        )
        .unwrap();
        assert_eq!(store.get("api_token").unwrap(), None);
        let error = store.set("api_token", &json!("x")).unwrap_err();
        assert_eq!(
            error.spirit_message("ext"),
            "The current host does not implement extension secret storage: ext"
        );
        assert!(!store.delete("api_token").unwrap());
        let error = store.set("nope", &json!("x")).unwrap_err();
        assert_eq!(
            error.spirit_message("ext"),
            "The extension does not declare the secret slot: nope"
        );
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
