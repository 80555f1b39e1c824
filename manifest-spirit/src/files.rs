//! The files of a package, wherever they are: a folder on disk or an archive.
//!
//! The validator asks two questions of a package — what is at this relative path, and
//! what are its bytes — so the same rules check a folder and a ZIP or `.tgz` without
//! unpacking it.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::RelativePath;

/// What a relative path names in a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file (possibly reached through a symlink that stays inside).
    File,
    /// A folder.
    Folder,
    /// Something else: a device, a FIFO, a socket.
    Special,
    /// Nothing, or a symlink whose target is missing.
    Missing,
    /// A symlink, or a path through one, that resolves outside the package; in an
    /// archive, any link entry.
    Escapes {
        /// Where it leads, as far as known.
        target: String,
    },
}

/// Read access to the files of one package.
pub trait PackageFiles {
    /// What `path` names.
    fn kind(&self, path: &RelativePath) -> FileKind;

    /// The bytes of the regular file at `path`, refusing more than `limit` bytes.
    fn read(&self, path: &RelativePath, limit: u64) -> io::Result<Vec<u8>>;

    /// The name diagnostics show for the file at `path` (`my-ext/cli-hooks.json`,
    /// `my-ext.zip:cli-hooks.json`).
    fn display_name(&self, path: &RelativePath) -> String;
}

/// A package folder on disk.
#[derive(Debug, Clone)]
pub struct Folder {
    root: PathBuf,
    /// The root with every symlink resolved, to tell where links lead.
    canonical_root: Option<PathBuf>,
    display_root: String,
}

impl Folder {
    /// The package whose `package.json` is in `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let canonical_root = fs::canonicalize(&root).ok();
        let display_root = root.display().to_string();
        Self {
            root,
            canonical_root,
            display_root,
        }
    }

    /// The folder as given.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl PackageFiles for Folder {
    fn kind(&self, path: &RelativePath) -> FileKind {
        let full = self.root.join(path.as_str());
        let Some(root) = &self.canonical_root else {
            return FileKind::Missing;
        };
        let resolved = match fs::canonicalize(&full) {
            Ok(resolved) => resolved,
            // Nothing, or a dangling symlink (wherever it points): the Spirit app finds
            // no file there either.
            Err(_) => return FileKind::Missing,
        };
        if !resolved.starts_with(root) {
            return FileKind::Escapes {
                target: resolved.display().to_string(),
            };
        }
        match fs::metadata(&resolved) {
            Ok(meta) if meta.is_file() => FileKind::File,
            Ok(meta) if meta.is_dir() => FileKind::Folder,
            Ok(_) => FileKind::Special,
            Err(_) => FileKind::Missing,
        }
    }

    fn read(&self, path: &RelativePath, limit: u64) -> io::Result<Vec<u8>> {
        let file = fs::File::open(self.root.join(path.as_str()))?;
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the file is larger than {limit} bytes"),
            ));
        }
        Ok(bytes)
    }

    fn display_name(&self, path: &RelativePath) -> String {
        join_display(&self.display_root, path.as_str())
    }
}

/// `root/file`, without doubling a trailing `/` and without `./` for the current folder.
pub(crate) fn join_display(root: &str, file: &str) -> String {
    if root.is_empty() || root == "." {
        file.to_owned()
    } else if root.ends_with('/') {
        format!("{root}{file}")
    } else {
        format!("{root}/{file}")
    }
}

/// The most bytes read from one JSON file of a package (`package.json`, the hooks
/// file): far above any real one, low enough that a hostile file cannot exhaust memory.
pub const MAX_JSON_BYTES: u64 = 16 * 1024 * 1024;
