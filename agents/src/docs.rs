//! The provider reference page ([`docs/AGENTS.md`](https://example.invalid/curupira/blob/main/docs/AGENTS.md), between its generated markers),
//! written from [`crate::table::TABLE`]: per provider the command line, fresh and
//! resumed, its options and the flags they become, what is read from its stream,
//! and what happens to a prompt too long for one argument.

use std::fmt::Write;

use crate::table::{Kind, LongPrompt, PromptArg, Render, Resume, SessionKey, Spec, TABLE};
use crate::{CONTINUE_PROMPT, MAX_ARGUMENT_BYTES};

/// The line before the generated part of [`docs/AGENTS.md`](https://example.invalid/curupira/blob/main/docs/AGENTS.md).
pub const BEGIN: &str = "<!-- providers: generated from curupira-agents' table; `cargo test -p curupira-agents` checks it -->";
/// The line after it.
pub const END: &str = "<!-- end of providers -->";

/// The generated part, markers included.
pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str(BEGIN);
    out.push('\n');
    let _ = writeln!(
        out,
        "\n| provider | program | command line (fresh) | resume |\n|---|---|---|---|"
    );
    for spec in &TABLE {
        let _ = writeln!(
            out,
            "| `{}` | `{}` | `{}` | {} |",
            spec.name,
            spec.program,
            fresh_line(spec),
            resume_words(spec)
        );
    }
    let _ = writeln!(
        out,
        "\nA resumed session gets this prompt, then a blank line, `Task:` and the task's \
         prompt (`[settings.agent] continue_prompt` replaces the first part):\n\n> {CONTINUE_PROMPT}\n"
    );
    for spec in &TABLE {
        section(&mut out, spec);
    }
    out.push_str(END);
    out.push('\n');
    out
}

fn prompt_part(spec: &Spec) -> String {
    match spec.prompt {
        PromptArg::AfterDashes => "-- <prompt>".to_owned(),
        PromptArg::Joined(flag) => format!("{flag}<prompt>"),
    }
}

fn fresh_line(spec: &Spec) -> String {
    let mut words: Vec<String> = vec![spec.program.to_owned()];
    words.extend(spec.prefix.iter().map(|a| a.replace("{session}", "<uuid>")));
    words.push("[options]".to_owned());
    words.extend(spec.suffix.iter().map(|a| (*a).to_owned()));
    words.push(prompt_part(spec));
    words.join(" ")
}

fn resume_words(spec: &Spec) -> String {
    match spec.resume {
        Resume::Args(args) => format!(
            "`{}` after `{}`",
            args.join(" ").replace("{session}", "<session>"),
            spec.prefix.join(" ")
        ),
        Resume::HostNamed => {
            "the same `--session-id`, named by the host at the first attempt".to_owned()
        }
    }
}

fn section(out: &mut String, spec: &Spec) {
    let _ = writeln!(out, "### `{}` ({})\n", spec.name, spec.title);
    let _ = writeln!(out, "- Fresh: `{}`", fresh_line(spec));
    let _ = writeln!(out, "- Resume: {}", resume_words(spec));
    let session = match spec.session {
        SessionKey::Member(keys) => format!(
            "the first line with a top-level {}",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ),
        SessionKey::IdOfType(kind) => format!("`id` of the `{kind}` event"),
        SessionKey::Host => "named by the host (a random UUID), not read".to_owned(),
    };
    let _ = writeln!(out, "- Session: {session}");
    let long = match spec.long_prompt {
        LongPrompt::Stdin([]) => "on standard input instead of an argument".to_owned(),
        LongPrompt::Stdin(instead) => {
            format!(
                "on standard input, with `{}` in the prompt's place",
                instead.join(" ")
            )
        }
        LongPrompt::Refuse => "refused (the CLI takes its prompt only as an argument)".to_owned(),
    };
    let _ = writeln!(
        out,
        "- A prompt argument of {} bytes or more: {long}",
        MAX_ARGUMENT_BYTES
    );
    let _ = writeln!(out, "- Its documentation: <{}>\n", spec.source);
    let _ = writeln!(
        out,
        "| option | value | becomes | what |\n|---|---|---|---|"
    );
    for option in spec.options {
        let kind = match option.kind {
            Kind::Text => "string",
            Kind::Bool => "boolean",
            Kind::List => "array of strings",
            Kind::Count => "integer ≥ 1",
        };
        let becomes = match option.render {
            Render::Flag(flag) => format!("`{flag} <value>`"),
            Render::Joined(flag) => format!("`{flag}<value>`"),
            Render::Config(flag, key) => format!("`{flag} {key}=\"<value>\"`"),
            Render::WhenTrue(args) => format!("`{}` when true", args.join(" ")),
            Render::Either(yes, no) => format!("`{yes}` when true, `{no}` when false"),
            Render::Selects => "nothing (it chooses the command line)".to_owned(),
            Render::ModelVariant => {
                "`--model <model>#<value>` (2.x), `--variant <value>` (1.x)".to_owned()
            }
        };
        let _ = writeln!(
            out,
            "| `{}` | {kind} | {becomes} | {} |",
            option.key, option.doc
        );
    }
    out.push('\n');
}
