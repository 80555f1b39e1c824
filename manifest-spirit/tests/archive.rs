//! Archives: layout, unsafe entries, limits and reading in place (feature `archive`).

#![cfg(feature = "archive")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "archives/support.rs"]
mod support;

use std::path::Path;
use std::time::Instant;

use spirit_manifest::archive::{Archive, ArchiveError, Format, Limits, LinkProblem, MAX_ENTRIES};
use spirit_manifest::{FileKind, Options, PackageFiles, RelativePath, check_archive, codes};
use support::*;

fn open(path: &Path) -> Result<Archive, ArchiveError> {
    Archive::open(path, Limits::default())
}

fn rel(path: &str) -> RelativePath {
    RelativePath::parse(path).unwrap()
}

/// `check_archive` gives exactly one diagnostic with `code`, on the archive, at the root.
fn assert_one_archive_diagnostic(path: &Path, code: &str) -> String {
    let checked = check_archive(path, &Options::default()).unwrap();
    assert!(checked.package.is_none());
    let diagnostics = checked.diagnostics();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let diagnostic = &diagnostics[0];
    assert_eq!(diagnostic.code, code, "{}", diagnostic.message);
    assert_eq!(diagnostic.file, path.display().to_string());
    assert!(diagnostic.path.is_root());
    assert_eq!(diagnostic.line(), None);
    assert_eq!(diagnostic.column(), None);
    diagnostic.message.clone()
}

// ---- layout -------------------------------------------------------------------------

#[test]
fn zip_with_two_package_json_is_a_layout_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip(
        dir.path(),
        "two.zip",
        &[file("a/package.json", HELLO), file("b/package.json", HELLO)],
    );
    match open(&path) {
        Err(ArchiveError::SeveralPackageJson { entries }) => {
            assert_eq!(entries, ["a/package.json", "b/package.json"]);
        }
        other => panic!("{other:?}"),
    }
    let message = assert_one_archive_diagnostic(&path, codes::ARCHIVE_LAYOUT);
    assert!(
        message.contains("`a/package.json`, `b/package.json`"),
        "{message}"
    );
}

#[test]
fn zip_without_package_json_is_a_layout_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip(dir.path(), "none.zip", &[file("README.md", "hi")]);
    assert!(matches!(
        open(&path),
        Err(ArchiveError::NoPackageJson {
            format: Format::Zip
        })
    ));
    assert_one_archive_diagnostic(&path, codes::ARCHIVE_LAYOUT);
}

#[test]
fn empty_zip_is_a_layout_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip(dir.path(), "empty.zip", &[]);
    assert_eq!(&std::fs::read(&path).unwrap()[..4], b"PK\x05\x06");
    assert_one_archive_diagnostic(&path, codes::ARCHIVE_LAYOUT);
}

#[test]
fn zip_package_json_in_a_subfolder_is_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = with_main("@acme/hello", "1.0.0");
    let path = zip(
        dir.path(),
        "ext.zip",
        &[
            dir_item("hello/"),
            file("hello/package.json", &manifest),
            file("hello/dist/index.js", INDEX_JS),
            file("__MACOSX/hello/._package.json", "junk"),
            file("notes.txt", "not part of the package"),
        ],
    );
    let archive = open(&path).unwrap();
    assert_eq!(archive.format(), Format::Zip);
    assert_eq!(archive.root(), "hello/");
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert_eq!(
        paths,
        [
            ("dist", true),
            ("dist/index.js", false),
            ("package.json", false)
        ]
    );
    assert_eq!(archive.kind(&rel("package.json")), FileKind::File);
    assert_eq!(archive.kind(&rel("dist")), FileKind::Folder);
    assert_eq!(archive.kind(&rel("notes.txt")), FileKind::Missing);
    assert_eq!(archive.kind(&rel("__MACOSX")), FileKind::Missing);
    assert_eq!(
        archive.read(&rel("package.json"), 1 << 20).unwrap(),
        manifest.as_bytes()
    );
    assert!(archive.read(&rel("package.json"), 10).is_err());
    assert_eq!(
        archive.display_name(&rel("package.json")),
        format!("{}:package.json", path.display())
    );

    let checked = check_archive(&path, &Options::default()).unwrap();
    assert!(
        checked.diagnostics().is_empty(),
        "{:?}",
        checked.diagnostics()
    );
    assert_eq!(checked.package.unwrap().name, "@acme/hello");

    let out = tempfile::tempdir().unwrap();
    archive.extract(out.path()).unwrap();
    assert_eq!(
        names_in(out.path()),
        ["dist".to_owned(), "package.json".to_owned()]
    );
}

fn dir_item(name: &str) -> Item {
    support::dir(name)
}

#[test]
fn check_archive_on_a_good_zip_and_a_good_tgz_gives_no_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = with_main("@acme/hello", "1.0.0");
    let zip_path = zip(
        dir.path(),
        "good.zip",
        &[
            file("package.json", &manifest),
            file("dist/index.js", INDEX_JS),
        ],
    );
    let tgz_path = tgz(
        dir.path(),
        "good.tgz",
        &[
            dir_item("package/"),
            file("package/package.json", &manifest),
            file("package/dist/index.js", INDEX_JS),
        ],
    );
    for path in [&zip_path, &tgz_path] {
        let checked = check_archive(path, &Options::default()).unwrap();
        assert!(
            checked.diagnostics().is_empty(),
            "{:?}",
            checked.diagnostics()
        );
        let package = checked.package.unwrap();
        assert_eq!(package.name, "@acme/hello");
    }
    let archive = open(&tgz_path).unwrap();
    assert_eq!(archive.format(), Format::TarGz);
    assert_eq!(archive.root(), "package/");
    assert_eq!(
        archive.read(&rel("dist/index.js"), 1 << 20).unwrap(),
        INDEX_JS.as_bytes()
    );
}

#[test]
fn check_archive_reports_a_missing_main_in_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip(
        dir.path(),
        "nomain.zip",
        &[file("package.json", with_main("@acme/hello", "1.0.0"))],
    );
    let checked = check_archive(&path, &Options::default()).unwrap();
    assert!(checked.package.is_none());
    assert!(
        checked
            .diagnostics()
            .iter()
            .any(|d| d.code == codes::MISSING_FILE),
        "{:?}",
        checked.diagnostics()
    );
}

#[test]
fn tgz_without_package_folder_is_a_layout_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = tgz(dir.path(), "flat.tgz", &[file("package.json", HELLO)]);
    assert!(matches!(
        open(&path),
        Err(ArchiveError::NoPackageJson {
            format: Format::TarGz
        })
    ));
    assert_one_archive_diagnostic(&path, codes::ARCHIVE_LAYOUT);

    let path = tgz(
        dir.path(),
        "other.tgz",
        &[file("hello/package.json", HELLO)],
    );
    assert!(matches!(
        open(&path),
        Err(ArchiveError::NoPackageJson { .. })
    ));

    let path = tgz(dir.path(), "nojson.tgz", &[file("package/index.js", "x")]);
    assert!(matches!(
        open(&path),
        Err(ArchiveError::NoPackageJson {
            format: Format::TarGz
        })
    ));
    assert_one_archive_diagnostic(&path, codes::ARCHIVE_LAYOUT);
}

#[test]
fn tgz_entry_outside_package_is_ignored_as_the_app_ignores_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = tgz(
        dir.path(),
        "extra.tgz",
        &[
            file("package/package.json", HELLO),
            file("extra.txt", "x"),
            file("other/package.json", "{}"),
        ],
    );
    let archive = open(&path).unwrap();
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert_eq!(paths, [("package.json", false)]);
    assert!(
        check_archive(&path, &Options::default())
            .unwrap()
            .package
            .is_some()
    );
    // Its name is still checked.
    let path = tgz(
        dir.path(),
        "extra-slip.tgz",
        &[file("package/package.json", HELLO), file("../x", "x")],
    );
    assert!(matches!(
        open(&path),
        Err(ArchiveError::ParentSegment { .. })
    ));
    assert_one_archive_diagnostic(&path, codes::ARCHIVE_ENTRY);
}

#[test]
fn tgz_long_names_and_pax_global_headers_are_fine() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("package/{}/file.txt", "deep".repeat(40));
    let path = tgz_with(dir.path(), "long.tgz", |builder| {
        // A pax global header, as `git archive` writes.
        let comment = b"52 comment=0123456789012345678901234567890123456789\n";
        let header = raw_header(
            "pax_global_header",
            tar::EntryType::XGlobalHeader,
            comment.len() as u64,
            0o644,
        );
        builder.append(&header, &comment[..]).unwrap();
        append_items(builder, &[file("package/package.json", HELLO)]);
        let mut header = tar::Header::new_gnu();
        header.set_size(5);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        builder
            .append_data(&mut header, &long, &b"hello"[..])
            .unwrap();
    });
    let archive = open(&path).unwrap();
    let relative = long.strip_prefix("package/").unwrap();
    assert_eq!(archive.read(&rel(relative), 100).unwrap(), b"hello");
    let out = tempfile::tempdir().unwrap();
    assert_eq!(
        archive.extract(out.path()).unwrap(),
        (HELLO.len() + 5) as u64
    );
    assert_eq!(std::fs::read(out.path().join(relative)).unwrap(), b"hello");
}

// ---- unsafe entries -----------------------------------------------------------------

#[test]
fn zip_unsafe_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (index, name) in [
        "../evil.txt",
        "/abs",
        "C:\\x",
        "\\abs",
        "..\\evil.txt",
        "a/../../evil.txt",
        "a/../b",
        "a\0b",
    ]
    .into_iter()
    .enumerate()
    {
        let path = zip(
            dir.path(),
            &format!("slip{index}.zip"),
            &[file("package.json", HELLO), file(name, "evil")],
        );
        match open(&path) {
            Err(ArchiveError::UnsafeName { entry, .. } | ArchiveError::ParentSegment { entry }) => {
                assert_eq!(entry, name)
            }
            other => panic!("{name}: {other:?}"),
        }
        let message = assert_one_archive_diagnostic(&path, codes::ARCHIVE_ENTRY);
        assert!(message.contains(name), "{message}");
    }
}

#[test]
fn zip_backslash_names_are_folders_as_the_app_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip(
        dir.path(),
        "windows.zip",
        &[
            file("ext\\package.json", with_main("@acme/hello", "1.0.0")),
            file("ext\\dist\\index.js", INDEX_JS),
            file(".\\ext\\assets/icon.svg", "<svg/>"),
            file("other\\README.md", "outside"),
        ],
    );
    let archive = open(&path).unwrap();
    assert_eq!(archive.root(), "ext/");
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert_eq!(
        paths,
        [
            ("assets", true),
            ("assets/icon.svg", false),
            ("dist", true),
            ("dist/index.js", false),
            ("package.json", false),
        ]
    );
    // `check` finds `main` through the backslash name.
    let checked = check_archive(&path, &Options::default()).unwrap();
    assert!(checked.package.is_some(), "{:?}", checked.diagnostics());
}

#[test]
fn zip_files_with_empty_or_dot_segments_are_refused_as_the_app_refuses_them() {
    let tmp = tempfile::tempdir().unwrap();
    // `a\\b` is `a//b` once every backslash is a `/`; `./././b` keeps a `.` after the
    // two leading `./` the app drops.
    for (index, name) in ["a//b", "a/./b", "a\\\\b", "a/b/.", "./././b"]
        .into_iter()
        .enumerate()
    {
        let path = zip(
            tmp.path(),
            &format!("dots{index}.zip"),
            &[file("package.json", HELLO), file(name, "x")],
        );
        match open(&path) {
            Err(ArchiveError::DotSegment { entry }) => assert_eq!(entry, name),
            other => panic!("{name}: {other:?}"),
        }
        assert_one_archive_diagnostic(&path, codes::ARCHIVE_ENTRY);
    }
    // A second leading `./` is dropped as the app drops it (`normalizeArchivePath` once
    // on the archive name, once more on the path below the root), in either separator.
    for (index, name) in ["././b", ".\\.\\b", "./.\\b"].into_iter().enumerate() {
        let path = zip(
            tmp.path(),
            &format!("second{index}.zip"),
            &[file("package.json", HELLO), file(name, "x")],
        );
        let archive = open(&path).unwrap_or_else(|error| panic!("{name}: {error}"));
        let paths: Vec<(&str, bool)> = archive.paths().collect();
        assert_eq!(paths, [("b", false), ("package.json", false)], "{name}");
        let out = tempfile::tempdir().unwrap();
        archive.extract(out.path()).unwrap();
        assert_eq!(std::fs::read_to_string(out.path().join("b")).unwrap(), "x");
    }
    // Outside the package root the app skips them, and so do we; folders are fine.
    let path = zip(
        tmp.path(),
        "outside.zip",
        &[
            file("ext/package.json", HELLO),
            file("junk//x", "x"),
            dir_item("ext/./assets/"),
            file("ext/assets/icon.svg", "<svg/>"),
        ],
    );
    let archive = open(&path).unwrap();
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert_eq!(
        paths,
        [
            ("assets", true),
            ("assets/icon.svg", false),
            ("package.json", false)
        ]
    );
}

#[test]
fn zip_entries_outside_a_nested_root_are_skipped_unread_and_never_written() {
    let tmp = tempfile::tempdir().unwrap();
    // Beside `pkg/`, names the app never reaches: `..`, absolute, a drive letter.
    let path = zip(
        tmp.path(),
        "beside.zip",
        &[
            file("pkg/package.json", HELLO),
            file("pkg/index.js", "ok"),
            file("../x.txt", "up"),
            file("/x.txt", "root"),
            file("C:x.txt", "drive"),
            file("pkgx/y.txt", "a sibling whose name starts like the root"),
        ],
    );
    let archive = open(&path).unwrap();
    assert_eq!(archive.root(), "pkg/");
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert_eq!(paths, [("index.js", false), ("package.json", false)]);
    let out = tempfile::tempdir().unwrap();
    let inner = out.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    archive.extract(&inner).unwrap();
    let mut written: Vec<String> = walkdir(out.path());
    written.sort();
    assert_eq!(written, ["inner/", "inner/index.js", "inner/package.json"]);

    // At the archive's root the same names are the package's, and refused.
    for (index, name) in ["../x.txt", "/x.txt", "C:x.txt", "a/../x.txt"]
        .into_iter()
        .enumerate()
    {
        let path = zip(
            tmp.path(),
            &format!("root{index}.zip"),
            &[file("package.json", HELLO), file(name, "x")],
        );
        let error = open(&path).unwrap_err();
        assert_eq!(error.code(), Some(codes::ARCHIVE_ENTRY), "{name}: {error}");
        assert!(error.to_string().contains(name), "{name}: {error}");
    }
}

/// Every path under `dir`, relative, folders ending in `/`.
fn walkdir(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let relative = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                out.push(format!("{relative}/"));
                stack.push(path);
            } else {
                out.push(relative);
            }
        }
    }
    out
}

#[test]
fn zip_folder_entries_make_no_empty_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let path = zip(
        tmp.path(),
        "folders.zip",
        &[
            dir_item("empty/"),
            dir_item("dist/"),
            file("dist/index.js", "x"),
            file("package.json", HELLO),
            dir_item("../up/"),
        ],
    );
    let archive = open(&path).unwrap();
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert_eq!(
        paths,
        [
            ("dist", true),
            ("dist/index.js", false),
            ("package.json", false)
        ]
    );
    let out = tempfile::tempdir().unwrap();
    archive.extract(out.path()).unwrap();
    let mut written = walkdir(out.path());
    written.sort();
    assert_eq!(written, ["dist/", "dist/index.js", "package.json"]);
}

#[test]
fn tgz_unsafe_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (index, name) in [
        "package/../../evil.txt",
        "package/a/../b",
        "/etc/evil",
        "package\\evil",
    ]
    .into_iter()
    .enumerate()
    {
        let path = tgz(
            dir.path(),
            &format!("slip{index}.tgz"),
            &[file("package/package.json", HELLO), file(name, "evil")],
        );
        match open(&path) {
            Err(ArchiveError::UnsafeName { entry, .. } | ArchiveError::ParentSegment { entry }) => {
                assert_eq!(entry, name)
            }
            other => panic!("{name}: {other:?}"),
        }
        assert_one_archive_diagnostic(&path, codes::ARCHIVE_ENTRY);
    }
}

#[test]
fn zip_symlink_is_a_file_holding_the_link_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip(
        dir.path(),
        "link.zip",
        &[
            file("package.json", HELLO),
            Item::Symlink("index.js".to_owned(), "/etc/passwd".to_owned()),
        ],
    );
    let archive = open(&path).unwrap();
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert_eq!(paths, [("index.js", false), ("package.json", false)]);
    let index = RelativePath::parse("index.js").unwrap();
    assert_eq!(archive.kind(&index), FileKind::File);
    assert_eq!(archive.read(&index, 100).unwrap(), b"/etc/passwd");
    let out = tempfile::tempdir().unwrap();
    archive.extract(out.path()).unwrap();
    let meta = std::fs::symlink_metadata(out.path().join("index.js")).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(
        std::fs::read(out.path().join("index.js")).unwrap(),
        b"/etc/passwd"
    );
    // `check` reads it the same way: a `main` that is a link entry is a file.
    let main = zip(
        dir.path(),
        "main-link.zip",
        &[
            file("package.json", with_main("@acme/hello", "1.0.0")),
            Item::Symlink("dist/index.js".to_owned(), "../../x".to_owned()),
        ],
    );
    let checked = check_archive(&main, &Options::default()).unwrap();
    assert!(checked.package.is_some(), "{:?}", checked.diagnostics());
}

/// A package.json with `main`.
fn main_at(main: &str) -> String {
    format!(
        r#"{{"name":"@acme/hello","version":"1.0.0","main":"{main}","spiritExtension":{{"displayName":"Hello","supportedHosts":["cli","desktop"],"activationEvents":["onStartup"]}}}}"#
    )
}

fn symlink(name: &str, target: &str) -> Item {
    Item::Symlink(name.to_owned(), target.to_owned())
}

#[test]
fn tgz_relative_symlinks_inside_the_package_are_unpacked_as_links() {
    let dir = tempfile::tempdir().unwrap();
    let path = tgz(
        dir.path(),
        "link.tgz",
        &[
            file("package/package.json", main_at("lib/main.js")),
            file("package/dist/index.js", INDEX_JS),
            // To a file, to a folder, to the package root, and a link to a link.
            symlink("package/dist/main.js", "index.js"),
            symlink("package/lib", "./dist"),
            symlink("package/root", "."),
            symlink("package/again", "dist/main.js"),
            symlink("package/dangling", "nothing-here"),
        ],
    );
    let archive = open(&path).unwrap();
    let kind = |p: &str| archive.kind(&RelativePath::parse(p).unwrap());
    assert_eq!(kind("lib"), FileKind::Folder);
    assert_eq!(kind("lib/main.js"), FileKind::File);
    assert_eq!(kind("root/lib/index.js"), FileKind::File);
    assert_eq!(kind("again"), FileKind::File);
    assert_eq!(kind("dangling"), FileKind::Missing);
    assert_eq!(kind("lib/nothing.js"), FileKind::Missing);
    let read = |p: &str| archive.read(&RelativePath::parse(p).unwrap(), 100).unwrap();
    assert_eq!(read("lib/main.js"), INDEX_JS.as_bytes());
    // `check` follows them as the app does: `main` through a folder link is found.
    let checked = check_archive(&path, &Options::default()).unwrap();
    assert!(checked.package.is_some(), "{:?}", checked.diagnostics());
    assert_eq!(checked.report.errors(), 0, "{:?}", checked.diagnostics());

    let out = tempfile::tempdir().unwrap();
    archive.extract(out.path()).unwrap();
    for (link, target) in [
        ("dist/main.js", "index.js"),
        ("lib", "./dist"),
        ("root", "."),
        ("dangling", "nothing-here"),
    ] {
        let at = out.path().join(link);
        assert!(
            std::fs::symlink_metadata(&at)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{link}"
        );
        assert_eq!(
            std::fs::read_link(&at).unwrap(),
            Path::new(target),
            "{link}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.path().join("lib/main.js")).unwrap(),
        INDEX_JS
    );
}

/// The one `Link` refusal of opening `items` as a `.tgz`: entry, target, problem.
fn link_refusal(items: &[Item]) -> (String, bool, Option<String>, LinkProblem, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = tgz(dir.path(), "link.tgz", items);
    let message = assert_one_archive_diagnostic(&path, codes::ARCHIVE_ENTRY);
    match open(&path) {
        Err(ArchiveError::Link {
            entry,
            hard,
            target,
            problem,
        }) => (entry, hard, target, problem, message),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tgz_symlink_with_an_absolute_target_is_refused() {
    for target in ["/etc/passwd", "/", "C:x", "\\\\host\\x"] {
        let (entry, hard, got, problem, message) = link_refusal(&[
            file("package/package.json", HELLO),
            symlink("package/index.js", target),
        ]);
        assert_eq!(entry, "package/index.js");
        assert!(!hard);
        assert_eq!(got.as_deref(), Some(target));
        assert_eq!(problem, LinkProblem::Absolute, "{target}");
        assert!(message.contains("symbolic link"), "{message}");
        assert!(message.contains("absolute"), "{message}");
    }
}

#[test]
fn tgz_symlink_leaving_the_archive_is_refused_wherever_it_is() {
    for (name, target) in [
        ("package/index.js", "../../etc/passwd"),
        ("package/a/b", "../../../x"),
        // Beside `package/`, never unpacked, but the app refuses it too.
        ("other", "../x"),
    ] {
        let (entry, _, _, problem, message) =
            link_refusal(&[file("package/package.json", HELLO), symlink(name, target)]);
        assert_eq!(entry, name);
        assert_eq!(problem, LinkProblem::LeavesArchive, "{name} -> {target}");
        assert!(message.contains("leaves the archive"), "{message}");
    }
}

#[test]
fn tgz_symlink_leaving_the_package_is_refused_although_the_app_accepts_it() {
    for (target, resolved) in [
        ("../other/x", "other/x"),
        ("..", ""),
        ("../package2", "package2"),
        // Read in the archive these come back into `package/`; installed, the package
        // root is `pkg-<base64url(id)>/`, so they lead out of it.
        ("../x/../package/package.json", "package/package.json"),
        ("../package", "package"),
        ("../package/", "package"),
        ("sub/../../package/index.js", "package/index.js"),
        ("..\\package\\index.js", "package/index.js"),
    ] {
        let (entry, _, _, problem, message) = link_refusal(&[
            file("package/package.json", HELLO),
            file("package/index.js", "x"),
            file("other/x", "beside"),
            symlink("package/up", target),
        ]);
        assert_eq!(entry, "package/up");
        assert_eq!(
            problem,
            LinkProblem::LeavesPackage {
                resolved: resolved.to_owned()
            },
            "{target}"
        );
        assert!(message.contains("outside the package folder"), "{message}");
    }
}

#[test]
fn tgz_symlink_climbing_and_staying_below_the_root_is_unpacked() {
    // A link deeper down may climb as long as it stays below the root.
    let dir = tempfile::tempdir().unwrap();
    let path = tgz(
        dir.path(),
        "inside.tgz",
        &[
            file("package/package.json", HELLO),
            file("package/index.js", "x"),
            dir_item("package/lib"),
            symlink("package/lib/main.js", "../index.js"),
            symlink("package/lib/root", ".."),
        ],
    );
    let archive = open(&path).unwrap();
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert!(paths.contains(&("lib/root", false)), "{paths:?}");
}

#[test]
fn tgz_symlink_whose_target_goes_through_another_link_is_refused() {
    // `l/../..` reads as the archive root, but `l` leads to `dist/deep`, so on disk it
    // would lead to `package/`: what a link says must be where it leads.
    let (entry, _, _, problem, message) = link_refusal(&[
        file("package/package.json", HELLO),
        dir("package/dist/deep"),
        symlink("package/l", "dist/deep"),
        symlink("package/m", "l/../.."),
    ]);
    assert_eq!(entry, "package/m");
    assert_eq!(
        problem,
        LinkProblem::ThroughLink {
            link: "package/l".to_owned()
        }
    );
    assert!(message.contains("through the symbolic link"), "{message}");
}

#[test]
fn tgz_entry_written_through_a_link_is_refused_in_either_order() {
    for items in [
        vec![
            file("package/package.json", HELLO),
            dir("package/dist"),
            symlink("package/lnk", "dist"),
            file("package/lnk/evil.js", "evil"),
        ],
        vec![
            file("package/package.json", HELLO),
            dir("package/dist"),
            file("package/lnk/evil.js", "evil"),
            symlink("package/lnk", "dist"),
        ],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = tgz(dir.path(), "through.tgz", &items);
        match open(&path) {
            Err(ArchiveError::ThroughLink { entry, link }) => {
                assert_eq!(entry, "package/lnk/evil.js");
                assert_eq!(link, "package/lnk");
            }
            other => panic!("{other:?}"),
        }
        let message = assert_one_archive_diagnostic(&path, codes::ARCHIVE_ENTRY);
        assert!(message.contains("written through"), "{message}");
    }
}

#[test]
fn tgz_hard_link_to_an_earlier_file_is_a_copy_of_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = tgz(
        dir.path(),
        "hard.tgz",
        &[
            file("package/package.json", HELLO),
            file("beside/notes.txt", "beside the package"),
            Item::HardLink(
                "package/copy.json".to_owned(),
                "package/package.json".to_owned(),
            ),
            Item::HardLink(
                "package/notes.txt".to_owned(),
                "./beside/notes.txt".to_owned(),
            ),
            // A hard link to a hard link holds the first file's bytes too.
            Item::HardLink(
                "package/again.json".to_owned(),
                "package/copy.json".to_owned(),
            ),
        ],
    );
    let archive = open(&path).unwrap();
    let read = |p: &str| {
        archive
            .read(&RelativePath::parse(p).unwrap(), 1000)
            .unwrap()
    };
    assert_eq!(read("copy.json"), HELLO.as_bytes());
    assert_eq!(read("notes.txt"), b"beside the package");
    let out = tempfile::tempdir().unwrap();
    archive.extract(out.path()).unwrap();
    assert_eq!(read("again.json"), HELLO.as_bytes());
    for (name, bytes) in [
        ("again.json", HELLO.as_bytes()),
        ("copy.json", HELLO.as_bytes()),
        ("notes.txt", b"beside the package".as_slice()),
        ("package.json", HELLO.as_bytes()),
    ] {
        let at = out.path().join(name);
        assert!(std::fs::symlink_metadata(&at).unwrap().is_file(), "{name}");
        assert_eq!(std::fs::read(&at).unwrap(), bytes, "{name}");
    }
    assert!(!out.path().join("beside").exists());
}

#[test]
fn tgz_hard_links_the_app_refuses_are_refused() {
    for (target, expected) in [
        ("package/../package/package.json", LinkProblem::HardParent),
        ("/package/package.json", LinkProblem::Absolute),
        ("package/missing.json", LinkProblem::HardTarget),
        ("package/later.json", LinkProblem::HardTarget),
        ("package/dist", LinkProblem::HardTarget),
        ("package/sym", LinkProblem::HardTarget),
        ("", LinkProblem::Empty),
    ] {
        let (entry, hard, _, problem, message) = link_refusal(&[
            file("package/package.json", HELLO),
            dir("package/dist"),
            symlink("package/sym", "package.json"),
            Item::HardLink("package/copy.json".to_owned(), target.to_owned()),
            file("package/later.json", "{}"),
        ]);
        assert_eq!(entry, "package/copy.json");
        assert!(hard);
        assert_eq!(problem, expected, "{target}");
        assert!(message.contains("hard link"), "{message}");
    }
}

#[test]
fn tgz_fifo_and_char_device_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = tgz(
        dir.path(),
        "fifo.tgz",
        &[
            file("package/package.json", HELLO),
            Item::Fifo("package/pipe".to_owned()),
        ],
    );
    match open(&fifo) {
        Err(ArchiveError::Special { entry, kind }) => {
            assert_eq!(entry, "package/pipe");
            assert_eq!(kind, "a FIFO");
        }
        other => panic!("{other:?}"),
    }
    assert_one_archive_diagnostic(&fifo, codes::ARCHIVE_ENTRY);
    let device = tgz(
        dir.path(),
        "char.tgz",
        &[
            file("package/package.json", HELLO),
            Item::CharDevice("package/null".to_owned()),
        ],
    );
    assert!(matches!(open(&device), Err(ArchiveError::Special { .. })));
    assert_one_archive_diagnostic(&device, codes::ARCHIVE_ENTRY);
}

#[test]
fn zip_fifo_mode_is_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip(
        dir.path(),
        "fifo.zip",
        &[file("package.json", HELLO), file("pipe", "")],
    );
    // External attributes: S_IFIFO | 0o644 in the high 16 bits.
    patch_zip_entry(&path, "pipe", |bytes, central, _| {
        let attributes = (0o010_644u32) << 16;
        bytes[central + 38..central + 42].copy_from_slice(&attributes.to_le_bytes());
        bytes[central + 5] = 3; // made by Unix
    });
    let archive = open(&path).unwrap();
    let out = tempfile::tempdir().unwrap();
    archive.extract(out.path()).unwrap();
    assert!(
        std::fs::symlink_metadata(out.path().join("pipe"))
            .unwrap()
            .file_type()
            .is_file()
    );
}

#[test]
fn zip_name_given_twice_keeps_the_last_copy() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip(
        dir.path(),
        "twice.zip",
        &[
            file("package.json", HELLO),
            file("a.txt", "one"),
            file("b.txt", "two"),
        ],
    );
    rename_zip_entry(&path, "b.txt", "a.txt");
    let archive = open(&path).unwrap();
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert_eq!(paths, [("a.txt", false), ("package.json", false)]);
    let out = tempfile::tempdir().unwrap();
    archive.extract(out.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.path().join("a.txt")).unwrap(),
        "two"
    );

    // Two spellings of one path: the one the app writes last wins, in its order (the
    // order names first appear), whatever the spelling.
    for (first, second) in [("a/b.txt", "./a/b.txt"), ("./a/b.txt", "a/b.txt")] {
        let path = zip(
            dir.path(),
            "spellings.zip",
            &[
                file("package.json", HELLO),
                file(first, "one"),
                file(second, "two"),
            ],
        );
        let archive = open(&path).unwrap();
        let out = tempfile::tempdir().unwrap();
        archive.extract(out.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.path().join("a/b.txt")).unwrap(),
            "two",
            "{first} then {second}"
        );
    }

    // Names that are array indices come first in a JavaScript object, in numeric
    // order: `./10` is written after `10` although the archive lists it first.
    let path = zip(
        dir.path(),
        "indices.zip",
        &[
            file("package.json", HELLO),
            file("./10", "spelled"),
            file("10", "index"),
            file("./2", "spelled"),
            file("2", "index"),
        ],
    );
    let archive = open(&path).unwrap();
    let out = tempfile::tempdir().unwrap();
    archive.extract(out.path()).unwrap();
    for name in ["10", "2"] {
        assert_eq!(
            std::fs::read_to_string(out.path().join(name)).unwrap(),
            "spelled",
            "{name}"
        );
    }

    // A file that is also the folder of another is refused, as the app fails to write it.
    let path = zip(
        dir.path(),
        "both.zip",
        &[
            file("package.json", HELLO),
            file("a", "file"),
            file("./a/b", "inside"),
        ],
    );
    match open(&path) {
        Err(ArchiveError::FileAndFolder { path, file, .. }) => {
            assert_eq!((path.as_str(), file.as_str()), ("a/b", "a"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tgz_name_given_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = tgz(
        dir.path(),
        "twice.tgz",
        &[
            file("package/package.json", HELLO),
            file("package/index.js", "one"),
            file("./package/index.js", "two"),
        ],
    );
    assert!(matches!(open(&path), Err(ArchiveError::Duplicate { .. })));
    assert_one_archive_diagnostic(&path, codes::ARCHIVE_ENTRY);
}

#[test]
fn a_file_used_as_a_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = tgz(
        dir.path(),
        "both.tgz",
        &[
            file("package/package.json", HELLO),
            file("package/lib", "a file"),
            file("package/lib/index.js", "inside it"),
        ],
    );
    match open(&path) {
        Err(ArchiveError::FileAndFolder { file, .. }) => assert_eq!(file, "package/lib"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_and_corrupt_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("ext.zip");
    std::fs::write(&text, "not an archive").unwrap();
    match open(&text) {
        Err(error @ ArchiveError::UnknownFormat { .. }) => {
            assert!(error.to_string().contains("`6e 6f 74 20`"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert_one_archive_diagnostic(&text, codes::ARCHIVE_CORRUPT);

    let empty = dir.path().join("empty.tgz");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(open(&empty), Err(ArchiveError::Empty)));
    let message = assert_one_archive_diagnostic(&empty, codes::ARCHIVE_CORRUPT);
    assert!(
        message.contains("\"The extension ZIP is empty.\""),
        "{message}"
    );

    let good = zip(dir.path(), "good.zip", &[file("package.json", HELLO)]);
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.path().join("truncated.zip");
    std::fs::write(&truncated, &bytes[..bytes.len() - 30]).unwrap();
    assert!(matches!(
        open(&truncated),
        Err(ArchiveError::Corrupt {
            format: Format::Zip,
            ..
        })
    ));
    assert_one_archive_diagnostic(&truncated, codes::ARCHIVE_CORRUPT);

    let good = tgz(
        dir.path(),
        "good.tgz",
        &[file("package/package.json", HELLO)],
    );
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.path().join("truncated.tgz");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert!(matches!(
        open(&truncated),
        Err(ArchiveError::Corrupt {
            format: Format::TarGz,
            ..
        })
    ));
    assert_one_archive_diagnostic(&truncated, codes::ARCHIVE_CORRUPT);
}

#[test]
fn a_missing_archive_is_a_read_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.zip");
    assert!(matches!(open(&missing), Err(ArchiveError::Read { .. })));
    assert!(check_archive(&missing, &Options::default()).is_err());
}

// ---- limits -------------------------------------------------------------------------

#[test]
fn too_many_entries_with_lowered_limits() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        max_entries: 10,
        ..Limits::default()
    };
    let mut items = vec![file("package.json", HELLO)];
    items.extend((0..10).map(|i| file(&format!("f{i}.txt"), "x")));
    let zip_path = zip(dir.path(), "many.zip", &items);
    assert!(matches!(
        Archive::open(&zip_path, limits),
        Err(ArchiveError::TooManyEntries { limit: 10 })
    ));
    let ok = Limits {
        max_entries: 11,
        ..limits
    };
    assert!(Archive::open(&zip_path, ok).is_ok());

    let mut items = vec![file("package/package.json", HELLO)];
    items.extend((0..10).map(|i| file(&format!("package/f{i}.txt"), "x")));
    let tgz_path = tgz(dir.path(), "many.tgz", &items);
    assert!(matches!(
        Archive::open(&tgz_path, limits),
        Err(ArchiveError::TooManyEntries { limit: 10 })
    ));
    assert!(Archive::open(&tgz_path, ok).is_ok());
}

#[test]
fn ten_thousand_and_one_entries_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = tgz_with(dir.path(), "huge.tgz", |builder| {
        append_items(builder, &[file("package/package.json", HELLO)]);
        for i in 0..MAX_ENTRIES {
            let header = raw_header(&format!("package/f{i}"), tar::EntryType::Regular, 0, 0o644);
            builder.append(&header, std::io::empty()).unwrap();
        }
    });
    let start = Instant::now();
    assert!(matches!(
        open(&path),
        Err(ArchiveError::TooManyEntries { limit: MAX_ENTRIES })
    ));
    let message = assert_one_archive_diagnostic(&path, codes::ARCHIVE_LIMIT);
    assert!(message.contains("10000"), "{message}");
    assert!(start.elapsed().as_secs() < 10);

    let mut items = vec![file("package.json", HELLO)];
    items.extend((0..MAX_ENTRIES).map(|i| file(&format!("f{i}"), "")));
    let path = zip(dir.path(), "huge.zip", &items);
    assert!(matches!(
        open(&path),
        Err(ArchiveError::TooManyEntries { limit: MAX_ENTRIES })
    ));
}

const MIB: u64 = 1024 * 1024;

fn one_mib() -> Limits {
    Limits {
        max_unpacked_bytes: MIB,
        ..Limits::default()
    }
}

#[test]
fn zip_bomb_declaring_its_size_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip_with_zeros(
        dir.path(),
        "bomb.zip",
        &[file("package.json", HELLO)],
        "zeros.bin",
        50 * MIB,
    );
    assert!(std::fs::metadata(&path).unwrap().len() < 500 * 1024);
    match Archive::open(&path, one_mib()) {
        Err(ArchiveError::TooLarge { limit, entry }) => {
            assert_eq!(limit, MIB);
            assert_eq!(entry.as_deref(), Some("zeros.bin"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn zip_bomb_lying_about_its_size_stops_while_unpacking() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip_with_zeros(
        dir.path(),
        "liar.zip",
        &[file("package.json", HELLO)],
        "zeros.bin",
        50 * MIB,
    );
    lie_about_size(&path, "zeros.bin", 1000);
    let archive = Archive::open(&path, one_mib()).unwrap();
    let out = tempfile::tempdir().unwrap();
    match archive.extract(out.path()) {
        Err(ArchiveError::TooLarge { limit, entry }) => {
            assert_eq!(limit, MIB);
            assert_eq!(entry.as_deref(), Some("zeros.bin"));
        }
        other => panic!("{other:?}"),
    }
    // It stopped at the limit: never more than the limit on disk.
    let written = std::fs::metadata(out.path().join("zeros.bin"))
        .unwrap()
        .len();
    assert!(written <= MIB, "{written}");
    // Reading in place is bounded too.
    assert!(archive.read(&rel("zeros.bin"), 4096).is_err());
}

#[test]
fn gzip_bomb_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = tgz_with(dir.path(), "bomb.tgz", |builder| {
        append_items(builder, &[file("package/package.json", HELLO)]);
        append_zeros(builder, "package/zeros.bin", 50 * MIB);
    });
    assert!(std::fs::metadata(&path).unwrap().len() < 500 * 1024);
    assert!(matches!(
        Archive::open(&path, one_mib()),
        Err(ArchiveError::TooLarge { limit: MIB, .. })
    ));

    // Declared sizes are not trusted: many entries each under the limit.
    let path = tgz_with(dir.path(), "many.tgz", |builder| {
        append_items(builder, &[file("package/package.json", HELLO)]);
        for i in 0..4 {
            append_zeros(builder, &format!("package/zeros{i}.bin"), MIB / 2);
        }
    });
    match Archive::open(&path, one_mib()) {
        Err(error @ ArchiveError::TooLarge { .. }) => {
            assert_eq!(error.code(), Some(codes::ARCHIVE_LIMIT));
            assert!(error.to_string().contains("1048576"), "{error}");
        }
        other => panic!("{other:?}"),
    }
}

// ---- unpacking ----------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn extract_sanitises_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;

    let path = tgz(
        dir.path(),
        "modes.tgz",
        &[
            dir_item("package/"),
            file("package/package.json", HELLO),
            file_mode("package/bin/run", "#!/bin/sh\n", 0o4777),
            file_mode("package/world.txt", "w", 0o666),
            file_mode("package/private.txt", "p", 0o400),
        ],
    );
    let out = tempfile::tempdir().unwrap();
    open(&path).unwrap().extract(out.path()).unwrap();
    assert_eq!(mode(&out.path().join("bin/run")), 0o775);
    assert_eq!(mode(&out.path().join("world.txt")), 0o664);
    assert_eq!(mode(&out.path().join("private.txt")), 0o600);
    assert_eq!(mode(&out.path().join("package.json")), 0o644);
    assert_eq!(mode(&out.path().join("bin")), 0o755);

    let path = zip(
        dir.path(),
        "modes.zip",
        &[
            file("package.json", HELLO),
            file_mode("run.sh", "#!/bin/sh\n", 0o777),
            file_mode("tool", "t", 0o755),
        ],
    );
    // Set the setuid bit by hand (the ZIP writer keeps only 0o777).
    patch_zip_entry(&path, "tool", |bytes, central, _| {
        let attributes = (0o104_755u32) << 16;
        bytes[central + 38..central + 42].copy_from_slice(&attributes.to_le_bytes());
    });
    let out = tempfile::tempdir().unwrap();
    open(&path).unwrap().extract(out.path()).unwrap();
    assert_eq!(mode(&out.path().join("run.sh")), 0o775);
    assert_eq!(mode(&out.path().join("tool")), 0o755);
}

/// An entry whose listing is fine but whose bytes fail their CRC-32 (found by the
/// `spirit_archive_listing` fuzz target) is a `spirit/archive-corrupt` diagnostic, not
/// an I/O error.
#[test]
fn a_zip_entry_with_a_bad_checksum_is_an_archive_problem() {
    let hex = "504b03041400000000000000215ce63fa02275000000750000000c0000007061636b6167652e6a736f6e7b226e616d65223a224062636d652f68656c6c6f222c2276657273696f6e223a22312e302e30222c22737069726974457874656e73696f6e223a7b22646973706c61794e616d65223a2248656c6c6f222c22737570706f72746564486f737473223a5b22636c69222c226465736b746f70225d7d7d504b010214031400000000000000215ce63fa02275000000750000000c00000000000000000000008001000000007061636b6167652e6a736f6e504b050600000000010001003a0000009f0000000000";
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad-crc.zip");
    std::fs::write(&path, bytes).unwrap();
    let checked =
        spirit_manifest::check_archive(&path, &spirit_manifest::Options::default()).unwrap();
    let codes: Vec<&str> = checked
        .diagnostics()
        .iter()
        .map(|d| d.code.as_ref())
        .collect();
    assert_eq!(codes, [spirit_manifest::codes::ARCHIVE_CORRUPT]);
    assert!(
        checked.diagnostics()[0].message.contains("checksum"),
        "{}",
        checked.diagnostics()[0].message
    );
    assert!(checked.package.is_none());
}

#[test]
fn zip_names_without_the_utf8_flag_are_one_character_per_byte_as_the_app_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = zip(
        dir.path(),
        "latin1.zip",
        &[file("package.json", HELLO), file("cafX.txt", "x")],
    );
    // The byte 0xE9 in place of `X`, flag unset: the app's reader makes it `é` (Latin-1),
    // where code page 437 would make it `Θ`.
    let mut bytes = std::fs::read(&path).unwrap();
    let mut patched = 0;
    while let Some(at) = bytes.windows(8).position(|window| window == b"cafX.txt") {
        bytes[at + 3] = 0xE9;
        patched += 1;
    }
    assert_eq!(patched, 2, "the local and the central header");
    std::fs::write(&path, &bytes).unwrap();
    let archive = open(&path).unwrap();
    let paths: Vec<(&str, bool)> = archive.paths().collect();
    assert_eq!(paths, [("café.txt", false), ("package.json", false)]);
    let out = tempfile::tempdir().unwrap();
    archive.extract(out.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.path().join("café.txt")).unwrap(),
        "x"
    );
}
