#!/usr/bin/env python3
"""Fails when a resolved dependency declares a `rust-version` above the workspace's.

Reads `cargo metadata` offline, so it checks exactly what `Cargo.lock` resolves to, for
every target platform; `.ci/run` runs `cargo fetch --locked` first, since a build
fetches only the current platform's dependencies. A dependency without `rust-version`
is not checked.
"""
import json
import subprocess
import sys


def version(text):
    parts = [int(p) for p in text.split(".")]
    return tuple((parts + [0, 0, 0])[:3])


def main():
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--offline", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    members = set(metadata["workspace_members"])
    declared = {
        p["rust_version"]
        for p in metadata["packages"]
        if p["id"] in members and p.get("rust_version")
    }
    if len(declared) != 1:
        print(f"error: workspace members declare {sorted(declared) or 'no'} rust-version; expected exactly one")
        return 1
    (workspace,) = declared
    too_new = sorted(
        (p["name"], p["version"], p["rust_version"])
        for p in metadata["packages"]
        if p["id"] not in members
        and p.get("rust_version")
        and version(p["rust_version"]) > version(workspace)
    )
    for name, ver, needs in too_new:
        print(f"error: {name} {ver} needs Rust {needs}, above the workspace's rust-version {workspace}")
    if too_new:
        print(f"{len(too_new)} dependencies need a newer Rust than the declared {workspace}: raise `rust-version` in Cargo.toml or pin older versions")
        return 1
    print(f"ok: every resolved dependency builds with Rust {workspace}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
