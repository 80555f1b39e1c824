//! The diagnostic itself: what is wrong, where, and how bad.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::JsonPointer;

/// How bad a problem is. Errors make the checked thing unusable (exit code 1); warnings
/// do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The input is invalid.
    Error,
    /// The input is usable but probably not what its author meant.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`, as in the JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A place in a text file, both numbers 1-based.
///
/// `column` counts Unicode scalar values (Rust `char`s) from the start of the line, so
/// `é` and `😀` each count as one column and a tab counts as one; it is not a byte offset
/// and not a UTF-16 offset. Lines are separated by `\n` (a `\r` before it belongs to
/// the line it ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

/// One problem found in one file.
///
/// Build it with [`Diagnostic::error`] or [`Diagnostic::warning`]; a validator working on
/// a text source usually goes through a [`Collector`](crate::Collector), which fills
/// `span` and `position` from the pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Stable kebab-case code namespaced by validator, e.g. `manifest/unknown-key`.
    pub code: Cow<'static, str>,
    /// The file as the user named it (`curupira-extension.toml`, `<stdin>`).
    pub file: String,
    /// Where the offending value is (or would be, for a missing member) in the document.
    pub path: JsonPointer,
    /// Line and column of `span.start`, when the source is a text file.
    pub position: Option<Position>,
    /// Byte range in the source text to underline when rendering; not part of the JSON
    /// output.
    pub span: Option<Range<usize>>,
    /// One sentence saying what is wrong, where, and what was expected.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic with no location in the source text yet.
    pub fn new(
        severity: Severity,
        code: impl Into<Cow<'static, str>>,
        file: impl Into<String>,
        path: JsonPointer,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity,
            code: code.into(),
            file: file.into(),
            path,
            position: None,
            span: None,
            message: message.into(),
        }
    }

    /// An error with no location in the source text yet.
    pub fn error(
        code: impl Into<Cow<'static, str>>,
        file: impl Into<String>,
        path: JsonPointer,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Error, code, file, path, message)
    }

    /// A warning with no location in the source text yet.
    pub fn warning(
        code: impl Into<Cow<'static, str>>,
        file: impl Into<String>,
        path: JsonPointer,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, code, file, path, message)
    }

    /// Sets the byte span and its line and column.
    #[must_use]
    pub fn with_location(mut self, span: Range<usize>, position: Position) -> Self {
        self.span = Some(span);
        self.position = Some(position);
        self
    }

    /// The 1-based line, when known.
    pub fn line(&self) -> Option<u32> {
        self.position.map(|p| p.line)
    }

    /// The 1-based column in characters, when known.
    pub fn column(&self) -> Option<u32> {
        self.position.map(|p| p.column)
    }

    /// Whether this is an error (not a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// One line: `file:line:col: error[code]: message (at /path)`, for logs and error chains.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(Position { line, column }) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ": {}[{}]: {}", self.severity, self.code, self.message)?;
        if !self.path.is_root() {
            write!(f, " (at {})", self.path)?;
        }
        Ok(())
    }
}

/// The SPEC section 7 shape: `severity`, `code`, `file`, `path`, `line`?, `column`?,
/// `message`, in that order; `line` and `column` are left out when unknown.
impl Serialize for Diagnostic {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = if self.position.is_some() { 7 } else { 5 };
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("severity", &self.severity)?;
        map.serialize_entry("code", &self.code)?;
        map.serialize_entry("file", &self.file)?;
        map.serialize_entry("path", &self.path)?;
        if let Some(Position { line, column }) = self.position {
            map.serialize_entry("line", &line)?;
            map.serialize_entry("column", &column)?;
        }
        map.serialize_entry("message", &self.message)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_one_line_with_location_and_pointer() {
        let diagnostic = Diagnostic::error(
            "manifest/invalid-name",
            "curupira-extension.toml",
            JsonPointer::root().key("name"),
            "name `Acme` has `A` at character 1; use lowercase letters",
        )
        .with_location(7..13, Position { line: 2, column: 8 });
        assert_eq!(
            diagnostic.to_string(),
            "curupira-extension.toml:2:8: error[manifest/invalid-name]: name `Acme` has `A` at character 1; use lowercase letters (at /name)"
        );
    }

    #[test]
    fn json_leaves_out_unknown_line_and_column() {
        let diagnostic = Diagnostic::warning(
            "manifest/unknown-key",
            "<stdin>",
            JsonPointer::root().key("a/b"),
            "unknown key",
        );
        assert_eq!(
            serde_json::to_string(&diagnostic).unwrap(),
            r#"{"severity":"warning","code":"manifest/unknown-key","file":"<stdin>","path":"/a~1b","message":"unknown key"}"#
        );
        let located = diagnostic.with_location(0..1, Position { line: 3, column: 4 });
        assert_eq!(
            serde_json::to_string(&located).unwrap(),
            r#"{"severity":"warning","code":"manifest/unknown-key","file":"<stdin>","path":"/a~1b","line":3,"column":4,"message":"unknown key"}"#
        );
    }
}
