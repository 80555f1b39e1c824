//! The rough edges a new user hit (issue 13), each fixed and kept fixed, on the real
//! `curupira` binary: an OS error said once, a missing `./curupira.toml`, one unclosed
//! TOML array, `run --format json` with a broken config, `probe --format json`'s
//! verdict, `-q`, the shell completions and man page a session loads for real, the
//! man pages' EXIT STATUS, FILES and EXAMPLES, and a closed pipe (`| head -1`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use run_support::{Run, curupira, run_in};
use serde_json::Value;

/// The quick start's files, copied into a fresh folder (the run writes `done.jsonl`).
fn quickstart() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart");
    for name in ["curupira.toml", "agent.sh", "prompt.md", "tasks.jsonl"] {
        fs::copy(from.join(name), dir.path().join(name)).unwrap();
    }
    dir
}

/// The quick start's config with the `]` of `command` left out.
fn unclosed(config: &str) -> String {
    let broken = config.replace(
        "command = [\"sh\", \"agent.sh\"]",
        "command = [\"sh\", \"agent.sh\"",
    );
    assert_ne!(
        broken, config,
        "the quick start's command changed; update this test"
    );
    broken
}

fn json_lines(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn an_os_error_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(dir.path(), &["validate", "--config", "nope.toml"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    let line = run.stderr.trim_end();
    assert!(
        line.starts_with("error: cannot read the config file `nope.toml`: "),
        "{line}"
    );
    assert_eq!(line.matches("(os error 2)").count(), 1, "{line}");
    assert_eq!(line.lines().count(), 1, "{line}");
}

#[test]
fn no_config_here_says_how_to_name_one() {
    let dir = tempfile::tempdir().unwrap();
    for command in [&["validate"][..], &["run", "--once"]] {
        let run = run_in(dir.path(), command);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stdout.is_empty(), "{run:?}");
        assert!(
            run.stderr.contains(
                "cannot read the config file `curupira.toml`: there is none in the current folder"
            ) && run.stderr.contains("--config FILE"),
            "{command:?}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("os error"), "{}", run.stderr);
    }
}

#[test]
fn an_unclosed_array_is_one_error_at_the_line_that_opened_it() {
    let dir = quickstart();
    let config = fs::read_to_string(dir.path().join("curupira.toml")).unwrap();
    let opened = config
        .lines()
        .position(|line| line.starts_with("command = ["))
        .unwrap()
        + 1;
    fs::write(dir.path().join("curupira.toml"), unclosed(&config)).unwrap();

    let run = run_in(dir.path(), &["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    let report = &json_lines(&run)[0];
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{report}");
    assert_eq!(diagnostics[0]["code"], "config/syntax");
    assert_eq!(diagnostics[0]["line"], opened);
    assert_eq!(diagnostics[0]["column"], 11);
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("unclosed array: this `[` has no matching `]`"),
        "{report}"
    );

    // The human form: one error, pointing at the bracket.
    let run = run_in(dir.path(), &["validate"]);
    assert_eq!(
        run.stdout.matches("error[config/syntax]").count(),
        1,
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("--> curupira.toml:{opened}:11")),
        "{}",
        run.stdout
    );

    // The manifest loader shares the parser, and the fix.
    fs::write(
        dir.path().join("curupira-extension.toml"),
        "manifest_version = 1\nname = \"x\"\ntrigger_types = [\"a\", \"b\"\n\n[launch]\n\
         type = \"npx\"\npackage = \"x\"\n",
    )
    .unwrap();
    let run = run_in(
        dir.path(),
        &[
            "manifest",
            "check",
            "curupira-extension.toml",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let diagnostics = json_lines(&run)[0]["diagnostics"].clone();
    assert_eq!(diagnostics.as_array().unwrap().len(), 1, "{diagnostics}");
    assert_eq!(diagnostics[0]["code"], "manifest/syntax");
    assert_eq!(
        (&diagnostics[0]["line"], &diagnostics[0]["column"]),
        (&3.into(), &17.into())
    );
}

#[test]
fn run_in_json_prints_a_broken_configs_diagnostics_as_validate_does() {
    let dir = quickstart();
    let config = fs::read_to_string(dir.path().join("curupira.toml")).unwrap();
    // A config error (and a warning) that needs nothing started to be found.
    let broken = config.replace(
        "builtin = \"local-queue\"",
        "builtin = \"local-queu\"\ncolour = 1",
    );
    fs::write(dir.path().join("curupira.toml"), broken).unwrap();

    let run = run_in(dir.path(), &["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    let lines = json_lines(&run);
    assert_eq!(lines.len(), 1, "one object, no event: {}", run.stdout);
    let report = &lines[0];
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["diagnostics", "errors", "warnings"]);
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"config/unknown-builtin"), "{codes:?}");
    assert!(codes.contains(&"config/unknown-key"), "{codes:?}");
    assert!(report["errors"].as_u64().unwrap() >= 1);
    assert!(
        !run.stderr.contains("error[config/"),
        "not twice: {}",
        run.stderr
    );

    // The same shape as `validate --format json`, diagnostic for diagnostic.
    let validate = run_in(dir.path(), &["validate", "--format", "json"]);
    let expected = &json_lines(&validate)[0];
    for diagnostic in report["diagnostics"].as_array().unwrap() {
        assert!(
            expected["diagnostics"]
                .as_array()
                .unwrap()
                .contains(diagnostic),
            "{diagnostic} not in {expected}"
        );
    }

    // The human form keeps stdout for events: the diagnostics go to stderr.
    let run = run_in(dir.path(), &["run", "--once"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(
        run.stderr.contains("error[config/unknown-builtin]"),
        "{}",
        run.stderr
    );
}

#[test]
fn run_in_json_with_only_warnings_keeps_stdout_for_events() {
    let dir = quickstart();
    let config = fs::read_to_string(dir.path().join("curupira.toml")).unwrap();
    fs::write(
        dir.path().join("curupira.toml"),
        config.replace(
            "builtin = \"local-queue\"",
            "builtin = \"local-queue\"\ncolour = 1",
        ),
    )
    .unwrap();
    let run = run_in(
        dir.path(),
        &["run", "--once", "--dry-run", "--format", "json"],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let events = json_lines(&run);
    assert!(!events.is_empty());
    assert!(
        events.iter().all(|e| e["event"].is_string()),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("warning[config/unknown-key]"),
        "{}",
        run.stderr
    );
}

#[test]
fn probe_json_ends_with_a_verdict() {
    let dir = quickstart();
    let probe = |extension: &[&str]| {
        let mut args = vec![
            "probe",
            "--format",
            "json",
            "--timeout",
            "10",
            "--arguments",
            r#"{"path": "tasks.jsonl", "done_path": "done.jsonl"}"#,
            "--",
        ];
        args.extend_from_slice(extension);
        run_in(dir.path(), &args)
    };

    let run = probe(&[curupira(), "builtin", "local-queue"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = json_lines(&run);
    let (verdict, steps) = lines.split_last().unwrap();
    assert_eq!(steps.len(), 8);
    assert!(
        steps
            .iter()
            .all(|s| s["step"].is_string() && s.get("verdict").is_none())
    );
    assert_eq!(
        verdict,
        &serde_json::json!({"verdict": "pass", "passed": 8, "failed": 0, "skipped": 0})
    );

    let run = probe(&["sh", "-c", "exit 3"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let lines = json_lines(&run);
    assert_eq!(
        lines.last().unwrap(),
        &serde_json::json!({"verdict": "fail", "passed": 0, "failed": 1, "skipped": 7})
    );
    // The human form ends with the same verdict in words.
    let run = run_in(
        dir.path(),
        &["probe", "--timeout", "10", "--", "sh", "-c", "exit 3"],
    );
    assert!(
        run.stdout
            .trim_end()
            .ends_with("the extension does not conform: 1 of 8 steps failed (0 passed, 7 skipped)"),
        "{}",
        run.stdout
    );
}

#[test]
fn quiet_keeps_warnings_and_errors_only_and_refuses_verbose_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let chatty = [
        "sh",
        "-c",
        "echo said-on-stderr >&2; echo 'chatty: warning: kept' >&2; sleep 0.3; exit 1",
    ];
    let with = |flags: &[&str]| {
        let mut args = vec!["probe", "--timeout", "10"];
        args.extend_from_slice(flags);
        args.push("--");
        args.extend_from_slice(&chatty);
        run_in(dir.path(), &args)
    };
    let normal = with(&[]);
    assert!(normal.stderr.contains("said-on-stderr"), "{normal:?}");
    for quiet in ["-q", "--quiet"] {
        let run = with(&[quiet]);
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(!run.stderr.contains("said-on-stderr"), "{run:?}");
        // An extension's warning line is logged at `warn`: `-q` keeps it.
        assert!(run.stderr.contains("chatty: warning: kept"), "{run:?}");
        assert_eq!(
            run.stdout, normal.stdout,
            "-q changes the log, not the output"
        );
    }
    let both = with(&["-q", "-v"]);
    assert_eq!(both.code, Some(2), "{both:?}");
    assert!(
        both.stderr.contains("cannot be used with"),
        "{}",
        both.stderr
    );

    // `-q` is accepted wherever `-v` is.
    for command in [
        &["validate", "-q"][..],
        &["run", "-q", "--once"],
        &["plugins", "list", "-q"],
    ] {
        let run = run_in(dir.path(), command);
        assert!(
            !run.stderr.contains("unexpected argument"),
            "{command:?}: {}",
            run.stderr
        );
    }
}

/// Runs `program ARGS…`, killed after a minute.
fn bounded(program: &str, args: &[&str]) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let err = thread::spawn(move || {
        let mut bytes = Vec::new();
        stderr.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{program} {args:?} ran longer than a minute");
        }
        thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Whether `bash` runs; without it the test says it skipped, except under CI.
fn bash_or_skip() -> bool {
    run_support::fakes::tool_or_skip("bash", "the completion test")
}

#[test]
fn bash_loads_the_completions() {
    if !bash_or_skip() {
        return;
    }
    // As a user would: `source <(curupira completions bash)` in a session, then ask
    // bash what completes `curupira`, and complete `curupira spirit ` for real.
    let script = r#"source <("$CURUPIRA" completions bash) || exit 9
complete -p curupira || exit 8
COMP_WORDS=(curupira spirit "")
COMP_CWORD=2
COMP_LINE="curupira spirit "
COMP_POINT=${#COMP_LINE}
_curupira curupira "" spirit
printf 'candidate %s\n' "${COMPREPLY[@]}""#;
    let output = bounded(
        "bash",
        &["-c", &format!("CURUPIRA='{}'\n{script}", curupira())],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let registered = stdout.lines().next().unwrap();
    assert!(
        registered.starts_with("complete ") && registered.ends_with(" curupira"),
        "{registered}"
    );
    assert!(registered.contains("-F _curupira"), "{registered}");
    for subcommand in ["candidate check", "candidate install", "candidate tools"] {
        assert!(
            stdout.lines().any(|l| l == subcommand),
            "{subcommand}: {stdout}"
        );
    }
}

#[test]
fn completions_and_man_print_through_the_binary() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let output = bounded(curupira(), &["completions", shell]);
        assert!(output.status.success(), "{shell}");
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            text.contains("curupira") && text.contains("validate"),
            "{shell}: {text}"
        );
    }
    let output = bounded(curupira(), &["completions", "tcsh"]);
    assert_eq!(output.status.code(), Some(2));

    let output = bounded(curupira(), &["man"]);
    assert!(output.status.success());
    let page = String::from_utf8(output.stdout).unwrap();
    assert!(
        page.contains(".TH curupira 1") && page.contains("curupira\\-validate(1)"),
        "{page}"
    );

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    let output = bounded(curupira(), &["man", "--out-dir", out.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let listed = String::from_utf8(output.stdout).unwrap();
    for page in [
        "curupira.1",
        "curupira-run.1",
        "curupira-spirit-check.1",
        "curupira-frame-decode.1",
    ] {
        assert!(out.join(page).is_file(), "{page}: {listed}");
        assert!(listed.contains(page), "{listed}");
    }
    assert!(
        !out.join("curupira-builtin.1").exists(),
        "hidden commands get no page"
    );
}

/// The sections of a roff page, in order: each `.SH` title (unquoted) and the lines
/// below it.
fn sections(page: &str) -> Vec<(String, Vec<&str>)> {
    let mut found: Vec<(String, Vec<&str>)> = Vec::new();
    for line in page.lines() {
        if let Some(title) = line.strip_prefix(".SH ") {
            found.push((title.trim_matches('"').to_owned(), Vec::new()));
        } else if let Some((_, lines)) = found.last_mut() {
            lines.push(line);
        }
    }
    found
}

/// The tags of a section's `.TP` paragraphs (the line after each `.TP`), unescaped:
/// `\fB0\fR` is `0`, `\fIcurupira.toml\fR` is `curupira.toml`.
fn tags(lines: &[&str]) -> Vec<String> {
    lines
        .windows(2)
        .filter(|pair| pair[0] == ".TP")
        .map(|pair| {
            pair[1]
                .replace("\\fB", "")
                .replace("\\fI", "")
                .replace("\\fR", "")
                .replace("\\-", "-")
        })
        .collect()
}

fn section<'p>(page: &'p str, title: &str) -> Option<Vec<&'p str>> {
    sections(page)
        .into_iter()
        .find(|(found, _)| found == title)
        .map(|(_, lines)| lines)
}

/// The pages have EXIT STATUS (every page), FILES (the pages of commands that read a
/// config) and EXAMPLES; EXIT STATUS lists exactly the codes the binary really ends
/// with, and every file FILES names in the state folder is there after a run.
#[test]
fn the_man_pages_say_the_exit_statuses_the_files_and_examples() {
    let dir = tempfile::tempdir().unwrap();
    let bad_manifest = dir.path().join("bad.toml");
    fs::write(&bad_manifest, "manifest_version = 7\n").unwrap();
    let observed = [
        bounded(curupira(), &["--version"]),
        bounded(
            curupira(),
            &["manifest", "check", bad_manifest.to_str().unwrap()],
        ),
        bounded(curupira(), &["identity"]),
        bounded(curupira(), &["--no-such-flag"]),
        bounded(curupira(), &["validate", "--config", "nope.toml"]),
    ];
    let mut codes: Vec<String> = observed
        .iter()
        .map(|output| output.status.code().unwrap().to_string())
        .collect();
    codes.sort();
    codes.dedup();
    assert_eq!(codes, ["0", "1", "2"], "{observed:?}");

    let output = bounded(curupira(), &["man"]);
    assert!(output.status.success(), "{output:?}");
    let page = String::from_utf8(output.stdout).unwrap();
    let titles: Vec<String> = sections(&page).into_iter().map(|(t, _)| t).collect();
    let at = |title: &str| titles.iter().position(|t| t == title);
    let (exit, files, examples) = (at("EXIT STATUS"), at("FILES"), at("EXAMPLES"));
    assert!(
        at("OPTIONS") < exit && exit < files && files < examples && examples < at("VERSION"),
        "sections out of place: {titles:?}"
    );
    assert_eq!(
        tags(&section(&page, "EXIT STATUS").unwrap()),
        codes,
        "EXIT STATUS lists exactly the real codes"
    );
    let examples = tags(&section(&page, "EXAMPLES").unwrap());
    for wanted in [
        "curupira validate",
        "curupira run --once",
        "curupira run --once --dry-run",
        "curupira tasks list",
        "curupira tasks retry",
        "curupira status",
    ] {
        assert!(
            examples.iter().any(|e| e.starts_with(wanted)),
            "no `{wanted}` in {examples:?}"
        );
    }

    // Every file of the state folder FILES names is where it says after a run (the
    // worktrees' folder only in worktree mode).
    let files = tags(&section(&page, "FILES").unwrap());
    assert!(files.contains(&"curupira.toml".to_owned()), "{files:?}");
    let project = quickstart();
    let ran = run_in(project.path(), &["run", "--once"]);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let mut checked = 0;
    for file in files.iter().filter(|f| f.starts_with(".curupira/")) {
        if file == ".curupira/worktrees/" {
            continue;
        }
        let path = project.path().join(file);
        assert!(
            path.exists(),
            "FILES names `{file}`, which a run did not make"
        );
        assert_eq!(file.ends_with('/'), path.is_dir(), "{file}");
        checked += 1;
    }
    assert!(checked >= 5, "{files:?}");

    // The subcommands' pages: EXIT STATUS on each, FILES where a config is read,
    // EXAMPLES where there are some.
    let out = dir.path().join("man1");
    let output = bounded(curupira(), &["man", "--out-dir", out.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let read = |name: &str| fs::read_to_string(out.join(name)).unwrap();
    let run = read("curupira-run.1");
    for title in ["EXIT STATUS", "FILES", "EXAMPLES"] {
        assert!(
            section(&run, title).is_some(),
            "curupira-run.1 lacks {title}"
        );
    }
    assert!(
        tags(&section(&run, "EXAMPLES").unwrap())
            .iter()
            .all(|e| e.starts_with("curupira run")),
        "{run}"
    );
    let check = read("curupira-spirit-check.1");
    assert_eq!(tags(&section(&check, "EXIT STATUS").unwrap()), codes);
    assert!(
        section(&check, "FILES").is_none(),
        "no config read: {check}"
    );
    assert!(section(&read("curupira-tasks-retry.1"), "EXAMPLES").is_some());
}

/// `curupira ARGS…` with stdout a pipe that is read up to the first line and then
/// closed, as `curupira ARGS… | head -1` does; the exit status and all of stderr.
fn closed_after_the_first_line(args: &[&str]) -> (Option<i32>, String, String) {
    use std::io::BufRead;
    let mut child = Command::new(curupira())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err = thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let mut first = String::new();
    std::io::BufReader::with_capacity(8 * 1024, child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here: the pipe is closed with the rest unread.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("curupira {args:?} ran on for a minute after its reader left");
        }
        thread::sleep(Duration::from_millis(10));
    };
    (status.code(), first, err.join().unwrap())
}

/// `curupira completions bash | head -1` and the like end quietly: a reader that took
/// what it wanted and closed the pipe is no error (exit 0, nothing on stderr).
#[test]
fn a_generated_document_ends_quietly_when_its_reader_leaves() {
    // bash's script is longer than a pipe holds (64 KiB) plus what the reader takes
    // (8 KiB): its writer is still writing when the pipe closes.
    let whole = bounded(curupira(), &["completions", "bash"]);
    assert!(
        whole.stdout.len() > (64 + 8) * 1024,
        "{}",
        whole.stdout.len()
    );
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (code, first, stderr) = closed_after_the_first_line(&["completions", shell]);
        assert!(!first.is_empty(), "{shell}");
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "{shell}");
    }

    // A reader gone before anything is written: the man page (shorter than a pipe
    // holds) and the completion script alike.
    for args in [&["man"][..], &["completions", "bash"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = Command::new(curupira())
            .args(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stderr).as_ref()
            ),
            (Some(0), ""),
            "{args:?}"
        );
    }
}
