//! Resuming a provider's session: a task whose agent did not end by itself (its host
//! killed with SIGKILL, a timeout) goes on with the same session, in the same
//! worktree, with the provider's resume arguments and the continue prompt; `tasks
//! retry --fresh`, `resume = false` and a worktree the cleanup policy removed start it
//! over. The agent is a stand-in `claude` on `PATH` that announces a session and hangs
//! while the file `hang` exists (unless it is resuming).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use curupira_test_support::process::{Reaper, alive, wait_until};
use run_support::{Project, curupira, run_in_with_path};
use serde_json::Value;

const CONTINUE: &str = "Continue the previous coding task for this work item. Use the \
repository state and prior session context. If the session holds no earlier work, start the \
task below.\n\nTask:\n";

/// A worktree-mode project with one queued item and a stand-in `claude`.
fn project(agent: &str) -> Project {
    let project = Project::repository();
    project.write("README", "x\n");
    project.git(&["add", "README"]);
    project.git(&["commit", "-qm", "init"]);
    project.write(".gitignore", "*\n");
    let dir = project.path().display().to_string();
    project.write(
        "bin/claude",
        &format!(
            "#!/usr/bin/env python3\n\
             import json, os, sys, time\n\
             if sys.argv[1:] == ['--version']:\n    print('2.0.14 (Claude Code)'); sys.exit(0)\n\
             root = {dir:?}\n\
             calls = root + '/calls.jsonl'\n\
             n = sum(1 for _ in open(calls)) + 1 if os.path.exists(calls) else 1\n\
             argv = sys.argv[1:]\n\
             resumed = '--resume' in argv\n\
             sid = argv[argv.index('--resume') + 1] if resumed else 'sess-%d' % n\n\
             with open(calls, 'a') as f:\n    f.write(json.dumps({{'argv': argv, 'cwd': os.getcwd(), 'pid': os.getpid()}}) + '\\n')\n\
             print(json.dumps({{'type': 'system', 'subtype': 'init', 'session_id': sid}}), flush=True)\n\
             if not resumed and os.path.exists(root + '/hang'):\n    time.sleep(3600)\n\
             print(json.dumps({{'type': 'result', 'result': 'done', 'session_id': sid}}), flush=True)\n"
        ),
    );
    std::fs::set_permissions(
        project.path().join("bin/claude"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    project.write(
        "curupira.toml",
        &format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
             [settings.agent]\nprovider = \"claude\"\nkill_grace_seconds = 1\n{agent}\n\n\
             [settings.workspace]\nmode = \"worktree\"\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.fix]\ntrigger = \"jsonl\"\nprompt = \"Fix issue ${{n}}\"\n\
             arguments = {{ path = \"tasks.jsonl\" }}\n"
        ),
    );
    project.write("tasks.jsonl", "{\"n\": \"7\"}\n");
    project
}

fn calls(project: &Project) -> Vec<Value> {
    if !project.exists("calls.jsonl") {
        return Vec::new();
    }
    project
        .read("calls.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn run(project: &Project, args: &[&str]) -> run_support::Run {
    run_in_with_path(project.path(), &project.path().join("bin"), args)
}

/// The host, killed if the test fails before it ended (its watchdog then stops the
/// agent).
fn spawn_host(project: &Project) -> Reaper {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![project.path().join("bin")];
    paths.extend(std::env::split_paths(&path));
    Command::new(curupira())
        .args(["run", "--once"])
        .current_dir(project.path())
        .env_remove("RUST_LOG")
        .env("PATH", std::env::join_paths(paths).unwrap())
        .stdin(Stdio::null())
        .stdout(File::create(project.path().join("first.out")).unwrap())
        .stderr(File::create(project.path().join("first.err")).unwrap())
        .spawn()
        .map(Reaper::new)
        .unwrap()
}

/// The ledger's history of the one task.
fn history(project: &Project) -> Vec<Value> {
    let list = run(project, &["tasks", "list", "--format", "json"]);
    let Some(line) = list.stdout.lines().next() else {
        return Vec::new();
    };
    let row: Value = serde_json::from_str(line).unwrap();
    let show = run(
        project,
        &[
            "tasks",
            "show",
            row["task_id"].as_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let shown: Value = serde_json::from_str(&show.stdout).unwrap();
    shown["history"].as_array().cloned().unwrap_or_default()
}

fn task_id(project: &Project) -> String {
    let list = run(project, &["tasks", "list", "--format", "json"]);
    let row: Value = serde_json::from_str(list.stdout.lines().next().unwrap()).unwrap();
    row["task_id"].as_str().unwrap().to_owned()
}

/// A run whose first attempt hangs until `limit` stops it, then retries once at once
/// (the retry resumes, so it does not hang): the project, the run, the two calls.
fn retried_once(limit: &str) -> (Project, run_support::Run, Vec<Value>) {
    let project = project(&format!("{limit}\nretries = 1\nretry_backoff_seconds = 0"));
    project.write("hang", "");
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let made = calls(&project);
    assert_eq!(made.len(), 2, "{made:?}");
    (project, done, made)
}

fn fresh_argv(prompt: &str) -> Value {
    serde_json::json!([
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--",
        prompt
    ])
}

fn resumed_argv(session: &str, prompt: &str) -> Value {
    serde_json::json!([
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--resume",
        session,
        "--",
        format!("{CONTINUE}{prompt}")
    ])
}

#[test]
fn a_host_killed_mid_session_resumes_it_in_the_same_worktree() {
    let project = project("");
    project.write("hang", "");
    let host = spawn_host(&project);
    // Killed once the session is in the ledger (written as soon as it is announced).
    assert!(
        wait_until(Duration::from_secs(30), || {
            history(&project)
                .first()
                .is_some_and(|a| a["session_id"] == "sess-1")
        }),
        "{}",
        project.read("first.err")
    );
    let first = calls(&project);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["argv"], fresh_argv("Fix issue 7"));
    let agent = u32::try_from(first[0]["pid"].as_u64().unwrap()).unwrap();
    Command::new("kill")
        .args(["-KILL", &host.id().to_string()])
        .status()
        .unwrap();
    let _ = host.finish(Duration::from_secs(5));
    assert!(
        wait_until(Duration::from_secs(10), || !alive(agent)),
        "the watchdog stops the agent"
    );

    let again = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(
        again.stderr.contains("resumes claude session sess-1"),
        "{}",
        again.stderr
    );
    let resumed = again.events_named("task.resumed");
    assert_eq!(resumed.len(), 1, "{}", again.stdout);
    assert_eq!(
        (
            resumed[0]["provider"].as_str(),
            resumed[0]["session_id"].as_str(),
            resumed[0]["attempt"].as_u64()
        ),
        (Some("claude"), Some("sess-1"), Some(2))
    );
    let made = calls(&project);
    assert_eq!(made.len(), 2, "{made:?}");
    assert_eq!(made[1]["argv"], resumed_argv("sess-1", "Fix issue 7"));
    assert_eq!(made[1]["cwd"], made[0]["cwd"], "the same worktree");
    assert!(
        made[0]["cwd"]
            .as_str()
            .unwrap()
            .contains("/.curupira/worktrees/fix/"),
        "{made:?}"
    );
    let attempts = history(&project);
    let last = attempts.last().unwrap();
    assert_eq!(last["resumed"], true, "{attempts:?}");
    assert_eq!(last["session_id"], "sess-1");
    assert_eq!(last["outcome"], "succeeded");
}

#[test]
fn a_timed_out_attempt_is_retried_in_its_session() {
    // In one run: attempt 1 times out, attempt 2 (the retry) resumes its session.
    let (project, done, made) = retried_once("timeout_seconds = 1");
    assert_eq!(made[0]["argv"], fresh_argv("Fix issue 7"));
    assert_eq!(made[1]["argv"], resumed_argv("sess-1", "Fix issue 7"));
    assert_eq!(made[1]["cwd"], made[0]["cwd"]);
    // In order: the retry is announced, then its resume, then its end.
    let names: Vec<String> = done
        .event_names()
        .into_iter()
        .filter(|n| n.starts_with("task."))
        .collect();
    assert_eq!(
        names,
        [
            "task.started",
            "task.retrying",
            "task.started",
            "task.resumed",
            "task.finished"
        ],
        "{}",
        done.stdout
    );
    let attempts = history(&project);
    assert_eq!(
        attempts
            .iter()
            .map(|a| (a["reason"].clone(), a["resumed"].clone()))
            .collect::<Vec<_>>(),
        [
            (Value::from("timeout"), Value::from(false)),
            (Value::from("exit"), Value::from(true))
        ]
    );
}

#[test]
fn tasks_retry_resumes_a_timed_out_session_unless_fresh() {
    let project = project("timeout_seconds = 1");
    project.write("hang", "");
    let first = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(first.code, Some(1), "{}", first.stderr);
    let id = task_id(&project);

    // --fresh: a new session (the stand-in names it sess-2), which times out too.
    let asked = run(&project, &["tasks", "retry", &id, "--fresh"]);
    assert_eq!(asked.code, Some(0), "{asked:?}");
    let second = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(second.code, Some(1), "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("starts its claude session over (tasks retry --fresh)"),
        "{}",
        second.stderr
    );
    let made = calls(&project);
    assert_eq!(made.len(), 2, "{made:?}");
    assert_eq!(made[1]["argv"], fresh_argv("Fix issue 7"));

    // A plain retry goes on with the last session, sess-2.
    std::fs::remove_file(project.path().join("hang")).unwrap();
    run(&project, &["tasks", "retry", &id]);
    let third = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(third.code, Some(0), "{}", third.stderr);
    let made = calls(&project);
    assert_eq!(made.len(), 3, "{made:?}");
    assert_eq!(made[2]["argv"], resumed_argv("sess-2", "Fix issue 7"));
    assert_eq!(
        made[2]["cwd"], made[0]["cwd"],
        "the worktree a failed task keeps"
    );
}

#[test]
fn resume_false_and_a_removed_worktree_start_over() {
    let project =
        project("timeout_seconds = 1\nretries = 1\nretry_backoff_seconds = 0\nresume = false");
    project.write("hang", "");
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(done.code, Some(1), "{}", done.stderr);
    let made = calls(&project);
    assert_eq!(made.len(), 2, "{made:?}");
    assert_eq!(made[1]["argv"], fresh_argv("Fix issue 7"), "resume = false");

    // cleanup = "always" removed the failed task's worktree: the retry starts over in a
    // new one, and says so.
    let project = project_with_cleanup();
    project.write("hang", "");
    let first = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(first.code, Some(1), "{}", first.stderr);
    let id = task_id(&project);
    std::fs::remove_file(project.path().join("hang")).unwrap();
    run(&project, &["tasks", "retry", &id]);
    let again = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("was removed (its cleanup policy), so its session sess-1 is not resumed"),
        "{}",
        again.stderr
    );
    assert!(again.events_named("task.resumed").is_empty());
    assert_eq!(calls(&project)[1]["argv"], fresh_argv("Fix issue 7"));
}

fn project_with_cleanup() -> Project {
    let project = project("timeout_seconds = 1");
    let text = project.read("curupira.toml").replace(
        "mode = \"worktree\"",
        "mode = \"worktree\"\ncleanup = \"always\"",
    );
    project.write("curupira.toml", &text);
    project
}

/// Two stop signals stop the running agent (`interrupted`): the task is not finished,
/// and the next run resumes its session.
#[test]
fn a_session_stopped_by_the_hosts_shutdown_is_resumed_by_the_next_run() {
    let project = project("");
    project.write("hang", "");
    let host = spawn_host(&project);
    assert!(wait_until(Duration::from_secs(30), || {
        history(&project)
            .first()
            .is_some_and(|a| a["session_id"] == "sess-1")
    }));
    for _ in 0..2 {
        Command::new("kill")
            .args(["-INT", &host.id().to_string()])
            .status()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = host.finish(Duration::from_secs(10));
    assert_eq!(
        history(&project)[0]["reason"],
        "interrupted",
        "{}",
        project.read("first.err")
    );

    let again = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    let made = calls(&project);
    assert_eq!(made.len(), 2, "{made:?}");
    assert_eq!(made[1]["argv"], resumed_argv("sess-1", "Fix issue 7"));
    assert_eq!(made[1]["cwd"], made[0]["cwd"]);
}

/// `continue_prompt` replaces the reference host's words; the task's prompt follows.
#[test]
fn the_continue_prompt_is_configurable() {
    let project = project(
        "timeout_seconds = 1\nretries = 1\nretry_backoff_seconds = 0\ncontinue_prompt = \"Go on where you stopped.\"",
    );
    project.write("hang", "");
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let made = calls(&project);
    assert_eq!(
        made[1]["argv"],
        serde_json::json!([
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--resume",
            "sess-1",
            "--",
            "Go on where you stopped.\n\nTask:\nFix issue 7"
        ])
    );
}

/// A stall (no output for `stall_seconds`) is an unfinished session too: the retry
/// resumes it.
#[test]
fn a_stalled_attempt_is_retried_in_its_session() {
    let (project, _, made) = retried_once("stall_seconds = 1");
    assert_eq!(made[1]["argv"], resumed_argv("sess-1", "Fix issue 7"));
    let reasons: Vec<Value> = history(&project)
        .iter()
        .map(|a| a["reason"].clone())
        .collect();
    assert_eq!(reasons, [Value::from("stalled"), Value::from("exit")]);
}
