//! The durable ledger, one host per state, and agents that never outlive their host
//! (issue 12), end to end with the real `curupira` binary, the built-in `local-queue`
//! extension and a shell agent that logs every start and end in `agent.log`.
//!
//! Processes are killed for real (SIGKILL, SIGINT); "alive" means present in `/proc`
//! and not a zombie (where nobody reaps orphans, a killed agent stays a zombie).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::fs::{self, File};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use curupira_ledger::{Ledger, Status};
use curupira_test_support::process::{finish, wait_until};
use run_support::{Project, curupira, have_python, spawn};
use serde_json::Value;

/// An agent that logs `start ID PID` and `end ID PID` around a pause of `SLEEP` seconds
/// (the file `sleep`, default 0), then exits with the status in `agent-exit` (default 0).
const AGENT: &str = r#"echo "start $CURUPIRA_TASK_ID $$" >> agent.log
sleep "$(cat sleep 2>/dev/null || echo 0)"
echo "end $CURUPIRA_TASK_ID $$" >> agent.log
exit "$(cat agent-exit 2>/dev/null || echo 0)"
"#;

/// A project with the local queue holding `items` (one `{"n": item}` line each).
fn queue_project(items: &[&str], settings: &str) -> Project {
    let project = Project::new();
    project.write(
        "curupira.toml",
        &format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n{settings}\n\n\
             [settings.agent]\ncommand = [\"sh\", \"agent.sh\"]\nkill_grace_seconds = 2\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.q]\ntrigger = \"jsonl\"\nprompt = \"Do ${{n}}.\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"done.jsonl\" }}\n"
        ),
    );
    project.write("agent.sh", AGENT);
    let lines: String = items
        .iter()
        .map(|item| format!("{{\"n\": \"{item}\"}}\n"))
        .collect();
    project.write("tasks.jsonl", &lines);
    project
}

/// The lines of `agent.log`, each as (`start`|`end`, task id, pid).
fn agent_log(project: &Project) -> Vec<(String, String, u32)> {
    let text = fs::read_to_string(project.path().join("agent.log")).unwrap_or_default();
    text.lines()
        .map(|line| {
            let mut words = line.split(' ');
            let what = words.next().unwrap().to_owned();
            let id = words.next().unwrap().to_owned();
            let pid = words.next().unwrap().parse().unwrap();
            (what, id, pid)
        })
        .collect()
}

fn starts(project: &Project) -> usize {
    agent_log(project)
        .iter()
        .filter(|(what, _, _)| what == "start")
        .count()
}

/// `kill -SIGNAL pid`.
fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

/// `(pid, ppid, state, cmdline)` of every process in `/proc`.
fn processes() -> Vec<(u32, u32, char, String)> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let state = fields[0].chars().next().unwrap();
        let ppid = fields[1].parse().unwrap();
        let cmdline = fs::read(format!("/proc/{pid}/cmdline"))
            .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
            .unwrap_or_default();
        found.push((pid, ppid, state, cmdline));
    }
    found
}

/// The living (not zombie) descendants of `pid`.
fn descendants(pid: u32) -> Vec<(u32, String)> {
    let all = processes();
    let mut family = vec![pid];
    let mut found = Vec::new();
    while let Some(parent) = family.pop() {
        for (child, ppid, state, cmdline) in &all {
            if *ppid == parent && *state != 'Z' {
                family.push(*child);
                found.push((*child, cmdline.clone()));
            }
        }
    }
    found
}

fn alive(pid: u32) -> bool {
    processes()
        .iter()
        .any(|(other, _, state, _)| *other == pid && *state != 'Z')
}

/// The events of a run's `NAME.out` (JSON lines).
fn events(project: &Project, name: &str) -> Vec<Value> {
    fs::read_to_string(project.path().join(format!("{name}.out")))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn named<'e>(events: &'e [Value], name: &str) -> Vec<&'e Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

fn ledger(project: &Project) -> Ledger {
    Ledger::open(&project.path().join(".curupira/ledger.sqlite")).unwrap()
}

fn status_of(project: &Project, task_id: &str) -> Status {
    let rows = ledger(project).find(task_id, Some("q"), 2).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    rows[0].status
}

const ONCE: &[&str] = &["run", "--once", "--format", "json"];

#[test]
fn a_restart_skips_what_succeeded_and_the_ledger_reopens() {
    let project = queue_project(&["a", "b"], "");
    let first = project.curupira(ONCE);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(first.events_named("task.finished").len(), 2);
    assert_eq!(
        project.read(".curupira/.gitignore"),
        "*\n",
        "the state folder is ignored by Git"
    );
    // The queue forgets what it did; the ledger does not.
    fs::remove_file(project.path().join("done.jsonl")).unwrap();
    let second = project.curupira(ONCE);
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(second.events_named("task.skipped").len(), 2, "{second:?}");
    assert!(second.events_named("task.started").is_empty());
    assert_eq!(starts(&project), 2, "each task ran once");
    for finished in first.events_named("task.finished") {
        let id = finished["task_id"].as_str().unwrap();
        assert_eq!(status_of(&project, id), Status::Succeeded);
    }

    // Without the ledger, today's once-per-process behaviour.
    let toml = project.read("curupira.toml");
    project.write(
        "curupira.toml",
        &toml.replace(
            "[settings.agent]",
            "[settings.ledger]\nenabled = false\n\n[settings.agent]",
        ),
    );
    let _ = fs::remove_file(project.path().join("done.jsonl"));
    let third = project.curupira(ONCE);
    assert_eq!(third.events_named("task.finished").len(), 2, "{third:?}");
    assert_eq!(starts(&project), 4);
}

#[test]
fn a_failed_task_is_skipped_too_and_retry_and_forget_reopen_tasks() {
    let project = queue_project(&["a"], "");
    project.write("agent-exit", "3");
    let first = project.curupira(ONCE);
    assert_eq!(first.code, Some(1), "{first:?}");
    let id = first.events_named("task.finished")[0]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(status_of(&project, &id), Status::Failed);

    // forget: the next poll that returns it dispatches it again.
    fs::remove_file(project.path().join("done.jsonl")).unwrap();
    let skipped = project.curupira(ONCE);
    assert_eq!(skipped.events_named("task.skipped").len(), 1, "{skipped:?}");
    // A finished task: only with `--force` (its extension decides whether it comes
    // back; here the done file was deleted, so it does).
    let forgot = project.curupira(&["tasks", "forget", &id[..8], "--force"]);
    assert_eq!(forgot.code, Some(0), "{forgot:?}");
    assert!(
        forgot.stdout.contains(&format!("forgot task {id}")),
        "{forgot:?}"
    );
    assert!(ledger(&project).find(&id, None, 2).unwrap().is_empty());
    fs::remove_file(project.path().join("agent-exit")).unwrap();
    let again = project.curupira(ONCE);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(again.events_named("task.finished").len(), 1);
    assert_eq!(starts(&project), 2);
    assert_eq!(status_of(&project, &id), Status::Succeeded);

    // retry: the next run dispatches it from the stored pairs, without a poll
    // (the queue has it in done.jsonl and hands out nothing).
    let retried = project.curupira(&["tasks", "retry", &id]);
    assert_eq!(retried.code, Some(0), "{retried:?}");
    let listed = project.curupira(&["tasks", "list", "--format", "json"]);
    let row: Value = serde_json::from_str(listed.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(row["retry_requested"], true, "{listed:?}");
    let run = project.curupira(&["run", "--once", "--format", "json", "--dry-run"]);
    assert!(
        run.events_named("task.rendered").is_empty(),
        "a dry run starts no retry"
    );
    let run = project.curupira(ONCE);
    // local-queue records the retried item though this process did not hand it out.
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.events_named("automation.failed").is_empty(), "{run:?}");
    let started = run.events_named("task.started");
    assert_eq!(started.len(), 1, "{run:?}");
    assert_eq!(started[0]["task_id"], id.as_str());
    assert_eq!(
        started[0]["values"],
        serde_json::json!([{"key": "n", "value": "a"}])
    );
    assert_eq!(starts(&project), 3);
    let row = &ledger(&project).find(&id, None, 2).unwrap()[0];
    // Two attempts since `forget` deleted the row: the run after it, and the retry.
    assert_eq!(
        (row.status, row.attempts, row.retry_requested),
        (Status::Succeeded, 2, false)
    );
}

#[test]
fn an_interrupted_task_runs_again() {
    let project = queue_project(&["a"], "");
    project.write("sleep", "30");
    let host = spawn(&project, "first", ONCE);
    assert!(wait_until(Duration::from_secs(20), || starts(&project) == 1));
    // The first signal waits for the agent; the second stops it: interrupted.
    signal(host.id(), "INT");
    thread::sleep(Duration::from_millis(200));
    signal(host.id(), "INT");
    assert_eq!(finish(host, Duration::from_secs(20)), Some(130));
    let first = events(&project, "first");
    assert!(named(&first, "task.finished").is_empty(), "{first:?}");
    let id = named(&first, "task.started")[0]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(status_of(&project, &id), Status::Interrupted);

    fs::remove_file(project.path().join("sleep")).unwrap();
    let again = project.curupira(ONCE);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(again.events_named("task.finished").len(), 1, "{again:?}");
    assert_eq!(starts(&project), 2);
    assert_eq!(status_of(&project, &id), Status::Succeeded);
}

/// `tasks retry` on a task the running host itself finished (failed): its next round
/// dispatches it again, without a restart.
#[test]
fn a_running_host_dispatches_a_task_it_finished_again_when_asked() {
    let project = queue_project(&["a"], "\n[settings.polling]\ninterval_seconds = 1\n");
    project.write("agent-exit", "3");
    let host = spawn(&project, "host", &["run", "--watch", "--format", "json"]);
    assert!(wait_until(Duration::from_secs(20), || starts(&project) == 1));
    let task_id = agent_log(&project)[0].1.clone();
    let failed = || {
        ledger(&project)
            .find(&task_id, Some("q"), 2)
            .is_ok_and(|rows| rows.len() == 1 && rows[0].status == Status::Failed)
    };
    assert!(wait_until(Duration::from_secs(20), failed));
    fs::remove_file(project.path().join("agent-exit")).unwrap();

    let retry = project.curupira(&["tasks", "retry", &task_id[..12]]);
    assert_eq!(retry.code, Some(0), "{retry:?}");
    assert!(
        retry.stdout.contains("by the next round of a running host"),
        "{}",
        retry.stdout
    );
    let again = wait_until(Duration::from_secs(20), || starts(&project) == 2);
    let succeeded = wait_until(Duration::from_secs(20), || {
        status_of(&project, &task_id) == Status::Succeeded
    });
    signal(host.id(), "TERM");
    let _ = finish(host, Duration::from_secs(20));
    assert!(again, "dispatched again by the running host");
    assert!(succeeded, "{:?}", status_of(&project, &task_id));
    let started = named(&events(&project, "host"), "task.started").len();
    assert_eq!(started, 2, "once, then once more when asked");
}

/// A retry request is taken up once, even by a host that starts its next round at once
/// (`interval_seconds = 0`) and whose retried task ends within the ledger writer's
/// pause: the request is read only once this host's own changes (the attempt that
/// cleared it) are committed.
#[test]
fn a_retry_request_is_taken_up_once_by_a_host_that_never_pauses() {
    // A quick agent (one `sh`), so the retried attempt ends within the writer's pause.
    let project = one_item_project(
        "[settings.polling]\ninterval_seconds = 0\n\n\
         [settings.agent]\ncommand = [\"sh\", \"-c\", \
         \"echo \\\"start $CURUPIRA_TASK_ID $$\\\" >> agent.log; test ! -e agent-exit\"]",
    );
    project.write("agent-exit", "");
    let host = spawn(&project, "host", &["run", "--watch", "--format", "json"]);
    assert!(wait_until(Duration::from_secs(20), || starts(&project) == 1));
    let task_id = agent_log(&project)[0].1.clone();
    assert!(wait_until(Duration::from_secs(20), || {
        ledger(&project)
            .find(&task_id, Some("q"), 2)
            .is_ok_and(|rows| rows.len() == 1 && rows[0].status == Status::Failed)
    }));
    fs::remove_file(project.path().join("agent-exit")).unwrap();
    let retry = project.curupira(&["tasks", "retry", &task_id[..12]]);
    assert_eq!(retry.code, Some(0), "{retry:?}");
    assert!(wait_until(Duration::from_secs(20), || starts(&project) >= 2));
    // Rounds go on back to back meanwhile.
    thread::sleep(Duration::from_millis(1500));
    signal(host.id(), "TERM");
    let _ = finish(host, Duration::from_secs(20));
    assert_eq!(starts(&project), 2, "{:?}", agent_log(&project));
}

#[test]
fn a_corrupt_ledger_is_refused_with_its_name() {
    let project = queue_project(&["a"], "");
    let garbage = "this is no database ".repeat(400);
    project.write(".curupira/ledger.sqlite", &garbage);
    let run = project.curupira(ONCE);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains(".curupira/ledger.sqlite"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("damaged or is not an SQLite database"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_eq!(starts(&project), 0, "nothing ran");
    assert_eq!(
        project.read(".curupira/ledger.sqlite"),
        garbage,
        "left as it was"
    );
    let list = project.curupira(&["tasks", "list"]);
    assert_eq!(list.code, Some(2), "{list:?}");
    assert!(
        list.stderr.contains(".curupira/ledger.sqlite"),
        "{}",
        list.stderr
    );
}

#[test]
fn readers_see_whole_rows_while_a_host_writes() {
    let items: Vec<String> = (0..40).map(|n| n.to_string()).collect();
    let items: Vec<&str> = items.iter().map(String::as_str).collect();
    let project = queue_project(&items, "\n[settings.polling]\nbatch_size = 100\n");
    let host = spawn(&project, "host", ONCE);
    let mut reads = 0;
    let mut seen = 0;
    let host_pid = host.id();
    while alive(host_pid) || reads < 3 {
        let list = project.curupira(&["tasks", "list", "--limit", "100", "--format", "json"]);
        assert_eq!(list.code, Some(0), "{list:?}");
        let rows: Vec<Value> = list
            .stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        for row in &rows {
            let status = row["status"].as_str().unwrap();
            assert!(["running", "succeeded"].contains(&status), "{row}");
            assert_eq!(row["values"][0]["key"], "n", "{row}");
            if status == "succeeded" {
                assert_eq!(row["exit_code"], 0, "a finished row is whole: {row}");
            }
        }
        assert!(
            rows.len() >= seen,
            "rows never disappear: {} after {seen}",
            rows.len()
        );
        seen = rows.len();
        reads += 1;
    }
    assert_eq!(finish(host, Duration::from_secs(60)), Some(0));
    assert!(reads >= 3);
    let rows = ledger(&project)
        .list(&curupira_ledger::Filter::default(), 100)
        .unwrap();
    assert_eq!(rows.len(), 40);
    assert!(rows.iter().all(|row| row.status == Status::Succeeded));
}

#[test]
fn a_second_host_on_the_same_state_refuses_and_the_first_runs_each_task_once() {
    let project = queue_project(&["a", "b", "c"], "");
    project.write("sleep", "0.5");
    let first = spawn(&project, "first", ONCE);
    assert!(wait_until(Duration::from_secs(20), || starts(&project) >= 1));
    let second = project.curupira(ONCE);
    assert_eq!(second.code, Some(2), "{second:?}");
    let expected = format!("another `curupira run` (pid {}) is using", first.id());
    assert!(second.stderr.contains(&expected), "{}", second.stderr);
    assert!(second.stderr.contains("run.lock"), "{}", second.stderr);
    assert!(second.stdout.is_empty(), "{second:?}");
    assert_eq!(finish(first, Duration::from_secs(30)), Some(0));
    let log = agent_log(&project);
    let mut ids: Vec<&str> = log
        .iter()
        .filter(|(what, _, _)| what == "start")
        .map(|(_, id, _)| id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!((starts(&project), ids.len()), (3, 3), "{log:?}");
    // The lock died with its holder: the next run starts.
    let third = project.curupira(ONCE);
    assert_eq!(third.code, Some(0), "{third:?}");
}

/// SIGKILL of the host during a 5 s agent: the watchdog stops the agent (and the
/// queue extension ends with its stdin), so nothing of the run is left after a short
/// bound; a restart runs the task once.
#[test]
fn nothing_of_a_killed_host_survives_and_a_restart_runs_the_task_once() {
    let project = queue_project(&["a"], "");
    project.write("sleep", "5");
    let host = spawn(&project, "first", ONCE);
    assert!(wait_until(Duration::from_secs(20), || starts(&project) == 1));
    let family = descendants(host.id());
    let agent = agent_log(&project)[0].2;
    assert!(family.iter().any(|(pid, _)| *pid == agent), "{family:?}");
    assert!(
        family.iter().any(|(_, cmd)| cmd.contains(" watchdog ")),
        "a watchdog runs: {family:?}"
    );
    signal(host.id(), "KILL");
    let started = Instant::now();
    let gone = wait_until(Duration::from_secs(4), || {
        family.iter().all(|(pid, _)| !alive(*pid))
    });
    let left: Vec<_> = family.iter().filter(|(pid, _)| alive(*pid)).collect();
    assert!(gone, "left after {:?}: {left:?}", started.elapsed());
    let _ = finish(host, Duration::from_secs(5));
    assert_eq!(
        agent_log(&project).len(),
        1,
        "the agent never ended by itself"
    );

    fs::remove_file(project.path().join("sleep")).unwrap();
    let again = project.curupira(ONCE);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(again.events_named("task.started").len(), 1, "{again:?}");
    assert_eq!(
        starts(&project),
        2,
        "the first attempt, then the restart's one"
    );
}

/// A task left `running` by a killed host whose item is not handed over again (here:
/// taken off the queue) is not shown running for ever: the next run marks it
/// `interrupted`, reason `unrecorded`, says so, and (issue 37: what is not finished
/// runs again, whether or not its extension hands it over again) runs it from the
/// ledger's pairs, as its second attempt.
#[test]
fn a_task_a_killed_host_left_running_is_marked_unrecorded_by_the_next_run() {
    let project = queue_project(&["a"], "");
    project.write("sleep", "30");
    let host = spawn(&project, "first", ONCE);
    assert!(wait_until(Duration::from_secs(20), || starts(&project) == 1));
    let (_, task_id, agent) = agent_log(&project)[0].clone();
    // Killed once its row is committed (a host killed before that leaves no row).
    assert!(wait_until(Duration::from_secs(20), || {
        ledger(&project)
            .find(&task_id, Some("q"), 2)
            .is_ok_and(|rows| rows.len() == 1)
    }));
    signal(host.id(), "KILL");
    let _ = finish(host, Duration::from_secs(5));
    assert!(
        wait_until(Duration::from_secs(5), || !alive(agent)),
        "the watchdog stops the agent"
    );
    assert_eq!(status_of(&project, &task_id), Status::Running);

    project.write("tasks.jsonl", "");
    project.write("agent-exit", "4");
    fs::remove_file(project.path().join("sleep")).unwrap();
    let next = project.curupira(ONCE);
    assert_eq!(next.code, Some(1), "{next:?}");
    assert!(
        next.stderr.contains("reason `unrecorded`")
            && next.stderr.contains(&format!("q {}", &task_id[..12])),
        "{}",
        next.stderr
    );
    let started = next.events_named("task.started");
    assert_eq!(started.len(), 1, "run again from the ledger: {next:?}");
    assert_eq!(started[0]["attempt"], 2, "{next:?}");
    let history = ledger(&project).attempts("q", &task_id).unwrap();
    let ended: Vec<_> = history
        .iter()
        .map(|a| (a.attempt, a.outcome, a.reason.as_deref()))
        .collect();
    assert_eq!(
        ended,
        [
            (1, Some(Status::Interrupted), Some("unrecorded")),
            (2, Some(Status::Failed), Some("exit"))
        ]
    );
    assert_eq!(status_of(&project, &task_id), Status::Failed);

    // Said once, and finished: the next run finds nothing to mark or run.
    let quiet = project.curupira(ONCE);
    assert!(!quiet.stderr.contains("unrecorded"), "{}", quiet.stderr);
    assert!(quiet.events_named("task.started").is_empty(), "{quiet:?}");
}

/// SIGKILL of the host during a long `before_run` hook: the watchdog stops the hook's
/// process group as it stops an agent's, so nothing of the run is left.
#[test]
fn a_hook_of_a_killed_host_is_stopped_too() {
    let project = queue_project(
        &["a"],
        "\n[settings.workspace]\nhooks = { before_run = \"echo $$ > hook.pid; sleep 30\" }",
    );
    let host = spawn(&project, "first", ONCE);
    assert!(wait_until(Duration::from_secs(20), || {
        fs::read_to_string(project.path().join("hook.pid")).is_ok_and(|pid| pid.ends_with('\n'))
    }));
    let hook: u32 = fs::read_to_string(project.path().join("hook.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Its `sleep` too: the whole family, taken before the host dies.
    assert!(wait_until(Duration::from_secs(10), || {
        descendants(host.id())
            .iter()
            .any(|(_, cmd)| cmd.contains("sleep 30") && !cmd.contains("sh -c"))
    }));
    let family = descendants(host.id());
    assert!(family.iter().any(|(pid, _)| *pid == hook), "{family:?}");
    signal(host.id(), "KILL");
    let gone = wait_until(Duration::from_secs(10), || {
        family.iter().all(|(pid, _)| !alive(*pid))
    });
    let left: Vec<_> = family.iter().filter(|(pid, _)| alive(*pid)).collect();
    assert!(gone, "left: {left:?}");
    let _ = finish(host, Duration::from_secs(5));
    assert_eq!(starts(&project), 0, "the agent never started");
}

/// Leaves a process in a session of its own (a daemon's double fork: `setsid`, its
/// parent gone) that writes its pid to `left.pid` and sleeps 30 s; returns once the
/// pid is written.
const DETACH: &str = r#"python3 -c '
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open("left.pid.new", "w") as f:
            f.write(str(os.getpid()))
        os.rename("left.pid.new", "left.pid")
        time.sleep(30)
    os._exit(0)
os.wait()
' </dev/null >/dev/null 2>&1
while [ ! -f left.pid ]; do sleep 0.05; done
"#;

/// [`AGENT`] after [`DETACH`].
const DETACHING_AGENT: &str = r#"sh detach.sh
echo "start $CURUPIRA_TASK_ID $$" >> agent.log
sleep "$(cat sleep 2>/dev/null || echo 0)"
echo "end $CURUPIRA_TASK_ID $$" >> agent.log
"#;

/// The process [`DETACH`] left, once it wrote its pid.
fn left_behind(project: &Project) -> u32 {
    let path = project.path().join("left.pid");
    assert!(wait_until(Duration::from_secs(20), || path.exists()));
    fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

/// Kills a process a failed test left (a no-op once it is gone).
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if alive(self.0) {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(self.0.to_string())
                .status();
        }
    }
}

/// A process the agent detached from its group (and whose parent is gone, so nothing
/// of the agent's family leads to it) is stopped by the watchdog once the task ended.
#[test]
fn what_an_agent_detached_from_its_group_is_stopped_once_its_task_ended() {
    if !have_python() {
        return;
    }
    let project = queue_project(&["a"], "");
    project.write("detach.sh", DETACH);
    project.write("agent.sh", DETACHING_AGENT);
    let run = project.curupira(&["run", "--once", "--format", "json", "-v"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let left = left_behind(&project);
    let _guard = KillOnDrop(left);
    assert!(
        wait_until(Duration::from_secs(10), || !alive(left)),
        "the detached process {left} outlived its task"
    );
    assert!(
        run.stderr
            .contains("this run left outside their process groups"),
        "{}",
        run.stderr
    );
}

/// The same for a hook: what `after_run` detached is stopped once the hook ended.
#[test]
fn what_a_hook_detached_from_its_group_is_stopped_once_it_ended() {
    if !have_python() {
        return;
    }
    let project = queue_project(
        &["a"],
        "\n[settings.workspace]\nhooks = { after_run = \"sh detach.sh\" }",
    );
    project.write("detach.sh", DETACH);
    let run = project.curupira(ONCE);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(starts(&project), 1);
    let left = left_behind(&project);
    let _guard = KillOnDrop(left);
    assert!(
        wait_until(Duration::from_secs(10), || !alive(left)),
        "the detached process {left} outlived its hook"
    );
}

/// The same when the host is killed while the agent runs: the watchdog stops the
/// agent's group and what the agent detached from it.
#[test]
fn what_an_agent_detached_from_its_group_is_stopped_when_its_host_is_killed() {
    if !have_python() {
        return;
    }
    let project = queue_project(&["a"], "");
    project.write("detach.sh", DETACH);
    project.write("agent.sh", DETACHING_AGENT);
    project.write("sleep", "30");
    let host = spawn(&project, "first", ONCE);
    let left = left_behind(&project);
    let _guard = KillOnDrop(left);
    assert!(wait_until(Duration::from_secs(20), || starts(&project) == 1));
    let agent = agent_log(&project)[0].2;
    assert!(alive(left) && alive(agent));
    signal(host.id(), "KILL");
    let _ = finish(host, Duration::from_secs(5));
    assert!(
        wait_until(Duration::from_secs(10), || !alive(left) && !alive(agent)),
        "left alive: detached {}, agent {}",
        alive(left),
        alive(agent)
    );
}

/// The host and its watchdog both killed: the agent lives on. A restarted host finds
/// the task `running` with its agent alive, waits for it, then dispatches it exactly
/// once, never beside it.
#[test]
fn a_restart_waits_for_an_orphaned_agent_then_dispatches_once() {
    let project = queue_project(&["a"], "");
    project.write("sleep", "3");
    let host = spawn(&project, "first", ONCE);
    assert!(wait_until(Duration::from_secs(20), || starts(&project) == 1));
    // The agent's row is committed a moment after it starts (by the ledger's writer
    // thread, at a lower priority): a host killed before that leaves a row without an
    // agent, dispatched again at once (docs/HOST.md). This test is about a recorded
    // agent, so it waits for the record.
    let (_, task_id, agent) = agent_log(&project)[0].clone();
    assert!(
        wait_until(Duration::from_secs(20), || {
            ledger(&project)
                .find(&task_id, Some("q"), 2)
                .is_ok_and(|rows| rows.first().and_then(|row| row.agent_pid) == Some(agent))
        }),
        "the agent's row was never committed"
    );
    let watchdog: Vec<u32> = descendants(host.id())
        .into_iter()
        .filter(|(_, cmd)| cmd.contains(" watchdog "))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(watchdog.len(), 1);
    signal(watchdog[0], "KILL");
    signal(host.id(), "KILL");
    let _ = finish(host, Duration::from_secs(5));
    let orphan = agent_log(&project)[0].2;
    assert!(alive(orphan), "the agent outlived its host");
    fs::write(project.path().join("sleep"), "0").unwrap();

    let again = project.curupira(&["run", "--once", "--format", "json", "-v"]);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert!(again.stderr.contains("is still alive"), "{}", again.stderr);
    assert_eq!(again.events_named("task.started").len(), 1, "{again:?}");
    let log: Vec<(String, u32)> = agent_log(&project)
        .into_iter()
        .map(|(what, _, pid)| (what, pid))
        .collect();
    assert_eq!(log.len(), 4, "{log:?}");
    assert_eq!(
        (log[0].clone(), log[1].clone()),
        (("start".to_owned(), orphan), ("end".to_owned(), orphan)),
        "the orphan ended before the task started again: {log:?}"
    );
    assert_eq!((log[2].0.as_str(), log[3].0.as_str()), ("start", "end"));
}

/// The ledger's path can be moved; the lock goes with it.
#[test]
fn the_ledger_path_setting_moves_the_state() {
    let project = queue_project(&["a"], "\n[settings.ledger]\npath = \"state/tasks.db\"\n");
    let run = project.curupira(ONCE);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(project.exists("state/tasks.db") && project.exists("state/run.lock"));
    assert!(!project.exists(".curupira/ledger.sqlite"));
    let list = project.curupira(&["tasks", "list", "--format", "json"]);
    assert_eq!(list.stdout.lines().count(), 1, "{list:?}");
    assert!(Path::new(&project.path().join("state/tasks.db")).is_file());
}

/// Whether this machine lets an unprivileged user namespace mount a tmpfs (what the
/// full-disk tests need for a disk that really fills up); some container runtimes and
/// distributions forbid it.
fn can_mount_a_small_disk(dir: &Path) -> bool {
    fs::create_dir_all(dir.join("probe")).unwrap();
    Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg("mount -t tmpfs -o size=64k probe probe")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Items `i1` … `i40`.
const FULL_DISK_ITEMS: usize = 40;

/// The full-disk story, in a project whose `state/` folder holds what is to meet the
/// full disk (`settings` points the ledger or the done file there): a 16 MiB tmpfs is
/// mounted on `state/` in a user and mount namespace of the test's own (one for the
/// whole story: the mount goes when its last process does); run 1, with an empty
/// queue, makes the state; the queue gets its items and the disk is filled but for
/// `margin`; run 2 meets the full disk; the filler goes; run 3 takes what is left (16
/// MiB: room for the ledger's log of 40 tasks however finely a loaded machine cuts
/// its commits; with 1 MiB run 3 met a full disk too).
/// Each run's output is in `runN.out`, `runN.err`, `runN.code`. `None` (the story not
/// run) where no namespace can mount.
fn full_disk_story(settings: &str, done_path: &str, margin: &str) -> Option<Project> {
    let project = queue_project(&[], settings);
    // One round takes every item (`--once` runs one round).
    let config = project.read("curupira.toml").replace(
        "done_path = \"done.jsonl\"",
        &format!("done_path = \"{done_path}\""),
    ) + "polling = { batch_size = 100 }\n";
    project.write("curupira.toml", &config);
    if !can_mount_a_small_disk(project.path()) {
        eprintln!(
            "skipped: this machine does not let a user namespace mount a tmpfs \
             (`unshare --user --map-root-user --mount`)"
        );
        return None;
    }
    let items: String = (1..=FULL_DISK_ITEMS)
        .map(|n| format!("{{\"n\": \"i{n}\"}}\n"))
        .collect();
    project.write("items.jsonl", &items);
    let run = |n: u32| {
        format!(
            "{} run --once --format json > run{n}.out 2> run{n}.err; echo $? > run{n}.code\n",
            curupira()
        )
    };
    let script = format!(
        "set -u\n\
         mount -t tmpfs -o size=16m curupira-test state || exit 90\n\
         {}\
         cp items.jsonl tasks.jsonl\n\
         dd if=/dev/zero of=state/filler bs=4096 2> /dev/null\n\
         truncate -s -{margin} state/filler || exit 91\n\
         {}\
         rm state/filler\n\
         {}",
        run(1),
        run(2),
        run(3)
    );
    project.write("full.sh", &script);
    fs::create_dir_all(project.path().join("state")).unwrap();
    let story = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "full.sh"])
        .current_dir(project.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    assert_eq!(finish(story, Duration::from_secs(120)), Some(0));
    assert_eq!(exit_code(&project, 1), "0", "{}", project.read("run1.err"));
    Some(project)
}

fn exit_code(project: &Project, run: u32) -> String {
    project.read(&format!("run{run}.code")).trim().to_owned()
}

/// The tasks runs 2 and 3 started, and asserts that every item's agent ran exactly
/// once, to its end, across them: no task lost, none run twice.
fn each_item_ran_once(project: &Project) -> (usize, usize) {
    let started = |run: &str| -> Vec<String> {
        named(&events(project, run), "task.started")
            .iter()
            .map(|event| event["task_id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (second, third) = (started("run2"), started("run3"));
    let mut dispatched: Vec<&str> = second.iter().chain(&third).map(String::as_str).collect();
    dispatched.sort_unstable();
    let log = agent_log(project);
    for what in ["start", "end"] {
        let mut seen: Vec<&str> = log
            .iter()
            .filter(|(w, _, _)| w == what)
            .map(|(_, id, _)| id.as_str())
            .collect();
        seen.sort_unstable();
        assert_eq!(
            seen, dispatched,
            "each dispatched task's agent {what}s once"
        );
    }
    dispatched.dedup();
    assert_eq!(dispatched.len(), FULL_DISK_ITEMS, "every item, none twice");
    (second.len(), third.len())
}

/// A real full disk under the ledger: the run that meets it stops starting tasks, lets
/// its running agents finish (their `onFinished` sent: the queue's done file is on
/// another disk), and exits 2 with one sentence naming the ledger; once space is freed
/// the next run dispatches what was left.
#[test]
fn a_full_disk_under_the_ledger_stops_the_run_and_no_task_is_lost_or_run_twice() {
    let Some(project) = full_disk_story(
        "\n[settings.ledger]\npath = \"state/ledger.sqlite\"\n",
        "done.jsonl",
        // The lock's rewrite fits, the log's growth does not.
        "32K",
    ) else {
        return;
    };
    assert_eq!(exit_code(&project, 2), "2", "{}", project.read("run2.err"));
    let err = project.read("run2.err");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: cannot write the task ledger `")
            && last
                .ends_with("state/ledger.sqlite`: database or disk is full; the run was stopped"),
        "{err}"
    );
    assert_eq!(exit_code(&project, 3), "0", "{}", project.read("run3.err"));
    let (second, _) = each_item_ran_once(&project);
    assert!(
        (1..FULL_DISK_ITEMS).contains(&second),
        "run 2 started {second} tasks"
    );
    assert_eq!(project.read("done.jsonl").lines().count(), FULL_DISK_ITEMS);
}

/// A real full disk under `local-queue`'s done file (the ledger elsewhere):
/// `local-queue` records a hand-out beside the done file before it answers a poll, so
/// the first poll fails its automation (exit 1, the disk's error in the event) and no
/// agent starts; once space is freed the next run does every item, each once.
#[test]
fn a_full_disk_under_the_done_file_fails_the_automation_and_runs_nothing_twice() {
    // Not a page free: nothing can be written beside the done file.
    let Some(project) = full_disk_story("", "state/done.jsonl", "0") else {
        return;
    };
    assert_eq!(exit_code(&project, 2), "1", "{}", project.read("run2.err"));
    let second = events(&project, "run2");
    let failed = named(&second, "automation.failed");
    assert_eq!(failed.len(), 1, "{second:?}");
    let message = failed[0]["message"].as_str().unwrap();
    assert!(
        message.contains("trigger/poll")
            && message.contains("state/")
            && message.contains("No space left on device"),
        "{message}"
    );
    assert_eq!(exit_code(&project, 3), "0", "{}", project.read("run3.err"));
    let (in_second, _) = each_item_ran_once(&project);
    assert_eq!(in_second, 0, "no agent started on a poll that failed");
}

/// A watchdog that stops reading (SIGSTOP) never holds the run up: its lines wait in
/// the host, agents are still supervised and reaped, every task runs; once it reads
/// again it takes what waited and ends with the run.
#[test]
fn a_stopped_watchdog_does_not_hold_the_run_up() {
    // More tasks than the pipe to the watchdog holds lines for (~2,700 at 64 KiB).
    const ITEMS: usize = 4_000;
    let project = Project::new();
    let items: String = (1..=ITEMS)
        .map(|n| format!("{{\"n\": \"{n}\"}}\n"))
        .collect();
    project.write("tasks.jsonl", &items);
    project.write(
        "curupira.toml",
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
         [settings.agent]\ncommand = [\"true\"]\nmax_concurrent = 4\n\n\
         [extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.q]\ntrigger = \"jsonl\"\nprompt = \"Do ${n}.\"\n\
         arguments = { path = \"tasks.jsonl\", done_path = \"done.jsonl\" }\n\
         polling = { batch_size = 10000 }\n",
    );
    let host = spawn(&project, "run", &["run", "--once"]);
    let watchdog = |host: u32| {
        descendants(host)
            .into_iter()
            .find(|(_, cmdline)| cmdline.contains(" watchdog "))
            .map(|(pid, _)| pid)
    };
    let mut dog = None;
    assert!(
        wait_until(Duration::from_secs(10), || {
            dog = watchdog(host.id());
            dog.is_some()
        }),
        "the host started no watchdog"
    );
    let dog = dog.unwrap();
    let done = || {
        fs::read_to_string(project.path().join("done.jsonl"))
            .map(|text| text.lines().count())
            .unwrap_or(0)
    };
    // Stop it only once it said `ready` (the host dispatches nothing before): a
    // watchdog stopped before that is one the host rightly waits for. The first
    // finished task says the host is past it, with thousands of lines still to come.
    assert!(
        wait_until(Duration::from_secs(60), || done() > 0),
        "no task finished with the watchdog running"
    );
    signal(dog, "STOP");
    assert!(
        done() < ITEMS / 4,
        "the run went too far before the watchdog stopped"
    );
    let finished_all = wait_until(Duration::from_secs(120), || done() == ITEMS);
    // Let it go whatever happened, so nothing is left stopped.
    signal(dog, "CONT");
    assert!(finished_all, "only {} of {ITEMS} tasks finished", done());
    assert_eq!(finish(host, Duration::from_secs(30)), Some(0));
    assert!(
        wait_until(Duration::from_secs(10), || !alive(dog)),
        "the watchdog ended with the run"
    );
    let err = project.read("run.err");
    assert!(!err.contains("ERROR"), "{err}");
}

/// A project with one queued item, `sections` (its `[settings.agent]`, and any other
/// settings table) in its config, and the local queue's automation `q`.
fn one_item_project(sections: &str) -> Project {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n");
    project.write(
        "curupira.toml",
        &format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n{sections}\n\n\
             [extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.q]\ntrigger = \"jsonl\"\nprompt = \"Do ${{n}}.\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"done.jsonl\" }}\n"
        ),
    );
    project
}

/// Starts `curupira ARGS…` in the project, its stdout in `run.out` and its stderr a
/// pipe whose reading end stays open and is never read (`sleep`'s stdin); returns the
/// host and that reader, to be killed once done with.
fn spawn_with_unread_stderr(project: &Project, args: &[&str]) -> (Child, Child) {
    let mut reader = Command::new("sleep")
        .arg("120")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let unread = reader.stdin.take().unwrap();
    let out = File::create(project.path().join("run.out")).unwrap();
    let host = Command::new(curupira())
        .args(args)
        .current_dir(project.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(unread)
        .spawn()
        .unwrap();
    (host, reader)
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A host whose stderr nobody reads (`curupira run 2>&1 | less`, a stalled log
/// collector) still enforces its agents' time limits: a chatty agent that would run
/// for ever is stopped at `timeout_seconds`, and the run ends, its events on stdout.
#[test]
fn an_unread_stderr_does_not_hold_up_an_agents_time_limit() {
    let project = one_item_project(
        "[settings.agent]\ncommand = [\"yes\", \"a line of agent output\"]\n\
         timeout_seconds = 2\nkill_grace_seconds = 1",
    );
    let started = Instant::now();
    let (host, never_reads) =
        spawn_with_unread_stderr(&project, &["run", "--once", "--format", "json"]);
    let code = finish(host, Duration::from_secs(60));
    let elapsed = started.elapsed();
    kill(never_reads);
    assert_eq!(code, Some(1), "the task failed by its time limit");
    let finished = named(&events(&project, "run"), "task.finished")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(finished.len(), 1, "{finished:?}");
    assert_eq!(finished[0]["reason"], "timeout", "{finished:?}");
    // 2 s of limit, 1 s of grace, at most 2 s for what waits for stderr at the exit.
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
}

/// The watchdog shares its host's stderr: with nobody reading it, a killed host's
/// agent is still stopped (the watchdog's own lines never hold it up).
#[test]
fn a_killed_hosts_agent_is_stopped_though_nobody_reads_stderr() {
    let project = one_item_project(
        "[settings.agent]\ncommand = [\"sh\", \"agent.sh\"]\nkill_grace_seconds = 1",
    );
    // The agent fills the pipe of the host's stderr (its output is forwarded there),
    // then waits for ever, logging its pid first.
    project.write(
        "agent.sh",
        "echo $$ > agent.pid\nyes 'a line of agent output' | head -c 1000000\nexec sleep 600\n",
    );
    let (host, never_reads) = spawn_with_unread_stderr(&project, &["run", "--once"]);
    let agent_pid = || -> Option<u32> {
        let text = fs::read_to_string(project.path().join("agent.pid")).ok()?;
        let pid: u32 = text.trim().parse().ok()?;
        // `exec sleep`: the agent is sleeping, its output written.
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        cmdline.starts_with(b"sleep").then_some(pid)
    };
    let mut agent = None;
    let started = wait_until(Duration::from_secs(30), || {
        agent = agent_pid();
        agent.is_some()
    });
    kill(host);
    let agent = agent.expect("the agent started and wrote its output");
    assert!(started);
    let stopped = wait_until(Duration::from_secs(15), || !alive(agent));
    kill(never_reads);
    if !stopped {
        signal(agent, "KILL");
    }
    assert!(stopped, "the agent of the killed host was left running");
}

/// A hook killed at its timeout still has its last words forwarded (often why it
/// hung), a line without its end included, behind the task's and the hook's name.
#[test]
fn a_hook_killed_at_its_timeout_has_its_last_line_forwarded() {
    let project = one_item_project(
        "[settings.agent]\ncommand = [\"true\"]\n\n\
         [settings.workspace]\nhook_timeout_seconds = 1\n\
         hooks = { before_run = \"echo starting; printf 'waiting for the lock'; sleep 30\" }",
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let events: Vec<Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let finished = named(&events, "task.finished");
    assert_eq!(finished[0]["reason"], "hook-failed", "{finished:?}");
    let short = &finished[0]["task_id"].as_str().unwrap()[..12];
    for line in ["starting", "waiting for the lock"] {
        assert!(
            run.stderr
                .contains(&format!("[q {short} before_run] {line}\n")),
            "{line:?} in {}",
            run.stderr
        );
    }
}

/// A hook's output goes to the host's stderr through the host, so a chatty hook is
/// not held up (and killed at its timeout, failing the attempt) when nobody reads the
/// host's stderr; with a reader, its output arrives whole.
#[test]
fn a_chatty_hook_is_not_held_up_by_an_unread_stderr_and_its_output_arrives() {
    let project = one_item_project(
        "[settings.agent]\ncommand = [\"true\"]\n\n\
         [settings.workspace]\nhook_timeout_seconds = 5\n\
         hooks = { before_run = \"yes 'hook says hello' | head -c 500000; echo hook-done\" }",
    );
    let (host, never_reads) =
        spawn_with_unread_stderr(&project, &["run", "--once", "--format", "json"]);
    let code = finish(host, Duration::from_secs(60));
    kill(never_reads);
    assert_eq!(code, Some(0), "{}", project.read("run.out"));
    let finished = named(&events(&project, "run"), "task.finished")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(finished[0]["reason"], "exit", "{finished:?}");

    // Read: every byte of it, in order, each line behind the task's and the hook's
    // name, as concurrent tasks' hooks need.
    fs::remove_file(project.path().join("done.jsonl")).unwrap();
    fs::remove_dir_all(project.path().join(".curupira")).unwrap();
    let run = project.curupira(&["run", "--once"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let task_id = finished[0]["task_id"].as_str().unwrap();
    let line = format!("[q {} before_run] hook says hello\n", &task_id[..12]);
    assert_eq!(
        run.stderr.matches(&line).count(),
        500_000 / "hook says hello\n".len(),
        "whole lines, all of them, each with its prefix"
    );
    assert_eq!(
        run.stderr.matches("hook says hello\n").count(),
        500_000 / 16
    );
    assert!(
        run.stderr
            .contains(&format!("[q {} before_run] hook-done\n", &task_id[..12])),
        "the last line too"
    );
}

/// The queue project with `retries = 2` and a pause of `backoff` seconds before the
/// first retry.
fn retrying_project(backoff: u32) -> Project {
    let project = queue_project(&["a"], "");
    let toml = project.read("curupira.toml");
    project.write(
        "curupira.toml",
        &toml.replace(
            "kill_grace_seconds = 2\n",
            &format!("kill_grace_seconds = 2\nretries = 2\nretry_backoff_seconds = {backoff}\n"),
        ),
    );
    project.write("agent-exit", "1");
    project
}

/// After a stop, the task is interrupted (not finished, nothing in the done file, the
/// ledger says so), and a later run hands it over and runs it again.
fn interrupted_then_run_again(project: &Project, stopped: &[Value]) {
    assert!(named(stopped, "task.finished").is_empty(), "{stopped:?}");
    let interrupted = named(stopped, "task.interrupted");
    assert_eq!(interrupted.len(), 1, "{stopped:?}");
    assert_eq!(interrupted[0]["reason"], "shutdown");
    let id = interrupted[0]["task_id"].as_str().unwrap().to_owned();
    assert_eq!(status_of(project, &id), Status::Interrupted);
    assert_eq!(project.read("done.jsonl"), "", "not finished: not done");

    project.write("agent-exit", "0");
    let later = project.curupira(ONCE);
    assert_eq!(later.code, Some(0), "{later:?}");
    let finished = later.events_named("task.finished");
    assert_eq!(finished.len(), 1, "handed over again: {later:?}");
    assert_eq!(finished[0]["task_id"], id.as_str());
    assert_eq!(finished[0]["exit_code"], 0);
    assert_eq!(status_of(project, &id), Status::Succeeded);
}

/// Issue 24: a SIGINT while a task waits for its retry interrupts the wait: the task
/// is not finished (its retries not burnt) and runs again in a later run.
#[test]
fn sigint_during_a_retry_wait_interrupts_the_task_for_a_later_run() {
    let project = retrying_project(30);
    let host = spawn(&project, "run", &["run", "--watch", "--format", "json"]);
    let retrying = wait_until(Duration::from_secs(30), || {
        fs::read_to_string(project.path().join("run.out"))
            .is_ok_and(|out| out.contains("\"task.retrying\""))
    });
    assert!(retrying, "{}", project.read("run.err"));
    signal(host.id(), "INT");
    let code = finish(host, Duration::from_secs(20));
    let stderr = project.read("run.err");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("waiting for a retry") && stderr.contains("a later run hands it over"),
        "the signal's line says what happens to them: {stderr}"
    );
    assert_eq!(starts(&project), 1, "no retry started after the signal");
    interrupted_then_run_again(&project, &events(&project, "run"));
}

/// Issue 24: with `retries = 2`, an attempt that failed after the first SIGINT ended
/// the task as finished (1 attempt of 3), so it never ran again.
#[test]
fn an_attempt_failing_after_the_first_sigint_keeps_its_retries_for_a_later_run() {
    let project = retrying_project(0);
    project.write("sleep", "1");
    let host = spawn(&project, "run", &["run", "--watch", "--format", "json"]);
    assert!(
        wait_until(Duration::from_secs(30), || starts(&project) == 1),
        "{}",
        project.read("run.err")
    );
    signal(host.id(), "INT");
    let code = finish(host, Duration::from_secs(20));
    assert_eq!(code, Some(130), "{}", project.read("run.err"));
    assert_eq!(starts(&project), 1, "no retry after the signal");
    let stopped = events(&project, "run");
    assert!(named(&stopped, "task.retrying").is_empty(), "{stopped:?}");
    project.write("sleep", "0");
    interrupted_then_run_again(&project, &stopped);
}

/// Issue 24: after a clean `run --once`, `ledger.sqlite` was an empty page and every
/// row was in `ledger.sqlite-wal`: a copy of the file the docs name held nothing.
#[test]
fn the_ledger_file_alone_holds_every_row_after_a_clean_run() {
    let project = queue_project(&["a", "b", "c"], "");
    let run = project.curupira(ONCE);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.events_named("task.finished").len(), 3, "{run:?}");
    let state = project.path().join(".curupira");
    assert!(
        !state.join("ledger.sqlite-wal").exists(),
        "the log is checkpointed and removed at a clean end"
    );
    let copy = tempfile::tempdir().unwrap();
    let copied = copy.path().join("ledger.sqlite");
    fs::copy(state.join("ledger.sqlite"), &copied).unwrap();
    let filter = curupira_ledger::Filter {
        automation: None,
        status: None,
    };
    let rows = Ledger::open(&copied).unwrap().list(&filter, 10).unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(
        rows.iter().all(|row| row.status == Status::Succeeded),
        "{rows:?}"
    );
}

/// Issue 24: `validate` said "ok: no problems" on a damaged ledger that `run` then
/// refused (exit 2); it reports it now, naming the file, and writes nothing to it.
#[test]
fn validate_reports_a_damaged_ledger_as_run_refuses_it() {
    let project = queue_project(&["a"], "");
    fs::create_dir_all(project.path().join(".curupira")).unwrap();
    let damaged = "this is not an SQLite database, it was overwritten\n";
    project.write(".curupira/ledger.sqlite", damaged);
    let validate = project.curupira(&["validate"]);
    assert_eq!(validate.code, Some(2), "{validate:?}");
    assert!(
        validate.stdout.contains("error[config/ledger-unreadable]")
            && validate
                .stdout
                .contains(".curupira/ledger.sqlite` is damaged"),
        "{}",
        validate.stdout
    );
    let json = project.curupira(&["validate", "--format", "json"]);
    assert!(
        json.stdout.contains("\"config/ledger-unreadable\""),
        "{json:?}"
    );
    let run = project.curupira(ONCE);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains(".curupira/ledger.sqlite` is damaged"),
        "{run:?}"
    );
    assert_eq!(
        project.read(".curupira/ledger.sqlite"),
        damaged,
        "untouched"
    );

    // A ledger that is fine, and one not made yet, are no problem.
    fs::remove_file(project.path().join(".curupira/ledger.sqlite")).unwrap();
    let fresh = project.curupira(&["validate"]);
    assert_eq!(fresh.code, Some(0), "{fresh:?}");
    assert!(
        !project.path().join(".curupira/ledger.sqlite").exists(),
        "not created"
    );
    assert_eq!(project.curupira(ONCE).code, Some(0));
    let again = project.curupira(&["validate"]);
    assert_eq!(again.code, Some(0), "{again:?}");
}

/// Every attempt has its row in the history, across a retry and a host killed in the
/// middle of an attempt: the retried attempt failed with its exit code, the one the
/// killed host left is interrupted (`unrecorded`), and the restart's is numbered after
/// them; `tasks show` lists the three.
#[test]
fn every_attempt_is_in_the_history_across_a_retry_and_a_killed_host() {
    let project = queue_project(&["a"], "");
    project.write(
        "curupira.toml",
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
         [settings.agent]\ncommand = [\"sh\", \"agent.sh\"]\nkill_grace_seconds = 2\n\
         retries = 1\nretry_backoff_seconds = 1\n\n\
         [extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.q]\ntrigger = \"jsonl\"\nprompt = \"Do ${n}.\"\n\
         arguments = { path = \"tasks.jsonl\", done_path = \"done.jsonl\" }\n",
    );
    // The first attempt fails, the second runs until its host is killed, the third
    // succeeds.
    project.write(
        "agent.sh",
        "n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count\n\
         echo \"start $CURUPIRA_TASK_ID $$\" >> agent.log\n\
         case $n in 1) exit 3;; 2) sleep 60;; *) exit 0;; esac\n",
    );
    let host = spawn(&project, "first", ONCE);
    assert!(
        wait_until(Duration::from_secs(30), || starts(&project) == 2),
        "the retry started"
    );
    let (_, task_id, agent) = agent_log(&project)[1].clone();
    // Killed once the second attempt's row is committed.
    assert!(wait_until(Duration::from_secs(20), || {
        ledger(&project)
            .attempts("q", &task_id)
            .is_ok_and(|attempts| attempts.len() == 2)
    }));
    signal(host.id(), "KILL");
    let _ = finish(host, Duration::from_secs(5));
    assert!(
        wait_until(Duration::from_secs(10), || !alive(agent)),
        "the watchdog stops the agent"
    );

    let again = project.curupira(ONCE);
    assert_eq!(again.code, Some(0), "{again:?}");
    let show = project.curupira(&["tasks", "show", &task_id[..12], "--format", "json"]);
    assert_eq!(show.code, Some(0), "{show:?}");
    let shown: Value = serde_json::from_str(show.stdout.trim()).unwrap();
    assert_eq!(shown["attempts"], 3, "{shown}");
    let history: Vec<(u64, String, String, Option<i64>)> = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|attempt| {
            (
                attempt["attempt"].as_u64().unwrap(),
                attempt["outcome"].as_str().unwrap().to_owned(),
                attempt["reason"].as_str().unwrap().to_owned(),
                attempt["exit_code"].as_i64(),
            )
        })
        .collect();
    assert_eq!(
        history,
        [
            (1, "failed".into(), "exit".into(), Some(3)),
            (2, "interrupted".into(), "unrecorded".into(), None),
            (3, "succeeded".into(), "exit".into(), Some(0)),
        ],
        "{shown}"
    );
    for attempt in shown["history"].as_array().unwrap() {
        assert!(attempt["ended_at"].is_string(), "{attempt}");
        assert!(attempt["duration_seconds"].is_number(), "{attempt}");
        assert_eq!(attempt["workspace"], project.path().display().to_string());
    }
    let human = project.curupira(&["tasks", "show", &task_id[..12]]);
    let lines: Vec<&str> = human.stdout.lines().collect();
    let at = lines.iter().position(|line| *line == "history").unwrap();
    assert!(
        lines[at + 1].trim_start().starts_with("#  OUTCOME"),
        "{}",
        human.stdout
    );
    assert!(lines[at + 2].contains("failed") && lines[at + 2].contains("exit 3"));
    assert!(lines[at + 3].contains("interrupted") && lines[at + 3].contains("unrecorded"));
    assert!(lines[at + 4].contains("succeeded") && lines[at + 4].contains("exit 0"));
}

/// Each attempt's output, its hooks' too, is also in its log (whole lines, each behind
/// its time, source and stream), which the ledger's history names; `tasks log --follow` started while the
/// agent runs prints what it wrote and what comes, and ends when the attempt ends.
#[test]
fn tasks_log_follows_an_attempt_to_its_end() {
    let project = queue_project(&["a"], "");
    project.write(
        "curupira.toml",
        &(project.read("curupira.toml")
            + "\n[settings.workspace.hooks]\nbefore_run = \"echo preparing\"\n"),
    );
    project.write(
        "agent.sh",
        "echo \"start $CURUPIRA_TASK_ID $$\" >> agent.log\n\
         echo first\nsleep 2\necho second >&2\nsleep 1\nprintf third\n",
    );
    let host = spawn(&project, "run", ONCE);
    assert!(wait_until(Duration::from_secs(20), || starts(&project) == 1));
    let (_, task_id, _) = agent_log(&project)[0].clone();
    assert!(wait_until(Duration::from_secs(20), || {
        ledger(&project)
            .attempts("q", &task_id)
            .is_ok_and(|attempts| attempts.first().is_some_and(|a| a.log_path.is_some()))
    }));
    let follower = Command::new(curupira())
        .args(["tasks", "log", &task_id[..12], "--follow"])
        .current_dir(project.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let followed = follower.wait_with_output().unwrap();
    assert_eq!(finish(host, Duration::from_secs(30)), Some(0));
    assert!(followed.status.success(), "{followed:?}");
    let text = String::from_utf8(followed.stdout).unwrap();
    let lines: Vec<(&str, &str)> = text
        .lines()
        .map(|line| {
            let mut words = line.splitn(3, ' ');
            let time = words.next().unwrap();
            assert!(time.ends_with('Z') && time.contains('T'), "{line}");
            (words.next().unwrap(), words.next().unwrap())
        })
        .collect();
    assert_eq!(
        lines,
        [
            ("before_run", "stdout preparing"),
            ("stdout", "first"),
            ("stderr", "second"),
            ("stdout", "third")
        ],
        "{text}"
    );
    let attempts = ledger(&project).attempts("q", &task_id).unwrap();
    let log = attempts[0].log_path.clone().unwrap();
    assert!(
        log.ends_with(&format!("logs/q/{}/1.log", &task_id[..12])),
        "{log}"
    );
    // Read again once it ended: the same.
    let again = project.curupira(&["tasks", "log", &task_id[..12]]);
    assert_eq!(again.stdout, text);
    let missing = project.curupira(&["tasks", "log", &task_id[..12], "--attempt", "2"]);
    assert_eq!(missing.code, Some(2), "{missing:?}");
    assert!(
        missing.stderr.contains("has no attempt 2"),
        "{}",
        missing.stderr
    );
}

/// The task id of a run's only `task.finished`.
fn finished_id(run: &run_support::Run) -> String {
    let finished = run.events_named("task.finished");
    assert_eq!(finished.len(), 1, "{run:?}");
    finished[0]["task_id"].as_str().unwrap().to_owned()
}

/// Issue 37: `tasks retry` on a failed task, then a stop while its retry ran: the
/// next run dispatched nothing (`local-queue` had recorded the item as done when it
/// failed) and the task stayed `interrupted`. A task the ledger holds as not finished
/// is dispatched again by the next run from its stored pairs; its attempts are
/// numbered as the ledger numbers them, in every event, log and the history.
#[test]
fn a_retried_task_stopped_by_a_signal_runs_again_in_the_next_run() {
    let project = queue_project(&["a"], "");
    project.write("agent.sh", &format!("echo \"attempt output\"\n{AGENT}"));
    project.write("agent-exit", "3");
    let first = project.curupira(ONCE);
    assert_eq!(first.code, Some(1), "{first:?}");
    let id = finished_id(&first);
    assert_eq!(
        project.read("done.jsonl").lines().count(),
        1,
        "done, failed"
    );
    let retried = project.curupira(&["tasks", "retry", &id[..12]]);
    assert_eq!(retried.code, Some(0), "{retried:?}");

    project.write("sleep", "30");
    let host = spawn(&project, "run", &["run", "--once", "--format", "json"]);
    assert!(
        wait_until(Duration::from_secs(30), || starts(&project) == 2),
        "{}",
        project.read("run.err")
    );
    // While it runs, `status` shows the ledger's number, and the log it writes.
    let mut running = Value::Null;
    assert!(
        wait_until(Duration::from_secs(20), || {
            let status = project.curupira(&["status", "--format", "json"]);
            running = serde_json::from_str(&status.stdout).unwrap_or(Value::Null);
            running["running"][0]["log_path"].is_string()
        }),
        "{running}"
    );
    assert_eq!(running["running"][0]["attempt"], 2, "{running}");
    let log_path = running["running"][0]["log_path"].as_str().unwrap();
    assert!(log_path.ends_with("/2.log"), "{log_path}");
    signal(host.id(), "INT");
    thread::sleep(Duration::from_millis(300));
    signal(host.id(), "INT");
    let code = finish(host, Duration::from_secs(20));
    assert_eq!(code, Some(130), "{}", project.read("run.err"));
    let stopped = events(&project, "run");
    let started = named(&stopped, "task.started");
    assert_eq!(started.len(), 1, "{stopped:?}");
    assert_eq!(started[0]["attempt"], 2, "the ledger's second attempt");
    // Stopped: `status` lists that attempt as interrupted, under the same number.
    let status = project.curupira(&["status", "--format", "json"]);
    let status: Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(status["last_failures"][0]["attempt"], 2, "{status}");
    assert_eq!(
        status["last_failures"][0]["outcome"], "interrupted",
        "{status}"
    );
    let interrupted = named(&stopped, "task.interrupted");
    assert_eq!(interrupted.len(), 1, "{stopped:?}");
    assert_eq!(status_of(&project, &id), Status::Interrupted);

    // Nothing comes from the queue (its done file has the item): the ledger's row
    // alone brings it back, as the interruption's message promised.
    project.write("sleep", "0");
    project.write("agent-exit", "0");
    let again = project.curupira(ONCE);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(finished_id(&again), id);
    assert_eq!(again.events_named("task.started")[0]["attempt"], 3);
    assert_eq!(status_of(&project, &id), Status::Succeeded);
    assert_eq!(starts(&project), 3);
    assert!(
        again.stderr.contains("run ended after ")
            && again
                .stderr
                .contains(": tasks 1 succeeded, 0 failed, 0 interrupted; 1 attempt(s)"),
        "one summary at the end: {}",
        again.stderr
    );
    let history = ledger(&project).attempts("q", &id).unwrap();
    let numbers: Vec<u32> = history.iter().map(|a| a.attempt).collect();
    assert_eq!(numbers, [1, 2, 3], "{history:?}");
    let outcomes: Vec<Option<Status>> = history.iter().map(|a| a.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Some(Status::Failed),
            Some(Status::Interrupted),
            Some(Status::Succeeded)
        ]
    );
    // The logs are named by the same numbers, one each, none `N-2.log`.
    let logs = project.path().join(".curupira/logs/q").join(&id[..12]);
    let mut names: Vec<String> = fs::read_dir(&logs)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["1.log", "2.log", "3.log"]);
    for (n, attempt) in history.iter().enumerate() {
        let path = attempt.log_path.as_deref().unwrap();
        assert!(path.ends_with(&format!("/{}.log", n + 1)), "{path}");
    }
    let shown = project.curupira(&["tasks", "log", &id[..12], "--attempt", "2"]);
    assert!(shown.stdout.contains("attempt output"), "{shown:?}");
    // `tasks show` and the API (`status --serve`, from the ledger) number them alike.
    let show = project.curupira(&["tasks", "show", &id[..12], "--format", "json"]);
    let show: Value = serde_json::from_str(&show.stdout).unwrap();
    let numbers = |task: &Value| -> Vec<u64> {
        task["history"]
            .as_array()
            .map(|list| list.iter().filter_map(|a| a["attempt"].as_u64()).collect())
            .unwrap_or_default()
    };
    assert_eq!(numbers(&show), [1, 2, 3], "{show}");
    let served = Command::new(curupira())
        .args(["status", "--serve", "127.0.0.1:0"])
        .current_dir(project.path())
        .stdout(std::process::Stdio::null())
        .stderr(fs::File::create(project.path().join("serve.err")).unwrap())
        .spawn()
        .unwrap();
    let served = curupira_test_support::process::Reaper::new(served);
    let mut port = None;
    assert!(
        wait_until(Duration::from_secs(20), || {
            let err = project.read("serve.err");
            port = err.split("http://127.0.0.1:").nth(1).and_then(|rest| {
                rest.split(|c: char| !c.is_ascii_digit())
                    .next()?
                    .parse::<u16>()
                    .ok()
            });
            port.is_some()
        }),
        "{}",
        project.read("serve.err")
    );
    let api = http_get(port.unwrap(), &format!("/api/v1/tasks/{id}"));
    let api: Value = serde_json::from_str(&api).unwrap_or(Value::Null);
    assert_eq!(numbers(&api), [1, 2, 3], "{api}");
    drop(served);
    // A third run finds nothing left.
    let idle = project.curupira(ONCE);
    assert!(idle.events_named("task.started").is_empty(), "{idle:?}");
}

/// The body of `GET path` on a loopback port (HTTP/1.1, one request).
fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    match answer.split_once("\r\n\r\n") {
        Some((_, body)) => body.to_owned(),
        None => answer,
    }
}

/// Issue 37: the same for a retried task whose agent could not start: the message
/// says a later run hands it over again, and the next run does, from the ledger.
#[test]
fn a_retried_task_whose_agent_could_not_start_runs_again_in_the_next_run() {
    let project = queue_project(&["a"], "");
    project.write("agent-exit", "3");
    let first = project.curupira(ONCE);
    let id = finished_id(&first);
    assert_eq!(
        project.curupira(&["tasks", "retry", &id]).code,
        Some(0),
        "retry"
    );
    // A program that is there but cannot be executed: its interpreter is missing.
    project.write("broken", "#!/nonexistent/interpreter\n");
    let status = Command::new("chmod")
        .args(["+x", "broken"])
        .current_dir(project.path())
        .status()
        .unwrap();
    assert!(status.success());
    let toml = project.read("curupira.toml");
    project.write(
        "curupira.toml",
        &toml.replace(
            "command = [\"sh\", \"agent.sh\"]",
            "command = [\"./broken\"]",
        ),
    );
    let failed = project.curupira(&["run", "--once"]);
    assert!(
        failed
            .stdout
            .contains("not finished: a later run hands it over again"),
        "{failed:?}"
    );
    assert_eq!(status_of(&project, &id), Status::Interrupted);

    project.write("curupira.toml", &toml);
    project.write("agent-exit", "0");
    let again = project.curupira(ONCE);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(finished_id(&again), id);
    assert_eq!(again.events_named("task.started")[0]["attempt"], 3);
    assert_eq!(status_of(&project, &id), Status::Succeeded);
    assert_eq!(
        starts(&project),
        2,
        "the agent ran twice, the broken one never"
    );
}

/// Issue 37: with `prompt = "Fix ${titel} in ${repo} for ${automaton}"`, `run` said
/// nothing and the agent received `Fix ${titel} …` literally. Now the run says so,
/// once per automation and key, with a did-you-mean against the item's keys; with
/// `unfilled = "fail"` every such task is refused before its agent starts, and is not
/// finished: once the prompt is mended, the next run runs them all.
#[test]
fn an_unfilled_placeholder_is_said_once_and_fail_refuses_the_task_before_its_agent() {
    let project = queue_project(&[], "");
    project.write(
        "tasks.jsonl",
        "{\"title\": \"Crash\", \"repo\": \"acme/a\"}\n{\"title\": \"Hang\", \"repo\": \"acme/b\"}\n",
    );
    project.write(
        "agent.sh",
        &format!("cat >> prompts.txt\necho >> prompts.txt\n{AGENT}"),
    );
    let toml = project.read("curupira.toml");
    let typo = toml.replace(
        "prompt = \"Do ${n}.\"",
        "prompt = \"Fix ${titel} in ${repo} for ${automaton} (${titel})\"",
    );
    project.write("curupira.toml", &typo);
    let warned = project.curupira(ONCE);
    assert_eq!(warned.code, Some(0), "{warned:?}");
    let unfilled = warned.events_named("task.unfilled");
    assert_eq!(unfilled.len(), 1, "once per key, not per task: {warned:?}");
    assert_eq!(
        unfilled[0]["placeholders"],
        serde_json::json!([
            {"key": "titel", "did_you_mean": "title"},
            {"key": "automaton", "did_you_mean": "automation"}
        ])
    );
    assert_eq!(unfilled[0]["refused"], false);
    assert_eq!(warned.events_named("task.finished").len(), 2);
    assert_eq!(
        project.read("prompts.txt"),
        "Fix ${titel} in acme/a for ${automaton} (${titel})\n\
         Fix ${titel} in acme/b for ${automaton} (${titel})\n",
        "warn: the agent gets it as written"
    );
    let human = project.curupira(&["render", "--template", "curupira.toml"]);
    assert!(
        human.stderr.contains("`${titel}`") && human.stderr.contains("`${automaton}`"),
        "render warns too: {human:?}"
    );

    // `fail`: refused before onStarted and the agent; not in the ledger, not done.
    let _ = fs::remove_file(project.path().join("done.jsonl"));
    fs::remove_dir_all(project.path().join(".curupira")).unwrap();
    fs::remove_file(project.path().join("prompts.txt")).unwrap();
    project.write(
        "curupira.toml",
        &typo.replace("arguments = {", "unfilled = \"fail\"\narguments = {"),
    );
    let refused = project.curupira(ONCE);
    assert_eq!(
        refused.code,
        Some(1),
        "a refused task is a failure: {refused:?}"
    );
    assert!(
        refused
            .stderr
            .contains("tasks 0 succeeded, 0 failed, 0 interrupted, 2 refused; 0 attempt(s)"),
        "{}",
        refused.stderr
    );
    let unfilled = refused.events_named("task.unfilled");
    assert_eq!(unfilled.len(), 2, "every refused task is said: {refused:?}");
    assert!(
        unfilled.iter().all(|e| e["refused"] == true),
        "{unfilled:?}"
    );
    assert!(
        refused.events_named("task.started").is_empty(),
        "{refused:?}"
    );
    assert!(!project.exists("prompts.txt"), "no agent ran");
    assert_eq!(project.read("done.jsonl"), "", "not finished");
    let human = project.curupira(&["run", "--once"]);
    assert!(
        human
            .stdout
            .contains("REFUSED: its prompt leaves ${titel} (did you mean ${title}?)"),
        "{human:?}"
    );

    // Mended: the next run runs both, the prompt whole.
    project.write(
        "curupira.toml",
        &toml.replace(
            "prompt = \"Do ${n}.\"",
            "prompt = \"Fix ${title} in ${repo} for ${automation}\"\nunfilled = \"fail\"",
        ),
    );
    let mended = project.curupira(ONCE);
    assert_eq!(mended.code, Some(0), "{mended:?}");
    assert_eq!(mended.events_named("task.finished").len(), 2, "{mended:?}");
    assert!(mended.events_named("task.unfilled").is_empty());
    assert_eq!(
        project.read("prompts.txt"),
        "Fix Crash in acme/a for q\nFix Hang in acme/b for q\n"
    );
}

/// Issue 37: `validate` says what `local-queue` can tell before the first poll, as
/// warnings (a producer may still write the file; a bad line is no reason to refuse
/// the automation); a missing queue file is a sentence, not an internal error; a last
/// line without its newline is said, not silently left out of a `--once` run.
#[test]
fn the_queue_files_problems_are_warnings_where_the_operator_looks() {
    let project = queue_project(&[], "");
    fs::remove_file(project.path().join("tasks.jsonl")).unwrap();
    let validated = project.curupira(&["validate"]);
    assert_eq!(validated.code, Some(0), "{validated:?}");
    assert!(
        validated
            .stderr
            .contains("the queue file `tasks.jsonl` does not exist yet"),
        "{validated:?}"
    );
    let run = project.curupira(ONCE);
    assert_eq!(run.code, Some(0), "nothing to do is no failure: {run:?}");
    assert!(
        run.stderr
            .contains("the queue file `tasks.jsonl` does not exist (yet)")
            && !run.stderr.contains("-32603"),
        "{run:?}"
    );

    project.write(
        "tasks.jsonl",
        "{\"n\": \"a\"}\n{\"n\": 5}\nnot json\n{\"n\": \"b\"}",
    );
    let validated = project.curupira(&["validate"]);
    assert_eq!(validated.code, Some(0), "{validated:?}");
    for expected in [
        "line 2 of `tasks.jsonl` is not a valid item",
        "line 3 of `tasks.jsonl` is not a valid item",
        "line 4 of `tasks.jsonl` has no newline yet",
    ] {
        assert!(
            validated.stderr.contains(expected),
            "{expected}: {validated:?}"
        );
    }
    let run = project.curupira(ONCE);
    assert_eq!(run.events_named("task.finished").len(), 1, "{run:?}");
    assert!(
        run.stderr
            .contains("line 4 of `tasks.jsonl` (10 bytes) has no newline yet"),
        "{run:?}"
    );
}
