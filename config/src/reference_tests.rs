//! The reference form read into the model: what each key becomes, and what is said.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use curupira_diagnostics::Severity;

use super::*;

const BASE: &str = r#"[settings]
workspace_dir = "~/ws"
max_active_tasks = 3
task_timeout_minutes = 2

[settings.polling]
batch_size = 7
poll_interval_seconds = 5

[repositories.demo]
remote = "git@github.com:acme/api.git"
setup_script = "scripts/setup.sh"

[repositories.local]
remote = "https://github.com/acme/local.git"
path = "/srv/local"

[agents.defaults]
profile = "stub"

[agents.profiles.stub]
provider = "claude"
model = "opus"

[agents.profiles.other]
provider = "codex"

[plugins.rec]
type = "uvx"
args = ["rec"]

[automations.e1]
trigger_type = "rec/items"
repository = "demo"
path = "items.json"
labels = ["bug"]
prompt = "Item {{ title }}"

[automations.e2]
trigger_type = "rec/items"
repository = "local"
profile = "other"
checkout = "main"
prompt = "x"
"#;

fn check(text: &str) -> Loaded {
    check_bytes_at_home(
        text.as_bytes(),
        "settings.toml",
        Path::new("/etc/cfg"),
        Some(Path::new("/home/u")),
    )
}

/// `(code, pointer, severity)` of every diagnostic.
fn said(loaded: &Loaded) -> Vec<(String, String, Severity)> {
    loaded
        .report
        .diagnostics()
        .iter()
        .map(|d| (d.code.to_string(), d.path.to_string(), d.severity))
        .collect()
}

#[test]
fn a_reference_file_reads_into_the_shared_model() {
    let loaded = check(BASE);
    assert!(said(&loaded).is_empty(), "{:?}", said(&loaded));
    let config = loaded.config.expect("no error");
    assert_eq!(config.form, Form::Reference);
    let reference = config.settings.reference.as_ref().unwrap();
    assert_eq!(reference.workspace_dir, Path::new("/home/u/ws"));
    assert_eq!(reference.default_profile.as_deref(), Some("stub"));
    let demo = reference.repository("demo").unwrap();
    assert_eq!(demo.checkout, Path::new("/home/u/ws/demo"));
    assert_eq!(demo.setup_script.as_deref(), Some("scripts/setup.sh"));
    assert_eq!(
        demo.identity(),
        "api",
        "an scp-like remote gives its last segment"
    );
    let local = reference.repository("local").unwrap();
    assert_eq!(local.checkout, Path::new("/srv/local"));
    assert_eq!(local.identity(), "acme/local");

    assert_eq!(config.settings.agent.max_concurrent, 3);
    let e1 = config.automation("e1").unwrap();
    assert_eq!(e1.form, Form::Reference);
    assert_eq!(
        e1.trigger,
        TriggerRef {
            extension: Some("rec".into()),
            trigger_type: "items".into()
        }
    );
    assert_eq!(e1.repository.as_deref(), Some("demo"));
    assert_eq!(e1.checkout, Checkout::Worktree);
    assert_eq!(e1.profile.as_deref(), Some("stub"));
    let provider = e1.provider.as_ref().unwrap();
    assert_eq!(
        provider.profile.provider(),
        curupira_agents::Provider::Claude
    );
    assert_eq!(e1.agent, None);
    assert_eq!(e1.agent_policy.timeout, Some(Duration::from_secs(120)));
    assert_eq!(e1.polling.batch_size, 7);
    assert_eq!(e1.polling.interval, Duration::from_secs(5));
    assert_eq!(e1.prompt, "Item {{ title }}");
    // Every key but the three the host sends itself is the trigger's.
    let keys: Vec<&str> = e1.arguments.keys().map(String::as_str).collect();
    assert_eq!(keys, ["labels", "path"]);

    let e2 = config.automation("e2").unwrap();
    assert_eq!(e2.checkout, Checkout::Main);
    assert_eq!(e2.profile.as_deref(), Some("other"));
    let keys: Vec<&str> = e2.arguments.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["checkout", "profile"],
        "as the reference passes them"
    );
    assert!(config.missing_agents(&[]).is_empty());
}

#[test]
fn the_reference_defaults_apply_when_nothing_is_written() {
    let text = BASE
        .replace("workspace_dir = \"~/ws\"\n", "")
        .replace("poll_interval_seconds = 5\n", "")
        .replace("task_timeout_minutes = 2\n", "task_timeout_minutes = 0\n");
    let config = check(&text).config.unwrap();
    let reference = config.settings.reference.as_ref().unwrap();
    assert_eq!(
        reference.workspace_dir,
        Path::new("/home/u/.curupira/workspaces")
    );
    let e1 = config.automation("e1").unwrap();
    assert_eq!(
        e1.polling.interval,
        Duration::from_secs(DEFAULT_POLL_INTERVAL_SECONDS)
    );
    assert_eq!(e1.agent_policy.timeout, None, "0 minutes is no limit");
}

#[test]
fn what_the_reference_ignores_is_a_warning_that_says_so() {
    let text = BASE
        .replace(
            "max_active_tasks = 3\n",
            "max_active_tasks = 0\notlp_endpoint = \"http://x\"\nmax_pending_tasks = 4\n",
        )
        .replace("batch_size = 7\n", "batch_size = 0\n")
        .replace("model = \"opus\"\n", "model = \"opus\"\nargs = [\"--x\"]\n")
        .replace("checkout = \"main\"\n", "checkout = \"dev\"\n")
        + "\n[environment]\nFOO = \"bar\"\n";
    let loaded = check(&text);
    let config = loaded.config.as_ref().expect("warnings only");
    let warned: Vec<(String, String)> = said(&loaded)
        .into_iter()
        .map(|(code, path, severity)| {
            assert_eq!(severity, Severity::Warning);
            (code, path)
        })
        .collect();
    let key = |path: &str| ("config/reference-key".to_owned(), path.to_owned());
    assert_eq!(
        warned,
        [
            key("/settings/max_active_tasks"),
            key("/settings/otlp_endpoint"),
            key("/settings/max_pending_tasks"),
            key("/settings/polling/batch_size"),
            key("/agents/profiles/stub/args"),
            key("/automations/e2/checkout"),
            key("/environment"),
        ]
    );
    assert_eq!(config.settings.agent.max_concurrent, 1);
    assert_eq!(config.automation("e1").unwrap().polling.batch_size, 1);
    assert_eq!(
        config.automation("e2").unwrap().checkout,
        Checkout::Worktree
    );
}

#[test]
fn a_profile_the_reference_fails_at_dispatch_is_a_warning_and_no_agent() {
    let text = BASE.replace(
        "[agents.profiles.other]\nprovider = \"codex\"\n",
        "[agents.profiles.other]\nprovider = \"gemini\"\neffort = \"high\"\n",
    );
    let loaded = check(&text);
    assert_eq!(
        said(&loaded),
        [(
            "config/profile-fails".to_owned(),
            "/agents/profiles/other".to_owned(),
            Severity::Warning
        )]
    );
    let config = loaded.config.unwrap();
    let e2 = config.automation("e2").unwrap();
    assert!(e2.provider.is_none());
    assert!(
        e2.agent_error
            .as_deref()
            .unwrap()
            .contains("unsupported profile field \"effort\""),
        "{:?}",
        e2.agent_error
    );
}

#[test]
fn what_the_reference_refuses_is_an_error_at_its_key() {
    let cases = [
        (
            "repository = \"demo\"\n",
            "repository = \"nope\"\n",
            "config/unknown-reference",
            "/automations/e1/repository",
        ),
        (
            "profile = \"other\"\n",
            "profile = \"nop\"\n",
            "config/unknown-reference",
            "/automations/e2/profile",
        ),
        (
            "trigger_type = \"rec/items\"\nrepository = \"demo\"\n",
            "trigger_type = \"items\"\nrepository = \"demo\"\n",
            "config/invalid-value",
            "/automations/e1/trigger_type",
        ),
        (
            "[automations.e2]",
            "[automations.\"e 2\"]",
            "config/invalid-name",
            "/automations/e 2",
        ),
        (
            "[repositories.local]",
            "[repositories.\"lo.cal\"]",
            "config/invalid-name",
            "/repositories/lo.cal",
        ),
        (
            "setup_script = \"scripts/setup.sh\"",
            "setup_script = \"../setup.sh\"",
            "config/invalid-value",
            "/repositories/demo/setup_script",
        ),
        (
            "remote = \"git@github.com:acme/api.git\"\n",
            "",
            "config/missing-key",
            "/repositories/demo/remote",
        ),
        (
            "profile = \"stub\"\n",
            "",
            "config/missing-key",
            "/agents/defaults/profile",
        ),
        (
            "provider = \"claude\"\n",
            "provider = \"Claude\"\n",
            "config/invalid-value",
            "/agents/profiles/stub/provider",
        ),
        ("log_level_placeholder", "", "", ""),
    ];
    for (from, to, code, pointer) in cases {
        if code.is_empty() {
            continue;
        }
        assert!(BASE.contains(from), "{from}");
        let loaded = check(&BASE.replacen(from, to, 1));
        let errors: Vec<(String, String)> = said(&loaded)
            .into_iter()
            .filter(|(_, _, severity)| *severity == Severity::Error)
            .map(|(code, path, _)| (code, path))
            .collect();
        assert!(
            errors.contains(&(code.to_owned(), pointer.to_owned())),
            "{to:?}: {errors:?}"
        );
    }
    let level = |level: &str| {
        let loaded = check(&BASE.replace(
            "[settings]\n",
            &format!("[settings]\nlog_level = \"{level}\"\n"),
        ));
        loaded
            .report
            .diagnostics()
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
    };
    assert!(level("WARNING").is_empty());
    let messages = level("debug");
    assert_eq!(messages.len(), 1);
    assert!(
        messages[0].contains("did you mean `DEBUG`?"),
        "{messages:?}"
    );
}

#[test]
fn the_two_forms_in_one_automation_are_refused_with_the_choice() {
    let loaded = check(&BASE.replacen(
        "trigger_type = \"rec/items\"\n",
        "trigger_type = \"rec/items\"\ntrigger = \"rec/items\"\n",
        1,
    ));
    let conflict = loaded
        .report
        .diagnostics()
        .iter()
        .find(|d| d.code == "config/form-conflict")
        .unwrap();
    assert_eq!(conflict.path.as_str(), "/automations/e1/trigger_type");
    assert!(
        conflict
            .message
            .contains("keep `trigger_type` to share the file")
    );
}

#[test]
fn a_reference_automation_without_trigger_type_takes_the_reference_default() {
    let loaded = check(&BASE.replacen("trigger_type = \"rec/items\"\n", "", 1));
    let config = loaded.config.as_ref().unwrap();
    assert_eq!(
        config.automation("e1").unwrap().trigger,
        TriggerRef {
            extension: Some("plugins-py".into()),
            trigger_type: "github-issues".into()
        }
    );
    assert_eq!(
        said(&loaded),
        [(
            "config/reference-default".to_owned(),
            "/automations/e1/trigger_type".to_owned(),
            Severity::Warning
        )]
    );
}

#[test]
fn one_meaning_is_written_once() {
    let loaded = check(&BASE.replace(
        "[plugins.rec]",
        "[settings.agent]\nmax_concurrent = 2\n\n[plugins.rec]",
    ));
    let errors: Vec<(String, String)> = said(&loaded)
        .into_iter()
        .map(|(code, path, _)| (code, path))
        .collect();
    assert!(
        errors.contains(&(
            "config/form-conflict".to_owned(),
            "/settings/max_active_tasks".to_owned()
        )),
        "{errors:?}"
    );
}

#[test]
fn a_reference_key_in_our_form_is_not_mistaken_for_one_of_ours() {
    let text = "[settings]\nworkspace_dir = \"/ws\"\n\n[settings.polling]\npoll_interval_seconds = 3\n\n\
                [automations.a]\ntrigger = \"t\"\nprompt = \"p\"\n";
    let loaded = check_bytes_at_home(text.as_bytes(), "curupira.toml", Path::new("/x"), None);
    let config = loaded.config.as_ref().unwrap();
    assert_eq!(config.form, Form::Ours);
    assert!(config.settings.reference.is_none());
    let messages: Vec<&str> = loaded
        .report
        .diagnostics()
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    for message in messages {
        assert!(
            message.contains("read only in a file of that form"),
            "{message}"
        );
        assert!(!message.contains("did you mean"), "{message}");
    }
}

#[test]
fn a_file_called_settings_toml_is_the_reference_s_unless_it_is_plainly_ours() {
    let empty = check("");
    assert_eq!(empty.partial.as_ref().unwrap().form, Form::Reference);
    let missing: Vec<String> = said(&empty).into_iter().map(|(_, path, _)| path).collect();
    assert_eq!(missing, ["/repositories", "/agents", "/automations"]);
    let ours = check("[automations.a]\ntrigger = \"t\"\nprompt = \"p\"\n");
    assert_eq!(ours.config.unwrap().form, Form::Ours);
}

#[test]
fn the_repository_variable_is_the_reference_s_for_every_recorded_remote() {
    // recordings/reference-host/README.md, "${repository}".
    for (remote, identity) in [
        ("file:///tmp/w/remotes/acme/widgets.git", "acme/widgets"),
        ("https://github.com/acme/api.git", "acme/api"),
        ("https://github.com/acme/api", "acme/api"),
        ("git@github.com:acme/api.git", "api"),
        ("ssh://git@example.com:2222/group/sub/proj.git", "sub/proj"),
        ("file:///srv/git/widgets.git", "git/widgets"),
        ("not a url", "not a url"),
        ("https://gitlab.com/g/sub/proj.git/", "proj.git/"),
    ] {
        assert_eq!(reference_identity(remote), identity, "{remote}");
    }
}
