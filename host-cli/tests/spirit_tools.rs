//! `curupira spirit tools` gives the names the Spirit app offers the model: on a
//! package folder, the names of that package alone; with `--data-dir`, the names of
//! every extension installed there, de-duplicated together in the app's order.
//!
//! Each scenario of `../shared/conformance/spirit-app/invocation-names.json` is one
//! test: a one-package scenario through `spirit tools` on a package folder written as
//! the vectors' README says, a several-package scenario through `spirit tools
//! --data-dir` on a data folder filled with `spirit install` (display names given in
//! list order, installed in reverse). Scenarios with names the app's parser refuses
//! check that our checker refuses them too. A checkout without `../shared` reports one
//! ignored test, with the reason; the other tests here need no vectors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Completion, Trial};
use serde_json::{Value, json};
use tempfile::TempDir;
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

const BOTH: [&str; 2] = ["tool-definitions", "tool-execution"];

fn vectors() -> PathBuf {
    curupira_test_support::conformance::folder("spirit-app/invocation-names.json")
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![
        Trial::test("data_dir_human_output_names_each_extension", || {
            data_dir_human_output_names_each_extension();
            Ok(())
        }),
        Trial::test("data_dir_leaves_out_an_invalid_package_and_exits_1", || {
            data_dir_leaves_out_an_invalid_package_and_exits_1();
            Ok(())
        }),
        Trial::test(
            "data_dir_names_the_tools_of_a_package_without_main_as_the_app",
            || {
                data_dir_names_the_tools_of_a_package_without_main_as_the_app();
                Ok(())
            },
        ),
        Trial::test("list_prints_installs_in_the_app_s_order", || {
            list_prints_installs_in_the_app_s_order();
            Ok(())
        }),
        Trial::test("data_dir_and_path_are_one_or_the_other", || {
            data_dir_and_path_are_one_or_the_other();
            Ok(())
        }),
    ];
    let path = vectors();
    match fs::read_to_string(&path) {
        Ok(text) => {
            let scenarios: Vec<Value> = serde_json::from_str(&text).unwrap();
            assert_eq!(scenarios.len(), 31, "the README announces 31 scenarios");
            for (i, scenario) in scenarios.into_iter().enumerate() {
                trials.push(Trial::test(name(i, &scenario), move || {
                    scenario_test(&scenario);
                    Ok(())
                }));
            }
        }
        Err(error) => trials.push(Trial::ignorable_test("invocation_names", move || {
            Ok(Completion::ignored_with(format!(
                "skipped: {} could not be read ({error}), so the app's names were not checked",
                path.display()
            )))
        })),
    }
    libtest_mimic::run(&args, trials).exit();
}

fn name(index: usize, scenario: &Value) -> String {
    let first = scenario["extensions"][0][0].as_str().unwrap_or("");
    let slug: Vec<&str> = first
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .collect();
    let how = if scenario["extensions"].as_array().unwrap().len() > 1 {
        "data_dir"
    } else {
        "package"
    };
    format!("scenario_{index:02}_{how}_{}", slug.join("_"))
}

/// What one run of the binary gave.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn curupira(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The package the vectors' README describes: `version` 1.0.0, `main` index.js,
/// `supportedHosts` [cli], the capabilities, each tool with a description and
/// `{"type": "object"}` as input schema.
fn manifest(id: &str, display: &str, tools: &[String], capabilities: &Value) -> String {
    let tools: Vec<Value> = tools
        .iter()
        .map(|tool| json!({"name": tool, "description": "A tool.", "inputSchema": {"type": "object"}}))
        .collect();
    serde_json::to_string_pretty(&json!({
        "name": id,
        "version": "1.0.0",
        "main": "index.js",
        "spiritExtension": {
            "displayName": display,
            "supportedHosts": ["cli"],
            "requestedCapabilities": capabilities,
            "contributes": {"tools": tools},
        },
    }))
    .unwrap()
}

const INDEX_JS: &str = "exports.activate = () => ({});\n";

/// A package folder `dir/folder` holding `text` as its package.json and an index.js.
fn write_package(dir: &Path, folder: &str, text: &str) -> PathBuf {
    let path = dir.join(folder);
    fs::create_dir_all(&path).unwrap();
    fs::write(path.join("package.json"), text).unwrap();
    fs::write(path.join("index.js"), INDEX_JS).unwrap();
    path
}

/// A ZIP at `archive` holding `text` as its package.json and an index.js.
fn write_zip(archive: &Path, text: &str) {
    let mut writer = ZipWriter::new(File::create(archive).unwrap());
    for (name, bytes) in [("package.json", text), ("index.js", INDEX_JS)] {
        writer
            .start_file(name, SimpleFileOptions::default())
            .unwrap();
        writer.write_all(bytes.as_bytes()).unwrap();
    }
    writer.finish().unwrap();
}

/// `spirit install` of a package built from `text` into `data_dir` for `cli`.
fn install(dir: &Path, data_dir: &Path, index: usize, text: &str) -> Run {
    let archive = dir.join(format!("pkg-{index}.zip"));
    write_zip(&archive, text);
    curupira(&[
        "spirit",
        "install",
        path_str(&archive),
        "--data-dir",
        path_str(data_dir),
        "--host",
        "cli",
    ])
}

/// `(id, tool, name)` of each tool in `spirit tools --format json` output.
fn listed(json: &Value, package: Option<&str>) -> Vec<(String, String, String)> {
    json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let id = package.map_or_else(
                || tool["extension"].as_str().unwrap().to_owned(),
                str::to_owned,
            );
            (
                id,
                tool["tool"].as_str().unwrap().to_owned(),
                tool["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn scenario_test(scenario: &Value) {
    let expected: Vec<(String, String, String)> = scenario["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let part = |i: usize| n[i].as_str().unwrap().to_owned();
            (part(0), part(1), part(2))
        })
        .collect();
    let reachable = scenario.get("reachable") != Some(&Value::Bool(false));
    let extensions: Vec<(String, Vec<String>, Value)> = scenario["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let tools = e[1]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect();
            let capabilities = e
                .get(2)
                .and_then(|o| o.get("requestedCapabilities"))
                .cloned()
                .unwrap_or_else(|| json!(BOTH));
            (e[0].as_str().unwrap().to_owned(), tools, capabilities)
        })
        .collect();
    let tmp = TempDir::new().unwrap();

    if extensions.len() == 1 {
        let (id, tools, capabilities) = &extensions[0];
        let text = manifest(id, "Extension", tools, capabilities);
        let folder = write_package(tmp.path(), "pkg", &text);
        let run = curupira(&["spirit", "tools", path_str(&folder), "--format", "json"]);
        if !reachable {
            // The app's parser refuses these names, and so does our checker.
            assert_eq!(run.code, Some(1), "{run:?}");
            assert!(
                serde_json::from_str::<Value>(&run.stdout).unwrap()["errors"]
                    .as_u64()
                    .is_some_and(|errors| errors > 0)
            );
            return;
        }
        assert_eq!(
            *capabilities,
            json!(BOTH),
            "a one-package scenario offers its tools"
        );
        assert_eq!(run.code, Some(0), "{run:?}");
        let json: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(listed(&json, Some(id)), expected);
        return;
    }

    assert!(
        reachable,
        "several-package scenarios use names the parser accepts"
    );
    let data_dir = tmp.path().join("data");
    // Installed in reverse, with display names in list order: the app's sort (by
    // display name) gives the recorded list order back.
    for (i, (id, tools, capabilities)) in extensions.iter().enumerate().rev() {
        let text = manifest(id, &format!("Extension {i:02}"), tools, capabilities);
        let run = install(tmp.path(), &data_dir, i, &text);
        if *capabilities == json!(BOTH) {
            assert_eq!(run.code, Some(0), "{id}: {run:?}");
        } else {
            // SPEC section 3 refuses tools without both capabilities; the app installs
            // such a package and offers none of its tools, so the names are the same.
            assert_eq!(run.code, Some(1), "{id}: {run:?}");
        }
    }
    let run = curupira(&[
        "spirit",
        "tools",
        "--data-dir",
        path_str(&data_dir),
        "--host",
        "cli",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["host"], "cli");
    assert_eq!(json["invalid"], json!([]));
    assert_eq!(listed(&json, None), expected);
}

// -- the rest of `spirit tools --data-dir` ------------------------------------------

/// Two packages whose tool names collide: the one whose display name sorts first keeps
/// the bare name, whatever the install order or the ids.
fn collide(tmp: &Path) -> PathBuf {
    let data_dir = tmp.join("data");
    let tools = ["get-item".to_owned()];
    for (i, (id, display)) in [("my-ext", "Zeta"), ("my.ext", "alpha")].iter().enumerate() {
        let run = install(
            tmp,
            &data_dir,
            i,
            &manifest(id, display, &tools, &json!(BOTH)),
        );
        assert_eq!(run.code, Some(0), "{run:?}");
    }
    data_dir
}

fn data_dir_human_output_names_each_extension() {
    let tmp = TempDir::new().unwrap();
    let data_dir = collide(tmp.path());
    let run = curupira(&["spirit", "tools", "--data-dir", path_str(&data_dir)]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stderr, "");
    let block = |name: &str, id: &str, display: &str| {
        format!(
            "{name}\n  extension:   {id} \"{display}\"\n  tool:        get-item\n  description: A tool.\n  input schema:\n    {{\n      \"type\": \"object\"\n    }}\n"
        )
    };
    let base = "extension__my_ext__get_item__26b4c02d";
    assert_eq!(
        run.stdout,
        block(base, "my.ext", "alpha") + &block(&format!("{base}__1"), "my-ext", "Zeta")
    );
    // The other host has nothing installed.
    let desktop = curupira(&[
        "spirit",
        "tools",
        "--data-dir",
        path_str(&data_dir),
        "--host",
        "desktop",
    ]);
    assert_eq!(desktop.code, Some(0), "{desktop:?}");
    assert_eq!(
        desktop.stdout,
        "no extension installed for desktop offers a tool to the model\n"
    );
    // Each package alone keeps the bare name.
    let alone = write_package(
        tmp.path(),
        "alone",
        &manifest("my-ext", "Zeta", &["get-item".to_owned()], &json!(BOTH)),
    );
    let run = curupira(&["spirit", "tools", path_str(&alone)]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with(&format!("{base}\n  tool:")),
        "{}",
        run.stdout
    );
}

fn data_dir_leaves_out_an_invalid_package_and_exits_1() {
    let tmp = TempDir::new().unwrap();
    let data_dir = collide(tmp.path());
    // Break one installed package where `spirit list` says it is.
    let list = curupira(&[
        "spirit",
        "list",
        "--data-dir",
        path_str(&data_dir),
        "--format",
        "json",
    ]);
    let list: Value = serde_json::from_str(&list.stdout).unwrap();
    let broken = list["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "my.ext")
        .unwrap();
    let path = PathBuf::from(broken["path"].as_str().unwrap());
    fs::write(path.join("package.json"), "{ not json").unwrap();
    let run = curupira(&[
        "spirit",
        "tools",
        "--data-dir",
        path_str(&data_dir),
        "--format",
        "json",
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    // The package left keeps the bare name now.
    assert_eq!(
        listed(&json, None),
        [(
            "my-ext".to_owned(),
            "get-item".to_owned(),
            "extension__my_ext__get_item__26b4c02d".to_owned()
        )]
    );
    assert_eq!(json["invalid"].as_array().unwrap().len(), 1);
    assert!(
        run.stderr.contains("no longer validates and is left out"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

/// The app installs a package that declares tools and both tool capabilities but no
/// `main`, and names its tools (calling them fails): the names of the packages after it
/// keep their `__N` suffixes.
fn data_dir_names_the_tools_of_a_package_without_main_as_the_app() {
    let tmp = TempDir::new().unwrap();
    let data_dir = collide(tmp.path());
    let list = curupira(&[
        "spirit",
        "list",
        "--data-dir",
        path_str(&data_dir),
        "--format",
        "json",
    ]);
    let list: Value = serde_json::from_str(&list.stdout).unwrap();
    let first = list["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "my.ext")
        .unwrap();
    let manifest_path = PathBuf::from(first["path"].as_str().unwrap()).join("package.json");
    let mut manifest: Value =
        serde_json::from_str(&fs::read_to_string(&manifest_path).unwrap()).unwrap();
    manifest.as_object_mut().unwrap().remove("main");
    fs::write(&manifest_path, manifest.to_string()).unwrap();
    let run = curupira(&[
        "spirit",
        "tools",
        "--data-dir",
        path_str(&data_dir),
        "--format",
        "json",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let base = "extension__my_ext__get_item__26b4c02d";
    assert_eq!(
        listed(&json, None),
        [
            ("my.ext".to_owned(), "get-item".to_owned(), base.to_owned()),
            (
                "my-ext".to_owned(),
                "get-item".to_owned(),
                format!("{base}__1")
            ),
        ]
    );
    assert!(json["invalid"].as_array().unwrap().is_empty());
    assert!(
        run.stderr.contains("`my.ext`") && run.stderr.contains("breaks at run time"),
        "{}",
        run.stderr
    );
}

/// `spirit list`: by display name as the app's zh-CN collator orders them, then by id;
/// not by id. Node's `localeCompare(…, "zh-CN")` gives 李 (li), 张 (zhang), alpha, Zeta:
/// Han before Latin, Han by pinyin (李's code point is the higher), case after letters.
fn list_prints_installs_in_the_app_s_order() {
    let tmp = TempDir::new().unwrap();
    let data_dir = tmp.path().join("data");
    let tools = ["get-item".to_owned()];
    for (i, (id, display)) in [
        ("a-zhang", "张"),
        ("b-li", "李"),
        ("c-zeta", "Zeta"),
        ("d-alpha", "alpha"),
    ]
    .iter()
    .enumerate()
    {
        let run = install(
            tmp.path(),
            &data_dir,
            i,
            &manifest(id, display, &tools, &json!(BOTH)),
        );
        assert_eq!(run.code, Some(0), "{run:?}");
    }
    let list = curupira(&[
        "spirit",
        "list",
        "--data-dir",
        path_str(&data_dir),
        "--format",
        "json",
    ]);
    assert_eq!(list.code, Some(0), "{list:?}");
    let list: Value = serde_json::from_str(&list.stdout).unwrap();
    let ids: Vec<&str> = list["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["b-li", "a-zhang", "d-alpha", "c-zeta"]);
}

fn data_dir_and_path_are_one_or_the_other() {
    let tmp = TempDir::new().unwrap();
    let folder = write_package(
        tmp.path(),
        "pkg",
        &manifest("my-ext", "A", &["t".to_owned()], &json!(BOTH)),
    );
    let data_dir = tmp.path().join("data");
    for args in [
        vec!["spirit", "tools"],
        vec![
            "spirit",
            "tools",
            path_str(&folder),
            "--data-dir",
            path_str(&data_dir),
        ],
        vec!["spirit", "tools", path_str(&folder), "--host", "cli"],
    ] {
        let run = curupira(&args);
        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert!(
            run.stderr.starts_with("error: "),
            "{args:?}: {}",
            run.stderr
        );
    }
}
