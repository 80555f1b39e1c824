//! Shared by the `registry_*` tests: the sample registry under `tests/sample/` (three
//! extensions, saved npm documents, golden derived files), temporary copies of it
//! with one change each, and short views of a report.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use curupira_diagnostics::{Diagnostic, Report, Severity};
pub use curupira_test_support::fs::copy_dir;
use serde_json::Value;
use spirit_registry::FolderSource;

/// The three extension ids of the sample, sorted.
pub const IDS: [&str; 3] = [
    "acme.lookup",
    "example.spirit-extension",
    "notes.quick-notes",
];

/// `tests/sample`: `registry/`, `npm/` and `golden/`.
pub fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sample")
}

/// The golden copy of a derived file, by its path relative to ROOT.
pub fn golden(file: &str) -> PathBuf {
    sample().join("golden").join(file)
}

/// Whether golden files are to be rewritten (`UPDATE_GOLDEN=1`).
pub fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1")
}

/// Compares `actual` with the golden file `file`, or rewrites it under `UPDATE_GOLDEN=1`.
pub fn assert_golden(file: &str, actual: &[u8]) {
    let path = golden(file);
    if updating() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, actual).unwrap();
        return;
    }
    let expected = fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to write it)",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{file} differs from {}:\n--- golden\n{}\n--- actual\n{}",
        path.display(),
        String::from_utf8_lossy(&expected),
        String::from_utf8_lossy(actual)
    );
}

/// A temporary copy of the sample's `registry/` and `npm/`; ROOT is `root`.
pub struct Copy {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
}

impl Copy {
    /// The sample, copied.
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        copy_dir(&sample().join("registry"), &root.join("registry"));
        copy_dir(&sample().join("npm"), &root.join("npm"));
        Copy { _tmp: tmp, root }
    }

    /// The saved npm documents of the copy.
    pub fn npm(&self) -> FolderSource {
        FolderSource::new(self.root.join("npm"))
    }

    /// `ROOT/<file>`.
    pub fn path(&self, file: &str) -> PathBuf {
        self.root.join(file)
    }

    /// `ROOT/registry/extensions/<id>/<name>`.
    pub fn extension(&self, id: &str, name: &str) -> PathBuf {
        self.root.join("registry/extensions").join(id).join(name)
    }

    /// Rewrites the JSON file `ROOT/<file>` after `change`.
    pub fn edit_json(&self, file: &str, change: impl FnOnce(&mut Value)) {
        let path = self.path(file);
        let mut value: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        change(&mut value);
        fs::write(&path, serde_json::to_string_pretty(&value).unwrap() + "\n").unwrap();
    }

    /// Rewrites the saved npm document of `package` after `change`.
    pub fn edit_npm(&self, package: &str, change: impl FnOnce(&mut Value)) {
        let file = format!("npm/{}", spirit_registry::package_file_name(package));
        self.edit_json(&file, change);
    }

    /// Rewrites `registry/extensions/<id>/entry.json` after `change`.
    pub fn edit_entry(&self, id: &str, change: impl FnOnce(&mut Value)) {
        self.edit_json(&format!("registry/extensions/{id}/entry.json"), change);
    }

    /// Every derived file (path relative to ROOT) with its bytes, when present.
    pub fn derived(&self) -> Vec<(String, Option<Vec<u8>>)> {
        derived_files()
            .into_iter()
            .map(|file| {
                let bytes = fs::read(self.path(&file)).ok();
                (file, bytes)
            })
            .collect()
    }

    /// Builds the copy as it is and asserts the build is clean.
    pub fn build_clean(&self) {
        let built = spirit_registry::build(&self.root, &self.npm()).unwrap();
        assert_eq!(
            built.report.errors(),
            0,
            "{}",
            built.report.render_human(false)
        );
    }
}

/// The derived files of the sample, relative to ROOT.
pub fn derived_files() -> Vec<String> {
    let mut files: Vec<String> = IDS
        .iter()
        .map(|id| format!("registry/extensions/{id}/detail.json"))
        .collect();
    files.push("registry/catalog.json".to_owned());
    files
}

/// `(severity, code, file, pointer)` of every diagnostic.
pub fn found(report: &Report) -> Vec<(Severity, String, String, String)> {
    report
        .diagnostics()
        .iter()
        .map(|d| {
            (
                d.severity,
                d.code.to_string(),
                d.file.clone(),
                d.path.as_str().to_owned(),
            )
        })
        .collect()
}

/// The diagnostics with `code`.
pub fn with_code<'r>(report: &'r Report, code: &str) -> Vec<&'r Diagnostic> {
    report
        .diagnostics()
        .iter()
        .filter(|d| d.code == code)
        .collect()
}

/// The one diagnostic with `code` (fails when there are none or several).
pub fn one<'r>(report: &'r Report, code: &str) -> &'r Diagnostic {
    let matching = with_code(report, code);
    assert_eq!(
        matching.len(),
        1,
        "expected one {code}, got:\n{}",
        report.render_human(false)
    );
    matching[0]
}
