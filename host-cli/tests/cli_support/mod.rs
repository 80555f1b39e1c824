//! Running the real `curupira` binary with bytes on its stdin, for the CLI tests.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::thread;

/// `curupira ARGS…` with `input` on stdin (fed from a thread, so a child that writes
/// before it has read everything cannot deadlock us; then closed), and everything it
/// wrote collected.
pub fn run_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = thread::spawn(move || {
        // The child may exit before reading everything; that is not our failure.
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    output
}
