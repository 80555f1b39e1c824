//! The recordings of the published ecosystem (`../shared/conformance/curupira-wire/`,
//! see its README) replayed against `examples/entries.rs`, the Rust twin of the
//! recording extension written with the official Python SDK:
//!
//! - `sdk_replies_rec_ext`: every `rec-ext` case of `sdk-replies.json`, in order, in
//!   one conversation as recorded (one process); each reply must equal the official
//!   SDK's, except where [`expectation`] says why it cannot or should not;
//! - `transcripts`: every `transcripts/*/process-*.jsonl`, each file one conversation,
//!   every request the reference host sent; each reply must equal the recorded one.
//!
//! The twin is compiled into this test (`#[path]`) and served in memory with
//! [`serve`], so the replay needs no process and no build of the example. `<workdir>`
//! in the recordings becomes a temporary folder holding the files the polls read:
//! `entries.json` (the recording's own, from `transcripts/configs/`) for the
//! `rec-ext` cases, and for a transcript each file its polls name, holding the entries
//! the recording handed out from it in that process. Where the reply holds a schema,
//! the annotations the Python SDK cannot derive and ours adds (`description` from doc
//! comments, `format` from the Rust type) are left out of the comparison.
//!
//! A clone without `../shared` skips both, and says so in `cargo test`'s output
//! (ignored, with the reason): this file has its own harness, `libtest-mimic`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../examples/entries.rs"]
#[allow(dead_code)]
mod entries;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use curupira_extension_sdk::curupira_framing::{FrameReader, FrameWriter};
use curupira_extension_sdk::{ServeOptions, ServeOutcome, serve};
use libtest_mimic::{Arguments, Completion, Trial};
use serde_json::{Value, json};

fn folder() -> PathBuf {
    curupira_test_support::conformance::folder("curupira-wire")
}

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        Trial::ignorable_test("sdk_replies_rec_ext", || when_recorded(sdk_replies_rec_ext)),
        Trial::ignorable_test("transcripts", || when_recorded(transcripts)),
    ];
    libtest_mimic::run(&args, trials).exit();
}

fn when_recorded(check: fn(&Path)) -> Result<Completion, libtest_mimic::Failed> {
    let dir = folder();
    if !dir.is_dir() {
        return Ok(Completion::ignored_with(format!(
            "skipped: {} is missing, so the replies were not compared with the recordings",
            dir.display()
        )));
    }
    check(&dir);
    Ok(Completion::Completed)
}

/// How a reply of ours compares with the official one.
enum Expect {
    /// Equal, member for member.
    Same,
    /// Equal once our error's `data` is left out, which the official reply lacks:
    /// `why` says what it holds.
    SameWithData { why: &'static str },
    /// The same `id` and error `code`; the message is worded otherwise, for `why`.
    /// `check` holds what our message must say all the same.
    SameCode {
        why: &'static str,
        check: fn(&str) -> bool,
    },
    /// No reply at all, for `why`.
    NoReply { why: &'static str },
}

/// Where our reply differs from the official SDK's, and why; every other case is
/// [`Expect::Same`].
fn expectation(case: &str) -> Expect {
    match case {
        "initialize-wrong-version" => Expect::SameCode {
            why: "the message is curupira-protocol's, which names both versions \
                  (`protocol version mismatch: the host speaks protocol 3, …`)",
            check: |message| message.contains("protocol 3") && message.contains("protocol 2"),
        },
        "schema-unknown-trigger" => Expect::SameWithData {
            why: "the types the extension offers, `{\"trigger_types\": [\"list-entries\"]}`",
        },
        "unknown-method" => Expect::SameCode {
            why: "the message is curupira-jsonrpc's (`method \"agent/nope\" not found`)",
            check: |message| message.contains("agent/nope"),
        },
        "jsonrpc-1.0" => Expect::SameCode {
            why: "the message is curupira-jsonrpc's, which names the member and the value",
            check: |message| message.contains("jsonrpc") && message.contains("1.0"),
        },
        "poll-trigger-raised" => Expect::SameCode {
            why: "the message carries the error of the failed read, Python's OSError text \
                  there, Rust's io::Error text here",
            check: |message| {
                message.starts_with("execution error: ") && message.contains("/missing.json")
            },
        },
        "notification" => Expect::NoReply {
            why: "JSON-RPC 2.0 forbids answering a notification, and no host sends one: \
                  the official SDK answers it with `id: null`, we log it and go on",
        },
        _ => Expect::Same,
    }
}

/// Every `<workdir>` inside `value`'s strings replaced by `workdir`.
fn substitute(value: &Value, workdir: &Path) -> Value {
    match value {
        Value::String(text) => {
            Value::String(text.replace("<workdir>", &workdir.display().to_string()))
        }
        Value::Array(items) => items.iter().map(|item| substitute(item, workdir)).collect(),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| (key.clone(), substitute(item, workdir)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The reply without the schema annotations only ours has (`description`, `format`).
fn comparable(reply: &Value) -> Value {
    fn strip(schema: &mut Value) {
        match schema {
            Value::Object(object) => {
                object.remove("description");
                object.remove("format");
                for (key, member) in object.iter_mut() {
                    match (key.as_str(), member) {
                        ("properties", Value::Object(properties)) => {
                            properties.values_mut().for_each(strip)
                        }
                        (_, member) => strip(member),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut reply = reply.clone();
    if let Some(schema) = reply.pointer_mut("/result/schema") {
        strip(schema);
    }
    reply
}

/// Serves `requests` with the twin, in memory, as one process would: the replies in
/// order and how the conversation ended.
fn converse(requests: &[Value]) -> (Vec<Value>, ServeOutcome) {
    let mut input = FrameWriter::new(Vec::new());
    for request in requests {
        input.write_frame(request.to_string().as_bytes()).unwrap();
    }
    let input = input.into_inner();
    let mut output = Vec::new();
    let options = ServeOptions::from_manifest(entries::MANIFEST).unwrap();
    let outcome = serve(&mut entries::app(), &input[..], &mut output, &options)
        .expect("serve reads every recorded frame");
    let replies = FrameReader::new(&output[..])
        .map(|body| serde_json::from_slice(&body.unwrap()).unwrap())
        .collect();
    (replies, outcome)
}

fn sdk_replies_rec_ext(dir: &Path) {
    let recorded: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("sdk-replies.json")).unwrap()).unwrap();
    let cases: Vec<&Value> = recorded["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|case| case["process"] == "rec-ext")
        .collect();
    assert!(cases.len() >= 20, "only {} rec-ext cases", cases.len());

    let workdir = tempfile::tempdir().unwrap();
    fs::copy(
        dir.join("transcripts/configs/entries.json"),
        workdir.path().join("entries.json"),
    )
    .unwrap();

    // One process: every request in order; the last case is the exit after shutdown.
    let requests: Vec<Value> = cases
        .iter()
        .filter(|case| !case["request"].is_null())
        .map(|case| substitute(&case["request"], workdir.path()))
        .collect();
    let (replies, outcome) = converse(&requests);
    let mut replies = replies.into_iter();

    let mut compared = 0;
    for case in &cases {
        let name = case["case"].as_str().unwrap();
        if case["request"].is_null() {
            assert_eq!(case["exit_code"], json!(0), "{name}");
            assert_eq!(
                outcome,
                ServeOutcome::Shutdown,
                "{name}: serve ends at shutdown"
            );
            continue;
        }
        let official = comparable(&substitute(&case["reply"], workdir.path()));
        match expectation(name) {
            Expect::NoReply { why } => {
                println!("{name}: not answered: {why}");
                continue;
            }
            Expect::Same => {
                let ours =
                    comparable(&replies.next().unwrap_or_else(|| panic!("{name}: no reply")));
                assert_eq!(ours, official, "{name}: {}", case["note"]);
            }
            Expect::SameWithData { why } => {
                let mut ours =
                    comparable(&replies.next().unwrap_or_else(|| panic!("{name}: no reply")));
                let data = ours["error"].as_object_mut().unwrap().remove("data");
                assert_eq!(
                    data,
                    Some(json!({"trigger_types": ["list-entries"]})),
                    "{name}"
                );
                assert_eq!(ours, official, "{name}: {}", case["note"]);
                println!("{name}: the same, plus data ({why})");
            }
            Expect::SameCode { why, check } => {
                let ours = replies.next().unwrap_or_else(|| panic!("{name}: no reply"));
                assert_eq!(ours["id"], official["id"], "{name}");
                assert_eq!(
                    ours["error"]["code"], official["error"]["code"],
                    "{name}: {ours}"
                );
                let message = ours["error"]["message"].as_str().unwrap();
                assert!(check(message), "{name}: {message}");
                println!("{name}: same code, own message ({why}): {message}");
            }
        }
        compared += 1;
    }
    assert_eq!(replies.next(), None, "a reply nobody asked for");
    println!(
        "compared {compared} replies of {} rec-ext cases",
        cases.len()
    );
}

/// A process file: the frames the host sent and the replies it got.
fn read_process(path: &Path) -> (Vec<Value>, Vec<Value>) {
    let mut sent = Vec::new();
    let mut received = Vec::new();
    for line in fs::read_to_string(path).unwrap().lines() {
        let frame: Value = serde_json::from_str(line).unwrap();
        match frame["dir"].as_str() {
            Some("host->ext") => sent.push(frame["body"].clone()),
            Some("ext->host") => received.push(frame["body"].clone()),
            other => panic!("{}: a frame with dir {other:?}", path.display()),
        }
    }
    (sent, received)
}

/// The entries files the polls of one process read, rebuilt from what the recording
/// handed out: for each `path`, the polled entries in `id` order (a file the process
/// polled to its end holds exactly those).
fn rebuild_files(sent: &[Value], received: &[Value]) -> BTreeMap<String, Vec<Value>> {
    let mut files: BTreeMap<String, BTreeMap<u64, Value>> = BTreeMap::new();
    for request in sent.iter().filter(|r| r["method"] == "trigger/poll") {
        let path = request["params"]["automation"]["path"].as_str().unwrap();
        let entries = files.entry(path.to_owned()).or_default();
        let reply = received
            .iter()
            .find(|reply| reply["id"] == request["id"])
            .unwrap();
        if let Some(values) = reply["result"]["values"].as_array() {
            let field = |key: &str| {
                values
                    .iter()
                    .find(|pair| pair["key"] == key)
                    .map(|pair| pair["value"].clone())
                    .unwrap()
            };
            let id = field("id").as_str().unwrap().parse().unwrap();
            entries.insert(id, json!({"title": field("title"), "body": field("body")}));
        }
    }
    files
        .into_iter()
        .map(|(path, entries)| (path, entries.into_values().collect()))
        .collect()
}

fn transcripts(dir: &Path) {
    let mut files: Vec<PathBuf> = fs::read_dir(dir.join("transcripts"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .flat_map(|folder| fs::read_dir(folder).unwrap().map(|e| e.unwrap().path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 50, "only {} process files", files.len());

    let mut requests = 0;
    for file in &files {
        let label = file.strip_prefix(dir).unwrap().display().to_string();
        let (sent, received) = read_process(file);
        assert_eq!(sent.len(), received.len(), "{label}: one reply per request");

        let workdir = tempfile::tempdir().unwrap();
        for (path, entries) in rebuild_files(&sent, &received) {
            let path = path.replace("<workdir>", &workdir.path().display().to_string());
            fs::write(path, Value::Array(entries).to_string()).unwrap();
        }
        let sent: Vec<Value> = sent.iter().map(|r| substitute(r, workdir.path())).collect();
        let (replies, outcome) = converse(&sent);
        assert_eq!(replies.len(), received.len(), "{label}");
        for ((request, ours), official) in sent.iter().zip(&replies).zip(&received) {
            let official = comparable(&substitute(official, workdir.path()));
            assert_eq!(
                comparable(ours),
                official,
                "{label}: the reply to {}",
                request["method"]
            );
        }
        let ended_with_shutdown = sent.last().is_some_and(|r| r["method"] == "shutdown");
        let expected = match ended_with_shutdown {
            true => ServeOutcome::Shutdown,
            false => ServeOutcome::EndOfInput,
        };
        assert_eq!(outcome, expected, "{label}");
        requests += sent.len();
    }
    println!(
        "replayed {requests} requests of {} recorded processes",
        files.len()
    );
}
