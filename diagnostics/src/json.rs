//! JSON sources: a reader that builds a `serde_json::Value` and records where every
//! member and element is, so that a validator can check the value by pointers alone and
//! still get a line and column on every diagnostic.
//!
//! `serde_json` keeps no spans, so this is a small scanner of its own. It reads one of
//! two [`Dialect`]s: [`parse`] the strict one, [`parse_with`] either.
//!
//! # The strict dialect
//!
//! It accepts exactly RFC 8259 JSON: no comments, trailing commas, single quotes,
//! leading zeros, `+1`, `.5`, `1.`, `NaN` or `Infinity`, no unescaped control character
//! in a string, only the escapes `\" \\ \/ \b \f \n \r \t \uXXXX` (surrogate pairs
//! combined, a lone surrogate rejected), only space, tab, LF and CR as whitespace, and
//! exactly one value. A byte order mark is the caller's to strip: here it is an
//! unexpected character like any other.
//!
//! The value is what `serde_json::from_str::<Value>` returns for the same text:
//! integers that fit a `u64` (or, negative, an `i64`) are integers, every other number
//! (`-0`, `1.0`, `1e2`, `18446744073709551616`) is the nearest `f64`, and a number
//! whose `f64` would be infinite is an error. The differences are deliberate and few:
//!
//! - nesting: up to [`STRICT_MAX_DEPTH`] (128) arrays and objects inside one another are
//!   accepted, where `serde_json` stops at 127;
//! - floats are always correctly rounded (as `serde_json` with its `float_roundtrip`
//!   feature); without that feature `serde_json` may land one unit in the last place
//!   away, and so may also disagree near `f64::MAX` on what is out of range;
//! - a member that appears twice is not an error (the last one wins, as with
//!   `JSON.parse` and `serde_json`), but each repetition is reported in
//!   [`JsonDocument::duplicates`].
//!
//! # The JavaScript dialect
//!
//! [`Dialect::JavaScript`] accepts the text JavaScript's `JSON.parse` accepts, for files
//! an app reads with it. The grammar is the same; three things differ, each a text
//! `JSON.parse` reads into something a `serde_json::Value` cannot hold:
//!
//! - a lone surrogate escape (`"\ud800"`, `"\udc00"`, a high surrogate followed by
//!   anything but a low surrogate escape, a reversed pair) is a string character for
//!   `JSON.parse`, but a Rust `String` cannot hold it. It is U+FFFD in the value (what
//!   any UTF-8 encoding of the JavaScript string gives), so that the value keeps the
//!   string's length in UTF-16 units for every check that does not look at that
//!   character. The text keeps the escape, and the document where it is
//!   ([`JsonDocument::lone_surrogates`]): the reader's own messages name a member by
//!   its spelling (`` member `\ud800` appears more than once ``), and
//!   [`Deferred::finish`] writes a U+FFFD of a message back as the escape when the
//!   member or element it is about spells it so and which U+FFFD stands for which
//!   escape is certain. Pointers hold the decoded names, U+FFFD included; and two
//!   member names that differ only in their lone surrogates (`"\ud800"`, `"\udc00"`)
//!   are one name in the value, the second a repetition, where `JSON.parse` keeps two
//!   members;
//! - a number beyond the range of `f64` (`1e400`, `-1e400`) is `Infinity` or `-Infinity`
//!   for `JSON.parse`, which `serde_json::Number` cannot hold. It is `f64::MAX` with its
//!   sign in the value, so that a member nobody reads costs nothing, and its pointer is
//!   in [`JsonDocument::infinite_numbers`], for a check whose verdict depends on the
//!   number being finite (the value alone cannot tell it from a literal `f64::MAX`);
//! - nesting stops at [`JAVASCRIPT_MAX_DEPTH`] (512) levels, where `JSON.parse` has no
//!   limit: far above any real file, and low enough that neither this reader (which is
//!   recursive) nor `serde_json`'s own recursive clone, comparison, serialization,
//!   deserialization and drop of the value overflow a 2 MiB thread stack (Rust's
//!   default for spawned threads) in an unoptimised build, where cloning or
//!   deserializing objects nested about 1,100 deep, and reading them about 1,300 deep,
//!   already does. Deeper text is one syntax error at the first bracket beyond the
//!   limit, found without reading further.
//!
//! Spans are recorded during the parse in a flat list (one small node per member and
//! element, no pointer strings); [`JsonDocument::source_map`] builds the
//! [`SourceMap`], with its pointers, only when a validator has something to report.

mod deferred;

pub use self::deferred::{Deferred, Place, type_name};

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::{Diagnostic, JsonPointer, LineIndex, Position, SourceMap};

/// The deepest nesting of arrays and objects [`Dialect::Strict`] accepts.
pub const STRICT_MAX_DEPTH: usize = 128;

/// The deepest nesting of arrays and objects [`Dialect::JavaScript`] accepts.
///
/// `JSON.parse` has no limit of its own; this one is far above any real file and low
/// enough that the `serde_json::Value` it makes can be cloned, compared, serialized,
/// deserialized and dropped — all recursive in `serde_json` — on a 2 MiB thread stack
/// (Rust's default for spawned threads) in an unoptimised build: there, cloning a value
/// of objects nested about 1,100 deep already overflows such a stack.
pub const JAVASCRIPT_MAX_DEPTH: usize = 512;

/// Which JSON text [`parse_with`] accepts, and how it reads what `serde_json::Value`
/// cannot hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// RFC 8259 as `serde_json` reads it: a lone surrogate escape and a number beyond
    /// the range of `f64` are syntax errors, and nesting stops at [`STRICT_MAX_DEPTH`].
    #[default]
    Strict,
    /// The text JavaScript's `JSON.parse` accepts: a lone surrogate escape is the
    /// character U+FFFD in the value (its escape is kept in
    /// [`JsonDocument::lone_surrogates`]), a number beyond the range of `f64` is
    /// `f64::MAX` with its sign (its place is in [`JsonDocument::infinite_numbers`]),
    /// and nesting stops at [`JAVASCRIPT_MAX_DEPTH`].
    JavaScript,
}

impl Dialect {
    /// The deepest nesting of arrays and objects accepted.
    pub fn max_depth(self) -> usize {
        match self {
            Dialect::Strict => STRICT_MAX_DEPTH,
            Dialect::JavaScript => JAVASCRIPT_MAX_DEPTH,
        }
    }
}

/// A parsed JSON document and where each of its members and elements is.
///
/// ```
/// use curupira_diagnostics::JsonPointer;
/// use curupira_diagnostics::json::parse;
///
/// let text = "{\n  \"name\": \"acme\",\n  \"files\": [\"a\", \"b\"]\n}\n";
/// let document = parse(text, "package.json", "demo/syntax", "demo/duplicate").unwrap();
/// assert_eq!(document.value["files"][1], "b");
///
/// let map = document.source_map();
/// let name = map.get(&JsonPointer::parse("/name").unwrap()).unwrap();
/// assert_eq!(&text[name.key.clone().unwrap()], "\"name\"");
/// assert_eq!(&text[name.value.clone()], "\"acme\"");
/// let second = map.get(&JsonPointer::parse("/files/1").unwrap()).unwrap();
/// assert_eq!((second.key.clone(), &text[second.value.clone()]), (None, "\"b\""));
/// ```
#[derive(Clone)]
pub struct JsonDocument {
    /// The document, as `serde_json::from_str` would return it (for a repeated member,
    /// the last value).
    pub value: Value,
    /// One error for each repetition of a member name within one object (the second,
    /// third… occurrence), in text order, located at the repeated key.
    pub duplicates: Vec<Diagnostic>,
    /// The text, to decode member names when the source map is built.
    text: Chunked<u8, TEXT_CHUNK>,
    /// Root, members and elements in text order (a parent before its children).
    nodes: Chunked<Node, NODE_CHUNK>,
    /// Offsets in the text of the lone surrogate escapes read as U+FFFD, in text order.
    lone_surrogates: Vec<usize>,
    /// The nodes of the numbers beyond the range of `f64`, read as `±f64::MAX`.
    infinite: Vec<usize>,
}

// Both the copy of the text and the nodes are kept in pieces smaller than 1 KiB. glibc's
// `malloc` answers a request of 1 KiB or more by first merging all its cached small free
// blocks, after which every small allocation of the parse (each string, each map node)
// takes its slow path: one such request per document made the parse about 40% slower.

/// Bytes of the text per piece.
const TEXT_CHUNK: usize = 512;
/// Nodes per piece (48 bytes each).
const NODE_CHUNK: usize = 16;

/// A sequence stored in pieces of `N` items, so that no allocation grows with it.
#[derive(Debug, Clone)]
struct Chunked<T, const N: usize> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T, const N: usize> Chunked<T, N> {
    fn new() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn push(&mut self, item: T) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < N => chunk.push(item),
            _ => self.push_chunk(item),
        }
        self.len += 1;
    }

    #[cold]
    #[inline(never)]
    fn push_chunk(&mut self, item: T) {
        let mut chunk = Vec::with_capacity(N);
        chunk.push(item);
        self.chunks.push(chunk);
    }

    fn get(&self, index: usize) -> Option<&T> {
        self.chunks.get(index / N)?.get(index % N)
    }

    #[inline]
    fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        self.chunks.get_mut(index / N)?.get_mut(index % N)
    }

    fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }
}

impl<const N: usize> Chunked<u8, N> {
    fn from_bytes(bytes: &[u8]) -> Self {
        Self {
            chunks: bytes.chunks(N).map(<[u8]>::to_vec).collect(),
            len: bytes.len(),
        }
    }

    /// The bytes `range`, borrowed when they are in one piece.
    fn slice(&self, range: Range<usize>) -> Cow<'_, [u8]> {
        let first = range.start / N;
        if range.is_empty() || first == (range.end - 1) / N {
            let within = self.chunks.get(first).and_then(|chunk| {
                chunk.get(range.start - first * N..range.end.saturating_sub(first * N))
            });
            return Cow::Borrowed(within.unwrap_or_default());
        }
        Cow::Owned(range.filter_map(|index| self.get(index).copied()).collect())
    }
}

/// One member, element or the root, with the byte span of its value.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// Index of the node of the enclosing object or array (0 for the root itself).
    parent: usize,
    slot: Slot,
    /// Start of the value's text.
    start: usize,
    /// End of the value's text.
    end: usize,
}

/// What a node is to its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// The whole document.
    Root,
    /// An object member; the span of its key's string literal, quotes included.
    Member { key_start: usize, key_end: usize },
    /// An array element and its index.
    Element(usize),
    /// A member replaced by a later one with the same name: neither it nor anything
    /// inside it is in the source map.
    Discarded { key_start: usize, key_end: usize },
}

impl Slot {
    fn key_span(self) -> Option<Range<usize>> {
        match self {
            Slot::Member { key_start, key_end } | Slot::Discarded { key_start, key_end } => {
                Some(key_start..key_end)
            }
            Slot::Root | Slot::Element(_) => None,
        }
    }
}

impl std::fmt::Debug for JsonDocument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonDocument")
            .field("value", &self.value)
            .field("duplicates", &self.duplicates)
            .field("text_len", &self.text.len())
            .field("nodes", &self.nodes.len())
            .field("lone_surrogates", &self.lone_surrogates)
            .field("infinite", &self.infinite)
            .finish()
    }
}

impl JsonDocument {
    /// Pointer → spans of the root, every object member (key span = the key's string
    /// literal including its quotes; value span = the value's text: strings include
    /// quotes, objects/arrays run from `{`/`[` to the matching `}`/`]`) and every array
    /// element (value span only, key None). Root: key None, value = span of the root
    /// value.
    ///
    /// Of a member repeated in one object, only the last occurrence (the one in
    /// [`JsonDocument::value`]) is mapped, with everything inside it.
    pub fn source_map(&self) -> SourceMap {
        let mut map = SourceMap::new();
        let mut live = Vec::with_capacity(self.nodes.len());
        // The pointers of the live ancestors of the current node, innermost last.
        let mut stack: Vec<(usize, JsonPointer)> = Vec::new();
        for (index, node) in self.nodes.iter().enumerate() {
            let alive = match node.slot {
                Slot::Root => true,
                Slot::Discarded { .. } => false,
                Slot::Member { .. } | Slot::Element(_) => {
                    node.parent < index && live.get(node.parent).copied().unwrap_or(false)
                }
            };
            live.push(alive);
            if !alive {
                continue;
            }
            let pointer = match node.slot {
                Slot::Root => JsonPointer::root(),
                slot => {
                    while stack.last().is_some_and(|(at, _)| *at != node.parent) {
                        stack.pop();
                    }
                    let Some((_, parent)) = stack.last() else {
                        continue;
                    };
                    match slot {
                        Slot::Element(position) => parent.index(position),
                        _ => match slot.key_span() {
                            Some(span) => parent.key(&self.name(span)),
                            None => continue,
                        },
                    }
                }
            };
            let spans = (node.slot.key_span(), node.start..node.end);
            if matches!(self.text.get(node.start), Some(b'{' | b'[')) {
                map.insert(pointer.clone(), spans.0, spans.1);
                stack.push((index, pointer));
            } else {
                map.insert(pointer, spans.0, spans.1);
            }
        }
        map
    }

    /// The span in the text of each lone surrogate escape (`\ud800`, six bytes), in
    /// text order, whether in a member name or a string value: each is one U+FFFD in
    /// [`JsonDocument::value`]. Always empty with [`Dialect::Strict`].
    pub fn lone_surrogates(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.lone_surrogates.iter().map(|&at| at..at + 6)
    }

    /// The pointers of the numbers beyond the range of `f64` (`1e400`, `-1e400`), which
    /// `JSON.parse` reads as `Infinity` or `-Infinity` and [`JsonDocument::value`] holds
    /// as `f64::MAX` or `-f64::MAX`, in text order (of a repeated member, only the last
    /// occurrence counts). Always empty with [`Dialect::Strict`].
    ///
    /// ```
    /// use curupira_diagnostics::json::{Dialect, parse_with};
    ///
    /// let text = r#"{"limit": -1e400, "ok": 1.5}"#;
    /// let document = parse_with(text, "f.json", "demo/syntax", "demo/duplicate", Dialect::JavaScript).unwrap();
    /// assert_eq!(document.value["limit"].as_f64(), Some(-f64::MAX));
    /// let infinite = document.infinite_numbers();
    /// assert_eq!(infinite.len(), 1);
    /// assert_eq!(infinite[0].as_str(), "/limit");
    /// ```
    pub fn infinite_numbers(&self) -> Vec<JsonPointer> {
        self.infinite
            .iter()
            .filter_map(|&index| live_pointer(&self.text, &self.nodes, index))
            .collect()
    }

    /// `message`, about the member or element whose key or value is `text[span]`, with
    /// each U+FFFD that stands for a lone surrogate escape there written as that escape
    /// (`\ud800`), when which one stands for which is certain: the span holds no U+FFFD
    /// of its own, and either all its lone surrogate escapes are the same or the message
    /// has exactly one U+FFFD for each of them.
    pub(crate) fn spell_lone_surrogates<'m>(
        &self,
        span: Range<usize>,
        message: &'m str,
    ) -> Cow<'m, str> {
        if self.lone_surrogates.is_empty() || !message.contains('\u{FFFD}') {
            return Cow::Borrowed(message);
        }
        let source = self.text.slice(span.clone());
        let source = String::from_utf8_lossy(&source);
        if source.contains('\u{FFFD}') || source.to_ascii_lowercase().contains("\\ufffd") {
            return Cow::Borrowed(message);
        }
        let escapes: Vec<String> = self
            .lone_surrogates()
            .filter(|escape| span.start <= escape.start && escape.end <= span.end)
            .map(|escape| String::from_utf8_lossy(&self.text.slice(escape)).into_owned())
            .collect();
        let Some(first) = escapes.first() else {
            return Cow::Borrowed(message);
        };
        let replacements = message.matches('\u{FFFD}').count();
        let same = escapes.iter().all(|escape| escape == first);
        if !same && replacements != escapes.len() {
            return Cow::Borrowed(message);
        }
        let mut out = String::with_capacity(message.len() + 6 * replacements);
        let mut escapes = escapes.iter();
        for c in message.chars() {
            if c != '\u{FFFD}' {
                out.push(c);
            } else if same {
                out.push_str(first);
            } else {
                out.push_str(escapes.next().unwrap_or(first));
            }
        }
        Cow::Owned(out)
    }

    /// The decoded member name whose string literal is `text[span]`.
    fn name(&self, span: Range<usize>) -> Cow<'_, str> {
        match self.text.slice(span) {
            Cow::Borrowed(bytes) => {
                std::str::from_utf8(bytes).map_or(Cow::Borrowed(""), decode_literal)
            }
            Cow::Owned(bytes) => String::from_utf8(bytes).map_or(Cow::Borrowed(""), |literal| {
                Cow::Owned(decode_literal(&literal).into_owned())
            }),
        }
    }
}

/// Parses `text` as one strict RFC 8259 JSON document.
///
/// A syntax error is one error diagnostic with `syntax_code`, at the root pointer,
/// located at the offending byte (the end of the text when the text ends too early),
/// whose message starts with `invalid JSON: ` and says what was expected and what was
/// found. A member repeated within one object is not a syntax error: the last value is
/// kept and each repetition is an error with `duplicate_code` in
/// [`JsonDocument::duplicates`].
///
/// ```
/// use curupira_diagnostics::json::parse;
///
/// let error = parse("{\n  \"a\": 1,\n}", "f.json", "demo/syntax", "demo/duplicate").unwrap_err();
/// assert_eq!((error.line(), error.column()), (Some(3), Some(1)));
/// assert!(error.message.starts_with("invalid JSON: expected a member name after `,`, found `}`"));
///
/// let document = parse(r#"{"a": 1, "a": 2}"#, "f.json", "demo/syntax", "demo/duplicate").unwrap();
/// assert_eq!(document.value["a"], 2);
/// assert_eq!(document.duplicates[0].path.as_str(), "/a");
/// assert_eq!(document.duplicates[0].column(), Some(10));
/// ```
// The signature is the one the validators share with `toml::parse`; a syntax error is
// rare and returned once per document, so its size does not matter.
#[allow(clippy::result_large_err)]
pub fn parse(
    text: &str,
    file: &str,
    syntax_code: impl Into<Cow<'static, str>>,
    duplicate_code: impl Into<Cow<'static, str>>,
) -> Result<JsonDocument, Diagnostic> {
    parse_with(text, file, syntax_code, duplicate_code, Dialect::Strict)
}

/// Parses `text` as one JSON document of `dialect`: [`parse`] for
/// [`Dialect::Strict`]; with [`Dialect::JavaScript`], the text `JSON.parse` accepts,
/// read as the module documentation says.
///
/// ```
/// use curupira_diagnostics::json::{Dialect, parse, parse_with};
///
/// let text = r#"{"name": "a\ud800b"}"#;
/// assert!(parse(text, "f.json", "demo/syntax", "demo/duplicate").is_err());
/// let document = parse_with(text, "f.json", "demo/syntax", "demo/duplicate", Dialect::JavaScript).unwrap();
/// assert_eq!(document.value["name"], "a\u{FFFD}b");
/// assert_eq!(document.lone_surrogates().collect::<Vec<_>>(), [11..17]);
/// ```
#[allow(clippy::result_large_err)]
pub fn parse_with(
    text: &str,
    file: &str,
    syntax_code: impl Into<Cow<'static, str>>,
    duplicate_code: impl Into<Cow<'static, str>>,
    dialect: Dialect,
) -> Result<JsonDocument, Diagnostic> {
    let mut parser = Parser::new(text, dialect);
    match parser.document() {
        Ok(value) => {
            let duplicates = parser.duplicates(file, duplicate_code.into());
            Ok(JsonDocument {
                value,
                duplicates,
                text: Chunked::from_bytes(text.as_bytes()),
                nodes: parser.nodes,
                lone_surrogates: parser.lone_surrogates,
                infinite: parser.infinite,
            })
        }
        Err(error) => {
            let position = Position::of(text, error.span.start);
            Err(Diagnostic::error(
                syntax_code,
                file,
                JsonPointer::root(),
                format!("invalid JSON: {}", error.message),
            )
            .with_location(error.span, position))
        }
    }
}

/// A syntax error: where, and the message after `invalid JSON: `.
#[derive(Debug)]
struct SyntaxError {
    span: Range<usize>,
    message: String,
}

type Parsed<T> = Result<T, Box<SyntaxError>>;

/// Where a value was expected, for the error message when there is none.
#[derive(Debug, Clone, Copy)]
enum Expecting {
    Root,
    /// The member whose name's string literal spans `.0...1`.
    Member(usize, usize),
    FirstElement,
    NextElement,
}

struct Parser<'t> {
    text: &'t str,
    bytes: &'t [u8],
    pos: usize,
    depth: usize,
    dialect: Dialect,
    max_depth: usize,
    nodes: Chunked<Node, NODE_CHUNK>,
    /// `(repeated member, first member with that name)`, as node indices.
    repeats: Vec<(usize, usize)>,
    /// Offsets of the lone surrogate escapes read as U+FFFD (JavaScript only).
    lone_surrogates: Vec<usize>,
    /// Where each U+FFFD for a lone surrogate went in the string being decoded: its
    /// byte offset in that string, and the offset of its escape in the text.
    replaced: Vec<(usize, usize)>,
    /// The nodes of the numbers beyond the range of `f64` (JavaScript only).
    infinite: Vec<usize>,
}

/// Names already seen in one object, built only once a name repeats in it: name →
/// (first member, member currently holding the value).
type Seen = HashMap<String, (usize, usize)>;

impl<'t> Parser<'t> {
    fn new(text: &'t str, dialect: Dialect) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
            dialect,
            max_depth: dialect.max_depth(),
            nodes: Chunked::new(),
            repeats: Vec::new(),
            lone_surrogates: Vec::new(),
            replaced: Vec::new(),
            infinite: Vec::new(),
        }
    }

    fn document(&mut self) -> Parsed<Value> {
        self.skip_whitespace();
        if self.pos >= self.bytes.len() {
            let end = self.bytes.len();
            return Err(error(end..end, "the document is empty".to_owned()));
        }
        self.nodes.push(Node {
            parent: 0,
            slot: Slot::Root,
            start: self.pos,
            end: self.pos,
        });
        let value = self.value(Expecting::Root, 0)?;
        self.close(0);
        self.skip_whitespace();
        if self.pos < self.bytes.len() {
            let (span, found) = self.found(self.pos);
            return Err(error(
                span,
                format!("trailing characters after the document: {found}"),
            ));
        }
        Ok(value)
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn rest(&self) -> &'t [u8] {
        self.bytes.get(self.pos..).unwrap_or_default()
    }

    /// `text[start..end]`, both being character boundaries the scanner established
    /// (next to an ASCII byte).
    #[inline]
    fn slice(&self, start: usize, end: usize) -> &'t str {
        self.text.get(start..end).unwrap_or_default()
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Sets the end of node `index`'s value to the current position.
    #[inline]
    fn close(&mut self, index: usize) {
        if let Some(node) = self.nodes.get_mut(index) {
            node.end = self.pos;
        }
    }

    /// Parses the value at the current position (whitespace already skipped); `node` is
    /// the node already pushed for it.
    fn value(&mut self, expecting: Expecting, node: usize) -> Parsed<Value> {
        match self.peek() {
            Some(b'"') => self.string().map(Value::String),
            Some(b'{') => self.object(node),
            Some(b'[') => self.array(node),
            Some(b'-' | b'0'..=b'9') => self.number(node).map(Value::Number),
            Some(b't') if self.rest().starts_with(b"true") => {
                self.pos += 4;
                Ok(Value::Bool(true))
            }
            Some(b'f') if self.rest().starts_with(b"false") => {
                self.pos += 5;
                Ok(Value::Bool(false))
            }
            Some(b'n') if self.rest().starts_with(b"null") => {
                self.pos += 4;
                Ok(Value::Null)
            }
            _ => Err(self.expected_value(expecting)),
        }
    }

    /// Counts one more level of nesting for the `{` or `[` at the current position.
    #[inline]
    fn enter(&mut self) -> Parsed<()> {
        if self.depth >= self.max_depth {
            return Err(error(
                self.pos..self.pos + 1,
                format!(
                    "arrays and objects are nested more than {} levels deep",
                    self.max_depth
                ),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn object(&mut self, node: usize) -> Parsed<Value> {
        let open = self.pos;
        self.enter()?;
        self.pos += 1;
        let mut map = Map::new();
        let mut seen: Option<Seen> = None;
        self.skip_whitespace();
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                self.depth -= 1;
                return Ok(Value::Object(map));
            }
            Some(b'"') => {}
            _ => return Err(self.expected_name(false)),
        }
        loop {
            let key_start = self.pos;
            let key = self.string()?;
            let key_end = self.pos;
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(self.expected_colon(key_start..key_end));
            }
            self.pos += 1;
            self.skip_whitespace();
            let child = self.nodes.len();
            self.nodes.push(Node {
                parent: node,
                slot: Slot::Member { key_start, key_end },
                start: self.pos,
                end: self.pos,
            });
            let value = self.value(Expecting::Member(key_start, key_end), child)?;
            self.close(child);
            match map.entry(key) {
                Entry::Vacant(entry) => {
                    if let Some(seen) = &mut seen {
                        seen.insert(entry.key().clone(), (child, child));
                    }
                    entry.insert(value);
                }
                Entry::Occupied(mut entry) => {
                    self.repeated(node, child, entry.key(), &mut seen);
                    entry.insert(value);
                }
            }
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() != Some(b'"') {
                        return Err(self.expected_name(true));
                    }
                }
                Some(b'}') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.expected_separator(open, child)),
            }
        }
    }

    /// Member `child` of the object `object` repeats the name `key`: the member holding
    /// the value so far is discarded and the repetition recorded.
    #[cold]
    #[inline(never)]
    fn repeated(&mut self, object: usize, child: usize, key: &str, seen: &mut Option<Seen>) {
        let seen = seen.get_or_insert_with(|| {
            // Until now every name of this object was distinct.
            let mut seen = Seen::new();
            for (index, node) in self.nodes.iter().enumerate().take(child).skip(object + 1) {
                if node.parent == object
                    && let Some(span) = node.slot.key_span()
                {
                    let name = decode_key(self.text, span).into_owned();
                    seen.entry(name).or_insert((index, index));
                }
            }
            seen
        });
        match seen.get_mut(key) {
            Some((first, current)) => {
                if let Some(node) = self.nodes.get_mut(*current)
                    && let Slot::Member { key_start, key_end } = node.slot
                {
                    node.slot = Slot::Discarded { key_start, key_end };
                }
                self.repeats.push((child, *first));
                *current = child;
            }
            None => {
                seen.insert(key.to_owned(), (child, child));
            }
        }
    }

    fn array(&mut self, node: usize) -> Parsed<Value> {
        let open = self.pos;
        self.enter()?;
        self.pos += 1;
        let mut elements = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Array(elements));
        }
        loop {
            let index = elements.len();
            let child = self.nodes.len();
            self.nodes.push(Node {
                parent: node,
                slot: Slot::Element(index),
                start: self.pos,
                end: self.pos,
            });
            let expecting = if index == 0 {
                Expecting::FirstElement
            } else {
                Expecting::NextElement
            };
            let value = self.value(expecting, child)?;
            self.close(child);
            elements.push(value);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_whitespace();
                }
                Some(b']') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(Value::Array(elements));
                }
                _ => return Err(self.expected_separator(open, child)),
            }
        }
    }

    /// The string whose opening quote is at the current position.
    #[inline]
    fn string(&mut self) -> Parsed<String> {
        let start = self.pos;
        let content = start + 1;
        let Some(offset) = find_special(self.bytes.get(content..).unwrap_or_default()) else {
            return Err(self.unterminated(start));
        };
        let at = content + offset;
        if self.bytes.get(at) == Some(&b'"') {
            self.pos = at + 1;
            return Ok(self.slice(content, at).to_owned());
        }
        self.escaped_string(start, at)
    }

    /// The rest of the string opened at `start`, from `at`, the first `\` or control
    /// character.
    fn escaped_string(&mut self, start: usize, mut at: usize) -> Parsed<String> {
        self.replaced.clear();
        let mut out = String::with_capacity(at - start + 16);
        let mut segment = start + 1;
        loop {
            match self.bytes.get(at) {
                Some(b'"') => {
                    out.push_str(self.slice(segment, at));
                    self.pos = at + 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    out.push_str(self.slice(segment, at));
                    at = self.escape(start, at, &mut out)?;
                    segment = at;
                }
                Some(&byte) => return Err(control_character(at, byte)),
                None => return Err(self.unterminated(start)),
            }
            match find_special(self.bytes.get(at..).unwrap_or_default()) {
                Some(offset) => at += offset,
                None => return Err(self.unterminated(start)),
            }
        }
    }

    /// Decodes the escape whose `\` is at `at` in the string opened at `start`, and
    /// returns the offset after it.
    fn escape(&mut self, start: usize, at: usize, out: &mut String) -> Parsed<usize> {
        let decoded = match self.bytes.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(start, at, out),
            Some(_) => {
                let (span, found) = self.found_char(at + 1);
                return Err(error(
                    span,
                    format!(
                        "expected one of `\"`, `\\`, `/`, `b`, `f`, `n`, `r`, `t` or `u` after `\\` in a string, found {found}"
                    ),
                ));
            }
            None => return Err(self.unterminated(start)),
        };
        out.push(decoded);
        Ok(at + 2)
    }

    /// Decodes the `\uXXXX` at `at` (and the low surrogate escape after it, for a high
    /// surrogate).
    fn unicode_escape(&mut self, start: usize, at: usize, out: &mut String) -> Parsed<usize> {
        let javascript = self.dialect == Dialect::JavaScript;
        let first = self.hex4(start, at + 2)?;
        let (code, next) = match first {
            0xD800..=0xDBFF => {
                let low = at + 6;
                if self.bytes.get(low..low + 2) == Some(b"\\u") {
                    let second = self.hex4(start, low + 2)?;
                    if (0xDC00..=0xDFFF).contains(&second) {
                        (
                            0x1_0000 + ((first - 0xD800) << 10) + (second - 0xDC00),
                            low + 6,
                        )
                    } else if javascript {
                        // The next escape is read on its own: it may start a pair.
                        return Ok(self.lone_surrogate(at, out));
                    } else {
                        return Err(self.lone_high_surrogate(at, low));
                    }
                } else if javascript {
                    return Ok(self.lone_surrogate(at, out));
                } else if low >= self.bytes.len() {
                    return Err(self.unterminated(start));
                } else {
                    return Err(self.lone_high_surrogate(at, low));
                }
            }
            0xDC00..=0xDFFF if javascript => return Ok(self.lone_surrogate(at, out)),
            0xDC00..=0xDFFF => {
                return Err(error(
                    at..at + 6,
                    format!(
                        "`{}` is a lone UTF-16 low surrogate: it must follow a high surrogate escape (`\\uD800` to `\\uDBFF`)",
                        self.slice(at, at + 6)
                    ),
                ));
            }
            _ => (first, at + 6),
        };
        // Every code point outside the surrogates, and every combined pair, is a char.
        if let Some(decoded) = char::from_u32(code) {
            out.push(decoded);
        }
        Ok(next)
    }

    /// Reads the lone surrogate escape at `at` as U+FFFD, as JavaScript keeps it in a
    /// string that Rust cannot hold, records where it was, and returns the offset after
    /// it.
    #[cold]
    fn lone_surrogate(&mut self, at: usize, out: &mut String) -> usize {
        self.lone_surrogates.push(at);
        self.replaced.push((out.len(), at));
        out.push(char::REPLACEMENT_CHARACTER);
        at + 6
    }

    /// The four hexadecimal digits at `at`, in the string opened at `start`.
    fn hex4(&self, start: usize, at: usize) -> Parsed<u32> {
        let mut code = 0;
        for offset in at..at + 4 {
            let digit = match self.bytes.get(offset) {
                Some(&byte @ b'0'..=b'9') => byte - b'0',
                Some(&byte @ b'a'..=b'f') => byte - b'a' + 10,
                Some(&byte @ b'A'..=b'F') => byte - b'A' + 10,
                Some(_) => {
                    let (span, found) = self.found_char(offset);
                    return Err(error(
                        span,
                        format!("expected four hexadecimal digits after `\\u`, found {found}"),
                    ));
                }
                None => return Err(self.unterminated(start)),
            };
            code = code * 16 + u32::from(digit);
        }
        Ok(code)
    }

    /// The number at the current position (a `-` or a digit), the value of `node`.
    fn number(&mut self, node: usize) -> Parsed<Number> {
        let start = self.pos;
        let mut at = start;
        let negative = self.bytes.get(at) == Some(&b'-');
        if negative {
            at += 1;
        }
        let digits_start = at;
        match self.bytes.get(at) {
            Some(b'0') => {
                at += 1;
                if let Some(b'0'..=b'9') = self.bytes.get(at) {
                    let end = self.digits_end(at);
                    return Err(error(
                        at..end,
                        format!(
                            "the number `{}` has a leading zero, which JSON does not allow",
                            shown_number(self.slice(start, end))
                        ),
                    ));
                }
            }
            Some(b'1'..=b'9') => at = self.digits_end(at + 1),
            _ => {
                let (span, found) = self.found(at);
                let hint = if self.starts_word(at, &["Infinity", "inf", "NaN"]) {
                    "; JSON numbers cannot be infinite or NaN"
                } else {
                    ""
                };
                return Err(error(
                    span,
                    format!("expected a digit after `-`, found {found}{hint}"),
                ));
            }
        }
        let digits_end = at;
        let mut integer = true;
        if self.bytes.get(at) == Some(&b'.') {
            at += 1;
            if !matches!(self.bytes.get(at), Some(b'0'..=b'9')) {
                let (span, found) = self.found_char(at);
                return Err(error(
                    span,
                    format!(
                        "expected a digit after the decimal point of `{}`, found {found}",
                        shown_number(self.slice(start, at))
                    ),
                ));
            }
            at = self.digits_end(at);
            integer = false;
        }
        if let Some(b'e' | b'E') = self.bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(at) {
                at += 1;
            }
            if !matches!(self.bytes.get(at), Some(b'0'..=b'9')) {
                let (span, found) = self.found_char(at);
                return Err(error(
                    span,
                    format!(
                        "expected a digit in the exponent of `{}`, found {found}",
                        shown_number(self.slice(start, at))
                    ),
                ));
            }
            at = self.digits_end(at);
            integer = false;
        }
        self.pos = at;
        if integer {
            let digits = self.bytes.get(digits_start..digits_end).unwrap_or_default();
            if let Some(magnitude) = parse_u64(digits) {
                if !negative {
                    return Ok(Number::from(magnitude));
                }
                // As serde_json: `-0` is the float -0.0.
                if magnitude != 0
                    && let Some(value) = 0i64.checked_sub_unsigned(magnitude)
                {
                    return Ok(Number::from(value));
                }
            }
        }
        let literal = self.slice(start, at);
        let float = literal.parse::<f64>().ok();
        if let Some(float) = float
            && float.is_infinite()
            && self.dialect == Dialect::JavaScript
            && let Some(number) = Number::from_f64(f64::MAX.copysign(float))
        {
            // `JSON.parse` reads it as `Infinity`, which a `Value` cannot hold.
            self.infinite.push(node);
            return Ok(number);
        }
        match float.and_then(Number::from_f64) {
            Some(number) => Ok(number),
            None => Err(error(
                start..at,
                format!(
                    "number out of range: `{}` is beyond the largest 64-bit float",
                    shown_number(literal)
                ),
            )),
        }
    }

    /// The end of the run of ASCII digits starting at `at`.
    #[inline]
    fn digits_end(&self, mut at: usize) -> usize {
        while let Some(b'0'..=b'9') = self.bytes.get(at) {
            at += 1;
        }
        at
    }

    /// The duplicate-member diagnostics, in text order.
    fn duplicates(&self, file: &str, code: Cow<'static, str>) -> Vec<Diagnostic> {
        if self.repeats.is_empty() {
            return Vec::new();
        }
        let lines = LineIndex::new(self.text);
        let key_span = |index: usize| self.nodes.get(index).and_then(|node| node.slot.key_span());
        let mut repeats = self.repeats.clone();
        repeats.sort_by_key(|&(repeated, _)| key_span(repeated).map_or(0, |span| span.start));
        repeats
            .into_iter()
            .filter_map(|(repeated, first)| {
                let span = key_span(repeated)?;
                let first = lines.position(key_span(first)?.start);
                let message = format!(
                    "member `{}` appears more than once in this object (first at line {}, column {}); \
                     JSON parsers disagree on which one wins, so keep exactly one",
                    shown_key(self.text, span.clone()),
                    first.line,
                    first.column,
                );
                let path = pointer_of(self.text, &self.nodes, repeated);
                Some(
                    Diagnostic::error(code.clone(), file, path, message)
                        .with_location(span.clone(), lines.position(span.start)),
                )
            })
            .collect()
    }

    // ----- error messages (cold) -----

    /// The span and the quoted text of what is at `at`: a word (`True`, `NaN`) when it
    /// starts with a letter, else one character; "the end of the text" at the end.
    #[cold]
    fn found(&self, at: usize) -> (Range<usize>, String) {
        self.found_token(at, true)
    }

    /// Like [`Parser::found`], always one character (inside strings and numbers).
    #[cold]
    fn found_char(&self, at: usize) -> (Range<usize>, String) {
        self.found_token(at, false)
    }

    fn found_token(&self, at: usize, words: bool) -> (Range<usize>, String) {
        let mut at = at.min(self.text.len());
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        let rest = self.text.get(at..).unwrap_or_default();
        let Some(first) = rest.chars().next() else {
            return (at..at, "the end of the text".to_owned());
        };
        let len = if words && first.is_ascii_alphabetic() {
            rest.bytes()
                .take(32)
                .take_while(|byte| byte.is_ascii_alphanumeric() || *byte == b'_')
                .count()
        } else {
            first.len_utf8()
        };
        let token = rest.get(..len).unwrap_or_default();
        (at..at + len, format!("`{}`", shown(token)))
    }

    /// Whether the word at `at` is one of `words`.
    fn starts_word(&self, at: usize, words: &[&str]) -> bool {
        let rest = self.bytes.get(at..).unwrap_or_default();
        let len = rest
            .iter()
            .take_while(|byte| byte.is_ascii_alphanumeric() || **byte == b'_')
            .count();
        let word = rest.get(..len).unwrap_or_default();
        words.iter().any(|candidate| candidate.as_bytes() == word)
    }

    #[cold]
    fn expected_value(&self, expecting: Expecting) -> Box<SyntaxError> {
        let at = self.pos;
        let (span, found) = self.found(at);
        let wanted = match expecting {
            Expecting::Root => {
                "a value (an object, array, string, number, `true`, `false` or `null`)".to_owned()
            }
            Expecting::Member(start, end) => {
                format!(
                    "the value of the member `{}`",
                    shown_key(self.text, start..end)
                )
            }
            Expecting::FirstElement => "a value or `]`".to_owned(),
            Expecting::NextElement => "a value after `,` in the array".to_owned(),
        };
        let hint = match self.peek() {
            Some(b'\'') => "; JSON strings are written in double quotes",
            Some(b'/') => "; JSON has no comments",
            Some(b'+') => "; a JSON number has no `+` sign",
            Some(b'.') => "; a JSON number starts with a digit, as in `0.5`",
            Some(b']' | b'}') if matches!(expecting, Expecting::NextElement) => {
                "; JSON allows no trailing comma"
            }
            _ if self.starts_word(at, &["NaN", "Infinity", "inf", "nan"]) => {
                "; JSON numbers cannot be infinite or NaN"
            }
            _ if self.starts_word(
                at,
                &[
                    "True", "False", "Null", "TRUE", "FALSE", "NULL", "None", "nil",
                ],
            ) =>
            {
                "; the JSON literals are `true`, `false` and `null`, in lowercase"
            }
            _ => "",
        };
        error(span, format!("expected {wanted}, found {found}{hint}"))
    }

    #[cold]
    fn expected_name(&self, after_comma: bool) -> Box<SyntaxError> {
        let (span, found) = self.found(self.pos);
        let (wanted, trailing) = if after_comma {
            ("a member name after `,`", "; JSON allows no trailing comma")
        } else {
            ("a member name or `}`", "")
        };
        let hint = match self.peek() {
            Some(b'}') => trailing,
            Some(b'/') => "; JSON has no comments",
            Some(b'\'') => "; member names are strings in double quotes",
            Some(byte) if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' => {
                "; member names are strings in double quotes"
            }
            _ => "",
        };
        error(span, format!("expected {wanted}, found {found}{hint}"))
    }

    #[cold]
    fn expected_colon(&self, key: Range<usize>) -> Box<SyntaxError> {
        let (span, found) = self.found(self.pos);
        error(
            span,
            format!(
                "expected `:` after the member name `{}`, found {found}",
                shown_key(self.text, key)
            ),
        )
    }

    /// After the member or element `child` of the object or array opened at `open`.
    #[cold]
    fn expected_separator(&self, open: usize, child: usize) -> Box<SyntaxError> {
        let (span, found) = self.found(self.pos);
        let slot = self.nodes.get(child).map(|node| node.slot);
        let (close, after, kind) = match slot {
            Some(Slot::Element(index)) => (']', format!("the element at index {index}"), "array"),
            other => {
                let name = other
                    .and_then(Slot::key_span)
                    .map(|span| shown_key(self.text, span))
                    .unwrap_or_default();
                ('}', format!("the member `{name}`"), "object")
            }
        };
        let mut message = format!("expected `,` or `{close}` after {after}, found {found}");
        if self.pos >= self.bytes.len() {
            let opened = Position::of(self.text, open);
            message.push_str(&format!(
                " (the {kind} that starts at line {}, column {} is never closed)",
                opened.line, opened.column
            ));
        }
        error(span, message)
    }

    #[cold]
    fn unterminated(&self, start: usize) -> Box<SyntaxError> {
        let end = self.bytes.len();
        let opened = Position::of(self.text, start);
        error(
            end..end,
            format!(
                "the text ends inside a string that starts at line {}, column {}",
                opened.line, opened.column
            ),
        )
    }

    #[cold]
    fn lone_high_surrogate(&self, at: usize, next: usize) -> Box<SyntaxError> {
        let found = if self.bytes.get(next..next + 2) == Some(b"\\u")
            && self.text.is_char_boundary(next + 6)
        {
            format!("`{}`", self.slice(next, next + 6))
        } else {
            self.found_char(next).1
        };
        error(
            at..next,
            format!(
                "expected a low surrogate escape (`\\uDC00` to `\\uDFFF`) after the high surrogate `{}`, found {found}",
                self.slice(at, at + 6)
            ),
        )
    }
}

fn error(span: Range<usize>, message: String) -> Box<SyntaxError> {
    Box::new(SyntaxError { span, message })
}

#[cold]
fn control_character(at: usize, byte: u8) -> Box<SyntaxError> {
    let escape = match byte {
        0x08 => "\\b".to_owned(),
        0x09 => "\\t".to_owned(),
        0x0A => "\\n".to_owned(),
        0x0C => "\\f".to_owned(),
        0x0D => "\\r".to_owned(),
        _ => format!("\\u{byte:04X}"),
    };
    error(
        at..at + 1,
        format!("the control character U+{byte:04X} must be escaped in a string, as `{escape}`"),
    )
}

/// Offset of the first `"`, `\` or control character (U+0000–U+001F) in `bytes`.
#[inline]
fn find_special(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        // Mycroft's trick: a byte's high bit is set in `found` for the first byte below
        // 0x20 or equal to `"` or `\` (bytes after it may be flagged falsely, never
        // bytes before it).
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        let quote = word ^ (ONES * u64::from(b'"'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        let found = (control | quote | backslash) & HIGH;
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)
        .map(|position| offset + position)
}

/// The digits as a `u64`, or `None` when they overflow it.
#[inline]
fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.len() < 20 {
        // At most 19 digits: below 10^19 < u64::MAX.
        return Some(
            digits
                .iter()
                .fold(0u64, |value, digit| value * 10 + u64::from(digit - b'0')),
        );
    }
    digits.iter().try_fold(0u64, |value, digit| {
        value.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
    })
}

/// The decoded member name whose string literal (quotes included) is `text[span]`.
fn decode_key(text: &str, span: Range<usize>) -> Cow<'_, str> {
    decode_literal(text.get(span).unwrap_or_default())
}

/// The decoded text of a string literal (quotes included).
fn decode_literal(literal: &str) -> Cow<'_, str> {
    let inner = literal
        .strip_prefix('"')
        .and_then(|raw| raw.strip_suffix('"'))
        .unwrap_or(literal);
    if !inner.contains('\\') {
        return Cow::Borrowed(inner);
    }
    match Parser::new(literal, Dialect::JavaScript).string() {
        Ok(name) => Cow::Owned(name),
        Err(_) => Cow::Borrowed(inner),
    }
}

/// The pointer of node `index`, unless it is or is inside a member replaced by a later
/// one with the same name (then it is not in the value).
fn live_pointer<const N: usize>(
    text: &Chunked<u8, N>,
    nodes: &Chunked<Node, NODE_CHUNK>,
    mut index: usize,
) -> Option<JsonPointer> {
    let mut slots = Vec::new();
    while let Some(node) = nodes.get(index) {
        if node.slot == Slot::Root || node.parent >= index {
            break;
        }
        if let Slot::Discarded { .. } = node.slot {
            return None;
        }
        slots.push(node.slot);
        index = node.parent;
    }
    let mut pointer = JsonPointer::root();
    for slot in slots.into_iter().rev() {
        match slot {
            Slot::Element(position) => pointer.push_index(position),
            other => {
                let span = other.key_span()?;
                let literal = String::from_utf8_lossy(&text.slice(span)).into_owned();
                pointer.push_key(&decode_literal(&literal));
            }
        }
    }
    Some(pointer)
}

/// The pointer of node `index`, through discarded members too.
fn pointer_of(text: &str, nodes: &Chunked<Node, NODE_CHUNK>, mut index: usize) -> JsonPointer {
    let mut slots = Vec::new();
    while let Some(node) = nodes.get(index) {
        if node.slot == Slot::Root || node.parent >= index {
            break;
        }
        slots.push(node.slot);
        index = node.parent;
    }
    let mut pointer = JsonPointer::root();
    for slot in slots.into_iter().rev() {
        match slot {
            Slot::Element(position) => pointer.push_index(position),
            other => {
                if let Some(span) = other.key_span() {
                    pointer.push_key(&decode_key(text, span));
                }
            }
        }
    }
    pointer
}

/// Text safe to show between backticks: control and invisible characters escaped as
/// Rust would (`\n`, `\u{1}`), quotes kept as they are.
fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_shown(&mut out, c);
    }
    out
}

/// Appends `c` as [`shown`] writes it.
fn push_shown(out: &mut String, c: char) {
    match c {
        '"' | '\'' => out.push(c),
        _ => out.extend(c.escape_debug()),
    }
}

/// A member name for a message, from its string literal `text[span]` (quotes
/// included): decoded and escaped as [`shown`] does, each lone surrogate written as its
/// escape (`\ud800`), and cut after 60 characters.
fn shown_key(text: &str, span: Range<usize>) -> String {
    const MAX: usize = 60;
    let literal = text.get(span).unwrap_or_default();
    let mut parser = Parser::new(literal, Dialect::JavaScript);
    let Ok(name) = parser.string() else {
        return shown(literal);
    };
    let mut replaced = parser.replaced.iter().copied().peekable();
    let mut out = String::with_capacity(name.len());
    for (count, (offset, c)) in name.char_indices().enumerate() {
        if count == MAX {
            out.push('…');
            break;
        }
        match replaced.peek() {
            Some(&(at, escape)) if at == offset => {
                replaced.next();
                out.push_str(literal.get(escape..escape + 6).unwrap_or_default());
            }
            _ => push_shown(&mut out, c),
        }
    }
    out
}

/// A number's text for a message, cut after 40 characters (numbers are ASCII).
fn shown_number(number: &str) -> String {
    const MAX: usize = 40;
    match number.get(..MAX) {
        Some(head) if number.len() > MAX => format!("{head}…"),
        _ => number.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> JsonDocument {
        parse(text, "f.json", "t/syntax", "t/duplicate").unwrap()
    }

    #[test]
    fn find_special_finds_the_first_special_byte() {
        for len in 0..40 {
            for special in [b'"', b'\\', 0u8, 0x1f, b'\n'] {
                for at in 0..len {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    if at + 1 < len {
                        bytes[at + 1] = b'"';
                    }
                    assert_eq!(find_special(&bytes), Some(at), "{len} {at} {special}");
                }
                assert_eq!(find_special(&vec![0xffu8; len]), None);
                assert_eq!(find_special(&vec![0x20u8; len]), None);
            }
        }
    }

    #[test]
    fn numbers_match_serde_json() {
        for text in [
            "0",
            "-0",
            "1",
            "-1",
            "1.0",
            "1e2",
            "1E+2",
            "-1e-2",
            "0.5",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "1e-400",
            "-0.0",
            "0e999999999999999999999",
        ] {
            let ours = parse_ok(text).value;
            let theirs: Value = serde_json::from_str(text).unwrap();
            let (ours, theirs) = (ours.as_number().unwrap(), theirs.as_number().unwrap());
            assert_eq!(
                (ours.as_u64(), ours.as_i64(), ours.is_f64()),
                (theirs.as_u64(), theirs.as_i64(), theirs.is_f64()),
                "{text}"
            );
            assert_eq!(
                ours.as_f64().map(f64::to_bits),
                theirs.as_f64().map(f64::to_bits),
                "{text}"
            );
        }
    }

    #[test]
    fn names_across_pieces_of_the_text_are_decoded() {
        for pad in 490..530 {
            let text = format!(
                "{{\"pad\": \"{}\", \"k\\u00e9y/\\n\": [{{\"\u{1f600}\": 1}}]}}",
                "x".repeat(pad)
            );
            let document = parse_ok(&text);
            let map = document.source_map();
            let element = JsonPointer::root().key("k\u{e9}y/\n").index(0);
            let spans = map.get(&element.key("\u{1f600}")).unwrap();
            assert_eq!(&text[spans.key.clone().unwrap()], "\"\u{1f600}\"");
            assert_eq!(&text[spans.value.clone()], "1");
            assert_eq!(map.len(), 5);
        }
    }

    #[test]
    fn discarded_members_leave_no_spans() {
        let document = parse_ok(r#"{"a":{"x":1},"b":[1],"a":{"y":2}}"#);
        let map = document.source_map();
        let pointers: Vec<_> = map.iter().map(|(p, _)| p.as_str().to_owned()).collect();
        assert_eq!(pointers, ["", "/a", "/a/y", "/b", "/b/0"]);
    }
}
