//! The bookkeeping of concurrent dispatch (issue 11), kept apart from processes and
//! extensions so every rule can be tested without either: agent slots (a global limit
//! and per-automation caps), fairness between automations, the retry queue, the
//! backoff of retries, and the ledger of task identities.
//!
//! # Rules
//!
//! - **Slots.** At most `max_concurrent` agents run at once in the whole process; an
//!   automation with a cap runs at most that many of them. A slot is taken when an
//!   attempt starts and given back when it ends, so a task waiting for its retry holds
//!   none.
//! - **Fairness.** When a slot is free, automations that want one are served round
//!   robin, starting after the one served last; none can starve another.
//! - **Retries before new work.** A retry that is due is started before any new poll of
//!   its automation (the item was already handed over; finishing it comes first), and
//!   retries are served in the order they became due.
//! - **Backoff.** Attempt `n` (counting from 1) that failed waits
//!   `first × 2^(n-1)`, capped at `max`, before attempt `n + 1`.
//! - **Ledger.** An identity is *claimed* when its item is polled and dispatched, and
//!   stays claimed while it runs or waits for a retry, so a poll that returns it again
//!   meanwhile is a duplicate. When the task *finishes* (the agent ran: success or a
//!   failure that retries did not cure) the identity is recorded for the rest of the
//!   process, unless someone asks for it again (`curupira tasks retry`, or a poll
//!   after `tasks forget`): then it is *reopened*, claimed anew. When it is *released*
//!   instead (its agent never started, or the host's own shutdown interrupted it) the
//!   identity is forgotten: the item is not finished and a later poll, or a later run,
//!   hands it over again.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::time::{Duration, Instant};

/// Agent slots: the process-wide limit and each automation's cap.
#[derive(Debug, Clone)]
pub struct Slots {
    limit: usize,
    in_use: usize,
    automations: Vec<AutomationSlots>,
    /// The index of the automation served last, for round-robin fairness.
    last_served: Option<usize>,
}

#[derive(Debug, Clone)]
struct AutomationSlots {
    name: String,
    cap: Option<usize>,
    in_use: usize,
}

impl Slots {
    /// Slots for at most `limit` agents at once (a limit of 0 is taken as 1).
    pub fn new(limit: usize) -> Self {
        Slots {
            limit: limit.max(1),
            in_use: 0,
            automations: Vec::new(),
            last_served: None,
        }
    }

    /// Registers an automation with an optional cap (a cap of 0 is taken as 1).
    /// Registering a name twice keeps the first registration.
    pub fn add_automation(&mut self, name: &str, cap: Option<usize>) {
        if self.index(name).is_none() {
            self.automations.push(AutomationSlots {
                name: name.to_owned(),
                cap: cap.map(|cap| cap.max(1)),
                in_use: 0,
            });
        }
    }

    /// Changes the process-wide limit (a reloaded configuration): agents running above
    /// a lower one finish; no new one starts until the count is under it.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit.max(1);
    }

    /// Changes an automation's cap (registering it if it is new), as
    /// [`add_automation`](Self::add_automation) takes it.
    pub fn set_cap(&mut self, name: &str, cap: Option<usize>) {
        match self.index(name) {
            Some(index) => self.automations[index].cap = cap.map(|cap| cap.max(1)),
            None => self.add_automation(name, cap),
        }
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.automations.iter().position(|a| a.name == name)
    }

    /// The process-wide limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Slots taken in the whole process.
    pub fn in_use(&self) -> usize {
        self.in_use
    }

    /// Slots taken by one automation (0 for a name never registered).
    pub fn in_use_by(&self, automation: &str) -> usize {
        self.index(automation)
            .map_or(0, |index| self.automations[index].in_use)
    }

    /// Whether `automation` may start an attempt now: a slot is free in the process
    /// and the automation is under its cap. `false` for a name never registered.
    pub fn can_start(&self, automation: &str) -> bool {
        self.in_use < self.limit
            && self.index(automation).is_some_and(|index| {
                let slots = &self.automations[index];
                slots.cap.is_none_or(|cap| slots.in_use < cap)
            })
    }

    /// Which of the automations for which `wants` is true is served next: round robin
    /// over the registration order, starting after the one served last, among those
    /// that [can start](Self::can_start). Marks it served; does not take a slot.
    pub fn next_to_serve(&mut self, mut wants: impl FnMut(&str) -> bool) -> Option<String> {
        let count = self.automations.len();
        let start = self.last_served.map_or(0, |last| last + 1);
        let index = (0..count)
            .map(|offset| (start + offset) % count)
            .find(|&index| {
                let name = &self.automations[index].name;
                self.can_start(name) && wants(name)
            })?;
        self.last_served = Some(index);
        Some(self.automations[index].name.clone())
    }

    /// Takes a slot for `automation`; `false` (and nothing taken) when it
    /// [cannot start](Self::can_start).
    pub fn take(&mut self, automation: &str) -> bool {
        if !self.can_start(automation) {
            return false;
        }
        if let Some(index) = self.index(automation) {
            self.automations[index].in_use += 1;
            self.in_use += 1;
            return true;
        }
        false
    }

    /// Gives back a slot of `automation` (nothing happens when it holds none).
    pub fn give_back(&mut self, automation: &str) {
        if let Some(index) = self.index(automation)
            && self.automations[index].in_use > 0
        {
            self.automations[index].in_use -= 1;
            self.in_use -= 1;
        }
    }
}

/// The delay before attempt `failed_attempt + 1`, after attempt `failed_attempt`
/// (counting from 1) failed: `first` doubled for each earlier failure, capped at
/// `max`.
///
/// ```
/// use std::time::Duration;
/// use curupira_orchestrator::dispatch::backoff;
///
/// let s = Duration::from_secs;
/// let delays: Vec<_> = (1..=5).map(|n| backoff(n, s(10), s(60))).collect();
/// assert_eq!(delays, [s(10), s(20), s(40), s(60), s(60)]);
/// ```
pub fn backoff(failed_attempt: u32, first: Duration, max: Duration) -> Duration {
    let doublings = failed_attempt.saturating_sub(1).min(32);
    first
        .checked_mul(1u32 << doublings.min(31))
        .unwrap_or(max)
        .min(max)
}

/// Tasks waiting for their next attempt, each with the time it becomes due.
#[derive(Debug, Clone)]
pub struct RetryQueue<T> {
    waiting: VecDeque<(Instant, String, T)>,
}

impl<T> Default for RetryQueue<T> {
    fn default() -> Self {
        RetryQueue {
            waiting: VecDeque::new(),
        }
    }
}

impl<T> RetryQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts `task` of `automation` back, due at `due`.
    pub fn defer(&mut self, automation: &str, due: Instant, task: T) {
        let at = self
            .waiting
            .iter()
            .position(|(other, _, _)| *other > due)
            .unwrap_or(self.waiting.len());
        self.waiting.insert(at, (due, automation.to_owned(), task));
    }

    /// The earliest task due at `now` whose automation `can_start` allows, taken out
    /// of the queue with its automation's name.
    pub fn take_due(
        &mut self,
        now: Instant,
        mut can_start: impl FnMut(&str) -> bool,
    ) -> Option<(String, T)> {
        let at = self
            .waiting
            .iter()
            .take_while(|(due, _, _)| *due <= now)
            .position(|(_, automation, _)| can_start(automation))?;
        self.waiting
            .remove(at)
            .map(|(_, automation, task)| (automation, task))
    }

    /// Whether a task of `automation` is waiting (due or not).
    pub fn has_waiting(&self, automation: &str) -> bool {
        self.waiting.iter().any(|(_, name, _)| name == automation)
    }

    /// When the next task becomes due.
    pub fn next_due(&self) -> Option<Instant> {
        self.waiting.front().map(|(due, _, _)| *due)
    }

    /// How many tasks wait.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether no task waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Empties the queue (a stopping host interrupts what waits), returning the tasks.
    pub fn drain(&mut self) -> Vec<(String, T)> {
        self.waiting
            .drain(..)
            .map(|(_, automation, task)| (automation, task))
            .collect()
    }
}

/// What [`Ledger::claim`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Never seen in this process, or released since: dispatch it.
    New,
    /// Running or waiting for a retry right now.
    InFlight,
    /// Finished earlier in this process.
    Finished,
}

/// The identities of one automation's tasks in this process (see the module rules).
#[derive(Debug, Clone)]
pub struct Ledger<Id> {
    in_flight: HashSet<Id>,
    finished: HashSet<Id>,
}

impl<Id> Default for Ledger<Id> {
    fn default() -> Self {
        Ledger {
            in_flight: HashSet::new(),
            finished: HashSet::new(),
        }
    }
}

impl<Id: Eq + Hash + Clone> Ledger<Id> {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Claims `id` for a dispatch: [`Claim::New`] marks it in flight; otherwise
    /// nothing changes and the item is a duplicate.
    pub fn claim(&mut self, id: &Id) -> Claim {
        if self.finished.contains(id) {
            Claim::Finished
        } else if !self.in_flight.insert(id.clone()) {
            Claim::InFlight
        } else {
            Claim::New
        }
    }

    /// The task finished (its agent ran): recorded for the rest of the process.
    pub fn finish(&mut self, id: &Id) {
        self.in_flight.remove(id);
        self.finished.insert(id.clone());
    }

    /// A task finished earlier in this process is dispatched again because someone
    /// asked for it (`curupira tasks retry`, or `forget` and a poll that returns it):
    /// claimed (in flight) anew. Whether it was
    /// finished here.
    pub fn reopen(&mut self, id: &Id) -> bool {
        let was_finished = self.finished.remove(id);
        if was_finished {
            self.in_flight.insert(id.clone());
        }
        was_finished
    }

    /// The task did not finish (never started, or interrupted by the host): forgotten,
    /// so a later poll hands it over again.
    pub fn release(&mut self, id: &Id) {
        self.in_flight.remove(id);
    }

    /// Tasks running or waiting for a retry.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

/// Per automation, something of type `T`, in registration order (a small map that
/// keeps the order the config gives).
#[derive(Debug, Clone)]
pub struct PerAutomation<T> {
    entries: Vec<(String, T)>,
    index: HashMap<String, usize>,
}

impl<T> Default for PerAutomation<T> {
    fn default() -> Self {
        PerAutomation {
            entries: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T> PerAutomation<T> {
    /// Adds (or replaces) the value of `automation`.
    pub fn insert(&mut self, automation: &str, value: T) {
        match self.index.get(automation) {
            Some(&at) => self.entries[at].1 = value,
            None => {
                self.index.insert(automation.to_owned(), self.entries.len());
                self.entries.push((automation.to_owned(), value));
            }
        }
    }

    /// The value of `automation`.
    pub fn get(&self, automation: &str) -> Option<&T> {
        self.index.get(automation).map(|&at| &self.entries[at].1)
    }

    /// The value of `automation`, mutably.
    pub fn get_mut(&mut self, automation: &str) -> Option<&mut T> {
        self.index
            .get(automation)
            .map(|&at| &mut self.entries[at].1)
    }

    /// Every automation with its value, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.entries
            .iter()
            .map(|(name, value)| (name.as_str(), value))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_global_limit_and_caps_hold() {
        let mut slots = Slots::new(3);
        slots.add_automation("a", Some(2));
        slots.add_automation("b", None);
        assert!(slots.take("a") && slots.take("a"));
        assert!(!slots.can_start("a"), "a is at its cap");
        assert!(!slots.take("a"));
        assert!(slots.take("b"));
        assert!(!slots.can_start("b"), "the process is at its limit");
        assert_eq!((slots.in_use(), slots.in_use_by("a")), (3, 2));
        slots.give_back("a");
        assert!(slots.can_start("b") && slots.can_start("a"));
        assert!(!slots.can_start("unknown") && !slots.take("unknown"));
        slots.give_back("unknown");
        assert_eq!(slots.in_use(), 2);
    }

    #[test]
    fn automations_are_served_round_robin() {
        let mut slots = Slots::new(10);
        for name in ["a", "b", "c"] {
            slots.add_automation(name, None);
        }
        let served: Vec<_> = (0..6)
            .map(|_| slots.next_to_serve(|_| true).unwrap())
            .collect();
        assert_eq!(served, ["a", "b", "c", "a", "b", "c"]);
        // Only those that want a slot, and can start, are served.
        let served: Vec<_> = (0..3)
            .map(|_| slots.next_to_serve(|name| name != "b").unwrap())
            .collect();
        assert_eq!(served, ["a", "c", "a"]);
        assert_eq!(slots.next_to_serve(|_| false), None);
    }

    #[test]
    fn a_capped_automation_does_not_block_the_others() {
        let mut slots = Slots::new(4);
        slots.add_automation("capped", Some(1));
        slots.add_automation("free", None);
        let mut started = Vec::new();
        while let Some(name) = slots.next_to_serve(|_| true) {
            assert!(slots.take(&name));
            started.push(name);
        }
        assert_eq!(started, ["capped", "free", "free", "free"]);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_without_overflow() {
        let s = Duration::from_secs;
        assert_eq!(backoff(1, s(10), s(300)), s(10));
        assert_eq!(backoff(2, s(10), s(300)), s(20));
        assert_eq!(backoff(6, s(10), s(300)), s(300));
        assert_eq!(backoff(u32::MAX, s(10), s(300)), s(300));
        assert_eq!(backoff(3, s(0), s(300)), s(0));
        assert_eq!(backoff(0, s(10), s(300)), s(10));
        assert_eq!(backoff(40, Duration::MAX / 2, Duration::MAX), Duration::MAX);
    }

    #[test]
    fn retries_come_back_when_due_in_order_and_only_with_a_slot() {
        let now = Instant::now();
        let later = |ms| now + Duration::from_millis(ms);
        let mut queue = RetryQueue::new();
        queue.defer("a", later(30), "a-2");
        queue.defer("b", later(10), "b-1");
        queue.defer("a", later(20), "a-1");
        assert_eq!(queue.next_due(), Some(later(10)));
        assert_eq!(queue.take_due(later(5), |_| true), None);
        assert_eq!(
            queue.take_due(later(25), |name| name != "b"),
            Some(("a".into(), "a-1"))
        );
        assert_eq!(
            queue.take_due(later(25), |_| true),
            Some(("b".into(), "b-1"))
        );
        assert!(queue.has_waiting("a") && !queue.has_waiting("b"));
        assert_eq!(queue.take_due(later(25), |_| true), None);
        assert_eq!(queue.drain(), [("a".to_owned(), "a-2")]);
        assert!(queue.is_empty());
    }

    #[test]
    fn the_ledger_records_finished_tasks_and_forgets_released_ones() {
        let mut ledger = Ledger::new();
        assert_eq!(ledger.claim(&1), Claim::New);
        assert_eq!(ledger.claim(&1), Claim::InFlight);
        ledger.finish(&1);
        assert_eq!(ledger.claim(&1), Claim::Finished);
        assert_eq!(ledger.claim(&2), Claim::New);
        ledger.release(&2);
        assert_eq!(ledger.in_flight(), 0);
        assert_eq!(
            ledger.claim(&2),
            Claim::New,
            "a released task is handed over again"
        );
    }

    #[test]
    fn a_finished_task_asked_for_again_is_reopened_in_flight() {
        let mut ledger = Ledger::new();
        assert!(!ledger.reopen(&1), "never finished: nothing to reopen");
        assert_eq!(ledger.claim(&1), Claim::New);
        ledger.finish(&1);
        assert!(ledger.reopen(&1));
        assert_eq!(ledger.claim(&1), Claim::InFlight);
        assert_eq!(ledger.in_flight(), 1);
        ledger.finish(&1);
        assert_eq!(ledger.claim(&1), Claim::Finished, "finished again");
    }

    #[test]
    fn per_automation_keeps_the_config_order() {
        let mut map = PerAutomation::default();
        map.insert("b", 1);
        map.insert("a", 2);
        map.insert("b", 3);
        *map.get_mut("a").unwrap() += 10;
        let seen: Vec<_> = map.iter().collect();
        assert_eq!(seen, [("b", &3), ("a", &12)]);
        assert_eq!(map.get("c"), None);
    }
}
