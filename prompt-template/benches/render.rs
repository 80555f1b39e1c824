//! Rendering a 1 MiB prompt with 10,000 placeholders, side by side with the two usual
//! alternatives: a `str::replace` loop over the keys and `regex::Regex::replace_all`.
//!
//! Run: `cargo bench -p curupira-template --bench render`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use curupira_template::Template;
use regex::{Captures, Regex, Replacer};

const TEMPLATE_BYTES: usize = 1 << 20;
const PLACEHOLDERS: usize = 10_000;
const KNOWN_KEYS: usize = 18;
const UNKNOWN_KEYS: usize = 2;

/// A deterministic pseudo-random sequence (64-bit LCG), so every run sees the same input.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// 20 keys (18 with values, 2 unknown and left as written), values 8 to 80 bytes, and a
/// 1 MiB template of prose with 10,000 placeholders spread through it.
fn fixture() -> (String, HashMap<String, String>) {
    let keys: Vec<String> = [
        "issue-number",
        "title",
        "author",
        "repository",
        "automation",
        "labels",
        "url",
        "branch",
        "base",
        "created-at",
        "milestone",
        "assignee",
        "body",
        "foo.bar",
        "123",
        "state",
        "comments",
        "reviewers",
        "typo_key",
        "not provided",
    ]
    .iter()
    .map(|k| (*k).to_owned())
    .collect();
    assert_eq!(keys.len(), KNOWN_KEYS + UNKNOWN_KEYS);

    let mut rng = Lcg(0x5eed);
    let words = [
        "the", "agent", "should", "read", "issue", "and", "fix", "café", "tests", "in", "crate",
        "before", "opening", "a", "pull", "request", "with", "summary", "ñandú", "—",
    ];
    let values: HashMap<String, String> = keys[..KNOWN_KEYS]
        .iter()
        .map(|key| {
            let mut value = String::new();
            let target = 8 + rng.below(73);
            while value.len() < target {
                value.push_str(words[rng.below(words.len())]);
                value.push(' ');
            }
            (key.clone(), value)
        })
        .collect();

    let mut template = String::with_capacity(TEMPLATE_BYTES + 1024);
    let gap = TEMPLATE_BYTES / PLACEHOLDERS;
    for _ in 0..PLACEHOLDERS {
        let line_end = template.len() + gap - 20;
        while template.len() < line_end {
            template.push_str(words[rng.below(words.len())]);
            template.push(if rng.below(12) == 0 { '\n' } else { ' ' });
        }
        template.push_str("${");
        template.push_str(&keys[rng.below(keys.len())]);
        template.push('}');
    }
    while template.len() < TEMPLATE_BYTES {
        template.push('.');
    }
    (template, values)
}

/// The naive approach. Besides being slow (one full pass per key), it is wrong: each
/// pass re-scans text inserted by earlier passes, so a value containing `${other}` gets
/// expanded. The benchmark's values contain no `${`, so here it happens to agree.
fn naive_replace(template: &str, values: &HashMap<String, String>) -> String {
    let mut text = template.to_owned();
    for (key, value) in values {
        text = text.replace(&format!("${{{key}}}"), value);
    }
    text
}

/// The best case for `regex`: compiled once, appending values without allocating.
struct MapReplacer<'m>(&'m HashMap<String, String>);

impl Replacer for MapReplacer<'_> {
    fn replace_append(&mut self, caps: &Captures<'_>, dst: &mut String) {
        match self.0.get(&caps[1]) {
            Some(value) => dst.push_str(value),
            None => dst.push_str(&caps[0]),
        }
    }
}

fn bench_render(c: &mut Criterion) {
    let (text, values) = fixture();
    let pairs: Vec<(String, String)> = values.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let template = Template::parse(&text);
    let regex = Regex::new(r"\$\{([^}]*)\}").unwrap();
    assert_eq!(template.placeholders().len(), PLACEHOLDERS);

    let expected = template.render(&values);
    assert_eq!(template.render(&pairs), expected);
    assert_eq!(naive_replace(&text, &values), expected);
    assert_eq!(
        regex.replace_all(&text, MapReplacer(&values)).into_owned(),
        expected
    );

    let mut group = c.benchmark_group("render_1MiB_10k_placeholders");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("curupira/render (parsed once, HashMap)", |b| {
        b.iter(|| black_box(&template).render(black_box(&values)))
    });
    group.bench_function("curupira/render (parsed once, pair slice)", |b| {
        b.iter(|| black_box(&template).render(black_box(pairs.as_slice())))
    });
    group.bench_function("curupira/parse+render (HashMap)", |b| {
        b.iter(|| Template::parse(black_box(&text)).render(black_box(&values)))
    });
    group.bench_function("curupira/parse only", |b| {
        b.iter(|| Template::parse(black_box(&text)))
    });
    group.bench_function("naive str::replace loop", |b| {
        b.iter(|| naive_replace(black_box(&text), black_box(&values)))
    });
    group.bench_function("regex replace_all (compiled once)", |b| {
        b.iter(|| {
            black_box(&regex)
                .replace_all(black_box(&text), MapReplacer(black_box(&values)))
                .into_owned()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_render);
criterion_main!(benches);
