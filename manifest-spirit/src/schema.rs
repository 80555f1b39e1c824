//! Whether a tool's `inputSchema` / `outputSchema` is a valid JSON Schema: checked
//! against the meta-schema of the draft its `$schema` names (2020-12 when it names
//! none), with the `jsonschema` crate's meta-validators, which are compiled once per
//! process and shared.

use jsonschema::Draft;
use serde_json::Value;

/// One way a schema breaks its meta-schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SchemaProblem {
    /// RFC 6901 pointer inside the schema (`/properties/id/type`), `""` for the schema.
    pub pointer: String,
    /// One sentence.
    pub message: String,
}

const TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

const KNOWN_DRAFTS: &str = "draft-04, draft-06, draft-07, 2019-09 or 2020-12";

/// Every place where `schema` breaks its meta-schema, at most one per place.
pub(crate) fn check(schema: &Value) -> Vec<SchemaProblem> {
    if let Some(uri) = schema.get("$schema").and_then(Value::as_str)
        && Draft::default().detect(schema) == Draft::Unknown
    {
        return vec![SchemaProblem {
            pointer: "/$schema".to_owned(),
            message: format!(
                "`$schema` names `{}`, which is not a JSON Schema draft this checker knows; use the URI of {KNOWN_DRAFTS}, or leave `$schema` out for 2020-12",
                uri.escape_debug()
            ),
        }];
    }
    let validator = match jsonschema::meta::validator_for(schema) {
        Ok(validator) => validator,
        Err(error) => {
            return vec![SchemaProblem {
                pointer: String::new(),
                message: format!(
                    "its meta-schema could not be loaded: {}",
                    short(&error.to_string())
                ),
            }];
        }
    };
    // The common case, a valid schema, takes the fast path that collects nothing.
    if validator.is_valid(schema) {
        return Vec::new();
    }
    let mut problems: Vec<SchemaProblem> = Vec::new();
    for error in validator.iter_errors(schema) {
        let pointer = error.instance_path().as_str().to_owned();
        if problems.iter().any(|p| p.pointer == pointer) {
            continue;
        }
        let message = explain(schema, &pointer).unwrap_or_else(|| short(&error.to_string()));
        problems.push(SchemaProblem { pointer, message });
    }
    problems
}

/// A clearer sentence for the most common mistake: an unknown `type` name.
fn explain(schema: &Value, pointer: &str) -> Option<String> {
    if !pointer.ends_with("/type") && !pointer.contains("/type/") {
        return None;
    }
    let value = schema.pointer(pointer)?.as_str()?;
    let known = TYPES
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(match curupira_diagnostics::did_you_mean(value, TYPES) {
        Some(suggestion) => format!(
            "`{}` is not a JSON Schema type; did you mean `{suggestion}`?",
            value.escape_debug()
        ),
        None => format!(
            "`{}` is not a JSON Schema type; use one of {known}",
            value.escape_debug()
        ),
    })
}

/// The validator's message on one line and at most 200 characters (it quotes the
/// offending value, which can be large).
fn short(message: &str) -> String {
    let line: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= 200 {
        return line;
    }
    let cut: String = line.chars().take(199).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn valid_schemas_have_no_problem() {
        assert!(check(&json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]})).is_empty());
        assert!(check(&json!({})).is_empty());
        assert!(check(&json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": ["string", "null"]})).is_empty());
    }

    #[test]
    fn problems_point_inside_the_schema() {
        let problems = check(&json!({"type": "object", "properties": {"id": {"type": "strin"}}}));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].pointer, "/properties/id/type");
        assert_eq!(
            problems[0].message,
            "`strin` is not a JSON Schema type; did you mean `string`?"
        );
        let problems = check(&json!({"type": "object", "required": "id", "minProperties": -1}));
        let pointers: Vec<_> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(pointers, ["/minProperties", "/required"]);
    }

    #[test]
    fn an_unknown_draft_is_named() {
        let problems = check(&json!({"$schema": "https://example.com/my-schema"}));
        assert_eq!(problems[0].pointer, "/$schema");
        assert!(
            problems[0]
                .message
                .contains("https://example.com/my-schema")
        );
    }
}
