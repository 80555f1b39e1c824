//! Shared diagnostics (code, JSON Pointer, line and column) for the manifest validators.
