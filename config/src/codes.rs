//! The stable diagnostic codes of `curupira.toml`. [`docs/DIAGNOSTICS.md`](https://example.invalid/curupira/blob/main/docs/DIAGNOSTICS.md)
//! lists the same
//! table for users, in the same order; a test keeps the two in step.

pub use curupira_diagnostics::Code;

curupira_diagnostics::codes! {
    /// The file is not valid TOML.
    SYNTAX = "config/syntax", Error,
        "The file is not valid TOML (one diagnostic per syntax error the parser finds); no other rule is checked.";
    /// The file is not UTF-8.
    ENCODING = "config/encoding", Error,
        "The file is not valid UTF-8; the position is the first invalid byte.";
    /// A key the config format does not define (warning).
    UNKNOWN_KEY = "config/unknown-key", Warning,
        "A key the config format does not define; ignored. Suggests the closest known key when one is close. Keys inside `arguments` belong to the trigger and are never reported.";
    /// A required key is missing.
    MISSING_KEY = "config/missing-key", Error,
        "A required key is missing: `trigger` or the prompt (`prompt` / `prompt_file`) of an automation, the source (`path` / `builtin`) of an extension, `type` or `args` of a `[plugins.NAME]` entry.";
    /// A value has the wrong TOML type.
    INVALID_TYPE = "config/invalid-type", Error,
        "A value has the wrong TOML type (a string where a table is expected, an integer in `command`, a float where a whole number of seconds is expected, …).";
    /// A value has the right type but is not allowed (empty, out of range, …).
    INVALID_VALUE = "config/invalid-value", Error,
        "A value of the right type that is not allowed: an empty string or command, a timeout ≤ 0 or an interval < 0 (seconds, below 10^9), `max_frame_bytes` outside 1..4294967295, a `trigger` with an empty side of `/` or more than one `/`, an extension or plugin name that is empty or contains `/`, an empty `args` in `[plugins.NAME]`, `nan`/`inf` in `arguments`; in `[settings.agent]`, `[settings.workspace]` and their per-automation overrides, a number outside its range (`*_seconds` in whole seconds up to 31536000, one year; `max_concurrent` 1..1000; `retries` 0..1000), `max_retry_backoff_seconds` below `retry_backoff_seconds`, a `mode` or `cleanup` outside its set (with a did-you-mean), a `base` that starts with `-` or holds a control character, an empty hook; an empty `[settings.ledger] path`.";
    /// `batch_size` is below 1.
    BATCH_SIZE = "config/batch-size", Error,
        "`batch_size` (in `[settings.polling]` or an automation's `polling`) is below 1.";
    /// An automation has both `prompt` and `prompt_file`.
    PROMPT_CONFLICT = "config/prompt-conflict", Error,
        "An automation has both `prompt` and `prompt_file`; keep exactly one.";
    /// `prompt_file` cannot be read as UTF-8 text.
    PROMPT_FILE = "config/prompt-file", Error,
        "`prompt_file` cannot be read, or is not UTF-8 text.";
    /// An extension has both `path` and `builtin`.
    EXTENSION_CONFLICT = "config/extension-conflict", Error,
        "An extension has both `path` and `builtin`; keep exactly one.";
    /// `builtin` names no extension built into this host.
    UNKNOWN_BUILTIN = "config/unknown-builtin", Error,
        "`builtin` names no extension built into `curupira` (known: `local-queue`); suggests the closest name.";
    /// `[plugins.NAME] type` is neither `uvx` nor `npx`.
    PLUGIN_TYPE = "config/plugin-type", Error,
        "`[plugins.NAME] type` is neither `uvx` nor `npx`, the only two the reference host accepts (it refuses `executable` and `command` too); suggests the closest one, and for a program run directly, an `[extensions.NAME]` whose manifest says `[launch] type = \"executable\"`.";
    /// A `[plugins.NAME]` has the name of an `[extensions.NAME]`.
    DUPLICATE_NAME = "config/duplicate-name", Error,
        "A `[plugins.NAME]` entry has the name of an `[extensions.NAME]`: both tables share one namespace, since an automation names either as `NAME/type`. Reported at the plugin, which is not used; rename one of them.";
    /// An extension folder has no readable `curupira-extension.toml`.
    MISSING_MANIFEST = "config/missing-manifest", Error,
        "The folder of a `path` extension has no readable `curupira-extension.toml`.";
    /// An automation has no agent command (neither its own nor `[settings.agent]`).
    MISSING_AGENT = "config/missing-agent", Error,
        "An automation has no agent: neither `agent = { command = [...] }` or `agent = { provider = \"...\" }` nor `[settings.agent] command` or `provider`. Not checked by `run --dry-run`, which starts no agent.";
    /// An agent table sets both `provider` and `command`.
    AGENT_CONFLICT = "config/agent-conflict", Error,
        "An agent table (`[settings.agent]` or an automation's `agent`) sets both `provider` and `command`: a provider decides its own command line; `command` is for any other agent. Reported at `provider`.";
    /// A provider's CLI version the reference host refuses.
    AGENT_VERSION = "config/agent-version", Error,
        "A provider's CLI has a version the reference host refuses: an `opencode` whose `--version` shows no `x.y.z`, or a 0.x one, with `api = \"auto\"` (the default); set `api = \"v1\"` or `\"v2\"`. Checked by `validate` and `run` before the first poll.";
    /// A provider's CLI version could not be read.
    AGENT_VERSION_UNKNOWN = "config/agent-version-unknown", Warning,
        "A provider's CLI (other than OpenCode) shows no `x.y.z` in its `--version`, or that could not be run within 10 s: the command line is the one curupira 0.4.0 uses, which this version may not take.";
    /// A provider option its CLI would ignore.
    PROVIDER_OPTION_IGNORED = "config/provider-option-ignored", Warning,
        "A provider option the CLI would ignore as written: OpenCode 2.x's `effort` without a `model` (the variant belongs in `--model provider/model#variant`).";
    /// A provider option is wrong for its provider.
    PROVIDER_OPTION = "config/provider-option", Error,
        "A provider option (`model`, `effort`, `agent`, permission options) is of the wrong kind, not taken by the provider, or breaks one of its rules (Kilo's `provider/model`, pi's `model_provider` without `model`, a Copilot tool with a comma, OpenCode's `api`); the message is the reference host's where it has one. A warning when the CLI would ignore it (OpenCode 2.x's `effort` without `model`).";
    /// An automation's agent program cannot be run.
    AGENT_NOT_RUNNABLE = "config/agent-not-runnable", Error,
        "An automation's agent program is not an executable file: not found on `PATH`, or (a path with `/`) not found relative to the config's folder, or not executable. Checked by `validate` and `run` before the first poll, so no item is handed over to an agent that cannot start; not by `run --dry-run`.";
    /// A worktree-mode automation, but no Git repository to make worktrees of.
    WORKTREE_UNAVAILABLE = "config/worktree-unavailable", Error,
        "An automation runs its agents in Git worktrees (`[settings.workspace] mode = \"worktree\"`), but `git` cannot run or the config's folder is not inside a Git work tree. Checked by `validate` and `run` for worktree-mode automations only; reported once, at the `mode` key that chose worktrees.";
    /// A worktree-mode automation's `base` names no commit of the repository.
    UNKNOWN_BASE = "config/unknown-base", Error,
        "A worktree-mode automation's `base` (default `HEAD`) does not name a commit of the config's repository: a misspelt branch, tag or commit, or a repository with no commit yet. Checked by `validate`; `run` fails the automation before its first poll for the same reason.";
    /// The durable ledger exists but cannot be opened.
    LEDGER_UNREADABLE = "config/ledger-unreadable", Error,
        "The durable ledger (`[settings.ledger] path`, default `.curupira/ledger.sqlite`) exists but would not open: it is damaged or not an SQLite database, another program's database, written by a newer `curupira`, a folder, or unreadable. `run` refuses to start on it (exit 2) with the same sentence; `validate` reads it without writing. Not checked when the ledger is disabled or the file does not exist yet (a run creates it).";
    /// Several agents at once in one shared folder.
    SHARED_WORKSPACE = "config/shared-workspace", Warning,
        "An automation may run several agents at once (`max_concurrent` above 1) in the shared workspace, so they work in the same folder; use `mode = \"worktree\"` to give each task its own.";
    /// `trigger = "ext:type"`, the spelling `/` replaced.
    COLON_TRIGGER = "config/colon-trigger", Error,
        "`trigger = \"ext:type\"`: `:` no longer separates the extension from the trigger type; the message suggests `ext/type`, the reference host's `alias/local` form.";
    /// No extension offers the automation's trigger type.
    UNKNOWN_TRIGGER = "config/unknown-trigger", Error,
        "No configured extension offers the automation's trigger type, or the extension named in `NAME/type` does not offer it. Lists what is offered (as `NAME/type`) and suggests the closest.";
    /// Several extensions offer the trigger type and `trigger` does not say which.
    AMBIGUOUS_TRIGGER = "config/ambiguous-trigger", Error,
        "Several extensions offer the bare trigger type; the message names them and the `NAME/type` forms to choose with.";
    /// `trigger = "NAME/type"` names an extension that is not configured.
    UNKNOWN_EXTENSION = "config/unknown-extension", Error,
        "`trigger = \"NAME/type\"` names neither an `[extensions.NAME]` nor a `[plugins.NAME]`; suggests the closest name.";
    /// The config defines no automation (warning).
    NO_AUTOMATIONS = "config/no-automations", Warning,
        "The config defines no automation, so `run` has nothing to do.";
    /// The prompt uses `${repository}` and no repository is known.
    REPOSITORY = "config/repository", Error,
        "`validate` only: the prompt uses `${repository}`, `settings.repository` is not set, and the config's folder has no Git remote `origin` to derive it from. (`run` fails that automation alone, with -32003.)";
    /// An extension failed while being started, initialized, described or shut down.
    EXTENSION_FAILED = "config/extension-failed", Error,
        "`validate` and `plugins list`: an extension could not be started, answered `initialize`/`describe` wrongly, did not shut down cleanly, or could not print its manifest. Also `run`: a `[plugins.NAME]` entry, which has no manifest, is asked `describe` in a process of its own before anything else, and its failure stops the run before it starts. Reported once per extension, at `/extensions/NAME` or `/plugins/NAME`; the message is the protocol error (extension, method, code).";
    /// `trigger/schema` or `trigger/validate` failed for a reason other than rejection.
    TRIGGER_FAILED = "config/trigger-failed", Error,
        "`validate` only: `trigger/schema` or `trigger/validate` failed for another reason than a rejection (an error reply, a broken result, a timeout).";
    /// `trigger/validate` rejected the automation's configuration.
    TRIGGER_REJECTED = "config/trigger-rejected", Error,
        "`validate` only: `trigger/validate` rejected the automation (`{\"ok\": false, \"error\": …}`, or a -32003 error reply); the message is the extension's own sentence, at `/automations/NAME/arguments`, or one diagnostic per listed error (an `errors` list beside `ok: false`, or a -32003 reply's `data.errors`) at that pointer followed by the error's own. (`run` fails that automation alone with the same sentence, and exits 1.)";
    /// An `arguments` key named like a key the host itself sends (warning).
    CORE_KEY_ARGUMENT = "config/core-key-argument", Warning,
        "An automation's `arguments` has a key the host sends itself in every `trigger/validate` configuration (`trigger_type`, `repository`, `prompt`, `profile`, `checkout`): the extension never sees the argument, only the host's value; rename it.";
    /// `describe` and the manifest's `trigger_types` disagree (warning).
    DESCRIBE_MISMATCH = "config/describe-mismatch", Warning,
        "`validate` only: the trigger types `describe` lists differ from the manifest's `trigger_types` (for a `[plugins.NAME]` entry: from what its first `describe` listed).";
    /// A prompt placeholder that no prompt field and no host variable fills (warning).
    UNKNOWN_PLACEHOLDER = "config/unknown-placeholder", Warning,
        "`validate` only: a prompt placeholder that no prompt field of the trigger and no host variable (`repository`, `automation`) fills, so it would stay as written; suggests the closest field. Located at the placeholder, in the config or in the prompt file. When the trigger lists no prompt fields (it cannot know its fields in advance, like `local-queue`), only a placeholder close to a host variable is reported (`${automaton}`: did you mean `${automation}`?).";
    /// An automation mixes the two forms (`trigger` and `trigger_type`).
    FORM_CONFLICT = "config/form-conflict", Error,
        "An automation has both `trigger` (this host's form, with `arguments`) and `trigger_type` (the reference host's form, whose other keys are the trigger's parameters); keep the one of the form the file is in.";
    /// A reference-form automation without `trigger_type` (warning).
    REFERENCE_DEFAULT = "config/reference-default", Warning,
        "An automation of a file in the reference form has no `trigger_type`, so it takes the reference host's default, `plugins-py/github-issues`, which needs a `[plugins.plugins-py]` registration; write `trigger_type` to say which trigger it is.";
    /// A key of the reference form that the reference host ignores or reads differently (warning).
    REFERENCE_KEY = "config/reference-key", Warning,
        "A key of the reference form that the reference host accepts without using it, or in a way this host does not follow: `otlp_endpoint`, `max_pending_tasks`, `state_db_path`, `[assistant]`, `[environment]`, a profile option its provider does not take, a `checkout` other than `\"main\"`, a relative `workspace_dir` or `path`, a `setup_script` with spaces, a `batch_size` outside 1..1000, a `max_active_tasks` of 0 or above 1000. The message says what this host does with it.";
    /// A profile the reference host accepts but whose tasks it fails (warning).
    PROFILE_FAILS = "config/profile-fails", Warning,
        "An agent profile of the reference form that the reference host accepts at `validate` and fails each task of at dispatch (a Gemini profile with `effort`, a `model` that is not a string): `validate` says so; `run` refuses the automations that use it before anything starts.";
    /// A reference-form name with characters the reference refuses.
    INVALID_NAME = "config/invalid-name", Error,
        "In a file of the reference form, an automation, repository or plugin name that is empty or has a character other than ASCII letters, digits, `_` and `-`, which the reference host refuses.";
    /// A reference-form automation names a repository or profile that is not defined.
    UNKNOWN_REFERENCE = "config/unknown-reference", Error,
        "An automation's `repository` names no `[repositories.ALIAS]`, or its `profile` (or `[agents.defaults] profile`) no `[agents.profiles.NAME]`; suggests the closest name.";
    /// A `cron` automation's schedule, time zone or window does not read.
    SCHEDULE = "config/schedule", Error,
        "A `cron` automation (`trigger_type = \"cron\"`, or `trigger = \"cron\"`) without `schedule`, or whose `schedule` is not five cron fields the `cron` crate reads (the reference host's words: `schedule must be a valid five-field cron expression`), whose `timezone` (or `[agents.defaults] timezone`) is not an IANA name, or whose `start_date` / `end_date` is neither `YYYY-MM-DD` nor an RFC 3339 date-time with an offset (the reference host accepts such a date at `validate` and refuses it at `run`).";
    /// A `cron` schedule numbers its days of the week (warning).
    CRON_WEEKDAY = "config/cron-weekday", Warning,
        "A `cron` schedule's day-of-week field uses numbers, which count from 1 = Sunday to 7 = Saturday (the `cron` crate's rule, and so the reference host's), not crontab's 0 or 7 = Sunday, 1 = Monday; the names `MON`–`SUN` say the same thing plainly.";
    /// A `cron` window in which no tick is ever due (warning).
    CRON_WINDOW = "config/cron-window", Warning,
        "A `cron` automation's `start_date` is after its `end_date`, or it has no `start_date` and its `end_date` has passed: it dispatches nothing (unless a host saw it before its window ended).";
    /// The prompt of a reference-form automation is not a Jinja template that compiles.
    TEMPLATE = "config/template", Error,
        "The prompt of an automation in the reference form is not a Jinja template that compiles, or uses a variable that is neither a prompt field of the trigger nor `automation` or `repository` (the reference host refuses both at `validate`); located at the error in the prompt.";

}
