//! Task identity against raw SHA-256, and general canonicalization against `serde_jcs`.
//!
//! `cargo bench -p curupira-task-identity --bench identity -- --warm-up-time 1 --measurement-time 3`
//!
//! Each group measures its peers on the same bytes; throughput is the canonical length,
//! so `task_id` and `sha2_raw` are directly comparable (target: `task_id` ≥ 80%).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use curupira_task_identity::{Pair, TaskId, canonical_pairs, canonicalize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// `len` bytes of prose; with `line` set, a newline (escaped as `\n`) every `line` bytes.
fn prose(len: usize, seed: usize, line: Option<usize>) -> String {
    let words = [
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "adipiscing",
        "elit",
    ];
    let mut out = String::with_capacity(len + 16);
    let mut since_newline = 0;
    let mut i = seed;
    while out.len() < len {
        let word = words[i % words.len()];
        i += 7;
        if line.is_some_and(|line| since_newline + word.len() >= line) {
            out.push('\n');
            since_newline = 0;
        } else {
            out.push(' ');
            since_newline += 1;
        }
        out.push_str(word);
        since_newline += word.len();
    }
    out.truncate(len);
    out
}

fn identity_group(c: &mut Criterion, name: &str, pairs: &[Pair]) {
    let canonical_len = canonical_pairs(pairs).len();
    let raw = vec![b'x'; canonical_len];
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(canonical_len as u64));
    group.bench_function("task_id", |b| b.iter(|| TaskId::of_pairs(black_box(pairs))));
    group.bench_function("sha2_raw", |b| b.iter(|| Sha256::digest(black_box(&raw))));
    group.finish();
}

fn identity(c: &mut Criterion) {
    let large: Vec<Pair> = (0..10)
        .map(|i| Pair::new(format!("field_{i}"), prose(100 * 1024, i, None)))
        .collect();
    identity_group(c, "identity/10x100KiB", &large);

    let lines: Vec<Pair> = (0..10)
        .map(|i| Pair::new(format!("field_{i}"), prose(100 * 1024, i, Some(80))))
        .collect();
    identity_group(c, "identity/10x100KiB-80-col-lines", &lines);

    let small: Vec<Pair> = (0..10_000)
        .map(|i| Pair::new(format!("field_{i:05}"), prose(32, i, None)))
        .collect();
    identity_group(c, "identity/10000x32B", &small);
}

fn records(count: usize) -> Value {
    Value::Array(
        (0..count)
            .map(|i| {
                json!({
                    "id": i,
                    "title": prose(60, i, None),
                    "score": i as f64 * 0.37 + 1e-7,
                    "ratio": 1.0 / (i as f64 + 3.0),
                    "big": 9_007_199_254_740_993_u64 + i as u64,
                    "labels": ["bug", "p1", "needs\ttriage"],
                    "ünïcödé": "naïve café \u{1f600}",
                    "\u{fb01}": null,
                    "\u{1f602}": true,
                    "nested": { "z": [1, 2, 3], "a": { "b": "c\"d" } },
                })
            })
            .collect(),
    )
}

fn canonicalize_group(c: &mut Criterion, name: &str, value: &Value) {
    let ours = canonicalize(value);
    let theirs = serde_jcs::to_vec(value).unwrap();
    if ours != theirs {
        // Expected on the records: serde_jcs sorts members by code point, not UTF-16
        // (U+1F602 vs U+FB01), and writes integers above 2^53 exactly.
        eprintln!("note: serde_jcs output differs from ours on {name}");
    }
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(ours.len() as u64));
    group.bench_function("curupira", |b| b.iter(|| canonicalize(black_box(value))));
    group.bench_function("serde_jcs", |b| {
        b.iter(|| serde_jcs::to_vec(black_box(value)).unwrap())
    });
    group.finish();
}

fn general(c: &mut Criterion) {
    canonicalize_group(c, "canonicalize/1000-records", &records(1000));
    let pairs: Vec<Value> = (0..1000)
        .map(|i| json!({ "key": format!("field_{i}"), "value": prose(200, i, Some(80)) }))
        .collect();
    canonicalize_group(c, "canonicalize/1000-pairs", &Value::Array(pairs));
}

criterion_group!(benches, identity, general);
criterion_main!(benches);
