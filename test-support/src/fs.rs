//! Fixtures copied and listed.

use std::path::{Path, PathBuf};

/// Copies the folder `from` to `to` (created), files and subfolders, recursively.
/// Symbolic links are followed: what a fixture links to is copied as a file.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to)
        .unwrap_or_else(|err| panic!("cannot create {}: {err}", to.display()));
    let entries = std::fs::read_dir(from)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", from.display()));
    for entry in entries {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|err| {
                panic!(
                    "cannot copy {} to {}: {err}",
                    entry.path().display(),
                    target.display()
                )
            });
        }
    }
}

/// The files directly in `dir` whose extension is `extension`, sorted by path: a
/// corpus, in a stable order.
pub fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    files.sort();
    files
}
