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
//! [`LocalQueue`] is the [`Trigger`](curupira_extension_sdk::Trigger) itself. A host
//! sends the automation's whole table (`configuration` in `trigger/validate`, the
//! normalised copy validate returned as `automation` in `trigger/poll`): the trigger's
//! parameters beside the host's core keys (`trigger_type`, `repository`, `prompt`,
//! …), which the SDK's serve loop leaves out before it calls the trait. Driven
//! directly, without the protocol around it, the queue gets those parameters alone:
//!
//! ```
//! use curupira_extension_sdk::{Configuration, Pair, Trigger};
//! use curupira_local_queue::{LocalQueue, TRIGGER_TYPE};
//! use curupira_protocol::parameters;
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir()?;
//! let tasks = dir.path().join("tasks.jsonl");
//! std::fs::write(&tasks, "{\"title\":\"Fix the login bug\"}\n{\"title\":\"Write docs\"}\n")?;
//! // The automation's table as a host sends it; the trigger's parameters in it.
//! let table: Configuration = serde_json::from_value(json!({
//!     "trigger_type": "local/jsonl", "repository": "demo", "prompt": "Do: ${title}",
//!     "path": tasks,
//! }))?;
//! let arguments = parameters(&table);
//! assert_eq!(arguments.keys().collect::<Vec<_>>(), ["path"]);
//!
//! let mut queue = LocalQueue::default();
//! let first = vec![Pair::new("title", "Fix the login bug")];
//! assert_eq!(queue.poll(TRIGGER_TYPE, &arguments)?, Some(first.clone()));
//! queue.on_finished(TRIGGER_TYPE, &first)?;
//! let done = std::fs::read_to_string(dir.path().join("tasks.jsonl.done"))?;
//! assert_eq!(done, "{\"title\":\"Fix the login bug\"}\n");
//!
//! // Another process skips what the done file records (once this one let go of it:
//! // one process at a time holds a queue's done file).
//! drop(queue);
//! let mut later = LocalQueue::default();
//! let second = vec![Pair::new("title", "Write docs")];
//! assert_eq!(later.poll(TRIGGER_TYPE, &arguments)?, Some(second));
//! assert_eq!(later.poll(TRIGGER_TYPE, &arguments)?, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Parameters
//!
//! - `path` (required, non-empty string): the queue, a JSON Lines file.
//! - `done_path` (optional, non-empty string, not equal to `path`): where finished
//!   items are recorded; `path` with `.done` appended when absent (`tasks.jsonl.done`).
//!   Its default depends on `path`, so the schema describes it instead of declaring a
//!   JSON Schema `default`: the SDK fills the schema's defaults into the table it
//!   returns from `trigger/validate` as the normalised configuration, and this one
//!   leaves that table as it was sent (a `null` default, as the official Python SDK
//!   writes an optional parameter's, would be refused here as not a string).
//!
//! Relative paths are relative to the extension's working directory; the host starts
//! built-in extensions in the folder of its `curupira.toml`. Other parameters are
//! refused (the host's core keys are not parameters: the SDK never passes them on).
//! Refusals are verdicts, `{"ok": false, "error": "…"}`, listing every problem at its
//! JSON Pointer (`trigger "jsonl": /path: `path` must not be empty; /colour: …`).
//!
//! # The queue file
//!
//! Each non-blank line is a JSON object whose members become the item's pairs, in the
//! order they are written (so `{"b":"1","a":"2"}` and `{"a":"2","b":"1"}` are different
//! items, as they are different tasks). Every member value must be a string, and the
//! members obey the protocol's item rules (`curupira_protocol::check_item`: a name is
//! non-empty, appears once, and is not `repository` or `automation`, which the host
//! provides). A UTF-8 byte order mark before the first line and a `\r`
//! before a line's `\n` are ignored.
//!
//! A line counts once its `\n` is written: a last line without one is still being
//! written, so it is neither handed out nor judged until its newline arrives (a
//! program that writes `{"issue":` and a second later `"3"}\n` gets one item). Give the
//! last line of a file written by hand its newline too.
//!
//! A complete line that is not a valid item never blocks the lines after it: when a
//! poll reaches it, it is reported once on stderr, as a `local-queue: warning: …` line
//! with the file, its line number and what is wrong, then skipped, and the lines after
//! it are handed out as usual. A poll that rejected lines ends with one more warning
//! line that counts them (`this poll rejected 3 line(s) of `q.jsonl` (…)`). The
//! `curupira` host logs an extension's stderr lines that start with `warning:` (after
//! the program's name) at `warn`, so `-q` does not hide them. So that it is not reported again,
//! by this process or a later one, the SHA-256 of its bytes (everything before its
//! `\n`) is appended to a `.rejected` file beside the done file (`done.jsonl.rejected`:
//! one line per rejected line, 64 hex digits, then where it was and why, for people).
//! A line edited into a valid item has other bytes: it is handed out like any other.
//! A line longer than [`MAX_LINE_BYTES`] (16 MiB, the default largest frame) is
//! rejected the same way, and read in pieces that are hashed and dropped, so it never
//! costs more memory than that.
//!
//! # One process per queue
//!
//! A queue's done file is held under an exclusive advisory lock (`flock(2)` on Unix,
//! `LockFileEx` on Windows, through the `fs4` crate) from the first `trigger/validate`
//! or `trigger/poll` that names it until the process exits (the kernel releases the
//! lock of a process that dies, so no stale lock survives a crash). The done file is
//! created empty when it does not exist. A second extension process that names the
//! same done file — another config on the same queue, or another host — gets `ok:
//! false` from its `trigger/validate` (at `/done_path`, or `/path` when `done_path` is
//! not given) with a sentence naming the file; its polls fail (-32603). So two
//! hosts cannot both hand out one queue's items. Two automations of one config share
//! the one extension process, and so the lock, and take turns on the queue. Two
//! spellings of one path (`./done.jsonl`, `done.jsonl`) are one lock. `curupira
//! validate` on a config whose queue a running host uses reports that lock.
//!
//! # Polling and finishing
//!
//! `trigger/poll` returns the first item of the queue file that is neither in
//! `done_path` nor already handed out by this process (so two polls in a row return
//! lines 1 and 2 before either is finished), `null` at the end. A missing queue file is
//! an internal error (`the queue file `…` does not exist`); `trigger/validate` accepts
//! one (it may be made before the first poll) but refuses a `path` that is a folder.
//!
//! Each poll sees both files as they are at that moment: a line another process
//! appended to the queue, or wrote to the done file, counts from the next poll on. To
//! get there without reading and parsing both files every time, the extension keeps
//! each file's parsed content with a stamp of its metadata (size, modification and
//! change times, device and inode) and the offset it has read up to. An unchanged
//! stamp means an unchanged file; a file that grew (same device and inode, and the 64
//! bytes before the offset still the same) is read only from that offset; anything
//! else is read again from the start. The queue file's stamp is trusted only once its
//! times are a few seconds older than the moment it was taken: a file written within
//! a timestamp tick of being read could change again, to the same size, without its
//! stamp changing, so until then it is read on every poll. (A file system whose clock
//! runs more than those few seconds behind this machine's, such as a skewed network
//! mount, can hide a same-size rewrite for that long.) The done file is this process's
//! own (it holds the lock): its stamp is trusted at once, so after its own appends a
//! poll reads only the lines appended. Another program that appends to it is seen at
//! the next poll; one that rewrites it in place to the same size within one timestamp
//! tick of the last read is not. A done file replaced by another file (a rename over
//! it) is not seen while this process runs: the lock and the reads are on the file it
//! opened.
//!
//! "In `done_path`" means: the done file has a line with the same pairs in the same
//! order. Identical queue lines are therefore one item, done together.
//!
//! `trigger/onFinished` appends the item to its queue's `done_path` as one JSON object
//! line (the pairs in order, compact), written with a single `write` on the file held
//! open for appending before the reply, so a crash of this process (SIGKILL included)
//! never loses a line it acknowledged nor leaves half a line, and concurrent writers
//! never interleave within one. The line is not forced to the disk one item at a time
//! (that `fdatasync` was most of a no-op task's cost): a power loss or a kernel crash
//! may lose the last lines, whose items are then handed out again (the host's durable
//! ledger, on by default, makes the same choice and still skips them). If the file
//! does not end with a newline (someone else's interrupted write), a newline is written
//! first. A done-file line that is not a valid item matches nothing: it is skipped,
//! with one warning on stderr. The protocol sends only `trigger_type` and `values`
//! with `trigger/onFinished`, so the `done_path` is the one of the queue a poll of this
//! process handed the item out from; for an item it did not hand out (a host
//! re-dispatching a task it recorded earlier, `curupira tasks retry`), the first queue
//! this process was given whose file holds that item; other values are refused with
//! invalid params (-32602). `trigger/onStarted` does nothing.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod arguments;
mod held;
mod jsonl;
mod tracked;
mod trigger;

use std::process::ExitCode;

use curupira_extension_sdk::Mode;

pub use trigger::LocalQueue;

/// The `curupira-extension-sdk` crate, whose `Trigger` trait [`LocalQueue`] implements
/// and whose `Mode` [`run`] takes (and, through it, `serde_json`): re-exported so a
/// user drives a queue with the very version this crate uses, without a dependency of
/// their own.
pub use curupira_extension_sdk;

/// The extension's name, as in its manifest and in `builtin = "local-queue"`.
pub const NAME: &str = "local-queue";

/// Its only trigger type.
pub const TRIGGER_TYPE: &str = "jsonl";

/// The longest queue line handed out, in bytes: the default largest frame
/// (16 MiB), which a poll result carrying the line could not fit in anyway. A longer
/// line is rejected as it is read, without being kept in memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

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
    "runtime = \"executable\"\n",
    "kind = \"trigger\"\n",
    "trigger_types = [\"jsonl\"]\n",
    "\n",
    "[launch]\n",
    "type = \"executable\"\n",
    "program = \"curupira\"\n",
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
