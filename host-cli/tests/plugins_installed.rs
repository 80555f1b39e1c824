//! `curupira plugins install | info | uninstall` and the installed part of `plugins
//! list`, in a throw-away home: what is written to `~/.curupira/extensions/`, what is
//! asked and answered, and what a bad source or manifest gets. (The same cases against
//! the reference host's recordings: `ecosystem.rs`, which needs the published
//! packages.)

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// A folder extension's manifest.
const LOCAL: &str = "manifest_version = 1\nname = \"local-ext\"\nversion = \"0.2.0\"\n\
                     protocol_version = 2\nruntime = \"python\"\nkind = \"trigger\"\n\
                     trigger_types = [\"items\", \"other\"]\ndescription = \"A folder extension\"\n\n\
                     [launch]\ntype = \"executable\"\nprogram = \"python3\"\nargs = [\"ext.py\"]\n";

/// `curupira ARGS` with `home` as HOME and `home/bin` first on PATH, `stdin` as input.
fn curupira(home: &Path, args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    let path = format!(
        "{}:{}",
        home.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let mut child = Command::new(run_support::curupira())
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("PATH", path)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn kept(home: &Path, name: &str) -> Option<String> {
    fs::read_to_string(
        home.join(".curupira/extensions")
            .join(name)
            .join("curupira-extension.toml"),
    )
    .ok()
}

#[test]
fn a_folder_is_installed_as_it_is_after_asking_and_listed_by_its_triggers() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    fs::create_dir_all(home.join("local-ext")).unwrap();
    fs::write(home.join("local-ext/curupira-extension.toml"), LOCAL).unwrap();

    // Nothing installed, no config: the built-in `cron`, then the agent providers,
    // one line each.
    let (code, out, _) = curupira(home, &["plugins", "list"], "");
    assert_eq!(code, Some(0));
    let agents: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(
        agents,
        [
            "cron",
            "agent:claude",
            "agent:codex",
            "agent:copilot",
            "agent:cursor",
            "agent:gemini",
            "agent:kilo",
            "agent:opencode",
            "agent:pi",
            "agent:qwen"
        ]
    );

    // Asked first: the end of input and `n` cancel, before anything is read.
    for answer in ["", "n\n", "maybe\n"] {
        let (code, out, err) = curupira(home, &["plugins", "install", "path:local-ext"], answer);
        assert_eq!(code, Some(1), "{answer:?}");
        assert!(out.is_empty());
        assert_eq!(
            err,
            "Install extension from path:local-ext? [y/N] installation cancelled\n"
        );
        assert_eq!(kept(home, "local-ext"), None);
    }
    let (code, out, _) = curupira(home, &["plugins", "install", "path:local-ext"], " Yes\n");
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "Installed extension local-ext\n")
    );
    assert_eq!(
        kept(home, "local-ext").unwrap(),
        LOCAL,
        "a folder's manifest is copied"
    );

    let (code, out, _) = curupira(home, &["plugins", "list"], "");
    assert_eq!(code, Some(0));
    assert!(
        out.ends_with(
            "items\tlocal-ext 0.2.0\tprompt fields: (see extension)\n\
         other\tlocal-ext 0.2.0\tprompt fields: (see extension)\n"
        ),
        "{out}"
    );
    // `info` prints it as the reference does: its keys, the reference's defaults.
    let (code, out, _) = curupira(home, &["plugins", "info", "local-ext"], "");
    assert_eq!(code, Some(0));
    assert!(
        out.contains(
            "trigger_types = [\n    \"items\",\n    \"other\",\n]\nagent_providers = []\n"
        ),
        "{out}"
    );
    assert!(
        out.ends_with("[capabilities]\npermissions = []\n\n"),
        "{out:?}"
    );
    assert!(!out.contains("description"), "{out}");

    let (code, out, _) = curupira(home, &["plugins", "uninstall", "local-ext"], "");
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "Uninstalled extension local-ext\n")
    );
    assert_eq!(kept(home, "local-ext"), None);
    for command in ["info", "uninstall"] {
        let (code, _, err) = curupira(home, &["plugins", command, "local-ext"], "");
        assert_eq!(code, Some(1));
        assert_eq!(
            err,
            "error: extension \"local-ext\" is not installed (see `curupira plugins list`)\n"
        );
    }
}

#[test]
fn a_package_s_manifest_is_asked_of_npx_and_kept_as_the_reference_writes_it() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    fs::create_dir_all(home.join("bin")).unwrap();
    // `npx --yes demo-ext@1.0.0 --curupira-print-manifest`, logged.
    let npx = format!(
        "#!/bin/sh\necho \"$*\" >> {log}\ncat <<'EOF'\nmanifest_version = 1\nname = \"demo-ext\"\n\
         version = \"1.0.0\"\nprotocol_version = 2\nruntime = \"node\"\nkind = \"trigger\"\n\
         trigger_types = [\"demo\"]\n\n[launch]\ntype = \"npx\"\npackage = \"demo-ext\"\n\
         executable = \"demo-ext\"\n\n[package]\nsource = \"npm\"\nname = \"demo-ext\"\n\
         version = \"1.0.0\"\nEOF\n",
        log = home.join("npx.log").display()
    );
    fs::write(home.join("bin/npx"), npx).unwrap();
    fs::set_permissions(home.join("bin/npx"), fs::Permissions::from_mode(0o755)).unwrap();
    let (code, out, err) = curupira(
        home,
        &["plugins", "install", "npm:demo-ext@1.0.0", "--yes"],
        "",
    );
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "Installed extension demo-ext\n"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(home.join("npx.log")).unwrap(),
        "--yes demo-ext@1.0.0 --curupira-print-manifest\n"
    );
    // As recorded from the reference host (`plugins.json`).
    assert_eq!(
        kept(home, "demo-ext").unwrap(),
        "manifest_version = 1\nname = \"demo-ext\"\nversion = \"1.0.0\"\nprotocol_version = 2\n\
         runtime = \"node\"\nkind = \"trigger\"\ntrigger_types = [\"demo\"]\n\
         agent_providers = []\n\n[launch]\ntype = \"npx\"\npackage = \"demo-ext\"\nargs = []\n\n\
         [package]\nsource = \"npm\"\nname = \"demo-ext\"\nversion = \"1.0.0\"\n\n\
         [capabilities]\npermissions = []\n"
    );
}

#[test]
fn a_bad_source_or_manifest_installs_nothing_and_says_why() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    fs::create_dir_all(home.join("bad")).unwrap();
    fs::write(
        home.join("bad/curupira-extension.toml"),
        "manifest_version = 1\nname = \"bad\"\n",
    )
    .unwrap();
    let (code, _, err) = curupira(home, &["plugins", "install", "git:https://x", "--yes"], "");
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("error: unsupported extension source \"git:https://x\"; use pip:"),
        "{err}"
    );
    let (code, _, err) = curupira(home, &["plugins", "install", "path:bad", "--yes"], "");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("error[manifest/"),
        "the manifest's own diagnostics: {err}"
    );
    assert!(
        err.ends_with("error: the manifest of path:bad has errors; nothing was installed\n"),
        "{err}"
    );
    let (code, _, err) = curupira(home, &["plugins", "install", "path:nowhere", "--yes"], "");
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("error: cannot read ")
            && err.contains("/nowhere/curupira-extension.toml: No such file"),
        "{err}"
    );
    assert!(
        !home.join(".curupira/extensions").exists()
            || fs::read_dir(home.join(".curupira/extensions"))
                .unwrap()
                .count()
                == 0
    );
}

/// Beyond the reference host: an automation names an installed extension by its name,
/// with no `[extensions]` or `[plugins]` table of its own.
#[test]
fn an_automation_may_name_an_installed_extension() {
    if !run_support::have_python() {
        return;
    }
    let project = run_support::Project::new();
    let pair = |value: &str| serde_json::json!([{"key": "n", "value": value}]);
    project.fake_extension(
        "fx",
        serde_json::json!({"polls": [pair("1"), serde_json::Value::Null]}),
    );
    let home = project.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let config = format!(
        "{}[automations.auto]\ntrigger = \"fx/fake\"\nprompt = \"Item ${{n}}\"\n",
        run_support::settings()
    );
    project.write("curupira.toml", &config);
    let run = |args: &[&str]| {
        Command::new(run_support::curupira())
            .args(args)
            .current_dir(project.path())
            .env("HOME", &home)
            .env_remove("RUST_LOG")
            .output()
            .unwrap()
    };
    // Not installed: the automation's extension is unknown, and says where to look.
    let before = run(&["validate"]);
    assert_eq!(before.status.code(), Some(2), "{before:?}");
    assert!(
        String::from_utf8_lossy(&before.stdout)
            .contains("nor installed (`curupira plugins install`)")
            || String::from_utf8_lossy(&before.stderr)
                .contains("nor installed (`curupira plugins install`)"),
        "{before:?}"
    );
    let source = format!("path:{}", project.path().join("extensions/fx").display());
    let installed = run(&["plugins", "install", &source, "--yes"]);
    assert!(installed.status.success(), "{installed:?}");
    // The JSON listing of this host's form has what is installed beside what is
    // configured.
    let listed = run(&["plugins", "list", "--format", "json"]);
    assert_eq!(listed.status.code(), Some(0), "{listed:?}");
    let listing: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let installed = listing["installed"].as_array().unwrap();
    assert_eq!(installed.len(), 1, "{listing}");
    assert_eq!(installed[0]["trigger_types"], serde_json::json!(["fake"]));
    assert!(
        installed[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("curupira-extension.toml"),
        "{listing}"
    );
    assert!(listing["extensions"].is_array(), "{listing}");
    let ran = run(&["run", "--once", "--format", "json"]);
    assert_eq!(ran.status.code(), Some(0), "{ran:?}");
    let finished = String::from_utf8_lossy(&ran.stdout)
        .lines()
        .filter(|line| line.contains("\"task.finished\""))
        .count();
    assert_eq!(finished, 1);
    assert_eq!(
        project.read(&format!("out/prompt-{}.txt", first_task_id(&project))),
        "Item 1"
    );
}

/// The id of the one task the recording agent saw (its prompt file's name).
fn first_task_id(project: &run_support::Project) -> String {
    let name = fs::read_dir(project.path().join("out"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .find(|name| name.starts_with("prompt-"))
        .unwrap();
    name.trim_start_matches("prompt-")
        .trim_end_matches(".txt")
        .to_owned()
}
