//! A queue's done file, locked for one read or one append at a time (never for a
//! process's life), the `.rejected` file beside it, and the claims on its items.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::time::SystemTime;

use curupira_extension_sdk::Pair;

use crate::NAME;
use crate::claims::Claims;
use crate::jsonl::{Line, LineHash, append_line, append_line_after, hex, parse_hex, parse_line};
use crate::store::{Access, LOCK_WAIT, Locked, StoreError, is_same_file, lock, resolved};
use crate::tracked::{Content, Stamp, Tracked, Trust, stamp_of};
use std::time::Duration;

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

/// The hashes a `.rejected` file records: each line starts with 64 hex digits (what
/// follows is for people); other lines are ignored.
#[derive(Debug, Default)]
pub(crate) struct RejectedLines {
    hashes: HashSet<LineHash>,
}

impl Content for RejectedLines {
    fn add(&mut self, line: Line, _cap: usize) {
        if let Some(hash) = parse_hex(line.content()) {
            self.hashes.insert(hash);
        }
    }
}

/// One queue's done file, as this process last read it.
#[derive(Debug)]
pub(crate) struct DoneFile {
    /// The path it was first named by.
    pub(crate) done_path: String,
    /// Open for reading and appending: all reads, appends and locks go through it. It
    /// is opened again when the path comes to name another file (deleted, or replaced
    /// by a rename).
    file: Option<File>,
    /// Its items as last read.
    pub(crate) done: Tracked<DoneLines>,
    /// `<done_path>.rejected`.
    rejected_path: String,
    /// The queue lines recorded as rejected, as last read.
    rejected: Tracked<RejectedLines>,
    /// The queue lines this process rejected in real polls (written down, or tried).
    rejected_here: HashSet<LineHash>,
    /// The queue lines dry-run polls of this process reported (not written down, so a
    /// real poll still records them).
    rejected_shown: HashSet<LineHash>,
    /// Done-file lines already warned about, so a bad line is reported once.
    warned: HashSet<u64>,
    /// What the other processes handed out from this queue and did not finish.
    pub(crate) claims: Claims,
    /// The longest [`lock`](Self::lock) waits for another holder.
    wait: Duration,
}

impl DoneFile {
    fn new(done_path: &str, wait: Duration) -> DoneFile {
        DoneFile {
            wait,
            done_path: done_path.to_owned(),
            file: None,
            done: Tracked::default(),
            rejected_path: format!("{done_path}.rejected"),
            rejected: Tracked::default(),
            rejected_here: HashSet::new(),
            rejected_shown: HashSet::new(),
            warned: HashSet::new(),
            claims: Claims::new(&resolved(done_path)),
        }
    }

    /// Locks the done file for one read (`Shared`) or for a decision and an append
    /// (`Exclusive`), waiting a while (10 s) for another process. With `create`
    /// the file is made (empty) when missing; without, a missing file is `None`.
    pub(crate) fn lock(
        &mut self,
        access: Access,
        create: bool,
    ) -> Result<Option<Locked>, StoreError> {
        let path = self.done_path.as_str();
        if let Some(file) = &self.file
            && !is_same_file(file, path.as_ref())
                .map_err(StoreError::io("open the done file", path))?
        {
            self.file = None;
        }
        if self.file.is_none() {
            let opened = OpenOptions::new()
                .read(true)
                .append(true)
                .create(create)
                .open(path);
            match opened {
                Ok(file) => self.file = Some(file),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound && !create => {
                    return Ok(None);
                }
                Err(err) => return Err(StoreError::io("open the done file", path)(err)),
            }
        }
        match &self.file {
            Some(file) => lock(file, path, access, self.wait).map(Some),
            None => Ok(None),
        }
    }

    /// Reads what was appended to the done file since the last read (all of it when it
    /// was rewritten, or is another file) and warns once about each bad line; the
    /// generation of its content. Call it under the file's lock; a file that is not
    /// there (not [`lock`](Self::lock)ed) records nothing.
    pub(crate) fn refresh(&mut self, now: SystemTime, cap: usize) -> Result<u64, StoreError> {
        let Some(file) = &self.file else {
            self.done.clear();
            return Ok(self.done.generation());
        };
        let cannot_read = |err| StoreError::io("read the done file", &self.done_path)(err);
        let stamp = Stamp::of(&file.metadata().map_err(cannot_read)?);
        if self.done.needs_read(stamp, Trust::Always) {
            self.done.read(file, stamp, now, cap).map_err(cannot_read)?;
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
    /// in as read when nothing else changed the file since the last read, so the next
    /// [`refresh`](Self::refresh) reads nothing. Call it under the exclusive lock.
    pub(crate) fn append(&mut self, line: &[u8], cap: usize) -> Result<(), StoreError> {
        let path = self.done_path.as_str();
        let Some(file) = &self.file else {
            return Err(StoreError::io("append to the done file", path)(
                std::io::Error::other("it is not open"),
            ));
        };
        let metadata = file
            .metadata()
            .map_err(StoreError::io("append to the done file", path))?;
        let unchanged = self.done.read_to_line_end(Stamp::of(&metadata));
        append_line_after(file, line, metadata.len(), unchanged)
            .map_err(StoreError::io("append to the done file", path))?;
        if unchanged && let Ok(metadata) = file.metadata() {
            self.done.appended(line, Stamp::of(&metadata), cap);
        }
        Ok(())
    }

    /// Whether the queue line hashed `hash` was rejected before (by this process or,
    /// through the `.rejected` file, any other; for a dry run's poll, `preview`, also
    /// by this process's dry-run polls), that file read again if it changed.
    pub(crate) fn was_rejected(
        &mut self,
        hash: &LineHash,
        preview: bool,
        now: SystemTime,
        cap: usize,
    ) -> bool {
        if self.rejected_here.contains(hash) || (preview && self.rejected_shown.contains(hash)) {
            return true;
        }
        // Unreadable, it records nothing: the line is reported (again).
        if let Ok(Some(stamp)) = stamp_of(&self.rejected_path)
            && self.rejected.needs_read(stamp, Trust::Always)
            && let Ok(file) = File::open(&self.rejected_path)
        {
            let _ = self.rejected.read(&file, stamp, now, cap);
        }
        self.rejected.value.hashes.contains(hash)
    }

    /// Records a rejected queue line so that it is not reported again: in memory, and,
    /// when `write_down` (not in a dry run; under the exclusive lock), appended to the
    /// `.rejected` file with `note` (where and why). A failure to write there is
    /// returned as a sentence; the line stays rejected in memory.
    pub(crate) fn reject(
        &mut self,
        hash: LineHash,
        note: &str,
        write_down: bool,
    ) -> Result<(), String> {
        if !write_down {
            self.rejected_shown.insert(hash);
            return Ok(());
        }
        self.rejected_here.insert(hash);
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

    /// How many distinct queue lines are known rejected (recorded in the `.rejected`
    /// file as last read, or rejected by this process).
    pub(crate) fn rejected_count(&self) -> usize {
        let recorded = &self.rejected.value.hashes;
        recorded.len()
            + self
                .rejected_here
                .iter()
                .filter(|hash| !recorded.contains(*hash))
                .count()
    }
}

/// Every done file this process was given, by each path it was named by; two
/// spellings of one path (`./d.jsonl`, `d.jsonl`) are one done file.
#[derive(Debug)]
pub(crate) struct DoneFiles {
    by_path: HashMap<String, usize>,
    by_place: HashMap<PathBuf, usize>,
    files: Vec<DoneFile>,
    /// The longest a lock on one of them is waited for.
    pub(crate) wait: Duration,
}

impl Default for DoneFiles {
    fn default() -> Self {
        DoneFiles {
            by_path: HashMap::new(),
            by_place: HashMap::new(),
            files: Vec::new(),
            wait: LOCK_WAIT,
        }
    }
}

impl DoneFiles {
    /// The done file at `done_path`, known from now on if it was not.
    pub(crate) fn get(&mut self, done_path: &str) -> &mut DoneFile {
        let index = match self.by_path.get(done_path) {
            Some(&index) => index,
            None => {
                let place = resolved(done_path);
                let index = match self.by_place.get(&place) {
                    Some(&index) => index,
                    None => {
                        self.files.push(DoneFile::new(done_path, self.wait));
                        let index = self.files.len() - 1;
                        self.by_place.insert(place, index);
                        index
                    }
                };
                self.by_path.insert(done_path.to_owned(), index);
                index
            }
        };
        &mut self.files[index]
    }

    /// The done file already known at `done_path`.
    #[cfg(test)]
    pub(crate) fn get_mut(&mut self, done_path: &str) -> Option<&mut DoneFile> {
        let index = *self.by_path.get(done_path)?;
        self.files.get_mut(index)
    }
}
