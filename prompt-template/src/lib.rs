//! One-pass ${key} prompt templates.
