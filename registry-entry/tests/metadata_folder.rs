//! `FolderSource`: saved npm package documents (`tests/npm/<url-encoded name>.json`)
//! read back exactly, the file-name encoding, and each way a saved document can be
//! wrong.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use spirit_registry::{
    FolderSource, MetadataError, MetadataSource, PackageDocument, package_file_name,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/npm")
}

/// The fixture file parsed directly, without the source.
fn saved(file: &str) -> PackageDocument {
    let text = fs::read_to_string(fixtures().join(file)).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_scoped_package_is_read_from_its_saved_document() {
    let source = FolderSource::new(fixtures());
    let document = source.fetch("@example/spirit-extension").unwrap();

    assert_eq!(document, saved("@example%2fspirit-extension.json"));
    assert_eq!(document.name, "@example/spirit-extension");
    assert_eq!(document.dist_tags["latest"], "0.1.0");
    assert_eq!(document.dist_tags["next"], "0.2.0-beta.1");
    assert_eq!(
        document.versions.keys().collect::<Vec<_>>(),
        ["0.1.0", "0.2.0-beta.1"]
    );
    assert_eq!(
        document.versions["0.2.0-beta.1"]["spiritExtension"]["displayName"],
        "Dictionary"
    );
    assert_eq!(document.time["0.1.0"], "2025-03-02T10:15:42.331Z");
    assert_eq!(document.time["0.2.0-beta.1"], "2025-04-18T08:01:09.372Z");
}

#[test]
fn an_unscoped_package_is_read_from_its_saved_document() {
    let source = FolderSource::new(fixtures());
    let document = source.fetch("spirit-weather").unwrap();

    assert_eq!(document, saved("spirit-weather.json"));
    assert_eq!(document.dist_tags.len(), 1);
    assert_eq!(document.dist_tags["latest"], "1.0.0");
    assert_eq!(
        document.versions["1.0.0"]["author"],
        "Ana Souza <ana@example.org>"
    );
    assert_eq!(document.time["1.0.0"], "2025-01-20T16:40:04.051Z");
}

#[test]
fn file_names_are_the_npm_url_encoding_of_the_name() {
    let cases = [
        ("lookup", "lookup.json"),
        ("@acme/lookup", "@acme%2flookup.json"),
        (
            "@example/spirit-extension",
            "@example%2fspirit-extension.json",
        ),
        ("a.b_c~d-e9", "a.b_c~d-e9.json"),
        // Legacy names may have capitals; kept as they are.
        ("JSONStream", "JSONStream.json"),
        // Never in a valid name, but encoded all the same, lowercase hex, byte by byte.
        ("a b", "a%20b.json"),
        ("ação", "a%c3%a7%c3%a3o.json"),
        ("../etc/passwd", "..%2fetc%2fpasswd.json"),
        ("a\\b:c", "a%5cb%3ac.json"),
        ("", ".json"),
    ];
    for (name, file) in cases {
        assert_eq!(package_file_name(name), file, "for {name:?}");
    }
}

#[test]
fn every_fixture_is_named_by_package_file_name() {
    for entry in fs::read_dir(fixtures()).unwrap() {
        let path = entry.unwrap().path();
        let document = saved(path.file_name().unwrap().to_str().unwrap());
        assert_eq!(
            package_file_name(&document.name),
            path.file_name().unwrap().to_str().unwrap()
        );
    }
}

#[test]
fn a_missing_document_names_the_package_and_the_file_looked_for() {
    let dir = fixtures();
    let source = FolderSource::new(&dir);
    let error = source.fetch("@acme/absent").unwrap_err();

    let expected = dir.join("@acme%2fabsent.json");
    assert!(
        matches!(&error, MetadataError::NotFound { package, place }
            if package == "@acme/absent" && *place == expected.display().to_string()),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "npm package `@acme/absent` was not found at `{}`",
            expected.display()
        )
    );
    assert_eq!(error.package(), Some("@acme/absent"));
}

#[test]
fn a_file_that_is_not_json_is_a_bad_body_with_serde_json_s_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    fs::write(&path, "{\n  \"name\": \"broken\",\n").unwrap();
    let error = FolderSource::new(dir.path()).fetch("broken").unwrap_err();

    let MetadataError::BadBody {
        package,
        place,
        reason,
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(package, "broken");
    assert_eq!(*place, path.display().to_string());
    assert_eq!(reason, "EOF while parsing a value at line 3 column 0");
    assert_eq!(
        error.to_string(),
        format!(
            "the document for npm package `broken` at `{}` is not usable: EOF while parsing a value at line 3 column 0",
            path.display()
        )
    );
    assert!(!error.to_string().contains('\n'));
}

#[test]
fn a_json_file_that_is_not_a_package_document_is_a_bad_body() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("shape.json"),
        r#"{"name": "shape", "versions": ["1.0.0"]}"#,
    )
    .unwrap();
    fs::write(dir.path().join("list.json"), " [\"list\"]").unwrap();
    fs::write(dir.path().join("text.json"), "\"text\"").unwrap();
    let source = FolderSource::new(dir.path());

    let error = source.fetch("shape").unwrap_err();
    assert!(
        matches!(&error, MetadataError::BadBody { reason, .. }
            if reason.starts_with("invalid type: sequence, expected a map at line 1")),
        "{error:?}"
    );
    let error = source.fetch("list").unwrap_err();
    assert!(
        matches!(&error, MetadataError::BadBody { reason, .. }
            if reason == "it is a JSON array; a package document is an object"),
        "{error:?}"
    );
    let error = source.fetch("text").unwrap_err();
    assert!(
        matches!(&error, MetadataError::BadBody { reason, .. }
            if reason == "invalid type: string \"text\", expected struct PackageDocument at line 1 column 6"),
        "{error:?}"
    );
}

#[test]
fn a_document_for_another_package_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("@acme%2flookup.json");
    fs::write(
        &path,
        r#"{"name": "@acme/lookup-old", "dist-tags": {}, "versions": {}, "time": {}}"#,
    )
    .unwrap();
    let error = FolderSource::new(dir.path())
        .fetch("@acme/lookup")
        .unwrap_err();

    assert!(matches!(error, MetadataError::BadBody { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "the document for npm package `@acme/lookup` at `{}` is not usable: it is the document of `@acme/lookup-old`, not `@acme/lookup`",
            path.display()
        )
    );
}

#[test]
fn a_document_without_a_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("nameless.json"), r#"{"versions": {}}"#).unwrap();
    let error = FolderSource::new(dir.path()).fetch("nameless").unwrap_err();

    assert!(
        matches!(&error, MetadataError::BadBody { reason, .. }
            if reason == "it has no `name`; expected `nameless`"),
        "{error:?}"
    );
}

#[test]
fn a_minimal_document_is_enough() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tiny.json"), r#"{"name": "tiny"}"#).unwrap();
    let document = FolderSource::new(dir.path()).fetch("tiny").unwrap();

    assert_eq!(
        document,
        PackageDocument {
            name: "tiny".to_owned(),
            ..PackageDocument::default()
        }
    );
}

#[test]
fn an_unreadable_document_is_an_io_error_naming_package_and_path() {
    let dir = tempfile::tempdir().unwrap();
    // A folder where the file should be: it opens (or not) but does not read.
    let path = dir.path().join("folder.json");
    fs::create_dir(&path).unwrap();
    let error = FolderSource::new(dir.path()).fetch("folder").unwrap_err();

    let MetadataError::Io {
        package,
        path: seen,
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(package, "folder");
    assert_eq!(*seen, path);
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "could not read `{}` for npm package `folder`: ",
            path.display()
        )),
        "{message}"
    );
}

#[test]
fn a_document_over_the_size_cap_is_refused_without_reading_it_all() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.json");
    // Sparse: 65 MiB of zero bytes, costing no disk.
    fs::File::create(&path)
        .unwrap()
        .set_len(65 * 1024 * 1024)
        .unwrap();
    let error = FolderSource::new(dir.path()).fetch("huge").unwrap_err();

    assert!(
        matches!(&error, MetadataError::BadBody { reason, .. }
            if reason == "it is larger than 64 MiB, the most read"),
        "{error:?}"
    );
}

#[test]
fn fetch_all_answers_in_the_order_asked() {
    let source = FolderSource::new(fixtures());
    let asked = [
        "spirit-weather",
        "@acme/absent",
        "@example/spirit-extension",
        "spirit-weather",
    ]
    .map(String::from);
    let results = source.fetch_all(&asked);

    assert_eq!(results.len(), 4);
    assert_eq!(results[0].as_ref().unwrap().name, "spirit-weather");
    assert!(
        matches!(&results[1], Err(MetadataError::NotFound { package, .. }) if package == "@acme/absent")
    );
    assert_eq!(
        results[2].as_ref().unwrap().name,
        "@example/spirit-extension"
    );
    assert_eq!(results[3].as_ref().unwrap().name, "spirit-weather");
    assert!(source.fetch_all(&[]).is_empty());
}

#[test]
fn the_source_describes_itself_by_its_folder() {
    let source = FolderSource::new(fixtures());
    assert_eq!(source.describe(), fixtures().display().to_string());
    assert_eq!(source.dir(), fixtures());
    assert_eq!(
        source.path_of("@acme/lookup"),
        fixtures().join("@acme%2flookup.json")
    );
}

#[test]
fn a_source_can_be_used_as_a_trait_object_across_threads() {
    let source: Box<dyn MetadataSource> = Box::new(FolderSource::new(fixtures()));
    std::thread::scope(|scope| {
        let a = scope.spawn(|| source.fetch("spirit-weather"));
        let b = scope.spawn(|| source.fetch("@example/spirit-extension"));
        assert!(a.join().unwrap().is_ok());
        assert!(b.join().unwrap().is_ok());
    });
}

/// A copy of the scoped fixture saved as `file` in a new folder.
fn saved_as(file: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(
        fixtures().join("@example%2fspirit-extension.json"),
        dir.path().join(file),
    )
    .unwrap();
    dir
}

#[test]
fn a_document_is_found_under_every_spelling_of_its_encoded_name() {
    for file in [
        "@example%2fspirit-extension.json",
        "@example%2Fspirit-extension.json",
        "%40example%2Fspirit-extension.json",
        "%40example%2fspirit-extension.json",
        "%40example%2Fspirit%2Dextension.json",
    ] {
        let dir = saved_as(file);
        let document = FolderSource::new(dir.path())
            .fetch("@example/spirit-extension")
            .unwrap_or_else(|error| panic!("{file}: {error}"));
        assert_eq!(document.name, "@example/spirit-extension", "{file}");
    }
    // A name that decodes to another package is not it.
    let dir = saved_as("@example%2fspirit-extension2.json");
    let error = FolderSource::new(dir.path())
        .fetch("@example/spirit-extension")
        .unwrap_err();
    assert!(matches!(error, MetadataError::NotFound { .. }), "{error:?}");
}

#[test]
fn two_files_spelling_one_name_are_an_error_naming_both() {
    let dir = saved_as("@example%2fspirit-extension.json");
    fs::copy(
        dir.path().join("@example%2fspirit-extension.json"),
        dir.path().join("%40example%2Fspirit-extension.json"),
    )
    .unwrap();
    let error = FolderSource::new(dir.path())
        .fetch("@example/spirit-extension")
        .unwrap_err();
    let MetadataError::Ambiguous { first, second, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(
        first.ends_with("@example%2fspirit-extension.json"),
        "{error}"
    );
    assert!(
        second.ends_with("%40example%2Fspirit-extension.json"),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains("@example%2fspirit-extension.json")
            && message.contains("%40example%2Fspirit-extension.json"),
        "{message}"
    );
}
