//! `curupira status` over a large ledger (issue 29, "Performance"): 10,000 tasks with
//! 100,000 attempts, side by side in one criterion run with a plain indexed `SELECT`
//! on the same file.
//!
//! - `collect` — everything `curupira status` does after loading its config:
//!   `run.lock`'s holder, `status.json` (a host's document with four running attempts
//!   and a retry, left by a killed host, so the open attempts are read too), the
//!   counts over the last hour and day, the last failures.
//! - `plain_select` — `SELECT count(*) FROM attempts WHERE ended_at >= ?` (the
//!   `attempts_by_end` index), the least a count over a window can cost.
//!
//! Two histories: `spread`, the attempts' ends spread evenly over the default 30 days
//! of retention (a day holds 3,333 of them); `recent`, every attempt ended in the last
//! hour, the most the windows can hold.
//!
//! `cargo bench -p curupira-host --bench status`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use curupira_host::status::collect;
use curupira_ledger::{Ledger, TasksBackend};
use curupira_orchestrator::status::{HostInfo, Live, Publisher, RunningAttempt, WaitingRetry};

const TASKS: u32 = 10_000;
const ATTEMPTS_PER_TASK: u32 = 10;

/// A state folder with a ledger of `TASKS` tasks and `ATTEMPTS_PER_TASK` attempts each,
/// their ends `span` apart in all (the newest now), one in ten failed.
fn state(span: Duration) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    drop(Ledger::open(&path).unwrap());
    let now = i64::try_from(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    let total = i64::from(TASKS * ATTEMPTS_PER_TASK);
    let step = i64::try_from(span.as_millis()).unwrap() / total;
    let mut connection = rusqlite::Connection::open(&path).unwrap();
    let transaction = connection.transaction().unwrap();
    {
        let mut task = transaction
            .prepare(
                "INSERT INTO tasks (automation, task_id, pairs, status, attempts, exit_code,
                 reason, workspace, host_pid, created_at, updated_at)
                 VALUES ('fix', ?1, '[]', 'succeeded', ?2, 0, 'exit', '/work', 1, ?3, ?3)",
            )
            .unwrap();
        let mut attempt = transaction
            .prepare(
                "INSERT INTO attempts (automation, task_id, attempt, started_at, ended_at,
                 outcome, reason, exit_code, workspace, host_pid)
                 VALUES ('fix', ?1, ?2, ?3 - 1000, ?3, ?4, 'exit', ?5, '/work', 1)",
            )
            .unwrap();
        let mut n: i64 = 0;
        for t in 0..TASKS {
            let id = format!("{t:064x}");
            task.execute(rusqlite::params![id, ATTEMPTS_PER_TASK, now])
                .unwrap();
            for a in 1..=ATTEMPTS_PER_TASK {
                let ended = now - (total - n) * step;
                let failed = n % 10 == 0;
                attempt
                    .execute(rusqlite::params![
                        id,
                        a,
                        ended,
                        if failed { "failed" } else { "succeeded" },
                        i32::from(failed)
                    ])
                    .unwrap();
                n += 1;
            }
        }
    }
    transaction.commit().unwrap();
    drop(connection);
    // What a killed host left: four attempts running, one retry.
    let live = Live::new(HostInfo::this_process("curupira bench", None));
    live.automation_added("fix", Some(SystemTime::now()));
    for n in 0..4 {
        live.attempt_started(RunningAttempt::new(
            "fix",
            &format!("{n:064x}"),
            1,
            SystemTime::now(),
        ));
    }
    live.retry_waiting(WaitingRetry {
        automation: "fix".to_owned(),
        task_id: format!("{:064x}", 9),
        attempt: 2,
        due_at: curupira_orchestrator::status::timestamp(SystemTime::now()),
        reason: "exit".to_owned(),
        error: None,
        exit_code: Some(1),
        values: Vec::new(),
    });
    std::mem::forget(Publisher::start(live, &dir.path().join("status.json")).unwrap());
    dir
}

fn bench(c: &mut Criterion, name: &str, span: Duration) {
    let dir = state(span);
    let path = dir.path().join("ledger.sqlite");
    let ledger = Ledger::open_existing(&path).unwrap().unwrap();
    let plain = rusqlite::Connection::open(&path).unwrap();
    let day_ago = |now: SystemTime| {
        i64::try_from(
            (now - Duration::from_secs(24 * 3600))
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap()
    };
    let document = collect(
        dir.path(),
        Some((&path, &ledger as &dyn TasksBackend)),
        SystemTime::now(),
    )
    .unwrap();
    assert_eq!(document.host.pid, Some(std::process::id()));
    let mut group = c.benchmark_group(format!("status_{name}"));
    group.bench_function("collect", |b| {
        b.iter(|| {
            collect(
                dir.path(),
                Some((&path, &ledger as &dyn TasksBackend)),
                SystemTime::now(),
            )
            .unwrap()
        });
    });
    group.bench_function("plain_select", |b| {
        b.iter(|| {
            let mut statement = plain
                .prepare_cached("SELECT count(*) FROM attempts WHERE ended_at >= ?1")
                .unwrap();
            statement
                .query_row([day_ago(SystemTime::now())], |row| row.get::<_, i64>(0))
                .unwrap()
        });
    });
    group.finish();
}

fn spread(c: &mut Criterion) {
    bench(c, "spread", Duration::from_secs(30 * 24 * 3600));
}

fn recent(c: &mut Criterion) {
    bench(c, "recent", Duration::from_secs(3000));
}

criterion_group!(benches, spread, recent);
criterion_main!(benches);
