//! `curupira spirit run-tool` and `spirit system-prompt`: real Spirit packages run in
//! real Node.js (`examples/spirit-extension` and the packages of
//! `tests/spirit_run_fixtures/`), with their output, exit code and files checked
//! against what the Spirit app's extension host does (`spirit_app_calls.rs` replays
//! the app's own recorded calls).
//!
//! Every test that runs an extension needs `node` on PATH: without it, it says that it
//! skipped and passes, except under CI (`CI` set), where it fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use curupira_test_support::fakes;
use curupira_test_support::process::alive;
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

/// The first diagnostic of `report` with `code`.
#[track_caller]
fn diagnostic<'r>(report: &'r Value, code: &str) -> &'r Value {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {report}"))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

// --- the example package -----------------------------------------------------------

#[test]
fn the_example_looks_up_an_item_with_its_setting() {
    if !node_or_skip("the_example_looks_up_an_item_with_its_setting") {
        return;
    }
    // As the README runs it, on the default host (cli): the setting's default, and
    // not a warning.
    let output = run_tool(&example(), "lookup_item", &["--arguments", r#"{"id":"7"}"#]);
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "{\n  \"id\": \"7\",\n  \"region\": \"us\"\n}\n"
    );
    assert_eq!(
        stderr(&output),
        "",
        "the shipped example runs without a warning"
    );

    let dir = tempfile::tempdir().unwrap();
    let settings = write(dir.path(), "settings.json", "{\"region\": \"eu\"}\n");
    for host in ["cli", "desktop"] {
        let output = run_tool(
            &example(),
            "lookup_item",
            &[
                "--arguments",
                r#"{"id":"7"}"#,
                "--settings",
                settings.to_str().unwrap(),
                "--host",
                host,
            ],
        );
        assert_exit(&output, 0);
        assert_eq!(
            stdout(&output),
            "{\n  \"id\": \"7\",\n  \"region\": \"eu\"\n}\n",
            "{host}"
        );
        // A tool call does not dispose the extension (its `dispose` would log).
        assert_eq!(stderr(&output), "", "{host}");
    }
}

#[test]
fn the_cli_host_has_no_secret_storage() {
    if !node_or_skip("the_cli_host_has_no_secret_storage") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let secrets = write(dir.path(), "secrets.json", "{\"api_token\": \"tok-123\"}\n");
    // The secrets file is not read on cli: the token is not there.
    let output = run_tool(
        &fixture("accessors"),
        "ops",
        &[
            "--arguments",
            r#"{"ops": [["secrets.get", "api_token"]]}"#,
            "--secrets",
            secrets.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["value"], json!([["secrets.get", "<undefined>"]]));
    let warning = diagnostic(&report, "spirit/secret-storage");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("is not read: the Spirit CLI host has no secret storage"),
        "{warning}"
    );
    assert!(!stdout(&output).contains("tok-123") && !stderr(&output).contains("tok-123"));
    // Without a file, the package's secret slots get the same warning (human: stderr).
    let output = run_tool(
        &fixture("accessors"),
        "ops",
        &["--arguments", r#"{"ops": []}"#],
    );
    assert_exit(&output, 0);
    assert!(
        stderr(&output)
            .contains("declares secret slots, but the Spirit CLI host has no secret storage"),
        "{}",
        stderr(&output)
    );
    // `set` fails in the app's words, `get` gives undefined, `delete` does nothing.
    let output = run_tool(
        &fixture("accessors"),
        "ops",
        &[
            "--arguments",
            r#"{"ops": [["secrets.set", "api_token", "x"], ["secrets.get", "api_token"], ["secrets.has", "api_token"], ["secrets.delete", "api_token"], ["secrets.get", "nope"]]}"#,
            "--format",
            "json",
        ],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let ops: Value = serde_json::from_str(report["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        ops,
        json!([
            [
                "secrets.set",
                "THROW The current host does not implement extension secret storage: accessors"
            ],
            ["secrets.get", "<undefined>"],
            ["secrets.has", false],
            ["secrets.delete", "<undefined>"],
            [
                "secrets.get",
                "THROW The extension does not declare the secret slot: nope"
            ]
        ])
    );
    assert_eq!(report["secret_changes"], json!([]));
}

#[test]
fn the_desktop_keyring_keeps_secrets_trimmed() {
    if !node_or_skip("the_desktop_keyring_keeps_secrets_trimmed") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let secrets = write(
        dir.path(),
        "secrets.json",
        "{\"api_token\": \"  stored  \"}\n",
    );
    let output = run_tool(
        &fixture("accessors"),
        "ops",
        &[
            "--arguments",
            r#"{"ops": [["secrets.get", "api_token"], ["secrets.set", "api_token", "\tnew-value \n"], ["secrets.get", "api_token"], ["secrets.set", "api_token", "   "], ["secrets.has", "api_token"]]}"#,
            "--secrets",
            secrets.to_str().unwrap(),
            "--host",
            "desktop",
            "--format",
            "json",
        ],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let ops: Value = serde_json::from_str(report["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        ops,
        json!([
            ["secrets.get", "stored"],
            ["secrets.set", "<undefined>"],
            ["secrets.get", "new-value"],
            ["secrets.set", "<undefined>"],
            ["secrets.has", false]
        ])
    );
    // What the keyring holds: the trimmed value, a blank one as no value.
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&secrets).unwrap()).unwrap();
    assert_eq!(written, json!({"api_token": ""}));
    let messages: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "spirit/secret-storage")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("the stored value of the secret `api_token` has spaces around it")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("the desktop keyring keeps it trimmed")),
        "{messages:?}"
    );
    assert!(!stdout(&output).contains("new-value\\n"));
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
fn result_text_follows_the_app_for_every_kind_of_value() {
    if !node_or_skip("result_text_follows_the_app_for_every_kind_of_value") {
        return;
    }
    let json_run = |tool: &str| -> (Output, Value) {
        let output = run_tool(&fixture("harness"), tool, &["--format", "json"]);
        let report = serde_json::from_str(&stdout(&output)).unwrap();
        (output, report)
    };
    // `undefined` is the empty text, `null` the text "null".
    for (tool, text, returned) in [
        ("nothing", "", "undefined"),
        ("nul", "null", "null"),
        ("text", "plain text, no newline", "a string"),
    ] {
        let (output, report) = json_run(tool);
        assert_exit(&output, 0);
        assert_eq!(report["result"], text, "{tool}");
        assert_eq!(report["result_type"], "string", "{tool}");
        assert_eq!(report["returned"], returned, "{tool}");
    }
    // A function: JSON.stringify gives undefined, so there is no text at all.
    let (output, report) = json_run("function_result");
    assert_exit(&output, 0);
    assert_eq!(report["result"], Value::Null);
    assert_eq!(report["result_type"], "undefined");
    assert!(stderr(&output).contains("Spirit passes no text at all"));
    // A BigInt makes JSON.stringify throw: the call fails with its message.
    let (output, report) = json_run("bigint");
    assert_exit(&output, 1);
    assert_eq!(
        report["error"],
        "tool `bigint` failed: Do not know how to serialize a BigInt"
    );
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
    assert_eq!(report["result_type"], "string");
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
    assert_eq!(report["settings_after"], written);

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
    // `name` is the display name, `main` the manifest's string.
    assert_eq!(
        context["extension"],
        json!({
            "id": "harness-fixture",
            "name": "Harness fixture",
            "version": "1.0.0",
            "directoryPath": dir.to_str().unwrap(),
            "manifestPath": dir.join("package.json").to_str().unwrap(),
            "main": "index.mjs",
        })
    );
    assert_eq!(context["toolName"], "context");
    assert_eq!(context["arguments"], json!({"q": [1]}));
    assert_eq!(context["toolCallId"], "call-7");
    assert_eq!(context["questionsResult"], json!({"answer": "yes"}));
    assert_eq!(context["hostKeys"], json!([]));
    // The handler's `log` is its own function, as in the app.
    assert_eq!(context["sameLog"], false);
    assert_eq!(context["cwd"], dir.to_str().unwrap());
}

#[test]
fn a_tool_call_activates_without_an_event_and_calls_neither_on_event_nor_dispose() {
    if !node_or_skip(
        "a_tool_call_activates_without_an_event_and_calls_neither_on_event_nor_dispose",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("lifecycle");
    let marker_env = [("SPIRIT_TEST_MARKER", marker.to_str().unwrap())];
    let events = fixture("events");
    let package = events.to_str().unwrap();
    // `activationEvents` lists only `onUserMessage`; the tool call activates anyway.
    let output = curupira(&["spirit", "run-tool", package, "state"], &marker_env);
    assert_exit(&output, 0);
    let state: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        state["activation"]["keys"],
        json!(["extension", "host", "log", "secrets", "settings"])
    );
    assert_eq!(state["activation"]["event"], Value::Null);
    assert_eq!(state["events"], json!([]));
    assert_eq!(state["thisInTool"], "undefined");
    // The manifest says `./index.mjs`; the app's reader drops the `./`.
    assert_eq!(state["activation"]["extension"]["main"], "index.mjs");
    assert_eq!(state["activation"]["extension"]["name"], "Events fixture");
    assert!(!marker.exists(), "onEvent or dispose ran");

    // `invokeTool` is called without `this` too.
    let output = curupira(
        &["spirit", "run-tool", package, "via_invoke"],
        &[("SPIRIT_TEST_INVOKE", "1")],
    );
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "invokeTool for via_invoke, this undefined\n"
    );
}

#[test]
fn event_delivers_a_listed_event_first_as_the_app_dispatch_does() {
    if !node_or_skip("event_delivers_a_listed_event_first_as_the_app_dispatch_does") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("lifecycle");
    let marker_env = [("SPIRIT_TEST_MARKER", marker.to_str().unwrap())];
    let events = fixture("events");
    let package = events.to_str().unwrap();
    let output = curupira(
        &[
            "spirit",
            "run-tool",
            package,
            "state",
            "--event",
            "onUserMessage",
        ],
        &marker_env,
    );
    assert_exit(&output, 0);
    let state: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        state["activation"]["event"],
        json!({"type": "onUserMessage"})
    );
    assert_eq!(state["events"], json!(["onUserMessage"]));
    // onEvent ran once, dispose never.
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        "onEvent onUserMessage\n"
    );

    // An event the package does not list is skipped by the dispatch: a warning, and
    // the call is made without it.
    let output = curupira(
        &[
            "spirit",
            "run-tool",
            package,
            "state",
            "--event",
            "onStartup",
            "--format",
            "json",
        ],
        &[],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let state: Value = serde_json::from_str(report["result"].as_str().unwrap()).unwrap();
    assert_eq!(state["activation"]["event"], Value::Null);
    assert_eq!(state["events"], json!([]));
    let warning = diagnostic(&report, "spirit/event-not-delivered");
    assert_eq!(warning["path"], "/spiritExtension/activationEvents");
    assert!(
        warning["message"].as_str().unwrap().contains(
            "would not deliver `onStartup` to `events-fixture`: its `activationEvents` lists only `onUserMessage`"
        ),
        "{warning}"
    );

    // A name that is no event at all is a usage error.
    let output = curupira(
        &[
            "spirit",
            "run-tool",
            package,
            "state",
            "--event",
            "onUserMesage",
        ],
        &[],
    );
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("did you mean `onUserMessage`?"));
}

#[test]
fn the_api_is_what_activate_returns_else_the_module_exports_never_a_default_object() {
    if !node_or_skip(
        "the_api_is_what_activate_returns_else_the_module_exports_never_a_default_object",
    ) {
        return;
    }
    // `activate` returned nothing usable: the module's named exports serve, with a
    // warning for each member that was ignored.
    let output = run_tool(&fixture("fallback"), "which", &["--format", "json"]);
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["result"], "the module's tools.which");
    let ignored: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "spirit/ignored-export")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(
        ignored.iter().any(|m| m
            .contains("`the object `activate` returned.tools.which` is a string, not a function")),
        "{ignored:?}"
    );
    assert!(
        ignored
            .iter()
            .any(|m| m.contains("Spirit uses the module's own exports instead")),
        "{ignored:?}"
    );
    let output = curupira(
        &[
            "spirit",
            "system-prompt",
            fixture("fallback").to_str().unwrap(),
        ],
        &[],
    );
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "The module's prompt.\n");

    // `export default { activate, tools }`: `activate` runs, its members never serve.
    let output = run_tool(
        &fixture("default-object-members"),
        "which",
        &["--format", "json"],
    );
    assert_exit(&output, 1);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        report["error"],
        "tool `which` failed: The extension did not return a callable instance: Default object members"
    );
    let warning = diagnostic(&report, "spirit/ignored-export");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("the members `tools`, `systemPrompt` of the default export object are never used by Spirit"),
        "{warning}"
    );
    let output = curupira(
        &[
            "spirit",
            "system-prompt",
            fixture("default-object-members").to_str().unwrap(),
            "--format",
            "json",
        ],
        &[],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["system_prompt"], Value::Null);
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
    // The extension sees the app's words; our fuller sentence goes to stderr.
    let settings = "{ \"region\": \"eu\", \"limit\": 2 }\n";
    assert_eq!(
        rejected_change("set_wrong_type", settings),
        "rejected: Extension setting limit must be a number."
    );
    assert_eq!(
        rejected_change("set_not_option", settings),
        "rejected: Extension setting region has an invalid value: asia"
    );
    // `setAll` is all-or-nothing: the good `label` is not written either.
    assert_eq!(
        rejected_change("set_all_partial", settings),
        "rejected: Extension setting limit must be a number."
    );
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "settings.json", settings);
    let output = run_tool(
        &fixture("harness"),
        "set_wrong_type",
        &["--settings", path.to_str().unwrap()],
    );
    assert!(
        stderr(&output).contains(
            "note: ctx.settings.set refused: setting `limit` has type `number`: expected a number, found a string"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn settings_accessors_follow_the_app() {
    if !node_or_skip("settings_accessors_follow_the_app") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let settings = write(
        dir.path(),
        "settings.json",
        "{\"endpoint\": \"https://a.example\", \"other\": 1}\n",
    );
    let output = run_tool(
        &fixture("accessors"),
        "ops",
        &[
            "--arguments",
            r#"{"ops": [
                ["get", "undeclared"],
                ["set", "undeclared", 1],
                ["set", "endpoint", "  "],
                ["set", "endpoint", null],
                ["set", "region", "eu"],
                ["set", "region", null],
                ["set", "note", ""],
                ["set", "note", null],
                ["setAll", {"limit": 3, "region": "mars"}],
                ["setAll", {"limit": 3, "region": "eu"}],
                ["getAll"]
            ]}"#,
            "--settings",
            settings.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let ops: Value = serde_json::from_str(report["result"].as_str().unwrap()).unwrap();
    let all = json!({"region": "eu", "endpoint": "https://a.example", "limit": 3, "note": "none"});
    assert_eq!(
        ops,
        json!([
            ["get", "<undefined>"],
            [
                "set",
                "THROW The extension does not declare the setting: undeclared"
            ],
            ["set", "THROW Extension setting endpoint must not be empty."],
            [
                "set",
                "THROW Extension setting endpoint is required and cannot be cleared."
            ],
            ["set", "<undefined>"],
            // Required, but with a default: it can be cleared.
            ["set", "<undefined>"],
            // Not required: an empty string is a value.
            ["set", "<undefined>"],
            ["set", "<undefined>"],
            [
                "setAll",
                "THROW Extension setting region has an invalid value: mars"
            ],
            // `setAll` resolves to the values as `getAll` gives them.
            ["setAll", all],
            ["getAll", all]
        ])
    );
    // `getAll`'s members follow `settingsSchema`.
    let text = report["result"].as_str().unwrap();
    let order: Vec<usize> = ["\"region\"", "\"endpoint\"", "\"limit\"", "\"note\""]
        .iter()
        .map(|key| text.rfind(key).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    // What is stored: the values written, undeclared entries kept as they were.
    let expected = json!({"endpoint": "https://a.example", "other": 1, "limit": 3, "region": "eu"});
    assert_eq!(report["settings_after"], expected);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(written, expected);
    let warning = diagnostic(&report, "spirit/undeclared-setting");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("`ctx.settings.get(\"undeclared\")`"),
        "{warning}"
    );
}

#[test]
fn the_harness_reads_and_clears_settings_as_the_app_does() {
    if !node_or_skip("the_harness_reads_and_clears_settings_as_the_app_does") {
        return;
    }
    let output = run_tool(&fixture("harness"), "settings_read", &[]);
    assert_exit(&output, 0);
    let read: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        read,
        json!({"region": "us", "all": {"region": "us"}, "undeclared": "accepted"})
    );
    // `region` is required but has a default: `null` clears it.
    let dir = tempfile::tempdir().unwrap();
    let settings = write(
        dir.path(),
        "settings.json",
        "{\"region\": \"eu\", \"limit\": 2}\n",
    );
    let output = run_tool(
        &fixture("harness"),
        "set_required_null",
        &["--settings", settings.to_str().unwrap()],
    );
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "accepted\n");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(written, json!({"limit": 2}));
}

#[test]
fn stored_settings_are_read_as_the_app_reads_them() {
    if !node_or_skip("stored_settings_are_read_as_the_app_reads_them") {
        return;
    }
    let ops = r#"{"ops": [["get", "note"], ["get", "endpoint"], ["getAll"], ["set", "limit", 1], ["setAll", {"limit": 2}]]}"#;
    // Nothing stored: the required `endpoint` reads as undefined, and the run goes on.
    let output = run_tool(
        &fixture("accessors"),
        "ops",
        &["--arguments", ops, "--format", "json"],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let result: Value = serde_json::from_str(report["result"].as_str().unwrap()).unwrap();
    assert_eq!(result[0], json!(["get", "none"]));
    assert_eq!(result[1], json!(["get", "<undefined>"]));
    assert_eq!(
        result[2],
        json!(["getAll", {"region": "us", "note": "none"}])
    );
    let warning = diagnostic(&report, "spirit/stored-settings");
    assert_eq!(warning["path"], "/spiritExtension/settingsSchema/1");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("setting `endpoint` is required but has no value and no `defaultValue`"),
        "{warning}"
    );

    // A stored value that breaks its setting: every read fails, writes still happen.
    let dir = tempfile::tempdir().unwrap();
    let settings = write(
        dir.path(),
        "settings.json",
        "{\"region\": \"mars\", \"endpoint\": \"e\"}\n",
    );
    let output = run_tool(
        &fixture("accessors"),
        "ops",
        &[
            "--arguments",
            ops,
            "--settings",
            settings.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let result: Value = serde_json::from_str(report["result"].as_str().unwrap()).unwrap();
    let broken = "THROW Extension setting region has an invalid value: mars";
    assert_eq!(
        result,
        json!([
            ["get", broken],
            ["get", broken],
            ["getAll", broken],
            ["set", "<undefined>"],
            ["setAll", broken]
        ])
    );
    assert_eq!(
        report["settings_after"],
        json!({"region": "mars", "endpoint": "e", "limit": 2})
    );
    let warning = diagnostic(&report, "spirit/stored-settings");
    assert_eq!(warning["path"], "/spiritExtension/settingsSchema/0");
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
        "rejected: The extension does not declare the secret slot: password\n"
    );

    let dir = tempfile::tempdir().unwrap();
    let secrets = write(dir.path(), "secrets.json", "{}\n");
    let output = run_tool(
        &fixture("harness"),
        "secret_roundtrip",
        &[
            "--secrets",
            secrets.to_str().unwrap(),
            "--host",
            "desktop",
            "--format",
            "json",
        ],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        report["value"],
        json!({
            "before": false,
            "read": true,
            "notString": "rejected: value.trim is not a function",
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

    // On cli the same tool fails: there is no secret storage to set.
    let output = run_tool(&fixture("harness"), "secret_roundtrip", &[]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains(
            "error: tool `secret_roundtrip` failed: The current host does not implement extension secret storage: harness-fixture"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_settings_file_that_breaks_the_schema_is_run_with_a_warning() {
    if !node_or_skip("a_settings_file_that_breaks_the_schema_is_run_with_a_warning") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let settings = write(dir.path(), "settings.json", "{\"region\": \"mars\"}");
    let output = run_tool(
        &fixture("harness"),
        "text",
        &["--settings", settings.to_str().unwrap()],
    );
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "plain text, no newline\n");
    assert!(
        stderr(&output).contains("warning[spirit/stored-settings]: the stored settings: setting `region` has no option \"mars\""),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_secrets_file_that_breaks_the_slots_is_refused_before_node_runs() {
    // No node needed: the file is refused first.
    let dir = tempfile::tempdir().unwrap();
    let secrets = write(
        dir.path(),
        "secrets.json",
        "{\"api_token\": 5, \"x\": \"hidden\"}",
    );
    let output = run_tool(
        &fixture("harness"),
        "text",
        &["--secrets", secrets.to_str().unwrap(), "--host", "desktop"],
    );
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("secret `api_token` takes a string: found a number"));
    assert!(!stderr(&output).contains("hidden"));
    let output = run_tool(
        &fixture("harness"),
        "text",
        &[
            "--settings",
            dir.path().join("missing.json").to_str().unwrap(),
        ],
    );
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("could not read"));
}

// --- schemas ------------------------------------------------------------------------

#[test]
fn arguments_that_break_the_input_schema_still_reach_the_tool() {
    if !node_or_skip("arguments_that_break_the_input_schema_still_reach_the_tool") {
        return;
    }
    // Spirit does not check the arguments: the mismatch is a warning, the tool runs.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let marker_env = [("SPIRIT_TEST_MARKER", marker.to_str().unwrap())];
    let harness = fixture("harness");
    let output = curupira(
        &[
            "spirit",
            "run-tool",
            harness.to_str().unwrap(),
            "strict_args",
            "--arguments",
            "{\n  \"n\": \"3\",\n  \"extra\": true\n}",
            "--format",
            "json",
        ],
        &marker_env,
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["result"], "n is 3");
    let found: Vec<(&str, &str, &str, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["severity"].as_str().unwrap(),
                d["path"].as_str().unwrap(),
                d["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert!(
        found.contains(&("spirit/invalid-arguments", "warning", "/n", 2)),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(code, _, path, line)| *code == "spirit/invalid-arguments"
                && path.is_empty()
                && *line == 1),
        "{found:?}"
    );
    assert!(marker.exists(), "the tool did not run");
}

#[test]
fn arguments_from_a_file_are_pointed_into() {
    if !node_or_skip("arguments_from_a_file_are_pointed_into") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "args.json", "{\"n\": 0}\n");
    let at = format!("@{}", file.display());
    let output = run_tool(&fixture("harness"), "strict_args", &["--arguments", &at]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "n is 0\n");
    let report = stderr(&output);
    assert!(
        report.contains(&format!("--> {}:1:7", file.display())),
        "{report}"
    );
    assert!(
        report.contains("warning[spirit/invalid-arguments]"),
        "{report}"
    );
}

#[test]
fn arguments_that_are_not_json_are_refused() {
    // Not JSON at all: one sentence, exit 2, before node is needed.
    let output = run_tool(
        &fixture("harness"),
        "strict_args",
        &["--arguments", "{n: 1}"],
    );
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("the arguments are not JSON: --arguments:1:2"));
}

#[test]
fn a_result_that_breaks_the_output_schema_is_reported_and_passed_on() {
    if !node_or_skip("a_result_that_breaks_the_output_schema_is_reported_and_passed_on") {
        return;
    }
    let output = run_tool(&fixture("harness"), "bad_output", &["--format", "json"]);
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["result"], "{\n  \"count\": \"three\"\n}");
    let diagnostic = diagnostic(&report, "spirit/invalid-result");
    assert_eq!(diagnostic["severity"], "warning");
    assert_eq!(diagnostic["path"], "/count");
    assert_eq!(diagnostic["line"], 2);
    let output = run_tool(&fixture("harness"), "good_output", &[]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "{\n  \"count\": 3\n}\n");
}

// --- system prompts ------------------------------------------------------------------

fn prompt_json(package: &Path, which: &str) -> (Output, Value) {
    let output = curupira(
        &[
            "spirit",
            "system-prompt",
            package.to_str().unwrap(),
            "--format",
            "json",
        ],
        &[("SPIRIT_TEST_PROMPT", which)],
    );
    let report = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|_| panic!("{which}: {}", stderr(&output)));
    (output, report)
}

#[test]
fn a_system_prompt_is_trimmed_and_a_blank_one_is_none() {
    if !node_or_skip("a_system_prompt_is_trimmed_and_a_blank_one_is_none") {
        return;
    }
    let prompt = fixture("prompt");
    let (output, report) = prompt_json(&prompt, "padded");
    assert_exit(&output, 0);
    assert_eq!(report["system_prompt"], "Padded prompt.");
    assert_eq!(report["source"], "systemPrompt");
    let (output, report) = prompt_json(&prompt, "blank");
    assert_exit(&output, 0);
    assert_eq!(report["system_prompt"], Value::Null);
    // `getSystemPrompt` wins even when it gives "": no prompt, and a warning.
    let (output, report) = prompt_json(&prompt, "dynamic-empty");
    assert_exit(&output, 0);
    assert_eq!(report["system_prompt"], Value::Null);
    let warning = diagnostic(&report, "spirit/ignored-export");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("`getSystemPrompt` always wins"),
        "{warning}"
    );
}

#[test]
fn an_error_collecting_the_system_prompt_gives_no_prompt_and_a_warning() {
    if !node_or_skip("an_error_collecting_the_system_prompt_gives_no_prompt_and_a_warning") {
        return;
    }
    let prompt = fixture("prompt");
    for (which, words) in [
        ("throws", "`getSystemPrompt` failed: no prompt today"),
        (
            "number",
            "`getSystemPrompt` gave a number: expected a string",
        ),
        ("activate-throws", "`activate` failed: activation broke"),
    ] {
        let (output, report) = prompt_json(&prompt, which);
        assert_exit(&output, 0);
        assert_eq!(report["system_prompt"], Value::Null, "{which}");
        assert_eq!(report["error"], Value::Null, "{which}");
        let warning = diagnostic(&report, "spirit/system-prompt-dropped");
        assert!(
            warning["message"].as_str().unwrap().contains(words),
            "{which}: {warning}"
        );
    }
}

#[test]
fn without_the_capability_the_system_prompt_is_not_collected() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("loaded");
    let output = curupira(
        &[
            "spirit",
            "system-prompt",
            fixture("no-prompt-capability").to_str().unwrap(),
            "--format",
            "json",
        ],
        &[("SPIRIT_TEST_MARKER", marker.to_str().unwrap())],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["system_prompt"], Value::Null);
    let warning = diagnostic(&report, "spirit/system-prompt-dropped");
    assert_eq!(warning["path"], "/spiritExtension/requestedCapabilities");
    assert!(!marker.exists(), "the module was loaded");
}

/// The app installs a package whose `main` is a folder and asks it for a system
/// prompt: loading it fails, it logs the error and adds nothing; so does this host,
/// instead of refusing to run it.
#[test]
fn a_main_that_is_a_folder_gives_no_system_prompt_as_in_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("pkg");
    std::fs::create_dir_all(package.join("dist/index.js")).unwrap();
    write(
        &package,
        "package.json",
        r#"{"name": "folder-main", "version": "1.0.0", "main": "dist/index.js",
            "spiritExtension": {"schemaVersion": 1, "displayName": "Folder main",
              "supportedHosts": ["cli"], "requestedCapabilities": ["system-prompt"]}}"#,
    );
    let output = curupira(
        &[
            "spirit",
            "system-prompt",
            package.to_str().unwrap(),
            "--format",
            "json",
        ],
        &[],
    );
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["system_prompt"], Value::Null);
    let warning = diagnostic(&report, "spirit/system-prompt-dropped");
    assert!(
        warning["message"].as_str().unwrap().contains("is a folder"),
        "{warning}"
    );
    // `run-tool` still refuses it: a tool call of the app fails on it too.
    let tool = curupira(&["spirit", "run-tool", package.to_str().unwrap(), "x"], &[]);
    assert_exit(&tool, 1);
}

// --- limits and failures -------------------------------------------------------------

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
