//! `curupira spirit tools --data-dir` over 1,000 installed extensions (issue 27): the
//! invocation names of every tool, de-duplicated as the Spirit app does, against only
//! listing the same folder (the floor: `read_dir` of `extensions/cli/` and reading and
//! parsing each `package.json` with `serde_json`). Target: the whole command under 1 s.
//!
//! `cargo bench -p curupira-host --bench spirit_tools -- --warm-up-time 1 --measurement-time 5`
//!
//! - `spirit_tools_1000/plain_listing`: the floor.
//! - `spirit_tools_1000/list_and_name`: what the command does in-process,
//!   `install::list` (every package checked again, as `spirit list` does) and
//!   `offered_tools` (sorted with the ICU collation, suffixes given).
//! - `spirit_tools_1000/name_only`: `offered_tools` on the packages already parsed.
//! - `spirit_tools_1000/binary_json`: the command itself, `--format json` to a pipe,
//!   process start included.
//!
//! The data folder is filled once with `install::install` from a ZIP per extension:
//! ids `bench-ext-N` and `bench.ext-N` in turn (so every second one collides with the
//! one before it and takes `__1`), three tools each, display names in Latin and in
//! Chinese (ICU orders the latter by pinyin).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::fs::{self, File};
use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use spirit_manifest::Host;
use spirit_manifest::install::{self, InstallOptions};
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

const COUNT: usize = 1_000;
const TOOLS: usize = 3;

fn manifest(n: usize) -> String {
    let id = if n.is_multiple_of(2) {
        format!("bench-ext-{}", n / 2)
    } else {
        format!("bench.ext-{}", n / 2)
    };
    let display = if n.is_multiple_of(3) {
        format!("基准扩展 {n}")
    } else {
        format!("Bench extension {n}")
    };
    let tools: Vec<Value> = (0..TOOLS)
        .map(|t| {
            json!({
                "name": format!("lookup.item-{t}"),
                "description": "Looks an item up.",
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
            })
        })
        .collect();
    serde_json::to_string_pretty(&json!({
        "name": id,
        "version": "1.0.0",
        "main": "index.js",
        "spiritExtension": {
            "schemaVersion": 1,
            "displayName": display,
            "supportedHosts": ["cli"],
            "requestedCapabilities": ["tool-definitions", "tool-execution"],
            "contributes": {"tools": tools},
        },
    }))
    .unwrap()
}

/// A data folder with `COUNT` extensions installed for `cli`.
fn data_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("pkg.zip");
    let options = InstallOptions::new(tmp.path().join("data"), Host::Cli);
    for n in 0..COUNT {
        let mut writer = ZipWriter::new(File::create(&archive).unwrap());
        let text = manifest(n);
        for (name, bytes) in [
            ("package.json", text.as_str()),
            ("index.js", "exports.activate = () => ({});\n"),
        ] {
            writer
                .start_file(name, SimpleFileOptions::default())
                .unwrap();
            writer.write_all(bytes.as_bytes()).unwrap();
        }
        writer.finish().unwrap();
        install::install(&archive, &options).unwrap();
    }
    tmp
}

/// The floor: every package folder of `extensions/cli/`, its package.json read and
/// parsed.
fn plain_listing(data_dir: &Path) -> usize {
    let mut parsed = 0;
    for entry in fs::read_dir(install::host_dir(data_dir, Host::Cli)).unwrap() {
        let path = entry.unwrap().path().join("package.json");
        if let Ok(bytes) = fs::read(&path) {
            black_box(serde_json::from_slice::<Value>(&bytes).unwrap());
            parsed += 1;
        }
    }
    parsed
}

fn list_and_name(data_dir: &Path) -> usize {
    let installed = install::list(data_dir, Some(Host::Cli)).unwrap();
    let offered = spirit_manifest::offered_tools(installed.iter().filter_map(|i| i.package()));
    black_box(&offered);
    offered.len()
}

fn binary_json(data_dir: &Path) -> usize {
    let output = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .args(["spirit", "tools", "--data-dir"])
        .arg(data_dir)
        .args(["--host", "cli", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    output.stdout.len()
}

fn spirit_tools(c: &mut Criterion) {
    let tmp = data_dir();
    let data = tmp.path().join("data");
    assert_eq!(plain_listing(&data), COUNT);
    assert_eq!(list_and_name(&data), COUNT * TOOLS);
    let installed = install::list(&data, Some(Host::Cli)).unwrap();
    let packages: Vec<_> = installed.iter().filter_map(|i| i.package()).collect();
    let offered = spirit_manifest::offered_tools(packages.iter().copied());
    let suffixed = offered.iter().filter(|o| o.name.ends_with("__1")).count();
    assert_eq!(
        suffixed,
        COUNT / 2 * TOOLS,
        "every second extension collides"
    );

    let mut group = c.benchmark_group("spirit_tools_1000");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("plain_listing", |b| b.iter(|| plain_listing(&data)));
    group.bench_function("list_and_name", |b| b.iter(|| list_and_name(&data)));
    group.bench_function("name_only", |b| {
        b.iter(|| spirit_manifest::offered_tools(packages.iter().copied()).len())
    });
    group.bench_function("binary_json", |b| b.iter(|| binary_json(&data)));
    group.finish();
}

criterion_group!(benches, spirit_tools);
criterion_main!(benches);
