//! `curupira`, the Curupira toolkit's host (not the ecosystem's reference host
//! `curupira` 0.4.0 from PyPI, which shares its name): a thin binary that parses
//! arguments and hands each
//! subcommand to its module in `cmd/`. Protocol and validation logic lives in the
//! library crates; nothing here should be more than wiring.
//!
//! Exit codes (SPEC section 7): 0 success (warnings allowed), 1 the checked thing has
//! errors or the run had failures, 2 usage, I/O or internal errors.

mod cmd;

/// What `--version` says after the name: which of the two programs called `curupira`
/// this is (the reference host 0.4.0 from PyPI says `curupira 0.4.0`).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (curupira-host, the Curupira Rust toolkit; protocol 2)"
);

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Run coding agents on work items from Curupira trigger extensions, and check
/// extensions, Spirit packages and registries.
#[derive(Parser)]
#[command(name = "curupira", version = VERSION, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the config's automations: poll triggers, dispatch each new item to the agent.
    Run(cmd::run::Args),
    /// Check the config, its extensions and its automations, without polling.
    Validate(cmd::validate::Args),
    /// List the configured extensions from `--curupira-print-manifest` (a `[plugins]`
    /// entry from its `describe`).
    #[command(subcommand)]
    Plugins(cmd::plugins::Command),
    /// Drive an extension through every protocol step and report its conformance.
    Probe(cmd::probe::Args),
    /// Encode lines into protocol frames, or decode frames into lines.
    #[command(subcommand)]
    Frame(cmd::frame::Command),
    /// Print the task identity (or canonical JSON) of a pair list read on stdin.
    Identity(cmd::identity::Args),
    /// Render a prompt template against pairs and host variables.
    Render(cmd::render::Args),
    /// Check a `curupira-extension.toml` manifest.
    #[command(subcommand)]
    Manifest(cmd::manifest::Command),
    /// Check, build and add to the Spirit marketplace registry.
    #[command(subcommand)]
    Registry(cmd::registry::Command),
    /// Check, install, list and remove Spirit extension packages; show and run their tools.
    #[command(subcommand)]
    Spirit(cmd::spirit::Command),
    /// List, show, retry and forget the tasks of the durable ledger.
    #[command(subcommand)]
    Tasks(cmd::tasks::Command),
    /// Say what the host is doing: what runs, what waits for a retry, the next rounds,
    /// the last hour's and day's outcomes, the last failures.
    Status(cmd::status::Args),
    /// Run the orchestrator with an interactive terminal dashboard.
    ///
    /// What runs and for how long, the retry queue, each automation's next round, the
    /// recent outcomes, an attempt's log followed live (Enter); `r` retries a failed
    /// task, `q` quits. `--attach` shows the host that runs instead of running one.
    Tui(cmd::tui::Args),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(cmd::completions::Args),
    /// Print the manual page (roff), or write one page per command into a folder.
    Man(cmd::man::Args),
    /// Print the JSON Schema of a file kind, for editors.
    Schema(cmd::schema::Args),
    /// Run an extension built into this executable (used by the host itself).
    #[command(hide = true)]
    Builtin(cmd::builtin::Args),
    /// Stop a run's agents if the run dies (started by `run` itself).
    #[command(hide = true)]
    Watchdog(cmd::watchdog::Args),
}

fn main() -> ExitCode {
    let args = leading_options_moved(std::env::args_os().collect());
    // Started as `curu` (the alias, `src/bin/curu.rs`): `--version` says `curu …`, as
    // the reference's alias does.
    let alias = args
        .first()
        .and_then(|first| std::path::Path::new(first).file_name())
        .is_some_and(|name| name == "curu");
    let named = || {
        let command = Cli::command();
        if alias { command.name("curu") } else { command }
    };
    let cli = match Cli::from_arg_matches(&named().get_matches_from(args)) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let result = match cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Validate(args) => cmd::validate::run(args),
        Command::Plugins(command) => cmd::plugins::run(command),
        Command::Probe(args) => cmd::probe::run(args),
        Command::Frame(command) => cmd::frame::run(command),
        Command::Identity(args) => cmd::identity::run(args),
        Command::Render(args) => cmd::render::run(args),
        Command::Manifest(command) => cmd::manifest::run(command),
        Command::Registry(command) => cmd::registry::run(command),
        Command::Spirit(command) => cmd::spirit::run(command),
        Command::Tasks(command) => cmd::tasks::run(command),
        Command::Status(args) => cmd::status::run(args),
        Command::Tui(args) => cmd::tui::run(args),
        Command::Completions(args) => cmd::completions::run(&args, named()),
        Command::Man(args) => cmd::man::run(&args, Cli::command()),
        Command::Schema(args) => cmd::schema::run(&args),
        Command::Builtin(args) => cmd::builtin::run(args),
        Command::Watchdog(args) => cmd::watchdog::run(args),
    };
    // The log and agent output that still wait for stderr go first (for a bounded
    // time: a stderr nobody reads does not keep the process alive).
    curupira_process::stderr::flush(std::time::Duration::from_secs(2));
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", error_line(&err));
            ExitCode::from(cmd::exit::ERROR.code)
        }
    }
}

/// An error and its causes on one line, `what: why: deeper why`, each cause said once:
/// a cause whose text the line already holds (an error that prints its `source` in
/// its own message, as `io::Error`s wrapped by `thiserror` often do, or wraps another
/// error and adds to its message) ends the line. The error that said it chose how much
/// of that cause's own causes to say: SQLite's `database or disk is full` is not
/// followed by its `Error code 13: Insertion failed because database is full`.
fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.is_empty() {
            line = text;
        } else if line.contains(&text) {
            break;
        } else {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// The reference host takes `--config FILE` and `--log-level LEVEL` before the
/// subcommand as well as after it (`curupira --log-level DEBUG run`): such options
/// written before `run`, `validate` or `plugins SUBCOMMAND` are moved behind it, where
/// this host's commands read them.
fn leading_options_moved(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut moved = Vec::new();
    let mut at = 1;
    while let Some(arg) = args.get(at).and_then(|arg| arg.to_str()) {
        let takes_value = matches!(arg, "--config" | "-c" | "--log-level");
        let joined = arg.starts_with("--config=") || arg.starts_with("--log-level=");
        if takes_value && at + 1 < args.len() {
            moved.extend_from_slice(&args[at..at + 2]);
            at += 2;
        } else if joined {
            moved.push(args[at].clone());
            at += 1;
        } else {
            break;
        }
    }
    if moved.is_empty() {
        return args;
    }
    let command_words = match args.get(at).and_then(|arg| arg.to_str()) {
        Some("run" | "validate" | "status" | "tui") => 1,
        Some("plugins" | "tasks") => 2,
        _ => return args,
    };
    let end = (at + command_words).min(args.len());
    let mut out = vec![args[0].clone()];
    out.extend_from_slice(&args[at..end]);
    out.extend(moved);
    out.extend_from_slice(&args[end..]);
    out
}

#[cfg(test)]
mod tests {
    //! What is computed from the command tree itself, so that a subcommand added later
    //! is covered without touching these tests.

    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::Path;

    #[test]
    fn options_before_the_subcommand_move_behind_it() {
        let words = |text: &str| -> Vec<std::ffi::OsString> {
            text.split(' ').map(std::ffi::OsString::from).collect()
        };
        assert_eq!(
            leading_options_moved(words(
                "curupira --log-level DEBUG --config s.toml run --once"
            )),
            words("curupira run --log-level DEBUG --config s.toml --once")
        );
        assert_eq!(
            leading_options_moved(words("curupira --config=s.toml plugins list")),
            words("curupira plugins list --config=s.toml")
        );
        // Nothing to move, or no subcommand that takes them: as written.
        for text in [
            "curupira run --config s.toml",
            "curupira --config s.toml frame encode",
        ] {
            assert_eq!(leading_options_moved(words(text)), words(text));
        }
    }

    use clap::ValueEnum;
    use clap_complete::Shell;

    use super::*;

    /// Every visible command below `command`, as its path of names (`["spirit",
    /// "check"]`); `help` and hidden commands (`builtin`) left out.
    fn command_paths(command: &clap::Command) -> Vec<Vec<String>> {
        let mut paths = Vec::new();
        for sub in command.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" {
                continue;
            }
            paths.push(vec![sub.get_name().to_owned()]);
            for mut below in command_paths(sub) {
                below.insert(0, sub.get_name().to_owned());
                paths.push(below);
            }
        }
        paths
    }

    /// Whether `word` occurs in `text` not as part of a longer name.
    fn has_word(text: &str, word: &str) -> bool {
        let part = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        text.match_indices(word).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + word.len()..].chars().next();
            !before.is_some_and(part) && !after.is_some_and(part)
        })
    }

    #[test]
    fn the_tree_is_well_formed_and_has_the_new_commands() {
        Cli::command().debug_assert();
        let paths = command_paths(&Cli::command());
        for wanted in [&["completions"][..], &["man"], &["spirit", "check"]] {
            assert!(
                paths.iter().any(|p| p == wanted),
                "{wanted:?} not in {paths:?}"
            );
        }
        assert!(!paths.iter().any(|p| p[0] == "builtin"), "hidden");
    }

    /// The tagline of `curupira --help` says what the tool does, on one line.
    #[test]
    fn the_tagline_says_what_curupira_does() {
        let about = Cli::command().get_about().map(ToString::to_string);
        assert_eq!(
            about.as_deref(),
            Some(
                "Run coding agents on work items from Curupira trigger extensions, and check \
                 extensions, Spirit packages and registries"
            )
        );
    }

    #[test]
    fn every_shell_gets_a_script_naming_every_subcommand() {
        let paths = command_paths(&Cli::command());
        assert!(paths.len() > 15, "{paths:?}");
        for shell in Shell::value_variants() {
            let script = cmd::completions::script(*shell, &mut Cli::command());
            assert!(script.len() > 1000, "{shell}: {script}");
            for path in &paths {
                let name = path.last().unwrap();
                assert!(
                    has_word(&script, name),
                    "{shell} script lacks `{name}` ({path:?})"
                );
            }
            assert!(has_word(&script, "--format"), "{shell}: options too");
        }
    }

    #[test]
    fn the_man_page_names_every_top_level_command_and_each_has_a_page() {
        let page = cmd::man::page(Cli::command()).unwrap();
        assert!(page.contains(".TH curupira 1"), "{page}");
        assert!(
            !page.contains("curupira\\-help(1)"),
            "no page is written for `help`"
        );
        let paths = command_paths(&Cli::command());
        for path in paths.iter().filter(|p| p.len() == 1) {
            // roff escapes `-` as `\-`; each names the command's own page.
            let name = format!("curupira\\-{}(1)", path[0].replace('-', "\\-"));
            assert!(page.contains(&name), "the page lacks `{name}`");
        }

        let dir = tempfile::tempdir().unwrap();
        let written = cmd::man::pages(Cli::command(), dir.path()).unwrap();
        assert_eq!(written[0], dir.path().join("curupira.1"));
        assert_eq!(written.len(), paths.len() + 1, "{written:?}");
        for path in &paths {
            let file = dir.path().join(format!("curupira-{}.1", path.join("-")));
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(text.contains(".TH"), "{}", file.display());
        }
    }

    /// Every command of the man pages' EXAMPLES is one the tree accepts as written
    /// (no shell syntax in it), on the page of the command it runs; every page named
    /// there exists.
    #[test]
    fn the_man_examples_are_real_commands_on_their_pages() {
        let paths = command_paths(&Cli::command());
        let mut seen = 0;
        for (page, examples) in cmd::man::EXAMPLES {
            let path: &[String] = if *page == "curupira" {
                &[]
            } else {
                paths
                    .iter()
                    .find(|p| format!("curupira-{}", p.join("-")) == *page)
                    .unwrap_or_else(|| {
                        panic!("EXAMPLES names the page `{page}`, but no command has it")
                    })
            };
            assert!(!examples.is_empty(), "{page}");
            for example in *examples {
                let words: Vec<&str> = example.command.split_whitespace().collect();
                assert_eq!(words[0], "curupira", "{}", example.command);
                assert!(
                    words[1..=path.len()].iter().eq(path.iter()),
                    "`{}` is on the page {page}",
                    example.command
                );
                assert!(
                    !example
                        .command
                        .contains(['|', '<', '>', '\'', '"', '$', '~']),
                    "{}",
                    example.command
                );
                if let Err(err) = Cli::try_parse_from(&words) {
                    panic!("`{}` on {page}: {err}", example.command);
                }
                assert!(example.what.ends_with('.'), "{}", example.what);
                seen += 1;
            }
        }
        assert!(seen >= 20, "{seen} examples");
    }

    /// Every `--format` says what that command's formats print, not one generic
    /// sentence: its help names both values, and no two different kinds of output
    /// share a help.
    #[test]
    fn every_format_help_says_what_its_command_prints() {
        fn visit(command: &clap::Command, at: &str, found: &mut Vec<(String, String)>) {
            for arg in command.get_arguments() {
                if arg.get_id() == "format" {
                    let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                    found.push((at.to_owned(), help));
                }
            }
            for sub in command.get_subcommands() {
                visit(sub, &format!("{at} {}", sub.get_name()), found);
            }
        }
        let mut found = Vec::new();
        visit(&Cli::command(), "curupira", &mut found);
        assert!(found.len() >= 8, "{found:?}");
        for (command, help) in &found {
            assert!(
                help.contains("`human`") && help.contains("`json`") && help.len() > 80,
                "`{command} --format` says only {help:?}"
            );
        }
        let run = &found.iter().find(|(c, _)| c == "curupira run").unwrap().1;
        let probe = &found.iter().find(|(c, _)| c == "curupira probe").unwrap().1;
        let validate = &found
            .iter()
            .find(|(c, _)| c == "curupira validate")
            .unwrap()
            .1;
        assert!(run.contains("event") && probe.contains("verdict"));
        assert!(validate.contains("diagnostics"));
        assert_ne!(run, probe);
        assert_ne!(run, validate);
    }

    /// `docs/DIAGNOSTICS.md` and the README name only commands that exist: every
    /// code span that starts with `curupira ` (or with a command that has
    /// subcommands, as `spirit install`) is a path in the tree.
    /// The code spans of a Markdown text: what lies between a run of backticks and
    /// the next run of the same length (so ``a `b` c`` is one span).
    fn code_spans(text: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('`') {
            let run = rest[open..].len() - rest[open..].trim_start_matches('`').len();
            let body = &rest[open + run..];
            let fence = "`".repeat(run);
            let mut from = 0;
            let close = loop {
                match body[from..].find(&fence) {
                    Some(at) => {
                        let at = from + at;
                        let longer = body[at + run..].starts_with('`');
                        if !longer && (at == 0 || !body[..at].ends_with('`')) {
                            break Some(at);
                        }
                        from = at + body[at..].len() - body[at..].trim_start_matches('`').len();
                    }
                    None => break None,
                }
            };
            let Some(close) = close else { break };
            spans.push(body[..close].trim());
            rest = &body[close + run..];
        }
        spans
    }

    #[test]
    fn code_spans_follow_markdown() {
        assert_eq!(
            code_spans("a `x` b ``y `z` w`` c `` `q` ``\n```sh\nrun\n```"),
            ["x", "y `z` w", "`q`", "sh\nrun"]
        );
    }

    #[test]
    fn the_docs_name_only_commands_that_exist() {
        let root = Cli::command();
        let paths = command_paths(&root);
        let parents: Vec<&str> = root
            .get_subcommands()
            .filter(|s| s.has_subcommands())
            .map(|s| s.get_name())
            .collect();
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut checked = 0;
        for doc in ["docs/DIAGNOSTICS.md", "README.md", "docs/HOST.md"] {
            let text = std::fs::read_to_string(docs.join(doc)).unwrap();
            for span in code_spans(&text) {
                let words: Vec<&str> = span.split_whitespace().collect();
                let words = match words.as_slice() {
                    ["curupira", rest @ ..] => rest,
                    [first, _, ..] if parents.contains(first) => &words[..],
                    _ => continue,
                };
                // The command is the leading words that are names, not options,
                // values or placeholders.
                let mut path: Vec<String> = Vec::new();
                for word in words {
                    let mut candidate = path.clone();
                    candidate.push((*word).to_owned());
                    if paths.contains(&candidate) {
                        path = candidate;
                    } else {
                        break;
                    }
                }
                let first = words.first().copied().unwrap_or("");
                let is_name = first.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    && !first.starts_with('-')
                    && !first.is_empty();
                assert!(
                    !is_name || !path.is_empty(),
                    "{doc} names `{span}`, but curupira has no command `{first}`"
                );
                if let (Some(second), true) = (words.get(1), parents.contains(&first)) {
                    let looks_like_name =
                        second.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                            && !second.starts_with('-');
                    assert!(
                        !looks_like_name || path.len() >= 2,
                        "{doc} names `{span}`, but `curupira {first}` has no subcommand `{second}`"
                    );
                }
                checked += 1;
            }
        }
        assert!(
            checked > 20,
            "only {checked} command names found in the docs"
        );
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let shown = missing.to_string();
        let err = anyhow::Error::new(curupira_host::config::LoadError::Read {
            path: "nope.toml".into(),
            source: missing,
        });
        let line = error_line(&err);
        assert_eq!(line.matches(&shown).count(), 1, "{line}");
        assert!(
            line.starts_with("cannot read the config file `nope.toml`: "),
            "{line}"
        );

        let err = anyhow::anyhow!("deeper").context("outer");
        assert_eq!(error_line(&err), "outer: deeper");

        // A wrapper that adds to its cause's message, over a cause that says its own
        // cause in other words: one sentence, nothing said twice.
        let full = curupira_ledger::LedgerError::disk_full("write", "state/ledger.sqlite");
        let err = anyhow::Error::new(curupira_orchestrator::runner::RunError::Ledger(full));
        assert_eq!(
            error_line(&err),
            "cannot write the task ledger `state/ledger.sqlite`: database or disk is full; \
             the run was stopped"
        );
    }
}
