//! The Spirit app's invocation names, recorded in
//! `../shared/conformance/spirit-app/invocation-names.json` (31 scenarios: the host's
//! installed list, in list order, and every name it offers): one test per scenario,
//! through [`offered_tools_in_order`] on the list as recorded and through
//! [`offered_tools`] on the list shuffled, with display names that give back the
//! recorded order. A checkout without `../shared` reports one ignored test, with the
//! reason; `tests/invocation.rs` covers the same rules on the crate's own vectors.
//! Scenarios marked `"reachable": false` use names our checker refuses, as the app's
//! parser does; their packages are built without the checker, so the name builder is
//! tested all the same.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::PathBuf;

use libtest_mimic::{Arguments, Completion, Trial};
use serde_json::{Value, json};
use spirit_manifest::{Options, PackageJson, check_str, offered_tools, offered_tools_in_order};

fn vectors() -> PathBuf {
    curupira_test_support::conformance::folder("spirit-app/invocation-names.json")
}

fn main() {
    let args = Arguments::from_args();
    let path = vectors();
    let trials = match fs::read_to_string(&path) {
        Ok(text) => {
            let scenarios: Vec<Value> = serde_json::from_str(&text).unwrap();
            assert_eq!(scenarios.len(), 31, "the README announces 31 scenarios");
            scenarios
                .into_iter()
                .enumerate()
                .map(|(i, scenario)| {
                    Trial::test(name(i, &scenario), move || {
                        check(&scenario);
                        Ok(())
                    })
                })
                .collect()
        }
        Err(error) => vec![Trial::ignorable_test("invocation_names", move || {
            Ok(Completion::ignored_with(format!(
                "skipped: {} could not be read ({error}), so the app's names were not checked",
                path.display()
            )))
        })],
    };
    libtest_mimic::run(&args, trials).exit();
}

/// `scenario_07_my_ext`: the index and the first package name, for the test's name.
fn name(index: usize, scenario: &Value) -> String {
    let first = scenario["extensions"][0][0].as_str().unwrap_or("");
    let slug: Vec<&str> = first
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .collect();
    format!("scenario_{index:02}_{}", slug.join("_"))
}

/// One recorded extension: `[package name, [tool names…], options?]`.
struct Recorded {
    id: String,
    tools: Vec<String>,
    capabilities: Value,
}

fn recorded(scenario: &Value) -> Vec<Recorded> {
    scenario["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|extension| Recorded {
            id: extension[0].as_str().unwrap().to_owned(),
            tools: extension[1]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| tool.as_str().unwrap().to_owned())
                .collect(),
            capabilities: extension
                .get(2)
                .and_then(|options| options.get("requestedCapabilities"))
                .cloned()
                .unwrap_or_else(|| json!(["tool-definitions", "tool-execution"])),
        })
        .collect()
}

/// The package the README describes for a scenario, named `display`.
fn package(extension: &Recorded, display: &str, reachable: bool) -> PackageJson {
    let tools: Vec<Value> = extension
        .tools
        .iter()
        .map(|tool| json!({"name": tool, "description": "A tool.", "inputSchema": {"type": "object"}}))
        .collect();
    let text = json!({
        "name": extension.id,
        "version": "1.0.0",
        "main": "index.js",
        "spiritExtension": {
            "displayName": display,
            "supportedHosts": ["cli"],
            "requestedCapabilities": extension.capabilities,
            "contributes": {"tools": tools},
        },
    })
    .to_string();
    let both = extension.capabilities == json!(["tool-definitions", "tool-execution"]);
    if reachable && both {
        // A package the app offers tools of is one our checker accepts.
        let checked = check_str(&text, "package.json", &Options::default());
        if let Some(package) = checked.package {
            return package;
        }
        panic!("{}: {:?}", extension.id, checked.report.diagnostics());
    }
    // Names the parser refuses, or tools without both capabilities (which SPEC
    // section 3 makes an error and the app installs, offering none of them).
    serde_json::from_str(&text).unwrap()
}

fn check(scenario: &Value) {
    let expected: Vec<(String, String, String)> = scenario["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n[0].as_str().unwrap().to_owned(),
                n[1].as_str().unwrap().to_owned(),
                n[2].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let reachable = scenario.get("reachable") != Some(&Value::Bool(false));
    let extensions = recorded(scenario);
    // Display names in list order, so the app's sort gives back the recorded order.
    let packages: Vec<PackageJson> = extensions
        .iter()
        .enumerate()
        .map(|(i, extension)| package(extension, &format!("Extension {i:02}"), reachable))
        .collect();
    let triples =
        |offered: Vec<spirit_manifest::OfferedTool<'_>>| -> Vec<(String, String, String)> {
            offered
                .into_iter()
                .map(|o| (o.package.name.clone(), o.tool.name.clone(), o.name))
                .collect()
        };
    assert_eq!(
        triples(offered_tools_in_order(&packages)),
        expected,
        "in list order"
    );
    let shuffled: Vec<&PackageJson> = packages.iter().rev().collect();
    assert_eq!(
        triples(offered_tools(shuffled)),
        expected,
        "sorted by display name"
    );
}
