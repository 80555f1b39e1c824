//! The reference host's verdicts (`curupira` 0.4.0, recorded in
//! `../shared/conformance/curupira-wire/manifests/`): the official `curupira-plugins`
//! manifest passes with no diagnostic at all, every manifest the reference host
//! installed (`accepted/`) passes with no error, and every manifest it refused
//! (`refused/`) gets exactly one error from us, for the same reason. A checkout without
//! `../shared` skips these tests with a note; the corpus (`tests/corpus/`) has cases of
//! its own for the same rules.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use curupira_manifest::{Launch, PackageSource, Version, check_bytes, check_str, codes};
use serde_json::Value;

/// The recordings' folder, or `None` (with a note) when this checkout has none.
fn manifests_dir() -> Option<PathBuf> {
    let dir = curupira_test_support::conformance::folder("curupira-wire/manifests");
    if dir.join("verdicts.json").is_file() {
        Some(dir)
    } else {
        println!(
            "skipped: {} is missing (no ../shared beside this checkout)",
            dir.display()
        );
        None
    }
}

/// `verdicts.json`'s results, by file (`accepted/uvx.toml`).
fn verdicts(dir: &Path) -> Vec<(String, Value)> {
    let json: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("verdicts.json")).unwrap()).unwrap();
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| (result["file"].as_str().unwrap().to_owned(), result.clone()))
        .collect()
}

/// The code and pointer of the one error we must give for the reference host's refusal
/// `output` (its first lines are the TOML location, the last the reason).
fn expected_error(output: &[Value]) -> (&'static str, String) {
    let text: Vec<&str> = output.iter().map(|line| line.as_str().unwrap()).collect();
    let text = text.join("\n");
    if text.contains("unknown variant `command`") {
        return (codes::COMMAND_LAUNCH, "/launch/type".to_owned());
    }
    if text.contains("coding-agent extensions are no longer supported") {
        return (codes::AGENT_EXTENSION, "/kind".to_owned());
    }
    let field = text
        .split("missing field `")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("a refusal this test does not know: {text}"));
    let pointer = if field == "launch" {
        "/launch".to_owned()
    } else {
        format!("/launch/{field}")
    };
    (codes::MISSING_KEY, pointer)
}

fn files(dir: &Path, sub: &str) -> Vec<PathBuf> {
    let mut files: Vec<_> = fs::read_dir(dir.join(sub))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    files
}

fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir).unwrap().to_str().unwrap().to_owned()
}

#[test]
fn the_official_manifest_passes_without_a_diagnostic() {
    let Some(dir) = manifests_dir() else { return };
    let path = dir.join("curupira-plugins.printed.toml");
    let checked = check_bytes(&fs::read(&path).unwrap(), "curupira-plugins.printed.toml");
    assert!(
        checked.diagnostics().is_empty(),
        "{}",
        checked.report.render_human(false)
    );
    let manifest = checked.manifest.unwrap();
    assert_eq!(manifest.name.as_str(), "curupira-plugins");
    let Launch::Uvx {
        package,
        executable,
        version,
        args,
    } = &manifest.launch
    else {
        panic!("not a uvx launch: {:?}", manifest.launch);
    };
    assert_eq!(
        (package.as_str(), executable.as_str()),
        ("curupira-plugins", "curupira-plugins")
    );
    assert_eq!((version, args.len()), (&None, 0));
    let package = manifest.package.as_ref().unwrap();
    assert_eq!(package.source, PackageSource::Pip);
    assert_eq!(package.name, "curupira-plugins");
    assert_eq!(package.version, Some(Version::new(0, 1, 0)));
    assert_eq!(
        manifest.trigger_types.len(),
        3,
        "{:?}",
        manifest.trigger_types
    );
}

#[test]
fn every_recorded_manifest_gets_the_reference_hosts_verdict() {
    let Some(dir) = manifests_dir() else { return };
    let verdicts = verdicts(&dir);
    let mut seen = 0;
    for (sub, installed) in [("accepted", true), ("refused", false)] {
        for path in files(&dir, sub) {
            let file = relative(&dir, &path);
            let (_, verdict) = verdicts
                .iter()
                .find(|(name, _)| *name == file)
                .unwrap_or_else(|| panic!("{file} has no verdict"));
            assert_eq!(
                verdict["real_host_install"] == "installed",
                installed,
                "{file} is in the wrong folder"
            );
            let checked = check_bytes(&fs::read(&path).unwrap(), &file);
            let rendered = checked.report.render_human(false);
            if installed {
                assert_eq!(checked.report.errors(), 0, "{rendered}");
                // What the reference host printed after installing it (its normalised
                // form) is the same manifest to us.
                let lines: Vec<&str> = verdict["plugins_info"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|line| line.as_str().unwrap())
                    .collect();
                let normalised = check_str(&lines.join("\n"), "plugins-info.toml");
                assert_eq!(normalised.report.errors(), 0, "{file}: plugins info");
                assert_eq!(
                    normalised.manifest, checked.manifest,
                    "{file}: plugins info"
                );
            } else {
                let (code, pointer) = expected_error(verdict["output"].as_array().unwrap());
                let errors: Vec<_> = checked
                    .diagnostics()
                    .iter()
                    .filter(|d| d.is_error())
                    .map(|d| (d.code.to_string(), d.path.to_string()))
                    .collect();
                assert_eq!(errors, [(code.to_owned(), pointer)], "{rendered}");
                assert!(checked.manifest.is_none());
            }
            seen += 1;
        }
    }
    assert!(seen >= 11, "recorded manifests: {seen}");
}

#[test]
fn what_the_reference_host_tolerates_gets_a_warning() {
    let Some(dir) = manifests_dir() else { return };
    for (file, code, pointer) in [
        (
            "accepted/npx-no-version.toml",
            codes::UNPINNED_VERSION,
            "/launch/version",
        ),
        (
            "accepted/executable-unknown-key.toml",
            codes::UNKNOWN_KEY,
            "/launch/command",
        ),
    ] {
        let checked = check_bytes(&fs::read(dir.join(file)).unwrap(), file);
        let found: Vec<_> = checked
            .diagnostics()
            .iter()
            .map(|d| (d.severity.as_str(), d.code.to_string(), d.path.to_string()))
            .collect();
        assert_eq!(
            found,
            [("warning", code.to_owned(), pointer.to_owned())],
            "{file}"
        );
    }
}

#[test]
fn refusals_carry_the_reference_hosts_reason_and_the_fix() {
    let Some(dir) = manifests_dir() else { return };
    let message = |file: &str| {
        let checked = check_bytes(&fs::read(dir.join(file)).unwrap(), file);
        checked.diagnostics()[0].message.clone()
    };
    assert!(message("refused/kind-agent.toml").contains(
        "coding-agent extensions are no longer supported; agents are built into the Rust core"
    ));
    assert!(
        message("refused/command.toml")
            .contains(r#"write `type = "executable"` with `program = "python3"`"#)
    );
}
