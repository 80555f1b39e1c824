//! Install, list and remove (feature `install`).

#![cfg(feature = "install")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "archives/support.rs"]
mod support;

use std::fs;
use std::path::{Path, PathBuf};

use spirit_manifest::archive::{ArchiveError, Limits};
use spirit_manifest::install::{
    InstallError, InstallOptions, host_dir, install, is_valid_id, list, remove,
};
use spirit_manifest::{Host, codes};
use support::*;

const MIB: u64 = 1024 * 1024;

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

/// The host folder holds nothing (or does not exist).
fn assert_nothing_installed(data_dir: &Path, host: Host) {
    assert_eq!(names_in(&host_dir(data_dir, host)), Vec::<String>::new());
}

#[test]
fn install_from_zip_puts_the_package_in_place() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let archive = hello_zip(work.path(), "hello.zip", "1.0.0");
    let installed = install(&archive, &options(data.path(), Host::Cli)).unwrap();
    let target = data.path().join("extensions/cli/@acme/hello");
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
    assert_eq!(
        names_in(&target),
        [
            "README.md".to_owned(),
            "dist".to_owned(),
            "package.json".to_owned()
        ]
    );
    // No temporary folder left, only the scope.
    assert_eq!(
        names_in(&host_dir(data.path(), Host::Cli)),
        ["@acme".to_owned()]
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&target.join("dist/index.js")), 0o755);
        assert_eq!(mode(&target), 0o755);
    }
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
    let target = data.path().join("extensions/desktop/plain-hello");
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
fn second_install_without_replace_leaves_the_first_untouched() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let first = hello_zip(work.path(), "v1.zip", "1.0.0");
    let second = hello_zip(work.path(), "v2.zip", "2.0.0");
    let installed = install(&first, &options(data.path(), Host::Cli)).unwrap();
    let before = snapshot(&installed.path);
    match install(&second, &options(data.path(), Host::Cli)) {
        Err(InstallError::AlreadyInstalled { id, host, path }) => {
            assert_eq!(id, "@acme/hello");
            assert_eq!(host, Host::Cli);
            assert_eq!(path, installed.path);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(snapshot(&installed.path), before);
    assert_eq!(
        names_in(&host_dir(data.path(), Host::Cli)),
        ["@acme".to_owned()]
    );
    assert_eq!(
        names_in(installed.path.parent().unwrap()),
        ["hello".to_owned()]
    );

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
    assert_eq!(snapshot(&installed.path), before);
    assert_eq!(
        names_in(&host_dir(data.path(), Host::Cli)),
        ["@acme".to_owned()]
    );
}

#[test]
fn replace_installs_the_new_version_in_place() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let first = hello_zip(work.path(), "v1.zip", "1.0.0");
    let second = tgz(
        work.path(),
        "v2.tgz",
        &[
            file("package/package.json", with_main("@acme/hello", "2.0.0")),
            file("package/dist/index.js", INDEX_JS),
        ],
    );
    install(&first, &options(data.path(), Host::Cli)).unwrap();
    let replace = InstallOptions {
        replace: true,
        ..options(data.path(), Host::Cli)
    };
    let installed = install(&second, &replace).unwrap();
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
        ["@acme".to_owned()]
    );
    assert_eq!(
        names_in(installed.path.parent().unwrap()),
        ["hello".to_owned()]
    );

    // Replace on a fresh data dir is a plain install.
    let fresh = tempfile::tempdir().unwrap();
    let installed = install(
        &second,
        &InstallOptions {
            replace: true,
            ..options(fresh.path(), Host::Cli)
        },
    )
    .unwrap();
    assert!(!installed.replaced);
}

#[test]
fn install_that_fails_validation_leaves_nothing() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let desktop_only = r#"{"name":"@acme/desk","version":"1.0.0","spiritExtension":{"displayName":"Desk","supportedHosts":["desktop"]}}"#;
    let archive = zip(
        work.path(),
        "desk.zip",
        &[file("package.json", desktop_only)],
    );
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
    assert_nothing_installed(data.path(), Host::Cli);
    // Not even the folders the install had to create are left.
    assert_eq!(names_in(data.path()), Vec::<String>::new());
    // The same package installs for the desktop.
    install(&archive, &options(data.path(), Host::Desktop)).unwrap();
}

#[test]
fn zip_slip_is_refused_before_anything_is_written() {
    let work = tempfile::tempdir().unwrap();
    for (index, name) in ["../evil.txt", "/abs", "C:\\x", "a\\b"]
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
                source: ArchiveError::UnsafeName { entry, .. },
                ..
            }) => assert_eq!(entry, name),
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(names_in(data.path()), Vec::<String>::new(), "{name}");
    }
    assert!(!work.path().parent().unwrap().join("evil.txt").exists());
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
fn list_shows_installed_packages_and_their_problems() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    assert!(list(data.path(), None).unwrap().is_empty());

    let scoped = hello_zip(work.path(), "hello.zip", "1.0.0");
    let plain = tgz(
        work.path(),
        "plain.tgz",
        &[
            file("package/package.json", with_main("plain", "0.2.0")),
            file("package/dist/index.js", INDEX_JS),
        ],
    );
    let broken = tgz(
        work.path(),
        "broken.tgz",
        &[
            file("package/package.json", with_main("broken", "0.1.0")),
            file("package/dist/index.js", INDEX_JS),
        ],
    );
    install(&scoped, &options(data.path(), Host::Cli)).unwrap();
    install(&plain, &options(data.path(), Host::Cli)).unwrap();
    install(&plain, &options(data.path(), Host::Desktop)).unwrap();
    let broken_at = install(&broken, &options(data.path(), Host::Cli))
        .unwrap()
        .path;
    // Broken after install: another name, and `main` gone.
    fs::write(
        broken_at.join("package.json"),
        with_main("renamed", "0.1.0"),
    )
    .unwrap();
    fs::remove_file(broken_at.join("dist/index.js")).unwrap();
    // Leftovers that are not packages.
    fs::create_dir_all(host_dir(data.path(), Host::Cli).join(".spirit-install-x")).unwrap();
    fs::write(host_dir(data.path(), Host::Cli).join("stray.txt"), "x").unwrap();

    let all = list(data.path(), None).unwrap();
    let summary: Vec<(Host, &str, bool)> = all
        .iter()
        .map(|p| (p.host, p.id.as_str(), p.is_valid()))
        .collect();
    assert_eq!(
        summary,
        [
            (Host::Cli, "@acme/hello", true),
            (Host::Cli, "broken", false),
            (Host::Cli, "plain", true),
            (Host::Desktop, "plain", true),
        ]
    );
    let hello = &all[0];
    assert_eq!(hello.package().unwrap().version, "1.0.0");
    assert_eq!(
        hello.package().unwrap().spirit_extension.display_name,
        "Hello"
    );
    assert_eq!(hello.path, data.path().join("extensions/cli/@acme/hello"));
    let broken = &all[1];
    assert!(broken.package().is_none());
    assert!(
        broken
            .checked
            .diagnostics()
            .iter()
            .any(|d| d.code == codes::MISSING_FILE),
        "{:?}",
        broken.checked.diagnostics()
    );

    // Only the name differs: the package validates but the folder is a problem.
    fs::write(broken_at.join("package.json"), HELLO).unwrap();
    let cli = list(data.path(), Some(Host::Cli)).unwrap();
    assert_eq!(cli.len(), 3);
    let broken = cli.iter().find(|p| p.id == "broken").unwrap();
    assert!(broken.package().is_some());
    assert_eq!(broken.problems.len(), 1, "{:?}", broken.problems);
    assert!(
        broken.problems[0].contains("@acme/hello"),
        "{:?}",
        broken.problems
    );
    assert!(!broken.is_valid());
}

#[test]
fn remove_deletes_the_folder_and_an_empty_scope() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let scoped = hello_zip(work.path(), "hello.zip", "1.0.0");
    let plain = tgz(
        work.path(),
        "plain.tgz",
        &[
            file("package/package.json", with_main("plain", "0.2.0")),
            file("package/dist/index.js", INDEX_JS),
        ],
    );
    let hello = install(&scoped, &options(data.path(), Host::Cli)).unwrap();
    install(&plain, &options(data.path(), Host::Cli)).unwrap();

    let removed = remove(data.path(), Host::Cli, "@acme/hello").unwrap();
    assert_eq!(removed, hello.path);
    assert!(!removed.exists());
    assert_eq!(
        names_in(&host_dir(data.path(), Host::Cli)),
        ["plain".to_owned()]
    );

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
    assert_nothing_installed(data.path(), Host::Cli);
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
        path: PathBuf::from("/data/extensions/cli/@acme/hello"),
    };
    assert_eq!(
        error.to_string(),
        "`@acme/hello` is already installed for cli in `/data/extensions/cli/@acme/hello`; it was left as it is (replace it to install over it: `--replace` on the command line)"
    );
}
