//! `--format`: how every command that reports prints it. One type for the whole host,
//! so `run`'s events ([`crate::events`]), `probe`'s steps and the checking commands'
//! diagnostics are chosen by the same flag with the same values.

/// The `--format` of every command that reports: readable text, or JSON for tools.
/// What each prints is that command's own (its `--format` help says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Text for people.
    Human,
    /// JSON for programs.
    Json,
}
