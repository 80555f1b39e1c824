//! `curupira spirit run-tool` and `spirit system-prompt`: real Spirit packages run in
//! real Node.js (`examples/spirit-extension` and the packages of
//! `tests/spirit_run_fixtures/`), with their output, exit code and files checked.
//!
//! Every test that runs an extension needs `node` on PATH: without it, it says that it
//! skipped and passes, except under CI (`CI` set), where it fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fakes/mod.rs"]
mod fakes;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Whether `node` runs. When it does not: panics under CI, else prints
/// `skipped: … needs node on PATH` and returns `false`.
fn node_or_skip(test: &str) -> bool {
    fakes::tool_or_skip("node", &format!("`{test}`"))
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/spirit-extension")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/spirit_run_fixtures")
        .join(name)
}

fn curupira(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_curupira"));
    command.args(args).stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn run_tool(package: &Path, tool: &str, extra: &[&str]) -> Output {
    let mut args = vec!["spirit", "run-tool", package.to_str().unwrap(), tool];
    args.extend_from_slice(extra);
    curupira(&args, &[])
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[track_caller]
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        stdout(output),
        stderr(output)
    );
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

// --- the example package -----------------------------------------------------------

#[test]
fn the_example_looks_up_an_item_with_its_setting_and_secret() {
    if !node_or_skip("the_example_looks_up_an_item_with_its_setting_and_secret") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let settings = write(dir.path(), "settings.json", "{\"region\": \"eu\"}\n");
    let secrets = write(dir.path(), "secrets.json", "{\"api_token\": \"tok-123\"}\n");
    let output = run_tool(
        &example(),
        "lookup_item",
        &[
            "--arguments",
            r#"{"id":"7"}"#,
            "--settings",
            settings.to_str().unwrap(),
            "--secrets",
            secrets.to_str().unwrap(),
        ],
    );
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "{\n  \"id\": \"7\",\n  \"region\": \"eu\",\n  \"hasToken\": true\n}\n"
    );
    // `dispose` ran and logged, prefixed with the extension id; the secret never shows.
    let err = stderr(&output);
    assert!(
        err.contains("[@example/spirit-extension] example-extension disposed"),
        "{err}"
    );
    assert!(!err.contains("tok-123") && !stdout(&output).contains("tok-123"));
}

#[test]
fn the_example_without_the_secret_has_no_token() {
    if !node_or_skip("the_example_without_the_secret_has_no_token") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let settings = write(dir.path(), "settings.json", "{\"region\": \"eu\"}\n");
    let output = run_tool(
        &example(),
        "lookup_item",
        &[
            "--arguments",
            r#"{"id":"7"}"#,
            "--settings",
            settings.to_str().unwrap(),
        ],
    );
    assert_exit(&output, 0);
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        result,
        json!({"id": "7", "region": "eu", "hasToken": false})
    );
    assert!(stderr(&output).contains("required secret `api_token` has no value"));
}

#[test]
fn the_example_prints_its_system_prompt() {
    if !node_or_skip("the_example_prints_its_system_prompt") {
        return;
    }
    let output = curupira(
        &["spirit", "system-prompt", example().to_str().unwrap()],
        &[],
    );
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "Use lookup_item when the user asks for an item by id.\n"
    );
}

#[test]
fn an_installed_extension_runs_by_its_id() {
    if !node_or_skip("an_installed_extension_runs_by_its_id") {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let installed = data.path().join("extensions/desktop/harness-fixture");
    std::fs::create_dir_all(&installed).unwrap();
    for file in ["package.json", "index.mjs"] {
        std::fs::copy(fixture("harness").join(file), installed.join(file)).unwrap();
    }
    let data_dir = data.path().to_str().unwrap();
    let output = curupira(
        &[
            "spirit",
            "run-tool",
            "harness-fixture",
            "text",
            "--data-dir",
            data_dir,
            "--host",
            "desktop",
        ],
        &[],
    );
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "plain text, no newline\n");
    // Not installed for cli.
    let output = curupira(
        &[
            "spirit",
            "run-tool",
            "harness-fixture",
            "text",
            "--data-dir",
            data_dir,
        ],
        &[],
    );
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("no extension `harness-fixture` is installed for cli"));
}

// --- export forms and lookup -------------------------------------------------------

#[test]
fn every_export_form_of_activate_is_accepted() {
    if !node_or_skip("every_export_form_of_activate_is_accepted") {
        return;
    }
    for (package, expected) in [
        ("named-activate", "named activate of named-activate"),
        ("default-function", "default function of default-function"),
        ("default-object", "default object of default-object"),
    ] {
        let output = run_tool(&fixture(package), "which", &[]);
        assert_exit(&output, 0);
        assert_eq!(stdout(&output), format!("{expected}\n"), "{package}");
    }
}

#[test]
fn module_level_exports_serve_when_activate_returns_nothing() {
    if !node_or_skip("module_level_exports_serve_when_activate_returns_nothing") {
        return;
    }
    let output = run_tool(&fixture("module-level"), "which", &[]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "module-level which\n");
    // `getSystemPrompt()` (awaited) wins over `systemPrompt`.
    let output = curupira(
        &[
            "spirit",
            "system-prompt",
            fixture("module-level").to_str().unwrap(),
        ],
        &[],
    );
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "module-level prompt\n");
}

#[test]
fn invoke_tool_is_preferred_over_tools() {
    if !node_or_skip("invoke_tool_is_preferred_over_tools") {
        return;
    }
    let output = run_tool(&fixture("invoke-wins"), "which", &[]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "invokeTool answered which\n");
}

// --- results ----------------------------------------------------------------------

#[test]
fn results_are_printed_by_the_seed_rule() {
    if !node_or_skip("results_are_printed_by_the_seed_rule") {
        return;
    }
    let harness = fixture("harness");
    let output = run_tool(&harness, "text", &[]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "plain text, no newline\n");

    let output = run_tool(&harness, "nothing", &[]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "");

    // JSON.stringify(value, null, 2): member order as the object has it.
    let output = run_tool(&harness, "object", &[]);
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": {\n    \"nested\": true\n  },\n  \"text\": \"é\"\n}\n"
    );

    let output = run_tool(&harness, "async_tool", &[]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "resolved later\n");
}

#[test]
fn a_throwing_or_rejecting_tool_fails_with_its_message() {
    if !node_or_skip("a_throwing_or_rejecting_tool_fails_with_its_message") {
        return;
    }
    for (tool, message) in [
        ("throws", "the tool broke on purpose"),
        ("rejects", "the promise was rejected on purpose"),
    ] {
        let output = run_tool(&fixture("harness"), tool, &[]);
        assert_exit(&output, 1);
        assert_eq!(stdout(&output), "");
        assert!(
            stderr(&output).contains(&format!("error: tool `{tool}` failed: {message}")),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn what_a_tool_writes_to_stdout_goes_to_stderr() {
    if !node_or_skip("what_a_tool_writes_to_stdout_goes_to_stderr") {
        return;
    }
    let output = run_tool(&fixture("harness"), "noisy", &[]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "clean\n");
    let err = stderr(&output);
    for noise in [
        "console.log noise",
        "process.stdout noise",
        "raw fd 1 noise",
        "[harness-fixture] a log line",
    ] {
        assert!(err.contains(noise), "{noise} missing from: {err}");
    }
}

#[test]
fn json_format_has_the_result_the_logs_and_the_changes() {
    if !node_or_skip("json_format_has_the_result_the_logs_and_the_changes") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let settings = write(dir.path(), "settings.json", "{\"label\": \"old\"}\n");
    let output = run_tool(
        &fixture("harness"),
        "set_ok",
        &["--settings", settings.to_str().unwrap(), "--format", "json"],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["tool"], "set_ok");
    assert_eq!(report["result_type"], "json");
    assert_eq!(report["value"], json!({"region": "eu", "limit": 7}));
    assert_eq!(
        report["settings_changes"],
        json!([
            {"key": "region", "value": "eu"},
            {"key": "label", "value": null},
            {"key": "limit", "value": 7}
        ])
    );
    assert_eq!(report["error"], Value::Null);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(written, json!({"region": "eu", "limit": 7}));

    let output = run_tool(&fixture("harness"), "noisy", &["--format", "json"]);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["result"], "clean");
    assert_eq!(report["logs"], json!(["a log line"]));

    let output = run_tool(&fixture("harness"), "throws", &["--format", "json"]);
    assert_exit(&output, 1);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        report["error"],
        "tool `throws` failed: the tool broke on purpose"
    );
    assert_eq!(report["result"], Value::Null);
}

// --- the context --------------------------------------------------------------------

#[test]
fn the_handler_context_is_the_seed_table() {
    if !node_or_skip("the_handler_context_is_the_seed_table") {
        return;
    }
    let harness = fixture("harness");
    let output = run_tool(
        &harness,
        "context",
        &[
            "--arguments",
            r#"{"q": [1]}"#,
            "--tool-call-id",
            "call-7",
            "--questions-result",
            r#"{"answer": "yes"}"#,
        ],
    );
    assert_exit(&output, 0);
    let context: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        context["keys"],
        json!([
            "arguments",
            "extension",
            "host",
            "log",
            "questionsResult",
            "secrets",
            "settings",
            "toolCallId",
            "toolName"
        ])
    );
    let dir = std::fs::canonicalize(&harness).unwrap();
    assert_eq!(
        context["extension"],
        json!({
            "id": "harness-fixture",
            "name": "harness-fixture",
            "version": "1.0.0",
            "directoryPath": dir.to_str().unwrap(),
            "manifestPath": dir.join("package.json").to_str().unwrap(),
            "main": dir.join("index.mjs").to_str().unwrap(),
        })
    );
    assert_eq!(context["toolName"], "context");
    assert_eq!(context["arguments"], json!({"q": [1]}));
    assert_eq!(context["toolCallId"], "call-7");
    assert_eq!(context["questionsResult"], json!({"answer": "yes"}));
    assert_eq!(context["hostKeys"], json!([]));
    assert_eq!(context["sameLog"], true);
    assert_eq!(context["cwd"], dir.to_str().unwrap());
}

#[test]
fn on_event_receives_the_activation_event_and_unlisted_events_are_refused() {
    if !node_or_skip("on_event_receives_the_activation_event_and_unlisted_events_are_refused") {
        return;
    }
    let harness = fixture("harness");
    let output = run_tool(&harness, "event", &[]);
    assert_exit(&output, 0);
    let events: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        events,
        json!({"activation": {"type": "onStartup"}, "onEvent": {"type": "onStartup"}})
    );
    let output = run_tool(&harness, "event", &["--event", "onToolCall"]);
    let events: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(events["onEvent"], json!({"type": "onToolCall"}));

    let output = run_tool(&harness, "event", &["--event", "onUserMessage"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains(
            "Spirit would not activate `harness-fixture` for `onUserMessage`: its `activationEvents` lists only `onStartup`, `onToolCall`"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn desktop_message_boxes_are_checked_and_answered() {
    if !node_or_skip("desktop_message_boxes_are_checked_and_answered") {
        return;
    }
    let harness = fixture("harness");
    let output = run_tool(&harness, "message_box", &["--host", "desktop"]);
    assert_exit(&output, 0);
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        result,
        json!({
            "bad": "rejected: showMessageBox needs `message`, a string",
            "answer": {"response": 1}
        })
    );
    assert!(stderr(&output).contains("[harness-fixture] message box (question): Proceed?"));
    let output = run_tool(
        &harness,
        "message_box",
        &["--host", "desktop", "--message-box-response", "0"],
    );
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(result["answer"], json!({"response": 0}));
    // The CLI's host is `{}`.
    let output = run_tool(&harness, "message_box", &[]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("showMessageBox is not a function"));
}

// --- settings and secrets rules, enforced by the host -------------------------------

/// Runs `tool` with a settings file holding `settings`, checks that the file is
/// byte-for-byte unchanged, and returns what the tool printed (without the final
/// newline of the human format).
fn rejected_change(tool: &str, settings: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "settings.json", settings);
    let output = run_tool(
        &fixture("harness"),
        tool,
        &["--settings", path.to_str().unwrap()],
    );
    assert_exit(&output, 0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), settings, "{tool}");
    let printed = stdout(&output);
    printed
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("{tool}: no final newline in {printed:?}"))
        .to_owned()
}

#[test]
fn settings_writes_that_break_the_schema_reject_and_leave_the_file() {
    if !node_or_skip("settings_writes_that_break_the_schema_reject_and_leave_the_file") {
        return;
    }
    let settings = "{ \"region\": \"eu\", \"limit\": 2 }\n";
    assert_eq!(
        rejected_change("set_wrong_type", settings),
        "rejected: setting `limit` has type `number`: expected a number, found a string"
    );
    assert_eq!(
        rejected_change("set_not_option", settings),
        "rejected: setting `region` has no option \"asia\": expected one of \"us\", \"eu\""
    );
    assert_eq!(
        rejected_change("set_required_null", settings),
        "rejected: setting `region` is required and cannot be cleared: expected a string naming one of its options, found null"
    );
    // `setAll` is all-or-nothing: the good `label` is not written either.
    assert_eq!(
        rejected_change("set_all_partial", settings),
        "rejected: setting `limit` has type `number`: expected a number, found a string"
    );
}

#[test]
fn settings_reads_fill_defaults_and_refuse_undeclared_keys() {
    if !node_or_skip("settings_reads_fill_defaults_and_refuse_undeclared_keys") {
        return;
    }
    let output = run_tool(&fixture("harness"), "settings_read", &[]);
    assert_exit(&output, 0);
    let read: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        read,
        json!({
            "region": "us",
            "all": {"region": "us"},
            "undeclared": "rejected: setting `regoin` is not declared in `settingsSchema`: did you mean `region`?"
        })
    );
}

#[test]
fn secrets_reach_only_declared_slots_and_never_print() {
    if !node_or_skip("secrets_reach_only_declared_slots_and_never_print") {
        return;
    }
    let output = run_tool(&fixture("harness"), "secret_undeclared", &[]);
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "rejected: secret `password` is not declared in `secretSlots`: expected one of `api_token`\n"
    );

    let dir = tempfile::tempdir().unwrap();
    let secrets = write(dir.path(), "secrets.json", "{}\n");
    let output = run_tool(
        &fixture("harness"),
        "secret_roundtrip",
        &["--secrets", secrets.to_str().unwrap(), "--format", "json"],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        report["value"],
        json!({
            "before": false,
            "read": true,
            "notString": "rejected: secret `api_token` takes a string: found a number",
            "after": false
        })
    );
    assert_eq!(
        report["secret_changes"],
        json!([{"key": "api_token", "action": "set"}, {"key": "api_token", "action": "delete"}])
    );
    assert!(!stdout(&output).contains("new-secret-value"));
    assert!(!stderr(&output).contains("new-secret-value"));
    assert_eq!(std::fs::read_to_string(&secrets).unwrap(), "{}\n");
}

#[test]
fn a_settings_file_that_breaks_the_schema_is_refused_before_node_runs() {
    // No node needed: the file is refused first.
    let dir = tempfile::tempdir().unwrap();
    let settings = write(dir.path(), "settings.json", "{\"region\": \"mars\"}");
    let output = run_tool(
        &fixture("harness"),
        "text",
        &["--settings", settings.to_str().unwrap()],
    );
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains(
            "breaks the extension's `settingsSchema`: setting `region` has no option \"mars\""
        ),
        "{}",
        stderr(&output)
    );
    let secrets = write(
        dir.path(),
        "secrets.json",
        "{\"api_token\": 5, \"x\": \"hidden\"}",
    );
    let output = run_tool(
        &fixture("harness"),
        "text",
        &["--secrets", secrets.to_str().unwrap()],
    );
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("secret `api_token` takes a string: found a number"));
    assert!(!stderr(&output).contains("hidden"));
}

// --- schemas ------------------------------------------------------------------------

#[test]
fn arguments_that_break_the_input_schema_never_reach_the_tool() {
    // The arguments are checked before Node starts; with node the marker proves the
    // tool did not run, and that valid arguments do reach it.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let marker_env = [("SPIRIT_TEST_MARKER", marker.to_str().unwrap())];
    let harness = fixture("harness");
    let args = |arguments: &str| {
        vec![
            "spirit".to_owned(),
            "run-tool".to_owned(),
            harness.to_str().unwrap().to_owned(),
            "strict_args".to_owned(),
            "--arguments".to_owned(),
            arguments.to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
        ]
    };
    let bad = args("{\n  \"n\": \"3\",\n  \"extra\": true\n}");
    let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
    let output = curupira(&bad, &marker_env);
    assert_exit(&output, 1);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let found: Vec<(&str, &str, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["path"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        found.contains(&("spirit/invalid-arguments", "/n", 2)),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(code, path, line)| *code == "spirit/invalid-arguments"
                && path.is_empty()
                && *line == 1),
        "{found:?}"
    );
    assert!(!marker.exists(), "the tool ran");

    if !node_or_skip("arguments_that_break_the_input_schema_never_reach_the_tool") {
        return;
    }
    let good = args(r#"{"n": 3}"#);
    let good: Vec<&str> = good.iter().map(String::as_str).collect();
    let output = curupira(&good, &marker_env);
    assert_exit(&output, 0);
    assert!(marker.exists(), "valid arguments reach the tool");
}

#[test]
fn arguments_from_a_file_are_pointed_into() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "args.json", "{\"n\": 0}\n");
    let at = format!("@{}", file.display());
    let output = run_tool(&fixture("harness"), "strict_args", &["--arguments", &at]);
    assert_exit(&output, 1);
    let report = stdout(&output);
    assert!(
        report.contains(&format!("--> {}:1:7", file.display())),
        "{report}"
    );
    assert!(
        report.contains("error[spirit/invalid-arguments]"),
        "{report}"
    );
    // Not JSON at all: one sentence, exit 2.
    let output = run_tool(
        &fixture("harness"),
        "strict_args",
        &["--arguments", "{n: 1}"],
    );
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("the arguments are not JSON: --arguments:1:2"));
}

#[test]
fn a_result_that_breaks_the_output_schema_is_reported() {
    if !node_or_skip("a_result_that_breaks_the_output_schema_is_reported") {
        return;
    }
    let output = run_tool(&fixture("harness"), "bad_output", &["--format", "json"]);
    assert_exit(&output, 1);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let diagnostic = &report["diagnostics"][0];
    assert_eq!(diagnostic["code"], "spirit/invalid-result");
    assert_eq!(diagnostic["path"], "/count");
    assert_eq!(diagnostic["line"], 2);
    let output = run_tool(&fixture("harness"), "good_output", &[]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "{\n  \"count\": 3\n}\n");
}

// --- limits and failures -------------------------------------------------------------

/// Whether a process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| rest.to_owned()))
        .is_some_and(|rest| !rest.starts_with('Z'))
}

#[cfg(target_os = "linux")]
#[test]
fn a_tool_that_never_resolves_is_killed_at_the_timeout_with_what_it_started() {
    if !node_or_skip("a_tool_that_never_resolves_is_killed_at_the_timeout_with_what_it_started") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let started = Instant::now();
    let output = curupira(
        &[
            "spirit",
            "run-tool",
            fixture("harness").to_str().unwrap(),
            "never",
            "--timeout",
            "4",
        ],
        &[("SPIRIT_TEST_PIDS", pids.to_str().unwrap())],
    );
    let took = started.elapsed();
    assert_exit(&output, 1);
    // 4 s, not 1: on a loaded machine Node may take over a second to start the tool.
    assert!(took >= Duration::from_secs(4), "{took:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(
        stderr(&output)
            .contains("did not finish within 4 s: node and everything it started were stopped"),
        "{}",
        stderr(&output)
    );
    let pids: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .split_whitespace()
        .map(|pid| pid.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "node and its `sleep`");
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|pid| alive(*pid)) {
        assert!(
            Instant::now() < deadline,
            "a process outlived the timeout: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn without_node_on_path_the_run_is_refused() {
    let empty = tempfile::tempdir().unwrap();
    let output = curupira(
        &[
            "spirit",
            "run-tool",
            fixture("harness").to_str().unwrap(),
            "text",
        ],
        &[("PATH", empty.path().to_str().unwrap())],
    );
    assert_exit(&output, 2);
    assert_eq!(
        stderr(&output),
        "error: `node` was not found on PATH: running a Spirit extension needs Node.js 18 or later\n"
    );
}

#[test]
fn unknown_tools_and_invalid_packages_are_refused() {
    let output = run_tool(&fixture("harness"), "txt", &[]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("`harness-fixture` has no tool `txt`: did you mean `text`?"));

    // A package with errors: the `spirit check` report, exit 1.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "package.json",
        r#"{"name": "Bad", "version": "1.0.0", "spiritExtension": {"displayName": "x", "supportedHosts": ["cli"]}}"#,
    );
    let output = run_tool(dir.path(), "any", &["--format", "json"]);
    assert_exit(&output, 1);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["diagnostics"][0]["code"], "spirit/invalid-name");

    // A host the package does not support.
    let output = run_tool(&fixture("named-activate"), "which", &["--host", "desktop"]);
    assert_exit(&output, 1);
    assert!(stdout(&output).contains("spirit/unsupported-host"));
}

#[test]
fn the_example_passes_spirit_check_clean_for_both_hosts() {
    let example = example();
    for host in ["cli", "desktop"] {
        let output = curupira(
            &[
                "spirit",
                "check",
                example.to_str().unwrap(),
                "--host",
                host,
                "--format",
                "json",
            ],
            &[],
        );
        assert_exit(&output, 0);
        let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(report["diagnostics"], json!([]), "{host}");
    }
}
