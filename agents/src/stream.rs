//! Reading a provider's JSON stream (its stdout), line by line: the session id as soon
//! as it is announced, the final answer, token usage and cost where the stream says
//! them. A stream that is not what the provider should print gives [`Diagnostic`]s,
//! never an error: the exit status alone decides the task.
//!
//! What is read, per format ([`StreamFormat`]):
//!
//! | format | session | answer | usage | cost |
//! |---|---|---|---|---|
//! | Claude `stream-json` (Claude Code, Qwen Code, Cursor) | `session_id` | the `result` event's `result` (else the last assistant text) | the `result` event's `usage` | `total_cost_usd` |
//! | `codex exec --json` | `thread_id` | the last `item.completed` `agent_message` text | every `turn.completed` `usage`, summed | — |
//! | Gemini `stream-json` | `session_id` | the assistant `message` contents after the last tool call (deltas joined) | the `result` event's `stats` | — |
//! | Copilot `--output-format=json` | named by the host | the last `assistant.message` `data.content` | every `assistant.usage` `data`, summed | `data.cost`, summed |
//! | OpenCode / Kilo `--format json` | `sessionID` | the `text` parts after the last tool call | every `step_finish` `part.tokens`, summed | `part.cost`, summed |
//! | pi `--mode json` | the `session` event's `id` | the last assistant `message_end` text | every assistant `message_end` `usage`, summed | `usage.cost.total`, summed |
//!
//! A reader made with [`Reader::showing`] also renders each line for a person (the
//! assistant's text, one line per tool call, the answer, the usage, the errors), which
//! is what the host prints of a provider's stdout.

/// The lines of a stream a person reads (`Reader::showing`): a child of this
/// module, which it reads the summary types of.
#[path = "show.rs"]
mod show;

use serde_json::Value;

use crate::Provider;
use crate::table::{SessionKey, StreamFormat};
use show::{Said, Show};

pub use show::{MAX_SHOWN_CHARS, MAX_TOOL_CHARS};

/// The longest line kept for reading: a longer one is skipped (a diagnostic), so a
/// stream without line ends cannot take memory without bound.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The most diagnostics kept for one stream (the count goes on).
pub const MAX_DIAGNOSTICS: usize = 8;

/// Token counts, as the stream gave them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Input (prompt) tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from a cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to a cache.
    pub cache_write_tokens: u64,
}

impl Usage {
    fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// Something in the stream that is not what the provider should print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stable code: `agent/stream-not-json`, `agent/stream-not-object`,
    /// `agent/stream-line-too-long`, `agent/stream-no-result`.
    pub code: &'static str,
    /// The line (from 1); 0 for the stream as a whole.
    pub line: u64,
    /// One sentence.
    pub message: String,
}

/// What a stream said, so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// The session the CLI announced.
    pub session_id: Option<String>,
    /// Its final answer.
    pub answer: Option<String>,
    /// Tokens used.
    pub usage: Option<Usage>,
    /// What it cost, in US dollars.
    pub cost_usd: Option<f64>,
    /// An error the stream reported (`is_error`, `turn.failed`, an `error` event).
    pub error: Option<String>,
    /// What was wrong with the stream (at most [`MAX_DIAGNOSTICS`]).
    pub diagnostics: Vec<Diagnostic>,
    /// Diagnostics in all, kept or not.
    pub diagnostic_count: u64,
    /// Lines read.
    pub lines: u64,
}

/// Reads one provider's stream.
#[derive(Debug, Clone)]
pub struct Reader {
    provider: Provider,
    summary: Summary,
    /// The closing event was seen (`result`, `turn.completed`, …).
    closed: bool,
    /// The answer being built (Gemini's deltas, OpenCode's text parts).
    building: String,
    /// Whether the event being read reported an error.
    error_reported: bool,
    /// What a person reads of the stream, when asked for ([`Reader::showing`]).
    show: Option<Show>,
}

impl Reader {
    /// A reader of `provider`'s stream.
    pub fn new(provider: Provider) -> Reader {
        Reader {
            provider,
            summary: Summary::default(),
            closed: false,
            building: String::new(),
            error_reported: false,
            show: None,
        }
    }

    /// A reader of `provider`'s stream that also renders what a person reads of each
    /// line, in place of its JSON, taken with [`take_shown`](Self::take_shown): the
    /// assistant's text line by line, each tool call on one line (`tool Bash: cargo
    /// test`), the answer and the usage when the turn ends (`answer: …`, `usage: 1530
    /// in (10240 cached, 2048 cache write), 412 out, $0.0871`), the errors the stream
    /// reports (`error: …`), and a line that is not a JSON object as it is. Tool
    /// results and thinking are not shown; a shown line has at most
    /// [`MAX_SHOWN_CHARS`] characters (a tool call's summary [`MAX_TOOL_CHARS`]), a
    /// longer one ends in `…`. Text still waiting for its line end (Gemini's deltas)
    /// comes out at the next event, or when [`Lines::finish`] ends the stream.
    ///
    /// ```
    /// use curupira_agents::Provider;
    /// use curupira_agents::stream::Reader;
    ///
    /// let mut reader = Reader::showing(Provider::Claude);
    /// reader.line(r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"cargo test"}}]}}"#);
    /// reader.line(r#"{"type":"result","result":"Done.","usage":{"input_tokens":9,"output_tokens":2}}"#);
    /// assert_eq!(reader.take_shown(), ["tool Bash: cargo test", "answer: Done.", "usage: 9 in, 2 out"]);
    /// ```
    pub fn showing(provider: Provider) -> Reader {
        Reader {
            show: Some(Show::default()),
            ..Reader::new(provider)
        }
    }

    /// The lines rendered since the last call ([`Reader::showing`]); none for a reader
    /// made with [`Reader::new`].
    pub fn take_shown(&mut self) -> Vec<String> {
        self.show.as_mut().map(Show::take).unwrap_or_default()
    }

    /// Reads one line (without its end). Returns the session id when this line
    /// announced it (first time only), so the caller can store it at once.
    pub fn line(&mut self, line: &str) -> Option<String> {
        self.summary.lines += 1;
        let number = self.summary.lines;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            return None;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(err) => {
                self.diagnose(
                    "agent/stream-not-json",
                    number,
                    format!(
                        "line {number} of the {} stream is not JSON ({err})",
                        self.provider
                    ),
                );
                if let Some(show) = self.show.as_mut() {
                    show.plain(line);
                }
                return None;
            }
        };
        let Some(event) = value.as_object() else {
            self.diagnose(
                "agent/stream-not-object",
                number,
                format!(
                    "line {number} of the {} stream is JSON but not an object",
                    self.provider
                ),
            );
            if let Some(show) = self.show.as_mut() {
                show.plain(line);
            }
            return None;
        };
        let announced = if self.summary.session_id.is_none() {
            self.session_of(event)
        } else {
            None
        };
        if let Some(session) = &announced {
            self.summary.session_id = Some(session.clone());
        }
        self.error_reported = false;
        self.read_event(event);
        if let Some(show) = self.show.as_mut() {
            let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
            let answer = self
                .summary
                .answer
                .as_deref()
                .or((!self.building.is_empty()).then_some(self.building.as_str()));
            let said = Said {
                summary: &self.summary,
                answer,
                error: self.error_reported,
            };
            show.event(self.provider.spec().stream, kind, event, &said);
        }
        announced
    }

    /// A line longer than [`MAX_LINE_BYTES`] was skipped.
    pub fn skipped(&mut self, bytes: usize) {
        self.summary.lines += 1;
        let number = self.summary.lines;
        self.diagnose(
            "agent/stream-line-too-long",
            number,
            format!(
                "line {number} of the {} stream is {bytes} bytes or more, over {MAX_LINE_BYTES}; it was not read",
                self.provider
            ),
        );
        if let Some(show) = self.show.as_mut() {
            show.skipped(number, bytes);
        }
    }

    /// What the stream said; at its end, a stream that never gave its closing event
    /// gets a diagnostic.
    pub fn finish(self) -> Summary {
        self.end(true)
    }

    /// [`finish`](Self::finish), for a stream whose agent did not succeed (it exited
    /// with another status than 0, or was killed or stopped): such a stream may well
    /// stop before its closing event, so that is no diagnostic
    /// (`agent/stream-no-result`); the others are kept.
    pub fn finish_failed(self) -> Summary {
        self.end(false)
    }

    /// Text still waiting for its line end is shown: the stream ended.
    pub(crate) fn flush_shown(&mut self) {
        if let Some(show) = self.show.as_mut() {
            show.flush();
        }
    }

    fn end(mut self, expect_closing: bool) -> Summary {
        if expect_closing && !self.closed && self.summary.lines > 0 {
            self.diagnose(
                "agent/stream-no-result",
                0,
                format!(
                    "the {} stream ended without its closing event",
                    self.provider
                ),
            );
        }
        if self.summary.answer.is_none() && !self.building.is_empty() {
            self.summary.answer = Some(std::mem::take(&mut self.building));
        }
        self.summary
    }

    /// What the stream said so far.
    pub fn summary(&self) -> Summary {
        let mut summary = self.summary.clone();
        if summary.answer.is_none() && !self.building.is_empty() {
            summary.answer = Some(self.building.clone());
        }
        summary
    }

    fn diagnose(&mut self, code: &'static str, line: u64, message: String) {
        self.summary.diagnostic_count += 1;
        if self.summary.diagnostics.len() < MAX_DIAGNOSTICS {
            self.summary.diagnostics.push(Diagnostic {
                code,
                line,
                message,
            });
        }
    }

    fn session_of(&self, event: &serde_json::Map<String, Value>) -> Option<String> {
        let text = |key: &str| {
            event
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        match self.provider.spec().session {
            SessionKey::Member(keys) => keys.iter().find_map(|key| text(key)),
            SessionKey::IdOfType(kind) => (text("type").as_deref() == Some(kind))
                .then(|| text("id"))
                .flatten(),
            SessionKey::Host => None,
        }
    }

    fn read_event(&mut self, event: &serde_json::Map<String, Value>) {
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        match self.provider.spec().stream {
            StreamFormat::ClaudeStreamJson => self.claude(kind, event),
            StreamFormat::CodexJson => self.codex(kind, event),
            StreamFormat::GeminiStreamJson => self.gemini(kind, event),
            StreamFormat::CopilotJson => self.copilot(kind, event),
            StreamFormat::OpencodeJson => self.opencode(kind, event),
            StreamFormat::PiJson => self.pi(kind, event),
        }
    }

    fn add_usage(&mut self, usage: Usage) {
        self.summary
            .usage
            .get_or_insert_with(Usage::default)
            .add(usage);
    }

    fn add_cost(&mut self, cost: Option<f64>) {
        if let Some(cost) = cost {
            *self.summary.cost_usd.get_or_insert(0.0) += cost;
        }
    }

    fn claude(&mut self, kind: &str, event: &serde_json::Map<String, Value>) {
        match kind {
            "assistant" => {
                if let Some(text) = event
                    .get("message")
                    .and_then(|m| content_text(m.get("content")))
                {
                    self.building = text;
                }
            }
            "result" => {
                self.closed = true;
                if let Some(result) = event.get("result").and_then(Value::as_str) {
                    self.summary.answer = Some(result.to_owned());
                }
                if let Some(usage) = event.get("usage") {
                    self.add_usage(Usage {
                        input_tokens: count(usage, "input_tokens"),
                        output_tokens: count(usage, "output_tokens"),
                        cache_read_tokens: count(usage, "cache_read_input_tokens"),
                        cache_write_tokens: count(usage, "cache_creation_input_tokens"),
                    });
                }
                self.add_cost(event.get("total_cost_usd").and_then(Value::as_f64));
                if event.get("is_error").and_then(Value::as_bool) == Some(true) {
                    self.error_reported = true;
                    self.summary.error = Some(
                        event
                            .get("result")
                            .and_then(Value::as_str)
                            .or_else(|| event.get("subtype").and_then(Value::as_str))
                            .unwrap_or("the result says is_error")
                            .to_owned(),
                    );
                }
            }
            _ => {}
        }
    }

    fn codex(&mut self, kind: &str, event: &serde_json::Map<String, Value>) {
        match kind {
            "item.completed" => {
                let item = event.get("item");
                let is_message = item.and_then(|i| i.get("type")).and_then(Value::as_str)
                    == Some("agent_message");
                if is_message
                    && let Some(text) = item.and_then(|i| i.get("text")).and_then(Value::as_str)
                {
                    self.summary.answer = Some(text.to_owned());
                }
            }
            "turn.completed" => {
                self.closed = true;
                if let Some(usage) = event.get("usage") {
                    self.add_usage(Usage {
                        input_tokens: count(usage, "input_tokens"),
                        output_tokens: count(usage, "output_tokens"),
                        cache_read_tokens: count(usage, "cached_input_tokens"),
                        cache_write_tokens: 0,
                    });
                }
            }
            "turn.failed" => {
                self.closed = true;
                self.error_reported = true;
                self.summary.error = event
                    .get("error")
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            "error" => {
                self.error_reported = true;
                self.summary.error = event
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            _ => {}
        }
    }

    fn gemini(&mut self, kind: &str, event: &serde_json::Map<String, Value>) {
        match kind {
            "message" if event.get("role").and_then(Value::as_str) == Some("assistant") => {
                let content = event.get("content").and_then(Value::as_str).unwrap_or("");
                if event.get("delta").and_then(Value::as_bool) == Some(true) {
                    self.building.push_str(content);
                } else {
                    self.building = content.to_owned();
                }
            }
            "tool_use" => self.building.clear(),
            "error" => {
                self.error_reported = true;
                self.summary.error = event
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            "result" => {
                self.closed = true;
                self.summary.answer = Some(std::mem::take(&mut self.building));
                if let Some(stats) = event.get("stats") {
                    self.add_usage(Usage {
                        input_tokens: count(stats, "input_tokens"),
                        output_tokens: count(stats, "output_tokens"),
                        cache_read_tokens: count(stats, "cached"),
                        cache_write_tokens: 0,
                    });
                }
                if event.get("status").and_then(Value::as_str) == Some("error") {
                    self.error_reported = true;
                    self.summary.error = event
                        .get("error")
                        .and_then(|e| e.get("message"))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or(Some("the result's status is error".to_owned()));
                }
            }
            _ => {}
        }
    }

    fn copilot(&mut self, kind: &str, event: &serde_json::Map<String, Value>) {
        let data = event.get("data");
        match kind {
            "assistant.message" => {
                if let Some(text) = data.and_then(|d| d.get("content")).and_then(Value::as_str) {
                    self.summary.answer = Some(text.to_owned());
                }
            }
            "assistant.usage" => {
                if let Some(data) = data {
                    self.add_usage(Usage {
                        input_tokens: count(data, "inputTokens"),
                        output_tokens: count(data, "outputTokens"),
                        cache_read_tokens: count(data, "cacheReadTokens"),
                        cache_write_tokens: count(data, "cacheWriteTokens"),
                    });
                    self.add_cost(data.get("cost").and_then(Value::as_f64));
                }
            }
            "session.error" => {
                self.error_reported = true;
                self.summary.error = data
                    .and_then(|d| d.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            "session.idle" | "result" | "session.shutdown" => self.closed = true,
            _ => {}
        }
    }

    fn opencode(&mut self, kind: &str, event: &serde_json::Map<String, Value>) {
        let part = event.get("part");
        match kind {
            "text" => {
                if let Some(text) = part.and_then(|p| p.get("text")).and_then(Value::as_str) {
                    if !self.building.is_empty() {
                        self.building.push('\n');
                    }
                    self.building.push_str(text);
                }
            }
            "tool_use" => self.building.clear(),
            "step_finish" => {
                self.closed = true;
                if let Some(tokens) = part.and_then(|p| p.get("tokens")) {
                    let cache = tokens.get("cache");
                    self.add_usage(Usage {
                        input_tokens: count(tokens, "input"),
                        output_tokens: count(tokens, "output"),
                        cache_read_tokens: cache.map_or(0, |c| count(c, "read")),
                        cache_write_tokens: cache.map_or(0, |c| count(c, "write")),
                    });
                }
                self.add_cost(part.and_then(|p| p.get("cost")).and_then(Value::as_f64));
            }
            "error" => {
                let error = event.get("error");
                self.error_reported = true;
                self.summary.error = error
                    .and_then(|e| e.get("data"))
                    .and_then(|d| d.get("message"))
                    .or_else(|| error.and_then(|e| e.get("message")))
                    .or(error.filter(|e| e.is_string()))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or(Some("the stream reported an error".to_owned()));
            }
            _ => {}
        }
    }

    fn pi(&mut self, kind: &str, event: &serde_json::Map<String, Value>) {
        match kind {
            "message_end" => {
                let Some(message) = event.get("message") else {
                    return;
                };
                if message.get("role").and_then(Value::as_str) != Some("assistant") {
                    return;
                }
                if let Some(text) = content_text(message.get("content")) {
                    self.summary.answer = Some(text);
                }
                if let Some(usage) = message.get("usage") {
                    self.add_usage(Usage {
                        input_tokens: count(usage, "input"),
                        output_tokens: count(usage, "output"),
                        cache_read_tokens: count(usage, "cacheRead"),
                        cache_write_tokens: count(usage, "cacheWrite"),
                    });
                    self.add_cost(
                        usage
                            .get("cost")
                            .and_then(|c| c.get("total"))
                            .and_then(Value::as_f64),
                    );
                }
                if message.get("stopReason").and_then(Value::as_str) == Some("error") {
                    self.error_reported = true;
                    self.summary.error = message
                        .get("errorMessage")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or(Some("the assistant message stopped on an error".to_owned()));
                }
            }
            "agent_end" => self.closed = true,
            _ => {}
        }
    }
}

/// A token count member; 0 when absent or not a count.
fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The text of a message content: a string, or the `text` blocks of an array, joined.
fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// Cuts a byte stream into lines for a [`Reader`], holding at most
/// [`MAX_LINE_BYTES`] of an unfinished line (a longer one is skipped whole).
#[derive(Debug, Default)]
pub struct Lines {
    held: Vec<u8>,
    /// Bytes of the current line dropped (it is too long).
    dropping: Option<usize>,
}

impl Lines {
    /// Empty.
    pub fn new() -> Lines {
        Lines::default()
    }

    /// Takes `bytes`; each line they complete goes to `reader`, and each session id
    /// announced to `announced`.
    pub fn take(&mut self, bytes: &[u8], reader: &mut Reader, announced: &mut dyn FnMut(String)) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let (part, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(end) => (&rest[..end], true),
                None => (rest, false),
            };
            rest = if ended { &rest[part.len() + 1..] } else { &[] };
            if let Some(dropped) = self.dropping.as_mut() {
                *dropped += part.len();
            } else if self.held.len() + part.len() > MAX_LINE_BYTES {
                self.dropping = Some(self.held.len() + part.len());
                self.held.clear();
            } else {
                self.held.extend_from_slice(part);
            }
            if ended {
                self.end_line(reader, announced);
            }
        }
    }

    /// The stream ended: a last line without an end is read, and text a
    /// [`Reader::showing`] holds for its line end is shown.
    pub fn finish(&mut self, reader: &mut Reader, announced: &mut dyn FnMut(String)) {
        if !self.held.is_empty() || self.dropping.is_some() {
            self.end_line(reader, announced);
        }
        reader.flush_shown();
    }

    fn end_line(&mut self, reader: &mut Reader, announced: &mut dyn FnMut(String)) {
        if let Some(dropped) = self.dropping.take() {
            reader.skipped(dropped);
        } else {
            let line = String::from_utf8_lossy(&self.held);
            if let Some(session) = reader.line(&line) {
                announced(session);
            }
        }
        self.held.clear();
    }
}
