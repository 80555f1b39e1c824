//! The `cron` trigger built into `curupira`, as the reference host (`curupira` 0.4.0)
//! runs it: `trigger_type = "cron"` with a five-field `schedule`, a `timezone`
//! (default `[agents.defaults] timezone`, else UTC) and an optional window
//! (`start_date`, `end_date`, both inclusive; a date is midnight in the zone).
//!
//! - **[`Schedule`]** reads the expression with the `cron` crate, as the reference
//!   does (its messages, and its day-of-week numbers: 1 = Sunday … 7 = Saturday). A
//!   local time a DST change skips has no tick; one it repeats ticks twice.
//! - **[`CronSpec`]** is an automation's parameters, checked, and its one rule: the
//!   tick due is the latest one in the window up to now, so the ticks missed while no
//!   host ran are coalesced into one. Without `start_date` the window starts when a
//!   host first saw the automation.
//! - **[`CronState`]** keeps, across runs, when each automation was first seen and the
//!   latest tick a host started (no earlier tick runs after it).
//! - **[`CronTrigger`]** is one automation's trigger as an ordinary
//!   [`Trigger`](curupira_extension_sdk::Trigger): a host serves it in its own process
//!   and polls it like any extension. A tick is one pair, [`TICK_KEY`], its due time in
//!   Unix seconds, which is also its identity; it offers nothing while one of its
//!   ticks runs, so a cron automation never runs beside itself.
//!
//! ```
//! use std::sync::Arc;
//! use chrono::{DateTime, Utc};
//! use curupira_cron::curupira_extension_sdk::serde_json::{from_value, json};
//! use curupira_cron::curupira_extension_sdk::{Arguments, Pair, Trigger};
//! use curupira_cron::{CronState, CronTrigger, TICK_KEY};
//!
//! let now: DateTime<Utc> = "2026-12-07T10:00:30Z".parse()?;
//! let mut cron = CronTrigger::new("nightly", None, CronState::in_memory())
//!     .with_clock(Arc::new(move || now));
//! let arguments: Arguments = from_value(json!({
//!     "schedule": "0 9 * * *",
//!     "timezone": "Asia/Tokyo",
//!     "start_date": "2026-12-01",
//! }))?;
//! // 09:00 in Tokyo is 00:00 UTC: the latest one due is this morning's.
//! let tick = cron.poll("cron", &arguments)?;
//! assert_eq!(tick, Some(vec![Pair::new(TICK_KEY, "1796601600")]));
//! // Offered once.
//! assert_eq!(cron.poll("cron", &arguments)?, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod schedule;
mod state;
mod trigger;

pub use chrono;
/// The SDK its trigger is written with: what a caller needs to drive it.
pub use curupira_extension_sdk;
pub use schedule::{CronSpec, Schedule, ScheduleError, parse_date, parse_zone, zone_names};
pub use state::{CronState, StateError, VERSION as STATE_VERSION};
pub use trigger::{Clock, CronTrigger, NextTick, TICK_KEY, TRIGGER_TYPE};

/// An instant written in RFC 3339, for the tests.
#[cfg(test)]
fn at(text: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
