//! Strings trimmed as the app trims them (issue 40, item 1). The app trims every member
//! below with `String.prototype.trim` before it uses it (`packages/host-internal/src/
//! extensions.ts`: the manifest's strings, its enum entries, tool names, setting and
//! secret keys, `main`); JavaScript's set of white space is Node's recorded one
//! (`recordings/javascript/trim.json`): U+FEFF is in it, U+0085 (NEL) is not. So, for
//! each family of members, the app's verdict follows from its code and that set:
//!
//! - padded with U+FEFF: the bare value, so the package installs;
//! - ending in NEL: the value with its NEL, which no name, key, host or file has, so it
//!   is refused;
//! - only U+FEFF: empty once trimmed, refused as a missing value;
//! - only NEL: not empty, and refused as a value of the wrong shape.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;
use spirit_manifest::{Options, check_folder};

/// The families, each a pointer into the seed's `package.json` and its value there.
const FAMILIES: &[(&str, &str)] = &[
    ("/name", "@example/spirit-extension"),
    ("/main", "dist/index.js"),
    ("/spiritExtension/displayName", "Example extension"),
    ("/spiritExtension/supportedHosts/0", "cli"),
    ("/spiritExtension/activationEvents/0", "onStartup"),
    (
        "/spiritExtension/requestedCapabilities/0",
        "tool-definitions",
    ),
    ("/spiritExtension/contributes/tools/0/name", "lookup_item"),
    (
        "/spiritExtension/contributes/tools/0/approvalMode",
        "allowed",
    ),
    ("/spiritExtension/settingsSchema/0/key", "region"),
    ("/spiritExtension/settingsSchema/0/type", "select"),
    ("/spiritExtension/secretSlots/0/key", "api_token"),
];

/// Whether the seed package with `value` at `pointer` is accepted, and what was said.
fn accepted(pointer: &str, value: &str) -> (bool, String) {
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/seed-example");
    let dir = tempfile::tempdir().unwrap();
    curupira_test_support::fs::copy_dir(&seed, dir.path());
    let path = dir.path().join("package.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    *manifest.pointer_mut(pointer).unwrap() = Value::String(value.to_owned());
    std::fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    let checked = check_folder(dir.path(), &Options::default()).unwrap();
    let said = checked
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    (checked.package.is_some(), said)
}

#[test]
fn a_value_padded_with_a_byte_order_mark_is_the_bare_value() {
    for (pointer, value) in FAMILIES {
        let (ok, said) = accepted(pointer, &format!("\u{feff}{value}\u{feff}"));
        assert!(ok, "{pointer}: refused, the app installs it:\n{said}");
    }
}

#[test]
fn a_value_ending_in_nel_is_refused() {
    for (pointer, value) in FAMILIES {
        if *pointer == "/spiritExtension/displayName" {
            // Any text is a display name, NEL included.
            continue;
        }
        let (ok, said) = accepted(pointer, &format!("{value}\u{85}"));
        assert!(!ok, "{pointer}: accepted, the app refuses it");
        assert!(!said.is_empty(), "{pointer}");
    }
}

#[test]
fn only_a_byte_order_mark_is_empty_and_only_nel_is_not() {
    for (pointer, _) in FAMILIES {
        let (ok, said) = accepted(pointer, "\u{feff}");
        assert!(
            !ok,
            "{pointer}: U+FEFF alone accepted, the app reads it as empty"
        );
        let (nel, nel_said) = accepted(pointer, "\u{85}");
        if *pointer == "/spiritExtension/displayName" {
            assert!(
                nel,
                "{pointer}: NEL alone is a display name to the app:\n{nel_said}"
            );
        } else {
            assert!(!nel, "{pointer}: NEL alone accepted");
        }
        assert!(!said.is_empty(), "{pointer}");
    }
}
