//! TOML sources: parse with `toml`'s spanned document and fill a [`SourceMap`] with the
//! span of every key and value.

use std::borrow::Cow;
use std::collections::HashSet;

use ::toml::Spanned;
use ::toml::de::{DeTable, DeValue};

use crate::{Collector, Diagnostic, JsonPointer, SourceMap};

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
/// ```
/// use curupira_diagnostics::toml::parse;
///
/// let errors = parse("name = \"a\"\nversion = 1.2.0\n", "ext.toml", "demo/syntax").unwrap_err();
/// assert_eq!(errors.len(), 1);
/// assert_eq!((errors[0].line(), errors[0].column()), (Some(2), Some(14)));
/// assert!(errors[0].message.starts_with("invalid TOML: "));
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
    let mut seen = HashSet::new();
    for error in &errors {
        let span = error.span();
        let message = one_line(error.message());
        if !seen.insert((span.clone(), message.clone())) {
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
    Err(collector.finish())
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
}
