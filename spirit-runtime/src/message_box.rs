//! Desktop's `ctx.host.showMessageBox(options)`: the options checked by the Spirit
//! docs' table, the box described on stderr, and the button "pressed".

use std::fmt::Write as _;

use serde_json::Value;

/// The options the docs' table lists, in its order.
const OPTIONS: [&str; 8] = [
    "title",
    "message",
    "detail",
    "buttons",
    "cancelId",
    "defaultId",
    "noLink",
    "type",
];

/// The values of `type`.
const TYPES: [&str; 5] = ["none", "info", "error", "question", "warning"];

/// Checks `options` and returns the problems, one sentence each (none: valid).
pub fn check(options: &Value) -> Vec<String> {
    let Some(map) = options.as_object() else {
        return vec![format!(
            "showMessageBox takes an options object, found {}",
            spirit_manifest::curupira_diagnostics::json::type_name(options)
        )];
    };
    let mut problems = Vec::new();
    for key in ["title", "message"] {
        if !map.contains_key(key) {
            problems.push(format!("showMessageBox needs `{key}`, a string"));
        }
    }
    for (key, value) in map {
        let expected = match key.as_str() {
            "title" | "message" | "detail" => value.is_string().then_some(()).ok_or("a string"),
            "buttons" => value
                .as_array()
                .filter(|items| items.iter().all(Value::is_string))
                .map(|_| ())
                .ok_or("an array of strings"),
            "cancelId" | "defaultId" => value.is_number().then_some(()).ok_or("a number"),
            "noLink" => value.is_boolean().then_some(()).ok_or("`true` or `false`"),
            "type" => value
                .as_str()
                .filter(|text| TYPES.contains(text))
                .map(|_| ())
                .ok_or("one of \"none\", \"info\", \"error\", \"question\", \"warning\""),
            _ => {
                let hint = match spirit_manifest::curupira_diagnostics::did_you_mean(key, OPTIONS) {
                    Some(suggestion) => format!("did you mean `{suggestion}`?"),
                    None => format!("expected one of `{}`", OPTIONS.join("`, `")),
                };
                problems.push(format!(
                    "showMessageBox has no option `{}`: {hint}",
                    key.escape_debug()
                ));
                continue;
            }
        };
        if let Err(expected) = expected {
            problems.push(format!(
                "showMessageBox option `{key}` must be {expected}, found {}",
                spirit_manifest::curupira_diagnostics::json::type_name(value)
            ));
        }
    }
    problems
}

/// The button index the box resolves to: `forced` (`--message-box-response`), else
/// `defaultId`, else 0.
pub fn response(options: &Value, forced: Option<u64>) -> Value {
    match forced {
        Some(index) => Value::from(index),
        None => options
            .get("defaultId")
            .filter(|id| id.is_number())
            .cloned()
            .unwrap_or(Value::from(0)),
    }
}

/// The box as the lines printed on stderr.
pub fn describe(extension: &str, options: &Value, response: &Value) -> String {
    let text = |key: &str| options.get(key).and_then(Value::as_str).unwrap_or_default();
    let kind = options
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("none");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "[{extension}] message box ({kind}): {}",
        text("title").escape_debug()
    );
    let _ = writeln!(out, "  {}", text("message").escape_debug());
    if options.get("detail").is_some() {
        let _ = writeln!(out, "  {}", text("detail").escape_debug());
    }
    if let Some(buttons) = options.get("buttons").and_then(Value::as_array) {
        let labels: Vec<String> = buttons
            .iter()
            .enumerate()
            .map(|(index, label)| {
                format!(
                    "[{index}] {}",
                    label.as_str().unwrap_or_default().escape_debug()
                )
            })
            .collect();
        let _ = writeln!(out, "  buttons: {}", labels.join("  "));
    }
    let _ = writeln!(out, "  -> response {response}");
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn options_are_checked_by_the_table() {
        assert!(check(&json!({"title": "T", "message": "M", "buttons": ["OK"], "defaultId": 0, "type": "info"})).is_empty());
        let problems =
            check(&json!({"title": 3, "buttons": ["OK", 1], "type": "fatal", "noLnk": true}));
        assert_eq!(
            problems,
            [
                "showMessageBox needs `message`, a string",
                "showMessageBox option `buttons` must be an array of strings, found an array",
                "showMessageBox has no option `noLnk`: did you mean `noLink`?",
                "showMessageBox option `title` must be a string, found a number",
                "showMessageBox option `type` must be one of \"none\", \"info\", \"error\", \"question\", \"warning\", found a string",
            ]
        );
        assert_eq!(check(&json!("x")).len(), 1);
    }

    #[test]
    fn the_response_is_forced_then_default_then_zero() {
        let options = json!({"title": "T", "message": "M", "defaultId": 2});
        assert_eq!(response(&options, Some(1)), json!(1));
        assert_eq!(response(&options, None), json!(2));
        assert_eq!(response(&json!({}), None), json!(0));
    }
}
