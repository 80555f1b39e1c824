//! The pipes of one extension: a request frame out, the next frame from stdout back,
//! within a deadline.
//!
//! On Unix ([`Wire`] is `PolledWire`) the calling thread does the I/O itself: our ends
//! of both pipes are non-blocking and every wait is a `poll(2)` bounded by the call's
//! deadline, so a round trip costs one `write`, one `poll` and one `read`, with the
//! same two context switches as a bare pipe ping-pong and no thread handing bytes to
//! another. Elsewhere (`ThreadedWire`) a reader thread and a writer thread do blocking
//! I/O and the caller waits on a channel with a timeout. Both keep the same promises:
//!
//! - The deadline covers the whole exchange, writing the request and reading every byte
//!   of the reply: a reply dripping in one byte per millisecond times out at the
//!   deadline, not one timeout after the last byte.
//! - A child that never reads its stdin cannot block the host past the deadline.
//! - Frames are decoded with the configured maximum body: a header announcing more is
//!   an error before any body byte is kept, and nothing is decoded after a framing
//!   error.
//! - stdout is watched while the request is still being written, so what the child
//!   sends meanwhile (a bad frame, a message nobody asked for) is reported at once.
//!   A frame that arrives before the whole request went out is returned; the rest of
//!   the request stays queued and goes out before the next one.

use std::io;
use std::process::{ChildStdin, ChildStdout};
use std::thread::JoinHandle;

use curupira_framing::DecodeError;
use curupira_jsonrpc::{Message, ParseFailure};

#[cfg(unix)]
pub(super) use polled::PolledWire as Wire;
#[cfg(not(unix))]
pub(super) use threaded::ThreadedWire as Wire;

/// What came back from the extension.
#[derive(Debug)]
pub(super) enum Event {
    /// One frame body, classified.
    Message(Result<Message, ParseFailure>),
    /// The frame stream broke (a framing error or a read error); nothing more is read.
    BadFrame(DecodeError),
    /// stdout reached its end at a frame boundary.
    Closed,
    /// Writing to stdin failed.
    WriteFailed(io::Error),
    /// Waiting on the pipes failed.
    WaitFailed(io::Error),
}

/// The deadline passed before anything came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TimedOut;

/// Starts the wire for a child's stdin and stdout; the threads it started, if any.
pub(super) fn start(
    name: &str,
    stdin: ChildStdin,
    stdout: ChildStdout,
    max_frame_bytes: usize,
) -> io::Result<(Wire, Vec<JoinHandle<()>>)> {
    #[cfg(unix)]
    {
        let _ = name;
        Ok((Wire::new(stdin, stdout, max_frame_bytes)?, Vec::new()))
    }
    #[cfg(not(unix))]
    Wire::start(name, stdin, stdout, max_frame_bytes)
}

#[cfg(unix)]
mod polled {
    use std::io::{self, Read as _, Write as _};
    use std::process::{ChildStdin, ChildStdout};
    use std::time::Instant;

    use bytes::BytesMut;
    use curupira_framing::{DecodeError, FrameDecoder, FrameEncoder};
    use curupira_jsonrpc::parse_message;
    use rustix::event::{PollFd, PollFlags, Timespec, poll};

    use super::{Event, TimedOut};

    /// The largest single read. Reads are this large whatever the frame in progress
    /// still needs, so a small frame arrives in one `read` (what follows it waits in
    /// the buffer for the next call); the buffer thus holds at most the frame in
    /// progress plus this much.
    const READ_CHUNK: usize = 64 * 1024;

    /// Non-blocking pipes driven on the calling thread with `poll(2)`.
    pub(in crate::supervisor) struct PolledWire {
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
        pub(in crate::supervisor) fn new(
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
        pub(in crate::supervisor) fn exchange(
            &mut self,
            body: &[u8],
            deadline: Instant,
        ) -> Result<Event, TimedOut> {
            if let Err(err) = self.queue(body) {
                return Ok(Event::WriteFailed(err));
            }
            loop {
                if let Err(err) = self.write_some() {
                    return Ok(self.after_write_failure(err));
                }
                if let Some(event) = self.decode() {
                    return Ok(event);
                }
                if self.stdout_done {
                    return Ok(Event::Closed);
                }
                if let Err(err) = self.wait(deadline)? {
                    return Ok(Event::WaitFailed(err));
                }
                if let Read::Ended(event) = self.read_some() {
                    return Ok(event);
                }
            }
        }

        /// Closes stdin; request bytes still queued are dropped.
        pub(in crate::supervisor) fn close_stdin(&mut self) {
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
        fn decode(&mut self) -> Option<Event> {
            if self.decoder.is_finished() {
                return None;
            }
            match self.decoder.decode(&mut self.inbox) {
                Ok(Some(body)) => Some(Event::Message(parse_message(&body))),
                Ok(None) => None,
                Err(err) => {
                    self.stdout_done = true;
                    Some(Event::BadFrame(err))
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
        fn after_write_failure(&mut self, err: io::Error) -> Event {
            loop {
                if let Some(event) = self.decode() {
                    return event;
                }
                if self.stdout_done {
                    return Event::Closed;
                }
                match self.read_some() {
                    Read::Data => {}
                    Read::Nothing => return Event::WriteFailed(err),
                    Read::Ended(event) => return event,
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
                        Ok(Some(body)) => Event::Message(parse_message(&body)),
                        Ok(None) => Event::Closed,
                        Err(err) => Event::BadFrame(err),
                    })
                }
                Ok(n) => {
                    self.inbox.extend_from_slice(&self.chunk[..n]);
                    Read::Data
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => Read::Nothing,
                Err(err) => {
                    self.stdout_done = true;
                    Read::Ended(Event::BadFrame(DecodeError::Io(err)))
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
        /// The end of stdout, or a read error: the last event.
        Ended(Event),
    }
}

#[cfg(any(not(unix), test))]
mod threaded {
    use std::io;
    use std::process::{ChildStdin, ChildStdout};
    use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
    use std::thread::{self, JoinHandle};
    use std::time::Instant;

    use curupira_framing::{DecodeError, EncodeError, FrameReader, FrameWriter};
    use curupira_jsonrpc::parse_message;

    use super::{Event, TimedOut};

    /// Blocking pipes, each served by a thread of its own (`ext-NAME-out` reads frames
    /// and classifies them, `ext-NAME-in` writes the frames it is handed).
    pub(in crate::supervisor) struct ThreadedWire {
        /// `None` once closed; dropping it ends the writer, which closes stdin.
        outbox: Option<Sender<Vec<u8>>>,
        events: Receiver<Event>,
    }

    impl ThreadedWire {
        pub(in crate::supervisor) fn start(
            name: &str,
            stdin: ChildStdin,
            stdout: ChildStdout,
            max_frame_bytes: usize,
        ) -> io::Result<(Self, Vec<JoinHandle<()>>)> {
            let (event_tx, events) = mpsc::channel();
            let (outbox, inbox) = mpsc::channel::<Vec<u8>>();
            let reader = thread::Builder::new()
                .name(format!("ext-{name}-out"))
                .spawn({
                    let events = event_tx.clone();
                    move || read_frames(stdout, max_frame_bytes, &events)
                })?;
            let writer = thread::Builder::new()
                .name(format!("ext-{name}-in"))
                .spawn(move || write_frames(stdin, max_frame_bytes, &inbox, &event_tx))?;
            let wire = Self {
                outbox: Some(outbox),
                events,
            };
            Ok((wire, vec![reader, writer]))
        }

        /// Hands `body` to the writer and waits for the reader's next event until
        /// `deadline`.
        pub(in crate::supervisor) fn exchange(
            &mut self,
            body: &[u8],
            deadline: Instant,
        ) -> Result<Event, TimedOut> {
            let sent = self
                .outbox
                .as_ref()
                .is_some_and(|outbox| outbox.send(body.to_vec()).is_ok());
            if !sent {
                // The writer stopped; its reason is waiting on the channel, if it had one.
                return Ok(Event::WriteFailed(
                    self.pending_write_failure().unwrap_or_else(|| {
                        io::Error::new(io::ErrorKind::BrokenPipe, "the host already closed it")
                    }),
                ));
            }
            let timeout = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(timeout) {
                Ok(event) => Ok(event),
                Err(RecvTimeoutError::Timeout) => Err(TimedOut),
                // Both threads ended after reporting why: nothing more will come.
                Err(RecvTimeoutError::Disconnected) => Ok(Event::Closed),
            }
        }

        /// Closes stdin once the writer has written what it holds.
        pub(in crate::supervisor) fn close_stdin(&mut self) {
            self.outbox = None;
        }

        /// A write failure the writer thread already reported, if any.
        fn pending_write_failure(&self) -> Option<io::Error> {
            while let Ok(event) = self.events.try_recv() {
                if let Event::WriteFailed(err) = event {
                    return Some(err);
                }
            }
            None
        }
    }

    fn read_frames(stdout: ChildStdout, max_frame_bytes: usize, events: &Sender<Event>) {
        let mut reader = FrameReader::with_max_body(io::BufReader::new(stdout), max_frame_bytes);
        loop {
            let event = match reader.read_frame() {
                Ok(Some(body)) => Event::Message(parse_message(&body)),
                Ok(None) => Event::Closed,
                Err(DecodeError::Io(err)) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => Event::BadFrame(err),
            };
            let last = !matches!(event, Event::Message(_));
            if events.send(event).is_err() || last {
                return;
            }
        }
    }

    fn write_frames(
        stdin: ChildStdin,
        max_frame_bytes: usize,
        inbox: &Receiver<Vec<u8>>,
        events: &Sender<Event>,
    ) {
        let mut writer = FrameWriter::with_max_body(stdin, max_frame_bytes);
        for body in inbox {
            let written = writer.write_frame(&body).and_then(|()| writer.flush());
            if let Err(err) = written {
                let err = match err {
                    EncodeError::Io(err) => err,
                    other => io::Error::other(other.to_string()),
                };
                let _ = events.send(Event::WriteFailed(err));
                return;
            }
        }
        // The sender was dropped: returning drops stdin, which closes it.
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use curupira_jsonrpc::{Id, Request};

    use super::*;

    /// Both wires, so the threaded one (used off Unix) is exercised here too.
    enum AnyWire {
        Polled(polled::PolledWire),
        Threaded(threaded::ThreadedWire),
    }

    impl AnyWire {
        fn exchange(&mut self, body: &[u8], deadline: Instant) -> Result<Event, TimedOut> {
            match self {
                AnyWire::Polled(wire) => wire.exchange(body, deadline),
                AnyWire::Threaded(wire) => wire.exchange(body, deadline),
            }
        }

        fn close_stdin(&mut self) {
            match self {
                AnyWire::Polled(wire) => wire.close_stdin(),
                AnyWire::Threaded(wire) => wire.close_stdin(),
            }
        }
    }

    struct Scene {
        child: Child,
        wire: AnyWire,
    }

    impl Drop for Scene {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn scenes(script: &str, max: usize) -> Vec<(&'static str, Scene)> {
        let spawn = || {
            let mut child = Command::new("sh")
                .args(["-c", script])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let stdin = child.stdin.take().unwrap();
            let stdout = child.stdout.take().unwrap();
            (child, stdin, stdout)
        };
        let (child, stdin, stdout) = spawn();
        let polled = Scene {
            child,
            wire: AnyWire::Polled(polled::PolledWire::new(stdin, stdout, max).unwrap()),
        };
        let (child, stdin, stdout) = spawn();
        let (threaded, _threads) = threaded::ThreadedWire::start("t", stdin, stdout, max).unwrap();
        let threaded = Scene {
            child,
            wire: AnyWire::Threaded(threaded),
        };
        vec![("polled", polled), ("threaded", threaded)]
    }

    fn request(id: u64) -> Vec<u8> {
        Message::from(Request::new(id, "describe", None)).to_vec()
    }

    fn soon(seconds: f64) -> Instant {
        Instant::now() + Duration::from_secs_f64(seconds)
    }

    fn response_id(event: Result<Event, TimedOut>) -> Id {
        match event {
            Ok(Event::Message(Ok(Message::Response(response)))) => response.id,
            other => panic!("expected a response, got {other:?}"),
        }
    }

    #[test]
    fn replies_come_back_in_order_and_the_end_is_seen() {
        // Two replies in one write (so one read brings both), then the end of stdout.
        let script = r#"
            head -c 40 >/dev/null
            printf '00000026{"jsonrpc":"2.0","id":1,"result":"ok"}00000026{"jsonrpc":"2.0","id":2,"result":"ok"}'
        "#;
        for (kind, mut scene) in scenes(script, 1024) {
            assert_eq!(
                response_id(scene.wire.exchange(&request(1), soon(5.0))),
                Id::from(1),
                "{kind}"
            );
            assert_eq!(
                response_id(scene.wire.exchange(&request(2), soon(5.0))),
                Id::from(2),
                "{kind}"
            );
            let end = scene.wire.exchange(&request(3), soon(5.0));
            assert!(
                matches!(end, Ok(Event::Closed) | Ok(Event::WriteFailed(_))),
                "{kind}: {end:?}"
            );
        }
    }

    #[test]
    fn closing_stdin_ends_the_input() {
        for (kind, mut scene) in scenes("cat >/dev/null; exit 7", 1024) {
            scene.wire.close_stdin();
            let deadline = soon(5.0);
            let status = loop {
                if let Some(status) = scene.child.try_wait().unwrap() {
                    break status;
                }
                assert!(Instant::now() < deadline, "{kind}: still reading");
                std::thread::sleep(Duration::from_millis(5));
            };
            assert_eq!(status.code(), Some(7), "{kind}");
        }
    }

    #[test]
    fn a_slow_drip_times_out_at_the_deadline() {
        // A header announcing 1000 bytes, then one byte every 20 ms, forever.
        let script = "printf 000003e8; while :; do printf x; sleep 0.02; done";
        for (kind, mut scene) in scenes(script, 1024) {
            let started = Instant::now();
            let outcome = scene.wire.exchange(&request(1), soon(0.3));
            let took = started.elapsed();
            assert!(matches!(outcome, Err(TimedOut)), "{kind}: {outcome:?}");
            assert!(
                took >= Duration::from_millis(300) && took < Duration::from_secs(2),
                "{kind}: took {took:?}"
            );
        }
    }

    #[test]
    fn a_child_that_never_reads_cannot_block_the_write() {
        // A request larger than any pipe buffer, to a child that never reads.
        let body = format!(r#"{{"pad":"{}"}}"#, "x".repeat(4 << 20));
        for (kind, mut scene) in scenes("exec sleep 10", 8 << 20) {
            let started = Instant::now();
            let outcome = scene.wire.exchange(body.as_bytes(), soon(0.3));
            assert!(matches!(outcome, Err(TimedOut)), "{kind}: {outcome:?}");
            assert!(started.elapsed() < Duration::from_secs(2), "{kind}");
        }
    }

    #[test]
    fn an_oversized_frame_is_refused_from_its_header() {
        let script = "head -c 40 >/dev/null; printf 00000401; exec sleep 10";
        for (kind, mut scene) in scenes(script, 1024) {
            let started = Instant::now();
            match scene.wire.exchange(&request(1), soon(5.0)) {
                Ok(Event::BadFrame(DecodeError::TooLarge { announced, max, .. })) => {
                    assert_eq!((announced, max), (1025, 1024), "{kind}");
                }
                other => panic!("{kind}: expected a too-large frame, got {other:?}"),
            }
            assert!(started.elapsed() < Duration::from_secs(2), "{kind}");
        }
    }

    #[test]
    fn a_message_sent_while_the_request_is_stuck_is_reported_at_once() {
        // The child never reads; it sends a notification right away.
        let notification = r#"{"jsonrpc":"2.0","method":"log","params":[]}"#;
        let script = format!(
            "printf '%s' '{:08x}{notification}'; exec sleep 10",
            notification.len()
        );
        let body = format!(r#"{{"pad":"{}"}}"#, "x".repeat(4 << 20));
        for (kind, mut scene) in scenes(&script, 8 << 20) {
            let started = Instant::now();
            let outcome = scene.wire.exchange(body.as_bytes(), soon(5.0));
            assert!(
                matches!(outcome, Ok(Event::Message(Ok(Message::Notification(_))))),
                "{kind}: {outcome:?}"
            );
            assert!(started.elapsed() < Duration::from_secs(2), "{kind}");
        }
    }
}
