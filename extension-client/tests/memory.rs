//! A client over the in-memory transport: every failure class of the crate's table,
//! the typed calls' checks, and a conversation with the SDK's serve loop.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufReader, Read, Write};
use std::thread;
use std::time::{Duration, Instant};

use curupira_client::memory::{self, ExtensionEnd};
use curupira_client::{CallError, Client, Ending, Limits, Options, Timeouts};
use curupira_extension_sdk::{
    Arguments, ServeOptions, Trigger, TriggerDescription, TriggerError, TriggerSchema,
    ValidateError, ValidationError, serve,
};
use curupira_jsonrpc::ErrorCode;
use curupira_protocol::method::{Describe, Poll};
use curupira_protocol::{
    Configuration, NoParams, Pair, PeerInfo, PollParams, TriggerDescription as Described,
    ValidateResult,
};
use serde_json::{Value, json};

fn options(seconds: f64) -> Options {
    Options {
        timeouts: Timeouts::uniform(Duration::from_secs_f64(seconds)),
        limits: Limits {
            max_frame_bytes: 1024,
            ..Limits::default()
        },
    }
}

fn pair(name: &str) -> (Client, ExtensionEnd) {
    memory::duplex(name, options(2.0))
}

/// `body` as one frame.
fn frame(body: &str) -> Vec<u8> {
    format!("{:08x}{body}", body.len()).into_bytes()
}

/// Writes a result for request `id`.
fn answer(end: &mut ExtensionEnd, id: u64, result: Value) {
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    end.write_all(&frame(&body)).unwrap();
}

fn fails(result: Result<impl std::fmt::Debug, CallError>) -> CallError {
    result.unwrap_err()
}

/// Who the host is, in `initialize`'s `client_info`.
fn client_info() -> PeerInfo {
    PeerInfo::new("test", "0")
}

/// A JSON object as a table.
fn table(value: Value) -> Configuration {
    value.as_object().cloned().unwrap()
}

/// A poll of `trigger_type` with `automation`, as the reference host sends it.
fn poll_params(trigger_type: &str, automation: Configuration) -> PollParams {
    PollParams {
        trigger_type: trigger_type.to_owned(),
        automation,
        limit: Some(100),
        preview: false,
    }
}

/// Reads the next frame the client sent, as JSON.
fn sent(end: &mut ExtensionEnd) -> Value {
    let mut header = vec![0; 8];
    end.read_exact(&mut header).unwrap();
    let len = usize::from_str_radix(std::str::from_utf8(&header).unwrap(), 16).unwrap();
    let mut body = vec![0; len];
    end.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

#[test]
fn a_result_is_read_by_its_method() {
    let (mut client, mut end) = pair("typed");
    answer(
        &mut end,
        1,
        json!({"triggers": [
            {"trigger_type": "alpha", "prompt_fields": ["id"], "description": "first"},
            {"trigger_type": "beta"}
        ]}),
    );
    let described = client.request::<Describe>(&NoParams).unwrap();
    assert_eq!(
        described.triggers,
        [
            Described::new("alpha", ["id"]).with_description("first"),
            Described::new("beta", [""; 0])
        ]
    );
    assert!(described.agents.is_empty());

    // What was sent: one frame per request, params written by the protocol types;
    // `describe` has none, so no `params` member at all.
    assert_eq!(
        sent(&mut end),
        json!({"jsonrpc": "2.0", "id": 1, "method": "describe"})
    );

    answer(&mut end, 2, json!({"ok": true}));
    let configuration = table(json!({"trigger_type": "x/alpha", "repository": "demo", "n": 3}));
    assert_eq!(
        client.validate("alpha", &configuration),
        Ok(ValidateResult::Accepted {
            configuration: None
        })
    );
    assert_eq!(
        sent(&mut end),
        json!({"jsonrpc": "2.0", "id": 2, "method": "trigger/validate", "params": {
            "trigger_type": "alpha", "configuration": configuration
        }})
    );
    answer(&mut end, 3, json!({"values": null}));
    client
        .poll(&poll_params("alpha", configuration.clone()))
        .unwrap();
    assert_eq!(
        sent(&mut end),
        json!({"jsonrpc": "2.0", "id": 3, "method": "trigger/poll", "params": {
            "trigger_type": "alpha", "automation": configuration, "limit": 100, "preview": false
        }})
    );
    answer(
        &mut end,
        4,
        json!({"protocol_version": 2, "server_info": {"name": "t", "version": "1"}}),
    );
    client
        .initialize(PeerInfo::new("curupira", "0.4.0"))
        .unwrap();
    assert_eq!(
        sent(&mut end),
        json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {
            "protocol_version": 2, "client_info": {"name": "curupira", "version": "0.4.0"},
            "capabilities": {"poll_rejected": true}
        }}),
        "what the reference host sends, and the capabilities it does not (ours)"
    );
}

#[test]
fn a_result_of_the_wrong_shape_is_a_protocol_failure_that_keeps_the_extension() {
    let (mut client, mut end) = pair("shapes");
    answer(
        &mut end,
        1,
        json!({"values": [{"key": "n", "value": "1"}, {"key": "m", "value": 1}]}),
    );
    let err = fails(client.poll(&poll_params("t", Configuration::new())));
    assert_eq!(
        err.to_string(),
        "extension `shapes`: trigger/poll failed: protocol or version failure (-32001): \
         `/values/1/value` must be a string, found 1"
    );
    assert!(!client.is_dead());

    answer(
        &mut end,
        2,
        json!({"values": [{"key": "repository", "value": "x"}]}),
    );
    let err = fails(client.request::<Poll>(&poll_params("t", Configuration::new())));
    assert_eq!(
        err.message,
        "`/values/0` has the key \"repository\", which is reserved: the host provides \
         `repository` and `automation` itself"
    );

    answer(&mut end, 3, json!({"values": null}));
    assert_eq!(
        client.poll(&poll_params("t", Configuration::new())),
        Ok(None)
    );
    answer(&mut end, 4, json!({"values": []}));
    assert_eq!(
        client.poll(&poll_params("t", Configuration::new())),
        Ok(Some(vec![]))
    );

    // Each method's result is read by its own rules, and none of them kills.
    answer(&mut end, 5, json!({"protocol_version": 2, "name": "flat"}));
    let err = fails(client.initialize(client_info()));
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            ErrorCode::PROTOCOL_FAILURE,
            "member `/server_info` is required"
        )
    );
    answer(&mut end, 6, json!({"triggers": [{"type": "items"}]}));
    assert_eq!(
        fails(client.describe()).message,
        "member `/triggers/0/trigger_type` is required"
    );
    answer(&mut end, 7, json!({}));
    assert_eq!(
        fails(client.validate("t", &Configuration::new())).message,
        "member `/ok` is required"
    );
    assert!(!client.is_dead());
}

#[test]
fn a_version_mismatch_kills_and_later_calls_fail_at_once() {
    let (mut client, mut end) = pair("future");
    answer(
        &mut end,
        1,
        json!({"protocol_version": 3, "server_info": {"name": "future", "version": "3.0.0"}}),
    );
    let err = fails(client.initialize(client_info()));
    assert_eq!(err.code, ErrorCode::PROTOCOL_FAILURE);
    assert!(
        err.message.starts_with("protocol version mismatch"),
        "{err}"
    );
    assert!(client.is_dead());
    let again = fails(client.describe());
    assert_eq!(
        (again.method.as_str(), again.message),
        ("describe", err.message)
    );
    // The extension's input was closed when the client gave up on it.
    let mut rest = Vec::new();
    end.read_to_end(&mut rest).unwrap();
    assert_eq!(client.shutdown(), Ok(Ending::AlreadyFailed));
}

#[test]
fn a_compatible_minor_version_is_accepted() {
    let (mut client, mut end) = pair("minor");
    answer(
        &mut end,
        1,
        json!({"protocol_version": "2.7", "server_info": {"name": "m", "version": "1.0.0"}}),
    );
    let hello = client.initialize(client_info()).unwrap();
    assert_eq!(hello.protocol_version.to_string(), "2.7");
    assert_eq!(hello.server_info, PeerInfo::new("m", "1.0.0"));
}

#[test]
fn no_reply_before_the_deadline_is_a_timeout() {
    let (mut client, _end) = memory::duplex("mute", options(0.2));
    let started = Instant::now();
    let err = fails(client.describe());
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(2),
        "{took:?}"
    );
    assert_eq!(
        err.to_string(),
        "extension `mute`: describe failed: timeout (-32004): no reply within 0.2 s"
    );
    let started = Instant::now();
    assert_eq!(
        fails(client.poll(&poll_params("t", Configuration::new()))).code,
        ErrorCode::TIMEOUT
    );
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "fails at once"
    );
}

#[test]
fn a_slow_drip_times_out_at_the_deadline() {
    let (mut client, mut end) = memory::duplex("drip", options(0.3));
    let dripper = thread::spawn(move || {
        // A header announcing 1000 bytes, then one byte every 10 ms until the client
        // is gone (its reading end dropped).
        let _ = end.write_all(b"000003e8");
        while end.write_all(b"x").is_ok() {
            thread::sleep(Duration::from_millis(10));
        }
    });
    let started = Instant::now();
    let err = fails(client.describe());
    assert_eq!(err.code, ErrorCode::TIMEOUT);
    assert!(started.elapsed() < Duration::from_secs(2));
    drop(client);
    dripper.join().unwrap();
}

#[test]
fn each_broken_stream_gets_the_code_of_the_table() {
    let cases: [(&[u8], ErrorCode, &str); 6] = [
        (
            b"0000000Xgarbage",
            ErrorCode::TRANSPORT_FAILURE,
            "bad frame on stdout: ",
        ),
        (
            b"00000401",
            ErrorCode::TRANSPORT_FAILURE,
            "bad frame on stdout: ",
        ),
        (
            b"00000003\xff\xfe{",
            ErrorCode::PARSE_ERROR,
            "it sent a frame body that is not JSON: ",
        ),
        (
            br#"00000023{"jsonrpc":"1.0","id":1,"result":0}"#,
            ErrorCode::INVALID_REQUEST,
            "it sent a message that is not valid JSON-RPC 2.0: ",
        ),
        (
            br#"00000023{"jsonrpc":"2.0","id":7,"result":0}"#,
            ErrorCode::PROTOCOL_FAILURE,
            "it answered request id 1 with a response for id 7",
        ),
        (
            br#"00000020{"jsonrpc":"2.0","method":"log"}"#,
            ErrorCode::PROTOCOL_FAILURE,
            "it sent a notification (`log`) while the host waited for a reply; extensions only \
             answer",
        ),
    ];
    for (bytes, code, start) in cases {
        let (mut client, mut end) = pair("broken");
        end.write_all(bytes).unwrap();
        let err = fails(client.describe());
        assert_eq!(err.code, code, "{err}");
        assert!(err.message.starts_with(start), "{err}");
        assert!(client.is_dead(), "{err}");
    }
}

#[test]
fn an_oversized_frame_is_refused_from_its_header() {
    let (mut client, mut end) = pair("huge");
    end.write_all(b"00000401").unwrap();
    let err = fails(client.describe());
    assert!(err.message.contains("1025"), "{err}");
    assert!(err.message.contains("1024"), "{err}");
}

#[test]
fn a_closed_end_is_a_transport_failure() {
    let (mut client, end) = pair("gone");
    drop(end);
    let err = fails(client.describe());
    assert_eq!(err.code, ErrorCode::TRANSPORT_FAILURE);
    assert!(
        err.message == "the extension closed its stdout (its in-memory end was dropped)"
            || err
                .message
                .starts_with("cannot write to the extension's stdin"),
        "{err}"
    );

    // Only the output dropped, after a frame cut short.
    let (mut client, end) = pair("cut");
    let (input, mut output) = end.split();
    output.write_all(b"00000010{\"jsonr").unwrap();
    drop(output);
    let err = fails(client.describe());
    assert_eq!(err.code, ErrorCode::TRANSPORT_FAILURE);
    assert!(err.message.starts_with("bad frame on stdout"), "{err}");
    drop(input);
}

#[test]
fn an_error_reply_keeps_its_code_and_data() {
    let (mut client, mut end) = pair("refuses");
    let body = json!({"jsonrpc": "2.0", "id": 1, "error": {
        "code": -32003, "message": "the arguments are not valid",
        "data": {"errors": [{"path": "/max", "message": "must be an integer"}]}
    }});
    end.write_all(&frame(&body.to_string())).unwrap();
    // An error reply is an error, -32003 included (the reference host reports it as a
    // plugin error); a rejection is the result `ok: false`.
    let err = fails(client.validate("t", &Configuration::new()));
    assert_eq!(err.code, ErrorCode::CONFIGURATION_INVALID);
    assert_eq!(
        err.message,
        "the extension replied with an error: the arguments are not valid; /max: must be an \
         integer"
    );
    assert!(err.data.is_some());
    assert!(!client.is_dead());
    answer(
        &mut end,
        2,
        json!({"ok": false, "error": "max must be an integer"}),
    );
    assert_eq!(
        client.validate("t", &Configuration::new()),
        Ok(ValidateResult::Rejected {
            error: Some("max must be an integer".into()),
            errors: Vec::new(),
        })
    );
}

#[test]
fn shutdown_gives_up_on_an_end_that_stays_open() {
    let (client, mut end) = memory::duplex("lingers", options(0.2));
    answer(&mut end, 1, Value::Null);
    let started = Instant::now();
    assert_eq!(client.shutdown(), Ok(Ending::Killed));
    assert!(started.elapsed() < Duration::from_secs(2));
    // The client closed the extension's input: the request, then the end of file.
    let mut sent = Vec::new();
    end.read_to_end(&mut sent).unwrap();
    assert!(String::from_utf8_lossy(&sent).contains("\"shutdown\""));
}

/// Rejects every `max` that is not an integer; hands out one item.
struct Picky {
    given: bool,
}

impl Trigger for Picky {
    fn describe(&self) -> Vec<TriggerDescription> {
        vec![
            TriggerDescription::new("picky", ["n"])
                .with_description("One item, strict parameters."),
        ]
    }

    fn schema(&self, _: &str) -> Result<TriggerSchema, TriggerError> {
        Ok(TriggerSchema::new(
            json!({"type": "object", "properties": {"max": {"default": 1}}}),
            ["n"],
        ))
    }

    fn validate(&self, _: &str, arguments: &Arguments) -> Result<(), ValidateError> {
        match arguments.get("max") {
            Some(max) if max.is_u64() => Ok(()),
            _ => Err(ValidateError::Invalid(vec![ValidationError::member(
                "max",
                "`max` must be an integer",
            )])),
        }
    }

    fn poll(
        &mut self,
        _: &str,
        _: &Arguments,
    ) -> Result<Option<Vec<curupira_extension_sdk::Pair>>, TriggerError> {
        if std::mem::replace(&mut self.given, true) {
            return Ok(None);
        }
        Ok(Some(vec![curupira_extension_sdk::Pair::new("n", "1")]))
    }
}

#[test]
fn a_conversation_with_the_sdk() {
    let (mut client, end) = pair("picky");
    let server = thread::spawn(move || {
        let (reader, writer) = end.split();
        let options = ServeOptions::new("picky", "0.1.0").with_max_frame_bytes(1024);
        serve(
            &mut Picky { given: false },
            BufReader::new(reader),
            writer,
            &options,
        )
    });
    let hello = client.initialize(client_info()).unwrap();
    assert_eq!(hello.server_info, PeerInfo::new("picky", "0.1.0"));
    let described = client.describe().unwrap();
    assert_eq!(described.triggers[0].prompt_fields, ["n"]);
    let schema = client.schema("ours/picky").unwrap();
    assert_eq!(schema.prompt_fields, ["n"]);

    // A configuration that does not fit is the verdict `ok: false`, not an error.
    let mut configuration = table(json!({
        "trigger_type": "ours/picky", "repository": "demo", "prompt": "Do ${n}", "max": "many"
    }));
    let Ok(ValidateResult::Rejected {
        error: Some(error), ..
    }) = client.validate("picky", &configuration)
    else {
        panic!("a rejection");
    };
    assert!(error.contains("`max` must be an integer"), "{error}");
    assert!(!client.is_dead());

    // A trigger type the extension does not offer is the SDK's -32003.
    let err = fails(client.schema("other"));
    assert_eq!(err.code, ErrorCode::CONFIGURATION_INVALID);
    assert!(
        err.message.ends_with("unsupported trigger_type 'other'"),
        "{err}"
    );

    // Accepted, the table comes back normalised: core keys kept, defaults filled in.
    configuration.remove("max");
    let Ok(ValidateResult::Accepted {
        configuration: Some(normalised),
    }) = client.validate("picky", &configuration)
    else {
        panic!("accepted with a configuration");
    };
    let mut expected = configuration.clone();
    expected.insert("max".into(), json!(1));
    assert_eq!(normalised, expected);

    let params = poll_params("picky", normalised);
    let item = client.poll(&params).unwrap().unwrap();
    assert_eq!(item, [Pair::new("n", "1")]);
    client.on_started("picky", &item).unwrap();
    client.on_finished("picky", &item).unwrap();
    assert_eq!(client.poll(&params), Ok(None));
    assert_eq!(
        client.shutdown(),
        Ok(Ending::Exited("closed its end".to_owned()))
    );
    assert!(server.join().unwrap().is_ok());
}
