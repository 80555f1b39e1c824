//! `GET /metrics`: what a run did, in Prometheus's text format (OpenMetrics 1.0, through
//! `prometheus-client`).
//!
//! | metric | type | labels | what |
//! |---|---|---|---|
//! | `curupira_tasks_finished_total` | counter | `automation`, `outcome` | tasks that ended: `succeeded`, `failed` (`task.finished`), `interrupted` (`task.interrupted`), `refused` (`task.unfilled` that refused the task) |
//! | `curupira_tasks_running` | gauge | — | attempts running now |
//! | `curupira_tasks_waiting_retry` | gauge | — | tasks waiting for a retry now |
//! | `curupira_attempt_duration_seconds` | histogram | `automation` | each attempt that ended with a retry or its task's end, from 0.1 s to about 1 h 49 min in doublings |
//! | `curupira_extension_errors_total` | counter | `code` | extension calls that failed an automation or a shutdown, by protocol error code (each named code from the start, at 0) |
//! | `curupira_config_reloads_total` | counter | `outcome` | changed configurations `run --watch` took up: `applied` (`config.reloaded`) or `refused` (`config.refused`), each from the start, at 0 |
//! | `curupira_rounds_total` | counter | `automation` | rounds of polls that ended (every automation of the run from the start, at 0; so are its `tasks_finished` outcomes) |
//!
//! The counters count from the host's start; the gauges are read from the run's
//! published state at each scrape.
//!
//! ```
//! use curupira_http::Metrics;
//! use curupira_orchestrator::Event;
//!
//! let metrics = Metrics::new(None);
//! metrics.observe(&Event::RoundFinished {
//!     automation: "fix".into(), polled: 0, dispatched: 0, skipped: 0, failed: 0, rejected: 0,
//! });
//! assert!(metrics.render().contains("curupira_rounds_total{automation=\"fix\"} 1"));
//! ```

use curupira_orchestrator::Event;
use curupira_orchestrator::status::Live;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Finished {
    automation: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Of {
    automation: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Code {
    code: i64,
}

type Durations = Family<Of, Histogram, fn() -> Histogram>;

/// The run's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    finished: Family<Finished, Counter>,
    running: Gauge,
    waiting: Gauge,
    durations: Durations,
    errors: Family<Code, Counter>,
    rounds: Family<Of, Counter>,
    reloads: Family<Outcome, Counter>,
    live: Option<Live>,
}

fn duration_histogram() -> Histogram {
    // 0.1 s doubling 16 times: the last bucket starts at about 1 h 49 min.
    Histogram::new(exponential_buckets(0.1, 2.0, 17))
}

/// The outcomes of `curupira_tasks_finished_total`, each exposed from the start.
const OUTCOMES: &[&str] = &["succeeded", "failed", "interrupted", "refused"];

impl Metrics {
    /// Empty metrics; the gauges are read from `live` when given.
    pub fn new(live: Option<Live>) -> Metrics {
        let mut registry = Registry::default();
        let finished = Family::<Finished, Counter>::default();
        let running = Gauge::default();
        let waiting = Gauge::default();
        let durations: Durations = Family::new_with_constructor(duration_histogram);
        let errors = Family::<Code, Counter>::default();
        let rounds = Family::<Of, Counter>::default();
        let reloads = Family::<Outcome, Counter>::default();
        for outcome in ["applied", "refused"] {
            let _ = reloads.get_or_create(&Outcome { outcome });
        }
        registry.register(
            "curupira_tasks_finished",
            "Tasks that ended, by automation and outcome",
            finished.clone(),
        );
        registry.register(
            "curupira_tasks_running",
            "Attempts running now",
            running.clone(),
        );
        registry.register(
            "curupira_tasks_waiting_retry",
            "Tasks waiting for a retry now",
            waiting.clone(),
        );
        registry.register(
            "curupira_attempt_duration_seconds",
            "How long attempts took, by automation",
            durations.clone(),
        );
        registry.register(
            "curupira_extension_errors",
            "Extension calls that failed, by protocol error code",
            errors.clone(),
        );
        registry.register(
            "curupira_rounds",
            "Rounds of polls that ended, by automation",
            rounds.clone(),
        );
        registry.register(
            "curupira_config_reloads",
            "Changed configurations taken up by a continuous run, by outcome",
            reloads.clone(),
        );
        Metrics {
            registry,
            finished,
            running,
            waiting,
            durations,
            errors,
            rounds,
            reloads,
            live,
        }
    }

    /// Counts what `event` says happened.
    pub fn observe(&self, event: &Event) {
        match event {
            Event::TaskFinished {
                automation,
                exit_code,
                error,
                duration_seconds,
                ..
            } => {
                let outcome = if *exit_code == Some(0) && error.is_none() {
                    "succeeded"
                } else {
                    "failed"
                };
                self.finish(automation, outcome);
                self.durations
                    .get_or_create(&Of {
                        automation: automation.clone(),
                    })
                    .observe(*duration_seconds);
            }
            Event::TaskRetrying {
                automation,
                duration_seconds,
                ..
            } => {
                self.durations
                    .get_or_create(&Of {
                        automation: automation.clone(),
                    })
                    .observe(*duration_seconds);
            }
            Event::TaskInterrupted { automation, .. } => self.finish(automation, "interrupted"),
            Event::TaskUnfilled {
                automation,
                refused: true,
                ..
            }
            | Event::TaskRefused { automation, .. } => self.finish(automation, "refused"),
            Event::AutomationFailed { code, .. } | Event::ExtensionFailed { code, .. } => {
                self.errors.get_or_create(&Code { code: *code }).inc();
            }
            Event::RoundFinished { automation, .. } => {
                self.rounds
                    .get_or_create(&Of {
                        automation: automation.clone(),
                    })
                    .inc();
            }
            Event::ConfigReloaded { .. } => {
                self.reloads
                    .get_or_create(&Outcome { outcome: "applied" })
                    .inc();
            }
            Event::ConfigRefused { .. } => {
                self.reloads
                    .get_or_create(&Outcome { outcome: "refused" })
                    .inc();
            }
            Event::TaskStarted { .. }
            | Event::TaskResumed { .. }
            | Event::WorkspaceCreated { .. }
            | Event::WorkspaceRemoved { .. }
            | Event::TaskSkipped { .. }
            | Event::TaskRendered { .. }
            | Event::TaskUnfilled { .. }
            | Event::Waiting { .. } => {}
        }
    }

    fn finish(&self, automation: &str, outcome: &'static str) {
        self.finished
            .get_or_create(&Finished {
                automation: automation.to_owned(),
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    /// The metrics in the text format, the gauges read now.
    pub fn render(&self) -> String {
        if let Some(live) = &self.live {
            let snapshot = live.snapshot();
            self.running
                .set(i64::try_from(snapshot.running.len()).unwrap_or(i64::MAX));
            self.waiting
                .set(i64::try_from(snapshot.retrying.len()).unwrap_or(i64::MAX));
            // Every series of each automation the run has, from the start (at 0), so
            // that a rate over them needs no first event.
            // The protocol's named error codes, each from the start too.
            for code in curupira_jsonrpc::ErrorCode::NAMED {
                let _ = self.errors.get_or_create(&Code { code: code.code() });
            }
            for automation in &snapshot.automations {
                let of = Of {
                    automation: automation.name.clone(),
                };
                let _ = self.rounds.get_or_create(&of);
                for outcome in OUTCOMES {
                    let _ = self.finished.get_or_create(&Finished {
                        automation: automation.name.clone(),
                        outcome: (*outcome).to_owned(),
                    });
                }
            }
        }
        let mut text = String::new();
        // Writing to a String does not fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use curupira_orchestrator::status::{HostInfo, RunningAttempt};
    use std::time::SystemTime;

    #[test]
    fn events_are_counted_and_the_gauges_read_from_the_live_state() {
        let live = Live::new(HostInfo::this_process("test", None));
        live.attempt_started(RunningAttempt::new("fix", "a", 1, SystemTime::now()));
        let metrics = Metrics::new(Some(live));
        let finished = |exit_code, duration_seconds| Event::TaskFinished {
            automation: "fix".into(),
            task_id: "a".into(),
            values: Vec::new(),
            exit_code,
            error: None,
            reason: "exit".into(),
            duration_seconds,
            output: None,
        };
        metrics.observe(&finished(Some(0), 0.5));
        metrics.observe(&finished(Some(3), 3.0));
        metrics.observe(&finished(Some(0), 1.0));
        metrics.observe(&Event::ExtensionFailed {
            extension: "q".into(),
            method: "shutdown".into(),
            code: -32004,
            message: "m".into(),
        });
        let text = metrics.render();
        for line in [
            "curupira_tasks_finished_total{automation=\"fix\",outcome=\"succeeded\"} 2",
            "curupira_tasks_finished_total{automation=\"fix\",outcome=\"failed\"} 1",
            "curupira_tasks_running 1",
            "curupira_tasks_waiting_retry 0",
            "curupira_attempt_duration_seconds_count{automation=\"fix\"} 3",
            "curupira_attempt_duration_seconds_sum{automation=\"fix\"} 4.5",
            "curupira_extension_errors_total{code=\"-32004\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    /// Issue 37: `curupira_rounds_total` and the finished counters were missing until
    /// the first round; every series of a known automation is there from the start.
    #[test]
    fn every_series_is_exposed_before_the_first_event() {
        let live = Live::new(HostInfo::this_process("test", None));
        live.automation_added("fix", None);
        let text = Metrics::new(Some(live)).render();
        for line in [
            "curupira_rounds_total{automation=\"fix\"} 0",
            "curupira_tasks_finished_total{automation=\"fix\",outcome=\"failed\"} 0",
            "curupira_tasks_running 0",
            "curupira_extension_errors_total{code=\"-32004\"} 0",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}
