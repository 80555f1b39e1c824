//! The trigger of this crate's README, word for word (`tests/readme_example.rs` keeps
//! the two the same): `cargo build --example counter`, then
//! `curupira probe --arguments '{"max":3}' -- target/debug/examples/counter`.

use std::process::ExitCode;

use curupira_extension_sdk::prelude::*;

/// What an automation of `count` sets: `max = 3` beside `trigger_type`.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(crate = "curupira_extension_sdk::serde")]
struct CountParams {
    /// The last number handed out.
    max: u64,
    /// What is counted; each item carries it.
    #[serde(default = "sheep")]
    what: String,
}

fn sheep() -> String {
    "sheep".to_owned()
}

/// One work item: a prompt uses its fields as `${n}` and `${what}`.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "curupira_extension_sdk::serde")]
struct Number {
    n: u64,
    what: String,
}

/// Hands out the numbers 1 to `max`, one per poll.
struct Counter {
    next: u64,
}

impl TypedTrigger for Counter {
    type Params = CountParams;
    type Item = Number;

    fn poll(&mut self, params: &CountParams, _: PollContext) -> Result<Option<Number>, BoxError> {
        if self.next > params.max {
            return Ok(None);
        }
        let (n, what) = (self.next, params.what.clone());
        self.next += 1;
        Ok(Some(Number { n, what }))
    }

    fn check(&self, params: &CountParams) -> Result<(), String> {
        match params.max {
            0 => Err("max must be at least 1".to_owned()),
            _ => Ok(()),
        }
    }
}

/// The manifest a host reads (usually `include_str!("../curupira-extension.toml")`).
const MANIFEST: &str = r#"
manifest_version = 1
name = "counter"
version = "0.1.0"
protocol_version = 2
runtime = "executable"
kind = "trigger"
trigger_types = ["count"]

[launch]
type = "executable"
program = "counter"
"#;

fn main() -> ExitCode {
    // `counter --curupira-print-manifest` prints MANIFEST; otherwise it serves
    // stdin/stdout until `shutdown` or the end of stdin.
    run(MANIFEST, || {
        App::new().trigger("count", Counter { next: 1 })
    })
}
