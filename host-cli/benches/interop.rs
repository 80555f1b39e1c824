//! Our host against the ecosystem's reference host on the same work (issue 26,
//! "Performance"): dispatch `ITEMS` (100) items of one extension written with the
//! official Python SDK `curupira-sdk` to a no-op agent.
//!
//! - `interop_100/ours-sdk`: `curupira run --once` (this workspace's binary), the
//!   official-SDK extension as `[extensions.rec]`, one process per round, agent
//!   `true`, one task at a time, each in its own Git worktree (`mode = "worktree"`,
//!   `cleanup = "always"`), as the reference host runs every task.
//! - `interop_100/reference-sdk`: the reference host `curupira` 0.4.0 (`curupira
//!   run`, a drain) on the same extension and entries: `[plugins.rec] type = "uvx"`
//!   with the `uvx` stand-in of `conformance/curupira-wire/settings/README.md` (it
//!   runs its arguments), one task at a time (`max_active_tasks = 1`), the `claude`
//!   stand-in exiting 0 at once, worktrees of a local bare repository.
//! - `interop_100/ours-rust`: our host with the built-in `local-queue` (an extension
//!   built with our Rust SDK, one process for the run), otherwise as `ours-sdk`.
//!
//! `cargo bench -p curupira-host --bench interop` (needs network once, to install the
//! published packages into `target/tmp/curupira-ecosystem/`; without them it says so
//! and measures nothing). After criterion's group the three lines run **interleaved**
//! (`INTERLEAVED=N` rounds, default 3, `0` skips), and the medians are printed per
//! task with the ratios reference/ours, CPU per task (this process's reaped
//! descendants, from `/proc/self/stat`) and each host process's peak RSS (`VmHWM`,
//! sampled from `/proc/<pid>/status` while it runs). Every run is checked: each item
//! dispatched exactly once. Figures: `docs/BENCHMARKS.md`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/ecosystem_support/mod.rs"]
mod ecosystem_support;
#[path = "../tests/run_support/mod.rs"]
mod run_support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode};
use ecosystem_support::{Ecosystem, ecosystem};

const ITEMS: usize = 100;

/// The official-SDK extension: hands out the entries of a JSON file, one per poll, as
/// the recording extension of `conformance/curupira-wire/` does.
const EXTENSION: &str = r#"
import json
from dataclasses import dataclass

from curupira_sdk import Curupira

app = Curupira(name="bench-ext", version="0.1.0")
cursor = {}


@dataclass
class Entry:
    id: str
    title: str


@app.trigger
def list_entries(path: str) -> Entry | None:
    with open(path, encoding="utf-8") as source:
        entries = json.load(source)
    index = cursor.get(path, 0)
    if index >= len(entries):
        return None
    cursor[path] = index + 1
    return Entry(id=str(index + 1), title=entries[index])


if __name__ == "__main__":
    app.run()
"#;

/// A prepared scratch folder for all three lines.
struct Bench {
    dir: tempfile::TempDir,
    installed: Ecosystem,
}

impl Bench {
    fn new(installed: Ecosystem) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = |cwd: &Path, args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(cwd)
                .env("GIT_AUTHOR_NAME", "b")
                .env("GIT_AUTHOR_EMAIL", "b@example.invalid")
                .env("GIT_COMMITTER_NAME", "b")
                .env("GIT_COMMITTER_EMAIL", "b@example.invalid")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        // Our project: a Git work tree (worktree mode), the extension, the entries.
        let ours = root.join("ours");
        fs::create_dir_all(ours.join("ext")).unwrap();
        git(&ours, &["init", "-q"]);
        git(&ours, &["commit", "-q", "--allow-empty", "-m", "init"]);
        fs::write(ours.join("ext/ext.py"), EXTENSION).unwrap();
        let entries: Vec<String> = (1..=ITEMS).map(|n| format!("entry {n}")).collect();
        let entries = serde_json::to_string(&entries).unwrap();
        fs::write(root.join("entries.json"), &entries).unwrap();
        let queue: String = (1..=ITEMS)
            .map(|n| format!("{{\"n\": \"{n}\"}}\n"))
            .collect();
        fs::write(ours.join("tasks.jsonl"), queue).unwrap();
        fs::write(
            ours.join("ext/curupira-extension.toml"),
            format!(
                "manifest_version = 1\nname = \"rec\"\nversion = \"0.1.0\"\nprotocol_version = 2\n\
                 runtime = \"python\"\nkind = \"trigger\"\ntrigger_types = [\"list-entries\"]\n\n\
                 [launch]\ntype = \"executable\"\nprogram = {:?}\nargs = [{:?}]\n",
                installed.bin("python").display().to_string(),
                ours.join("ext/ext.py").display().to_string(),
            ),
        )
        .unwrap();
        let common = format!(
            "[settings]\nrepository = \"acme/widgets\"\n\n[settings.timeouts]\ninitialize = 60\n\
             request = 60\nshutdown = 10\n\n[settings.agent]\ncommand = [\"true\"]\n\n\
             [settings.workspace]\nmode = \"worktree\"\ncleanup = \"always\"\n\n\
             [settings.ledger]\npath = \"{}/ledger.sqlite\"\n\n",
            ours.display()
        );
        fs::write(
            ours.join("sdk.toml"),
            format!(
                "{common}[extensions.rec]\npath = \"ext\"\n\n[automations.entries]\n\
                 trigger = \"list-entries\"\nprompt = \"Do ${{title}}\"\n\
                 arguments = {{ path = {:?} }}\npolling = {{ batch_size = {} }}\n",
                root.join("entries.json").display().to_string(),
                ITEMS + 1
            ),
        )
        .unwrap();
        fs::write(
            ours.join("rust.toml"),
            format!(
                "{common}[extensions.local]\nbuiltin = \"local-queue\"\n\n[automations.queue]\n\
                 trigger = \"jsonl\"\nprompt = \"Do ${{n}}\"\n\
                 arguments = {{ path = \"tasks.jsonl\", done_path = \"done.jsonl\" }}\n\
                 polling = {{ batch_size = {} }}\n",
                ITEMS + 1
            ),
        )
        .unwrap();

        // The reference host's folder: HOME, a bare repository, the stand-ins.
        let theirs = root.join("theirs");
        fs::create_dir_all(theirs.join("home")).unwrap();
        fs::create_dir_all(theirs.join("bin")).unwrap();
        git(&theirs, &["init", "-q", "src"]);
        git(
            &theirs.join("src"),
            &["commit", "-q", "--allow-empty", "-m", "init"],
        );
        git(&theirs, &["clone", "-q", "--bare", "src", "remote.git"]);
        for (name, text) in [
            (
                "uvx",
                "#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in --from) shift 2;; -*) shift;; *) break;; esac; done\nexec \"$@\"\n",
            ),
            ("claude", "#!/bin/sh\nexit 0\n"),
        ] {
            let path = theirs.join("bin").join(name);
            fs::write(&path, text).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::write(
            theirs.join("settings.toml"),
            format!(
                "[settings]\nmax_active_tasks = 1\nworkspace_dir = {ws:?}\nstate_db_path = {db:?}\n\n\
                 [settings.polling]\nbatch_size = {batch}\n\n\
                 [repositories.demo]\nremote = \"file://{remote}\"\n\n\
                 [agents.defaults]\nprofile = \"stub\"\n\n[agents.profiles.stub]\nprovider = \"claude\"\n\n\
                 [plugins.rec]\ntype = \"uvx\"\nargs = [{python:?}, {script:?}]\n\n\
                 [automations.e1]\ntrigger_type = \"rec/list-entries\"\nrepository = \"demo\"\n\
                 path = {entries:?}\nprompt = \"Do ${{title}}\"\n",
                ws = theirs.join("ws").display().to_string(),
                db = theirs.join("state.sqlite3").display().to_string(),
                batch = ITEMS + 1,
                remote = theirs.join("remote.git").display(),
                python = installed.bin("python").display().to_string(),
                script = ours.join("ext/ext.py").display().to_string(),
                entries = root.join("entries.json").display().to_string(),
            ),
        )
        .unwrap();
        Bench { dir, installed }
    }

    fn ours(&self) -> PathBuf {
        self.dir.path().join("ours")
    }

    fn theirs(&self) -> PathBuf {
        self.dir.path().join("theirs")
    }
}

/// What one run cost: wall time, and the host process's peak RSS in KiB.
struct Cost {
    wall: Duration,
    peak_kib: u64,
}

/// Runs `command` to its end, sampling the peak RSS of its process meanwhile.
fn measured(command: &mut Command) -> (std::process::Output, Cost) {
    let start = Instant::now();
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let sampler = std::thread::spawn(move || {
        let mut peak = 0;
        while let Ok(status) = fs::read_to_string(&status_file) {
            if let Some(kib) = status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|rest| {
                    rest.trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
            {
                peak = peak.max(kib);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        peak
    });
    let output = child.wait_with_output().unwrap();
    let wall = start.elapsed();
    let peak_kib = sampler.join().unwrap();
    (output, Cost { wall, peak_kib })
}

/// Our host on `config` (`sdk.toml` or `rust.toml`), from no state.
fn run_ours(bench: &Bench, config: &str) -> Cost {
    let ours = bench.ours();
    for file in [
        "ledger.sqlite",
        "ledger.sqlite-wal",
        "ledger.sqlite-shm",
        "done.jsonl",
    ] {
        let _ = fs::remove_file(ours.join(file));
    }
    let (output, cost) = measured(
        Command::new(env!("CARGO_BIN_EXE_curupira"))
            .args(["run", "--once", "--format", "json", "--config", config])
            .current_dir(&ours),
    );
    assert!(output.status.success(), "{output:?}");
    let finished = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains("\"event\":\"task.finished\""))
        .count();
    assert_eq!(finished, ITEMS, "{config}: {output:?}");
    cost
}

/// The reference host on the same entries, from no state.
fn run_theirs(bench: &Bench) -> Cost {
    let theirs = bench.theirs();
    let _ = fs::remove_file(theirs.join("state.sqlite3"));
    let _ = fs::remove_dir_all(theirs.join("ws"));
    let _ = fs::remove_dir_all(theirs.join("home/.curupira"));
    let path = format!(
        "{}:{}",
        theirs.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (output, cost) = measured(
        Command::new(bench.installed.bin("curupira"))
            .args(["run", "--config", "settings.toml"])
            .current_dir(&theirs)
            .env("HOME", theirs.join("home"))
            .env("PATH", path),
    );
    assert!(output.status.success(), "{output:?}");
    let ok = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.starts_with("ok\t"))
        .count();
    assert_eq!(ok, ITEMS, "{output:?}");
    cost
}

/// `/proc`'s clock tick (Linux's `USER_HZ`).
const CLOCK_TICKS_PER_SECOND: f64 = 100.0;

/// The CPU time (user and system) of this process's reaped descendants, in clock
/// ticks, from `/proc/self/stat`.
fn children_cpu_ticks() -> u64 {
    let stat = fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    // cutime and cstime are fields 16 and 17, the 14th and 15th after the name.
    fields[13].parse::<u64>().unwrap() + fields[14].parse::<u64>().unwrap()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn interleaved(bench: &Bench, rounds: usize) {
    type Line<'a> = (&'a str, Box<dyn Fn() -> Cost + 'a>);
    let lines: Vec<Line<'_>> = vec![
        ("ours-sdk", Box::new(|| run_ours(bench, "sdk.toml"))),
        ("reference-sdk", Box::new(|| run_theirs(bench))),
        ("ours-rust", Box::new(|| run_ours(bench, "rust.toml"))),
    ];
    let mut walls = vec![Vec::new(); lines.len()];
    let mut cpus = vec![Vec::new(); lines.len()];
    let mut peaks = vec![0_u64; lines.len()];
    for _ in 0..rounds {
        for (index, (_, line)) in lines.iter().enumerate() {
            let before = children_cpu_ticks();
            let cost = line();
            let cpu = (children_cpu_ticks() - before) as f64 / CLOCK_TICKS_PER_SECOND;
            walls[index].push(cost.wall.as_secs_f64());
            cpus[index].push(cpu);
            peaks[index] = peaks[index].max(cost.peak_kib);
        }
    }
    println!("\ninterleaved, {rounds} rounds of {ITEMS} tasks, medians per task:");
    let mut per_task = Vec::new();
    for (index, (name, _)) in lines.iter().enumerate() {
        let wall = median(&mut walls[index]) / ITEMS as f64;
        let cpu = median(&mut cpus[index]) / ITEMS as f64;
        per_task.push(wall);
        println!(
            "  {name:<14} wall {:>8.1} ms/task   cpu {:>8.1} ms/task   host peak RSS {:>7} KiB",
            wall * 1e3,
            cpu * 1e3,
            peaks[index]
        );
    }
    println!(
        "  reference-sdk / ours-sdk: {:.2}×   reference-sdk / ours-rust: {:.2}×",
        per_task[1] / per_task[0],
        per_task[1] / per_task[2]
    );
}

fn main() {
    let installed = match ecosystem() {
        Ok(installed) => installed,
        Err(reason) => {
            println!("interop: the published Curupira packages are needed: {reason}");
            return;
        }
    };
    let bench = Bench::new(installed);
    let mut criterion = Criterion::default().configure_from_args();
    {
        let mut group = criterion.benchmark_group("interop_100");
        group.sampling_mode(SamplingMode::Flat);
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(1));
        group.measurement_time(Duration::from_secs(1));
        group.bench_function("ours-sdk", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| run_ours(&bench, "sdk.toml").wall).sum())
        });
        group.bench_function("reference-sdk", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| run_theirs(&bench).wall).sum())
        });
        group.bench_function("ours-rust", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| run_ours(&bench, "rust.toml").wall).sum())
        });
        group.finish();
    }
    criterion.final_summary();
    let rounds: usize = std::env::var("INTERLEAVED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    if rounds > 0 {
        interleaved(&bench, rounds);
    }
}
