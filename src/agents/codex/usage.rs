//! Codex's token usage: the cumulative counts of its usage entries, the last one in the window
//! minus the last one before it; `input_tokens` is the uncached part of the input. Each entry
//! with counts is a call. From 0.171.0 on, Codex writes a `token_usage_record` (its
//! `thread_token_usage`) as soon as a call answers, before the tools the call asked for run (a
//! `git commit` among them), and the `token_count` event (its `total_token_usage`) only after
//! them: a rollout with records is read from its records alone, so that a commit a tool makes
//! counts the call that asked for it, and no call counts twice; another from its events.

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
    /// A `token_usage_record`'s cumulative counts.
    thread_token_usage: Option<CodexTotals>,
}

#[derive(Deserialize)]
struct CodexInfo {
    total_token_usage: Option<CodexTotals>,
}

/// The cumulative counts of one kind of usage entry: the last before the window, the last in
/// it, and how many in it.
#[derive(Default)]
struct Tally {
    before: Option<CodexTotals>,
    last: Option<CodexTotals>,
    calls: i64,
}

impl Tally {
    /// Counts `totals`, of the line of index `i`, in a window that starts at line `start`.
    fn add(&mut self, totals: CodexTotals, i: usize, start: usize) {
        if i >= start {
            self.last = Some(totals);
            self.calls += 1;
        } else {
            self.before = Some(totals);
        }
    }

    /// Whether an entry of this kind was seen, in the window or before it.
    fn seen(&self) -> bool {
        self.before.is_some() || self.last.is_some()
    }
}

/// The usage `lines` record from the line of index `start` on; `None` when no usage entry in
/// the window has counts.
pub(super) fn from_lines(lines: Lines<'_, '_>, start: usize) -> Option<TokenUsage> {
    let (mut records, mut events) = (Tally::default(), Tally::default());
    for (i, raw) in lines {
        if memchr::memmem::find(raw, b"\"token_count\"").is_none()
            && memchr::memmem::find(raw, b"\"token_usage_record\"").is_none()
        {
            continue;
        }
        let Ok(e) = serde_json::from_slice::<UsageEntry>(raw) else {
            continue;
        };
        let Some(p) = e.payload else { continue };
        match e.kind.as_str() {
            "token_usage_record" => {
                if let Some(totals) = p.thread_token_usage {
                    records.add(totals, i, start);
                }
            }
            "event_msg" if p.kind == "token_count" => {
                if let Some(totals) = p.info.and_then(|i| i.total_token_usage) {
                    events.add(totals, i, start);
                }
            }
            _ => {}
        }
    }
    let tally = if records.seen() { records } else { events };
    let end = tally.last?;
    let base: CodexTotals = tally.before.unwrap_or_default();
    let cached = end.cached_input_tokens - base.cached_input_tokens;
    Some(TokenUsage {
        input_tokens: end.input_tokens - base.input_tokens - cached,
        cache_read_tokens: cached,
        output_tokens: end.output_tokens - base.output_tokens,
        api_call_count: tally.calls,
        ..TokenUsage::default()
    })
}
