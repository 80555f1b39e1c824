//! The JSON Lines both files are made of: reading numbered lines, one line into an
//! item's pairs (or what is wrong with it), and an item back into a line appended to
//! the done file.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};
use std::path::Path;

use curupira_extension_sdk::Pair;
use curupira_jsonrpc::describe;
use curupira_protocol::{ItemError, check_item};
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// One line of a file, without its `\n` (and `\r`).
pub(crate) struct Line {
    pub(crate) bytes: Vec<u8>,
    /// Whether a `\n` ended it (the last line of a file may lack one).
    pub(crate) terminated: bool,
}

/// Reads lines as bytes, numbering them from 1, so that a line that is not UTF-8 can
/// be reported with its number.
pub(crate) struct Lines<R> {
    reader: R,
    number: u64,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R) -> Self {
        Lines { reader, number: 0 }
    }

    pub(crate) fn next_line(&mut self) -> io::Result<Option<(u64, Line)>> {
        let mut bytes = Vec::new();
        if self.reader.read_until(b'\n', &mut bytes)? == 0 {
            return Ok(None);
        }
        self.number += 1;
        let terminated = bytes.last() == Some(&b'\n');
        if terminated {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        if self.number == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes.drain(..3);
        }
        Ok(Some((self.number, Line { bytes, terminated })))
    }
}

/// What is wrong with a line, as the end of a sentence that starts with where it is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineProblem {
    NotUtf8,
    NotJson(String),
    NotAnObject(String),
    NotAString {
        member: String,
        found: String,
    },
    /// The members break the protocol's item rules (`pair N` is the Nth member).
    Item(ItemError),
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |name: &str| Value::from(name).to_string();
        match self {
            LineProblem::NotUtf8 => f.write_str("the line is not valid UTF-8"),
            LineProblem::NotJson(reason) => write!(f, "the line is not valid JSON: {reason}"),
            LineProblem::NotAnObject(found) => write!(
                f,
                "the line must be a JSON object of string members, found {found}"
            ),
            LineProblem::NotAString { member, found } => write!(
                f,
                "member {} must be a string, found {found} (item values are strings)",
                quoted(member)
            ),
            LineProblem::Item(error) => error.fmt(f),
        }
    }
}

/// The pairs of one line in member order; `None` for a blank line.
pub(crate) fn parse_line(line: &Line) -> Result<Option<Vec<Pair>>, LineProblem> {
    let text = std::str::from_utf8(&line.bytes).map_err(|_| LineProblem::NotUtf8)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let shape = Shape::deserialize(&mut deserializer)
        .and_then(|shape| deserializer.end().map(|()| shape))
        .map_err(|err| {
            let full = err.to_string();
            let location = format!(" at line {} column {}", err.line(), err.column());
            let reason = full.strip_suffix(&location).unwrap_or(&full);
            LineProblem::NotJson(format!("{reason} at column {}", err.column()))
        })?;
    let members = match shape {
        Shape::Object(members) => members,
        Shape::Other(found) => return Err(LineProblem::NotAnObject(found)),
    };
    let mut pairs = Vec::with_capacity(members.len());
    for (name, value) in members {
        match value {
            Value::String(value) => pairs.push(Pair::new(name, value)),
            other => {
                return Err(LineProblem::NotAString {
                    member: name,
                    found: describe(&other),
                });
            }
        }
    }
    check_item(&pairs).map_err(LineProblem::Item)?;
    Ok(Some(pairs))
}

/// A JSON value read for its shape: an object keeps its members in written order
/// (`serde_json::Map` would sort them unless the build-wide `preserve_order` feature
/// were on).
enum Shape {
    Object(Vec<(String, Value)>),
    /// Anything else, described for a message.
    Other(String),
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry::<String, Value>()? {
            members.push(member);
        }
        Ok(Shape::Object(members))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Other("an array".to_owned()))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other("a string".to_owned()))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Shape, E> {
        Ok(Shape::Other(v.to_string()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Shape, E> {
        Ok(Shape::Other(format!("the number {v}")))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Shape, E> {
        Ok(Shape::Other(format!("the number {v}")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Shape, E> {
        Ok(Shape::Other(format!("the number {v}")))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Other("null".to_owned()))
    }
}

/// The done-file line of an item: a compact JSON object of its pairs in order, with
/// its newline.
pub(crate) fn item_line(pairs: &[Pair]) -> String {
    let members: Vec<String> = pairs
        .iter()
        .map(|pair| {
            format!(
                "{}:{}",
                Value::from(pair.key.as_str()),
                Value::from(pair.value.as_str())
            )
        })
        .collect();
    format!("{{{}}}\n", members.join(","))
}

/// Appends `line` with one `write` (after a newline when the file does not end with
/// one), then syncs the data to disk.
pub(crate) fn append_line(path: &Path, line: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    let mut buffer = Vec::with_capacity(line.len() + 1);
    if file.metadata()?.len() > 0 {
        file.seek(SeekFrom::End(-1))?;
        let mut last = [0u8; 1];
        file.read_exact(&mut last)?;
        if last != *b"\n" {
            buffer.push(b'\n');
        }
    }
    buffer.extend_from_slice(line);
    // One `write` call for a regular file; `write_all` only loops on a short write
    // (a full disk), which then reports its error.
    file.write_all(&buffer)?;
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line {
        Line {
            bytes: text.as_bytes().to_vec(),
            terminated: true,
        }
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<Pair> {
        items.iter().map(|&(k, v)| Pair::new(k, v)).collect()
    }

    #[test]
    fn members_keep_their_written_order() {
        assert_eq!(
            parse_line(&line(r#" {"title":"Fix","b":"2","a":"1"} "#)).unwrap(),
            Some(pairs(&[("title", "Fix"), ("b", "2"), ("a", "1")]))
        );
        assert_eq!(parse_line(&line("{}")).unwrap(), Some(vec![]));
        assert_eq!(parse_line(&line("  \t")).unwrap(), None);
        assert_eq!(
            parse_line(&line(r#"{"k":"caf\u00e9 \"q\""}"#)).unwrap(),
            Some(pairs(&[("k", "café \"q\"")]))
        );
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let problem = |text: &str| parse_line(&line(text)).unwrap_err().to_string();
        assert_eq!(
            problem(r#"{"n":5}"#),
            "member \"n\" must be a string, found 5 (item values are strings)"
        );
        assert_eq!(
            problem(r#"{"a":"1","tags":["x"]}"#),
            "member \"tags\" must be a string, found an array (item values are strings)"
        );
        assert_eq!(
            problem(r#"["a"]"#),
            "the line must be a JSON object of string members, found an array"
        );
        assert_eq!(
            problem("\"text\""),
            "the line must be a JSON object of string members, found a string"
        );
        assert_eq!(
            problem("7"),
            "the line must be a JSON object of string members, found the number 7"
        );
        assert_eq!(
            problem(r#"{"a":"1","a":"2"}"#),
            "pair 1 repeats the key \"a\"; a key appears once per item"
        );
        assert_eq!(
            problem(r#"{"repository":"x"}"#),
            "pair 0 has the key \"repository\", which is reserved: the host provides \
             `repository` and `automation` itself"
        );
        assert_eq!(
            problem(r#"{"":"x"}"#),
            "pair 0 has an empty key; item keys are non-empty"
        );
        assert_eq!(
            problem(r#"{"a" "1"}"#),
            "the line is not valid JSON: expected `:` at column 6"
        );
        assert_eq!(
            problem(r#"{"a":"1"} x"#),
            "the line is not valid JSON: trailing characters at column 11"
        );
        let not_utf8 = Line {
            bytes: b"{\"a\":\"\xff\"}".to_vec(),
            terminated: true,
        };
        assert_eq!(parse_line(&not_utf8), Err(LineProblem::NotUtf8));
    }

    #[test]
    fn done_lines_read_back_as_the_same_item() {
        let item = pairs(&[("title", "a \"quoted\"\nline"), ("é", "ü")]);
        let text = item_line(&item);
        assert_eq!(
            text,
            "{\"title\":\"a \\\"quoted\\\"\\nline\",\"é\":\"ü\"}\n"
        );
        assert_eq!(
            parse_line(&line(text.trim_end_matches('\n'))).unwrap(),
            Some(item)
        );
    }

    #[test]
    fn lines_strip_newlines_crs_and_a_leading_bom() {
        let mut lines = Lines::new(&b"\xEF\xBB\xBF{}\r\n\n{\"a\":\"1\"}"[..]);
        let (n, first) = lines.next_line().unwrap().unwrap();
        assert_eq!(
            (n, first.bytes.as_slice(), first.terminated),
            (1, &b"{}"[..], true)
        );
        let (n, second) = lines.next_line().unwrap().unwrap();
        assert_eq!((n, second.bytes.as_slice()), (2, &b""[..]));
        let (n, third) = lines.next_line().unwrap().unwrap();
        assert_eq!((n, third.terminated), (3, false));
        assert!(lines.next_line().unwrap().is_none());
    }

    #[test]
    fn appending_never_glues_onto_a_partial_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("done.jsonl");
        std::fs::write(&path, "{\"a\":\"1\"}\n{\"half\":").unwrap();
        append_line(&path, b"{\"b\":\"2\"}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":\"1\"}\n{\"half\":\n{\"b\":\"2\"}\n"
        );
        let fresh = dir.path().join("new.jsonl");
        append_line(&fresh, b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "{}\n");
    }
}
