//! The rules for single values, shared by the validator (which locates each problem)
//! and the checked types' constructors (which report the first).

use std::ops::Range;

use curupira_diagnostics::Severity;
use curupira_diagnostics::names::{self, ValueProblem};
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

fn from_shared(code: &'static str, problems: Vec<ValueProblem>) -> Vec<Problem> {
    problems
        .into_iter()
        .map(|p| Problem::error(code, p.text, p.range))
        .collect()
}

/// `^[a-z0-9][a-z0-9._-]*$`, at most 214 characters.
pub(crate) fn name_problems(name: &str) -> Vec<Problem> {
    let code = codes::INVALID_NAME;
    let mut problems = from_shared(code, names::lowercase_name(name, "a name"));
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
    from_shared(
        codes::INVALID_TRIGGER_TYPE,
        names::identifier(value, "a trigger type", "github-issue"),
    )
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

/// What a launch starts: `program`, uvx's `executable`, npx's `bin`.
pub(crate) fn program_problems(program: &str) -> Vec<Problem> {
    blank(program, "there would be nothing to run")
}

/// The Python package of a uvx launch.
pub(crate) fn python_package_problems(package: &str) -> Vec<Problem> {
    blank(package, "uvx would have nothing to install")
}

fn blank(value: &str, consequence: &str) -> Vec<Problem> {
    if value.trim().is_empty() {
        let what = if value.is_empty() {
            "is empty"
        } else {
            "is only whitespace"
        };
        vec![Problem::error(
            codes::EMPTY_VALUE,
            format!("{what}: {consequence}"),
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

    #[test]
    fn blank_programs_and_packages_are_errors() {
        assert!(program_problems("python3").is_empty());
        assert!(python_package_problems(" curupira-plugins ").is_empty());
        assert_eq!(
            texts(program_problems("")),
            ["is empty: there would be nothing to run"]
        );
        let problems = python_package_problems(" \t");
        assert_eq!(problems[0].code, codes::EMPTY_VALUE);
        assert_eq!(
            texts(problems),
            ["is only whitespace: uvx would have nothing to install"]
        );
    }
}
