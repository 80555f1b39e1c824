use std::io::{self, Read as _, Write as _};
use std::process::{ChildStdin, ChildStdout};
use std::time::Instant;

use bytes::BytesMut;
use curupira_framing::{DecodeError, FrameDecoder, FrameEncoder};
use curupira_jsonrpc::parse_message;
use rustix::event::{PollFd, PollFlags, Timespec, poll};

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
}

impl PolledWire {
    /// Takes the child's pipes and makes our ends of them non-blocking (our ends
    /// are open file descriptions of their own: the child's ends stay blocking).
    pub(crate) fn new(
        stdin: ChildStdin,
        stdout: ChildStdout,
        max_frame_bytes: usize,
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
            if let Err(err) = self.wait(deadline)? {
                return Ok(Received::WaitFailed(err));
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
    /// bytes wait for it), or the deadline passes. `Ok(Err(_))` when `poll`
    /// itself failed.
    fn wait(&self, deadline: Instant) -> Result<io::Result<()>, TimedOut> {
        let remaining = deadline
            .checked_duration_since(Instant::now())
            .filter(|left| !left.is_zero())
            .ok_or(TimedOut)?;
        // A deadline too far away to express is no deadline.
        let timeout = Timespec::try_from(remaining).ok();
        let mut fds = [
            PollFd::new(&self.stdout, PollFlags::IN),
            PollFd::new(&self.stdout, PollFlags::empty()),
        ];
        let mut watched = 1;
        if let Some(stdin) = self.stdin.as_ref().filter(|_| self.pending_output()) {
            fds[1] = PollFd::new(stdin, PollFlags::OUT);
            watched = 2;
        }
        match poll(&mut fds[..watched], timeout.as_ref()) {
            // Nothing ready: the deadline passed (an early wake-up polls again).
            Ok(0) if Instant::now() >= deadline => Err(TimedOut),
            Ok(_) => Ok(Ok(())),
            Err(rustix::io::Errno::INTR) => Ok(Ok(())),
            Err(errno) => Ok(Err(errno.into())),
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
