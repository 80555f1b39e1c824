//! Each attempt's output in a file of its own: the agent's stdout and stderr as whole
//! lines, each behind the time it was read and the stream it came from, in
//! `<logs folder>/<automation>/<task id prefix>/<attempt>.log`.
//!
//! A log never grows past its cap ([`AttemptLog::create`]'s `max_bytes`): once it
//! would, its oldest half goes, and the file starts with a marker line saying how many
//! bytes were dropped, so the end of what the agent said (what explains how it ended)
//! is always there. Writing never fails the attempt: a log that cannot be written is
//! said once in the host's log and then left alone.
//!
//! ```
//! use curupira_orchestrator::log::{AttemptLog, log_path};
//! use curupira_process::pipes::{Chunk, Stream};
//!
//! let dir = tempfile::tempdir()?;
//! let path = log_path(dir.path(), "fix", &"ab".repeat(32), 1);
//! assert!(path.ends_with("fix/abababababab/1.log"));
//! let mut log = AttemptLog::create(&path, 1 << 20)?;
//! log.take(Stream::Stdout, Chunk::Bytes(b"hello\nwor"));
//! log.take(Stream::Stdout, Chunk::Bytes(b"ld\n"));
//! log.take(Stream::Stderr, Chunk::Bytes(b"oops"));
//! log.take(Stream::Stderr, Chunk::End);
//! drop(log);
//! let text = std::fs::read_to_string(&path)?;
//! let lines: Vec<&str> = text.lines().map(|line| &line[25..]).collect();
//! assert_eq!(lines, ["stdout hello", "stdout world", "stderr oops"]);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use curupira_process::lines::Lines;
use curupira_process::pipes::{Chunk, Stream};

use crate::events::short_id;

/// The log cap when nothing else is said: 10 MiB per attempt.
pub const DEFAULT_MAX_BYTES: u64 = 10 << 20;

/// Where attempt `attempt` of a task logs: `<logs>/<automation>/<first 12 characters
/// of the task id>/<attempt>.log`.
pub fn log_path(logs: &Path, automation: &str, task_id: &str, attempt: u32) -> PathBuf {
    logs.join(automation)
        .join(short_id(task_id))
        .join(format!("{attempt}.log"))
}

/// One attempt's log file, written as its output comes.
#[derive(Debug)]
pub struct AttemptLog {
    path: PathBuf,
    /// The file, once the first line came.
    file: Option<File>,
    /// The file could not be written: the rest of the attempt is not logged.
    failed: bool,
    written: u64,
    max_bytes: u64,
    /// Each source's lines (the agent's is `""`, a hook's its name): stdout's, then
    /// stderr's.
    sources: Vec<(String, [Lines; 2])>,
    /// Complete lines waiting to be stamped and written.
    ready: Vec<u8>,
}

/// A log shared by an attempt's agent and its hooks.
pub type SharedLog = std::sync::Arc<std::sync::Mutex<AttemptLog>>;

/// The log, whoever held it last (a panic elsewhere leaves it usable).
pub fn lock(log: &SharedLog) -> std::sync::MutexGuard<'_, AttemptLog> {
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl AttemptLog {
    /// The log at `path`, keeping at most `max_bytes` (at least 4 KiB). The file (and
    /// its folders) is made when the first line comes, so an attempt that prints
    /// nothing costs no file: `curupira tasks log` reads a missing log as empty.
    pub fn create(path: &Path, max_bytes: u64) -> io::Result<AttemptLog> {
        Ok(AttemptLog {
            path: path.to_owned(),
            file: None,
            failed: false,
            written: 0,
            max_bytes: max_bytes.max(4096),
            sources: Vec::new(),
            ready: Vec::new(),
        })
    }

    /// The file, made on first use.
    fn file(&mut self) -> io::Result<&mut File> {
        if self.file.is_none() {
            if let Some(folder) = self.path.parent() {
                fs::create_dir_all(folder)?;
            }
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&self.path)?;
            self.file = Some(file);
        }
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the log file is not open"))
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes what the agent's pipe gave: the lines it completes are written, each
    /// behind the time and the stream (`stdout` or `stderr`).
    pub fn take(&mut self, stream: Stream, chunk: Chunk<'_>) {
        self.take_from("", stream, chunk);
    }

    /// Takes what the pipe of `source` gave (a hook: `before_run`; the agent: `""`):
    /// its lines are written behind the time, the source and the stream
    /// (`… before_run stdout …`), each source's cut into lines apart.
    pub fn take_from(&mut self, source: &str, stream: Stream, chunk: Chunk<'_>) {
        let at = match self.sources.iter().position(|(name, _)| name == source) {
            Some(at) => at,
            None => {
                self.sources
                    .push((source.to_owned(), [Lines::new(""), Lines::new("")]));
                self.sources.len() - 1
            }
        };
        let (index, stream_name) = match stream {
            Stream::Stdout => (0, "stdout"),
            Stream::Stderr => (1, "stderr"),
        };
        let name = if source.is_empty() {
            stream_name.to_owned()
        } else {
            format!("{source} {stream_name}")
        };
        let lines = &mut self.sources[at].1[index];
        match chunk {
            Chunk::Bytes(bytes) => lines.push(bytes, &mut self.ready),
            Chunk::End => lines.finish(&mut self.ready),
        }
        if self.ready.is_empty() || self.failed {
            self.ready.clear();
            return;
        }
        let stamp = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
        let mut text = Vec::with_capacity(self.ready.len() + 32);
        for line in self.ready.split_inclusive(|byte| *byte == b'\n') {
            text.extend_from_slice(stamp.as_bytes());
            text.push(b' ');
            text.extend_from_slice(name.as_bytes());
            text.push(b' ');
            text.extend_from_slice(line);
        }
        self.ready.clear();
        if let Err(err) = self.write(&text) {
            tracing::warn!(
                "cannot write the attempt log `{}` ({err}); the rest of this attempt's \
                 output goes to the host's stderr only",
                self.path.display()
            );
            self.file = None;
            self.failed = true;
        }
    }

    fn write(&mut self, text: &[u8]) -> io::Result<()> {
        if self.written + text.len() as u64 > self.max_bytes {
            self.keep_tail(text.len() as u64)?;
        }
        // A text longer than the cap itself keeps its end only.
        let keep = usize::try_from(self.max_bytes).unwrap_or(usize::MAX);
        let text = &text[text.len().saturating_sub(keep)..];
        self.file()?.write_all(text)?;
        self.written += text.len() as u64;
        Ok(())
    }

    /// Makes room for `coming` bytes: the file keeps the newest whole lines of about
    /// half its cap behind a marker line saying how many bytes went.
    fn keep_tail(&mut self, coming: u64) -> io::Result<()> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        let budget = (self.max_bytes / 2).saturating_sub(coming.min(self.max_bytes / 2));
        let mut old = Vec::new();
        file.seek(SeekFrom::Start(0))?;
        file.read_to_end(&mut old)?;
        let mut from = old
            .len()
            .saturating_sub(usize::try_from(budget).unwrap_or(0));
        // From the start of a line.
        if from > 0 {
            from = old[from..]
                .iter()
                .position(|byte| *byte == b'\n')
                .map_or(old.len(), |at| from + at + 1);
        }
        let dropped = from;
        let marker = format!(
            "{} curupira [{dropped} bytes of this log were dropped: it keeps the last of at most {} bytes]\n",
            humantime::format_rfc3339_millis(SystemTime::now()),
            self.max_bytes
        );
        let tail = &old[from..];
        let temporary = self.path.with_extension("log.tmp");
        {
            let mut fresh = File::create(&temporary)?;
            fresh.write_all(marker.as_bytes())?;
            fresh.write_all(tail)?;
        }
        fs::rename(&temporary, &self.path)?;
        let mut reopened = OpenOptions::new().read(true).write(true).open(&self.path)?;
        reopened.seek(SeekFrom::End(0))?;
        self.written = (marker.len() + tail.len()) as u64;
        self.file = Some(reopened);
        Ok(())
    }
}

impl Drop for AttemptLog {
    fn drop(&mut self) {
        let sources: Vec<String> = self.sources.iter().map(|(name, _)| name.clone()).collect();
        for source in sources {
            self.take_from(&source, Stream::Stdout, Chunk::End);
            self.take_from(&source, Stream::Stderr, Chunk::End);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_at_its_cap_keeps_the_tail_behind_a_marker() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.log");
        let mut log = AttemptLog::create(&path, 4096).unwrap();
        for n in 0..1000 {
            log.take(
                Stream::Stdout,
                Chunk::Bytes(format!("line {n}\n").as_bytes()),
            );
        }
        drop(log);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.len() <= 4096, "{} bytes", text.len());
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].contains("curupira [") && lines[0].contains("bytes of this log were dropped"),
            "{}",
            lines[0]
        );
        // Whole lines, in order, ending with the last one.
        assert!(lines.last().unwrap().ends_with("stdout line 999"), "{text}");
        let numbers: Vec<u32> = lines[1..]
            .iter()
            .map(|line| line.rsplit(' ').next().unwrap().parse().unwrap())
            .collect();
        assert!(
            numbers.windows(2).all(|pair| pair[1] == pair[0] + 1),
            "{numbers:?}"
        );
        assert!(
            numbers.len() > 50,
            "about half the cap is kept: {}",
            numbers.len()
        );
        let dropped: usize = lines[0]
            .split('[')
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(dropped > 0);
    }

    #[test]
    fn hooks_and_the_agent_share_the_log_each_cut_into_lines_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.log");
        let log: SharedLog = std::sync::Arc::new(std::sync::Mutex::new(
            AttemptLog::create(&path, 1 << 20).unwrap(),
        ));
        lock(&log).take_from("before_run", Stream::Stdout, Chunk::Bytes(b"prep"));
        // The agent's line does not join the hook's unfinished one.
        lock(&log).take(Stream::Stdout, Chunk::Bytes(b"work\n"));
        lock(&log).take_from("before_run", Stream::Stdout, Chunk::Bytes(b"ared\n"));
        lock(&log).take_from("after_run", Stream::Stderr, Chunk::Bytes(b"done"));
        drop(log);
        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().map(|line| &line[25..]).collect();
        assert_eq!(
            lines,
            [
                "stdout work",
                "before_run stdout prepared",
                "after_run stderr done"
            ],
            "{text}"
        );
    }

    #[test]
    fn a_line_without_its_end_is_written_when_the_stream_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(dir.path(), "fix", &"0f".repeat(32), 2);
        let mut log = AttemptLog::create(&path, DEFAULT_MAX_BYTES).unwrap();
        log.take(Stream::Stderr, Chunk::Bytes(b"no end"));
        assert!(!path.exists(), "no file before the first whole line");
        log.take(Stream::Stderr, Chunk::End);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.ends_with(" stderr no end\n"), "{text:?}");
        assert!(path.ends_with("fix/0f0f0f0f0f0f/2.log"));
    }
}
