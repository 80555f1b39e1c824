//! The reference host's `validate` verdicts (`recordings/reference-host/validate.json`,
//! recorded from `curupira` 0.4.0) on the file alone: a file it accepts has no error
//! here, and a file it refuses has one, at the place it names. The refusals that need
//! more than the file (an extension's trigger types, a plugin that cannot start) are
//! the host's, and are checked by its own tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;

/// Refusals the file alone cannot show: the trigger types of a registered plugin are
/// known only once it runs.
const DECIDED_BY_THE_HOST: &[&str] = &[
    "automation trigger_type unknown local in alias",
    "automation trigger_type missing",
    // The fields a prompt may use are the trigger's (`cron`'s are none).
    "validate: an unknown prompt field",
];

/// `cron` files the reference accepts at `validate` and refuses only at `run` (a date
/// it cannot read), or never (`[agents.defaults] timezone` of an automation that has
/// its own… and of one that has none, which it reads as UTC): refused here at once.
const STRICTER: &[&str] = &[
    "validate: an unknown [agents.defaults] timezone",
    "validate: start_date yesterday",
    "validate: start_date without a zone",
    "validate: start_date a number",
    "validate: end_date 2026-02-30",
];

/// The recorded cases: `validate.json`, then the `cron` group's.
fn cases() -> Vec<Value> {
    ["validate.json", "cron.json"]
        .iter()
        .flat_map(|file| recorded(file))
        .collect()
}

fn recorded(file: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../recordings/reference-host")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let recorded: Value = serde_json::from_str(&text).unwrap();
    recorded["cases"].as_array().unwrap().clone()
}

#[test]
fn every_file_the_reference_accepts_or_refuses_gets_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().display().to_string();
    let mut config = String::new();
    let mut checked = 0;
    let mut disagreements = Vec::new();
    for case in cases() {
        let name = case["case"].as_str().unwrap();
        if let Some(lines) = case["config"].as_array() {
            config = lines
                .iter()
                .map(|line| line.as_str().unwrap())
                .collect::<Vec<_>>()
                .join("\n")
                .replace("<workdir>", &workdir)
                .replace("<venv>", &workdir)
                .replace("<home>", &workdir);
        }
        let command = case["command"].as_str().unwrap();
        if !command.starts_with("curupira validate --config settings.toml")
            || DECIDED_BY_THE_HOST.contains(&name)
        {
            continue;
        }
        checked += 1;
        let loaded = curupira_config::check_bytes(config.as_bytes(), "settings.toml", dir.path());
        let errors: Vec<String> = loaded
            .report
            .diagnostics()
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{} at {}: {}", d.code, d.path, d.message))
            .collect();
        let refused = case["exit_code"] == 2 || STRICTER.contains(&name);
        if refused == errors.is_empty() {
            disagreements.push(format!(
                "{name}: the reference exits {}, here {errors:?}",
                case["exit_code"]
            ));
        }
        let form = loaded.readable().map(|config| config.form);
        if form.is_some_and(|form| form != curupira_config::Form::Reference) {
            disagreements.push(format!("{name}: not read in the reference form"));
        }
    }
    assert!(checked > 120, "only {checked} cases");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn the_listed_exceptions_are_still_recorded() {
    let names: Vec<String> = cases()
        .iter()
        .map(|case| case["case"].as_str().unwrap().to_owned())
        .collect();
    for name in DECIDED_BY_THE_HOST.iter().chain(STRICTER) {
        assert!(
            names.iter().any(|known| known == name),
            "{name} is not recorded"
        );
    }
}
