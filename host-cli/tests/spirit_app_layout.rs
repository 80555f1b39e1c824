//! `curupira spirit install|list|remove|settings|migrate` and the Spirit app's data
//! folder: every recorded case of `../shared/conformance/spirit-app/install/cases.json`
//! (skipped, saying so, when that folder is missing), a data folder laid out as the app
//! leaves it (listed, run and removed by our commands), a package we install as the app
//! reads it, and the migration of our old layout. Each through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

use curupira_test_support::fakes;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

/// What one run of the binary gave.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `curupira spirit ARGS…` run in `dir`.
fn spirit(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .arg("spirit")
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|error| panic!("{error}: {run:?}"))
}

/// Every path under `dir`, relative, folders ending in `/`, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if fs::symlink_metadata(&path).unwrap().is_dir() {
                out.push(format!("{relative}/"));
                walk(root, &path, out);
            } else {
                out.push(relative);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn sha256_hex(path: &Path) -> String {
    let digest = Sha256::digest(fs::read(path).unwrap());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn mtime_ms(path: &Path) -> u64 {
    let since = fs::metadata(path)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(UNIX_EPOCH)
        .unwrap();
    u64::try_from(since.as_millis()).unwrap()
}

/// Whether `actual` is `expected`, where the string `<unix-ms>` stands for any integer
/// and `<unix-ms: folder mtime>` for the modification time of the entry's folder.
fn same_json(expected: &Value, actual: &Value, host_dir: &Path) -> bool {
    match (expected, actual) {
        (Value::String(placeholder), Value::Number(n)) if placeholder == "<unix-ms>" => n.is_u64(),
        (Value::Object(e), Value::Object(a)) => {
            e.len() == a.len()
                && e.iter().all(|(key, value)| {
                    let Some(other) = a.get(key) else {
                        return false;
                    };
                    if value == "<unix-ms: folder mtime>" {
                        let folder = a["directoryName"].as_str().unwrap_or_default();
                        return other.as_u64() == Some(mtime_ms(&host_dir.join(folder)));
                    }
                    same_json(value, other, host_dir)
                })
        }
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| same_json(e, a, host_dir))
        }
        _ => expected == actual,
    }
}

/// The JSON files of `files` (paths under the data folder) compared with what is there.
fn assert_files(data: &Path, host: &str, files: &Value, what: &str) {
    let host_dir = data.join("extensions").join(host);
    for (path, expected) in files.as_object().unwrap() {
        let text = fs::read_to_string(data.join(path))
            .unwrap_or_else(|error| panic!("{what}: {path}: {error}"));
        let actual: Value = serde_json::from_str(&text).unwrap();
        assert!(
            same_json(expected, &actual, &host_dir),
            "{what}: {path}\nexpected {expected:#}\nfound {actual:#}"
        );
    }
}

/// The conformance folder, or `None` (after saying so) when it is missing.
fn conformance() -> Option<PathBuf> {
    let dir = curupira_test_support::conformance::folder("spirit-app/install");
    if dir.join("cases.json").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is missing", dir.display());
        None
    }
}

fn cases(dir: &Path) -> Vec<Value> {
    let text = fs::read_to_string(dir.join("cases.json")).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// `spirit list --format json` for `host`, the packages the app sees, each as the
/// app's listing item (`id`, `directoryName`, `version`, `name`, and the entry's
/// `installSource` and `archiveFileName` when it has them).
fn app_items(work: &Path, host: &str) -> Vec<Value> {
    let run = spirit(
        work,
        &[
            "list",
            "--data-dir",
            "data",
            "--host",
            host,
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    json_of(&run)["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["seen_by_app"] == true)
        .map(|p| {
            let mut item = json!({
                "id": p["id"],
                "directoryName": p["directory_name"],
                "version": p["version"],
                "name": p["display_name"],
            });
            for (from, to) in [
                ("install_source", "installSource"),
                ("archive_file_name", "archiveFileName"),
            ] {
                if !p[from].is_null() {
                    item[to] = p[from].clone();
                }
            }
            item
        })
        .collect()
}

/// Copies the case's archive into `work` (under its own file name, which the index
/// records) and installs it.
fn install_step(conformance: &Path, work: &Path, archive: &str, host: &str) -> Run {
    let from = conformance.join(archive);
    let name = from.file_name().unwrap().to_str().unwrap().to_owned();
    fs::copy(&from, work.join(&name)).unwrap();
    spirit(
        work,
        &["install", &name, "--data-dir", "data", "--host", host],
    )
}

fn check_install_case(conformance: &Path, case: &Value) {
    let what = case["case"].as_str().unwrap();
    let real = &case["real"];
    let host = case["host"].as_str().unwrap();
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let data = work.join("data");
    let run = install_step(conformance, work, case["archive"].as_str().unwrap(), host);
    let installs = real["installs"].as_bool().unwrap();
    assert_eq!(
        run.code,
        Some(if installs { 0 } else { 1 }),
        "{what}: {run:?} (the app: {})",
        real["error"]
    );
    assert_eq!(
        tree(&data),
        real["tree"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect::<Vec<_>>(),
        "{what}"
    );
    assert_files(&data, host, &real["files"], what);
    if let Some(hashes) = real["sha256"].as_object() {
        for (path, hash) in hashes {
            assert_eq!(&sha256_hex(&data.join(path)), hash, "{what}: {path}");
        }
    }
    if installs {
        assert_eq!(app_items(work, host), [real["installed"].clone()], "{what}");
    }
}

fn check_sequence_case(conformance: &Path, case: &Value) {
    let what = case["case"].as_str().unwrap();
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let data = work.join("data");
    for (n, step) in case["steps"].as_array().unwrap().iter().enumerate() {
        let what = format!("{what} step {n} ({})", step["do"]);
        let real = &step["real"];
        let host = step["host"].as_str().unwrap();
        let ok = real["ok"].as_bool().unwrap();
        match step["do"].as_str().unwrap() {
            "install" => {
                let run = install_step(conformance, work, step["archive"].as_str().unwrap(), host);
                assert_eq!(run.code == Some(0), ok, "{what}: {run:?}");
                if ok {
                    assert_eq!(app_items(work, host), [real["installed"].clone()], "{what}");
                }
            }
            "remove" => {
                let id = step["id"].as_str().unwrap();
                let run = spirit(work, &["remove", id, "--data-dir", "data", "--host", host]);
                assert_eq!(run.code == Some(0), ok, "{what}: {run:?}");
            }
            "list" => {
                assert_eq!(Value::Array(app_items(work, host)), real["items"], "{what}");
            }
            "settings" => {
                let id = step["id"].as_str().unwrap();
                let ops = step["ops"].as_array().unwrap();
                for (op, result) in ops.iter().zip(real["results"].as_array().unwrap()) {
                    let op: Vec<&str> = op
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap())
                        .collect();
                    let mut args = vec!["settings"];
                    match op.as_slice() {
                        ["set", key, value] => args.extend(["set", id, key, value]),
                        ["getAll"] => args.extend(["get", id]),
                        ["get", key] => args.extend(["get", id, key]),
                        other => panic!("{what}: an op this test does not know: {other:?}"),
                    }
                    args.extend(["--data-dir", "data", "--host", host]);
                    let run = spirit(work, &args);
                    assert_eq!(run.code, Some(0), "{what}: {op:?}: {run:?}");
                    assert_eq!(json_of(&run), result["value"], "{what}: {op:?}");
                }
            }
            other => panic!("{what}: a step this test does not know: {other}"),
        }
        assert_eq!(
            tree(&data),
            real["tree"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
                .collect::<Vec<_>>(),
            "{what}"
        );
        assert_files(&data, host, &real["files"], &what);
    }
}

/// Unpacks the package root of a ZIP (the folder holding its one package.json, names
/// read with `\` as `/`) into `to`.
fn unpack_package_root(archive: &Path, to: &Path) {
    let mut zip = zip::ZipArchive::new(fs::File::open(archive).unwrap()).unwrap();
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().replace('\\', "/"))
        .collect();
    let manifest = names
        .iter()
        .find(|n| *n == "package.json" || n.ends_with("/package.json"))
        .unwrap();
    let root = &manifest[..manifest.len() - "package.json".len()];
    for (i, name) in names.iter().enumerate() {
        let Some(relative) = name.strip_prefix(root) else {
            continue;
        };
        if relative.is_empty() || relative.ends_with('/') {
            continue;
        }
        let target = to.join(relative);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        let mut bytes = Vec::new();
        zip.by_index(i).unwrap().read_to_end(&mut bytes).unwrap();
        fs::write(target, bytes).unwrap();
    }
}

fn build_layout(conformance: &Path, data: &Path, layout: &Value) {
    for dir in layout["dirs"].as_array().into_iter().flatten() {
        fs::create_dir_all(data.join(dir.as_str().unwrap())).unwrap();
    }
    for (folder, package) in layout["packages"].as_object().into_iter().flatten() {
        let archive = conformance.join(package["archive"].as_str().unwrap());
        unpack_package_root(&archive, &data.join(folder));
    }
    for (path, value) in layout["files"].as_object().into_iter().flatten() {
        let path = data.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    }
}

fn check_layout_case(conformance: &Path, case: &Value) {
    let what = case["case"].as_str().unwrap();
    let host = case["host"].as_str().unwrap();
    let real = &case["real"];
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let data = work.join("data");
    build_layout(conformance, &data, &case["layout"]);
    match case["kind"].as_str().unwrap() {
        "list" => {
            assert_eq!(Value::Array(app_items(work, host)), real["items"], "{what}");
        }
        "remove" => {
            let id = case["id"].as_str().unwrap();
            let run = spirit(work, &["remove", id, "--data-dir", "data", "--host", host]);
            assert_eq!(run.code == Some(0), real["ok"] == true, "{what}: {run:?}");
        }
        other => panic!("{what}: a kind this test does not know: {other}"),
    }
    assert_files(&data, host, &real["files_after"], what);
}

fn check_case(name: &str) {
    let Some(dir) = conformance() else {
        return;
    };
    let all = cases(&dir);
    let case = all
        .iter()
        .find(|case| case["case"] == name)
        .unwrap_or_else(|| panic!("no case `{name}` in cases.json"));
    match case["kind"].as_str().unwrap() {
        "install" => check_install_case(&dir, case),
        "sequence" => check_sequence_case(&dir, case),
        _ => check_layout_case(&dir, case),
    }
}

/// One test per recorded case.
macro_rules! cases {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check_case($name);
            }
        )*

        /// Every case of cases.json has its test above.
        #[test]
        fn every_recorded_case_has_a_test() {
            let Some(dir) = conformance() else {
                return;
            };
            let recorded: Vec<String> = cases(&dir)
                .iter()
                .map(|case| case["case"].as_str().unwrap().to_owned())
                .collect();
            let tested: Vec<&str> = vec![$($name),*];
            assert_eq!(recorded, tested);
        }
    };
}

cases! {
    app_fresh_a_root_zip_cli => "fresh-A-root.zip-cli",
    app_fresh_c_two_manifests_zip_cli => "fresh-C-two-manifests.zip-cli",
    app_fresh_d_package_tgz_cli => "fresh-D-package.tgz-cli",
    app_fresh_f_v2_tgz_cli => "fresh-F-v2.tgz-cli",
    app_fresh_f_v2_zip_cli => "fresh-F-v2.zip-cli",
    app_fresh_g_cli_only_zip_cli => "fresh-G-cli-only.zip-cli",
    app_fresh_g_cli_only_zip_desktop => "fresh-G-cli-only.zip-desktop",
    app_fresh_h_dotdot_zip_cli => "fresh-H-dotdot.zip-cli",
    app_fresh_i_symlink_zip_cli => "fresh-I-symlink.zip-cli",
    app_fresh_l_backslash_zip_cli => "fresh-L-backslash.zip-cli",
    app_fresh_m_no_main_zip_cli => "fresh-M-no-main.zip-cli",
    app_fresh_n_unscoped_zip_cli => "fresh-N-unscoped.zip-cli",
    app_fresh_o_extra_outside_tgz_cli => "fresh-O-extra-outside.tgz-cli",
    app_fresh_r_sub_and_top_zip_cli => "fresh-R-sub-and-top.zip-cli",
    app_fresh_a_root_zip_desktop => "fresh-A-root.zip-desktop",
    app_fresh_s_desktop_only_zip_desktop => "fresh-S-desktop-only.zip-desktop",
    app_replace_zip_zip_tgz => "replace-zip-zip-tgz",
    app_remove_one => "remove-one",
    app_settings_state => "settings-state",
    app_list_real_one => "list-real-one",
    app_list_folders_without_index => "list-folders-without-index",
}

// ---------------------------------------------------------------------------------------
// A data folder as the app leaves it

/// `pkg-<base64url("@acme/echo")>`.
const ECHO_DIR: &str = "pkg-QGFjbWUvZWNobw";

/// A tiny package with two tools: `echo` echoes its `text` argument after the stored
/// `prefix` setting, `remember` stores a new `prefix`.
const ECHO_PACKAGE: &str = r#"{
  "name": "@acme/echo",
  "version": "1.2.0",
  "main": "index.mjs",
  "spiritExtension": {
    "schemaVersion": 1,
    "displayName": "Echo",
    "supportedHosts": ["cli"],
    "requestedCapabilities": ["tool-definitions", "tool-execution", "settings"],
    "settingsSchema": [
      {"key": "prefix", "type": "string", "title": "Prefix", "defaultValue": ">"}
    ],
    "contributes": {
      "tools": [
        {"name": "echo", "description": "Echoes its text.", "inputSchema": {"type": "object"}},
        {"name": "remember", "description": "Stores a prefix.", "inputSchema": {"type": "object"}}
      ]
    }
  }
}
"#;

const ECHO_SCRIPT: &str = r#"export function activate(ctx) {
  return {
    tools: {
      echo: async ({ arguments: args }) => `${await ctx.settings.get("prefix")} echo: ${args.text}`,
      remember: async ({ arguments: args }) => {
        await ctx.settings.set("prefix", args.prefix);
        return "stored";
      },
    },
  };
}
"#;

/// The tree the app records after importing the echo package: its folder, its index
/// entry, its state folder with the settings it stored.
fn app_data_dir(data: &Path) {
    let host = data.join("extensions/cli");
    for (path, content) in [
        (format!("{ECHO_DIR}/package.json"), ECHO_PACKAGE.to_owned()),
        (format!("{ECHO_DIR}/index.mjs"), ECHO_SCRIPT.to_owned()),
        (
            "extensions.json".to_owned(),
            format!(
                "{{\n  \"entries\": [\n    {{\n      \"id\": \"@acme/echo\",\n      \"directoryName\": \"{ECHO_DIR}\",\n      \"installedAtUnixMs\": 1796152871236,\n      \"archiveFileName\": \"echo.zip\",\n      \"installSource\": \"archive\"\n    }}\n  ]\n}}\n"
            ),
        ),
        (
            "extension-state/ext-QGFjbWUvZWNobw.json".to_owned(),
            "{\n  \"prefix\": \"#\"\n}".to_owned(),
        ),
    ] {
        let path = host.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
}

#[test]
fn a_data_folder_the_app_laid_out_is_listed_run_and_removed() {
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let data = work.join("data");
    app_data_dir(&data);
    let index_before = fs::read(data.join("extensions/cli/extensions.json")).unwrap();

    let list = spirit(work, &["list", "--data-dir", "data"]);
    assert_eq!(list.code, Some(0), "{list:?}");
    assert_eq!(
        list.stdout,
        "cli      @acme/echo 1.2.0  \"Echo\"  supports cli\n"
    );
    let json = json_of(&spirit(
        work,
        &["list", "--data-dir", "data", "--format", "json"],
    ));
    let package = &json["packages"][0];
    assert_eq!(package["layout"], "app");
    assert_eq!(package["valid"], true);
    assert_eq!(package["installed_at_unix_ms"], 1_796_152_871_236_u64);
    assert_eq!(package["install_source"], "archive");
    assert_eq!(package["archive_file_name"], "echo.zip");
    // The app's index was already what the listing writes: left byte for byte.
    assert_eq!(
        fs::read(data.join("extensions/cli/extensions.json")).unwrap(),
        index_before
    );

    // The stored settings are the app's.
    let get = spirit(
        work,
        &[
            "settings",
            "get",
            "@acme/echo",
            "--data-dir",
            "data",
            "--host",
            "cli",
        ],
    );
    assert_eq!(get.code, Some(0), "{get:?}");
    assert_eq!(json_of(&get), json!({"prefix": "#"}));

    if fakes::tool_or_skip(
        "node",
        "`a_data_folder_the_app_laid_out_is_listed_run_and_removed`",
    ) {
        // One tool of the installed echo package, run by its id in the data folder.
        let run_tool = |tool: &str, arguments: &str| {
            spirit(
                work,
                &[
                    "run-tool",
                    "@acme/echo",
                    tool,
                    "--arguments",
                    arguments,
                    "--data-dir",
                    "data",
                ],
            )
        };
        let run = run_tool("echo", r#"{"text":"hi"}"#);
        assert_eq!(run.code, Some(0), "{run:?}");
        // The settings the app stored for it are what `ctx.settings` reads.
        assert_eq!(run.stdout, "# echo: hi\n");
        // What the tool stores goes where the app keeps it.
        let run = run_tool("remember", r#"{"prefix":"~"}"#);
        assert_eq!(run.code, Some(0), "{run:?}");
        let state = data.join("extensions/cli/extension-state/ext-QGFjbWUvZWNobw.json");
        let stored: Value = serde_json::from_str(&fs::read_to_string(&state).unwrap()).unwrap();
        assert_eq!(stored, json!({"prefix": "~"}));
        // With nothing stored yet (no state file), the default is read and nothing is
        // written by a call that stores nothing.
        fs::remove_file(&state).unwrap();
        let run = run_tool("echo", r#"{"text":"hi"}"#);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert_eq!(run.stdout, "> echo: hi\n");
        assert!(!state.exists());
        fs::write(&state, "{\n  \"prefix\": \"#\"\n}").unwrap();
    }

    let removed = spirit(
        work,
        &[
            "remove",
            "@acme/echo",
            "--data-dir",
            "data",
            "--host",
            "cli",
        ],
    );
    assert_eq!(removed.code, Some(0), "{removed:?}");
    assert_eq!(
        tree(&data),
        [
            "extensions/",
            "extensions/cli/",
            "extensions/cli/extension-state/",
            "extensions/cli/extension-state/ext-QGFjbWUvZWNobw.json",
            "extensions/cli/extensions.json",
        ]
    );
    assert_eq!(
        fs::read_to_string(data.join("extensions/cli/extensions.json")).unwrap(),
        "{\n  \"entries\": []\n}\n"
    );
}

/// What the app's listing reads: every direct sub-folder of the host folder holding a
/// package.json, keyed by its `name`, and the index entries by id.
fn read_as_the_app(host_dir: &Path) -> BTreeMap<String, (String, Value)> {
    let index: Value =
        serde_json::from_str(&fs::read_to_string(host_dir.join("extensions.json")).unwrap())
            .unwrap();
    let entries: BTreeMap<String, Value> = index["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap().to_owned(), e.clone()))
        .collect();
    let mut found = BTreeMap::new();
    for entry in fs::read_dir(host_dir).unwrap() {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        let Ok(text) = fs::read_to_string(entry.path().join("package.json")) else {
            continue;
        };
        let manifest: Value = serde_json::from_str(&text).unwrap();
        let id = manifest["name"].as_str().unwrap().to_owned();
        let folder = entry.file_name().to_string_lossy().into_owned();
        assert!(
            found
                .insert(
                    id.clone(),
                    (folder, entries.get(&id).cloned().unwrap_or_default())
                )
                .is_none(),
            "two folders hold `{id}`"
        );
    }
    found
}

#[test]
fn what_we_install_the_app_reads() {
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let data = work.join("data");
    app_data_dir(&data);
    // A scoped package beside the app's own, from a ZIP with Windows names.
    let archive = work.join("hello.zip");
    let mut zip = zip::ZipWriter::new(fs::File::create(&archive).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("hello\\package.json", options).unwrap();
    zip.write_all(
        br#"{"name":"@acme/hello","version":"0.3.0","main":"dist/index.js","spiritExtension":{"displayName":"Hello","supportedHosts":["cli"]}}"#,
    )
    .unwrap();
    zip.start_file("hello\\dist\\index.js", options).unwrap();
    zip.write_all(b"export function activate() {}\n").unwrap();
    zip.finish().unwrap();
    let run = spirit(
        work,
        &[
            "install",
            "hello.zip",
            "--data-dir",
            "data",
            "--host",
            "cli",
        ],
    );
    assert_eq!(run.code, Some(0), "{run:?}");

    let seen = read_as_the_app(&data.join("extensions/cli"));
    let ids: Vec<&str> = seen.keys().map(String::as_str).collect();
    assert_eq!(ids, ["@acme/echo", "@acme/hello"]);
    let (folder, entry) = &seen["@acme/hello"];
    assert_eq!(folder, "pkg-QGFjbWUvaGVsbG8");
    assert_eq!(entry["directoryName"], "pkg-QGFjbWUvaGVsbG8");
    assert_eq!(entry["installSource"], "archive");
    assert_eq!(entry["archiveFileName"], "hello.zip");
    assert!(entry["installedAtUnixMs"].is_u64());
    assert_eq!(
        fs::read_to_string(data.join("extensions/cli/pkg-QGFjbWUvaGVsbG8/dist/index.js")).unwrap(),
        "export function activate() {}\n"
    );
    // The app's own entry is kept as it was.
    assert_eq!(
        seen["@acme/echo"].1["installedAtUnixMs"],
        1_796_152_871_236_u64
    );
    // A second ZIP of the app's package is refused, as the app refuses it.
    let echo = work.join("echo.zip");
    let mut zip = zip::ZipWriter::new(fs::File::create(&echo).unwrap());
    zip.start_file("package.json", options).unwrap();
    zip.write_all(ECHO_PACKAGE.as_bytes()).unwrap();
    zip.start_file("index.mjs", options).unwrap();
    zip.write_all(ECHO_SCRIPT.as_bytes()).unwrap();
    zip.finish().unwrap();
    let again = spirit(
        work,
        &["install", "echo.zip", "--data-dir", "data", "--host", "cli"],
    );
    assert_eq!(again.code, Some(1), "{again:?}");
    assert!(
        again.stderr.contains("already installed"),
        "{}",
        again.stderr
    );
}

#[test]
fn settings_set_checks_the_schema_and_writes_the_apps_file() {
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let data = work.join("data");
    app_data_dir(&data);
    let at = ["--data-dir", "data", "--host", "cli"];
    let set = |key: &str, value: &str| {
        let mut args = vec!["settings", "set", "@acme/echo", key, value];
        args.extend(at);
        spirit(work, &args)
    };
    let run = set("prefix", "->");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(json_of(&run), json!({"prefix": "->"}));
    let state = data.join("extensions/cli/extension-state/ext-QGFjbWUvZWNobw.json");
    let stored: Value = serde_json::from_str(&fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(stored, json!({"prefix": "->"}));

    // A number for a string setting, an undeclared key: refused, nothing stored.
    for (key, value) in [("prefix", "3"), ("prefx", "x")] {
        let run = set(key, value);
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(run.stderr.starts_with("error: setting `"), "{}", run.stderr);
        assert!(
            run.stderr.ends_with("error: nothing was stored\n"),
            "{}",
            run.stderr
        );
    }
    let stored: Value = serde_json::from_str(&fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(stored, json!({"prefix": "->"}));

    // `null` clears: the default shows again.
    let run = set("prefix", "null");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(json_of(&run), json!({"prefix": ">"}));
    let mut args = vec!["settings", "get", "@acme/echo", "prefix"];
    args.extend(at);
    assert_eq!(json_of(&spirit(work, &args)), json!(">"));

    // Not installed.
    let mut args = vec!["settings", "get", "@acme/none"];
    args.extend(at);
    let run = spirit(work, &args);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr
            .starts_with("error: no extension `@acme/none` is installed for cli"),
        "{}",
        run.stderr
    );
}

#[test]
fn migrate_moves_our_old_layout_into_the_apps() {
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let data = work.join("data");
    let host = data.join("extensions/cli");
    // Our old layout: `@scope/name/` (which the app does not see) and `<name>/`.
    for (folder, name) in [("@acme/echo", "@acme/echo"), ("plain", "plain")] {
        let dir = host.join(folder);
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("package.json"),
            ECHO_PACKAGE.replace("\"@acme/echo\"", &format!("\"{name}\"")),
        )
        .unwrap();
        fs::write(dir.join("index.mjs"), ECHO_SCRIPT).unwrap();
    }
    let list = spirit(work, &["list", "--data-dir", "data"]);
    assert_eq!(list.code, Some(0), "{list:?}");
    assert_eq!(
        list.stdout,
        "cli      @acme/echo 1.2.0  \"Echo\"  supports cli  (old layout: `@acme/echo/`, which the Spirit app does not see)\n\
         cli      plain 1.2.0  \"Echo\"  supports cli  (old layout: `plain/`)\n\
         \n\
         2 install(s) in the old layout; move them into the Spirit app's with `curupira spirit migrate --data-dir data`\n"
    );

    let run = spirit(work, &["migrate", "--data-dir", "data"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "moved `@acme/echo` for cli from data/extensions/cli/@acme/echo to data/extensions/cli/{ECHO_DIR}\n\
             moved `plain` for cli from data/extensions/cli/plain to data/extensions/cli/pkg-cGxhaW4\n"
        )
    );
    assert_eq!(
        tree(&host),
        [
            "extension-state/".to_owned(),
            "extensions.json".to_owned(),
            format!("{ECHO_DIR}/"),
            format!("{ECHO_DIR}/index.mjs"),
            format!("{ECHO_DIR}/package.json"),
            "pkg-cGxhaW4/".to_owned(),
            "pkg-cGxhaW4/index.mjs".to_owned(),
            "pkg-cGxhaW4/package.json".to_owned(),
        ]
    );
    let seen = read_as_the_app(&host);
    assert_eq!(seen["@acme/echo"].0, ECHO_DIR);
    assert_eq!(seen["@acme/echo"].1["directoryName"], ECHO_DIR);
    assert_eq!(seen["plain"].1["directoryName"], "pkg-cGxhaW4");
    let list = spirit(work, &["list", "--data-dir", "data"]);
    assert_eq!(
        list.stdout,
        "cli      @acme/echo 1.2.0  \"Echo\"  supports cli\n\
         cli      plain 1.2.0  \"Echo\"  supports cli\n"
    );
    let again = spirit(work, &["migrate", "--data-dir", "data"]);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(
        again.stdout,
        "nothing to migrate: every install is in the Spirit app's layout\n"
    );

    // An id whose app folder is taken is left, with the reason, and exit 1.
    let old = host.join("plain-copy");
    fs::create_dir_all(&old).unwrap();
    fs::write(
        old.join("package.json"),
        ECHO_PACKAGE.replace("\"@acme/echo\"", "\"plain\""),
    )
    .unwrap();
    let taken = spirit(work, &["migrate", "--data-dir", "data", "--host", "cli"]);
    assert_eq!(taken.code, Some(1), "{taken:?}");
    assert!(
        taken
            .stdout
            .starts_with("left `plain` for cli in data/extensions/cli/plain-copy: "),
        "{}",
        taken.stdout
    );
    assert!(old.exists());
}

/// The app lists a package it installed even when it cannot work as declared (tools
/// without `tool-definitions`: never offered to the model); `spirit list` says so as
/// `BROKEN`, and keeps `INVALID` for what the app would not have installed at all.
#[test]
fn list_tells_a_broken_install_from_an_invalid_one() {
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    let host = work.join("data/extensions/cli");
    let broken = host.join("pkg-YnJva2Vu");
    fs::create_dir_all(&broken).unwrap();
    fs::write(
        broken.join("package.json"),
        r#"{"name": "broken", "version": "1.0.0", "main": "index.mjs",
  "spiritExtension": {"schemaVersion": 1, "displayName": "Broken", "supportedHosts": ["cli"],
    "requestedCapabilities": ["tool-execution"],
    "contributes": {"tools": [{"name": "t", "description": "A tool.", "inputSchema": {"type": "object"}}]}}}"#,
    )
    .unwrap();
    fs::write(broken.join("index.mjs"), "export function activate() {}\n").unwrap();
    let invalid = host.join("pkg-aW52YWxpZA");
    fs::create_dir_all(&invalid).unwrap();
    fs::write(
        invalid.join("package.json"),
        r#"{"name": "invalid", "version": "1.0.0", "spiritExtension": {"schemaVersion": 1, "displayName": "Invalid", "supportedHosts": ["cli", "web"]}}"#,
    )
    .unwrap();

    let list = spirit(work, &["list", "--data-dir", "data", "--host", "cli"]);
    assert_eq!(list.code, Some(1), "{list:?}");
    let lines: Vec<&str> = list.stdout.lines().take(2).collect();
    assert_eq!(
        lines,
        [
            "cli      broken  BROKEN (the Spirit app lists it, but it cannot work as declared): data/extensions/cli/pkg-YnJva2Vu",
            "cli      invalid  INVALID: data/extensions/cli/pkg-aW52YWxpZA",
        ]
    );
    assert!(
        list.stdout
            .contains("`broken` (cli) is installed, but cannot work as declared:"),
        "{}",
        list.stdout
    );
    assert!(
        list.stdout.contains("`invalid` (cli) no longer validates:"),
        "{}",
        list.stdout
    );
    let json = json_of(&spirit(
        work,
        &[
            "list",
            "--data-dir",
            "data",
            "--host",
            "cli",
            "--format",
            "json",
        ],
    ));
    let states: Vec<(&str, &str)> = json["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("broken", "broken"), ("invalid", "invalid")]);
}

/// A marketplace `.tgz` of `package/package.json` (a package with `main`
/// `lib/index.js`), `package/dist/index.js` and the symbolic links `links` (name under
/// `package/`, target), at `path`.
fn tgz_with_links(path: &Path, links: &[(&str, &str)]) {
    let manifest = br#"{"name":"@acme/linked","version":"1.0.0","main":"lib/index.js","spiritExtension":{"displayName":"Linked","supportedHosts":["cli"]}}"#;
    let script = b"export function activate() {}\n";
    let gz =
        flate2::write::GzEncoder::new(fs::File::create(path).unwrap(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (name, bytes) in [
        ("package/package.json", manifest.as_slice()),
        ("package/dist/index.js", script.as_slice()),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, bytes).unwrap();
    }
    for (name, target) in links {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_size(0);
        header.set_mode(0o777);
        tar.append_link(&mut header, format!("package/{name}"), target)
            .unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
}

#[test]
fn a_tgz_relative_link_is_installed_as_a_link_and_an_escaping_one_refused() {
    let tmp = TempDir::new().unwrap();
    let work = tmp.path();
    tgz_with_links(&work.join("linked.tgz"), &[("lib", "dist")]);
    let run = spirit(
        work,
        &[
            "install",
            "linked.tgz",
            "--data-dir",
            "data",
            "--host",
            "cli",
        ],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let package = work.join("data/extensions/cli/pkg-QGFjbWUvbGlua2Vk");
    assert_eq!(
        fs::read_link(package.join("lib")).unwrap(),
        Path::new("dist")
    );
    assert_eq!(
        fs::read_to_string(package.join("lib/index.js")).unwrap(),
        "export function activate() {}\n"
    );

    // A link leading out of `package/` (which the app would accept) is refused, and
    // so is `check` of that archive; nothing is installed.
    tgz_with_links(&work.join("escaping.tgz"), &[("lib", "../../outside")]);
    let data = work.join("fresh");
    let run = spirit(
        work,
        &[
            "install",
            "escaping.tgz",
            "--data-dir",
            "fresh",
            "--host",
            "cli",
        ],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("spirit/archive-entry"), "{run:?}");
    assert!(all.contains("package/lib"), "{run:?}");
    assert!(!data.join("extensions").exists());
    tgz_with_links(&work.join("inside-out.tgz"), &[("lib", "../other")]);
    let run = spirit(work, &["check", "inside-out.tgz"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("spirit/archive-entry"), "{run:?}");
    assert!(all.contains("outside the package folder"), "{all}");
}
