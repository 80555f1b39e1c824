//! The Spirit app's ZIP import, recorded by running its own `importExtensionArchive` on
//! archives built byte by byte (`recordings/spirit-zip/`), replayed through [`install`]:
//! the same verdict, the same tree left in the data folder, the same installed bytes
//! (feature `install`).

#![cfg(feature = "install")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::Value;
use spirit_manifest::Host;
use spirit_manifest::install::{INDEX_FILE, InstallOptions, install};

/// Every path under `root`, relative, sorted, folders ending in `/` (the recording's
/// form; a symbolic link would be `name -> link`).
fn tree(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        names.sort();
        for path in names {
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.push(format!("{relative}/"));
                walk(root, &path, out);
            } else if meta.file_type().is_symlink() {
                out.push(format!("{relative} -> link"));
            } else if !relative.ends_with(INDEX_FILE) {
                out.push(relative);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap())
        .collect()
}

#[test]
fn every_recorded_zip_imports_as_the_app_imports_it() {
    let recording =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings/spirit-zip/cases.json");
    let recorded: Value = serde_json::from_str(&fs::read_to_string(recording).unwrap()).unwrap();
    let cases = recorded["cases"].as_array().unwrap();
    assert!(cases.len() >= 18, "{} cases", cases.len());
    let work = tempfile::tempdir().unwrap();
    let mut disagreements = Vec::new();
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let real = &case["real"];
        let archive = work.path().join(format!("{id}.zip"));
        fs::write(&archive, hex(case["archive_hex"].as_str().unwrap())).unwrap();
        let data = work.path().join(format!("data-{id}"));
        fs::create_dir(&data).unwrap();
        let result = install(&archive, &InstallOptions::new(&data, Host::Cli));
        let installs = real["installs"].as_bool().unwrap();
        if result.is_ok() != installs {
            disagreements.push(format!(
                "{id}: the app {} ({}), we {:?}",
                if installs { "installs" } else { "refuses" },
                real["error"],
                result.as_ref().map(|installed| &installed.id)
            ));
            continue;
        }
        let recorded_tree: Vec<String> = real["tree"]
            .as_array()
            .unwrap()
            .iter()
            .map(|path| path.as_str().unwrap().to_owned())
            .collect();
        let ours = tree(&data);
        if ours != recorded_tree {
            disagreements.push(format!("{id}: tree {ours:?}, the app's {recorded_tree:?}"));
        }
        if let Ok(installed) = result {
            let mut files = BTreeMap::new();
            for path in tree(&installed.path) {
                if !path.ends_with('/') {
                    files.insert(
                        path.clone(),
                        Value::String(fs::read_to_string(installed.path.join(&path)).unwrap()),
                    );
                }
            }
            let recorded_files: BTreeMap<String, Value> = real["package_files"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(path, text)| (path.clone(), text.clone()))
                .collect();
            if files != recorded_files {
                disagreements.push(format!(
                    "{id}: files {files:?}, the app's {recorded_files:?}"
                ));
            }
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
