//! `run --watch` reloading its configuration (issue 39, item 4): a prompt file edited
//! while a task of the old prompt runs, an automation added, the file broken and fixed,
//! an automation removed, a change that needs a restart — each seen in a running host,
//! the task in flight untouched.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use run_support::{Project, spawn};
use serde_json::{Value, json};

/// The agent: its prompt goes to `out/<automation>-<task>`; a prompt naming `slow`
/// waits for the file `release` first.
const AGENT: &str = r#"command = ["sh", "-c", "p=$(cat); case \"$p\" in *slow*) while [ ! -e release ]; do sleep 0.05; done;; esac; mkdir -p out; printf %s \"$p\" > \"out/$CURUPIRA_AUTOMATION-$CURUPIRA_TASK_ID\""]"#;

/// The config: automation `work` on `tasks.jsonl` with its prompt in `work.md`, then
/// `extra` (TOML appended as written).
fn config(extra: &str) -> String {
    format!(
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n[settings.agent]\n{AGENT}\n\
         max_concurrent = 2\n\n[extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.work]\ntrigger = \"jsonl\"\nprompt_file = \"work.md\"\n\
         arguments = {{ path = \"tasks.jsonl\", done_path = \"done.jsonl\" }}\n\
         polling = {{ interval_seconds = 0.2 }}\n\n{extra}"
    )
}

const MORE: &str = "[automations.more]\ntrigger = \"jsonl\"\nprompt = \"More ${issue}.\"\n\
     arguments = { path = \"more.jsonl\", done_path = \"more-done.jsonl\" }\n\
     polling = { interval_seconds = 0.2 }\n";

/// The host's JSON events so far.
fn events(project: &Project) -> Vec<Value> {
    project
        .read("host.out")
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Waits for the `nth` (from 1) event matching `matches`, and returns it.
fn wait_for(project: &Project, what: &str, nth: usize, matches: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        if let Some(event) = events(project).into_iter().filter(&matches).nth(nth - 1) {
            return event;
        }
        assert!(
            Instant::now() < deadline,
            "no {what}; events: {:#?}\nstderr: {}",
            events(project),
            project.read("host.err")
        );
        thread::sleep(Duration::from_millis(50));
    }
}

fn named<'a>(name: &'a str) -> impl Fn(&Value) -> bool + 'a {
    move |event| event["event"] == name
}

fn of_issue<'a>(name: &'a str, issue: &'a str) -> impl Fn(&Value) -> bool + 'a {
    move |event| event["event"] == name && event["values"][0]["value"] == issue
}

fn append(path: &Path, line: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(file, "{line}").unwrap();
}

/// The prompt the agent of `automation` got for the task of `event`.
fn prompt(project: &Project, automation: &str, event: &Value) -> String {
    project.read(&format!(
        "out/{automation}-{}",
        event["task_id"].as_str().unwrap()
    ))
}

#[test]
fn a_watching_host_takes_up_prompt_edits_added_and_removed_automations_and_keeps_a_broken_file_out()
{
    let project = Project::new();
    project.write("work.md", "Old ${issue}.");
    project.write("tasks.jsonl", "{\"issue\":\"slow\"}\n");
    project.write("more.jsonl", "{\"issue\":\"m1\"}\n");
    project.write("curupira.toml", &config(""));
    let mut host = spawn(&project, "host", &["run", "--watch", "--format", "json"]);
    let slow_started = wait_for(
        &project,
        "task.started of slow",
        1,
        of_issue("task.started", "slow"),
    );

    // The prompt file changes while `slow` runs with the old prompt.
    project.write("work.md", "New ${issue}.");
    let reloaded = wait_for(&project, "the prompt's reload", 1, named("config.reloaded"));
    assert_eq!(
        reloaded,
        json!({"event": "config.reloaded", "added": [], "removed": [],
               "changed": [{"automation": "work", "what": ["prompt"]}], "restart_needed": []})
    );

    // An automation is added.
    project.write("curupira.toml", &config(MORE));
    let reloaded = wait_for(
        &project,
        "the addition's reload",
        2,
        named("config.reloaded"),
    );
    assert_eq!(reloaded["added"], json!(["more"]), "{reloaded}");
    let m1 = wait_for(&project, "m1 finished", 1, of_issue("task.finished", "m1"));
    assert_eq!(m1["exit_code"], 0, "{m1}");
    assert_eq!(prompt(&project, "more", &m1), "More m1.");

    // The file is broken: refused, the running configuration kept.
    project.write(
        "curupira.toml",
        &format!("{}\n[automations.work\n", config(MORE)),
    );
    let refused = wait_for(&project, "the refusal", 1, named("config.refused"));
    let diagnostics = refused["diagnostics"].as_array().unwrap();
    assert!(
        !diagnostics.is_empty() && diagnostics[0].as_str().unwrap().contains("curupira.toml:"),
        "{refused}"
    );
    append(&project.path().join("more.jsonl"), "{\"issue\":\"m2\"}");
    wait_for(&project, "m2 finished", 1, of_issue("task.finished", "m2"));

    // Dispatched after the change: the new prompt; the task in flight kept its own.
    append(&project.path().join("tasks.jsonl"), "{\"issue\":\"a\"}");
    project.write("release", "");
    let slow = wait_for(
        &project,
        "slow finished",
        1,
        of_issue("task.finished", "slow"),
    );
    assert_eq!(slow["exit_code"], 0, "{slow}");
    assert_eq!(prompt(&project, "work", &slow), "Old slow.");
    let a = wait_for(&project, "a finished", 1, of_issue("task.finished", "a"));
    assert_eq!(prompt(&project, "work", &a), "New a.");

    // Fixed, without `more`, and with an HTTP address: `more` is removed, the address
    // needs a restart.
    project.write(
        "curupira.toml",
        &config("[settings.http]\nlisten = \"127.0.0.1:0\"\n"),
    );
    let reloaded = wait_for(
        &project,
        "the removal's reload",
        3,
        named("config.reloaded"),
    );
    assert_eq!(
        reloaded,
        json!({"event": "config.reloaded", "added": [], "removed": ["more"], "changed": [],
               "restart_needed": ["the HTTP address (`[settings.http]`)"]})
    );
    append(&project.path().join("more.jsonl"), "{\"issue\":\"m3\"}");
    append(&project.path().join("tasks.jsonl"), "{\"issue\":\"b\"}");
    wait_for(&project, "b finished", 1, of_issue("task.finished", "b"));
    // `work` polled again since; `more` would have too.
    thread::sleep(Duration::from_secs(1));
    let status = std::process::Command::new("kill")
        .args(["-TERM", &host.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = host.wait().unwrap().code();
    assert_eq!(code, Some(143), "{}", project.read("host.err"));

    let all = events(&project);
    assert!(
        !all.iter().any(of_issue("task.started", "m3")),
        "a removed automation dispatched: {all:#?}"
    );
    let slow_starts = all
        .iter()
        .filter(|e| of_issue("task.started", "slow")(e))
        .count();
    assert_eq!(slow_starts, 1, "the task in flight ran once: {all:#?}");
    assert_eq!(slow_started["attempt"], 1);
    assert!(
        !all.iter().any(named("automation.failed")),
        "{all:#?}\n{}",
        project.read("host.err")
    );
}
