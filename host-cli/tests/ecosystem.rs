//! Tests against the published Curupira packages themselves (`tests/ecosystem_support`:
//! installed with `pip` into a venv under `target/`). Without them (no network) each
//! test is reported ignored, with the reason, in `cargo test`'s output and summary;
//! under `.ci/run`, which sets `CURUPIRA_ECOSYSTEM_REQUIRED`, it fails instead. This
//! file has its own harness (`libtest-mimic`) so that the skip is decided at run time.
//!
//! Checked here: the installation itself, and our host talking to an extension
//! written with the official SDK `curupira-sdk` (`probe`, `validate`, `run --once`).

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod ecosystem_support;
mod run_support;

use std::fs;
use std::path::Path;
use std::process::Command;

use ecosystem_support::{Ecosystem, PACKAGES, REQUIRED_VAR, ecosystem, required};
use libtest_mimic::{Arguments, Completion, Trial};
use run_support::{Project, RECORDING_AGENT, Run};
use serde_json::Value;

/// A trial that needs the ecosystem: ignored (or, when required, failed) without it.
fn with_ecosystem(name: &'static str, test: fn(&Ecosystem)) -> Trial {
    Trial::ignorable_test(name, move || match ecosystem() {
        Ok(installed) => {
            test(&installed);
            Ok(Completion::Completed)
        }
        Err(reason) if required() => Err(format!(
            "the published Curupira packages are needed ({REQUIRED_VAR} is set): {reason}"
        )
        .into()),
        Err(reason) => Ok(Completion::ignored_with(format!(
            "skipped: the published Curupira packages could not be installed: {reason}"
        ))),
    })
}

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        with_ecosystem(
            "the_published_packages_are_installed_at_their_pins",
            the_published_packages_are_installed_at_their_pins,
        ),
        with_ecosystem(
            "probe_passes_an_extension_written_with_the_official_sdk",
            probe_passes_an_extension_written_with_the_official_sdk,
        ),
        with_ecosystem(
            "validate_reports_the_official_sdks_rejection_in_its_words",
            validate_reports_the_official_sdks_rejection_in_its_words,
        ),
        with_ecosystem(
            "run_dispatches_every_item_of_an_official_sdk_extension_once",
            run_dispatches_every_item_of_an_official_sdk_extension_once,
        ),
        with_ecosystem(
            "a_continuous_run_sees_what_an_extension_remembering_per_process_missed",
            a_continuous_run_sees_what_an_extension_remembering_per_process_missed,
        ),
        with_ecosystem(
            "our_host_checks_curupira_plugins_as_far_as_it_goes_offline",
            our_host_checks_curupira_plugins_as_far_as_it_goes_offline,
        ),
        with_ecosystem(
            "the_reference_host_installs_every_manifest_we_ship",
            the_reference_host_installs_every_manifest_we_ship,
        ),
        with_ecosystem(
            "the_reference_host_runs_local_queue_each_item_once",
            the_reference_host_runs_local_queue_each_item_once,
        ),
        with_ecosystem(
            "the_reference_host_refuses_an_unknown_member_in_a_poll_result",
            the_reference_host_refuses_an_unknown_member_in_a_poll_result,
        ),
        with_ecosystem(
            "the_reference_host_runs_an_extension_built_with_our_sdk",
            the_reference_host_runs_an_extension_built_with_our_sdk,
        ),
        with_ecosystem(
            "the_official_github_plugin_reaches_every_issue_as_the_reference_host_does",
            the_official_github_plugin_reaches_every_issue_as_the_reference_host_does,
        ),
        with_ecosystem(
            "plugins_install_info_and_uninstall_replay_the_reference_host_s_recordings",
            plugins_install_info_and_uninstall_replay_the_reference_host_s_recordings,
        ),
        with_ecosystem(
            "either_host_sees_what_the_other_installed",
            either_host_sees_what_the_other_installed,
        ),
        with_ecosystem(
            "plugins_install_fetches_curupira_plugins_with_the_real_uvx",
            plugins_install_fetches_curupira_plugins_with_the_real_uvx,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// The venv holds each package at its pin, the SDK imports, and the reference host
/// runs and says its version.
fn the_published_packages_are_installed_at_their_pins(installed: &Ecosystem) {
    let script = "import importlib.metadata as m, sys, curupira_sdk\n\
                  for name in sys.argv[1:]:\n    print(name, m.version(name))";
    let mut python = Command::new(installed.bin("python"));
    python.arg("-c").arg(script);
    python.args(PACKAGES.iter().map(|(name, _)| *name));
    let output = python.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let versions = String::from_utf8(output.stdout).unwrap();
    let expected: String = PACKAGES
        .iter()
        .map(|(name, version)| format!("{name} {version}\n"))
        .collect();
    assert_eq!(versions, expected);

    let host = Command::new(installed.bin("curupira"))
        .arg("--version")
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap();
    assert!(host.status.success(), "{host:?}");
    let reference_version = PACKAGES[0].1;
    assert_eq!(
        String::from_utf8_lossy(&host.stdout).trim(),
        format!("curupira {reference_version}")
    );
}

/// The recording extension of `conformance/curupira-wire/README.md`, written with the
/// official SDK: trigger `list-entries(path, limit_total = 100) -> Entry`, a parameter
/// check (`limit_total` at least 1), one entry per poll from a JSON list, its cursor
/// in memory.
const OFFICIAL_EXTENSION: &str = r#"
import json
from dataclasses import dataclass

from curupira_sdk import Curupira, ValidationError

app = Curupira(name="rec-ext", version="0.1.0")
cursor = {}


@dataclass
class Entry:
    id: str
    title: str
    body: str


@app.trigger
def list_entries(path: str, limit_total: int = 100) -> Entry | None:
    with open(path, encoding="utf-8") as source:
        entries = json.load(source)
    index = cursor.get(path, 0)
    if index >= min(len(entries), limit_total):
        return None
    cursor[path] = index + 1
    entry = entries[index]
    return Entry(id=str(index + 1), title=entry["title"], body=entry["body"])


def check(params):
    if params["limit_total"] < 1:
        raise ValidationError("limit_total must be at least 1")


snapshots = {}
handed = {}


@app.trigger
def snapshot_entries(path: str) -> Entry | None:
    # Reads the file once per process, as curupira-plugins keeps what it has seen in
    # memory: only a new process sees entries added since.
    if path not in snapshots:
        with open(path, encoding="utf-8") as source:
            snapshots[path] = json.load(source)
    index = handed.get(path, 0)
    if index >= len(snapshots[path]):
        return None
    handed[path] = index + 1
    entry = snapshots[path][index]
    return Entry(id=str(index + 1), title=entry["title"], body=entry["body"])


app.param_check("list-entries", check)

if __name__ == "__main__":
    app.run()
"#;

/// A project holding the official-SDK extension as `[extensions.rec]` and two
/// entries; `arguments` is the automation's `arguments` table.
fn official_project(installed: &Ecosystem, arguments: &str) -> Project {
    official_project_with(installed, "list-entries", arguments, "")
}

/// The same with another of its triggers and more of the automation's table.
fn official_project_with(
    installed: &Ecosystem,
    trigger: &str,
    arguments: &str,
    more: &str,
) -> Project {
    let project = Project::new();
    project.write("extensions/rec/ext.py", OFFICIAL_EXTENSION);
    let python = installed.bin("python");
    let script = project.path().join("extensions/rec/ext.py");
    project.write(
        "extensions/rec/curupira-extension.toml",
        &format!(
            "manifest_version = 1\nname = \"rec\"\nversion = \"0.1.0\"\nprotocol_version = 2\n\
             runtime = \"python\"\nkind = \"trigger\"\ntrigger_types = [\"list-entries\", \"snapshot-entries\"]\n\n\
             [launch]\ntype = \"executable\"\nprogram = {:?}\nargs = [{:?}]\n",
            python.to_str().unwrap(),
            script.to_str().unwrap()
        ),
    );
    project.write(
        "entries.json",
        r#"[{"title": "first", "body": "b1"}, {"title": "second", "body": "b2"}]"#,
    );
    // Generous timeouts: the SDK starts a Python interpreter per process, on a busy
    // CI machine too.
    project.write(
        "curupira.toml",
        &format!(
            "[settings]\nrepository = \"example.com/acme/widgets\"\n\n[settings.timeouts]\n\
             initialize = 30\nrequest = 30\nshutdown = 10\n\n[settings.agent]\n{RECORDING_AGENT}\n\n\
             [extensions.rec]\npath = \"extensions/rec\"\n\n[automations.entries]\n\
             trigger = \"{trigger}\"\nprompt = \"Entry ${{id}}: ${{title}} (${{body}})\"\n\
             arguments = {arguments}\n{more}"
        ),
    );
    project
}

fn context(run: &Run) -> String {
    format!("{run:?}")
}

/// `curupira probe` on the official SDK's extension: every step passes, and the
/// configuration the SDK normalised (its default filled in) is what was polled with.
fn probe_passes_an_extension_written_with_the_official_sdk(installed: &Ecosystem) {
    let project = official_project(installed, "{ path = \"entries.json\" }");
    let script = project.path().join("extensions/rec/ext.py");
    let run = project.curupira(&[
        "probe",
        "--timeout",
        "30",
        "--arguments",
        r#"{"path": "entries.json"}"#,
        "--",
        installed.bin("python").to_str().unwrap(),
        script.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(0), "{}", context(&run));
    let lines: Vec<&str> = run.stdout.lines().collect();
    let steps: Vec<(&str, &str)> = lines[..lines.len() - 1]
        .iter()
        .map(|line| {
            let mut words = line.split([' ', ':']);
            (words.next().unwrap(), words.next().unwrap())
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("pass", "initialize"),
            ("pass", "describe"),
            ("pass", "trigger/schema"),
            ("pass", "trigger/validate"),
            ("pass", "trigger/poll"),
            ("pass", "trigger/onStarted"),
            ("pass", "trigger/onFinished"),
            ("pass", "shutdown"),
        ],
        "{}",
        run.stdout
    );
    assert!(lines[0].contains("server rec-ext 0.1.0"), "{}", lines[0]);
    assert!(
        lines[2].contains("prompt fields: id, title, body"),
        "{}",
        lines[2]
    );
    assert!(lines[3].contains(r#""limit_total":100"#), "{}", lines[3]);
    assert!(
        lines[4].contains(r#"id="1", title="first", body="b1""#),
        "{}",
        lines[4]
    );
}

/// `curupira validate` keeps the SDK's `ok: false` verdict: the automation's error,
/// in the extension's words, at its `arguments`, exit 1.
fn validate_reports_the_official_sdks_rejection_in_its_words(installed: &Ecosystem) {
    let project = official_project(installed, "{ path = \"entries.json\", limit_total = 0 }");
    let run = project.curupira(&["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{}", context(&run));
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{report}");
    assert_eq!(diagnostics[0]["code"], "config/trigger-rejected");
    assert_eq!(diagnostics[0]["path"], "/automations/entries/arguments");
    assert_eq!(
        diagnostics[0]["message"],
        "extension `rec` rejected the configuration of automation `entries`: \
         limit_total must be at least 1"
    );

    // An unknown parameter, in the SDK's words too.
    let project = official_project(installed, "{ path = \"entries.json\", colour = \"red\" }");
    let run = project.curupira(&["validate"]);
    assert_eq!(run.code, Some(2), "{}", context(&run));
    assert!(
        run.stdout.contains("unknown parameters ['colour']"),
        "{}",
        context(&run)
    );

    // And what fits passes, with nothing to say.
    let project = official_project(installed, "{ path = \"entries.json\" }");
    let run = project.curupira(&["validate"]);
    assert_eq!(run.code, Some(0), "{}", context(&run));
}

/// `curupira run --once` dispatches each entry once, with the prompt rendered from the
/// SDK's pairs; a second run finds both done in the ledger (the extension, its cursor
/// in memory, hands them out again) and dispatches nothing.
fn run_dispatches_every_item_of_an_official_sdk_extension_once(installed: &Ecosystem) {
    let project = official_project(installed, "{ path = \"entries.json\" }");
    let run = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{}", context(&run));
    assert_eq!(
        run.events_named("task.finished").len(),
        2,
        "{}",
        context(&run)
    );
    let mut prompts: Vec<String> = fs::read_dir(project.path().join("out"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| file_name(path).starts_with("prompt-"))
        .map(|path| fs::read_to_string(path).unwrap())
        .collect();
    prompts.sort();
    assert_eq!(
        prompts,
        ["Entry 1: first (b1)", "Entry 2: second (b2)"],
        "{}",
        context(&run)
    );

    let again = project.curupira(&["run", "--once", "--format", "json"]);
    assert_eq!(again.code, Some(0), "{}", context(&again));
    assert!(
        again.events_named("task.started").is_empty(),
        "{}",
        context(&again)
    );
    assert_eq!(
        again.events_named("task.skipped").len(),
        2,
        "{}",
        context(&again)
    );
}

fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("")
}

/// The prompts the recording agent received, sorted.
fn prompts(project: &Project) -> Vec<String> {
    let Ok(entries) = fs::read_dir(project.path().join("out")) else {
        return Vec::new();
    };
    let mut prompts: Vec<String> = entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| file_name(path).starts_with("prompt-"))
        .filter_map(|path| fs::read_to_string(path).ok())
        .collect();
    prompts.sort();
    prompts
}

/// An official-SDK extension that reads its source once per process (as
/// `curupira-plugins` remembers what it has seen): under a continuous run, an entry
/// added after the first round is dispatched — each round runs in a fresh process —
/// and nothing is dispatched twice.
fn a_continuous_run_sees_what_an_extension_remembering_per_process_missed(installed: &Ecosystem) {
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let project = official_project_with(
        installed,
        "snapshot-entries",
        "{ path = \"entries.json\" }",
        "polling = { interval_seconds = 0.2 }\n",
    );
    let child = Command::new(run_support::curupira())
        .args(["run", "--watch", "--format", "json"])
        .current_dir(project.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let wait_for = |count: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while prompts(&project).len() < count {
            assert!(Instant::now() < deadline, "only {:?}", prompts(&project));
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for(2);
    project.write(
        "entries.json",
        r#"[{"title": "first", "body": "b1"}, {"title": "second", "body": "b2"},
            {"title": "third", "body": "b3"}]"#,
    );
    wait_for(3);
    // A few more rounds: still nothing twice.
    std::thread::sleep(Duration::from_millis(800));
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut child = child;
    assert_eq!(child.wait().unwrap().code(), Some(143));
    assert_eq!(
        prompts(&project),
        [
            "Entry 1: first (b1)",
            "Entry 2: second (b2)",
            "Entry 3: third (b3)"
        ]
    );
}

/// A scratch folder set up to run the reference host offline, as
/// `conformance/curupira-wire/settings/README.md` says: an empty `HOME`, a bare Git
/// repository with one commit, a `claude` stand-in first on `PATH` (it logs each
/// prompt, one JSON line per call, to `claude.jsonl`), and either a `uvx` stand-in
/// that runs its arguments as a command or the real `uvx` of the venv (with a cache
/// of its own, offline).
/// `git ARGS` in `root` with a test author, which must succeed.
fn git_in(root: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
}

struct ReferenceHost {
    dir: tempfile::TempDir,
    installed: Ecosystem,
}

impl ReferenceHost {
    fn new(installed: &Ecosystem, real_uvx: bool) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("home")).unwrap();
        fs::create_dir_all(root.join("bin")).unwrap();
        let git = |args: &[&str]| git_in(root, args);
        git(&["init", "-q", "src"]);
        git(&["-C", "src", "commit", "-q", "--allow-empty", "-m", "init"]);
        git(&["clone", "-q", "--bare", "src", "remotes/acme/widgets.git"]);
        // uvx: drop leading options and `--from PKG`, run the rest as a command.
        let uvx = "#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in --from) shift 2;; -*) shift;; *) break;; esac; done\nexec \"$@\"\n";
        let log = root.join("claude.jsonl");
        let claude = format!(
            "#!{python}\nimport json, os, sys\nargs = sys.argv[1:]\nprompt = args[args.index('--') + 1] if '--' in args else ''\n\
             with open({log:?}, 'a') as f:\n    f.write(json.dumps({{'prompt': prompt, 'cwd': os.getcwd()}}) + '\\n')\n\
             print(json.dumps({{'type': 'system', 'subtype': 'init', 'session_id': 's'}}))\n\
             print(json.dumps({{'type': 'result', 'subtype': 'success', 'is_error': False, 'result': 'done', 'session_id': 's'}}))\n",
            python = installed.bin("python").display(),
            log = log.display().to_string(),
        );
        let mut stand_ins = vec![("claude", claude)];
        if real_uvx {
            let uvx = format!(
                "#!/bin/sh\nUV_CACHE_DIR={cache:?} exec {real:?} --offline \"$@\"\n",
                cache = root.join("uv-cache").display().to_string(),
                real = installed.bin("uvx").display().to_string(),
            );
            stand_ins.push(("uvx", uvx));
        } else {
            stand_ins.push(("uvx", uvx.to_owned()));
        }
        for (name, text) in stand_ins {
            let path = root.join("bin").join(name);
            fs::write(&path, text).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        ReferenceHost {
            dir,
            installed: installed.clone(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `curupira ARGS…` of the reference host in the scratch folder.
    fn run(&self, args: &[&str]) -> std::process::Output {
        let path = format!(
            "{}:{}",
            self.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new(self.installed.bin("curupira"))
            .args(args)
            .current_dir(self.path())
            .env("HOME", self.path().join("home"))
            .env("PATH", path)
            .output()
            .unwrap()
    }

    /// The prompts the `claude` stand-in received, in order.
    fn prompts(&self) -> Vec<String> {
        fs::read_to_string(self.path().join("claude.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let call: Value = serde_json::from_str(line).unwrap();
                call["prompt"].as_str().unwrap().to_owned()
            })
            .collect()
    }
}

/// The reference host `curupira` 0.4.0 validates and runs our `local-queue`, an
/// extension built with our Rust SDK, shipped the way its users can get it: the
/// binary in a Python wheel built with `maturin` (`bin` bindings), launched by the
/// real `uvx --from <wheel> curupira-local-queue` (offline). One process per phase
/// (`onFinished` arrives in a process that never polled): each item is dispatched
/// once, `local-queue` records every one as done, and a second run of the reference
/// host dispatches nothing. Two automations on one registration, two tasks at once.
fn the_reference_host_runs_local_queue_each_item_once(installed: &Ecosystem) {
    let host = ReferenceHost::new(installed, true);
    let root = host.path();
    let wheels = root.join("wheels");
    let crate_manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../local-queue/Cargo.toml");
    let built = Command::new(installed.bin("maturin"))
        .args(["build", "--quiet", "-b", "bin", "--profile", "dev", "-m"])
        .arg(&crate_manifest)
        .arg("-o")
        .arg(&wheels)
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        )
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    let wheel = fs::read_dir(&wheels)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .unwrap();
    // Line 3 is no item (a number value): local-queue skips it and says so, and
    // sends the reference host no `rejected` count, which it would refuse (it
    // announced no capabilities).
    fs::write(
        root.join("a.jsonl"),
        "{\"n\": \"1\"}\n{\"n\": \"2\"}\n{\"n\": 5}\n{\"n\": \"3\"}\n",
    )
    .unwrap();
    fs::write(root.join("b.jsonl"), "{\"n\": \"4\"}\n").unwrap();
    let settings = format!(
        "[settings]\nmax_active_tasks = 2\nworkspace_dir = {ws:?}\nstate_db_path = {db:?}\n\n\
         [repositories.demo]\nremote = \"file://{remote}\"\n\n\
         [agents.defaults]\nprofile = \"stub\"\n\n[agents.profiles.stub]\nprovider = \"claude\"\n\n\
         [plugins.lq]\ntype = \"uvx\"\nargs = [\"--from\", {wheel:?}, \"curupira-local-queue\"]\n\n\
         [automations.a]\ntrigger_type = \"lq/jsonl\"\nrepository = \"demo\"\npath = {a:?}\n\
         prompt = \"A ${{n}} in ${{repository}}\"\n\n\
         [automations.b]\ntrigger_type = \"lq/jsonl\"\nrepository = \"demo\"\npath = {b:?}\n\
         prompt = \"B ${{n}}\"\n",
        ws = root.join("ws").display().to_string(),
        db = root.join("state.sqlite3").display().to_string(),
        remote = root.join("remotes/acme/widgets.git").display(),
        wheel = wheel.display().to_string(),
        a = root.join("a.jsonl").display().to_string(),
        b = root.join("b.jsonl").display().to_string(),
    );
    fs::write(root.join("settings.toml"), settings).unwrap();

    let validated = host.run(&["validate", "--config", "settings.toml"]);
    assert!(validated.status.success(), "{validated:?}");

    let ran = host.run(&["run", "--config", "settings.toml"]);
    assert!(ran.status.success(), "{ran:?}");
    let mut prompts = host.prompts();
    prompts.sort();
    assert_eq!(
        prompts,
        [
            "A 1 in acme/widgets",
            "A 2 in acme/widgets",
            "A 3 in acme/widgets",
            "B 4"
        ],
        "{ran:?}"
    );
    let done = |file: &str| {
        fs::read_to_string(root.join(file))
            .unwrap_or_default()
            .lines()
            .count()
    };
    assert_eq!(
        (done("a.jsonl.done"), done("b.jsonl.done")),
        (3, 1),
        "{ran:?}"
    );
    assert_eq!(done("a.jsonl.done.rejected"), 1, "{ran:?}");

    let again = host.run(&["run", "--config", "settings.toml"]);
    assert!(again.status.success(), "{again:?}");
    assert_eq!(
        host.prompts().len(),
        4,
        "the second run dispatched again: {again:?}"
    );
}

/// What makes our additions to the protocol opt-in: the reference host refuses a
/// member it does not know at the top of a poll result (here `rejected`, which our
/// extensions send only to a host that announced `capabilities.poll_rejected` in
/// `initialize`), failing the automation before any agent runs.
fn the_reference_host_refuses_an_unknown_member_in_a_poll_result(installed: &Ecosystem) {
    let host = ReferenceHost::new(installed, false);
    let root = host.path();
    let extension = r#"import json, sys
def read():
    head = sys.stdin.buffer.read(8)
    return json.loads(sys.stdin.buffer.read(int(head, 16))) if len(head) == 8 else None
def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"%08x" % len(body) + body)
    sys.stdout.buffer.flush()
while (message := read()) is not None:
    method, id = message.get("method"), message.get("id")
    if id is None:
        continue
    result = {
        "initialize": {"protocol_version": 2, "server_info": {"name": "extra", "version": "0.1.0"}},
        "describe": {"triggers": [{"trigger_type": "items", "prompt_fields": ["title"]}], "agents": []},
        "trigger/schema": {"schema": {"type": "object"}, "prompt_fields": ["title"]},
        "trigger/validate": {"ok": True},
        "trigger/poll": {"values": [{"key": "title", "value": "x"}], "rejected": 2},
    }.get(method, {})
    send({"jsonrpc": "2.0", "id": id, "result": result})
    if method == "shutdown":
        break
"#;
    fs::write(root.join("extra.py"), extension).unwrap();
    let settings = format!(
        "[settings]\nworkspace_dir = {ws:?}\nstate_db_path = {db:?}\n\n\
         [repositories.demo]\nremote = \"file://{remote}\"\n\n\
         [agents.defaults]\nprofile = \"stub\"\n\n[agents.profiles.stub]\nprovider = \"claude\"\n\n\
         [plugins.extra]\ntype = \"uvx\"\nargs = [{python:?}, {script:?}]\n\n\
         [automations.e]\ntrigger_type = \"extra/items\"\nrepository = \"demo\"\n\
         prompt = \"Do ${{title}}\"\n",
        ws = root.join("ws").display().to_string(),
        db = root.join("state.sqlite3").display().to_string(),
        remote = root.join("remotes/acme/widgets.git").display(),
        python = installed.bin("python").display().to_string(),
        script = root.join("extra.py").display().to_string(),
    );
    fs::write(root.join("settings.toml"), settings).unwrap();
    let ran = host.run(&["run", "--config", "settings.toml"]);
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(ran.status.code(), Some(1), "{ran:?}");
    assert!(
        stderr.contains("decode result for trigger/poll: unknown field `rejected`"),
        "{stderr}"
    );
    assert!(host.prompts().is_empty(), "no agent ran: {ran:?}");
}

/// The reference host validates and runs `examples/entries.rs`, an extension built
/// with our Rust SDK's typed API (the twin of the recording's official-SDK
/// extension): its parameter check's rejection is the reference host's configuration
/// error, and every entry is dispatched once.
fn the_reference_host_runs_an_extension_built_with_our_sdk(installed: &Ecosystem) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let built = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "curupira-extension-sdk",
            "--example",
            "entries",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    let exe = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/debug/examples/entries")
        .canonicalize()
        .unwrap();

    let host = ReferenceHost::new(installed, false);
    let root = host.path();
    fs::write(
        root.join("entries.json"),
        r#"[{"title": "first", "body": "b1"}, {"title": "second", "body": "b2"}]"#,
    )
    .unwrap();
    let settings = |limit: &str| {
        format!(
            "[settings]\nworkspace_dir = {ws:?}\nstate_db_path = {db:?}\n\n\
             [repositories.demo]\nremote = \"file://{remote}\"\n\n\
             [agents.defaults]\nprofile = \"stub\"\n\n[agents.profiles.stub]\nprovider = \"claude\"\n\n\
             [plugins.rs]\ntype = \"uvx\"\nargs = [{exe:?}]\n\n\
             [automations.e1]\ntrigger_type = \"rs/list-entries\"\nrepository = \"demo\"\n\
             path = {path:?}\n{limit}prompt = \"Entry ${{id}}: ${{title}}\"\n",
            ws = root.join("ws").display().to_string(),
            db = root.join("state.sqlite3").display().to_string(),
            remote = root.join("remotes/acme/widgets.git").display(),
            exe = exe.display().to_string(),
            path = root.join("entries.json").display().to_string(),
        )
    };
    fs::write(root.join("bad.toml"), settings("limit_total = 0\n")).unwrap();
    let rejected = host.run(&["validate", "--config", "bad.toml"]);
    assert_eq!(rejected.status.code(), Some(2), "{rejected:?}");
    let said = String::from_utf8_lossy(&rejected.stdout).to_string()
        + &String::from_utf8_lossy(&rejected.stderr);
    assert!(
        said.contains("limit_total must be at least 1"),
        "{rejected:?}"
    );

    fs::write(root.join("settings.toml"), settings("")).unwrap();
    let validated = host.run(&["validate", "--config", "settings.toml"]);
    assert!(validated.status.success(), "{validated:?}");
    let ran = host.run(&["run", "--config", "settings.toml"]);
    assert!(ran.status.success(), "{ran:?}");
    assert_eq!(
        host.prompts(),
        ["Entry 1: first", "Entry 2: second"],
        "{ran:?}"
    );
}

/// Our host on the official `curupira-plugins`, registered as the reference host's
/// users do (`[plugins.gh] type = "uvx", args = ["--from", "curupira-plugins",
/// "curupira-plugins"]`), offline (a `uvx` stand-in maps `--from PKG EXE` to the
/// venv's `EXE`; without `gh` no poll can succeed): `validate` goes through
/// `initialize`, `describe`, `trigger/schema` and `trigger/validate`, and a bad
/// parameter is refused with the extension's own message.
fn our_host_checks_curupira_plugins_as_far_as_it_goes_offline(installed: &Ecosystem) {
    use std::os::unix::fs::PermissionsExt;
    let project = Project::new();
    let bin = project.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let uvx = format!(
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in --from) shift 2;; -*) shift;; *) break;; esac; done\n\
         exe=\"$1\"; shift\nexec {venv:?}/bin/\"$exe\" \"$@\"\n",
        venv = installed.venv.display().to_string(),
    );
    fs::write(bin.join("uvx"), uvx).unwrap();
    fs::set_permissions(bin.join("uvx"), fs::Permissions::from_mode(0o755)).unwrap();
    let config = |extra: &str| {
        format!(
            "[settings]\nrepository = \"acme/api\"\n\n[settings.timeouts]\ninitialize = 60\n\
             request = 60\nshutdown = 10\n\n[settings.agent]\n{RECORDING_AGENT}\n\n\
             [plugins.gh]\ntype = \"uvx\"\nargs = [\"--from\", \"curupira-plugins\", \"curupira-plugins\"]\n\n\
             [automations.issues]\ntrigger = \"gh/github-issues\"\n\
             prompt = \"Fix #${{issue_number}}: ${{issue_title}}\"\n\
             arguments = {{ repo = \"acme/api\", labels = [\"agent-ready\"]{extra} }}\n"
        )
    };
    project.write("curupira.toml", &config(""));
    let run =
        run_support::run_in_with_path(project.path(), &bin, &["validate", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{}", context(&run));
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["errors"], 0, "{report}");
    assert_eq!(
        report["warnings"], 0,
        "the prompt's fields are the plugin's: {report}"
    );

    project.write("curupira.toml", &config(", state = \"sideways\""));
    let run =
        run_support::run_in_with_path(project.path(), &bin, &["validate", "--format", "json"]);
    assert_eq!(run.code, Some(2), "{}", context(&run));
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{report}");
    assert_eq!(diagnostics[0]["code"], "config/trigger-rejected");
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("state: Input should be 'open', 'closed' or 'all'"),
        "{report}"
    );
}

/// Every manifest this repository ships installs under the reference host
/// (`curupira plugins install path:<folder> --yes`): the Node.js example's, the
/// built-in `local-queue`'s (as `--curupira-print-manifest` prints it) and those of
/// the Rust SDK's examples.
fn the_reference_host_installs_every_manifest_we_ship(installed: &Ecosystem) {
    let host = ReferenceHost::new(installed, false);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let printed = Command::new(run_support::curupira())
        .args(["builtin", "local-queue", "--curupira-print-manifest"])
        .output()
        .unwrap();
    assert!(printed.status.success(), "{printed:?}");
    let mut manifests = vec![
        (
            "node-trigger".to_owned(),
            fs::read_to_string(repo.join("examples/node-trigger/curupira-extension.toml")).unwrap(),
        ),
        (
            "local-queue".to_owned(),
            String::from_utf8(printed.stdout).unwrap(),
        ),
    ];
    for example in ["counter", "entries"] {
        let source =
            fs::read_to_string(repo.join(format!("extension-sdk/examples/{example}.rs"))).unwrap();
        let start = source.find("r#\"").unwrap() + 3;
        let end = start + source[start..].find("\"#").unwrap();
        manifests.push((example.to_owned(), source[start..end].to_owned()));
    }
    for (name, manifest) in manifests {
        let folder = host.path().join("manifests").join(&name);
        fs::create_dir_all(&folder).unwrap();
        fs::write(folder.join("curupira-extension.toml"), &manifest).unwrap();
        let source = format!("path:{}", folder.display());
        let out = host.run(&["plugins", "install", &source, "--yes"]);
        assert!(out.status.success(), "{name}: {out:?}\n{manifest}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Installed extension"),
            "{name}: {out:?}"
        );
    }
}

/// The reference host's users' scenario with the official `curupira-plugins`, unchanged
/// and launched by the real `uvx` (from PyPI, through the proxy's tunnel), against
/// GitHub's stand-in (`ecosystem_support::github`) with 15 open issues: one
/// reference-form `settings.toml`, a local bare remote, the same `claude` stand-in.
///
/// - The reference host and ours, each with its own home, make the same agent calls
///   (command line and prompt, the worktree relative to the home) and print the same
///   `ok` lines: all 15 issues.
/// - With `batch_size = 10`, our drained run still reaches all 15 (the plugin starts
///   its search over in each round's process: the 10 handled ones do not use up the
///   second round), in three searches: two rounds that dispatched and one that found
///   nothing new.
/// - Run again on the same home, ours dispatches nothing (its ledger).
fn the_official_github_plugin_reaches_every_issue_as_the_reference_host_does(
    installed: &Ecosystem,
) {
    use ecosystem_support::github::{GitHub, TOKEN};
    use std::os::unix::fs::PermissionsExt;
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    let github = GitHub::start(installed, &root.join("github"), 15);
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let claude = format!(
        "#!{python}\nimport json, os, sys\n\
         with open(os.path.join(os.environ['HOME'], 'calls.jsonl'), 'a') as f:\n\
         \x20   f.write(json.dumps({{'args': sys.argv[1:], 'cwd': os.getcwd()}}) + '\\n')\n\
         print(json.dumps({{'type': 'system', 'subtype': 'init', 'session_id': 's'}}))\n\
         print(json.dumps({{'type': 'result', 'subtype': 'success', 'is_error': False, \
         'result': 'done', 'session_id': 's'}}))\n",
        python = installed.bin("python").display(),
    );
    fs::write(bin.join("claude"), claude).unwrap();
    fs::set_permissions(bin.join("claude"), fs::Permissions::from_mode(0o755)).unwrap();
    let git = |args: &[&str]| git_in(root, args);
    git(&["init", "-q", "-b", "main", "src"]);
    git(&["-C", "src", "commit", "-q", "--allow-empty", "-m", "init"]);
    git(&["clone", "-q", "--bare", "src", "api.git"]);
    let settings = |polling: &str| {
        format!(
            "{polling}[repositories.api]\nremote = {remote:?}\n\n\
             [agents.defaults]\nprofile = \"stub\"\n\n[agents.profiles.stub]\nprovider = \"claude\"\n\n\
             [plugins.gh]\ntype = \"uvx\"\n\
             args = [\"--from\", \"curupira-plugins==0.1.0\", \"curupira-plugins\"]\n\n\
             [automations.fix]\ntrigger_type = \"gh/github-issues\"\nrepository = \"api\"\n\
             repo = \"acme/api\"\nlabels = [\"agent-ready\"]\n\
             prompt = \"Fix #{{{{ issue_number }}}}: {{{{ issue_title }}}}\"\n",
            remote = root.join("api.git").display().to_string(),
        )
    };
    fs::write(root.join("settings.toml"), settings("")).unwrap();
    fs::write(
        root.join("batch.toml"),
        settings("[settings.polling]\nbatch_size = 10\n\n"),
    )
    .unwrap();
    let uv_cache = installed.venv.join("../uv-cache");
    let venv_bin = installed.venv.join("bin");
    let command = |program: &Path, home: &str| {
        let home = root.join(home);
        fs::create_dir_all(&home).unwrap();
        let mut command = Command::new(program);
        command
            .current_dir(root)
            .env("HOME", &home)
            .env("UV_CACHE_DIR", &uv_cache)
            .env_remove("RUST_LOG");
        github.environment(&mut command, &[&bin, &venv_bin]);
        command
    };
    // The first `uvx` of a machine fetches the plugin from PyPI: done before the hosts
    // time their extension's start.
    let warmed = run_support::run_bounded(
        command(&installed.bin("uvx"), "warm").args([
            "--from",
            "curupira-plugins==0.1.0",
            "curupira-plugins",
            "--curupira-print-manifest",
        ]),
        std::time::Duration::from_secs(300),
    )
    .unwrap();
    assert!(
        warmed.status.is_some_and(|status| status.success()),
        "uvx could not fetch curupira-plugins: {}",
        warmed.stderr
    );
    let run = |program: &Path, home: &str, config: &str| {
        let ended = run_support::run_bounded(
            command(program, home).args(["run", "--config", config]),
            std::time::Duration::from_secs(300),
        )
        .unwrap();
        assert_eq!(
            ended.status.and_then(|status| status.code()),
            Some(0),
            "{program:?} run --config {config}: {}\n{}",
            ended.stdout,
            ended.stderr
        );
        let mut ok: Vec<String> = ended.stdout.lines().map(str::to_owned).collect();
        ok.sort();
        let home = root.join(home);
        let mut calls: Vec<(Vec<String>, String)> = fs::read_to_string(home.join("calls.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let call: Value = serde_json::from_str(line).unwrap();
                let args = call["args"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|arg| arg.as_str().unwrap().to_owned())
                    .collect();
                let cwd = call["cwd"].as_str().unwrap();
                let relative = Path::new(cwd).strip_prefix(home.canonicalize().unwrap());
                (args, relative.unwrap().display().to_string())
            })
            .collect();
        calls.sort();
        (ok, calls)
    };

    let (reference_ok, reference_calls) =
        run(&installed.bin("curupira"), "reference", "settings.toml");
    let searches = github.requests().len();
    let (ours_ok, ours_calls) = run(Path::new(run_support::curupira()), "ours", "settings.toml");
    assert_eq!(ours_ok, reference_ok);
    assert_eq!(ours_calls, reference_calls);
    assert_eq!(ours_ok.len(), 15, "{ours_ok:#?}");
    // `ok\t<automation>:<the remote's owner/name>:<trigger>:<task id>`.
    assert!(
        ours_ok
            .iter()
            .all(|line| line.starts_with("ok\tfix:") && line.contains("/api:gh/github-issues:")),
        "{ours_ok:#?}"
    );
    let mut prompts: Vec<&str> = ours_calls
        .iter()
        .map(|(args, _)| args.last().unwrap().as_str())
        .collect();
    prompts.sort_unstable();
    let mut expected: Vec<String> = (1..=15).map(|n| format!("Fix #{n}: Issue {n}")).collect();
    expected.sort_unstable();
    assert_eq!(prompts, expected);
    assert!(
        ours_calls
            .iter()
            .all(|(_, cwd)| cwd
                .starts_with(".curupira/workspaces/api.worktrees/fix/gh-github-issues-")),
        "{ours_calls:#?}"
    );
    let requests = github.requests();
    assert!(
        requests.iter().all(
            |request| request["authorization"] == format!("Bearer {TOKEN}")
                && request["query"]
                    == "is:issue repo:acme/api is:open label:agent-ready sort:created-asc"
        ),
        "{requests:#?}"
    );

    let before = github.requests().len();
    let (batch_ok, batch_calls) = run(Path::new(run_support::curupira()), "batch", "batch.toml");
    assert_eq!(batch_ok, ours_ok, "batch_size = 10 reaches all 15");
    assert_eq!(batch_calls.len(), 15);
    assert_eq!(
        github.requests().len() - before,
        3,
        "one search per round's process: 10 new, 5 new, none new"
    );
    let (again_ok, again_calls) = run(Path::new(run_support::curupira()), "batch", "batch.toml");
    assert!(again_ok.is_empty(), "{again_ok:?}");
    assert_eq!(again_calls, batch_calls, "no agent ran again");
    assert!(searches >= 1);
}

/// `plugins list | info | install | uninstall`, every recorded case of
/// `recordings/reference-host/plugins.json` replayed against this host by the script
/// that recorded them (`record.py --host`, the installed venv for `pip:` sources): the
/// same exit code, stdout and files under `~/.curupira/extensions/`. The `list` cases
/// differ on purpose: this host says its own version, and does not list the
/// reference's built-in catalogue of `curupira-plugins` triggers when that package is
/// not installed.
fn plugins_install_info_and_uninstall_replay_the_reference_host_s_recordings(
    installed: &Ecosystem,
) {
    let recordings = run_support::recordings();
    let out = tempfile::tempdir().unwrap();
    let mut replays = run_support::replay_recordings(
        &installed.bin("python"),
        out.path(),
        &["plugins"],
        "exit_code,stdout,installed",
        Some(&installed.venv),
    );
    let (_, differing) = replays.remove(0);
    let intended = [
        "list, nothing installed, no config",
        "list after installing curupira-plugins",
        "list with three installed",
        "list with three installed and a config with a plugin",
    ];
    let unexpected: Vec<String> = differing
        .iter()
        .filter(|(case, _)| !intended.contains(&case.as_str()))
        .map(|(case, fields)| format!("{case}: {fields:?}"))
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:#?}");
    for case in intended {
        assert_eq!(
            differing.get(case),
            Some(&vec!["stdout".to_owned()]),
            "{case}"
        );
    }
    // The listed lines are the reference's, but for the version.
    let replayed: Value =
        serde_json::from_str(&fs::read_to_string(out.path().join("plugins.json")).unwrap())
            .unwrap();
    let recorded: Value =
        serde_json::from_str(&fs::read_to_string(recordings.join("plugins.json")).unwrap())
            .unwrap();
    let lines = |record: &Value| -> Vec<String> {
        let case = record["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["case"] == "list with three installed")
            .unwrap();
        case["stdout"]
            .as_array()
            .unwrap()
            .iter()
            .map(|line| line.as_str().unwrap().to_owned())
            .collect()
    };
    let ours = env!("CARGO_PKG_VERSION");
    let expected: Vec<String> = lines(&recorded)
        .into_iter()
        .map(|line| {
            line.replace(
                "curupira 0.4.0 (built-in)",
                &format!("curupira {ours} (built-in)"),
            )
        })
        .collect();
    assert_eq!(lines(&replayed), expected);
}

/// What this host installs, the reference host lists and prints; what the reference
/// installs, this host prints and removes: the same store, `~/.curupira/extensions/`.
fn either_host_sees_what_the_other_installed(installed: &Ecosystem) {
    let home = tempfile::tempdir().unwrap();
    let folder = home.path().join("local-ext");
    fs::create_dir_all(&folder).unwrap();
    fs::write(
        folder.join("curupira-extension.toml"),
        "manifest_version = 1\nname = \"local-ext\"\nversion = \"0.2.0\"\nprotocol_version = 2\n\
         runtime = \"python\"\nkind = \"trigger\"\ntrigger_types = [\"items\"]\n\n[launch]\n\
         type = \"executable\"\nprogram = \"python3\"\nargs = [\"ext.py\"]\n",
    )
    .unwrap();
    let run = |program: &Path, args: &[&str]| {
        let output = Command::new(program)
            .args(args)
            .current_dir(home.path())
            .env("HOME", home.path())
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let ours = Path::new(run_support::curupira());
    let reference = installed.bin("curupira");
    let source = format!("path:{}", folder.display());
    assert_eq!(
        run(ours, &["plugins", "install", &source, "--yes"]),
        (Some(0), "Installed extension local-ext\n".to_owned())
    );
    let (code, listed) = run(&reference, &["plugins", "list"]);
    assert_eq!(code, Some(0));
    assert!(
        listed.contains("items\tlocal-ext 0.2.0\tprompt fields: (see extension)\n"),
        "{listed}"
    );
    assert_eq!(
        run(&reference, &["plugins", "info", "local-ext"]),
        run(ours, &["plugins", "info", "local-ext"])
    );
    assert_eq!(
        run(&reference, &["plugins", "uninstall", "local-ext"]).0,
        Some(0)
    );
    assert_eq!(run(ours, &["plugins", "info", "local-ext"]).0, Some(1));
    // The other way round.
    assert_eq!(
        run(&reference, &["plugins", "install", &source, "--yes"]).0,
        Some(0)
    );
    let (code, listed) = run(ours, &["plugins", "list"]);
    assert_eq!(code, Some(0));
    assert!(listed.contains("items\tlocal-ext 0.2.0\t"), "{listed}");
    assert_eq!(
        run(ours, &["plugins", "uninstall", "local-ext"]),
        (Some(0), "Uninstalled extension local-ext\n".to_owned())
    );
    assert_eq!(
        run(&reference, &["plugins", "info", "local-ext"]).0,
        Some(1)
    );
}

/// `plugins install pip:curupira-plugins==0.1.0` with the real `uvx` (from PyPI, its
/// cache shared with the other tests), by each host in a home of its own: the same
/// file, byte for byte, which the reference host lists and which ours lists and runs
/// `info` on as the reference does.
fn plugins_install_fetches_curupira_plugins_with_the_real_uvx(installed: &Ecosystem) {
    let root = tempfile::tempdir().unwrap();
    let uv_cache = installed.venv.join("../uv-cache");
    let path = format!(
        "{}:{}",
        installed.venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |program: &Path, home: &str, args: &[&str]| {
        let home = root.path().join(home);
        fs::create_dir_all(&home).unwrap();
        let ended = run_support::run_bounded(
            Command::new(program)
                .args(args)
                .current_dir(root.path())
                .env("HOME", &home)
                .env("PATH", &path)
                .env("UV_CACHE_DIR", &uv_cache)
                .env_remove("RUST_LOG"),
            std::time::Duration::from_secs(300),
        )
        .unwrap();
        (
            ended.status.and_then(|status| status.code()),
            ended.stdout,
            ended.stderr,
        )
    };
    let ours = Path::new(run_support::curupira());
    let reference = installed.bin("curupira");
    let install = ["plugins", "install", "pip:curupira-plugins==0.1.0", "--yes"];
    let (code, out, err) = run(ours, "ours", &install);
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "Installed extension curupira-plugins\n"),
        "{err}"
    );
    let (code, _, err) = run(&reference, "reference", &install);
    assert_eq!(code, Some(0), "{err}");
    let kept = |home: &str| {
        fs::read_to_string(
            root.path()
                .join(home)
                .join(".curupira/extensions/curupira-plugins/curupira-extension.toml"),
        )
        .unwrap()
    };
    assert_eq!(kept("ours"), kept("reference"));
    // The reference lists what ours installed.
    let (code, listed, _) = run(&reference, "ours", &["plugins", "list"]);
    assert_eq!(code, Some(0));
    assert!(
        listed.contains("github-issues\tcurupira-plugins 0.1.0\tprompt fields: (see extension)\n"),
        "{listed}"
    );
    assert_eq!(
        run(ours, "reference", &["plugins", "info", "curupira-plugins"]).1,
        run(
            &reference,
            "reference",
            &["plugins", "info", "curupira-plugins"]
        )
        .1
    );
}
