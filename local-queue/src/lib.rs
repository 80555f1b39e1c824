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
//! // The extension's process uses `LocalQueue::default()`, whose index of hand-outs
//! // is in the working directory; here it goes in the temporary folder.
//! let mut queue = LocalQueue::with_index_in(dir.path());
//! let first = vec![Pair::new("title", "Fix the login bug")];
//! assert_eq!(queue.poll(TRIGGER_TYPE, &arguments)?, Some(first.clone()));
//!
//! // Another process, polling at the same time, skips what this one holds.
//! let mut other = LocalQueue::with_index_in(dir.path());
//! let second = vec![Pair::new("title", "Write docs")];
//! assert_eq!(other.poll(TRIGGER_TYPE, &arguments)?, Some(second.clone()));
//! assert_eq!(other.poll(TRIGGER_TYPE, &arguments)?, None);
//!
//! // A third one, that never polled, finishes the first item: the index says which
//! // done file records it.
//! let mut hook = LocalQueue::with_index_in(dir.path());
//! hook.on_finished(TRIGGER_TYPE, &first)?;
//! let done = std::fs::read_to_string(dir.path().join("tasks.jsonl.done"))?;
//! assert_eq!(done, "{\"title\":\"Fix the login bug\"}\n");
//!
//! // `other` ends without finishing the second item: it is free again.
//! drop((queue, other));
//! let mut later = LocalQueue::with_index_in(dir.path());
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
//! the program's name) at `warn`, so `-q` does not hide them. To a host that
//! announced it reads the count (`capabilities.poll_rejected` in `initialize`, as
//! `curupira` does; never the reference host, which refuses the member), the poll's
//! result carries it too, as `"rejected": n`, and the host's round summary says it
//! (`…, 3 rejected by the trigger`). So that it is not reported again,
//! by this process or a later one, the SHA-256 of its bytes (everything before its
//! `\n`) is appended to a `.rejected` file beside the done file (`done.jsonl.rejected`:
//! one line per rejected line, 64 hex digits, then where it was and why, for people).
//! A line edited into a valid item has other bytes: it is handed out like any other.
//! A line longer than [`MAX_LINE_BYTES`] (16 MiB, the default largest frame) is
//! rejected the same way, and read in pieces that are hashed and dropped, so it never
//! costs more memory than that.
//!
//! # Polling and finishing
//!
//! `trigger/poll` returns the first item of the queue file that is not in
//! `done_path`, not already handed out by this process (so two polls in a row return
//! lines 1 and 2 before either is finished), and not held by another process that is
//! alive (see [below](#every-call-in-any-process)); `null` at the end. A missing queue
//! file hands out nothing (`null`, and a warning on stderr once per process: a producer
//! may make it later); `trigger/validate` accepts one, with a warning, but refuses a
//! `path` that is a folder, a `done_path` that is a folder, and a `done_path` whose
//! folder does not exist. `trigger/validate` writes nothing; its reply is only ok or
//! error, so what it can tell without refusing goes to stderr as warnings, which the
//! host shows: each line that is not a valid item (the first 10, then how many more)
//! and a last line without its newline. A poll that reaches such a last line says so
//! once (it is not an item until its newline is written), so a `run --once` never
//! leaves it out silently.
//!
//! Each poll sees the files as they are at that moment: a line another process
//! appended to the queue, or wrote to the done file, counts from the next poll on. To
//! get there without reading and parsing the files every time, the extension keeps
//! each file's parsed content with a stamp of its metadata (size, modification and
//! change times, device and inode) and the offset it has read up to. An unchanged
//! stamp means an unchanged file; a file that grew (same device and inode, and the 64
//! bytes before the offset still the same) is read only from that offset; anything
//! else is read again from the start. The queue file's stamp is trusted only once its
//! times are a few seconds older than the moment it was taken: a file written within
//! a timestamp tick of being read could change again, to the same size, without its
//! stamp changing, so until then it is read on every poll. (A file system whose clock
//! runs more than those few seconds behind this machine's, such as a skewed network
//! mount, can hide a same-size rewrite for that long.) The done file and the files of
//! the record below are only ever appended to, which changes their size: their stamps
//! are trusted at once, and after this process's own appends to the done file a poll
//! reads only the lines others appended. A program that rewrites a done file in place to the same
//! size within one timestamp tick of the last read is not seen; one that deletes it,
//! or replaces it with another file (a rename over it), is: the path is opened again
//! when it names another file than the one open (on Unix, by device and inode).
//!
//! "In `done_path`" means: the done file has a line with the same pairs in the same
//! order. Identical queue lines are therefore one item, done together.
//!
//! `trigger/onFinished` appends the item to the `done_path` of the queue that handed
//! it out, as one JSON object line (the pairs in order, compact), unless that file
//! records it already. The line is written with a single `write` before the reply, so
//! a crash of this process (SIGKILL included) never loses a line it acknowledged. The
//! line is not forced to the disk one item at a time (that `fdatasync` was most of a
//! no-op task's cost): a power loss or a kernel crash may lose the last lines, whose
//! items are then handed out again (the host's durable ledger, on by default, makes
//! the same choice and still skips them). If the file does not end with a newline
//! (someone else's interrupted write), a newline is written first. A done-file line
//! that is not a valid item matches nothing: it is skipped, with one warning on
//! stderr. `trigger/onStarted` does nothing.
//!
//! The protocol sends only `trigger_type` and `values` with the hooks, so the queue an
//! item came from is found from its pairs: the queue a poll of this process handed it
//! out from (the oldest such hand-out not yet finished); else, through the index
//! below, the first queue that handed it out in this working directory whose done file
//! does not record it yet (an item two queues handed out is recorded in each in turn;
//! when all of them record it, nothing is written); else, for an item no poll here
//! handed out (a host re-dispatching a task it recorded earlier, `curupira tasks
//! retry`, in a working directory without its record), the first queue given to this
//! process (validated or polled), or else named in the index, whose file holds that
//! item. Other values are refused with invalid params (-32602).
//!
//! # Every call in any process
//!
//! A host may start a process for each call, or keep one for a whole run, and several
//! hosts, or several configs of one, may use one queue at the same time. The
//! reference host `curupira` 0.4.0 starts one process for `describe`, one for
//! `trigger/schema` + `trigger/validate`, one per poll cycle (shared by the polls of
//! every automation using the extension), one per `trigger/onStarted` and one per
//! `trigger/onFinished`; `curupira` keeps one `local-queue` process for the whole run.
//! So nothing that matters is kept only in memory: what a poll hands out is written
//! down before it replies. For a queue whose done file is `F/done.jsonl`, polled by a
//! process whose working directory is `W`:
//!
//! | file | what it holds |
//! |---|---|
//! | `F/done.jsonl` | the finished items, one line each |
//! | `F/done.jsonl.rejected` | the queue lines rejected, by hash (above) |
//! | `F/.local-queue/done.jsonl.claims/<pid>-<time>-<n>.jsonl` | one file per process that handed out items of this queue: an item line per hand-out |
//! | `W/.local-queue/index.jsonl` | one line per item and queue the first time a poll in `W` hands it out: `{"task":"<task identity>","path":"<queue file>","done_path":"<done file>"}` |
//!
//! The task identity is the one hosts show, the SHA-256 of the pairs' canonical JSON
//! ([`curupira_task_identity::TaskId`]); the paths are whole (resolved, so any
//! spelling of a path is one queue). Each `.local-queue` folder holds a `.gitignore`
//! of `*`, so Git never sees them. When the done file is in the working directory, as
//! usual, both are the same folder.
//!
//! **Handed out once.** A process's claim file is locked (an exclusive advisory lock:
//! `flock(2)` on Unix, `LockFileEx` on Windows, through the `fs4` crate) for as long as
//! the process lives, and deleted when it ends cleanly; the kernel drops the lock of a
//! process that dies, SIGKILL included. A claim file nobody holds the lock of belongs
//! to a process that ended: its items are free again, and the next poll deletes it. A
//! poll takes the done file's exclusive lock, reads the done file and the claim files
//! of the live processes, picks the first item none of them lists, appends it to its
//! own claim file and to the index, and lets go of the lock: so two processes polling
//! at the same time never pick the same item, and while a process lives, no other
//! hands out what it handed out, until that item's `onFinished` (in any process)
//! records it done — after which nobody hands it out again, in this run or any later
//! one. An item whose process ended without its `onFinished` (shut down, crashed or
//! killed) is handed out again by the next poll.
//!
//! The limit: a hand-out is held as long as the process that polled lives. A host
//! that keeps that process until the task has finished (`curupira`: one process per
//! round, or per run) gets each item once for the whole task. A host that ends it
//! first — the reference host shuts down its poll cycle's process before the task
//! starts — leaves the item free while its agent works, and a poll at that time in
//! another process (the next poll cycle, or another host) hands it out again. The
//! reference host expects that of every extension (its official GitHub triggers hand
//! out the same issues at every cycle): it leaves out, in memory, the items it
//! already has. What local-queue adds there is that a finished item is never handed
//! out again, even by a later run.
//!
//! **Locks are short.** The done file is locked exclusively for one poll's decision
//! and claim, and for one `onFinished`'s append; shared for a dry run's reads. The
//! index is locked exclusively for an append, shared for a read. No lock on them is
//! kept between calls. A lock another program holds is waited for up to 10 seconds,
//! then the call fails (internal error) naming the file. The guarantee needs the
//! advisory locks to work between the processes: on a local file system they do; on
//! a network file system only if it supports them.
//!
//! **Half lines.** Every file is appended to with one `write` of whole lines, under
//! its lock, so two processes never interleave within a line; a line counts once its
//! newline is written. A process killed in the middle of an append (or a full disk)
//! may leave half a line: readers leave a last line without its newline alone, and the
//! next append writes a newline first, so that the half line becomes a line of its own
//! that matches nothing (a done file's, with one warning).
//!
//! **Dry runs.** A poll with `preview: true` (`curupira run --dry-run`) picks items
//! the same way (skipping those live processes hold) and records nothing: no claim,
//! no index line, no `.rejected` line (a bad line is reported, not recorded), no done
//! file made. The process remembers what it showed, so that the dry run's next poll
//! shows the next item.
//!
//! **The working directory.** Hooks find the done file through the index in the
//! working directory, so every process of one host must run in the same one: both
//! hosts do (`curupira` starts built-in extensions in the folder of its
//! `curupira.toml`; the reference host starts every process in its own working
//! directory). The claims are found from the parameters, so hosts in different
//! folders share a queue correctly. The index grows by a line per distinct item and
//! queue handed out, as the done file grows by a line per item finished; a claim file
//! lasts as long as its process.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod arguments;
mod claims;
mod done;
mod index;
mod jsonl;
mod store;
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
