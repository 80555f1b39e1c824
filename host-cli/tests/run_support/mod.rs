//! What the `run_*` end-to-end tests share: a temporary project folder, fake
//! extensions driven by `tests/fakes/scripted_ext.py`, and the real `curupira`
//! binary run with a watchdog.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::{self, File};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use curupira_test_support::fakes;
pub use curupira_test_support::process::run_bounded;
use serde_json::Value;

/// A run still going after this is killed and the test fails.
const WATCHDOG: Duration = Duration::from_secs(60);

/// The `curupira` binary under test.
pub fn curupira() -> &'static str {
    env!("CARGO_BIN_EXE_curupira")
}

/// Whether `python3` can run the fake extensions (see `tests/fakes/mod.rs`: a test
/// that needs it skips, saying so, except under CI, where it fails).
pub fn have_python() -> bool {
    fakes::python_or_skip("this test's fake extension")
}

/// A temporary project folder holding a `curupira.toml` and whatever else a test writes.
pub struct Project {
    pub dir: tempfile::TempDir,
}

/// The outcome of one `curupira` run.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    /// stdout as JSON lines (the events of `run --format json`).
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|err| panic!("not a JSON line ({err}): {line}\n{self:?}"))
            })
            .collect()
    }

    /// The events called `name`.
    pub fn events_named(&self, name: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["event"] == name)
            .collect()
    }

    /// The sequence of event names.
    pub fn event_names(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| e["event"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// The script of the scripted fake extension.
pub fn scripted_ext() -> PathBuf {
    fakes::scripted_script()
}

impl Project {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A project folder that is a Git repository (no commit yet) with an author set.
    pub fn repository() -> Self {
        let project = Project::new();
        project.git(&["init", "-q", "-b", "main"]);
        project.git(&["config", "user.email", "t@example.com"]);
        project.git(&["config", "user.name", "t"]);
        project
    }

    /// `git ARGS…` in the project, which must succeed; its stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, relative: &str, contents: &str) {
        let path = self.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    pub fn read(&self, relative: &str) -> String {
        fs::read_to_string(self.path().join(relative))
            .unwrap_or_else(|err| panic!("cannot read {relative}: {err}"))
    }

    pub fn exists(&self, relative: &str) -> bool {
        self.path().join(relative).exists()
    }

    /// A fake extension in `extensions/NAME/`: its manifest (offering the plan's
    /// trigger types) runs the scripted fake with `extensions/NAME/plan.json`, whose
    /// `log` is set to `extensions/NAME/calls.jsonl`.
    pub fn fake_extension(&self, name: &str, mut plan: Value) {
        let folder = format!("extensions/{name}");
        let log = self.path().join(&folder).join("calls.jsonl");
        plan["log"] = Value::from(log.to_str().unwrap());
        let types: Vec<String> = match plan.get("triggers") {
            Some(Value::Array(triggers)) => triggers
                .iter()
                .map(|t| t["trigger_type"].as_str().unwrap().to_owned())
                .collect(),
            _ => vec!["fake".to_owned()],
        };
        let plan_path = self.path().join(&folder).join("plan.json");
        self.write(&format!("{folder}/plan.json"), &plan.to_string());
        let manifest = format!(
            "manifest_version = 1\nname = \"{name}\"\nversion = \"1.0.0\"\nprotocol_version = 2\n\
             runtime = \"python\"\nkind = \"trigger\"\ntrigger_types = {types:?}\n\n[launch]\n\
             type = \"executable\"\nprogram = \"python3\"\nargs = [{:?}, {:?}]\n",
            scripted_ext().to_str().unwrap(),
            plan_path.to_str().unwrap(),
        );
        self.write(&format!("{folder}/curupira-extension.toml"), &manifest);
    }

    /// The requests extension `name` received, in order.
    pub fn calls(&self, name: &str) -> Vec<Value> {
        let path = self.path().join(format!("extensions/{name}/calls.jsonl"));
        match fs::read_to_string(&path) {
            Ok(text) => text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The methods extension `name` received, in order.
    pub fn methods(&self, name: &str) -> Vec<String> {
        self.calls(name)
            .iter()
            .map(|c| c["method"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Runs `curupira ARGS…` in the project folder.
    pub fn curupira(&self, args: &[&str]) -> Run {
        run_in(self.path(), args)
    }
}

/// Runs `curupira ARGS…` in `dir`, killing it after the watchdog.
pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    let mut command = Command::new(curupira());
    command.args(args).current_dir(dir).env_remove("RUST_LOG");
    run_watched(&mut command, args)
}

/// Runs `curupira ARGS…` in `dir` with the folder `bin` first on `PATH`, where a test
/// puts stand-ins for programs the host starts (`uvx`), killing it after the watchdog.
pub fn run_in_with_path(dir: &Path, bin: &Path, args: &[&str]) -> Run {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let mut command = Command::new(curupira());
    command
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .env("PATH", std::env::join_paths(paths).unwrap());
    run_watched(&mut command, args)
}

/// Runs `command` (a `curupira` with `args`) to its end, killing it after the watchdog.
fn run_watched(command: &mut Command, args: &[&str]) -> Run {
    let started = Instant::now();
    let ended = run_bounded(command, WATCHDOG).unwrap();
    let Some(status) = ended.status else {
        panic!("curupira {args:?} ran longer than {WATCHDOG:?}");
    };
    Run {
        code: status.code(),
        stdout: ended.stdout,
        stderr: ended.stderr,
        elapsed: started.elapsed(),
    }
}

/// The agent used by the tests: writes its stdin to `out/prompt-<task id>.txt` and its
/// `CURUPIRA_*` environment and working directory to `out/env-<task id>.txt`, then
/// exits with the status in the file `agent-exit` when there is one (else 0).
pub const RECORDING_AGENT: &str = r#"command = ["sh", "-c", "mkdir -p out && cat > \"out/prompt-$CURUPIRA_TASK_ID.txt\" && { echo \"automation=$CURUPIRA_AUTOMATION\"; echo \"task_id=$CURUPIRA_TASK_ID\"; echo \"repository=$CURUPIRA_REPOSITORY\"; echo \"cwd=$(pwd -P)\"; } > \"out/env-$CURUPIRA_TASK_ID.txt\" && exit $(cat agent-exit 2>/dev/null || echo 0)"]"#;

/// The usual test settings: short timeouts, the recording agent, a fixed repository.
pub fn settings() -> String {
    format!(
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n[settings.timeouts]\n\
         initialize = 3\nrequest = 3\nshutdown = 2\n\n[settings.agent]\n{RECORDING_AGENT}\n\n"
    )
}

/// Starts `curupira ARGS…` in the project, its stdout and stderr in `NAME.out` and
/// `NAME.err` there.
pub fn spawn(project: &Project, name: &str, args: &[&str]) -> Child {
    let out = File::create(project.path().join(format!("{name}.out"))).unwrap();
    let err = File::create(project.path().join(format!("{name}.err"))).unwrap();
    Command::new(curupira())
        .args(args)
        .current_dir(project.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap()
}

/// A project whose host runs over a queue of `a` (succeeds), `b` (fails, no retry)
/// and `c` (runs until the file `release` exists), one agent at a time.
pub fn three_tasks() -> Project {
    let project = Project::new();
    let dir = project.path().display().to_string();
    project.write(
        "agent.sh",
        &format!(
            "read -r prompt\necho \"working on $prompt\"\n\
             case \"$prompt\" in *b.*) exit 4;; *c.*) while [ ! -e {dir}/release ]; do sleep 0.05; done;; esac\n"
        ),
    );
    project.write(
        "curupira.toml",
        "[settings]\nrepository = \"example.com/acme/widgets\"\n\n\
         [settings.agent]\ncommand = [\"sh\", \"agent.sh\"]\nmax_concurrent = 1\n\n\
         [settings.polling]\ninterval_seconds = 3600\n\n\
         [extensions.local]\nbuiltin = \"local-queue\"\n\n\
         [automations.q]\ntrigger = \"jsonl\"\nprompt = \"Do ${n}.\"\n\
         arguments = { path = \"tasks.jsonl\", done_path = \"done.jsonl\" }\n",
    );
    project.write(
        "tasks.jsonl",
        "{\"n\": \"a\"}\n{\"n\": \"b\"}\n{\"n\": \"c\"}\n",
    );
    project
}

/// The reference host's recordings, `recordings/reference-host/`.
pub fn recordings() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings/reference-host")
}

/// Replays `groups` of the recordings against this host with `python` into `out`
/// (`record.py --host`; `REF_VENV` is `venv` when given), then compares each group with its
/// recording (`compare.py --json --fields FIELDS`): for each group, the cases that
/// differ and in which fields.
pub fn replay_recordings(
    python: &Path,
    out: &Path,
    groups: &[&str],
    fields: &str,
    venv: Option<&Path>,
) -> Vec<(String, std::collections::BTreeMap<String, Vec<String>>)> {
    let mut record = Command::new(python);
    record
        .arg(recordings().join("record.py"))
        .args(["--host", curupira(), "--timeout-cap", "60"])
        .arg(out)
        .args(groups)
        .env_remove("RUST_LOG");
    if let Some(venv) = venv {
        record.env("REF_VENV", venv);
    }
    let replay = record.output().unwrap();
    assert!(
        replay.status.success(),
        "record.py failed: {}",
        String::from_utf8_lossy(&replay.stderr)
    );
    groups
        .iter()
        .map(|group| {
            let compared = Command::new(python)
                .arg(recordings().join("compare.py"))
                .arg(recordings().join(format!("{group}.json")))
                .arg(out.join(format!("{group}.json")))
                .args(["--json", "--fields", fields])
                .output()
                .unwrap();
            let found = serde_json::from_slice(&compared.stdout).unwrap_or_else(|error| {
                panic!(
                    "compare.py {group}: {error}: {}",
                    String::from_utf8_lossy(&compared.stderr)
                )
            });
            ((*group).to_owned(), found)
        })
        .collect()
}
