//! `curupira.toml`, the host's configuration (SPEC section 7): typed, and checked so that
//! every problem is reported in one pass with a stable code, a JSON Pointer, a line
//! and a column.
//!
//! ```toml
//! [settings]
//! repository = "github.com/acme/widgets"   # optional; else `git remote get-url origin`
//! [settings.polling]
//! batch_size = 10                # polls per round, default 10
//! interval_seconds = 60          # pause between rounds when running continuously
//! [settings.agent]
//! command = ["my-agent", "--print"]
//! [settings.protocol]
//! max_frame_bytes = 16777216
//! [settings.timeouts]            # seconds
//! initialize = 10
//! request = 30
//! shutdown = 5
//!
//! [extensions.acme]
//! path = "extensions/acme"       # or: builtin = "local-queue"
//!
//! [automations.fix-bugs]
//! trigger = "github-issue"       # or "acme:github-issue"
//! prompt = "Fix issue #${issue_number} in ${repository}."   # or prompt_file = "fix.md"
//! arguments = { labels = ["bug"] }
//! polling = { batch_size = 3 }
//! agent = { command = ["other-agent"] }
//! ```
//!
//! # Decisions where the specification is silent
//!
//! - **Paths** (`extensions.*.path`, `prompt_file`) are relative to the folder of the
//!   config file, whatever the current directory is. That folder is also the working
//!   directory of every extension and of the agent.
//! - **Numbers.** `batch_size` is an integer ≥ 1 (`config/batch-size`).
//!   `interval_seconds` and the timeouts are seconds, integer or fractional
//!   (`0.5`); timeouts must be > 0, the interval ≥ 0. `max_frame_bytes` is an integer
//!   from 1 to 4294967295 (what the 8 hex digits of a header can announce).
//! - **Order.** Automations keep the order in which they appear in the file; `run`
//!   prepares and polls them in that order.
//! - **Extension names** are the keys of `[extensions]`; they may not contain `:`
//!   (which separates `extension:type` in `trigger`).
//! - **`arguments`** may hold any TOML value; a date-time becomes its RFC 3339 text in
//!   the JSON sent to the extension. A float that JSON cannot represent (`nan`, `inf`)
//!   is an error.
//! - **Unknown keys** are warnings (`config/unknown-key`) with a did-you-mean, except
//!   inside `arguments`, which belongs to the trigger.
//! - **The agent command** is optional here: `--dry-run` needs none. `run` and
//!   `validate` report `config/missing-agent` for an automation that has none, through
//!   [`Config::missing_agents`].
//!
//! Everything about extensions (their manifests, which trigger types they offer) is
//! checked by [`crate::resolve`]; this module only reads the file and the prompt files.
//!
//! A file with errors still gives a [partial](Loaded::partial) config: the settings
//! (defaults where a value is wrong) and the extensions and automations with no error
//! in their own table, plus what is known of the others ([`Unusable`]), so that
//! resolution and `validate`'s live checks report their problems in the same pass.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use curupira_diagnostics::{
    Anchor, Collector, Diagnostic, JsonPointer, Position, Report, Severity, SourceMap, did_you_mean,
};
use serde_json::{Map, Value};
use toml::Value as TomlValue;

/// The stable diagnostic codes of the config file (documented in `docs/DIAGNOSTICS.md`).
pub mod codes {
    /// The file is not valid TOML.
    pub const SYNTAX: &str = "config/syntax";
    /// The file is not UTF-8.
    pub const ENCODING: &str = "config/encoding";
    /// A key the config format does not define (warning).
    pub const UNKNOWN_KEY: &str = "config/unknown-key";
    /// A required key is missing.
    pub const MISSING_KEY: &str = "config/missing-key";
    /// A value has the wrong TOML type.
    pub const INVALID_TYPE: &str = "config/invalid-type";
    /// A value has the right type but is not allowed (empty, out of range, …).
    pub const INVALID_VALUE: &str = "config/invalid-value";
    /// `batch_size` is below 1.
    pub const BATCH_SIZE: &str = "config/batch-size";
    /// An automation has both `prompt` and `prompt_file`.
    pub const PROMPT_CONFLICT: &str = "config/prompt-conflict";
    /// `prompt_file` cannot be read as UTF-8 text.
    pub const PROMPT_FILE: &str = "config/prompt-file";
    /// An extension has both `path` and `builtin`.
    pub const EXTENSION_CONFLICT: &str = "config/extension-conflict";
    /// `builtin` names no extension built into this host.
    pub const UNKNOWN_BUILTIN: &str = "config/unknown-builtin";
    /// An extension folder has no readable `curupira-extension.toml`.
    pub const MISSING_MANIFEST: &str = "config/missing-manifest";
    /// An automation has no agent command (neither its own nor `[settings.agent]`).
    pub const MISSING_AGENT: &str = "config/missing-agent";
    /// No extension offers the automation's trigger type.
    pub const UNKNOWN_TRIGGER: &str = "config/unknown-trigger";
    /// Several extensions offer the trigger type and `trigger` does not say which.
    pub const AMBIGUOUS_TRIGGER: &str = "config/ambiguous-trigger";
    /// `trigger = "ext:type"` names an extension that is not configured.
    pub const UNKNOWN_EXTENSION: &str = "config/unknown-extension";
    /// The config defines no automation (warning).
    pub const NO_AUTOMATIONS: &str = "config/no-automations";
    /// The prompt uses `${repository}` and no repository is known.
    pub const REPOSITORY: &str = "config/repository";
    /// An extension failed while being started, initialized, described or shut down.
    pub const EXTENSION_FAILED: &str = "config/extension-failed";
    /// `trigger/schema` or `trigger/validate` failed for a reason other than rejection.
    pub const TRIGGER_FAILED: &str = "config/trigger-failed";
    /// `trigger/validate` rejected the automation's arguments (one per reported error).
    pub const TRIGGER_REJECTED: &str = "config/trigger-rejected";
    /// `describe` and the manifest's `trigger_types` disagree (warning).
    pub const DESCRIBE_MISMATCH: &str = "config/describe-mismatch";
    /// A prompt placeholder that no prompt field and no host variable fills (warning).
    pub const UNKNOWN_PLACEHOLDER: &str = "config/unknown-placeholder";

    /// Every code with its severity, in the order of `docs/DIAGNOSTICS.md` (a test
    /// keeps the two in step).
    pub const ALL: &[(&str, super::Severity)] = {
        use super::Severity::{Error, Warning};
        &[
            (SYNTAX, Error),
            (ENCODING, Error),
            (UNKNOWN_KEY, Warning),
            (MISSING_KEY, Error),
            (INVALID_TYPE, Error),
            (INVALID_VALUE, Error),
            (BATCH_SIZE, Error),
            (PROMPT_CONFLICT, Error),
            (PROMPT_FILE, Error),
            (EXTENSION_CONFLICT, Error),
            (UNKNOWN_BUILTIN, Error),
            (MISSING_MANIFEST, Error),
            (MISSING_AGENT, Error),
            (UNKNOWN_TRIGGER, Error),
            (AMBIGUOUS_TRIGGER, Error),
            (UNKNOWN_EXTENSION, Error),
            (NO_AUTOMATIONS, Warning),
            (REPOSITORY, Error),
            (EXTENSION_FAILED, Error),
            (TRIGGER_FAILED, Error),
            (TRIGGER_REJECTED, Error),
            (DESCRIBE_MISMATCH, Warning),
            (UNKNOWN_PLACEHOLDER, Warning),
        ]
    };
}

/// The default config file name, looked up in the current directory.
pub const FILE_NAME: &str = "curupira.toml";
/// Polls per round when nothing is configured.
pub const DEFAULT_BATCH_SIZE: u32 = 10;
/// Seconds between rounds when nothing is configured.
pub const DEFAULT_INTERVAL_SECONDS: f64 = 60.0;
/// Seconds to wait for the `initialize` reply.
pub const DEFAULT_INITIALIZE_TIMEOUT: f64 = 10.0;
/// Seconds to wait for the reply to any other request.
pub const DEFAULT_REQUEST_TIMEOUT: f64 = 30.0;
/// Seconds to wait for the `shutdown` reply, and again for the process to exit.
pub const DEFAULT_SHUTDOWN_TIMEOUT: f64 = 5.0;
/// The names `builtin = "…"` accepts.
pub use crate::builtin::NAMES as BUILTINS;

/// A checked `curupira.toml`.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file as the user named it (used in diagnostics).
    pub file: String,
    /// The folder that holds the file, absolute: the base of relative paths and the
    /// working directory of extensions and agents.
    pub dir: PathBuf,
    /// `[settings]`.
    pub settings: Settings,
    /// `[extensions.*]`, in file order: those with no error in their own table.
    pub extensions: Vec<ExtensionConfig>,
    /// `[automations.*]`, in file order: those with no error in their own table.
    pub automations: Vec<Automation>,
    /// The parts of a [partial](Loaded::partial) config that could not be read (all
    /// empty in a complete one).
    pub unusable: Unusable,
    /// Whether the file has no error (warnings allowed): only a complete config runs.
    complete: bool,
    /// Every `[automations.*]` key, usable or not, in file order.
    order: Vec<String>,
    text: String,
    source_map: SourceMap,
}

/// What a config with errors could not give: a part is unusable when an error points
/// into it (`/automations/NAME/…`, `/extensions/NAME/…`, `/settings/agent/…`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Unusable {
    /// `settings.repository`, `[settings.protocol]`, `[settings.timeouts]` (or
    /// `[settings]` as a whole) has an error: talking to extensions would use values the
    /// user did not write, so `validate` does not start any.
    pub connection: bool,
    /// `[settings.agent]` (or `[settings]` as a whole) has an error, so an automation
    /// without an agent of its own cannot be said to have none.
    pub agent: bool,
    /// The extensions with an error in their own table, in file order.
    pub extensions: Vec<String>,
    /// The automations with an error in their own table, in file order.
    pub automations: Vec<UnusableAutomation>,
}

/// An automation whose own table has an error: what is still known about it.
#[derive(Debug, Clone, PartialEq)]
pub struct UnusableAutomation {
    /// The table's key.
    pub name: String,
    /// `trigger`, when that key could be read (so it can still be resolved).
    pub trigger: Option<TriggerRef>,
    /// Neither its own `agent` nor `[settings.agent]` gives a command (both read
    /// without error), so `config/missing-agent` applies to it too.
    pub without_agent: bool,
}

/// `[settings]`, with defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `settings.repository`, when set.
    pub repository: Option<String>,
    /// `[settings.protocol] max_frame_bytes`.
    pub max_frame_bytes: usize,
    /// `[settings.timeouts]`.
    pub timeouts: Timeouts,
}

/// `[settings.timeouts]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// How long to wait for the `initialize` reply.
    pub initialize: Duration,
    /// How long to wait for the reply to any other request but `shutdown`.
    pub request: Duration,
    /// How long to wait for the `shutdown` reply, and then for the process to exit.
    pub shutdown: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            initialize: Duration::from_secs_f64(DEFAULT_INITIALIZE_TIMEOUT),
            request: Duration::from_secs_f64(DEFAULT_REQUEST_TIMEOUT),
            shutdown: Duration::from_secs_f64(DEFAULT_SHUTDOWN_TIMEOUT),
        }
    }
}

/// Polling settings of one automation: never sent to the extension.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Polling {
    /// The most polls in one round.
    pub batch_size: u32,
    /// The pause between rounds in continuous mode.
    pub interval: Duration,
}

/// One `[extensions.NAME]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionConfig {
    /// The table's key: how automations name it in `ext:type`.
    pub name: String,
    /// Where it comes from.
    pub source: ExtensionSource,
}

/// Where an extension comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtensionSource {
    /// `path = "…"`: a folder with a `curupira-extension.toml`, made absolute.
    Folder(PathBuf),
    /// `builtin = "…"`: one of [`BUILTINS`], run from the host's own executable.
    Builtin(String),
}

/// One `[automations.NAME]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Automation {
    /// The table's key.
    pub name: String,
    /// `trigger`.
    pub trigger: TriggerRef,
    /// The prompt template's text (inline, or read from `prompt_file`).
    pub prompt: String,
    /// `prompt_file`, made absolute, when the prompt came from a file.
    pub prompt_file: Option<PathBuf>,
    /// `arguments`, as the JSON sent to the extension (before schema defaults).
    pub arguments: Map<String, Value>,
    /// `polling`, merged over `[settings.polling]`.
    pub polling: Polling,
    /// `agent.command`, or `[settings.agent] command`; `None` when neither is set.
    pub agent: Option<Vec<String>>,
}

/// An automation's `trigger`: a type, optionally qualified by the extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerRef {
    /// The `ext` of `ext:type`.
    pub extension: Option<String>,
    /// The trigger type, as the extension names it.
    pub trigger_type: String,
}

impl std::fmt::Display for TriggerRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.extension {
            Some(extension) => write!(f, "{extension}:{}", self.trigger_type),
            None => f.write_str(&self.trigger_type),
        }
    }
}

/// Why the config could not be checked at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read the config file `{}`: {source}", path.display())]
    Read {
        /// The path given.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// `run --automation NAME` names an automation the config does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`--automation {name}`: `{file}` has no automation called `{name}` (it has: {}){}",
    if .known.is_empty() { "none".to_owned() } else { .known.join(", ") },
    .suggestion.as_ref().map(|close| format!("; did you mean `{close}`?")).unwrap_or_default()
)]
pub struct UnknownAutomation {
    /// The name given.
    pub name: String,
    /// The config file, as the user named it.
    pub file: String,
    /// The config's automations, in file order.
    pub known: Vec<String>,
    /// The closest known name, when one is close enough.
    pub suggestion: Option<String>,
}

/// The outcome of [`load`]: the config when it has no error, else what could be read
/// of it, and every diagnostic. At most one of `config` and `partial` is set; neither
/// when the file is not UTF-8 TOML.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The config, when there is no error (warnings allowed).
    pub config: Option<Config>,
    /// When the file is TOML but has errors: the parts that could be read, so that
    /// what depends only on them (trigger resolution, manifests, `validate`'s live
    /// checks) is still checked in the same pass. [`Config::unusable`] lists what is
    /// missing; [`Config::is_complete`] is false. Never run it.
    pub partial: Option<Config>,
    /// Every diagnostic, with the file texts for rendering.
    pub report: Report,
}

impl Loaded {
    /// The config as far as it could be read: complete, or else partial.
    pub fn readable(&self) -> Option<&Config> {
        self.config.as_ref().or(self.partial.as_ref())
    }
}

/// Reads and checks a config file. The file name in diagnostics is `path` as given.
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    let dir = dir.canonicalize().map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    Ok(check_bytes(&bytes, &path.display().to_string(), &dir))
}

/// Checks config bytes; `file` is the name diagnostics show and `dir` the folder
/// relative paths start from.
pub fn check_bytes(bytes: &[u8], file: &str, dir: &Path) -> Loaded {
    let mut report = Report::new();
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.strip_prefix('\u{feff}').unwrap_or(text),
        Err(error) => {
            let offset = error.valid_up_to();
            let lossy = String::from_utf8_lossy(bytes).into_owned();
            let position = Position::of(&lossy, offset);
            report.add_source(file, lossy);
            report.push(
                Diagnostic::error(
                    codes::ENCODING,
                    file,
                    JsonPointer::root(),
                    format!(
                        "the config is not UTF-8: the byte at line {}, column {} does not start a \
                         valid UTF-8 character; save the file as UTF-8",
                        position.line, position.column
                    ),
                )
                .with_location(offset..offset + 1, position),
            );
            return Loaded {
                config: None,
                partial: None,
                report,
            };
        }
    };
    report.add_source(file, text);
    let document = match curupira_diagnostics::toml::parse(text, file, codes::SYNTAX) {
        Ok(document) => document,
        Err(diagnostics) => {
            report.extend(diagnostics);
            return Loaded {
                config: None,
                partial: None,
                report,
            };
        }
    };
    let root: toml::Table = match toml::from_str(text) {
        Ok(root) => root,
        Err(error) => {
            report.push(Diagnostic::error(
                codes::SYNTAX,
                file,
                JsonPointer::root(),
                format!("invalid TOML: {}", error.message()),
            ));
            return Loaded {
                config: None,
                partial: None,
                report,
            };
        }
    };
    let mut checker = Checker {
        collector: Collector::new(file, text, document.source_map.clone()),
        dir,
    };
    let parts = checker.config(&root);
    let diagnostics = checker.collector.finish();
    let errors: Vec<&JsonPointer> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| &d.path)
        .collect();
    let broken = |at: &JsonPointer| errors.iter().any(|error| within(error, at));
    let complete = errors.is_empty();
    let settings_at = JsonPointer::root().key("settings");
    let whole_settings = errors.contains(&&settings_at);
    let mut unusable = Unusable {
        connection: whole_settings
            || ["repository", "protocol", "timeouts"]
                .iter()
                .any(|key| broken(&settings_at.key(key))),
        agent: whole_settings || broken(&settings_at.key("agent")),
        ..Unusable::default()
    };
    let mut extensions = Vec::new();
    for (name, extension) in parts.extensions {
        match extension {
            Some(extension) if !broken(&JsonPointer::root().key("extensions").key(&name)) => {
                extensions.push(extension);
            }
            _ => unusable.extensions.push(name),
        }
    }
    let mut automations = Vec::new();
    let mut order = Vec::new();
    for read in parts.automations {
        order.push(read.name.clone());
        match read.automation {
            Some(automation)
                if !broken(&JsonPointer::root().key("automations").key(&read.name)) =>
            {
                automations.push(automation);
            }
            _ => unusable.automations.push(UnusableAutomation {
                without_agent: !read.own_agent && parts.default_agent.is_none() && !unusable.agent,
                name: read.name,
                trigger: read.trigger,
            }),
        }
    }
    report.extend(diagnostics);
    let config = Config {
        file: file.to_owned(),
        dir: dir.to_owned(),
        settings: parts.settings,
        extensions,
        automations,
        unusable,
        complete,
        order,
        text: text.to_owned(),
        source_map: document.source_map,
    };
    let (config, partial) = if complete {
        (Some(config), None)
    } else {
        (None, Some(config))
    };
    Loaded {
        config,
        partial,
        report,
    }
}

/// Whether `pointer` is `at` or inside it.
fn within(pointer: &JsonPointer, at: &JsonPointer) -> bool {
    pointer == at
        || pointer
            .as_str()
            .strip_prefix(at.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
}

impl Config {
    /// A diagnostic about this config file at `path`, located by the file's source map
    /// (a pointer that is not in the file, such as a default-filled argument, is
    /// located at its nearest enclosing member).
    pub fn diagnostic(
        &self,
        severity: Severity,
        code: &'static str,
        path: &JsonPointer,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(severity, code, self.file.clone(), path.clone(), message).locate(
            &self.source_map,
            &self.text,
            Anchor::Value,
        )
    }

    /// A diagnostic about `span` (byte range) inside the string value at `path`, when
    /// the file spells that string literally between single quotes or double quotes
    /// without escapes; otherwise about the whole value.
    pub fn diagnostic_in_string(
        &self,
        severity: Severity,
        code: &'static str,
        path: &JsonPointer,
        value: &str,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(severity, code, self.file.clone(), path.clone(), message).locate_in_string(
            &self.source_map,
            &self.text,
            value,
            span,
        )
    }

    /// The text of the config file (for reports that quote it).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The automation called `name`.
    pub fn automation(&self, name: &str) -> Option<&Automation> {
        self.automations.iter().find(|a| a.name == name)
    }

    /// Whether the file has no error (warnings allowed). A [partial](Loaded::partial)
    /// config is not complete, and nothing may run from it.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Every automation whose `trigger` could be read, usable or not, in file order,
    /// with that trigger: what [`crate::resolve`] resolves.
    pub fn triggers(&self) -> Vec<(&str, &TriggerRef)> {
        self.order
            .iter()
            .filter_map(|name| match self.automation(name) {
                Some(automation) => Some((name.as_str(), &automation.trigger)),
                None => self
                    .unusable
                    .automations
                    .iter()
                    .find(|a| &a.name == name)
                    .and_then(|a| a.trigger.as_ref())
                    .map(|trigger| (name.as_str(), trigger)),
            })
            .collect()
    }

    /// The usable automations `names` selects (`run --automation NAME`…), in file
    /// order; every usable automation when `names` is empty. A name that is not in the
    /// config selects nothing: [`Config::check_selection`] reports it.
    pub fn selected(&self, names: &[String]) -> Vec<&Automation> {
        self.automations
            .iter()
            .filter(|a| names.is_empty() || names.contains(&a.name))
            .collect()
    }

    /// An error for the first of `names` that is not an automation of this config,
    /// with a did-you-mean.
    pub fn check_selection(&self, names: &[String]) -> Result<(), UnknownAutomation> {
        match names.iter().find(|name| !self.order.contains(name)) {
            None => Ok(()),
            Some(name) => Err(UnknownAutomation {
                name: name.clone(),
                file: self.file.clone(),
                suggestion: did_you_mean(name, self.order.iter().map(String::as_str))
                    .map(str::to_owned),
                known: self.order.clone(),
            }),
        }
    }

    /// One `config/missing-agent` error for each automation that `names` selects
    /// (every one when `names` is empty), usable or not, that has no agent command, in
    /// file order. An automation whose agent could not be read is not reported again.
    pub fn missing_agents(&self, names: &[String]) -> Vec<Diagnostic> {
        self.order
            .iter()
            .filter(|name| names.is_empty() || names.contains(name))
            .filter(|name| match self.automation(name) {
                Some(automation) => automation.agent.is_none() && !self.unusable.agent,
                None => self
                    .unusable
                    .automations
                    .iter()
                    .any(|a| &a.name == *name && a.without_agent),
            })
            .map(|name| {
                self.diagnostic(
                    Severity::Error,
                    codes::MISSING_AGENT,
                    &JsonPointer::root()
                        .key("automations")
                        .key(name)
                        .key("agent")
                        .key("command"),
                    format!(
                        "automation `{name}` has no agent command: set `command` in \
                         `[settings.agent]` or `agent = {{ command = [...] }}` in the automation"
                    ),
                )
            })
            .collect()
    }
}

/// Walks the parsed TOML and records every problem.
struct Checker<'a> {
    collector: Collector<'a>,
    dir: &'a Path,
}

/// A TOML type name for messages.
fn type_name(value: &TomlValue) -> &'static str {
    match value {
        TomlValue::String(_) => "a string",
        TomlValue::Integer(_) => "an integer",
        TomlValue::Float(_) => "a float",
        TomlValue::Boolean(_) => "a boolean",
        TomlValue::Datetime(_) => "a date-time",
        TomlValue::Array(_) => "an array",
        TomlValue::Table(_) => "a table",
    }
}

/// `[settings.polling]`-shaped values read from one table; `None` where not given.
#[derive(Default)]
struct PollingOverride {
    batch_size: Option<u32>,
    interval_seconds: Option<f64>,
}

/// What [`Checker::config`] read, before the errors decide what is usable.
struct Parts {
    settings: Settings,
    /// `[settings.agent] command`, when it is set and readable.
    default_agent: Option<Vec<String>>,
    /// Every `[extensions.*]` key in file order, with the extension when its source
    /// could be read.
    extensions: Vec<(String, Option<ExtensionConfig>)>,
    /// Every `[automations.*]` key in file order.
    automations: Vec<ReadAutomation>,
}

/// One `[automations.NAME]` as far as it could be read.
struct ReadAutomation {
    name: String,
    trigger: Option<TriggerRef>,
    /// The automation, when its trigger, prompt and arguments could be read.
    automation: Option<Automation>,
    /// Whether it gives an agent command of its own (readable or not).
    own_agent: bool,
}

impl Checker<'_> {
    fn config(&mut self, root: &toml::Table) -> Parts {
        let at = JsonPointer::root();
        self.unknown_keys(root, &at, &["settings", "extensions", "automations"]);

        let empty = toml::Table::new();
        let settings_table = self.table_member(root, &at, "settings").unwrap_or(&empty);
        let (settings, default_polling, default_agent) = self.settings(settings_table);

        let extensions = match self.table_member(root, &at, "extensions") {
            Some(table) => self.extensions(table),
            None => Vec::new(),
        };

        let automations_table = self.table_member(root, &at, "automations");
        let automations = match automations_table {
            Some(table) => self.automations(table, default_polling, default_agent.as_ref()),
            None => Vec::new(),
        };
        if automations_table.is_none_or(toml::Table::is_empty) {
            self.collector.warning(
                codes::NO_AUTOMATIONS,
                &at.key("automations"),
                "the config defines no automation, so `run` has nothing to do; add an \
                 `[automations.NAME]` table",
            );
        }
        Parts {
            settings,
            default_agent,
            extensions,
            automations,
        }
    }

    fn settings(
        &mut self,
        table: &toml::Table,
    ) -> (Settings, PollingOverride, Option<Vec<String>>) {
        let at = JsonPointer::root().key("settings");
        self.unknown_keys(
            table,
            &at,
            &["repository", "polling", "agent", "protocol", "timeouts"],
        );
        let repository = self.string_member(table, &at, "repository", true);
        let polling = match self.table_member(table, &at, "polling") {
            Some(polling) => self.polling(polling, &at.key("polling")),
            None => PollingOverride::default(),
        };
        let agent = match self.table_member(table, &at, "agent") {
            Some(agent) => self.agent(agent, &at.key("agent")),
            None => None,
        };
        let mut max_frame_bytes = curupira_framing::DEFAULT_MAX_BODY;
        if let Some(protocol) = self.table_member(table, &at, "protocol") {
            let at = at.key("protocol");
            self.unknown_keys(protocol, &at, &["max_frame_bytes"]);
            if let Some(value) = protocol.get("max_frame_bytes") {
                let at = at.key("max_frame_bytes");
                match value {
                    TomlValue::Integer(n) if (1..=i64::from(u32::MAX)).contains(n) => {
                        max_frame_bytes = usize::try_from(*n).unwrap_or(usize::MAX);
                    }
                    TomlValue::Integer(n) => self.collector.error(
                        codes::INVALID_VALUE,
                        &at,
                        format!(
                            "`max_frame_bytes` must be from 1 to 4294967295 (what a frame \
                             header can announce), found {n}"
                        ),
                    ),
                    other => self.wrong_type(&at, "an integer", other),
                }
            }
        }
        let mut timeouts = Timeouts::default();
        if let Some(table) = self.table_member(table, &at, "timeouts") {
            let at = at.key("timeouts");
            self.unknown_keys(table, &at, &["initialize", "request", "shutdown"]);
            for (key, slot) in [
                ("initialize", &mut timeouts.initialize),
                ("request", &mut timeouts.request),
                ("shutdown", &mut timeouts.shutdown),
            ] {
                if let Some(seconds) = self.seconds(table, &at, key, false) {
                    *slot = Duration::from_secs_f64(seconds);
                }
            }
        }
        let settings = Settings {
            repository,
            max_frame_bytes,
            timeouts,
        };
        (settings, polling, agent)
    }

    fn polling(&mut self, table: &toml::Table, at: &JsonPointer) -> PollingOverride {
        self.unknown_keys(table, at, &["batch_size", "interval_seconds"]);
        let batch_size = table.get("batch_size").and_then(|value| {
            let at = at.key("batch_size");
            match value {
                TomlValue::Integer(n) if (1..=i64::from(u32::MAX)).contains(n) => {
                    u32::try_from(*n).ok()
                }
                TomlValue::Integer(n) => {
                    self.collector.error(
                        codes::BATCH_SIZE,
                        &at,
                        format!("`batch_size` must be at least 1 (polls per round), found {n}"),
                    );
                    None
                }
                other => {
                    self.wrong_type(&at, "an integer", other);
                    None
                }
            }
        });
        let interval_seconds = self.seconds(table, at, "interval_seconds", true);
        PollingOverride {
            batch_size,
            interval_seconds,
        }
    }

    fn agent(&mut self, table: &toml::Table, at: &JsonPointer) -> Option<Vec<String>> {
        self.unknown_keys(table, at, &["command"]);
        let value = table.get("command")?;
        let at = at.key("command");
        let TomlValue::Array(items) = value else {
            self.wrong_type(&at, "an array of strings", value);
            return None;
        };
        if items.is_empty() {
            self.collector.error(
                codes::INVALID_VALUE,
                &at,
                "the agent `command` is empty: give the program and its arguments, e.g. \
                 [\"my-agent\", \"--print\"]",
            );
            return None;
        }
        let mut command = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match item {
                TomlValue::String(s) => command.push(s.clone()),
                other => self.wrong_type(&at.index(index), "a string", other),
            }
        }
        if command.first().is_some_and(String::is_empty) {
            self.collector.error(
                codes::INVALID_VALUE,
                &at.index(0),
                "the agent program (the first element of `command`) is an empty string",
            );
            return None;
        }
        (command.len() == items.len()).then_some(command)
    }

    fn extensions(&mut self, table: &toml::Table) -> Vec<(String, Option<ExtensionConfig>)> {
        let at = JsonPointer::root().key("extensions");
        let mut extensions = Vec::new();
        for name in self.file_order(table, &at) {
            let Some(value) = table.get(&name) else {
                continue;
            };
            let at = at.key(&name);
            let Some(ext) = self.table(value, &at) else {
                extensions.push((name, None));
                continue;
            };
            if name.is_empty() || name.contains(':') {
                self.collector.push(
                    Severity::Error,
                    codes::INVALID_VALUE,
                    &at,
                    Anchor::Key,
                    format!(
                        "the extension name `{name}` cannot be used: it must be non-empty and \
                         may not contain `:`, which separates `extension:type` in `trigger`"
                    ),
                );
            }
            self.unknown_keys(ext, &at, &["path", "builtin"]);
            let path = self.string_member(ext, &at, "path", true);
            let builtin = self.string_member(ext, &at, "builtin", true);
            let source = match (path, builtin) {
                (Some(_), Some(_)) => {
                    self.collector.error(
                        codes::EXTENSION_CONFLICT,
                        &at.key("builtin"),
                        format!(
                            "extension `{name}` has both `path` and `builtin`; keep exactly one"
                        ),
                    );
                    None
                }
                (None, None) => {
                    if !ext.contains_key("path") && !ext.contains_key("builtin") {
                        self.collector.error(
                            codes::MISSING_KEY,
                            &at.key("path"),
                            format!(
                                "extension `{name}` needs `path = \"folder\"` (a folder with a \
                                 curupira-extension.toml) or `builtin = \"local-queue\"`"
                            ),
                        );
                    }
                    None
                }
                (Some(path), None) => Some(ExtensionSource::Folder(self.dir.join(path))),
                (None, Some(builtin)) => {
                    if BUILTINS.contains(&builtin.as_str()) {
                        Some(ExtensionSource::Builtin(builtin))
                    } else {
                        let hint = did_you_mean(&builtin, BUILTINS.iter().copied())
                            .map(|known| format!("; did you mean `{known}`?"))
                            .unwrap_or_default();
                        self.collector.error(
                            codes::UNKNOWN_BUILTIN,
                            &at.key("builtin"),
                            format!(
                                "`{builtin}` is not an extension built into curupira (known: \
                                 {}){hint}",
                                BUILTINS.join(", ")
                            ),
                        );
                        None
                    }
                }
            };
            let extension = source.map(|source| ExtensionConfig {
                name: name.clone(),
                source,
            });
            extensions.push((name, extension));
        }
        extensions
    }

    fn automations(
        &mut self,
        table: &toml::Table,
        default_polling: PollingOverride,
        default_agent: Option<&Vec<String>>,
    ) -> Vec<ReadAutomation> {
        let at = JsonPointer::root().key("automations");
        let mut automations = Vec::new();
        for name in self.file_order(table, &at) {
            let Some(value) = table.get(&name) else {
                continue;
            };
            let at = at.key(&name);
            let Some(auto) = self.table(value, &at) else {
                automations.push(ReadAutomation {
                    name,
                    trigger: None,
                    automation: None,
                    own_agent: false,
                });
                continue;
            };
            self.unknown_keys(
                auto,
                &at,
                &[
                    "trigger",
                    "prompt",
                    "prompt_file",
                    "arguments",
                    "polling",
                    "agent",
                ],
            );
            let trigger = self.trigger(auto, &at, &name);
            let prompt = self.prompt(auto, &at, &name);
            let arguments = match auto.get("arguments") {
                None => Some(Map::new()),
                Some(TomlValue::Table(arguments)) => {
                    let mut object = Map::new();
                    let mut ok = true;
                    for (key, value) in arguments {
                        match self.json_of(value, &at.key("arguments").key(key)) {
                            Some(json) => {
                                object.insert(key.clone(), json);
                            }
                            None => ok = false,
                        }
                    }
                    ok.then_some(object)
                }
                Some(other) => {
                    self.wrong_type(&at.key("arguments"), "a table", other);
                    None
                }
            };
            let own_polling = match self.table_member(auto, &at, "polling") {
                Some(polling) => self.polling(polling, &at.key("polling")),
                None => PollingOverride::default(),
            };
            let polling = Polling {
                batch_size: own_polling
                    .batch_size
                    .or(default_polling.batch_size)
                    .unwrap_or(DEFAULT_BATCH_SIZE),
                interval: Duration::from_secs_f64(
                    own_polling
                        .interval_seconds
                        .or(default_polling.interval_seconds)
                        .unwrap_or(DEFAULT_INTERVAL_SECONDS),
                ),
            };
            let own_agent = match auto.get("agent") {
                Some(TomlValue::Table(agent)) => agent.contains_key("command"),
                Some(_) => true,
                None => false,
            };
            let agent = match self.table_member(auto, &at, "agent") {
                Some(agent) => self.agent(agent, &at.key("agent")),
                None => None,
            }
            .or_else(|| default_agent.cloned());
            let automation = match (&trigger, prompt, arguments) {
                (Some(trigger), Some((prompt, prompt_file)), Some(arguments)) => Some(Automation {
                    name: name.clone(),
                    trigger: trigger.clone(),
                    prompt,
                    prompt_file,
                    arguments,
                    polling,
                    agent,
                }),
                _ => None,
            };
            automations.push(ReadAutomation {
                name,
                trigger,
                automation,
                own_agent,
            });
        }
        automations
    }

    fn trigger(&mut self, table: &toml::Table, at: &JsonPointer, name: &str) -> Option<TriggerRef> {
        if !table.contains_key("trigger") {
            self.collector.error(
                codes::MISSING_KEY,
                &at.key("trigger"),
                format!(
                    "automation `{name}` needs `trigger`: the trigger type, or \
                     `extension:type` when two extensions offer it"
                ),
            );
            return None;
        }
        let text = self.string_member(table, at, "trigger", true)?;
        let (extension, trigger_type) = match text.split_once(':') {
            Some((extension, trigger_type)) => (Some(extension.to_owned()), trigger_type),
            None => (None, text.as_str()),
        };
        if trigger_type.is_empty() || extension.as_deref() == Some("") {
            self.collector.error(
                codes::INVALID_VALUE,
                &at.key("trigger"),
                format!(
                    "`trigger = \"{text}\"` is not a trigger: write the type (`github-issue`) \
                     or `extension:type` (`acme:github-issue`)"
                ),
            );
            return None;
        }
        Some(TriggerRef {
            extension,
            trigger_type: trigger_type.to_owned(),
        })
    }

    fn prompt(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        name: &str,
    ) -> Option<(String, Option<PathBuf>)> {
        let inline = self.string_member(table, at, "prompt", false);
        let file = self.string_member(table, at, "prompt_file", true);
        match (inline, file) {
            (Some(_), Some(_)) => {
                self.collector.error(
                    codes::PROMPT_CONFLICT,
                    &at.key("prompt_file"),
                    format!(
                        "automation `{name}` has both `prompt` and `prompt_file`; keep exactly one"
                    ),
                );
                None
            }
            (Some(prompt), None) => Some((prompt, None)),
            (None, Some(file)) => {
                let path = self.dir.join(&file);
                match std::fs::read(&path) {
                    Ok(bytes) => match String::from_utf8(bytes) {
                        Ok(text) => Some((text, Some(path))),
                        Err(_) => {
                            self.collector.error(
                                codes::PROMPT_FILE,
                                &at.key("prompt_file"),
                                format!("the prompt file `{}` is not UTF-8 text", path.display()),
                            );
                            None
                        }
                    },
                    Err(error) => {
                        self.collector.error(
                            codes::PROMPT_FILE,
                            &at.key("prompt_file"),
                            format!("cannot read the prompt file `{}`: {error}", path.display()),
                        );
                        None
                    }
                }
            }
            (None, None) => {
                if !table.contains_key("prompt") && !table.contains_key("prompt_file") {
                    self.collector.error(
                        codes::MISSING_KEY,
                        &at.key("prompt"),
                        format!(
                            "automation `{name}` needs a prompt: `prompt = \"…\"` or \
                             `prompt_file = \"file.md\"`"
                        ),
                    );
                }
                None
            }
        }
    }

    /// The TOML value as JSON, or `None` after recording why it cannot be.
    fn json_of(&mut self, value: &TomlValue, at: &JsonPointer) -> Option<Value> {
        Some(match value {
            TomlValue::String(s) => Value::String(s.clone()),
            TomlValue::Integer(n) => Value::from(*n),
            TomlValue::Float(f) => match serde_json::Number::from_f64(*f) {
                Some(number) => Value::Number(number),
                None => {
                    self.collector.error(
                        codes::INVALID_VALUE,
                        at,
                        format!("{f} cannot be sent to the extension: JSON has no NaN or infinity"),
                    );
                    return None;
                }
            },
            TomlValue::Boolean(b) => Value::Bool(*b),
            TomlValue::Datetime(datetime) => Value::String(datetime.to_string()),
            TomlValue::Array(items) => {
                let mut array = Vec::with_capacity(items.len());
                let mut ok = true;
                for (index, item) in items.iter().enumerate() {
                    match self.json_of(item, &at.index(index)) {
                        Some(json) => array.push(json),
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                Value::Array(array)
            }
            TomlValue::Table(table) => {
                let mut object = Map::new();
                let mut ok = true;
                for (key, item) in table {
                    match self.json_of(item, &at.key(key)) {
                        Some(json) => {
                            object.insert(key.clone(), json);
                        }
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                Value::Object(object)
            }
        })
    }

    /// Keys of `table` in the order they appear in the file.
    fn file_order(&self, table: &toml::Table, at: &JsonPointer) -> Vec<String> {
        let map = self.collector.source_map();
        let mut keys: Vec<(usize, String)> = table
            .keys()
            .map(|key| {
                let start = map.get(&at.key(key)).map_or(usize::MAX, |spans| {
                    spans.key.as_ref().unwrap_or(&spans.value).start
                });
                (start, key.clone())
            })
            .collect();
        keys.sort();
        keys.into_iter().map(|(_, key)| key).collect()
    }

    fn unknown_keys(&mut self, table: &toml::Table, at: &JsonPointer, known: &[&str]) {
        let unknown: BTreeSet<&String> = table
            .keys()
            .filter(|key| !known.contains(&key.as_str()))
            .collect();
        for key in unknown {
            let hint = did_you_mean(key, known.iter().copied())
                .map(|known| format!("; did you mean `{known}`?"))
                .unwrap_or_default();
            let place = if at.is_root() {
                "at the top level".to_owned()
            } else {
                format!("in `{}`", dotted(at))
            };
            self.collector.push(
                Severity::Warning,
                codes::UNKNOWN_KEY,
                &at.key(key),
                Anchor::Key,
                format!("unknown key `{key}` {place} is ignored{hint}"),
            );
        }
    }

    fn table<'v>(&mut self, value: &'v TomlValue, at: &JsonPointer) -> Option<&'v toml::Table> {
        match value {
            TomlValue::Table(table) => Some(table),
            other => {
                self.wrong_type(at, "a table", other);
                None
            }
        }
    }

    fn table_member<'v>(
        &mut self,
        table: &'v toml::Table,
        at: &JsonPointer,
        key: &str,
    ) -> Option<&'v toml::Table> {
        let value = table.get(key)?;
        self.table(value, &at.key(key))
    }

    /// A string member; `non_empty` refuses `""`.
    fn string_member(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        key: &str,
        non_empty: bool,
    ) -> Option<String> {
        let value = table.get(key)?;
        let at = at.key(key);
        match value {
            TomlValue::String(s) if non_empty && s.is_empty() => {
                self.collector.error(
                    codes::INVALID_VALUE,
                    &at,
                    format!("`{}` must not be empty", dotted(&at)),
                );
                None
            }
            TomlValue::String(s) => Some(s.clone()),
            other => {
                self.wrong_type(&at, "a string", other);
                None
            }
        }
    }

    /// A number of seconds; `allow_zero` accepts 0.
    fn seconds(
        &mut self,
        table: &toml::Table,
        at: &JsonPointer,
        key: &str,
        allow_zero: bool,
    ) -> Option<f64> {
        let value = table.get(key)?;
        let at = at.key(key);
        #[allow(clippy::cast_precision_loss)]
        let seconds = match value {
            TomlValue::Integer(n) => *n as f64,
            TomlValue::Float(f) => *f,
            other => {
                self.wrong_type(&at, "a number of seconds", other);
                return None;
            }
        };
        let in_range = seconds.is_finite()
            && seconds < 1.0e9
            && (seconds > 0.0 || (allow_zero && seconds == 0.0));
        if !in_range {
            let expected = if allow_zero {
                "at least 0"
            } else {
                "more than 0"
            };
            self.collector.error(
                codes::INVALID_VALUE,
                &at,
                format!(
                    "`{}` must be {expected} seconds (and below 10^9), found {seconds}",
                    dotted(&at)
                ),
            );
            return None;
        }
        Some(seconds)
    }

    fn wrong_type(&mut self, at: &JsonPointer, expected: &str, found: &TomlValue) {
        self.collector.error(
            codes::INVALID_TYPE,
            at,
            format!(
                "`{}` must be {expected}, found {}",
                dotted(at),
                type_name(found)
            ),
        );
    }
}

/// `/settings/timeouts/request` → `settings.timeouts.request` (array indexes in
/// brackets).
fn dotted(at: &JsonPointer) -> String {
    let mut out = String::new();
    for token in at.tokens() {
        if !out.is_empty() && !token.chars().all(|c| c.is_ascii_digit()) {
            out.push('.');
        }
        if token.chars().all(|c| c.is_ascii_digit()) && !out.is_empty() {
            out.push('[');
            out.push_str(&token);
            out.push(']');
        } else {
            out.push_str(&token);
        }
    }
    out
}

#[cfg(test)]
mod tests;
