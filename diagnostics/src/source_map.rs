//! Where each JSON Pointer is in the source text, and a collector that turns pointers
//! into located diagnostics.
//!
//! This is the seam between a format and the validators: a format fills a
//! [`SourceMap`] once (TOML from `toml`'s spanned document, see the `toml` feature; a
//! JSON source can be scanned the same way), and a validator then only names pointers.
//! That keeps validators free of spans: they can check a plain `serde_json::Value`
//! and still get a line and column on every diagnostic.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

use crate::{Diagnostic, JsonPointer, LineIndex, Position, Severity};

/// The byte spans of one member or element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spans {
    /// The member's key (`name` in `name = "x"`), or `None` for an array element and
    /// the document root.
    pub key: Option<Range<usize>>,
    /// The value; for a TOML `[table]` or `[[array]]` element, its header line.
    pub value: Range<usize>,
}

/// Which part of a member a diagnostic should point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The value. For a member that is not in the document (a missing required key),
    /// the nearest enclosing member that is: a missing `/launch/package` points at the
    /// `[launch]` header.
    Value,
    /// The key, e.g. for an unknown key; an array element has no key and falls back to
    /// its value.
    Key,
}

/// Pointer → byte spans, for one text document.
///
/// ```
/// use curupira_diagnostics::{Anchor, JsonPointer, SourceMap};
///
/// let mut map = SourceMap::new();
/// let launch = JsonPointer::root().key("launch");
/// map.insert(launch.clone(), Some(1..7), 0..8); // `[launch]`
/// map.insert(launch.key("type"), Some(9..13), 16..21); // `type = "npx"`
///
/// assert_eq!(map.resolve(&launch.key("type"), Anchor::Key), Some(9..13));
/// // A missing member resolves to its enclosing table's header.
/// assert_eq!(map.resolve(&launch.key("package"), Anchor::Value), Some(0..8));
/// ```
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    entries: BTreeMap<JsonPointer, Spans>,
}

impl SourceMap {
    /// An empty map: every pointer resolves to nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records where the member or element at `pointer` is.
    pub fn insert(&mut self, pointer: JsonPointer, key: Option<Range<usize>>, value: Range<usize>) {
        self.entries.insert(pointer, Spans { key, value });
    }

    /// The spans recorded for exactly this pointer.
    pub fn get(&self, pointer: &JsonPointer) -> Option<&Spans> {
        self.entries.get(pointer)
    }

    /// Number of recorded pointers.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every recorded pointer with its spans, in pointer order.
    pub fn iter(&self) -> impl Iterator<Item = (&JsonPointer, &Spans)> {
        self.entries.iter()
    }

    /// The span a diagnostic at `pointer` should underline.
    ///
    /// When the pointer itself is not recorded, its nearest recorded ancestor's value
    /// is used (whatever the anchor). `None` when no ancestor is recorded either.
    pub fn resolve(&self, pointer: &JsonPointer, anchor: Anchor) -> Option<Range<usize>> {
        if let Some(spans) = self.entries.get(pointer) {
            return Some(match (anchor, &spans.key) {
                (Anchor::Key, Some(key)) => key.clone(),
                _ => spans.value.clone(),
            });
        }
        let mut current = pointer.parent();
        while let Some(ancestor) = current {
            if let Some(spans) = self.entries.get(&ancestor) {
                return Some(spans.value.clone());
            }
            current = ancestor.parent();
        }
        None
    }
}

/// Collects the diagnostics of one file, locating each from its pointer.
///
/// ```
/// use curupira_diagnostics::{Collector, JsonPointer, SourceMap};
///
/// let text = "name = \"Acme\"\n";
/// let mut map = SourceMap::new();
/// map.insert(JsonPointer::root().key("name"), Some(0..4), 7..13);
/// let mut collector = Collector::new("ext.toml", text, map);
///
/// let name = JsonPointer::root().key("name");
/// // Point at the `A` (byte 0 of the decoded string) rather than the whole value.
/// collector.error_in_string("demo/uppercase", &name, "Acme", 0..1, "`A` is uppercase");
/// let diagnostics = collector.finish();
/// assert_eq!(diagnostics[0].span, Some(8..9));
/// assert_eq!((diagnostics[0].line(), diagnostics[0].column()), (Some(1), Some(9)));
/// ```
#[derive(Debug)]
pub struct Collector<'a> {
    file: String,
    lines: LineIndex<'a>,
    map: SourceMap,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> Collector<'a> {
    /// A collector for `file`, whose text is `text` and whose pointers `map` locates.
    pub fn new(file: impl Into<String>, text: &'a str, map: SourceMap) -> Self {
        Self {
            file: file.into(),
            lines: LineIndex::new(text),
            map,
            diagnostics: Vec::new(),
        }
    }

    /// A collector for input that has no text to point into (diagnostics get a pointer
    /// but no line and column).
    pub fn without_source(file: impl Into<String>) -> Self {
        Self::new(file, "", SourceMap::new())
    }

    /// The file name given to [`Collector::new`].
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The source map in use.
    pub fn source_map(&self) -> &SourceMap {
        &self.map
    }

    /// Records an error pointing at the value at `path`.
    pub fn error(
        &mut self,
        code: impl Into<Cow<'static, str>>,
        path: &JsonPointer,
        message: impl Into<String>,
    ) {
        self.push(Severity::Error, code, path, Anchor::Value, message);
    }

    /// Records a warning pointing at the value at `path`.
    pub fn warning(
        &mut self,
        code: impl Into<Cow<'static, str>>,
        path: &JsonPointer,
        message: impl Into<String>,
    ) {
        self.push(Severity::Warning, code, path, Anchor::Value, message);
    }

    /// Records a diagnostic pointing at the chosen part of the member at `path`.
    pub fn push(
        &mut self,
        severity: Severity,
        code: impl Into<Cow<'static, str>>,
        path: &JsonPointer,
        anchor: Anchor,
        message: impl Into<String>,
    ) {
        let span = self.map.resolve(path, anchor);
        self.push_located(
            Diagnostic::new(severity, code, self.file.clone(), path.clone(), message),
            span,
        );
    }

    /// Records an error about some characters of a string value: `range` is a byte
    /// range of the decoded string `value`.
    ///
    /// The diagnostic points at exactly those characters when the source spells the
    /// string between one pair of quotes with no escapes (so decoded and source bytes
    /// line up); otherwise it points at the whole value.
    pub fn error_in_string(
        &mut self,
        code: impl Into<Cow<'static, str>>,
        path: &JsonPointer,
        value: &str,
        range: Range<usize>,
        message: impl Into<String>,
    ) {
        self.push_in_string(Severity::Error, code, path, value, range, message);
    }

    /// Like [`Collector::error_in_string`], with any severity.
    pub fn push_in_string(
        &mut self,
        severity: Severity,
        code: impl Into<Cow<'static, str>>,
        path: &JsonPointer,
        value: &str,
        range: Range<usize>,
        message: impl Into<String>,
    ) {
        let whole = self.map.resolve(path, Anchor::Value);
        let span = whole.map(|whole| narrow(self.lines.text(), whole, value, range));
        let diagnostic = Diagnostic::new(severity, code, self.file.clone(), path.clone(), message);
        self.push_located(diagnostic, span);
    }

    /// Records a diagnostic built elsewhere, locating it at `span` when given.
    pub fn push_located(&mut self, mut diagnostic: Diagnostic, span: Option<Range<usize>>) {
        if let Some(span) = span {
            diagnostic.position = Some(self.lines.position(span.start));
            diagnostic.span = Some(span);
        }
        self.diagnostics.push(diagnostic);
    }

    /// Line and column of a byte offset in this file.
    pub fn position(&self, offset: usize) -> Position {
        self.lines.position(offset)
    }

    /// Whether an error was recorded.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The diagnostics, ordered by where they are in the file (those without a
    /// location last); diagnostics at the same place keep the order they were recorded.
    pub fn finish(mut self) -> Vec<Diagnostic> {
        self.diagnostics
            .sort_by_key(|d| d.span.as_ref().map_or(usize::MAX, |span| span.start));
        self.diagnostics
    }
}

/// Narrows the span `whole` of a string value to the bytes `range` of its decoded
/// text `value`, when the source spells it between one pair of quotes with no escapes
/// (any escape makes the spelling differ from the decoded text).
fn narrow(text: &str, whole: Range<usize>, value: &str, range: Range<usize>) -> Range<usize> {
    let Some(raw) = text.get(whole.clone()) else {
        return whole;
    };
    let bytes = raw.as_bytes();
    let quoted =
        bytes.len() >= 2 && matches!(bytes[0], b'"' | b'\'') && bytes[bytes.len() - 1] == bytes[0];
    // The quotes are ASCII, so slicing inside them stays on character boundaries.
    if !quoted || &raw[1..raw.len() - 1] != value || value.get(range.clone()).is_none() {
        return whole;
    }
    whole.start + 1 + range.start..whole.start + 1 + range.end
}

impl Diagnostic {
    /// Locates this diagnostic from its `path`, as a [`Collector`] would, in a file
    /// whose text is `text` and whose pointers `map` records.
    ///
    /// Costs one pass over the text up to the span: for the many diagnostics of one
    /// check, a `Collector` (which indexes the lines once) is cheaper.
    ///
    /// ```
    /// use curupira_diagnostics::{Anchor, Diagnostic, JsonPointer, SourceMap};
    ///
    /// let text = "[a]\nb = 1\n";
    /// let mut map = SourceMap::new();
    /// map.insert(JsonPointer::root().key("a"), Some(1..2), 0..3);
    /// let missing = JsonPointer::root().key("a").key("c");
    /// let diagnostic = Diagnostic::error("demo/missing", "f.toml", missing, "no `c`")
    ///     .locate(&map, text, Anchor::Value);
    /// assert_eq!((diagnostic.line(), diagnostic.column(), diagnostic.span), (Some(1), Some(1), Some(0..3)));
    /// ```
    #[must_use]
    pub fn locate(self, map: &SourceMap, text: &str, anchor: Anchor) -> Self {
        let span = map.resolve(&self.path, anchor);
        self.at_span(text, span)
    }

    /// Like [`Diagnostic::locate`], pointing at the bytes `range` of the decoded string
    /// `value` at `path` (see [`Collector::error_in_string`]).
    #[must_use]
    pub fn locate_in_string(
        self,
        map: &SourceMap,
        text: &str,
        value: &str,
        range: Range<usize>,
    ) -> Self {
        let span = map
            .resolve(&self.path, Anchor::Value)
            .map(|whole| narrow(text, whole, value, range));
        self.at_span(text, span)
    }

    fn at_span(self, text: &str, span: Option<Range<usize>>) -> Self {
        match span {
            Some(span) => {
                let position = Position::of(text, span.start);
                self.with_location(span, position)
            }
            None => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (String, SourceMap) {
        //          0         1          2
        //          0123456789012345678 9012345678
        let text = "[launch]\ntype = \"n\\u0070x\"\n".to_owned();
        let mut map = SourceMap::new();
        map.insert(JsonPointer::root(), None, 0..0);
        let launch = JsonPointer::root().key("launch");
        map.insert(launch.clone(), Some(1..7), 0..8);
        map.insert(launch.key("type"), Some(9..13), 16..27);
        (text, map)
    }

    #[test]
    fn missing_members_fall_back_to_the_enclosing_value() {
        let (_, map) = sample();
        let package = JsonPointer::root().key("launch").key("package");
        assert_eq!(map.resolve(&package, Anchor::Key), Some(0..8));
        assert_eq!(
            map.resolve(&JsonPointer::root().key("name"), Anchor::Value),
            Some(0..0)
        );
        assert_eq!(SourceMap::new().resolve(&package, Anchor::Value), None);
    }

    #[test]
    fn escaped_strings_are_not_narrowed() {
        let (text, map) = sample();
        let mut collector = Collector::new("f", &text, map);
        let path = JsonPointer::root().key("launch").key("type");
        collector.error_in_string("t/x", &path, "npx", 1..2, "m");
        let diagnostics = collector.finish();
        assert_eq!(diagnostics[0].span, Some(16..27));
        assert_eq!(
            diagnostics[0].position,
            Some(Position { line: 2, column: 8 })
        );
    }

    #[test]
    fn a_diagnostic_locates_itself_like_the_collector() {
        let text = "name = 'Ab'\n".to_owned();
        let mut map = SourceMap::new();
        let name = JsonPointer::root().key("name");
        map.insert(name.clone(), Some(0..4), 7..11);
        let mut collector = Collector::new("f", &text, map.clone());
        collector.error_in_string("t/x", &name, "Ab", 0..1, "m");
        let by_collector = collector.finish().remove(0);
        let by_itself =
            Diagnostic::error("t/x", "f", name, "m").locate_in_string(&map, &text, "Ab", 0..1);
        assert_eq!(by_itself, by_collector);
        assert_eq!(by_itself.span, Some(8..9));
        assert_eq!(by_itself.position, Some(Position { line: 1, column: 9 }));
    }

    #[test]
    fn finish_orders_by_place_and_keeps_unlocated_last() {
        let (text, map) = sample();
        let mut collector = Collector::new("f", &text, map);
        collector.warning(
            "t/late",
            &JsonPointer::root().key("launch").key("type"),
            "late",
        );
        collector.error(
            "t/root",
            &JsonPointer::parse("/x").unwrap(),
            "falls back to the root",
        );
        collector.error("t/early", &JsonPointer::root().key("launch"), "early");
        let mut no_map = Collector::without_source("g");
        no_map.error("t/none", &JsonPointer::root(), "nowhere");
        let codes: Vec<_> = collector.finish().into_iter().map(|d| d.code).collect();
        assert_eq!(codes, ["t/root", "t/early", "t/late"]);
        let unlocated = no_map.finish();
        assert_eq!(unlocated[0].position, None);
    }
}
