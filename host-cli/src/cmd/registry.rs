//! `curupira registry check|build|add`: the Spirit marketplace registry (SPEC section
//! 4). Every rule, the build and the scaffold live in `spirit-registry`; this module
//! only reads arguments, picks the npm metadata source, calls it, and prints.
//!
//! ROOT is the folder that holds `registry/`. npm metadata comes from a folder of saved
//! package documents (`--npm-metadata DIR`, offline: `DIR/<url-encoded name>.json`,
//! any spelling of the encoding: `@acme%2fx.json`, `%40acme%2Fx.json`; two files for
//! one name are an error naming both) or
//! an npm registry (`--npm-registry URL`, e.g. `https://registry.npmjs.org`; a progress
//! bar on a terminal). `check` uses no network unless a URL is given.
//!
//! - `check ROOT [--npm-metadata DIR | --npm-registry URL] [--format human|json]`:
//!   entries, registry-wide rules and the derived files (byte for byte with metadata),
//!   and the derived files against the Spirit app's marketplace reader rules
//!   (`registry/reader-…`: the document, the pointer and the rule it breaks).
//! - `build ROOT (--npm-metadata DIR | --npm-registry URL) [--format human|json]`:
//!   writes `registry/catalog.json` and each `detail.json` in the shapes the app's
//!   reader reads — only when nothing is wrong.
//! - `add ROOT --package NAME --id EXTENSION_ID (--npm-metadata DIR | --npm-registry
//!   URL)`: scaffolds `registry/extensions/<id>/entry.json` and `README.md`; in a
//!   ROOT without `registry/extensions/` yet, it starts the registry (makes the
//!   folders).
//!
//! Exit codes: 0 no error (warnings allowed), 1 errors (nothing written), 2 usage or
//! I/O.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use curupira_diagnostics::Report;
use curupira_host::format::Format;
use spirit_registry::{FolderSource, MetadataSource, RegistrySource};

use super::{ReportFormat, report_output, write_stdout};

/// The subcommands of `curupira registry`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Check the entries, the registry-wide rules and the derived files.
    Check(RootArgs),
    /// Write `catalog.json` and every `detail.json` from the entries and npm metadata.
    Build(RootArgs),
    /// Scaffold an entry and README for a published package.
    Add(AddArgs),
}

/// Where npm package documents come from.
#[derive(clap::Args)]
#[group(multiple = false)]
pub struct Source {
    /// A folder of saved npm package documents (`<url-encoded name>.json`).
    #[arg(long, value_name = "DIR")]
    npm_metadata: Option<PathBuf>,
    /// An npm registry URL, e.g. `https://registry.npmjs.org`.
    #[arg(long, value_name = "URL")]
    npm_registry: Option<String>,
}

impl Source {
    fn open(&self) -> anyhow::Result<Option<Box<dyn MetadataSource>>> {
        Ok(match (&self.npm_metadata, &self.npm_registry) {
            (Some(dir), _) => Some(Box::new(FolderSource::new(dir))),
            (None, Some(url)) => Some(Box::new(RegistrySource::new(url)?)),
            (None, None) => None,
        })
    }

    fn required(&self) -> anyhow::Result<Box<dyn MetadataSource>> {
        self.open()?.context(
            "npm metadata is needed: give --npm-metadata DIR (saved package documents) or --npm-registry URL",
        )
    }
}

/// What `check` and `build` take: the registry, where npm metadata comes from, and
/// how to print.
#[derive(clap::Args)]
pub struct RootArgs {
    /// The folder that holds `registry/`.
    #[arg(value_name = "ROOT")]
    root: PathBuf,
    #[command(flatten)]
    source: Source,
    #[command(flatten)]
    report: ReportFormat,
}

#[derive(clap::Args)]
pub struct AddArgs {
    /// The folder that holds `registry/`.
    #[arg(value_name = "ROOT")]
    root: PathBuf,
    /// The npm package to list.
    #[arg(long, value_name = "NAME")]
    package: String,
    /// The extension id, e.g. `yourteam.some-extension`.
    #[arg(long, value_name = "EXTENSION_ID")]
    id: String,
    #[command(flatten)]
    source: Source,
    #[command(flatten)]
    report: ReportFormat,
}

/// Runs `curupira registry …`.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Check(args) => {
            let source = args.source.open()?;
            let report = spirit_registry::check(&args.root, source.as_deref())?;
            finish(&report, &[], &args.root, args.report.format)
        }
        Command::Build(args) => {
            let source = args.source.required()?;
            let built = spirit_registry::build(&args.root, source.as_ref())?;
            finish(
                &built.report,
                &built.written,
                &args.root,
                args.report.format,
            )
        }
        Command::Add(args) => {
            let source = args.source.required()?;
            let scaffolded =
                spirit_registry::scaffold(&args.root, &args.package, &args.id, source.as_ref())?;
            finish(
                &scaffolded.report,
                &scaffolded.written,
                &args.root,
                args.report.format,
            )
        }
    }
}

/// Prints the report (and, in human form, the files written) and picks the exit code.
fn finish(
    report: &Report,
    written: &[PathBuf],
    root: &Path,
    format: Format,
) -> anyhow::Result<ExitCode> {
    let mut output = report_output(report, format);
    if format == Format::Human {
        for path in written {
            let shown = path.strip_prefix(root).unwrap_or(path);
            output.push_str(&format!("wrote {}\n", shown.display()));
        }
    }
    write_stdout(&output).context("could not write the report to standard output")?;
    Ok(ExitCode::from(report.exit_code()))
}
