//! `curupira spirit check|install|list|remove|tools`: Spirit extension packages
//! (SPEC section 3). Every rule lives in `spirit-manifest`; this module only reads
//! arguments, calls it, and prints.
//!
//! - `check PATH [--registry] [--host cli|desktop] [--format human|json]`: PATH is a
//!   package folder (everything is checked, files included), a `.zip` or marketplace
//!   `.tgz` (recognised by their first bytes, checked without unpacking), a
//!   `package.json` file or `-` for standard input (structure rules only: give the
//!   folder to check the files too). Exit 0 no error, 1 errors, 2 unreadable.
//! - `install ARCHIVE --data-dir DIR --host H [--replace]`: unpacks into the Spirit
//!   app's layout, `DIR/extensions/H/pkg-<base64url(id)>/` with its `extensions.json`
//!   entry, or refuses with the reason and leaves nothing but the app's
//!   `extension-state/` folder. A ZIP never replaces an installed id unless `--replace`;
//!   a marketplace `.tgz` always does. Exit 0 installed, 1 refused (invalid package or
//!   archive, already installed), 2 I/O.
//! - `list --data-dir DIR [--host H] [--format human|json]`: every installed package as
//!   the app reads them (and old-layout installs), which no longer validate (exit 1
//!   when one does not); rewrites `extensions.json` as the app's listing does.
//! - `remove ID --data-dir DIR --host H`: exit 0 removed, 2 not installed or a bad id.
//! - `settings get ID [KEY] | set ID KEY VALUE --data-dir DIR --host H`: the app's
//!   stored settings of an installed extension (`extension-state/ext-….json`). Exit 0,
//!   1 a key or value its `settingsSchema` refuses, 2 not installed or I/O.
//! - `migrate --data-dir DIR [--host H]`: moves installs of the old `<name>/` and
//!   `@scope/name/` layout into the app's. Exit 0, 1 when one had to be left.
//! - `tools PATH [--format human|json]`: each tool as the model sees it: invocation
//!   name (as the Spirit app builds it), description, input schema (JSON: `{"package",
//!   "tools": [{"name", "tool", "description", "input_schema", "output_schema"?}],
//!   "diagnostics"}`, the diagnostics being the package's warnings). Exit 1 (with the
//!   diagnostics) when the package has errors. `tools --data-dir DIR [--host H]`:
//!   every tool the app offers over all the extensions installed for H (default
//!   `cli`), named together as the app names them (collision suffixes in its order);
//!   exit 1 when an installed package no longer validates (it is left out).
//! - `run-tool PKG TOOL [--arguments JSON|@FILE] …` and `system-prompt PKG …`: run the
//!   extension's code in Node.js (`spirit_runtime`) as the Spirit app does
//!   and print what it would pass on; what the app lets pass silently (schema
//!   mismatches, ignored exports, stored settings it fails on, secrets the host cannot
//!   keep) are warnings. Exit 0 done (also: no system prompt, or an error collecting
//!   it), 1 the package has errors or the tool failed (threw, timed out), 2 usage or
//!   I/O (no `node`, an unreadable settings file, an unknown tool or event name).

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use curupira_host::format::Format;
use spirit_manifest::archive::Format as ArchiveFormat;
use spirit_manifest::files::MAX_JSON_BYTES;
use spirit_manifest::install::{self, InstallError, InstallOptions, InstalledPackage, Layout};
use spirit_manifest::{Capability, Checked, Host, Options, PackageJson, codes};
use spirit_runtime::{self as spirit_run, Call, Failure, Invocation, Outcome, Produced, Stores};

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
    /// Read or write an installed extension's stored settings, where the Spirit app keeps them.
    #[command(subcommand)]
    Settings(SettingsCommand),
    /// Move installs of the old `<name>/` and `@scope/name/` layout into the Spirit app's.
    Migrate(MigrateArgs),
    /// Show each tool as the model sees it: invocation name, description, input schema.
    Tools(ToolsArgs),
    /// Run one tool of a package in Node.js, as the Spirit app does, and print its result.
    RunTool(RunToolArgs),
    /// Print what a package adds to the system prompt (`getSystemPrompt()`, else `systemPrompt`, trimmed).
    SystemPrompt(SystemPromptArgs),
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

/// `spirit settings get|set`.
#[derive(clap::Subcommand)]
pub enum SettingsCommand {
    /// Print the stored settings (with declared defaults) as a JSON object, or one value.
    Get(SettingsGetArgs),
    /// Store one setting value (checked against `settingsSchema`), then print them all.
    Set(SettingsSetArgs),
}

/// Where an installed extension is.
#[derive(clap::Args)]
pub struct InstalledArgs {
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
pub struct SettingsGetArgs {
    #[command(flatten)]
    installed: InstalledArgs,
    /// One setting's key (its value is printed, `null` when it has none).
    #[arg(value_name = "KEY")]
    key: Option<String>,
}

#[derive(clap::Args)]
pub struct SettingsSetArgs {
    #[command(flatten)]
    installed: InstalledArgs,
    /// The setting's key.
    #[arg(value_name = "KEY")]
    key: String,
    /// The value: a JSON text (`true`, `3`, `"x"`, `null` to clear), or else taken as a string.
    #[arg(value_name = "VALUE", allow_hyphen_values = true)]
    value: String,
}

#[derive(clap::Args)]
pub struct MigrateArgs {
    /// The Spirit data folder.
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// Only this host's packages.
    #[arg(long, value_enum)]
    host: Option<HostArg>,
}

#[derive(clap::Args)]
pub struct ToolsArgs {
    /// A package folder, a `package.json`, a `.zip`, a `.tgz`, or `-`.
    #[arg(
        value_name = "PATH",
        required_unless_present = "data_dir",
        conflicts_with = "data_dir"
    )]
    path: Option<PathBuf>,
    /// A Spirit data folder instead of PATH: the tools of every extension installed
    /// there for `--host`, named as the app names them together (a name already taken
    /// gets `__1`, `__2`… in the app's order: by display name, then id).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// With `--data-dir`: the host whose installed extensions are shown (default `cli`).
    #[arg(long, value_enum)]
    host: Option<HostArg>,
    /// `human`: each tool's invocation name, description and input schema (and its
    /// extension, with `--data-dir`); `json`: one object, `{"package", "tools":
    /// [{"name", "tool", "description", "input_schema", …}], "diagnostics"}`, or with
    /// `--data-dir` `{"host", "tools": [{"name", "extension", "display_name", "tool",
    /// …}], "invalid": [{"id", "path"}]}`.
    #[arg(long, value_enum, default_value_t = Format::Human, value_name = "FORMAT")]
    format: Format,
}

#[derive(clap::Args)]
pub struct RunToolArgs {
    /// A package folder, or an installed extension id with `--data-dir`.
    #[arg(value_name = "PKG")]
    package: PathBuf,
    /// The tool's name in `contributes.tools`.
    #[arg(value_name = "TOOL")]
    tool: String,
    /// The tool's arguments: a JSON text, or `@FILE` to read them from a file.
    #[arg(long, value_name = "JSON|@FILE", default_value = "{}")]
    arguments: String,
    /// `ctx.toolCallId`.
    #[arg(long, value_name = "ID")]
    tool_call_id: Option<String>,
    /// `ctx.questionsResult`, a JSON text.
    #[arg(long, value_name = "JSON")]
    questions_result: Option<String>,
    #[command(flatten)]
    run: RunOptions,
}

#[derive(clap::Args)]
pub struct SystemPromptArgs {
    /// A package folder, or an installed extension id with `--data-dir`.
    #[arg(value_name = "PKG")]
    package: PathBuf,
    #[command(flatten)]
    run: RunOptions,
}

/// What `run-tool` and `system-prompt` share.
#[derive(clap::Args)]
pub struct RunOptions {
    /// The Spirit data folder: PKG is then the id of an extension installed there.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// A JSON object of stored setting values: `ctx.settings` reads it, and changes are
    /// written back. With `--data-dir` it defaults to the installed extension's own
    /// (`extensions/<host>/extension-state/ext-<base64url(id)>.json`, where the app keeps
    /// them).
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,
    /// A JSON object of secret strings, the desktop keyring (trimmed): `ctx.secrets` reads
    /// it, and changes are written back. Not read for `--host cli`, which has no secret
    /// storage.
    #[arg(long, value_name = "FILE")]
    secrets: Option<PathBuf>,
    /// The host to run as: `cli` (`ctx.host` is `{}`) or `desktop` (`showMessageBox`).
    #[arg(long, value_enum, default_value = "cli")]
    host: HostArg,
    /// Deliver this event first, as Spirit's event dispatch does (activation with
    /// `ctx.activationEvent`, then `onEvent`), when `activationEvents` lists it. A call
    /// without it has no activation event.
    #[arg(long, value_name = "TYPE")]
    event: Option<String>,
    /// The button `showMessageBox` resolves to (default: its `defaultId`, else 0).
    #[arg(long, value_name = "N")]
    message_box_response: Option<u64>,
    /// Stop Node and everything it started after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// `human`: what Spirit would pass on (the tool's result, or the system prompt),
    /// followed by one newline (none when it is empty), with the extension's logs and
    /// the warnings on stderr; `json`: one object, `{"package", "tool", "result",
    /// "result_type", "returned"` or `"system_prompt", "source"`, `"logs",
    /// "settings_changes", "settings_after", "secret_changes", "error",
    /// "diagnostics", …}`.
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
        Command::Settings(command) => settings(&command),
        Command::Migrate(args) => migrate(&args),
        Command::Tools(args) => tools(&args),
        Command::RunTool(args) => run_tool(&args),
        Command::SystemPrompt(args) => system_prompt(&args),
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

/// One tool in `tools --format json`; `extension` and `display_name` only with
/// `--data-dir`, `name` null for a tool the app does not offer.
#[derive(serde::Serialize)]
struct ToolJson<'a> {
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extension: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<&'a str>,
    tool: &'a str,
    description: &'a str,
    input_schema: &'a serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<&'a serde_json::Value>,
}

impl<'a> ToolJson<'a> {
    fn new(name: Option<&'a str>, tool: &'a spirit_manifest::Tool) -> Self {
        ToolJson {
            name,
            extension: None,
            display_name: None,
            tool: &tool.name,
            description: &tool.description,
            input_schema: &tool.input_schema,
            output_schema: tool.output_schema.as_ref(),
        }
    }
}

/// `tools --data-dir … --format json`.
#[derive(serde::Serialize)]
struct InstalledToolsJson<'a> {
    host: &'static str,
    tools: Vec<ToolJson<'a>>,
    invalid: Vec<InvalidJson<'a>>,
}

/// An installed package left out of `tools --data-dir` because it no longer validates.
#[derive(serde::Serialize)]
struct InvalidJson<'a> {
    id: &'a str,
    path: String,
}

/// One tool in the human output of `tools`: the name line, then the tool's fields.
fn write_tool_human(
    out: &mut String,
    name: Option<&str>,
    package: Option<&PackageJson>,
    tool: &spirit_manifest::Tool,
) {
    let schema = serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default();
    let _ = writeln!(out, "{}", name.unwrap_or("(not offered to the model)"));
    if let Some(package) = package {
        let _ = writeln!(
            out,
            "  extension:   {} \"{}\"",
            package.name,
            package.spirit_extension.display_name.escape_debug()
        );
    }
    let _ = writeln!(out, "  tool:        {}", tool.name);
    let _ = writeln!(out, "  description: {}", tool.description.escape_debug());
    let _ = writeln!(out, "  input schema:");
    for line in schema.lines() {
        let _ = writeln!(out, "    {line}");
    }
}

/// `tools PATH`: one package's tools, named as the app names them when that package is
/// the only one installed.
fn package_tools(path: &Path, format: Format) -> anyhow::Result<ExitCode> {
    let checked = check_path(path, &Options::default())?;
    let Some(package) = checked.package else {
        write_report(&checked.report, format)?;
        return Ok(ExitCode::from(1));
    };
    let offered = spirit_manifest::offered_tools_in_order([&package]);
    // Every tool, in manifest order, with its name when the app offers it (all or none).
    let named: Vec<(Option<&str>, &spirit_manifest::Tool)> = if offered.is_empty() {
        package.tools().iter().map(|tool| (None, tool)).collect()
    } else {
        offered
            .iter()
            .map(|o| (Some(o.name.as_str()), o.tool))
            .collect()
    };
    let output = match format {
        Format::Json => {
            let listing = ToolsJson {
                package: &package.name,
                tools: named
                    .iter()
                    .map(|&(name, tool)| ToolJson::new(name, tool))
                    .collect(),
                diagnostics: checked.report.diagnostics(),
            };
            // Strings, JSON values and diagnostics always serialize.
            serde_json::to_string(&listing).unwrap_or_default() + "\n"
        }
        Format::Human => {
            let mut out = String::new();
            if package.tools().is_empty() {
                let _ = writeln!(out, "{} contributes no tool", package.name);
            } else if offered.is_empty() {
                let _ = writeln!(
                    out,
                    "{} does not request both `tool-definitions` and `tool-execution`: the app offers none of its tools",
                    package.name
                );
            }
            for &(name, tool) in &named {
                write_tool_human(&mut out, name, None, tool);
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

/// `tools --data-dir DIR --host H`: every tool the app offers over the extensions
/// installed for H, named together.
fn installed_tools(data_dir: &Path, host: Host, format: Format) -> anyhow::Result<ExitCode> {
    let installed = install::list(data_dir, Some(host))?;
    // As the app names them: every package it loads, also one that breaks at run time
    // (tools without `main`), so the `__N` suffixes are the app's.
    let offered = spirit_manifest::offered_tools(installed.iter().filter_map(|i| i.loaded()));
    let invalid: Vec<&InstalledPackage> =
        installed.iter().filter(|i| i.loaded().is_none()).collect();
    let output = match format {
        Format::Json => {
            let listing = InstalledToolsJson {
                host: host.as_str(),
                tools: offered
                    .iter()
                    .map(|o| ToolJson {
                        extension: Some(&o.package.name),
                        display_name: Some(&o.package.spirit_extension.display_name),
                        ..ToolJson::new(Some(&o.name), o.tool)
                    })
                    .collect(),
                invalid: invalid
                    .iter()
                    .map(|i| InvalidJson {
                        id: &i.id,
                        path: i.path.display().to_string(),
                    })
                    .collect(),
            };
            // Strings and JSON values always serialize.
            serde_json::to_string(&listing).unwrap_or_default() + "\n"
        }
        Format::Human => {
            let mut out = String::new();
            if offered.is_empty() {
                let _ = writeln!(
                    out,
                    "no extension installed for {host} offers a tool to the model"
                );
            }
            for o in &offered {
                write_tool_human(&mut out, Some(&o.name), Some(o.package), o.tool);
            }
            out
        }
    };
    write_stdout(&output).context("could not write the tools to standard output")?;
    for package in installed
        .iter()
        .filter(|i| i.loaded().is_some() && i.package().is_none())
    {
        eprintln!(
            "warning: `{}` ({}) breaks at run time, but the app loads it and names its tools, so they are listed; `curupira spirit list --data-dir {}` says what is wrong",
            package.id,
            package.path.display(),
            data_dir.display()
        );
    }
    for package in &invalid {
        eprintln!(
            "warning: `{}` ({}) no longer validates and is left out; `curupira spirit list --data-dir {}` says why",
            package.id,
            package.path.display(),
            data_dir.display()
        );
    }
    Ok(ExitCode::from(if invalid.is_empty() { 0 } else { 1 }))
}

fn tools(args: &ToolsArgs) -> anyhow::Result<ExitCode> {
    match (&args.data_dir, &args.path) {
        (Some(data_dir), _) => {
            let host = args.host.unwrap_or(HostArg::Cli);
            installed_tools(data_dir, host.into(), args.format)
        }
        (None, Some(_)) if args.host.is_some() => anyhow::bail!(
            "`--host` goes with `--data-dir`: a package PATH is shown as the package alone"
        ),
        (None, Some(path)) => package_tools(path, args.format),
        // clap requires one of them.
        (None, None) => anyhow::bail!("give a package PATH or `--data-dir DIR`"),
    }
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
                "installed `{}` {} for {} in {} ({}){replaced}\n",
                installed.id,
                installed.version,
                options.host,
                installed.path.display(),
                installed
                    .entry
                    .install_source
                    .as_deref()
                    .unwrap_or("archive")
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
    eprintln!("error: `{}` was not installed", args.archive.display());
    Ok(ExitCode::from(1))
}

fn list(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let hosts = args
        .host
        .map_or_else(|| Host::ALL.to_vec(), |host| vec![Host::from(host)]);
    let mut packages = Vec::new();
    for host in hosts {
        // Lists as the app does, and rewrites `extensions.json` as its listing does.
        let mut listed = install::sync_index(&args.data_dir, host)?;
        // In the app's order: by display name, then id, as its collator compares them;
        // what the app cannot load after, by id.
        listed.sort_by(|a, b| match (a.loaded(), b.loaded()) {
            (Some(x), Some(y)) => spirit_manifest::installed_order(x, y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => spirit_manifest::compare_ids(&a.id, &b.id),
        });
        packages.extend(listed);
    }
    let output = match args.format {
        Format::Json => list_json(&packages),
        Format::Human => list_human(&packages, &args.data_dir),
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
    directory_name: &'a str,
    layout: &'static str,
    seen_by_app: bool,
    version: Option<&'a str>,
    display_name: Option<&'a str>,
    supported_hosts: Option<Vec<&'static str>>,
    installed_at_unix_ms: Option<u64>,
    install_source: Option<&'a str>,
    archive_file_name: Option<&'a str>,
    valid: bool,
    state: &'static str,
    problems: &'a [String],
    diagnostics: &'a [curupira_diagnostics::Diagnostic],
}

/// Whether an installed package that does not validate is one the Spirit app still
/// lists and runs: every error is of the "breaks at run time" level (tools never
/// offered, a `main` that cannot be loaded…), nothing else is wrong with it.
fn only_breaks_at_run_time(installed: &InstalledPackage) -> bool {
    let errors: Vec<_> = installed
        .checked
        .diagnostics()
        .iter()
        .filter(|d| d.severity == curupira_diagnostics::Severity::Error)
        .collect();
    installed.problems.is_empty()
        && !errors.is_empty()
        && errors
            .iter()
            .all(|d| codes::level(&d.code) == Some(codes::Level::BreaksAtRunTime))
}

/// `valid`, `broken` (the app lists and runs it, but it cannot work as declared) or
/// `invalid`.
fn state_of(installed: &InstalledPackage) -> &'static str {
    if installed.is_valid() {
        "valid"
    } else if only_breaks_at_run_time(installed) {
        "broken"
    } else {
        "invalid"
    }
}

fn list_json(packages: &[InstalledPackage]) -> String {
    let packages: Vec<Listed<'_>> = packages
        .iter()
        .map(|installed| {
            let package = installed.loaded();
            let entry = installed.entry.as_ref();
            Listed {
                id: &installed.id,
                host: installed.host.as_str(),
                path: installed.path.display().to_string(),
                directory_name: &installed.directory_name,
                layout: match installed.layout {
                    Layout::App => "app",
                    Layout::Legacy => "legacy",
                },
                seen_by_app: installed.seen_by_app,
                version: package.map(|p| p.version.as_str()),
                display_name: package.map(|p| p.spirit_extension.display_name.as_str()),
                supported_hosts: package.map(|p| {
                    p.spirit_extension
                        .supported_hosts
                        .iter()
                        .map(|h| h.as_str())
                        .collect()
                }),
                installed_at_unix_ms: entry.map(|e| e.installed_at_unix_ms),
                install_source: entry.and_then(|e| e.install_source.as_deref()),
                archive_file_name: entry.and_then(|e| e.archive_file_name.as_deref()),
                valid: installed.is_valid(),
                state: state_of(installed),
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

fn list_human(packages: &[InstalledPackage], data_dir: &Path) -> String {
    let mut out = String::new();
    if packages.is_empty() {
        out.push_str("no Spirit extension is installed\n");
        return out;
    }
    let mut invalid = Vec::new();
    for installed in packages {
        let legacy = if installed.layout == Layout::Legacy {
            if installed.seen_by_app {
                format!("  (old layout: `{}/`)", installed.directory_name)
            } else {
                format!(
                    "  (old layout: `{}/`, which the Spirit app does not see)",
                    installed.directory_name
                )
            }
        } else {
            String::new()
        };
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
                    "{:<8} {} {}  \"{}\"  supports {}{legacy}",
                    installed.host.as_str(),
                    installed.id,
                    package.version,
                    package.spirit_extension.display_name.escape_debug(),
                    hosts.join(", ")
                );
            }
            None => {
                let label = if only_breaks_at_run_time(installed) {
                    "BROKEN (the Spirit app lists it, but it cannot work as declared)"
                } else {
                    "INVALID"
                };
                let _ = writeln!(
                    out,
                    "{:<8} {}  {label}: {}{legacy}",
                    installed.host.as_str(),
                    installed.id,
                    installed.path.display()
                );
                invalid.push(installed);
            }
        }
    }
    let legacy = packages
        .iter()
        .filter(|p| p.layout == Layout::Legacy)
        .count();
    if legacy > 0 {
        let _ = writeln!(
            out,
            "\n{legacy} install(s) in the old layout; move them into the Spirit app's with `curupira spirit migrate --data-dir {}`",
            data_dir.display()
        );
    }
    for installed in invalid {
        out.push('\n');
        let what = if only_breaks_at_run_time(installed) {
            "is installed, but cannot work as declared"
        } else {
            "no longer validates"
        };
        let _ = writeln!(out, "`{}` ({}) {what}:", installed.id, installed.host);
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
    let removed = install::remove(&args.data_dir, host, &args.id)?;
    let mut out = String::new();
    for path in removed {
        let _ = writeln!(
            out,
            "removed `{}` for {host} from {}",
            args.id,
            path.display()
        );
    }
    write_stdout(&out).context("could not write to standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// The installed package `args` names, checked for its host.
fn installed_package(args: &InstalledArgs) -> anyhow::Result<PackageJson> {
    let host = Host::from(args.host);
    let Some(dir) = install::find(&args.data_dir, host, &args.id)? else {
        anyhow::bail!(
            "no extension `{}` is installed for {host} in `{}`; see `curupira spirit list --data-dir {}`",
            args.id,
            args.data_dir.display(),
            args.data_dir.display()
        );
    };
    let checked = spirit_manifest::check_folder(
        &dir,
        &Options {
            registry_strict: false,
            host: Some(host),
        },
    )?;
    checked.package.ok_or_else(|| {
        anyhow::anyhow!(
            "the extension `{}` in `{}` no longer validates ({} error(s)); see `curupira spirit check {}`",
            args.id,
            dir.display(),
            checked.report.errors(),
            dir.display()
        )
    })
}

fn settings(command: &SettingsCommand) -> anyhow::Result<ExitCode> {
    use spirit_manifest::settings::{Values, check_setting_key, check_update, with_defaults};
    match command {
        SettingsCommand::Get(args) => {
            let at = &args.installed;
            let package = installed_package(at)?;
            let schema = &package.spirit_extension.settings_schema;
            let stored = install::read_settings(&at.data_dir, at.host.into(), &at.id)?;
            let all = match with_defaults(schema, &stored) {
                Ok(all) => all,
                Err(error) => {
                    eprintln!(
                        "error: the stored settings of `{}` cannot be read as the app reads them: {error}",
                        at.id
                    );
                    return Ok(ExitCode::from(1));
                }
            };
            let value = match &args.key {
                Some(key) => {
                    if let Err(error) = check_setting_key(schema, key) {
                        eprintln!("error: {error}");
                        return Ok(ExitCode::from(1));
                    }
                    all.get(key).cloned().unwrap_or(serde_json::Value::Null)
                }
                None => serde_json::Value::Object(all),
            };
            write_stdout(&format!("{}\n", serde_json::to_string_pretty(&value)?))
                .context("could not write to standard output")?;
            Ok(ExitCode::SUCCESS)
        }
        SettingsCommand::Set(args) => {
            let at = &args.installed;
            let host = Host::from(at.host);
            let package = installed_package(at)?;
            let schema = &package.spirit_extension.settings_schema;
            let value = serde_json::from_str(&args.value)
                .unwrap_or_else(|_| serde_json::Value::String(args.value.clone()));
            let mut change = Values::new();
            change.insert(args.key.clone(), value.clone());
            if let Err(errors) = check_update(schema, &change) {
                for error in errors {
                    eprintln!("error: {error}");
                }
                eprintln!("error: nothing was stored");
                return Ok(ExitCode::from(1));
            }
            let mut stored = install::read_settings(&at.data_dir, host, &at.id)?;
            if value.is_null() {
                stored.remove(&args.key);
            } else {
                stored.insert(args.key.clone(), value);
            }
            install::write_settings(&at.data_dir, host, &at.id, &stored)?;
            let all = match with_defaults(schema, &stored) {
                Ok(all) => serde_json::Value::Object(all),
                Err(error) => {
                    eprintln!(
                        "error: `{}` was stored, but another stored setting of `{}` breaks its declaration, so the app cannot read them: {error}",
                        args.key, at.id
                    );
                    return Ok(ExitCode::from(1));
                }
            };
            write_stdout(&format!("{}\n", serde_json::to_string_pretty(&all)?))
                .context("could not write to standard output")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn migrate(args: &MigrateArgs) -> anyhow::Result<ExitCode> {
    let report = install::migrate(&args.data_dir, args.host.map(Host::from))?;
    let mut out = String::new();
    if report.is_empty() {
        out.push_str("nothing to migrate: every install is in the Spirit app's layout\n");
    }
    let mut left = 0;
    for item in &report {
        match (&item.to, &item.skipped) {
            (Some(to), _) => {
                let _ = writeln!(
                    out,
                    "moved `{}` for {} from {} to {}",
                    item.id,
                    item.host,
                    item.from.display(),
                    to.display()
                );
            }
            (None, reason) => {
                left += 1;
                let _ = writeln!(
                    out,
                    "left `{}` for {} in {}: {}",
                    item.id,
                    item.host,
                    item.from.display(),
                    reason.as_deref().unwrap_or("it could not be moved")
                );
            }
        }
    }
    write_stdout(&out).context("could not write to standard output")?;
    Ok(ExitCode::from(if left == 0 { 0 } else { 1 }))
}

/// A package that passed `spirit check` for the host it is run as.
struct Prepared {
    dir: PathBuf,
    package: PackageJson,
    /// Its warnings (printed on stderr in the human format, listed in JSON).
    report: curupira_diagnostics::Report,
}

/// Which of the two running commands is preparing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Running {
    Tool,
    SystemPrompt,
}

/// Finds the package of `run-tool` / `system-prompt` (a folder, or an installed id with
/// `--data-dir`) and checks it as `spirit check --host` would. `Ok(Err(code))` when it
/// has errors, after the report was printed (in JSON with `"result": null` or
/// `"system_prompt": null`: nothing was run).
fn prepare(
    package: &Path,
    options: &RunOptions,
    running: Running,
) -> anyhow::Result<Result<Prepared, ExitCode>> {
    let host = Host::from(options.host);
    let dir = match &options.data_dir {
        Some(data_dir) => {
            let id = package.to_str().unwrap_or_default();
            if !install::is_valid_id(id) {
                anyhow::bail!(
                    "`{}` is not an extension id (an npm package name); with `--data-dir`, PKG is the id of an installed extension",
                    package.display()
                );
            }
            // Where the app keeps it (`pkg-<base64url(id)>/`, or any direct folder whose
            // package.json names it), else our old layout.
            let Some(dir) = install::find(data_dir, host, id)? else {
                anyhow::bail!(
                    "no extension `{id}` is installed for {host} in `{}`; see `curupira spirit list --data-dir {}`",
                    data_dir.display(),
                    data_dir.display()
                );
            };
            dir
        }
        None => {
            if !package.is_dir() {
                anyhow::bail!(
                    "`{}` is not a package folder: give the folder that holds `package.json` (install an archive first with `curupira spirit install`)",
                    package.display()
                );
            }
            package.to_owned()
        }
    };
    let checked = spirit_manifest::check_folder(
        &dir,
        &Options {
            registry_strict: false,
            host: Some(host),
        },
    )?;
    // `system-prompt` runs what the app runs: a package whose `main` is a folder is
    // installed and asked, and gives nothing (loading it fails).
    let loaded = match running {
        Running::SystemPrompt
            if checked
                .diagnostics()
                .iter()
                .filter(|d| d.is_error())
                .all(|d| d.code == codes::MAIN_NOT_A_FILE) =>
        {
            spirit_manifest::loaded_package(&dir, &checked)
        }
        _ => checked.package.clone(),
    };
    let Some(model) = loaded else {
        if options.format == Format::Json {
            let mut json = match serde_json::to_value(&checked.report) {
                Ok(serde_json::Value::Object(map)) => map,
                _ => serde_json::Map::new(),
            };
            let member = match running {
                Running::Tool => "result",
                Running::SystemPrompt => "system_prompt",
            };
            json.insert(member.to_owned(), serde_json::Value::Null);
            json.insert(
                "error".to_owned(),
                "the package has errors: nothing was run".into(),
            );
            write_stdout(&(serde_json::Value::Object(json).to_string() + "\n"))
                .context("could not write the report to standard output")?;
        } else {
            write_report(&checked.report, options.format)?;
        }
        return Ok(Err(ExitCode::from(1)));
    };
    if options.format == Format::Human && checked.report.warnings() > 0 {
        eprint!("{}", checked.report.render_human(false));
    }
    Ok(Ok(Prepared {
        dir,
        package: model,
        report: checked.report,
    }))
}

/// The arguments text and the name diagnostics give it: `@FILE` is read (up to the
/// size limit), anything else is the JSON itself.
fn arguments_text(arguments: &str) -> anyhow::Result<(String, String)> {
    let Some(path) = arguments.strip_prefix('@') else {
        return Ok((arguments.to_owned(), "--arguments".to_owned()));
    };
    let unreadable = || format!("could not read the arguments file `{path}`");
    let file = std::fs::File::open(path).with_context(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_JSON_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(unreadable)?;
    if bytes.len() as u64 > MAX_JSON_BYTES {
        anyhow::bail!("the arguments file `{path}` is larger than {MAX_JSON_BYTES} bytes");
    }
    let text = String::from_utf8(bytes).map_err(|error| {
        anyhow::anyhow!(
            "the arguments file `{path}` is not UTF-8 (invalid byte at offset {})",
            error.utf8_error().valid_up_to()
        )
    })?;
    Ok((text, path.to_owned()))
}

/// A warning about the run, located in the package's `package.json` at `pointer`.
fn run_warning(
    prepared: &Prepared,
    code: &'static str,
    pointer: &str,
    message: String,
) -> curupira_diagnostics::Diagnostic {
    let file = prepared
        .dir
        .join(spirit_manifest::PACKAGE_JSON)
        .display()
        .to_string();
    let path = curupira_diagnostics::JsonPointer::parse(pointer)
        .unwrap_or_else(|_| curupira_diagnostics::JsonPointer::root());
    curupira_diagnostics::Diagnostic::warning(code, file, path, message)
}

/// The settings and secrets of a run, and the warnings they call for: stored settings
/// Spirit would fail to read or read as undefined, secrets the host cannot keep
/// (the CLI host has none) or keeps trimmed (desktop). A required secret with no
/// value gets a note on stderr (Spirit would ask the user for it).
fn load_stores(
    prepared: &Prepared,
    options: &RunOptions,
    warnings: &mut Vec<curupira_diagnostics::Diagnostic>,
) -> anyhow::Result<Stores> {
    let package = &prepared.package;
    let host = Host::from(options.host);
    // With `--data-dir` and no `--settings`, the settings are the installed
    // extension's, where the app keeps them.
    let installed = match (&options.settings, &options.data_dir) {
        (None, Some(data_dir)) => Some(install::settings_file(data_dir, host, &package.name)),
        _ => None,
    };
    let stores = Stores::load(
        package,
        host,
        options.settings.as_deref().or(installed.as_deref()),
        installed.is_some(),
        options.secrets.as_deref(),
    )?;
    let schema = &package.spirit_extension.settings_schema;
    for problem in stores.settings.problems() {
        let index = schema
            .iter()
            .position(|def| def.key == problem.key())
            .unwrap_or_default();
        let consequence = if matches!(
            problem,
            spirit_manifest::settings::SettingError::Required { .. }
        ) {
            "Spirit does not stop the call for it".to_owned()
        } else {
            format!(
                "Spirit fails every `ctx.settings` read while it is stored (\"{}\")",
                problem.spirit_message()
            )
        };
        warnings.push(run_warning(
            prepared,
            codes::STORED_SETTINGS,
            &format!("/spiritExtension/settingsSchema/{index}"),
            format!("the stored settings: {problem}; {consequence}"),
        ));
    }
    let slots = &package.spirit_extension.secret_slots;
    if host == Host::Cli {
        if let Some(file) = &options.secrets {
            warnings.push(run_warning(
                prepared,
                codes::SECRET_STORAGE,
                "/spiritExtension/secretSlots",
                format!(
                    "`--secrets {}` is not read: the Spirit CLI host has no secret storage (`ctx.secrets.get` gives undefined, `has` false, `set` fails, `delete` does nothing); use `--host desktop` to run with secrets",
                    file.display()
                ),
            ));
        } else if !slots.is_empty() {
            warnings.push(run_warning(
                prepared,
                codes::SECRET_STORAGE,
                "/spiritExtension/secretSlots",
                format!(
                    "`{}` declares secret slots, but the Spirit CLI host has no secret storage: every secret reads as undefined and `ctx.secrets.set` fails",
                    package.name
                ),
            ));
        }
    } else {
        for key in stores.secrets.trimmed() {
            warnings.push(run_warning(
                prepared,
                codes::SECRET_STORAGE,
                "/spiritExtension/secretSlots",
                format!(
                    "the stored value of the secret `{key}` has spaces around it: the desktop keyring gives it trimmed"
                ),
            ));
        }
        for key in stores.secrets.missing_required() {
            eprintln!(
                "note: the required secret `{key}` has no value (give it in the `--secrets` file)"
            );
        }
    }
    Ok(stores)
}

/// The event `--event` names, when Spirit's event dispatch would deliver it to the
/// package (its `activationEvents` lists it); a warning when it would not.
fn event_to_deliver(
    prepared: &Prepared,
    options: &RunOptions,
    warnings: &mut Vec<curupira_diagnostics::Diagnostic>,
) -> anyhow::Result<Option<spirit_manifest::ActivationEvent>> {
    match spirit_run::checks::event_to_deliver(&prepared.package, options.event.as_deref())
        .map_err(anyhow::Error::msg)?
    {
        Ok(event) => Ok(event),
        Err(message) => {
            warnings.push(run_warning(
                prepared,
                codes::EVENT_NOT_DELIVERED,
                "/spiritExtension/activationEvents",
                message,
            ));
            Ok(None)
        }
    }
}

/// The members of `--format json` that both commands print.
fn outcome_json(
    prepared: &Prepared,
    outcome: Option<&Outcome>,
    stores: &Stores,
    error: Option<&str>,
    diagnostics: &[curupira_diagnostics::Diagnostic],
) -> serde_json::Map<String, serde_json::Value> {
    let mut all: Vec<&curupira_diagnostics::Diagnostic> =
        prepared.report.diagnostics().iter().collect();
    all.extend(diagnostics);
    let value = serde_json::json!({
        "package": prepared.package.name,
        "logs": outcome.map(|o| o.logs.clone()).unwrap_or_default(),
        "settings_changes": outcome.map(|o| o.settings_changes.clone()).unwrap_or_default(),
        "settings_after": stores.settings.values(),
        "secret_changes": outcome.map(|o| o.secret_changes.clone()).unwrap_or_default(),
        "error": error,
        "node": outcome.map(|o| o.node_version.clone()),
        "diagnostics": all,
    });
    match value {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// The run's own warnings: the loader's notes and the settings operations that
/// hid a mistake.
fn note_warnings(
    prepared: &Prepared,
    outcome: &Outcome,
    warnings: &mut Vec<curupira_diagnostics::Diagnostic>,
) {
    for note in &outcome.notes {
        let pointer = match note.code {
            codes::UNDECLARED_SETTING => "/spiritExtension/settingsSchema",
            codes::SECRET_STORAGE => "/spiritExtension/secretSlots",
            _ => "/main",
        };
        warnings.push(run_warning(
            prepared,
            note.code,
            pointer,
            note.message.clone(),
        ));
    }
}

/// One sentence for a call that failed.
fn failure_text(failure: &Failure, what: &str) -> String {
    match failure {
        Failure::Threw { stage, message } if stage == "tool" || stage == "systemPrompt" => {
            format!("{what} failed: {message}")
        }
        other => format!("{what} failed: {other}"),
    }
}

/// Prints `--format json`'s object, or the human output, the warnings and the errors
/// on stderr; the exit code.
fn finish_run(
    format: Format,
    json: serde_json::Map<String, serde_json::Value>,
    human: &str,
    warnings: &[curupira_diagnostics::Diagnostic],
    errors: &[String],
) -> anyhow::Result<ExitCode> {
    if format == Format::Human && !warnings.is_empty() {
        let report: curupira_diagnostics::Report = warnings.iter().cloned().collect();
        eprint!("{}", report.render_human(false));
    }
    for error in errors {
        eprintln!("error: {error}");
    }
    let output = match format {
        // A map of JSON values always serializes.
        Format::Json => serde_json::to_string(&json).unwrap_or_default() + "\n",
        // One newline after the text, so a terminal's prompt starts on a line of its
        // own; the text itself is exact (drop the last newline to get it back; JSON's
        // members hold it as it is). Nothing is nothing.
        Format::Human if human.is_empty() => String::new(),
        Format::Human => format!("{human}\n"),
    };
    write_stdout(&output).context("could not write the result to standard output")?;
    Ok(ExitCode::from(if errors.is_empty() { 0 } else { 1 }))
}

fn run_tool(args: &RunToolArgs) -> anyhow::Result<ExitCode> {
    let options = &args.run;
    let prepared = match prepare(&args.package, options, Running::Tool)? {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let package = &prepared.package;
    let tool = spirit_run::checks::find_tool(package, &args.tool).map_err(anyhow::Error::msg)?;
    let mut warnings = Vec::new();
    let event = event_to_deliver(&prepared, options, &mut warnings)?;
    let (text, file) = arguments_text(&args.arguments)?;
    let (arguments, report) = match spirit_run::checks::check_arguments(tool, &text, &file) {
        Ok(checked) => checked,
        Err(diagnostic) => anyhow::bail!("the arguments are not JSON: {diagnostic}"),
    };
    // Spirit does not check the arguments: a mismatch is reported, the tool runs.
    let argument_report = report;
    let questions_result = match &args.questions_result {
        Some(text) => Some(
            serde_json::from_str::<serde_json::Value>(text)
                .map_err(|error| anyhow::anyhow!("`--questions-result` is not JSON: {error}"))?,
        ),
        None => None,
    };
    if questions_result.is_some()
        && tool.approval_mode != Some(spirit_manifest::ApprovalMode::NeedQuestions)
    {
        eprintln!(
            "note: Spirit sets `questionsResult` only for a tool whose `approvalMode` is `need-questions`; `{}` is not one",
            tool.name
        );
    }
    let mut stores = load_stores(&prepared, options, &mut warnings)?;
    if format_is_human(options) && argument_report.warnings() > 0 {
        eprint!("{}", argument_report.render_human(false));
    }
    let mut diagnostics: Vec<curupira_diagnostics::Diagnostic> = Vec::new();
    diagnostics.extend(argument_report.diagnostics().iter().cloned());
    let what = format!("tool `{}`", tool.name);
    if !package
        .spirit_extension
        .requested_capabilities
        .contains(&Capability::ToolExecution)
    {
        let error = format!(
            "{what} failed: The extension does not declare the tool-execution capability: {}",
            package.name
        );
        diagnostics.extend(warnings.iter().cloned());
        let mut json = outcome_json(&prepared, None, &stores, Some(&error), &diagnostics);
        json.insert("tool".to_owned(), tool.name.clone().into());
        json.insert("result".to_owned(), serde_json::Value::Null);
        json.insert("result_type".to_owned(), serde_json::Value::Null);
        return finish_run(options.format, json, "", &warnings, &[error]);
    }
    let invocation = Invocation {
        package,
        dir: &prepared.dir,
        host: options.host.into(),
        event,
        call: Call::Tool {
            name: tool.name.clone(),
            arguments,
            tool_call_id: args.tool_call_id.clone(),
            questions_result,
        },
        timeout: std::time::Duration::from_secs(options.timeout),
        message_box_response: options.message_box_response,
    };
    let outcome = spirit_run::run(&invocation, &mut stores, &mut std::io::stderr())?;
    note_warnings(&prepared, &outcome, &mut warnings);

    let mut errors = Vec::new();
    let (printed, kind, value, returned) = match &outcome.result {
        Ok(Produced::Text { text, returned }) => {
            (Some(text.clone()), "string", None, Some(returned.clone()))
        }
        Ok(Produced::Json {
            text,
            value,
            returned,
        }) => {
            // Spirit does not check the result either.
            let report = spirit_run::checks::check_result(tool, text, value, "<result>");
            if format_is_human(options) && report.warnings() > 0 {
                eprint!("{}", report.render_human(false));
            }
            diagnostics.extend(report.diagnostics().iter().cloned());
            (
                Some(text.clone()),
                "string",
                Some(value.clone()),
                Some(returned.clone()),
            )
        }
        Ok(Produced::NoText { returned }) => {
            eprintln!(
                "note: the tool returned {returned}, which JSON.stringify turns into undefined: Spirit passes no text at all"
            );
            (None, "undefined", None, Some(returned.clone()))
        }
        Ok(Produced::Prompt { .. } | Produced::NoPrompt) => {
            errors.push(format!("{what} failed: node reported a system prompt"));
            (None, "none", None, None)
        }
        Err(failure) => {
            errors.push(failure_text(failure, &what));
            (None, "none", None, None)
        }
    };
    diagnostics.extend(warnings.iter().cloned());
    let mut json = outcome_json(
        &prepared,
        Some(&outcome),
        &stores,
        errors.first().map(String::as_str),
        &diagnostics,
    );
    json.insert("tool".to_owned(), tool.name.clone().into());
    json.insert("result".to_owned(), printed.clone().into());
    json.insert(
        "result_type".to_owned(),
        if errors.is_empty() {
            kind.into()
        } else {
            serde_json::Value::Null
        },
    );
    if let Some(value) = value {
        json.insert("value".to_owned(), value);
    }
    if let Some(returned) = returned {
        json.insert("returned".to_owned(), returned.into());
    }
    finish_run(
        options.format,
        json,
        printed.as_deref().unwrap_or_default(),
        &warnings,
        &errors,
    )
}

fn format_is_human(options: &RunOptions) -> bool {
    options.format == Format::Human
}

fn system_prompt(args: &SystemPromptArgs) -> anyhow::Result<ExitCode> {
    let options = &args.run;
    let prepared = match prepare(&args.package, options, Running::SystemPrompt)? {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let package = &prepared.package;
    let mut warnings = Vec::new();
    let event = event_to_deliver(&prepared, options, &mut warnings)?;
    let mut stores = load_stores(&prepared, options, &mut warnings)?;
    let no_run = |warnings: &mut Vec<_>, pointer: &str, message: String| {
        warnings.push(run_warning(
            &prepared,
            codes::SYSTEM_PROMPT_DROPPED,
            pointer,
            message,
        ));
    };
    let capable = package
        .spirit_extension
        .requested_capabilities
        .contains(&Capability::SystemPrompt);
    let main_is_a_folder = package
        .main
        .as_deref()
        .is_some_and(|main| prepared.dir.join(main).is_dir());
    if capable && main_is_a_folder {
        no_run(
            &mut warnings,
            "/main",
            format!(
                "`main` of `{}` is a folder: loading it fails, so Spirit logs the error and adds nothing to the system prompt",
                package.name
            ),
        );
        let mut json = outcome_json(&prepared, None, &stores, None, &warnings);
        json.insert("system_prompt".to_owned(), serde_json::Value::Null);
        json.insert("source".to_owned(), serde_json::Value::Null);
        return finish_run(options.format, json, "", &warnings, &[]);
    }
    if !capable || package.main.is_none() {
        if capable {
            no_run(
                &mut warnings,
                "/main",
                format!(
                    "`{}` has no `main`: Spirit adds nothing to the system prompt",
                    package.name
                ),
            );
        } else {
            no_run(
                &mut warnings,
                "/spiritExtension/requestedCapabilities",
                format!(
                    "`{}` does not request the `system-prompt` capability: Spirit does not ask it for a system prompt (its code was not run)",
                    package.name
                ),
            );
        }
        let mut json = outcome_json(&prepared, None, &stores, None, &warnings);
        json.insert("system_prompt".to_owned(), serde_json::Value::Null);
        json.insert("source".to_owned(), serde_json::Value::Null);
        return finish_run(options.format, json, "", &warnings, &[]);
    }
    let invocation = Invocation {
        package,
        dir: &prepared.dir,
        host: options.host.into(),
        event,
        call: Call::SystemPrompt,
        timeout: std::time::Duration::from_secs(options.timeout),
        message_box_response: options.message_box_response,
    };
    let outcome = spirit_run::run(&invocation, &mut stores, &mut std::io::stderr())?;
    note_warnings(&prepared, &outcome, &mut warnings);
    let mut errors = Vec::new();
    let (prompt, source) = match &outcome.result {
        Ok(Produced::Prompt { text, source }) => (Some(text.clone()), Some(source.clone())),
        Ok(Produced::NoPrompt) => {
            if format_is_human(options) {
                eprintln!(
                    "`{}` has no system prompt: neither `getSystemPrompt` nor `systemPrompt` gives one",
                    package.name
                );
            }
            (None, None)
        }
        Ok(_) => {
            errors.push("the system prompt failed: node reported a tool result".to_owned());
            (None, None)
        }
        // Spirit logs the error and adds nothing: no prompt, a warning.
        Err(Failure::Threw { stage, message }) => {
            no_run(
                &mut warnings,
                "/main",
                format!(
                    "collecting the system prompt failed: {} {message}; Spirit logs the error and adds nothing to the system prompt",
                    match stage.as_str() {
                        "load" => "loading `main` failed:",
                        "activate" => "`activate` failed:",
                        "onEvent" => "`onEvent` failed:",
                        "systemPrompt" => "`getSystemPrompt` failed:",
                        _ => "the extension failed:",
                    }
                ),
            );
            (None, None)
        }
        Err(failure) => {
            errors.push(failure_text(failure, "the system prompt"));
            (None, None)
        }
    };
    let mut json = outcome_json(
        &prepared,
        Some(&outcome),
        &stores,
        errors.first().map(String::as_str),
        &warnings,
    );
    json.insert("system_prompt".to_owned(), prompt.clone().into());
    json.insert("source".to_owned(), source.into());
    finish_run(
        options.format,
        json,
        prompt.as_deref().unwrap_or_default(),
        &warnings,
        &errors,
    )
}
