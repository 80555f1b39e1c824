//! `examples/quickstart` works on a fresh clone: `curupira run --once` dispatches its
//! tasks through the built-in `local-queue` to the stand-in agent, and a second run
//! does not redo them. The folder is copied, as it ships, to a temporary directory
//! first, so the repository's copy stays untouched and what a user's own run of the
//! README's quick start left there (its `.curupira/` ledger, `done.jsonl`) changes
//! nothing here.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;
mod tree_support;

use std::fs;
use std::path::Path;
use std::process::Command;

use run_support::run_in;
use tree_support::{copy_example, copy_example_from};

/// The quick start in `work/quickstart`, run twice as the README says: every task
/// once, then nothing.
fn dispatches_its_tasks_once(work: &Path) {
    let folder = work.join("quickstart");
    let tasks = fs::read_to_string(folder.join("tasks.jsonl")).unwrap();
    let task_count = tasks.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(task_count >= 2, "the example has a few tasks");

    // Run from the temporary folder's parent, naming the config by path, as the
    // README's command does from the repository root.
    let config = "quickstart/curupira.toml";
    let first = run_in(
        work,
        &["run", "--once", "--format", "json", "--config", config],
    );
    assert_eq!(first.code, Some(0), "{first:?}");
    let finished = first.events_named("task.finished");
    assert_eq!(finished.len(), task_count, "{first:?}");
    assert!(
        finished
            .iter()
            .all(|e| e["exit_code"] == 0 && e["automation"] == "triage")
    );
    assert!(
        first.stderr.contains("agent: task "),
        "the agent's output goes to stderr: {}",
        first.stderr
    );
    assert!(
        first.stderr.contains("agent: | Issue #1: "),
        "{}",
        first.stderr
    );
    let done = fs::read_to_string(folder.join("done.jsonl")).unwrap();
    assert_eq!(done.lines().count(), task_count);

    let second = run_in(
        work,
        &["run", "--once", "--format", "json", "--config", config],
    );
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(second.event_names(), ["round.finished"]);
    assert_eq!(second.events()[0]["polled"], 0);

    let validate = run_in(work, &["validate", "--config", config]);
    assert_eq!(validate.code, Some(0), "{validate:?}");
}

#[test]
fn the_quickstart_dispatches_its_tasks_once() {
    let work = tempfile::tempdir().unwrap();
    copy_example("quickstart", &work.path().join("quickstart"));
    dispatches_its_tasks_once(work.path());
}

/// Issue 24: the README's quick start run in a checkout, then `cargo test`, failed
/// this suite: the test's copy took the `.curupira/` ledger and `done.jsonl` the
/// user's run had left, and all three tasks were skipped. Here a checkout-like tree
/// gets the quick start's run for real, then the suite's own copy is made from it.
#[test]
fn what_a_users_run_left_in_the_example_is_not_copied() {
    let checkout = tempfile::tempdir().unwrap();
    let example = checkout.path().join("examples/quickstart");
    copy_example("quickstart", &example);
    let users_run = run_in(
        checkout.path(),
        &[
            "run",
            "--once",
            "--config",
            "examples/quickstart/curupira.toml",
        ],
    );
    assert_eq!(users_run.code, Some(0), "{users_run:?}");
    assert!(example.join(".curupira/ledger.sqlite").is_file());
    assert!(example.join("done.jsonl").is_file());
    fs::write(example.join("done.jsonl.rejected"), "left by a run\n").unwrap();

    let work = tempfile::tempdir().unwrap();
    copy_example_from(
        checkout.path(),
        "quickstart",
        &work.path().join("quickstart"),
    );
    for left in [".curupira", "done.jsonl", "done.jsonl.rejected"] {
        assert!(
            !work.path().join("quickstart").join(left).exists(),
            "{left} was copied"
        );
    }
    dispatches_its_tasks_once(work.path());
}

/// What a run leaves in the example is what Git ignores, so the copy's rule (the
/// example's `.gitignore`, and folders that ignore all they hold) is Git's: after a
/// run, `git status` shows nothing new.
#[test]
fn a_run_leaves_nothing_git_would_commit() {
    let git = |dir: &Path, args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
    };
    let checkout = tempfile::tempdir().unwrap();
    let Ok(init) = git(checkout.path(), &["init", "-q"]) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "`git` is needed by this test under CI"
        );
        eprintln!("skipped: `a_run_leaves_nothing_git_would_commit` needs `git` on PATH");
        return;
    };
    assert!(init.status.success(), "{init:?}");
    let example = checkout.path().join("examples/quickstart");
    copy_example("quickstart", &example);
    let bad = "not an item\n";
    let mut tasks = fs::read_to_string(example.join("tasks.jsonl")).unwrap();
    tasks.push_str(bad);
    fs::write(example.join("tasks.jsonl"), tasks).unwrap();
    let before = git(
        checkout.path(),
        &["status", "--porcelain", "--untracked-files=all"],
    )
    .unwrap();
    let run = run_in(
        checkout.path(),
        &[
            "run",
            "--once",
            "--config",
            "examples/quickstart/curupira.toml",
        ],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(example.join("done.jsonl.rejected").is_file(), "{run:?}");
    let after = git(
        checkout.path(),
        &["status", "--porcelain", "--untracked-files=all"],
    )
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&after.stdout),
        String::from_utf8_lossy(&before.stdout),
        "the run left files Git would see: add them to examples/quickstart/.gitignore"
    );
}

#[test]
fn the_quickstart_done_file_is_ignored_by_git() {
    let ignore = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart/.gitignore");
    let text = fs::read_to_string(ignore).unwrap();
    for name in ["done.jsonl", "done.jsonl.rejected"] {
        assert!(
            text.lines().any(|line| line.trim() == name),
            "{name}: {text}"
        );
    }
}
