//! The forge identity of a repository (`${repository}` in prompts), derived from a Git
//! remote URL.
//!
//! Every URL form Git accepts becomes `host/path`: `scheme://[user@]host[:port]/path`
//! and the scp-like `user@host:path` alike. The host is lowercased (host names are
//! case-insensitive); the path keeps its case (forges differ on that). The user, the
//! password, the port, trailing slashes and one trailing `.git` are dropped, so
//! `git@github.com:Acme/Widgets.git` and `https://github.com/Acme/Widgets/` are both
//! `github.com/Acme/Widgets`. Parsing is `gix-url`'s, which knows Git's own rules for
//! telling an scp-like address from a local path.

use std::path::Path;
use std::process::{Command, Stdio};

use curupira_client::{ProcessGuard, describe_status};

use crate::agent::pipes::{self, Chunk, Stream};

/// Why no forge identity could be derived.
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
    /// The URL has no host (a local path or a `file://` URL).
    #[error(
        "the Git remote URL `{url}` names no host (a local path or file:// URL has no forge identity)"
    )]
    NoHost {
        /// The URL as given.
        url: String,
    },
    /// The URL has a host but no repository path.
    #[error("the Git remote URL `{url}` has no repository path after the host")]
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

/// Turns a Git remote URL into its forge identity, `host/path`.
///
/// ```
/// # use curupira_host::forge::forge_identity;
/// assert_eq!(
///     forge_identity("https://user:token@GitHub.com:443/acme/widgets.git/").unwrap(),
///     "github.com/acme/widgets",
/// );
/// ```
pub fn forge_identity(remote_url: &str) -> Result<String, ForgeError> {
    let trimmed = remote_url.trim();
    let url = gix_url::parse(trimmed).map_err(|err| ForgeError::Unparsable {
        url: trimmed.to_owned(),
        reason: err.to_string(),
    })?;
    let host = match url.host() {
        Some(host) if !host.is_empty() => host.to_ascii_lowercase(),
        _ => {
            return Err(ForgeError::NoHost {
                url: trimmed.to_owned(),
            });
        }
    };
    let raw_path = String::from_utf8_lossy(url.path.as_ref());
    let mut path = raw_path.trim_matches('/');
    if let Some(stripped) = path.strip_suffix(".git") {
        path = stripped.trim_end_matches('/');
    }
    if path.is_empty() {
        return Err(ForgeError::NoPath {
            url: trimmed.to_owned(),
        });
    }
    Ok(format!("{host}/{path}"))
}

/// How long `git remote get-url origin` may run: the workspace hooks' default bound.
const GIT_LIMIT: std::time::Duration = crate::workspace::DEFAULT_HOOK_TIMEOUT;

/// The most of git's output kept (a remote URL is one short line).
const OUTPUT_LIMIT: usize = 64 * 1024;

/// Reads `git remote get-url origin` in `dir` and derives the forge identity from it.
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
    fn https() {
        ok(
            "https://github.com/acme/widgets.git",
            "github.com/acme/widgets",
        );
        ok(
            "http://gitlab.example.org/group/sub/project",
            "gitlab.example.org/group/sub/project",
        );
    }

    #[test]
    fn ssh_url() {
        ok(
            "ssh://git@github.com/acme/widgets.git",
            "github.com/acme/widgets",
        );
    }

    #[test]
    fn scp_like() {
        ok("git@github.com:Acme/Widgets.git", "github.com/Acme/Widgets");
        ok("github.com:acme/widgets", "github.com/acme/widgets");
    }

    #[test]
    fn port_is_dropped() {
        ok(
            "ssh://git@git.example.com:2222/team/repo.git",
            "git.example.com/team/repo",
        );
        ok(
            "https://git.example.com:8443/team/repo",
            "git.example.com/team/repo",
        );
    }

    #[test]
    fn credentials_are_dropped() {
        ok(
            "https://user:s3cret@github.com/acme/widgets.git",
            "github.com/acme/widgets",
        );
        ok(
            "https://x-access-token@github.com/acme/widgets",
            "github.com/acme/widgets",
        );
    }

    #[test]
    fn trailing_slash_and_no_dot_git() {
        ok(
            "https://github.com/acme/widgets/",
            "github.com/acme/widgets",
        );
        ok(
            "https://github.com/acme/widgets.git/",
            "github.com/acme/widgets",
        );
        ok("https://github.com/acme/widgets", "github.com/acme/widgets");
    }

    #[test]
    fn host_is_lowercased_path_keeps_case() {
        ok("https://GitHub.COM/Acme/Widgets", "github.com/Acme/Widgets");
    }

    #[test]
    fn surrounding_whitespace_from_git_output() {
        ok(
            "git@github.com:acme/widgets.git\n",
            "github.com/acme/widgets",
        );
    }

    #[test]
    fn local_paths_have_no_forge() {
        assert!(matches!(
            forge_identity("/srv/git/repo.git"),
            Err(ForgeError::NoHost { .. })
        ));
        assert!(matches!(
            forge_identity("file:///srv/git/repo"),
            Err(ForgeError::NoHost { .. })
        ));
    }

    #[test]
    fn host_without_path() {
        let err = forge_identity("https://github.com/").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the Git remote URL `https://github.com/` has no repository path after the host"
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
            Ok("github.com/Acme/Widgets")
        );
    }
}
