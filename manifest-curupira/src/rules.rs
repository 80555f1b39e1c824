//! The rules for single values, shared by the validator (which locates each problem)
//! and the checked types' constructors (which report the first).

use std::ops::Range;

use curupira_diagnostics::Severity;
use curupira_diagnostics::npm::check_package_name;

use crate::codes;

/// Longest extension name.
pub(crate) const MAX_NAME_CHARS: usize = 214;

/// One broken rule of one value. `text` completes the sentence "`<key>` `<value>` …".
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub code: &'static str,
    pub severity: Severity,
    pub text: String,
    /// Byte range of the offending characters in the value, when there are some.
    pub range: Option<Range<usize>>,
}

impl Problem {
    fn error(code: &'static str, text: String, range: Option<Range<usize>>) -> Self {
        Self {
            code,
            severity: Severity::Error,
            text,
            range,
        }
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
fn bad_character(value: &str, code: &'static str) -> Option<Problem> {
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
    Some(Problem::error(code, text, Some(char_range(value, offset))))
}

/// `^[a-z0-9][a-z0-9._-]*$`, at most 214 characters.
pub(crate) fn name_problems(name: &str) -> Vec<Problem> {
    let code = codes::INVALID_NAME;
    let Some(first) = name.chars().next() else {
        return vec![Problem::error(
            code,
            "is empty; a name needs at least one lowercase letter or digit".to_owned(),
            None,
        )];
    };
    let mut problems = Vec::new();
    if is_separator(first) {
        problems.push(Problem::error(
            code,
            format!("starts with `{first}`; a name must start with a lowercase letter or digit"),
            Some(0..1),
        ));
    }
    problems.extend(bad_character(name, code));
    let length = name.chars().count();
    if length > MAX_NAME_CHARS {
        problems.push(Problem::error(
            code,
            format!("is {length} characters long; the limit is {MAX_NAME_CHARS}"),
            None,
        ));
    }
    problems
}

/// `^[a-z0-9]+(?:[._-][a-z0-9]+)*$`.
pub(crate) fn trigger_type_problems(value: &str) -> Vec<Problem> {
    let code = codes::INVALID_TRIGGER_TYPE;
    let Some(first) = value.chars().next() else {
        return vec![Problem::error(
            code,
            "is empty; write a name such as `github-issue`".to_owned(),
            None,
        )];
    };
    let mut problems = Vec::new();
    problems.extend(bad_character(value, code));
    if is_separator(first) {
        problems.push(Problem::error(
            code,
            format!(
                "starts with `{first}`; a trigger type starts with a lowercase letter or digit"
            ),
            Some(0..1),
        ));
    }
    let doubled = value
        .char_indices()
        .zip(value.chars().skip(1))
        .find(|&((_, a), b)| is_separator(a) && is_separator(b));
    if let Some(((offset, a), b)) = doubled {
        problems.push(Problem::error(
            code,
            format!(
                "has `{a}{b}` at character {}; `.`, `_` and `-` must stand between letters or digits",
                char_index(value, offset)
            ),
            Some(offset..offset + 2),
        ));
    }
    if let Some(last) = value.chars().last() {
        if is_separator(last) && value.len() > 1 {
            let offset = value.len() - 1;
            problems.push(Problem::error(
                code,
                format!("ends with `{last}`; a trigger type ends with a lowercase letter or digit"),
                Some(offset..offset + 1),
            ));
        }
    }
    problems
}

/// npm's errors for a package name (invalid for any package).
pub(crate) fn package_name_errors(name: &str) -> Vec<Problem> {
    check_package_name(name)
        .errors
        .iter()
        .map(|problem| {
            Problem::error(
                codes::INVALID_PACKAGE_NAME,
                format!("is not an npm package name: it {problem}"),
                problem.bytes(),
            )
        })
        .collect()
}

/// npm's errors, then its warnings (names old packages may have, new ones may not).
pub(crate) fn package_name_problems(name: &str) -> Vec<Problem> {
    let check = check_package_name(name);
    let mut problems = package_name_errors(name);
    problems.extend(check.warnings.iter().map(|problem| Problem {
        code: codes::LEGACY_PACKAGE_NAME,
        severity: Severity::Warning,
        text: format!("breaks a rule for new npm packages: it {problem}"),
        range: problem.bytes(),
    }));
    problems
}

/// The program of a `command` launch.
pub(crate) fn command_problems(command: &str) -> Vec<Problem> {
    if command.trim().is_empty() {
        vec![Problem::error(
            codes::EMPTY_COMMAND,
            "is empty; give the program to run, e.g. `command = \"./bin/my-extension\"`".to_owned(),
            None,
        )]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(problems: Vec<Problem>) -> Vec<String> {
        problems.into_iter().map(|p| p.text).collect()
    }

    #[test]
    fn names_say_which_character_and_where() {
        assert!(name_problems("acme-curupira-ext").is_empty());
        assert!(name_problems("0.x_y-z").is_empty());
        assert_eq!(
            texts(name_problems("Acme")),
            [
                "has `A` at character 1; only lowercase letters, digits, `.`, `_` and `-` are allowed; did you mean `acme`?"
            ]
        );
        assert_eq!(
            texts(name_problems("_a b!")),
            [
                "starts with `_`; a name must start with a lowercase letter or digit",
                "has ` ` at character 3 (and 1 more such character); only lowercase letters, digits, `.`, `_` and `-` are allowed",
            ]
        );
        assert_eq!(name_problems("ab\u{e9}")[0].range, Some(2..4));
        assert!(name_problems(&"a".repeat(214)).is_empty());
        assert_eq!(
            texts(name_problems(&"a".repeat(215))),
            ["is 215 characters long; the limit is 214"]
        );
    }

    #[test]
    fn trigger_types_follow_the_pattern() {
        for good in ["github-issue", "a", "a.b_c-d", "x1-2"] {
            assert!(trigger_type_problems(good).is_empty(), "{good}");
        }
        let ranges = |value: &str| -> Vec<_> {
            trigger_type_problems(value)
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

    #[test]
    fn package_names_split_errors_and_warnings() {
        assert!(package_name_problems("@acme/curupira-ext").is_empty());
        let problems = package_name_problems("JSONStream");
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].code, codes::LEGACY_PACKAGE_NAME);
        assert!(package_name_errors("JSONStream").is_empty());
        let problems = package_name_problems("node:fs");
        assert_eq!(problems[0].code, codes::INVALID_PACKAGE_NAME);
        assert_eq!(problems[0].range, Some(4..5));
    }
}
