//! Parse and render arbitrary templates; compare with a slow reference renderer written
//! from the rule's wording (SPEC section 5), and check `keys()` and the placeholder spans.

use std::collections::HashMap;

use arbitrary::Arbitrary;
use curupira_template::{Template, from_fn};

/// A template piece. The small alphabet makes `${`, `}` and near-misses frequent; `Text`
/// brings in any Unicode.
#[derive(Arbitrary, Debug)]
enum Piece {
    Dollar,
    Open,
    Close,
    A,
    B,
    Multibyte,
    Text(String),
}

/// One run's input, read from libFuzzer's bytes with `arbitrary`: the pieces of a
/// template and what to render it with.
#[derive(Arbitrary, Debug)]
pub struct Input {
    pieces: Vec<Piece>,
    /// Explicit pairs; the first pair with a key wins.
    pairs: Vec<(String, String)>,
    /// When present, every key the template uses that `pairs` lacks gets this value, so
    /// replacements happen even when the fuzzer's keys miss.
    fill: Option<String>,
}

/// `${`, the first `}` after it, replace when known, continue after the `}`.
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

/// Runs every check on one input, as the fuzz target does once libFuzzer's bytes
/// are read into an [`Input`] (see [`super::typed`]).
pub fn check(input: Input) {
    let mut text = String::new();
    for piece in &input.pieces {
        match piece {
            Piece::Dollar => text.push('$'),
            Piece::Open => text.push('{'),
            Piece::Close => text.push('}'),
            Piece::A => text.push('a'),
            Piece::B => text.push('b'),
            Piece::Multibyte => text.push('é'),
            Piece::Text(s) => text.push_str(s),
        }
    }
    let mut pairs: Vec<(String, String)> = input.pairs.into_iter().take(16).collect();

    let template = Template::parse(&text);
    let (_, reference_keys) = reference(&text, &[]);
    let keys: Vec<&str> = template.keys().collect();
    assert_eq!(keys, reference_keys);
    assert_eq!(template.placeholders().len(), keys.len());
    for placeholder in template.placeholders() {
        assert_eq!(&text[placeholder.span()], placeholder.as_written());
        assert_eq!(&text[placeholder.key_span()], placeholder.key());
    }

    if let Some(fill) = &input.fill {
        for key in &reference_keys {
            pairs.push((key.clone(), fill.clone()));
        }
    }
    let (expected, _) = reference(&text, &pairs);
    assert_eq!(template.render(&pairs), expected);

    let mut map = HashMap::new();
    for (key, value) in &pairs {
        map.entry(key.as_str()).or_insert(value.as_str());
    }
    assert_eq!(template.render(&map), expected);

    // No lookup: the text comes back unchanged.
    assert_eq!(template.render(&from_fn(|_: &str| None)), text);
}
