//! Parsing and validation of curupira-extension.toml (manifest format 1).
