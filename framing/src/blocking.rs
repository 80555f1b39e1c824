//! Blocking adapters over `std::io::Read` and `std::io::Write`.

use std::io::{self, Read, Write};
use std::iter::FusedIterator;

use bytes::{Bytes, BytesMut};

use crate::{DecodeError, EncodeError, FrameDecoder, FrameEncoder, HEADER_LEN, READ_CHUNK};

/// Reads frames from a blocking [`Read`].
///
/// It never reads past the frame in progress: each read asks for at most the rest of the
/// current header or body, and at most 64 KiB, so it never holds more than 8 + the maximum
/// body size, a huge announced length costs nothing until its bytes really arrive, and
/// [`into_inner`](Self::into_inner) after a clean end hands back a reader positioned right
/// after the last frame. That means small reads: give it a [`BufReader`](std::io::BufReader)
/// (or a reader that is already buffered, such as a locked stdin) rather than a raw pipe
/// or socket.
///
/// ```
/// use curupira_framing::FrameReader;
///
/// let mut reader = FrameReader::new(&b"00000002{}00000000"[..]);
/// assert_eq!(reader.read_frame()?.as_deref(), Some(&b"{}"[..]));
/// assert_eq!(reader.read_frame()?.as_deref(), Some(&b""[..]));
/// assert_eq!(reader.read_frame()?, None); // clean end of stream
/// # Ok::<(), curupira_framing::DecodeError>(())
/// ```
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    buf: BytesMut,
    decoder: FrameDecoder,
    /// The iterator has yielded its end (`None` or an error).
    iter_done: bool,
}

impl<R: Read> FrameReader<R> {
    /// A reader accepting bodies up to [`DEFAULT_MAX_BODY`](crate::DEFAULT_MAX_BODY).
    pub fn new(inner: R) -> Self {
        Self::with_decoder(inner, FrameDecoder::new())
    }

    /// A reader accepting bodies up to `max_body` bytes.
    pub fn with_max_body(inner: R, max_body: usize) -> Self {
        Self::with_decoder(inner, FrameDecoder::with_max_body(max_body))
    }

    fn with_decoder(inner: R, decoder: FrameDecoder) -> Self {
        Self {
            inner,
            buf: BytesMut::with_capacity(HEADER_LEN),
            decoder,
            iter_done: false,
        }
    }

    /// Reads the next frame's body; `Ok(None)` when the stream ends exactly at a frame
    /// boundary.
    ///
    /// A framing error (bad header, too large, truncated) finishes the reader: later calls
    /// return [`DecodeError::Finished`]. An I/O error does not: nothing was consumed, so a
    /// later call resumes where this one stopped. `Interrupted` reads are retried.
    pub fn read_frame(&mut self) -> Result<Option<Bytes>, DecodeError> {
        loop {
            if let Some(body) = self.decoder.decode(&mut self.buf)? {
                return Ok(Some(body));
            }
            let want = self.decoder.bytes_needed(&self.buf).clamp(1, READ_CHUNK);
            let start = self.buf.len();
            self.buf.resize(start.saturating_add(want), 0);
            let read = loop {
                // `start..` is within the buffer: it was just resized past `start`.
                match self.inner.read(&mut self.buf[start..]) {
                    Ok(n) => break n.min(want),
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(err) => {
                        self.buf.truncate(start);
                        return Err(DecodeError::Io(err));
                    }
                }
            };
            self.buf.truncate(start + read);
            if read == 0 {
                return self.decoder.decode_eof(&mut self.buf);
            }
        }
    }

    /// Absolute stream offset of the end of the last complete frame (plus the header of a
    /// frame whose body is still being read).
    pub fn offset(&self) -> u64 {
        self.decoder.offset()
    }

    /// How many bytes have been read from the stream in all: complete frames plus the
    /// part of the current frame buffered so far.
    pub fn bytes_read(&self) -> u64 {
        self.decoder.offset().saturating_add(self.buf.len() as u64)
    }

    /// How many bytes of the frame in progress are held in memory (at most 8 + the maximum
    /// body size).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The largest body this reader accepts.
    pub fn max_body(&self) -> usize {
        self.decoder.max_body()
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The underlying reader; reading from it directly desynchronises the frames.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The underlying reader. Bytes of an incomplete frame that were already read are lost.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

/// Yields each body, then ends at a clean end of stream; yields an error once and then
/// ends, so that `for frame in reader` never spins on a failed stream.
impl<R: Read> Iterator for FrameReader<R> {
    type Item = Result<Bytes, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.iter_done {
            return None;
        }
        let item = self.read_frame().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.iter_done = true;
        }
        item
    }
}

impl<R: Read> FusedIterator for FrameReader<R> {}

/// Bodies up to this size are copied after their header and written with one `write_all`,
/// so that an unbuffered pipe sees each small frame in one write.
const COALESCE_LIMIT: usize = 8 * 1024;

/// Writes frames to a blocking [`Write`].
///
/// Small frames go out in one `write_all` (header and body together), larger ones in two;
/// nothing is flushed unless you call [`flush`](Self::flush).
///
/// ```
/// use curupira_framing::FrameWriter;
///
/// let mut writer = FrameWriter::new(Vec::new());
/// writer.write_frame(b"{}")?;
/// writer.write_frame(b"")?;
/// assert_eq!(writer.into_inner(), b"00000002{}00000000");
/// # Ok::<(), curupira_framing::EncodeError>(())
/// ```
#[derive(Debug)]
pub struct FrameWriter<W> {
    inner: W,
    encoder: FrameEncoder,
    scratch: Vec<u8>,
}

impl<W: Write> FrameWriter<W> {
    /// A writer accepting bodies up to [`DEFAULT_MAX_BODY`](crate::DEFAULT_MAX_BODY).
    pub fn new(inner: W) -> Self {
        Self::with_max_body(inner, crate::DEFAULT_MAX_BODY)
    }

    /// A writer accepting bodies up to `max_body` bytes.
    pub fn with_max_body(inner: W, max_body: usize) -> Self {
        Self {
            inner,
            encoder: FrameEncoder::with_max_body(max_body),
            scratch: Vec::new(),
        }
    }

    /// Writes one frame. A body over the maximum is refused before anything is written.
    pub fn write_frame(&mut self, body: &[u8]) -> Result<(), EncodeError> {
        let header = self.encoder.header(body.len())?;
        if body.len() <= COALESCE_LIMIT {
            self.scratch.clear();
            self.scratch.extend_from_slice(&header);
            self.scratch.extend_from_slice(body);
            self.inner.write_all(&self.scratch)?;
        } else {
            self.inner.write_all(&header)?;
            self.inner.write_all(body)?;
        }
        Ok(())
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> Result<(), EncodeError> {
        self.inner.flush()?;
        Ok(())
    }

    /// The largest body this writer accepts.
    pub fn max_body(&self) -> usize {
        self.encoder.max_body()
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The underlying writer; writing to it directly desynchronises the frames.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// The underlying writer (not flushed).
    pub fn into_inner(self) -> W {
        self.inner
    }
}
