//! Running the coding agent for one task (SPEC section 1, step 6): one attempt under
//! time limits ([`run_attempt`]), and the check that its program can start at all
//! ([`check_agent_program`]), made before the first poll so that a typo in the agent
//! command never uses up a task.
//!
//! # The process
//!
//! - The command is the configured array: program, then arguments. A program
//!   containing `/` that is not absolute is relative to the config's folder
//!   ([`AgentRun::config_dir`], like a manifest's `command`), whatever the working
//!   directory; otherwise it is looked up on `PATH`. [`check_agent_program`] resolves
//!   it by the same rule.
//! - The working directory is [`AgentRun::cwd`], the task's workspace: the config's
//!   folder (shared mode) or the task's worktree.
//! - The prompt is written to the agent's stdin as the pipe takes it, then stdin is
//!   closed; an agent that does not read its stdin is fine (the write error is
//!   ignored), and a large prompt cannot deadlock against an agent that writes before
//!   it reads (the same wait serves both directions).
//! - The environment is the host's plus `CURUPIRA_AUTOMATION`, `CURUPIRA_TASK_ID`,
//!   `CURUPIRA_REPOSITORY` (the empty string when no repository is known),
//!   `CURUPIRA_WORKSPACE` (the working directory, absolute) and `CURUPIRA_BRANCH` (the
//!   worktree's branch). Without a branch, `CURUPIRA_BRANCH` is removed from the
//!   inherited environment, so an agent never sees the branch of an outer run. With
//!   an observer that has one ([`AgentObserver::run_label`]), [`RUN_VAR`] is the
//!   watchdog's label of the attempt (`curupira_process::watchdog`).
//! - stdout and stderr are pipes the host reads and forwards to its own stderr, so
//!   the host's stdout carries only events. Each line goes out whole, behind the task's
//!   name: `[<automation> <first 12 digits of the task id>] ` (as an extension's stderr
//!   lines carry its name), so concurrent agents' lines never mix. A line is held
//!   until its end arrives, at most 64 KiB (a longer one goes out in 64 KiB pieces,
//!   each a line); a last line without an end gets one. Other bytes are forwarded
//!   unchanged. Reading them is what lets the host see silence (the stall limit); the
//!   price is that the agent no longer writes to the terminal itself, so a program that
//!   colours or animates only for a terminal stops doing so. The host keeps reading
//!   even when its own stderr is closed, so an agent never blocks on a full pipe.
//! - A provider's stdout ([`AgentRun::stream`]) is its JSON stream: what goes to the
//!   host's stderr, behind the same prefix, is what a person reads of it
//!   ([`curupira_agents::stream::Reader::showing`]: the assistant's text, one line per
//!   tool call, the answer, the usage, the errors), not the JSON. When the host's log
//!   shows `debug` for [`RAW_STREAM_TARGET`] (`curupira run -v`, or `RUST_LOG`), the
//!   stream is forwarded as it is instead, like any other output. The attempt's log
//!   ([`AgentObserver::output_log`]) always gets the stream as it is, and stderr is
//!   always forwarded unchanged.
//! - One thread supervises an attempt: it writes the prompt, reads both outputs, sees
//!   the agent's exit (a pidfd on Linux) and checks the limits in one `poll(2)`
//!   (`agent::pipes`); no helper thread per pipe.
//! - On Unix the agent runs in a process group of its own, so a terminal's Ctrl-C
//!   reaches only the host. It lives in a [`ProcessGuard`]: whatever happens it is
//!   killed and reaped, and what it left in its group is killed when it exits.
//!
//! # How an attempt ends
//!
//! | [`EndReason`] | name | when | finishes the task |
//! |---|---|---|---|
//! | `Exit` | `exit` | the agent exited; it succeeded iff the status is 0 | yes |
//! | `Timeout` | `timeout` | it ran for [`AgentLimits::timeout`] and was stopped | yes (failed) |
//! | `Stalled` | `stalled` | it wrote no byte for [`AgentLimits::stall`] and was stopped | yes (failed) |
//! | `Signal` | `signal` | a signal from elsewhere killed it (an OOM kill); not a stop signal while the host is stopping (then `Interrupted`) | yes (failed) |
//! | `SpawnFailed` | `spawn-failed` | it could not start: not found, not executable, fork failure | no |
//! | `Interrupted` | `interrupted` | the host's own shutdown stopped it (a second SIGINT/SIGTERM), or a stop signal ended it while the host was stopping (a service manager signalling every process), or the `after_create`/`before_run` hook before it (the caller's) | no |
//! | `HookFailed` | `hook-failed` | never returned here: an `after_create` or `before_run` hook failed or timed out (the caller's) | yes (failed) |
//! | `Refused` | `refused` | never returned here: the provider's command line could not be built (a prompt too long for the one argument its CLI takes), so the agent did not start and would not on a retry (the caller's; it does not retry it) | yes (failed) |
//! | `WorkspaceFailed` | `workspace-failed` | never returned here: the task's workspace could not be prepared, so the agent did not start (the caller's) | no |
//!
//! "Finishes the task" ([`AttemptOutcome::finishes_task`]) is what the caller needs: a
//! task whose agent never started, or was stopped by the host itself, gets no
//! `trigger/onFinished` and its identity is not recorded, so a later run tries it
//! again. Whether a failed attempt is retried is the caller's policy.
//!
//! # Limits
//!
//! - [`AgentLimits::timeout`] is wall-clock time from the start; [`AgentLimits::stall`]
//!   is time since the last byte on stdout or stderr (or since the start). An agent
//!   that closed both pipes and keeps running is silent. Both are off by default.
//! - They are checked at least every 10 ms, so an expiry is noticed within about that
//!   (more on a loaded machine). The agent's exit is seen at once on Linux (its
//!   pidfd wakes the wait); elsewhere it is looked for after 0.25 ms, then at doubling
//!   intervals up to the same 10 ms. An agent that exits before an expiry is noticed
//!   ends with its own status.
//! - On expiry the agent is stopped as [`ProcessGuard::terminate`] does it: SIGTERM
//!   to its process group, at most [`AgentLimits::kill_grace`] for it to exit, then
//!   SIGKILL to the group; always reaped. Its output is still read and forwarded
//!   during the grace. When the agent exits within the grace, what it left in its
//!   group is killed then: an agent that wants its helpers to finish cleanly waits for
//!   them. The attempt's duration includes the grace it took.
//!
//! # Stop signals
//!
//! - The first stop ([`Stop`]) does not touch a running attempt: the run loop stops
//!   polling and dispatching and waits for running agents.
//! - From the second one on (`Stop::count() >= 2`) the attempt is stopped as on an
//!   expiry (SIGTERM, grace, SIGKILL) and ends `Interrupted`. An attempt asked to
//!   start then does not start at all.
//!
//! # Afterwards
//!
//! Once the agent is reaped its group is dead, so its pipes close; the attempt reads
//! them to their end (so the agent's last output comes before the caller's next
//! event), for at most 2 s. When a process that left the agent's group still holds a
//! pipe then, a thread takes over and goes on forwarding in the background, and a
//! warning says so.

mod tail;

use std::env;
use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use curupira_client::{LaunchCommand, ProcessGuard};

use crate::events::short_id;
use curupira_process::lines::{self, Forward};
use curupira_process::pipes::{
    Chunk, FIRST_STEP, Pipes, STEP, Stream, drain, forward_in_background,
};
use curupira_process::stop::Stop;
use curupira_process::watchdog::{RUN_VAR, SpawnWindow};

/// The grace between SIGTERM and SIGKILL when nothing else is configured.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(10);

/// The `tracing` target whose `debug` level, when the host's log shows it, has a
/// provider's stream forwarded to the host's stderr as the CLI printed it rather
/// than as a person reads it (the module documentation).
pub const RAW_STREAM_TARGET: &str = "curupira::agent_stream";

/// `PATH` when the host has none: the system default of `execvp` (glibc's
/// `_CS_PATH`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// What the agent is given.
#[derive(Debug, Clone, Copy)]
pub struct AgentRun<'a> {
    /// Program and arguments; empty is an attempt that cannot start.
    pub command: &'a [String],
    /// The config's folder: the base of a program path containing `/`.
    pub config_dir: &'a Path,
    /// The working directory: the task's workspace, also given as
    /// `CURUPIRA_WORKSPACE`.
    pub cwd: &'a Path,
    /// What is written to stdin, then closed: the rendered prompt for a command; for
    /// a provider, nothing, or a prompt too long for its last argument.
    pub prompt: &'a str,
    /// `CURUPIRA_AUTOMATION`.
    pub automation: &'a str,
    /// `CURUPIRA_TASK_ID`.
    pub task_id: &'a str,
    /// `CURUPIRA_REPOSITORY`.
    pub repository: &'a str,
    /// `CURUPIRA_BRANCH`, the worktree's branch; `None` removes the variable.
    pub branch: Option<&'a str>,
    /// Variables added to the environment after the host's own (a provider's, such
    /// as OpenCode 1.x's `OPENCODE_DB`).
    pub env: &'a [(String, String)],
    /// The provider whose JSON stream its stdout is, read line by line
    /// ([`curupira_agents::stream`]); `None`: stdout is only forwarded.
    pub stream: Option<curupira_agents::Provider>,
}

/// The time limits of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentLimits {
    /// Wall-clock time the agent may run; `None` is no limit.
    pub timeout: Option<Duration>,
    /// Time the agent may write nothing to stdout or stderr; `None` is no limit.
    pub stall: Option<Duration>,
    /// Time between SIGTERM and SIGKILL when the agent is stopped.
    pub kill_grace: Duration,
}

impl Default for AgentLimits {
    /// No time limit, and [`DEFAULT_KILL_GRACE`].
    fn default() -> Self {
        AgentLimits {
            timeout: None,
            stall: None,
            kill_grace: DEFAULT_KILL_GRACE,
        }
    }
}

/// Why an attempt ended (the module documentation has the table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// The agent exited with this status.
    Exit {
        /// The exit status; the attempt succeeded iff it is 0.
        code: i32,
    },
    /// The agent ran past its timeout and was stopped.
    Timeout {
        /// The timeout.
        limit: Duration,
    },
    /// The agent wrote nothing for its stall limit and was stopped.
    Stalled {
        /// The stall limit.
        limit: Duration,
    },
    /// A signal the host did not send killed the agent (an OOM kill).
    Signal {
        /// The signal number; `None` when the status said nothing (the agent could
        /// not be waited for, and was killed).
        signal: Option<i32>,
    },
    /// The agent could not start; the task did not run.
    SpawnFailed {
        /// Why, in one sentence with the system's error.
        error: String,
    },
    /// The host's own shutdown stopped the agent; the task did not finish.
    Interrupted,
    /// A worktree hook failed before the agent could run. Never returned by
    /// [`run_attempt`]: the caller builds it, so that one type names every way an
    /// attempt ends.
    HookFailed {
        /// Which hook, and how it failed, in one sentence.
        error: String,
    },
    /// The provider's command line could not be built (a prompt too long for the one
    /// argument its CLI takes it in), so the agent did not start; another attempt
    /// would not either. Never returned by [`run_attempt`]: the caller builds it.
    Refused {
        /// Why, in one sentence.
        error: String,
    },
    /// The task's workspace could not be prepared (a git command that failed or ran
    /// too long, a folder that is taken, a branch checked out elsewhere), so the agent
    /// did not run. Never returned by [`run_attempt`]: the caller builds it.
    WorkspaceFailed {
        /// Why, in one sentence.
        error: String,
    },
}

impl EndReason {
    /// The reason's name in events: `exit`, `timeout`, `stalled`, `signal`,
    /// `spawn-failed`, `interrupted`, `hook-failed`, `refused`, `workspace-failed`.
    pub fn as_str(&self) -> &'static str {
        match self {
            EndReason::Exit { .. } => "exit",
            EndReason::Timeout { .. } => "timeout",
            EndReason::Stalled { .. } => "stalled",
            EndReason::Signal { .. } => "signal",
            EndReason::SpawnFailed { .. } => "spawn-failed",
            EndReason::Interrupted => "interrupted",
            EndReason::HookFailed { .. } => "hook-failed",
            EndReason::Refused { .. } => "refused",
            EndReason::WorkspaceFailed { .. } => "workspace-failed",
        }
    }
}

impl fmt::Display for EndReason {
    /// The name, as [`as_str`](Self::as_str).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptOutcome {
    /// Why it ended.
    pub reason: EndReason,
    /// From the start of the process (or of the attempt, when none started) until it
    /// was reaped, a grace included.
    pub duration: Duration,
    /// The end of what the agent wrote, as the reference host quotes it when a task
    /// fails (`agent exited 3: <this>`): its stderr, trimmed, when it wrote any, else
    /// its stdout's last non-blank line; at most 600 characters, behind `…` when cut.
    /// `None` when it wrote nothing but blanks (or never started).
    pub output: Option<String>,
}

impl AttemptOutcome {
    /// Whether the agent exited with status 0.
    pub fn succeeded(&self) -> bool {
        self.reason == EndReason::Exit { code: 0 }
    }

    /// Whether the attempt counts as a run of the task, succeeded or failed: the
    /// caller then sends `trigger/onFinished` (after the last attempt) and records the
    /// identity. False for [`EndReason::SpawnFailed`] and [`EndReason::Interrupted`]:
    /// the task did not run, or the host stopped it, and a later run tries it again.
    pub fn finishes_task(&self) -> bool {
        !matches!(
            self.reason,
            EndReason::SpawnFailed { .. }
                | EndReason::WorkspaceFailed { .. }
                | EndReason::Interrupted
        )
    }

    /// The agent's exit status, when it exited.
    pub fn exit_code(&self) -> Option<i32> {
        match self.reason {
            EndReason::Exit { code } => Some(code),
            _ => None,
        }
    }

    /// Why the agent has no exit status, in one sentence; `None` when it exited (the
    /// status says it all).
    pub fn error(&self) -> Option<String> {
        Some(match &self.reason {
            EndReason::Exit { .. } => return None,
            EndReason::Timeout { limit } => format!(
                "the agent ran longer than its timeout of {} and was stopped",
                seconds(*limit)
            ),
            EndReason::Stalled { limit } => format!(
                "the agent wrote nothing for {} (its stall limit) and was stopped",
                seconds(*limit)
            ),
            EndReason::Signal {
                signal: Some(signal),
            } => format!("the agent was killed by signal {signal}"),
            EndReason::Signal { signal: None } => {
                "the agent could not be waited for and was killed".to_owned()
            }
            EndReason::SpawnFailed { error }
            | EndReason::HookFailed { error }
            | EndReason::Refused { error }
            | EndReason::WorkspaceFailed { error } => error.clone(),
            EndReason::Interrupted => {
                "the agent was stopped by the host's shutdown (a second stop signal)".to_owned()
            }
        })
    }
}

/// A duration for a message: `5 s`, `0.3 s`.
fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

/// Told when an agent's process started and when it was reaped: how the run's
/// watchdog and ledger learn its pid (which is also its process group id).
pub trait AgentObserver: fmt::Debug + Sync {
    /// What the agent's environment sets [`RUN_VAR`] to: the run's watchdog finds what
    /// the agent leaves outside its group by it ([`curupira_process::watchdog`]). `None` leaves
    /// the variable as the host has it.
    fn run_label(&self) -> Option<&str> {
        None
    }
    /// The agent started as process `pid`, leading its own process group; `window`
    /// (opened right before the spawn) tells its start time.
    fn spawned(&self, pid: u32, window: SpawnWindow);
    /// The agent `pid` was reaped, after what it left in its group was killed.
    fn reaped(&self, pid: u32);
    /// Where the attempt's output is also written, whole lines with their time
    /// ([`crate::log`]), asked for once the agent started; `None`: to the host's
    /// stderr only.
    fn output_log(&self) -> Option<crate::log::SharedLog> {
        None
    }
    /// The agent's stream announced its session ([`AgentRun::stream`]); told once, as
    /// soon as the line is read.
    fn session(&self, _session_id: &str) {}
    /// What the agent's stream said, once it ended ([`AgentRun::stream`]).
    fn stream_read(&self, _summary: curupira_agents::stream::Summary) {}
}

/// Runs one attempt of the agent under `limits` and reports how it ended; it never
/// fails as a call (a program that cannot start is [`EndReason::SpawnFailed`]). The
/// agent is reaped, and its process group killed, before this returns.
pub fn run_attempt(run: &AgentRun<'_>, limits: &AgentLimits, stop: &Stop) -> AttemptOutcome {
    run_attempt_observed(run, limits, stop, None)
}

/// [`run_attempt`], telling `observer` the agent's pid when it started and when it was
/// reaped.
pub fn run_attempt_observed(
    run: &AgentRun<'_>,
    limits: &AgentLimits,
    stop: &Stop,
    observer: Option<&dyn AgentObserver>,
) -> AttemptOutcome {
    let started = Instant::now();
    let (reason, output) = if stop.forced() {
        (EndReason::Interrupted, None)
    } else {
        let window = SpawnWindow::open();
        match start(run, observer.and_then(|observer| observer.run_label())) {
            Ok(agent) => {
                let pid = agent.id();
                if let Some(observer) = observer {
                    observer.spawned(pid, window);
                }
                let log = observer.and_then(|observer| observer.output_log());
                // `supervise` reaps the agent (and kills its group) before it returns.
                let ended = supervise(agent, run, limits, stop, log, observer);
                if let Some(observer) = observer {
                    observer.reaped(pid);
                }
                ended
            }
            Err(error) => (EndReason::SpawnFailed { error }, None),
        }
    };
    AttemptOutcome {
        reason,
        duration: started.elapsed(),
        output,
    }
}

/// How the agent ended, in the terms of the first host: an exit status, or why there
/// is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentOutcome {
    /// The exit status; `None` when there was none.
    pub exit_code: Option<i32>,
    /// Why there is no exit status (killed by a signal, could not start).
    pub error: Option<String>,
}

impl AgentOutcome {
    /// Whether the agent exited with status 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && self.error.is_none()
    }
}

/// Runs the agent to the end without time limits ([`AgentLimits::default`]) and
/// reports how it ended; it never fails as a call.
pub fn run_agent(run: &AgentRun<'_>, stop: &Stop) -> AgentOutcome {
    let outcome = run_attempt(run, &AgentLimits::default(), stop);
    AgentOutcome {
        exit_code: outcome.exit_code(),
        error: outcome.error(),
    }
}

/// Resolves the agent's program as starting it would, and checks that it is a file
/// this user may execute: a path containing `/` (relative ones from `config_dir`), or
/// else the first executable file of that name in a folder of the host's `PATH`
/// (`/bin:/usr/bin` when there is none; relative folders of `PATH` are taken from
/// `config_dir`). Returns the program's path, or why it cannot start, in one sentence.
pub fn check_agent_program(command: &[String], config_dir: &Path) -> Result<PathBuf, String> {
    let Some(program) = command.first() else {
        return Err("the agent command is empty".to_owned());
    };
    resolve_program(program, config_dir, env::var_os("PATH").as_deref())
}

/// How long [`program_version`] waits for `PROGRAM --version`.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// What `program --version` prints: its stdout, a line end, then its stderr (as the
/// reference host shows it), run with stdin closed in `dir`, killed after
/// [`VERSION_TIMEOUT`]. Why it could not be run, in one sentence.
pub fn program_version(program: &Path, dir: &Path) -> Result<String, String> {
    let mut command = std::process::Command::new(program);
    command
        .arg("--version")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = ProcessGuard::spawn(&mut command)
        .map_err(|err| format!("cannot run `{} --version`: {err}", program.display()))?;
    let (stdout, stderr) = (child.take_stdout(), child.take_stderr());
    fn read<R: io::Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<String> {
        thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(pipe) = pipe {
                let _ = io::Read::read_to_end(&mut io::Read::take(pipe, 64 * 1024), &mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    }
    let (out, err) = (read(stdout), read(stderr));
    let deadline = Instant::now() + VERSION_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() >= deadline => {
                child.kill();
                return Err(format!(
                    "`{} --version` did not end within {}",
                    program.display(),
                    seconds(VERSION_TIMEOUT)
                ));
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(err) => {
                return Err(format!(
                    "cannot wait for `{} --version`: {err}",
                    program.display()
                ));
            }
        }
    }
    drop(child);
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    Ok(format!("{out}\n{err}"))
}

/// [`check_agent_program`] with the `PATH` given.
fn resolve_program(
    program: &str,
    config_dir: &Path,
    path_var: Option<&OsStr>,
) -> Result<PathBuf, String> {
    if program.is_empty() {
        return Err("the agent program is the empty string".to_owned());
    }
    if program.contains('/') {
        let path = program_path(program, config_dir);
        return match program_file(&path) {
            ProgramFile::Executable => Ok(path),
            ProgramFile::Missing => Err(format!(
                "the agent program `{program}` does not exist (`{}`)",
                path.display()
            )),
            ProgramFile::NotAFile => Err(format!(
                "the agent program `{program}` is not a file (`{}`)",
                path.display()
            )),
            ProgramFile::NotExecutable => Err(format!(
                "the agent program `{program}` is not executable (`{}`)",
                path.display()
            )),
        };
    }
    let path_var = path_var.unwrap_or(OsStr::new(DEFAULT_PATH));
    let mut not_executable = None;
    for folder in env::split_paths(path_var) {
        let candidate = config_dir.join(folder).join(program);
        match program_file(&candidate) {
            ProgramFile::Executable => return Ok(candidate),
            ProgramFile::NotExecutable => {
                not_executable.get_or_insert(candidate);
            }
            ProgramFile::Missing | ProgramFile::NotAFile => {}
        }
    }
    Err(match not_executable {
        Some(path) => format!(
            "the agent program `{program}` is on PATH but not executable (`{}`)",
            path.display()
        ),
        None => format!("the agent program `{program}` is not found on PATH"),
    })
}

/// The program to start: relative to the config's folder when it contains `/` and is
/// not absolute, else as written (looked up on `PATH` by the system).
fn program_path(program: &str, config_dir: &Path) -> PathBuf {
    let path = Path::new(program);
    if program.contains('/') && path.is_relative() {
        config_dir.join(path)
    } else {
        path.to_owned()
    }
}

/// What [`program_file`] found at a path.
enum ProgramFile {
    Executable,
    Missing,
    NotAFile,
    NotExecutable,
}

/// Whether `path` (symbolic links followed) is a file this user may execute.
fn program_file(path: &Path) -> ProgramFile {
    match path.metadata() {
        Err(_) => ProgramFile::Missing,
        Ok(metadata) if !metadata.is_file() => ProgramFile::NotAFile,
        Ok(_) => {
            #[cfg(unix)]
            {
                use rustix::fs::{Access, access};
                if access(path, Access::EXEC_OK).is_err() {
                    return ProgramFile::NotExecutable;
                }
            }
            ProgramFile::Executable
        }
    }
}

/// Starts the agent, with [`RUN_VAR`] set to `label` when there is one; why it
/// cannot, in one sentence.
fn start(run: &AgentRun<'_>, label: Option<&str>) -> Result<ProcessGuard, String> {
    let Some((program, args)) = run.command.split_first() else {
        return Err("the agent command is empty".to_owned());
    };
    let workspace = std::path::absolute(run.cwd).unwrap_or_else(|_| run.cwd.to_owned());
    let mut command = LaunchCommand::new(program_path(program, run.config_dir), run.cwd)
        .args(args)
        .env("CURUPIRA_AUTOMATION", run.automation)
        .env("CURUPIRA_TASK_ID", run.task_id)
        .env("CURUPIRA_REPOSITORY", run.repository)
        .env("CURUPIRA_WORKSPACE", workspace)
        .command();
    match run.branch {
        Some(branch) => command.env("CURUPIRA_BRANCH", branch),
        None => command.env_remove("CURUPIRA_BRANCH"),
    };
    if let Some(label) = label {
        command.env(RUN_VAR, label);
    }
    for (key, value) in run.env {
        command.env(key, value);
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    ProcessGuard::spawn(&mut command).map_err(|err| {
        if err.kind() == io::ErrorKind::NotFound && !run.cwd.is_dir() {
            format!(
                "cannot start the agent `{program}`: its working directory `{}` does not exist",
                run.cwd.display()
            )
        } else {
            format!("cannot start the agent `{program}`: {err}")
        }
    })
}

/// The agent's output on its way to the host's stderr: both streams cut into lines
/// behind the task's prefix (a provider's stdout, shown for a person unless the raw
/// stream is asked for), and the time of the last byte (the stall limit's clock).
struct Output {
    forward: Forward,
    /// Whether the agent's output is echoed on the host's stderr at all: not when the
    /// host logs only warnings and errors (`-q`); the attempt's log keeps it anyway.
    echo: bool,
    /// The task's prefix, before each line shown of the stream.
    prefix: String,
    /// Whether the stream's stdout is shown for a person rather than forwarded.
    readable: bool,
    /// The attempt's own log, when it has one.
    log: Option<crate::log::SharedLog>,
    last_byte: Instant,
    /// The provider's stream on stdout, when it has one.
    stream: Option<StreamState>,
    /// The end of both streams, for [`AttemptOutcome::output`].
    tail: tail::Tail,
}

/// A provider's stream being read: its lines, what they said, and the sessions
/// announced since the supervisor last looked.
struct StreamState {
    lines: curupira_agents::stream::Lines,
    reader: curupira_agents::stream::Reader,
    announced: Vec<String>,
}

impl StreamState {
    fn take(&mut self, bytes: &[u8]) {
        let StreamState {
            lines,
            reader,
            announced,
        } = self;
        lines.take(bytes, reader, &mut |session| announced.push(session));
    }

    /// The stream ended: its last line is read, and what it shows of it taken.
    fn end(&mut self) -> Vec<String> {
        let StreamState {
            lines,
            reader,
            announced,
        } = self;
        lines.finish(reader, &mut |session| announced.push(session));
        reader.take_shown()
    }

    /// The summary, once the stream [ended](Self::end). The stream of an agent that did
    /// not succeed may stop before its closing event without a diagnostic.
    fn finish(self, succeeded: bool) -> (Vec<String>, curupira_agents::stream::Summary) {
        let summary = if succeeded {
            self.reader.finish()
        } else {
            self.reader.finish_failed()
        };
        (self.announced, summary)
    }
}

impl Output {
    fn new(run: &AgentRun<'_>, log: Option<crate::log::SharedLog>) -> Self {
        let prefix = lines::prefix(run.automation, run.task_id);
        let readable = !tracing::enabled!(target: RAW_STREAM_TARGET, tracing::Level::DEBUG);
        Output {
            forward: Forward::new(&prefix),
            echo: tracing::enabled!(tracing::Level::INFO),
            prefix,
            readable,
            log,
            last_byte: Instant::now(),
            tail: tail::Tail::default(),
            stream: run.stream.map(|provider| StreamState {
                lines: curupira_agents::stream::Lines::new(),
                reader: if readable {
                    curupira_agents::stream::Reader::showing(provider)
                } else {
                    curupira_agents::stream::Reader::new(provider)
                },
                announced: Vec::new(),
            }),
        }
    }

    /// Writes `shown` to the host's stderr, each line behind the prefix, in one write.
    fn show(&self, shown: Vec<String>) {
        if shown.is_empty() || !self.echo {
            return;
        }
        let mut out = Vec::new();
        for line in shown {
            out.extend_from_slice(self.prefix.as_bytes());
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        curupira_process::stderr::write(&out);
    }

    /// Tells `observer` the sessions announced since the last call.
    fn tell(&mut self, observer: Option<&dyn AgentObserver>) {
        if let (Some(stream), Some(observer)) = (self.stream.as_mut(), observer) {
            for session in stream.announced.drain(..) {
                observer.session(&session);
            }
        }
    }

    /// Ends the stream (when there is one), shows its last lines, and tells `observer`
    /// what it said; `reason` is how the agent ended.
    fn end_stream(&mut self, observer: Option<&dyn AgentObserver>, reason: &EndReason) {
        if let Some(mut stream) = self.stream.take() {
            self.show(stream.end());
            let (announced, summary) = stream.finish(*reason == EndReason::Exit { code: 0 });
            if let Some(observer) = observer {
                for session in announced {
                    observer.session(&session);
                }
                observer.stream_read(summary);
            }
        }
    }

    /// Takes what a pipe gave and forwards the lines it completes, or what they show
    /// (and logs them as they are).
    fn take(&mut self, stream: Stream, chunk: Chunk<'_>) {
        if let Chunk::Bytes(bytes) = chunk {
            self.last_byte = Instant::now();
            self.tail.take(stream, bytes);
            if stream == Stream::Stdout
                && let Some(state) = self.stream.as_mut()
            {
                state.take(bytes);
                let shown = state.reader.take_shown();
                self.show(shown);
            }
        }
        if let Some(log) = &self.log {
            crate::log::lock(log).take(stream, chunk);
        }
        // The stream's lines were shown; its last one at its end (`end_stream`).
        if !self.echo || (stream == Stream::Stdout && self.readable && self.stream.is_some()) {
            return;
        }
        self.forward.take(stream, chunk);
    }
}

/// Runs a started agent to its end: feeds its prompt, forwards its output, and stops
/// it on an expiry or a second stop signal. It is reaped when this returns. How it
/// ended, and what [`AttemptOutcome::output`] quotes of its output.
fn supervise(
    mut agent: ProcessGuard,
    run: &AgentRun<'_>,
    limits: &AgentLimits,
    stop: &Stop,
    log: Option<crate::log::SharedLog>,
    observer: Option<&dyn AgentObserver>,
) -> (EndReason, Option<String>) {
    let started = Instant::now();
    let mut output = Output::new(run, log);
    let mut pipes = match Pipes::new(&mut agent, run.prompt.as_bytes()) {
        Ok(pipes) => pipes,
        // The guard kills the agent: without its pipes it did not really start.
        Err(err) => {
            let error = format!("cannot read the agent's output: {err}");
            return (EndReason::SpawnFailed { error }, None);
        }
    };
    let mut step = FIRST_STEP;
    // Set once the agent was asked to stop: why, and when it gets SIGKILL.
    let mut stopping: Option<(EndReason, Instant)> = None;
    // With a pidfd the first look at the agent is the wait's: it wakes at its exit.
    let mut look = !pipes.sees_exit();
    let reason = loop {
        let status = if look {
            agent.try_wait()
        } else {
            look = true;
            Ok(None)
        };
        match status {
            Ok(Some(status)) => {
                break stopping.map_or_else(|| ended_while(status, stop), |(reason, _)| reason);
            }
            Ok(None) => {}
            Err(err) => {
                tracing::warn!(
                    "automation `{}`: cannot wait for the agent of task {}: {err}; killing it",
                    run.automation,
                    short_id(run.task_id)
                );
                agent.kill();
                break stopping.map_or(EndReason::Signal { signal: None }, |(reason, _)| reason);
            }
        }
        let now = Instant::now();
        match &stopping {
            None => {
                if let Some(reason) = expired(
                    limits,
                    stop,
                    now.duration_since(started),
                    output.last_byte,
                    now,
                ) {
                    tracing::warn!(
                        "automation `{}`: stopping the agent of task {} ({reason}): SIGTERM, \
                         then SIGKILL after {}",
                        run.automation,
                        short_id(run.task_id),
                        seconds(limits.kill_grace)
                    );
                    ask_to_stop(&mut agent);
                    stopping = Some((reason, now + limits.kill_grace));
                    continue;
                }
            }
            Some((reason, kill_at)) if now >= *kill_at => {
                agent.kill();
                if let Err(err) = agent.wait() {
                    tracing::warn!(
                        "automation `{}`: cannot wait for the agent of task {}: {err}",
                        run.automation,
                        short_id(run.task_id)
                    );
                }
                break reason.clone();
            }
            Some(_) => {}
        }
        let mut wait = if pipes.sees_exit() { STEP } else { step };
        if let Some((_, kill_at)) = &stopping {
            wait = wait.min(kill_at.saturating_duration_since(now));
        }
        if let Err(err) = pipes.wait(Some(wait), true, &mut |stream, chunk: Chunk<'_>| {
            output.take(stream, chunk)
        }) {
            tracing::debug!(
                "automation `{}`: cannot poll the pipes of the agent of task {}: {err}",
                run.automation,
                short_id(run.task_id)
            );
            thread::sleep(wait);
        }
        output.tell(observer);
        step = (step * 2).min(STEP);
    };
    // Reap now (the guard would on drop): its group dies, so its pipes end.
    drop(agent);
    let drained = drain(&mut pipes, &mut |stream, chunk: Chunk<'_>| {
        output.take(stream, chunk)
    });
    // What the stream said is told now, with what was read of it: a stream still open
    // (below) is forwarded, not read any more.
    output.end_stream(observer, &reason);
    // What was read by now: a pipe still open is forwarded, not quoted.
    let quoted = output.tail.quoted();
    if !matches!(drained, Ok(true)) {
        tracing::warn!(
            "automation `{}`: the output of the agent of task {} is still open after it ended \
             (a process that left its group holds it); it is forwarded in the background",
            run.automation,
            short_id(run.task_id)
        );
        if let Err(err) = forward_in_background(
            pipes,
            Box::new(move |stream, chunk: Chunk<'_>| output.take(stream, chunk)),
        ) {
            tracing::warn!("cannot start a thread to forward it ({err}); it is dropped");
        }
    }
    (reason, quoted)
}

/// Whether a running agent must be stopped now, and why.
fn expired(
    limits: &AgentLimits,
    stop: &Stop,
    running_for: Duration,
    last_byte: Instant,
    now: Instant,
) -> Option<EndReason> {
    if stop.forced() {
        return Some(EndReason::Interrupted);
    }
    if let Some(limit) = limits.timeout.filter(|limit| running_for >= *limit) {
        return Some(EndReason::Timeout { limit });
    }
    limits
        .stall
        .filter(|limit| now.saturating_duration_since(last_byte) >= *limit)
        .map(|limit| EndReason::Stalled { limit })
}

/// SIGTERM to the agent's process group and to the agent itself (in case it left the
/// group). Only for an agent not reaped yet, so its id is still its own.
#[cfg(unix)]
fn ask_to_stop(agent: &mut ProcessGuard) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    let pid = i32::try_from(agent.id()).ok().and_then(Pid::from_raw);
    // Never signal group 1 (`kill(-1)` means "every process").
    if let Some(pid) = pid.filter(|pid| pid.as_raw_nonzero().get() > 1) {
        let _ = kill_process_group(pid, Signal::TERM);
        let _ = kill_process(pid, Signal::TERM);
    }
}

/// No SIGTERM elsewhere than Unix: the agent is killed at once.
#[cfg(not(unix))]
fn ask_to_stop(agent: &mut ProcessGuard) {
    agent.kill();
}

/// How an agent that ended by itself ended.
fn ended(status: ExitStatus) -> EndReason {
    if let Some(code) = status.code() {
        return EndReason::Exit { code };
    }
    EndReason::Signal {
        signal: signal_of(status),
    }
}

/// The signals that stop a service (and the `128 + signal` exit statuses a program
/// that catches one conventionally ends with): SIGHUP, SIGINT, SIGTERM.
const STOP_SIGNALS: [i32; 3] = [1, 2, 15];

/// [`ended`], but an agent that a stop signal ended while the host itself is stopping
/// was stopped by the same shutdown, not by a failure: interrupted (not finished,
/// handed over again). A service manager signals every process of the service at once
/// (systemd's default `KillMode=control-group`), and a terminal may signal a whole
/// session: without this, every task running at a `systemctl stop` would be finished
/// as failed, lost to its queue.
fn ended_while(status: ExitStatus, stop: &Stop) -> EndReason {
    let reason = ended(status);
    let stop_signal = match &reason {
        EndReason::Signal {
            signal: Some(signal),
        } => STOP_SIGNALS.contains(signal),
        EndReason::Exit { code } => STOP_SIGNALS.iter().any(|signal| 128 + signal == *code),
        _ => false,
    };
    // The host's own signal may be counted a moment after the agent's death is seen
    // (another thread counts it; a service manager sends them in some order): a short
    // wait, on this path only.
    if stop_signal && stop.requested_within(STOP_SIGNAL_WAIT) {
        EndReason::Interrupted
    } else {
        reason
    }
}

/// How long an agent ended by a stop signal waits for the host's own stop request
/// before it counts as a failed attempt ([`ended_while`]).
const STOP_SIGNAL_WAIT: Duration = Duration::from_millis(500);

/// The signal that killed a process.
#[cfg(unix)]
fn signal_of(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// The signal that killed a process: none elsewhere than Unix.
#[cfg(not(unix))]
fn signal_of(_: ExitStatus) -> Option<i32> {
    None
}

#[cfg(all(test, unix))]
mod tests;

/// A provider's stream as an attempt reads it, with real processes (`sh`).
#[cfg(all(test, unix))]
mod stream_tests {
    use std::sync::Mutex;

    use super::*;
    use curupira_agents::stream::Summary;

    /// Keeps what the stream said.
    #[derive(Debug, Default)]
    struct Kept(Mutex<Vec<Summary>>);

    impl AgentObserver for Kept {
        fn spawned(&self, _: u32, _: SpawnWindow) {}
        fn reaped(&self, _: u32) {}
        fn stream_read(&self, summary: Summary) {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(summary);
        }
    }

    /// The codes of the diagnostics of a Claude stream that `script` prints.
    fn codes(script: &str) -> Vec<&'static str> {
        let dir = std::env::temp_dir();
        let command = ["sh".to_owned(), "-c".to_owned(), script.to_owned()];
        let run = AgentRun {
            command: &command,
            config_dir: &dir,
            cwd: &dir,
            prompt: "",
            automation: "fix",
            task_id: "0123456789abcdef",
            repository: "",
            branch: None,
            env: &[],
            stream: Some(curupira_agents::Provider::Claude),
        };
        let kept = Kept::default();
        run_attempt_observed(&run, &AgentLimits::default(), &Stop::new(), Some(&kept));
        let summaries = kept
            .0
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        assert_eq!(summaries.len(), 1, "{summaries:?}");
        summaries[0].diagnostics.iter().map(|d| d.code).collect()
    }

    #[test]
    fn a_stream_cut_short_is_a_diagnostic_only_when_its_agent_succeeded() {
        let start = r#"printf '%s\nnot json\n' '{"type":"system","session_id":"s"}'"#;
        assert_eq!(
            codes(&format!("{start}; exit 1")),
            ["agent/stream-not-json"],
            "an agent that failed may stop anywhere"
        );
        assert_eq!(
            codes(&format!("{start}; kill -9 $$")),
            ["agent/stream-not-json"],
            "nor one killed"
        );
        assert_eq!(
            codes(&format!("{start}; exit 0")),
            ["agent/stream-not-json", "agent/stream-no-result"],
            "one that succeeded should have closed its stream"
        );
    }
}
