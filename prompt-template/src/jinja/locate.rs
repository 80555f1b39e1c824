//! Finding where a prompt first uses a variable, for the location of an unknown field.
//!
//! MiniJinja tells which variables a template leaves undeclared, not where they are.
//! This is a small scan of the default Jinja syntax that is good enough to point at
//! one: it looks inside `{{ … }}` and `{% … %}` only (skipping `{# … #}` comments,
//! `{% raw %}` blocks and string literals), and takes the first identifier with that
//! name that is not an attribute (`x.name`) or a filter (`| name`). It only ever
//! affects the location a diagnostic points at, never a verdict.

use memchr::memmem;

/// The byte offset of the first use of variable `name` in `source`, if the scan finds
/// one.
pub(super) fn first_use(source: &str, name: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'{', &bytes[at..]) {
        let open = at + found;
        match bytes.get(open + 1) {
            Some(b'#') => at = after(bytes, open + 2, b"#}")?,
            Some(b'{') => match scan_code(bytes, open + 2, b"}}", name) {
                Scan::Found(offset) => return Some(offset),
                Scan::End(end) => at = end,
            },
            Some(b'%') if is_raw(bytes, open + 2) => {
                let endraw = open + 2 + memmem::find(&bytes[open + 2..], b"endraw")?;
                at = after(bytes, endraw, b"%}")?;
            }
            Some(b'%') => match scan_code(bytes, open + 2, b"%}", name) {
                Scan::Found(offset) => return Some(offset),
                Scan::End(end) => at = end,
            },
            _ => at = open + 1,
        }
    }
    None
}

enum Scan {
    Found(usize),
    /// Where the code ended (after its closing delimiter, or the end of the text).
    End(usize),
}

/// Scans Jinja code from `at` to the delimiter `close`, looking for variable `name`.
fn scan_code(bytes: &[u8], mut at: usize, close: &[u8], name: &str) -> Scan {
    // The last significant byte before the current token: `.` and `|` make the next
    // identifier an attribute or a filter.
    let mut previous = b' ';
    while at < bytes.len() {
        let byte = bytes[at];
        if bytes[at..].starts_with(close) {
            return Scan::End(at + close.len());
        }
        if byte == b'"' || byte == b'\'' {
            at = skip_string(bytes, at);
            previous = byte;
        } else if byte.is_ascii_alphabetic() || byte == b'_' {
            let start = at;
            while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                at += 1;
            }
            if &bytes[start..at] == name.as_bytes() && previous != b'.' && previous != b'|' {
                return Scan::Found(start);
            }
            previous = b'a';
        } else if byte.is_ascii_digit() {
            // A number, exponent and all (`1e3` holds no identifier `e3`).
            while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                at += 1;
            }
            previous = b'0';
        } else {
            if !byte.is_ascii_whitespace() {
                previous = byte;
            }
            at += 1;
        }
    }
    Scan::End(at)
}

/// The offset after the string literal that opens at `at` (backslash escapes skipped).
fn skip_string(bytes: &[u8], at: usize) -> usize {
    let quote = bytes[at];
    let mut at = at + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            byte if byte == quote => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Whether the block tag whose body starts at `at` is `raw` (`{% raw %}`, `{%- raw -%}`).
fn is_raw(bytes: &[u8], at: usize) -> bool {
    let mut at = at;
    while at < bytes.len()
        && (bytes[at] == b'-' || bytes[at] == b'+' || bytes[at].is_ascii_whitespace())
    {
        at += 1;
    }
    bytes[at..].starts_with(b"raw")
        && !bytes
            .get(at + 3)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// The offset after the first `close` at or after `at`.
fn after(bytes: &[u8], at: usize, close: &[u8]) -> Option<usize> {
    memmem::find(&bytes[at..], close).map(|found| at + found + close.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_variables_in_expressions_and_statements() {
        assert_eq!(first_use("ab {{ now }}", "now"), Some(6));
        assert_eq!(first_use("{% if x %}{{ x }}{% endif %}", "x"), Some(6));
        assert_eq!(first_use("{{ issue-number }}", "number"), Some(9));
    }

    #[test]
    fn skips_text_comments_raw_blocks_strings_attributes_and_filters() {
        let source = "now {# now #}{% raw %}{{ now }}{% endraw %}{{ 'now' }}\
                      {{ a.now }}{{ a | now }}{{ 1e3 }}{{ now }}";
        assert_eq!(first_use(source, "now"), source.rfind("now"));
        assert_eq!(first_use("{{ x.e3 }}", "e3"), None);
        assert_eq!(first_use("{{ 'it\\'s now' }}", "now"), None);
        assert_eq!(first_use("{{ rawish }}", "rawish"), Some(3));
        assert_eq!(first_use("{%- raw -%}{{ x }}", "x"), None);
    }

    #[test]
    fn an_unclosed_tag_is_scanned_to_the_end() {
        assert_eq!(first_use("{{ a ~ b", "b"), Some(7));
        assert_eq!(first_use("{# x", "x"), None);
        assert_eq!(first_use("{", "x"), None);
    }
}
