//! `tokio_util::codec` implementations (feature `tokio`).

use bytes::{Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use crate::{DecodeError, EncodeError, FrameDecoder, FrameEncoder};

/// [`FrameDecoder`] as a `tokio_util` decoder: `FramedRead::new(io, FrameDecoder::new())`
/// yields bodies; the end of the stream inside a frame is a truncation error.
impl Decoder for FrameDecoder {
    type Item = Bytes;
    type Error = DecodeError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        FrameDecoder::decode(self, src)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        FrameDecoder::decode_eof(self, src)
    }
}

/// [`FrameEncoder`] as a `tokio_util` encoder of anything that is a byte slice.
impl<B: AsRef<[u8]>> Encoder<B> for FrameEncoder {
    type Error = EncodeError;

    fn encode(&mut self, body: B, dst: &mut BytesMut) -> Result<(), EncodeError> {
        FrameEncoder::encode(self, body.as_ref(), dst)
    }
}

/// Decoder and encoder in one value, for `tokio_util::codec::Framed` over a duplex
/// stream (a child's stdin/stdout joined, a socket).
///
/// ```
/// use curupira_framing::FrameCodec;
/// use curupira_framing::bytes::BytesMut;
/// use curupira_framing::tokio_util::codec::{Decoder, Encoder};
///
/// let mut codec = FrameCodec::new();
/// let mut buf = BytesMut::new();
/// codec.encode(&b"{}"[..], &mut buf)?;
/// assert_eq!(codec.decode(&mut buf)?.as_deref(), Some(&b"{}"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct FrameCodec {
    decoder: FrameDecoder,
    encoder: FrameEncoder,
}

impl FrameCodec {
    /// A codec with the default maximum body size in both directions.
    pub fn new() -> Self {
        Self::default()
    }

    /// A codec with `max_body` as the maximum body size in both directions.
    pub fn with_max_body(max_body: usize) -> Self {
        Self {
            decoder: FrameDecoder::with_max_body(max_body),
            encoder: FrameEncoder::with_max_body(max_body),
        }
    }

    /// The decoding half.
    pub fn decoder(&self) -> &FrameDecoder {
        &self.decoder
    }

    /// The encoding half.
    pub fn encoder(&self) -> &FrameEncoder {
        &self.encoder
    }
}

impl Decoder for FrameCodec {
    type Item = Bytes;
    type Error = DecodeError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        self.decoder.decode(src)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        self.decoder.decode_eof(src)
    }
}

impl<B: AsRef<[u8]>> Encoder<B> for FrameCodec {
    type Error = EncodeError;

    fn encode(&mut self, body: B, dst: &mut BytesMut) -> Result<(), EncodeError> {
        self.encoder.encode(body.as_ref(), dst)
    }
}
