//! In-process transports, for tests and for extensions that run inside the host.
//!
//! [`duplex`] gives a [`Client`] and the extension's end of its conversation: an
//! [`ExtensionEnd`] that reads what the client sends and writes what it gets back,
//! byte for byte. Run `curupira_extension_sdk::serve` on it in a thread (see the
//! crate's example), or write bytes to it yourself to see how the client takes a
//! malformed frame. The client keeps every promise it keeps with a process: the same
//! deadlines, the same failure classes, the same messages.
//!
//! [`pipe`] is one direction alone, for driving an extension's serve loop with bytes
//! of your own (a host's end that sends malformed frames).
//!
//! Unlike an OS pipe, a memory pipe has no capacity limit: a write never blocks.
//!
//! ```
//! use std::io::{Read, Write};
//! use curupira_client::curupira_jsonrpc::ErrorCode;
//! use curupira_client::{Options, memory};
//!
//! let (mut client, mut extension) = memory::duplex("raw", Options::default());
//! // The extension answers before it is asked: the client reads frames in order.
//! extension.write_all(b"0000000Xgarbage")?;
//! let error = client.describe().unwrap_err();
//! assert_eq!(error.code, ErrorCode::TRANSPORT_FAILURE);
//! assert!(error.message.starts_with("bad frame on stdout"), "{error}");
//!
//! // The request it sent, as bytes.
//! let mut sent = [0; 8];
//! extension.read_exact(&mut sent)?;
//! assert_eq!(&sent, b"0000002c");
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, Read, Write};
use std::sync::mpsc::{self, Receiver, Sender};

use crate::{Client, Options};

/// The reading end of a memory pipe: `read` blocks until the writer sends bytes, and
/// returns 0 (end of file) once the writer is dropped and everything was read.
#[derive(Debug)]
pub struct PipeReader {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

/// The writing end of a memory pipe: every `write` is taken whole; it fails with
/// `BrokenPipe` once the reader is dropped. Dropping it is the reader's end of file.
#[derive(Debug)]
pub struct PipeWriter {
    tx: Sender<Vec<u8>>,
}

/// A one-way memory pipe: what is written to the [`PipeWriter`] is read from the
/// [`PipeReader`], in order.
///
/// ```
/// use std::io::{Read, Write};
///
/// let (mut reader, mut writer) = curupira_client::memory::pipe();
/// writer.write_all(b"0000")?;
/// drop(writer);
/// let mut text = String::new();
/// reader.read_to_string(&mut text)?;
/// assert_eq!(text, "0000");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn pipe() -> (PipeReader, PipeWriter) {
    let (tx, rx) = mpsc::channel();
    (
        PipeReader {
            rx,
            chunk: Vec::new(),
            pos: 0,
        },
        PipeWriter { tx },
    )
}

impl PipeReader {
    /// The channel itself, for a reader that waits with deadlines. Bytes already taken
    /// from it by `read` and not returned yet are dropped.
    pub(crate) fn into_receiver(self) -> Receiver<Vec<u8>> {
        self.rx
    }
}

impl Read for PipeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.pos == self.chunk.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl PipeWriter {
    /// Sends one chunk as it is.
    pub(crate) fn send(&self, bytes: Vec<u8>) -> io::Result<()> {
        self.tx
            .send(bytes)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the reading end was dropped"))
    }
}

impl Write for PipeWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.send(buf.to_vec())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The extension's end of a [`duplex`]: reading gives the bytes the client sent (its
/// request frames, as they would arrive on a process's stdin), writing sends bytes to
/// the client (as a process's stdout would). Dropping it, or its writing half, is the
/// extension closing its stdout; dropping its reading half makes the client's next
/// write fail, as a closed stdin would.
#[derive(Debug)]
pub struct ExtensionEnd {
    input: PipeReader,
    output: PipeWriter,
}

impl ExtensionEnd {
    /// The reading and the writing half, for `serve(&mut trigger, reader, writer, …)`
    /// (wrap the reader in a `BufReader`, as stdin would be).
    pub fn split(self) -> (PipeReader, PipeWriter) {
        (self.input, self.output)
    }
}

impl Read for ExtensionEnd {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for ExtensionEnd {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.output.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.output.flush()
    }
}

/// A client named `name` connected to an extension in this process: the in-memory
/// counterpart of [`Client::spawn`]. `options` apply as they do to a process (the
/// stderr limit aside: there is no stderr).
pub fn duplex(name: &str, options: Options) -> (Client, ExtensionEnd) {
    let (input, to_extension) = pipe();
    let (from_extension, output) = pipe();
    let client = Client::over_memory(name, to_extension, from_extension, options);
    (client, ExtensionEnd { input, output })
}
