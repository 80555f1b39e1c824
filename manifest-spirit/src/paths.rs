//! Relative paths inside a package: the rule for `main`, `icon`, CSS and hooks paths,
//! shared with the names of archive entries.

use std::fmt;

/// Why a path cannot name a file inside the package.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathProblem {
    /// The path is the empty string (or only `.` and `/`).
    #[error("it is empty")]
    Empty,
    /// `/x`: absolute on Unix.
    #[error("it is absolute (starts with `/`)")]
    Absolute,
    /// `C:\x`, `C:x`: a Windows drive letter.
    #[error("it starts with the drive letter `{0}:`")]
    DriveLetter(char),
    /// `\\host\share\x`: a Windows network (UNC) path.
    #[error("it is a Windows network path (starts with `\\\\`)")]
    Unc,
    /// `\x`, `a\b`: a Windows separator.
    #[error("it has a backslash at character {0}; use `/` between folders")]
    Backslash(usize),
    /// `a/../../x`: a `..` that climbs above the package root.
    #[error("its `..` leaves the package folder")]
    Escapes,
    /// A NUL character, which no file system accepts in a name.
    #[error("it has a NUL character")]
    Nul,
    /// `dist/../dist/x.js`, `dist//x.js`, `a/./b`: an empty, `.` or `..` segment, which
    /// the Spirit app refuses in a manifest path even when it stays inside (see
    /// [`RelativePath::parse_declared`]).
    #[error(
        "segment {0} is empty, `.` or `..`; the Spirit app refuses such a segment even when the path stays inside"
    )]
    Segment(usize),
}

/// A path checked to stay inside the package: its normal components, without `.`,
/// `..` or empty parts, joined by `/`.
///
/// ```
/// use spirit_manifest::RelativePath;
///
/// assert_eq!(RelativePath::parse("./dist/../dist//index.js").unwrap().as_str(), "dist/index.js");
/// assert!(RelativePath::parse("a/../../x").is_err());
/// assert!(RelativePath::parse("C:\\x").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelativePath(String);

impl RelativePath {
    /// Checks `text` and normalises it; see [`PathProblem`] for what is refused.
    pub fn parse(text: &str) -> Result<Self, PathProblem> {
        if text.contains('\0') {
            return Err(PathProblem::Nul);
        }
        if text.starts_with("\\\\") {
            return Err(PathProblem::Unc);
        }
        if text.starts_with('/') {
            return Err(PathProblem::Absolute);
        }
        let mut chars = text.chars();
        if let (Some(letter), Some(':')) = (chars.next(), chars.next())
            && letter.is_ascii_alphabetic()
        {
            return Err(PathProblem::DriveLetter(letter));
        }
        if let Some(index) = text.chars().position(|c| c == '\\') {
            return Err(PathProblem::Backslash(index + 1));
        }
        let mut parts: Vec<&str> = Vec::new();
        for part in text.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(PathProblem::Escapes);
                    }
                }
                _ => parts.push(part),
            }
        }
        if parts.is_empty() {
            return Err(PathProblem::Empty);
        }
        Ok(Self(parts.join("/")))
    }

    /// Checks a path as the Spirit app checks `main`, `icon`, a css `path` or the hooks
    /// `path`: after one leading `./` is dropped, it must be relative, with no drive
    /// letter, no backslash (the caller turns those the app reads as `/` into `/`
    /// first) and no empty, `.` or `..` segment at all.
    ///
    /// ```
    /// use spirit_manifest::{PathProblem, RelativePath};
    ///
    /// assert_eq!(RelativePath::parse_declared("./dist/index.js").unwrap().as_str(), "dist/index.js");
    /// assert_eq!(RelativePath::parse_declared("dist//index.js"), Err(PathProblem::Segment(2)));
    /// assert_eq!(RelativePath::parse_declared("a/../index.js"), Err(PathProblem::Segment(2)));
    /// ```
    pub fn parse_declared(text: &str) -> Result<Self, PathProblem> {
        if text.contains('\0') {
            return Err(PathProblem::Nul);
        }
        let rest = text.strip_prefix("./").unwrap_or(text);
        if rest.is_empty() {
            return Err(PathProblem::Empty);
        }
        if rest.starts_with('/') {
            return Err(PathProblem::Absolute);
        }
        let mut chars = rest.chars();
        if let (Some(letter), Some(':')) = (chars.next(), chars.next())
            && letter.is_ascii_alphabetic()
        {
            return Err(PathProblem::DriveLetter(letter));
        }
        if let Some(index) = rest.chars().position(|c| c == '\\') {
            return Err(PathProblem::Backslash(index + 1));
        }
        if let Some(index) = rest
            .split('/')
            .position(|part| matches!(part, "" | "." | ".."))
        {
            return Err(PathProblem::Segment(index + 1));
        }
        Ok(Self(rest.to_owned()))
    }

    /// `main` as the app looks for its file once [`parse_declared`](Self::parse_declared)
    /// accepted it with its backslashes read as `/`: the text as written, one leading
    /// `./` dropped, split at `/` only. A backslash is then part of a file name, as it
    /// is on Linux and macOS (`dist\\index.js` is one file of the package's root).
    ///
    /// ```
    /// use spirit_manifest::RelativePath;
    ///
    /// let main = RelativePath::main_as_looked_up("./dist\\index.js");
    /// assert_eq!(main.components().collect::<Vec<_>>(), ["dist\\index.js"]);
    /// ```
    pub fn main_as_looked_up(text: &str) -> Self {
        Self(text.strip_prefix("./").unwrap_or(text).to_owned())
    }

    /// The normalised path, components joined by `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The components, first to last.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

impl fmt::Display for RelativePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_leaves_the_package() {
        assert_eq!(
            RelativePath::parse("/etc/passwd"),
            Err(PathProblem::Absolute)
        );
        assert_eq!(
            RelativePath::parse("C:\\x"),
            Err(PathProblem::DriveLetter('C'))
        );
        assert_eq!(
            RelativePath::parse("c:x"),
            Err(PathProblem::DriveLetter('c'))
        );
        assert_eq!(
            RelativePath::parse("\\\\host\\share\\x"),
            Err(PathProblem::Unc)
        );
        assert_eq!(
            RelativePath::parse("dist\\index.js"),
            Err(PathProblem::Backslash(5))
        );
        assert_eq!(RelativePath::parse("a/../../x"), Err(PathProblem::Escapes));
        assert_eq!(RelativePath::parse(".."), Err(PathProblem::Escapes));
        assert_eq!(RelativePath::parse(""), Err(PathProblem::Empty));
        assert_eq!(RelativePath::parse("./"), Err(PathProblem::Empty));
        assert_eq!(RelativePath::parse("a\0b"), Err(PathProblem::Nul));
    }

    #[test]
    fn declared_paths_have_only_plain_segments() {
        let ok = |text: &str| {
            RelativePath::parse_declared(text)
                .unwrap()
                .as_str()
                .to_owned()
        };
        assert_eq!(ok("dist/index.js"), "dist/index.js");
        assert_eq!(ok("./dist/index.js"), "dist/index.js");
        assert_eq!(ok("assets/icon:v2.svg"), "assets/icon:v2.svg");
        let err = |text: &str| RelativePath::parse_declared(text).unwrap_err();
        assert_eq!(err("dist//index.js"), PathProblem::Segment(2));
        assert_eq!(err("dist/./index.js"), PathProblem::Segment(2));
        assert_eq!(err("dist/../dist/index.js"), PathProblem::Segment(2));
        assert_eq!(err("dist/"), PathProblem::Segment(2));
        assert_eq!(err("././x"), PathProblem::Segment(1));
        assert_eq!(err("/x"), PathProblem::Absolute);
        assert_eq!(err("//host/x"), PathProblem::Absolute);
        assert_eq!(err("C:/x.js"), PathProblem::DriveLetter('C'));
        assert_eq!(err("dist\\index.js"), PathProblem::Backslash(5));
        assert_eq!(err(""), PathProblem::Empty);
        assert_eq!(err("./"), PathProblem::Empty);
    }

    #[test]
    fn normalises_what_stays_inside() {
        let ok = |text: &str| RelativePath::parse(text).unwrap().as_str().to_owned();
        assert_eq!(ok("dist/index.js"), "dist/index.js");
        assert_eq!(ok("./dist/index.js"), "dist/index.js");
        assert_eq!(ok("a/../b"), "b");
        assert_eq!(ok("a//b/./c"), "a/b/c");
        assert_eq!(ok("a/b/.."), "a");
        // A colon later in a name is not a drive letter.
        assert_eq!(ok("assets/icon:v2.svg"), "assets/icon:v2.svg");
    }
}
