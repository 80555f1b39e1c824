//! Any bytes, written to a file, opened as a Spirit package archive (`spirit-manifest`,
//! feature `archive`) with small limits (1000 entries, 8 MiB unpacked). It never panics.
//! A refusal is a problem of the archive (a `spirit/archive-…` code), never an I/O error.
//! An archive that opens has the format its first bytes announce, a root that is `""`
//! or ends in `/` (`package/` for a `.tgz`), a `package.json` file at that root, and a
//! listing in strictly increasing order of normalised relative paths whose every parent
//! is listed as a folder; `kind` agrees with the listing, and reading the first files
//! (at most 64 KiB each) and any folder does not panic. Checking the package in the open
//! archive gives well-formed diagnostics (known code and severity, a span inside the
//! kept text of its file with its line and column), a package exactly when there is no
//! error, both renderings, and the same outcome as `check_archive` on the file.
//!
//! The file is `<temp dir>/spirit_archive_listing-<pid>.bin`, rewritten each run.

use std::path::PathBuf;
use std::sync::OnceLock;

use curupira_diagnostics::{JsonPointer, LineIndex, Report};
use spirit_manifest::archive::{Archive, Format, Limits};
use spirit_manifest::{
    CheckError, FileKind, Options, PackageFiles, RelativePath, check_archive, check_package, codes,
};

const LIMITS: Limits = Limits {
    max_entries: 1000,
    max_unpacked_bytes: 8 << 20,
};

/// Files read in each archive, and the most bytes read from each.
const READ_FILES: usize = 16;
const READ_LIMIT: u64 = 64 * 1024;

/// The file each run writes its bytes to: one per process, rewritten each run and left
/// behind when the process ends.
pub fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("spirit_archive_listing-{}.bin", std::process::id()))
    })
}

/// Runs every check on one input: the bytes libFuzzer hands the target.
pub fn check(data: &[u8]) {
    let path = scratch();
    std::fs::write(path, data).expect("the scratch file can be written");

    let archive = match Archive::open(path, LIMITS) {
        Ok(archive) => archive,
        Err(error) => {
            assert!(
                error.code().is_some(),
                "an I/O error for a readable file: {error:?}"
            );
            assert!(!error.to_string().is_empty());
            return;
        }
    };

    let format = Format::of(data).expect("an archive that opens was sniffed");
    assert_eq!(archive.format(), format);
    assert_eq!(archive.limits(), LIMITS);
    let root = archive.root();
    assert!(root.is_empty() || root.ends_with('/'), "root {root:?}");
    if format == Format::TarGz {
        assert_eq!(root, "package/");
    }

    let listed: Vec<(&str, bool)> = archive.paths().collect();
    assert!(listed.contains(&("package.json", false)), "{listed:?}");
    for window in listed.windows(2) {
        assert!(window[0].0 < window[1].0, "{listed:?}");
    }
    for &(name, folder) in &listed {
        let relative = RelativePath::parse(name)
            .unwrap_or_else(|problem| panic!("listed {name:?}: {problem:?}"));
        assert_eq!(relative.as_str(), name);
        if let Some((parent, _)) = name.rsplit_once('/') {
            assert!(
                listed.contains(&(parent, true)),
                "{name:?} without its folder"
            );
        }
        let expected = if folder {
            FileKind::Folder
        } else {
            FileKind::File
        };
        assert_eq!(archive.kind(&relative), expected, "{name:?}");
    }
    for &(name, _) in listed.iter().filter(|(_, folder)| *folder).take(1) {
        let relative = RelativePath::parse(name).expect("checked above");
        assert!(
            archive.read(&relative, READ_LIMIT).is_err(),
            "{name:?} read as a file"
        );
    }
    for &(name, _) in listed
        .iter()
        .filter(|(_, folder)| !*folder)
        .take(READ_FILES)
    {
        let relative = RelativePath::parse(name).expect("checked above");
        if let Ok(bytes) = archive.read(&relative, READ_LIMIT) {
            assert!(bytes.len() as u64 <= READ_LIMIT);
        }
    }

    let options = Options::default();
    let in_place = check_package(&archive, &options);
    drop(archive);
    let from_file = check_archive(path, &options);
    match (in_place, from_file) {
        (Ok(in_place), Ok(from_file)) => {
            well_formed(&in_place.report);
            assert_eq!(in_place.package.is_some(), in_place.report.errors() == 0);
            assert_eq!(
                in_place.report.diagnostics(),
                from_file.report.diagnostics()
            );
            assert_eq!(in_place.package, from_file.package);
            assert_eq!(in_place.hooks, from_file.hooks);
        }
        // An entry that lists fine but does not unpack (say, a bad checksum in
        // `package.json`): the file check reports it as `spirit/archive-corrupt`.
        (Err(_), Ok(from_file)) => {
            well_formed(&from_file.report);
            let found: Vec<&str> = from_file
                .diagnostics()
                .iter()
                .map(|d| d.code.as_ref())
                .collect();
            assert_eq!(
                found,
                [codes::ARCHIVE_CORRUPT],
                "{}",
                from_file.report.render_human(false)
            );
        }
        // Anything else unreadable is an I/O error of the check, the same both ways.
        (Err(in_place), Err(CheckError::Read { path: file, source })) => {
            assert_eq!(&file, path);
            assert_eq!(in_place.kind(), source.kind());
            assert_eq!(in_place.to_string(), source.to_string());
        }
        (in_place, from_file) => panic!(
            "in place {:?}, from the file {:?}",
            in_place.map(|c| c.report.render_human(false)),
            from_file.map(|c| c.report.render_human(false))
        ),
    }
}

fn well_formed(report: &Report) {
    for diagnostic in report.diagnostics() {
        let code = codes::ALL
            .iter()
            .find(|code| code.code == diagnostic.code)
            .unwrap_or_else(|| panic!("unknown code {diagnostic:?}"));
        assert_eq!(code.severity, diagnostic.severity, "{diagnostic:?}");
        assert!(report.files().contains(&diagnostic.file), "{diagnostic:?}");
        assert!(JsonPointer::parse(diagnostic.path.as_str()).is_ok());
        assert!(
            !diagnostic.message.is_empty() && !diagnostic.message.contains('\n'),
            "{diagnostic:?}"
        );
        assert_eq!(diagnostic.position.is_some(), diagnostic.span.is_some());
        if let (Some(span), Some(position)) = (&diagnostic.span, diagnostic.position) {
            let text = report
                .source(&diagnostic.file)
                .unwrap_or_else(|| panic!("located without a text: {diagnostic:?}"));
            assert!(
                span.start <= span.end && span.end <= text.len(),
                "{span:?} outside {} bytes: {diagnostic:?}",
                text.len()
            );
            assert!(
                text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
                "{span:?} not on character boundaries: {diagnostic:?}"
            );
            assert_eq!(LineIndex::new(text).position(span.start), position);
        }
    }
    let rendered: serde_json::Value =
        serde_json::from_str(&report.render_json()).expect("JSON output");
    assert_eq!(rendered["errors"].as_u64(), Some(report.errors() as u64));
    assert!(!report.render_human(false).is_empty());
}
