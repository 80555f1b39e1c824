//! `examples/node-trigger`, the extension written in plain Node.js: first driven
//! directly over its pipes (framing, JSON-RPC and every method, no host involved), then
//! run by `curupira run`, `probe` and `plugins list`.
//!
//! Every test needs `node` on PATH; without it each one says that it skipped and passes.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod tree_support;

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use curupira_framing::{FrameReader, FrameWriter};
use curupira_task_identity::TaskId;
use serde_json::{Value, json};

/// A process still running after this is killed and the test fails.
const WATCHDOG: Duration = Duration::from_secs(30);

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/node-trigger")
}

/// `false` (after saying so) when `node` is not on PATH.
fn node_available(test: &str) -> bool {
    let found = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        eprintln!("skipped: `{test}` needs `node` on PATH to run examples/node-trigger");
    }
    found
}

fn spawn_reader(mut source: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buffer = Vec::new();
        let _ = source.read_to_end(&mut buffer);
        buffer
    })
}

/// Waits for `child` under the watchdog; returns its status and how long it took.
fn wait(child: &mut Child, started: Instant, what: &str) -> (ExitStatus, Duration) {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, started.elapsed());
        }
        if started.elapsed() > WATCHDOG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} was still running after {WATCHDOG:?} and was killed");
        }
        thread::sleep(Duration::from_millis(5));
    }
}

struct Output {
    status: ExitStatus,
    elapsed: Duration,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `command` with `input` on stdin (closed afterwards unless `keep_stdin_open`).
fn run(mut command: Command, input: &[u8], keep_stdin_open: bool) -> Output {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = spawn_reader(child.stdout.take().unwrap());
    let stderr = spawn_reader(child.stderr.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    // The child may stop reading early (that is what some tests check).
    let _ = stdin.write_all(input);
    let _ = stdin.flush();
    let held = keep_stdin_open.then_some(stdin);
    let (status, elapsed) = wait(&mut child, started, "the node extension");
    drop(held);
    Output {
        status,
        elapsed,
        stdout: stdout.join().unwrap(),
        stderr: String::from_utf8_lossy(&stderr.join().unwrap()).into_owned(),
    }
}

fn node_extension() -> Command {
    let mut command = Command::new("node");
    command.arg(example_dir().join("index.js"));
    command
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut writer = FrameWriter::new(Vec::new());
    writer.write_frame(body).unwrap();
    writer.into_inner()
}

fn request(id: i64, method: &str, params: Value) -> Vec<u8> {
    let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if !params.is_null() {
        message["params"] = params;
    }
    frame(message.to_string().as_bytes())
}

fn initialize(id: i64) -> Vec<u8> {
    request(
        id,
        "initialize",
        json!({"protocol_version": 2, "client_info": {"name": "test", "version": "0"}}),
    )
}

/// Every reply on the extension's stdout, which must hold complete frames only.
fn replies(stdout: &[u8]) -> Vec<Value> {
    let mut reader = FrameReader::new(stdout);
    let mut out = Vec::new();
    while let Some(body) = reader.read_frame().unwrap() {
        out.push(serde_json::from_slice(&body).unwrap());
    }
    out
}

fn error_reply(id: Value, code: i64) -> impl Fn(&Value) {
    move |reply: &Value| {
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], code, "{reply}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        assert!(reply.get("result").is_none(), "{reply}");
    }
}

// ---------------------------------------------------------------------------
// The extension on its own.

#[test]
fn a_whole_conversation() {
    if !node_available("a_whole_conversation") {
        return;
    }
    // Requests as the reference host sends them: validate gets the automation's whole
    // table (core keys included), polls the table validate returned.
    let table = |parameters: Value| {
        let mut table = json!({"trigger_type": "ex/counter", "prompt": "Do ${title}", "repository": "acme/widgets"});
        for (key, value) in parameters.as_object().unwrap() {
            table[key] = value.clone();
        }
        table
    };
    let validate =
        |parameters: Value| json!({"trigger_type": "counter", "configuration": table(parameters)});
    let poll = |parameters: Value| json!({"trigger_type": "counter", "automation": table(parameters), "limit": 5, "preview": false});
    let mut input = Vec::new();
    input.extend(request(
        1,
        "initialize",
        json!({"protocol_version": "2.1", "client_info": {"name": "test", "version": "0"}}),
    ));
    input.extend(frame(
        br#"{"jsonrpc":"2.0","id":2,"method":"describe","params":null}"#,
    ));
    input.extend(request(
        3,
        "trigger/schema",
        json!({"trigger_type": "ex/counter"}),
    ));
    input.extend(request(
        4,
        "trigger/validate",
        validate(json!({"count": 2})),
    ));
    input.extend(request(
        5,
        "trigger/validate",
        validate(json!({"count": 1001, "label": "", "colour": "red"})),
    ));
    for id in 6..=8 {
        input.extend(request(
            id,
            "trigger/poll",
            poll(json!({"count": 2, "label": "task"})),
        ));
    }
    let pairs = json!([{"key": "number", "value": "1"}, {"key": "title", "value": "task 1 of 2"}]);
    let hook = json!({"trigger_type": "counter", "values": pairs});
    input.extend(request(9, "trigger/onStarted", hook.clone()));
    input.extend(request(10, "trigger/onFinished", hook));
    input.extend(request(
        11,
        "trigger/poll",
        poll(json!({"count": 1, "label": "job"})),
    ));
    input.extend(request(12, "trigger/poll", json!({"trigger_type": "cron"})));
    input.extend(request(13, "no/such/method", json!({})));
    input.extend(frame(
        br#"{"jsonrpc":"2.0","id":14,"method":"shutdown","params":null}"#,
    ));
    input.extend(request(15, "describe", Value::Null)); // after shutdown: never answered

    let out = run(node_extension(), &input, false);
    assert!(out.status.success(), "{}: {}", out.status, out.stderr);
    let replies = replies(&out.stdout);
    assert_eq!(replies.len(), 14, "{replies:#?}");

    assert_eq!(
        replies[0],
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocol_version": 2,
            "server_info": {"name": "node-trigger-example", "version": "0.1.0"}}})
    );
    assert_eq!(
        replies[1]["result"],
        json!({"triggers": [{"trigger_type": "counter", "prompt_fields": ["number", "title"]}],
               "agents": []}),
        "{}",
        replies[1]
    );
    let schema = &replies[2]["result"]["schema"];
    assert_eq!(schema["properties"]["count"]["default"], 3);
    assert_eq!(schema["properties"]["label"]["default"], "task");
    assert_eq!(
        replies[2]["result"]["prompt_fields"],
        json!(["number", "title"])
    );
    // Accepted: the table comes back, core keys kept, the default `label` filled in.
    let mut normalised = table(json!({"count": 2}));
    normalised["label"] = json!("task");
    assert_eq!(
        replies[3],
        json!({"jsonrpc": "2.0", "id": 4, "result": {"ok": true, "configuration": normalised}})
    );
    // Rejected: a result naming every problem, not an error.
    assert_eq!(replies[4]["result"]["ok"], false, "{}", replies[4]);
    let error = replies[4]["result"]["error"].as_str().unwrap();
    for path in ["/colour", "/count", "/label"] {
        assert!(error.contains(path), "{error}");
    }

    assert_eq!(replies[5]["result"]["values"], pairs);
    assert_eq!(
        replies[6]["result"]["values"],
        json!([{"key": "number", "value": "2"}, {"key": "title", "value": "task 2 of 2"}])
    );
    assert_eq!(
        replies[7],
        json!({"jsonrpc": "2.0", "id": 8, "result": {"values": null}})
    );
    assert_eq!(replies[8], json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
    assert_eq!(
        replies[9],
        json!({"jsonrpc": "2.0", "id": 10, "result": {}})
    );
    // Other parameters count on their own.
    assert_eq!(
        replies[10]["result"]["values"],
        json!([{"key": "number", "value": "1"}, {"key": "title", "value": "job 1 of 1"}])
    );
    // An unknown trigger type: -32003, as the official SDK answers it.
    error_reply(json!(12), -32003)(&replies[11]);
    error_reply(json!(13), -32601)(&replies[12]);
    assert_eq!(
        replies[13],
        json!({"jsonrpc": "2.0", "id": 14, "result": {}})
    );
    assert!(
        out.stderr
            .contains("started: number=\"1\" title=\"task 1 of 2\"")
    );
}

#[test]
fn malformed_messages_get_json_rpc_errors() {
    if !node_available("malformed_messages_get_json_rpc_errors") {
        return;
    }
    let mut input = Vec::new();
    input.extend(request(1, "describe", Value::Null)); // before initialize
    input.extend(request(
        2,
        "initialize",
        json!({"protocol_version": 3, "client_info": {"name": "test", "version": "0"}}),
    ));
    input.extend(initialize(3));
    input.extend(frame(b"{not json"));
    input.extend(frame(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"\xff\"}"));
    input.extend(frame(b""));
    input.extend(frame(b"[]"));
    input.extend(frame(
        b"[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"describe\"}]",
    ));
    input.extend(frame(b"42"));
    input.extend(frame(br#"{"jsonrpc":"1.0","id":6,"method":"describe"}"#));
    input.extend(frame(
        br#"{"jsonrpc":"2.0","id":7,"method":"describe","params":5}"#,
    ));
    input.extend(frame(br#"{"jsonrpc":"2.0","id":1.5,"method":"describe"}"#));
    input.extend(frame(br#"{"jsonrpc":"2.0","method":"describe"}"#)); // a notification
    input.extend(frame(br#"{"jsonrpc":"2.0","id":"s","method":"describe"}"#));

    let out = run(node_extension(), &input, false);
    assert!(out.status.success(), "{}: {}", out.status, out.stderr);
    let replies = replies(&out.stdout);
    assert_eq!(replies.len(), 13, "{replies:#?}");
    error_reply(json!(1), -32001)(&replies[0]);
    error_reply(json!(2), -32001)(&replies[1]);
    let mismatch = replies[1]["error"]["message"].as_str().unwrap();
    assert!(
        mismatch.contains('3') && mismatch.contains('2'),
        "{mismatch}"
    );
    assert_eq!(replies[2]["result"]["protocol_version"], 2);
    for (reply, code) in replies[3..7].iter().zip([-32700, -32700, -32700, -32600]) {
        error_reply(Value::Null, code)(reply);
    }
    error_reply(Value::Null, -32600)(&replies[7]); // batches are refused
    error_reply(Value::Null, -32600)(&replies[8]);
    error_reply(json!(6), -32600)(&replies[9]);
    error_reply(json!(7), -32600)(&replies[10]);
    error_reply(Value::Null, -32600)(&replies[11]);
    assert_eq!(replies[12]["id"], "s");
    assert!(replies[12]["result"]["triggers"].is_array());
}

#[test]
fn frames_split_into_single_bytes() {
    if !node_available("frames_split_into_single_bytes") {
        return;
    }
    let mut child = node_extension()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = spawn_reader(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut input = initialize(1);
    input.extend(request(2, "shutdown", Value::Null));
    for byte in input {
        stdin.write_all(&[byte]).unwrap();
        stdin.flush().unwrap();
        thread::sleep(Duration::from_micros(300));
    }
    let (status, _) = wait(&mut child, Instant::now(), "the node extension");
    drop(stdin);
    assert!(status.success());
    let replies = replies(&stdout.join().unwrap());
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[0]["result"]["protocol_version"], 2);
    assert_eq!(replies[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
}

#[test]
fn framing_errors_end_the_process() {
    if !node_available("framing_errors_end_the_process") {
        return;
    }
    let cases: [(&[u8], &str); 5] = [
        (
            b"+000002c{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"describe\"}",
            "'+'",
        ),
        (
            b"0x00002c{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"describe\"}",
            "'x'",
        ),
        (b"0000 02c", "0x20"),
        (b"0000002\xc3", "0xc3"),
        // Refused as soon as the header is read, while stdin is still open.
        (b"ffffffff", "4294967295"),
    ];
    for (input, named) in cases {
        let out = run(node_extension(), input, true);
        let shown = String::from_utf8_lossy(input);
        assert_eq!(out.status.code(), Some(1), "{shown}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{shown}: wrote {:?}", out.stdout);
        assert!(out.stderr.contains(named), "{shown}: {}", out.stderr);
        assert!(
            out.elapsed < Duration::from_secs(10),
            "{shown}: {:?}",
            out.elapsed
        );
    }
}

#[test]
fn end_of_stdin() {
    if !node_available("end_of_stdin") {
        return;
    }
    // At a frame boundary: a clean end.
    let out = run(node_extension(), &initialize(1), false);
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(replies(&out.stdout).len(), 1);

    // Inside a header, then inside a body: truncation errors with the counts.
    let out = run(node_extension(), b"0000", false);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.contains("expected 8 bytes, received 4"),
        "{}",
        out.stderr
    );
    let whole = initialize(1);
    let out = run(node_extension(), &whole[..whole.len() - 5], false);
    assert_eq!(out.status.code(), Some(1));
    let expected = format!(
        "expected {} bytes, received {}",
        whole.len() - 8,
        whole.len() - 13
    );
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
}

/// Run as the manifest launches it: the script itself, through its `#!` line.
#[test]
fn prints_its_manifest() {
    if !node_available("prints_its_manifest") {
        return;
    }
    let mut command = Command::new(example_dir().join("index.js"));
    command.arg("--curupira-print-manifest");
    let out = run(command, b"", false);
    assert!(out.status.success(), "{}", out.stderr);
    let manifest = fs::read(example_dir().join("curupira-extension.toml")).unwrap();
    assert_eq!(out.stdout, manifest);
    let text = String::from_utf8(manifest).unwrap();
    assert!(text.contains("runtime = \"node\""));
    assert!(text.contains("protocol_version = 2"));
}

// ---------------------------------------------------------------------------
// Through the host.

/// A copy of the example folder, as it ships, in a fresh temporary folder (so runs
/// leave nothing in the repository, and what a run left there is not copied).
fn example_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("node-trigger");
    tree_support::copy_example("node-trigger", &copy);
    (dir, copy)
}

fn curupira(args: &[&str], cwd: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_curupira"));
    command.args(args).current_dir(cwd);
    run(command, b"", false)
}

#[test]
fn curupira_runs_the_example() {
    if !node_available("curupira_runs_the_example") {
        return;
    }
    let (dir, copy) = example_copy();
    let config = copy.join("curupira.toml");
    let out = curupira(
        &[
            "run",
            "--once",
            "--format",
            "json",
            "--config",
            config.to_str().unwrap(),
        ],
        dir.path(),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let context = format!(
        "status {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status, out.stderr
    );
    assert_eq!(out.status.code(), Some(0), "{context}");

    let events: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "task.finished")
        .collect();
    assert_eq!(finished.len(), 3, "{context}");
    for (index, event) in finished.iter().enumerate() {
        let number = (index + 1).to_string();
        let title = format!("task {number} of 3");
        assert_eq!(event["automation"], "count-to-three", "{context}");
        assert_eq!(
            event["values"],
            json!([{"key": "number", "value": number}, {"key": "title", "value": title}]),
            "{context}"
        );
        assert_eq!(event["exit_code"], 0, "{context}");
        let task_id = TaskId::of_pairs([("number", number.as_str()), ("title", title.as_str())]);
        assert_eq!(event["task_id"], task_id.to_string(), "{context}");
        // The agent printed the prompt it got and the task id from its environment.
        let agent_line = format!(
            "agent: task {task_id}: Handle {title} (item #{number}) for the automation \
             count-to-three."
        );
        assert!(
            out.stderr.contains(&agent_line),
            "missing `{agent_line}`\n{context}"
        );
    }
    let round = events
        .iter()
        .find(|e| e["event"] == "round.finished")
        .unwrap_or_else(|| panic!("no round.finished\n{context}"));
    assert_eq!(round["dispatched"], 3, "{context}");
    assert_eq!(round["skipped"], 0, "{context}");
    assert!(
        !events.iter().any(|e| e["event"] == "automation.failed"),
        "{context}"
    );
}

#[test]
fn curupira_probe_passes() {
    if !node_available("curupira_probe_passes") {
        return;
    }
    let (dir, copy) = example_copy();
    let script = copy.join("index.js");
    let out = curupira(
        &["probe", "--", "node", script.to_str().unwrap()],
        dir.path(),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let context = format!(
        "status {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status, out.stderr
    );
    assert_eq!(out.status.code(), Some(0), "{context}");
    // One line per step, each a pass.
    for step in [
        "initialize",
        "describe",
        "trigger/schema",
        "trigger/validate",
        "trigger/poll",
        "trigger/onStarted",
        "trigger/onFinished",
        "shutdown",
    ] {
        let line = stdout
            .lines()
            .find(|line| line.contains(step))
            .unwrap_or_else(|| panic!("no line for `{step}`\n{context}"));
        assert!(line.starts_with("pass"), "`{step}` did not pass\n{context}");
    }
    assert!(
        !stdout.to_lowercase().contains("fail"),
        "a step failed\n{context}"
    );
}

/// The probe reports the extension's own rejection and exits 1.
#[test]
fn curupira_probe_reports_rejected_arguments() {
    if !node_available("curupira_probe_reports_rejected_arguments") {
        return;
    }
    let (dir, copy) = example_copy();
    let script = copy.join("index.js");
    let out = curupira(
        &[
            "probe",
            "--trigger",
            "counter",
            "--arguments",
            r#"{"count": -1}"#,
            "--",
            "node",
            script.to_str().unwrap(),
        ],
        dir.path(),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let context = format!(
        "status {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status, out.stderr
    );
    assert_eq!(out.status.code(), Some(1), "{context}");
    let validate = stdout
        .lines()
        .find(|line| line.contains("trigger/validate"))
        .unwrap_or_else(|| panic!("no line for `trigger/validate`\n{context}"));
    assert!(validate.starts_with("fail"), "{context}");
    // The verdict (`ok: false`, told apart from a broken reply) and the problem the
    // extension named.
    assert!(
        validate.contains("rejected the configuration (ok: false)"),
        "{context}"
    );
    assert!(validate.contains("/count"), "{context}");
}

#[test]
fn curupira_plugins_list_reads_the_manifest() {
    if !node_available("curupira_plugins_list_reads_the_manifest") {
        return;
    }
    let (dir, copy) = example_copy();
    let config = copy.join("curupira.toml");
    let out = curupira(
        &["plugins", "list", "--config", config.to_str().unwrap()],
        dir.path(),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let context = format!(
        "status {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status, out.stderr
    );
    assert_eq!(out.status.code(), Some(0), "{context}");
    for needle in ["node-trigger-example", "0.1.0", "node", "counter"] {
        assert!(stdout.contains(needle), "no `{needle}`\n{context}");
    }
}
