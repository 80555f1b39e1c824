//! One test per reader rule of the ecosystem's shapes: a valid value (the official
//! SDK's reply, or the reference host's params), then one member changed.

#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::*;
use crate::method::{self, Method};

/// `value` with `pointer` (RFC 6901, parent must exist) set to `new`, or removed when
/// `new` is `None`.
fn with(mut value: Value, pointer: &str, new: Option<Value>) -> Value {
    let (parent, name) = pointer.rsplit_once('/').unwrap();
    let parent = value.pointer_mut(parent).unwrap();
    match (parent, new) {
        (Value::Object(map), Some(new)) => {
            map.insert(name.to_owned(), new);
        }
        (Value::Object(map), None) => {
            map.remove(name);
        }
        (Value::Array(items), Some(new)) => items[name.parse::<usize>().unwrap()] = new,
        (other, _) => panic!("cannot change {pointer} in {other}"),
    }
    value
}

/// The reader's refusal: its pointer and sentence.
fn refused<T: Wire + std::fmt::Debug>(value: &Value) -> (String, String) {
    let error = T::read(Some(value)).unwrap_err();
    (error.pointer.clone(), error.to_string())
}

fn initialize_result() -> Value {
    json!({"protocol_version": 2, "server_info": {"name": "rec-ext", "version": "0.1.0"}})
}

#[test]
fn initialize_result_needs_server_info() {
    let read = InitializeResult::read(Some(&initialize_result())).unwrap();
    assert_eq!(read.server_info, PeerInfo::new("rec-ext", "0.1.0"));
    // The reference host's own flat shape of earlier days: refused.
    let flat = json!({"protocol_version": 2, "name": "shape", "version": "0.0.1"});
    assert_eq!(
        refused::<InitializeResult>(&flat),
        (
            "/server_info".to_owned(),
            "member `/server_info` is required".to_owned()
        )
    );
    assert_eq!(
        refused::<InitializeResult>(&with(
            initialize_result(),
            "/server_info",
            Some(json!("rec-ext"))
        )),
        (
            "/server_info".to_owned(),
            "`/server_info` must be an object with the strings `name` and `version`, found \
             \"rec-ext\""
                .to_owned()
        )
    );
}

#[test]
fn server_info_members_are_required_strings() {
    for member in ["name", "version"] {
        let pointer = format!("/server_info/{member}");
        assert_eq!(
            refused::<InitializeResult>(&with(initialize_result(), &pointer, None)),
            (pointer.clone(), format!("member `{pointer}` is required"))
        );
        for bad in [json!(1), Value::Null, json!(["x"])] {
            let (at, message) = refused::<InitializeResult>(&with(
                initialize_result(),
                &pointer,
                Some(bad.clone()),
            ));
            assert_eq!(at, pointer);
            assert!(
                message.starts_with(&format!("`{pointer}` must be a string, found")),
                "{message}"
            );
        }
    }
    // Members beside them are ignored.
    let extra = with(initialize_result(), "/server_info/homepage", Some(json!(1)));
    assert!(InitializeResult::read(Some(&extra)).is_ok());
}

fn describe_result() -> Value {
    json!({
        "triggers": [{"trigger_type": "list-entries", "prompt_fields": ["id", "title", "body"]}],
        "agents": []
    })
}

#[test]
fn describe_triggers_need_trigger_type() {
    let read = DescribeResult::read(Some(&describe_result())).unwrap();
    assert_eq!(
        read.triggers,
        [TriggerDescription::new(
            "list-entries",
            ["id", "title", "body"]
        )]
    );
    let without = with(describe_result(), "/triggers/0/trigger_type", None);
    assert_eq!(
        refused::<DescribeResult>(&without).1,
        "member `/triggers/0/trigger_type` is required"
    );
    assert_eq!(
        refused::<DescribeResult>(&with(
            describe_result(),
            "/triggers/0/trigger_type",
            Some(json!(7))
        ))
        .1,
        "`/triggers/0/trigger_type` must be a non-empty string, found 7"
    );
}

#[test]
fn describe_type_alone_is_refused_and_beside_trigger_type_ignored() {
    let type_only = json!({"triggers": [{"type": "items"}], "agents": []});
    assert_eq!(
        refused::<DescribeResult>(&type_only),
        (
            "/triggers/0/trigger_type".to_owned(),
            "member `/triggers/0/trigger_type` is required".to_owned()
        )
    );
    let both = with(describe_result(), "/triggers/0/type", Some(json!("other")));
    let read = DescribeResult::read(Some(&both)).unwrap();
    assert_eq!(read.triggers[0].trigger_type, "list-entries");
}

#[test]
fn prompt_fields_are_strings_in_describe_and_schema() {
    let objects = json!([{"key": "title"}]);
    assert_eq!(
        refused::<DescribeResult>(&with(
            describe_result(),
            "/triggers/0/prompt_fields",
            Some(objects.clone())
        )),
        (
            "/triggers/0/prompt_fields/0".to_owned(),
            "`/triggers/0/prompt_fields/0` must be a string, found an object".to_owned()
        )
    );
    let schema = json!({"schema": {"type": "object"}, "prompt_fields": ["title"]});
    assert_eq!(
        TriggerSchema::read(Some(&schema)).unwrap(),
        TriggerSchema::new(json!({"type": "object"}), ["title"])
    );
    assert_eq!(
        refused::<TriggerSchema>(&with(schema.clone(), "/prompt_fields", Some(objects))),
        (
            "/prompt_fields/0".to_owned(),
            "`/prompt_fields/0` must be a string, found an object".to_owned()
        )
    );
    assert_eq!(
        refused::<TriggerSchema>(&with(schema, "/prompt_fields", Some(json!({})))).0,
        "/prompt_fields"
    );
}

#[test]
fn prompt_fields_and_agents_may_be_left_out() {
    let bare = with(describe_result(), "/triggers/0/prompt_fields", None);
    let bare = with(bare, "/agents", None);
    let read = DescribeResult::read(Some(&bare)).unwrap();
    assert_eq!(read.triggers[0].prompt_fields, Vec::<String>::new());
    assert_eq!(read.agents, Vec::<Value>::new());
    // `agents: null` is absent too; agents are kept as they came, unread.
    let agents = with(describe_result(), "/agents", Some(json!([{"provider": 1}])));
    assert_eq!(
        DescribeResult::read(Some(&agents)).unwrap().agents,
        [json!({"provider": 1})]
    );
    let null = with(describe_result(), "/agents", Some(Value::Null));
    assert!(DescribeResult::read(Some(&null)).unwrap().agents.is_empty());
    let schema = json!({"schema": {"type": "object"}});
    assert!(
        TriggerSchema::read(Some(&schema))
            .unwrap()
            .prompt_fields
            .is_empty()
    );
}

#[test]
fn validate_result_without_a_boolean_ok_is_refused() {
    assert_eq!(
        refused::<ValidateResult>(&json!({})),
        ("/ok".to_owned(), "member `/ok` is required".to_owned())
    );
    assert_eq!(refused::<ValidateResult>(&Value::Null).0, "");
    assert!(ValidateResult::read(None).is_err());
    for bad in [json!("true"), json!(1), Value::Null, json!({})] {
        let (at, message) = refused::<ValidateResult>(&json!({"ok": bad}));
        assert_eq!(at, "/ok");
        assert!(message.starts_with("`/ok` must be a boolean"), "{message}");
    }
}

#[test]
fn ok_false_with_and_without_error() {
    let rejected = json!({"ok": false, "error": "limit_total must be at least 1"});
    assert_eq!(
        ValidateResult::read(Some(&rejected)).unwrap(),
        ValidateResult::Rejected {
            error: Some("limit_total must be at least 1".into()),
            errors: Vec::new(),
        }
    );
    assert_eq!(
        ValidateResult::read(Some(&with(rejected.clone(), "/error", None))).unwrap(),
        ValidateResult::Rejected {
            error: None,
            errors: Vec::new(),
        }
    );
    // `"error": null` (a Python extension's `None`) is no sentence, not a broken reply.
    assert_eq!(
        ValidateResult::read(Some(&with(rejected.clone(), "/error", Some(Value::Null)))).unwrap(),
        ValidateResult::Rejected {
            error: None,
            errors: Vec::new(),
        }
    );
    // Our `errors` list beside it: each problem at its pointer, written back as read.
    let listed = with(
        rejected.clone(),
        "/errors",
        Some(json!([{"path": "/limit_total", "message": "must be at least 1"}])),
    );
    let read = ValidateResult::read(Some(&listed)).unwrap();
    assert_eq!(
        read,
        ValidateResult::Rejected {
            error: Some("limit_total must be at least 1".into()),
            errors: vec![crate::ValidationError::new(
                "/limit_total",
                "must be at least 1"
            )],
        }
    );
    assert_eq!(serde_json::to_value(&read).unwrap(), listed);
    // A rejection's `configuration` means nothing.
    let odd = with(rejected.clone(), "/configuration", Some(json!(1)));
    assert!(matches!(
        ValidateResult::read(Some(&odd)),
        Ok(ValidateResult::Rejected { .. })
    ));
    assert_eq!(
        refused::<ValidateResult>(&with(rejected, "/error", Some(json!(["x"])))).0,
        "/error"
    );
}

#[test]
fn ok_true_with_and_without_configuration() {
    let normalised =
        json!({"path": "e.json", "trigger_type": "rec/list-entries", "limit_total": 100});
    let accepted = json!({"ok": true, "configuration": normalised});
    assert_eq!(
        ValidateResult::read(Some(&accepted)).unwrap(),
        ValidateResult::Accepted {
            configuration: normalised.as_object().cloned()
        }
    );
    for absent in [None, Some(Value::Null)] {
        assert_eq!(
            ValidateResult::read(Some(&with(accepted.clone(), "/configuration", absent))).unwrap(),
            ValidateResult::Accepted {
                configuration: None
            }
        );
    }
    // Ignored beside `ok: true`: an `error` that is not a string.
    assert!(ValidateResult::read(Some(&with(accepted.clone(), "/error", Some(json!(1))))).is_ok());
    assert_eq!(
        refused::<ValidateResult>(&with(accepted, "/configuration", Some(json!("x")))),
        (
            "/configuration".to_owned(),
            "`/configuration` must be an object, found \"x\"".to_owned()
        )
    );
}

#[test]
fn poll_params_default_what_is_absent() {
    let sent = json!({
        "automation": {"path": "e.json", "trigger_type": "rec/list-entries"},
        "limit": 5, "preview": true, "trigger_type": "list-entries"
    });
    let full = PollParams::read(Some(&sent)).unwrap();
    assert_eq!((full.limit, full.preview), (Some(5), true));
    assert_eq!(full.automation.len(), 2);

    let read = |pointer: &str| PollParams::read(Some(&with(sent.clone(), pointer, None))).unwrap();
    assert!(read("/automation").automation.is_empty());
    assert_eq!(read("/limit").limit, None);
    assert!(!read("/preview").preview);
    let null = with(sent.clone(), "/limit", Some(Value::Null));
    assert_eq!(PollParams::read(Some(&null)).unwrap().limit, None);
    // `arguments`, this project's earlier member, is not read: no parameters at all.
    let old = json!({"trigger_type": "list-entries", "arguments": {"path": "e.json"}});
    let read = PollParams::read(Some(&old)).unwrap();
    assert!(read.automation.is_empty());
    assert_eq!(
        refused::<PollParams>(&with(sent, "/trigger_type", None)).1,
        "member `/trigger_type` is required"
    );
}

#[test]
fn validate_params_default_an_absent_configuration() {
    let sent = json!({"configuration": {"path": "e.json"}, "trigger_type": "list-entries"});
    assert_eq!(
        ValidateParams::read(Some(&sent))
            .unwrap()
            .configuration
            .len(),
        1
    );
    let absent = with(sent.clone(), "/configuration", None);
    assert!(
        ValidateParams::read(Some(&absent))
            .unwrap()
            .configuration
            .is_empty()
    );
    let null = with(sent, "/configuration", Some(Value::Null));
    assert!(
        ValidateParams::read(Some(&null))
            .unwrap()
            .configuration
            .is_empty()
    );
}

#[test]
fn null_params_are_absent_for_describe_and_shutdown() {
    // As the reference host sends them, through the JSON-RPC reader.
    for (body, name) in [
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"describe","params":null}"#,
            method::Describe::NAME,
        ),
        (
            r#"{"jsonrpc":"2.0","id":26,"method":"shutdown","params":null}"#,
            method::Shutdown::NAME,
        ),
    ] {
        let Ok(curupira_jsonrpc::Message::Request(request)) =
            curupira_jsonrpc::parse_message(body.as_bytes())
        else {
            panic!("{body} is a request");
        };
        assert_eq!(request.method, name);
        assert_eq!(request.params, None);
        let params = request.params.map(Value::from);
        assert_eq!(
            <method::Describe as Method>::Params::read(params.as_ref()),
            Ok(NoParams)
        );
        assert_eq!(
            <method::Shutdown as Method>::Params::read(params.as_ref()),
            Ok(NoParams)
        );
    }
    assert_eq!(NoParams::read(Some(&Value::Null)), Ok(NoParams));
    assert_eq!(NoParams::read(Some(&json!({}))), Ok(NoParams));
    assert_eq!(
        refused::<NoParams>(&json!(3)),
        (
            String::new(),
            "the params must be absent, null or an object, found 3".to_owned()
        )
    );
}

#[test]
fn ack_takes_any_result_shutdown_null_included() {
    for result in [Value::Null, json!({}), json!({"seen": 3}), json!([])] {
        assert_eq!(Ack::read(Some(&result)), Ok(Ack));
    }
    assert_eq!(Ack::read(None), Ok(Ack));
}
