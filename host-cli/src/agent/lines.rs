//! The agent's output as the host forwards it: whole lines, each behind the name of the
//! task that wrote it, so that the output of concurrent agents stays readable.

/// The longest line held back waiting for its end: a longer one is forwarded in
/// pieces of this many bytes, each on a line of its own.
pub(crate) const MAX_LINE: usize = 64 * 1024;

/// `[<automation> <first 12 characters of the task id>] `, what every forwarded line
/// of a task's agent starts with.
pub(crate) fn prefix(automation: &str, task_id: &str) -> String {
    let short = task_id.get(..12).unwrap_or(task_id);
    format!("[{automation} {short}] ")
}

/// Cuts one stream into lines and puts the prefix before each.
///
/// Bytes are forwarded unchanged (invalid UTF-8 included) but for the prefix, and for
/// a line end added after a piece of an over-long line and after a last line that had
/// none. At most [`MAX_LINE`] bytes of a line are held.
#[derive(Debug)]
pub(crate) struct Lines {
    prefix: Vec<u8>,
    /// The start of a line whose end has not arrived.
    partial: Vec<u8>,
    max_line: usize,
}

impl Lines {
    /// Lines behind `prefix`, held back up to [`MAX_LINE`] bytes.
    pub(crate) fn new(prefix: &str) -> Self {
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
    pub(crate) fn push(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
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
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
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
