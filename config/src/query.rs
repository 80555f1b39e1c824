//! Questions a host asks of a checked config that the file alone answers: which
//! automations run, which have no agent, which triggers to resolve, and diagnostics
//! located in the file. What needs the machine (programs on `PATH`, Git, the ledger)
//! is the host's to ask.

use curupira_diagnostics::{Anchor, Diagnostic, JsonPointer, Severity, did_you_mean};

use super::codes;
use super::model::{Automation, Config, Form, TriggerRef};

/// `run --automation NAME` names an automation the config does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`--automation {name}`: `{file}` has no automation called `{name}` (it has: {}){}",
    if .known.is_empty() { "none".to_owned() } else { .known.join(", ") },
    .suggestion.as_ref().map(|close| format!("; did you mean `{close}`?")).unwrap_or_default()
)]
pub struct UnknownAutomation {
    /// The name given.
    pub name: String,
    /// The config file, as the user named it.
    pub file: String,
    /// The config's automations, in file order.
    pub known: Vec<String>,
    /// The closest known name, when one is close enough.
    pub suggestion: Option<String>,
}

impl Config {
    /// A diagnostic about this config file at `path`, located by the file's source map
    /// (a pointer that is not in the file, such as a default-filled argument, is
    /// located at its nearest enclosing member).
    pub fn diagnostic(
        &self,
        severity: Severity,
        code: &'static str,
        path: &JsonPointer,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(severity, code, self.file.clone(), path.clone(), message).locate(
            &self.source_map,
            &self.text,
            Anchor::Value,
        )
    }

    /// A diagnostic about `span` (byte range) inside the string value at `path`, when
    /// the file spells that string literally between single quotes or double quotes
    /// without escapes; otherwise about the whole value.
    pub fn diagnostic_in_string(
        &self,
        severity: Severity,
        code: &'static str,
        path: &JsonPointer,
        value: &str,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(severity, code, self.file.clone(), path.clone(), message).locate_in_string(
            &self.source_map,
            &self.text,
            value,
            span,
        )
    }

    /// The pointer of the table that configures the extension called `name`:
    /// `/plugins/NAME` for a `[plugins.NAME]` entry, else `/extensions/NAME`.
    pub fn extension_at(&self, name: &str) -> JsonPointer {
        if let Some(extension) = self.extensions.iter().find(|e| e.name == name) {
            return extension.pointer();
        }
        let extension = JsonPointer::root().key("extensions").key(name);
        let plugin = JsonPointer::root().key("plugins").key(name);
        if self.source_map.get(&extension).is_none() && self.source_map.get(&plugin).is_some() {
            plugin
        } else {
            extension
        }
    }

    /// Every automation whose `trigger` could be read, usable or not, in file order,
    /// with that trigger: what a host resolves to extensions.
    pub fn triggers(&self) -> Vec<(&str, &TriggerRef)> {
        self.order
            .iter()
            .filter_map(|name| match self.automation(name) {
                Some(automation) => Some((name.as_str(), &automation.trigger)),
                None => self
                    .unusable
                    .automations
                    .iter()
                    .find(|a| &a.name == name)
                    .and_then(|a| a.trigger.as_ref())
                    .map(|trigger| (name.as_str(), trigger)),
            })
            .collect()
    }

    /// The usable automations `names` selects (`run --automation NAME`…), in file
    /// order; every usable automation when `names` is empty. A name that is not in the
    /// config selects nothing: [`Config::check_selection`] reports it.
    pub fn selected(&self, names: &[String]) -> Vec<&Automation> {
        self.automations
            .iter()
            .filter(|a| names.is_empty() || names.contains(&a.name))
            .collect()
    }

    /// An error for the first of `names` that is not an automation of this config,
    /// with a did-you-mean.
    pub fn check_selection(&self, names: &[String]) -> Result<(), UnknownAutomation> {
        match names.iter().find(|name| !self.order.contains(name)) {
            None => Ok(()),
            Some(name) => Err(UnknownAutomation {
                name: name.clone(),
                file: self.file.clone(),
                suggestion: did_you_mean(name, self.order.iter().map(String::as_str))
                    .map(str::to_owned),
                known: self.order.clone(),
            }),
        }
    }

    /// Where the agent of `automation` is set, for diagnostics about it: the `provider`
    /// of its profile in the reference form, else its own `agent.KEY`, else
    /// `[settings.agent] KEY`.
    pub fn agent_at(&self, automation: &Automation, key: &str) -> JsonPointer {
        if automation.form == Form::Reference
            && let Some(profile) = &automation.profile
        {
            return JsonPointer::root()
                .key("agents")
                .key("profiles")
                .key(profile)
                .key("provider");
        }
        self.written_at(&automation.name, "agent", key)
            .unwrap_or_else(|| settings_key("agent", key))
    }

    /// Whether the file writes the member at `path` (a default-filled value is not
    /// written).
    pub fn is_written(&self, path: &JsonPointer) -> bool {
        self.source_map.get(path).is_some()
    }

    /// Where `TABLE.KEY` of `automation` is written: its own `TABLE = { … }`, else
    /// `[settings.TABLE]`; `None` when neither writes it.
    pub fn written_at(&self, automation: &str, table: &str, key: &str) -> Option<JsonPointer> {
        let own = JsonPointer::root()
            .key("automations")
            .key(automation)
            .key(table)
            .key(key);
        [own, settings_key(table, key)]
            .into_iter()
            .find(|at| self.source_map.get(at).is_some())
    }

    /// One `config/missing-agent` error for each automation that `names` selects
    /// (every one when `names` is empty), usable or not, that has no agent command, in
    /// file order. An automation whose agent could not be read is not reported again.
    pub fn missing_agents(&self, names: &[String]) -> Vec<Diagnostic> {
        self.order
            .iter()
            .filter(|name| names.is_empty() || names.contains(name))
            .filter(|name| match self.automation(name) {
                // In the reference form the agent is a profile's, checked with it.
                Some(automation) => {
                    automation.form == Form::Ours
                        && automation.agent.is_none()
                        && automation.provider.is_none()
                        && !self.unusable.agent
                }
                None => self
                    .unusable
                    .automations
                    .iter()
                    .any(|a| &a.name == *name && a.without_agent),
            })
            .map(|name| {
                self.diagnostic(
                    Severity::Error,
                    codes::MISSING_AGENT,
                    &JsonPointer::root()
                        .key("automations")
                        .key(name)
                        .key("agent")
                        .key("command"),
                    format!(
                        "automation `{name}` has no agent command: set `command` in \
                         `[settings.agent]` or `agent = {{ command = [...] }}` in the automation"
                    ),
                )
            })
            .collect()
    }
}

/// `/settings/TABLE/KEY`.
pub fn settings_key(table: &str, key: &str) -> JsonPointer {
    JsonPointer::root().key("settings").key(table).key(key)
}
