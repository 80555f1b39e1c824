//! `--format`: how every command that reports prints it. One type for the whole host,
//! so `run`'s events ([`crate::events`]), `probe`'s steps and the checking commands'
//! diagnostics are chosen by the same flag with the same values; and the pieces the
//! human forms share (aligned tables, times, one-line text).

use unicode_width::UnicodeWidthStr;

/// The `--format` of every command that reports: readable text, or JSON for tools.
/// What each prints is that command's own (its `--format` help says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Text for people.
    Human,
    /// JSON for programs.
    Json,
}

/// A header and rows as lines, each column as wide as its widest cell on a terminal
/// (`unicode-width`), two spaces apart, column `right` right-aligned, the last one
/// not padded.
///
/// ```
/// let text = curupira_host::format::aligned(&["A", "NUMBER"], &[["xyz".into(), "7".into()]], 1);
/// assert_eq!(text, "A    NUMBER\nxyz       7\n");
/// ```
pub fn aligned<const N: usize>(header: &[&str; N], cells: &[[String; N]], right: usize) -> String {
    let mut widths = header.map(UnicodeWidthStr::width);
    for line in cells {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.width());
        }
    }
    let mut out = String::new();
    let header = header.map(str::to_owned);
    for line in std::iter::once(&header).chain(cells) {
        let mut text = String::new();
        for (column, cell) in line.iter().enumerate() {
            let pad = " ".repeat(widths[column].saturating_sub(cell.width()));
            if column > 0 {
                text.push_str("  ");
            }
            if column == right {
                text.push_str(&pad);
                text.push_str(cell);
            } else {
                text.push_str(cell);
                if column + 1 < line.len() {
                    text.push_str(&pad);
                }
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

/// `2025-01-02T03:04:05.678Z` as `2025-01-02 03:04:05`; anything else as it is.
pub fn time_text(time: &str) -> String {
    match (time.get(..10), time.get(10..11), time.get(11..19)) {
        (Some(day), Some("T"), Some(clock)) => format!("{day} {clock}"),
        _ => time.to_owned(),
    }
}

/// Text on one line: line breaks and tabs as spaces.
pub fn one_line(text: &str) -> String {
    text.replace(['\n', '\r', '\t'], " ")
}
