//! What `curupira run` does with the agent's output and with a workspace it cannot
//! prepare, through the real binary and the built-in `local-queue` extension.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use run_support::Project;

fn queue(items: usize) -> String {
    (1..=items)
        .map(|n| format!("{{\"n\": \"{n}\"}}\n"))
        .collect()
}

fn config(agent: &str, workspace: &str, batch: usize) -> String {
    format!(
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
         [settings.agent]\n{agent}\n\n\
         [settings.workspace]\n{workspace}\n\n\
         [extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.fix]\ntrigger = \"jsonl\"\nprompt = \"${{n}}\"\n\
         arguments = {{ path = \"tasks.jsonl\" }}\npolling = {{ batch_size = {batch} }}\n"
    )
}

#[test]
fn each_agent_line_reaches_the_hosts_stderr_whole_behind_its_task() {
    let project = Project::new();
    project.write("tasks.jsonl", &queue(3));
    // Three agents at once, each writing 200 lines on stdout and stderr in turn, and a
    // last line without an end.
    let agent = r#"command = ["sh", "-c", "n=$(cat); i=0; while [ $i -lt 100 ]; do echo \"out $n $i\"; echo \"err $n $i\" >&2; i=$((i + 1)); done; printf \"last $n\""]
max_concurrent = 3"#;
    project.write("curupira.toml", &config(agent, "", 3));
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        !run.stdout.contains("out 1"),
        "agent output on stdout: {run:?}"
    );

    let started = run.events_named("task.started");
    assert_eq!(started.len(), 3, "{run:?}");
    for event in started {
        let n = event["values"][0]["value"].as_str().unwrap();
        let task_id = event["task_id"].as_str().unwrap();
        let prefix = format!("[fix {}] ", &task_id[..12]);
        let lines: Vec<&str> = run
            .stderr
            .lines()
            .filter_map(|line| line.strip_prefix(&prefix))
            .collect();
        let mut expected: Vec<String> = (0..100)
            .flat_map(|i| [format!("out {n} {i}"), format!("err {n} {i}")])
            .collect();
        expected.push(format!("last {n}"));
        let mut got: Vec<String> = lines.iter().map(|line| (*line).to_owned()).collect();
        // The two streams are read apart: only the order within each one is kept.
        let order = |lines: &[String], stream: &str| -> Vec<String> {
            lines
                .iter()
                .filter(|line| line.starts_with(stream))
                .cloned()
                .collect()
        };
        assert_eq!(order(&got, "out"), order(&expected, "out"), "task {n}");
        assert_eq!(order(&got, "err"), order(&expected, "err"), "task {n}");
        got.sort();
        expected.sort();
        assert_eq!(got, expected, "task {n}: every line once, whole");
    }
    // No agent line without its prefix, none cut or mixed with another's.
    for line in run.stderr.lines() {
        if line.contains("out ") || line.contains("err ") || line.contains("last ") {
            assert!(line.starts_with("[fix "), "unprefixed: {line:?}");
            let body = line.split_once("] ").unwrap().1;
            assert!(
                body.split(' ').count() == 3 || body.starts_with("last "),
                "mixed: {line:?}"
            );
        }
    }
}

#[test]
fn a_workspace_that_cannot_be_prepared_is_its_own_reason_and_does_not_finish_the_task() {
    let project = Project::new();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(project.path())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    project.write("tasks.jsonl", &queue(1));
    // The worktrees' root would be under a file: no folder can be made there.
    project.write("blocked", "a file, not a folder\n");
    project.write(
        "curupira.toml",
        &config(
            // In the project's folder, not the task's worktree (removed on success).
            &format!(
                "command = [\"sh\", \"-c\", \"touch {}\"]",
                project.path().join("agent-ran").display()
            ),
            "mode = \"worktree\"\nroot = \"blocked/worktrees\"",
            1,
        ),
    );
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.email=t@example.com",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "-m",
        "start",
    ]);
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let finished = run.events_named("task.finished");
    assert_eq!(finished.len(), 1, "{run:?}");
    assert_eq!(finished[0]["reason"], "workspace-failed", "{run:?}");
    let error = finished[0]["error"].as_str().unwrap();
    assert!(
        error.starts_with("cannot prepare the folder ") && error.contains("blocked/worktrees"),
        "{error}"
    );
    assert!(!project.exists("agent-ran"), "the agent did not run");
    assert!(run.events_named("workspace.created").is_empty(), "{run:?}");
    // Not finished: the queue has not marked the item done, and once the file in the
    // way is gone the next run hands it over again and its agent runs.
    assert!(
        !project.exists("tasks.jsonl.done") || project.read("tasks.jsonl.done").is_empty(),
        "the item is not done"
    );
    std::fs::remove_file(project.path().join("blocked")).unwrap();
    let again = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(again.events_named("task.finished")[0]["reason"], "exit");
    assert!(project.exists("agent-ran"), "the agent ran the second time");
    assert_eq!(project.read("tasks.jsonl.done").lines().count(), 1);
}
