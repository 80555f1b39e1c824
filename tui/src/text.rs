//! How the dashboard writes times, durations, ids and the text others wrote (an item's
//! pairs, an agent's output): short enough for a cell, and never a byte that would
//! move the terminal's cursor or change its colours.

use std::time::SystemTime;

use curupira_orchestrator::status;

/// A task id as the tables show it: its first 12 digits (`tasks list`'s).
pub(crate) fn short_id(task_id: &str) -> &str {
    task_id.get(..12).unwrap_or(task_id)
}

/// A length of time in the unit that fits: `250 ms`, `3.2 s`, `12 s`, `2 min 5 s`,
/// `1 h 3 min`. With `whole`, no fraction of a second (a clock that ticks).
pub(crate) fn duration_text(seconds: f64, whole: bool) -> String {
    let seconds = if seconds.is_finite() {
        seconds.max(0.0)
    } else {
        0.0
    };
    if !whole && seconds < 1.0 {
        return format!("{} ms", (seconds * 1000.0).round() as u64);
    }
    if !whole && seconds < 10.0 {
        return format!("{seconds:.1} s");
    }
    let total = seconds.floor() as u64;
    match total {
        0..60 => format!("{total} s"),
        60..3600 => format!("{} min {} s", total / 60, total % 60),
        _ => format!("{} h {} min", total / 3600, total % 3600 / 60),
    }
}

/// The time of day (UTC) of a time the host wrote (RFC 3339), `10:00:00`; the text as
/// it is when it is not one.
pub(crate) fn clock(time: &str) -> String {
    match time.get(11..19) {
        Some(clock) if time.as_bytes().get(10) == Some(&b'T') => clock.to_owned(),
        _ => clean(time),
    }
}

/// How far a time the host wrote is from `now`: `in 4 s`, `12 s ago`, `now`.
pub(crate) fn relative(time: &str, now: SystemTime) -> String {
    if status::parse_timestamp(time).is_none() {
        return clean(time);
    }
    let since = status::seconds_since(time, now);
    if since.abs() < 1.0 {
        "now".to_owned()
    } else if since < 0.0 {
        format!("in {}", duration_text(-since, true))
    } else {
        format!("{} ago", duration_text(since, true))
    }
}

/// An item's pairs as `key=value, …`, from the pairs a host published.
pub(crate) fn pairs_text<'p>(pairs: impl IntoIterator<Item = (&'p str, &'p str)>) -> String {
    clean(
        &pairs
            .into_iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// An item's pairs as `key=value, …`, from the ledger's JSON (`[{"key", "value"}]`).
pub(crate) fn json_pairs_text(values: &serde_json::Value) -> String {
    let pairs = values.as_array().map(Vec::as_slice).unwrap_or_default();
    pairs_text(pairs.iter().map(|pair| {
        (
            pair["key"].as_str().unwrap_or_default(),
            pair["value"].as_str().unwrap_or_default(),
        )
    }))
}

/// `text` safe to put on a terminal on one line: escape sequences (CSI, OSC and the
/// two-byte ones) removed, line breaks and tabs made spaces, every other control
/// character shown as `�`.
pub(crate) fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates, then one final byte.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC (and the other strings): up to BEL or ESC \.
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\t' => out.push_str("    "),
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A line of an attempt's log as the log view shows it: the line's time (RFC 3339,
/// `2026-12-02T06:28:05.996Z stdout first`) cut to its time of day, the rest
/// [`clean`]ed.
pub(crate) fn log_line(line: &str) -> String {
    let stamp = line.split(' ').next().unwrap_or_default();
    if stamp.len() >= 20 && stamp.as_bytes().get(10) == Some(&b'T') && stamp.ends_with('Z') {
        format!("{}{}", clock(stamp), clean(&line[stamp.len()..]))
    } else {
        clean(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_take_the_unit_that_fits() {
        assert_eq!(duration_text(0.25, false), "250 ms");
        assert_eq!(duration_text(3.25, false), "3.2 s");
        assert_eq!(duration_text(3.9, true), "3 s");
        assert_eq!(duration_text(125.0, true), "2 min 5 s");
        assert_eq!(duration_text(3780.0, false), "1 h 3 min");
        assert_eq!(duration_text(f64::NAN, true), "0 s");
    }

    #[test]
    fn times_are_shown_by_their_clock_and_from_now() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let later = status::timestamp(now + Duration::from_secs(4));
        let earlier = status::timestamp(now - Duration::from_secs(75));
        assert_eq!(relative(&later, now), "in 4 s");
        assert_eq!(relative(&earlier, now), "1 min 15 s ago");
        assert_eq!(clock("2027-01-15T08:00:00.000Z"), "08:00:00");
        assert_eq!(clock("soon"), "soon");
    }

    #[test]
    fn what_others_wrote_cannot_drive_the_terminal() {
        assert_eq!(clean("\u{1b}[31mred\u{1b}[0m\tok\r\n"), "red    ok  ");
        assert_eq!(clean("a\u{1b}]0;title\u{7}b\u{1b}]8;;x\u{1b}\\c"), "abc");
        assert_eq!(clean("bell\u{7}"), "bell\u{fffd}");
        assert_eq!(
            log_line("2026-12-02T06:28:05.996Z stdout \u{1b}[1mfirst"),
            "06:28:05 stdout first"
        );
        assert_eq!(log_line("… 512 bytes dropped"), "… 512 bytes dropped");
    }

    #[test]
    fn pairs_read_as_key_value_lists() {
        let values = serde_json::json!([{"key": "n", "value": "a"}, {"key": "t", "value": "x\ny"}]);
        assert_eq!(json_pairs_text(&values), "n=a, t=x y");
        assert_eq!(short_id("0123456789abcdef"), "0123456789ab");
        assert_eq!(short_id("ab"), "ab");
    }
}
