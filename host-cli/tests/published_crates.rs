//! What a user of a published crate of this workspace sees, outside the workspace.
//!
//! - **README examples compile with that crate alone.** For each publishable crate,
//!   every Rust example of its README is compiled (`cargo check --offline`) in a
//!   throwaway project that depends on that crate by path and on nothing else, with
//!   the workspace's `Cargo.lock`. A doctest cannot show this: it also sees the
//!   crate's dev-dependencies, so an example that needs `serde_json` or `bytes` passes
//!   there and fails in a user's project that did not add them. What an example needs
//!   from another crate, the crate re-exports.
//! - **Repository files are linked, not named.** The crates' READMEs (crates.io) and
//!   doc comments (docs.rs) name a file of the repository, such as `docs/PROTOCOL.md`,
//!   only as a link to it under the crate's `repository` URL: on those sites a bare
//!   path leads nowhere.
//!
//! The projects live in `CARGO_TARGET_TMPDIR/readme-downstream/` and share one target
//! folder there, so a second run only checks what changed. Both read the workspace
//! with `cargo metadata`; without `cargo` (the `CARGO` cargo sets for tests, else
//! `cargo` on PATH) they skip, saying so, except under CI (`CI` set), where they fail.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use curupira_test_support::fakes;
use serde_json::Value;

/// curupira-host's `src/` is left out of the link check, its README is not: most of
/// its doc comments are the `curupira` binary's `--help` text (clap), where a
/// Markdown link would be noise.
const SOURCES_NOT_SCANNED: &[&str] = &["curupira-host"];

/// A publishable package of the workspace, as `cargo metadata` describes it.
struct Package {
    name: String,
    dir: PathBuf,
    edition: String,
    repository: String,
    readme: Option<PathBuf>,
}

struct Workspace {
    root: PathBuf,
    packages: Vec<Package>,
}

fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

fn workspace() -> Workspace {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let output = Command::new(cargo())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut packages = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        // `publish = false` is the empty list; `null` means any registry.
        if package["publish"].as_array().is_some_and(Vec::is_empty) {
            continue;
        }
        let manifest = PathBuf::from(package["manifest_path"].as_str().unwrap());
        let dir = manifest.parent().unwrap().to_path_buf();
        packages.push(Package {
            name: package["name"].as_str().unwrap().to_owned(),
            readme: package["readme"].as_str().map(|readme| dir.join(readme)),
            edition: package["edition"].as_str().unwrap().to_owned(),
            repository: package["repository"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            dir,
        });
    }
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(
        packages.len() >= 10,
        "expected the workspace's crates, found {}",
        packages.len()
    );
    Workspace { root, packages }
}

// --- README examples ----------------------------------------------------------------

/// A code block of a Markdown file that rustdoc would compile as a doctest.
#[derive(Debug, PartialEq)]
struct Example {
    /// The line of its opening fence, from 1.
    line: usize,
    /// The block's lines, hidden ones (`# …`) included, as rustdoc compiles them.
    code: String,
}

/// What rustdoc does with a fenced block, by its info string (`rust,no_run`).
#[derive(Debug, PartialEq)]
enum Kind {
    /// Compiled (and run, unless `no_run`; here only compiled).
    Compiled,
    /// Rust, but not compiled as it stands (`ignore`, `compile_fail`, `test_harness`).
    NotCompiled,
    /// Not Rust (`text`, `toml`, `sh`, …).
    Other,
}

/// rustdoc's reading of an info string: Rust when it is empty, or names only
/// doctest attributes, or says `rust`; an unknown word (a language) makes it another
/// language unless `rust` is there too.
fn kind(info: &str) -> Kind {
    let mut rust = false;
    let mut other = false;
    let mut compiled = true;
    for token in info
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        match token {
            "rust" => rust = true,
            "no_run" | "should_panic" | "standalone_crate" => {}
            "ignore" | "compile_fail" | "test_harness" => compiled = false,
            t if t.starts_with("ignore-") => compiled = false,
            t if t.starts_with("edition") => {}
            t if t.len() == 5
                && t.starts_with('E')
                && t[1..].bytes().all(|b| b.is_ascii_digit()) => {}
            _ => other = true,
        }
    }
    match (rust || !other, compiled) {
        (false, _) => Kind::Other,
        (true, true) => Kind::Compiled,
        (true, false) => Kind::NotCompiled,
    }
}

/// The blocks of `markdown` that rustdoc compiles, in order.
fn compiled_examples(markdown: &str) -> Vec<Example> {
    let mut examples = Vec::new();
    // (fence, line of the fence, kind, lines so far)
    let mut open: Option<(String, usize, Kind, Vec<&str>)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                let fence_char = match trimmed.chars().next() {
                    Some(c @ ('`' | '~')) => c,
                    _ => continue,
                };
                let fence: String = trimmed.chars().take_while(|&c| c == fence_char).collect();
                if fence.len() >= 3 {
                    let info = trimmed[fence.len()..].trim();
                    open = Some((fence, index + 1, kind(info), Vec::new()));
                }
            }
            Some((fence, start, block_kind, lines)) => {
                if trimmed.starts_with(fence.as_str())
                    && trimmed
                        .trim_start_matches(fence.chars().next().unwrap())
                        .trim()
                        .is_empty()
                {
                    if *block_kind == Kind::Compiled {
                        examples.push(Example {
                            line: *start,
                            code: lines.join("\n"),
                        });
                    }
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    examples
}

/// One line as rustdoc compiles it: `# code` and a lone `#` are hidden lines whose
/// code is compiled, `##` stands for a shown `#`.
fn unhide(line: &str) -> String {
    let trimmed = line.trim();
    if trimmed.starts_with("##") {
        line.replacen("##", "#", 1)
    } else if let Some(code) = trimmed
        .strip_prefix("# ")
        .or_else(|| trimmed.strip_prefix("#\t"))
    {
        code.to_owned()
    } else if trimmed == "#" {
        String::new()
    } else {
        line.to_owned()
    }
}

/// The program rustdoc would build from an example: hidden lines kept, and, when the
/// example has no `fn main`, its code wrapped in one (crate attributes left on top; an
/// example ending in `(())` in a function returning `Result`, as rustdoc does, so `?`
/// works in it).
fn program(example: &Example) -> String {
    let lines: Vec<String> = example.code.lines().map(unhide).collect();
    let has_main = lines.iter().any(|line| {
        let line = line.trim_start();
        ["fn main(", "fn main (", "pub fn main(", "async fn main("]
            .iter()
            .any(|start| line.starts_with(start))
    });
    let mut out = String::from("#![allow(unused)]\n");
    if has_main {
        out.push_str(&lines.join("\n"));
        out.push('\n');
        return out;
    }
    let attributes = lines
        .iter()
        .take_while(|line| line.trim().is_empty() || line.trim_start().starts_with("#!["))
        .count();
    for line in &lines[..attributes] {
        out.push_str(line);
        out.push('\n');
    }
    let body = lines[attributes..].join("\n");
    if body.trim_end().ends_with("(())") {
        writeln!(
            out,
            "fn main() {{ fn _inner() -> ::core::result::Result<(), impl ::core::fmt::Debug> {{\n\
             {body}\n}} _inner().unwrap() }}"
        )
        .unwrap();
    } else {
        writeln!(out, "fn main() {{\n{body}\n}}").unwrap();
    }
    out
}

/// Writes `contents` to `path` unless it already holds exactly that, so that an
/// unchanged example is not checked again.
fn write_if_changed(path: &Path, contents: &str) {
    if fs::read_to_string(path).ok().as_deref() != Some(contents) {
        fs::write(path, contents).unwrap();
    }
}

/// The throwaway project of `package`: one binary per compiled README example, a
/// dependency on `package` alone, the workspace's lock file. Returns its folder and
/// each binary's (README line, file).
fn downstream_project(
    workspace: &Workspace,
    package: &Package,
    examples: &[Example],
    base: &Path,
) -> (PathBuf, Vec<(usize, PathBuf)>) {
    let project = base.join(&package.name);
    let bins = project.join("src/bin");
    fs::create_dir_all(&bins).unwrap();
    // An empty `[workspace]`: the folder is inside this workspace's target folder, and
    // the project must not be taken for a member of it.
    let manifest = format!(
        "[package]\nname = \"readme-{name}\"\nversion = \"0.0.0\"\nedition = \"{edition}\"\n\
         publish = false\n\n[dependencies]\n{name} = {{ path = {path:?} }}\n\n[workspace]\n",
        name = package.name,
        edition = package.edition,
        path = package.dir.to_str().unwrap(),
    );
    write_if_changed(&project.join("Cargo.toml"), &manifest);
    // The versions the workspace builds with, so `--offline` finds them downloaded.
    let lock = fs::read_to_string(workspace.root.join("Cargo.lock")).unwrap();
    write_if_changed(&project.join("Cargo.lock"), &lock);

    let mut files = Vec::new();
    for example in examples {
        let file = bins.join(format!("readme_line_{}.rs", example.line));
        write_if_changed(&file, &program(example));
        files.push((example.line, file));
    }
    // Examples the README no longer has.
    for entry in fs::read_dir(&bins).unwrap() {
        let path = entry.unwrap().path();
        if !files.iter().any(|(_, file)| *file == path) {
            fs::remove_file(path).unwrap();
        }
    }
    (project, files)
}

#[test]
fn every_readme_example_compiles_with_only_its_crate_as_a_dependency() {
    if !fakes::tool_or_skip(
        cargo().to_str().unwrap_or("cargo"),
        "the README downstream test",
    ) {
        return;
    }
    let workspace = workspace();
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-downstream");
    let target = base.join("target");
    let mut checked = 0;
    let mut failures = String::new();
    for package in &workspace.packages {
        let Some(readme) = &package.readme else {
            continue;
        };
        let examples = compiled_examples(&fs::read_to_string(readme).unwrap());
        if examples.is_empty() {
            continue;
        }
        let (project, files) = downstream_project(&workspace, package, &examples, &base);
        let started = Instant::now();
        let output = Command::new(cargo())
            .args(["check", "--offline", "--bins", "--manifest-path"])
            .arg(project.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(&project)
            .output()
            .expect("cargo check runs");
        eprintln!(
            "{}: {} README example(s) checked in {:.1} s",
            package.name,
            files.len(),
            started.elapsed().as_secs_f64()
        );
        checked += files.len();
        if !output.status.success() {
            let lines: Vec<String> = files.iter().map(|(line, _)| line.to_string()).collect();
            writeln!(
                failures,
                "\n=== {name}: the Rust example(s) of {readme} (line {lines}) do not compile in a \
                 project that depends on {name} alone; re-export what they need from {name} \
                 (the programs are in {project}). cargo says:\n{stderr}",
                name = package.name,
                readme = readme
                    .strip_prefix(&workspace.root)
                    .unwrap_or(readme)
                    .display(),
                lines = lines.join(", "),
                project = project.display(),
                stderr = String::from_utf8_lossy(&output.stderr),
            )
            .unwrap();
        }
    }
    assert!(
        checked > 0,
        "no README of the workspace has a Rust example to check"
    );
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn examples_are_read_as_rustdoc_reads_them() {
    let markdown = "\
Intro.

```rust
use a::b;
fn main() {}
```

```rust,no_run
# fn hidden() {}
let x = 1;
#
## not hidden
```

```rust,ignore
does not compile
```

```text
plain
```

```toml
key = 1
```

```
let untagged = \"is Rust\";
```

````rust,compile_fail
nope
````

~~~rust
# #![allow(dead_code)]
let y = 2;
Ok::<(), ()>(())
~~~
";
    let examples = compiled_examples(markdown);
    let lines: Vec<usize> = examples.iter().map(|e| e.line).collect();
    assert_eq!(lines, [3, 8, 27, 35]);
    assert_eq!(examples[0].code, "use a::b;\nfn main() {}");

    // A `fn main` of its own: kept as written.
    assert_eq!(
        program(&examples[0]),
        "#![allow(unused)]\nuse a::b;\nfn main() {}\n"
    );
    // Hidden lines compiled, `##` a shown `#`, the code wrapped in `fn main`.
    assert_eq!(
        program(&examples[1]),
        "#![allow(unused)]\nfn main() {\nfn hidden() {}\nlet x = 1;\n\n# not hidden\n}\n"
    );
    // A crate attribute stays on top; `(())` at the end makes `main` return a Result.
    let last = program(&examples[3]);
    assert!(
        last.starts_with("#![allow(unused)]\n#![allow(dead_code)]\nfn main() { fn _inner()"),
        "{last}"
    );
    assert!(
        last.ends_with("Ok::<(), ()>(())\n} _inner().unwrap() }\n"),
        "{last}"
    );

    assert_eq!(kind(""), Kind::Compiled);
    assert_eq!(kind("rust,no_run"), Kind::Compiled);
    assert_eq!(kind("rust, should_panic, edition2021"), Kind::Compiled);
    assert_eq!(kind("no_run"), Kind::Compiled);
    assert_eq!(kind("ignore"), Kind::NotCompiled);
    assert_eq!(kind("compile_fail,E0308"), Kind::NotCompiled);
    assert_eq!(kind("sh"), Kind::Other);
    assert_eq!(kind("text"), Kind::Other);
}

// --- links to repository files ------------------------------------------------------

/// A repository file a text names without linking it: the line and the name.
type BareMention = (usize, String);

/// The names of repository files that docs mention: `docs/<name>.md`, and the
/// Markdown files at the workspace root but the README (a crate's own `README.md` is
/// another file, and so is a registry's).
fn mentions(text: &str, root_files: &[String]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let boundary = |at: usize| {
        at == 0
            || !(bytes[at - 1].is_ascii_alphanumeric()
                || matches!(bytes[at - 1], b'/' | b'_' | b'-' | b'.'))
    };
    let mut at = 0;
    while let Some(offset) = text[at..].find("docs/") {
        let start = at + offset;
        at = start + 5;
        let name: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
            .collect();
        let name = name.trim_end_matches('.');
        if boundary(start) && name.ends_with(".md") {
            found.push((start, format!("docs/{name}")));
        }
    }
    for file in root_files {
        let mut at = 0;
        while let Some(offset) = text[at..].find(file.as_str()) {
            let start = at + offset;
            at = start + file.len();
            if boundary(start) {
                found.push((start, file.clone()));
            }
        }
    }
    found.sort();
    found
}

/// The inline Markdown links of `text` whose target is in the repository
/// (`<repository>/blob/main/<path>`): each one's byte range and path.
fn repository_links(text: &str, repository: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let prefix = format!("{repository}/blob/main/");
    let mut links = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find("](") {
        let middle = at + offset;
        at = middle + 2;
        let Some(length) = text[at..].find(|c: char| c == ')' || c.is_whitespace()) else {
            break;
        };
        let target = &text[at..at + length];
        let Some(open) = text[..middle].rfind('[') else {
            continue;
        };
        if let Some(path) = target.strip_prefix(&prefix) {
            let path = path.split('#').next().unwrap_or_default();
            links.push((open..at + length + 1, path.to_owned()));
        }
    }
    links
}

/// What Markdown text shows as prose: fenced code blocks blanked (keeping the lines).
fn without_code_blocks(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        if !fenced && !fence {
            out.push_str(line);
        }
        if fence {
            fenced = !fenced;
        }
        out.push('\n');
    }
    out
}

/// The doc comments (`//!`, `///`) of a Rust file as Markdown, each on its own line,
/// every other line left empty so line numbers stay those of the file.
fn doc_text(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.lines() {
        let trimmed = line.trim_start();
        let doc = trimmed.strip_prefix("//!").or_else(|| {
            trimmed
                .strip_prefix("///")
                .filter(|rest| !rest.starts_with('/'))
        });
        if let Some(doc) = doc {
            out.push_str(doc.strip_prefix(' ').unwrap_or(doc));
        }
        out.push('\n');
    }
    out
}

/// The repository files `markdown` names without a link to them, and the linked
/// paths that are not in the workspace (a link that leads nowhere either).
fn link_problems(
    markdown: &str,
    repository: &str,
    root: &Path,
    root_files: &[String],
) -> Vec<String> {
    let text = without_code_blocks(markdown);
    let links = repository_links(&text, repository);
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut problems = Vec::new();
    for (range, path) in &links {
        if !root.join(path).exists() {
            problems.push(format!(
                "line {}: links {path}, which is not in the repository",
                line_of(range.start)
            ));
        }
    }
    let bare: Vec<BareMention> = mentions(&text, root_files)
        .into_iter()
        .filter(|(offset, _)| !links.iter().any(|(range, _)| range.contains(offset)))
        .map(|(offset, name)| (line_of(offset), name))
        .collect();
    for (line, name) in bare {
        problems.push(format!(
            "line {line}: names `{name}` without a link; write [`{name}`]({repository}/blob/main/{name})"
        ));
    }
    problems
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn crate_docs_link_the_repository_files_they_name() {
    if !fakes::tool_or_skip(cargo().to_str().unwrap_or("cargo"), "the doc link test") {
        return;
    }
    let workspace = workspace();
    let mut root_files: Vec<String> = fs::read_dir(&workspace.root)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md") && name != "README.md")
        .collect();
    root_files.push("SPEC.md".into());
    let mut problems = Vec::new();
    let mut scanned = 0;
    for package in &workspace.packages {
        assert!(
            !package.repository.is_empty(),
            "{} has no repository",
            package.name
        );
        let mut files: Vec<(PathBuf, String)> = Vec::new();
        if let Some(readme) = &package.readme {
            files.push((readme.clone(), fs::read_to_string(readme).unwrap()));
        }
        if !SOURCES_NOT_SCANNED.contains(&package.name.as_str()) {
            let mut sources = Vec::new();
            rust_files(&package.dir.join("src"), &mut sources);
            sources.sort();
            for source in sources {
                let text = doc_text(&fs::read_to_string(&source).unwrap());
                files.push((source, text));
            }
        }
        for (file, text) in files {
            scanned += 1;
            let shown = file
                .strip_prefix(&workspace.root)
                .unwrap_or(&file)
                .display()
                .to_string();
            for problem in link_problems(&text, &package.repository, &workspace.root, &root_files) {
                problems.push(format!("{shown}: {problem}"));
            }
        }
    }
    assert!(scanned > 50, "only {scanned} files scanned");
    assert!(
        problems.is_empty(),
        "crates.io and docs.rs show these docs without the repository, so a repository \
         file must be a link:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_link_check_tells_a_link_from_a_bare_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let repository = "https://example.invalid/r";
    let roots = ["CHANGELOG.md".to_owned()];
    let check = |text: &str| link_problems(text, repository, root, &roots);

    assert!(
        check("See [`docs/PROTOCOL.md`](https://example.invalid/r/blob/main/docs/PROTOCOL.md).")
            .is_empty()
    );
    // A link whose text wraps onto the next line.
    assert!(
        check("See the repository's [frame\n`docs/PROTOCOL.md`](https://example.invalid/r/blob/main/docs/PROTOCOL.md#framing).")
            .is_empty()
    );
    // Code blocks are code; a registry's README.md is not a repository file.
    assert!(check("```sh\ncat docs/PROTOCOL.md\n```\nEach `README.md` of a registry.").is_empty());

    let problems = check("Intro.\nSee `docs/PROTOCOL.md` and CHANGELOG.md.");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].starts_with("line 2: names `docs/PROTOCOL.md` without a link"),
        "{problems:?}"
    );
    assert!(problems[1].contains("`CHANGELOG.md`"), "{problems:?}");
    // A relative link is dead on docs.rs; a link to another host is no repository link.
    assert_eq!(check("[x](docs/PROTOCOL.md)").len(), 1);
    assert_eq!(
        check("[docs/HOST.md](https://elsewhere.invalid/docs/HOST.md)").len(),
        1
    );
    // A link to a file the repository does not have.
    let problems = check("[gone](https://example.invalid/r/blob/main/docs/GONE.md)");
    assert_eq!(
        problems,
        ["line 1: links docs/GONE.md, which is not in the repository"]
    );

    // Doc comments of a Rust file: `//!` and `///`, not `////` or code.
    let text =
        doc_text("//! Module `docs/A.md`.\n/// Item.\n//// docs/B.md\nfn f() {} // docs/C.md\n");
    assert_eq!(text, "Module `docs/A.md`.\nItem.\n\n\n");
    assert_eq!(mentions(&text, &[]), [(8, "docs/A.md".to_owned())]);
}
