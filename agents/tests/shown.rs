//! What a person reads of each recorded stream (`streams/`), from a
//! [`Reader::showing`] fed as the host feeds it: in chunks that cut lines anywhere.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_agents::Provider;
use curupira_agents::stream::{Lines, MAX_SHOWN_CHARS, MAX_TOOL_CHARS, Reader};

const ANSWER: &str = "Fixed the off-by-one in the parser; all tests pass.";

/// The lines shown of `text`, read in `chunk`-byte pieces and taken after each.
fn shown_in(provider: Provider, text: &str, chunk: usize) -> Vec<String> {
    let mut reader = Reader::showing(provider);
    let mut lines = Lines::new();
    let mut shown = Vec::new();
    for piece in text.as_bytes().chunks(chunk) {
        lines.take(piece, &mut reader, &mut |_| {});
        shown.extend(reader.take_shown());
    }
    lines.finish(&mut reader, &mut |_| {});
    shown.extend(reader.take_shown());
    shown
}

/// The lines shown of `text`, the same in every split.
fn shown(provider: Provider, text: &str) -> Vec<String> {
    let whole = shown_in(provider, text, text.len().max(1));
    for chunk in [1, 7, 64] {
        assert_eq!(
            shown_in(provider, text, chunk),
            whole,
            "{provider}, chunks of {chunk}"
        );
    }
    whole
}

fn answer() -> String {
    format!("answer: {ANSWER}")
}

#[test]
fn claude_and_qwen_show_text_tool_calls_answer_and_usage() {
    let text = include_str!("../streams/claude.jsonl");
    for provider in [Provider::Claude, Provider::Qwen] {
        assert_eq!(
            shown(provider, text),
            [
                "I'll look at the failing test first.",
                "tool Bash: cargo test",
                ANSWER,
                &answer(),
                "usage: 1530 in (10240 cached, 2048 cache write), 412 out, $0.0871",
            ],
            "{provider}"
        );
    }
}

#[test]
fn cursor_shows_its_text_and_answer_and_no_usage() {
    let text = include_str!("../streams/cursor.jsonl");
    assert_eq!(shown(Provider::Cursor, text), [ANSWER, &answer()]);
}

#[test]
fn cursor_tool_calls_are_shown_when_they_start() {
    let text = concat!(
        r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"sales.csv"}}},"session_id":"s"}"#,
        "\n",
        r#"{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"sales.csv"},"result":{"success":{"content":"a,b"}}}},"session_id":"s"}"#,
        "\n",
        r#"{"type":"tool_call","subtype":"started","call_id":"c2","tool_call":{"function":{"name":"grep","arguments":"{\"pattern\":\"TODO\"}"}},"session_id":"s"}"#,
        "\n",
    );
    assert_eq!(
        shown(Provider::Cursor, text),
        ["tool read: sales.csv", "tool grep: TODO"]
    );
}

#[test]
fn codex_shows_a_command_once_when_it_starts() {
    let text = include_str!("../streams/codex.jsonl");
    assert_eq!(
        shown(Provider::Codex, text),
        [
            "tool command: bash -lc 'cargo test'",
            ANSWER,
            &answer(),
            "usage: 24763 in (24448 cached), 122 out",
        ]
    );
}

#[test]
fn codex_items_seen_only_completed_and_its_errors() {
    let text = concat!(
        r#"{"type":"item.completed","item":{"id":"i1","type":"file_change","changes":[{"path":"src/lib.rs","kind":"update"},{"path":"src/new.rs","kind":"add"}],"status":"completed"}}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"i2","type":"mcp_tool_call","server":"github","tool":"get_issue","arguments":{"number":7},"status":"completed"}}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"i3","type":"reasoning","text":"hmm"}}"#,
        "\n",
        r#"{"type":"error","message":"Reconnecting... 1/5"}"#,
        "\n",
        r#"{"type":"turn.failed","error":{"message":"quota exceeded"}}"#,
        "\n",
    );
    assert_eq!(
        shown(Provider::Codex, text),
        [
            "tool file_change: update src/lib.rs, add src/new.rs",
            r#"tool github/get_issue: {"number":7}"#,
            "error: Reconnecting... 1/5",
            "error: quota exceeded",
        ]
    );
}

#[test]
fn gemini_joins_its_deltas_into_lines() {
    let text = include_str!("../streams/gemini.jsonl");
    assert_eq!(
        shown(Provider::Gemini, text),
        [
            "Running the tests.",
            "tool run_shell_command: cargo test",
            ANSWER,
            &answer(),
            "usage: 2500 in (1200 cached), 250 out",
        ]
    );
}

#[test]
fn gemini_deltas_cut_off_by_the_end_of_the_stream_are_shown() {
    let text = concat!(
        r#"{"type":"message","role":"assistant","content":"First line\nsecond ","delta":true}"#,
        "\n",
        r#"{"type":"message","role":"assistant","content":"half","delta":true}"#,
    );
    assert_eq!(shown(Provider::Gemini, text), ["First line", "second half"]);
}

#[test]
fn copilot_shows_its_message_answer_and_usage() {
    let text = include_str!("../streams/copilot.jsonl");
    assert_eq!(
        shown(Provider::Copilot, text),
        [
            ANSWER,
            &answer(),
            "usage: 1800 in (900 cached), 240 out, $1.0000"
        ]
    );
    let text = concat!(
        r#"{"type":"assistant.message","data":{"content":"","toolRequests":[{"toolCallId":"t1","name":"view","arguments":{"path":"README.md"}}]}}"#,
        "\n",
        r#"{"type":"session.error","data":{"message":"rate limited"}}"#,
        "\n",
    );
    assert_eq!(
        shown(Provider::Copilot, text),
        ["tool view: README.md", "error: rate limited"]
    );
}

#[test]
fn opencode_and_kilo_show_the_totals_once_when_the_last_step_ends() {
    let text = include_str!("../streams/opencode.jsonl");
    for provider in [Provider::Opencode, Provider::Kilo] {
        assert_eq!(
            shown(provider, text),
            [
                "Running the tests.",
                "tool bash: cargo test",
                ANSWER,
                &answer(),
                "usage: 2600 in (1700 cached, 100 cache write), 120 out, $0.0073",
            ],
            "{provider}"
        );
    }
}

#[test]
fn pi_shows_its_tool_calls_and_the_totals_at_its_end() {
    let text = include_str!("../streams/pi.jsonl");
    assert_eq!(
        shown(Provider::Pi, text),
        [
            "tool bash: cargo test",
            ANSWER,
            &answer(),
            "usage: 1900 in (400 cached, 400 cache write), 55 out, $0.0081",
        ]
    );
}

#[test]
fn lines_that_are_not_json_objects_are_shown_as_they_are() {
    let text = include_str!("../streams/broken-claude.txt");
    assert_eq!(
        shown(Provider::Claude, text),
        [
            "Error: rate limited, retrying in 5s",
            "[1, 2, 3]",
            "Partly done.",
            r#"{"type":"result", "result": "cut off"#,
        ]
    );
}

#[test]
fn an_error_result_shows_the_error_not_an_answer() {
    let text = concat!(
        r#"{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: overloaded","usage":{"input_tokens":3,"output_tokens":0}}"#,
        "\n",
    );
    assert_eq!(
        shown(Provider::Claude, text),
        ["error: API Error: overloaded", "usage: 3 in, 0 out"]
    );
}

#[test]
fn long_text_is_cut_and_a_multi_line_answer_shows_its_first_line() {
    let long = "x".repeat(MAX_SHOWN_CHARS + 10);
    let command = format!("echo {}", "y".repeat(MAX_TOOL_CHARS));
    let text = format!(
        "{}\n{}\n{}\n",
        serde_json::json!({"type": "assistant", "message": {"content": [
            {"type": "text", "text": format!("{long}\n\n  indented")},
            {"type": "thinking", "thinking": "not shown"},
            {"type": "tool_use", "name": "Bash", "input": {"command": command}},
        ]}}),
        serde_json::json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "content": "not shown either"},
        ]}}),
        serde_json::json!({"type": "result", "result": "Done.\nSecond paragraph."}),
    );
    let shown = shown(Provider::Claude, &text);
    assert_eq!(shown.len(), 4, "{shown:?}");
    assert_eq!(shown[0].chars().count(), MAX_SHOWN_CHARS);
    assert!(shown[0].ends_with("x…"), "{}", shown[0]);
    assert_eq!(
        shown[1], "  indented",
        "blank lines are dropped, indents kept"
    );
    let tool = shown[2].strip_prefix("tool Bash: ").unwrap();
    assert_eq!(tool.chars().count(), MAX_TOOL_CHARS);
    assert!(
        tool.starts_with("echo yyy") && tool.ends_with('…'),
        "{tool}"
    );
    assert_eq!(shown[3], "answer: Done. …");
}

#[test]
fn a_reader_made_with_new_shows_nothing() {
    let mut reader = Reader::new(Provider::Claude);
    reader.line(r#"{"type":"result","result":"Done."}"#);
    assert!(reader.take_shown().is_empty());
}

#[test]
fn a_line_end_inside_a_shown_line_becomes_a_space() {
    let text = concat!(
        r#"{"type":"item.completed","item":{"id":"i1","type":"file_change","changes":[{"path":"a\nb","kind":"add"}]}}"#,
        "\n",
    );
    assert_eq!(shown(Provider::Codex, text), ["tool file_change: add a b"]);
}
