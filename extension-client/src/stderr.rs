//! An extension's stderr, drained line by line with bounded memory.

use std::io::{self, Read};

/// The `tracing` target extension stderr lines are logged to by default.
pub const STDERR_TARGET: &str = "curupira::extension";

/// Where each line an extension writes on stderr goes (without its line ending,
/// invalid UTF-8 replaced). An over-long line arrives as its first
/// [`Limits::stderr_line_bytes`](crate::Limits::stderr_line_bytes) bytes followed by
/// `…`, then a line saying how many bytes were left out.
pub type StderrSink = Box<dyn FnMut(&str) + Send>;

/// Logs one line an extension wrote on stderr, as `[NAME] line` at `info` with the
/// target [`STDERR_TARGET`]: what a client does with stderr unless given a
/// [`StderrSink`].
pub fn log_stderr_line(extension: &str, line: &str) {
    tracing::info!(target: STDERR_TARGET, "[{extension}] {line}");
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
    fn lines_are_split_trimmed_and_cut() {
        assert_eq!(lines(b"one\r\ntwo\n\nthree", 100), ["one", "two", "three"]);
        assert_eq!(
            lines(b"abcdefgh\nok\n", 4),
            ["abcd…", "… (4 more bytes of that line not shown)", "ok"]
        );
        assert_eq!(lines(b"\xff\n", 100), ["\u{fffd}"]);
    }
}
