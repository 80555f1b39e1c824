//! Runs Curupira automations from a typed [`Plan`]: the engine behind `curupira run`,
//! for any program that wants to embed it.
//!
//! A plan is data (no file format, no command line, no terminal): the extensions it may
//! start (a process, or an instance in this process), and the automations — a trigger,
//! a prompt template, an agent command, its limits and where it works. [`run`] prepares
//! each automation (`trigger/schema`, the schema's defaults, `trigger/validate`), then
//! polls in rounds and hands each new item to one agent: the agent slots and their
//! fairness ([`dispatch`]), retries with backoff, agents supervised under their time
//! limits and reaped ([`agent`]), the stop protocol ([`Stop`]: the first request starts
//! nothing new, the second stops what runs), the watchdog that stops what a dead host
//! left ([`curupira_process::watchdog`]), and the durable ledger
//! ([`curupira_ledger`], behind its `RunBackend` trait) that makes "once per identity"
//! hold across processes. What happened is reported as [`Event`]s to an
//! [`EventSink`] of the caller's; how they are printed is the caller's business. What
//! the run is doing now is kept in a [`status::Live`] state when the caller asks
//! (`RunOptions::live`), for a status command, a terminal line or an HTTP server to
//! read, and written to a file by [`status::Publisher`].
//!
//! The order of work, the failure rules and the stop protocol are in [`runner`]'s
//! documentation; the extension processes per round in [`extensions`].
//!
//! ```
//! # #[cfg(unix)] {
//! use std::io::BufReader;
//! use std::sync::{Arc, Mutex};
//! use std::time::Duration;
//!
//! use curupira_client::curupira_protocol::PeerInfo;
//! use curupira_client::serde_json::json;
//! use curupira_client::{Client, Options, memory};
//! use curupira_extension_sdk::{
//!     Arguments, Pair, ServeOptions, Trigger, TriggerDescription, TriggerError,
//!     TriggerSchema, ValidateError, serve,
//! };
//! use curupira_orchestrator::events::Event;
//! use curupira_orchestrator::plan::{
//!     AgentPolicy, Automation, ExtensionPlan, Launch, Plan, Polling, Unfilled,
//! };
//! use curupira_orchestrator::{AgentLimits, RunOptions, Stop, run};
//! use curupira_workspace::WorkspaceSpec;
//!
//! /// Hands out what is left in a queue shared by its instances.
//! struct Queue(Arc<Mutex<Vec<&'static str>>>);
//!
//! impl Trigger for Queue {
//!     fn describe(&self) -> Vec<TriggerDescription> {
//!         vec![TriggerDescription::new("queue", ["n"])]
//!     }
//!     fn schema(&self, _: &str) -> Result<TriggerSchema, TriggerError> {
//!         Ok(TriggerSchema::new(json!({"type": "object"}), ["n"]))
//!     }
//!     fn validate(&self, _: &str, _: &Arguments) -> Result<(), ValidateError> {
//!         Ok(())
//!     }
//!     fn poll(&mut self, _: &str, _: &Arguments) -> Result<Option<Vec<Pair>>, TriggerError> {
//!         Ok(self.0.lock().unwrap().pop().map(|n| vec![Pair::new("n", n)]))
//!     }
//! }
//!
//! let queue = Arc::new(Mutex::new(vec!["2", "1"]));
//! // Each start of the extension serves a fresh instance on a thread, in memory.
//! let connect = move |name: &str, options: Options| -> Client {
//!     let (client, extension) = memory::duplex(name, options);
//!     let mut trigger = Queue(Arc::clone(&queue));
//!     std::thread::spawn(move || {
//!         let (reader, writer) = extension.split();
//!         let served = ServeOptions::new("queue", "1.0.0");
//!         serve(&mut trigger, BufReader::new(reader), writer, &served)
//!     });
//!     client
//! };
//! let dir = std::env::temp_dir();
//! let plan = Plan {
//!     dir: dir.clone(),
//!     repository: Ok("acme/widgets".to_owned()),
//!     max_concurrent: 2,
//!     client: Options::default(),
//!     client_info: PeerInfo::new("my-host", "0.1.0"),
//!     extensions: vec![ExtensionPlan {
//!         name: "queue".to_owned(),
//!         launch: Launch::InProcess(Arc::new(connect)),
//!         persistent: true,
//!         trigger_types: vec!["queue".to_owned()],
//!     }],
//!     automations: vec![Automation {
//!         name: "fix".to_owned(),
//!         extension: "queue".to_owned(),
//!         trigger_type: "queue".to_owned(),
//!         prompt: "Fix item ${n} of ${repository}.".to_owned(),
//!         arguments: Default::default(),
//!         polling: Polling { batch_size: 10, interval: Duration::from_secs(60) },
//!         // A stand-in agent: reads its prompt and succeeds.
//!         agent: vec!["sh".to_owned(), "-c".to_owned(), "cat > /dev/null".to_owned()],
//!         provider: None,
//!         agent_policy: AgentPolicy {
//!             cap: None,
//!             limits: AgentLimits::default(),
//!             retries: 0,
//!             retry_backoff: Duration::from_secs(1),
//!             max_retry_backoff: Duration::from_secs(1),
//!         },
//!         workspace: WorkspaceSpec::new(&dir),
//!         unfilled: Unfilled::Warn,
//!         prompt_syntax: Default::default(),
//!         repository: None,
//!         configuration_repository: None,
//!         checkout: None,
//!         identity: Default::default(),
//!     }],
//!     logs: None,
//! };
//! let options = RunOptions { once: true, ..RunOptions::default() };
//! let mut events: Vec<Event> = Vec::new();
//! run(&plan, &options, &Stop::new(), &mut events)?;
//!
//! let finished: Vec<_> = events
//!     .iter()
//!     .filter_map(|event| match event {
//!         Event::TaskFinished { values, exit_code, .. } => Some((values[0].value.clone(), *exit_code)),
//!         _ => None,
//!     })
//!     .collect();
//! assert_eq!(finished.len(), 2, "{events:#?}");
//! assert!(finished.iter().all(|(_, exit_code)| *exit_code == Some(0)));
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod dispatch;
pub mod events;
pub mod extensions;
mod journal;
pub mod log;
pub mod plan;
pub mod reload;
pub mod runner;
pub mod status;

pub use agent::AgentLimits;
pub use curupira_process::stop::Stop;
pub use events::{Event, EventSink};
pub use plan::Plan;
pub use runner::{RunError, RunLedger, RunOptions, run};

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
