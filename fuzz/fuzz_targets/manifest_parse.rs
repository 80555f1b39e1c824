//! Fuzzes the `curupira-extension.toml` checker (`curupira-manifest`). What each run
//! checks is documented, and done, in `curupira_fuzz::checks::manifest_parse`
//! (`src/checks/manifest_parse.rs`), which CI also runs on this target's seeds
//! (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none manifest_parse -- -max_total_time=120`
#![no_main]

use curupira_fuzz::checks::manifest_parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| manifest_parse::check(data));
