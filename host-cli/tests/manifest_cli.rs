//! `curupira manifest check` as a user runs it: the real binary, real files, exit
//! codes 0/1/2, both output formats, and colour only when asked for by the terminal.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifest-curupira/tests/corpus")
}

/// `curupira manifest check ARGS…` run from the corpus folder, with a colour-neutral
/// environment unless `env` says otherwise.
fn check(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_curupira"));
    command
        .args(["manifest", "check"])
        .args(args)
        .current_dir(corpus())
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    // A child that exits before reading (a usage error) closes the pipe: that is fine.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn a_valid_manifest_exits_0() {
    let output = check(&["valid/seed-example.toml"], &[], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "ok: no problems in valid/seed-example.toml\n"
    );
}

#[test]
fn warnings_alone_still_exit_0() {
    let output = check(&["invalid/unknown-runtime.toml"], &[], b"");
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(
        text.starts_with("warning[manifest/unknown-runtime]: "),
        "{text}"
    );
    assert!(
        text.ends_with("warning: 1 warning in invalid/unknown-runtime.toml\n"),
        "{text}"
    );
}

#[test]
fn errors_exit_1_with_file_line_and_column() {
    let output = check(&["invalid/many-problems.toml"], &[], b"");
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains(" --> invalid/many-problems.toml:2:20\n"),
        "{text}"
    );
    assert!(text.contains("2 | manifest_version = 2\n"), "{text}");
    assert!(
        text.contains("  --> invalid/many-problems.toml:16:1\n"),
        "{text}"
    );
    assert!(
        text.ends_with("error: 8 errors and 4 warnings in invalid/many-problems.toml\n"),
        "{text}"
    );
    assert_eq!(stderr(&output), "");
}

#[test]
fn json_output_is_one_object_with_the_counts() {
    let output = check(
        &["invalid/many-problems.toml", "--format", "json"],
        &[],
        b"",
    );
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert_eq!(text.lines().count(), 1);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["errors"], 8);
    assert_eq!(json["warnings"], 4);
    let diagnostics = json["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 12);
    assert_eq!(
        diagnostics[0]["code"],
        "manifest/unsupported-manifest-version"
    );
    assert_eq!(diagnostics[0]["file"], "invalid/many-problems.toml");
    assert_eq!(diagnostics[0]["path"], "/manifest_version");
    assert_eq!(
        (
            diagnostics[0]["line"].as_u64(),
            diagnostics[0]["column"].as_u64()
        ),
        (Some(2), Some(20))
    );

    let valid = check(
        &["--format", "json", "valid/executable-launch.toml"],
        &[],
        b"",
    );
    assert_eq!(valid.status.code(), Some(0));
    assert_eq!(
        stdout(&valid),
        "{\"diagnostics\":[],\"errors\":0,\"warnings\":0}\n"
    );
}

#[test]
fn a_dash_reads_standard_input() {
    let text = std::fs::read(corpus().join("invalid/missing-key-launch-package.toml")).unwrap();
    let output = check(&["-", "--format", "json"], &[], &text);
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let diagnostic = &json["diagnostics"][0];
    assert_eq!(diagnostic["file"], "<stdin>");
    assert_eq!(diagnostic["path"], "/launch/package");
    assert_eq!(diagnostic["line"], 10);

    let latin1 = check(&["-"], &[], b"name = \"caf\xe9\"\n");
    assert_eq!(latin1.status.code(), Some(1));
    assert!(
        stdout(&latin1).starts_with("error[manifest/encoding]: "),
        "{}",
        stdout(&latin1)
    );
}

#[test]
fn unreadable_input_and_bad_usage_exit_2() {
    let missing = check(&["no/such/file.toml"], &[], b"");
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(stdout(&missing), "");
    let message = stderr(&missing);
    assert!(
        message.starts_with("error: could not read the manifest `no/such/file.toml`: "),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");

    let directory = check(&["valid"], &[], b"");
    assert_eq!(directory.status.code(), Some(2));

    let no_path = check(&[], &[], b"");
    assert_eq!(no_path.status.code(), Some(2));
    let bad_format = check(&["valid/seed-example.toml", "--format", "xml"], &[], b"");
    assert_eq!(bad_format.status.code(), Some(2));
    assert!(stderr(&bad_format).contains("possible values: human, json"));
}

#[test]
fn colour_only_when_forced_and_never_with_no_color() {
    let escape = |output: &Output| output.stdout.contains(&0x1b);
    // Not a terminal: plain text.
    let piped = check(&["invalid/many-problems.toml"], &[], b"");
    assert!(!escape(&piped));
    // CLICOLOR_FORCE turns colour on without a terminal ...
    let forced = check(
        &["invalid/many-problems.toml"],
        &[("CLICOLOR_FORCE", "1")],
        b"",
    );
    assert!(escape(&forced));
    assert_eq!(forced.status.code(), Some(1));
    // ... and NO_COLOR wins over it.
    let no_color = check(
        &["invalid/many-problems.toml"],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
        b"",
    );
    assert!(!escape(&no_color));
    assert_eq!(no_color.stdout, piped.stdout);
    // JSON is never coloured.
    let json = check(
        &["invalid/many-problems.toml", "--format", "json"],
        &[("CLICOLOR_FORCE", "1")],
        b"",
    );
    assert!(!escape(&json));
}

/// The official `curupira-plugins` manifest (as `--curupira-print-manifest` printed
/// it, recorded in `../shared/conformance/curupira-wire/manifests/`) passes with no
/// diagnostic; the `command` launch the reference host refuses is an error naming the
/// fix.
#[test]
fn the_official_manifest_passes_and_a_command_launch_names_the_fix() {
    let manifests = curupira_test_support::conformance::folder("curupira-wire/manifests");
    if !manifests.is_dir() {
        eprintln!("skipped: {} is missing", manifests.display());
        return;
    }
    let official = manifests.join("curupira-plugins.printed.toml");
    let output = check(&["--format", "json", official.to_str().unwrap()], &[], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["errors"], 0, "{json}");
    assert_eq!(json["warnings"], 0, "{json}");

    let command = manifests.join("refused/command.toml");
    let output = check(&[command.to_str().unwrap()], &[], b"");
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("manifest/command-launch"), "{text}");
    assert!(
        text.contains("write `type = \"executable\"` with `program = \"python3\"`"),
        "{text}"
    );
}
