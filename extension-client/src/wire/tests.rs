use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use curupira_jsonrpc::{Id, Request};

use super::*;

/// Both wires, so the threaded one (used off Unix) is exercised here too.
enum AnyWire {
    Polled(polled::PolledWire),
    Threaded(threaded::ThreadedWire),
}

impl AnyWire {
    fn exchange(&mut self, body: &[u8], deadline: Instant) -> Result<Received, TimedOut> {
        match self {
            AnyWire::Polled(wire) => wire.exchange(body, deadline),
            AnyWire::Threaded(wire) => wire.exchange(body, deadline),
        }
    }

    fn close_stdin(&mut self) {
        match self {
            AnyWire::Polled(wire) => wire.close_stdin(),
            AnyWire::Threaded(wire) => wire.close_stdin(),
        }
    }
}

struct Scene {
    child: Child,
    wire: AnyWire,
}

impl Drop for Scene {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scenes(script: &str, max: usize) -> Vec<(&'static str, Scene)> {
    let spawn = || {
        let mut child = Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        (child, stdin, stdout)
    };
    let (child, stdin, stdout) = spawn();
    let polled = Scene {
        child,
        wire: AnyWire::Polled(polled::PolledWire::new(stdin, stdout, max, None).unwrap()),
    };
    let (child, stdin, stdout) = spawn();
    let (threaded, _threads) = threaded::ThreadedWire::start("t", stdin, stdout, max).unwrap();
    let threaded = Scene {
        child,
        wire: AnyWire::Threaded(threaded),
    };
    vec![("polled", polled), ("threaded", threaded)]
}

fn request(id: u64) -> Vec<u8> {
    Message::from(Request::new(id, "describe", None)).to_vec()
}

fn soon(seconds: f64) -> Instant {
    Instant::now() + Duration::from_secs_f64(seconds)
}

fn response_id(received: Result<Received, TimedOut>) -> Id {
    match received {
        Ok(Received::Message(Ok(Message::Response(response)))) => response.id,
        other => panic!("expected a response, got {other:?}"),
    }
}

#[test]
fn replies_come_back_in_order_and_the_end_is_seen() {
    // Two replies in one write (so one read brings both), then the end of stdout. The
    // child reads the rest of request 1 and all of request 2 (48 bytes) before it
    // exits, so writing request 2 cannot meet a closed pipe (it did, now and then,
    // when the child exited right after its replies).
    let script = r#"
        head -c 40 >/dev/null
        printf '00000026{"jsonrpc":"2.0","id":1,"result":"ok"}00000026{"jsonrpc":"2.0","id":2,"result":"ok"}'
        head -c 48 >/dev/null
    "#;
    assert_eq!(request(1).len() + request(2).len(), 40 + 48);
    for (kind, mut scene) in scenes(script, 1024) {
        assert_eq!(
            response_id(scene.wire.exchange(&request(1), soon(5.0))),
            Id::from(1),
            "{kind}"
        );
        assert_eq!(
            response_id(scene.wire.exchange(&request(2), soon(5.0))),
            Id::from(2),
            "{kind}"
        );
        let end = scene.wire.exchange(&request(3), soon(5.0));
        assert!(
            matches!(end, Ok(Received::Closed) | Ok(Received::WriteFailed(_))),
            "{kind}: {end:?}"
        );
    }
}

#[test]
fn closing_stdin_ends_the_input() {
    for (kind, mut scene) in scenes("cat >/dev/null; exit 7", 1024) {
        scene.wire.close_stdin();
        let deadline = soon(5.0);
        let status = loop {
            if let Some(status) = scene.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "{kind}: still reading");
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(status.code(), Some(7), "{kind}");
    }
}

#[test]
fn a_slow_drip_times_out_at_the_deadline() {
    // A header announcing 1000 bytes, then one byte every 20 ms, forever.
    let script = "printf 000003e8; while :; do printf x; sleep 0.02; done";
    for (kind, mut scene) in scenes(script, 1024) {
        let started = Instant::now();
        let outcome = scene.wire.exchange(&request(1), soon(0.3));
        let took = started.elapsed();
        assert!(matches!(outcome, Err(TimedOut)), "{kind}: {outcome:?}");
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(2),
            "{kind}: took {took:?}"
        );
    }
}

#[test]
fn a_child_that_never_reads_cannot_block_the_write() {
    // A request larger than any pipe buffer, to a child that never reads.
    let body = format!(r#"{{"pad":"{}"}}"#, "x".repeat(4 << 20));
    for (kind, mut scene) in scenes("exec sleep 10", 8 << 20) {
        let started = Instant::now();
        let outcome = scene.wire.exchange(body.as_bytes(), soon(0.3));
        assert!(matches!(outcome, Err(TimedOut)), "{kind}: {outcome:?}");
        assert!(started.elapsed() < Duration::from_secs(2), "{kind}");
    }
}

#[test]
fn an_oversized_frame_is_refused_from_its_header() {
    let script = "head -c 40 >/dev/null; printf 00000401; exec sleep 10";
    for (kind, mut scene) in scenes(script, 1024) {
        let started = Instant::now();
        match scene.wire.exchange(&request(1), soon(5.0)) {
            Ok(Received::BadFrame(DecodeError::TooLarge { announced, max, .. })) => {
                assert_eq!((announced, max), (1025, 1024), "{kind}");
            }
            other => panic!("{kind}: expected a too-large frame, got {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(2), "{kind}");
    }
}

#[test]
fn a_message_sent_while_the_request_is_stuck_is_reported_at_once() {
    // The child never reads; it sends a notification right away.
    let notification = r#"{"jsonrpc":"2.0","method":"log","params":[]}"#;
    let script = format!(
        "printf '%s' '{:08x}{notification}'; exec sleep 10",
        notification.len()
    );
    let body = format!(r#"{{"pad":"{}"}}"#, "x".repeat(4 << 20));
    for (kind, mut scene) in scenes(&script, 8 << 20) {
        let started = Instant::now();
        let outcome = scene.wire.exchange(body.as_bytes(), soon(5.0));
        assert!(
            matches!(outcome, Ok(Received::Message(Ok(Message::Notification(_))))),
            "{kind}: {outcome:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(2), "{kind}");
    }
}
