//! [`LocalQueue`], the `jsonl` trigger: which line a poll hands out, and where a
//! finished item is recorded.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;
#[cfg(test)]
use std::time::Duration;
use std::time::SystemTime;

use curupira_extension_sdk::{
    Arguments, Pair, Trigger, TriggerDescription, TriggerError, TriggerSchema, ValidateError,
};

use crate::arguments::{self, Queue, queue_from};
use crate::jsonl::{Lines, append_line, item_line, parse_line};
use crate::snapshot::{Snapshot, stamp_of};
use crate::{NAME, TRIGGER_TYPE};

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

/// A queue file's items in line order, up to its first bad line.
#[derive(Debug, Default)]
struct QueueLines {
    items: Vec<Vec<Pair>>,
    /// The error for the first bad line, reached once every item before it is taken.
    bad_line: Option<String>,
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
            schema: arguments::schema(),
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

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    use std::io::Write;

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
}
