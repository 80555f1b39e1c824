//! The `local-queue` extension end to end: the crate's own executable (the code
//! `curupira builtin local-queue` runs) as a child process in a temporary folder,
//! driven by `curupira_client::Client` as a host drives it. Where neither files nor the
//! process matter (validation and the schema), `LocalQueue` is served in a thread of
//! this process over `curupira_client::memory` instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::{BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use curupira_client::{
    CallError, Client, Ending, LaunchCommand, Options, ProcessGuard, StderrSink, memory,
};
use curupira_extension_sdk::{Arguments, Pair, ServeOptions, ServeOutcome, serve};
use curupira_framing::{FrameReader, FrameWriter};
use curupira_jsonrpc::ErrorCode;
use curupira_local_queue::{LocalQueue, MANIFEST, NAME, TRIGGER_TYPE};
use curupira_manifest::{Launch, check_str};
use curupira_protocol::{
    Configuration, InitializeResult, PeerInfo, PollParams, ProtocolVersion, ValidateResult,
};
use serde_json::{Value, json};

/// The longest a test waits for a process to exit by itself.
const DEADLINE: Duration = Duration::from_secs(30);

const TASKS: &str = concat!(
    "{\"title\":\"Fix the login bug\",\"issue\":\"12\"}\n",
    "\n",
    "{\"title\":\"Write docs\",\"issue\":\"13\"}\n",
    "{\"title\":\"Add tests\",\"issue\":\"14\"}\n",
);

/// The extension's executable, built by Cargo for these tests.
const EXE: &str = env!("CARGO_BIN_EXE_curupira-local-queue");

/// How the client words an error reply: this, then the extension's own message.
const REPLIED: &str = "the extension replied with an error: ";

/// What an extension wrote on stderr, line by line.
type Stderr = Arc<Mutex<Vec<String>>>;

/// `initialize` as a host sends it; the reply must name this extension. The client
/// checks every reply's id and shape, and kills the process when dropped.
fn initialize(client: &mut Client) {
    let hello = client.initialize(PeerInfo::new("test", "0")).unwrap();
    assert_eq!(
        hello,
        InitializeResult {
            protocol_version: ProtocolVersion::new(2, None),
            server_info: PeerInfo::new(NAME, env!("CARGO_PKG_VERSION")),
        }
    );
}

/// Starts `curupira-local-queue` in `dir` and initializes it; its stderr lines are
/// collected.
fn start(dir: &Path) -> (Client, Stderr) {
    let stderr = Stderr::default();
    let sink: StderrSink = {
        let stderr = Arc::clone(&stderr);
        Box::new(move |line: &str| stderr.lock().unwrap().push(line.to_owned()))
    };
    let launch = LaunchCommand::new(EXE, dir);
    let mut client = Client::spawn_with_stderr(NAME, &launch, Options::default(), sink).unwrap();
    initialize(&mut client);
    (client, stderr)
}

/// Shuts the extension down: `shutdown` is answered and the process exits 0. Returns
/// what it logged, one `\n`-terminated line each.
fn shutdown(client: Client, stderr: &Stderr) -> String {
    assert_eq!(
        client.shutdown(),
        Ok(Ending::Exited("exited with status 0".to_owned()))
    );
    let lines = stderr.lock().unwrap();
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// The error reply a call got: its code and the extension's own message.
fn refused<T: std::fmt::Debug>(result: Result<T, CallError>) -> (ErrorCode, String) {
    let err = result.expect_err("an error reply");
    let message = err
        .message
        .strip_prefix(REPLIED)
        .unwrap_or_else(|| panic!("not an error reply: {err}"));
    (err.code, message.to_owned())
}

fn item(pairs: &[(&str, &str)]) -> Vec<Pair> {
    pairs.iter().map(|&(k, v)| Pair::new(k, v)).collect()
}

fn arguments(value: Value) -> Arguments {
    serde_json::from_value(value).unwrap()
}

fn queue_args() -> Arguments {
    arguments(json!({"path": "tasks.jsonl", "done_path": "done.jsonl"}))
}

/// The automation's whole table as a host sends it: the trigger's parameters and the
/// host's core keys (the SDK leaves those out before `LocalQueue` sees the rest).
fn table(parameters: &Arguments) -> Configuration {
    let mut table = parameters.clone();
    table.insert("trigger_type".into(), json!("local/jsonl"));
    table.insert("repository".into(), json!("demo"));
    table.insert("prompt".into(), json!("Do ${title}"));
    table
}

/// `trigger/poll` as the reference host sends it, the automation being `parameters`
/// in their table.
fn poll(client: &mut Client, parameters: &Arguments) -> Result<Option<Vec<Pair>>, CallError> {
    client.poll(&PollParams {
        trigger_type: TRIGGER_TYPE.to_owned(),
        automation: table(parameters),
        limit: Some(100),
        preview: false,
    })
}

/// `trigger/validate` with `parameters` in their table.
fn validate(client: &mut Client, parameters: &Arguments) -> ValidateResult {
    client.validate(TRIGGER_TYPE, &table(parameters)).unwrap()
}

/// The sentence of a rejection.
fn rejected(verdict: ValidateResult) -> String {
    match verdict {
        ValidateResult::Rejected {
            error: Some(error), ..
        } => error,
        other => panic!("not a rejection with a sentence: {other:?}"),
    }
}

#[test]
fn polls_hand_out_lines_in_order_and_a_second_process_skips_done_ones() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tasks.jsonl"), TASKS).unwrap();
    let first = item(&[("title", "Fix the login bug"), ("issue", "12")]);
    let second = item(&[("title", "Write docs"), ("issue", "13")]);
    let third = item(&[("title", "Add tests"), ("issue", "14")]);

    let (mut client, stderr) = start(dir.path());
    assert_eq!(
        client.describe().unwrap().triggers[0].trigger_type,
        TRIGGER_TYPE
    );
    assert_eq!(poll(&mut client, &queue_args()), Ok(Some(first.clone())));
    assert_eq!(poll(&mut client, &queue_args()), Ok(Some(second.clone())));
    client.on_started(TRIGGER_TYPE, &first).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("done.jsonl")).unwrap(),
        "",
        "onStarted records nothing (the done file is created by the first poll)"
    );
    client.on_finished(TRIGGER_TYPE, &first).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("done.jsonl")).unwrap(),
        "{\"title\":\"Fix the login bug\",\"issue\":\"12\"}\n"
    );
    let log = shutdown(client, &stderr);
    assert_eq!(log, "", "nothing to warn about");

    // Line 2 was handed out but never finished: a new process hands it out again.
    let (mut client, stderr) = start(dir.path());
    assert_eq!(poll(&mut client, &queue_args()), Ok(Some(second.clone())));
    assert_eq!(poll(&mut client, &queue_args()), Ok(Some(third.clone())));
    assert_eq!(poll(&mut client, &queue_args()), Ok(None));
    client.on_finished(TRIGGER_TYPE, &third).unwrap();
    client.on_finished(TRIGGER_TYPE, &second).unwrap();
    shutdown(client, &stderr);
    assert_eq!(
        fs::read_to_string(dir.path().join("done.jsonl")).unwrap(),
        concat!(
            "{\"title\":\"Fix the login bug\",\"issue\":\"12\"}\n",
            "{\"title\":\"Add tests\",\"issue\":\"14\"}\n",
            "{\"title\":\"Write docs\",\"issue\":\"13\"}\n",
        )
    );

    let (mut client, stderr) = start(dir.path());
    assert_eq!(poll(&mut client, &queue_args()), Ok(None));
    shutdown(client, &stderr);
}

#[test]
fn done_path_defaults_to_the_queue_path_with_done_appended() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tasks.jsonl"),
        "{\"b\":\"2\",\"a\":\"1\"}\n",
    )
    .unwrap();
    let (mut client, stderr) = start(dir.path());
    let only = item(&[("b", "2"), ("a", "1")]);
    let args = arguments(json!({"path": "tasks.jsonl"}));
    assert_eq!(poll(&mut client, &args), Ok(Some(only.clone())));
    assert_eq!(poll(&mut client, &args), Ok(None));
    client.on_finished(TRIGGER_TYPE, &only).unwrap();
    shutdown(client, &stderr);
    assert_eq!(
        fs::read_to_string(dir.path().join("tasks.jsonl.done")).unwrap(),
        "{\"b\":\"2\",\"a\":\"1\"}\n"
    );
}

#[test]
fn a_bad_line_is_reported_once_skipped_and_remembered_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tasks.jsonl"),
        "{\"title\":\"ok\"}\n\n{\"title\":\"x\",\"priority\":5}\n{\"title\":\"next\"}\n",
    )
    .unwrap();
    let report = "local-queue: warning: `tasks.jsonl` line 3: member \"priority\" must be a string, \
                  found 5 (item values are strings); the line is skipped (recorded in \
                  `done.jsonl.rejected`, so it is not reported again)\n\
                  local-queue: warning: this poll rejected 1 line(s) of `tasks.jsonl` (1 in all \
                  recorded in `done.jsonl.rejected`)\n";
    let (mut client, stderr) = start(dir.path());
    assert_eq!(
        poll(&mut client, &queue_args()),
        Ok(Some(item(&[("title", "ok")])))
    );
    assert_eq!(
        poll(&mut client, &queue_args()),
        Ok(Some(item(&[("title", "next")])))
    );
    assert_eq!(poll(&mut client, &queue_args()), Ok(None));
    assert_eq!(poll(&mut client, &queue_args()), Ok(None));

    // A queue file not made yet: nothing to hand out, said once (issue 37: it was an
    // internal error, though `trigger/validate` accepts such a file).
    let missing = arguments(json!({"path": "missing.jsonl"}));
    assert_eq!(poll(&mut client, &missing), Ok(None));
    assert_eq!(poll(&mut client, &missing), Ok(None));
    let said = "local-queue: warning: the queue file `missing.jsonl` does not exist (yet): \
                nothing to hand out until it is made\n";
    assert_eq!(
        shutdown(client, &stderr),
        format!("{report}{said}"),
        "reported once"
    );

    // Nothing was finished: a second run hands both items out again, and says nothing
    // about the line it was told about before.
    let (mut client, stderr) = start(dir.path());
    assert_eq!(
        poll(&mut client, &queue_args()),
        Ok(Some(item(&[("title", "ok")])))
    );
    assert_eq!(
        poll(&mut client, &queue_args()),
        Ok(Some(item(&[("title", "next")])))
    );
    assert_eq!(poll(&mut client, &queue_args()), Ok(None));
    assert_eq!(shutdown(client, &stderr), "");
    let rejected = fs::read_to_string(dir.path().join("done.jsonl.rejected")).unwrap();
    assert_eq!(rejected.lines().count(), 1, "{rejected}");
}

/// Two extension processes (two configs, or two hosts) on one queue, taking turns:
/// both validate it, and neither hands out what the other holds.
#[test]
fn two_processes_on_one_queue_hand_out_each_item_once() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tasks.jsonl"), TASKS).unwrap();
    let (mut first, first_log) = start(dir.path());
    let (mut second, second_log) = start(dir.path());
    for client in [&mut first, &mut second] {
        assert!(matches!(
            validate(client, &queue_args()),
            ValidateResult::Accepted { .. }
        ));
    }
    let [one, two, three] = task_items();
    assert_eq!(poll(&mut first, &queue_args()), Ok(Some(one.clone())));
    assert_eq!(poll(&mut second, &queue_args()), Ok(Some(two.clone())));
    assert_eq!(poll(&mut first, &queue_args()), Ok(Some(three.clone())));
    assert_eq!(poll(&mut second, &queue_args()), Ok(None));
    assert_eq!(poll(&mut first, &queue_args()), Ok(None));
    // Each finishes what the other handed out.
    second.on_finished(TRIGGER_TYPE, &one).unwrap();
    first.on_finished(TRIGGER_TYPE, &two).unwrap();
    second.on_finished(TRIGGER_TYPE, &three).unwrap();
    assert_eq!(shutdown(first, &first_log), "");
    assert_eq!(shutdown(second, &second_log), "");
    assert_eq!(
        fs::read_to_string(dir.path().join("done.jsonl")).unwrap(),
        [&one, &two, &three].map(|item| line(item)).concat()
    );
}

/// The three items of [`TASKS`], in order.
fn task_items() -> [Vec<Pair>; 3] {
    [
        item(&[("title", "Fix the login bug"), ("issue", "12")]),
        item(&[("title", "Write docs"), ("issue", "13")]),
        item(&[("title", "Add tests"), ("issue", "14")]),
    ]
}

/// An item's line in a done file.
fn line(pairs: &[Pair]) -> String {
    let members: Vec<String> = pairs
        .iter()
        .map(|pair| format!("{}:{}", json!(pair.key), json!(pair.value)))
        .collect();
    format!("{{{}}}\n", members.join(","))
}

/// One phase in a process of its own, as the reference host runs each: started in
/// `dir`, initialized, `phase`, shut down (exit 0); what it returned, and its stderr.
fn logged_in_fresh_process<T>(dir: &Path, phase: impl FnOnce(&mut Client) -> T) -> (T, String) {
    let (mut client, stderr) = start(dir);
    let result = phase(&mut client);
    (result, shutdown(client, &stderr))
}

/// [`logged_in_fresh_process`], with nothing on stderr.
fn in_fresh_process<T>(dir: &Path, phase: impl FnOnce(&mut Client) -> T) -> T {
    let (result, log) = logged_in_fresh_process(dir, phase);
    assert_eq!(log, "", "nothing to warn about");
    result
}

/// A queue in `dir`'s working directory: `path`, its done file the default one.
fn named_queue(path: &str) -> Arguments {
    arguments(json!({ "path": path }))
}

/// The lines of a file, sorted (appends from processes at once come in any order).
fn sorted_lines(path: &Path) -> Vec<String> {
    let mut lines: Vec<String> = fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// What the reference host does: every call in a process of its own that never saw
/// the others. A fresh process's `onFinished` records the item, and a fresh poll skips
/// it.
#[test]
fn on_finished_in_a_fresh_process_records_the_item() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tasks.jsonl"), TASKS).unwrap();
    let [one, two, _] = task_items();
    let polled = in_fresh_process(dir.path(), |client| poll(client, &queue_args()));
    assert_eq!(polled, Ok(Some(one.clone())));
    in_fresh_process(dir.path(), |client| {
        client.on_started(TRIGGER_TYPE, &one).unwrap();
    });
    in_fresh_process(dir.path(), |client| {
        client.on_finished(TRIGGER_TYPE, &one).unwrap();
    });
    assert_eq!(
        fs::read_to_string(dir.path().join("done.jsonl")).unwrap(),
        line(&one)
    );
    let polled = in_fresh_process(dir.path(), |client| poll(client, &queue_args()));
    assert_eq!(polled, Ok(Some(two)));
}

/// The transcripts' shape with more going on: validate, poll cycles, `onStarted` and
/// `onFinished` each in processes of their own, two automations of one registration
/// (two queue files), several items in flight at once, and hooks running side by side.
#[test]
fn every_phase_in_its_own_process_for_two_automations_with_items_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, keys: &[&str]| {
        let text: String = keys
            .iter()
            .map(|key| format!("{{\"id\":\"{key}\"}}\n"))
            .collect();
        fs::write(dir.path().join(name), text).unwrap();
    };
    write("first.jsonl", &["a1", "a2", "a3"]);
    write("second.jsonl", &["b1", "b2"]);
    let (first, second) = (named_queue("first.jsonl"), named_queue("second.jsonl"));
    let id = |key: &str| item(&[("id", key)]);

    in_fresh_process(dir.path(), |client| {
        for queue in [&first, &second] {
            assert!(matches!(
                validate(client, queue),
                ValidateResult::Accepted { .. }
            ));
        }
    });
    assert!(
        !dir.path().join("first.jsonl.done").exists(),
        "validate writes nothing"
    );

    // A poll cycle serving both automations; it stays up while its items run.
    let (mut cycle, cycle_log) = start(dir.path());
    assert_eq!(poll(&mut cycle, &first), Ok(Some(id("a1"))));
    assert_eq!(poll(&mut cycle, &first), Ok(Some(id("a2"))));
    assert_eq!(poll(&mut cycle, &second), Ok(Some(id("b1"))));
    let hooks = |method: &'static str, keys: &[&str]| {
        let dir = dir.path().to_owned();
        let handles: Vec<_> = keys
            .iter()
            .map(|key| {
                let (dir, values) = (dir.clone(), id(key));
                thread::spawn(move || {
                    in_fresh_process(&dir, |client| match method {
                        "onStarted" => client.on_started(TRIGGER_TYPE, &values),
                        _ => client.on_finished(TRIGGER_TYPE, &values),
                    })
                })
            })
            .collect();
        for handle in handles {
            assert_eq!(handle.join().unwrap(), Ok(()), "{method}");
        }
    };
    hooks("onStarted", &["a1", "a2", "b1"]);
    // Another poll cycle meanwhile (a second agent slot, or a second host) gets what
    // is left, not what the first cycle holds.
    let (mut other, other_log) = start(dir.path());
    assert_eq!(poll(&mut other, &first), Ok(Some(id("a3"))));
    assert_eq!(poll(&mut other, &first), Ok(None));
    assert_eq!(poll(&mut other, &second), Ok(Some(id("b2"))));
    assert_eq!(poll(&mut other, &second), Ok(None));
    hooks("onFinished", &["a2", "b1", "a1"]);
    assert_eq!(shutdown(cycle, &cycle_log), "");
    // This one ends without its items finished: they come back.
    assert_eq!(shutdown(other, &other_log), "");

    let polled = in_fresh_process(dir.path(), |client| {
        [
            poll(client, &first),
            poll(client, &first),
            poll(client, &second),
            poll(client, &second),
        ]
    });
    assert_eq!(
        polled,
        [Ok(Some(id("a3"))), Ok(None), Ok(Some(id("b2"))), Ok(None)]
    );
    hooks("onFinished", &["b2", "a3"]);
    let polled = in_fresh_process(dir.path(), |client| {
        [poll(client, &first), poll(client, &second)]
    });
    assert_eq!(polled, [Ok(None), Ok(None)]);
    assert_eq!(
        sorted_lines(&dir.path().join("first.jsonl.done")),
        ["{\"id\":\"a1\"}", "{\"id\":\"a2\"}", "{\"id\":\"a3\"}"]
    );
    assert_eq!(
        sorted_lines(&dir.path().join("second.jsonl.done")),
        ["{\"id\":\"b1\"}", "{\"id\":\"b2\"}"]
    );
}

/// Four processes polling one queue as fast as they can, at the same moment, each
/// finishing what it gets: every item is handed out exactly once.
#[test]
fn processes_polling_one_queue_at_once_never_hand_out_the_same_item() {
    const PROCESSES: usize = 4;
    const ITEMS: usize = 60;
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..ITEMS).map(|n| format!("{{\"n\":\"{n}\"}}\n")).collect();
    fs::write(dir.path().join("tasks.jsonl"), text).unwrap();
    let ready = Arc::new(std::sync::Barrier::new(PROCESSES));
    let handles: Vec<_> = (0..PROCESSES)
        .map(|_| {
            let (dir, ready) = (dir.path().to_owned(), Arc::clone(&ready));
            thread::spawn(move || {
                let (mut client, stderr) = start(&dir);
                ready.wait();
                let mut got = Vec::new();
                while let Some(pairs) = poll(&mut client, &queue_args()).unwrap() {
                    if got.len() % 2 == 0 {
                        client.on_finished(TRIGGER_TYPE, &pairs).unwrap();
                    }
                    got.push(pairs);
                }
                // Alive until all have polled to the end: what it holds stays held.
                ready.wait();
                for pairs in got.iter().skip(1).step_by(2) {
                    client.on_finished(TRIGGER_TYPE, pairs).unwrap();
                }
                assert_eq!(shutdown(client, &stderr), "");
                got
            })
        })
        .collect();
    let per_process: Vec<Vec<Vec<Pair>>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let mut all: Vec<String> = per_process.iter().flatten().map(|p| line(p)).collect();
    assert_eq!(all.len(), ITEMS, "{per_process:?}");
    all.sort();
    all.dedup();
    assert_eq!(
        all.len(),
        ITEMS,
        "an item handed out twice: {per_process:?}"
    );
    let done: Vec<String> = sorted_lines(&dir.path().join("done.jsonl"))
        .into_iter()
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(done, all);
}

/// A process killed by SIGKILL after its polls cannot say anything: the lock on its
/// claim file goes with it, so its items are handed out again, and its file is
/// cleaned away by the next poll.
#[cfg(unix)]
#[test]
fn a_process_killed_after_a_poll_releases_its_items() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tasks.jsonl"), TASKS).unwrap();
    let [one, two, three] = task_items();
    let (mut killed, _) = start(dir.path());
    assert_eq!(poll(&mut killed, &queue_args()), Ok(Some(one.clone())));
    assert_eq!(poll(&mut killed, &queue_args()), Ok(Some(two.clone())));
    let (mut alive, alive_log) = start(dir.path());
    assert_eq!(poll(&mut alive, &queue_args()), Ok(Some(three.clone())));
    assert_eq!(poll(&mut alive, &queue_args()), Ok(None));
    let claims = dir.path().join(".local-queue/done.jsonl.claims");
    assert_eq!(fs::read_dir(&claims).unwrap().count(), 2);

    let pid = killed.pid().unwrap().to_string();
    let status = Command::new("kill").args(["-KILL", &pid]).status().unwrap();
    assert!(status.success());
    drop(killed); // reaped
    assert_eq!(poll(&mut alive, &queue_args()), Ok(Some(one.clone())));
    assert_eq!(poll(&mut alive, &queue_args()), Ok(Some(two)));
    assert_eq!(poll(&mut alive, &queue_args()), Ok(None));
    assert_eq!(
        fs::read_dir(&claims).unwrap().count(),
        1,
        "the killed one's is gone"
    );
    alive.on_finished(TRIGGER_TYPE, &one).unwrap();
    assert_eq!(shutdown(alive, &alive_log), "");
    assert_eq!(fs::read_dir(&claims).unwrap().count(), 0);
    // A later run gets what the living one did not finish either.
    let polled = in_fresh_process(dir.path(), |client| poll(client, &queue_args()));
    assert_eq!(polled, Ok(Some(task_items()[1].clone())));
}

/// A crash in the middle of an append (here written by hand: the index, a claim file
/// and the done file each end with half a line) costs nothing: the half line is
/// skipped, the next append starts a line of its own.
#[test]
fn half_written_lines_are_tolerated() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tasks.jsonl"), TASKS).unwrap();
    let [one, two, three] = task_items();
    let (mut holder, holder_log) = start(dir.path());
    assert_eq!(poll(&mut holder, &queue_args()), Ok(Some(one.clone())));
    let state = dir.path().join(".local-queue");
    let claim = fs::read_dir(state.join("done.jsonl.claims"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let append = |path: &Path, text: &str| {
        use std::io::Write;
        let mut file = fs::OpenOptions::new().append(true).open(path).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    };
    append(&state.join("index.jsonl"), "{\"task\":\"8b41799c");
    append(&claim, "{\"title\":\"Write");
    append(&dir.path().join("done.jsonl"), "{\"title\":\"Add te");

    let polled = in_fresh_process(dir.path(), |client| {
        let got = poll(client, &queue_args());
        client.on_finished(TRIGGER_TYPE, &three).unwrap();
        got
    });
    assert_eq!(polled, Ok(Some(two.clone())), "the first is still held");
    // Found through the index, which names the done file by its whole path.
    let ((), log) = logged_in_fresh_process(dir.path(), |client| {
        client.on_finished(TRIGGER_TYPE, &one).unwrap();
        client.on_finished(TRIGGER_TYPE, &two).unwrap();
    });
    let done = dir.path().canonicalize().unwrap().join("done.jsonl");
    assert_eq!(
        log,
        format!(
            "local-queue: warning: `{}` line 1 is skipped: the line is not valid JSON: EOF \
             while parsing a string at column 16\n",
            done.display()
        ),
        "the half line, completed by the next append's newline, is a bad line"
    );
    assert_eq!(shutdown(holder, &holder_log), "");
    assert_eq!(
        fs::read_to_string(dir.path().join("done.jsonl")).unwrap(),
        format!(
            "{{\"title\":\"Add te\n{}{}{}",
            line(&three),
            line(&one),
            line(&two)
        )
    );
    let index = fs::read_to_string(state.join("index.jsonl")).unwrap();
    assert_eq!(
        index.lines().nth(1),
        Some("{\"task\":\"8b41799c"),
        "{index}"
    );
    assert_eq!(index.lines().count(), 3, "{index}");
}

/// `preview: true` (a dry run) shows what a run would hand out and writes nothing.
#[test]
fn a_dry_run_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tasks.jsonl"),
        format!("{TASKS}not an item\n"),
    )
    .unwrap();
    let [one, two, three] = task_items();
    let preview = |client: &mut Client| {
        client.poll(&PollParams {
            trigger_type: TRIGGER_TYPE.to_owned(),
            automation: table(&queue_args()),
            limit: Some(10),
            preview: true,
        })
    };
    let (mut client, stderr) = start(dir.path());
    assert_eq!(preview(&mut client), Ok(Some(one.clone())));
    assert_eq!(preview(&mut client), Ok(Some(two)));
    assert_eq!(preview(&mut client), Ok(Some(three)));
    assert_eq!(preview(&mut client), Ok(None));
    let log = shutdown(client, &stderr);
    assert_eq!(
        log,
        "local-queue: warning: `tasks.jsonl` line 5: the line is not valid JSON: expected \
         ident at column 2; the line is skipped (not recorded: a dry run records nothing)\n\
         local-queue: warning: this poll rejected 1 line(s) of `tasks.jsonl` (not recorded: \
         a dry run records nothing)\n"
    );
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["tasks.jsonl"]);
    let polled = in_fresh_process(dir.path(), |client| poll(client, &queue_args()));
    assert_eq!(polled, Ok(Some(one)));
}

/// A 50 MB line (over the 16 MiB limit) is rejected without being read into memory:
/// the extension's peak resident size stays far below the line's size.
#[cfg(target_os = "linux")]
#[test]
fn a_50_mb_line_is_rejected_without_being_kept() {
    let dir = tempfile::tempdir().unwrap();
    {
        use std::io::Write;
        let file = fs::File::create(dir.path().join("tasks.jsonl")).unwrap();
        let mut file = std::io::BufWriter::new(file);
        file.write_all(b"{\"title\":\"").unwrap();
        let chunk = vec![b'x'; 1024 * 1024];
        for _ in 0..50 {
            file.write_all(&chunk).unwrap();
        }
        file.write_all(b"\"}\n{\"title\":\"after\"}\n").unwrap();
    }
    let (mut client, stderr) = start(dir.path());
    assert_eq!(
        poll(&mut client, &queue_args()),
        Ok(Some(item(&[("title", "after")])))
    );
    let status = fs::read_to_string(format!("/proc/{}/status", client.pid().unwrap())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    assert!(
        peak_kib < 30 * 1024,
        "peak resident size {peak_kib} KiB for a 50 MiB line"
    );
    let log = shutdown(client, &stderr);
    assert!(
        log.contains(&format!(
            "`tasks.jsonl` line 1: the line is {} bytes long, more than the 16777216 bytes",
            50 * 1024 * 1024 + 12
        )),
        "{log}"
    );
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
    let (mut client, stderr) = start(dir.path());
    let first = item(&[("title", "Fix the login bug"), ("issue", "12")]);
    let third = item(&[("title", "Add tests"), ("issue", "14")]);
    assert_eq!(poll(&mut client, &queue_args()), Ok(Some(first.clone())));
    assert_eq!(poll(&mut client, &queue_args()), Ok(Some(third)));
    assert_eq!(poll(&mut client, &queue_args()), Ok(None));
    // The unterminated last line is taken for someone's interrupted write: our line
    // goes after a newline instead of being glued onto it.
    client.on_finished(TRIGGER_TYPE, &first).unwrap();
    let log = shutdown(client, &stderr);
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

/// Validation and the schema read no file: `LocalQueue` is served in a thread, as the
/// executable serves it (the manifest's name and version), over memory pipes.
#[test]
fn validate_reports_every_problem_with_its_pointer() {
    let (mut client, extension) = memory::duplex(NAME, Options::default());
    let options = ServeOptions::from_manifest(MANIFEST).unwrap();
    let server = thread::spawn(move || {
        let (input, output) = extension.split();
        serve(
            &mut LocalQueue::default(),
            BufReader::new(input),
            output,
            &options,
        )
    });
    initialize(&mut client);

    // A valid queue, in a folder of its own.
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done.jsonl");
    let valid = arguments(json!({"path": "tasks.jsonl", "done_path": done.to_str().unwrap()}));
    // Accepted, the table comes back as it was sent: the core keys kept (the SDK
    // leaves them out of what `LocalQueue` checks) and no default invented
    // (`done_path`'s depends on `path`, so the schema declares none).
    assert_eq!(
        validate(&mut client, &valid),
        ValidateResult::Accepted {
            configuration: Some(table(&valid))
        }
    );
    assert!(!done.exists(), "validate writes nothing");
    // Every problem in one sentence, each at its pointer into the parameters.
    assert_eq!(
        rejected(validate(
            &mut client,
            &arguments(json!({"done_path": 5, "pth": "x"}))
        )),
        "trigger 'jsonl': /path: `path` is required: the JSON Lines file to take items \
         from, relative to the folder of curupira.toml; /done_path: `done_path` must be a \
         string, found 5; /pth: unknown member \"pth\"; the jsonl trigger takes only `path` \
         and `done_path`"
    );
    assert_eq!(
        rejected(validate(&mut client, &arguments(json!({"path": ["a"]})))),
        "trigger 'jsonl': /path: `path` must be a string, found an array"
    );
    // Validate and poll both take `alias/local` and the local name alike.
    assert!(matches!(
        client.validate("local/jsonl", &table(&valid)),
        Ok(ValidateResult::Accepted { .. })
    ));
    // Another trigger type is a verdict too (as the official SDK answers it).
    let other = rejected(client.validate("nope", &table(&valid)).unwrap());
    assert!(
        other.starts_with("unsupported trigger_type 'nope'"),
        "{other}"
    );

    let schema = client.schema(TRIGGER_TYPE).unwrap();
    assert_eq!(schema.prompt_fields, Vec::<String>::new());
    let schema = schema.schema;
    assert_eq!(schema["type"], json!("object"));
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    let properties = schema["properties"].as_object().unwrap();
    let mut names: Vec<&String> = properties.keys().collect();
    names.sort();
    assert_eq!(names, ["done_path", "path"]);
    for property in properties.values() {
        assert_eq!(property["type"], json!("string"));
        assert!(property["description"].as_str().unwrap().len() > 20);
    }

    assert_eq!(
        client.shutdown(),
        Ok(Ending::Exited("closed its end".to_owned()))
    );
    assert_eq!(server.join().unwrap().unwrap(), ServeOutcome::Shutdown);
}

#[test]
fn on_finished_refuses_values_no_poll_handed_out() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, stderr) = start(dir.path());
    let (code, message) = refused(client.on_finished(TRIGGER_TYPE, &item(&[("a", "1")])));
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert!(
        message.starts_with(
            "these values were not handed out by a poll of local-queue in this working \
             directory (no record of them in `.local-queue/index.jsonl`)"
        ),
        "{message}"
    );
    shutdown(client, &stderr);
    assert!(
        fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no file written"
    );
}

/// A host always sends `shutdown` before it closes stdin, so `Client` cannot show this:
/// one `initialize` frame is written by hand, stdin closed, and the whole of stdout
/// read once the process has exited.
#[test]
fn closing_stdin_ends_the_process_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(EXE);
    command
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // Killed and reaped when dropped, should the test fail.
    let mut process = ProcessGuard::spawn(&mut command).unwrap();
    let mut stdin = FrameWriter::new(process.take_stdin().unwrap());
    stdin
        .write_frame(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":2}}"#,
        )
        .unwrap();
    stdin.flush().unwrap();
    drop(stdin);
    let status = process
        .wait_for(DEADLINE)
        .expect("it exits once its stdin is closed");
    assert!(status.success(), "exit status {status}");

    let mut stdout = Vec::new();
    process
        .take_stdout()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let replies: Vec<Value> = FrameReader::new(&stdout[..])
        .map(|body| serde_json::from_slice(&body.unwrap()).unwrap())
        .collect();
    assert_eq!(
        replies,
        [json!({"jsonrpc": "2.0", "id": 1, "result": {
            "protocol_version": 2,
            "server_info": {"name": NAME, "version": env!("CARGO_PKG_VERSION")},
        }})],
        "the reply to `initialize`, then nothing"
    );
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
    assert_eq!(text, MANIFEST);

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
    assert_eq!(manifest.runtime.as_str(), "executable");
    assert!(manifest.trigger_types.contains("jsonl"));
    assert_eq!(manifest.trigger_types.as_slice().len(), 1);
    let Launch::Executable { program, args } = &manifest.launch else {
        panic!("launch is not an executable");
    };
    assert_eq!(program.to_string(), "curupira");
    assert_eq!(args, &["builtin", "local-queue"]);
}
