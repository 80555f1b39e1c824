//! `curu`, the short name the reference host installs beside `curupira`: the same
//! program. It runs the `curupira` in its own folder with the same arguments, named
//! `curu` (its `argv[0]`, so that the help says `Usage: curu …`, as the reference's
//! alias does); on Unix it becomes that process (`exec`), so signals, exit codes and
//! the dispatch lock are `curupira`'s own.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// Exit code when `curupira` cannot be started (as for any I/O error of the host).
const CANNOT_START: u8 = 2;

fn main() -> ExitCode {
    let Some(curupira) = sibling() else {
        eprintln!("error: curu cannot find its own folder, where `curupira` is");
        return ExitCode::from(CANNOT_START);
    };
    let mut command = Command::new(&curupira);
    command.args(std::env::args_os().skip(1));
    let error = run(&mut command);
    eprintln!(
        "error: curu cannot run `{}`: {error} (curu is an alias of curupira, installed beside it)",
        curupira.display()
    );
    ExitCode::from(CANNOT_START)
}

/// The `curupira` beside this executable.
fn sibling() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let name = format!("curupira{}", std::env::consts::EXE_SUFFIX);
    Some(exe.parent()?.join(name))
}

/// Becomes `command`, named `curu`; returns only when that fails.
#[cfg(unix)]
fn run(command: &mut Command) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    command.arg0("curu").exec()
}

/// Runs `command` and exits with its code (no `exec` here).
#[cfg(not(unix))]
fn run(command: &mut Command) -> std::io::Error {
    match command.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(i32::from(CANNOT_START))),
        Err(error) => error,
    }
}
