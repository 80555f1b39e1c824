//! The names the model sees for tools, as the Spirit app builds them (SPEC section 3):
//! each part of the rule on the crate's own vectors, so the rule is covered without the
//! app's recorded conformance vectors.
//!
//! The expected hashes were computed apart from the crate, with
//! `printf '%s\0%s' ID_FRAGMENT TOOL_FRAGMENT | sha1sum`; the expected orders with
//! Node.js 20 (ICU 78), `[...].sort((a, b) => a.localeCompare(b, "zh-CN"))` for
//! display names and `"en"` for ids.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::LazyLock;

use proptest::prelude::*;
use regex::Regex;
use serde_json::json;
use spirit_manifest::{
    MAX_INVOCATION_NAME, Options, PackageJson, check_str, installed_order, invocation_name,
    offered_tools, offered_tools_in_order, offers_tools,
};

static APP_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new("^[a-z0-9_]{1,64}$").unwrap());

const BOTH: &[&str] = &["tool-definitions", "tool-execution"];

/// A package `id` named `display`, requesting `capabilities`, with `tools`.
fn package(id: &str, display: &str, capabilities: &[&str], tools: &[&str]) -> PackageJson {
    let tools: Vec<_> = tools
        .iter()
        .map(|name| json!({"name": name, "description": "A tool.", "inputSchema": {"type": "object"}}))
        .collect();
    let text = json!({
        "name": id,
        "version": "1.0.0",
        "main": "index.js",
        "spiritExtension": {
            "displayName": display,
            "supportedHosts": ["cli"],
            "requestedCapabilities": capabilities,
            "contributes": {"tools": tools},
        },
    })
    .to_string();
    let checked = check_str(&text, "package.json", &Options::default());
    match checked.package {
        Some(package) => package,
        // Our checker refuses tools without both capabilities (SPEC section 3); the app
        // installs such a package and offers none of its tools.
        None if capabilities != BOTH => serde_json::from_str(&text).unwrap(),
        None => panic!("{id}: {:?}", checked.report.diagnostics()),
    }
}

/// `(id, tool, name)` of each offered tool.
fn triples(offered: &[spirit_manifest::OfferedTool<'_>]) -> Vec<(String, String, String)> {
    offered
        .iter()
        .map(|o| (o.package.name.clone(), o.tool.name.clone(), o.name.clone()))
        .collect()
}

fn triple(id: &str, tool: &str, name: &str) -> (String, String, String) {
    (id.to_owned(), tool.to_owned(), name.to_owned())
}

// -- one name ----------------------------------------------------------------------

#[test]
fn seed_example() {
    assert_eq!(
        invocation_name("@example/spirit-extension", "lookup_item"),
        "extension__example_spirit_e__lookup_item__8b3b40e0"
    );
}

#[test]
fn fragments_keep_ascii_letters_and_digits_lower_cased() {
    // `@acme/find-things` is exactly 16 characters once fragmented: nothing is cut.
    assert_eq!(
        invocation_name("@acme/find-things", "find.item"),
        "extension__acme_find_things__find_item__9c65debe"
    );
    assert_eq!(
        invocation_name("ABC", "TOOL"),
        "extension__abc__tool__ec27c2b5"
    );
}

#[test]
fn every_run_of_other_characters_is_one_underscore_trimmed_at_the_ends() {
    assert_eq!(
        invocation_name("--a..@/b__", "_tool_"),
        "extension__a_b__tool__ec5d66bd"
    );
    // Characters, not bytes: `ü` (two bytes) and `😀` (four) are one run with `-`.
    assert_eq!(
        invocation_name("über😀-tool", "tool"),
        "extension__ber_tool__tool__93569be1"
    );
}

#[test]
fn an_empty_fragment_is_tool() {
    let name = "extension__tool__tool__5d868e2f";
    assert_eq!(invocation_name("", ""), name);
    assert_eq!(invocation_name("@/", "..."), name);
    assert_eq!(invocation_name("ツール", "日本語"), name);
}

#[test]
fn the_id_is_cut_to_16_and_the_tool_to_24_without_a_second_trim() {
    // `abcdefghijklmno.p` fragments to 17 characters; the cut leaves a trailing `_`.
    assert_eq!(
        invocation_name("abcdefghijklmno.p", "lookup"),
        "extension__abcdefghijklmno___lookup__50c45fc4"
    );
    // Tool names that differ only after their 24th character get one name.
    let one = invocation_name("pkg", "abcdefghijklmnopqrstuvwxyz-one");
    assert_eq!(one, "extension__pkg__abcdefghijklmnopqrstuvwx__4f312630");
    assert_eq!(invocation_name("pkg", "abcdefghijklmnopqrstuvwx.two"), one);
}

#[test]
fn the_hash_is_of_the_cut_fragments() {
    // Different spellings, same fragments, same hash: the suffixes tell them apart.
    assert_eq!(
        invocation_name("my-ext", "get.item"),
        "extension__my_ext__get_item__26b4c02d"
    );
    assert_eq!(
        invocation_name("@my/ext", "get--item"),
        invocation_name("my-ext", "get.item")
    );
    // The longest name: both fragments at their limits, 63 characters.
    let longest = invocation_name(
        "abcdefghijklmnopqrstuvwxyz",
        "abcdefghijklmnopqrstuvwxyz0123",
    );
    assert_eq!(
        longest,
        "extension__abcdefghijklmnop__abcdefghijklmnopqrstuvwx__5e104681"
    );
    assert_eq!(longest.len(), 63);
}

proptest! {
    #[test]
    fn always_an_app_name_within_64(id in any::<String>(), tool in "\\PC{0,300}") {
        let name = invocation_name(&id, &tool);
        prop_assert!(APP_NAME.is_match(&name), "{name}");
        prop_assert!(name.len() < MAX_INVOCATION_NAME);
        prop_assert_eq!(name, invocation_name(&id, &tool));
    }
}

// -- names over the installed list -------------------------------------------------

#[test]
fn a_taken_name_gets_the_first_free_suffix_in_list_then_tool_order() {
    let first = package("my-ext", "A", BOTH, &["get.item", "get-item"]);
    let second = package("my.ext", "B", BOTH, &["get_item", "other"]);
    let offered = offered_tools_in_order([&first, &second]);
    assert_eq!(
        triples(&offered),
        [
            triple(
                "my-ext",
                "get.item",
                "extension__my_ext__get_item__26b4c02d"
            ),
            triple(
                "my-ext",
                "get-item",
                "extension__my_ext__get_item__26b4c02d__1"
            ),
            triple(
                "my.ext",
                "get_item",
                "extension__my_ext__get_item__26b4c02d__2"
            ),
            triple("my.ext", "other", &invocation_name("my.ext", "other")),
        ]
    );
    // The list order decides who keeps the bare name.
    let swapped = offered_tools_in_order([&second, &first]);
    assert_eq!(swapped[0].name, "extension__my_ext__get_item__26b4c02d");
    assert_eq!(swapped[0].package.name, "my.ext");
}

#[test]
fn a_suffix_cuts_a_long_base_so_the_name_stays_within_64() {
    // Twelve tools whose fragments are all `abcdefghijklmnopqrstuvwx`, in a package
    // whose id fragment is cut too: a 63-character base, suffixes up to `__11`.
    let tools: Vec<String> = (0..12)
        .map(|i| format!("abcdefghijklmnopqrstuvwx-{i}"))
        .collect();
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    let pkg = package("abcdefghijklmnopqrstuvwxyz", "Long", BOTH, &tools);
    let names: Vec<String> = offered_tools([&pkg]).into_iter().map(|o| o.name).collect();
    let base = "extension__abcdefghijklmnop__abcdefghijklmnopqrstuvwx__5e104681";
    assert_eq!(names[0], base);
    assert_eq!(names[1], format!("{}__1", &base[..61]));
    assert_eq!(names[9], format!("{}__9", &base[..61]));
    assert_eq!(names[10], format!("{}__10", &base[..60]));
    assert_eq!(names[11], format!("{}__11", &base[..60]));
    assert_eq!(names[0].len(), 63);
    for name in &names[1..] {
        assert_eq!(name.len(), MAX_INVOCATION_NAME, "{name}");
    }
    assert_eq!(names.iter().collect::<HashSet<_>>().len(), names.len());
}

#[test]
fn only_extensions_requesting_both_tool_capabilities_get_names_or_take_suffixes() {
    let definitions = package("my-ext", "A", &["tool-definitions"], &["get.item"]);
    let execution = package("my_ext", "B", &["tool-execution"], &["get.item"]);
    let neither = package("my--ext", "C", &[], &["get.item"]);
    let both = package("my.ext", "D", BOTH, &["get-item"]);
    assert!(!offers_tools(&definitions));
    assert!(!offers_tools(&execution));
    assert!(!offers_tools(&neither));
    assert!(offers_tools(&both));
    let offered = offered_tools_in_order([&definitions, &execution, &neither, &both]);
    assert_eq!(
        triples(&offered),
        [triple(
            "my.ext",
            "get-item",
            "extension__my_ext__get_item__26b4c02d"
        )]
    );
    assert!(offered_tools([&definitions, &execution, &neither]).is_empty());
}

#[test]
fn extensions_are_ordered_by_display_name_then_id() {
    // zh-CN collation of ASCII: punctuation and spaces before digits before letters,
    // digits one by one, lower case first only when nothing else differs.
    let expected = [
        "_x",
        "10",
        "9",
        "a b",
        "ab",
        "alpha",
        "Alpha",
        "beta",
        "Zeta tool",
        "zeta-tool",
    ];
    let packages: Vec<PackageJson> = expected
        .iter()
        .rev()
        .enumerate()
        .map(|(i, display)| package(&format!("ext-{i}"), display, BOTH, &["t"]))
        .collect();
    let offered = offered_tools(&packages);
    let order: Vec<&str> = offered
        .iter()
        .map(|o| o.package.spirit_extension.display_name.as_str())
        .collect();
    assert_eq!(order, expected);

    // Equal display names: by id under `en` collation, not by bytes (`_` < `-` < `.`).
    let ids = ["my.ext", "my_ext", "my-ext", "@a/b", "a-b", "a.b"];
    let packages: Vec<PackageJson> = ids
        .iter()
        .map(|id| package(id, "Same", BOTH, &["get-item"]))
        .collect();
    let order: Vec<String> = offered_tools(&packages)
        .into_iter()
        .map(|o| o.package.name.clone())
        .collect();
    assert_eq!(order, ["@a/b", "a-b", "a.b", "my_ext", "my-ext", "my.ext"]);
    let mut sorted: Vec<&PackageJson> = packages.iter().collect();
    sorted.sort_by(|a, b| installed_order(a, b));
    assert_eq!(sorted[0].name, "@a/b");
}

#[test]
fn the_display_name_order_decides_the_suffixes() {
    // Three ids, one base name; the display names, not the ids, give the order:
    // `alpha` before `Alpha` (case decides last), `Beta` after both.
    let beta = package("my-ext", "Beta", BOTH, &["get-item"]);
    let upper = package("my.ext", "Alpha", BOTH, &["get-item"]);
    let lower = package("my_ext", "alpha", BOTH, &["get-item"]);
    let base = "extension__my_ext__get_item__26b4c02d";
    let expected = [
        triple("my_ext", "get-item", base),
        triple("my.ext", "get-item", &format!("{base}__1")),
        triple("my-ext", "get-item", &format!("{base}__2")),
    ];
    assert_eq!(triples(&offered_tools([&beta, &upper, &lower])), expected);
    assert_eq!(triples(&offered_tools([&lower, &beta, &upper])), expected);
}

/// ICU's order beyond ASCII: Han by pinyin, first; accented Latin with its base letter.
#[cfg(feature = "collation")]
#[test]
fn with_the_collation_feature_names_in_any_script_follow_icu() {
    let expected = [
        "阿里", "北京", "翻译", "上海", "天气", "Apple", "éclair", "zoo",
    ];
    let packages: Vec<PackageJson> = [5, 2, 7, 0, 4, 1, 6, 3]
        .iter()
        .map(|&i: &usize| package(&format!("ext-{i}"), expected[i], BOTH, &["t"]))
        .collect();
    let order: Vec<String> = offered_tools(&packages)
        .into_iter()
        .map(|o| o.package.spirit_extension.display_name.clone())
        .collect();
    assert_eq!(order, expected);
}
