//! Exclusive advisory locks on open files (`flock(2)` on Unix, `std`'s file locks
//! elsewhere): released by the kernel when the process ends, however it ends, so no
//! stale lock outlives a crash.
//!
//! ```
//! use curupira_process::lock::try_lock;
//!
//! let folder = tempfile::tempdir()?;
//! let path = folder.path().join("run.lock");
//! let first = std::fs::File::create(&path)?;
//! let second = std::fs::File::open(&path)?;
//! assert!(try_lock(&first)?);
//! // A second open file of the same path is refused while the first holds it.
//! assert!(!try_lock(&second)?);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs::File;
use std::io;

/// Tries to take an exclusive `flock` on `file`: `false` when another open file holds
/// one.
#[cfg(unix)]
pub fn try_lock(file: &File) -> io::Result<bool> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(err) => Err(err.into()),
    }
}

/// Takes an exclusive `flock` on `file`, waiting as long as another holds it.
#[cfg(unix)]
pub fn lock_blocking(file: &File) -> io::Result<()> {
    use rustix::fs::{FlockOperation, flock};
    loop {
        match flock(file, FlockOperation::LockExclusive) {
            Err(rustix::io::Errno::INTR) => {}
            other => return other.map_err(Into::into),
        }
    }
}

/// Releases the lock `file` holds, at once. Closing the file releases it too, but only
/// once every copy of the descriptor is closed: a child forked by another thread holds
/// a copy until it execs, so a holder that means to let go unlocks first.
#[cfg(unix)]
pub fn unlock(file: &File) -> io::Result<()> {
    use rustix::fs::{FlockOperation, flock};
    flock(file, FlockOperation::Unlock).map_err(Into::into)
}

/// Elsewhere than Unix: `std`'s file locks.
#[cfg(not(unix))]
pub fn unlock(file: &File) -> io::Result<()> {
    file.unlock()
}

/// Elsewhere than Unix: `std`'s file locks.
#[cfg(not(unix))]
pub fn try_lock(file: &File) -> io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(err)) => Err(err),
    }
}

/// Elsewhere than Unix: `std`'s file locks.
#[cfg(not(unix))]
pub fn lock_blocking(file: &File) -> io::Result<()> {
    file.lock()
}
