//! The provider table: for every coding-agent CLI the reference host (curupira 0.4.0)
//! knows, the arguments it is run with, the profile options and the flags they become,
//! how the prompt is passed, how a session is resumed and what its stream says. The
//! argument builder ([`crate::Profile::invocation`]), the stream reader
//! ([`crate::stream`]) and the generated reference page ([`crate::docs`]) all read
//! this one table.
//!
//! Every row was checked against the reference host's own calls
//! (`recordings/reference-0.4.0.json`, made by `recordings/record.py`).

use crate::Provider;

/// The kind of value a profile option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A non-empty string.
    Text,
    /// `true` or `false`.
    Bool,
    /// An array of strings.
    List,
    /// An integer of at least 1.
    Count,
}

impl Kind {
    /// The kind, as the reference host's messages name it ("must be a string").
    pub fn expected(self) -> &'static str {
        match self {
            Kind::Text => "a string",
            Kind::Bool => "a boolean",
            Kind::List => "an array of strings",
            Kind::Count => "an integer",
        }
    }
}

/// How an option's value becomes arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Render {
    /// `FLAG VALUE`; a list is joined with commas.
    Flag(&'static str),
    /// `FLAG=VALUE`; a list is joined with commas.
    Joined(&'static str),
    /// `FLAG KEY="VALUE"` (codex's `--config`).
    Config(&'static str, &'static str),
    /// These arguments when `true`, nothing when `false`.
    WhenTrue(&'static [&'static str]),
    /// The first argument when `true`, the second when `false`.
    Either(&'static str, &'static str),
    /// opencode 2.x: `#VALUE` appended to the model (`--model provider/model#VALUE`).
    ModelVariant,
    /// No argument: the value chooses the command line itself (OpenCode's `api`).
    Selects,
}

/// One profile option of a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    /// Its key in the profile (`model`, `effort`, …).
    pub key: &'static str,
    /// The value it takes.
    pub kind: Kind,
    /// The arguments it becomes.
    pub render: Render,
    /// What it is, for the reference page.
    pub doc: &'static str,
}

/// How the prompt is given to the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptArg {
    /// `-- PROMPT`, the last two arguments.
    AfterDashes,
    /// `FLAG=PROMPT`, the last argument.
    Joined(&'static str),
}

/// What the host does with a prompt longer than one argument may be on Linux
/// ([`crate::MAX_ARGUMENT_BYTES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongPrompt {
    /// The prompt goes to standard input instead, and these arguments take the place
    /// of the prompt's (none: the CLI reads a piped stdin by itself).
    Stdin(&'static [&'static str]),
    /// The CLI has no other way to take a prompt: the attempt is refused.
    Refuse,
}

/// How a session is resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// These arguments, `{session}` replaced by the session id, right after the
    /// provider's first arguments.
    Args(&'static [&'static str]),
    /// The host names the session itself from the first attempt on
    /// (`--session-id=<uuid>`): a resume is the same arguments with the continue prompt.
    HostNamed,
}

/// How the session id is found in the CLI's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKey {
    /// The first line with one of these top-level string members.
    Member(&'static [&'static str]),
    /// The member `id` of the line whose `type` is this.
    IdOfType(&'static str),
    /// The host chose it ([`Resume::HostNamed`]); the stream is not asked.
    Host,
}

/// The JSON stream format a CLI prints, which decides how the final answer, usage
/// and cost are read ([`crate::stream`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    /// Claude Code's `stream-json` (also Qwen Code's and Cursor's): a closing
    /// `{"type":"result", "result", "usage", "total_cost_usd"}`.
    ClaudeStreamJson,
    /// `codex exec --json`: `item.completed` agent messages, `turn.completed` usage.
    CodexJson,
    /// Gemini CLI's `stream-json`: assistant `message` deltas, a closing `result`
    /// with `stats`.
    GeminiStreamJson,
    /// Copilot CLI's `--output-format=json`: `assistant.message` events, a closing
    /// `result` with `usage`.
    CopilotJson,
    /// OpenCode's (and Kilo's) `run --format json`: `text` parts, `step_finish`
    /// tokens and cost.
    OpencodeJson,
    /// pi's `--mode json`: `message_end` assistant messages with usage and cost.
    PiJson,
}

/// One provider's row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    /// The provider.
    pub provider: Provider,
    /// Its name in a profile (`provider = "…"`).
    pub name: &'static str,
    /// The product's name, as the reference host's messages say it.
    pub title: &'static str,
    /// The program looked up on `PATH`.
    pub program: &'static str,
    /// The first arguments, always.
    pub prefix: &'static [&'static str],
    /// How a session is resumed.
    pub resume: Resume,
    /// Its options, in the order their arguments come (whatever the file's order).
    pub options: &'static [OptionSpec],
    /// Arguments after the options, before the prompt.
    pub suffix: &'static [&'static str],
    /// How the prompt is passed.
    pub prompt: PromptArg,
    /// What happens to a prompt too long for one argument.
    pub long_prompt: LongPrompt,
    /// Where the stream announces the session.
    pub session: SessionKey,
    /// The stream format.
    pub stream: StreamFormat,
    /// The CLI's documentation of its non-interactive mode and output format.
    pub source: &'static str,
}

const MODEL: OptionSpec = OptionSpec {
    key: "model",
    kind: Kind::Text,
    render: Render::Flag("--model"),
    doc: "the model",
};

const AGENT: OptionSpec = OptionSpec {
    key: "agent",
    kind: Kind::Text,
    render: Render::Flag("--agent"),
    doc: "the CLI's named agent",
};

/// The options `model`, `agent` and `effort` are known to every provider: one a
/// provider lacks is refused with "`<title>: unsupported profile field`" (the
/// reference host's message); other keys are refused as unknown.
pub const COMMON_KEYS: [&str; 3] = ["model", "agent", "effort"];

/// The table, in the order the reference host lists its providers.
pub const TABLE: [Spec; 9] = [
    Spec {
        provider: Provider::Claude,
        name: "claude",
        title: "Claude Code",
        program: "claude",
        prefix: &["-p", "--output-format", "stream-json", "--verbose"],
        resume: Resume::Args(&["--resume", "{session}"]),
        options: &[
            MODEL,
            AGENT,
            OptionSpec {
                key: "effort",
                kind: Kind::Text,
                render: Render::Flag("--effort"),
                doc: "the reasoning effort",
            },
            OptionSpec {
                key: "permission_mode",
                kind: Kind::Text,
                render: Render::Flag("--permission-mode"),
                doc: "the permission mode (`acceptEdits`, `bypassPermissions`, …)",
            },
            OptionSpec {
                key: "permission_prompts",
                kind: Kind::Text,
                render: Render::Flag("--permission-prompts"),
                doc: "how permission prompts are answered",
            },
        ],
        suffix: &[],
        prompt: PromptArg::AfterDashes,
        long_prompt: LongPrompt::Stdin(&[]),
        session: SessionKey::Member(&["session_id"]),
        stream: StreamFormat::ClaudeStreamJson,
        source: "https://code.claude.com/docs/en/cli-reference",
    },
    Spec {
        provider: Provider::Codex,
        name: "codex",
        title: "Codex",
        program: "codex",
        prefix: &["exec"],
        resume: Resume::Args(&["resume", "{session}"]),
        options: &[
            MODEL,
            OptionSpec {
                key: "agent",
                kind: Kind::Text,
                render: Render::Flag("--profile"),
                doc: "the Codex configuration profile",
            },
            OptionSpec {
                key: "effort",
                kind: Kind::Text,
                render: Render::Config("--config", "model_reasoning_effort"),
                doc: "the reasoning effort",
            },
            OptionSpec {
                key: "sandbox",
                kind: Kind::Text,
                render: Render::Flag("--sandbox"),
                doc: "the sandbox policy (`read-only`, `workspace-write`, …)",
            },
            OptionSpec {
                key: "auto_review",
                kind: Kind::Bool,
                render: Render::WhenTrue(&[
                    "--config",
                    "approval_policy=\"on-request\"",
                    "--config",
                    "approvals_reviewer=\"auto_review\"",
                ]),
                doc: "approvals asked on request and answered by the auto reviewer",
            },
        ],
        suffix: &["--json"],
        prompt: PromptArg::AfterDashes,
        long_prompt: LongPrompt::Stdin(&["--", "-"]),
        session: SessionKey::Member(&["thread_id", "session_id"]),
        stream: StreamFormat::CodexJson,
        source: "https://developers.openai.com/codex/cli/reference",
    },
    Spec {
        provider: Provider::Cursor,
        name: "cursor",
        title: "Cursor",
        program: "agent",
        prefix: &["--print", "--output-format", "stream-json"],
        resume: Resume::Args(&["--resume", "{session}"]),
        options: &[
            OptionSpec {
                key: "agent",
                kind: Kind::Text,
                render: Render::Flag("--mode"),
                doc: "the agent mode",
            },
            MODEL,
            OptionSpec {
                key: "force",
                kind: Kind::Bool,
                render: Render::WhenTrue(&["--force"]),
                doc: "commands run without asking",
            },
            OptionSpec {
                key: "trust",
                kind: Kind::Bool,
                render: Render::WhenTrue(&["--trust"]),
                doc: "the workspace is trusted without asking",
            },
        ],
        suffix: &[],
        prompt: PromptArg::AfterDashes,
        long_prompt: LongPrompt::Refuse,
        session: SessionKey::Member(&["session_id"]),
        stream: StreamFormat::ClaudeStreamJson,
        source: "https://cursor.com/docs/cli/reference/output-format",
    },
    Spec {
        provider: Provider::Gemini,
        name: "gemini",
        title: "Gemini CLI",
        program: "gemini",
        prefix: &["--output-format", "stream-json"],
        resume: Resume::Args(&["--resume", "{session}"]),
        options: &[
            MODEL,
            OptionSpec {
                key: "approval_mode",
                kind: Kind::Text,
                render: Render::Flag("--approval-mode"),
                doc: "the approval mode (`default`, `auto_edit`, `yolo`)",
            },
            OptionSpec {
                key: "skip_trust",
                kind: Kind::Bool,
                render: Render::WhenTrue(&["--skip-trust"]),
                doc: "the folder-trust prompt is skipped",
            },
        ],
        suffix: &[],
        prompt: PromptArg::Joined("--prompt="),
        long_prompt: LongPrompt::Stdin(&[]),
        session: SessionKey::Member(&["session_id", "sessionId"]),
        stream: StreamFormat::GeminiStreamJson,
        source: "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/headless.md",
    },
    Spec {
        provider: Provider::Copilot,
        name: "copilot",
        title: "Copilot",
        program: "copilot",
        prefix: &[
            "--output-format=json",
            "--no-ask-user",
            "--session-id={session}",
        ],
        resume: Resume::HostNamed,
        options: &[
            OptionSpec {
                key: "model",
                kind: Kind::Text,
                render: Render::Joined("--model="),
                doc: "the model",
            },
            OptionSpec {
                key: "agent",
                kind: Kind::Text,
                render: Render::Joined("--agent="),
                doc: "the custom agent",
            },
            OptionSpec {
                key: "effort",
                kind: Kind::Text,
                render: Render::Joined("--reasoning-effort="),
                doc: "the reasoning effort",
            },
            OptionSpec {
                key: "allow_all_tools",
                kind: Kind::Bool,
                render: Render::WhenTrue(&["--allow-all-tools"]),
                doc: "every tool runs without asking",
            },
            OptionSpec {
                key: "allow_tools",
                kind: Kind::List,
                render: Render::Joined("--allow-tool="),
                doc: "tools that run without asking (no entry may contain a comma)",
            },
            OptionSpec {
                key: "deny_tools",
                kind: Kind::List,
                render: Render::Joined("--deny-tool="),
                doc: "tools that never run (no entry may contain a comma)",
            },
        ],
        suffix: &[],
        prompt: PromptArg::Joined("--prompt="),
        long_prompt: LongPrompt::Refuse,
        session: SessionKey::Host,
        stream: StreamFormat::CopilotJson,
        source: "https://docs.github.com/en/copilot/reference/cli-command-reference",
    },
    Spec {
        provider: Provider::Kilo,
        name: "kilo",
        title: "Kilo",
        program: "kilo",
        prefix: &["run", "--format", "json"],
        resume: Resume::Args(&["--session", "{session}"]),
        options: &[
            OptionSpec {
                key: "model",
                kind: Kind::Text,
                render: Render::Flag("--model"),
                doc: "the model, as `provider/model`",
            },
            AGENT,
            OptionSpec {
                key: "effort",
                kind: Kind::Text,
                render: Render::Flag("--variant"),
                doc: "the model variant",
            },
            OptionSpec {
                key: "auto_approve",
                kind: Kind::Bool,
                render: Render::WhenTrue(&["--auto"]),
                doc: "permissions are approved without asking",
            },
        ],
        suffix: &[],
        prompt: PromptArg::AfterDashes,
        long_prompt: LongPrompt::Stdin(&[]),
        session: SessionKey::Member(&["sessionID"]),
        stream: StreamFormat::OpencodeJson,
        source: "https://kilo.ai/docs/code-with-ai/platforms/cli",
    },
    Spec {
        provider: Provider::Opencode,
        name: "opencode",
        title: "OpenCode",
        program: "opencode",
        // 2.x; 1.x is `run --format json --dir <worktree>` (see `crate::OpencodeApi`).
        prefix: &["run", "--standalone", "--format", "json"],
        resume: Resume::Args(&["--session", "{session}"]),
        options: &[
            MODEL,
            AGENT,
            OptionSpec {
                key: "effort",
                kind: Kind::Text,
                render: Render::ModelVariant,
                doc: "the model variant: `--model provider/model#effort` on 2.x (ignored, with a warning, without a model), `--variant` on 1.x",
            },
            OptionSpec {
                key: "auto_approve",
                kind: Kind::Bool,
                render: Render::WhenTrue(&["--auto"]),
                doc: "permissions are approved without asking",
            },
            OptionSpec {
                key: "api",
                kind: Kind::Text,
                render: Render::Selects,
                doc: "`v1`, `v2` or `auto` (the default: the major version `opencode --version` prints)",
            },
        ],
        suffix: &[],
        prompt: PromptArg::AfterDashes,
        long_prompt: LongPrompt::Stdin(&[]),
        session: SessionKey::Member(&["sessionID"]),
        stream: StreamFormat::OpencodeJson,
        source: "https://opencode.ai/docs/cli/",
    },
    Spec {
        provider: Provider::Pi,
        name: "pi",
        title: "pi",
        program: "pi",
        prefix: &["--mode", "json"],
        resume: Resume::Args(&["--session", "{session}"]),
        options: &[
            OptionSpec {
                key: "model_provider",
                kind: Kind::Text,
                render: Render::Flag("--provider"),
                doc: "the model's provider (needs `model`)",
            },
            MODEL,
            OptionSpec {
                key: "effort",
                kind: Kind::Text,
                render: Render::Flag("--thinking"),
                doc: "the thinking level",
            },
            OptionSpec {
                key: "tools",
                kind: Kind::List,
                render: Render::Flag("--tools"),
                doc: "the tools it may use",
            },
            OptionSpec {
                key: "exclude_tools",
                kind: Kind::List,
                render: Render::Flag("--exclude-tools"),
                doc: "tools it may not use",
            },
            OptionSpec {
                key: "approve",
                kind: Kind::Bool,
                render: Render::Either("--approve", "--no-approve"),
                doc: "tool calls approved without asking (`false` passes `--no-approve`)",
            },
        ],
        suffix: &[],
        prompt: PromptArg::AfterDashes,
        long_prompt: LongPrompt::Refuse,
        session: SessionKey::IdOfType("session"),
        stream: StreamFormat::PiJson,
        source: "https://pi.dev/docs/latest",
    },
    Spec {
        provider: Provider::Qwen,
        name: "qwen",
        title: "Qwen Code",
        program: "qwen",
        prefix: &["--output-format", "stream-json"],
        resume: Resume::Args(&["--resume", "{session}"]),
        options: &[
            MODEL,
            OptionSpec {
                key: "approval_mode",
                kind: Kind::Text,
                render: Render::Flag("--approval-mode"),
                doc: "the approval mode (`default`, `auto-edit`, `yolo`, `plan`)",
            },
            OptionSpec {
                key: "max_session_turns",
                kind: Kind::Count,
                render: Render::Flag("--max-session-turns"),
                doc: "the most turns in the session",
            },
        ],
        suffix: &[],
        prompt: PromptArg::Joined("--prompt="),
        long_prompt: LongPrompt::Stdin(&[]),
        session: SessionKey::Member(&["session_id"]),
        stream: StreamFormat::ClaudeStreamJson,
        source: "https://qwenlm.github.io/qwen-code-docs/en/users/features/headless/",
    },
];
