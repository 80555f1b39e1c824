//! The examples of the JSON-RPC 2.0 specification (section 7, "Examples"), written out
//! from the specification's text. Each one is fed to a small server built on this
//! crate's API (the way an extension uses it), and the reply is compared as JSON with
//! the specification's expected reply. Where the specification shows its generic
//! messages ("Invalid Request"), the expected value carries ours instead: the codes and
//! ids are the specification's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_jsonrpc::{
    ErrorCode, Incoming, Message, ParseFailure, Request, Response, parse, parse_message,
};
use serde_json::{Value, json};

/// What a receiver of requests does with one frame body: the reply to send, if any.
fn serve(body: &str) -> Option<Value> {
    let reply = |message: Result<Message, ParseFailure>| match message {
        Ok(Message::Request(request)) => Some(call(request)),
        Ok(Message::Notification(_) | Message::Response(_)) => None,
        Err(failure) => Some(failure.into_reply()),
    };
    match parse(body.as_bytes()) {
        Ok(Incoming::Single(message)) => reply(Ok(message)).map(to_json),
        Err(failure) => reply(Err(failure)).map(to_json),
        Ok(Incoming::Batch(elements)) => {
            let replies: Vec<Value> = elements
                .into_iter()
                .filter_map(reply)
                .map(to_json)
                .collect();
            // A batch of notifications gets no reply at all, not an empty array.
            (!replies.is_empty()).then_some(Value::Array(replies))
        }
    }
}

fn to_json(response: Response) -> Value {
    serde_json::from_slice(&Message::from(response).to_vec()).unwrap()
}

/// The methods the specification's examples call.
fn call(request: Request) -> Response {
    let params = request.params.map(Value::from);
    let number = |value: &Value| value.as_i64().unwrap();
    match (request.method.as_str(), params) {
        ("subtract", Some(Value::Array(args))) => {
            Response::ok(request.id, json!(number(&args[0]) - number(&args[1])))
        }
        ("subtract", Some(Value::Object(args))) => Response::ok(
            request.id,
            json!(number(&args["minuend"]) - number(&args["subtrahend"])),
        ),
        ("sum", Some(Value::Array(args))) => {
            Response::ok(request.id, json!(args.iter().map(number).sum::<i64>()))
        }
        ("get_data", None) => Response::ok(request.id, json!(["hello", 5])),
        (method, _) => Response::method_not_found(request.id, method),
    }
}

#[test]
fn call_with_positional_parameters() {
    assert_eq!(
        serve(r#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#),
        Some(json!({"jsonrpc": "2.0", "result": 19, "id": 1}))
    );
    assert_eq!(
        serve(r#"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#),
        Some(json!({"jsonrpc": "2.0", "result": -19, "id": 2}))
    );
}

#[test]
fn call_with_named_parameters() {
    assert_eq!(
        serve(
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#
        ),
        Some(json!({"jsonrpc": "2.0", "result": 19, "id": 3}))
    );
    assert_eq!(
        serve(
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#
        ),
        Some(json!({"jsonrpc": "2.0", "result": 19, "id": 4}))
    );
}

#[test]
fn notifications_get_no_reply() {
    let body = r#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#;
    let Message::Notification(notification) = parse_message(body.as_bytes()).unwrap() else {
        panic!("expected a notification");
    };
    assert_eq!(notification.method, "update");
    assert_eq!(
        notification.params.map(Value::from),
        Some(json!([1, 2, 3, 4, 5]))
    );
    assert_eq!(serve(body), None);
    assert_eq!(serve(r#"{"jsonrpc": "2.0", "method": "foobar"}"#), None);
}

#[test]
fn call_of_a_non_existent_method() {
    assert_eq!(
        serve(r#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#),
        Some(json!({
            "jsonrpc": "2.0",
            "error": {"code": -32601, "message": "method \"foobar\" not found"},
            "id": "1"
        }))
    );
}

/// The -32700 message carries serde_json's description of where the JSON broke; the
/// test pins our part of it and the position, not serde_json's wording.
fn assert_parse_error_reply(reply: Option<Value>, position: &str) {
    let reply = reply.unwrap();
    let message = reply["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.starts_with("body is not valid JSON: "), "{message}");
    assert!(message.ends_with(position), "{message}");
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": message}, "id": null})
    );
}

#[test]
fn call_with_invalid_json() {
    let body = r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#;
    let failure = parse(body.as_bytes()).unwrap_err();
    assert_eq!(failure.code(), ErrorCode::PARSE_ERROR);
    assert_parse_error_reply(serve(body), "at line 1 column 40");
}

#[test]
fn call_with_an_invalid_request_object() {
    assert_eq!(
        serve(r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#),
        Some(json!({
            "jsonrpc": "2.0",
            "error": {"code": -32600, "message": "member `method` must be a string, found 1"},
            "id": null
        }))
    );
}

#[test]
fn batch_with_invalid_json() {
    let body = r#"[
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
]"#;
    assert_parse_error_reply(serve(body), "at line 4 column 1");
}

#[test]
fn batch_that_is_an_empty_array() {
    let failure = parse(b"[]").unwrap_err();
    assert_eq!(failure.code(), ErrorCode::INVALID_REQUEST);
    assert_eq!(
        serve("[]"),
        Some(json!({
            "jsonrpc": "2.0",
            "error": {"code": -32600, "message": "a batch must not be an empty array"},
            "id": null
        }))
    );
}

fn not_an_object(found: u32) -> Value {
    json!({
        "jsonrpc": "2.0",
        "error": {
            "code": -32600,
            "message": format!("a batch element must be a JSON object, found {found}")
        },
        "id": null
    })
}

#[test]
fn invalid_batch_that_is_not_empty() {
    let Incoming::Batch(elements) = parse(b"[1]").unwrap() else {
        panic!("expected a batch");
    };
    assert_eq!(elements.len(), 1);
    assert_eq!(serve("[1]"), Some(json!([not_an_object(1)])));
}

#[test]
fn invalid_batch_gives_one_error_per_element() {
    assert_eq!(
        serve("[1,2,3]"),
        Some(json!([
            not_an_object(1),
            not_an_object(2),
            not_an_object(3)
        ]))
    );
}

#[test]
fn mixed_batch() {
    let body = r#"[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]"#;
    let Incoming::Batch(elements) = parse(body.as_bytes()).unwrap() else {
        panic!("expected a batch");
    };
    let kinds: Vec<&str> = elements
        .iter()
        .map(|element| match element {
            Ok(Message::Request(_)) => "request",
            Ok(Message::Notification(_)) => "notification",
            Ok(Message::Response(_)) => "response",
            Err(_) => "invalid",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "request",
            "notification",
            "request",
            "invalid",
            "request",
            "request"
        ]
    );
    assert_eq!(
        serve(body),
        Some(json!([
            {"jsonrpc": "2.0", "result": 7, "id": "1"},
            {"jsonrpc": "2.0", "result": 19, "id": "2"},
            {"jsonrpc": "2.0", "error": {
                "code": -32600,
                "message": "member `jsonrpc` is missing, it must be the string \"2.0\""
            }, "id": null},
            {"jsonrpc": "2.0", "error": {
                "code": -32601, "message": "method \"foo.get\" not found"
            }, "id": "5"},
            {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}
        ]))
    );
}

#[test]
fn batch_of_notifications_gets_nothing_back() {
    let body = r#"[
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ]"#;
    let Incoming::Batch(elements) = parse(body.as_bytes()).unwrap() else {
        panic!("expected a batch");
    };
    assert!(
        elements
            .iter()
            .all(|element| matches!(element, Ok(Message::Notification(_))))
    );
    assert_eq!(serve(body), None);
}

#[test]
fn single_message_parsing_refuses_batches() {
    let failure = parse_message(br#"[{"jsonrpc":"2.0","method":"a"}]"#).unwrap_err();
    assert_eq!(failure.code(), ErrorCode::INVALID_REQUEST);
    assert_eq!(
        failure.message(),
        "expected a single message, found a batch of 1 element (batches are not accepted here)"
    );
}
