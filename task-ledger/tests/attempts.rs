//! The attempt history (schema versions 3 and 4): one row per attempt, across a retry and a
//! host restart, pruned to a retention, and a ledger written by the `curupira` of
//! schema version 2 upgraded in place (`tests/fixtures/ledger-v2.sqlite`: three tasks
//! of one automation, `n=2` failed on both its attempts, as that binary wrote them).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use curupira_ledger::{
    AgentProcess, Change, Filter, Ledger, Retention, SCHEMA_VERSION, Status, WriterThread,
};

fn id(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

fn open(dir: &Path) -> Ledger {
    Ledger::open(&dir.join("ledger.sqlite")).unwrap()
}

#[test]
fn each_attempt_of_a_retried_task_has_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    ledger
        .attempt_started_on(
            "fix",
            &id(1),
            "[]",
            "/w/1",
            Some("curupira/fix/010101010101"),
            7,
        )
        .unwrap();
    ledger
        .agent_started(
            "fix",
            &id(1),
            AgentProcess {
                pid: 4242,
                start: None,
            },
        )
        .unwrap();
    ledger
        .attempt_ended(
            "fix",
            &id(1),
            Status::Failed,
            Some(3),
            "exit",
            Some("the agent exited with status 3"),
        )
        .unwrap();
    ledger
        .attempt_started("fix", &id(1), "[]", "/w/1", 7)
        .unwrap();
    ledger
        .attempt_ended("fix", &id(1), Status::Succeeded, Some(0), "exit", None)
        .unwrap();
    ledger
        .finished("fix", &id(1), Status::Succeeded, Some(0), "exit")
        .unwrap();

    let attempts = ledger.attempts("fix", &id(1)).unwrap();
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    let (first, second) = (&attempts[0], &attempts[1]);
    assert_eq!(first.attempt, 1);
    assert_eq!(first.outcome, Some(Status::Failed));
    assert_eq!(first.exit_code, Some(3));
    assert_eq!(first.reason.as_deref(), Some("exit"));
    assert_eq!(
        first.error.as_deref(),
        Some("the agent exited with status 3")
    );
    assert_eq!(first.branch.as_deref(), Some("curupira/fix/010101010101"));
    assert_eq!(first.workspace.as_deref(), Some("/w/1"));
    assert_eq!((first.host_pid, first.agent_pid), (Some(7), Some(4242)));
    assert!(first.ended_at.is_some() && first.duration_seconds.is_some_and(|d| d >= 0.0));
    assert_eq!(second.attempt, 2);
    assert_eq!(second.outcome, Some(Status::Succeeded));
    assert_eq!(second.error, None);
    assert_eq!(second.branch, None);
    // The task's row keeps its summary: two attempts, the last one's outcome.
    let task = &ledger.find(&id(1), Some("fix"), 2).unwrap()[0];
    assert_eq!((task.attempts, task.status), (2, Status::Succeeded));
    // Another task, another automation: nothing of theirs.
    assert!(ledger.attempts("fix", &id(2)).unwrap().is_empty());
    assert!(ledger.attempts("other", &id(1)).unwrap().is_empty());
}

#[test]
fn an_attempt_a_dead_host_left_is_interrupted_and_the_next_one_numbered_after_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut ledger = open(dir.path());
        ledger
            .attempt_started("fix", &id(1), "[]", "/w", 7)
            .unwrap();
        // The host dies here: nothing more is written.
    }
    let mut ledger = open(dir.path());
    assert_eq!(
        ledger.attempts("fix", &id(1)).unwrap()[0].outcome,
        None,
        "still running"
    );
    assert_eq!(
        ledger.mark_unrecorded().unwrap(),
        [("fix".to_owned(), id(1))]
    );
    ledger
        .attempt_started("fix", &id(1), "[]", "/w", 8)
        .unwrap();
    ledger
        .finished("fix", &id(1), Status::Failed, Some(1), "exit")
        .unwrap();
    let attempts = ledger.attempts("fix", &id(1)).unwrap();
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert_eq!(attempts[0].outcome, Some(Status::Interrupted));
    assert_eq!(attempts[0].reason.as_deref(), Some("unrecorded"));
    assert!(attempts[0].ended_at.is_some());
    assert_eq!((attempts[1].attempt, attempts[1].host_pid), (2, Some(8)));
    // `finished` ended the attempt nothing else had.
    assert_eq!(attempts[1].outcome, Some(Status::Failed));
    assert_eq!(attempts[1].exit_code, Some(1));
}

#[test]
fn forgetting_a_task_forgets_its_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    ledger
        .attempt_started("fix", &id(1), "[]", "/w", 7)
        .unwrap();
    ledger
        .finished("fix", &id(1), Status::Succeeded, Some(0), "exit")
        .unwrap();
    assert_eq!(ledger.forget(&[("fix".to_owned(), id(1))]).unwrap(), 1);
    assert!(ledger.attempts("fix", &id(1)).unwrap().is_empty());
    // Run again, it starts from attempt 1.
    ledger
        .attempt_started("fix", &id(1), "[]", "/w", 7)
        .unwrap();
    assert_eq!(ledger.attempts("fix", &id(1)).unwrap()[0].attempt, 1);
}

fn five_attempts(ledger: &mut Ledger, n: u8) {
    for _ in 0..5 {
        ledger
            .attempt_started("fix", &id(n), "[]", "/w", 7)
            .unwrap();
        ledger
            .attempt_ended("fix", &id(n), Status::Failed, Some(1), "exit", None)
            .unwrap();
    }
}

#[test]
fn pruning_keeps_the_newest_attempts_of_each_task_and_the_recent_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    five_attempts(&mut ledger, 1);
    five_attempts(&mut ledger, 2);
    let by_count = Retention {
        max_per_task: Some(2),
        ..Retention::default()
    };
    assert_eq!(ledger.prune_attempts(&by_count).unwrap(), 6);
    let kept: Vec<u32> = ledger
        .attempts("fix", &id(1))
        .unwrap()
        .iter()
        .map(|a| a.attempt)
        .collect();
    assert_eq!(kept, [4, 5]);
    assert_eq!(ledger.attempts("fix", &id(2)).unwrap().len(), 2);
    assert_eq!(
        ledger.prune_attempts(&by_count).unwrap(),
        0,
        "nothing more to prune"
    );

    // By age: what ended before the limit goes, a running attempt never does.
    ledger
        .attempt_started("fix", &id(3), "[]", "/w", 7)
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let by_age = Retention {
        max_age: Some(Duration::from_millis(10)),
        ..Retention::default()
    };
    assert_eq!(ledger.prune_attempts(&by_age).unwrap(), 4);
    assert!(ledger.attempts("fix", &id(1)).unwrap().is_empty());
    assert_eq!(ledger.attempts("fix", &id(3)).unwrap().len(), 1);
    // The tasks themselves stay.
    assert_eq!(ledger.list(&Filter::default(), 10).unwrap().len(), 3);
}

#[test]
fn the_writer_thread_prunes_to_its_retention() {
    let dir = tempfile::tempdir().unwrap();
    five_attempts(&mut open(dir.path()), 1);
    let retention = Retention {
        max_per_task: Some(1),
        ..Retention::default()
    };
    let thread = WriterThread::start_with(open(dir.path()), retention).unwrap();
    let writer = thread.writer();
    let ticket = writer.write(Change::AttemptStarted {
        automation: "fix".into(),
        task_id: id(2),
        pairs: "[]".into(),
        workspace: "/w".into(),
        branch: None,
        log_path: None,
        host_pid: 7,
    });
    writer.wait(ticket).unwrap();
    thread.close();
    let attempts = open(dir.path()).attempts("fix", &id(1)).unwrap();
    assert_eq!(attempts.iter().map(|a| a.attempt).collect::<Vec<_>>(), [5]);
}

#[test]
fn a_ledger_of_schema_version_2_is_upgraded_with_each_task_s_last_attempt() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ledger-v2.sqlite");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    std::fs::copy(&fixture, &path).unwrap();
    let ledger = Ledger::open(&path).unwrap();
    assert_eq!(SCHEMA_VERSION, 5);
    let tasks = ledger.list(&Filter::default(), 10).unwrap();
    assert_eq!(tasks.len(), 3, "{tasks:#?}");
    for task in &tasks {
        let attempts = ledger.attempts(&task.automation, &task.task_id).unwrap();
        assert_eq!(attempts.len(), 1, "{}: {attempts:#?}", task.task_id);
        let last = &attempts[0];
        assert_eq!(last.attempt, task.attempts);
        assert_eq!(last.outcome, Some(task.status));
        assert_eq!(last.exit_code, task.exit_code);
        assert_eq!(last.reason, task.reason);
        assert_eq!(last.workspace, task.workspace);
        assert_eq!(last.duration_seconds, task.duration_seconds);
    }
    let failed = tasks.iter().find(|t| t.status == Status::Failed).unwrap();
    assert_eq!(
        failed.values,
        serde_json::json!([{"key": "n", "value": "2"}])
    );
    assert_eq!((failed.attempts, failed.exit_code), (2, Some(3)));
    // The fixture itself stays at version 2 (the test upgraded a copy).
    let original =
        rusqlite::Connection::open_with_flags(&fixture, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let version: i64 = original
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, 2);
}

/// Version 4 only adds an index of the attempts by outcome: a ledger of version 3 (the
/// v2 fixture taken to 3 by that version's own step) keeps its rows and gets it.
#[test]
fn a_ledger_of_schema_version_3_gets_the_outcome_index() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ledger-v2.sqlite");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    std::fs::copy(&fixture, &path).unwrap();
    let index_columns = |connection: &rusqlite::Connection| -> Vec<String> {
        connection
            .prepare("SELECT name FROM pragma_index_info('attempts_by_outcome')")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    {
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection
            .execute_batch(curupira_ledger::MIGRATIONS[2])
            .unwrap();
        connection.pragma_update(None, "user_version", 3).unwrap();
        assert!(index_columns(&connection).is_empty());
    }
    let ledger = Ledger::open(&path).unwrap();
    let tasks = ledger.list(&Filter::default(), 10).unwrap();
    assert_eq!(tasks.len(), 3);
    assert_eq!(
        ledger
            .attempts(&tasks[0].automation, &tasks[0].task_id)
            .unwrap()
            .len(),
        1
    );
    drop(ledger);
    let connection = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(index_columns(&connection), ["outcome", "ended_at"]);
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

#[test]
fn the_summary_counts_outcomes_by_their_end_and_lists_failures_and_open_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    five_attempts(&mut ledger, 1);
    ledger
        .attempt_started("fix", &id(2), "[]", "/w", 7)
        .unwrap();
    ledger
        .attempt_ended("fix", &id(2), Status::Succeeded, Some(0), "exit", None)
        .unwrap();
    ledger
        .attempt_started("triage", &id(3), "[]", "/w", 7)
        .unwrap();
    ledger
        .attempt_ended(
            "triage",
            &id(3),
            Status::Interrupted,
            None,
            "shutdown",
            Some("stopped"),
        )
        .unwrap();
    ledger
        .attempt_started("fix", &id(4), "[]", "/w/4", 7)
        .unwrap();

    let (day, hour) = ledger
        .outcome_counts(Duration::from_secs(24 * 3600), Duration::from_secs(3600))
        .unwrap();
    assert_eq!((day.succeeded, day.failed, day.interrupted), (1, 5, 1));
    assert_eq!(hour, day);
    // A window that ends before any of them: nothing.
    std::thread::sleep(Duration::from_millis(30));
    let (day, none) = ledger
        .outcome_counts(Duration::from_secs(24 * 3600), Duration::from_millis(10))
        .unwrap();
    assert_eq!((none.succeeded, none.failed, none.interrupted), (0, 0, 0));
    assert_eq!(day.failed, 5);
    // Such a count reads the outcome index alone (schema version 4).
    let connection = rusqlite::Connection::open(dir.path().join("ledger.sqlite")).unwrap();
    let plan: Vec<String> = connection
        .prepare(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM attempts
             WHERE outcome = 'failed' AND ended_at >= 1",
        )
        .unwrap()
        .query_map([], |row| row.get::<_, String>(3))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        plan.iter()
            .any(|step| step.contains("COVERING INDEX attempts_by_outcome")),
        "{plan:?}"
    );
}

#[test]
fn tasks_finished_per_hour_are_counted_by_status_in_their_hour() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    for (n, status) in [
        (1, Status::Succeeded),
        (2, Status::Succeeded),
        (3, Status::Failed),
        (4, Status::Interrupted),
    ] {
        ledger
            .attempt_started("fix", &id(n), "[]", "/w", 7)
            .unwrap();
        ledger
            .finished("fix", &id(n), status, Some(0), "exit")
            .unwrap();
    }
    ledger
        .attempt_started("fix", &id(5), "[]", "/w", 7)
        .unwrap();
    let rows = ledger.finished_per_hour(24).unwrap();
    let now_ms = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    let hour = now_ms / 3_600_000 * 3_600_000;
    let mut counted: Vec<(Status, u64)> = rows
        .iter()
        .map(|(h, status, count)| {
            assert!(*h == hour || *h == hour - 3_600_000, "{rows:?}");
            (*status, *count)
        })
        .collect();
    counted.sort_by_key(|(status, _)| status.as_str());
    assert_eq!(
        counted,
        [
            (Status::Failed, 1),
            (Status::Interrupted, 1),
            (Status::Succeeded, 2)
        ]
    );
}

/// Version 5 adds what a provider's stream said to each attempt: a ledger of version
/// 4 keeps its rows (with none of it), and a new attempt gets its session as soon as
/// it is written and its answer, usage, cost and diagnostics once the stream ended.
#[test]
fn a_ledger_of_schema_version_4_gets_the_stream_columns_and_they_are_written() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ledger-v2.sqlite");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    std::fs::copy(&fixture, &path).unwrap();
    {
        let connection = rusqlite::Connection::open(&path).unwrap();
        for step in &curupira_ledger::MIGRATIONS[2..4] {
            connection.execute_batch(step).unwrap();
        }
        connection.pragma_update(None, "user_version", 4).unwrap();
    }
    let mut ledger = Ledger::open(&path).unwrap();
    let old = ledger.list(&Filter::default(), 10).unwrap();
    assert_eq!(old.len(), 3);
    let before = ledger
        .attempts(&old[0].automation, &old[0].task_id)
        .unwrap();
    assert_eq!(before.len(), 1);
    assert_eq!(
        (
            before[0].provider.as_deref(),
            before[0].session_id.as_deref()
        ),
        (None, None)
    );
    assert!(
        !before[0].resumed && before[0].usage.is_none() && before[0].stream_diagnostics.is_empty()
    );

    ledger
        .attempt_started("fix", &id(9), "[]", "/w", 1)
        .unwrap();
    ledger
        .attempt_session("fix", &id(9), "claude", "s-9", true)
        .unwrap();
    // Readable at once, while the attempt still runs: what a resume needs after a kill.
    let running = ledger.attempts("fix", &id(9)).unwrap();
    assert_eq!(running[0].session_id.as_deref(), Some("s-9"));
    assert_eq!(running[0].provider.as_deref(), Some("claude"));
    assert!(running[0].resumed);
    assert_eq!(running[0].ended_at, None);
    let long = "é".repeat(40 * 1024);
    ledger
        .attempt_stream(
            "fix",
            &id(9),
            &curupira_ledger::StreamRecord {
                answer: Some(long.clone()),
                usage: Some(curupira_ledger::StreamUsage {
                    input_tokens: 10,
                    output_tokens: 3,
                    cache_read_tokens: 2,
                    cache_write_tokens: 1,
                }),
                cost_usd: Some(0.25),
                diagnostics: vec!["line 2 is not JSON".into(), "no result".into()],
            },
        )
        .unwrap();
    ledger
        .attempt_ended("fix", &id(9), Status::Succeeded, Some(0), "exit", None)
        .unwrap();
    let ended = &ledger.attempts("fix", &id(9)).unwrap()[0];
    let answer = ended.answer.as_deref().unwrap();
    assert!(
        answer.len() <= curupira_ledger::MAX_ANSWER_BYTES,
        "{}",
        answer.len()
    );
    assert!(answer.ends_with('…') && long.starts_with(answer.trim_end_matches('…')));
    assert_eq!(
        ended.usage.map(|u| (
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens
        )),
        Some((10, 3, 2, 1))
    );
    assert_eq!(ended.cost_usd, Some(0.25));
    assert_eq!(
        ended.stream_diagnostics,
        ["line 2 is not JSON", "no result"]
    );
}
