//! A coding-agent provider's stdout, as arbitrary bytes, through
//! `curupira_agents::stream` (`Lines` and `Reader`). The first byte picks the provider
//! (its value modulo 9), the rest is the stream. Checked on every input:
//!
//! - nothing panics, whatever the bytes;
//! - the reading does not depend on how the bytes arrive: all at once, one byte at a
//!   time, and cut at a point the input chooses give the same summary and the same
//!   announced sessions;
//! - at most one session is announced, and it is the summary's;
//! - the lines counted are the stream's lines (a last one without its end counts);
//! - diagnostics are at most `MAX_DIAGNOSTICS`, and their count is at least that many;
//!   a JSON-object line never gets a `stream-not-json` diagnostic.

use curupira_agents::Provider;
use curupira_agents::stream::{Lines, MAX_DIAGNOSTICS, Reader, Summary};

fn read(provider: Provider, pieces: &[&[u8]]) -> (Vec<String>, Summary) {
    let mut reader = Reader::new(provider);
    let mut lines = Lines::new();
    let mut announced = Vec::new();
    for piece in pieces {
        lines.take(piece, &mut reader, &mut |s| announced.push(s));
    }
    lines.finish(&mut reader, &mut |s| announced.push(s));
    (announced, reader.finish())
}

/// Runs every check on one input.
pub fn check(data: &[u8]) {
    let Some((&first, stream)) = data.split_first() else {
        return;
    };
    let provider = Provider::ALL[usize::from(first) % Provider::ALL.len()];
    let whole = read(provider, &[stream]);
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    let cut = stream.len() / 2 + usize::from(first) % (stream.len() / 2 + 1);
    let cut = cut.min(stream.len());
    let (left, right) = stream.split_at(cut);
    for other in [read(provider, &bytes), read(provider, &[left, right])] {
        assert_eq!(
            other.0, whole.0,
            "{provider}: the sessions depend on the chunking"
        );
        // Costs are summed in the same order: equal as values, NaN aside.
        assert_eq!(
            format!("{:?}", other.1),
            format!("{:?}", whole.1),
            "{provider}: the summary depends on the chunking"
        );
    }
    let (announced, summary) = whole;
    assert!(announced.len() <= 1, "{provider}: {announced:?}");
    assert_eq!(announced.first(), summary.session_id.as_ref(), "{provider}");
    let expected_lines = stream.split(|&b| b == b'\n').count()
        - usize::from(stream.ends_with(b"\n") || stream.is_empty());
    assert_eq!(summary.lines, expected_lines as u64, "{provider}: lines");
    assert!(summary.diagnostics.len() <= MAX_DIAGNOSTICS);
    assert!(summary.diagnostic_count >= summary.diagnostics.len() as u64);
    for diagnostic in &summary.diagnostics {
        if diagnostic.code == "agent/stream-not-json" {
            let line = stream
                .split(|&b| b == b'\n')
                .nth(usize::try_from(diagnostic.line - 1).unwrap_or(usize::MAX))
                .unwrap_or_default();
            let text = String::from_utf8_lossy(line);
            let parsed = serde_json::from_str::<serde_json::Value>(text.trim_end_matches('\r'));
            assert!(
                parsed.is_err(),
                "{provider}: a JSON line said not JSON: {text:?}"
            );
        }
    }
}
