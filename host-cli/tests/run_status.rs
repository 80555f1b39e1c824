//! `curupira status` (issue 29) against the real `curupira run`: while a host runs
//! three agents and a fourth task waits for its retry, every member of the document
//! checked; while that host is killed with SIGKILL (it says the host is gone, at once);
//! with no host at all, and after a host that stopped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::process::{Child, Command};
use std::time::{Duration, SystemTime};

use curupira_test_support::process::{alive, run_bounded, wait_until};
use run_support::{Project, curupira};
use serde_json::Value;

/// An agent that logs `start ID PID ITEM`, fails with status 3 for item `d`, and
/// otherwise waits for the file `release` in the project.
fn agent(project: &Project) -> String {
    let dir = project.path().display();
    format!(
        "read -r prompt\n\
         item=$(echo \"$prompt\" | sed 's/Do \\(.*\\)\\./\\1/')\n\
         echo \"start $CURUPIRA_TASK_ID $$ $item\" >> {dir}/agent.log\n\
         [ \"$item\" = d ] && exit 3\n\
         while [ ! -e {dir}/release ]; do sleep 0.05; done\n"
    )
}

/// A Git project with two automations: `q` over a queue of `items`, `e` over an empty
/// queue, both polled once an hour; four agents at once, one retry five minutes after
/// a failure, each task in a worktree of its own.
fn project(items: &[&str]) -> Project {
    let project = Project::repository();
    let script = project.path().join("agent.sh");
    project.write("agent.sh", &agent(&project));
    project.write(
        "curupira.toml",
        &format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
             [settings.agent]\ncommand = [\"sh\", \"{}\"]\nkill_grace_seconds = 2\n\
             max_concurrent = 4\nretries = 1\nretry_backoff_seconds = 300\n\n\
             [settings.workspace]\nmode = \"worktree\"\n\n\
             [settings.polling]\ninterval_seconds = 3600\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.q]\ntrigger = \"jsonl\"\nprompt = \"Do ${{n}}.\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"done.jsonl\" }}\n\n\
             [automations.e]\ntrigger = \"jsonl\"\nprompt = \"Do ${{n}}.\"\n\
             arguments = {{ path = \"empty.jsonl\", done_path = \"empty-done.jsonl\" }}\n",
            script.display()
        ),
    );
    let lines: String = items
        .iter()
        .map(|item| format!("{{\"n\": \"{item}\"}}\n"))
        .collect();
    project.write("tasks.jsonl", &lines);
    project.write("empty.jsonl", "");
    project.write(".gitignore", "agent.log\nrelease\n*.out\n*.err\n");
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "start"]);
    project
}

/// `start` lines of `agent.log`: (task id, pid, item).
fn starts(project: &Project) -> Vec<(String, u32, String)> {
    let text = std::fs::read_to_string(project.path().join("agent.log")).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            (words.next() == Some("start")).then(|| {
                (
                    words.next().unwrap().to_owned(),
                    words.next().unwrap().parse().unwrap(),
                    words.next().unwrap_or_default().to_owned(),
                )
            })
        })
        .collect()
}

fn spawn_host(project: &Project) -> Child {
    run_support::spawn(project, "run", &["run", "--watch", "--format", "json"])
}

/// `curupira status ARGS…` in the project, which must answer within 10 s: its exit
/// code and stdout.
fn status(project: &Project, args: &[&str]) -> (Option<i32>, String) {
    let ran = run_bounded(
        Command::new(curupira())
            .arg("status")
            .args(args)
            .current_dir(project.path()),
        Duration::from_secs(10),
    )
    .unwrap();
    let status = ran.status.unwrap_or_else(|| panic!("status hung: {ran:?}"));
    (status.code(), ran.stdout)
}

fn document(project: &Project) -> Value {
    let (code, stdout) = status(project, &["--format", "json"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout}");
    serde_json::from_str(&stdout).unwrap()
}

/// Seconds from now to the document's time `text` (negative when it is past).
fn seconds_from_now(text: &Value) -> f64 {
    let text = text
        .as_str()
        .unwrap_or_else(|| panic!("not a time: {text}"));
    assert!(text.ends_with('Z'), "{text}");
    let time = curupira_orchestrator::status::parse_timestamp(text).unwrap();
    match time.duration_since(SystemTime::now()) {
        Ok(ahead) => ahead.as_secs_f64(),
        Err(past) => -past.duration().as_secs_f64(),
    }
}

#[test]
fn status_follows_a_host_with_three_agents_and_a_retry_and_says_when_it_is_killed() {
    let project = project(&["a", "b", "c", "d"]);
    let mut host = spawn_host(&project);
    let host_pid = host.id();
    assert!(
        wait_until(Duration::from_secs(30), || starts(&project).len() == 4),
        "four agents started: {:?}\n{}",
        starts(&project),
        project.read("run.err")
    );
    let agents = starts(&project);
    let failed = agents
        .iter()
        .find(|(_, _, item)| item == "d")
        .unwrap()
        .clone();
    // What the host publishes is at most a second old.
    let mut doc = Value::Null;
    assert!(
        wait_until(Duration::from_secs(15), || {
            doc = document(&project);
            doc["running"]
                .as_array()
                .is_some_and(|r| r.len() == 3 && r.iter().all(|a| a["pid"].is_u64()))
                && doc["retrying"].as_array().is_some_and(|r| r.len() == 1)
        }),
        "{doc:#}"
    );

    assert_eq!(doc["version"], 1);
    assert!(seconds_from_now(&doc["generated_at"]).abs() < 5.0);
    assert!(
        doc["state_dir"].as_str().unwrap().ends_with(".curupira"),
        "{doc}"
    );
    let host_doc = &doc["host"];
    assert_eq!(host_doc["state"], "running");
    assert_eq!(host_doc["pid"], host_pid);
    assert!((-60.0..=0.0).contains(&seconds_from_now(&host_doc["started_at"])));
    assert!((-5.0..=0.5).contains(&seconds_from_now(&host_doc["published_at"])));
    assert_eq!(host_doc["ended_at"], Value::Null);
    assert_eq!(host_doc["stopping"], false);
    assert!(
        host_doc["version"]
            .as_str()
            .unwrap()
            .starts_with("curupira ")
    );
    assert!(
        host_doc["config"]
            .as_str()
            .unwrap()
            .ends_with("/curupira.toml"),
        "{host_doc}"
    );

    let running = doc["running"].as_array().unwrap();
    for attempt in running {
        let task_id = attempt["task_id"].as_str().unwrap();
        let (_, pid, item) = agents.iter().find(|(id, _, _)| id == task_id).unwrap();
        assert!(["a", "b", "c"].contains(&item.as_str()), "{attempt}");
        assert_eq!(attempt["automation"], "q");
        assert_eq!(attempt["attempt"], 1);
        assert_eq!(attempt["pid"], *pid);
        let short = &task_id[..12];
        assert_eq!(attempt["branch"], format!("curupira/q/{short}"));
        let workspace = attempt["workspace"].as_str().unwrap();
        assert!(workspace.ends_with(&format!("q/{short}")), "{workspace}");
        assert!(std::path::Path::new(workspace).is_dir(), "{workspace}");
        assert!(
            attempt["log_path"]
                .as_str()
                .unwrap()
                .ends_with(&format!("logs/q/{short}/1.log")),
            "{attempt}"
        );
        let elapsed = attempt["elapsed_seconds"].as_f64().unwrap();
        assert!((0.0..60.0).contains(&elapsed), "{attempt}");
        assert!((-60.0..=0.0).contains(&seconds_from_now(&attempt["started_at"])));
    }

    let retry = &doc["retrying"][0];
    assert_eq!(retry["automation"], "q");
    assert_eq!(retry["task_id"], failed.0);
    assert_eq!(retry["attempt"], 2);
    assert_eq!(retry["reason"], "exit");
    assert_eq!(retry["exit_code"], 3);
    let due_in = retry["due_in_seconds"].as_f64().unwrap();
    assert!((240.0..=300.0).contains(&due_in), "{retry}");
    assert!((240.0..=300.5).contains(&seconds_from_now(&retry["due_at"])));

    let automations = doc["automations"].as_array().unwrap();
    let names: Vec<&str> = automations
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["q", "e"]);
    let (q, e) = (&automations[0], &automations[1]);
    // `q`'s round waits for its tasks; `e`'s found nothing and is due in an hour.
    assert_eq!(q["rounds"], 1);
    assert_eq!(q["round_running"], true);
    assert_eq!(q["active"], true);
    assert_eq!(q["next_round_at"], Value::Null);
    assert_eq!(q["last_round_ended_at"], Value::Null);
    assert!(seconds_from_now(&q["last_round_started_at"]) <= 0.0);
    assert_eq!(e["rounds"], 1);
    assert_eq!(e["round_running"], false);
    assert!(seconds_from_now(&e["last_round_ended_at"]) <= 0.0);
    assert!((3500.0..=3600.5).contains(&seconds_from_now(&e["next_round_at"])));

    assert_eq!(doc["left_open"], Value::Array(Vec::new()));
    let counts = &doc["counts"];
    for window in ["last_hour", "last_day"] {
        assert_eq!(
            counts[window],
            serde_json::json!({"succeeded": 0, "failed": 1, "interrupted": 0}),
            "{counts}"
        );
    }
    let failures = doc["last_failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["task_id"], failed.0);
    assert_eq!(failures[0]["automation"], "q");
    assert_eq!(failures[0]["outcome"], "failed");
    assert_eq!(failures[0]["exit_code"], 3);
    assert_eq!(failures[0]["attempt"], 1);
    assert!(
        doc["ledger"]
            .as_str()
            .unwrap()
            .ends_with(".curupira/ledger.sqlite")
    );

    let (code, human) = status(&project, &[]);
    assert_eq!(code, Some(0));
    assert!(
        human.starts_with(&format!("host: running (pid {host_pid}, started ")),
        "{human}"
    );
    for expected in [
        "running (3):",
        "waiting for a retry (1):",
        "automations:",
        "attempts ended: last hour 0 succeeded, 1 failed, 0 interrupted",
        "last failures:",
        &failed.0[..12],
    ] {
        assert!(human.contains(expected), "{expected:?} in:\n{human}");
    }

    // SIGKILL: `status` answers at once, while and after the host dies.
    let asking = std::thread::spawn({
        let dir = project.path().to_owned();
        move || {
            (0..5)
                .map(|_| {
                    let ran = run_bounded(
                        Command::new(curupira())
                            .args(["status", "--format", "json"])
                            .current_dir(&dir),
                        Duration::from_secs(10),
                    )
                    .unwrap();
                    ran.status.is_some_and(|status| status.success())
                })
                .collect::<Vec<bool>>()
        }
    });
    host.kill().unwrap();
    host.wait().unwrap();
    assert!(
        asking.join().unwrap().iter().all(|ok| *ok),
        "every status answered"
    );
    let gone = document(&project);
    assert_eq!(gone["host"]["state"], "gone", "{gone:#}");
    assert_eq!(gone["host"]["pid"], host_pid);
    assert_eq!(gone["running"], Value::Array(Vec::new()));
    assert_eq!(gone["retrying"], Value::Array(Vec::new()));
    // The three attempts the host had open, as its ledger kept them.
    let open: Vec<&str> = gone["left_open"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(open.len(), 3, "{gone:#}");
    for attempt in running {
        assert!(open.contains(&attempt["task_id"].as_str().unwrap()));
    }
    assert!(
        gone["automations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["next_round_at"].is_null() && a["round_running"] == false)
    );
    let (_, human) = status(&project, &[]);
    assert!(human.contains("ended without saying so"), "{human}");
    assert!(human.contains("left open by a host"), "{human}");
    // The watchdog stopped the agents.
    assert!(
        wait_until(Duration::from_secs(20), || agents
            .iter()
            .all(|(_, pid, _)| !alive(*pid))),
        "agents left alive"
    );
}

#[test]
fn status_without_a_host_and_after_one_stopped() {
    let project = project(&["a"]);
    let doc = document(&project);
    assert_eq!(doc["host"]["state"], "none", "{doc:#}");
    assert_eq!(doc["host"]["pid"], Value::Null);
    assert_eq!(doc["counts"], Value::Null);
    assert_eq!(doc["ledger"], Value::Null);
    assert_eq!(doc["running"], Value::Array(Vec::new()));
    let (code, human) = status(&project, &[]);
    assert_eq!(code, Some(0));
    assert!(human.starts_with("host: none runs on `"), "{human}");

    project.write("release", "");
    let ran = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let doc = document(&project);
    assert_eq!(doc["host"]["state"], "stopped", "{doc:#}");
    assert!(doc["host"]["ended_at"].is_string());
    assert_eq!(
        doc["counts"]["last_hour"],
        serde_json::json!({"succeeded": 1, "failed": 0, "interrupted": 0})
    );
    assert_eq!(doc["last_failures"], Value::Array(Vec::new()));
    assert_eq!(doc["left_open"], Value::Array(Vec::new()));
    let (_, human) = status(&project, &[]);
    assert!(human.contains("the last one (pid "), "{human}");
    assert!(human.contains(" stopped at "), "{human}");
}

/// A continuous run with nothing to do says so once per `idle_notice_seconds`, with
/// its next round.
#[test]
fn an_idle_continuous_run_says_when_its_next_round_is() {
    let project = project(&[]);
    let text = project.read("curupira.toml");
    project.write(
        "curupira.toml",
        &text.replace(
            "[extensions.local]",
            "[settings.status]\nidle_notice_seconds = 1\n\n[extensions.local]",
        ),
    );
    let host = spawn_host(&project);
    let waiting = || -> Vec<Value> {
        project
            .read("run.out")
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| event["event"] == "host.waiting")
            .collect()
    };
    assert!(
        wait_until(Duration::from_secs(20), || waiting().len() >= 2),
        "{}\n{}",
        project.read("run.out"),
        project.read("run.err")
    );
    Command::new("kill")
        .args(["-INT", &host.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(
        curupira_test_support::process::finish(host, Duration::from_secs(20)),
        Some(130)
    );
    let events = waiting();
    for event in &events[..2] {
        assert!(["q", "e"].contains(&event["automation"].as_str().unwrap()));
        let idle = event["idle_seconds"].as_f64().unwrap();
        assert!((1.0..3.0).contains(&idle), "{event}");
        let due = event["next_round_in_seconds"].as_f64().unwrap();
        assert!((3500.0..=3600.0).contains(&due), "{event}");
        let at = seconds_from_now(&event["next_round_at"]);
        assert!((3490.0..=3600.5).contains(&at), "{event}");
    }
}

/// Under a pseudo-terminal `run` keeps a live line at the bottom, and every event and
/// agent line still arrives whole; piped, not one control sequence.
#[test]
fn the_live_line_never_garbles_a_line_and_is_not_drawn_when_piped() {
    if !run_support::have_python() {
        return;
    }
    let project = Project::new();
    project.write(
        "agent.sh",
        "read -r prompt\necho \"working on $prompt\"\nsleep 0.7\necho \"done with $prompt\" >&2\n",
    );
    let config = |queue: &str| {
        format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
             [settings.agent]\ncommand = [\"sh\", \"agent.sh\"]\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.q]\ntrigger = \"jsonl\"\nprompt = \"Do ${{n}}.\"\n\
             arguments = {{ path = \"{queue}\", done_path = \"{queue}.done\" }}\n"
        )
    };
    let items = "{\"n\": \"a\"}\n{\"n\": \"b\"}\n{\"n\": \"c\"}\n";
    project.write("tty.jsonl", items);
    // Other items: the two configs share one ledger.
    project.write(
        "pipe.jsonl",
        &items.replace('a', "x").replace('b', "y").replace('c', "z"),
    );
    project.write("tty.toml", &config("tty.jsonl"));
    project.write("pipe.toml", &config("pipe.jsonl"));
    // A pseudo-terminal for stdout and stderr alike, read to its end.
    let under_pty = "import os, pty, sys\n\
        pid, fd = pty.fork()\n\
        if pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\n\
        out = b''\n\
        while True:\n    try:\n        chunk = os.read(fd, 65536)\n    except OSError:\n        break\n    if not chunk:\n        break\n    out += chunk\n\
        _, status = os.waitpid(pid, 0)\n\
        sys.stdout.buffer.write(out)\n\
        sys.exit(os.waitstatus_to_exitcode(status))\n";
    let tty = run_bounded(
        Command::new("python3")
            .args([
                "-c",
                under_pty,
                curupira(),
                "run",
                "--once",
                "-c",
                "tty.toml",
            ])
            .current_dir(project.path())
            .env_remove("RUST_LOG")
            .env_remove("NO_COLOR")
            .env("TERM", "xterm"),
        Duration::from_secs(60),
    )
    .unwrap();
    assert!(tty.status.is_some_and(|s| s.success()), "{tty:?}");
    let raw = tty.stdout;
    assert!(raw.contains("\x1b[2K"), "the line was drawn: {raw:?}");
    assert!(raw.contains(" running: q "), "{raw:?}");
    let mut seen = Vec::new();
    for physical in raw.split("\r\n") {
        // What the terminal shows of it: what follows the last clearing of the line.
        let shown = physical.rsplit("\x1b[2K").next().unwrap_or_default();
        let shown = shown.rsplit('\r').next().unwrap_or_default();
        for kind in ["started task", "finished task", "working on", "done with"] {
            if shown.contains(kind) {
                assert!(!shown.contains('\x1b'), "{shown:?} in {raw:?}");
                assert!(!shown.contains("running:"), "{shown:?} in {raw:?}");
                let whole = match kind {
                    "started task" | "finished task" => {
                        shown.starts_with(&format!("q: {kind} "))
                            && (shown.ends_with(')')
                                || shown.ends_with(" s")
                                || shown.ends_with(" ms"))
                    }
                    _ => shown.starts_with("[q ") && shown.ends_with('.'),
                };
                assert!(whole, "a whole line: {shown:?} in {raw:?}");
                seen.push(kind);
            }
        }
    }
    for kind in ["started task", "finished task", "working on", "done with"] {
        assert_eq!(
            seen.iter().filter(|k| **k == kind).count(),
            3,
            "{kind}: {raw:?}"
        );
    }

    let piped = project.curupira(&["run", "--once", "-c", "pipe.toml"]);
    assert_eq!(piped.code, Some(0), "{piped:?}");
    assert_eq!(
        piped.stdout.matches("finished task").count(),
        3,
        "{piped:?}"
    );
    for text in [&piped.stdout, &piped.stderr] {
        assert!(!text.contains('\x1b'), "{text:?}");
        assert!(!text.contains("running:"), "{text:?}");
    }
}

/// Issue 37: "how many tasks failed in the last hour?" was answered with attempts: two
/// succeeded tasks beside one that failed after two retries read "2 succeeded, 3
/// failed". Tasks are counted once, by how they ended, beside the attempts.
#[test]
fn status_counts_tasks_by_their_end_and_attempts_apart() {
    let project = project(&["a", "b", "d"]);
    project.write("release", "");
    let toml = project.read("curupira.toml");
    project.write(
        "curupira.toml",
        &toml.replace(
            "retries = 1\nretry_backoff_seconds = 300",
            "retries = 2\nretry_backoff_seconds = 0",
        ),
    );
    let ran = run_bounded(
        Command::new(curupira())
            .args(["run", "--once", "--format", "json"])
            .current_dir(project.path()),
        Duration::from_secs(60),
    )
    .unwrap();
    assert_eq!(ran.status.and_then(|s| s.code()), Some(1), "{ran:?}");
    assert_eq!(starts(&project).len(), 5, "2 + 3 attempts");

    let doc = document(&project);
    for window in ["last_hour", "last_day"] {
        assert_eq!(
            doc["task_counts"][window],
            serde_json::json!({"succeeded": 2, "failed": 1, "interrupted": 0}),
            "{doc}"
        );
        assert_eq!(
            doc["counts"][window],
            serde_json::json!({"succeeded": 2, "failed": 3, "interrupted": 0}),
            "{doc}"
        );
    }
    let (code, human) = status(&project, &[]);
    assert_eq!(code, Some(0));
    for expected in [
        "tasks ended: last hour 2 succeeded, 1 failed, 0 interrupted",
        "attempts ended: last hour 2 succeeded, 3 failed, 0 interrupted",
    ] {
        assert!(human.contains(expected), "{expected:?} in:\n{human}");
    }
}
