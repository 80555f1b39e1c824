//! Stable diagnostic codes as data, so that each validator's table of codes, its
//! documentation and the test keeping the two in step are written once.

use crate::Severity;

/// A diagnostic code with its severity and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    /// The code, e.g. `manifest/unknown-key`.
    pub code: &'static str,
    /// Whether it is an error or a warning.
    pub severity: Severity,
    /// One line for the documentation.
    pub meaning: &'static str,
}

impl Code {
    /// The row of the repository's
    /// [`docs/DIAGNOSTICS.md`](https://example.invalid/curupira/blob/main/docs/DIAGNOSTICS.md) that documents
    /// this code: ``| `code` | severity | meaning |``.
    ///
    /// ```
    /// use curupira_diagnostics::{Code, Severity};
    ///
    /// let code = Code { code: "demo/x", severity: Severity::Warning, meaning: "An x." };
    /// assert_eq!(code.doc_row(), "| `demo/x` | warning | An x. |");
    /// ```
    pub fn doc_row(&self) -> String {
        format!("| `{}` | {} | {} |", self.code, self.severity, self.meaning)
    }
}

/// The rows of a Markdown code table (as in the repository's
/// [`docs/DIAGNOSTICS.md`](https://example.invalid/curupira/blob/main/docs/DIAGNOSTICS.md)) whose code starts
/// with `namespace` (`"spirit/"`), in document order: what a validator's test compares
/// with its `ALL` mapped through [`Code::doc_row`].
///
/// ```
/// use curupira_diagnostics::doc_table_rows;
///
/// let doc = "| code | severity | meaning |\n|---|---|---|\n| `demo/x` | error | An x. |\n";
/// assert_eq!(doc_table_rows(doc, "demo/"), ["| `demo/x` | error | An x. |"]);
/// ```
pub fn doc_table_rows<'d>(doc: &'d str, namespace: &str) -> Vec<&'d str> {
    let start = format!("| `{namespace}");
    doc.lines()
        .filter(|line| line.starts_with(&start))
        .collect()
}

/// Declares a validator's codes: one `pub const NAME: &str` per code (with its doc
/// comment) and `pub const ALL: &[Code]`, every code in documentation order.
///
/// ```
/// mod codes {
///     curupira_diagnostics::codes! {
///         /// The file is not valid.
///         SYNTAX = "demo/syntax", Error, "The file is not valid.";
///         /// A key nobody knows.
///         UNKNOWN_KEY = "demo/unknown-key", Warning, "A key nobody knows.";
///     }
/// }
/// assert_eq!(codes::SYNTAX, "demo/syntax");
/// assert_eq!(codes::ALL[1].doc_row(), "| `demo/unknown-key` | warning | A key nobody knows. |");
/// ```
#[macro_export]
macro_rules! codes {
    ($( $(#[$doc:meta])* $name:ident = $code:literal, $severity:ident, $meaning:literal; )*) => {
        $(
            $(#[$doc])*
            pub const $name: &str = $code;
        )*
        /// Every code this crate emits, in documentation order.
        pub const ALL: &[$crate::Code] = &[
            $( $crate::Code { code: $code, severity: $crate::Severity::$severity, meaning: $meaning }, )*
        ];
    };
}
