//! Which queue handed out an item, found from its pairs alone: `.local-queue/index.jsonl`
//! in the working directory, one line per item and queue the first time a poll there
//! hands it out. `trigger/onStarted` and `trigger/onFinished` carry only the pairs, and
//! a host may send them to a process that never polled (the reference host starts one
//! per call): this is how that process finds the done file.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use curupira_task_identity::TaskId;
use serde::{Deserialize, Serialize};

use crate::arguments::Queue;
use crate::jsonl::{Line, append_line};
use crate::store::{Access, LOCK_WAIT, StoreError, is_same_file, lock, state_folder};
use crate::tracked::{Content, Stamp, Tracked, Trust};

/// The index's file name inside its `.local-queue` folder.
const FILE_NAME: &str = "index.jsonl";

/// One line of the index: an item's task identity and the queue (both paths resolved)
/// that handed it out.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    task: TaskId,
    path: String,
    done_path: String,
}

/// The index as read: per task, the queues that handed it out, in the order first
/// recorded; and every queue it names.
#[derive(Debug, Default)]
pub(crate) struct IndexLines {
    by_task: HashMap<TaskId, Vec<Queue>>,
    queues: Vec<Queue>,
    known: HashSet<Queue>,
}

impl IndexLines {
    fn insert(&mut self, task: TaskId, queue: Queue) {
        let queues = self.by_task.entry(task).or_default();
        if !queues.contains(&queue) {
            queues.push(queue.clone());
        }
        if self.known.insert(queue.clone()) {
            self.queues.push(queue);
        }
    }

    fn has(&self, task: &TaskId, queue: &Queue) -> bool {
        self.by_task
            .get(task)
            .is_some_and(|queues| queues.contains(queue))
    }
}

impl Content for IndexLines {
    fn add(&mut self, line: Line, _cap: usize) {
        // Anything else (half a line a crash left, completed by the next append's
        // newline) records nothing.
        if let Ok(record) = serde_json::from_slice::<Record>(line.content()) {
            self.insert(
                record.task,
                Queue {
                    path: record.path,
                    done_path: record.done_path,
                },
            );
        }
    }
}

/// The index of one working directory.
#[derive(Debug)]
pub(crate) struct Index {
    /// The folder it is kept in (its `.local-queue` subfolder, that is).
    folder: PathBuf,
    file: Option<File>,
    lines: Tracked<IndexLines>,
    /// The longest a lock on it is waited for.
    pub(crate) wait: Duration,
}

impl Index {
    /// The index kept in `folder/.local-queue/index.jsonl`.
    pub(crate) fn new(folder: PathBuf) -> Index {
        Index {
            folder,
            file: None,
            lines: Tracked::default(),
            wait: LOCK_WAIT,
        }
    }

    fn path(&self) -> PathBuf {
        self.folder.join(crate::store::STATE_FOLDER).join(FILE_NAME)
    }

    /// The index file, opened anew when its path names another file than the one
    /// open (it was deleted or replaced); made when missing if `create`, else left
    /// closed.
    fn open(&mut self, create: bool) -> Result<(), StoreError> {
        let path = self.path();
        if let Some(file) = &self.file
            && !is_same_file(file, &path).map_err(StoreError::io("open the index", &path))?
        {
            self.file = None;
        }
        if self.file.is_none() {
            if create {
                state_folder(&self.folder)?;
            }
            let opened = OpenOptions::new()
                .read(true)
                .append(true)
                .create(create)
                .open(&path);
            match opened {
                Ok(file) => self.file = Some(file),
                Err(err) if err.kind() == io::ErrorKind::NotFound && !create => {}
                Err(err) => return Err(StoreError::io("open the index", &path)(err)),
            }
        }
        Ok(())
    }

    /// Records that `queue` (its paths resolved) handed out the item `task`, unless
    /// the index already says so.
    pub(crate) fn record(
        &mut self,
        task: TaskId,
        queue: &Queue,
        now: SystemTime,
        cap: usize,
    ) -> Result<(), StoreError> {
        if self.lines.value.has(&task, queue) {
            return Ok(());
        }
        let path = self.path();
        self.open(true)?;
        let Some(file) = &self.file else {
            return Ok(());
        };
        let _locked = lock(
            file,
            &path.display().to_string(),
            Access::Exclusive,
            self.wait,
        )?;
        refresh(&mut self.lines, file, &path, now, cap)?;
        if self.lines.value.has(&task, queue) {
            return Ok(());
        }
        let record = Record {
            task,
            path: queue.path.clone(),
            done_path: queue.done_path.clone(),
        };
        let mut line = serde_json::to_string(&record)
            .map_err(|err| StoreError::io("write", &path)(io::Error::other(err)))?;
        line.push('\n');
        append_line(file, line.as_bytes()).map_err(StoreError::io("append to", &path))?;
        self.lines.value.insert(task, queue.clone());
        Ok(())
    }

    /// The queues that handed out the item `task`, in the order first recorded; and
    /// every queue the index names. Nothing when there is no index (it is not made).
    pub(crate) fn lookup(
        &mut self,
        task: &TaskId,
        now: SystemTime,
        cap: usize,
    ) -> Result<(Vec<Queue>, Vec<Queue>), StoreError> {
        let path = self.path();
        self.open(false)?;
        if let Some(file) = &self.file {
            let _locked = lock(file, &path.display().to_string(), Access::Shared, self.wait)?;
            refresh(&mut self.lines, file, &path, now, cap)?;
        }
        let lines = &self.lines.value;
        let queues = lines.by_task.get(task).cloned().unwrap_or_default();
        Ok((queues, lines.queues.clone()))
    }
}

/// Reads what was appended to the index since the last read.
fn refresh(
    lines: &mut Tracked<IndexLines>,
    file: &File,
    path: &Path,
    now: SystemTime,
    cap: usize,
) -> Result<(), StoreError> {
    let metadata = file
        .metadata()
        .map_err(StoreError::io("read the index", path))?;
    let stamp = Stamp::of(&metadata);
    if lines.needs_read(stamp, Trust::Always) {
        lines
            .read(file, stamp, now, cap)
            .map_err(StoreError::io("read the index", path))?;
    }
    Ok(())
}
