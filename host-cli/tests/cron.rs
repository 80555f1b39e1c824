//! The built-in `cron` trigger run for real: a reference-form `settings.toml` with
//! `trigger_type = "cron"`, a Git remote, and a stand-in `claude` that logs each call.
//! What the reference host does with the same files is replayed in
//! `reference_replay.rs` (the `cron` group); here, what a replay cannot show: a tick
//! after a `kill -9` of the host runs once more and then never, the window without
//! `start_date` opens when a run first sees the automation (a real minute passes), and
//! `status` shows the next tick of a running host.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use run_support::Project;
use serde_json::Value;

/// 2026-12-02T09:00:00Z, the latest 09:00 of the window 2026-12-01 to 2026-12-03.
const TICK: &str = "1796202000";

/// A project with a bare remote, a `bin/claude` stand-in that appends
/// `start <automation> <pid>` / `end <pid>` to `agent.log` (and sleeps while the file
/// `hold` exists), and a home folder.
struct Cron {
    project: Project,
    home: PathBuf,
    path: String,
    polling: String,
}

impl Cron {
    fn new(automations: &str) -> Cron {
        Cron::with_polling(automations, "")
    }

    /// `polling`: more lines of `[settings.polling]`.
    fn with_polling(automations: &str, polling: &str) -> Cron {
        let project = Project::repository();
        project.write("README", "r\n");
        project.git(&["add", "README"]);
        project.git(&["commit", "-q", "-m", "init"]);
        let remote = project.path().join("remote.git");
        project.git(&["clone", "-q", "--bare", ".", remote.to_str().unwrap()]);
        let bin = project.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let log = project.path().join("agent.log");
        let hold = project.path().join("hold");
        let claude = format!(
            "#!/bin/sh\ncat > /dev/null\necho \"start $CURUPIRA_AUTOMATION $$\" >> {log:?}\n\
             trap 'echo \"end $$\" >> {log:?}; exit 143' TERM\n\
             while [ -e {hold:?} ]; do sleep 0.1; done\n\
             echo '{{\"type\":\"result\",\"subtype\":\"success\",\"session_id\":\"s\"}}'\n\
             echo \"end $$\" >> {log:?}\n"
        );
        std::fs::write(bin.join("claude"), claude).unwrap();
        std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let home = project.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let cron = Cron {
            project,
            home,
            path,
            polling: polling.to_owned(),
        };
        cron.configure(automations);
        cron
    }

    fn configure(&self, automations: &str) {
        let remote = self.project.path().join("remote.git");
        self.project.write(
            "settings.toml",
            &format!(
                "[settings]\nworkspace_dir = {:?}\n\n[settings.polling]\npoll_interval_seconds = 1\n{}\n\
                 [repositories.demo]\nremote = {:?}\n\n[agents.defaults]\nprofile = \"stub\"\n\n\
                 [agents.profiles.stub]\nprovider = \"claude\"\n\n{automations}",
                self.project.path().join("ws"),
                self.polling,
                remote.to_str().unwrap()
            ),
        );
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(run_support::curupira());
        command
            .args(args)
            .arg("--config")
            .arg("settings.toml")
            .current_dir(self.project.path())
            .env("HOME", &self.home)
            .env("PATH", &self.path)
            .env_remove("RUST_LOG");
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn agent_log(&self) -> Vec<String> {
        std::fs::read_to_string(self.project.path().join("agent.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn state(&self) -> PathBuf {
        self.home.join(".curupira/curupira-rs/cron.json")
    }
}

fn cron_automation(name: &str, extra: &str) -> String {
    format!(
        "[automations.{name}]\ntrigger_type = \"cron\"\nrepository = \"demo\"\nprompt = \"Tick\"\n{extra}\n"
    )
}

const WINDOW: &str =
    "schedule = \"0 9 * * *\"\nstart_date = \"2026-12-01\"\nend_date = \"2026-12-03\"";

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Kills the child (and waits for it) when a test fails half-way.
struct Reap(Option<Child>);

impl Drop for Reap {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn a_tick_runs_once_a_dry_run_reserves_nothing_and_a_kill_9_leaves_it_to_the_next_run() {
    let cron = Cron::new(&cron_automation("c1", WINDOW));

    let dry = cron.run(&["run", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{dry:?}");
    let key = |automation: &str| {
        let remote = cron.project.path().join("remote.git");
        let repository = remote
            .to_str()
            .unwrap()
            .trim_end_matches(".git")
            .rsplitn(3, '/')
            .take(2)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("/");
        format!("{automation}:{repository}:cron:{TICK}")
    };
    assert_eq!(
        stdout(&dry),
        format!(
            "dry-run\t{}\n--- prompt ---\nTick\n--- end prompt ---\n",
            key("c1")
        )
    );
    assert!(!cron.state().exists(), "a dry run records nothing");

    let first = cron.run(&["run"]);
    assert_eq!(stdout(&first), format!("ok\t{}\n", key("c1")), "{first:?}");
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(cron.state()).unwrap()).unwrap();
    assert_eq!(state["automations"]["c1"]["last_started"], 1_796_202_000);
    let again = cron.run(&["run"]);
    assert_eq!(
        (again.status.code(), stdout(&again)),
        (Some(0), String::new())
    );
    assert_eq!(cron.agent_log().len(), 2, "one start, one end");

    // The host is killed while its agent runs: the tick is left to the next run, once.
    cron.configure(&format!(
        "{}\n{}",
        cron_automation("c1", WINDOW),
        cron_automation("c2", WINDOW)
    ));
    cron.project.write("hold", "");
    let mut host = Reap(Some(cron.spawn(&["run"])));
    wait_until("the agent of c2", Duration::from_secs(30), || {
        cron.agent_log()
            .iter()
            .any(|line| line.starts_with("start c2"))
    });
    let child = host.0.as_mut().unwrap();
    Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    host.0 = None;
    // The host's watchdog stops the agent it left.
    let orphan = cron
        .agent_log()
        .iter()
        .find(|line| line.starts_with("start c2"))
        .and_then(|line| line.rsplit(' ').next().map(str::to_owned))
        .unwrap();
    wait_until("the orphan agent to end", Duration::from_secs(30), || {
        !Path::new(&format!("/proc/{orphan}")).exists()
            || std::fs::read_to_string(format!("/proc/{orphan}/stat"))
                .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|s| s.starts_with(" Z")))
    });
    std::fs::remove_file(cron.project.path().join("hold")).unwrap();
    let after = cron.run(&["run"]);
    assert_eq!(stdout(&after), format!("ok\t{}\n", key("c2")), "{after:?}");
    let last = cron.run(&["run"]);
    assert_eq!(
        (last.status.code(), stdout(&last)),
        (Some(0), String::new())
    );
    let starts: Vec<String> = cron
        .agent_log()
        .into_iter()
        .filter(|line| line.starts_with("start"))
        .map(|line| line.split(' ').nth(1).unwrap().to_owned())
        .collect();
    assert_eq!(starts, ["c1", "c2", "c2"]);
    // Never two agents at once: each one ended before the next started (the orphan's
    // end is its death, waited for above; it may have had no time to say so).
    let log: Vec<String> = cron
        .agent_log()
        .into_iter()
        .filter(|line| *line != format!("end {orphan}"))
        .map(|line| {
            let words: Vec<&str> = line.split(' ').collect();
            match words.as_slice() {
                ["start", automation, _] => format!("start {automation}"),
                [word, _] => (*word).to_owned(),
                _ => line.clone(),
            }
        })
        .collect();
    assert_eq!(log, ["start c1", "end", "start c2", "start c2", "end"]);
}

#[test]
fn without_start_date_the_window_opens_when_a_run_first_sees_the_automation() {
    let cron = Cron::new(&cron_automation("c1", "schedule = \"* * * * *\""));
    let seconds = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    // Not in the last seconds of a minute, so the first run sees it in this one.
    while seconds() % 60 > 50 {
        std::thread::sleep(Duration::from_millis(200));
    }
    let validate = cron.run(&["validate"]);
    assert_eq!(validate.status.code(), Some(0), "{validate:?}");
    assert!(!cron.state().exists(), "validate records nothing");
    let first = cron.run(&["run"]);
    assert_eq!(
        (first.status.code(), stdout(&first)),
        (Some(0), String::new())
    );
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(cron.state()).unwrap()).unwrap();
    assert!(
        state["automations"]["c1"]["first_seen"].is_string(),
        "{state}"
    );

    let next_minute = (seconds() / 60 + 1) * 60;
    while seconds() < next_minute {
        std::thread::sleep(Duration::from_millis(200));
    }
    let due = cron.run(&["run"]);
    let ran = stdout(&due);
    let tick: u64 = ran
        .trim_end()
        .rsplit(':')
        .next()
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("one ok line: {due:?}"));
    assert!(
        ran.starts_with("ok\tc1:") && ran.lines().count() == 1,
        "{ran}"
    );
    assert_eq!(tick % 60, 0);
    assert!(
        tick >= next_minute && tick <= seconds(),
        "{tick} {next_minute}"
    );
    let again = cron.run(&["run"]);
    if seconds() / 60 == tick / 60 {
        assert_eq!(stdout(&again), "", "the same minute runs once");
    }
}

#[test]
fn status_shows_a_running_host_s_next_tick() {
    let cron = Cron::with_polling(
        &cron_automation(
            "c1",
            "schedule = \"*/5 * * * *\"\ntimezone = \"Asia/Tokyo\"",
        ),
        "cron_poll_interval_seconds = 1\n",
    );
    let mut host = Reap(Some(cron.spawn(&["run", "--watch"])));
    let status_file = cron.home.join(".curupira/curupira-rs/status.json");
    let mut next_tick = String::new();
    wait_until(
        "the next tick in status.json",
        Duration::from_secs(30),
        || {
            let Ok(text) = std::fs::read_to_string(&status_file) else {
                return false;
            };
            let Ok(status) = serde_json::from_str::<Value>(&text) else {
                return false;
            };
            match status["automations"][0]["next_tick"].as_str() {
                Some(tick) => {
                    next_tick = tick.to_owned();
                    true
                }
                None => false,
            }
        },
    );
    // On a five-minute boundary, at most five minutes away.
    let at = curupira_orchestrator::status::parse_timestamp(&next_tick).unwrap();
    let seconds = at.duration_since(UNIX_EPOCH).unwrap().as_secs();
    assert_eq!(seconds % 300, 0, "{next_tick}");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        seconds > now.saturating_sub(2) && seconds <= now + 300,
        "{next_tick}"
    );

    let status = cron.run(&["status"]);
    let shown = stdout(&status);
    let clock = &next_tick[11..19];
    assert!(
        shown.contains("(next tick ") && shown.contains(clock),
        "{shown}"
    );

    let child = host.0.as_mut().unwrap();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let ended = host.0.take().unwrap().wait_with_output().unwrap();
    assert_eq!(ended.status.code(), Some(130), "{ended:?}");
}
