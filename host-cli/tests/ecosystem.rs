//! Tests against the published Curupira packages themselves (`tests/ecosystem_support`:
//! installed with `pip` into a venv under `target/`). Without them (no network) each
//! test is reported ignored, with the reason, in `cargo test`'s output and summary;
//! under `.ci/run`, which sets `CURUPIRA_ECOSYSTEM_REQUIRED`, it fails instead. This
//! file has its own harness (`libtest-mimic`) so that the skip is decided at run time.
//!
//! Today it checks the installation the interoperability tests of issues 25 and 26
//! stand on; those tests join it here.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod ecosystem_support;
mod run_support;

use std::process::Command;

use ecosystem_support::{Ecosystem, PACKAGES, REQUIRED_VAR, ecosystem, required};
use libtest_mimic::{Arguments, Completion, Trial};

/// A trial that needs the ecosystem: ignored (or, when required, failed) without it.
fn with_ecosystem(name: &'static str, test: fn(&Ecosystem)) -> Trial {
    Trial::ignorable_test(name, move || match ecosystem() {
        Ok(installed) => {
            test(&installed);
            Ok(Completion::Completed)
        }
        Err(reason) if required() => Err(format!(
            "the published Curupira packages are needed ({REQUIRED_VAR} is set): {reason}"
        )
        .into()),
        Err(reason) => Ok(Completion::ignored_with(format!(
            "skipped: the published Curupira packages could not be installed: {reason}"
        ))),
    })
}

fn main() {
    let args = Arguments::from_args();
    let trials = vec![with_ecosystem(
        "the_published_packages_are_installed_at_their_pins",
        the_published_packages_are_installed_at_their_pins,
    )];
    libtest_mimic::run(&args, trials).exit();
}

/// The venv holds each package at its pin, the SDK imports, and the reference host
/// runs and says its version.
fn the_published_packages_are_installed_at_their_pins(installed: &Ecosystem) {
    let script = "import importlib.metadata as m, sys, curupira_sdk\n\
                  for name in sys.argv[1:]:\n    print(name, m.version(name))";
    let mut python = Command::new(installed.bin("python"));
    python.arg("-c").arg(script);
    python.args(PACKAGES.iter().map(|(name, _)| *name));
    let output = python.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let versions = String::from_utf8(output.stdout).unwrap();
    let expected: String = PACKAGES
        .iter()
        .map(|(name, version)| format!("{name} {version}\n"))
        .collect();
    assert_eq!(versions, expected);

    let host = Command::new(installed.bin("curupira"))
        .arg("--version")
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap();
    assert!(host.status.success(), "{host:?}");
    let reference_version = PACKAGES[0].1;
    assert_eq!(
        String::from_utf8_lossy(&host.stdout).trim(),
        format!("curupira {reference_version}")
    );
}
