//! The coding-agent CLIs Curupira runs as *providers*: for each of the nine the
//! reference host (curupira 0.4.0) knows — `claude`, `codex`, `cursor`, `gemini`,
//! `copilot`, `kilo`, `opencode`, `pi`, `qwen` — the exact argument vector it is run
//! with (fresh or resuming a session), the profile options it takes and the flags
//! they become, how its JSON stream says its session, answer, usage and cost, and the
//! reference page of all that. One table ([`table::TABLE`]) feeds all of it.
//!
//! The crate runs nothing: it builds [`Invocation`]s and reads streams. The host
//! (`curupira-orchestrator`) starts the process.
//!
//! ```
//! use curupira_agents::{Profile, Provider, Request};
//! use curupira_agents::serde_json::json;
//!
//! let options = json!({"model": "sonnet", "permission_mode": "acceptEdits"});
//! let profile = Profile::new(Provider::Claude, options.as_object().unwrap())?;
//! let call = profile.invocation(&Request::fresh("Fix issue 7", "/work/tree".as_ref()))?;
//! assert_eq!(call.program, "claude");
//! assert_eq!(
//!     call.args,
//!     ["-p", "--output-format", "stream-json", "--verbose", "--model", "sonnet",
//!      "--permission-mode", "acceptEdits", "--", "Fix issue 7"],
//! );
//!
//! // After a crash the same session goes on, with the continue prompt.
//! let call = profile.invocation(&Request::resume("Fix issue 7", "/work/tree".as_ref(), "s-1"))?;
//! assert_eq!(&call.args[4..6], ["--resume", "s-1"]);
//! assert!(call.args.last().unwrap().ends_with("\n\nTask:\nFix issue 7"));
//!
//! // Its stream, line by line.
//! let mut stream = curupira_agents::stream::Reader::new(Provider::Claude);
//! stream.line(r#"{"type":"system","subtype":"init","session_id":"s-2"}"#);
//! stream.line(r#"{"type":"result","result":"Done.","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":3}}"#);
//! let summary = stream.summary();
//! assert_eq!(summary.session_id.as_deref(), Some("s-2"));
//! assert_eq!(summary.answer.as_deref(), Some("Done."));
//! assert_eq!(summary.cost_usd, Some(0.5));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod docs;
pub mod stream;
pub mod table;

use std::fmt;
use std::path::Path;

use serde_json::{Map, Value};

pub use table::{COMMON_KEYS, Kind, OptionSpec, Spec, TABLE};

/// The JSON crate of [`Profile::new`]'s options, re-exported so a user needs no
/// version of their own.
pub use serde_json;
use table::{LongPrompt, PromptArg, Render, Resume};

/// The longest one argument may be on Linux, its terminating NUL included
/// (`MAX_ARG_STRLEN`, 32 pages): an argument of this many bytes or more cannot be
/// passed to `execve`.
pub const MAX_ARGUMENT_BYTES: usize = 131_072;

/// The reference host's continue prompt: a resumed session gets this, then
/// `"\n\nTask:\n"` and the task's prompt.
pub const CONTINUE_PROMPT: &str = "Continue the previous coding task for this work item. \
Use the repository state and prior session context. If the session holds no earlier work, \
start the task below.";

/// A coding-agent CLI the host knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Provider {
    /// Claude Code (`claude`).
    Claude,
    /// OpenAI Codex CLI (`codex`).
    Codex,
    /// Cursor's CLI (`agent`).
    Cursor,
    /// Gemini CLI (`gemini`).
    Gemini,
    /// GitHub Copilot CLI (`copilot`).
    Copilot,
    /// Kilo CLI (`kilo`).
    Kilo,
    /// OpenCode (`opencode`).
    Opencode,
    /// pi (`pi`).
    Pi,
    /// Qwen Code (`qwen`).
    Qwen,
}

impl Provider {
    /// Every provider, in the table's order.
    pub const ALL: [Provider; 9] = [
        Provider::Claude,
        Provider::Codex,
        Provider::Cursor,
        Provider::Gemini,
        Provider::Copilot,
        Provider::Kilo,
        Provider::Opencode,
        Provider::Pi,
        Provider::Qwen,
    ];

    /// Its row of the table.
    pub fn spec(self) -> &'static Spec {
        // The table is in `ALL`'s order (checked by a test).
        &TABLE[self as usize]
    }

    /// Its name in a profile: `claude`, `codex`, …
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The program looked up on `PATH` (`agent` for Cursor).
    pub fn program(self) -> &'static str {
        self.spec().program
    }

    /// The provider of this name.
    pub fn parse(name: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The names, for a message: `claude, codex, …`.
    pub fn names() -> String {
        Provider::ALL.map(Provider::name).join(", ")
    }
}

impl fmt::Display for Provider {
    /// Its name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a profile is refused, in the reference host's words where it has them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// An option of the wrong kind.
    #[error("profile field \"{key}\" must be {expected}, got {got}")]
    WrongKind {
        /// The option.
        key: String,
        /// What it takes.
        expected: &'static str,
        /// What it was, as JSON.
        got: String,
    },
    /// An empty string where a value is needed.
    #[error("profile field \"{key}\" must be a non-empty string")]
    Empty {
        /// The option.
        key: String,
    },
    /// A count below 1.
    #[error("profile field \"{key}\" must be >= 1")]
    BelowOne {
        /// The option.
        key: String,
    },
    /// `model`, `agent` or `effort` for a provider without it.
    #[error("{title}: unsupported profile field \"{key}\"")]
    Unsupported {
        /// The provider's title.
        title: &'static str,
        /// The option.
        key: String,
    },
    /// A key no provider knows for this one.
    #[error("unknown profile field \"{key}\" for provider {provider} (it takes {known})")]
    Unknown {
        /// The provider.
        provider: Provider,
        /// The option.
        key: String,
        /// The options it takes.
        known: String,
    },
    /// A rule between options, or on one value, in one sentence.
    #[error("{0}")]
    Rule(String),
}

/// Why an invocation cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvocationError {
    /// The prompt is too long for one argument and this CLI takes it no other way.
    #[error(
        "the prompt is {bytes} bytes, too long for one argument ({limit} bytes at most on \
         Linux), and {title} takes its prompt only as an argument; shorten the prompt or use \
         another provider"
    )]
    PromptTooLong {
        /// The provider's title.
        title: &'static str,
        /// The prompt argument's length.
        bytes: usize,
        /// The most an argument may be.
        limit: usize,
    },
}

/// Which OpenCode command line the host uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpencodeApi {
    /// 1.x: `run --format json --dir <worktree>`, `OPENCODE_DB` next to the worktree,
    /// `--variant` for the effort.
    V1,
    /// 2.x and later: `run --standalone --format json`, the effort as a model
    /// variant.
    V2,
    /// Read from `opencode --version` before the first task ([`opencode_api`]).
    Auto,
}

/// A provider with its options, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    provider: Provider,
    options: Map<String, Value>,
    /// OpenCode only.
    api: OpencodeApi,
}

impl Profile {
    /// Checks `options` (the profile's keys other than `provider`) against the
    /// provider's row: each known key has the right kind; `model`, `agent` or `effort`
    /// where the provider has none is refused as unsupported, and any other key it
    /// does not take as unknown (the reference host ignores those; a typo should not
    /// go unnoticed); the providers' own rules (Kilo's `provider/model`, pi's
    /// `model_provider` needing `model`, Copilot's tools without commas, OpenCode's
    /// `api`, an `effort` beside a model with a `#variant`).
    pub fn new(provider: Provider, options: &Map<String, Value>) -> Result<Profile, ProfileError> {
        let spec = provider.spec();
        for (key, value) in options {
            let Some(option) = spec.options.iter().find(|o| o.key == key) else {
                if table::COMMON_KEYS.contains(&key.as_str()) {
                    return Err(ProfileError::Unsupported {
                        title: spec.title,
                        key: key.clone(),
                    });
                }
                return Err(ProfileError::Unknown {
                    provider,
                    key: key.clone(),
                    known: spec
                        .options
                        .iter()
                        .map(|o| o.key)
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            };
            check_kind(key, option.kind, value)?;
        }
        let text = |key: &str| options.get(key).and_then(Value::as_str);
        let api = match text("api") {
            None | Some("auto") => OpencodeApi::Auto,
            Some("v1") => OpencodeApi::V1,
            Some("v2") => OpencodeApi::V2,
            Some(other) => {
                return Err(ProfileError::Rule(format!(
                    "profile field \"api\" must be \"v1\", \"v2\", or \"auto\", got \"{other}\""
                )));
            }
        };
        match provider {
            Provider::Kilo if text("model").is_some_and(|m| !m.contains('/')) => {
                return Err(ProfileError::Rule(
                    "Kilo model must use the provider/model format".to_owned(),
                ));
            }
            Provider::Pi if text("model_provider").is_some() && text("model").is_none() => {
                return Err(ProfileError::Rule(
                    "model_provider requires model".to_owned(),
                ));
            }
            Provider::Copilot => {
                let comma = ["allow_tools", "deny_tools"].iter().any(|key| {
                    options
                        .get(*key)
                        .and_then(Value::as_array)
                        .is_some_and(|tools| {
                            tools
                                .iter()
                                .filter_map(Value::as_str)
                                .any(|t| t.contains(','))
                        })
                });
                if comma {
                    return Err(ProfileError::Rule(
                        "Copilot tool entries must not contain commas".to_owned(),
                    ));
                }
            }
            Provider::Opencode
                if api != OpencodeApi::V1
                    && text("effort").is_some()
                    && text("model").is_some_and(|m| m.contains('#')) =>
            {
                return Err(ProfileError::Rule(
                    "profile field \"effort\" cannot be combined with a model that already \
                     includes a #variant"
                        .to_owned(),
                ));
            }
            _ => {}
        }
        Ok(Profile {
            provider,
            options: options.clone(),
            api,
        })
    }

    /// The provider.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// OpenCode's `api` (`Auto` for every other provider).
    pub fn opencode_api(&self) -> OpencodeApi {
        self.api
    }

    /// This profile with OpenCode's `api` decided (from [`opencode_api`]).
    pub fn with_opencode_api(mut self, api: OpencodeApi) -> Profile {
        self.api = api;
        self
    }

    /// A warning about the profile the CLI would otherwise leave unsaid: OpenCode 2.x
    /// ignores an `effort` without a `model`.
    pub fn warning(&self) -> Option<String> {
        (self.provider == Provider::Opencode
            && self.api != OpencodeApi::V1
            && self.options.contains_key("effort")
            && !self.options.contains_key("model"))
        .then(|| {
            "OpenCode 2.x ignores profile effort when model is not set; the variant belongs \
             in --model provider/model#variant"
                .to_owned()
        })
    }

    /// The command line of one attempt. Options come in the provider's order, a
    /// resume's arguments right after the first ones, and the prompt last, as the
    /// reference host does it. A prompt argument of [`MAX_ARGUMENT_BYTES`] or more goes
    /// to stdin where the CLI reads it there, and is refused where it does not.
    pub fn invocation(&self, request: &Request<'_>) -> Result<Invocation, InvocationError> {
        let spec = self.provider.spec();
        let session = request.session.unwrap_or_default();
        let mut args: Vec<String> = Vec::new();
        let v1 = self.provider == Provider::Opencode && self.api == OpencodeApi::V1;
        let mut env = Vec::new();
        if v1 {
            let worktree = request.worktree.display().to_string();
            args.extend(["run", "--format", "json", "--dir"].map(String::from));
            args.push(worktree.clone());
            env.push(("OPENCODE_DB".to_owned(), format!("{worktree}.opencode.db")));
        } else {
            args.extend(spec.prefix.iter().map(|a| a.replace("{session}", session)));
        }
        if request.resuming
            && let Resume::Args(resume) = spec.resume
        {
            args.extend(resume.iter().map(|a| a.replace("{session}", session)));
        }
        for option in spec.options {
            if let Some(value) = self.options.get(option.key) {
                self.render(option, value, v1, &mut args);
            }
        }
        args.extend(spec.suffix.iter().map(|a| (*a).to_owned()));
        let prompt = if request.resuming {
            format!("{}\n\nTask:\n{}", request.continue_prompt, request.prompt)
        } else {
            request.prompt.to_owned()
        };
        let argument = match spec.prompt {
            PromptArg::AfterDashes => prompt.len(),
            PromptArg::Joined(flag) => flag.len() + prompt.len(),
        };
        let mut stdin = None;
        if argument < MAX_ARGUMENT_BYTES {
            match spec.prompt {
                PromptArg::AfterDashes => {
                    args.push("--".to_owned());
                    args.push(prompt);
                }
                PromptArg::Joined(flag) => args.push(format!("{flag}{prompt}")),
            }
        } else {
            match spec.long_prompt {
                LongPrompt::Stdin(instead) => {
                    args.extend(instead.iter().map(|a| (*a).to_owned()));
                    stdin = Some(prompt);
                }
                LongPrompt::Refuse => {
                    return Err(InvocationError::PromptTooLong {
                        title: spec.title,
                        bytes: argument,
                        limit: MAX_ARGUMENT_BYTES - 1,
                    });
                }
            }
        }
        Ok(Invocation {
            program: spec.program,
            args,
            env,
            stdin,
        })
    }

    fn render(&self, option: &OptionSpec, value: &Value, v1: bool, args: &mut Vec<String>) {
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(","),
            Value::Number(number) => number.to_string(),
            _ => String::new(),
        };
        let list_empty = value.as_array().is_some_and(Vec::is_empty);
        match option.render {
            Render::Flag(flag) if !list_empty => {
                args.push(flag.to_owned());
                args.push(text);
            }
            Render::Joined(flag) if !list_empty => args.push(format!("{flag}{text}")),
            Render::Flag(_) | Render::Joined(_) => {}
            Render::Config(flag, key) => {
                args.push(flag.to_owned());
                args.push(format!("{key}=\"{text}\""));
            }
            Render::WhenTrue(when) => {
                if value.as_bool() == Some(true) {
                    args.extend(when.iter().map(|a| (*a).to_owned()));
                }
            }
            Render::Either(yes, no) => {
                args.push(
                    if value.as_bool() == Some(true) {
                        yes
                    } else {
                        no
                    }
                    .to_owned(),
                );
            }
            Render::ModelVariant if v1 => {
                args.push("--variant".to_owned());
                args.push(text);
            }
            Render::ModelVariant | Render::Selects => {
                // On 2.x the effort rides on the model (`MODEL`'s turn, below); `api`
                // chose the first arguments already.
            }
        }
        // OpenCode 2.x: `--model provider/model#effort`.
        if option.key == "model"
            && self.provider == Provider::Opencode
            && !v1
            && let Some(effort) = self.options.get("effort").and_then(Value::as_str)
            && let Some(model) = args.last_mut()
        {
            model.push('#');
            model.push_str(effort);
        }
    }
}

fn check_kind(key: &str, kind: Kind, value: &Value) -> Result<(), ProfileError> {
    let wrong = || ProfileError::WrongKind {
        key: key.to_owned(),
        expected: kind.expected(),
        got: value.to_string(),
    };
    match kind {
        Kind::Text => match value.as_str() {
            None => Err(wrong()),
            Some("") => Err(ProfileError::Empty {
                key: key.to_owned(),
            }),
            Some(_) => Ok(()),
        },
        Kind::Bool => value.as_bool().map(|_| ()).ok_or_else(wrong),
        Kind::List => match value.as_array() {
            Some(items) if items.iter().all(Value::is_string) => Ok(()),
            _ => Err(wrong()),
        },
        Kind::Count => match value.as_i64() {
            None => Err(wrong()),
            Some(n) if n < 0 => Err(ProfileError::Rule(format!(
                "profile field \"{key}\" must be a positive integer"
            ))),
            Some(0) => Err(ProfileError::BelowOne {
                key: key.to_owned(),
            }),
            Some(_) => Ok(()),
        },
    }
}

/// What one attempt asks of the CLI.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The task's rendered prompt.
    pub prompt: &'a str,
    /// The task's working directory (OpenCode 1.x is told it).
    pub worktree: &'a Path,
    /// The session: the one to resume, or the one the host names itself (Copilot's
    /// `--session-id`, from the first attempt on).
    pub session: Option<&'a str>,
    /// Whether the session is resumed (the resume arguments and the continue prompt).
    pub resuming: bool,
    /// What comes before `"\n\nTask:\n"` and the prompt when resuming.
    pub continue_prompt: &'a str,
}

impl<'a> Request<'a> {
    /// A first attempt, in a new session.
    pub fn fresh(prompt: &'a str, worktree: &'a Path) -> Request<'a> {
        Request {
            prompt,
            worktree,
            session: None,
            resuming: false,
            continue_prompt: CONTINUE_PROMPT,
        }
    }

    /// An attempt that goes on with `session`, with the reference host's continue
    /// prompt.
    pub fn resume(prompt: &'a str, worktree: &'a Path, session: &'a str) -> Request<'a> {
        Request {
            session: Some(session),
            resuming: true,
            ..Request::fresh(prompt, worktree)
        }
    }
}

/// A command line to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program, looked up on `PATH`.
    pub program: &'static str,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to the host's environment.
    pub env: Vec<(String, String)>,
    /// What is written to its stdin (then closed); `None`: nothing, stdin is closed at
    /// once.
    pub stdin: Option<String>,
}

/// A new session name for a provider the host names sessions for (Copilot): a random
/// UUID, as the reference host gives; `None` for the others (their stream says it).
pub fn host_session(provider: Provider) -> Option<String> {
    (provider.spec().resume == Resume::HostNamed).then(|| uuid::Uuid::new_v4().to_string())
}

/// Why OpenCode's version cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// No `x.y.z` in what `opencode --version` printed.
    #[error(
        "could not detect the OpenCode CLI major version from `{program} --version` (output {output:?} \
         has no x.y.z version). Set profile field api to \"v1\" or \"v2\"."
    )]
    Unreadable {
        /// The program run.
        program: String,
        /// What it printed.
        output: String,
    },
    /// A 0.x version.
    #[error("OpenCode version 0.x is not supported. Set profile field api to \"v1\" or \"v2\".")]
    Unsupported,
}

/// OpenCode's command line for what `opencode --version` printed: the first
/// `x.y.z` in it (a `v` or words before it allowed) decides: 1 is
/// [`OpencodeApi::V1`], 2 and later [`OpencodeApi::V2`], 0 is refused, none found is
/// refused with a hint (as the reference host does).
pub fn opencode_api(program: &str, output: &str) -> Result<OpencodeApi, VersionError> {
    let major = output
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find_map(|word| {
            let mut parts = word.split('.');
            let major = parts.next()?.parse::<u64>().ok()?;
            let minor = parts.next()?;
            let patch = parts.next()?;
            (!minor.is_empty()
                && minor.bytes().all(|b| b.is_ascii_digit())
                && !patch.is_empty()
                && patch.bytes().all(|b| b.is_ascii_digit()))
            .then_some(major)
        });
    match major {
        None => Err(VersionError::Unreadable {
            program: program.to_owned(),
            output: output.to_owned(),
        }),
        Some(0) => Err(VersionError::Unsupported),
        Some(1) => Ok(OpencodeApi::V1),
        Some(_) => Ok(OpencodeApi::V2),
    }
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
