//! The conformance walk behind `curupira probe`, as a library: drive an extension
//! through every protocol step once and say which steps conform — from an extension
//! author's own `cargo test` as well as from the command line.
//!
//! Steps, in order: `initialize`, `describe`, `trigger/schema`, `trigger/validate`,
//! `trigger/poll`, `trigger/onStarted`, `trigger/onFinished`, `shutdown`. Each ends as
//! `pass` (with what was learnt), `fail` (with the reason, the same sentence a host
//! would report), or `skip`:
//!
//! - After a failure the remaining steps are skipped, except `shutdown`, which is
//!   always attempted while the extension is alive (a dead one was already killed).
//! - `trigger/onStarted` and `trigger/onFinished` run only when the poll returned an
//!   item; they receive exactly that item's pairs. They act for real: an extension
//!   that records finished work (like `local-queue`) records the probed item.
//! - The trigger is [`ProbeOptions::trigger`], else the first one `describe` lists; a
//!   trigger that `describe` does not list fails `describe`.
//! - The arguments are [`ProbeOptions::arguments`] with the schema's `default`s applied
//!   ([`curupira_protocol::apply_defaults`]), exactly as the host's `run` does.
//! - `shutdown` fails when there is no reply (or an error reply), or when the process
//!   does not exit within the timeout after its stdin is closed.
//! - [`probe`] starts the extension ([`LaunchCommand`]: its working directory is the
//!   command's); [`probe_client`] probes one already connected, e.g. in memory.
//!
//! ```
//! use std::io::BufReader;
//! use std::thread;
//!
//! use curupira_client::curupira_protocol::PeerInfo;
//! use curupira_client::probe::{ProbeOptions, Status, Tally, probe_client};
//! use curupira_client::serde_json::json;
//! use curupira_client::{Options, memory};
//! use curupira_extension_sdk::{
//!     Arguments, Pair, ServeOptions, Trigger, TriggerDescription, TriggerError,
//!     TriggerSchema, ValidateError, serve,
//! };
//!
//! /// One item, then nothing.
//! struct Once(bool);
//!
//! impl Trigger for Once {
//!     fn describe(&self) -> Vec<TriggerDescription> {
//!         vec![TriggerDescription::new("once", ["n"])]
//!     }
//!     fn schema(&self, _: &str) -> Result<TriggerSchema, TriggerError> {
//!         Ok(TriggerSchema::new(json!({"type": "object"}), ["n"]))
//!     }
//!     fn validate(&self, _: &str, _: &Arguments) -> Result<(), ValidateError> {
//!         Ok(())
//!     }
//!     fn poll(&mut self, _: &str, _: &Arguments) -> Result<Option<Vec<Pair>>, TriggerError> {
//!         let first = std::mem::replace(&mut self.0, false);
//!         Ok(first.then(|| vec![Pair::new("n", "1")]))
//!     }
//! }
//!
//! let (client, extension) = memory::duplex("once", Options::default());
//! let server = thread::spawn(move || {
//!     let (reader, writer) = extension.split();
//!     serve(&mut Once(true), BufReader::new(reader), writer, &ServeOptions::new("once", "1.0.0"))
//! });
//!
//! let mut tally = Tally::default();
//! let mut failures = Vec::new();
//! let options = ProbeOptions::new(PeerInfo::new("my-tests", "0.1.0"));
//! let conforms = probe_client(client, &options, |step| {
//!     tally.count(step);
//!     if step.status == Status::Fail {
//!         failures.push(step.to_string());
//!     }
//! });
//! assert!(conforms, "{failures:?}");
//! assert_eq!((tally.passed, tally.failed, tally.skipped), (8, 0, 0));
//! server.join().expect("the server thread").expect("serve");
//! ```

use curupira_protocol::{Arguments, PeerInfo, PollParams, ValidateResult};
use serde::Serialize;
use serde_json::Value;

use crate::{CallError, Client, Ending, LaunchCommand, Options};

/// The steps, in order: every method of the protocol, in the order of its table.
pub const STEPS: &[&str] = curupira_protocol::method::ALL;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It conforms.
    Pass,
    /// It does not.
    Fail,
    /// It was not run.
    Skip,
}

/// One step's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// The method (`trigger/poll`).
    pub step: &'static str,
    /// How it ended.
    pub status: Status,
    /// What was learnt, or why it failed or was skipped.
    pub detail: String,
}

impl std::fmt::Display for Step {
    /// `pass initialize (protocol 2, name x)`, `fail trigger/poll: …`,
    /// `skip trigger/onStarted (…)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Status::Pass => write!(f, "pass {} ({})", self.step, self.detail),
            Status::Fail => write!(f, "fail {}: {}", self.step, self.detail),
            Status::Skip => write!(f, "skip {} ({})", self.step, self.detail),
        }
    }
}

/// How many steps ended each way; its `Display` is the summary line `curupira probe`
/// prints after the steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Steps that passed.
    pub passed: usize,
    /// Steps that failed.
    pub failed: usize,
    /// Steps that were skipped.
    pub skipped: usize,
}

impl Tally {
    /// The verdict line of `--format json`.
    pub fn verdict(&self) -> Verdict {
        Verdict {
            verdict: if self.failed == 0 {
                Status::Pass
            } else {
                Status::Fail
            },
            passed: self.passed,
            failed: self.failed,
            skipped: self.skipped,
        }
    }

    /// Counts one step.
    pub fn count(&mut self, step: &Step) {
        match step.status {
            Status::Pass => self.passed += 1,
            Status::Fail => self.failed += 1,
            Status::Skip => self.skipped += 1,
        }
    }
}

impl std::fmt::Display for Tally {
    /// `the extension conforms: 8 steps passed and 0 were skipped`, or `the extension
    /// does not conform: 1 of 8 steps failed (6 passed, 1 skipped)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self {
            passed,
            failed,
            skipped,
        } = *self;
        if failed == 0 {
            write!(
                f,
                "the extension conforms: {passed} steps passed and {skipped} were skipped"
            )
        } else {
            write!(
                f,
                "the extension does not conform: {failed} of {} steps failed ({passed} passed, \
                 {skipped} skipped)",
                passed + failed + skipped
            )
        }
    }
}

/// The last line of `curupira probe --format json`, after the steps:
/// `{"verdict":"pass","passed":7,"failed":0,"skipped":1}`. A line is a step when it
/// has `step`, the verdict when it has `verdict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// `pass` when no step failed (skipped steps allowed), else `fail`; the exit code
    /// says the same (0 or 1). Never `skip`.
    pub verdict: Status,
    /// Steps that passed.
    pub passed: usize,
    /// Steps that failed.
    pub failed: usize,
    /// Steps that were skipped.
    pub skipped: usize,
}

/// How to probe: which trigger, with which arguments, under which limits.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The trigger type to exercise; the first one listed when `None`.
    pub trigger: Option<String>,
    /// The arguments before defaults.
    pub arguments: Arguments,
    /// The timeout of every call and the grace period after `shutdown`, and the
    /// largest frame body accepted.
    pub client: Options,
    /// What the prober says it is in `initialize` (`client_info`).
    pub client_info: PeerInfo,
}

impl ProbeOptions {
    /// The first trigger listed, no arguments, the client's default limits, and
    /// `client_info` as given.
    pub fn new(client_info: PeerInfo) -> Self {
        Self {
            trigger: None,
            arguments: Arguments::new(),
            client: Options::default(),
            client_info,
        }
    }
}

/// Starts the extension `launch` names and runs every step, handing each outcome to
/// `report` as soon as it is known. Returns whether every step that ran passed. The
/// process is always reaped: shut down when it is alive at the end, killed when a step
/// found it broken.
pub fn probe(
    launch: &LaunchCommand,
    options: &ProbeOptions,
    mut report: impl FnMut(&Step),
) -> bool {
    match Client::spawn("probe", launch, options.client) {
        Ok(client) => probe_client(client, options, report),
        Err(error) => {
            report(&Step {
                step: "initialize",
                status: Status::Fail,
                detail: reason(&error),
            });
            skip_rest(&mut report, 1, "the extension could not be started");
            report(&Step {
                step: "shutdown",
                status: Status::Skip,
                detail: "the extension could not be started".to_owned(),
            });
            false
        }
    }
}

/// Runs every step on an extension already connected (a [`Client::spawn`]ed process,
/// or one in this process through [`memory::duplex`](crate::memory::duplex)), as
/// [`probe`] does after starting it; the conversation ends with `shutdown`.
pub fn probe_client(
    mut client: Client,
    options: &ProbeOptions,
    mut report: impl FnMut(&Step),
) -> bool {
    let mut all_passed = true;
    let mut emit = |step: &'static str, outcome: Result<String, String>| {
        let (status, detail) = match outcome {
            Ok(detail) => (Status::Pass, detail),
            Err(reason) => {
                all_passed = false;
                (Status::Fail, reason)
            }
        };
        report(&Step {
            step,
            status,
            detail,
        });
    };
    let done = steps(&mut client, options, &mut emit);
    if let Some((next, why)) = done {
        skip_rest(&mut report, next, why);
    }
    let dead = client.is_dead();
    let step = if dead {
        Step {
            step: "shutdown",
            status: Status::Skip,
            detail: "the extension had failed and was killed".to_owned(),
        }
    } else {
        let timeout = options.client.timeouts.shutdown;
        match client.shutdown() {
            Ok(Ending::Exited(how)) => Step {
                step: "shutdown",
                status: Status::Pass,
                detail: format!("replied, closed stdin, {how}"),
            },
            Ok(Ending::Killed) => Step {
                step: "shutdown",
                status: Status::Fail,
                detail: format!(
                    "it replied but did not exit within {} s after its stdin was closed; killed",
                    timeout.as_secs_f64()
                ),
            },
            Ok(Ending::AlreadyFailed) => Step {
                step: "shutdown",
                status: Status::Skip,
                detail: "the extension had failed and was killed".to_owned(),
            },
            Err(error) => Step {
                step: "shutdown",
                status: Status::Fail,
                detail: reason(&error),
            },
        }
    };
    if step.status == Status::Fail {
        all_passed = false;
    }
    report(&step);
    all_passed
}

/// Runs initialize … onFinished; returns the index of the first step not run and why,
/// when the sequence stopped early.
fn steps(
    client: &mut Client,
    options: &ProbeOptions,
    emit: &mut impl FnMut(&'static str, Result<String, String>),
) -> Option<(usize, &'static str)> {
    const AFTER_FAILURE: &str = "an earlier step failed";
    match client.initialize(options.client_info.clone()) {
        Ok(hello) => {
            let detail = format!(
                "protocol {}, server {} {}",
                hello.protocol_version, hello.server_info.name, hello.server_info.version
            );
            emit("initialize", Ok(detail));
        }
        Err(error) => {
            emit("initialize", Err(reason(&error)));
            return Some((1, AFTER_FAILURE));
        }
    }

    let triggers = match client.describe() {
        Ok(described) => described.triggers,
        Err(error) => {
            emit("describe", Err(reason(&error)));
            return Some((2, AFTER_FAILURE));
        }
    };
    let listed: Vec<&str> = triggers.iter().map(|t| t.trigger_type.as_str()).collect();
    let trigger = match (&options.trigger, listed.first()) {
        (Some(wanted), _) if listed.contains(&wanted.as_str()) => wanted.clone(),
        (Some(wanted), _) => {
            emit(
                "describe",
                Err(format!(
                    "it does not list the trigger `{wanted}` (it lists {})",
                    list_or_none(&listed)
                )),
            );
            return Some((2, AFTER_FAILURE));
        }
        (None, Some(first)) => (*first).to_owned(),
        (None, None) => {
            emit("describe", Err("it lists no trigger".to_owned()));
            return Some((2, AFTER_FAILURE));
        }
    };
    emit(
        "describe",
        Ok(format!(
            "triggers: {}; probing `{trigger}`",
            listed.join(", ")
        )),
    );

    let schema = match client.schema(&trigger) {
        Ok(schema) => schema,
        Err(error) => {
            emit("trigger/schema", Err(reason(&error)));
            return Some((3, AFTER_FAILURE));
        }
    };
    let mut arguments = options.arguments.clone();
    curupira_protocol::apply_defaults(&schema.schema, &mut arguments);
    let defaulted: Vec<&str> = arguments
        .keys()
        .filter(|key| !options.arguments.contains_key(*key))
        .map(String::as_str)
        .collect();
    let fields: Vec<&str> = schema.prompt_fields.iter().map(String::as_str).collect();
    emit(
        "trigger/schema",
        Ok(format!(
            "prompt fields: {}; defaults applied: {}",
            list_or_none(&fields),
            list_or_none(&defaulted)
        )),
    );

    // The table as a host sends it: the parameters and the core key `trigger_type`
    // in its `alias/local` form (a probe has no prompt and no repository).
    let mut configuration = arguments;
    configuration.insert(
        "trigger_type".to_owned(),
        format!("{}/{trigger}", client.name()).into(),
    );
    let automation = match client.validate(&trigger, &configuration) {
        Ok(ValidateResult::Accepted {
            configuration: normalised,
        }) => {
            let detail = match &normalised {
                Some(normalised) => format!(
                    "ok: true, configuration {}",
                    Value::Object(normalised.clone())
                ),
                None => format!(
                    "ok: true, no configuration returned: polling with {}",
                    Value::Object(configuration.clone())
                ),
            };
            emit("trigger/validate", Ok(detail));
            normalised.unwrap_or(configuration)
        }
        Ok(ValidateResult::Rejected { error, .. }) => {
            emit(
                "trigger/validate",
                Err(format!(
                    "the extension rejected the configuration (ok: false): {}",
                    error.as_deref().unwrap_or("it gave no reason")
                )),
            );
            return Some((4, AFTER_FAILURE));
        }
        Err(error) => {
            emit("trigger/validate", Err(reason(&error)));
            return Some((4, AFTER_FAILURE));
        }
    };

    let poll = PollParams {
        trigger_type: trigger.clone(),
        automation,
        limit: Some(1),
        preview: false,
    };
    let pairs = match client.poll(&poll) {
        Ok(Some(pairs)) => pairs,
        Ok(None) => {
            emit("trigger/poll", Ok("values: null, nothing to do".to_owned()));
            return Some((5, "the poll returned no item"));
        }
        Err(error) => {
            emit("trigger/poll", Err(reason(&error)));
            return Some((5, AFTER_FAILURE));
        }
    };
    let shown: Vec<String> = pairs
        .iter()
        .map(|p| format!("{}={:?}", p.key, p.value))
        .collect();
    emit(
        "trigger/poll",
        Ok(format!(
            "one item with {} pair(s): {}",
            pairs.len(),
            shown.join(", ")
        )),
    );

    for (index, method) in [(5, "trigger/onStarted"), (6, "trigger/onFinished")] {
        let result = if index == 5 {
            client.on_started(&trigger, &pairs)
        } else {
            client.on_finished(&trigger, &pairs)
        };
        match result {
            Ok(()) => emit(method, Ok("with the polled pairs".to_owned())),
            Err(error) => {
                emit(method, Err(reason(&error)));
                return Some((index + 1, AFTER_FAILURE));
            }
        }
    }
    None
}

/// Reports `skip` for the steps from `from` up to (not including) `shutdown`.
fn skip_rest(report: &mut impl FnMut(&Step), from: usize, why: &str) {
    for step in STEPS.iter().take(STEPS.len() - 1).skip(from) {
        report(&Step {
            step,
            status: Status::Skip,
            detail: why.to_owned(),
        });
    }
}

/// The failure without the `extension `probe`: method failed:` prefix (the step line
/// already names the method): `timeout (-32004): no reply within 10 s`.
fn reason(error: &CallError) -> String {
    format!("{}: {}", error.code, error.message)
}

fn list_or_none(items: &[&str]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(status: Status) -> Step {
        Step {
            step: "initialize",
            status,
            detail: String::new(),
        }
    }

    #[test]
    fn the_summary_counts_every_way_a_step_ends() {
        let mut tally = Tally::default();
        for status in [Status::Pass, Status::Pass, Status::Skip] {
            tally.count(&step(status));
        }
        assert_eq!(
            tally.to_string(),
            "the extension conforms: 2 steps passed and 1 were skipped"
        );
        assert_eq!(
            serde_json::to_string(&tally.verdict()).unwrap(),
            r#"{"verdict":"pass","passed":2,"failed":0,"skipped":1}"#
        );
        tally.count(&step(Status::Fail));
        assert_eq!(
            tally.to_string(),
            "the extension does not conform: 1 of 4 steps failed (2 passed, 1 skipped)"
        );
        assert_eq!(tally.verdict().verdict, Status::Fail);
    }
}
