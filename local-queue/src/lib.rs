//! `local-queue`, the trigger extension built into `curupira`: work items from a JSON
//! Lines file, finished ones recorded in another so they are not done twice.
//!
//! It is an ordinary extension written with `curupira-extension-sdk`; it is built into
//! the host only so that a fresh clone can run a real automation with nothing else
//! installed. The host runs it as a separate process, `curupira builtin local-queue`
//! (config: `[extensions.local] builtin = "local-queue"`), which calls [`run`]; the
//! `curupira-local-queue` executable of this crate runs the same code on its own. It
//! offers one trigger type, `jsonl`:
//!
//! ```toml
//! [automations.demo]
//! trigger = "jsonl"
//! arguments = { path = "tasks.jsonl", done_path = "done.jsonl" }
//! ```
//!
//! [`LocalQueue`] is the [`Trigger`](curupira_extension_sdk::Trigger) itself. Driven
//! directly, without the protocol around it:
//!
//! ```
//! use curupira_extension_sdk::{Arguments, Pair, Trigger};
//! use curupira_local_queue::{LocalQueue, TRIGGER_TYPE};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir()?;
//! let tasks = dir.path().join("tasks.jsonl");
//! std::fs::write(&tasks, "{\"title\":\"Fix the login bug\"}\n{\"title\":\"Write docs\"}\n")?;
//! let arguments: Arguments = serde_json::from_value(json!({"path": tasks}))?;
//!
//! let mut queue = LocalQueue::default();
//! let first = vec![Pair::new("title", "Fix the login bug")];
//! assert_eq!(queue.poll(TRIGGER_TYPE, &arguments)?, Some(first.clone()));
//! queue.on_finished(TRIGGER_TYPE, &first)?;
//! let done = std::fs::read_to_string(dir.path().join("tasks.jsonl.done"))?;
//! assert_eq!(done, "{\"title\":\"Fix the login bug\"}\n");
//!
//! // Another process skips what the done file records.
//! let mut later = LocalQueue::default();
//! let second = vec![Pair::new("title", "Write docs")];
//! assert_eq!(later.poll(TRIGGER_TYPE, &arguments)?, Some(second));
//! assert_eq!(later.poll(TRIGGER_TYPE, &arguments)?, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Arguments
//!
//! - `path` (required, non-empty string): the queue, a JSON Lines file.
//! - `done_path` (optional, non-empty string, not equal to `path`): where finished
//!   items are recorded; `path` with `.done` appended when absent (`tasks.jsonl.done`).
//!   Its default depends on `path`, so the schema describes it instead of declaring a
//!   JSON Schema `default`.
//!
//! Relative paths are relative to the extension's working directory; the host starts
//! built-in extensions in the folder of its `curupira.toml`. Unknown members are
//! refused.
//!
//! # The queue file
//!
//! Each non-blank line is a JSON object whose members become the item's pairs, in the
//! order they are written (so `{"b":"1","a":"2"}` and `{"a":"2","b":"1"}` are different
//! items, as they are different tasks). Every member value must be a string, and the
//! members obey the protocol's item rules (`curupira_protocol::check_item`: a name is
//! non-empty, appears once, and is not `repository` or `automation`, which the host
//! provides). A UTF-8 byte order mark before the first line and a `\r`
//! before a line's `\n` are ignored. A line that breaks a rule is an internal error
//! (-32603) naming the file, the 1-based line number and the member; lines before it
//! are still handed out, and every poll that reaches it fails until it is fixed.
//!
//! # Polling and finishing
//!
//! `trigger/poll` returns the first line of the queue file that is neither in
//! `done_path` nor already handed out by this process (so two polls in a row return
//! lines 1 and 2 before either is finished), `null` at the end. A missing queue file is
//! an internal error; a missing done file is an empty one.
//!
//! Each poll sees both files as they are at that moment: a line another process
//! appended to the queue, or wrote to the done file, counts from the next poll on. To
//! get there without reading and parsing both files every time, the extension keeps
//! each file's parsed content with a stamp of its metadata (size, modification and
//! change times, device and inode) and reads the file again only when the stamp
//! differs. A stamp is trusted only once the file's times are a few seconds older than
//! the moment it was taken: a file written within a timestamp tick of being read could
//! change again without its stamp changing, so until then it is read on every poll.
//! (A file system whose clock runs more than those few seconds behind this machine's,
//! such as a skewed network mount, can hide a same-size rewrite for that long; an
//! append always changes the size.)
//!
//! "In `done_path`" means: the done file has a line with the same pairs in the same
//! order. Identical queue lines are therefore one item, done together.
//!
//! `trigger/onFinished` appends the item to its queue's `done_path` as one JSON object
//! line (the pairs in order, compact), written with a single `write` on a file opened
//! for appending and then synced, so a crash never leaves half a line behind our line,
//! and concurrent writers never interleave within one. If the file does not end with a
//! newline (someone else's interrupted write), a newline is written first. A done-file
//! line that is not a valid item matches nothing: it is skipped, with one warning on
//! stderr. `trigger/onFinished` only knows which `done_path` to use for items a poll of
//! this process handed out (the protocol sends no arguments with it); other values are
//! refused with invalid params (-32602). `trigger/onStarted` does nothing.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod arguments;
mod jsonl;
mod snapshot;
mod trigger;

use std::process::ExitCode;

use curupira_extension_sdk::Mode;

pub use trigger::LocalQueue;

/// The extension's name, as in its manifest and in `builtin = "local-queue"`.
pub const NAME: &str = "local-queue";

/// Its only trigger type.
pub const TRIGGER_TYPE: &str = "jsonl";

/// The extension's `curupira-extension.toml`, printed by
/// `curupira builtin local-queue --curupira-print-manifest`.
///
/// `launch` says how to start it from a shell with `curupira` on `PATH`; the host
/// itself starts built-ins with its own executable instead (`std::env::current_exe`),
/// so the two can never be different versions.
pub const MANIFEST: &str = concat!(
    "# The trigger extension built into curupira: `curupira builtin local-queue`.\n",
    "manifest_version = 1\n",
    "name = \"local-queue\"\n",
    "version = \"",
    env!("CARGO_PKG_VERSION"),
    "\"\n",
    "protocol_version = 2\n",
    "runtime = \"native\"\n",
    "kind = \"trigger\"\n",
    "trigger_types = [\"jsonl\"]\n",
    "\n",
    "[launch]\n",
    "type = \"command\"\n",
    "command = \"curupira\"\n",
    "args = [\"builtin\", \"local-queue\"]\n",
);

/// Runs the extension in `mode` on this process's stdin/stdout: prints [`MANIFEST`],
/// or serves a [`LocalQueue`] until the host sends `shutdown` or closes stdin (see
/// [`curupira_extension_sdk::run_as`] for the exit codes).
pub fn run(mode: Mode) -> ExitCode {
    curupira_extension_sdk::run_as(mode, MANIFEST, LocalQueue::default)
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
