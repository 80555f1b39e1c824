//! ZIP and marketplace `.tgz` archives, listed and checked entry by entry before anything
//! is read or written, then read in place (to check the package) or unpacked (to install
//! it) within [`Limits`].
//!
//! Entry names are read as the Spirit app reads them ([`entry_name`]): in a ZIP a
//! backslash is a folder separator (`dist\index.js` is `dist/index.js`), and a leading
//! `./` is dropped in both formats. [`Archive::open`] lists every entry first and
//! refuses the whole archive for:
//! - a name that could write outside the package: absolute (`/x`, `\\host\x`), with a
//!   drive letter (`C:x`), with a `..` segment anywhere (even `a/../b`, as the app
//!   refuses it), with a NUL, or (tar) not UTF-8 or holding a backslash; and, as the app
//!   refuses them, a ZIP file of the package with an empty or `.` segment (`a//b`,
//!   `a/./b`; one leading `./` is fine);
//! - in a `.tgz`, a symbolic or hard link, a character or block device, a FIFO, or any
//!   other entry that is neither a regular file nor a folder. A ZIP entry's Unix file
//!   type is not read, as the app does not read it: an entry is a folder when its name
//!   ends in `/` (or its mode says folder), otherwise a regular file holding the entry's
//!   bytes — so a symbolic-link entry becomes a file whose content is the link's text,
//!   and no link is ever created or followed;
//! - a name given twice (after normalisation: `a/b`, `./a/b`, `a//b` and, in a ZIP,
//!   `a\b` are one name), or a name that is both a file and the folder of another entry;
//! - more than [`Limits::max_entries`] entries, or more than
//!   [`Limits::max_unpacked_bytes`] unpacked: for a `.tgz` the bytes that actually come
//!   out of the gzip decoder are counted (tar headers included) and reading stops past
//!   the limit; for a ZIP the declared sizes are only an early refusal, the real guard
//!   counts the bytes actually decompressed while unpacking;
//! - a layout that is not a package: a ZIP must have exactly one file named
//!   `package.json`, whose folder is the package root (entries outside it, such as
//!   `__MACOSX/`, are not part of the package and are never unpacked); a `.tgz` must
//!   keep the package in a `package/` folder holding `package.json` (other top-level
//!   entries are ignored, as the app ignores them, and never unpacked).
//!
//! Decisions the format leaves open:
//! - the format comes from the first bytes (`PK\x03\x04` or `PK\x05\x06` for ZIP,
//!   `1f 8b` for gzip), never from the file name;
//! - pax global headers (`g`) are ignored: they name no file, and the tar reader does not
//!   apply them to later entries, so the names checked are the names unpacked; GNU sparse
//!   files are refused (their holes are bytes the limit could not count);
//! - an encrypted ZIP entry, or one compressed with anything but stored or deflate, is
//!   refused as unreadable;
//! - a folder entry naming the archive root itself (`./`) is ignored;
//! - concatenated gzip members are read as one stream (as `gzip -d` does).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use curupira_diagnostics::{Diagnostic, JsonPointer, Report};
use flate2::read::MultiGzDecoder;
use tar::EntryType;
use zip::{CompressionMethod, ZipArchive};

use crate::files::{FileKind, PackageFiles};
use crate::paths::{PathProblem, RelativePath};
use crate::{CheckError, Checked, Options, PACKAGE_JSON, codes};

/// The most entries an archive may have.
pub const MAX_ENTRIES: usize = 10_000;

/// The most bytes an archive may unpack to (256 MiB).
pub const MAX_UNPACKED_BYTES: u64 = 256 * 1024 * 1024;

/// How much an archive may hold; [`Limits::default`] is [`MAX_ENTRIES`] and
/// [`MAX_UNPACKED_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most entries (files, folders and, in a tar, every other header).
    pub max_entries: usize,
    /// The most bytes unpacked: for a `.tgz`, every byte of the decompressed tar stream;
    /// for a ZIP, the file contents.
    pub max_unpacked_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_entries: MAX_ENTRIES,
            max_unpacked_bytes: MAX_UNPACKED_BYTES,
        }
    }
}

/// The two archive formats a package comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// A ZIP archive (stored or deflate entries).
    Zip,
    /// A gzip-compressed tar, as the npm registry serves packages (`.tgz`).
    TarGz,
}

impl Format {
    /// The format whose magic bytes `start` begins with (ZIP `PK\x03\x04`, or
    /// `PK\x05\x06` for an empty ZIP; gzip `1f 8b`), if any. Four bytes are enough.
    ///
    /// ```
    /// use spirit_manifest::archive::Format;
    ///
    /// assert_eq!(Format::of(b"PK\x03\x04..."), Some(Format::Zip));
    /// assert_eq!(Format::of(&[0x1f, 0x8b, 8, 0]), Some(Format::TarGz));
    /// assert_eq!(Format::of(b"{\"name\""), None);
    /// ```
    pub fn of(start: &[u8]) -> Option<Format> {
        if start.starts_with(b"PK\x03\x04") || start.starts_with(b"PK\x05\x06") {
            Some(Format::Zip)
        } else if start.starts_with(&[0x1f, 0x8b]) {
            Some(Format::TarGz)
        } else {
            None
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Zip => "ZIP",
            Format::TarGz => "gzip-compressed tar",
        })
    }
}

/// Why an archive was refused, could not be read, or could not be unpacked.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The archive file could not be opened or read.
    #[error("could not read the archive `{}`", path.display())]
    Read {
        /// The archive.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// An unpacked file or folder could not be written.
    #[error("could not write `{}` while unpacking the archive", path.display())]
    Write {
        /// The file or folder being written.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The file is neither a ZIP nor gzip data.
    #[error(
        "the file is neither a ZIP archive (starting with `50 4b 03 04`) nor a gzip-compressed tar (starting with `1f 8b`): it starts with {found}"
    )]
    UnknownFormat {
        /// The first bytes, in hexadecimal (or `nothing` for an empty file).
        found: String,
    },
    /// The archive's structure or compressed data is broken.
    #[error("the {format} archive is corrupt: {detail}")]
    Corrupt {
        /// The format the first bytes announced.
        format: Format,
        /// What the reader said.
        detail: String,
    },
    /// An entry this reader cannot read: encrypted, compressed with another method, or a
    /// GNU sparse file.
    #[error("entry `{entry}` cannot be read because it is {what}; expected {expected}")]
    Unsupported {
        /// The entry as named in the archive.
        entry: String,
        /// What it is.
        what: String,
        /// What would be accepted.
        expected: &'static str,
    },
    /// An entry whose name could write outside the package.
    #[error(
        "entry `{entry}` is refused because {problem}; every entry must be a relative path that stays inside the archive"
    )]
    UnsafeName {
        /// The entry as named in the archive.
        entry: String,
        /// What is wrong with the name.
        problem: PathProblem,
    },
    /// A tar entry whose name is not UTF-8.
    #[error(
        "entry `{entry}` is refused because its name is not UTF-8; every entry name must be UTF-8"
    )]
    NotUtf8 {
        /// The name, with invalid bytes replaced.
        entry: String,
    },
    /// A symbolic or hard link entry.
    #[error(
        "entry `{entry}` is refused because it is a {}{}; only regular files and folders are accepted, since a link can point outside the package",
        if *.hard { "hard link" } else { "symbolic link" },
        .target.as_ref().map(|target| format!(" to `{target}`")).unwrap_or_default()
    )]
    Link {
        /// The entry as named in the archive.
        entry: String,
        /// A hard link (tar) rather than a symbolic link.
        hard: bool,
        /// Where it points, when the archive says so without reading the entry's data.
        target: Option<String>,
    },
    /// A device, FIFO, socket or other special entry.
    #[error(
        "entry `{entry}` is refused because it is {kind}; only regular files and folders are accepted"
    )]
    Special {
        /// The entry as named in the archive.
        entry: String,
        /// What it is (`a FIFO`, `a character device`, …).
        kind: String,
    },
    /// Two entries with the same (normalised) name.
    #[error(
        "entry `{entry}` is refused because it names `{path}` again, after entry `{first}`; each path may appear once"
    )]
    Duplicate {
        /// The second entry, as named in the archive.
        entry: String,
        /// The first entry with that path.
        first: String,
        /// The normalised path both name.
        path: String,
    },
    /// A file that another entry uses as a folder.
    #[error(
        "entry `{entry}` is refused because it puts `{path}` inside `{file}`, which the archive also has as a file"
    )]
    FileAndFolder {
        /// The entry inside the file.
        entry: String,
        /// Its normalised path.
        path: String,
        /// The file's normalised path.
        file: String,
    },
    /// More entries than [`Limits::max_entries`].
    #[error(
        "the archive has more than {limit} entries; an extension package may have at most {limit}"
    )]
    TooManyEntries {
        /// The limit.
        limit: usize,
    },
    /// More unpacked bytes than [`Limits::max_unpacked_bytes`].
    #[error(
        "the archive unpacks to more than {limit} bytes{}; an extension package may unpack to at most {limit} bytes",
        .entry.as_ref().map(|e| format!(" (passed in entry `{e}`)")).unwrap_or_default()
    )]
    TooLarge {
        /// The limit.
        limit: u64,
        /// The entry being read when the limit was passed, when known.
        entry: Option<String>,
    },
    /// No `package.json` where the layout needs one.
    #[error(
        "{}",
        match .format {
            Format::Zip => "the ZIP archive has no file named `package.json`; expected exactly one, whose folder is the package root",
            Format::TarGz => "the archive has no file `package/package.json`; a marketplace tarball keeps the package in a `package/` folder at its root",
        }
    )]
    NoPackageJson {
        /// The archive's format.
        format: Format,
    },
    /// A ZIP with several `package.json` files.
    #[error(
        "the ZIP archive has {} files named `package.json` ({}); expected exactly one, whose folder is the package root",
        .entries.len(), name_list(.entries)
    )]
    SeveralPackageJson {
        /// Every such entry, as named in the archive.
        entries: Vec<String>,
    },
    /// An entry name with a `..` segment (the app refuses every one, even one that
    /// stays inside).
    #[error(
        "entry `{entry}` is refused because it has a `..` segment; every entry must be a relative path without `..`"
    )]
    ParentSegment {
        /// The entry as named in the archive.
        entry: String,
    },
    /// A ZIP file entry of the package whose name has an empty or `.` segment (`a//b`,
    /// `a/./b`, `././x`), which the app refuses.
    #[error(
        "entry `{entry}` is refused because it has an empty or `.` segment; the Spirit app refuses such a name (only one leading `./` is allowed)"
    )]
    DotSegment {
        /// The entry as named in the archive.
        entry: String,
    },
}

impl ArchiveError {
    /// A report of this problem as one diagnostic about the archive `path` (file = the
    /// path as given, pointer `""`), when it is about the archive rather than I/O.
    pub fn report(&self, path: &Path) -> Option<Report> {
        let code = self.code()?;
        let file = path.display().to_string();
        let mut report = Report::new();
        report.add_file(file.clone());
        report.push(Diagnostic::error(
            code,
            file,
            JsonPointer::root(),
            self.to_string(),
        ));
        Some(report)
    }

    /// The diagnostic code (`spirit/archive-…`) of a problem of the archive itself, or
    /// `None` for an I/O error.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            ArchiveError::Read { .. } | ArchiveError::Write { .. } => None,
            ArchiveError::UnknownFormat { .. }
            | ArchiveError::Corrupt { .. }
            | ArchiveError::Unsupported { .. } => Some(codes::ARCHIVE_CORRUPT),
            ArchiveError::UnsafeName { .. }
            | ArchiveError::NotUtf8 { .. }
            | ArchiveError::ParentSegment { .. }
            | ArchiveError::DotSegment { .. }
            | ArchiveError::Link { .. }
            | ArchiveError::Special { .. }
            | ArchiveError::Duplicate { .. }
            | ArchiveError::FileAndFolder { .. } => Some(codes::ARCHIVE_ENTRY),
            ArchiveError::TooManyEntries { .. } | ArchiveError::TooLarge { .. } => {
                Some(codes::ARCHIVE_LIMIT)
            }
            ArchiveError::NoPackageJson { .. } | ArchiveError::SeveralPackageJson { .. } => {
                Some(codes::ARCHIVE_LAYOUT)
            }
        }
    }
}

/// `` `a`, `b`, `c` `` and, past five, how many more.
fn name_list(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = names
        .iter()
        .take(SHOWN)
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// One entry of the package (its path relative to the package root).
#[derive(Debug, Clone)]
struct Entry {
    /// A folder (explicit or implied by a file inside it) rather than a regular file.
    folder: bool,
    /// The name in the archive (empty for an implied folder).
    name: String,
    /// Position in the archive: the ZIP index, or the tar entry's ordinal (every header
    /// the tar reader yields counts). `None` for an implied folder.
    index: Option<usize>,
    /// The Unix mode the archive gives, if any.
    mode: Option<u32>,
}

/// One entry as listed, before the layout is applied.
struct Listed {
    name: String,
    /// `None`: the archive root itself (`./`), ignored.
    path: Option<RelativePath>,
    folder: bool,
    index: usize,
    mode: Option<u32>,
}

/// The open archive file: every read goes through [`Tracked`] so an I/O error of the
/// file itself is told apart from corrupt data.
enum Source {
    Zip(Box<ZipArchive<Tracked>>),
    TarGz(Tracked),
}

/// A listed, checked archive holding one package. It reads the package's files in place
/// ([`PackageFiles`], paths relative to the package root) and unpacks them
/// ([`Archive::extract`]).
pub struct Archive {
    path: PathBuf,
    display: String,
    format: Format,
    limits: Limits,
    /// The package root inside the archive, `""` or ending in `/`.
    root: String,
    entries: BTreeMap<String, Entry>,
    source: Mutex<Source>,
    /// The last I/O error of the archive file, set by [`Tracked`].
    file_error: Arc<Mutex<Option<io::Error>>>,
}

impl fmt::Debug for Archive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Archive")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("root", &self.root)
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl Archive {
    /// Opens `path`, lists every entry and checks it (see the module documentation):
    /// any problem refuses the whole archive before anything is read for the package.
    pub fn open(path: &Path, limits: Limits) -> Result<Archive, ArchiveError> {
        let read_error = |source| ArchiveError::Read {
            path: path.to_owned(),
            source,
        };
        let mut file = File::open(path).map_err(read_error)?;
        let format = sniff(&mut file).map_err(read_error)??;
        let file_error = Arc::new(Mutex::new(None));
        let mut tracked = Tracked {
            file,
            error: Arc::clone(&file_error),
        };
        let (listed, source) = match format {
            Format::Zip => {
                let (listed, zip) = list_zip(tracked, limits, &file_error, path)?;
                (listed, Source::Zip(Box::new(zip)))
            }
            Format::TarGz => {
                let listed = list_tar(&mut tracked, limits, &file_error, path)?;
                (listed, Source::TarGz(tracked))
            }
        };
        let (root, entries) = layout(format, listed)?;
        Ok(Archive {
            path: path.to_owned(),
            display: path.display().to_string(),
            format,
            limits,
            root,
            entries,
            source: Mutex::new(source),
            file_error,
        })
    }

    /// The archive file as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The format, from the file's first bytes.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The folder of the package root inside the archive: `""` (the archive root),
    /// `my-ext/` for a ZIP whose `package.json` is in `my-ext/`, `package/` for a `.tgz`.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The limits the archive was opened with.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The package's files and folders (implied folders included), relative to the
    /// package root, in path order; `true` for a folder.
    pub fn paths(&self) -> impl Iterator<Item = (&str, bool)> {
        self.entries
            .iter()
            .map(|(path, entry)| (path.as_str(), entry.folder))
    }

    /// Unpacks the package root's files and folders under `dest`, which must exist and
    /// be empty, and returns the bytes written.
    ///
    /// Every file goes through a counter: the moment the total passes
    /// [`Limits::max_unpacked_bytes`] unpacking stops with [`ArchiveError::TooLarge`]
    /// (whatever the archive declares). On an error, what was written so far stays in
    /// `dest`: unpack into a temporary folder and drop it. Files get the archive's mode
    /// `& 0o775 | 0o600` (no setuid, setgid, sticky or world-writable bit; always
    /// readable and writable by the owner), `0o644` without one; folders `0o755`.
    pub fn extract(&self, dest: &Path) -> Result<u64, ArchiveError> {
        for (path, entry) in &self.entries {
            if entry.folder {
                let target = dest.join(path);
                fs::create_dir(&target)
                    .and_then(|()| set_mode(&target, FOLDER_MODE))
                    .map_err(|source| ArchiveError::Write {
                        path: target,
                        source,
                    })?;
            }
        }
        let mut source = self.source.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *source {
            Source::Zip(zip) => self.extract_zip(zip, dest),
            Source::TarGz(file) => self.extract_tar(file, dest),
        }
    }

    fn extract_zip(&self, zip: &mut ZipArchive<Tracked>, dest: &Path) -> Result<u64, ArchiveError> {
        let limit = self.limits.max_unpacked_bytes;
        let mut written = 0u64;
        for (path, entry) in &self.entries {
            let (false, Some(index)) = (entry.folder, entry.index) else {
                continue;
            };
            let mut reader = zip.by_index(index).map_err(|error| self.zip_error(error))?;
            let target = dest.join(path);
            let mut out = create_file(&target)?;
            let remaining = limit - written;
            written += copy_limited(&mut reader, &mut out, remaining)
                .map_err(|error| self.copy_error(error, &target, &entry.name))?;
            finish_file(out, &target, entry.mode)?;
        }
        Ok(written)
    }

    fn extract_tar(&self, file: &mut Tracked, dest: &Path) -> Result<u64, ArchiveError> {
        let limit = self.limits.max_unpacked_bytes;
        let wanted: BTreeMap<usize, (&String, &Entry)> = self
            .entries
            .iter()
            .filter(|(_, entry)| !entry.folder)
            .filter_map(|(path, entry)| entry.index.map(|index| (index, (path, entry))))
            .collect();
        let Some(last) = wanted.keys().next_back().copied() else {
            return Ok(0);
        };
        let mut written = 0u64;
        let mut unpacked = 0usize;
        walk_tar(
            file,
            limit,
            &self.file_error,
            &self.path,
            |index, tar_entry| {
                let Some((path, entry)) = wanted.get(&index) else {
                    return Ok(index < last);
                };
                unpacked += 1;
                self.same_entry(tar_entry, path)?;
                let target = dest.join(path.as_str());
                let mut out = create_file(&target).map_err(Walk::Archive)?;
                let remaining = limit - written;
                written +=
                    copy_limited(tar_entry, &mut out, remaining).map_err(|error| match error {
                        CopyError::Read(error) => Walk::Io(error),
                        other => Walk::Archive(self.copy_error(other, &target, &entry.name)),
                    })?;
                finish_file(out, &target, entry.mode).map_err(Walk::Archive)?;
                Ok(index < last)
            },
        )?;
        if unpacked < wanted.len() {
            return Err(ArchiveError::Corrupt {
                format: Format::TarGz,
                detail: format!(
                    "it ended after {unpacked} of its {} files: the file changed while it was being read",
                    wanted.len()
                ),
            });
        }
        Ok(written)
    }

    /// Checks that the tar entry met when streaming again is the one listed at `path`
    /// (the file could have changed since it was listed).
    fn same_entry(&self, tar_entry: &tar::Entry<'_, impl Read>, path: &str) -> Result<(), Walk> {
        let name = String::from_utf8_lossy(&tar_entry.path_bytes()).into_owned();
        let same = RelativePath::parse(&name)
            .ok()
            .and_then(|full| full.as_str().strip_prefix(&self.root).map(str::to_owned))
            .is_some_and(|relative| relative == path);
        if same {
            Ok(())
        } else {
            Err(Walk::Archive(ArchiveError::Corrupt {
                format: Format::TarGz,
                detail: format!(
                    "entry `{name}` is not the one listed as `{}{path}`: the file changed while it was being read",
                    self.root
                ),
            }))
        }
    }

    /// An error while copying one entry, as an [`ArchiveError`].
    fn copy_error(&self, error: CopyError, target: &Path, entry: &str) -> ArchiveError {
        match error {
            CopyError::TooLarge => ArchiveError::TooLarge {
                limit: self.limits.max_unpacked_bytes,
                entry: Some(entry.to_owned()),
            },
            CopyError::Write(source) => ArchiveError::Write {
                path: target.to_owned(),
                source,
            },
            CopyError::Read(source) => match self.take_file_error() {
                Some(source) => ArchiveError::Read {
                    path: self.path.clone(),
                    source,
                },
                None => ArchiveError::Corrupt {
                    format: self.format,
                    detail: format!("entry `{entry}`: {source}"),
                },
            },
        }
    }

    fn take_file_error(&self) -> Option<io::Error> {
        self.file_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn zip_error(&self, error: zip::result::ZipError) -> ArchiveError {
        zip_error(error, &self.file_error, &self.path)
    }

    /// The bytes of the file at `path` (relative to the package root), at most `limit`.
    fn read_entry(&self, path: &RelativePath, limit: u64) -> Result<Vec<u8>, ArchiveError> {
        let Some(entry) = self.entries.get(path.as_str()) else {
            return Err(ArchiveError::Read {
                path: self.path.clone(),
                source: io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("the archive has no file `{}{path}`", self.root),
                ),
            });
        };
        let (false, Some(index)) = (entry.folder, entry.index) else {
            return Err(ArchiveError::Read {
                path: self.path.clone(),
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("`{}{path}` is a folder, not a file", self.root),
                ),
            });
        };
        let mut source = self.source.lock().unwrap_or_else(PoisonError::into_inner);
        let mut bytes = Vec::new();
        match &mut *source {
            Source::Zip(zip) => {
                let reader = zip.by_index(index).map_err(|error| self.zip_error(error))?;
                reader
                    .take(limit.saturating_add(1))
                    .read_to_end(&mut bytes)
                    .map_err(|error| {
                        self.copy_error(CopyError::Read(error), &self.path, &entry.name)
                    })?;
            }
            Source::TarGz(file) => {
                let mut found = false;
                walk_tar(
                    file,
                    self.limits.max_unpacked_bytes,
                    &self.file_error,
                    &self.path,
                    |at, tar_entry| {
                        if at < index {
                            return Ok(true);
                        }
                        self.same_entry(tar_entry, path.as_str())?;
                        tar_entry
                            .take(limit.saturating_add(1))
                            .read_to_end(&mut bytes)
                            .map_err(Walk::Io)?;
                        found = true;
                        Ok(false)
                    },
                )?;
                if !found {
                    return Err(ArchiveError::Corrupt {
                        format: Format::TarGz,
                        detail: format!(
                            "entry `{}` is gone: the file changed while it was being read",
                            entry.name
                        ),
                    });
                }
            }
        }
        if bytes.len() as u64 > limit {
            return Err(ArchiveError::Read {
                path: self.path.clone(),
                source: io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("`{}` is larger than {limit} bytes", entry.name),
                ),
            });
        }
        Ok(bytes)
    }
}

impl PackageFiles for Archive {
    fn kind(&self, path: &RelativePath) -> FileKind {
        match self.entries.get(path.as_str()) {
            Some(entry) if entry.folder => FileKind::Folder,
            Some(_) => FileKind::File,
            None => FileKind::Missing,
        }
    }

    fn read(&self, path: &RelativePath, limit: u64) -> io::Result<Vec<u8>> {
        self.read_entry(path, limit).map_err(|error| match error {
            ArchiveError::Read { source, .. } | ArchiveError::Write { source, .. } => source,
            // Kept whole, so that `check` can tell a corrupt entry from a failing disk.
            other => io::Error::new(io::ErrorKind::InvalidData, other),
        })
    }

    fn display_name(&self, path: &RelativePath) -> String {
        format!("{}:{path}", self.display)
    }
}

/// Checks the package in a ZIP or `.tgz` without unpacking it; a problem of the archive
/// itself is one `spirit/archive-…` diagnostic on the archive.
pub(crate) fn check(path: &Path, options: &Options) -> Result<Checked, CheckError> {
    match Archive::open(path, Limits::default()) {
        Ok(archive) => match crate::check_package(&archive, options) {
            Ok(checked) => Ok(checked),
            // An entry that lists fine but does not unpack (a bad checksum, a truncated
            // stream) is a problem of the archive, reported like the others.
            Err(source) => match source
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<ArchiveError>())
                .and_then(|error| error.report(path))
            {
                Some(report) => Ok(Checked {
                    package: None,
                    hooks: None,
                    report,
                }),
                None => Err(CheckError::Read {
                    path: path.to_owned(),
                    source,
                }),
            },
        },
        Err(error) => match error.report(path) {
            Some(report) => Ok(Checked {
                package: None,
                hooks: None,
                report,
            }),
            None => match error {
                ArchiveError::Read { path, source } | ArchiveError::Write { path, source } => {
                    Err(CheckError::Read { path, source })
                }
                other => Err(CheckError::Read {
                    path: path.to_owned(),
                    source: io::Error::other(other.to_string()),
                }),
            },
        },
    }
}

// ---------------------------------------------------------------------------------------
// Reading the file

/// The archive file, remembering its last I/O error so that a failing disk is not
/// mistaken for a corrupt archive.
struct Tracked {
    file: File,
    error: Arc<Mutex<Option<io::Error>>>,
}

impl Tracked {
    fn note<T>(&self, result: io::Result<T>) -> io::Result<T> {
        result.map_err(|error| {
            let copy = io::Error::new(error.kind(), error.to_string());
            *self.error.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
            copy
        })
    }
}

impl Read for Tracked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let result = self.file.read(buf);
        self.note(result)
    }
}

impl Seek for Tracked {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let result = self.file.seek(pos);
        self.note(result)
    }
}

/// The format from the first bytes, or the refusal of an unknown one.
fn sniff(file: &mut File) -> io::Result<Result<Format, ArchiveError>> {
    let mut magic = [0u8; 4];
    let mut filled = 0;
    while filled < magic.len() {
        let read = file.read(&mut magic[filled..])?;
        if read == 0 {
            break;
        }
        filled += read;
    }
    file.seek(SeekFrom::Start(0))?;
    let magic = &magic[..filled];
    Ok(if let Some(format) = Format::of(magic) {
        Ok(format)
    } else {
        let found = if magic.is_empty() {
            "nothing (the file is empty)".to_owned()
        } else {
            let hex: Vec<String> = magic.iter().map(|b| format!("{b:02x}")).collect();
            format!("`{}`", hex.join(" "))
        };
        Err(ArchiveError::UnknownFormat { found })
    })
}

fn zip_error(
    error: zip::result::ZipError,
    file_error: &Mutex<Option<io::Error>>,
    path: &Path,
) -> ArchiveError {
    if let Some(source) = file_error
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        return ArchiveError::Read {
            path: path.to_owned(),
            source,
        };
    }
    ArchiveError::Corrupt {
        format: Format::Zip,
        detail: error.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Listing

/// Unix file type bits.
const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFCHR: u32 = 0o020_000;
const S_IFBLK: u32 = 0o060_000;
const S_IFIFO: u32 = 0o010_000;
const S_IFSOCK: u32 = 0o140_000;

fn list_zip(
    mut file: Tracked,
    limits: Limits,
    file_error: &Arc<Mutex<Option<io::Error>>>,
    path: &Path,
) -> Result<(Vec<Listed>, ZipArchive<Tracked>), ArchiveError> {
    let read_error = |source| ArchiveError::Read {
        path: path.to_owned(),
        source,
    };
    // A second handle on the same open file, to count the central directory's records:
    // the ZIP reader keeps only the last of two entries with the same name.
    let mut raw = Tracked {
        file: file.file.try_clone().map_err(read_error)?,
        error: Arc::clone(file_error),
    };
    file.seek(SeekFrom::Start(0)).map_err(read_error)?;
    let mut zip = ZipArchive::new(file).map_err(|error| zip_error(error, file_error, path))?;
    if zip.len() > limits.max_entries {
        return Err(ArchiveError::TooManyEntries {
            limit: limits.max_entries,
        });
    }
    let records = central_names(&mut raw, zip.central_directory_start(), limits.max_entries)
        .map_err(read_error)?;
    if records.len() > limits.max_entries {
        return Err(ArchiveError::TooManyEntries {
            limit: limits.max_entries,
        });
    }
    if records.len() > zip.len() {
        let mut seen = BTreeSet::new();
        let twice = records
            .iter()
            .find(|name| !seen.insert(name.as_slice()))
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .unwrap_or_default();
        return Err(ArchiveError::Duplicate {
            entry: twice.clone(),
            first: twice.clone(),
            path: twice,
        });
    }

    let mut listed = Vec::with_capacity(zip.len());
    let mut declared = 0u64;
    for index in 0..zip.len() {
        let entry = zip
            .by_index_raw(index)
            .map_err(|error| zip_error(error, file_error, path))?;
        let name = entry.name().to_owned();
        let mode = entry.unix_mode();
        // Only a folder is told apart: the app does not read the Unix file type, so a
        // link, device or FIFO entry is a regular file holding the entry's bytes.
        let by_name = name.ends_with('/') || name.ends_with('\\');
        let kind = mode.map(|mode| mode & S_IFMT);
        let folder = by_name || kind == Some(S_IFDIR);
        let mode = match kind {
            None | Some(0) | Some(S_IFREG) | Some(S_IFDIR) => mode,
            Some(_) => None,
        };
        let path = entry_path(&name, folder, Format::Zip)?;
        if !folder {
            if entry.encrypted() {
                return Err(ArchiveError::Unsupported {
                    entry: name,
                    what: "encrypted".to_owned(),
                    expected: "an unencrypted entry",
                });
            }
            let method = entry.compression();
            if !matches!(
                method,
                CompressionMethod::Stored | CompressionMethod::Deflated
            ) {
                return Err(ArchiveError::Unsupported {
                    entry: name,
                    what: format!("compressed with {method}"),
                    expected: "stored or deflate",
                });
            }
            declared = declared.saturating_add(entry.size());
            if declared > limits.max_unpacked_bytes {
                return Err(ArchiveError::TooLarge {
                    limit: limits.max_unpacked_bytes,
                    entry: Some(name),
                });
            }
        }
        listed.push(Listed {
            name,
            path,
            folder,
            index,
            mode: mode.filter(|mode| mode & 0o7777 != 0),
        });
    }
    Ok((listed, zip))
}

/// The raw names of the central directory records from `start`, stopping after
/// `max + 1`.
fn central_names(file: &mut Tracked, start: u64, max: usize) -> io::Result<Vec<Vec<u8>>> {
    file.seek(SeekFrom::Start(start))?;
    let mut reader = BufReader::new(file);
    let mut names = Vec::new();
    let mut fixed = [0u8; 46];
    while names.len() <= max {
        if !read_full(&mut reader, &mut fixed)? || &fixed[..4] != b"PK\x01\x02" {
            break;
        }
        let field = |at: usize| u64::from(u16::from_le_bytes([fixed[at], fixed[at + 1]]));
        let mut name = Vec::new();
        (&mut reader).take(field(28)).read_to_end(&mut name)?;
        let skip = field(30) + field(32);
        let skipped = io::copy(&mut (&mut reader).take(skip), &mut io::sink())?;
        if skipped < skip {
            break;
        }
        names.push(name);
    }
    Ok(names)
}

/// Fills `buf`, or says `false` at the end of the input.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => return Ok(false),
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(true)
}

fn special_kind(kind: u32) -> String {
    match kind {
        S_IFCHR => "a character device".to_owned(),
        S_IFBLK => "a block device".to_owned(),
        S_IFIFO => "a FIFO".to_owned(),
        S_IFSOCK => "a socket".to_owned(),
        other => format!("of the unknown file type 0o{other:o}"),
    }
}

/// An entry name read as the Spirit app reads it, normalised: in a ZIP every backslash
/// is a `/`; a leading `./` (repeated) is dropped; empty and `.` segments are dropped.
/// `Ok(None)` for a name that names the archive root itself (`./`, `/` after `.`); a
/// name that is absolute, has a drive letter, a NUL, a `..` segment or (tar) a
/// backslash is refused. The result never leaves the folder it is joined to.
///
/// ```
/// use spirit_manifest::archive::{Format, entry_name};
///
/// let zip = |name| entry_name(name, Format::Zip).map(|path| path.map(|p| p.to_string()));
/// assert_eq!(zip("dist\\index.js").unwrap().as_deref(), Some("dist/index.js"));
/// assert_eq!(zip("./package.json").unwrap().as_deref(), Some("package.json"));
/// assert_eq!(zip("./").unwrap(), None);
/// assert!(zip("../evil.txt").is_err());
/// assert!(zip("a/../b").is_err());
/// assert!(zip("..\\evil.txt").is_err());
/// assert!(entry_name("dist\\index.js", Format::TarGz).is_err());
/// ```
pub fn entry_name(name: &str, format: Format) -> Result<Option<RelativePath>, ArchiveError> {
    let normalised = match format {
        Format::Zip => name.replace('\\', "/"),
        Format::TarGz => name.to_owned(),
    };
    let unsafe_name = |problem| ArchiveError::UnsafeName {
        entry: name.to_owned(),
        problem,
    };
    if normalised.split('/').any(|segment| segment == "..") {
        // Checked before anything else: `..` is refused wherever it is.
        if normalised.contains('\0') {
            return Err(unsafe_name(PathProblem::Nul));
        }
        return Err(ArchiveError::ParentSegment {
            entry: name.to_owned(),
        });
    }
    match RelativePath::parse(&normalised) {
        Ok(path) => Ok(Some(path)),
        Err(PathProblem::Empty) if !normalised.starts_with('/') => Ok(None),
        Err(problem) => Err(unsafe_name(problem)),
    }
}

/// The normalised path of an entry, `None` for a folder naming the archive root.
fn entry_path(
    name: &str,
    folder: bool,
    format: Format,
) -> Result<Option<RelativePath>, ArchiveError> {
    match entry_name(name, format)? {
        Some(path) => Ok(Some(path)),
        None if folder => Ok(None),
        None => Err(ArchiveError::UnsafeName {
            entry: name.to_owned(),
            problem: PathProblem::Empty,
        }),
    }
}

/// Why walking a tar stream stopped.
enum Walk {
    /// Reading the archive failed (limit, file error or corrupt data: told apart later).
    Io(io::Error),
    /// A decision of the visitor.
    Archive(ArchiveError),
}

/// The decompressed tar stream, failing once more than `limit` bytes came out.
struct Counting<'a, R> {
    inner: R,
    count: u64,
    limit: u64,
    exceeded: &'a std::cell::Cell<bool>,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.count = self.count.saturating_add(read as u64);
        if self.count > self.limit {
            self.exceeded.set(true);
            return Err(io::Error::other(format!(
                "the archive unpacks to more than {} bytes",
                self.limit
            )));
        }
        Ok(read)
    }
}

/// Streams the tar inside the gzip file from its start, calling `visit` with each
/// entry's ordinal and the entry while it returns `Ok(true)`.
fn walk_tar(
    file: &mut Tracked,
    limit: u64,
    file_error: &Mutex<Option<io::Error>>,
    path: &Path,
    mut visit: impl FnMut(usize, &mut tar::Entry<'_, &mut dyn Read>) -> Result<bool, Walk>,
) -> Result<(), ArchiveError> {
    file.seek(SeekFrom::Start(0))
        .map_err(|source| ArchiveError::Read {
            path: path.to_owned(),
            source,
        })?;
    let exceeded = std::cell::Cell::new(false);
    let mut counting = Counting {
        inner: MultiGzDecoder::new(BufReader::new(&mut *file)),
        count: 0,
        limit,
        exceeded: &exceeded,
    };
    let mut current: Option<String> = None;
    let result = (|| -> Result<(), Walk> {
        let reader: &mut dyn Read = &mut counting;
        let mut archive = tar::Archive::new(reader);
        let entries = archive.entries().map_err(Walk::Io)?;
        for (index, entry) in entries.enumerate() {
            let mut entry = entry.map_err(Walk::Io)?;
            current = Some(String::from_utf8_lossy(&entry.path_bytes()).into_owned());
            if !visit(index, &mut entry)? {
                break;
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(()),
        Err(Walk::Archive(error)) => Err(error),
        Err(Walk::Io(error)) => {
            if exceeded.get() {
                return Err(ArchiveError::TooLarge {
                    limit,
                    entry: current,
                });
            }
            if let Some(source) = file_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
            {
                return Err(ArchiveError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
            Err(ArchiveError::Corrupt {
                format: Format::TarGz,
                detail: error.to_string(),
            })
        }
    }
}

fn list_tar(
    file: &mut Tracked,
    limits: Limits,
    file_error: &Mutex<Option<io::Error>>,
    path: &Path,
) -> Result<Vec<Listed>, ArchiveError> {
    let mut listed = Vec::new();
    walk_tar(
        file,
        limits.max_unpacked_bytes,
        file_error,
        path,
        |index, entry| {
            if index >= limits.max_entries {
                return Err(Walk::Archive(ArchiveError::TooManyEntries {
                    limit: limits.max_entries,
                }));
            }
            let name = match String::from_utf8(entry.path_bytes().into_owned()) {
                Ok(name) => name,
                Err(error) => {
                    return Err(Walk::Archive(ArchiveError::NotUtf8 {
                        entry: String::from_utf8_lossy(error.as_bytes()).into_owned(),
                    }));
                }
            };
            let header = entry.header();
            let folder = match header.entry_type() {
                EntryType::Regular | EntryType::Continuous => false,
                EntryType::Directory => true,
                EntryType::XGlobalHeader => return Ok(true),
                kind @ (EntryType::Symlink | EntryType::Link) => {
                    let target = entry
                        .link_name_bytes()
                        .map(|target| String::from_utf8_lossy(&target).into_owned());
                    return Err(Walk::Archive(ArchiveError::Link {
                        entry: name,
                        hard: kind == EntryType::Link,
                        target,
                    }));
                }
                EntryType::Char => return Err(special(name, S_IFCHR)),
                EntryType::Block => return Err(special(name, S_IFBLK)),
                EntryType::Fifo => return Err(special(name, S_IFIFO)),
                EntryType::GNUSparse => {
                    return Err(Walk::Archive(ArchiveError::Unsupported {
                        entry: name,
                        what: "a GNU sparse file".to_owned(),
                        expected: "a regular file",
                    }));
                }
                other => {
                    return Err(Walk::Archive(ArchiveError::Special {
                        entry: name,
                        kind: format!("of the tar entry type `{}`", other.as_byte().escape_ascii()),
                    }));
                }
            };
            let path = entry_path(&name, folder, Format::TarGz).map_err(Walk::Archive)?;
            if !folder && entry.size() > limits.max_unpacked_bytes {
                return Err(Walk::Archive(ArchiveError::TooLarge {
                    limit: limits.max_unpacked_bytes,
                    entry: Some(name),
                }));
            }
            let mode = header.mode().ok();
            listed.push(Listed {
                name,
                path,
                folder,
                index,
                mode,
            });
            Ok(true)
        },
    )?;
    Ok(listed)
}

fn special(name: String, kind: u32) -> Walk {
    Walk::Archive(ArchiveError::Special {
        entry: name,
        kind: special_kind(kind),
    })
}

// ---------------------------------------------------------------------------------------
// Layout

/// The package root inside the archive and the package's entries relative to it.
fn layout(
    format: Format,
    listed: Vec<Listed>,
) -> Result<(String, BTreeMap<String, Entry>), ArchiveError> {
    // Every normalised path once; a file is never the folder of another entry.
    let mut all: BTreeMap<String, Listed> = BTreeMap::new();
    for item in listed {
        let Some(path) = &item.path else { continue };
        let key = path.as_str().to_owned();
        if let Some(first) = all.get(&key) {
            return Err(ArchiveError::Duplicate {
                entry: item.name,
                first: first.name.clone(),
                path: key,
            });
        }
        all.insert(key, item);
    }
    for (path, item) in &all {
        let mut parent = path.as_str();
        while let Some((up, _)) = parent.rsplit_once('/') {
            if all.get(up).is_some_and(|file| !file.folder) {
                return Err(ArchiveError::FileAndFolder {
                    entry: item.name.clone(),
                    path: path.clone(),
                    file: up.to_owned(),
                });
            }
            parent = up;
        }
    }

    let root = match format {
        Format::Zip => {
            let manifests: Vec<&String> = all
                .iter()
                .filter(|(path, item)| {
                    !item.folder && path.rsplit('/').next() == Some(PACKAGE_JSON)
                })
                .map(|(path, _)| path)
                .collect();
            match manifests.as_slice() {
                [] => return Err(ArchiveError::NoPackageJson { format }),
                [one] => match one.rsplit_once('/') {
                    Some((folder, _)) => format!("{folder}/"),
                    None => String::new(),
                },
                several => {
                    return Err(ArchiveError::SeveralPackageJson {
                        entries: several
                            .iter()
                            .filter_map(|path| all.get(path.as_str()))
                            .map(|item| item.name.clone())
                            .collect(),
                    });
                }
            }
        }
        Format::TarGz => {
            if all
                .get("package/package.json")
                .is_none_or(|item| item.folder)
            {
                return Err(ArchiveError::NoPackageJson { format });
            }
            "package/".to_owned()
        }
    };

    let mut entries = BTreeMap::new();
    for (path, item) in all {
        let Some(relative) = path.strip_prefix(root.as_str()) else {
            continue;
        };
        if relative.is_empty() {
            continue;
        }
        // The app takes a ZIP file's name as it is, after `\` -> `/` and one leading `./`:
        // an empty or `.` segment in it is refused there, so here too.
        if format == Format::Zip && !item.folder {
            let slashed = item.name.replace('\\', "/");
            let app = slashed.strip_prefix("./").unwrap_or(&slashed);
            if app != path {
                return Err(ArchiveError::DotSegment { entry: item.name });
            }
        }
        let mut parent = relative;
        while let Some((up, _)) = parent.rsplit_once('/') {
            entries.entry(up.to_owned()).or_insert(Entry {
                folder: true,
                name: String::new(),
                index: None,
                mode: None,
            });
            parent = up;
        }
        entries.insert(
            relative.to_owned(),
            Entry {
                folder: item.folder,
                name: item.name,
                index: Some(item.index),
                mode: item.mode,
            },
        );
    }
    Ok((root, entries))
}

// ---------------------------------------------------------------------------------------
// Writing

/// The mode of every unpacked folder.
const FOLDER_MODE: u32 = 0o755;

/// Why copying one entry stopped.
enum CopyError {
    Read(io::Error),
    Write(io::Error),
    TooLarge,
}

/// Copies at most `remaining` bytes; one byte more is [`CopyError::TooLarge`].
fn copy_limited(
    reader: &mut impl Read,
    out: &mut impl Write,
    remaining: u64,
) -> Result<u64, CopyError> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut copied = 0u64;
    let mut limited = reader.take(remaining.saturating_add(1));
    loop {
        let read = match limited.read(&mut buf) {
            Ok(0) => return Ok(copied),
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(CopyError::Read(error)),
        };
        copied += read as u64;
        if copied > remaining {
            return Err(CopyError::TooLarge);
        }
        out.write_all(&buf[..read]).map_err(CopyError::Write)?;
    }
}

/// A new file (never an existing one, never through a link), writable by the owner only
/// until [`finish_file`] gives it its mode.
fn create_file(target: &Path) -> Result<File, ArchiveError> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(target).map_err(|source| ArchiveError::Write {
        path: target.to_owned(),
        source,
    })
}

fn finish_file(out: File, target: &Path, mode: Option<u32>) -> Result<(), ArchiveError> {
    let mode = mode.map_or(0o644, |mode| mode & 0o775 | 0o600);
    drop(out);
    set_mode(target, mode).map_err(|source| ArchiveError::Write {
        path: target.to_owned(),
        source,
    })
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}
