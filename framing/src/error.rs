//! The errors of the codec: one enum for reading frames, one for writing them.

use std::fmt;
use std::io;

/// Why a stream of frames could not be decoded.
///
/// Every message is one sentence that names the problem and the absolute byte offset in
/// the stream where it was found (offset 0 is the first byte the decoder ever saw). The
/// framing errors (every variant but [`Io`](DecodeError::Io)) finish the decoder: a byte
/// stream cannot be resynchronised after a bad frame, so every later call returns
/// [`Finished`](DecodeError::Finished).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// A header byte is not an ASCII hexadecimal digit.
    #[error(
        "invalid frame header: byte {shown} at stream offset {offset} is not a hexadecimal \
         digit (it is byte {position} of the 8-byte length starting at offset \
         {header_offset}, which may only use 0-9, a-f and A-F)",
        shown = ShownByte(*.byte),
        position = offset.saturating_sub(*header_offset).saturating_add(1)
    )]
    BadHeaderByte {
        /// The offending byte.
        byte: u8,
        /// Absolute stream offset of the offending byte.
        offset: u64,
        /// Absolute stream offset of the first byte of the header it belongs to.
        header_offset: u64,
    },
    /// The header announces a body longer than the configured maximum. Raised as soon as
    /// the 8 header bytes are seen, before any body byte is buffered.
    #[error(
        "frame too large: the header at stream offset {offset} announces a {announced}-byte \
         body, more than the maximum of {max} bytes"
    )]
    TooLarge {
        /// The body length the header announced.
        announced: u32,
        /// The maximum body length the decoder accepts.
        max: usize,
        /// Absolute stream offset of the header.
        offset: u64,
    },
    /// The stream ended after some but not all of a header's 8 bytes.
    #[error(
        "stream ended inside a frame header at stream offset {offset}: expected 8 header \
         bytes, got {got}"
    )]
    TruncatedHeader {
        /// Absolute stream offset of the header.
        offset: u64,
        /// How many header bytes arrived before the end of the stream.
        got: usize,
    },
    /// The stream ended before a body was complete.
    #[error(
        "stream ended inside a frame body at stream offset {offset}: the header announced \
         {expected} bytes, got {got}"
    )]
    TruncatedBody {
        /// Absolute stream offset of the first body byte.
        offset: u64,
        /// The body length the header announced.
        expected: usize,
        /// How many body bytes arrived before the end of the stream.
        got: usize,
    },
    /// The decoder stopped at an earlier framing error and refuses to go on.
    #[error(
        "the frame decoder already stopped at a framing error at stream offset {offset} and \
         cannot resynchronise the stream"
    )]
    Finished {
        /// Absolute stream offset of the earlier error.
        offset: u64,
    },
    /// Reading from the underlying stream failed. This one does not finish the decoder:
    /// no byte was lost, so a later call may go on where this one stopped.
    #[error("I/O error while reading frames: {0}")]
    Io(io::Error),
}

impl DecodeError {
    /// The absolute stream offset the error points at, if it has one.
    ///
    /// For [`Io`](DecodeError::Io) the offset is unknown here; a [`FrameReader`] knows it
    /// through [`FrameReader::offset`].
    ///
    /// [`FrameReader`]: crate::FrameReader
    /// [`FrameReader::offset`]: crate::FrameReader::offset
    pub fn offset(&self) -> Option<u64> {
        match self {
            Self::BadHeaderByte { offset, .. }
            | Self::TooLarge { offset, .. }
            | Self::TruncatedHeader { offset, .. }
            | Self::TruncatedBody { offset, .. }
            | Self::Finished { offset } => Some(*offset),
            Self::Io(_) => None,
        }
    }
}

impl From<io::Error> for DecodeError {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

/// Why a frame could not be encoded or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The body is longer than the configured maximum (or than the 8 hex digits can say).
    #[error("frame body too large: {len} bytes, more than the maximum of {max} bytes")]
    BodyTooLarge {
        /// The length of the body that was refused.
        len: usize,
        /// The maximum body length the encoder accepts.
        max: usize,
    },
    /// Writing to the underlying stream failed.
    #[error("I/O error while writing frames: {0}")]
    Io(io::Error),
}

impl From<io::Error> for EncodeError {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

/// Shows a byte so that a reader of the message can recognise it: printable ASCII as a
/// quoted character with its code, anything else as hex with a hint.
struct ShownByte(u8);

impl fmt::Display for ShownByte {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        match b {
            b' '..=b'~' => write!(f, "'{}' (0x{b:02x})", char::from(b)),
            0x80..=0xff => write!(f, "0x{b:02x} (not ASCII)"),
            _ => write!(f, "0x{b:02x} (an ASCII control character)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_byte_is_readable() {
        assert_eq!(ShownByte(b'+').to_string(), "'+' (0x2b)");
        assert_eq!(ShownByte(b' ').to_string(), "' ' (0x20)");
        assert_eq!(ShownByte(0xc3).to_string(), "0xc3 (not ASCII)");
        assert_eq!(
            ShownByte(b'\n').to_string(),
            "0x0a (an ASCII control character)"
        );
    }

    #[test]
    fn messages_carry_the_numbers() {
        let err = DecodeError::TooLarge {
            announced: u32::MAX,
            max: 16 * 1024 * 1024,
            offset: 52,
        };
        assert_eq!(
            err.to_string(),
            "frame too large: the header at stream offset 52 announces a 4294967295-byte \
             body, more than the maximum of 16777216 bytes"
        );
        assert_eq!(err.offset(), Some(52));
        let err = EncodeError::BodyTooLarge { len: 11, max: 10 };
        assert_eq!(
            err.to_string(),
            "frame body too large: 11 bytes, more than the maximum of 10 bytes"
        );
    }
}
