//! An attempt's log, followed as `curupira tasks log --follow` follows it
//! ([`LogView`]): what the file holds past the offset read so far, read again from its
//! start when the host rewrote it shorter (a log at its cap keeps its newer half), and
//! kept as whole lines, at most [`MAX_LINES`] of them. Opened on a long log, only its
//! last [`FIRST_READ`] bytes are read.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, ErrorKind, Read, Seek, SeekFrom};
use std::path::PathBuf;

use crate::text;

/// The most lines the view keeps (the oldest go first).
pub(crate) const MAX_LINES: usize = 5_000;

/// How much of a log is read when it is opened: its end.
pub(crate) const FIRST_READ: u64 = 256 * 1024;

/// The most read at one look, so a burst never stalls the screen.
const READ_AT_ONCE: u64 = 1024 * 1024;

/// A line longer than this is shown in pieces.
const LONGEST_LINE: usize = 64 * 1024;

/// The log of one attempt, as the dashboard shows and follows it.
#[derive(Debug)]
pub(crate) struct LogView {
    /// The task's automation.
    pub automation: String,
    /// The task.
    pub task_id: String,
    /// The attempt's number, when known.
    pub attempt: Option<u32>,
    /// The file, when the attempt has one.
    path: Option<PathBuf>,
    /// How far the file was read.
    offset: u64,
    /// The start of a line not ended yet.
    partial: Vec<u8>,
    /// The text before the first line break is not a whole line (read from the
    /// middle of the file).
    skip_to_line: bool,
    /// The lines read, cleaned for the terminal.
    pub lines: VecDeque<String>,
    /// Why nothing is followed any more (the attempt ended, its host is gone), or why
    /// there is nothing to follow.
    pub end: Option<String>,
    /// How many lines above the last the view shows (0: the end, following).
    pub scroll: usize,
}

impl LogView {
    /// The log of `attempt` of a task, in the file `path` (`None`: it has none, and
    /// `end` says why).
    pub fn new(
        automation: &str,
        task_id: &str,
        attempt: Option<u32>,
        path: Option<PathBuf>,
    ) -> LogView {
        LogView {
            automation: automation.to_owned(),
            task_id: task_id.to_owned(),
            attempt,
            path,
            offset: 0,
            partial: Vec::new(),
            skip_to_line: false,
            lines: VecDeque::new(),
            end: None,
            scroll: 0,
        }
    }

    /// Whether the log is still followed.
    pub fn following(&self) -> bool {
        self.end.is_none() && self.path.is_some()
    }

    /// Stops following, saying why (once).
    pub fn finish(&mut self, why: impl Into<String>) {
        if self.end.is_none() {
            self.end = Some(why.into());
        }
    }

    /// Reads what the file holds past what was read. A missing file is an attempt
    /// that wrote nothing yet (a log is made at its first line).
    pub fn read_more(&mut self) -> io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(err),
        };
        let len = file.metadata()?.len();
        if len < self.offset {
            // Rewritten shorter at its cap: its newer half, read again.
            self.lines.clear();
            self.partial.clear();
            self.offset = 0;
        }
        if self.offset == 0 && len > FIRST_READ {
            self.offset = len - FIRST_READ;
            self.skip_to_line = true;
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::new();
        file.take(READ_AT_ONCE).read_to_end(&mut bytes)?;
        self.offset += bytes.len() as u64;
        self.push(&bytes);
        Ok(())
    }

    /// Takes bytes of the log: each whole line becomes one line of the view.
    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.skip_to_line {
            match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    bytes = &bytes[at + 1..];
                    self.skip_to_line = false;
                }
                None => return,
            }
        }
        for &byte in bytes {
            if byte == b'\n' {
                let line = std::mem::take(&mut self.partial);
                self.add(&line);
            } else {
                self.partial.push(byte);
                if self.partial.len() >= LONGEST_LINE {
                    let line = std::mem::take(&mut self.partial);
                    self.add(&line);
                }
            }
        }
    }

    fn add(&mut self, line: &[u8]) {
        self.lines
            .push_back(text::log_line(&String::from_utf8_lossy(line)));
        while self.lines.len() > MAX_LINES {
            self.lines.pop_front();
        }
    }

    /// Scrolls `by` lines towards the start (negative: towards the end).
    pub fn scroll(&mut self, by: isize) {
        let most = self.lines.len().saturating_sub(1);
        self.scroll = self.scroll.saturating_add_signed(by).min(most);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::io::Write;

    #[test]
    fn a_followed_log_gains_its_new_lines_and_starts_over_when_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.log");
        let mut view = LogView::new("fix", "ab", Some(1), Some(path.clone()));
        view.read_more().unwrap();
        assert!(view.lines.is_empty() && view.following(), "no file yet");
        let mut file = File::create(&path).unwrap();
        file.write_all(
            b"2026-12-02T06:28:05.996Z stdout first\n2026-12-02T06:28:06.000Z stderr se",
        )
        .unwrap();
        view.read_more().unwrap();
        assert_eq!(view.lines, ["06:28:05 stdout first"]);
        file.write_all(b"cond\n").unwrap();
        view.read_more().unwrap();
        assert_eq!(view.lines.len(), 2);
        assert_eq!(view.lines[1], "06:28:06 stderr second");
        std::fs::write(&path, "x\n").unwrap();
        view.read_more().unwrap();
        assert_eq!(view.lines, ["x"]);
        view.finish("attempt 1 ended");
        view.finish("said once");
        assert_eq!(view.end.as_deref(), Some("attempt 1 ended"));
        assert!(!view.following());
    }

    #[test]
    fn a_long_log_is_read_from_near_its_end_and_kept_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.log");
        let line = format!("{}\n", "y".repeat(99));
        std::fs::write(&path, line.repeat(20_000)).unwrap();
        let mut view = LogView::new("fix", "ab", None, Some(path));
        view.read_more().unwrap();
        let whole = (FIRST_READ / 100) as usize;
        assert!(
            (whole - 1..=whole).contains(&view.lines.len()),
            "{}",
            view.lines.len()
        );
        assert!(view.lines.iter().all(|l| l.len() == 99));
        view.push(line.repeat(MAX_LINES).as_bytes());
        assert_eq!(view.lines.len(), MAX_LINES);
        view.scroll(10);
        assert_eq!(view.scroll, 10);
        view.scroll(-100);
        assert_eq!(view.scroll, 0);
    }
}
