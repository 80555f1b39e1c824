//! Every rule of the params and results, with the exact sentence it produces.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_protocol::method::{self, Method};
use curupira_protocol::{
    ArgumentsParams, DescribeResult, InitializeParams, InitializeResult, ItemProblem, NoParams,
    Pair, PollResult, ProtocolVersion, RESERVED_KEYS, SchemaParams, TaskParams, TriggerSchema,
    ValidationError, Wire, rejection_message, to_json, validation_errors,
};
use serde_json::{Value, json};

fn err<T: Wire + std::fmt::Debug>(value: Value) -> String {
    T::read(Some(&value)).unwrap_err().to_string()
}

#[test]
fn poll_null_ends_and_an_empty_array_is_an_item() {
    assert_eq!(
        PollResult::read(Some(&json!({"values": null})))
            .unwrap()
            .values,
        None
    );
    assert_eq!(
        PollResult::read(Some(&json!({"values": []})))
            .unwrap()
            .values,
        Some(vec![])
    );
}

#[test]
fn poll_pairs_keep_their_order() {
    let result = PollResult::read(Some(&json!({"values": [
        {"key": "b", "value": "2"}, {"value": "1", "key": "a"}, {"key": "issue-number", "value": ""}
    ]})))
    .unwrap();
    assert_eq!(
        result.values.unwrap(),
        [
            Pair::new("b", "2"),
            Pair::new("a", "1"),
            Pair::new("issue-number", "")
        ]
    );
}

#[test]
fn poll_results_name_the_offending_member() {
    let cases = [
        (
            json!([]),
            "the result must be an object with a `values` member, found an array",
        ),
        (
            json!({}),
            "member `/values` is required (write `\"values\": null` when nothing was found)",
        ),
        (
            json!({"values": {}}),
            "`/values` must be null or an array of {\"key\", \"value\"} objects, found an object",
        ),
        (
            json!({"values": ["x"]}),
            "`/values/0` must be an object with string members `key` and `value`, found \"x\"",
        ),
        (
            json!({"values": [{"key": "a", "value": "1", "extra": 1}]}),
            "`/values/0` has an unknown member \"extra\"; a pair has only `key` and `value`",
        ),
        (
            json!({"values": [{"value": "1"}]}),
            "member `/values/0/key` is required",
        ),
        (
            json!({"values": [{"key": 1, "value": "1"}]}),
            "`/values/0/key` must be a string, found 1",
        ),
        (
            json!({"values": [{"key": "n"}]}),
            "member `/values/0/value` is required",
        ),
        (
            json!({"values": [{"key": "", "value": "1"}]}),
            "`/values/0` has an empty key; item keys are non-empty",
        ),
        (
            json!({"values": [{"key": "a", "value": "1"}, {"key": "a", "value": "2"}]}),
            "`/values/1` repeats the key \"a\"; a key appears once per item",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(err::<PollResult>(input), expected);
    }
    for bad in [json!(1), json!(true), json!(null), json!({}), json!([])] {
        let message = err::<PollResult>(json!({"values": [{"key": "n", "value": bad}]}));
        assert!(
            message.starts_with("`/values/0/value` must be a string, found"),
            "{message}"
        );
    }
    for reserved in RESERVED_KEYS {
        let error = PollResult::read(Some(&json!({"values": [{"key": reserved, "value": "x"}]})))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "`/values/0` has the key \"{reserved}\", which is reserved: the host provides \
                 `repository` and `automation` itself"
            )
        );
        assert!(matches!(
            error.problem,
            curupira_protocol::Problem::Item(ref item)
                if item.problem == ItemProblem::ReservedKey(reserved.to_owned())
        ));
    }
}

#[test]
fn initialize_params_need_a_version() {
    assert_eq!(
        err::<InitializeParams>(json!({"host": {"name": "h"}})),
        "member `/protocol_version` is required"
    );
    assert_eq!(
        err::<InitializeParams>(json!({"protocol_version": "two"})),
        "`/protocol_version`: \"two\" is not a protocol version: write a non-negative integer \
         such as 2, or a string `MAJOR` or `MAJOR.MINOR` such as \"2.1\""
    );
    assert!(err::<InitializeParams>(json!({"protocol_version": "3.0.1"})).contains("\"3.0.1\""));
    assert_eq!(
        err::<InitializeParams>(json!({"protocol_version": 2, "host": {"name": 1}})),
        "`/host/name` must be a string, found 1"
    );
    assert_eq!(
        err::<InitializeParams>(json!({"protocol_version": 2, "host": []})),
        "`/host` must be an object with the strings `name` and `version`, found an array"
    );
    assert!(
        InitializeParams::read(None)
            .unwrap_err()
            .to_string()
            .starts_with("the params are missing; expected an object like")
    );
    let params = InitializeParams::read(Some(&json!({"protocol_version": "2.1"}))).unwrap();
    assert_eq!(params.protocol_version, ProtocolVersion::new(2, Some(1)));
    assert_eq!(params.host, None);
}

#[test]
fn initialize_results_are_read_but_not_judged() {
    let result =
        InitializeResult::read(Some(&json!({"protocol_version": 3, "name": "x"}))).unwrap();
    assert_eq!(result.protocol_version, ProtocolVersion::new(3, None));
    assert!(!result.protocol_version.is_compatible());
    assert_eq!(
        err::<InitializeResult>(json!("2")),
        "the result must be an object with `protocol_version`, found \"2\""
    );
    assert_eq!(
        err::<InitializeResult>(json!({})),
        "member `/protocol_version` is required"
    );
    assert_eq!(
        err::<InitializeResult>(json!({"protocol_version": 2, "version": null})),
        "`/version` must be a string, found null"
    );
}

#[test]
fn describe_and_schema_results() {
    let triggers = DescribeResult::read(Some(&json!({"triggers": [
        {"type": "a", "description": "A.", "extra": true}, {"type": "b"}
    ]})))
    .unwrap()
    .triggers;
    assert_eq!(triggers.len(), 2);
    assert_eq!(triggers[1].description, None);
    assert_eq!(
        err::<DescribeResult>(json!({"triggers": [{"type": ""}]})),
        "`/triggers/0/type` must not be empty"
    );
    assert_eq!(
        err::<DescribeResult>(json!({"trigger": []})),
        "member `/triggers` is required"
    );
    assert_eq!(
        err::<DescribeResult>(json!({"triggers": {}})),
        "`/triggers` must be an array of {\"type\", \"description\"?} objects, found an object"
    );

    let schema = TriggerSchema::read(Some(&json!({"schema": true}))).unwrap();
    assert!(schema.prompt_fields.is_empty());
    assert_eq!(
        err::<TriggerSchema>(json!({"schema": "x"})),
        "`/schema` must be a JSON Schema (an object or a boolean), found \"x\""
    );
    assert_eq!(
        err::<TriggerSchema>(json!({})),
        "member `/schema` is required"
    );
    assert_eq!(
        err::<TriggerSchema>(json!({"schema": {}, "prompt_fields": [{"key": ""}]})),
        "`/prompt_fields/0/key` must not be empty"
    );
    assert_eq!(
        err::<TriggerSchema>(
            json!({"schema": {}, "prompt_fields": [{"key": "k", "description": 2}]})
        ),
        "`/prompt_fields/0/description` must be a string, found 2"
    );
}

#[test]
fn trigger_params_are_read_strictly() {
    assert_eq!(
        err::<SchemaParams>(json!({"trigger_type": 1})),
        "`/trigger_type` must be a string, found 1"
    );
    assert_eq!(
        err::<ArgumentsParams>(json!({"trigger_type": "t"})),
        "member `/arguments` is required"
    );
    assert_eq!(
        err::<ArgumentsParams>(json!({"trigger_type": "t", "arguments": []})),
        "`/arguments` must be an object, found an array"
    );
    assert_eq!(
        err::<ArgumentsParams>(json!([1])),
        "the params must be an object with `trigger_type` and `arguments`, found an array"
    );
    assert_eq!(
        err::<TaskParams>(json!({"trigger_type": "t"})),
        "member `/values` is required"
    );
    assert_eq!(
        err::<TaskParams>(json!({"trigger_type": "t", "values": [{"key": "a", "value": 5}]})),
        "`/values/0/value` must be a string, found 5"
    );
    assert_eq!(
        err::<NoParams>(json!([])),
        "the params must be absent or an object, found an array"
    );
    assert!(NoParams::read(None).is_ok());
}

#[test]
fn what_is_written_reads_back() {
    let params = InitializeParams {
        protocol_version: ProtocolVersion::CURRENT,
        host: Some(curupira_protocol::HostInfo {
            name: Some("curupira".into()),
            version: Some("0.1.0".into()),
        }),
    };
    let written = to_json(&params).unwrap();
    assert_eq!(
        written,
        json!({"protocol_version": 2, "host": {"name": "curupira", "version": "0.1.0"}})
    );
    assert_eq!(InitializeParams::read(Some(&written)).unwrap(), params);
    let task = TaskParams {
        trigger_type: "t".into(),
        values: vec![Pair::new("a", "1")],
    };
    let written = to_json(&task).unwrap();
    assert_eq!(
        written,
        json!({"trigger_type": "t", "values": [{"key": "a", "value": "1"}]})
    );
    assert_eq!(TaskParams::read(Some(&written)).unwrap(), task);
    assert_eq!(to_json(&NoParams).unwrap(), json!({}));
}

#[test]
fn method_names_are_the_protocol_table() {
    assert_eq!(
        method::ALL,
        [
            "initialize",
            "describe",
            "trigger/schema",
            "trigger/validate",
            "trigger/poll",
            "trigger/onStarted",
            "trigger/onFinished",
            "shutdown"
        ]
    );
    assert_eq!(method::OnFinished::NAME, "trigger/onFinished");
    assert!(method::requires_initialize("trigger/poll"));
    assert!(!method::requires_initialize("shutdown"));
    assert!(!method::requires_initialize("initialize"));
    assert!(!method::requires_initialize("bogus"));
}

#[test]
fn rejection_messages_list_each_error_once() {
    let data = json!({"errors": [
        {"path": "/path", "message": "`path` is required"},
        {"path": "", "message": "unknown member `x`"},
        {"message": "no path"},
        {"path": "/x"}
    ]});
    assert_eq!(
        validation_errors(Some(&data)),
        [
            ValidationError::new("/path", "`path` is required"),
            ValidationError::new("", "unknown member `x`"),
            ValidationError::new("", "no path"),
        ]
    );
    assert_eq!(
        rejection_message("the arguments do not fit", Some(&data)),
        "the arguments do not fit; /path: `path` is required; (root): unknown member `x`; \
         (root): no path"
    );
    assert_eq!(
        rejection_message(
            "1 problem: /path: `path` is required",
            Some(&json!({"errors": [{"path": "/path", "message": "`path` is required"}]}))
        ),
        "1 problem: /path: `path` is required"
    );
    assert_eq!(rejection_message("bad", None), "bad");
    assert_eq!(ValidationError::member("a/b~c", "m").path, "/a~1b~0c");
}
