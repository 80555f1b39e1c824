//! Package folders: the seed's example as a real folder, and every way a path the
//! manifest names can fail on disk — missing, a folder, a symlink out of the package
//! (to a file or through a folder), a dangling link — plus the CLI hooks file checked
//! under its own name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use curupira_test_support::fs::copy_dir;
use spirit_manifest::curupira_diagnostics::Severity;
use spirit_manifest::{Options, Slot, check_folder, codes};
use tempfile::TempDir;

fn seed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/seed-example")
}

/// A copy of the seed's folder to break.
fn copy_of_seed() -> TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&seed_dir(), tmp.path());
    tmp
}

/// (code, file name relative to the package, pointer) of every diagnostic.
fn found(dir: &Path) -> Vec<(String, String, String)> {
    let checked = check_folder(dir, &Options::default()).unwrap();
    let prefix = format!("{}/", dir.display());
    checked
        .diagnostics()
        .iter()
        .map(|d| {
            let file = d.file.strip_prefix(&prefix).unwrap_or(&d.file).to_owned();
            (d.code.to_string(), file, d.path.to_string())
        })
        .collect()
}

fn one(code: &str, file: &str, path: &str) -> Vec<(String, String, String)> {
    vec![(code.to_owned(), file.to_owned(), path.to_owned())]
}

#[test]
fn the_seed_example_folder_passes_with_no_diagnostics() {
    let checked = check_folder(
        &seed_dir(),
        &Options {
            registry_strict: true,
            host: None,
        },
    )
    .unwrap();
    // package.json and cli-hooks.json were both read.
    assert_eq!(
        checked.report.render_human(false).lines().last(),
        Some("ok: no problems in 2 files")
    );
    assert!(checked.diagnostics().is_empty());
    let hooks = checked.hooks.unwrap();
    assert_eq!(hooks.hooks[0].slot, Slot::InputFrame);
    assert_eq!(checked.package.unwrap().name, "@example/spirit-extension");
}

#[test]
fn a_missing_file_and_a_folder_where_a_file_should_be() {
    let tmp = copy_of_seed();
    fs::remove_file(tmp.path().join("assets/icon.svg")).unwrap();
    fs::remove_file(tmp.path().join("styles/desktop.css")).unwrap();
    fs::create_dir(tmp.path().join("styles/desktop.css")).unwrap();
    assert_eq!(
        found(tmp.path()),
        [
            // The app does not check assets: it installs and runs the package without
            // its icon or style: advice.
            (
                codes::MISSING_ASSET.to_owned(),
                "package.json".to_owned(),
                "/spiritExtension/icon".to_owned()
            ),
            (
                codes::MISSING_ASSET.to_owned(),
                "package.json".to_owned(),
                "/spiritExtension/contributes/desktop/css/0/path".to_owned()
            ),
        ]
    );
    let checked = check_folder(tmp.path(), &Options::default()).unwrap();
    assert_eq!(checked.report.errors(), 0, "{:?}", checked.diagnostics());
    assert!(checked.package.is_some());
    // A registry shows the icon: registry-strict mode needs it in the package.
    let strict = check_folder(
        tmp.path(),
        &Options {
            registry_strict: true,
            host: None,
        },
    )
    .unwrap();
    assert!(
        strict
            .diagnostics()
            .iter()
            .any(|d| d.code == codes::REGISTRY_REQUIRED
                && d.path.as_str() == "/spiritExtension/icon"
                && d.severity == Severity::Error),
        "{:?}",
        strict.diagnostics()
    );
    // A `main` that is missing is refused; one that is a folder breaks at run time.
    fs::remove_file(tmp.path().join("dist/index.js")).unwrap();
    assert!(found(tmp.path()).contains(&(
        codes::MISSING_FILE.to_owned(),
        "package.json".to_owned(),
        "/main".to_owned()
    )));
    fs::create_dir(tmp.path().join("dist/index.js")).unwrap();
    assert!(found(tmp.path()).contains(&(
        codes::MAIN_NOT_A_FILE.to_owned(),
        "package.json".to_owned(),
        "/main".to_owned()
    )));
    // The hooks file must be a file.
    fs::remove_file(tmp.path().join("cli-hooks.json")).unwrap();
    fs::create_dir(tmp.path().join("cli-hooks.json")).unwrap();
    assert!(found(tmp.path()).contains(&(
        codes::NOT_A_FILE.to_owned(),
        "package.json".to_owned(),
        "/spiritExtension/contributes/cli/hooks/path".to_owned()
    )));
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_package_are_advice_when_they_lead_to_a_file() {
    use std::os::unix::fs::symlink;

    let outside = tempfile::tempdir().unwrap();
    fs::write(
        outside.path().join("index.js"),
        "export function activate() {}\n",
    )
    .unwrap();

    // A file that is a link to a file outside.
    let tmp = copy_of_seed();
    fs::remove_file(tmp.path().join("dist/index.js")).unwrap();
    symlink(
        outside.path().join("index.js"),
        tmp.path().join("dist/index.js"),
    )
    .unwrap();
    assert_eq!(
        found(tmp.path()),
        one(codes::PATH_ESCAPES, "package.json", "/main")
    );

    // A folder that is a link to a folder outside.
    let tmp = copy_of_seed();
    fs::remove_dir_all(tmp.path().join("dist")).unwrap();
    symlink(outside.path(), tmp.path().join("dist")).unwrap();
    assert_eq!(
        found(tmp.path()),
        one(codes::PATH_ESCAPES, "package.json", "/main")
    );

    // The app follows the link: it installs and runs, the link is advice.
    let checked = check_folder(tmp.path(), &Options::default()).unwrap();
    assert_eq!(checked.report.errors(), 0);
    assert!(checked.package.is_some());

    // A relative link climbing out, whose target does not even exist: no file.
    let tmp = copy_of_seed();
    fs::remove_file(tmp.path().join("assets/icon.svg")).unwrap();
    symlink("../../../nowhere.svg", tmp.path().join("assets/icon.svg")).unwrap();
    assert_eq!(
        found(tmp.path()),
        one(
            codes::MISSING_ASSET,
            "package.json",
            "/spiritExtension/icon"
        )
    );
    // `main` linked to a folder outside: it cannot be loaded.
    let tmp = copy_of_seed();
    fs::remove_file(tmp.path().join("dist/index.js")).unwrap();
    symlink(outside.path(), tmp.path().join("dist/index.js")).unwrap();
    assert_eq!(
        found(tmp.path()),
        [
            (
                codes::PATH_ESCAPES.to_owned(),
                "package.json".to_owned(),
                "/main".to_owned()
            ),
            (
                codes::MAIN_NOT_A_FILE.to_owned(),
                "package.json".to_owned(),
                "/main".to_owned()
            ),
        ]
    );

    // A link that stays inside is fine; one whose target is missing inside is missing.
    let tmp = copy_of_seed();
    fs::rename(
        tmp.path().join("assets/icon.svg"),
        tmp.path().join("styles/icon.svg"),
    )
    .unwrap();
    symlink("../styles/icon.svg", tmp.path().join("assets/icon.svg")).unwrap();
    assert_eq!(found(tmp.path()), []);
    fs::remove_file(tmp.path().join("styles/icon.svg")).unwrap();
    assert_eq!(
        found(tmp.path()),
        one(
            codes::MISSING_ASSET,
            "package.json",
            "/spiritExtension/icon"
        )
    );
}

#[test]
fn the_hooks_file_is_checked_under_its_own_name() {
    let tmp = copy_of_seed();
    fs::write(
        tmp.path().join("cli-hooks.json"),
        "{\n  \"hooks\": [\n    { \"slot\": \"input.frames\", \"variant\": \"loud\", \"tokens\": { \"border\": \"red\", \"fill\": \"accent\" } },\n    { \"prefix\": 1 }\n  ]\n}\n",
    )
    .unwrap();
    let checked = check_folder(tmp.path(), &Options::default()).unwrap();
    let hooks_file = format!("{}/cli-hooks.json", tmp.path().display());
    let found: Vec<_> = checked
        .diagnostics()
        .iter()
        .map(|d| {
            (
                d.code.as_ref(),
                d.file.as_str(),
                d.path.as_str(),
                d.line().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                codes::UNKNOWN_VALUE,
                hooks_file.as_str(),
                "/hooks/0/slot",
                3
            ),
            (
                codes::UNKNOWN_VALUE,
                hooks_file.as_str(),
                "/hooks/0/variant",
                3
            ),
            (
                codes::UNKNOWN_VALUE,
                hooks_file.as_str(),
                "/hooks/0/tokens/border",
                3
            ),
            (
                codes::UNKNOWN_KEY,
                hooks_file.as_str(),
                "/hooks/0/tokens/fill",
                3
            ),
            (codes::MISSING_KEY, hooks_file.as_str(), "/hooks/1/slot", 4),
            // The app ignores a wrong-typed prefix.
            (
                codes::IGNORED_VALUE,
                hooks_file.as_str(),
                "/hooks/1/prefix",
                4
            ),
        ]
    );
    assert!(
        checked.diagnostics()[0]
            .message
            .contains("did you mean `input.frame`?")
    );
    assert!(
        checked.package.is_none(),
        "errors in the hooks file make the package invalid"
    );

    fs::write(tmp.path().join("cli-hooks.json"), "{ \"hooks\": { } }").unwrap();
    assert_eq!(
        found_codes(tmp.path()),
        [(
            codes::INVALID_TYPE.to_owned(),
            "cli-hooks.json".to_owned(),
            "/hooks".to_owned()
        )]
    );
    fs::write(tmp.path().join("cli-hooks.json"), "[").unwrap();
    assert_eq!(
        found_codes(tmp.path()),
        [(
            codes::SYNTAX.to_owned(),
            "cli-hooks.json".to_owned(),
            String::new()
        )]
    );
    // A byte-order mark is refused, as in package.json.
    fs::write(
        tmp.path().join("cli-hooks.json"),
        "\u{FEFF}{ \"hooks\": [{ \"slot\": \"input.frame\" }] }",
    )
    .unwrap();
    assert_eq!(
        found_codes(tmp.path()),
        [(
            codes::BYTE_ORDER_MARK.to_owned(),
            "cli-hooks.json".to_owned(),
            String::new()
        )]
    );
    // No hook at all: `cli-ui` has no contribution, which the app refuses.
    fs::write(tmp.path().join("cli-hooks.json"), "{ \"hooks\": [] }").unwrap();
    assert_eq!(
        found_codes(tmp.path()),
        one(
            codes::CAPABILITY_MISMATCH,
            "package.json",
            "/spiritExtension/requestedCapabilities/6"
        )
    );
    // A backslash in the hooks path is read as `/`.
    fs::create_dir(tmp.path().join("sub")).unwrap();
    fs::write(
        tmp.path().join("sub/cli-hooks.json"),
        "{ \"hooks\": [{ \"slot\": \"input.frame\" }] }",
    )
    .unwrap();
    let manifest = tmp.path().join("package.json");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace("\"cli-hooks.json\"", "\"sub\\\\cli-hooks.json\""),
    )
    .unwrap();
    assert_eq!(
        found_codes(tmp.path()),
        one(
            codes::BACKSLASH_PATH,
            "package.json",
            "/spiritExtension/contributes/cli/hooks/path"
        )
    );
    fs::write(&manifest, text).unwrap();
    fs::remove_file(tmp.path().join("cli-hooks.json")).unwrap();
    assert_eq!(
        found_codes(tmp.path()),
        one(
            codes::MISSING_FILE,
            "package.json",
            "/spiritExtension/contributes/cli/hooks/path"
        )
    );
}

fn found_codes(dir: &Path) -> Vec<(String, String, String)> {
    found(dir)
}

#[test]
fn a_folder_without_package_json() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(
        found(tmp.path()),
        one(codes::MISSING_FILE, "package.json", "")
    );
    let checked = check_folder(&tmp.path().join("nope"), &Options::default()).unwrap();
    assert_eq!(checked.diagnostics()[0].code, codes::MISSING_FILE);
}

/// The Spirit app on Linux: `main` with a backslash is judged safe with the backslash
/// read as `/`, then loaded as the file of that very name in the package's root folder
/// (`path.join(dir, ...main.split("/"))`); so it installs where that file exists.
#[test]
fn a_main_with_a_backslash_names_the_file_of_that_very_name() {
    let tmp = copy_of_seed();
    let manifest = tmp.path().join("package.json");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace("\"dist/index.js\"", "\"dist\\\\index.js\""),
    )
    .unwrap();
    // Only `dist/index.js` exists: the file the app looks for does not.
    assert_eq!(
        found(tmp.path()),
        [
            one(codes::BACKSLASH_PATH, "package.json", "/main")[0].clone(),
            one(codes::MISSING_FILE, "package.json", "/main")[0].clone(),
        ]
    );
    // With a file named `dist\index.js` beside `dist/`: it installs, said once.
    fs::write(tmp.path().join("dist\\index.js"), "export {};\n").unwrap();
    assert_eq!(
        found(tmp.path()),
        one(codes::BACKSLASH_PATH, "package.json", "/main")
    );
    let checked = check_folder(tmp.path(), &Options::default()).unwrap();
    assert!(checked.package.is_some());
    let warning = &checked.diagnostics()[0];
    assert_eq!(warning.severity, Severity::Warning);
    assert!(
        warning.message.contains("on Windows `dist/index.js`"),
        "{}",
        warning.message
    );
}
