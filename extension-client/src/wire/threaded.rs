use std::io;
use std::process::{ChildStdin, ChildStdout};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::Instant;

use curupira_framing::{DecodeError, EncodeError, FrameReader, FrameWriter};
use curupira_jsonrpc::parse_message;

use super::{Received, TimedOut};

/// Blocking pipes, each served by a thread of its own (`ext-NAME-out` reads frames
/// and classifies them, `ext-NAME-in` writes the frames it is handed).
pub(crate) struct ThreadedWire {
    /// `None` once closed; dropping it ends the writer, which closes stdin.
    outbox: Option<Sender<Vec<u8>>>,
    received: Receiver<Received>,
}

impl ThreadedWire {
    pub(crate) fn start(
        name: &str,
        stdin: ChildStdin,
        stdout: ChildStdout,
        max_frame_bytes: usize,
    ) -> io::Result<(Self, Vec<JoinHandle<()>>)> {
        let (received_tx, received) = mpsc::channel();
        let (outbox, inbox) = mpsc::channel::<Vec<u8>>();
        let reader = thread::Builder::new()
            .name(format!("ext-{name}-out"))
            .spawn({
                let received = received_tx.clone();
                move || read_frames(stdout, max_frame_bytes, &received)
            })?;
        let writer = thread::Builder::new()
            .name(format!("ext-{name}-in"))
            .spawn(move || write_frames(stdin, max_frame_bytes, &inbox, &received_tx))?;
        let wire = Self {
            outbox: Some(outbox),
            received,
        };
        Ok((wire, vec![reader, writer]))
    }

    /// Hands `body` to the writer and waits for the reader's next report until
    /// `deadline`.
    pub(crate) fn exchange(
        &mut self,
        body: &[u8],
        deadline: Instant,
    ) -> Result<Received, TimedOut> {
        let sent = self
            .outbox
            .as_ref()
            .is_some_and(|outbox| outbox.send(body.to_vec()).is_ok());
        if !sent {
            // The writer stopped; its reason is waiting on the channel, if it had one.
            return Ok(Received::WriteFailed(
                self.pending_write_failure().unwrap_or_else(|| {
                    io::Error::new(io::ErrorKind::BrokenPipe, "the host already closed it")
                }),
            ));
        }
        let timeout = deadline.saturating_duration_since(Instant::now());
        match self.received.recv_timeout(timeout) {
            Ok(received) => Ok(received),
            Err(RecvTimeoutError::Timeout) => Err(TimedOut),
            // Both threads ended after reporting why: nothing more will come.
            Err(RecvTimeoutError::Disconnected) => Ok(Received::Closed),
        }
    }

    /// Closes stdin once the writer has written what it holds.
    pub(crate) fn close_stdin(&mut self) {
        self.outbox = None;
    }

    /// A write failure the writer thread already reported, if any.
    fn pending_write_failure(&self) -> Option<io::Error> {
        while let Ok(received) = self.received.try_recv() {
            if let Received::WriteFailed(err) = received {
                return Some(err);
            }
        }
        None
    }
}

fn read_frames(stdout: ChildStdout, max_frame_bytes: usize, out: &Sender<Received>) {
    let mut reader = FrameReader::with_max_body(io::BufReader::new(stdout), max_frame_bytes);
    loop {
        let received = match reader.read_frame() {
            Ok(Some(body)) => Received::Message(parse_message(&body)),
            Ok(None) => Received::Closed,
            Err(DecodeError::Io(err)) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => Received::BadFrame(err),
        };
        let last = !matches!(received, Received::Message(_));
        if out.send(received).is_err() || last {
            return;
        }
    }
}

fn write_frames(
    stdin: ChildStdin,
    max_frame_bytes: usize,
    inbox: &Receiver<Vec<u8>>,
    out: &Sender<Received>,
) {
    let mut writer = FrameWriter::with_max_body(stdin, max_frame_bytes);
    for body in inbox {
        let written = writer.write_frame(&body).and_then(|()| writer.flush());
        if let Err(err) = written {
            let err = match err {
                EncodeError::Io(err) => err,
                other => io::Error::other(other.to_string()),
            };
            let _ = out.send(Received::WriteFailed(err));
            return;
        }
    }
    // The sender was dropped: returning drops stdin, which closes it.
}
