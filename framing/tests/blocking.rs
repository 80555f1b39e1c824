//! `FrameReader` / `FrameWriter` over std I/O: reads never run past the current frame or
//! 64 KiB, I/O errors are resumable, framing errors are final, writes are whole frames.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{self, Read, Write};

use curupira_framing::{DecodeError, EncodeError, FrameReader, FrameWriter};

/// A reader that records the size of every buffer it is offered and can fail on cue.
struct Probe {
    data: Vec<u8>,
    pos: usize,
    requests: Vec<usize>,
    /// Reads (by index) that fail with this kind instead of returning data.
    failures: Vec<(usize, io::ErrorKind)>,
}

impl Probe {
    fn new(data: impl Into<Vec<u8>>) -> Self {
        Self {
            data: data.into(),
            pos: 0,
            requests: Vec::new(),
            failures: Vec::new(),
        }
    }
}

impl Read for Probe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let call = self.requests.len();
        self.requests.push(buf.len());
        if let Some(&(_, kind)) = self.failures.iter().find(|(at, _)| *at == call) {
            return Err(io::Error::new(kind, "injected"));
        }
        let n = buf.len().min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("{:08x}", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

#[test]
fn a_large_body_is_read_in_bounded_chunks() {
    let body = vec![b'q'; 300 * 1024];
    let mut reader = FrameReader::new(Probe::new(frame(&body)));
    assert_eq!(reader.read_frame().unwrap().unwrap(), body);
    let requests = &reader.get_ref().requests;
    assert_eq!(requests[0], 8, "the header is read alone");
    assert!(requests.iter().all(|&n| n <= 64 * 1024), "{requests:?}");
    assert_eq!(requests.len(), 1 + 5, "8 bytes, then 4 x 64 KiB + 44 KiB");
    assert_eq!(reader.read_frame().unwrap(), None);
}

#[test]
fn four_gib_is_refused_after_reading_only_the_header() {
    let mut data = b"ffffffff".to_vec();
    data.extend_from_slice(&[0; 100]);
    let mut reader = FrameReader::new(Probe::new(data));
    let err = reader.read_frame().unwrap_err();
    assert!(matches!(
        err,
        DecodeError::TooLarge {
            announced: u32::MAX,
            max: 16_777_216,
            offset: 0
        }
    ));
    assert_eq!(reader.get_ref().pos, 8, "no body byte was read");
    assert!(reader.buffered() <= 8);
}

#[test]
fn it_never_reads_past_the_frame_it_returns() {
    let mut data = frame(b"first");
    data.extend_from_slice(b"then something else entirely");
    let mut reader = FrameReader::new(&data[..]);
    assert_eq!(reader.read_frame().unwrap().unwrap(), "first");
    let mut rest = String::new();
    reader.into_inner().read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "then something else entirely");
}

#[test]
fn io_errors_do_not_finish_the_reader_and_interrupted_is_retried() {
    let mut data = frame(b"one");
    data.extend_from_slice(&frame(b"two"));
    let mut probe = Probe::new(data);
    // Read 0 is the header, 1 the body of "one", 2 is interrupted, 3 times out.
    probe.failures = vec![
        (2, io::ErrorKind::Interrupted),
        (3, io::ErrorKind::TimedOut),
    ];
    let mut reader = FrameReader::new(probe);
    assert_eq!(reader.read_frame().unwrap().unwrap(), "one");
    let err = reader.read_frame().unwrap_err();
    assert!(matches!(&err, DecodeError::Io(e) if e.kind() == io::ErrorKind::TimedOut));
    assert_eq!(err.to_string(), "I/O error while reading frames: injected");
    assert_eq!(reader.read_frame().unwrap().unwrap(), "two");
    assert_eq!(reader.read_frame().unwrap(), None);
    assert_eq!(reader.bytes_read(), 22);
}

#[test]
fn truncation_is_reported_with_expected_and_got() {
    let mut data = frame(b"ok");
    data.extend_from_slice(b"0000000ahalf");
    let mut reader = FrameReader::new(&data[..]);
    assert_eq!(reader.read_frame().unwrap().unwrap(), "ok");
    let err = reader.read_frame().unwrap_err();
    assert_eq!(
        err.to_string(),
        "stream ended inside a frame body at stream offset 18: the header announced 10 bytes, \
         got 4"
    );
    assert!(matches!(
        reader.read_frame(),
        Err(DecodeError::Finished { offset: 18 })
    ));
}

#[test]
fn the_iterator_yields_an_error_once_then_ends() {
    let mut data = frame(b"a");
    data.extend_from_slice(b"0000-001b");
    let items: Vec<_> = FrameReader::new(&data[..]).collect();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].as_ref().unwrap(), "a");
    assert!(matches!(
        items[1],
        Err(DecodeError::BadHeaderByte {
            byte: b'-',
            offset: 13,
            header_offset: 9
        })
    ));
    let clean: Vec<_> = FrameReader::new(&frame(b"x")[..])
        .map(Result::unwrap)
        .collect();
    assert_eq!(clean, vec!["x"]);
}

/// A writer that records each `write` call.
#[derive(Default)]
struct Writes(Vec<Vec<u8>>);

impl Write for Writes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.push(buf.to_vec());
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_small_frame_is_one_write_a_large_one_two() {
    let mut writer = FrameWriter::new(Writes::default());
    writer.write_frame(b"{}").unwrap();
    let big = vec![b'b'; 100_000];
    writer.write_frame(&big).unwrap();
    writer.flush().unwrap();
    let writes = writer.into_inner().0;
    assert_eq!(writes.len(), 3);
    assert_eq!(writes[0], b"00000002{}");
    assert_eq!(writes[1], b"000186a0");
    assert_eq!(writes[2], big);
}

#[test]
fn the_writer_refuses_too_large_bodies_and_writes_nothing() {
    let mut writer = FrameWriter::with_max_body(Vec::new(), 3);
    assert_eq!(writer.max_body(), 3);
    writer.write_frame(b"abc").unwrap();
    let err = writer.write_frame(b"abcd").unwrap_err();
    assert!(matches!(err, EncodeError::BodyTooLarge { len: 4, max: 3 }));
    assert_eq!(writer.get_ref(), b"00000003abc");
}

#[test]
fn write_errors_are_reported() {
    struct Broken;
    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::BrokenPipe, "pipe closed"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let err = FrameWriter::new(Broken).write_frame(b"x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "I/O error while writing frames: pipe closed"
    );
}
