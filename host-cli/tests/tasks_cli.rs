//! `curupira tasks list|show|retry|forget` against ledgers written through the
//! library, as a host writes them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use curupira_ledger::{Filter, Ledger, Status};
use curupira_workspace::state::RunLock;
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
    let lines: Vec<&str> = other.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "a header and one task: {other:?}");
    assert!(lines[0].starts_with("TASK "), "{}", other.stdout);
    assert!(
        lines[1].starts_with("abc200000000  other "),
        "{}",
        other.stdout
    );
    let limited = project.curupira(&["tasks", "list", "--limit", "2"]);
    assert_eq!(limited.stdout.lines().count(), 3, "{limited:?}");
    assert!(
        limited
            .stderr
            .contains("`--limit N` shows more, `--limit 0` all of them"),
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

    // Two of them finished: refused without `--force`, and nothing is forgotten.
    let refused = project.curupira(&["tasks", "forget", "--automation", "q"]);
    assert_eq!(refused.code, Some(2), "{refused:?}");
    assert!(
        refused
            .stderr
            .starts_with("error: 2 of the 3 task(s) of automation `q` finished"),
        "{}",
        refused.stderr
    );
    assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.stderr);
    assert!(refused.stdout.is_empty());
    assert_eq!(ledger.list(&Filter::default(), 10).unwrap().len(), 4);
    let forgot = project.curupira(&["tasks", "forget", "--automation", "q", "--force"]);
    assert_eq!(forgot.code, Some(0), "{forgot:?}");
    assert!(
        forgot.stdout.starts_with("forgot 3 task(s)"),
        "{}",
        forgot.stdout
    );
    assert!(
        forgot
            .stderr
            .contains("warning: forgot 2 finished task(s): the next poll"),
        "{}",
        forgot.stderr
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

/// Each header word and the terminal cell it starts at (the header is ASCII; its
/// words are apart by two spaces or more).
fn columns(header: &str) -> Vec<(String, usize)> {
    let bytes = header.as_bytes();
    let mut starts = vec![0];
    for at in 2..bytes.len() {
        if bytes[at] != b' ' && bytes[at - 1] == b' ' && bytes[at - 2] == b' ' {
            starts.push(at);
        }
    }
    starts
        .iter()
        .enumerate()
        .map(|(i, &start)| {
            let end = starts.get(i + 1).copied().unwrap_or(header.len());
            (header[start..end].trim().to_owned(), start)
        })
        .collect()
}

/// The text of `line` from terminal cell `cell` on (`unicode-width`: a CJK character
/// takes two).
fn from_cell(line: &str, cell: usize) -> &str {
    let mut width = 0;
    for (at, c) in line.char_indices() {
        if width >= cell {
            return &line[at..];
        }
        width += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
    }
    ""
}

#[test]
fn list_is_a_table_with_a_header_aligned_columns_and_durations() {
    let (project, ids) = project();
    // A name two cells wide per character: columns are aligned by width on a terminal.
    let mut ledger = Ledger::open(&project.path().join(".curupira/ledger.sqlite")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    ledger
        .attempt_started("修正修正修正", &ids[2], &pairs("wide"), "/w", 1)
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    ledger
        .finished("修正修正修正", &ids[2], Status::Succeeded, Some(0), "exit")
        .unwrap();
    let listed = project.curupira(&["tasks", "list"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    let lines: Vec<&str> = listed.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "a header and five tasks: {}", listed.stdout);
    let header = columns(lines[0]);
    let names: Vec<&str> = header.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "TASK",
            "AUTOMATION",
            "STATUS",
            "ATTEMPTS",
            "LAST",
            "DURATION",
            "UPDATED (UTC)",
            "VALUES"
        ],
        "{}",
        lines[0]
    );
    let cell = |line: &str, column: &str| -> String {
        let at = header.iter().position(|(name, _)| name == column).unwrap();
        let text = from_cell(line, header[at].1);
        let end = header.get(at + 1).map_or(text.len(), |(_, next)| {
            text.len() - from_cell(text, next - header[at].1).len()
        });
        text[..end].trim().to_owned()
    };
    // Newest first: the wide-named task, then the rows of `project()` newest first.
    let automations: Vec<String> = lines[1..].iter().map(|l| cell(l, "AUTOMATION")).collect();
    assert_eq!(
        automations,
        ["修正修正修正", "q", "other", "q", "q"],
        "{}",
        listed.stdout
    );
    let statuses: Vec<String> = lines[1..].iter().map(|l| cell(l, "STATUS")).collect();
    assert_eq!(
        statuses,
        ["succeeded", "interrupted", "running", "failed", "succeeded"],
        "{}",
        listed.stdout
    );
    assert_eq!(cell(lines[4], "LAST"), "exit 3");
    assert_eq!(cell(lines[1], "VALUES"), "n=wide");
    assert_eq!(cell(lines[3], "DURATION"), "-", "still running");
    // The wide-named task's last attempt took some 20 ms; the others' were recorded.
    let duration = cell(lines[1], "DURATION");
    assert!(duration.ends_with(" ms"), "{duration:?} in {}", lines[1]);
    for line in [lines[2], lines[4], lines[5]] {
        assert_ne!(cell(line, "DURATION"), "-", "{line}");
    }
    let updated = cell(lines[1], "UPDATED (UTC)");
    let shape: String = updated
        .chars()
        .map(|c| if c.is_ascii_digit() { '0' } else { c })
        .collect();
    assert_eq!(shape, "0000-00-00 00:00:00", "{updated}");
    // The attempts are right-aligned under their header.
    let attempts_end = header[3].1 + "ATTEMPTS".len();
    for line in &lines[1..] {
        assert_eq!(
            from_cell(line, attempts_end - 1).chars().next(),
            Some('1'),
            "{line}"
        );
    }

    // JSON has the duration too, in seconds.
    let json = project.curupira(&["tasks", "list", "--format", "json"]);
    let rows = json_lines(&json.stdout);
    assert!(
        rows[0]["duration_seconds"].as_f64().unwrap() >= 0.02,
        "{}",
        rows[0]
    );
    assert_eq!(rows[2]["duration_seconds"], Value::Null, "{}", rows[2]);
}

#[test]
fn limit_0_lists_every_task() {
    let (project, _) = project();
    let all = project.curupira(&["tasks", "list", "--limit", "0"]);
    assert_eq!(all.code, Some(0), "{all:?}");
    assert_eq!(
        all.stdout.lines().count(),
        5,
        "a header and 4 tasks: {all:?}"
    );
    assert!(all.stderr.is_empty(), "no note: {}", all.stderr);
    let json = project.curupira(&["tasks", "list", "--limit", "0", "--format", "json"]);
    assert_eq!(json_lines(&json.stdout).len(), 4);
    let one = project.curupira(&["tasks", "list", "--limit", "1"]);
    assert!(
        one.stderr
            .starts_with("(the 1 most recently changed task; `--limit N` shows more"),
        "{}",
        one.stderr
    );
}

/// `forget` of a finished task that `local-queue` recorded in its done file: the queue
/// never hands it over again, so forgetting it would lose the only record `retry` can
/// run it from. Refused, pointing to `retry`; `--force` forgets it and says what it
/// costs (and the queue does not hand it over again, as the warning says).
#[test]
fn forget_refuses_a_finished_task_that_retry_can_still_run() {
    let project = Project::new();
    project.write("curupira.toml", CONFIG);
    project.write("t.jsonl", "{\"n\": \"1\"}\n");
    let first = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(first.code, Some(0), "{first:?}");
    let id = first.events_named("task.finished")[0]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let refused = project.curupira(&["tasks", "forget", &id[..10]]);
    assert_eq!(refused.code, Some(2), "{refused:?}");
    let message = refused.stderr.trim();
    assert_eq!(message.lines().count(), 1, "one sentence: {message}");
    assert!(
        message.starts_with(&format!(
            "error: task {id} of automation `q` succeeded: forgetting it deletes the stored \
             pairs `tasks retry` runs it again from"
        )),
        "{message}"
    );
    assert!(
        message.contains("`local-queue` does not hand out an item in its done file"),
        "{message}"
    );
    assert!(
        message.contains(&format!("use `curupira tasks retry {}`", &id[..12]))
            && message.ends_with("or forget it anyway with `--force`"),
        "{message}"
    );
    assert!(refused.stdout.is_empty());

    // Still there: `retry` runs it again, from the stored pairs.
    let retried = project.curupira(&["tasks", "retry", &id[..10]]);
    assert_eq!(retried.code, Some(0), "{retried:?}");
    let again = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(again.code, Some(0), "{again:?}");
    let started = again.events_named("task.started");
    assert_eq!(started.len(), 1, "{again:?}");
    assert_eq!(started[0]["task_id"], id.as_str());

    let forced = project.curupira(&["tasks", "forget", &id[..10], "--force"]);
    assert_eq!(forced.code, Some(0), "{forced:?}");
    assert_eq!(
        forced.stdout,
        format!("forgot task {id} of automation `q`\n")
    );
    assert!(
        forced
            .stderr
            .starts_with("warning: forgot 1 finished task(s)")
            && forced
                .stderr
                .contains("`tasks retry` cannot run it any more"),
        "{}",
        forced.stderr
    );
    let after = project.curupira(&["run", "--once", "--format", "json"]);
    assert!(
        after.events_named("task.started").is_empty(),
        "the queue does not hand it over again: {after:?}"
    );
    let gone = project.curupira(&["tasks", "retry", &id[..10]]);
    assert_eq!(gone.code, Some(2), "{gone:?}");
}

/// Runs `git ARGS…` in the project.
fn git(project: &Project, args: &[&str]) {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(project.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
}

/// `show` of a task whose worktree was removed after it succeeded (`cleanup =
/// "on-success"`, the default) says so and names the branch, which stays; a worktree
/// still there (`cleanup = "never"`) is named plainly, with its branch.
#[test]
fn show_names_the_branch_and_says_a_removed_worktree_was_removed() {
    let project = Project::new();
    git(&project, &["init", "-q", "-b", "main"]);
    git(&project, &["config", "user.email", "t@example.com"]);
    git(&project, &["config", "user.name", "t"]);
    project.write(
        "curupira.toml",
        &CONFIG.replace(
            "[extensions.local]",
            "[settings.workspace]\nmode = \"worktree\"\n\n[extensions.local]",
        ),
    );
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-q", "-m", "start"]);
    project.write("t.jsonl", "{\"n\": \"1\"}\n");
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let finished = &run.events_named("task.finished")[0];
    let id = finished["task_id"].as_str().unwrap();
    let created = &run.events_named("workspace.created")[0];
    let workspace = created["workspace"].as_str().unwrap();
    let branch = created["branch"].as_str().unwrap();
    assert!(
        !std::path::Path::new(workspace).exists(),
        "removed: {run:?}"
    );

    let shown = project.curupira(&["tasks", "show", &id[..8]]);
    assert_eq!(shown.code, Some(0), "{shown:?}");
    assert!(
        shown.stdout.contains(&format!(
            "workspace   {workspace} (removed after the task succeeded: cleanup = \
             \"on-success\"; the branch stays)\nbranch      {branch}\n"
        )),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("\nduration    ") && !shown.stdout.contains("duration    -"),
        "{}",
        shown.stdout
    );

    project.write(
        "curupira.toml",
        &CONFIG.replace(
            "[extensions.local]",
            "[settings.workspace]\nmode = \"worktree\"\ncleanup = \"never\"\n\n\
             [extensions.local]",
        ),
    );
    project.write("t.jsonl", "{\"n\": \"1\"}\n{\"n\": \"2\"}\n");
    let kept = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(kept.code, Some(0), "{kept:?}");
    let created = &kept.events_named("workspace.created")[0];
    let (id, workspace, branch) = (
        created["task_id"].as_str().unwrap(),
        created["workspace"].as_str().unwrap(),
        created["branch"].as_str().unwrap(),
    );
    assert!(std::path::Path::new(workspace).is_dir(), "kept: {kept:?}");
    let shown = project.curupira(&["tasks", "show", id]);
    assert!(
        shown
            .stdout
            .contains(&format!("workspace   {workspace}\nbranch      {branch}\n")),
        "{}",
        shown.stdout
    );
}
