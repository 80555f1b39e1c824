//! ZIP and marketplace `.tgz` archives, listed and checked entry by entry before anything
//! is read or written, then read in place (to check the package) or unpacked (to install
//! it) within [`Limits`].
//!
//! A **ZIP** is read as the app imports one (`importExtensionArchive`, on its ZIP reader
//! `fflate`), and nothing is written outside the folder it is unpacked into:
//! - names are decoded as that reader decodes them (UTF-8 when the entry's flag says
//!   so, otherwise one character per byte), and each is read with every `\` as `/` and
//!   one leading `./` dropped;
//! - the one entry named `package.json`, at any depth, sets the package root; none or
//!   several is a layout error;
//! - an entry outside a nested root (`__MACOSX/…`, `../x.txt` or `/x.txt` beside
//!   `pkg/`) is skipped unread, as the app skips it, and never written;
//! - a folder entry (a name ending in `/`) is skipped: only the folders of files are
//!   made, so an empty folder entry makes nothing;
//! - a file's path below the root is checked as the app checks it: a second leading
//!   `./` dropped, then it must be relative, without a drive letter and without an
//!   empty, `.` or `..` segment (`a//b`, `a/./b`, `../x` at the archive's root are
//!   refused, and refuse the whole archive);
//! - a path written twice (a name given twice, or `a/b` beside `./a/b` or `a\b`) keeps
//!   the copy the app writes last: its entries in JavaScript's property order (names
//!   that are array indices first, by number, then in the order each name first
//!   appears), each name holding its last record;
//! - a path that is both a file and the folder of another is refused (the app's write
//!   fails);
//! - the Unix file type of an entry is not read, as the app does not read it: a
//!   symbolic-link entry becomes a regular file holding the link's text, and no link is
//!   ever created or followed;
//! - an empty (0-byte) file is [`ArchiveError::Empty`], the app's "The extension ZIP is
//!   empty.".
//!
//! One difference stays: the app looks up a file a manifest names (icon, css, hooks)
//! by its archive name with one `./` dropped, so a file reached only through a second
//! `./` (`././icon.svg`) is installed but not found for the manifest there; here it is
//! found.
//!
//! A **`.tgz`** is read as the app's tar reader reads it: a leading `./` is dropped, and
//! [`Archive::open`] lists every entry first and refuses the whole archive for:
//! - a name that could write outside the package: absolute, with a drive letter, with a
//!   `..` segment anywhere (even `a/../b`), with a NUL, not UTF-8 or holding a
//!   backslash;
//! - a character or block device, a FIFO, or any other entry that is neither a regular
//!   file, a folder nor a link, and the links the app refuses or that could lead out of
//!   the package (see [`LinkProblem`]);
//! - an entry under a symbolic-link entry (`package/l` a link, then `package/l/x`): it
//!   would be written through the link, which the app refuses;
//! - a name given twice (after normalisation: `a/b`, `./a/b`, `a//b` are one name), or
//!   a name that is both a file and the folder of another entry;
//! - a layout that is not a package: the package must be in a `package/` folder holding
//!   `package.json` (other top-level entries are ignored, as the app ignores them, and
//!   never unpacked).
//!
//! Links in a `.tgz`, as the app unpacks them (node-tar, strict, paths not preserved)
//! and then copies the package: a **symbolic link** whose target is relative and stays
//! inside the package is unpacked as that symbolic link, with the target text as
//! given (the app's copy makes it an absolute link into its temporary folder, which it
//! then deletes; ours keeps the relative link, which still works), and reading the
//! package follows it (`main` may be such a link, to a file or a folder). A **hard
//! link** to a regular file listed before it becomes a regular file with that file's
//! bytes (which is what the app's copy of a hard link is). Refused, as the app refuses
//! them: a target that is empty or absolute, a symbolic link whose target leaves the
//! archive, a hard link whose target has a `..` segment or is not a regular file listed
//! before it. Refused although the app accepts them — so that no link we create points
//! outside the install folder and nothing is ever written through one: a symbolic link
//! of the package whose target goes above the package root at any step (`../other`,
//! which the app would leave dangling into its deleted temporary folder; and
//! `../package/x` or `../package`, which come back into `package/` in the archive but
//! not once installed, where the root is `pkg-<base64url(id)>/`: a link is judged
//! where it will live) or goes through another symbolic-link
//! entry (`l/../x` with `l` a link, whose real target is not the one it reads as).
//! Symbolic links are created last, after every file and folder, so no entry is ever
//! written through one.
//!
//! In both formats: more than [`Limits::max_entries`] entries, or more than
//! [`Limits::max_unpacked_bytes`] unpacked, refuses the archive: for a `.tgz` the bytes
//! that actually come out of the gzip decoder are counted (tar headers included) and
//! reading stops past the limit; for a ZIP the declared sizes are only an early
//! refusal, the real guard counts the bytes actually decompressed while unpacking.
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

use std::collections::{BTreeMap, HashMap};
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
        /// The first bytes, in hexadecimal.
        found: String,
    },
    /// The file is empty (0 bytes). The app's import reads it as a ZIP and refuses it
    /// with "The extension ZIP is empty.", after making the host's folders.
    #[error(
        "the archive is empty (0 bytes); the Spirit app refuses it: \"The extension ZIP is empty.\""
    )]
    Empty,
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
    /// A `.tgz` link entry that is refused (see [`LinkProblem`]).
    #[error(
        "entry `{entry}` is refused because it is a {}{} and {problem}",
        if *.hard { "hard link" } else { "symbolic link" },
        .target.as_ref().map(|target| format!(" to `{target}`")).unwrap_or_default()
    )]
    Link {
        /// The entry as named in the archive.
        entry: String,
        /// A hard link (tar) rather than a symbolic link.
        hard: bool,
        /// Where it points, as the archive says (`None` when it is not UTF-8).
        target: Option<String>,
        /// Why it is refused.
        problem: LinkProblem,
    },
    /// A `.tgz` entry under a symbolic-link entry: unpacking it would write through the
    /// link, which the app refuses.
    #[error(
        "entry `{entry}` is refused because it would be written through the symbolic link `{link}`; the Spirit app refuses an entry inside a link"
    )]
    ThroughLink {
        /// The entry as named in the archive.
        entry: String,
        /// The link entry, as named in the archive.
        link: String,
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
    /// Two entries with the same (normalised) name in a `.tgz` (a ZIP keeps the last, as
    /// the app does, unless its reader and the app's disagree on which names are one).
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
    /// `a/./b`, `./././x`), which the app refuses.
    #[error(
        "entry `{entry}` is refused because it has an empty or `.` segment; the Spirit app refuses such a name (it drops at most two leading `./`)"
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
            | ArchiveError::Empty
            | ArchiveError::Corrupt { .. }
            | ArchiveError::Unsupported { .. } => Some(codes::ARCHIVE_CORRUPT),
            ArchiveError::UnsafeName { .. }
            | ArchiveError::NotUtf8 { .. }
            | ArchiveError::ParentSegment { .. }
            | ArchiveError::DotSegment { .. }
            | ArchiveError::Link { .. }
            | ArchiveError::ThroughLink { .. }
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

/// Why a `.tgz` link entry is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkProblem {
    /// The target is empty (the app cannot create the link).
    Empty,
    /// The target is not UTF-8.
    NotUtf8,
    /// The target is absolute or has a drive letter (the app refuses it).
    Absolute,
    /// A symbolic link whose target, read from the link's folder, leaves the archive
    /// (the app refuses it).
    LeavesArchive,
    /// A symbolic link of the package whose target goes above the package root at some
    /// step, so that it leads out of the install folder (`pkg-<base64url(id)>/`) even
    /// when, read in the archive, it comes back into `package/` by name. The app
    /// accepts it (the installed link then points into its deleted temporary folder);
    /// we refuse it so that no link we create points outside the install folder.
    LeavesPackage {
        /// Where the target leads, from the archive root (`""` for the root).
        resolved: String,
    },
    /// A symbolic link of the package whose target goes through another symbolic-link
    /// entry, so that where it really leads is not where it reads as leading.
    ThroughLink {
        /// The other link, as named in the archive.
        link: String,
    },
    /// A hard link whose target has a `..` segment (the app refuses it).
    HardParent,
    /// A hard link whose target is not a regular file (or a hard link to one) listed
    /// before it: the app cannot create it (or, for a symbolic link, would make a
    /// second link whose relative target reads from another folder).
    HardTarget,
}

impl fmt::Display for LinkProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkProblem::Empty => f.write_str("its target is empty; a link needs a target"),
            LinkProblem::NotUtf8 => {
                f.write_str("its target is not UTF-8; a link target must be UTF-8")
            }
            LinkProblem::Absolute => f.write_str(
                "its target is absolute; the Spirit app refuses a link with an absolute target",
            ),
            LinkProblem::LeavesArchive => f.write_str(
                "its target leaves the archive; the Spirit app refuses a link that leads outside the folder it unpacks to",
            ),
            LinkProblem::LeavesPackage { resolved } => write!(
                f,
                "its target leads to `{}`, outside the package folder once installed (the package root is `package/` in the archive, `pkg-<base64url(id)>/` installed); a link must stay inside the package, never going above its root (the Spirit app would install a link that leads nowhere, so this is refused)",
                if resolved.is_empty() { "." } else { resolved }
            ),
            LinkProblem::ThroughLink { link } => write!(
                f,
                "its target goes through the symbolic link `{link}`; a link target must not go through another link"
            ),
            LinkProblem::HardParent => f.write_str(
                "its target has a `..` segment; the Spirit app refuses a hard link with `..`",
            ),
            LinkProblem::HardTarget => f.write_str(
                "its target is not a regular file listed before it in the archive; a hard link must name an earlier file",
            ),
        }
    }
}

/// Whether a link target is absolute as the app's tar reader sees it (a leading `/` or
/// `\`, or a drive letter).
fn absolute_target(target: &str) -> bool {
    let bytes = target.as_bytes();
    target.starts_with('/')
        || target.starts_with('\\')
        || (bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':')
}

/// Where a symbolic link at `link` (normalised, from the archive root) with the
/// relative `target` leads, from the archive root, read segment by segment (`/` and
/// `\\` both separate, as the app checks them). `symlinks` are the archive's symbolic
/// links: going through one (not as the last segment) is refused.
fn resolve_symlink(
    link: &str,
    target: &str,
    symlinks: &BTreeMap<String, String>,
) -> Result<String, LinkProblem> {
    let mut at: Vec<&str> = link.split('/').collect();
    at.pop();
    let segments: Vec<&str> = target
        .split(['/', '\\'])
        .filter(|segment| !segment.is_empty() && *segment != ".")
        .collect();
    for (position, segment) in segments.iter().enumerate() {
        if *segment == ".." {
            if at.pop().is_none() {
                return Err(LinkProblem::LeavesArchive);
            }
            continue;
        }
        at.push(segment);
        if position + 1 < segments.len()
            && let Some(name) = symlinks.get(&at.join("/"))
        {
            return Err(LinkProblem::ThroughLink { link: name.clone() });
        }
    }
    Ok(at.join("/"))
}

/// Whether a symbolic link at `link` (relative to the package root) with the relative
/// `target` goes above the package root at any step, read segment by segment from the
/// link's folder (`/` and `\\` both separate).
fn climbs_above_root(link: &str, target: &str) -> bool {
    let mut depth = link.matches('/').count();
    for segment in target.split(['/', '\\']) {
        match segment {
            "" | "." => {}
            ".." if depth == 0 => return true,
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    false
}

/// The most symbolic links followed one after the other when reading a path.
const MAX_LINK_HOPS: usize = 40;

/// One entry of the package (its path relative to the package root).
#[derive(Debug, Clone)]
struct Entry {
    /// A folder (explicit or implied by a file inside it) rather than a regular file.
    folder: bool,
    /// A symbolic link: its target as written in the archive, and where it leads
    /// relative to the package root (`""` for the root).
    symlink: Option<(String, String)>,
    /// The normalised archive path of the entry whose bytes this file holds: its own,
    /// or a hard link's target. Empty for a folder or symbolic link.
    source: String,
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
    /// A `.tgz` link and its target.
    link: Option<ListedLink>,
    index: usize,
    mode: Option<u32>,
}

/// A `.tgz` link entry's target, as written in the archive.
enum ListedLink {
    Symbolic(String),
    Hard(String),
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
        let (root, entries) = match format {
            Format::Zip => layout_zip(listed)?,
            Format::TarGz => layout_tar(listed)?,
        };
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
    /// package root, in path order; `true` for a folder (a symbolic link is `false`,
    /// whatever it leads to).
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
    /// readable and writable by the owner), `0o644` without one; folders `0o755`. The
    /// symbolic links of a `.tgz` are created last, with their target as written.
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
        let written = {
            let mut source = self.source.lock().unwrap_or_else(PoisonError::into_inner);
            match &mut *source {
                Source::Zip(zip) => self.extract_zip(zip, dest),
                Source::TarGz(file) => self.extract_tar(file, dest),
            }
        }?;
        for (path, entry) in &self.entries {
            if let Some((target, _)) = &entry.symlink {
                let link = dest.join(path);
                make_symlink(target, &link)
                    .map_err(|source| ArchiveError::Write { path: link, source })?;
            }
        }
        Ok(written)
    }

    /// The entry at `path` (relative to the package root) once the symbolic links on
    /// the way and at its end are followed: `Ok(None)` for the package root, `Err(())`
    /// for nothing there (or too many links in a row).
    fn resolve(&self, path: &str) -> Result<Option<&Entry>, ()> {
        let mut hops = 0;
        let mut at = String::new();
        for segment in path.split('/') {
            let mut next = if at.is_empty() {
                segment.to_owned()
            } else {
                format!("{at}/{segment}")
            };
            while let Some((_, resolved)) = &self.entries.get(&next).ok_or(())?.symlink {
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Err(());
                }
                next.clone_from(resolved);
                if next.is_empty() {
                    break;
                }
            }
            at = next;
        }
        if at.is_empty() {
            Ok(None)
        } else {
            self.entries.get(&at).map(Some).ok_or(())
        }
    }

    fn extract_zip(&self, zip: &mut ZipArchive<Tracked>, dest: &Path) -> Result<u64, ArchiveError> {
        let limit = self.limits.max_unpacked_bytes;
        let mut written = 0u64;
        for (path, entry) in &self.entries {
            let (false, None, Some(index)) = (entry.folder, &entry.symlink, entry.index) else {
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
        // By the index of the tar entry holding the bytes: a file and the hard links
        // to it share one.
        let mut wanted: BTreeMap<usize, Vec<(&String, &Entry)>> = BTreeMap::new();
        for (path, entry) in &self.entries {
            if let (false, None, Some(index)) = (entry.folder, &entry.symlink, entry.index) {
                wanted.entry(index).or_default().push((path, entry));
            }
        }
        let files: usize = wanted.values().map(Vec::len).sum();
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
                let Some(targets) = wanted.get(&index) else {
                    return Ok(index < last);
                };
                let Some((first, first_entry)) = targets.first() else {
                    return Ok(index < last);
                };
                self.same_entry(tar_entry, &first_entry.source)?;
                let first_target = dest.join(first.as_str());
                for (path, entry) in targets {
                    unpacked += 1;
                    let target = dest.join(path.as_str());
                    let mut out = create_file(&target).map_err(Walk::Archive)?;
                    let remaining = limit - written;
                    let copied = if std::ptr::eq(*path, *first) {
                        copy_limited(tar_entry, &mut out, remaining)
                    } else {
                        // A hard link: the bytes of the file just written.
                        File::open(&first_target)
                            .map_err(CopyError::Write)
                            .and_then(|mut from| copy_limited(&mut from, &mut out, remaining))
                    };
                    written += copied.map_err(|error| match error {
                        CopyError::Read(error) => Walk::Io(error),
                        other => Walk::Archive(self.copy_error(other, &target, &entry.name)),
                    })?;
                    finish_file(out, &target, entry.mode).map_err(Walk::Archive)?;
                }
                Ok(index < last)
            },
        )?;
        if unpacked < files {
            return Err(ArchiveError::Corrupt {
                format: Format::TarGz,
                detail: format!(
                    "it ended after {unpacked} of its {files} files: the file changed while it was being read"
                ),
            });
        }
        Ok(written)
    }

    /// Checks that the tar entry met when streaming again is the one listed as
    /// `source` (its normalised archive path; the file could have changed since it was
    /// listed).
    fn same_entry(&self, tar_entry: &tar::Entry<'_, impl Read>, source: &str) -> Result<(), Walk> {
        let name = String::from_utf8_lossy(&tar_entry.path_bytes()).into_owned();
        let same = RelativePath::parse(&name).is_ok_and(|full| full.as_str() == source);
        if same {
            Ok(())
        } else {
            Err(Walk::Archive(ArchiveError::Corrupt {
                format: Format::TarGz,
                detail: format!(
                    "entry `{name}` is not the one listed as `{source}`: the file changed while it was being read"
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
        let Ok(Some(entry)) = self.resolve(path.as_str()) else {
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
                        self.same_entry(tar_entry, &entry.source)?;
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
        match self.resolve(path.as_str()) {
            Ok(None) => FileKind::Folder,
            Ok(Some(entry)) if entry.folder => FileKind::Folder,
            Ok(Some(_)) => FileKind::File,
            Err(()) => FileKind::Missing,
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
    Ok(format_of(magic))
}

/// The format of a file starting with `magic` (its first four bytes, or all of a
/// shorter file): [`ArchiveError::Empty`] for nothing at all.
fn format_of(magic: &[u8]) -> Result<Format, ArchiveError> {
    if magic.is_empty() {
        return Err(ArchiveError::Empty);
    }
    Format::of(magic).ok_or_else(|| {
        let hex: Vec<String> = magic.iter().map(|b| format!("{b:02x}")).collect();
        ArchiveError::UnknownFormat {
            found: format!("`{}`", hex.join(" ")),
        }
    })
}

/// The format of the archive at `path`, from its first bytes.
pub(crate) fn sniff_path(path: &Path) -> Result<Format, ArchiveError> {
    let read_error = |source| ArchiveError::Read {
        path: path.to_owned(),
        source,
    };
    let mut file = File::open(path).map_err(read_error)?;
    sniff(&mut file).map_err(read_error)?
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
    // A second handle on the same open file, to read the central directory's records
    // as the app's ZIP reader reads them: every record, its name decoded its way.
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
    let records = central_records(&mut raw, zip.central_directory_start(), limits.max_entries)
        .map_err(read_error)?;
    if records.len() > limits.max_entries {
        return Err(ArchiveError::TooManyEntries {
            limit: limits.max_entries,
        });
    }
    // The ZIP reader keeps the last record of each name; which one is which, by where
    // its record starts.
    let mut kept: HashMap<u64, usize> = HashMap::with_capacity(zip.len());
    for index in 0..zip.len() {
        let entry = zip
            .by_index_raw(index)
            .map_err(|error| zip_error(error, file_error, path))?;
        kept.insert(entry.central_header_start(), index);
    }

    let mut listed = Vec::with_capacity(zip.len());
    let mut declared = 0u64;
    for (name, record) in js_object_order(&records) {
        let Some(&index) = kept.get(&records[record].at) else {
            // Two records the ZIP reader reads as one name, the app as two: which bytes
            // the app would write cannot be read here.
            return Err(ArchiveError::Duplicate {
                entry: name.clone(),
                first: name.clone(),
                path: name,
            });
        };
        let entry = zip
            .by_index_raw(index)
            .map_err(|error| zip_error(error, file_error, path))?;
        let mode = entry.unix_mode();
        // Only the name tells a folder, as the app tells it: the Unix file type is not
        // read, so a link, device, FIFO or folder-mode entry without a final `/` is a
        // regular file holding the entry's bytes.
        let folder = name.ends_with('/') || name.ends_with('\\');
        let mode = match mode.map(|mode| mode & S_IFMT) {
            None | Some(0) | Some(S_IFREG) => mode,
            Some(_) => None,
        };
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
        if !folder {
            if entry.encrypted() {
                return Err(ArchiveError::Unsupported {
                    entry: name,
                    what: "encrypted".to_owned(),
                    expected: "an unencrypted entry",
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
            path: None,
            folder,
            link: None,
            index,
            mode: mode.filter(|mode| mode & 0o7777 != 0),
        });
    }
    Ok((listed, zip))
}

/// One record of a ZIP's central directory.
struct Record {
    /// The name, decoded as the app's ZIP reader (fflate) decodes it: UTF-8 when the
    /// record's flag says so (invalid bytes as U+FFFD, a leading byte-order mark
    /// dropped, as `TextDecoder` does), otherwise one character per byte (Latin-1).
    name: String,
    /// Where the record starts in the file.
    at: u64,
}

/// The central directory records from `start`, stopping after `max + 1`.
fn central_records(file: &mut Tracked, start: u64, max: usize) -> io::Result<Vec<Record>> {
    file.seek(SeekFrom::Start(start))?;
    let mut reader = BufReader::new(file);
    let mut records = Vec::new();
    let mut fixed = [0u8; 46];
    let mut at = start;
    while records.len() <= max {
        if !read_full(&mut reader, &mut fixed)? || &fixed[..4] != b"PK\x01\x02" {
            break;
        }
        let field = |at: usize| u64::from(u16::from_le_bytes([fixed[at], fixed[at + 1]]));
        let utf8 = field(8) & 0x800 != 0;
        let mut raw = Vec::new();
        (&mut reader).take(field(28)).read_to_end(&mut raw)?;
        let skip = field(30) + field(32);
        let skipped = io::copy(&mut (&mut reader).take(skip), &mut io::sink())?;
        if skipped < skip {
            break;
        }
        let name = if utf8 {
            let text = String::from_utf8_lossy(&raw);
            text.strip_prefix('\u{feff}').unwrap_or(&text).to_owned()
        } else {
            raw.iter().map(|&byte| char::from(byte)).collect()
        };
        records.push(Record { name, at });
        at += 46 + field(28) + skip;
    }
    Ok(records)
}

/// The records as the app's object of entries holds them: one per name, holding the
/// last record of that name, in JavaScript's property order (names that are array
/// indices first, in numeric order, then the others in the order their name first
/// appears).
fn js_object_order(records: &[Record]) -> Vec<(String, usize)> {
    let mut order: Vec<(String, usize)> = Vec::with_capacity(records.len());
    let mut position: HashMap<&str, usize> = HashMap::with_capacity(records.len());
    for (index, record) in records.iter().enumerate() {
        match position.get(record.name.as_str()) {
            Some(&at) => order[at].1 = index,
            None => {
                position.insert(record.name.as_str(), order.len());
                order.push((record.name.clone(), index));
            }
        }
    }
    // Stable: the other names keep their order.
    order.sort_by_key(|(name, _)| array_index(name).map_or((1, 0), |index| (0, index)));
    order
}

/// The array index a property name is in JavaScript (its canonical decimal form, below
/// 2^32 - 1), if it is one.
fn array_index(name: &str) -> Option<u32> {
    let index: u32 = name.parse().ok()?;
    (index != u32::MAX && index.to_string() == name).then_some(index)
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
            let mut link = None;
            let folder = match header.entry_type() {
                EntryType::Regular | EntryType::Continuous => false,
                EntryType::Directory => true,
                EntryType::XGlobalHeader => return Ok(true),
                kind @ (EntryType::Symlink | EntryType::Link) => {
                    let hard = kind == EntryType::Link;
                    let target = entry.link_name_bytes().map(|target| target.into_owned());
                    let refuse = |target: Option<String>, problem| {
                        Walk::Archive(ArchiveError::Link {
                            entry: name.clone(),
                            hard,
                            target,
                            problem,
                        })
                    };
                    let target = match target.map(String::from_utf8) {
                        None => return Err(refuse(Some(String::new()), LinkProblem::Empty)),
                        Some(Err(_)) => return Err(refuse(None, LinkProblem::NotUtf8)),
                        Some(Ok(target)) => target,
                    };
                    let problem = if target.is_empty() {
                        Some(LinkProblem::Empty)
                    } else if absolute_target(&target) {
                        Some(LinkProblem::Absolute)
                    } else if hard {
                        target
                            .split(['/', '\\'])
                            .any(|segment| segment == "..")
                            .then_some(LinkProblem::HardParent)
                    } else {
                        // Read from the link's folder as named (checked below).
                        let at = entry_name(&name, Format::TarGz)
                            .ok()
                            .flatten()
                            .map(|path| path.as_str().to_owned())
                            .unwrap_or_default();
                        resolve_symlink(&at, &target, &BTreeMap::new()).err()
                    };
                    if let Some(problem) = problem {
                        return Err(refuse(Some(target), problem));
                    }
                    link = Some(if hard {
                        ListedLink::Hard(target)
                    } else {
                        ListedLink::Symbolic(target)
                    });
                    false
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
                link,
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

/// A ZIP's name as the app reads it (`normalizeArchivePath`): every `\\` a `/`, one
/// leading `./` dropped.
fn app_zip_name(name: &str) -> String {
    let slashed = name.replace('\\', "/");
    match slashed.strip_prefix("./") {
        Some(rest) => rest.to_owned(),
        None => slashed,
    }
}

/// The package root of a ZIP and its entries, as the app imports it
/// (`importExtensionArchive`): the one entry named `package.json` (at any depth) sets
/// the root; an entry outside the root is skipped unread, whatever its name; a folder
/// entry is skipped (only the folders of files are made); a file's path below the root
/// is checked as the app checks it (a second leading `./` dropped, then relative, no
/// drive letter, no empty, `.` or `..` segment); a path written twice keeps the copy
/// written last, in the app's order ([`js_object_order`]).
fn layout_zip(listed: Vec<Listed>) -> Result<(String, BTreeMap<String, Entry>), ArchiveError> {
    let named: Vec<(String, Listed)> = listed
        .into_iter()
        .map(|item| (app_zip_name(&item.name), item))
        .collect();
    let manifests: Vec<&str> = named
        .iter()
        .filter(|(name, _)| {
            name == PACKAGE_JSON
                || name
                    .strip_suffix(PACKAGE_JSON)
                    .is_some_and(|folder| folder.ends_with('/'))
        })
        .map(|(_, item)| item.name.as_str())
        .collect();
    let root = match manifests.as_slice() {
        [] => {
            return Err(ArchiveError::NoPackageJson {
                format: Format::Zip,
            });
        }
        [one] => match app_zip_name(one).rsplit_once('/') {
            Some((folder, _)) if !folder.is_empty() => format!("{folder}/"),
            _ => String::new(),
        },
        several => {
            return Err(ArchiveError::SeveralPackageJson {
                entries: several.iter().map(|name| (*name).to_owned()).collect(),
            });
        }
    };

    let mut files: BTreeMap<String, Entry> = BTreeMap::new();
    for (name, item) in named {
        let Some(relative) = name.strip_prefix(root.as_str()) else {
            continue;
        };
        if relative.is_empty() || relative.ends_with('/') {
            continue;
        }
        let path = RelativePath::parse_declared(relative).map_err(|problem| {
            let second = relative.strip_prefix("./").unwrap_or(relative);
            if second.split('/').any(|segment| segment == "..") {
                ArchiveError::ParentSegment {
                    entry: item.name.clone(),
                }
            } else if matches!(problem, PathProblem::Segment(_)) {
                ArchiveError::DotSegment {
                    entry: item.name.clone(),
                }
            } else {
                ArchiveError::UnsafeName {
                    entry: item.name.clone(),
                    problem,
                }
            }
        })?;
        let key = path.as_str().to_owned();
        files.insert(
            key.clone(),
            Entry {
                folder: false,
                symlink: None,
                source: key,
                name: item.name,
                index: Some(item.index),
                mode: item.mode,
            },
        );
    }

    let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
    // In path order, so a file comes before anything inside it.
    for (path, entry) in files {
        if let Err(file) = add_folders_of(&mut entries, &path) {
            return Err(ArchiveError::FileAndFolder {
                entry: entry.name,
                path,
                file,
            });
        }
        entries.insert(path, entry);
    }
    Ok((root, entries))
}

/// Adds the folders `path` is in to `entries` (implied folders, unless already there);
/// `Err` with the path of a file of `entries` that `path` would be inside.
fn add_folders_of(entries: &mut BTreeMap<String, Entry>, path: &str) -> Result<(), String> {
    let mut parent = path;
    while let Some((up, _)) = parent.rsplit_once('/') {
        let folder = entries.entry(up.to_owned()).or_insert(Entry {
            folder: true,
            symlink: None,
            source: String::new(),
            name: String::new(),
            index: None,
            mode: None,
        });
        if !folder.folder {
            return Err(up.to_owned());
        }
        parent = up;
    }
    Ok(())
}

/// The package root of a `.tgz` (`package/`) and the package's entries relative to it.
fn layout_tar(listed: Vec<Listed>) -> Result<(String, BTreeMap<String, Entry>), ArchiveError> {
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
    let symlinks: BTreeMap<String, String> = all
        .iter()
        .filter(|(_, item)| matches!(item.link, Some(ListedLink::Symbolic(_))))
        .map(|(path, item)| (path.clone(), item.name.clone()))
        .collect();
    // Hard links, everywhere in the archive (the app unpacks every entry): the entry
    // whose bytes each one holds (normalised path, index, mode).
    // In archive order, so that a hard link to an earlier hard link is that one's file.
    let mut hard: BTreeMap<String, (String, usize, Option<u32>)> = BTreeMap::new();
    let mut hard_links: Vec<(&String, &Listed, &String)> = all
        .iter()
        .filter_map(|(path, item)| match &item.link {
            Some(ListedLink::Hard(target)) => Some((path, item, target)),
            _ => None,
        })
        .collect();
    hard_links.sort_by_key(|(_, item, _)| item.index);
    for (path, item, target) in hard_links {
        let source = entry_name(target, Format::TarGz)
            .ok()
            .flatten()
            .and_then(|target| all.get_key_value(target.as_str()))
            .filter(|(_, file)| !file.folder && file.index < item.index)
            .and_then(|(source, file)| match &file.link {
                None => Some((source.clone(), file.index, file.mode)),
                Some(ListedLink::Hard(_)) => hard.get(source).cloned(),
                Some(ListedLink::Symbolic(_)) => None,
            });
        let Some(source) = source else {
            return Err(ArchiveError::Link {
                entry: item.name.clone(),
                hard: true,
                target: Some(target.clone()),
                problem: LinkProblem::HardTarget,
            });
        };
        hard.insert(path.clone(), source);
    }
    for (path, item) in &all {
        let mut parent = path.as_str();
        while let Some((up, _)) = parent.rsplit_once('/') {
            if let Some(link) = symlinks.get(up) {
                return Err(ArchiveError::ThroughLink {
                    entry: item.name.clone(),
                    link: link.clone(),
                });
            }
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

    if all
        .get("package/package.json")
        .is_none_or(|item| item.folder)
    {
        return Err(ArchiveError::NoPackageJson {
            format: Format::TarGz,
        });
    }
    let root = "package/".to_owned();

    let mut entries = BTreeMap::new();
    for (path, item) in all {
        let Some(relative) = path.strip_prefix(root.as_str()) else {
            continue;
        };
        if relative.is_empty() {
            continue;
        }
        if let Err(file) = add_folders_of(&mut entries, relative) {
            return Err(ArchiveError::FileAndFolder {
                entry: item.name,
                path: path.clone(),
                file: format!("{root}{file}"),
            });
        }
        let (symlink, source, index, mode) = match &item.link {
            Some(ListedLink::Symbolic(target)) => {
                let refuse = |problem| ArchiveError::Link {
                    entry: item.name.clone(),
                    hard: false,
                    target: Some(target.clone()),
                    problem,
                };
                let resolved = resolve_symlink(&path, target, &symlinks).map_err(refuse)?;
                let inside = if resolved == root.trim_end_matches('/') {
                    Some("")
                } else {
                    resolved.strip_prefix(root.as_str())
                };
                // Judged where the link will live: installed, the package root is
                // `pkg-<base64url(id)>/`, not `package/`, so a target that climbs above
                // the root leaves the package there even when, read in the archive, it
                // comes back into `package/` by name (`../package/x`, `../package`).
                let inside = inside.filter(|_| !climbs_above_root(relative, target));
                let Some(inside) = inside else {
                    return Err(refuse(LinkProblem::LeavesPackage { resolved }));
                };
                (
                    Some((target.clone(), inside.to_owned())),
                    String::new(),
                    item.index,
                    None,
                )
            }
            Some(ListedLink::Hard(_)) => match hard.get(&path) {
                Some((source, index, mode)) => (None, source.clone(), *index, *mode),
                None => (None, path.clone(), item.index, item.mode),
            },
            None => (None, path.clone(), item.index, item.mode),
        };
        entries.insert(
            relative.to_owned(),
            Entry {
                folder: item.folder,
                symlink,
                source,
                name: item.name,
                index: Some(index),
                mode,
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

/// A new symbolic link at `link` to `target` (never replacing anything).
#[cfg(unix)]
fn make_symlink(target: &str, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Symbolic links are only created on Unix.
#[cfg(not(unix))]
fn make_symlink(_target: &str, _link: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "symbolic links in a package are only unpacked on Unix",
    ))
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
