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
use curupira_protocol::{NoParams, Pair};
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

#[test]
fn a_result_is_read_by_its_method() {
    let (mut client, mut end) = pair("typed");
    answer(
        &mut end,
        1,
        json!({"triggers": [{"type": "alpha", "description": "first"}, {"type": "beta"}]}),
    );
    let described = client.request::<Describe>(&NoParams).unwrap();
    assert_eq!(described.triggers.len(), 2);
    assert_eq!(described.triggers[1].description, None);

    // What was sent: one frame per request, params written by the protocol types.
    let mut sent = vec![0; 8];
    end.read_exact(&mut sent).unwrap();
    let len = usize::from_str_radix(std::str::from_utf8(&sent).unwrap(), 16).unwrap();
    let mut body = vec![0; len];
    end.read_exact(&mut body).unwrap();
    let request: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        request,
        json!({"jsonrpc": "2.0", "id": 1, "method": "describe", "params": {}})
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
    let err = fails(client.poll("t", &Arguments::new()));
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
    let err = fails(client.request::<Poll>(&curupira_protocol::ArgumentsParams {
        trigger_type: "t".into(),
        arguments: Arguments::new(),
    }));
    assert_eq!(
        err.message,
        "`/values/0` has the key \"repository\", which is reserved: the host provides \
         `repository` and `automation` itself"
    );

    answer(&mut end, 3, json!({"values": null}));
    assert_eq!(client.poll("t", &Arguments::new()), Ok(None));
    answer(&mut end, 4, json!({"values": []}));
    assert_eq!(client.poll("t", &Arguments::new()), Ok(Some(vec![])));
}

#[test]
fn a_version_mismatch_kills_and_later_calls_fail_at_once() {
    let (mut client, mut end) = pair("future");
    answer(&mut end, 1, json!({"protocol_version": 3}));
    let err = fails(client.initialize(None));
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
    answer(&mut end, 1, json!({"protocol_version": "2.7", "name": "m"}));
    let hello = client.initialize(None).unwrap();
    assert_eq!(hello.protocol_version.to_string(), "2.7");
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
        fails(client.poll("t", &Arguments::new())).code,
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
    let err = fails(client.validate("t", &Arguments::new()));
    assert_eq!(err.code, ErrorCode::CONFIGURATION_INVALID);
    assert_eq!(
        err.message,
        "the extension replied with an error: the arguments are not valid; /max: must be an \
         integer"
    );
    assert!(err.data.is_some());
    assert!(!client.is_dead());
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
        vec![TriggerDescription::new(
            "picky",
            "One item, strict arguments.",
        )]
    }

    fn schema(&self, _: &str) -> Result<TriggerSchema, TriggerError> {
        Ok(TriggerSchema {
            schema: json!({"type": "object", "properties": {"max": {"default": 1}}}),
            prompt_fields: vec![curupira_extension_sdk::PromptField::new("n", "a number")],
        })
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
    let hello = client
        .initialize(Some(curupira_protocol::HostInfo {
            name: Some("test".into()),
            version: Some("0".into()),
        }))
        .unwrap();
    assert_eq!(hello.version.as_deref(), Some("0.1.0"));
    let schema = client.schema("picky").unwrap();
    assert_eq!(schema.prompt_fields[0].key, "n");

    let mut arguments = Arguments::new();
    arguments.insert("max".into(), json!("many"));
    let err = fails(client.validate("picky", &arguments));
    assert_eq!(err.code, ErrorCode::CONFIGURATION_INVALID);
    assert!(err.message.contains("`max` must be an integer"), "{err}");
    assert!(!client.is_dead());

    // A trigger type the extension does not offer is the SDK's -32602.
    assert_eq!(
        fails(client.schema("other")).code,
        ErrorCode::INVALID_PARAMS
    );

    arguments.insert("max".into(), json!(3));
    client.validate("picky", &arguments).unwrap();
    let item = client.poll("picky", &arguments).unwrap().unwrap();
    assert_eq!(item, [Pair::new("n", "1")]);
    client.on_started("picky", &item).unwrap();
    client.on_finished("picky", &item).unwrap();
    assert_eq!(client.poll("picky", &arguments), Ok(None));
    assert_eq!(
        client.shutdown(),
        Ok(Ending::Exited("closed its end".to_owned()))
    );
    assert!(server.join().unwrap().is_ok());
}
