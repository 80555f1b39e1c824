//! The `cron` trigger of one automation, as an ordinary [`Trigger`]: a host serves it
//! in its own process (no extension process) and polls it like any extension.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use curupira_extension_sdk::serde_json::json;
use curupira_extension_sdk::{
    Arguments, Pair, PollContext, Trigger, TriggerDescription, TriggerError, TriggerSchema,
    ValidateError,
};

use crate::schedule::CronSpec;
use crate::state::CronState;

/// The trigger type, as the reference host names it (`trigger_type = "cron"`).
pub const TRIGGER_TYPE: &str = "cron";

/// The key of a tick's one pair: its due time in Unix seconds, which is also the
/// tick's identity (`<automation>:<repository>:cron:<seconds>` in the reference
/// host's lines). A host keeps it out of the prompt: a tick's prompt knows only the
/// host's variables.
pub const TICK_KEY: &str = "tick";

/// What the trigger reads the time from: the system clock, or a test's.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// Told, after each poll that is not a preview, the schedule's next tick (`None`: the
/// window has ended): for a host's status.
pub type NextTick = Arc<dyn Fn(Option<DateTime<Utc>>) + Send + Sync>;

/// One cron automation's trigger. Each poll offers at most the latest tick due (the
/// ticks missed since are coalesced into it), never one it offered already in this
/// process or one at or before the latest a host started, and nothing while one of
/// its ticks runs (`trigger/onStarted` until `trigger/onFinished`): a cron
/// automation never runs beside itself.
pub struct CronTrigger {
    automation: String,
    default_zone: Option<String>,
    state: CronState,
    clock: Clock,
    next_tick: Option<NextTick>,
    offered: Option<i64>,
    running: Option<i64>,
}

impl std::fmt::Debug for CronTrigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronTrigger")
            .field("automation", &self.automation)
            .field("default_zone", &self.default_zone)
            .field("offered", &self.offered)
            .field("running", &self.running)
            .finish_non_exhaustive()
    }
}

impl CronTrigger {
    /// The trigger of `automation`, its state in `state`, reading the system clock.
    /// `default_zone` is the zone of a schedule without `timezone` (the reference
    /// form's `[agents.defaults] timezone`); `None`: UTC.
    pub fn new(
        automation: impl Into<String>,
        default_zone: Option<String>,
        state: CronState,
    ) -> Self {
        CronTrigger {
            automation: automation.into(),
            default_zone,
            state,
            clock: Arc::new(Utc::now),
            next_tick: None,
            offered: None,
            running: None,
        }
    }

    /// The same trigger reading the time from `clock`.
    pub fn with_clock(self, clock: Clock) -> Self {
        CronTrigger { clock, ..self }
    }

    /// The same trigger telling `next_tick` the schedule's next tick after each poll.
    pub fn with_next_tick(self, next_tick: NextTick) -> Self {
        CronTrigger {
            next_tick: Some(next_tick),
            ..self
        }
    }

    /// The automation's parameters, checked.
    pub fn spec(&self, arguments: &Arguments) -> Result<CronSpec, crate::ScheduleError> {
        CronSpec::from_arguments(arguments, self.default_zone.as_deref())
    }

    /// The next tick after now, for a status: `None` when the window has ended (or
    /// the parameters do not read).
    pub fn next_tick(&self, arguments: &Arguments) -> Option<DateTime<Utc>> {
        let spec = self.spec(arguments).ok()?;
        let now = (self.clock)();
        let first_seen = self.state.first_seen(&self.automation, now, false).ok()?;
        spec.next(first_seen, now)
    }
}

impl CronTrigger {
    /// Serves this trigger on a thread of its own (named `cron NAME`) over `reader`
    /// and `writer`, a host's in-memory pipes, until the host ends the conversation.
    pub fn serve_on_thread<R, W>(
        mut self,
        reader: R,
        writer: W,
        version: &str,
    ) -> std::io::Result<std::thread::JoinHandle<()>>
    where
        R: std::io::Read + Send + 'static,
        W: std::io::Write + Send + 'static,
    {
        let options = curupira_extension_sdk::ServeOptions::new(TRIGGER_TYPE, version);
        std::thread::Builder::new()
            .name(format!("cron {}", self.automation))
            .spawn(move || {
                // Its end is the host's: what went wrong reaches it as a failed call.
                let _ = curupira_extension_sdk::serve(
                    &mut self,
                    std::io::BufReader::new(reader),
                    writer,
                    &options,
                );
            })
    }
}

fn tick_of(values: &[Pair]) -> Option<i64> {
    values
        .iter()
        .find(|pair| pair.key == TICK_KEY)
        .and_then(|pair| pair.value.parse().ok())
}

impl Trigger for CronTrigger {
    fn describe(&self) -> Vec<TriggerDescription> {
        vec![
            TriggerDescription::new(TRIGGER_TYPE, Vec::<String>::new()).with_description(
                "A tick of a five-field schedule: the latest one due, once per due time.",
            ),
        ]
    }

    fn schema(&self, _: &str) -> Result<TriggerSchema, TriggerError> {
        Ok(TriggerSchema::new(
            json!({
                "type": "object",
                "properties": {
                    "schedule": {
                        "type": "string",
                        "description": "Five fields: minute hour day-of-month month \
                            day-of-week (1 = Sunday … 7 = Saturday, or MON–SUN)."
                    },
                    "timezone": {
                        "type": "string",
                        "description": "An IANA zone the fields are read in; default: \
                            [agents.defaults] timezone, else UTC."
                    },
                    "start_date": {
                        "type": "string",
                        "description": "The window's first instant: YYYY-MM-DD (midnight \
                            in the zone) or an RFC 3339 date-time; default: when a host \
                            first saw the automation."
                    },
                    "end_date": {
                        "type": "string",
                        "description": "The window's last instant, as start_date."
                    }
                }
            }),
            Vec::<String>::new(),
        ))
    }

    fn validate(&self, _: &str, arguments: &Arguments) -> Result<(), ValidateError> {
        self.spec(arguments)
            .map(drop)
            .map_err(|error| ValidateError::Rejected(error.to_string()))
    }

    fn poll(
        &mut self,
        trigger_type: &str,
        arguments: &Arguments,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        self.poll_in(trigger_type, arguments, PollContext::default())
    }

    fn poll_in(
        &mut self,
        _: &str,
        arguments: &Arguments,
        context: PollContext,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        let spec = self
            .spec(arguments)
            .map_err(|error| TriggerError::invalid_params(error.to_string()))?;
        let now = (self.clock)();
        let first_seen = self
            .state
            .first_seen(&self.automation, now, !context.preview)
            .map_err(|error| TriggerError::internal(error.to_string()))?;
        if let (Some(tell), false) = (&self.next_tick, context.preview) {
            tell(spec.next(first_seen, now));
        }
        if self.running.is_some() {
            return Ok(None);
        }
        let Some(due) = spec.due(first_seen, now) else {
            return Ok(None);
        };
        let tick = due.timestamp();
        let handled = self.offered.max(self.state.last_started(&self.automation));
        if handled.is_some_and(|handled| tick <= handled) {
            return Ok(None);
        }
        if !context.preview {
            self.offered = Some(tick);
        }
        Ok(Some(vec![Pair::new(TICK_KEY, tick.to_string())]))
    }

    fn on_started(&mut self, _: &str, values: &[Pair]) -> Result<(), TriggerError> {
        let Some(tick) = tick_of(values) else {
            return Err(TriggerError::invalid_params(format!(
                "a cron tick carries its due time as `{TICK_KEY}`; these values do not"
            )));
        };
        self.running = Some(tick);
        self.offered = self.offered.max(Some(tick));
        self.state
            .started(&self.automation, tick, (self.clock)())
            .map_err(|error| TriggerError::internal(error.to_string()))
    }

    fn on_finished(&mut self, _: &str, values: &[Pair]) -> Result<(), TriggerError> {
        if tick_of(values).is_some_and(|tick| Some(tick) == self.running) || values.is_empty() {
            self.running = None;
        }
        Ok(())
    }
}

/// A JSON value's text, for the tests' arguments.
#[cfg(test)]
fn arguments(value: curupira_extension_sdk::serde_json::Value) -> Arguments {
    curupira_extension_sdk::serde_json::from_value(value).unwrap()
}

#[cfg(test)]
mod tests {
    use crate::at;
    use std::sync::Mutex;

    use curupira_extension_sdk::serde_json::Value;

    use super::*;

    /// A trigger whose clock the test moves.
    fn trigger(state: CronState, now: &Arc<Mutex<DateTime<Utc>>>) -> CronTrigger {
        let now = Arc::clone(now);
        CronTrigger::new("c1", None, state).with_clock(Arc::new(move || *now.lock().unwrap()))
    }

    fn tick(text: &str) -> Option<Vec<Pair>> {
        Some(vec![Pair::new(TICK_KEY, at(text).timestamp().to_string())])
    }

    #[test]
    fn the_window_starts_at_first_sight_and_missed_ticks_coalesce() {
        let now = Arc::new(Mutex::new(at("2026-12-07T10:00:30Z")));
        let every_minute = arguments(json!({"schedule": "* * * * *"}));
        let state = CronState::in_memory();
        let mut cron = trigger(state.clone(), &now);
        assert_eq!(
            cron.poll("cron", &every_minute).unwrap(),
            None,
            "first sight"
        );

        *now.lock().unwrap() = at("2026-12-07T10:05:10Z");
        let due = cron.poll("cron", &every_minute).unwrap();
        assert_eq!(
            due,
            tick("2026-12-07T10:05:00Z"),
            "10:01 to 10:04 coalesced"
        );
        assert_eq!(
            cron.poll("cron", &every_minute).unwrap(),
            None,
            "offered once"
        );

        // Running, it offers nothing, also when the next minute comes.
        cron.on_started("cron", due.as_deref().unwrap()).unwrap();
        *now.lock().unwrap() = at("2026-12-07T10:07:10Z");
        assert_eq!(cron.poll("cron", &every_minute).unwrap(), None);
        cron.on_finished("cron", due.as_deref().unwrap()).unwrap();
        assert_eq!(
            cron.poll("cron", &every_minute).unwrap(),
            tick("2026-12-07T10:07:00Z")
        );

        // A later process (a restart) sees the same window and skips what started.
        let mut later = trigger(state, &now);
        assert_eq!(
            later.poll("cron", &every_minute).unwrap(),
            tick("2026-12-07T10:07:00Z")
        );
        later
            .on_started("cron", tick("2026-12-07T10:07:00Z").as_deref().unwrap())
            .unwrap();
        let mut again = trigger(later.state.clone(), &now);
        assert_eq!(again.poll("cron", &every_minute).unwrap(), None);
    }

    #[test]
    fn a_preview_records_nothing() {
        let now = Arc::new(Mutex::new(at("2026-12-07T10:00:30Z")));
        let every_minute = arguments(json!({"schedule": "* * * * *"}));
        let state = CronState::in_memory();
        let mut cron = trigger(state.clone(), &now);
        let preview = PollContext::new(Some(1), true);
        assert_eq!(cron.poll_in("cron", &every_minute, preview).unwrap(), None);
        *now.lock().unwrap() = at("2026-12-07T10:05:10Z");
        // Not seen by the preview: the window starts now.
        assert_eq!(cron.poll_in("cron", &every_minute, preview).unwrap(), None);

        let window = arguments(json!({"schedule": "0 9 * * *", "start_date": "2026-12-01",
            "end_date": "2026-12-03"}));
        let once = cron.poll_in("cron", &window, preview).unwrap();
        assert_eq!(once, tick("2026-12-02T09:00:00Z"));
        assert_eq!(
            cron.poll_in("cron", &window, preview).unwrap(),
            once,
            "nothing reserved"
        );
        assert_eq!(cron.poll("cron", &window).unwrap(), once);
    }

    #[test]
    fn bad_parameters_are_refused_in_the_reference_words() {
        let now = Arc::new(Mutex::new(at("2026-12-07T10:00:30Z")));
        let cron = trigger(CronState::in_memory(), &now);
        let refused = |value: Value| match cron.validate("cron", &arguments(value)) {
            Err(ValidateError::Rejected(sentence)) => sentence,
            other => panic!("{other:?}"),
        };
        assert_eq!(refused(json!({})), "cron automation requires schedule");
        assert_eq!(
            refused(json!({"schedule": "* * * * *", "timezone": "Mars/Olympus"})),
            "unknown timezone \"Mars/Olympus\""
        );
        assert_eq!(
            refused(json!({"schedule": "* * * * *", "start_date": "yesterday"})),
            "invalid date \"yesterday\""
        );
    }
}
