//! The repository's identity (`${repository}` in prompts), derived from a Git remote
//! URL as the reference host `curupira` 0.4.0 derives it: the remote's last two path
//! segments, `owner/name`.
//!
//! Every URL form Git accepts is read: `scheme://[user@]host[:port]/path`, the
//! scp-like `user@host:path`, a local path or a `file://` URL alike. Trailing slashes
//! and one trailing `.git` are dropped and the case is kept, so
//! `git@github.com:Acme/Widgets.git`, `https://github.com/Acme/Widgets/` and
//! `/srv/git/Acme/Widgets.git` are all `Acme/Widgets`, and
//! `git@gitlab.com:group/sub/proj.git` is `sub/proj`. A path of one segment is that
//! segment. Parsing is `gix-url`'s, which knows Git's own rules for telling an
//! scp-like address from a local path.
//!
//! ```
//! use curupira_workspace::forge::forge_identity;
//!
//! let id = forge_identity("git@github.com:Acme/Widgets.git").unwrap();
//! assert_eq!(id, "Acme/Widgets");
//! ```

use std::path::Path;
use std::process::{Command, Stdio};

use curupira_process::{ProcessGuard, describe_status};

use curupira_process::pipes::{self, Chunk, Stream};

/// Why no repository identity could be derived.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ForgeError {
    /// The remote URL could not be parsed as any URL form Git accepts.
    #[error("the Git remote URL `{url}` is not a URL Git understands: {reason}")]
    Unparsable {
        /// The URL as given.
        url: String,
        /// The parser's explanation.
        reason: String,
    },
    /// The URL has no repository path.
    #[error("the Git remote URL `{url}` has no repository path")]
    NoPath {
        /// The URL as given.
        url: String,
    },
    /// `git remote get-url origin` failed.
    #[error("cannot read the Git remote `origin` in {dir}: {reason}")]
    NoRemote {
        /// The folder git ran in.
        dir: String,
        /// What git said, or why it could not run.
        reason: String,
    },
}

/// Turns a Git remote URL into the repository's identity, `owner/name`: its last two
/// path segments.
///
/// ```
/// # use curupira_workspace::forge::forge_identity;
/// assert_eq!(
///     forge_identity("https://user:token@GitHub.com:443/acme/widgets.git/").unwrap(),
///     "acme/widgets",
/// );
/// ```
pub fn forge_identity(remote_url: &str) -> Result<String, ForgeError> {
    let trimmed = remote_url.trim();
    let url = gix_url::parse(trimmed).map_err(|err| ForgeError::Unparsable {
        url: trimmed.to_owned(),
        reason: err.to_string(),
    })?;
    let raw_path = String::from_utf8_lossy(url.path.as_ref());
    let mut path = raw_path.trim_matches('/');
    if let Some(stripped) = path.strip_suffix(".git") {
        path = stripped.trim_end_matches('/');
    }
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [] => Err(ForgeError::NoPath {
            url: trimmed.to_owned(),
        }),
        [name] => Ok((*name).to_owned()),
        [.., owner, name] => Ok(format!("{owner}/{name}")),
    }
}

/// How long `git remote get-url origin` may run: the workspace hooks' default bound.
const GIT_LIMIT: std::time::Duration = crate::DEFAULT_HOOK_TIMEOUT;

/// The most of git's output kept (a remote URL is one short line).
const OUTPUT_LIMIT: usize = 64 * 1024;

/// Reads `git remote get-url origin` in `dir` and derives the repository identity from
/// it.
/// git runs guarded (its own process group, killed and reaped on every path), with
/// stdin closed and prompts off, for at most 60 s.
pub fn forge_identity_of_checkout(dir: &Path) -> Result<String, ForgeError> {
    let no_remote = |reason: String| ForgeError::NoRemote {
        dir: dir.display().to_string(),
        reason,
    };
    let mut command = Command::new("git");
    command
        .args(["remote", "get-url", "origin"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("GIT_TERMINAL_PROMPT", "0");
    let mut git = ProcessGuard::spawn(&mut command)
        .map_err(|err| no_remote(format!("could not run git ({err})")))?;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let ended = pipes::run_to_end(&mut git, GIT_LIMIT, &mut |stream, chunk: Chunk<'_>| {
        if let Chunk::Bytes(bytes) = chunk {
            let kept = match stream {
                Stream::Stdout => &mut stdout,
                Stream::Stderr => &mut stderr,
            };
            let take = OUTPUT_LIMIT.saturating_sub(kept.len()).min(bytes.len());
            kept.extend_from_slice(&bytes[..take]);
        }
    })
    .map_err(|err| no_remote(format!("could not run git ({err})")))?;
    let status = ended.map_err(|_| {
        no_remote(format!(
            "git ran longer than {} s and was killed",
            GIT_LIMIT.as_secs()
        ))
    })?;
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr);
        let reason = stderr.trim();
        return Err(no_remote(if reason.is_empty() {
            format!("git {}", describe_status(status))
        } else {
            reason.to_owned()
        }));
    }
    forge_identity(&String::from_utf8_lossy(&stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn ok(url: &str, expected: &str) {
        assert_eq!(forge_identity(url).as_deref(), Ok(expected), "for {url}");
    }

    #[test]
    fn the_last_two_path_segments() {
        ok("https://github.com/acme/api.git", "acme/api");
        ok("git@gitlab.com:group/sub/proj.git", "sub/proj");
        ok("http://gitlab.example.org/group/sub/project", "sub/project");
        ok("ssh://git@github.com/acme/widgets.git", "acme/widgets");
        ok("github.com:acme/widgets", "acme/widgets");
    }

    #[test]
    fn case_is_kept() {
        ok("git@GitHub.com:Acme/Widgets.git", "Acme/Widgets");
    }

    #[test]
    fn ports_and_credentials_do_not_matter() {
        ok("ssh://git@git.example.com:2222/team/repo.git", "team/repo");
        ok(
            "https://user:s3cret@github.com/acme/widgets.git",
            "acme/widgets",
        );
        ok(
            "https://x-access-token@github.com/acme/widgets",
            "acme/widgets",
        );
    }

    #[test]
    fn trailing_slash_and_no_dot_git() {
        ok("https://github.com/acme/widgets/", "acme/widgets");
        ok("https://github.com/acme/widgets.git/", "acme/widgets");
        ok("https://github.com/acme/widgets", "acme/widgets");
    }

    #[test]
    fn surrounding_whitespace_from_git_output() {
        ok("git@github.com:acme/widgets.git\n", "acme/widgets");
    }

    #[test]
    fn local_paths_have_an_identity_too() {
        // As the reference host reads `file://<workdir>/remotes/acme/widgets.git`.
        ok("/srv/git/acme/widgets.git", "acme/widgets");
        ok("file:///srv/git/acme/widgets", "acme/widgets");
        ok("/srv/repo.git", "srv/repo");
    }

    #[test]
    fn one_segment_is_that_segment() {
        ok("https://git.example.com/repo.git", "repo");
    }

    #[test]
    fn no_path_is_a_clear_error() {
        let err = forge_identity("https://github.com/").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the Git remote URL `https://github.com/` has no repository path"
        );
    }

    #[test]
    fn checkout_without_remote_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = forge_identity_of_checkout(dir.path()).unwrap_err();
        assert!(matches!(err, ForgeError::NoRemote { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("cannot read the Git remote `origin` in ")
        );
    }

    #[test]
    fn a_checkout_with_an_origin_has_its_identity() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let status = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        git(&["remote", "add", "origin", "git@GitHub.com:Acme/Widgets.git"]);
        assert_eq!(
            forge_identity_of_checkout(dir.path()).as_deref(),
            Ok("Acme/Widgets")
        );
    }
}
