//! npm package names, checked by the rules of npm's `validate-npm-package-name`.
//!
//! npm sorts problems in two groups. *Errors* make a name invalid for every package,
//! old or new. *Warnings* are rules added later: names breaking them exist on the
//! registry (`JSONStream`) but can no longer be published.

use crate::js::JsTrim;
use std::fmt;
use std::ops::Range;

/// Names npm refuses whatever their case.
const RESERVED: [&str; 2] = ["node_modules", "favicon.ico"];

/// Node.js core module names (`require('node:module').builtinModules`, Node 22).
const CORE_MODULES: &[&str] = &[
    "_http_agent",
    "_http_client",
    "_http_common",
    "_http_incoming",
    "_http_outgoing",
    "_http_server",
    "_stream_duplex",
    "_stream_passthrough",
    "_stream_readable",
    "_stream_transform",
    "_stream_wrap",
    "_stream_writable",
    "_tls_common",
    "_tls_wrap",
    "assert",
    "assert/strict",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "dns/promises",
    "domain",
    "events",
    "fs",
    "fs/promises",
    "http",
    "http2",
    "https",
    "inspector",
    "inspector/promises",
    "module",
    "net",
    "os",
    "path",
    "path/posix",
    "path/win32",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "readline/promises",
    "repl",
    "stream",
    "stream/consumers",
    "stream/promises",
    "stream/web",
    "string_decoder",
    "sys",
    "timers",
    "timers/promises",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "util/types",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
    "node:sea",
    "node:sqlite",
    "node:test",
    "node:test/reporters",
];

/// The longest name npm accepts for a new package, in UTF-16 code units (JavaScript's
/// `length`).
pub const MAX_NAME_LENGTH: usize = 214;

/// A character of a name and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    /// The character.
    pub character: char,
    /// Its 1-based position in the name, counted in characters.
    pub index: usize,
    /// Its byte range in the name.
    pub bytes: Range<usize>,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameProblem {
    /// The name is empty.
    Empty,
    /// The name (or the part after `@scope/`) starts with `.`.
    LeadingPeriod(At),
    /// The name starts with `_`.
    LeadingUnderscore(At),
    /// The name starts with `-`.
    LeadingHyphen(At),
    /// The name has leading or trailing whitespace.
    SurroundingSpaces,
    /// `node_modules` or `favicon.ico`, in any case.
    Reserved(&'static str),
    /// A Node.js core module name such as `http` (warning).
    CoreModule,
    /// Longer than [`MAX_NAME_LENGTH`] (warning).
    TooLong {
        /// The length in UTF-16 code units.
        length: usize,
    },
    /// An uppercase letter (warning); the first one is given.
    Uppercase(At),
    /// One of `~'!()*` in the last `/`-separated part (warning); the first one is given.
    SpecialCharacter(At),
    /// A character that would need escaping in a URL; the first one is given.
    NotUrlSafe(At),
    /// Starts with `@` but is not `@scope/name` with exactly one `/`.
    BadScope,
}

impl NameProblem {
    /// The byte range of the offending character in the name, when there is one.
    pub fn bytes(&self) -> Option<Range<usize>> {
        match self {
            NameProblem::LeadingPeriod(at)
            | NameProblem::LeadingUnderscore(at)
            | NameProblem::LeadingHyphen(at)
            | NameProblem::Uppercase(at)
            | NameProblem::SpecialCharacter(at)
            | NameProblem::NotUrlSafe(at) => Some(at.bytes.clone()),
            _ => None,
        }
    }
}

/// Reads as the end of "the name …": "starts with `.`", "has `:` at character 8, …".
impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameProblem::Empty => write!(f, "is empty"),
            NameProblem::LeadingPeriod(at) if at.index > 1 => {
                write!(
                    f,
                    "has `.` right after the scope, at character {}",
                    at.index
                )
            }
            NameProblem::LeadingPeriod(_) => write!(f, "starts with `.`"),
            NameProblem::LeadingUnderscore(_) => write!(f, "starts with `_`"),
            NameProblem::LeadingHyphen(_) => write!(f, "starts with `-`"),
            NameProblem::SurroundingSpaces => write!(f, "has spaces around it"),
            NameProblem::Reserved(name) => write!(f, "is the reserved name `{name}`"),
            NameProblem::CoreModule => write!(f, "is the name of a Node.js core module"),
            NameProblem::TooLong { length } => write!(
                f,
                "is {length} characters long, more than the {MAX_NAME_LENGTH} npm allows"
            ),
            NameProblem::Uppercase(at) => write!(
                f,
                "has the uppercase letter `{}` at character {}; npm names are lowercase",
                at.character, at.index
            ),
            NameProblem::SpecialCharacter(at) => write!(
                f,
                "has `{}` at character {}, and new npm packages may not use any of ~'!()*",
                at.character, at.index
            ),
            NameProblem::NotUrlSafe(at) => write!(
                f,
                "has `{}` at character {}, which is not allowed (only letters, digits and -_.!~*'() are)",
                at.character.escape_default(),
                at.index
            ),
            NameProblem::BadScope => {
                write!(f, "starts with `@` but is not of the form `@scope/name`")
            }
        }
    }
}

/// The result of [`check_package_name`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameCheck {
    /// Problems that make the name invalid for any package.
    pub errors: Vec<NameProblem>,
    /// Problems that only forbid publishing a new package under this name.
    pub warnings: Vec<NameProblem>,
}

impl NameCheck {
    /// npm would let a new package use this name.
    pub fn valid_for_new_packages(&self) -> bool {
        self.errors.is_empty() && self.warnings.is_empty()
    }

    /// A package with this name can exist on the registry (possibly from before the
    /// newer rules).
    pub fn valid_for_old_packages(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Checks an npm package name, plain (`left-pad`) or scoped (`@acme/curupira-ext`).
///
/// ```
/// use curupira_diagnostics::npm::{check_package_name, NameProblem};
///
/// assert!(check_package_name("@acme/curupira-ext").valid_for_new_packages());
/// let check = check_package_name("JSONStream");
/// assert!(check.valid_for_old_packages() && !check.valid_for_new_packages());
/// let check = check_package_name("node:fs");
/// assert_eq!(
///     check.errors[0].to_string(),
///     "has `:` at character 5, which is not allowed (only letters, digits and -_.!~*'() are)"
/// );
/// ```
pub fn check_package_name(name: &str) -> NameCheck {
    let mut check = NameCheck::default();
    if name.is_empty() {
        check.errors.push(NameProblem::Empty);
        return check;
    }
    if name.starts_with('.') {
        check.errors.push(NameProblem::LeadingPeriod(at(name, 0)));
    }
    if name.starts_with('_') {
        check
            .errors
            .push(NameProblem::LeadingUnderscore(at(name, 0)));
    }
    if name.starts_with('-') {
        check.errors.push(NameProblem::LeadingHyphen(at(name, 0)));
    }
    if name.js_trim() != name {
        check.errors.push(NameProblem::SurroundingSpaces);
    }
    let lower = name.to_lowercase();
    if let Some(reserved) = RESERVED.iter().find(|reserved| **reserved == lower) {
        check.errors.push(NameProblem::Reserved(reserved));
    }
    if CORE_MODULES.contains(&lower.as_str()) {
        check.warnings.push(NameProblem::CoreModule);
    }
    let length = name.encode_utf16().count();
    if length > MAX_NAME_LENGTH {
        check.warnings.push(NameProblem::TooLong { length });
    }
    if lower != name
        && let Some(offset) = name
            .char_indices()
            .find(|(_, c)| c.to_lowercase().ne([*c]))
            .map(|(i, _)| i)
    {
        check
            .warnings
            .push(NameProblem::Uppercase(at(name, offset)));
    }
    let last_part_start = name.rfind('/').map_or(0, |slash| slash + 1);
    if let Some(offset) = first_offset(&name[last_part_start..], |c| "~'!()*".contains(c)) {
        check.warnings.push(NameProblem::SpecialCharacter(at(
            name,
            last_part_start + offset,
        )));
    }
    if first_offset(name, |c| !url_safe(c)).is_some() {
        url_problems(name, &mut check);
    }
    check
}

/// npm's `encodeURIComponent(name) !== name` branch: a scoped name is fine when both
/// halves are URL-safe; anything else is reported at its first unsafe character.
fn url_problems(name: &str, check: &mut NameCheck) {
    if let Some((scope, package)) = split_scoped(name) {
        let package_start = name.len() - package.len();
        if package.starts_with('.') {
            check
                .errors
                .push(NameProblem::LeadingPeriod(at(name, package_start)));
        }
        let scope_bad = first_offset(scope, |c| !url_safe(c)).map(|offset| offset + 1);
        let package_bad =
            first_offset(package, |c| !url_safe(c)).map(|offset| offset + package_start);
        match scope_bad.or(package_bad) {
            None => {}
            Some(offset) => check.errors.push(NameProblem::NotUrlSafe(at(name, offset))),
        }
        return;
    }
    if name.starts_with('@') {
        check.errors.push(NameProblem::BadScope);
    } else if let Some(offset) = first_offset(name, |c| !url_safe(c)) {
        check.errors.push(NameProblem::NotUrlSafe(at(name, offset)));
    }
}

/// `@scope/name` with non-empty halves and no other `/`.
fn split_scoped(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix('@')?;
    let (scope, package) = rest.split_once('/')?;
    (!scope.is_empty() && !package.is_empty() && !package.contains('/')).then_some((scope, package))
}

/// The characters `encodeURIComponent` leaves alone.
fn url_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.!~*'()".contains(c)
}

fn first_offset(text: &str, predicate: impl Fn(char) -> bool) -> Option<usize> {
    text.char_indices()
        .find(|&(_, c)| predicate(c))
        .map(|(offset, _)| offset)
}

fn at(name: &str, offset: usize) -> At {
    let character = name[offset..].chars().next().unwrap_or_default();
    At {
        character,
        index: name[..offset].chars().count() + 1,
        bytes: offset..offset + character.len_utf8(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(problems: &[NameProblem]) -> Vec<String> {
        problems
            .iter()
            .map(|p| {
                format!("{p:?}")
                    .split(['(', ' ', '{'])
                    .next()
                    .unwrap_or("")
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn rules_from_npm_documentation() {
        // The rules listed in npm's package.json documentation for `name`.
        for good in [
            "some-package",
            "example.com",
            "under_score",
            "123numeric",
            "@npm/thingy",
            "@jane/foo.js",
            "x",
        ] {
            assert!(check_package_name(good).valid_for_new_packages(), "{good}");
        }
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("", &["Empty"], &[]),
            (".hidden", &["LeadingPeriod"], &[]),
            ("_private", &["LeadingUnderscore"], &[]),
            ("-dash", &["LeadingHyphen"], &[]),
            (" padded", &["SurroundingSpaces", "NotUrlSafe"], &[]),
            ("Node_Modules", &["Reserved"], &["Uppercase"]),
            ("stream", &[], &["CoreModule"]),
            ("MixedCase", &[], &["Uppercase"]),
            ("wow!", &[], &["SpecialCharacter"]),
            ("a:b", &["NotUrlSafe"], &[]),
            ("@scope/.dot", &["LeadingPeriod"], &[]),
            ("@scope/a b", &["NotUrlSafe"], &[]),
            ("@a/b/c", &["BadScope"], &[]),
            ("@/x", &["BadScope"], &[]),
        ];
        for (name, errors, warnings) in cases {
            let check = check_package_name(name);
            assert_eq!(kinds(&check.errors), *errors, "errors of {name:?}");
            assert_eq!(kinds(&check.warnings), *warnings, "warnings of {name:?}");
        }
    }

    #[test]
    fn problems_say_which_character_and_where() {
        let check = check_package_name("@scope/a b");
        assert_eq!(
            check.errors[0],
            NameProblem::NotUrlSafe(At {
                character: ' ',
                index: 9,
                bytes: 8..9
            })
        );
        let check = check_package_name("caf\u{e9}X");
        assert_eq!(check.errors[0].bytes(), Some(3..5));
        assert_eq!(
            check.warnings[0],
            NameProblem::Uppercase(At {
                character: 'X',
                index: 5,
                bytes: 5..6
            })
        );
    }

    #[test]
    fn length_limit_is_214() {
        assert!(check_package_name(&"a".repeat(214)).valid_for_new_packages());
        assert_eq!(
            check_package_name(&"a".repeat(215)).warnings,
            [NameProblem::TooLong { length: 215 }]
        );
    }
}
