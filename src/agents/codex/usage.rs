//! Codex's token usage: the cumulative `total_token_usage` of `token_count` events, the last
//! one in the window minus the last one before it; `input_tokens` is the uncached part of the
//! input. Each `token_count` event with counts is a call.

use serde::Deserialize;

use crate::agents::Lines;
use crate::model::documents::TokenUsage;

/// Codex's `total_token_usage`.
#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
struct CodexTotals {
    #[serde(default)]
    input_tokens: i64,
    #[serde(default)]
    cached_input_tokens: i64,
    #[serde(default)]
    output_tokens: i64,
}

/// What of an entry the usage is read from: its type, and its `payload`'s type and counts (the
/// reader's [`super::Payload`] decodes the conversation instead, which this pass skips unread).
#[derive(Deserialize)]
struct UsageEntry {
    #[serde(rename = "type", default)]
    kind: String,
    payload: Option<UsagePayload>,
}

#[derive(Deserialize)]
struct UsagePayload {
    #[serde(rename = "type", default)]
    kind: String,
    info: Option<CodexInfo>,
}

#[derive(Deserialize)]
struct CodexInfo {
    total_token_usage: Option<CodexTotals>,
}

/// The usage `lines` record from the line of index `start` on; `None` when no `token_count`
/// event in the window has counts.
pub(super) fn from_lines(lines: Lines<'_, '_>, start: usize) -> Option<TokenUsage> {
    let (mut before, mut last, mut calls) = (None, None, 0);
    for (i, raw) in lines {
        if memchr::memmem::find(raw, b"\"token_count\"").is_none() {
            continue;
        }
        let Ok(e) = serde_json::from_slice::<UsageEntry>(raw) else {
            continue;
        };
        let totals = e
            .payload
            .filter(|p| e.kind == "event_msg" && p.kind == "token_count")
            .and_then(|p| p.info)
            .and_then(|i| i.total_token_usage);
        let Some(totals) = totals else { continue };
        if i >= start {
            last = Some(totals);
            calls += 1;
        } else {
            before = Some(totals);
        }
    }
    let end = last?;
    let base: CodexTotals = before.unwrap_or_default();
    let cached = end.cached_input_tokens - base.cached_input_tokens;
    Some(TokenUsage {
        input_tokens: end.input_tokens - base.input_tokens - cached,
        cache_read_tokens: cached,
        output_tokens: end.output_tokens - base.output_tokens,
        api_call_count: calls,
        ..TokenUsage::default()
    })
}
