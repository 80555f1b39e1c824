//! The output of a task's processes (its agent, its workspace hooks) as the host
//! forwards it: whole lines, each behind the name of the task that wrote it (and of the
//! hook), so that the output of concurrent tasks stays readable.
//!
//! ```
//! use curupira_process::lines::{Lines, prefix};
//!
//! let mut lines = Lines::new(&prefix("triage", &"ab".repeat(32)));
//! let mut out = Vec::new();
//! lines.push(b"one\ntw", &mut out);
//! lines.finish(&mut out);
//! assert_eq!(out, b"[triage abababababab] one\n[triage abababababab] tw\n");
//! ```

use crate::pipes::{Chunk, Stream};

/// The first 12 characters of a task id, as lines and events name a task.
fn short_id(task_id: &str) -> &str {
    task_id.get(..12).unwrap_or(task_id)
}

/// The longest line held back waiting for its end: a longer one is forwarded in
/// pieces of this many bytes, each on a line of its own.
pub const MAX_LINE: usize = 64 * 1024;

/// `[<automation> <first 12 characters of the task id>] `, what every forwarded line
/// of a task's agent starts with.
pub fn prefix(automation: &str, task_id: &str) -> String {
    format!("[{automation} {}] ", short_id(task_id))
}

/// `[<automation> <first 12 characters of the task id> <hook>] `, what every forwarded
/// line of a task's workspace hook starts with.
pub fn hook_prefix(automation: &str, task_id: &str, hook: &str) -> String {
    format!("[{automation} {} {hook}] ", short_id(task_id))
}

/// A process's stdout and stderr on their way to the host's stderr
/// ([`crate::stderr::write`]): each cut into lines behind one prefix.
#[derive(Debug)]
pub struct Forward {
    /// stdout's lines, then stderr's.
    lines: [Lines; 2],
    /// Lines ready to be written, in one `write`.
    ready: Vec<u8>,
}

impl Forward {
    /// Both streams behind `prefix`.
    pub fn new(prefix: &str) -> Self {
        Forward {
            lines: [Lines::new(prefix), Lines::new(prefix)],
            ready: Vec::new(),
        }
    }

    /// Takes what a pipe gave and forwards the lines it completes (the last line of a
    /// stream that ended, with a line end added when it had none).
    pub fn take(&mut self, stream: Stream, chunk: Chunk<'_>) {
        let lines = &mut self.lines[match stream {
            Stream::Stdout => 0,
            Stream::Stderr => 1,
        }];
        match chunk {
            Chunk::Bytes(bytes) => lines.push(bytes, &mut self.ready),
            Chunk::End => lines.finish(&mut self.ready),
        }
        if self.ready.is_empty() {
            return;
        }
        // A closed or unread host stderr loses the lines (counted), never holds up the
        // thread that forwards them.
        crate::stderr::write(&self.ready);
        self.ready.clear();
        self.ready.shrink_to(MAX_LINE);
    }
}

/// Cuts one stream into lines and puts the prefix before each.
///
/// Bytes are forwarded unchanged (invalid UTF-8 included) but for the prefix, and for
/// a line end added after a piece of an over-long line and after a last line that had
/// none. At most [`MAX_LINE`] bytes of a line are held.
#[derive(Debug)]
pub struct Lines {
    prefix: Vec<u8>,
    /// The start of a line whose end has not arrived.
    partial: Vec<u8>,
    max_line: usize,
}

impl Lines {
    /// Lines behind `prefix`, held back up to [`MAX_LINE`] bytes.
    pub fn new(prefix: &str) -> Self {
        Self::with_max_line(prefix, MAX_LINE)
    }

    fn with_max_line(prefix: &str, max_line: usize) -> Self {
        Lines {
            prefix: prefix.as_bytes().to_vec(),
            partial: Vec::new(),
            max_line: max_line.max(1),
        }
    }

    /// Takes the next bytes of the stream and appends the lines they complete to `out`,
    /// each with its prefix and its `\n`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
        while !bytes.is_empty() {
            let room = self.max_line - self.partial.len();
            let end = bytes.iter().position(|&byte| byte == b'\n');
            match end {
                Some(at) if at <= room => {
                    out.extend_from_slice(&self.prefix);
                    out.extend_from_slice(&self.partial);
                    out.extend_from_slice(&bytes[..=at]);
                    self.partial.clear();
                    bytes = &bytes[at + 1..];
                }
                _ if bytes.len() < room => {
                    self.partial.extend_from_slice(bytes);
                    return;
                }
                _ => {
                    // The line reaches the limit before its end: forward what is held.
                    out.extend_from_slice(&self.prefix);
                    out.extend_from_slice(&self.partial);
                    out.extend_from_slice(&bytes[..room]);
                    out.push(b'\n');
                    self.partial.clear();
                    bytes = &bytes[room..];
                }
            }
        }
    }

    /// The stream ended: appends a last line that had no end, with one.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.partial.is_empty() {
            return;
        }
        out.extend_from_slice(&self.prefix);
        out.extend_from_slice(&self.partial);
        out.push(b'\n');
        self.partial.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(lines: &mut Lines, pieces: &[&[u8]]) -> String {
        let mut out = Vec::new();
        for piece in pieces {
            lines.push(piece, &mut out);
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_prefix_names_the_automation_and_the_short_task_id() {
        assert_eq!(
            prefix("nightly", "0123456789abcdef0123"),
            "[nightly 0123456789ab] "
        );
        assert_eq!(prefix("a", "01"), "[a 01] ");
        assert_eq!(
            hook_prefix("nightly", "0123456789abcdef0123", "before_run"),
            "[nightly 0123456789ab before_run] "
        );
    }

    #[test]
    fn whole_lines_are_forwarded_in_any_split() {
        let text = b"first line\nsecond\n\nthird, unfinished";
        for split in 0..=text.len() {
            let mut lines = Lines::new("[a 1] ");
            let mut out = feed(&mut lines, &[&text[..split], &text[split..]]);
            assert_eq!(
                out, "[a 1] first line\n[a 1] second\n[a 1] \n",
                "split {split}"
            );
            let mut rest = Vec::new();
            lines.finish(&mut rest);
            out.push_str(std::str::from_utf8(&rest).unwrap());
            assert!(out.ends_with("[a 1] third, unfinished\n"), "{out}");
        }
    }

    #[test]
    fn a_line_is_held_only_until_its_end() {
        let mut lines = Lines::new("> ");
        assert_eq!(feed(&mut lines, &[b"abc"]), "");
        assert_eq!(feed(&mut lines, &[b"def\ng"]), "> abcdef\n");
        let mut out = Vec::new();
        lines.finish(&mut out);
        assert_eq!(out, b"> g\n");
        out.clear();
        lines.finish(&mut out);
        assert!(out.is_empty(), "nothing is repeated");
    }

    #[test]
    fn an_over_long_line_is_cut_into_pieces_of_the_limit() {
        let mut lines = Lines::with_max_line("> ", 4);
        assert_eq!(
            feed(&mut lines, &[b"abcdefghij\nxy"]),
            "> abcd\n> efgh\n> ij\n"
        );
        assert_eq!(lines.partial, b"xy");
        // A line of exactly the limit plus its end is one line.
        let mut lines = Lines::with_max_line("> ", 4);
        assert_eq!(feed(&mut lines, &[b"abcd\n"]), "> abcd\n");
        assert_eq!(feed(&mut lines, &[b"ab", b"cd", b"e\n"]), "> abcd\n> e\n");
    }

    #[test]
    fn bytes_that_are_not_utf8_pass_unchanged() {
        let mut lines = Lines::new("> ");
        let mut out = Vec::new();
        lines.push(b"\xff\xfe\n", &mut out);
        assert_eq!(out, b"> \xff\xfe\n");
    }
}
