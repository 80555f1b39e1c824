//! Validating `package.json` texts against parsing them: the floor is
//! `serde_json::from_str::<Value>` of the same texts, since nothing that reads JSON can
//! be faster than reading it. Target: validation (structure rules, including the JSON
//! Schema meta-check of every tool schema) at most 3× the plain parse.
//!
//! `cargo bench -p spirit-manifest --bench validate -- --warm-up-time 2 --measurement-time 5`
//!
//! Both functions go through the same 10,000 generated texts (1–4 tools with schemas of
//! a few properties, settings, secrets, desktop and CLI contributions), so the
//! throughput (packages per second) of the two is directly comparable.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use spirit_manifest::{Options, check_str};

/// A valid package, different for every `n`.
fn package(n: usize) -> String {
    let tools: Vec<Value> = (0..1 + n % 4)
        .map(|t| {
            let properties: serde_json::Map<String, Value> = (0..1 + (n + t) % 5)
                .map(|p| {
                    let schema = match p % 4 {
                        0 => json!({"type": "string", "description": format!("field {p}")}),
                        1 => json!({"type": "integer", "minimum": 0}),
                        2 => json!({"type": "array", "items": {"type": "string"}}),
                        _ => json!({"type": "string", "enum": ["a", "b", "c"]}),
                    };
                    (format!("field_{p}"), schema)
                })
                .collect();
            let mut tool = json!({
                "name": format!("tool_{t}"),
                "description": format!("Tool {t} of package {n}: looks things up."),
                "inputSchema": {"type": "object", "properties": properties, "required": ["field_0"]},
                "approvalMode": "allowed",
                "executionMode": "foreground",
            });
            if t % 2 == 1 {
                tool["outputSchema"] = json!({"type": "object", "additionalProperties": true});
            }
            tool
        })
        .collect();
    let value = json!({
        "name": format!("@bench/extension-{n}"),
        "version": format!("1.{}.{}", n % 7, n % 13),
        "description": "A generated Spirit extension.",
        "author": {"name": "bench"},
        "homepage": "https://example.com/bench",
        "repository": {"type": "git", "url": "https://example.com/bench.git"},
        "keywords": ["spirit", "bench"],
        "main": "dist/index.js",
        "scripts": {"build": "tsc -p ."},
        "spiritExtension": {
            "schemaVersion": 1,
            "displayName": format!("Bench {n}"),
            "icon": "assets/icon.svg",
            "supportedHosts": ["cli", "desktop"],
            "activationEvents": ["onStartup", "onUserMessage"],
            "requestedCapabilities": ["tool-definitions", "tool-execution", "system-prompt", "settings", "secret-storage", "desktop-ui", "cli-ui"],
            "contributes": {
                "tools": tools,
                "desktop": {"css": [{"path": "styles/desktop.css"}], "settingsPage": {"title": "Bench"}},
                "cli": {"hooks": {"path": "cli-hooks.json"}}
            },
            "settingsSchema": [
                {"key": "region", "type": "select", "title": "Region", "required": true, "defaultValue": "us",
                 "options": [{"value": "us", "label": "US"}, {"value": "eu", "label": "EU"}]},
                {"key": "limit", "type": "number", "title": "Limit", "defaultValue": 10}
            ],
            "secretSlots": [{"key": "api_token", "title": "API token", "required": true}]
        }
    });
    serde_json::to_string_pretty(&value).unwrap()
}

fn validate(c: &mut Criterion) {
    let texts: Vec<String> = (0..10_000).map(package).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    // The bench measures valid packages: make sure they are.
    for text in texts.iter().take(50) {
        let checked = check_str(text, "package.json", &Options::default());
        assert_eq!(
            checked.report.errors() + checked.report.warnings(),
            0,
            "{}",
            checked.report.render_human(false)
        );
    }
    eprintln!("10,000 packages, {} bytes on average", bytes / texts.len());
    let options = Options {
        registry_strict: true,
        host: None,
    };

    let mut group = c.benchmark_group("package_json_10k");
    group.throughput(Throughput::Elements(texts.len() as u64));
    group.sample_size(10);
    group.bench_function("serde_json_value", |b| {
        b.iter(|| {
            for text in &texts {
                black_box(serde_json::from_str::<Value>(black_box(text)).unwrap());
            }
        })
    });
    group.bench_function("spirit_check_str", |b| {
        b.iter(|| {
            for text in &texts {
                black_box(check_str(black_box(text), "package.json", &options));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, validate);
criterion_main!(benches);
