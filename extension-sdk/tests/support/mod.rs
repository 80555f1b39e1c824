//! What the conversation tests share: a test trigger, and `serve` running it in a
//! thread on the extension's ends of `curupira_client::memory` pipes.

use std::collections::VecDeque;
use std::thread::{self, JoinHandle};

use curupira_client::memory::{self, PipeReader, PipeWriter};
use curupira_client::{Client, Options};
use curupira_extension_sdk::{
    Arguments, Pair, ServeError, ServeOptions, ServeOutcome, Trigger, TriggerDescription,
    TriggerError, TriggerSchema, ValidateError, ValidationError, serve,
};
use serde_json::{Value, json};

/// How `serve` ended, and the trigger as it left it.
pub type Served = (Result<ServeOutcome, ServeError>, FakeTrigger);

/// Runs `serve` with `trigger` in a thread, reading `input` and writing `output` (the
/// extension's ends of memory pipes, as stdin and stdout would be).
pub fn serve_in_thread(
    mut trigger: FakeTrigger,
    input: PipeReader,
    output: PipeWriter,
    options: ServeOptions,
) -> JoinHandle<Served> {
    thread::spawn(move || {
        let outcome = serve(&mut trigger, input, output, &options);
        (outcome, trigger)
    })
}

/// A client in conversation with `serve` and `trigger`, which runs in a thread on the
/// other end of a [`memory::duplex`]. Dropping the client is the end of serve's input.
pub fn connect(trigger: FakeTrigger, options: ServeOptions) -> (Client, JoinHandle<Served>) {
    let (client, extension) = memory::duplex("fake", Options::default());
    let (input, output) = extension.split();
    (client, serve_in_thread(trigger, input, output, options))
}

/// Ends a conversation begun with [`connect`]: drops the client, which ends serve's
/// input, and returns how serve ended (it must not fail) and the trigger it left.
///
/// A frame serve sent unasked before this would have been taken for the reply to the
/// next call, and failed it; `Host::finish` in the raw tests checks the end of the
/// stream itself.
pub fn hang_up(client: Client, server: JoinHandle<Served>) -> (ServeOutcome, FakeTrigger) {
    drop(client);
    let (outcome, trigger) = server.join().expect("serve does not panic");
    (outcome.expect("serve ends cleanly"), trigger)
}

/// A trigger offering two types: `alpha` hands out a fixed queue of items, `beta`
/// never has work. Validation wants `{"max": integer}` (its schema's default is 3) and
/// nothing else. It records the hooks it receives.
#[derive(Debug, Default)]
pub struct FakeTrigger {
    pub queue: VecDeque<Vec<Pair>>,
    pub started: Vec<Vec<Pair>>,
    pub finished: Vec<Vec<Pair>>,
    /// What the next `poll` returns instead of the queue, when set.
    pub poll_error: Option<TriggerError>,
    /// Source entries each poll says it skipped as unreadable (`take_rejected`).
    pub rejected_per_poll: u64,
    /// Rejections not yet taken.
    pub rejected: u64,
}

impl FakeTrigger {
    pub fn with_items(items: &[&[(&str, &str)]]) -> Self {
        FakeTrigger {
            queue: items
                .iter()
                .map(|item| item.iter().map(|&(k, v)| Pair::new(k, v)).collect())
                .collect(),
            ..FakeTrigger::default()
        }
    }
}

impl Trigger for FakeTrigger {
    fn describe(&self) -> Vec<TriggerDescription> {
        vec![
            TriggerDescription::new("alpha", ["title", "n"])
                .with_description("Hands out queued items."),
            TriggerDescription::new("beta", Vec::<String>::new()),
        ]
    }

    fn schema(&self, trigger_type: &str) -> Result<TriggerSchema, TriggerError> {
        Ok(TriggerSchema {
            schema: json!({
                "type": "object",
                "properties": {"max": {"type": "integer", "default": 3}},
                "additionalProperties": false,
            }),
            prompt_fields: if trigger_type == "alpha" {
                vec!["title".to_owned(), "n".to_owned()]
            } else {
                vec![]
            },
        })
    }

    fn validate(&self, _trigger_type: &str, arguments: &Arguments) -> Result<(), ValidateError> {
        let mut errors = Vec::new();
        match arguments.get("max") {
            None => errors.push(ValidationError::member("max", "`max` is required")),
            Some(Value::Number(n)) if n.is_u64() => {}
            Some(other) => errors.push(ValidationError::member(
                "max",
                format!("`max` must be a non-negative integer, found {other}"),
            )),
        }
        for key in arguments.keys().filter(|k| *k != "max") {
            errors.push(ValidationError::member(
                key,
                format!("unknown member `{key}`"),
            ));
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.into())
        }
    }

    fn take_rejected(&mut self) -> u64 {
        std::mem::take(&mut self.rejected)
    }

    fn poll(
        &mut self,
        trigger_type: &str,
        _arguments: &Arguments,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
        self.rejected += self.rejected_per_poll;
        if let Some(err) = self.poll_error.take() {
            return Err(err);
        }
        Ok(match trigger_type {
            "alpha" => self.queue.pop_front(),
            _ => None,
        })
    }

    fn on_started(&mut self, _trigger_type: &str, values: &[Pair]) -> Result<(), TriggerError> {
        self.started.push(values.to_vec());
        Ok(())
    }

    fn on_finished(&mut self, _trigger_type: &str, values: &[Pair]) -> Result<(), TriggerError> {
        self.finished.push(values.to_vec());
        Ok(())
    }
}
