//! `curupira run` with several agents at once and with retries (issue 11, items 1
//! and 4), through the real binary, the built-in `local-queue` extension and shell
//! agents that write start and end stamps. Overlap is measured from those stamps, not
//! from timing the host.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use run_support::{Project, Run};

/// An agent that appends `start N <ns>` and `end N <ns>` to `stamps` around a sleep,
/// where N is the item's `n` (read from the prompt on stdin).
const STAMPING_AGENT: &str = r#"command = ["sh", "-c", "n=$(cat); echo \"start $n $(date +%s%N)\" >> stamps; sleep 0.4; echo \"end $n $(date +%s%N)\" >> stamps"]"#;

fn queue(items: usize) -> String {
    (1..=items)
        .map(|n| format!("{{\"n\": \"{n}\"}}\n"))
        .collect()
}

/// The most agents that ran at once, from the stamps file.
fn max_overlap(stamps: &str) -> usize {
    let mut edges: Vec<(u128, i32)> = stamps
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let at: u128 = fields[2].parse().unwrap();
            (at, if fields[0] == "start" { 1 } else { -1 })
        })
        .collect();
    // At the same instant an end comes before a start.
    edges.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, change) in edges {
        now += change;
        most = most.max(now);
    }
    usize::try_from(most).unwrap()
}

fn config(agent_settings: &str, automations: &str) -> String {
    config_with_agent(&format!("{STAMPING_AGENT}\n{agent_settings}"), automations)
}

fn automation(name: &str, queue: &str, extra: &str) -> String {
    format!(
        "[automations.{name}]\ntrigger = \"jsonl\"\nprompt = \"${{n}}\"\n\
         arguments = {{ path = \"{queue}\" }}\n{extra}\n"
    )
}

#[test]
fn at_most_max_concurrent_agents_run_and_they_overlap() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(9));
    project.write(
        "curupira.toml",
        &config(
            "max_concurrent = 3",
            &automation("work", "tasks.jsonl", "polling = { batch_size = 9 }"),
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.events_named("task.finished").len(), 9, "{run:?}");
    let stamps = project.read("stamps");
    assert_eq!(stamps.lines().count(), 18, "{stamps}");
    let most = max_overlap(&stamps);
    assert!((2..=3).contains(&most), "{most} agents at once:\n{stamps}");
    assert_eq!(project.read("tasks.jsonl.done").lines().count(), 9);
}

#[test]
fn an_automation_cap_holds_under_the_global_limit() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(4));
    project.write(
        "curupira.toml",
        &config(
            "max_concurrent = 4",
            &automation(
                "capped",
                "tasks.jsonl",
                "polling = { batch_size = 4 }\nagent = { max_concurrent = 1 }",
            ),
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(max_overlap(&project.read("stamps")), 1);
    assert_eq!(run.events_named("task.finished").len(), 4);
}

#[test]
fn two_automations_share_the_limit_and_both_progress() {
    let project = Project::new();
    project.write("a.jsonl", &queue(4));
    project.write("b.jsonl", &queue(4));
    project.write(
        "curupira.toml",
        &config(
            "max_concurrent = 2",
            &(automation("a", "a.jsonl", "polling = { batch_size = 4 }")
                + &automation("b", "b.jsonl", "polling = { batch_size = 4 }")),
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let started: Vec<String> = run
        .events_named("task.started")
        .iter()
        .map(|e| e["automation"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(started.len(), 8);
    // Neither waits for the other to finish: both are among the first two started.
    assert!(
        started[..2].contains(&"a".to_owned()) && started[..2].contains(&"b".to_owned()),
        "{started:?}"
    );
    assert!(max_overlap(&project.read("stamps")) <= 2);
    assert_eq!(project.read("a.jsonl.done").lines().count(), 4);
    assert_eq!(project.read("b.jsonl.done").lines().count(), 4);
}

#[test]
fn a_flaky_agent_is_retried_with_doubling_delays_and_finished_once() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(1));
    // Fails on its first two runs, succeeds on the third.
    project.write(
        "curupira.toml",
        &config_with_agent(
            "\
             command = [\"sh\", \"-c\", \"cat >/dev/null; echo run >> runs; test $(wc -l < runs) -ge 3\"]\n\
             retries = 3\nretry_backoff_seconds = 1\nmax_retry_backoff_seconds = 5",
            &automation("flaky", "tasks.jsonl", ""),
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let retrying = run.events_named("task.retrying");
    let delays: Vec<f64> = retrying
        .iter()
        .map(|e| e["delay_seconds"].as_f64().unwrap())
        .collect();
    assert_eq!(delays, [1.0, 2.0], "{run:?}");
    let attempts: Vec<u64> = retrying
        .iter()
        .map(|e| e["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, [2, 3]);
    for failed in &retrying {
        assert_eq!(
            (failed["reason"].as_str(), failed["exit_code"].as_i64()),
            (Some("exit"), Some(1)),
            "how the failed attempt ended: {failed}"
        );
    }
    let finished = run.events_named("task.finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["exit_code"], 0);
    let attempts: Vec<u64> = run
        .events_named("task.started")
        .iter()
        .map(|e| e["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, [1, 2, 3], "each attempt is an event");
    assert_eq!(finished[0]["reason"], "exit");
    assert_eq!(project.read("runs").lines().count(), 3);
    // onStarted and onFinished once each: the item is done once.
    assert_eq!(project.read("tasks.jsonl.done").lines().count(), 1);
}

#[test]
fn a_failure_that_retries_do_not_cure_is_finished_and_reported() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(1));
    project.write(
        "curupira.toml",
        &config_with_agent(
            "command = [\"sh\", \"-c\", \"cat >/dev/null; exit 3\"]\n\
             retries = 1\nretry_backoff_seconds = 0",
            &automation("broken", "tasks.jsonl", ""),
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.events_named("task.retrying").len(), 1);
    let finished = run.events_named("task.finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["exit_code"], 3);
    let round = &run.events_named("round.finished")[0];
    assert_eq!(
        (round["dispatched"].as_u64(), round["failed"].as_u64()),
        (Some(1), Some(1))
    );
}

#[test]
fn an_agent_gone_after_its_first_attempt_leaves_the_item_unfinished() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(1));
    // The agent deletes itself and fails: the retry cannot start it.
    project.write(
        "agent.sh",
        "#!/bin/sh\ncat >/dev/null\nrm -f \"$0\"\nexit 1\n",
    );
    make_executable(&project.path().join("agent.sh"));
    project.write(
        "curupira.toml",
        &config_with_agent(
            "command = [\"./agent.sh\"]\nretries = 1\nretry_backoff_seconds = 0",
            &automation("gone", "tasks.jsonl", ""),
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let retrying = run.events_named("task.retrying");
    assert_eq!(retrying.len(), 1, "{run:?}");
    assert_eq!(retrying[0]["reason"], "exit");
    let finished = run.events_named("task.finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["reason"], "spawn-failed", "{run:?}");
    assert_eq!(finished[0]["exit_code"], serde_json::Value::Null);
    // No `onFinished`: local-queue did not mark the item done.
    assert!(
        !project.path().join("tasks.jsonl.done").exists()
            || project.read("tasks.jsonl.done").is_empty()
    );
}

#[test]
fn a_hanging_agent_is_stopped_at_its_timeout() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(1));
    project.write(
        "curupira.toml",
        &config_with_agent(
            "command = [\"sh\", \"-c\", \"cat >/dev/null; sleep 30\"]\n\
             timeout_seconds = 1\nkill_grace_seconds = 0",
            &automation("slow", "tasks.jsonl", ""),
        ),
    );
    let started = std::time::Instant::now();
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert!(started.elapsed().as_secs() < 20, "{run:?}");
    assert_eq!(run.code, Some(1), "{run:?}");
    let finished = run.events_named("task.finished");
    assert_eq!(finished[0]["reason"], "timeout", "{run:?}");
    assert!(finished[0]["duration_seconds"].as_f64().unwrap() >= 1.0);
    // The log says which task, as people read it (its short id).
    let short = &finished[0]["task_id"].as_str().unwrap()[..12];
    assert!(
        run.stderr.contains(&format!(
            "automation `slow`: stopping the agent of task {short} (timeout): SIGTERM"
        )),
        "{}",
        run.stderr
    );
    // A timed-out agent ran: the task is finished (and failed).
    assert_eq!(project.read("tasks.jsonl.done").lines().count(), 1);
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn an_agent_that_cannot_start_is_an_error_before_the_first_poll() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(1));
    project.write("not-executable.sh", "#!/bin/sh\nexit 0\n");
    for command in [
        "[\"curupira-no-such-agent-program\"]",
        "[\"./missing/agent.sh\"]",
        "[\"./not-executable.sh\"]",
    ] {
        project.write(
            "curupira.toml",
            &config_with_agent(
                &format!("command = {command}"),
                &automation("a", "tasks.jsonl", ""),
            ),
        );
        let run = project.curupira(&["run", "--once", "--format", "json"]);
        assert_eq!(run.code, Some(2), "{command}: {run:?}");
        // `--format json`: the diagnostics object on stdout, and no event.
        assert!(
            run.stdout.contains("config/agent-not-runnable")
                && run.stdout.contains("automation `a` cannot start its agent"),
            "{command}: {}",
            run.stdout
        );
        assert!(
            !run.stdout.contains("\"event\""),
            "nothing was polled: {}",
            run.stdout
        );
        let validate = project.curupira(&["validate", "--format", "json"]);
        assert_eq!(validate.code, Some(2), "{command}: {validate:?}");
        let report: serde_json::Value = serde_json::from_str(validate.stdout.trim()).unwrap();
        let found = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "config/agent-not-runnable")
            .unwrap_or_else(|| panic!("{command}: {report}"));
        assert_eq!(found["path"], "/settings/agent/command/0");
        // The dry run starts no agent, so it does not ask for one.
        let dry = project.curupira(&["run", "--once", "--dry-run", "--format", "json"]);
        assert_eq!(dry.code, Some(0), "{command}: {dry:?}");
    }
    // The dry run's `local-queue` (its polls are `preview: true`) recorded nothing.
    assert!(
        !project.path().join("tasks.jsonl.done").exists()
            || project.read("tasks.jsonl.done").is_empty()
    );
}

/// Starts `curupira run --once` in `project`, waits until `count` agents wrote their
/// pid into `pids`, and returns the child and those pids.
// The child is handed to the caller, which waits for it (the lint does not follow it).
#[allow(clippy::zombie_processes)]
fn run_until_agents_started(project: &Project, count: usize) -> (std::process::Child, Vec<i32>) {
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(run_support::curupira())
        .args(["run", "--once", "--format", "json"])
        .current_dir(project.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pids: Vec<i32> = std::fs::read_to_string(project.path().join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect();
        if pids.len() >= count {
            return (child, pids);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the agents did not start");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Sends signal `name` to every process of the group `pgid`.
fn signal_group(pgid: i32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([format!("-{name}"), "--".to_owned(), format!("-{pgid}")])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Whether a live process is left in the process group `pgid` (from `/proc`; a zombie
/// is dead, waiting for whoever adopted it to reap it).
fn group_alive(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces, so split after `)`.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string()
    })
}

fn signals_project() -> Project {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(3));
    // Each agent records its pid (the leader of its own process group), starts a
    // grandchild that ignores SIGTERM, and works for 1.5 s.
    project.write(
        "curupira.toml",
        &config_with_agent(
            r#"command = ["sh", "-c", "cat >/dev/null; echo $$ >> pids; sh -c 'trap \"\" TERM; sleep 60' & sleep 1.5; echo done >> finished"]
max_concurrent = 3
kill_grace_seconds = 1"#,
            &automation("work", "tasks.jsonl", "polling = { batch_size = 3 }"),
        ),
    );
    project
}

fn config_with_agent(agent: &str, automations: &str) -> String {
    config_with_workspace(agent, "", automations)
}

/// [`config_with_agent`] with a `[settings.workspace]` table of `workspace`.
fn config_with_workspace(agent: &str, workspace: &str, automations: &str) -> String {
    format!(
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
         [settings.agent]\n{agent}\n\n\
         [settings.workspace]\n{workspace}\n\n\
         [extensions.local]\nbuiltin = \"local-queue\"\n\n{automations}"
    )
}

#[test]
fn a_first_sigint_waits_for_the_running_agents() {
    let project = signals_project();
    let (child, pids) = run_until_agents_started(&project, 3);
    signal(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(project.read("finished").lines().count(), 3, "{stdout}");
    assert_eq!(
        stdout.matches("\"event\":\"task.finished\"").count(),
        3,
        "{stdout}"
    );
    assert_eq!(output.status.code(), Some(130), "{stdout}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(
            "received SIGINT: no new task or retry starts; the running agents are waited for"
        ),
        "{stderr}"
    );
    assert_eq!(project.read("tasks.jsonl.done").lines().count(), 3);
    for pid in pids {
        assert!(!group_alive(pid), "the group of agent {pid} is gone");
    }
}

#[test]
fn a_second_sigint_kills_every_agent_and_finishes_nothing() {
    let project = signals_project();
    let (child, pids) = run_until_agents_started(&project, 3);
    signal(child.id(), "INT");
    std::thread::sleep(std::time::Duration::from_millis(100));
    signal(child.id(), "INT");
    let started = std::time::Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(started.elapsed().as_secs() < 10, "it stopped promptly");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("received SIGINT again: stopping the running agents"),
        "{stderr}"
    );
    assert!(
        !project.path().join("finished").exists(),
        "no agent finished its work"
    );
    // Interrupted tasks are not finished: local-queue hands them over next time.
    assert_interrupted_not_finished(&project, &stdout, 3);
    assert_eq!(
        stdout.matches("\"reason\":\"shutdown\"").count(),
        3,
        "{stdout}"
    );
    for pid in pids {
        assert!(
            !group_alive(pid),
            "the group of agent {pid} (and its grandchild) is gone"
        );
    }
    let again = project.curupira(&["run", "--once", "--dry-run", "--format", "json"]);
    assert_eq!(again.events_named("task.rendered").len(), 3, "{again:?}");
}

/// A hook the host's second SIGINT kills did not fail: its task is interrupted like
/// one whose agent was killed (no `task.finished`, not done for the queue, handed over
/// again), not finished as `hook-failed`, which would lose it.
#[test]
fn a_second_sigint_during_before_run_hooks_finishes_nothing() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(2));
    project.write(
        "curupira.toml",
        &config_with_workspace(
            "command = [\"sh\", \"-c\", \"echo ran >> ran\"]\nmax_concurrent = 2",
            "hooks = { before_run = \"echo $$ >> pids; sleep 30\" }",
            &automation("work", "tasks.jsonl", "polling = { batch_size = 2 }"),
        ),
    );
    let (child, pids) = run_until_agents_started(&project, 2);
    signal(child.id(), "INT");
    std::thread::sleep(std::time::Duration::from_millis(100));
    signal(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!project.path().join("ran").exists(), "no agent started");
    assert_interrupted_not_finished(&project, &stdout, 2);
    for pid in pids {
        assert!(!group_alive(pid), "the group of hook {pid} is gone");
    }
    let again = project.curupira(&["run", "--once", "--dry-run", "--format", "json"]);
    assert_eq!(again.events_named("task.rendered").len(), 2, "{again:?}");
}

/// Once the host was told to stop a second time, nothing more of a task starts: a task
/// whose worktree was still being made gets no `after_create` hook (which could take
/// minutes), no `before_run`, no agent; it is interrupted, handed over again later.
#[test]
fn after_a_second_sigint_no_hook_of_a_task_starts() {
    let project = Project::repository();
    project.write("tasks.jsonl", &queue(1));
    project.write(
        "curupira.toml",
        &config_with_workspace(
            "command = [\"sh\", \"-c\", \"echo ran >> ../../../../ran\"]",
            "mode = \"worktree\"\n\
             hooks = { after_create = \"echo created >> ../../../../hooks-ran\", \
             before_run = \"echo before >> ../../../../hooks-ran\" }",
            &automation("fix", "tasks.jsonl", ""),
        ),
    );
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "start"]);
    // `git worktree add` runs this: the worktree takes 2 s to make, and says when it
    // started.
    let hook = project.path().join(".git/hooks/post-checkout");
    project.write(
        ".git/hooks/post-checkout",
        &format!(
            "#!/bin/sh\necho $$ >> '{}'\nsleep 2\n",
            project.path().join("pids").display()
        ),
    );
    make_executable(&hook);
    let (child, _) = run_until_agents_started(&project, 1);
    signal(child.id(), "INT");
    std::thread::sleep(std::time::Duration::from_millis(100));
    signal(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        !project.path().join("hooks-ran").exists(),
        "hooks ran: {}",
        project.read("hooks-ran")
    );
    assert!(!project.path().join("ran").exists(), "the agent ran");
    assert_interrupted_not_finished(&project, &stdout, 1);
}

/// A service manager stops a service by signalling all its processes at once
/// (systemd's default `KillMode=control-group`): the host gets SIGTERM and so do its
/// agents. An agent a stop signal ended while the host is stopping was stopped by that
/// shutdown: interrupted, handed over again, not finished as failed (lost to the
/// queue). Without a stop of the host, the same signal is a failed attempt.
#[test]
fn agents_signalled_with_their_stopping_host_are_interrupted_not_failed() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(2));
    project.write(
        "curupira.toml",
        &config_with_agent(
            "command = [\"sh\", \"-c\", \"cat >/dev/null; echo $$ >> pids; sleep 30\"]\n\
             max_concurrent = 2",
            &automation("work", "tasks.jsonl", "polling = { batch_size = 2 }"),
        ),
    );
    let (child, pids) = run_until_agents_started(&project, 2);
    // The agents first, the host last: the order least kind to the host.
    for pid in &pids {
        signal_group(*pid, "TERM");
    }
    signal(child.id(), "TERM");
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_interrupted_not_finished(&project, &stdout, 2);
    let again = project.curupira(&["run", "--once", "--dry-run", "--format", "json"]);
    assert_eq!(again.events_named("task.rendered").len(), 2, "{again:?}");

    // The host not stopping: the same signal fails the attempt.
    std::fs::remove_file(project.path().join("pids")).unwrap();
    let (child, pids) = run_until_agents_started(&project, 2);
    for pid in &pids {
        signal_group(*pid, "TERM");
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.matches("\"reason\":\"signal\"").count(),
        2,
        "{stdout}"
    );
}

/// What an interrupted run leaves: `interrupted` tasks said so on `stdout` (and none
/// finished), and the queue has none of them done, so they are handed over again.
fn assert_interrupted_not_finished(project: &Project, stdout: &str, interrupted: usize) {
    assert_eq!(
        stdout.matches("\"event\":\"task.finished\"").count(),
        0,
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("\"event\":\"task.interrupted\"").count(),
        interrupted,
        "each said so: {stdout}"
    );
    assert!(
        !project.path().join("tasks.jsonl.done").exists()
            || project.read("tasks.jsonl.done").is_empty(),
        "not done for the queue"
    );
}

/// `workspace.created` is printed while the agent works (where to look at its work),
/// not after it: here the agent waits for a file the test writes only once it read the
/// event.
#[test]
fn workspace_created_is_printed_while_the_agent_works() {
    use std::io::BufRead;
    let project = Project::repository();
    project.write("tasks.jsonl", &queue(1));
    let go = project.path().join("go");
    project.write(
        "curupira.toml",
        &config_with_workspace(
            &format!(
                "command = [\"sh\", \"-c\", \"while [ ! -e \\\"$0\\\" ]; do sleep 0.02; done\", \
                 \"{}\"]\ntimeout_seconds = 30",
                go.display()
            ),
            "mode = \"worktree\"",
            &automation("fix", "tasks.jsonl", ""),
        ),
    );
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "start"]);
    let mut host = std::process::Command::new(run_support::curupira())
        .args(["run", "--once", "--format", "json"])
        .current_dir(project.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let stdout = host.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = lines_tx.send(line.unwrap());
        }
    });
    let mut seen = Vec::new();
    let created = loop {
        match lines.recv_timeout(std::time::Duration::from_secs(20)) {
            Ok(line) if line.contains("\"event\":\"workspace.created\"") => break line,
            Ok(line) => seen.push(line),
            Err(_) => {
                let _ = host.kill();
                let _ = host.wait();
                panic!("no workspace.created while the agent waits: {seen:?}");
            }
        }
    };
    assert!(
        seen.iter()
            .any(|line| line.contains("\"event\":\"task.started\"")),
        "after task.started: {seen:?}"
    );
    assert!(
        !seen.iter().any(|line| line.contains("task.finished")),
        "{seen:?}"
    );
    assert!(created.contains(".curupira/worktrees/fix/"), "{created}");
    std::fs::write(&go, "").unwrap();
    let status = host.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let rest: Vec<String> = lines.iter().collect();
    assert_eq!(
        rest.iter()
            .filter(|line| line.contains("\"event\":\"task.finished\""))
            .count(),
        1,
        "{rest:?}"
    );
    assert!(
        !rest.iter().any(|line| line.contains("workspace.created")),
        "printed once: {rest:?}"
    );
}

#[test]
fn worktree_mode_runs_each_task_in_its_own_worktree_and_branch() {
    let project = Project::repository();
    project.write("tasks.jsonl", &queue(2));
    project.write(
        "curupira.toml",
        &format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
             [settings.agent]\n\
             command = [\"sh\", \"-c\", \"n=$(cat); pwd > made-by-agent; echo \\\"$n $(pwd) $CURUPIRA_BRANCH\\\" >> \\\"$0\\\"\", \"{}\"]\n\
             max_concurrent = 2\n\n\
             [settings.workspace]\nmode = \"worktree\"\ncleanup = \"never\"\n\
             hooks = {{ after_create = \"echo created > hook-ran\" }}\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n{}",
            project.path().join("log").display(),
            automation("fix", "tasks.jsonl", "polling = { batch_size = 2 }")
        ),
    );
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "start"]);
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let created = run.events_named("workspace.created");
    assert_eq!(created.len(), 2, "{run:?}");
    let log = project.read("log");
    let mut folders = Vec::new();
    for line in log.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let (n, cwd, branch) = (fields[0], fields[1], fields[2]);
        assert!(cwd.contains("/.curupira/worktrees/fix/"), "{line}");
        assert!(branch.starts_with("curupira/fix/"), "{line}");
        assert!(std::path::Path::new(cwd).join("hook-ran").exists());
        assert_eq!(
            std::fs::read_to_string(std::path::Path::new(cwd).join("made-by-agent"))
                .unwrap()
                .trim(),
            cwd
        );
        folders.push((n.to_owned(), cwd.to_owned()));
    }
    assert_eq!(folders.len(), 2);
    assert_ne!(folders[0].1, folders[1].1, "one worktree per task");
    // The agent's files stay in its worktree, and Git ignores the worktrees' folder.
    assert!(!project.path().join("made-by-agent").exists());
    let branches = project.git(&["branch", "--list", "curupira/*"]);
    assert_eq!(branches.lines().count(), 2, "{branches}");
    let status = project.git(&["status", "--porcelain"]);
    assert!(!status.contains(".curupira"), "{status}");
    let started = run.events_named("task.started");
    assert!(
        started.iter().all(|e| e["workspace"]
            .as_str()
            .unwrap()
            .contains(".curupira/worktrees/fix/")),
        "{started:?}"
    );
}

#[test]
fn a_succeeded_task_worktree_is_removed_and_its_branch_stays() {
    let project = Project::repository();
    project.write("tasks.jsonl", &queue(1));
    project.write(
        "curupira.toml",
        &format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
             [settings.agent]\ncommand = [\"sh\", \"-c\", \"cat >/dev/null; git commit -q --allow-empty -m work\"]\n\n\
             [settings.workspace]\nmode = \"worktree\"\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n{}",
            automation("fix", "tasks.jsonl", "")
        ),
    );
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "start"]);
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let removed = run.events_named("workspace.removed");
    assert_eq!(removed.len(), 1, "{run:?}");
    let folder = removed[0]["workspace"].as_str().unwrap();
    assert!(!std::path::Path::new(folder).exists());
    let branch = run.events_named("workspace.created")[0]["branch"]
        .as_str()
        .unwrap()
        .to_owned();
    let log = project.git(&["log", "--format=%s", &branch]);
    assert_eq!(
        log.lines().next(),
        Some("work"),
        "the agent's commit is on its branch"
    );
}

#[test]
fn a_finished_task_worktree_is_removed_while_the_next_task_runs() {
    // One slot; each removal's `before_remove` hook takes 1 s. The slot is free as
    // soon as the agent ends, so the second agent starts during the first removal;
    // each `workspace.removed` follows its `task.finished`, and the round ends after
    // the last removal.
    let project = Project::repository();
    project.write("tasks.jsonl", &queue(2));
    let log = project.path().join("log");
    project.write(
        "curupira.toml",
        &format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
             [settings.agent]\n\
             command = [\"sh\", \"-c\", \"echo \\\"start $(cat)\\\" >> \\\"$0\\\"\", \"{log}\"]\n\n\
             [settings.workspace]\nmode = \"worktree\"\ncleanup = \"always\"\n\
             hooks = {{ before_remove = \"sleep 1; echo removed >> {log}\" }}\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n{}",
            automation("fix", "tasks.jsonl", "polling = { batch_size = 2 }"),
            log = log.display(),
        ),
    );
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "start"]);
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        project.read("log").lines().collect::<Vec<_>>(),
        ["start 1", "start 2", "removed", "removed"],
        "{run:?}"
    );
    let events = run.events();
    let position = |name: &str, task: &str| {
        events
            .iter()
            .position(|e| e["event"] == name && e["task_id"] == task)
            .unwrap_or_else(|| panic!("no {name} of {task}: {run:?}"))
    };
    let removed = run.events_named("workspace.removed");
    assert_eq!(removed.len(), 2, "{run:?}");
    for event in &removed {
        let task = event["task_id"].as_str().unwrap();
        assert!(position("task.finished", task) < position("workspace.removed", task));
        assert!(!std::path::Path::new(event["workspace"].as_str().unwrap()).exists());
    }
    assert_eq!(
        run.event_names().last().map(String::as_str),
        Some("round.finished"),
        "{run:?}"
    );
}

#[test]
fn a_worktree_base_that_names_no_commit_is_a_validate_error_at_its_key() {
    let project = Project::repository();
    project.write("tasks.jsonl", &queue(1));
    project.write("other.jsonl", "");
    let config = |workspace: &str, own: &str| {
        format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
             [settings.agent]\ncommand = [\"true\"]\n\n\
             [settings.workspace]\nmode = \"worktree\"\n{workspace}\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n{}{}",
            automation("fix", "tasks.jsonl", own),
            automation("other", "other.jsonl", "")
        )
    };
    let unknown_base = |validate: &Run| -> Vec<serde_json::Value> {
        let report: serde_json::Value = serde_json::from_str(validate.stdout.trim()).unwrap();
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == "config/unknown-base")
            .cloned()
            .collect()
    };
    // A new repository: `HEAD` is a branch with no commit yet, said in those words,
    // once for the two automations that share the base.
    project.write("curupira.toml", &config("", ""));
    let validate = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(validate.code, Some(2), "{validate:?}");
    let found = unknown_base(&validate);
    assert_eq!(found.len(), 1, "{}", validate.stdout);
    assert_eq!(found[0]["severity"], "error");
    assert_eq!(found[0]["path"], "/automations/fix");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("automation `fix` cannot make worktrees: the workspace base `HEAD`")
            && message.ends_with("the branch `main` has no commit yet"),
        "{message}"
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stdout.contains("has no commit yet"), "{run:?}");
    assert!(run.events_named("task.started").is_empty(), "{run:?}");

    // With a commit: `HEAD` is fine; a misspelt base is reported where it is written,
    // the automation's own before `[settings.workspace]`'s.
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "start"]);
    let validate = project.curupira(&["validate", "--format", "json"]);
    assert!(unknown_base(&validate).is_empty(), "{}", validate.stdout);
    project.write(
        "curupira.toml",
        &config("base = \"mian\"", "workspace = { base = \"nope\" }"),
    );
    let validate = project.curupira(&["validate", "--format", "json"]);
    let found = unknown_base(&validate);
    let paths: Vec<&str> = found.iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "/automations/fix/workspace/base",
            "/settings/workspace/base"
        ],
        "{}",
        validate.stdout
    );
    assert!(
        found[1]["message"]
            .as_str()
            .unwrap()
            .contains("the workspace base `mian`"),
        "{}",
        validate.stdout
    );
}

#[test]
fn worktree_mode_outside_a_repository_and_a_crowded_shared_folder_are_reported() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(1));
    let config = |agent: &str, workspace: &str| {
        format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
             [settings.agent]\ncommand = [\"true\"]\n{agent}\n\n\
             [settings.workspace]\n{workspace}\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n{}",
            automation("fix", "tasks.jsonl", "")
        )
    };
    project.write("curupira.toml", &config("", "mode = \"worktree\""));
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    // `--format json`: the diagnostics object on stdout, and no event.
    assert!(
        run.stdout.contains("config/worktree-unavailable"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("\"event\""), "{}", run.stdout);
    let report: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(
        report["diagnostics"][0]["path"], "/settings/workspace/mode",
        "at the key that chose worktrees: {report}"
    );

    project.write(
        "curupira.toml",
        &config("max_concurrent = 2", "mode = \"shared\""),
    );
    let validate = project.curupira(&["validate", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(validate.stdout.trim()).unwrap();
    let warning = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "config/shared-workspace")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(warning["severity"], "warning");
    assert_eq!(warning["path"], "/automations/fix");
}
