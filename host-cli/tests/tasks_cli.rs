//! `curupira tasks list|show|retry|forget` against ledgers written through the
//! library, as a host writes them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use curupira_host::ledger::{Filter, Ledger, Status};
use curupira_host::state::RunLock;
use run_support::Project;
use serde_json::Value;

const CONFIG: &str = "[settings.agent]\ncommand = [\"true\"]\n\n[extensions.local]\n\
                      builtin = \"local-queue\"\n\n[automations.q]\ntrigger = \"jsonl\"\n\
                      prompt = \"x\"\narguments = { path = \"t.jsonl\" }\n";

fn pairs(n: &str) -> String {
    format!(r#"[{{"key":"n","value":"{n}"}}]"#)
}

/// A project whose ledger holds: `abc1…` succeeded and `abc2…` failed in `q`,
/// `abc2…` running in `other`, `def…` interrupted in `q`.
fn project() -> (Project, [String; 3]) {
    let project = Project::new();
    project.write("curupira.toml", CONFIG);
    std::fs::create_dir_all(project.path().join(".curupira")).unwrap();
    let mut ledger = Ledger::open(&project.path().join(".curupira/ledger.sqlite")).unwrap();
    let ids = [
        format!("abc1{}", "0".repeat(60)),
        format!("abc2{}", "0".repeat(60)),
        format!("def{}", "0".repeat(61)),
    ];
    let mut write = |automation: &str, id: &str, status: Status| {
        // Times have milliseconds: keep the rows apart.
        std::thread::sleep(std::time::Duration::from_millis(5));
        ledger
            .attempt_started(automation, id, &pairs(id), "/w", 1)
            .unwrap();
        if status != Status::Running {
            let code = (status == Status::Failed).then_some(3).or(Some(0));
            ledger
                .finished(automation, id, status, code, "exit")
                .unwrap();
        }
    };
    write("q", &ids[0], Status::Succeeded);
    write("q", &ids[1], Status::Failed);
    write("other", &ids[1], Status::Running);
    write("q", &ids[2], Status::Interrupted);
    (project, ids)
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn list_filters_and_limits() {
    let (project, ids) = project();
    let all = project.curupira(&["tasks", "list", "--format", "json"]);
    assert_eq!(all.code, Some(0), "{all:?}");
    let rows = json_lines(&all.stdout);
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0]["task_id"], ids[2].as_str(), "newest first");
    let failed = project.curupira(&["tasks", "list", "--status", "failed", "--format", "json"]);
    let rows = json_lines(&failed.stdout);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0]["status"].as_str(), rows[0]["exit_code"].as_i64()),
        (Some("failed"), Some(3))
    );
    let other = project.curupira(&["tasks", "list", "--automation", "other"]);
    assert_eq!(other.stdout.lines().count(), 1, "{other:?}");
    assert!(
        other.stdout.starts_with("abc200000000  other  running"),
        "{}",
        other.stdout
    );
    let limited = project.curupira(&["tasks", "list", "--limit", "2"]);
    assert_eq!(limited.stdout.lines().count(), 2);
    assert!(
        limited.stderr.contains("more with `--limit`"),
        "{}",
        limited.stderr
    );
    let bad = project.curupira(&["tasks", "list", "--status", "done"]);
    assert_eq!(bad.code, Some(2), "{bad:?}");
}

#[test]
fn an_id_is_a_unique_prefix_and_an_ambiguous_one_lists_the_candidates() {
    let (project, ids) = project();
    let shown = project.curupira(&["tasks", "show", "ABC1"]);
    assert_eq!(shown.code, Some(0), "{shown:?}");
    assert!(
        shown.stdout.contains(&format!("task        {}", ids[0])),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.contains("values      n="), "{}", shown.stdout);

    let ambiguous = project.curupira(&["tasks", "show", "abc"]);
    assert_eq!(ambiguous.code, Some(2));
    let message = ambiguous.stderr.trim();
    assert!(
        message.starts_with("error: `abc` is ambiguous"),
        "{message}"
    );
    for candidate in [
        format!("{} (q)", ids[0]),
        format!("{} (q)", ids[1]),
        format!("{} (other)", ids[1]),
    ] {
        assert!(message.contains(&candidate), "{message}");
    }
    assert_eq!(message.lines().count(), 1, "one sentence: {message}");
    let narrowed = project.curupira(&[
        "tasks",
        "show",
        "abc2",
        "--automation",
        "q",
        "--format",
        "json",
    ]);
    assert_eq!(
        json_lines(&narrowed.stdout)[0]["status"],
        "failed",
        "{narrowed:?}"
    );

    let unknown = project.curupira(&["tasks", "show", "0123"]);
    assert_eq!(unknown.code, Some(2));
    assert!(
        unknown.stderr.contains("no task in `"),
        "{}",
        unknown.stderr
    );
    assert!(
        unknown
            .stderr
            .contains("ledger.sqlite` has an id starting with `0123`")
    );
    let invalid = project.curupira(&["tasks", "show", "xyz"]);
    assert_eq!(invalid.code, Some(2));
    assert!(
        invalid.stderr.contains("`xyz` is not a task id"),
        "{}",
        invalid.stderr
    );
}

#[test]
fn retry_and_forget_change_the_ledger() {
    let (project, ids) = project();
    let retried = project.curupira(&["tasks", "retry", "--failed"]);
    assert_eq!(retried.code, Some(0), "{retried:?}");
    assert!(
        retried.stdout.starts_with("1 failed task(s)"),
        "{}",
        retried.stdout
    );
    let mut ledger = Ledger::open(&project.path().join(".curupira/ledger.sqlite")).unwrap();
    let requested = ledger.requested("q").unwrap();
    assert_eq!(requested.len(), 1);
    assert_eq!(requested[0].task_id, ids[1]);

    let forgot = project.curupira(&["tasks", "forget", "--automation", "q"]);
    assert_eq!(forgot.code, Some(0), "{forgot:?}");
    assert!(
        forgot.stdout.starts_with("forgot 3 task(s)"),
        "{}",
        forgot.stdout
    );
    let left = ledger.list(&Filter::default(), 10).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].automation, "other");
}

#[test]
fn a_running_task_is_kept_while_a_host_holds_the_lock() {
    let (project, ids) = project();
    let lock = RunLock::acquire(&project.path().join(".curupira/run.lock")).unwrap();
    let refused = project.curupira(&["tasks", "retry", &ids[1], "--automation", "other"]);
    assert_eq!(refused.code, Some(2), "{refused:?}");
    assert!(
        refused.stderr.contains("is running (a host runs on"),
        "{}",
        refused.stderr
    );
    let forgot = project.curupira(&["tasks", "forget", "--automation", "other"]);
    assert!(
        forgot.stdout.contains("forgot 0 task(s)"),
        "{}",
        forgot.stdout
    );
    assert!(
        forgot.stdout.contains("kept 1 running task(s)"),
        "{}",
        forgot.stdout
    );
    drop(lock);
    // No host now: the task was left by a dead one, and may be retried.
    let retried = project.curupira(&["tasks", "retry", &ids[1][..6], "--automation", "other"]);
    assert_eq!(retried.code, Some(0), "{retried:?}");
}

#[test]
fn without_a_ledger_there_is_nothing_to_show() {
    let project = Project::new();
    project.write("curupira.toml", CONFIG);
    let list = project.curupira(&["tasks", "list"]);
    assert_eq!((list.code, list.stdout.as_str()), (Some(0), ""), "{list:?}");
    let show = project.curupira(&["tasks", "show", "ab"]);
    assert_eq!(show.code, Some(2));
    assert!(
        show.stderr.contains("there is no task ledger at"),
        "{}",
        show.stderr
    );
    assert!(
        !project.exists(".curupira/ledger.sqlite"),
        "reading creates nothing"
    );

    project.write(
        "curupira.toml",
        &format!("[settings.ledger]\nenabled = false\n\n{CONFIG}"),
    );
    let disabled = project.curupira(&["tasks", "list"]);
    assert_eq!(disabled.code, Some(2));
    assert!(
        disabled.stderr.contains("the task ledger is disabled"),
        "{}",
        disabled.stderr
    );
    project.write(
        "curupira.toml",
        &format!("[settings.ledger]\npath = 5\n\n{CONFIG}"),
    );
    let broken = project.curupira(&["tasks", "list"]);
    assert_eq!(broken.code, Some(2));
    assert!(
        broken.stderr.contains("/settings/ledger/path"),
        "{}",
        broken.stderr
    );
}
