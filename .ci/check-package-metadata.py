#!/usr/bin/env python3
"""Fails when a publishable workspace crate lacks what crates.io and its readers need.

Every member that may be published (no `publish = false`) must have a description,
a license, a repository, a readme, keywords, categories and a rust-version; its
keywords and categories must follow crates.io's rules (at most 5 each; a keyword is
ASCII, at most 20 characters, a letter first, then letters, digits, `_`, `-` or `+`;
a category is one of crates.io's slugs, listed below); its README must exist, show a
Rust example, and be included as a doctest at the end of its lib.rs, so `cargo test`
compiles the example; and CHANGELOG.md must have an Unreleased section naming it.

Reads `cargo metadata --no-deps --offline`: no network, no build, well under a second.
`--self-test` checks the checker: it breaks a copy of the real metadata in known ways
and expects exactly those problems.
"""
import copy
import json
import os
import re
import subprocess
import sys

REQUIRED = ["description", "license", "repository", "readme", "keywords", "categories", "rust_version"]

# crates.io's category slugs (its src/boot/categories.toml); a subcategory is
# `parent::child`. crates.io drops an unknown slug with a warning, so a typo would
# silently leave a crate out of its category.
CATEGORIES = {
    "algorithms", "api-bindings", "asynchronous", "authentication", "caching",
    "command-line-interface", "command-line-utilities", "compression", "computer-vision",
    "concurrency", "config", "cryptography", "cryptography::cryptocurrencies", "database",
    "database-implementations", "data-structures", "date-and-time", "development-tools",
    "development-tools::build-utils", "development-tools::cargo-plugins",
    "development-tools::debugging", "development-tools::ffi",
    "development-tools::procedural-macro-helpers", "development-tools::profiling",
    "development-tools::testing", "email", "embedded", "emulators", "encoding",
    "external-ffi-bindings", "filesystem", "game-engines", "game-development", "games",
    "graphics", "gui", "hardware-support", "internationalization", "localization",
    "mathematics", "memory-management", "multimedia", "multimedia::audio",
    "multimedia::video", "multimedia::images", "multimedia::encoding",
    "network-programming", "no-std", "os", "os::linux-apis", "os::macos-apis",
    "os::unix-apis", "os::windows-apis", "parser-implementations", "parsing", "rendering",
    "rendering::engine", "rendering::graphics-api", "rendering::data-formats",
    "rust-patterns", "science", "science::robotics", "simulation", "template-engine",
    "text-editors", "text-processing", "value-formatting", "visualization", "wasm",
    "web-programming", "web-programming::http-client", "web-programming::http-server",
    "web-programming::websocket",
}
KEYWORD = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]{0,19}$")
README_DOCTEST = re.compile(r'#\[doc\s*=\s*include_str!\("\.\./README\.md"\)\]')


def publishable(package):
    # `publish = false` is the empty list in cargo metadata; `null` means any registry.
    return package.get("publish") != []


def problems_of(package, root, changelog):
    """Each problem with one package's metadata, as a sentence."""
    manifest = os.path.relpath(package["manifest_path"], root)
    where = f"{package['name']} ({manifest})"
    found = []
    for field in REQUIRED:
        if not package.get(field):
            found.append(f"{where}: `{field.replace('_', '-')}` is missing; every publishable crate needs it")
    keywords = package.get("keywords") or []
    if len(keywords) > 5:
        found.append(f"{where}: {len(keywords)} keywords, but crates.io accepts at most 5")
    for keyword in keywords:
        if not KEYWORD.match(keyword):
            found.append(
                f"{where}: keyword {keyword!r} breaks crates.io's rule: a letter, then letters, "
                "digits, `_`, `-` or `+`, at most 20 characters"
            )
    categories = package.get("categories") or []
    if len(categories) > 5:
        found.append(f"{where}: {len(categories)} categories, but crates.io accepts at most 5")
    for category in categories:
        if category not in CATEGORIES:
            found.append(f"{where}: category {category!r} is not a crates.io category slug")
    documentation = package.get("documentation")
    if documentation and not documentation.startswith("https://"):
        found.append(f"{where}: `documentation` is {documentation!r}; expected an https:// URL")
    readme = package.get("readme")
    if readme:
        path = os.path.join(os.path.dirname(package["manifest_path"]), readme)
        if not os.path.isfile(path):
            found.append(f"{where}: the readme {readme!r} does not exist")
        elif "```rust" not in open(path, encoding="utf-8").read():
            found.append(f"{where}: the readme {readme!r} has no ```rust example")
    libs = [t for t in package["targets"] if "lib" in t["kind"]]
    if readme and libs:
        text = open(libs[0]["src_path"], encoding="utf-8").read()
        if not (README_DOCTEST.search(text) and "#[cfg(doctest)]" in text):
            lib = os.path.relpath(libs[0]["src_path"], root)
            found.append(
                f"{where}: {lib} does not include the README as a doctest "
                '(#[doc = include_str!("../README.md")] #[cfg(doctest)] on an item at its end)'
            )
    if changelog is not None and f"`{package['name']}`" not in changelog:
        found.append(f"{where}: CHANGELOG.md's Unreleased section does not name `{package['name']}`")
    return found


def unreleased(root):
    """The text of CHANGELOG.md's `## [Unreleased]` section, or None when there is none."""
    try:
        text = open(os.path.join(root, "CHANGELOG.md"), encoding="utf-8").read()
    except FileNotFoundError:
        return None
    match = re.search(r"^## \[Unreleased\]\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    return match.group(1) if match else None


def check(metadata, root):
    packages = [p for p in metadata["packages"] if publishable(p)]
    changelog = unreleased(root)
    found = []
    if changelog is None:
        found.append("CHANGELOG.md has no `## [Unreleased]` section (Keep a Changelog form)")
    for package in sorted(packages, key=lambda p: p["name"]):
        found.extend(problems_of(package, root, changelog))
    return packages, found


def metadata_of(root):
    return json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
            check=True,
            capture_output=True,
            text=True,
            cwd=root,
            timeout=120,
        ).stdout
    )


def self_test(metadata, root):
    """Breaks a copy of the metadata in four ways and expects exactly four problems."""
    packages, found = check(metadata, root)
    if found:
        return [f"the real metadata already has problems: {found}"]
    broken = copy.deepcopy(metadata)
    first = next(p for p in broken["packages"] if publishable(p))
    first["keywords"] = []
    first["categories"] = ["development-tools", "command-line"]
    second = next(p for p in broken["packages"] if publishable(p) and p is not first)
    second["readme"] = "MISSING.md"
    second["keywords"] = ["a", "b", "c", "d", "e", "f"]
    _, found = check(broken, root)
    expected = [
        ("`keywords` is missing", first),
        ("'command-line' is not a crates.io category", first),
        ("'MISSING.md' does not exist", second),
        ("6 keywords", second),
    ]
    missed = [text for text, p in expected if not any(p["name"] in f and text in f for f in found)]
    if missed or len(found) != len(expected):
        return [f"self-test: expected {len(expected)} problems ({missed} not found), got {found}"]
    return []


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    metadata = metadata_of(root)
    if sys.argv[1:] == ["--self-test"]:
        failures = self_test(metadata, root)
        for failure in failures:
            print(f"error: {failure}")
        if not failures:
            print("ok: the package-metadata check finds each planted problem")
        return 1 if failures else 0
    packages, found = check(metadata, root)
    for problem in found:
        print(f"error: {problem}")
    if found:
        print(f"{len(found)} packaging problems; see the rules at the top of .ci/check-package-metadata.py")
        return 1
    print(f"ok: {len(packages)} publishable crates have their crates.io metadata, a README doctest and a CHANGELOG entry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
