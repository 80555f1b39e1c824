//! The host `curupira tui` runs under its dashboard: this executable as `run
//! --watch`, a child in a process group of its own ([`curupira_process::ProcessGuard`])
//! whose stdout and stderr go to a file, so nothing it prints scribbles over the
//! screen.
//!
//! It is stopped by the host's own stop protocol: SIGINT to it alone (its agents and
//! extensions have process groups of their own) starts no new task and waits for the
//! running agents; a second SIGINT stops them (SIGTERM, their grace, SIGKILL). Every
//! path that leaves without that (a panic, an error) still stops it within bounds, and
//! the guard's `Drop` kills and reaps it whatever happened; a host killed so has its
//! watchdog stop its agents.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use curupira_process::ProcessGuard;

use crate::TuiError;
use crate::dashboard::Stopping;

/// The file in the state folder that a dashboard's host writes its stdout and stderr
/// to (made anew at each start).
pub const HOST_OUTPUT: &str = "tui-host.log";

/// How `curupira tui` starts its host: a program and its arguments (this executable's
/// `run --watch …`), run in the current folder.
#[derive(Debug, Clone)]
pub struct HostCommand {
    program: PathBuf,
    args: Vec<OsString>,
    config_dir: PathBuf,
}

impl HostCommand {
    /// `program` with `args`, for the config in `config_dir` (the state folder is made
    /// as `run` makes it, with its `.gitignore`, before the host's output goes there).
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
        config_dir: impl Into<PathBuf>,
    ) -> HostCommand {
        HostCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            config_dir: config_dir.into(),
        }
    }

    /// The config's folder.
    pub(crate) fn config_dir(&self) -> &Path {
        &self.config_dir
    }
}

/// The host, running as the dashboard's child.
#[derive(Debug)]
pub(crate) struct HostChild {
    guard: ProcessGuard,
    /// How many stop requests (SIGINT) were sent.
    asked: u8,
    /// Its exit code, once reaped.
    code: Option<i32>,
}

impl HostChild {
    /// Starts `command`, its stdin empty and its output in `output` (truncated).
    pub fn spawn(command: &HostCommand, output: &Path) -> Result<HostChild, TuiError> {
        let out = File::create(output).map_err(|source| TuiError::Output {
            path: output.to_owned(),
            source,
        })?;
        let err = out.try_clone().map_err(|source| TuiError::Output {
            path: output.to_owned(),
            source,
        })?;
        let guard = ProcessGuard::spawn(
            Command::new(&command.program)
                .args(&command.args)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err),
        )
        .map_err(|source| TuiError::Host {
            program: command.program.clone(),
            source,
        })?;
        Ok(HostChild {
            guard,
            asked: 0,
            code: None,
        })
    }

    /// Its exit code once it exited (reaped then), as a shell reports it (128 plus
    /// the signal that ended it).
    pub fn exited(&mut self) -> Option<i32> {
        if self.code.is_none()
            && let Ok(Some(status)) = self.guard.try_wait()
        {
            self.code = Some(code_of(status));
        }
        self.code
    }

    /// Whether a stop was asked for.
    pub fn asked(&self) -> bool {
        self.asked > 0
    }

    /// How far its stop went.
    pub fn stopping(&self) -> Option<Stopping> {
        match self.asked {
            0 => None,
            1 => Some(Stopping::Asked),
            _ => Some(Stopping::Forced),
        }
    }

    /// Asks it to stop once more: SIGINT, as a terminal's Ctrl-C would (the first
    /// waits for the running agents, the second stops them). A host that exited is
    /// not signalled (its pid may be another's).
    pub fn ask_stop(&mut self) {
        if self.exited().is_some() {
            return;
        }
        self.asked = self.asked.saturating_add(1);
        interrupt(self.guard.id());
    }

    /// Kills it now (SIGKILL to its group) and reaps it.
    pub fn kill(&mut self) -> i32 {
        if let Some(code) = self.exited() {
            return code;
        }
        self.guard.kill();
        let code = self.guard.wait().map_or(137, code_of);
        self.code = Some(code);
        code
    }

    /// Stops it within bounds: a stop request, up to `first` for it to exit, a
    /// second request, up to `then`, and then SIGKILL. Its exit code.
    pub fn stop_within(&mut self, first: Duration, then: Duration) -> i32 {
        for wait in [first, then] {
            if let Some(code) = self.exited() {
                return code;
            }
            self.ask_stop();
            let deadline = Instant::now() + wait;
            while Instant::now() < deadline {
                if let Some(code) = self.exited() {
                    return code;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.kill()
    }
}

impl Drop for HostChild {
    /// Leaving without stopping it (a panic, an error): stopped within bounds, then the
    /// guard kills and reaps it.
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.stop_within(Duration::from_secs(2), Duration::from_secs(10));
        }
    }
}

/// SIGINT to the process `pid` alone (nothing elsewhere than Unix).
fn interrupt(pid: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// An exit status as a shell reports it: the code, or 128 plus the signal.
fn code_of(status: ExitStatus) -> i32 {
    if let Some(code) = status.code() {
        return code;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    1
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn sh(script: &str, dir: &Path) -> HostChild {
        let command = HostCommand::new("sh", ["-c", script], dir);
        HostChild::spawn(&command, &dir.join(HOST_OUTPUT)).unwrap()
    }

    #[test]
    fn a_host_that_takes_the_first_request_exits_with_its_code() {
        let dir = tempfile::tempdir().unwrap();
        let mut host = sh(
            "trap 'echo stopping; exit 130' INT; echo up; while :; do sleep 0.05; done",
            dir.path(),
        );
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(host.exited(), None);
        let started = Instant::now();
        assert_eq!(
            host.stop_within(Duration::from_secs(5), Duration::from_secs(5)),
            130
        );
        assert!(started.elapsed() < Duration::from_secs(4));
        assert_eq!(host.stopping(), Some(Stopping::Asked));
        let output = std::fs::read_to_string(dir.path().join(HOST_OUTPUT)).unwrap();
        assert_eq!(output, "up\nstopping\n");
    }

    #[test]
    fn a_host_that_ignores_every_request_is_killed_at_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut host = sh("trap '' INT; while :; do sleep 0.05; done", dir.path());
        std::thread::sleep(Duration::from_millis(100));
        let started = Instant::now();
        let code = host.stop_within(Duration::from_millis(200), Duration::from_millis(200));
        assert_eq!(code, 128 + 9);
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(host.stopping(), Some(Stopping::Forced));
    }

    #[test]
    fn a_dropped_host_is_stopped_and_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let host = sh(
            &format!("echo $$ > '{}'; exec sleep 30", pid_file.display()),
            dir.path(),
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while !pid_file.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let pid: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        drop(host);
        // Reaped: no such process (not even a zombie).
        assert!(!Path::new(&format!("/proc/{pid}")).exists() || !cfg!(target_os = "linux"));
    }
}
