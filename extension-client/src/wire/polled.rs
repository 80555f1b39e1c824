use std::io::{self, Read as _, Write as _};
use std::process::{ChildStdin, ChildStdout};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use curupira_framing::{DecodeError, FrameDecoder, FrameEncoder};
use curupira_jsonrpc::parse_message;
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};

use super::{Received, TimedOut};

/// The largest single read. Reads are this large whatever the frame in progress
/// still needs, so a small frame arrives in one `read` (what follows it waits in
/// the buffer for the next call); the buffer thus holds at most the frame in
/// progress plus this much.
const READ_CHUNK: usize = 64 * 1024;

/// Non-blocking pipes driven on the calling thread with `poll(2)`.
pub(crate) struct PolledWire {
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    encoder: FrameEncoder,
    decoder: FrameDecoder,
    /// Bytes read from stdout and not decoded yet. Kept across calls.
    inbox: BytesMut,
    /// Where each `read` lands before it is appended to `inbox`.
    chunk: Box<[u8]>,
    /// Request bytes not accepted by the pipe yet start at `outbox[written..]`.
    outbox: Vec<u8>,
    written: usize,
    /// stdout ended or broke: nothing more will come.
    stdout_done: bool,
    /// The child whose exit ends a wait, if known.
    exit: Option<ExitWatch>,
}

/// How often a wait checks whether the child exited, where no pidfd tells at once.
const EXIT_CHECK_STEP: Duration = Duration::from_millis(50);
/// How often it checks all the same with a pidfd: should its wake-up ever be missed,
/// the exit is still seen within this.
const PIDFD_CHECK_STEP: Duration = Duration::from_secs(1);

/// Watches the child's exit, so that a child that died while something it started
/// still holds its stdout is noticed at once (or within [`EXIT_CHECK_STEP`]), not at
/// the deadline: a pidfd in the `poll(2)` set on Linux (and a check every
/// [`PIDFD_CHECK_STEP`] all the same), a `waitid` check every step elsewhere.
/// Neither reaps the child: its guard does.
struct ExitWatch {
    pid: Pid,
    #[cfg(target_os = "linux")]
    pidfd: Option<rustix::fd::OwnedFd>,
}

impl ExitWatch {
    fn new(pid: u32) -> Option<ExitWatch> {
        let pid = i32::try_from(pid).ok().and_then(Pid::from_raw)?;
        Some(ExitWatch {
            pid,
            // An old kernel without `pidfd_open` falls back to the check every step.
            #[cfg(target_os = "linux")]
            pidfd: rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok(),
        })
    }

    /// Whether the child has exited (it is not reaped: a zombie until its guard waits).
    fn exited(&self) -> bool {
        let peek = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        matches!(waitid(WaitId::Pid(self.pid), peek), Ok(Some(_)))
    }

    /// How often waits wake up to check.
    fn step(&self) -> Duration {
        #[cfg(target_os = "linux")]
        if self.pidfd.is_some() {
            return PIDFD_CHECK_STEP;
        }
        EXIT_CHECK_STEP
    }

    /// Stops watching the pidfd (it said "exited" of a child that had not): checks
    /// every [`EXIT_CHECK_STEP`] from now on instead.
    fn drop_pidfd(&mut self) {
        #[cfg(target_os = "linux")]
        {
            self.pidfd = None;
        }
    }
}

/// What a wait saw.
enum Woke {
    /// A pipe is ready, or the wait was interrupted: look again.
    Pipes,
    /// The child may have exited: its pidfd is ready (`true`), or a step passed.
    MaybeExited(bool),
}

impl PolledWire {
    /// Takes the child's pipes and makes our ends of them non-blocking (our ends
    /// are open file descriptions of their own: the child's ends stay blocking).
    ///
    /// With the child's `pid`, a wait also ends when the child exits: see
    /// [`Received::Exited`].
    pub(crate) fn new(
        stdin: ChildStdin,
        stdout: ChildStdout,
        max_frame_bytes: usize,
        pid: Option<u32>,
    ) -> io::Result<Self> {
        rustix::io::ioctl_fionbio(&stdin, true)?;
        rustix::io::ioctl_fionbio(&stdout, true)?;
        Ok(Self {
            stdin: Some(stdin),
            stdout,
            encoder: FrameEncoder::with_max_body(max_frame_bytes),
            decoder: FrameDecoder::with_max_body(max_frame_bytes),
            inbox: BytesMut::new(),
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            outbox: Vec::new(),
            written: 0,
            stdout_done: false,
            exit: pid.and_then(ExitWatch::new),
        })
    }

    /// Queues `body` as one frame, writes what the pipe takes and waits for the
    /// next frame from stdout (or its end, or a failure) until `deadline`.
    pub(crate) fn exchange(
        &mut self,
        body: &[u8],
        deadline: Instant,
    ) -> Result<Received, TimedOut> {
        if let Err(err) = self.queue(body) {
            return Ok(Received::WriteFailed(err));
        }
        loop {
            if let Err(err) = self.write_some() {
                return Ok(self.after_write_failure(err));
            }
            if let Some(received) = self.decode() {
                return Ok(received);
            }
            if self.stdout_done {
                return Ok(Received::Closed);
            }
            match self.wait(deadline)? {
                Err(err) => return Ok(Received::WaitFailed(err)),
                Ok(Woke::MaybeExited(pidfd)) => {
                    if let Some(exit) = self.exit.as_mut() {
                        if exit.exited() {
                            return Ok(self.after_exit());
                        }
                        if pidfd {
                            exit.drop_pidfd();
                        }
                    }
                }
                Ok(Woke::Pipes) => {}
            }
            if let Read::Ended(received) = self.read_some() {
                return Ok(received);
            }
        }
    }

    /// Closes stdin; request bytes still queued are dropped.
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
        self.outbox = Vec::new();
        self.written = 0;
    }

    /// Appends one frame to the bytes waiting for stdin, header and body together
    /// so that one `write` sends both.
    fn queue(&mut self, body: &[u8]) -> io::Result<()> {
        let header = self
            .encoder
            .header(body.len())
            .map_err(|err| io::Error::new(io::ErrorKind::InvalidInput, err.to_string()))?;
        if !self.pending_output() {
            self.outbox.clear();
            self.written = 0;
        }
        self.outbox.reserve(header.len() + body.len());
        self.outbox.extend_from_slice(&header);
        self.outbox.extend_from_slice(body);
        Ok(())
    }

    fn pending_output(&self) -> bool {
        self.written < self.outbox.len()
    }

    /// Writes what the pipe accepts without blocking.
    fn write_some(&mut self) -> io::Result<()> {
        while self.pending_output() {
            let Some(stdin) = self.stdin.as_mut() else {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the host already closed it",
                ));
            };
            match stdin.write(&self.outbox[self.written..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.written += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// The next complete frame already read, or the framing error in its way.
    fn decode(&mut self) -> Option<Received> {
        if self.decoder.is_finished() {
            return None;
        }
        match self.decoder.decode(&mut self.inbox) {
            Ok(Some(body)) => Some(Received::Message(parse_message(&body))),
            Ok(None) => None,
            Err(err) => {
                self.stdout_done = true;
                Some(Received::BadFrame(err))
            }
        }
    }

    /// Waits until stdout has something or has ended, stdin takes more (while
    /// bytes wait for it), the child may have exited, or the deadline passes.
    /// `Ok(Err(_))` when `poll` itself failed.
    fn wait(&self, deadline: Instant) -> Result<io::Result<Woke>, TimedOut> {
        let mut remaining = deadline
            .checked_duration_since(Instant::now())
            .filter(|left| !left.is_zero())
            .ok_or(TimedOut)?;
        let stepping = self.exit.as_ref().map(ExitWatch::step);
        if let Some(step) = stepping {
            remaining = remaining.min(step);
        }
        // A deadline too far away to express is no deadline.
        let timeout = Timespec::try_from(remaining).ok();
        let mut fds = [
            PollFd::new(&self.stdout, PollFlags::IN),
            PollFd::new(&self.stdout, PollFlags::empty()),
            PollFd::new(&self.stdout, PollFlags::empty()),
        ];
        let mut watched = 1;
        if let Some(stdin) = self.stdin.as_ref().filter(|_| self.pending_output()) {
            fds[watched] = PollFd::new(stdin, PollFlags::OUT);
            watched += 1;
        }
        let mut pidfd_at = None;
        #[cfg(target_os = "linux")]
        if let Some(pidfd) = self.exit.as_ref().and_then(|exit| exit.pidfd.as_ref()) {
            fds[watched] = PollFd::new(pidfd, PollFlags::IN);
            pidfd_at = Some(watched);
            watched += 1;
        }
        match poll(&mut fds[..watched], timeout.as_ref()) {
            // Nothing ready: the deadline passed (an early wake-up polls again).
            Ok(0) if Instant::now() >= deadline => Err(TimedOut),
            Ok(0) if stepping.is_some() => Ok(Ok(Woke::MaybeExited(false))),
            Ok(_) if pidfd_at.is_some_and(|at| !fds[at].revents().is_empty()) => {
                Ok(Ok(Woke::MaybeExited(true)))
            }
            Ok(_) => Ok(Ok(Woke::Pipes)),
            Err(rustix::io::Errno::INTR) => Ok(Ok(Woke::Pipes)),
            Err(errno) => Ok(Err(errno.into())),
        }
    }

    /// What to report once the child exited: a frame it wrote before, or the end
    /// of its stdout when that came too, else [`Received::Exited`] (something it
    /// started holds its stdout open).
    fn after_exit(&mut self) -> Received {
        loop {
            if let Some(received) = self.decode() {
                return received;
            }
            if self.stdout_done {
                return Received::Closed;
            }
            match self.read_some() {
                Read::Data => {}
                Read::Nothing => return Received::Exited,
                Read::Ended(received) => return received,
            }
        }
    }

    /// What to report when stdin broke: a frame the child sent before, or the end of
    /// its stdout when it is already there (the child exited, which says more than
    /// a broken pipe), else the write failure itself.
    fn after_write_failure(&mut self, err: io::Error) -> Received {
        loop {
            if let Some(received) = self.decode() {
                return received;
            }
            if self.stdout_done {
                return Received::Closed;
            }
            match self.read_some() {
                Read::Data => {}
                Read::Nothing => return Received::WriteFailed(err),
                Read::Ended(received) => return received,
            }
        }
    }

    /// Reads what stdout has, without blocking.
    fn read_some(&mut self) -> Read {
        let read = loop {
            match self.stdout.read(&mut self.chunk) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        match read {
            Ok(0) => {
                self.stdout_done = true;
                Read::Ended(match self.decoder.decode_eof(&mut self.inbox) {
                    Ok(Some(body)) => Received::Message(parse_message(&body)),
                    Ok(None) => Received::Closed,
                    Err(err) => Received::BadFrame(err),
                })
            }
            Ok(n) => {
                self.inbox.extend_from_slice(&self.chunk[..n]);
                Read::Data
            }
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => Read::Nothing,
            Err(err) => {
                self.stdout_done = true;
                Read::Ended(Received::BadFrame(DecodeError::Io(err)))
            }
        }
    }
}

/// What one non-blocking read of stdout gave.
enum Read {
    /// Bytes, now in the inbox.
    Data,
    /// Nothing yet.
    Nothing,
    /// The end of stdout, or a read error: what is reported last.
    Ended(Received),
}
