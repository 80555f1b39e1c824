//! End-to-end tests of `curupira run`'s happy paths: the real binary, a temporary
//! project folder, the built-in `local-queue` and a scripted fake extension
//! (`tests/fakes/scripted_ext.py`) that logs every request it receives.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::process::Command;
use std::thread;
use std::time::Duration;

use run_support::{Project, have_python, settings};
use serde_json::{Value, json};

/// The SHA-256 of `[]`, the identity of an item with no fields.
const EMPTY_ITEM_ID: &str = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945";

fn pair(key: &str, value: &str) -> Value {
    json!({"key": key, "value": value})
}

/// A project with one fake extension `fx` and one automation `auto` on it.
fn fake_project(plan: Value, automation_extra: &str) -> Project {
    let project = Project::new();
    project.fake_extension("fx", plan);
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.fx]\npath = \"extensions/fx\"\n\n[automations.auto]\ntrigger = \"fake\"\n\
             prompt = \"Item ${{n}}\"\n{automation_extra}\n",
            settings()
        ),
    );
    project
}

/// The extension processes that logged `calls`, in the order they first did.
fn processes(calls: &[Value]) -> Vec<Value> {
    let mut pids: Vec<Value> = Vec::new();
    for call in calls {
        if !pids.contains(&call["pid"]) {
            pids.push(call["pid"].clone());
        }
    }
    pids
}

/// `curupira run --format json` (continuous) in the project, its stdout to `stdout`,
/// its stderr dropped.
fn spawn_continuous(project: &Project, stdout: std::process::Stdio) -> std::process::Child {
    Command::new(run_support::curupira())
        .args(["run", "--watch", "--format", "json"])
        .current_dir(project.path())
        .stdout(stdout)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn the_extension_sees_the_calls_in_protocol_order() {
    if !have_python() {
        return;
    }
    let project = fake_project(
        json!({"polls": [[pair("a", "1"), pair("b", "2")], null]}),
        "",
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    // Preparation in one process, the round in another (`crate::extensions`).
    assert_eq!(
        project.methods("fx"),
        [
            "initialize",
            "describe",
            "trigger/schema",
            "trigger/validate",
            "shutdown",
            "initialize",
            "describe",
            "trigger/poll",
            "trigger/onStarted",
            "trigger/onFinished",
            "trigger/poll",
            "shutdown"
        ]
    );
    let pids = processes(&project.calls("fx"));
    assert_eq!(pids.len(), 2, "{pids:?}");
    let calls: Vec<Value> = project
        .calls("fx")
        .into_iter()
        .filter(|call| call["method"] != "shutdown" || call["pid"] == pids[0])
        .collect();
    let calls: Vec<Value> = calls
        .into_iter()
        .filter(|call| {
            !(call["pid"] == pids[1]
                && (call["method"] == "initialize" || call["method"] == "describe"))
        })
        .collect();
    let order: Vec<&str> = calls
        .iter()
        .map(|c| c["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "initialize",
            "describe",
            "trigger/schema",
            "trigger/validate",
            "shutdown",
            "trigger/poll",
            "trigger/onStarted",
            "trigger/onFinished",
            "trigger/poll"
        ]
    );
    assert_eq!(calls[0]["params"]["protocol_version"], 2);
    assert_eq!(calls[0]["params"]["client_info"]["name"], "curupira");
    // `describe` and `shutdown` go without params, which every reader takes as `null`.
    assert_eq!(calls[1]["params"], Value::Null);
    assert_eq!(calls[2]["params"], json!({"trigger_type": "fake"}));
    assert_eq!(calls[4]["params"], Value::Null);
    // The hooks receive exactly the polled pairs, in order, and nothing else, in the
    // process that polled them.
    let expected_hook = json!({"trigger_type": "fake", "values": [pair("a", "1"), pair("b", "2")]});
    assert_eq!(calls[6]["params"], expected_hook);
    assert_eq!(calls[7]["params"], expected_hook);
    assert!(calls[5..].iter().all(|call| call["pid"] == pids[1]));
    // `Item ${n}` of an item without `n`: said once, the task runs (unfilled = "warn").
    assert_eq!(
        run.event_names(),
        [
            "task.unfilled",
            "task.started",
            "task.finished",
            "round.finished"
        ]
    );
    let finished = &run.events_named("task.finished")[0];
    assert_eq!(finished["automation"], "auto");
    assert_eq!(finished["values"], json!([pair("a", "1"), pair("b", "2")]));
    assert_eq!(finished["exit_code"], 0);
    assert_eq!(finished["task_id"].as_str().unwrap().len(), 64);
}

#[test]
fn batch_size_bounds_the_polls_of_a_round() {
    if !have_python() {
        return;
    }
    let project = fake_project(
        json!({"poll_forever": true}),
        "polling = { batch_size = 3 }",
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let polls = project
        .methods("fx")
        .iter()
        .filter(|m| *m == "trigger/poll")
        .count();
    assert_eq!(polls, 3);
    assert_eq!(
        run.events_named("round.finished"),
        [
            json!({"event": "round.finished", "automation": "auto", "polled": 3, "dispatched": 3,
                "skipped": 0, "failed": 0, "rejected": 0})
        ]
    );
}

/// An extension that starts its listing over in each process (as the official
/// `curupira-plugins` do: the host starts one per round) hands over the first
/// `batch_size` items again in every round. They do not use up the batch, so a drained
/// run reaches all 15 of them with a batch of 10, and the human output has one line
/// per round, not one per repeated item.
#[test]
fn items_already_handled_do_not_use_up_the_round_s_batch() {
    if !have_python() {
        return;
    }
    let mut polls: Vec<Value> = (1..=15)
        .map(|n| json!([pair("n", &n.to_string())]))
        .collect();
    polls.push(Value::Null);
    let project = fake_project(
        json!({"per_process": true, "polls": polls}),
        "polling = { batch_size = 10 }",
    );
    let run = project.curupira(&["run"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(!run.stdout.contains("skipped"), "{run:?}");
    assert_eq!(
        run.stdout
            .lines()
            .filter(|line| line.contains("round finished"))
            .collect::<Vec<_>>(),
        [
            "auto: round finished: 10 polled, 10 dispatched, 0 already handled, 0 failed",
            "auto: round finished: 15 polled, 5 dispatched, 10 already handled, 0 failed",
            "auto: round finished: 15 polled, 0 dispatched, 15 already handled, 0 failed",
        ]
        .map(|line| line.to_owned()),
        "{run:?}"
    );
    let prompts = std::fs::read_dir(project.path().join("out"))
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("prompt-")
        })
        .count();
    assert_eq!(prompts, 15, "every item reached an agent once");
    let started = project
        .methods("fx")
        .iter()
        .filter(|m| *m == "trigger/onStarted")
        .count();
    assert_eq!(started, 15);
    // 10 polls, then 10 handled + 5 new + the null, then 15 handled + the null.
    let polled = project
        .methods("fx")
        .iter()
        .filter(|m| *m == "trigger/poll")
        .count();
    assert_eq!(polled, 10 + 16 + 16);
}

/// An extension that hands over the same item forever: a round ends after
/// 10 × `batch_size` polls, and a drained run ends after the round that found
/// nothing new.
#[test]
fn an_extension_repeating_itself_forever_does_not_spin_a_round() {
    if !have_python() {
        return;
    }
    let project = fake_project(
        json!({"poll_result": {"values": [pair("n", "7")]}}),
        "polling = { batch_size = 3 }",
    );
    let run = project.curupira(&["run", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let rounds: Vec<(Value, Value, Value)> = run
        .events_named("round.finished")
        .iter()
        .map(|e| {
            (
                e["polled"].clone(),
                e["dispatched"].clone(),
                e["skipped"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rounds,
        [
            (json!(30), json!(1), json!(29)),
            (json!(30), json!(0), json!(30))
        ]
    );
    assert_eq!(run.events_named("task.started").len(), 1);
    assert_eq!(run.events_named("task.skipped").len(), 59);
    let polled = project
        .methods("fx")
        .iter()
        .filter(|m| *m == "trigger/poll")
        .count();
    assert_eq!(polled, 60);
}

#[test]
fn null_ends_the_round_early() {
    if !have_python() {
        return;
    }
    let project = fake_project(
        json!({"polls": [[pair("n", "1")], [pair("n", "2")], null, [pair("n", "3")]]}),
        "",
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let polls = project
        .methods("fx")
        .iter()
        .filter(|m| *m == "trigger/poll")
        .count();
    assert_eq!(polls, 3, "two items, then the null that ends the round");
    let round = &run.events_named("round.finished")[0];
    assert_eq!(
        (round["polled"].clone(), round["dispatched"].clone()),
        (json!(2), json!(2))
    );
}

#[test]
fn an_empty_list_is_an_item_and_repeated_pairs_dispatch_once() {
    if !have_python() {
        return;
    }
    let project = fake_project(
        json!({"polls": [[], [pair("n", "1")], [], [pair("n", "1")], [pair("n", "2")], null]}),
        "",
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.event_names(),
        [
            // The empty item leaves `${n}` unfilled: said once.
            "task.unfilled",
            "task.started",
            "task.finished",
            "task.started",
            "task.finished",
            "task.skipped",
            "task.skipped",
            "task.started",
            "task.finished",
            "round.finished"
        ]
    );
    let events = run.events();
    assert_eq!(events[0]["task_id"], EMPTY_ITEM_ID);
    assert_eq!(events[0]["values"], json!([]));
    assert_eq!(events[1]["task_id"], EMPTY_ITEM_ID);
    assert_eq!(events[5]["task_id"], EMPTY_ITEM_ID);
    assert_eq!(events[6]["values"], json!([pair("n", "1")]));
    assert_eq!(events[6]["task_id"], events[3]["task_id"]);
    assert_eq!(
        events[9],
        json!({"event": "round.finished", "automation": "auto", "polled": 5, "dispatched": 3,
               "skipped": 2, "failed": 0, "rejected": 0})
    );
    let started = project
        .methods("fx")
        .iter()
        .filter(|m| *m == "trigger/onStarted")
        .count();
    assert_eq!(started, 3, "skipped items get no hooks");
}

#[test]
fn defaults_are_applied_before_validate_and_poll_and_polling_settings_stay_home() {
    if !have_python() {
        return;
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "label": {"type": "string", "default": "bug"},
            "given": {"type": "string", "default": "theirs"},
            "nested": {"type": "object", "properties": {"depth": {"default": 2}}},
            "absent": {"type": "object", "properties": {"x": {"default": 1}}}
        }
    });
    let project = fake_project(
        json!({"schema": schema, "polls": [[pair("n", "1")]]}),
        "arguments = { given = \"mine\", nested = { keep = true } }\n\
         polling = { batch_size = 2, interval_seconds = 7 }",
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let expected = json!({"label": "bug", "given": "mine", "nested": {"keep": true, "depth": 2}});
    let calls = project.calls("fx");
    let with_arguments: Vec<&Value> = calls
        .iter()
        .filter(|c| c["method"] == "trigger/validate" || c["method"] == "trigger/poll")
        .collect();
    assert_eq!(with_arguments.len(), 3, "validate and two polls");
    // The automation's table as the reference host sends it: the parameters and the
    // core keys (the trigger as `extension/type`, the prompt's text, the repository).
    let mut configuration = expected.clone();
    configuration["trigger_type"] = json!("fx/fake");
    configuration["prompt"] = json!("Item ${n}");
    configuration["repository"] = json!("example.com/acme/widgets");
    assert_eq!(
        with_arguments[0]["params"],
        json!({"trigger_type": "fake", "configuration": configuration})
    );
    // Each poll sends the configuration validate returned (the fake echoes it), the
    // batch size as `limit`, and `preview` false outside a dry run.
    for call in &with_arguments[1..] {
        assert_eq!(
            call["params"],
            json!({"trigger_type": "fake", "automation": configuration, "limit": 2, "preview": false})
        );
    }
    let everything = serde_json::to_string(&calls).unwrap();
    assert!(!everything.contains("batch_size"), "{everything}");
    assert!(!everything.contains("interval_seconds"), "{everything}");
}

#[test]
fn the_agent_gets_the_exact_prompt_environment_and_folder() {
    if !have_python() {
        return;
    }
    let project = fake_project(
        json!({"polls": [[pair("title", "Crash on ${repository}"), pair("issue-number", "42")]]}),
        "",
    );
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.fx]\npath = \"extensions/fx\"\n\n[automations.fix-bugs]\n\
             trigger = \"fake\"\nprompt_file = \"prompts/fix.md\"\n",
            settings()
        ),
    );
    project.write(
        "prompts/fix.md",
        "Fix #${issue-number} (${title}) in ${repository} for ${automation}; ${unknown} and $${issue-number} and ${ stay.\n",
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let task_id = run.events_named("task.finished")[0]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        project.read(&format!("out/prompt-{task_id}.txt")),
        "Fix #42 (Crash on ${repository}) in example.com/acme/widgets for fix-bugs; ${unknown} \
         and $42 and ${ stay.\n"
    );
    let cwd = project.path().canonicalize().unwrap();
    assert_eq!(
        project.read(&format!("out/env-{task_id}.txt")),
        format!(
            "automation=fix-bugs\ntask_id={task_id}\nrepository=example.com/acme/widgets\ncwd={}\n",
            cwd.display()
        )
    );
}

#[test]
fn a_failing_agent_is_reported_and_on_finished_still_sent() {
    if !have_python() {
        return;
    }
    let project = fake_project(json!({"polls": [[pair("n", "1")], [pair("n", "2")]]}), "");
    project.write("agent-exit", "3\n");
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(1), "a failed task is a failed run: {run:?}");
    let finished = run.events_named("task.finished");
    assert_eq!(
        finished.len(),
        2,
        "a failed task does not stop the automation"
    );
    assert!(finished.iter().all(|e| e["exit_code"] == 3));
    let methods = project.methods("fx");
    assert_eq!(
        methods
            .iter()
            .filter(|m| *m == "trigger/onFinished")
            .count(),
        2
    );
    let round = &run.events_named("round.finished")[0];
    assert_eq!(round["failed"], 2);

    // The ledger skips the failed tasks in a later run: start from a fresh state.
    std::fs::remove_dir_all(project.path().join(".curupira")).unwrap();
    let human = project.curupira(&["run", "--once"]);
    assert_eq!(human.code, Some(1), "{human:?}");
    // `FAILED after 1.2 s: …`: how long the agent ran, in the unit that fits.
    let failed = human
        .stdout
        .lines()
        .find(|line| line.contains(" FAILED after "))
        .unwrap_or_else(|| panic!("{}", human.stdout));
    assert!(
        failed.ends_with("s: the agent exited with status 3"),
        "{}",
        human.stdout
    );
}

#[test]
fn the_agents_output_reaches_the_hosts_stderr_only() {
    if !have_python() {
        return;
    }
    let project = fake_project(
        json!({"polls": [[pair("n", "1")]]}),
        r#"agent = { command = ["sh", "-c", "echo agent-says-out; echo agent-says-err >&2"] }"#,
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains("agent-says-out\n") && run.stderr.contains("agent-says-err\n"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("agent-says"), "{run:?}");
    run.events();
}

#[test]
fn dry_run_renders_prompts_without_hooks_or_agent() {
    if !have_python() {
        return;
    }
    let project = fake_project(
        json!({"polls": [[pair("n", "7")], [pair("n", "7")], null]}),
        "",
    );
    let run = project.curupira(&["run", "--once", "--dry-run", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.event_names(),
        ["task.rendered", "task.skipped", "round.finished"]
    );
    assert_eq!(run.events()[0]["prompt"], "Item 7");
    // Every poll of a dry run says so: `preview` is true.
    let polls: Vec<Value> = project
        .calls("fx")
        .into_iter()
        .filter(|call| call["method"] == "trigger/poll")
        .collect();
    assert!(!polls.is_empty());
    assert!(
        polls.iter().all(|poll| poll["params"]["preview"] == true),
        "{polls:?}"
    );
    assert!(
        !project
            .methods("fx")
            .iter()
            .any(|m| m == "trigger/onStarted" || m == "trigger/onFinished")
    );
    assert!(!project.exists("out"), "no agent ran");

    let human = fake_project(json!({"polls": [[pair("n", "8")]]}), "").curupira(&[
        "run",
        "--once",
        "--dry-run",
    ]);
    assert!(
        human.stdout.contains("would get this prompt:\nItem 8\n---"),
        "{}",
        human.stdout
    );
}

#[test]
fn dry_run_needs_no_agent_but_a_real_run_does() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n");
    project.write(
        "curupira.toml",
        "[extensions.local]\nbuiltin = \"local-queue\"\n\n[automations.q]\ntrigger = \"jsonl\"\n\
         prompt = \"${n}\"\narguments = { path = \"tasks.jsonl\" }\n",
    );
    let dry = project.curupira(&["run", "--once", "--dry-run", "--format", "json"]);
    assert_eq!(dry.code, Some(0), "{dry:?}");
    assert_eq!(dry.events()[0]["prompt"], "1");
    let human = project.curupira(&["run", "--once", "--dry-run"]);
    assert!(
        human.stdout.ends_with(
            "---\nq: round finished: 1 polled, 1 rendered, 0 already handled, 0 failed\n"
        ),
        "a dry run dispatches nothing: {}",
        human.stdout
    );
    let real = project.curupira(&["run", "--once"]);
    assert_eq!(real.code, Some(2), "{real:?}");
    assert!(
        real.stderr.contains("config/missing-agent"),
        "{}",
        real.stderr
    );
    assert!(real.stdout.is_empty());
}

#[test]
fn two_automations_each_act_on_the_same_item() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n{\"n\": \"2\"}\n");
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.first]\ntrigger = \"jsonl\"\nprompt = \"first ${{n}}\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"first.done\" }}\n\n\
             [automations.second]\ntrigger = \"local/jsonl\"\nprompt = \"second ${{n}}\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"second.done\" }}\n",
            settings()
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let finished = run.events_named("task.finished");
    let who: Vec<(&str, &str)> = finished
        .iter()
        .map(|e| {
            (
                e["automation"].as_str().unwrap(),
                e["values"][0]["value"].as_str().unwrap(),
            )
        })
        .collect();
    // Automations share the agent slots round robin (one slot by default), so their
    // tasks alternate; each handles both items.
    assert_eq!(
        who,
        [
            ("first", "1"),
            ("second", "1"),
            ("first", "2"),
            ("second", "2")
        ]
    );
    assert_eq!(finished[0]["task_id"], finished[1]["task_id"]);
    assert_eq!(project.read("first.done").lines().count(), 2);
    assert_eq!(project.read("second.done").lines().count(), 2);
}

#[test]
fn automation_selects_what_runs_and_an_unknown_name_is_a_usage_error() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n");
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.alpha]\ntrigger = \"jsonl\"\nprompt = \"a\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"alpha.done\" }}\n\n\
             [automations.beta]\ntrigger = \"jsonl\"\nprompt = \"b\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"beta.done\" }}\n",
            settings()
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json", "--automation", "beta"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.events().iter().all(|e| e["automation"] == "beta"));
    assert!(!project.exists("alpha.done"));
    assert!(project.exists("beta.done"));

    let typo = project.curupira(&["run", "--once", "--automation", "bta"]);
    assert_eq!(typo.code, Some(2), "{typo:?}");
    assert!(
        typo.stderr.contains("no automation called `bta`"),
        "{}",
        typo.stderr
    );
    assert!(
        typo.stderr.contains("did you mean `beta`?"),
        "{}",
        typo.stderr
    );
}

#[test]
fn a_config_error_exits_2_before_starting_anything() {
    let project = Project::new();
    project.write(
        "curupira.toml",
        "[settings.polling]\nbatch_size = 0\n\n[automations.a]\ntrigger = \"jsonl\"\nprompt = \"x\"\n",
    );
    let run = project.curupira(&["run", "--once"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.contains("error[config/batch-size]"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("curupira.toml:2:14"), "{}", run.stderr);
    // With `--format json` the same diagnostics are the one JSON object on stdout.
    let json = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(json.code, Some(2), "{json:?}");
    let events = json.events();
    assert_eq!(events.len(), 1, "{}", json.stdout);
    let first = &events[0]["diagnostics"][0];
    assert_eq!(first["code"], "config/batch-size", "{}", json.stdout);
    assert_eq!((&first["line"], &first["column"]), (&2.into(), &14.into()));

    let missing = Project::new().curupira(&["run", "--once"]);
    assert_eq!(missing.code, Some(2));
    assert!(
        missing
            .stderr
            .contains("cannot read the config file `curupira.toml`"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_rejected_automation_fails_alone() {
    // An extension of this project's earlier protocol: a -32003 error reply.
    rejected_automation_fails_alone(
        json!({"validate_errors": [{"path": "/labels", "message": "must be an array"}]}),
        "the extension replied with an error: the arguments are not valid; /labels: must be an array",
    );
}

#[test]
fn an_automation_validate_answers_ok_false_fails_alone() {
    // The ecosystem's rejection: a result, `{"ok": false, "error": …}`.
    rejected_automation_fails_alone(
        json!({"validate_result": {"ok": false, "error": "labels must be an array"}}),
        "rejected the configuration of automation `rejected`: labels must be an array",
    );
}

fn rejected_automation_fails_alone(plan: Value, message: &str) {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension("fx", plan);
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n");
    project.write(
        "curupira.toml",
        &format!(
            "{}[extensions.fx]\npath = \"extensions/fx\"\n\n[extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.rejected]\ntrigger = \"fake\"\nprompt = \"x\"\narguments = {{ labels = \"bug\" }}\n\n\
             [automations.healthy]\ntrigger = \"jsonl\"\nprompt = \"${{n}}\"\narguments = {{ path = \"tasks.jsonl\" }}\n",
            settings()
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let failed = run.events_named("automation.failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["automation"], "rejected");
    assert_eq!(failed[0]["code"], -32003);
    assert_eq!(failed[0]["extension"], "fx");
    assert_eq!(failed[0]["method"], "trigger/validate");
    assert_eq!(
        failed[0]["message"],
        format!(
            "extension `fx`: trigger/validate failed: configuration validation failure (-32003): \
             {message}"
        )
    );
    assert_eq!(run.events_named("task.finished").len(), 1);
    assert!(!project.methods("fx").contains(&"trigger/poll".to_owned()));
    assert_eq!(project.methods("fx").last().unwrap(), "shutdown");
}

#[test]
fn a_missing_repository_fails_only_the_automations_that_use_it() {
    let project = Project::new();
    project.write("tasks.jsonl", "{\"n\": \"1\"}\n");
    project.write(
        "curupira.toml",
        &format!(
            "[settings.agent]\n{}\n\n[extensions.local]\nbuiltin = \"local-queue\"\n\n\
             [automations.needs-repo]\ntrigger = \"jsonl\"\nprompt = \"in ${{repository}}\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"a.done\" }}\n\n\
             [automations.no-repo]\ntrigger = \"jsonl\"\nprompt = \"${{n}}\"\n\
             arguments = {{ path = \"tasks.jsonl\", done_path = \"b.done\" }}\n",
            run_support::RECORDING_AGENT
        ),
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let failed = run.events_named("automation.failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["automation"], "needs-repo");
    assert_eq!(failed[0]["code"], -32003);
    let message = failed[0]["message"].as_str().unwrap();
    assert!(message.contains("uses ${repository}"), "{message}");
    assert!(message.contains("settings"), "{message}");
    let finished = run.events_named("task.finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["automation"], "no-repo");
    let task_id = finished[0]["task_id"].as_str().unwrap();
    assert!(
        project
            .read(&format!("out/env-{task_id}.txt"))
            .contains("repository=\n")
    );
}

#[test]
fn continuous_mode_polls_again_and_stops_cleanly_on_sigterm() {
    if !have_python() {
        return;
    }
    let project = fake_project(
        json!({"polls": [[pair("n", "1")], null, [pair("n", "2")], null, [pair("n", "1")]]}),
        "polling = { interval_seconds = 0.1 }",
    );
    let child = spawn_continuous(&project, std::process::Stdio::piped());
    // Wait until the fake has seen at least four polls (three rounds).
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while project
        .methods("fx")
        .iter()
        .filter(|m| *m == "trigger/poll")
        .count()
        < 5
    {
        assert!(
            std::time::Instant::now() < deadline,
            "continuous mode did not poll again"
        );
        thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let started = std::time::Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "it stopped promptly"
    );
    assert_eq!(output.status.code(), Some(143));
    assert_eq!(project.methods("fx").last().unwrap(), "shutdown");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let finished: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "task.finished")
        .collect();
    let values: Vec<&str> = finished
        .iter()
        .map(|e| e["values"][0]["value"].as_str().unwrap())
        .collect();
    assert_eq!(
        values,
        ["1", "2"],
        "the repeated item 1 is skipped across rounds"
    );
    assert!(stdout.contains("\"event\":\"task.skipped\""), "{stdout}");
}

/// `tasks forget` reaches a running host: an extension that hands the same item over
/// round after round gets it skipped while the ledger has it, and run once more after
/// it was forgotten — once, not on every round after.
#[test]
fn a_running_host_runs_a_forgotten_task_again_once() {
    if !have_python() {
        return;
    }
    let mut polls = Vec::new();
    for _ in 0..300 {
        polls.push(json!([pair("n", "1")]));
        polls.push(Value::Null);
    }
    let project = fake_project(
        json!({ "polls": polls }),
        "polling = { interval_seconds = 0.05 }",
    );
    let mut child = spawn_continuous(&project, std::process::Stdio::null());
    let count = |method: &str| {
        project
            .methods("fx")
            .iter()
            .filter(|m| *m == method)
            .count()
    };
    let until = |what: &dyn Fn() -> bool, why: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !what() {
            assert!(std::time::Instant::now() < deadline, "{why}");
            thread::sleep(Duration::from_millis(20));
        }
    };
    // Finished, then skipped in a later round.
    until(
        &|| count("trigger/onFinished") == 1 && count("trigger/poll") > 6,
        "a first run",
    );
    let forgot = project.curupira(&["tasks", "forget", "--automation", "auto", "--force"]);
    assert_eq!(forgot.code, Some(0), "{forgot:?}");
    until(
        &|| count("trigger/onFinished") == 2,
        "run again once forgotten",
    );
    // Some rounds more: it stays handled.
    let polls_then = count("trigger/poll");
    until(&|| count("trigger/poll") > polls_then + 6, "more rounds");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(child.wait().unwrap().code(), Some(143));
    assert_eq!(count("trigger/onStarted"), 2, "{:?}", project.methods("fx"));
}

#[test]
fn retried_attempts_send_on_started_and_on_finished_once_as_the_extension_logs() {
    if !have_python() {
        return;
    }
    let project = Project::new();
    project.fake_extension("fx", json!({"polls": [[pair("n", "1")], null]}));
    project.write(
        "curupira.toml",
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
         [settings.agent]\n\
         command = [\"sh\", \"-c\", \"cat >/dev/null; echo x >> runs; test $(wc -l < runs) -ge 3\"]\n\
         retries = 2\nretry_backoff_seconds = 0\n\n\
         [extensions.fx]\npath = \"extensions/fx\"\n\n\
         [automations.auto]\ntrigger = \"fake\"\nprompt = \"Item ${n}\"\n",
    );
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.events_named("task.retrying").len(), 2);
    let methods = project.methods("fx");
    let count = |name: &str| methods.iter().filter(|m| *m == name).count();
    assert_eq!(
        (count("trigger/onStarted"), count("trigger/onFinished")),
        (1, 1),
        "{methods:?}"
    );
    assert_eq!(project.read("runs").lines().count(), 3);
}
