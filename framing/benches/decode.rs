//! Decoding throughput of `FrameDecoder` next to `tokio_util`'s `LengthDelimitedCodec`
//! (4-byte big-endian prefix) on the same bodies, in the same run.
//!
//! Three ways of feeding each decoder, for bodies of 64 B, 1 KiB, 64 KiB and 1 MiB (about
//! 8 MiB of bodies per size):
//! - `in_memory`: the whole stream is in one buffer; frames are split off it.
//! - `piped`: the stream arrives as a pipe delivers it, at most 64 KiB per read, appended
//!   to the spare capacity of the buffer as `FramedRead` does (`reserve(1)` then read).
//!   Decoder and buffer live across iterations, as on a long-lived connection.
//! - `piped_cold`: the same with a new decoder and an 8 KiB buffer for every 8 MiB, so the
//!   buffer's growth to the frame size is part of the measurement. Here the 1 MiB case
//!   shows the price of never reserving an announced length up front: our buffer doubles
//!   from what has arrived, where `LengthDelimitedCodec` reserves the whole frame at once.
//!
//! Throughput counts body bytes, so both decoders are measured on the same payload.
//!
//! `cargo bench -p curupira-framing --bench decode -- --warm-up-time 1 --measurement-time 3`

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;

use bytes::{BufMut, BytesMut};
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use curupira_framing::{FrameDecoder, FrameEncoder};
use tokio_util::codec::{Decoder, LengthDelimitedCodec};

const STREAM_BODY_BYTES: usize = 8 * 1024 * 1024;
const PIPE_READ: usize = 64 * 1024;
const SIZES: [(usize, &str); 4] = [
    (64, "64B"),
    (1024, "1KiB"),
    (64 * 1024, "64KiB"),
    (1024 * 1024, "1MiB"),
];

struct Streams {
    ours: Vec<u8>,
    theirs: Vec<u8>,
    frames: usize,
}

fn streams(body_len: usize) -> Streams {
    let frames = STREAM_BODY_BYTES / body_len;
    let body: Vec<u8> = (0..body_len).map(|i| b'a' + (i % 26) as u8).collect();
    let mut ours = BytesMut::new();
    let mut theirs = BytesMut::new();
    for _ in 0..frames {
        FrameEncoder::new().encode(&body, &mut ours).unwrap();
        theirs.put_u32(body_len as u32);
        theirs.extend_from_slice(&body);
    }
    Streams {
        ours: ours.to_vec(),
        theirs: theirs.to_vec(),
        frames,
    }
}

fn length_delimited() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .max_frame_length(16 * 1024 * 1024)
        .new_codec()
}

/// Decodes every frame of a stream that is already in `buf`; returns the frame count.
fn drain<D: Decoder>(decoder: &mut D, buf: &mut BytesMut) -> usize
where
    D::Error: std::fmt::Debug,
{
    let mut frames = 0;
    while let Some(frame) = decoder.decode(buf).unwrap() {
        black_box(frame);
        frames += 1;
    }
    frames
}

/// Feeds `stream` as a pipe would and decodes as it goes; returns the frame count.
fn piped<D: Decoder>(decoder: &mut D, buf: &mut BytesMut, stream: &[u8]) -> usize
where
    D::Error: std::fmt::Debug,
{
    let mut rest = stream;
    let mut frames = 0;
    loop {
        frames += drain(decoder, buf);
        if rest.is_empty() {
            return frames;
        }
        buf.reserve(1);
        let n = (buf.capacity() - buf.len()).min(PIPE_READ).min(rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
    }
}

fn bench_in_memory(c: &mut Criterion) {
    let mut group = c.benchmark_group("in_memory");
    for (size, label) in SIZES {
        let s = streams(size);
        group.throughput(Throughput::Bytes((s.frames * size) as u64));
        group.bench_function(BenchmarkId::new("curupira", label), |b| {
            b.iter_batched(
                || BytesMut::from(&s.ours[..]),
                |mut buf| {
                    let n = drain(&mut FrameDecoder::new(), &mut buf);
                    assert_eq!(n, s.frames);
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(BenchmarkId::new("length_delimited", label), |b| {
            b.iter_batched(
                || BytesMut::from(&s.theirs[..]),
                |mut buf| {
                    let n = drain(&mut length_delimited(), &mut buf);
                    assert_eq!(n, s.frames);
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn bench_piped(c: &mut Criterion) {
    let mut group = c.benchmark_group("piped");
    for (size, label) in SIZES {
        let s = streams(size);
        group.throughput(Throughput::Bytes((s.frames * size) as u64));
        group.bench_function(BenchmarkId::new("curupira", label), |b| {
            let (mut decoder, mut buf) = (FrameDecoder::new(), BytesMut::with_capacity(8192));
            b.iter(|| assert_eq!(piped(&mut decoder, &mut buf, &s.ours), s.frames))
        });
        group.bench_function(BenchmarkId::new("length_delimited", label), |b| {
            let (mut decoder, mut buf) = (length_delimited(), BytesMut::with_capacity(8192));
            b.iter(|| assert_eq!(piped(&mut decoder, &mut buf, &s.theirs), s.frames))
        });
    }
    group.finish();
}

fn bench_piped_cold(c: &mut Criterion) {
    let mut group = c.benchmark_group("piped_cold");
    for (size, label) in SIZES {
        let s = streams(size);
        group.throughput(Throughput::Bytes((s.frames * size) as u64));
        group.bench_function(BenchmarkId::new("curupira", label), |b| {
            b.iter(|| {
                let (mut decoder, mut buf) = (FrameDecoder::new(), BytesMut::with_capacity(8192));
                assert_eq!(piped(&mut decoder, &mut buf, &s.ours), s.frames)
            })
        });
        group.bench_function(BenchmarkId::new("length_delimited", label), |b| {
            b.iter(|| {
                let (mut decoder, mut buf) = (length_delimited(), BytesMut::with_capacity(8192));
                assert_eq!(piped(&mut decoder, &mut buf, &s.theirs), s.frames)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_in_memory, bench_piped, bench_piped_cold);
criterion_main!(benches);
