//! Fuzzes the `entry.json` checker of `spirit-registry`. What each run checks is
//! documented, and done, in `curupira_fuzz::checks::registry_entry`
//! (`src/checks/registry_entry.rs`), which CI also runs on this target's seeds
//! (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none registry_entry -- -max_total_time=60`
#![no_main]

use curupira_fuzz::checks::registry_entry;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| registry_entry::check(data));
