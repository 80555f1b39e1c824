//! `curupira-local-queue [--curupira-print-manifest]`: the `local-queue` extension as
//! an executable of its own, speaking the protocol on stdin/stdout.
//!
//! It runs exactly what `curupira builtin local-queue` runs. The manifest it prints is
//! the built-in's, whose `launch` is `curupira builtin local-queue`: the host starts
//! this extension with its own executable, and this one exists so the extension can be
//! tested (and tried by hand) as the separate process it always is.

use std::process::ExitCode;

use curupira_extension_sdk::Mode;

fn main() -> ExitCode {
    curupira_local_queue::run(Mode::from_args(std::env::args_os().skip(1)))
}
