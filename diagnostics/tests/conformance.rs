//! npm package names and SemVer versions against the public cases in
//! `../shared/conformance/` (npm's validate-npm-package-name and node-semver fixtures).
//! When a folder is not there (a fresh clone elsewhere) its tests are skipped, and
//! the skip shows in `cargo test`'s own output and summary: `test … ignored (skipped:
//! … is missing …)`, counted among the ignored tests. A plain `#[test]` cannot decide at
//! run time that it was skipped, so this file has its own harness, `libtest-mimic`,
//! which mimics libtest's output and arguments.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use curupira_diagnostics::npm::{NameProblem, check_package_name};
use curupira_diagnostics::version::{VersionError, parse_version};
use libtest_mimic::{Arguments, Completion, Trial};
use serde_json::Value;

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        vectors(
            "npm_names_match_validate_npm_package_name",
            "npm-names",
            npm_names_match_validate_npm_package_name,
        ),
        vectors(
            "core_module_names_are_all_known",
            "npm-names",
            core_module_names_are_all_known,
        ),
        vectors(
            "versions_follow_semver_2_and_hint_at_npm_spellings",
            "semver",
            versions_follow_semver_2_and_hint_at_npm_spellings,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// A test of the vectors in `../shared/conformance/FOLDER`: `check` runs on that
/// folder, or the test is reported ignored, saying which folder is missing.
fn vectors(name: &str, folder: &'static str, check: fn(&Path)) -> Trial {
    Trial::ignorable_test(name, move || {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/conformance")
            .join(folder);
        if !dir.is_dir() {
            return Ok(Completion::ignored_with(format!(
                "skipped: {} is missing, so these vectors were not checked",
                dir.display()
            )));
        }
        check(&dir);
        Ok(Completion::Completed)
    })
}

fn read(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// npm's own wording for each problem, to compare with the recorded results.
fn npm_message(name: &str, problem: &NameProblem) -> String {
    match problem {
        NameProblem::Empty => "name length must be greater than zero".into(),
        NameProblem::LeadingPeriod(_) => "name cannot start with a period".into(),
        NameProblem::LeadingUnderscore(_) => "name cannot start with an underscore".into(),
        NameProblem::LeadingHyphen(_) => "name cannot start with a hyphen".into(),
        NameProblem::SurroundingSpaces => "name cannot contain leading or trailing spaces".into(),
        NameProblem::Reserved(reserved) => format!("{reserved} is not a valid package name"),
        NameProblem::CoreModule => format!("{name} is a core module name"),
        NameProblem::TooLong { .. } => "name can no longer contain more than 214 characters".into(),
        NameProblem::Uppercase(_) => "name can no longer contain capital letters".into(),
        NameProblem::SpecialCharacter(_) => {
            "name can no longer contain special characters (\"~'!()*\")".into()
        }
        NameProblem::NotUrlSafe(_) | NameProblem::BadScope => {
            "name can only contain URL-friendly characters".into()
        }
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn npm_names_match_validate_npm_package_name(dir: &Path) {
    let mut checked = 0;
    for file in ["cases.json", "extra-cases.json"] {
        for case in read(dir.join(file)).as_array().unwrap() {
            // null, undefined and 42 cannot be a `&str`: the type rules them out.
            let Some(name) = case["name"].as_str() else {
                continue;
            };
            let check = check_package_name(name);
            let errors: Vec<_> = check.errors.iter().map(|p| npm_message(name, p)).collect();
            let warnings: Vec<_> = check
                .warnings
                .iter()
                .map(|p| npm_message(name, p))
                .collect();
            assert_eq!(errors, strings(&case["errors"]), "errors of {name:?}");
            assert_eq!(warnings, strings(&case["warnings"]), "warnings of {name:?}");
            assert_eq!(
                check.valid_for_new_packages(),
                case["validForNewPackages"].as_bool().unwrap(),
                "{name:?}"
            );
            assert_eq!(
                check.valid_for_old_packages(),
                case["validForOldPackages"].as_bool().unwrap(),
                "{name:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 55, "only {checked} cases ran");
}

fn core_module_names_are_all_known(dir: &Path) {
    for name in strings(&read(dir.join("core-module-names.json"))) {
        let check = check_package_name(&name);
        assert!(
            check.warnings.contains(&NameProblem::CoreModule),
            "{name} is not reported as a core module"
        );
    }
}

/// What we accept: SemVer 2.0.0 as semver.org defines it, with major, minor and patch
/// fitting in 64 bits (the `semver` crate's limit).
fn expected_valid(version: &str, semver_org_valid: bool) -> bool {
    let core = version.split(['-', '+']).next().unwrap_or("");
    semver_org_valid && core.split('.').all(|n| n.parse::<u64>().is_ok())
}

fn check_version(version: &str, semver_org_valid: bool, npm_accepts: bool) {
    let result = parse_version(version);
    assert_eq!(
        result.is_ok(),
        expected_valid(version, semver_org_valid),
        "{version:?}: {result:?}"
    );
    if npm_accepts && !semver_org_valid {
        // npm's extras (a `v`, spaces) are refused with the spelling to use instead.
        match result {
            Err(VersionError::NpmStyle { suggestion, .. }) => {
                assert!(
                    parse_version(&suggestion).is_ok(),
                    "{version:?} → {suggestion:?}"
                );
            }
            other => panic!("{version:?} should get a hint, got {other:?}"),
        }
    }
}

fn versions_follow_semver_2_and_hint_at_npm_spellings(dir: &Path) {
    let mut checked = 0;
    for case in read(dir.join("valid-versions-detailed.json"))
        .as_array()
        .unwrap()
    {
        let version = case["version"].as_str().unwrap();
        check_version(
            version,
            case["semver_org_2_0_0_valid"].as_bool().unwrap(),
            true,
        );
        checked += 1;
    }
    for case in read(dir.join("invalid-versions-detailed.json"))["strict_rejected"]
        .as_array()
        .unwrap()
    {
        let version = case["version"].as_str().unwrap();
        check_version(
            version,
            case["semver_org_2_0_0_valid"].as_bool().unwrap(),
            false,
        );
        checked += 1;
    }
    for case in read(dir.join("extra-cases.json")).as_array().unwrap() {
        let version = case["version"].as_str().unwrap();
        check_version(
            version,
            case["semver_org_2_0_0_valid"].as_bool().unwrap(),
            case["node_semver_strict_valid"].as_bool().unwrap(),
        );
        checked += 1;
    }
    for pair in read(dir.join("equality.json")).as_array().unwrap() {
        for version in pair.as_array().unwrap() {
            let version = version.as_str().unwrap();
            let trimmed = version.trim().trim_start_matches('v');
            match parse_version(version) {
                Ok(_) => assert_eq!(trimmed, version),
                Err(VersionError::NpmStyle { suggestion, .. }) => assert_eq!(suggestion, trimmed),
                Err(other) => panic!("{version:?}: {other}"),
            }
            checked += 1;
        }
    }
    assert!(checked >= 70, "only {checked} cases ran");
}
