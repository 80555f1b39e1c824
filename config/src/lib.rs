//! The Curupira host's configuration file, typed and checked so that every problem is
//! reported in one pass with a stable code, a JSON Pointer, a line and a column.
//!
//! ```
//! let loaded = curupira_config::check_bytes(
//!     b"[settings.agent]\ncommand = [\"my-agent\"]\n\n\
//!       [automations.fix]\ntrigger = \"acme/issue\"\nprompt = \"Fix ${title}\"\nbatch = 3\n",
//!     "curupira.toml",
//!     std::path::Path::new("/srv/repo"),
//! );
//! let config = loaded.config.expect("no error, one warning");
//! assert_eq!(config.automations[0].prompt, "Fix ${title}");
//! let warning = &loaded.report.diagnostics()[0];
//! assert_eq!(warning.code, "config/unknown-key");
//! assert_eq!(warning.path.as_str(), "/automations/fix/batch");
//! ```
//!
//! The whole form, every key:
//!
//! ```toml
//! [settings]
//! repository = "github.com/acme/widgets"   # optional; else `git remote get-url origin`
//! [settings.polling]
//! batch_size = 10                # polls per round, default 100 (the reference's)
//! interval_seconds = 60          # pause between rounds when running continuously
//! [settings.agent]
//! command = ["my-agent", "--print"]
//! max_concurrent = 4             # agents at once, all automations together; default 1
//! timeout_seconds = 3600         # per agent run, wall clock; default none
//! stall_seconds = 600            # silence on stdout and stderr; default none
//! kill_grace_seconds = 10        # SIGTERM, then SIGKILL after this
//! retries = 2                    # attempts after a failed first one; default 0
//! retry_backoff_seconds = 10     # first pause, doubling…
//! max_retry_backoff_seconds = 300 # …up to this
//! [settings.workspace]
//! mode = "worktree"              # or "shared" (the default: the config's folder)
//! root = ".curupira/worktrees"   # relative to the config's folder
//! base = "main"                  # default: HEAD when the run started
//! cleanup = "on-success"         # or "always", "never"
//! hook_timeout_seconds = 60
//! hooks = { after_create = "npm ci", before_remove = "git status --short" }
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
//! [plugins.gh]                   # the reference host's registration: no manifest
//! type = "uvx"                   # or "npx"; run as `uvx ARGS…` in the host's own directory
//! args = ["--from", "curupira-plugins", "curupira-plugins"]
//!
//! [automations.fix-bugs]
//! trigger = "github-issue"       # or "acme/github-issue", "gh/github-issues"
//! prompt = "Fix issue #${issue_number} in ${repository}."   # or prompt_file = "fix.md"
//! arguments = { labels = ["bug"] }
//! polling = { batch_size = 3 }
//! agent = { command = ["other-agent"], max_concurrent = 2, timeout_seconds = 1800 }
//! workspace = { cleanup = "always", hooks = { before_run = "make setup" } }
//! ```
//!
//! # Decisions where the specification is silent
//!
//! - **Paths** (`extensions.*.path`, `prompt_file`, the workspace `root`) are relative
//!   to the folder of the config file, whatever the current directory is. That folder
//!   is also the working directory of every `[extensions.*]` extension, and of the
//!   agent in the `shared` workspace mode.
//! - **`[plugins.NAME]`** is the reference host's registration, read as it reads it so
//!   that one file means the same to both hosts: `type` is `uvx` or `npx`
//!   (`config/plugin-type` for anything else, `executable` included, with a
//!   did-you-mean), `args` a non-empty array of strings, both required. The host runs
//!   `uvx ARGS…` / `npx ARGS…` verbatim (no flag added) in **its own working
//!   directory**, not the config's folder, as the reference host does: relative paths
//!   in `args` start there. Such an entry has no manifest; the host learns its
//!   trigger types from `describe`.
//! - **Names.** The keys of `[extensions]` and `[plugins]` share one namespace (the
//!   same name in both is `config/duplicate-name`, reported at the plugin); a name is
//!   non-empty and may not contain `/`.
//! - **`trigger`** is a local trigger type (`github-issue`), valid when exactly one
//!   extension offers it, or `NAME/type` (the reference host's `alias/local`), valid
//!   always. The old `extension:type` is `config/colon-trigger`, whose message gives
//!   the `/` spelling.
//! - **Numbers.** `batch_size` is an integer ≥ 1 (`config/batch-size`).
//!   `interval_seconds` and the timeouts are seconds, integer or fractional
//!   (`0.5`); timeouts must be > 0, the interval ≥ 0. `max_frame_bytes` is an integer
//!   from 1 to 4294967295 (what the 8 hex digits of a header can announce).
//! - **Agent and workspace durations** (`*_seconds` in `[settings.agent]` and
//!   `[settings.workspace]`) are whole seconds, at most [`MAX_SECONDS`] (one year): a
//!   float is `config/invalid-type`, a value out of range `config/invalid-value`.
//!   `max_concurrent` is 1 to [`MAX_CONCURRENT_LIMIT`], `retries` 0 to
//!   [`MAX_RETRIES`].
//! - **Overrides.** An automation's `agent = { … }` and `workspace = { … }` override
//!   `[settings.agent]` and `[settings.workspace]` key by key (`hooks` one hook at a
//!   time), giving each automation its [`AgentPolicy`] and [`WorkspacePolicy`]. Its
//!   `max_concurrent` is a cap for that automation under the global limit
//!   ([`Config::global_max_concurrent`]). `max_retry_backoff_seconds` may not be below
//!   `retry_backoff_seconds`; unwritten, it is 300 or `retry_backoff_seconds` when that
//!   is longer.
//! - **Order.** Automations keep the order in which they appear in the file; `run`
//!   prepares and polls them in that order.
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
//! the host's to check; this crate only reads the file and the prompt files, and
//! touches nothing else on the machine.
//!
//! # The reference form
//!
//! The same model is read from the reference host's `settings.toml` (`curupira`
//! 0.4.0): a file with `[repositories]` or `[agents]`, an automation with
//! `trigger_type`, or a file called `settings.toml` with nothing of this host's form
//! in it, is in that form ([`Config::form`]). There, `[repositories]`, `[agents]` and
//! `[automations]` are required, as the reference requires them; an automation's
//! `trigger_type` is `alias/type` (a bare type is refused, as there; absent, it is
//! the reference's default `plugins-py/github-issues`, with a warning), its agent is
//! its `profile`'s (else `[agents.defaults] profile`'s), and every key of its table
//! but `trigger_type`, `repository` and `prompt` is a parameter of the trigger, passed
//! as the reference passes it. `max_active_tasks` is `[settings.agent]
//! max_concurrent`, `task_timeout_minutes` its `timeout_seconds` (0: none),
//! `poll_interval_seconds` `interval_seconds` (default 30): writing both spellings of
//! one meaning is `config/form-conflict`. What the reference refuses at `validate` is
//! an error here; what it accepts and ignores (unknown keys, `otlp_endpoint`,
//! `max_pending_tasks`, `[assistant]`, `[environment]`, a profile option its provider
//! does not take, …) is a warning that says what this host does with it, so that the
//! verdict on a file stays the reference's (`recordings/reference-host/validate.json`
//! is the test). An automation with `trigger` is in this host's form wherever it is;
//! one with both `trigger` and `trigger_type` is refused. The reference form's paths
//! take `~` from `$HOME` ([`check_bytes_at_home`] to say otherwise).
//!
//! A file with errors still gives a [partial](Loaded::partial) config: the settings
//! (defaults where a value is wrong) and the extensions and automations with no error
//! in their own table, plus what is known of the others ([`Unusable`]), so that
//! resolution and `validate`'s live checks report their problems in the same pass.
//!
//! # Layout
//!
//! By stage, as the file is read: [`codes`] (what can be reported), `model` (the typed
//! config and its defaults), `check` (TOML → model and diagnostics), `query` (what
//! a host asks of a checked config), and, with the `schema` feature, [`schema`] (the
//! file's JSON Schema and its Markdown reference). The TOML message helpers (`dotted`,
//! `type_name`, `unknown_keys`) are shared with the manifest validator through
//! `curupira_diagnostics::toml`.

use std::path::{Path, PathBuf};

use curupira_diagnostics::{Report, decode_utf8};

mod check;
pub mod codes;
mod model;
mod query;
#[cfg(feature = "schema")]
pub mod schema;

pub use check::{
    DEFAULT_POLL_INTERVAL_SECONDS, DEFAULT_TRIGGER_TYPE, DEFAULT_WORKSPACE_DIR, REFERENCE_FILE_NAME,
};
pub use model::{
    AgentPolicy, Automation, BUILTINS, Checkout, Cleanup, Config, DEFAULT_BATCH_SIZE,
    DEFAULT_HISTORY_DAYS, DEFAULT_HISTORY_PER_TASK, DEFAULT_HOOK_TIMEOUT_SECONDS,
    DEFAULT_INITIALIZE_TIMEOUT, DEFAULT_INTERVAL_SECONDS, DEFAULT_KILL_GRACE_SECONDS,
    DEFAULT_LEDGER_PATH, DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_RETRY_BACKOFF_SECONDS,
    DEFAULT_REQUEST_TIMEOUT, DEFAULT_RETRY_BACKOFF_SECONDS, DEFAULT_SHUTDOWN_TIMEOUT,
    DEFAULT_WORKTREE_ROOT, ExtensionConfig, ExtensionSource, FILE_NAME, Form, Hooks,
    LedgerSettings, LogLevel, MAX_BATCH_SIZE, MAX_CONCURRENT_LIMIT, MAX_HISTORY_DAYS,
    MAX_HISTORY_PER_TASK, MAX_RETRIES, MAX_SECONDS, PluginType, Polling, ProcessMode,
    ProviderAgent, ReferenceSettings, Repository, Settings, Timeouts, TriggerRef, Unfilled,
    Unusable, UnusableAutomation, WorkspaceMode, WorkspacePolicy, reference_identity,
};
pub use model::{
    DEFAULT_IDLE_NOTICE_SECONDS, DEFAULT_LOG_MAX_BYTES, MAX_LOG_MAX_BYTES, MIN_LOG_MAX_BYTES,
    REFERENCE_LEDGER_PATH,
};
pub use query::{UnknownAutomation, settings_key};

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
/// relative paths start from. `~` in the reference form's paths is `$HOME`.
pub fn check_bytes(bytes: &[u8], file: &str, dir: &Path) -> Loaded {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    check_bytes_at_home(bytes, file, dir, home.as_deref())
}

/// [`check_bytes`] with the folder `~` names given (`None`: the current folder).
pub fn check_bytes_at_home(bytes: &[u8], file: &str, dir: &Path, home: Option<&Path>) -> Loaded {
    let text = match decode_utf8(bytes, file, codes::ENCODING) {
        Ok(text) => text,
        Err(report) => {
            return Loaded {
                config: None,
                partial: None,
                report,
            };
        }
    };
    let mut report = Report::new();
    report.add_source(file, text);
    let (config, diagnostics) = check::check(text, file, dir, home);
    report.extend(diagnostics);
    let (config, partial) = match config {
        Some(config) if config.is_complete() => (Some(config), None),
        partial => (None, partial),
    };
    Loaded {
        config,
        partial,
        report,
    }
}

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod tests;

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
