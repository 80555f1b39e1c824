//! A client driving real processes (`sh` scripts): what only a process can show —
//! timeouts against a child that never answers, exits and their statuses, stderr,
//! the environment, the grace period after `shutdown`, killing and reaping.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use curupira_client::{Client, Ending, LaunchCommand, Limits, Options, Timeouts};
use curupira_jsonrpc::ErrorCode;
use curupira_protocol::PeerInfo;
use serde_json::Value;

fn sh(script: &str) -> LaunchCommand {
    LaunchCommand::new("sh", std::env::temp_dir()).args(["-c", script])
}

fn options(seconds: f64) -> Options {
    Options {
        timeouts: Timeouts::uniform(Duration::from_secs_f64(seconds)),
        limits: Limits {
            max_frame_bytes: 1024,
            ..Limits::default()
        },
    }
}

/// Whether a process with this id still exists (a zombie counts).
fn exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Who the host is, in `initialize`'s `client_info`.
fn client_info() -> PeerInfo {
    PeerInfo::new("test-host", "0.0.0")
}

/// A `printf` command writing `body` as one frame.
fn printf_frame(body: &str) -> String {
    format!("printf '%s' '{:08x}{body}'", body.len())
}

#[test]
fn a_silent_extension_times_out_and_stays_failed() {
    let mut client = Client::spawn("mute", &sh("exec sleep 10"), options(0.3)).unwrap();
    let pid = client.pid().unwrap();
    let started = Instant::now();
    let err = client.call("describe", None).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(err.code, ErrorCode::TIMEOUT);
    assert_eq!(
        err.to_string(),
        "extension `mute`: describe failed: timeout (-32004): no reply within 0.3 s"
    );
    let started = Instant::now();
    let again = client.call("trigger/poll", None).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "fails at once"
    );
    assert_eq!(
        (again.code, again.method.as_str()),
        (ErrorCode::TIMEOUT, "trigger/poll")
    );
    assert!(client.is_dead());
    assert_eq!(client.shutdown(), Ok(Ending::AlreadyFailed));
    assert!(!exists(pid), "killed and reaped");
}

#[test]
fn an_exit_is_a_transport_failure_with_the_status() {
    let mut client = Client::spawn("quits", &sh("exit 3"), options(2.0)).unwrap();
    let err = client.initialize(client_info()).unwrap_err();
    assert_eq!(err.code, ErrorCode::TRANSPORT_FAILURE);
    assert!(err.message.contains("exited with status 3"), "{err}");
}

/// An extension that dies while a process it started (in a session of its own, out of
/// its process group) still holds its stdout: the call ends when the extension exits,
/// reported with its exit status, not at the deadline as a timeout.
#[test]
fn an_exit_is_seen_while_a_descendant_holds_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("holder.pid");
    let script = format!(
        "setsid sh -c 'echo $$ > \"{}\"; exec sleep 30' & \
         while [ ! -s \"{}\" ]; do sleep 0.01; done; exit 3",
        pid_file.display(),
        pid_file.display()
    );
    let mut client = Client::spawn("orphaner", &sh(&script), options(20.0)).unwrap();
    let started = Instant::now();
    let err = client.initialize(client_info()).unwrap_err();
    let took = started.elapsed();
    let holder = std::fs::read_to_string(&pid_file).unwrap();
    let _ = std::process::Command::new("kill")
        .arg(holder.trim())
        .status();
    assert_eq!(err.code, ErrorCode::TRANSPORT_FAILURE, "{err}");
    assert_eq!(
        err.message,
        "the extension exited with status 3 without replying (a process it started still \
         holds its stdout)"
    );
    assert!(
        took < Duration::from_secs(10),
        "seen at the exit, not the deadline: {took:?}"
    );
    assert!(client.is_dead());
}

#[test]
fn a_program_that_cannot_start_is_a_start_failure() {
    let launch = LaunchCommand::new("/nonexistent/curupira-extension", std::env::temp_dir());
    let err = Client::spawn("ghost", &launch, options(1.0)).unwrap_err();
    assert_eq!(
        (err.code, err.method.as_str()),
        (ErrorCode::TRANSPORT_FAILURE, "start")
    );
    assert!(
        err.message
            .starts_with("cannot start `/nonexistent/curupira-extension` in "),
        "{err}"
    );
    assert!(
        err.message
            .contains("`/nonexistent/curupira-extension` does not exist: "),
        "{err}"
    );
}

#[test]
fn a_reply_is_correlated_and_an_error_reply_keeps_the_extension() {
    // Replies need not wait for their requests: they queue up in order. Request 1
    // gets a result, request 2 an error reply, request 3 a reply for id 9.
    let script = format!(
        "{}; {}; {}; exec sleep 10",
        printf_frame(r#"{"jsonrpc":"2.0","id":1,"result":"ok"}"#),
        printf_frame(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"nope"}}"#),
        printf_frame(r#"{"jsonrpc":"2.0","id":9,"result":"ok"}"#),
    );
    let mut client = Client::spawn("corr", &sh(&script), options(2.0)).unwrap();
    assert_eq!(client.call("describe", None), Ok(Value::from("ok")));
    let err = client.call("trigger/xyz", None).unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(!client.is_dead());
    let err = client.call("describe", None).unwrap_err();
    assert_eq!(err.code, ErrorCode::PROTOCOL_FAILURE);
    assert_eq!(
        err.message,
        "it answered request id 3 with a response for id 9"
    );
    assert!(client.is_dead());
}

#[test]
fn a_version_mismatch_kills_the_extension() {
    let script = format!(
        "{}; exec sleep 10",
        printf_frame(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocol_version":"3.0","server_info":{"name":"future","version":"9.0.0"}}}"#
        )
    );
    let mut client = Client::spawn("future", &sh(&script), options(2.0)).unwrap();
    let pid = client.pid().unwrap();
    let err = client.initialize(client_info()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "extension `future`: initialize failed: protocol or version failure (-32001): protocol \
         version mismatch: the host speaks protocol 2, the extension speaks protocol 3.0 (only \
         the major version is compared)"
    );
    assert!(client.is_dead());
    drop(client);
    assert!(!exists(pid), "killed and reaped");
}

#[test]
fn stderr_lines_go_to_the_sink_and_the_environment_is_passed() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let lines = Arc::clone(&lines);
        Box::new(move |line: &str| lines.lock().unwrap().push(line.to_owned()))
    };
    let launch =
        sh("echo \"hello $GREETED\" >&2; printf 'abcdefgh\\n' >&2; exit 0").env("GREETED", "world");
    let mut options = options(2.0);
    options.limits.stderr_line_bytes = 4;
    let client = Client::spawn_with_stderr("talker", &launch, options, sink).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while lines.lock().unwrap().len() < 4 {
        assert!(Instant::now() < deadline, "{:?}", lines.lock().unwrap());
        thread::sleep(Duration::from_millis(5));
    }
    drop(client);
    assert_eq!(
        *lines.lock().unwrap(),
        [
            "hell…",
            "… (7 more bytes of that line not shown)",
            "abcd…",
            "… (4 more bytes of that line not shown)"
        ]
    );
}

#[test]
fn shutdown_waits_for_the_exit_and_kills_a_lingerer() {
    // Answers `shutdown` (request 1), then exits when its stdin ends.
    let polite = format!(
        "{}; cat >/dev/null; exit 0",
        printf_frame(r#"{"jsonrpc":"2.0","id":1,"result":null}"#)
    );
    let client = Client::spawn("polite", &sh(&polite), options(2.0)).unwrap();
    assert_eq!(
        client.shutdown(),
        Ok(Ending::Exited("exited with status 0".to_owned()))
    );

    // Answers, then ignores the end of its stdin.
    let lingering = format!(
        "{}; exec sleep 10",
        printf_frame(r#"{"jsonrpc":"2.0","id":1,"result":null}"#)
    );
    let client = Client::spawn("lingers", &sh(&lingering), options(0.3)).unwrap();
    let pid = client.pid().unwrap();
    let started = Instant::now();
    assert_eq!(client.shutdown(), Ok(Ending::Killed));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(!exists(pid), "killed and reaped");
}

#[test]
fn dropping_a_client_reaps_its_process() {
    let client = Client::spawn("dropped", &sh("exec sleep 30"), options(1.0)).unwrap();
    let pid = client.pid().unwrap();
    drop(client);
    assert!(!exists(pid));
}

/// Issue 24: "cannot start `counter` … No such file or directory" did not say that a
/// program named without `/` was looked up on PATH.
#[test]
fn a_program_not_on_path_is_said_to_be_looked_up_there() {
    let launch = LaunchCommand::new("curupira-no-such-extension-on-path", ".");
    let message = Client::spawn("ext", &launch, options(1.0))
        .unwrap_err()
        .message;
    assert!(
        message.contains(
            "no program `curupira-no-such-extension-on-path` on PATH (a program named without \
             `/` is looked up on PATH"
        ),
        "{message}"
    );
}
