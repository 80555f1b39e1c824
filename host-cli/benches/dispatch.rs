//! The host's dispatch overhead (issue 11, "Performance"): `curupira run --once` (the
//! built binary, with the built-in `local-queue`) side by side, in the same run, with the
//! floor of what it has to do.
//!
//! - `dispatch_1000/host`: 1,000 distinct items in a settled `tasks.jsonl` (written
//!   once, older than `local-queue`'s settle time, as a watched queue usually is), a
//!   fresh done file per iteration, agent `true`, `[settings.agent] max_concurrent = 4`,
//!   one automation with `polling = { batch_size = 1000 }`: the whole run, from the
//!   host's start to its exit (config, extension start and shutdown included).
//! - `dispatch_1000/floor`: 1,000 spawns of `true`, four at a time (four threads taking
//!   the next spawn from one counter, each spawning and waiting in turn), stdio on
//!   `/dev/null`.
//! - `dispatch_1000/protocol-floor`: the least any host keeping the protocol can do
//!   (docs/PROTOCOL.md section 5, issue 11's "one request in flight per extension"):
//!   the same built-in `local-queue` process through `curupira-client`, one thread
//!   calling `trigger/poll` while one of four slots is free, `trigger/onStarted`, then
//!   handing the item to one of four threads that spawn `true` as the floor does, and
//!   `trigger/onFinished` when it exits. No ledger, no watchdog, no events, no
//!   output capture, no template: the floor plus the three round trips per item that
//!   the protocol makes every host pay, one after another.
//! - `worktree_20/host-mc1`: 20 items in worktree mode (`cleanup = "always"`, agent
//!   `true`, `max_concurrent = 1`, so the host makes and removes one worktree at a
//!   time), in a fresh repository per iteration (made outside the timing), so branches
//!   never collide and no run takes up an earlier run's branch.
//! - `worktree_20/floor`: `git worktree add -b BRANCH PATH HEAD` then
//!   `git worktree remove --force PATH`, 20 times in turn, in the same kind of fresh
//!   repository (same commit, same folder layout): what the host must at least do.
//! - `worktree_20/host-mc4`: the host again with `max_concurrent = 4`, for information
//!   (the host serialises its worktree changes, so only the agents overlap).
//!
//! `cargo bench -p curupira-host --bench dispatch`
//!
//! After criterion's groups, the same host runs and floors **interleaved** run by run
//! (`INTERLEAVED=N` rounds, default 9, `0` skips; each round runs the host, the floor,
//! the protocol floor, then the worktree lines), medians printed with their ratios —
//! host over floor (the figure), protocol floor over floor (what the protocol
//! alone costs), host over protocol floor (what the host adds to it) — and each
//! round's own ratio as a median with its least and most:
//! criterion measures every sample of one line before the next line, so drift of a
//! shared machine (the worktree floor moved by 31 % between two runs of the same code)
//! lands on one side of its ratio; interleaving puts it on both. Then the CPU time of
//! each interleaved line (this process's and its reaped descendants', from
//! `/proc/self/stat`, Linux only: the host and all it started, or the floor's threads
//! and their children) and what one line adds per task beyond another, which unlike
//! the wall-time ratio does not depend on how many cores the floor leaves idle.
//!
//! Every run's exit status and done file are checked (that all items ran; the protocol
//! floor's calls must all succeed), never its time. Read the ratio of the lines of one group, not absolute times; criterion prints
//! means, the medians are in `target/criterion/<group>/<line>/new/estimates.json`. The
//! host runs with its durable ledger on (the default), started afresh each iteration
//! like the done file. Both groups follow the disk's mood (git writes worktrees; the
//! ledger and the done file are written, though neither is synced per task);
//! `TMPDIR=/dev/shm/…` (temporary folders on tmpfs) gives steadier ratios. Figures and
//! findings: `docs/BENCHMARKS.md`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use curupira_client::{Client, LaunchCommand, Options};
use curupira_host::host_info;
use curupira_protocol::{Configuration, PollParams, ValidateResult};

const ITEMS: usize = 1_000;
const CONCURRENCY: usize = 4;
const WORKTREE_ITEMS: usize = 20;

/// Older than `local-queue`'s settle time (3 s), so the queue file is read once per
/// run and afterwards only its metadata is checked.
const SETTLE: Duration = Duration::from_secs(4);

fn queue(items: usize) -> String {
    (1..=items)
        .map(|n| format!("{{\"n\": \"{n}\"}}\n"))
        .collect()
}

fn config(max_concurrent: usize, batch_size: usize, workspace: &str) -> String {
    format!(
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
         [settings.agent]\ncommand = [\"true\"]\nmax_concurrent = {max_concurrent}\n\n\
         {workspace}\
         [extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.fix]\ntrigger = \"jsonl\"\nprompt = \"Fix ${{n}}\"\n\
         arguments = {{ path = \"tasks.jsonl\", done_path = \"done.jsonl\" }}\n\
         polling = {{ batch_size = {batch_size} }}\n"
    )
}

/// `curupira run --once` in `dir`; panics unless it exits 0 having finished `items`.
fn run_host(dir: &Path, items: usize) -> Duration {
    let done = dir.join("done.jsonl");
    let _ = std::fs::remove_file(&done);
    // The durable ledger (on, as by default) would skip every task of the last
    // iteration: each iteration starts from no state, as the done file does.
    for file in ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"] {
        let _ = std::fs::remove_file(dir.join(".curupira").join(file));
    }
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .args(["run", "--once", "--config"])
        .arg(dir.join("curupira.toml"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let elapsed = start.elapsed();
    assert!(status.success(), "curupira run: {status}");
    let finished = std::fs::read_to_string(&done).unwrap().lines().count();
    assert_eq!(finished, items, "items recorded in {}", done.display());
    elapsed
}

/// Spawns `true`, stdio on `/dev/null`, and waits for it: one agent of a floor.
fn spawn_true() {
    let status = Command::new("true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Spawns `true` `count` times, `workers` at a time.
fn spawn_floor(count: usize, workers: usize) -> Duration {
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while next.fetch_add(1, Ordering::Relaxed) < count {
                    spawn_true();
                }
            });
        }
    });
    start.elapsed()
}

/// The floor plus the protocol's calls (the module's `protocol-floor`): the built-in
/// `local-queue` in `dir`, polled while one of `workers` slots is free, each item's
/// `true` spawned on a slot thread between its `onStarted` and its `onFinished`;
/// panics unless all `items` end up in the done file.
fn protocol_floor(dir: &Path, items: usize, workers: usize) -> Duration {
    let done = dir.join("done.jsonl");
    let _ = std::fs::remove_file(&done);
    let start = Instant::now();
    let launch =
        LaunchCommand::new(env!("CARGO_BIN_EXE_curupira"), dir).args(["builtin", "local-queue"]);
    let mut client = Client::spawn("local", &launch, Options::default()).unwrap();
    client.initialize(host_info()).unwrap();
    // The automation's table as the host sends it: the parameters and the core keys.
    let mut table = Configuration::new();
    table.insert("path".into(), "tasks.jsonl".into());
    table.insert("done_path".into(), "done.jsonl".into());
    table.insert("trigger_type".into(), "local/jsonl".into());
    table.insert("prompt".into(), "Do ${n}".into());
    let ValidateResult::Accepted {
        configuration: normalised,
    } = client.validate("jsonl", &table).unwrap()
    else {
        panic!("local-queue rejected the bench's configuration");
    };
    let poll = PollParams {
        trigger_type: "jsonl".to_owned(),
        automation: normalised.unwrap_or(table),
        limit: Some(1000),
        preview: false,
    };
    let (to_slots, slots) = mpsc::channel::<usize>();
    let slots = Mutex::new(slots);
    let (to_loop, ended) = mpsc::channel::<usize>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (slots, to_loop) = (&slots, to_loop.clone());
            scope.spawn(move || {
                // The lock is held only while waiting for the next item.
                while let Ok(item) = { slots.lock().unwrap().recv() } {
                    spawn_true();
                    to_loop.send(item).unwrap();
                }
            });
        }
        let mut polled = Vec::new();
        let (mut running, mut exhausted) = (0, false);
        loop {
            while running < workers && !exhausted {
                match client.poll(&poll).unwrap() {
                    Some(pairs) => {
                        client.on_started("jsonl", &pairs).unwrap();
                        to_slots.send(polled.len()).unwrap();
                        polled.push(pairs);
                        running += 1;
                    }
                    None => exhausted = true,
                }
            }
            if running == 0 {
                break;
            }
            let item = ended.recv().unwrap();
            running -= 1;
            client.on_finished("jsonl", &polled[item]).unwrap();
        }
        drop(to_slots);
    });
    client.shutdown().unwrap();
    let elapsed = start.elapsed();
    let finished = std::fs::read_to_string(&done).unwrap().lines().count();
    assert_eq!(finished, items, "items recorded in {}", done.display());
    elapsed
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}: {status}");
}

/// A fresh repository with one commit holding `curupira.toml` and `tasks.jsonl`.
fn fresh_repo(config_text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    std::fs::write(path.join("curupira.toml"), config_text).unwrap();
    std::fs::write(path.join("tasks.jsonl"), queue(WORKTREE_ITEMS)).unwrap();
    git(path, &["init", "-q", "-b", "main"]);
    git(path, &["add", "-A"]);
    git(
        path,
        &[
            "-c",
            "user.email=bench@example.com",
            "-c",
            "user.name=bench",
            "commit",
            "-q",
            "-m",
            "start",
        ],
    );
    dir
}

/// `git worktree add -b` + `git worktree remove --force`, `count` times in turn, where
/// the host would put them.
fn worktree_floor(repo: &Path, count: usize) -> Duration {
    let root: PathBuf = repo.join(".curupira/worktrees/fix");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(repo.join(".curupira/.gitignore"), "*\n").unwrap();
    let start = Instant::now();
    for n in 0..count {
        let branch = format!("curupira/fix/{n:012x}");
        let path = root.join(format!("{n:012x}"));
        let path = path.to_str().unwrap();
        git(repo, &["worktree", "add", "-b", &branch, path, "HEAD"]);
        git(repo, &["worktree", "remove", "--force", path]);
    }
    start.elapsed()
}

/// A folder with the `dispatch_1000` config and its queue, settled.
fn settled_dispatch_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("curupira.toml"),
        config(CONCURRENCY, ITEMS, ""),
    )
    .unwrap();
    std::fs::write(dir.path().join("tasks.jsonl"), queue(ITEMS)).unwrap();
    std::thread::sleep(SETTLE);
    dir
}

/// The worktree mode the `worktree_20` lines use.
const WORKTREE_MODE: &str = "[settings.workspace]\nmode = \"worktree\"\ncleanup = \"always\"\n\n";

fn dispatch(c: &mut Criterion) {
    let dir = settled_dispatch_dir();

    let mut group = c.benchmark_group("dispatch_1000");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(2));
    group.measurement_time(Duration::from_secs(15));
    group.throughput(Throughput::Elements(ITEMS as u64));
    group.bench_function("host", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run_host(dir.path(), ITEMS)).sum());
    });
    group.bench_function("floor", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| spawn_floor(ITEMS, CONCURRENCY)).sum());
    });
    group.bench_function("protocol-floor", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| protocol_floor(dir.path(), ITEMS, CONCURRENCY))
                .sum()
        });
    });
    group.finish();
}

fn worktrees(c: &mut Criterion) {
    let mc1 = config(1, WORKTREE_ITEMS, WORKTREE_MODE);
    let mc4 = config(CONCURRENCY, WORKTREE_ITEMS, WORKTREE_MODE);

    let mut group = c.benchmark_group("worktree_20");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(2));
    group.measurement_time(Duration::from_secs(15));
    group.throughput(Throughput::Elements(WORKTREE_ITEMS as u64));
    group.bench_function("host-mc1", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| run_host(fresh_repo(&mc1).path(), WORKTREE_ITEMS))
                .sum()
        });
    });
    group.bench_function("floor", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| worktree_floor(fresh_repo(&mc1).path(), WORKTREE_ITEMS))
                .sum()
        });
    });
    group.bench_function("host-mc4", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| run_host(fresh_repo(&mc4).path(), WORKTREE_ITEMS))
                .sum()
        });
    });
    group.finish();
}

/// The host and its floors alternated run by run, `rounds` times, medians printed:
/// drift of the machine (criterion measures all of one line, then all of the next)
/// falls on both sides alike.
fn interleaved(rounds: usize) {
    const HOST: usize = 0;
    const FLOOR: usize = 1;
    const PROTOCOL_FLOOR: usize = 2;
    const WORKTREE_HOST: usize = 3;
    const WORKTREE_FLOOR: usize = 4;
    let dir = settled_dispatch_dir();
    let mc1 = config(1, WORKTREE_ITEMS, WORKTREE_MODE);
    let mut times: [Vec<Duration>; 5] = Default::default();
    // CPU of each line summed over the rounds: this process's and its reaped
    // descendants' (the host and everything it started, or the floor's threads and
    // their `true`s), in clock ticks.
    let mut cpu = [Some(0); 5];
    let mut measure = |line: usize, run: &mut dyn FnMut() -> Duration| {
        let before = cpu_ticks();
        times[line].push(run());
        cpu[line] = match (cpu[line], before, cpu_ticks()) {
            (Some(sum), Some(before), Some(after)) => Some(sum + (after - before)),
            _ => None,
        };
    };
    for _ in 0..rounds {
        measure(HOST, &mut || run_host(dir.path(), ITEMS));
        measure(FLOOR, &mut || spawn_floor(ITEMS, CONCURRENCY));
        measure(PROTOCOL_FLOOR, &mut || {
            protocol_floor(dir.path(), ITEMS, CONCURRENCY)
        });
        let repo = fresh_repo(&mc1);
        measure(WORKTREE_HOST, &mut || run_host(repo.path(), WORKTREE_ITEMS));
        let repo = fresh_repo(&mc1);
        measure(WORKTREE_FLOOR, &mut || {
            worktree_floor(repo.path(), WORKTREE_ITEMS)
        });
    }
    // Each round's own ratio too: runs of one round share the machine's mood, so
    // their ratios spread less than the times do.
    let ratio = |line: usize, to: usize| {
        let mut ratios: Vec<f64> = times[line]
            .iter()
            .zip(&times[to])
            .map(|(line, to)| line.as_secs_f64() / to.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let median = |line: usize| {
            let mut runs = times[line].clone();
            runs.sort();
            runs[runs.len() / 2].as_secs_f64() * 1e3
        };
        let (line, to) = (median(line), median(to));
        format!(
            "{line:.1} / {to:.1} ms: {:.2}× (per round {:.2}×, {:.2}–{:.2})",
            line / to,
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1],
        )
    };
    println!(
        "\ninterleaved, {rounds} rounds, medians (and the median, least and most of each round's ratio):"
    );
    for (name, line, to) in [
        ("dispatch_1000, host / floor", HOST, FLOOR),
        (
            "dispatch_1000, protocol floor / floor",
            PROTOCOL_FLOOR,
            FLOOR,
        ),
        ("dispatch_1000, host / protocol floor", HOST, PROTOCOL_FLOOR),
        (
            "worktree_20 mc1, host / floor",
            WORKTREE_HOST,
            WORKTREE_FLOOR,
        ),
    ] {
        println!("  {name}: {}", ratio(line, to));
    }
    // The CPU a line adds per task beyond another (the run's start and end shared
    // among its tasks): unlike the wall-time ratio, it does not depend on how many
    // cores the floor alone keeps busy.
    for (name, line, to, items) in [
        ("dispatch_1000, host / floor", HOST, FLOOR, ITEMS),
        (
            "dispatch_1000, protocol floor / floor",
            PROTOCOL_FLOOR,
            FLOOR,
            ITEMS,
        ),
        (
            "dispatch_1000, host / protocol floor",
            HOST,
            PROTOCOL_FLOOR,
            ITEMS,
        ),
        (
            "worktree_20 mc1, host / floor",
            WORKTREE_HOST,
            WORKTREE_FLOOR,
            WORKTREE_ITEMS,
        ),
    ] {
        let (Some(line), Some(to)) = (cpu[line], cpu[to]) else {
            continue;
        };
        let per_run = |ticks: u64| ticks as f64 / CLOCK_TICKS_PER_SECOND / rounds as f64 * 1e3;
        let (line, to) = (per_run(line), per_run(to));
        println!(
            "  CPU (means), {name}: {line:.1} / {to:.1} ms: {:.2}×, {:.0} µs more per task",
            line / to,
            (line - to) * 1e3 / items as f64
        );
    }
}

/// `/proc`'s clock tick (Linux's `USER_HZ`, 100 on every architecture we build for).
const CLOCK_TICKS_PER_SECOND: f64 = 100.0;

/// This process's CPU time (user and system) plus that of its reaped descendants, in
/// clock ticks, from `/proc/self/stat`; `None` where there is no such file.
fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces, closed by the last `)`):
    // state is field 3, so utime, stime, cutime and cstime (14 to 17) are 11 to 14.
    let fields: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    fields
        .get(11..15)?
        .iter()
        .map(|field| field.parse::<u64>().ok())
        .sum()
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    dispatch(&mut criterion);
    worktrees(&mut criterion);
    criterion.final_summary();
    let rounds: usize = std::env::var("INTERLEAVED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(9);
    if rounds > 0 {
        interleaved(rounds);
    }
}
