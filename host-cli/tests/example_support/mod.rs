//! Copies of the repository's `examples/` as they ship, never with what a user's run
//! left in them: a test that ran on the source tree's own copy inherited the
//! `.curupira/` ledger and `done.jsonl` of the README's quick start, and found
//! nothing left to do.
//!
//! What an example ships is what Git would commit of it: every file but those its own
//! `.gitignore` names (`done.jsonl`, …) and those of a folder whose `.gitignore`
//! ignores everything (`*`, as the host's `.curupira/` state folder has). One rule,
//! the same as Git's for these files, and no need for a Git checkout (a source
//! tarball has none).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

/// The repository's root.
pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// Copies `examples/NAME` of the tree at `root` into `to` (created), as it ships.
pub fn copy_example_from(root: &Path, name: &str, to: &Path) {
    let from = root.join("examples").join(name);
    assert!(from.is_dir(), "no example `{}`", from.display());
    let ignored = ignored_names(&from);
    copy_shipped(&from, to, &ignored);
}

/// Copies the repository's `examples/NAME` into `to` (created), as it ships.
pub fn copy_example(name: &str, to: &Path) {
    copy_example_from(&repository_root(), name, to);
}

/// The names an example's `.gitignore` lists (plain names, `/name` and `name/`; our
/// examples use nothing else, and a pattern this does not read fails here).
fn ignored_names(example: &Path) -> Vec<String> {
    let Ok(text) = fs::read_to_string(example.join(".gitignore")) else {
        return Vec::new();
    };
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let name = line.trim_start_matches('/').trim_end_matches('/');
            assert!(
                !name.contains(['*', '?', '[', '!', '/']),
                "`{}` has the pattern `{line}`, which the tests' copy does not read",
                example.join(".gitignore").display()
            );
            name.to_owned()
        })
        .collect()
}

/// Whether the folder's own `.gitignore` ignores all it holds.
fn ignores_everything(folder: &Path) -> bool {
    fs::read_to_string(folder.join(".gitignore"))
        .is_ok_and(|text| text.lines().any(|line| line.trim() == "*"))
}

fn copy_shipped(from: &Path, to: &Path, ignored: &[String]) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if ignored.contains(&name) {
            continue;
        }
        let path = entry.path();
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            if !ignores_everything(&path) {
                copy_shipped(&path, &target, &[]);
            }
        } else {
            // `fs::copy` keeps the permissions: scripts stay executable.
            fs::copy(&path, &target).unwrap();
        }
    }
}
