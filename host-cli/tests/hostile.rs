//! The hostile-extension suite: `curupira run --once` against fake extensions that each
//! misbehave in exactly one way (`tests/fakes/fake_ext.py --mode NAME`).
//!
//! Every case writes a config with two automations into a fresh temporary folder:
//! `fake-watch` on the hostile extension and `queue-work` on the healthy built-in
//! `local-queue`. It then checks that the run
//! - ends within the timeouts the misbehaviour may legitimately cost plus 2 s,
//! - reports `automation.failed` for `fake-watch` (or, when the work was done and only
//!   `shutdown` went wrong, `extension.failed` for `hostile`) with the code of SPEC
//!   section 1's table and one clear sentence naming the extension and the method (no
//!   `Debug` dump),
//! - still dispatches the healthy automation's task,
//! - exits 1 (0 for the cases that are not failures), and
//! - leaves no process behind: every fake the host started is gone and reaped.
//!
//! The fakes are a Python 3 script (standard library only); without `python3` on PATH
//! the suite says that it skipped and passes.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use curupira_test_support::fakes;
use serde_json::{Value, json};

/// `[settings.timeouts]` of every generated config, in seconds.
const INITIALIZE_TIMEOUT: u64 = 2;
const REQUEST_TIMEOUT: u64 = 2;
const SHUTDOWN_TIMEOUT: u64 = 1;
/// What ending the extension may cost after a failure: the wait for the `shutdown`
/// reply, then the grace period between closing stdin and killing.
const ENDING: u64 = 2 * SHUTDOWN_TIMEOUT;
/// The margin the issue allows on top of a case's timeouts.
const SLACK: Duration = Duration::from_secs(2);
/// A run still going after this is killed and the case fails.
const WATCHDOG: Duration = Duration::from_secs(40);

const TRANSPORT_FAILURE: i64 = -32000;
const PROTOCOL_FAILURE: i64 = -32001;
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INTERNAL_ERROR: i64 = -32603;
const TIMEOUT: i64 = -32004;

const HOSTILE_EXTENSION: &str = "hostile";
const HOSTILE_AUTOMATION: &str = "fake-watch";
const HEALTHY_AUTOMATION: &str = "queue-work";

/// What one mode must end in.
enum Outcome {
    /// `fake-watch` fails with `code`; the message names the extension, `method` and
    /// every string of `mentions`.
    Fails {
        code: i64,
        method: Method,
        mentions: &'static [&'static str],
    },
    /// `fake-watch` dispatches its item; then the extension itself fails with `code`
    /// on `method` (it misbehaves only once the work is done), which the host reports
    /// as `extension.failed` for `hostile`: no automation failed.
    ExtensionFailsAfterWork { code: i64, method: &'static str },
    /// Not a failure at all: both automations dispatch and the run exits 0.
    Succeeds,
}

/// The method a failure message must name.
enum Method {
    Named(&'static str),
    /// The last method the fake logged receiving (a crash on "the next request").
    LastReceived,
}

struct Case {
    mode: &'static str,
    outcome: Outcome,
    /// The timeouts this misbehaviour may legitimately cost, in seconds; the run must
    /// end within them plus [`SLACK`].
    allowed_secs: u64,
}

/// A failure whose message needs to name nothing beyond the extension and the method.
fn fails(code: i64, method: &'static str) -> Outcome {
    Outcome::Fails {
        code,
        method: Method::Named(method),
        mentions: &[],
    }
}

// ---------------------------------------------------------------------------
// Transport failures (-32000): the byte stream broke or the process died.

#[test]
fn garbage_on_stdout() {
    check(Case {
        mode: "garbage-stdout",
        outcome: fails(TRANSPORT_FAILURE, "initialize"),
        allowed_secs: ENDING,
    });
}

#[test]
fn bad_hex_header() {
    check(Case {
        mode: "bad-hex-header",
        outcome: fails(TRANSPORT_FAILURE, "describe"),
        allowed_secs: ENDING,
    });
}

#[test]
fn plus_in_header() {
    check(Case {
        mode: "plus-header",
        outcome: Outcome::Fails {
            code: TRANSPORT_FAILURE,
            method: Method::Named("trigger/schema"),
            mentions: &["+"],
        },
        allowed_secs: ENDING,
    });
}

#[test]
fn announced_4_gib_frame() {
    check(Case {
        mode: "huge-frame",
        outcome: Outcome::Fails {
            code: TRANSPORT_FAILURE,
            method: Method::Named("trigger/validate"),
            mentions: &["4294967295"],
        },
        allowed_secs: ENDING,
    });
}

#[test]
fn truncated_frame_then_exit() {
    check(Case {
        mode: "truncated",
        outcome: fails(TRANSPORT_FAILURE, "trigger/poll"),
        allowed_secs: ENDING,
    });
}

#[test]
fn crash_mid_round() {
    check(Case {
        mode: "crash-mid-round",
        outcome: Outcome::Fails {
            code: TRANSPORT_FAILURE,
            method: Method::LastReceived,
            mentions: &[],
        },
        allowed_secs: ENDING,
    });
}

// ---------------------------------------------------------------------------
// Well-framed messages that break JSON-RPC's rules (-32700, -32600) or this
// protocol's own (-32001).

/// SPEC's table gives a body that is "not valid JSON (or not UTF-8)" its own code,
/// -32700, whichever side receives it.
#[test]
fn invalid_utf8_body() {
    check(Case {
        mode: "invalid-utf8",
        outcome: fails(PARSE_ERROR, "trigger/poll"),
        allowed_secs: ENDING,
    });
}

/// "Valid JSON, not a valid JSON-RPC message" is -32600 in SPEC's table: the JSON-RPC
/// layer's rules get JSON-RPC's codes, -32001 is for this protocol's own rules (ids
/// that do not match, versions, poll results).
#[test]
fn jsonrpc_1_0() {
    check(Case {
        mode: "jsonrpc-1.0",
        outcome: Outcome::Fails {
            code: INVALID_REQUEST,
            method: Method::Named("initialize"),
            mentions: &["jsonrpc"],
        },
        allowed_secs: ENDING,
    });
}

#[test]
fn response_with_wrong_id() {
    check(Case {
        mode: "wrong-id",
        outcome: Outcome::Fails {
            code: PROTOCOL_FAILURE,
            method: Method::Named("trigger/poll"),
            mentions: &["id"],
        },
        allowed_secs: ENDING,
    });
}

/// An error reply is passed on with the extension's own code and message, as a
/// `trigger/validate` rejection keeps its -32003.
#[test]
fn error_reply_to_initialize() {
    check(Case {
        mode: "initialize-error",
        outcome: Outcome::Fails {
            code: INTERNAL_ERROR,
            method: Method::Named("initialize"),
            mentions: &["refuses to start"],
        },
        allowed_secs: ENDING,
    });
}

#[test]
fn protocol_version_3() {
    check(Case {
        mode: "version-3",
        outcome: Outcome::Fails {
            code: PROTOCOL_FAILURE,
            method: Method::Named("initialize"),
            mentions: &["3"],
        },
        allowed_secs: ENDING,
    });
}

#[test]
fn values_missing() {
    check(Case {
        mode: "values-missing",
        outcome: Outcome::Fails {
            code: PROTOCOL_FAILURE,
            method: Method::Named("trigger/poll"),
            mentions: &["values"],
        },
        allowed_secs: ENDING,
    });
}

#[test]
fn number_value() {
    check(Case {
        mode: "number-value",
        outcome: Outcome::Fails {
            code: PROTOCOL_FAILURE,
            method: Method::Named("trigger/poll"),
            mentions: &["`/values/0/value` must be a string, found 42"],
        },
        allowed_secs: ENDING,
    });
}

#[test]
fn repository_key() {
    check(Case {
        mode: "repository-key",
        outcome: Outcome::Fails {
            code: PROTOCOL_FAILURE,
            method: Method::Named("trigger/poll"),
            mentions: &["repository"],
        },
        allowed_secs: ENDING,
    });
}

#[test]
fn duplicate_key_in_one_item() {
    check(Case {
        mode: "duplicate-key",
        outcome: Outcome::Fails {
            code: PROTOCOL_FAILURE,
            method: Method::Named("trigger/poll"),
            mentions: &["title"],
        },
        allowed_secs: ENDING,
    });
}

// ---------------------------------------------------------------------------
// Timeouts (-32004) and the ones that are no failure at all.

#[test]
fn hang_on_poll() {
    check(Case {
        mode: "hang-poll",
        outcome: fails(TIMEOUT, "trigger/poll"),
        allowed_secs: REQUEST_TIMEOUT + ENDING,
    });
}

/// One byte per millisecond keeps the pipe busy; the request timeout is for the whole
/// reply, not for each read.
#[test]
fn slow_drip_reply() {
    check(Case {
        mode: "slow-drip",
        outcome: fails(TIMEOUT, "trigger/poll"),
        allowed_secs: REQUEST_TIMEOUT + ENDING,
    });
}

/// The work is done; the extension then never answers `shutdown`, never exits on end
/// of stdin and ignores SIGTERM. The host reports the timeout and kills it.
#[test]
fn ignores_shutdown() {
    check(Case {
        mode: "ignore-shutdown",
        outcome: Outcome::ExtensionFailsAfterWork {
            code: TIMEOUT,
            method: "shutdown",
        },
        allowed_secs: ENDING,
    });
}

/// 4 MiB (64 pipe buffers) on stderr before the first reply is no failure for a host
/// that drains stderr continuously; one that does not deadlocks on `initialize`. (It
/// was 20 MB: logging that much took about 2 s on a loaded 2-core machine, as long as
/// the test's `initialize` timeout, so the test failed for the wrong reason.)
#[test]
fn stderr_flood_before_first_reply() {
    check(Case {
        mode: "stderr-flood",
        outcome: Outcome::Succeeds,
        allowed_secs: 0,
    });
}

/// The control: the fake without a misbehaviour is a working extension.
#[test]
fn healthy_fake_dispatches() {
    check(Case {
        mode: "healthy",
        outcome: Outcome::Succeeds,
        allowed_secs: 0,
    });
}

// ---------------------------------------------------------------------------
// The harness.

fn fake_script() -> PathBuf {
    fakes::hostile_script()
}

/// A TOML basic string: JSON's string escapes are valid TOML ones.
fn toml_str(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

fn toml_path(path: &Path) -> String {
    toml_str(path.to_str().expect("temporary paths are UTF-8"))
}

/// Files of one case, all inside one temporary folder (the config's folder).
struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new(mode: &str) -> Scene {
        let dir = tempfile::Builder::new()
            .prefix(&format!("curupira-hostile-{mode}-"))
            .tempdir()
            .unwrap();
        let root = dir.path();
        let ext = root.join("hostile");
        fs::create_dir(&ext).unwrap();
        let manifest = ext.join("curupira-extension.toml");
        let args = [
            toml_path(&fake_script()),
            toml_str("--mode"),
            toml_str(mode),
            toml_str("--pid-file"),
            toml_path(&root.join("fake.pid")),
            toml_str("--log"),
            toml_path(&root.join("methods.log")),
            toml_str("--manifest"),
            toml_path(&manifest),
        ]
        .join(", ");
        fs::write(
            &manifest,
            format!(
                r#"manifest_version = 1
name = "{HOSTILE_EXTENSION}"
version = "0.1.0"
protocol_version = 2
runtime = "python"
kind = "trigger"
trigger_types = ["fake"]

[launch]
type = "executable"
program = "python3"
args = [{args}]
"#
            ),
        )
        .unwrap();
        fs::write(root.join("tasks.jsonl"), "{\"title\": \"healthy task\"}\n").unwrap();
        fs::write(
            root.join("curupira.toml"),
            format!(
                r#"[settings.agent]
command = ["sh", "-c", "cat >/dev/null"]

[settings.timeouts]
initialize = {INITIALIZE_TIMEOUT}
request = {REQUEST_TIMEOUT}
shutdown = {SHUTDOWN_TIMEOUT}

[extensions.{HOSTILE_EXTENSION}]
path = "hostile"

[extensions.local]
builtin = "local-queue"

[automations.{HOSTILE_AUTOMATION}]
trigger = "fake"
prompt = "Look at fake item ${{n}}."

[automations.{HEALTHY_AUTOMATION}]
trigger = "jsonl"
prompt = "Do ${{title}}."
arguments = {{ path = "tasks.jsonl", done_path = "done.jsonl" }}
"#
            ),
        )
        .unwrap();
        Scene { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Every pid a fake of this case wrote at start.
    fn fake_pids(&self) -> Vec<u32> {
        fs::read_to_string(self.root().join("fake.pid"))
            .unwrap_or_default()
            .lines()
            .map(|line| line.trim().parse().unwrap())
            .collect()
    }

    /// The methods the fakes received, in order.
    fn methods_received(&self) -> Vec<String> {
        fs::read_to_string(self.root().join("methods.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

struct Run {
    status: ExitStatus,
    elapsed: Duration,
    stdout: String,
    stderr: String,
    events: Vec<Value>,
}

impl Run {
    fn context(&self) -> String {
        let mut start = self.stderr.len().saturating_sub(3000);
        while !self.stderr.is_char_boundary(start) {
            start += 1;
        }
        let stderr_tail = &self.stderr[start..];
        format!(
            "exit status: {}\nelapsed: {:?}\nstdout:\n{}\nstderr (last 3000 chars):\n{}",
            self.status, self.elapsed, self.stdout, stderr_tail
        )
    }

    fn events_of(&self, automation: &str, event: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["event"] == event && e["automation"] == automation)
            .collect()
    }
}

fn spawn_reader(mut source: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buffer = Vec::new();
        let _ = source.read_to_end(&mut buffer);
        buffer
    })
}

/// `curupira run --once --format json` on the scene's config, under a watchdog.
fn run_host(scene: &Scene) -> Run {
    let config = scene.root().join("curupira.toml");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_curupira"))
        .args(["run", "--once", "--format", "json", "--config"])
        .arg(&config)
        .current_dir(scene.root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = spawn_reader(child.stdout.take().unwrap());
    let stderr = spawn_reader(child.stderr.take().unwrap());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > WATCHDOG {
            let _ = child.kill();
            let status = child.wait().unwrap();
            let stdout = String::from_utf8_lossy(&stdout.join().unwrap()).into_owned();
            panic!(
                "`curupira run` was still running after {WATCHDOG:?} and was killed \
                 ({status}); stdout so far:\n{stdout}"
            );
        }
        thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let stdout = String::from_utf8(stdout.join().unwrap()).expect("stdout is UTF-8");
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
    let events = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("stdout line is not JSON ({err}): {line}"))
        })
        .collect();
    Run {
        status,
        elapsed,
        stdout,
        stderr,
        events,
    }
}

fn check(case: Case) {
    if !fakes::python_or_skip(&format!("the hostile-extension case `{}`", case.mode)) {
        return;
    }
    let scene = Scene::new(case.mode);
    let run = run_host(&scene);
    let context = run.context();
    eprintln!("mode {}: the run ended in {:?}", case.mode, run.elapsed);

    let budget = Duration::from_secs(case.allowed_secs) + SLACK;
    assert!(
        run.elapsed <= budget,
        "mode {}: the run took {:?}, more than the {budget:?} allowed\n{context}",
        case.mode,
        run.elapsed
    );
    assert!(
        !run.stderr.contains("panicked at") && !run.stderr.contains("RUST_BACKTRACE"),
        "mode {}: the host panicked\n{context}",
        case.mode
    );

    // The healthy automation dispatched its task whatever the other one did.
    let healthy = run.events_of(HEALTHY_AUTOMATION, "task.finished");
    assert_eq!(
        healthy.len(),
        1,
        "mode {}: expected one task.finished for `{HEALTHY_AUTOMATION}`\n{context}",
        case.mode
    );
    assert_eq!(
        healthy[0]["values"],
        json!([{"key": "title", "value": "healthy task"}]),
        "{context}"
    );
    assert_eq!(healthy[0]["exit_code"], 0, "{context}");
    assert!(
        run.events_of(HEALTHY_AUTOMATION, "automation.failed")
            .is_empty(),
        "mode {}: the healthy automation failed\n{context}",
        case.mode
    );

    let failures = run.events_of(HOSTILE_AUTOMATION, "automation.failed");
    let hostile_tasks = run.events_of(HOSTILE_AUTOMATION, "task.finished");
    let fake_item = json!([{"key": "n", "value": "1"}]);
    match &case.outcome {
        Outcome::Succeeds => {
            assert!(
                failures.is_empty(),
                "mode {}: expected no automation.failed\n{context}",
                case.mode
            );
            assert_eq!(hostile_tasks.len(), 1, "mode {}\n{context}", case.mode);
            assert_eq!(hostile_tasks[0]["values"], fake_item, "{context}");
            assert_eq!(run.status.code(), Some(0), "mode {}\n{context}", case.mode);
        }
        Outcome::Fails {
            code,
            method,
            mentions,
        } => {
            let method = match method {
                Method::Named(name) => (*name).to_owned(),
                Method::LastReceived => scene
                    .methods_received()
                    .last()
                    .cloned()
                    .expect("the fake logged the request it crashed on"),
            };
            check_failure(&case, &failures, *code, &method, mentions, &context);
            assert_eq!(run.status.code(), Some(1), "mode {}\n{context}", case.mode);
        }
        Outcome::ExtensionFailsAfterWork { code, method } => {
            assert!(
                failures.is_empty(),
                "mode {}: no automation failed, its work was done\n{context}",
                case.mode
            );
            assert_eq!(hostile_tasks.len(), 1, "mode {}\n{context}", case.mode);
            assert_eq!(hostile_tasks[0]["values"], fake_item, "{context}");
            let failures: Vec<&Value> = run
                .events
                .iter()
                .filter(|e| e["event"] == "extension.failed" && e["extension"] == HOSTILE_EXTENSION)
                .collect();
            check_failure(&case, &failures, *code, method, &[], &context);
            assert_eq!(run.status.code(), Some(1), "mode {}\n{context}", case.mode);
        }
    }

    assert_nothing_left_behind(&scene, &context);
}

fn check_failure(
    case: &Case,
    failures: &[&Value],
    code: i64,
    method: &str,
    mentions: &[&str],
    context: &str,
) {
    let mode = case.mode;
    let first = failures
        .first()
        .unwrap_or_else(|| panic!("mode {mode}: no failure event for the fake\n{context}"));
    eprintln!("mode {mode}: {first}");
    // The event's own `extension` / `method` members, when the host gives them.
    for (member, expected) in [("extension", HOSTILE_EXTENSION), ("method", method)] {
        if let Some(given) = first.get(member) {
            assert_eq!(given, expected, "mode {mode}: wrong `{member}`\n{context}");
        }
    }
    assert_eq!(
        first["code"].as_i64(),
        Some(code),
        "mode {mode}: wrong code in {first}\n{context}"
    );
    for failure in failures {
        let message = failure["message"]
            .as_str()
            .unwrap_or_else(|| panic!("mode {mode}: `message` is not a string in {failure}"));
        assert_clear(message, mode);
    }
    let message = first["message"].as_str().unwrap_or_default();
    for needle in [HOSTILE_EXTENSION, method].iter().chain(mentions) {
        assert!(
            message.contains(needle),
            "mode {mode}: the message does not mention `{needle}`: {message}"
        );
    }
}

/// One sentence for a person: no line breaks, no `Debug` rendering of a Rust value.
fn assert_clear(message: &str, mode: &str) {
    assert!(!message.trim().is_empty(), "mode {mode}: empty message");
    assert!(
        !message.contains('\n'),
        "mode {mode}: the message spans lines: {message:?}"
    );
    assert!(
        !looks_like_debug(message),
        "mode {mode}: the message looks like a Debug dump: {message}"
    );
}

/// `Os { code: 32, kind: BrokenPipe, … }`, `Custom { kind: … }`, `Some("x")`, `Ok(())`:
/// a capitalised name followed by ` { field:` or an enum constructor in parentheses.
fn looks_like_debug(message: &str) -> bool {
    let bytes = message.as_bytes();
    for (index, window) in bytes.windows(3).enumerate() {
        if window != b" { " {
            continue;
        }
        let before = &message[..index];
        let first_of_word = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .last();
        let field = message[index + 3..]
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap_or_default();
        let field_then_colon = message[index + 3 + field.len()..].starts_with(':');
        if first_of_word.is_some_and(|c| c.is_ascii_uppercase())
            && !field.is_empty()
            && field_then_colon
        {
            return true;
        }
    }
    ["Some(", "Ok(", "Err(", "None)", "kind: "]
        .iter()
        .any(|needle| message.contains(needle))
}

/// Every fake is gone (not running, not a zombie), and no process at all still has
/// the case's folder as its working directory.
fn assert_nothing_left_behind(scene: &Scene, context: &str) {
    if !Path::new("/proc/self").exists() {
        eprintln!("note: no /proc here, so leftover processes were not checked");
        return;
    }
    let pids = scene.fake_pids();
    assert!(
        !pids.is_empty(),
        "the fake never started (no pid file)\n{context}"
    );
    for pid in pids {
        let proc_dir = PathBuf::from(format!("/proc/{pid}"));
        let Ok(stat) = fs::read_to_string(proc_dir.join("stat")) else {
            continue; // gone and reaped
        };
        // The state is the first field after the parenthesised command name.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap_or("?");
        let cmdline = fs::read(proc_dir.join("cmdline")).unwrap_or_default();
        let is_fake = String::from_utf8_lossy(&cmdline).contains("fake_ext.py");
        assert!(
            state != "Z",
            "the fake (pid {pid}) was left as a zombie\n{context}"
        );
        assert!(
            !is_fake,
            "the fake (pid {pid}, state {state}) is still running\n{context}"
        );
    }
    let root = fs::canonicalize(scene.root()).unwrap();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cwd) = fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if cwd.starts_with(&root) {
            let cmdline = fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            panic!(
                "process {} (`{}`) still runs in the case's folder\n{context}",
                entry.file_name().to_string_lossy(),
                cmdline.trim()
            );
        }
    }
}
