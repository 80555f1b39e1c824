//! Entry names of a Spirit package ZIP as the install path reads them (`spirit-manifest`,
//! features `archive` and `install`): backslashes, `.` and `..` segments, absolute and
//! drive-letter names, symbolic-link entries.
//!
//! For every name, [`entry_name`] either refuses it — and then the name, read with `\` as
//! `/`, has a `..` segment, is absolute, has a drive letter or a NUL, or names nothing —
//! or gives a normalised relative path: no backslash, no empty, `.` or `..` segment,
//! read the same again, whose every component joined to a folder stays inside it. In a
//! `.tgz` a name with a backslash is always refused.
//!
//! Then the entries go into a ZIP beside a valid `package.json` (files, folders and
//! symbolic links, as the input says) and the ZIP is installed for the CLI host into a
//! fresh data folder next to a sentinel folder. Whatever happens: nothing outside the
//! data folder changes, no symbolic link is created anywhere under it, and a refused
//! install leaves at most the app's empty `extensions/cli/extension-state/`. An install
//! that succeeds puts exactly the archive's listing in `extensions/cli/pkg-…/`, and a
//! link entry whose path no other entry writes is a regular file holding the link's text.
//!
//! Then the same entries go into a marketplace `.tgz`, each name under `package/` (an
//! empty name, or a name or target longer than a tar header holds, is left out), hard
//! links too, and that
//! is installed into another fresh data folder. Whatever happens: nothing outside that
//! data folder changes, a symbolic link is created only inside the installed package,
//! with a relative target that leads (read from its folder, and on disk when it leads
//! anywhere) inside the package; a link entry of the package with an absolute target
//! refuses the archive; a refused install leaves at most the empty
//! `extensions/cli/extension-state/`, and an install puts exactly the archive's listing
//! in the package folder.
//!
//! The input is text (invalid UTF-8 read as U+FFFD), one entry a line (at most 16):
//! `f<name>\t<content>` a file, `d<name>` a folder, `l<name>\t<target>` a symbolic
//! link, `h<name>\t<target>` a hard link (in the `.tgz` only; `<target>` is taken as
//! is, not put under `package/`); a line starting with anything else is a file named
//! by the whole line.
//!
//! The files are under `<temp dir>/spirit_install_names-<pid>/`, rewritten each run.

use std::collections::BTreeSet;
use std::fs;
use std::io::{Cursor, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use spirit_manifest::Host;
use spirit_manifest::archive::{Archive, Format, Limits, entry_name};
use spirit_manifest::install::{InstallOptions, directory_name, install};

/// One entry of the fuzzed ZIP.
#[derive(Debug)]
enum Entry {
    /// A file with this name and content.
    File(String, Vec<u8>),
    /// A folder entry.
    Folder(String),
    /// A symbolic-link entry to this target.
    Symlink(String, String),
    /// A hard-link entry (tar only) to this archive path.
    HardLink(String, String),
}

/// The entries the input's lines give (see the module documentation).
fn entries(data: &[u8]) -> Vec<Entry> {
    let text = String::from_utf8_lossy(data);
    text.split('\n')
        .take(16)
        .map(|line| {
            let (head, rest) = line.split_once('\t').unwrap_or((line, ""));
            match (head.chars().next(), head.get(1..)) {
                (Some('f'), Some(name)) => Entry::File(name.to_owned(), rest.as_bytes().to_vec()),
                (Some('d'), Some(name)) => Entry::Folder(name.to_owned()),
                (Some('l'), Some(name)) => Entry::Symlink(name.to_owned(), rest.to_owned()),
                (Some('h'), Some(name)) => Entry::HardLink(name.to_owned(), rest.to_owned()),
                _ => Entry::File(line.to_owned(), Vec::new()),
            }
        })
        .collect()
}

const PACKAGE_JSON: &str = r#"{"name":"@fuzz/names","version":"1.0.0","spiritExtension":{"displayName":"Names","supportedHosts":["cli"]}}"#;

const LIMITS: Limits = Limits {
    max_entries: 100,
    max_unpacked_bytes: 1 << 20,
};

/// The folder each run works in: one per process.
pub fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("spirit_install_names-{}", std::process::id()))
    })
}

/// Whether `name`, read with `\` as `/` (in a ZIP), is one the reader must refuse.
fn must_refuse(name: &str) -> bool {
    let slashed = name.replace('\\', "/");
    let mut chars = slashed.chars();
    let drive = matches!(
        (chars.next(), chars.next()),
        (Some(letter), Some(':')) if letter.is_ascii_alphabetic()
    );
    slashed.split('/').any(|segment| segment == "..")
        || slashed.starts_with('/')
        || drive
        || slashed.contains('\0')
}

/// The checks on one name.
fn check_name(name: &str) {
    match entry_name(name, Format::Zip) {
        Ok(Some(path)) => {
            assert!(!must_refuse(name), "{name:?} accepted as {path:?}");
            let text = path.as_str();
            assert!(!text.contains('\\'), "{name:?} -> {text:?}");
            assert!(
                text.split('/')
                    .all(|s| !s.is_empty() && s != "." && s != ".."),
                "{name:?} -> {text:?}"
            );
            let again = entry_name(text, Format::Zip).expect("a normalised name reads again");
            assert_eq!(again.as_ref(), Some(&path), "{name:?}");
            let base = Path::new("/base");
            let joined = base.join(text);
            assert!(joined.starts_with(base), "{name:?} -> {joined:?}");
            assert!(
                joined
                    .strip_prefix(base)
                    .expect("checked")
                    .components()
                    .all(|c| matches!(c, Component::Normal(_))),
                "{name:?} -> {joined:?}"
            );
        }
        Ok(None) => {
            // Names nothing: only `.`, `/` and `\` after a first character that is not `/`.
            assert!(
                name.replace('\\', "/")
                    .split('/')
                    .all(|s| s.is_empty() || s == "."),
                "{name:?}"
            );
        }
        Err(error) => {
            assert!(error.code().is_some(), "{name:?}: {error:?}");
            assert!(!error.to_string().is_empty());
        }
    }
    if name.contains('\\') {
        assert!(
            entry_name(name, Format::TarGz).is_err(),
            "{name:?} in a tarball"
        );
    }
}

/// Every path under `dir` (relative, folders ending in `/`), and whether any is a link.
fn walk(dir: &Path) -> (BTreeSet<String>, bool) {
    fn go(root: &Path, dir: &Path, out: &mut BTreeSet<String>, link: &mut bool) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let relative = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            let meta = fs::symlink_metadata(&path).expect("listed");
            if meta.file_type().is_symlink() {
                *link = true;
                out.insert(relative);
            } else if meta.is_dir() {
                out.insert(format!("{relative}/"));
                go(root, &path, out, link);
            } else {
                out.insert(relative);
            }
        }
    }
    let mut out = BTreeSet::new();
    let mut link = false;
    go(dir, dir, &mut out, &mut link);
    (out, link)
}

/// Runs every check on one input: the bytes libFuzzer hands the target.
pub fn check(data: &[u8]) {
    let entries = entries(data);
    for entry in &entries {
        let (Entry::File(name, _)
        | Entry::Folder(name)
        | Entry::Symlink(name, _)
        | Entry::HardLink(name, _)) = entry;
        check_name(name);
    }

    // The ZIP.
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("package.json", options)
        .expect("a plain name");
    zip.write_all(PACKAGE_JSON.as_bytes()).expect("in memory");
    let mut links = Vec::new();
    // Every file and link name the writer took, to tell a link whose path another entry
    // also writes (the app keeps the last copy).
    let mut added = Vec::new();
    for entry in &entries {
        // The writer refuses some names: those entries are left out.
        match entry {
            Entry::File(name, content) => {
                if zip.start_file(name.as_str(), options).is_ok() {
                    let _ = zip.write_all(content);
                    added.push(name.clone());
                }
            }
            Entry::Folder(name) => {
                let _ = zip.add_directory(name.as_str(), options);
            }
            Entry::Symlink(name, target) => {
                if zip
                    .add_symlink(name.as_str(), target.as_str(), options)
                    .is_ok()
                {
                    links.push((name.clone(), target.clone()));
                    added.push(name.clone());
                }
            }
            Entry::HardLink(..) => {}
        }
    }
    let Ok(bytes) = zip.finish().map(Cursor::into_inner) else {
        return;
    };

    let root = scratch();
    let _ = fs::remove_dir_all(root);
    let sentinel = root.join("outside");
    fs::create_dir_all(&sentinel).expect("the scratch folder can be made");
    fs::write(sentinel.join("keep.txt"), "keep").expect("writable");
    let archive = root.join("names.zip");
    fs::write(&archive, &bytes).expect("writable");
    let data = root.join("data");
    let outside_before = walk(&sentinel);

    let listing: Option<BTreeSet<String>> = Archive::open(&archive, LIMITS).ok().map(|opened| {
        opened
            .paths()
            .map(|(path, folder)| {
                if folder {
                    format!("{path}/")
                } else {
                    path.to_owned()
                }
            })
            .collect()
    });
    let options = InstallOptions {
        limits: LIMITS,
        ..InstallOptions::new(&data, Host::Cli)
    };
    let result = install(&archive, &options);

    assert_eq!(walk(&sentinel), outside_before, "outside the data folder");
    assert_eq!(
        fs::read(&archive).expect("still there"),
        bytes,
        "the archive changed"
    );
    let top: BTreeSet<String> = fs::read_dir(root)
        .expect("readable")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        top.iter()
            .all(|n| ["outside", "names.zip", "data"].contains(&n.as_str())),
        "{top:?}"
    );
    let (written, link) = walk(&data);
    assert!(!link, "a link under the data folder: {written:?}");
    match result {
        Ok(installed) => {
            let listing = listing.expect("an installed archive opens");
            let folder = directory_name("@fuzz/names");
            assert_eq!(installed.path, data.join("extensions/cli").join(&folder));
            let (package, _) = walk(&installed.path);
            assert_eq!(package, listing);
            let path_of = |name: &str| entry_name(name, Format::Zip).ok().flatten();
            for (name, target) in links {
                let Some(path) = path_of(&name) else {
                    continue;
                };
                let writers = added
                    .iter()
                    .filter(|other| path_of(other).as_ref() == Some(&path))
                    .count();
                if writers > 1 {
                    continue;
                }
                if let Ok(text) = fs::read(installed.path.join(path.as_str())) {
                    assert_eq!(text, target.as_bytes(), "{name:?}");
                }
            }
        }
        Err(_) => {
            let allowed: BTreeSet<String> = [
                "extensions/",
                "extensions/cli/",
                "extensions/cli/extension-state/",
            ]
            .into_iter()
            .map(str::to_owned)
            .collect();
            assert!(written.is_subset(&allowed), "{written:?}");
        }
    }

    check_tgz(&entries);
}

/// The states a refused install may leave in its data folder.
fn refused_leaves() -> BTreeSet<String> {
    [
        "extensions/",
        "extensions/cli/",
        "extensions/cli/extension-state/",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect()
}

/// A tar header with `name` written as is (GNU format), or `None` when it does not fit.
fn raw_header(name: &str, kind: tar::EntryType, size: u64, mode: u32) -> Option<tar::Header> {
    let mut header = tar::Header::new_gnu();
    let bytes = name.as_bytes();
    header
        .as_old_mut()
        .name
        .get_mut(..bytes.len())?
        .copy_from_slice(bytes);
    header.set_entry_type(kind);
    header.set_size(size);
    header.set_mode(mode);
    header.set_mtime(0);
    header.set_cksum();
    Some(header)
}

/// Where the relative link `target` at `link` (relative to a root) leads, read segment
/// by segment from the link's folder; `None` when it leaves the root.
fn lexical(link: &str, target: &str) -> Option<String> {
    let mut at: Vec<&str> = link.split('/').collect();
    at.pop();
    for segment in target.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                at.pop()?;
            }
            other => at.push(other),
        }
    }
    Some(at.join("/"))
}

/// The `.tgz` pass (see the module documentation).
fn check_tgz(entries: &[Entry]) {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let manifest = raw_header(
        "package/package.json",
        tar::EntryType::Regular,
        PACKAGE_JSON.len() as u64,
        0o644,
    )
    .expect("a short name");
    builder
        .append(&manifest, PACKAGE_JSON.as_bytes())
        .expect("in memory");
    let mut absolute_link = false;
    for entry in entries {
        let (Entry::File(name, _)
        | Entry::Folder(name)
        | Entry::Symlink(name, _)
        | Entry::HardLink(name, _)) = entry;
        if name.is_empty() {
            continue;
        }
        let appended = match entry {
            Entry::File(name, content) => raw_header(
                &format!("package/{name}"),
                tar::EntryType::Regular,
                content.len() as u64,
                0o644,
            )
            .map(|header| builder.append(&header, content.as_slice())),
            Entry::Folder(name) => raw_header(
                &format!("package/{name}"),
                tar::EntryType::Directory,
                0,
                0o755,
            )
            .map(|header| builder.append(&header, std::io::empty())),
            Entry::Symlink(name, target) | Entry::HardLink(name, target) => {
                let kind = if matches!(entry, Entry::Symlink(..)) {
                    tar::EntryType::Symlink
                } else {
                    tar::EntryType::Link
                };
                raw_header(&format!("package/{name}"), kind, 0, 0o777).and_then(|mut header| {
                    header.set_link_name_literal(target.as_bytes()).ok()?;
                    header.set_cksum();
                    if target.starts_with('/')
                        && entry_name(&format!("package/{name}"), Format::TarGz).is_ok()
                    {
                        absolute_link = true;
                    }
                    Some(builder.append(&header, std::io::empty()))
                })
            }
        };
        if let Some(appended) = appended {
            appended.expect("in memory");
        }
    }
    let Ok(bytes) = builder.into_inner().and_then(|gz| gz.finish()) else {
        return;
    };

    let root = scratch();
    let sentinel = root.join("outside");
    let archive = root.join("names.tgz");
    fs::write(&archive, &bytes).expect("writable");
    let data = root.join("data-tgz");
    let _ = fs::remove_dir_all(&data);
    let outside_before = walk(&sentinel);

    let opened = Archive::open(&archive, LIMITS);
    if absolute_link {
        assert!(
            opened.is_err(),
            "a link with an absolute target was accepted"
        );
    }
    let listing: Option<BTreeSet<String>> = opened.ok().map(|opened| {
        opened
            .paths()
            .map(|(path, folder)| {
                if folder {
                    format!("{path}/")
                } else {
                    path.to_owned()
                }
            })
            .collect()
    });
    let options = InstallOptions {
        limits: LIMITS,
        ..InstallOptions::new(&data, Host::Cli)
    };
    let result = install(&archive, &options);

    assert_eq!(
        walk(&sentinel),
        outside_before,
        "outside the data folder (tgz)"
    );
    match result {
        Ok(installed) => {
            let listing = listing.expect("an installed archive opens");
            let (package, _) = walk(&installed.path);
            assert_eq!(package, listing);
            let canonical_package = fs::canonicalize(&installed.path).expect("installed");
            for path in &package {
                let at = installed.path.join(path);
                let Ok(target) = fs::read_link(&at) else {
                    continue;
                };
                let text = target.to_string_lossy();
                assert!(!target.is_absolute(), "{path} -> {text}");
                assert!(
                    lexical(path, &text).is_some(),
                    "{path} -> {text} leaves the package"
                );
                if let Ok(real) = fs::canonicalize(&at) {
                    assert!(
                        real.starts_with(&canonical_package),
                        "{path} -> {text} leads to {real:?}"
                    );
                }
            }
            // No link anywhere else under the data folder.
            let (all, _) = walk(&data);
            let prefix = installed
                .path
                .strip_prefix(&data)
                .expect("under the data folder")
                .to_string_lossy()
                .into_owned();
            for path in all {
                if !path.starts_with(&prefix) {
                    let meta = fs::symlink_metadata(data.join(&path)).expect("listed");
                    assert!(!meta.file_type().is_symlink(), "{path}");
                }
            }
        }
        Err(_) => {
            let (written, _) = walk(&data);
            assert!(written.is_subset(&refused_leaves()), "{written:?}");
        }
    }
}
