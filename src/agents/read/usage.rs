//! Token usage read from a transcript, the way the reference derives a checkpoint's
//! `token_usage` (docs/format.md, "Token usage from the transcript"): each agent that records
//! what its model calls cost says so in its own shape (its folder reads it), and only the part
//! of the transcript a checkpoint covers counts (from entry `start`: a line of a JSONL
//! transcript, a message of a transcript that is one JSON document, as
//! `checkpoint_transcript_start` counts them).
//!
//! - Claude Code: the `message.usage` of `assistant` entries, once per `message.id`.
//! - Codex: the cumulative `total_token_usage` of `token_count` events, the last one in the
//!   window minus the last one before it.
//! - OpenCode and Gemini CLI: the `tokens` of each assistant message.
//! - Pi: the `usage` of each assistant message.
//! - Copilot CLI: the `usage` of each `session.usage_record`, else the `modelMetrics` of
//!   `session.shutdown` events (totals per model), else the
//!   `outputTokens` of each `assistant.message`.
//!
//! Cursor, Kiro and Droid transcripts record no usage: none is derived from them.

use serde_json::Value;

use super::document;
use crate::agents::{registry, Usage};
use crate::model::documents::TokenUsage;

/// The token usage of `transcript` from entry `start` on, when its format records usage and
/// the window holds at least one model call.
pub fn token_usage(transcript: &[u8], start: usize) -> Option<TokenUsage> {
    let usage = match document(transcript) {
        Some(doc) if !doc.one_line || !is_jsonl_entry(&doc.value) => {
            let messages = doc.value.get("messages").and_then(Value::as_array)?;
            let window = messages.get(start..).unwrap_or_default();
            match registry::usage(registry::document_format(&doc.value)?) {
                Usage::Messages(tokens) => sum_messages(window, tokens),
                _ => return None,
            }
        }
        _ => from_lines(transcript, start)?,
    };
    (usage.api_call_count > 0).then_some(usage)
}

/// How many entries `transcript` holds, as [`token_usage`]'s `start` counts them: the
/// messages of a transcript that is one JSON document of a known agent, up to the first one
/// still being written (its tokens come when it ends, in a later export: the next window reads
/// it again), else its non-empty lines.
pub fn entry_count(transcript: &[u8]) -> usize {
    if let Some(doc) = document(transcript) {
        if let Some(format) = registry::document_format(&doc.value) {
            if !(doc.one_line && is_jsonl_entry(&doc.value)) {
                let messages = doc.value.get("messages").and_then(Value::as_array);
                return messages.map_or(0, |m| {
                    m.iter()
                        .position(|m| registry::in_progress(format, m))
                        .unwrap_or(m.len())
                });
            }
        }
    }
    non_empty_lines(transcript).count()
}

/// Whether a one-line document is rather a JSONL transcript of one entry.
fn is_jsonl_entry(v: &Value) -> bool {
    registry::line_format(v).is_some()
}

fn non_empty_lines(transcript: &[u8]) -> impl Iterator<Item = &[u8]> {
    crate::base::lines::split_lines(transcript).filter(|l| !l.trim_ascii().is_empty())
}

/// Sums what `tokens` reads from each message of `window` that records a call.
fn sum_messages(window: &[Value], tokens: fn(&Value) -> Option<TokenUsage>) -> TokenUsage {
    let mut sum = TokenUsage::default();
    for u in window.iter().filter_map(tokens) {
        sum.add(&u);
        sum.api_call_count += 1;
    }
    sum
}

/// The usage of a JSONL transcript from its non-empty line `start` (0-based) on: the lines
/// before the first one an agent claims are skipped, and that agent reads the rest.
fn from_lines(transcript: &[u8], start: usize) -> Option<TokenUsage> {
    let mut lines = non_empty_lines(transcript).enumerate();
    let (format, first) = lines.by_ref().find_map(|(i, raw)| {
        let v = serde_json::from_slice::<Value>(raw).ok()?;
        Some((registry::line_format(&v)?, (i, raw)))
    })?;
    match registry::usage(format) {
        Usage::Lines(read) => read(&mut std::iter::once(first).chain(lines), start),
        // Lines that are each a message (OpenCode's first format).
        Usage::Messages(tokens) => {
            let window: Vec<Value> = std::iter::once(first)
                .chain(lines)
                .filter(|(i, _)| *i >= start)
                .filter_map(|(_, raw)| serde_json::from_slice(raw).ok())
                .collect();
            Some(sum_messages(&window, tokens))
        }
        Usage::None => None,
    }
}
