//! The dashboard's state and what a key does to it ([`Dashboard`]): pure, no
//! terminal and no file, so a test drives it key by key and draws it on ratatui's
//! `TestBackend` (`view.rs` draws it).

use std::path::Path;
use std::time::SystemTime;

use curupira_ledger::Status;
use ratatui::widgets::TableState;

use crate::log::LogView;
use crate::snapshot::Snapshot;

/// Whether the dashboard runs its own host or looks at one that runs beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// `curupira tui --attach`: a host runs beside it (or will); quitting leaves it
    /// running.
    Attached,
    /// `curupira tui`: its host is its child, stopped when it quits.
    Dispatching,
}

/// A key, as the dashboard reads it (the terminal's keys mapped to these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Key {
    /// Up arrow (or `k`).
    Up,
    /// Down arrow (or `j`).
    Down,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Home.
    Home,
    /// End.
    End,
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Ctrl-C: quit from anywhere.
    Interrupt,
    /// Any other character.
    Char(char),
}

/// What the loop around the dashboard should do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// Nothing more: the dashboard changed itself, or the key means nothing here.
    Nothing,
    /// Quit (in [`Mode::Dispatching`], stop the host first).
    Quit,
    /// Open the log of this task's attempt and follow it.
    OpenLog(Target),
    /// Ask for this failed task to be dispatched again.
    Retry(Target),
}

/// The task a row of the dashboard names.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Target {
    /// Its automation.
    pub automation: String,
    /// Its id.
    pub task_id: String,
    /// The attempt the row is about, when it says (a running one); else the last.
    pub attempt: Option<u32>,
    /// That attempt's log, when the host published it.
    pub log_path: Option<String>,
}

/// The tables whose rows can be selected, in the order the cursor goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Running,
    Retrying,
    Recent,
}

/// A selected row: which table, which task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selected {
    pub section: Section,
    pub automation: String,
    pub task_id: String,
}

/// How far the stop of a dashboard's own host went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stopping {
    /// Asked once (SIGINT): no new task starts; running agents are waited for.
    Asked,
    /// Asked again: the running agents are being stopped.
    Forced,
}

/// The dashboard: the last [`Snapshot`], the cursor, the open log, the last message.
#[derive(Debug)]
pub struct Dashboard {
    pub(crate) mode: Mode,
    pub(crate) state_dir: String,
    pub(crate) snapshot: Snapshot,
    pub(crate) now: SystemTime,
    pub(crate) selected: Option<Selected>,
    /// Where the cursor was in the list of rows, to stay near it when its row goes.
    index: usize,
    /// The tables' scroll and selection, kept between draws.
    pub(crate) tables: [TableState; 3],
    pub(crate) log: Option<LogView>,
    /// The last message, and when it was said (it shows for a while).
    pub(crate) message: Option<(String, SystemTime)>,
    pub(crate) stopping: Option<Stopping>,
}

impl Dashboard {
    /// A dashboard in `mode` on the state folder `state_dir`, with nothing read yet.
    pub fn new(mode: Mode, state_dir: &Path) -> Dashboard {
        Dashboard {
            mode,
            state_dir: crate::text::clean(&state_dir.display().to_string()),
            snapshot: Snapshot::default(),
            now: SystemTime::now(),
            selected: None,
            index: 0,
            tables: Default::default(),
            log: None,
            message: None,
            stopping: None,
        }
    }

    /// Shows `snapshot` from now on; the cursor stays on its task when the task is
    /// still there, else near where it was.
    pub fn update(&mut self, snapshot: Snapshot) {
        self.snapshot = snapshot;
        let rows = self.rows();
        let found = self
            .selected
            .as_ref()
            .and_then(|selected| rows.iter().position(|row| row == selected));
        match found {
            Some(at) => self.index = at,
            None if rows.is_empty() => self.selected = None,
            None => {
                self.index = self.index.min(rows.len() - 1);
                self.selected = rows.get(self.index).cloned();
            }
        }
        self.sync_tables();
    }

    /// The time the dashboard shows durations up to.
    pub fn set_now(&mut self, now: SystemTime) {
        self.now = now;
    }

    /// Shows `message` in the footer (a retry asked for, why a key did nothing).
    pub fn say(&mut self, message: impl Into<String>) {
        self.message = Some((message.into(), self.now));
    }

    /// The last message said.
    pub fn message(&self) -> Option<&str> {
        self.message.as_ref().map(|(message, _)| message.as_str())
    }

    /// How far the stop of the dashboard's own host went (`None`: not asked).
    pub fn set_stopping(&mut self, stopping: Option<Stopping>) {
        self.stopping = stopping;
    }

    /// The snapshot shown.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Whether an attempt's log is open.
    pub fn log_open(&self) -> bool {
        self.log.is_some()
    }

    pub(crate) fn open_log(&mut self, view: LogView) {
        self.log = Some(view);
    }

    pub(crate) fn log_mut(&mut self) -> Option<&mut LogView> {
        self.log.as_mut()
    }

    /// What `key` does.
    pub fn handle(&mut self, key: Key) -> Action {
        if key == Key::Interrupt {
            return Action::Quit;
        }
        if let Some(log) = &mut self.log {
            match key {
                Key::Esc | Key::Char('q') | Key::Char('h') => self.log = None,
                Key::Up | Key::Char('k') => log.scroll(1),
                Key::Down | Key::Char('j') => log.scroll(-1),
                Key::PageUp => log.scroll(20),
                Key::PageDown => log.scroll(-20),
                Key::Home => log.scroll(isize::MAX),
                Key::End => log.scroll = 0,
                _ => {}
            }
            return Action::Nothing;
        }
        match key {
            Key::Esc | Key::Char('q') => Action::Quit,
            Key::Up | Key::Char('k') => self.move_by(-1),
            Key::Down | Key::Char('j') => self.move_by(1),
            Key::PageUp => self.move_by(-10),
            Key::PageDown => self.move_by(10),
            Key::Home => self.move_by(isize::MIN / 2),
            Key::End => self.move_by(isize::MAX / 2),
            Key::Enter => match self.target() {
                Some(target) => Action::OpenLog(target),
                None => {
                    self.say("no task is selected: ↑ and ↓ select one");
                    Action::Nothing
                }
            },
            Key::Char('r') => self.retry(),
            _ => Action::Nothing,
        }
    }

    /// `r`: a failed task of the recent outcomes is asked for again; any other row
    /// says why not.
    fn retry(&mut self) -> Action {
        let Some(selected) = self.selected.clone() else {
            self.say("no task is selected: select a failed task, then r");
            return Action::Nothing;
        };
        let short = crate::text::short_id(&selected.task_id).to_owned();
        match selected.section {
            Section::Running => self.say(format!(
                "task {short} is running: a running task is not retried (r retries a failed one)"
            )),
            Section::Retrying => self.say(format!(
                "task {short} waits for its retry: the host runs it again itself"
            )),
            Section::Recent => {
                let row = self.snapshot.recent.iter().find(|row| {
                    row.automation == selected.automation && row.task_id == selected.task_id
                });
                match row {
                    Some(row) if row.status == Status::Failed && row.retry_requested => self.say(
                        format!("task {short} is asked for again already: the next round runs it"),
                    ),
                    Some(row) if row.status == Status::Failed => {
                        return self.target().map_or(Action::Nothing, Action::Retry);
                    }
                    Some(row) => self.say(format!(
                        "task {short} {}: only a failed task is retried from here",
                        row.status
                    )),
                    None => {}
                }
            }
        }
        Action::Nothing
    }

    fn move_by(&mut self, by: isize) -> Action {
        let rows = self.rows();
        if rows.is_empty() {
            return Action::Nothing;
        }
        let at = match &self.selected {
            None => 0,
            Some(_) => self.index.saturating_add_signed(by).min(rows.len() - 1),
        };
        self.index = at;
        self.selected = rows.get(at).cloned();
        self.message = None;
        self.sync_tables();
        Action::Nothing
    }

    /// The task of the selected row, with what the row knows of its attempt.
    fn target(&self) -> Option<Target> {
        let selected = self.selected.as_ref()?;
        let same = |automation: &str, task_id: &str| {
            automation == selected.automation && task_id == selected.task_id
        };
        let (attempt, log_path) = match selected.section {
            Section::Running => self
                .snapshot
                .running
                .iter()
                .find(|a| same(&a.automation, &a.task_id))
                .map_or((None, None), |a| (Some(a.attempt), a.log_path.clone())),
            // The attempt that failed, the one before the one it waits for.
            Section::Retrying => (None, None),
            Section::Recent => (None, None),
        };
        Some(Target {
            automation: selected.automation.clone(),
            task_id: selected.task_id.clone(),
            attempt,
            log_path,
        })
    }

    /// Every selectable row, in the cursor's order: running, waiting, recent.
    pub(crate) fn rows(&self) -> Vec<Selected> {
        let row = |section, automation: &str, task_id: &str| Selected {
            section,
            automation: automation.to_owned(),
            task_id: task_id.to_owned(),
        };
        let snapshot = &self.snapshot;
        snapshot
            .running
            .iter()
            .map(|a| row(Section::Running, &a.automation, &a.task_id))
            .chain(
                snapshot
                    .retrying
                    .iter()
                    .map(|r| row(Section::Retrying, &r.automation, &r.task_id)),
            )
            .chain(
                snapshot
                    .recent
                    .iter()
                    .map(|t| row(Section::Recent, &t.automation, &t.task_id)),
            )
            .collect()
    }

    /// Each table's selection, from the cursor.
    fn sync_tables(&mut self) {
        let (running, retrying) = (self.snapshot.running.len(), self.snapshot.retrying.len());
        let at = self.selected.as_ref().map(|selected| {
            let before = match selected.section {
                Section::Running => 0,
                Section::Retrying => running,
                Section::Recent => running + retrying,
            };
            (selected.section, self.index.saturating_sub(before))
        });
        for (slot, section) in [Section::Running, Section::Retrying, Section::Recent]
            .into_iter()
            .enumerate()
        {
            let selected = at.and_then(|(s, i)| (s == section).then_some(i));
            self.tables[slot].select(selected);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::test_data::{failed, running, snapshot_of, succeeded};

    #[test]
    fn the_cursor_goes_through_running_then_recent_and_stays_on_its_task() {
        let mut dashboard = Dashboard::new(Mode::Attached, Path::new(".curupira"));
        dashboard.update(snapshot_of(
            vec![running("fix", 'a', 1)],
            vec![failed("fix", 'b'), succeeded("fix", 'c')],
        ));
        assert_eq!(dashboard.selected.as_ref().unwrap().task_id, "a".repeat(64));
        dashboard.handle(Key::Down);
        assert_eq!(dashboard.selected.as_ref().unwrap().task_id, "b".repeat(64));
        assert_eq!(dashboard.tables[0].selected(), None);
        assert_eq!(dashboard.tables[2].selected(), Some(0));
        // `a` ended: the cursor stays on `b`, now the second row.
        dashboard.update(snapshot_of(
            vec![],
            vec![
                succeeded("fix", 'a'),
                failed("fix", 'b'),
                succeeded("fix", 'c'),
            ],
        ));
        assert_eq!(dashboard.selected.as_ref().unwrap().task_id, "b".repeat(64));
        assert_eq!(dashboard.tables[2].selected(), Some(1));
        dashboard.handle(Key::End);
        assert_eq!(dashboard.selected.as_ref().unwrap().task_id, "c".repeat(64));
        dashboard.handle(Key::Home);
        assert_eq!(dashboard.selected.as_ref().unwrap().task_id, "a".repeat(64));
    }

    #[test]
    fn enter_opens_the_running_attempt_s_log_and_r_retries_only_a_failed_task() {
        let mut dashboard = Dashboard::new(Mode::Dispatching, Path::new(".curupira"));
        dashboard.update(snapshot_of(
            vec![running("fix", 'a', 3)],
            vec![failed("fix", 'b'), succeeded("fix", 'c')],
        ));
        let Action::OpenLog(target) = dashboard.handle(Key::Enter) else {
            panic!("no log opened");
        };
        assert_eq!(target.attempt, Some(3));
        assert_eq!(target.log_path.as_deref(), Some("/logs/3.log"));
        assert_eq!(dashboard.handle(Key::Char('r')), Action::Nothing);
        assert!(dashboard.message().unwrap().contains("is running"));
        dashboard.handle(Key::Down);
        let Action::Retry(target) = dashboard.handle(Key::Char('r')) else {
            panic!("no retry");
        };
        assert_eq!(target.task_id, "b".repeat(64));
        dashboard.handle(Key::Down);
        assert_eq!(dashboard.handle(Key::Char('r')), Action::Nothing);
        let said = dashboard.message().unwrap();
        assert!(said.contains("succeeded: only a failed task"), "{said}");
        assert_eq!(dashboard.handle(Key::Char('q')), Action::Quit);
        assert_eq!(dashboard.handle(Key::Esc), Action::Quit);
    }

    #[test]
    fn in_the_log_q_and_esc_go_back_and_ctrl_c_quits() {
        let mut dashboard = Dashboard::new(Mode::Attached, Path::new(".curupira"));
        dashboard.open_log(LogView::new("fix", "ab", Some(1), None));
        assert_eq!(dashboard.handle(Key::Char('q')), Action::Nothing);
        assert!(!dashboard.log_open());
        dashboard.open_log(LogView::new("fix", "ab", Some(1), None));
        assert_eq!(dashboard.handle(Key::Esc), Action::Nothing);
        assert!(!dashboard.log_open());
        dashboard.open_log(LogView::new("fix", "ab", Some(1), None));
        assert_eq!(dashboard.handle(Key::Interrupt), Action::Quit);
        dashboard.handle(Key::Esc);
        // Nothing to select: the keys say so, nothing breaks.
        assert_eq!(dashboard.handle(Key::Down), Action::Nothing);
        assert_eq!(dashboard.handle(Key::Enter), Action::Nothing);
        assert!(dashboard.message().unwrap().contains("no task is selected"));
    }
}
