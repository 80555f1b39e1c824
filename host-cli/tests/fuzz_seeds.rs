//! Every fuzz target's checks run over its seeds on every `cargo test`, without
//! `cargo-fuzz` or a nightly toolchain: this test compiles the very files the targets
//! call (`fuzz/src/checks/`, one module per target; each `fuzz/fuzz_targets/<target>.rs`
//! is only `fuzz_target!` calling `checks::<target>::check`) and hands each seed to
//! its target's `check` as libFuzzer would hand it over: the bytes as they are, or, for
//! a target with a typed argument, read into its `Input` with `arbitrary` the way
//! `fuzz_target!` reads them (`checks::typed`).
//!
//! [`TARGETS`] is the seed list: the committed files each target starts from
//! (fuzz/README.md says why; `fuzz/corpus/` is not committed). A seed on which a check
//! panics fails its target's test, which names the file; the panic's own message is
//! printed above it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../fuzz/src/checks/mod.rs"]
mod checks;

use std::collections::BTreeSet;
use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use checks::{
    agent_stream, frame_decode, jcs_canonicalize, json_spans, jsonrpc_message, manifest_parse,
    registry_entry, spirit_archive_listing, spirit_install_names, spirit_package_json,
    template_render,
};

/// The seeds of the `spirit_package_json` target (also read by `json_spans`).
const PACKAGE_JSON_SEEDS: [&str; 3] = [
    "manifest-spirit/tests/corpus/seed-example/package.json",
    "manifest-spirit/tests/corpus/text/*.json",
    "fuzz/seeds/spirit_package_json/*",
];

/// Every fuzz target and its seeds, as paths from the repository root: a file, or
/// `folder/*suffix` for the files of a folder whose names end in `suffix` (not its
/// subfolders). A folder or file that is missing fails the test, except one marked
/// `?`, which is read where present (the upstream conformance inputs in `../shared`,
/// beside the repository).
const TARGETS: &[(&str, &[&str])] = &[
    ("agent_stream", &["fuzz/seeds/agent_stream/*"]),
    ("frame_decode", &["fuzz/seeds/frame_decode/*.bin"]),
    (
        "jcs_canonicalize",
        &[
            "task-identity/tests/vectors/input/*.json",
            "?../shared/conformance/jcs/input/*.json",
        ],
    ),
    (
        "json_spans",
        &[
            PACKAGE_JSON_SEEDS[0],
            PACKAGE_JSON_SEEDS[1],
            "registry-entry/tests/corpus/entries/*.json",
            "fuzz/seeds/json_spans/*.json",
        ],
    ),
    ("jsonrpc_message", &["fuzz/seeds/jsonrpc_message/*"]),
    (
        "manifest_parse",
        &[
            "manifest-curupira/tests/corpus/valid/*.toml",
            "manifest-curupira/tests/corpus/invalid/*.toml",
        ],
    ),
    (
        "registry_entry",
        &["registry-entry/tests/corpus/entries/*.json"],
    ),
    (
        "spirit_archive_listing",
        &["fuzz/seeds/spirit_archive_listing/*"],
    ),
    (
        "spirit_install_names",
        &["fuzz/seeds/spirit_install_names/*.txt"],
    ),
    ("spirit_package_json", &PACKAGE_JSON_SEEDS),
    ("template_render", &["fuzz/seeds/template_render/*.bin"]),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The check `target` runs on the bytes libFuzzer hands it. A typed target's seed that
/// does not read as an input would be skipped by the fuzzer: here it is a failure, since
/// a seed that runs nothing tests nothing.
fn check_of(target: &str) -> fn(&[u8]) {
    match target {
        "agent_stream" => agent_stream::check,
        "frame_decode" => |data| frame_decode::check(input(data)),
        "jcs_canonicalize" => jcs_canonicalize::check,
        "json_spans" => json_spans::check,
        "jsonrpc_message" => jsonrpc_message::check,
        "manifest_parse" => manifest_parse::check,
        "registry_entry" => registry_entry::check,
        "spirit_archive_listing" => spirit_archive_listing::check,
        "spirit_install_names" => spirit_install_names::check,
        "spirit_package_json" => spirit_package_json::check,
        "template_render" => |data| template_render::check(input(data)),
        other => panic!("no check for the fuzz target `{other}`"),
    }
}

fn input<'a, T: arbitrary::Arbitrary<'a>>(data: &'a [u8]) -> T {
    checks::typed(data).unwrap_or_else(|| {
        panic!(
            "the seed does not read as a `{}` (the fuzz target would skip it)",
            std::any::type_name::<T>()
        )
    })
}

/// The seed files of `target`, in a stable order.
fn seeds(target: &str) -> Vec<PathBuf> {
    let (_, patterns) = TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .unwrap_or_else(|| panic!("`{target}` is not in TARGETS"));
    let mut files = Vec::new();
    for pattern in *patterns {
        let (optional, pattern) = match pattern.strip_prefix('?') {
            Some(rest) => (true, rest),
            None => (false, *pattern),
        };
        let Some((folder, suffix)) = pattern.split_once("/*") else {
            let file = root().join(pattern);
            assert!(file.is_file(), "{target}: the seed {pattern} is missing");
            files.push(file);
            continue;
        };
        let folder = root().join(folder);
        if optional && !folder.is_dir() {
            continue;
        }
        let mut found: Vec<PathBuf> = fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("{target}: {}: {e}", folder.display()))
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                path.is_file()
                    && path
                        .file_name()
                        .and_then(|name| name.to_str())
                        .is_some_and(|name| name.ends_with(suffix))
            })
            .collect();
        assert!(!found.is_empty(), "{target}: no seed matches {pattern}");
        found.sort();
        files.extend(found);
    }
    files
}

/// Runs `target`'s check on each of its seeds; fails naming every seed it panicked on.
fn run(target: &str) {
    let check = check_of(target);
    let files = seeds(target);
    let mut panicked = Vec::new();
    for file in &files {
        let data = fs::read(file).unwrap();
        if panic::catch_unwind(AssertUnwindSafe(|| check(&data))).is_err() {
            panicked.push(
                file.strip_prefix(root())
                    .unwrap_or(file)
                    .display()
                    .to_string(),
            );
        }
    }
    if target == "spirit_archive_listing" {
        // The check's scratch file (the fuzzer leaves it behind; a test need not).
        let _ = fs::remove_file(spirit_archive_listing::scratch());
    }
    if target == "spirit_install_names" {
        let _ = fs::remove_dir_all(spirit_install_names::scratch());
    }
    assert!(
        panicked.is_empty(),
        "the `{target}` fuzz checks panicked on {} of its {} seeds (each panic is printed \
         above): {panicked:#?}",
        panicked.len(),
        files.len()
    );
}

#[test]
fn agent_stream_seeds() {
    run("agent_stream");
}

#[test]
fn frame_decode_seeds() {
    run("frame_decode");
}

#[test]
fn jcs_canonicalize_seeds() {
    run("jcs_canonicalize");
}

#[test]
fn json_spans_seeds() {
    run("json_spans");
}

#[test]
fn jsonrpc_message_seeds() {
    run("jsonrpc_message");
}

#[test]
fn manifest_parse_seeds() {
    run("manifest_parse");
}

#[test]
fn registry_entry_seeds() {
    run("registry_entry");
}

#[test]
fn spirit_archive_listing_seeds() {
    run("spirit_archive_listing");
}

#[test]
fn spirit_install_names_seeds() {
    run("spirit_install_names");
}

/// The install-names seeds are the cases their names say: the names of the first
/// three all read (so their installs take the success path of the check), every other
/// seed has a name the reader refuses or a name given twice.
#[test]
fn the_install_names_seeds_are_what_they_are_named() {
    use spirit_manifest::archive::{Format, entry_name};
    let names = |seed: &str| -> Vec<String> {
        let text =
            fs::read_to_string(root().join("fuzz/seeds/spirit_install_names").join(seed)).unwrap();
        text.lines()
            .map(|line| line.split('\t').next().unwrap()[1..].to_owned())
            .collect()
    };
    for seed in ["backslashes.txt", "dot-segments.txt", "links.txt"] {
        for name in names(seed) {
            assert!(entry_name(&name, Format::Zip).is_ok(), "{seed}: {name:?}");
        }
    }
    for seed in [
        "absolute.txt",
        "dotdot.txt",
        "dotdot-backslash.txt",
        "dotdot-inside.txt",
    ] {
        for name in names(seed) {
            assert!(entry_name(&name, Format::Zip).is_err(), "{seed}: {name:?}");
        }
    }
    let same: Vec<_> = names("same-name.txt")
        .iter()
        .map(|name| entry_name(name, Format::Zip).unwrap())
        .collect();
    assert_eq!(same[0], same[1]);
}

#[test]
fn spirit_package_json_seeds() {
    run("spirit_package_json");
}

#[test]
fn template_render_seeds() {
    run("template_render");
}

/// The seed-example package and a minimal one are clean, so the target's checks of a
/// package that comes out (the model agrees with the document, the printed package
/// checks back to itself) run on them. The target once panicked at once on both: it
/// expected the checked text to be kept, which the checker does only to quote a
/// diagnostic.
#[test]
fn the_package_json_checks_run_on_clean_packages() {
    for seed in [
        "manifest-spirit/tests/corpus/seed-example/package.json",
        "fuzz/seeds/spirit_package_json/clean-minimal.json",
    ] {
        let data = fs::read(root().join(seed)).unwrap();
        let checked = spirit_manifest::check_bytes(
            &data,
            "package.json",
            &spirit_manifest::Options::default(),
        );
        assert!(
            checked.report.diagnostics().is_empty() && checked.package.is_some(),
            "{seed} is not a clean package: {}",
            checked.report.render_human(false)
        );
        spirit_package_json::check(&data);
    }
}

/// Each typed seed is the input its name says (see fuzz/seeds/make-seeds.py): read back
/// through `arbitrary` as the fuzzer reads it, it has the parts the seed was made of.
#[test]
fn the_typed_seeds_read_as_the_inputs_they_were_made_as() {
    let frames: frame_decode::Input =
        input(&fs::read(root().join("fuzz/seeds/frame_decode/two-frames.bin")).unwrap());
    let debug = format!("{frames:?}");
    assert!(
        debug.starts_with(
            "Input { max: 64, chunks: [3, 1, 7], stream: [48, 48, 48, 48, 48, 48, 50, 99, 123,"
        ),
        "{debug}"
    );
    let greeting: template_render::Input =
        input(&fs::read(root().join("fuzz/seeds/template_render/greeting.bin")).unwrap());
    let debug = format!("{greeting:?}");
    assert!(
        debug.contains(r#"Text("Hello "), Dollar, Open, Text("name"), Close"#)
            && debug
                .ends_with(r#"pairs: [("name", "Curupira"), ("name", "second")], fill: None }"#),
        "{debug}"
    );
}

/// The archive seeds are what their names say: the seed-example package as a ZIP and
/// as a marketplace `.tgz`, both clean, and a ZIP whose `package.json` fails its CRC-32.
#[test]
fn the_archive_seeds_are_the_packages_they_were_made_as() {
    let folder = root().join("fuzz/seeds/spirit_archive_listing");
    let options = spirit_manifest::Options::default();
    for name in ["seed-example.zip", "seed-example.tgz"] {
        let checked = spirit_manifest::check_archive(&folder.join(name), &options).unwrap();
        assert!(
            checked.diagnostics().is_empty() && checked.package.is_some(),
            "{name}: {}",
            checked.report.render_human(false)
        );
    }
    let checked = spirit_manifest::check_archive(&folder.join("bad-crc.zip"), &options).unwrap();
    let codes: Vec<&str> = checked
        .diagnostics()
        .iter()
        .map(|d| d.code.as_ref())
        .collect();
    assert_eq!(codes, [spirit_manifest::codes::ARCHIVE_CORRUPT]);
}

/// The seed list names every target of fuzz/Cargo.toml, and each target's file calls
/// the check this test runs.
#[test]
fn every_fuzz_target_is_in_the_seed_list_and_calls_its_check() {
    let manifest: toml::Value =
        toml::from_str(&fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap()).unwrap();
    let bins = manifest["bin"].as_array().expect("[[bin]] targets");
    let mut declared = BTreeSet::new();
    for bin in bins {
        let name = bin["name"].as_str().unwrap();
        assert_eq!(
            bin["path"].as_str(),
            Some(format!("fuzz_targets/{name}.rs").as_str())
        );
        let source =
            fs::read_to_string(root().join("fuzz/fuzz_targets").join(format!("{name}.rs")))
                .unwrap();
        // Past its comments, the file is the entry point calling the check, nothing else.
        let code: Vec<&str> = source
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with("//"))
            .collect();
        let uses = format!("use curupira_fuzz::checks::{name};");
        let call = code.last().copied().unwrap_or_default();
        assert!(
            code.len() == 4
                && code[..3]
                    == [
                        "#![no_main]",
                        uses.as_str(),
                        "use libfuzzer_sys::fuzz_target;"
                    ]
                && call.starts_with("fuzz_target!(|")
                && (call.ends_with(&format!("| {name}::check(data));"))
                    || call.ends_with(&format!("| {name}::check(input));"))),
            "fuzz_targets/{name}.rs does not only call checks::{name}::check:\n{source}"
        );
        declared.insert(name.to_owned());
    }
    let listed: BTreeSet<String> = TARGETS.iter().map(|(name, _)| (*name).to_owned()).collect();
    assert_eq!(
        listed, declared,
        "TARGETS and fuzz/Cargo.toml's [[bin]] differ"
    );
}
