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
pub mod spirit;
pub mod validate;

use std::io::{self, Write};

use curupira_diagnostics::{Report, color_enabled};

/// The `--format` of every command that reports: readable text, or JSON for tools.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Readable text: rustc-like diagnostics, one sentence per event or step.
    Human,
    /// JSON: one object (diagnostics, listings) or one object per line (events, steps).
    Json,
}

/// A checking command's report for stdout: rustc-like text (coloured only on a
/// terminal without `NO_COLOR`), or SPEC section 7's JSON object on one line.
pub fn report_output(report: &Report, format: Format) -> String {
    match format {
        Format::Json => report.render_json() + "\n",
        Format::Human => report.render_human(color_enabled(&io::stdout())),
    }
}

/// Writes `text` to standard output and flushes it.
pub fn write_stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}
