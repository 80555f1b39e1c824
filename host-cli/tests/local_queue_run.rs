//! The built-in `local-queue` under a real `curupira run` (issue 12, items 3 and 5): a
//! queue line still being written, a malformed line between good ones, and two configs
//! on one queue.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use run_support::{Project, curupira};
use serde_json::Value;

/// A config whose one automation takes items from `path`, recorded in `done_path`,
/// after `settings` (the usual test settings when `None`).
fn queue_config(path: &str, done_path: &str, settings: Option<&str>) -> String {
    format!(
        "{}[extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.work]\ntrigger = \"jsonl\"\nprompt = \"Do ${{issue}}.\"\n\
         arguments = {{ path = {path:?}, done_path = {done_path:?} }}\n\
         polling = {{ interval_seconds = 0.2 }}\n",
        settings.map_or_else(run_support::settings, str::to_owned)
    )
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        thread::sleep(Duration::from_millis(20));
    }
}

fn start_run(dir: &Path, once: bool) -> Child {
    let mut args = vec!["run", "--format", "json"];
    args.push(if once { "--once" } else { "--watch" });
    Command::new(curupira())
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn events(stdout: &[u8], name: &str) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["event"] == name)
        .collect()
}

/// Issue 12: `{"issue":` then, a second later, `"3"}\n` used to stop a continuous
/// host for good.
#[test]
fn a_partial_last_line_completed_a_second_later_is_dispatched() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"issue\":\"1\"}\n{\"issue\":");
    project.write(
        "curupira.toml",
        &queue_config("tasks.jsonl", "done.jsonl", None),
    );
    let done = project.path().join("done.jsonl");
    let child = start_run(project.path(), false);
    wait_until("the first item is done", || lines(&done) == 1);
    thread::sleep(Duration::from_secs(1));
    let mut queue = std::fs::OpenOptions::new()
        .append(true)
        .open(project.path().join("tasks.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut queue, b"\"3\"}\n").unwrap();
    wait_until("the completed line is done", || lines(&done) == 2);
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(143), "{stderr}");
    assert!(
        events(&output.stdout, "automation.failed").is_empty(),
        "{stderr}"
    );
    let finished: Vec<String> = events(&output.stdout, "task.finished")
        .iter()
        .map(|event| event["values"][0]["value"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(finished, ["1", "3"]);
    assert_eq!(
        project.read("done.jsonl"),
        "{\"issue\":\"1\"}\n{\"issue\":\"3\"}\n"
    );
}

#[test]
fn a_malformed_line_between_two_good_ones_is_skipped_and_reported_once_across_runs() {
    let project = Project::new();
    project.write(
        "tasks.jsonl",
        "{\"issue\":\"1\"}\n{\"issue\": 2}\n{\"issue\":\"3\"}\n",
    );
    project.write(
        "curupira.toml",
        &queue_config("tasks.jsonl", "done.jsonl", None),
    );
    let report = "`tasks.jsonl` line 2: member \"issue\" must be a string, found 2";
    let first = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    let finished: Vec<String> = first
        .events_named("task.finished")
        .iter()
        .map(|event| event["values"][0]["value"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(finished, ["1", "3"], "{first:?}");
    assert_eq!(first.stderr.matches(report).count(), 1, "{}", first.stderr);
    assert!(
        first.stderr.contains("[local]"),
        "logged under the extension's name"
    );

    // A second run (with a new item behind the bad line) does not report it again.
    project.write(
        "tasks.jsonl",
        "{\"issue\":\"1\"}\n{\"issue\": 2}\n{\"issue\":\"3\"}\n{\"issue\":\"4\"}\n",
    );
    let second = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(second.code, Some(0), "{second:?}");
    let finished = second.events_named("task.finished");
    assert_eq!(finished.len(), 1, "{second:?}");
    assert_eq!(finished[0]["values"][0]["value"], "4");
    assert!(!second.stderr.contains(report), "{}", second.stderr);
    assert_eq!(
        project.read("done.jsonl.rejected").lines().count(),
        1,
        "one record"
    );
}

/// Issue 24: three bad lines in a row were recorded only the first (the `.rejected`
/// file was opened append-only, then read for its last byte), and reported at `info`,
/// hidden by `-q`.
#[test]
fn three_bad_lines_are_each_recorded_warned_about_under_quiet_and_silent_later() {
    let project = Project::new();
    project.write(
        "tasks.jsonl",
        "bad one\nbad two\nbad three\n{\"issue\":\"ok\"}\n",
    );
    project.write(
        "curupira.toml",
        &queue_config("tasks.jsonl", "done.jsonl", None),
    );
    let first = project.curupira(&["run", "--once", "-q", "--format", "json"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(first.events_named("task.finished").len(), 1, "{first:?}");
    for number in 1..=3 {
        let report = format!("local-queue: warning: `tasks.jsonl` line {number}: ");
        assert_eq!(
            first.stderr.matches(&report).count(),
            1,
            "line {number}, shown under -q: {}",
            first.stderr
        );
    }
    assert!(
        first
            .stderr
            .contains("this poll rejected 3 line(s) of `tasks.jsonl`"),
        "a count: {}",
        first.stderr
    );
    assert!(!first.stderr.contains("cannot record"), "{}", first.stderr);
    let recorded = project.read("done.jsonl.rejected");
    assert_eq!(recorded.lines().count(), 3, "{recorded}");
    // Issue 37: the round summary counts them (local-queue reports the count in its
    // poll result to a host that announced it reads it).
    let rounds = first.events_named("round.finished");
    let rejected: Vec<&Value> = rounds.iter().map(|round| &round["rejected"]).collect();
    assert_eq!(rejected, [&serde_json::json!(3)], "{first:?}");

    let second = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(second.code, Some(0), "{second:?}");
    assert!(
        !second.stderr.contains("local-queue: warning"),
        "later runs stay quiet: {}",
        second.stderr
    );
    assert_eq!(project.read("done.jsonl.rejected"), recorded);
    let rounds = second.events_named("round.finished");
    assert_eq!(
        rounds[0]["rejected"], 0,
        "known lines are not counted again"
    );

    // In the human form, the summary line says so; a dry run counts what it would
    // reject too (it records nothing).
    project.write(
        "tasks.jsonl",
        "bad four\n{\"issue\":\"ok\"}\n{\"issue\":\"ok2\"}\n",
    );
    let dry = project.curupira(&["run", "--once", "--dry-run"]);
    assert_eq!(dry.code, Some(0), "{dry:?}");
    assert!(
        dry.stdout.contains(
            "round finished: 1 polled, 1 rendered, 0 already handled, 0 failed, 1 rejected by the \
             trigger (see its warnings above)"
        ),
        "{dry:?}"
    );
    let human = project.curupira(&["run", "--once"]);
    assert_eq!(human.code, Some(0), "{human:?}");
    assert!(
        human
            .stdout
            .contains("0 failed, 1 rejected by the trigger (see its warnings above)"),
        "{human:?}"
    );
}

/// Two configs whose automations name one queue, run at the same time: both run, each
/// takes what the other's `local-queue` does not hold, and every item runs once.
#[test]
fn two_configs_on_one_queue_hand_out_each_item_once() {
    let shared = tempfile::tempdir().unwrap();
    let queue = shared.path().join("tasks.jsonl");
    let done = shared.path().join("done.jsonl");
    let log = shared.path().join("agent.log");
    std::fs::write(
        &queue,
        "{\"issue\":\"1\"}\n{\"issue\":\"2\"}\n{\"issue\":\"3\"}\n",
    )
    .unwrap();
    let agent_settings = format!(
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n[settings.agent]\n\
         command = [\"sh\", \"-c\", \"cat > /dev/null; echo \\\"$CURUPIRA_TASK_ID\\\" >> \
         '{}'; sleep 1\"]\n\n",
        log.display()
    );
    let config = |project: &Project| {
        let text = queue_config(
            queue.to_str().unwrap(),
            done.to_str().unwrap(),
            Some(&agent_settings),
        );
        project.write("curupira.toml", &text);
    };
    let (one, two) = (Project::new(), Project::new());
    config(&one);
    config(&two);
    let first = start_run(one.path(), true);
    wait_until("the first host runs its first agent", || lines(&log) >= 1);
    let second = two.curupira(&["run", "--once", "--format", "json"]);
    let first = first.wait_with_output().unwrap();
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(second.code, Some(0), "{second:?}");
    let dispatched = |stdout: &[u8]| events(stdout, "task.finished").len();
    let (by_first, by_second) = (
        dispatched(&first.stdout),
        dispatched(second.stdout.as_bytes()),
    );
    assert_eq!(by_first + by_second, 3, "{first:?} {second:?}");
    assert!(by_second >= 1, "the second host took an item: {second:?}");
    assert_eq!(lines(&done), 3);
    let ran = std::fs::read_to_string(&log).unwrap();
    let mut ids: Vec<&str> = ran.lines().collect();
    assert_eq!(ids.len(), 3, "{ran}");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3, "each item once: {ran}");
}
