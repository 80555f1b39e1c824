//! Fuzzes RFC 8785 canonicalization (`curupira-task-identity`). What each run checks is
//! documented, and done, in `curupira_fuzz::checks::jcs_canonicalize`
//! (`src/checks/jcs_canonicalize.rs`), which CI also runs on this target's seeds
//! (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none jcs_canonicalize -- -max_total_time=120`
#![no_main]

use curupira_fuzz::checks::jcs_canonicalize;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| jcs_canonicalize::check(data));
