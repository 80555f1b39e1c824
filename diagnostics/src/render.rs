//! The human rendering: rustc's layout, drawn with `anstyle` styles.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::IsTerminal;

use anstyle::{AnsiColor, Style};
use unicode_width::UnicodeWidthStr;

use crate::{Diagnostic, LineIndex, Report, Severity};

/// Whether ANSI colours should be written to `stream`.
///
/// Never when `NO_COLOR` is set to a non-empty value (<https://no-color.org>); always
/// when `CLICOLOR_FORCE` is set to a non-empty value; never when `CLICOLOR=0`;
/// otherwise only when `stream` is a terminal whose `TERM` is set and not `dumb`.
pub fn color_enabled(stream: &impl IsTerminal) -> bool {
    if anstyle_query::no_color() {
        return false;
    }
    if anstyle_query::clicolor_force() {
        return true;
    }
    if anstyle_query::clicolor() == Some(false) {
        return false;
    }
    stream.is_terminal() && anstyle_query::term_supports_color()
}

/// Display width of a tab in quoted source lines.
const TAB: &str = "    ";

pub(crate) struct Styles {
    error: Style,
    warning: Style,
    ok: Style,
    emphasis: Style,
    gutter: Style,
}

impl Styles {
    pub(crate) fn plain() -> Self {
        Self {
            error: Style::new(),
            warning: Style::new(),
            ok: Style::new(),
            emphasis: Style::new(),
            gutter: Style::new(),
        }
    }

    fn colored() -> Self {
        let color = |c: AnsiColor| Style::new().fg_color(Some(c.into())).bold();
        Self {
            error: color(AnsiColor::BrightRed),
            warning: color(AnsiColor::BrightYellow),
            ok: color(AnsiColor::BrightGreen),
            emphasis: Style::new().bold(),
            gutter: color(AnsiColor::BrightBlue),
        }
    }

    fn severity(&self, severity: Severity) -> Style {
        match severity {
            Severity::Error => self.error,
            Severity::Warning => self.warning,
        }
    }
}

pub(crate) fn human(report: &Report, color: bool) -> String {
    let styles = if color {
        Styles::colored()
    } else {
        Styles::plain()
    };
    let mut indexes: HashMap<&str, Option<LineIndex<'_>>> = HashMap::new();
    let mut out = String::new();
    for diagnostic in report.diagnostics() {
        let source = indexes
            .entry(diagnostic.file.as_str())
            .or_insert_with(|| report.source(&diagnostic.file).map(LineIndex::new));
        diagnostic_block(&mut out, diagnostic, source.as_ref(), &styles);
        out.push('\n');
    }
    out.push_str(&summary(report, &styles));
    out.push('\n');
    out
}

/// ```text
/// error[manifest/invalid-name]: message
///  --> file:2:9
///   |
/// 2 | name = "Acme"
///   |         ^
///   = path: /name
/// ```
fn diagnostic_block(
    out: &mut String,
    diagnostic: &Diagnostic,
    source: Option<&LineIndex<'_>>,
    styles: &Styles,
) {
    let level = styles.severity(diagnostic.severity);
    let gutter = styles.gutter;
    let emphasis = styles.emphasis;
    let _ = writeln!(
        out,
        "{level}{}[{}]{level:#}{emphasis}: {}{emphasis:#}",
        diagnostic.severity,
        sanitize(&diagnostic.code),
        sanitize(&diagnostic.message),
    );
    let width = diagnostic.line().map_or(1, |line| line.to_string().len());
    let pad = " ".repeat(width);
    let file = sanitize(&diagnostic.file);
    match diagnostic.position {
        Some(position) => {
            let _ = writeln!(
                out,
                "{pad}{gutter}-->{gutter:#} {file}:{}:{}",
                position.line, position.column
            );
            if let Some((text, marks)) = source.and_then(|index| quote(index, diagnostic)) {
                let _ = writeln!(out, "{pad} {gutter}|{gutter:#}");
                let text = if text.is_empty() {
                    String::new()
                } else {
                    format!(" {text}")
                };
                let _ = writeln!(
                    out,
                    "{gutter}{}{gutter:#} {gutter}|{gutter:#}{text}",
                    position.line
                );
                let _ = writeln!(out, "{pad} {gutter}|{gutter:#} {level}{marks}{level:#}");
            }
        }
        None => {
            let _ = writeln!(out, "{pad}{gutter}-->{gutter:#} {file}");
        }
    }
    if !diagnostic.path.is_root() {
        let _ = writeln!(
            out,
            "{pad} {gutter}={gutter:#} path: {}",
            sanitize(diagnostic.path.as_str())
        );
    }
}

/// The quoted line (tabs expanded, control characters replaced) and the caret line
/// under the span's part on that line. A long line is cut to a window around the span
/// start, marked with `...`.
fn quote(index: &LineIndex<'_>, diagnostic: &Diagnostic) -> Option<(String, String)> {
    let line = diagnostic.line()?;
    let span = diagnostic.span.clone()?;
    let line_text = index.line_text(line)?;
    let line_start = index.line_start(line)?;
    let start = span.start.checked_sub(line_start)?.min(line_text.len());
    if !line_text.is_char_boundary(start) {
        return None;
    }
    let mut low = start.saturating_sub(WINDOW_BEFORE);
    while !line_text.is_char_boundary(low) {
        low += 1;
    }
    let mut high = start.saturating_add(WINDOW_AFTER).min(line_text.len());
    while !line_text.is_char_boundary(high) {
        high -= 1;
    }
    let end = span
        .end
        .saturating_sub(line_start)
        .clamp(start, high.max(start));
    let (prefix, suffix) = (
        if low > 0 { "..." } else { "" },
        if high < line_text.len() { "..." } else { "" },
    );
    let before = display(line_text.get(low..start)?);
    let marked = display(line_text.get(start..end)?);
    let shown = format!("{prefix}{}{suffix}", display(line_text.get(low..high)?));
    let carets = "^".repeat(marked.width().max(1));
    let marks = format!("{}{carets}", " ".repeat(prefix.len() + before.width()));
    Some((shown.trim_end().to_owned(), marks))
}

/// Bytes of a long line quoted before the span start.
const WINDOW_BEFORE: usize = 60;
/// Bytes of a long line quoted from the span start on.
const WINDOW_AFTER: usize = 100;

fn display(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' => TAB.to_owned(),
            c if c.is_control() => '\u{FFFD}'.to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// Control characters in messages and names are shown escaped, never sent to the
/// terminal as they are.
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

pub(crate) fn summary(report: &Report, styles: &Styles) -> String {
    let (errors, warnings) = (report.errors(), report.warnings());
    let place = match report.files() {
        [] => String::new(),
        [one] => format!(" in {}", sanitize(one)),
        many => format!(" in {} files", many.len()),
    };
    let counted = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let (style, label, counts) = match (errors, warnings) {
        (0, 0) => (styles.ok, "ok", "no problems".to_owned()),
        (0, w) => (styles.warning, "warning", counted(w, "warning")),
        (e, 0) => (styles.error, "error", counted(e, "error")),
        (e, w) => (
            styles.error,
            "error",
            format!("{} and {}", counted(e, "error"), counted(w, "warning")),
        ),
    };
    let emphasis = styles.emphasis;
    format!("{style}{label}{style:#}{emphasis}: {counts}{place}{emphasis:#}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JsonPointer, Position};

    fn report() -> Report {
        let text = "a = 1\n\tname = \"Ac\u{e9}me\"\n";
        let mut report = Report::new();
        report.add_source("ext.toml", text);
        report.push(
            Diagnostic::error(
                "demo/name",
                "ext.toml",
                JsonPointer::root().key("name"),
                "name `Acéme` has an uppercase `A`",
            )
            // The `A` inside the quotes: byte 15, column 10 after the tab.
            .with_location(
                15..16,
                Position {
                    line: 2,
                    column: 10,
                },
            ),
        );
        report.push(Diagnostic::warning(
            "demo/elsewhere",
            "other.json",
            JsonPointer::root().key("x"),
            "no text \u{1b}[31m to quote",
        ));
        report
    }

    #[test]
    fn plain_rendering_quotes_the_line_and_marks_the_span() {
        let expected = "\
error[demo/name]: name `Acéme` has an uppercase `A`
 --> ext.toml:2:10
  |
2 |     name = \"Acéme\"
  |             ^
  = path: /name

warning[demo/elsewhere]: no text \\u{1b}[31m to quote
 --> other.json
  = path: /x

error: 1 error and 1 warning in ext.toml
";
        assert_eq!(report().render_human(false), expected);
    }

    #[test]
    fn colored_rendering_adds_styles_around_the_same_text() {
        let colored = report().render_human(true);
        assert!(colored.contains("\u{1b}["));
        let stripped = strip_ansi(&colored);
        assert_eq!(stripped, report().render_human(false));
    }

    #[test]
    fn carets_cover_wide_characters_and_clip_to_the_line() {
        let text = "k = \"日本\"\nnext\n";
        let mut report = Report::new();
        report.add_source("f", text);
        report.push(
            Diagnostic::error("d/x", "f", JsonPointer::root().key("k"), "m")
                .with_location(4..text.len(), Position { line: 1, column: 5 }),
        );
        let rendered = report.render_human(false);
        assert!(
            rendered.contains("1 | k = \"日本\"\n  |     ^^^^^^\n"),
            "{rendered}"
        );
    }

    #[test]
    fn long_lines_are_cut_around_the_span() {
        let text = format!("k = [{}\"X\"{}]", "1, ".repeat(100), ", 2".repeat(100));
        let start = text.find('"').unwrap();
        let mut report = Report::new();
        report.add_source("f", text.as_str());
        report.push(
            Diagnostic::error("d/x", "f", JsonPointer::root().key("k"), "m").with_location(
                start..start + 3,
                Position {
                    line: 1,
                    column: 306,
                },
            ),
        );
        let rendered = report.render_human(false);
        let lines: Vec<&str> = rendered.lines().collect();
        assert_eq!(lines[3].len(), "1 | ".len() + 3 + 160 + 3, "{rendered}");
        assert!(
            lines[3].starts_with("1 | ...") && lines[3].ends_with("..."),
            "{rendered}"
        );
        assert_eq!(lines[4], format!("  | {}^^^", " ".repeat(63)));
        assert_eq!(&lines[3][4 + 63..4 + 66], "\"X\"");
    }

    #[test]
    fn summary_lines() {
        let mut report = Report::new();
        assert_eq!(report.summary(), "ok: no problems");
        report.add_file("a");
        report.push(Diagnostic::warning("d/w", "a", JsonPointer::root(), "w"));
        assert_eq!(report.summary(), "warning: 1 warning in a");
        report.add_file("b");
        report.push(Diagnostic::error("d/e", "b", JsonPointer::root(), "e"));
        report.push(Diagnostic::error("d/e", "b", JsonPointer::root(), "e"));
        assert_eq!(report.summary(), "error: 2 errors and 1 warning in 2 files");
    }

    fn strip_ansi(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
