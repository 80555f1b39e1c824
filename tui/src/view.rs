//! How the dashboard is drawn ([`Dashboard::draw`]): a line about the host, four
//! tables (running, the retry queue, the automations, recent outcomes) or an
//! attempt's log, and a footer with the keys. Any size works: the tables share the
//! height by what they hold, cells are cut to their column, and a resized terminal is
//! drawn anew at its new size.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, HighlightSpacing, Paragraph, Row, Table, TableState};

use curupira_ledger::Status;

use crate::dashboard::{Dashboard, Mode, Stopping};
use crate::snapshot::{HostState, LedgerState};
use crate::text::{clean, clock, duration_text, json_pairs_text, pairs_text, relative, short_id};

/// What marks the selected row (also for a screen read as text).
const CURSOR: &str = "> ";

/// How long a message stays in the footer.
const MESSAGE_SHOWN: std::time::Duration = std::time::Duration::from_secs(15);

impl Dashboard {
    /// Draws the dashboard on `frame`, the whole of it.
    pub fn draw(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        let footer = self.footer();
        let [top, body, bottom] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(0),
            Constraint::Length(footer.len() as u16),
        ])
        .areas(area);
        frame.render_widget(Paragraph::new(self.host_line()), top);
        if self.log.is_some() {
            self.draw_log(frame, body);
        } else {
            self.draw_tables(frame, body);
        }
        frame.render_widget(Paragraph::new(footer), bottom);
    }

    /// The first line: the host, as `run.lock` and `status.json` say.
    fn host_line(&self) -> Line<'static> {
        let host = &self.snapshot.host;
        let pid = host
            .pid
            .map_or_else(|| "pid unknown".to_owned(), |pid| format!("pid {pid}"));
        let (text, style) = match host.state {
            HostState::Running => {
                let up = host.started_at.as_deref().map_or_else(String::new, |at| {
                    format!(
                        ", up {}",
                        duration_text(
                            curupira_orchestrator::status::seconds_since(at, self.now),
                            true
                        )
                    )
                });
                let stopping = if host.stopping {
                    " · stopping: no new task starts"
                } else {
                    ""
                };
                (
                    format!("host running ({pid}{up}){stopping}"),
                    Style::new().fg(Color::Green),
                )
            }
            HostState::Stopped => (
                format!(
                    "host stopped ({pid}, at {} UTC) · watching `{}` for the next one",
                    host.ended_at
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), clock),
                    self.state_dir
                ),
                Style::new().fg(Color::Yellow),
            ),
            HostState::Gone => (
                format!(
                    "host stopped: it ({pid}) ended without saying so (killed?) · watching `{}` \
                     for the next one",
                    self.state_dir
                ),
                Style::new().fg(Color::Red),
            ),
            _ => (
                format!(
                    "host stopped: none runs on `{}` · watching for one",
                    self.state_dir
                ),
                Style::new().fg(Color::Yellow),
            ),
        };
        let mode = match self.mode {
            Mode::Attached => "attached",
            Mode::Dispatching => "dispatching",
        };
        let mut spans = vec![
            Span::styled(
                format!(" curupira tui ({mode}) "),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Span::styled(text, style),
        ];
        if let Some(config) = &host.config {
            spans.push(Span::raw(format!(" · {}", clean(config))));
        }
        Line::from(spans)
    }

    /// The footer's lines: what is going on (a message, the problems of the last look,
    /// the host's stop), then the keys.
    fn footer(&self) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let notice = match (self.stopping, &self.message) {
            (Some(Stopping::Asked), _) => Some((
                format!(
                    "stopping the host: no new task starts; {} · q again stops {}",
                    match self.snapshot.running.len() {
                        0 => "nothing runs".to_owned(),
                        1 => "waiting for the running agent".to_owned(),
                        n => format!("waiting for the {n} running agents"),
                    },
                    if self.snapshot.running.len() == 1 {
                        "it"
                    } else {
                        "them"
                    }
                ),
                Color::Yellow,
            )),
            (Some(Stopping::Forced), _) => Some((
                "stopping the running agents (SIGTERM, then SIGKILL after their grace) · q \
                 again kills the host"
                    .to_owned(),
                Color::Yellow,
            )),
            (None, Some((message, said)))
                if self.now.duration_since(*said).unwrap_or_default() < MESSAGE_SHOWN =>
            {
                Some((clean(message), Color::Cyan))
            }
            (None, _) => self
                .snapshot
                .problems
                .first()
                .map(|problem| (clean(problem), Color::Red)),
        };
        if let Some((text, color)) = notice {
            lines.push(Line::styled(format!(" {text}"), Style::new().fg(color)));
        }
        let keys: &[(&str, &str)] = if self.log.is_some() {
            &[
                ("↑↓ PgUp PgDn", "scroll"),
                ("End", "follow"),
                ("Esc/q", "back"),
                ("Ctrl-C", "quit"),
            ]
        } else {
            &[
                ("↑↓", "select"),
                ("Enter", "log"),
                ("r", "retry a failed task"),
                ("q/Esc", "quit"),
            ]
        };
        let mut spans = vec![Span::raw(" ")];
        for (at, (key, what)) in keys.iter().enumerate() {
            if at > 0 {
                spans.push(Span::raw("   "));
            }
            spans.push(Span::styled(
                *key,
                Style::new().add_modifier(Modifier::BOLD),
            ));
            spans.push(Span::raw(format!(" {what}")));
        }
        if self.mode == Mode::Attached && self.log.is_none() {
            spans.push(Span::raw(" (the host keeps running)"));
        }
        lines.push(Line::from(spans));
        lines
    }

    fn draw_tables(&mut self, frame: &mut Frame<'_>, area: Rect) {
        let snapshot = &self.snapshot;
        let height = area.height;
        // Each table as tall as its rows (a border, a header, at least one row), the
        // first three within a share of the height; the recent outcomes take the rest.
        let wanted = |rows: usize, share: u16| -> u16 {
            let rows = u16::try_from(rows.max(1)).unwrap_or(u16::MAX);
            rows.saturating_add(3).min((height / share).max(4))
        };
        let [running, retrying, automations, recent] = Layout::vertical([
            Constraint::Length(wanted(snapshot.running.len(), 3)),
            Constraint::Length(wanted(snapshot.retrying.len(), 5)),
            Constraint::Length(wanted(snapshot.automations.len(), 5)),
            Constraint::Min(0),
        ])
        .areas(area);
        let now = self.now;
        let plain = |text: String| (text, Style::new());

        let rows: Vec<Vec<(String, Style)>> = snapshot
            .running
            .iter()
            .map(|attempt| {
                vec![
                    plain(short_id(&attempt.task_id).to_owned()),
                    plain(clean(&attempt.automation)),
                    plain(attempt.attempt.to_string()),
                    plain(duration_text(
                        curupira_orchestrator::status::seconds_since(&attempt.started_at, now),
                        true,
                    )),
                    plain(
                        attempt
                            .pid
                            .map_or_else(|| "-".to_owned(), |pid| pid.to_string()),
                    ),
                    plain(pairs_text(
                        attempt
                            .values
                            .iter()
                            .map(|p| (p.key.as_str(), p.value.as_str())),
                    )),
                ]
            })
            .collect();
        let grid = Grid {
            title: format!(" Running ({}) ", snapshot.running.len()),
            header: &[
                "TASK",
                "AUTOMATION",
                "ATTEMPT",
                "RUNNING FOR",
                "PID",
                "ITEM",
            ],
            caps: &[12, 20, 7, 12, 8],
            rows,
            empty: "nothing runs now",
        };
        grid.draw(frame, running, Some(&mut self.tables[0]));

        let rows = snapshot
            .retrying
            .iter()
            .map(|retry| {
                let after = match (&retry.error, retry.exit_code) {
                    (Some(error), _) => clean(error),
                    (None, Some(code)) => format!("{} {code}", clean(&retry.reason)),
                    (None, None) => clean(&retry.reason),
                };
                vec![
                    plain(short_id(&retry.task_id).to_owned()),
                    plain(clean(&retry.automation)),
                    plain(retry.attempt.to_string()),
                    plain(format!(
                        "{} ({})",
                        relative(&retry.due_at, now),
                        clock(&retry.due_at)
                    )),
                    plain(after),
                    plain(pairs_text(
                        retry
                            .values
                            .iter()
                            .map(|p| (p.key.as_str(), p.value.as_str())),
                    )),
                ]
            })
            .collect();
        let grid = Grid {
            title: format!(" Retry queue ({}) ", snapshot.retrying.len()),
            header: &["TASK", "AUTOMATION", "ATTEMPT", "RETRIES", "AFTER", "ITEM"],
            caps: &[12, 20, 7, 26, 30],
            rows,
            empty: "no task waits for a retry",
        };
        grid.draw(frame, retrying, Some(&mut self.tables[1]));

        let ticks = snapshot.automations.iter().any(|a| a.next_tick.is_some());
        let at_text = |at: &str| format!("{} ({})", relative(at, now), clock(at));
        let rows = snapshot
            .automations
            .iter()
            .map(|automation| {
                let state = &automation.state;
                let next = if !state.active {
                    "stopped (it failed)".to_owned()
                } else if state.round_running {
                    "a round runs now".to_owned()
                } else {
                    state
                        .next_round_at
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), at_text)
                };
                let mut cells = vec![
                    plain(clean(&state.name)),
                    plain(state.rounds.to_string()),
                    plain(
                        state
                            .last_round_ended_at
                            .as_deref()
                            .map_or_else(|| "-".to_owned(), |at| relative(at, now)),
                    ),
                    plain(next),
                ];
                if ticks {
                    cells.push(plain(
                        automation
                            .next_tick
                            .as_deref()
                            .map_or_else(|| "-".to_owned(), at_text),
                    ));
                }
                // The last column fills the rest.
                cells.push(plain(String::new()));
                cells
            })
            .collect();
        let grid = Grid {
            title: format!(" Automations ({}) ", snapshot.automations.len()),
            header: if ticks {
                &[
                    "AUTOMATION",
                    "ROUNDS",
                    "LAST ROUND ENDED",
                    "NEXT ROUND",
                    "NEXT TICK",
                    "",
                ]
            } else {
                &["AUTOMATION", "ROUNDS", "LAST ROUND ENDED", "NEXT ROUND", ""]
            },
            caps: &[24, 6, 16, 26, 26],
            rows,
            empty: "no host has said which automations it runs",
        };
        grid.draw(frame, automations, None);

        let rows = snapshot
            .recent
            .iter()
            .map(|task| {
                let (status, color) = match task.status {
                    Status::Failed => ("failed", Color::Red),
                    Status::Succeeded => ("succeeded", Color::Green),
                    Status::Interrupted => ("interrupted", Color::Yellow),
                    _ => ("running", Color::Reset),
                };
                let status = if task.retry_requested {
                    format!("{status}, retry asked")
                } else {
                    status.to_owned()
                };
                let last = match (task.reason.as_deref(), task.exit_code) {
                    (Some("exit"), Some(code)) => format!("exit {code}"),
                    (Some(reason), Some(code)) => format!("{} (exit {code})", clean(reason)),
                    (Some(reason), None) => clean(reason),
                    (None, _) => "-".to_owned(),
                };
                vec![
                    plain(short_id(&task.task_id).to_owned()),
                    plain(clean(&task.automation)),
                    (status, Style::new().fg(color)),
                    plain(task.attempts.to_string()),
                    plain(last),
                    plain(
                        task.duration_seconds
                            .map_or_else(|| "-".to_owned(), |s| duration_text(s, false)),
                    ),
                    plain(relative(&task.updated_at, now)),
                    plain(json_pairs_text(&task.values)),
                ]
            })
            .collect();
        let grid = Grid {
            title: format!(" Recent outcomes ({}) ", snapshot.recent.len()),
            header: &[
                "TASK",
                "AUTOMATION",
                "STATUS",
                "ATTEMPTS",
                "LAST",
                "DURATION",
                "CHANGED",
                "ITEM",
            ],
            caps: &[12, 20, 24, 8, 20, 10, 14],
            rows,
            empty: match snapshot.ledger {
                LedgerState::Off => "the ledger is off: no history of tasks",
                LedgerState::Missing => "no task recorded yet",
                _ => "no task ended yet",
            },
        };
        grid.draw(frame, recent, Some(&mut self.tables[2]));
    }

    fn draw_log(&mut self, frame: &mut Frame<'_>, area: Rect) {
        let Some(log) = &self.log else {
            return;
        };
        let state = match (&log.end, log.scroll) {
            (Some(_), _) => "ended".to_owned(),
            (None, 0) => "following".to_owned(),
            (None, n) => format!("{n} lines up; End follows"),
        };
        let attempt = log
            .attempt
            .map_or_else(String::new, |n| format!(" · attempt {n}"));
        let title = format!(
            " Log · {} {}{attempt} · {state} ",
            clean(&log.automation),
            short_id(&log.task_id)
        );
        let inner = area.height.saturating_sub(2) as usize;
        let mut lines: Vec<Line<'_>> = Vec::new();
        let end_line = log.end.as_ref().map(|end| {
            Line::styled(
                format!("— {} —", clean(end)),
                Style::new().add_modifier(Modifier::BOLD),
            )
        });
        let room = inner.saturating_sub(usize::from(end_line.is_some()));
        let last = log.lines.len().saturating_sub(log.scroll);
        let first = last.saturating_sub(room);
        if log.lines.is_empty() && log.end.is_none() {
            lines.push(Line::styled(
                "(nothing written yet: the log is made at the attempt's first line)",
                Style::new().add_modifier(Modifier::DIM),
            ));
        }
        lines.extend(
            log.lines
                .range(first..last)
                .map(|line| Line::raw(line.as_str())),
        );
        if let Some(end) = end_line.filter(|_| log.scroll == 0) {
            lines.push(end);
        }
        frame.render_widget(
            Paragraph::new(lines).block(Block::bordered().title(title)),
            area,
        );
    }
}

/// A table: a border with its title, a bold header, each column as wide as its
/// widest cell (at most its cap), the last taking the rest; with a selection, the
/// cursor's mark. Empty, it says so under its header.
struct Grid<'h> {
    title: String,
    header: &'h [&'h str],
    /// The widest each column but the last may be.
    caps: &'h [u16],
    rows: Vec<Vec<(String, Style)>>,
    empty: &'h str,
}

impl Grid<'_> {
    fn draw(self, frame: &mut Frame<'_>, area: Rect, state: Option<&mut TableState>) {
        let widths: Vec<Constraint> = self
            .caps
            .iter()
            .take(self.header.len().saturating_sub(1))
            .enumerate()
            .map(|(column, cap)| {
                let widest = self
                    .rows
                    .iter()
                    .filter_map(|row| row.get(column))
                    .map(|(text, _)| Span::raw(text.as_str()).width())
                    .chain(self.header.get(column).map(|name| name.len()))
                    .max()
                    .unwrap_or(0);
                // An empty table keeps the widths its rows will take.
                let widest = if self.rows.is_empty() {
                    usize::from(*cap)
                } else {
                    widest
                };
                Constraint::Length(u16::try_from(widest).unwrap_or(u16::MAX).min(*cap))
            })
            .chain([Constraint::Fill(1)])
            .collect();
        let empty = self.rows.is_empty();
        let rows = self.rows.into_iter().map(|row| {
            Row::new(
                row.into_iter()
                    .map(|(text, style)| Cell::from(Span::styled(text, style))),
            )
        });
        let table = Table::new(rows, widths)
            .header(
                Row::new(self.header.iter().copied())
                    .style(Style::new().add_modifier(Modifier::BOLD)),
            )
            .block(Block::bordered().title(self.title));
        match state {
            Some(state) => {
                let table = table
                    .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
                    .highlight_symbol(CURSOR)
                    .highlight_spacing(HighlightSpacing::Always);
                frame.render_stateful_widget(table, area, state);
            }
            None => frame.render_widget(table, area),
        }
        if empty {
            say_empty(frame, area, self.empty);
        }
    }
}

/// The line an empty table shows under its header, across its width.
fn say_empty(frame: &mut Frame<'_>, table: Rect, text: &str) {
    let line = Rect {
        x: table.x.saturating_add(1),
        y: table.y.saturating_add(2),
        width: table.width.saturating_sub(2),
        height: 1,
    }
    .intersection(table);
    if line.height > 0 && table.height > 3 {
        frame.render_widget(
            Paragraph::new(format!("  {text}")).style(Style::new().add_modifier(Modifier::DIM)),
            line,
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::Path;
    use std::time::Duration;

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::dashboard::Key;
    use crate::log::LogView;
    use crate::snapshot::{Automation, Snapshot};
    use crate::test_data::{automation_state, failed, now, running, snapshot_of, succeeded};
    use curupira_orchestrator::status::{WaitingRetry, timestamp};

    /// The screen as text, one string per line, trailing blanks cut.
    fn screen(dashboard: &mut Dashboard, width: u16, height: u16) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| dashboard.draw(frame)).unwrap();
        let buffer = terminal.backend().buffer();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect()
    }

    fn find<'s>(screen: &'s [String], text: &str) -> &'s str {
        screen
            .iter()
            .find(|line| line.contains(text))
            .unwrap_or_else(|| panic!("`{text}` is not on the screen:\n{}", screen.join("\n")))
    }

    fn busy() -> Snapshot {
        let mut snapshot = snapshot_of(
            vec![running("fix", 'a', 2)],
            vec![failed("fix", 'b'), succeeded("triage", 'c')],
        );
        snapshot.retrying.push(WaitingRetry {
            automation: "fix".into(),
            task_id: "d".repeat(64),
            attempt: 2,
            due_at: timestamp(now() + Duration::from_secs(30)),
            reason: "exit".into(),
            error: None,
            exit_code: Some(3),
            values: Vec::new(),
        });
        snapshot.automations = vec![
            Automation::new(automation_state(serde_json::json!({
                "name": "fix", "active": true, "rounds": 4, "round_running": false,
                "last_round_started_at": null,
                "last_round_ended_at": timestamp(now() - Duration::from_secs(5)),
                "next_round_at": timestamp(now() + Duration::from_secs(55)),
            }))),
            Automation {
                next_tick: Some(timestamp(now() + Duration::from_secs(3600))),
                ..Automation::new(automation_state(serde_json::json!({
                    "name": "triage", "active": true, "rounds": 1, "round_running": true,
                    "last_round_started_at": null, "last_round_ended_at": null,
                    "next_round_at": null,
                })))
            },
        ];
        snapshot
    }

    #[test]
    fn every_panel_shows_what_the_host_published_and_the_ledger_keeps() {
        let mut dashboard = Dashboard::new(Mode::Dispatching, Path::new("/p/.curupira"));
        dashboard.update(busy());
        dashboard.set_now(now());
        let screen = screen(&mut dashboard, 120, 32);
        assert!(
            screen[0].contains("curupira tui (dispatching)"),
            "{}",
            screen[0]
        );
        assert!(
            screen[0].contains("host running (pid 4242, up 2 min 0 s)"),
            "{}",
            screen[0]
        );
        let row = find(&screen, "aaaaaaaaaaaa");
        assert!(row.contains(CURSOR), "the first row is selected: {row}");
        for cell in ["fix", "2", "1 min 30 s", "777", "n=a"] {
            assert!(row.contains(cell), "`{cell}` not in {row}");
        }
        let row = find(&screen, "dddddddddddd");
        assert!(row.contains("in 30 s") && row.contains("exit 3"), "{row}");
        let row = find(&screen, "a round runs now");
        assert!(
            row.contains("triage") && row.contains("in 1 h 0 min"),
            "{row}"
        );
        assert!(find(&screen, "NEXT ROUND").contains("NEXT TICK"));
        let row = find(&screen, "in 55 s");
        assert!(row.contains("fix") && row.contains("5 s ago"), "{row}");
        let row = find(&screen, "bbbbbbbbbbbb");
        assert!(row.contains("failed") && row.contains("exit 4"), "{row}");
        assert!(find(&screen, "cccccccccccc").contains("succeeded"));
        assert!(screen.iter().any(|l| l.contains("Retry queue (1)")));
        assert!(screen.iter().any(|l| l.contains("Recent outcomes (2)")));
        let footer = screen.last().unwrap();
        assert!(
            footer.contains("Enter log") && footer.contains("q/Esc quit"),
            "{footer}"
        );
    }

    #[test]
    fn the_cursor_mark_follows_the_keys_and_a_retry_is_said() {
        let mut dashboard = Dashboard::new(Mode::Attached, Path::new(".curupira"));
        dashboard.update(busy());
        dashboard.set_now(now());
        dashboard.handle(Key::Down);
        dashboard.handle(Key::Down);
        let shown = screen(&mut dashboard, 100, 30);
        assert!(
            find(&shown, "bbbbbbbbbbbb").starts_with("│> "),
            "{shown:#?}"
        );
        assert!(!find(&shown, "aaaaaaaaaaaa").contains(CURSOR));
        assert!(shown.last().unwrap().contains("(the host keeps running)"));
        dashboard.say("task bbbbbbbbbbbb of `fix` will be dispatched again");
        let shown = screen(&mut dashboard, 100, 30);
        assert!(shown[28].contains("will be dispatched again"), "{shown:#?}");
        // A while later it is gone.
        dashboard.set_now(now() + MESSAGE_SHOWN);
        let shown = screen(&mut dashboard, 100, 30);
        assert!(
            !shown.iter().any(|l| l.contains("dispatched again")),
            "{shown:#?}"
        );
    }

    #[test]
    fn any_size_draws_the_whole_frame_and_no_host_is_said() {
        let mut dashboard = Dashboard::new(Mode::Attached, Path::new("/p/.curupira"));
        dashboard.update(Snapshot::default());
        for (width, height) in [(100, 30), (60, 20), (40, 10), (20, 5)] {
            let shown = screen(&mut dashboard, width, height);
            assert!(shown[0].len() <= usize::from(width) * 4);
            if height >= 20 {
                let top = find(&shown, "Running (0)");
                assert!(top.starts_with('┌') && top.ends_with('┐'), "{top}");
                assert_eq!(top.chars().count(), usize::from(width), "{top}");
                find(&shown, "nothing runs now");
                find(&shown, "no task recorded yet");
            }
        }
        let shown = screen(&mut dashboard, 100, 30);
        assert!(
            shown[0].contains("none runs on `/p/.curupira` · watching for one"),
            "{}",
            shown[0]
        );
    }

    #[test]
    fn the_log_view_shows_the_last_lines_and_why_it_stopped() {
        let mut dashboard = Dashboard::new(Mode::Attached, Path::new(".curupira"));
        let mut log = LogView::new("fix", &"a".repeat(64), Some(2), None);
        for n in 0..100 {
            log.push(format!("2026-12-02T06:28:{:02}.000Z stdout line {n}\n", n % 60).as_bytes());
        }
        dashboard.open_log(log);
        let shown = screen(&mut dashboard, 80, 20);
        assert!(find(&shown, "Log · fix aaaaaaaaaaaa · attempt 2").contains("following"));
        assert!(find(&shown, "line 99").contains("06:28:39 stdout line 99"));
        assert!(
            !shown.iter().any(|l| l.contains("line 80")),
            "only what fits"
        );
        assert!(shown.last().unwrap().contains("Esc/q back"));
        dashboard.handle(Key::PageUp);
        let shown = screen(&mut dashboard, 80, 20);
        assert!(find(&shown, "Log ·").contains("20 lines up"));
        assert!(shown.iter().any(|l| l.contains("line 79")));
        dashboard.handle(Key::End);
        if let Some(log) = dashboard.log_mut() {
            log.finish("attempt 2 ended: succeeded (exit 0)");
        }
        let shown = screen(&mut dashboard, 80, 20);
        assert!(find(&shown, "— attempt 2 ended").contains("succeeded (exit 0)"));
        assert!(find(&shown, "Log ·").contains("ended"));
    }

    #[test]
    fn the_stop_of_its_own_host_is_said_in_the_footer() {
        let mut dashboard = Dashboard::new(Mode::Dispatching, Path::new(".curupira"));
        dashboard.update(busy());
        dashboard.set_stopping(Some(Stopping::Asked));
        let shown = screen(&mut dashboard, 100, 30);
        assert!(
            find(&shown, "stopping the host").contains("q again stops it"),
            "{shown:#?}"
        );
        dashboard.set_stopping(Some(Stopping::Forced));
        let shown = screen(&mut dashboard, 100, 30);
        find(&shown, "q again kills the host");
    }
}
