//! What the processes handing out one queue have handed out and not seen finished: one
//! file per process, `<done folder>/.local-queue/<done file name>.claims/<holder>.jsonl`,
//! one item line per hand-out, locked by its holder for as long as it lives. A file
//! nobody holds the lock of belongs to a process that ended: its items are free again.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use curupira_extension_sdk::Pair;

use crate::jsonl::{Line, append_line, parse_line};
use crate::store::{StoreError, is_locked, state_folder};
use crate::tracked::{Content, Stamp, Tracked, Trust};

/// Tells the claim files of two queues of one process apart.
static NEXT_HOLDER: AtomicU64 = AtomicU64::new(0);

/// The items a claim file lists. A line that is not an item (half a line left by a
/// crash, then completed by another append's newline) lists nothing.
#[derive(Debug, Default)]
pub(crate) struct ClaimLines {
    items: HashSet<Vec<Pair>>,
}

impl Content for ClaimLines {
    fn add(&mut self, line: Line, cap: usize) {
        if let Ok(Some(pairs)) = parse_line(&line, cap) {
            self.items.insert(pairs);
        }
    }
}

/// This process's own claim file: created at its first hand-out, locked until the
/// process ends, deleted when it ends cleanly.
#[derive(Debug)]
struct Own {
    path: PathBuf,
    name: OsString,
    file: File,
}

impl Drop for Own {
    fn drop(&mut self) {
        // The lock goes with the handle, just after; a reader in between sees a file
        // still held, then no file.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Another process's claim file, as last read.
#[derive(Debug)]
struct Other {
    file: File,
    lines: Tracked<ClaimLines>,
}

/// The claims on one done file's queue.
#[derive(Debug)]
pub(crate) struct Claims {
    /// The folder of the done file.
    done_folder: PathBuf,
    /// `<done file name>.claims`.
    folder_name: OsString,
    own: Option<Own>,
    /// What this process handed out (what its own file lists).
    own_items: HashSet<Vec<Pair>>,
    /// The live holders' files, by file name.
    others: HashMap<OsString, Other>,
}

impl Claims {
    /// The claims on the done file `done` (resolved: a folder and a name).
    pub(crate) fn new(done: &Path) -> Claims {
        let done_folder = done.parent().map(Path::to_owned).unwrap_or_default();
        let mut folder_name = done.file_name().map(OsString::from).unwrap_or_default();
        folder_name.push(".claims");
        Claims {
            done_folder,
            folder_name,
            own: None,
            own_items: HashSet::new(),
            others: HashMap::new(),
        }
    }

    fn folder(&self) -> PathBuf {
        self.done_folder
            .join(crate::store::STATE_FOLDER)
            .join(&self.folder_name)
    }

    /// Reads the claim files of the other processes: those still held, from where the
    /// last read stopped; those nobody holds are forgotten and, when `clean` (the
    /// caller holds the done file's exclusive lock, so no one is creating one), deleted.
    pub(crate) fn refresh(
        &mut self,
        now: SystemTime,
        cap: usize,
        clean: bool,
    ) -> Result<(), StoreError> {
        let folder = self.folder();
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                self.others.clear();
                return Ok(());
            }
            Err(err) => return Err(StoreError::io("list the folder", &folder)(err)),
        };
        let own = self.own.as_ref().map(|own| own.name.clone());
        let mut listed = HashSet::new();
        for entry in entries {
            let entry = entry.map_err(StoreError::io("list the folder", &folder))?;
            let name = entry.file_name();
            if Some(&name) == own.as_ref() || !name.to_string_lossy().ends_with(".jsonl") {
                continue;
            }
            let path = entry.path();
            let other = match self.others.remove(&name) {
                Some(other) => other,
                None => match File::open(&path) {
                    Ok(file) => Other {
                        file,
                        lines: Tracked::default(),
                    },
                    // Deleted since listed: its holder ended cleanly.
                    Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                    Err(err) => return Err(StoreError::io("open the claim file", &path)(err)),
                },
            };
            if !is_locked(&other.file, &path)? {
                if clean {
                    match std::fs::remove_file(&path) {
                        Ok(()) => {}
                        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                        Err(err) => {
                            return Err(StoreError::io("delete the claim file", &path)(err));
                        }
                    }
                }
                continue;
            }
            let mut other = other;
            let metadata = other
                .file
                .metadata()
                .map_err(StoreError::io("read the claim file", &path))?;
            let stamp = Stamp::of(&metadata);
            if other.lines.needs_read(stamp, Trust::Always) {
                other
                    .lines
                    .read(&other.file, stamp, now, cap)
                    .map_err(StoreError::io("read the claim file", &path))?;
            }
            listed.insert(name.clone());
            self.others.insert(name, other);
        }
        self.others.retain(|name, _| listed.contains(name));
        Ok(())
    }

    /// Whether a live process other than this one holds `pairs` (as of the last
    /// [`refresh`](Self::refresh)).
    pub(crate) fn held_by_others(&self, pairs: &[Pair]) -> bool {
        self.others
            .values()
            .any(|other| other.lines.value.items.contains(pairs))
    }

    /// Whether this process handed out `pairs`.
    pub(crate) fn is_mine(&self, pairs: &[Pair]) -> bool {
        self.own_items.contains(pairs)
    }

    /// Records that this process handed out `pairs`, whose line is `line`, in its own
    /// claim file (made, and locked for the process's life, at the first call). Call
    /// it under the done file's exclusive lock.
    pub(crate) fn claim(&mut self, pairs: &[Pair], line: &[u8]) -> Result<(), StoreError> {
        let own = match &mut self.own {
            Some(own) => own,
            slot => {
                let folder = self.done_folder.clone();
                let state = state_folder(&folder)?;
                let claims = state.join(&self.folder_name);
                std::fs::create_dir_all(&claims)
                    .map_err(StoreError::io("create the folder", &claims))?;
                slot.insert(create_own(&claims)?)
            }
        };
        append_line(&own.file, line).map_err(StoreError::io("append to", &own.path))?;
        self.own_items.insert(pairs.to_vec());
        Ok(())
    }
}

/// A new claim file in `folder`, named after this process, locked exclusively.
fn create_own(folder: &Path) -> Result<Own, StoreError> {
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|since| since.as_nanos())
        .unwrap_or_default();
    loop {
        let sequence = NEXT_HOLDER.fetch_add(1, Ordering::Relaxed);
        let name = OsString::from(format!("{}-{started}-{sequence}.jsonl", std::process::id()));
        let path = folder.join(&name);
        let opened = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(&path);
        let file = match opened {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(StoreError::io("create the claim file", &path)(err)),
        };
        // A file of its own, made just now: no one else can hold it yet.
        let own = Own { path, name, file };
        fs4::FileExt::try_lock(&own.file).map_err(|err| match err {
            fs4::TryLockError::Error(err) => StoreError::io("lock", &own.path)(err),
            fs4::TryLockError::WouldBlock => StoreError::io("lock", &own.path)(io::Error::other(
                "another process locked this process's new claim file",
            )),
        })?;
        return Ok(own);
    }
}
