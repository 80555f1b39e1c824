//! Every recorded scenario of the reference host `curupira` 0.4.0 with its
//! `settings.toml` (`recordings/reference-host/`: `validate`, `repositories` and
//! `prompts`, 345 cases, and `cron`'s 62) replayed against this host by the same script that recorded
//! them (`record.py --host`), and compared by `compare.py`: the same exit code, the
//! same stdout (`ok`/`fail`/`dry-run` lines, `Configuration is valid`), the same agent
//! command lines, working directory kind (worktree, shared checkout, base path) and
//! branch, the same `configuration` reaching the extension, and `setup_script` run as
//! often. What differs on purpose is listed below with its reason; a listed case that
//! starts to agree fails the test too, so the list stays true. (The `commands` group,
//! with its signals and waits, is replayed by hand: `record.py --host`, see the
//! recordings' README.) The `reload` group (`run --watch` while its file changes) is
//! replayed too, by a test of its own that runs beside the first.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// What is compared: what a script or a person sees of a run.
const FIELDS: &str = "exit_code,stdout,agent_calls.argv,agent_calls.count,agent_calls.cwd_kind,\
                      agent_calls.branch,agent_calls.stdin,ext_validate_configuration,\
                      setup_script_runs";

/// The cases where this host differs on purpose, and why.
const INTENDED: &[(&str, &str)] = &[
    (
        "settings.workspace_dir relative [run --size 1]",
        "a relative workspace_dir is read from the config's folder (with a warning), where \
         the reference keeps it relative and fails its task",
    ),
    (
        "repositories: path relative [run --size 1]",
        "a relative path is read from the config's folder, as above",
    ),
    (
        "profile provider = opencode",
        "validate runs `opencode --version` to check the version the reference refuses at \
         dispatch",
    ),
    (
        "profile provider = opencode [run --size 1]",
        "the version is checked before the first task too, then again as the reference \
         does: one `opencode --version` more",
    ),
    (
        "profile provider = opencode with model+effort",
        "as `profile provider = opencode`",
    ),
    (
        "profile provider = opencode with model+effort [run --size 1]",
        "as `profile provider = opencode [run --size 1]`",
    ),
    (
        "plugins: unused plugin that cannot start",
        "the reference stops at the plugin that cannot start (exit 1); this host goes on and \
         checks the automations' own extension too, in the same pass (also exit 1)",
    ),
    (
        "profile provider = gemini with model+effort [run --size 1]",
        "the reference fails each task of the profile at dispatch (exit 1); this host \
         refuses the automation before anything starts (exit 2)",
    ),
    (
        "validate: an unknown [agents.defaults] timezone",
        "a cron automation without its own `timezone` is read in `[agents.defaults] \
         timezone`: a name that is not a zone is refused at validate (the reference reads \
         it as UTC)",
    ),
    (
        "validate: start_date yesterday",
        "a date the cron trigger cannot read is refused at validate (config/schedule); the \
         reference accepts it there and refuses it at run",
    ),
    (
        "validate: start_date without a zone",
        "as `validate: start_date yesterday`",
    ),
    (
        "validate: start_date a number",
        "as `validate: start_date yesterday`",
    ),
    (
        "validate: end_date 2026-02-30",
        "as `validate: start_date yesterday`",
    ),
    (
        "run: start_date a TOML date-time",
        "a TOML date-time is read as the instant it is: the window starts then and its \
         latest tick runs; the reference ignores a `start_date` that is not a string, so the \
         window starts when it first sees the automation, after the window ended",
    ),
];

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

#[test]
fn the_reference_host_s_recorded_scenarios_get_the_same_results_here() {
    replay(&["validate", "repositories", "prompts", "cron"], INTENDED);
}

/// The cases of the `reload` group where this host differs on purpose: the reference
/// host 0.4.0 takes up no change of its file during `run --watch`; this one reloads it.
const RELOAD_INTENDED: &[(&str, &str)] = &[
    (
        "run --watch, prompt edited after 3 s, a 2nd item after 6 s, SIGINT after 12 s",
        "the item polled after the edit gets the edited prompt (the reference keeps the old \
         one until it restarts)",
    ),
    (
        "run --watch, automation e2 added after 3 s, SIGINT after 12 s",
        "the added automation polls and dispatches its item (the reference ignores it)",
    ),
];

/// `run --watch` while its file changes (about 40 s of waiting, beside the test above).
/// A broken file is refused by both hosts, which keep running the old one.
#[test]
fn a_changed_settings_file_is_reloaded_where_the_reference_ignores_it() {
    replay(&["reload"], RELOAD_INTENDED);
}

/// Replays `groups` against this host; what differs must be `intended`, and all of it.
fn replay(groups: &[&str], intended: &[(&str, &str)]) {
    if !have("python3") || !have("git") {
        println!("skipped: python3 and git are needed to replay the recordings");
        return;
    }
    let recordings = run_support::recordings();
    let mut differing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let out = tempfile::tempdir().unwrap();
    let replayed =
        run_support::replay_recordings(Path::new("python3"), out.path(), groups, FIELDS, None);
    for (group, found) in replayed {
        let recorded = recordings.join(format!("{group}.json"));
        let cases: Value =
            serde_json::from_str(&std::fs::read_to_string(&recorded).unwrap()).unwrap();
        for (case, fields) in found {
            let record = cases["cases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["case"] == case.as_str());
            // Where the reference refuses the file (exit 2) it stops at the first
            // problem; this host checks every part in one pass, extensions included.
            let refused = record.is_some_and(|c| c["exit_code"] == 2);
            if refused && fields == ["ext_validate_configuration"] {
                continue;
            }
            differing.insert(case, fields);
        }
    }
    let unexpected: Vec<String> = differing
        .iter()
        .filter(|(case, _)| !intended.iter().any(|(known, _)| known == case))
        .map(|(case, fields)| format!("{case}: {fields:?}"))
        .collect();
    let agreeing: Vec<&str> = intended
        .iter()
        .map(|(case, _)| *case)
        .filter(|case| !differing.contains_key(*case))
        .collect();
    assert!(
        unexpected.is_empty(),
        "differs from the reference host (replay: python3 recordings/reference-host/record.py \
         --host target/debug/curupira OUT GROUP; then compare.py):\n{}",
        unexpected.join("\n")
    );
    assert!(
        agreeing.is_empty(),
        "listed as differing on purpose, but agrees now: {agreeing:?}"
    );
}
