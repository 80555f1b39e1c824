//! Running the coding agent for one task (SPEC section 1, step 6).
//!
//! - The command is the configured array: program, then arguments. A program
//!   containing `/` that is not absolute is relative to the config's folder (like a
//!   manifest's `command`); otherwise it is looked up on `PATH`.
//! - The working directory is the config's folder.
//! - The prompt is written to the agent's stdin from a thread, then stdin is closed; an
//!   agent that does not read its stdin is fine (the write error is ignored), and a
//!   large prompt cannot deadlock against an agent that writes before it reads.
//! - The environment is the host's plus `CURUPIRA_AUTOMATION`, `CURUPIRA_TASK_ID` and
//!   `CURUPIRA_REPOSITORY` (the empty string when no repository is known).
//! - stdout and stderr both go to the host's stderr, so the host's stdout carries only
//!   events.
//! - On Unix the agent runs in a process group of its own, so the first Ctrl-C stops
//!   the host's loop without killing the task in flight; a second SIGINT/SIGTERM kills
//!   the agent's group (see [`Stop`]). It lives in a [`ProcessGuard`], so whatever
//!   happens it is killed and reaped, and what it left in its group is killed when it
//!   exits.
//! - There is no timeout: a coding agent may legitimately work for a long time.

use std::io::{self, Write};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::thread;
use std::time::Duration;

use curupira_client::{LaunchCommand, ProcessGuard, describe_status};

use crate::stop::Stop;

/// What the agent is given.
#[derive(Debug, Clone, Copy)]
pub struct AgentRun<'a> {
    /// Program and arguments (non-empty).
    pub command: &'a [String],
    /// The working directory, and the base of a relative program path.
    pub cwd: &'a Path,
    /// The rendered prompt, written to stdin.
    pub prompt: &'a str,
    /// `CURUPIRA_AUTOMATION`.
    pub automation: &'a str,
    /// `CURUPIRA_TASK_ID`.
    pub task_id: &'a str,
    /// `CURUPIRA_REPOSITORY`.
    pub repository: &'a str,
}

/// How the agent ended.
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

/// Runs the agent to the end and reports how it ended; it never fails as a call
/// (a program that cannot be started is an outcome with an `error`).
pub fn run_agent(run: &AgentRun<'_>, stop: &Stop) -> AgentOutcome {
    match spawn_and_wait(run, stop) {
        Ok(status) => match status.code() {
            Some(code) => AgentOutcome {
                exit_code: Some(code),
                error: None,
            },
            None => AgentOutcome {
                exit_code: None,
                error: Some(format!("the agent {}", describe_status(status))),
            },
        },
        Err(err) => AgentOutcome {
            exit_code: None,
            error: Some(err),
        },
    }
}

fn spawn_and_wait(run: &AgentRun<'_>, stop: &Stop) -> Result<ExitStatus, String> {
    let Some((program, args)) = run.command.split_first() else {
        return Err("the agent command is empty".to_owned());
    };
    let program_path = Path::new(program);
    let program_path = if program.contains('/') && program_path.is_relative() {
        run.cwd.join(program_path)
    } else {
        program_path.to_owned()
    };
    let mut command = LaunchCommand::new(program_path, run.cwd)
        .args(args)
        .env("CURUPIRA_AUTOMATION", run.automation)
        .env("CURUPIRA_TASK_ID", run.task_id)
        .env("CURUPIRA_REPOSITORY", run.repository)
        .command();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::from(io::stderr()))
        .stderr(Stdio::from(io::stderr()));
    let mut agent = ProcessGuard::spawn(&mut command)
        .map_err(|err| format!("cannot start the agent `{program}`: {err}"))?;
    let writer = agent.take_stdin().map(|mut stdin| {
        let prompt = run.prompt.as_bytes().to_vec();
        thread::Builder::new()
            .name("agent-stdin".to_owned())
            .spawn(move || {
                // An agent that exits without reading its stdin is not an error.
                let _ = stdin.write_all(&prompt);
            })
    });
    let signals_at_start = stop.count();
    let status = loop {
        match agent.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {
                if stop.count() > signals_at_start.max(1) {
                    tracing::warn!(
                        "second stop signal: killing the agent of task {}",
                        run.task_id
                    );
                    agent.kill();
                    break agent
                        .wait()
                        .map_err(|err| format!("cannot wait for the agent: {err}"));
                }
                thread::sleep(Duration::from_millis(10));
            }
            // Dropping the guard (below) kills and reaps it.
            Err(err) => break Err(format!("cannot wait for the agent: {err}")),
        }
    };
    drop(agent);
    // The agent is gone and whatever it started in its group went with it (killed
    // before the agent was reaped), which also unblocks a prompt writer stuck on a
    // pipe held open by a descendant.
    if let Some(Ok(handle)) = writer {
        let _ = handle.join();
    }
    status
}
