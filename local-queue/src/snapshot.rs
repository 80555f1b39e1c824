//! What spares a poll reading a file that did not change: the file's parsed content
//! kept with a stamp of its metadata, trusted only once the file has settled.

use std::fs::Metadata;
use std::io;
use std::time::{Duration, SystemTime};

/// How much older than the moment of reading a file's times must be before its stamp
/// is trusted: more than the coarsest common timestamp granularity (2 s on FAT) plus
/// the lag of the kernel's file-time clock.
const SETTLE_TIME: Duration = Duration::from_secs(3);

/// A file's parsed content, with the stamp of the file it came from.
#[derive(Debug)]
pub(crate) struct Snapshot<T> {
    /// `None`: the file did not exist.
    pub(crate) stamp: Option<Stamp>,
    /// The stamp is old enough that any later change to the file changes it.
    pub(crate) settled: bool,
    /// Which read made this snapshot.
    pub(crate) read: u64,
    /// The parsed content.
    pub(crate) value: T,
}

impl<T> Snapshot<T> {
    /// Whether the file, now stamped `stamp`, still holds this content.
    pub(crate) fn is_current(&self, stamp: Option<Stamp>) -> bool {
        self.settled && self.stamp == stamp
    }
}

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    /// Device, inode and status-change time (a rename over the file, or a write whose
    /// modification time was set back, still shows).
    #[cfg(unix)]
    node: (u64, u64, i64, i64),
}

impl Stamp {
    fn of(metadata: &Metadata) -> Stamp {
        Stamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            node: {
                use std::os::unix::fs::MetadataExt;
                (
                    metadata.dev(),
                    metadata.ino(),
                    metadata.ctime(),
                    metadata.ctime_nsec(),
                )
            },
        }
    }

    /// Whether the file's times are at least [`SETTLE_TIME`] older than `now`.
    pub(crate) fn settled(&self, now: SystemTime) -> bool {
        let Some(modified) = self.modified else {
            return false;
        };
        #[cfg(unix)]
        let newest = {
            let (_, _, secs, nanos) = self.node;
            let changed = u64::try_from(secs)
                .ok()
                .zip(u32::try_from(nanos).ok())
                .map(|(secs, nanos)| SystemTime::UNIX_EPOCH + Duration::new(secs, nanos));
            match changed {
                Some(changed) => modified.max(changed),
                None => return false,
            }
        };
        #[cfg(not(unix))]
        let newest = modified;
        newest
            .checked_add(SETTLE_TIME)
            .is_some_and(|settled| settled < now)
    }
}

/// The stamp of the file at `path`; `None` when it does not exist.
pub(crate) fn stamp_of(path: &str) -> io::Result<Option<Stamp>> {
    match std::fs::metadata(path) {
        Ok(metadata) => Ok(Some(Stamp::of(&metadata))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}
