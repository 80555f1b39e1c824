//! The JSON Lines both files are made of: reading numbered lines, one line into an
//! item's pairs (or what is wrong with it), and an item back into a line appended to
//! the done file.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};

use curupira_extension_sdk::Pair;
use curupira_jsonrpc::describe;
use curupira_protocol::{ItemError, check_item};
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The SHA-256 of a line's bytes before its newline: how a rejected line is
/// remembered.
pub(crate) type LineHash = [u8; 32];

/// One complete or final line of a file.
pub(crate) struct Line {
    /// Its 1-based number in the file.
    pub(crate) number: u64,
    /// The bytes before its `\n`, as written; empty when the line is [`oversized`].
    ///
    /// [`oversized`]: Line::oversized
    raw: Vec<u8>,
    /// Whether a `\n` ended it (the last line of a file may lack one).
    pub(crate) terminated: bool,
    /// How many bytes of the file it takes, its `\n` included.
    pub(crate) consumed: u64,
    /// Set when the line is longer than the reader's cap: its length before the `\n`
    /// and its hash, taken while its bytes were skipped.
    pub(crate) oversized: Option<(u64, LineHash)>,
}

impl Line {
    /// The line's text bytes: without a `\r` before its `\n`, and without the UTF-8
    /// byte order mark that may open a file.
    pub(crate) fn content(&self) -> &[u8] {
        let mut bytes = self.raw.as_slice();
        if self.terminated
            && let Some(rest) = bytes.strip_suffix(b"\r")
        {
            bytes = rest;
        }
        if self.number == 1
            && let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF")
        {
            bytes = rest;
        }
        bytes
    }

    /// The SHA-256 of the bytes before its newline.
    pub(crate) fn hash(&self) -> LineHash {
        match self.oversized {
            Some((_, hash)) => hash,
            None => Sha256::digest(&self.raw).into(),
        }
    }
}

/// Reads lines as bytes, numbering them, so that a line that is not UTF-8 can be
/// reported with its number. A line longer than the cap is skipped as it is read
/// (hashed, not kept), so no line costs more memory than the cap.
pub(crate) struct Lines<R> {
    reader: R,
    number: u64,
    cap: usize,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `reader` numbered from `first`, at most `cap` bytes kept per line.
    pub(crate) fn new(reader: R, first: u64, cap: usize) -> Self {
        Lines {
            reader,
            number: first.saturating_sub(1),
            cap,
        }
    }

    pub(crate) fn next_line(&mut self) -> io::Result<Option<Line>> {
        let mut raw = Vec::new();
        let mut hasher: Option<Sha256> = None;
        let mut consumed = 0u64;
        let mut terminated = false;
        loop {
            let buffer = match self.reader.fill_buf() {
                Ok(buffer) => buffer,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if buffer.is_empty() {
                break;
            }
            let (piece, used) = match memchr::memchr(b'\n', buffer) {
                Some(at) => (&buffer[..at], at + 1),
                None => (buffer, buffer.len()),
            };
            match hasher.as_mut() {
                Some(hasher) => hasher.update(piece),
                None if raw.len() + piece.len() > self.cap => {
                    let mut started = Sha256::new();
                    started.update(&raw);
                    started.update(piece);
                    hasher = Some(started);
                    raw = Vec::new();
                }
                None => raw.extend_from_slice(piece),
            }
            terminated = used > piece.len();
            consumed += used as u64;
            self.reader.consume(used);
            if terminated {
                break;
            }
        }
        if consumed == 0 {
            return Ok(None);
        }
        self.number += 1;
        let newline = u64::from(terminated);
        let oversized = hasher.map(|hasher| (consumed - newline, hasher.finalize().into()));
        Ok(Some(Line {
            number: self.number,
            raw,
            terminated,
            consumed,
            oversized,
        }))
    }
}

/// A hash as 64 lowercase hex digits.
pub(crate) fn hex(hash: &LineHash) -> String {
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The hash that 64 hex digits at the start of `text` spell, if they do.
pub(crate) fn parse_hex(text: &[u8]) -> Option<LineHash> {
    let digits = text.get(..64)?;
    let mut hash = [0u8; 32];
    for (byte, pair) in hash.iter_mut().zip(digits.chunks(2)) {
        let [high, low] = *pair else { return None };
        *byte = hex_digit(high)? << 4 | hex_digit(low)?;
    }
    Some(hash)
}

fn hex_digit(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|value| u8::try_from(value).ok())
}

/// What is wrong with a line, as the end of a sentence that starts with where it is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineProblem {
    /// Longer than the most a line may be (its length, the limit).
    TooLong(u64, usize),
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
            LineProblem::TooLong(length, limit) => write!(
                f,
                "the line is {length} bytes long, more than the {limit} bytes an item may take \
                 (the largest frame)"
            ),
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
pub(crate) fn parse_line(line: &Line, cap: usize) -> Result<Option<Vec<Pair>>, LineProblem> {
    if let Some((length, _)) = line.oversized {
        return Err(LineProblem::TooLong(length, cap));
    }
    let text = std::str::from_utf8(line.content()).map_err(|_| LineProblem::NotUtf8)?;
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

/// Appends `line` to `file` (opened for appending) with one `write`, after a newline
/// when the file does not end with one. Not synced to disk (see the crate docs).
pub(crate) fn append_line(file: &File, line: &[u8]) -> io::Result<()> {
    let len = file.metadata()?.len();
    append_line_after(file, line, len, false)
}

/// [`append_line`] for a file of `len` bytes, known to end with a newline when
/// `ends_with_newline` (its last byte is then not read).
pub(crate) fn append_line_after(
    mut file: &File,
    line: &[u8],
    len: u64,
    ends_with_newline: bool,
) -> io::Result<()> {
    let mut buffer = Vec::with_capacity(line.len() + 1);
    if len > 0 && !ends_with_newline {
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
    file.write_all(&buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: usize = 1024;

    fn line(text: &str) -> Line {
        Line {
            number: 2,
            raw: text.as_bytes().to_vec(),
            terminated: true,
            consumed: text.len() as u64 + 1,
            oversized: None,
        }
    }

    fn parse(line: &Line) -> Result<Option<Vec<Pair>>, LineProblem> {
        parse_line(line, CAP)
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<Pair> {
        items.iter().map(|&(k, v)| Pair::new(k, v)).collect()
    }

    #[test]
    fn members_keep_their_written_order() {
        assert_eq!(
            parse(&line(r#" {"title":"Fix","b":"2","a":"1"} "#)).unwrap(),
            Some(pairs(&[("title", "Fix"), ("b", "2"), ("a", "1")]))
        );
        assert_eq!(parse(&line("{}")).unwrap(), Some(vec![]));
        assert_eq!(parse(&line("  \t")).unwrap(), None);
        assert_eq!(
            parse(&line(r#"{"k":"caf\u00e9 \"q\""}"#)).unwrap(),
            Some(pairs(&[("k", "café \"q\"")]))
        );
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let problem = |text: &str| parse(&line(text)).unwrap_err().to_string();
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
            raw: b"{\"a\":\"\xff\"}".to_vec(),
            ..line("")
        };
        assert_eq!(parse(&not_utf8), Err(LineProblem::NotUtf8));
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
            parse(&line(text.trim_end_matches('\n'))).unwrap(),
            Some(item)
        );
    }

    #[test]
    fn lines_strip_newlines_crs_and_a_leading_bom() {
        let mut lines = Lines::new(&b"\xEF\xBB\xBF{}\r\n\n{\"a\":\"1\"}"[..], 1, CAP);
        let first = lines.next_line().unwrap().unwrap();
        assert_eq!(
            (
                first.number,
                first.content(),
                first.terminated,
                first.consumed
            ),
            (1, &b"{}"[..], true, 7)
        );
        assert_eq!(
            first.hash(),
            <[u8; 32]>::from(Sha256::digest(b"\xEF\xBB\xBF{}\r"))
        );
        let second = lines.next_line().unwrap().unwrap();
        assert_eq!((second.number, second.content()), (2, &b""[..]));
        let third = lines.next_line().unwrap().unwrap();
        assert_eq!(
            (third.number, third.terminated, third.consumed),
            (3, false, 9)
        );
        assert!(lines.next_line().unwrap().is_none());
        // Numbered from where a read starts: a BOM counts only on line 1.
        let mut later = Lines::new(&b"\xEF\xBB\xBF{}\n"[..], 7, CAP);
        let line = later.next_line().unwrap().unwrap();
        assert_eq!((line.number, line.content()), (7, &b"\xEF\xBB\xBF{}"[..]));
    }

    #[test]
    fn a_line_over_the_cap_is_hashed_not_kept() {
        let long = format!("{{\"k\":\"{}\"}}", "x".repeat(5000));
        let text = format!("{long}\n{{\"a\":\"1\"}}\n");
        // Reads in small pieces, as a file larger than the buffer arrives.
        let reader = std::io::BufReader::with_capacity(64, text.as_bytes());
        let mut lines = Lines::new(reader, 1, CAP);
        let first = lines.next_line().unwrap().unwrap();
        assert_eq!(first.raw, b"", "nothing kept");
        assert_eq!(first.consumed, long.len() as u64 + 1);
        assert_eq!(first.oversized.unwrap().0, long.len() as u64);
        assert_eq!(
            first.hash(),
            <[u8; 32]>::from(Sha256::digest(long.as_bytes()))
        );
        assert_eq!(
            parse(&first).unwrap_err().to_string(),
            format!(
                "the line is {} bytes long, more than the {CAP} bytes an item may take (the \
                 largest frame)",
                long.len()
            )
        );
        let second = lines.next_line().unwrap().unwrap();
        assert_eq!(parse(&second).unwrap(), Some(pairs(&[("a", "1")])));
    }

    #[test]
    fn hashes_read_back_from_hex() {
        let hash: LineHash = Sha256::digest(b"line").into();
        let text = format!("{} `q` line 2: why", hex(&hash));
        assert_eq!(parse_hex(text.as_bytes()), Some(hash));
        assert_eq!(parse_hex(text.to_uppercase().as_bytes()), Some(hash));
        assert_eq!(parse_hex(&text.as_bytes()[..63]), None);
        assert_eq!(parse_hex(format!("+{}", &text[1..]).as_bytes()), None);
    }

    fn open(path: &std::path::Path) -> File {
        std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .unwrap()
    }

    #[test]
    fn appending_never_glues_onto_a_partial_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("done.jsonl");
        std::fs::write(&path, "{\"a\":\"1\"}\n{\"half\":").unwrap();
        append_line(&open(&path), b"{\"b\":\"2\"}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":\"1\"}\n{\"half\":\n{\"b\":\"2\"}\n"
        );
        let fresh = dir.path().join("new.jsonl");
        append_line(&open(&fresh), b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "{}\n");
    }
}
