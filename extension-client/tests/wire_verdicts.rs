//! The published ecosystem's replies, read by our client as the reference host reads
//! them: every reply of the official SDK (`sdk-replies.json`) and every reply shape
//! the reference host `curupira` 0.4.0 was given (`host-verdicts.json`), both in
//! `../shared/conformance/curupira-wire/` (see its README).
//!
//! Each reply is fed to a [`Client`] by a scripted fake extension over the in-memory
//! duplex, in answer to the request a host would send; the test asserts our verdict:
//! read where the reference host read it (the typed result written back as the very
//! JSON), refused where it refused, with our error's code and a message that names the
//! offending member, for the reason the reference host gave. Cases whose reply is a
//! sentence in the vectors (`baseline`, `validate-ok-with-configuration`) are
//! conversations written out here. A case the vectors gain is a failing test until it
//! is given a verdict below.
//!
//! A clone without the vectors skips these tests, and the skip shows in the output and
//! the summary (`ignored`, with the missing folder named): a plain `#[test]` cannot
//! decide at run time that it was skipped, so this file has its own harness,
//! `libtest-mimic`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use curupira_client::{CallError, Client, Ending, Options, Timeouts, memory};
use curupira_framing::{FrameReader, FrameWriter};
use curupira_jsonrpc::ErrorCode;
use curupira_protocol::method::{
    Describe, Initialize, Method, OnFinished, OnStarted, Poll, Schema, Shutdown, Validate,
};
use curupira_protocol::{
    Configuration, HostCapabilities, InitializeParams, NoParams, PeerInfo, PollParams,
    ProtocolVersion, SchemaParams, TaskParams, ValidateParams, Wire, to_json,
};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use serde_json::{Value, json};

fn folder() -> PathBuf {
    curupira_test_support::conformance::folder("curupira-wire")
}

fn main() {
    let args = Arguments::from_args();
    let dir = folder();
    let trials = if dir.is_dir() {
        trials(&dir)
    } else {
        vec![Trial::ignorable_test("curupira_wire_vectors", move || {
            Ok(Completion::ignored_with(format!(
                "skipped: {} is missing, so the ecosystem's replies were not checked",
                dir.display()
            )))
        })]
    };
    libtest_mimic::run(&args, trials).exit();
}

fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// One trial per case of each file, and one that the host verdicts and the table of
/// our verdicts list the same cases.
fn trials(dir: &Path) -> Vec<Trial> {
    let sdk = read_json(&dir.join("sdk-replies.json"));
    let host = Arc::new(read_json(&dir.join("host-verdicts.json")));
    let mut trials = Vec::new();
    for case in sdk["cases"].as_array().expect("sdk-replies.json has cases") {
        let name = format!(
            "sdk_replies::{}::{}",
            case["process"].as_str().unwrap(),
            case["case"].as_str().unwrap()
        );
        let case = case.clone();
        trials.push(Trial::test(name, move || {
            sdk_case(&case);
            Ok(())
        }));
    }
    let cases = host["cases"]
        .as_array()
        .expect("host-verdicts.json has cases");
    for index in 0..cases.len() {
        let name = format!("host_verdicts::{}", cases[index]["case"].as_str().unwrap());
        let host = Arc::clone(&host);
        trials.push(Trial::test(name, move || {
            host_case(&host, &host["cases"][index])
        }));
    }
    let host = Arc::clone(&host);
    trials.push(Trial::test(
        "host_verdicts::every_case_has_a_verdict_of_ours",
        move || {
            let mut in_file: Vec<&str> = host["cases"]
                .as_array()
                .unwrap()
                .iter()
                .map(|case| case["case"].as_str().unwrap())
                .collect();
            let mut ours: Vec<&str> = verdicts().iter().map(|(name, _)| *name).collect();
            in_file.sort_unstable();
            ours.sort_unstable();
            assert_eq!(in_file, ours);
            assert_eq!(in_file.len(), 28, "the README's 28 reply shapes");
            Ok(())
        },
    ));
    trials
}

// ---------------------------------------------------------------------------------
// The fake extension and the calls a host makes

/// What the fake extension answers to one request.
enum Reply {
    /// `{"result": …}` or `{"error": …}`, sent with the request's id.
    Answer(Value),
    /// A whole message, sent as it is (its own id included).
    Verbatim(Value),
}

impl Reply {
    /// A reply of `host-verdicts.json`: an error where the object is `{"error": {…}}`,
    /// else a result (`{"ok": false, "error": "…"}` is a result).
    fn shape(reply: &Value) -> Reply {
        match reply {
            Value::Object(map)
                if map.len() == 1 && map.get("error").is_some_and(Value::is_object) =>
            {
                Reply::Answer(reply.clone())
            }
            result => Reply::Answer(json!({ "result": result })),
        }
    }

    fn result(result: Value) -> Reply {
        Reply::Answer(json!({ "result": result }))
    }
}

/// A client and the fake extension it talks to: the extension answers each request
/// with the next of `replies`, hands every request it read to the receiver, and
/// closes its end (exits) after the last one.
fn fake(name: &str, replies: Vec<Reply>) -> (Client, Receiver<Value>) {
    let options = Options {
        timeouts: Timeouts::uniform(Duration::from_secs(10)),
        ..Options::default()
    };
    let (client, end) = memory::duplex(name, options);
    let (sent, requests) = mpsc::channel();
    thread::spawn(move || {
        let (reader, writer) = end.split();
        let mut input = FrameReader::new(reader);
        let mut output = FrameWriter::new(writer);
        for reply in replies {
            let Ok(Some(body)) = input.read_frame() else {
                return;
            };
            let request: Value = serde_json::from_slice(&body).unwrap();
            let message = match reply {
                Reply::Answer(mut answer) => {
                    answer["jsonrpc"] = json!("2.0");
                    answer["id"] = request["id"].clone();
                    answer
                }
                Reply::Verbatim(message) => message,
            };
            let _ = sent.send(request);
            if output.write_frame(message.to_string().as_bytes()).is_err()
                || output.flush().is_err()
            {
                return;
            }
        }
    });
    (client, requests)
}

/// The next request the fake extension read.
fn next_request(requests: &Receiver<Value>) -> Value {
    requests
        .recv_timeout(Duration::from_secs(10))
        .expect("the client sent a request")
}

/// A call a host makes, its params as our own readers read a recorded request's.
#[derive(Debug)]
enum Call {
    Initialize(InitializeParams),
    Describe,
    Schema(SchemaParams),
    Validate(ValidateParams),
    Poll(PollParams),
    OnStarted(TaskParams),
    OnFinished(TaskParams),
    Shutdown,
    /// A method the protocol does not have, sent with [`Client::call`].
    Other(String, Option<Value>),
}

fn params<M: Method>(params: Option<&Value>) -> M::Params
where
    M::Params: std::fmt::Debug,
{
    M::Params::read(params).unwrap_or_else(|err| panic!("{}: {err}", M::NAME))
}

impl Call {
    fn of(request: &Value) -> Call {
        let method = request["method"].as_str().unwrap();
        let given = request.get("params");
        match method {
            Initialize::NAME => Call::Initialize(params::<Initialize>(given)),
            Describe::NAME => {
                let NoParams = params::<Describe>(given);
                Call::Describe
            }
            Schema::NAME => Call::Schema(params::<Schema>(given)),
            Validate::NAME => Call::Validate(params::<Validate>(given)),
            Poll::NAME => Call::Poll(params::<Poll>(given)),
            OnStarted::NAME => Call::OnStarted(params::<OnStarted>(given)),
            OnFinished::NAME => Call::OnFinished(params::<OnFinished>(given)),
            Shutdown::NAME => {
                let NoParams = params::<Shutdown>(given);
                Call::Shutdown
            }
            other => Call::Other(other.to_owned(), given.cloned()),
        }
    }

    fn method(&self) -> &str {
        match self {
            Call::Initialize(_) => Initialize::NAME,
            Call::Describe => Describe::NAME,
            Call::Schema(_) => Schema::NAME,
            Call::Validate(_) => Validate::NAME,
            Call::Poll(_) => Poll::NAME,
            Call::OnStarted(_) => OnStarted::NAME,
            Call::OnFinished(_) => OnFinished::NAME,
            Call::Shutdown => Shutdown::NAME,
            Call::Other(method, _) => method,
        }
    }
}

/// What a call gave back.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// The typed result, written back as JSON.
    Read(Value),
    /// A hook's result, which nothing reads.
    Acknowledged,
    /// How the extension ended after `shutdown`.
    Ended(Ending),
}

/// Makes `call` with the client's typed calls; the client, unless `shutdown` used it
/// up.
fn make(mut client: Client, call: &Call) -> (Option<Client>, Result<Outcome, CallError>) {
    let read = |value: Result<Value, serde_json::Error>| Outcome::Read(value.unwrap());
    let outcome = match call {
        // `initialize` sends protocol 2 and a `client_info`; a recorded request that
        // does not (another version, this project's `host`) is sent as recorded.
        Call::Initialize(InitializeParams {
            protocol_version: ProtocolVersion::CURRENT,
            client_info: Some(info),
            ..
        }) => client.initialize(info.clone()).map(|r| read(to_json(&r))),
        Call::Initialize(params) => client
            .request::<Initialize>(params)
            .map(|r| read(to_json(&r))),
        Call::Describe => client.describe().map(|r| read(to_json(&r))),
        Call::Schema(params) => client
            .schema(&params.trigger_type)
            .map(|r| read(to_json(&r))),
        Call::Validate(params) => client
            .validate(&params.trigger_type, &params.configuration)
            .map(|r| read(to_json(&r))),
        Call::Poll(params) => client
            .poll(params)
            .map(|values| Outcome::Read(json!({ "values": values }))),
        Call::OnStarted(task) => client
            .on_started(&task.trigger_type, &task.values)
            .map(|()| Outcome::Acknowledged),
        Call::OnFinished(task) => client
            .on_finished(&task.trigger_type, &task.values)
            .map(|()| Outcome::Acknowledged),
        Call::Shutdown => return (None, client.shutdown().map(Outcome::Ended)),
        Call::Other(method, params) => client.call(method, params.clone()).map(Outcome::Read),
    };
    (Some(client), outcome)
}

// ---------------------------------------------------------------------------------
// sdk-replies.json

/// An official SDK's reply, read: a result is read and written back as the very JSON
/// (a hook's is acknowledged), an error reply is an error with its code, message and
/// `data`, and the client stays usable.
fn sdk_case(case: &Value) {
    let name = case["case"].as_str().unwrap();
    match name {
        // The SDK exits 0 after its `shutdown` reply: the client sees its end close.
        "exit-after-shutdown" => {
            assert_eq!(case["exit_code"], 0);
            assert_eq!(case["request"], Value::Null);
            let (client, _) = fake(name, vec![Reply::result(json!({}))]);
            assert_eq!(
                client.shutdown(),
                Ok(Ending::Exited("closed its end".to_owned()))
            );
            return;
        }
        // The SDK answers a notification, with id null. A host sends none; as the
        // answer to a request, a response with another id is a broken conversation.
        "notification" => {
            assert_eq!(case["request"].get("id"), None);
            assert_eq!(case["reply"]["id"], Value::Null);
            let (client, _) = fake(name, vec![Reply::Verbatim(case["reply"].clone())]);
            let (client, outcome) = make(client, &Call::Describe);
            let err = outcome.unwrap_err();
            assert_eq!(err.code, ErrorCode::PROTOCOL_FAILURE);
            assert_eq!(
                err.message,
                "it answered request id 1 with a response for id null"
            );
            assert!(client.unwrap().is_dead());
            return;
        }
        _ => {}
    }
    let request = &case["request"];
    let reply = &case["reply"];
    let call = Call::of(request);
    let answer = match (reply.get("result"), reply.get("error")) {
        (Some(result), None) => json!({ "result": result }),
        (None, Some(error)) => json!({ "error": error }),
        _ => panic!("{name}: a reply has a result or an error: {reply}"),
    };
    let (client, requests) = fake(name, vec![Reply::Answer(answer)]);
    let (client, outcome) = make(client, &call);
    same_params(call.method(), request, &next_request(&requests));
    match (reply.get("result"), reply.get("error")) {
        (Some(result), _) => match outcome {
            Ok(Outcome::Read(read)) => assert_eq!(&read, result, "{name}"),
            Ok(Outcome::Acknowledged) => {
                assert!(matches!(call, Call::OnStarted(_) | Call::OnFinished(_)))
            }
            Ok(Outcome::Ended(ending)) => {
                assert_eq!(ending, Ending::Exited("closed its end".to_owned()))
            }
            Err(err) => panic!("{name}: the SDK's reply is refused: {err}"),
        },
        (None, Some(error)) => {
            let err = outcome.expect_err(name);
            assert_error(&err, error);
            assert!(!client.unwrap().is_dead(), "{name}");
        }
        (None, None) => unreachable!(),
    }
}

/// An error reply, kept: its code, its message after ours, its `data`.
fn assert_error(err: &CallError, error: &Value) {
    assert_eq!(err.code.code(), error["code"].as_i64().unwrap(), "{err}");
    let message = error["message"].as_str().unwrap();
    assert!(
        err.message
            .starts_with(&format!("the extension replied with an error: {message}")),
        "{err}"
    );
    assert_eq!(err.data.as_ref(), error.get("data"), "{err}");
}

/// The request we sent is read by the method's params reader as the recorded one is
/// (so `"params": null` and no params are one), and carries no `"params": null`.
fn same_params(method: &str, recorded: &Value, sent: &Value) {
    assert_eq!(sent["jsonrpc"], "2.0");
    assert_eq!(sent["method"], method);
    assert_ne!(sent.get("params"), Some(&Value::Null), "{sent}");
    let (recorded, sent) = (recorded.get("params"), sent.get("params"));
    fn alike<M: Method>(recorded: Option<&Value>, sent: Option<&Value>)
    where
        M::Params: std::fmt::Debug + PartialEq,
    {
        assert_eq!(params::<M>(sent), params::<M>(recorded), "{}", M::NAME);
    }
    match method {
        // The reference host's params, and ours beside them: the capabilities it
        // does not send (the SDK ignores them, as its reply shows).
        Initialize::NAME => {
            let mut ours = sent.cloned();
            let announced = ours
                .as_mut()
                .and_then(Value::as_object_mut)
                .and_then(|params| params.remove("capabilities"));
            // (A recorded request sent as recorded has none.)
            if let Some(announced) = announced {
                assert_eq!(announced, json!({"poll_rejected": true}));
            }
            alike::<Initialize>(recorded, ours.as_ref())
        }
        Describe::NAME => alike::<Describe>(recorded, sent),
        Schema::NAME => alike::<Schema>(recorded, sent),
        Validate::NAME => alike::<Validate>(recorded, sent),
        Poll::NAME => alike::<Poll>(recorded, sent),
        OnStarted::NAME => alike::<OnStarted>(recorded, sent),
        OnFinished::NAME => alike::<OnFinished>(recorded, sent),
        Shutdown::NAME => alike::<Shutdown>(recorded, sent),
        _ => assert_eq!(sent, recorded),
    }
}

// ---------------------------------------------------------------------------------
// host-verdicts.json

/// Our verdict on one reply shape.
enum Ours {
    /// Read; the typed result written back is this JSON (`None`: the call ended the
    /// extension, `shutdown`).
    Reads(Option<Value>),
    /// Refused: an error with this code whose message holds `names` (the offending
    /// member, or the extension's own sentence), and whether the client is dead after.
    Fails {
        code: ErrorCode,
        names: &'static str,
        dead: bool,
    },
    /// A case whose reply is a sentence: a conversation written out in [`host_case`].
    Conversation,
}

/// The reference host's `outcome`, a piece of its `message` that says why, and ours.
struct Verdict {
    outcome: &'static str,
    because: &'static str,
    ours: Ours,
}

fn verdict(outcome: &'static str, because: &'static str, ours: Ours) -> Verdict {
    Verdict {
        outcome,
        because,
        ours,
    }
}

fn fails(code: ErrorCode, names: &'static str) -> Ours {
    Ours::Fails {
        code,
        names,
        dead: false,
    }
}

/// A shape the reference host refused, which we refuse as a -32001 naming the member.
fn misshapen(names: &'static str) -> Ours {
    fails(ErrorCode::PROTOCOL_FAILURE, names)
}

/// Every case of `host-verdicts.json` with our verdict.
fn verdicts() -> Vec<(&'static str, Verdict)> {
    use ErrorCode as E;
    let described = |prompt_fields: Value| {
        Ours::Reads(Some(json!({
            "triggers": [{"trigger_type": "items", "prompt_fields": prompt_fields}],
            "agents": []
        })))
    };
    vec![
        (
            "baseline",
            verdict("accepted", "ok\ts1:", Ours::Conversation),
        ),
        (
            "initialize-flat-name-version",
            verdict(
                "refused",
                "missing field `server_info`",
                misshapen("member `/server_info` is required"),
            ),
        ),
        (
            // Read, then judged: another major kills the extension.
            "initialize-protocol-3",
            verdict(
                "refused",
                "incompatible extension protocol version 3",
                Ours::Fails {
                    code: E::PROTOCOL_FAILURE,
                    names: "the extension speaks protocol 3",
                    dead: true,
                },
            ),
        ),
        (
            "describe-type-only",
            verdict(
                "refused",
                "missing field `trigger_type`",
                misshapen("member `/triggers/0/trigger_type` is required"),
            ),
        ),
        (
            "describe-type-and-trigger_type",
            verdict(
                "accepted",
                "Configuration is valid",
                described(json!(["title"])),
            ),
        ),
        (
            "describe-no-prompt_fields",
            verdict("accepted", "Configuration is valid", described(json!([]))),
        ),
        (
            "describe-prompt_fields-objects",
            verdict(
                "refused",
                "invalid type: map, expected a string",
                misshapen("`/triggers/0/prompt_fields/0` must be a string, found an object"),
            ),
        ),
        (
            "describe-no-agents",
            verdict(
                "accepted",
                "Configuration is valid",
                described(json!(["title"])),
            ),
        ),
        (
            "schema-prompt_fields-objects",
            verdict(
                "refused",
                "invalid type: map, expected a string",
                misshapen("`/prompt_fields/0` must be a string, found an object"),
            ),
        ),
        (
            // The verdict is a result: the host refuses the automation (a
            // configuration error, exit 2) with the extension's sentence.
            "validate-ok-false",
            verdict(
                "refused",
                "Configuration error: automation \"s1\": n must be below 10",
                Ours::Reads(Some(json!({"ok": false, "error": "n must be below 10"}))),
            ),
        ),
        (
            // An error reply, not a verdict (the reference host: a plugin error,
            // exit 1); its `data.errors` are appended to the message.
            "validate-error-32003",
            verdict(
                "refused",
                "Plugin error: the arguments do not fit (-32003)",
                fails(
                    E::CONFIGURATION_INVALID,
                    "the arguments do not fit; /n: too big",
                ),
            ),
        ),
        (
            "validate-error-32602",
            verdict(
                "refused",
                "Plugin error: member `/arguments` is required (-32602)",
                fails(E::INVALID_PARAMS, "member `/arguments` is required"),
            ),
        ),
        (
            "validate-empty-object",
            verdict(
                "refused",
                "missing field `ok`",
                misshapen("member `/ok` is required"),
            ),
        ),
        (
            "validate-null",
            verdict(
                "refused",
                "missing result [-32001]",
                misshapen(
                    "the result must be an object like {\"ok\": true} or {\"ok\": false, \
                     \"error\": \"…\"}, found null",
                ),
            ),
        ),
        (
            "validate-ok-with-configuration",
            verdict("accepted", "ok\ts1:", Ours::Conversation),
        ),
        (
            "validate-ok-without-configuration",
            verdict("accepted", "ok\ts1:", Ours::Conversation),
        ),
        (
            // One item without fields.
            "poll-empty-list",
            verdict(
                "accepted",
                "ok\ts1:",
                Ours::Reads(Some(json!({"values": []}))),
            ),
        ),
        (
            "poll-non-string-value",
            verdict(
                "refused",
                "invalid type: integer `5`, expected a string",
                misshapen("`/values/0/value` must be a string, found 5"),
            ),
        ),
        (
            "poll-missing-values",
            verdict(
                "refused",
                "missing field `values`",
                misshapen("member `/values` is required"),
            ),
        ),
        (
            "poll-bare-array",
            verdict(
                "refused",
                "invalid type: sequence, expected an object with a values field",
                misshapen("the result must be an object with a `values` member, found an array"),
            ),
        ),
        (
            "poll-reserved-key-repository",
            verdict(
                "refused",
                "key \"repository\" collides with a host template variable",
                misshapen("`/values/0` has the key \"repository\", which is reserved"),
            ),
        ),
        (
            "poll-reserved-key-automation",
            verdict(
                "refused",
                "key \"automation\" collides with a host template variable",
                misshapen("`/values/0` has the key \"automation\", which is reserved"),
            ),
        ),
        (
            "poll-duplicate-key",
            verdict(
                "refused",
                "duplicate key \"a\"",
                misshapen("`/values/1` repeats the key \"a\""),
            ),
        ),
        (
            "poll-pair-extra-member",
            verdict(
                "refused",
                "unknown field `extra`, expected `key` or `value`",
                misshapen("`/values/0` has an unknown member \"extra\""),
            ),
        ),
        (
            "poll-error-32002",
            verdict(
                "refused",
                "Plugin error: execution error: boom (-32002)",
                fails(E::COMMAND_FAILURE, "execution error: boom"),
            ),
        ),
        (
            // The reference host fails the task: no agent, no `onFinished`.
            "onStarted-error",
            verdict(
                "refused",
                "Plugin error: trigger/onStarted refused on purpose (-32002)",
                fails(E::COMMAND_FAILURE, "trigger/onStarted refused on purpose"),
            ),
        ),
        (
            // An error at the client level all the same: whether a failed
            // `onFinished` matters is the host's decision, and the reference host
            // ignores it (the task is `ok`).
            "onFinished-error",
            verdict(
                "accepted",
                "ok\ts1:",
                fails(E::COMMAND_FAILURE, "trigger/onFinished refused on purpose"),
            ),
        ),
        (
            "shutdown-null",
            verdict("accepted", "ok\ts1:", Ours::Reads(None)),
        ),
    ]
}

/// The request a host sends for each method, as the reference host sends it.
fn host_request(method: &str, table: &Configuration) -> Call {
    let item = TaskParams {
        trigger_type: "items".into(),
        values: vec![curupira_protocol::Pair::new("title", "x")],
    };
    match method {
        Initialize::NAME => Call::Initialize(InitializeParams {
            protocol_version: ProtocolVersion::CURRENT,
            client_info: Some(PeerInfo::new("curupira", "0.4.0")),
            capabilities: HostCapabilities::default(),
        }),
        Describe::NAME => Call::Describe,
        Schema::NAME => Call::Schema(SchemaParams {
            trigger_type: "items".into(),
        }),
        Validate::NAME => Call::Validate(ValidateParams {
            trigger_type: "items".into(),
            configuration: table.clone(),
        }),
        Poll::NAME => Call::Poll(poll_of(table.clone())),
        OnStarted::NAME => Call::OnStarted(item),
        OnFinished::NAME => Call::OnFinished(item),
        Shutdown::NAME => Call::Shutdown,
        other => panic!("no method {other} in the reference host's conversation"),
    }
}

/// A poll as the reference host sends it: the automation, `limit` 100 (no
/// `batch_size` in the config), no dry run.
fn poll_of(automation: Configuration) -> PollParams {
    PollParams {
        trigger_type: "items".into(),
        automation,
        limit: Some(100),
        preview: false,
    }
}

/// The automation `s1` as the config has it (the reference host's poll received it
/// when validate returned no `configuration`).
fn table_of(host: &Value) -> Configuration {
    let case = |name: &str| {
        host["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|case| case["case"] == name)
            .unwrap_or_else(|| panic!("host-verdicts.json has no case {name}"))
    };
    let table = case("validate-ok-without-configuration")["first_poll_params"]["automation"]
        .as_object()
        .cloned()
        .unwrap();
    // The normalised one is that table and the one member validate added.
    let mut normalised = case("validate-ok-with-configuration")["first_poll_params"]["automation"]
        .as_object()
        .cloned()
        .unwrap();
    assert_eq!(normalised.remove("added_by_validate"), Some(json!("yes")));
    assert_eq!(normalised, table);
    table
}

fn host_case(host: &Value, case: &Value) -> Result<(), Failed> {
    let name = case["case"].as_str().unwrap();
    let Some((_, verdict)) = verdicts().into_iter().find(|(known, _)| *known == name) else {
        return Err(format!("a new case, {name}: give it a verdict of ours in `verdicts`").into());
    };
    assert_eq!(
        case["outcome"], verdict.outcome,
        "{name}: the reference host's outcome"
    );
    let message = case["message"].as_str().unwrap();
    assert!(message.contains(verdict.because), "{name}: {message}");
    let table = table_of(host);
    match verdict.ours {
        Ours::Conversation => {
            conversation(name, case, &table);
            return Ok(());
        }
        Ours::Reads(expected) => {
            let (client, outcome) = one_call(case, &table);
            match (outcome, expected) {
                (Ok(Outcome::Read(read)), Some(expected)) => assert_eq!(read, expected, "{name}"),
                (Ok(Outcome::Ended(ending)), None) => {
                    assert_eq!(ending, Ending::Exited("closed its end".to_owned()))
                }
                (outcome, expected) => panic!("{name}: {outcome:?}, expected {expected:?}"),
            }
            assert!(client.is_none_or(|client| !client.is_dead()));
        }
        Ours::Fails { code, names, dead } => {
            let (client, outcome) = one_call(case, &table);
            let err = outcome.expect_err(name);
            assert_eq!(err.code, code, "{name}: {err}");
            assert_eq!(err.method, case["method"].as_str().unwrap());
            assert!(err.message.contains(names), "{name}: {err}");
            if let Some(error) = case["extension_reply"].get("error") {
                assert_error(&err, error);
            }
            assert_eq!(client.unwrap().is_dead(), dead, "{name}: {err}");
        }
    }
    Ok(())
}

/// The case's method called once, answered with the case's reply.
fn one_call(case: &Value, table: &Configuration) -> (Option<Client>, Result<Outcome, CallError>) {
    let method = case["method"].as_str().unwrap();
    let call = host_request(method, table);
    let (client, requests) = fake("shape", vec![Reply::shape(&case["extension_reply"])]);
    let made = make(client, &call);
    let sent = next_request(&requests);
    assert_eq!(sent["method"], method);
    made
}

/// The cases whose reply is a sentence (and the one whose verdict shows in the next
/// call): validate's `configuration`, or the table when it returned none, is what
/// every poll receives, exactly as the reference host sent it (`first_poll_params`).
/// `baseline` is the whole conversation in the accepted shapes.
fn conversation(name: &str, case: &Value, table: &Configuration) {
    let first_poll = &case["first_poll_params"];
    let verdict = match name {
        "validate-ok-without-configuration" => json!({"ok": true}),
        "baseline" | "validate-ok-with-configuration" => {
            // "ok true with configuration = the table plus `added_by_validate`".
            let mut normalised = table.clone();
            normalised.insert("added_by_validate".into(), json!("yes"));
            json!({"ok": true, "configuration": normalised})
        }
        other => panic!("no conversation for {other}"),
    };
    let item = json!({"values": [{"key": "title", "value": "x"}]});
    let mut replies = vec![Reply::result(verdict), Reply::result(item.clone())];
    if name == "baseline" {
        replies = vec![
            Reply::result(json!({
                "protocol_version": 2, "server_info": {"name": "shape", "version": "0.0.1"}
            })),
            Reply::result(json!({
                "triggers": [{"trigger_type": "items", "prompt_fields": ["title"]}],
                "agents": []
            })),
            Reply::result(json!({"schema": {"type": "object"}, "prompt_fields": ["title"]})),
        ]
        .into_iter()
        .chain(replies)
        .chain([
            Reply::result(json!({"values": null})),
            Reply::result(json!({})),
            Reply::result(json!({})),
            Reply::result(json!({})),
        ])
        .collect();
    }
    let (mut client, requests) = fake("shape", replies);
    if name == "baseline" {
        let hello = client
            .initialize(PeerInfo::new("curupira", "0.4.0"))
            .unwrap();
        assert_eq!(hello.server_info, PeerInfo::new("shape", "0.0.1"));
        let described = client.describe().unwrap();
        assert_eq!(described.triggers[0].trigger_type, "items");
        assert_eq!(client.schema("items").unwrap().prompt_fields, ["title"]);
        for _ in 0..3 {
            next_request(&requests);
        }
    }
    let verdict = client.validate("items", table).unwrap();
    let sent = next_request(&requests);
    assert_eq!(
        sent["params"],
        json!({"trigger_type": "items", "configuration": table})
    );
    // What a host does with the verdict: poll with the normalised table, else the
    // table as sent.
    let automation = match verdict {
        curupira_protocol::ValidateResult::Accepted { configuration } => {
            configuration.unwrap_or_else(|| table.clone())
        }
        rejected => panic!("{name}: {rejected:?}"),
    };
    let values = client.poll(&poll_of(automation)).unwrap();
    assert_eq!(json!({ "values": values }), item);
    let sent = next_request(&requests);
    assert_eq!(
        &sent["params"], first_poll,
        "{name}: the first poll's params"
    );
    if name != "baseline" {
        return;
    }
    let polled = values.unwrap();
    assert_eq!(client.poll(&poll_of(table.clone())).unwrap(), None);
    client.on_started("items", &polled).unwrap();
    client.on_finished("items", &polled).unwrap();
    assert_eq!(
        client.shutdown(),
        Ok(Ending::Exited("closed its end".to_owned()))
    );
    let sent: Vec<Value> = requests.try_iter().collect();
    let methods: Vec<&str> = sent.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        [
            "trigger/poll",
            "trigger/onStarted",
            "trigger/onFinished",
            "shutdown"
        ]
    );
    assert_eq!(
        sent[1]["params"],
        json!({"trigger_type": "items", "values": [{"key": "title", "value": "x"}]})
    );
    assert_eq!(case["agent_runs"], 1);
}
