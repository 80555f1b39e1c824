//! The byte streams of one conversation: a request frame out, the next frame back,
//! within a deadline.
//!
//! A process's pipes: on Unix (`PolledWire`) the calling thread does the I/O itself:
//! our ends of both pipes are non-blocking and every wait is a `poll(2)` bounded by
//! the call's deadline, so a round trip costs one `write`, one `poll` and one `read`,
//! with the same two context switches as a bare pipe ping-pong and no thread handing
//! bytes to another. Elsewhere (`ThreadedWire`) a reader thread and a writer thread do
//! blocking I/O and the caller waits on a channel with a timeout. In memory
//! (`MemoryWire`) a write hands the frame to a channel and the caller waits on the
//! other channel with a timeout. All keep the same promises:
//!
//! - The deadline covers the whole exchange, writing the request and reading every byte
//!   of the reply: a reply dripping in one byte per millisecond times out at the
//!   deadline, not one timeout after the last byte.
//! - A child that never reads its stdin cannot block the caller past the deadline.
//! - Frames are decoded with the configured maximum body: a header announcing more is
//!   an error before any body byte is kept, and nothing is decoded after a framing
//!   error.
//! - The output is watched while the request is still being written, so what the
//!   child sends meanwhile (a bad frame, a message nobody asked for) is reported at
//!   once. A frame that arrives before the whole request went out is returned; the
//!   rest of the request stays queued and goes out before the next one.

use std::io;
use std::process::{ChildStdin, ChildStdout};
use std::thread::JoinHandle;
use std::time::Instant;

use curupira_framing::DecodeError;
use curupira_jsonrpc::{Message, ParseFailure};

mod memory;
#[cfg(unix)]
mod polled;
#[cfg(any(not(unix), test))]
mod threaded;

#[cfg(all(test, unix))]
mod tests;

pub(crate) use memory::MemoryWire;

/// What came back from the extension.
#[derive(Debug)]
pub(crate) enum Received {
    /// One frame body, classified.
    Message(Result<Message, ParseFailure>),
    /// The frame stream broke (a framing error or a read error); nothing more is read.
    BadFrame(DecodeError),
    /// The extension's output reached its end at a frame boundary.
    Closed,
    /// Writing to the extension's input failed.
    WriteFailed(io::Error),
    /// Waiting on the pipes failed.
    WaitFailed(io::Error),
    /// The child process exited without a reply while its stdout stayed open (a
    /// process it started holds it). Noticed on Unix only; elsewhere such a call ends
    /// at its deadline.
    Exited,
}

/// The deadline passed before anything came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimedOut;

/// One conversation's byte streams, whatever carries them.
pub(crate) enum Wire {
    /// A child process's pipes, driven with `poll(2)`.
    #[cfg(unix)]
    Polled(polled::PolledWire),
    /// A child process's pipes, each with a thread of its own.
    #[cfg(not(unix))]
    Threaded(threaded::ThreadedWire),
    /// Memory pipes to an extension in this process.
    Memory(MemoryWire),
}

impl Wire {
    /// The wire for the stdin and stdout of the child `pid`; the threads it started,
    /// if any.
    pub(crate) fn pipes(
        name: &str,
        stdin: ChildStdin,
        stdout: ChildStdout,
        max_frame_bytes: usize,
        pid: u32,
    ) -> io::Result<(Wire, Vec<JoinHandle<()>>)> {
        #[cfg(unix)]
        {
            let _ = name;
            let wire = polled::PolledWire::new(stdin, stdout, max_frame_bytes, Some(pid))?;
            Ok((Wire::Polled(wire), Vec::new()))
        }
        #[cfg(not(unix))]
        {
            let _ = pid;
            let (wire, threads) =
                threaded::ThreadedWire::start(name, stdin, stdout, max_frame_bytes)?;
            Ok((Wire::Threaded(wire), threads))
        }
    }

    /// Sends `body` as one frame and waits for the next thing the extension sends (a
    /// frame, the end of its output, a failure) until `deadline`.
    pub(crate) fn exchange(
        &mut self,
        body: &[u8],
        deadline: Instant,
    ) -> Result<Received, TimedOut> {
        match self {
            #[cfg(unix)]
            Wire::Polled(wire) => wire.exchange(body, deadline),
            #[cfg(not(unix))]
            Wire::Threaded(wire) => wire.exchange(body, deadline),
            Wire::Memory(wire) => wire.exchange(body, deadline),
        }
    }

    /// Closes the extension's input (its stdin); request bytes still queued may be
    /// dropped.
    pub(crate) fn close_input(&mut self) {
        match self {
            #[cfg(unix)]
            Wire::Polled(wire) => wire.close_stdin(),
            #[cfg(not(unix))]
            Wire::Threaded(wire) => wire.close_stdin(),
            Wire::Memory(wire) => wire.close_input(),
        }
    }
}
