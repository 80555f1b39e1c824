//! The lifecycle of extension processes under `curupira run` (`crate::extensions`):
//! preparation in one process, each round in a process of its own that serves its
//! polls and its tasks' hooks and is shut down when the round's last task finished;
//! rounds of automations behind one extension share a process. Real processes: the
//! scripted fake logs its pid with every request.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use run_support::{Project, have_python, settings};
use serde_json::{Value, json};

fn pair(key: &str, value: &str) -> Value {
    json!({"key": key, "value": value})
}

/// The methods each process of `calls` received, by pid, and the pids in the order
/// they first logged.
fn by_process(calls: &[Value]) -> (Vec<i64>, BTreeMap<i64, Vec<String>>) {
    let mut order = Vec::new();
    let mut methods: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for call in calls {
        let pid = call["pid"].as_i64().unwrap();
        if !order.contains(&pid) {
            order.push(pid);
        }
        methods
            .entry(pid)
            .or_default()
            .push(call["method"].as_str().unwrap().to_owned());
    }
    (order, methods)
}

/// Whether process `pid` still exists.
fn alive(pid: i64) -> bool {
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// A continuous run over several rounds: every round polls in a process that has not
/// served a round before, sends its task's hooks to that same process, and shuts it
/// down; no process outlives the run.
#[test]
fn each_round_runs_in_a_fresh_process_that_also_takes_its_hooks() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension(
        "fx",
        json!({"polls": [[pair("n", "1")], null, [pair("n", "2")], null, null, null, null, null]}),
    );
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.fx]\npath = \"extensions/fx\"\n\n[automations.auto]\ntrigger = \"fake\"\n\
             prompt = \"Item ${{n}}\"\npolling = {{ interval_seconds = 0.1 }}\n",
            settings()
        ),
    );
    let child = Command::new(run_support::curupira())
        .args(["run", "--watch", "--format", "json"])
        .current_dir(project.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while by_process(&project.calls("fx")).0.len() < 5 {
        assert!(Instant::now() < deadline, "no fourth round started");
        thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(143));

    let (order, methods) = by_process(&project.calls("fx"));
    // The preparation's process: no poll, no hook.
    assert_eq!(
        methods[&order[0]],
        [
            "initialize",
            "describe",
            "trigger/schema",
            "trigger/validate",
            "shutdown"
        ]
    );
    // Round 1 dispatched item 1, round 2 item 2: each task's hooks went to the
    // process that polled it.
    for (round, pid) in order[1..3].iter().enumerate() {
        assert_eq!(
            methods[pid],
            [
                "initialize",
                "describe",
                "trigger/poll",
                "trigger/onStarted",
                "trigger/onFinished",
                "trigger/poll",
                "shutdown"
            ],
            "round {}",
            round + 1
        );
    }
    // Later rounds found nothing; each in its own process too, shut down in turn.
    for pid in &order[3..] {
        let seen = &methods[pid];
        assert_eq!(&seen[..3], ["initialize", "describe", "trigger/poll"]);
        assert!(
            !seen.iter().any(|m| m.starts_with("trigger/on")),
            "{seen:?}"
        );
    }
    for pid in &order {
        assert!(
            methods[pid].last().is_some_and(|m| m == "shutdown") || *pid == *order.last().unwrap(),
            "process {pid} was not shut down: {:?}",
            methods[pid]
        );
        assert!(!alive(*pid), "process {pid} outlived the run");
    }
    let stdout = String::from_utf8(output.stdout).unwrap();
    let finished = stdout
        .lines()
        .filter(|line| line.contains("\"event\":\"task.finished\""))
        .count();
    assert_eq!(finished, 2, "{stdout}");
}

/// Two automations behind one extension: their rounds share one process (as the
/// reference host's poll cycle does), and the preparation has its own.
#[test]
fn rounds_of_two_automations_on_one_extension_share_a_process() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension(
        "fx",
        json!({"per_process": true, "polls": [[pair("n", "1")], null]}),
    );
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.fx]\npath = \"extensions/fx\"\n\n\
             [automations.first]\ntrigger = \"fake\"\nprompt = \"first ${{n}}\"\n\n\
             [automations.second]\ntrigger = \"fake\"\nprompt = \"second ${{n}}\"\n",
            settings()
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let (order, methods) = by_process(&project.calls("fx"));
    assert_eq!(order.len(), 2, "{methods:?}");
    assert_eq!(
        methods[&order[0]]
            .iter()
            .filter(|m| *m == "trigger/validate")
            .count(),
        2
    );
    let round = &methods[&order[1]];
    // The per-process fake hands `n = 1` out once in that process: one automation
    // gets it, the other finds nothing; both polled there.
    assert_eq!(round.iter().filter(|m| *m == "trigger/poll").count(), 3);
    assert_eq!(
        round.iter().filter(|m| *m == "trigger/onFinished").count(),
        1
    );
    assert_eq!(round.last().unwrap(), "shutdown");
    assert_eq!(run.events_named("task.finished").len(), 1);
}

/// The built-in `local-queue` keeps one process for the whole run: over two rounds
/// (one line each), the host's log says it initialized it once.
#[test]
fn the_builtin_local_queue_keeps_one_process_across_rounds() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n{\"n\": \"2\"}\n");
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.local]\nbuiltin = \"local-queue\"\n\n[automations.q]\ntrigger = \"jsonl\"\n\
             prompt = \"${{n}}\"\narguments = {{ path = \"tasks.jsonl\" }}\n\
             polling = {{ batch_size = 1, interval_seconds = 0.05 }}\n",
            settings()
        ),
    );
    let mut child = Command::new(run_support::curupira())
        .args(["run", "--watch", "--format", "json", "-vv"])
        .current_dir(project.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drained all along: `-vv` writes a lot, and a full pipe would stop the host.
    let mut stderr = child.stderr.take().unwrap();
    let drain = thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
        text
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let done = project.path().join("tasks.jsonl.done");
    while std::fs::read_to_string(&done).map_or(0, |text| text.lines().count()) < 2 {
        assert!(Instant::now() < deadline, "the two lines were not done");
        thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(child.wait().unwrap().code(), Some(143));
    let stderr = drain.join().unwrap();
    let started = stderr
        .lines()
        .filter(|line| line.contains("[local] initialized"))
        .count();
    assert_eq!(started, 1, "{stderr}");
}

/// `[extensions.NAME] process = "run"` keeps one process for the whole run, the
/// preparation included.
#[test]
fn process_run_keeps_one_process_for_the_whole_run() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension("fx", json!({"polls": [[pair("n", "1")], null]}));
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.fx]\npath = \"extensions/fx\"\nprocess = \"run\"\n\n\
             [automations.auto]\ntrigger = \"fake\"\nprompt = \"Item ${{n}}\"\n",
            settings()
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let (order, methods) = by_process(&project.calls("fx"));
    assert_eq!(order.len(), 1, "{methods:?}");
    assert_eq!(
        methods[&order[0]],
        [
            "initialize",
            "describe",
            "trigger/schema",
            "trigger/validate",
            "trigger/poll",
            "trigger/onStarted",
            "trigger/onFinished",
            "trigger/poll",
            "shutdown"
        ]
    );
}
