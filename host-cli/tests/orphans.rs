//! Bounded whatever an extension's children do (issue 12, item 6): an extension that
//! leaves a process of its own session (`setsid`) holding its stdout, during
//! `--curupira-print-manifest` and during a poll.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::time::Duration;

use run_support::{Project, have_python, settings};
use serde_json::json;

/// Kills the `sleep`s the fake started outside its process group, when a test left
/// them (`plugins list` has no watchdog; a run's stops them).
struct Orphans(std::path::PathBuf);

impl Drop for Orphans {
    fn drop(&mut self) {
        let pids = std::fs::read_to_string(&self.0).unwrap_or_default();
        for pid in pids.split_whitespace() {
            let _ = std::process::Command::new("kill").arg(pid).status();
        }
    }
}

#[test]
fn plugins_list_ends_within_its_bound_when_a_setsid_child_holds_stdout() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    let pids = project.path().join("orphans.pid");
    let _orphans = Orphans(pids.clone());
    project.fake_extension(
        "lingering",
        json!({"orphan_on_manifest": true, "orphan_pid_file": pids.to_str().unwrap()}),
    );
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.lingering]\npath = \"extensions/lingering\"\n",
            settings()
        ),
    );
    let run = project.curupira(&["plugins", "list", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let listed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        listed["extensions"][0]["name"],
        json!("lingering"),
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&pids).unwrap().lines().count(),
        1,
        "the fake did leave a process holding stdout"
    );
    // `[settings.timeouts] initialize` is 3 s; the `sleep` holding stdout lasts 30 s.
    assert!(
        run.elapsed < Duration::from_secs(10),
        "took {:?}, past the bound",
        run.elapsed
    );
    assert!(
        run.stderr
            .contains("a process it started still holds its stdout"),
        "{run:?}"
    );
}

#[test]
fn run_reports_the_exit_status_of_an_extension_whose_child_holds_stdout() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    let pids = project.path().join("orphans.pid");
    let _orphans = Orphans(pids.clone());
    project.fake_extension(
        "dying",
        json!({"orphan_on_poll_exit": 7, "orphan_pid_file": pids.to_str().unwrap()}),
    );
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.dying]\npath = \"extensions/dying\"\n\n[automations.work]\n\
             trigger = \"fake\"\nprompt = \"x\"\n",
            settings().replace("request = 3", "request = 20")
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let failed = run.events_named("automation.failed");
    assert_eq!(failed.len(), 1, "{run:?}");
    assert_eq!(
        failed[0]["code"],
        json!(-32000),
        "a transport failure, not -32004"
    );
    let message = failed[0]["message"].as_str().unwrap();
    assert!(
        message.contains("exited with status 7 without replying"),
        "{message}"
    );
    assert!(
        run.elapsed < Duration::from_secs(15),
        "seen at the exit, not the 20 s request timeout: {:?}",
        run.elapsed
    );
    // What it left in a session of its own carries the extension's label, and the run
    // has ended: the watchdog stopped it (Linux).
    if cfg!(target_os = "linux") {
        let pids = std::fs::read_to_string(&pids).unwrap();
        let left: Vec<&str> = pids.split_whitespace().collect();
        assert!(!left.is_empty(), "the fake did leave a process");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let alive = |pid: &&str| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").starts_with(" Z"))
        };
        while left.iter().any(alive) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!left.iter().any(alive), "left alive: {left:?}");
    }
}
