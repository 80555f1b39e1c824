//! One case per rule of SPEC section 3, in the manner of addons-linter's
//! `validManifestJSON(overrides)`: start from the seed's full example, change one
//! thing, and assert exactly which diagnostics come out — code, pointer and severity.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use spirit_manifest::{Host, Options, check_str, codes};

fn seed() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/seed-example/package.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A small valid package with no capabilities, for rules the seed would drown.
fn minimal() -> Value {
    json!({
        "name": "hello",
        "version": "1.0.0",
        "description": "Says hello.",
        "spiritExtension": {
            "schemaVersion": 1,
            "displayName": "Hello",
            "supportedHosts": ["cli"],
            "requestedCapabilities": []
        }
    })
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

/// (severity, code, pointer) of one diagnostic.
type Found = (String, String, String);

/// Cases of one test: a package and exactly what it gives.
type Cases = Vec<(Value, Vec<Found>)>;

fn found_with(value: &Value, options: &Options) -> Vec<Found> {
    let text = serde_json::to_string_pretty(value).unwrap();
    let checked = check_str(&text, "package.json", options);
    let found: Vec<_> = checked
        .diagnostics()
        .iter()
        .map(|d| {
            (
                d.severity.to_string(),
                d.code.to_string(),
                d.path.to_string(),
            )
        })
        .collect();
    // Every diagnostic of a text source is located.
    assert!(
        checked.diagnostics().iter().all(|d| d.position.is_some()),
        "{found:?}"
    );
    assert_eq!(checked.package.is_some(), checked.report.errors() == 0);
    found
}

fn found(value: &Value) -> Vec<Found> {
    found_with(value, &Options::default())
}

fn error(code: &str, path: &str) -> Found {
    ("error".to_owned(), code.to_owned(), path.to_owned())
}

fn warning(code: &str, path: &str) -> Found {
    ("warning".to_owned(), code.to_owned(), path.to_owned())
}

#[test]
fn the_seed_example_and_the_minimal_package_are_clean() {
    assert_eq!(found(&seed()), []);
    assert_eq!(found(&minimal()), []);
    let checked = check_str(&seed().to_string(), "package.json", &Options::default());
    let package = checked.package.unwrap();
    assert_eq!(package.name, "@example/spirit-extension");
    assert_eq!(package.tools()[0].name, "lookup_item");
    assert_eq!(package.spirit_extension.settings_schema[0].options.len(), 2);
}

#[test]
fn package_json_members() {
    let cases: Cases = vec![
        (
            remove(seed(), "/name"),
            vec![error(codes::MISSING_KEY, "/name")],
        ),
        (
            set(seed(), "/name", json!("@Example/x")),
            vec![error(codes::INVALID_NAME, "/name")],
        ),
        (
            set(seed(), "/name", json!("a b")),
            vec![error(codes::INVALID_NAME, "/name")],
        ),
        (
            set(seed(), "/name", json!("@scope")),
            vec![error(codes::INVALID_NAME, "/name")],
        ),
        (
            set(seed(), "/name", json!("a".repeat(215))),
            vec![error(codes::INVALID_NAME, "/name")],
        ),
        (
            set(seed(), "/name", json!(7)),
            vec![error(codes::INVALID_TYPE, "/name")],
        ),
        (
            remove(seed(), "/version"),
            vec![error(codes::MISSING_KEY, "/version")],
        ),
        (
            set(seed(), "/version", json!("v0.1.0")),
            vec![warning(codes::INVALID_VERSION, "/version")],
        ),
        (
            set(seed(), "/version", json!("1.0")),
            vec![warning(codes::INVALID_VERSION, "/version")],
        ),
        (
            remove(seed(), "/spiritExtension"),
            vec![error(codes::MISSING_KEY, "/spiritExtension")],
        ),
        (
            set(seed(), "/spiritExtension", json!([])),
            vec![error(codes::INVALID_TYPE, "/spiritExtension")],
        ),
        (
            set(seed(), "/description", json!(1)),
            vec![error(codes::INVALID_TYPE, "/description")],
        ),
        (
            set(seed(), "/homepage", json!(false)),
            vec![error(codes::INVALID_TYPE, "/homepage")],
        ),
        (
            set(seed(), "/author", json!("Ann <ann@example.com>")),
            vec![],
        ),
        (
            set(seed(), "/author", json!(["Ann"])),
            vec![warning(codes::IGNORED_VALUE, "/author")],
        ),
        // The app reads an author object without a name as no author.
        (set(seed(), "/author", json!({"email": "a@b.c"})), vec![]),
        (
            set(seed(), "/author", json!({"name": 5})),
            vec![error(codes::INVALID_TYPE, "/author/name")],
        ),
        (
            set(seed(), "/author", json!(5)),
            vec![error(codes::INVALID_TYPE, "/author")],
        ),
        (set(seed(), "/repository", json!("github:acme/x")), vec![]),
        (
            set(
                seed(),
                "/repository",
                json!({"type": "git", "url": "https://x.invalid/r.git"}),
            ),
            vec![],
        ),
        (
            set(
                seed(),
                "/repository",
                json!({"url": "https://x.invalid/r.git"}),
            ),
            vec![warning(codes::IGNORED_VALUE, "/repository")],
        ),
        // `keywords` and `repository` are npm's; the app does not read them.
        (
            set(seed(), "/repository", json!(3)),
            vec![warning(codes::IGNORED_VALUE, "/repository")],
        ),
        (
            set(seed(), "/keywords", json!(["ai", 2])),
            vec![warning(codes::IGNORED_VALUE, "/keywords/1")],
        ),
        (
            set(seed(), "/keywords", json!("ai")),
            vec![warning(codes::IGNORED_VALUE, "/keywords")],
        ),
        // The app trims values and reads `null` as absent.
        (
            set(seed(), "/name", json!(" hello ")),
            vec![warning(codes::UNTRIMMED_VALUE, "/name")],
        ),
        (
            set(seed(), "/version", json!(" 0.1.0")),
            vec![warning(codes::UNTRIMMED_VALUE, "/version")],
        ),
        (
            set(seed(), "/version", json!(" ")),
            vec![error(codes::EMPTY_VALUE, "/version")],
        ),
        (
            set(seed(), "/version", json!(1)),
            vec![error(codes::INVALID_TYPE, "/version")],
        ),
        (
            set(seed(), "/description", Value::Null),
            vec![warning(codes::NULL_VALUE, "/description")],
        ),
        (set(seed(), "/description", json!("")), vec![]),
        // The id limit: the staging folder `pkg-<base64url(id)>.stage-XXXXXX`.
        (set(seed(), "/name", json!("a".repeat(178))), vec![]),
        (
            set(seed(), "/name", json!("a".repeat(179))),
            vec![error(codes::INVALID_NAME, "/name")],
        ),
        // Ordinary npm members are not Spirit's business.
        (set(seed(), "/scripts", json!({"build": "tsc"})), vec![]),
    ];
    for (value, expected) in cases {
        assert_eq!(found(&value), expected, "{value}");
    }
}

#[test]
fn main_is_required_by_events_tool_execution_and_system_prompt() {
    // The seed needs `main` three times over: one diagnostic names every reason.
    let text = serde_json::to_string_pretty(&remove(seed(), "/main")).unwrap();
    let checked = check_str(&text, "package.json", &Options::default());
    assert_eq!(checked.diagnostics().len(), 1);
    let diagnostic = &checked.diagnostics()[0];
    assert_eq!(
        (diagnostic.code.as_ref(), diagnostic.path.as_str()),
        (codes::MAIN_REQUIRED, "/main")
    );
    assert!(
        diagnostic.message.contains(
            "lists `activationEvents` and requests `tool-execution` and requests `system-prompt`"
        ),
        "{}",
        diagnostic.message
    );

    let events = set(
        minimal(),
        "/spiritExtension/activationEvents",
        json!(["onStartup"]),
    );
    assert_eq!(found(&events), [error(codes::MAIN_REQUIRED, "/main")]);
    let prompt = set(
        minimal(),
        "/spiritExtension/requestedCapabilities",
        json!(["system-prompt"]),
    );
    assert_eq!(found(&prompt), [error(codes::MAIN_REQUIRED, "/main")]);
    // An empty list of events activates nothing.
    let none = set(minimal(), "/spiritExtension/activationEvents", json!([]));
    assert_eq!(found(&none), []);
}

#[test]
fn paths_stay_inside_the_package() {
    // Refused by the app: absolute, drive letters, and any empty, `.` or `..` segment,
    // even one that stays inside (`main` is judged with its backslashes read as `/`).
    for bad in [
        "/dist/index.js",
        "C:\\index.js",
        "C:/x.js",
        "c:index.js",
        "\\\\host\\share\\index.js",
        "dist\\..\\..\\index.js",
        "a/../../index.js",
        "dist/../dist/index.js",
        "dist//index.js",
        "dist/./index.js",
        "..",
        "./",
    ] {
        assert_eq!(
            found(&set(seed(), "/main", json!(bad))),
            [error(codes::INVALID_PATH, "/main")],
            "{bad:?}"
        );
    }
    // A leading `./` is dropped.
    assert_eq!(found(&set(seed(), "/main", json!("./dist/index.js"))), []);
    // `""` and `null` are no `main`: the seed needs one.
    assert_eq!(
        found(&set(seed(), "/main", json!(""))),
        [error(codes::MAIN_REQUIRED, "/main")]
    );
    assert_eq!(
        found(&set(seed(), "/main", Value::Null)),
        [
            warning(codes::NULL_VALUE, "/main"),
            error(codes::MAIN_REQUIRED, "/main")
        ]
    );
    let cases = [
        ("/spiritExtension/icon", json!("../icon.svg")),
        ("/spiritExtension/icon", json!("assets/./icon.svg")),
        (
            "/spiritExtension/contributes/desktop/css/0/path",
            json!("/etc/style.css"),
        ),
        (
            "/spiritExtension/contributes/desktop/css/0/path",
            json!("styles//desktop.css"),
        ),
        (
            "/spiritExtension/contributes/cli/hooks/path",
            json!("hooks/../../cli-hooks.json"),
        ),
        (
            "/spiritExtension/contributes/cli/hooks/path",
            json!("hooks\\..\\cli-hooks.json"),
        ),
    ];
    for (pointer, value) in cases {
        let backslash = value.as_str().unwrap().contains('\\');
        let mut expected = vec![error(codes::INVALID_PATH, pointer)];
        if backslash {
            expected.insert(0, warning(codes::BACKSLASH_PATH, pointer));
        }
        assert_eq!(found(&set(seed(), pointer, value)), expected);
    }
    // Backslashes in icon, css and hooks paths are read as `/`: advice.
    for pointer in [
        "/spiritExtension/icon",
        "/spiritExtension/contributes/desktop/css/0/path",
        "/spiritExtension/contributes/cli/hooks/path",
    ] {
        assert_eq!(
            found(&set(seed(), pointer, json!("sub\\file"))),
            [warning(codes::BACKSLASH_PATH, pointer)]
        );
    }
    // An empty icon is no icon; an empty css or hooks path is refused.
    assert_eq!(found(&set(seed(), "/spiritExtension/icon", json!(""))), []);
    assert_eq!(
        found(&set(
            seed(),
            "/spiritExtension/contributes/desktop/css/0/path",
            json!(" ")
        )),
        [error(
            codes::EMPTY_VALUE,
            "/spiritExtension/contributes/desktop/css/0/path"
        )]
    );
    assert_eq!(
        found(&set(seed(), "/main", json!(["dist/index.js"]))),
        [error(codes::INVALID_TYPE, "/main")]
    );
    assert_eq!(
        found(&set(seed(), "/spiritExtension/icon", json!(5))),
        [error(codes::INVALID_TYPE, "/spiritExtension/icon")]
    );
}

#[test]
fn spirit_extension_members() {
    let cases: Cases = vec![
        (remove(seed(), "/spiritExtension/schemaVersion"), vec![]),
        (
            set(seed(), "/spiritExtension/schemaVersion", json!(2)),
            vec![error(
                codes::UNSUPPORTED_SCHEMA_VERSION,
                "/spiritExtension/schemaVersion",
            )],
        ),
        (
            set(seed(), "/spiritExtension/schemaVersion", json!(1.5)),
            vec![error(
                codes::UNSUPPORTED_SCHEMA_VERSION,
                "/spiritExtension/schemaVersion",
            )],
        ),
        (
            set(seed(), "/spiritExtension/schemaVersion", json!("1")),
            vec![error(codes::INVALID_TYPE, "/spiritExtension/schemaVersion")],
        ),
        (
            remove(seed(), "/spiritExtension/displayName"),
            vec![error(codes::MISSING_KEY, "/spiritExtension/displayName")],
        ),
        (
            set(seed(), "/spiritExtension/displayName", json!("  ")),
            vec![error(codes::EMPTY_VALUE, "/spiritExtension/displayName")],
        ),
        (
            remove(seed(), "/spiritExtension/supportedHosts"),
            vec![error(codes::MISSING_KEY, "/spiritExtension/supportedHosts")],
        ),
        (
            set(seed(), "/spiritExtension/supportedHosts", json!([])),
            vec![error(codes::EMPTY_VALUE, "/spiritExtension/supportedHosts")],
        ),
        (
            set(
                seed(),
                "/spiritExtension/supportedHosts",
                json!(["cli", "web"]),
            ),
            vec![error(
                codes::UNKNOWN_VALUE,
                "/spiritExtension/supportedHosts/1",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/supportedHosts",
                json!(["cli", "cli"]),
            ),
            vec![warning(
                codes::REPEATED_VALUE,
                "/spiritExtension/supportedHosts/1",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/supportedHosts",
                json!([" cli ", "desktop"]),
            ),
            vec![warning(
                codes::UNTRIMMED_VALUE,
                "/spiritExtension/supportedHosts/0",
            )],
        ),
        (
            set(seed(), "/spiritExtension/supportedHosts", json!(["CLI"])),
            vec![error(
                codes::UNKNOWN_VALUE,
                "/spiritExtension/supportedHosts/0",
            )],
        ),
        (
            set(seed(), "/spiritExtension/schemaVersion", json!(1.0)),
            vec![],
        ),
        (
            set(seed(), "/spiritExtension/schemaVersion", Value::Null),
            vec![error(codes::INVALID_TYPE, "/spiritExtension/schemaVersion")],
        ),
        (
            set(seed(), "/spiritExtension/displayName", json!(5)),
            vec![error(codes::INVALID_TYPE, "/spiritExtension/displayName")],
        ),
        // Wrong-typed event and capability lists are ignored by the app.
        (
            set(
                seed(),
                "/spiritExtension/activationEvents",
                json!("onStartup"),
            ),
            vec![warning(
                codes::IGNORED_VALUE,
                "/spiritExtension/activationEvents",
            )],
        ),
        (
            set(seed(), "/spiritExtension/activationEvents", Value::Null),
            vec![warning(
                codes::NULL_VALUE,
                "/spiritExtension/activationEvents",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/activationEvents",
                json!([" onStartup "]),
            ),
            vec![warning(
                codes::UNTRIMMED_VALUE,
                "/spiritExtension/activationEvents/0",
            )],
        ),
        (
            set(seed(), "/spiritExtension/supportedHosts", json!("cli")),
            vec![error(
                codes::INVALID_TYPE,
                "/spiritExtension/supportedHosts",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/activationEvents",
                json!(["onStart"]),
            ),
            vec![error(
                codes::UNKNOWN_VALUE,
                "/spiritExtension/activationEvents/0",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/activationEvents",
                json!(["onStartup", "onStartup"]),
            ),
            vec![warning(
                codes::REPEATED_VALUE,
                "/spiritExtension/activationEvents/1",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/requestedCapabilities/3",
                json!("setting"),
            ),
            vec![error(
                codes::UNKNOWN_VALUE,
                "/spiritExtension/requestedCapabilities/3",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/requestedCapabilities/7",
                json!("settings"),
            ),
            vec![warning(
                codes::REPEATED_VALUE,
                "/spiritExtension/requestedCapabilities/7",
            )],
        ),
        (
            set(seed(), "/spiritExtension/contributes", json!([])),
            // Ignored: the tools and UI contributions are gone, so the UI
            // capabilities are unpaired (refused) and the tool ones unused.
            vec![
                warning(codes::IGNORED_VALUE, "/spiritExtension/contributes"),
                warning(
                    codes::UNUSED_CAPABILITY,
                    "/spiritExtension/requestedCapabilities/0",
                ),
                error(
                    codes::CAPABILITY_MISMATCH,
                    "/spiritExtension/requestedCapabilities/5",
                ),
                error(
                    codes::CAPABILITY_MISMATCH,
                    "/spiritExtension/requestedCapabilities/6",
                ),
            ],
        ),
        (
            set(
                minimal(),
                "/spiritExtension/contributes",
                json!([{"tools": []}]),
            ),
            vec![error(
                codes::IGNORED_DECLARATION,
                "/spiritExtension/contributes",
            )],
        ),
        (
            set(seed(), "/spiritExtension/displayname", json!("x")),
            vec![warning(codes::UNKNOWN_KEY, "/spiritExtension/displayname")],
        ),
        (
            set(seed(), "/spiritExtension/contributes/tool", json!([])),
            vec![warning(
                codes::UNKNOWN_KEY,
                "/spiritExtension/contributes/tool",
            )],
        ),
        (
            set(seed(), "/spiritExtension/main", json!("dist/index.js")),
            vec![warning(codes::UNKNOWN_KEY, "/spiritExtension/main")],
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(found(&value), expected, "{value}");
    }
}

#[test]
fn unknown_members_get_a_suggestion() {
    let text =
        serde_json::to_string_pretty(&set(seed(), "/spiritExtension/displayname", json!("x")))
            .unwrap();
    let checked = check_str(&text, "package.json", &Options::default());
    assert_eq!(
        checked.diagnostics()[0].message,
        "unknown member `displayname` in `spiritExtension`; did you mean `displayName`?"
    );
    assert!(
        checked.package.is_some(),
        "an unknown member is only a warning"
    );
    let missing = serde_json::to_string_pretty(&{
        let mut v = seed();
        let se = v
            .as_object_mut()
            .unwrap()
            .remove("spiritExtension")
            .unwrap();
        v.as_object_mut()
            .unwrap()
            .insert("spiritextension".to_owned(), se);
        v
    })
    .unwrap();
    let checked = check_str(&missing, "package.json", &Options::default());
    assert!(
        checked.diagnostics()[0]
            .message
            .contains("`spiritextension` looks like a misspelling")
    );
}

#[test]
fn tools() {
    let tool = "/spiritExtension/contributes/tools/0";
    let cases: Cases = vec![
        (
            remove(seed(), &format!("{tool}/name")),
            vec![error(codes::MISSING_KEY, &format!("{tool}/name"))],
        ),
        (
            set(seed(), &format!("{tool}/name"), json!("Lookup")),
            vec![error(codes::INVALID_IDENTIFIER, &format!("{tool}/name"))],
        ),
        (
            set(seed(), &format!("{tool}/name"), json!("lookup__item")),
            vec![error(codes::INVALID_IDENTIFIER, &format!("{tool}/name"))],
        ),
        (
            remove(seed(), &format!("{tool}/description")),
            vec![error(codes::MISSING_KEY, &format!("{tool}/description"))],
        ),
        (
            set(seed(), &format!("{tool}/description"), json!("")),
            vec![error(codes::EMPTY_VALUE, &format!("{tool}/description"))],
        ),
        (
            remove(seed(), &format!("{tool}/inputSchema")),
            vec![error(codes::MISSING_KEY, &format!("{tool}/inputSchema"))],
        ),
        (
            set(seed(), &format!("{tool}/inputSchema"), json!(true)),
            vec![error(codes::INVALID_TYPE, &format!("{tool}/inputSchema"))],
        ),
        (
            set(
                seed(),
                &format!("{tool}/inputSchema/properties/id/type"),
                json!("strin"),
            ),
            vec![warning(
                codes::INVALID_SCHEMA,
                &format!("{tool}/inputSchema/properties/id/type"),
            )],
        ),
        (
            set(seed(), &format!("{tool}/inputSchema/required"), json!("id")),
            vec![warning(
                codes::INVALID_SCHEMA,
                &format!("{tool}/inputSchema/required"),
            )],
        ),
        (
            set(seed(), &format!("{tool}/inputSchema/type"), json!("string")),
            vec![warning(
                codes::INPUT_SCHEMA_NOT_OBJECT,
                &format!("{tool}/inputSchema"),
            )],
        ),
        (
            set(
                seed(),
                &format!("{tool}/outputSchema"),
                json!({"type": "object"}),
            ),
            vec![],
        ),
        (
            set(
                seed(),
                &format!("{tool}/outputSchema"),
                json!({"minLength": -1}),
            ),
            vec![warning(
                codes::INVALID_SCHEMA,
                &format!("{tool}/outputSchema/minLength"),
            )],
        ),
        (
            set(seed(), &format!("{tool}/outputSchema"), json!("object")),
            vec![error(codes::INVALID_TYPE, &format!("{tool}/outputSchema"))],
        ),
        (
            set(
                seed(),
                &format!("{tool}/approvalMode"),
                json!("need_approval"),
            ),
            vec![error(codes::UNKNOWN_VALUE, &format!("{tool}/approvalMode"))],
        ),
        (
            set(seed(), &format!("{tool}/executionMode"), json!("fg")),
            vec![error(
                codes::UNKNOWN_VALUE,
                &format!("{tool}/executionMode"),
            )],
        ),
        (
            set(seed(), &format!("{tool}/inputschema"), json!({})),
            vec![warning(codes::UNKNOWN_KEY, &format!("{tool}/inputschema"))],
        ),
        (
            set(
                seed(),
                "/spiritExtension/contributes/tools/1",
                seed().pointer(tool).unwrap().clone(),
            ),
            vec![warning(
                codes::DUPLICATE_VALUE,
                "/spiritExtension/contributes/tools/1/name",
            )],
        ),
        // An empty wrong-typed list is ignored; one with content loses the tools.
        (
            set(seed(), "/spiritExtension/contributes/tools", json!({})),
            vec![
                warning(codes::IGNORED_VALUE, "/spiritExtension/contributes/tools"),
                warning(
                    codes::UNUSED_CAPABILITY,
                    "/spiritExtension/requestedCapabilities/0",
                ),
            ],
        ),
        (
            set(
                seed(),
                "/spiritExtension/contributes/tools",
                json!({"lookup_item": seed().pointer(tool).unwrap().clone()}),
            ),
            vec![
                error(
                    codes::IGNORED_DECLARATION,
                    "/spiritExtension/contributes/tools",
                ),
                warning(
                    codes::UNUSED_CAPABILITY,
                    "/spiritExtension/requestedCapabilities/0",
                ),
            ],
        ),
        // The app passes any object, an array too, to the model provider.
        (
            set(seed(), &format!("{tool}/inputSchema"), json!([])),
            vec![warning(
                codes::INVALID_SCHEMA,
                &format!("{tool}/inputSchema"),
            )],
        ),
        (
            set(seed(), &format!("{tool}/name"), json!(" lookup_item ")),
            vec![warning(codes::UNTRIMMED_VALUE, &format!("{tool}/name"))],
        ),
        (
            set(seed(), &format!("{tool}/name"), json!("lookup item")),
            vec![error(codes::INVALID_IDENTIFIER, &format!("{tool}/name"))],
        ),
        (
            set(seed(), &format!("{tool}/approvalMode"), json!(" allowed")),
            vec![warning(
                codes::UNTRIMMED_VALUE,
                &format!("{tool}/approvalMode"),
            )],
        ),
        (
            set(seed(), &format!("{tool}/outputSchema"), Value::Null),
            vec![warning(codes::NULL_VALUE, &format!("{tool}/outputSchema"))],
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(found(&value), expected, "{value}");
    }
}

#[test]
fn capabilities_pair_with_what_they_enable() {
    let caps = "/spiritExtension/requestedCapabilities";
    let without = |capability: &str| {
        let mut value = seed();
        let list = value.pointer_mut(caps).unwrap().as_array_mut().unwrap();
        list.retain(|c| c != capability);
        value
    };
    // tools without one of the two capabilities: the model never sees them (an
    // error, at the tools).
    assert_eq!(
        found(&without("tool-execution")),
        [error(
            codes::TOOLS_NOT_EXPOSED,
            "/spiritExtension/contributes/tools"
        )]
    );
    assert_eq!(
        found(&without("tool-definitions")),
        [error(
            codes::TOOLS_NOT_EXPOSED,
            "/spiritExtension/contributes/tools"
        )]
    );
    // A wrong-typed capability list is ignored: no capability at all.
    assert_eq!(
        found(&set(
            remove(
                remove(seed(), "/spiritExtension/contributes/desktop"),
                "/spiritExtension/contributes/cli"
            ),
            caps,
            json!("tool-execution")
        )),
        [
            error(
                codes::TOOLS_NOT_EXPOSED,
                "/spiritExtension/contributes/tools"
            ),
            warning(codes::IGNORED_VALUE, caps),
            warning(codes::UNDECLARED_CAPABILITY, "/spiritExtension/secretSlots"),
        ]
    );
    // One of the two without tools: at the capability.
    let one = set(
        set(minimal(), "/main", json!("index.js")),
        caps,
        json!(["tool-execution"]),
    );
    assert_eq!(
        found(&one),
        [warning(codes::UNUSED_CAPABILITY, &format!("{caps}/0"))]
    );
    let one = set(minimal(), caps, json!(["tool-definitions"]));
    assert_eq!(
        found(&one),
        [warning(codes::UNUSED_CAPABILITY, &format!("{caps}/0"))]
    );
    // Both without tools: requested for nothing.
    let both = set(
        set(minimal(), "/main", json!("index.js")),
        caps,
        json!(["tool-definitions", "tool-execution"]),
    );
    assert_eq!(
        found(&both),
        [warning(codes::UNUSED_CAPABILITY, &format!("{caps}/0"))]
    );
    // desktop-ui ⇔ contributes.desktop, cli-ui ⇔ contributes.cli.
    assert_eq!(
        found(&without("desktop-ui")),
        [error(
            codes::CAPABILITY_MISMATCH,
            "/spiritExtension/contributes/desktop"
        )]
    );
    assert_eq!(
        found(&without("cli-ui")),
        [error(
            codes::CAPABILITY_MISMATCH,
            "/spiritExtension/contributes/cli"
        )]
    );
    assert_eq!(
        found(&remove(seed(), "/spiritExtension/contributes/desktop")),
        [error(codes::CAPABILITY_MISMATCH, &format!("{caps}/5"))]
    );
    assert_eq!(
        found(&remove(seed(), "/spiritExtension/contributes/cli")),
        [error(codes::CAPABILITY_MISMATCH, &format!("{caps}/6"))]
    );
    // An empty desktop contribution is none: refused beside desktop-ui.
    for empty in [
        json!({}),
        json!({"settingsPage": false}),
        json!({"css": []}),
    ] {
        assert_eq!(
            found(&set(seed(), "/spiritExtension/contributes/desktop", empty)),
            [error(codes::CAPABILITY_MISMATCH, &format!("{caps}/5"))]
        );
    }
    assert_eq!(
        found(&set(seed(), "/spiritExtension/contributes/cli", json!({}))),
        [error(codes::CAPABILITY_MISMATCH, &format!("{caps}/6"))]
    );
    // secretSlots without secret-storage work in the app (advice); secret-storage
    // without slots is a warning.
    assert_eq!(
        found(&without("secret-storage")),
        [warning(
            codes::UNDECLARED_CAPABILITY,
            "/spiritExtension/secretSlots"
        )]
    );
    assert_eq!(
        found(&remove(seed(), "/spiritExtension/secretSlots")),
        [warning(codes::UNUSED_CAPABILITY, &format!("{caps}/4"))]
    );
    // Declarations only: nothing to pair.
    let declared = set(
        minimal(),
        caps,
        json!([
            "approval-flow",
            "questions-flow",
            "settings",
            "structured-results"
        ]),
    );
    assert_eq!(found(&declared), []);
}

#[test]
fn desktop_and_cli_contributions() {
    let desktop = "/spiritExtension/contributes/desktop";
    let cli = "/spiritExtension/contributes/cli";
    let cases: Cases = vec![
        (
            remove(seed(), &format!("{desktop}/css/0/path")),
            vec![error(codes::MISSING_KEY, &format!("{desktop}/css/0/path"))],
        ),
        (
            set(
                seed(),
                &format!("{desktop}/css/0/media"),
                json!("(prefers-color-scheme: dark)"),
            ),
            vec![],
        ),
        (
            set(seed(), &format!("{desktop}/css/0/media"), json!(1)),
            vec![warning(
                codes::IGNORED_VALUE,
                &format!("{desktop}/css/0/media"),
            )],
        ),
        (
            set(
                seed(),
                &format!("{desktop}/css"),
                json!("styles/desktop.css"),
            ),
            vec![warning(codes::IGNORED_VALUE, &format!("{desktop}/css"))],
        ),
        (
            set(
                seed(),
                &format!("{desktop}/css"),
                json!({"path": "styles/desktop.css"}),
            ),
            vec![error(codes::IGNORED_DECLARATION, &format!("{desktop}/css"))],
        ),
        (
            set(
                seed(),
                &format!("{desktop}/css/0"),
                json!("styles/desktop.css"),
            ),
            vec![error(codes::INVALID_TYPE, &format!("{desktop}/css/0"))],
        ),
        (
            set(seed(), &format!("{desktop}/settingsPage"), json!(true)),
            vec![],
        ),
        (
            set(seed(), &format!("{desktop}/settingsPage"), json!({})),
            vec![],
        ),
        (
            set(seed(), &format!("{desktop}/settingsPage"), json!(false)),
            vec![],
        ),
        (
            set(seed(), &format!("{desktop}/settingsPage"), json!(3)),
            vec![error(
                codes::INVALID_TYPE,
                &format!("{desktop}/settingsPage"),
            )],
        ),
        (
            set(
                seed(),
                &format!("{desktop}/settingsPage"),
                json!({"title": 3}),
            ),
            vec![warning(
                codes::IGNORED_VALUE,
                &format!("{desktop}/settingsPage/title"),
            )],
        ),
        (
            set(
                seed(),
                &format!("{cli}/hooks"),
                json!([{"slot": "input.frame"}]),
            ),
            vec![error(codes::INLINE_HOOKS, &format!("{cli}/hooks"))],
        ),
        (
            set(seed(), &format!("{cli}/hooks"), json!("cli-hooks.json")),
            vec![error(codes::INVALID_TYPE, &format!("{cli}/hooks"))],
        ),
        (
            set(seed(), &format!("{cli}/hooks"), json!({})),
            vec![error(codes::MISSING_KEY, &format!("{cli}/hooks/path"))],
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(found(&value), expected, "{value}");
    }
}

#[test]
fn settings_schema() {
    let s = "/spiritExtension/settingsSchema/0";
    let string_setting = json!({"key": "name", "type": "string", "title": "Name"});
    let cases: Cases = vec![
        (
            remove(seed(), &format!("{s}/key")),
            vec![error(codes::MISSING_KEY, &format!("{s}/key"))],
        ),
        (
            set(seed(), &format!("{s}/key"), json!("Region")),
            vec![error(codes::INVALID_IDENTIFIER, &format!("{s}/key"))],
        ),
        (
            set(
                seed(),
                "/spiritExtension/settingsSchema/1",
                seed().pointer(s).unwrap().clone(),
            ),
            vec![warning(
                codes::DUPLICATE_VALUE,
                "/spiritExtension/settingsSchema/1/key",
            )],
        ),
        (
            remove(seed(), &format!("{s}/type")),
            vec![error(codes::MISSING_KEY, &format!("{s}/type"))],
        ),
        (
            set(seed(), &format!("{s}/type"), json!("enum")),
            vec![error(codes::UNKNOWN_VALUE, &format!("{s}/type"))],
        ),
        (
            remove(seed(), &format!("{s}/title")),
            vec![error(codes::MISSING_KEY, &format!("{s}/title"))],
        ),
        (
            set(seed(), &format!("{s}/title"), json!("")),
            vec![error(codes::EMPTY_VALUE, &format!("{s}/title"))],
        ),
        (
            set(seed(), &format!("{s}/description"), json!(1)),
            vec![warning(codes::IGNORED_VALUE, &format!("{s}/description"))],
        ),
        (
            set(seed(), &format!("{s}/placeholder"), json!(1)),
            vec![warning(codes::IGNORED_VALUE, &format!("{s}/placeholder"))],
        ),
        (
            set(seed(), &format!("{s}/required"), json!("yes")),
            vec![warning(codes::IGNORED_VALUE, &format!("{s}/required"))],
        ),
        (
            set(seed(), &format!("{s}/defaultValue"), json!("ap")),
            vec![warning(
                codes::DEFAULT_NOT_AN_OPTION,
                &format!("{s}/defaultValue"),
            )],
        ),
        (
            set(seed(), &format!("{s}/defaultValue"), json!(1)),
            vec![error(codes::INVALID_DEFAULT, &format!("{s}/defaultValue"))],
        ),
        (
            set(seed(), &format!("{s}/defaultValue"), Value::Null),
            vec![warning(codes::NULL_VALUE, &format!("{s}/defaultValue"))],
        ),
        // A select without options is accepted by the app: advice.
        (
            remove(seed(), &format!("{s}/options")),
            vec![warning(codes::NO_OPTIONS, s)],
        ),
        (
            set(seed(), &format!("{s}/options"), json!([])),
            vec![warning(codes::NO_OPTIONS, &format!("{s}/options"))],
        ),
        (
            set(seed(), &format!("{s}/options"), json!({})),
            vec![error(codes::INVALID_TYPE, &format!("{s}/options"))],
        ),
        (
            set(seed(), &format!("{s}/defaultValue"), json!("")),
            vec![warning(
                codes::DEFAULT_NOT_AN_OPTION,
                &format!("{s}/defaultValue"),
            )],
        ),
        (
            set(seed(), &format!("{s}/type"), json!(" select ")),
            vec![warning(codes::UNTRIMMED_VALUE, &format!("{s}/type"))],
        ),
        (
            set(seed(), &format!("{s}/options/1/value"), json!("us")),
            vec![warning(
                codes::DUPLICATE_VALUE,
                &format!("{s}/options/1/value"),
            )],
        ),
        (
            remove(seed(), &format!("{s}/options/1/label")),
            vec![error(codes::MISSING_KEY, &format!("{s}/options/1/label"))],
        ),
        (
            set(seed(), &format!("{s}/options/1/value"), json!(2)),
            vec![error(codes::INVALID_TYPE, &format!("{s}/options/1/value"))],
        ),
        (
            set(
                seed(),
                "/spiritExtension/settingsSchema/1",
                set(string_setting.clone(), "/defaultValue", json!(true)),
            ),
            vec![error(
                codes::INVALID_DEFAULT,
                "/spiritExtension/settingsSchema/1/defaultValue",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/settingsSchema/1",
                set(string_setting.clone(), "/options", json!([])),
            ),
            vec![error(
                codes::UNUSED_KEY,
                "/spiritExtension/settingsSchema/1/options",
            )],
        ),
        // `options: null` is no options, fine on any type.
        (
            set(
                seed(),
                "/spiritExtension/settingsSchema/1",
                set(string_setting.clone(), "/options", Value::Null),
            ),
            vec![warning(
                codes::NULL_VALUE,
                "/spiritExtension/settingsSchema/1/options",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/settingsSchema",
                json!({"region": {}}),
            ),
            vec![error(
                codes::IGNORED_DECLARATION,
                "/spiritExtension/settingsSchema",
            )],
        ),
        (
            set(
                seed(),
                "/spiritExtension/settingsSchema/1",
                json!({"key": "n", "type": "number", "title": "N", "defaultValue": 2.5}),
            ),
            vec![],
        ),
        (
            set(
                seed(),
                "/spiritExtension/settingsSchema/1",
                json!({"key": "b", "type": "boolean", "title": "B", "defaultValue": "true"}),
            ),
            vec![error(
                codes::INVALID_DEFAULT,
                "/spiritExtension/settingsSchema/1/defaultValue",
            )],
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(found(&value), expected, "{value}");
    }
}

#[test]
fn secret_slots() {
    let s = "/spiritExtension/secretSlots/0";
    let cases: Cases = vec![
        (
            remove(seed(), &format!("{s}/key")),
            vec![error(codes::MISSING_KEY, &format!("{s}/key"))],
        ),
        (
            set(seed(), &format!("{s}/key"), json!("")),
            vec![error(codes::EMPTY_VALUE, &format!("{s}/key"))],
        ),
        (
            remove(seed(), &format!("{s}/title")),
            vec![error(codes::MISSING_KEY, &format!("{s}/title"))],
        ),
        (
            set(seed(), &format!("{s}/required"), json!(1)),
            vec![warning(codes::IGNORED_VALUE, &format!("{s}/required"))],
        ),
        (
            set(seed(), &format!("{s}/description"), json!([])),
            vec![warning(codes::IGNORED_VALUE, &format!("{s}/description"))],
        ),
        (
            set(
                seed(),
                "/spiritExtension/secretSlots/1",
                seed().pointer(s).unwrap().clone(),
            ),
            vec![warning(
                codes::DUPLICATE_VALUE,
                "/spiritExtension/secretSlots/1/key",
            )],
        ),
        // Secret keys follow the tool-name pattern: the app refuses others.
        (
            set(seed(), &format!("{s}/key"), json!("API_TOKEN")),
            vec![error(codes::INVALID_IDENTIFIER, &format!("{s}/key"))],
        ),
        (
            set(seed(), &format!("{s}/key"), json!("api.token-v2")),
            vec![],
        ),
        // An empty wrong-typed list is ignored; one with content loses the slots.
        (
            set(seed(), "/spiritExtension/secretSlots", json!({})),
            vec![
                warning(
                    codes::UNUSED_CAPABILITY,
                    "/spiritExtension/requestedCapabilities/4",
                ),
                warning(codes::IGNORED_VALUE, "/spiritExtension/secretSlots"),
            ],
        ),
        (
            set(
                seed(),
                "/spiritExtension/secretSlots",
                json!({"api_token": {"key": "api_token", "title": "T"}}),
            ),
            vec![
                warning(
                    codes::UNUSED_CAPABILITY,
                    "/spiritExtension/requestedCapabilities/4",
                ),
                error(codes::IGNORED_DECLARATION, "/spiritExtension/secretSlots"),
            ],
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(found(&value), expected, "{value}");
    }
}

#[test]
fn registry_strict_mode_needs_members_written_out() {
    let strict = Options {
        registry_strict: true,
        host: None,
    };
    assert_eq!(found_with(&seed(), &strict), []);
    assert_eq!(found_with(&minimal(), &strict), []);
    assert_eq!(
        found_with(
            &remove(minimal(), "/spiritExtension/schemaVersion"),
            &strict
        ),
        [error(
            codes::REGISTRY_REQUIRED,
            "/spiritExtension/schemaVersion"
        )]
    );
    assert_eq!(
        found_with(
            &remove(minimal(), "/spiritExtension/requestedCapabilities"),
            &strict
        ),
        [error(
            codes::REGISTRY_REQUIRED,
            "/spiritExtension/requestedCapabilities"
        )]
    );
    // displayName and supportedHosts are required in every mode.
    assert_eq!(
        found_with(&remove(minimal(), "/spiritExtension/displayName"), &strict),
        [error(codes::MISSING_KEY, "/spiritExtension/displayName")]
    );
    // The marketplace reader needs a description, npm a SemVer version.
    for description in [None, Some(json!("")), Some(json!(" "))] {
        assert_eq!(
            found_with(&edit(minimal(), "/description", description), &strict),
            [error(codes::REGISTRY_REQUIRED, "/description")]
        );
    }
    assert_eq!(
        found_with(&set(minimal(), "/version", json!("1.0")), &strict),
        [error(codes::REGISTRY_REQUIRED, "/version")]
    );
    // Without the mode, all may be left out (a non-SemVer version is advice).
    let lax = remove(
        remove(
            remove(minimal(), "/spiritExtension/schemaVersion"),
            "/spiritExtension/requestedCapabilities",
        ),
        "/description",
    );
    assert_eq!(found(&lax), []);
    assert_eq!(
        found(&set(lax, "/version", json!("1.0"))),
        [warning(codes::INVALID_VERSION, "/version")]
    );
}

#[test]
fn the_host_must_be_supported() {
    let cli = Options {
        registry_strict: false,
        host: Some(Host::Cli),
    };
    let desktop_only = set(
        minimal(),
        "/spiritExtension/supportedHosts",
        json!(["desktop"]),
    );
    assert_eq!(
        found_with(&desktop_only, &cli),
        [error(
            codes::UNSUPPORTED_HOST,
            "/spiritExtension/supportedHosts"
        )]
    );
    assert_eq!(found_with(&minimal(), &cli), []);
    assert_eq!(
        found_with(
            &seed(),
            &Options {
                registry_strict: false,
                host: Some(Host::Desktop)
            }
        ),
        []
    );
}

#[test]
fn several_problems_are_all_reported_in_file_order() {
    let mut value = seed();
    value = set(value, "/name", json!("Bad Name"));
    value = set(value, "/version", json!("one"));
    value = set(value, "/main", json!("../x.js"));
    value = set(value, "/spiritExtension/supportedHosts", json!(["web"]));
    value = set(
        value,
        "/spiritExtension/contributes/tools/0/name",
        json!("-x"),
    );
    value = set(
        value,
        "/spiritExtension/settingsSchema/0/defaultValue",
        json!("mars"),
    );
    // serde_json writes members in alphabetical order, so that is the file order.
    let paths: Vec<String> = found(&value).into_iter().map(|(_, _, path)| path).collect();
    assert_eq!(
        paths,
        [
            "/main",
            "/name",
            "/spiritExtension/contributes/tools/0/name",
            "/spiritExtension/settingsSchema/0/defaultValue",
            "/spiritExtension/supportedHosts/0",
            "/version",
        ]
    );
}

#[test]
fn unknown_members_are_kept_in_the_model() {
    let mut value = set(seed(), "/scripts", json!({"build": "tsc"}));
    value = set(value, "/spiritExtension/x-team", json!("core"));
    value = set(
        value,
        "/spiritExtension/contributes/tools/0/x-cost",
        json!(3),
    );
    value = set(
        value,
        "/spiritExtension/settingsSchema/0/options/1/x-flag",
        json!(true),
    );
    value = set(value, "/author/email", json!("a@example.com"));
    let checked = check_str(&value.to_string(), "package.json", &Options::default());
    let package = checked.package.unwrap();
    assert_eq!(package.other["scripts"], json!({"build": "tsc"}));
    assert_eq!(package.spirit_extension.other["x-team"], json!("core"));
    assert_eq!(package.tools()[0].other["x-cost"], json!(3));
    assert_eq!(
        package.spirit_extension.settings_schema[0].options[1].other["x-flag"],
        json!(true)
    );
    assert!(
        matches!(&package.author, Some(spirit_manifest::Person::Object { other, .. }) if other["email"] == json!("a@example.com"))
    );
    // Written back, the package is the same document.
    assert_eq!(serde_json::to_value(&package).unwrap(), value);
}
