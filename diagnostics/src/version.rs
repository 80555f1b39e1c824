//! SemVer 2.0.0 versions as the `semver` crate parses them, with a hint for the forms
//! npm tolerates and SemVer does not (a leading `v` or `=`, surrounding spaces).

use semver::Version;

/// Why a string is not a SemVer 2.0.0 version, with the fix when there is an obvious one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// The string is empty.
    #[error("the version is empty; write a SemVer version such as `1.0.0`")]
    Empty,
    /// npm would accept it, SemVer 2.0.0 does not: `v1.2.3`, ` 1.2.3 `, `=1.2.3`.
    #[error("`{given}` is not a SemVer 2.0.0 version ({what}); write `{suggestion}`")]
    NpmStyle {
        /// The text as written.
        given: String,
        /// What has to go, e.g. "remove the leading `v`".
        what: &'static str,
        /// The version to write instead.
        suggestion: String,
    },
    /// Fewer than three numbers, such as `1.2` (a range in npm, not a version).
    #[error(
        "`{given}` is not a SemVer 2.0.0 version: it needs major, minor and patch numbers; write `{suggestion}`"
    )]
    Incomplete {
        /// The text as written.
        given: String,
        /// The same version with the missing numbers as `0`.
        suggestion: String,
    },
    /// Anything else, with the parser's reason.
    #[error("`{given}` is not a SemVer 2.0.0 version: {reason}")]
    Invalid {
        /// The text as written.
        given: String,
        /// The `semver` crate's explanation.
        reason: String,
    },
}

/// Parses a SemVer 2.0.0 version, refusing npm's extras with a hint.
///
/// Numbers must fit in 64 bits (the `semver` crate's limit; SemVer itself has none).
///
/// ```
/// use curupira_diagnostics::version::{parse_version, VersionError};
///
/// assert_eq!(parse_version("1.2.0-beta.1+b5").unwrap().to_string(), "1.2.0-beta.1+b5");
/// let error = parse_version("v1.2.0").unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "`v1.2.0` is not a SemVer 2.0.0 version (remove the leading `v`); write `1.2.0`"
/// );
/// ```
pub fn parse_version(text: &str) -> Result<Version, VersionError> {
    if text.is_empty() {
        return Err(VersionError::Empty);
    }
    let parse_error = match Version::parse(text) {
        Ok(version) => return Ok(version),
        Err(error) => error,
    };
    let trimmed = text.trim();
    let without_prefix = trimmed.trim_start_matches(['v', 'V', '=']).trim_start();
    let what = match (
        trimmed.len() != text.len(),
        without_prefix.len() != trimmed.len(),
    ) {
        (true, true) => Some("remove the spaces and the leading `v` or `=`"),
        (true, false) => Some("remove the spaces around it"),
        (false, true) if trimmed.starts_with('=') => Some("remove the leading `=`"),
        (false, true) => Some("remove the leading `v`"),
        (false, false) => None,
    };
    if let Some(what) = what
        && Version::parse(without_prefix).is_ok()
    {
        return Err(VersionError::NpmStyle {
            given: text.to_owned(),
            what,
            suggestion: without_prefix.to_owned(),
        });
    }
    if let Some(suggestion) = complete(without_prefix) {
        return Err(VersionError::Incomplete {
            given: text.to_owned(),
            suggestion,
        });
    }
    Err(VersionError::Invalid {
        given: text.to_owned(),
        reason: parse_error.to_string(),
    })
}

/// `1` → `1.0.0`, `1.2` → `1.2.0`, when the numbers are otherwise valid.
fn complete(text: &str) -> Option<String> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() > 2
        || parts
            .iter()
            .any(|part| part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let mut numbers = parts.clone();
    numbers.resize(3, "0");
    let suggestion = numbers.join(".");
    Version::parse(&suggestion).is_ok().then_some(suggestion)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suggestion(text: &str) -> Option<String> {
        match parse_version(text) {
            Err(
                VersionError::NpmStyle { suggestion, .. }
                | VersionError::Incomplete { suggestion, .. },
            ) => Some(suggestion),
            _ => None,
        }
    }

    #[test]
    fn semver_org_examples() {
        // From the SemVer 2.0.0 text, items 9 and 10 and the precedence example.
        for valid in [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-0.3.7",
            "1.0.0-x.7.z.92",
            "1.0.0-x-y-z.--",
            "1.0.0-alpha+001",
            "1.0.0+20130313144700",
            "1.0.0-beta+exp.sha.5114f85",
            "1.0.0+21AF26D3----117B344092BD",
        ] {
            assert!(parse_version(valid).is_ok(), "{valid}");
        }
        for invalid in [
            "01.0.0",
            "1.0.0-01",
            "1.0.0-",
            "1.0.0+",
            "1.0.0-a..b",
            "1.0.0.0",
        ] {
            assert!(
                matches!(parse_version(invalid), Err(VersionError::Invalid { .. })),
                "{invalid}"
            );
        }
    }

    #[test]
    fn npm_extras_get_a_hint() {
        assert_eq!(suggestion("v1.2.3").as_deref(), Some("1.2.3"));
        assert_eq!(suggestion("V1.2.3").as_deref(), Some("1.2.3"));
        assert_eq!(suggestion("=1.2.3").as_deref(), Some("1.2.3"));
        assert_eq!(suggestion(" 1.2.3").as_deref(), Some("1.2.3"));
        assert_eq!(suggestion("1.2.3\n").as_deref(), Some("1.2.3"));
        assert_eq!(suggestion("  v 1.2.3-beta ").as_deref(), Some("1.2.3-beta"));
        assert_eq!(suggestion("1.2").as_deref(), Some("1.2.0"));
        assert_eq!(suggestion("v2").as_deref(), Some("2.0.0"));
        assert_eq!(suggestion("vx"), None);
        assert_eq!(parse_version(""), Err(VersionError::Empty));
        assert_eq!(
            parse_version(" 1.2.3").unwrap_err().to_string(),
            "` 1.2.3` is not a SemVer 2.0.0 version (remove the spaces around it); write `1.2.3`"
        );
        assert_eq!(
            parse_version("1.2").unwrap_err().to_string(),
            "`1.2` is not a SemVer 2.0.0 version: it needs major, minor and patch numbers; write `1.2.0`"
        );
    }
}
