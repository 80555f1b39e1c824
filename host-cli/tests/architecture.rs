//! ARCHITECTURE.md's two tables hold: the crate map matches every crate's
//! `Cargo.toml` (the crates of ours it depends on, exactly; nothing it must never
//! depend on, directly or through a crate of ours), and each rule's owner exists where
//! the table says.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The rows of the Markdown table under `heading`: cells with their backticks kept.
fn table(heading: &str) -> Vec<Vec<String>> {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find(heading)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no `{heading}`"));
    text[start..]
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| {
            line.trim_matches('|')
                .split(" | ")
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The names in a cell: each `` `name` `` (an em dash is none).
fn names(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Normal dependencies of a package, target-specific ones included.
fn dependencies(folder: &str) -> BTreeSet<String> {
    let text = fs::read_to_string(root().join(folder).join("Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    let mut out: BTreeSet<String> = manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|table| table.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for target in targets.values() {
            if let Some(table) = target.get("dependencies").and_then(toml::Value::as_table) {
                out.extend(table.keys().cloned());
            }
        }
    }
    out
}

fn package_name(folder: &str) -> String {
    let text = fs::read_to_string(root().join(folder).join("Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    manifest["package"]["name"].as_str().unwrap().to_owned()
}

fn ours(name: &str) -> bool {
    name.starts_with("curupira-") || name.starts_with("spirit-")
}

#[test]
fn the_crate_map_matches_every_cargo_toml() {
    let rows = table("## The crate map");
    assert!(rows.len() >= 13, "the crate map has {} rows", rows.len());
    // package → (its direct dependencies, the listed "never").
    let mut crates: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
    let mut folders = BTreeSet::new();
    for row in &rows {
        let [folder, package, _concern, depends, never] = row.as_slice() else {
            panic!("a crate-map row has {} cells: {row:?}", row.len());
        };
        let folder = names(folder).into_iter().next().unwrap();
        let package = names(package).into_iter().next().unwrap();
        folders.insert(folder.clone());
        if folder == "fuzz" {
            continue;
        }
        assert_eq!(package_name(&folder), package, "folder `{folder}`");
        let direct = dependencies(&folder);
        let listed = names(depends);
        let actual: BTreeSet<String> = direct.iter().filter(|d| ours(d)).cloned().collect();
        assert_eq!(
            actual, listed,
            "`{package}` depends on these crates of ours; ARCHITECTURE.md lists others"
        );
        crates.insert(package, (direct, names(never)));
    }
    // Every workspace member is on the map.
    let workspace: toml::Table = fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    for member in workspace["workspace"]["members"].as_array().unwrap() {
        let member = member.as_str().unwrap();
        assert!(
            folders.contains(member),
            "`{member}` is not on the crate map"
        );
    }
    // "Never", directly or through a crate of ours.
    for (package, (_, never)) in &crates {
        let mut reached = BTreeSet::new();
        let mut todo = vec![package.clone()];
        while let Some(next) = todo.pop() {
            let Some((direct, _)) = crates.get(&next) else {
                continue;
            };
            for dependency in direct {
                if reached.insert(dependency.clone()) && ours(dependency) {
                    todo.push(dependency.clone());
                }
            }
        }
        let bad: Vec<_> = never.intersection(&reached).collect();
        assert!(
            bad.is_empty(),
            "`{package}` reaches {bad:?}, which it must never depend on"
        );
    }
}

#[test]
fn every_rule_owner_exists_where_the_table_says() {
    let rows = table("## Who owns each rule");
    assert!(rows.len() >= 20, "the rule table has {} rows", rows.len());
    for row in &rows {
        let [rule, file, owner] = row.as_slice() else {
            panic!("a rule row has {} cells: {row:?}", row.len());
        };
        let file = names(file).into_iter().next().unwrap();
        let owner = names(owner).into_iter().next().unwrap();
        let text = fs::read_to_string(root().join(&file))
            .unwrap_or_else(|err| panic!("{rule}: cannot read {file}: {err}"));
        let defined = ["fn", "struct", "enum", "trait", "const", "static", "type"]
            .iter()
            .any(|kind| {
                text.match_indices(&format!("{kind} {owner}"))
                    .any(|(at, matched)| {
                        let after = text[at + matched.len()..].chars().next();
                        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    })
            });
        assert!(defined, "{rule}: `{owner}` is not defined in {file}");
    }
}
