//! A cron automation's schedule as the reference host reads it: a five-field
//! expression, a time zone, and the window its ticks fall in.

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::{Map, Value};

/// A five-field cron expression (`minute hour day-of-month month day-of-week`), read
/// by the `cron` crate as the reference host reads it: with a `0` seconds field in
/// front. Its day-of-week numbers are that crate's, 1 (Sunday) to 7 (Saturday);
/// names (`MON`–`SUN`) mean what they say.
#[derive(Debug, Clone)]
pub struct Schedule {
    text: String,
    parsed: cron::Schedule,
}

/// Why a schedule, time zone, date or window was refused: the reference host's
/// sentence (its `Configuration error: ` left out).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The automation has no `schedule`.
    #[error("cron automation requires schedule")]
    Missing,
    /// `schedule` is not a string.
    #[error("schedule must be a string holding a five-field cron expression, not {found}")]
    NotAString {
        /// What it is (`a number`, `an array`, …).
        found: &'static str,
    },
    /// Not five fields.
    #[error("schedule must be a valid five-field cron expression")]
    FieldCount,
    /// Five fields the cron crate refused, in its words on one line (the reference
    /// prints them on three: the expression with its seconds field, a caret at the
    /// fault, the reason).
    #[error("schedule must be a valid five-field cron expression: {0}")]
    Invalid(String),
    /// A time zone that is not an IANA name (the case counts: `utc` is refused).
    #[error("unknown timezone \"{0}\"")]
    UnknownZone(String),
    /// A `start_date` or `end_date` that is neither `YYYY-MM-DD` nor an RFC 3339
    /// date-time with an offset.
    #[error("invalid date \"{text}\"")]
    InvalidDate {
        /// `start_date` or `end_date`.
        key: &'static str,
        /// What it holds.
        text: String,
    },
    /// A `start_date`, `end_date` or `timezone` that is not a string (the reference
    /// host ignores such a value, so its window silently starts when it first sees
    /// the automation; this host says so instead).
    #[error(
        "{key} must be a string (a date `YYYY-MM-DD` or an RFC 3339 date-time such as \
         `2026-12-01T09:00:00Z`), not {found}"
    )]
    NotText {
        /// The key.
        key: &'static str,
        /// What it is.
        found: &'static str,
    },
}

impl ScheduleError {
    /// The parameter it is about (`schedule`, `timezone`, `start_date`, `end_date`).
    pub fn key(&self) -> &'static str {
        match self {
            ScheduleError::Missing
            | ScheduleError::NotAString { .. }
            | ScheduleError::FieldCount
            | ScheduleError::Invalid(_) => "schedule",
            ScheduleError::UnknownZone(_) => "timezone",
            ScheduleError::InvalidDate { key, .. } | ScheduleError::NotText { key, .. } => key,
        }
    }
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    fn from_str(text: &str) -> Result<Schedule, ScheduleError> {
        if text.split_whitespace().count() != 5 {
            return Err(ScheduleError::FieldCount);
        }
        let with_seconds = format!("0 {text}");
        let parsed = cron::Schedule::from_str(&with_seconds)
            .map_err(|error| ScheduleError::Invalid(one_line(&error.to_string())))?;
        Ok(Schedule {
            text: text.to_owned(),
            parsed,
        })
    }
}

impl Schedule {
    /// The expression as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether a day-of-week field uses numbers, which the `cron` crate (and so the
    /// reference host) counts from 1 = Sunday, unlike crontab's 0 or 7 = Sunday,
    /// 1 = Monday.
    pub fn numbers_days_of_week(&self) -> bool {
        self.text
            .split_whitespace()
            .nth(4)
            .is_some_and(|field| field.bytes().any(|byte| byte.is_ascii_digit()))
    }

    /// The latest tick at or before `to` and at or after `from`, in `zone`. A local
    /// time that a DST change skips has no tick; one it repeats has two (the crate's
    /// rule), so the latest is the second.
    ///
    /// The crate walks backwards in local time, which a repeated hour confuses: its
    /// answer (from `to`, and from three hours and a day before it, past any DST
    /// change) is only where a walk forwards starts, and that walk, the crate's
    /// reliable direction, gives the tick.
    pub fn latest(
        &self,
        zone: Tz,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        if to < from {
            return None;
        }
        let second = chrono::Duration::seconds(1);
        let back = |before: DateTime<Utc>| {
            self.parsed
                .after(&before.with_timezone(&zone))
                .next_back()
                .map(|tick| tick.with_timezone(&Utc))
                .filter(|tick| *tick >= from && *tick <= to)
        };
        let start = [
            back(to + second),
            back(to + second - chrono::Duration::hours(3)),
            back(to + second - chrono::Duration::hours(26)),
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(from);
        self.parsed
            .after(&(start - second).with_timezone(&zone))
            .map(|tick| tick.with_timezone(&Utc))
            .take_while(|tick| *tick <= to)
            .filter(|tick| *tick >= from)
            .last()
    }

    /// The first tick after `after`, in `zone`.
    pub fn next_after(&self, zone: Tz, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let start = after.with_timezone(&zone);
        self.parsed
            .after(&start)
            .next()
            .map(|tick| tick.with_timezone(&Utc))
    }
}

/// The cron crate's message, which quotes the expression (with its seconds field) on
/// one line, points at the fault on the next and says why on the last, as one line:
/// the reason, else what it could not read.
fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message.lines().collect();
    let caret = lines.iter().position(|line| line.trim() == "^");
    let reason = lines
        .iter()
        .enumerate()
        .rev()
        .find(|(at, line)| !line.trim().is_empty() && Some(*at) != caret && *at != 0)
        .map(|(_, line)| line.trim().to_owned());
    match (reason, caret) {
        (Some(reason), _) => reason,
        (None, Some(at)) => {
            let column = lines[at].len().saturating_sub(1);
            let rest = lines[0].get(column..).unwrap_or_default();
            format!("cannot read `{rest}`")
        }
        (None, None) => message.trim().to_owned(),
    }
}

/// Every IANA time zone name, for suggestions.
pub fn zone_names() -> impl Iterator<Item = &'static str> {
    chrono_tz::TZ_VARIANTS.iter().map(|zone| zone.name())
}

/// An IANA time zone by its exact name (`Asia/Tokyo`, `UTC`, `Etc/GMT+3`).
pub fn parse_zone(name: &str) -> Result<Tz, ScheduleError> {
    Tz::from_str(name).map_err(|_| ScheduleError::UnknownZone(name.to_owned()))
}

/// A `start_date` or `end_date`: `YYYY-MM-DD` is that day's midnight in `zone`; an
/// RFC 3339 date-time (`2026-12-01T09:00:00Z`, `…+09:00`) is that instant. A
/// date-time without an offset is refused, as the reference refuses it.
pub fn parse_date(key: &'static str, text: &str, zone: Tz) -> Result<DateTime<Utc>, ScheduleError> {
    let invalid = || ScheduleError::InvalidDate {
        key,
        text: text.to_owned(),
    };
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Ok(instant.with_timezone(&Utc));
    }
    let day = NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| invalid())?;
    // Midnight may be skipped by a DST change (it is in a few zones): then the day
    // starts at the first instant after it.
    let midnight = day.and_time(NaiveTime::MIN);
    match zone.from_local_datetime(&midnight) {
        chrono::LocalResult::Single(local) => Ok(local.with_timezone(&Utc)),
        chrono::LocalResult::Ambiguous(earlier, _) => Ok(earlier.with_timezone(&Utc)),
        chrono::LocalResult::None => {
            let mut probe = midnight;
            for _ in 0..180 {
                probe += chrono::Duration::minutes(1);
                if let Some(local) = zone.from_local_datetime(&probe).earliest() {
                    return Ok(local.with_timezone(&Utc));
                }
            }
            Err(invalid())
        }
    }
}

/// A cron automation's trigger parameters, checked: what its ticks are and the
/// window they fall in.
#[derive(Debug, Clone)]
pub struct CronSpec {
    /// The schedule.
    pub schedule: Schedule,
    /// The zone its fields are read in.
    pub zone: Tz,
    /// The first instant a tick may be at; `None`: when the host first saw the
    /// automation.
    pub start: Option<DateTime<Utc>>,
    /// The last instant a tick may be at; `None`: no end.
    pub end: Option<DateTime<Utc>>,
}

impl CronSpec {
    /// Reads `schedule`, `timezone` (else `default_zone`, else UTC), `start_date` and
    /// `end_date` from an automation's parameters; every other key is left alone.
    /// The first problem found is the error, in the order the reference checks them.
    pub fn from_arguments(
        arguments: &Map<String, Value>,
        default_zone: Option<&str>,
    ) -> Result<CronSpec, ScheduleError> {
        let schedule = match arguments.get("schedule") {
            None => return Err(ScheduleError::Missing),
            Some(Value::String(text)) => text.parse::<Schedule>()?,
            Some(other) => {
                return Err(ScheduleError::NotAString { found: kind(other) });
            }
        };
        let zone = match arguments.get("timezone") {
            None => parse_zone(default_zone.unwrap_or("UTC"))?,
            Some(Value::String(name)) => parse_zone(name)?,
            Some(other) => {
                return Err(ScheduleError::NotText {
                    key: "timezone",
                    found: kind(other),
                });
            }
        };
        let date = |key: &'static str| match arguments.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => parse_date(key, text, zone).map(Some),
            Some(other) => Err(ScheduleError::NotText {
                key,
                found: kind(other),
            }),
        };
        Ok(CronSpec {
            schedule,
            zone,
            start: date("start_date")?,
            end: date("end_date")?,
        })
    }

    /// The tick due now: the latest one at or before `now` (and `end`), at or after
    /// the window's start (`start`, else `first_seen`). Ticks missed while no host
    /// ran are coalesced into this one.
    pub fn due(&self, first_seen: DateTime<Utc>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let from = self.start.unwrap_or(first_seen);
        let to = self.end.map_or(now, |end| end.min(now));
        self.schedule.latest(self.zone, from, to)
    }

    /// The next tick after `now` inside the window (what a status shows), or `None`
    /// when the window has ended.
    pub fn next(&self, first_seen: DateTime<Utc>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let from = self.start.unwrap_or(first_seen).max(now);
        // A tick exactly at the window's start is due, not next.
        let after = if from == now {
            now
        } else {
            from - chrono::Duration::seconds(1)
        };
        let tick = self.schedule.next_after(self.zone, after)?;
        match self.end {
            Some(end) if tick > end => None,
            _ => Some(tick),
        }
    }
}

/// What a JSON value is, for a sentence.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::at;

    #[test]
    fn the_fields_are_counted_before_the_crate_reads_them() {
        for text in ["0 * * * * *", "* * * *", "@daily", "", "every day"] {
            assert_eq!(
                text.parse::<Schedule>().unwrap_err(),
                ScheduleError::FieldCount,
                "{text}"
            );
        }
        let error = "61 * * * *".parse::<Schedule>().unwrap_err().to_string();
        assert_eq!(
            error,
            "schedule must be a valid five-field cron expression: Minutes must be less than 59. \
             ('61' specified.)"
        );
        let error = "0 9 ? * 6#3".parse::<Schedule>().unwrap_err().to_string();
        assert_eq!(
            error,
            "schedule must be a valid five-field cron expression: cannot read `#3`"
        );
    }

    #[test]
    fn days_of_week_count_from_sunday_as_one() {
        let schedule: Schedule = "0 9 * * 1".parse().unwrap();
        let tick = schedule
            .latest(
                Tz::UTC,
                at("2026-11-01T00:00:00Z"),
                at("2026-11-30T00:00:00Z"),
            )
            .unwrap();
        // 2026-11-29 is a Sunday.
        assert_eq!(tick, at("2026-11-29T09:00:00Z"));
        assert!(schedule.numbers_days_of_week());
        assert!(
            !"0 9 * * MON"
                .parse::<Schedule>()
                .unwrap()
                .numbers_days_of_week()
        );
    }

    #[test]
    fn both_ends_of_a_window_are_inclusive() {
        let schedule: Schedule = "0 9 * * *".parse().unwrap();
        let nine = at("2026-12-02T09:00:00Z");
        assert_eq!(schedule.latest(Tz::UTC, nine, nine), Some(nine));
        assert_eq!(
            schedule.latest(Tz::UTC, nine + chrono::Duration::seconds(1), nine),
            None
        );
    }

    #[test]
    fn a_date_is_midnight_in_the_zone_and_a_date_time_needs_an_offset() {
        let tokyo = parse_zone("Asia/Tokyo").unwrap();
        assert_eq!(
            parse_date("end_date", "2026-12-03", tokyo).unwrap(),
            at("2026-12-02T15:00:00Z")
        );
        assert_eq!(
            parse_date("start_date", "2026-12-01T00:00:00+09:00", Tz::UTC).unwrap(),
            at("2026-11-30T15:00:00Z")
        );
        for text in ["2026-12-01T00:00:00", "yesterday", "2026-02-30"] {
            assert_eq!(
                parse_date("start_date", text, Tz::UTC)
                    .unwrap_err()
                    .to_string(),
                format!("invalid date \"{text}\"")
            );
        }
        assert_eq!(
            parse_zone("utc").unwrap_err().to_string(),
            "unknown timezone \"utc\""
        );
    }

    #[test]
    fn a_repeated_local_time_ticks_twice_and_a_skipped_one_not_at_all() {
        let new_york = parse_zone("America/New_York").unwrap();
        let schedule: Schedule = "30 1 * * *".parse().unwrap();
        let day = at("2026-11-01T00:00:00Z");
        // 01:30 EDT, then 01:30 EST an hour later.
        assert_eq!(
            schedule.latest(new_york, day, at("2026-11-01T06:00:00Z")),
            Some(at("2026-11-01T05:30:00Z"))
        );
        assert_eq!(
            schedule.latest(new_york, day, at("2026-11-01T07:00:00Z")),
            Some(at("2026-11-01T06:30:00Z"))
        );
        let gap: Schedule = "30 2 * * *".parse().unwrap();
        assert_eq!(
            gap.latest(
                new_york,
                at("2026-03-08T00:00:00Z"),
                at("2026-03-08T23:00:00Z")
            ),
            None
        );
    }
}
