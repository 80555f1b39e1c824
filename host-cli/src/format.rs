//! `--format`: how every command that reports prints it. One type for the whole host,
//! so `run`'s events ([`crate::events`]), `probe`'s steps and the checking commands'
//! diagnostics are chosen by the same flag with the same values.

/// The `--format` of every command that reports: readable text, or JSON for tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Readable text: rustc-like diagnostics, one sentence per event or step.
    Human,
    /// JSON: one object (diagnostics, listings) or one object per line (events, steps).
    Json,
}
