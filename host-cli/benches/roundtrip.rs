//! Protocol round-trips per second: `trigger/poll` through the real client
//! ([`Client::poll`]: the process transport and the poll result read by
//! `curupira-protocol`) against the built-in
//! `local-queue` running as a child process, side by side in the same run with a bare
//! pipe ping-pong of the same byte counts between two processes (the physical floor:
//! two pipe writes, two reads and two context switches per round trip).
//!
//! - `client/local-queue`: the queue has one item, already done, so every poll
//!   answers `{"values": null}`, the steady state of a watched queue (`--dry-run`-like:
//!   no agent, no hooks). The files were written more than `SETTLE` ago, as a watched
//!   queue's usually were, so `local-queue` checks their metadata on each poll and
//!   does not read them (a file written within the last few seconds is read on every
//!   poll; see `curupira-local-queue`'s docs). That cost is the extension's and is
//!   included, as a user would see it.
//! - `raw-frames/local-queue`: the same polls written and read as frames on the bench
//!   thread, without the client: what the extension itself costs.
//! - `bare-pipe`: this bench executable re-run as an echo peer (`ROUNDTRIP_ECHO=REQ,RESP`)
//!   that reads exactly REQ bytes and answers RESP bytes, the sizes of the frames the
//!   client exchanges; the parent writes and reads them with plain `std::io`.
//!
//! `cargo bench -p curupira-host --bench roundtrip -- --warm-up-time 1 --measurement-time 3`
//!
//! Where the two processes run matters more than anything they do: on a virtual machine
//! whose other CPU is idle, waking a process over there can cost tens of microseconds
//! and dominates all three lines alike. Prefix the command with `taskset -c 0` to put
//! every process on one CPU and compare the CPU costs alone.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use curupira_client::{Client, LaunchCommand, Options, Timeouts};
use curupira_host::host_info;
use curupira_jsonrpc::{Message, Request, Response};
use curupira_protocol::{Configuration, PollParams, ValidateResult, to_json};
use serde_json::{Value, json};

/// The id width used to size the frames: the client's ids grow, seven digits is
/// what a long benchmark reaches.
const SAMPLE_ID: u64 = 1_000_000;

/// How old the queue files are when the measurements start: older than the few
/// seconds after which `local-queue` trusts a file's metadata.
const SETTLE: Duration = Duration::from_secs(4);

/// The automation's table as the host sends it to `trigger/validate`: the queue's
/// parameters and the host's core keys.
fn configuration() -> Configuration {
    let Value::Object(map) = json!({
        "path": "tasks.jsonl", "done_path": "done.jsonl",
        "trigger_type": "local/jsonl", "repository": "acme/widgets", "prompt": "Do ${n}"
    }) else {
        unreachable!()
    };
    map
}

/// `trigger/poll` as the host sends it: the configuration validate returned.
fn poll_params(automation: Configuration) -> PollParams {
    PollParams {
        trigger_type: "jsonl".to_owned(),
        automation,
        limit: Some(100),
        preview: false,
    }
}

/// Request and response frame sizes (header included) of one poll answered null.
fn frame_sizes() -> (usize, usize) {
    let params = to_json(&poll_params(configuration())).unwrap();
    let request = Message::from(Request::new(
        SAMPLE_ID,
        "trigger/poll",
        Some(params.try_into().unwrap()),
    ))
    .to_vec();
    let response = Message::from(Response::ok(SAMPLE_ID, json!({"values": null}))).to_vec();
    (8 + request.len(), 8 + response.len())
}

fn echo_peer(spec: &str) {
    let (request, response) = spec.split_once(',').unwrap();
    let (request, response): (usize, usize) = (request.parse().unwrap(), response.parse().unwrap());
    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    let mut buffer = vec![0_u8; request];
    let answer = vec![b'x'; response];
    while input.read_exact(&mut buffer).is_ok() {
        if output
            .write_all(&answer)
            .and_then(|()| output.flush())
            .is_err()
        {
            return;
        }
    }
}

fn bench(c: &mut Criterion) {
    let (request_bytes, response_bytes) = frame_sizes();
    let mut group = c.benchmark_group("poll_round_trip");
    group.throughput(Throughput::Elements(1));

    // The real client against the built-in extension.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tasks.jsonl"), "{\"n\":\"1\"}\n").unwrap();
    std::fs::write(dir.path().join("done.jsonl"), "{\"n\":\"1\"}\n").unwrap();
    let written = Instant::now();
    let launch = LaunchCommand::new(env!("CARGO_BIN_EXE_curupira"), dir.path())
        .args(["builtin", "local-queue"]);
    let options = Options {
        timeouts: Timeouts {
            initialize: Duration::from_secs(10),
            request: Duration::from_secs(10),
            shutdown: Duration::from_secs(5),
        },
        ..Options::default()
    };
    let mut client = Client::spawn("local", &launch, options).unwrap();
    client.initialize(host_info()).unwrap();
    let table = configuration();
    let ValidateResult::Accepted {
        configuration: normalised,
    } = client.validate("jsonl", &table).unwrap()
    else {
        panic!("local-queue rejected the bench's configuration");
    };
    let poll = poll_params(normalised.unwrap_or(table));
    assert_eq!(client.poll(&poll).unwrap(), None);
    std::thread::sleep(SETTLE.saturating_sub(written.elapsed()));
    group.bench_function("client/local-queue", |b| {
        b.iter(|| black_box(client.poll(&poll).unwrap()));
    });
    client.shutdown().unwrap();

    // The same extension driven without the client: frames written and read on this
    // thread with blocking I/O, the reply neither parsed nor checked. The difference
    // to the line above is the client's own cost (building and checking the JSON, the
    // deadline, the `poll(2)` wait).
    let mut raw = launch.command();
    let mut raw = raw
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut writer = curupira_framing::FrameWriter::new(raw.stdin.take().unwrap());
    let mut reader =
        curupira_framing::FrameReader::new(std::io::BufReader::new(raw.stdout.take().unwrap()));
    let mut next_id = 1_u64;
    let mut send = |method: &str, params: Option<Value>| {
        let params = params.map(|p| p.try_into().unwrap());
        let body = Message::from(Request::new(next_id, method, params)).to_vec();
        next_id += 1;
        writer.write_frame(&body).unwrap();
        writer.flush().unwrap();
        reader.read_frame().unwrap().unwrap()
    };
    send(
        "initialize",
        Some(json!({"protocol_version": 2, "client_info": {"name": "bench", "version": "0"}})),
    );
    let poll = to_json(&poll).unwrap();
    group.bench_function("raw-frames/local-queue", |b| {
        b.iter(|| black_box(send("trigger/poll", Some(poll.clone()))));
    });
    send("shutdown", None);
    raw.wait().unwrap();

    // The floor: the same bytes through two pipes and another process.
    let mut peer = Command::new(std::env::current_exe().unwrap())
        .env(
            "ROUNDTRIP_ECHO",
            format!("{request_bytes},{response_bytes}"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_peer = peer.stdin.take().unwrap();
    let mut from_peer = peer.stdout.take().unwrap();
    let request = vec![b'r'; request_bytes];
    let mut response = vec![0_u8; response_bytes];
    group.bench_function(
        format!("bare-pipe/{request_bytes}B-{response_bytes}B"),
        |b| {
            b.iter(|| {
                to_peer.write_all(&request).unwrap();
                to_peer.flush().unwrap();
                from_peer.read_exact(&mut response).unwrap();
                black_box(&response);
            });
        },
    );
    drop(to_peer);
    peer.wait().unwrap();
    group.finish();
}

fn main() {
    if let Ok(spec) = std::env::var("ROUNDTRIP_ECHO") {
        echo_peer(&spec);
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}
