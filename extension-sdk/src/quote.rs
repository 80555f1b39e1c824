//! Names quoted inside messages the way the official Python SDK quotes them, so that
//! a host shows our sentences and theirs alike (`unsupported trigger_type 'nope'`,
//! `unknown parameters ['colour']`).

/// `text` as Python's `repr` of a string writes it: in single quotes, or in double
/// quotes when it holds a `'` and no `"`; backslashes, the chosen quote and control
/// characters escaped.
pub(crate) fn quoted(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `names` as Python writes a list of strings: `['a', 'b']`.
pub(crate) fn quoted_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<String> = names.into_iter().map(quoted).collect();
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_python_repr_quotes_them() {
        assert_eq!(quoted("nope"), "'nope'");
        assert_eq!(quoted("it's"), "\"it's\"");
        assert_eq!(quoted("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(quoted("back\\slash\n"), "'back\\\\slash\\n'");
        assert_eq!(quoted("bell\u{7}"), "'bell\\x07'");
        assert_eq!(quoted(""), "''");
        assert_eq!(quoted_list(["colour", "size"]), "['colour', 'size']");
        assert_eq!(quoted_list([]), "[]");
    }
}
