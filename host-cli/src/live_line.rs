//! `run`'s live status line: on a terminal, one line at the bottom that says what runs
//! now and for how long, what waits for a retry, and when the next round is, redrawn
//! four times a second from the run's published state
//! ([`curupira_orchestrator::status::Live`]).
//!
//! - **Never garbled.** The line is an `indicatif` spinner on stderr. Every event line
//!   (stdout, through [`LiveLine::writer`]) and every log or agent line (stderr,
//!   through [`curupira_process::stderr::set_around`]) is written with the line
//!   suspended: cleared, the text written whole, the line drawn again below it.
//! - **Only on a terminal.** [`LiveLine::start`] gives none unless both stdout and
//!   stderr are terminals (and `TERM` is not `dumb`); `run` asks for it only with
//!   `--format human` and `[settings.status] live_line` on. Piped, redirected or
//!   with JSON events, not one control sequence is written.
//! - **Cut to the terminal's width**, so it stays one line.
//!
//! ```
//! use std::time::{Duration, SystemTime};
//! use curupira_host::live_line::line_text;
//! use curupira_orchestrator::status::{HostInfo, Live, RunningAttempt};
//!
//! let live = Live::new(HostInfo::this_process("curupira", None));
//! let started = SystemTime::now() - Duration::from_secs(75);
//! live.attempt_started(RunningAttempt::new("fix", &"ab".repeat(32), 1, started));
//! let text = line_text(&live.snapshot(), SystemTime::now(), 80);
//! assert!(text.starts_with("1 running: fix abababababab 1 min 15 s"), "{text}");
//! ```

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use curupira_orchestrator::status::{Live, Published, seconds_since};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use unicode_width::UnicodeWidthChar;

use crate::events::{duration_text, short_id};

/// How often the line is drawn again.
pub const REDRAW_EVERY: Duration = Duration::from_millis(250);

/// How many running tasks the line names (the others are counted).
const NAMED: usize = 3;

/// The live line, while it is shown.
#[derive(Debug)]
pub struct LiveLine {
    bar: ProgressBar,
}

impl LiveLine {
    /// Shows the line for `live`'s run, when stdout and stderr are both terminals;
    /// `None` otherwise.
    pub fn start(live: Live) -> Option<LiveLine> {
        let dumb = std::env::var("TERM").is_ok_and(|term| term == "dumb");
        if dumb || !io::stdout().is_terminal() || !io::stderr().is_terminal() {
            return None;
        }
        let style = ProgressStyle::with_template("{spinner} {status}")
            .ok()?
            .with_key(
                "status",
                move |_: &ProgressState, out: &mut dyn std::fmt::Write| {
                    let (_, columns) = console::Term::stderr().size();
                    // The spinner and its space come first.
                    let width = usize::from(columns).saturating_sub(3).max(10);
                    let _ = out.write_str(&line_text(&live.snapshot(), SystemTime::now(), width));
                },
            );
        let bar =
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(style);
        bar.enable_steady_tick(REDRAW_EVERY);
        curupira_process::stderr::set_around(Some(Arc::new(Suspend(bar.clone()))));
        Some(LiveLine { bar })
    }

    /// `inner` (stdout), written with the line suspended: each whole line at once.
    pub fn writer<W: Write>(&self, inner: W) -> Suspended<W> {
        Suspended {
            bar: self.bar.clone(),
            inner,
            pending: Vec::new(),
        }
    }

    /// Clears the line for good (at the end of the run).
    pub fn finish(self) {
        curupira_process::stderr::set_around(None);
        self.bar.finish_and_clear();
    }
}

/// Suspends the line around each write to stderr.
struct Suspend(ProgressBar);

impl curupira_process::stderr::Around for Suspend {
    fn around(&self, write: &mut dyn FnMut()) {
        self.0.suspend(write);
    }
}

/// A writer whose whole lines go out with the live line suspended
/// ([`LiveLine::writer`]); a part of a line waits for its end, or for `flush`.
#[derive(Debug)]
pub struct Suspended<W: Write> {
    bar: ProgressBar,
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Suspended<W> {
    fn emit(&mut self, len: usize) -> io::Result<()> {
        if len == 0 {
            return Ok(());
        }
        let bytes: Vec<u8> = self.pending.drain(..len).collect();
        let inner = &mut self.inner;
        self.bar
            .suspend(|| inner.write_all(&bytes).and_then(|()| inner.flush()))
    }
}

impl<W: Write> Write for Suspended<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        if let Some(end) = self.pending.iter().rposition(|&b| b == b'\n') {
            self.emit(end + 1)?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.emit(self.pending.len())
    }
}

impl<W: Write> Drop for Suspended<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// The line's text for a published state at `now`, at most `width` columns: how many
/// run (the oldest few named, with their time), how many wait for a retry (the next
/// one's time), and the next round.
pub fn line_text(state: &Published, now: SystemTime, width: usize) -> String {
    let since = |time: &str| seconds_since(time, now).max(0.0);
    let until = |time: &str| (-seconds_since(time, now)).max(0.0);
    let mut parts = Vec::new();
    if state.running.is_empty() {
        parts.push("nothing running".to_owned());
    } else {
        let named: Vec<String> = state
            .running
            .iter()
            .take(NAMED)
            .map(|attempt| {
                let again = if attempt.attempt > 1 {
                    format!(" (attempt {})", attempt.attempt)
                } else {
                    String::new()
                };
                format!(
                    "{} {} {}{again}",
                    attempt.automation,
                    short_id(&attempt.task_id),
                    duration_text(since(&attempt.started_at))
                )
            })
            .collect();
        let more = state.running.len().saturating_sub(NAMED);
        let more = if more > 0 {
            format!(", {more} more")
        } else {
            String::new()
        };
        parts.push(format!(
            "{} running: {}{more}",
            state.running.len(),
            named.join(", ")
        ));
    }
    if let Some(next) = state.retrying.first() {
        parts.push(format!(
            "{} waiting for a retry (next in {})",
            state.retrying.len(),
            duration_text(until(&next.due_at))
        ));
    }
    let next_round = state
        .automations
        .iter()
        .filter_map(|a| a.next_round_at.as_deref().map(|at| (at, &a.name)))
        .min();
    if let Some((at, name)) = next_round {
        parts.push(format!(
            "next round: {name} in {}",
            duration_text(until(at))
        ));
    }
    if state.stopping {
        parts.push("stopping".to_owned());
    }
    cut(&parts.join(" · "), width)
}

/// `text` cut to `width` columns, an ellipsis where it was cut.
fn cut(text: &str, width: usize) -> String {
    let mut used = 0;
    let mut out = String::new();
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width.saturating_sub(1) {
            let rest: usize = text[out.len()..]
                .chars()
                .map(|c| c.width().unwrap_or(0))
                .sum();
            if used + rest <= width {
                out.push_str(&text[out.len()..]);
            } else {
                out.push('…');
            }
            return out;
        }
        used += w;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use curupira_orchestrator::status::{HostInfo, RunningAttempt, WaitingRetry, timestamp};

    #[test]
    fn the_line_names_the_oldest_tasks_the_retries_and_the_next_round() {
        let live = Live::new(HostInfo::this_process("curupira", None));
        let now = SystemTime::now();
        live.automation_added("fix", Some(now + Duration::from_secs(600)));
        live.automation_added("triage", Some(now + Duration::from_secs(30)));
        for (n, age) in [(1u8, 50), (2, 40), (3, 30), (4, 20)] {
            let id = format!("{n:02x}").repeat(32);
            live.attempt_started(RunningAttempt::new(
                "fix",
                &id,
                1,
                now - Duration::from_secs(age),
            ));
        }
        live.retry_waiting(WaitingRetry {
            automation: "fix".to_owned(),
            task_id: "ff".repeat(32),
            attempt: 2,
            due_at: timestamp(now + Duration::from_secs(90)),
            reason: "exit".to_owned(),
            error: None,
            exit_code: Some(1),
            values: Vec::new(),
        });
        let text = line_text(&live.snapshot(), now, 500);
        assert_eq!(
            text,
            "4 running: fix 010101010101 50 s, fix 020202020202 40 s, fix 030303030303 \
             30 s, 1 more · 1 waiting for a retry (next in 1 min 30 s) · next round: \
             triage in 30 s"
        );
        let short = line_text(&live.snapshot(), now, 20);
        assert_eq!(short, "4 running: fix 0101…");
        assert_eq!(unicode_width::UnicodeWidthStr::width(short.as_str()), 20);
    }

    #[test]
    fn an_idle_line_says_so() {
        let live = Live::new(HostInfo::this_process("curupira", None));
        assert_eq!(
            line_text(&live.snapshot(), SystemTime::now(), 80),
            "nothing running"
        );
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "ab…");
    }
}
