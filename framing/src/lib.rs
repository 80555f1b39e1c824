//! The Curupira frame codec: how protocol-2 messages are cut out of a byte stream.
//!
//! A Curupira extension and its host exchange JSON-RPC 2.0 messages over the extension's
//! stdin and stdout, each message in one *frame*. This crate turns bytes into frame bodies
//! and back; it knows nothing of JSON (that is `curupira-jsonrpc`'s job).
//!
//! # Wire format
//!
//! A frame is 8 ASCII hexadecimal digits giving the body length N in bytes, then exactly
//! N body bytes, with no separator and no newline:
//!
//! ```text
//! 0000002c{"jsonrpc":"2.0","id":1,"method":"describe"}
//! ```
//!
//! - Encoders write lowercase digits. Decoders accept `0-9`, `a-f` and `A-F` and nothing
//!   else: a `+`, `-`, space, `0x` or any other byte among the 8 header bytes is an error
//!   naming the byte and its stream offset.
//! - A zero-length body is a valid frame.
//! - The end of the stream exactly at a frame boundary is a clean end; inside a header or
//!   a body it is a truncation error saying how many bytes were expected and received.
//! - After any framing error the decoder is finished: there is no way to find the next
//!   frame boundary in a byte stream, so every later call returns
//!   [`DecodeError::Finished`] (it never loops and never guesses).
//!
//! # Limits
//!
//! - The maximum body size is [`DEFAULT_MAX_BODY`] (16 MiB) unless configured; the 8
//!   digits cannot announce more than `0xffffffff` bytes, so a larger configured maximum
//!   means that. The encoder enforces the same maximum as the decoder.
//! - A header announcing more than the maximum is refused as soon as its 8 bytes are
//!   seen, before any body byte is read or buffered.
//! - Memory follows the bytes that really arrive, not the length a peer announces: the
//!   decoder grows its buffer at most by what it already holds (or 64 KiB), and
//!   [`FrameReader`] reads at most 64 KiB at a time and never past the current frame.
//! - Nothing in the crate panics on any input.
//!
//! # Pieces
//!
//! - [`FrameDecoder`] / [`FrameEncoder`]: sans-IO, over [`bytes::BytesMut`]; bodies come
//!   out as zero-copy [`bytes::Bytes`].
//! - [`FrameReader`] / [`FrameWriter`]: blocking adapters over `std::io::Read` / `Write`.
//! - With the `tokio` feature, `tokio_util::codec::{Decoder, Encoder}` for the decoder,
//!   the encoder and `FrameCodec` (both in one, for `Framed`).
//! - The crates of those types, re-exported: [`bytes`] and, with `tokio`,
//!   `tokio_util`, so that using this API needs no dependency of your own.
//!
//! # Example
//!
//! ```
//! use curupira_framing::{DecodeError, FrameReader, FrameWriter};
//!
//! let mut writer = FrameWriter::new(Vec::new());
//! writer.write_frame(br#"{"jsonrpc":"2.0","id":1,"method":"describe"}"#)?;
//! let stream = writer.into_inner();
//! assert!(stream.starts_with(b"0000002c{"));
//!
//! let mut reader = FrameReader::new(&stream[..]);
//! let body = reader.read_frame()?.expect("one frame");
//! assert_eq!(body.len(), 0x2c);
//! assert_eq!(reader.read_frame()?, None);
//!
//! // A `+` among the header digits is refused, with the byte and where it was.
//! let err = FrameReader::new(&b"+000002c"[..]).read_frame().unwrap_err();
//! assert!(matches!(err, DecodeError::BadHeaderByte { byte: b'+', offset: 0, .. }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod blocking;
#[cfg(feature = "tokio")]
mod codec;
mod decode;
mod encode;
mod error;
mod header;

pub use blocking::{FrameReader, FrameWriter};
#[cfg(feature = "tokio")]
pub use codec::FrameCodec;
pub use decode::FrameDecoder;
pub use encode::FrameEncoder;
pub use error::{DecodeError, EncodeError};
pub use header::encode_header;

/// The `bytes` crate, whose [`BytesMut`](bytes::BytesMut) the decoder and encoder
/// work on and whose [`Bytes`](bytes::Bytes) every decoded body is: re-exported so a
/// user names the very version this crate uses (`curupira_framing::bytes::BytesMut`)
/// without a dependency of their own.
pub use bytes;

/// The `tokio-util` crate (feature `tokio`), whose `codec::{Decoder, Encoder}` traits
/// the decoder, the encoder and [`FrameCodec`] implement: re-exported so that
/// `Framed` and the traits come from the version this crate implements them for.
#[cfg(feature = "tokio")]
pub use tokio_util;

/// Length of a frame header: 8 hexadecimal digits.
pub const HEADER_LEN: usize = 8;

/// The default maximum body size: 16 MiB (16,777,216 bytes).
pub const DEFAULT_MAX_BODY: usize = 16 * 1024 * 1024;

/// The most a [`FrameReader`] reads at once, and the floor of the decoder's growth step.
const READ_CHUNK: usize = 64 * 1024;

/// A configured maximum, capped at what 8 hex digits can announce.
fn clamp_max_body(max_body: usize) -> usize {
    let wire_max = usize::try_from(u32::MAX).unwrap_or(usize::MAX);
    max_body.min(wire_max)
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
