//! `[settings.agent] provider`: the host runs a stand-in for the provider's CLI,
//! found on `PATH`, with the reference host's command line; reads its JSON stream
//! (session, answer, tokens, cost, diagnostics) into the attempt (`tasks show`); and
//! `validate` checks the program and its version before the first task.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use run_support::{Project, run_in_with_path};
use serde_json::Value;

/// A stand-in CLI at `bin/NAME`: appends `{"argv", "stdin", "cwd"}` to
/// `calls-NAME.jsonl`, prints `stream` (a file's contents), exits with `code`.
fn stand_in(project: &Project, name: &str, stream: &str, code: i32, version: &str) {
    project.write(&format!("stream-{name}.txt"), stream);
    let dir = project.path().display().to_string();
    let script = format!(
        "#!/usr/bin/env python3\n\
         import json, os, sys\n\
         if sys.argv[1:] == ['--version']:\n    print({version:?}); sys.exit(0)\n\
         stdin = sys.stdin.read()\n\
         with open({calls:?}, 'a') as f:\n    f.write(json.dumps({{'argv': sys.argv[1:], 'stdin': stdin, 'cwd': os.getcwd(), 'db': os.environ.get('OPENCODE_DB')}}) + '\\n')\n\
         sys.stdout.write(open({stream:?}).read())\n\
         sys.exit({code})\n",
        calls = format!("{dir}/calls-{name}.jsonl"),
        stream = format!("{dir}/stream-{name}.txt"),
    );
    project.write(&format!("bin/{name}"), &script);
    let path = project.path().join("bin").join(name);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn calls(project: &Project, name: &str) -> Vec<Value> {
    if !project.exists(&format!("calls-{name}.jsonl")) {
        return Vec::new();
    }
    project
        .read(&format!("calls-{name}.jsonl"))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn config(agent: &str) -> String {
    format!(
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
         [settings.agent]\n{agent}\n\n\
         [extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.fix]\ntrigger = \"jsonl\"\nprompt = \"Fix issue ${{n}}\"\n\
         arguments = {{ path = \"tasks.jsonl\" }}\n"
    )
}

fn run(project: &Project, args: &[&str]) -> run_support::Run {
    run_in_with_path(project.path(), &project.path().join("bin"), args)
}

/// The id of the newest task in the ledger.
fn task_id(project: &Project) -> String {
    let list = run(project, &["tasks", "list", "--format", "json"]);
    assert_eq!(list.code, Some(0), "{list:?}");
    let row: Value = serde_json::from_str(list.stdout.lines().next().unwrap()).unwrap();
    row["task_id"].as_str().unwrap().to_owned()
}

fn history(project: &Project) -> Vec<Value> {
    let id = task_id(project);
    let show = run(project, &["tasks", "show", &id, "--format", "json"]);
    assert_eq!(show.code, Some(0), "{show:?}");
    let shown: Value = serde_json::from_str(&show.stdout).unwrap();
    shown["history"].as_array().unwrap().clone()
}

const CLAUDE_STREAM: &str = concat!(
    r#"{"type":"system","subtype":"init","session_id":"sess-42"}"#,
    "\n",
    r#"{"type":"result","subtype":"success","is_error":false,"result":"Done: fixed it.","session_id":"sess-42","total_cost_usd":0.125,"usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":5,"cache_creation_input_tokens":7}}"#,
    "\n"
);

#[test]
fn a_claude_task_runs_the_reference_command_line_and_its_stream_is_kept() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"7\"}\n");
    stand_in(&project, "claude", CLAUDE_STREAM, 0, "2.0.14 (Claude Code)");
    project.write(
        "curupira.toml",
        &config("provider = \"claude\"\nmodel = \"sonnet\"\npermission_mode = \"acceptEdits\""),
    );
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(done.code, Some(0), "{done:?}");
    let made = calls(&project, "claude");
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(
        made[0]["argv"],
        serde_json::json!([
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "sonnet",
            "--permission-mode",
            "acceptEdits",
            "--",
            "Fix issue 7"
        ])
    );
    assert_eq!(
        made[0]["stdin"], "",
        "the prompt is an argument, stdin is closed"
    );
    let attempts = history(&project);
    let attempt = &attempts[0];
    assert_eq!(attempt["provider"], "claude");
    assert_eq!(attempt["session_id"], "sess-42");
    assert_eq!(attempt["resumed"], false);
    assert_eq!(attempt["answer"], "Done: fixed it.");
    assert_eq!(
        attempt["usage"],
        serde_json::json!({"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 5, "cache_write_tokens": 7})
    );
    assert_eq!(attempt["cost_usd"], 0.125);
    assert_eq!(attempt["stream_diagnostics"], serde_json::json!([]));
    // The human form says it too.
    let list = run(&project, &["tasks", "list", "--format", "json"]);
    let row: Value = serde_json::from_str(list.stdout.lines().next().unwrap()).unwrap();
    let show = run(
        &project,
        &["tasks", "show", row["task_id"].as_str().unwrap()],
    );
    assert!(show.stdout.contains("attempt 1 (claude)"), "{show:?}");
    assert!(show.stdout.contains("session  sess-42"), "{show:?}");
    assert!(show.stdout.contains("cost     $0.1250"), "{show:?}");
}

#[test]
fn a_broken_stream_is_a_diagnostic_and_the_exit_status_decides() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n");
    stand_in(
        &project,
        "codex",
        "thinking...\n{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}\n",
        0,
        "codex-cli 0.46.0",
    );
    project.write("curupira.toml", &config("provider = \"codex\""));
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(done.code, Some(0), "{done:?}");
    assert_eq!(
        done.events_named("task.finished")[0]["exit_code"],
        0,
        "{done:?}"
    );
    assert!(done.stderr.contains("the codex stream of task"), "{done:?}");
    assert_eq!(
        calls(&project, "codex")[0]["argv"],
        serde_json::json!(["exec", "--json", "--", "Fix issue 1"])
    );
    let attempt = &history(&project)[0];
    assert_eq!(attempt["session_id"], "t-1");
    let found: Vec<&str> = attempt["stream_diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("line 1 of the codex stream is not JSON")
            && found[0].ends_with("[agent/stream-not-json]"),
        "{found:?}"
    );
    assert_eq!(
        found[1],
        "the codex stream ended without its closing event [agent/stream-no-result]"
    );
}

#[test]
fn opencode_1_gets_its_folder_and_database_and_an_unreadable_version_is_refused() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"3\"}\n");
    stand_in(&project, "opencode", "", 0, "1.4.2");
    project.write(
        "curupira.toml",
        &config("provider = \"opencode\"\neffort = \"high\""),
    );
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(done.code, Some(0), "{done:?}");
    let made = &calls(&project, "opencode")[0];
    let cwd = made["cwd"].as_str().unwrap();
    assert_eq!(
        made["argv"],
        serde_json::json!([
            "run",
            "--format",
            "json",
            "--dir",
            cwd,
            "--variant",
            "high",
            "--",
            "Fix issue 3"
        ])
    );
    assert_eq!(made["db"], format!("{cwd}.opencode.db"));

    // A version the reference host cannot read: refused before the first task.
    stand_in(&project, "opencode", "", 0, "nightly");
    let checked = run(&project, &["validate", "--format", "json"]);
    assert_eq!(checked.code, Some(2), "{checked:?}");
    assert!(
        checked.stdout.contains("config/agent-version"),
        "{checked:?}"
    );
    assert!(
        checked
            .stdout
            .contains("has no x.y.z version). Set profile field api to \\\"v1\\\" or \\\"v2\\\"."),
        "{checked:?}"
    );
    // Unless `api` says which.
    project.write(
        "curupira.toml",
        &config("provider = \"opencode\"\napi = \"v2\""),
    );
    let checked = run(&project, &["validate"]);
    assert_eq!(checked.code, Some(0), "{checked:?}");
}

#[test]
fn validate_checks_the_program_the_options_and_provider_beside_command() {
    let project = Project::new();
    project.write("tasks.jsonl", "");
    std::fs::create_dir_all(project.path().join("bin")).unwrap();
    let check = |agent: &str| {
        project.write("curupira.toml", &config(agent));
        run(&project, &["validate", "--format", "json"])
    };
    let missing = check("provider = \"gemini\"");
    assert_eq!(missing.code, Some(2), "{missing:?}");
    assert!(
        missing.stdout.contains("config/agent-not-runnable"),
        "{missing:?}"
    );
    assert!(
        missing
            .stdout
            .contains("the agent program `gemini` is not found on PATH"),
        "{missing:?}"
    );

    stand_in(&project, "gemini", "", 0, "0.9.0");
    assert_eq!(check("provider = \"gemini\"").code, Some(0));
    let unsupported = check("provider = \"gemini\"\neffort = \"high\"");
    assert_eq!(unsupported.code, Some(2), "{unsupported:?}");
    assert!(
        unsupported
            .stdout
            .contains("Gemini CLI: unsupported profile field \\\"effort\\\""),
        "{unsupported:?}"
    );
    assert!(
        unsupported.stdout.contains("/settings/agent/effort"),
        "{unsupported:?}"
    );

    let both = check("provider = \"gemini\"\ncommand = [\"gemini\"]");
    assert_eq!(both.code, Some(2), "{both:?}");
    assert!(both.stdout.contains("config/agent-conflict"), "{both:?}");

    let typo = check("provider = \"claud\"");
    assert_eq!(typo.code, Some(2), "{typo:?}");
    assert!(typo.stdout.contains("did you mean `claude`?"), "{typo:?}");

    // A version without x.y.z elsewhere is only a warning.
    stand_in(&project, "qwen", "", 0, "dev build");
    let warned = check("provider = \"qwen\"");
    assert_eq!(warned.code, Some(0), "{warned:?}");
    assert!(
        warned.stdout.contains("config/agent-version-unknown"),
        "{warned:?}"
    );
}

#[test]
fn a_prompt_too_long_for_copilot_fails_the_task_clearly() {
    let project = Project::new();
    let long = "x".repeat(140 * 1024);
    project.write("tasks.jsonl", &format!("{{\"n\": \"{long}\"}}\n"));
    stand_in(&project, "copilot", "", 0, "0.0.339");
    // Retries allowed, but a refusal is not retried: it would be refused again.
    project.write(
        "curupira.toml",
        &config("provider = \"copilot\"\nretries = 2"),
    );
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert!(
        done.events_named("task.retrying").is_empty(),
        "{}",
        done.stderr
    );
    assert_eq!(done.code, Some(1), "{}", done.stderr);
    assert!(calls(&project, "copilot").is_empty(), "never started");
    let finished = &done.events_named("task.finished")[0];
    assert_eq!(finished["reason"], "refused", "{}", done.stderr);
    assert!(Path::new(project.path()).exists());
    let attempt = &history(&project)[0];
    assert_eq!(attempt["reason"], "refused", "{attempt}");
    assert!(
        attempt["error"]
            .as_str()
            .unwrap()
            .contains("Copilot takes its prompt only as an argument"),
        "{attempt}"
    );
}

#[test]
fn an_automation_names_its_own_provider_and_the_raw_stream_stays_in_its_log() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"5\"}\n");
    stand_in(&project, "claude", CLAUDE_STREAM, 0, "2.0.14 (Claude Code)");
    stand_in(
        &project,
        "codex",
        "{\"type\":\"thread.started\",\"thread_id\":\"t-9\"}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":4,\"output_tokens\":2}}\n",
        0,
        "codex-cli 0.46.0",
    );
    // [settings.agent] says claude with a model; the automation says codex: its own
    // provider, none of claude's options.
    let text = config("provider = \"claude\"\nmodel = \"sonnet\"").replace(
        "arguments = { path = \"tasks.jsonl\" }\n",
        "arguments = { path = \"tasks.jsonl\" }\nagent = { provider = \"codex\", sandbox = \"workspace-write\" }\n",
    );
    project.write("curupira.toml", &text);
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(done.code, Some(0), "{done:?}");
    assert!(calls(&project, "claude").is_empty());
    assert_eq!(
        calls(&project, "codex")[0]["argv"],
        serde_json::json!([
            "exec",
            "--sandbox",
            "workspace-write",
            "--json",
            "--",
            "Fix issue 5"
        ])
    );
    let attempt = &history(&project)[0];
    assert_eq!(
        (attempt["provider"].as_str(), attempt["session_id"].as_str()),
        (Some("codex"), Some("t-9"))
    );
    // The stream as the CLI printed it, in the attempt's log.
    let log = run(&project, &["tasks", "log", &task_id(&project)]);
    assert_eq!(log.code, Some(0), "{log:?}");
    assert!(
        log.stdout
            .contains("{\"type\":\"thread.started\",\"thread_id\":\"t-9\"}"),
        "{log:?}"
    );
}

/// Claude Code's recorded stream (`agents/streams/claude.jsonl`).
const RECORDED_CLAUDE: &str = include_str!("../../agents/streams/claude.jsonl");

#[test]
fn the_host_prints_what_a_person_reads_of_the_stream_and_logs_it_raw() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"4\"}\n");
    stand_in(
        &project,
        "claude",
        RECORDED_CLAUDE,
        0,
        "2.0.14 (Claude Code)",
    );
    project.write("curupira.toml", &config("provider = \"claude\""));
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(done.code, Some(0), "{done:?}");
    let id = task_id(&project);
    let prefix = format!("[fix {}] ", &id[..12]);
    let shown: Vec<&str> = done
        .stderr
        .lines()
        .filter_map(|line| line.strip_prefix(&prefix))
        .collect();
    assert_eq!(
        shown,
        [
            "I'll look at the failing test first.",
            "tool Bash: cargo test",
            "Fixed the off-by-one in the parser; all tests pass.",
            "answer: Fixed the off-by-one in the parser; all tests pass.",
            "usage: 1530 in (10240 cached, 2048 cache write), 412 out, $0.0871",
        ],
        "{}",
        done.stderr
    );
    assert!(!done.stderr.contains("{\"type\""), "{}", done.stderr);
    // The attempt's log has the stream as the CLI printed it.
    let log = run(&project, &["tasks", "log", &id]);
    assert_eq!(log.code, Some(0), "{log:?}");
    for line in RECORDED_CLAUDE.lines() {
        assert!(log.stdout.contains(line), "{line} not in {}", log.stdout);
    }

    // With -v, the raw stream on stderr, as before.
    project.write("tasks.jsonl", "{\"n\": \"5\"}\n");
    let verbose = run(&project, &["run", "--once", "--format", "json", "-v"]);
    assert_eq!(verbose.code, Some(0), "{verbose:?}");
    let newest = task_id(&project);
    assert_ne!(newest, id);
    let prefix = format!("[fix {}] ", &newest[..12]);
    let raw: Vec<&str> = verbose
        .stderr
        .lines()
        .filter_map(|line| line.strip_prefix(&prefix))
        .collect();
    assert_eq!(
        raw,
        RECORDED_CLAUDE.lines().collect::<Vec<_>>(),
        "{}",
        verbose.stderr
    );
    assert!(
        !verbose.stderr.contains("tool Bash: cargo test"),
        "{}",
        verbose.stderr
    );
}

#[test]
fn an_agent_that_fails_mid_stream_gets_no_warning_about_its_stream() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"6\"}\n");
    let cut: String = RECORDED_CLAUDE
        .lines()
        .take(3)
        .map(|line| format!("{line}\n"))
        .collect();
    stand_in(&project, "claude", &cut, 1, "2.0.14 (Claude Code)");
    project.write("curupira.toml", &config("provider = \"claude\""));
    let done = run(&project, &["run", "--once", "--format", "json"]);
    assert_eq!(done.code, Some(1), "{done:?}");
    assert_eq!(done.events_named("task.finished")[0]["exit_code"], 1);
    assert!(
        done.stderr.contains("tool Bash: cargo test"),
        "{}",
        done.stderr
    );
    assert!(!done.stderr.contains("stream-no-result"), "{}", done.stderr);
    assert!(
        !done.stderr.contains("the claude stream of task"),
        "{}",
        done.stderr
    );
    let attempt = &history(&project)[0];
    assert_eq!(
        attempt["stream_diagnostics"],
        serde_json::json!([]),
        "{attempt}"
    );
    assert!(
        !done.stderr.contains("answer:"),
        "no closing event, no answer"
    );
}
