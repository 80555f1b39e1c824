//! The settings and secrets a run reads from `--settings` / `--secrets` and writes
//! back: `spirit_manifest::runtime`'s stores, each tied to its file. The settings file
//! is the app's stored values (`extension-state/ext-….json`): a JSON object, read as
//! it is, its values checked only when the extension reads them. The secrets file
//! stands for the desktop keyring (values trimmed); the CLI host has no secret
//! storage, so no secrets file is read for it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;
use spirit_manifest::files::MAX_JSON_BYTES;
use spirit_manifest::runtime::{SecretStorage, SecretStore, SettingsStore};
use spirit_manifest::{Host, PackageJson};

/// Why the settings or secrets file cannot be used. No message carries a secret's
/// value.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file cannot be read.
    #[error("could not read `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is larger than the limit.
    #[error("`{}` is larger than {MAX_JSON_BYTES} bytes: expected a small JSON object", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The file is not a JSON object.
    #[error("`{}` is not {what}: {problem}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// `a JSON object of setting values`…
        what: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// The secrets break the extension's `secretSlots`.
    #[error("`{}` breaks the extension's `secretSlots`: {}", path.display(), problems.join("; "))]
    Rules {
        /// The file.
        path: PathBuf,
        /// One sentence per problem.
        problems: Vec<String>,
    },
    /// The file cannot be written.
    #[error("could not write `{}`: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// The settings and secrets of one run, and the files they are kept in.
#[derive(Debug)]
pub struct Stores {
    /// `ctx.settings`.
    pub settings: SettingsStore,
    /// `ctx.secrets`.
    pub secrets: SecretStore,
    settings_file: Option<PathBuf>,
    secrets_file: Option<PathBuf>,
}

impl Stores {
    /// The package's stores for `host`, filled from the files when given (else
    /// empty, changes kept in memory only). The settings are kept as stored; the
    /// secrets must be strings of declared slots. For [`Host::Cli`] the secrets file
    /// is neither read nor written: that host has no secret storage.
    ///
    /// With `installed`, the settings file is an installed extension's
    /// `extension-state/ext-….json` in a Spirit data folder: absent until something is
    /// stored, so a missing file reads as no stored values (and is written when the
    /// extension stores one), as the app's accessors do.
    pub fn load(
        package: &PackageJson,
        host: Host,
        settings_file: Option<&Path>,
        installed: bool,
        secrets_file: Option<&Path>,
    ) -> Result<Self, StoreError> {
        let extension = &package.spirit_extension;
        let settings_values = match settings_file {
            Some(path) if installed && !path.exists() => serde_json::Map::new(),
            Some(path) => read_object(path, "a JSON object of setting values")?,
            None => serde_json::Map::new(),
        };
        let settings = SettingsStore::new(&extension.settings_schema, settings_values);
        let (storage, secrets_file) = match host {
            Host::Cli => (SecretStorage::None, None),
            Host::Desktop => (SecretStorage::Keyring, secrets_file),
        };
        let secret_values = match secrets_file {
            Some(path) => read_object(path, "a JSON object of secret strings")?,
            None => serde_json::Map::new(),
        };
        let secrets = SecretStore::new(&extension.secret_slots, secret_values, storage).map_err(
            |errors| StoreError::Rules {
                path: secrets_file.map(Path::to_owned).unwrap_or_default(),
                problems: errors.iter().map(ToString::to_string).collect(),
            },
        )?;
        Ok(Self {
            settings,
            secrets,
            settings_file: settings_file.map(Path::to_owned),
            secrets_file: secrets_file.map(Path::to_owned),
        })
    }

    /// Writes `settings` to the settings file (when there is one), then keeps it.
    pub fn commit_settings(&mut self, settings: SettingsStore) -> Result<(), StoreError> {
        if let Some(path) = &self.settings_file {
            write_json(path, &Value::Object(settings.values().clone()))?;
        }
        self.settings = settings;
        Ok(())
    }

    /// Writes `secrets` to the secrets file (when there is one), then keeps them.
    pub fn commit_secrets(&mut self, secrets: SecretStore) -> Result<(), StoreError> {
        if let Some(path) = &self.secrets_file {
            let values: serde_json::Map<String, Value> = secrets
                .values()
                .iter()
                .map(|(key, value)| (key.clone(), Value::String(value.clone())))
                .collect();
            write_json(path, &Value::Object(values))?;
        }
        self.secrets = secrets;
        Ok(())
    }
}

/// The JSON object in `path`, read up to the size limit.
fn read_object(
    path: &Path,
    what: &'static str,
) -> Result<serde_json::Map<String, Value>, StoreError> {
    let read_error = |source| StoreError::Read {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    file.take(MAX_JSON_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_JSON_BYTES {
        return Err(StoreError::TooLarge {
            path: path.to_owned(),
        });
    }
    let shape = |problem: String| StoreError::Shape {
        path: path.to_owned(),
        what,
        problem,
    };
    // serde_json's syntax errors name the line and column, never the text.
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(shape(format!(
            "found {}",
            spirit_manifest::curupira_diagnostics::json::type_name(&other)
        ))),
        Err(error) => Err(shape(format!("invalid JSON: {error}"))),
    }
}

/// Replaces `path` with `value` (pretty, with a final newline) through a temporary file
/// in the same folder, so the file is either the old one or the new one. The new file
/// is readable by its owner only (the temporary file's mode).
fn write_json(path: &Path, value: &Value) -> Result<(), StoreError> {
    let write_error = |source| StoreError::Write {
        path: path.to_owned(),
        source,
    };
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(folder).map_err(write_error)?;
    // A map of JSON values always serializes.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    file.write_all(text.as_bytes()).map_err(write_error)?;
    file.persist(path)
        .map_err(|error| write_error(error.error))?;
    Ok(())
}
