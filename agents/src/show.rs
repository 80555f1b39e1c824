//! What a person reads of a provider's stream: the lines a [`Reader`] made with
//! [`Reader::showing`] renders from each line it reads, in place of the JSON.
//!
//! - The assistant's text: each non-blank line of it, as it comes (Gemini's deltas are
//!   joined until a line ends), cut at [`MAX_SHOWN_CHARS`] characters with `…`.
//!   Thinking and reasoning are not shown.
//! - Each tool call on one line: `tool NAME: SUMMARY`, the summary being the value of
//!   the first of `command`, `cmd`, `file_path`, `filePath`, `absolute_path`,
//!   `pattern`, `path`, `url`, `query` that the input has (its first line), else the
//!   input as compact JSON, cut at [`MAX_TOOL_CHARS`] characters.
//! - Tool results: never (they are long; the attempt's log has them).
//! - When the turn ends (the format's closing event): `answer: ` and the answer's first
//!   line (the whole answer is the text shown above it), unless that event reported an
//!   error, then `usage: 1530 in (10240 cached, 2048 cache write), 412 out, $0.0871`
//!   with what the stream gives (totals over the turn); each only when it differs from
//!   what was shown last, so once for one turn.
//! - An error the stream reports: `error: MESSAGE`.
//! - A line that is not a JSON object (a CLI that prints plain text): as it is, cut
//!   at [`MAX_SHOWN_CHARS`]; a line too long to read: a note saying so.
//!
//! [`Reader`]: crate::stream::Reader
//! [`Reader::showing`]: crate::stream::Reader::showing

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::{Summary, Usage};
use crate::table::StreamFormat;

/// The most characters of one shown line of text (the assistant's, the answer's, an
/// error's, a plain line): a longer one is cut, ending in `…`.
pub const MAX_SHOWN_CHARS: usize = 500;

/// The most characters of a tool call's summary of its input.
pub const MAX_TOOL_CHARS: usize = 120;

/// The members of a tool's input that say best what it does, in the order they are
/// looked for.
const INPUT_KEYS: [&str; 9] = [
    "command",
    "cmd",
    "file_path",
    "filePath",
    "absolute_path",
    "pattern",
    "path",
    "url",
    "query",
];

/// The most bytes of Gemini's deltas held waiting for their line end: more goes out
/// as a line.
const MAX_PENDING_BYTES: usize = 64 * 1024;

/// The most Codex items remembered as shown when they started.
const MAX_STARTED: usize = 64;

/// The rendering state of one stream.
#[derive(Debug, Clone, Default)]
pub(crate) struct Show {
    /// Rendered and not taken yet.
    lines: Vec<String>,
    /// Gemini's assistant deltas since their last line end.
    pending: String,
    /// The answer shown last.
    answer: Option<String>,
    /// The usage and cost shown last.
    usage: Option<(Option<Usage>, Option<f64>)>,
    /// The ids of Codex's items shown when they started.
    started: Vec<String>,
}

/// What one event gives the rendering besides itself.
pub(crate) struct Said<'a> {
    /// What the stream said so far, this event included.
    pub summary: &'a Summary,
    /// The answer so far (the summary's, or the text being built).
    pub answer: Option<&'a str>,
    /// Whether this event reported an error (it is the summary's).
    pub error: bool,
}

impl Show {
    /// The lines rendered since the last call.
    pub(crate) fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.lines)
    }

    /// A line that is not a JSON object.
    pub(crate) fn plain(&mut self, line: &str) {
        self.flush();
        if !line.trim().is_empty() {
            self.push(cut(line, MAX_SHOWN_CHARS));
        }
    }

    /// Line `number` was too long to be read.
    pub(crate) fn skipped(&mut self, number: u64, bytes: usize) {
        self.flush();
        self.push(format!(
            "(line {number} of the stream, {bytes} bytes or more, is too long to be read)"
        ));
    }

    /// Text waiting for its line end goes out: the stream ended.
    pub(crate) fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.text(&pending);
    }

    /// One event of the stream, after the reader read it.
    pub(crate) fn event(
        &mut self,
        format: StreamFormat,
        kind: &str,
        event: &Map<String, Value>,
        said: &Said<'_>,
    ) {
        let delta = format == StreamFormat::GeminiStreamJson
            && kind == "message"
            && event.get("delta").and_then(Value::as_bool) == Some(true);
        if !delta {
            self.flush();
        }
        match format {
            StreamFormat::ClaudeStreamJson => self.claude(kind, event),
            StreamFormat::CodexJson => self.codex(kind, event),
            StreamFormat::GeminiStreamJson => self.gemini(kind, event),
            StreamFormat::CopilotJson => self.copilot(kind, event),
            StreamFormat::OpencodeJson => self.opencode(kind, event),
            StreamFormat::PiJson => self.pi(kind, event),
        }
        if said.error
            && let Some(error) = &said.summary.error
        {
            self.line("error: ", error);
        }
        if ends_turn(format, kind, event) {
            self.turn_ended(said);
        }
    }

    fn claude(&mut self, kind: &str, event: &Map<String, Value>) {
        match kind {
            "assistant" => match event.get("message").and_then(|m| m.get("content")) {
                Some(Value::String(text)) => self.text(text),
                Some(Value::Array(blocks)) => {
                    for block in blocks {
                        match text_of(block, "type") {
                            Some("text") => self.text(text_of(block, "text").unwrap_or("")),
                            Some("tool_use") => {
                                self.tool(text_of(block, "name"), block.get("input"));
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            },
            // Cursor's tool calls: `{"tool_call": {"readToolCall": {"args": …}}}`, or a
            // `function` with its name and arguments.
            "tool_call" if member(event, "subtype") == Some("started") => {
                let Some((key, call)) = event
                    .get("tool_call")
                    .and_then(Value::as_object)
                    .and_then(|calls| calls.iter().next())
                else {
                    return;
                };
                if key == "function" {
                    self.tool(text_of(call, "name"), call.get("arguments"));
                } else {
                    let name = key.strip_suffix("ToolCall").unwrap_or(key);
                    self.tool(Some(name), call.get("args"));
                }
            }
            _ => {}
        }
    }

    fn codex(&mut self, kind: &str, event: &Map<String, Value>) {
        let started = match kind {
            "item.started" => true,
            "item.completed" => false,
            _ => return,
        };
        let Some(item) = event.get("item") else {
            return;
        };
        let id = text_of(item, "id").unwrap_or("");
        match text_of(item, "type") {
            Some("agent_message") if !started => self.text(text_of(item, "text").unwrap_or("")),
            Some("error") if !started => {
                self.line(
                    "error: ",
                    text_of(item, "message").unwrap_or("(no message)"),
                );
            }
            Some(kind @ ("command_execution" | "file_change" | "mcp_tool_call" | "web_search")) => {
                if started {
                    if self.started.len() == MAX_STARTED {
                        self.started.remove(0);
                    }
                    self.started.push(id.to_owned());
                } else if let Some(at) = self.started.iter().position(|seen| seen == id) {
                    // Shown when it started.
                    self.started.remove(at);
                    return;
                }
                let (name, summary) = codex_tool(kind, item);
                self.tool_line(&name, &summary);
            }
            _ => {}
        }
    }

    fn gemini(&mut self, kind: &str, event: &Map<String, Value>) {
        match kind {
            "message" if member(event, "role") == Some("assistant") => {
                let content = event.get("content").and_then(Value::as_str).unwrap_or("");
                if event.get("delta").and_then(Value::as_bool) != Some(true) {
                    self.text(content);
                    return;
                }
                self.pending.push_str(content);
                if let Some(end) = self.pending.rfind('\n') {
                    let rest = self.pending.split_off(end + 1);
                    let done = std::mem::replace(&mut self.pending, rest);
                    self.text(&done);
                }
                if self.pending.len() > MAX_PENDING_BYTES {
                    self.flush();
                }
            }
            "tool_use" => self.tool(member(event, "tool_name"), event.get("parameters")),
            _ => {}
        }
    }

    fn copilot(&mut self, kind: &str, event: &Map<String, Value>) {
        if kind != "assistant.message" {
            return;
        }
        let Some(data) = event.get("data") else {
            return;
        };
        self.text(text_of(data, "content").unwrap_or(""));
        for request in data
            .get("toolRequests")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.tool(text_of(request, "name"), request.get("arguments"));
        }
    }

    fn opencode(&mut self, kind: &str, event: &Map<String, Value>) {
        let Some(part) = event.get("part") else {
            return;
        };
        match kind {
            "text" => self.text(text_of(part, "text").unwrap_or("")),
            "tool_use" => self.tool(
                text_of(part, "tool"),
                part.get("state").and_then(|s| s.get("input")),
            ),
            _ => {}
        }
    }

    fn pi(&mut self, kind: &str, event: &Map<String, Value>) {
        let Some(message) = event.get("message").filter(|_| kind == "message_end") else {
            return;
        };
        if text_of(message, "role") != Some("assistant") {
            return;
        }
        for block in message
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match text_of(block, "type") {
                Some("text") => self.text(text_of(block, "text").unwrap_or("")),
                Some("toolCall") => self.tool(text_of(block, "name"), block.get("arguments")),
                _ => {}
            }
        }
    }

    /// The turn ended: its answer (unless it ended on an error) and its usage, each
    /// when it differs from what was shown last.
    fn turn_ended(&mut self, said: &Said<'_>) {
        if !said.error
            && let Some(answer) = said.answer.filter(|a| !a.trim().is_empty())
            && self.answer.as_deref() != Some(answer)
        {
            let mut lines = answer.lines().filter(|line| !line.trim().is_empty());
            let first = lines.next().unwrap_or("").trim();
            if lines.next().is_some() {
                self.line("answer: ", &format!("{first} …"));
            } else {
                self.line("answer: ", first);
            }
            self.answer = Some(answer.to_owned());
        }
        let usage = (said.summary.usage, said.summary.cost_usd);
        if (usage.0.is_some() || usage.1.is_some()) && self.usage != Some(usage) {
            self.push(usage_line(usage.0, usage.1));
            self.usage = Some(usage);
        }
    }

    /// Adds a shown line; a line end inside one (a tool's name or a path from the
    /// JSON) becomes a space, so that every shown line gets its prefix.
    fn push(&mut self, line: String) {
        if line.contains(['\n', '\r']) {
            self.lines.push(line.replace(['\n', '\r'], " "));
        } else {
            self.lines.push(line);
        }
    }

    /// Each non-blank line of `text`, cut.
    fn text(&mut self, text: &str) {
        for line in text.lines() {
            if !line.trim().is_empty() {
                self.push(cut(line.trim_end(), MAX_SHOWN_CHARS));
            }
        }
    }

    /// `label` and `text`'s first line, cut.
    fn line(&mut self, label: &str, text: &str) {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        self.push(cut(&format!("{label}{}", first.trim()), MAX_SHOWN_CHARS));
    }

    fn tool(&mut self, name: Option<&str>, input: Option<&Value>) {
        self.tool_line(name.unwrap_or("?"), &input_summary(input));
    }

    fn tool_line(&mut self, name: &str, summary: &str) {
        let name = cut(name, MAX_TOOL_CHARS);
        self.push(if summary.is_empty() {
            format!("tool {name}")
        } else {
            format!("tool {name}: {}", cut(summary, MAX_TOOL_CHARS))
        });
    }
}

/// Whether `event` ends a turn of the format: its answer and usage are then known.
fn ends_turn(format: StreamFormat, kind: &str, event: &Map<String, Value>) -> bool {
    match format {
        StreamFormat::ClaudeStreamJson | StreamFormat::GeminiStreamJson => kind == "result",
        StreamFormat::CodexJson => matches!(kind, "turn.completed" | "turn.failed"),
        StreamFormat::CopilotJson => {
            matches!(kind, "session.idle" | "result" | "session.shutdown")
        }
        // Every step ends with a `step_finish`; one that asked for tools is followed by
        // another step.
        StreamFormat::OpencodeJson => {
            kind == "step_finish"
                && event
                    .get("part")
                    .and_then(|p| text_of(p, "reason"))
                    .is_none_or(|reason| reason != "tool-calls")
        }
        StreamFormat::PiJson => kind == "agent_end",
    }
}

/// A Codex tool item's name and summary.
fn codex_tool(kind: &str, item: &Value) -> (String, String) {
    match kind {
        "command_execution" => ("command".to_owned(), value_summary(item.get("command"))),
        "file_change" => {
            let changes: Vec<String> = item
                .get("changes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|change| {
                    let path = text_of(change, "path").unwrap_or("?");
                    match text_of(change, "kind") {
                        Some(kind) => format!("{kind} {path}"),
                        None => path.to_owned(),
                    }
                })
                .collect();
            ("file_change".to_owned(), changes.join(", "))
        }
        "mcp_tool_call" => {
            let tool = text_of(item, "tool").unwrap_or("?");
            let name = match text_of(item, "server") {
                Some(server) => format!("{server}/{tool}"),
                None => tool.to_owned(),
            };
            (name, input_summary(item.get("arguments")))
        }
        _ => (kind.to_owned(), value_summary(item.get("query"))),
    }
}

/// What a tool's input says in one line: the value of its first [`INPUT_KEYS`]
/// member, else the whole input as compact JSON. A string that holds a JSON object
/// (arguments some CLIs pass encoded) is read as that object.
fn input_summary(input: Option<&Value>) -> String {
    match input {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => input_summary(Some(&object)),
            _ => first_line(text),
        },
        Some(Value::Object(members)) if members.is_empty() => String::new(),
        Some(Value::Object(members)) => INPUT_KEYS
            .iter()
            .find_map(|key| members.get(*key).filter(|v| v.is_string() || v.is_array()))
            .map_or_else(|| compact(input), |value| value_summary(Some(value))),
        Some(_) => compact(input),
    }
}

/// A member's value in one line: a string's first line, an array of strings joined
/// by spaces (a command as its words), anything else as compact JSON.
fn value_summary(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => first_line(text),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => first_line(
            &items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        Some(_) => compact(value),
    }
}

/// Compact JSON, on one line.
fn compact(value: Option<&Value>) -> String {
    value.map(Value::to_string).unwrap_or_default()
}

/// The first non-blank line of `text`, trimmed, with ` …` when more lines follow.
fn first_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
    let first = lines.next().unwrap_or("");
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first.to_owned()
    }
}

/// `usage: 1530 in (10240 cached, 2048 cache write), 412 out, $0.0871`, with what
/// there is.
fn usage_line(usage: Option<Usage>, cost: Option<f64>) -> String {
    let mut line = "usage: ".to_owned();
    if let Some(usage) = usage {
        let _ = write!(line, "{} in", usage.input_tokens);
        let cache: Vec<String> = [
            (usage.cache_read_tokens, "cached"),
            (usage.cache_write_tokens, "cache write"),
        ]
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, what)| format!("{count} {what}"))
        .collect();
        if !cache.is_empty() {
            let _ = write!(line, " ({})", cache.join(", "));
        }
        let _ = write!(line, ", {} out", usage.output_tokens);
    }
    if let Some(cost) = cost {
        if usage.is_some() {
            line.push_str(", ");
        }
        let _ = write!(line, "${cost:.4}");
    }
    line
}

/// `text`, cut to at most `max` characters, the last one `…` when it was cut.
fn cut(text: &str, max: usize) -> String {
    if text.char_indices().nth(max).is_none() {
        return text.to_owned();
    }
    let end = text
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(text.len(), |(at, _)| at);
    format!("{}…", &text[..end])
}

/// A string member of a JSON value.
fn text_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// A string member of an event.
fn member<'a>(event: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    event.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_short_text_and_ends_long_text_in_an_ellipsis() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "ab…");
        assert_eq!(cut("ééééé", 4), "ééé…");
        assert_eq!(cut("", 0), "");
    }

    #[test]
    fn a_tool_input_is_summed_up_by_its_telling_member_or_as_json() {
        let summary = |input: Value| input_summary(Some(&input));
        assert_eq!(
            summary(serde_json::json!({"description": "run", "command": "cargo test"})),
            "cargo test"
        );
        assert_eq!(
            summary(serde_json::json!({"path": "src", "pattern": "fn main"})),
            "fn main"
        );
        assert_eq!(
            summary(serde_json::json!({"command": ["ls", "-l"]})),
            "ls -l"
        );
        assert_eq!(
            summary(serde_json::json!({"command": "cat <<EOF\nx\nEOF"})),
            "cat <<EOF …"
        );
        assert_eq!(
            summary(serde_json::json!({"todos": [1, 2]})),
            r#"{"todos":[1,2]}"#
        );
        assert_eq!(summary(serde_json::json!({})), "");
        assert_eq!(
            summary(Value::String(r#"{"url":"https://x.y"}"#.into())),
            "https://x.y"
        );
        assert_eq!(summary(Value::String("plain words".into())), "plain words");
    }

    #[test]
    fn usage_says_what_there_is() {
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 2,
            cache_read_tokens: 0,
            cache_write_tokens: 3,
        };
        assert_eq!(
            usage_line(Some(usage), None),
            "usage: 10 in (3 cache write), 2 out"
        );
        assert_eq!(usage_line(None, Some(1.0)), "usage: $1.0000");
    }
}
