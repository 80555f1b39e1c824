//! A test trigger and an in-process pipe pair for conversations with `serve`.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::mpsc::{Receiver, Sender, channel};

use curupira_extension_sdk::{
    Arguments, Pair, PromptField, Trigger, TriggerDescription, TriggerError, TriggerSchema,
    ValidateError, ValidationError,
};
use serde_json::{Value, json};

/// The reading end of an in-memory pipe: `read` blocks until the writer sends bytes,
/// and returns 0 (end of file) once the writer is dropped.
pub struct PipeReader {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

/// The writing end of an in-memory pipe; every `write` is one chunk for the reader.
pub struct PipeWriter {
    tx: Sender<Vec<u8>>,
}

/// An in-memory pipe, like an OS pipe but without its buffer limit.
pub fn pipe() -> (PipeReader, PipeWriter) {
    let (tx, rx) = channel();
    (
        PipeReader {
            rx,
            chunk: Vec::new(),
            pos: 0,
        },
        PipeWriter { tx },
    )
}

impl Read for PipeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.chunk.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl Write for PipeWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tx
            .send(buf.to_vec())
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A trigger offering two types: `alpha` hands out a fixed queue of items, `beta`
/// never has work. Validation wants `{"max": integer}` and nothing else. It records
/// the hooks it receives.
#[derive(Debug, Default)]
pub struct FakeTrigger {
    pub queue: VecDeque<Vec<Pair>>,
    pub started: Vec<Vec<Pair>>,
    pub finished: Vec<Vec<Pair>>,
    /// What the next `poll` returns instead of the queue, when set.
    pub poll_error: Option<TriggerError>,
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
            TriggerDescription::new("alpha", "Hands out queued items."),
            TriggerDescription {
                trigger_type: "beta".to_owned(),
                description: None,
            },
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
                vec![
                    PromptField::new("title", "The item's title."),
                    PromptField {
                        key: "n".to_owned(),
                        description: None,
                    },
                ]
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

    fn poll(
        &mut self,
        trigger_type: &str,
        _arguments: &Arguments,
    ) -> Result<Option<Vec<Pair>>, TriggerError> {
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
