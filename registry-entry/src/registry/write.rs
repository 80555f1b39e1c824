//! Atomic replacement: every file is written to a temporary file beside it, and only
//! when all are written are they renamed into place.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::RegistryError;

/// Distinguishes the temporary files of runs within one process.
static RUN: AtomicU64 = AtomicU64::new(0);

/// Writes every `(path, bytes)`: first each to `.<name>.<pid>.<n>.tmp` beside it,
/// then renames each into place (an atomic replacement on one file system). When a
/// write fails, the temporary files are removed and nothing is replaced. Returns the
/// paths, in order.
pub(super) fn replace_all(files: &[(PathBuf, Vec<u8>)]) -> Result<Vec<PathBuf>, RegistryError> {
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let mut staged: Vec<(PathBuf, &Path)> = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let temp = temp_path(path, run);
        if let Err(source) = fs::write(&temp, bytes) {
            let _ = fs::remove_file(&temp);
            discard(&staged);
            return Err(RegistryError::Io {
                action: "write",
                path: temp,
                source,
            });
        }
        staged.push((temp, path));
    }
    let mut written = Vec::with_capacity(staged.len());
    for (index, (temp, path)) in staged.iter().enumerate() {
        if let Err(source) = fs::rename(temp, path) {
            discard(staged.get(index..).unwrap_or_default());
            return Err(RegistryError::Io {
                action: "rename",
                path: temp.clone(),
                source,
            });
        }
        written.push(path.to_path_buf());
    }
    Ok(written)
}

/// `.<name>.<pid>.<run>.tmp` beside `path`.
fn temp_path(path: &Path, run: u64) -> PathBuf {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.{run}.tmp", std::process::id()))
}

/// Removes temporary files (best effort: the error being reported matters more).
fn discard(staged: &[(PathBuf, &Path)]) {
    for (temp, _) in staged {
        let _ = fs::remove_file(temp);
    }
}
