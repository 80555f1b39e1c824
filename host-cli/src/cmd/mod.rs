//! One module per subcommand. Each exposes `Args` (clap) and
//! `run(Args) -> anyhow::Result<ExitCode>`; an `Err` is reported by `main` and exits 2.

pub mod builtin;
pub mod frame;
pub mod identity;
pub mod manifest;
pub mod plugins;
pub mod probe;
pub mod render;
pub mod run;
pub mod validate;

/// The `--format` of every command that reports: readable text, or JSON for tools.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Readable text: rustc-like diagnostics, one sentence per event or step.
    Human,
    /// JSON: one object (diagnostics, listings) or one object per line (events, steps).
    Json,
}
