//! Every call the Spirit app's extension host recorded in
//! `../shared/conformance/spirit-app/runtime/calls.json` (see the README's "runtime/"
//! and "Running tools and system prompts"), made again with `curupira spirit run-tool`
//! / `spirit system-prompt` on a copy of the package, and compared: success or
//! failure, the text the model receives (`result`, `result_type`), the stored
//! settings after the call, the system prompt. Every mismatch is listed in one
//! failure. Skipped (with the reason) when the folder or `node` is missing; the
//! fixtures of `spirit_run.rs` cover the same rules.
//!
//! The app's system-prompt collection never fails: a package our check refuses (no
//! `main`, tools without the tool capabilities) gets `"system_prompt": null` and
//! exit 1, so for `system-prompt` calls the prompt is compared and the command must
//! answer in JSON.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use curupira_test_support::fakes;
use curupira_test_support::fs::copy_dir;
use serde_json::Value;

fn runtime_dir() -> PathBuf {
    curupira_test_support::conformance::folder("spirit-app/runtime")
}

/// `value` with every `directoryPath`, `manifestPath` and `cwd` member replaced.
fn masked(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = if ["directoryPath", "manifestPath", "cwd"].contains(&key.as_str())
                    {
                        Value::from("<masked>")
                    } else {
                        masked(value)
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(masked).collect()),
        other => other.clone(),
    }
}

/// Whether two result texts are the same, after the mask when `compare` asks for it.
fn same_text(ours: &Value, theirs: &Value, compare: Option<&str>) -> bool {
    if compare != Some("json-mask-paths") {
        return ours == theirs;
    }
    let parse = |v: &Value| {
        v.as_str()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
    };
    match (parse(ours), parse(theirs)) {
        (Some(a), Some(b)) => masked(&a) == masked(&b),
        _ => false,
    }
}

/// What is wrong with our answer to `call`, one line each.
fn mismatches(call: &Value, work: &Path) -> Vec<String> {
    let case = call["case"].as_str().unwrap();
    let package = call["package"].as_str().unwrap();
    let source = runtime_dir().join(package);
    let copy = work
        .join(case)
        .join(Path::new(package).file_name().unwrap());
    copy_dir(&source, &copy);
    let real = &call["real"];
    let mut args: Vec<String> = vec!["spirit".into(), call["call"].as_str().unwrap().into()];
    args.push(copy.to_str().unwrap().into());
    if call["call"] == "run-tool" {
        args.push(call["tool"].as_str().unwrap().into());
        args.push("--arguments".into());
        args.push(call["arguments"].to_string());
    }
    args.extend(["--host".into(), call["host"].as_str().unwrap().into()]);
    let mut settings_file = None;
    for (member, flag) in [("settings", "--settings"), ("secrets", "--secrets")] {
        if !call[member].is_null() {
            let file = work.join(case).join(format!("{member}.json"));
            std::fs::write(&file, call[member].to_string()).unwrap();
            args.extend([flag.into(), file.to_str().unwrap().into()]);
            if member == "settings" {
                settings_file = Some(file);
            }
        }
    }
    args.extend(["--format".into(), "json".into()]);
    let output = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let code = output.status.code();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let Ok(ours) = serde_json::from_slice::<Value>(&output.stdout) else {
        return vec![format!(
            "{case}: no JSON answer (exit {code:?}): {}",
            stderr.trim()
        )];
    };
    let mut found = Vec::new();
    let mut differ = |what: &str, ours: &Value, theirs: &Value| {
        found.push(format!("{case}: {what}: ours {ours}, the app's {theirs}"));
    };
    if call["call"] == "run-tool" {
        let ok = real["ok"] == true;
        if ok != (code == Some(0)) || !(code == Some(0) || code == Some(1)) {
            differ(
                "success",
                &Value::from(format!("exit {code:?}, error {}", ours["error"])),
                &Value::from(if ok {
                    "ok".to_owned()
                } else {
                    format!("failed: {}", real["error"])
                }),
            );
        }
        if ok {
            if !same_text(&ours["result"], &real["result"], call["compare"].as_str()) {
                differ("result", &ours["result"], &real["result"]);
            }
            if ours["result_type"] != real["result_type"] {
                differ("result_type", &ours["result_type"], &real["result_type"]);
            }
        }
    } else {
        if !(code == Some(0) || code == Some(1)) {
            differ("exit", &Value::from(code), &Value::from(0));
        }
        if ours["system_prompt"] != real["system_prompt"] {
            differ(
                "system_prompt",
                &ours["system_prompt"],
                &real["system_prompt"],
            );
        }
    }
    if let Some(after) = real.get("settings_after") {
        if &ours["settings_after"] != after {
            differ("settings_after", &ours["settings_after"], after);
        }
        if let Some(file) = settings_file {
            let written: Value =
                serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            if &written != after {
                differ("the settings file after", &written, after);
            }
        }
    }
    found
}

#[test]
fn every_recorded_call_answers_as_the_app_did() {
    let calls_file = runtime_dir().join("calls.json");
    if !calls_file.is_file() {
        eprintln!("skipped: {} is missing", calls_file.display());
        return;
    }
    if !fakes::tool_or_skip("node", "`every_recorded_call_answers_as_the_app_did`") {
        return;
    }
    let calls: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&calls_file).unwrap()).unwrap();
    assert!(!calls.is_empty());
    let work = tempfile::tempdir().unwrap();
    let found: Vec<String> = calls
        .iter()
        .flat_map(|call| mismatches(call, work.path()))
        .collect();
    assert!(
        found.is_empty(),
        "{} of {} calls differ from the app:\n{}",
        found.len(),
        calls.len(),
        found.join("\n")
    );
}
