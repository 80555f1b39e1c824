//! Property tests: every message this crate can build is written as a valid JSON-RPC
//! 2.0 message and reads back equal; arbitrary input never panics and fails only with
//! -32700 or -32600.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_jsonrpc::{
    ErrorCode, ErrorObject, Id, Incoming, Message, Notification, Params, Request, Response, parse,
    parse_message,
};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn id() -> impl Strategy<Value = Id> {
    prop_oneof![
        any::<i64>().prop_map(Id::from),
        any::<u64>().prop_map(Id::from),
        ".{0,10}".prop_map(Id::from),
        Just(Id::Null),
    ]
}

fn params() -> impl Strategy<Value = Option<Params>> {
    prop::option::of(prop_oneof![
        prop::collection::vec(json_value(), 0..4).prop_map(Params::Array),
        prop::collection::btree_map(".{0,6}", json_value(), 0..4)
            .prop_map(|map| Params::Object(map.into_iter().collect::<Map<_, _>>())),
    ])
}

fn error_object() -> impl Strategy<Value = ErrorObject> {
    (
        prop_oneof![
            prop::sample::select(ErrorCode::NAMED.to_vec()),
            any::<i64>().prop_map(ErrorCode::new),
        ],
        ".{0,20}",
        prop::option::of(json_value()),
    )
        .prop_map(|(code, message, data)| ErrorObject {
            code,
            message,
            data,
        })
}

fn message() -> impl Strategy<Value = Message> {
    let method = "[a-z/]{1,12}|.{0,8}";
    prop_oneof![
        (id(), method, params())
            .prop_map(|(id, method, params)| Message::from(Request::new(id, method, params))),
        (method, params())
            .prop_map(|(method, params)| Message::from(Notification::new(method, params))),
        (id(), json_value()).prop_map(|(id, result)| Message::from(Response::ok(id, result))),
        (id(), error_object()).prop_map(|(id, error)| Message::from(Response::err(id, error))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn written_messages_read_back_equal(message in message()) {
        let bytes = message.to_vec();
        prop_assert_eq!(parse_message(&bytes), Ok(message.clone()));
        prop_assert_eq!(message.to_string().into_bytes(), bytes);
    }

    #[test]
    fn written_messages_have_the_protocol_shape(message in message()) {
        let Value::Object(members) = serde_json::from_slice(&message.to_vec()).unwrap() else {
            panic!("a message is written as an object");
        };
        prop_assert_eq!(members.get("jsonrpc"), Some(&Value::from("2.0")));
        let has = |name: &str| members.contains_key(name);
        match &message {
            Message::Request(_) => prop_assert!(has("id") && has("method")),
            Message::Notification(_) => prop_assert!(!has("id") && has("method")),
            Message::Response(_) => {
                prop_assert!(has("id") && !has("method"));
                prop_assert!(has("result") != has("error"));
            }
        }
    }

    #[test]
    fn batches_read_back_element_by_element(messages in prop::collection::vec(message(), 1..5)) {
        let bytes = serde_json::to_vec(&messages).unwrap();
        let expected = messages.into_iter().map(Ok).collect();
        prop_assert_eq!(parse(&bytes), Ok(Incoming::Batch(expected)));
    }

    #[test]
    fn arbitrary_bytes_fail_with_a_protocol_code(body in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Err(failure) = parse(&body) {
            prop_assert!(
                [ErrorCode::PARSE_ERROR, ErrorCode::INVALID_REQUEST].contains(&failure.code())
            );
            prop_assert!(!failure.message().is_empty());
        }
    }

    #[test]
    fn arbitrary_json_is_never_a_parse_error(value in json_value()) {
        let body = serde_json::to_vec(&value).unwrap();
        match parse(&body) {
            Ok(_) => {}
            Err(failure) => prop_assert_eq!(failure.code(), ErrorCode::INVALID_REQUEST),
        }
    }

    #[test]
    fn a_valid_id_is_recovered_into_the_failure(id in id(), version in "[0-9.]{0,4}") {
        prop_assume!(version != "2.0");
        let body = serde_json::to_vec(&serde_json::json!({
            "jsonrpc": version, "id": id, "method": "m"
        })).unwrap();
        let failure = parse_message(&body).unwrap_err();
        prop_assert_eq!(failure.id(), &id);
        prop_assert_eq!(failure.reply().id, id);
    }
}
