//! `local-queue`, the trigger extension built into `curupira`, written with
//! `curupira-extension-sdk`.
//!
//! The host runs it as a separate process, `curupira builtin local-queue` (config:
//! `[extensions.local] builtin = "local-queue"`), so a fresh clone can run a real
//! automation with nothing else installed. It offers one trigger type, `jsonl`:
//!
//! ```toml
//! [automations.demo]
//! trigger = "jsonl"
//! arguments = { path = "tasks.jsonl", done_path = "done.jsonl" }
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

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use curupira_extension_sdk::{
    Arguments, Mode, Pair, Trigger, TriggerDescription, TriggerError, TriggerSchema, ValidateError,
    ValidationError,
};
use curupira_jsonrpc::describe;
use curupira_protocol::{ItemError, check_item};
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

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

/// Runs the extension in `mode` on this process's stdin/stdout (see
/// [`curupira_extension_sdk::run_as`] for the exit codes).
pub fn run(mode: Mode) -> ExitCode {
    curupira_extension_sdk::run_as(mode, MANIFEST, LocalQueue::default)
}

/// How much older than the moment of reading a file's times must be before its stamp
/// is trusted: more than the coarsest common timestamp granularity (2 s on FAT) plus
/// the lag of the kernel's file-time clock.
const SETTLE_TIME: Duration = Duration::from_secs(3);

/// The `jsonl` trigger: what this process has handed out and not yet finished, and
/// the files as last read.
#[derive(Debug, Default)]
pub struct LocalQueue {
    /// Per queue, every item a poll returned (finished or not).
    handed_out: HashMap<Queue, HandedOut>,
    /// Items awaiting `onFinished`, with the queue each came from, oldest first.
    unfinished: HashMap<Vec<Pair>, VecDeque<Queue>>,
    /// Done-file lines already warned about, so a bad line is reported once.
    warned: HashSet<(String, u64)>,
    /// Per queue path, the queue file as last read.
    queue_files: HashMap<String, Snapshot<QueueLines>>,
    /// Per done path, the items the done file recorded when last read.
    done_files: HashMap<String, Snapshot<HashSet<Vec<Pair>>>>,
    /// How many times a file was read and parsed; numbers the snapshots.
    reads: u64,
    /// Added to the clock, so tests can see files from the future.
    #[cfg(test)]
    clock_shift: Duration,
}

/// What one queue handed out.
#[derive(Debug, Default)]
struct HandedOut {
    items: HashSet<Vec<Pair>>,
    /// The queue lines before `cursor.index` are all done or handed out, as long as
    /// neither file was read again since (`cursor.reads`): handed-out items are never
    /// forgotten, so only new file contents can make an earlier line eligible.
    cursor: Cursor,
}

#[derive(Debug, Default, Clone, Copy)]
struct Cursor {
    /// The `read` numbers of the queue and done snapshots the cursor was found in.
    reads: (u64, u64),
    index: usize,
}

/// A file's parsed content, with the stamp of the file it came from.
#[derive(Debug)]
struct Snapshot<T> {
    /// `None`: the file did not exist.
    stamp: Option<Stamp>,
    /// The stamp is old enough that any later change to the file changes it.
    settled: bool,
    /// Which read made this snapshot.
    read: u64,
    value: T,
}

impl<T> Snapshot<T> {
    /// Whether the file, now stamped `stamp`, still holds this content.
    fn is_current(&self, stamp: Option<Stamp>) -> bool {
        self.settled && self.stamp == stamp
    }
}

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    /// Device, inode and status-change time (a rename over the file, or a write whose
    /// modification time was set back, still shows).
    #[cfg(unix)]
    node: (u64, u64, i64, i64),
}

impl Stamp {
    fn of(metadata: &Metadata) -> Stamp {
        Stamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            node: {
                use std::os::unix::fs::MetadataExt;
                (
                    metadata.dev(),
                    metadata.ino(),
                    metadata.ctime(),
                    metadata.ctime_nsec(),
                )
            },
        }
    }

    /// Whether the file's times are at least [`SETTLE_TIME`] older than `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let Some(modified) = self.modified else {
            return false;
        };
        #[cfg(unix)]
        let newest = {
            let (_, _, secs, nanos) = self.node;
            let changed = u64::try_from(secs)
                .ok()
                .zip(u32::try_from(nanos).ok())
                .map(|(secs, nanos)| SystemTime::UNIX_EPOCH + Duration::new(secs, nanos));
            match changed {
                Some(changed) => modified.max(changed),
                None => return false,
            }
        };
        #[cfg(not(unix))]
        let newest = modified;
        newest
            .checked_add(SETTLE_TIME)
            .is_some_and(|settled| settled < now)
    }
}

/// The stamp of the file at `path`; `None` when it does not exist.
fn stamp_of(path: &str) -> io::Result<Option<Stamp>> {
    match std::fs::metadata(path) {
        Ok(metadata) => Ok(Some(Stamp::of(&metadata))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// A queue file's items in line order, up to its first bad line.
#[derive(Debug, Default)]
struct QueueLines {
    items: Vec<Vec<Pair>>,
    /// The error for the first bad line, reached once every item before it is taken.
    bad_line: Option<String>,
}

/// One queue: the two paths exactly as the arguments give them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Queue {
    path: String,
    done_path: String,
}

impl Trigger for LocalQueue {
    fn describe(&self) -> Vec<TriggerDescription> {
        vec![TriggerDescription::new(
            TRIGGER_TYPE,
            "Takes items from a JSON Lines file (one JSON object of string members per line) \
             and records finished ones in another file, so they are not done twice.",
        )]
    }

    fn schema(&self, _trigger_type: &str) -> Result<TriggerSchema, TriggerError> {
        Ok(TriggerSchema {
            schema: arguments_schema(),
            prompt_fields: Vec::new(),
        })
    }

    fn validate(&self, _trigger_type: &str, arguments: &Arguments) -> Result<(), ValidateError> {
        queue_from(arguments)
            .map(drop)
            .map_err(ValidateError::Invalid)
    }

    fn poll(
        &mut self,
        _trigger_type: &str,
        arguments: &Arguments,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        let queue = queue_from(arguments).map_err(|errors| {
            let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
            TriggerError::invalid_params(format!(
                "the arguments do not fit trigger type \"jsonl\": {}",
                listed.join("; ")
            ))
        })?;
        let done_read = self.refresh_done(&queue.done_path)?;
        let queue_read = self.refresh_queue(&queue.path)?;
        let (Some(lines), Some(done)) = (
            self.queue_files.get(&queue.path),
            self.done_files.get(&queue.done_path),
        ) else {
            return Err(TriggerError::internal(
                "local-queue lost track of the files it just read",
            ));
        };
        let handed_out = self.handed_out.entry(queue.clone()).or_default();
        let reads = (queue_read, done_read);
        let start = match handed_out.cursor {
            cursor if cursor.reads == reads => cursor.index,
            _ => 0,
        };
        let eligible = lines
            .value
            .items
            .iter()
            .enumerate()
            .skip(start)
            .find(|(_, pairs)| !done.value.contains(*pairs) && !handed_out.items.contains(*pairs));
        let Some((index, pairs)) = eligible else {
            handed_out.cursor = Cursor {
                reads,
                index: lines.value.items.len(),
            };
            return match &lines.value.bad_line {
                Some(message) => Err(TriggerError::internal(message.clone())),
                None => Ok(None),
            };
        };
        handed_out.cursor = Cursor {
            reads,
            index: index + 1,
        };
        handed_out.items.insert(pairs.clone());
        self.unfinished
            .entry(pairs.clone())
            .or_default()
            .push_back(queue);
        Ok(Some(pairs.clone()))
    }

    fn on_finished(&mut self, _trigger_type: &str, values: &[Pair]) -> Result<(), TriggerError> {
        let Some(queue) = self
            .unfinished
            .get_mut(values)
            .and_then(VecDeque::pop_front)
        else {
            return Err(TriggerError::invalid_params(
                "these values were not handed out by a poll of this process (or were already \
                 finished), so local-queue does not know which `done_path` records them",
            ));
        };
        let line = item_line(values);
        if let Err(err) = append_line(Path::new(&queue.done_path), line.as_bytes()) {
            let message = format!(
                "cannot append the finished item to `{}`: {err}",
                queue.done_path
            );
            if let Some(waiting) = self.unfinished.get_mut(values) {
                waiting.push_front(queue);
            }
            return Err(TriggerError::internal(message));
        }
        if self.unfinished.get(values).is_some_and(VecDeque::is_empty) {
            self.unfinished.remove(values);
        }
        Ok(())
    }
}

impl LocalQueue {
    fn now(&self) -> SystemTime {
        #[cfg(test)]
        return SystemTime::now() + self.clock_shift;
        #[cfg(not(test))]
        SystemTime::now()
    }

    /// Reads the queue file again unless its snapshot is current; the snapshot's read
    /// number.
    fn refresh_queue(&mut self, path: &str) -> Result<u64, TriggerError> {
        let cannot_open = |err: io::Error| {
            TriggerError::internal(format!("cannot open the queue file `{path}`: {err}"))
        };
        let now = self.now();
        let stamp = match stamp_of(path) {
            Ok(Some(stamp)) => stamp,
            Ok(None) => return Err(cannot_open(io::ErrorKind::NotFound.into())),
            Err(err) => return Err(cannot_open(err)),
        };
        if let Some(snapshot) = self.queue_files.get(path)
            && snapshot.is_current(Some(stamp))
        {
            return Ok(snapshot.read);
        }
        let file = File::open(path).map_err(cannot_open)?;
        let value = read_queue(path, file)?;
        self.reads += 1;
        let snapshot = Snapshot {
            stamp: Some(stamp),
            settled: stamp.settled(now),
            read: self.reads,
            value,
        };
        self.queue_files.insert(path.to_owned(), snapshot);
        Ok(self.reads)
    }

    /// Reads the done file again unless its snapshot is current; the snapshot's read
    /// number.
    fn refresh_done(&mut self, done_path: &str) -> Result<u64, TriggerError> {
        let now = self.now();
        let stamp = stamp_of(done_path).map_err(|err| {
            TriggerError::internal(format!("cannot read the done file `{done_path}`: {err}"))
        })?;
        if let Some(snapshot) = self.done_files.get(done_path)
            && snapshot.is_current(stamp)
        {
            return Ok(snapshot.read);
        }
        let value = self.read_done(done_path)?;
        self.reads += 1;
        let snapshot = Snapshot {
            stamp,
            // A missing file is settled: creating it changes the stamp.
            settled: stamp.is_none_or(|stamp| stamp.settled(now)),
            read: self.reads,
            value,
        };
        self.done_files.insert(done_path.to_owned(), snapshot);
        Ok(self.reads)
    }

    /// The items recorded in a done file; a missing file records none.
    fn read_done(&mut self, done_path: &str) -> Result<HashSet<Vec<Pair>>, TriggerError> {
        let cannot_read = |err: io::Error| {
            TriggerError::internal(format!("cannot read the done file `{done_path}`: {err}"))
        };
        let file = match File::open(done_path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(HashSet::new()),
            Err(err) => return Err(cannot_read(err)),
        };
        let mut done = HashSet::new();
        let mut lines = Lines::new(BufReader::new(file));
        while let Some((number, line)) = lines.next_line().map_err(cannot_read)? {
            match parse_line(&line) {
                Ok(Some(pairs)) => {
                    done.insert(pairs);
                }
                Ok(None) => {}
                // A final line without its newline may be a write in progress.
                Err(_) if !line.terminated => {}
                Err(problem) => {
                    if self.warned.insert((done_path.to_owned(), number)) {
                        eprintln!(
                            "{NAME}: warning: `{done_path}` line {number} is skipped: {problem}"
                        );
                    }
                }
            }
        }
        Ok(done)
    }
}

/// The items of a queue file up to its first bad line.
fn read_queue(path: &str, file: File) -> Result<QueueLines, TriggerError> {
    let mut queue = QueueLines::default();
    let mut lines = Lines::new(BufReader::new(file));
    while let Some((number, line)) = lines.next_line().map_err(|err| {
        TriggerError::internal(format!("cannot read the queue file `{path}`: {err}"))
    })? {
        match parse_line(&line) {
            Ok(Some(pairs)) => queue.items.push(pairs),
            Ok(None) => {}
            Err(problem) => {
                queue.bad_line = Some(format!("`{path}` line {number}: {problem}"));
                break;
            }
        }
    }
    Ok(queue)
}

/// The JSON Schema `trigger/schema` reports for the arguments.
fn arguments_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "The queue: a JSON Lines file, one JSON object of string \
                    members per line, each line one item. Relative to the folder of \
                    curupira.toml."
            },
            "done_path": {
                "type": "string",
                "minLength": 1,
                "description": "Where finished items are appended, one JSON object per \
                    line; queue lines found there are not handed out again. Relative to the \
                    folder of curupira.toml. Defaults to `path` with `.done` appended."
            }
        },
        "required": ["path"],
        "additionalProperties": false
    })
}

/// Checks the arguments, reporting every problem; the queue they name when they fit.
fn queue_from(arguments: &Arguments) -> Result<Queue, Vec<ValidationError>> {
    let mut errors = Vec::new();
    let mut string = |name: &str, required: bool| match arguments.get(name) {
        Some(Value::String(s)) if s.is_empty() => {
            errors.push(ValidationError::member(
                name,
                format!("`{name}` must not be empty"),
            ));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            errors.push(ValidationError::member(
                name,
                format!("`{name}` must be a string, found {}", describe(other)),
            ));
            None
        }
        None if required => {
            errors.push(ValidationError::member(
                name,
                format!(
                    "`{name}` is required: the JSON Lines file to take items from, relative \
                     to the folder of curupira.toml"
                ),
            ));
            None
        }
        None => None,
    };
    let path = string("path", true);
    let done_path = string("done_path", false);
    for name in arguments.keys() {
        if name != "path" && name != "done_path" {
            errors.push(ValidationError::member(
                name,
                format!(
                    "unknown member {}; the jsonl trigger takes only `path` and `done_path`",
                    Value::from(name.as_str())
                ),
            ));
        }
    }
    if let (Some(path), Some(done_path)) = (&path, &done_path)
        && path == done_path
    {
        errors.push(ValidationError::member(
            "done_path",
            "`done_path` must differ from `path`, or finished items would be appended to \
                 the queue itself",
        ));
    }
    match path {
        Some(path) if errors.is_empty() => Ok(Queue {
            done_path: done_path.unwrap_or_else(|| format!("{path}.done")),
            path,
        }),
        _ => Err(errors),
    }
}

/// One line of a file, without its `\n` (and `\r`).
struct Line {
    bytes: Vec<u8>,
    /// Whether a `\n` ended it (the last line of a file may lack one).
    terminated: bool,
}

/// Reads lines as bytes, numbering them from 1, so that a line that is not UTF-8 can
/// be reported with its number.
struct Lines<R> {
    reader: R,
    number: u64,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R) -> Self {
        Lines { reader, number: 0 }
    }

    fn next_line(&mut self) -> io::Result<Option<(u64, Line)>> {
        let mut bytes = Vec::new();
        if self.reader.read_until(b'\n', &mut bytes)? == 0 {
            return Ok(None);
        }
        self.number += 1;
        let terminated = bytes.last() == Some(&b'\n');
        if terminated {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        if self.number == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes.drain(..3);
        }
        Ok(Some((self.number, Line { bytes, terminated })))
    }
}

/// What is wrong with a line, as the end of a sentence that starts with where it is.
#[derive(Debug, PartialEq, Eq)]
enum LineProblem {
    NotUtf8,
    NotJson(String),
    NotAnObject(String),
    NotAString {
        member: String,
        found: String,
    },
    /// The members break the protocol's item rules (`pair N` is the Nth member).
    Item(ItemError),
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |name: &str| Value::from(name).to_string();
        match self {
            LineProblem::NotUtf8 => f.write_str("the line is not valid UTF-8"),
            LineProblem::NotJson(reason) => write!(f, "the line is not valid JSON: {reason}"),
            LineProblem::NotAnObject(found) => write!(
                f,
                "the line must be a JSON object of string members, found {found}"
            ),
            LineProblem::NotAString { member, found } => write!(
                f,
                "member {} must be a string, found {found} (item values are strings)",
                quoted(member)
            ),
            LineProblem::Item(error) => error.fmt(f),
        }
    }
}

/// The pairs of one line in member order; `None` for a blank line.
fn parse_line(line: &Line) -> Result<Option<Vec<Pair>>, LineProblem> {
    let text = std::str::from_utf8(&line.bytes).map_err(|_| LineProblem::NotUtf8)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let shape = Shape::deserialize(&mut deserializer)
        .and_then(|shape| deserializer.end().map(|()| shape))
        .map_err(|err| {
            let full = err.to_string();
            let location = format!(" at line {} column {}", err.line(), err.column());
            let reason = full.strip_suffix(&location).unwrap_or(&full);
            LineProblem::NotJson(format!("{reason} at column {}", err.column()))
        })?;
    let members = match shape {
        Shape::Object(members) => members,
        Shape::Other(found) => return Err(LineProblem::NotAnObject(found)),
    };
    let mut pairs = Vec::with_capacity(members.len());
    for (name, value) in members {
        match value {
            Value::String(value) => pairs.push(Pair::new(name, value)),
            other => {
                return Err(LineProblem::NotAString {
                    member: name,
                    found: describe(&other),
                });
            }
        }
    }
    check_item(&pairs).map_err(LineProblem::Item)?;
    Ok(Some(pairs))
}

/// A JSON value read for its shape: an object keeps its members in written order
/// (`serde_json::Map` would sort them unless the build-wide `preserve_order` feature
/// were on).
enum Shape {
    Object(Vec<(String, Value)>),
    /// Anything else, described for a message.
    Other(String),
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry::<String, Value>()? {
            members.push(member);
        }
        Ok(Shape::Object(members))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Other("an array".to_owned()))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other("a string".to_owned()))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Shape, E> {
        Ok(Shape::Other(v.to_string()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Shape, E> {
        Ok(Shape::Other(format!("the number {v}")))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Shape, E> {
        Ok(Shape::Other(format!("the number {v}")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Shape, E> {
        Ok(Shape::Other(format!("the number {v}")))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Other("null".to_owned()))
    }
}

/// The done-file line of an item: a compact JSON object of its pairs in order, with
/// its newline.
fn item_line(pairs: &[Pair]) -> String {
    let members: Vec<String> = pairs
        .iter()
        .map(|pair| {
            format!(
                "{}:{}",
                Value::from(pair.key.as_str()),
                Value::from(pair.value.as_str())
            )
        })
        .collect();
    format!("{{{}}}\n", members.join(","))
}

/// Appends `line` with one `write` (after a newline when the file does not end with
/// one), then syncs the data to disk.
fn append_line(path: &Path, line: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    let mut buffer = Vec::with_capacity(line.len() + 1);
    if file.metadata()?.len() > 0 {
        file.seek(SeekFrom::End(-1))?;
        let mut last = [0u8; 1];
        file.read_exact(&mut last)?;
        if last != *b"\n" {
            buffer.push(b'\n');
        }
    }
    buffer.extend_from_slice(line);
    // One `write` call for a regular file; `write_all` only loops on a short write
    // (a full disk), which then reports its error.
    file.write_all(&buffer)?;
    file.sync_data()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line {
        Line {
            bytes: text.as_bytes().to_vec(),
            terminated: true,
        }
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<Pair> {
        items.iter().map(|&(k, v)| Pair::new(k, v)).collect()
    }

    #[test]
    fn members_keep_their_written_order() {
        assert_eq!(
            parse_line(&line(r#" {"title":"Fix","b":"2","a":"1"} "#)).unwrap(),
            Some(pairs(&[("title", "Fix"), ("b", "2"), ("a", "1")]))
        );
        assert_eq!(parse_line(&line("{}")).unwrap(), Some(vec![]));
        assert_eq!(parse_line(&line("  \t")).unwrap(), None);
        assert_eq!(
            parse_line(&line(r#"{"k":"caf\u00e9 \"q\""}"#)).unwrap(),
            Some(pairs(&[("k", "café \"q\"")]))
        );
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let problem = |text: &str| parse_line(&line(text)).unwrap_err().to_string();
        assert_eq!(
            problem(r#"{"n":5}"#),
            "member \"n\" must be a string, found 5 (item values are strings)"
        );
        assert_eq!(
            problem(r#"{"a":"1","tags":["x"]}"#),
            "member \"tags\" must be a string, found an array (item values are strings)"
        );
        assert_eq!(
            problem(r#"["a"]"#),
            "the line must be a JSON object of string members, found an array"
        );
        assert_eq!(
            problem("\"text\""),
            "the line must be a JSON object of string members, found a string"
        );
        assert_eq!(
            problem("7"),
            "the line must be a JSON object of string members, found the number 7"
        );
        assert_eq!(
            problem(r#"{"a":"1","a":"2"}"#),
            "pair 1 repeats the key \"a\"; a key appears once per item"
        );
        assert_eq!(
            problem(r#"{"repository":"x"}"#),
            "pair 0 has the key \"repository\", which is reserved: the host provides \
             `repository` and `automation` itself"
        );
        assert_eq!(
            problem(r#"{"":"x"}"#),
            "pair 0 has an empty key; item keys are non-empty"
        );
        assert_eq!(
            problem(r#"{"a" "1"}"#),
            "the line is not valid JSON: expected `:` at column 6"
        );
        assert_eq!(
            problem(r#"{"a":"1"} x"#),
            "the line is not valid JSON: trailing characters at column 11"
        );
        let not_utf8 = Line {
            bytes: b"{\"a\":\"\xff\"}".to_vec(),
            terminated: true,
        };
        assert_eq!(parse_line(&not_utf8), Err(LineProblem::NotUtf8));
    }

    #[test]
    fn done_lines_read_back_as_the_same_item() {
        let item = pairs(&[("title", "a \"quoted\"\nline"), ("é", "ü")]);
        let text = item_line(&item);
        assert_eq!(
            text,
            "{\"title\":\"a \\\"quoted\\\"\\nline\",\"é\":\"ü\"}\n"
        );
        assert_eq!(
            parse_line(&line(text.trim_end_matches('\n'))).unwrap(),
            Some(item)
        );
    }

    #[test]
    fn arguments_report_every_problem() {
        let arguments = |value: Value| value.as_object().unwrap().clone();
        let errors = queue_from(&arguments(json!({"done_path": 3, "pth": "x"}))).unwrap_err();
        let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            listed,
            [
                "/path: `path` is required: the JSON Lines file to take items from, relative \
                 to the folder of curupira.toml",
                "/done_path: `done_path` must be a string, found 3",
                "/pth: unknown member \"pth\"; the jsonl trigger takes only `path` and \
                 `done_path`",
            ]
        );
        let errors = queue_from(&arguments(json!({"path": "q", "done_path": "q"}))).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].path, "/done_path");
        let errors = queue_from(&arguments(json!({"path": ""}))).unwrap_err();
        assert_eq!(
            errors,
            [ValidationError::member("path", "`path` must not be empty")]
        );
        assert_eq!(
            queue_from(&arguments(json!({"path": "tasks.jsonl"}))).unwrap(),
            Queue {
                path: "tasks.jsonl".to_owned(),
                done_path: "tasks.jsonl.done".to_owned()
            }
        );
    }

    #[test]
    fn lines_strip_newlines_crs_and_a_leading_bom() {
        let mut lines = Lines::new(&b"\xEF\xBB\xBF{}\r\n\n{\"a\":\"1\"}"[..]);
        let (n, first) = lines.next_line().unwrap().unwrap();
        assert_eq!(
            (n, first.bytes.as_slice(), first.terminated),
            (1, &b"{}"[..], true)
        );
        let (n, second) = lines.next_line().unwrap().unwrap();
        assert_eq!((n, second.bytes.as_slice()), (2, &b""[..]));
        let (n, third) = lines.next_line().unwrap().unwrap();
        assert_eq!((n, third.terminated), (3, false));
        assert!(lines.next_line().unwrap().is_none());
    }

    /// A queue in a fresh folder: `q.jsonl` and `d.jsonl`, written by "another
    /// process" through `std::fs`.
    struct Files {
        dir: tempfile::TempDir,
    }

    impl Files {
        fn new(queue: &str) -> Files {
            let files = Files {
                dir: tempfile::tempdir().unwrap(),
            };
            std::fs::write(files.queue(), queue).unwrap();
            files
        }

        fn queue(&self) -> std::path::PathBuf {
            self.dir.path().join("q.jsonl")
        }

        fn done(&self) -> std::path::PathBuf {
            self.dir.path().join("d.jsonl")
        }

        fn arguments(&self) -> Arguments {
            let value = json!({
                "path": self.queue().to_str().unwrap(),
                "done_path": self.done().to_str().unwrap(),
            });
            value.as_object().unwrap().clone()
        }

        fn append(&self, path: &Path, text: &str) {
            let mut file = OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .unwrap();
            file.write_all(text.as_bytes()).unwrap();
        }
    }

    fn poll(queue: &mut LocalQueue, files: &Files) -> Option<Vec<Pair>> {
        queue.poll(TRIGGER_TYPE, &files.arguments()).unwrap()
    }

    fn item(key: &str) -> Option<Vec<Pair>> {
        Some(pairs(&[("k", key)]))
    }

    #[test]
    fn each_poll_sees_the_files_as_they_are_now() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":\"b\"}\n");
        let mut queue = LocalQueue::default();
        assert_eq!(poll(&mut queue, &files), item("a"));
        // Another process appends to the queue and records `c` as done.
        files.append(&files.queue(), "{\"k\":\"c\"}\n{\"k\":\"d\"}\n");
        files.append(&files.done(), "{\"k\":\"c\"}\n");
        assert_eq!(poll(&mut queue, &files), item("b"));
        assert_eq!(poll(&mut queue, &files), item("d"));
        assert_eq!(poll(&mut queue, &files), None);
        // A rewrite in place to the same size, at once: the file is too fresh for its
        // stamp to be trusted, so it is read again.
        std::fs::write(
            files.queue(),
            "{\"k\":\"a\"}\n{\"k\":\"b\"}\n{\"k\":\"c\"}\n{\"k\":\"e\"}\n",
        )
        .unwrap();
        assert_eq!(poll(&mut queue, &files), item("e"));
        // Our own onFinished grows the done file: the next poll reads it again.
        queue
            .on_finished(TRIGGER_TYPE, &pairs(&[("k", "e")]))
            .unwrap();
        std::fs::write(files.queue(), "{\"k\":\"e\"}\n{\"k\":\"f\"}\n").unwrap();
        let mut other = LocalQueue::default();
        assert_eq!(poll(&mut other, &files), item("f"));
    }

    #[test]
    fn a_settled_file_is_read_again_only_when_its_stamp_changes() {
        let files = Files::new("{\"k\":\"a\"}\n");
        // A fresh file is read on every poll (a missing one only once: creating it
        // changes its stamp).
        let mut fresh = LocalQueue::default();
        assert_eq!(poll(&mut fresh, &files), item("a"));
        assert_eq!(poll(&mut fresh, &files), None);
        assert_eq!(
            fresh.reads, 3,
            "the queue file twice, the missing done file once"
        );

        // Seen an hour later, they are settled: polls only look at the stamps.
        let mut queue = LocalQueue {
            clock_shift: Duration::from_secs(3600),
            ..LocalQueue::default()
        };
        assert_eq!(poll(&mut queue, &files), item("a"));
        assert_eq!(poll(&mut queue, &files), None);
        assert_eq!(poll(&mut queue, &files), None);
        assert_eq!(queue.reads, 2, "each file read once");

        // Replaced by a file of the same size and modification time (an editor saving
        // through a rename): another inode, so another stamp.
        let original = std::fs::metadata(files.queue())
            .unwrap()
            .modified()
            .unwrap();
        let replacement = files.dir.path().join("q.new");
        std::fs::write(&replacement, "{\"k\":\"z\"}\n").unwrap();
        File::options()
            .write(true)
            .open(&replacement)
            .unwrap()
            .set_modified(original)
            .unwrap();
        std::fs::rename(&replacement, files.queue()).unwrap();
        assert_eq!(poll(&mut queue, &files), item("z"));
        assert_eq!(queue.reads, 3);

        // The done file appears: its stamp was "missing".
        files.append(&files.done(), "{\"k\":\"z\"}\n");
        files.append(&files.queue(), "{\"k\":\"y\"}\n");
        assert_eq!(poll(&mut queue, &files), item("y"));
        assert_eq!(queue.reads, 5);
        assert_eq!(poll(&mut queue, &files), None);
        assert_eq!(queue.reads, 5);
    }

    #[test]
    fn a_bad_queue_line_stops_the_scan_until_it_is_fixed() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":1}\n{\"k\":\"c\"}\n");
        let mut queue = LocalQueue {
            clock_shift: Duration::from_secs(3600),
            ..LocalQueue::default()
        };
        assert_eq!(poll(&mut queue, &files), item("a"));
        let message = |queue: &mut LocalQueue| {
            queue
                .poll(TRIGGER_TYPE, &files.arguments())
                .unwrap_err()
                .message()
                .to_owned()
        };
        let expected = format!(
            "`{}` line 2: member \"k\" must be a string, found 1 (item values are strings)",
            files.queue().display()
        );
        assert_eq!(message(&mut queue), expected);
        assert_eq!(
            message(&mut queue),
            expected,
            "every poll that reaches it fails"
        );
        std::fs::write(
            files.queue(),
            "{\"k\":\"a\"}\n{\"k\":\"b\"}\n{\"k\":\"c\"}\n",
        )
        .unwrap();
        assert_eq!(poll(&mut queue, &files), item("b"));
        assert_eq!(poll(&mut queue, &files), item("c"));
        std::fs::remove_file(files.queue()).unwrap();
        assert!(message(&mut queue).starts_with("cannot open the queue file `"));
    }

    #[test]
    fn appending_never_glues_onto_a_partial_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("done.jsonl");
        std::fs::write(&path, "{\"a\":\"1\"}\n{\"half\":").unwrap();
        append_line(&path, b"{\"b\":\"2\"}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":\"1\"}\n{\"half\":\n{\"b\":\"2\"}\n"
        );
        let fresh = dir.path().join("new.jsonl");
        append_line(&fresh, b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "{}\n");
    }
}
