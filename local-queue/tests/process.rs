//! The `local-queue` extension end to end: the crate's own executable (the code
//! `curupira builtin local-queue` runs) as a child process in a temporary folder,
//! spoken to in frames.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use curupira_framing::{FrameReader, FrameWriter};
use curupira_jsonrpc::{ErrorCode, Message, Params, RemoteError, Request, parse_message};
use curupira_manifest::{Launch, check_str};
use serde_json::{Value, json};

/// The longest a test waits for the child before killing it.
const DEADLINE: Duration = Duration::from_secs(30);

const TASKS: &str = concat!(
    "{\"title\":\"Fix the login bug\",\"issue\":\"12\"}\n",
    "\n",
    "{\"title\":\"Write docs\",\"issue\":\"13\"}\n",
    "{\"title\":\"Add tests\",\"issue\":\"14\"}\n",
);

/// The extension's executable, built by Cargo for these tests.
const EXE: &str = env!("CARGO_BIN_EXE_curupira-local-queue");

/// A running `curupira-local-queue`; killed and reaped if a test fails.
struct Extension {
    child: Arc<Mutex<Child>>,
    stdin: Option<FrameWriter<ChildStdin>>,
    stdout: FrameReader<ChildStdout>,
    stderr: Option<JoinHandle<String>>,
    watchdog: Option<mpsc::Sender<()>>,
    next_id: u64,
}

impl Extension {
    fn start(dir: &Path) -> Extension {
        let mut child = Command::new(EXE)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = FrameWriter::new(child.stdin.take().unwrap());
        let stdout = FrameReader::new(child.stdout.take().unwrap());
        let mut stderr_pipe = child.stderr.take().unwrap();
        // Drained all the time: a full stderr pipe would block the child.
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut stderr_pipe, &mut text).unwrap();
            text
        });
        let child = Arc::new(Mutex::new(child));
        let (watchdog, stop) = mpsc::channel::<()>();
        let watched = Arc::clone(&child);
        thread::spawn(move || {
            if stop.recv_timeout(DEADLINE) == Err(RecvTimeoutError::Timeout) {
                let _ = watched.lock().unwrap().kill();
            }
        });
        let mut extension = Extension {
            child,
            stdin: Some(stdin),
            stdout,
            stderr: Some(stderr),
            watchdog: Some(watchdog),
            next_id: 1,
        };
        let reply = extension.result(
            "initialize",
            Some(json!({"protocol_version": 2, "host": {"name": "test", "version": "0"}})),
        );
        assert_eq!(
            reply,
            json!({
                "protocol_version": 2,
                "name": "local-queue",
                "version": env!("CARGO_PKG_VERSION"),
            })
        );
        extension
    }

    /// Sends one request and returns its reply's result or error.
    fn call(&mut self, method: &str, params: Option<Value>) -> Result<Value, RemoteError> {
        let id = self.next_id;
        self.next_id += 1;
        let params = params.map(|p| Params::try_from(p).unwrap());
        let request = Message::from(Request::new(id, method, params));
        self.stdin
            .as_mut()
            .unwrap()
            .write_frame(&request.to_vec())
            .unwrap();
        let body = self
            .stdout
            .read_frame()
            .unwrap()
            .unwrap_or_else(|| panic!("no reply to `{method}`"));
        let Message::Response(response) = parse_message(&body).unwrap() else {
            panic!("the reply to `{method}` is not a response");
        };
        assert_eq!(response.id, id.into());
        response.into_result()
    }

    fn result(&mut self, method: &str, params: Option<Value>) -> Value {
        self.call(method, params)
            .unwrap_or_else(|err| panic!("`{method}` failed: {err}"))
    }

    fn poll(&mut self, arguments: Value) -> Value {
        self.result(
            "trigger/poll",
            Some(json!({"trigger_type": "jsonl", "arguments": arguments})),
        )
    }

    fn finished(&mut self, values: &Value) {
        let reply = self.result(
            "trigger/onFinished",
            Some(json!({"trigger_type": "jsonl", "values": values})),
        );
        assert_eq!(reply, json!({}));
    }

    /// Sends `shutdown`, checks its `null` reply and that the process exits 0 with
    /// nothing more on stdout; returns what it logged.
    fn shutdown(mut self) -> String {
        assert_eq!(self.result("shutdown", None), Value::Null);
        self.stdin = None;
        assert_eq!(self.stdout.read_frame().unwrap(), None);
        let status = self.wait();
        assert!(status.success(), "exit status {status}");
        self.stderr.take().unwrap().join().unwrap()
    }

    fn wait(&mut self) -> ExitStatus {
        let status = self.child.lock().unwrap().wait().unwrap();
        self.watchdog = None;
        status
    }
}

impl Drop for Extension {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap();
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn item(pairs: &[(&str, &str)]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect(),
    )
}

fn queue_args() -> Value {
    json!({"path": "tasks.jsonl", "done_path": "done.jsonl"})
}

#[test]
fn polls_hand_out_lines_in_order_and_a_second_process_skips_done_ones() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tasks.jsonl"), TASKS).unwrap();
    let first = item(&[("title", "Fix the login bug"), ("issue", "12")]);
    let second = item(&[("title", "Write docs"), ("issue", "13")]);
    let third = item(&[("title", "Add tests"), ("issue", "14")]);

    let mut extension = Extension::start(dir.path());
    assert_eq!(
        extension.result("describe", None)["triggers"][0]["type"],
        json!("jsonl")
    );
    assert_eq!(extension.poll(queue_args()), json!({"values": first}));
    assert_eq!(extension.poll(queue_args()), json!({"values": second}));
    assert_eq!(
        extension.result(
            "trigger/onStarted",
            Some(json!({"trigger_type": "jsonl", "values": first}))
        ),
        json!({})
    );
    assert!(
        !dir.path().join("done.jsonl").exists(),
        "onStarted records nothing"
    );
    extension.finished(&first);
    assert_eq!(
        fs::read_to_string(dir.path().join("done.jsonl")).unwrap(),
        "{\"title\":\"Fix the login bug\",\"issue\":\"12\"}\n"
    );
    let log = extension.shutdown();
    assert_eq!(log, "", "nothing to warn about");

    // Line 2 was handed out but never finished: a new process hands it out again.
    let mut extension = Extension::start(dir.path());
    assert_eq!(extension.poll(queue_args()), json!({"values": second}));
    assert_eq!(extension.poll(queue_args()), json!({"values": third}));
    assert_eq!(extension.poll(queue_args()), json!({"values": null}));
    extension.finished(&third);
    extension.finished(&second);
    extension.shutdown();
    assert_eq!(
        fs::read_to_string(dir.path().join("done.jsonl")).unwrap(),
        concat!(
            "{\"title\":\"Fix the login bug\",\"issue\":\"12\"}\n",
            "{\"title\":\"Add tests\",\"issue\":\"14\"}\n",
            "{\"title\":\"Write docs\",\"issue\":\"13\"}\n",
        )
    );

    let mut extension = Extension::start(dir.path());
    assert_eq!(extension.poll(queue_args()), json!({"values": null}));
    extension.shutdown();
}

#[test]
fn done_path_defaults_to_the_queue_path_with_done_appended() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tasks.jsonl"),
        "{\"b\":\"2\",\"a\":\"1\"}\n",
    )
    .unwrap();
    let mut extension = Extension::start(dir.path());
    let only = item(&[("b", "2"), ("a", "1")]);
    let args = json!({"path": "tasks.jsonl"});
    assert_eq!(extension.poll(args.clone()), json!({"values": only}));
    assert_eq!(extension.poll(args), json!({"values": null}));
    extension.finished(&only);
    extension.shutdown();
    assert_eq!(
        fs::read_to_string(dir.path().join("tasks.jsonl.done")).unwrap(),
        "{\"b\":\"2\",\"a\":\"1\"}\n"
    );
}

#[test]
fn a_bad_line_is_an_internal_error_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tasks.jsonl"),
        "{\"title\":\"ok\"}\n\n{\"title\":\"x\",\"priority\":5}\n",
    )
    .unwrap();
    let mut extension = Extension::start(dir.path());
    assert_eq!(
        extension.poll(queue_args()),
        json!({"values": item(&[("title", "ok")])})
    );
    let err = extension
        .call(
            "trigger/poll",
            Some(json!({"trigger_type": "jsonl", "arguments": queue_args()})),
        )
        .unwrap_err();
    assert_eq!(err.0.code, ErrorCode::INTERNAL_ERROR);
    assert_eq!(
        err.0.message,
        "`tasks.jsonl` line 3: member \"priority\" must be a string, found 5 (item values are \
         strings)"
    );

    let err = extension
        .call(
            "trigger/poll",
            Some(json!({"trigger_type": "jsonl", "arguments": {"path": "missing.jsonl"}})),
        )
        .unwrap_err();
    assert_eq!(err.0.code, ErrorCode::INTERNAL_ERROR);
    assert!(
        err.0
            .message
            .starts_with("cannot open the queue file `missing.jsonl`: "),
        "{}",
        err.0.message
    );
    extension.shutdown();
}

#[test]
fn a_bad_done_line_matches_nothing_and_is_warned_about_once() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tasks.jsonl"), TASKS).unwrap();
    fs::write(
        dir.path().join("done.jsonl"),
        concat!(
            "not json\n",
            "{\"title\":\"Write docs\",\"issue\":\"13\"}\n",
            "{\"title\":\"Fix the login",
        ),
    )
    .unwrap();
    let mut extension = Extension::start(dir.path());
    let first = item(&[("title", "Fix the login bug"), ("issue", "12")]);
    let third = item(&[("title", "Add tests"), ("issue", "14")]);
    assert_eq!(extension.poll(queue_args()), json!({"values": first}));
    assert_eq!(extension.poll(queue_args()), json!({"values": third}));
    assert_eq!(extension.poll(queue_args()), json!({"values": null}));
    // The unterminated last line is taken for someone's interrupted write: our line
    // goes after a newline instead of being glued onto it.
    extension.finished(&first);
    let log = extension.shutdown();
    assert_eq!(
        log,
        "local-queue: warning: `done.jsonl` line 1 is skipped: the line is not valid JSON: \
         expected ident at column 2\n"
    );
    assert!(
        fs::read_to_string(dir.path().join("done.jsonl"))
            .unwrap()
            .ends_with(
                "{\"title\":\"Fix the login\n{\"title\":\"Fix the login bug\",\"issue\":\"12\"}\n"
            )
    );
}

#[test]
fn validate_reports_every_problem_with_its_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let mut extension = Extension::start(dir.path());
    let validate = |extension: &mut Extension, arguments: Value| {
        extension.call(
            "trigger/validate",
            Some(json!({"trigger_type": "jsonl", "arguments": arguments})),
        )
    };
    assert_eq!(validate(&mut extension, queue_args()).unwrap(), json!({}));
    let err = validate(&mut extension, json!({"done_path": 5, "pth": "x"})).unwrap_err();
    assert_eq!(err.0.code, ErrorCode::CONFIGURATION_INVALID);
    assert_eq!(
        err.0.data,
        Some(json!({"errors": [
            {
                "path": "/path",
                "message": "`path` is required: the JSON Lines file to take items from, \
                            relative to the folder of curupira.toml",
            },
            {"path": "/done_path", "message": "`done_path` must be a string, found 5"},
            {
                "path": "/pth",
                "message": "unknown member \"pth\"; the jsonl trigger takes only `path` and \
                            `done_path`",
            },
        ]}))
    );
    let err = validate(&mut extension, json!({"path": ["a"]})).unwrap_err();
    assert_eq!(
        err.0.data,
        Some(json!({"errors": [
            {"path": "/path", "message": "`path` must be a string, found an array"},
        ]}))
    );

    let schema = extension.result("trigger/schema", Some(json!({"trigger_type": "jsonl"})));
    assert_eq!(schema["prompt_fields"], json!([]));
    assert_eq!(schema["schema"]["type"], json!("object"));
    assert_eq!(schema["schema"]["required"], json!(["path"]));
    assert_eq!(schema["schema"]["additionalProperties"], json!(false));
    let properties = schema["schema"]["properties"].as_object().unwrap();
    let mut names: Vec<&String> = properties.keys().collect();
    names.sort();
    assert_eq!(names, ["done_path", "path"]);
    for property in properties.values() {
        assert_eq!(property["type"], json!("string"));
        assert!(property["description"].as_str().unwrap().len() > 20);
    }
    extension.shutdown();
}

#[test]
fn on_finished_refuses_values_this_process_did_not_hand_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut extension = Extension::start(dir.path());
    let err = extension
        .call(
            "trigger/onFinished",
            Some(json!({"trigger_type": "jsonl", "values": item(&[("a", "1")])})),
        )
        .unwrap_err();
    assert_eq!(err.0.code, ErrorCode::INVALID_PARAMS);
    assert!(
        err.0
            .message
            .contains("not handed out by a poll of this process"),
        "{}",
        err.0.message
    );
    extension.shutdown();
    assert!(
        fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no file written"
    );
}

#[test]
fn closing_stdin_ends_the_process_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut extension = Extension::start(dir.path());
    extension.stdin = None;
    assert_eq!(extension.stdout.read_frame().unwrap(), None);
    assert!(extension.wait().success());
}

#[test]
fn print_manifest_prints_a_manifest_that_checks_clean() {
    let output = Command::new(EXE)
        .arg("--curupira-print-manifest")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "exit status {}", output.status);
    assert!(output.stderr.is_empty());
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text, curupira_local_queue::MANIFEST);

    let checked = check_str(&text, "curupira-extension.toml");
    assert_eq!(
        (checked.report.errors(), checked.report.warnings()),
        (0, 0),
        "{}",
        checked.report.render_human(false)
    );
    let manifest = checked.manifest.unwrap();
    assert_eq!(manifest.name.as_str(), "local-queue");
    assert_eq!(manifest.version.to_string(), env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest.protocol_version.major(), 2);
    assert_eq!(manifest.runtime.as_str(), "native");
    assert!(manifest.trigger_types.contains("jsonl"));
    assert_eq!(manifest.trigger_types.as_slice().len(), 1);
    let Launch::Command { command, args } = &manifest.launch else {
        panic!("launch is not a command");
    };
    assert_eq!(command.to_string(), "curupira");
    assert_eq!(args, &["builtin", "local-queue"]);
}
