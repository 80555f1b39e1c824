//! Filling an automation's `arguments` with the `default`s of the trigger's JSON Schema
//! (SPEC section 1, step 2) before `trigger/validate` and `trigger/poll` see them.
//!
//! The rule, for a schema that is an object with `properties`:
//!
//! - a property missing from the arguments whose subschema has a `default` gets a copy
//!   of that default;
//! - a property whose value (given, or just defaulted) is an object is filled the same
//!   way from its subschema's `properties`, to any depth ("nested objects too").
//!
//! Decisions where the specification is silent, in the manner of common validators
//! (Ajv's `useDefaults`):
//!
//! - A missing object property **without** a `default` is not created just to hold the
//!   defaults of its own properties: the author did not ask for the object.
//! - A value the user gave is never replaced, not even `null`.
//! - Only `properties` is followed: `$ref`, `allOf`/`anyOf`/`oneOf`, `if`/`then`,
//!   `additionalProperties` and `items` are not, since which branch applies is the
//!   extension's business (its `trigger/validate` has the last word).
//! - A schema that is not an object (`true`, `false`) or has no `properties` adds
//!   nothing.
//!
//! ```
//! use curupira_protocol::apply_defaults;
//! use serde_json::{json, Map};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "path": {"type": "string", "default": "tasks.jsonl"},
//!         "limits": {
//!             "type": "object",
//!             "properties": {"max": {"type": "integer", "default": 5}}
//!         }
//!     }
//! });
//! let mut arguments = Map::new();
//! arguments.insert("limits".into(), json!({}));
//! apply_defaults(&schema, &mut arguments);
//! assert_eq!(
//!     serde_json::Value::Object(arguments),
//!     json!({"path": "tasks.jsonl", "limits": {"max": 5}})
//! );
//! ```

use serde_json::{Map, Value};

/// The deepest level of nested `properties` followed; deeper levels are left alone
/// (a schema from an extension is input, and input never overflows the stack).
const MAX_DEPTH: usize = 64;

/// Adds the schema's defaults to the missing members of `arguments`, recursively into
/// object members. See the module documentation for the rule.
pub fn apply_defaults(schema: &Value, arguments: &mut Map<String, Value>) {
    fill(schema, arguments, 0);
}

fn fill(schema: &Value, object: &mut Map<String, Value>, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, subschema) in properties {
        if !object.contains_key(key)
            && let Some(default) = subschema.get("default")
        {
            object.insert(key.clone(), default.clone());
        }
        if let Some(Value::Object(member)) = object.get_mut(key) {
            fill(subschema, member, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn filled(schema: Value, arguments: Value) -> Value {
        let Value::Object(mut object) = arguments else {
            panic!("arguments must be an object")
        };
        apply_defaults(&schema, &mut object);
        Value::Object(object)
    }

    #[test]
    fn a_missing_member_gets_its_default() {
        let schema = json!({"properties": {"a": {"default": 1}, "b": {"default": "x"}}});
        assert_eq!(filled(schema, json!({})), json!({"a": 1, "b": "x"}));
    }

    #[test]
    fn a_given_member_is_kept_even_when_null() {
        let schema = json!({"properties": {"a": {"default": 1}, "b": {"default": 2}}});
        assert_eq!(
            filled(schema, json!({"a": 7, "b": null})),
            json!({"a": 7, "b": null})
        );
    }

    #[test]
    fn nested_objects_are_filled_when_given() {
        let schema = json!({"properties": {"outer": {
            "type": "object",
            "properties": {"inner": {"properties": {"deep": {"default": true}}}, "n": {"default": 3}}
        }}});
        assert_eq!(
            filled(schema, json!({"outer": {"inner": {}}})),
            json!({"outer": {"inner": {"deep": true}, "n": 3}})
        );
    }

    #[test]
    fn a_defaulted_object_is_filled_further() {
        let schema = json!({"properties": {"o": {
            "default": {"given": 1},
            "properties": {"extra": {"default": 2}, "given": {"default": 9}}
        }}});
        assert_eq!(
            filled(schema, json!({})),
            json!({"o": {"given": 1, "extra": 2}})
        );
    }

    #[test]
    fn a_missing_object_without_default_is_not_created() {
        let schema = json!({"properties": {"o": {"properties": {"x": {"default": 1}}}}});
        assert_eq!(filled(schema, json!({})), json!({}));
    }

    #[test]
    fn non_object_values_and_schemas_add_nothing() {
        let schema = json!({"properties": {"o": {"properties": {"x": {"default": 1}}}}});
        assert_eq!(filled(schema, json!({"o": [1]})), json!({"o": [1]}));
        assert_eq!(filled(json!(true), json!({"a": 1})), json!({"a": 1}));
        assert_eq!(filled(json!({"properties": 5}), json!({})), json!({}));
        assert_eq!(
            filled(
                json!({"allOf": [{"properties": {"a": {"default": 1}}}]}),
                json!({})
            ),
            json!({})
        );
    }

    #[test]
    fn very_deep_schemas_stop_at_the_depth_limit() {
        let mut schema = json!({"default": 0});
        let mut arguments = json!({});
        for _ in 0..200 {
            schema = json!({"properties": {"n": schema}});
            arguments = json!({"n": arguments});
        }
        let Value::Object(mut object) = arguments else {
            unreachable!()
        };
        apply_defaults(&schema, &mut object);
        let mut depth = 0;
        let mut current = &Value::Object(object);
        while let Some(next) = current.get("n") {
            current = next;
            depth += 1;
        }
        assert_eq!(depth, 200, "nothing past the limit was added or removed");
    }
}
