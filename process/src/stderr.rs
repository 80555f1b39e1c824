//! This process's stderr for the threads that must never wait for it: a host's log
//! (through [`LineWriter`]) and the output of the children it supervises, which the
//! thread supervising each child forwards ([`crate::lines::Forward`]).
//!
//! A reader that stops reading the host's stderr (`curupira run 2>&1 | less`, a stalled
//! log collector) fills its pipe, and a plain `write` then waits for as long as it
//! does: a thread that supervises an agent would stop enforcing its time limits and
//! stop draining its output, so the agent would run past `timeout_seconds`. Here a
//! write goes out at once when nothing waits and the pipe has room for it (one `poll`
//! with no wait, then the `write`, which cannot block for at most `PIPE_BUF` bytes);
//! otherwise it waits, in order, in a buffer of at most [`MAX_WAITING_BYTES`] that a
//! thread of its own writes out as the reader takes it. Past that bound what comes is
//! dropped and counted, and once the reader takes output again a line says how much
//! was lost. [`flush`] waits, for a bounded time, for what waits, before the process
//! exits.
//!
//! ```
//! curupira_process::stderr::write(b"");
//! assert!(curupira_process::stderr::flush(std::time::Duration::from_secs(1)));
//! ```

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};
use std::thread;
use std::time::Duration;

/// The most bytes that wait for a stderr nobody reads; what comes beyond is dropped.
pub const MAX_WAITING_BYTES: usize = 1 << 20;

/// What a pipe takes whole once `poll` says it has room: Linux's `PIPE_BUF` (a page
/// free), elsewhere POSIX's minimum.
#[cfg(target_os = "linux")]
const PIPE_BUF: usize = 4096;
#[cfg(not(target_os = "linux"))]
const PIPE_BUF: usize = 512;

/// Writes `bytes` to the host's stderr without ever waiting for its reader (module
/// documentation).
pub fn write(bytes: &[u8]) {
    outbox().write(bytes);
}

/// Waits at most `limit` until everything written has reached stderr (or was
/// dropped). Whether it did.
pub fn flush(limit: Duration) -> bool {
    outbox().flush(limit)
}

/// What surrounds every write to stderr while it is set ([`set_around`]): a terminal's
/// status line, cleared before the bytes and drawn again after them, so that log lines
/// never run into it.
pub trait Around: Send + Sync {
    /// Calls `write` (which writes to stderr), doing what must come before and after.
    fn around(&self, write: &mut dyn FnMut());
}

/// Sets (or, with `None`, removes) what surrounds each write to stderr. While one is
/// set, every write goes through the writer thread, so the caller never waits for what
/// `around` does.
pub fn set_around(around: Option<Arc<dyn Around>>) {
    *around_slot()
        .write()
        .unwrap_or_else(PoisonError::into_inner) = around;
}

fn around_slot() -> &'static RwLock<Option<Arc<dyn Around>>> {
    static AROUND: RwLock<Option<Arc<dyn Around>>> = RwLock::new(None);
    &AROUND
}

/// Writes `bytes` (and the line saying what was dropped) to stderr, inside what is
/// set around writes.
fn write_out(bytes: &[u8], dropped: u64) {
    let mut write = || {
        let mut out = io::stderr().lock();
        let _ = out.write_all(bytes);
        if dropped > 0 {
            let _ = writeln!(
                out,
                "curupira: {dropped} bytes of log and agent output were dropped while \
                 stderr was not being read"
            );
        }
    };
    let around = around_slot()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    match around {
        Some(around) => around.around(&mut write),
        None => write(),
    }
}

fn has_around() -> bool {
    around_slot()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .is_some()
}

/// A writer that gathers one message (e.g. one log event) and hands it to [`write()`]
/// whole when dropped, so lines of two threads never interleave.
#[derive(Debug, Default)]
pub struct LineWriter(Vec<u8>);

impl LineWriter {
    /// An empty message.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Write for LineWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            write(&self.0);
        }
    }
}

fn outbox() -> &'static Outbox {
    static OUTBOX: OnceLock<Outbox> = OnceLock::new();
    OUTBOX.get_or_init(|| Outbox {
        state: Mutex::new(Waiting::default()),
        changed: Condvar::new(),
    })
}

struct Outbox {
    state: Mutex<Waiting>,
    /// Woken when bytes wait, and when the writer has written what it took.
    changed: Condvar,
}

#[derive(Default)]
struct Waiting {
    bytes: Vec<u8>,
    /// Bytes dropped since the last write that got through.
    dropped: u64,
    /// The writer thread holds bytes it has not written yet.
    busy: bool,
    /// The writer thread runs.
    started: bool,
    /// No writer thread could be started: write on the caller's thread.
    no_thread: bool,
}

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&'static self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut waiting = self.lock();
        if waiting.no_thread {
            drop(waiting);
            write_out(bytes, 0);
            return;
        }
        if waiting.bytes.is_empty() && !waiting.busy && !has_around() && has_room(bytes.len()) {
            // Nothing waits and the pipe takes it whole: in order, and at once.
            let _ = io::stderr().lock().write_all(bytes);
            return;
        }
        if waiting.bytes.len() + bytes.len() > MAX_WAITING_BYTES {
            waiting.dropped += bytes.len() as u64;
            return;
        }
        waiting.bytes.extend_from_slice(bytes);
        if !waiting.started {
            waiting.started = true;
            let spawned = thread::Builder::new()
                .name("stderr".to_owned())
                .spawn(move || self.write_waiting());
            if spawned.is_err() {
                waiting.no_thread = true;
                waiting.started = false;
                let queued = std::mem::take(&mut waiting.bytes);
                drop(waiting);
                write_out(&queued, 0);
                return;
            }
        }
        drop(waiting);
        self.changed.notify_all();
    }

    /// The writer thread: writes what waits, as the reader takes it (blocking), then
    /// says what was dropped meanwhile.
    fn write_waiting(&self) {
        loop {
            let (bytes, dropped) = {
                let mut waiting = self.lock();
                while waiting.bytes.is_empty() {
                    waiting.busy = false;
                    self.changed.notify_all();
                    waiting = self
                        .changed
                        .wait(waiting)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                waiting.busy = true;
                (
                    std::mem::take(&mut waiting.bytes),
                    std::mem::take(&mut waiting.dropped),
                )
            };
            write_out(&bytes, dropped);
        }
    }

    fn flush(&self, limit: Duration) -> bool {
        let pending = |waiting: &mut Waiting| !waiting.bytes.is_empty() || waiting.busy;
        let (mut waiting, _) = self
            .changed
            .wait_timeout_while(self.lock(), limit, pending)
            .unwrap_or_else(PoisonError::into_inner);
        !pending(&mut waiting)
    }
}

/// Whether stderr takes `len` bytes now without waiting: at most [`PIPE_BUF`] of them
/// and `poll` says it has room. A file or a terminal always has; a pipe has once its
/// reader left at least a page free.
fn has_room(len: usize) -> bool {
    #[cfg(unix)]
    {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        if len > PIPE_BUF {
            return false;
        }
        let stderr = io::stderr();
        let mut fds = [PollFd::new(&stderr, PollFlags::OUT)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        matches!(poll(&mut fds, Some(&now)), Ok(1)) && fds[0].revents().contains(PollFlags::OUT)
    }
    #[cfg(not(unix))]
    {
        let _ = len;
        true
    }
}
