//! The parameters of an automation on the built-in `cron` trigger, checked at
//! `validate` as the trigger reads them (`curupira_cron::CronSpec`): the reference
//! host's sentences, at the key they are about.

use curupira_diagnostics::JsonPointer;
use serde_json::{Map, Value};

use super::Checker;
use crate::codes;

impl Checker<'_> {
    /// Checks `arguments` of the `cron` automation `name` at `at`; `default_zone` is
    /// `[agents.defaults] timezone`. Whether they read (an error is reported when not).
    pub(super) fn cron_arguments(
        &mut self,
        name: &str,
        at: &JsonPointer,
        arguments: &Map<String, Value>,
        default_zone: Option<&str>,
    ) -> bool {
        let spec = match curupira_cron::CronSpec::from_arguments(arguments, default_zone) {
            Ok(spec) => spec,
            Err(error) => {
                let key = error.key();
                let pointer = if key == "timezone" && !arguments.contains_key("timezone") {
                    JsonPointer::root()
                        .key("agents")
                        .key("defaults")
                        .key("timezone")
                } else {
                    at.key(key)
                };
                let pointer = if arguments.contains_key(key) || key == "timezone" {
                    pointer
                } else {
                    at.clone()
                };
                let hint = match &error {
                    curupira_cron::ScheduleError::UnknownZone(zone) => {
                        curupira_diagnostics::did_you_mean(zone, curupira_cron::zone_names())
                            .map(|known| format!(" (did you mean \"{known}\"?)"))
                    }
                    _ => None,
                };
                self.collector.error(
                    codes::SCHEDULE,
                    &pointer,
                    format!("automation `{name}`: {error}{}", hint.unwrap_or_default()),
                );
                return false;
            }
        };
        if spec.schedule.numbers_days_of_week() {
            self.collector.warning(
                codes::CRON_WEEKDAY,
                &at.key("schedule"),
                format!(
                    "automation `{name}`: the day-of-week numbers of `{}` count from 1 = Sunday \
                     to 7 = Saturday, as the reference host reads them (crontab's 1 is Monday); \
                     write MON–SUN to say it plainly",
                    spec.schedule.as_str()
                ),
            );
        }
        let now = curupira_cron::chrono::Utc::now();
        match (spec.start, spec.end) {
            (Some(start), Some(end)) if start > end => self.collector.warning(
                codes::CRON_WINDOW,
                &at.key("start_date"),
                format!(
                    "automation `{name}`: `start_date` is after `end_date`, so no tick is ever \
                     due"
                ),
            ),
            (None, Some(end)) if end < now => self.collector.warning(
                codes::CRON_WINDOW,
                &at.key("end_date"),
                format!(
                    "automation `{name}`: its window ended at {}, and without `start_date` it                      starts when a host first sees the automation, so no tick is due unless a                      host saw it before then (give `start_date` to run the window's latest                      tick once)",
                    end.to_rfc3339_opts(curupira_cron::chrono::SecondsFormat::AutoSi, true)
                ),
            ),
            _ => {}
        }
        true
    }
}
