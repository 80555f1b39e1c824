//! End-to-end tests of `curupira validate`, `curupira plugins list` and
//! `curupira probe`, with the real binary, the built-in `local-queue` and the scripted
//! fake extension (`tests/fakes/scripted_ext.py`); and of a `[plugins.NAME]` entry
//! (the reference host's registration) through `validate`, `plugins list` and `run`,
//! launched by a `uvx` stand-in.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use run_support::{
    Project, Run, curupira, have_python, run_in, run_in_with_path, scripted_ext, settings,
};
use serde_json::{Value, json};

fn diagnostics(run: &run_support::Run) -> Vec<(String, String, String)> {
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["severity"].as_str().unwrap().to_owned(),
                d["code"].as_str().unwrap().to_owned(),
                d["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn validate_checks_everything_before_the_first_poll() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension(
        "fx",
        json!({
            "prompt_fields": ["issue_number", "title"],
            "schema": {"properties": {"label": {"default": "bug"}}}
        }),
    );
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.fx]\npath = \"extensions/fx\"\n\n[automations.fix]\ntrigger = \"fake\"\n\
             prompt = \"Fix #${{issue_numbr}}: ${{title}} in ${{repository}} (${{automation}}, ${{colour}})\"\n",
            settings()
        ),
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(0), "warnings only: {run:?}");
    assert_eq!(
        diagnostics(&run),
        [
            (
                "warning".into(),
                "config/unknown-placeholder".into(),
                "/automations/fix/prompt".into()
            ),
            (
                "warning".into(),
                "config/unknown-placeholder".into(),
                "/automations/fix/prompt".into()
            ),
        ]
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let first = &report["diagnostics"][0];
    assert_eq!(
        (first["line"].clone(), first["column"].clone()),
        (json!(17), json!(16))
    );
    assert!(
        first["message"]
            .as_str()
            .unwrap()
            .ends_with("did you mean `${issue_number}`?"),
        "{first}"
    );
    assert!(
        !report["diagnostics"][1]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean")
    );
    assert_eq!(
        project.methods("fx"),
        [
            "initialize",
            "describe",
            "trigger/schema",
            "trigger/validate",
            "shutdown"
        ],
        "validate never polls"
    );
    let configuration = &project.calls("fx")[3]["params"]["configuration"];
    assert_eq!(
        configuration["label"], "bug",
        "the schema's default applied"
    );
    assert_eq!(configuration["trigger_type"], "fx/fake");

    let human = project.curupira(&["validate"]);
    assert_eq!(human.code, Some(0));
    assert!(
        human.stdout.contains("warning[config/unknown-placeholder]"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("curupira.toml:17:16"),
        "{}",
        human.stdout
    );
}

#[test]
fn validate_reports_rejected_arguments_at_their_pointer() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension(
        "fx",
        json!({"validate_errors": [
            {"path": "/labels/0", "message": "must be a known label"},
            {"path": "", "message": "needs `repo`"}
        ]}),
    );
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.fx]\npath = \"extensions/fx\"\n\n[automations.fix]\ntrigger = \"fake\"\n\
             prompt = \"x\"\narguments = {{ labels = [\"bgu\"] }}\n",
            settings()
        ),
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(
        diagnostics(&run),
        [
            (
                "error".into(),
                "config/trigger-rejected".into(),
                "/automations/fix/arguments/labels/0".into()
            ),
            (
                "error".into(),
                "config/trigger-rejected".into(),
                "/automations/fix/arguments".into()
            ),
        ]
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["diagnostics"][0]["line"], 18);
    assert_eq!(report["errors"], 2);
}

/// The ecosystem's rejection is a result, `{"ok": false, "error": …}`: never lost
/// (earlier hosts took any result for a pass), reported with the extension's words.
#[test]
fn validate_reports_an_ok_false_verdict_with_the_extensions_words() {
    if !have_python() {
        return;
    }
    for (verdict, words) in [
        (
            json!({"ok": false, "error": "limit_total must be at least 1"}),
            "limit_total must be at least 1",
        ),
        (json!({"ok": false}), "no reason given"),
    ] {
        let project = Project::new();
        project.fake_extension("fx", json!({ "validate_result": verdict }));
        project.write(
            "curupira.toml",
            &format!(
                "{}[extensions.fx]\npath = \"extensions/fx\"\n\n[automations.fix]\ntrigger = \"fake\"\n\
                 prompt = \"x\"\narguments = {{ limit_total = 0 }}\n",
                settings()
            ),
        );
        let run = project.curupira(&["validate", "--format", "json"]);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert_eq!(
            diagnostics(&run),
            [(
                "error".into(),
                "config/trigger-rejected".into(),
                "/automations/fix/arguments".into()
            )]
        );
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(
            report["diagnostics"][0]["message"],
            format!("extension `fx` rejected the configuration of automation `fix`: {words}")
        );
        let human = project.curupira(&["validate"]);
        assert_eq!(human.code, Some(2), "{human:?}");
        assert!(!human.stdout.contains("no problems"), "{}", human.stdout);
        assert!(human.stdout.contains(words), "{}", human.stdout);
    }
}

/// A reply that is no verdict at all (`{}`, which earlier hosts accepted) is a
/// broken extension, not a pass.
#[test]
fn validate_refuses_a_validate_reply_without_ok() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension("fx", json!({ "validate_result": {} }));
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.fx]\npath = \"extensions/fx\"\n\n[automations.fix]\ntrigger = \"fake\"\n\
             prompt = \"x\"\n",
            settings()
        ),
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert_eq!(report["diagnostics"][0]["code"], "config/trigger-failed");
    assert!(message.contains("`/ok`"), "{message}");
}

#[test]
fn validate_reports_config_manifest_and_extension_failures() {
    let project = Project::new();
    project.write(
        "extensions/broken/curupira-extension.toml",
        "manifest_version = 1\nname = \"Broken\"\n",
    );
    project.write("extensions/gone/curupira-extension.toml",
        "manifest_version = 1\nname = \"gone\"\nversion = \"1.0.0\"\nprotocol_version = 2\nruntime = \"executable\"\n\
         kind = \"trigger\"\ntrigger_types = [\"never\"]\n[launch]\ntype = \"executable\"\nprogram = \"./does-not-exist\"\n");
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.broken]\npath = \"extensions/broken\"\n\n[extensions.gone]\npath = \"extensions/gone\"\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.a]\ntrigger = \"jsonl\"\nprompt = \"x\"\narguments = {{ path = \"t.jsonl\" }}\n",
            settings()
        ),
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    let found = diagnostics(&run);
    assert!(
        found
            .iter()
            .all(|(_, code, _)| code.starts_with("manifest/")),
        "{found:?}"
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        report["diagnostics"][0]["file"],
        "extensions/broken/curupira-extension.toml"
    );

    // With the broken manifest gone, the extension that cannot start is reported.
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.gone]\npath = \"extensions/gone\"\n\n\
             [automations.a]\ntrigger = \"never\"\nprompt = \"x\"\n\n[automations.b]\ntrigger = \"never\"\nprompt = \"y\"\n",
            settings()
        ),
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        diagnostics(&run),
        [(
            "error".into(),
            "config/extension-failed".into(),
            "/extensions/gone".into()
        )],
        "once per extension"
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "extension `gone`: start failed: transport failure (-32000): cannot start"
        ),
        "{message}"
    );

    // An unreadable config is an I/O error.
    let missing = project.curupira(&["validate", "--config", "nope.toml"]);
    assert_eq!(missing.code, Some(2));
}

#[test]
fn validate_needs_a_repository_only_where_the_prompt_uses_it() {
    let project = Project::new();
    project.write(
        "curupira.toml",
        "[settings.agent]\ncommand = [\"true\"]\n\n[extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.uses]\ntrigger = \"jsonl\"\nprompt = \"in ${repository}\"\narguments = { path = \"t.jsonl\" }\n\n\
         [automations.plain]\ntrigger = \"jsonl\"\nprompt = \"no repo\"\narguments = { path = \"t.jsonl\" }\n",
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(
        diagnostics(&run),
        [(
            "error".into(),
            "config/repository".into(),
            "/automations/uses/prompt".into()
        )]
    );
}

#[test]
fn without_prompt_fields_only_a_misspelt_host_variable_is_warned_about() {
    let project = Project::new();
    project.write("t.jsonl", "{\"issue\": \"1\"}\n");
    project.write(
        "curupira.toml",
        "[settings]\nrepository = \"github.com/acme/widgets\"\n[settings.agent]\ncommand = [\"true\"]\n\n\
         [extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.fix]\ntrigger = \"jsonl\"\n\
         prompt = \"Fix ${issue} in ${repository} for ${automaton}\"\narguments = { path = \"t.jsonl\" }\n",
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        diagnostics(&run),
        [(
            "warning".into(),
            "config/unknown-placeholder".into(),
            "/automations/fix/prompt".into()
        )]
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("`${automaton}`") && message.ends_with("did you mean `${automation}`?"),
        "{message}"
    );
    assert_eq!(
        report["diagnostics"][0]["column"], 45,
        "at the `$` of the placeholder"
    );
}

#[test]
fn plugins_list_still_lists_the_good_extensions_of_a_config_with_errors() {
    let project = Project::new();
    project.write(
        "curupira.toml",
        "[extensions.local]\nbuiltin = \"local-queue\"\n\n[extensions.bad]\npath = 5\n",
    );
    let run = project.curupira(&["plugins", "list", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let listing: Value = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<&str> = listing["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["extension"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["local"]);
    assert_eq!(listing["errors"], 1);
    let errors: Vec<&str> = listing["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(errors, ["/extensions/bad/path"]);
}

#[test]
fn plugins_list_reads_manifests_without_sending_a_frame() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension(
        "fx",
        json!({"triggers": [{"trigger_type": "alpha"}, {"trigger_type": "beta"}]}),
    );
    project.write(
        "curupira.toml",
        "[extensions.local]\nbuiltin = \"local-queue\"\n\n[extensions.fx]\npath = \"extensions/fx\"\n",
    );
    let run = project.curupira(&["plugins", "list", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let listing: Value = serde_json::from_str(&run.stdout).unwrap();
    let extensions = listing["extensions"].as_array().unwrap();
    assert_eq!(extensions.len(), 2);
    assert_eq!(extensions[0]["extension"], "local");
    assert_eq!(extensions[0]["name"], "local-queue");
    assert_eq!(extensions[0]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(extensions[0]["protocol_version"], "2");
    assert_eq!(extensions[0]["runtime"], "executable");
    assert_eq!(extensions[0]["trigger_types"], json!(["jsonl"]));
    assert_eq!(extensions[0]["source"], "builtin local-queue");
    assert_eq!(
        extensions[0]["command_line"],
        format!("{} builtin local-queue", curupira())
    );
    assert_eq!(extensions[1]["name"], "fx");
    assert_eq!(extensions[1]["runtime"], "python");
    assert_eq!(extensions[1]["trigger_types"], json!(["alpha", "beta"]));
    assert_eq!(extensions[1]["launch"]["type"], "executable");
    assert_eq!(extensions[1]["launch"]["program"], "python3");
    assert_eq!(listing["errors"], 0);
    assert!(project.calls("fx").is_empty(), "no frame was sent");

    let human = project.curupira(&["plugins", "list"]);
    assert_eq!(human.code, Some(0));
    assert!(
        human.stdout.starts_with("local: local-queue "),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains(
            "fx: fx 1.0.0 (protocol 2, runtime python, trigger)\n  triggers: alpha, beta\n"
        ),
        "{}",
        human.stdout
    );
}

#[test]
fn plugins_list_reports_an_extension_that_cannot_print_its_manifest() {
    let project = Project::new();
    project.write("extensions/sh/curupira-extension.toml",
        "manifest_version = 1\nname = \"sh\"\nversion = \"1.0.0\"\nprotocol_version = 2\nruntime = \"executable\"\n\
         kind = \"trigger\"\ntrigger_types = [\"t\"]\n[launch]\ntype = \"executable\"\nprogram = \"sh\"\n\
         args = [\"-c\", \"echo 'name = 5'; echo oops >&2; exit 0\"]\n");
    project.write("extensions/fails/curupira-extension.toml",
        "manifest_version = 1\nname = \"fails\"\nversion = \"1.0.0\"\nprotocol_version = 2\nruntime = \"executable\"\n\
         kind = \"trigger\"\ntrigger_types = [\"t\"]\n[launch]\ntype = \"executable\"\nprogram = \"sh\"\n\
         args = [\"-c\", \"echo broken >&2; exit 3\"]\n");
    project.write(
        "curupira.toml",
        "[extensions.sh]\npath = \"extensions/sh\"\n\n[extensions.fails]\npath = \"extensions/fails\"\n",
    );
    let run = project.curupira(&["plugins", "list", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let listing: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(listing["extensions"], json!([]));
    let found = diagnostics(&run);
    assert!(
        found
            .iter()
            .any(|(_, code, _)| code == "manifest/invalid-type"),
        "{found:?}"
    );
    let failed: Vec<&Value> = listing["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "config/extension-failed")
        .collect();
    assert_eq!(failed.len(), 2, "{listing}");
    assert!(
        failed[1]["message"]
            .as_str()
            .unwrap()
            .contains("exit status: 3"),
        "{listing}"
    );
    assert!(
        failed[1]["message"].as_str().unwrap().ends_with(": broken"),
        "{listing}"
    );
}

#[test]
fn probe_passes_the_builtin_extension() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n");
    let run = project.curupira(&[
        "probe",
        "--timeout",
        "3",
        "--arguments",
        r#"{"path": "tasks.jsonl", "done_path": "done.jsonl"}"#,
        "--",
        curupira(),
        "builtin",
        "local-queue",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 9, "{}", run.stdout);
    let steps: Vec<&str> = lines[..8]
        .iter()
        .map(|line| line.split([' ', ':']).nth(1).unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "initialize",
            "describe",
            "trigger/schema",
            "trigger/validate",
            "trigger/poll",
            "trigger/onStarted",
            "trigger/onFinished",
            "shutdown"
        ]
    );
    assert!(
        lines[..8].iter().all(|line| line.starts_with("pass ")),
        "{}",
        run.stdout
    );
    assert!(
        lines[0].starts_with("pass initialize (protocol 2, server local-queue"),
        "{}",
        lines[0]
    );
    assert!(lines[4].contains("n=\"1\""), "{}", lines[4]);
    assert_eq!(
        project.read("done.jsonl"),
        "{\"n\":\"1\"}\n",
        "the hooks ran for real"
    );

    // With the queue done, the poll returns null and the hooks are skipped.
    let again = project.curupira(&[
        "probe",
        "--format",
        "json",
        "--arguments",
        r#"{"path": "tasks.jsonl", "done_path": "done.jsonl"}"#,
        "--",
        curupira(),
        "builtin",
        "local-queue",
    ]);
    assert_eq!(again.code, Some(0), "{again:?}");
    let statuses: Vec<(String, String)> = again
        .events()
        .iter()
        .filter(|s| s.get("verdict").is_none())
        .map(|s| {
            (
                s["step"].as_str().unwrap().into(),
                s["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(statuses[4], ("trigger/poll".into(), "pass".into()));
    assert_eq!(statuses[5], ("trigger/onStarted".into(), "skip".into()));
    assert_eq!(statuses[6], ("trigger/onFinished".into(), "skip".into()));
    assert_eq!(statuses[7], ("shutdown".into(), "pass".into()));
}

#[test]
fn probe_fails_a_broken_extension_and_still_shuts_it_down() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension("fx", json!({"poll_result": {"vals": []}}));
    let plan = project.path().join("extensions/fx/plan.json");
    let script = run_support::scripted_ext();
    let run = run_in(
        project.path(),
        &[
            "probe",
            "--timeout",
            "3",
            "--",
            "python3",
            script.to_str().unwrap(),
            plan.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[4],
        "fail trigger/poll: protocol or version failure (-32001): member `/values` is required \
         (write `\"values\": null` when nothing was found)"
    );
    assert!(
        lines[5].starts_with("skip trigger/onStarted"),
        "{}",
        run.stdout
    );
    assert!(
        lines[6].starts_with("skip trigger/onFinished"),
        "{}",
        run.stdout
    );
    assert!(lines[7].starts_with("pass shutdown"), "{}", run.stdout);
    assert!(
        lines[8].starts_with("the extension does not conform: 1 of 8 steps failed"),
        "{}",
        run.stdout
    );
    assert_eq!(project.methods("fx").last().unwrap(), "shutdown");

    let version = Project::new();
    version.fake_extension("fx", json!({"protocol_version": "3.0"}));
    let plan = version.path().join("extensions/fx/plan.json");
    let run = run_in(
        version.path(),
        &[
            "probe",
            "--",
            "python3",
            script.to_str().unwrap(),
            plan.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stdout.lines().next().unwrap(),
        "fail initialize: protocol or version failure (-32001): protocol version mismatch: the \
         host speaks protocol 2, the extension speaks protocol 3.0 (only the major version is \
         compared)"
    );
    assert!(
        run.stdout
            .contains("skip shutdown (the extension had failed and was killed)"),
        "{}",
        run.stdout
    );

    let nothing = run_in(project.path(), &["probe", "--", "./no-such-extension"]);
    assert_eq!(nothing.code, Some(1));
    assert!(
        nothing
            .stdout
            .starts_with("fail initialize: transport failure (-32000): cannot start"),
        "{}",
        nothing.stdout
    );
}

/// The example of the one-pass rule: `b` has a structural error and an unknown trigger;
/// both are reported at once, `a` is still checked live, and `run` starts nothing.
#[test]
fn validate_reports_structure_and_resolution_problems_in_one_pass() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n");
    project.write(
        "curupira.toml",
        "[settings.agent]\ncommand = [\"cat\"]\n[extensions.local]\nbuiltin = \"local-queue\"\n\
         [automations.a]\ntrigger = \"jsonl\"\nprompt = \"x\"\narguments = { path = \"tasks.jsonl\" }\n\
         [automations.b]\ntrigger = \"github-issue\"\nprompt = \"x\"\nprompt_file = \"y.md\"\n",
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(
        diagnostics(&run),
        [
            (
                "error".into(),
                "config/prompt-conflict".into(),
                "/automations/b/prompt_file".into()
            ),
            (
                "error".into(),
                "config/unknown-trigger".into(),
                "/automations/b/trigger".into()
            ),
        ]
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["diagnostics"][1]["line"], 10);
    assert!(
        report["diagnostics"][1]["message"]
            .as_str()
            .unwrap()
            .starts_with("no extension offers the trigger `github-issue` used by automation `b`"),
        "{report}"
    );

    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    // No event (nothing started): the diagnostics, as `validate --format json` prints them.
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        report["diagnostics"][0]["code"] == "config/prompt-conflict"
            && report["diagnostics"][1]["code"] == "config/unknown-trigger",
        "{}",
        run.stdout
    );
    assert!(!project.exists("done.jsonl"), "no task ran");
}

#[test]
fn a_structural_error_elsewhere_does_not_skip_the_live_checks() {
    let project = Project::new();
    project.write(
        "curupira.toml",
        "[settings.agent]\ncommand = [\"cat\"]\n\n[extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [extensions.bad]\npath = \"\"\n\n\
         [automations.broken]\ntrigger = \"jsonl\"\nprompt = \"x\"\npolling = { batch_size = 0 }\n\n\
         [automations.a]\ntrigger = \"jsonl\"\nprompt = \"x\"\narguments = { path = 5 }\n",
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(
        diagnostics(&run),
        [
            (
                "error".into(),
                "config/invalid-value".into(),
                "/extensions/bad/path".into()
            ),
            (
                "error".into(),
                "config/batch-size".into(),
                "/automations/broken/polling/batch_size".into()
            ),
            (
                "error".into(),
                "config/trigger-rejected".into(),
                "/automations/a/arguments/path".into()
            ),
        ],
        "`broken` is not checked live, `a` is; `bad` hides no trigger `jsonl` offers"
    );
}

#[test]
fn rejected_arguments_do_not_hide_a_misspelt_placeholder() {
    let project = Project::new();
    project.write(
        "curupira.toml",
        "[settings.agent]\ncommand = [\"cat\"]\n\n[extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.a]\ntrigger = \"jsonl\"\nprompt = \"Do it for ${automaton}\"\narguments = { path = 5 }\n",
    );
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(
        diagnostics(&run),
        [
            (
                "error".into(),
                "config/trigger-rejected".into(),
                "/automations/a/arguments/path".into()
            ),
            (
                "warning".into(),
                "config/unknown-placeholder".into(),
                "/automations/a/prompt".into()
            ),
        ]
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        report["diagnostics"][1]["message"]
            .as_str()
            .unwrap()
            .ends_with("did you mean `${automation}`?"),
        "{report}"
    );
}

/// A project for `[plugins.fx] type = "uvx"`: the config in `conf/`, the host run from
/// `work/` (a different folder, so that the extension's working directory tells which
/// one the host gave it), and a `uvx` stand-in in `bin/`.
///
/// `uvx` is not installed here, and a test must not need the network, so `bin/uvx`
/// (first on `PATH` in every run of these tests, whether a real `uvx` exists or not)
/// stands in for it as `../shared/conformance/curupira-wire/settings/README.md`
/// describes: it appends its working directory and its arguments to `uvx.log`, drops
/// `--from PACKAGE` and other leading options, and execs the rest. The plugin's
/// `args` run the scripted fake extension with `plan.json`, a path relative to the
/// host's working directory (`work/plan.json`); the fake logs every request with its
/// working directory to `work/calls.jsonl`.
struct PluginProject {
    project: Project,
}

impl PluginProject {
    /// The layout above; `plan` is the fake's plan (its `log` is set here), `config`
    /// the config after the usual settings.
    fn new(plan: Value, config: &str) -> Self {
        let project = Project::new();
        let root = project.path().to_path_buf();
        fs::create_dir_all(root.join("work")).unwrap();
        let mut plan = plan;
        plan["log"] = Value::from(root.join("work/calls.jsonl").to_str().unwrap());
        project.write("work/plan.json", &plan.to_string());
        let log = root.join("uvx.log");
        project.write(
            "bin/uvx",
            &format!(
                "#!/bin/sh\n\
                 # A stand-in for uvx: logs, drops leading options, runs the rest.\n\
                 {{ pwd -P; for arg in \"$@\"; do printf '%s\\n' \"$arg\"; done; echo --; }} >> '{}'\n\
                 while [ $# -gt 0 ]; do\n  case \"$1\" in\n    --from) shift 2 ;;\n    -*) shift ;;\n    *) break ;;\n  esac\ndone\n\
                 exec \"$@\"\n",
                log.display()
            ),
        );
        let uvx = root.join("bin/uvx");
        fs::set_permissions(&uvx, fs::Permissions::from_mode(0o755)).unwrap();
        project.write("conf/curupira.toml", &format!("{}{config}", settings()));
        PluginProject { project }
    }

    /// The `[plugins.fx]` table: `uvx --from fake-pkg python3 <scripted fake> plan.json`.
    fn table() -> String {
        format!(
            "[plugins.fx]\ntype = \"uvx\"\nargs = [\"--from\", \"fake-pkg\", \"python3\", {:?}, \"plan.json\"]\n\n",
            scripted_ext().to_str().unwrap()
        )
    }

    fn work(&self) -> PathBuf {
        self.project.path().join("work").canonicalize().unwrap()
    }

    /// `curupira ARGS… --config ../conf/curupira.toml`, run in `work/`.
    fn curupira(&self, args: &[&str]) -> Run {
        let mut all = args.to_vec();
        all.extend(["--config", "../conf/curupira.toml"]);
        run_in_with_path(
            &self.project.path().join("work"),
            &self.project.path().join("bin"),
            &all,
        )
    }

    /// The requests the fake received, in order.
    fn calls(&self) -> Vec<Value> {
        match fs::read_to_string(self.project.path().join("work/calls.jsonl")) {
            Ok(text) => text
                .lines()
                .map(|line| serde_json::from_str(line).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    fn methods(&self) -> Vec<String> {
        self.calls()
            .iter()
            .map(|call| call["method"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Each `uvx` run the stand-in saw: its working directory, then its arguments.
    fn uvx_runs(&self) -> Vec<Vec<String>> {
        let text = fs::read_to_string(self.project.path().join("uvx.log")).unwrap_or_default();
        text.split_terminator("--\n")
            .map(|run| run.lines().map(str::to_owned).collect())
            .collect()
    }

    /// What `uvx` must have been run with: the plugin's `args`, nothing added, in
    /// `work/`.
    fn expected_uvx_run(&self) -> Vec<String> {
        vec![
            self.work().to_str().unwrap().to_owned(),
            "--from".to_owned(),
            "fake-pkg".to_owned(),
            "python3".to_owned(),
            scripted_ext().to_str().unwrap().to_owned(),
            "plan.json".to_owned(),
        ]
    }
}

fn issues_plan() -> Value {
    json!({
        "triggers": [{"trigger_type": "issues", "prompt_fields": ["n"]}],
        "prompt_fields": ["n"],
        "polls": [[{"key": "n", "value": "7"}], [{"key": "n", "value": "8"}]]
    })
}

#[test]
fn a_uvx_plugin_is_described_validated_and_run_in_the_host_s_own_directory() {
    if !have_python() {
        return;
    }
    let config = format!(
        "{}[automations.by-alias]\ntrigger = \"fx/issues\"\nprompt = \"Issue ${{n}} of ${{repository}}\"\n\
         polling = {{ batch_size = 1 }}\n\n[automations.bare]\ntrigger = \"issues\"\n\
         prompt = \"Issue ${{n}}\"\npolling = {{ batch_size = 1 }}\n",
        PluginProject::table()
    );
    let plugin = PluginProject::new(issues_plan(), &config);

    let validate = plugin.curupira(&["validate", "--format", "json"]);
    assert_eq!(validate.code, Some(0), "{validate:?}");
    assert_eq!(diagnostics(&validate), []);
    assert_eq!(
        plugin.methods(),
        [
            // The plan: a process for `describe` alone, as the reference host does.
            "initialize",
            "describe",
            "shutdown",
            // validate's own conversation.
            "initialize",
            "describe",
            "trigger/schema",
            "trigger/validate",
            "trigger/schema",
            "trigger/validate",
            "shutdown"
        ]
    );
    let calls = plugin.calls();
    let work = plugin.work();
    for call in &calls {
        assert_eq!(
            Path::new(call["cwd"].as_str().unwrap())
                .canonicalize()
                .unwrap(),
            work,
            "the host's own working directory, not the config's folder: {call}"
        );
    }
    // Both spellings resolve to the same pair, sent as `alias/local`.
    assert_eq!(
        calls[6]["params"]["configuration"]["trigger_type"],
        "fx/issues"
    );
    assert_eq!(
        calls[8]["params"]["configuration"]["trigger_type"],
        "fx/issues"
    );
    assert_eq!(calls[5]["params"]["trigger_type"], "issues");
    assert_eq!(
        plugin.uvx_runs(),
        [plugin.expected_uvx_run(), plugin.expected_uvx_run()],
        "`uvx ARGS…` verbatim, twice: describe, then validate"
    );

    let run = plugin.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let mut finished: Vec<(String, String)> = run
        .events_named("task.finished")
        .iter()
        .map(|event| {
            (
                event["automation"].as_str().unwrap().to_owned(),
                event["values"][0]["value"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    finished.sort();
    let automations: Vec<&str> = finished.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(automations, ["bare", "by-alias"], "{finished:?}");
    let mut values: Vec<&str> = finished.iter().map(|(_, v)| v.as_str()).collect();
    values.sort_unstable();
    assert_eq!(values, ["7", "8"], "one item each, both from the plugin");
    let prompts: Vec<String> = fs::read_dir(plugin.project.path().join("conf/out"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("prompt-")
        })
        .map(|path| fs::read_to_string(path).unwrap())
        .collect();
    assert_eq!(
        prompts.len(),
        2,
        "the agent ran in the config's folder: {prompts:?}"
    );
    let calls = plugin.calls();
    let polls: Vec<&Value> = calls
        .iter()
        .filter(|call| call["method"] == "trigger/poll")
        .collect();
    assert_eq!(polls.len(), 2);
    for poll in polls {
        assert_eq!(poll["params"]["trigger_type"], "issues");
        assert_eq!(poll["params"]["automation"]["trigger_type"], "fx/issues");
        assert_eq!(
            Path::new(poll["cwd"].as_str().unwrap())
                .canonicalize()
                .unwrap(),
            work
        );
    }
    assert_eq!(
        plugin.uvx_runs().len(),
        5,
        "validate's describe and its preparation, then run's describe, its preparation \
         and its one round"
    );
}

#[test]
fn plugins_list_lists_a_plugin_from_its_describe() {
    if !have_python() {
        return;
    }
    let config = format!(
        "[extensions.local]\nbuiltin = \"local-queue\"\n\n{}",
        PluginProject::table()
    );
    let plugin = PluginProject::new(issues_plan(), &config);
    let run = plugin.curupira(&["plugins", "list", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let listing: Value = serde_json::from_str(&run.stdout).unwrap();
    let extensions = listing["extensions"].as_array().unwrap();
    assert_eq!(extensions.len(), 2, "{listing}");
    assert_eq!(extensions[0]["extension"], "local");
    let fx = &extensions[1];
    let script = scripted_ext().to_str().unwrap().to_owned();
    assert_eq!(
        *fx,
        json!({
            "extension": "fx",
            "source": "describe",
            "name": "scripted",
            "version": "1.0.0",
            "protocol_version": "2",
            "runtime": null,
            "kind": "trigger",
            "trigger_types": ["issues"],
            "launch": {"type": "uvx", "args": ["--from", "fake-pkg", "python3", script, "plan.json"]},
            "command_line": format!("uvx --from fake-pkg python3 {script} plan.json"),
        })
    );
    assert_eq!(
        plugin.methods(),
        ["initialize", "describe", "shutdown"],
        "asked, not given `--curupira-print-manifest`"
    );
    assert_eq!(plugin.uvx_runs(), [plugin.expected_uvx_run()]);

    let human = plugin.curupira(&["plugins", "list"]);
    assert_eq!(human.code, Some(0), "{human:?}");
    assert!(
        human.stdout.contains(&format!(
            "fx: scripted 1.0.0 (protocol 2, a [plugins] entry: no manifest)\n  triggers: issues\n  \
             launch: uvx --from fake-pkg python3 {script} plan.json\n"
        )),
        "{}",
        human.stdout
    );
}

#[test]
fn triggers_are_addressed_as_alias_slash_local_and_every_miss_is_reported() {
    if !have_python() {
        return;
    }
    let plugin = PluginProject::new(
        issues_plan(),
        &format!(
            "[extensions.other]\npath = \"../extensions/other\"\n\n{}\
             [automations.ambiguous]\ntrigger = \"issues\"\nprompt = \"p\"\n\n\
             [automations.colon]\ntrigger = \"fx:issues\"\nprompt = \"p\"\n\n\
             [automations.misspelt-alias]\ntrigger = \"fz/issues\"\nprompt = \"p\"\n\n\
             [automations.misspelt-type]\ntrigger = \"fx/issuse\"\nprompt = \"p\"\n\n\
             [automations.chosen]\ntrigger = \"other/issues\"\nprompt = \"p\"\n",
            PluginProject::table()
        ),
    );
    // `[extensions.other]` offers `issues` too (its `path` is relative to the
    // config's folder).
    plugin.project.fake_extension(
        "other",
        json!({"triggers": [{"trigger_type": "issues", "prompt_fields": []}]}),
    );
    let run = plugin.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let found: Vec<(String, String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["path"].as_str().unwrap().to_owned(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "config/colon-trigger".to_owned(),
                "/automations/colon/trigger".to_owned(),
                "`trigger = \"fx:issues\"` uses `:`, which no longer separates the extension \
                 from the trigger type; did you mean `fx/issues`?"
                    .to_owned()
            ),
            (
                "config/ambiguous-trigger".to_owned(),
                "/automations/ambiguous/trigger".to_owned(),
                "the trigger `issues` of automation `ambiguous` is offered by the extensions \
                 `other` and `fx`; write `other/issues` or `fx/issues` to choose"
                    .to_owned()
            ),
            (
                "config/unknown-extension".to_owned(),
                "/automations/misspelt-alias/trigger".to_owned(),
                "automation `misspelt-alias` names the extension `fz`, which is configured \
                 neither in `[extensions]` nor in `[plugins]`, nor installed (`curupira plugins \
                 install`); did you mean `fx/issues`?"
                    .to_owned()
            ),
            (
                "config/unknown-trigger".to_owned(),
                "/automations/misspelt-type/trigger".to_owned(),
                "extension `fx` offers no trigger `issuse` (it offers `fx/issues`); did you \
                 mean `fx/issues`?"
                    .to_owned()
            ),
        ]
    );
    // `chosen` resolved, so the live checks talked to `other` about it.
    let other = plugin.project.methods("other");
    assert!(other.contains(&"trigger/validate".to_owned()), "{other:?}");
}

#[test]
fn a_plugin_that_cannot_describe_itself_stops_the_run_before_it_starts() {
    let plugin = PluginProject::new(
        json!({}),
        "[plugins.fx]\ntype = \"uvx\"\nargs = [\"--from\", \"nothing\", \"no-such-program-here\"]\n\n\
         [automations.a]\ntrigger = \"fx/issues\"\nprompt = \"p\"\n",
    );
    let validate = plugin.curupira(&["validate", "--format", "json"]);
    assert_eq!(validate.code, Some(1), "{validate:?}");
    let report: Value = serde_json::from_str(&validate.stdout).unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(
        diagnostics.len(),
        1,
        "no second error for the automation: {report}"
    );
    assert_eq!(diagnostics[0]["code"], "config/extension-failed");
    assert_eq!(diagnostics[0]["path"], "/plugins/fx");
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "plugin `fx` has no manifest, so its trigger types are asked with `describe`, \
             which failed: extension `fx`: initialize failed:"
        ),
        "{message}"
    );
    let run = plugin.curupira(&["run", "--once"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("error[config/extension-failed]"),
        "{}",
        run.stderr
    );
    assert_eq!(plugin.uvx_runs().len(), 2, "only the describe attempts");
}
