//! `run --listen`: what the HTTP server (`curupira-http`) serves, answered from the
//! run's live state and a ledger connection of its own (reads, and the retry request
//! `tasks retry` makes).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use curupira_http::{Api, ApiError, TasksQuery};
use curupira_ledger::{AttemptRecord, Filter, Ledger, Status, TasksBackend};
use curupira_orchestrator::status::{Live, timestamp};
use curupira_workspace::state::Holder;
use serde_json::{Value, json};

use super::tasks::{Unresolved, attempt_numbered, resolve};

/// The running host, as its server sees it; or, for `curupira status --serve`, the
/// state folder and the ledger after (or beside) a run, read-only.
pub struct HostApi {
    /// The state folder.
    pub state_dir: PathBuf,
    /// The run's live state; `None` when no run of this process serves: the state is
    /// read as `curupira status` reads it (`run.lock`, `status.json`, the ledger).
    pub live: Option<Live>,
    /// Whether the retry request is refused (`curupira status --serve`).
    pub read_only: bool,
    /// The ledger's file and a connection of the server's own; `None` without a
    /// ledger.
    pub ledger: Option<(PathBuf, Mutex<Ledger>)>,
}

impl HostApi {
    fn ledger<T>(
        &self,
        read: impl FnOnce(&Path, &mut Ledger) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let Some((path, ledger)) = &self.ledger else {
            return Err(ApiError::new(
                404,
                "no-ledger",
                "this host runs without a task ledger (`[settings.ledger] enabled = false`)",
            ));
        };
        let mut ledger = ledger.lock().unwrap_or_else(PoisonError::into_inner);
        read(path, &mut ledger)
    }
}

fn internal(error: impl std::fmt::Display) -> ApiError {
    ApiError::internal(error.to_string())
}

fn unresolved(error: Unresolved) -> ApiError {
    match error {
        Unresolved::NotFound(message) => ApiError::not_found(message),
        Unresolved::Ledger(error) => internal(error),
        other => ApiError::bad_request(other.to_string()),
    }
}

impl Api for HostApi {
    fn state(&self) -> Result<Value, ApiError> {
        let Some(live) = &self.live else {
            let status = match &self.ledger {
                Some((path, ledger)) => {
                    let ledger = ledger.lock().unwrap_or_else(PoisonError::into_inner);
                    curupira_host::status::collect(
                        &self.state_dir,
                        Some((path, &*ledger as &dyn TasksBackend)),
                        SystemTime::now(),
                    )
                }
                None => curupira_host::status::collect(&self.state_dir, None, SystemTime::now()),
            }
            .map_err(internal)?;
            return serde_json::to_value(status).map_err(internal);
        };
        let holder = Holder::Held {
            pid: Some(std::process::id()),
        };
        let published = Some(live.snapshot());
        let status = match &self.ledger {
            Some((path, ledger)) => {
                let ledger = ledger.lock().unwrap_or_else(PoisonError::into_inner);
                curupira_host::status::collect_from(
                    &self.state_dir,
                    holder,
                    published,
                    Some((path, &*ledger as &dyn TasksBackend)),
                    SystemTime::now(),
                )
            }
            None => curupira_host::status::collect_from(
                &self.state_dir,
                holder,
                published,
                None,
                SystemTime::now(),
            ),
        }
        .map_err(internal)?;
        serde_json::to_value(status).map_err(internal)
    }

    fn tasks(&self, query: &TasksQuery) -> Result<Value, ApiError> {
        self.ledger(|_, ledger| {
            let filter = Filter {
                automation: query.automation.clone(),
                status: query.status.as_deref().and_then(Status::parse),
            };
            let rows = ledger.list(&filter, query.limit).map_err(internal)?;
            serde_json::to_value(rows).map_err(internal)
        })
    }

    fn task(&self, id: &str) -> Result<Value, ApiError> {
        self.ledger(|path, ledger| {
            let row = resolve(ledger, path, id, None).map_err(unresolved)?;
            let history = ledger
                .attempts(&row.automation, &row.task_id)
                .map_err(internal)?;
            let mut shown = serde_json::to_value(&row).map_err(internal)?;
            if let Some(object) = shown.as_object_mut() {
                object.insert(
                    "history".to_owned(),
                    serde_json::to_value(history).map_err(internal)?,
                );
            }
            Ok(shown)
        })
    }

    fn log(&self, id: &str, attempt: Option<u32>) -> Result<String, ApiError> {
        let record: AttemptRecord = self.ledger(|path, ledger| {
            let row = resolve(ledger, path, id, None).map_err(unresolved)?;
            let attempts = ledger
                .attempts(&row.automation, &row.task_id)
                .map_err(internal)?;
            attempt_numbered(attempts, attempt).ok_or_else(|| {
                ApiError::not_found(match attempt {
                    Some(n) => format!("task {} has no attempt {n}", row.task_id),
                    None => format!("task {} has no attempt", row.task_id),
                })
            })
        })?;
        let Some(log_path) = record.log_path else {
            return Ok(String::new());
        };
        match std::fs::read(&log_path) {
            Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            // Made at the attempt's first line: none yet is an empty log.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(err) => Err(internal(format!("cannot read the log `{log_path}`: {err}"))),
        }
    }

    fn retry(&self, id: &str) -> Result<Value, ApiError> {
        if self.read_only {
            return Err(ApiError::new(
                403,
                "read-only",
                "this page is served read-only (`curupira status --serve`); ask for a retry \
                 with `curupira tasks retry ID`",
            ));
        }
        self.ledger(|path, ledger| {
            let row = resolve(ledger, path, id, None).map_err(unresolved)?;
            if row.status == Status::Running {
                return Err(ApiError::conflict(format!(
                    "task {} of automation `{}` is running; retry it once it ended",
                    row.task_id, row.automation
                )));
            }
            let key = (row.automation, row.task_id);
            ledger
                .request_retry(std::slice::from_ref(&key))
                .map_err(internal)?;
            Ok(json!({"automation": key.0, "task_id": key.1, "retry_requested": true}))
        })
    }

    fn outcomes(&self, hours: u32) -> Result<Value, ApiError> {
        let rows = self.ledger(|_, ledger| ledger.finished_per_hour(hours).map_err(internal))?;
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let this_hour = now.as_secs() / 3600 * 3600;
        let hours_list: Vec<Value> = (0..u64::from(hours))
            .rev()
            .map(|back| {
                let start = this_hour.saturating_sub(back * 3600);
                let start_ms = i64::try_from(start * 1000).unwrap_or(i64::MAX);
                let count = |status: Status| -> u64 {
                    rows.iter()
                        .filter(|(hour, s, _)| *hour == start_ms && *s == status)
                        .map(|(_, _, n)| n)
                        .sum()
                };
                json!({
                    "hour": timestamp(SystemTime::UNIX_EPOCH + Duration::from_secs(start)),
                    "succeeded": count(Status::Succeeded),
                    "failed": count(Status::Failed),
                    "interrupted": count(Status::Interrupted),
                })
            })
            .collect();
        Ok(Value::Array(hours_list))
    }
}
