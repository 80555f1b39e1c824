//! [`LocalQueue`], the `jsonl` trigger: which line a poll hands out, and where a
//! finished item is recorded.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
#[cfg(test)]
use std::time::Duration;
use std::time::SystemTime;

use curupira_extension_sdk::{
    Arguments, Pair, PollContext, Trigger, TriggerDescription, TriggerError, TriggerSchema,
    ValidateError, ValidationError,
};
use curupira_task_identity::TaskId;

use crate::arguments::{self, Queue, queue_from};
use crate::done::{DoneFile, DoneFiles};
use crate::index::Index;
#[cfg(test)]
use crate::jsonl::hex;
use crate::jsonl::{Line, LineHash, item_line, parse_line};
use crate::store::{Access, StoreError, resolved};
use crate::tracked::{Content, Tracked, Trust, stamp_of};
use crate::{MAX_LINE_BYTES, NAME, TRIGGER_TYPE};
#[cfg(test)]
use sha2::{Digest, Sha256};

/// The `jsonl` trigger: what this process handed out and has not seen finished, the
/// queues it was given, and the files as last read.
///
/// What it hands out is also recorded on disk, so that other processes on the same
/// queue (at the same time, or later for the hooks) know it: see the crate docs.
#[derive(Debug)]
pub struct LocalQueue {
    /// Per queue, where its polls got to (what they handed out is in its done file's
    /// [`Claims`](crate::claims::Claims)).
    handed_out: HashMap<Queue, HandedOut>,
    /// Per queue, every item a dry-run poll returned (`preview`): kept in memory only,
    /// so that the dry run's next poll goes on to the next item.
    previewed: HashMap<Queue, HandedOut>,
    /// Items awaiting `onFinished`, with the queue each came from, oldest first.
    unfinished: HashMap<Vec<Pair>, VecDeque<Queue>>,
    /// The queues validated or polled, in the order first given (`validate` is called
    /// through `&self`, hence the mutex).
    given: Mutex<Vec<Queue>>,
    /// The done files of those queues, with their claims.
    done_files: DoneFiles,
    /// Per queue, its paths resolved as the index records them; `None` when they are
    /// not UTF-8 (such a queue's hand-outs are not indexed).
    places: HashMap<Queue, Option<Queue>>,
    /// Which queue handed out what, for hooks in processes that never polled.
    index: Index,
    /// Per queue path, the queue file as last read.
    queue_files: HashMap<String, Tracked<QueueLines>>,
    /// The most bytes a line may have; longer ones are rejected unread.
    max_line_bytes: usize,
    /// Lines rejected by polls since the serve loop last asked
    /// ([`Trigger::take_rejected`]).
    rejected: u64,
    /// What this process said on stderr once, not at every poll: a queue file that
    /// does not exist (its path), a last line without its newline (path, line).
    said: Mutex<std::collections::HashSet<(String, u64)>>,
    /// Added to the clock, so tests can see files from the future.
    #[cfg(test)]
    clock_shift: Duration,
}

impl Default for LocalQueue {
    /// A queue whose index of hand-outs is in the working directory
    /// (`./.local-queue/index.jsonl`), as the extension's process uses it.
    fn default() -> Self {
        LocalQueue::with_index_in(".")
    }
}

impl LocalQueue {
    /// A queue whose index of hand-outs (which queue handed out an item, for a hook
    /// that carries only its pairs) is kept in `folder/.local-queue/index.jsonl`
    /// instead of the working directory's. Every process that may receive the hooks
    /// of one another's polls must use the same folder.
    pub fn with_index_in(folder: impl Into<PathBuf>) -> Self {
        LocalQueue {
            handed_out: HashMap::new(),
            previewed: HashMap::new(),
            unfinished: HashMap::new(),
            given: Mutex::default(),
            done_files: DoneFiles::default(),
            places: HashMap::new(),
            index: Index::new(folder.into()),
            queue_files: HashMap::new(),
            max_line_bytes: MAX_LINE_BYTES,
            rejected: 0,
            said: Mutex::default(),
            #[cfg(test)]
            clock_shift: Duration::ZERO,
        }
    }
}

/// What one queue's polls got to; for a dry run, also what they showed.
#[derive(Debug, Default)]
struct HandedOut {
    /// What dry-run polls showed (empty for real ones, whose hand-outs are claims).
    items: HashSet<Vec<Pair>>,
    /// The queue lines before `cursor.index` are all done, handed out (or shown) by
    /// this process, or rejected, as long as neither file was read from its start
    /// again since (`cursor.generations`): those items are never forgotten and a file
    /// read from where it stopped only grows, so only a file read anew can make an
    /// earlier line eligible. An item another process holds stops the cursor: it comes
    /// back when that process ends.
    cursor: Cursor,
}

#[derive(Debug, Default, Clone, Copy)]
struct Cursor {
    /// The generations of the queue and done contents the cursor was found in.
    generations: (u64, u64),
    index: usize,
}

/// A queue file's lines in order: items, and lines that are not.
#[derive(Debug, Default)]
struct QueueLines {
    entries: Vec<Entry>,
}

#[derive(Debug)]
enum Entry {
    Item(Vec<Pair>),
    /// A complete line that is not a valid item: skipped, reported once.
    Bad {
        number: u64,
        hash: LineHash,
        problem: String,
    },
}

impl Content for QueueLines {
    fn add(&mut self, line: Line, cap: usize) {
        match parse_line(&line, cap) {
            Ok(Some(pairs)) => self.entries.push(Entry::Item(pairs)),
            Ok(None) => {}
            Err(problem) => self.entries.push(Entry::Bad {
                number: line.number,
                hash: line.hash(),
                problem: problem.to_string(),
            }),
        }
    }
}

/// The most bad lines `trigger/validate` names one by one; past it, how many more.
const NAMED_LINES: usize = 10;

/// What `trigger/validate` says of the queue file without refusing the automation
/// (its reply is only ok or error): warnings on stderr, which the host shows, that
/// the file does not exist yet (a producer may write it later), that a line is not a
/// valid item (a poll rejects it; not one recorded already in `<done_path>.rejected`,
/// which was said when it was recorded: later runs stay quiet about it), and that the
/// last line has no newline yet. Reads, writes nothing.
fn warn_about_lines(path: &str, done_path: &str, cap: usize) {
    let recorded: std::collections::HashSet<String> =
        std::fs::read_to_string(format!("{done_path}.rejected"))
            .map(|text| {
                text.lines()
                    .filter_map(|line| line.split(' ').next())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            eprintln!(
                "{NAME}: warning: the queue file `{path}` does not exist yet: the \
                 automation hands out nothing until it is made"
            );
            return;
        }
        Err(err) => {
            eprintln!("{NAME}: warning: cannot read the queue file `{path}`: {err}");
            return;
        }
    };
    let mut lines = crate::jsonl::Lines::new(io::BufReader::new(file), 1, cap);
    let mut bad = 0_usize;
    loop {
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(err) => {
                eprintln!("{NAME}: warning: cannot read the queue file `{path}`: {err}");
                break;
            }
        };
        if !line.terminated {
            eprintln!(
                "{NAME}: warning: line {} of `{path}` has no newline yet: it is not an item \
                 until its newline is written",
                line.number
            );
            break;
        }
        if let Err(problem) = parse_line(&line, cap) {
            if recorded.contains(&crate::jsonl::hex(&line.hash())) {
                continue;
            }
            bad += 1;
            if bad <= NAMED_LINES {
                eprintln!(
                    "{NAME}: warning: line {} of `{path}` is not a valid item, and a poll \
                     rejects it: {problem}",
                    line.number
                );
            }
        }
    }
    if bad > NAMED_LINES {
        eprintln!(
            "{NAME}: warning: {} more line(s) of `{path}` are not valid items",
            bad - NAMED_LINES
        );
    }
}

/// A failure to read or write the record, as the reply's internal error.
fn internal(err: StoreError) -> TriggerError {
    TriggerError::internal(err.to_string())
}

impl Trigger for LocalQueue {
    fn describe(&self) -> Vec<TriggerDescription> {
        // The keys of an item are whatever its line has: none are known in advance.
        vec![
            TriggerDescription::new(TRIGGER_TYPE, [""; 0]).with_description(
                "Takes items from a JSON Lines file (one JSON object of string members per \
                 line) and records finished ones in another file, so they are not done twice.",
            ),
        ]
    }

    fn schema(&self, _trigger_type: &str) -> Result<TriggerSchema, TriggerError> {
        Ok(TriggerSchema {
            schema: arguments::schema(),
            prompt_fields: Vec::new(),
        })
    }

    /// Checks the arguments and that the files can be what they must: the queue and
    /// the done file are not folders, the done file's folder exists. Writes nothing.
    fn validate(&self, _trigger_type: &str, arguments: &Arguments) -> Result<(), ValidateError> {
        let queue = queue_from(arguments).map_err(ValidateError::Invalid)?;
        let mut problems = Vec::new();
        // A queue file yet to be made is fine (it is waited for); a folder never will be.
        if Path::new(&queue.path).is_dir() {
            problems.push(ValidationError::member(
                "path",
                format!("the queue file `{}` is a folder, not a file", queue.path),
            ));
        }
        let member = if arguments.contains_key("done_path") {
            "done_path"
        } else {
            "path"
        };
        let done = Path::new(&queue.done_path);
        let folder = done
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if done.is_dir() {
            problems.push(ValidationError::member(
                member,
                format!(
                    "the done file `{}` is a folder, not a file",
                    queue.done_path
                ),
            ));
        } else if !folder.is_dir() {
            problems.push(ValidationError::member(
                member,
                format!(
                    "the done file `{}` cannot be made: its folder `{}` does not exist",
                    queue.done_path,
                    folder.display()
                ),
            ));
        }
        if !problems.is_empty() {
            return Err(ValidateError::Invalid(problems));
        }
        warn_about_lines(&queue.path, &queue.done_path, self.max_line_bytes);
        self.remember(&queue);
        Ok(())
    }

    fn poll(
        &mut self,
        trigger_type: &str,
        arguments: &Arguments,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        self.poll_in(trigger_type, arguments, PollContext::default())
    }

    /// The next item that is neither done, nor handed out by this process, nor held
    /// by another live process; recorded as handed out unless `context.preview` (a
    /// dry run records nothing).
    fn poll_in(
        &mut self,
        _trigger_type: &str,
        arguments: &Arguments,
        context: PollContext,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        let queue = queue_from(arguments).map_err(|errors| {
            let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
            TriggerError::invalid_params(format!(
                "the parameters do not fit trigger type \"jsonl\": {}",
                listed.join("; ")
            ))
        })?;
        self.remember(&queue);
        let preview = context.preview;
        let now = self.now();
        let cap = self.max_line_bytes;
        let Some(queue_generation) = self.refresh_queue(&queue.path, now)? else {
            // Nothing to hand out yet: a producer may make the file later.
            self.say_once(
                (queue.path.clone(), 0),
                &format!(
                    "the queue file `{}` does not exist (yet): nothing to hand out until \
                     it is made",
                    queue.path
                ),
            );
            return Ok(None);
        };
        self.forget_said(&queue.path, 0);
        let place = self.place_of(&queue);

        let done = self.done_files.get(&queue.done_path);
        // A poll decides under the exclusive lock, so that two processes never pick
        // the same item; a dry run only reads, and makes no done file.
        let access = if preview {
            Access::Shared
        } else {
            Access::Exclusive
        };
        let _locked = done.lock(access, !preview).map_err(internal)?;
        let done_generation = done.refresh(now, cap).map_err(internal)?;
        done.claims.refresh(now, cap, !preview).map_err(internal)?;
        let Some(lines) = self.queue_files.get(&queue.path) else {
            return Err(TriggerError::internal(
                "local-queue lost track of the queue file it just read",
            ));
        };
        let mine = self.handed_out.entry(queue.clone()).or_default();
        let mut shown = preview.then(|| self.previewed.entry(queue.clone()).or_default());
        let generations = (queue_generation, done_generation);
        let cursor = shown.as_ref().map_or(mine.cursor, |shown| shown.cursor);
        let start = if cursor.generations == generations {
            cursor.index
        } else {
            0
        };
        let mut found = None;
        let mut held_from = None;
        let mut rejected_now = 0_usize;
        for (index, entry) in lines.value.entries.iter().enumerate().skip(start) {
            match entry {
                Entry::Item(pairs) => {
                    if done.done.value.items.contains(pairs)
                        || done.claims.is_mine(pairs)
                        || shown
                            .as_ref()
                            .is_some_and(|shown| shown.items.contains(pairs))
                    {
                        continue;
                    }
                    if done.claims.held_by_others(pairs) {
                        held_from.get_or_insert(index);
                        continue;
                    }
                    found = Some((index, pairs));
                    break;
                }
                Entry::Bad {
                    number,
                    hash,
                    problem,
                } => {
                    if done.was_rejected(hash, preview, now, cap) {
                        continue;
                    }
                    rejected_now += 1;
                    report_rejected(done, &queue.path, *number, *hash, problem, preview);
                }
            }
        }
        self.rejected += rejected_now as u64;
        if rejected_now > 0 {
            let recorded = if preview {
                "not recorded: a dry run records nothing".to_owned()
            } else {
                format!(
                    "{} in all recorded in `{}`",
                    done.rejected_count(),
                    done.rejected_path()
                )
            };
            eprintln!(
                "{NAME}: warning: this poll rejected {rejected_now} line(s) of `{}` ({recorded})",
                queue.path
            );
        }
        let tail = if found.is_none() {
            lines.unterminated_tail()
        } else {
            None
        };
        let next = found.map_or(lines.value.entries.len(), |(index, _)| index + 1);
        let cursor = Cursor {
            generations,
            index: held_from.unwrap_or(next),
        };
        let Some((_, pairs)) = found else {
            match shown {
                Some(shown) => shown.cursor = cursor,
                None => mine.cursor = cursor,
            }
            if let Some((line, bytes)) = tail {
                // Never silently left out (a `run --once` would end without it).
                self.say_once(
                    (queue.path.clone(), line),
                    &format!(
                        "line {line} of `{}` ({bytes} bytes) has no newline yet: it is not an \
                         item until its newline is written, and is handed out then",
                        queue.path
                    ),
                );
            }
            return Ok(None);
        };
        let pairs = pairs.clone();
        if let Some(shown) = shown.as_mut() {
            shown.cursor = cursor;
            shown.items.insert(pairs.clone());
            return Ok(Some(pairs));
        }
        // Recorded before the reply: the index first (for the hooks; harmless should
        // the claim fail), then the claim (for the other processes on this queue).
        let line = item_line(&pairs);
        match place {
            Some(place) => self
                .index
                .record(TaskId::of_pairs(&pairs), &place, now, cap)
                .map_err(internal)?,
            None => eprintln!(
                "{NAME}: warning: the paths of `{}` are not UTF-8, so the item is not indexed: \
                 its `trigger/onFinished` must come to this process",
                queue.path
            ),
        }
        done.claims
            .claim(&pairs, line.as_bytes())
            .map_err(internal)?;
        mine.cursor = cursor;
        self.unfinished
            .entry(pairs.clone())
            .or_default()
            .push_back(queue);
        Ok(Some(pairs))
    }

    /// Appends the item to the done file of the queue that handed it out: this
    /// process's poll, else the index's record, else a queue given to this process
    /// (or named in the index) whose file holds the item.
    /// The lines the polls since the last call rejected (each also named on stderr
    /// and, outside a dry run, recorded in the `.rejected` file).
    fn take_rejected(&mut self) -> u64 {
        std::mem::take(&mut self.rejected)
    }

    fn on_finished(&mut self, _trigger_type: &str, values: &[Pair]) -> Result<(), TriggerError> {
        if let Some(queue) = self
            .unfinished
            .get_mut(values)
            .and_then(VecDeque::pop_front)
        {
            if let Err(err) = self.record_done(&queue, values) {
                self.unfinished
                    .entry(values.to_vec())
                    .or_default()
                    .push_front(queue);
                return Err(err);
            }
            if self.unfinished.get(values).is_some_and(VecDeque::is_empty) {
                self.unfinished.remove(values);
            }
            return Ok(());
        }
        let now = self.now();
        let (handed_by, named) = self
            .index
            .lookup(&TaskId::of_pairs(values), now, self.max_line_bytes)
            .map_err(internal)?;
        if !handed_by.is_empty() {
            // Handed out by several queues (one line in two queue files): the first
            // whose done file does not record it yet records it.
            for queue in &handed_by {
                if self.record_done(queue, values)? {
                    break;
                }
            }
            return Ok(());
        }
        match self.queue_holding(values, &named) {
            Some(queue) => self.record_done(&queue, values).map(|_| ()),
            None => Err(TriggerError::invalid_params(
                "these values were not handed out by a poll of local-queue in this working \
                 directory (no record of them in `.local-queue/index.jsonl`) and are not an \
                 item of any queue it knows, so local-queue does not know which `done_path` \
                 records them",
            )),
        }
    }
}

/// Reports a rejected queue line on stderr, and records it (not in a dry run).
fn report_rejected(
    done: &mut DoneFile,
    path: &str,
    number: u64,
    hash: LineHash,
    problem: &str,
    preview: bool,
) {
    let note = format!("`{path}` line {number}: {problem}");
    let recorded = done.reject(hash, &note, !preview);
    let whereto = match recorded {
        Ok(()) if preview => "not recorded: a dry run records nothing".to_owned(),
        Ok(()) => format!(
            "recorded in `{}`, so it is not reported again",
            done.rejected_path()
        ),
        Err(problem) => problem,
    };
    eprintln!("{NAME}: warning: {note}; the line is skipped ({whereto})");
}

impl LocalQueue {
    /// Notes a queue as given to this process (validated or polled).
    fn remember(&self, queue: &Queue) {
        let mut given = self.given.lock().unwrap_or_else(PoisonError::into_inner);
        if !given.contains(queue) {
            given.push(queue.clone());
        }
    }

    /// The queue's paths resolved, as the index records them.
    fn place_of(&mut self, queue: &Queue) -> Option<Queue> {
        self.places
            .entry(queue.clone())
            .or_insert_with(|| {
                let path = resolved(&queue.path).to_str()?.to_owned();
                let done_path = resolved(&queue.done_path).to_str()?.to_owned();
                Some(Queue { path, done_path })
            })
            .clone()
    }

    /// Appends the item to the queue's done file, under its lock, unless the file
    /// records it already; whether it appended.
    fn record_done(&mut self, queue: &Queue, values: &[Pair]) -> Result<bool, TriggerError> {
        let now = self.now();
        let cap = self.max_line_bytes;
        let done = self.done_files.get(&queue.done_path);
        let _locked = done.lock(Access::Exclusive, true).map_err(internal)?;
        done.refresh(now, cap).map_err(internal)?;
        if done.done.value.items.contains(values) {
            return Ok(false);
        }
        done.append(item_line(values).as_bytes(), cap)
            .map_err(|err| {
                TriggerError::internal(format!(
                    "cannot record the finished item in `{}`: {err}",
                    queue.done_path
                ))
            })?;
        Ok(true)
    }

    /// For an item no poll handed out (a host re-dispatching a task it recorded
    /// earlier, e.g. `curupira tasks retry`, with no index to say where it came from):
    /// the first queue given to this process (validated or polled), else named in the
    /// index, whose file holds an item with exactly these values.
    fn queue_holding(&mut self, values: &[Pair], named: &[Queue]) -> Option<Queue> {
        let mut queues = self
            .given
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for queue in named {
            if !queues.contains(queue) {
                queues.push(queue.clone());
            }
        }
        let now = self.now();
        queues.into_iter().find(|queue| {
            // A queue that cannot be read holds nothing to finish.
            self.refresh_queue(&queue.path, now).is_ok()
                && self.queue_files.get(&queue.path).is_some_and(|lines| {
                    lines
                        .value
                        .entries
                        .iter()
                        .any(|entry| matches!(entry, Entry::Item(pairs) if pairs == values))
                })
        })
    }

    fn now(&self) -> SystemTime {
        #[cfg(test)]
        return SystemTime::now() + self.clock_shift;
        #[cfg(not(test))]
        SystemTime::now()
    }

    /// Says `message` on stderr as a warning, once per `key` in this process.
    fn say_once(&self, key: (String, u64), message: &str) {
        let mut said = self
            .said
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if said.insert(key) {
            eprintln!("{NAME}: warning: {message}");
        }
    }

    /// What was said of `path` at `line` may be said again (the cause went away).
    fn forget_said(&self, path: &str, line: u64) {
        let mut said = self
            .said
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        said.remove(&(path.to_owned(), line));
    }

    /// Reads what the queue file holds beyond its last read (all of it when it was
    /// rewritten, or may have been); the generation of its content; `None` when the
    /// file does not exist.
    fn refresh_queue(&mut self, path: &str, now: SystemTime) -> Result<Option<u64>, TriggerError> {
        let cannot_open = |err: io::Error| {
            TriggerError::internal(format!("cannot open the queue file `{path}`: {err}"))
        };
        let stamp = match stamp_of(path) {
            Ok(Some(stamp)) => stamp,
            Ok(None) => {
                if let Some(tracked) = self.queue_files.get_mut(path) {
                    tracked.clear();
                }
                return Ok(None);
            }
            Err(err) => return Err(cannot_open(err)),
        };
        let tracked = self.queue_files.entry(path.to_owned()).or_default();
        if tracked.needs_read(stamp, Trust::Settled) {
            let file = File::open(path).map_err(cannot_open)?;
            tracked
                .read(&file, stamp, now, self.max_line_bytes)
                .map_err(|err| {
                    TriggerError::internal(format!("cannot read the queue file `{path}`: {err}"))
                })?;
        }
        Ok(Some(tracked.generation()))
    }
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    use std::io::Write;
    use std::path::Path;

    use serde_json::json;

    use super::*;

    fn pairs(items: &[(&str, &str)]) -> Vec<Pair> {
        items.iter().map(|&(k, v)| Pair::new(k, v)).collect()
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

        /// A queue whose index is in the folder too (so that it stays out of the
        /// crate's folder, the tests' working directory).
        fn local_queue(&self) -> LocalQueue {
            LocalQueue::with_index_in(self.dir.path())
        }

        /// [`local_queue`](Self::local_queue), seeing the files an hour from now.
        fn settled(&self) -> LocalQueue {
            LocalQueue {
                clock_shift: Duration::from_secs(3600),
                ..self.local_queue()
            }
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

    /// How many times the queue file and the done file were read, and how many of
    /// those reads started over from the first byte.
    fn reads(queue: &mut LocalQueue, files: &Files) -> [u64; 4] {
        let path = files.queue().to_str().unwrap().to_owned();
        let done_path = files.done().to_str().unwrap().to_owned();
        let tracked = &queue.queue_files[&path];
        let (queue_reads, queue_anew) = (tracked.reads(), tracked.generation());
        let done = queue.done_files.get_mut(&done_path).unwrap();
        [
            queue_reads,
            queue_anew,
            done.done.reads(),
            done.done.generation(),
        ]
    }

    #[test]
    fn an_item_of_a_given_queue_finishes_though_this_process_did_not_hand_it_out() {
        // A host re-dispatching a task it recorded in an earlier run (`tasks retry`):
        // this process validated the queue but never polled the item.
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":\"b\"}\n");
        let mut queue = files.settled();
        queue.validate(TRIGGER_TYPE, &files.arguments()).unwrap();
        queue
            .on_finished(TRIGGER_TYPE, &pairs(&[("k", "b")]))
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(files.done()).unwrap(),
            "{\"k\":\"b\"}\n"
        );
        // It counts as handed out: the next poll gives `a`, then nothing.
        assert_eq!(poll(&mut queue, &files), item("a"));
        assert_eq!(poll(&mut queue, &files), None);
        // Values that are no item of any queue it was given are still refused.
        let err = queue
            .on_finished(TRIGGER_TYPE, &pairs(&[("k", "zzz")]))
            .unwrap_err();
        assert!(
            format!("{err:?}").contains("not an item of any queue"),
            "{err:?}"
        );
    }

    #[test]
    fn each_poll_sees_the_files_as_they_are_now() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":\"b\"}\n");
        let mut queue = files.local_queue();
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
        // Our own onFinished grows the done file: the next poll reads what it added.
        queue
            .on_finished(TRIGGER_TYPE, &pairs(&[("k", "e")]))
            .unwrap();
        std::fs::write(files.queue(), "{\"k\":\"e\"}\n{\"k\":\"f\"}\n").unwrap();
        assert_eq!(poll(&mut queue, &files), item("f"));
        // Another process (once this one let go of the done file) skips `e` too.
        drop(queue);
        let mut other = files.local_queue();
        assert_eq!(poll(&mut other, &files), item("f"));
    }

    #[test]
    fn a_settled_file_is_read_again_only_when_its_stamp_changes() {
        let files = Files::new("{\"k\":\"a\"}\n");
        // A fresh queue file is read on every poll; the done file (created empty by
        // the lock) only when it changes, since this process is its only writer.
        let mut fresh = files.local_queue();
        assert_eq!(poll(&mut fresh, &files), item("a"));
        assert_eq!(poll(&mut fresh, &files), None);
        assert_eq!(reads(&mut fresh, &files), [2, 2, 1, 1]);
        drop(fresh);

        // Seen an hour later, they are settled: polls only look at the stamps.
        let mut queue = files.settled();
        assert_eq!(poll(&mut queue, &files), item("a"));
        assert_eq!(poll(&mut queue, &files), None);
        assert_eq!(poll(&mut queue, &files), None);
        assert_eq!(
            reads(&mut queue, &files),
            [1, 1, 1, 1],
            "each file read once"
        );

        // Replaced by a file of the same size and modification time (an editor saving
        // through a rename): another inode, so another stamp, read from the start.
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
        assert_eq!(reads(&mut queue, &files), [2, 2, 1, 1]);

        // Appends are read from where the last read stopped.
        files.append(&files.done(), "{\"k\":\"z\"}\n");
        files.append(&files.queue(), "{\"k\":\"y\"}\n");
        assert_eq!(poll(&mut queue, &files), item("y"));
        assert_eq!(reads(&mut queue, &files), [3, 2, 2, 1]);
        assert_eq!(poll(&mut queue, &files), None);
        assert_eq!(reads(&mut queue, &files), [3, 2, 2, 1]);
    }

    #[test]
    fn own_appends_are_taken_in_without_reading_the_done_file() {
        let text: String = (0..200).map(|n| format!("{{\"k\":\"{n}\"}}\n")).collect();
        let files = Files::new(&text);
        let mut queue = files.settled();
        for n in 0..200 {
            let next = poll(&mut queue, &files).unwrap();
            assert_eq!(next, pairs(&[("k", &n.to_string())]));
            queue.on_finished(TRIGGER_TYPE, &next).unwrap();
        }
        assert_eq!(poll(&mut queue, &files), None);
        let [_, _, done_reads, done_anew] = reads(&mut queue, &files);
        assert_eq!(
            (done_reads, done_anew),
            (1, 1),
            "read once, at the first poll; each append taken in as written"
        );
        let done = &queue
            .done_files
            .get_mut(files.done().to_str().unwrap())
            .unwrap()
            .done;
        assert_eq!(done.value.items.len(), 200);
        let on_disk = std::fs::read_to_string(files.done()).unwrap();
        assert_eq!(on_disk.lines().count(), 200);
        // A line someone else appends is still read.
        files.append(&files.done(), "{\"k\":\"x\"}\n");
        assert_eq!(poll(&mut queue, &files), None);
        let [_, _, done_reads, _] = reads(&mut queue, &files);
        assert_eq!(done_reads, 2);
    }

    #[test]
    fn an_append_after_a_partial_line_someone_left_starts_a_line_of_its_own() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":\"b\"}\n");
        let mut queue = files.settled();
        let a = poll(&mut queue, &files).unwrap();
        queue.on_finished(TRIGGER_TYPE, &a).unwrap();
        let b = poll(&mut queue, &files).unwrap();
        // The file changed since this process appended (and took in) `a`.
        files.append(&files.done(), "{\"half\":");
        queue.on_finished(TRIGGER_TYPE, &b).unwrap();
        assert_eq!(
            std::fs::read_to_string(files.done()).unwrap(),
            "{\"k\":\"a\"}\n{\"half\":\n{\"k\":\"b\"}\n"
        );
    }

    #[test]
    fn a_done_file_rewritten_behind_its_offset_is_read_from_the_start() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":\"b\"}\n{\"k\":\"c\"}\n");
        let mut queue = files.settled();
        assert_eq!(poll(&mut queue, &files), item("a"));
        queue
            .on_finished(TRIGGER_TYPE, &pairs(&[("k", "a")]))
            .unwrap();
        assert_eq!(poll(&mut queue, &files), item("b"));
        // Someone replaces the record with a longer one that does not list `a`.
        std::fs::write(files.done(), "{\"k\":\"x\"}\n{\"k\":\"yy\"}\n").unwrap();
        assert_eq!(poll(&mut queue, &files), item("c"));
        assert_eq!(reads(&mut queue, &files)[3], 2, "read anew");
        drop(queue);
        let mut later = files.settled();
        assert_eq!(poll(&mut later, &files), item("a"), "no longer done");
    }

    #[test]
    fn a_partial_last_line_waits_for_its_newline() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":");
        let mut queue = files.local_queue();
        assert_eq!(poll(&mut queue, &files), item("a"));
        assert_eq!(poll(&mut queue, &files), None);
        files.append(&files.queue(), "\"b\"}");
        assert_eq!(
            poll(&mut queue, &files),
            None,
            "complete JSON, still no newline"
        );
        files.append(&files.queue(), "\n");
        assert_eq!(poll(&mut queue, &files), item("b"));
        assert_eq!(poll(&mut queue, &files), None);
    }

    #[test]
    fn a_bad_queue_line_is_skipped_and_recorded_once() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":1}\n{\"k\":\"c\"}\n{\"k\":1}\n");
        let mut queue = files.settled();
        assert_eq!(poll(&mut queue, &files), item("a"));
        assert_eq!(queue.take_rejected(), 0, "no bad line before `a`");
        assert_eq!(poll(&mut queue, &files), item("c"));
        assert_eq!(queue.take_rejected(), 1, "line 2, on the way to `c`");
        assert_eq!(queue.take_rejected(), 0, "taken: the count starts again");
        assert_eq!(poll(&mut queue, &files), None);
        assert_eq!(queue.take_rejected(), 0, "line 4 has line 2's bytes: known");
        let rejected = files.dir.path().join("d.jsonl.rejected");
        let recorded = std::fs::read_to_string(&rejected).unwrap();
        let hash = hex(&Sha256::digest(b"{\"k\":1}").into());
        assert_eq!(
            recorded,
            format!(
                "{hash} `{}` line 2: member \"k\" must be a string, found 1 (item values are \
                 strings)\n",
                files.queue().display()
            ),
            "line 4 has the same bytes: one record"
        );
        // Fixed, the line is an item like any other.
        std::fs::write(
            files.queue(),
            "{\"k\":\"a\"}\n{\"k\":\"b\"}\n{\"k\":\"c\"}\n",
        )
        .unwrap();
        assert_eq!(poll(&mut queue, &files), item("b"));
        std::fs::remove_file(files.queue()).unwrap();
        // Gone: nothing to hand out (a warning on stderr, once), not an error.
        assert_eq!(queue.poll(TRIGGER_TYPE, &files.arguments()).unwrap(), None);
        assert!(
            queue
                .said
                .lock()
                .unwrap()
                .contains(&(files.queue().display().to_string(), 0))
        );
        // A later process knows the record: nothing new is written.
        drop(queue);
        std::fs::write(files.queue(), "{\"k\":1}\n{\"k\":\"d\"}\n").unwrap();
        let mut later = files.settled();
        assert_eq!(poll(&mut later, &files), item("d"));
        assert_eq!(std::fs::read_to_string(&rejected).unwrap(), recorded);
    }

    #[test]
    fn every_bad_line_is_recorded_not_only_the_first() {
        let files = Files::new("bad one\nbad two\nbad three\n{\"k\":\"a\"}\n");
        let mut queue = files.settled();
        assert_eq!(poll(&mut queue, &files), item("a"));
        let rejected = files.dir.path().join("d.jsonl.rejected");
        let recorded = std::fs::read_to_string(&rejected).unwrap();
        let lines: Vec<&str> = recorded.lines().collect();
        assert_eq!(lines.len(), 3, "{recorded}");
        for (line, (number, text)) in
            lines
                .iter()
                .zip([(1, "bad one"), (2, "bad two"), (3, "bad three")])
        {
            let hash = hex(&Sha256::digest(text.as_bytes()).into());
            assert!(line.starts_with(&format!("{hash} ")), "{line}");
            assert!(line.contains(&format!("line {number}: ")), "{line}");
        }
        // A later process reads all three: nothing is recorded twice.
        drop(queue);
        let mut later = files.settled();
        assert_eq!(poll(&mut later, &files), item("a"));
        assert_eq!(std::fs::read_to_string(&rejected).unwrap(), recorded);
    }

    #[test]
    fn an_overlong_line_is_rejected_without_being_kept() {
        let files = Files::new("");
        let long = format!("{{\"k\":\"{}\"}}", "x".repeat(300));
        files.append(&files.queue(), &format!("{long}\n{{\"k\":\"a\"}}\n"));
        let mut queue = LocalQueue {
            max_line_bytes: 100,
            ..files.settled()
        };
        assert_eq!(poll(&mut queue, &files), item("a"));
        let recorded = std::fs::read_to_string(files.dir.path().join("d.jsonl.rejected")).unwrap();
        assert!(
            recorded.contains(&format!("line 1: the line is {} bytes long", long.len())),
            "{recorded}"
        );
    }

    #[test]
    fn a_queue_file_that_is_a_folder_is_refused_at_validate() {
        let files = Files::new("");
        let mut arguments = files.arguments();
        arguments.insert("path".into(), json!(files.dir.path().to_str().unwrap()));
        let Err(ValidateError::Invalid(errors)) =
            files.local_queue().validate(TRIGGER_TYPE, &arguments)
        else {
            panic!("a folder is refused");
        };
        assert_eq!(errors[0].path, "/path");
        assert_eq!(
            errors[0].message,
            format!(
                "the queue file `{}` is a folder, not a file",
                files.dir.path().display()
            )
        );
    }

    #[test]
    fn validate_writes_nothing_and_refuses_a_done_file_that_cannot_be() {
        let files = Files::new("");
        files
            .local_queue()
            .validate(TRIGGER_TYPE, &files.arguments())
            .unwrap();
        assert!(!files.done().exists(), "no done file made");
        assert!(!files.dir.path().join(".local-queue").exists());

        let mut folder = files.arguments();
        folder.insert(
            "done_path".into(),
            json!(files.dir.path().to_str().unwrap()),
        );
        let nowhere = files.dir.path().join("missing").join("d.jsonl");
        let mut missing = files.arguments();
        missing.insert("done_path".into(), json!(nowhere.to_str().unwrap()));
        for (arguments, message) in [
            (
                folder,
                format!(
                    "the done file `{}` is a folder, not a file",
                    files.dir.path().display()
                ),
            ),
            (
                missing,
                format!(
                    "the done file `{}` cannot be made: its folder `{}` does not exist",
                    nowhere.display(),
                    files.dir.path().join("missing").display()
                ),
            ),
        ] {
            let Err(ValidateError::Invalid(errors)) =
                files.local_queue().validate(TRIGGER_TYPE, &arguments)
            else {
                panic!("refused: {arguments:?}");
            };
            assert_eq!(errors, [ValidationError::member("done_path", message)]);
        }
    }

    /// Two queues alive at once in one process stand for two processes: each claim
    /// file is locked through its own open file, as another process's would be.
    #[test]
    fn two_holders_at_once_never_hand_out_the_same_item() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":\"b\"}\n{\"k\":\"c\"}\n");
        let mut first = files.local_queue();
        let mut second = files.local_queue();
        assert_eq!(poll(&mut first, &files), item("a"));
        // The same done file under another spelling is the same queue.
        let mut dotted = files.arguments();
        let done = files.dir.path().join(".").join("d.jsonl");
        dotted.insert("done_path".into(), json!(done.to_str().unwrap()));
        assert_eq!(second.poll(TRIGGER_TYPE, &dotted).unwrap(), item("b"));
        assert_eq!(poll(&mut first, &files), item("c"));
        assert_eq!(poll(&mut second, &files), None);
        first
            .on_finished(TRIGGER_TYPE, &pairs(&[("k", "a")]))
            .unwrap();
        // Ended without finishing `c`: it comes back; `b` is still held.
        drop(first);
        assert_eq!(poll(&mut second, &files), item("c"));
        assert_eq!(poll(&mut second, &files), None);
        let mut third = files.local_queue();
        assert_eq!(poll(&mut third, &files), None);
        drop(second);
        assert_eq!(poll(&mut third, &files), item("b"));
        assert_eq!(poll(&mut third, &files), item("c"));
        // What they left: the done file; the claims folder without the ended ones'.
        assert_eq!(
            std::fs::read_to_string(files.done()).unwrap(),
            "{\"k\":\"a\"}\n"
        );
        let claims = files.dir.path().join(".local-queue/d.jsonl.claims");
        assert_eq!(
            std::fs::read_dir(&claims).unwrap().count(),
            1,
            "the third's"
        );
        drop(third);
        assert_eq!(std::fs::read_dir(&claims).unwrap().count(), 0);
    }

    #[test]
    fn a_dry_run_records_nothing() {
        let files = Files::new("{\"k\":\"a\"}\nnot an item\n{\"k\":\"b\"}\n");
        let mut queue = files.local_queue();
        let preview = |queue: &mut LocalQueue| {
            queue
                .poll_in(
                    TRIGGER_TYPE,
                    &files.arguments(),
                    PollContext::new(Some(10), true),
                )
                .unwrap()
        };
        assert_eq!(preview(&mut queue), item("a"));
        assert_eq!(preview(&mut queue), item("b"));
        assert_eq!(preview(&mut queue), None);
        let mut names: Vec<_> = std::fs::read_dir(files.dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["q.jsonl"], "no done, rejected, claim or index file");
        // A real poll after it hands out from the start, and records the bad line the
        // dry run only reported; a dry run elsewhere shows what is left.
        assert_eq!(poll(&mut queue, &files), item("a"));
        let mut other = files.local_queue();
        assert_eq!(preview(&mut other), item("b"));
        assert_eq!(preview(&mut other), None);
        let rejected = files.dir.path().join("d.jsonl.rejected");
        assert!(!rejected.exists());
        assert_eq!(poll(&mut queue, &files), item("b"));
        let recorded = std::fs::read_to_string(&rejected).unwrap();
        assert!(
            recorded.contains("line 2: the line is not valid JSON"),
            "{recorded}"
        );
        let mut third = files.local_queue();
        assert_eq!(preview(&mut third), None);
    }

    #[test]
    fn on_finished_in_a_fresh_queue_finds_the_done_file_through_the_index() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":\"b\"}\n");
        let other_queue = files.dir.path().join("q2.jsonl");
        let other_done = files.dir.path().join("d2.jsonl");
        // The same line in both queues, and one of its own in the second.
        std::fs::write(&other_queue, "{\"k\":\"x\"}\n{\"k\":\"a\"}\n").unwrap();
        let second: Arguments = serde_json::from_value(json!({
            "path": other_queue.to_str().unwrap(),
            "done_path": other_done.to_str().unwrap(),
        }))
        .unwrap();
        let mut polls = files.local_queue();
        assert_eq!(poll(&mut polls, &files), item("a"));
        assert_eq!(polls.poll(TRIGGER_TYPE, &second).unwrap(), item("x"));
        assert_eq!(polls.poll(TRIGGER_TYPE, &second).unwrap(), item("a"));
        drop(polls);
        let index = files.dir.path().join(".local-queue/index.jsonl");
        assert_eq!(std::fs::read_to_string(&index).unwrap().lines().count(), 3);

        // Each hook in a queue of its own, as the reference host sends them.
        for values in [item("x"), item("a"), item("a"), item("a")] {
            let mut hook = files.local_queue();
            hook.on_finished(TRIGGER_TYPE, &values.unwrap()).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(files.done()).unwrap(),
            "{\"k\":\"a\"}\n"
        );
        assert_eq!(
            std::fs::read_to_string(&other_done).unwrap(),
            "{\"k\":\"x\"}\n{\"k\":\"a\"}\n",
            "the second `a` goes to the second queue; the third to neither"
        );
        // A hook for an item of no queue in the index is refused; one that never
        // went through a poll but is in a queue the index names is recorded.
        let mut hook = files.local_queue();
        let err = hook
            .on_finished(TRIGGER_TYPE, &pairs(&[("k", "zzz")]))
            .unwrap_err();
        assert_eq!(err.code(), curupira_jsonrpc::ErrorCode::INVALID_PARAMS);
        hook.on_finished(TRIGGER_TYPE, &pairs(&[("k", "b")]))
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(files.done()).unwrap(),
            "{\"k\":\"a\"}\n{\"k\":\"b\"}\n"
        );
        let mut later = files.local_queue();
        assert_eq!(poll(&mut later, &files), None);
        assert_eq!(later.poll(TRIGGER_TYPE, &second).unwrap(), None);
    }

    #[test]
    fn half_written_lines_of_the_record_are_tolerated() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":\"b\"}\n");
        let mut first = files.local_queue();
        assert_eq!(poll(&mut first, &files), item("a"));
        // A crash in the middle of writing each file: the index, a claim file, the
        // done file.
        let state = files.dir.path().join(".local-queue");
        let claims = state.join("d.jsonl.claims");
        let claim = std::fs::read_dir(&claims)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        files.append(&state.join("index.jsonl"), "{\"task\":\"8b41");
        files.append(&claim, "{\"k\":");
        files.append(&files.done(), "{\"k\":\"b");
        let mut second = files.local_queue();
        assert_eq!(poll(&mut second, &files), item("b"), "`a` is still held");
        second
            .on_finished(TRIGGER_TYPE, &pairs(&[("k", "b")]))
            .unwrap();
        drop((first, second));
        let mut hook = files.local_queue();
        hook.on_finished(TRIGGER_TYPE, &pairs(&[("k", "a")]))
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(files.done()).unwrap(),
            "{\"k\":\"b\n{\"k\":\"b\"}\n{\"k\":\"a\"}\n"
        );
        let index = std::fs::read_to_string(state.join("index.jsonl")).unwrap();
        let lines: Vec<&str> = index.lines().collect();
        assert_eq!(lines.len(), 3, "{index}");
        assert_eq!(
            lines[1], "{\"task\":\"8b41",
            "left as it was, then a newline"
        );
        assert!(lines[2].contains("\"done_path\""), "{index}");
    }

    /// Another program holding the done file's lock (an earlier build held it for its
    /// whole life) is waited for, then named; once it lets go, polls go on.
    #[test]
    fn a_lock_held_elsewhere_is_waited_for_then_reported() {
        let files = Files::new("{\"k\":\"a\"}\n");
        std::fs::write(files.done(), "").unwrap();
        let holder = File::open(files.done()).unwrap();
        fs4::FileExt::try_lock(&holder).unwrap();
        let mut queue = files.local_queue();
        queue.done_files.wait = Duration::from_millis(100);
        let started = std::time::Instant::now();
        let err = queue.poll(TRIGGER_TYPE, &files.arguments()).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert_eq!(
            err.message(),
            format!(
                "`{}` stayed locked by another process for 100ms (each `local-queue` locks it \
                 for one read or one append at a time; a program holding it longer, such as \
                 an earlier build of `local-queue`, must end first)",
                files.done().display()
            )
        );
        fs4::FileExt::unlock(&holder).unwrap();
        assert_eq!(poll(&mut queue, &files), item("a"));
    }
}
