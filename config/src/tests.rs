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
trigger = "acme/github-issue"
prompt = "Fix #${issue_number} in ${repository}."
arguments = { labels = ["bug"], nested = { when = 1979-05-27T07:32:00Z, ratio = 0.5 } }
polling = { batch_size = 2 }
agent = { command = ["other-agent"] }

[automations.queue]
trigger = "jsonl"
prompt = "Do ${title}."

[plugins.gh]
type = "uvx"
args = ["--from", "curupira-plugins", "curupira-plugins"]
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
                process: None,
            },
            ExtensionConfig {
                name: "local".into(),
                source: ExtensionSource::Builtin("local-queue".into()),
                process: None,
            },
            ExtensionConfig {
                name: "gh".into(),
                source: ExtensionSource::Plugin {
                    launcher: PluginType::Uvx,
                    args: vec![
                        "--from".into(),
                        "curupira-plugins".into(),
                        "curupira-plugins".into()
                    ],
                },
                process: None,
            },
        ]
    );
    assert_eq!(
        config.extension_at("gh").as_str(),
        "/plugins/gh",
        "a plugin's table"
    );
    assert_eq!(config.extension_at("acme").as_str(), "/extensions/acme");
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
    assert_eq!(fix.trigger.to_string(), "acme/github-issue");
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
         `extensions`, `plugins` and `automations`",
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
fn an_extension_or_plugin_name_cannot_hold_a_slash() {
    let message = only(
        &replaced("[extensions.local]", "[extensions.\"lo/cal\"]"),
        codes::INVALID_VALUE,
        "/extensions/lo~1cal",
    );
    assert_eq!(
        message,
        "the extension name `lo/cal` cannot be used: it must be non-empty and may not contain \
         `/`, which separates `extension/type` in `trigger`"
    );
    let message = only(
        &replaced("[plugins.gh]", "[plugins.\"g/h\"]"),
        codes::INVALID_VALUE,
        "/plugins/g~1h",
    );
    assert!(
        message.starts_with("the plugin name `g/h` cannot be used"),
        "{message}"
    );
    // `:` separates nothing any more.
    let loaded = check(&replaced("[extensions.local]", "[extensions.\"lo:cal\"]"));
    assert!(
        loaded.report.diagnostics().is_empty(),
        "{:?}",
        found(&loaded)
    );
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
    for bad in [
        "acme/",
        "/github-issue",
        "",
        "acme/github/issue",
        "acme:",
        ":x",
        "a:b:c",
    ] {
        only(
            &replaced(
                "trigger = \"acme/github-issue\"",
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
    assert_eq!(names(&partial.extensions), ["local", "gh"]);
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
            workspace: false,
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
            ("fix-bugs", "acme/github-issue".to_owned()),
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

/// A config that writes every agent and workspace key, globally and in one
/// automation's override; the policy tests change one thing in it.
const POLICY: &str = r#"[settings.agent]
command = ["my-agent"]
max_concurrent = 4
timeout_seconds = 3600
stall_seconds = 600
kill_grace_seconds = 5
retries = 2
retry_backoff_seconds = 15
max_retry_backoff_seconds = 120

[settings.workspace]
mode = "worktree"
root = "trees"
base = "main"
cleanup = "never"
hook_timeout_seconds = 30
hooks = { after_create = "npm ci", before_run = "make setup" }

[automations.inherits]
trigger = "jsonl"
prompt = "Do ${title}."

[automations.overrides]
trigger = "jsonl"
prompt = "Do ${title}."
agent = { command = ["other"], max_concurrent = 2, timeout_seconds = 60, stall_seconds = 30, kill_grace_seconds = 0, retries = 7, retry_backoff_seconds = 1, max_retry_backoff_seconds = 4 }
workspace = { mode = "shared", root = "/srv/trees", base = "v1.0", cleanup = "always", hook_timeout_seconds = 5, hooks = { before_run = "true", after_run = "echo done" } }
"#;

fn policy_replaced(from: &str, to: &str) -> String {
    assert!(POLICY.contains(from), "{from}");
    POLICY.replacen(from, to, 1)
}

/// Replaces `from` by `to` in [`POLICY`] and asserts exactly one diagnostic: `code`
/// at `pointer`, on the line of `to` where the pointer's last key is, saying
/// `message`.
#[track_caller]
fn policy_case(from: &str, to: &str, code: &str, pointer: &str, message: &str) {
    let text = policy_replaced(from, to);
    // The line where the pointer's last key is written, from where `to` starts.
    let start = text.find(to).unwrap();
    let key = pointer.rsplit('/').next().unwrap();
    let at = start + text[start..].find(key).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let loaded = check(&text);
    let diagnostics = loaded.report.diagnostics();
    assert_eq!(diagnostics.len(), 1, "{to}: {:?}", found(&loaded));
    let diagnostic = &diagnostics[0];
    assert_eq!(
        (diagnostic.code.as_ref(), diagnostic.path.as_str()),
        (code, pointer),
        "{to}"
    );
    assert_eq!(diagnostic.message, message, "{to}");
    assert_eq!(diagnostic.line(), u32::try_from(line).ok(), "{to}");
}

#[test]
fn agent_and_workspace_keys_have_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = check_in(
        "[automations.a]\ntrigger = \"t\"\nprompt = \"p\"\n",
        dir.path(),
    );
    let config = loaded.config.unwrap();
    let agent = AgentPolicy {
        max_concurrent: 1,
        cap: None,
        timeout: None,
        stall: None,
        kill_grace: Duration::from_secs(10),
        retries: 0,
        retry_backoff: Duration::from_secs(10),
        max_retry_backoff: Duration::from_secs(300),
    };
    assert_eq!(AgentPolicy::default(), agent);
    assert_eq!(config.settings.agent, agent);
    assert_eq!(config.global_max_concurrent(), 1);
    let workspace = WorkspacePolicy {
        mode: WorkspaceMode::Shared,
        root: dir.path().join(".curupira/worktrees"),
        base: None,
        cleanup: Cleanup::OnSuccess,
        hook_timeout: Duration::from_secs(60),
        hooks: Hooks::default(),
    };
    assert_eq!(WorkspacePolicy::defaults_in(dir.path()), workspace);
    assert_eq!(config.settings.workspace, workspace);
    let automation = &config.automations[0];
    assert_eq!(automation.agent_policy, agent);
    assert_eq!(automation.agent_policy.concurrency(), 1);
    assert_eq!(automation.workspace_policy, workspace);
}

#[test]
fn global_agent_and_workspace_keys_reach_every_automation() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = check_in(POLICY, dir.path());
    assert!(
        loaded.report.diagnostics().is_empty(),
        "{:?}",
        found(&loaded)
    );
    let config = loaded.config.unwrap();
    let agent = AgentPolicy {
        max_concurrent: 4,
        cap: None,
        timeout: Some(Duration::from_secs(3600)),
        stall: Some(Duration::from_secs(600)),
        kill_grace: Duration::from_secs(5),
        retries: 2,
        retry_backoff: Duration::from_secs(15),
        max_retry_backoff: Duration::from_secs(120),
    };
    let workspace = WorkspacePolicy {
        mode: WorkspaceMode::Worktree,
        root: dir.path().join("trees"),
        base: Some("main".into()),
        cleanup: Cleanup::Never,
        hook_timeout: Duration::from_secs(30),
        hooks: Hooks {
            after_create: Some("npm ci".into()),
            before_run: Some("make setup".into()),
            after_run: None,
            before_remove: None,
        },
    };
    assert_eq!(config.settings.agent, agent);
    assert_eq!(config.settings.workspace, workspace);
    assert_eq!(config.global_max_concurrent(), 4);
    let inherits = config.automation("inherits").unwrap();
    assert_eq!(
        inherits.agent.as_deref(),
        Some(&["my-agent".to_owned()][..])
    );
    assert_eq!(inherits.agent_policy, agent);
    assert_eq!(inherits.agent_policy.concurrency(), 4);
    assert_eq!(inherits.workspace_policy, workspace);
}

#[test]
fn an_automation_overrides_each_agent_and_workspace_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = check_in(POLICY, dir.path()).config.unwrap();
    let overrides = config.automation("overrides").unwrap();
    assert_eq!(overrides.agent.as_deref(), Some(&["other".to_owned()][..]));
    assert_eq!(
        overrides.agent_policy,
        AgentPolicy {
            max_concurrent: 4,
            cap: Some(2),
            timeout: Some(Duration::from_secs(60)),
            stall: Some(Duration::from_secs(30)),
            kill_grace: Duration::ZERO,
            retries: 7,
            retry_backoff: Duration::from_secs(1),
            max_retry_backoff: Duration::from_secs(4),
        },
        "`max_concurrent` is a cap; the global limit stays"
    );
    assert_eq!(overrides.agent_policy.concurrency(), 2);
    assert_eq!(
        overrides.workspace_policy,
        WorkspacePolicy {
            mode: WorkspaceMode::Shared,
            root: "/srv/trees".into(),
            base: Some("v1.0".into()),
            cleanup: Cleanup::Always,
            hook_timeout: Duration::from_secs(5),
            hooks: Hooks {
                after_create: Some("npm ci".into()),
                before_run: Some("true".into()),
                after_run: Some("echo done".into()),
                before_remove: None,
            },
        },
        "hooks are overridden one by one"
    );

    // One key at a time: the rest is inherited.
    let text = policy_replaced(
        "agent = { command = [\"other\"], max_concurrent = 2, timeout_seconds = 60, stall_seconds = 30, kill_grace_seconds = 0, retries = 7, retry_backoff_seconds = 1, max_retry_backoff_seconds = 4 }",
        "agent = { stall_seconds = 45 }",
    )
    .replacen(
        "workspace = { mode = \"shared\", root = \"/srv/trees\", base = \"v1.0\", cleanup = \"always\", hook_timeout_seconds = 5, hooks = { before_run = \"true\", after_run = \"echo done\" } }",
        "workspace = { root = \"other-trees\" }",
        1,
    );
    let config = check_in(&text, dir.path()).config.unwrap();
    let overrides = config.automation("overrides").unwrap();
    assert_eq!(
        overrides.agent.as_deref(),
        Some(&["my-agent".to_owned()][..]),
        "the command is inherited"
    );
    assert_eq!(
        overrides.agent_policy,
        AgentPolicy {
            stall: Some(Duration::from_secs(45)),
            ..config.settings.agent
        }
    );
    assert_eq!(
        overrides.workspace_policy,
        WorkspacePolicy {
            root: dir.path().join("other-trees"),
            ..config.settings.workspace.clone()
        },
        "a relative root is relative to the config's folder"
    );
}

#[test]
fn an_automation_s_workspace_overrides_reach_its_policy() {
    let dir = tempfile::tempdir().unwrap();
    let config = check_in(POLICY, dir.path()).config.unwrap();
    let overrides = config.automation("overrides").unwrap();
    assert_eq!(
        overrides.workspace_policy,
        WorkspacePolicy {
            mode: WorkspaceMode::Shared,
            root: "/srv/trees".into(),
            base: Some("v1.0".into()),
            cleanup: Cleanup::Always,
            hook_timeout: Duration::from_secs(5),
            hooks: Hooks {
                after_create: Some("npm ci".into()),
                before_run: Some("true".into()),
                after_run: Some("echo done".into()),
                before_remove: None,
            },
        }
    );
}

#[test]
fn a_cap_above_the_global_limit_changes_nothing() {
    let text = policy_replaced("max_concurrent = 2,", "max_concurrent = 9,");
    let config = check(&text).config.unwrap();
    let overrides = config.automation("overrides").unwrap();
    assert_eq!(overrides.agent_policy.cap, Some(9));
    assert_eq!(overrides.agent_policy.concurrency(), 4);
}

#[test]
fn the_longest_retry_pause_follows_the_first() {
    // Unwritten, it is the default or the first pause when that is longer.
    let text = policy_replaced("max_retry_backoff_seconds = 120\n", "").replacen(
        "retry_backoff_seconds = 15",
        "retry_backoff_seconds = 600",
        1,
    );
    let config = check(&text).config.unwrap();
    assert_eq!(
        config.settings.agent.max_retry_backoff,
        Duration::from_secs(600)
    );
    let text = policy_replaced("max_retry_backoff_seconds = 120\n", "");
    let config = check(&text).config.unwrap();
    assert_eq!(
        config.settings.agent.max_retry_backoff,
        Duration::from_secs(300)
    );
}

#[test]
fn a_longest_retry_pause_below_the_first_is_refused_where_it_is_written() {
    policy_case(
        "max_retry_backoff_seconds = 120",
        "max_retry_backoff_seconds = 14",
        codes::INVALID_VALUE,
        "/settings/agent/max_retry_backoff_seconds",
        "`settings.agent.max_retry_backoff_seconds` is 14 but \
         `settings.agent.retry_backoff_seconds` is 15: the longest pause between retries \
         must be at least the first one; raise `max_retry_backoff_seconds` or lower \
         `retry_backoff_seconds`",
    );
    let text = policy_replaced("retry_backoff_seconds = 15\n", "").replacen(
        "max_retry_backoff_seconds = 120",
        "max_retry_backoff_seconds = 5",
        1,
    );
    let loaded = check(&text);
    assert_eq!(
        found(&loaded),
        [(
            "config/invalid-value".to_owned(),
            "/settings/agent/max_retry_backoff_seconds".to_owned(),
            8
        )],
        "against the default first pause, reported once (not again per automation)"
    );
    assert!(
        loaded.report.diagnostics()[0]
            .message
            .starts_with("`settings.agent.max_retry_backoff_seconds` is 5 but `retry_backoff_seconds` is 10 by default:")
    );
    // An automation's first pause above the global longest: at the automation's key.
    policy_case(
        "prompt = \"Do ${title}.\"\n\n[automations.overrides]",
        "prompt = \"Do ${title}.\"\nagent = { retry_backoff_seconds = 121 }\n\n[automations.overrides]",
        codes::INVALID_VALUE,
        "/automations/inherits/agent/retry_backoff_seconds",
        "`settings.agent.max_retry_backoff_seconds` is 120 but \
         `automations.inherits.agent.retry_backoff_seconds` is 121: the longest pause \
         between retries must be at least the first one; raise \
         `max_retry_backoff_seconds` or lower `retry_backoff_seconds`",
    );
    policy_case(
        "prompt = \"Do ${title}.\"\n\n[automations.overrides]",
        "prompt = \"Do ${title}.\"\nagent = { max_retry_backoff_seconds = 14 }\n\n[automations.overrides]",
        codes::INVALID_VALUE,
        "/automations/inherits/agent/max_retry_backoff_seconds",
        "`automations.inherits.agent.max_retry_backoff_seconds` is 14 but \
         `settings.agent.retry_backoff_seconds` is 15: the longest pause between retries \
         must be at least the first one; raise `max_retry_backoff_seconds` or lower \
         `retry_backoff_seconds`",
    );
}

#[test]
fn agent_numbers_out_of_range_or_not_whole_are_refused() {
    let seconds = |min: u64| format!("a whole number of seconds from {min} to 31536000 (one year)");
    let agents = "a whole number from 1 to 1000 (agents running at once)";
    let retries = "a whole number from 0 to 1000 (attempts after the first)";
    let cases: Vec<(&str, &str, &str, String)> = vec![
        (
            "max_concurrent = 4",
            "max_concurrent = 0",
            codes::INVALID_VALUE,
            format!("{agents}, found 0"),
        ),
        (
            "max_concurrent = 4",
            "max_concurrent = 1001",
            codes::INVALID_VALUE,
            format!("{agents}, found 1001"),
        ),
        (
            "max_concurrent = 4",
            "max_concurrent = 2.0",
            codes::INVALID_TYPE,
            format!("{agents}, found 2.0"),
        ),
        (
            "max_concurrent = 4",
            "max_concurrent = \"4\"",
            codes::INVALID_TYPE,
            format!("{agents}, found a string"),
        ),
        (
            "timeout_seconds = 3600",
            "timeout_seconds = 0",
            codes::INVALID_VALUE,
            format!("{}, found 0", seconds(1)),
        ),
        (
            "timeout_seconds = 3600",
            "timeout_seconds = -5",
            codes::INVALID_VALUE,
            format!("{}, found -5", seconds(1)),
        ),
        (
            "timeout_seconds = 3600",
            "timeout_seconds = 31536001",
            codes::INVALID_VALUE,
            format!("{}, found 31536001", seconds(1)),
        ),
        (
            "timeout_seconds = 3600",
            "timeout_seconds = 1.5",
            codes::INVALID_TYPE,
            format!("{}, found 1.5", seconds(1)),
        ),
        (
            "timeout_seconds = 3600",
            "timeout_seconds = \"1h\"",
            codes::INVALID_TYPE,
            format!("{}, found a string", seconds(1)),
        ),
        (
            "stall_seconds = 600",
            "stall_seconds = 0",
            codes::INVALID_VALUE,
            format!("{}, found 0", seconds(1)),
        ),
        (
            "stall_seconds = 600",
            "stall_seconds = inf",
            codes::INVALID_TYPE,
            format!("{}, found inf", seconds(1)),
        ),
        (
            "kill_grace_seconds = 5",
            "kill_grace_seconds = -1",
            codes::INVALID_VALUE,
            format!("{}, found -1", seconds(0)),
        ),
        (
            "kill_grace_seconds = 5",
            "kill_grace_seconds = true",
            codes::INVALID_TYPE,
            format!("{}, found a boolean", seconds(0)),
        ),
        (
            "retries = 2",
            "retries = -1",
            codes::INVALID_VALUE,
            format!("{retries}, found -1"),
        ),
        (
            "retries = 2",
            "retries = 1001",
            codes::INVALID_VALUE,
            format!("{retries}, found 1001"),
        ),
        (
            "retries = 2",
            "retries = 0.5",
            codes::INVALID_TYPE,
            format!("{retries}, found 0.5"),
        ),
        (
            "retry_backoff_seconds = 15",
            "retry_backoff_seconds = -15",
            codes::INVALID_VALUE,
            format!("{}, found -15", seconds(0)),
        ),
        (
            "max_retry_backoff_seconds = 120",
            "max_retry_backoff_seconds = 9999999999",
            codes::INVALID_VALUE,
            format!("{}, found 9999999999", seconds(0)),
        ),
    ];
    for (from, to, code, expected) in cases {
        let key = to.split(' ').next().unwrap();
        policy_case(
            from,
            to,
            code,
            &format!("/settings/agent/{key}"),
            &format!("`settings.agent.{key}` must be {expected}"),
        );
    }
    // The same checks in an automation's override.
    policy_case(
        "agent = { command = [\"other\"], max_concurrent = 2,",
        "agent = { command = [\"other\"], max_concurrent = 0,",
        codes::INVALID_VALUE,
        "/automations/overrides/agent/max_concurrent",
        &format!("`automations.overrides.agent.max_concurrent` must be {agents}, found 0"),
    );
    policy_case(
        "timeout_seconds = 60,",
        "timeout_seconds = 60.0,",
        codes::INVALID_TYPE,
        "/automations/overrides/agent/timeout_seconds",
        &format!(
            "`automations.overrides.agent.timeout_seconds` must be {}, found 60.0",
            seconds(1)
        ),
    );
    policy_case(
        "kill_grace_seconds = 0,",
        "kill_grace_seconds = -2,",
        codes::INVALID_VALUE,
        "/automations/overrides/agent/kill_grace_seconds",
        &format!(
            "`automations.overrides.agent.kill_grace_seconds` must be {}, found -2",
            seconds(0)
        ),
    );
}

#[test]
fn workspace_values_are_checked() {
    let cases = [
        (
            "mode = \"worktree\"",
            "mode = \"worktre\"",
            codes::INVALID_VALUE,
            "/settings/workspace/mode",
            "`settings.workspace.mode` must be `shared` or `worktree`, found `worktre`; did \
             you mean `worktree`?",
        ),
        (
            "mode = \"worktree\"",
            "mode = \"copy\"",
            codes::INVALID_VALUE,
            "/settings/workspace/mode",
            "`settings.workspace.mode` must be `shared` or `worktree`, found `copy`",
        ),
        (
            "mode = \"worktree\"",
            "mode = 1",
            codes::INVALID_TYPE,
            "/settings/workspace/mode",
            "`settings.workspace.mode` must be a string, found an integer",
        ),
        (
            "cleanup = \"never\"",
            "cleanup = \"on_success\"",
            codes::INVALID_VALUE,
            "/settings/workspace/cleanup",
            "`settings.workspace.cleanup` must be `on-success`, `always` or `never`, found \
             `on_success`; did you mean `on-success`?",
        ),
        (
            "cleanup = \"never\"",
            "cleanup = \"sometimes\"",
            codes::INVALID_VALUE,
            "/settings/workspace/cleanup",
            "`settings.workspace.cleanup` must be `on-success`, `always` or `never`, found \
             `sometimes`",
        ),
        (
            "root = \"trees\"",
            "root = \"\"",
            codes::INVALID_VALUE,
            "/settings/workspace/root",
            "`settings.workspace.root` must not be empty",
        ),
        (
            "root = \"trees\"",
            "root = [\"trees\"]",
            codes::INVALID_TYPE,
            "/settings/workspace/root",
            "`settings.workspace.root` must be a string, found an array",
        ),
        (
            "base = \"main\"",
            "base = \"\"",
            codes::INVALID_VALUE,
            "/settings/workspace/base",
            "`settings.workspace.base` must not be empty",
        ),
        (
            "base = \"main\"",
            "base = \"--orphan\"",
            codes::INVALID_VALUE,
            "/settings/workspace/base",
            "`settings.workspace.base` must be a Git revision (a branch, tag or commit such \
             as `main`), and cannot start with `-` (Git would read it as an option); found \
             `--orphan`",
        ),
        (
            "base = \"main\"",
            "base = \"ma\\nin\"",
            codes::INVALID_VALUE,
            "/settings/workspace/base",
            "`settings.workspace.base` must be a Git revision (a branch, tag or commit such \
             as `main`), and cannot hold control characters; found `ma\\nin`",
        ),
        (
            "hook_timeout_seconds = 30",
            "hook_timeout_seconds = 0",
            codes::INVALID_VALUE,
            "/settings/workspace/hook_timeout_seconds",
            "`settings.workspace.hook_timeout_seconds` must be a whole number of seconds \
             from 1 to 31536000 (one year), found 0",
        ),
        (
            "hook_timeout_seconds = 30",
            "hook_timeout_seconds = 0.5",
            codes::INVALID_TYPE,
            "/settings/workspace/hook_timeout_seconds",
            "`settings.workspace.hook_timeout_seconds` must be a whole number of seconds \
             from 1 to 31536000 (one year), found 0.5",
        ),
        (
            "hooks = { after_create = \"npm ci\", before_run = \"make setup\" }",
            "hooks = \"npm ci\"",
            codes::INVALID_TYPE,
            "/settings/workspace/hooks",
            "`settings.workspace.hooks` must be a table, found a string",
        ),
        (
            "after_create = \"npm ci\"",
            "after_create = \"  \"",
            codes::INVALID_VALUE,
            "/settings/workspace/hooks/after_create",
            "`settings.workspace.hooks.after_create` must not be empty: give a shell \
             command, or leave the hook out",
        ),
        (
            "before_run = \"make setup\"",
            "before_run = [\"make\", \"setup\"]",
            codes::INVALID_TYPE,
            "/settings/workspace/hooks/before_run",
            "`settings.workspace.hooks.before_run` must be a string (a shell command), \
             found an array",
        ),
        // An automation's override is checked the same way.
        (
            "cleanup = \"always\"",
            "cleanup = \"allways\"",
            codes::INVALID_VALUE,
            "/automations/overrides/workspace/cleanup",
            "`automations.overrides.workspace.cleanup` must be `on-success`, `always` or \
             `never`, found `allways`; did you mean `always`?",
        ),
        (
            "mode = \"shared\"",
            "mode = \"Shared\"",
            codes::INVALID_VALUE,
            "/automations/overrides/workspace/mode",
            "`automations.overrides.workspace.mode` must be `shared` or `worktree`, found \
             `Shared`; did you mean `shared`?",
        ),
        (
            "after_run = \"echo done\"",
            "after_run = \"\"",
            codes::INVALID_VALUE,
            "/automations/overrides/workspace/hooks/after_run",
            "`automations.overrides.workspace.hooks.after_run` must not be empty: give a \
             shell command, or leave the hook out",
        ),
        (
            "hook_timeout_seconds = 5",
            "hook_timeout_seconds = 31536001",
            codes::INVALID_VALUE,
            "/automations/overrides/workspace/hook_timeout_seconds",
            "`automations.overrides.workspace.hook_timeout_seconds` must be a whole number \
             of seconds from 1 to 31536000 (one year), found 31536001",
        ),
    ];
    for (from, to, code, pointer, message) in cases {
        policy_case(from, to, code, pointer, message);
    }
}

#[test]
fn agent_and_workspace_tables_must_be_tables() {
    policy_case(
        "prompt = \"Do ${title}.\"\n\n[automations.overrides]",
        "prompt = \"Do ${title}.\"\nworkspace = \"worktree\"\n\n[automations.overrides]",
        codes::INVALID_TYPE,
        "/automations/inherits/workspace",
        "`automations.inherits.workspace` must be a table, found a string",
    );
    policy_case(
        "prompt = \"Do ${title}.\"\n\n[automations.overrides]",
        "prompt = \"Do ${title}.\"\nagent = [\"my-agent\"]\n\n[automations.overrides]",
        codes::INVALID_TYPE,
        "/automations/inherits/agent",
        "`automations.inherits.agent` must be a table, found an array",
    );
    policy_case(
        "[settings.workspace]\nmode = \"worktree\"\nroot = \"trees\"\nbase = \"main\"\ncleanup = \"never\"\nhook_timeout_seconds = 30\nhooks = { after_create = \"npm ci\", before_run = \"make setup\" }\n",
        "[settings]\nworkspace = 3\n",
        codes::INVALID_TYPE,
        "/settings/workspace",
        "`settings.workspace` must be a table, found an integer",
    );
}

#[test]
fn misspelt_agent_and_workspace_keys_get_a_did_you_mean() {
    let cases = [
        (
            "max_concurrent = 4",
            "max_concurent = 4",
            "/settings/agent/max_concurent",
            "unknown key `max_concurent` in `settings.agent`; did you mean `max_concurrent`?",
        ),
        (
            "kill_grace_seconds = 5",
            "kill_grace_second = 5",
            "/settings/agent/kill_grace_second",
            "unknown key `kill_grace_second` in `settings.agent`; did you mean \
             `kill_grace_seconds`?",
        ),
        (
            "cleanup = \"never\"",
            "clean_up = \"never\"",
            "/settings/workspace/clean_up",
            "unknown key `clean_up` in `settings.workspace`; did you mean `cleanup`?",
        ),
        (
            "after_create = \"npm ci\"",
            "after_craete = \"npm ci\"",
            "/settings/workspace/hooks/after_craete",
            "unknown key `after_craete` in `settings.workspace.hooks`; did you mean \
             `after_create`?",
        ),
        (
            "retries = 7",
            "retrys = 7",
            "/automations/overrides/agent/retrys",
            "unknown key `retrys` in `automations.overrides.agent`; did you mean `retries`?",
        ),
        (
            "base = \"v1.0\"",
            "bsae = \"v1.0\"",
            "/automations/overrides/workspace/bsae",
            "unknown key `bsae` in `automations.overrides.workspace`; did you mean `base`?",
        ),
    ];
    for (from, to, pointer, message) in cases {
        let text = policy_replaced(from, to);
        let loaded = check(&text);
        assert!(
            loaded.config.is_some(),
            "a warning does not stop the config"
        );
        let diagnostics = loaded.report.diagnostics();
        assert_eq!(diagnostics.len(), 1, "{to}: {:?}", found(&loaded));
        assert_eq!(diagnostics[0].severity, Severity::Warning);
        assert_eq!(
            (diagnostics[0].code.as_ref(), diagnostics[0].path.as_str()),
            (codes::UNKNOWN_KEY, pointer)
        );
        assert_eq!(diagnostics[0].message, message);
    }
}

#[test]
fn only_a_broken_agent_command_hides_missing_agents() {
    // A bad time limit in `[settings.agent]` says nothing about the command.
    let text = replaced(
        "[settings.agent]\ncommand = [\"my-agent\", \"--print\"]\n",
        "[settings.agent]\ntimeout_seconds = 0\n",
    );
    let partial = check(&text).partial.unwrap();
    assert!(!partial.unusable.agent && !partial.unusable.workspace);
    let missing: Vec<String> = partial
        .missing_agents(&[])
        .iter()
        .map(|d| d.path.to_string())
        .collect();
    assert_eq!(missing, ["/automations/queue/agent/command"]);

    let text = policy_replaced("mode = \"worktree\"", "mode = \"tree\"");
    let partial = check(&text).partial.unwrap();
    assert!(partial.unusable.workspace && !partial.unusable.agent);
    assert_eq!(
        partial.automations.len(),
        2,
        "the automations themselves are fine"
    );
}

#[test]
fn the_module_documentation_example_checks_clean() {
    let source = include_str!("lib.rs");
    let example: String = source
        .lines()
        .skip_while(|line| *line != "//! ```toml")
        .skip(1)
        .take_while(|line| *line != "//! ```")
        .map(|line| format!("{}\n", line.strip_prefix("//! ").unwrap_or("")))
        .collect();
    assert!(example.contains("[settings.workspace]"));
    let loaded = check(&example);
    assert!(
        loaded.report.diagnostics().is_empty(),
        "{:?}",
        found(&loaded)
    );
}

#[test]
fn the_ledger_is_on_by_default_in_the_state_folder() {
    let dir = tempfile::tempdir().unwrap();
    let config = check_in(VALID, dir.path()).config.unwrap();
    assert!(config.settings.ledger.enabled);
    assert_eq!(
        config.settings.ledger.path,
        dir.path().join(".curupira/ledger.sqlite")
    );
    assert_eq!(
        config.settings.ledger.state_dir(),
        dir.path().join(".curupira")
    );

    let text = replaced(
        "[settings.protocol]",
        "[settings.ledger]\nenabled = false\npath = \"state/tasks.db\"\n\n[settings.protocol]",
    );
    let config = check_in(&text, dir.path()).config.unwrap();
    assert!(!config.settings.ledger.enabled);
    assert_eq!(
        config.settings.ledger.path,
        dir.path().join("state/tasks.db")
    );
    assert_eq!(config.settings.ledger.state_dir(), dir.path().join("state"));
}

#[test]
fn the_attempt_history_keeps_what_the_ledger_settings_say() {
    let dir = tempfile::tempdir().unwrap();
    let config = check_in(VALID, dir.path()).config.unwrap();
    let defaults = &config.settings.ledger;
    assert_eq!(
        defaults.history_age(),
        std::time::Duration::from_secs(30 * 24 * 60 * 60)
    );
    assert_eq!(defaults.history_per_task, 100);
    let text = replaced(
        "[settings.protocol]",
        "[settings.ledger]\nhistory_days = 2\nhistory_per_task = 5\n\n[settings.protocol]",
    );
    let config = check_in(&text, dir.path()).config.unwrap();
    let kept = &config.settings.ledger;
    assert_eq!(
        kept.history_age(),
        std::time::Duration::from_secs(2 * 24 * 60 * 60)
    );
    assert_eq!(kept.history_per_task, 5);
    let ledger = |body: &str| {
        replaced(
            "[settings.protocol]",
            &format!("[settings.ledger]\n{body}\n\n[settings.protocol]"),
        )
    };
    let message = only(
        &ledger("history_days = 0"),
        codes::INVALID_VALUE,
        "/settings/ledger/history_days",
    );
    assert_eq!(
        message,
        "`settings.ledger.history_days` must be a whole number from 1 to 36500 (days), found 0"
    );
    only(
        &ledger("history_per_task = \"many\""),
        codes::INVALID_TYPE,
        "/settings/ledger/history_per_task",
    );
    // And the logs' cap.
    assert_eq!(config.settings.ledger.log_max_bytes, 10 << 20);
    let text = ledger("log_max_bytes = 65536");
    let config = check_in(&text, dir.path()).config.unwrap();
    assert_eq!(config.settings.ledger.log_max_bytes, 65536);
    let message = only(
        &ledger("log_max_bytes = 100"),
        codes::INVALID_VALUE,
        "/settings/ledger/log_max_bytes",
    );
    assert_eq!(
        message,
        "`settings.ledger.log_max_bytes` must be a whole number from 4096 to 1073741824 \
         (bytes), found 100"
    );
}

#[test]
fn ledger_keys_are_checked_like_every_other_key() {
    let ledger = |body: &str| {
        replaced(
            "[settings.protocol]",
            &format!("[settings.ledger]\n{body}\n\n[settings.protocol]"),
        )
    };
    let message = only(
        &ledger("enabled = \"no\""),
        codes::INVALID_TYPE,
        "/settings/ledger/enabled",
    );
    assert_eq!(
        message,
        "`settings.ledger.enabled` must be a boolean, found a string"
    );
    only(
        &ledger("path = 3"),
        codes::INVALID_TYPE,
        "/settings/ledger/path",
    );
    let message = only(
        &ledger("path = \"\""),
        codes::INVALID_VALUE,
        "/settings/ledger/path",
    );
    assert_eq!(message, "`settings.ledger.path` must not be empty");
    let message = only(
        &ledger("enable = false"),
        codes::UNKNOWN_KEY,
        "/settings/ledger/enable",
    );
    assert!(message.contains("did you mean `enabled`?"), "{message}");
    only(
        &replaced(
            "repository = \"github.com/acme/widgets\"",
            "repository = \"github.com/acme/widgets\"\nledger = 1",
        ),
        codes::INVALID_TYPE,
        "/settings/ledger",
    );
}

#[test]
fn an_argument_named_like_a_core_key_is_a_warning() {
    let text = "[extensions.local]\nbuiltin = \"local-queue\"\n\n[automations.a]\n\
                trigger = \"jsonl\"\nprompt = \"x\"\narguments = { path = \"q.jsonl\", prompt = \"y\" }\n";
    let message = only(
        text,
        "config/core-key-argument",
        "/automations/a/arguments/prompt",
    );
    assert!(
        message.contains("the argument `prompt` is never seen"),
        "{message}"
    );
    let loaded = check(text);
    assert!(loaded.config.is_some(), "a warning only");
}

#[test]
fn a_plugin_is_registered_as_the_reference_host_registers_it() {
    let loaded = check(&replaced("type = \"uvx\"", "type = \"npx\""));
    assert!(
        loaded.report.diagnostics().is_empty(),
        "{:?}",
        found(&loaded)
    );
    let config = loaded.config.unwrap();
    let gh = config.extensions.iter().find(|e| e.name == "gh").unwrap();
    assert_eq!(gh.section(), "plugins");
    assert!(
        matches!(&gh.source, ExtensionSource::Plugin { launcher: PluginType::Npx, args } if args.len() == 3),
        "{gh:?}"
    );
    let message = only(
        &replaced("type = \"uvx\"\n", ""),
        codes::MISSING_KEY,
        "/plugins/gh/type",
    );
    assert_eq!(
        message,
        "plugin `gh` needs `type = \"uvx\"` or `type = \"npx\"`: the program that runs its `args`"
    );
    only(
        &replaced("type = \"uvx\"", "type = 1"),
        codes::INVALID_TYPE,
        "/plugins/gh/type",
    );
}

#[test]
fn a_plugin_type_is_uvx_or_npx_and_nothing_else() {
    for other in ["executable", "command"] {
        let message = only(
            &replaced("type = \"uvx\"", &format!("type = \"{other}\"")),
            codes::PLUGIN_TYPE,
            "/plugins/gh/type",
        );
        assert_eq!(
            message,
            format!(
                "`plugins.gh.type` must be `uvx` or `npx` (the reference host launches plugins \
                 with nothing else), found `{other}`; to run a program directly, register it as \
                 `[extensions.gh] path = \"folder\"` with a manifest whose `[launch]` has \
                 `type = \"executable\"`"
            )
        );
    }
    let message = only(
        &replaced("type = \"uvx\"", "type = \"uvz\""),
        codes::PLUGIN_TYPE,
        "/plugins/gh/type",
    );
    assert!(
        message.ends_with("found `uvz`; did you mean `uvx`?"),
        "{message}"
    );
    let message = only(
        &replaced("type = \"uvx\"", "type = \"NPX\""),
        codes::PLUGIN_TYPE,
        "/plugins/gh/type",
    );
    assert!(message.ends_with("did you mean `npx`?"), "{message}");
}

#[test]
fn plugin_args_are_a_non_empty_array_of_strings() {
    let args = "args = [\"--from\", \"curupira-plugins\", \"curupira-plugins\"]";
    let message = only(&replaced(args, ""), codes::MISSING_KEY, "/plugins/gh/args");
    assert_eq!(
        message,
        "plugin `gh` needs `args = [...]`: what `uvx` runs, such as \
         `[\"--from\", \"curupira-plugins\", \"curupira-plugins\"]`"
    );
    let message = only(
        &replaced(args, "args = []"),
        codes::INVALID_VALUE,
        "/plugins/gh/args",
    );
    assert_eq!(
        message,
        "`plugins.gh.args` must not be empty: it is what `uvx` runs"
    );
    only(
        &replaced(args, "args = \"curupira-plugins\""),
        codes::INVALID_TYPE,
        "/plugins/gh/args",
    );
    only(
        &replaced(args, "args = [\"python\", 3]"),
        codes::INVALID_TYPE,
        "/plugins/gh/args/1",
    );
    // An empty argument is passed as written.
    let loaded = check(&replaced(args, "args = [\"ext\", \"\"]"));
    assert!(
        loaded.report.diagnostics().is_empty(),
        "{:?}",
        found(&loaded)
    );
}

#[test]
fn a_broken_plugin_is_unusable_and_the_rest_is_kept() {
    let loaded = check(&replaced("args = [\"--from\"", "args = [1"));
    let partial = loaded.partial.expect("a partial config");
    assert_eq!(partial.unusable.extensions, ["gh"]);
    let names: Vec<&str> = partial.extensions.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["acme", "local"]);
    assert_eq!(partial.automations.len(), 2, "the automations are fine");
    let table = "[plugins.gh]\ntype = \"uvx\"\nargs = [\"--from\", \"curupira-plugins\", \"curupira-plugins\"]";
    let loaded = check(&replaced(table, "[plugins]\ngh = 3"));
    assert_eq!(
        found(&loaded),
        [(
            "config/invalid-type".to_owned(),
            "/plugins/gh".to_owned(),
            37
        )]
    );
    assert_eq!(loaded.partial.unwrap().unusable.extensions, ["gh"]);
}

#[test]
fn unknown_plugin_keys_are_warnings_with_did_you_mean() {
    let args = "args = [\"--from\", \"curupira-plugins\", \"curupira-plugins\"]";
    let loaded = check(&replaced(
        args,
        &format!("{args}\nargz = [\"x\"]\nprogram = \"python3\""),
    ));
    let diagnostics = loaded.report.diagnostics();
    assert_eq!(
        found(&loaded),
        [
            (
                "config/unknown-key".to_owned(),
                "/plugins/gh/argz".to_owned(),
                39
            ),
            (
                "config/unknown-key".to_owned(),
                "/plugins/gh/program".to_owned(),
                40
            ),
        ]
    );
    assert!(diagnostics.iter().all(|d| d.severity == Severity::Warning));
    assert!(
        diagnostics[0].message.ends_with("did you mean `args`?"),
        "{}",
        diagnostics[0].message
    );
    assert!(loaded.config.is_some(), "warnings only");
}

#[test]
fn a_plugin_and_an_extension_share_one_namespace() {
    let message = only(
        &replaced("[plugins.gh]", "[plugins.acme]"),
        codes::DUPLICATE_NAME,
        "/plugins/acme",
    );
    assert_eq!(
        message,
        "`[plugins.acme]` has the name of `[extensions.acme]`: both tables share one \
         namespace, since an automation names either as `acme/type`; rename one of them"
    );
    let loaded = check(&replaced("[plugins.gh]", "[plugins.acme]"));
    let partial = loaded.partial.unwrap();
    assert_eq!(
        partial.unusable.extensions,
        ["acme"],
        "the plugin is set aside"
    );
    let acme: Vec<&ExtensionConfig> = partial
        .extensions
        .iter()
        .filter(|e| e.name == "acme")
        .collect();
    assert_eq!(acme.len(), 1);
    assert_eq!(acme[0].section(), "extensions", "the extension is kept");
    assert_eq!(partial.extension_at("acme").as_str(), "/extensions/acme");
}

#[test]
fn a_trigger_is_a_local_name_or_name_slash_local() {
    let config = check(&replaced(
        "trigger = \"jsonl\"",
        "trigger = \"gh/github-issues\"",
    ))
    .config
    .unwrap();
    assert_eq!(
        config.automations[1].trigger,
        TriggerRef {
            extension: Some("gh".into()),
            trigger_type: "github-issues".into()
        }
    );
    assert_eq!(
        config.automations[1].trigger.to_string(),
        "gh/github-issues"
    );
    // A name with `:` in it is fine before the `/`.
    let config = check(&replaced("trigger = \"jsonl\"", "trigger = \"a:b/jsonl\""))
        .config
        .unwrap();
    assert_eq!(
        config.automations[1].trigger.extension.as_deref(),
        Some("a:b")
    );
}

#[test]
fn the_colon_form_is_refused_with_the_slash_spelling() {
    let loaded = check(&replaced(
        "trigger = \"acme/github-issue\"",
        "trigger = \"acme:github-issue\"",
    ));
    assert_eq!(
        found(&loaded),
        [(
            "config/colon-trigger".to_owned(),
            "/automations/fix-bugs/trigger".to_owned(),
            26
        )]
    );
    assert_eq!(
        loaded.report.diagnostics()[0].message,
        "`trigger = \"acme:github-issue\"` uses `:`, which no longer separates the extension \
         from the trigger type; did you mean `acme/github-issue`?"
    );
    let partial = loaded.partial.unwrap();
    assert_eq!(partial.unusable.automations[0].name, "fix-bugs");
    assert_eq!(partial.unusable.automations[0].trigger, None);
}

/// The reference host's `validate` verdicts on `[plugins]` (recorded in
/// `../shared/conformance/curupira-wire/settings/verdicts.json`): what it accepts has
/// no error under `/plugins` here, and what it refuses has exactly one there, for the
/// same reason. The other tables of those files are the reference host's own
/// (`[repositories]`, `[agents]`, `trigger_type`), which this host does not read.
#[test]
fn plugins_get_the_reference_host_s_verdicts() {
    let path = curupira_test_support::conformance::folder("curupira-wire/settings/verdicts.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "skipped: {} is missing (no ../shared beside this checkout)",
            path.display()
        );
        return;
    };
    let verdicts: Value = serde_json::from_str(&text).unwrap();
    let mut seen = 0;
    for case in verdicts["validate"].as_array().unwrap() {
        let name = case["case"].as_str().unwrap();
        if !(name == "minimal" || name.starts_with("plugins-")) {
            continue;
        }
        seen += 1;
        let config: Vec<&str> = case["config"]
            .as_array()
            .unwrap()
            .iter()
            .map(|line| line.as_str().unwrap())
            .collect();
        let loaded = check(&config.join("\n"));
        let ours: Vec<(String, String)> = loaded
            .report
            .diagnostics()
            .iter()
            .filter(|d| d.is_error() && d.path.as_str().starts_with("/plugins"))
            .map(|d| (d.code.to_string(), d.path.to_string()))
            .collect();
        let output: Vec<&str> = case["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|line| line.as_str().unwrap())
            .collect();
        let output = output.join("\n");
        let expected: Vec<(String, String)> = if case["exit_code"] == 0 {
            Vec::new()
        } else if output.contains("unknown variant") {
            vec![(
                codes::PLUGIN_TYPE.to_string(),
                "/plugins/rec/type".to_owned(),
            )]
        } else if output.contains("missing field `type`") {
            vec![(
                codes::MISSING_KEY.to_string(),
                "/plugins/rec/type".to_owned(),
            )]
        } else if output.contains("requires a non-empty args array") {
            vec![(
                codes::INVALID_VALUE.to_string(),
                "/plugins/rec/args".to_owned(),
            )]
        } else {
            panic!("a refusal this test does not know: {output}");
        };
        // Every problem in one pass: a `[plugins.rec]` without `type` lacks `args`
        // too, which the reference host, stopping at the first, does not say.
        assert_eq!(
            ours.is_empty(),
            expected.is_empty(),
            "case `{name}`: {ours:?}"
        );
        for error in &expected {
            assert!(
                ours.contains(error),
                "case `{name}`: {ours:?}, not {error:?}"
            );
        }
    }
    assert!(seen >= 5, "the plugin cases: {seen}");
}

#[test]
fn an_extensions_process_mode_is_round_or_run() {
    let text = |mode: &str| {
        format!(
            "[extensions.local]\nbuiltin = \"local-queue\"\nprocess = \"{mode}\"\n\n\
             [automations.a]\ntrigger = \"jsonl\"\nprompt = \"x\"\n\
             arguments = {{ path = \"q.jsonl\" }}\n"
        )
    };
    let loaded = check(&text("round"));
    let config = loaded.config.unwrap();
    assert_eq!(config.extensions[0].process, Some(ProcessMode::Round));
    let message = only(
        &text("rounds"),
        "config/invalid-value",
        "/extensions/local/process",
    );
    assert!(message.contains("did you mean `round`?"), "{message}");
}
