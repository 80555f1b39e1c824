//! Fuzzes the reading of a coding-agent provider's JSON stream (`curupira-agents`).
//! What each run checks is documented, and done, in `curupira_fuzz::checks::agent_stream`
//! (`src/checks/agent_stream.rs`), which CI also runs on this target's seeds
//! (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none agent_stream -- -max_total_time=120`
#![no_main]

use curupira_fuzz::checks::agent_stream;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| agent_stream::check(data));
