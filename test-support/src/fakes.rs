//! The fake extensions the host's tests launch (in this crate's `fakes/` folder), and
//! the one rule for when `python3` (which runs them), or another tool a test needs, is
//! missing.
//!
//! - `fake_ext.py --mode NAME`: misbehaves in exactly one way (the hostile suite).
//! - `scripted_ext.py`: does what a script file tells it and logs every request (the
//!   `run` pipeline tests).
//!
//! Both use the Python 3 standard library only. Without `python3` a test that needs
//! them prints that it skipped and passes, except under CI (`CI` set), where the
//! missing interpreter fails the test: CI must never pass by skipping.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The hostile fake: `fake_ext.py`.
pub fn hostile_script() -> PathBuf {
    folder().join("fake_ext.py")
}

/// The scripted fake: `scripted_ext.py`.
///
/// ```
/// assert!(curupira_test_support::fakes::scripted_script().is_file());
/// ```
pub fn scripted_script() -> PathBuf {
    folder().join("scripted_ext.py")
}

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fakes")
}

/// Whether `python3` runs. When it does not: panics under CI, else prints
/// `skipped: … needs python3 on PATH` naming `what` and returns `false`.
pub fn python_or_skip(what: &str) -> bool {
    tool_or_skip("python3", what)
}

/// Whether `program --version` runs: the one rule for every tool a test needs (python3,
/// node, bash). When it does not: panics under CI (`CI` set: CI must never pass by
/// skipping), else prints `skipped: WHAT needs PROGRAM on PATH` and returns `false`.
pub fn tool_or_skip(program: &str, what: &str) -> bool {
    tool_or_skip_asking(program, "--version", what)
}

/// [`tool_or_skip`] for a tool that says its version to another argument (`tmux -V`).
pub fn tool_or_skip_asking(program: &str, version_argument: &str, what: &str) -> bool {
    let ok = Command::new(program)
        .arg(version_argument)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} needs {program} on PATH, and CI (`CI` is set) must not skip it"
        );
        eprintln!("skipped: {what} needs {program} on PATH");
    }
    ok
}
