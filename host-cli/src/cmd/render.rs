//! `curupira render --template FILE [--pairs FILE] [--var KEY=VALUE]…`: renders a prompt
//! template (SPEC section 5) and prints exactly the result, adding nothing.
//!
//! Values come from the item's pairs (`--pairs`, a JSON pair list as `curupira identity`
//! reads it; `-` is stdin) and from host variables (`--var`, e.g.
//! `--var repository=github.com/acme/widgets --var automation=fix-bugs`). Any non-empty
//! `--var` key is accepted. The pairs are an item, so the protocol's item rules apply
//! (`curupira_protocol::check_item`: no empty, repeated or reserved key); a pair key
//! that a `--var` also sets is an error too, since an item may not set the host's
//! variables (exit 1). A `--var` key given twice is a usage error (exit 2).
//!
//! The pairs are read as `curupira identity` reads them: reading stops at the first
//! byte that cannot continue the list, and at 64 MiB (`MAX_PAIRS_BYTES`, exit 2).
//!
//! A placeholder that no pair and no `--var` fills stays as written, and is warned
//! about on stderr, once per key, with the closest key given when one is close (the
//! exit code stays 0: a template may mean it).
//!
//! Exit codes: 1 when the pairs are not a valid pair list or the template or pairs are
//! not UTF-8; 2 when a file cannot be read, the pairs are larger than 64 MiB, or the
//! arguments are wrong.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use curupira_diagnostics::did_you_mean;
use curupira_protocol::check_item;
use curupira_task_identity::{Pair, parse_pairs};
use curupira_template::{Chain, Template};

use super::{read_json_document, utf8_or_report, write_stdout};

/// Arguments of `curupira render`.
#[derive(clap::Args)]
pub struct Args {
    /// The template file (UTF-8).
    #[arg(long, value_name = "FILE")]
    template: PathBuf,
    /// A JSON array of {"key": …, "value": …} objects; `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    pairs: Option<PathBuf>,
    /// A host variable such as `repository` or `automation` (repeatable).
    #[arg(long = "var", value_name = "KEY=VALUE", value_parser = parse_var)]
    vars: Vec<(String, String)>,
}

/// Splits `KEY=VALUE` at the first `=`; the key must not be empty, the value may be.
fn parse_var(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        Some(_) => Err(format!("`{text}` has an empty key; write KEY=VALUE")),
        None => Err(format!("`{text}` has no `=`; write KEY=VALUE")),
    }
}

/// Renders the template and prints the result.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut seen = HashMap::new();
    for (key, _) in &args.vars {
        if seen.insert(key.as_str(), ()).is_some() {
            bail!("--var {key:?} is given twice");
        }
    }

    let template_bytes = fs::read(&args.template)
        .with_context(|| format!("cannot read template {}", args.template.display()))?;
    let Some(template) = utf8_or_report(&template_bytes, &args.template.display().to_string())
    else {
        return Ok(ExitCode::from(1));
    };

    let pairs = match &args.pairs {
        Some(path) => match read_pairs(path)? {
            Some(pairs) => pairs,
            None => return Ok(ExitCode::from(1)),
        },
        None => Vec::new(),
    };
    let source = args.pairs.as_deref().map_or_else(String::new, source_name);
    if let Some(problem) = key_problem(&pairs, &args.vars) {
        eprintln!("error: {source}: {problem}");
        return Ok(ExitCode::from(1));
    }

    let item: Vec<(&str, &str)> = pairs
        .iter()
        .map(|pair| (pair.key.as_str(), pair.value.as_str()))
        .collect();
    let template = Template::parse(template);
    let lookup = Chain(item.as_slice(), args.vars.as_slice());
    let rendered = template.render(&lookup);
    let mut said: Vec<&str> = Vec::new();
    for placeholder in template.unfilled(&lookup) {
        let key = placeholder.key();
        if said.contains(&key) {
            continue;
        }
        said.push(key);
        let known = item
            .iter()
            .map(|(key, _)| *key)
            .chain(args.vars.iter().map(|(key, _)| key.as_str()));
        let hint = did_you_mean(key, known)
            .map(|close| format!("; did you mean `${{{close}}}`?"))
            .unwrap_or_default();
        eprintln!(
            "warning: {}: the placeholder `{}` is filled by no pair and no --var, so it stays \
             as written{hint}",
            args.template.display(),
            placeholder.as_written()
        );
    }

    write_stdout(&rendered).context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// How a pairs path is named in messages.
fn source_name(path: &Path) -> String {
    if path == Path::new("-") {
        "standard input".to_owned()
    } else {
        path.display().to_string()
    }
}

/// Reads and checks the pair list; `Ok(None)` after reporting a bad one.
fn read_pairs(path: &Path) -> anyhow::Result<Option<Vec<Pair>>> {
    let name = source_name(path);
    let read = if path == Path::new("-") {
        read_json_document(std::io::stdin().lock(), &name)?
    } else {
        let file = fs::File::open(path).with_context(|| format!("cannot read pairs {name}"))?;
        read_json_document(file, &name)?
    };
    let Some(text) = read else {
        return Ok(None);
    };
    match parse_pairs(&text) {
        Ok(pairs) => Ok(Some(pairs)),
        Err(err) => {
            eprintln!("error: {name}: {err}");
            Ok(None)
        }
    }
}

/// A pair that breaks the item rules, or whose key a `--var` also sets: the value to
/// use would be ambiguous.
fn key_problem(pairs: &[Pair], vars: &[(String, String)]) -> Option<String> {
    if let Err(error) = check_item(pairs) {
        return Some(error.to_string());
    }
    let (index, pair) = pairs
        .iter()
        .enumerate()
        .find(|(_, pair)| vars.iter().any(|(var, _)| *var == pair.key))?;
    Some(format!(
        "pair {index} has the key {}, which --var also sets; an item cannot set a host variable",
        serde_json::Value::from(pair.key.as_str())
    ))
}
