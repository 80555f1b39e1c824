//! One test per classification rule: start from a valid message, change one member,
//! and check the code, the recovered id and the sentence.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_jsonrpc::{
    ErrorCode, ErrorObject, Id, Incoming, Message, Notification, Params, Request, Response, parse,
    parse_message,
};
use serde_json::{Map, Value, json};

fn valid_request() -> Map<String, Value> {
    let Value::Object(map) = json!({
        "jsonrpc": "2.0", "id": 7, "method": "trigger/poll", "params": {"trigger_type": "t"}
    }) else {
        unreachable!()
    };
    map
}

fn valid_response() -> Map<String, Value> {
    let Value::Object(map) = json!({"jsonrpc": "2.0", "id": 7, "result": {"values": null}}) else {
        unreachable!()
    };
    map
}

/// `base` with each named member set to `Some(value)` or removed (`None`).
fn with(mut base: Map<String, Value>, changes: &[(&str, Option<Value>)]) -> Vec<u8> {
    for (name, value) in changes {
        match value {
            Some(value) => base.insert((*name).to_owned(), value.clone()),
            None => base.remove(*name),
        };
    }
    serde_json::to_vec(&base).unwrap()
}

fn assert_invalid(body: &[u8], id: Id, message: &str) {
    let failure = parse_message(body).unwrap_err();
    let text = String::from_utf8_lossy(body);
    assert_eq!(failure.code(), ErrorCode::INVALID_REQUEST, "{text}");
    assert_eq!(failure.id(), &id, "{text}");
    assert_eq!(failure.message(), message, "{text}");
    assert_eq!(
        failure.to_string(),
        format!("invalid request (-32600): {message}")
    );
    let reply = serde_json::to_value(Message::from(failure.reply())).unwrap();
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": message}})
    );
}

fn assert_parse_error(body: &[u8], message: &str) {
    let failure = parse(body).unwrap_err();
    assert_eq!(failure.code(), ErrorCode::PARSE_ERROR);
    assert_eq!(failure.id(), &Id::Null);
    assert_eq!(failure.message(), message);
    assert_eq!(
        failure.into_reply(),
        Response::parse_error(message),
        "a -32700 reply always has a null id"
    );
}

#[test]
fn valid_request_and_response_parse() {
    assert_eq!(
        parse_message(&with(valid_request(), &[])).unwrap(),
        Message::Request(Request::new(
            7,
            "trigger/poll",
            Some(Params::try_from(json!({"trigger_type": "t"})).unwrap())
        ))
    );
    assert_eq!(
        parse_message(&with(valid_response(), &[])).unwrap(),
        Message::Response(Response::ok(7, json!({"values": null})))
    );
}

#[test]
fn null_id_with_method_is_a_request_not_a_notification() {
    let message = parse_message(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap();
    assert_eq!(message, Message::Request(Request::new(Id::Null, "x", None)));
}

#[test]
fn method_without_id_is_a_notification() {
    let message = parse_message(&with(valid_request(), &[("id", None)])).unwrap();
    let Message::Notification(Notification { method, params }) = message else {
        panic!("expected a notification");
    };
    assert_eq!(method, "trigger/poll");
    assert!(params.is_some());
}

#[test]
fn jsonrpc_must_be_exactly_2_0() {
    let expected =
        |found: &str| format!("member `jsonrpc` must be the string \"2.0\", found {found}");
    for (value, found) in [
        (json!("1.0"), "\"1.0\""),
        (json!("2.00"), "\"2.00\""),
        (json!(" 2.0"), "\" 2.0\""),
        (json!(2.0), "2.0"),
        (json!(2), "2"),
        (json!(null), "null"),
    ] {
        assert_invalid(
            &with(valid_request(), &[("jsonrpc", Some(value))]),
            Id::from(7),
            &expected(found),
        );
    }
    assert_invalid(
        &with(valid_request(), &[("jsonrpc", None)]),
        Id::from(7),
        "member `jsonrpc` is missing, it must be the string \"2.0\"",
    );
    assert_invalid(
        &with(valid_response(), &[("jsonrpc", Some(json!("1.0")))]),
        Id::from(7),
        &expected("\"1.0\""),
    );
}

#[test]
fn method_must_be_a_string() {
    for (value, found) in [
        (json!(1), "1"),
        (json!(null), "null"),
        (json!(["a"]), "an array"),
    ] {
        assert_invalid(
            &with(valid_request(), &[("method", Some(value))]),
            Id::from(7),
            &format!("member `method` must be a string, found {found}"),
        );
    }
}

#[test]
fn params_must_be_an_object_or_an_array() {
    for (value, found) in [
        (json!("bar"), "\"bar\""),
        (json!(5), "5"),
        (json!(true), "true"),
    ] {
        let message = format!("member `params` must be an object or an array, found {found}");
        assert_invalid(
            &with(valid_request(), &[("params", Some(value.clone()))]),
            Id::from(7),
            &message,
        );
        // Notifications follow the same rule; their failure has no id to carry.
        assert_invalid(
            &with(valid_request(), &[("params", Some(value)), ("id", None)]),
            Id::Null,
            &message,
        );
    }
    // `"params": null` is absent params: the reference Curupira host sends it with
    // `describe` and `shutdown`.
    for (id, kind) in [(Some(json!(7)), "request"), (None, "notification")] {
        let body = with(
            valid_request(),
            &[("params", Some(json!(null))), ("id", id)],
        );
        match parse_message(&body).unwrap() {
            Message::Request(Request { params: None, .. }) if kind == "request" => {}
            Message::Notification(Notification { params: None, .. }) if kind == "notification" => {}
            other => panic!("{kind}: {other:?}"),
        }
    }
    for value in [json!([]), json!({})] {
        let message = parse_message(&with(valid_request(), &[("params", Some(value))])).unwrap();
        assert!(matches!(
            message,
            Message::Request(Request {
                params: Some(_),
                ..
            })
        ));
    }
}

#[test]
fn ids_must_be_integers_strings_or_null() {
    let expected =
        |found: &str| format!("member `id` must be an integer, a string or null, found {found}");
    for (text, found) in [
        ("1.5", "1.5"),
        ("1.0", "1.0"),
        ("1e3", "1000.0"),
        ("-0.0", "-0.0"),
        // JSON's grammar calls `-0` an integer, but it only has a floating-point value.
        ("-0", "-0.0"),
        ("18446744073709551616", "1.8446744073709552e+19"),
        ("true", "true"),
        ("[1]", "an array"),
        ("{\"a\":1}", "an object"),
    ] {
        let request = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"m"}}"#);
        assert_invalid(request.as_bytes(), Id::Null, &expected(found));
        let response = format!(r#"{{"jsonrpc":"2.0","id":{text},"result":1}}"#);
        assert_invalid(response.as_bytes(), Id::Null, &expected(found));
    }
}

#[test]
fn integer_ids_cover_the_i64_and_u64_ranges() {
    for (text, id, written) in [
        (
            "18446744073709551615",
            Id::from(u64::MAX),
            "18446744073709551615",
        ),
        (
            "9223372036854775808",
            Id::from(1u64 << 63),
            "9223372036854775808",
        ),
        (
            "-9223372036854775808",
            Id::from(i64::MIN),
            "-9223372036854775808",
        ),
        ("0", Id::from(0), "0"),
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"m"}}"#);
        let message = parse_message(body.as_bytes()).unwrap();
        assert_eq!(message.id(), Some(&id), "{body}");
        assert_eq!(
            message.to_string(),
            format!(r#"{{"jsonrpc":"2.0","id":{written},"method":"m"}}"#)
        );
    }
}

#[test]
fn string_and_integer_ids_stay_distinct() {
    let integer = parse_message(br#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap();
    let string = parse_message(br#"{"jsonrpc":"2.0","id":"1","result":null}"#).unwrap();
    assert_eq!(integer.id().unwrap().to_string(), "1");
    assert_eq!(string.id().unwrap().to_string(), "\"1\"");
    assert_ne!(integer, string);
}

#[test]
fn a_response_has_exactly_one_of_result_and_error() {
    assert_invalid(
        &with(
            valid_response(),
            &[("error", Some(json!({"code": 1, "message": "m"})))],
        ),
        Id::from(7),
        "a response must have exactly one of `result` and `error`, found both",
    );
    assert_invalid(
        &with(valid_response(), &[("result", None)]),
        Id::from(7),
        "a message must have `method` (request or notification) or one of `result` and `error` (response), found none of them",
    );
}

#[test]
fn a_response_needs_an_id_and_no_params() {
    assert_invalid(
        &with(valid_response(), &[("id", None)]),
        Id::Null,
        "a response must have an `id` member",
    );
    assert_invalid(
        &with(valid_response(), &[("params", Some(json!([])))]),
        Id::from(7),
        "a response (it has no `method`) must not have a `params` member",
    );
}

#[test]
fn a_request_has_no_result_or_error() {
    assert_invalid(
        &with(valid_request(), &[("result", Some(json!(1)))]),
        Id::from(7),
        "a request or notification (it has `method`) must not have a `result` member",
    );
    assert_invalid(
        &with(
            valid_request(),
            &[("error", Some(json!({"code": 1, "message": "m"})))],
        ),
        Id::from(7),
        "a request or notification (it has `method`) must not have a `error` member",
    );
}

#[test]
fn responses_with_a_null_id_are_accepted() {
    let success = parse_message(br#"{"jsonrpc":"2.0","id":null,"result":1}"#).unwrap();
    assert_eq!(success, Message::Response(Response::ok(Id::Null, json!(1))));
    let error =
        parse_message(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#)
            .unwrap();
    assert_eq!(error, Message::Response(Response::parse_error("bad")));
}

#[test]
fn error_objects_are_checked() {
    let cases = [
        (
            json!("boom"),
            "member `error` must be an object, found \"boom\"",
        ),
        (json!({"message": "m"}), "member `error.code` is missing"),
        (
            json!({"code": 1.5, "message": "m"}),
            "member `error.code` must be an integer, found 1.5",
        ),
        (
            json!({"code": "-32600", "message": "m"}),
            "member `error.code` must be an integer, found \"-32600\"",
        ),
        (
            json!({"code": u64::MAX, "message": "m"}),
            "member `error.code` must fit in a signed 64-bit integer, found 18446744073709551615",
        ),
        (json!({"code": 1}), "member `error.message` is missing"),
        (
            json!({"code": 1, "message": null}),
            "member `error.message` must be a string, found null",
        ),
    ];
    for (error, message) in cases {
        assert_invalid(
            &with(
                valid_response(),
                &[("result", None), ("error", Some(error))],
            ),
            Id::from(7),
            message,
        );
    }
}

#[test]
fn error_objects_keep_data_and_ignore_unknown_members() {
    let body = with(
        valid_response(),
        &[
            ("result", None),
            (
                "error",
                Some(json!({
                    "code": -32003, "message": "invalid arguments",
                    "data": {"errors": [{"path": "/repo", "message": "missing"}]},
                    "stack": "ignored"
                })),
            ),
        ],
    );
    let Message::Response(response) = parse_message(&body).unwrap() else {
        panic!("expected a response");
    };
    let error = response.into_result().unwrap_err();
    assert_eq!(
        error.0,
        ErrorObject::new(ErrorCode::CONFIGURATION_INVALID, "invalid arguments")
            .with_data(json!({"errors": [{"path": "/repo", "message": "missing"}]}))
    );
    assert_eq!(
        error.to_string(),
        "extension replied with error configuration validation failure (-32003): invalid arguments"
    );
}

#[test]
fn unknown_members_are_ignored() {
    let body = with(
        valid_request(),
        &[
            ("trace", Some(json!({"span": 1}))),
            ("Method", Some(json!(3))),
        ],
    );
    let message = parse_message(&body).unwrap();
    assert_eq!(message.method(), Some("trigger/poll"));
    // Unknown members are skipped, duplicates of them included.
    let message = parse_message(br#"{"x":1,"x":2,"jsonrpc":"2.0","method":"m","x":[}]"#.as_slice());
    assert_eq!(
        message.unwrap_err().code(),
        ErrorCode::PARSE_ERROR,
        "still JSON-checked"
    );
    let message = parse_message(br#"{"x":1,"x":2,"jsonrpc":"2.0","method":"m"}"#).unwrap();
    assert_eq!(message, Message::Notification(Notification::new("m", None)));
}

#[test]
fn repeated_protocol_members_are_refused() {
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
        Id::from(1),
        "member `method` appears more than once",
    );
    // Which of two ids the reply would carry is unknowable, so it carries null.
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}"#,
        Id::Null,
        "member `id` appears more than once",
    );
    // An escaped member name is the same name.
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"a"}"#,
        Id::Null,
        "member `id` appears more than once",
    );
}

#[test]
fn non_objects_are_invalid_requests() {
    for (body, found) in [
        ("5", "5"),
        ("\"hello\"", "\"hello\""),
        ("null", "null"),
        ("true", "true"),
    ] {
        assert_invalid(
            body.as_bytes(),
            Id::Null,
            &format!(
                "a message must be a JSON object (or a batch of them in an array), found {found}"
            ),
        );
    }
}

#[test]
fn bodies_that_are_not_utf8_are_parse_errors() {
    assert_parse_error(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
        "body is not valid UTF-8: byte 0xff at offset 27 cannot appear there",
    );
    assert_parse_error(
        b"\"\xc3",
        "body is not valid UTF-8: it ends inside a multi-byte character at offset 1",
    );
    // UTF-16 with a byte-order mark is not UTF-8 either.
    assert_parse_error(
        b"\xff\xfe{\x00}\x00",
        "body is not valid UTF-8: byte 0xff at offset 0 cannot appear there",
    );
}

#[test]
fn bodies_that_are_not_one_json_value_are_parse_errors() {
    assert_parse_error(b"", "body is empty, expected a JSON-RPC message");
    assert_parse_error(
        b"   ",
        "body is not valid JSON: EOF while parsing a value at line 1 column 3",
    );
    assert_parse_error(
        b"{} {}",
        "body is not valid JSON: trailing characters at line 1 column 4",
    );
    assert_parse_error(
        "\u{feff}{}".as_bytes(),
        "body is not valid JSON: expected value at line 1 column 1",
    );
    let deep = format!(
        r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let failure = parse(deep.as_bytes()).unwrap_err();
    assert_eq!(failure.code(), ErrorCode::PARSE_ERROR);
    assert!(
        failure.message().contains("recursion limit exceeded"),
        "{failure}"
    );
}

#[test]
fn batches_classify_each_element() {
    let body = br#"[
        {"jsonrpc":"2.0","id":1,"method":"a"},
        {"jsonrpc":"1.0","id":2,"method":"b"},
        [],
        {"jsonrpc":"2.0","id":3,"result":true}
    ]"#;
    let Incoming::Batch(elements) = parse(body).unwrap() else {
        panic!("expected a batch");
    };
    assert_eq!(elements.len(), 4);
    assert_eq!(
        elements[0],
        Ok(Message::Request(Request::new(1, "a", None)))
    );
    let second = elements[1].as_ref().unwrap_err();
    assert_eq!(
        (second.code(), second.id()),
        (ErrorCode::INVALID_REQUEST, &Id::from(2))
    );
    let third = elements[2].as_ref().unwrap_err();
    assert_eq!(
        third.message(),
        "a batch element must be a JSON object, found an array"
    );
    assert_eq!(
        elements[3],
        Ok(Message::Response(Response::ok(3, json!(true))))
    );
}

#[test]
fn serde_deserialize_applies_the_same_rules() {
    let message: Message =
        serde_json::from_str(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap();
    assert_eq!(message, Message::Request(Request::new(Id::Null, "x", None)));
    let from_value: Message =
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": "a", "result": [1]})).unwrap();
    assert_eq!(from_value, Message::Response(Response::ok("a", json!([1]))));
    let err =
        serde_json::from_str::<Message>(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("member `id` must be an integer, a string or null, found 1.5"),
        "{err}"
    );
    let err = serde_json::from_str::<Message>("[]").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("expected a single message, found a batch")
    );
    let error: ErrorObject = serde_json::from_str(r#"{"code":-32601,"message":"m"}"#).unwrap();
    assert_eq!(error, ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "m"));
}
