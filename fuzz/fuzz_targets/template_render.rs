//! Fuzzes `${key}` templates (`curupira-template`) against a reference renderer. What
//! each run checks is documented, and done, in `curupira_fuzz::checks::template_render`
//! (`src/checks/template_render.rs`), which CI also runs on this target's seeds
//! (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none template_render -- -max_total_time=120`
#![no_main]

use curupira_fuzz::checks::template_render;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: template_render::Input| template_render::check(input));
