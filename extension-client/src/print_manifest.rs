//! `--curupira-print-manifest`: an extension run once to print its manifest, without a
//! frame sent, bounded in time whatever its children do.
//!
//! The command runs with the flag appended, stdin closed, in its working directory,
//! for at most the given limit (then its process group is killed). Its stdout (at most
//! [`MAX_MANIFEST_BYTES`] kept) and stderr (at most [`MAX_STDERR_BYTES`]) are read by a
//! thread each; after the extension's own exit the pipes are read for at most
//! [`PIPE_GRACE`] more. A process it started outside its process group (`setsid`)
//! that still holds a pipe then is left to it: what was printed before the exit is
//! used, and the reader threads are never joined without a deadline (a reader still
//! blocked ends when that process closes the pipe, or with this process). Checking
//! what was printed is the caller's (`curupira-manifest`).

use std::io::Read;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::{LaunchCommand, ProcessGuard};

/// The flag an extension answers by printing its manifest.
pub const FLAG: &str = "--curupira-print-manifest";
/// Most stdout bytes kept.
pub const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;
/// Most stderr bytes kept.
pub const MAX_STDERR_BYTES: u64 = 64 * 1024;
/// How long the pipes are read after the extension exited (or was killed), for the
/// end of what it wrote.
pub const PIPE_GRACE: Duration = Duration::from_millis(500);
/// How often the end of the readers is checked during [`PIPE_GRACE`].
const PIPE_STEP: Duration = Duration::from_millis(5);

/// What one run with [`FLAG`] left.
#[derive(Debug)]
pub struct Printed {
    /// How it ended; `None` when it ran past the limit and was killed.
    pub status: Option<ExitStatus>,
    /// What it printed on stdout (at most [`MAX_MANIFEST_BYTES`]).
    pub stdout: Vec<u8>,
    /// Whether stdout reached its end within [`PIPE_GRACE`] of the exit (`false`: a
    /// process it started still holds it).
    pub stdout_ended: bool,
    /// What it printed on stderr (at most [`MAX_STDERR_BYTES`], lossily decoded).
    pub stderr: String,
}

/// Runs `launch` with [`FLAG`] for at most `limit`. An error when it cannot start
/// (see [`LaunchCommand::start_failure`] for the sentence).
///
/// ```
/// # #[cfg(unix)] {
/// use std::time::Duration;
/// use curupira_client::LaunchCommand;
/// use curupira_client::print_manifest::print_manifest;
///
/// let echo = LaunchCommand::new("sh", ".").args(["-c", "echo \"name = $0\""]);
/// let printed = print_manifest(&echo, Duration::from_secs(5))?;
/// assert!(printed.status.is_some_and(|status| status.success()));
/// assert_eq!(printed.stdout, b"name = --curupira-print-manifest\n");
/// # }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn print_manifest(launch: &LaunchCommand, limit: Duration) -> std::io::Result<Printed> {
    let mut command = launch.command();
    command
        .arg(FLAG)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut guard = ProcessGuard::spawn(&mut command)?;
    let stdout = guard
        .take_stdout()
        .map(|stdout| Drain::start(stdout, MAX_MANIFEST_BYTES));
    let stderr = guard
        .take_stderr()
        .map(|stderr| Drain::start(stderr, MAX_STDERR_BYTES));
    let status = guard.wait_for(limit);
    // Killing the group also ends whatever the extension started in it, which may
    // hold the pipes the readers are waiting on; what it started elsewhere may not.
    drop(guard);
    let deadline = Instant::now() + PIPE_GRACE;
    let (stdout, stdout_ended) = stdout.map_or((Vec::new(), true), |d| d.finish(deadline));
    let (stderr, _) = stderr.map_or((Vec::new(), true), |d| d.finish(deadline));
    Ok(Printed {
        status,
        stdout,
        stdout_ended,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

/// A pipe read to its end, or to `limit` bytes, by a thread of its own; what it read
/// is shared, so it can be taken without joining the thread.
struct Drain {
    bytes: Arc<Mutex<Vec<u8>>>,
    thread: JoinHandle<()>,
}

impl Drain {
    fn start(pipe: impl Read + Send + 'static, limit: u64) -> Drain {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&bytes);
        let thread = thread::spawn(move || {
            let mut pipe = pipe.take(limit);
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => shared
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .extend_from_slice(&chunk[..n]),
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            // Whatever is left past the limit is drained and dropped, so the writer
            // never blocks on a full pipe.
            let _ = std::io::copy(pipe.get_mut(), &mut std::io::sink());
        });
        Drain { bytes, thread }
    }

    /// What was read by `deadline`, and whether the pipe reached its end by then.
    fn finish(self, deadline: Instant) -> (Vec<u8>, bool) {
        while !self.thread.is_finished() && Instant::now() < deadline {
            thread::sleep(PIPE_STEP);
        }
        let ended = self.thread.is_finished();
        if ended {
            let _ = self.thread.join();
        }
        let bytes = std::mem::take(&mut *self.bytes.lock().unwrap_or_else(PoisonError::into_inner));
        (bytes, ended)
    }
}
