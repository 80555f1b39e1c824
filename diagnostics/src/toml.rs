//! TOML sources: parse with `toml`'s spanned document and fill a [`SourceMap`] with the
//! span of every key and value; and the message helpers every TOML checker shares —
//! [`dotted`] names a place, [`type_name`] a value's type, [`unknown_keys`] warns about
//! keys a format does not define — so that the manifest and the host config word the
//! same problem the same way.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

use crate::{
    Anchor, Collector, Diagnostic, JsonPointer, Severity, SourceMap, all_of, did_you_mean,
};

// The `toml` types this module's API names (`TomlDocument::table`, `Typed`), from the
// version it parses with, so a user reads a document without a `toml` dependency of
// their own (this module's name hides the crate's).
pub use ::toml::Spanned;
pub use ::toml::Value;
pub use ::toml::de::{DeTable, DeValue};

/// A parsed TOML document and where each of its members is.
#[derive(Debug)]
pub struct TomlDocument<'i> {
    /// The document, every key and value with its byte span.
    pub table: Spanned<DeTable<'i>>,
    /// Pointer → spans for every key and value (the root included, at `0..0`).
    pub source_map: SourceMap,
}

/// Parses `text`; on a syntax error returns one diagnostic per error the parser
/// reported (it recovers and goes on), each with the given `code`, line and column.
///
/// An array or inline table that is never closed is reported once, at the bracket
/// that opened it: the parser reads on to the end of the file looking for its `]` or
/// `}`, and what it then reports about every later line (a missing comma, an unquoted
/// string, …) is a consequence, not a problem of those lines, so it is left out.
///
/// ```
/// use curupira_diagnostics::toml::parse;
///
/// let errors = parse("name = \"a\"\nversion = 1.2.0\n", "ext.toml", "demo/syntax").unwrap_err();
/// assert_eq!(errors.len(), 1);
/// assert_eq!((errors[0].line(), errors[0].column()), (Some(2), Some(14)));
/// assert!(errors[0].message.starts_with("invalid TOML: "));
///
/// let errors = parse("args = [\"a\",\n\n[launch]\ntype = \"npx\"\n", "ext.toml", "demo/syntax")
///     .unwrap_err();
/// assert_eq!(errors.len(), 1);
/// assert_eq!((errors[0].line(), errors[0].column()), (Some(1), Some(8)));
///
/// let document = parse("[launch]\ntype = \"npx\"\n", "ext.toml", "demo/syntax").unwrap();
/// let pointer = curupira_diagnostics::JsonPointer::parse("/launch/type").unwrap();
/// assert_eq!(document.source_map.get(&pointer).unwrap().value, 16..21);
/// ```
pub fn parse<'i>(
    text: &'i str,
    file: &str,
    code: impl Into<Cow<'static, str>>,
) -> Result<TomlDocument<'i>, Vec<Diagnostic>> {
    let (table, errors) = DeTable::parse_recoverable(text);
    if errors.is_empty() {
        let source_map = source_map(&table);
        return Ok(TomlDocument { table, source_map });
    }
    let code = code.into();
    let mut collector = Collector::without_source(file);
    let lines = crate::LineIndex::new(text);
    let unclosed = first_unclosed(text);
    // What the parser reported from the unclosed bracket on is its consequence.
    let before = |span: &Option<Range<usize>>| match (&unclosed, span) {
        (Some(unclosed), Some(span)) => span.start < unclosed.span.start,
        _ => true,
    };
    let mut seen = HashSet::new();
    for error in &errors {
        let span = error.span();
        let message = one_line(error.message());
        if !before(&span) || !seen.insert((span.clone(), message.clone())) {
            continue;
        }
        let mut diagnostic = Diagnostic::error(
            code.clone(),
            file,
            JsonPointer::root(),
            format!("invalid TOML: {message}"),
        );
        if let Some(span) = span {
            diagnostic = diagnostic.with_location(span.clone(), lines.position(span.start));
        }
        collector.push_located(diagnostic, None);
    }
    if let Some(Unclosed { span, what, close }) = unclosed {
        let diagnostic = Diagnostic::error(
            code,
            file,
            JsonPointer::root(),
            format!(
                "invalid TOML: unclosed {what}: this `{open}` has no matching `{close}` before \
                 the end of the file",
                open = &text[span.clone()],
            ),
        )
        .with_location(span.clone(), lines.position(span.start));
        collector.push_located(diagnostic, None);
    }
    Err(collector.finish())
}

/// An array or inline table that is never closed: its opening bracket, what it is and
/// the bracket that would close it.
struct Unclosed {
    span: Range<usize>,
    what: &'static str,
    close: char,
}

/// The earliest array or inline table in `text` that is never closed. `toml`'s errors
/// keep only where the parser gave up (the end of the file); `toml_parser`, the parser
/// under it, also says where the bracket was opened, so a document with errors is
/// parsed once more with it to learn that.
fn first_unclosed(text: &str) -> Option<Unclosed> {
    let tokens = toml_parser::Source::new(text).lex().into_vec();
    let mut errors: Vec<toml_parser::ParseError> = Vec::new();
    toml_parser::parser::parse_document(&tokens, &mut (), &mut errors);
    errors
        .iter()
        .filter_map(|error| {
            let (what, close) = match error.description() {
                "unclosed array" => ("array", ']'),
                "unclosed inline table" => ("inline table", '}'),
                _ => return None,
            };
            let context = error.context()?;
            let span = context.start()..context.end();
            text.get(span.clone())?;
            Some(Unclosed { span, what, close })
        })
        .min_by_key(|unclosed| unclosed.span.start)
}

/// Pointer → spans for every key, value and array element of a parsed document.
pub fn source_map(document: &Spanned<DeTable<'_>>) -> SourceMap {
    let mut map = SourceMap::new();
    map.insert(JsonPointer::root(), None, document.span());
    add_table(&mut map, &JsonPointer::root(), document.get_ref());
    map
}

fn add_table(map: &mut SourceMap, at: &JsonPointer, table: &DeTable<'_>) {
    for (key, value) in table {
        let pointer = at.key(key.get_ref());
        map.insert(pointer.clone(), Some(key.span()), value.span());
        add_value(map, &pointer, value.get_ref());
    }
}

fn add_value(map: &mut SourceMap, at: &JsonPointer, value: &DeValue<'_>) {
    match value {
        DeValue::Table(table) => add_table(map, at, table),
        DeValue::Array(array) => {
            for (index, element) in array.iter().enumerate() {
                let pointer = at.index(index);
                map.insert(pointer.clone(), None, element.span());
                add_value(map, &pointer, element.get_ref());
            }
        }
        _ => {}
    }
}

/// `launch.args[2]`, `extensions."lo:cal".path`: a pointer as a TOML reader writes the
/// place, for messages (the name of the JSON checkers' `Place::dotted`).
///
/// A token of digits alone is an array index, in brackets, except at the start; a key
/// that is not a bare TOML key (ASCII letters, digits, `_`, `-`) is quoted. A pointer
/// does not say whether `0` is an index or a key, so a table key made of digits reads
/// as an index. The root is the empty string.
///
/// ```
/// use curupira_diagnostics::JsonPointer;
/// use curupira_diagnostics::toml::dotted;
///
/// let at = JsonPointer::root().key("launch").key("args").index(2);
/// assert_eq!(dotted(&at), "launch.args[2]");
/// assert_eq!(dotted(&JsonPointer::root().key("extensions").key("lo:cal")), "extensions.\"lo:cal\"");
/// ```
pub fn dotted(pointer: &JsonPointer) -> String {
    let mut out = String::new();
    for token in pointer.tokens() {
        let index = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
        if index && !out.is_empty() {
            out.push('[');
            out.push_str(&token);
            out.push(']');
            continue;
        }
        if !out.is_empty() {
            out.push('.');
        }
        let bare = !token.is_empty()
            && token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if bare {
            out.push_str(&token);
        } else {
            out.push('"');
            out.push_str(&token.escape_debug().to_string());
            out.push('"');
        }
    }
    out
}

/// A TOML value whose type [`type_name`] names: a value of a parsed document
/// ([`DeValue`]) or an owned `toml::Value`.
pub trait Typed: sealed::Sealed {
    /// The `toml` crate's own name of the type: `"string"`, `"datetime"`, ….
    fn type_str(&self) -> &'static str;
}

impl Typed for DeValue<'_> {
    fn type_str(&self) -> &'static str {
        DeValue::type_str(self)
    }
}

impl Typed for ::toml::Value {
    fn type_str(&self) -> &'static str {
        ::toml::Value::type_str(self)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for ::toml::de::DeValue<'_> {}
    impl Sealed for ::toml::Value {}
}

/// The TOML type of `value` as a message names it: "a string", "an integer", "a
/// date-time", "a table" (the name of `json::type_name` for JSON values).
///
/// ```
/// use curupira_diagnostics::toml::{Value, type_name};
///
/// assert_eq!(type_name(&Value::Integer(5)), "an integer");
/// ```
pub fn type_name(value: &impl Typed) -> &'static str {
    match value.type_str() {
        "string" => "a string",
        "integer" => "an integer",
        "float" => "a float",
        "boolean" => "a boolean",
        "datetime" => "a date-time",
        "array" => "an array",
        "table" => "a table",
        _ => "a value",
    }
}

/// A warning (`code`) at the key of each of `keys` — the keys of the table at `at`, in
/// any order — that is not in `known`: the key is ignored. The message suggests the
/// closest known key ([`did_you_mean`]) or, when none is close, lists them all.
///
/// A format whose keys mean something else in some places (a key of the other launch
/// type) reports those itself and leaves them out of `keys`.
///
/// ```
/// use curupira_diagnostics::{Collector, JsonPointer};
/// use curupira_diagnostics::toml::{parse, unknown_keys};
///
/// let text = "[launch]\ntype = \"npx\"\npakage = \"x\"\n";
/// let document = parse(text, "ext.toml", "demo/syntax").unwrap();
/// let launch = document.table.get_ref().get("launch").unwrap().get_ref().as_table().unwrap();
/// let mut out = Collector::new("ext.toml", text, document.source_map.clone());
/// let at = JsonPointer::root().key("launch");
/// let keys = launch.keys().map(|key| key.get_ref().as_ref());
/// unknown_keys(&mut out, "demo/unknown-key", keys, &at, &["type", "package"]);
/// let warnings = out.finish();
/// assert_eq!(warnings[0].message, "unknown key `pakage` in `launch`; did you mean `package`?");
/// assert_eq!((warnings[0].line(), warnings[0].column()), (Some(3), Some(1)));
/// ```
pub fn unknown_keys<'k>(
    out: &mut Collector<'_>,
    code: &'static str,
    keys: impl IntoIterator<Item = &'k str>,
    at: &JsonPointer,
    known: &[&str],
) {
    let place = if at.is_root() {
        "at the top level".to_owned()
    } else {
        format!("in `{}`", dotted(at))
    };
    for key in keys {
        if known.contains(&key) {
            continue;
        }
        let message = match did_you_mean(key, known.iter().copied()) {
            Some(suggestion) => format!(
                "unknown key `{}` {place}; did you mean `{suggestion}`?",
                key.escape_debug()
            ),
            None => format!(
                "unknown key `{}` {place} is ignored; known keys are {}",
                key.escape_debug(),
                all_of(known)
            ),
        };
        out.push(Severity::Warning, code, &at.key(key), Anchor::Key, message);
    }
}

fn one_line(message: &str) -> String {
    let joined = message.split_whitespace().collect::<Vec<_>>().join(" ");
    joined.trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_value_and_element_is_mapped() {
        let text = "a = 1\nlist = [\"x\", { y = 2 }]\nb.c = true\n[t]\nk = 'v'\n[[arr]]\nq = 1\n";
        let document = parse(text, "f.toml", "t/syntax").unwrap();
        let map = &document.source_map;
        let slice = |p: &str| {
            let spans = map.get(&JsonPointer::parse(p).unwrap()).unwrap();
            &text[spans.value.clone()]
        };
        assert_eq!(slice("/a"), "1");
        assert_eq!(slice("/list/0"), "\"x\"");
        assert_eq!(slice("/list/1/y"), "2");
        assert_eq!(slice("/b/c"), "true");
        assert_eq!(slice("/t"), "[t]");
        assert_eq!(slice("/t/k"), "'v'");
        assert_eq!(slice("/arr/0"), "[[arr]]");
        assert_eq!(slice("/arr/0/q"), "1");
        let key = map
            .get(&JsonPointer::parse("/t/k").unwrap())
            .unwrap()
            .key
            .clone()
            .unwrap();
        assert_eq!(&text[key], "k");
        assert_eq!(map.len(), 13);
    }

    #[test]
    fn every_syntax_error_is_reported_once_with_its_place() {
        let errors = parse("name = \"a\"\nname = \"b\"\n[x\n", "f.toml", "t/syntax").unwrap_err();
        let found: Vec<_> = errors
            .iter()
            .map(|d| (d.line(), d.column(), d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (Some(2), Some(1), "invalid TOML: duplicate key"),
                (
                    Some(3),
                    Some(3),
                    "invalid TOML: unclosed table, expected `]`"
                ),
            ]
        );
        assert!(
            errors
                .iter()
                .all(|d| d.code == "t/syntax" && d.file == "f.toml")
        );
    }

    fn places(text: &str) -> Vec<(Option<u32>, Option<u32>, String)> {
        parse(text, "f.toml", "t/syntax")
            .unwrap_err()
            .into_iter()
            .map(|d| (d.line(), d.column(), d.message))
            .collect()
    }

    #[test]
    fn an_unclosed_array_is_reported_once_where_it_opens() {
        // The quick start's config with the `]` of `command` left out: the parser
        // reads every later line as array elements (45 errors, none on line 2).
        let text = "[settings.agent]\ncommand = [\"sh\", \"agent.sh\"\n\n[settings.polling]\n\
                    batch_size = 10\n\n[extensions.local]\nbuiltin = \"local-queue\"\n\n\
                    [automations.triage]\ntrigger = \"jsonl\"\narguments = { path = \"t\" }\n";
        assert_eq!(
            places(text),
            [(
                Some(2),
                Some(11),
                "invalid TOML: unclosed array: this `[` has no matching `]` before the end \
                 of the file"
                    .to_owned()
            )]
        );
        // A multi-line array, and one that ends the file.
        let lines = "args = [\n  \"a\",\n  \"b\"\nname = \"x\"\n";
        assert_eq!(places(lines).len(), 1);
        assert_eq!(places(lines)[0].0, Some(1));
        assert_eq!(
            places("a = [1, 2")[0..1],
            [(Some(1), Some(5), places("a = [1, 2")[0].2.clone())]
        );
        assert_eq!(places("a = [1, 2").len(), 1);
    }

    #[test]
    fn an_unclosed_inline_table_is_reported_once_where_it_opens() {
        let found = places("x = 1\nt = { a = 1,\nb = 2\n[next]\nc = 3\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].0, found[0].1), (Some(2), Some(5)));
        assert!(
            found[0]
                .2
                .contains("unclosed inline table: this `{` has no matching `}`")
        );
    }

    #[test]
    fn errors_before_an_unclosed_bracket_stay_and_closed_arrays_are_not_blamed() {
        let found = places("a = 1.2.3\nb = [1,\nc = 2\n");
        let lines: Vec<_> = found.iter().map(|f| f.0).collect();
        assert_eq!(lines, [Some(1), Some(2)], "{found:?}");
        assert!(found[1].2.contains("unclosed array"));
        // A missing comma inside an array that is closed is reported where it is.
        let found = places("a = [\"x\" \"y\"]\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].0, found[0].1), (Some(1), Some(10)));
        assert!(found[0].2.contains("missing comma"), "{found:?}");
    }

    #[test]
    fn dotted_reads_like_toml() {
        let at = |p: &str| dotted(&JsonPointer::parse(p).unwrap());
        assert_eq!(at(""), "");
        assert_eq!(
            at("/settings/timeouts/request"),
            "settings.timeouts.request"
        );
        assert_eq!(at("/launch/args/2"), "launch.args[2]");
        assert_eq!(at("/arr/0/q/1"), "arr[0].q[1]");
        assert_eq!(at("/0/x"), "0.x", "a leading token is a key");
        assert_eq!(at("/a b"), "\"a b\"");
        assert_eq!(at("/extensions/lo:cal/path"), "extensions.\"lo:cal\".path");
        assert_eq!(at("/a/"), "a.\"\"", "an empty key is quoted, not an index");
        assert_eq!(at("/a/x\"y"), "a.\"x\\\"y\"");
        assert_eq!(at("/a~1b/c~0d"), "\"a/b\".\"c~d\"");
    }

    #[test]
    fn type_names_cover_both_value_kinds() {
        let text = "s = 'x'\ni = 1\nf = 1.5\nb = true\nd = 1979-05-27\na = []\nt = {}\n";
        let document = parse(text, "f.toml", "t/syntax").unwrap();
        let owned: ::toml::Table = ::toml::from_str(text).unwrap();
        let expected = [
            ("s", "a string"),
            ("i", "an integer"),
            ("f", "a float"),
            ("b", "a boolean"),
            ("d", "a date-time"),
            ("a", "an array"),
            ("t", "a table"),
        ];
        for (key, name) in expected {
            let spanned = document.table.get_ref().get(key).unwrap();
            assert_eq!(type_name(spanned.get_ref()), name, "{key}");
            assert_eq!(type_name(&owned[key]), name, "{key}");
        }
    }

    #[test]
    fn unknown_keys_suggest_or_list() {
        let text = "nmae = 1\ncolour = 2\nname = 3\n\"a\\tb\" = 4\n[t]\nx = 5\n";
        let document = parse(text, "f.toml", "t/syntax").unwrap();
        let root = document.table.get_ref();
        let mut out = Collector::new("f.toml", text, document.source_map.clone());
        let keys = root.keys().map(|key| key.get_ref().as_ref());
        unknown_keys(
            &mut out,
            "t/unknown-key",
            keys,
            &JsonPointer::root(),
            &["name", "t"],
        );
        let table = root.get("t").unwrap().get_ref().as_table().unwrap();
        let keys = table.keys().map(|key| key.get_ref().as_ref());
        let at = JsonPointer::root().key("t");
        unknown_keys(&mut out, "t/unknown-key", keys, &at, &["yes"]);
        let found: Vec<_> = out
            .finish()
            .into_iter()
            .map(|d| {
                assert_eq!(
                    (d.severity, d.code.as_ref()),
                    (Severity::Warning, "t/unknown-key")
                );
                (d.path.to_string(), d.line(), d.column(), d.message)
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    "/nmae".to_owned(),
                    Some(1),
                    Some(1),
                    "unknown key `nmae` at the top level; did you mean `name`?".to_owned()
                ),
                (
                    "/colour".to_owned(),
                    Some(2),
                    Some(1),
                    "unknown key `colour` at the top level is ignored; known keys are `name` and `t`"
                        .to_owned()
                ),
                (
                    "/a\tb".to_owned(),
                    Some(4),
                    Some(1),
                    "unknown key `a\\tb` at the top level is ignored; known keys are `name` and `t`"
                        .to_owned()
                ),
                (
                    "/t/x".to_owned(),
                    Some(6),
                    Some(1),
                    "unknown key `x` in `t` is ignored; known keys are `yes`".to_owned()
                ),
            ]
        );
    }
}
