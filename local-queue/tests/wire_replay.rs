//! What the reference host `curupira` 0.4.0 sent, replayed to `local-queue`: every
//! host→ext request of every `transcripts/<command>/process-*.jsonl` of
//! `../shared/conformance/curupira-wire/` (see its README), each process file one
//! conversation with a fresh `curupira-local-queue` process, in the recording's order,
//! the processes of one command sharing one temporary folder.
//!
//! The recording extension's trigger is rewritten into local-queue's: `list-entries` /
//! `rec/list-entries` become `jsonl` / `rec/jsonl` wherever a `trigger_type` is, and
//! its parameters (`path` to a JSON list, `limit_total`) become local-queue's: `path`
//! is a JSONL queue in the temporary folder holding the entries the recording handed
//! out (each line the recorded item's pairs, in their order; written before the
//! process that first polled them, so the entry `watch` appended mid-run arrives where
//! it did), `limit_total` is dropped, and a table the recording's check refused
//! (`limit_total` below 1) gets an empty `path`, which local-queue refuses too. The
//! items' values (`id`, `title`, `body`) are kept, so hooks carry exactly what the
//! recording's did.
//!
//! Every reply must have the shape the recorded one has: `initialize` a `server_info`;
//! `describe` triggers with a `trigger_type` and string `prompt_fields`; `trigger/schema`
//! a `schema` and string `prompt_fields`; `trigger/validate` a boolean `ok` (the
//! recorded verdict) and, accepted, a `configuration` holding the core keys sent;
//! `trigger/poll` `values` null or pairs; the hooks an object; `shutdown` `{}`, after
//! which the process exits 0. Each command's agreements are counted and printed.
//!
//! The reference host sends `trigger/onStarted` and `trigger/onFinished` each in a
//! process of its own that never polled the item: local-queue finds the item's done
//! file through its index of hand-outs in the working directory (here the shared
//! temporary folder), so every reply agrees, and each `onFinished` records its item
//! (checked at the end: each item the recording finished is in its queue's done file,
//! once).
//!
//! A clone without the vectors skips this test, and the skip shows in the output and
//! the summary (`ignored`, with the missing folder named), through `libtest-mimic`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use curupira_client::ProcessGuard;
use curupira_framing::{FrameReader, FrameWriter};
use curupira_local_queue::{NAME, TRIGGER_TYPE};
use curupira_protocol::method::{
    Describe, Initialize, Method, OnFinished, OnStarted, Poll, Schema, Shutdown, Validate,
};
use curupira_protocol::{
    CORE_KEYS, DescribeResult, InitializeResult, PeerInfo, PollResult, TriggerSchema,
    ValidateResult, Wire,
};
use libtest_mimic::{Arguments, Completion, Trial};
use serde_json::{Map, Value, json};

/// The extension's executable, built by Cargo for these tests.
const EXE: &str = env!("CARGO_BIN_EXE_curupira-local-queue");

/// The longest a reply, or an exit, is waited for.
const DEADLINE: Duration = Duration::from_secs(30);

/// The recording extension's trigger type, and the alias it was registered under.
const RECORDED_TYPE: &str = "list-entries";
const ALIAS: &str = "rec";

fn folder() -> PathBuf {
    curupira_test_support::conformance::folder("curupira-wire/transcripts")
}

fn main() {
    let args = Arguments::from_args();
    let dir = folder();
    let trials = if dir.is_dir() {
        let mut commands: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.join("index.json").is_file())
            .collect();
        commands.sort();
        assert!(!commands.is_empty(), "no transcripts in {}", dir.display());
        commands
            .into_iter()
            .map(|command| {
                let name = format!(
                    "transcripts::{}",
                    command.file_name().unwrap().to_str().unwrap()
                );
                Trial::test(name, move || {
                    replay_command(&command);
                    Ok(())
                })
            })
            .collect()
    } else {
        vec![Trial::ignorable_test(
            "curupira_wire_transcripts",
            move || {
                Ok(Completion::ignored_with(format!(
                    "skipped: {} is missing, so the reference host's requests were not replayed",
                    dir.display()
                )))
            },
        )]
    };
    libtest_mimic::run(&args, trials).exit();
}

// ---------------------------------------------------------------------------------
// The recording

/// One recorded frame.
struct Frame {
    to_extension: bool,
    body: Value,
}

fn frames(path: &Path) -> Vec<Frame> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let frame: Value = serde_json::from_str(line).unwrap();
            let to_extension = match frame["dir"].as_str() {
                Some("host->ext") => true,
                Some("ext->host") => false,
                other => panic!("{}: a frame going {other:?}", path.display()),
            };
            Frame {
                to_extension,
                body: frame["body"].clone(),
            }
        })
        .collect()
}

/// The recorded requests of one process with the replies they got (`None`: the host
/// sent it and got nothing back before the recording ended).
fn exchanges(frames: &[Frame]) -> Vec<(Value, Option<Value>)> {
    let mut replies: BTreeMap<String, Value> = frames
        .iter()
        .filter(|frame| !frame.to_extension)
        .map(|frame| (frame.body["id"].to_string(), frame.body.clone()))
        .collect();
    frames
        .iter()
        .filter(|frame| frame.to_extension)
        .map(|frame| {
            let reply = replies.remove(&frame.body["id"].to_string());
            (frame.body.clone(), reply)
        })
        .collect()
}

/// An item's pairs as a queue line: a JSON object, the pairs in their order.
fn queue_line(pairs: &[Value]) -> String {
    let members: Vec<String> = pairs
        .iter()
        .map(|pair| format!("{}:{}", pair["key"], pair["value"]))
        .collect();
    format!("{{{}}}\n", members.join(","))
}

/// The queue file standing for the recording's `path`: its file name, `.jsonl`.
fn queue_name(recorded: &Value) -> String {
    let recorded = recorded.as_str().expect("a recorded path is a string");
    let file = recorded.rsplit('/').next().unwrap();
    format!("{}.jsonl", file.strip_suffix(".json").unwrap_or(file))
}

// ---------------------------------------------------------------------------------
// The rewriting

fn rewrite_trigger_type(recorded: &Value) -> Value {
    match recorded.as_str() {
        Some(RECORDED_TYPE) => json!(TRIGGER_TYPE),
        Some(name) if name == format!("{ALIAS}/{RECORDED_TYPE}") => {
            json!(format!("{ALIAS}/{TRIGGER_TYPE}"))
        }
        other => panic!("a trigger type the recording did not use: {other:?}"),
    }
}

/// An automation's table with local-queue's parameters for the recording's.
fn rewrite_table(table: &Map<String, Value>) -> Map<String, Value> {
    let mut ours = Map::new();
    for (key, value) in table {
        match key.as_str() {
            "trigger_type" => {
                ours.insert(key.clone(), rewrite_trigger_type(value));
            }
            "path" => {
                ours.insert(key.clone(), json!(queue_name(value)));
            }
            "limit_total" => {}
            _ if CORE_KEYS.contains(&key.as_str()) => {
                ours.insert(key.clone(), value.clone());
            }
            other => panic!("a parameter the recording did not use: {other}"),
        }
    }
    // What the recording's check refused, local-queue refuses too.
    if table
        .get("limit_total")
        .and_then(Value::as_i64)
        .is_some_and(|limit| limit < 1)
    {
        ours.insert("path".into(), json!(""));
    }
    ours
}

/// A recorded request, rewritten for local-queue.
fn rewrite_request(request: &Value) -> Value {
    let mut ours = request.clone();
    let Some(Value::Object(params)) = ours.get_mut("params") else {
        return ours;
    };
    for (key, value) in params.iter_mut() {
        match key.as_str() {
            "trigger_type" => *value = rewrite_trigger_type(value),
            "configuration" | "automation" => {
                *value = Value::Object(rewrite_table(value.as_object().unwrap()));
            }
            _ => {}
        }
    }
    ours
}

// ---------------------------------------------------------------------------------
// A local-queue process

/// `curupira-local-queue` started in a folder, spoken to frame by frame.
struct Extension {
    guard: ProcessGuard,
    stdin: Option<FrameWriter<ChildStdin>>,
    replies: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
}

impl Extension {
    fn start(dir: &Path) -> Extension {
        let mut command = Command::new(EXE);
        command
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Killed and reaped when dropped, should the test fail.
        let mut guard = ProcessGuard::spawn(&mut command).unwrap();
        let stdin = FrameWriter::new(guard.take_stdin().unwrap());
        let stdout = guard.take_stdout().unwrap();
        let (to_test, replies) = mpsc::channel();
        thread::spawn(move || {
            let mut frames = FrameReader::new(std::io::BufReader::new(stdout));
            while let Ok(Some(body)) = frames.read_frame() {
                let reply = serde_json::from_slice(&body)
                    .unwrap_or_else(|err| json!({"not JSON": err.to_string()}));
                if to_test.send(reply).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut errors = guard.take_stderr().unwrap();
        let log = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut text = String::new();
            let _ = errors.read_to_string(&mut text);
            log.lock().unwrap().push_str(&text);
        });
        Extension {
            guard,
            stdin: Some(stdin),
            replies,
            stderr,
        }
    }

    /// Writes `request` as one frame, exactly as it is, and waits for the reply.
    fn exchange(&mut self, request: &Value) -> Value {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_frame(request.to_string().as_bytes()).unwrap();
        stdin.flush().unwrap();
        self.replies.recv_timeout(DEADLINE).unwrap_or_else(|_| {
            panic!(
                "no reply to {request} within {DEADLINE:?}; stderr: {}",
                self.stderr.lock().unwrap()
            )
        })
    }

    /// Closes stdin (as a host does after `shutdown`, or instead of it) and waits for
    /// the process to exit.
    fn finish(mut self) -> ExitStatus {
        drop(self.stdin.take());
        self.guard
            .wait_for(DEADLINE)
            .expect("local-queue exits once its stdin is closed")
    }
}

// ---------------------------------------------------------------------------------
// The verdicts

/// Where a reply was, for messages and the known set.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct At {
    process: String,
    id: String,
    method: String,
}

/// Whether our reply has the recorded one's shape; why not, when it has not.
fn judge(request: &Value, recorded: &Value, ours: &Value) -> Result<(), String> {
    if ours["jsonrpc"] != "2.0" || ours["id"] != request["id"] {
        return Err(format!("not a reply to request {}: {ours}", request["id"]));
    }
    let result = match (
        recorded.get("result"),
        ours.get("result"),
        ours.get("error"),
    ) {
        (Some(_), Some(result), None) => result,
        (Some(_), _, Some(error)) => return Err(format!("an error reply: {error}")),
        (None, _, _) => {
            // No recorded reply is an error; should one be, ours must be one too.
            return match ours.get("error") {
                Some(_) => Ok(()),
                None => Err(format!("a result where the recording has {recorded}")),
            };
        }
        _ => return Err(format!("neither a result nor an error: {ours}")),
    };
    let method = request["method"].as_str().unwrap();
    let shape = |error: curupira_protocol::ShapeError| format!("{method}: {error}");
    let strings = |value: &Value, what: &str| -> Result<(), String> {
        match value.as_array() {
            Some(items) if items.iter().all(Value::is_string) => Ok(()),
            _ => Err(format!("{what} is not an array of strings: {value}")),
        }
    };
    match method {
        Initialize::NAME => {
            let hello = InitializeResult::read(Some(result)).map_err(shape)?;
            let expected = PeerInfo::new(NAME, env!("CARGO_PKG_VERSION"));
            if hello.server_info != expected || !hello.protocol_version.is_compatible() {
                return Err(format!("another peer or version: {result}"));
            }
        }
        Describe::NAME => {
            DescribeResult::read(Some(result)).map_err(shape)?;
            let triggers = result["triggers"].as_array().unwrap();
            for trigger in triggers {
                if !trigger["trigger_type"].is_string() {
                    return Err(format!("a trigger without `trigger_type`: {trigger}"));
                }
                strings(&trigger["prompt_fields"], "`prompt_fields`")?;
            }
            if !triggers.iter().any(|t| t["trigger_type"] == TRIGGER_TYPE) {
                return Err(format!("no `{TRIGGER_TYPE}` trigger: {result}"));
            }
        }
        Schema::NAME => {
            TriggerSchema::read(Some(result)).map_err(shape)?;
            if !result["schema"].is_object() {
                return Err(format!("`schema` is not an object: {result}"));
            }
            strings(&result["prompt_fields"], "`prompt_fields`")?;
        }
        Validate::NAME => {
            let verdict = ValidateResult::read(Some(result)).map_err(shape)?;
            let recorded_ok = recorded["result"]["ok"].as_bool();
            if result["ok"].as_bool() != recorded_ok {
                return Err(format!("another verdict: {result}, recorded {recorded}"));
            }
            if let ValidateResult::Accepted { configuration } = verdict {
                let Some(configuration) = configuration else {
                    return Err(format!("accepted without a `configuration`: {result}"));
                };
                let sent = request["params"]["configuration"].as_object().unwrap();
                for key in CORE_KEYS {
                    if sent.get(key).is_some() && configuration.get(key) != sent.get(key) {
                        return Err(format!("the core key `{key}` is not as sent: {result}"));
                    }
                }
            }
        }
        Poll::NAME => {
            PollResult::read(Some(result)).map_err(shape)?;
        }
        OnStarted::NAME | OnFinished::NAME => {
            if !result.is_object() {
                return Err(format!("a hook's result that is not an object: {result}"));
            }
        }
        Shutdown::NAME => {
            if result != &json!({}) {
                return Err(format!("`shutdown` answered {result}, not {{}}"));
            }
        }
        other => {
            return Err(format!(
                "a method the reference host does not send: {other}"
            ));
        }
    }
    Ok(())
}

/// Replays one command's processes in order; panics on any disagreement, or when an
/// item the recording finished is not recorded done exactly once.
fn replay_command(command: &Path) {
    let name = command.file_name().unwrap().to_str().unwrap().to_owned();
    let index: Value =
        serde_json::from_str(&fs::read_to_string(command.join("index.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Per recorded path, the items the recording handed out so far, in order.
    let mut queues: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (mut replies, mut agreements) = (0, 0);
    // Polls whose items are the recording's, too (for information: the replay
    // asserts shapes, and the items differ once onFinished has recorded some, which
    // the recording's extension never does).
    let (mut polls, mut same_items) = (0, 0);
    let mut disagreements = Vec::new();
    // Per queue file, the lines of the items the recording finished.
    let mut finished: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let processes = index["processes"].as_array().unwrap();
    assert!(!processes.is_empty());
    for process in processes {
        let file = process["file"].as_str().unwrap();
        let exchanges = exchanges(&frames(&command.join(file)));
        let methods: Vec<&str> = exchanges
            .iter()
            .map(|(request, _)| request["method"].as_str().unwrap())
            .collect();
        assert_eq!(
            json!(methods),
            process["methods_sent"],
            "{name}/{file}: the index's methods"
        );

        // The queue files as the recording's extension found them.
        for (request, reply) in &exchanges {
            if request["method"] != Poll::NAME {
                continue;
            }
            let queue = queue_name(&request["params"]["automation"]["path"]);
            let lines = queues.entry(queue).or_default();
            if let Some(Value::Array(pairs)) = reply.as_ref().map(|r| &r["result"]["values"]) {
                let line = queue_line(pairs);
                if !lines.contains(&line) {
                    lines.push(line);
                }
            }
        }
        for (queue, lines) in &queues {
            fs::write(dir.path().join(queue), lines.concat()).unwrap();
        }

        let mut extension = Extension::start(dir.path());
        for (request, recorded) in &exchanges {
            let at = At {
                process: file.to_owned(),
                id: request["id"].to_string(),
                method: request["method"].as_str().unwrap().to_owned(),
            };
            if at.method == OnFinished::NAME {
                let line = queue_line(request["params"]["values"].as_array().unwrap());
                let queue = queues
                    .iter()
                    .find(|(_, lines)| lines.contains(&line))
                    .map(|(queue, _)| queue.clone())
                    .expect("a finished item was handed out by a recorded poll");
                finished.entry(queue).or_default().push(line);
            }
            let request = rewrite_request(request);
            let ours = extension.exchange(&request);
            let Some(recorded) = recorded else {
                continue;
            };
            replies += 1;
            if at.method == Poll::NAME {
                polls += 1;
                same_items += usize::from(ours["result"] == recorded["result"]);
            }
            match judge(&request, recorded, &ours) {
                Ok(()) => agreements += 1,
                Err(why) => {
                    disagreements.push(format!("{name}/{file} id {}: {}: {why}", at.id, at.method))
                }
            }
        }
        let stderr = Arc::clone(&extension.stderr);
        let status = extension.finish();
        assert!(
            status.success(),
            "{name}/{file}: exit status {status}; stderr: {}",
            stderr.lock().unwrap()
        );
    }
    assert!(
        disagreements.is_empty(),
        "disagreements: {disagreements:#?}"
    );
    assert_eq!(agreements, replies);
    // A dry run (every poll `preview: true`) writes nothing: the queues are all there is.
    let previews_only = processes.iter().all(|process| {
        let file = command.join(process["file"].as_str().unwrap());
        exchanges(&frames(&file)).iter().all(|(request, _)| {
            request["method"] != Poll::NAME || request["params"]["preview"] == true
        })
    });
    if previews_only {
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let queue_files: Vec<String> = queues.keys().cloned().collect();
        assert_eq!(names, queue_files, "{name}: a dry run wrote files");
    }
    for (queue, mut lines) in finished {
        let done = dir.path().join(format!("{queue}.done"));
        let mut recorded: Vec<String> = fs::read_to_string(&done)
            .unwrap_or_else(|err| panic!("{name}: {}: {err}", done.display()))
            .lines()
            .map(|line| format!("{line}\n"))
            .collect();
        recorded.sort();
        lines.sort();
        assert_eq!(recorded, lines, "{name}: the items finished from {queue}");
    }
    println!(
        "{name}: {} processes, {replies} replies, all with the recorded shape; \
         {same_items} of {polls} polls with the recorded items",
        processes.len(),
    );
}
