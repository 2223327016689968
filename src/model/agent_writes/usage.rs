//! Token usage read from a transcript, the way the reference derives a checkpoint's
//! `token_usage` (docs/format.md, "Token usage from the transcript"): each agent that records
//! what its model calls cost says so in its own shape, and only the part of the transcript a
//! checkpoint covers counts (from entry `start`: a line of a JSONL transcript, a message of a
//! transcript that is one JSON document, as `checkpoint_transcript_start` counts them).
//!
//! - Claude Code: the `message.usage` of `assistant` entries, once per `message.id` (a streamed
//!   reply is logged once per content block, each line repeating the usage; the last counts).
//! - Codex: the cumulative `total_token_usage` of `token_count` events, the last one in the
//!   window minus the last one before it; `input_tokens` is the uncached part of the input.
//!   Each `token_count` event with counts is a call.
//! - OpenCode and Gemini CLI: the `tokens` of each assistant message.
//! - Pi: the `usage` of each assistant message.
//! - Copilot CLI: the `modelMetrics` of `session.shutdown` events (totals per model), else the
//!   `outputTokens` of each `assistant.message`.
//!
//! Cursor, Kiro and Droid transcripts record no usage: none is derived from them.

use std::collections::hash_map::{Entry, HashMap};

use serde::Deserialize;
use serde_json::Value;

use super::{document, gemini, jsonl, kiro, opencode, str_at, TranscriptFormat};
use crate::model::documents::TokenUsage;

/// The token usage of `transcript` from entry `start` on, when its format records usage and
/// the window holds at least one model call.
pub fn token_usage(transcript: &[u8], start: usize) -> Option<TokenUsage> {
    let usage = match document(transcript) {
        Some(doc) if !doc.one_line || !is_jsonl_entry(&doc.value) => {
            let messages = doc.value.get("messages").and_then(Value::as_array)?;
            let window = messages.get(start..).unwrap_or_default();
            match () {
                _ if gemini::is(&doc.value) => sum_messages(window, gemini_tokens),
                _ if opencode::is(&doc.value) => sum_messages(window, opencode_tokens),
                _ => return None,
            }
        }
        _ => from_lines(transcript, start)?,
    };
    (usage.api_call_count > 0).then_some(usage)
}

/// How many entries `transcript` holds, as [`token_usage`]'s `start` counts them: the
/// messages of a transcript that is one JSON document of a known agent, else its non-empty
/// lines.
pub fn entry_count(transcript: &[u8]) -> usize {
    if let Some(doc) = document(transcript) {
        let known = gemini::is(&doc.value) || opencode::is(&doc.value) || kiro::is(&doc.value);
        if known && !(doc.one_line && is_jsonl_entry(&doc.value)) {
            let messages = doc.value.get("messages").and_then(Value::as_array);
            return messages.map_or(0, Vec::len);
        }
    }
    non_empty_lines(transcript).count()
}

/// Whether a one-line document is rather a JSONL transcript of one entry.
fn is_jsonl_entry(v: &Value) -> bool {
    jsonl::detect(v).is_some()
}

fn non_empty_lines(transcript: &[u8]) -> impl Iterator<Item = &[u8]> {
    transcript
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
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

fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// A Gemini CLI `gemini` message's `tokens` (`input`, `output`, `cached`).
fn gemini_tokens(m: &Value) -> Option<TokenUsage> {
    let t = m.get("tokens").filter(|_| str_at(m, "type") == "gemini")?;
    Some(TokenUsage {
        input_tokens: int(t, "/input"),
        cache_read_tokens: int(t, "/cached"),
        output_tokens: int(t, "/output"),
        ..TokenUsage::default()
    })
}

/// An OpenCode assistant message's `info.tokens` (`input`, `output`, `cache.read/write`).
fn opencode_tokens(m: &Value) -> Option<TokenUsage> {
    let info = m.get("info").filter(|i| str_at(i, "role") == "assistant")?;
    let t = info.get("tokens")?;
    Some(TokenUsage {
        input_tokens: int(t, "/input"),
        cache_creation_tokens: int(t, "/cache/write"),
        cache_read_tokens: int(t, "/cache/read"),
        output_tokens: int(t, "/output"),
        ..TokenUsage::default()
    })
}

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

#[derive(Deserialize)]
struct ClaudeEntry {
    #[serde(rename = "type", default)]
    kind: String,
    message: Option<ClaudeMessage>,
}

#[derive(Deserialize)]
struct ClaudeMessage {
    #[serde(default)]
    id: Option<String>,
    usage: Option<ClaudeUsage>,
}

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

#[derive(Deserialize)]
struct CodexEntry {
    #[serde(rename = "type", default)]
    kind: String,
    payload: Option<CodexPayload>,
}

#[derive(Deserialize)]
struct CodexPayload {
    #[serde(rename = "type", default)]
    kind: String,
    info: Option<CodexInfo>,
}

#[derive(Deserialize)]
struct CodexInfo {
    total_token_usage: Option<CodexTotals>,
}

/// The usage of a JSONL transcript from its non-empty line `start` (0-based) on.
fn from_lines(transcript: &[u8], start: usize) -> Option<TokenUsage> {
    let mut format = None;
    // Claude Code's replies in order, and where each message id is in it.
    let mut claude: Vec<ClaudeUsage> = Vec::new();
    let mut claude_ids: HashMap<String, usize> = HashMap::new();
    let (mut codex_before, mut codex_last, mut codex_calls) = (None, None, 0);
    let mut sum = TokenUsage::default();
    let mut copilot_shutdown = TokenUsage::default();
    for (i, raw) in non_empty_lines(transcript).enumerate() {
        let f = match format {
            Some(f) => f,
            None => {
                let Ok(v) = serde_json::from_slice::<Value>(raw) else {
                    continue;
                };
                match jsonl::detect(&v) {
                    Some(f) => *format.insert(f),
                    None => continue,
                }
            }
        };
        let in_window = i >= start;
        match f {
            TranscriptFormat::ClaudeCode => {
                if !in_window || memchr::memmem::find(raw, b"\"usage\"").is_none() {
                    continue;
                }
                let Ok(e) = serde_json::from_slice::<ClaudeEntry>(raw) else {
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
                match id.and_then(|id| match claude_ids.entry(id) {
                    Entry::Occupied(at) => Some(*at.get()),
                    Entry::Vacant(slot) => {
                        slot.insert(claude.len());
                        None
                    }
                }) {
                    Some(at) => claude[at] = u,
                    None => claude.push(u),
                }
            }
            TranscriptFormat::Codex => {
                if memchr::memmem::find(raw, b"\"token_count\"").is_none() {
                    continue;
                }
                let Ok(e) = serde_json::from_slice::<CodexEntry>(raw) else {
                    continue;
                };
                let totals = e
                    .payload
                    .filter(|p| e.kind == "event_msg" && p.kind == "token_count")
                    .and_then(|p| p.info)
                    .and_then(|i| i.total_token_usage);
                let Some(totals) = totals else { continue };
                if in_window {
                    codex_last = Some(totals);
                    codex_calls += 1;
                } else {
                    codex_before = Some(totals);
                }
            }
            TranscriptFormat::Pi | TranscriptFormat::CopilotCli if in_window => {
                let Ok(v) = serde_json::from_slice::<Value>(raw) else {
                    continue;
                };
                if f == TranscriptFormat::Pi {
                    if let Some(u) = pi_usage(&v) {
                        sum.add(&u);
                        sum.api_call_count += 1;
                    }
                } else {
                    copilot(&v, &mut sum, &mut copilot_shutdown);
                }
            }
            _ => {}
        }
    }
    match format? {
        TranscriptFormat::ClaudeCode => {
            for u in &claude {
                sum.input_tokens += u.input_tokens;
                sum.cache_creation_tokens += u.cache_creation_input_tokens;
                sum.cache_read_tokens += u.cache_read_input_tokens;
                sum.output_tokens += u.output_tokens;
            }
            sum.api_call_count = claude.len() as i64;
        }
        TranscriptFormat::Codex => {
            let end = codex_last?;
            let base = codex_before.unwrap_or_default();
            let cached = end.cached_input_tokens - base.cached_input_tokens;
            sum.input_tokens = end.input_tokens - base.input_tokens - cached;
            sum.cache_read_tokens = cached;
            sum.output_tokens = end.output_tokens - base.output_tokens;
            sum.api_call_count = codex_calls;
        }
        // A shutdown's totals, when there is one, include every message's output.
        TranscriptFormat::CopilotCli if copilot_shutdown.api_call_count > 0 => {
            return Some(copilot_shutdown)
        }
        TranscriptFormat::Pi | TranscriptFormat::CopilotCli => {}
        _ => return None,
    }
    Some(sum)
}

/// A Pi assistant message's `usage` (`input`, `output`, `cacheRead`, `cacheWrite`).
fn pi_usage(v: &Value) -> Option<TokenUsage> {
    let m = v
        .get("message")
        .filter(|m| str_at(m, "role") == "assistant")?;
    let u = m.get("usage")?;
    Some(TokenUsage {
        input_tokens: int(u, "/input"),
        cache_creation_tokens: int(u, "/cacheWrite"),
        cache_read_tokens: int(u, "/cacheRead"),
        output_tokens: int(u, "/output"),
        ..TokenUsage::default()
    })
}

/// Adds a Copilot CLI event: an `assistant.message`'s `outputTokens` to `messages`, a
/// `session.shutdown`'s `modelMetrics` (per model: `requests.count`, `usage`) to `shutdown`.
fn copilot(v: &Value, messages: &mut TokenUsage, shutdown: &mut TokenUsage) {
    match str_at(v, "type") {
        "assistant.message" => {
            if let Some(out) = v.pointer("/data/outputTokens").and_then(Value::as_i64) {
                messages.output_tokens += out;
                messages.api_call_count += 1;
            }
        }
        "session.shutdown" => {
            let models = v.pointer("/data/modelMetrics").and_then(Value::as_object);
            for m in models.into_iter().flat_map(|m| m.values()) {
                shutdown.input_tokens += int(m, "/usage/inputTokens");
                shutdown.cache_creation_tokens += int(m, "/usage/cacheWriteTokens");
                shutdown.cache_read_tokens += int(m, "/usage/cacheReadTokens");
                shutdown.output_tokens += int(m, "/usage/outputTokens");
                shutdown.api_call_count += int(m, "/requests/count");
            }
        }
        _ => {}
    }
}
