//! All diagnostics of one check, with the texts needed to show them, and the counts.

use std::collections::{BTreeMap, HashSet};

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::{Diagnostic, Severity, render};

/// The diagnostics of one check (one or more files), the source texts to quote from,
/// and the counts by severity.
///
/// ```
/// use curupira_diagnostics::{Diagnostic, JsonPointer, Report};
///
/// let mut report = Report::new();
/// report.add_source("ext.toml", "kind = \"action\"\n");
/// report.push(Diagnostic::error("demo/kind", "ext.toml", JsonPointer::root().key("kind"), "bad kind"));
/// assert_eq!((report.errors(), report.warnings()), (1, 0));
/// assert_eq!(
///     report.render_json(),
///     r#"{"diagnostics":[{"severity":"error","code":"demo/kind","file":"ext.toml","path":"/kind","message":"bad kind"}],"errors":1,"warnings":0}"#
/// );
/// ```
#[derive(Debug, Clone, Default)]
pub struct Report {
    diagnostics: Vec<Diagnostic>,
    /// Checked files in the order they were added, with their text when there is one.
    files: Vec<String>,
    /// The same names, to add a file in constant time (a registry check names tens of
    /// thousands).
    known_files: HashSet<String>,
    sources: BTreeMap<String, String>,
}

impl Report {
    /// An empty report.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `file` was checked and keeps its text to quote lines from.
    pub fn add_source(&mut self, file: impl Into<String>, text: impl Into<String>) {
        let file = file.into();
        self.add_file(file.clone());
        self.sources.insert(file, text.into());
    }

    /// Records that `file` was checked, with no text to quote.
    pub fn add_file(&mut self, file: impl Into<String>) {
        let file = file.into();
        if !self.known_files.contains(&file) {
            self.known_files.insert(file.clone());
            self.files.push(file);
        }
    }

    /// Adds one diagnostic.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Adds diagnostics in order.
    pub fn extend(&mut self, diagnostics: impl IntoIterator<Item = Diagnostic>) {
        self.diagnostics.extend(diagnostics);
    }

    /// Moves everything from `other` into this report, after what is already there.
    pub fn append(&mut self, other: Report) {
        for file in other.files {
            self.add_file(file);
        }
        self.sources.extend(other.sources);
        self.diagnostics.extend(other.diagnostics);
    }

    /// The diagnostics, in the order they were added.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Takes the diagnostics out.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics
    }

    /// The checked files, in the order they were added.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The text kept for `file`, if any.
    pub fn source(&self, file: &str) -> Option<&str> {
        self.sources.get(file).map(String::as_str)
    }

    /// Number of errors.
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    /// Number of warnings.
    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    /// Whether there is at least one error.
    pub fn has_errors(&self) -> bool {
        self.errors() > 0
    }

    /// The exit code SPEC section 7 gives a checking command: 1 with errors, else 0
    /// (warnings allowed).
    pub fn exit_code(&self) -> u8 {
        u8::from(self.has_errors())
    }

    /// The report as SPEC section 7's JSON object, on one line (no trailing newline):
    /// `{"diagnostics": [...], "errors": n, "warnings": n}`.
    pub fn render_json(&self) -> String {
        // Serializing strings and integers into a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The report for people, like rustc: each diagnostic with `--> file:line:col`, the
    /// quoted line and a caret under the offending text, then a summary line. With
    /// `color`, ANSI styles are added (decide with [`color_enabled`](crate::color_enabled)).
    pub fn render_human(&self, color: bool) -> String {
        render::human(self, color)
    }

    /// The last line of [`Report::render_human`], without styles, e.g.
    /// `error: 2 errors and 1 warning in ext.toml`.
    pub fn summary(&self) -> String {
        render::summary(self, &render::Styles::plain())
    }

    fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("diagnostics", &self.diagnostics)?;
        map.serialize_entry("errors", &self.errors())?;
        map.serialize_entry("warnings", &self.warnings())?;
        map.end()
    }
}

impl FromIterator<Diagnostic> for Report {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Self {
        let mut report = Report::new();
        report.extend(iter);
        report
    }
}

/// The UTF-8 text of a file without its byte-order mark, or a report holding the one
/// error (`code`) at the first byte that is not UTF-8, with the text (bad bytes shown
/// as U+FFFD) to quote from.
///
/// ```
/// use curupira_diagnostics::decode_utf8;
///
/// assert_eq!(decode_utf8(b"\xef\xbb\xbfname = 1", "f.toml", "demo/encoding").unwrap(), "name = 1");
/// let report = decode_utf8(b"a\nb\xff", "f.toml", "demo/encoding").unwrap_err();
/// let error = &report.diagnostics()[0];
/// assert_eq!((error.line(), error.column()), (Some(2), Some(2)));
/// assert!(error.message.starts_with("the file is not UTF-8: byte 0xFF at line 2, column 2"));
/// ```
pub fn decode_utf8<'b>(
    bytes: &'b [u8],
    file: &str,
    code: impl Into<std::borrow::Cow<'static, str>>,
) -> Result<&'b str, Report> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.strip_prefix('\u{feff}').unwrap_or(text)),
        Err(error) => {
            let offset = error.valid_up_to();
            let lossy = String::from_utf8_lossy(bytes).into_owned();
            // Up to `offset` the lossy text is the same bytes; the bad sequence became
            // U+FFFD (3 bytes).
            let position = crate::LineIndex::new(&lossy).position(offset);
            let bad = bytes.get(offset).copied().unwrap_or_default();
            let diagnostic = Diagnostic::error(
                code,
                file,
                crate::JsonPointer::root(),
                format!(
                    "the file is not UTF-8: byte 0x{bad:02X} at line {}, column {} does not start a valid UTF-8 character; save the file as UTF-8",
                    position.line, position.column
                ),
            )
            .with_location(offset..offset + 3, position);
            let mut report = Report::new();
            report.add_source(file, lossy);
            report.push(diagnostic);
            Err(report)
        }
    }
}
