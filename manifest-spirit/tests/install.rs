//! Install, list, remove, settings and migration in the Spirit app's layout (feature
//! `install`).

#![cfg(feature = "install")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "archives/support.rs"]
mod support;

use std::fs;
use std::path::{Path, PathBuf};

use spirit_manifest::archive::{ArchiveError, Limits};
use spirit_manifest::install::{
    InstallError, InstallOptions, Layout, STATE_DIR, directory_name, find, host_dir, install,
    is_valid_id, list, migrate, read_entries, read_settings, remove, settings_file, sync_index,
    write_settings,
};
use spirit_manifest::{Host, codes};
use support::*;

const MIB: u64 = 1024 * 1024;

/// `pkg-<base64url("@acme/hello")>`.
const HELLO_DIR: &str = "pkg-QGFjbWUvaGVsbG8";

fn options(data_dir: &Path, host: Host) -> InstallOptions {
    InstallOptions::new(data_dir, host)
}

fn hello_zip(dir: &Path, name: &str, version: &str) -> PathBuf {
    zip(
        dir,
        name,
        &[
            file("hello/package.json", with_main("@acme/hello", version)),
            file_mode("hello/dist/index.js", INDEX_JS, 0o755),
            file("hello/README.md", format!("version {version}\n")),
            file("__MACOSX/hello/._package.json", "junk"),
        ],
    )
}

fn hello_tgz(dir: &Path, name: &str, version: &str) -> PathBuf {
    tgz(
        dir,
        name,
        &[
            file("package/package.json", with_main("@acme/hello", version)),
            file("package/dist/index.js", INDEX_JS),
        ],
    )
}

fn plain_tgz(dir: &Path, name: &str) -> PathBuf {
    tgz(
        dir,
        &format!("{name}.tgz"),
        &[
            file("package/package.json", with_main(name, "0.2.0")),
            file("package/dist/index.js", INDEX_JS),
        ],
    )
}

/// The host folder holds nothing but the app's `extension-state/` (or does not exist).
fn assert_nothing_installed(data_dir: &Path, host: Host) {
    let names = names_in(&host_dir(data_dir, host));
    assert!(
        names.is_empty() || names == [STATE_DIR.to_owned()],
        "{names:?}"
    );
}

/// `extensions.json` parsed.
fn index(data_dir: &Path, host: Host) -> serde_json::Value {
    let text = fs::read_to_string(host_dir(data_dir, host).join("extensions.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn index_ids(data_dir: &Path, host: Host) -> Vec<String> {
    index(data_dir, host)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Writes a package folder `folder` (relative to the host folder) as another program
/// (the app, or our old layout) left it.
fn put_package(data_dir: &Path, host: Host, folder: &str, manifest: &str) -> PathBuf {
    let path = host_dir(data_dir, host).join(folder);
    fs::create_dir_all(path.join("dist")).unwrap();
    fs::write(path.join("package.json"), manifest).unwrap();
    fs::write(path.join("dist/index.js"), INDEX_JS).unwrap();
    path
}

#[test]
fn folder_names_are_the_apps() {
    assert_eq!(directory_name("@acme/hello"), HELLO_DIR);
    assert_eq!(
        directory_name("@example/spirit-extension"),
        "pkg-QGV4YW1wbGUvc3Bpcml0LWV4dGVuc2lvbg"
    );
    // Every length modulo 3, no padding, the URL-safe alphabet.
    assert_eq!(directory_name("a"), "pkg-YQ");
    assert_eq!(directory_name("ab"), "pkg-YWI");
    assert_eq!(directory_name("abc"), "pkg-YWJj");
    assert_eq!(directory_name("a~~"), "pkg-YX5-");
    assert_eq!(directory_name("a??"), "pkg-YT8_");
    assert_eq!(
        settings_file(Path::new("/d"), Host::Desktop, "abc"),
        Path::new("/d/extensions/desktop/extension-state/ext-YWJj.json")
    );
}

#[test]
fn install_from_zip_puts_the_package_in_place() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = hello_zip(work.path(), "hello.zip", "1.0.0");
    let installed = install(&archive, &options(data.path(), Host::Cli)).unwrap();
    let target = data.path().join("extensions/cli").join(HELLO_DIR);
    assert_eq!(installed.id, "@acme/hello");
    assert_eq!(installed.version, "1.0.0");
    assert_eq!(installed.path, target);
    assert!(!installed.replaced);
    assert_eq!(
        fs::read_to_string(target.join("package.json")).unwrap(),
        with_main("@acme/hello", "1.0.0")
    );
    assert_eq!(
        fs::read_to_string(target.join("dist/index.js")).unwrap(),
        INDEX_JS
    );
    // Only the package root: `__MACOSX/` is outside it.
    assert_eq!(
        names_in(&target),
        [
            "README.md".to_owned(),
            "dist".to_owned(),
            "package.json".to_owned()
        ]
    );
    // No temporary folder left: the package, the index and the state folder.
    assert_eq!(
        names_in(&host_dir(data.path(), Host::Cli)),
        [
            "extension-state".to_owned(),
            "extensions.json".to_owned(),
            HELLO_DIR.to_owned()
        ]
    );
    let written = index(data.path(), Host::Cli);
    assert_eq!(written["entries"].as_array().unwrap().len(), 1);
    let entry = &written["entries"][0];
    assert_eq!(entry["id"], "@acme/hello");
    assert_eq!(entry["directoryName"], HELLO_DIR);
    assert_eq!(entry["archiveFileName"], "hello.zip");
    assert_eq!(entry["installSource"], "archive");
    assert!(entry["installedAtUnixMs"].as_u64().unwrap() > 1_600_000_000_000);
    assert_eq!(entry.as_object().unwrap().len(), 5);
    assert_eq!(
        serde_json::json!(installed.entry.installed_at_unix_ms),
        entry["installedAtUnixMs"]
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&target.join("dist/index.js")), 0o755);
        assert_eq!(mode(&target), 0o755);
    }
}

#[test]
fn index_is_sorted_by_id_and_written_as_the_app_writes_it() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    install(
        &plain_tgz(work.path(), "plain"),
        &options(data.path(), Host::Cli),
    )
    .unwrap();
    install(
        &hello_zip(work.path(), "hello.zip", "1.0.0"),
        &options(data.path(), Host::Cli),
    )
    .unwrap();
    let text =
        fs::read_to_string(host_dir(data.path(), Host::Cli).join("extensions.json")).unwrap();
    assert!(
        text.starts_with(
            "{\n  \"entries\": [\n    {\n      \"id\": \"@acme/hello\",\n      \"directoryName\": \"pkg-QGFjbWUvaGVsbG8\",\n      \"installedAtUnixMs\": "
        ),
        "{text}"
    );
    assert!(text.ends_with("\n  ]\n}\n"), "{text}");
    assert_eq!(index_ids(data.path(), Host::Cli), ["@acme/hello", "plain"]);
    let entries = read_entries(data.path(), Host::Cli);
    let plain = &entries["plain"];
    assert_eq!(plain.install_source.as_deref(), Some("marketplace"));
    assert_eq!(plain.archive_file_name.as_deref(), Some("plain.tgz"));
    assert_eq!(plain.directory_name, directory_name("plain"));
}

/// The app sorts the index with `localeCompare(other, "en")`: punctuation before digits
/// before letters, `_` before `-` — not byte order, which would give the reverse of
/// each of those.
#[test]
fn index_entries_follow_the_apps_collation_not_bytes() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    for name in ["a-b", "1x", "a_b"] {
        install(
            &plain_tgz(work.path(), name),
            &options(data.path(), Host::Cli),
        )
        .unwrap();
    }
    install(
        &hello_zip(work.path(), "hello.zip", "1.0.0"),
        &options(data.path(), Host::Cli),
    )
    .unwrap();
    assert_eq!(
        index_ids(data.path(), Host::Cli),
        ["@acme/hello", "1x", "a_b", "a-b"]
    );
}
#[cfg(unix)]
#[test]
fn install_from_tgz_keeps_exec_bit_and_drops_setuid_and_world_write() {
    use std::os::unix::fs::PermissionsExt;
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = tgz(
        work.path(),
        "hello-1.0.0.tgz",
        &[
            file("package/package.json", with_main("plain-hello", "1.0.0")),
            file_mode("package/dist/index.js", INDEX_JS, 0o4777),
            file_mode("package/data.txt", "d", 0o666),
        ],
    );
    let installed = install(&archive, &options(data.path(), Host::Desktop)).unwrap();
    let target = data
        .path()
        .join("extensions/desktop")
        .join(directory_name("plain-hello"));
    assert_eq!(installed.path, target);
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    let script = mode(&target.join("dist/index.js"));
    assert_eq!(script, 0o4777 & 0o775);
    assert_eq!(script & 0o4000, 0, "setuid dropped");
    assert_eq!(script & 0o002, 0, "world-writable dropped");
    assert_eq!(mode(&target.join("data.txt")), 0o664);
    assert_eq!(
        fs::read_to_string(target.join("package.json")).unwrap(),
        with_main("plain-hello", "1.0.0")
    );
}

#[test]
fn a_zip_never_replaces_an_installed_id() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let first = hello_zip(work.path(), "v1.zip", "1.0.0");
    let second = hello_zip(work.path(), "v2.zip", "2.0.0");
    let installed = install(&first, &options(data.path(), Host::Cli)).unwrap();
    let before = snapshot(&host_dir(data.path(), Host::Cli));
    match install(&second, &options(data.path(), Host::Cli)) {
        Err(InstallError::AlreadyInstalled { id, host, path }) => {
            assert_eq!(id, "@acme/hello");
            assert_eq!(host, Host::Cli);
            assert_eq!(path, installed.path);
        }
        other => panic!("{other:?}"),
    }
    // Nothing changed, the index included.
    assert_eq!(snapshot(&host_dir(data.path(), Host::Cli)), before);

    // A package.json with a byte-order mark, which the Spirit app refuses, is
    // refused as invalid; the installed copy is left untouched.
    let bom = zip(
        work.path(),
        "bom.zip",
        &[
            file(
                "package.json",
                format!("\u{feff}{}", with_main("@acme/hello", "3.0.0")),
            ),
            file("dist/index.js", INDEX_JS),
        ],
    );
    match install(&bom, &options(data.path(), Host::Cli)) {
        Err(InstallError::Invalid { report, .. })
            if report
                .diagnostics()
                .iter()
                .any(|d| d.code == spirit_manifest::codes::BYTE_ORDER_MARK) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(snapshot(&host_dir(data.path(), Host::Cli)), before);

    // The id in a folder of another name (the app reads it by its package.json name),
    // or only in the index, is installed too.
    let other = tempfile::tempdir().unwrap();
    let host = put_package(other.path(), Host::Cli, "hello", HELLO)
        .parent()
        .unwrap()
        .to_owned();
    match install(&first, &options(other.path(), Host::Cli)) {
        Err(InstallError::AlreadyInstalled { path, .. }) => assert_eq!(path, host.join("hello")),
        other => panic!("{other:?}"),
    }
    fs::remove_dir_all(host.join("hello")).unwrap();
    fs::write(
        host.join("extensions.json"),
        r#"{"entries":[{"id":"@acme/hello","directoryName":"gone","installedAtUnixMs":1}]}"#,
    )
    .unwrap();
    assert!(matches!(
        install(&first, &options(other.path(), Host::Cli)),
        Err(InstallError::AlreadyInstalled { .. })
    ));
}

#[test]
fn a_tgz_replaces_and_so_does_a_zip_with_replace() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let first = hello_zip(work.path(), "v1.zip", "1.0.0");
    let second = hello_tgz(work.path(), "v2.tgz", "2.0.0");
    install(&first, &options(data.path(), Host::Cli)).unwrap();
    // No `replace` needed for a marketplace tarball.
    let installed = install(&second, &options(data.path(), Host::Cli)).unwrap();
    assert!(installed.replaced);
    assert_eq!(installed.version, "2.0.0");
    assert_eq!(
        fs::read_to_string(installed.path.join("package.json")).unwrap(),
        with_main("@acme/hello", "2.0.0")
    );
    // The old copy's files are gone (README.md was only in 1.0.0).
    assert!(!installed.path.join("README.md").exists());
    assert_eq!(
        names_in(&host_dir(data.path(), Host::Cli)),
        [
            "extension-state".to_owned(),
            "extensions.json".to_owned(),
            HELLO_DIR.to_owned()
        ]
    );
    let entry = &index(data.path(), Host::Cli)["entries"][0];
    assert_eq!(entry["installSource"], "marketplace");
    assert_eq!(entry["archiveFileName"], "v2.tgz");

    // A ZIP over it with `replace`.
    let replace = InstallOptions {
        replace: true,
        ..options(data.path(), Host::Cli)
    };
    let installed = install(&first, &replace).unwrap();
    assert!(installed.replaced);
    assert_eq!(installed.version, "1.0.0");
    let written = index(data.path(), Host::Cli);
    assert_eq!(written["entries"][0]["installSource"], "archive");
    assert_eq!(written["entries"].as_array().unwrap().len(), 1);

    // Another folder the app reads as the same id goes too: one id, one folder.
    let other = put_package(data.path(), Host::Cli, "hello", HELLO);
    install(&second, &options(data.path(), Host::Cli)).unwrap();
    assert!(!other.exists());
    assert_eq!(list(data.path(), Some(Host::Cli)).unwrap().len(), 1);

    // On a fresh data dir it is a plain install.
    let fresh = tempfile::tempdir().unwrap();
    let installed = install(&second, &options(fresh.path(), Host::Cli)).unwrap();
    assert!(!installed.replaced);
}

#[test]
fn a_refused_zip_leaves_the_state_folder_and_a_refused_tgz_nothing() {
    let work = tempfile::tempdir().unwrap();
    let desktop_only = r#"{"name":"@acme/desk","version":"1.0.0","spiritExtension":{"displayName":"Desk","supportedHosts":["desktop"]}}"#;
    let archive = zip(
        work.path(),
        "desk.zip",
        &[file("package.json", desktop_only)],
    );
    let data = tempfile::tempdir().unwrap();
    match install(&archive, &options(data.path(), Host::Cli)) {
        Err(InstallError::Invalid { report, host, .. }) => {
            assert_eq!(host, Host::Cli);
            let diagnostic = report
                .diagnostics()
                .iter()
                .find(|d| d.code == codes::UNSUPPORTED_HOST)
                .unwrap_or_else(|| panic!("{:?}", report.diagnostics()));
            assert_eq!(
                diagnostic.file,
                format!("{}:package.json", archive.display())
            );
        }
        other => panic!("{other:?}"),
    }
    // What the app leaves: `extensions/cli/extension-state/`, empty.
    assert_eq!(
        snapshot(data.path()),
        [
            ("extensions/".to_owned(), Vec::new()),
            ("extensions/cli/".to_owned(), Vec::new()),
            ("extensions/cli/extension-state/".to_owned(), Vec::new()),
        ]
    );
    // The same package installs for the desktop.
    install(&archive, &options(data.path(), Host::Desktop)).unwrap();

    // A tarball refused before it is unpacked leaves nothing at all.
    let data = tempfile::tempdir().unwrap();
    let no_package = tgz(work.path(), "bad.tgz", &[file("other/package.json", HELLO)]);
    assert!(matches!(
        install(&no_package, &options(data.path(), Host::Cli)),
        Err(InstallError::Archive {
            source: ArchiveError::NoPackageJson { .. },
            ..
        })
    ));
    assert_eq!(names_in(data.path()), Vec::<String>::new());
}

#[test]
fn zip_entry_names_are_read_as_the_app_reads_them() {
    let work = tempfile::tempdir().unwrap();
    // Refused: whatever climbs, wherever it is, with `/` or `\`.
    for (index, name) in [
        "../evil.txt",
        "..\\evil.txt",
        "a/../b",
        "dist\\..\\..\\x",
        "/abs",
        "\\\\host\\share\\x",
        "C:\\x",
    ]
    .into_iter()
    .enumerate()
    {
        let data = tempfile::tempdir().unwrap();
        let archive = zip(
            work.path(),
            &format!("slip{index}.zip"),
            &[file("package.json", HELLO), file(name, "evil")],
        );
        match install(&archive, &options(data.path(), Host::Cli)) {
            Err(InstallError::Archive {
                source:
                    ArchiveError::UnsafeName { entry, .. } | ArchiveError::ParentSegment { entry },
                ..
            }) => assert_eq!(entry, name),
            other => panic!("{name}: {other:?}"),
        }
        assert_nothing_installed(data.path(), Host::Cli);
    }
    assert!(!work.path().parent().unwrap().join("evil.txt").exists());

    // Backslashes are folder separators, `./` is dropped.
    let data = tempfile::tempdir().unwrap();
    let archive = zip(
        work.path(),
        "windows.zip",
        &[
            file(".\\package.json", with_main("@acme/hello", "1.0.0")),
            file("dist\\index.js", INDEX_JS),
            file("./assets\\deep/icon.svg", "<svg/>"),
        ],
    );
    let installed = install(&archive, &options(data.path(), Host::Cli)).unwrap();
    assert_eq!(
        snapshot(&installed.path),
        [
            ("assets/".to_owned(), Vec::new()),
            ("assets/deep/".to_owned(), Vec::new()),
            ("assets/deep/icon.svg".to_owned(), b"<svg/>".to_vec()),
            ("dist/".to_owned(), Vec::new()),
            ("dist/index.js".to_owned(), INDEX_JS.as_bytes().to_vec()),
            (
                "package.json".to_owned(),
                with_main("@acme/hello", "1.0.0").into_bytes()
            ),
        ]
    );

    // `a/b` and `a\b` are one path: the app writes both, the later copy stays.
    let twice = zip(
        work.path(),
        "twice.zip",
        &[
            file("package.json", HELLO),
            file("a/b", "1"),
            file("a\\b", "2"),
        ],
    );
    let data = tempfile::tempdir().unwrap();
    let installed = install(&twice, &options(data.path(), Host::Cli)).unwrap();
    assert_eq!(fs::read_to_string(installed.path.join("a/b")).unwrap(), "2");
}

#[test]
fn a_zip_symlink_becomes_a_file_holding_its_text_and_is_never_followed() {
    let work = tempfile::tempdir().unwrap();
    let outside = work.path().join("outside.txt");
    fs::write(&outside, "secret").unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = zip(
        work.path(),
        "link.zip",
        &[
            file("package.json", HELLO),
            Item::Symlink("assets/link.svg".to_owned(), outside.display().to_string()),
            Item::Symlink("up".to_owned(), "..".to_owned()),
        ],
    );
    let installed = install(&archive, &options(data.path(), Host::Cli)).unwrap();
    let link = installed.path.join("assets/link.svg");
    let meta = fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_file(), "{meta:?}");
    assert_eq!(
        fs::read_to_string(&link).unwrap(),
        outside.display().to_string()
    );
    assert!(
        fs::symlink_metadata(installed.path.join("up"))
            .unwrap()
            .is_file()
    );
    assert_eq!(fs::read_to_string(installed.path.join("up")).unwrap(), "..");
    assert_eq!(fs::read_to_string(&outside).unwrap(), "secret");
}

#[test]
fn a_tgz_ignores_what_is_beside_package() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = tgz(
        work.path(),
        "extra.tgz",
        &[
            file("package/package.json", HELLO),
            file("EXTRA.txt", "beside"),
            file("other/package.json", "{}"),
        ],
    );
    let installed = install(&archive, &options(data.path(), Host::Cli)).unwrap();
    assert_eq!(names_in(&installed.path), ["package.json".to_owned()]);
    // A link beside `package/` with an absolute target is still refused, as the app
    // refuses it.
    let linked = tgz(
        work.path(),
        "extra-link.tgz",
        &[
            file("package/package.json", HELLO),
            Item::Symlink("escape".to_owned(), "/".to_owned()),
        ],
    );
    let data = tempfile::tempdir().unwrap();
    assert!(matches!(
        install(&linked, &options(data.path(), Host::Cli)),
        Err(InstallError::Archive {
            source: ArchiveError::Link { .. },
            ..
        })
    ));
    assert_eq!(names_in(data.path()), Vec::<String>::new());
}

#[test]
fn a_tgz_relative_symlink_inside_the_package_is_installed_as_that_link() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let main = r#"{"name":"@acme/hello","version":"1.0.0","main":"lib/index.js","spiritExtension":{"displayName":"Hello","supportedHosts":["cli","desktop"],"activationEvents":["onStartup"]}}"#;
    let archive = tgz(
        work.path(),
        "link.tgz",
        &[
            file("package/package.json", main),
            file("package/dist/index.js", INDEX_JS),
            Item::Symlink("package/lib".to_owned(), "dist".to_owned()),
            Item::Symlink("package/dist/alias.js".to_owned(), "./index.js".to_owned()),
            // A link to the package root and two links to each other: nothing loops.
            Item::Symlink("package/root".to_owned(), ".".to_owned()),
            Item::Symlink("package/ping".to_owned(), "pong".to_owned()),
            Item::Symlink("package/pong".to_owned(), "ping".to_owned()),
        ],
    );
    let installed = install(&archive, &options(data.path(), Host::Cli)).unwrap();
    for (link, target) in [
        ("lib", "dist"),
        ("dist/alias.js", "./index.js"),
        ("root", "."),
        ("ping", "pong"),
    ] {
        let at = installed.path.join(link);
        assert!(fs::symlink_metadata(&at).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_link(&at).unwrap(), Path::new(target));
    }
    // The links work where the package was installed.
    assert_eq!(
        fs::read_to_string(installed.path.join("lib/alias.js")).unwrap(),
        INDEX_JS
    );
}

#[test]
fn tgz_links_leading_out_of_the_package_or_written_through_leave_nothing() {
    let work = tempfile::tempdir().unwrap();
    let sentinel = work.path().join("sentinel");
    fs::create_dir(&sentinel).unwrap();
    for (name, items) in [
        (
            "escaping.tgz",
            vec![
                file("package/package.json", HELLO),
                file("beside/x", "x"),
                Item::Symlink("package/up".to_owned(), "../beside".to_owned()),
            ],
        ),
        (
            "through.tgz",
            vec![
                file("package/package.json", HELLO),
                dir("package/dist"),
                Item::Symlink("package/lnk".to_owned(), "dist".to_owned()),
                file("package/lnk/evil.txt", "evil"),
            ],
        ),
        (
            "back-by-name.tgz",
            vec![
                file("package/package.json", HELLO),
                Item::Symlink(
                    "package/up".to_owned(),
                    "../x/../package/package.json".to_owned(),
                ),
            ],
        ),
        (
            "names-the-root.tgz",
            vec![
                file("package/package.json", HELLO),
                Item::Symlink("package/self".to_owned(), "../package".to_owned()),
            ],
        ),
        (
            "relative-up.tgz",
            vec![
                file("package/package.json", HELLO),
                Item::Symlink("package/up".to_owned(), "../../sentinel".to_owned()),
                file("package/up/evil.txt", "evil"),
            ],
        ),
    ] {
        let data = tempfile::tempdir().unwrap();
        let archive = tgz(work.path(), name, &items);
        let result = install(&archive, &options(data.path(), Host::Cli));
        assert!(
            matches!(
                result,
                Err(InstallError::Archive {
                    source: ArchiveError::Link { .. } | ArchiveError::ThroughLink { .. },
                    ..
                })
            ),
            "{name}: {result:?}"
        );
        assert_eq!(names_in(data.path()), Vec::<String>::new(), "{name}");
        assert_eq!(names_in(&sentinel), Vec::<String>::new(), "{name}");
    }
}

#[test]
fn the_same_links_in_a_zip_install_as_plain_files_holding_their_text() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = zip(
        work.path(),
        "links.zip",
        &[
            file("pkg/package.json", HELLO),
            Item::Symlink(
                "pkg/up".to_owned(),
                "../x/../package/package.json".to_owned(),
            ),
            Item::Symlink("pkg/self".to_owned(), "../package".to_owned()),
        ],
    );
    let installed = install(&archive, &options(data.path(), Host::Cli)).unwrap();
    for (name, text) in [
        ("up", "../x/../package/package.json"),
        ("self", "../package"),
    ] {
        let path = installed.path.join(name);
        assert!(fs::symlink_metadata(&path).unwrap().is_file(), "{name}");
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
    }
}

#[test]
fn a_zero_byte_archive_is_the_apps_empty_zip_and_leaves_its_folders() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = work.path().join("empty.zip");
    fs::write(&archive, "").unwrap();
    let error = install(&archive, &options(data.path(), Host::Cli)).unwrap_err();
    assert!(
        matches!(
            error,
            InstallError::Archive {
                source: ArchiveError::Empty,
                ..
            }
        ),
        "{error:?}"
    );
    // What the app leaves: it makes the host's folders before it reads the archive.
    assert_eq!(names_in(data.path()), ["extensions"]);
    assert_eq!(names_in(&data.path().join("extensions")), ["cli"]);
    assert_eq!(
        names_in(&data.path().join("extensions/cli")),
        ["extension-state"]
    );
    assert_eq!(
        names_in(&data.path().join("extensions/cli/extension-state")),
        Vec::<String>::new()
    );
}

#[test]
fn tgz_links_are_refused_before_anything_is_written() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = tgz(
        work.path(),
        "link.tgz",
        &[
            file("package/package.json", HELLO),
            Item::Symlink("package/escape".to_owned(), "/".to_owned()),
            file("package/escape/evil.txt", "evil"),
        ],
    );
    assert!(matches!(
        install(&archive, &options(data.path(), Host::Cli)),
        Err(InstallError::Archive {
            source: ArchiveError::Link { .. },
            ..
        })
    ));
    assert_eq!(names_in(data.path()), Vec::<String>::new());
}

#[test]
fn zip_bomb_stops_with_nothing_left_on_disk() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = zip_with_zeros(
        work.path(),
        "bomb.zip",
        &[file("package.json", HELLO)],
        "zeros.bin",
        50 * MIB,
    );
    assert!(fs::metadata(&archive).unwrap().len() < 500 * 1024);
    // Declared sizes that lie: only the count of bytes actually unpacked stops it.
    lie_about_size(&archive, "zeros.bin", 1000);
    let limited = InstallOptions {
        limits: Limits {
            max_unpacked_bytes: MIB,
            ..Limits::default()
        },
        ..options(data.path(), Host::Cli)
    };
    match install(&archive, &limited) {
        Err(InstallError::Archive {
            source: ArchiveError::TooLarge { limit, .. },
            ..
        }) => assert_eq!(limit, MIB),
        other => panic!("{other:?}"),
    }
    assert_nothing_installed(data.path(), Host::Cli);
}

#[test]
fn gzip_bomb_stops_with_nothing_left_on_disk() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = tgz_with(work.path(), "bomb.tgz", |builder| {
        append_items(builder, &[file("package/package.json", HELLO)]);
        append_zeros(builder, "package/zeros.bin", 50 * MIB);
    });
    assert!(fs::metadata(&archive).unwrap().len() < 500 * 1024);
    let limited = InstallOptions {
        limits: Limits {
            max_unpacked_bytes: MIB,
            ..Limits::default()
        },
        ..options(data.path(), Host::Cli)
    };
    assert!(matches!(
        install(&archive, &limited),
        Err(InstallError::Archive {
            source: ArchiveError::TooLarge { .. },
            ..
        })
    ));
    assert_nothing_installed(data.path(), Host::Cli);
}

#[test]
fn list_reads_what_the_app_wrote_and_our_old_layout() {
    let data = tempfile::tempdir().unwrap();
    assert!(list(data.path(), None).unwrap().is_empty());
    let host = host_dir(data.path(), Host::Cli);
    // The app's: a `pkg-…` folder with its entry, and a folder of any name.
    put_package(
        data.path(),
        Host::Cli,
        HELLO_DIR,
        &with_main("@acme/hello", "1.0.0"),
    );
    put_package(
        data.path(),
        Host::Cli,
        "renamed-by-hand",
        &with_main("plain", "0.2.0"),
    );
    fs::create_dir_all(host.join(STATE_DIR)).unwrap();
    fs::write(host.join(STATE_DIR).join("ext-x.json"), "{}").unwrap();
    fs::write(
        host.join("extensions.json"),
        format!(
            r#"{{"entries":[{{"id":"@acme/hello","directoryName":"{HELLO_DIR}","installedAtUnixMs":1796152871236,"archiveFileName":"hello.zip","installSource":"archive"}},{{"id":"stale","directoryName":"pkg-c3RhbGU","installedAtUnixMs":5}}]}}"#
        ),
    )
    .unwrap();
    // Our old layout: `@scope/name/` (the app does not see it) and `<name>/`.
    put_package(
        data.path(),
        Host::Cli,
        "@acme/old",
        &with_main("@acme/old", "0.1.0"),
    );
    put_package(
        data.path(),
        Host::Cli,
        "older",
        &with_main("older", "0.1.0"),
    );
    // Not packages: a folder without package.json, leftovers, a stray file.
    fs::create_dir_all(host.join("empty")).unwrap();
    fs::create_dir_all(host.join(".spirit-install-x/package")).unwrap();
    fs::write(host.join(".spirit-install-x/package/package.json"), HELLO).unwrap();
    fs::write(host.join("stray.txt"), "x").unwrap();

    let all = list(data.path(), None).unwrap();
    let summary: Vec<(&str, &str, Layout, bool, bool)> = all
        .iter()
        .map(|p| {
            (
                p.id.as_str(),
                p.directory_name.as_str(),
                p.layout,
                p.seen_by_app,
                p.is_valid(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("@acme/hello", HELLO_DIR, Layout::App, true, true),
            ("@acme/old", "@acme/old", Layout::Legacy, false, true),
            ("older", "older", Layout::Legacy, true, true),
            ("plain", "renamed-by-hand", Layout::Legacy, true, true),
        ]
    );
    let hello = &all[0];
    assert_eq!(hello.package().unwrap().version, "1.0.0");
    let entry = hello.entry.as_ref().unwrap();
    assert_eq!(entry.installed_at_unix_ms, 1_796_152_871_236);
    assert_eq!(entry.install_source.as_deref(), Some("archive"));
    // `list` writes nothing.
    assert_eq!(index_ids(data.path(), Host::Cli), ["@acme/hello", "stale"]);

    // `sync_index` rewrites the index as the app's listing does: what the app sees,
    // the known entry kept, the others with the folder's mtime, the stale one dropped.
    let synced = sync_index(data.path(), Host::Cli).unwrap();
    assert_eq!(synced.len(), 4);
    assert_eq!(
        index_ids(data.path(), Host::Cli),
        ["@acme/hello", "older", "plain"]
    );
    let written = index(data.path(), Host::Cli);
    assert_eq!(
        written["entries"][0]["installedAtUnixMs"],
        1_796_152_871_236_u64
    );
    assert_eq!(written["entries"][0]["installSource"], "archive");
    let plain = written["entries"][2].as_object().unwrap();
    assert_eq!(plain["directoryName"], "renamed-by-hand");
    assert!(plain["installedAtUnixMs"].as_u64().unwrap() > 1_600_000_000_000);
    assert!(!plain.contains_key("installSource"));
    assert!(!plain.contains_key("archiveFileName"));
    // Unchanged: not written again.
    let before = fs::metadata(host.join("extensions.json"))
        .unwrap()
        .modified()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    sync_index(data.path(), Host::Cli).unwrap();
    let after = fs::metadata(host.join("extensions.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}

#[test]
fn list_reports_broken_packages_and_two_folders_with_one_id() {
    let data = tempfile::tempdir().unwrap();
    let broken = put_package(
        data.path(),
        Host::Cli,
        &directory_name("broken"),
        &with_main("broken", "0.1.0"),
    );
    fs::remove_file(broken.join("dist/index.js")).unwrap();
    put_package(data.path(), Host::Cli, "not-json", "{");
    put_package(data.path(), Host::Cli, HELLO_DIR, HELLO);
    put_package(data.path(), Host::Cli, "hello-copy", HELLO);
    let all = list(data.path(), Some(Host::Cli)).unwrap();
    let summary: Vec<(&str, bool)> = all.iter().map(|p| (p.id.as_str(), p.is_valid())).collect();
    assert_eq!(
        summary,
        [
            ("@acme/hello", false),
            ("@acme/hello", false),
            ("broken", false),
            ("not-json", false),
        ]
    );
    assert!(
        all[0].problems[0].contains("hello-copy"),
        "{:?}",
        all[0].problems
    );
    assert!(all[2].package().is_none());
    assert!(
        all[2]
            .checked
            .diagnostics()
            .iter()
            .any(|d| d.code == codes::MISSING_FILE),
        "{:?}",
        all[2].checked.diagnostics()
    );
    assert!(!all[3].seen_by_app);
    assert!(all[3].problems[0].contains("name"), "{:?}", all[3].problems);
}

#[test]
fn find_prefers_the_apps_folder() {
    let data = tempfile::tempdir().unwrap();
    assert_eq!(find(data.path(), Host::Cli, "@acme/hello").unwrap(), None);
    let old = put_package(data.path(), Host::Cli, "@acme/hello", HELLO);
    assert_eq!(
        find(data.path(), Host::Cli, "@acme/hello").unwrap(),
        Some(old)
    );
    let other = put_package(data.path(), Host::Cli, "by-hand", HELLO);
    assert_eq!(
        find(data.path(), Host::Cli, "@acme/hello").unwrap(),
        Some(other)
    );
    let app = put_package(data.path(), Host::Cli, HELLO_DIR, HELLO);
    assert_eq!(
        find(data.path(), Host::Cli, "@acme/hello").unwrap(),
        Some(app)
    );
    assert!(matches!(
        find(data.path(), Host::Cli, "../x"),
        Err(InstallError::InvalidId { .. })
    ));
}

#[test]
fn remove_deletes_every_folder_of_the_id_and_keeps_its_settings() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let hello = install(
        &hello_zip(work.path(), "hello.zip", "1.0.0"),
        &options(data.path(), Host::Cli),
    )
    .unwrap();
    install(
        &plain_tgz(work.path(), "plain"),
        &options(data.path(), Host::Cli),
    )
    .unwrap();
    let old = put_package(data.path(), Host::Cli, "@acme/hello", HELLO);
    let mut values = serde_json::Map::new();
    values.insert("region".to_owned(), "eu".into());
    let state = write_settings(data.path(), Host::Cli, "@acme/hello", &values).unwrap();

    let removed = remove(data.path(), Host::Cli, "@acme/hello").unwrap();
    assert_eq!(removed, [old.clone(), hello.path.clone()]);
    assert!(!hello.path.exists());
    assert!(!old.exists());
    // The empty scope folder goes too; the settings stay.
    assert_eq!(
        names_in(&host_dir(data.path(), Host::Cli)),
        [
            "extension-state".to_owned(),
            "extensions.json".to_owned(),
            directory_name("plain")
        ]
    );
    assert!(state.exists());
    assert_eq!(index_ids(data.path(), Host::Cli), ["plain"]);

    match remove(data.path(), Host::Cli, "@acme/hello") {
        Err(InstallError::NotInstalled { id, host, .. }) => {
            assert_eq!((id.as_str(), host), ("@acme/hello", Host::Cli));
        }
        other => panic!("{other:?}"),
    }
    // Installed for the CLI only.
    assert!(matches!(
        remove(data.path(), Host::Desktop, "plain"),
        Err(InstallError::NotInstalled { .. })
    ));

    remove(data.path(), Host::Cli, "plain").unwrap();
    assert_nothing_installed_but_index(data.path(), Host::Cli);
    assert_eq!(
        index(data.path(), Host::Cli),
        serde_json::json!({"entries": []})
    );
}

fn assert_nothing_installed_but_index(data_dir: &Path, host: Host) {
    assert_eq!(
        names_in(&host_dir(data_dir, host)),
        ["extension-state".to_owned(), "extensions.json".to_owned()]
    );
}

#[test]
fn remove_finds_an_app_install_in_a_folder_of_any_name() {
    let data = tempfile::tempdir().unwrap();
    let folder = put_package(data.path(), Host::Desktop, "whatever", HELLO);
    let removed = remove(data.path(), Host::Desktop, "@acme/hello").unwrap();
    assert_eq!(removed, [folder]);
    assert_eq!(
        index(data.path(), Host::Desktop),
        serde_json::json!({"entries": []})
    );
}

#[test]
fn migrate_moves_the_old_layout_into_the_apps() {
    let data = tempfile::tempdir().unwrap();
    let host = host_dir(data.path(), Host::Cli);
    let scoped = put_package(
        data.path(),
        Host::Cli,
        "@acme/hello",
        &with_main("@acme/hello", "1.0.0"),
    );
    put_package(
        data.path(),
        Host::Cli,
        "plain",
        &with_main("plain", "0.2.0"),
    );
    put_package(
        data.path(),
        Host::Desktop,
        "plain",
        &with_main("plain", "0.2.0"),
    );
    // Taken: the app's folder for `taken` exists already.
    put_package(
        data.path(),
        Host::Cli,
        "taken",
        &with_main("taken", "0.1.0"),
    );
    put_package(
        data.path(),
        Host::Cli,
        &directory_name("taken"),
        &with_main("taken", "0.2.0"),
    );

    let report = migrate(data.path(), Some(Host::Cli)).unwrap();
    let summary: Vec<(&str, bool)> = report
        .iter()
        .map(|m| (m.id.as_str(), m.to.is_some()))
        .collect();
    assert_eq!(
        summary,
        [("@acme/hello", true), ("plain", true), ("taken", false)]
    );
    assert_eq!(report[0].from, scoped);
    assert_eq!(
        report[0].to.as_deref(),
        Some(host.join(HELLO_DIR).as_path())
    );
    assert!(
        report[2]
            .skipped
            .as_deref()
            .unwrap()
            .contains("already holds")
    );
    assert_eq!(
        names_in(&host),
        [
            "extension-state".to_owned(),
            "extensions.json".to_owned(),
            HELLO_DIR.to_owned(),
            directory_name("plain"),
            directory_name("taken"),
            "taken".to_owned(),
        ]
    );
    assert_eq!(
        index_ids(data.path(), Host::Cli),
        ["@acme/hello", "plain", "taken", "taken"]
    );
    let layouts: Vec<(String, Layout)> = list(data.path(), Some(Host::Cli))
        .unwrap()
        .into_iter()
        .map(|p| (p.directory_name, p.layout))
        .collect();
    assert_eq!(
        layouts,
        [
            (HELLO_DIR.to_owned(), Layout::App),
            (directory_name("plain"), Layout::App),
            (directory_name("taken"), Layout::App),
            ("taken".to_owned(), Layout::Legacy),
        ]
    );
    // The desktop was not asked for; then it is, and again there is nothing to do.
    assert!(host_dir(data.path(), Host::Desktop).join("plain").exists());
    assert_eq!(migrate(data.path(), None).unwrap().len(), 2);
    assert!(
        host_dir(data.path(), Host::Desktop)
            .join(directory_name("plain"))
            .exists()
    );
    assert_eq!(migrate(data.path(), Some(Host::Desktop)).unwrap(), []);
}

#[test]
fn settings_live_in_the_apps_state_file() {
    let data = tempfile::tempdir().unwrap();
    assert!(
        read_settings(data.path(), Host::Cli, "@acme/hello")
            .unwrap()
            .is_empty()
    );
    let mut values = serde_json::Map::new();
    values.insert("region".to_owned(), "eu".into());
    values.insert("limit".to_owned(), 3.into());
    let path = write_settings(data.path(), Host::Cli, "@acme/hello", &values).unwrap();
    assert_eq!(
        path,
        data.path()
            .join("extensions/cli/extension-state/ext-QGFjbWUvaGVsbG8.json")
    );
    assert_eq!(
        read_settings(data.path(), Host::Cli, "@acme/hello").unwrap(),
        values
    );
    fs::write(&path, "[1]").unwrap();
    match read_settings(data.path(), Host::Cli, "@acme/hello") {
        Err(error @ InstallError::BadSettingsFile { .. }) => {
            assert!(error.to_string().contains("not a JSON object"), "{error}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn remove_refuses_ids_that_are_paths() {
    let data = tempfile::tempdir().unwrap();
    // Something outside the host folder that a traversal would reach.
    fs::create_dir_all(data.path().join("extensions/x")).unwrap();
    fs::create_dir_all(data.path().join("extensions/cli/a/b")).unwrap();
    for id in [
        "../x",
        "a/b",
        ".",
        "..",
        "",
        "@acme/../x",
        "@../x",
        "/etc",
        "Upper",
        "a\\b",
    ] {
        match remove(data.path(), Host::Cli, id) {
            Err(InstallError::InvalidId { id: given }) => assert_eq!(given, id),
            other => panic!("{id:?}: {other:?}"),
        }
    }
    assert!(data.path().join("extensions/x").exists());
    assert!(data.path().join("extensions/cli/a/b").exists());
}

#[test]
fn ids_follow_the_package_name_pattern() {
    for good in ["a", "hello-world", "a.b_c-d", "0x", "@acme/hello", "@a.b/c"] {
        assert!(is_valid_id(good), "{good}");
    }
    for bad in [
        "", ".", "..", "-a", "_a", ".a", "A", "a/b", "@a", "@a/", "@/a", "@a/b/c", "@a/.b", "a b",
    ] {
        assert!(!is_valid_id(bad), "{bad}");
    }
}

#[test]
fn errors_read_as_one_sentence() {
    let error = InstallError::InvalidId {
        id: "../x".to_owned(),
    };
    assert_eq!(
        error.to_string(),
        "`../x` is not a package name; expected `name` or `@scope/name` made of lowercase letters, digits, `.`, `_` and `-`, each part starting with a letter or digit"
    );
    let error = InstallError::AlreadyInstalled {
        id: "@acme/hello".to_owned(),
        host: Host::Cli,
        path: PathBuf::from("/data/extensions/cli/pkg-QGFjbWUvaGVsbG8"),
    };
    assert_eq!(
        error.to_string(),
        "`@acme/hello` is already installed for cli in `/data/extensions/cli/pkg-QGFjbWUvaGVsbG8`; it was left as it is (remove it first, or install with `--replace`)"
    );
}

#[test]
fn zip_file_names_with_empty_or_dot_segments_are_refused_and_leave_the_state_folder() {
    let work = tempfile::tempdir().unwrap();
    for (index, name) in ["dist//index.js", "dist/./index.js", "./././x"]
        .into_iter()
        .enumerate()
    {
        let data = tempfile::tempdir().unwrap();
        let archive = zip(
            work.path(),
            &format!("dots{index}.zip"),
            &[file("package.json", HELLO), file(name, "x")],
        );
        match install(&archive, &options(data.path(), Host::Cli)) {
            Err(InstallError::Archive {
                source: ArchiveError::DotSegment { entry },
                ..
            }) => assert_eq!(entry, name),
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(
            snapshot(data.path()),
            [
                ("extensions/".to_owned(), Vec::new()),
                ("extensions/cli/".to_owned(), Vec::new()),
                ("extensions/cli/extension-state/".to_owned(), Vec::new()),
            ]
        );
    }
}
