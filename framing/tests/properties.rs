//! Property tests: round trips under any chunking, and the decoder against a one-shot
//! reference model on arbitrary bytes (no panic, same bodies, same error at the same
//! offset, never more than max + 8 bytes buffered, finished after an error).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{self, Read};

use bytes::{Bytes, BytesMut};
use curupira_framing::{DecodeError, FrameDecoder, FrameEncoder, FrameReader, FrameWriter};
use proptest::prelude::*;

/// What a whole stream decodes to: the bodies, then either a clean end or an error.
#[derive(Debug, PartialEq, Eq)]
enum End {
    Clean,
    BadHeaderByte {
        byte: u8,
        offset: u64,
    },
    TooLarge {
        announced: u32,
        offset: u64,
    },
    TruncatedHeader {
        offset: u64,
        got: usize,
    },
    TruncatedBody {
        offset: u64,
        expected: usize,
        got: usize,
    },
}

impl End {
    fn from_error(err: &DecodeError) -> Self {
        match *err {
            DecodeError::BadHeaderByte { byte, offset, .. } => End::BadHeaderByte { byte, offset },
            DecodeError::TooLarge {
                announced, offset, ..
            } => End::TooLarge { announced, offset },
            DecodeError::TruncatedHeader { offset, got } => End::TruncatedHeader { offset, got },
            DecodeError::TruncatedBody {
                offset,
                expected,
                got,
            } => End::TruncatedBody {
                offset,
                expected,
                got,
            },
            ref other => panic!("unexpected error {other:?}"),
        }
    }
}

/// The reference: the format rules applied to the whole input at once, as plainly as
/// possible (the header is only handed to `from_str_radix` once every byte is known to be
/// a hex digit).
fn model(input: &[u8], max: usize) -> (Vec<Vec<u8>>, End) {
    let mut bodies = Vec::new();
    let mut pos = 0;
    loop {
        let rest = &input[pos..];
        if rest.is_empty() {
            return (bodies, End::Clean);
        }
        let head = &rest[..rest.len().min(8)];
        if let Some(i) = head.iter().position(|b| !b.is_ascii_hexdigit()) {
            let offset = (pos + i) as u64;
            return (
                bodies,
                End::BadHeaderByte {
                    byte: head[i],
                    offset,
                },
            );
        }
        if head.len() < 8 {
            let end = End::TruncatedHeader {
                offset: pos as u64,
                got: head.len(),
            };
            return (bodies, end);
        }
        let announced = u32::from_str_radix(std::str::from_utf8(head).unwrap(), 16).unwrap();
        if announced as usize > max {
            return (
                bodies,
                End::TooLarge {
                    announced,
                    offset: pos as u64,
                },
            );
        }
        let len = announced as usize;
        let body = &rest[8..];
        if body.len() < len {
            let end = End::TruncatedBody {
                offset: (pos + 8) as u64,
                expected: len,
                got: body.len(),
            };
            return (bodies, end);
        }
        bodies.push(body[..len].to_vec());
        pos += 8 + len;
    }
}

/// Feeds `input` to a decoder the way a careful reader does: never more than the decoder
/// says it needs, in pieces of the given sizes. Checks the invariants on the way.
fn decode_chunked(input: &[u8], chunks: &[usize], max: usize) -> (Vec<Bytes>, End) {
    let mut decoder = FrameDecoder::with_max_body(max);
    let mut buf = BytesMut::new();
    let mut rest = input;
    let mut bodies = Vec::new();
    let mut sizes = chunks.iter().copied().cycle();
    loop {
        let result = match decoder.decode(&mut buf) {
            Ok(None) if !rest.is_empty() => {
                let needed = decoder.bytes_needed(&buf);
                assert!(needed > 0, "decode returned None but needs nothing");
                let take = sizes.next().unwrap_or(1).clamp(1, needed).min(rest.len());
                buf.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                assert!(
                    buf.len() <= max + 8,
                    "{} bytes buffered, max {max}",
                    buf.len()
                );
                continue;
            }
            Ok(None) => decoder.decode_eof(&mut buf),
            other => other,
        };
        match result {
            Ok(Some(body)) => {
                assert!(body.len() <= max);
                bodies.push(body);
            }
            Ok(None) => return (bodies, End::Clean),
            Err(err) => {
                let at = err.offset().unwrap();
                assert!(decoder.is_finished());
                for _ in 0..2 {
                    let again = decoder.decode(&mut buf).unwrap_err();
                    assert!(
                        matches!(again, DecodeError::Finished { offset } if offset == at),
                        "not fused: {again:?}"
                    );
                }
                return (bodies, End::from_error(&err));
            }
        }
    }
}

/// Bytes that are often hex digits, so that arbitrary input reaches past the header.
fn stream_bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => prop::sample::select(b"0123456789abcdefABCDEF".to_vec()),
        1 => Just(b'0'),
        1 => any::<u8>(),
    ];
    prop::collection::vec(byte, 0..400)
}

fn bodies() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 0..12)
}

fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..80, 1..16)
}

fn encode_all(bodies: &[Vec<u8>]) -> Vec<u8> {
    let mut stream = BytesMut::new();
    for body in bodies {
        FrameEncoder::new().encode(body, &mut stream).unwrap();
    }
    stream.to_vec()
}

/// A reader that hands out its bytes in pieces of the given sizes.
struct Chunked<'a> {
    data: &'a [u8],
    pos: usize,
    sizes: Vec<usize>,
    next: usize,
}

impl<'a> Chunked<'a> {
    fn new(data: &'a [u8], sizes: Vec<usize>) -> Self {
        Self {
            data,
            pos: 0,
            sizes,
            next: 0,
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        let n = size.min(buf.len()).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn round_trip_under_any_chunking(bodies in bodies(), chunks in chunk_sizes()) {
        let stream = encode_all(&bodies);
        let (got, end) = decode_chunked(&stream, &chunks, 200);
        prop_assert_eq!(end, End::Clean);
        prop_assert_eq!(got, bodies);
    }

    #[test]
    fn arbitrary_bytes_decode_like_the_model(
        input in stream_bytes(),
        chunks in chunk_sizes(),
        max in 0usize..64,
    ) {
        let (got, end) = decode_chunked(&input, &chunks, max);
        let (expected, expected_end) = model(&input, max);
        prop_assert_eq!(got, expected);
        prop_assert_eq!(end, expected_end);
    }

    #[test]
    fn fully_arbitrary_bytes_in_one_piece(input in any::<Vec<u8>>(), max in 0usize..1024) {
        let mut decoder = FrameDecoder::with_max_body(max);
        let mut buf = BytesMut::from(&input[..]);
        let mut bodies = Vec::new();
        let end = loop {
            match decoder.decode_eof(&mut buf) {
                Ok(Some(body)) => bodies.push(body.to_vec()),
                Ok(None) => break End::Clean,
                Err(err) => break End::from_error(&err),
            }
        };
        prop_assert_eq!((bodies, end), model(&input, max));
    }

    #[test]
    fn writer_and_reader_round_trip(bodies in bodies(), chunks in chunk_sizes()) {
        let mut writer = FrameWriter::new(Vec::new());
        for body in &bodies {
            writer.write_frame(body).unwrap();
        }
        let stream = writer.into_inner();
        prop_assert_eq!(&stream, &encode_all(&bodies));
        let mut reader = FrameReader::new(Chunked::new(&stream, chunks));
        let mut got = Vec::new();
        while let Some(body) = reader.read_frame().unwrap() {
            // It never reads past the frame it returns.
            prop_assert_eq!(reader.get_ref().pos as u64, reader.offset());
            prop_assert_eq!(reader.buffered(), 0);
            got.push(body.to_vec());
        }
        prop_assert_eq!(got, bodies);
        prop_assert_eq!(reader.offset(), stream.len() as u64);
    }

    #[test]
    fn reader_matches_the_model_on_arbitrary_bytes(
        input in stream_bytes(),
        chunks in chunk_sizes(),
        max in 0usize..64,
    ) {
        let mut reader = FrameReader::with_max_body(Chunked::new(&input, chunks), max);
        let mut got = Vec::new();
        let end = loop {
            match reader.read_frame() {
                Ok(Some(body)) => got.push(body.to_vec()),
                Ok(None) => break End::Clean,
                Err(err) => break End::from_error(&err),
            }
            // Never more than the frame in progress read from the stream.
            prop_assert!(reader.get_ref().pos as u64 <= reader.offset() + 8 + max as u64);
        };
        prop_assert!(reader.buffered() <= max + 8);
        prop_assert_eq!((got, end), model(&input, max));
    }
}
