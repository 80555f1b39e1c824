//! `run --watch` watching its configuration: the config file and the prompt files it
//! names are read every second; when their bytes change, the file is loaded, checked
//! and planned as at the start, and the run gets the new plan or, when it does not
//! check, its diagnostics ([`curupira_orchestrator::reload`] says what a plan changes
//! and when). What a running host cannot change (the state folder and ledger, the HTTP
//! address, the status settings, the log level) is reported as needing a restart.
//!
//! The files are compared by content, not by modification time: an editor that writes
//! the same bytes again, or a `touch`, reloads nothing, and a change within the same
//! second as the last one is still seen.

use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::time::Duration;

use curupira_diagnostics::Report;
use curupira_orchestrator::reload::{Reloads, Watcher};

use crate::config::{self, Config};
use crate::cron::CronContext;
use crate::events::{ReferenceKeys, reference_keys};

/// How often the files are read.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// The bytes of the files a configuration is made of: the config file, then each
/// prompt file it names (`None`: unreadable, which a reload reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
}

impl Fingerprint {
    /// The files of the config at `path`, whose prompt files are `config`'s (the last
    /// readable version; none when it was never readable).
    pub fn of(path: &Path, config: Option<&Config>) -> Fingerprint {
        let mut files = vec![path.to_owned()];
        if let Some(config) = config {
            files.extend(
                config
                    .automations
                    .iter()
                    .filter_map(|automation| automation.prompt_file.clone()),
            );
        }
        Fingerprint {
            files: files
                .into_iter()
                .map(|file| {
                    let bytes = std::fs::read(&file).ok();
                    (file, bytes)
                })
                .collect(),
        }
    }
}

/// What the watcher needs to plan a reloaded configuration as the run planned its own.
pub struct Watching {
    /// The config file, as the command line named it.
    pub path: PathBuf,
    /// This executable (the built-in extensions).
    pub host_exe: PathBuf,
    /// The `--automation` names (all when empty).
    pub selection: Vec<String>,
    /// The cron automations' state, shared with the run.
    pub cron: CronContext,
    /// The configuration the run started with: what needs a restart is measured
    /// against it.
    pub started: Config,
    /// The files as they were when the run loaded them.
    pub fingerprint: Fingerprint,
    /// Whether `--listen` was given (then `[settings.http]` does not matter).
    pub listen_given: bool,
    /// The reference host's task keys, when the run prints its lines.
    pub keys: Option<ReferenceKeys>,
}

/// Starts watching (a [`Watcher`] thread); what it finds goes to `reloads`.
pub fn watch(mut watching: Watching, reloads: Reloads) -> std::io::Result<Watcher> {
    let mut prompts_of = Some(watching.started.clone());
    Watcher::start(INTERVAL, reloads, move |reloads| {
        let now = Fingerprint::of(&watching.path, prompts_of.as_ref());
        if now == watching.fingerprint {
            return;
        }
        tracing::info!(
            "the configuration `{}` changed; reloading it",
            watching.path.display()
        );
        let readable = reload(&watching, reloads);
        if readable.is_some() {
            prompts_of = readable;
        }
        // The files as this reload read them, with the prompt files it names.
        watching.fingerprint = Fingerprint::of(&watching.path, prompts_of.as_ref());
    })
}

/// Loads, checks and plans the configuration once; hands the run the plan or the
/// diagnostics. Returns the configuration as far as it could be read.
fn reload(watching: &Watching, reloads: &Reloads) -> Option<Config> {
    let loaded = match config::load(&watching.path) {
        Ok(loaded) => loaded,
        Err(error) => {
            reloads.refuse(vec![error.to_string()]);
            return None;
        }
    };
    let readable = loaded.readable().cloned();
    let mut report = loaded.report;
    let Some(config) = loaded.config else {
        reloads.refuse(lines(&report));
        return readable;
    };
    let (resolved, found) =
        crate::plan::plan_run(&config, &watching.host_exe, false, &watching.selection);
    report.append(found);
    let Some(resolved) = resolved.filter(|_| !report.has_errors()) else {
        reloads.refuse(lines(&report));
        return readable;
    };
    for warning in report.diagnostics() {
        tracing::warn!("{warning}");
    }
    let plan =
        crate::plan::orchestrator_plan(&config, &resolved, &watching.selection, &watching.cron);
    if let Some(keys) = &watching.keys {
        keys.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(reference_keys(&plan));
    }
    reloads.offer(plan, restart_needed(watching, &config));
    readable
}

/// Every error of `report`, one line each (its warnings are not why it was refused).
fn lines(report: &Report) -> Vec<String> {
    report
        .diagnostics()
        .iter()
        .filter(|diagnostic| diagnostic.is_error())
        .map(ToString::to_string)
        .collect()
}

/// What `config` changes that only a restart applies, against the run's start.
fn restart_needed(watching: &Watching, config: &Config) -> Vec<String> {
    let (old, new) = (&watching.started.settings, &config.settings);
    let mut needed = Vec::new();
    if old.ledger != new.ledger {
        needed.push("the state folder and ledger (`[settings.ledger]`)".to_owned());
    }
    if !watching.listen_given && old.http != new.http {
        needed.push("the HTTP address (`[settings.http]`)".to_owned());
    }
    if old.status != new.status {
        needed.push("the status settings (`[settings.status]`)".to_owned());
    }
    let log_level = |settings: &config::Settings| {
        settings
            .reference
            .as_ref()
            .and_then(|reference| reference.log_level)
    };
    if log_level(old) != log_level(new) {
        needed.push("the log level".to_owned());
    }
    needed
}
