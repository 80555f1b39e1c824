//! What every file of a queue's record shares: the errors of reading and writing them,
//! advisory locks taken for one read or one append (never for a process's life), and
//! the `.local-queue` folders that hold the record of hand-outs.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use fs4::TryLockError;

/// The folder, beside a done file and in the working directory, that holds
/// local-queue's record of hand-outs; it ignores itself for Git (a `.gitignore` of
/// `*`).
pub(crate) const STATE_FOLDER: &str = ".local-queue";

/// The longest a read or an append waits for another process to let go of a file's
/// lock. Each process holds one only for one poll's decision or one append, so this
/// is only reached when something else holds it (such as an earlier build of
/// `local-queue`, which held a done file's lock for its life).
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Why a file of a queue's record could not be read or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    /// An I/O error, with what was being done and to which file.
    #[error("cannot {doing} `{path}`: {source}")]
    Io {
        /// What was being done (`open the done file`).
        doing: &'static str,
        /// The file, as named.
        path: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// Another process held the file's lock for longer than [`LOCK_WAIT`].
    #[error(
        "`{path}` stayed locked by another process for {waited:?} (each `local-queue` \
         locks it for one read or one append at a time; a program holding it longer, \
         such as an earlier build of `local-queue`, must end first)"
    )]
    Busy {
        /// The file, as named.
        path: String,
        /// How long was waited.
        waited: Duration,
    },
}

impl StoreError {
    /// An I/O error doing `doing` to `path`.
    pub(crate) fn io(
        doing: &'static str,
        path: impl AsRef<Path>,
    ) -> impl FnOnce(io::Error) -> Self {
        let path = path.as_ref().display().to_string();
        move |source| StoreError::Io {
            doing,
            path,
            source,
        }
    }
}

/// Shared (readers) or exclusive (a writer, or a poll deciding what to hand out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Shared,
    Exclusive,
}

/// A lock held on a file until this is dropped. It owns a duplicate of the handle
/// (`flock` locks belong to the open file both share), so the file's owner stays free
/// to use its own.
#[derive(Debug)]
pub(crate) struct Locked {
    file: File,
}

impl Drop for Locked {
    fn drop(&mut self) {
        // Closing the last handle would release it too; this one may not be the last.
        let _ = fs4::FileExt::unlock(&self.file);
    }
}

/// Locks `file` (named `path` in messages), waiting up to `wait` for another holder.
pub(crate) fn lock(
    file: &File,
    path: &str,
    access: Access,
    wait: Duration,
) -> Result<Locked, StoreError> {
    let file = file.try_clone().map_err(StoreError::io("lock", path))?;
    let deadline = Instant::now() + wait;
    let mut pause = Duration::from_millis(1);
    loop {
        let tried = match access {
            Access::Shared => fs4::FileExt::try_lock_shared(&file),
            Access::Exclusive => fs4::FileExt::try_lock(&file),
        };
        match tried {
            Ok(()) => return Ok(Locked { file }),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(25));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::Busy {
                    path: path.to_owned(),
                    waited: wait,
                });
            }
            Err(TryLockError::Error(err)) => return Err(StoreError::io("lock", path)(err)),
        }
    }
}

/// Whether another process holds an exclusive lock on `file` now (a holder's own
/// record is locked for as long as it lives, so this says whether it is alive).
pub(crate) fn is_locked(file: &File, path: &Path) -> Result<bool, StoreError> {
    match fs4::FileExt::try_lock_shared(file) {
        Ok(()) => {
            let _ = fs4::FileExt::unlock(file);
            Ok(false)
        }
        Err(TryLockError::WouldBlock) => Ok(true),
        Err(TryLockError::Error(err)) => Err(StoreError::io("lock", path)(err)),
    }
}

/// `folder/.local-queue`, made (with its `.gitignore`) when it does not exist.
pub(crate) fn state_folder(folder: &Path) -> Result<PathBuf, StoreError> {
    let state = folder.join(STATE_FOLDER);
    std::fs::create_dir_all(&state).map_err(StoreError::io("create the folder", &state))?;
    let ignore = state.join(".gitignore");
    match File::create_new(&ignore) {
        Ok(file) => {
            use std::io::Write;
            (&file)
                .write_all(b"# local-queue's record of hand-outs: not for Git.\n*\n")
                .map_err(StoreError::io("write", &ignore))?;
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(StoreError::io("create", &ignore)(err)),
    }
    Ok(state)
}

/// Where `path` is, independent of how it is spelled (`./d.jsonl`, `d.jsonl`): its
/// folder resolved (symbolic links and all), then its name. The file itself need not
/// exist; when its folder does not either, the path made absolute.
pub(crate) fn resolved(path: &str) -> PathBuf {
    let path = Path::new(path);
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    match (absolute.parent(), absolute.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|parent| parent.join(name))
            .unwrap_or(absolute),
        _ => absolute,
    }
}

/// Whether `path` names the file `file` is open on (false when nothing is there). Only
/// Unix can tell (device and inode); elsewhere a file that exists is taken for it.
pub(crate) fn is_same_file(file: &File, path: &Path) -> io::Result<bool> {
    let named = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let open = file.metadata()?;
        Ok(open.dev() == named.dev() && open.ino() == named.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (file, named);
        Ok(true)
    }
}
