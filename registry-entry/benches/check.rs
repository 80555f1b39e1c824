//! `registry check` with saved metadata, against only reading and parsing the same files
//! with `serde_json` (the floor: every check reads and parses them). Target: at most 3×
//! the floor, and 10× the entries at most 11× the time (1,000 → 10,000).
//!
//! `cargo bench -p spirit-registry --bench check -- --warm-up-time 2 --measurement-time 10`
//!
//! The registry is generated in a temporary folder: per entry an `entry.json` with two
//! versions, a `README.md`, the npm package document (two published versions, each a
//! valid Spirit manifest with a tool), and the derived files written by `build`, so the
//! check compares them byte for byte.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use spirit_registry::{FolderSource, build, check, package_file_name};

fn manifest(package: &str, version: &str, n: usize) -> Value {
    json!({
        "name": package,
        "version": version,
        "description": format!("Generated extension {n}."),
        "author": {"name": "bench"},
        "homepage": "https://example.com/bench",
        "keywords": ["spirit", "bench"],
        "main": "dist/index.js",
        "spiritExtension": {
            "schemaVersion": 1,
            "displayName": format!("Bench {n}"),
            "supportedHosts": ["cli", "desktop"],
            "requestedCapabilities": ["tool-definitions", "tool-execution"],
            "contributes": {"tools": [{
                "name": "lookup",
                "description": "Looks things up.",
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
            }]}
        }
    })
}

/// A registry of `count` entries under a new temporary folder, built once.
fn registry(count: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_owned();
    let npm = root.join("npm");
    fs::create_dir_all(&npm).unwrap();
    for n in 0..count {
        let id = format!("bench.extension-{n}");
        let package = format!("@bench/extension-{n}");
        let folder = root.join("registry/extensions").join(&id);
        fs::create_dir_all(&folder).unwrap();
        let entry = json!({
            "schemaVersion": 1,
            "extensionId": id,
            "packageName": package,
            "status": if n % 10 == 0 { "hidden" } else { "listed" },
            "featured": n % 7 == 0,
            "defaultVersion": "1.1.0",
            "defaultReviewStatus": "verified",
            "versions": [
                {"version": "1.0.0", "channel": "stable", "reviewStatus": "verified",
                 "changelog": {"summary": "First release.", "body": "- First release."}},
                {"version": "1.1.0", "channel": "stable", "reviewStatus": "verified"}
            ]
        });
        fs::write(
            folder.join("entry.json"),
            serde_json::to_string_pretty(&entry).unwrap() + "\n",
        )
        .unwrap();
        fs::write(
            folder.join("README.md"),
            format!("# Bench {n}\n\n`{package}`, default version 1.1.0.\n"),
        )
        .unwrap();
        let document = json!({
            "name": package,
            "dist-tags": {"latest": "1.1.0"},
            "versions": {"1.0.0": manifest(&package, "1.0.0", n), "1.1.0": manifest(&package, "1.1.0", n)},
            "time": {"created": "2026-01-01T00:00:00.000Z", "1.0.0": "2026-01-01T00:00:00.000Z", "1.1.0": "2026-02-01T00:00:00.000Z"}
        });
        fs::write(
            npm.join(package_file_name(&package)),
            serde_json::to_string(&document).unwrap(),
        )
        .unwrap();
    }
    let built = build(&root, &FolderSource::new(&npm)).unwrap();
    assert_eq!(
        built.report.errors(),
        0,
        "{}",
        built.report.render_human(false)
    );
    (tmp, root)
}

/// Reads and parses every file `check` reads: the floor.
fn read_and_parse(root: &Path) -> usize {
    let mut parsed = 0;
    let extensions = root.join("registry/extensions");
    let mut folders: Vec<_> = fs::read_dir(&extensions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    folders.sort();
    for folder in folders {
        for name in ["entry.json", "detail.json"] {
            let bytes = fs::read(folder.join(name)).unwrap();
            black_box(serde_json::from_slice::<Value>(&bytes).unwrap());
            parsed += 1;
        }
        black_box(fs::read_to_string(folder.join("README.md")).unwrap());
    }
    for entry in fs::read_dir(root.join("npm")).unwrap() {
        let bytes = fs::read(entry.unwrap().path()).unwrap();
        black_box(serde_json::from_slice::<Value>(&bytes).unwrap());
        parsed += 1;
    }
    let catalog = fs::read(root.join("registry/catalog.json")).unwrap();
    black_box(serde_json::from_slice::<Value>(&catalog).unwrap());
    parsed + 1
}

fn registry_check(c: &mut Criterion) {
    let mut group = c.benchmark_group("registry_check");
    group.sample_size(10);
    for count in [1_000, 10_000] {
        let (_tmp, root) = registry(count);
        let npm = FolderSource::new(root.join("npm"));
        let report = check(&root, Some(&npm)).unwrap();
        assert_eq!(
            report.errors() + report.warnings(),
            0,
            "{}",
            report.render_human(false)
        );
        group.throughput(Throughput::Elements(count as u64));
        group.bench_with_input(
            BenchmarkId::new("read_and_parse", count),
            &root,
            |b, root| b.iter(|| read_and_parse(root)),
        );
        group.bench_with_input(
            BenchmarkId::new("check_with_metadata", count),
            &root,
            |b, root| b.iter(|| check(root, Some(&npm)).unwrap()),
        );
    }
    group.finish();
}

criterion_group!(benches, registry_check);
criterion_main!(benches);
