//! `curupira frame encode|decode` run as the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(20);

fn curupira(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_curupira"));
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

use cli_support::run_with_stdin as run;

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Waits for the child to exit on its own, without closing its stdin.
fn wait_with_deadline(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("curupira did not exit within {WAIT:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn encode_then_decode_round_trips() {
    let lines = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"describe\"}\r\n\n{\"x\":\"é\"}\nlast";
    let encoded = run(&["frame", "encode"], lines.as_bytes());
    assert!(encoded.status.success(), "{}", stderr(&encoded));
    assert_eq!(
        encoded.stdout,
        "0000002c{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"describe\"}0000000a{\"x\":\"é\"}00000004last"
            .as_bytes()
    );
    let decoded = run(&["frame", "decode"], &encoded.stdout);
    assert!(decoded.status.success(), "{}", stderr(&decoded));
    assert_eq!(
        String::from_utf8(decoded.stdout).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"describe\"}\n{\"x\":\"é\"}\nlast\n"
    );
    assert!(decoded.stderr.is_empty());
}

#[test]
fn decode_accepts_uppercase_and_empty_bodies() {
    let out = run(&["frame", "decode"], b"0000000Ahelloworld00000000");
    assert!(out.status.success());
    assert_eq!(out.stdout, b"helloworld\n\n");
}

#[test]
fn a_bad_header_keeps_earlier_bodies_and_names_the_offset() {
    let out = run(&["frame", "decode"], b"00000002{}00000003abc+0000002{}");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"{}\nabc\n");
    assert_eq!(
        stderr(&out),
        "error: invalid frame header: byte '+' (0x2b) at stream offset 21 is not a hexadecimal \
         digit (it is byte 1 of the 8-byte length starting at offset 21, which may only use \
         0-9, a-f and A-F)\n"
    );
}

#[test]
fn four_gib_is_refused_at_once() {
    let mut child = curupira(&["frame", "decode"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"ffffffff").unwrap();
    stdin.flush().unwrap();
    // stdin stays open: the refusal must come from the 8 header bytes alone.
    let status = wait_with_deadline(&mut child);
    drop(stdin);
    assert_eq!(status.code(), Some(1));
    let output = child.wait_with_output().unwrap();
    assert!(output.stdout.is_empty());
    assert_eq!(
        stderr(&output),
        "error: frame too large: the header at stream offset 0 announces a 4294967295-byte \
         body, more than the maximum of 16777216 bytes\n"
    );
}

#[test]
fn max_frame_bytes_is_honoured() {
    let out = run(
        &["frame", "decode", "--max-frame-bytes", "3"],
        b"00000003abc00000004abcd",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"abc\n");
    assert!(stderr(&out).contains("announces a 4-byte body, more than the maximum of 3 bytes"));
}

#[test]
fn truncation_says_expected_and_got() {
    let out = run(&["frame", "decode"], b"00000001a0000000ahalf");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"a\n");
    assert_eq!(
        stderr(&out),
        "error: stream ended inside a frame body at stream offset 17: the header announced 10 \
         bytes, got 4\n"
    );
    let out = run(&["frame", "decode"], b"00000001a000");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: stream ended inside a frame header at stream offset 9: expected 8 header \
         bytes, got 3\n"
    );
}

#[test]
fn decode_streams_a_pipe_fed_one_byte_at_a_time() {
    let mut child = curupira(&["frame", "decode"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines) = mpsc::channel();
    let reader = thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            lines_tx.send(line.unwrap()).unwrap();
        }
    });
    for body in ["{\"id\":1}", "", "second"] {
        let frame = format!("{:08x}{body}", body.len());
        for byte in frame.as_bytes() {
            stdin.write_all(std::slice::from_ref(byte)).unwrap();
            stdin.flush().unwrap();
            thread::sleep(Duration::from_millis(1));
        }
        // The body comes out before any byte of the next frame is sent.
        assert_eq!(lines.recv_timeout(WAIT).unwrap(), body);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
}

#[test]
fn encode_refuses_a_line_over_the_maximum() {
    let out = run(
        &["frame", "encode", "--max-frame-bytes", "4"],
        b"abcd\nabcd\r\nabcdefgh\nnot reached\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"00000004abcd00000004abcd");
    assert_eq!(
        stderr(&out),
        "error: line 3: frame body too large: more than the maximum of 4 bytes\n"
    );
    let out = run(&["frame", "encode", "--max-frame-bytes", "4"], b"abcde");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: line 1: frame body too large: 5 bytes, more than the maximum of 4 bytes\n"
    );
}
