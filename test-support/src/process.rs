//! Child processes in tests: a run bounded in time, waiting for a child or a condition,
//! and whether a process lives.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How a program [`run_bounded`] ran ended, and what it printed.
#[derive(Debug)]
pub struct Bounded {
    /// Its exit status; `None` when it was killed at the limit.
    pub status: Option<ExitStatus>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

/// Runs `command` (stdin empty) to its end, reading its stdout and stderr as they
/// come, for at most `limit`: past it, SIGKILL to the process group it leads (when it
/// was started as one, `process_group(0)`) and to itself. An error when it cannot
/// start.
pub fn run_bounded(command: &mut Command, limit: Duration) -> std::io::Result<Bounded> {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let read = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = Command::new("kill")
                .args(["-KILL", &format!("-{}", child.id())])
                .stderr(Stdio::null())
                .status();
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(10));
    };
    Ok(Bounded {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    })
}

/// Whether the process `pid` exists and is not a zombie (Linux: its `/proc` state;
/// elsewhere: `kill -0`, which counts zombies as alive).
///
/// ```
/// assert!(curupira_test_support::process::alive(std::process::id()));
/// ```
pub fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        return std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| rest.to_owned()))
            .is_some_and(|rest| !rest.starts_with('Z'));
    }
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Waits up to `limit` for `condition`; whether it became true.
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    condition()
}

/// A child a test started that is killed (SIGKILL) and reaped when the guard is
/// dropped, so a test that fails halfway leaves no process behind; [`Reaper::finish`]
/// waits for its end instead.
#[derive(Debug)]
pub struct Reaper(Option<Child>);

impl Reaper {
    /// Guards `child`.
    pub fn new(child: Child) -> Self {
        Reaper(Some(child))
    }

    /// Its pid.
    pub fn id(&self) -> u32 {
        self.0.as_ref().map_or(0, Child::id)
    }

    /// [`finish`]: waits for its end (at most `limit`) and returns its exit code.
    pub fn finish(mut self, limit: Duration) -> Option<i32> {
        let child = self.0.take()?;
        finish(child, limit)
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Waits for a child's end and returns its exit code; past `limit` it is killed and the
/// test fails.
pub fn finish(mut child: Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("a curupira run took longer than {limit:?}");
        }
        thread::sleep(Duration::from_millis(20));
    }
}
