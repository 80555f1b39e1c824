//! The done file of a queue, held under an exclusive advisory lock for as long as this
//! process hands the queue out, and the `.rejected` file beside it.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;
use std::time::SystemTime;

use curupira_extension_sdk::Pair;
use fs4::TryLockError;

use crate::NAME;
use crate::arguments::Queue;
use crate::jsonl::{Line, LineHash, append_line, append_line_after, hex, parse_hex, parse_line};
use crate::tracked::{Content, Stamp, Tracked, Trust};

/// Why a done file cannot be held.
#[derive(Debug)]
pub(crate) enum HoldError {
    /// Another process holds its lock.
    Locked(String),
    /// It cannot be opened, locked or read, or its `.rejected` file cannot be read.
    Io(String),
}

impl HoldError {
    pub(crate) fn message(&self) -> &str {
        match self {
            HoldError::Locked(message) | HoldError::Io(message) => message,
        }
    }
}

/// The items a done file records, and the lines of it not warned about yet.
#[derive(Debug, Default)]
pub(crate) struct DoneLines {
    pub(crate) items: HashSet<Vec<Pair>>,
    /// Bad lines read and not yet reported: their number and problem.
    pub(crate) unreported: Vec<(u64, String)>,
}

impl Content for DoneLines {
    fn add(&mut self, line: Line, cap: usize) {
        match parse_line(&line, cap) {
            Ok(Some(pairs)) => {
                self.items.insert(pairs);
            }
            Ok(None) => {}
            Err(problem) => self.unreported.push((line.number, problem.to_string())),
        }
    }
}

/// One held done file.
#[derive(Debug)]
pub(crate) struct Held {
    /// The path it was first named by.
    pub(crate) done_path: String,
    /// The queue file whose items it records (as first named).
    pub(crate) queue_path: String,
    /// Open for reading and appending, and locked: all reads and appends go through it.
    file: File,
    /// Where it really is, so two spellings of one path share one lock.
    canonical: PathBuf,
    /// Its items as last read.
    pub(crate) done: Tracked<DoneLines>,
    /// `<done_path>.rejected`.
    rejected_path: String,
    /// The hashes of the queue lines already reported as rejected.
    rejected: HashSet<LineHash>,
    /// Done-file lines already warned about, so a bad line is reported once.
    warned: HashSet<u64>,
}

impl Held {
    /// Reads what was appended to the done file since the last read (all of it when it
    /// was rewritten) and warns once about each bad line.
    pub(crate) fn refresh(&mut self, now: SystemTime, cap: usize) -> Result<u64, String> {
        let cannot_read =
            |err: io::Error| format!("cannot read the done file `{}`: {err}", self.done_path);
        let stamp = Stamp::of(&self.file.metadata().map_err(cannot_read)?);
        if self.done.needs_read(stamp, Trust::Always) {
            self.done
                .read(&self.file, stamp, now, cap)
                .map_err(cannot_read)?;
        }
        for (number, problem) in std::mem::take(&mut self.done.value.unreported) {
            if self.warned.insert(number) {
                eprintln!(
                    "{NAME}: warning: `{}` line {number} is skipped: {problem}",
                    self.done_path
                );
            }
        }
        Ok(self.done.generation())
    }

    /// Appends one finished item's line (a whole line, `\n` included), and takes it
    /// in as read when nothing else changed the file meanwhile, so the next
    /// [`refresh`](Self::refresh) reads nothing.
    pub(crate) fn append(&mut self, line: &[u8], cap: usize) -> io::Result<()> {
        let metadata = self.file.metadata()?;
        let unchanged = self.done.read_to_line_end(Stamp::of(&metadata));
        append_line_after(&self.file, line, metadata.len(), unchanged)?;
        if unchanged && let Ok(metadata) = self.file.metadata() {
            self.done.appended(line, Stamp::of(&metadata), cap);
        }
        Ok(())
    }

    /// Whether the queue line hashed `hash` was rejected before (by this process or,
    /// through the `.rejected` file, an earlier one).
    pub(crate) fn was_rejected(&self, hash: &LineHash) -> bool {
        self.rejected.contains(hash)
    }

    /// Records a rejected queue line so that it is not reported again: in memory, and
    /// appended to the `.rejected` file with `note` (where and why). A failure to
    /// write there is returned as a sentence; the line stays rejected in memory.
    pub(crate) fn reject(&mut self, hash: LineHash, note: &str) -> Result<(), String> {
        self.rejected.insert(hash);
        let line = format!("{} {note}\n", hex(&hash));
        // Read as well as appended to: `append_line` reads the last byte to know
        // whether the file ends with its newline.
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&self.rejected_path)
            .and_then(|file| append_line(&file, line.as_bytes()))
            .map_err(|err| format!("cannot record it in `{}`: {err}", self.rejected_path))
    }

    /// Where rejected lines are recorded.
    pub(crate) fn rejected_path(&self) -> &str {
        &self.rejected_path
    }

    /// How many distinct queue lines are recorded as rejected (by this process and
    /// the earlier ones whose `.rejected` file it read).
    pub(crate) fn rejected_count(&self) -> usize {
        self.rejected.len()
    }
}

/// Every done file this process holds, by each path it was named by.
#[derive(Debug, Default)]
pub(crate) struct Locks {
    by_path: HashMap<String, usize>,
    held: Vec<Held>,
}

impl Locks {
    /// The held done file at `done_path`: locked now if it was not yet (created when
    /// missing). Its lock is kept until the process exits.
    pub(crate) fn hold(
        &mut self,
        done_path: &str,
        queue_path: &str,
    ) -> Result<&mut Held, HoldError> {
        if let Some(&index) = self.by_path.get(done_path) {
            return self.held.get_mut(index).ok_or_else(lost);
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(done_path)
            .map_err(|err| {
                HoldError::Io(format!("cannot open the done file `{done_path}`: {err}"))
            })?;
        let canonical = std::fs::canonicalize(done_path).unwrap_or_else(|_| done_path.into());
        if let Some(index) = self
            .held
            .iter()
            .position(|held| held.canonical == canonical)
        {
            self.by_path.insert(done_path.to_owned(), index);
            return self.held.get_mut(index).ok_or_else(lost);
        }
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(HoldError::Locked(format!(
                    "the done file `{done_path}` is locked by another process: another \
                     `local-queue` (another automation's host, or another config on the same \
                     queue) already hands out the items of `{queue_path}`, and one queue is \
                     handed out by one extension at a time"
                )));
            }
            Err(TryLockError::Error(err)) => {
                return Err(HoldError::Io(format!(
                    "cannot lock the done file `{done_path}`: {err}"
                )));
            }
        }
        let rejected_path = format!("{done_path}.rejected");
        let rejected = read_rejected(&rejected_path).map_err(HoldError::Io)?;
        self.held.push(Held {
            done_path: done_path.to_owned(),
            queue_path: queue_path.to_owned(),
            file,
            canonical,
            done: Tracked::default(),
            rejected_path,
            rejected,
            warned: HashSet::new(),
        });
        let index = self.held.len() - 1;
        self.by_path.insert(done_path.to_owned(), index);
        self.held.get_mut(index).ok_or_else(lost)
    }

    /// Every queue this process holds the done file of, as first named.
    pub(crate) fn queues(&self) -> Vec<Queue> {
        self.held
            .iter()
            .map(|held| Queue {
                path: held.queue_path.clone(),
                done_path: held.done_path.clone(),
            })
            .collect()
    }

    /// The done file already held at `done_path`.
    pub(crate) fn get_mut(&mut self, done_path: &str) -> Option<&mut Held> {
        let index = *self.by_path.get(done_path)?;
        self.held.get_mut(index)
    }
}

fn lost() -> HoldError {
    HoldError::Io("local-queue lost track of a done file it holds".to_owned())
}

/// The hashes a `.rejected` file records: each line starts with 64 hex digits (what
/// follows is for people). A missing file records none; other lines are ignored.
fn read_rejected(path: &str) -> Result<HashSet<LineHash>, String> {
    let cannot_read = |err: io::Error| format!("cannot read `{path}`: {err}");
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(err) => return Err(cannot_read(err)),
    };
    let mut hashes = HashSet::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line.map_err(cannot_read)?;
        if let Some(hash) = parse_hex(&line) {
            hashes.insert(hash);
        }
    }
    Ok(hashes)
}
