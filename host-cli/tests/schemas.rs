//! The editor schemas (`curupira schema …`, `schemas/*.json`) and the configuration
//! reference (`docs/CONFIG.md`): the committed files are what the command prints; every
//! valid file of the repository (examples, test corpora) fits its schema; a wrong value
//! of every closed set, and a wrong name, does not; and the config schema has the
//! checker's keys, no more, no fewer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// What `curupira schema ARGS` prints (checked to succeed).
fn curupira_schema(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .arg("schema")
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "curupira schema {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The five kinds and their committed files.
const KINDS: [(&str, &str); 5] = [
    ("config", "schemas/curupira.schema.json"),
    ("settings", "schemas/curupira-settings.schema.json"),
    (
        "extension-manifest",
        "schemas/curupira-extension.schema.json",
    ),
    ("spirit-package", "schemas/spirit-package.schema.json"),
    ("registry-entry", "schemas/registry-entry.schema.json"),
];

fn schema(kind: &str) -> Value {
    serde_json::from_str(&curupira_schema(&[kind])).unwrap()
}

fn validator(kind: &str) -> jsonschema::Validator {
    jsonschema::validator_for(&schema(kind)).unwrap()
}

/// `instance` fits the schema, or the test fails naming `what` and every error.
fn assert_fits(validator: &jsonschema::Validator, instance: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not fit its schema: {errors:#?}"
    );
}

/// Checks that every file of `paths` the checker accepts (`to_json` gives `None` for
/// the others) fits the schema; returns how many were accepted.
fn accepted_files_fit(
    validator: &jsonschema::Validator,
    paths: Vec<PathBuf>,
    to_json: impl Fn(&[u8]) -> Option<Value>,
) -> usize {
    let mut checked = 0;
    for path in paths {
        let bytes = fs::read(&path).unwrap();
        let Some(json) = to_json(&bytes) else {
            continue;
        };
        checked += 1;
        assert_fits(validator, &json, &path.display().to_string());
    }
    checked
}

fn toml_to_json(text: &str) -> Value {
    toml::from_str(text).unwrap()
}

/// The files directly in `dir` whose name ends with `suffix`, sorted.
fn files(dir: &str, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(root().join(dir))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(suffix))
        .collect();
    found.sort();
    found
}

/// `FILE` in each folder of `dir`.
fn in_folders(dir: &str, file: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(root().join(dir))
        .unwrap()
        .map(|entry| entry.unwrap().path().join(file))
        .filter(|path| path.is_file())
        .collect();
    found.sort();
    found
}

#[test]
fn the_committed_schemas_are_what_the_command_prints() {
    for (kind, file) in KINDS {
        let printed = curupira_schema(&[kind]);
        let committed = fs::read_to_string(root().join(file)).unwrap_or_default();
        assert!(
            printed == committed,
            "{file} differs from `curupira schema {kind}` (a model changed); regenerate it with \
             `cargo run -p curupira-host -- schema {kind} > {file}` and commit the result"
        );
        assert!(
            printed.ends_with("}\n"),
            "{kind}: pretty JSON and a newline"
        );
    }
}

#[test]
fn the_config_reference_is_generated_from_the_schema() {
    let printed = curupira_schema(&["config", "--markdown"]);
    let committed = fs::read_to_string(root().join("docs/CONFIG.md")).unwrap_or_default();
    assert!(
        printed == committed,
        "docs/CONFIG.md differs from `curupira schema config --markdown` (a key or its doc \
         changed); regenerate it with `cargo run -p curupira-host -- schema config --markdown \
         > docs/CONFIG.md` and commit the result"
    );
    // Every key of the schema has its row, under its table's heading.
    let schema = schema("config");
    let defs = schema["$defs"].as_object().unwrap();
    for (name, def) in defs {
        for key in def["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|p| p.0)
        {
            assert!(
                printed.contains(&format!("| `{key}` |")),
                "docs/CONFIG.md has no row for `{key}` of {name}"
            );
        }
    }
    for heading in [
        "## `[settings]`",
        "## `[settings.agent]`",
        "## `[settings.workspace.hooks]`",
        "## `[extensions.NAME]`",
        "## `[automations.NAME]`",
    ] {
        assert!(printed.contains(heading), "docs/CONFIG.md has no {heading}");
    }
    assert!(
        !printed.contains("## `[automations.NAME.agent]`"),
        "a table shared with [settings] is listed once"
    );
}

#[test]
fn schema_refuses_markdown_for_other_kinds() {
    let output = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .args(["schema", "spirit-package", "--markdown"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: `--markdown`") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn every_valid_config_in_the_repository_fits() {
    let validator = validator("config");
    let configs = in_folders("examples", "curupira.toml");
    assert!(configs.len() >= 2, "the examples' configs: {configs:?}");
    for path in configs {
        let bytes = fs::read(&path).unwrap();
        let loaded =
            curupira_host::config::check_bytes(&bytes, "curupira.toml", path.parent().unwrap());
        assert!(!loaded.report.has_errors(), "{} has errors", path.display());
        let json = toml_to_json(std::str::from_utf8(&bytes).unwrap());
        assert_fits(&validator, &json, &path.display().to_string());
    }
}

/// The full example of the config module's documentation: every key the checker reads.
fn documented_config() -> String {
    let source = fs::read_to_string(root().join("config/src/lib.rs")).unwrap();
    let mut lines = source.lines().skip_while(|l| *l != "//! ```toml").skip(1);
    let body: Vec<&str> = lines
        .by_ref()
        .take_while(|l| *l != "//! ```")
        .map(|l| l.strip_prefix("//! ").unwrap_or(""))
        .collect();
    assert!(
        body.len() > 30,
        "the config module documents its full example"
    );
    body.join("\n")
}

#[test]
fn the_checker_s_full_example_fits_and_uses_every_table() {
    let text = documented_config();
    let unknown = unknown_keys(&text, "curupira.toml");
    assert!(
        unknown.is_empty(),
        "the documented example has unknown keys: {unknown:?}"
    );
    // The schema refuses unknown keys, so each key of the example is in the schema.
    assert_fits(
        &validator("config"),
        &toml_to_json(&text),
        "the documented example",
    );
}

/// A value of the type `schema` describes (after `$ref`), for the key-coverage test.
fn sample(root: &Value, schema: &Value) -> Value {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => root.pointer(reference.trim_start_matches('#')).unwrap(),
        None => schema,
    };
    if let Some(values) = schema.get("enum") {
        return values[0].clone();
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        return properties
            .iter()
            .map(|(key, member)| (key.clone(), sample(root, member)))
            .collect::<serde_json::Map<_, _>>()
            .into();
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        return json!({ "x": sample(root, values) });
    }
    match schema["type"].as_str() {
        Some("integer") => schema.get("minimum").cloned().unwrap_or(json!(1)),
        Some("number") => json!(1.5),
        Some("boolean") => json!(true),
        Some("array") => json!([sample(root, &schema["items"])]),
        Some("object") => json!({}),
        _ => json!("x"),
    }
}

#[test]
fn every_key_of_the_config_schema_is_a_key_the_checker_knows() {
    let schema = schema("config");
    let document = sample(&schema, &schema);
    // Every table, every key: settings.*, extensions.x.*, automations.x.* and their
    // nested tables.
    assert!(
        document
            .pointer("/automations/x/workspace/hooks/before_run")
            .is_some()
    );
    assert_fits(&validator("config"), &document, "a config with every key");
    let text = toml::to_string(&document).unwrap();
    let unknown = unknown_keys(&text, "curupira.toml");
    assert!(
        unknown.is_empty(),
        "keys in the schema that the checker does not know: {unknown:?}\n{text}"
    );
    // The same check sees a key the checker does not know, in a nested table.
    let mut document = document;
    document["automations"]["x"]["workspace"]["hooks"]["after_merge"] = json!("x");
    let text = toml::to_string(&document).unwrap();
    assert_eq!(
        unknown_keys(&text, "curupira.toml"),
        ["/automations/x/workspace/hooks/after_merge"]
    );
}

/// The pointers of the keys the checker does not know (`config/unknown-key`) in the
/// file `text`, called `file` (`curupira.toml` or `settings.toml`: the form follows).
fn unknown_keys(text: &str, file: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let loaded = curupira_host::config::check_bytes(text.as_bytes(), file, dir.path());
    loaded
        .report
        .diagnostics()
        .iter()
        .filter(|d| d.code == "config/unknown-key")
        .map(|d| d.path.to_string())
        .collect()
}

/// Applies `change` (a pointer and a value) to `base`, and checks that the schema
/// refuses the result.
fn assert_refused(validator: &jsonschema::Validator, base: &Value, pointer: &str, value: Value) {
    let mut document = base.clone();
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let parent = if parent.is_empty() {
        &mut document
    } else {
        document
            .pointer_mut(parent)
            .unwrap_or_else(|| panic!("{pointer}"))
    };
    match parent {
        Value::Object(map) => {
            map.insert(key.to_owned(), value.clone());
        }
        Value::Array(items) => items[key.parse::<usize>().unwrap()] = value.clone(),
        _ => panic!("{pointer}"),
    }
    assert!(
        !validator.is_valid(&document),
        "the schema accepts {value} at {pointer}"
    );
}

#[test]
fn the_config_schema_refuses_a_wrong_value_of_each_closed_set_and_range() {
    let validator = validator("config");
    let base = json!({
        "settings": { "workspace": { "mode": "worktree", "cleanup": "always" } },
        "extensions": { "local": { "builtin": "local-queue" } },
        "plugins": { "gh": { "type": "uvx", "args": ["--from", "curupira-plugins", "curupira-plugins"] } },
        "automations": { "a": { "trigger": "local/jsonl", "prompt": "p",
            "agent": { "max_concurrent": 2 }, "workspace": { "mode": "shared" } } },
    });
    assert_fits(&validator, &base, "the base config");
    for (pointer, value) in [
        ("/settings/workspace/mode", json!("worktrees")),
        ("/settings/workspace/cleanup", json!("on_success")),
        ("/automations/a/workspace/mode", json!("Shared")),
        ("/extensions/local/builtin", json!("local-queues")),
        ("/automations/a/agent/max_concurrent", json!(0)),
        ("/automations/a/agent/max_concurrent", json!(1.5)),
        ("/automations/a/trigger", json!("a:b:c")),
        ("/automations/a/trigger", json!("local:jsonl")),
        ("/automations/a/trigger", json!("a/b/c")),
        ("/plugins/gh/type", json!("executable")),
        ("/plugins/gh/args", json!([])),
        ("/plugins/gh/program", json!("python3")),
        ("/automations/a/colour", json!("red")),
        ("/settings/timeouts", json!({ "request": 0 })),
        ("/settings/polling", json!({ "batch_size": 0 })),
    ] {
        assert_refused(&validator, &base, pointer, value);
    }
    assert_refused(
        &validator,
        &base,
        "/settings/agent",
        json!({ "command": [""] }),
    );
    assert_refused(
        &validator,
        &base,
        "/settings/agent",
        json!({ "command": [] }),
    );
    // An empty argument after the program is allowed, by the checker too.
    let mut empty_argument = base.clone();
    empty_argument["settings"]["agent"] = json!({ "command": ["agent", ""] });
    assert_fits(&validator, &empty_argument, "an empty argument");
    let text = toml::to_string(&empty_argument).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let loaded = curupira_host::config::check_bytes(text.as_bytes(), "curupira.toml", dir.path());
    assert!(
        !loaded
            .report
            .diagnostics()
            .iter()
            .any(|d| d.path.to_string().starts_with("/settings/agent")),
        "the checker accepts an empty argument"
    );
    let mut bad_name = base.clone();
    bad_name["extensions"] = json!({ "a/b": { "builtin": "local-queue" } });
    assert!(!validator.is_valid(&bad_name), "an extension name with `/`");
    let mut bad_name = base.clone();
    bad_name["plugins"] = json!({ "g/h": { "type": "npx", "args": ["x"] } });
    assert!(!validator.is_valid(&bad_name), "a plugin name with `/`");
    let mut without_args = base.clone();
    without_args["plugins"] = json!({ "gh": { "type": "npx" } });
    assert!(
        !validator.is_valid(&without_args),
        "a plugin without `args`"
    );
}

#[test]
fn every_valid_extension_manifest_in_the_repository_fits() {
    let validator = validator("extension-manifest");
    let mut manifests = in_folders("examples", "curupira-extension.toml");
    manifests.extend(files("manifest-curupira/tests/corpus/valid", ".toml"));
    let checked = accepted_files_fit(&validator, manifests, |bytes| {
        curupira_manifest::check_bytes(bytes, "curupira-extension.toml")
            .manifest
            .map(|_| toml_to_json(std::str::from_utf8(bytes).unwrap()))
    });
    assert!(checked >= 3, "valid manifests found: {checked}");
}

#[test]
fn the_manifest_schema_refuses_wrong_sets_and_names() {
    let validator = validator("extension-manifest");
    let base = toml_to_json(
        &fs::read_to_string(root().join("examples/node-trigger/curupira-extension.toml")).unwrap(),
    );
    assert_fits(&validator, &base, "the node-trigger manifest");
    for file in [
        "invalid-kind.toml",
        "invalid-launch-type.toml",
        "invalid-name.toml",
    ] {
        let path = root()
            .join("manifest-curupira/tests/corpus/invalid")
            .join(file);
        let json = toml_to_json(&fs::read_to_string(&path).unwrap());
        assert!(!validator.is_valid(&json), "the schema accepts {file}");
    }
    for (pointer, value) in [
        ("/kind", json!("poller")),
        ("/launch/type", json!("docker")),
        ("/name", json!("Acme")),
        ("/trigger_types", json!(["GitHub Issue"])),
        ("/trigger_types", json!([])),
        ("/protocol_version", json!(3)),
        ("/manifest_version", json!(2)),
        ("/version", json!("1.0")),
    ] {
        assert_refused(&validator, &base, pointer, value);
    }
}

#[test]
fn every_valid_spirit_package_in_the_repository_fits() {
    let validator = validator("spirit-package");
    let mut packages = vec![
        root().join("examples/spirit-extension/package.json"),
        root().join("manifest-spirit/tests/corpus/seed-example/package.json"),
    ];
    packages.extend(in_folders(
        "host-cli/tests/spirit_run_fixtures",
        "package.json",
    ));
    packages.extend(files("manifest-spirit/tests/corpus/text", ".json"));
    let options = spirit_manifest::Options::default();
    let checked = accepted_files_fit(&validator, packages, |bytes| {
        spirit_manifest::check_bytes(bytes, "package.json", &options)
            .package
            .map(|_| serde_json::from_slice(bytes).unwrap())
    });
    assert!(checked >= 5, "valid packages found: {checked}");
}

#[test]
fn the_spirit_schema_refuses_a_wrong_value_of_each_closed_set() {
    let validator = validator("spirit-package");
    let text = fs::read_to_string(root().join("examples/spirit-extension/package.json")).unwrap();
    let base: Value = serde_json::from_str(&text).unwrap();
    assert_fits(&validator, &base, "the example package");
    let options = spirit_manifest::Options::default();
    for (pointer, value) in [
        ("/spiritExtension/supportedHosts/0", json!("mobile")),
        ("/spiritExtension/activationEvents/0", json!("onBoot")),
        ("/spiritExtension/requestedCapabilities/0", json!("root")),
        (
            "/spiritExtension/contributes/tools/0/approvalMode",
            json!("sometimes"),
        ),
        (
            "/spiritExtension/contributes/tools/0/executionMode",
            json!("later"),
        ),
        ("/spiritExtension/settingsSchema/0/type", json!("date")),
        (
            "/spiritExtension/contributes/tools/0/name",
            json!("Lookup Item"),
        ),
        ("/name", json!("@Example/X")),
        ("/version", json!("one")),
        ("/spiritExtension/schemaVersion", json!(2)),
    ] {
        assert_refused(&validator, &base, pointer, value.clone());
        // The checker refuses the same change (a version that is not SemVer only in
        // registry-strict mode: the Spirit app takes any version).
        let mut document = base.clone();
        *document.pointer_mut(pointer).unwrap() = value;
        let options = spirit_manifest::Options {
            registry_strict: pointer == "/version",
            ..options
        };
        let checked = spirit_manifest::check_value(document, "package.json", &options);
        assert!(checked.report.has_errors(), "the checker accepts {pointer}");
    }
}

#[test]
fn every_valid_registry_entry_in_the_repository_fits() {
    let validator = validator("registry-entry");
    let mut entries = in_folders(
        "registry-entry/tests/sample/registry/extensions",
        "entry.json",
    );
    entries.extend(in_folders(
        "registry-entry/tests/sample/golden/scaffold",
        "entry.json",
    ));
    entries.extend(files("registry-entry/tests/corpus/entries", ".json"));
    let checked = accepted_files_fit(&validator, entries, |bytes| {
        spirit_registry::check_entry_bytes(bytes, "entry.json")
            .entry
            .map(|_| serde_json::from_slice(bytes).unwrap())
    });
    assert!(checked >= 4, "valid entries found: {checked}");
}

#[test]
fn the_registry_schema_refuses_a_wrong_value_of_each_closed_set() {
    let validator = validator("registry-entry");
    let path =
        root().join("registry-entry/tests/sample/registry/extensions/acme.lookup/entry.json");
    let base: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    assert_fits(&validator, &base, "acme.lookup");
    let every_enum_wrong = root().join("registry-entry/tests/corpus/entries/every-enum-wrong.json");
    let json: Value = serde_json::from_str(&fs::read_to_string(every_enum_wrong).unwrap()).unwrap();
    assert!(
        !validator.is_valid(&json),
        "the schema accepts every-enum-wrong.json"
    );
    for (pointer, value) in [
        ("/status", json!("gone")),
        ("/defaultReviewStatus", json!("approved")),
        ("/versions/0/channel", json!("beta")),
        ("/versions/0/reviewStatus", json!("pending")),
        ("/extensionId", json!("lookup")),
        ("/extensionId", json!("acme.-lookup")),
        ("/packageName", json!("@Acme/Lookup")),
        ("/schemaVersion", json!(2)),
        ("/versions", json!([])),
    ] {
        assert_refused(&validator, &base, pointer, value);
    }
}

/// Every `x-codes` member of `schema`, recursively.
fn x_codes(schema: &Value, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Array(codes)) = map.get("x-codes") {
                found.extend(codes.iter().map(|c| c.as_str().unwrap().to_owned()));
            }
            map.values().for_each(|v| x_codes(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| x_codes(v, found)),
        _ => {}
    }
}

#[test]
fn every_code_the_config_schema_names_is_a_config_code() {
    let mut found = Vec::new();
    x_codes(&schema("config"), &mut found);
    assert!(found.len() > 20, "codes named: {found:?}");
    let known: Vec<&str> = curupira_host::config::codes::ALL
        .iter()
        .map(|c| c.code)
        .collect();
    for code in &found {
        assert!(
            known.contains(&code.as_str()),
            "`{code}` is not a config code"
        );
    }
}

/// The codes of what the reference host accepts without using it, which the settings
/// schema leaves out (an editor marks it where `validate` warns).
const OUTSIDE_THE_SETTINGS_SCHEMA: [&str; 3] = [
    "config/unknown-key",
    "config/reference-key",
    "config/reference-default",
];

/// `(case name, config)` of every recorded `validate` of the reference host
/// (`recordings/reference-host/validate.json`), paths filled in with `workdir`.
fn recorded_settings(workdir: &str) -> Vec<(String, String)> {
    let text = fs::read_to_string(root().join("recordings/reference-host/validate.json")).unwrap();
    let recorded: Value = serde_json::from_str(&text).unwrap();
    let mut config = String::new();
    let mut found = Vec::new();
    for case in recorded["cases"].as_array().unwrap() {
        if let Some(lines) = case["config"].as_array() {
            config = lines
                .iter()
                .map(|line| line.as_str().unwrap())
                .collect::<Vec<_>>()
                .join("\n")
                .replace("<workdir>", workdir)
                .replace("<venv>", workdir)
                .replace("<home>", workdir);
        }
        if case["command"]
            .as_str()
            .unwrap()
            .starts_with("curupira validate --config settings.toml")
        {
            found.push((case["case"].as_str().unwrap().to_owned(), config.clone()));
        }
    }
    found
}

#[test]
fn every_recorded_settings_file_the_checker_takes_without_a_warning_fits_the_settings_schema() {
    let validator = validator("settings");
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().display().to_string();
    let mut fitted = 0;
    let mut refused_by_both = 0;
    let mut misfits = Vec::new();
    for (name, config) in recorded_settings(&workdir) {
        let loaded =
            curupira_host::config::check_bytes(config.as_bytes(), "settings.toml", dir.path());
        let Ok(json) = toml::from_str::<Value>(&config) else {
            continue;
        };
        let outside = loaded.report.diagnostics().iter().any(|d| {
            d.severity == curupira_diagnostics::Severity::Error
                || OUTSIDE_THE_SETTINGS_SCHEMA.contains(&d.code.as_ref())
        });
        if !outside {
            let errors: Vec<String> = validator
                .iter_errors(&json)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            if errors.is_empty() {
                fitted += 1;
            } else {
                misfits.push(format!("{name}: {}", errors.join("; ")));
            }
        } else if !validator.is_valid(&json) {
            refused_by_both += 1;
        }
    }
    assert!(
        misfits.is_empty(),
        "accepted by the checker without a warning, refused by the schema: {misfits:#?}"
    );
    // The recordings hold a baseline and its variations, most of them accepted.
    assert!(fitted >= 55, "{fitted} recorded files fit");
    assert!(refused_by_both >= 60, "{refused_by_both} refused by both");
}

#[test]
fn every_key_of_the_settings_schema_is_a_key_the_checker_knows() {
    let schema = schema("settings");
    let mut document = sample(&schema, &schema);
    // A profile takes only its provider's options; an automation names a plugin's
    // trigger.
    document["agents"]["profiles"]["x"] = json!({ "provider": "claude", "model": "m" });
    document["automations"]["x"]["trigger_type"] = json!("x/fake");
    for pointer in [
        "/settings/polling/poll_interval_seconds",
        "/settings/workspace/hooks/before_run",
        "/repositories/x/setup_script",
        "/agents/defaults/timezone",
        "/automations/x/checkout",
    ] {
        assert!(document.pointer(pointer).is_some(), "{pointer}");
    }
    assert_fits(
        &validator("settings"),
        &document,
        "a settings.toml with every key",
    );
    let text = toml::to_string(&document).unwrap();
    let unknown = unknown_keys(&text, "settings.toml");
    assert!(
        unknown.is_empty(),
        "keys in the settings schema that the checker does not know: {unknown:?}\n{text}"
    );
}

#[test]
fn the_settings_schema_refuses_what_the_reference_refuses_or_ignores() {
    let validator = validator("settings");
    let base = json!({
        "settings": { "workspace_dir": "/w", "polling": { "batch_size": 10 } },
        "repositories": { "api": { "remote": "https://github.com/acme/api.git" } },
        "agents": { "defaults": { "profile": "stub" },
            "profiles": { "stub": { "provider": "codex", "sandbox": "read-only" } } },
        "plugins": { "gh": { "type": "uvx", "args": ["--from", "curupira-plugins", "curupira-plugins"] } },
        "automations": { "fix": { "trigger_type": "gh/github-issues", "repository": "api",
            "prompt": "Fix {{ issue_title }}", "repo": "acme/api", "labels": ["bug"] } },
    });
    assert_fits(&validator, &base, "the base settings.toml");
    for (pointer, value) in [
        ("/automations/fix/trigger_type", json!("github-issues")),
        ("/agents/profiles/stub/provider", json!("claude-code")),
        // An option of another provider: ignored by the reference, a warning here.
        (
            "/agents/profiles/stub/permission_mode",
            json!("acceptEdits"),
        ),
        ("/settings/polling/batch_size", json!(1001)),
        ("/settings/log_level", json!("VERBOSE")),
        ("/settings/max_active_tasks", json!(0)),
        ("/settings/colour", json!("red")),
        ("/repositories/api/branch", json!("main")),
        ("/agents/defaults/profiles", json!("stub")),
    ] {
        assert_refused(&validator, &base, pointer, value);
    }
    let mut without = base.clone();
    without["repositories"]["api"] = json!({ "path": "/src/api" });
    assert!(
        !validator.is_valid(&without),
        "a repository without `remote`"
    );
    let mut bad_name = base.clone();
    bad_name["automations"] = json!({ "fix it": base["automations"]["fix"].clone() });
    assert!(
        !validator.is_valid(&bad_name),
        "an automation name with a space"
    );
    for key in ["repositories", "agents", "automations"] {
        let mut missing = base.clone();
        missing.as_object_mut().unwrap().remove(key);
        assert!(!validator.is_valid(&missing), "without [{key}]");
    }
    // The checker says the same of each change.
    let dir = tempfile::tempdir().unwrap();
    let text = toml::to_string(&base).unwrap();
    let loaded = curupira_host::config::check_bytes(text.as_bytes(), "settings.toml", dir.path());
    let said: Vec<&str> = loaded
        .report
        .diagnostics()
        .iter()
        .filter(|d| d.code != "config/agent-not-runnable")
        .map(|d| d.code.as_ref())
        .collect();
    assert!(
        said.is_empty(),
        "the base is clean for the checker too: {said:?}"
    );
}
