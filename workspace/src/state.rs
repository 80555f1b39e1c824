//! The host's state folder and the lock that keeps one `curupira run` per state.
//!
//! - **The state folder** is `<config folder>/.curupira/` by default: it holds the
//!   task ledger (`ledger.sqlite`, `curupira-ledger`'s), `run.lock`, `watchdog.lock`
//!   ([`curupira_process::watchdog`]), `status.json` ([`STATUS_FILE`]), the attempts'
//!   logs (`logs/`) and the worktrees (`worktrees/`, [`crate`]).
//!   [`host_folder`] creates it with a `.gitignore` of `*`, so Git and code-search
//!   tools ignore everything in it. With `[settings.ledger] path` elsewhere, the state
//!   folder is the ledger's folder (two configs sharing one ledger share one lock).
//! - **`run.lock`** ([`RunLock`]): `run` holds an exclusive advisory lock (`flock`) on
//!   it for as long as it runs and writes its pid in it. The kernel releases the lock
//!   when the process ends, however it ends (SIGKILL included), so no stale lock can
//!   outlive a crash; the pid in the file is only for the message a second `run`
//!   prints. The file is opened close-on-exec: agents and hooks never inherit it.
//!
//! ```
//! use curupira_workspace::state::{RunLock, Locked};
//!
//! let folder = tempfile::tempdir()?;
//! let lock = folder.path().join("run.lock");
//! let first = RunLock::acquire(&lock)?;
//! // A second holder is refused while the first lives (here: this same process).
//! match RunLock::acquire(&lock) {
//!     Err(Locked::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
//!     other => panic!("{other:?}"),
//! }
//! drop(first);
//! RunLock::acquire(&lock)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read, Seek, Write};
use std::path::{Path, PathBuf};

use curupira_process::lock::{try_lock, unlock};

/// The name of the host's folder in the config's folder.
pub const HOST_FOLDER: &str = ".curupira";

/// The name of the lock file `run` holds, in the state folder.
pub const RUN_LOCK: &str = "run.lock";

/// The name of the file in the state folder where `run` publishes what it is doing
/// (`curupira_orchestrator::status`), for `curupira status` to read.
pub const STATUS_FILE: &str = "status.json";

/// Creates `<dir>/.curupira` when it does not exist, with a `.gitignore` of `*` in it,
/// and returns its path. An existing folder is left as it is.
pub fn host_folder(dir: &Path) -> io::Result<PathBuf> {
    let folder = dir.join(HOST_FOLDER);
    match std::fs::create_dir(&folder) {
        Ok(()) => std::fs::write(folder.join(".gitignore"), "*\n")?,
        Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err),
    }
    Ok(folder)
}

/// Creates `folder` (and its parents) for the host's state: through [`host_folder`]
/// when it is `<config_dir>/.curupira` or inside it, so that folder gets its
/// `.gitignore`; with `create_dir_all` otherwise.
///
/// A file in the way (the folder itself, or one of its parents) is an error that
/// names it (`it is not a folder`, or `` `PARENT` is not a folder ``), not the
/// system's "File exists".
pub fn ensure_folder(config_dir: &Path, folder: &Path) -> io::Result<()> {
    let made = if folder.starts_with(config_dir.join(HOST_FOLDER)) {
        host_folder(config_dir).and_then(|_| std::fs::create_dir_all(folder))
    } else {
        std::fs::create_dir_all(folder)
    };
    made.map_err(|err| {
        let in_way = folder
            .ancestors()
            .find(|path| path.symlink_metadata().is_ok() && !path.is_dir());
        match in_way {
            Some(path) if path == folder => io::Error::new(err.kind(), "it is not a folder"),
            Some(path) => {
                io::Error::new(err.kind(), format!("`{}` is not a folder", path.display()))
            }
            None => err,
        }
    })
}

/// Why [`RunLock::acquire`] did not get the lock.
#[derive(Debug, thiserror::Error)]
pub enum Locked {
    /// Another process holds it.
    #[error(
        "another `curupira run` ({}) is using `{}`; one host runs per state (stop it first)",
        pid.map_or_else(|| "pid unknown".to_owned(), |pid| format!("pid {pid}")),
        path.display()
    )]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// The pid the holder wrote in it, when it could be read.
        pid: Option<u32>,
    },
    /// The file cannot be opened or locked.
    #[error("cannot lock `{}`: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
}

/// How many times [`RunLock::acquire`] tries a taken lock before it says it is busy.
const LOOK_ATTEMPTS: u32 = 5;

/// The pause between those tries.
const LOOK_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// An exclusive advisory lock on a file, held until dropped or until the process ends.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    file: File,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Released now even if a child forked meanwhile still holds a copy of the
        // descriptor (see `curupira_process::lock::unlock`); closing releases it anyway.
        let _ = unlock(&self.file);
    }
}

impl RunLock {
    /// Takes the lock on `path` (created when missing) without waiting, and writes this
    /// process's id in the file.
    pub fn acquire(path: &Path) -> Result<RunLock, Locked> {
        let io_error = |source| Locked::Io {
            path: path.to_owned(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io_error)?;
        // `status` and `tasks` take the lock for an instant to see whether a host
        // holds it ([`RunLock::holder`]): a lock that stays taken for
        // `LOOK_ATTEMPTS` tries in a row is a host's, not theirs.
        let mut tries = 0;
        loop {
            match try_lock(&file) {
                Ok(true) => break,
                Ok(false) if tries + 1 < LOOK_ATTEMPTS => {
                    tries += 1;
                    std::thread::sleep(LOOK_PAUSE);
                }
                Ok(false) => {
                    return Err(Locked::Busy {
                        path: path.to_owned(),
                        pid: read_pid(&mut file),
                    });
                }
                Err(source) => return Err(io_error(source)),
            }
        }
        let written = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        written.map_err(io_error)?;
        Ok(RunLock {
            path: path.to_owned(),
            file,
        })
    }

    /// Whether some process holds the lock on `path` right now (a missing file is not
    /// held). Used by `curupira tasks` to know whether a host runs.
    pub fn is_held(path: &Path) -> io::Result<bool> {
        Ok(Self::holder(path)? != Holder::Free)
    }

    /// Who holds the lock on `path` right now, and the pid it wrote ([`Holder`]); a
    /// missing file is not held. Used by `curupira status`.
    pub fn holder(path: &Path) -> io::Result<Holder> {
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(Holder::Free),
            Err(err) => return Err(err),
        };
        // Taken (and released on drop) only to see whether it can be.
        if try_lock(&file)? {
            // Let go at once, not at close (see `unlock`), so that a host starting now
            // does not find it taken by this look.
            unlock(&file)?;
            return Ok(Holder::Free);
        }
        Ok(Holder::Held {
            pid: read_pid(&mut file),
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether a process holds a [`RunLock`] ([`RunLock::holder`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// No process holds it.
    Free,
    /// A process holds it.
    Held {
        /// The pid it wrote in the file, when it could be read (a holder that has
        /// just taken the lock may not have written it yet).
        pid: Option<u32>,
    },
}

/// The pid written in a lock file, if it holds one.
fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_folder_gets_a_gitignore_once() {
        let dir = tempfile::tempdir().unwrap();
        let folder = host_folder(dir.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(folder.join(".gitignore")).unwrap(),
            "*\n"
        );
        std::fs::write(folder.join(".gitignore"), "mine\n").unwrap();
        host_folder(dir.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(folder.join(".gitignore")).unwrap(),
            "mine\n"
        );
        let elsewhere = dir.path().join("state/deep");
        ensure_folder(dir.path(), &elsewhere).unwrap();
        assert!(elsewhere.is_dir() && !elsewhere.join(".gitignore").exists());
    }

    #[test]
    fn a_file_in_the_way_of_the_state_folder_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("state"), "").unwrap();
        let itself = ensure_folder(dir.path(), &dir.path().join("state")).unwrap_err();
        assert_eq!(itself.to_string(), "it is not a folder");
        let below = ensure_folder(dir.path(), &dir.path().join("state/deep")).unwrap_err();
        assert_eq!(
            below.to_string(),
            format!("`{}` is not a folder", dir.path().join("state").display())
        );
        std::fs::write(dir.path().join(HOST_FOLDER), "").unwrap();
        let host = ensure_folder(dir.path(), &dir.path().join(HOST_FOLDER)).unwrap_err();
        assert_eq!(host.to_string(), "it is not a folder");
    }

    #[test]
    fn a_lock_is_exclusive_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RUN_LOCK);
        assert!(!RunLock::is_held(&path).unwrap());
        let lock = RunLock::acquire(&path).unwrap();
        assert!(RunLock::is_held(&path).unwrap());
        let busy = RunLock::acquire(&path).unwrap_err();
        let message = busy.to_string();
        assert!(
            message.starts_with(&format!(
                "another `curupira run` (pid {}) is using `",
                std::process::id()
            )),
            "{message}"
        );
        drop(lock);
        assert!(!RunLock::is_held(&path).unwrap());
    }
}
