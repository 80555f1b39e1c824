//! `curupira frame encode|decode`: protocol frames from lines and lines from frames, for
//! talking to an extension by hand and for scripts.
//!
//! `encode` reads stdin line by line; each line, without its `\n` and without one `\r`
//! before it (so CRLF files give the same bodies), becomes one frame unless it is empty.
//! `decode` streams: each body is written with a `\n` and flushed as soon as its frame is
//! complete. A framing error keeps what was already written, prints one `error:` line
//! naming the problem and its byte offset, and exits 1; an I/O error exits 2.

use std::io::{self, BufRead, Read, Write};
use std::process::ExitCode;

use anyhow::Context;
use curupira_framing::{DEFAULT_MAX_BODY, DecodeError, EncodeError, FrameReader, FrameWriter};

/// The subcommands of `curupira frame`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Read lines on stdin and write each non-empty one as a frame on stdout.
    ///
    /// The line's `\n` (and a `\r` just before it) is not part of the body.
    Encode(Limit),
    /// Read frames on stdin and write each body followed by `\n` on stdout.
    ///
    /// Each body is written as soon as its frame is complete. On a framing error the
    /// bodies before it are kept, one line on stderr names the problem and its byte
    /// offset, and the exit code is 1.
    Decode(Limit),
}

#[derive(clap::Args)]
pub struct Limit {
    /// Largest frame body accepted, in bytes (the protocol's default is 16 MiB).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BODY)]
    max_frame_bytes: usize,
}

/// Runs `curupira frame …`.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Encode(limit) => encode(io::stdin().lock(), limit.max_frame_bytes),
        Command::Decode(limit) => decode(io::stdin().lock(), limit.max_frame_bytes),
    }
}

fn encode(mut input: impl BufRead, max_body: usize) -> anyhow::Result<ExitCode> {
    let mut frames = FrameWriter::with_max_body(io::stdout().lock(), max_body);
    let max_body = frames.max_body();
    // A line longer than this (body, `\r`, `\n`) cannot fit: stop reading it there.
    let line_limit = u64::try_from(max_body)
        .unwrap_or(u64::MAX)
        .saturating_add(2);
    let mut line = Vec::new();
    let mut line_number: u64 = 0;
    loop {
        line.clear();
        let read = (&mut input)
            .take(line_limit)
            .read_until(b'\n', &mut line)
            .context("reading lines from stdin failed")?;
        if read == 0 {
            return Ok(ExitCode::SUCCESS);
        }
        line_number += 1;
        let body = match line.strip_suffix(b"\n") {
            Some(body) => body.strip_suffix(b"\r").unwrap_or(body),
            None if u64::try_from(read).unwrap_or(u64::MAX) >= line_limit => {
                eprintln!(
                    "error: line {line_number}: frame body too large: more than the maximum \
                     of {max_body} bytes"
                );
                return Ok(ExitCode::from(1));
            }
            None => line.strip_suffix(b"\r").unwrap_or(&line),
        };
        if body.is_empty() {
            continue;
        }
        match frames.write_frame(body).and_then(|()| frames.flush()) {
            Ok(()) => {}
            Err(err @ EncodeError::BodyTooLarge { .. }) => {
                eprintln!("error: line {line_number}: {err}");
                return Ok(ExitCode::from(1));
            }
            Err(err) => return Err(anyhow::anyhow!("writing frames to stdout failed: {err}")),
        }
    }
}

fn decode(input: impl Read, max_body: usize) -> anyhow::Result<ExitCode> {
    let mut frames = FrameReader::with_max_body(input, max_body);
    let mut out = io::stdout().lock();
    loop {
        match frames.read_frame() {
            Ok(Some(body)) => {
                out.write_all(&body)
                    .and_then(|()| out.write_all(b"\n"))
                    .and_then(|()| out.flush())
                    .context("writing bodies to stdout failed")?;
            }
            Ok(None) => return Ok(ExitCode::SUCCESS),
            Err(DecodeError::Io(err)) => {
                return Err(anyhow::anyhow!(
                    "reading frames from stdin failed at byte offset {}: {err}",
                    frames.bytes_read()
                ));
            }
            Err(err) => {
                eprintln!("error: {err}");
                return Ok(ExitCode::from(1));
            }
        }
    }
}
