//! Fuzzes the frame decoder and encoder of `curupira-framing`. What each run checks is
//! documented, and done, in `curupira_fuzz::checks::frame_decode`
//! (`src/checks/frame_decode.rs`), which CI also runs on this target's seeds
//! (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none frame_decode -- -max_total_time=600`
#![no_main]

use curupira_fuzz::checks::frame_decode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: frame_decode::Input| frame_decode::check(input));
