//! `curupira spirit check|install|list|remove|tools` as a user runs them: the real
//! binary, real folders and archives in temporary folders, exact outputs and exit
//! codes (0 fine, 1 problems or refused, 2 unreadable, not installed or a bad id).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;

use curupira_test_support::fs::copy_dir;
use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::{Value, json};
use tempfile::TempDir;
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

/// The seed package's id (its npm name) and the invocation name of its one tool.
const ID: &str = "@example/spirit-extension";
const INVOCATION: &str = "extension__example_spirit_e__lookup_item__8b3b40e0";
/// The Spirit app's folder for [`ID`]: `pkg-<base64url(id)>`.
const DIR: &str = "pkg-QGV4YW1wbGUvc3Bpcml0LWV4dGVuc2lvbg";

/// A package that supports the terminal app only and requests no capability.
const CLI_ONLY: &str = r#"{"name":"hello","version":"1.0.0","spiritExtension":{"schemaVersion":1,"displayName":"Hello","supportedHosts":["cli"]}}"#;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifest-spirit/tests/corpus")
}

fn seed() -> PathBuf {
    corpus().join("seed-example")
}

/// What one run of the binary gave.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `curupira spirit ARGS…` run in `dir` with `stdin` fed from a thread (a child that
/// exits before reading is fine), in a colour-neutral environment.
fn spirit(dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .arg("spirit")
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let feeder = thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn json_of(run: &Run) -> Value {
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    serde_json::from_str(&run.stdout).unwrap()
}

/// A copy of the seed package at `dir/name`.
fn seed_copy(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    copy_dir(&seed(), &path);
    path
}

/// Every file and folder under `dir` with its bytes, by relative path (`x/` for a
/// folder).
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                out.insert(format!("{relative}/"), Vec::new());
                walk(root, &path, out);
            } else {
                out.insert(relative, fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The names in a folder, sorted; none when it does not exist.
fn names_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Writes a ZIP at `archive` of `entries` (name, bytes), in order.
fn zip_entries(archive: &Path, entries: &[(String, Vec<u8>)]) {
    let mut writer = ZipWriter::new(File::create(archive).unwrap());
    for (name, bytes) in entries {
        writer
            .start_file(name.as_str(), SimpleFileOptions::default())
            .unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap();
}

/// The files of `folder` as ZIP entries under `prefix` (`""` or `dir/`).
fn entries_of(folder: &Path, prefix: &str) -> Vec<(String, Vec<u8>)> {
    snapshot(folder)
        .into_iter()
        .filter(|(name, _)| !name.ends_with('/'))
        .map(|(name, bytes)| (format!("{prefix}{name}"), bytes))
        .collect()
}

/// A ZIP at `archive` of the files of `folder` at its root.
fn zip_folder(folder: &Path, archive: &Path) {
    zip_entries(archive, &entries_of(folder, ""));
}

/// A marketplace `.tgz` at `archive`: the files of `folder` under `package/`.
fn tgz_folder(folder: &Path, archive: &Path) {
    let encoder = GzEncoder::new(File::create(archive).unwrap(), Compression::default());
    let mut builder = tar::Builder::new(encoder);
    builder.append_dir_all("package", folder).unwrap();
    builder.into_inner().unwrap().finish().unwrap();
}

/// The seed package without `dist/index.js` and with a misspelt hook slot in
/// `cli-hooks.json`: one error in each of its two JSON files.
fn broken_package(dir: &Path, name: &str) -> PathBuf {
    let path = seed_copy(dir, name);
    fs::remove_file(path.join("dist/index.js")).unwrap();
    let hooks = fs::read_to_string(path.join("cli-hooks.json")).unwrap();
    let misspelt = hooks.replace("\"input.frame\"", "\"input.frme\"");
    assert_ne!(hooks, misspelt);
    fs::write(path.join("cli-hooks.json"), misspelt).unwrap();
    path
}

/// A package folder `dir/name` whose `package.json` is `text`.
fn package_folder(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::create_dir_all(&path).unwrap();
    fs::write(path.join("package.json"), text).unwrap();
    path
}

// ---------------------------------------------------------------------------------
// spirit check

#[test]
fn check_the_seed_folder_exits_0_in_both_formats() {
    let human = spirit(&seed(), &["check", "."], b"");
    assert_eq!(human.code, Some(0), "{human:?}");
    assert_eq!(human.stdout, "ok: no problems in 2 files\n");
    assert_eq!(human.stderr, "");

    let json = spirit(
        &corpus(),
        &["check", "seed-example", "--format", "json"],
        b"",
    );
    assert_eq!(json.code, Some(0), "{json:?}");
    assert_eq!(
        json.stdout,
        "{\"diagnostics\":[],\"errors\":0,\"warnings\":0}\n"
    );
    assert_eq!(json.stderr, "");

    // Registry-strict mode and either host: the seed example is the reference package.
    for extra in [
        &["--registry"][..],
        &["--host", "cli"],
        &["--host", "desktop"],
    ] {
        let args: Vec<&str> = ["check", "seed-example"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let run = spirit(&corpus(), &args, b"");
        assert_eq!(run.code, Some(0), "{extra:?}: {run:?}");
        assert_eq!(run.stdout, "ok: no problems in 2 files\n", "{extra:?}");
    }
}

#[test]
fn check_a_broken_folder_exits_1_with_file_line_column_and_pointer() {
    let tmp = TempDir::new().unwrap();
    broken_package(tmp.path(), "pkg");
    let run = spirit(tmp.path(), &["check", "pkg"], b"");
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.stderr, "");
    let expected = "\
error[spirit/missing-file]: `main` `dist/index.js` does not exist in the package
 --> pkg/package.json:7:11
  |
7 |   \"main\": \"dist/index.js\",
  |           ^^^^^^^^^^^^^^^
  = path: /main

error[spirit/unknown-value]: `hooks[0].slot` is `input.frme`, which is not one of `message.user`, `message.assistant`, `message.tool`, `assistant.thinking`, `input.frame`, `bottom_form`, `bottom_form.section`, `slash_suggestions`, `approval.panel` or `questions.panel`; did you mean `input.frame`?
 --> pkg/cli-hooks.json:4:15
  |
4 |       \"slot\": \"input.frme\",
  |               ^^^^^^^^^^^^
  = path: /hooks/0/slot

error: 2 errors in 2 files
";
    assert_eq!(run.stdout, expected);

    // From inside the folder the files are named relative to it.
    let inside = spirit(&tmp.path().join("pkg"), &["check", "."], b"");
    assert_eq!(inside.code, Some(1));
    assert!(
        inside.stdout.contains("\n --> package.json:7:11\n"),
        "{}",
        inside.stdout
    );
    assert!(
        inside.stdout.contains("\n --> cli-hooks.json:4:15\n"),
        "{}",
        inside.stdout
    );
}

#[test]
fn check_json_gives_every_diagnostic_with_its_fields_and_the_counts() {
    let tmp = TempDir::new().unwrap();
    broken_package(tmp.path(), "pkg");
    let run = spirit(tmp.path(), &["check", "pkg", "--format", "json"], b"");
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.stderr, "");
    let report = json_of(&run);
    assert_eq!(report["errors"], 2);
    assert_eq!(report["warnings"], 0);
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 2);
    let keys: Vec<&str> = diagnostics[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys.iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        [
            "code", "column", "file", "line", "message", "path", "severity"
        ]
        .into_iter()
        .collect()
    );
    assert_eq!(
        diagnostics[0],
        json!({
            "severity": "error",
            "code": "spirit/missing-file",
            "file": "pkg/package.json",
            "path": "/main",
            "line": 7,
            "column": 11,
            "message": "`main` `dist/index.js` does not exist in the package",
        })
    );
    assert_eq!(diagnostics[1]["severity"], "error");
    assert_eq!(diagnostics[1]["code"], "spirit/unknown-value");
    assert_eq!(diagnostics[1]["file"], "pkg/cli-hooks.json");
    assert_eq!(diagnostics[1]["path"], "/hooks/0/slot");
    assert_eq!(
        (&diagnostics[1]["line"], &diagnostics[1]["column"]),
        (&json!(4), &json!(15))
    );
    assert!(
        diagnostics[1]["message"]
            .as_str()
            .unwrap()
            .starts_with("`hooks[0].slot` is `input.frme`, which is not one of "),
        "{}",
        diagnostics[1]["message"]
    );
}

/// `severity code path line:column` per diagnostic, as the corpus `.expected` files
/// write them (`""` for the root pointer).
fn summary(report: &Value) -> String {
    let mut out = String::new();
    for d in report["diagnostics"].as_array().unwrap() {
        let path = d["path"].as_str().unwrap();
        let path = if path.is_empty() { "\"\"" } else { path };
        out.push_str(&format!(
            "{} {} {} {}:{}\n",
            d["severity"].as_str().unwrap(),
            d["code"].as_str().unwrap(),
            path,
            d["line"],
            d["column"]
        ));
    }
    out
}

#[test]
fn check_a_package_json_file_reports_the_corpus_expectations() {
    let text = corpus().join("text");
    for name in [
        "many-problems",
        "duplicate-member",
        "not-utf8",
        "syntax-comment",
        "syntax-trailing-comma",
    ] {
        let file = format!("{name}.json");
        let run = spirit(&text, &["check", &file, "--format", "json"], b"");
        let expected = fs::read_to_string(text.join(format!("{name}.expected"))).unwrap();
        // Warnings alone (repeated members, which the app reads) exit 0.
        let errors = expected.lines().any(|l| l.starts_with("error "));
        assert_eq!(run.code, Some(i32::from(errors)), "{name}: {run:?}");
        assert_eq!(run.stderr, "", "{name}");
        let report = json_of(&run);
        assert_eq!(summary(&report), expected, "{name}");
        for d in report["diagnostics"].as_array().unwrap() {
            assert_eq!(d["file"], file.as_str(), "{name}");
        }
    }
    let many = json_of(&spirit(
        &text,
        &["check", "many-problems.json", "--format", "json"],
        b"",
    ));
    assert_eq!(
        (&many["errors"], &many["warnings"]),
        (&json!(16), &json!(8))
    );
}

#[test]
fn check_a_package_json_file_applies_the_structure_rules_only() {
    let tmp = TempDir::new().unwrap();
    broken_package(tmp.path(), "pkg");
    // The folder has a missing `main`; its package.json alone is fine.
    let run = spirit(tmp.path(), &["check", "pkg/package.json"], b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "ok: no problems in pkg/package.json\n");
    assert_eq!(run.stderr, "");
}

#[test]
fn check_a_dash_reads_standard_input() {
    let seed_text = fs::read(seed().join("package.json")).unwrap();
    let ok = spirit(&corpus(), &["check", "-"], &seed_text);
    assert_eq!(ok.code, Some(0), "{ok:?}");
    assert_eq!(ok.stdout, "ok: no problems in <stdin>\n");
    assert_eq!(ok.stderr, "");

    let text = corpus().join("text");
    let many = fs::read(text.join("many-problems.json")).unwrap();
    let run = spirit(&corpus(), &["check", "-", "--format", "json"], &many);
    assert_eq!(run.code, Some(1), "{run:?}");
    let report = json_of(&run);
    assert_eq!(
        summary(&report),
        fs::read_to_string(text.join("many-problems.expected")).unwrap()
    );
    for d in report["diagnostics"].as_array().unwrap() {
        assert_eq!(d["file"], "<stdin>");
    }

    let latin1 = spirit(&corpus(), &["check", "-"], b"{\"name\": \"caf\xe9\"}\n");
    assert_eq!(latin1.code, Some(1), "{latin1:?}");
    assert!(
        latin1.stdout.starts_with("warning[spirit/encoding]: "),
        "{}",
        latin1.stdout
    );
    assert!(
        latin1.stdout.contains("\n --> <stdin>:1:14\n"),
        "{}",
        latin1.stdout
    );
    assert!(
        latin1
            .stdout
            .ends_with("error: 3 errors and 1 warning in <stdin>\n"),
        "{}",
        latin1.stdout
    );
}

#[test]
fn check_a_zip_and_a_tgz_of_the_seed_exit_0() {
    let tmp = TempDir::new().unwrap();
    zip_folder(&seed(), &tmp.path().join("seed.zip"));
    tgz_folder(&seed(), &tmp.path().join("seed.tgz"));
    // Recognised by their first bytes, not their names.
    fs::copy(tmp.path().join("seed.zip"), tmp.path().join("seed.zip.bin")).unwrap();
    fs::copy(
        tmp.path().join("seed.tgz"),
        tmp.path().join("seed-tgz.data"),
    )
    .unwrap();
    for archive in ["seed.zip", "seed.tgz", "seed.zip.bin", "seed-tgz.data"] {
        let run = spirit(tmp.path(), &["check", archive], b"");
        assert_eq!(run.code, Some(0), "{archive}: {run:?}");
        assert_eq!(run.stdout, "ok: no problems in 2 files\n", "{archive}");
        assert_eq!(run.stderr, "", "{archive}");
        let json = spirit(tmp.path(), &["check", archive, "--format", "json"], b"");
        assert_eq!(json.code, Some(0), "{archive}");
        assert_eq!(
            json.stdout, "{\"diagnostics\":[],\"errors\":0,\"warnings\":0}\n",
            "{archive}"
        );
    }
    // A ZIP whose package sits in a folder: that folder is the root.
    zip_entries(
        &tmp.path().join("nested.zip"),
        &entries_of(&seed(), "seed-example/"),
    );
    let nested = spirit(tmp.path(), &["check", "nested.zip"], b"");
    assert_eq!(nested.code, Some(0), "{nested:?}");
    assert_eq!(nested.stdout, "ok: no problems in 2 files\n");
}

#[test]
fn check_an_archive_checks_the_files_too() {
    let tmp = TempDir::new().unwrap();
    let broken = broken_package(tmp.path(), "pkg");
    zip_folder(&broken, &tmp.path().join("broken.zip"));
    tgz_folder(&broken, &tmp.path().join("broken.tgz"));
    for archive in ["broken.zip", "broken.tgz"] {
        let run = spirit(tmp.path(), &["check", archive, "--format", "json"], b"");
        assert_eq!(run.code, Some(1), "{archive}: {run:?}");
        let report = json_of(&run);
        let codes: Vec<(&str, &str)> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["code"].as_str().unwrap(), d["path"].as_str().unwrap()))
            .collect();
        assert_eq!(
            codes,
            [
                ("spirit/missing-file", "/main"),
                ("spirit/unknown-value", "/hooks/0/slot")
            ],
            "{archive}"
        );
        assert_eq!(report["errors"], 2, "{archive}");
    }
}

#[test]
fn check_a_zip_with_two_package_json_is_an_archive_layout_error() {
    let tmp = TempDir::new().unwrap();
    let text = fs::read(seed().join("package.json")).unwrap();
    zip_entries(
        &tmp.path().join("two.zip"),
        &[
            ("package.json".to_owned(), text.clone()),
            ("sub/package.json".to_owned(), text),
        ],
    );
    let json = spirit(tmp.path(), &["check", "two.zip", "--format", "json"], b"");
    assert_eq!(json.code, Some(1), "{json:?}");
    assert_eq!(json.stderr, "");
    let report = json_of(&json);
    assert_eq!(
        (&report["errors"], &report["warnings"]),
        (&json!(1), &json!(0))
    );
    assert_eq!(
        report["diagnostics"],
        json!([{
            "severity": "error",
            "code": "spirit/archive-layout",
            "file": "two.zip",
            "path": "",
            "message": "the ZIP archive has 2 files named `package.json` (`package.json`, `sub/package.json`); expected exactly one, whose folder is the package root",
        }])
    );

    let human = spirit(tmp.path(), &["check", "two.zip"], b"");
    assert_eq!(human.code, Some(1));
    assert_eq!(
        human.stdout,
        "error[spirit/archive-layout]: the ZIP archive has 2 files named `package.json` (`package.json`, `sub/package.json`); expected exactly one, whose folder is the package root\n --> two.zip\n\nerror: 1 error in two.zip\n"
    );
}

#[test]
fn check_for_a_host_the_package_does_not_support_exits_1() {
    let tmp = TempDir::new().unwrap();
    package_folder(tmp.path(), "cli", CLI_ONLY);
    let desktop = spirit(
        tmp.path(),
        &["check", "cli", "--host", "desktop", "--format", "json"],
        b"",
    );
    assert_eq!(desktop.code, Some(1), "{desktop:?}");
    let report = json_of(&desktop);
    assert_eq!(report["errors"], 1);
    let d = &report["diagnostics"][0];
    assert_eq!(d["code"], "spirit/unsupported-host");
    assert_eq!(d["file"], "cli/package.json");
    assert_eq!(d["path"], "/spiritExtension/supportedHosts");
    assert_eq!(
        d["message"],
        "the package supports `cli` only, not `desktop`, the host it is checked for"
    );

    let human = spirit(tmp.path(), &["check", "cli", "--host", "desktop"], b"");
    assert_eq!(human.code, Some(1));
    assert!(
        human.stdout.starts_with("error[spirit/unsupported-host]: "),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("  = path: /spiritExtension/supportedHosts\n"),
        "{}",
        human.stdout
    );

    let cli = spirit(tmp.path(), &["check", "cli", "--host", "cli"], b"");
    assert_eq!(cli.code, Some(0), "{cli:?}");
    assert_eq!(cli.stdout, "ok: no problems in cli/package.json\n");
}

#[test]
fn check_registry_needs_requested_capabilities_written_out() {
    let tmp = TempDir::new().unwrap();
    package_folder(tmp.path(), "cli", CLI_ONLY);
    let lenient = spirit(tmp.path(), &["check", "cli"], b"");
    assert_eq!(lenient.code, Some(0), "{lenient:?}");
    assert_eq!(lenient.stdout, "ok: no problems in cli/package.json\n");

    let strict = spirit(
        tmp.path(),
        &["check", "cli", "--registry", "--format", "json"],
        b"",
    );
    assert_eq!(strict.code, Some(1), "{strict:?}");
    let report = json_of(&strict);
    // The marketplace reader also needs a description.
    assert_eq!(report["errors"], 2);
    let description = &report["diagnostics"][0];
    assert_eq!(description["code"], "spirit/registry-required");
    assert_eq!(description["path"], "/description");
    let d = &report["diagnostics"][1];
    assert_eq!(d["code"], "spirit/registry-required");
    assert_eq!(d["path"], "/spiritExtension/requestedCapabilities");
    assert_eq!(
        d["message"],
        "registry-strict mode needs `spiritExtension.requestedCapabilities` written out explicitly; add the capabilities, `[]` when none"
    );

    // Written out as `[]`, it passes.
    let with_none = CLI_ONLY
        .replace(
            "\"supportedHosts\":[\"cli\"]",
            "\"supportedHosts\":[\"cli\"],\"requestedCapabilities\":[]",
        )
        .replacen('{', "{\"description\":\"Looks things up.\",", 1);
    package_folder(tmp.path(), "none", &with_none);
    let none = spirit(tmp.path(), &["check", "none", "--registry"], b"");
    assert_eq!(none.code, Some(0), "{none:?}");
    assert_eq!(none.stdout, "ok: no problems in none/package.json\n");
}

#[test]
fn check_and_tools_on_a_missing_path_exit_2_with_one_error_line() {
    let tmp = TempDir::new().unwrap();
    for command in ["check", "tools"] {
        let run = spirit(tmp.path(), &[command, "no/such/package"], b"");
        assert_eq!(run.code, Some(2), "{command}: {run:?}");
        assert_eq!(run.stdout, "", "{command}");
        assert!(
            run.stderr
                .starts_with("error: could not read `no/such/package`: "),
            "{command}: {}",
            run.stderr
        );
        assert_eq!(run.stderr.lines().count(), 1, "{command}: {}", run.stderr);
    }
    let bad_format = spirit(
        &corpus(),
        &["check", "seed-example", "--format", "xml"],
        b"",
    );
    assert_eq!(bad_format.code, Some(2));
    assert_eq!(bad_format.stdout, "");
    let bad_host = spirit(&corpus(), &["check", "seed-example", "--host", "web"], b"");
    assert_eq!(bad_host.code, Some(2));
    assert!(
        bad_host.stderr.contains("possible values: cli, desktop"),
        "{}",
        bad_host.stderr
    );
}

// ---------------------------------------------------------------------------------
// spirit tools

#[test]
fn tools_human_shows_the_invocation_name_description_and_schema() {
    let expected = format!(
        "{INVOCATION}
  tool:        lookup_item
  description: Look up an item by id.
  input schema:
    {{
      \"properties\": {{
        \"id\": {{
          \"type\": \"string\"
        }}
      }},
      \"required\": [
        \"id\"
      ],
      \"type\": \"object\"
    }}
"
    );
    let tmp = TempDir::new().unwrap();
    zip_folder(&seed(), &tmp.path().join("seed.zip"));
    tgz_folder(&seed(), &tmp.path().join("seed.tgz"));
    let folder = seed();
    let file = seed().join("package.json");
    for path in [
        folder.to_str().unwrap(),
        file.to_str().unwrap(),
        "seed.zip",
        "seed.tgz",
    ] {
        let run = spirit(tmp.path(), &["tools", path], b"");
        assert_eq!(run.code, Some(0), "{path}: {run:?}");
        assert_eq!(run.stdout, expected, "{path}");
        assert_eq!(run.stderr, "", "{path}");
    }
    let stdin = spirit(tmp.path(), &["tools", "-"], &fs::read(&file).unwrap());
    assert_eq!(stdin.code, Some(0), "{stdin:?}");
    assert_eq!(stdin.stdout, expected);
}

#[test]
fn tools_json_gives_the_name_tool_description_and_input_schema() {
    let run = spirit(
        &corpus(),
        &["tools", "seed-example", "--format", "json"],
        b"",
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stderr, "");
    let tools = json_of(&run);
    let manifest: Value =
        serde_json::from_slice(&fs::read(seed().join("package.json")).unwrap()).unwrap();
    let schema = &manifest["spiritExtension"]["contributes"]["tools"][0]["inputSchema"];
    assert_eq!(
        tools,
        json!({
            "package": ID,
            "tools": [{
                "name": INVOCATION,
                "tool": "lookup_item",
                "description": "Look up an item by id.",
                "input_schema": schema,
            }],
            "diagnostics": [],
        })
    );
}

#[test]
fn tools_of_a_package_without_tools_or_with_warnings() {
    let tmp = TempDir::new().unwrap();
    package_folder(tmp.path(), "cli", CLI_ONLY);
    let none = spirit(tmp.path(), &["tools", "cli"], b"");
    assert_eq!(none.code, Some(0), "{none:?}");
    assert_eq!(none.stdout, "hello contributes no tool\n");
    let none_json = spirit(tmp.path(), &["tools", "cli", "--format", "json"], b"");
    assert_eq!(none_json.code, Some(0));
    assert_eq!(
        none_json.stdout,
        "{\"package\":\"hello\",\"tools\":[],\"diagnostics\":[]}\n"
    );

    // A warning does not stop the tools; the human output lists it after them.
    let text = fs::read_to_string(seed().join("package.json"))
        .unwrap()
        .replace(
            "\"displayName\": \"Example extension\",",
            "\"displayName\": \"Example extension\", \"colour\": \"red\",",
        );
    let warned = seed_copy(tmp.path(), "warned");
    fs::write(warned.join("package.json"), text).unwrap();
    let run = spirit(tmp.path(), &["tools", "warned"], b"");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .starts_with(&format!("{INVOCATION}\n  tool:        lookup_item\n")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("\n\nwarning[spirit/unknown-key]: unknown member `colour`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with("warning: 1 warning in 2 files\n"),
        "{}",
        run.stdout
    );
    // The JSON output carries the warning too, as a diagnostic in SPEC section 7's shape.
    let run = spirit(tmp.path(), &["tools", "warned", "--format", "json"], b"");
    let json = json_of(&run);
    assert_eq!(json["tools"][0]["name"], INVOCATION);
    assert_eq!(json["diagnostics"][0]["code"], "spirit/unknown-key");
    assert_eq!(json["diagnostics"][0]["path"], "/spiritExtension/colour");
    assert!(
        run.stdout
            .contains("\"diagnostics\":[{\"severity\":\"warning\",\"code\":"),
        "{}",
        run.stdout
    );
}

#[test]
fn tools_on_an_invalid_package_exit_1_with_the_diagnostics() {
    let tmp = TempDir::new().unwrap();
    broken_package(tmp.path(), "pkg");
    let human = spirit(tmp.path(), &["tools", "pkg"], b"");
    assert_eq!(human.code, Some(1), "{human:?}");
    assert_eq!(human.stderr, "");
    let check = spirit(tmp.path(), &["check", "pkg"], b"");
    assert_eq!(human.stdout, check.stdout);
    assert!(!human.stdout.contains(INVOCATION));

    let json = spirit(tmp.path(), &["tools", "pkg", "--format", "json"], b"");
    assert_eq!(json.code, Some(1), "{json:?}");
    let report = json_of(&json);
    assert_eq!(report["errors"], 2);
    assert_eq!(report["diagnostics"][0]["code"], "spirit/missing-file");
    assert_eq!(report["diagnostics"][1]["code"], "spirit/unknown-value");
    assert!(report.get("tools").is_none());

    let text = corpus().join("text");
    let syntax = spirit(&text, &["tools", "syntax-comment.json"], b"");
    assert_eq!(syntax.code, Some(1), "{syntax:?}");
    assert!(
        syntax.stdout.starts_with("error[spirit/syntax]: "),
        "{}",
        syntax.stdout
    );
}

// ---------------------------------------------------------------------------------
// spirit install / list / remove

/// The seed package at version `0.2.0` with a different script: what a second
/// install of the same id brings.
fn seed_v2(dir: &Path) -> PathBuf {
    let path = seed_copy(dir, "seed-v2");
    let text = fs::read_to_string(path.join("package.json"))
        .unwrap()
        .replace("\"version\": \"0.1.0\"", "\"version\": \"0.2.0\"");
    fs::write(path.join("package.json"), text).unwrap();
    fs::write(
        path.join("dist/index.js"),
        "export function activate() { /* v2 */ }\n",
    )
    .unwrap();
    path
}

#[test]
fn install_then_again_refuses_and_replace_replaces() {
    let tmp = TempDir::new().unwrap();
    zip_folder(&seed(), &tmp.path().join("seed.zip"));
    let v2 = seed_v2(tmp.path());
    zip_folder(&v2, &tmp.path().join("v2.zip"));
    let installed_at = tmp.path().join("data/extensions/cli").join(DIR);
    let host_dir = tmp.path().join("data/extensions/cli");
    let app_layout = ["extension-state", "extensions.json", DIR];

    let first = spirit(
        tmp.path(),
        &["install", "seed.zip", "--data-dir", "data", "--host", "cli"],
        b"",
    );
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_eq!(
        first.stdout,
        format!("installed `{ID}` 0.1.0 for cli in data/extensions/cli/{DIR} (archive)\n")
    );
    assert_eq!(first.stderr, "");
    assert_eq!(snapshot(&installed_at), snapshot(&seed()));
    assert_eq!(names_in(&host_dir), app_layout);

    let again = spirit(
        tmp.path(),
        &["install", "v2.zip", "--data-dir", "data", "--host", "cli"],
        b"",
    );
    assert_eq!(again.code, Some(1), "{again:?}");
    assert_eq!(again.stdout, "");
    assert_eq!(
        again.stderr,
        format!(
            "error: `{ID}` is already installed for cli in `data/extensions/cli/{DIR}`; it was left as it is (remove it first, or install with `--replace`)\n"
        )
    );
    // Byte for byte the first install, and no temporary folder left behind.
    assert_eq!(snapshot(&installed_at), snapshot(&seed()));
    assert_eq!(names_in(&host_dir), app_layout);

    let replaced = spirit(
        tmp.path(),
        &[
            "install",
            "v2.zip",
            "--data-dir",
            "data",
            "--host",
            "cli",
            "--replace",
        ],
        b"",
    );
    assert_eq!(replaced.code, Some(0), "{replaced:?}");
    assert_eq!(
        replaced.stdout,
        format!(
            "installed `{ID}` 0.2.0 for cli in data/extensions/cli/{DIR} (archive) (the previous copy was replaced)\n"
        )
    );
    assert_eq!(replaced.stderr, "");
    assert_eq!(snapshot(&installed_at), snapshot(&v2));
    assert_eq!(names_in(&host_dir), app_layout);

    // `--replace` with nothing installed is a plain install.
    let desktop = spirit(
        tmp.path(),
        &[
            "install",
            "v2.zip",
            "--data-dir",
            "data",
            "--host",
            "desktop",
            "--replace",
        ],
        b"",
    );
    assert_eq!(desktop.code, Some(0), "{desktop:?}");
    assert_eq!(
        desktop.stdout,
        format!("installed `{ID}` 0.2.0 for desktop in data/extensions/desktop/{DIR} (archive)\n")
    );
}

#[test]
fn install_a_tgz_for_each_host() {
    let tmp = TempDir::new().unwrap();
    tgz_folder(&seed(), &tmp.path().join("seed.tgz"));
    for host in ["cli", "desktop"] {
        let run = spirit(
            tmp.path(),
            &["install", "seed.tgz", "--data-dir", "data", "--host", host],
            b"",
        );
        assert_eq!(run.code, Some(0), "{host}: {run:?}");
        assert_eq!(
            run.stdout,
            format!(
                "installed `{ID}` 0.1.0 for {host} in data/extensions/{host}/{DIR} (marketplace)\n"
            )
        );
        let installed_at = tmp.path().join("data/extensions").join(host).join(DIR);
        assert_eq!(snapshot(&installed_at), snapshot(&seed()), "{host}");
        // A marketplace tarball replaces without being asked, as in the app.
        let again = spirit(
            tmp.path(),
            &["install", "seed.tgz", "--data-dir", "data", "--host", host],
            b"",
        );
        assert_eq!(again.code, Some(0), "{host}: {again:?}");
        assert!(
            again
                .stdout
                .ends_with("(marketplace) (the previous copy was replaced)\n"),
            "{}",
            again.stdout
        );
    }
}

/// Asserts that nothing is installed and nothing was left but what the Spirit app
/// leaves after a refused ZIP: `extensions/<host>/extension-state/`, empty (or, for an
/// archive refused before it was recognised, nothing at all).
fn assert_nothing_installed(data: &Path, host: &str) {
    let host_dir = data.join("extensions").join(host);
    let names = names_in(&host_dir);
    assert!(
        names.is_empty() || names == ["extension-state"],
        "{}: {names:?}",
        host_dir.display()
    );
    assert_eq!(
        names_in(&host_dir.join("extension-state")),
        Vec::<String>::new()
    );
}

#[test]
fn install_an_invalid_package_or_archive_exits_1_and_leaves_nothing() {
    let tmp = TempDir::new().unwrap();
    let data = tmp.path().join("data");

    // A package with errors: the report on stdout, one line on stderr.
    let broken = broken_package(tmp.path(), "pkg");
    zip_folder(&broken, &tmp.path().join("broken.zip"));
    let run = spirit(
        tmp.path(),
        &[
            "install",
            "broken.zip",
            "--data-dir",
            "data",
            "--host",
            "cli",
        ],
        b"",
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.stderr, "error: `broken.zip` was not installed\n");
    assert!(
        run.stdout
            .starts_with("error[spirit/missing-file]: `main` `dist/index.js` does not exist in the package\n --> broken.zip:package.json:7:11\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("\n --> broken.zip:cli-hooks.json:4:15\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with("error: 2 errors in 2 files\n"),
        "{}",
        run.stdout
    );
    assert_nothing_installed(&data, "cli");

    let json = spirit(
        tmp.path(),
        &[
            "install",
            "broken.zip",
            "--data-dir",
            "data",
            "--host",
            "cli",
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(json.code, Some(1), "{json:?}");
    let report = json_of(&json);
    assert_eq!(report["errors"], 2);
    assert_eq!(report["diagnostics"][0]["file"], "broken.zip:package.json");
    assert_eq!(
        report["diagnostics"][1]["file"],
        "broken.zip:cli-hooks.json"
    );
    assert_nothing_installed(&data, "cli");

    // Not for this host.
    zip_entries(
        &tmp.path().join("cli-only.zip"),
        &[("package.json".to_owned(), CLI_ONLY.as_bytes().to_vec())],
    );
    let host = spirit(
        tmp.path(),
        &[
            "install",
            "cli-only.zip",
            "--data-dir",
            "data",
            "--host",
            "desktop",
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(host.code, Some(1), "{host:?}");
    let report = json_of(&host);
    assert_eq!(report["diagnostics"][0]["code"], "spirit/unsupported-host");
    assert_eq!(
        report["diagnostics"][0]["file"],
        "cli-only.zip:package.json"
    );
    assert_eq!(host.stderr, "error: `cli-only.zip` was not installed\n");
    assert_nothing_installed(&data, "desktop");

    // An archive refused as a whole.
    let text = fs::read(seed().join("package.json")).unwrap();
    zip_entries(
        &tmp.path().join("two.zip"),
        &[
            ("package.json".to_owned(), text.clone()),
            ("sub/package.json".to_owned(), text),
        ],
    );
    let two = spirit(
        tmp.path(),
        &[
            "install",
            "two.zip",
            "--data-dir",
            "data",
            "--host",
            "cli",
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(two.code, Some(1), "{two:?}");
    let report = json_of(&two);
    assert_eq!(report["errors"], 1);
    assert_eq!(report["diagnostics"][0]["code"], "spirit/archive-layout");
    assert_eq!(report["diagnostics"][0]["file"], "two.zip");
    assert_eq!(two.stderr, "error: `two.zip` was not installed\n");
    assert_nothing_installed(&data, "cli");

    // Not an archive at all.
    let not = spirit(
        tmp.path(),
        &[
            "install",
            "pkg/package.json",
            "--data-dir",
            "data",
            "--host",
            "cli",
        ],
        b"",
    );
    assert_eq!(not.code, Some(1), "{not:?}");
    assert!(
        not.stdout.starts_with("error[spirit/archive-corrupt]: "),
        "{}",
        not.stdout
    );
    assert_eq!(not.stderr, "error: `pkg/package.json` was not installed\n");
    assert_nothing_installed(&data, "cli");

    // Nothing for the other host either, and no stray file at the top.
    assert_nothing_installed(&data, "desktop");
    for name in names_in(&data.join("extensions")) {
        assert!(name == "cli" || name == "desktop", "{name}");
    }
}

#[test]
fn install_an_unreadable_archive_exits_2() {
    let tmp = TempDir::new().unwrap();
    let run = spirit(
        tmp.path(),
        &[
            "install",
            "no-such.zip",
            "--data-dir",
            "data",
            "--host",
            "cli",
        ],
        b"",
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("error: the archive `no-such.zip` cannot be installed: could not read the archive `no-such.zip`: "),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("could not read").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(!tmp.path().join("data").exists());
}

#[test]
fn list_human_and_json() {
    let tmp = TempDir::new().unwrap();
    let empty = spirit(tmp.path(), &["list", "--data-dir", "data"], b"");
    assert_eq!(empty.code, Some(0), "{empty:?}");
    assert_eq!(empty.stdout, "no Spirit extension is installed\n");
    assert_eq!(empty.stderr, "");
    let empty_json = spirit(
        tmp.path(),
        &["list", "--data-dir", "data", "--format", "json"],
        b"",
    );
    assert_eq!(empty_json.code, Some(0));
    assert_eq!(empty_json.stdout, "{\"packages\":[]}\n");

    zip_folder(&seed(), &tmp.path().join("seed.zip"));
    zip_entries(
        &tmp.path().join("hello.zip"),
        &[("package.json".to_owned(), CLI_ONLY.as_bytes().to_vec())],
    );
    for (archive, host) in [
        ("seed.zip", "desktop"),
        ("hello.zip", "cli"),
        ("seed.zip", "cli"),
    ] {
        let run = spirit(
            tmp.path(),
            &["install", archive, "--data-dir", "data", "--host", host],
            b"",
        );
        assert_eq!(run.code, Some(0), "{archive} {host}: {run:?}");
    }

    let human = spirit(tmp.path(), &["list", "--data-dir", "data"], b"");
    assert_eq!(human.code, Some(0), "{human:?}");
    assert_eq!(human.stderr, "");
    assert_eq!(
        human.stdout,
        format!(
            "cli      {ID} 0.1.0  \"Example extension\"  supports cli, desktop\n\
             cli      hello 1.0.0  \"Hello\"  supports cli\n\
             desktop  {ID} 0.1.0  \"Example extension\"  supports cli, desktop\n"
        )
    );
    // The listing rewrote nothing: the index was already the app's.
    let index: Value = serde_json::from_str(
        &fs::read_to_string(tmp.path().join("data/extensions/cli/extensions.json")).unwrap(),
    )
    .unwrap();
    let ids: Vec<&str> = index["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [ID, "hello"]);
    let desktop = spirit(
        tmp.path(),
        &["list", "--data-dir", "data", "--host", "desktop"],
        b"",
    );
    assert_eq!(desktop.code, Some(0));
    assert_eq!(
        desktop.stdout,
        format!("desktop  {ID} 0.1.0  \"Example extension\"  supports cli, desktop\n")
    );

    let json = spirit(
        tmp.path(),
        &["list", "--data-dir", "data", "--format", "json"],
        b"",
    );
    assert_eq!(json.code, Some(0), "{json:?}");
    let list = json_of(&json);
    let mut packages = list["packages"].as_array().unwrap().clone();
    assert_eq!(packages.len(), 3);
    for package in &mut packages {
        let at = package["installed_at_unix_ms"].take();
        assert!(at.as_u64().unwrap() > 1_600_000_000_000, "{at}");
    }
    assert_eq!(
        packages[0],
        json!({
            "id": ID,
            "host": "cli",
            "path": format!("data/extensions/cli/{DIR}"),
            "directory_name": DIR,
            "layout": "app",
            "seen_by_app": true,
            "version": "0.1.0",
            "display_name": "Example extension",
            "supported_hosts": ["cli", "desktop"],
            "installed_at_unix_ms": null,
            "install_source": "archive",
            "archive_file_name": "seed.zip",
            "valid": true,
            "state": "valid",
            "problems": [],
            "diagnostics": [],
        })
    );
    assert_eq!(
        packages[1],
        json!({
            "id": "hello",
            "host": "cli",
            "path": "data/extensions/cli/pkg-aGVsbG8",
            "directory_name": "pkg-aGVsbG8",
            "layout": "app",
            "seen_by_app": true,
            "version": "1.0.0",
            "display_name": "Hello",
            "supported_hosts": ["cli"],
            "installed_at_unix_ms": null,
            "install_source": "archive",
            "archive_file_name": "hello.zip",
            "valid": true,
            "state": "valid",
            "problems": [],
            "diagnostics": [],
        })
    );
    assert_eq!(packages[2]["host"], "desktop");
    assert_eq!(packages[2]["id"], ID);
    assert_eq!(
        packages[2]["path"],
        format!("data/extensions/desktop/{DIR}")
    );
    assert_eq!(packages[2]["valid"], true);
    assert_eq!(packages[2]["state"], "valid");

    // Temporary folders (names starting with `.`) are never packages.
    fs::create_dir_all(
        tmp.path()
            .join("data/extensions/cli/.spirit-install-leftover"),
    )
    .unwrap();
    let hidden = spirit(
        tmp.path(),
        &["list", "--data-dir", "data", "--host", "cli"],
        b"",
    );
    assert_eq!(hidden.code, Some(0));
    assert_eq!(hidden.stdout.lines().count(), 2, "{}", hidden.stdout);
}

#[test]
fn list_shows_a_package_edited_after_install_as_invalid_and_exits_1() {
    let tmp = TempDir::new().unwrap();
    zip_folder(&seed(), &tmp.path().join("seed.zip"));
    for host in ["cli", "desktop"] {
        let run = spirit(
            tmp.path(),
            &["install", "seed.zip", "--data-dir", "data", "--host", host],
            b"",
        );
        assert_eq!(run.code, Some(0), "{run:?}");
    }
    let manifest = tmp
        .path()
        .join("data/extensions/cli")
        .join(DIR)
        .join("package.json");
    let edited = fs::read_to_string(&manifest)
        .unwrap()
        // An empty version, which the Spirit app refuses.
        .replace("\"version\": \"0.1.0\"", "\"version\": \"\"");
    fs::write(&manifest, edited).unwrap();

    let human = spirit(tmp.path(), &["list", "--data-dir", "data"], b"");
    assert_eq!(human.code, Some(1), "{human:?}");
    assert_eq!(human.stderr, "");
    let path = format!("data/extensions/cli/{DIR}");
    assert!(
        human.stdout.starts_with(&format!(
            "cli      {ID}  INVALID: {path}\n\
             desktop  {ID} 0.1.0  \"Example extension\"  supports cli, desktop\n\
             \n\
             `{ID}` (cli) no longer validates:\n\
             error[spirit/empty-value]: "
        )),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains(&format!("\n --> {path}/package.json:3:14\n")),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("\n  = path: /version\n"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.ends_with("error: 1 error in 2 files\n"),
        "{}",
        human.stdout
    );

    let json = spirit(
        tmp.path(),
        &["list", "--data-dir", "data", "--format", "json"],
        b"",
    );
    assert_eq!(json.code, Some(1), "{json:?}");
    let list = json_of(&json);
    let invalid = &list["packages"][0];
    assert_eq!(invalid["id"], ID);
    assert_eq!(invalid["host"], "cli");
    assert_eq!(invalid["valid"], false);
    assert_eq!(invalid["version"], Value::Null);
    assert_eq!(invalid["display_name"], Value::Null);
    assert_eq!(invalid["supported_hosts"], Value::Null);
    assert_eq!(invalid["problems"], json!([]));
    let diagnostics = invalid["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0]["code"], "spirit/empty-value");
    assert_eq!(diagnostics[0]["severity"], "error");
    assert_eq!(diagnostics[0]["path"], "/version");
    assert_eq!(diagnostics[0]["file"], format!("{path}/package.json"));
    assert_eq!(
        (&diagnostics[0]["line"], &diagnostics[0]["column"]),
        (&json!(3), &json!(14))
    );
    assert_eq!(list["packages"][1]["valid"], true);

    // Only the desktop host: all valid again.
    let desktop = spirit(
        tmp.path(),
        &["list", "--data-dir", "data", "--host", "desktop"],
        b"",
    );
    assert_eq!(desktop.code, Some(0), "{desktop:?}");
}

#[test]
fn list_keys_a_folder_by_its_package_name_as_the_app_does() {
    let tmp = TempDir::new().unwrap();
    // A folder of any name is the package its package.json names (the app lists it),
    // in our old layout until it is migrated.
    copy_dir(&seed(), &tmp.path().join("data/extensions/cli/renamed"));
    let human = spirit(tmp.path(), &["list", "--data-dir", "data"], b"");
    assert_eq!(human.code, Some(0), "{human:?}");
    assert_eq!(
        human.stdout,
        format!(
            "cli      {ID} 0.1.0  \"Example extension\"  supports cli, desktop  (old layout: `renamed/`)\n\
             \n\
             1 install(s) in the old layout; move them into the Spirit app's with `curupira spirit migrate --data-dir data`\n"
        )
    );
    let json = json_of(&spirit(
        tmp.path(),
        &["list", "--data-dir", "data", "--format", "json"],
        b"",
    ));
    let package = &json["packages"][0];
    assert_eq!(package["id"], ID);
    assert_eq!(package["valid"], true);
    assert_eq!(package["layout"], "legacy");
    assert_eq!(package["seen_by_app"], true);
    assert_eq!(package["directory_name"], "renamed");
    assert_eq!(package["install_source"], Value::Null);
    // The listing wrote the app's index: the folder's mtime and no source.
    let index: Value = serde_json::from_str(
        &fs::read_to_string(tmp.path().join("data/extensions/cli/extensions.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(index["entries"].as_array().unwrap().len(), 1);
    assert_eq!(index["entries"][0]["id"], ID);
    assert_eq!(index["entries"][0]["directoryName"], "renamed");
    assert_eq!(index["entries"][0].as_object().unwrap().len(), 3);
    assert_eq!(
        package["installed_at_unix_ms"],
        index["entries"][0]["installedAtUnixMs"]
    );
}

#[test]
fn remove_deletes_the_folder_and_refuses_bad_or_unknown_ids() {
    let tmp = TempDir::new().unwrap();
    zip_folder(&seed(), &tmp.path().join("seed.zip"));
    for host in ["cli", "desktop"] {
        let run = spirit(
            tmp.path(),
            &["install", "seed.zip", "--data-dir", "data", "--host", host],
            b"",
        );
        assert_eq!(run.code, Some(0), "{run:?}");
    }
    // Something `../x` would name from the host folder.
    let sibling = tmp.path().join("data/extensions/x");
    fs::create_dir_all(&sibling).unwrap();
    fs::write(sibling.join("keep.txt"), "keep").unwrap();

    let escape = spirit(
        tmp.path(),
        &["remove", "../x", "--data-dir", "data", "--host", "cli"],
        b"",
    );
    assert_eq!(escape.code, Some(2), "{escape:?}");
    assert_eq!(escape.stdout, "");
    assert_eq!(
        escape.stderr,
        "error: `../x` is not a package name; expected `name` or `@scope/name` made of lowercase letters, digits, `.`, `_` and `-`, each part starting with a letter or digit\n"
    );
    assert_eq!(
        fs::read_to_string(sibling.join("keep.txt")).unwrap(),
        "keep"
    );

    let unknown = spirit(
        tmp.path(),
        &["remove", "hello", "--data-dir", "data", "--host", "cli"],
        b"",
    );
    assert_eq!(unknown.code, Some(2), "{unknown:?}");
    assert_eq!(unknown.stdout, "");
    assert_eq!(
        unknown.stderr,
        "error: `hello` is not installed for cli: no folder in `data/extensions/cli` holds a package.json named `hello`\n"
    );

    let removed = spirit(
        tmp.path(),
        &["remove", ID, "--data-dir", "data", "--host", "cli"],
        b"",
    );
    assert_eq!(removed.code, Some(0), "{removed:?}");
    assert_eq!(
        removed.stdout,
        format!("removed `{ID}` for cli from data/extensions/cli/{DIR}\n")
    );
    assert_eq!(removed.stderr, "");
    assert!(!tmp.path().join("data/extensions/cli").join(DIR).exists());
    // No temporary folder is left; the index is the app's, empty.
    assert_eq!(
        names_in(&tmp.path().join("data/extensions/cli")),
        ["extension-state", "extensions.json"]
    );
    assert_eq!(
        fs::read_to_string(tmp.path().join("data/extensions/cli/extensions.json")).unwrap(),
        "{\n  \"entries\": []\n}\n"
    );
    // The desktop copy is untouched.
    assert_eq!(
        snapshot(&tmp.path().join("data/extensions/desktop").join(DIR)),
        snapshot(&seed())
    );

    let again = spirit(
        tmp.path(),
        &["remove", ID, "--data-dir", "data", "--host", "cli"],
        b"",
    );
    assert_eq!(again.code, Some(2), "{again:?}");
    assert_eq!(again.stdout, "");
    assert_eq!(
        again.stderr,
        format!(
            "error: `{ID}` is not installed for cli: no folder in `data/extensions/cli` holds a package.json named `{ID}`\n"
        )
    );

    let list = spirit(tmp.path(), &["list", "--data-dir", "data"], b"");
    assert_eq!(list.code, Some(0));
    assert_eq!(
        list.stdout,
        format!("desktop  {ID} 0.1.0  \"Example extension\"  supports cli, desktop\n")
    );
}

/// A handful of the Spirit app's recorded verdicts (`../shared/conformance/spirit-app/
/// validate/`, README "validate/") through the binary, as the README's test runs them:
/// `spirit check <copy> --host <host> --format json`. The library test
/// `manifest-spirit/tests/app_verdicts.rs` runs all of them.
#[test]
fn check_gives_the_verdicts_of_the_spirit_app() {
    let vectors = curupira_test_support::conformance::folder("spirit-app/validate");
    if !vectors.join("verdicts.json").is_file() {
        eprintln!(
            "skipped: {} is not here (manifest-spirit's rules.rs covers the rules)",
            vectors.display()
        );
        return;
    }
    // (case, errors expected): refused and broken packages have errors; packages the
    // app installs and runs have none, warnings allowed.
    for (case, errors) in [
        ("seed", false),
        ("bom", true),
        ("hooksfile-bom", true),
        ("repro-dot-segments", true),
        ("repro-empty-ui-contribution", true),
        ("repro-empty-hooks-file", true),
        ("setting-options-on-string", true),
        ("repro-secret-key-pattern", true),
        ("repro-long-id", true),
        ("namelen-178", false),
        ("main-backslash", true),
        ("main-missing", true),
        ("caps-no-tool-caps", true),
        ("repro-main-folder", true),
        ("repro-version-free", false),
        ("repro-trim-enum", false),
        ("repro-container-wrong-type-ignored", false),
        ("repro-duplicates-allowed", false),
        ("css-backslash", false),
        ("not-utf8", false),
    ] {
        let tmp = TempDir::new().unwrap();
        copy_dir(&vectors.join(case), &tmp.path().join("pkg"));
        let run = spirit(
            tmp.path(),
            &["check", "pkg", "--host", "cli", "--format", "json"],
            b"",
        );
        assert_eq!(run.stderr, "", "{case}");
        let report = json_of(&run);
        let found = report["errors"].as_u64().unwrap();
        assert_eq!(found > 0, errors, "{case}: {}", run.stdout);
        assert_eq!(run.code, Some(i32::from(errors)), "{case}: {run:?}");
    }
}
