//! The `${name}` pre-pass that runs before Jinja sees the prompt.
//!
//! Every `${name}` whose name is known becomes `{{ _fields["name"] }}`; everything else
//! is copied as written. The pass also remembers where each rewrite happened, so that a
//! position MiniJinja reports in the rewritten text can be taken back to the prompt as
//! its author wrote it.

use std::fmt::Write as _;
use std::ops::Range;

use memchr::memmem;

/// A placeholder the pass looked at: `${` + name + `}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Candidate<'s> {
    /// The byte offset of its `$` in the source.
    pub(super) start: usize,
    /// The text between `${` and `}`.
    pub(super) name: &'s str,
}

/// The rewritten prompt, the placeholders left alone, and the way back to the source.
#[derive(Debug)]
pub(super) struct Rewrite<'s> {
    /// The text Jinja compiles.
    pub(super) text: String,
    /// Placeholders whose name was not known, in source order; they stay as written.
    pub(super) unknown: Vec<Candidate<'s>>,
    /// One entry per rewritten placeholder, in order.
    splices: Vec<Splice>,
}

/// Where one `${name}` was, in the source and in the rewritten text.
#[derive(Clone, Debug)]
struct Splice {
    original: Range<usize>,
    rewritten: Range<usize>,
}

/// Runs the pre-pass over `source`, rewriting the placeholders whose name `known`
/// accepts.
///
/// The scan, as the reference host does it:
/// - it looks at every `${` from left to right; the name runs to the first `}` after
///   it, and must be non-empty and hold no `"`, no `\` and no line break (a name the
///   reference never rewrites);
/// - a known name is replaced with `{{ _fields[<name>] }}`, the name written as Rust's
///   `{:?}` writes a string, and the scan goes on after the `}`;
/// - anything else is copied, and the scan goes on right after the `${`, so the `${b}`
///   in `${a${b}` or in `${a"${b}` is looked at too.
///
/// Every step moves forward and the stop search remembers its last answer, so the cost
/// is linear in the source, `${${${…` included.
pub(super) fn rewrite<'s>(source: &'s str, known: impl Fn(&str) -> bool) -> Rewrite<'s> {
    let bytes = source.as_bytes();
    let mut rewrite = Rewrite {
        text: String::with_capacity(source.len()),
        unknown: Vec::new(),
        splices: Vec::new(),
    };
    let mut copied = 0;
    let mut stops = Stops::default();
    let mut from = 0;
    while let Some(found) = memmem::find(&bytes[from..], b"${") {
        let start = from + found;
        let name_start = start + 2;
        from = name_start;
        let Some(stop) = stops.next(bytes, name_start) else {
            // No `}` (nor anything else that ends a name) before the end: nothing after
            // this point can be a placeholder.
            break;
        };
        if bytes[stop] != b'}' || stop == name_start {
            continue;
        }
        let name = &source[name_start..stop];
        if !known(name) {
            rewrite.unknown.push(Candidate { start, name });
            continue;
        }
        rewrite.text.push_str(&source[copied..start]);
        let rewritten_start = rewrite.text.len();
        // Writing to a `String` cannot fail.
        let _ = write!(rewrite.text, "{{{{ _fields[{name:?}] }}}}");
        rewrite.splices.push(Splice {
            original: start..stop + 1,
            rewritten: rewritten_start..rewrite.text.len(),
        });
        copied = stop + 1;
        from = stop + 1;
    }
    rewrite.text.push_str(&source[copied..]);
    rewrite
}

impl Rewrite<'_> {
    /// Takes a byte offset in the rewritten text back to the source: an offset inside
    /// a rewritten placeholder lands on its `$`, any other one moves by the length the
    /// rewrites before it added.
    pub(super) fn original_offset(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for splice in &self.splices {
            if offset < splice.rewritten.start {
                break;
            }
            if offset < splice.rewritten.end {
                return splice.original.start;
            }
            shift = splice.rewritten.end as isize - splice.original.end as isize;
        }
        offset.saturating_add_signed(-shift)
    }
}

/// The first byte at or after a position that ends a name (`}`, `"`, `\` or `\n`),
/// remembered: positions only grow, and no stop lies between a position and the stop
/// found for it, so a later position before that stop has the same answer.
#[derive(Default)]
struct Stops {
    last: Option<usize>,
}

impl Stops {
    fn next(&mut self, bytes: &[u8], at: usize) -> Option<usize> {
        if let Some(last) = self.last
            && at <= last
        {
            return Some(last);
        }
        let found = bytes[at..]
            .iter()
            .position(|b| matches!(b, b'}' | b'"' | b'\\' | b'\n'))
            .map(|offset| at + offset);
        self.last = found;
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(source: &str, known: &[&str]) -> String {
        rewrite(source, |name| known.contains(&name)).text
    }

    #[test]
    fn known_names_become_field_lookups() {
        assert_eq!(
            text("Item ${n}: ${title}", &["n", "title"]),
            r#"Item {{ _fields["n"] }}: {{ _fields["title"] }}"#
        );
        assert_eq!(text("[${missing}]", &["title"]), "[${missing}]");
        assert_eq!(
            text("[${a b}] [${a'b}] [${a.b}]", &["a b", "a'b", "a.b"]),
            r#"[{{ _fields["a b"] }}] [{{ _fields["a'b"] }}] [{{ _fields["a.b"] }}]"#
        );
    }

    #[test]
    fn names_are_written_as_rust_debug_strings() {
        assert_eq!(
            text("${a\tb}${a\u{1}b}", &["a\tb", "a\u{1}b"]),
            r#"{{ _fields["a\tb"] }}{{ _fields["a\u{1}b"] }}"#
        );
    }

    #[test]
    fn quotes_backslashes_line_breaks_and_the_empty_name_are_never_rewritten() {
        let known = ["a\"b", "a\\b", "a\nb", ""];
        for source in ["${a\"b}", "${a\\b}", "${a\nb}", "${}"] {
            assert_eq!(text(source, &known), source);
            assert!(rewrite(source, |_| true).unknown.is_empty(), "{source:?}");
        }
    }

    #[test]
    fn the_scan_goes_on_after_the_dollar_brace_of_a_name_left_alone() {
        assert_eq!(
            text("[${a\"${t}] [${a\n${t}] [${a${t}] [$${t}]", &["t"]),
            "[${a\"{{ _fields[\"t\"] }}] [${a\n{{ _fields[\"t\"] }}] \
             [${a{{ _fields[\"t\"] }}] [${{ _fields[\"t\"] }}]"
        );
        let rewritten = rewrite("${a${t}", |name| name == "t");
        assert_eq!(
            rewritten.unknown,
            [Candidate {
                start: 0,
                name: "a${t"
            }]
        );
    }

    #[test]
    fn offsets_map_back_to_the_source() {
        let source = "ab${t}cd${t}e";
        let rewritten = rewrite(source, |name| name == "t");
        let first = rewritten.text.find("{{").unwrap();
        assert_eq!(rewritten.original_offset(0), 0);
        assert_eq!(rewritten.original_offset(first + 3), 2);
        let after = rewritten.text.find("cd").unwrap();
        assert_eq!(rewritten.original_offset(after), 6);
        assert_eq!(
            rewritten.original_offset(rewritten.text.len()),
            source.len()
        );
    }

    #[test]
    fn unclosed_runs_stay_linear_and_literal() {
        let source = "${".repeat(100_000);
        let rewritten = rewrite(&source, |_| true);
        assert_eq!(rewritten.text, source);
        let source = "${a\"".repeat(50_000) + "}";
        assert_eq!(text(&source, &["a"]), source);
    }
}
