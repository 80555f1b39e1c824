//! `curupira spirit check|install|list|remove|tools`: Spirit extension packages
//! (SPEC section 3). Every rule lives in `spirit-manifest`; this module only reads
//! arguments, calls it, and prints.
//!
//! - `check PATH [--registry] [--host cli|desktop] [--format human|json]`: PATH is a
//!   package folder (everything is checked, files included), a `.zip` or marketplace
//!   `.tgz` (recognised by their first bytes, checked without unpacking), a
//!   `package.json` file or `-` for standard input (structure rules only: give the
//!   folder to check the files too). Exit 0 no error, 1 errors, 2 unreadable.
//! - `install ARCHIVE --data-dir DIR --host H [--replace]`: unpacks into
//!   `DIR/extensions/H/<package name>/`, or refuses with the reason and leaves nothing.
//!   Exit 0 installed, 1 refused (invalid package or archive, already installed),
//!   2 I/O.
//! - `list --data-dir DIR [--host H] [--format human|json]`: every installed package,
//!   and which no longer validate (exit 1 when one does not).
//! - `remove ID --data-dir DIR --host H`: exit 0 removed, 2 not installed or a bad id.
//! - `tools PATH [--format human|json]`: each tool as the model sees it: invocation
//!   name, description, input schema (JSON: `{"package", "tools": [{"name", "tool",
//!   "description", "input_schema", "output_schema"?}], "diagnostics"}`, the
//!   diagnostics being the package's warnings). Exit 1 (with the diagnostics) when the
//!   package has errors.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use curupira_host::format::Format;
use spirit_manifest::archive::Format as ArchiveFormat;
use spirit_manifest::files::MAX_JSON_BYTES;
use spirit_manifest::install::{self, InstallError, InstallOptions, InstalledPackage};
use spirit_manifest::{Checked, Host, Options, invocation_name};

use super::{
    ReportFormat, STDIN_NAME, finish_report, read_if_stdin, report_output, write_report,
    write_stdout,
};

/// The subcommands of `curupira spirit`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Check a package folder, `package.json`, `.zip` or `.tgz` and report every problem.
    Check(CheckArgs),
    /// Install a package from a `.zip` or marketplace `.tgz` into a Spirit data folder.
    Install(InstallArgs),
    /// List the packages installed in a Spirit data folder.
    List(ListArgs),
    /// Remove an installed package.
    Remove(RemoveArgs),
    /// Show each tool as the model sees it: invocation name, description, input schema.
    Tools(ToolsArgs),
}

/// `cli` or `desktop`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HostArg {
    /// The terminal app.
    Cli,
    /// The desktop app.
    Desktop,
}

impl From<HostArg> for Host {
    fn from(host: HostArg) -> Self {
        match host {
            HostArg::Cli => Host::Cli,
            HostArg::Desktop => Host::Desktop,
        }
    }
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// A package folder, a `package.json`, a `.zip`, a `.tgz`, or `-` for standard input.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    /// Registry-strict mode: what the registry builder requires.
    #[arg(long)]
    registry: bool,
    /// The host the package is meant for: `supportedHosts` must list it.
    #[arg(long, value_enum)]
    host: Option<HostArg>,
    #[command(flatten)]
    report: ReportFormat,
}

#[derive(clap::Args)]
pub struct InstallArgs {
    /// The `.zip` or marketplace `.tgz`.
    #[arg(value_name = "ARCHIVE")]
    archive: PathBuf,
    /// The Spirit data folder (`{spiritDataDir}`).
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// The host to install for.
    #[arg(long, value_enum)]
    host: HostArg,
    /// Replace a package already installed under the same id.
    #[arg(long)]
    replace: bool,
    /// How a refusal's diagnostics are printed: `human` rustc-like, `json` as the
    /// `{"diagnostics": [...], "errors": n, "warnings": n}` object of `spirit check`.
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    format: Format,
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// The Spirit data folder.
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// Only this host's packages.
    #[arg(long, value_enum)]
    host: Option<HostArg>,
    /// `human`: one line per package (host, id, version, name, hosts; `INVALID` and
    /// why); `json`: one object, `{"packages": [{"id", "host", "path", "version",
    /// "valid", "problems", "diagnostics", …}]}`.
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    format: Format,
}

#[derive(clap::Args)]
pub struct RemoveArgs {
    /// The extension id (its npm package name).
    #[arg(value_name = "ID")]
    id: String,
    /// The Spirit data folder.
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// The host it is installed for.
    #[arg(long, value_enum)]
    host: HostArg,
}

#[derive(clap::Args)]
pub struct ToolsArgs {
    /// A package folder, a `package.json`, a `.zip`, a `.tgz`, or `-`.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    /// `human`: each tool's invocation name, description and input schema; `json`:
    /// one object, `{"package", "tools": [{"name", "tool", "description",
    /// "input_schema", …}], "diagnostics"}`.
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    format: Format,
}

/// Runs `curupira spirit …`.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Check(args) => check(&args),
        Command::Install(args) => install(&args),
        Command::List(args) => list(&args),
        Command::Remove(args) => remove(&args),
        Command::Tools(args) => tools(&args),
    }
}

/// Checks whatever `path` is: standard input, a folder, an archive, or a text file.
fn check_path(path: &Path, options: &Options) -> anyhow::Result<Checked> {
    if let Some(bytes) = read_if_stdin(path, "package.json")? {
        return Ok(spirit_manifest::check_bytes(&bytes, STDIN_NAME, options));
    }
    let unreadable = || format!("could not read `{}`", path.display());
    if std::fs::metadata(path).with_context(unreadable)?.is_dir() {
        return Ok(spirit_manifest::check_folder(path, options)?);
    }
    let mut file = std::fs::File::open(path).with_context(unreadable)?;
    // The first four bytes say whether it is an archive; only a text is read whole.
    let mut bytes = Vec::new();
    (&mut file)
        .take(4)
        .read_to_end(&mut bytes)
        .with_context(unreadable)?;
    if ArchiveFormat::of(&bytes).is_some() {
        return Ok(spirit_manifest::check_archive(path, options)?);
    }
    file.take(MAX_JSON_BYTES + 1 - bytes.len() as u64)
        .read_to_end(&mut bytes)
        .with_context(unreadable)?;
    if bytes.len() as u64 > MAX_JSON_BYTES {
        anyhow::bail!(
            "`{}` is larger than {MAX_JSON_BYTES} bytes, and neither a ZIP nor a `.tgz`; give a package folder, a `package.json` or an archive",
            path.display()
        );
    }
    Ok(spirit_manifest::check_bytes(
        &bytes,
        &path.display().to_string(),
        options,
    ))
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let options = Options {
        registry_strict: args.registry,
        host: args.host.map(Host::from),
    };
    let checked = check_path(&args.path, &options)?;
    finish_report(&checked.report, args.report.format)
}

/// `tools --format json`: the package, each tool as the model sees it, and the
/// package's warnings.
#[derive(serde::Serialize)]
struct ToolsJson<'a> {
    package: &'a str,
    tools: Vec<ToolJson<'a>>,
    diagnostics: &'a [curupira_diagnostics::Diagnostic],
}

/// One tool in `tools --format json`.
#[derive(serde::Serialize)]
struct ToolJson<'a> {
    name: String,
    tool: &'a str,
    description: &'a str,
    input_schema: &'a serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<&'a serde_json::Value>,
}

fn tools(args: &ToolsArgs) -> anyhow::Result<ExitCode> {
    let checked = check_path(&args.path, &Options::default())?;
    let Some(package) = checked.package else {
        write_report(&checked.report, args.format)?;
        return Ok(ExitCode::from(1));
    };
    let output = match args.format {
        Format::Json => {
            let tools: Vec<ToolJson<'_>> = package
                .tools()
                .iter()
                .map(|tool| ToolJson {
                    name: invocation_name(&package.name, &tool.name),
                    tool: &tool.name,
                    description: &tool.description,
                    input_schema: &tool.input_schema,
                    output_schema: tool.output_schema.as_ref(),
                })
                .collect();
            let listing = ToolsJson {
                package: &package.name,
                tools,
                diagnostics: checked.report.diagnostics(),
            };
            // Strings, JSON values and diagnostics always serialize.
            serde_json::to_string(&listing).unwrap_or_default() + "\n"
        }
        Format::Human => {
            let mut out = String::new();
            if package.tools().is_empty() {
                let _ = writeln!(out, "{} contributes no tool", package.name);
            }
            for tool in package.tools() {
                let schema = serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default();
                let _ = writeln!(out, "{}", invocation_name(&package.name, &tool.name));
                let _ = writeln!(out, "  tool:        {}", tool.name);
                let _ = writeln!(out, "  description: {}", tool.description.escape_debug());
                let _ = writeln!(out, "  input schema:");
                for line in schema.lines() {
                    let _ = writeln!(out, "    {line}");
                }
            }
            if checked.report.warnings() > 0 {
                out.push('\n');
                out.push_str(&report_output(&checked.report, Format::Human));
            }
            out
        }
    };
    write_stdout(&output).context("could not write the tools to standard output")?;
    Ok(ExitCode::SUCCESS)
}

fn install(args: &InstallArgs) -> anyhow::Result<ExitCode> {
    let mut options = InstallOptions::new(&args.data_dir, args.host.into());
    options.replace = args.replace;
    let refusal = match install::install(&args.archive, &options) {
        Ok(installed) => {
            let replaced = if installed.replaced {
                " (the previous copy was replaced)"
            } else {
                ""
            };
            write_stdout(&format!(
                "installed `{}` {} for {} in {}{replaced}\n",
                installed.id,
                installed.version,
                options.host,
                installed.path.display()
            ))
            .context("could not write to standard output")?;
            return Ok(ExitCode::SUCCESS);
        }
        Err(InstallError::Invalid { report, .. }) => *report,
        Err(error @ InstallError::AlreadyInstalled { .. }) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(1));
        }
        Err(InstallError::Archive { archive, source }) => match source.report(&archive) {
            Some(report) => report,
            None => return Err(InstallError::Archive { archive, source }.into()),
        },
        Err(error) => return Err(error.into()),
    };
    write_report(&refusal, args.format)?;
    eprintln!(
        "error: `{}` was not installed; nothing was written",
        args.archive.display()
    );
    Ok(ExitCode::from(1))
}

fn list(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let packages = install::list(&args.data_dir, args.host.map(Host::from))?;
    let output = match args.format {
        Format::Json => list_json(&packages),
        Format::Human => list_human(&packages),
    };
    write_stdout(&output).context("could not write the list to standard output")?;
    let all_valid = packages.iter().all(InstalledPackage::is_valid);
    Ok(ExitCode::from(if all_valid { 0 } else { 1 }))
}

/// One installed package in `list --format json`; a struct, so members keep this order
/// and the diagnostics keep theirs (SPEC section 7's).
#[derive(serde::Serialize)]
struct Listed<'a> {
    id: &'a str,
    host: &'static str,
    path: String,
    version: Option<&'a str>,
    display_name: Option<&'a str>,
    supported_hosts: Option<Vec<&'static str>>,
    valid: bool,
    problems: &'a [String],
    diagnostics: &'a [curupira_diagnostics::Diagnostic],
}

fn list_json(packages: &[InstalledPackage]) -> String {
    let packages: Vec<Listed<'_>> = packages
        .iter()
        .map(|installed| {
            let package = installed.package();
            Listed {
                id: &installed.id,
                host: installed.host.as_str(),
                path: installed.path.display().to_string(),
                version: package.map(|p| p.version.as_str()),
                display_name: package.map(|p| p.spirit_extension.display_name.as_str()),
                supported_hosts: package.map(|p| {
                    p.spirit_extension
                        .supported_hosts
                        .iter()
                        .map(|h| h.as_str())
                        .collect()
                }),
                valid: installed.is_valid(),
                problems: &installed.problems,
                diagnostics: installed.checked.diagnostics(),
            }
        })
        .collect();
    #[derive(serde::Serialize)]
    struct List<'a> {
        packages: Vec<Listed<'a>>,
    }
    // Strings, options, vectors and diagnostics always serialize.
    serde_json::to_string(&List { packages }).unwrap_or_default() + "\n"
}

fn list_human(packages: &[InstalledPackage]) -> String {
    let mut out = String::new();
    if packages.is_empty() {
        out.push_str("no Spirit extension is installed\n");
        return out;
    }
    let mut invalid = Vec::new();
    for installed in packages {
        match installed.package().filter(|_| installed.is_valid()) {
            Some(package) => {
                let hosts: Vec<&str> = package
                    .spirit_extension
                    .supported_hosts
                    .iter()
                    .map(|h| h.as_str())
                    .collect();
                let _ = writeln!(
                    out,
                    "{:<8} {} {}  \"{}\"  supports {}",
                    installed.host.as_str(),
                    installed.id,
                    package.version,
                    package.spirit_extension.display_name.escape_debug(),
                    hosts.join(", ")
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "{:<8} {}  INVALID: {}",
                    installed.host.as_str(),
                    installed.id,
                    installed.path.display()
                );
                invalid.push(installed);
            }
        }
    }
    for installed in invalid {
        out.push('\n');
        let _ = writeln!(
            out,
            "`{}` ({}) no longer validates:",
            installed.id, installed.host
        );
        for problem in &installed.problems {
            let _ = writeln!(out, "  {problem}");
        }
        if !installed.checked.diagnostics().is_empty() {
            out.push_str(&installed.checked.report.render_human(false));
        }
    }
    out
}

fn remove(args: &RemoveArgs) -> anyhow::Result<ExitCode> {
    let host = Host::from(args.host);
    let path = install::remove(&args.data_dir, host, &args.id)?;
    write_stdout(&format!(
        "removed `{}` for {host} from {}\n",
        args.id,
        path.display()
    ))
    .context("could not write to standard output")?;
    Ok(ExitCode::SUCCESS)
}
