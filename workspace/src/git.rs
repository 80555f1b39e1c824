//! Running the `git` program for [`super`]: one guarded child per call, bounded in time,
//! its output read whole, and the one listing we parse (`git worktree list --porcelain`).

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use curupira_process::{ProcessGuard, describe_status};

use curupira_process::pipes::{self, Chunk, Stream, TimedOut};

/// Variables that would point git (or a hook's git) at another repository than the
/// folder it runs in. The host always means the config's folder.
pub(super) const REPOSITORY_OVERRIDES: [&str; 7] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

/// Whose turn it is to change the set of worktrees (add, remove, prune).
struct Turns {
    /// A change is under way.
    busy: bool,
    /// Adds announced ([`expect_add`]) so far, and those that ended (or never came).
    adds_expected: u64,
    adds_done: u64,
}

static TURNS: Mutex<Turns> = Mutex::new(Turns {
    busy: false,
    adds_expected: 0,
    adds_done: 0,
});

/// Signalled whenever a turn ends or an announced add is done.
static TURN_FREED: Condvar = Condvar::new();

fn turns() -> MutexGuard<'static, Turns> {
    // Plain counters and a flag, each changed in one step: nothing is left half done.
    TURNS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The right to change the set of worktrees, until dropped.
pub(super) struct Turn(());

impl Drop for Turn {
    fn drop(&mut self) {
        turns().busy = false;
        TURN_FREED.notify_all();
    }
}

/// The longest a removal lets announced adds go first: an add that does not come
/// (its task waiting for a thread that a removal holds) cannot hold it for ever.
const ADDS_FIRST_LIMIT: Duration = Duration::from_secs(2);

/// Waits until no turn is under way and `yields` is false (or has held it back for
/// [`ADDS_FIRST_LIMIT`]), then takes the turn.
fn take_turn(yields: impl Fn(&Turns) -> bool) -> Turn {
    let until = Instant::now() + ADDS_FIRST_LIMIT;
    let mut turns = turns();
    loop {
        let yielding = yields(&turns) && Instant::now() < until;
        if !turns.busy && !yielding {
            break;
        }
        turns = if yielding {
            let left = until.saturating_duration_since(Instant::now());
            TURN_FREED
                .wait_timeout(turns, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0
        } else {
            TURN_FREED
                .wait(turns)
                .unwrap_or_else(PoisonError::into_inner)
        };
    }
    turns.busy = true;
    Turn(())
}

/// Serialises changes to worktrees within this process. Git's own `worktree add`
/// races with another one in the same repository (it reads each listed worktree's
/// `commondir`, and a neighbour's may be half written: "failed to read
/// .git/worktrees/…/commondir"), so concurrent tasks take turns. One lock for every
/// repository keeps it simple; these calls are short next to an agent's run.
pub(super) fn worktree_changes() -> Turn {
    take_turn(|_| false)
}

/// A turn for removing a finished task's worktree: it also lets the adds announced
/// before it ([`expect_add`]) go first, since a task waits for its add and nobody waits
/// for a removal: it waits until as many announced adds ended as had been announced
/// when it began, for at most [`ADDS_FIRST_LIMIT`]. Adds announced later do not hold
/// it back, so removals never starve.
pub(super) fn worktree_removal() -> Turn {
    RemovalTicket::now().wait()
}

/// A removal's place: the adds announced before it.
struct RemovalTicket {
    adds_before: u64,
}

impl RemovalTicket {
    fn now() -> Self {
        RemovalTicket {
            adds_before: turns().adds_expected,
        }
    }

    /// Waits for the adds announced before the ticket (see [`worktree_removal`]).
    fn wait(self) -> Turn {
        take_turn(|turns| turns.adds_done < self.adds_before)
    }
}

/// An add of a worktree that is on its way (a task handed to a worker thread that will
/// prepare its worktree): removals that start meanwhile wait for it. Drop it once the
/// add ended, or when it will not happen.
#[derive(Debug)]
pub struct ExpectedAdd(());

/// Announces an add (see [`ExpectedAdd`]).
pub fn expect_add() -> ExpectedAdd {
    turns().adds_expected += 1;
    ExpectedAdd(())
}

impl Drop for ExpectedAdd {
    fn drop(&mut self) {
        turns().adds_done += 1;
        TURN_FREED.notify_all();
    }
}

/// How much of git's stderr a message quotes.
const DETAIL_LIMIT: usize = 600;

/// What one git call printed and how it ended.
#[derive(Debug)]
pub(super) struct GitOutput {
    pub(super) status: ExitStatus,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

impl GitOutput {
    /// Whether git exited with status 0.
    pub(super) fn success(&self) -> bool {
        self.status.success()
    }

    /// Why the call failed, for a message: git's stderr on one line, bounded, or its
    /// exit status when it said nothing.
    pub(super) fn detail(&self) -> String {
        let joined = self
            .stderr
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        if joined.is_empty() {
            return format!("git {}", describe_status(self.status));
        }
        bounded(&joined, DETAIL_LIMIT)
    }
}

/// `text` cut to at most `limit` bytes on a character boundary, with `…` when cut.
pub(super) fn bounded(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// `git ARGS…` as a message shows it.
pub(super) fn command_line(args: &[&OsStr]) -> String {
    let mut line = String::from("git");
    for arg in args {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// The most of git's stdout kept (a worktree listing is far smaller).
const STDOUT_LIMIT: usize = 16 * 1024 * 1024;

/// The most of git's stderr kept (a message quotes [`DETAIL_LIMIT`] of it).
const STDERR_LIMIT: usize = 64 * 1024;

/// Runs `git ARGS…` in `dir` and waits for it, at most `limit`: `Ok(Err(TimedOut))`
/// when it ran longer and was killed with its process group.
///
/// The child is guarded ([`ProcessGuard`]: own process group, killed and reaped on every
/// path); stdin is closed and prompts are off, so git never waits for a person; the
/// variables that would redirect it to another repository are removed; messages are
/// untranslated (`LC_MESSAGES=C`), because a lock reason git writes is read back. Its
/// output is read on this thread ([`pipes::run_to_end`]), the first 16 MiB of stdout
/// and 64 KiB of stderr kept.
pub(super) fn run(
    dir: &Path,
    args: &[&OsStr],
    limit: Duration,
) -> io::Result<Result<GitOutput, TimedOut>> {
    let mut command = Command::new("git");
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_MESSAGES", "C")
        .env_remove("LC_ALL")
        .env_remove("LANGUAGE");
    for name in REPOSITORY_OVERRIDES {
        command.env_remove(name);
    }
    tracing::debug!("running {} in {}", command_line(args), dir.display());
    let mut git = ProcessGuard::spawn(&mut command)?;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let ended = pipes::run_to_end(&mut git, limit, &mut |stream, chunk: Chunk<'_>| {
        let Chunk::Bytes(bytes) = chunk else {
            return;
        };
        let (kept, most) = match stream {
            Stream::Stdout => (&mut stdout, STDOUT_LIMIT),
            Stream::Stderr => (&mut stderr, STDERR_LIMIT),
        };
        let take = most.saturating_sub(kept.len()).min(bytes.len());
        kept.extend_from_slice(&bytes[..take]);
    })?;
    Ok(ended.map(|status| GitOutput {
        status,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }))
}

/// One entry of `git worktree list --porcelain`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Listed {
    /// The worktree's folder, as git recorded it.
    pub(super) path: PathBuf,
    /// The branch checked out there (`refs/heads/…`), if any.
    pub(super) branch: Option<String>,
    /// The lock reason (empty when locked without one), if locked.
    pub(super) locked: Option<String>,
    /// Whether git would prune it (its folder is gone).
    pub(super) prunable: bool,
}

/// Reads `git worktree list --porcelain`: records of `key value` lines separated by
/// blank lines. Unknown lines are ignored (newer git adds some).
pub(super) fn parse_worktree_list(text: &str) -> Vec<Listed> {
    let mut entries = Vec::new();
    let mut current: Option<Listed> = None;
    for line in text.lines() {
        if line.is_empty() {
            entries.extend(current.take());
            continue;
        }
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        if key == "worktree" {
            entries.extend(current.take());
            current = Some(Listed {
                path: PathBuf::from(value),
                ..Listed::default()
            });
            continue;
        }
        let Some(entry) = current.as_mut() else {
            continue;
        };
        match key {
            "branch" => entry.branch = Some(value.to_owned()),
            "locked" => entry.locked = Some(value.to_owned()),
            "prunable" => entry.prunable = true,
            _ => {}
        }
    }
    entries.extend(current);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_records_are_read() {
        let text = "worktree /repo\nHEAD 1111\nbranch refs/heads/main\n\n\
                    worktree /repo/.curupira/worktrees/a/b\nHEAD 2222\n\
                    branch refs/heads/curupira/a/b\nlocked initializing\n\n\
                    worktree /gone\nHEAD 3333\ndetached\nprunable gitdir file points to non-existent location\n";
        let listed = parse_worktree_list(text);
        assert_eq!(listed.len(), 3);
        assert_eq!(listed[0].path, Path::new("/repo"));
        assert_eq!(listed[0].branch.as_deref(), Some("refs/heads/main"));
        assert_eq!(listed[1].locked.as_deref(), Some("initializing"));
        assert_eq!(listed[2].branch, None);
        assert!(listed[2].prunable);
        assert!(!listed[0].prunable);
    }

    #[test]
    fn a_removal_lets_adds_announced_before_it_go_first_and_not_later_ones() {
        use std::sync::mpsc;
        use std::time::Duration;
        let earlier = expect_add();
        let ticket = RemovalTicket::now();
        let (turned, turns) = mpsc::channel();
        let removal = std::thread::spawn(move || {
            let turn = ticket.wait();
            turned.send(()).unwrap();
            drop(turn);
        });
        // Announced after the removal started waiting: not waited for.
        let later = expect_add();
        assert!(
            turns.recv_timeout(Duration::from_millis(200)).is_err(),
            "the removal went before the add announced earlier"
        );
        {
            let _add = worktree_changes();
        }
        drop(earlier);
        turns
            .recv_timeout(Duration::from_secs(10))
            .expect("the removal's turn once the earlier add is done");
        removal.join().unwrap();
        drop(later);
    }

    #[test]
    fn a_removal_waits_for_an_add_that_never_comes_only_so_long() {
        // (Other tests of this process announce and end adds too: only the bound is
        // certain here, not how long the removal yields.)
        let never = expect_add();
        let (turned, turns) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(worktree_removal());
            turned.send(()).unwrap();
        });
        turns
            .recv_timeout(ADDS_FIRST_LIMIT * 5)
            .expect("the removal's turn, although the add it waits for never comes");
        drop(never);
    }

    #[test]
    fn a_lock_without_reason_is_still_a_lock() {
        let listed = parse_worktree_list("worktree /w\nHEAD 1\nlocked\n");
        assert_eq!(listed[0].locked.as_deref(), Some(""));
    }

    #[test]
    fn details_are_one_bounded_line() {
        assert_eq!(bounded("abcdef", 4), "abcd…");
        assert_eq!(bounded("ééé", 3), "é…");
        assert_eq!(bounded("abc", 3), "abc");
    }
}
