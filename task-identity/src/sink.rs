//! Where canonical bytes go: a growing `Vec<u8>`, any `io::Write`, or a SHA-256 hasher.
//!
//! The writers in this crate emit many small pieces (`{"key":`, a quote, a short run of
//! text). A [`Sink`] takes them without an `io::Result` per call; the hashing sink
//! gathers small pieces in a buffer so the hasher sees few, large updates.

use std::io;

use sha2::{Digest, Sha256};

/// Receives canonical bytes. Infallible by design: fallible targets record their first
/// error and ignore everything after it.
pub(crate) trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Adapts an `io::Write`: keeps the first error and drops later writes.
pub(crate) struct IoSink<'w, W: io::Write + ?Sized> {
    out: &'w mut W,
    error: Option<io::Error>,
}

impl<'w, W: io::Write + ?Sized> IoSink<'w, W> {
    pub(crate) fn new(out: &'w mut W) -> Self {
        IoSink { out, error: None }
    }

    /// The first error seen, if any.
    pub(crate) fn finish(self) -> io::Result<()> {
        match self.error {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }
}

impl<W: io::Write + ?Sized> Sink for IoSink<'_, W> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(err) = self.out.write_all(bytes)
        {
            self.error = Some(err);
        }
    }
}

/// Size of the hashing sink's buffer: a multiple of SHA-256's 64-byte block, small
/// enough to stay in L1.
const HASH_BUFFER: usize = 8 * 1024;

/// Feeds a SHA-256 hasher. Pieces shorter than the buffer are gathered first; a piece
/// at least as long as the buffer goes to the hasher directly, without a copy.
pub(crate) struct HashSink {
    hasher: Sha256,
    buffer: Box<[u8; HASH_BUFFER]>,
    len: usize,
}

impl HashSink {
    pub(crate) fn new() -> Self {
        HashSink {
            hasher: Sha256::new(),
            buffer: Box::new([0; HASH_BUFFER]),
            len: 0,
        }
    }

    /// The digest of everything put so far.
    pub(crate) fn finish(mut self) -> [u8; 32] {
        self.flush();
        self.hasher.finalize().into()
    }

    fn flush(&mut self) {
        if let Some(gathered) = self.buffer.get(..self.len) {
            self.hasher.update(gathered);
        }
        self.len = 0;
    }

    /// The slow path of `put`: the piece does not fit in what is left of the buffer.
    #[cold]
    #[inline(never)]
    fn spill(&mut self, bytes: &[u8]) {
        self.flush();
        if bytes.len() >= HASH_BUFFER {
            self.hasher.update(bytes);
        } else if let Some(free) = self.buffer.get_mut(..bytes.len()) {
            free.copy_from_slice(bytes);
            self.len = bytes.len();
        }
    }
}

impl Sink for HashSink {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        match self.buffer.get_mut(self.len..end) {
            Some(free) => {
                free.copy_from_slice(bytes);
                self.len = end;
            }
            None => self.spill(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn hash_sink_equals_one_shot_hash_for_every_piece_size() {
        let data: Vec<u8> = (0..3 * HASH_BUFFER + 17).map(|i| (i % 251) as u8).collect();
        let expected: [u8; 32] = Sha256::digest(&data).into();
        for piece in [
            1,
            7,
            64,
            1000,
            HASH_BUFFER - 1,
            HASH_BUFFER,
            HASH_BUFFER + 1,
        ] {
            let mut sink = HashSink::new();
            for chunk in data.chunks(piece) {
                sink.put(chunk);
            }
            assert_eq!(sink.finish(), expected, "piece size {piece}");
        }
    }

    struct FailAfter(usize);

    impl io::Write for FailAfter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0 == 0 {
                return Err(io::Error::other("full"));
            }
            self.0 -= 1;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn io_sink_keeps_the_first_error() {
        let mut out = FailAfter(1);
        let mut sink = IoSink::new(&mut out);
        sink.put(b"a");
        sink.put(b"b");
        sink.put(b"c");
        let err = sink.finish().unwrap_err();
        assert_eq!(err.to_string(), "full");
        assert_eq!(out.0, 0);
    }
}
