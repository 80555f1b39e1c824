//! Fuzzes the span-recording JSON reader of `curupira-diagnostics` against serde_json.
//! What each run checks is documented, and done, in `curupira_fuzz::checks::json_spans`
//! (`src/checks/json_spans.rs`), which CI also runs on this target's seeds
//! (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none json_spans -- -max_total_time=60`
#![no_main]

use curupira_fuzz::checks::json_spans;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| json_spans::check(data));
