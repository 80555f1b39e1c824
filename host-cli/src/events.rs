//! What `curupira run` prints on stdout: one event per line, as JSON (`--format
//! json`, the members in [`curupira_orchestrator::events`]' table) or as a sentence
//! (`--format human`, [`Human`]). Logs never go to stdout.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};

pub use curupira_orchestrator::events::{Event, short_id};
use curupira_task_identity::Pair;

use crate::format::Format;

/// Each automation's `repository:trigger_type`, the middle of the reference host's task
/// keys ([`EventWriter::reference`]), shared with whoever reloads the configuration.
pub type ReferenceKeys = Arc<Mutex<HashMap<String, String>>>;

/// The reference task keys' middles of `plan`'s automations.
pub fn reference_keys(plan: &curupira_orchestrator::Plan) -> HashMap<String, String> {
    let global = plan.repository.as_deref().unwrap_or_default();
    plan.automations
        .iter()
        .map(|automation| {
            let repository = automation.repository.as_deref().unwrap_or(global);
            let trigger = crate::plan::reference_trigger_type(
                &automation.extension,
                &automation.trigger_type,
            );
            (automation.name.clone(), format!("{repository}:{trigger}"))
        })
        .collect()
}

/// The human form of an [`Event`]: one sentence per event (a dry run's prompt follows
/// on the next lines).
pub trait Human {
    /// The event as one human-readable line.
    fn human(&self) -> String;
    /// The event as [`human`](Self::human) writes it in a dry run (`--dry-run`).
    fn human_dry_run(&self) -> String;
}

impl Human for Event {
    /// The event as one human-readable line (a dry run's prompt follows on the next
    /// lines). Task ids are shortened to their first 12 digits, as Git shortens
    /// commit ids; the JSON events carry them whole. Durations read as
    /// [`duration_text`] writes them.
    fn human(&self) -> String {
        human_line(self, false)
    }

    /// The event as [`human`](Self::human) writes it in a dry run (`--dry-run`): a
    /// round's items were rendered, not dispatched.
    fn human_dry_run(&self) -> String {
        human_line(self, true)
    }
}

fn human_line(event: &Event, dry_run: bool) -> String {
    match event {
        Event::TaskStarted {
            automation,
            task_id,
            values,
            attempt,
            ..
        } => {
            let again = (*attempt > 1).then(|| format!("attempt {attempt}"));
            format!(
                "{automation}: started task {}{}",
                short_id(task_id),
                group(again, values)
            )
        }
        Event::TaskRetrying {
            automation,
            task_id,
            attempt,
            delay_seconds,
            reason,
            exit_code,
            error,
            ..
        } => {
            let why = match (exit_code, error) {
                (_, Some(error)) => error.clone(),
                (Some(code), None) => format!("the agent exited with status {code}"),
                (None, None) => reason.clone(),
            };
            format!(
                "{automation}: task {} attempt {} failed: {why}; attempt {attempt} in {}",
                short_id(task_id),
                attempt.saturating_sub(1),
                duration_text(*delay_seconds)
            )
        }
        Event::TaskResumed {
            automation,
            task_id,
            attempt,
            provider,
            session_id,
        } => format!(
            "{automation}: task {} attempt {attempt} resumes its {provider} session {session_id}",
            short_id(task_id)
        ),
        Event::WorkspaceCreated {
            automation,
            task_id,
            workspace,
            branch,
            reused,
        } => format!(
            "{automation}: task {} {} worktree {workspace} on branch {branch}",
            short_id(task_id),
            if *reused { "takes up the" } else { "works in" }
        ),
        Event::WorkspaceRemoved {
            automation,
            task_id,
            workspace,
        } => format!(
            "{automation}: task {} worktree {workspace} removed (its branch stays)",
            short_id(task_id)
        ),
        Event::TaskFinished {
            automation,
            task_id,
            exit_code,
            error,
            reason,
            duration_seconds,
            ..
        } => {
            // An agent that never started leaves its task unfinished: say so, or
            // "FAILED" reads as the end of it; its attempt's duration says nothing.
            let never_ran = matches!(reason.as_str(), "spawn-failed" | "workspace-failed");
            let again = if never_ran {
                "; not finished: a later run hands it over again"
            } else {
                ""
            };
            let after = if never_ran {
                String::new()
            } else {
                format!(" after {}", duration_text(*duration_seconds))
            };
            let id = short_id(task_id);
            match (exit_code, error) {
                (Some(0), None) => format!(
                    "{automation}: finished task {id} in {}",
                    duration_text(*duration_seconds)
                ),
                (Some(code), None) => format!(
                    "{automation}: task {id} FAILED{after}: the agent exited with status {code}"
                ),
                (_, Some(error)) => {
                    format!("{automation}: task {id} FAILED{after}: {error}{again}")
                }
                (None, None) => format!("{automation}: task {id} FAILED{after}{again}"),
            }
        }
        Event::TaskInterrupted {
            automation,
            task_id,
            reason,
            ..
        } => {
            let why = match reason.as_str() {
                "shutdown" => "interrupted by the host's shutdown",
                "ledger-failed" => "interrupted: the task ledger could not be written",
                other => other,
            };
            format!(
                "{automation}: task {} {why}; not finished: a later run hands it over again",
                short_id(task_id)
            )
        }
        Event::TaskUnfilled {
            automation,
            task_id,
            values,
            placeholders,
            refused,
        } => {
            let each: Vec<String> = placeholders
                .iter()
                .map(|placeholder| match &placeholder.did_you_mean {
                    Some(close) => format!("${{{}}} (did you mean ${{{close}}}?)", placeholder.key),
                    None => format!("${{{}}}", placeholder.key),
                })
                .collect();
            let keys: Vec<&str> = values.iter().map(|pair| pair.key.as_str()).collect();
            let has = if keys.is_empty() {
                "the item has no key".to_owned()
            } else {
                format!("the item has {}", keys.join(", "))
            };
            let id = short_id(task_id);
            let what = each.join(", ");
            if *refused {
                format!(
                    "{automation}: task {id} REFUSED: its prompt leaves {what} unfilled ({has}); \
                     no agent started (unfilled = \"fail\"); not finished: a later run hands \
                     it over again"
                )
            } else {
                format!(
                    "{automation}: task {id}: its prompt leaves {what} unfilled ({has}); the \
                     agent gets it as written (said once per placeholder; unfilled = \"fail\" \
                     refuses such tasks)"
                )
            }
        }
        Event::TaskRefused {
            automation,
            task_id,
            reason,
            ..
        } => format!(
            "{automation}: task {} REFUSED before its agent: {reason}; not finished: a later \
             run hands it over again",
            short_id(task_id)
        ),
        Event::TaskSkipped {
            automation,
            task_id,
            values,
        } => format!(
            "{automation}: skipped task {}{}",
            short_id(task_id),
            group(Some("already handled".to_owned()), values)
        ),
        Event::TaskRendered {
            automation,
            task_id,
            values,
            prompt,
        } => {
            let newline = if prompt.ends_with('\n') { "" } else { "\n" };
            format!(
                "{automation}: task {}{} would get this prompt:\n{prompt}{newline}---",
                short_id(task_id),
                group(None, values)
            )
        }
        Event::RoundFinished {
            automation,
            polled,
            dispatched,
            skipped,
            failed,
            rejected,
        } => {
            // A dry run renders the items it would dispatch.
            let verb = if dry_run { "rendered" } else { "dispatched" };
            // Said only when there were some: most triggers never report any.
            let rejected = match rejected {
                0 => String::new(),
                n => format!(", {n} rejected by the trigger (see its warnings above)"),
            };
            format!(
                "{automation}: round finished: {polled} polled, {dispatched} {verb}, \
                     {skipped} already handled, {failed} failed{rejected}"
            )
        }
        Event::AutomationFailed {
            automation,
            message,
            ..
        } => format!("{automation}: FAILED: {message}"),
        Event::ExtensionFailed { message, .. } => format!("FAILED: {message}"),
        Event::ConfigReloaded {
            added,
            removed,
            changed,
            restart_needed,
        } => {
            let mut parts = Vec::new();
            if !added.is_empty() {
                parts.push(format!("added {}", added.join(", ")));
            }
            if !removed.is_empty() {
                parts.push(format!(
                    "removed {} (their running tasks finish)",
                    removed.join(", ")
                ));
            }
            if !changed.is_empty() {
                let each: Vec<String> = changed
                    .iter()
                    .map(|change| format!("{} ({})", change.automation, change.what.join(", ")))
                    .collect();
                parts.push(format!("changed {}", each.join(", ")));
            }
            if !restart_needed.is_empty() {
                parts.push(format!(
                    "a restart is needed for {} (the running value is kept)",
                    restart_needed.join(", ")
                ));
            }
            format!("configuration reloaded: {}", parts.join("; "))
        }
        Event::ConfigRefused { diagnostics } => {
            let mut text = "configuration NOT reloaded (the running one is kept):".to_owned();
            for line in diagnostics {
                text.push_str("\n  ");
                text.push_str(line);
            }
            text
        }
        Event::Waiting {
            automation,
            idle_seconds,
            next_round_at,
            next_round_in_seconds,
        } => format!(
            "waiting: nothing ran for {}; next round: {automation} in {} (at {next_round_at})",
            duration_text(*idle_seconds),
            duration_text(*next_round_in_seconds)
        ),
    }
}

/// A duration as people read it: `250 ms`, `3.2 s`, `45 s`, `2 min 5 s`, `1 h 3 min`,
/// `2 d 4 h` (rounded to the unit shown; a negative or not finite one is `0 s`).
///
/// ```
/// use curupira_host::events::duration_text;
/// assert_eq!(duration_text(3.24), "3.2 s");
/// assert_eq!(duration_text(10.0), "10 s");
/// assert_eq!(duration_text(125.4), "2 min 5 s");
/// ```
pub fn duration_text(seconds: f64) -> String {
    if !seconds.is_finite() || seconds <= 0.0 {
        return "0 s".to_owned();
    }
    let millis = (seconds * 1000.0).round();
    if millis < 1000.0 {
        return format!("{millis} ms");
    }
    let tenths = (seconds * 10.0).round();
    if tenths < 100.0 {
        return if tenths % 10.0 == 0.0 {
            format!("{} s", tenths / 10.0)
        } else {
            format!("{:.1} s", tenths / 10.0)
        };
    }
    // Saturating: a duration beyond u64 seconds is not one a run has.
    let whole = seconds.round() as u64;
    let pair = |big: u64, big_unit: &str, small: u64, small_unit: &str| {
        if small == 0 {
            format!("{big} {big_unit}")
        } else {
            format!("{big} {big_unit} {small} {small_unit}")
        }
    };
    match whole {
        0..60 => format!("{whole} s"),
        60..3600 => pair(whole / 60, "min", whole % 60, "s"),
        3600..86_400 => pair(whole / 3600, "h", whole % 3600 / 60, "min"),
        _ => pair(whole / 86_400, "d", whole % 86_400 / 3600, "h"),
    }
}

/// The one parenthesis group after a task's id: a note, then the pairs, as
/// ` (attempt 2; issue=42, title="Crash on save")`; empty when both are.
fn group(note: Option<String>, values: &[Pair]) -> String {
    let pairs = pairs_text(values);
    match (note, pairs.is_empty()) {
        (None, true) => String::new(),
        (None, false) => format!(" ({pairs})"),
        (Some(note), true) => format!(" ({note})"),
        (Some(note), false) => format!(" ({note}; {pairs})"),
    }
}

/// `issue=42, title="Crash on save"`: values that are not plain words are quoted.
fn pairs_text(values: &[Pair]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|pair| {
            let plain = !pair.value.is_empty()
                && pair
                    .value
                    .chars()
                    .all(|c| c.is_alphanumeric() || "-_./:#@".contains(c));
            if plain {
                format!("{}={}", pair.key, pair.value)
            } else {
                format!(
                    "{}={}",
                    pair.key,
                    serde_json::Value::from(pair.value.as_str())
                )
            }
        })
        .collect();
    items.join(", ")
}

/// Writes events to a stream and remembers whether any was a failure.
///
/// In the human format a round that did nothing (nothing polled, dispatched, skipped
/// or failed) is shown once: the empty rounds of that automation after it are not,
/// until one does something, so a run that waits for work for days does not print a
/// line per interval; and an item already handled (`task.skipped`) has no line of its
/// own: the round's line counts them. The JSON format has every event.
pub struct EventWriter<W: Write> {
    out: W,
    format: Format,
    /// A dry run's events (human format: [`Event::human_dry_run`]).
    dry_run: bool,
    failed: bool,
    /// Automations whose last round shown polled nothing (human format).
    idle: std::collections::HashSet<String>,
    /// The reference host's lines instead of sentences (human format, a file in the
    /// reference form): each automation's `repository:trigger_type`, for the task key.
    reference: Option<ReferenceKeys>,
    /// Tasks printed as `fail` (reference lines).
    reference_failed: u64,
    /// Whether a dry run's first task was printed (reference lines).
    reference_rendered: bool,
    /// Whether an automation was refused for its configuration before its first poll
    /// (reference lines): the run exits 2, as the reference host does.
    configuration_failed: bool,
    /// The run's tasks by how they ended, for [`summary`](Self::summary).
    tally: Tally,
}

/// What a run's events said of its tasks, counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    succeeded: u64,
    failed: u64,
    /// Reported failed, but their agent never started: not finished.
    not_started: u64,
    interrupted: u64,
    refused: u64,
    attempts: u64,
    rendered: u64,
}

impl Tally {
    fn count(&mut self, event: &Event) {
        match event {
            Event::TaskStarted { .. } => self.attempts += 1,
            Event::TaskFinished { reason, .. }
                if matches!(reason.as_str(), "spawn-failed" | "workspace-failed") =>
            {
                self.not_started += 1;
            }
            Event::TaskFinished {
                exit_code, error, ..
            } => {
                if *exit_code == Some(0) && error.is_none() {
                    self.succeeded += 1;
                } else {
                    self.failed += 1;
                }
            }
            Event::TaskInterrupted { .. } => self.interrupted += 1,
            Event::TaskUnfilled { refused: true, .. } | Event::TaskRefused { .. } => {
                self.refused += 1;
            }
            Event::TaskRendered { .. } => self.rendered += 1,
            _ => {}
        }
    }
}

impl<W: Write> curupira_orchestrator::events::EventSink for EventWriter<W> {
    fn emit(&mut self, event: &Event) -> io::Result<()> {
        EventWriter::emit(self, event)
    }
}

impl<W: Write> EventWriter<W> {
    /// A writer in `format`: one sentence per event, or one JSON object per line.
    pub fn new(out: W, format: Format) -> Self {
        Self {
            out,
            format,
            dry_run: false,
            failed: false,
            idle: std::collections::HashSet::new(),
            tally: Tally::default(),
            reference: None,
            reference_failed: 0,
            reference_rendered: false,
            configuration_failed: false,
        }
    }

    /// Whether, with the reference lines on, an automation was refused for its
    /// configuration (the reference host's exit 2).
    pub fn configuration_failed(&self) -> bool {
        self.configuration_failed
    }

    /// In the human format, the reference host's lines instead of sentences, as
    /// scripts that run it parse them: `ok\t<key>` on stdout for a task that
    /// succeeded, `fail\t<key>\t<reason>` on stderr for one that failed (and
    /// [`finish_reference`](Self::finish_reference)'s `Dispatch error: N task(s)
    /// failed`), and in a dry run the first task's `dry-run\t<key>` and prompt. The
    /// key is `<automation>:<repository>:<trigger_type>:<task id>`; `keys` gives each
    /// automation's `repository:trigger_type`. Nothing else goes to stdout.
    /// `keys` is shared: a reloaded configuration's automations are added to it
    /// ([`reference_keys`]).
    pub fn reference(mut self, keys: ReferenceKeys) -> Self {
        if self.format == Format::Human {
            self.reference = Some(keys);
        }
        self
    }

    /// The reference lines' closing line, when they are on: on stderr, `Dispatch
    /// error: N task(s) failed` after failures; on stdout, a dry run's
    /// `dry-run\t(no tasks available)` when it rendered none.
    pub fn finish_reference(&mut self) -> io::Result<()> {
        if self.reference.is_none() {
            return Ok(());
        }
        if self.dry_run && !self.reference_rendered && !self.configuration_failed {
            writeln!(self.out, "dry-run\t(no tasks available)")?;
            self.out.flush()?;
        }
        if self.reference_failed > 0 {
            let mut err = io::stderr().lock();
            writeln!(
                err,
                "Dispatch error: {} task(s) failed",
                self.reference_failed
            )?;
        }
        Ok(())
    }

    /// An event as the reference host prints it: `Some((to_stdout, text))`, or `None`
    /// for the events it prints nothing for.
    /// A reference `fail` line (for stderr), counted for the run's last line.
    fn reference_fail(&mut self, key: &str, reason: &str) -> (bool, String) {
        self.reference_failed += 1;
        (false, format!("fail\t{key}\tDispatch error: {reason}"))
    }

    fn reference_line(&mut self, event: &Event) -> Option<(bool, String)> {
        let keys = Arc::clone(self.reference.as_ref()?);
        let keys = keys.lock().unwrap_or_else(PoisonError::into_inner);
        let key = |automation: &str, task_id: &str| {
            let middle = keys.get(automation).map_or("", String::as_str);
            format!("{automation}:{middle}:{task_id}")
        };
        match event {
            Event::TaskFinished {
                automation,
                task_id,
                exit_code,
                error,
                output,
                ..
            } => {
                if *exit_code == Some(0) && error.is_none() {
                    return Some((true, format!("ok\t{}", key(automation, task_id))));
                }
                let reason = match (error, exit_code) {
                    (Some(error), _) => error.clone(),
                    // The reference's words, its `: ` kept when the agent wrote nothing.
                    (None, Some(code)) => {
                        format!("agent exited {code}: {}", output.as_deref().unwrap_or(""))
                    }
                    (None, None) => "agent ended without an exit status".to_owned(),
                };
                let key = key(automation, task_id);
                Some(self.reference_fail(&key, &reason))
            }
            Event::TaskRefused { reason, .. } if self.dry_run => {
                // The reference host's dry run stops at the task it cannot render.
                self.reference_rendered = true;
                Some((false, format!("Dispatch error: {reason}")))
            }
            Event::TaskRefused {
                automation,
                task_id,
                reason,
                ..
            } => {
                let key = key(automation, task_id);
                Some(self.reference_fail(&key, reason))
            }
            Event::TaskRendered {
                automation,
                task_id,
                prompt,
                ..
            } if !self.reference_rendered => {
                self.reference_rendered = true;
                Some((
                    true,
                    format!(
                        "dry-run\t{}\n--- prompt ---\n{prompt}{}--- end prompt ---",
                        key(automation, task_id),
                        if prompt.ends_with('\n') { "" } else { "\n" }
                    ),
                ))
            }
            Event::AutomationFailed { code, message, .. }
                if *code == curupira_jsonrpc::ErrorCode::CONFIGURATION_INVALID.code() =>
            {
                // Refused before its first poll, as the reference refuses the file.
                self.configuration_failed = true;
                Some((false, format!("Configuration error: {message}")))
            }
            Event::AutomationFailed { message, .. } => {
                Some((false, format!("Dispatch error: {message}")))
            }
            Event::ExtensionFailed { message, .. } => {
                Some((false, format!("Plugin error: {message}")))
            }
            Event::ConfigReloaded { restart_needed, .. } => {
                // Not a line of the reference's (it reloads nothing): said in the log.
                let line = human_line(event, false);
                if restart_needed.is_empty() {
                    tracing::info!("{line}");
                } else {
                    tracing::warn!("{line}");
                }
                None
            }
            _ => None,
        }
    }

    /// The run's one closing line: its tasks by how they ended, its attempts and how
    /// long it took (`run ended after 12 s: 2 succeeded, 1 failed, 0 interrupted; 5
    /// attempts`); what happened to none is left out, beside those three.
    pub fn summary(&self, elapsed: std::time::Duration) -> String {
        let t = &self.tally;
        let took = duration_text(elapsed.as_secs_f64());
        if self.dry_run {
            return format!(
                "dry run ended after {took}: {} task(s) rendered",
                t.rendered
            );
        }
        let mut parts = vec![
            format!("{} succeeded", t.succeeded),
            format!("{} failed", t.failed),
            format!("{} interrupted", t.interrupted),
        ];
        if t.not_started > 0 {
            parts.push(format!("{} whose agent could not start", t.not_started));
        }
        if t.refused > 0 {
            parts.push(format!("{} refused", t.refused));
        }
        format!(
            "run ended after {took}: tasks {}; {} attempt(s)",
            parts.join(", "),
            t.attempts
        )
    }

    /// The same writer, for a dry run's events when `dry_run` (the human lines say
    /// "rendered" where a run says "dispatched": [`Event::human_dry_run`]).
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Writes one event and flushes it, so a reader sees it at once (in the human
    /// format, an empty round after an empty round is not written: see the type).
    pub fn emit(&mut self, event: &Event) -> io::Result<()> {
        self.failed |= event.is_failure();
        self.tally.count(event);
        if self.reference.is_some() {
            return match self.reference_line(event) {
                Some((true, line)) => {
                    writeln!(self.out, "{line}")?;
                    self.out.flush()
                }
                Some((false, line)) => {
                    let mut err = io::stderr().lock();
                    writeln!(err, "{line}")
                }
                None => Ok(()),
            };
        }
        let line = match self.format {
            Format::Json => serde_json::to_string(event).map_err(io::Error::other)?,
            // Counted in the round's line instead: an extension that lists every open
            // issue again in each round would otherwise fill the output with them.
            Format::Human if matches!(event, Event::TaskSkipped { .. }) => return Ok(()),
            Format::Human => {
                if let Event::RoundFinished {
                    automation,
                    polled,
                    dispatched,
                    skipped,
                    failed,
                    rejected,
                } = event
                {
                    let empty = [polled, dispatched, skipped, failed]
                        .iter()
                        .all(|n| **n == 0)
                        && *rejected == 0;
                    let shown_idle = if empty {
                        !self.idle.insert(automation.clone())
                    } else {
                        self.idle.remove(automation);
                        false
                    };
                    if shown_idle {
                        return Ok(());
                    }
                }
                if self.dry_run {
                    event.human_dry_run()
                } else {
                    event.human()
                }
            }
        };
        writeln!(self.out, "{line}")?;
        self.out.flush()
    }

    /// Whether a failure was emitted.
    pub fn had_failure(&self) -> bool {
        self.failed
    }

    /// The underlying stream, as written so far.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// The underlying stream.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn json_events_have_the_documented_shape() {
        let mut writer = EventWriter::new(Vec::new(), Format::Json);
        let values = vec![Pair::new("n", "1")];
        writer
            .emit(&Event::TaskFinished {
                automation: "a".into(),
                task_id: "id".into(),
                values: values.clone(),
                exit_code: Some(0),
                error: None,
                reason: "exit".into(),
                duration_seconds: 1.5,
                output: None,
            })
            .unwrap();
        assert!(!writer.had_failure());
        writer
            .emit(&Event::AutomationFailed {
                automation: "a".into(),
                code: -32004,
                message: "m".into(),
                extension: Some("x".into()),
                method: None,
            })
            .unwrap();
        assert!(writer.had_failure());
        let text = String::from_utf8(writer.into_inner()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                json!({"event": "task.finished", "automation": "a", "task_id": "id",
                       "values": [{"key": "n", "value": "1"}], "exit_code": 0,
                       "reason": "exit", "duration_seconds": 1.5}),
                json!({"event": "automation.failed", "automation": "a", "code": -32004,
                       "message": "m", "extension": "x"}),
            ]
        );
    }

    #[test]
    fn a_failed_agent_is_a_failure() {
        let ended = |exit_code, error: Option<&str>, reason: &str| Event::TaskFinished {
            automation: "a".into(),
            task_id: "id".into(),
            values: vec![],
            exit_code,
            error: error.map(str::to_owned),
            reason: reason.into(),
            duration_seconds: 2.54,
            output: None,
        };
        let finished = |exit_code, error| ended(exit_code, error, "exit");
        assert_eq!(
            ended(None, Some("no such file"), "spawn-failed").human(),
            "a: task id FAILED: no such file; not finished: a later run hands it over again",
            "an agent that never ran has no duration to tell"
        );
        assert_eq!(
            ended(None, Some("killed"), "signal").human(),
            "a: task id FAILED after 2.5 s: killed"
        );
        assert!(!finished(Some(0), None).is_failure());
        assert!(finished(Some(3), None).is_failure());
        assert!(finished(None, Some("killed")).is_failure());
        assert_eq!(
            finished(Some(3), None).human(),
            "a: task id FAILED after 2.5 s: the agent exited with status 3"
        );
        assert_eq!(
            finished(Some(0), None).human(),
            "a: finished task id in 2.5 s"
        );
    }

    #[test]
    fn durations_read_in_the_unit_that_fits() {
        for (seconds, text) in [
            (0.0, "0 s"),
            (-1.0, "0 s"),
            (f64::NAN, "0 s"),
            (0.0004, "0 ms"),
            (0.25, "250 ms"),
            (0.9996, "1 s"),
            (3.24, "3.2 s"),
            (5.0, "5 s"),
            (9.96, "10 s"),
            (45.4, "45 s"),
            (59.6, "1 min"),
            (125.4, "2 min 5 s"),
            (3600.0, "1 h"),
            (3_780.0, "1 h 3 min"),
            (2.0 * 86_400.0 + 4.0 * 3600.0 + 59.0, "2 d 4 h"),
        ] {
            assert_eq!(duration_text(seconds), text, "{seconds}");
        }
    }

    #[test]
    fn a_dry_run_round_says_rendered() {
        let round = Event::RoundFinished {
            automation: "q".into(),
            polled: 5,
            dispatched: 5,
            skipped: 0,
            failed: 0,
            rejected: 0,
        };
        assert_eq!(
            round.human(),
            "q: round finished: 5 polled, 5 dispatched, 0 already handled, 0 failed"
        );
        let rejecting = Event::RoundFinished {
            automation: "q".into(),
            polled: 5,
            dispatched: 5,
            skipped: 0,
            failed: 0,
            rejected: 2,
        };
        assert_eq!(
            rejecting.human(),
            "q: round finished: 5 polled, 5 dispatched, 0 already handled, 0 failed, 2 rejected by \
             the trigger (see its warnings above)"
        );
        let mut dry = EventWriter::new(Vec::new(), Format::Human).dry_run(true);
        dry.emit(&round).unwrap();
        assert_eq!(
            String::from_utf8(dry.into_inner()).unwrap(),
            "q: round finished: 5 polled, 5 rendered, 0 already handled, 0 failed\n"
        );
        let mut json = EventWriter::new(Vec::new(), Format::Json).dry_run(true);
        json.emit(&round).unwrap();
        let line: serde_json::Value = serde_json::from_slice(&json.into_inner()).unwrap();
        assert_eq!(line["dispatched"], 5, "the JSON member keeps its name");
    }

    #[test]
    fn a_task_line_has_one_parenthesis_group() {
        let values = vec![Pair::new("issue", "3"), Pair::new("title", "Crash on save")];
        let started = |attempt| Event::TaskStarted {
            automation: "fix".into(),
            task_id: "0123456789abcdef".into(),
            values: values.clone(),
            attempt,
            workspace: "/w".into(),
        };
        assert_eq!(
            started(2).human(),
            "fix: started task 0123456789ab (attempt 2; issue=3, title=\"Crash on save\")"
        );
        let skipped = Event::TaskSkipped {
            automation: "fix".into(),
            task_id: "0123456789abcdef".into(),
            values: values.clone(),
        };
        assert_eq!(
            skipped.human(),
            "fix: skipped task 0123456789ab (already handled; issue=3, title=\"Crash on save\")"
        );
        let no_pairs = Event::TaskStarted {
            automation: "fix".into(),
            task_id: "0123456789abcdef".into(),
            values: vec![],
            attempt: 1,
            workspace: "/w".into(),
        };
        assert_eq!(no_pairs.human(), "fix: started task 0123456789ab");
        let rendered = Event::TaskRendered {
            automation: "fix".into(),
            task_id: "0123456789abcdef".into(),
            values,
            prompt: "Fix it".into(),
        };
        assert_eq!(
            rendered.human(),
            "fix: task 0123456789ab (issue=3, title=\"Crash on save\") would get this \
             prompt:\nFix it\n---"
        );
    }

    #[test]
    fn an_idle_automation_shows_one_empty_round_until_it_does_something() {
        let round = |automation: &str, polled: u32, skipped: u32| Event::RoundFinished {
            automation: automation.into(),
            polled,
            dispatched: polled,
            skipped,
            failed: 0,
            rejected: 0,
        };
        let rounds = [
            round("a", 0, 0),
            round("a", 0, 0),
            round("b", 0, 0),
            round("a", 0, 0),
            round("a", 2, 0),
            round("a", 0, 0),
            round("a", 0, 0),
            round("a", 0, 1),
            round("b", 0, 0),
        ];
        let mut human = EventWriter::new(Vec::new(), Format::Human);
        let mut json = EventWriter::new(Vec::new(), Format::Json);
        for event in &rounds {
            human.emit(event).unwrap();
            json.emit(event).unwrap();
        }
        let shown = String::from_utf8(human.into_inner()).unwrap();
        let line = |automation: &str, polled: u32, skipped: u32| {
            format!(
                "{automation}: round finished: {polled} polled, {polled} dispatched, \
                 {skipped} already handled, 0 failed"
            )
        };
        assert_eq!(
            shown.lines().collect::<Vec<_>>(),
            [
                line("a", 0, 0),
                line("b", 0, 0),
                line("a", 2, 0),
                line("a", 0, 0),
                line("a", 0, 1),
            ]
        );
        let all = String::from_utf8(json.into_inner()).unwrap();
        assert_eq!(all.lines().count(), rounds.len(), "JSON has every round");
    }

    #[test]
    fn items_already_handled_are_counted_in_the_round_s_line_not_one_line_each() {
        let skipped = |n: u32| Event::TaskSkipped {
            automation: "fix".into(),
            task_id: format!("{n:016x}"),
            values: vec![Pair::new("n", n.to_string())],
        };
        let events = [
            skipped(1),
            skipped(2),
            skipped(3),
            Event::RoundFinished {
                automation: "fix".into(),
                polled: 4,
                dispatched: 1,
                skipped: 3,
                failed: 0,
                rejected: 0,
            },
        ];
        let mut human = EventWriter::new(Vec::new(), Format::Human);
        let mut json = EventWriter::new(Vec::new(), Format::Json);
        for event in &events {
            human.emit(event).unwrap();
            json.emit(event).unwrap();
        }
        assert_eq!(
            String::from_utf8(human.into_inner()).unwrap(),
            "fix: round finished: 4 polled, 1 dispatched, 3 already handled, 0 failed\n"
        );
        let all = String::from_utf8(json.into_inner()).unwrap();
        assert_eq!(all.matches("\"task.skipped\"").count(), 3, "{all}");
    }

    #[test]
    fn an_interrupted_task_says_it_is_not_finished() {
        let interrupted = |reason: &str| Event::TaskInterrupted {
            automation: "fix".into(),
            task_id: "0123456789abcdef".into(),
            values: vec![Pair::new("n", "1")],
            reason: reason.into(),
        };
        assert_eq!(
            interrupted("shutdown").human(),
            "fix: task 0123456789ab interrupted by the host's shutdown; not finished: a later \
             run hands it over again"
        );
        assert!(
            !interrupted("shutdown").is_failure(),
            "not a failure of the task"
        );
        let json = serde_json::to_value(interrupted("ledger-failed")).unwrap();
        assert_eq!(json["event"], "task.interrupted");
        assert_eq!(json["reason"], "ledger-failed");
        assert_eq!(json["values"][0]["key"], "n");
    }

    #[test]
    fn a_retry_says_how_the_attempt_before_it_ended() {
        let retrying = |exit_code, error: Option<&str>, reason: &str| {
            Event::TaskRetrying {
                automation: "fix".into(),
                task_id: "0123456789abcdef".into(),
                attempt: 2,
                delay_seconds: 10.0,
                reason: reason.into(),
                exit_code,
                error: error.map(str::to_owned),
                duration_seconds: 1.5,
            }
            .human()
        };
        assert_eq!(
            retrying(Some(3), None, "exit"),
            "fix: task 0123456789ab attempt 1 failed: the agent exited with status 3; \
             attempt 2 in 10 s"
        );
        assert_eq!(
            retrying(None, Some("killed after 5 s (timeout_seconds)"), "timeout"),
            "fix: task 0123456789ab attempt 1 failed: killed after 5 s (timeout_seconds); \
             attempt 2 in 10 s"
        );
        assert_eq!(
            retrying(None, None, "signal"),
            "fix: task 0123456789ab attempt 1 failed: signal; attempt 2 in 10 s"
        );
    }

    #[test]
    fn human_lines_quote_values_that_need_it() {
        let event = Event::TaskStarted {
            automation: "fix".into(),
            task_id: "abc".into(),
            values: vec![
                Pair::new("issue", "42"),
                Pair::new("title", "Crash on save"),
            ],
            attempt: 1,
            workspace: "/w".into(),
        };
        assert_eq!(
            event.human(),
            "fix: started task abc (issue=42, title=\"Crash on save\")"
        );
    }
}
