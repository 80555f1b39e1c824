//! `examples/quickstart` works on a fresh clone: `curupira run --once` dispatches its
//! tasks through the built-in `local-queue` to the stand-in agent, and a second run
//! does not redo them. The folder is copied to a temporary directory first so the
//! repository's copy stays untouched.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::fs;
use std::path::Path;

use run_support::run_in;

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_quickstart_dispatches_its_tasks_once() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart");
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("quickstart");
    copy_dir(&source, &folder);
    let _ = fs::remove_file(folder.join("done.jsonl"));
    let tasks = fs::read_to_string(folder.join("tasks.jsonl")).unwrap();
    let task_count = tasks.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(task_count >= 2, "the example has a few tasks");

    // Run from the temporary folder's parent, naming the config by path, as the
    // README's command does from the repository root.
    let config = "quickstart/curupira.toml";
    let first = run_in(
        work.path(),
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
        work.path(),
        &["run", "--once", "--format", "json", "--config", config],
    );
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(second.event_names(), ["round.finished"]);
    assert_eq!(second.events()[0]["polled"], 0);

    let validate = run_in(work.path(), &["validate", "--config", config]);
    assert_eq!(validate.code, Some(0), "{validate:?}");
}

#[test]
fn the_quickstart_done_file_is_ignored_by_git() {
    let ignore = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart/.gitignore");
    let text = fs::read_to_string(ignore).unwrap();
    assert!(
        text.lines().any(|line| line.trim() == "done.jsonl"),
        "{text}"
    );
}
