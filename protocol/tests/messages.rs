//! Every rule of the params and results, with the exact sentence it produces.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_protocol::method::{self, Method};
use curupira_protocol::{
    Ack, CORE_KEYS, Configuration, DescribeResult, HostCapabilities, InitializeParams,
    InitializeResult, ItemProblem, NoParams, Pair, PeerInfo, PollParams, PollResult,
    ProtocolVersion, RESERVED_KEYS, SchemaParams, TaskParams, TriggerDescription, TriggerSchema,
    ValidateParams, ValidateResult, ValidationError, Wire, is_core_key, local_trigger_type,
    parameters, rejection_message, to_json, validation_errors,
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

/// Ours: `rejected` beside `values`, a count; `capabilities` in `initialize`, read
/// with unknown members ignored and written only when something is announced.
#[test]
fn a_poll_results_rejected_count_and_the_capabilities_that_ask_for_it() {
    let read = PollResult::read(Some(&json!({"values": null, "rejected": 3}))).unwrap();
    assert_eq!((read.values, read.rejected), (None, Some(3)));
    let read = PollResult::read(Some(&json!({"values": [], "rejected": null}))).unwrap();
    assert_eq!(read.rejected, None);
    assert_eq!(
        err::<PollResult>(json!({"values": null, "rejected": -1})),
        "`/rejected` must be a non-negative integer, found -1"
    );
    let written = to_json(&PollResult {
        values: None,
        rejected: None,
    })
    .unwrap();
    assert_eq!(written, json!({"values": null}), "nothing extra by default");

    let params = InitializeParams::read(Some(&json!({
        "protocol_version": 2, "capabilities": {"poll_rejected": true, "later": {}}
    })))
    .unwrap();
    assert!(params.capabilities.poll_rejected);
    assert_eq!(params.capabilities, HostCapabilities::ALL);
    let plain = InitializeParams::read(Some(&json!({"protocol_version": 2}))).unwrap();
    assert!(
        plain.capabilities.is_none(),
        "the reference host announces nothing"
    );
    assert_eq!(
        err::<InitializeParams>(json!({"protocol_version": 2, "capabilities": []})),
        "`/capabilities` must be an object like {\"poll_rejected\": true}, found an array"
    );
    assert_eq!(
        err::<InitializeParams>(
            json!({"protocol_version": 2, "capabilities": {"poll_rejected": "yes"}})
        ),
        "`/capabilities/poll_rejected` must be a boolean, found \"yes\""
    );
    let announced = to_json(&InitializeParams {
        capabilities: HostCapabilities::ALL,
        ..plain
    })
    .unwrap();
    assert_eq!(
        announced,
        json!({"protocol_version": 2, "capabilities": {"poll_rejected": true}})
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
        err::<InitializeParams>(json!({"client_info": {"name": "h", "version": "1"}})),
        "member `/protocol_version` is required"
    );
    assert_eq!(
        err::<InitializeParams>(json!({"protocol_version": "two"})),
        "`/protocol_version`: \"two\" is not a protocol version: write a non-negative integer \
         such as 2, or a string `MAJOR` or `MAJOR.MINOR` such as \"2.1\""
    );
    assert!(err::<InitializeParams>(json!({"protocol_version": "3.0.1"})).contains("\"3.0.1\""));
    assert_eq!(
        err::<InitializeParams>(
            json!({"protocol_version": 2, "client_info": {"name": 1, "version": "1"}})
        ),
        "`/client_info/name` must be a string, found 1"
    );
    assert_eq!(
        err::<InitializeParams>(json!({"protocol_version": 2, "client_info": {"name": "h"}})),
        "member `/client_info/version` is required"
    );
    assert_eq!(
        err::<InitializeParams>(json!({"protocol_version": 2, "client_info": []})),
        "`/client_info` must be an object with the strings `name` and `version`, found an array"
    );
    assert!(
        InitializeParams::read(None)
            .unwrap_err()
            .to_string()
            .starts_with("the params are missing; expected an object like")
    );
    let params = InitializeParams::read(Some(&json!({"protocol_version": "2.1"}))).unwrap();
    assert_eq!(params.protocol_version, ProtocolVersion::new(2, Some(1)));
    assert_eq!(params.client_info, None);
    // This project's earlier hosts sent `host`: an unknown member, ignored.
    let params = InitializeParams::read(Some(&json!({
        "protocol_version": 2, "host": {"name": "curupira", "version": "0.1.0"}
    })))
    .unwrap();
    assert_eq!(params.client_info, None);
    let params = InitializeParams::read(Some(&json!({
        "client_info": {"name": "curupira", "version": "0.4.0"}, "protocol_version": 2
    })))
    .unwrap();
    assert_eq!(params.client_info, Some(PeerInfo::new("curupira", "0.4.0")));
}

#[test]
fn initialize_results_need_server_info_but_are_not_judged() {
    let result = InitializeResult::read(Some(&json!({
        "protocol_version": 3, "server_info": {"name": "x", "version": "9"}
    })))
    .unwrap();
    assert_eq!(result.protocol_version, ProtocolVersion::new(3, None));
    assert!(!result.protocol_version.is_compatible());
    assert_eq!(result.server_info, PeerInfo::new("x", "9"));
    assert_eq!(
        err::<InitializeResult>(json!("2")),
        "the result must be an object with `protocol_version` and `server_info`, found \"2\""
    );
    assert_eq!(
        err::<InitializeResult>(json!({"server_info": {"name": "x", "version": "1"}})),
        "member `/protocol_version` is required"
    );
    // The reference host: "missing field `server_info`".
    assert_eq!(
        err::<InitializeResult>(json!({"protocol_version": 2, "name": "x", "version": "1"})),
        "member `/server_info` is required"
    );
    assert_eq!(
        err::<InitializeResult>(json!({"protocol_version": 2, "server_info": {"name": "x"}})),
        "member `/server_info/version` is required"
    );
    assert_eq!(
        err::<InitializeResult>(
            json!({"protocol_version": 2, "server_info": {"name": "x", "version": null}})
        ),
        "`/server_info/version` must be a string, found null"
    );
}

#[test]
fn describe_and_schema_results() {
    let described = DescribeResult::read(Some(&json!({"triggers": [
        {"trigger_type": "a", "prompt_fields": ["id", "title"], "description": "A.", "extra": true},
        {"trigger_type": "b", "type": "b"}
    ], "agents": [{"name": "x"}]})))
    .unwrap();
    let triggers = &described.triggers;
    assert_eq!(
        triggers[0],
        TriggerDescription::new("a", ["id", "title"]).with_description("A.")
    );
    assert_eq!(triggers[1], TriggerDescription::new("b", [""; 0]));
    assert_eq!(described.agents, [json!({"name": "x"})]);
    // The reference host: "missing field `trigger_type`".
    assert_eq!(
        err::<DescribeResult>(json!({"triggers": [{"type": "items"}]})),
        "member `/triggers/0/trigger_type` is required"
    );
    assert_eq!(
        err::<DescribeResult>(json!({"triggers": [{"trigger_type": ""}]})),
        "`/triggers/0/trigger_type` must not be empty"
    );
    // The reference host: "invalid type: map, expected a string".
    assert_eq!(
        err::<DescribeResult>(
            json!({"triggers": [{"trigger_type": "items", "prompt_fields": [{"key": "title"}]}]})
        ),
        "`/triggers/0/prompt_fields/0` must be a string, found an object"
    );
    assert_eq!(
        err::<DescribeResult>(json!({"trigger": []})),
        "member `/triggers` is required"
    );
    assert_eq!(
        err::<DescribeResult>(json!({"triggers": {}})),
        "`/triggers` must be an array of {\"trigger_type\", \"prompt_fields\"} objects, found \
         an object"
    );
    assert_eq!(
        err::<DescribeResult>(json!({"triggers": [], "agents": {}})),
        "`/agents` must be an array, found an object"
    );

    let schema = TriggerSchema::read(Some(&json!({"schema": true}))).unwrap();
    assert!(schema.prompt_fields.is_empty());
    let schema =
        TriggerSchema::read(Some(&json!({"schema": {}, "prompt_fields": ["id", ""]}))).unwrap();
    assert_eq!(schema.prompt_fields, ["id", ""]);
    assert_eq!(
        err::<TriggerSchema>(json!({"schema": "x"})),
        "`/schema` must be a JSON Schema (an object or a boolean), found \"x\""
    );
    assert_eq!(
        err::<TriggerSchema>(json!({})),
        "member `/schema` is required"
    );
    assert_eq!(
        err::<TriggerSchema>(json!({"schema": {}, "prompt_fields": [{"key": "title"}]})),
        "`/prompt_fields/0` must be a string, found an object"
    );
    assert_eq!(
        err::<TriggerSchema>(json!({"schema": {}, "prompt_fields": "id"})),
        "`/prompt_fields` must be an array of strings (the keys items carry), found \"id\""
    );
}

#[test]
fn validate_results_are_verdicts() {
    let read = |value: Value| ValidateResult::read(Some(&value)).unwrap();
    assert_eq!(
        read(json!({"ok": false, "error": "n must be below 10"})),
        ValidateResult::Rejected {
            error: Some("n must be below 10".into()),
            errors: Vec::new(),
        }
    );
    assert_eq!(
        read(json!({"ok": false})),
        ValidateResult::Rejected {
            error: None,
            errors: Vec::new(),
        }
    );
    assert_eq!(
        read(json!({"ok": true})),
        ValidateResult::Accepted {
            configuration: None
        }
    );
    let table = json!({"n": 3, "trigger_type": "shape/items"});
    assert_eq!(
        read(json!({"ok": true, "configuration": table})),
        ValidateResult::Accepted {
            configuration: table.as_object().cloned()
        }
    );
    // The reference host: "missing field `ok`" and "missing result".
    assert_eq!(err::<ValidateResult>(json!({})), "member `/ok` is required");
    assert_eq!(
        err::<ValidateResult>(Value::Null),
        "the result must be an object like {\"ok\": true} or {\"ok\": false, \"error\": \"…\"}, \
         found null"
    );
    assert_eq!(
        err::<ValidateResult>(json!({"ok": "true"})),
        "`/ok` must be a boolean, found \"true\""
    );
    assert_eq!(
        err::<ValidateResult>(json!({"ok": false, "error": 1})),
        "`/error` must be a string, found 1"
    );
    assert_eq!(
        err::<ValidateResult>(json!({"ok": true, "configuration": []})),
        "`/configuration` must be an object, found an array"
    );
}

#[test]
fn trigger_params_are_read_strictly() {
    assert_eq!(
        err::<SchemaParams>(json!({"trigger_type": 1})),
        "`/trigger_type` must be a string, found 1"
    );
    assert_eq!(
        err::<ValidateParams>(json!({"configuration": {}})),
        "member `/trigger_type` is required"
    );
    assert_eq!(
        err::<ValidateParams>(json!({"trigger_type": "t", "configuration": []})),
        "`/configuration` must be an object, found an array"
    );
    assert_eq!(
        err::<ValidateParams>(json!([1])),
        "the params must be an object with `trigger_type` and `configuration`, found an array"
    );
    // An absent `configuration` is empty (the official SDK then reports the missing
    // parameters), and so is `arguments`, which it does not read.
    let params = ValidateParams::read(Some(
        &json!({"trigger_type": "t", "arguments": {"path": "x"}}),
    ))
    .unwrap();
    assert!(params.configuration.is_empty());
    assert_eq!(
        err::<PollParams>(json!({"trigger_type": "t", "automation": 1})),
        "`/automation` must be an object, found 1"
    );
    assert_eq!(
        err::<PollParams>(json!({"trigger_type": "t", "limit": -1})),
        "`/limit` must be a non-negative integer, found -1"
    );
    assert_eq!(
        err::<PollParams>(json!({"trigger_type": "t", "preview": "yes"})),
        "`/preview` must be a boolean, found \"yes\""
    );
    assert_eq!(
        PollParams::read(Some(&json!({"trigger_type": "t"}))).unwrap(),
        PollParams {
            trigger_type: "t".into(),
            automation: Configuration::new(),
            limit: None,
            preview: false,
        }
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
        "the params must be absent, null or an object, found an array"
    );
    assert!(NoParams::read(None).is_ok());
    assert!(NoParams::read(Some(&Value::Null)).is_ok());
    assert!(NoParams::read(Some(&json!({"ignored": 1}))).is_ok());
}

#[test]
fn what_is_written_reads_back() {
    let params = InitializeParams {
        protocol_version: ProtocolVersion::CURRENT,
        client_info: Some(PeerInfo::new("curupira", "0.1.0")),
        capabilities: HostCapabilities::default(),
    };
    let written = to_json(&params).unwrap();
    assert_eq!(
        written,
        json!({"protocol_version": 2, "client_info": {"name": "curupira", "version": "0.1.0"}})
    );
    assert_eq!(InitializeParams::read(Some(&written)).unwrap(), params);
    let result = InitializeResult {
        protocol_version: ProtocolVersion::CURRENT,
        server_info: PeerInfo::new("rec-ext", "0.1.0"),
    };
    let written = to_json(&result).unwrap();
    assert_eq!(
        written,
        json!({"protocol_version": 2, "server_info": {"name": "rec-ext", "version": "0.1.0"}})
    );
    assert_eq!(InitializeResult::read(Some(&written)).unwrap(), result);

    let described = DescribeResult {
        triggers: vec![TriggerDescription::new(
            "list-entries",
            ["id", "title", "body"],
        )],
        agents: Vec::new(),
    };
    let written = to_json(&described).unwrap();
    assert_eq!(
        written,
        json!({"triggers": [{"trigger_type": "list-entries", "prompt_fields": ["id", "title", "body"]}], "agents": []})
    );
    assert_eq!(DescribeResult::read(Some(&written)).unwrap(), described);

    let mut configuration = Configuration::new();
    configuration.insert("path".into(), json!("entries.json"));
    configuration.insert("trigger_type".into(), json!("rec/list-entries"));
    let validate = ValidateParams {
        trigger_type: "list-entries".into(),
        configuration: configuration.clone(),
    };
    let written = to_json(&validate).unwrap();
    assert_eq!(
        written,
        json!({"trigger_type": "list-entries", "configuration": {"path": "entries.json", "trigger_type": "rec/list-entries"}})
    );
    assert_eq!(ValidateParams::read(Some(&written)).unwrap(), validate);
    for verdict in [
        ValidateResult::Accepted {
            configuration: Some(configuration.clone()),
        },
        ValidateResult::Accepted {
            configuration: None,
        },
        ValidateResult::Rejected {
            error: Some("no".into()),
            errors: Vec::new(),
        },
        ValidateResult::Rejected {
            error: None,
            errors: Vec::new(),
        },
    ] {
        let written = to_json(&verdict).unwrap();
        assert_eq!(ValidateResult::read(Some(&written)).unwrap(), verdict);
    }
    assert_eq!(
        to_json(&ValidateResult::Rejected {
            error: None,
            errors: Vec::new(),
        })
        .unwrap(),
        json!({"ok": false})
    );

    let poll = PollParams {
        trigger_type: "list-entries".into(),
        automation: configuration,
        limit: Some(100),
        preview: true,
    };
    let written = to_json(&poll).unwrap();
    assert_eq!(
        written,
        json!({"trigger_type": "list-entries", "automation": {"path": "entries.json", "trigger_type": "rec/list-entries"}, "limit": 100, "preview": true})
    );
    assert_eq!(PollParams::read(Some(&written)).unwrap(), poll);

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
    // `describe` and `shutdown` params are written as `null`: the client sends them
    // as no `params` member.
    assert_eq!(to_json(&NoParams).unwrap(), Value::Null);
    assert_eq!(to_json(&Ack).unwrap(), json!({}));
}

#[test]
fn core_keys_and_local_names() {
    assert_eq!(
        CORE_KEYS,
        [
            "trigger_type",
            "repository",
            "prompt",
            "profile",
            "checkout"
        ]
    );
    let table = json!({
        "trigger_type": "rec/list-entries", "repository": "demo", "prompt": "p",
        "profile": "stub", "checkout": "main", "path": "x", "limit_total": 3
    });
    let parameters = parameters(table.as_object().unwrap());
    assert_eq!(
        Value::Object(parameters),
        json!({"path": "x", "limit_total": 3})
    );
    assert!(is_core_key("prompt"));
    assert!(!is_core_key("path"));
    assert_eq!(local_trigger_type("rec/list-entries"), "list-entries");
    assert_eq!(local_trigger_type("list-entries"), "list-entries");
    assert_eq!(local_trigger_type("a/b/c"), "c");
    assert_eq!(local_trigger_type(""), "");
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
