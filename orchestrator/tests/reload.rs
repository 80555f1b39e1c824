//! A continuous run taking up reloaded plans ([`curupira_orchestrator::reload`]): an
//! automation added, a prompt changed while a task of the old prompt runs, a refused
//! configuration, an automation removed. In-process triggers, `sh` agents.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{self, BufReader};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use curupira_client::curupira_protocol::PeerInfo;
use curupira_client::serde_json::json;
use curupira_client::{Client, Options, memory};
use curupira_extension_sdk::{
    Arguments, Pair, ServeOptions, Trigger, TriggerDescription, TriggerError, TriggerSchema,
    ValidateError, serve,
};
use curupira_orchestrator::events::{ChangedAutomation, Event, EventSink};
use curupira_orchestrator::plan::{
    AgentPolicy, Automation, ExtensionPlan, Launch, Plan, Polling, Unfilled,
};
use curupira_orchestrator::reload::Reloads;
use curupira_orchestrator::{AgentLimits, RunOptions, Stop, run};
use curupira_workspace::WorkspaceSpec;

/// More than anything here may take, however loaded the machine.
const SLOW: Duration = Duration::from_secs(20);

type Queue = Arc<Mutex<Vec<&'static str>>>;

/// Hands out what is left in a queue shared by its instances; refuses the argument
/// `reject`.
struct Queued(Queue);

impl Trigger for Queued {
    fn describe(&self) -> Vec<TriggerDescription> {
        vec![TriggerDescription::new("queue", ["n"])]
    }
    fn schema(&self, _: &str) -> Result<TriggerSchema, TriggerError> {
        Ok(TriggerSchema::new(json!({"type": "object"}), ["n"]))
    }
    fn validate(&self, _: &str, arguments: &Arguments) -> Result<(), ValidateError> {
        match arguments.get("reject") {
            Some(_) => Err(ValidateError::Rejected(
                "`reject` is not accepted".to_owned(),
            )),
            None => Ok(()),
        }
    }
    fn poll(&mut self, _: &str, _: &Arguments) -> Result<Option<Vec<Pair>>, TriggerError> {
        Ok(self
            .0
            .lock()
            .unwrap()
            .pop()
            .map(|n| vec![Pair::new("n", n)]))
    }
}

fn extension(name: &str, queue: &Queue) -> ExtensionPlan {
    let queue = Arc::clone(queue);
    let connect = move |name: &str, options: Options| -> Client {
        let (client, extension) = memory::duplex(name, options);
        let mut trigger = Queued(Arc::clone(&queue));
        thread::spawn(move || {
            let (reader, writer) = extension.split();
            serve(
                &mut trigger,
                BufReader::new(reader),
                writer,
                &ServeOptions::new("queue", "1.0.0"),
            )
        });
        client
    };
    ExtensionPlan {
        name: name.to_owned(),
        launch: Launch::InProcess(Arc::new(connect)),
        persistent: true,
        trigger_types: vec!["queue".to_owned()],
    }
}

/// The agent: writes its prompt to `<dir>/out/<n>`; the item `slow` waits for
/// `<dir>/release` first.
fn automation(name: &str, extension: &str, prompt: &str, dir: &Path) -> Automation {
    let script = format!(
        "p=$(cat); n=${{p##* }}; case \"$n\" in slow) while [ ! -e '{dir}/release' ]; do \
         sleep 0.02; done;; esac; printf %s \"$p\" > '{dir}/out/'\"$n\"",
        dir = dir.display()
    );
    Automation {
        name: name.to_owned(),
        extension: extension.to_owned(),
        trigger_type: "queue".to_owned(),
        prompt: prompt.to_owned(),
        arguments: Default::default(),
        polling: Polling {
            batch_size: 5,
            interval: Duration::from_millis(50),
        },
        agent: vec!["sh".to_owned(), "-c".to_owned(), script],
        provider: None,
        agent_policy: AgentPolicy {
            cap: None,
            limits: AgentLimits::default(),
            retries: 0,
            retry_backoff: Duration::from_secs(1),
            max_retry_backoff: Duration::from_secs(1),
        },
        workspace: WorkspaceSpec::new(dir),
        unfilled: Unfilled::Warn,
        prompt_syntax: Default::default(),
        repository: None,
        configuration_repository: None,
        checkout: None,
        identity: Default::default(),
    }
}

fn plan(dir: &Path, extensions: Vec<ExtensionPlan>, automations: Vec<Automation>) -> Plan {
    Plan {
        dir: dir.to_owned(),
        repository: Ok("acme/widgets".to_owned()),
        max_concurrent: 4,
        client: Options::default(),
        client_info: PeerInfo::new("reload-test", "0.1.0"),
        extensions,
        automations,
        logs: None,
    }
}

/// Hands each event to the test as it happens.
struct Forward(mpsc::Sender<Event>);

impl EventSink for Forward {
    fn emit(&mut self, event: &Event) -> io::Result<()> {
        let _ = self.0.send(event.clone());
        Ok(())
    }
}

/// The events of a running run, read until one matches.
struct Watched {
    events: mpsc::Receiver<Event>,
    seen: Vec<Event>,
}

impl Watched {
    fn until(&mut self, what: &str, matches: impl Fn(&Event) -> bool) -> Event {
        let deadline = Instant::now() + SLOW;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(event) => {
                    self.seen.push(event.clone());
                    if matches(&event) {
                        return event;
                    }
                }
                Err(_) => panic!("no {what} in time; seen: {:#?}", self.seen),
            }
        }
    }

    fn finished(&mut self, automation: &str, n: &str) -> Event {
        self.until(&format!("task.finished of {automation} {n}"), |event| {
            matches!(event, Event::TaskFinished { automation: a, values, .. }
                if a == automation && values[0].value == n)
        })
    }
}

fn out(dir: &Path, n: &str) -> String {
    std::fs::read_to_string(dir.join("out").join(n)).unwrap()
}

#[test]
fn a_running_watch_takes_up_added_changed_refused_and_removed_automations() {
    let temp = tempfile::tempdir().unwrap();
    let dir: PathBuf = temp.path().canonicalize().unwrap();
    std::fs::create_dir(dir.join("out")).unwrap();
    let first: Queue = Arc::new(Mutex::new(vec!["slow"]));
    let second: Queue = Arc::new(Mutex::new(vec!["b"]));
    let started = plan(
        &dir,
        vec![extension("one", &first)],
        vec![automation("fix", "one", "Old ${n}", &dir)],
    );
    let reloads = Reloads::new();
    let options = RunOptions {
        reloads: Some(reloads.clone()),
        ..RunOptions::default()
    };
    let stop = Stop::new();
    let (sender, events) = mpsc::channel();
    let running = {
        let stop = stop.clone();
        thread::spawn(move || {
            let mut sink = Forward(sender);
            run(&started, &options, &stop, &mut sink)
        })
    };
    let mut watched = Watched {
        events,
        seen: Vec::new(),
    };
    watched.until(
        "task.started of slow",
        |event| matches!(event, Event::TaskStarted { values, .. } if values[0].value == "slow"),
    );

    // The prompt changes and an automation (on an extension of its own) is added, while
    // `slow` runs with the old prompt.
    let changed = |prompt: &str, with_other: bool| {
        let mut extensions = vec![extension("one", &first)];
        let mut automations = vec![automation("fix", "one", prompt, &dir)];
        if with_other {
            extensions.push(extension("two", &second));
            automations.push(automation("other", "two", "Other ${n}", &dir));
        }
        plan(&dir, extensions, automations)
    };
    reloads.offer(
        changed("New ${n}", true),
        vec!["[settings.http] listen".to_owned()],
    );
    let reloaded = watched.until("config.reloaded", |event| {
        matches!(event, Event::ConfigReloaded { .. })
    });
    assert_eq!(
        reloaded,
        Event::ConfigReloaded {
            added: vec!["other".to_owned()],
            removed: vec![],
            changed: vec![ChangedAutomation {
                automation: "fix".to_owned(),
                what: vec!["prompt".to_owned()],
            }],
            restart_needed: vec!["[settings.http] listen".to_owned()],
        }
    );
    watched.finished("other", "b");
    assert_eq!(out(&dir, "b"), "Other b");

    // Dispatched after the change: the new prompt; the task in flight kept its own.
    first.lock().unwrap().push("a");
    std::fs::write(dir.join("release"), "").unwrap();
    let slow = watched.finished("fix", "slow");
    assert!(
        matches!(
            slow,
            Event::TaskFinished {
                exit_code: Some(0),
                ..
            }
        ),
        "{slow:?}"
    );
    assert_eq!(out(&dir, "slow"), "Old slow");
    watched.finished("fix", "a");
    assert_eq!(out(&dir, "a"), "New a");

    // A configuration that does not check, then one whose new argument the trigger
    // rejects: both refused, the running one kept.
    reloads.refuse(vec![
        "curupira.toml:1:1: error[config/toml]: broken".to_owned(),
    ]);
    let refused = watched.until("config.refused", |event| {
        matches!(event, Event::ConfigRefused { .. })
    });
    assert_eq!(
        refused,
        Event::ConfigRefused {
            diagnostics: vec!["curupira.toml:1:1: error[config/toml]: broken".to_owned()]
        }
    );
    let mut rejected = changed("Rejected ${n}", true);
    rejected.automations[0]
        .arguments
        .insert("reject".to_owned(), true.into());
    reloads.offer(rejected, vec![]);
    let refused = watched.until("config.refused", |event| {
        matches!(event, Event::ConfigRefused { .. })
    });
    let Event::ConfigRefused { diagnostics } = refused else {
        unreachable!()
    };
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert!(
        diagnostics[0].contains("`reject` is not accepted"),
        "{diagnostics:?}"
    );
    first.lock().unwrap().push("c");
    watched.finished("fix", "c");
    assert_eq!(out(&dir, "c"), "New c");

    // Removed: `other` polls no more.
    reloads.offer(changed("New ${n}", false), vec![]);
    let reloaded = watched.until("config.reloaded", |event| {
        matches!(event, Event::ConfigReloaded { .. })
    });
    assert_eq!(
        reloaded,
        Event::ConfigReloaded {
            added: vec![],
            removed: vec!["other".to_owned()],
            changed: vec![],
            restart_needed: vec![],
        }
    );
    second.lock().unwrap().push("d");
    first.lock().unwrap().push("e");
    watched.finished("fix", "e");
    // `fix` polled twice since; `other` would have too.
    thread::sleep(Duration::from_millis(300));
    stop.request();
    running.join().unwrap().unwrap();
    while let Ok(event) = watched.events.try_recv() {
        watched.seen.push(event);
    }
    let of_other_after_removal = watched
        .seen
        .iter()
        .filter(
            |event| matches!(event, Event::TaskStarted { values, .. } if values[0].value == "d"),
        )
        .count();
    assert_eq!(of_other_after_removal, 0, "{:#?}", watched.seen);
    assert_eq!(second.lock().unwrap().as_slice(), ["d"]);
    let started_slow = watched
        .seen
        .iter()
        .filter(
            |event| matches!(event, Event::TaskStarted { values, .. } if values[0].value == "slow"),
        )
        .count();
    assert_eq!(started_slow, 1, "the task in flight ran once");
}
