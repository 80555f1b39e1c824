//! The durable ledger's own cost (issue 12, "Performance"), printed as plain figures:
//!
//! 2. **`tasks list` over 1,000,000 rows.** The first page (50 rows, newest first, as
//!    `tasks list` asks) and the same with `--status failed`, against a plain
//!    `SELECT … LIMIT 50` on the same file.
//!
//! Parts 1 (per dispatch, around an attempt of a no-op agent through the host's
//! `agent::run_attempt`) and 3 (the whole host, `curupira run --once` with the ledger
//! on and off) need the host's agent runner and its binary: they are
//! `cargo bench -p curupira-host --bench ledger`. Their numbering and every printed
//! line are those of the bench before it was split, so figures compare.
//!
//! `cargo bench -p curupira-ledger --bench ledger`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

use curupira_ledger::{Filter, Ledger, Status};

fn main() {
    list_over_a_million();
}

fn list_over_a_million() {
    const ROWS: u32 = 1_000_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    drop(Ledger::open(&path).unwrap());
    let built = Instant::now();
    {
        let mut connection = rusqlite::Connection::open(&path).unwrap();
        let transaction = connection.transaction().unwrap();
        {
            let mut insert = transaction
                .prepare(
                    "INSERT INTO tasks (automation, task_id, pairs, status, attempts, exit_code,
                     reason, workspace, host_pid, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, 1, 0, 'exit', '/work', 1, ?5, ?5)",
                )
                .unwrap();
            for n in 0..ROWS {
                let automation = ["fix", "review", "triage"][n as usize % 3];
                let status = if n % 10 == 0 { "failed" } else { "succeeded" };
                // Milliseconds since the epoch, from 2025-01-01, one per row.
                let time = 1_735_689_600_000_i64 + i64::from(n);
                insert
                    .execute(rusqlite::params![
                        automation,
                        format!("{:064x}", u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                        format!(r#"[{{"key":"issue","value":"{n}"}}]"#),
                        status,
                        time
                    ])
                    .unwrap();
            }
        }
        transaction.commit().unwrap();
    }
    println!(
        "\n`tasks list` over {ROWS} rows (built in {:.1} s):",
        built.elapsed().as_secs_f64()
    );
    let ledger = Ledger::open(&path).unwrap();
    let plain = rusqlite::Connection::open(&path).unwrap();
    let time = |f: &dyn Fn() -> usize| {
        // The best of 20 runs, after a warm-up.
        f();
        (0..20)
            .map(|_| {
                let started = Instant::now();
                assert_eq!(f(), 50);
                started.elapsed()
            })
            .min()
            .unwrap()
    };
    let select = time(&|| {
        let mut statement = plain
            .prepare_cached("SELECT * FROM tasks LIMIT 50")
            .unwrap();
        statement.query_map([], |_| Ok(())).unwrap().count()
    });
    let first_page = time(&|| ledger.list(&Filter::default(), 50).unwrap().len());
    let failed = Filter {
        status: Some(Status::Failed),
        ..Filter::default()
    };
    let failed_page = time(&|| ledger.list(&failed, 50).unwrap().len());
    let automation = Filter {
        automation: Some("review".to_owned()),
        ..Filter::default()
    };
    let automation_page = time(&|| ledger.list(&automation, 50).unwrap().len());
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "  plain `SELECT * FROM tasks LIMIT 50`: {:.3} ms",
        ms(select)
    );
    println!(
        "  first page, newest first:             {:.3} ms ({:.1}× the plain SELECT)",
        ms(first_page),
        first_page.as_secs_f64() / select.as_secs_f64()
    );
    println!(
        "  first page, --status failed:          {:.3} ms ({:.1}×)",
        ms(failed_page),
        failed_page.as_secs_f64() / select.as_secs_f64()
    );
    println!(
        "  first page, --automation review:      {:.3} ms ({:.1}×)",
        ms(automation_page),
        automation_page.as_secs_f64() / select.as_secs_f64()
    );
}
