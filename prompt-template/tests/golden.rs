//! Golden cases for the placeholder rule, read from `tests/golden/rules.txt` (its header
//! describes the format). Each case is rendered against a pair slice, a `HashMap` and a
//! `BTreeMap` holding the same values, which must all agree with the expected text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use curupira_template::Template;

struct Case {
    name: String,
    template: String,
    lookup: Vec<(String, String)>,
    placeholders: Vec<String>,
    expected: String,
}

fn load_cases() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/rules.txt");
    let text = std::fs::read_to_string(&path).expect("read tests/golden/rules.txt");
    let mut cases = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let name = line
            .strip_prefix("=== ")
            .unwrap_or_else(|| panic!("expected `=== name`, found {line:?}"))
            .to_owned();
        let mut sections = HashMap::new();
        for section in ["template", "lookup", "placeholders", "expected"] {
            let header = lines.next().unwrap_or_default();
            assert_eq!(header, format!("--- {section}"), "in case {name:?}");
            let mut body = Vec::new();
            while let Some(next) = lines.peek() {
                if next.starts_with("--- ") || next.starts_with("=== ") {
                    break;
                }
                body.push(lines.next().unwrap());
            }
            // Blank lines separate cases; they end the last section.
            if section == "expected" {
                while body.last() == Some(&"") {
                    body.pop();
                }
            }
            sections.insert(section, body);
        }
        let lookup = sections["lookup"]
            .iter()
            .map(|line| {
                let (key, value) = line
                    .split_once('=')
                    .unwrap_or_else(|| panic!("lookup line without `=` in case {name:?}"));
                (key.to_owned(), value.to_owned())
            })
            .collect();
        cases.push(Case {
            template: sections["template"].join("\n"),
            lookup,
            placeholders: sections["placeholders"]
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            expected: sections["expected"].join("\n"),
            name,
        });
    }
    cases
}

#[test]
fn golden_cases_render_as_expected() {
    let cases = load_cases();
    assert!(
        cases.len() >= 20,
        "only {} golden cases loaded",
        cases.len()
    );
    for case in &cases {
        let template = Template::parse(&case.template);
        let hash: HashMap<String, String> = case.lookup.iter().cloned().collect();
        let tree: BTreeMap<String, String> = case.lookup.iter().cloned().collect();
        let name = &case.name;

        assert_eq!(template.render(&case.lookup), case.expected, "{name}");
        assert_eq!(template.render(&hash), case.expected, "{name} (HashMap)");
        assert_eq!(template.render(&tree), case.expected, "{name} (BTreeMap)");

        let written: Vec<&str> = template.placeholders().map(|p| p.as_written()).collect();
        assert_eq!(written, case.placeholders, "{name}: placeholders");
        for placeholder in template.placeholders() {
            assert_eq!(
                &case.template[placeholder.span()],
                placeholder.as_written(),
                "{name}: span"
            );
            assert_eq!(
                &case.template[placeholder.key_span()],
                placeholder.key(),
                "{name}: key span"
            );
        }
        let keys: Vec<&str> = template.keys().collect();
        let expected_keys: Vec<&str> = case
            .placeholders
            .iter()
            .map(|p| &p[2..p.len() - 1])
            .collect();
        assert_eq!(keys, expected_keys, "{name}: keys");
    }
}

#[test]
fn golden_file_pins_the_issue_cases() {
    let names: Vec<String> = load_cases().into_iter().map(|case| case.name).collect();
    for wanted in [
        "an unknown key is left exactly as written",
        "`${` with no `}` after it is literal text",
        "`${a${b}}`: the first `}` closes, so the key is `a${b` and a literal `}` follows",
        "keys that are not identifiers work",
        "adjacent placeholders",
        "`$${a}` is a literal `$` then a placeholder",
        "a value containing `${x}` is not expanded",
        "multibyte UTF-8 around and inside placeholders",
        "the empty template",
    ] {
        assert!(names.iter().any(|n| n == wanted), "missing case {wanted:?}");
    }
}

#[test]
fn a_key_may_span_lines() {
    let template = Template::parse("a ${multi\nline} b");
    assert_eq!(template.keys().collect::<Vec<_>>(), ["multi\nline"]);
    assert_eq!(template.render(&[("multi\nline", "X")]), "a X b");
}
