//! The name patterns the validators share, each reporting which character breaks it
//! and where (so a diagnostic can point at that character).
//!
//! - [`lowercase_name`]: `^[a-z0-9][a-z0-9._-]*$` — Curupira extension names, each
//!   part of a Spirit extension id.
//! - [`identifier`]: `^[a-z0-9]+(?:[._-][a-z0-9]+)*$` — Curupira trigger types, Spirit
//!   tool names and setting keys.

use std::ops::Range;

/// One broken rule of a name. `text` completes the sentence "`<what>` `<value>` …".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueProblem {
    /// What is wrong, e.g. "has `A` at character 1; only lowercase letters, …".
    pub text: String,
    /// Byte range of the offending characters in the value, when there are some.
    pub range: Option<Range<usize>>,
}

impl ValueProblem {
    fn new(text: String, range: Option<Range<usize>>) -> Self {
        Self { text, range }
    }
}

fn is_lower_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_separator(c: char) -> bool {
    matches!(c, '.' | '_' | '-')
}

fn char_range(text: &str, offset: usize) -> Range<usize> {
    let len = text[offset..].chars().next().map_or(0, char::len_utf8);
    offset..offset + len
}

fn char_index(text: &str, offset: usize) -> usize {
    text[..offset].chars().count() + 1
}

/// The first character outside `[a-z0-9._-]`, described, plus how many more there are.
fn bad_character(value: &str) -> Option<ValueProblem> {
    let mut bad = value
        .char_indices()
        .filter(|&(_, c)| !is_lower_alnum(c) && !is_separator(c));
    let (offset, c) = bad.next()?;
    let more = bad.count();
    let others = match more {
        0 => String::new(),
        1 => " (and 1 more such character)".to_owned(),
        n => format!(" (and {n} more such characters)"),
    };
    let mut text = format!(
        "has `{}` at character {}{others}; only lowercase letters, digits, `.`, `_` and `-` are allowed",
        c.escape_debug(),
        char_index(value, offset)
    );
    let lower = value.to_lowercase();
    if lower != value && lower.chars().all(|c| is_lower_alnum(c) || is_separator(c)) {
        text.push_str(&format!("; did you mean `{lower}`?"));
    }
    Some(ValueProblem::new(text, Some(char_range(value, offset))))
}

/// `^[a-z0-9][a-z0-9._-]*$`. `what` names the value in messages ("a name").
///
/// ```
/// use curupira_diagnostics::names::lowercase_name;
///
/// assert!(lowercase_name("acme-ext", "a name").is_empty());
/// let problems = lowercase_name("Acme", "a name");
/// assert_eq!(problems[0].range, Some(0..1));
/// assert!(problems[0].text.ends_with("did you mean `acme`?"));
/// ```
pub fn lowercase_name(value: &str, what: &str) -> Vec<ValueProblem> {
    let Some(first) = value.chars().next() else {
        return vec![ValueProblem::new(
            format!("is empty; {what} needs at least one lowercase letter or digit"),
            None,
        )];
    };
    let mut problems = Vec::new();
    if is_separator(first) {
        problems.push(ValueProblem::new(
            format!("starts with `{first}`; {what} must start with a lowercase letter or digit"),
            Some(0..1),
        ));
    }
    problems.extend(bad_character(value));
    problems
}

/// `^[a-z0-9]+(?:[._-][a-z0-9]+)*$`. `what` names the value in messages ("a trigger
/// type") and `example` is a good one to show when the value is empty.
///
/// ```
/// use curupira_diagnostics::names::identifier;
///
/// assert!(identifier("lookup_item", "a tool name", "lookup_item").is_empty());
/// let problems = identifier("lookup__item", "a tool name", "lookup_item");
/// assert_eq!(problems[0].range, Some(6..8));
/// ```
pub fn identifier(value: &str, what: &str, example: &str) -> Vec<ValueProblem> {
    let Some(first) = value.chars().next() else {
        return vec![ValueProblem::new(
            format!("is empty; write {what} such as `{example}`"),
            None,
        )];
    };
    let mut problems = Vec::new();
    problems.extend(bad_character(value));
    if is_separator(first) {
        problems.push(ValueProblem::new(
            format!("starts with `{first}`; {what} must start with a lowercase letter or digit"),
            Some(0..1),
        ));
    }
    let doubled = value
        .char_indices()
        .zip(value.chars().skip(1))
        .find(|&((_, a), b)| is_separator(a) && is_separator(b));
    if let Some(((offset, a), b)) = doubled {
        problems.push(ValueProblem::new(
            format!(
                "has `{a}{b}` at character {}; `.`, `_` and `-` must stand between letters or digits",
                char_index(value, offset)
            ),
            Some(offset..offset + 2),
        ));
    }
    if let Some(last) = value.chars().last()
        && is_separator(last)
        && value.len() > 1
    {
        let offset = value.len() - 1;
        problems.push(ValueProblem::new(
            format!("ends with `{last}`; {what} must end with a lowercase letter or digit"),
            Some(offset..offset + 1),
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(problems: Vec<ValueProblem>) -> Vec<String> {
        problems.into_iter().map(|p| p.text).collect()
    }

    #[test]
    fn names_say_which_character_and_where() {
        assert!(lowercase_name("acme-curupira-ext", "a name").is_empty());
        assert!(lowercase_name("0.x_y-z", "a name").is_empty());
        assert_eq!(
            texts(lowercase_name("_a b!", "a name")),
            [
                "starts with `_`; a name must start with a lowercase letter or digit",
                "has ` ` at character 3 (and 1 more such character); only lowercase letters, digits, `.`, `_` and `-` are allowed",
            ]
        );
        assert_eq!(lowercase_name("ab\u{e9}", "a name")[0].range, Some(2..4));
    }

    #[test]
    fn identifiers_follow_the_pattern() {
        for good in ["github-issue", "a", "a.b_c-d", "x1-2"] {
            assert!(identifier(good, "a trigger type", "x").is_empty(), "{good}");
        }
        let ranges = |value: &str| -> Vec<_> {
            identifier(value, "a trigger type", "x")
                .into_iter()
                .map(|p| p.range)
                .collect()
        };
        assert_eq!(ranges("-a"), [Some(0..1)]);
        assert_eq!(ranges("a-"), [Some(1..2)]);
        assert_eq!(ranges("a--b"), [Some(1..3)]);
        assert_eq!(ranges("Github"), [Some(0..1)]);
        assert_eq!(ranges(""), [None]);
        assert_eq!(ranges("-"), [Some(0..1)]);
    }
}
