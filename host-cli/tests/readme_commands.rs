//! Every shell command of the READMEs works exactly as written (issue 24): the
//! repository's `README.md`, each crate's, `fuzz/README.md`, each example's, and the
//! commands that the examples' `curupira.toml` comments name.
//!
//! Each file's commands run in order, in one `bash` (so a variable one sets serves the
//! next), in a fresh copy of the repository as a checkout ships it
//! (`tests/tree_support`), with the `curupira` under test first on `PATH`, from the
//! copy's root (where a checkout's commands name `examples/…` and `target/…`), except
//! `fuzz/README.md`, whose commands run from `fuzz/` as it says. A command must exit 0,
//! or the status its `# exits N` comment gives.
//!
//! What is not run says so, in a comment: `not run here: WHY` in the command's own
//! comment (`cmd  # what it does; not run here: WHY`), or `# not run here: WHY` on a
//! line of its own, for the commands after it up to the next blank
//! line (an install into the user's home, a ten-minute fuzz run, `cargo test` itself).
//! Nothing else is left out; `cargo` is a shell function that runs two kinds of
//! command and refuses the rest (mark those):
//!
//! - `cargo run [--release] -p curupira-host -- ARGS…` runs `curupira ARGS…`, the
//!   binary under test (what the suite's own build made of the same sources);
//! - `cargo build … --example NAME` builds the example for real, against this
//!   checkout's `Cargo.toml` and `target/` (the copy's `target` is a link to it), so
//!   the command after it finds `target/debug/examples/NAME`.
//!
//! Shell blocks are those fenced as `sh`, `bash`, `shell` or `console`; in a `console`
//! block the commands are the lines after `$ ` (and their `\` continuations), the rest
//! is output. Needs `bash`, `node` (the Node.js examples) and `python3`: without one,
//! the test says it skipped and passes, except under CI, where it fails.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;
mod tree_support;

use std::fmt::Write as _;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use run_support::fakes::tool_or_skip;
use run_support::run_bounded;
use tree_support::{copy_shipped, repository_root};

/// The longest one file's commands may take together.
const FILE_LIMIT: Duration = Duration::from_secs(300);

/// The comment that leaves a command out, and says why: on a line of its own, or at
/// the end of the command (anywhere in its comment, after other words).
const NOT_RUN: &str = "# not run here:";

/// [`NOT_RUN`] inside a command's own comment.
const MARK: &str = "not run here:";

/// One command of a README.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shell {
    /// The line it starts on (1-based).
    line: usize,
    /// Its text, continuation lines included, without a `console` prompt.
    text: String,
    /// Run, expecting this exit status; or left out, for this reason.
    run: Result<i32, String>,
}

/// The commands of the shell blocks of a Markdown text.
fn shell_commands(markdown: &str) -> Vec<Shell> {
    let mut found = Vec::new();
    let mut fence: Option<(String, bool)> = None; // (the fence, console?)
    let mut paragraph_skip: Option<String> = None;
    let mut open: Option<(usize, String)> = None;
    for (index, raw) in markdown.lines().enumerate() {
        let number = index + 1;
        let trimmed = raw.trim_start();
        let Some((marker, console)) = &fence else {
            if let Some(rest) = trimmed.strip_prefix("```") {
                let language = rest.split_whitespace().next().unwrap_or("");
                if matches!(language, "sh" | "bash" | "shell" | "console") {
                    fence = Some(("```".to_owned(), language == "console"));
                    paragraph_skip = None;
                } else {
                    fence = Some(("```-other".to_owned(), false));
                }
            }
            continue;
        };
        if trimmed.starts_with("```") {
            assert!(
                open.is_none(),
                "line {number}: a block ends inside a command"
            );
            fence = None;
            continue;
        }
        if marker == "```-other" {
            continue;
        }
        if let Some((start, text)) = &mut open {
            text.push('\n');
            text.push_str(raw);
            if !raw.ends_with('\\') {
                let (start, text) = (*start, std::mem::take(text));
                open = None;
                found.push(command(start, text, &paragraph_skip));
            }
            continue;
        }
        let line = if *console {
            match raw.strip_prefix("$ ") {
                Some(command) => command,
                None => continue, // output
            }
        } else {
            raw
        };
        if line.trim().is_empty() {
            paragraph_skip = None;
            continue;
        }
        if line.trim_start().starts_with('#') {
            if let Some(reason) = line.trim_start().strip_prefix(NOT_RUN) {
                paragraph_skip = Some(reason.trim().to_owned());
            }
            continue;
        }
        if line.ends_with('\\') {
            open = Some((number, line.to_owned()));
        } else {
            found.push(command(number, line.to_owned(), &paragraph_skip));
        }
    }
    found
}

fn command(line: usize, text: String, paragraph_skip: &Option<String>) -> Shell {
    let marked = text
        .find('#')
        .and_then(|hash| text[hash..].find(MARK).map(|at| hash + at + MARK.len()));
    let run = if let Some(at) = marked {
        Err(text[at..].trim().to_owned())
    } else if let Some(reason) = paragraph_skip {
        Err(reason.clone())
    } else if let Some(at) = text.rfind("# exits ") {
        let digits: String = text[at + "# exits ".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        Ok(digits.parse().unwrap_or_else(|_| {
            panic!("line {line}: `# exits` wants a number: {text}");
        }))
    } else {
        Ok(0)
    };
    if let Err(reason) = &run {
        assert!(
            !reason.is_empty(),
            "line {line}: `{NOT_RUN}` must say why: {text}"
        );
    }
    Shell { line, text, run }
}

/// The commands that comment lines of a config name: `#   cargo run …` or
/// `#   curupira …`.
fn config_comment_commands(toml: &str) -> Vec<Shell> {
    toml.lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let text = line.strip_prefix('#')?.trim();
            (text.starts_with("cargo run ") || text.starts_with("curupira ")).then(|| Shell {
                line: index + 1,
                text: text.to_owned(),
                run: Ok(0),
            })
        })
        .collect()
}

/// The bash script that runs `commands` of `file`, each checked for its status.
fn script(file: &str, commands: &[Shell], repo: &Path) -> String {
    let mut out = String::new();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    writeln!(
        out,
        r#"set -o pipefail
cargo() {{
    if [ "$1" = run ]; then
        local rest=("${{@:2}}")
        [ "${{rest[0]}}" = --release ] && rest=("${{rest[@]:1}}")
        if [ "${{rest[0]}}" = -p ] && [ "${{rest[1]}}" = curupira-host ] && [ "${{rest[2]}}" = -- ]; then
            curupira "${{rest[@]:3}}"
            return
        fi
    fi
    if [ "$1" = build ] && [[ " $* " == *" --example "* ]]; then
        {cargo:?} "$@" --quiet --manifest-path {manifest:?}
        return
    fi
    echo "the README test runs no \`cargo $*\`: mark it \`{NOT_RUN} WHY\`" >&2
    return 127
}}"#,
        manifest = repo.join("Cargo.toml").display().to_string(),
    )
    .unwrap();
    for command in commands {
        let Ok(expected) = command.run else {
            continue;
        };
        let shown = command.text.replace('\'', "'\\''");
        writeln!(
            out,
            "{}\n__status=$?\nif [ \"$__status\" -ne {expected} ]; then printf '%s\\n' \
             '{file}:{}: exit status '\"$__status\"', expected {expected}: {shown}' >&2; exit 99; fi",
            command.text, command.line
        )
        .unwrap();
    }
    out
}

/// Runs `script` with bash in `dir`, `bin` first on PATH; its failure as a sentence.
fn run_script(script: &str, dir: &Path, bin: &Path) -> Result<(), String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_owned()];
    paths.extend(std::env::split_paths(&path));
    let mut bash = Command::new("bash");
    bash.arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("PATH", std::env::join_paths(paths).unwrap())
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .process_group(0);
    let ended = run_bounded(&mut bash, FILE_LIMIT).unwrap();
    let (stdout, stderr) = (ended.stdout, ended.stderr);
    match ended.status {
        Some(status) if status.success() => Ok(()),
        Some(_) => Err(format!("{stderr}\n--- stdout:\n{stdout}")),
        None => Err(format!(
            "still running after {FILE_LIMIT:?}, killed\n{stderr}\n--- stdout:\n{stdout}"
        )),
    }
}

/// The files whose commands run, each with the folder (from the root) they run in.
fn documents(root: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut found = vec![(PathBuf::from("README.md"), PathBuf::new())];
    let manifest: toml::Table = fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let members = manifest["workspace"]["members"].as_array().unwrap();
    let mut crates: Vec<PathBuf> = members
        .iter()
        .map(|member| PathBuf::from(member.as_str().unwrap()))
        .collect();
    crates.push(PathBuf::from("fuzz"));
    for folder in crates {
        let readme = folder.join("README.md");
        if root.join(&readme).is_file() {
            let cwd = if folder == Path::new("fuzz") {
                folder
            } else {
                PathBuf::new()
            };
            found.push((readme, cwd));
        }
    }
    let mut examples: Vec<PathBuf> = fs::read_dir(root.join("examples"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    examples.sort();
    for example in examples {
        let relative = example.strip_prefix(root).unwrap().to_owned();
        for name in ["README.md", "curupira.toml"] {
            if example.join(name).is_file() {
                found.push((relative.join(name), PathBuf::new()));
            }
        }
    }
    found
}

fn commands_of(root: &Path, file: &Path) -> Vec<Shell> {
    let text = fs::read_to_string(root.join(file)).unwrap();
    if file.extension().is_some_and(|e| e == "toml") {
        config_comment_commands(&text)
    } else {
        shell_commands(&text)
    }
}

#[test]
fn every_readme_command_works_as_written() {
    let what = "every_readme_command_works_as_written";
    if !(tool_or_skip("bash", what) && tool_or_skip("node", what) && tool_or_skip("python3", what))
    {
        return;
    }
    let root = repository_root();
    let bin = Path::new(env!("CARGO_BIN_EXE_curupira")).parent().unwrap();
    let target = bin.parent().unwrap();
    let mut failures = Vec::new();
    let mut ran = 0;
    for (file, folder) in documents(&root) {
        let commands = commands_of(&root, &file);
        if commands.is_empty() {
            continue;
        }
        let copy = tempfile::tempdir().unwrap();
        copy_shipped(&root, Path::new(""), copy.path());
        std::os::unix::fs::symlink(target, copy.path().join("target")).unwrap();
        let shown = file.display().to_string();
        ran += commands.iter().filter(|c| c.run.is_ok()).count();
        if let Err(failure) = run_script(
            &script(&shown, &commands, &root),
            &copy.path().join(&folder),
            bin,
        ) {
            failures.push(format!("{shown}:\n{failure}"));
        }
    }
    assert!(
        ran >= 20,
        "only {ran} commands ran: the README blocks were not found"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The parser: blocks by language, prompts, continuations, and the two comments.
#[test]
fn commands_are_read_off_the_blocks_as_a_reader_sees_them() {
    let markdown = "Text `curupira no`.\n\
        ```sh\n\
        # a comment\n\
        curupira validate   # everything\n\
        curupira probe \\\n    -- ./x\n\
        cargo install x   # not run here: installs into your home\n\
        \n\
        # not run here: a long fuzz run\n\
        cargo fuzz run a\n\
        cargo fuzz run b\n\
        \n\
        curupira bad  # exits 1\n\
        ```\n\
        ```toml\n\
        x = 1\n\
        ```\n\
        ```console\n\
        $ echo hi\n\
        hi\n\
        $ curupira a \\\n    --b\n\
        output\n\
        ```\n";
    let found = shell_commands(markdown);
    let summary: Vec<(usize, &str, Result<i32, &str>)> = found
        .iter()
        .map(|c| {
            (
                c.line,
                c.text.as_str(),
                c.run.as_ref().map(|s| *s).map_err(String::as_str),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (4, "curupira validate   # everything", Ok(0)),
            (5, "curupira probe \\\n    -- ./x", Ok(0)),
            (
                7,
                "cargo install x   # not run here: installs into your home",
                Err("installs into your home")
            ),
            (10, "cargo fuzz run a", Err("a long fuzz run")),
            (11, "cargo fuzz run b", Err("a long fuzz run")),
            (13, "curupira bad  # exits 1", Ok(1)),
            (19, "echo hi", Ok(0)),
            (21, "curupira a \\\n    --b", Ok(0)),
        ]
    );
    let config = "# Run it:\n#\n#   curupira run --once --config x.toml\n[settings]\n";
    assert_eq!(
        config_comment_commands(config),
        [Shell {
            line: 3,
            text: "curupira run --once --config x.toml".to_owned(),
            run: Ok(0)
        }]
    );
}
