//! `jinja::JinjaPrompt` against the reference host's recorded verdicts.
//!
//! `recordings/reference-host/prompts.json` holds what `curupira` 0.4.0 did with 107
//! prompts (README section "4. Prompts"); `tests/jinja/probes.json` holds more of the
//! same, recorded from the same binary for the rules the first file leaves open (see
//! `tests/jinja/README.md`). Every case is replayed: the extension declares
//! `prompt_fields` `["title", "n"]`, the host variables are `automation` = `e1` and
//! `repository` = `acme/widgets`.
//!
//! - `validate`: the same exit class (0, or 2 with the same `Configuration error:` line);
//! - `run --dry-run` and `run`: `validate` first (exit 2), then the same prompt (the
//!   text between `--- prompt ---` and `--- end prompt ---`, or what the agent got), or
//!   the same `Dispatch error:` line (exit 1).
#![cfg(feature = "jinja")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use curupira_template::jinja::JinjaPrompt;
use serde_json::Value;

/// The extension's `prompt_fields` and the host variables.
const DECLARED: [&str; 4] = ["automation", "repository", "title", "n"];
const HOST: [(&str, &str); 2] = [("automation", "e1"), ("repository", "acme/widgets")];
/// What the host puts before our error's text.
const AUTOMATION: &str = "automation \"e1\": ";

/// Cases whose verdict does not come from the renderer (git, the agent, the extension),
/// by name, with the reason. The test fails if one of them starts to match, so the list
/// cannot go stale. Empty: every recorded case is decided by the prompt and the item.
const NOT_THE_RENDERER: &[(&str, &str)] = &[];

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// `validate` passed.
    Valid,
    /// The prompt, as the dry run shows it or as the agent received it.
    Prompt(String),
    /// `Configuration error: …` (exit 2).
    Configuration(String),
    /// `Dispatch error: …` (exit 1).
    Dispatch(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Command {
    Validate,
    DryRun,
    Run,
}

struct Case {
    name: String,
    command: Command,
    prompt: String,
    item: Vec<(String, String)>,
    recorded: Verdict,
}

fn load(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
    let json: Value = serde_json::from_str(&text).unwrap();
    json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| {
            let name = record["case"].as_str().unwrap().to_owned();
            let command = match record["command"].as_str().unwrap() {
                c if c.starts_with("curupira validate") => Command::Validate,
                c if c.starts_with("curupira run --dry-run") => Command::DryRun,
                c if c.starts_with("curupira run") => Command::Run,
                other => panic!("{name}: command {other:?}"),
            };
            let item = record["item_values"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(key, value)| (key.clone(), value.as_str().unwrap().to_owned()))
                .collect();
            let recorded = recorded_verdict(&name, command, record);
            Case {
                prompt: record["prompt"].as_str().unwrap().to_owned(),
                name,
                command,
                item,
                recorded,
            }
        })
        .collect()
}

fn lines(record: &Value, stream: &str) -> Vec<String> {
    record[stream]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line.as_str().unwrap().to_owned())
        .collect()
}

/// The reference's verdict, read from its exit code and output.
fn recorded_verdict(name: &str, command: Command, record: &Value) -> Verdict {
    let stdout = lines(record, "stdout");
    let stderr = lines(record, "stderr");
    let only = |prefix: &str| match stderr.as_slice() {
        [line] => line
            .strip_prefix(prefix)
            .unwrap_or_else(|| panic!("{name}: stderr {line:?} lacks {prefix:?}"))
            .to_owned(),
        other => panic!("{name}: expected one stderr line, got {other:?}"),
    };
    match record["exit_code"].as_i64().unwrap() {
        2 => Verdict::Configuration(only("Configuration error: ")),
        1 => Verdict::Dispatch(only("Dispatch error: ")),
        0 => match command {
            Command::Validate => Verdict::Valid,
            Command::DryRun => {
                let start = stdout.iter().position(|l| l == "--- prompt ---").unwrap();
                let end = stdout
                    .iter()
                    .position(|l| l == "--- end prompt ---")
                    .unwrap();
                Verdict::Prompt(stdout[start + 1..end].join("\n"))
            }
            Command::Run => {
                let prompts = record["agent_prompts"].as_array().unwrap();
                assert_eq!(prompts.len(), 1, "{name}: one agent call");
                Verdict::Prompt(prompts[0].as_str().unwrap().to_owned())
            }
        },
        other => panic!("{name}: exit code {other}"),
    }
}

/// Our verdict for the same command.
fn our_verdict(case: &Case) -> Verdict {
    let prompt = match JinjaPrompt::compile(&case.prompt, DECLARED) {
        Ok(prompt) => prompt,
        Err(error) => return Verdict::Configuration(format!("{AUTOMATION}{error}")),
    };
    if case.command == Command::Validate {
        return Verdict::Valid;
    }
    let fields = case
        .item
        .iter()
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .chain(HOST);
    match prompt.render(fields) {
        // The dry run prints the prompt and then a line break unless it ends with one.
        Ok(text) if case.command == Command::DryRun => {
            Verdict::Prompt(text.strip_suffix('\n').unwrap_or(&text).to_owned())
        }
        Ok(text) => Verdict::Prompt(text),
        Err(error) => Verdict::Dispatch(format!("{AUTOMATION}{error}")),
    }
}

fn replay(file: &Path, at_least: usize) {
    let cases = load(file);
    assert!(
        cases.len() >= at_least,
        "{}: only {} cases",
        file.display(),
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let ours = our_verdict(case);
        let matches = ours == case.recorded;
        match NOT_THE_RENDERER.iter().find(|(name, _)| *name == case.name) {
            Some((_, why)) if matches => failures.push(format!(
                "{}: listed as not matching ({why}), but it matches now: remove it from the list",
                case.name
            )),
            Some(_) => {}
            None if !matches => failures.push(format!(
                "{}\n    prompt:    {:?}\n    reference: {:?}\n    ours:      {ours:?}",
                case.name, case.prompt, case.recorded
            )),
            None => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases of {} disagree:\n{}",
        failures.len(),
        cases.len(),
        file.display(),
        failures.join("\n")
    );
}

#[test]
fn every_recorded_prompt_case_matches_the_reference() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings/reference-host/prompts.json");
    replay(&file, 107);
}

#[test]
fn every_probe_matches_the_reference() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jinja/probes.json");
    replay(&file, 100);
}

#[test]
fn the_list_of_exceptions_names_recorded_cases() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings/reference-host/prompts.json");
    let names: Vec<String> = load(&file).into_iter().map(|case| case.name).collect();
    for (name, _) in NOT_THE_RENDERER {
        assert!(names.iter().any(|n| n == name), "no recorded case {name:?}");
    }
}
