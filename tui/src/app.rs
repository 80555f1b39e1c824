//! The dashboard's loop: a look at the state folder every [`READ_EVERY`], the open
//! log read every [`LOG_EVERY`], a draw and a wait for a key (at most [`TICK`]) in
//! turn, on one thread. It knows the terminal only as a ratatui `Terminal` and an
//! [`Input`], so a test runs it on `TestBackend` with scripted keys.

use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use curupira_ledger::AttemptRecord;
use ratatui::Terminal;
use ratatui::backend::Backend;

use crate::dashboard::{Action, Dashboard, Key, Mode, Stopping, Target};
use crate::host::HostChild;
use crate::log::LogView;
use crate::snapshot::{HostState, LedgerState};
use crate::source::Source;
use crate::text::duration_text;

/// How often the state folder and the ledger are read.
pub(crate) const READ_EVERY: Duration = Duration::from_millis(400);

/// How often the open log is read.
pub(crate) const LOG_EVERY: Duration = Duration::from_millis(200);

/// The longest wait for a key between two draws.
pub(crate) const TICK: Duration = Duration::from_millis(100);

/// After SIGHUP, SIGINT or SIGTERM to the dashboard (nobody is there to press `q`
/// twice): how long its host gets after the first stop request, then after the
/// second, before it is killed.
pub(crate) const SIGNALLED_STOP: (Duration, Duration) =
    (Duration::from_secs(3), Duration::from_secs(30));

/// Where keys come from.
pub(crate) trait Input {
    /// The next key, waiting at most `wait`; `None` when none came. An error is a
    /// terminal that can no longer be read (closed).
    fn next(&mut self, wait: Duration) -> io::Result<Option<Key>>;
}

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// `q` (a dashboard without a host of its own).
    Quit,
    /// Its host exited with `code`; `asked` when the dashboard stopped it.
    Host { code: i32, asked: bool },
}

/// Runs the dashboard in `mode` on `terminal` until it quits, or until its `host`
/// (in [`Mode::Dispatching`]) exits. `signalled` tells whether a signal asked the
/// dashboard to leave. A terminal that can no longer be drawn or read (closed) ends
/// it as a signal does.
pub(crate) fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    input: &mut dyn Input,
    source: &Source,
    mode: Mode,
    mut host: Option<&mut HostChild>,
    signalled: &dyn Fn() -> bool,
) -> Ended {
    let mut dashboard = Dashboard::new(mode, source.state_dir());
    let mut next_read = Instant::now();
    let mut next_log = Instant::now();
    let mut terminal_lost = false;
    loop {
        if let Some(host) = host.as_deref_mut() {
            if let Some(code) = host.exited() {
                return Ended::Host {
                    code,
                    asked: host.asked(),
                };
            }
            dashboard.set_stopping(host.stopping());
        }
        if terminal_lost || signalled() {
            return match host {
                Some(host) => Ended::Host {
                    code: host.stop_within(SIGNALLED_STOP.0, SIGNALLED_STOP.1),
                    asked: true,
                },
                None => Ended::Quit,
            };
        }
        let now = Instant::now();
        if now >= next_read {
            next_read = now + READ_EVERY;
            dashboard.update(source.read());
            look_for_the_end(&mut dashboard, source);
        }
        if now >= next_log {
            next_log = now + LOG_EVERY;
            if let Some(log) = dashboard.log_mut().filter(|log| log.following())
                && let Err(err) = log.read_more()
            {
                log.finish(format!("cannot read the log: {err}"));
            }
        }
        dashboard.set_now(SystemTime::now());
        if terminal.draw(|frame| dashboard.draw(frame)).is_err() {
            terminal_lost = true;
            continue;
        }
        let key = match input.next(TICK) {
            Ok(Some(key)) => key,
            Ok(None) => continue,
            Err(_) => {
                terminal_lost = true;
                continue;
            }
        };
        match dashboard.handle(key) {
            Action::Quit => match host.as_deref_mut() {
                None => return Ended::Quit,
                Some(host) if host.stopping() == Some(Stopping::Forced) => {
                    return Ended::Host {
                        code: host.kill(),
                        asked: true,
                    };
                }
                Some(host) => host.ask_stop(),
            },
            Action::OpenLog(target) => {
                open_log(&mut dashboard, source, &target);
                next_log = Instant::now() + LOG_EVERY;
            }
            Action::Retry(target) => {
                let said = source.request_retry(&target.automation, &target.task_id);
                dashboard.say(said.unwrap_or_else(|why| why));
                next_read = Instant::now();
            }
            _ => {}
        }
    }
}

/// Opens the log of the target's attempt: its path from what the host published,
/// else from the ledger's history, which also says whether it ended.
fn open_log(dashboard: &mut Dashboard, source: &Source, target: &Target) {
    let record = source.attempt(&target.automation, &target.task_id, target.attempt);
    let found = record.as_ref().ok().and_then(Option::as_ref);
    let path = target
        .log_path
        .clone()
        .or_else(|| found.and_then(|attempt| attempt.log_path.clone()));
    let attempt = target.attempt.or(found.map(|attempt| attempt.attempt));
    let mut view = LogView::new(
        &target.automation,
        &target.task_id,
        attempt,
        path.as_ref().map(PathBuf::from),
    );
    match (&record, &path) {
        (Err(err), None) => view.finish(format!("cannot read the ledger: {err}")),
        (Ok(None), None) if dashboard.snapshot().ledger == LedgerState::Off => view.finish(
            "the ledger is off (`[settings.ledger] enabled = false`): attempts keep no log",
        ),
        (Ok(None), None) => view.finish("the ledger has no attempt of this task"),
        (Ok(Some(_)), None) => {
            view.finish("this attempt has no log (it ran without the ledger's logs)");
        }
        _ => {}
    }
    if let Err(err) = view.read_more() {
        view.finish(format!("cannot read the log: {err}"));
    }
    if let Some(attempt) = found.filter(|attempt| attempt.ended_at.is_some()) {
        view.finish(ended(attempt));
    }
    dashboard.open_log(view);
}

/// Stops following the open log when its attempt ended, or when no host runs any
/// more while it has not (as `tasks log --follow` stops), after a last read.
fn look_for_the_end(dashboard: &mut Dashboard, source: &Source) {
    let host_running = dashboard.snapshot().host.state == HostState::Running;
    let state_dir = source.state_dir().display().to_string();
    let Some(log) = dashboard.log_mut().filter(|log| log.end.is_none()) else {
        return;
    };
    let Ok(Some(attempt)) = source.attempt(&log.automation, &log.task_id, log.attempt) else {
        return;
    };
    if attempt.ended_at.is_some() {
        let _ = log.read_more();
        log.finish(ended(&attempt));
    } else if !host_running {
        let _ = log.read_more();
        log.finish(format!(
            "no host runs on `{state_dir}` any more, and attempt {} never ended",
            attempt.attempt
        ));
    }
}

/// How an attempt ended, in a line: `attempt 2 ended: failed (exit 4) after 3.2 s`.
fn ended(attempt: &AttemptRecord) -> String {
    let outcome = attempt
        .outcome
        .map_or_else(|| "ended".to_owned(), |outcome| outcome.to_string());
    let how = match (attempt.reason.as_deref(), attempt.exit_code) {
        (Some("exit"), Some(code)) => format!(" (exit {code})"),
        (Some(reason), Some(code)) => format!(" ({reason}, exit {code})"),
        (Some(reason), None) => format!(" ({reason})"),
        (None, _) => String::new(),
    };
    let after = attempt.duration_seconds.map_or_else(String::new, |s| {
        format!(" after {}", duration_text(s, false))
    });
    format!("attempt {} ended: {outcome}{how}{after}", attempt.attempt)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::VecDeque;

    use ratatui::backend::TestBackend;

    use super::*;
    use curupira_ledger::{Ledger, Status};

    /// Events given one per wait, then none.
    struct Script(VecDeque<Option<Key>>);

    impl Input for Script {
        fn next(&mut self, _: Duration) -> io::Result<Option<Key>> {
            Ok(self.0.pop_front().flatten())
        }
    }

    fn screen(terminal: &Terminal<TestBackend>) -> String {
        let buffer = terminal.backend().buffer();
        let width = buffer.area.width;
        buffer
            .content()
            .chunks(usize::from(width))
            .map(|row| row.iter().map(|cell| cell.symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn attached_it_quits_on_q_and_retries_a_failed_task_on_r() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut ledger = Ledger::open(&path).unwrap();
        let id = "ab".repeat(32);
        ledger
            .attempt_started("fix", &id, "[]", "/work", 1)
            .unwrap();
        ledger
            .finished("fix", &id, Status::Failed, Some(4), "exit")
            .unwrap();
        let source = Source::new(dir.path(), Some(path));
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        let mut keys = Script([None, Some(Key::Char('r')), Some(Key::Char('q'))].into());
        let ended = run(
            &mut terminal,
            &mut keys,
            &source,
            Mode::Attached,
            None,
            &|| false,
        );
        assert_eq!(ended, Ended::Quit);
        let rows = ledger.list(&Default::default(), 10).unwrap();
        assert!(rows[0].retry_requested, "r asked for it again");
        let shown = screen(&terminal);
        assert!(shown.contains("retry asked"), "{shown}");
    }

    #[test]
    fn a_signal_or_a_lost_terminal_ends_it() {
        let dir = tempfile::tempdir().unwrap();
        let source = Source::new(dir.path(), None);
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        let ended = run(
            &mut terminal,
            &mut Script(VecDeque::new()),
            &source,
            Mode::Attached,
            None,
            &|| true,
        );
        assert_eq!(ended, Ended::Quit);

        struct Closed;
        impl Input for Closed {
            fn next(&mut self, _: Duration) -> io::Result<Option<Key>> {
                Err(io::Error::from(io::ErrorKind::BrokenPipe))
            }
        }
        let ended = run(
            &mut terminal,
            &mut Closed,
            &source,
            Mode::Attached,
            None,
            &|| false,
        );
        assert_eq!(ended, Ended::Quit);
    }

    #[test]
    fn enter_on_an_ended_task_shows_its_log_and_how_it_ended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut ledger = Ledger::open(&path).unwrap();
        let id = "cd".repeat(32);
        let log = dir.path().join("1.log");
        std::fs::write(&log, "2026-12-02T06:28:05.996Z stdout it went wrong\n").unwrap();
        ledger
            .attempt_started("fix", &id, "[]", "/work", 1)
            .unwrap();
        ledger.attempt_log("fix", &id, log.to_str()).unwrap();
        ledger
            .finished("fix", &id, Status::Failed, Some(4), "exit")
            .unwrap();
        let source = Source::new(dir.path(), Some(path));
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        // The first look selects the task, Enter opens its log; a few draws later a
        // signal ends the loop.
        let mut keys = Script([None, Some(Key::Enter), None].into());
        let quit_after = std::cell::Cell::new(0);
        let ended = run(
            &mut terminal,
            &mut keys,
            &source,
            Mode::Attached,
            None,
            &|| {
                quit_after.set(quit_after.get() + 1);
                quit_after.get() > 4
            },
        );
        assert_eq!(ended, Ended::Quit);
        let shown = screen(&terminal);
        assert!(shown.contains("06:28:05 stdout it went wrong"), "{shown}");
        assert!(
            shown.contains("attempt 1 ended: failed (exit 4)"),
            "{shown}"
        );
    }
}
