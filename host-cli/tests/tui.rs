//! `curupira tui` end to end, under a real pseudo-terminal: a private tmux server
//! (`tmux -S`, its socket in the test's folder, no config file) runs the dashboard in
//! a 100 × 30 window, the test types with `send-keys` and reads the screen with
//! `capture-pane`, against a running host — the dashboard's own (`tui`) or one beside
//! it (`tui --attach` next to `run --watch`). The host runs two tasks at once: `a`,
//! whose agent prints a line every 50 ms until the file `release` exists, and `b`,
//! whose agent fails at once.
//!
//! Every wait is bounded and polls the screen; the tmux server is killed and every
//! host reaped when a test ends, failed or not. Without tmux a test prints that it
//! skipped and passes, except under CI (`CI` set), where it fails (`.ci/run` installs
//! Debian's `tmux` where it is missing).

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use curupira_test_support::process::{alive, wait_until};
use run_support::{Project, curupira};
use serde_json::Value;

/// The longest any one thing is waited for.
const WAIT: Duration = Duration::from_secs(15);

/// Whether `tmux` runs; under CI its absence fails the test.
fn have_tmux() -> bool {
    curupira_test_support::fakes::tool_or_skip_asking("tmux", "-V", "the tui tests")
}

/// The project: a queue of `a` (runs until `release` exists, printing `tick N`) and
/// `b` (fails with status 4), two agents at once, a round every 0.3 s.
fn project() -> Project {
    let project = Project::new();
    let release = project.path().join("release");
    project.write(
        "agent.sh",
        &format!(
            "read -r prompt\necho \"working on $prompt\"\n\
             case \"$prompt\" in *b.*) echo 'b went wrong' >&2; exit 4;; esac\n\
             n=0\nwhile [ ! -e '{}' ]; do n=$((n+1)); echo \"tick $n\"; sleep 0.05; done\n",
            release.display()
        ),
    );
    project.write(
        "curupira.toml",
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
         [settings.agent]\ncommand = [\"sh\", \"agent.sh\"]\nmax_concurrent = 2\n\n\
         [settings.polling]\ninterval_seconds = 0.3\n\n\
         [extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.q]\ntrigger = \"jsonl\"\nprompt = \"Do ${n}.\"\n\
         arguments = { path = \"tasks.jsonl\", done_path = \"done.jsonl\" }\n",
    );
    project.write("tasks.jsonl", "{\"n\": \"a\"}\n{\"n\": \"b\"}\n");
    project
}

/// A private tmux server running one command in a 100 × 30 window; killed on drop,
/// and then, when the dashboard runs its own host, that host (the pid in the project's
/// `status.json`) is waited for and killed if it outlived its dashboard.
struct Tmux<'p> {
    socket: String,
    project: &'p Project,
    owns_host: bool,
}

impl<'p> Tmux<'p> {
    /// Runs `curupira ARGS…` in the project's folder; its exit code goes to `tui.exit`.
    fn start(project: &'p Project, args: &str, owns_host: bool) -> Tmux<'p> {
        // The server's socket in the project's folder: gone with it.
        let socket = project.path().join("tmux.sock").display().to_string();
        let command = format!(
            "cd '{}' && env -u RUST_LOG '{}' {args}; echo $? > tui.exit.new && mv tui.exit.new tui.exit",
            project.path().display(),
            curupira()
        );
        let tmux = Tmux {
            socket,
            project,
            owns_host,
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "30",
            "-s",
            "t",
            &command,
        ]);
        tmux
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-S", &self.socket, "-f", "/dev/null"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// The screen as text (empty once the pane is gone).
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Waits until the screen satisfies `condition`, and returns it; fails with the
    /// screen and the host's output when it does not within [`WAIT`].
    fn wait_for(&self, what: &str, condition: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let screen = self.screen();
            if condition(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                let size = self.run(&[
                    "display-message",
                    "-p",
                    "-t",
                    "t",
                    "#{window_width}x#{window_height}",
                ]);
                panic!(
                    "no {what} on the screen ({}) within {WAIT:?}:\n{screen}\n--- host output:\n{}",
                    String::from_utf8_lossy(&size.stdout).trim(),
                    std::fs::read_to_string(self.project.path().join(".curupira/tui-host.log"))
                        .unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The dashboard's exit code, once it exited.
    fn exit_code(&self) -> i32 {
        assert!(
            wait_until(WAIT, || self.project.exists("tui.exit")),
            "the dashboard did not exit:\n{}",
            self.screen()
        );
        self.project.read("tui.exit").trim().parse().unwrap()
    }
}

impl Drop for Tmux<'_> {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
        // The dashboard stops its own host on the hang-up; whatever is left is killed.
        if let Some(pid) = host_pid(self.project).filter(|_| self.owns_host)
            && !wait_until(Duration::from_secs(10), || !alive(pid))
        {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

/// The pid of the host that published the project's `status.json`.
fn host_pid(project: &Project) -> Option<u32> {
    let text = std::fs::read_to_string(project.path().join(".curupira/status.json")).ok()?;
    let doc: Value = serde_json::from_str(&text).ok()?;
    doc["host"]["pid"]
        .as_u64()
        .and_then(|pid| u32::try_from(pid).ok())
}

/// A `run --watch` host the test started, stopped (SIGINT, then SIGKILL) and reaped
/// when dropped.
struct Host(Option<Child>);

impl Host {
    /// Stops it with SIGINT and returns its exit code.
    fn stop(mut self) -> Option<i32> {
        let mut child = self.0.take()?;
        signal(child.id(), "INT");
        let code = wait_until(WAIT, || child.try_wait().unwrap().is_some())
            .then(|| child.wait().unwrap().code())
            .flatten();
        let _ = child.kill();
        let _ = child.wait();
        code
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            signal(child.id(), "INT");
            if !wait_until(Duration::from_secs(5), || {
                child.try_wait().unwrap().is_some()
            }) {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status();
}

/// The line of the screen that holds `text`.
fn line_with<'s>(screen: &'s str, text: &str) -> Option<&'s str> {
    screen.lines().find(|line| line.contains(text))
}

/// The ledger's row of task `n`, as `tasks list --format json` has it.
fn task(project: &Project, n: &str) -> Option<Value> {
    let run = project.curupira(&["tasks", "list", "--format", "json"]);
    run.stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|row| row["values"][0]["value"] == n)
}

/// What both ways of running the dashboard must do, on a host that runs `a` and has
/// failed `b`: the running task listed, Enter showing its live log, `r` retrying the
/// failed task, a resize redrawn. Leaves the dashboard on its tables, `a` ended.
fn walk_through(tmux: &Tmux<'_>, project: &Project) {
    // The running task is listed, with its attempt and its item; `b` failed.
    let screen = tmux.wait_for("running task `a` beside failed `b`", |screen| {
        screen.contains("Running (1)")
            && line_with(screen, "n=a").is_some_and(|line| line.contains(" q "))
            && line_with(screen, "n=b").is_some_and(|line| line.contains("failed"))
    });
    assert!(screen.contains("host running (pid"), "{screen}");

    // Enter on it (the first row) shows its log, following it live.
    tmux.keys(&["Home"]);
    tmux.wait_for("the cursor on `a`", |screen| {
        line_with(screen, "n=a").is_some_and(|line| line.starts_with("│> "))
    });
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the log of `a`", |screen| {
        screen.contains("Log · q ") && screen.contains(" stdout tick ")
    });
    assert!(screen.contains("attempt 1 · following"), "{screen}");
    let last_tick = |screen: &str| -> u32 {
        screen
            .lines()
            .filter_map(|line| line.split("stdout tick ").nth(1))
            .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
            .max()
            .unwrap_or(0)
    };
    let seen = last_tick(&tmux.wait_for("a tick", |screen| last_tick(screen) > 0));
    tmux.wait_for("later ticks, as they are written", |screen| {
        last_tick(screen) >= seen + 5
    });

    // Esc goes back; `r` on the failed task asks for it again.
    tmux.keys(&["Escape"]);
    tmux.wait_for("the tables again", |screen| {
        screen.contains("Recent outcomes")
    });
    tmux.keys(&["End"]);
    tmux.wait_for("the cursor on `b`", |screen| {
        line_with(screen, "n=b").is_some_and(|line| line.starts_with("│> "))
    });
    tmux.keys(&["r"]);
    tmux.wait_for("the retry asked", |screen| {
        screen.contains("retry asked; the host's next round runs it again")
            && line_with(screen, "n=b").is_some_and(|line| line.contains("failed, retry asked"))
    });
    assert_eq!(task(project, "b").unwrap()["retry_requested"], true);
    // Once `a` ends its round ends, and the next round runs `b` again (it fails again).
    project.write("release", "");
    assert!(
        wait_until(WAIT, || task(project, "b")
            .is_some_and(|b| b["attempts"] == 2 && b["status"] == "failed")),
        "{:?}",
        task(project, "b")
    );
    tmux.wait_for(
        "`b` after its second attempt, and `a` succeeded",
        |screen| {
            screen.contains("Running (0)")
                && line_with(screen, "n=b")
                    .is_some_and(|line| line.contains("failed") && !line.contains("retry asked"))
                && line_with(screen, "n=a").is_some_and(|line| line.contains("succeeded"))
        },
    );

    // A resize is drawn anew at the new size.
    tmux.run(&["resize-window", "-t", "t", "-x", "72", "-y", "22"]);
    tmux.wait_for("the tables 72 columns wide", |screen| {
        line_with(screen, "Running (0)").is_some_and(|line| {
            line.starts_with('┌') && line.ends_with('┐') && line.chars().count() == 72
        }) && screen.contains("q/Esc quit")
    });
}

#[test]
fn tui_runs_its_host_under_the_dashboard_and_q_stops_it() {
    if !have_tmux() {
        return;
    }
    let project = project();
    let tmux = Tmux::start(&project, "tui", true);
    walk_through(&tmux, &project);
    let host = host_pid(&project).unwrap();
    assert!(tmux.screen().contains("curupira tui (dispatching)"));
    // `q` stops the host (nothing runs: it exits at once) and the dashboard with it,
    // with the code `run --watch` has on SIGINT.
    tmux.keys(&["q"]);
    assert_eq!(tmux.exit_code(), 130);
    assert!(!alive(host), "the host was reaped");
    let status = project.curupira(&["status", "--format", "json"]);
    let status: Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(status["host"]["state"], "stopped", "{status:#}");
    // Its output went to the state folder, not over the screen.
    let output = project.read(".curupira/tui-host.log");
    assert!(output.contains("received SIGINT"), "{output}");
}

#[test]
fn tui_attach_follows_a_running_host_through_its_stop_and_q_leaves_it_running() {
    if !have_tmux() {
        return;
    }
    let project = project();
    let host = Host(Some(run_support::spawn(
        &project,
        "run",
        &["run", "--watch"],
    )));
    let pid = host.0.as_ref().unwrap().id();
    assert!(
        wait_until(WAIT, || host_pid(&project) == Some(pid)),
        "{}",
        project.read("run.err")
    );
    let tmux = Tmux::start(&project, "tui --attach", false);
    walk_through(&tmux, &project);
    assert!(tmux.screen().contains("curupira tui (attached)"));

    // A host that stops under it is said; one started again shows up.
    assert_eq!(host.stop(), Some(130), "{}", project.read("run.err"));
    tmux.wait_for("the host stopped", |screen| {
        screen.contains("host stopped (pid")
    });
    let host = Host(Some(run_support::spawn(
        &project,
        "run2",
        &["run", "--watch"],
    )));
    let pid = host.0.as_ref().unwrap().id();
    tmux.wait_for("the new host", |screen| {
        screen.contains(&format!("host running (pid {pid}"))
    });

    // `q` quits and leaves the host running.
    tmux.keys(&["q"]);
    assert_eq!(tmux.exit_code(), 0);
    assert!(alive(pid), "the host still runs");
    assert_eq!(host.stop(), Some(130), "{}", project.read("run2.err"));
}

#[test]
fn without_a_terminal_tui_runs_as_run_watch_does() {
    let project = project();
    project.write("release", "");
    let child = Command::new(curupira())
        .args(["tui"])
        .current_dir(project.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(project.path().join("tui.out")).unwrap())
        .stderr(std::fs::File::create(project.path().join("tui.err")).unwrap())
        .spawn()
        .unwrap();
    let host = Host(Some(child));
    assert!(
        wait_until(WAIT, || project.read("tui.out").contains("round finished")),
        "{}",
        project.read("tui.err")
    );
    let stderr = project.read("tui.err");
    assert!(
        stderr.starts_with(
            "TUI: no terminal attached; running dispatch in status mode (Ctrl+C to stop)\n"
        ),
        "{stderr}"
    );
    assert_eq!(host.stop(), Some(130), "as `run --watch` on SIGINT");
    let out = project.read("tui.out");
    assert!(out.contains("q: started task"), "{out}");

    // `--attach` has nothing to draw on.
    let run = project.curupira(&["tui", "--attach"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("needs a terminal"), "{run:?}");
}
