//! The encoder: a body in, a lowercase-hex header and the body out.

use bytes::BytesMut;

use crate::{DEFAULT_MAX_BODY, EncodeError, HEADER_LEN, clamp_max_body, encode_header};

/// Writes frames: 8 lowercase hexadecimal digits giving the body length, then the body.
///
/// Enforces the same maximum body size as the decoder, so that a frame we write is never
/// one a peer with the default limit refuses.
///
/// ```
/// use curupira_framing::FrameEncoder;
/// use curupira_framing::bytes::BytesMut;
///
/// let mut out = BytesMut::new();
/// FrameEncoder::new().encode(b"{}", &mut out)?;
/// assert_eq!(&out[..], b"00000002{}");
/// assert!(FrameEncoder::with_max_body(1).encode(b"{}", &mut out).is_err());
/// # Ok::<(), curupira_framing::EncodeError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FrameEncoder {
    max_body: usize,
}

impl Default for FrameEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameEncoder {
    /// An encoder accepting bodies up to [`DEFAULT_MAX_BODY`] (16 MiB).
    pub fn new() -> Self {
        Self::with_max_body(DEFAULT_MAX_BODY)
    }

    /// An encoder accepting bodies up to `max_body` bytes (at most `0xffffffff`, what 8
    /// hex digits can announce; a larger value means that).
    pub fn with_max_body(max_body: usize) -> Self {
        Self {
            max_body: clamp_max_body(max_body),
        }
    }

    /// The largest body this encoder accepts.
    pub fn max_body(&self) -> usize {
        self.max_body
    }

    /// The header for a body of `len` bytes, or [`EncodeError::BodyTooLarge`].
    pub fn header(&self, len: usize) -> Result<[u8; HEADER_LEN], EncodeError> {
        match u32::try_from(len) {
            Ok(announced) if len <= self.max_body => Ok(encode_header(announced)),
            _ => Err(EncodeError::BodyTooLarge {
                len,
                max: self.max_body,
            }),
        }
    }

    /// Appends the frame for `body` to `dst`. On error `dst` is left untouched.
    pub fn encode(&self, body: &[u8], dst: &mut BytesMut) -> Result<(), EncodeError> {
        let header = self.header(body.len())?;
        dst.reserve(HEADER_LEN + body.len());
        dst.extend_from_slice(&header);
        dst.extend_from_slice(body);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn writes_lowercase_hex_then_the_body() {
        let mut out = BytesMut::new();
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"describe"}"#;
        FrameEncoder::new().encode(body, &mut out).unwrap();
        assert_eq!(
            &out[..],
            &b"0000002c{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"describe\"}"[..]
        );
        let mut out = BytesMut::new();
        FrameEncoder::new().encode(&[0; 0xab], &mut out).unwrap();
        assert_eq!(&out[..8], b"000000ab");
    }

    #[test]
    fn zero_length_body() {
        let mut out = BytesMut::new();
        FrameEncoder::new().encode(b"", &mut out).unwrap();
        assert_eq!(&out[..], b"00000000");
    }

    #[test]
    fn enforces_the_maximum() {
        let encoder = FrameEncoder::with_max_body(4);
        let mut out = BytesMut::new();
        encoder.encode(b"abcd", &mut out).unwrap();
        let err = encoder.encode(b"abcde", &mut out).unwrap_err();
        assert!(matches!(err, EncodeError::BodyTooLarge { len: 5, max: 4 }));
        assert_eq!(&out[..], b"00000004abcd", "a refused body writes nothing");
        assert_eq!(FrameEncoder::new().max_body(), DEFAULT_MAX_BODY);
    }

    #[test]
    fn a_maximum_beyond_the_wire_is_clamped() {
        let encoder = FrameEncoder::with_max_body(usize::MAX);
        assert_eq!(encoder.max_body() as u64, u64::from(u32::MAX));
        assert_eq!(&encoder.header(u32::MAX as usize).unwrap(), b"ffffffff");
        #[cfg(target_pointer_width = "64")]
        assert!(encoder.header(u32::MAX as usize + 1).is_err());
    }
}
