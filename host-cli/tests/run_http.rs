//! `run --listen` (issue 30) against a running host on loopback, an ephemeral port:
//! every endpoint, each JSON answer checked against the schemas of the server's own
//! OpenAPI document, `/metrics` read by a Prometheus text parser, and the refusals (a
//! body over the bound, a foreign `Origin`, a wrong `Host`, a form's content type, a
//! non-loopback address without `--listen-remote`). Requests are written by hand on a
//! TCP socket, so each header is exactly what the test says.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod run_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command};
use std::time::Duration;

use curupira_test_support::process::wait_until;
use run_support::Project;
use serde_json::{Value, json};

/// One answer: status, headers (lowercase names), body.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{self:?}"
        );
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("{err}: {self:?}"))
    }
}

/// Sends `request` as it is (the request line and headers, then `body`) and reads the
/// whole answer (the server closes each connection).
fn send(port: u16, head: &str, body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut request = head.replace('\n', "\r\n").into_bytes();
    request.extend_from_slice(b"\r\n");
    request.extend_from_slice(body);
    stream.write_all(&request).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(": "))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

fn get(port: u16, path: &str) -> Answer {
    send(
        port,
        &format!("GET {path} HTTP/1.1\nHost: 127.0.0.1:{port}\nConnection: close\n"),
        b"",
    )
}

fn post(port: u16, path: &str, headers: &str, body: &str) -> Answer {
    send(
        port,
        &format!(
            "POST {path} HTTP/1.1\nHost: 127.0.0.1:{port}\nConnection: close\n\
             Content-Length: {}\n{headers}",
            body.len()
        ),
        body.as_bytes(),
    )
}

/// Checks `value` against the schema `name` of the OpenAPI document (or any schema
/// given as JSON, its `$ref`s into the document).
fn check(openapi: &Value, schema: Value, value: &Value) {
    let mut root = schema;
    root["components"] = openapi["components"].clone();
    root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    let validator = jsonschema::validator_for(&root).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{value:#}");
}

fn named(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn start(project: &Project, args: &[&str]) -> (Child, u16) {
    let mut all = vec!["run", "--format", "json"];
    if !args.contains(&"--once") {
        all.push("--watch");
    }
    all.extend_from_slice(args);
    let host = run_support::spawn(project, "run", &all);
    let mut port = 0;
    assert!(
        wait_until(Duration::from_secs(30), || {
            let err = project.read("run.err");
            if let Some(at) = err.find("http://127.0.0.1:") {
                let rest = &err[at + "http://127.0.0.1:".len()..];
                port = rest
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                true
            } else {
                false
            }
        }),
        "{}",
        project.read("run.err")
    );
    (host, port)
}

#[test]
fn every_endpoint_answers_as_its_openapi_document_says_and_mutations_are_guarded() {
    let project = run_support::three_tasks();
    let (host, port) = start(&project, &["--listen", "127.0.0.1:0"]);
    let openapi = get(port, "/api/v1/openapi.json").json();
    assert_eq!(openapi["openapi"], "3.1.0");
    // Each schema of the document compiles as JSON Schema 2020-12.
    for name in openapi["components"]["schemas"].as_object().unwrap().keys() {
        let mut root = named(name);
        root["components"] = openapi["components"].clone();
        jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("{name}: {e}"));
    }

    // `c` runs once `a` and `b` ended.
    let mut state = Value::Null;
    assert!(
        wait_until(Duration::from_secs(30), || {
            state = get(port, "/api/v1/state").json();
            state["running"].as_array().is_some_and(|r| r.len() == 1)
                && state["counts"]["last_hour"]["failed"] == 1
        }),
        "{state:#}"
    );
    check(&openapi, named("State"), &state);
    assert_eq!(state["host"]["state"], "running");
    assert_eq!(state["host"]["pid"], host.id());
    let running_id = state["running"][0]["task_id"].as_str().unwrap().to_owned();

    // The live state is the loop's; the task list is the ledger's, whose writer (a
    // thread at a lower priority) may commit `c`'s row a moment later on a busy machine.
    let mut tasks = Value::Null;
    wait_until(Duration::from_secs(10), || {
        tasks = get(port, "/api/v1/tasks").json();
        tasks.as_array().is_some_and(|t| t.len() == 3)
    });
    check(
        &openapi,
        json!({"type": "array", "items": named("Task")}),
        &tasks,
    );
    assert_eq!(tasks.as_array().unwrap().len(), 3, "{tasks:#}");
    let failed = get(port, "/api/v1/tasks?status=failed&automation=q&limit=5").json();
    assert_eq!(failed.as_array().unwrap().len(), 1, "{failed:#}");
    let failed_id = failed[0]["task_id"].as_str().unwrap().to_owned();
    assert_eq!(failed[0]["exit_code"], 4);
    let bad = get(port, "/api/v1/tasks?limit=0");
    assert_eq!(bad.status, 400);
    check(&openapi, named("Error"), &bad.json());

    let detail = get(port, &format!("/api/v1/tasks/{}", &failed_id[..10])).json();
    check(&openapi, named("TaskDetail"), &detail);
    assert_eq!(detail["task_id"], failed_id);
    assert_eq!(detail["history"][0]["exit_code"], 4);
    let missing = get(port, "/api/v1/tasks/ffffffffffff");
    assert_eq!(missing.status, 404);
    check(&openapi, named("Error"), &missing.json());

    let log = get(port, &format!("/api/v1/tasks/{failed_id}/log?attempt=1"));
    assert_eq!(log.status, 200, "{log:?}");
    assert_eq!(
        log.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert!(log.body.contains(" stdout working on Do b."), "{log:?}");
    assert_eq!(
        get(port, &format!("/api/v1/tasks/{failed_id}/log?attempt=9")).status,
        404
    );

    let hours = get(port, "/api/v1/outcomes?hours=3").json();
    check(
        &openapi,
        json!({"type": "array", "items": named("Hour")}),
        &hours,
    );
    let last = &hours[2];
    assert_eq!(
        (&last["succeeded"], &last["failed"]),
        (&json!(1), &json!(1))
    );

    // The metrics, through a Prometheus text parser.
    let metrics = get(port, "/metrics");
    assert!(
        metrics
            .header("content-type")
            .unwrap()
            .starts_with("application/openmetrics-text"),
        "{metrics:?}"
    );
    let lines = metrics
        .body
        .lines()
        .filter(|line| *line != "# EOF")
        .map(|line| Ok(line.to_owned()));
    let scrape = prometheus_parse::Scrape::parse(lines).unwrap();
    let value = |name: &str, label: Option<(&str, &str)>| -> f64 {
        let sample = scrape
            .samples
            .iter()
            .find(|s| s.metric == name && label.is_none_or(|(k, v)| s.labels.get(k) == Some(v)))
            .unwrap_or_else(|| panic!("{name} in {}", metrics.body));
        match sample.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            ref other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        value("curupira_tasks_finished_total", Some(("outcome", "failed"))),
        1.0
    );
    assert_eq!(
        value(
            "curupira_tasks_finished_total",
            Some(("outcome", "succeeded"))
        ),
        1.0
    );
    assert_eq!(value("curupira_tasks_running", None), 1.0);
    assert_eq!(value("curupira_tasks_waiting_retry", None), 0.0);
    assert!(
        scrape
            .samples
            .iter()
            .any(|s| s.metric == "curupira_attempt_duration_seconds"),
        "{}",
        metrics.body
    );

    // The page.
    let page = get(port, "/");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(page.body.contains("fetch("), "it reads the API");
    // Nothing from elsewhere: the one URL it names is SVG's namespace.
    assert_eq!(
        page.body.matches("http").count(),
        page.body.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(!page.body.contains("<script src"));
    // Its one `<link>`: an empty icon, so the browser asks for no `/favicon.ico`.
    assert_eq!(page.body.matches("<link").count(), 1);
    assert!(page.body.contains("<link rel=\"icon\" href=\"data:,\">"));

    // The one mutation, and its guards.
    let retry = |headers: &str, body: &str, id: &str| {
        post(port, &format!("/api/v1/tasks/{id}/retry"), headers, body)
    };
    let form = retry(
        "Content-Type: application/x-www-form-urlencoded\n",
        "a=1",
        &failed_id,
    );
    assert_eq!(form.status, 415, "{form:?}");
    check(&openapi, named("Error"), &form.json());
    let foreign = retry(
        "Content-Type: application/json\nOrigin: http://evil.example\n",
        "{}",
        &failed_id,
    );
    assert_eq!(foreign.status, 403, "{foreign:?}");
    assert_eq!(foreign.json()["error"]["code"], "cross-origin");
    let wrong_host = send(
        port,
        &format!(
            "POST /api/v1/tasks/{failed_id}/retry HTTP/1.1\nHost: evil.example:{port}\n\
             Content-Type: application/json\nContent-Length: 2\nConnection: close\n"
        ),
        b"{}",
    );
    assert_eq!(wrong_host.status, 403, "{wrong_host:?}");
    assert_eq!(wrong_host.json()["error"]["code"], "wrong-host");
    let rebound = send(
        port,
        "GET /api/v1/state HTTP/1.1\nHost: attacker.example\nConnection: close\n",
        b"",
    );
    assert_eq!(rebound.status, 403);
    let big = "x".repeat(64 * 1024);
    let too_large = retry("Content-Type: application/json\n", &big, &failed_id);
    assert_eq!(too_large.status, 413, "{too_large:?}");
    let running = retry("Content-Type: application/json\n", "{}", &running_id);
    assert_eq!(running.status, 409, "{running:?}");
    assert_eq!(
        get(port, &format!("/api/v1/tasks/{failed_id}/retry")).status,
        405
    );
    // Nothing of the refused requests changed the task.
    let unchanged = get(port, &format!("/api/v1/tasks/{failed_id}")).json();
    assert_eq!(unchanged["retry_requested"], false);
    let accepted = retry(
        &format!(
            "Content-Type: application/json; charset=utf-8\nOrigin: http://127.0.0.1:{port}\n"
        ),
        "{}",
        &failed_id,
    );
    assert_eq!(accepted.status, 200, "{accepted:?}");
    check(&openapi, named("Retried"), &accepted.json());
    let asked = get(port, &format!("/api/v1/tasks/{failed_id}")).json();
    assert_eq!(asked["retry_requested"], true);

    // A client that connects and sends nothing holds no one up, and is let go once
    // its headers' time (5 s) is over.
    let mut stalled = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stalled
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let since = std::time::Instant::now();
    assert_eq!(get(port, "/api/v1/state").status, 200, "answered beside it");
    project.write("release", "");
    assert!(
        wait_until(Duration::from_secs(20), || get(port, "/api/v1/state")
            .json()["running"]
            .as_array()
            .is_some_and(Vec::is_empty)),
        "the run went on while a client stalled"
    );
    let mut byte = [0u8; 1];
    let read = stalled.read(&mut byte);
    let waited = since.elapsed();
    assert!(
        matches!(read, Ok(0)) || read.is_err(),
        "the stalled connection was closed: {read:?}"
    );
    assert!(
        (Duration::from_secs(4)..Duration::from_secs(15)).contains(&waited),
        "closed after {waited:?}"
    );
    Command::new("kill")
        .args(["-INT", &host.id().to_string()])
        .status()
        .unwrap();
    let code = curupira_test_support::process::finish(host, Duration::from_secs(30));
    // Stopped by SIGINT: 130 (b's failure is in its events and the API above).
    assert_eq!(code, Some(130), "{}", project.read("run.err"));
}

#[test]
fn a_non_loopback_address_is_refused_without_listen_remote() {
    let project = run_support::three_tasks();
    let ran = project.curupira(&["run", "--once", "--listen", "0.0.0.0:0"]);
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(
        ran.stderr
            .contains("error: refusing to listen on 0.0.0.0:0: it is not a loopback address"),
        "{}",
        ran.stderr
    );
    assert!(!project.exists("done.jsonl"), "nothing ran");
}

/// The pinned validator of OpenAPI documents (PyPI), installed at test time into
/// `target/openapi-validator`.
const VALIDATOR: &str = "openapi-spec-validator==0.9.0";

/// The OpenAPI document is valid OpenAPI 3.1, as `openapi-spec-validator` reads it.
/// Where it cannot be installed (no network) the test says it skipped, and fails
/// under CI.
#[test]
fn the_openapi_document_is_valid_openapi_3_1() {
    let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    let venv = target.join("openapi-validator");
    let python = venv.join("bin/python");
    let ready = venv.join("installed");
    if std::fs::read_to_string(&ready).ok().as_deref() != Some(VALIDATOR) {
        let _ = std::fs::remove_dir_all(&venv);
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(venv.join("bin/pip"))
                .args(["install", "-q", "--disable-pip-version-check", VALIDATOR])
                .status()
                .is_ok_and(|s| s.success());
        if !made {
            assert!(
                std::env::var_os("CI").is_none(),
                "cannot install {VALIDATOR}, and CI (`CI` is set) must not skip this test"
            );
            eprintln!("skipped: cannot install {VALIDATOR} (no network?)");
            return;
        }
        std::fs::write(&ready, VALIDATOR).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openapi.json");
    std::fs::write(&file, curupira_http::openapi::document().to_string()).unwrap();
    let checked = Command::new(&python)
        .args(["-m", "openapi_spec_validator", "--schema", "3.1.0"])
        .arg(&file)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&checked.stdout).into_owned()
        + &String::from_utf8_lossy(&checked.stderr);
    assert!(checked.status.success(), "{said}");
    assert!(said.contains("OK"), "{said}");
}
