//! Fuzzes the `package.json` checker of `spirit-manifest`. What each run checks is
//! documented, and done, in `curupira_fuzz::checks::spirit_package_json`
//! (`src/checks/spirit_package_json.rs`), which CI also runs on this target's seeds
//! (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none spirit_package_json -- -max_total_time=60`
#![no_main]

use curupira_fuzz::checks::spirit_package_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| spirit_package_json::check(data));
