//! The end of an agent's output, kept to say why it failed as the reference host says
//! it (`Dispatch error: agent exited 3: <this>`), recorded in
//! `recordings/reference-host/README.md`: its stderr, trimmed, when it wrote any (all
//! of it, lines included); otherwise its stdout's last non-blank line, trimmed; either
//! cut to its last [`QUOTED_CHARS`] characters behind `…`. Memory is bounded whatever
//! the agent writes: the last [`KEPT_BYTES`] of stderr and of stdout's last lines.

use curupira_process::pipes::Stream;

/// The most characters quoted (the reference's cut).
pub const QUOTED_CHARS: usize = 600;

/// The bytes kept of each stream: enough for [`QUOTED_CHARS`] characters of up to
/// four bytes, with room for trailing blanks.
const KEPT_BYTES: usize = 8 * 1024;

/// What was kept of the agent's output.
#[derive(Debug, Default)]
pub struct Tail {
    /// The end of stderr, as written.
    stderr: Vec<u8>,
    /// The end of stdout, as written.
    stdout: Vec<u8>,
}

impl Tail {
    /// Takes bytes the agent wrote on `stream`.
    pub fn take(&mut self, stream: Stream, bytes: &[u8]) {
        let kept = match stream {
            Stream::Stdout => &mut self.stdout,
            Stream::Stderr => &mut self.stderr,
        };
        if bytes.len() >= KEPT_BYTES {
            kept.clear();
            kept.extend_from_slice(&bytes[bytes.len() - KEPT_BYTES..]);
        } else {
            kept.extend_from_slice(bytes);
            if kept.len() > 2 * KEPT_BYTES {
                kept.drain(..kept.len() - KEPT_BYTES);
            }
        }
    }

    /// What the reference host quotes of the output; `None` when the agent wrote
    /// nothing but blanks.
    pub fn quoted(&self) -> Option<String> {
        let stderr = String::from_utf8_lossy(&self.stderr);
        let stderr = stderr.trim();
        let text = if stderr.is_empty() {
            let stdout = String::from_utf8_lossy(&self.stdout);
            stdout
                .lines()
                .rev()
                .map(str::trim)
                .find(|line| !line.is_empty())?
                .to_owned()
        } else {
            stderr.to_owned()
        };
        let count = text.chars().count();
        Some(if count > QUOTED_CHARS {
            let cut: String = text.chars().skip(count - QUOTED_CHARS).collect();
            format!("…{cut}")
        } else {
            text
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn tail(stdout: &str, stderr: &str) -> Option<String> {
        let mut tail = Tail::default();
        // In small pieces, as pipes give them.
        for piece in stdout.as_bytes().chunks(7) {
            tail.take(Stream::Stdout, piece);
        }
        for piece in stderr.as_bytes().chunks(5) {
            tail.take(Stream::Stderr, piece);
        }
        tail.quoted()
    }

    #[test]
    fn stderr_is_quoted_whole_and_trimmed_before_stdout() {
        // The recorded cases A, B and G.
        assert_eq!(
            tail("line1\nline2\n", "err1\nerr2\n").unwrap(),
            "err1\nerr2"
        );
        assert_eq!(tail("", "err1\nerr2\n").unwrap(), "err1\nerr2");
        assert_eq!(tail("out\n", "  spaced  \n\n").unwrap(), "spaced");
    }

    #[test]
    fn without_stderr_the_last_non_blank_stdout_line_is_quoted() {
        // The recorded cases D, H and I, and a provider's stream.
        assert_eq!(tail("a\n\n\n", "").unwrap(), "a");
        assert_eq!(tail("l1\nl2\n", "").unwrap(), "l2");
        assert_eq!(tail("l1\nl2\n\n  \n", " \n").unwrap(), "l2");
        assert_eq!(
            tail("{\"type\": \"system\"}\n{\"type\": \"result\"}\n", "").unwrap(),
            "{\"type\": \"result\"}"
        );
        // The recorded case C: nothing.
        assert_eq!(tail("", ""), None);
        assert_eq!(tail(" \n\t\n", "\n"), None);
    }

    #[test]
    fn a_long_quote_is_its_last_600_characters_behind_an_ellipsis() {
        // The recorded cases E (3000 on stdout) and F (3000 then `zz` on stderr).
        let quoted = tail(&"x".repeat(3000), "").unwrap();
        assert_eq!(quoted, format!("…{}", "x".repeat(600)));
        let quoted = tail("", &format!("{}zz\n", "y".repeat(3000))).unwrap();
        assert_eq!(quoted, format!("…{}zz", "y".repeat(598)));
        // Characters, not bytes.
        let quoted = tail(&"é".repeat(700), "").unwrap();
        assert_eq!(quoted.chars().count(), 601);
        // Memory stays bounded however much is written.
        let mut bounded = Tail::default();
        for _ in 0..10_000 {
            bounded.take(Stream::Stderr, &[b'z'; 1000]);
            bounded.take(Stream::Stdout, b"line\n");
        }
        assert!(bounded.stderr.len() <= 2 * KEPT_BYTES && bounded.stdout.len() <= 2 * KEPT_BYTES);
        assert_eq!(bounded.quoted().unwrap(), format!("…{}", "z".repeat(600)));
    }
}
