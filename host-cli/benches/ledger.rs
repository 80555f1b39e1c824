//! The durable ledger's cost (issue 12, "Performance"), printed as plain figures:
//!
//! 1. **Per dispatch.** `DISPATCHES` (default 10,000) attempts of a no-op agent (`true`)
//!    through `agent::run_attempt`, half of them with what a host does with its ledger
//!    around one attempt (`decide` on a reading connection; `attempt_started`,
//!    `agent_started`, `finished` handed to the writer thread, which batches them),
//!    half without, interleaved in blocks of 100 so that drift of the machine falls on
//!    both sides alike; the side with the ledger ends when its last change is
//!    committed. Also printed: the same three changes as one-row transactions on the
//!    calling thread, as the first version of the ledger made them.
//! 2. **`tasks list` over 1,000,000 rows**: the ledger's own, without a host, is
//!    `cargo bench -p curupira-ledger --bench ledger` (`task-ledger/benches/ledger.rs`).
//!
//! 3. **The whole host.** `curupira run --once` over `HOST_ITEMS` (default 10,000)
//!    `local-queue` items with a no-op agent at `max_concurrent = 4`, with the ledger on
//!    (the default) and off (`[settings.ledger] enabled = false`), alternating,
//!    `HOST_RUNS` (default 7) runs each; the median of each side. This is the issue's
//!    own measure: what a dispatch costs with everything a host does around it.
//!
//! `cargo bench -p curupira-host --bench ledger` (`DISPATCHES=N`, `HOST_ITEMS=N` change
//! the counts; `0` skips that part).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

use curupira_ledger::{AgentProcess, Change, Ledger, Status, WriterThread};
use curupira_orchestrator::agent::{AgentLimits, AgentRun, run_attempt};
use curupira_process::stop::Stop;

/// The number in the environment variable `name`, or `default`.
fn count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let dispatches: usize = count("DISPATCHES", 10_000);
    let host_items: usize = count("HOST_ITEMS", 10_000);
    if host_items > 0 {
        whole_host(host_items);
    }
    if dispatches > 0 {
        per_dispatch(dispatches);
    }
}

/// `curupira run --once` over `items` queued items, with the ledger on and off.
fn whole_host(items: usize) {
    let dir = tempfile::tempdir().unwrap();
    let queue: String = (1..=items)
        .map(|n| format!("{{\"n\": \"{n}\"}}\n"))
        .collect();
    std::fs::write(dir.path().join("tasks.jsonl"), queue).unwrap();
    let config = |ledger: bool| {
        format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
             [settings.agent]\ncommand = [\"true\"]\nmax_concurrent = 4\n\n\
             [settings.ledger]\nenabled = {ledger}\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.fix]\ntrigger = \"jsonl\"\nprompt = \"Fix ${{n}}\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"done.jsonl\" }}\n\
             polling = {{ batch_size = {items} }}\n"
        )
    };
    // Older than local-queue's settle time, so the queue file is read once per run.
    std::thread::sleep(Duration::from_secs(4));
    let run = |ledger: bool| {
        std::fs::write(dir.path().join("curupira.toml"), config(ledger)).unwrap();
        let _ = std::fs::remove_file(dir.path().join("done.jsonl"));
        let _ = std::fs::remove_dir_all(dir.path().join(".curupira"));
        let started = Instant::now();
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_curupira"))
            .args(["run", "--once", "--config", "curupira.toml"])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        let took = started.elapsed();
        assert!(status.success(), "curupira run: {status}");
        let done = std::fs::read_to_string(dir.path().join("done.jsonl")).unwrap();
        assert_eq!(done.lines().count(), items);
        took
    };
    let (mut on, mut off) = (Vec::new(), Vec::new());
    let runs: usize = count("HOST_RUNS", 7);
    for _ in 0..runs {
        off.push(run(false));
        on.push(run(true));
    }
    let median = |runs: &mut Vec<Duration>| {
        runs.sort();
        runs[runs.len() / 2]
    };
    let (on, off) = (median(&mut on), median(&mut off));
    let per = |d: Duration| d.as_secs_f64() * 1e6 / items as f64;
    println!("`curupira run --once`, {items} items, no-op agent, max_concurrent = 4:");
    println!(
        "  ledger off: {:.2} s ({:.1} µs per task)",
        off.as_secs_f64(),
        per(off)
    );
    println!(
        "  ledger on:  {:.2} s ({:.1} µs per task)",
        on.as_secs_f64(),
        per(on)
    );
    println!(
        "  time on / off: {:.3}\n",
        on.as_secs_f64() / off.as_secs_f64()
    );
}

fn per_dispatch(dispatches: usize) {
    let dir = tempfile::tempdir().unwrap();
    let threaded = dir.path().join("threaded.sqlite");
    let thread = WriterThread::start(Ledger::open(&threaded).unwrap()).unwrap();
    let writer = thread.writer();
    let mut reader = Ledger::open(&threaded).unwrap();
    let mut inline = Ledger::open(&dir.path().join("inline.sqlite")).unwrap();
    let command = vec!["true".to_owned()];
    let stop = Stop::new();
    let limits = AgentLimits::default();
    let pairs = r#"[{"key":"issue","value":"1234"},{"key":"title","value":"A task"}]"#;
    let mut spent = [Duration::ZERO; 3];
    let block = 150;
    let mut n = 0;
    let agent = |task_id: &str| {
        let run = AgentRun {
            command: &command,
            config_dir: dir.path(),
            cwd: dir.path(),
            prompt: "",
            automation: "bench",
            task_id,
            repository: "",
            branch: None,
            env: &[],
            stream: None,
        };
        let outcome = run_attempt(&run, &limits, &stop);
        assert!(outcome.succeeded(), "{outcome:?}");
    };
    let process = AgentProcess {
        pid: 4242,
        start: Some(1),
    };
    while n < dispatches {
        // 0: no ledger; 1: the writer thread, as the host does; 2: inline transactions.
        for (side, total) in spent.iter_mut().enumerate() {
            let started = Instant::now();
            for _ in 0..block / 3 {
                let task_id = format!("{n:064x}");
                n += 1;
                match side {
                    1 => {
                        reader.decide("bench", &task_id).unwrap();
                        writer.write(Change::AttemptStarted {
                            automation: "bench".into(),
                            task_id: task_id.clone(),
                            pairs: pairs.into(),
                            workspace: "/work".into(),
                            branch: None,
                            log_path: None,
                            host_pid: 1,
                        });
                        agent(&task_id);
                        writer.write(Change::AgentStarted {
                            automation: "bench".into(),
                            task_id: task_id.clone(),
                            agent: process,
                        });
                        writer.write(Change::Finished {
                            automation: "bench".into(),
                            task_id,
                            status: Status::Succeeded,
                            exit_code: Some(0),
                            reason: "exit".into(),
                        });
                    }
                    2 => {
                        inline.decide("bench", &task_id).unwrap();
                        inline
                            .attempt_started("bench", &task_id, pairs, "/work", 1)
                            .unwrap();
                        agent(&task_id);
                        inline.agent_started("bench", &task_id, process).unwrap();
                        inline
                            .finished("bench", &task_id, Status::Succeeded, Some(0), "exit")
                            .unwrap();
                    }
                    _ => agent(&task_id),
                }
            }
            if side == 1 {
                writer.wait(writer.last_issued()).unwrap();
            }
            *total += started.elapsed();
        }
    }
    thread.close();
    let each = (n / 3) as f64;
    let per = |d: Duration| d.as_secs_f64() * 1e6 / each;
    println!("dispatches of a no-op agent: {n} (a third on each side)");
    println!(
        "  without the ledger:               {:.1} µs per dispatch",
        per(spent[0])
    );
    println!(
        "  with the writer thread (the host): {:.1} µs per dispatch ({:.3}×)",
        per(spent[1]),
        spent[1].as_secs_f64() / spent[0].as_secs_f64()
    );
    println!(
        "  with inline transactions:          {:.1} µs per dispatch ({:.3}×)",
        per(spent[2]),
        spent[2].as_secs_f64() / spent[0].as_secs_f64()
    );
}
