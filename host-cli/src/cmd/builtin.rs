//! `curupira builtin <extension> [--curupira-print-manifest]`: runs an extension built
//! into this executable as a separate process speaking the protocol on stdin/stdout.
//! Hidden from `--help`: the host starts it itself (with its own executable), and an
//! author may run it by hand to see the protocol.

use std::process::ExitCode;

use clap::builder::PossibleValuesParser;
use curupira_extension_sdk::Mode;
use curupira_host::builtin;

/// Arguments of `curupira builtin`.
#[derive(clap::Args)]
pub struct Args {
    /// The extension to run.
    #[arg(value_name = "EXTENSION", value_parser = PossibleValuesParser::new(builtin::NAMES))]
    extension: String,
    /// Print the extension's manifest (TOML) on stdout and exit, running no trigger
    /// code.
    #[arg(long = "curupira-print-manifest")]
    print_manifest: bool,
}

/// Runs the chosen extension until the host sends `shutdown` or closes stdin. Exit
/// codes are the SDK's: 0 after a clean end, 1 when the stream broke, 2 when the
/// manifest could not be printed.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(extension) = builtin::find(&args.extension) else {
        anyhow::bail!(
            "`{}` is not an extension built into curupira",
            args.extension
        );
    };
    let mode = if args.print_manifest {
        Mode::PrintManifest
    } else {
        Mode::Serve
    };
    Ok((extension.run)(mode))
}
