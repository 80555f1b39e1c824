//! The sans-IO decoder: bytes in (any chunking), whole bodies out.

use bytes::{Buf, Bytes, BytesMut};

use crate::{DEFAULT_MAX_BODY, DecodeError, HEADER_LEN, READ_CHUNK, clamp_max_body, header};

/// Splits frames out of a [`BytesMut`] the caller fills, in whatever pieces the bytes
/// arrive.
///
/// [`decode`](Self::decode) consumes one complete frame from the front of the buffer and
/// returns its body as a zero-copy [`Bytes`] (a `split_to` of the buffer), or `Ok(None)`
/// when more bytes are needed. The decoder remembers a parsed header across calls, so a
/// header is checked once however the body is split. It keeps the absolute stream offset
/// so that errors can say where they happened, and it is finished after any error.
///
/// The decoder never reserves the whole announced body up front: while a body is
/// incomplete it first reuses capacity the buffer already owns, and otherwise grows it by
/// at most as much again as it holds (or 64 KiB, whichever is more), never by more than
/// the rest of the frame, so 8 header bytes cannot pin 16 MiB of memory.
///
/// ```
/// use curupira_framing::FrameDecoder;
/// use curupira_framing::bytes::BytesMut;
///
/// let mut decoder = FrameDecoder::new();
/// let mut buf = BytesMut::from(&b"00000002hi000"[..]);
/// assert_eq!(decoder.decode(&mut buf)?.as_deref(), Some(&b"hi"[..]));
/// assert_eq!(decoder.decode(&mut buf)?, None); // half a header so far
/// buf.extend_from_slice(b"00003abc");
/// assert_eq!(decoder.decode(&mut buf)?.as_deref(), Some(&b"abc"[..]));
/// assert_eq!(decoder.offset(), 21);
/// # Ok::<(), curupira_framing::DecodeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    max_body: usize,
    state: State,
    /// Absolute stream offset of the first byte of the buffer (everything before it has
    /// been consumed).
    offset: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for (the rest of) a header.
    Head,
    /// The header announced this many body bytes and has been consumed.
    Body(usize),
    /// A framing error happened at this offset; nothing more will be decoded.
    Failed(u64),
}

impl Default for FrameDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameDecoder {
    /// A decoder accepting bodies up to [`DEFAULT_MAX_BODY`] (16 MiB).
    pub fn new() -> Self {
        Self::with_max_body(DEFAULT_MAX_BODY)
    }

    /// A decoder accepting bodies up to `max_body` bytes (at most `0xffffffff`, what 8
    /// hex digits can announce; a larger value means that).
    pub fn with_max_body(max_body: usize) -> Self {
        Self {
            max_body: clamp_max_body(max_body),
            state: State::Head,
            offset: 0,
        }
    }

    /// The largest body this decoder accepts.
    pub fn max_body(&self) -> usize {
        self.max_body
    }

    /// Absolute stream offset of the next byte the decoder will consume: the number of
    /// bytes consumed so far (complete frames, plus the header of a frame whose body is
    /// still incomplete).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Whether the decoder stopped at a framing error (every later call fails).
    pub fn is_finished(&self) -> bool {
        matches!(self.state, State::Failed(_))
    }

    /// How many more bytes the buffer needs before [`decode`](Self::decode) can finish the
    /// header or body in progress; 0 when a call can make progress now (or would fail).
    ///
    /// A reader that appends no more than this many bytes between calls never buffers
    /// more than 8 + `max_body` bytes: it never reads past the frame in progress.
    pub fn bytes_needed(&self, src: &BytesMut) -> usize {
        match self.state {
            State::Head => HEADER_LEN.saturating_sub(src.len()),
            State::Body(len) => len.saturating_sub(src.len()),
            State::Failed(_) => 0,
        }
    }

    /// Consumes one frame from the front of `src` and returns its body, or `Ok(None)` if
    /// `src` does not hold the whole frame yet (then call again with more bytes appended).
    ///
    /// A bad header byte is reported as soon as it arrives, even before the header is
    /// complete; a too-large length as soon as the 8 header bytes are there.
    pub fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        let len = match self.state {
            State::Failed(offset) => return Err(DecodeError::Finished { offset }),
            State::Body(len) => len,
            State::Head => {
                let Some(header) = src.first_chunk::<HEADER_LEN>() else {
                    let bad = src
                        .iter()
                        .enumerate()
                        .find(|(_, b)| !header::is_hex_digit(**b));
                    if let Some((index, &byte)) = bad {
                        return Err(self.bad_header_byte(byte, index));
                    }
                    // Room for the rest of the header and more, if the buffer already has
                    // it (a reader that reserves 1 byte would otherwise read 1 at a time).
                    if src.capacity() - src.len() < HEADER_LEN {
                        let _reclaimed = src.try_reclaim(READ_CHUNK);
                    }
                    return Ok(None);
                };
                let announced = match header::parse(header) {
                    Ok(announced) => announced,
                    Err((index, byte)) => return Err(self.bad_header_byte(byte, index)),
                };
                let len = match usize::try_from(announced) {
                    Ok(len) if len <= self.max_body => len,
                    _ => {
                        let err = DecodeError::TooLarge {
                            announced,
                            max: self.max_body,
                            offset: self.offset,
                        };
                        return Err(self.fail(err));
                    }
                };
                src.advance(HEADER_LEN);
                self.offset = self.offset.saturating_add(HEADER_LEN as u64);
                self.state = State::Body(len);
                len
            }
        };
        if src.len() < len {
            make_room(src, len);
            return Ok(None);
        }
        let body = src.split_to(len).freeze();
        self.offset = self.offset.saturating_add(len as u64);
        self.state = State::Head;
        Ok(Some(body))
    }

    /// Like [`decode`](Self::decode), for when the stream has ended: `Ok(None)` only if the
    /// end falls exactly on a frame boundary; bytes left over are a truncation error that
    /// says how many bytes were expected and how many came.
    pub fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        if let Some(body) = self.decode(src)? {
            return Ok(Some(body));
        }
        let err = match self.state {
            State::Head if src.is_empty() => return Ok(None),
            State::Head => DecodeError::TruncatedHeader {
                offset: self.offset,
                got: src.len(),
            },
            State::Body(len) => DecodeError::TruncatedBody {
                offset: self.offset,
                expected: len,
                got: src.len(),
            },
            State::Failed(offset) => DecodeError::Finished { offset },
        };
        Err(self.fail(err))
    }

    fn bad_header_byte(&mut self, byte: u8, index: usize) -> DecodeError {
        let err = DecodeError::BadHeaderByte {
            byte,
            offset: self.offset.saturating_add(index as u64),
            header_offset: self.offset,
        };
        self.fail(err)
    }

    /// Finishes the decoder at `err`'s offset and hands the error back.
    fn fail(&mut self, err: DecodeError) -> DecodeError {
        if !self.is_finished() {
            self.state = State::Failed(err.offset().unwrap_or(self.offset));
        }
        err
    }
}

/// Makes room in `src` for more of a body of `len` bytes, of which it holds fewer.
///
/// Memory follows what has arrived, not what was announced. Capacity the buffer already
/// owns is reused first, for the whole rest of the body if it is there (`try_reclaim`
/// never allocates, and moves the bytes to the front of the allocation when the earlier,
/// already split-off frames are gone). Only then does the buffer grow, by at most what it
/// holds (or 64 KiB), never by the whole announced body; `reserve` lets the allocator
/// extend the allocation in place where it can.
fn make_room(src: &mut BytesMut, len: usize) {
    let have = src.len();
    let missing = len - have;
    if !src.try_reclaim(missing) {
        src.reserve(missing.min(have.max(READ_CHUNK)));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::FrameEncoder;

    /// Decodes `input` fed in one piece, then at EOF; returns the bodies and the error.
    fn decode_all(decoder: &mut FrameDecoder, input: &[u8]) -> (Vec<Bytes>, Option<DecodeError>) {
        let mut buf = BytesMut::from(input);
        let mut bodies = Vec::new();
        loop {
            match decoder.decode_eof(&mut buf) {
                Ok(Some(body)) => bodies.push(body),
                Ok(None) => return (bodies, None),
                Err(err) => return (bodies, Some(err)),
            }
        }
    }

    fn bad_byte(input: &[u8]) -> (u8, u64, u64) {
        let (_, err) = decode_all(&mut FrameDecoder::new(), input);
        match err {
            Some(DecodeError::BadHeaderByte {
                byte,
                offset,
                header_offset,
            }) => (byte, offset, header_offset),
            other => panic!("expected a bad header byte, got {other:?}"),
        }
    }

    #[test]
    fn decodes_the_spec_example() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"describe"}"#;
        let mut input = b"0000002c".to_vec();
        input.extend_from_slice(body);
        let (bodies, err) = decode_all(&mut FrameDecoder::new(), &input);
        assert!(err.is_none());
        assert_eq!(bodies, vec![Bytes::from_static(body)]);
    }

    #[test]
    fn uppercase_and_mixed_case_hex_is_accepted() {
        let (bodies, err) = decode_all(
            &mut FrameDecoder::new(),
            b"0000000Ahelloworld0000000bhello world",
        );
        assert!(err.is_none(), "{err:?}");
        assert_eq!(bodies, vec![&b"helloworld"[..], &b"hello world"[..]]);
        let mut input = b"0000001F".to_vec();
        input.extend_from_slice(&[b'x'; 31]);
        let (bodies, _) = decode_all(&mut FrameDecoder::new(), &input);
        assert_eq!(bodies[0].len(), 31);
    }

    #[test]
    fn plus_is_refused_with_byte_and_offset() {
        assert_eq!(bad_byte(b"+000002c"), (b'+', 0, 0));
        // After one good frame, the offending byte's offset is absolute.
        assert_eq!(bad_byte(b"00000001x+0000001x"), (b'+', 9, 9));
    }

    #[test]
    fn minus_space_0x_and_non_ascii_are_refused() {
        assert_eq!(bad_byte(b"-0000001x"), (b'-', 0, 0));
        assert_eq!(bad_byte(b"0000 01x"), (b' ', 4, 0));
        assert_eq!(bad_byte(b" 0000001x"), (b' ', 0, 0));
        assert_eq!(bad_byte(b"0x000001x"), (b'x', 1, 0));
        assert_eq!(bad_byte(b"00000001a0x000001"), (b'x', 10, 9));
        assert_eq!(bad_byte("0000000é".as_bytes()), (0xc3, 7, 0));
        assert_eq!(bad_byte(b"0000000\x80"), (0x80, 7, 0));
    }

    #[test]
    fn error_message_names_byte_and_offset() {
        let (_, err) = decode_all(&mut FrameDecoder::new(), b"00000001x0x000001");
        assert_eq!(
            err.unwrap().to_string(),
            "invalid frame header: byte 'x' (0x78) at stream offset 10 is not a hexadecimal \
             digit (it is byte 2 of the 8-byte length starting at offset 9, which may only use \
             0-9, a-f and A-F)"
        );
    }

    #[test]
    fn a_bad_byte_is_reported_before_the_header_is_complete() {
        let mut decoder = FrameDecoder::new();
        let mut buf = BytesMut::from(&b"00"[..]);
        assert!(decoder.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(b"+");
        match decoder.decode(&mut buf) {
            Err(DecodeError::BadHeaderByte { byte, offset, .. }) => {
                assert_eq!((byte, offset), (b'+', 2));
            }
            other => panic!("expected a bad header byte, got {other:?}"),
        }
    }

    #[test]
    fn zero_length_body_is_a_frame() {
        let (bodies, err) = decode_all(&mut FrameDecoder::new(), b"0000000000000000");
        assert!(err.is_none());
        assert_eq!(bodies, vec![Bytes::new(), Bytes::new()]);
    }

    #[test]
    fn exactly_max_is_accepted_and_max_plus_one_refused_before_the_body() {
        let mut decoder = FrameDecoder::with_max_body(16);
        let mut input = b"00000010".to_vec();
        input.extend_from_slice(&[7; 16]);
        let (bodies, err) = decode_all(&mut decoder, &input);
        assert!(err.is_none());
        assert_eq!(bodies, vec![vec![7; 16]]);

        // Only the header: no body byte has arrived when the error is raised.
        let mut decoder = FrameDecoder::with_max_body(16);
        let mut buf = BytesMut::from(&b"00000011"[..]);
        match decoder.decode(&mut buf) {
            Err(DecodeError::TooLarge {
                announced,
                max,
                offset,
            }) => assert_eq!((announced, max, offset), (17, 16, 0)),
            other => panic!("expected too large, got {other:?}"),
        }
        assert!(decoder.is_finished());
    }

    #[test]
    fn default_max_is_16_mib() {
        let mut decoder = FrameDecoder::new();
        assert_eq!(decoder.max_body(), 16 * 1024 * 1024);
        let mut buf = BytesMut::from(&b"01000000"[..]);
        assert!(decoder.decode(&mut buf).unwrap().is_none());
        assert_eq!(decoder.bytes_needed(&buf), 16 * 1024 * 1024);

        let mut buf = BytesMut::from(&b"01000001"[..]);
        let err = FrameDecoder::new().decode(&mut buf).unwrap_err();
        assert!(matches!(
            err,
            DecodeError::TooLarge {
                announced: 0x0100_0001,
                max: 0x0100_0000,
                offset: 0
            }
        ));
    }

    #[test]
    fn four_gib_is_refused_without_reserving() {
        let mut decoder = FrameDecoder::new();
        let mut buf = BytesMut::from(&b"ffffffff"[..]);
        let err = decoder.decode(&mut buf).unwrap_err();
        assert!(matches!(
            err,
            DecodeError::TooLarge {
                announced: u32::MAX,
                ..
            }
        ));
        assert!(buf.capacity() < 1024);
    }

    #[test]
    fn a_header_alone_does_not_reserve_the_announced_body() {
        let mut decoder = FrameDecoder::new();
        let mut buf = BytesMut::from(&b"01000000abc"[..]);
        assert!(decoder.decode(&mut buf).unwrap().is_none());
        assert!(
            buf.capacity() <= 2 * READ_CHUNK,
            "8 bytes reserved {} bytes",
            buf.capacity()
        );
        assert_eq!(decoder.bytes_needed(&buf), 16 * 1024 * 1024 - 3);
    }

    /// Feeds a long stream of large frames the way `FramedRead` does (`reserve(1)`, then
    /// a read of at most 64 KiB into the spare capacity), dropping each body at once.
    #[test]
    fn a_long_stream_of_large_frames_keeps_the_buffer_bounded() {
        const BODY: usize = 256 * 1024;
        let mut frame = BytesMut::new();
        FrameEncoder::new()
            .encode(&[b'z'; BODY], &mut frame)
            .unwrap();
        let stream = frame.repeat(32);
        let mut decoder = FrameDecoder::new();
        let mut buf = BytesMut::with_capacity(8 * 1024);
        let (mut rest, mut frames, mut largest) = (&stream[..], 0, 0);
        loop {
            while let Some(body) = decoder.decode(&mut buf).unwrap() {
                assert_eq!(body.len(), BODY);
                frames += 1;
            }
            largest = largest.max(buf.capacity());
            if rest.is_empty() {
                break;
            }
            buf.reserve(1);
            let n = (buf.capacity() - buf.len()).min(READ_CHUNK).min(rest.len());
            buf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
        assert_eq!(frames, 32);
        // One frame and one read at most: capacity is reused, not doubled.
        assert!(
            largest <= BODY + HEADER_LEN + READ_CHUNK,
            "the buffer grew to {largest} bytes"
        );
    }

    #[test]
    fn eof_at_a_boundary_is_clean() {
        let mut decoder = FrameDecoder::new();
        let (bodies, err) = decode_all(&mut decoder, b"00000001a");
        assert!(err.is_none());
        assert_eq!(bodies.len(), 1);
        assert_eq!(decoder.offset(), 9);
        let (bodies, err) = decode_all(&mut FrameDecoder::new(), b"");
        assert!(err.is_none() && bodies.is_empty());
    }

    #[test]
    fn eof_inside_a_header_says_expected_and_got() {
        let (bodies, err) = decode_all(&mut FrameDecoder::new(), b"00000001a000");
        assert_eq!(bodies.len(), 1);
        let err = err.unwrap();
        assert!(matches!(
            err,
            DecodeError::TruncatedHeader { offset: 9, got: 3 }
        ));
        assert_eq!(
            err.to_string(),
            "stream ended inside a frame header at stream offset 9: expected 8 header bytes, got 3"
        );
    }

    #[test]
    fn eof_inside_a_body_says_expected_and_got() {
        let (bodies, err) = decode_all(&mut FrameDecoder::new(), b"00000001a0000000ahello");
        assert_eq!(bodies.len(), 1);
        let err = err.unwrap();
        assert!(matches!(
            err,
            DecodeError::TruncatedBody {
                offset: 17,
                expected: 10,
                got: 5
            }
        ));
        assert_eq!(
            err.to_string(),
            "stream ended inside a frame body at stream offset 17: the header announced 10 \
             bytes, got 5"
        );
        // A header with no body byte at all.
        let (_, err) = decode_all(&mut FrameDecoder::new(), b"00000003");
        assert!(matches!(
            err,
            Some(DecodeError::TruncatedBody {
                offset: 8,
                expected: 3,
                got: 0
            })
        ));
    }

    #[test]
    fn two_frames_in_one_chunk() {
        let mut decoder = FrameDecoder::new();
        let mut buf = BytesMut::from(&b"00000003one00000003two"[..]);
        assert_eq!(decoder.decode(&mut buf).unwrap().unwrap(), "one");
        assert_eq!(decoder.decode(&mut buf).unwrap().unwrap(), "two");
        assert!(decoder.decode(&mut buf).unwrap().is_none());
        assert!(buf.is_empty());
        assert_eq!(decoder.offset(), 22);
    }

    fn sample_stream() -> (Vec<&'static [u8]>, Vec<u8>) {
        let bodies: Vec<&[u8]> = vec![b"{\"id\":1}", b"", b"x", b"0000000f"];
        let mut stream = BytesMut::new();
        for body in &bodies {
            FrameEncoder::new().encode(body, &mut stream).unwrap();
        }
        (bodies, stream.to_vec())
    }

    #[test]
    fn split_at_every_boundary() {
        let (bodies, stream) = sample_stream();
        for split in 0..=stream.len() {
            let mut decoder = FrameDecoder::new();
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for part in [&stream[..split], &stream[split..]] {
                buf.extend_from_slice(part);
                while let Some(body) = decoder.decode(&mut buf).unwrap() {
                    got.push(body);
                }
            }
            assert!(decoder.decode_eof(&mut buf).unwrap().is_none());
            assert_eq!(got, bodies, "split at {split}");
        }
    }

    #[test]
    fn one_byte_at_a_time() {
        let (bodies, stream) = sample_stream();
        let mut decoder = FrameDecoder::new();
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for byte in &stream {
            buf.extend_from_slice(std::slice::from_ref(byte));
            while let Some(body) = decoder.decode(&mut buf).unwrap() {
                got.push(body);
            }
        }
        assert!(decoder.decode_eof(&mut buf).unwrap().is_none());
        assert_eq!(got, bodies);
        assert_eq!(decoder.offset(), stream.len() as u64);
    }

    #[test]
    fn fused_after_an_error() {
        let mut decoder = FrameDecoder::new();
        let mut buf = BytesMut::from(&b"00000001a0000000+00000001b"[..]);
        assert_eq!(decoder.decode(&mut buf).unwrap().unwrap(), "a");
        assert!(matches!(
            decoder.decode(&mut buf),
            Err(DecodeError::BadHeaderByte { offset: 16, .. })
        ));
        for _ in 0..3 {
            let err = decoder.decode(&mut buf).unwrap_err();
            assert!(
                matches!(err, DecodeError::Finished { offset: 16 }),
                "{err:?}"
            );
            assert!(matches!(
                decoder.decode_eof(&mut buf),
                Err(DecodeError::Finished { offset: 16 })
            ));
        }
        assert_eq!(
            DecodeError::Finished { offset: 16 }.to_string(),
            "the frame decoder already stopped at a framing error at stream offset 16 and \
             cannot resynchronise the stream"
        );
    }

    #[test]
    fn fused_after_truncation() {
        let mut decoder = FrameDecoder::new();
        let mut buf = BytesMut::from(&b"0000"[..]);
        assert!(decoder.decode_eof(&mut buf).is_err());
        buf.extend_from_slice(b"0001a");
        assert!(matches!(
            decoder.decode(&mut buf),
            Err(DecodeError::Finished { offset: 0 })
        ));
    }
}
