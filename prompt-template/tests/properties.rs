//! Property tests: `Template` against a slow reference renderer written straight from
//! the rule's wording, on templates over a small alphabet where `$`, `{` and `}` collide
//! often, and on arbitrary Unicode text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use curupira_template::{Template, from_fn};
use proptest::prelude::*;

/// The rule as SPEC section 5 words it, one step at a time: find `${`, find the first
/// `}` after it, replace if the lookup has the key, continue after the `}`. Returns the
/// rendered text and the keys in order.
fn reference(template: &str, pairs: &[(String, String)]) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut keys = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("${") {
        let after_open = &rest[open + 2..];
        let Some(close) = after_open.find('}') else {
            break;
        };
        let key = &after_open[..close];
        out.push_str(&rest[..open]);
        match pairs.iter().find(|(k, _)| k == key) {
            Some((_, value)) => out.push_str(value),
            None => out.push_str(&rest[open..open + 2 + close + 1]),
        }
        keys.push(key.to_owned());
        rest = &after_open[close + 1..];
    }
    out.push_str(rest);
    (out, keys)
}

/// Text over an alphabet where placeholders, near-misses and multibyte characters are
/// all frequent.
fn small_text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["$", "{", "}", "a", "b", "é"]),
        0..max,
    )
    .prop_map(|parts| parts.concat())
}

fn pairs() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec((small_text(4), small_text(8)), 0..8)
}

/// The same values as a map, first pair winning like a slice lookup.
fn first_wins_map(pairs: &[(String, String)]) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for (key, value) in pairs {
        map.entry(key.clone()).or_insert_with(|| value.clone());
    }
    map
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn render_and_keys_agree_with_the_reference(template in small_text(40), pairs in pairs()) {
        let (expected, expected_keys) = reference(&template, &pairs);
        let parsed = Template::parse(&template);
        prop_assert_eq!(parsed.render(&pairs), expected.clone());
        prop_assert_eq!(parsed.render(&first_wins_map(&pairs)), expected);
        prop_assert_eq!(parsed.keys().collect::<Vec<_>>(), expected_keys);
    }

    #[test]
    fn arbitrary_unicode_renders_like_the_reference(template in any::<String>(), value in any::<String>()) {
        let parsed = Template::parse(&template);
        let every_key = from_fn(|_: &str| Some(value.as_str()));
        let pairs: Vec<(String, String)> = parsed.keys().map(|k| (k.to_owned(), value.clone())).collect();
        let (expected, expected_keys) = reference(&template, &pairs);
        prop_assert_eq!(parsed.render(&every_key), expected);
        prop_assert_eq!(parsed.render(&[] as &[(String, String)]), template.clone());
        prop_assert_eq!(parsed.keys().collect::<Vec<_>>(), expected_keys);
        for placeholder in parsed.placeholders() {
            prop_assert_eq!(&template[placeholder.span()], placeholder.as_written());
            prop_assert_eq!(&template[placeholder.key_span()], placeholder.key());
        }
    }

    #[test]
    fn a_template_without_dollar_brace_renders_to_itself(
        template in prop_oneof![small_text(60), any::<String>()].prop_filter("no `${`", |t| !t.contains("${"))
    ) {
        let parsed = Template::parse(&template);
        prop_assert_eq!(parsed.keys().len(), 0);
        prop_assert_eq!(parsed.render(&from_fn(|_: &str| Some("X"))), template);
    }

    #[test]
    fn a_value_containing_a_placeholder_is_never_expanded(
        keys in prop::collection::vec("[a-z0-9.-]{0,6}", 1..6),
        before in small_text(6),
        after in small_text(6),
        template_text in small_text(20),
    ) {
        // Every key's value contains `${k}` for every key, including itself; each of those
        // keys is known, so a second scan would change the output.
        let inner: String = keys.iter().map(|k| format!("${{{k}}}")).collect();
        let value = format!("{before}{inner}{after}");
        let pairs: Vec<(String, String)> = keys.iter().map(|k| (k.clone(), value.clone())).collect();

        let only_placeholders = Template::parse(&inner);
        prop_assert_eq!(only_placeholders.render(&pairs), value.repeat(keys.len()));

        let mixed = format!("{template_text}{inner}{template_text}");
        let (expected, _) = reference(&mixed, &pairs);
        prop_assert_eq!(Template::parse(&mixed).render(&pairs), expected);
    }
}
