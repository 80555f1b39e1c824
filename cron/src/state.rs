//! What a cron automation's ticks depend on beyond its parameters, kept across runs:
//! when a host first saw it (the start of a window without `start_date`) and the
//! latest tick a host started (no earlier tick runs after it).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The version of the state file's document.
pub const VERSION: u32 = 1;

/// The state of every cron automation of a host, in memory or in a file
/// (`<state folder>/cron.json` for `curupira run`). Clones share it. The file is
/// rewritten whole on every change (a temporary file renamed over it, synced first),
/// so a host killed at any moment leaves the last document or the one before.
#[derive(Debug, Clone)]
pub struct CronState {
    path: Option<PathBuf>,
    document: Arc<Mutex<Document>>,
}

/// Why the state could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file exists but could not be read.
    #[error("cannot read the cron state {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not a state document of this version.
    #[error(
        "the cron state {} is not a cron state document ({message}); remove it to start \
         the windows without `start_date` afresh (the ledger still keeps every tick from \
         running twice)",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The file could not be written.
    #[error("cannot record the cron state in {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    version: u32,
    automations: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    first_seen: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_started: Option<i64>,
}

impl CronState {
    /// State that lasts as long as the process (a run without a state folder).
    pub fn in_memory() -> CronState {
        CronState {
            path: None,
            document: Arc::new(Mutex::new(Document {
                version: VERSION,
                ..Document::default()
            })),
        }
    }

    /// The state kept in `path`: empty when the file does not exist yet (it is made
    /// at the first change).
    pub fn open(path: &Path) -> Result<CronState, StateError> {
        let document = match std::fs::read(path) {
            Ok(bytes) => {
                let corrupt = |message: String| StateError::Corrupt {
                    path: path.to_owned(),
                    message,
                };
                let document: Document =
                    serde_json::from_slice(&bytes).map_err(|error| corrupt(error.to_string()))?;
                if document.version != VERSION {
                    return Err(corrupt(format!(
                        "version {}, this host reads version {VERSION}",
                        document.version
                    )));
                }
                document
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => Document {
                version: VERSION,
                ..Document::default()
            },
            Err(source) => {
                return Err(StateError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        Ok(CronState {
            path: Some(path.to_owned()),
            document: Arc::new(Mutex::new(document)),
        })
    }

    /// The file it is kept in, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// When a host first saw `automation`. Not seen yet: `now`, recorded when
    /// `record` (a dry run records nothing, so its window starts afresh each time).
    pub fn first_seen(
        &self,
        automation: &str,
        now: DateTime<Utc>,
        record: bool,
    ) -> Result<DateTime<Utc>, StateError> {
        let mut document = self.lock();
        if let Some(entry) = document.automations.get(automation) {
            return Ok(entry.first_seen);
        }
        if record {
            let mut changed = document.clone();
            changed.automations.insert(
                automation.to_owned(),
                Entry {
                    first_seen: now,
                    last_started: None,
                },
            );
            self.save(&changed)?;
            *document = changed;
        }
        Ok(now)
    }

    /// The latest tick (Unix seconds) a host started for `automation`.
    pub fn last_started(&self, automation: &str) -> Option<i64> {
        self.lock()
            .automations
            .get(automation)
            .and_then(|entry| entry.last_started)
    }

    /// Records that a host starts `automation`'s tick `tick` (Unix seconds): no tick
    /// before it is offered again.
    pub fn started(
        &self,
        automation: &str,
        tick: i64,
        now: DateTime<Utc>,
    ) -> Result<(), StateError> {
        let mut document = self.lock();
        let mut changed = document.clone();
        let entry = changed
            .automations
            .entry(automation.to_owned())
            .or_insert(Entry {
                first_seen: now,
                last_started: None,
            });
        if entry.last_started.is_some_and(|last| last >= tick) {
            return Ok(());
        }
        entry.last_started = Some(tick);
        self.save(&changed)?;
        *document = changed;
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Document> {
        self.document.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn save(&self, document: &Document) -> Result<(), StateError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let write = || -> io::Result<()> {
            let mut bytes = serde_json::to_vec_pretty(document).map_err(io::Error::other)?;
            bytes.push(b'\n');
            let mut temporary = path.clone().into_os_string();
            temporary.push(".tmp");
            let temporary = PathBuf::from(temporary);
            let mut file = std::fs::File::create(&temporary)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            drop(file);
            std::fs::rename(&temporary, path)?;
            if let Some(folder) = path
                .parent()
                .filter(|folder| !folder.as_os_str().is_empty())
            {
                std::fs::File::open(folder)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(|source| StateError::Write {
            path: path.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::at;

    #[test]
    fn what_a_host_saw_survives_it_and_a_dry_run_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cron.json");
        let state = CronState::open(&path).unwrap();
        let first = at("2026-12-07T10:00:30Z");
        assert_eq!(state.first_seen("c1", first, false).unwrap(), first);
        assert!(!path.exists(), "a dry run writes nothing");
        assert_eq!(state.first_seen("c1", first, true).unwrap(), first);
        state.started("c1", 1_796_634_000, first).unwrap();
        state.started("c1", 1_796_000_000, first).unwrap();

        let again = CronState::open(&path).unwrap();
        let later = at("2026-12-07T11:00:00Z");
        assert_eq!(again.first_seen("c1", later, true).unwrap(), first);
        assert_eq!(again.last_started("c1"), Some(1_796_634_000));
        assert_eq!(again.last_started("c2"), None);
    }

    #[test]
    fn a_damaged_file_is_refused_with_its_path_and_the_way_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cron.json");
        std::fs::write(
            &path,
            b"{\"version\": 1, \"automations\": {\"c1\": {\"first_se",
        )
        .unwrap();
        let error = CronState::open(&path).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("the cron state {} is not", path.display())),
            "{error}"
        );
        assert!(error.contains("remove it"), "{error}");
    }
}
