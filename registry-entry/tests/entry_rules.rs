//! One case per rule of SPEC section 4's `entry.json` table, in the manner of
//! addons-linter's `validManifestJSON(overrides)`: start from the seed's example entry,
//! change one thing, and assert exactly which diagnostics come out — severity, code and
//! pointer, in file order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use spirit_registry::{
    Channel, CheckedEntry, ReviewStatus, Status, check_entry_bytes, check_entry_str, codes,
};

/// The example entry of the Spirit seed (`/work/shared/seeds/004_*.txt`, "Publish").
fn seed() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/entries/seed-example.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The seed's text as written (2-space indentation, the seed's member order), for
/// the cases that look at lines and columns.
fn seed_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/entries/seed-example.json");
    std::fs::read_to_string(path).unwrap()
}

/// Sets (or with `None` removes) the member at `pointer`, creating nothing.
fn edit(mut value: Value, pointer: &str, new: Option<Value>) -> Value {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    let target = value
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no {parent}"));
    match (target, new) {
        (Value::Object(map), Some(new)) => {
            map.insert(last, new);
        }
        (Value::Object(map), None) => {
            map.remove(&last).unwrap_or_else(|| panic!("no {pointer}"));
        }
        (Value::Array(items), Some(new)) => {
            let index: usize = last.parse().unwrap();
            if index == items.len() {
                items.push(new);
            } else {
                items[index] = new;
            }
        }
        (Value::Array(items), None) => {
            items.remove(last.parse::<usize>().unwrap());
        }
        _ => panic!("{parent} is not a container"),
    }
    value
}

fn set(value: Value, pointer: &str, new: Value) -> Value {
    edit(value, pointer, Some(new))
}

fn remove(value: Value, pointer: &str) -> Value {
    edit(value, pointer, None)
}

/// A second listed version, as the seed's first with another version string.
fn with_version(value: Value, version: &str) -> Value {
    let mut second = value["versions"][0].clone();
    second["version"] = json!(version);
    set(value, "/versions/1", second)
}

/// (severity, code, pointer) of one diagnostic.
type Found = (String, String, String);

/// Cases of one test: an entry and exactly what it gives.
type Cases = Vec<(Value, Vec<Found>)>;

/// Checks `text`, asserting what holds for every entry: each diagnostic is located,
/// and the entry comes out exactly when there is no error.
fn check_text(text: &str) -> CheckedEntry {
    let checked = check_entry_str(text, "entry.json");
    assert!(
        checked.diagnostics().iter().all(|d| d.position.is_some()),
        "{}",
        checked.report.render_human(false)
    );
    assert_eq!(checked.entry.is_some(), checked.report.errors() == 0);
    checked
}

fn check(value: &Value) -> CheckedEntry {
    check_text(&serde_json::to_string_pretty(value).unwrap())
}

fn described(checked: &CheckedEntry) -> Vec<Found> {
    checked
        .diagnostics()
        .iter()
        .map(|d| {
            (
                d.severity.to_string(),
                d.code.to_string(),
                d.path.to_string(),
            )
        })
        .collect()
}

fn found(value: &Value) -> Vec<Found> {
    described(&check(value))
}

/// The message of the only diagnostic `value` gives.
fn message(value: &Value) -> String {
    let checked = check(value);
    assert_eq!(checked.diagnostics().len(), 1, "{:?}", described(&checked));
    checked.diagnostics()[0].message.clone()
}

fn error(code: &str, path: &str) -> Found {
    ("error".to_owned(), code.to_owned(), path.to_owned())
}

fn warning(code: &str, path: &str) -> Found {
    ("warning".to_owned(), code.to_owned(), path.to_owned())
}

fn assert_cases(cases: Cases) {
    for (value, expected) in cases {
        assert_eq!(found(&value), expected, "{value:#}");
    }
}

#[test]
fn the_seed_example_passes() {
    let checked = check(&seed());
    assert_eq!(described(&checked), []);
    let entry = checked.entry.unwrap();
    assert_eq!(entry.extension_id, "example.spirit-extension");
    assert_eq!(entry.package_name, "@example/spirit-extension");
    assert_eq!(entry.status, Status::Listed);
    assert!(!entry.featured);
    assert_eq!(entry.default_version, "0.1.0");
    assert_eq!(entry.default_review_status, ReviewStatus::Unverified);
    assert_eq!(entry.versions.len(), 1);
    assert_eq!(entry.versions[0].channel, Channel::Stable);
    let changelog = entry.versions[0].changelog.as_ref().unwrap();
    assert_eq!(changelog.summary, "Initial public release.");
    // Nothing to quote: a clean entry keeps no text.
    assert_eq!(checked.report.source("entry.json"), None);
    assert_eq!(checked.report.files(), ["entry.json"]);
}

#[test]
fn every_required_member_is_reported_missing_where_it_would_be() {
    let mut cases: Cases = Vec::new();
    for key in [
        "schemaVersion",
        "extensionId",
        "packageName",
        "status",
        "featured",
        "defaultVersion",
        "defaultReviewStatus",
        "versions",
    ] {
        let pointer = format!("/{key}");
        cases.push((
            remove(seed(), &pointer),
            vec![error(codes::MISSING_KEY, &pointer)],
        ));
    }
    for key in ["version", "channel", "reviewStatus"] {
        let pointer = format!("/versions/0/{key}");
        cases.push((
            remove(seed(), &pointer),
            vec![error(codes::MISSING_KEY, &pointer)],
        ));
    }
    assert_cases(cases);

    // Everything missing: one error per member, all located at the root object.
    let checked = check_text("{}");
    assert_eq!(checked.diagnostics().len(), 8);
    assert!(
        checked
            .diagnostics()
            .iter()
            .all(|d| d.code == codes::MISSING_KEY && (d.line(), d.column()) == (Some(1), Some(1)))
    );
}

#[test]
fn a_missing_member_names_its_likely_misspelling() {
    let mut value = remove(seed(), "/packageName");
    value["packagename"] = json!("@example/spirit-extension");
    assert_eq!(
        found(&value),
        [
            error(codes::MISSING_KEY, "/packageName"),
            warning(codes::UNKNOWN_KEY, "/packagename"),
        ]
    );
    let checked = check(&value);
    assert_eq!(
        checked.diagnostics()[0].message,
        "required member `packageName` is missing; `packagename` looks like a misspelling of it"
    );
    assert_eq!(
        checked.diagnostics()[1].message,
        "unknown member `packagename` in the document; did you mean `packageName`?"
    );
}

#[test]
fn schema_version_is_the_integer_1() {
    assert_cases(vec![
        (
            set(seed(), "/schemaVersion", json!(2)),
            vec![error(codes::UNSUPPORTED_SCHEMA_VERSION, "/schemaVersion")],
        ),
        (
            set(seed(), "/schemaVersion", json!(0)),
            vec![error(codes::UNSUPPORTED_SCHEMA_VERSION, "/schemaVersion")],
        ),
        (
            set(seed(), "/schemaVersion", json!(-1)),
            vec![error(codes::UNSUPPORTED_SCHEMA_VERSION, "/schemaVersion")],
        ),
        (
            set(seed(), "/schemaVersion", json!(1.5)),
            vec![error(codes::UNSUPPORTED_SCHEMA_VERSION, "/schemaVersion")],
        ),
        (
            set(seed(), "/schemaVersion", json!("1")),
            vec![error(codes::INVALID_TYPE, "/schemaVersion")],
        ),
        (
            set(seed(), "/schemaVersion", json!(null)),
            vec![error(codes::INVALID_TYPE, "/schemaVersion")],
        ),
    ]);
    // `1.0` is a float to serde_json: not the integer 1.
    let text = serde_json::to_string_pretty(&seed())
        .unwrap()
        .replace("\"schemaVersion\": 1", "\"schemaVersion\": 1.0");
    assert_eq!(
        described(&check_text(&text)),
        [error(codes::UNSUPPORTED_SCHEMA_VERSION, "/schemaVersion")]
    );
    assert_eq!(
        message(&set(seed(), "/schemaVersion", json!(2))),
        "`schemaVersion` is 2; the only schema version is 1"
    );
    assert_eq!(
        message(&set(seed(), "/schemaVersion", json!("1"))),
        "`schemaVersion` must be the integer 1, but it is the string `\"1\"`; write `1` without quotes"
    );
}

#[test]
fn extension_id_is_two_or_more_lowercase_segments() {
    let id = "/extensionId";
    let bad = |text: &str| {
        (
            set(seed(), id, json!(text)),
            vec![error(codes::INVALID_EXTENSION_ID, id)],
        )
    };
    assert_cases(vec![
        bad("spirit-extension"),
        bad("Example.spirit-extension"),
        bad("example.spirit-extension-"),
        bad("example.-spirit"),
        bad("example-.spirit"),
        bad("example..spirit"),
        bad(".example.spirit"),
        bad("example.spirit."),
        bad("example.spirit--extension"),
        bad("example.spirit_extension"),
        bad("example.spirit extension"),
        bad(""),
        // Two problems: an uppercase letter and a single segment.
        (
            set(seed(), id, json!("Spirit")),
            vec![
                error(codes::INVALID_EXTENSION_ID, id),
                error(codes::INVALID_EXTENSION_ID, id),
            ],
        ),
        (
            set(seed(), id, json!(["example", "spirit"])),
            vec![error(codes::INVALID_TYPE, id)],
        ),
        (set(seed(), id, json!("a.b.c-d.0")), vec![]),
    ]);
}

#[test]
fn extension_id_problems_point_at_the_offending_character() {
    // Line 3 of the seed is `  "extensionId": "…"`: the value's opening quote is at
    // column 18, its first character at 19. The offset of the column underlined:
    let column = |text: &str| {
        let checked =
            check_text(&seed_text().replace("\"example.spirit-extension\"", &format!("{text:?}")));
        let diagnostic = &checked.diagnostics()[0];
        assert_eq!(diagnostic.line(), Some(3));
        i64::from(diagnostic.column().unwrap()) - 19
    };
    assert_eq!(column("Example.spirit-extension"), 0);
    assert_eq!(column("example.spirit-extension-"), 24);
    assert_eq!(column("example..spirit"), 7);
    assert_eq!(column("example.spirit--extension"), 14);
    assert_eq!(column("example.spirit_extension"), 14);
    // No offending character: the whole value, from its opening quote.
    assert_eq!(column("spirit-extension"), -1);
}

#[test]
fn extension_id_messages() {
    assert_eq!(
        message(&set(seed(), "/extensionId", json!("spirit-extension"))),
        "`extensionId` `spirit-extension` has only one segment; an extension id is two or more `.`-separated segments, e.g. `yourteam.spirit-extension`"
    );
    assert_eq!(
        message(&set(
            seed(),
            "/extensionId",
            json!("Example.Spirit-Extension")
        )),
        "`extensionId` `Example.Spirit-Extension` has the uppercase letter `E` at character 1; extension ids are lowercase; did you mean `example.spirit-extension`?"
    );
    assert_eq!(
        message(&set(
            seed(),
            "/extensionId",
            json!("example.spirit-extension-")
        )),
        "`extensionId` `example.spirit-extension-` ends with `-`; a hyphen must stand between letters or digits"
    );
}

#[test]
fn package_name_is_a_publishable_npm_name() {
    let name = "/packageName";
    let bad = |value: Value, count: usize| {
        (
            set(seed(), name, value),
            vec![error(codes::INVALID_PACKAGE_NAME, name); count],
        )
    };
    assert_cases(vec![
        // npm errors.
        bad(json!(""), 1),
        bad(json!(".hidden"), 1),
        bad(json!("_private"), 1),
        bad(json!("a b"), 1),
        bad(json!("@example"), 1),
        bad(json!("node_modules"), 1),
        bad(json!(" lookup"), 2),
        // npm warnings: names that exist but can no longer be published.
        bad(json!("@Example/spirit-extension"), 1),
        bad(json!("http"), 1),
        bad(json!("lookup!"), 1),
        bad(json!("a".repeat(215)), 1),
        (
            set(seed(), name, json!(5)),
            vec![error(codes::INVALID_TYPE, name)],
        ),
        (set(seed(), name, json!("left-pad")), vec![]),
    ]);
    assert_eq!(
        message(&set(seed(), name, json!("@Example/spirit-extension"))),
        "`packageName` `@Example/spirit-extension` has the uppercase letter `E` at character 2; npm names are lowercase; did you mean `@example/spirit-extension`?"
    );
    // The uppercase letter is underlined, not the whole name: line 4 of the seed, after
    // `  "packageName": "@`.
    let checked = check_text(&seed_text().replace("@example/", "@Example/"));
    let diagnostic = &checked.diagnostics()[0];
    assert_eq!(
        (diagnostic.line(), diagnostic.column()),
        (Some(4), Some(20))
    );
    assert_eq!(diagnostic.span.as_ref().map(|s| s.len()), Some(1));
}

#[test]
fn every_closed_set_refuses_other_values_with_a_suggestion() {
    assert_cases(vec![
        (
            set(seed(), "/status", json!("listd")),
            vec![error(codes::UNKNOWN_VALUE, "/status")],
        ),
        (
            set(seed(), "/status", json!("public")),
            vec![error(codes::UNKNOWN_VALUE, "/status")],
        ),
        (
            set(seed(), "/status", json!(1)),
            vec![error(codes::INVALID_TYPE, "/status")],
        ),
        (
            set(seed(), "/defaultReviewStatus", json!("approved")),
            vec![error(codes::UNKNOWN_VALUE, "/defaultReviewStatus")],
        ),
        (
            set(seed(), "/versions/0/channel", json!("beta")),
            vec![error(codes::UNKNOWN_VALUE, "/versions/0/channel")],
        ),
        (
            set(seed(), "/versions/0/reviewStatus", json!("Verified")),
            vec![error(codes::UNKNOWN_VALUE, "/versions/0/reviewStatus")],
        ),
    ]);
    for status in Status::names() {
        assert_eq!(found(&set(seed(), "/status", json!(status))), []);
    }
    for status in ReviewStatus::names() {
        assert_eq!(
            found(&set(seed(), "/defaultReviewStatus", json!(status))),
            []
        );
        assert_eq!(
            found(&set(seed(), "/versions/0/reviewStatus", json!(status))),
            []
        );
    }
    for channel in Channel::names() {
        assert_eq!(
            found(&set(seed(), "/versions/0/channel", json!(channel))),
            []
        );
    }
    assert_eq!(
        message(&set(seed(), "/status", json!("listd"))),
        "`status` is `listd`, which is not one of `listed`, `hidden`, `deprecated` or `blocked`; did you mean `listed`?"
    );
    assert_eq!(
        message(&set(seed(), "/versions/0/channel", json!("beta"))),
        "`versions[0].channel` is `beta`; expected `stable`, `preview` or `experimental`"
    );
}

#[test]
fn featured_is_a_boolean() {
    assert_cases(vec![
        (
            set(seed(), "/featured", json!("true")),
            vec![error(codes::INVALID_TYPE, "/featured")],
        ),
        (
            set(seed(), "/featured", json!(1)),
            vec![error(codes::INVALID_TYPE, "/featured")],
        ),
        (
            set(seed(), "/featured", json!(null)),
            vec![error(codes::INVALID_TYPE, "/featured")],
        ),
        (set(seed(), "/featured", json!(true)), vec![]),
    ]);
    assert_eq!(
        message(&set(seed(), "/featured", json!("true"))),
        "`featured` must be `true` or `false`, but it is the string `\"true\"`; write `true` without quotes"
    );
    assert_eq!(
        message(&set(seed(), "/featured", json!("yes"))),
        "`featured` must be `true` or `false`, but it is a string"
    );
}

#[test]
fn default_version_is_semver_and_listed() {
    assert_cases(vec![
        (
            set(seed(), "/defaultVersion", json!("0.2.0")),
            vec![error(codes::DEFAULT_VERSION_NOT_LISTED, "/defaultVersion")],
        ),
        // Build metadata is part of the default's identity: it must be written as listed.
        (
            set(seed(), "/defaultVersion", json!("0.1.0+build")),
            vec![error(codes::DEFAULT_VERSION_NOT_LISTED, "/defaultVersion")],
        ),
        (
            set(seed(), "/defaultVersion", json!("0.1.0-rc.1")),
            vec![error(codes::DEFAULT_VERSION_NOT_LISTED, "/defaultVersion")],
        ),
        // Not SemVer: that alone (whether it is listed cannot be said).
        (
            set(seed(), "/defaultVersion", json!("v0.1.0")),
            vec![error(codes::INVALID_VERSION, "/defaultVersion")],
        ),
        (
            set(seed(), "/defaultVersion", json!("0.1")),
            vec![error(codes::INVALID_VERSION, "/defaultVersion")],
        ),
        (
            set(seed(), "/defaultVersion", json!(1)),
            vec![error(codes::INVALID_TYPE, "/defaultVersion")],
        ),
        // A listed version that cannot be read may be the default: no guess.
        (
            set(seed(), "/versions/0/version", json!("v0.1.0")),
            vec![error(codes::INVALID_VERSION, "/versions/0/version")],
        ),
        // With versions empty, only that is reported.
        (
            set(seed(), "/versions", json!([])),
            vec![error(codes::EMPTY_VALUE, "/versions")],
        ),
        (
            set(
                with_version(seed(), "0.2.0"),
                "/defaultVersion",
                json!("0.2.0"),
            ),
            vec![],
        ),
    ]);
    assert_eq!(
        message(&set(
            with_version(seed(), "0.1.1"),
            "/defaultVersion",
            json!("0.2.0")
        )),
        "`defaultVersion` `0.2.0` is not one of the listed versions (`0.1.0` and `0.1.1`); list it in `versions` or make one of those the default"
    );
    assert_eq!(
        message(&set(seed(), "/defaultVersion", json!("0.1.0+build"))),
        "`defaultVersion` `0.1.0+build` is not one of the listed versions (`0.1.0`): `0.1.0` differs from it only in build metadata; write the default exactly as listed"
    );
    assert_eq!(
        message(&set(seed(), "/defaultVersion", json!("v0.1.0"))),
        "`defaultVersion` `v0.1.0` is not a SemVer 2.0.0 version (remove the leading `v`); write `0.1.0`"
    );
}

#[test]
fn versions_is_a_non_empty_array_of_version_objects() {
    assert_cases(vec![
        (
            set(seed(), "/versions", json!([])),
            vec![error(codes::EMPTY_VALUE, "/versions")],
        ),
        (
            set(seed(), "/versions", json!({"0.1.0": {}})),
            vec![error(codes::INVALID_TYPE, "/versions")],
        ),
        (
            set(seed(), "/versions/0", json!("0.1.0")),
            vec![error(codes::INVALID_TYPE, "/versions/0")],
        ),
        (
            set(seed(), "/versions/0/version", json!("1.0")),
            vec![error(codes::INVALID_VERSION, "/versions/0/version")],
        ),
        (
            set(seed(), "/versions/0/version", json!(1)),
            vec![error(codes::INVALID_TYPE, "/versions/0/version")],
        ),
        (with_version(seed(), "1.0.0-beta.1+exp.sha.5114f85"), vec![]),
    ]);
    assert_eq!(
        message(&set(seed(), "/versions", json!([]))),
        "`versions` is empty; list at least one published version, e.g. `[{ \"version\": \"1.0.0\", \"channel\": \"stable\", \"reviewStatus\": \"unverified\" }]`"
    );
}

#[test]
fn a_version_is_listed_once_compared_as_semver() {
    assert_cases(vec![
        (
            with_version(seed(), "0.1.0"),
            vec![error(codes::DUPLICATE_VERSION, "/versions/1/version")],
        ),
        // Build metadata does not make another version (npm drops it when publishing).
        (
            with_version(seed(), "0.1.0+build.7"),
            vec![error(codes::DUPLICATE_VERSION, "/versions/1/version")],
        ),
        // A prerelease does.
        (with_version(seed(), "0.1.0-rc.1"), vec![]),
        // Three times: reported at each repetition.
        (
            with_version(with_version(seed(), "0.2.0"), "0.1.0").pipe(|v| {
                set(
                    v,
                    "/versions/2",
                    json!({"version": "0.1.0", "channel": "stable", "reviewStatus": "unverified"}),
                )
            }),
            vec![
                error(codes::DUPLICATE_VERSION, "/versions/1/version"),
                error(codes::DUPLICATE_VERSION, "/versions/2/version"),
            ],
        ),
    ]);
    assert_eq!(
        message(&with_version(seed(), "0.1.0")),
        "version `0.1.0` is listed twice (first at `versions[0]`); list each version once"
    );
    assert_eq!(
        message(&with_version(seed(), "0.1.0+build.7")),
        "version `0.1.0+build.7` is the same version as `0.1.0` at `versions[0]`: they differ only in build metadata, which SemVer ignores and npm drops when publishing; list each version once"
    );
}

/// `value.pipe(f)` = `f(value)`, to keep a chain of edits readable.
trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}

impl Pipe for Value {}

#[test]
fn a_changelog_has_both_a_summary_and_a_body() {
    let changelog = "/versions/0/changelog";
    assert_cases(vec![
        (
            remove(seed(), &format!("{changelog}/body")),
            vec![error(codes::MISSING_KEY, &format!("{changelog}/body"))],
        ),
        (
            remove(seed(), &format!("{changelog}/summary")),
            vec![error(codes::MISSING_KEY, &format!("{changelog}/summary"))],
        ),
        (
            set(seed(), changelog, json!({})),
            vec![
                error(codes::MISSING_KEY, &format!("{changelog}/summary")),
                error(codes::MISSING_KEY, &format!("{changelog}/body")),
            ],
        ),
        (
            set(seed(), &format!("{changelog}/summary"), json!("")),
            vec![error(codes::EMPTY_VALUE, &format!("{changelog}/summary"))],
        ),
        (
            set(seed(), &format!("{changelog}/body"), json!("  \n ")),
            vec![error(codes::EMPTY_VALUE, &format!("{changelog}/body"))],
        ),
        (
            set(seed(), &format!("{changelog}/summary"), json!(["a"])),
            vec![error(codes::INVALID_TYPE, &format!("{changelog}/summary"))],
        ),
        (
            set(seed(), changelog, json!("Initial public release.")),
            vec![error(codes::INVALID_TYPE, changelog)],
        ),
        (
            set(seed(), changelog, json!(null)),
            vec![error(codes::INVALID_TYPE, changelog)],
        ),
        // Optional.
        (remove(seed(), changelog), vec![]),
    ]);
    assert_eq!(
        message(&remove(seed(), &format!("{changelog}/body"))),
        "`versions[0].changelog` has no `body`; a changelog has both `summary` and `body`; add the details (Markdown)"
    );
}

#[test]
fn unknown_members_anywhere_are_warnings_with_a_suggestion() {
    assert_cases(vec![
        (
            set(seed(), "/description", json!("x")),
            vec![warning(codes::UNKNOWN_KEY, "/description")],
        ),
        (
            set(seed(), "/versions/0/chanel", json!("stable")),
            vec![warning(codes::UNKNOWN_KEY, "/versions/0/chanel")],
        ),
        (
            set(seed(), "/versions/0/changelog/title", json!("x")),
            vec![warning(codes::UNKNOWN_KEY, "/versions/0/changelog/title")],
        ),
    ]);
    let checked = check(&set(seed(), "/featurd", json!(true)));
    assert!(
        checked.entry.is_some(),
        "an unknown member is only a warning"
    );
    assert_eq!(
        checked.diagnostics()[0].message,
        "unknown member `featurd` in the document; did you mean `featured`?"
    );
    assert_eq!(
        message(&set(seed(), "/versions/0/changelog/title", json!("x"))),
        "unknown member `title` in `versions[0].changelog` is ignored; known members are `summary` and `body`"
    );
}

#[test]
fn the_document_is_an_object() {
    for text in ["[]", "\"entry\"", "1", "null"] {
        assert_eq!(
            described(&check_text(text)),
            [error(codes::INVALID_TYPE, "")],
            "{text}"
        );
    }
}

#[test]
fn several_problems_are_reported_together_in_file_order() {
    let text = r#"{
  "schemaVersion": "1",
  "extensionId": "Spirit",
  "packageName": "@example/Spirit Extension",
  "status": "Listed",
  "featured": "false",
  "defaultVersion": "0.3.0",
  "defaultReviewStatus": "pending",
  "versions": [
    {
      "version": "0.1.0",
      "channel": "stabel",
      "reviewStatus": "unverified",
      "changelog": { "summary": "" }
    },
    {
      "version": "0.1.0+rebuild",
      "channel": "stable",
      "reviewStatus": "verified",
      "note": "rebuilt"
    }
  ],
  "featured": false
}
"#;
    let checked = check_text(text);
    assert_eq!(
        described(&checked),
        [
            error(codes::INVALID_TYPE, "/schemaVersion"),
            error(codes::INVALID_EXTENSION_ID, "/extensionId"),
            error(codes::INVALID_EXTENSION_ID, "/extensionId"),
            error(codes::INVALID_PACKAGE_NAME, "/packageName"),
            error(codes::INVALID_PACKAGE_NAME, "/packageName"),
            error(codes::UNKNOWN_VALUE, "/status"),
            error(codes::DEFAULT_VERSION_NOT_LISTED, "/defaultVersion"),
            error(codes::UNKNOWN_VALUE, "/defaultReviewStatus"),
            error(codes::UNKNOWN_VALUE, "/versions/0/channel"),
            error(codes::MISSING_KEY, "/versions/0/changelog/body"),
            error(codes::EMPTY_VALUE, "/versions/0/changelog/summary"),
            error(codes::DUPLICATE_VERSION, "/versions/1/version"),
            warning(codes::UNKNOWN_KEY, "/versions/1/note"),
            error(codes::DUPLICATE_KEY, "/featured"),
        ]
    );
    // File order: lines never go back.
    let lines: Vec<u32> = checked
        .diagnostics()
        .iter()
        .map(|d| d.line().unwrap())
        .collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
    assert_eq!(checked.report.errors(), 13);
    assert_eq!(checked.report.warnings(), 1);
    assert!(checked.entry.is_none());
    let human = checked.report.render_human(false);
    assert!(
        human.ends_with("error: 13 errors and 1 warning in entry.json\n"),
        "{human}"
    );
}

#[test]
fn bytes_are_utf8_and_a_bom_is_ignored() {
    let text = serde_json::to_string_pretty(&seed()).unwrap();
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend_from_slice(text.as_bytes());
    let checked = check_entry_bytes(&bytes, "entry.json");
    assert!(
        checked.entry.is_some(),
        "{}",
        checked.report.render_human(false)
    );

    let checked = check_entry_bytes(b"{\n  \"extensionId\": \"a.\xff\"\n}", "entry.json");
    assert!(checked.entry.is_none());
    assert_eq!(checked.diagnostics().len(), 1);
    let error = &checked.diagnostics()[0];
    assert_eq!(error.code, codes::ENCODING);
    assert_eq!((error.line(), error.column()), (Some(2), Some(21)));
}
