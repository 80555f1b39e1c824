//! The checks of the fuzz targets, one module per target, each with a `check` function
//! that runs everything the target asserts on one input. Each `fuzz_targets/<target>.rs`
//! is only `fuzz_target!` calling its module's `check`, and the main workspace compiles
//! these same files into a test (`host-cli/tests/fuzz_seeds.rs`, which includes this
//! module with `#[path]`) that runs every target's committed seeds through them on every
//! CI run. So this module tree must build in both places: it names only crates that
//! both the fuzz crate and `curupira-host`'s tests depend on, and nothing of
//! `libfuzzer-sys`.
//!
//! A target that takes raw bytes has `check(data: &[u8])`. A target with a typed
//! argument has an `Input` type (derived with `arbitrary`) and `check(input: Input)`;
//! [`typed`] reads bytes into it the way `fuzz_target!` does.

pub mod agent_stream;
pub mod frame_decode;
pub mod jcs_canonicalize;
pub mod json_spans;
pub mod jsonrpc_message;
pub mod manifest_parse;
pub mod registry_entry;
pub mod spirit_archive_listing;
pub mod spirit_install_names;
pub mod spirit_package_json;
pub mod template_render;

use arbitrary::{Arbitrary, Unstructured};

/// Reads libFuzzer's bytes into a target's typed input exactly as
/// `libfuzzer_sys::fuzz_target!` does for a target with a typed argument: too few bytes
/// for the type's smallest size (`size_hint`) is no run, and so is an input
/// `Arbitrary::arbitrary_take_rest` refuses; `None` says the target skips the input.
pub fn typed<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> Option<T> {
    if data.len() < T::size_hint(0).0 {
        return None;
    }
    T::arbitrary_take_rest(Unstructured::new(data)).ok()
}
