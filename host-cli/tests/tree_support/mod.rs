//! Copies of the repository, or of one of its folders, as a checkout ships them:
//! never with what a user's run left there. A test that ran on the source tree's own
//! `examples/quickstart` inherited the `.curupira/` ledger and `done.jsonl` of the
//! README's quick start, and found nothing left to do.
//!
//! What ships is what Git would commit: every file but those a `.gitignore` on the
//! way ignores. The rules read are the subset this repository uses, as Git reads
//! them: a lone `*` (everything in that folder: the host's `.curupira/` state folder
//! has one), a plain name, with or without a trailing `/` (that name at any depth
//! below the `.gitignore`'s folder), and a path with a `/` inside or in front (from
//! that folder). Any other pattern fails the test that reads it, so a `.gitignore`
//! that grows one is noticed here. No Git checkout is needed (a source tarball has
//! none); `run_quickstart` checks that Git agrees.

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
    copy_shipped(root, &Path::new("examples").join(name), to);
}

/// Copies the repository's `examples/NAME` into `to` (created), as it ships.
pub fn copy_example(name: &str, to: &Path) {
    copy_example_from(&repository_root(), name, to);
}

/// Copies the folder `sub` of the tree at `root` (`""` for all of it) into `to`
/// (created), leaving out what the `.gitignore` files from `root` down ignore, and
/// `.git`.
pub fn copy_shipped(root: &Path, sub: &Path, to: &Path) {
    let mut rules = Rules::default();
    let mut at = root.to_owned();
    rules.read(&at, Path::new(""));
    let mut relative = PathBuf::new();
    for part in sub.components() {
        relative.push(part);
        assert!(
            !rules.ignores(&relative, true),
            "`{}` is ignored by Git: nothing of it ships",
            relative.display()
        );
        at.push(part);
        rules.read(&at, &relative);
    }
    assert!(at.is_dir(), "no folder `{}`", at.display());
    copy_folder(&at, &relative, to, &rules);
}

fn copy_folder(from: &Path, relative: &Path, to: &Path, rules: &Rules) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let path = entry.path();
        let inner = relative.join(&name);
        let kind = entry.file_type().unwrap();
        if rules.ignores(&inner, kind.is_dir()) {
            continue;
        }
        if kind.is_dir() {
            let mut rules = rules.clone();
            rules.read(&path, &inner);
            // A folder that ignores all it holds has nothing Git would keep.
            if !rules.everything_in.contains(&inner) {
                copy_folder(&path, &inner, &to.join(&name), &rules);
            }
        } else if kind.is_symlink() {
            let target = fs::read_link(&path).unwrap();
            #[cfg(unix)]
            std::os::unix::fs::symlink(target, to.join(&name)).unwrap();
            #[cfg(not(unix))]
            let _ = target;
        } else {
            // `fs::copy` keeps the permissions: scripts stay executable.
            fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

/// The ignore rules in force in one folder.
#[derive(Clone, Default)]
struct Rules {
    /// Folders (relative to the root) whose whole content is ignored.
    everything_in: Vec<PathBuf>,
    /// Names ignored at any depth below a folder: (folder, name, folders only).
    names: Vec<(PathBuf, String, bool)>,
    /// Paths ignored exactly: (path, folders only).
    paths: Vec<(PathBuf, bool)>,
}

impl Rules {
    /// Takes in `folder/.gitignore` (`relative` is the folder's path from the root).
    fn read(&mut self, folder: &Path, relative: &Path) {
        let file = folder.join(".gitignore");
        let Ok(text) = fs::read_to_string(&file) else {
            return;
        };
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line == "*" {
                self.everything_in.push(relative.to_owned());
                continue;
            }
            let dir_only = line.ends_with('/');
            let pattern = line.trim_end_matches('/');
            assert!(
                !pattern.contains(['*', '?', '[', '!', '\\']),
                "`{}` has the pattern `{line}`, which the tests' copy does not read",
                file.display()
            );
            match pattern.strip_prefix('/') {
                Some(path) => self.paths.push((relative.join(path), dir_only)),
                None if pattern.contains('/') => {
                    self.paths.push((relative.join(pattern), dir_only));
                }
                None => self
                    .names
                    .push((relative.to_owned(), pattern.to_owned(), dir_only)),
            }
        }
    }

    /// Whether `path` (from the root) is ignored.
    fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let parent = path.parent().unwrap_or(Path::new(""));
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        self.everything_in
            .iter()
            .any(|folder| parent.starts_with(folder))
            || self
                .paths
                .iter()
                .any(|(ignored, dir_only)| path == ignored.as_path() && (is_dir || !dir_only))
            || self.names.iter().any(|(folder, ignored, dir_only)| {
                path.starts_with(folder)
                    && name.as_deref() == Some(ignored.as_str())
                    && (is_dir || !dir_only)
            })
    }
}
