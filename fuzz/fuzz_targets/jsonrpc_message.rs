//! Fuzzes message classification (`curupira-jsonrpc`) and the protocol's strict readers
//! (`curupira-protocol`). What each run checks is documented, and done, in
//! `curupira_fuzz::checks::jsonrpc_message` (`src/checks/jsonrpc_message.rs`), which CI
//! also runs on this target's seeds (`host-cli/tests/fuzz_seeds.rs`).
//!
//! Run: `cd fuzz && cargo fuzz run -s none jsonrpc_message -- -max_total_time=60`
#![no_main]

use curupira_fuzz::checks::jsonrpc_message;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| jsonrpc_message::check(data));
