//! [`LocalQueue`], the `jsonl` trigger: which line a poll hands out, and where a
//! finished item is recorded.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io;
use std::sync::{Mutex, PoisonError};
#[cfg(test)]
use std::time::Duration;
use std::time::SystemTime;

use curupira_extension_sdk::{
    Arguments, Pair, Trigger, TriggerDescription, TriggerError, TriggerSchema, ValidateError,
    ValidationError,
};

use crate::arguments::{self, Queue, queue_from};
use crate::held::Locks;
#[cfg(test)]
use crate::jsonl::hex;
use crate::jsonl::{Line, LineHash, item_line, parse_line};
use crate::tracked::{Content, Tracked, Trust, stamp_of};
use crate::{MAX_LINE_BYTES, NAME, TRIGGER_TYPE};
#[cfg(test)]
use sha2::{Digest, Sha256};

/// The `jsonl` trigger: what this process has handed out and not yet finished, the
/// done files it holds, and the queue files as last read.
#[derive(Debug)]
pub struct LocalQueue {
    /// Per queue, every item a poll returned (finished or not).
    handed_out: HashMap<Queue, HandedOut>,
    /// Items awaiting `onFinished`, with the queue each came from, oldest first.
    unfinished: HashMap<Vec<Pair>, VecDeque<Queue>>,
    /// The done files this process holds locked (`validate` takes a lock too, hence
    /// the mutex: it is called through `&self`).
    locks: Mutex<Locks>,
    /// Per queue path, the queue file as last read.
    queue_files: HashMap<String, Tracked<QueueLines>>,
    /// The most bytes a line may have; longer ones are rejected unread.
    max_line_bytes: usize,
    /// Added to the clock, so tests can see files from the future.
    #[cfg(test)]
    clock_shift: Duration,
}

impl Default for LocalQueue {
    fn default() -> Self {
        LocalQueue {
            handed_out: HashMap::new(),
            unfinished: HashMap::new(),
            locks: Mutex::default(),
            queue_files: HashMap::new(),
            max_line_bytes: MAX_LINE_BYTES,
            #[cfg(test)]
            clock_shift: Duration::ZERO,
        }
    }
}

/// What one queue handed out.
#[derive(Debug, Default)]
struct HandedOut {
    items: HashSet<Vec<Pair>>,
    /// The queue lines before `cursor.index` are all done, handed out or rejected, as
    /// long as neither file was read from its start again since (`cursor.generations`):
    /// handed-out items are never forgotten and a file read from where it stopped only
    /// grows, so only a file read anew can make an earlier line eligible.
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

    /// Checks the arguments, then takes the lock on the queue's done file: a queue
    /// another process hands out is refused here, naming the file.
    fn validate(&self, _trigger_type: &str, arguments: &Arguments) -> Result<(), ValidateError> {
        let queue = queue_from(arguments).map_err(ValidateError::Invalid)?;
        // A queue file yet to be made is fine (it is waited for); a folder never will be.
        if std::path::Path::new(&queue.path).is_dir() {
            return Err(ValidateError::Invalid(vec![ValidationError::member(
                "path",
                format!("the queue file `{}` is a folder, not a file", queue.path),
            )]));
        }
        let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        match locks.hold(&queue.done_path, &queue.path) {
            Ok(_) => Ok(()),
            Err(err) => {
                let member = if arguments.contains_key("done_path") {
                    "done_path"
                } else {
                    "path"
                };
                Err(ValidateError::Invalid(vec![ValidationError::member(
                    member,
                    err.message(),
                )]))
            }
        }
    }

    fn poll(
        &mut self,
        _trigger_type: &str,
        arguments: &Arguments,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        let queue = queue_from(arguments).map_err(|errors| {
            let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
            TriggerError::invalid_params(format!(
                "the parameters do not fit trigger type \"jsonl\": {}",
                listed.join("; ")
            ))
        })?;
        let now = self.now();
        let cap = self.max_line_bytes;
        let locks = self.locks.get_mut().unwrap_or_else(PoisonError::into_inner);
        let held = locks
            .hold(&queue.done_path, &queue.path)
            .map_err(|err| TriggerError::internal(err.message()))?;
        let done_generation = held.refresh(now, cap).map_err(TriggerError::internal)?;
        let queue_generation = self.refresh_queue(&queue.path, now)?;
        let (Some(lines), Some(held)) = (
            self.queue_files.get(&queue.path),
            self.locks
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .get_mut(&queue.done_path),
        ) else {
            return Err(TriggerError::internal(
                "local-queue lost track of the files it just read",
            ));
        };
        let handed_out = self.handed_out.entry(queue.clone()).or_default();
        let generations = (queue_generation, done_generation);
        let start = match handed_out.cursor {
            cursor if cursor.generations == generations => cursor.index,
            _ => 0,
        };
        let mut found = None;
        let mut rejected_now = 0_usize;
        for (index, entry) in lines.value.entries.iter().enumerate().skip(start) {
            match entry {
                Entry::Item(pairs) => {
                    if !held.done.value.items.contains(pairs) && !handed_out.items.contains(pairs) {
                        found = Some((index, pairs));
                        break;
                    }
                }
                Entry::Bad {
                    number,
                    hash,
                    problem,
                } => {
                    if held.was_rejected(hash) {
                        continue;
                    }
                    let note = format!("`{}` line {number}: {problem}", queue.path);
                    let recorded = held.reject(*hash, &note);
                    let whereto = match recorded {
                        Ok(()) => format!(
                            "recorded in `{}`, so it is not reported again",
                            held.rejected_path()
                        ),
                        Err(problem) => problem,
                    };
                    rejected_now += 1;
                    eprintln!("{NAME}: warning: {note}; the line is skipped ({whereto})");
                }
            }
        }
        if rejected_now > 0 {
            eprintln!(
                "{NAME}: warning: this poll rejected {rejected_now} line(s) of `{}` ({} in all \
                 recorded in `{}`)",
                queue.path,
                held.rejected_count(),
                held.rejected_path()
            );
        }
        let Some((index, pairs)) = found else {
            handed_out.cursor = Cursor {
                generations,
                index: lines.value.entries.len(),
            };
            return Ok(None);
        };
        handed_out.cursor = Cursor {
            generations,
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
        let queue = match self
            .unfinished
            .get_mut(values)
            .and_then(VecDeque::pop_front)
        {
            Some(queue) => queue,
            None => match self.queue_holding(values)? {
                Some(queue) => queue,
                None => {
                    return Err(TriggerError::invalid_params(
                        "these values were not handed out by a poll of this process and are \
                         not an item of any queue it was given, so local-queue does not know \
                         which `done_path` records them",
                    ));
                }
            },
        };
        let line = item_line(values);
        let appended = match self
            .locks
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&queue.done_path)
        {
            Some(held) => held.append(line.as_bytes(), self.max_line_bytes),
            None => Err(io::Error::other("this process does not hold it")),
        };
        if let Err(err) = appended {
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
    /// For an item this process did not hand out (a host re-dispatching a task it
    /// recorded earlier, e.g. `curupira tasks retry`): the first queue this process was
    /// given (validated or polled) whose file holds an item with exactly these values.
    fn queue_holding(&mut self, values: &[Pair]) -> Result<Option<Queue>, TriggerError> {
        let queues = self
            .locks
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .queues();
        let now = self.now();
        for queue in queues {
            self.refresh_queue(&queue.path, now)?;
            let holds = self.queue_files.get(&queue.path).is_some_and(|lines| {
                lines
                    .value
                    .entries
                    .iter()
                    .any(|entry| matches!(entry, Entry::Item(pairs) if pairs == values))
            });
            if holds {
                self.handed_out
                    .entry(queue.clone())
                    .or_default()
                    .items
                    .insert(values.to_vec());
                return Ok(Some(queue));
            }
        }
        Ok(None)
    }

    fn now(&self) -> SystemTime {
        #[cfg(test)]
        return SystemTime::now() + self.clock_shift;
        #[cfg(not(test))]
        SystemTime::now()
    }

    /// Reads what the queue file holds beyond its last read (all of it when it was
    /// rewritten, or may have been); the generation of its content.
    fn refresh_queue(&mut self, path: &str, now: SystemTime) -> Result<u64, TriggerError> {
        let cannot_open = |err: io::Error| {
            TriggerError::internal(format!("cannot open the queue file `{path}`: {err}"))
        };
        let stamp = match stamp_of(path) {
            Ok(Some(stamp)) => stamp,
            Ok(None) => {
                if let Some(tracked) = self.queue_files.get_mut(path) {
                    tracked.clear();
                }
                return Err(TriggerError::internal(format!(
                    "the queue file `{path}` does not exist"
                )));
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
        Ok(tracked.generation())
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
        let held = queue.locks.get_mut().unwrap().get_mut(&done_path).unwrap();
        [
            queue_reads,
            queue_anew,
            held.done.reads(),
            held.done.generation(),
        ]
    }

    fn settled() -> LocalQueue {
        LocalQueue {
            clock_shift: Duration::from_secs(3600),
            ..LocalQueue::default()
        }
    }

    #[test]
    fn an_item_of_a_given_queue_finishes_though_this_process_did_not_hand_it_out() {
        // A host re-dispatching a task it recorded in an earlier run (`tasks retry`):
        // this process validated the queue but never polled the item.
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":\"b\"}\n");
        let mut queue = settled();
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
        // Our own onFinished grows the done file: the next poll reads what it added.
        queue
            .on_finished(TRIGGER_TYPE, &pairs(&[("k", "e")]))
            .unwrap();
        std::fs::write(files.queue(), "{\"k\":\"e\"}\n{\"k\":\"f\"}\n").unwrap();
        assert_eq!(poll(&mut queue, &files), item("f"));
        // Another process (once this one let go of the done file) skips `e` too.
        drop(queue);
        let mut other = LocalQueue::default();
        assert_eq!(poll(&mut other, &files), item("f"));
    }

    #[test]
    fn a_settled_file_is_read_again_only_when_its_stamp_changes() {
        let files = Files::new("{\"k\":\"a\"}\n");
        // A fresh queue file is read on every poll; the done file (created empty by
        // the lock) only when it changes, since this process is its only writer.
        let mut fresh = LocalQueue::default();
        assert_eq!(poll(&mut fresh, &files), item("a"));
        assert_eq!(poll(&mut fresh, &files), None);
        assert_eq!(reads(&mut fresh, &files), [2, 2, 1, 1]);
        drop(fresh);

        // Seen an hour later, they are settled: polls only look at the stamps.
        let mut queue = settled();
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
        let mut queue = settled();
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
            .locks
            .get_mut()
            .unwrap()
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
        let mut queue = settled();
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
        let mut queue = settled();
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
        let mut later = settled();
        assert_eq!(poll(&mut later, &files), item("a"), "no longer done");
    }

    #[test]
    fn a_partial_last_line_waits_for_its_newline() {
        let files = Files::new("{\"k\":\"a\"}\n{\"k\":");
        let mut queue = LocalQueue::default();
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
        let mut queue = settled();
        assert_eq!(poll(&mut queue, &files), item("a"));
        assert_eq!(poll(&mut queue, &files), item("c"));
        assert_eq!(poll(&mut queue, &files), None);
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
        let message = queue
            .poll(TRIGGER_TYPE, &files.arguments())
            .unwrap_err()
            .message()
            .to_owned();
        assert_eq!(
            message,
            format!(
                "the queue file `{}` does not exist",
                files.queue().display()
            )
        );
        // A later process knows the record: nothing new is written.
        drop(queue);
        std::fs::write(files.queue(), "{\"k\":1}\n{\"k\":\"d\"}\n").unwrap();
        let mut later = settled();
        assert_eq!(poll(&mut later, &files), item("d"));
        assert_eq!(std::fs::read_to_string(&rejected).unwrap(), recorded);
    }

    #[test]
    fn every_bad_line_is_recorded_not_only_the_first() {
        let files = Files::new("bad one\nbad two\nbad three\n{\"k\":\"a\"}\n");
        let mut queue = settled();
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
        let mut later = settled();
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
            ..settled()
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
            LocalQueue::default().validate(TRIGGER_TYPE, &arguments)
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
    fn a_done_file_is_held_by_one_process_at_a_time() {
        let files = Files::new("{\"k\":\"a\"}\n");
        let first = LocalQueue::default();
        first.validate(TRIGGER_TYPE, &files.arguments()).unwrap();
        // The same file under another spelling is the same lock, already held.
        let mut other_spelling = files.arguments();
        let dotted = files.dir.path().join(".").join("d.jsonl");
        other_spelling.insert("done_path".into(), json!(dotted.to_str().unwrap()));
        first.validate(TRIGGER_TYPE, &other_spelling).unwrap();

        let mut second = LocalQueue::default();
        let Err(ValidateError::Invalid(errors)) = second.validate(TRIGGER_TYPE, &files.arguments())
        else {
            panic!("the second holder is refused");
        };
        assert_eq!(errors[0].path, "/done_path");
        assert!(
            errors[0].message.starts_with(&format!(
                "the done file `{}` is locked by another process",
                files.done().display()
            )),
            "{}",
            errors[0].message
        );
        let refused = second.poll(TRIGGER_TYPE, &files.arguments()).unwrap_err();
        assert!(refused.message().contains("is locked by another process"));
        drop(first);
        assert_eq!(poll(&mut second, &files), item("a"));
    }
}
