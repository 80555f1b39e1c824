//! Attempts with real processes (`sh` scripts): limits, signals, starts that fail.
//! Durations have tight lower bounds (a limit is never cut short) and generous upper
//! bounds (a loaded machine is slow).

use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::*;

/// More than any attempt here may take, however loaded the machine.
const SLOW: Duration = Duration::from_secs(10);

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn sh(script: &str) -> Vec<String> {
    vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()]
}

fn limits(timeout: Option<Duration>, stall: Option<Duration>, kill_grace: Duration) -> AgentLimits {
    AgentLimits {
        timeout,
        stall,
        kill_grace,
    }
}

/// Runs `command` in `dir` (also the config's folder).
fn attempt_in(dir: &Path, command: &[String], limits: AgentLimits, stop: &Stop) -> AttemptOutcome {
    let run = AgentRun {
        command,
        config_dir: dir,
        cwd: dir,
        prompt: "fix the bug\n",
        automation: "nightly",
        task_id: "0123456789abcdef",
        repository: "example.com/acme/app",
        branch: None,
        env: &[],
        stream: None,
    };
    run_attempt(&run, &limits, stop)
}

/// Reads a pid a script wrote, waiting for it.
fn read_pid(file: &Path) -> u32 {
    let deadline = Instant::now() + SLOW;
    loop {
        if let Some(pid) = fs::read_to_string(file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {}", file.display());
        thread::sleep(ms(5));
    }
}

/// The live (not zombie) processes of process group `pgid`, from `/proc`.
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some((_, after_name)) = stat.rsplit_once(") ") else {
                return false;
            };
            // state, ppid, pgrp, …
            let fields: Vec<&str> = after_name.split(' ').collect();
            fields.first() != Some(&"Z") && fields.get(2) == Some(&pgid.to_string().as_str())
        })
        .collect()
}

/// Whether a process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// Waits until nothing is left alive in process group `pgid` (SIGKILL is delivered
/// asynchronously; orphans are reaped by whoever adopts them).
fn assert_group_gone(pgid: u32) {
    let deadline = Instant::now() + SLOW;
    loop {
        let members = group_members(pgid);
        if members.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "process group {pgid} still has {members:?}"
        );
        thread::sleep(ms(10));
    }
}

#[test]
fn an_exit_status_is_the_outcome_with_the_prompt_environment_and_directory() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    fs::create_dir(&work).unwrap();
    let command = sh("cat > prompt.txt; pwd -P > cwd.txt; env | grep -E \
         '^CURUPIRA_(AUTOMATION|BRANCH|REPOSITORY|TASK_ID|WORKSPACE)=' | sort > \
         env.txt; exit 3");
    let run = AgentRun {
        command: &command,
        config_dir: dir.path(),
        cwd: &work,
        prompt: "fix the bug\n",
        automation: "nightly",
        task_id: "0123456789abcdef",
        repository: "example.com/acme/app",
        branch: Some("curupira/nightly/0123456789ab"),
        env: &[],
        stream: None,
    };
    let outcome = run_attempt(&run, &AgentLimits::default(), &Stop::new());
    assert_eq!(outcome.reason, EndReason::Exit { code: 3 });
    assert_eq!(outcome.reason.as_str(), "exit");
    assert!(!outcome.succeeded());
    assert!(outcome.finishes_task());
    assert_eq!((outcome.exit_code(), outcome.error()), (Some(3), None));
    assert!(outcome.duration < SLOW);

    assert_eq!(
        fs::read_to_string(work.join("prompt.txt")).unwrap(),
        "fix the bug\n"
    );
    assert_eq!(
        fs::read_to_string(work.join("cwd.txt")).unwrap().trim_end(),
        work.canonicalize().unwrap().to_str().unwrap()
    );
    assert_eq!(
        fs::read_to_string(work.join("env.txt")).unwrap(),
        format!(
            "CURUPIRA_AUTOMATION=nightly\n\
             CURUPIRA_BRANCH=curupira/nightly/0123456789ab\n\
             CURUPIRA_REPOSITORY=example.com/acme/app\n\
             CURUPIRA_TASK_ID=0123456789abcdef\n\
             CURUPIRA_WORKSPACE={}\n",
            work.display()
        )
    );

    let outcome = attempt_in(
        dir.path(),
        &sh("exit 0"),
        AgentLimits::default(),
        &Stop::new(),
    );
    assert!(outcome.succeeded(), "{outcome:?}");
}

#[test]
fn a_prompt_larger_than_the_pipe_reaches_an_agent_that_reads_it_late() {
    let dir = tempfile::tempdir().unwrap();
    // 1 MiB: many times a pipe's buffer, so it is written over many waits.
    let prompt: String = (0..16_384).map(|n| format!("{n:063}\n")).collect();
    let command = sh("sleep 0.2; cat > prompt.txt");
    let run = AgentRun {
        command: &command,
        config_dir: dir.path(),
        cwd: dir.path(),
        prompt: &prompt,
        automation: "nightly",
        task_id: "0123456789abcdef",
        repository: "",
        branch: None,
        env: &[],
        stream: None,
    };
    let outcome = run_attempt(&run, &limits(Some(SLOW), None, ms(100)), &Stop::new());
    assert_eq!(outcome.reason, EndReason::Exit { code: 0 });
    let received = fs::read_to_string(dir.path().join("prompt.txt")).unwrap();
    assert_eq!(received.len(), prompt.len());
    assert!(received == prompt, "the prompt arrived changed");
}

#[test]
fn output_held_open_outside_the_group_does_not_hold_the_attempt() {
    let dir = tempfile::tempdir().unwrap();
    // `setsid` takes the holder out of the agent's process group, so killing the group
    // does not close the output pipe it inherited.
    let command = sh("setsid sh -c 'echo $$ > holder; sleep 5; echo late' & \
         while [ ! -s holder ]; do sleep 0.01; done; echo early");
    let outcome = attempt_in(dir.path(), &command, AgentLimits::default(), &Stop::new());
    let holder = read_pid(&dir.path().join("holder"));
    assert_eq!(outcome.reason, EndReason::Exit { code: 0 });
    // Read for the drain limit (2 s), then handed to a thread: not the holder's 5 s.
    assert!(
        outcome.duration >= ms(1900) && outcome.duration < Duration::from_millis(4500),
        "{:?}",
        outcome.duration
    );
    assert!(alive(holder), "the holder is outside the group, not killed");
    // The holder leads its own group: end it and its `sleep`.
    let _ = std::process::Command::new("kill")
        .args(["-TERM", "--", &format!("-{holder}")])
        .status();
}

#[test]
fn a_relative_program_is_found_from_the_config_folder_not_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    fs::create_dir(&work).unwrap();
    let script = dir.path().join("agent.sh");
    fs::write(&script, "#!/bin/sh\nexit 7\n").unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let command = vec!["./agent.sh".to_owned()];
    assert_eq!(check_agent_program(&command, dir.path()), Ok(script));
    let run = AgentRun {
        command: &command,
        config_dir: dir.path(),
        cwd: &work,
        prompt: "",
        automation: "nightly",
        task_id: "0123456789abcdef",
        repository: "",
        branch: None,
        env: &[],
        stream: None,
    };
    let outcome = run_attempt(&run, &AgentLimits::default(), &Stop::new());
    assert_eq!(outcome.reason, EndReason::Exit { code: 7 });
}

#[test]
fn a_hanging_agent_is_killed_with_its_whole_group_at_the_timeout_and_grace() {
    let dir = tempfile::tempdir().unwrap();
    // The shell and its background `sleep` both ignore SIGTERM: only SIGKILL after
    // the grace ends them.
    let command = sh("trap '' TERM; echo $$ > pgid; sleep 1000 & echo $! > grandchild; wait");
    let (timeout, grace) = (ms(500), ms(300));
    let outcome = attempt_in(
        dir.path(),
        &command,
        limits(Some(timeout), None, grace),
        &Stop::new(),
    );
    assert_eq!(outcome.reason, EndReason::Timeout { limit: timeout });
    assert_eq!(outcome.reason.as_str(), "timeout");
    assert!(outcome.finishes_task() && !outcome.succeeded());
    assert_eq!(
        outcome.error().as_deref(),
        Some("the agent ran longer than its timeout of 0.5 s and was stopped")
    );
    assert!(
        outcome.duration >= timeout + grace,
        "killed after the timeout and the grace, not before: {:?}",
        outcome.duration
    );
    assert!(outcome.duration < SLOW, "{:?}", outcome.duration);
    let grandchild = read_pid(&dir.path().join("grandchild"));
    let pgid = read_pid(&dir.path().join("pgid"));
    assert_group_gone(pgid);
    assert!(
        !alive(grandchild),
        "the `sleep` that ignores SIGTERM is gone"
    );
}

#[test]
fn a_grandchild_that_ignores_sigterm_dies_when_the_agent_stops_within_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    // The grandchild ignores SIGTERM; the shell waits for it to be ready, then dies
    // of SIGTERM, long before the grace ends.
    let command = sh("echo $$ > pgid; \
         sh -c 'trap \"\" TERM; echo $$ > grandchild; exec sleep 1000' & \
         while [ ! -s grandchild ]; do sleep 0.01; done; wait");
    let (timeout, grace) = (ms(300), Duration::from_secs(30));
    let outcome = attempt_in(
        dir.path(),
        &command,
        limits(Some(timeout), None, grace),
        &Stop::new(),
    );
    assert_eq!(outcome.reason, EndReason::Timeout { limit: timeout });
    assert!(outcome.duration >= timeout, "{:?}", outcome.duration);
    assert!(
        outcome.duration < SLOW,
        "no grace spent: {:?}",
        outcome.duration
    );
    read_pid(&dir.path().join("grandchild"));
    assert_group_gone(read_pid(&dir.path().join("pgid")));
}

#[test]
fn a_silent_agent_stalls() {
    let dir = tempfile::tempdir().unwrap();
    let stall = ms(300);
    let outcome = attempt_in(
        dir.path(),
        &sh("echo $$ > pgid; echo started; exec sleep 1000"),
        limits(None, Some(stall), Duration::from_secs(5)),
        &Stop::new(),
    );
    assert_eq!(outcome.reason, EndReason::Stalled { limit: stall });
    assert_eq!(outcome.reason.as_str(), "stalled");
    assert!(outcome.finishes_task() && !outcome.succeeded());
    assert_eq!(
        outcome.error().as_deref(),
        Some("the agent wrote nothing for 0.3 s (its stall limit) and was stopped")
    );
    assert!(outcome.duration >= stall, "{:?}", outcome.duration);
    assert!(outcome.duration < SLOW, "{:?}", outcome.duration);
    assert_group_gone(read_pid(&dir.path().join("pgid")));
}

#[test]
fn a_chatty_agent_does_not_stall_on_either_stream() {
    let dir = tempfile::tempdir().unwrap();
    // 2 s of output every 100 ms, on stdout and stderr in turn, against a stall
    // limit of 0.7 s: only a byte on each stream keeps it alive.
    let command = sh("i=0; while [ $i -lt 20 ]; do \
         if [ $((i % 2)) -eq 0 ]; then printf .; else printf . >&2; fi; \
         sleep 0.1; i=$((i + 1)); done");
    let outcome = attempt_in(
        dir.path(),
        &command,
        limits(None, Some(ms(700)), ms(100)),
        &Stop::new(),
    );
    assert_eq!(outcome.reason, EndReason::Exit { code: 0 });
    assert!(
        outcome.duration >= Duration::from_secs(2),
        "{:?}",
        outcome.duration
    );
}

#[test]
fn a_kill_from_elsewhere_is_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let killer = {
        let pid_file = pid_file.clone();
        thread::spawn(move || {
            let pid = read_pid(&pid_file);
            std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status()
                .unwrap()
        })
    };
    let outcome = attempt_in(
        dir.path(),
        &sh("echo $$ > pid; exec sleep 1000"),
        limits(Some(SLOW), Some(SLOW), ms(100)),
        &Stop::new(),
    );
    assert!(killer.join().unwrap().success());
    assert_eq!(outcome.reason, EndReason::Signal { signal: Some(9) });
    assert_eq!(outcome.reason.as_str(), "signal");
    assert!(outcome.finishes_task() && !outcome.succeeded());
    assert_eq!(
        outcome.error().as_deref(),
        Some("the agent was killed by signal 9")
    );
}

#[test]
fn a_program_that_cannot_start_is_a_spawn_failure() {
    let dir = tempfile::tempdir().unwrap();
    let run = |command: &[String], stop: &Stop| {
        attempt_in(dir.path(), command, AgentLimits::default(), stop)
    };
    let missing = run(&["/nonexistent/curupira-agent".to_owned()], &Stop::new());
    assert_eq!(missing.reason.as_str(), "spawn-failed");
    assert!(!missing.finishes_task() && !missing.succeeded());
    assert_eq!(missing.exit_code(), None);
    let error = missing.error().unwrap();
    assert!(
        error.starts_with("cannot start the agent `/nonexistent/curupira-agent`: ")
            && error.contains("No such file or directory"),
        "{error}"
    );

    let script = dir.path().join("agent.sh");
    fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o644)).unwrap();
    let not_executable = run(&["./agent.sh".to_owned()], &Stop::new());
    let error = not_executable.error().unwrap();
    assert_eq!(not_executable.reason.as_str(), "spawn-failed");
    assert!(error.contains("Permission denied"), "{error}");

    let empty = run(&[], &Stop::new());
    assert_eq!(
        empty.reason,
        EndReason::SpawnFailed {
            error: "the agent command is empty".to_owned()
        }
    );

    let nowhere = dir.path().join("gone");
    let command = sh("exit 0");
    let run = AgentRun {
        command: &command,
        config_dir: dir.path(),
        cwd: &nowhere,
        prompt: "",
        automation: "nightly",
        task_id: "0123456789abcdef",
        repository: "",
        branch: None,
        env: &[],
        stream: None,
    };
    let outcome = run_attempt(&run, &AgentLimits::default(), &Stop::new());
    assert_eq!(
        outcome.reason,
        EndReason::SpawnFailed {
            error: format!(
                "cannot start the agent `sh`: its working directory `{}` does not exist",
                nowhere.display()
            )
        }
    );
}

#[test]
fn the_first_stop_lets_the_attempt_finish() {
    let dir = tempfile::tempdir().unwrap();
    let stop = Stop::new();
    stop.request();
    let outcome = attempt_in(
        dir.path(),
        &sh("sleep 0.2; exit 5"),
        limits(None, None, ms(100)),
        &stop,
    );
    assert_eq!(outcome.reason, EndReason::Exit { code: 5 });
    assert!(outcome.duration >= ms(200), "{:?}", outcome.duration);
}

#[test]
fn a_second_stop_interrupts_the_attempt_and_kills_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let stop = Stop::new();
    stop.request();
    let pgid_file = dir.path().join("pgid");
    let second = {
        let (stop, pgid_file) = (stop.clone(), pgid_file.clone());
        thread::spawn(move || {
            read_pid(&pgid_file);
            stop.request();
        })
    };
    let grace = ms(300);
    let outcome = attempt_in(
        dir.path(),
        &sh("trap '' TERM; sleep 1000 & echo $$ > pgid; wait"),
        limits(None, None, grace),
        &stop,
    );
    second.join().unwrap();
    assert_eq!(outcome.reason, EndReason::Interrupted);
    assert_eq!(outcome.reason.as_str(), "interrupted");
    assert!(!outcome.finishes_task() && !outcome.succeeded());
    assert!(outcome.duration >= grace, "{:?}", outcome.duration);
    assert!(outcome.duration < SLOW, "{:?}", outcome.duration);
    assert_group_gone(read_pid(&pgid_file));

    // After the second stop nothing starts.
    let outcome = attempt_in(
        dir.path(),
        &sh("touch started"),
        AgentLimits::default(),
        &stop,
    );
    assert_eq!(outcome.reason, EndReason::Interrupted);
    assert!(!dir.path().join("started").exists());
}

#[test]
fn run_agent_keeps_the_first_hosts_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let run = |command: &[String]| {
        run_agent(
            &AgentRun {
                command,
                config_dir: dir.path(),
                cwd: dir.path(),
                prompt: "",
                automation: "nightly",
                task_id: "0123456789abcdef",
                repository: "",
                branch: None,
                env: &[],
                stream: None,
            },
            &Stop::new(),
        )
    };
    let ok = run(&sh("exit 0"));
    assert!(ok.succeeded());
    assert_eq!(
        run(&sh("exit 2")),
        AgentOutcome {
            exit_code: Some(2),
            error: None
        }
    );
    assert_eq!(
        run(&sh("kill -9 $$")),
        AgentOutcome {
            exit_code: None,
            error: Some("the agent was killed by signal 9".to_owned())
        }
    );
}

#[test]
fn reasons_have_their_event_names() {
    let names: Vec<&str> = [
        EndReason::Exit { code: 0 },
        EndReason::Timeout { limit: ms(1) },
        EndReason::Stalled { limit: ms(1) },
        EndReason::Signal { signal: Some(9) },
        EndReason::SpawnFailed {
            error: String::new(),
        },
        EndReason::Interrupted,
        EndReason::HookFailed {
            error: String::new(),
        },
        EndReason::WorkspaceFailed {
            error: String::new(),
        },
    ]
    .iter()
    .map(EndReason::as_str)
    .collect();
    assert_eq!(
        names,
        [
            "exit",
            "timeout",
            "stalled",
            "signal",
            "spawn-failed",
            "interrupted",
            "hook-failed",
            "workspace-failed"
        ]
    );
    let hook = AttemptOutcome {
        reason: EndReason::HookFailed {
            error: "the `before_run` hook exited with status 1".to_owned(),
        },
        duration: Duration::ZERO,
        output: None,
    };
    assert!(hook.finishes_task() && !hook.succeeded());
    // The agent never started: the task is not finished, as for a failed spawn.
    let workspace = AttemptOutcome {
        reason: EndReason::WorkspaceFailed {
            error: "no space left".to_owned(),
        },
        duration: Duration::ZERO,
        output: None,
    };
    assert!(!workspace.finishes_task() && !workspace.succeeded());
}

mod check_agent_program {
    use super::*;

    fn file(path: &Path, mode: u32) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    fn path_of(folders: &[&Path]) -> std::ffi::OsString {
        env::join_paths(folders).unwrap()
    }

    #[test]
    fn a_program_name_is_looked_up_on_path() {
        let sh = check_agent_program(&["sh".to_owned(), "-c".to_owned()], Path::new("/")).unwrap();
        assert!(sh.ends_with("sh") && sh.is_absolute(), "{}", sh.display());
        // No PATH: the system's default.
        let sh = resolve_program("sh", Path::new("/"), None).unwrap();
        assert!(
            sh.starts_with("/bin") || sh.starts_with("/usr/bin"),
            "{sh:?}"
        );
    }

    #[test]
    fn the_first_executable_file_on_path_wins_as_execvp_does() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second, third) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        file(&first.join("agent"), 0o644);
        fs::create_dir_all(second.join("agent")).unwrap();
        file(&third.join("agent"), 0o755);
        let path = path_of(&[&first, &second, &third]);
        assert_eq!(
            resolve_program("agent", dir.path(), Some(&path)),
            Ok(third.join("agent"))
        );
        let path = path_of(&[&first, &second]);
        assert_eq!(
            resolve_program("agent", dir.path(), Some(&path)),
            Err(format!(
                "the agent program `agent` is on PATH but not executable (`{}`)",
                first.join("agent").display()
            ))
        );
        assert_eq!(
            resolve_program("agent", dir.path(), Some(&path_of(&[&second]))),
            Err("the agent program `agent` is not found on PATH".to_owned())
        );
    }

    #[test]
    fn relative_folders_on_path_start_from_the_config_folder() {
        let dir = tempfile::tempdir().unwrap();
        file(&dir.path().join("tools/agent"), 0o755);
        assert_eq!(
            resolve_program("agent", dir.path(), Some(OsStr::new("/nonexistent:tools"))),
            Ok(dir.path().join("tools/agent"))
        );
    }

    #[test]
    fn a_path_is_relative_to_the_config_folder() {
        let dir = tempfile::tempdir().unwrap();
        file(&dir.path().join("scripts/agent.sh"), 0o755);
        file(&dir.path().join("scripts/notes.txt"), 0o644);
        let check = |program: &str| check_agent_program(&[program.to_owned()], dir.path());
        assert_eq!(
            check("scripts/agent.sh"),
            Ok(dir.path().join("scripts/agent.sh"))
        );
        assert_eq!(
            check("./scripts/agent.sh"),
            Ok(dir.path().join("./scripts/agent.sh"))
        );
        let absolute = dir.path().join("scripts/agent.sh");
        assert_eq!(check(absolute.to_str().unwrap()), Ok(absolute));
        assert_eq!(
            check("./scripts/missing.sh"),
            Err(format!(
                "the agent program `./scripts/missing.sh` does not exist (`{}`)",
                dir.path().join("./scripts/missing.sh").display()
            ))
        );
        assert_eq!(
            check("./scripts"),
            Err(format!(
                "the agent program `./scripts` is not a file (`{}`)",
                dir.path().join("./scripts").display()
            ))
        );
        assert_eq!(
            check("scripts/notes.txt"),
            Err(format!(
                "the agent program `scripts/notes.txt` is not executable (`{}`)",
                dir.path().join("scripts/notes.txt").display()
            ))
        );
    }

    #[test]
    fn an_empty_command_or_program_is_refused() {
        let dir = Path::new("/");
        assert_eq!(
            check_agent_program(&[], dir),
            Err("the agent command is empty".to_owned())
        );
        assert_eq!(
            check_agent_program(&[String::new()], dir),
            Err("the agent program is the empty string".to_owned())
        );
    }
}
