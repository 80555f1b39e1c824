//! `curupira render` run as a real process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli_support;

use std::fs;
use std::path::Path;
use std::process::Output;

use cli_support::run_with_stdin;

fn render(args: &[&str], stdin: &[u8]) -> Output {
    let args: Vec<&str> = ["render"].into_iter().chain(args.iter().copied()).collect();
    run_with_stdin(&args, stdin)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

const TEMPLATE: &str = "Fix #${issue-number} in ${repository} (${automation}).\nTitle: ${title}\nKeep ${unknown} and $${x} and ${open";

const PAIRS: &str = r#"[
  {"key": "issue-number", "value": "7"},
  {"key": "title", "value": "uses ${repository} literally"}
]"#;

const RENDERED: &str = "Fix #7 in github.com/acme/widgets (fix-bugs).\nTitle: uses ${repository} literally\nKeep ${unknown} and $${x} and ${open";

const VARS: [&str; 4] = [
    "--var",
    "repository=github.com/acme/widgets",
    "--var",
    "automation=fix-bugs",
];

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn failure(output: &Output) -> (Option<i32>, String) {
    assert!(output.stdout.is_empty());
    (
        output.status.code(),
        String::from_utf8(output.stderr.clone()).unwrap(),
    )
}

#[test]
fn pairs_file_and_vars_render_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let template = write(dir.path(), "prompt.md", TEMPLATE);
    let pairs = write(dir.path(), "pairs.json", PAIRS);
    let mut args = vec!["--template", &template, "--pairs", &pairs];
    args.extend(VARS);
    assert_eq!(stdout(&render(&args, b"")), RENDERED);
}

#[test]
fn pairs_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let template = write(dir.path(), "prompt.md", TEMPLATE);
    let mut args = vec!["--template", &template, "--pairs", "-"];
    args.extend(VARS);
    assert_eq!(stdout(&render(&args, PAIRS.as_bytes())), RENDERED);
}

#[test]
fn adds_no_newline_and_keeps_the_templates_own() {
    let dir = tempfile::tempdir().unwrap();
    let bare = write(dir.path(), "bare.md", "${a}");
    let ended = write(dir.path(), "ended.md", "${a}\n\n");
    let args = |t: &str| {
        vec![
            "--template".to_owned(),
            t.to_owned(),
            "--var".into(),
            "a=x=y".into(),
        ]
    };
    let run = |t: &str| {
        let args = args(t);
        stdout(&render(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            b"",
        ))
    };
    assert_eq!(run(&bare), "x=y");
    assert_eq!(run(&ended), "x=y\n\n");
}

#[test]
fn without_values_the_template_is_printed_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let template = write(dir.path(), "prompt.md", TEMPLATE);
    assert_eq!(stdout(&render(&["--template", &template], b"")), TEMPLATE);
}

#[test]
fn missing_template_exits_2() {
    let (code, message) = failure(&render(&["--template", "/nonexistent/prompt.md"], b""));
    assert_eq!(code, Some(2));
    assert!(
        message.starts_with("error: cannot read template /nonexistent/prompt.md: "),
        "{message}"
    );
}

#[test]
fn bad_pairs_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let template = write(dir.path(), "prompt.md", TEMPLATE);
    let pairs = write(dir.path(), "pairs.json", r#"[{"key":"n","value":7}]"#);
    let (code, message) = failure(&render(&["--template", &template, "--pairs", &pairs], b""));
    assert_eq!(code, Some(1));
    assert_eq!(
        message,
        format!(
            "error: {pairs}: element 0 has a \"value\" that is a number; keys and values are strings (line 1, column 21)\n"
        )
    );

    let (code, message) = failure(&render(&["--template", &template, "--pairs", "-"], b"{}"));
    assert_eq!(code, Some(1));
    assert!(
        message.starts_with("error: standard input: the input is an object"),
        "{message}"
    );
}

#[test]
fn pair_keys_may_not_repeat_or_set_a_var() {
    let dir = tempfile::tempdir().unwrap();
    let template = write(dir.path(), "prompt.md", TEMPLATE);
    let twice = r#"[{"key":"a","value":"1"},{"key":"b","value":"2"},{"key":"a","value":"3"}]"#;
    let (code, message) = failure(&render(
        &["--template", &template, "--pairs", "-"],
        twice.as_bytes(),
    ));
    assert_eq!(code, Some(1));
    assert_eq!(
        message,
        "error: standard input: pair 2 repeats the key \"a\"; a key appears once per item\n"
    );

    // The protocol's item rules: a reserved key is refused even without `--var`.
    let reserved = r#"[{"key":"repository","value":"evil"}]"#;
    let (code, message) = failure(&render(
        &["--template", &template, "--pairs", "-"],
        reserved.as_bytes(),
    ));
    assert_eq!(code, Some(1));
    assert_eq!(
        message,
        "error: standard input: pair 0 has the key \"repository\", which is reserved: the host \
         provides `repository` and `automation` itself\n"
    );

    let clash = r#"[{"key":"b","value":"1"},{"key":"team","value":"evil"}]"#;
    let mut args = vec!["--template", &template, "--pairs", "-"];
    args.extend(VARS);
    args.extend(["--var", "team=core"]);
    let (code, message) = failure(&render(&args, clash.as_bytes()));
    assert_eq!(code, Some(1));
    assert_eq!(
        message,
        "error: standard input: pair 1 has the key \"team\", which --var also sets; an item cannot set a host variable\n"
    );
}

#[test]
fn bad_vars_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let template = write(dir.path(), "prompt.md", TEMPLATE);
    for var in ["novalue", "=x"] {
        let (code, message) = failure(&render(&["--template", &template, "--var", var], b""));
        assert_eq!(code, Some(2), "{var}");
        assert!(message.contains("write KEY=VALUE"), "{message}");
    }
    let (code, message) = failure(&render(
        &["--template", &template, "--var", "a=1", "--var", "a=2"],
        b"",
    ));
    assert_eq!(code, Some(2));
    assert_eq!(message, "error: --var \"a\" is given twice\n");
}

#[test]
fn non_utf8_template_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.md");
    fs::write(&path, b"caf\xe9 ${a}").unwrap();
    let template = path.to_str().unwrap();
    let (code, message) = failure(&render(&["--template", template], b""));
    assert_eq!(code, Some(1));
    assert_eq!(
        message,
        format!("error: {template} is not UTF-8 (invalid byte at offset 3)\n")
    );
}
