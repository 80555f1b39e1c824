//! The trigger of this crate's README, word for word (`tests/readme_example.rs` keeps
//! the two the same): `cargo build --example counter`, then
//! `curupira probe --arguments '{"max":3}' -- target/debug/examples/counter`.

use std::process::ExitCode;

use curupira_extension_sdk::serde_json::{Value, json};
use curupira_extension_sdk::{
    Arguments, Pair, Trigger, TriggerDescription, TriggerError, TriggerSchema, ValidateError,
    ValidationError, run,
};

/// Hands out the numbers 1 to `max`, one per poll.
struct Counter {
    next: u64,
}

impl Trigger for Counter {
    fn describe(&self) -> Vec<TriggerDescription> {
        vec![TriggerDescription::new("count", "Counts up to `max`.")]
    }

    fn schema(&self, _: &str) -> Result<TriggerSchema, TriggerError> {
        let schema = json!({
            "type": "object",
            "properties": {"max": {"type": "integer", "minimum": 1}},
            "required": ["max"]
        });
        Ok(TriggerSchema {
            schema,
            prompt_fields: vec![],
        })
    }

    fn validate(&self, _: &str, arguments: &Arguments) -> Result<(), ValidateError> {
        match arguments.get("max") {
            Some(max) if max.is_u64() => Ok(()),
            _ => Err(ValidationError::member("max", "`max` must be an integer").into()),
        }
    }

    fn poll(&mut self, _: &str, arguments: &Arguments) -> Result<Option<Vec<Pair>>, TriggerError> {
        let max = arguments.get("max").and_then(Value::as_u64).unwrap_or(0);
        if self.next > max {
            return Ok(None);
        }
        self.next += 1;
        Ok(Some(vec![Pair::new("n", (self.next - 1).to_string())]))
    }
}

/// The manifest a host reads (usually `include_str!("../curupira-extension.toml")`).
const MANIFEST: &str = r#"
manifest_version = 1
name = "counter"
version = "0.1.0"
protocol_version = 2
runtime = "native"
kind = "trigger"
trigger_types = ["count"]

[launch]
type = "command"
command = "counter"
"#;

fn main() -> ExitCode {
    // `counter --curupira-print-manifest` prints MANIFEST; otherwise it serves
    // stdin/stdout until `shutdown` or the end of stdin.
    run(MANIFEST, || Counter { next: 1 })
}
