//! The published Curupira ecosystem, installed for interoperability tests: the
//! reference host `curupira`, the official SDK `curupira-sdk` and the official
//! extensions `curupira-plugins`, at pinned versions, with `pip` from PyPI into one
//! virtual environment cached under the test target folder (`CARGO_TARGET_TMPDIR`,
//! `target/tmp/curupira-ecosystem/`), never vendored.
//!
//! The first test that asks installs it, under an exclusive file lock (test binaries
//! run at once), and marks it ready with the pins it holds; later runs reuse it. When
//! it cannot be installed (no network, no `python3 -m venv`), [`ecosystem`] says why:
//! the tests report themselves ignored with that reason, except when
//! [`REQUIRED_VAR`] is set (`.ci/run` sets it), where they fail: CI never passes
//! without having run them.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run_support::run_bounded;

pub mod github;
use std::time::Duration;

/// The packages and the versions the recordings of `../shared/conformance/
/// curupira-wire/` were made with.
pub const PACKAGES: &[(&str, &str)] = &[
    ("curupira", "0.4.0"),
    ("curupira-sdk", "0.1.0"),
    ("curupira-plugins", "0.1.0"),
];

/// The packaging tools, installed beside them: `maturin` builds a Rust extension's
/// binary into a Python wheel, `uv`'s `uvx` runs it, as the reference host launches
/// extensions (issue 26, "shipping a Rust extension").
/// `trustme` makes the throw-away certificate authority of the GitHub stand-in
/// ([`github`]).
pub const TOOLS: &[(&str, &str)] = &[
    ("maturin", "1.16.0"),
    ("uv", "0.13.9"),
    ("trustme", "1.2.1"),
];

/// Set (to anything) to make a failed install fail the tests instead of skipping them.
pub const REQUIRED_VAR: &str = "CURUPIRA_ECOSYSTEM_REQUIRED";

/// The longest an install may take.
const INSTALL_LIMIT: Duration = Duration::from_secs(600);

/// The installed packages.
#[derive(Debug, Clone)]
pub struct Ecosystem {
    /// The virtual environment.
    pub venv: PathBuf,
}

impl Ecosystem {
    /// A program of the environment (`python`, `curupira`, `pip`, `maturin`, `uvx`).
    pub fn bin(&self, name: &str) -> PathBuf {
        self.venv.join("bin").join(name)
    }
}

/// Whether a failed install must fail the tests.
pub fn required() -> bool {
    std::env::var_os(REQUIRED_VAR).is_some()
}

/// The pins as `pip install` takes them.
fn requirements() -> Vec<String> {
    PACKAGES
        .iter()
        .chain(TOOLS)
        .map(|(name, version)| format!("{name}=={version}"))
        .collect()
}

/// The installed ecosystem, installed now if it is not yet; why not when it cannot be.
pub fn ecosystem() -> Result<Ecosystem, String> {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("curupira-ecosystem");
    fs::create_dir_all(&root).map_err(|err| format!("cannot create {}: {err}", root.display()))?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join("install.lock"))
        .map_err(|err| format!("cannot open the install lock: {err}"))?;
    fs4::FileExt::lock(&lock).map_err(|err| format!("cannot lock the install lock: {err}"))?;
    let venv = root.join("venv");
    let ready = root.join("ready");
    let pins = requirements().join("\n");
    if fs::read_to_string(&ready).is_ok_and(|text| text == pins) && venv.join("bin/python").exists()
    {
        return Ok(Ecosystem { venv });
    }
    let _ = fs::remove_file(&ready);
    let _ = fs::remove_dir_all(&venv);
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    run(
        Command::new(&python).arg("-m").arg("venv").arg(&venv),
        &format!("`{python} -m venv`"),
    )?;
    let mut pip = Command::new(venv.join("bin/pip"));
    pip.args(["install", "--disable-pip-version-check", "--quiet"])
        .args(requirements());
    run(
        &mut pip,
        &format!("`pip install {}`", requirements().join(" ")),
    )?;
    fs::write(&ready, &pins).map_err(|err| format!("cannot mark the install ready: {err}"))?;
    Ok(Ecosystem { venv })
}

/// Runs `command` to its end within [`INSTALL_LIMIT`]; what went wrong as a sentence.
fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let ended =
        run_bounded(command, INSTALL_LIMIT).map_err(|err| format!("{what} cannot start: {err}"))?;
    let tail: Vec<&str> = ended.stderr.lines().rev().take(5).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    match ended.status {
        Some(status) if status.success() => Ok(()),
        Some(status) => Err(format!("{what} failed ({status}): {}", tail.join(" | "))),
        None => Err(format!(
            "{what} took longer than {INSTALL_LIMIT:?} and was stopped"
        )),
    }
}
