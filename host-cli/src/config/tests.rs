//! One test per config rule: a valid config with one thing changed, then the code and
//! the pointer (and where it matters the line and column) of what is reported.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use curupira_diagnostics::{JsonPointer, Severity};
use serde_json::Value;

use super::*;

/// A config that checks clean; tests change one thing in it.
const VALID: &str = r#"[settings]
repository = "github.com/acme/widgets"

[settings.polling]
batch_size = 4
interval_seconds = 30

[settings.agent]
command = ["my-agent", "--print"]

[settings.protocol]
max_frame_bytes = 1048576

[settings.timeouts]
initialize = 2
request = 3.5
shutdown = 1

[extensions.acme]
path = "extensions/acme"

[extensions.local]
builtin = "local-queue"

[automations.fix-bugs]
trigger = "acme:github-issue"
prompt = "Fix #${issue_number} in ${repository}."
arguments = { labels = ["bug"], nested = { when = 1979-05-27T07:32:00Z, ratio = 0.5 } }
polling = { batch_size = 2 }
agent = { command = ["other-agent"] }

[automations.queue]
trigger = "jsonl"
prompt = "Do ${title}."
"#;

fn check(text: &str) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    check_in(text, dir.path())
}

fn check_in(text: &str, dir: &Path) -> Loaded {
    check_bytes(text.as_bytes(), "curupira.toml", dir)
}

/// `(code, pointer, line)` of every diagnostic.
fn found(loaded: &Loaded) -> Vec<(String, String, u32)> {
    loaded
        .report
        .diagnostics()
        .iter()
        .map(|d| {
            (
                d.code.to_string(),
                d.path.to_string(),
                d.line().unwrap_or(0),
            )
        })
        .collect()
}

/// Asserts exactly one diagnostic, with this code and pointer, and returns its message.
#[track_caller]
fn only(text: &str, code: &str, pointer: &str) -> String {
    let loaded = check(text);
    let diagnostics = loaded.report.diagnostics();
    assert_eq!(diagnostics.len(), 1, "{:?}", found(&loaded));
    assert_eq!(diagnostics[0].code, code, "{:?}", found(&loaded));
    assert_eq!(diagnostics[0].path.as_str(), pointer);
    diagnostics[0].message.clone()
}

fn replaced(from: &str, to: &str) -> String {
    assert!(VALID.contains(from), "{from}");
    VALID.replacen(from, to, 1)
}

#[test]
fn the_valid_config_reads_into_types() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = check_in(VALID, dir.path());
    assert!(
        loaded.report.diagnostics().is_empty(),
        "{:?}",
        found(&loaded)
    );
    let config = loaded.config.unwrap();
    assert_eq!(
        config.settings.repository.as_deref(),
        Some("github.com/acme/widgets")
    );
    assert_eq!(config.settings.max_frame_bytes, 1_048_576);
    assert_eq!(
        config.settings.timeouts,
        Timeouts {
            initialize: Duration::from_secs(2),
            request: Duration::from_millis(3500),
            shutdown: Duration::from_secs(1),
        }
    );
    assert_eq!(
        config.extensions,
        [
            ExtensionConfig {
                name: "acme".into(),
                source: ExtensionSource::Folder(dir.path().join("extensions/acme")),
            },
            ExtensionConfig {
                name: "local".into(),
                source: ExtensionSource::Builtin("local-queue".into()),
            },
        ]
    );
    let names: Vec<&str> = config.automations.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["fix-bugs", "queue"], "file order, not name order");
    let fix = &config.automations[0];
    assert_eq!(
        fix.trigger,
        TriggerRef {
            extension: Some("acme".into()),
            trigger_type: "github-issue".into()
        }
    );
    assert_eq!(fix.trigger.to_string(), "acme:github-issue");
    assert_eq!(
        Value::Object(fix.arguments.clone()),
        serde_json::json!({"labels": ["bug"], "nested": {"when": "1979-05-27T07:32:00Z", "ratio": 0.5}})
    );
    assert_eq!(
        fix.polling,
        Polling {
            batch_size: 2,
            interval: Duration::from_secs(30)
        }
    );
    assert_eq!(fix.agent.as_deref(), Some(&["other-agent".to_owned()][..]));
    let queue = &config.automations[1];
    assert_eq!(queue.trigger.extension, None);
    assert_eq!(
        queue.polling.batch_size, 4,
        "inherited from [settings.polling]"
    );
    assert!(queue.arguments.is_empty());
    assert_eq!(
        queue.agent.as_deref(),
        Some(&["my-agent".to_owned(), "--print".to_owned()][..])
    );
}

#[test]
fn defaults_fill_what_is_not_written() {
    let loaded = check("[automations.a]\ntrigger = \"t\"\nprompt = \"p\"\n");
    let config = loaded.config.unwrap();
    assert_eq!(config.settings.max_frame_bytes, 16 * 1024 * 1024);
    assert_eq!(config.settings.timeouts, Timeouts::default());
    assert_eq!(config.settings.timeouts.request, Duration::from_secs(30));
    assert_eq!(
        config.automations[0].polling,
        Polling {
            batch_size: DEFAULT_BATCH_SIZE,
            interval: Duration::from_secs(60)
        }
    );
    assert_eq!(config.automations[0].agent, None);
}

#[test]
fn the_settings_give_the_client_options() {
    let dir = tempfile::tempdir().unwrap();
    let config = check_in(VALID, dir.path()).config.unwrap();
    let options = config.settings.client_options();
    assert_eq!(
        options.timeouts,
        curupira_client::Timeouts {
            initialize: Duration::from_secs(2),
            request: Duration::from_millis(3500),
            shutdown: Duration::from_secs(1),
        }
    );
    assert_eq!(
        options.limits,
        curupira_client::Limits {
            max_frame_bytes: 1_048_576,
            ..curupira_client::Limits::default()
        }
    );
    let unset = check("[automations.a]\ntrigger = \"t\"\nprompt = \"p\"\n");
    assert_eq!(
        unset.config.unwrap().settings.client_options(),
        curupira_client::Options::default(),
        "the config's defaults are the client's"
    );
}

#[test]
fn unknown_keys_are_warnings_with_did_you_mean() {
    let text = replaced("batch_size = 4", "batch_sise = 4");
    let loaded = check(&text);
    assert!(
        loaded.config.is_some(),
        "a warning does not stop the config"
    );
    assert_eq!(
        found(&loaded),
        [(
            "config/unknown-key".to_owned(),
            "/settings/polling/batch_sise".to_owned(),
            5
        )]
    );
    let diagnostic = &loaded.report.diagnostics()[0];
    assert_eq!(diagnostic.severity, Severity::Warning);
    assert_eq!(diagnostic.column(), Some(1), "points at the key");
    assert_eq!(
        diagnostic.message,
        "unknown key `batch_sise` in `settings.polling`; did you mean `batch_size`?"
    );
    let message = only(
        &format!("colour = 1\n{VALID}"),
        codes::UNKNOWN_KEY,
        "/colour",
    );
    assert_eq!(
        message,
        "unknown key `colour` at the top level is ignored; known keys are `settings`, \
         `extensions` and `automations`",
        "no known key is close, so all are listed"
    );
    only(
        &replaced("trigger = \"jsonl\"", "trigger = \"jsonl\"\npromt = \"x\""),
        codes::UNKNOWN_KEY,
        "/automations/queue/promt",
    );
}

#[test]
fn arguments_belong_to_the_trigger() {
    let loaded = check(&replaced(
        "labels = [\"bug\"]",
        "anything_at_all = [\"bug\"]",
    ));
    assert!(
        loaded.report.diagnostics().is_empty(),
        "{:?}",
        found(&loaded)
    );
}

#[test]
fn a_missing_trigger_or_prompt_is_reported() {
    only(
        &replaced("trigger = \"jsonl\"\n", ""),
        codes::MISSING_KEY,
        "/automations/queue/trigger",
    );
    let message = only(
        &replaced("prompt = \"Do ${title}.\"\n", ""),
        codes::MISSING_KEY,
        "/automations/queue/prompt",
    );
    assert!(message.contains("`prompt_file"), "{message}");
}

#[test]
fn prompt_and_prompt_file_exclude_each_other() {
    let message = only(
        &replaced(
            "prompt = \"Do ${title}.\"",
            "prompt = \"Do ${title}.\"\nprompt_file = \"p.md\"",
        ),
        codes::PROMPT_CONFLICT,
        "/automations/queue/prompt_file",
    );
    assert_eq!(
        message,
        "automation `queue` has both `prompt` and `prompt_file`; keep exactly one"
    );
}

#[test]
fn a_prompt_file_is_read_relative_to_the_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("prompts")).unwrap();
    std::fs::write(dir.path().join("prompts/q.md"), "From a file: ${title}\n").unwrap();
    let text = replaced(
        "prompt = \"Do ${title}.\"",
        "prompt_file = \"prompts/q.md\"",
    );
    let config = check_in(&text, dir.path()).config.unwrap();
    assert_eq!(config.automations[1].prompt, "From a file: ${title}\n");
    assert_eq!(
        config.automations[1].prompt_file,
        Some(dir.path().join("prompts/q.md"))
    );

    let loaded = check_in(
        &replaced("prompt = \"Do ${title}.\"", "prompt_file = \"nope.md\""),
        dir.path(),
    );
    assert_eq!(
        found(&loaded),
        [(
            "config/prompt-file".to_owned(),
            "/automations/queue/prompt_file".to_owned(),
            34
        )]
    );
    std::fs::write(dir.path().join("bad.md"), b"\xff\xfe").unwrap();
    let loaded = check_in(
        &replaced("prompt = \"Do ${title}.\"", "prompt_file = \"bad.md\""),
        dir.path(),
    );
    assert!(
        loaded.report.diagnostics()[0]
            .message
            .contains("is not UTF-8")
    );
}

#[test]
fn batch_size_must_be_at_least_one() {
    let message = only(
        &replaced("batch_size = 4", "batch_size = 0"),
        codes::BATCH_SIZE,
        "/settings/polling/batch_size",
    );
    assert_eq!(
        message,
        "`batch_size` must be at least 1 (polls per round), found 0"
    );
    only(
        &replaced(
            "polling = { batch_size = 2 }",
            "polling = { batch_size = -3 }",
        ),
        codes::BATCH_SIZE,
        "/automations/fix-bugs/polling/batch_size",
    );
    only(
        &replaced("batch_size = 4", "batch_size = \"4\""),
        codes::INVALID_TYPE,
        "/settings/polling/batch_size",
    );
}

#[test]
fn numbers_out_of_range_are_invalid_values() {
    only(
        &replaced("initialize = 2", "initialize = 0"),
        codes::INVALID_VALUE,
        "/settings/timeouts/initialize",
    );
    only(
        &replaced("request = 3.5", "request = -1"),
        codes::INVALID_VALUE,
        "/settings/timeouts/request",
    );
    only(
        &replaced("shutdown = 1", "shutdown = nan"),
        codes::INVALID_VALUE,
        "/settings/timeouts/shutdown",
    );
    only(
        &replaced("interval_seconds = 30", "interval_seconds = -1"),
        codes::INVALID_VALUE,
        "/settings/polling/interval_seconds",
    );
    assert!(
        check(&replaced("interval_seconds = 30", "interval_seconds = 0"))
            .config
            .is_some()
    );
    only(
        &replaced("max_frame_bytes = 1048576", "max_frame_bytes = 4294967296"),
        codes::INVALID_VALUE,
        "/settings/protocol/max_frame_bytes",
    );
    only(
        &replaced("max_frame_bytes = 1048576", "max_frame_bytes = 0"),
        codes::INVALID_VALUE,
        "/settings/protocol/max_frame_bytes",
    );
}

#[test]
fn wrong_types_name_what_was_expected() {
    let message = only(
        &replaced("repository = \"github.com/acme/widgets\"", "repository = 5"),
        codes::INVALID_TYPE,
        "/settings/repository",
    );
    assert_eq!(
        message,
        "`settings.repository` must be a string, found an integer"
    );
    only(
        &format!(
            "settings = 3\n{}",
            &VALID[VALID.find("[extensions.acme]").unwrap()..]
        ),
        codes::INVALID_TYPE,
        "/settings",
    );
    only(
        &replaced(
            "command = [\"my-agent\", \"--print\"]",
            "command = [\"my-agent\", 5]",
        ),
        codes::INVALID_TYPE,
        "/settings/agent/command/1",
    );
    only(
        &replaced(
            "command = [\"my-agent\", \"--print\"]",
            "command = \"my-agent\"",
        ),
        codes::INVALID_TYPE,
        "/settings/agent/command",
    );
    only(
        &replaced(
            "arguments = { labels = [\"bug\"], nested = { when = 1979-05-27T07:32:00Z, ratio = 0.5 } }",
            "arguments = 3",
        ),
        codes::INVALID_TYPE,
        "/automations/fix-bugs/arguments",
    );
}

#[test]
fn an_empty_agent_command_is_refused() {
    only(
        &replaced("command = [\"my-agent\", \"--print\"]", "command = []"),
        codes::INVALID_VALUE,
        "/settings/agent/command",
    );
    only(
        &replaced("command = [\"my-agent\", \"--print\"]", "command = [\"\"]"),
        codes::INVALID_VALUE,
        "/settings/agent/command/0",
    );
}

#[test]
fn missing_agents_are_found_per_automation() {
    let text = replaced(
        "[settings.agent]\ncommand = [\"my-agent\", \"--print\"]\n",
        "",
    );
    let config = check(&text).config.unwrap();
    let missing = config.missing_agents(&[]);
    let at: Vec<(&str, &str)> = missing
        .iter()
        .map(|d| (d.code.as_ref(), d.path.as_str()))
        .collect();
    assert_eq!(
        at,
        [(codes::MISSING_AGENT, "/automations/queue/agent/command")]
    );
    assert_eq!(
        missing[0].line(),
        Some(30),
        "located at the automation's table"
    );
}

#[test]
fn automations_are_selected_by_name_and_unknown_names_are_refused() {
    let config = check(VALID).config.unwrap();
    let names = |selected: Vec<&Automation>| -> Vec<String> {
        selected.into_iter().map(|a| a.name.clone()).collect()
    };
    assert_eq!(names(config.selected(&[])), ["fix-bugs", "queue"]);
    assert_eq!(names(config.selected(&["queue".to_owned()])), ["queue"]);
    assert_eq!(config.check_selection(&["queue".to_owned()]), Ok(()));
    let error = config
        .check_selection(&["queue".to_owned(), "fix-bug".to_owned()])
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`--automation fix-bug`: `curupira.toml` has no automation called `fix-bug` (it has: \
         fix-bugs, queue); did you mean `fix-bugs`?"
    );
}

#[test]
fn an_extension_needs_exactly_one_source() {
    only(
        &replaced(
            "builtin = \"local-queue\"",
            "builtin = \"local-queue\"\npath = \"x\"",
        ),
        codes::EXTENSION_CONFLICT,
        "/extensions/local/builtin",
    );
    only(
        &replaced("builtin = \"local-queue\"", ""),
        codes::MISSING_KEY,
        "/extensions/local/path",
    );
    let message = only(
        &replaced("builtin = \"local-queue\"", "builtin = \"local-queu\""),
        codes::UNKNOWN_BUILTIN,
        "/extensions/local/builtin",
    );
    assert!(
        message.ends_with("did you mean `local-queue`?"),
        "{message}"
    );
    only(
        &replaced("path = \"extensions/acme\"", "path = \"\""),
        codes::INVALID_VALUE,
        "/extensions/acme/path",
    );
}

#[test]
fn an_extension_name_cannot_hold_a_colon() {
    let message = only(
        &replaced("[extensions.local]", "[extensions.\"lo:cal\"]"),
        codes::INVALID_VALUE,
        "/extensions/lo:cal",
    );
    assert!(message.contains("may not contain `:`"), "{message}");
}

#[test]
fn a_key_that_is_not_bare_is_quoted_in_messages() {
    // `curupira_diagnostics::toml::dotted`, shared with the manifest: the place reads
    // as TOML would write it.
    let message = only(
        &replaced(
            "[extensions.acme]\npath = \"extensions/acme\"",
            "[extensions.\"ac me\"]\npath = \"\"",
        ),
        codes::INVALID_VALUE,
        "/extensions/ac me/path",
    );
    assert_eq!(message, "`extensions.\"ac me\".path` must not be empty");
}

#[test]
fn a_trigger_must_name_a_type() {
    for bad in ["acme:", ":github-issue", ""] {
        only(
            &replaced(
                "trigger = \"acme:github-issue\"",
                &format!("trigger = \"{bad}\""),
            ),
            codes::INVALID_VALUE,
            "/automations/fix-bugs/trigger",
        );
    }
}

#[test]
fn json_cannot_hold_nan() {
    only(
        &replaced("ratio = 0.5", "ratio = nan"),
        codes::INVALID_VALUE,
        "/automations/fix-bugs/arguments/nested/ratio",
    );
}

#[test]
fn no_automation_is_a_warning() {
    let loaded = check("[extensions.local]\nbuiltin = \"local-queue\"\n");
    assert!(loaded.config.is_some());
    assert_eq!(
        found(&loaded),
        [(
            "config/no-automations".to_owned(),
            "/automations".to_owned(),
            1
        )]
    );
}

#[test]
fn syntax_and_encoding_errors_stop_everything_else() {
    let loaded = check("[settings\nbatch_size = 0\n");
    assert!(loaded.config.is_none());
    assert!(
        found(&loaded)
            .iter()
            .all(|(code, _, _)| code == codes::SYNTAX)
    );
    assert_eq!(found(&loaded)[0].2, 1);
    let loaded = check_bytes(b"a = 1\nb = \"\xff\"\n", "curupira.toml", Path::new("."));
    assert_eq!(
        found(&loaded),
        [("config/encoding".to_owned(), String::new(), 2)]
    );
    // The shared wording of `curupira_diagnostics::decode_utf8`, which names the byte.
    let encoding = &loaded.report.diagnostics()[0];
    assert_eq!(encoding.column(), Some(6));
    assert!(
        encoding
            .message
            .starts_with("the file is not UTF-8: byte 0xFF at line 2, column 6"),
        "{}",
        encoding.message
    );
}

#[test]
fn every_problem_is_reported_in_one_pass() {
    let text = VALID
        .replacen("batch_size = 4", "batch_size = 0", 1)
        .replacen("initialize = 2", "initialize = \"2\"", 1)
        .replacen("prompt = \"Do ${title}.\"", "promp = \"x\"", 1);
    let loaded = check(&text);
    assert!(loaded.config.is_none());
    let codes: Vec<String> = found(&loaded)
        .into_iter()
        .map(|(code, _, _)| code)
        .collect();
    assert_eq!(
        codes,
        [
            "config/batch-size",
            "config/invalid-type",
            "config/missing-key",
            "config/unknown-key"
        ]
    );
}

#[test]
fn diagnostics_can_point_inside_a_prompt() {
    let config = check(VALID).config.unwrap();
    let prompt = &config.automations[0].prompt;
    let start = prompt.find("${repository}").unwrap();
    let diagnostic = config.diagnostic_in_string(
        Severity::Warning,
        codes::UNKNOWN_PLACEHOLDER,
        &JsonPointer::root()
            .key("automations")
            .key("fix-bugs")
            .key("prompt"),
        prompt,
        start..start + "${repository}".len(),
        "demo",
    );
    assert_eq!(
        (diagnostic.line(), diagnostic.column()),
        (Some(27), Some(35))
    );
    assert_eq!(
        &config.text()[diagnostic.span.clone().unwrap()],
        "${repository}"
    );
}

#[test]
fn a_config_with_errors_keeps_what_could_be_read() {
    let text = VALID
        .replacen(
            "prompt = \"Do ${title}.\"",
            "prompt = \"Do ${title}.\"\nprompt_file = \"x.md\"",
            1,
        )
        .replacen("path = \"extensions/acme\"", "path = \"\"", 1);
    let loaded = check(&text);
    assert!(loaded.config.is_none());
    assert_eq!(
        found(&loaded)
            .into_iter()
            .map(|(code, pointer, _)| (code, pointer))
            .collect::<Vec<_>>(),
        [
            (
                "config/invalid-value".to_owned(),
                "/extensions/acme/path".to_owned()
            ),
            (
                "config/prompt-conflict".to_owned(),
                "/automations/queue/prompt_file".to_owned()
            ),
        ]
    );
    let partial = loaded.partial.as_ref().unwrap();
    assert!(std::ptr::eq(loaded.readable().unwrap(), partial));
    assert!(!partial.is_complete());
    let names = |extensions: &[ExtensionConfig]| -> Vec<String> {
        extensions.iter().map(|e| e.name.clone()).collect()
    };
    assert_eq!(names(&partial.extensions), ["local"]);
    let automations: Vec<&str> = partial
        .automations
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(automations, ["fix-bugs"]);
    assert_eq!(
        partial.unusable,
        Unusable {
            connection: false,
            agent: false,
            extensions: vec!["acme".into()],
            automations: vec![UnusableAutomation {
                name: "queue".into(),
                trigger: Some(TriggerRef {
                    extension: None,
                    trigger_type: "jsonl".into()
                }),
                without_agent: false,
            }],
        }
    );
    let triggers: Vec<(&str, String)> = partial
        .triggers()
        .into_iter()
        .map(|(name, trigger)| (name, trigger.to_string()))
        .collect();
    assert_eq!(
        triggers,
        [
            ("fix-bugs", "acme:github-issue".to_owned()),
            ("queue", "jsonl".to_owned())
        ],
        "usable or not, in file order"
    );
    assert_eq!(partial.check_selection(&["queue".to_owned()]), Ok(()));
    assert!(check(VALID).config.unwrap().is_complete());
}

#[test]
fn a_partial_config_knows_which_agents_are_missing() {
    // No agent anywhere: the unusable automation misses one too.
    let text = replaced(
        "[settings.agent]\ncommand = [\"my-agent\", \"--print\"]\n",
        "",
    )
    .replacen("trigger = \"jsonl\"", "trigger = 5", 1);
    let partial = check(&text).partial.unwrap();
    assert_eq!(
        partial.unusable.automations,
        [UnusableAutomation {
            name: "queue".into(),
            trigger: None,
            without_agent: true,
        }]
    );
    assert!(partial.triggers().iter().all(|(name, _)| *name != "queue"));
    let missing: Vec<String> = partial
        .missing_agents(&[])
        .iter()
        .map(|d| d.path.to_string())
        .collect();
    assert_eq!(missing, ["/automations/queue/agent/command"]);

    // A broken `[settings.agent]` is reported once, not again as a missing agent.
    let text = replaced("command = [\"my-agent\", \"--print\"]", "command = []");
    let partial = check(&text).partial.unwrap();
    assert!(partial.unusable.agent && !partial.unusable.connection);
    assert_eq!(
        partial.automations.len(),
        2,
        "the automations themselves are fine"
    );
    assert!(partial.missing_agents(&[]).is_empty());

    // Timeouts are needed to talk to extensions.
    let text = replaced("request = 3.5", "request = 0");
    let partial = check(&text).partial.unwrap();
    assert!(partial.unusable.connection && !partial.unusable.agent);
}

#[test]
fn a_part_that_is_not_a_table_is_unusable() {
    let text = VALID.replacen(
        "[extensions.local]",
        "[automations]\nodd = \"x\"\n\n[extensions.local]",
        1,
    );
    let loaded = check(&text);
    assert_eq!(
        found(&loaded),
        [(
            "config/invalid-type".to_owned(),
            "/automations/odd".to_owned(),
            23
        )]
    );
    let partial = loaded.partial.unwrap();
    assert_eq!(
        partial.unusable.automations,
        [UnusableAutomation {
            name: "odd".into(),
            trigger: None,
            without_agent: false,
        }]
    );
    assert_eq!(partial.automations.len(), 2);
}
