//! Diagnostics as the corpus tests' `.expected` files write them.

use curupira_diagnostics::Diagnostic;

/// `SEVERITY CODE POINTER LINE:COLUMN`, one line per diagnostic (`""` for the root
/// pointer, `-` for no position): what each corpus's `.expected` files hold.
///
/// ```
/// use curupira_diagnostics::{Diagnostic, JsonPointer};
/// use curupira_test_support::diagnostics::describe;
///
/// let diagnostic = Diagnostic::error("x/broken", "x.json", JsonPointer::root(), "broken");
/// assert_eq!(describe(&diagnostic), "error x/broken \"\" -");
/// ```
pub fn describe(diagnostic: &Diagnostic) -> String {
    let position = diagnostic
        .position
        .map_or("-".to_owned(), |p| format!("{}:{}", p.line, p.column));
    let path = if diagnostic.path.is_root() {
        "\"\""
    } else {
        diagnostic.path.as_str()
    };
    format!(
        "{} {} {path} {position}",
        diagnostic.severity, diagnostic.code
    )
}
