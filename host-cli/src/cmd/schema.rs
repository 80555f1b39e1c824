//! `curupira schema config|settings|extension-manifest|spirit-package|registry-entry`:
//! the JSON Schema (draft 2020-12) of one of the five file kinds, derived from the typed models
//! with `schemars`, for editors: Taplo / Even Better TOML read it from a `#:schema` line,
//! VS Code from `$schema` or `json.schemas` (README, "Editor support"). The same
//! schemas are committed under `schemas/`; a test fails when they drift.
//!
//! Output: pretty JSON and a newline on stdout. `schema config --markdown` prints the
//! configuration reference instead (`docs/CONFIG.md`, generated from the schemas of
//! both forms: `config`, then `settings`).
//! Exit code 0; 2 when stdout cannot be written.

use std::process::ExitCode;

use anyhow::Context;
use curupira_host::config::schema::reference::settings_schema;
use curupira_host::config::schema::{
    config_reference, config_schema, generator, settings_reference,
};
use schemars::Schema;

use super::write_stdout;

/// The file kinds with a schema.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// `curupira.toml`, the host's configuration.
    Config,
    /// `settings.toml`, the reference host's configuration, as this host reads it.
    Settings,
    /// `curupira-extension.toml`, an extension's manifest.
    ExtensionManifest,
    /// A Spirit extension's `package.json`.
    SpiritPackage,
    /// A registry `entry.json`.
    RegistryEntry,
}

/// Arguments of `curupira schema`.
#[derive(clap::Args)]
pub struct Args {
    /// The file kind.
    #[arg(value_enum)]
    kind: Kind,
    /// With `config` or `settings`: print the configuration reference (Markdown,
    /// `docs/CONFIG.md`: both forms) generated from the schemas, instead of a schema.
    #[arg(long)]
    markdown: bool,
}

/// The schema of `kind`.
pub fn schema(kind: Kind) -> Schema {
    match kind {
        Kind::Config => config_schema(),
        Kind::Settings => settings_schema(),
        Kind::ExtensionManifest => {
            generator().into_root_schema_for::<curupira_manifest::Manifest>()
        }
        Kind::SpiritPackage => generator().into_root_schema_for::<spirit_manifest::PackageJson>(),
        Kind::RegistryEntry => generator().into_root_schema_for::<spirit_registry::Entry>(),
    }
}

/// Runs `curupira schema`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if args.markdown && !matches!(args.kind, Kind::Config | Kind::Settings) {
        anyhow::bail!(
            "`--markdown` prints the configuration reference and goes with `curupira schema config` only"
        );
    }
    let text = if args.markdown {
        {
            let ours = config_schema();
            config_reference(&ours) + &settings_reference(&settings_schema(), &ours)
        }
    } else {
        let mut text = serde_json::to_string_pretty(&schema(args.kind))
            .context("cannot print the schema as JSON")?;
        text.push('\n');
        text
    };
    write_stdout(&text).context("cannot write the schema to standard output")?;
    Ok(ExitCode::SUCCESS)
}
