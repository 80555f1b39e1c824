//! Stopping a run: [`Stop`] counts SIGINT/SIGTERM (with the `signals` feature) or
//! programmatic requests, so that each part of a host (its run loop, its agents' and
//! hooks' supervisors) decides what a first and a second request mean to it: the first
//! starts nothing new, the second ([`Stop::forced`]) stops what runs.
//!
//! ```
//! use curupira_process::stop::Stop;
//!
//! let stop = Stop::new();
//! let seen_by_a_worker = stop.clone();
//! stop.request();
//! assert!(seen_by_a_worker.requested() && !seen_by_a_worker.forced());
//! stop.request();
//! assert!(seen_by_a_worker.forced());
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// Counts stop signals (SIGINT, SIGTERM) or programmatic stop requests.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    count: Arc<AtomicUsize>,
}

impl Stop {
    /// A stop that only [`request`](Self::request) triggers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts SIGINT and SIGTERM from now on, instead of dying on them, and calls
    /// `on_signal` with each one's name (`"SIGINT"`, `"SIGTERM"`) and the count it made
    /// (1 for the first), on a thread of its own: the caller says what each means.
    #[cfg(feature = "signals")]
    pub fn count_signals(
        &self,
        on_signal: impl Fn(&'static str, usize) + Send + 'static,
    ) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGINT, SIGTERM};
            let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
            let count = Arc::clone(&self.count);
            thread::Builder::new()
                .name("signals".to_owned())
                .spawn(move || {
                    for signal in signals.forever() {
                        let seen = count.fetch_add(1, Ordering::SeqCst) + 1;
                        let name = if signal == SIGINT {
                            "SIGINT"
                        } else {
                            "SIGTERM"
                        };
                        on_signal(name, seen);
                    }
                })?;
        }
        #[cfg(not(unix))]
        let _ = on_signal;
        Ok(())
    }

    /// Asks the run to stop, as a signal would.
    pub fn request(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// How many stop requests arrived.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Whether a stop was requested.
    pub fn requested(&self) -> bool {
        self.count() > 0
    }

    /// Whether a stop was requested, or is within `limit` (checked every few
    /// milliseconds): for what the same shutdown may reach before its signal is
    /// counted.
    pub fn requested_within(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while !self.requested() {
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// Whether a second stop was requested: running agents and hooks are stopped, and
    /// nothing of a task starts any more.
    pub fn forced(&self) -> bool {
        self.count() >= FORCED
    }
}

/// The stop request from which the run stops what runs instead of waiting for it.
const FORCED: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_made_meanwhile_is_seen_within_the_limit() {
        let stop = Stop::new();
        assert!(!stop.requested_within(Duration::from_millis(30)));
        let later = stop.clone();
        let requester = thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            later.request();
        });
        let started = Instant::now();
        assert!(stop.requested_within(Duration::from_secs(10)));
        assert!(started.elapsed() < Duration::from_secs(5));
        requester.join().unwrap();
        assert!(!stop.forced());
        stop.request();
        assert!(stop.forced(), "the second request");
    }
}
