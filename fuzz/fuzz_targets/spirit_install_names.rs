//! Fuzzes how the install path of `spirit-manifest` (features `archive` and `install`)
//! reads ZIP entry names: backslashes, `.` and `..` segments, absolute names, links; and
//! the same entries in a marketplace `.tgz`, where symbolic and hard links are unpacked.
//! What each run checks is documented, and done, in
//! `curupira_fuzz::checks::spirit_install_names` (`src/checks/spirit_install_names.rs`),
//! which CI also runs on this target's seeds (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none spirit_install_names -- -max_total_time=60`
#![no_main]

use curupira_fuzz::checks::spirit_install_names;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| spirit_install_names::check(data));
