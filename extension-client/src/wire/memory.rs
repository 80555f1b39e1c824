use std::io;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::Instant;

use bytes::BytesMut;
use curupira_framing::{FrameDecoder, FrameEncoder};
use curupira_jsonrpc::parse_message;

use super::{Received, TimedOut};
use crate::memory::{PipeReader, PipeWriter};

/// Memory pipes to an extension in this process: a request is one chunk sent to the
/// extension's reader, replies are read from chunks with `recv_timeout`.
pub(crate) struct MemoryWire {
    /// `None` once closed: dropping it is the extension's end of input.
    output: Option<PipeWriter>,
    input: Receiver<Vec<u8>>,
    encoder: FrameEncoder,
    decoder: FrameDecoder,
    /// Bytes received and not decoded yet. Kept across calls.
    inbox: BytesMut,
    /// The extension's output ended or broke: nothing more will come.
    input_done: bool,
}

impl MemoryWire {
    pub(crate) fn new(output: PipeWriter, input: PipeReader, max_frame_bytes: usize) -> Self {
        MemoryWire {
            output: Some(output),
            input: input.into_receiver(),
            encoder: FrameEncoder::with_max_body(max_frame_bytes),
            decoder: FrameDecoder::with_max_body(max_frame_bytes),
            inbox: BytesMut::new(),
            input_done: false,
        }
    }

    /// Sends `body` as one frame and waits for the next frame until `deadline`.
    pub(crate) fn exchange(
        &mut self,
        body: &[u8],
        deadline: Instant,
    ) -> Result<Received, TimedOut> {
        if let Err(err) = self.send(body) {
            return Ok(self.after_write_failure(err));
        }
        loop {
            if let Some(received) = self.decode() {
                return Ok(received);
            }
            if self.input_done {
                return Ok(Received::Closed);
            }
            let left = deadline
                .checked_duration_since(Instant::now())
                .filter(|left| !left.is_zero())
                .ok_or(TimedOut)?;
            match self.input.recv_timeout(left) {
                Ok(chunk) => self.inbox.extend_from_slice(&chunk),
                Err(RecvTimeoutError::Timeout) => return Err(TimedOut),
                Err(RecvTimeoutError::Disconnected) => return Ok(self.at_end()),
            }
        }
    }

    /// Drops the writing end: the extension reads to the end of its input.
    pub(crate) fn close_input(&mut self) {
        self.output = None;
    }

    /// Waits until `deadline` for the extension to drop its writing end (a serve loop
    /// that returned), discarding what it still sends; whether it did.
    pub(crate) fn wait_closed(&mut self, deadline: Instant) -> bool {
        if self.input_done {
            return true;
        }
        loop {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            match self.input.recv_timeout(left) {
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => return false,
                Err(RecvTimeoutError::Disconnected) => {
                    self.input_done = true;
                    return true;
                }
            }
        }
    }

    fn send(&mut self, body: &[u8]) -> io::Result<()> {
        let header = self
            .encoder
            .header(body.len())
            .map_err(|err| io::Error::new(io::ErrorKind::InvalidInput, err.to_string()))?;
        let Some(output) = self.output.as_ref() else {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the host already closed it",
            ));
        };
        let mut frame = Vec::with_capacity(header.len() + body.len());
        frame.extend_from_slice(&header);
        frame.extend_from_slice(body);
        output.send(frame)
    }

    /// The next complete frame already received, or the framing error in its way.
    fn decode(&mut self) -> Option<Received> {
        if self.decoder.is_finished() {
            return None;
        }
        match self.decoder.decode(&mut self.inbox) {
            Ok(Some(body)) => Some(Received::Message(parse_message(&body))),
            Ok(None) => None,
            Err(err) => {
                self.input_done = true;
                Some(Received::BadFrame(err))
            }
        }
    }

    /// The extension dropped its writing end: what is left in the inbox, if anything.
    fn at_end(&mut self) -> Received {
        self.input_done = true;
        match self.decoder.decode_eof(&mut self.inbox) {
            Ok(Some(body)) => Received::Message(parse_message(&body)),
            Ok(None) => Received::Closed,
            Err(err) => Received::BadFrame(err),
        }
    }

    /// What to report when the extension's reader is gone: a frame it sent before, or
    /// the end of its output when that is there too, else the write failure itself.
    fn after_write_failure(&mut self, err: io::Error) -> Received {
        loop {
            if let Some(received) = self.decode() {
                return received;
            }
            if self.input_done {
                return Received::Closed;
            }
            match self.input.try_recv() {
                Ok(chunk) => self.inbox.extend_from_slice(&chunk),
                Err(TryRecvError::Empty) => return Received::WriteFailed(err),
                Err(TryRecvError::Disconnected) => return self.at_end(),
            }
        }
    }
}
