//! One-pass `${key}` prompt templates: parse once, render many times, in linear time.
//!
//! The Curupira host renders each work item's prompt from a template and the item's
//! `(key, value)` pairs plus the host variables `repository` and `automation`. This crate
//! owns that substitution and nothing else: no I/O, no knowledge of the host.
//!
//! ```
//! use std::collections::HashMap;
//! use curupira_template::Template;
//!
//! let template = Template::parse("Fix #${issue-number} in ${repository}: ${title} (${unknown})");
//! let values = HashMap::from([
//!     ("issue-number".to_owned(), "42".to_owned()),
//!     ("repository".to_owned(), "github.com/acme/widgets".to_owned()),
//!     // Inserted text is never scanned again: this stays literal.
//!     ("title".to_owned(), "crash on ${repository}".to_owned()),
//! ]);
//!
//! assert_eq!(
//!     template.render(&values),
//!     "Fix #42 in github.com/acme/widgets: crash on ${repository} (${unknown})",
//! );
//! assert_eq!(
//!     template.keys().collect::<Vec<_>>(),
//!     ["issue-number", "repository", "title", "unknown"],
//! );
//! ```
//!
//! # The placeholder rule (SPEC section 5)
//!
//! - A placeholder runs from `${` to the **first** `}` after it; the text between is the
//!   key. A key may be any text: empty, with spaces, `$` or `{` in it, or not an
//!   identifier at all (`issue-number`, `foo.bar`, `123`).
//! - If the [`Lookup`] has the key, the whole placeholder is replaced by the value;
//!   otherwise it is left exactly as written.
//! - One pass, left to right: inserted text is never scanned again, so a value `${other}`
//!   stays literal.
//! - A `${` with no `}` anywhere after it is literal text, and so is everything after it.
//!
//! Consequences worth knowing (each one is pinned by a golden test in
//! `tests/golden/rules.txt`):
//!
//! | template | placeholders | why |
//! |---|---|---|
//! | `${a${b}}` | one, key `a${b`, then a literal `}` | the first `}` closes it |
//! | `$${a}` | literal `$`, then key `a` | a placeholder starts at `${` |
//! | `${a}${b}` | keys `a` and `b` | adjacent placeholders need no separator |
//! | `${}` | one, with the empty key | see below |
//! | `${a` | none | no `}` after the `${` |
//! | `${a ${b}` | one, key `a ${b` | the `${` inside a key is part of the key |
//!
//! # Where values come from
//!
//! Anything implementing [`Lookup`]: `HashMap`/`BTreeMap` of strings, slices or vectors
//! of `(key, value)` pairs (no map needed per work item), a [`Chain`] of two lookups
//! (item pairs, then host variables), or a closure wrapped by [`from_fn`]. A bare closure
//! is not a `Lookup`: `get` lends its value for as long as the lookup is borrowed, and a
//! closure's type cannot promise that for text borrowed from what it captured; `from_fn`
//! carries that lifetime in its type.
//!
//! # Decisions where the specification is silent
//!
//! - **The empty key** `${}` is a placeholder like any other: the lookup decides. It is
//!   replaced only if the lookup has the key `""`. The host never supplies an empty key
//!   (item keys are non-empty, SPEC section 1), so in a prompt `${}` stays as written.
//! - **Keys are compared byte for byte**: no trimming (`${ a }` has the key `" a "`), no
//!   case folding, no Unicode normalization.
//! - **Duplicate keys in a slice of pairs**: the first pair wins. A [`Chain`] asks its
//!   first lookup before its second. The host forbids both situations (an item key may
//!   appear once, and may not be `repository` or `automation`), so these rules only
//!   matter to other users of the crate.
//!
//! # Cost
//!
//! [`Template::parse`] is one left-to-right scan over the `$` and `}` bytes with `memchr`
//! (O(n) for every input, including `${${${…` with no `}`: nothing is ever rescanned).
//! A template stores its source once plus the byte span of every placeholder.
//! [`Template::render_into`] is one pass over those spans: O(template + output) plus one
//! lookup per placeholder. Nothing here panics on any UTF-8 input: `$`, `{` and `}` are
//! ASCII, so every span lies on character boundaries.
//!
//! # Feature `jinja`
//!
//! Off by default, so that the crate keeps `memchr` as its only dependency. It adds the
//! module `curupira_template::jinja` (MiniJinja, `strsim` and `thiserror`): prompts
//! rendered exactly as the reference host `curupira` 0.4.0 renders them. Its
//! `JinjaPrompt::compile(prompt, declared)` makes the reference's validate-time checks
//! (syntax, and fields outside the host variables and the trigger's `prompt_fields`),
//! `JinjaPrompt::render(fields)` renders one item after the reference's `${name}`
//! pre-pass, and `JinjaError` words every failure as the reference does, with a stable
//! kind and a line and column in the prompt. The module's documentation states the
//! rules; `tests/reference_jinja.rs` replays the reference's recorded verdicts.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

#[cfg(feature = "jinja")]
pub mod jinja;
mod lookup;

use std::fmt;
use std::ops::Range;

use memchr::memchr2_iter;

pub use lookup::{Chain, FromFn, Lookup, from_fn};

/// A parsed template: its source text and the position of every placeholder.
///
/// Parsing never fails: every UTF-8 text is a valid template (text that does not form a
/// placeholder is literal). Parse once, then [`render`](Template::render) as many times as
/// needed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Template {
    source: String,
    /// Byte ranges of the placeholders, `${` through `}` inclusive, in order and disjoint.
    spans: Vec<Range<usize>>,
}

/// One placeholder of a [`Template`], with its position in the template's source.
///
/// Byte offsets (not characters), suitable for diagnostics that point into the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placeholder<'t> {
    written: &'t str,
    start: usize,
}

impl<'t> Placeholder<'t> {
    /// The key: the text between `${` and `}`.
    pub fn key(&self) -> &'t str {
        // `written` is `${` + key + `}`, all three ASCII delimiters.
        &self.written[2..self.written.len() - 1]
    }

    /// The placeholder exactly as written, `${key}`.
    pub fn as_written(&self) -> &'t str {
        self.written
    }

    /// The byte range of the whole placeholder (`${` through `}`) in the template source.
    pub fn span(&self) -> Range<usize> {
        self.start..self.start + self.written.len()
    }

    /// The byte range of the key alone in the template source.
    pub fn key_span(&self) -> Range<usize> {
        self.start + 2..self.start + self.written.len() - 1
    }
}

impl Template {
    /// Parses `text`. Infallible: every UTF-8 text is a template.
    pub fn parse(text: &str) -> Template {
        Template::from(text.to_owned())
    }

    /// The source text, exactly as given to [`parse`](Template::parse).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The placeholders in source order, with their byte spans.
    pub fn placeholders(&self) -> impl ExactSizeIterator<Item = Placeholder<'_>> + Clone {
        self.spans.iter().map(|span| Placeholder {
            written: &self.source[span.clone()],
            start: span.start,
        })
    }

    /// The placeholder keys in source order, one per placeholder (so with duplicates).
    ///
    /// The host's `validate` uses this to warn about keys no trigger provides.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + Clone {
        self.placeholders().map(|placeholder| placeholder.key())
    }

    /// The placeholders `lookup` has no value for, in source order (each as often as it
    /// is written): what [`render`](Template::render) would leave as written.
    ///
    /// ```
    /// use curupira_template::Template;
    ///
    /// let template = Template::parse("Fix ${titel} in ${repo} (${title})");
    /// let item = [("title", "Crash"), ("repo", "acme/widgets")];
    /// let unfilled: Vec<&str> = template.unfilled(&item[..]).map(|p| p.key()).collect();
    /// assert_eq!(unfilled, ["titel"]);
    /// ```
    pub fn unfilled<'a, L: Lookup + ?Sized>(
        &'a self,
        lookup: &'a L,
    ) -> impl Iterator<Item = Placeholder<'a>> + 'a {
        self.placeholders()
            .filter(move |placeholder| lookup.get(placeholder.key()).is_none())
    }

    /// Renders the template: every placeholder whose key `lookup` has is replaced by the
    /// value; every other character is copied as written.
    pub fn render<L: Lookup + ?Sized>(&self, lookup: &L) -> String {
        let mut out = String::new();
        self.render_into(&mut out, lookup);
        out
    }

    /// Like [`render`](Template::render), but appends to `out` (reusing its allocation).
    pub fn render_into<L: Lookup + ?Sized>(&self, out: &mut String, lookup: &L) {
        // Literals plus every placeholder as written: exact when no key is known, and a
        // close guess when values are about as long as their placeholders.
        out.reserve(self.source.len());
        let mut literal_start = 0;
        for span in &self.spans {
            out.push_str(&self.source[literal_start..span.start]);
            let key = &self.source[span.start + 2..span.end - 1];
            out.push_str(
                lookup
                    .get(key)
                    .unwrap_or(&self.source[span.start..span.end]),
            );
            literal_start = span.end;
        }
        out.push_str(&self.source[literal_start..]);
    }
}

impl From<String> for Template {
    /// Parses an owned text without copying it.
    fn from(source: String) -> Template {
        let spans = scan(source.as_bytes());
        Template { source, spans }
    }
}

impl From<&str> for Template {
    fn from(text: &str) -> Template {
        Template::parse(text)
    }
}

impl fmt::Display for Template {
    /// Writes the source text, as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Finds every placeholder span in one left-to-right pass over the `$` and `}` bytes.
///
/// A two-state machine: outside a placeholder, a `$` followed by `{` opens one; inside,
/// the next `}` closes it and every `$` is part of the key. Each byte is visited once,
/// so the cost is linear for every input (a `${` that never closes cannot cause a
/// rescan: there is nothing to go back to).
fn scan(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    // Where the open placeholder's `${` is, if one is open.
    let mut open = None;
    for at in memchr2_iter(b'$', b'}', bytes) {
        match open {
            None if bytes[at] == b'$' && bytes.get(at + 1) == Some(&b'{') => open = Some(at),
            Some(start) if bytes[at] == b'}' => {
                spans.push(start..at + 1);
                open = None;
            }
            _ => {}
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<(usize, usize)> {
        Template::parse(text)
            .placeholders()
            .map(|p| (p.span().start, p.span().end))
            .collect()
    }

    #[test]
    fn spans_cover_dollar_through_first_closing_brace() {
        assert_eq!(spans("ab${c}d"), [(2, 6)]);
        assert_eq!(spans("${a${b}}"), [(0, 7)]);
        assert_eq!(spans("$${a}"), [(1, 5)]);
        assert_eq!(spans("${}${x}"), [(0, 3), (3, 7)]);
        assert_eq!(spans("${a"), []);
        assert_eq!(spans("}${"), []);
        assert_eq!(spans("$ {a}"), []);
        assert_eq!(spans("é${ü}"), [(2, 7)]);
    }

    #[test]
    fn placeholder_reports_key_and_key_span() {
        let template = Template::parse("x ${issue-number} y");
        let placeholder = template.placeholders().next().unwrap();
        assert_eq!(placeholder.key(), "issue-number");
        assert_eq!(placeholder.as_written(), "${issue-number}");
        assert_eq!(placeholder.span(), 2..17);
        assert_eq!(placeholder.key_span(), 4..16);
        assert_eq!(&template.source()[placeholder.key_span()], "issue-number");
    }

    #[test]
    fn unclosed_dollar_brace_run_is_all_literal() {
        // Many `${` without any `}`: one placeholder opens and never closes.
        let text = "${".repeat(100_000);
        let template = Template::parse(&text);
        assert_eq!(template.placeholders().len(), 0);
        assert_eq!(template.render(&[("", "x")]), text);
    }

    #[test]
    fn render_into_appends() {
        let template = Template::parse("${a}!");
        let mut out = String::from(">");
        template.render_into(&mut out, &[("a", "1")]);
        template.render_into(&mut out, &[("b", "2")]);
        assert_eq!(out, ">1!${a}!");
    }

    #[test]
    fn from_string_and_display_keep_the_source() {
        let template = Template::from(String::from("a ${b} c"));
        assert_eq!(template.to_string(), "a ${b} c");
        assert_eq!(template, Template::parse("a ${b} c"));
    }
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
