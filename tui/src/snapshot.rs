//! What the dashboard shows, as one value read at one moment ([`Snapshot`]): the host
//! and what it published, and the ledger's recent tasks. Plain data: [`Source`]
//! (crate::Source) fills it from the state folder, a test fills it by hand.

use curupira_ledger::TaskRecord;
use curupira_orchestrator::status::{AutomationState, RunningAttempt, WaitingRetry};

/// Everything one look at the state folder found.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Snapshot {
    /// Whether a host runs, and what it said of itself.
    pub host: Host,
    /// What runs now, the oldest first (empty unless a host runs).
    pub running: Vec<RunningAttempt>,
    /// What waits for a retry, the soonest first (empty unless a host runs).
    pub retrying: Vec<WaitingRetry>,
    /// Each automation of the (last) host's run, in its order.
    pub automations: Vec<Automation>,
    /// The ledger's most recently changed tasks that are not running, newest first.
    pub recent: Vec<TaskRecord>,
    /// Whether there is a ledger to read.
    pub ledger: LedgerState,
    /// What could not be read, one sentence each (shown, never fatal).
    pub problems: Vec<String>,
}

/// Whether a host runs on the state folder, and what it published of itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Host {
    /// See [`HostState`].
    pub state: HostState,
    /// Its pid (the running one's, or the last one's).
    pub pid: Option<u32>,
    /// When it started (RFC 3339).
    pub started_at: Option<String>,
    /// When it ended, for a host that stopped.
    pub ended_at: Option<String>,
    /// When it last published its state.
    pub published_at: Option<String>,
    /// The configuration file it runs.
    pub config: Option<String>,
    /// Whether it is stopping: no new task starts.
    pub stopping: bool,
}

/// [`Host::state`], as `curupira status` names it.
pub use curupira_orchestrator::status::HostState;

/// An automation of the host's run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Automation {
    /// Its rounds, as the host published them.
    pub state: AutomationState,
    /// When a cron automation's next tick is due (RFC 3339), when the host said.
    pub next_tick: Option<String>,
}

impl Automation {
    /// An automation from its published state, with no tick known.
    pub fn new(state: AutomationState) -> Automation {
        Automation {
            state,
            next_tick: None,
        }
    }
}

/// Whether the dashboard has a ledger to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum LedgerState {
    /// `[settings.ledger] enabled = false`: no history, no logs, no retries.
    Off,
    /// No run has written it yet.
    #[default]
    Missing,
    /// Read.
    Read,
}
