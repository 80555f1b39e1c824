//! A child process that is always killed and reaped: [`ProcessGuard`].
//!
//! The one process rule every Curupira crate that starts a child follows: the child
//! leads a process group of its own (on Unix), a bounded wait or a graceful
//! [`terminate`](ProcessGuard::terminate) (SIGTERM, a grace period, then SIGKILL of the
//! whole group) ends it, and `Drop` kills the group and reaps the child whatever
//! happened, panics included. `curupira-client` starts extensions with it and
//! `spirit-runtime` starts Node.js with it; nothing here knows either. Linux and macOS
//! do the group handling through `rustix`; elsewhere only the child itself is killed.
//!
//! Beside the guard, what every part of a host that supervises children shares:
//! [`lock`] (advisory file locks that die with their process) and [`stop`] (counted
//! stop requests) always; with the `supervise` feature, `pipes` (a child's three pipes
//! driven in one `poll`), `lines` (its output forwarded as prefixed lines), `stderr`
//! (a stderr that never blocks its writer) and `watchdog` (the process that stops what
//! a dead host left running); with `signals`, SIGINT and SIGTERM counted as stop
//! requests.
//!
//! ```
//! # #[cfg(unix)] {
//! use std::process::Command;
//! use std::time::Duration;
//! use curupira_process::{ProcessGuard, describe_status};
//!
//! let mut done = ProcessGuard::spawn(&mut Command::new("true"))?;
//! let status = done.wait_for(Duration::from_secs(5)).expect("true exits at once");
//! assert_eq!(describe_status(status), "exited with status 0");
//! # }
//! # Ok::<(), std::io::Error>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod lock;
pub mod stop;

#[cfg(feature = "supervise")]
pub mod lines;
#[cfg(feature = "supervise")]
pub mod pipes;
#[cfg(feature = "supervise")]
pub mod stderr;
#[cfg(feature = "supervise")]
pub mod watchdog;

use std::io;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

/// How often a bounded wait checks on the child, at the most: it looks after
/// [`FIRST_STEP`] and doubles the pause up to this, so a child that exits at once (an
/// extension answering `shutdown`) is reaped within a fraction of a millisecond, and
/// one that takes its time costs a check every 5 ms.
const POLL_STEP: Duration = Duration::from_millis(5);

/// The first pause of a bounded wait.
const FIRST_STEP: Duration = Duration::from_micros(100);

/// Owns a child process, which leads a process group of its own (on Unix): its `Drop`
/// kills the group and reaps the child, so no path, panics included, leaves a zombie
/// or a running process behind.
///
/// The group matters: an extension started with `npx` starts `node`, and killing only
/// `npx` would leave `node` running. A Ctrl-C in the terminal reaches only the parent's
/// group, so the parent decides when its children stop. Whatever the child leaves in
/// its group when it exits is killed before the child is reaped (see
/// [`try_wait`](Self::try_wait)). [`terminate`](Self::terminate) asks the group to
/// stop (SIGTERM) before it kills it.
///
/// ```
/// # #[cfg(unix)] {
/// use std::process::Command;
/// use std::time::Duration;
/// use curupira_process::ProcessGuard;
///
/// let mut sleeper = ProcessGuard::spawn(Command::new("sleep").arg("30"))?;
/// assert_eq!(sleeper.wait_for(Duration::from_millis(20)), None);
/// drop(sleeper); // killed and reaped
/// # }
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct ProcessGuard {
    child: Child,
    /// Set once the child was reaped.
    status: Option<ExitStatus>,
}

impl ProcessGuard {
    /// Starts `command` in a process group of its own (Unix) and guards the child.
    pub fn spawn(command: &mut Command) -> io::Result<Self> {
        own_process_group(command);
        let child = command.spawn()?;
        Ok(ProcessGuard {
            child,
            status: None,
        })
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Takes the child's stdin, when it was piped and not taken yet.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// Takes the child's stdout, when it was piped and not taken yet.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Takes the child's stderr, when it was piped and not taken yet.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Kills the process group (Unix) and the child itself. Does nothing once the child
    /// is reaped: its group was killed then, and its id may since belong to someone
    /// else.
    pub fn kill(&mut self) {
        if self.status.is_none() {
            kill_group(&self.child);
            let _ = self.child.kill();
        }
    }

    /// Asks the child and its process group to stop, then makes sure they do: SIGTERM
    /// to the group (Unix), a wait of at most `grace` for the child to exit, then
    /// SIGKILL to the group; the child is always reaped.
    ///
    /// The grace is the child's: when it exits earlier, what it left in its group is
    /// killed at once, before it is reaped, as [`try_wait`](Self::try_wait) always
    /// does — a process that wants its helpers to clean up waits for them. So a
    /// grandchild that ignores SIGTERM ends with the group, either when the child
    /// exits or when the grace runs out. Elsewhere than Unix there is no SIGTERM: the
    /// child is killed at once.
    ///
    /// Returns the child's status (already known if it was reaped before: then nothing
    /// is signalled, its id may belong to someone else).
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// use std::process::Command;
    /// use std::time::Duration;
    /// use curupira_process::ProcessGuard;
    ///
    /// let mut sleeper = ProcessGuard::spawn(Command::new("sleep").arg("30"))?;
    /// let status = sleeper.terminate(Duration::from_secs(5))?;
    /// assert_eq!(curupira_process::describe_status(status), "was killed by signal 15");
    /// # }
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn terminate(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        #[cfg(unix)]
        {
            signal_group(&self.child, rustix::process::Signal::TERM);
            if let Some(status) = self.wait_for(grace) {
                return Ok(status);
            }
        }
        #[cfg(not(unix))]
        let _ = grace;
        self.kill();
        self.wait()
    }

    /// The exit status if the child has exited, without blocking. An exited child's
    /// group is killed before the child is reaped, at the one moment that is safe:
    /// while the exited leader is a zombie its id cannot be reused, so the signal
    /// cannot reach a stranger.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let status = try_wait_and_kill_group(&mut self.child)?;
        self.status = status;
        Ok(status)
    }

    /// Waits at most `limit` for the child to exit (see [`try_wait`](Self::try_wait));
    /// `None` when it is still running then, or cannot be waited for.
    pub fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now().checked_add(limit);
        let mut step = FIRST_STEP;
        loop {
            match self.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if deadline.is_none_or(|deadline| Instant::now() < deadline) => {
                    thread::sleep(step);
                    step = (step * 2).min(POLL_STEP);
                }
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Waits for the child to exit, however long it takes; what it left in its group
    /// is killed before it is reaped. Call [`kill`](Self::kill) first for a prompt
    /// end.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        #[cfg(unix)]
        block_until_exited(&self.child);
        let status = self.child.wait()?;
        self.status = Some(status);
        Ok(status)
    }
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        self.kill();
        let _ = self.wait();
    }
}

/// Puts a command's child in a new process group (Unix); [`ProcessGuard::spawn`] does
/// it itself, this is for a caller that spawns the command another way.
pub fn own_process_group(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    #[cfg(not(unix))]
    let _ = command;
}

/// Blocks until the child has exited, without reaping it, then kills what it left in
/// its process group. Returns early (leaving the rest to `wait`) if the child cannot be
/// waited for this way.
#[cfg(unix)]
fn block_until_exited(child: &Child) {
    use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
    let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
        return;
    };
    loop {
        match waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {
            Ok(Some(_)) => return kill_left_in_group(child),
            Err(rustix::io::Errno::INTR) => {}
            // Already reaped, or not ours: let `wait` say so.
            Ok(None) | Err(_) => return,
        }
    }
}

/// `try_wait` that also kills what the child left in its process group, after it has
/// exited and before it is reaped. Elsewhere than Unix this is `try_wait`.
fn try_wait_and_kill_group(child: &mut Child) -> io::Result<Option<ExitStatus>> {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
        let pid = i32::try_from(child.id()).ok().and_then(Pid::from_raw);
        if let Some(pid) = pid {
            let peek = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
            match waitid(WaitId::Pid(pid), peek) {
                Ok(Some(_)) => kill_left_in_group(child),
                Ok(None) => return Ok(None),
                // Already reaped elsewhere, or not ours: let `try_wait` say so.
                Err(_) => {}
            }
        }
    }
    child.try_wait()
}

/// Sends SIGKILL to the process group a child leads. Does nothing elsewhere than Unix.
fn kill_group(child: &Child) {
    #[cfg(unix)]
    signal_group(child, rustix::process::Signal::KILL);
    #[cfg(not(unix))]
    let _ = child;
}

/// Sends SIGKILL to the process group of a child that has exited and is not reaped
/// yet: what it left there. The child itself, a zombie, needs no signal.
#[cfg(unix)]
fn kill_left_in_group(child: &Child) {
    if let Some(pid) = group_leader(child) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// The child's pid as the leader of its process group; never 1 (`kill(-1)` means
/// "every process").
#[cfg(unix)]
fn group_leader(child: &Child) -> Option<rustix::process::Pid> {
    i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .filter(|pid| pid.as_raw_nonzero().get() > 1)
}

/// Sends `signal` to the process group a child leads, and to the child itself in case
/// it left that group. Only for a child not reaped yet (its id is still its own).
#[cfg(unix)]
fn signal_group(child: &Child, signal: rustix::process::Signal) {
    if let Some(pid) = group_leader(child) {
        let _ = rustix::process::kill_process_group(pid, signal);
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// How a process ended, for a message: `exited with status 3`, `was killed by signal
/// 9`.
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    "ended".to_owned()
}

#[cfg(all(test, unix))]
mod tests {
    use std::path::Path;

    use super::*;

    /// Whether a process with this id still exists (a zombie counts).
    fn exists(pid: u32) -> bool {
        Path::new(&format!("/proc/{pid}")).exists()
    }

    /// Whether `/proc/<pid>/stat` says the process is a zombie (dead, not yet reaped).
    fn is_zombie(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let after_name = stat.rsplit_once(") ")?.1.to_owned();
                after_name.chars().next()
            })
            .is_some_and(|state| state == 'Z')
    }

    /// Waits until `pid` is gone or a zombie of someone else's (SIGKILL is delivered
    /// asynchronously and an orphan is reaped by whoever adopted it).
    fn assert_ends(pid: u32, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while exists(pid) && !is_zombie(pid) {
            assert!(Instant::now() < deadline, "{what} survived");
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// A shell that starts a background `sleep` in its group, writes its pid, and
    /// runs `then`.
    fn straggler_script(pid_file: &Path, then: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(
            "sleep 30 & echo $! > '{}'; {then}",
            pid_file.display()
        ));
        command
    }

    fn read_pid(pid_file: &Path) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(pid) = std::fs::read_to_string(pid_file)
                .ok()
                .and_then(|text| text.trim().parse().ok())
            {
                return pid;
            }
            assert!(Instant::now() < deadline, "no pid was written");
            thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn what_a_child_leaves_in_its_group_is_killed_before_it_is_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("straggler.pid");
        let mut guard = ProcessGuard::spawn(&mut straggler_script(&pid_file, "exit 0")).unwrap();
        let status = guard
            .wait_for(Duration::from_secs(5))
            .expect("the shell exits");
        assert!(status.success());
        assert_ends(read_pid(&pid_file), "the background `sleep`");
    }

    #[test]
    fn a_blocking_wait_also_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("straggler.pid");
        let mut guard = ProcessGuard::spawn(&mut straggler_script(&pid_file, "exit 4")).unwrap();
        assert_eq!(guard.wait().unwrap().code(), Some(4));
        assert_eq!(guard.try_wait().unwrap().and_then(|s| s.code()), Some(4));
        assert_ends(read_pid(&pid_file), "the background `sleep`");
    }

    #[test]
    fn dropping_the_guard_kills_the_group_and_reaps() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("straggler.pid");
        let guard = ProcessGuard::spawn(&mut straggler_script(&pid_file, "exec sleep 30")).unwrap();
        let leader = guard.id();
        let straggler = read_pid(&pid_file);
        drop(guard);
        assert!(!exists(leader), "the child was reaped");
        assert_ends(straggler, "the background `sleep`");
    }

    /// A shell that ignores SIGTERM (and so does what it starts), starts a background
    /// `sleep` in its group, writes its pid, and runs `then`.
    fn stubborn_script(pid_file: &Path, then: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(
            "trap '' TERM; sleep 30 & echo $! > '{}'; {then}",
            pid_file.display()
        ));
        command
    }

    #[test]
    fn terminate_ends_a_child_that_stops_on_sigterm_without_the_grace() {
        let mut guard = ProcessGuard::spawn(Command::new("sleep").arg("30")).unwrap();
        let started = Instant::now();
        let status = guard.terminate(Duration::from_secs(20)).unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no grace spent"
        );
        assert_eq!(describe_status(status), "was killed by signal 15");
        // Reaped: the status is remembered and nothing is signalled again.
        assert_eq!(guard.terminate(Duration::ZERO).unwrap(), status);
        assert_eq!(guard.try_wait().unwrap(), Some(status));
    }

    #[test]
    fn terminate_kills_a_group_that_ignores_sigterm_after_the_grace() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("straggler.pid");
        let mut guard = ProcessGuard::spawn(&mut stubborn_script(&pid_file, "wait")).unwrap();
        let straggler = read_pid(&pid_file);
        let grace = Duration::from_millis(300);
        let started = Instant::now();
        let status = guard.terminate(grace).unwrap();
        let took = started.elapsed();
        assert!(took >= grace, "the grace was kept ({took:?})");
        assert!(took < Duration::from_secs(10), "then killed ({took:?})");
        assert_eq!(describe_status(status), "was killed by signal 9");
        assert_ends(straggler, "the background `sleep` that ignores SIGTERM");
    }

    #[test]
    fn terminate_kills_what_ignores_sigterm_when_the_child_stops() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("straggler.pid");
        // The background `sleep` ignores SIGTERM; the shell takes it again before it
        // writes the pid, and then dies of it (itself or as the `sleep` it became).
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(
            "trap '' TERM; sleep 30 & pid=$!; trap - TERM; echo $pid > '{}'; exec sleep 30",
            pid_file.display()
        ));
        let mut guard = ProcessGuard::spawn(&mut command).unwrap();
        let straggler = read_pid(&pid_file);
        let started = Instant::now();
        let status = guard.terminate(Duration::from_secs(20)).unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no grace spent"
        );
        assert_eq!(describe_status(status), "was killed by signal 15");
        assert_ends(straggler, "the background `sleep` that ignores SIGTERM");
    }

    #[test]
    fn statuses_are_described() {
        let mut guard = ProcessGuard::spawn(Command::new("sh").args(["-c", "exit 3"])).unwrap();
        let status = guard.wait().unwrap();
        assert_eq!(describe_status(status), "exited with status 3");
        let mut guard = ProcessGuard::spawn(Command::new("sleep").arg("30")).unwrap();
        guard.kill();
        assert_eq!(
            describe_status(guard.wait().unwrap()),
            "was killed by signal 9"
        );
    }
}

/// The README's example, run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
