//! Byte offsets to line and column, for any text source (TOML now, JSON later).

use crate::Position;

/// The start of every line of a text, to turn byte offsets into [`Position`]s.
///
/// ```
/// use curupira_diagnostics::{LineIndex, Position};
///
/// let text = "a = 1\nname = \"é!\"\n";
/// let index = LineIndex::new(text);
/// // The `!` is byte 16 but character 10 of line 2.
/// assert_eq!(index.position(16), Position { line: 2, column: 10 });
/// assert_eq!(index.line_text(2), Some("name = \"é!\""));
/// ```
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the first byte of each line; `starts[0] == 0`.
    starts: Vec<usize>,
    /// `chars_before[k]`: characters in the first `k * STRIDE` bytes, so a column costs
    /// at most `STRIDE` bytes of counting even on a megabyte-long line.
    chars_before: Vec<usize>,
}

/// Bytes between two character-count checkpoints.
const STRIDE: usize = 256;

/// Characters starting in `bytes` (every byte that is not a UTF-8 continuation byte),
/// which works on any byte range, even one cutting a character.
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

impl<'a> LineIndex<'a> {
    /// Indexes `text` (one pass over its bytes).
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, byte)| byte == b'\n')
                .map(|(offset, _)| offset + 1),
        );
        let mut chars_before = Vec::with_capacity(text.len() / STRIDE + 1);
        let mut total = 0;
        chars_before.push(0);
        for chunk in text.as_bytes().chunks(STRIDE) {
            total += count_chars(chunk);
            chars_before.push(total);
        }
        Self {
            text,
            starts,
            chars_before,
        }
    }

    /// Characters in `text[..offset]`, `offset` being a character boundary.
    fn chars_up_to(&self, offset: usize) -> usize {
        let checkpoint = offset / STRIDE;
        let before = self.chars_before.get(checkpoint).copied().unwrap_or(0);
        before + count_chars(&self.text.as_bytes()[checkpoint * STRIDE..offset])
    }

    /// The text this index was built from.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The line and column of a byte offset.
    ///
    /// An offset past the end is clamped to the end; an offset inside a multi-byte
    /// character is moved back to that character's first byte. Never panics.
    pub fn position(&self, offset: usize) -> Position {
        let offset = self.clamp(offset);
        // `starts[0] == 0 <= offset`, so the partition point is at least 1.
        let line_index = self.starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.starts[line_index];
        let column = self.chars_up_to(offset) - self.chars_up_to(line_start) + 1;
        Position {
            line: saturate(line_index + 1),
            column: saturate(column),
        }
    }

    /// The text of a 1-based line, without its `\n` or `\r\n` terminator.
    pub fn line_text(&self, line: u32) -> Option<&'a str> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        let start = *self.starts.get(index)?;
        let end = self
            .starts
            .get(index + 1)
            .map_or(self.text.len(), |next| next - 1);
        let text = &self.text[start..end];
        Some(text.strip_suffix('\r').unwrap_or(text))
    }

    /// Byte offset of the start of a 1-based line.
    pub fn line_start(&self, line: u32) -> Option<usize> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        self.starts.get(index).copied()
    }

    /// Number of lines (a text ending in `\n` has an empty last line).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    fn clamp(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }
}

impl Position {
    /// The line and column of a byte offset in `text`, with one pass over the text up
    /// to it; clamped like [`LineIndex::position`]. For many offsets in one text, build
    /// a [`LineIndex`] once instead.
    ///
    /// ```
    /// use curupira_diagnostics::Position;
    ///
    /// assert_eq!(Position::of("a\nb\u{e9}c", 5), Position { line: 2, column: 3 });
    /// ```
    pub fn of(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        Position {
            line: saturate(before.bytes().filter(|&b| b == b'\n').count() + 1),
            column: saturate(before[line_start..].chars().count() + 1),
        }
    }
}

fn saturate(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, column: u32) -> Position {
        Position { line, column }
    }

    #[test]
    fn offsets_map_to_lines_and_character_columns() {
        let text = "ab\r\nçd\n\n😀x";
        let index = LineIndex::new(text);
        assert_eq!(index.position(0), pos(1, 1));
        assert_eq!(index.position(1), pos(1, 2));
        assert_eq!(index.position(2), pos(1, 3)); // the `\r`
        assert_eq!(index.position(4), pos(2, 1)); // `ç`
        assert_eq!(index.position(6), pos(2, 2)); // `d` after the two-byte `ç`
        assert_eq!(index.position(8), pos(3, 1)); // the empty line
        assert_eq!(index.position(9), pos(4, 1)); // the emoji
        assert_eq!(index.position(13), pos(4, 2)); // `x` after four bytes
        assert_eq!(index.line_count(), 4);
    }

    #[test]
    fn offsets_inside_a_character_or_past_the_end_are_clamped() {
        let index = LineIndex::new("😀x");
        assert_eq!(index.position(2), pos(1, 1));
        assert_eq!(index.position(5), pos(1, 3));
        assert_eq!(index.position(500), pos(1, 3));
        assert_eq!(LineIndex::new("").position(3), pos(1, 1));
    }

    #[test]
    fn line_text_strips_terminators() {
        let index = LineIndex::new("one\r\ntwo\nthree");
        assert_eq!(index.line_text(1), Some("one"));
        assert_eq!(index.line_text(2), Some("two"));
        assert_eq!(index.line_text(3), Some("three"));
        assert_eq!(index.line_text(0), None);
        assert_eq!(index.line_text(4), None);
        assert_eq!(index.line_start(3), Some(9));
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        #[test]
        fn every_offset_agrees_with_a_naive_count(
            text in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just('a'),
                    proptest::strategy::Just('\n'),
                    proptest::strategy::Just('\u{e9}'),
                    proptest::strategy::Just('\u{65e5}'),
                    proptest::strategy::Just('\u{1f600}'),
                    proptest::prelude::any::<char>(),
                ],
                0..300,
            )
            .prop_map(String::from_iter),
            offset in 0usize..1300,
        ) {
            let index = LineIndex::new(&text);
            let position = index.position(offset);
            let mut clamped = offset.min(text.len());
            while !text.is_char_boundary(clamped) { clamped -= 1; }
            let before = &text[..clamped];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            proptest::prop_assert_eq!(position, pos(line as u32, column as u32));
            proptest::prop_assert_eq!(Position::of(&text, offset), position);
        }
    }
}
