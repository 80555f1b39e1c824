//! Fuzzes the frame decoder: arbitrary bytes under arbitrary chunking must decode exactly
//! as the same bytes in one piece (and as through `FrameReader`), never panic, never
//! buffer more than 8 + max bytes when fed only what the decoder asks for, never return a
//! body over the maximum, and stay finished after an error. Then round-trips arbitrary
//! bodies through the encoder and back.

use std::io::{self, Read};

use arbitrary::Arbitrary;
use bytes::{Bytes, BytesMut};
use curupira_framing::{
    DecodeError, EncodeError, FrameDecoder, FrameEncoder, FrameReader, FrameWriter,
};

/// One run's input, read from libFuzzer's bytes with `arbitrary`.
#[derive(Arbitrary, Debug)]
pub struct Input {
    /// Maximum body size; small so that the limit is often reached.
    max: u16,
    /// Sizes of the pieces the stream arrives in, cycled (0 counts as 1).
    chunks: Vec<u8>,
    /// A raw stream to decode.
    stream: Vec<u8>,
    /// Bodies to encode and decode again.
    bodies: Vec<Vec<u8>>,
}

/// Bodies, then the error text (`None` for a clean end).
type Outcome = (Vec<Bytes>, Option<String>);

/// Runs every check on one input, as the fuzz target does once libFuzzer's bytes
/// are read into an [`Input`] (see [`super::typed`]).
pub fn check(input: Input) {
    let max = usize::from(input.max);
    let chunks: Vec<usize> = input
        .chunks
        .iter()
        .map(|&c| usize::from(c).max(1))
        .collect();

    let whole = decode_whole(&input.stream, max);
    assert_eq!(decode_chunked(&input.stream, &chunks, max, false), whole);
    assert_eq!(decode_chunked(&input.stream, &chunks, max, true), whole);
    assert_eq!(decode_reader(&input.stream, &chunks, max), whole);

    round_trip(&input.bodies, &chunks, max);
}

fn decode_whole(stream: &[u8], max: usize) -> Outcome {
    let mut decoder = FrameDecoder::with_max_body(max);
    let mut buf = BytesMut::from(stream);
    let mut bodies = Vec::new();
    loop {
        match decoder.decode_eof(&mut buf) {
            Ok(Some(body)) => {
                assert!(body.len() <= max);
                bodies.push(body);
            }
            Ok(None) => {
                assert_eq!(decoder.offset(), stream.len() as u64);
                return (bodies, None);
            }
            Err(err) => return (bodies, Some(finish(&mut decoder, &mut buf, err))),
        }
    }
}

/// Feeds the stream in pieces; with `careful`, never more than the decoder needs.
fn decode_chunked(stream: &[u8], chunks: &[usize], max: usize, careful: bool) -> Outcome {
    let mut decoder = FrameDecoder::with_max_body(max);
    let mut buf = BytesMut::new();
    let mut rest = stream;
    let mut sizes = chunks.iter().copied().cycle();
    let mut bodies = Vec::new();
    loop {
        let result = match decoder.decode(&mut buf) {
            Ok(None) if !rest.is_empty() => {
                let needed = decoder.bytes_needed(&buf);
                assert!(needed > 0);
                let mut take = sizes.next().unwrap_or(1).min(rest.len());
                if careful {
                    take = take.min(needed);
                }
                buf.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if careful {
                    assert!(
                        buf.len() <= max + 8,
                        "{} bytes buffered, max {max}",
                        buf.len()
                    );
                }
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
            Ok(None) => return (bodies, None),
            Err(err) => return (bodies, Some(finish(&mut decoder, &mut buf, err))),
        }
    }
}

/// Checks that the decoder is finished after `err` and returns its message.
fn finish(decoder: &mut FrameDecoder, buf: &mut BytesMut, err: DecodeError) -> String {
    let at = err.offset().expect("framing errors carry an offset");
    assert!(decoder.is_finished());
    buf.extend_from_slice(b"00000000");
    for _ in 0..2 {
        match decoder.decode(buf) {
            Err(DecodeError::Finished { offset }) => assert_eq!(offset, at),
            other => panic!("decoder not fused after {err}: {other:?}"),
        }
    }
    err.to_string()
}

/// A reader that hands out its bytes in pieces of the given sizes.
struct Chunked<'a> {
    data: &'a [u8],
    sizes: std::iter::Cycle<std::slice::Iter<'a, usize>>,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.sizes.next().copied().unwrap_or(1);
        let n = size.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn decode_reader(stream: &[u8], chunks: &[usize], max: usize) -> Outcome {
    let source = Chunked {
        data: stream,
        sizes: chunks.iter().cycle(),
    };
    let mut reader = FrameReader::with_max_body(source, max);
    let mut bodies = Vec::new();
    loop {
        let result = reader.read_frame();
        assert!(reader.buffered() <= max + 8);
        match result {
            Ok(Some(body)) => {
                // It never reads past the frame it returns.
                let consumed = stream.len() - reader.get_ref().data.len();
                assert_eq!(consumed as u64, reader.offset());
                bodies.push(body);
            }
            Ok(None) => return (bodies, None),
            Err(err) => {
                let text = err.to_string();
                assert!(matches!(
                    reader.read_frame(),
                    Err(DecodeError::Finished { .. })
                ));
                return (bodies, Some(text));
            }
        }
    }
}

fn round_trip(bodies: &[Vec<u8>], chunks: &[usize], max: usize) {
    let encoder = FrameEncoder::with_max_body(max);
    let mut writer = FrameWriter::with_max_body(Vec::new(), max);
    let mut stream = BytesMut::new();
    let mut accepted = Vec::new();
    for body in bodies {
        let before = stream.len();
        match encoder.encode(body, &mut stream) {
            Ok(()) => {
                assert!(body.len() <= max);
                assert_eq!(stream.len(), before + 8 + body.len());
                writer
                    .write_frame(body)
                    .expect("the writer takes what the encoder takes");
                accepted.push(Bytes::copy_from_slice(body));
            }
            Err(EncodeError::BodyTooLarge { len, max: limit }) => {
                assert_eq!((len, limit), (body.len(), max));
                assert!(body.len() > max);
                assert_eq!(stream.len(), before, "a refused body writes nothing");
                assert!(writer.write_frame(body).is_err());
            }
            Err(err) => panic!("unexpected {err}"),
        }
    }
    assert_eq!(writer.get_ref().as_slice(), &stream[..]);
    // Each frame is 8 lowercase hex digits, then the body, back to back.
    let mut rest = &stream[..];
    for body in &accepted {
        let (header, tail) = rest.split_at(8);
        assert!(header.iter().all(|b| b"0123456789abcdef".contains(b)));
        assert_eq!(&tail[..body.len()], &body[..]);
        rest = &tail[body.len()..];
    }
    assert!(rest.is_empty());
    let expected: Outcome = (accepted, None);
    assert_eq!(decode_chunked(&stream, chunks, max, false), expected);
    assert_eq!(decode_reader(&stream, chunks, max), expected);
}
