//! The Spirit app's recorded marketplace reader, `../shared/conformance/spirit-app/marketplace/`
//! (see its README, "marketplace/" and "Marketplace reader"):
//!
//! - `expected-build`: `build` on a copy of `input/` writes the documents of
//!   `expected-build.json` (the members its `compare` names, exactly), the paths resolve
//!   to the written files, and the reader rules accept them as the app's reader did;
//! - one trial per case of `reader-cases.json`: the reader rules, called as the app's
//!   calls are (`listCatalog`, `getDetail`, `getReadme`, `prepareInstall`, `install`
//!   on host `cli` without review acknowledgement), accept or refuse as the app did.
//!   What cannot be reproduced offline is emulated from the vector folder: the
//!   registry is served from memory at `https://registry.test/registry/`, a tarball is
//!   read from `accepted/tarballs/` by its URL's last segment and checked as the app
//!   checks a download: its `integrity` (one of the SRI sha256/384/512 entries must
//!   match) and its `shasum` (SHA-1 hex, any case), each one that is present — neither
//!   wins over the other, both must match;
//! - `registry-strict`: a registry listing the package without `description` does not
//!   build.
//!
//! A clone without that folder skips these trials, and the skip shows in `cargo test`'s
//! output and summary (this file has its own harness, `libtest-mimic`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod registry_support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use serde_json::{Value, json};
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};
use spirit_registry::reader::{self, Location};
use spirit_registry::{FolderSource, build, check};

/// Where the app's reader was served the accepted registry from.
const BASE_URL: &str = "https://registry.test/registry/";
/// The extension of the accepted registry.
const ID: &str = "example.spirit-extension";
/// Its detail and README, relative to the registry folder.
const DETAIL_PATH: &str = "extensions/example.spirit-extension/detail.json";
const README_PATH: &str = "extensions/example.spirit-extension/README.md";

fn folder() -> PathBuf {
    curupira_test_support::conformance::folder("spirit-app/marketplace")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap()
}

fn main() {
    let args = Arguments::from_args();
    let dir = folder();
    let trials = if !dir.is_dir() {
        vec![Trial::ignorable_test("marketplace_vectors", move || {
            Ok(Completion::ignored_with(format!(
                "skipped: {} is missing, so the app's marketplace reader vectors were not checked",
                dir.display()
            )))
        })]
    } else {
        let mut trials = vec![
            trial("expected_build", {
                let dir = dir.clone();
                move || expected_build(&dir)
            }),
            trial("registry_strict", {
                let dir = dir.clone();
                move || registry_strict(&dir)
            }),
            trial("accepted_reader_output", {
                let dir = dir.clone();
                move || accepted_reader_output(&dir)
            }),
        ];
        let cases = read_json(&dir.join("reader-cases.json"));
        for case in cases["cases"].as_array().unwrap().clone() {
            let name = format!("reader_case::{}", case["case"].as_str().unwrap());
            let dir = dir.clone();
            trials.push(trial(&name, move || reader_case(&dir, &case)));
        }
        trials
    };
    libtest_mimic::run(&args, trials).exit();
}

/// A trial whose body panics on failure.
fn trial(name: &str, body: impl FnOnce() + Send + std::panic::UnwindSafe + 'static) -> Trial {
    Trial::test(name, move || {
        std::panic::catch_unwind(body).map_err(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            Failed::from(message)
        })
    })
}

// --- expected-build.json ---------------------------------------------------------------

fn expected_build(dir: &Path) {
    let expected = read_json(&dir.join("expected-build.json"));
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    registry_support::copy_dir(&dir.join("input/registry"), &root.join("registry"));
    registry_support::copy_dir(&dir.join("input/npm"), &root.join("npm"));
    let npm = FolderSource::new(root.join("npm"));
    let built = build(root, &npm).unwrap();
    assert_eq!(
        built.report.errors(),
        0,
        "{}",
        built.report.render_human(false)
    );

    let registry = root.join("registry");
    let catalog = read_json(&registry.join("catalog.json"));
    let compare = &expected["compare"];
    let members = |key: &str| -> Vec<String> {
        compare[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_owned())
            .collect()
    };
    let same = |what: &str, actual: &Value, wanted: &Value, keys: &[String]| {
        for key in keys {
            assert_eq!(
                actual.get(key),
                wanted.get(key),
                "{what}: `{key}` differs from expected-build.json"
            );
        }
    };
    assert_eq!(catalog["schemaVersion"], 1);
    let items = catalog["items"].as_array().unwrap();
    let wanted_items = expected["catalog"]["items"].as_array().unwrap();
    assert_eq!(items.len(), wanted_items.len(), "the catalog's items");
    for (index, (item, wanted)) in items.iter().zip(wanted_items).enumerate() {
        same(
            &format!("catalog.items[{index}]"),
            item,
            wanted,
            &members("item"),
        );
        // detailPath resolves to the written detail.json.
        let Location::Registry(path) =
            reader::resolve(item["detailPath"].as_str().unwrap(), None).unwrap()
        else {
            panic!("detailPath is not a registry path: {item}");
        };
        let id = item["extensionId"].as_str().unwrap();
        assert_eq!(path, format!("extensions/{id}/detail.json"));
    }

    let reading = reader::read_catalog(&catalog);
    assert!(reading.accepted(), "{:#?}", reading.problems);

    for (id, wanted) in expected["details"].as_object().unwrap() {
        let detail = read_json(&registry.join("extensions").join(id).join("detail.json"));
        same(&format!("{id} detail"), &detail, wanted, &members("detail"));
        let versions = detail["versions"].as_array().unwrap();
        let wanted_versions = wanted["versions"].as_array().unwrap();
        assert_eq!(versions.len(), wanted_versions.len(), "{id}: versions");
        for (index, (version, wanted)) in versions.iter().zip(wanted_versions).enumerate() {
            same(
                &format!("{id} versions[{index}]"),
                version,
                wanted,
                &members("version"),
            );
        }
        // readmePath resolves to the entry's README.md.
        let Location::Registry(readme) =
            reader::resolve(detail["readmePath"].as_str().unwrap(), None).unwrap()
        else {
            panic!("readmePath is not a registry path");
        };
        assert_eq!(
            fs::read(registry.join(&readme)).unwrap(),
            fs::read(dir.join("input/registry").join(&readme)).unwrap()
        );

        // The reader rules accept it, and prepare the install the app prepared.
        let reading = reader::read_detail(&detail, Some(id));
        assert!(reading.accepted(), "{id}: {:#?}", reading.problems);
        assert_eq!(reader::installability(&reading), [], "{id}");
        let real = &expected["real_reader"][id.as_str()];
        for call in ["listCatalog", "getDetail", "getReadme", "prepareInstall"] {
            assert_eq!(real[call]["ok"], true, "{id} {call}");
        }
        let index = reader::prepare_install(&reading, None).unwrap();
        let prepared = &real["prepareInstall"]["value"];
        let version = &versions[index];
        for key in ["version", "tarballUrl", "integrity", "shasum", "channel"] {
            assert_eq!(version[key], prepared[key], "{id}: prepared `{key}`");
        }
        assert_eq!(
            reader::install_problems(&reading, index, Some("cli")),
            [],
            "{id}: supportsCurrentHost"
        );
    }

    // And the built registry checks clean, with and without metadata.
    for metadata in [None, Some(&npm as &dyn spirit_registry::MetadataSource)] {
        let report = check(root, metadata).unwrap();
        assert_eq!(report.errors(), 0, "{}", report.render_human(false));
    }
}

// --- registry-strict.json --------------------------------------------------------------

fn registry_strict(dir: &Path) {
    let cases = read_json(&dir.join("registry-strict.json"));
    for case in cases.as_array().unwrap() {
        let package = read_json(
            &dir.join(case["package"].as_str().unwrap())
                .join("package.json"),
        );
        let name = package["name"].as_str().unwrap().to_owned();
        let version = package["version"].as_str().unwrap().to_owned();
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let folder = root.join("registry/extensions/example.regstrict");
        fs::create_dir_all(&folder).unwrap();
        fs::create_dir_all(root.join("npm")).unwrap();
        let entry = json!({
            "schemaVersion": 1, "extensionId": "example.regstrict", "packageName": name,
            "status": "listed", "featured": false, "defaultVersion": version,
            "defaultReviewStatus": "unverified",
            "versions": [{"version": version, "channel": "stable", "reviewStatus": "unverified"}]
        });
        fs::write(folder.join("entry.json"), entry.to_string()).unwrap();
        fs::write(folder.join("README.md"), format!("# {name}\n")).unwrap();
        let mut published = package.clone();
        published["dist"] = json!({
            "tarball": format!("https://registry.npmjs.org/{name}/-/x-{version}.tgz"),
            "shasum": "64ad799fe1f69812c607571c5f1c9d6e26ac06f9"
        });
        let document = json!({"name": name, "versions": {version.as_str(): published}});
        fs::write(
            root.join("npm")
                .join(spirit_registry::package_file_name(&name)),
            document.to_string(),
        )
        .unwrap();
        let built = build(root, &FolderSource::new(root.join("npm"))).unwrap();
        let file = format!("npm:{name}@{version}");
        let at_description: Vec<_> = built
            .report
            .diagnostics()
            .iter()
            .filter(|d| d.is_error() && d.file == file && d.path.as_str() == "/description")
            .collect();
        assert_eq!(
            at_description.len(),
            1,
            "{}: one error at /description\n{}",
            case["case"],
            built.report.render_human(false)
        );
        assert!(
            built.written.is_empty(),
            "{}: nothing written",
            case["case"]
        );
    }
}

// --- accepted/reader-output.json ------------------------------------------------------

/// The accepted registry as it is: every call the app made succeeded, the install with
/// the tarball's sha512 checked against its `integrity`.
fn accepted_reader_output(dir: &Path) {
    let real = read_json(&dir.join("accepted/reader-output.json"));
    let accepted = dir.join("accepted/registry");
    let served = Served {
        catalog: read_json(&accepted.join("catalog.json")),
        detail: read_json(&accepted.join(DETAIL_PATH)),
        tarballs: dir.join("accepted/tarballs"),
    };
    let ours = calls(&served, true);
    for call in [
        "listCatalog",
        "getDetail",
        "getReadme",
        "prepareInstall",
        "install",
    ] {
        assert_eq!(real[call]["ok"], true, "{call}");
        assert_eq!(ours.get(call), Some(&Ok(())), "{call}");
    }
    // A tarball with other bytes fails the integrity check.
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("spirit-extension-0.1.0.tgz"),
        b"other bytes",
    )
    .unwrap();
    let tampered = Served {
        catalog: served.catalog.clone(),
        detail: served.detail.clone(),
        tarballs: tmp.path().to_owned(),
    };
    assert!(calls(&tampered, true)["install"].is_err());

    // `shasum` is checked against the bytes too, whether or not `integrity` is there.
    let tarball = fs::read(served.tarballs.join("spirit-extension-0.1.0.tgz")).unwrap();
    let sha1_hex = |bytes: &[u8]| -> String {
        Sha1::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let with_version = |tarballs: &Path, integrity: bool, shasum: &str| {
        let mut detail = served.detail.clone();
        let version = detail["versions"][0].as_object_mut().unwrap();
        if !integrity {
            version.remove("integrity");
        }
        version.insert("shasum".to_owned(), json!(shasum));
        let served = Served {
            catalog: served.catalog.clone(),
            detail,
            tarballs: tarballs.to_owned(),
        };
        calls(&served, true).remove("install").unwrap()
    };
    let good = sha1_hex(&tarball);
    let other = sha1_hex(b"other bytes");
    // The right digest passes, in either case, alone or beside `integrity`.
    assert_eq!(with_version(&served.tarballs, false, &good), Ok(()));
    assert_eq!(
        with_version(&served.tarballs, false, &good.to_ascii_uppercase()),
        Ok(())
    );
    assert_eq!(with_version(&served.tarballs, true, &good), Ok(()));
    // A tampered tarball fails on `shasum` when it is the only digest.
    let refused = with_version(tmp.path(), false, &good).unwrap_err();
    assert!(refused.starts_with("shasum "), "{refused}");
    // A matching `integrity` does not excuse a `shasum` that does not match.
    let refused = with_version(&served.tarballs, true, &other).unwrap_err();
    assert!(refused.starts_with("shasum "), "{refused}");
}

// --- reader-cases.json -----------------------------------------------------------------

/// The accepted registry with the case's changes.
struct Served {
    catalog: Value,
    detail: Value,
    tarballs: PathBuf,
}

fn reader_case(dir: &Path, case: &Value) {
    let accepted = dir.join("accepted/registry");
    let mut served = Served {
        catalog: read_json(&accepted.join("catalog.json")),
        detail: read_json(&accepted.join(DETAIL_PATH)),
        tarballs: dir.join("accepted/tarballs"),
    };
    if let Some(documents) = case.get("documents") {
        if let Some(catalog) = documents.get("catalog") {
            served.catalog = catalog.clone();
        }
        if let Some(detail) = documents.get("detail") {
            served.detail = detail.clone();
        }
    }
    for op in case
        .get("ops")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let document = match op["doc"].as_str().unwrap() {
            "catalog" => &mut served.catalog,
            "detail" => &mut served.detail,
            other => panic!("unknown document {other}"),
        };
        apply(document, op);
    }
    let ours = calls(&served, case["install"] == true);
    let mut mismatches = Vec::new();
    for (call, real) in case["real"].as_object().unwrap() {
        let Some(result) = ours.get(call.as_str()) else {
            panic!("no emulation of `{call}`");
        };
        let accepted = real["ok"] == true;
        if accepted != result.is_ok() {
            mismatches.push(format!(
                "{call}: the app {} ({}), the rules {}",
                if accepted { "accepted" } else { "refused" },
                real.get("error").and_then(Value::as_str).unwrap_or(""),
                match result {
                    Ok(()) => "accept".to_owned(),
                    Err(why) => format!("refuse: {why}"),
                }
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{}: {}",
        case["case"],
        mismatches.join("; ")
    );
}

/// Sets or deletes at `op.path` (keys and indexes).
fn apply(document: &mut Value, op: &Value) {
    let path = op["path"].as_array().unwrap();
    let (last, parents) = path.split_last().unwrap();
    let mut at = document;
    for step in parents {
        at = match step {
            Value::String(key) => at.get_mut(key.as_str()).unwrap(),
            Value::Number(index) => at.get_mut(index.as_u64().unwrap() as usize).unwrap(),
            other => panic!("bad path step {other}"),
        };
    }
    match (op["op"].as_str().unwrap(), last) {
        ("set", Value::String(key)) => {
            at.as_object_mut()
                .unwrap()
                .insert(key.clone(), op["value"].clone());
        }
        ("set", Value::Number(index)) => {
            at[index.as_u64().unwrap() as usize] = op["value"].clone();
        }
        ("delete", Value::String(key)) => {
            at.as_object_mut().unwrap().remove(key.as_str());
        }
        ("delete", Value::Number(index)) => {
            at.as_array_mut()
                .unwrap()
                .remove(index.as_u64().unwrap() as usize);
        }
        other => panic!("bad op {other:?}"),
    }
}

/// Each reader call on `served`, as the rules answer it.
fn calls(served: &Served, install: bool) -> BTreeMap<&'static str, Result<(), String>> {
    let mut out = BTreeMap::new();
    let catalog = reader::read_catalog(&served.catalog);
    let listed = match catalog.problems.first() {
        None => Ok(()),
        Some(problem) => Err(format!("{} at {}", problem.code, problem.at.as_str())),
    };
    out.insert("listCatalog", listed.clone());

    let detail = listed.and_then(|()| {
        let item = catalog
            .item(ID)
            .ok_or_else(|| format!("{ID} is not in the catalog"))?;
        match reader::resolve(&item.detail_path, Some(BASE_URL))? {
            Location::Registry(path) if path == DETAIL_PATH => {}
            other => return Err(format!("{other:?}: 404")),
        }
        let reading = reader::read_detail(&served.detail, Some(&item.extension_id));
        match reading.problems.first() {
            None => Ok(reading),
            Some(problem) => Err(format!("{} at {}", problem.code, problem.at.as_str())),
        }
    });
    out.insert(
        "getDetail",
        detail.as_ref().map(|_| ()).map_err(Clone::clone),
    );

    let readme = detail.as_ref().map_err(Clone::clone).and_then(|reading| {
        let path = reading.readme_path.as_deref().unwrap_or("");
        match reader::resolve(path, Some(BASE_URL))? {
            Location::Registry(path) if path == README_PATH => Ok(()),
            other => Err(format!("{other:?}: 404")),
        }
    });
    out.insert("getReadme", readme);

    let prepared = detail.as_ref().map_err(Clone::clone).and_then(|reading| {
        reader::prepare_install(reading, None)
            .map(|index| (reading, index))
            .map_err(|problem| format!("{}: {}", problem.code, problem.message))
    });
    out.insert(
        "prepareInstall",
        prepared.as_ref().map(|_| ()).map_err(Clone::clone),
    );

    if install {
        let installed = prepared.and_then(|(reading, index)| {
            let problems = reader::install_problems(reading, index, Some("cli"));
            if let Some(problem) = problems.first() {
                return Err(format!("{}: {}", problem.code, problem.message));
            }
            let version = &reading.versions[index];
            // No review acknowledgement is given.
            if version.review_status.as_deref() != Some("verified") {
                return Err("not verified and not acknowledged".to_owned());
            }
            let url = version.tarball_url.as_deref().unwrap_or("");
            let name = url.rsplit('/').next().unwrap_or("");
            let bytes = fs::read(served.tarballs.join(name))
                .map_err(|e| format!("download of {url}: {e}"))?;
            if let Some(integrity) = &version.integrity
                && !integrity_matches(integrity, &bytes)
            {
                return Err(format!("integrity {integrity} does not match"));
            }
            if let Some(shasum) = &version.shasum
                && !shasum_matches(shasum, &bytes)
            {
                return Err(format!("shasum {shasum} does not match"));
            }
            Ok(())
        });
        out.insert("install", installed);
    }
    out
}

/// Whether one SRI entry of `integrity` matches `bytes`, as the app checks it.
fn integrity_matches(integrity: &str, bytes: &[u8]) -> bool {
    integrity.split_whitespace().any(|entry| {
        let Some((algorithm, digest)) = entry.split_once('-') else {
            return false;
        };
        let actual = match algorithm.to_ascii_lowercase().as_str() {
            "sha256" => Sha256::digest(bytes).to_vec(),
            "sha384" => Sha384::digest(bytes).to_vec(),
            "sha512" => Sha512::digest(bytes).to_vec(),
            _ => return false,
        };
        base64(&actual) == digest
    })
}

/// Whether `shasum` is the SHA-1 of `bytes` in hexadecimal (any case), as the app checks it.
fn shasum_matches(shasum: &str, bytes: &[u8]) -> bool {
    let actual: String = Sha1::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    actual.eq_ignore_ascii_case(shasum)
}

/// Standard padded base64.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
