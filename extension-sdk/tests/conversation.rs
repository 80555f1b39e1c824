//! Whole conversations with `serve`, running in a thread on the extension's ends of
//! `curupira_client::memory` pipes. The host's side is raw frames where the exact bytes
//! of a reply (or of a malformed request) are the point, every reply compared as a JSON
//! value; it is a `curupira_client::Client` where typed calls are.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::thread::JoinHandle;

use curupira_client::memory::{self, PipeReader, PipeWriter};
use curupira_client::{CallError, Client};
use curupira_extension_sdk::{
    Configuration, ErrorCode, Pair, ServeError, ServeOptions, ServeOutcome, TriggerError, serve,
};
use curupira_framing::{FrameReader, FrameWriter};
use curupira_jsonrpc::parse_message;
use curupira_protocol::{PeerInfo, PollParams, ValidateResult, ValidationError};
use serde_json::{Value, json};
use support::{FakeTrigger, Served, connect, hang_up, serve_in_thread};

/// The host's end of a conversation in raw frames, with `serve` running in a thread.
struct Host {
    to_extension: Option<FrameWriter<PipeWriter>>,
    from_extension: FrameReader<PipeReader>,
    server: JoinHandle<Served>,
}

impl Host {
    fn start(trigger: FakeTrigger, options: ServeOptions) -> Host {
        let (stdin_reader, stdin_writer) = memory::pipe();
        let (stdout_reader, stdout_writer) = memory::pipe();
        Host {
            to_extension: Some(FrameWriter::new(stdin_writer)),
            from_extension: FrameReader::new(stdout_reader),
            server: serve_in_thread(trigger, stdin_reader, stdout_writer, options),
        }
    }

    fn send_raw(&mut self, body: &[u8]) {
        self.to_extension
            .as_mut()
            .expect("stdin is open")
            .write_frame(body)
            .unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    fn receive(&mut self) -> Value {
        let body = self
            .from_extension
            .read_frame()
            .unwrap()
            .expect("a reply frame");
        serde_json::from_slice(&body).expect("replies are JSON")
    }

    /// Sends a request and returns the one reply it gets.
    fn call(&mut self, id: u64, method: &str, params: Option<Value>) -> Value {
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            request["params"] = params;
        }
        self.send(request);
        self.receive()
    }

    fn initialize(&mut self) {
        let reply = self.call(
            0,
            "initialize",
            Some(json!({"protocol_version": 2, "client_info": {"name": "test", "version": "0"}})),
        );
        assert!(reply.get("result").is_some(), "initialize failed: {reply}");
    }

    /// Closes stdin (when still open), checks nothing more was written and returns
    /// how `serve` ended and the trigger it left.
    fn finish(mut self) -> (ServeOutcome, FakeTrigger) {
        self.to_extension = None;
        let (outcome, trigger) = self.server.join().expect("serve does not panic");
        assert_eq!(
            self.from_extension.read_frame().unwrap(),
            None,
            "serve wrote a frame nobody asked for"
        );
        (outcome.expect("serve ends cleanly"), trigger)
    }
}

fn ok(id: u64, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// How the client words an error reply: this, then the extension's own message.
const REPLIED: &str = "the extension replied with an error: ";

/// `initialize` as a host sends it; it must succeed.
fn initialize(client: &mut Client) {
    client
        .initialize(PeerInfo::new("test", "0"))
        .expect("initialize succeeds");
}

/// `trigger/poll` params as the reference host sends them.
fn poll_params(trigger_type: &str, automation: Value) -> PollParams {
    PollParams {
        trigger_type: trigger_type.to_owned(),
        automation: table(automation),
        limit: Some(5),
        preview: false,
    }
}

fn table(value: Value) -> Configuration {
    serde_json::from_value(value).expect("a JSON object")
}

/// The error reply a typed call got: its code, the extension's own message and its
/// data. A failure of the client's own (a timeout, a broken frame) is not one.
fn refused<T: std::fmt::Debug>(result: Result<T, CallError>) -> (ErrorCode, String, Option<Value>) {
    let err = result.expect_err("an error reply");
    let message = err
        .message
        .strip_prefix(REPLIED)
        .unwrap_or_else(|| panic!("not an error reply: {err}"));
    (err.code, message.to_owned(), err.data)
}

fn alpha_items() -> FakeTrigger {
    FakeTrigger::with_items(&[
        &[("title", "first"), ("n", "1")],
        &[("title", "second"), ("n", "2")],
    ])
}

#[test]
fn a_whole_conversation() {
    let mut host = Host::start(alpha_items(), ServeOptions::new("fake", "1.2.3"));

    assert_eq!(
        host.call(1, "describe", None),
        error(
            json!(1),
            -32001,
            "`initialize` must come first: received `describe` before it"
        )
    );
    assert_eq!(
        host.call(
            2,
            "initialize",
            Some(json!({"protocol_version": 3, "client_info": {"name": "h", "version": "9"}}))
        ),
        error(
            json!(2),
            -32001,
            "protocol version mismatch: the host speaks protocol 3, the extension speaks \
             protocol 2 (only the major version is compared)"
        )
    );
    let initialized = |id| {
        ok(
            id,
            json!({"protocol_version": 2, "server_info": {"name": "fake", "version": "1.2.3"}}),
        )
    };
    assert_eq!(
        host.call(
            3,
            "initialize",
            Some(json!({"protocol_version": "2.1", "client_info": {"name": "h", "version": "9"}}))
        ),
        initialized(3)
    );
    // A second `initialize` is answered like the first, as the official SDK answers
    // it; an older host's `host` member is ignored.
    assert_eq!(
        host.call(
            4,
            "initialize",
            Some(json!({"protocol_version": 2, "host": {"name": "h", "version": "9"}}))
        ),
        initialized(4)
    );
    assert_eq!(
        host.call(5, "describe", Some(Value::Null)),
        ok(
            5,
            json!({"triggers": [
                {"trigger_type": "alpha", "prompt_fields": ["title", "n"],
                 "description": "Hands out queued items."},
                {"trigger_type": "beta", "prompt_fields": []},
            ], "agents": []})
        )
    );
    assert_eq!(
        host.call(
            6,
            "trigger/schema",
            Some(json!({"trigger_type": "fake/alpha"}))
        ),
        ok(
            6,
            json!({
                "schema": {
                    "type": "object",
                    "properties": {"max": {"type": "integer", "default": 3}},
                    "additionalProperties": false,
                },
                "prompt_fields": ["title", "n"],
            })
        )
    );
    // The whole table comes back, core keys kept, the schema's default filled in.
    let table =
        json!({"prompt": "Do ${title}", "repository": "demo", "trigger_type": "fake/alpha"});
    let normalised = json!({"prompt": "Do ${title}", "repository": "demo",
                            "trigger_type": "fake/alpha", "max": 3});
    assert_eq!(
        host.call(
            7,
            "trigger/validate",
            Some(json!({"trigger_type": "alpha", "configuration": table}))
        ),
        ok(7, json!({"ok": true, "configuration": normalised}))
    );

    let poll = json!({"trigger_type": "fake/alpha", "automation": normalised, "limit": 5,
                      "preview": false});
    let first = json!([{"key": "title", "value": "first"}, {"key": "n", "value": "1"}]);
    assert_eq!(
        host.call(8, "trigger/poll", Some(poll.clone())),
        ok(8, json!({"values": first}))
    );
    assert_eq!(
        host.call(
            9,
            "trigger/onStarted",
            Some(json!({"trigger_type": "alpha", "values": first}))
        ),
        ok(9, json!({}))
    );
    assert_eq!(
        host.call(
            10,
            "trigger/onFinished",
            Some(json!({"trigger_type": "fake/alpha", "values": first}))
        ),
        ok(10, json!({}))
    );
    assert_eq!(
        host.call(11, "trigger/poll", Some(poll.clone())),
        ok(
            11,
            json!({"values": [{"key": "title", "value": "second"}, {"key": "n", "value": "2"}]})
        )
    );
    assert_eq!(
        host.call(12, "trigger/poll", Some(poll)),
        ok(12, json!({"values": null}))
    );
    assert_eq!(
        host.call(
            13,
            "trigger/poll",
            Some(json!({"trigger_type": "beta", "automation": {}}))
        ),
        ok(13, json!({"values": null}))
    );

    assert_eq!(
        host.call(14, "trigger/pol", None),
        error(json!(14), -32601, r#"method "trigger/pol" not found"#)
    );

    host.send_raw(b"this is not JSON");
    let expected: Value = serde_json::from_slice(
        &curupira_jsonrpc::Message::from(
            parse_message(b"this is not JSON").unwrap_err().into_reply(),
        )
        .to_vec(),
    )
    .unwrap();
    let garbage_reply = host.receive();
    assert_eq!(garbage_reply, expected);
    assert_eq!(garbage_reply["id"], Value::Null);
    assert_eq!(garbage_reply["error"]["code"], json!(-32700));

    // A notification is never answered: the next frame out answers the next request.
    host.send(json!({"jsonrpc": "2.0", "method": "trigger/poll", "params": {}}));
    assert_eq!(
        host.call(15, "shutdown", Some(Value::Null)),
        ok(15, json!({}))
    );

    let (outcome, trigger) = host.finish();
    assert_eq!(outcome, ServeOutcome::Shutdown);
    let first_pairs = vec![Pair::new("title", "first"), Pair::new("n", "1")];
    assert_eq!(trigger.started, vec![first_pairs.clone()]);
    assert_eq!(trigger.finished, vec![first_pairs]);
}

#[test]
fn an_invalid_request_is_answered_with_its_id() {
    let mut host = Host::start(FakeTrigger::default(), ServeOptions::default());
    host.send_raw(br#"{"jsonrpc":"1.0","id":7,"method":"describe"}"#);
    assert_eq!(
        host.receive(),
        error(
            json!(7),
            -32600,
            r#"member `jsonrpc` must be the string "2.0", found "1.0""#
        )
    );
    host.send_raw(br#"{"jsonrpc":"2.0","id":{},"method":"describe"}"#);
    let reply = host.receive();
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], json!(-32600));
    host.send_raw(br#"[{"jsonrpc":"2.0","id":1,"method":"describe"}]"#);
    let reply = host.receive();
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], json!(-32600));

    // Without a name, initialize reports this SDK as the server.
    assert_eq!(
        host.call(8, "initialize", Some(json!({"protocol_version": 2}))),
        ok(
            8,
            json!({"protocol_version": 2, "server_info": {
                "name": "curupira-extension-sdk", "version": env!("CARGO_PKG_VERSION")}})
        )
    );
    let (outcome, _) = host.finish();
    assert_eq!(outcome, ServeOutcome::EndOfInput);
}

#[test]
fn an_unknown_trigger_type_is_unsupported_as_the_official_sdk_says_it() {
    let (mut client, server) = connect(FakeTrigger::default(), ServeOptions::default());
    initialize(&mut client);
    let unknown = |name: &str| {
        (
            ErrorCode::CONFIGURATION_INVALID,
            format!("unsupported trigger_type '{name}'"),
            Some(json!({"trigger_types": ["alpha", "beta"]})),
        )
    };
    assert_eq!(refused(client.schema("gamma")), unknown("gamma"));
    assert_eq!(
        refused(client.poll(&poll_params("fake/gamma", json!({})))),
        unknown("fake/gamma")
    );
    assert_eq!(refused(client.on_finished("gamma", &[])), unknown("gamma"));
    // In `trigger/validate` it is a verdict, not an error.
    assert_eq!(
        client.validate("gamma", &table(json!({"max": 1}))).unwrap(),
        ValidateResult::Rejected {
            error: Some("unsupported trigger_type 'gamma'".to_owned()),
            errors: Vec::new(),
        }
    );
    let (outcome, trigger) = hang_up(client, server);
    assert_eq!(outcome, ServeOutcome::EndOfInput);
    assert!(trigger.finished.is_empty(), "the trait was not called");
}

/// Beside the sentence, each problem at its pointer (`errors`, ours), so a host can
/// report it where the config file says it.
#[test]
fn a_rejection_is_a_verdict_listing_every_problem() {
    let (mut client, server) = connect(FakeTrigger::default(), ServeOptions::default());
    initialize(&mut client);
    let configuration = table(json!({"max": "3", "a/b": 1, "trigger_type": "fake/alpha"}));
    assert_eq!(
        client.validate("alpha", &configuration).unwrap(),
        ValidateResult::Rejected {
            error: Some(
                "trigger 'alpha': /max: `max` must be a non-negative integer, found \"3\"; \
                 /a~1b: unknown member `a/b`"
                    .to_owned()
            ),
            errors: vec![
                ValidationError::new("/max", "`max` must be a non-negative integer, found \"3\""),
                ValidationError::new("/a~1b", "unknown member `a/b`"),
            ],
        }
    );
    assert_eq!(hang_up(client, server).0, ServeOutcome::EndOfInput);
}

#[test]
fn params_are_checked_strictly() {
    let mut host = Host::start(FakeTrigger::default(), ServeOptions::default());
    host.initialize();
    let cases = [
        (
            "trigger/poll",
            None,
            "invalid params for `trigger/poll`: the params are missing; expected an object with \
             `trigger_type` and `automation`",
        ),
        (
            "trigger/poll",
            Some(json!(["alpha"])),
            "invalid params for `trigger/poll`: the params must be an object with `trigger_type` \
             and `automation`, found an array",
        ),
        (
            "trigger/poll",
            Some(json!({"automation": {}})),
            "invalid params for `trigger/poll`: member `/trigger_type` is required",
        ),
        (
            "trigger/validate",
            Some(json!({"trigger_type": 1, "configuration": {}})),
            "invalid params for `trigger/validate`: `/trigger_type` must be a string, found 1",
        ),
        (
            "trigger/poll",
            Some(json!({"trigger_type": "alpha", "automation": [1]})),
            "invalid params for `trigger/poll`: `/automation` must be an object, found an array",
        ),
        (
            "trigger/poll",
            Some(json!({"trigger_type": "alpha", "automation": {}, "limit": "5"})),
            "invalid params for `trigger/poll`: `/limit` must be a non-negative integer, found \
             \"5\"",
        ),
        (
            "trigger/poll",
            Some(json!({"trigger_type": "alpha", "automation": {}, "preview": "yes"})),
            "invalid params for `trigger/poll`: `/preview` must be a boolean, found \"yes\"",
        ),
        (
            "trigger/onStarted",
            Some(json!({"trigger_type": "alpha", "values": [{"key": "a", "value": 1}]})),
            "invalid params for `trigger/onStarted`: `/values/0/value` must be a string, found 1",
        ),
        (
            "trigger/onFinished",
            Some(json!({"trigger_type": "alpha", "values": null})),
            "invalid params for `trigger/onFinished`: `/values` must be an array of \
             {\"key\": …, \"value\": …} objects, found null",
        ),
        (
            "describe",
            Some(json!([])),
            "invalid params for `describe`: the params must be absent, null or an object, found \
             an array",
        ),
        (
            "initialize",
            Some(json!({"protocol_version": "v2"})),
            "invalid params for `initialize`: `/protocol_version`: \"v2\" is not a protocol \
             version: write a non-negative integer such as 2, or a string `MAJOR` or \
             `MAJOR.MINOR` such as \"2.1\"",
        ),
        (
            // One version rule for hosts, extensions and manifests: `"3.0.1"` is not a
            // version (the SDK used to read it as major 3).
            "initialize",
            Some(json!({"protocol_version": "3.0.1"})),
            "invalid params for `initialize`: `/protocol_version`: \"3.0.1\" is not a \
             protocol version: write a non-negative integer such as 2, or a string `MAJOR` or \
             `MAJOR.MINOR` such as \"2.1\"",
        ),
    ];
    for (id, (method, params, message)) in (1..).zip(cases) {
        assert_eq!(
            host.call(id, method, params),
            error(json!(id), -32602, message),
            "{method}"
        );
    }
    // Members a method does not name are ignored: `arguments` (an older host's member)
    // is not the configuration, which is then empty, as the official SDK reads it.
    assert_eq!(
        host.call(
            98,
            "trigger/validate",
            Some(json!({"trigger_type": "alpha", "arguments": {"max": 7}}))
        ),
        ok(98, json!({"ok": true, "configuration": {"max": 3}}))
    );
    assert_eq!(
        host.call(
            99,
            "trigger/poll",
            Some(json!({"trigger_type": "beta", "automation": {}, "trace": "x"}))
        ),
        ok(99, json!({"values": null}))
    );
    assert_eq!(host.finish().0, ServeOutcome::EndOfInput);
}

#[test]
fn trigger_errors_keep_their_code_and_data() {
    let trigger = FakeTrigger {
        poll_error: Some(
            TriggerError::command_failed("`gh issue list` exited with status 4")
                .with_data(json!({"status": 4})),
        ),
        ..FakeTrigger::default()
    };
    let (mut client, server) = connect(trigger, ServeOptions::default());
    initialize(&mut client);
    assert_eq!(
        refused(client.poll(&poll_params("alpha", json!({})))),
        (
            ErrorCode::COMMAND_FAILURE,
            "`gh issue list` exited with status 4".to_owned(),
            Some(json!({"status": 4})),
        )
    );
    assert_eq!(hang_up(client, server).0, ServeOutcome::EndOfInput);
}

#[test]
fn an_item_the_host_would_reject_is_never_sent() {
    let cases: [(&[(&str, &str)], &str); 3] = [
        (
            &[("title", "x"), ("repository", "y")],
            "trigger 'alpha' polled an item the host would reject: pair 1 has the key \
             \"repository\", which is reserved: the host provides `repository` and \
             `automation` itself",
        ),
        (
            &[("n", "1"), ("n", "2")],
            "trigger 'alpha' polled an item the host would reject: pair 1 repeats the \
             key \"n\"; a key appears once per item",
        ),
        (
            &[("", "1")],
            "trigger 'alpha' polled an item the host would reject: pair 0 has an empty \
             key; item keys are non-empty",
        ),
    ];
    for (item, message) in cases {
        let (mut client, server) =
            connect(FakeTrigger::with_items(&[item]), ServeOptions::default());
        initialize(&mut client);
        assert_eq!(
            refused(client.poll(&poll_params("alpha", json!({})))),
            (ErrorCode::INTERNAL_ERROR, message.to_owned(), None)
        );
        assert_eq!(hang_up(client, server).0, ServeOutcome::EndOfInput);
    }
}

#[test]
fn a_reply_over_the_frame_limit_becomes_an_internal_error() {
    let long = "x".repeat(300);
    let trigger = FakeTrigger::with_items(&[&[("title", long.as_str())]]);
    let (mut client, server) = connect(trigger, ServeOptions::default().with_max_frame_bytes(200));
    initialize(&mut client);
    let (code, message, _) = refused(client.poll(&poll_params("alpha", json!({}))));
    assert_eq!(code, ErrorCode::INTERNAL_ERROR);
    assert!(
        message.starts_with("the reply is 3")
            && message.ends_with("maximum frame size of 200 bytes"),
        "{message}"
    );
    assert_eq!(hang_up(client, server).0, ServeOutcome::EndOfInput);
}

#[test]
fn a_framing_error_ends_serve_without_a_reply() {
    let mut input = FrameWriter::new(Vec::new());
    input
        .write_frame(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#)
        .unwrap();
    let mut bad = b"0000+01a".to_vec();
    bad.extend_from_slice(input.into_inner().as_slice());
    let mut output = Vec::new();
    let err = serve(
        &mut FakeTrigger::default(),
        &bad[..],
        &mut output,
        &ServeOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ServeError::Read(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("cannot read the next request: invalid frame header: byte"),
        "{err}"
    );
    assert!(
        output.is_empty(),
        "nothing can be answered after a framing error"
    );

    let mut output = Vec::new();
    let err = serve(
        &mut FakeTrigger::default(),
        &b"0000002c{\"jsonrpc\""[..],
        &mut output,
        &ServeOptions::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("the header announced 44 bytes, got 10"),
        "{err}"
    );
    assert!(output.is_empty());
}

#[test]
fn end_of_input_at_a_frame_boundary_is_a_clean_end() {
    let mut output = Vec::new();
    let outcome = serve(
        &mut FakeTrigger::default(),
        &b""[..],
        &mut output,
        &ServeOptions::default(),
    )
    .unwrap();
    assert_eq!(outcome, ServeOutcome::EndOfInput);
    assert!(output.is_empty());
}

#[test]
fn shutdown_before_initialize_is_answered_and_ends_serve() {
    let mut input = FrameWriter::new(Vec::new());
    input
        .write_frame(br#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#)
        .unwrap();
    input
        .write_frame(br#"{"jsonrpc":"2.0","id":2,"method":"describe"}"#)
        .unwrap();
    let input = input.into_inner();
    let mut output = Vec::new();
    let outcome = serve(
        &mut FakeTrigger::default(),
        &input[..],
        &mut output,
        &ServeOptions::default(),
    )
    .unwrap();
    assert_eq!(outcome, ServeOutcome::Shutdown);
    let replies: Vec<Value> = FrameReader::new(&output[..])
        .map(|body| serde_json::from_slice(&body.unwrap()).unwrap())
        .collect();
    assert_eq!(
        replies,
        [json!({"jsonrpc": "2.0", "id": "bye", "result": {}})]
    );
}

/// The reference host sends `"params": null` with `describe` and `shutdown`; the SDK
/// answered -32600 and then never ended. Null params are absent params.
#[test]
fn null_params_are_absent_params_as_the_reference_host_sends_them() {
    let mut host = Host::start(alpha_items(), ServeOptions::default());
    host.initialize();
    let described = host.call(1, "describe", Some(Value::Null));
    assert!(
        described["result"]["triggers"].is_array(),
        "describe with null params is answered: {described}"
    );
    let shutdown = host.call(2, "shutdown", Some(Value::Null));
    assert!(
        shutdown.get("error").is_none() && shutdown.get("result").is_some(),
        "{shutdown}"
    );
    let (outcome, _) = host.finish();
    assert_eq!(outcome, ServeOutcome::Shutdown, "serve ends at shutdown");
}

/// A trigger's count of unreadable entries goes only to a host that announced it
/// reads it (ours, `capabilities.poll_rejected`); the reference host, which announces
/// nothing, would refuse the member. A failed poll's count is dropped, not carried to
/// the next poll.
#[test]
fn a_rejected_count_is_sent_only_to_a_host_that_announced_it() {
    let poll = json!({"trigger_type": "alpha", "automation": {}});
    let trigger = FakeTrigger {
        rejected_per_poll: 2,
        ..alpha_items()
    };
    let mut reference = Host::start(trigger, ServeOptions::default());
    reference.initialize();
    let reply = reference.call(1, "trigger/poll", Some(poll.clone()));
    assert_eq!(
        reply,
        ok(
            1,
            json!({"values": [{"key": "title", "value": "first"}, {"key": "n", "value": "1"}]})
        )
    );
    let (_, left) = reference.finish();
    assert_eq!(left.rejected, 0, "taken, though not sent");

    let trigger = FakeTrigger {
        rejected_per_poll: 2,
        poll_error: Some(TriggerError::new(ErrorCode::COMMAND_FAILURE, "boom")),
        ..alpha_items()
    };
    let mut ours = Host::start(trigger, ServeOptions::default());
    let hello = ours.call(
        0,
        "initialize",
        Some(
            json!({"protocol_version": 2, "client_info": {"name": "curupira", "version": "0"},
                    "capabilities": {"poll_rejected": true, "later": 1}}),
        ),
    );
    assert!(hello.get("result").is_some(), "{hello}");
    let failed = ours.call(1, "trigger/poll", Some(poll.clone()));
    assert!(failed.get("error").is_some(), "{failed}");
    let reply = ours.call(2, "trigger/poll", Some(poll.clone()));
    assert_eq!(reply["result"]["rejected"], 2, "this poll's only: {reply}");
    assert_eq!(reply["result"]["values"][0]["value"], "first");
    let (_, _) = ours.finish();

    // Through the client, which announces it: the count comes back typed.
    let trigger = FakeTrigger {
        rejected_per_poll: 1,
        ..alpha_items()
    };
    let (mut client, server) = connect(trigger, ServeOptions::default());
    initialize(&mut client);
    let polled = client
        .poll_result(&poll_params("alpha", json!({})))
        .unwrap();
    assert_eq!(polled.rejected, Some(1));
    assert_eq!(polled.values.map(|pairs| pairs.len()), Some(2));
    hang_up(client, server);
}
