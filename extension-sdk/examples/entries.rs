//! The Rust twin of the recording extension of the ecosystem recordings
//! (`../shared/conformance/curupira-wire/README.md`, "The recording extension"),
//! written with the typed API: `rec-ext` 0.1.0, one trigger,
//! `list-entries(path, limit_total = 100) -> Entry { id, title, body }`.
//!
//! It reads `path`, a JSON list of `{"title", "body"}` objects, and hands out one entry
//! per poll, `id` counting from 1. Its cursor (one per file) lives in memory, so in
//! one process, as the official SDK's recording extension keeps it; a new process
//! starts over, and a dry run leaves nothing behind. `tests/wire_replay.rs` replays
//! the official SDK's recorded answers against it.
//!
//! `cargo build -p curupira-extension-sdk --example entries`, then
//! `curupira probe --arguments '{"path":"entries.json"}' -- target/debug/examples/entries`.

use std::collections::HashMap;
use std::fs;
use std::process::ExitCode;

use curupira_extension_sdk::prelude::*;
use curupira_extension_sdk::serde_json;

/// What an automation of `list-entries` sets.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(crate = "curupira_extension_sdk::serde")]
pub struct ListEntries {
    /// The JSON file to read: a list of `{"title", "body"}` objects.
    pub path: String,
    /// The most entries one process hands out from that file.
    #[serde(default = "hundred")]
    pub limit_total: i64,
}

fn hundred() -> i64 {
    100
}

/// One work item: a prompt uses `${id}`, `${title}` and `${body}`.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "curupira_extension_sdk::serde")]
pub struct Entry {
    /// Where the entry is in the file, counting from 1 (a pair value `"1"`).
    pub id: u64,
    /// The entry's title.
    pub title: String,
    /// The entry's body.
    pub body: String,
}

/// An entry as the file has it.
#[derive(Deserialize)]
#[serde(crate = "curupira_extension_sdk::serde")]
struct Stored {
    title: String,
    body: String,
}

/// Hands out the entries of each file in turn.
#[derive(Default)]
pub struct Entries {
    /// How many entries of each file (by `path`) this process handed out.
    handed_out: HashMap<String, u64>,
}

impl TypedTrigger for Entries {
    type Params = ListEntries;
    type Item = Entry;

    fn poll(&mut self, params: &ListEntries, _: PollContext) -> Result<Option<Entry>, BoxError> {
        let text = fs::read_to_string(&params.path)
            .map_err(|err| format!("cannot read {}: {err}", params.path))?;
        let stored: Vec<Stored> = serde_json::from_str(&text).map_err(|err| {
            format!(
                "{} is not a JSON list of {{\"title\", \"body\"}} objects: {err}",
                params.path
            )
        })?;
        let handed_out = self.handed_out.entry(params.path.clone()).or_insert(0);
        let within_limit = i64::try_from(*handed_out).is_ok_and(|n| n < params.limit_total);
        let next = usize::try_from(*handed_out)
            .ok()
            .and_then(|n| stored.into_iter().nth(n));
        let (true, Some(Stored { title, body })) = (within_limit, next) else {
            return Ok(None);
        };
        *handed_out += 1;
        let id = *handed_out;
        Ok(Some(Entry { id, title, body }))
    }

    fn check(&self, params: &ListEntries) -> Result<(), String> {
        if params.limit_total < 1 {
            return Err("limit_total must be at least 1".to_owned());
        }
        Ok(())
    }
}

/// The extension: `list-entries` and nothing else.
pub fn app() -> App {
    App::new().trigger("list-entries", Entries::default())
}

/// The manifest a host reads; `name` and `version` are what `initialize` reports.
pub const MANIFEST: &str = r#"
manifest_version = 1
name = "rec-ext"
version = "0.1.0"
protocol_version = 2
runtime = "executable"
kind = "trigger"
trigger_types = ["list-entries"]

[launch]
type = "executable"
program = "entries"
"#;

fn main() -> ExitCode {
    run(MANIFEST, app)
}
