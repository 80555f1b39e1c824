//! The argument vectors this crate builds, against what the reference host (curupira
//! 0.4.0) ran, recorded by `recordings/record.py` into
//! `recordings/reference-0.4.0.json`: every provider, every option alone and all
//! together, fresh and resumed after a SIGKILL, the errors it gave, OpenCode's version
//! detection and the one-argument limit.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use curupira_agents::stream::Reader;
use curupira_agents::{
    InvocationError, OpencodeApi, Profile, Provider, Request, VersionError, opencode_api,
};
use serde_json::{Map, Value};

fn recordings() -> Value {
    let text = include_str!("../recordings/reference-0.4.0.json");
    serde_json::from_str(text).expect("the recordings are JSON")
}

fn options(profile: &str) -> Map<String, Value> {
    toml::from_str(profile).expect("a recorded profile is TOML")
}

/// Where the reference host ignored a key that we refuse: a key no option of that
/// provider has is a typo to us (`unknown profile field`), not silence.
const STRICTER: [(&str, &str); 1] = [("claude", "sandbox = \"x\"\nforce = true")];

fn request<'a>(provider: Provider, prompt: &'a str, session: Option<&'a str>) -> Request<'a> {
    let worktree = Path::new("<worktree>");
    match (session, provider) {
        // The recordings write the host-named Copilot session as `<uuid>`.
        (None, Provider::Copilot) => Request {
            session: Some("<uuid>"),
            ..Request::fresh(prompt, worktree)
        },
        (None, _) => Request::fresh(prompt, worktree),
        (Some(_), Provider::Copilot) => Request::resume(prompt, worktree, "<uuid>"),
        (Some(session), _) => Request::resume(prompt, worktree, session),
    }
}

/// The session the reference host resumed, as our stream reader reads it from the
/// line the stand-in announced it with; `<session>` is how the recordings write the
/// recorder's session id.
fn announced(provider: Provider, resumed: &Value, recorded_session: &str) -> String {
    let mut reader = Reader::new(provider);
    let line = resumed["announced"].to_string();
    let session = reader.line(&line);
    if provider == Provider::Copilot {
        assert_eq!(session, None, "the host names Copilot's session");
        return "<uuid>".to_owned();
    }
    let session = session.expect("the announcement gives the session");
    session.replace(recorded_session, "<session>")
}

fn check_call(
    provider: Provider,
    profile: &Profile,
    prompt: &str,
    session: Option<&str>,
    call: &Value,
    what: &str,
) {
    let built = profile
        .invocation(&request(provider, prompt, session))
        .unwrap_or_else(|err| panic!("{what}: {err}"));
    let argv: Vec<String> = serde_json::from_value(call["argv"].clone()).expect("argv");
    assert_eq!(built.args, argv, "{what}");
    let env: Map<String, Value> = call["env"].as_object().cloned().unwrap_or_default();
    let built_env: Map<String, Value> = built
        .env
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    assert_eq!(built_env, env, "{what}: environment");
    assert_eq!(call["stdin"], "", "{what}: the reference gives no stdin");
    assert_eq!(built.stdin, None, "{what}: nor do we");
    assert_eq!(
        call["cwd"], "<worktree>",
        "{what}: it runs in the task's worktree"
    );
}

#[test]
fn every_recorded_case_builds_the_reference_argv_or_its_error() {
    let recordings = recordings();
    let prompt = recordings["rendered_prompt"].as_str().expect("prompt");
    let recorded_session = recordings["session"].as_str().expect("session");
    let cases = recordings["cases"].as_array().expect("cases");
    assert!(cases.len() > 90, "{} cases", cases.len());
    let mut checked = [0usize; 3];
    for case in cases {
        let name = case["provider"].as_str().expect("provider");
        let provider = Provider::parse(name).expect("a known provider");
        let text = case["profile"].as_str().expect("profile");
        let what = format!("{name} with {text:?}");
        let made = Profile::new(provider, &options(text));
        let fresh = &case["fresh"];
        if STRICTER.contains(&(name, text)) {
            assert!(fresh.get("call").is_some(), "{what}: the reference ran it");
            let error = made.expect_err(&what).to_string();
            assert!(error.starts_with("unknown profile field \"force\" for provider claude (it takes model, agent, effort, permission_mode, permission_prompts)"), "{what}: {error}");
            continue;
        }
        match fresh.get("error").and_then(Value::as_str) {
            Some(error) => {
                let expected = error.strip_prefix("Configuration error: ").unwrap_or(error);
                let got = made.expect_err(&what).to_string();
                assert_eq!(got, expected, "{what}");
                checked[0] += 1;
            }
            None => {
                let mut profile = made.unwrap_or_else(|err| panic!("{what}: {err}"));
                if provider == Provider::Opencode {
                    assert_ne!(
                        profile.opencode_api(),
                        OpencodeApi::Auto,
                        "{what}: recorded with api set"
                    );
                    assert!(
                        !fresh["asked_version"].as_bool().unwrap_or(true),
                        "{what}: api set, no --version"
                    );
                } else {
                    profile = profile.with_opencode_api(OpencodeApi::Auto);
                }
                check_call(provider, &profile, prompt, None, &fresh["call"], &what);
                checked[1] += 1;
                if let Some(resumed) = case.get("resumed") {
                    check_call(
                        provider,
                        &profile,
                        prompt,
                        None,
                        &resumed["first"],
                        &format!("{what}, first attempt"),
                    );
                    let session = announced(provider, resumed, recorded_session);
                    check_call(
                        provider,
                        &profile,
                        prompt,
                        Some(&session),
                        &resumed["call"],
                        &format!("{what}, resumed"),
                    );
                    checked[2] += 1;
                }
            }
        }
    }
    // Every provider was resumed at least once, and errors were compared.
    assert!(
        checked[0] >= 15 && checked[1] >= 70 && checked[2] >= 18,
        "{checked:?}"
    );
}

#[test]
fn opencode_api_auto_follows_the_reference_version_rule() {
    let recordings = recordings();
    for case in recordings["opencode_versions"]
        .as_array()
        .expect("versions")
    {
        let output = case["output"].as_str().expect("output");
        assert!(
            case["asked_version"].as_bool().expect("asked"),
            "{output:?}"
        );
        // The reference shows stdout, a line end, then stderr (empty here).
        let seen = format!("{output}\n");
        let decided = opencode_api("<root>/bin/opencode", &seen);
        match case.get("error").and_then(Value::as_str) {
            Some(error) => {
                let error = error.strip_prefix("Dispatch error: ").unwrap_or(error);
                assert_eq!(decided.expect_err(output).to_string(), error, "{output:?}");
            }
            None => {
                let api = decided.unwrap_or_else(|err| panic!("{output:?}: {err}"));
                let profile = Profile::new(Provider::Opencode, &Map::new())
                    .expect("no options")
                    .with_opencode_api(api);
                let prompt = recordings["rendered_prompt"].as_str().expect("prompt");
                check_call(
                    Provider::Opencode,
                    &profile,
                    prompt,
                    None,
                    &case["call"],
                    output,
                );
            }
        }
    }
    assert!(matches!(
        opencode_api("x", "0.3.1"),
        Err(VersionError::Unsupported)
    ));
}

#[test]
fn the_one_argument_limit_is_where_the_reference_fails_and_we_use_stdin() {
    let recordings = recordings();
    for case in recordings["long_prompt"].as_array().expect("long prompts") {
        let provider =
            Provider::parse(case["provider"].as_str().expect("provider")).expect("known");
        let bytes = usize::try_from(case["prompt_bytes"].as_u64().expect("bytes")).expect("fits");
        let prompt = "x".repeat(bytes);
        let profile = Profile::new(provider, &Map::new()).expect("no options");
        let built = profile
            .invocation(&Request::fresh(&prompt, Path::new("/w")))
            .expect("claude and gemini read a long prompt on stdin");
        let reference_ran = case["exit"] == 0;
        if reference_ran {
            assert_eq!(built.stdin, None, "{bytes}: still an argument");
            assert!(built.args.last().expect("prompt").ends_with(&prompt));
        } else {
            assert!(
                case["error"]
                    .as_str()
                    .expect("error")
                    .contains("Argument list too long"),
                "{case}"
            );
            assert_eq!(
                built.stdin.as_deref(),
                Some(prompt.as_str()),
                "{bytes}: on stdin"
            );
            assert!(
                !built.args.iter().any(|a| a.contains("xxxx")),
                "{bytes}: not in argv"
            );
        }
    }
}

#[test]
fn a_long_prompt_is_refused_where_the_cli_takes_no_other_way() {
    let prompt = "y".repeat(200 * 1024);
    for provider in [Provider::Cursor, Provider::Copilot, Provider::Pi] {
        let profile = Profile::new(provider, &Map::new()).expect("no options");
        let error = profile
            .invocation(&Request::fresh(&prompt, Path::new("/w")))
            .expect_err("refused");
        assert!(matches!(error, InvocationError::PromptTooLong { .. }));
        let message = error.to_string();
        assert!(
            message.contains("204800 bytes") || message.contains("204809 bytes"),
            "{message}"
        );
        assert!(message.contains("131071 bytes at most"), "{message}");
    }
    // codex reads `-` as "the prompt is on stdin".
    let codex = Profile::new(Provider::Codex, &Map::new()).expect("no options");
    let built = codex
        .invocation(&Request::fresh(&prompt, Path::new("/w")))
        .expect("stdin");
    assert_eq!(built.args, ["exec", "--json", "--", "-"]);
    assert_eq!(built.stdin.as_deref().map(str::len), Some(prompt.len()));
}

#[test]
fn the_table_is_in_provider_order_and_names_round_trip() {
    for provider in Provider::ALL {
        assert_eq!(provider.spec().provider, provider);
        assert_eq!(Provider::parse(provider.name()), Some(provider));
    }
    assert_eq!(Provider::parse("Claude"), None);
    assert_eq!(
        Provider::names(),
        "claude, codex, cursor, gemini, copilot, kilo, opencode, pi, qwen"
    );
}

/// `docs/AGENTS.md` holds the generated provider reference, as the table makes it now.
/// `CURUPIRA_WRITE_DOCS=1` rewrites it.
#[test]
fn the_provider_reference_in_the_docs_is_the_tables() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/AGENTS.md");
    let text = std::fs::read_to_string(&path).expect("docs/AGENTS.md");
    let generated = curupira_agents::docs::markdown();
    let placeholder = text.contains("@@GENERATED@@\n");
    let (begin, end) = (curupira_agents::docs::BEGIN, curupira_agents::docs::END);
    let current = match (text.find(begin), text.find(end)) {
        (Some(start), Some(stop)) => Some(text[start..stop + end.len() + 1].to_owned()),
        _ => None,
    };
    if std::env::var_os("CURUPIRA_WRITE_DOCS").is_some() {
        let updated = match &current {
            Some(current) => text.replace(current.as_str(), &generated),
            None => text.replace("@@GENERATED@@\n", &generated),
        };
        std::fs::write(&path, updated).expect("written");
        return;
    }
    assert!(
        !placeholder,
        "docs/AGENTS.md: run with CURUPIRA_WRITE_DOCS=1"
    );
    assert_eq!(
        current.as_deref(),
        Some(generated.as_str()),
        "docs/AGENTS.md differs from the table: run `CURUPIRA_WRITE_DOCS=1 cargo test -p curupira-agents`"
    );
    for provider in Provider::ALL {
        assert!(
            generated.contains(&format!("### `{}` (", provider.name())),
            "{provider}"
        );
    }
}
