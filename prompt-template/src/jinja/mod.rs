//! Jinja prompts, rendered exactly as the reference host (`curupira` 0.4.0) renders the
//! `prompt` of an automation: MiniJinja, after a `${name}` pre-pass, with the checks
//! its `validate` makes. Behind the `jinja` feature.
//!
//! ```
//! use curupira_template::jinja::{JinjaErrorKind, JinjaPrompt};
//!
//! // At validate: the host variables and the trigger's `prompt_fields`.
//! let declared = ["automation", "repository", "title", "n"];
//! let source = "{{ title | upper }} (#${n}) {% if n == '1' %}first{% endif %}";
//! let prompt = JinjaPrompt::compile(source, declared)?;
//!
//! // At dispatch: the item's pairs and the host variables.
//! let item = [("title", "crash"), ("n", "1")];
//! let host = [("automation", "e1"), ("repository", "acme/widgets")];
//! assert_eq!(prompt.render(item.into_iter().chain(host))?, "CRASH (#1) first");
//!
//! let error = JinjaPrompt::compile("{{ titel }}", declared).unwrap_err();
//! assert!(matches!(error.kind(), JinjaErrorKind::UnknownFields { .. }));
//! // The host prints it after `Configuration error: automation "e1": `.
//! assert_eq!(
//!     error.to_string(),
//!     "prompt uses unknown field(s) \"titel\" (did you mean \"title\"?). \
//!      Available fields: automation, n, repository, title",
//! );
//! # Ok::<(), curupira_template::jinja::JinjaError>(())
//! ```
//!
//! # How a prompt is rendered
//!
//! 1. **The `${name}` pre-pass.** Every `${name}` whose name is a known field becomes
//!    `{{ _fields["name"] }}`; every other `${…}` stays as written and Jinja sees it as
//!    text. Known means *declared* in [`JinjaPrompt::compile`] and *present in the
//!    item* (its keys and the host variables) in [`JinjaPrompt::render`], so `${extra}`
//!    for an item key no trigger declares is substituted, and `${n}` for an item
//!    without `n` stays `${n}`. The name runs to the first `}`; a name that is empty or
//!    holds `"`, `\` or a line break is never rewritten, and after any `${` left alone
//!    the scan goes on right after it (`${a${title}` gives `${a` and the title). The
//!    name is written as Rust's `{:?}` writes a string: `\t` and `\r` come out as Jinja
//!    escapes, other control characters and characters such as U+00A0 as `\u{…}`,
//!    which MiniJinja refuses ("bad string escape"), as the reference does.
//! 2. **Jinja** (MiniJinja 3) compiles the result and renders it with each field as a
//!    variable and `_fields`, the map of all of them (so `{{ _fields['a.b'] }}` reaches
//!    any key). Values are strings and are never run as templates: a value
//!    `{{ 7*7 }}` or `${n}` is inserted as it is. No auto-escaping. Undefined is
//!    strict: printing, testing (`{% if n %}`), iterating, filtering or `or`-ing a
//!    field the item lacks fails, while `n is defined` and `n | default('none')` work.
//!    Whitespace control (`{%-`, `-%}`), comments, `set`, `for`, macros and the
//!    built-in filters and tests work; blocks are left-stripped (`lstrip_blocks`) and a trailing
//!    newline is kept. Text Jinja outputs is not scanned again, so
//!    `{{ "${" ~ "title}" }}` renders `${title}`.
//!
//! # What `compile` checks (the reference's `validate`)
//!
//! - The pre-passed prompt must compile; a syntax error reads
//!   `prompt template error: <MiniJinja's message>. Jinja blocks look like … (line N: "<the line, trimmed>")`.
//!   Since the pre-pass runs first, `{{ "${title}" }}` is a syntax error.
//! - Every variable the template reads without setting it must be declared. `_fields` is
//!   always allowed, and so is `self`, which MiniJinja counts as set (it fails at
//!   render). Globals are not special: `range`, `dict`, `namespace` and `loop` outside
//!   a loop are unknown fields.
//! - A `${name}` left alone whose name is within two edits of a declared name is taken
//!   for a typo and reported too: `${titel}` and `${ title }` are refused, `${missing}`
//!   is not.
//! - All unknown names come in one sentence, sorted and each once, each with its
//!   closest declared name (`(did you mean "n"?)`) when one is at most two edits away.
//!
//! An unknown filter, a field an item lacks and type errors are found by `render`
//! only, as in the reference.
//!
//! # Differences from [`Template`](crate::Template)
//!
//! `Template` is this crate's plain `${key}` renderer. The pre-pass differs from it on
//! purpose, as the reference does: names with `"`, `\` or a line break are never
//! substituted, and the scan resumes after the `${` of a placeholder it leaves alone
//! (`Template` resumes after its `}`).

mod error;
mod locate;
mod rewrite;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value, syntax::SyntaxConfig};

pub use error::{JinjaError, JinjaErrorKind, Location, UnknownField};

use rewrite::Rewrite;

/// The name of the map of all fields in the template's context.
const FIELDS: &str = "_fields";

/// A prompt that passed the reference's validate-time checks.
///
/// It keeps the source, not a compiled template: what the `${name}` pre-pass rewrites
/// depends on each item's keys, so [`render`](JinjaPrompt::render) pre-passes and
/// compiles again every time, as the reference does (prompts are short: this costs
/// microseconds).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JinjaPrompt {
    source: String,
}

impl JinjaPrompt {
    /// Checks `source` as the reference's `validate` does: it must compile after the
    /// `${name}` pre-pass (with `declared` as the known names), and use no field outside
    /// `declared` (the host variables plus the trigger's `prompt_fields`).
    ///
    /// # Errors
    ///
    /// [`JinjaErrorKind::Syntax`] (or [`Other`](JinjaErrorKind::Other), for a bad string
    /// escape) when it does not compile; [`JinjaErrorKind::UnknownFields`] when it uses
    /// undeclared fields.
    pub fn compile<I>(source: &str, declared: I) -> Result<JinjaPrompt, JinjaError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let declared: Vec<I::Item> = declared.into_iter().collect();
        let mut declared: Vec<&str> = declared.iter().map(AsRef::as_ref).collect();
        declared.sort_unstable();
        declared.dedup();
        let is_declared = |name: &str| declared.binary_search(&name).is_ok();

        let rewrite = rewrite::rewrite(source, is_declared);
        let env = environment();
        let template = env
            .template_from_str(&rewrite.text)
            .map_err(|error| minijinja_error(&error, source, &rewrite, &[]))?;

        // Name → where it is first used.
        let mut unknown: BTreeMap<String, Option<usize>> = BTreeMap::new();
        for name in template.undeclared_variables(false) {
            if name != FIELDS && !is_declared(&name) {
                let at = locate::first_use(source, &name);
                unknown.insert(name, at);
            }
        }
        for candidate in &rewrite.unknown {
            if suggestion(candidate.name, &declared).is_some() {
                let at = unknown.entry(candidate.name.to_owned()).or_insert(None);
                *at = Some(at.map_or(candidate.start, |at| at.min(candidate.start)));
            }
        }
        if !unknown.is_empty() {
            let fields = unknown
                .into_iter()
                .map(|(name, at)| UnknownField {
                    suggestion: suggestion(&name, &declared).map(str::to_owned),
                    location: at.map(|at| Location::at(source, at)),
                    name,
                })
                .collect();
            return Err(JinjaError::unknown_fields(fields, &declared));
        }
        Ok(JinjaPrompt {
            source: source.to_owned(),
        })
    }

    /// A prompt to render without the checks of [`compile`](JinjaPrompt::compile):
    /// for a host that checked it when it could (at `validate`), or that renders
    /// whatever it is given and reports each failure ([`render`](JinjaPrompt::render)
    /// fails where `compile` would have refused).
    pub fn unchecked(source: &str) -> JinjaPrompt {
        JinjaPrompt {
            source: source.to_owned(),
        }
    }

    /// The prompt as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Renders the prompt for one item: `fields` are its pairs plus the host variables
    /// (`automation`, `repository`), in any order; for a key given twice the first value
    /// wins.
    ///
    /// Takes any iterator of pairs of strings: an array or `Vec` of `(&str, &str)`, a
    /// `&HashMap<String, String>`, or `pairs.iter().map(|(k, v)| (k, v))`.
    ///
    /// # Errors
    ///
    /// [`JinjaErrorKind::Undefined`] for a field the item lacks (its message lists the
    /// fields it has), [`UnknownFilter`](JinjaErrorKind::UnknownFilter),
    /// [`Syntax`](JinjaErrorKind::Syntax) when a substituted `${name}` breaks the syntax,
    /// and [`Other`](JinjaErrorKind::Other) for what else MiniJinja refuses at run time.
    pub fn render<I, K, V>(&self, fields: I) -> Result<String, JinjaError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut values: BTreeMap<String, String> = BTreeMap::new();
        for (key, value) in fields {
            values
                .entry(key.as_ref().to_owned())
                .or_insert_with(|| value.as_ref().to_owned());
        }
        let available: Vec<&str> = values.keys().map(String::as_str).collect();

        let rewrite = rewrite::rewrite(&self.source, |name| values.contains_key(name));
        let env = environment();
        let template = env
            .template_from_str(&rewrite.text)
            .map_err(|error| minijinja_error(&error, &self.source, &rewrite, &available))?;

        let mut context: BTreeMap<&str, Value> = values
            .iter()
            .map(|(key, value)| (key.as_str(), Value::from(value.as_str())))
            .collect();
        // The map wins over an item key of the same name, as in the reference.
        context.insert(FIELDS, Value::from(values.clone()));
        template
            .render(Value::from(context))
            .map_err(|error| minijinja_error(&error, &self.source, &rewrite, &available))
    }
}

/// The environment the reference renders with: strict undefined, no auto-escaping,
/// blocks left-stripped, the trailing newline kept. Built once per process; templates
/// compiled from it borrow a shorter-lived source, which `Environment`'s lifetime being
/// covariant allows.
fn environment() -> &'static Environment<'static> {
    static ENVIRONMENT: OnceLock<Environment<'static>> = OnceLock::new();
    ENVIRONMENT.get_or_init(|| {
        let mut env = Environment::new();
        // Debug mode would add "`n` is undefined" to MiniJinja's messages; the spans of
        // errors (their columns) come with the `debug` feature alone.
        env.set_debug(false);
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        // Only custom delimiters can make `build` fail, and these are the defaults.
        if let Ok(syntax) = SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .lstrip_blocks(true)
            .build()
        {
            env.set_syntax(syntax);
        }
        env
    })
}

/// A MiniJinja error, located in the prompt as written.
fn minijinja_error(
    error: &minijinja::Error,
    source: &str,
    rewrite: &Rewrite<'_>,
    available: &[&str],
) -> JinjaError {
    let location = error.line().map(|line| {
        error
            .range()
            .map(|range| Location::at(source, rewrite.original_offset(range.start)))
            .filter(|location| location.line == line)
            .unwrap_or_else(|| Location::line_start(source, line))
    });
    JinjaError::from_minijinja(error, source, location, available)
}

/// The declared name closest to `name`, if one is at most two edits away (the first in
/// byte order among the closest).
fn suggestion<'d>(name: &str, declared: &[&'d str]) -> Option<&'d str> {
    declared
        .iter()
        .map(|candidate| (strsim::levenshtein(name, candidate), *candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests;
