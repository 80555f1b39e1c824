//! The reference host's `settings.toml` given to this host: `validate` checks it as
//! the reference does (its Jinja prompts against the trigger's fields, with the
//! reference's sentences, located in the file) and exits as the reference exits. Runs
//! are compared with the reference's in `reference_replay.rs`.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use run_support::{Project, have_python};
use serde_json::{Value, json};

/// A reference-form file whose one automation uses the fake extension `fx` (prompt
/// fields `title` and `n`), with `prompt` as given (TOML-quoted).
fn settings_toml(prompt: &str) -> String {
    format!(
        "[repositories.demo]\nremote = \"https://github.com/acme/widgets.git\"\n\n\
         [agents.defaults]\nprofile = \"stub\"\n\n[agents.profiles.stub]\nprovider = \"claude\"\n\n\
         [extensions.fx]\npath = \"extensions/fx\"\n\n\
         [automations.e1]\ntrigger_type = \"fx/fake\"\nrepository = \"demo\"\nlabel = \"bug\"\n\
         prompt = {}\n",
        serde_json::to_string(prompt).unwrap()
    )
}

/// `curupira ARGS` in the project with `home` as HOME and `path` as PATH.
fn run_at_home(
    project: &Project,
    home: &std::path::Path,
    path: &str,
    args: &[&str],
) -> std::process::Output {
    std::process::Command::new(run_support::curupira())
        .args(args)
        .current_dir(project.path())
        .env("HOME", home)
        .env("PATH", path)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn project(prompt: &str) -> Project {
    let project = Project::new();
    project.fake_extension("fx", json!({"prompt_fields": ["title", "n"]}));
    project.write("settings.toml", &settings_toml(prompt));
    project
}

/// `(severity, code, path, line, column, message)` of every diagnostic but the agent's
/// (no `claude` on this machine's `PATH`, a warning for a reference-form file).
fn said(run: &run_support::Run) -> Vec<(String, String, String, u64, u64, String)> {
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] != "config/agent-not-runnable")
        .map(|d| {
            (
                d["severity"].as_str().unwrap().to_owned(),
                d["code"].as_str().unwrap().to_owned(),
                d["path"].as_str().unwrap().to_owned(),
                d["line"].as_u64().unwrap_or(0),
                d["column"].as_u64().unwrap_or(0),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_jinja_prompt_that_uses_the_trigger_s_fields_is_valid() {
    if !have_python() {
        return;
    }
    let project =
        project("{% if n == \"1\" %}First: {% endif %}{{ title | upper }} in ${repository}");
    let run = project.curupira(&["validate", "--config", "settings.toml", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(said(&run), []);
    // The extension got the whole table as the reference sends it, with the alias.
    let validate = project
        .calls("fx")
        .into_iter()
        .find(|call| call["method"] == "trigger/validate")
        .unwrap();
    let configuration = &validate["params"]["configuration"];
    assert_eq!(configuration["label"], "bug");
    assert_eq!(configuration["trigger_type"], "fx/fake");
    assert_eq!(
        configuration["repository"], "demo",
        "the alias, as the reference sends it"
    );
}

#[test]
fn a_broken_template_is_a_validate_error_at_its_line_and_column_with_the_reference_s_words() {
    if !have_python() {
        return;
    }
    let project = project("Fix {{ title }\nnow");
    let run = project.curupira(&["validate", "--config", "settings.toml", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    let found = said(&run);
    assert_eq!(found.len(), 1, "{found:?}");
    let (severity, code, path, line, column, message) = &found[0];
    assert_eq!(
        (severity.as_str(), code.as_str()),
        ("error", "config/template")
    );
    assert_eq!(path, "/automations/e1/prompt");
    // The prompt's string is on line 17 of the file, escaped (`\n`): the whole value.
    assert_eq!(*line, 17);
    assert!(*column > 0);
    assert!(
        message.starts_with("automation \"e1\": prompt template error: ")
            && message.contains("Jinja blocks look like"),
        "{message}"
    );
}

#[test]
fn a_variable_the_trigger_does_not_give_is_refused_with_a_did_you_mean() {
    if !have_python() {
        return;
    }
    let project = project("Fix {{ titel }} (${n})");
    let run = project.curupira(&["validate", "--config", "settings.toml", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    let found = said(&run);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].1, "config/template");
    assert_eq!(
        found[0].5,
        "automation \"e1\": prompt uses unknown field(s) \"titel\" (did you mean \"title\"?). \
         Available fields: automation, n, repository, title"
    );
    // At the name, inside the prompt's string on its line.
    let text = project.read("settings.toml");
    let line = text.lines().nth(16).unwrap();
    assert_eq!(found[0].3, 17);
    assert_eq!(
        &line[usize::try_from(found[0].4).unwrap() - 1..][..5],
        "titel"
    );
}

#[test]
fn the_reference_host_s_dispatch_lock_keeps_a_second_host_from_dispatching() {
    if !have_python() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let project = project("{{ title }}");
    let home = project.path().join("home");
    let bin = project.path().join("bin");
    std::fs::create_dir_all(home.join(".curupira")).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    std::fs::write(&claude, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Held as the reference host holds it while it runs: an flock on the file.
    let held = std::fs::File::create(home.join(".curupira/dispatch.lock")).unwrap();
    assert!(curupira_process::lock::try_lock(&held).unwrap());
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let run = |args: &[&str]| run_at_home(&project, &home, &path, args);
    let refused = run(&["run", "--config", "settings.toml"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Dispatch error: another curupira process is already running"),
        "{stderr}"
    );
    assert!(
        !project.methods("fx").iter().any(|m| m == "trigger/poll"),
        "nothing was polled"
    );
    // A dry run takes no lock, as the reference's.
    let dry = run(&["run", "--dry-run", "--config", "settings.toml"]);
    assert_eq!(dry.status.code(), Some(0), "{dry:?}");
    // Released, the file left behind does not block.
    drop(held);
    let free = run(&["run", "--config", "settings.toml"]);
    assert!(
        !String::from_utf8_lossy(&free.stderr).contains("already running"),
        "{free:?}"
    );
}

/// `curu`, the reference's short name, installed beside `curupira`: the same program
/// (the same verdict, output and exit code), whose help and version say `curu`, as the
/// reference's alias does.
#[test]
fn curu_is_curupira_under_the_reference_s_short_name() {
    if !have_python() {
        return;
    }
    let project = project("{{ titel }}");
    let run = |program: &str| {
        std::process::Command::new(program)
            .args(["validate", "--config", "settings.toml", "--format", "json"])
            .current_dir(project.path())
            .env_remove("RUST_LOG")
            .output()
            .unwrap()
    };
    let curu = env!("CARGO_BIN_EXE_curu");
    let (long, short) = (run(run_support::curupira()), run(curu));
    assert_eq!(long.status.code(), Some(2), "{long:?}");
    assert_eq!(short.status.code(), long.status.code());
    assert_eq!(short.stdout, long.stdout);
    let version = std::process::Command::new(curu)
        .arg("--version")
        .output()
        .unwrap();
    assert!(version.status.success());
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("curu "),
        "{version:?}"
    );
    let help = std::process::Command::new(curu)
        .arg("--help")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("Usage: curu <COMMAND>"),
        "{help:?}"
    );
    // Its completion script completes `curu`.
    let script = std::process::Command::new(curu)
        .args(["completions", "bash"])
        .output()
        .unwrap();
    let script = String::from_utf8_lossy(&script.stdout);
    assert!(
        script.contains("complete -F _curu -o bashdefault -o default curu\n"),
        "{script}"
    );
    assert!(
        script.contains("DEBUG INFO WARNING ERROR CRITICAL"),
        "{script}"
    );
}

/// A failed task's `fail` line quotes the agent's output as the reference host quotes
/// it (recorded: `recordings/reference-host/README.md`): its stderr, trimmed, lines and
/// all; without stderr, the last non-blank line of its stdout; nothing, and the `: `
/// stays. The JSON event carries the same quote as `output`.
#[test]
fn a_failed_task_s_line_quotes_the_agent_s_output_as_the_reference_does() {
    if !have_python() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let project = Project::repository();
    project.write("README", "r\n");
    project.git(&["add", "README"]);
    project.git(&["commit", "-q", "-m", "init"]);
    let remote = project.path().join("remote.git");
    project.git(&["clone", "-q", "--bare", ".", remote.to_str().unwrap()]);
    let pair = |key: &str, value: &str| json!({"key": key, "value": value});
    project.fake_extension(
        "fx",
        json!({"prompt_fields": ["title", "n"], "polls": [
            [pair("title", "a"), pair("n", "1")],
            [pair("title", "b"), pair("n", "2")],
            [pair("title", "c"), pair("n", "3")],
            null
        ]}),
    );
    let text = settings_toml("{{ title }}")
        .replace(
            "https://github.com/acme/widgets.git",
            remote.to_str().unwrap(),
        )
        .replace(
            "[repositories.demo]",
            &format!(
                "[settings]\nworkspace_dir = {:?}\n\n[repositories.demo]",
                project.path().join("ws")
            ),
        );
    project.write("settings.toml", &text);
    let bin = project.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // `a`: two stderr lines (and stdout); `b`: a stream on stdout only; `c`: nothing.
    let claude = "#!/bin/sh\nprompt=\"$(cat)\"\nfor last; do :; done\n\
                  case \"$last\" in\n\
                  a) echo out; printf '  err1\\nerr2  \\n\\n' >&2;;\n\
                  b) echo '{\"type\":\"system\"}'; echo '{\"type\":\"result\"}'; echo;;\n\
                  esac\nexit 3\n";
    std::fs::write(bin.join("claude"), claude).unwrap();
    std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = project.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let run = |args: &[&str]| run_at_home(&project, &home, &path, args);
    let ran = run(&["run", "--config", "settings.toml"]);
    assert_eq!(ran.status.code(), Some(1), "{ran:?}");
    let stderr = String::from_utf8_lossy(&ran.stderr);
    let reasons: Vec<&str> = stderr
        .split("fail\t")
        .skip(1)
        .map(|line| line.split_once("\tDispatch error: ").unwrap().1)
        .map(|rest| rest.split("\nfail").next().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "agent exited 3: err1\nerr2\n",
            "agent exited 3: {\"type\":\"result\"}\n",
            "agent exited 3: \nDispatch error: 3 task(s) failed\n",
        ],
        "{stderr}"
    );
    let again = run(&["run", "--config", "settings.toml"]);
    assert_eq!(again.status.code(), Some(0), "nothing new: {again:?}");
    // Our JSON events, from a fresh ledger.
    std::fs::remove_dir_all(home.join(".curupira/curupira-rs")).unwrap();
    let json = run(&["run", "--config", "settings.toml", "--format", "json"]);
    let outputs: Vec<Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["event"] == "task.finished")
        .map(|event| event.get("output").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(
        outputs,
        [
            json!("err1\nerr2"),
            json!("{\"type\":\"result\"}"),
            Value::Null
        ],
        "{json:?}"
    );
}

/// `[settings] log_level` sets the log as `--log-level` does, which (like `-v` and
/// `-q`) wins over it; without either, a reference-form file logs only warnings.
#[test]
fn the_file_s_log_level_sets_the_log_unless_the_command_line_says_otherwise() {
    if !have_python() {
        return;
    }
    let project = project("{{ title }}");
    let text = project.read("settings.toml");
    let stderr = |settings: &str, args: &[&str]| {
        project.write("settings.toml", &format!("{settings}{text}"));
        let mut all = vec!["validate", "--config", "settings.toml"];
        all.extend(args);
        let run = project.curupira(&all);
        assert_eq!(run.code, Some(0), "{run:?}");
        run.stderr
    };
    let debug = "[settings]\nlog_level = \"DEBUG\"\n\n";
    assert!(stderr(debug, &[]).contains(" DEBUG "), "the file's DEBUG");
    assert!(
        !stderr("", &[]).contains(" DEBUG "),
        "the reference form's default"
    );
    assert!(
        !stderr("", &[]).contains(" INFO "),
        "the reference form's default"
    );
    assert!(!stderr(debug, &["-q"]).contains(" DEBUG "), "-q wins");
    assert!(
        !stderr(debug, &["--log-level", "ERROR"]).contains(" DEBUG "),
        "--log-level wins"
    );
    assert!(stderr("", &["--log-level", "debug"]).contains(" DEBUG "));
}
