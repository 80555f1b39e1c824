//! The invocation name the model sees for a tool (SPEC section 3).
//!
//! The expected hashes were computed apart from the crate, with
//! `printf '%s' $'{package}\n{tool}' | sha256sum`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::LazyLock;

use proptest::prelude::*;
use regex::Regex;
use spirit_manifest::{MAX_INVOCATION_NAME, invocation_name};

static TOOL_NAME_API: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^[a-zA-Z0-9_-]{1,64}$").unwrap());

#[test]
fn seed_example() {
    assert_eq!(
        invocation_name("@example/spirit-extension", "lookup_item"),
        "extension___example_spirit-extension__lookup_item__079d1c57"
    );
}

#[test]
fn a_long_package_name_is_cut_from_the_right() {
    let name = invocation_name(
        "@a-very-long-organisation-name/an-extension-with-a-really-long-name",
        "fetch.item",
    );
    assert_eq!(
        name,
        "extension___a-very-long-organisation-name___fetch_item__3c9d9047"
    );
    assert_eq!(name.len(), MAX_INVOCATION_NAME);
}

#[test]
fn the_tool_part_is_cut_once_the_id_is_down_to_one_character() {
    let name = invocation_name(
        "@a-very-long-organisation-name/an-extension-with-a-really-long-name",
        "summarise.the.current.conversation.for.the.user",
    );
    assert_eq!(
        name,
        "extension_____summarise_the_current_conversation_for_t__e8213cf5"
    );
    assert_eq!(name.len(), MAX_INVOCATION_NAME);
}

#[test]
fn empty_parts_become_an_underscore() {
    assert_eq!(invocation_name("", ""), "extension________01ba4719");
}

#[test]
fn each_character_not_byte_is_replaced() {
    // `é` is two bytes in UTF-8 and `😀` four; each becomes one `_`.
    assert_eq!(
        invocation_name("café😀", "x"),
        "extension__caf____x__e8b5e29b"
    );
}

#[test]
fn sanitised_twins_differ_by_their_hash() {
    let dotted = invocation_name("acme", "item.get");
    let underscored = invocation_name("acme", "item_get");
    assert_eq!(
        dotted[..dotted.len() - 8],
        underscored[..underscored.len() - 8]
    );
    assert_ne!(dotted, underscored);
}

/// Names from a small alphabet, so that `a.b` / `a_b` twins and long shared prefixes
/// (which shortening turns into equal parts) are common.
fn near_collision() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ab._/@-]{0,4}",
        "[ab]{40,45}[._]{0,2}",
        "@[ab]{20}/[ab._é]{20,30}",
    ]
}

proptest! {
    #[test]
    fn always_a_valid_tool_name(package in any::<String>(), tool in any::<String>()) {
        let name = invocation_name(&package, &tool);
        prop_assert!(TOOL_NAME_API.is_match(&name), "{name}");
        prop_assert_eq!(name, invocation_name(&package, &tool));
    }

    #[test]
    fn long_names_always_fit(package in "\\PC{0,300}", tool in "\\PC{0,300}") {
        let name = invocation_name(&package, &tool);
        prop_assert!(TOOL_NAME_API.is_match(&name), "{name}");
        prop_assert!(name.len() <= MAX_INVOCATION_NAME);
    }

    #[test]
    fn distinct_pairs_get_distinct_names(
        pairs in prop::collection::vec((near_collision(), near_collision()), 50)
    ) {
        let pairs: HashSet<(String, String)> = pairs.into_iter().collect();
        let names: HashSet<String> = pairs
            .iter()
            .map(|(package, tool)| invocation_name(package, tool))
            .collect();
        prop_assert_eq!(names.len(), pairs.len());
    }
}
