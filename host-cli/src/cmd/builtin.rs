//! `curupira builtin <extension> [--curupira-print-manifest]`: runs an extension built
//! into this executable as a separate process speaking the protocol on stdin/stdout.
//! Hidden from `--help`: the host starts it itself (with its own executable), and an
//! author may run it by hand to see the protocol.

use std::process::ExitCode;

use curupira_extension_sdk::Mode;
use curupira_local_queue as local_queue;

/// Arguments of `curupira builtin`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    extension: Extension,
}

/// The extensions built into `curupira`.
#[derive(clap::Subcommand)]
enum Extension {
    /// The `jsonl` trigger: items from a JSON Lines file, finished ones recorded in
    /// another.
    LocalQueue(ExtensionArgs),
}

#[derive(clap::Args)]
struct ExtensionArgs {
    /// Print the extension's manifest (TOML) on stdout and exit, running no trigger
    /// code.
    #[arg(long = "curupira-print-manifest")]
    print_manifest: bool,
}

impl ExtensionArgs {
    fn mode(&self) -> Mode {
        if self.print_manifest {
            Mode::PrintManifest
        } else {
            Mode::Serve
        }
    }
}

/// Runs the chosen extension until the host sends `shutdown` or closes stdin. Exit
/// codes are the SDK's: 0 after a clean end, 1 when the stream broke, 2 when the
/// manifest could not be printed.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(match args.extension {
        Extension::LocalQueue(args) => local_queue::run(args.mode()),
    })
}
