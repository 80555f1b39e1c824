//! Write a Curupira trigger extension in Rust: a Trigger trait and the serve loop.
