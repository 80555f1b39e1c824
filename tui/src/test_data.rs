//! Snapshots for the tests of the dashboard and its layouts.

use std::time::{Duration, SystemTime};

use curupira_ledger::{Status, TaskRecord};
use curupira_orchestrator::status::{AutomationState, RunningAttempt, timestamp};

use crate::snapshot::{Host, HostState, LedgerState, Snapshot};

/// The tests' "now".
pub(crate) fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000)
}

/// Attempt `attempt` of the task `letter` × 64, started 90 s ago, agent pid 777, the
/// item `n=<letter>`.
pub(crate) fn running(automation: &str, letter: char, attempt: u32) -> RunningAttempt {
    let mut running = RunningAttempt::new(
        automation,
        &letter.to_string().repeat(64),
        attempt,
        now() - Duration::from_secs(90),
    );
    running.pid = Some(777);
    running.log_path = Some(format!("/logs/{attempt}.log"));
    running.values =
        serde_json::from_value(serde_json::json!([{"key": "n", "value": letter.to_string()}]))
            .unwrap_or_default();
    running
}

fn ended(automation: &str, letter: char, status: Status, exit_code: i32) -> TaskRecord {
    TaskRecord {
        automation: automation.to_owned(),
        task_id: letter.to_string().repeat(64),
        values: serde_json::json!([{"key": "n", "value": letter.to_string()}]),
        status,
        attempts: 1,
        exit_code: Some(exit_code),
        reason: Some("exit".to_owned()),
        workspace: None,
        host_pid: Some(4242),
        agent_pid: Some(777),
        retry_requested: false,
        created_at: timestamp(now() - Duration::from_secs(60)),
        updated_at: timestamp(now() - Duration::from_secs(20)),
        duration_seconds: Some(3.25),
    }
}

/// A task that failed with exit status 4.
pub(crate) fn failed(automation: &str, letter: char) -> TaskRecord {
    ended(automation, letter, Status::Failed, 4)
}

/// A task that succeeded.
pub(crate) fn succeeded(automation: &str, letter: char) -> TaskRecord {
    ended(automation, letter, Status::Succeeded, 0)
}

/// A running host (pid 4242, up 2 min) with these running attempts and recent tasks.
pub(crate) fn snapshot_of(running: Vec<RunningAttempt>, recent: Vec<TaskRecord>) -> Snapshot {
    Snapshot {
        host: Host {
            state: HostState::Running,
            pid: Some(4242),
            started_at: Some(timestamp(now() - Duration::from_secs(120))),
            ..Host::default()
        },
        running,
        recent,
        ledger: LedgerState::Read,
        ..Snapshot::default()
    }
}

/// An automation's published state, from the members a host writes (read as a
/// reader of `status.json` reads it, so a member added later takes its default).
pub(crate) fn automation_state(members: serde_json::Value) -> AutomationState {
    serde_json::from_value(members).unwrap_or_else(|err| panic!("{err}"))
}
