//! What spares a poll reading a whole file again: each file's parsed content, kept
//! with a stamp of its metadata and the offset read up to, so that an unchanged file
//! is not read at all and a grown one is read only from where the last read stopped.

use std::fs::{File, Metadata};
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::time::{Duration, SystemTime};

use crate::jsonl::{Line, Lines};

/// How much older than the moment of reading a file's times must be before its stamp
/// is trusted: more than the coarsest common timestamp granularity (2 s on FAT) plus
/// the lag of the kernel's file-time clock.
const SETTLE_TIME: Duration = Duration::from_secs(3);

/// How many bytes before the offset read up to are kept and compared before a grown
/// file is read from that offset: a file rewritten rather than appended to shows there.
const TAIL_BYTES: u64 = 64;

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
    /// The stamp of the file `metadata` describes.
    pub(crate) fn of(metadata: &Metadata) -> Stamp {
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

    /// Whether both stamps are of the same file (device and inode; elsewhere than
    /// Unix, assumed).
    fn same_file(&self, other: &Stamp) -> bool {
        #[cfg(unix)]
        return self.node.0 == other.node.0 && self.node.1 == other.node.1;
        #[cfg(not(unix))]
        {
            let _ = other;
            true
        }
    }

    /// Whether the file's times are at least [`SETTLE_TIME`] older than `now`.
    fn settled(&self, now: SystemTime) -> bool {
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

/// When an unchanged stamp means an unchanged file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// Once the file has settled: a file written within a timestamp tick of being read
    /// could change again, to the same size, without its stamp changing.
    Settled,
    /// At once: for a file only this process writes (others may append, which
    /// changes its size).
    Always,
}

/// What a file's lines build up.
pub(crate) trait Content: Default {
    /// Takes in one complete line (`\n`-terminated), in file order.
    fn add(&mut self, line: Line, cap: usize);
}

/// A file's content as of its last read, and where that read stopped.
#[derive(Debug, Default)]
pub(crate) struct Tracked<T> {
    /// The stamp when last read; `None` before the first read.
    stamp: Option<Stamp>,
    /// The stamp was settled then.
    settled: bool,
    /// The bytes up to the end of the last complete line read. A final line without
    /// its newline is not read yet: it is still being written.
    offset: u64,
    /// The last [`TAIL_BYTES`] (or fewer) bytes before `offset`.
    tail: Vec<u8>,
    /// Complete lines read, so the next is numbered `lines + 1`.
    lines: u64,
    /// Grows each time the content is thrown away and read from the start: content
    /// of one generation only ever grows.
    generation: u64,
    /// How many times the file was read, from the start or from `offset`.
    reads: u64,
    /// The content of the lines read.
    pub(crate) value: T,
}

impl<T: Content> Tracked<T> {
    /// Counts the times the content was thrown away (see the field).
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// How many times the file was read (from the start or from where the last read
    /// stopped).
    #[cfg(test)]
    pub(crate) fn reads(&self) -> u64 {
        self.reads
    }

    /// Whether the file, now stamped `stamp`, may hold more than was read.
    pub(crate) fn needs_read(&self, stamp: Stamp, trust: Trust) -> bool {
        self.stamp != Some(stamp) || !(self.settled || trust == Trust::Always)
    }

    /// Forgets the content of a file that no longer exists.
    pub(crate) fn clear(&mut self) {
        if self.stamp.is_some() || self.offset > 0 {
            *self = Tracked {
                generation: self.generation + 1,
                reads: self.reads,
                ..Tracked::default()
            };
        }
    }

    /// Brings the content up to date with `file`, stamped `stamp` just before: only
    /// the bytes after `offset` when the file grew and its bytes before `offset` still
    /// end as they did, else all of it.
    pub(crate) fn read(
        &mut self,
        mut file: &File,
        stamp: Stamp,
        now: SystemTime,
        cap: usize,
    ) -> io::Result<()> {
        let grown = self
            .stamp
            .is_some_and(|old| old.same_file(&stamp) && stamp.len > self.offset)
            && self.tail_matches(file)?;
        if !grown {
            *self = Tracked {
                generation: self.generation + 1,
                reads: self.reads,
                ..Tracked::default()
            };
        }
        self.reads += 1;
        file.seek(SeekFrom::Start(self.offset))?;
        let mut lines = Lines::new(BufReader::new(file), self.lines + 1, cap);
        while let Some(line) = lines.next_line()? {
            if !line.terminated {
                break;
            }
            self.offset += line.consumed;
            self.lines = line.number;
            self.value.add(line, cap);
        }
        let kept = self.offset.min(TAIL_BYTES);
        self.tail = vec![0; usize::try_from(kept).unwrap_or(0)];
        file.seek(SeekFrom::Start(self.offset - kept))?;
        file.read_exact(&mut self.tail)?;
        self.stamp = Some(stamp);
        self.settled = stamp.settled(now);
        Ok(())
    }

    /// The last line of the file as last read, when it has no newline yet: its number
    /// and its bytes so far. It counts once its newline is written.
    pub(crate) fn unterminated_tail(&self) -> Option<(u64, u64)> {
        let stamp = self.stamp?;
        (stamp.len > self.offset).then(|| (self.lines + 1, stamp.len - self.offset))
    }

    /// Whether the bytes before `offset` are still the ones read there.
    /// Whether the file, whose stamp is `stamp` now, is unchanged since it was read
    /// whole up to a line's end (so it ends with a newline, or is empty).
    pub(crate) fn read_to_line_end(&self, stamp: Stamp) -> bool {
        self.stamp == Some(stamp) && stamp.len == self.offset
    }

    /// Takes in what this process just appended to the file (`bytes`, whole lines)
    /// as a read would, without reading. Only call it when the file was unchanged
    /// since read before the append ([`read_to_line_end`](Self::read_to_line_end));
    /// its stamp is now `stamp`. Should it not be exactly that plus `bytes` (another
    /// file, another length), nothing is taken in and the next read reads it.
    pub(crate) fn appended(&mut self, bytes: &[u8], stamp: Stamp, cap: usize) {
        let exact = self.stamp.is_some_and(|old| old.same_file(&stamp))
            && stamp.len == self.offset.saturating_add(bytes.len() as u64)
            && bytes.ends_with(b"\n");
        if !exact {
            return;
        }
        let mut lines = Lines::new(bytes, self.lines + 1, cap);
        while let Ok(Some(line)) = lines.next_line() {
            self.offset += line.consumed;
            self.lines = line.number;
            self.value.add(line, cap);
        }
        self.tail.extend_from_slice(bytes);
        let cut = self
            .tail
            .len()
            .saturating_sub(usize::try_from(TAIL_BYTES).unwrap_or(usize::MAX));
        self.tail.drain(..cut);
        self.stamp = Some(stamp);
    }

    fn tail_matches(&self, mut file: &File) -> io::Result<bool> {
        let kept = self.tail.len() as u64;
        file.seek(SeekFrom::Start(self.offset - kept))?;
        let mut now = vec![0; self.tail.len()];
        match file.read_exact(&mut now) {
            Ok(()) => Ok(now == self.tail),
            Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
            Err(err) => Err(err),
        }
    }
}
