//! The checks behind the `cargo fuzz` targets of the Curupira workspace, as plain
//! functions (see [`checks`]); the targets in `fuzz_targets/` only call them.

#![forbid(unsafe_code)]

pub mod checks;
