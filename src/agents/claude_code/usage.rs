//! Claude Code's token usage: the `message.usage` of `assistant` entries, once per
//! `message.id` (a streamed reply is logged once per content block, each line repeating the
//! usage; the last counts).

use std::collections::hash_map::{Entry, HashMap};

use serde::Deserialize;

use crate::agents::Lines;
use crate::model::documents::TokenUsage;

/// Claude Code's `message.usage`.
#[derive(Deserialize, Default, Clone, Copy)]
struct ClaudeUsage {
    #[serde(default)]
    input_tokens: i64,
    #[serde(default)]
    cache_creation_input_tokens: i64,
    #[serde(default)]
    cache_read_input_tokens: i64,
    #[serde(default)]
    output_tokens: i64,
}

/// What of an entry the usage is read from: its type, and its `message`'s id and usage (the
/// reader's [`super::Entry`] decodes the content instead, which this pass skips unread).
#[derive(Deserialize)]
struct UsageEntry {
    #[serde(rename = "type", default)]
    kind: String,
    message: Option<UsageMessage>,
}

#[derive(Deserialize)]
struct UsageMessage {
    #[serde(default)]
    id: Option<String>,
    usage: Option<ClaudeUsage>,
}

/// The usage `lines` record from the line of index `start` on.
pub(super) fn from_lines(lines: Lines<'_, '_>, start: usize) -> Option<TokenUsage> {
    // The replies in order, and where each message id is in it.
    let mut replies: Vec<ClaudeUsage> = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    let usage = memchr::memmem::Finder::new(b"\"usage\"");
    for (i, raw) in lines {
        if i < start || usage.find(raw).is_none() {
            continue;
        }
        let Ok(e) = serde_json::from_slice::<UsageEntry>(raw) else {
            continue;
        };
        let Some((id, Some(u))) = e
            .message
            .filter(|_| e.kind == "assistant")
            .map(|m| (m.id, m.usage))
        else {
            continue;
        };
        // A reply streamed over several lines repeats its id: the last line counts.
        match id.and_then(|id| match ids.entry(id) {
            Entry::Occupied(at) => Some(*at.get()),
            Entry::Vacant(slot) => {
                slot.insert(replies.len());
                None
            }
        }) {
            Some(at) => replies[at] = u,
            None => replies.push(u),
        }
    }
    let mut sum = TokenUsage::default();
    for u in &replies {
        sum.input_tokens += u.input_tokens;
        sum.cache_creation_tokens += u.cache_creation_input_tokens;
        sum.cache_read_tokens += u.cache_read_input_tokens;
        sum.output_tokens += u.output_tokens;
    }
    sum.api_call_count = replies.len() as i64;
    Some(sum)
}
