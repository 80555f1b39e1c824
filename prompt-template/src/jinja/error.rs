//! What can go wrong with a Jinja prompt, worded as the reference host words it.

use std::fmt;

/// Why a prompt did not compile or render.
///
/// Its `Display` is the reference host's sentence without the caller's prefix: the
/// host prints `Configuration error: automation "e1": {error}` for an error of
/// [`JinjaPrompt::compile`](super::JinjaPrompt::compile) (exit 2) and
/// `Dispatch error: automation "e1": {error}` for one of
/// [`render`](super::JinjaPrompt::render) (exit 1).
///
/// ```text
/// prompt template error: unexpected end of input, expected end of block. Jinja blocks look like {% if x %}...{% endif %} and {% for a in b %}...{% endfor %} (line 1: "{% if n %}x")
/// prompt uses unknown field(s) "now" (did you mean "n"?). Available fields: automation, n, repository, title
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct JinjaError {
    kind: JinjaErrorKind,
    message: String,
    location: Option<Location>,
}

/// The kind of a [`JinjaError`], stable across wording changes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JinjaErrorKind {
    /// The prompt is not valid Jinja. Found by `compile`, or by `render` when a
    /// substituted `${name}` breaks the syntax (`{{ "${extra}" }}` for an item key
    /// `extra` that `compile` did not know).
    Syntax,
    /// `compile`: the prompt names fields nobody declared. Each one comes with its
    /// closest declared name, if any is close enough.
    UnknownFields {
        /// In byte order of their names, each once.
        fields: Vec<UnknownField>,
    },
    /// `render`: the prompt used a field this item has no value for (`{{ n }}` for an
    /// item without `n`), an attribute a value lacks, or something else undefined.
    Undefined,
    /// `render`: a filter MiniJinja does not have (`compile` lets it through, as the
    /// reference does).
    UnknownFilter,
    /// Anything else MiniJinja refused: a bad string escape, a call with too many
    /// arguments, `1 / 0`, an operator on the wrong types, a missing template.
    Other,
}

/// A field the prompt uses that was not declared.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownField {
    /// The name, as written (`" title "` for `${ title }`).
    pub name: String,
    /// The declared name it is closest to: at most two edits away (Levenshtein, on
    /// characters, case-sensitive), the first in byte order among the closest.
    pub suggestion: Option<String>,
    /// Where it is first used, when the prompt could be searched for it.
    pub location: Option<Location>,
}

/// A position in the prompt as its author wrote it (before the `${name}` pre-pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Location {
    /// 1-based line, counting `\n`.
    pub line: usize,
    /// 1-based column, in characters. Where MiniJinja gives no span for the error, the
    /// column of the line's first non-blank character.
    pub column: usize,
    /// Byte offset into the prompt.
    pub offset: usize,
}

/// What the reference appends to a syntax error.
const SYNTAX_HINT: &str =
    ". Jinja blocks look like {% if x %}...{% endif %} and {% for a in b %}...{% endfor %}";

/// What the reference says instead of MiniJinja's "undefined value".
const UNDEFINED_TEXT: &str = "a field used by the prompt has no value for this task (use \
     {{ name | default(\"\") }} for optional fields; if the braces are literal text, wrap \
     it in {% raw %}...{% endraw %})";

impl JinjaError {
    /// The kind, for callers that branch on it.
    pub fn kind(&self) -> &JinjaErrorKind {
        &self.kind
    }

    /// Where in the prompt the error is: for `UnknownFields` the earliest use of any of
    /// them, for the others the position MiniJinja reports. `None` when nothing better
    /// than "somewhere in the prompt" is known.
    pub fn location(&self) -> Option<Location> {
        self.location
    }

    /// `prompt uses unknown field(s) "a" (did you mean "b"?), "c". Available fields: …`
    pub(super) fn unknown_fields(fields: Vec<UnknownField>, declared: &[&str]) -> JinjaError {
        let mut message = String::from("prompt uses unknown field(s) ");
        for (index, field) in fields.iter().enumerate() {
            if index > 0 {
                message.push_str(", ");
            }
            message.push_str(&format!("{:?}", field.name));
            if let Some(suggestion) = &field.suggestion {
                message.push_str(&format!(" (did you mean {suggestion:?}?)"));
            }
        }
        message.push_str(&format!(". Available fields: {}", declared.join(", ")));
        let location = fields
            .iter()
            .filter_map(|field| field.location)
            .min_by_key(|location| location.offset);
        JinjaError {
            kind: JinjaErrorKind::UnknownFields { fields },
            message,
            location,
        }
    }

    /// A MiniJinja error, from compiling or rendering the rewritten prompt.
    ///
    /// `source` is the prompt as written, for the line the message quotes (line numbers
    /// agree: the pre-pass never adds nor removes a line break); `available` are the
    /// fields a render had, listed after an undefined-value error.
    pub(super) fn from_minijinja(
        error: &minijinja::Error,
        source: &str,
        location: Option<Location>,
        available: &[&str],
    ) -> JinjaError {
        use minijinja::ErrorKind as Mj;

        let kind = match error.kind() {
            Mj::SyntaxError => JinjaErrorKind::Syntax,
            Mj::UndefinedError => JinjaErrorKind::Undefined,
            Mj::UnknownFilter => JinjaErrorKind::UnknownFilter,
            _ => JinjaErrorKind::Other,
        };
        let mut message = String::from("prompt template error: ");
        match kind {
            JinjaErrorKind::Undefined => message.push_str(UNDEFINED_TEXT),
            // MiniJinja's detail alone ("filter x is unknown"); with none, its whole
            // sentence, "(in <string>:1)" included, as the reference prints it.
            _ => match error.detail() {
                Some(detail) => message.push_str(detail),
                None => message.push_str(&error.to_string()),
            },
        }
        if kind == JinjaErrorKind::Syntax {
            message.push_str(SYNTAX_HINT);
        }
        if let Some(line) = error.line() {
            message.push_str(&format!(" {}", QuotedLine { source, line }));
        }
        if kind == JinjaErrorKind::Undefined {
            message.push_str(&format!(". Available fields: {}", available.join(", ")));
        }
        JinjaError {
            kind,
            message,
            location,
        }
    }
}

/// `(line 3: "{{ title | }}")`: the line trimmed and written as Rust's `{:?}` writes a
/// string; `(line 4)` for a line past the end (an error at the end of a prompt that
/// ends with a line break).
struct QuotedLine<'a> {
    source: &'a str,
    line: usize,
}

impl fmt::Display for QuotedLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self
            .line
            .checked_sub(1)
            .and_then(|index| self.source.lines().nth(index));
        match text {
            Some(text) => write!(f, "(line {}: {:?})", self.line, text.trim()),
            None => write!(f, "(line {})", self.line),
        }
    }
}

impl Location {
    /// The location of byte `offset` of `source` (moved back to a character boundary).
    pub(super) fn at(source: &str, offset: usize) -> Location {
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &source[..offset];
        let line_start = before.rfind('\n').map_or(0, |at| at + 1);
        Location {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            offset,
        }
    }

    /// The first non-blank character of 1-based `line`; the end of the prompt for a
    /// line past it.
    pub(super) fn line_start(source: &str, line: usize) -> Location {
        let mut start = 0;
        for _ in 1..line {
            match source[start..].find('\n') {
                Some(at) => start += at + 1,
                None => {
                    return Location {
                        line,
                        column: 1,
                        offset: source.len(),
                    };
                }
            }
        }
        let text = &source[start..];
        let text = &text[..text.find('\n').unwrap_or(text.len())];
        let blank = text.len() - text.trim_start().len();
        Location {
            line,
            column: text[..blank].chars().count() + 1,
            offset: start + blank,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_count_lines_and_characters() {
        let source = "ab\nção x\n";
        assert_eq!(
            Location::at(source, 0),
            Location {
                line: 1,
                column: 1,
                offset: 0
            }
        );
        let x = source.find('x').unwrap();
        assert_eq!(
            Location::at(source, x),
            Location {
                line: 2,
                column: 5,
                offset: x
            }
        );
        // Inside `ç`: back to its first byte.
        assert_eq!(Location::at(source, 4).offset, 3);
        assert_eq!(Location::at(source, 99).line, 3);
    }

    #[test]
    fn line_start_skips_blanks_and_stops_at_the_end() {
        let source = "a\n  \tb c\n";
        assert_eq!(
            Location::line_start(source, 2),
            Location {
                line: 2,
                column: 4,
                offset: 5
            }
        );
        assert_eq!(
            Location::line_start(source, 3),
            Location {
                line: 3,
                column: 1,
                offset: source.len()
            }
        );
        assert_eq!(Location::line_start(source, 7).offset, source.len());
    }

    #[test]
    fn quoted_lines_are_trimmed_and_debug_escaped() {
        let source = "x\n  {{ \"a\\tb\" }}  \n";
        assert_eq!(
            QuotedLine { source, line: 2 }.to_string(),
            r#"(line 2: "{{ \"a\\tb\" }}")"#
        );
        assert_eq!(QuotedLine { source, line: 3 }.to_string(), "(line 3)");
        assert_eq!(QuotedLine { source, line: 0 }.to_string(), "(line 0)");
    }
}
