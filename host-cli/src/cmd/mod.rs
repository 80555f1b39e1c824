//! One module per subcommand. Each exposes `Args` (clap) and
//! `run(Args) -> anyhow::Result<ExitCode>`; an `Err` is reported by `main` and exits 2.

pub mod builtin;
pub mod frame;
pub mod identity;
pub mod manifest;
pub mod plugins;
pub mod probe;
pub mod registry;
pub mod render;
pub mod run;
pub mod spirit;
pub mod validate;

use std::io::{self, Read, Write};

use curupira_diagnostics::{Report, color_enabled};
use curupira_host::format::Format;

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

/// The most bytes a checking command reads from standard input: far above any real
/// manifest or `package.json`, checked before more memory is spent.
pub const MAX_STDIN_BYTES: u64 = 16 * 1024 * 1024;

/// Reads all of standard input, refusing more than [`MAX_STDIN_BYTES`]; `what` names
/// the document in the error (`the manifest`, `package.json`).
pub fn read_stdin(what: &str) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    io::stdin()
        .lock()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| anyhow::anyhow!("could not read {what} from standard input: {error}"))?;
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        anyhow::bail!(
            "{what} on standard input is larger than {MAX_STDIN_BYTES} bytes; no such file is that large"
        );
    }
    Ok(bytes)
}
