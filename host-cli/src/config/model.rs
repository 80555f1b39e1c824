//! The typed config: what `curupira.toml` means once checked, with its defaults. Only
//! types and their small accessors live here; [`super::check`] fills them and
//! [`super::query`] answers questions about them.

use std::path::PathBuf;
use std::time::Duration;

use curupira_diagnostics::SourceMap;
use serde_json::{Map, Value};

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
    /// The parts of a [partial](super::Loaded::partial) config that could not be read (all
    /// empty in a complete one).
    pub unusable: Unusable,
    /// Whether the file has no error (warnings allowed): only a complete config runs.
    pub(super) complete: bool,
    /// Every `[automations.*]` key, usable or not, in file order.
    pub(super) order: Vec<String>,
    /// The file's text, for locating diagnostics.
    pub(super) text: String,
    /// Pointer → spans of the file's text.
    pub(super) source_map: SourceMap,
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

/// `[settings.timeouts]`, in the config's own model (read from seconds);
/// [`Settings::client_options`] turns it into the client's.
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

impl Config {
    /// The text of the config file (for reports that quote it).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The automation called `name`.
    pub fn automation(&self, name: &str) -> Option<&Automation> {
        self.automations.iter().find(|a| a.name == name)
    }

    /// Whether the file has no error (warnings allowed). A
    /// [partial](super::Loaded::partial) config is not complete, and nothing may run
    /// from it.
    pub fn is_complete(&self) -> bool {
        self.complete
    }
}
