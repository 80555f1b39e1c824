//! An extension's stderr, drained line by line with bounded memory.

use std::io::{self, Read};

/// The `tracing` target extension stderr lines are logged to by default.
pub const STDERR_TARGET: &str = "curupira::extension";

/// Where each line an extension writes on stderr goes (without its line ending,
/// invalid UTF-8 replaced). An over-long line arrives as its first
/// [`Limits::stderr_line_bytes`](crate::Limits::stderr_line_bytes) bytes followed by
/// `…`, then a line saying how many bytes were left out.
pub type StderrSink = Box<dyn FnMut(&str) + Send>;

/// Logs one line an extension wrote on stderr, as `[NAME] line` with the target
/// [`STDERR_TARGET`], at the level [`stderr_line_level`] reads off the line (`info`
/// for free text): what a client does with stderr unless given a [`StderrSink`].
pub fn log_stderr_line(extension: &str, line: &str) {
    match stderr_line_level(line) {
        StderrLevel::Error => tracing::error!(target: STDERR_TARGET, "[{extension}] {line}"),
        StderrLevel::Warn => tracing::warn!(target: STDERR_TARGET, "[{extension}] {line}"),
        StderrLevel::Info => tracing::info!(target: STDERR_TARGET, "[{extension}] {line}"),
    }
}

/// The level a host logs an extension's stderr line at ([`stderr_line_level`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StderrLevel {
    /// The line says it is an error.
    Error,
    /// The line says it is a warning.
    Warn,
    /// Anything else: free text.
    Info,
}

/// The level an extension's stderr line asks for, by our convention (documented in
/// [`docs/PROTOCOL.md`](https://example.invalid/curupira/blob/main/docs/PROTOCOL.md),
/// section 1; the seeds leave stderr free text): a line whose first word, or whose
/// second word after a first one ending in `:` (a program's name,
/// `local-queue: warning: …`), is `warning:`, `warn:` or `error:` in any case
/// (Python's `logging` writes `WARNING:root:…`) is a warning or an error; any other
/// line is `info`.
///
/// ```
/// use curupira_client::{StderrLevel, stderr_line_level};
///
/// assert_eq!(stderr_line_level("local-queue: warning: line 2 is skipped"), StderrLevel::Warn);
/// assert_eq!(stderr_line_level("WARNING:root:rate limited"), StderrLevel::Warn);
/// assert_eq!(stderr_line_level("error: cannot reach the API"), StderrLevel::Error);
/// assert_eq!(stderr_line_level("polled 3 issues, no warnings"), StderrLevel::Info);
/// ```
pub fn stderr_line_level(line: &str) -> StderrLevel {
    let line = line.trim_start();
    let level = |text: &str| {
        let (word, _) = text.split_once(':')?;
        if word.eq_ignore_ascii_case("warning") || word.eq_ignore_ascii_case("warn") {
            Some(StderrLevel::Warn)
        } else if word.eq_ignore_ascii_case("error") {
            Some(StderrLevel::Error)
        } else {
            None
        }
    };
    if let Some(found) = level(line) {
        return found;
    }
    // `NAME: warning: …`: a first word without spaces, then `: `.
    match line.split_once(": ") {
        Some((name, rest)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
            level(rest.trim_start()).unwrap_or(StderrLevel::Info)
        }
        _ => StderrLevel::Info,
    }
}

/// Reads `stderr` to its end in 8 KiB reads, handing each line to `sink` and holding
/// at most `cap` bytes of a line.
pub(crate) fn drain(mut stderr: impl Read, cap: usize, sink: &mut dyn FnMut(&str)) {
    let mut chunk = vec![0_u8; 8192];
    let mut line = LineBuffer::new(cap);
    loop {
        let n = match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        for piece in chunk[..n].split_inclusive(|&byte| byte == b'\n') {
            let (content, ends) = match piece.strip_suffix(b"\n") {
                Some(content) => (content, true),
                None => (piece, false),
            };
            line.push(content, sink);
            if ends {
                line.end(sink);
            }
        }
    }
    line.end(sink);
}

/// One stderr line being assembled.
struct LineBuffer {
    cap: usize,
    bytes: Vec<u8>,
    /// The head of an over-long line was already passed on.
    passed_head: bool,
    /// Bytes of the current line past the cap.
    dropped: u64,
}

impl LineBuffer {
    fn new(cap: usize) -> Self {
        LineBuffer {
            cap,
            bytes: Vec::new(),
            passed_head: false,
            dropped: 0,
        }
    }

    fn push(&mut self, content: &[u8], sink: &mut dyn FnMut(&str)) {
        let room = self.cap.saturating_sub(self.bytes.len());
        let take = room.min(content.len());
        self.bytes.extend_from_slice(&content[..take]);
        self.dropped += (content.len() - take) as u64;
        if self.dropped > 0 && !self.passed_head {
            sink(&format!("{}…", lossy_line(&self.bytes)));
            self.passed_head = true;
        }
    }

    fn end(&mut self, sink: &mut dyn FnMut(&str)) {
        if self.passed_head {
            sink(&format!(
                "… ({} more bytes of that line not shown)",
                self.dropped
            ));
        } else if !self.bytes.is_empty() {
            sink(&lossy_line(&self.bytes));
        }
        self.bytes.clear();
        self.passed_head = false;
        self.dropped = 0;
    }
}

fn lossy_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<String> {
        let mut out = Vec::new();
        drain(input, cap, &mut |line: &str| out.push(line.to_owned()));
        out
    }

    #[test]
    fn long_stderr_lines_are_cut_not_buffered() {
        let mut seen = Vec::new();
        let mut sink = |line: &str| seen.push(line.len());
        let mut line = LineBuffer::new(4096);
        let chunk = vec![b'x'; 8192];
        for _ in 0..2560 {
            line.push(&chunk, &mut sink);
        }
        assert_eq!(line.bytes.len(), 4096);
        assert_eq!(line.dropped, 2560 * 8192 - 4096);
        assert!(line.passed_head);
        line.end(&mut sink);
        assert!(line.bytes.is_empty() && line.dropped == 0 && !line.passed_head);
        assert_eq!(seen.len(), 2, "the head and the count");
    }

    #[test]
    fn a_line_names_its_level_by_its_first_word_or_the_one_after_a_name() {
        for (line, level) in [
            ("warning: slow", StderrLevel::Warn),
            ("Warn: slow", StderrLevel::Warn),
            (
                "local-queue: warning: `q.jsonl` line 2: bad",
                StderrLevel::Warn,
            ),
            ("WARNING:root:slow", StderrLevel::Warn),
            ("ERROR:curupira_sdk:boom", StderrLevel::Error),
            ("my-ext: error: boom", StderrLevel::Error),
            ("  error: indented", StderrLevel::Error),
            ("warnings: 0", StderrLevel::Info),
            ("no error: all fine", StderrLevel::Info),
            ("two words: warning: not a name", StderrLevel::Info),
            ("local-queue: handed out 3 items", StderrLevel::Info),
            ("", StderrLevel::Info),
            (": warning: no name", StderrLevel::Info),
        ] {
            assert_eq!(stderr_line_level(line), level, "{line:?}");
        }
    }

    #[test]
    fn lines_are_split_trimmed_and_cut() {
        assert_eq!(lines(b"one\r\ntwo\n\nthree", 100), ["one", "two", "three"]);
        assert_eq!(
            lines(b"abcdefgh\nok\n", 4),
            ["abcd…", "… (4 more bytes of that line not shown)", "ok"]
        );
        assert_eq!(lines(b"\xff\n", 100), ["\u{fffd}"]);
    }
}
