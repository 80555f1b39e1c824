//! The parameters of `jsonl` (an automation's table without the host's core keys): the
//! JSON Schema `trigger/schema` reports, and the check behind `trigger/validate` and
//! every poll.

use curupira_extension_sdk::{Arguments, ValidationError};
use curupira_jsonrpc::describe;
use serde_json::{Value, json};

/// One queue: the two paths exactly as the arguments give them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Queue {
    /// The queue file.
    pub(crate) path: String,
    /// Where finished items are recorded.
    pub(crate) done_path: String,
}

/// The JSON Schema `trigger/schema` reports for the parameters. It declares no
/// `default`: the SDK would fill one into the normalised configuration, and the one
/// default there is (`done_path`) depends on `path`.
pub(crate) fn schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "The queue: a JSON Lines file, one JSON object of string \
                    members per line, each line one item. Relative to the folder of \
                    curupira.toml."
            },
            "done_path": {
                "type": "string",
                "minLength": 1,
                "description": "Where finished items are appended, one JSON object per \
                    line; queue lines found there are not handed out again. Relative to the \
                    folder of curupira.toml. Defaults to `path` with `.done` appended."
            }
        },
        "required": ["path"],
        "additionalProperties": false
    })
}

/// Checks the arguments, reporting every problem; the queue they name when they fit.
pub(crate) fn queue_from(arguments: &Arguments) -> Result<Queue, Vec<ValidationError>> {
    let mut errors = Vec::new();
    let mut string = |name: &str, required: bool| match arguments.get(name) {
        Some(Value::String(s)) if s.is_empty() => {
            errors.push(ValidationError::member(
                name,
                format!("`{name}` must not be empty"),
            ));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            errors.push(ValidationError::member(
                name,
                format!("`{name}` must be a string, found {}", describe(other)),
            ));
            None
        }
        None if required => {
            errors.push(ValidationError::member(
                name,
                format!(
                    "`{name}` is required: the JSON Lines file to take items from, relative \
                     to the folder of curupira.toml"
                ),
            ));
            None
        }
        None => None,
    };
    let path = string("path", true);
    let done_path = string("done_path", false);
    for name in arguments.keys() {
        if name != "path" && name != "done_path" {
            errors.push(ValidationError::member(
                name,
                format!(
                    "unknown member {}; the jsonl trigger takes only `path` and `done_path`",
                    Value::from(name.as_str())
                ),
            ));
        }
    }
    if let (Some(path), Some(done_path)) = (&path, &done_path)
        && path == done_path
    {
        errors.push(ValidationError::member(
            "done_path",
            "`done_path` must differ from `path`, or finished items would be appended to \
                 the queue itself",
        ));
    }
    match path {
        Some(path) if errors.is_empty() => Ok(Queue {
            done_path: done_path.unwrap_or_else(|| format!("{path}.done")),
            path,
        }),
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SDK fills each top-level property's `default` into the table before
    /// `validate` sees it, and every poll gets that normalised table: whatever it fills
    /// must name the same queue as the table without it.
    #[test]
    fn the_defaults_the_sdk_fills_in_leave_the_queue_as_it_was() {
        let schema = schema();
        let properties = schema["properties"].as_object().unwrap();
        let given = json!({"path": "tasks.jsonl"}).as_object().unwrap().clone();
        let mut filled = given.clone();
        for (key, property) in properties {
            if let Some(default) = property.get("default") {
                filled.entry(key.clone()).or_insert(default.clone());
            }
        }
        assert_eq!(queue_from(&filled), queue_from(&given));
        assert_eq!(
            filled, given,
            "no default is declared, so none is filled in"
        );
        // The host's core keys are not parameters: the SDK leaves them out, and a
        // schema property of that name would never be filled or checked.
        for key in properties.keys() {
            assert!(!curupira_protocol::is_core_key(key), "{key}");
        }
        // What an optional parameter's `null` default would do.
        let null = json!({"path": "q", "done_path": null});
        let errors = queue_from(null.as_object().unwrap()).unwrap_err();
        assert_eq!(
            errors[0].to_string(),
            "/done_path: `done_path` must be a string, found null"
        );
    }

    #[test]
    fn arguments_report_every_problem() {
        let arguments = |value: Value| value.as_object().unwrap().clone();
        let errors = queue_from(&arguments(json!({"done_path": 3, "pth": "x"}))).unwrap_err();
        let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            listed,
            [
                "/path: `path` is required: the JSON Lines file to take items from, relative \
                 to the folder of curupira.toml",
                "/done_path: `done_path` must be a string, found 3",
                "/pth: unknown member \"pth\"; the jsonl trigger takes only `path` and \
                 `done_path`",
            ]
        );
        let errors = queue_from(&arguments(json!({"path": "q", "done_path": "q"}))).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].path, "/done_path");
        let errors = queue_from(&arguments(json!({"path": ""}))).unwrap_err();
        assert_eq!(
            errors,
            [ValidationError::member("path", "`path` must not be empty")]
        );
        assert_eq!(
            queue_from(&arguments(json!({"path": "tasks.jsonl"}))).unwrap(),
            Queue {
                path: "tasks.jsonl".to_owned(),
                done_path: "tasks.jsonl.done".to_owned()
            }
        );
    }
}
