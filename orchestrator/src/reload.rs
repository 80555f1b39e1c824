//! A configuration reloaded while the run runs: whoever watches the files (the
//! `curupira` binary, in `run --watch`) hands the run a new [`Plan`], or the diagnostics
//! of a file that does not check, through [`Reloads`]; the dispatch loop takes them
//! between its turns.
//!
//! What a new plan changes, and when:
//!
//! - **An automation it adds** is prepared (`trigger/schema`, `trigger/validate`) and
//!   starts polling at once.
//! - **An automation it changes** (its prompt, agent, limits, polling, trigger, …) is
//!   prepared again; the new version polls from its next round. When a round of it is
//!   open, that round polls no more, and the new version takes over once the round's
//!   last task finished: a task never changes prompt, agent or extension process while
//!   it runs or waits for a retry, and no task is dispatched with the old version after
//!   the change. An automation that had failed comes back when it changes.
//! - **An automation it removes** polls no more; its running tasks (and their retries)
//!   finish.
//! - The agents' overall limit (`max_concurrent`) applies at once; the extensions'
//!   definitions and time limits apply to the processes started from then on.
//!
//! A reload is all or nothing: when an added or changed automation cannot be prepared
//! (its extension does not start, or rejects the configuration), nothing of it is
//! applied and [`Event::ConfigRefused`](crate::Event::ConfigRefused) says why, as for a
//! file that does not check. What cannot change under a running host (the attempt
//! logs' folder, the repository, a persistent extension's process, and whatever the
//! caller lists: the state folder, the HTTP address) is reported as needing a restart
//! in [`Event::ConfigReloaded`](crate::Event::ConfigReloaded), and the running value is
//! kept.
//!
//! ```
//! use curupira_orchestrator::reload::Reloads;
//!
//! let reloads = Reloads::new();
//! // A watcher thread, on a file that does not check:
//! reloads.refuse(vec!["curupira.toml:3:1: error[config/toml]: expected `=`".to_owned()]);
//! assert_eq!(reloads.waiting(), 1);
//! ```

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::plan::Plan;

/// What a watcher handed the run.
#[derive(Debug)]
pub(crate) enum Offer {
    /// A configuration that checks, planned.
    Plan {
        /// The new plan.
        plan: Box<Plan>,
        /// What changed that only a restart applies, as the caller names it.
        restart_needed: Vec<String>,
    },
    /// A configuration that does not check: its diagnostics, one line each.
    Refused(Vec<String>),
}

/// The run's mailbox for reloaded configurations ([`crate::RunOptions::reloads`]): a
/// handle that can be cloned to a watcher thread. Offers are taken in the order given.
#[derive(Debug, Clone, Default)]
pub struct Reloads {
    queue: Arc<Mutex<VecDeque<Offer>>>,
}

impl Reloads {
    /// An empty mailbox.
    pub fn new() -> Reloads {
        Reloads::default()
    }

    /// Hands the run a new plan; `restart_needed` names the changes the caller knows
    /// it cannot apply (e.g. `"[settings.http] listen"`).
    pub fn offer(&self, plan: Plan, restart_needed: Vec<String>) {
        self.push(Offer::Plan {
            plan: Box::new(plan),
            restart_needed,
        });
    }

    /// Tells the run the configuration changed but does not check: it keeps the one it
    /// runs, and reports `diagnostics` (one line each).
    pub fn refuse(&self, diagnostics: Vec<String>) {
        self.push(Offer::Refused(diagnostics));
    }

    /// How many offers wait for the run.
    pub fn waiting(&self) -> usize {
        self.lock().len()
    }

    /// The oldest offer, if any.
    pub(crate) fn take(&self) -> Option<Offer> {
        self.lock().pop_front()
    }

    fn push(&self, offer: Offer) {
        self.lock().push_back(offer);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Offer>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A thread that looks for a changed configuration every so often and hands what it
/// finds to a run's [`Reloads`]; the looking is the caller's (`check`), the thread, its
/// pace and its end are this type's.
pub struct Watcher {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watcher {
    /// Calls `check` every `every` (the first time after one `every`) on a thread
    /// named `config-watcher`, until [`stop`](Self::stop).
    pub fn start(
        every: Duration,
        reloads: Reloads,
        mut check: impl FnMut(&Reloads) + Send + 'static,
    ) -> std::io::Result<Watcher> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let step = (every / 10).max(Duration::from_millis(1));
        let thread = std::thread::Builder::new()
            .name("config-watcher".to_owned())
            .spawn(move || {
                loop {
                    // Waits in steps, so a stop is seen soon.
                    let mut waited = Duration::ZERO;
                    while waited < every {
                        if stopped.load(Ordering::Acquire) {
                            return;
                        }
                        std::thread::sleep(step);
                        waited += step;
                    }
                    check(&reloads);
                }
            })?;
        Ok(Watcher {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the thread (within a tenth of its pace, or once a `check` under way
    /// returned) and waits for it.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}
