//! The stream reader on one stream per CLI format (`streams/`, written from each CLI's
//! documented output, sources in `streams/README.md`), fed as the host feeds it: in
//! chunks that cut lines anywhere.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use curupira_agents::Provider;
use curupira_agents::stream::{Lines, MAX_LINE_BYTES, Reader, Summary, Usage};

const ANSWER: &str = "Fixed the off-by-one in the parser; all tests pass.";

/// Reads `text` through [`Lines`] in `chunk`-byte pieces; the sessions announced, and
/// the summary.
fn read(provider: Provider, text: &str, chunk: usize) -> (Vec<String>, Summary) {
    let mut reader = Reader::new(provider);
    let mut lines = Lines::new();
    let mut announced = Vec::new();
    for piece in text.as_bytes().chunks(chunk) {
        lines.take(piece, &mut reader, &mut |s| announced.push(s));
    }
    lines.finish(&mut reader, &mut |s| announced.push(s));
    (announced, reader.finish())
}

fn check(provider: Provider, text: &str, session: &str, usage: Usage, cost: Option<f64>) {
    for chunk in [1, 7, 4096] {
        let (announced, summary) = read(provider, text, chunk);
        assert_eq!(announced, [session], "{provider}, chunks of {chunk}");
        assert_eq!(summary.session_id.as_deref(), Some(session), "{provider}");
        assert_eq!(summary.answer.as_deref(), Some(ANSWER), "{provider}");
        assert_eq!(summary.usage, Some(usage), "{provider}");
        match (summary.cost_usd, cost) {
            (Some(got), Some(want)) => assert!((got - want).abs() < 1e-9, "{provider}: {got}"),
            (got, want) => assert_eq!(got, want, "{provider}"),
        }
        assert_eq!(summary.error, None, "{provider}");
        assert!(
            summary.diagnostics.is_empty(),
            "{provider}: {:?}",
            summary.diagnostics
        );
    }
}

fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_write_tokens: write,
    }
}

#[test]
fn claude_stream_json() {
    let text = include_str!("../streams/claude.jsonl");
    check(
        Provider::Claude,
        text,
        "9f2c1a7e-3b4d-4e5f-8a6b-7c8d9e0f1a2b",
        usage(1530, 412, 10240, 2048),
        Some(0.0871),
    );
    // Qwen Code prints the same events.
    check(
        Provider::Qwen,
        text,
        "9f2c1a7e-3b4d-4e5f-8a6b-7c8d9e0f1a2b",
        usage(1530, 412, 10240, 2048),
        Some(0.0871),
    );
}

#[test]
fn codex_exec_json() {
    let text = include_str!("../streams/codex.jsonl");
    check(
        Provider::Codex,
        text,
        "0199a213-81c0-7800-8aa1-bbab2a035a53",
        usage(24763, 122, 24448, 0),
        None,
    );
}

#[test]
fn gemini_stream_json_joins_the_last_deltas() {
    let text = include_str!("../streams/gemini.jsonl");
    check(
        Provider::Gemini,
        text,
        "c7d2e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f",
        usage(2500, 250, 1200, 0),
        None,
    );
}

#[test]
fn copilot_json_reads_the_answer_and_usage_but_not_the_session() {
    let text = include_str!("../streams/copilot.jsonl");
    let (announced, summary) = read(Provider::Copilot, text, 5);
    assert!(announced.is_empty(), "the host names Copilot's session");
    assert_eq!(summary.answer.as_deref(), Some(ANSWER));
    assert_eq!(summary.usage, Some(usage(1800, 240, 900, 0)));
    assert_eq!(summary.cost_usd, Some(1.0));
    assert!(summary.diagnostics.is_empty(), "{:?}", summary.diagnostics);
}

#[test]
fn opencode_and_kilo_sum_their_steps() {
    let text = include_str!("../streams/opencode.jsonl");
    for provider in [Provider::Opencode, Provider::Kilo] {
        check(
            provider,
            text,
            "ses_4b2c9d8e7fffe1a2b3c4d5e6f7",
            usage(2600, 120, 1700, 100),
            Some(0.0073),
        );
    }
}

#[test]
fn pi_json_sums_assistant_messages() {
    let text = include_str!("../streams/pi.jsonl");
    check(
        Provider::Pi,
        text,
        "b3e1f2a4-5c6d-4e7f-8a9b-0c1d2e3f4a5b",
        usage(1900, 55, 400, 400),
        Some(0.008145),
    );
}

#[test]
fn cursor_stream_json_has_no_usage() {
    let text = include_str!("../streams/cursor.jsonl");
    let (announced, summary) = read(Provider::Cursor, text, 3);
    assert_eq!(announced, ["2d8f3c4b-9a1e-4f6d-b7c2-e5a4d3c2b1a0"]);
    assert_eq!(summary.answer.as_deref(), Some(ANSWER));
    assert_eq!(summary.usage, None);
    assert_eq!(summary.cost_usd, None);
}

#[test]
fn a_broken_stream_gives_diagnostics_and_what_it_could_read() {
    let text = include_str!("../streams/broken-claude.txt");
    let (announced, summary) = read(Provider::Claude, text, 11);
    assert_eq!(announced, ["e0e0e0e0-1111-4222-8333-444444444444"]);
    // The last assistant text stands in for the missing result.
    assert_eq!(summary.answer.as_deref(), Some("Partly done."));
    let found: Vec<(&str, u64)> = summary
        .diagnostics
        .iter()
        .map(|d| (d.code, d.line))
        .collect();
    assert_eq!(
        found,
        [
            ("agent/stream-not-json", 2),
            ("agent/stream-not-object", 3),
            ("agent/stream-not-json", 5),
            ("agent/stream-no-result", 0),
        ]
    );
    assert_eq!(
        summary.diagnostics[1].message,
        "line 3 of the claude stream is JSON but not an object"
    );
    assert!(
        summary.diagnostics[0]
            .message
            .starts_with("line 2 of the claude stream is not JSON (")
    );
    assert_eq!(summary.diagnostic_count, 4);
}

#[test]
fn an_error_result_is_read_as_the_streams_error() {
    let line = r#"{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s"}"#;
    let (_, summary) = read(Provider::Claude, line, 100);
    assert_eq!(summary.error.as_deref(), Some("error_max_turns"));
    let line = r#"{"type":"turn.failed","error":{"message":"quota exceeded"}}"#;
    let (_, summary) = read(Provider::Codex, line, 100);
    assert_eq!(summary.error.as_deref(), Some("quota exceeded"));
}

#[test]
fn a_line_past_the_limit_is_skipped_without_holding_it() {
    let mut reader = Reader::new(Provider::Claude);
    let mut lines = Lines::new();
    let mut announced = Vec::new();
    let block = vec![b'x'; 1024 * 1024];
    for _ in 0..(MAX_LINE_BYTES / block.len() + 2) {
        lines.take(&block, &mut reader, &mut |s| announced.push(s));
    }
    lines.take(b"\n{\"session_id\":\"after\"}\n", &mut reader, &mut |s| {
        announced.push(s)
    });
    let summary = reader.finish();
    assert_eq!(announced, ["after"], "the line after the long one is read");
    assert_eq!(summary.diagnostics[0].code, "agent/stream-line-too-long");
    assert_eq!(summary.diagnostics[0].line, 1);
    assert!(
        summary.diagnostics[0]
            .message
            .contains("18874368 bytes or more"),
        "{}",
        summary.diagnostics[0].message
    );
}

#[test]
fn diagnostics_are_bounded_but_counted() {
    let text = "not json\n".repeat(100);
    let (_, summary) = read(Provider::Codex, &text, 64);
    assert_eq!(
        summary.diagnostics.len(),
        curupira_agents::stream::MAX_DIAGNOSTICS
    );
    assert_eq!(
        summary.diagnostic_count, 101,
        "100 lines and no closing event"
    );
}

#[test]
fn a_failed_agents_stream_may_end_without_its_closing_event() {
    let text = include_str!("../streams/broken-claude.txt");
    let read = |failed: bool| {
        let mut reader = Reader::new(Provider::Claude);
        let mut lines = Lines::new();
        lines.take(text.as_bytes(), &mut reader, &mut |_| {});
        lines.finish(&mut reader, &mut |_| {});
        if failed {
            reader.finish_failed()
        } else {
            reader.finish()
        }
    };
    let codes = |summary: &Summary| -> Vec<&'static str> {
        summary.diagnostics.iter().map(|d| d.code).collect()
    };
    let failed = read(true);
    assert_eq!(
        codes(&failed),
        [
            "agent/stream-not-json",
            "agent/stream-not-object",
            "agent/stream-not-json"
        ],
        "the others are kept"
    );
    assert_eq!(failed.diagnostic_count, 3);
    assert_eq!(failed.answer.as_deref(), Some("Partly done."));
    assert_eq!(codes(&read(false)).last(), Some(&"agent/stream-no-result"));
}
