//! `curupira identity [--canonical]`: the task identity of a pair list read on stdin.
//!
//! Input: a JSON array of `{"key": …, "value": …}` objects (both strings, nothing
//! else), read strictly by `curupira_task_identity::parse_pairs`. Output: the task id
//! as 64 lowercase hex digits and a newline, or with `--canonical` the exact RFC 8785
//! bytes that are hashed (no newline added). Input that is not such a list: exit 1 with
//! one `error:` line on stderr.
//!
//! Reading stops at the first byte that cannot continue the list (so 3 GB of NUL
//! bytes are refused after the first), and at 64 MiB (`MAX_PAIRS_BYTES`: exit 2,
//! nothing read past it): see `read_json_document`.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use curupira_task_identity::{TaskId, canonical_pairs, parse_pairs};

use super::read_json_document;

/// Arguments of `curupira identity`.
#[derive(clap::Args)]
pub struct Args {
    /// Print the canonical JSON bytes (RFC 8785) instead of the task id.
    #[arg(long)]
    canonical: bool,
}

/// Reads the pair list on stdin and prints its identity or canonical form.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(text) = read_json_document(io::stdin().lock(), "standard input")? else {
        return Ok(ExitCode::from(1));
    };
    let pairs = match parse_pairs(&text) {
        Ok(pairs) => pairs,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::from(1));
        }
    };

    let mut stdout = io::stdout().lock();
    if args.canonical {
        stdout.write_all(&canonical_pairs(&pairs))
    } else {
        writeln!(stdout, "{}", TaskId::of_pairs(&pairs))
    }
    .and_then(|()| stdout.flush())
    .context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}
