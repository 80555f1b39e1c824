//! The built-in `cron` trigger, wired into a run: each cron automation gets an
//! extension of its own, served in this process ([`Launch::InProcess`]) by a
//! [`CronTrigger`] that knows its automation, and they share one state
//! ([`CronState`], `<state folder>/cron.json` when the run keeps a ledger). The
//! schedule's next tick goes to the run's published status.

use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use curupira_client::{Client, Options, memory};
use curupira_cron::{CronState, CronTrigger, StateError, TRIGGER_TYPE};
use curupira_orchestrator::plan::{ExtensionPlan, Launch};
use curupira_orchestrator::status::Live;

/// The file of the cron state in the state folder.
pub const STATE_FILE: &str = "cron.json";

/// What the cron automations of one run share.
#[derive(Debug, Clone)]
pub struct CronContext {
    state: CronState,
    live: Arc<OnceLock<Live>>,
}

/// The name of the extension serving the cron automation `automation`: `cron:NAME`
/// (a name no configured extension can have, `:` being refused there).
pub fn extension_name(automation: &str) -> String {
    format!("{TRIGGER_TYPE}:{automation}")
}

/// Whether `extension` is one of [`extension_name`]'s.
pub fn is_cron_extension(extension: &str) -> bool {
    extension
        .strip_prefix(TRIGGER_TYPE)
        .is_some_and(|rest| rest.starts_with(':'))
}

impl CronContext {
    /// State that lasts as long as the process (a check, or a run without a ledger).
    pub fn in_memory() -> CronContext {
        CronContext {
            state: CronState::in_memory(),
            live: Arc::default(),
        }
    }

    /// The state of the run whose state folder is `state_dir`.
    pub fn in_folder(state_dir: &std::path::Path) -> Result<CronContext, StateError> {
        Ok(CronContext {
            state: CronState::open(&state_dir.join(STATE_FILE))?,
            live: Arc::default(),
        })
    }

    /// From now on, the schedules' next ticks go to `live`.
    pub fn publish_to(&self, live: &Live) {
        let _ = self.live.set(live.clone());
    }

    /// The extension of the cron automation `automation`; `default_zone` is the zone
    /// of a schedule without `timezone`.
    pub fn extension_plan(&self, automation: &str, default_zone: Option<String>) -> ExtensionPlan {
        let state = self.state.clone();
        let live = Arc::clone(&self.live);
        let owner = automation.to_owned();
        let connect = move |name: &str, options: Options| -> Client {
            let (client, extension) = memory::duplex(name, options);
            let published = Arc::clone(&live);
            let automation = owner.clone();
            let trigger = CronTrigger::new(owner.clone(), default_zone.clone(), state.clone())
                .with_next_tick(Arc::new(move |tick| {
                    if let Some(live) = published.get() {
                        live.next_tick(&automation, tick.map(SystemTime::from));
                    }
                }));
            let (reader, writer) = extension.split();
            if let Err(error) = trigger.serve_on_thread(reader, writer, env!("CARGO_PKG_VERSION")) {
                // The client's calls fail then, naming the extension.
                tracing::error!("cannot start the thread of the `cron` trigger: {error}");
            }
            client
        };
        ExtensionPlan {
            name: extension_name(automation),
            launch: Launch::InProcess(Arc::new(connect)),
            persistent: true,
            trigger_types: vec![TRIGGER_TYPE.to_owned()],
        }
    }
}
