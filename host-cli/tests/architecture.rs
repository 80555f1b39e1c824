//! ARCHITECTURE.md's two tables hold: the crate map matches every crate's
//! `Cargo.toml` (the crates of ours it depends on, exactly; nothing it must never
//! depend on, directly, through a crate of ours, or through any crate as `cargo tree`
//! resolves it), and each rule's owner exists where the table says. And no two
//! sibling modules of a crate import each other.

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

/// Normal dependencies of a package, target-specific ones included; with `optional`
/// false, only those no feature has to ask for.
fn dependencies_of(folder: &str, optional: bool) -> BTreeSet<String> {
    let text = fs::read_to_string(root().join(folder).join("Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    let keep = |table: &toml::Table| -> Vec<String> {
        table
            .iter()
            .filter(|(_, spec)| {
                optional || spec.get("optional").and_then(toml::Value::as_bool) != Some(true)
            })
            .map(|(name, _)| name.clone())
            .collect()
    };
    let mut out: BTreeSet<String> = manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|table| keep(table).into_iter().collect())
        .unwrap_or_default();
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for target in targets.values() {
            if let Some(table) = target.get("dependencies").and_then(toml::Value::as_table) {
                out.extend(keep(table));
            }
        }
    }
    out
}

/// Normal dependencies of a package, target-specific and optional ones included.
fn dependencies(folder: &str) -> BTreeSet<String> {
    dependencies_of(folder, true)
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
    // package → its dependencies that no feature has to ask for.
    let mut required: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
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
        required.insert(package.clone(), dependencies_of(&folder, false));
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
    // "Never", as Cargo resolves it: through any crate, third-party ones included.
    for (package, (_, never)) in &crates {
        let resolved = resolved_dependencies(package);
        let bad: Vec<_> = never.intersection(&resolved).collect();
        assert!(
            bad.is_empty(),
            "`cargo tree -p {package} -e normal` reaches {bad:?}, which it must never depend on"
        );
    }
    // "Never", directly or through a crate of ours (of which only what no feature has
    // to ask for: an optional dependency of a dependency is reached when a feature
    // enables it, which the `cargo tree` check above sees as Cargo resolves it).
    for (package, (_, never)) in &crates {
        let mut reached = BTreeSet::new();
        let mut todo = vec![package.clone()];
        while let Some(next) = todo.pop() {
            let direct = if next == *package {
                crates.get(&next).map(|(direct, _)| direct)
            } else {
                required.get(&next)
            };
            let Some(direct) = direct else {
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

/// Every package `cargo tree -p package -e normal` shows (the package itself left out):
/// its normal dependencies, transitively, with the features the package enables.
fn resolved_dependencies(package: &str) -> BTreeSet<String> {
    let output = std::process::Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none"])
        .args(["--format", "{p}", "-p", package])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).unwrap();
    let resolved: BTreeSet<String> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != package)
        .map(str::to_owned)
        .collect();
    assert!(
        !resolved.is_empty(),
        "cargo tree -p {package} printed no dependency:\n{tree}"
    );
    resolved
}

/// A source file without its comment lines and its `mod tests`.
fn code_of(text: &str) -> String {
    text.split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules a source file names through `crate::…` (imports and paths, comments
/// left out), by the module path each name starts with, among `modules`.
fn named_modules(text: &str, own: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code = code_of(text);
    let mut named = BTreeSet::new();
    let mut add = |path: &str| {
        let parts: Vec<&str> = path.split("::").collect();
        for len in (1..=parts.len()).rev() {
            let module = parts[..len].join("::");
            if modules.contains(&module) {
                if module != own && !own.starts_with(&format!("{module}::")) {
                    named.insert(module);
                }
                return;
            }
        }
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a, b::c, …}`: each item's first segments.
            let group = group.split('}').next().unwrap_or_default();
            for item in group.split(',') {
                add(item.trim());
            }
            continue;
        }
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        add(path.trim_end_matches(':'));
    }
    named
}

#[test]
fn no_two_sibling_modules_of_a_crate_import_each_other() {
    let mut circles = Vec::new();
    let mut checked = 0;
    for row in table("## The crate map") {
        let folder = names(&row[0]).into_iter().next().unwrap();
        let src = root().join(&folder).join("src");
        if folder == "fuzz" || !src.is_dir() {
            continue;
        }
        // Module path → its file (tests files and the crate roots left out).
        let mut files = BTreeMap::new();
        let mut todo = vec![src.clone()];
        while let Some(dir) = todo.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    todo.push(path);
                    continue;
                }
                let relative = path
                    .strip_prefix(&src)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let Some(module) = relative.strip_suffix(".rs") else {
                    continue;
                };
                let module = module.trim_end_matches("/mod").replace('/', "::");
                if ["lib", "main", "tests"].contains(&module.as_str())
                    || module.ends_with("::tests")
                {
                    continue;
                }
                files.insert(module, path);
            }
        }
        let modules: BTreeSet<String> = files.keys().cloned().collect();
        let mut edges = BTreeSet::new();
        for (module, path) in &files {
            let text = fs::read_to_string(path).unwrap();
            for named in named_modules(&text, module, &modules) {
                edges.insert((module.clone(), named));
            }
        }
        checked += files.len();
        for (from, to) in &edges {
            if from < to && edges.contains(&(to.clone(), from.clone())) {
                circles.push(format!("{folder}: `{from}` ⇄ `{to}`"));
            }
        }
    }
    assert!(checked > 50, "only {checked} modules were looked at");
    assert!(
        circles.is_empty(),
        "modules that import each other (move what both need to one of them, or to a third): {circles:#?}"
    );
}

#[test]
fn the_circle_check_sees_a_circle() {
    let modules: BTreeSet<String> = ["model", "json_schema", "model::wire"]
        .map(str::to_owned)
        .into();
    let model = "use crate::json_schema::SEMVER;\n// crate::ignored\n";
    let schema = "use crate::{model::wire::Wire, other};\nfn f() { crate::model::x() }";
    assert_eq!(
        named_modules(model, "model", &modules),
        BTreeSet::from(["json_schema".to_owned()])
    );
    assert_eq!(
        named_modules(schema, "json_schema", &modules),
        BTreeSet::from(["model::wire".to_owned(), "model".to_owned()])
    );
    // A child naming its parent is not a sibling circle.
    assert!(named_modules("use crate::model::Thing;", "model::wire", &modules).is_empty());
}

/// The lines of a source file that are not a `#[cfg(test)]` module.
fn lines_of_code(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let mut counted = 0;
    let mut at = 0;
    while at < lines.len() {
        let next = lines.get(at + 1).map_or("", |line| line.trim());
        if lines[at].trim() == "#[cfg(test)]" && next.starts_with("mod ") {
            if next.ends_with(';') {
                at += 2;
                continue;
            }
            // Skip the braced module.
            let mut depth = 0i64;
            at += 1;
            while at < lines.len() {
                depth += lines[at].matches('{').count() as i64;
                depth -= lines[at].matches('}').count() as i64;
                at += 1;
                if depth <= 0 {
                    break;
                }
            }
            continue;
        }
        counted += 1;
        at += 1;
    }
    counted
}

/// Every `.rs` file under `dir`, `tests.rs` files left out.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs")
                && path.file_name().is_some_and(|name| name != "tests.rs")
            {
                found.push(path);
            }
        }
    }
    found
}

/// The app is wiring (issue 28): at most a fifth of the workspace's source lines (the
/// `.rs` files under each crate's `src/`, test modules left out), and no child
/// process, thread or SQL of its own outside `main.rs`.
#[test]
fn the_app_is_wiring() {
    let mut total = 0;
    let mut app = 0;
    for row in table("## The crate map") {
        let folder = names(&row[0]).into_iter().next().unwrap();
        let src = root().join(&folder).join("src");
        if folder == "fuzz" || !src.is_dir() {
            continue;
        }
        for file in sources(&src) {
            let text = fs::read_to_string(&file).unwrap();
            let lines = lines_of_code(&text);
            total += lines;
            if folder != "host-cli" {
                continue;
            }
            app += lines;
            // The binaries' entry points: `main.rs`, and `bin/curu.rs`, whose whole
            // job is to become `curupira`.
            if file.ends_with("src/main.rs") || file.ends_with("src/bin/curu.rs") {
                continue;
            }
            let code = code_of(&text);
            for engine in [
                "std::process::Command",
                "Command::new(",
                "thread::spawn",
                "thread::scope",
                "thread::Builder",
                "rusqlite",
                "SELECT ",
            ] {
                // As a name of its own (`LaunchCommand::new(` is data, not a process).
                let named = code.match_indices(engine).any(|(at, _)| {
                    !code[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                assert!(
                    !named,
                    "{} has `{engine}`: engines are crates, the app is wiring",
                    file.display()
                );
            }
        }
    }
    assert!(total > 20_000, "only {total} lines were counted");
    assert!(
        app * 100 <= total * 15,
        "host-cli has {app} of the workspace's {total} source lines ({:.1} %), more than 15 %",
        app as f64 * 100.0 / total as f64
    );
}

#[test]
fn test_modules_are_not_counted() {
    let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn b() {\n    }\n}\nfn c() {}\n#[cfg(test)]\nmod more;\n";
    assert_eq!(lines_of_code(text), 2);
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
