//! The README's trigger is `examples/counter.rs`, word for word: the README's probe
//! command runs the example (the repository's README test runs it), so the two must
//! not drift apart.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[test]
fn the_readme_trigger_is_the_counter_example() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(crate_dir.join("README.md")).unwrap();
    let start = readme.find("```rust").expect("a Rust block");
    let body_start = start + readme[start..].find('\n').unwrap() + 1;
    let body_end = body_start + readme[body_start..].find("```").unwrap();
    let in_readme = &readme[body_start..body_end];

    let example = std::fs::read_to_string(crate_dir.join("examples/counter.rs")).unwrap();
    let code: String = example
        .lines()
        .skip_while(|line| line.starts_with("//!"))
        .skip(1)
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(
        code == in_readme,
        "examples/counter.rs (after its `//!` header and a blank line) differs from the \
         README's Rust block; make them the same"
    );
}
