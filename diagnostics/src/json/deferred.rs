//! Checking a parsed JSON document cheaply: places as a chain on the stack
//! ([`Place`]), and diagnostics kept aside ([`Deferred`]) and located only at the end —
//! so a document with nothing to report never builds a JSON Pointer or a source map.

use std::borrow::Cow;
use std::ops::Range;

use super::JsonDocument;
use serde_json::{Map, Value};

use crate::{Anchor, Collector, Diagnostic, JsonPointer, Severity, all_of, did_you_mean, one_of};

/// A place in a JSON document, as a chain of parents on the stack: free to make, turned
/// into a [`JsonPointer`] or a readable name only when something is reported there.
///
/// ```
/// use curupira_diagnostics::json::Place;
///
/// let root = Place::Root;
/// let tools = root.key("contributes");
/// let tools = tools.key("tools");
/// let first = tools.index(0);
/// let name = first.key("name");
/// assert_eq!(name.pointer().as_str(), "/contributes/tools/0/name");
/// assert_eq!(name.quoted(), "`contributes.tools[0].name`");
/// ```
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    /// The document itself.
    Root,
    /// A member of an object.
    Key(&'a Place<'a>, &'a str),
    /// An element of an array.
    Index(&'a Place<'a>, usize),
}

impl<'a> Place<'a> {
    /// The member `key` of the object here.
    pub fn key(&'a self, key: &'a str) -> Place<'a> {
        Place::Key(self, key)
    }

    /// The element `index` of the array here.
    pub fn index(&'a self, index: usize) -> Place<'a> {
        Place::Index(self, index)
    }

    /// The RFC 6901 pointer of this place.
    pub fn pointer(&self) -> JsonPointer {
        match self {
            Place::Root => JsonPointer::root(),
            Place::Key(parent, key) => parent.pointer().key(key),
            Place::Index(parent, index) => parent.pointer().index(*index),
        }
    }

    /// `spiritExtension.contributes.tools[0].name`, for messages ("the document" for the
    /// root).
    pub fn dotted(&self) -> String {
        match self {
            Place::Root => "the document".to_owned(),
            Place::Key(Place::Root, key) => (*key).to_owned(),
            Place::Key(parent, key) => format!("{}.{key}", parent.dotted()),
            Place::Index(parent, index) => format!("{}[{index}]", parent.dotted()),
        }
    }

    /// [`Place::dotted`] in backquotes, or "the document".
    pub fn quoted(&self) -> String {
        match self {
            Place::Root => "the document".to_owned(),
            _ => format!("`{}`", self.dotted()),
        }
    }
}

/// The JSON type of `value` as a message names it: "a string", "an array", "null".
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One diagnostic waiting to be located.
#[derive(Debug)]
struct Pending {
    severity: Severity,
    code: Cow<'static, str>,
    path: JsonPointer,
    anchor: Anchor,
    /// The decoded string and the byte range in it to point at.
    within: Option<(String, Range<usize>)>,
    message: String,
}

/// The diagnostics of one JSON file, kept aside and located only at the end (and only
/// when there are some), together with the parser's duplicate-member errors.
///
/// ```
/// use curupira_diagnostics::json::{self, Deferred, Place};
///
/// let text = "{\n  \"name\": \"Hello\"\n}";
/// let document = json::parse(text, "f.json", "demo/syntax", "demo/duplicate").unwrap();
/// let mut out = Deferred::new();
/// out.error("demo/uppercase", &Place::Root.key("name"), "`name` has an uppercase letter".to_owned());
/// let diagnostics = out.finish("f.json", text, &document);
/// assert_eq!((diagnostics[0].line(), diagnostics[0].column()), (Some(2), Some(11)));
/// ```
#[derive(Debug, Default)]
pub struct Deferred {
    pending: Vec<Pending>,
}

impl Deferred {
    /// Nothing reported yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reports at `path`, a pointer made elsewhere.
    pub fn push_at(
        &mut self,
        severity: Severity,
        code: impl Into<Cow<'static, str>>,
        path: JsonPointer,
        anchor: Anchor,
        message: String,
    ) {
        self.pending.push(Pending {
            severity,
            code: code.into(),
            path,
            anchor,
            within: None,
            message,
        });
    }

    /// Reports at `at`, pointing at its key or its value.
    pub fn push(
        &mut self,
        severity: Severity,
        code: impl Into<Cow<'static, str>>,
        at: &Place<'_>,
        anchor: Anchor,
        message: String,
    ) {
        self.push_at(severity, code, at.pointer(), anchor, message);
    }

    /// An error at the value at `at`.
    pub fn error(&mut self, code: impl Into<Cow<'static, str>>, at: &Place<'_>, message: String) {
        self.push(Severity::Error, code, at, Anchor::Value, message);
    }

    /// A warning at the value at `at`.
    pub fn warning(&mut self, code: impl Into<Cow<'static, str>>, at: &Place<'_>, message: String) {
        self.push(Severity::Warning, code, at, Anchor::Value, message);
    }

    /// An error about the characters `range` of the string `value` at `at` (the whole
    /// value when `range` is `None`, or when the source spells it with escapes).
    pub fn error_in_string(
        &mut self,
        code: impl Into<Cow<'static, str>>,
        at: &Place<'_>,
        value: &str,
        range: Option<Range<usize>>,
        message: String,
    ) {
        self.pending.push(Pending {
            severity: Severity::Error,
            code: code.into(),
            path: at.pointer(),
            anchor: Anchor::Value,
            within: range.map(|range| (value.to_owned(), range)),
            message,
        });
    }

    /// A warning (`code`) at the key of every member of `object` (at `at`) that is not in
    /// `known` and not `skip` (which the caller reports itself), suggesting the closest
    /// known member or listing them all.
    pub fn unknown_members(
        &mut self,
        code: &'static str,
        object: &Map<String, Value>,
        at: &Place<'_>,
        known: &[&str],
        skip: &str,
    ) {
        for key in object.keys() {
            if known.contains(&key.as_str()) || key == skip {
                continue;
            }
            let message = match did_you_mean(key, known.iter().copied()) {
                Some(suggestion) => format!(
                    "unknown member `{}` in {}; did you mean `{suggestion}`?",
                    key.escape_debug(),
                    at.quoted()
                ),
                None => format!(
                    "unknown member `{}` in {} is ignored; known members are {}",
                    key.escape_debug(),
                    at.quoted(),
                    all_of(known)
                ),
            };
            self.push(Severity::Warning, code, &at.key(key), Anchor::Key, message);
        }
    }

    /// An error (`code`) for the string `text` at `at`, which is none of `names` (a
    /// closed set), suggesting the closest.
    pub fn not_one_of(
        &mut self,
        code: &'static str,
        at: &Place<'_>,
        text: &str,
        names: impl Iterator<Item = &'static str> + Clone,
    ) {
        let message = match did_you_mean(text, names.clone()) {
            Some(suggestion) => format!(
                "{} is `{}`, which is not one of {}; did you mean `{suggestion}`?",
                at.quoted(),
                text.escape_debug(),
                one_of(names)
            ),
            None => format!(
                "{} is `{}`; expected {}",
                at.quoted(),
                text.escape_debug(),
                one_of(names)
            ),
        };
        self.error(code, at, message);
    }

    /// Whether nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// The diagnostics of `file`, whose text is `text` and parse `document`, located and
    /// in file order, with the parser's duplicate-member errors among them.
    pub fn finish(self, file: &str, text: &str, document: &JsonDocument) -> Vec<Diagnostic> {
        if self.pending.is_empty() && document.duplicates.is_empty() {
            return Vec::new();
        }
        let map = if self.pending.is_empty() {
            Default::default()
        } else {
            document.source_map()
        };
        let mut pending = self.pending;
        if document.lone_surrogates().next().is_some() {
            // A U+FFFD of the value that stands for a lone surrogate escape is shown as
            // that escape, as the text spells it.
            for p in &mut pending {
                let Some(spans) = map.get(&p.path) else {
                    continue;
                };
                let span = match (p.anchor, &spans.key) {
                    (Anchor::Key, Some(key)) => key.clone(),
                    _ => spans.value.clone(),
                };
                if let Cow::Owned(message) = document.spell_lone_surrogates(span, &p.message) {
                    p.message = message;
                }
            }
        }
        let mut collector = Collector::new(file, text, map);
        for duplicate in &document.duplicates {
            collector.push_located(duplicate.clone(), duplicate.span.clone());
        }
        Self { pending }.drain_into(&mut collector);
        collector.finish()
    }

    /// The diagnostics of a document that has no text to point into (a value found
    /// inside another document): pointers, no line or column.
    pub fn finish_without_source(self, file: &str) -> Vec<Diagnostic> {
        let mut collector = Collector::without_source(file);
        self.drain_into(&mut collector);
        collector.finish()
    }

    fn drain_into(self, collector: &mut Collector<'_>) {
        for p in self.pending {
            match p.within {
                Some((value, range)) => {
                    collector.push_in_string(p.severity, p.code, &p.path, &value, range, p.message)
                }
                None => collector.push(p.severity, p.code, &p.path, p.anchor, p.message),
            }
        }
    }
}
