//! Fuzzes the archive reader of `spirit-manifest` (feature `archive`). What each run
//! checks is documented, and done, in `curupira_fuzz::checks::spirit_archive_listing`
//! (`src/checks/spirit_archive_listing.rs`), which CI also runs on this target's seeds
//! (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none spirit_archive_listing -- -max_total_time=60`
#![no_main]

use curupira_fuzz::checks::spirit_archive_listing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| spirit_archive_listing::check(data));
