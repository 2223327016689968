//! The agents whose entries are messages of content items (Cursor, Droid and Pi in JSON lines,
//! Cline in one document): how such an entry reports its turn, and which of Pi and Droid a line
//! is in.

use serde_json::Value;

use super::json::{str_at, text_of};
use super::Turns;
use crate::agents::id::TranscriptFormat;

/// How an agent whose entries are messages of content items (Cursor, Droid, Pi, Cline) records
/// a turn: prompts are the `text` items of user messages, tool calls items of one type.
pub(crate) struct ItemTurns {
    /// Where an entry keeps its message (a JSON pointer; "": the entry is the message).
    pub(crate) message_at: &'static str,
    /// Where an entry says who speaks (a JSON pointer).
    pub(crate) role_at: &'static str,
    /// The type of a tool-call item, and the member holding its arguments.
    pub(crate) call: (&'static str, &'static str),
    /// The agent's file-writing tools.
    pub(crate) write_tools: &'static [&'static str],
    /// What of a user `text` item is prompt (`None`: none of it).
    pub(crate) prompt: fn(&str) -> Option<&str>,
}

impl ItemTurns {
    /// Reads the entry `v` (on transcript line `line`): its message (at `message_at`), said by
    /// the role at `role_at`, at its `timestamp`. Tool results are `tool_result` items (their
    /// `content`) or a message of role `toolResult`.
    pub(crate) fn read(&self, v: &Value, line: usize, out: &mut impl Turns) {
        let ts = str_at(v, "timestamp");
        let message = v.pointer(self.message_at);
        let content = message.and_then(|m| m.get("content"));
        let items = content.and_then(Value::as_array);
        let items = items.into_iter().flatten();
        match v.pointer(self.role_at).and_then(Value::as_str) {
            Some("user") => {
                let texts: Vec<&str> = items
                    .clone()
                    .filter(|i| str_at(i, "type") == "text")
                    .filter_map(|i| (self.prompt)(str_at(i, "text")))
                    .collect();
                out.prompt(texts.join("\n"), ts, line);
                for result in items.filter(|i| str_at(i, "type") == "tool_result") {
                    out.output(&text_of(result.get("content").unwrap_or(&Value::Null)));
                }
            }
            Some("assistant") => {
                let (kind, args) = self.call;
                for item in items {
                    match str_at(item, "type") {
                        "text" => out.reply(str_at(item, "text")),
                        "thinking" => out.thinking(str_at(item, "thinking")),
                        k if k == kind => {
                            let args = item.get(args).unwrap_or(&Value::Null);
                            out.tool_call(self.write_tools, str_at(item, "name"), args, ts, line);
                        }
                        _ => {}
                    }
                }
            }
            Some("toolResult") => {
                out.output(&text_of(content.unwrap_or(&Value::Null)));
            }
            _ => {}
        }
    }
}

/// Which of Pi and Droid (both wrap turns in `message` lines) a `message` line without its
/// session header is in, when it says: Pi's have `toolCall` items and `toolResult` messages,
/// Droid's Claude-like `tool_use` and `tool_result` items.
pub(crate) fn pi_or_droid(v: &Value) -> Option<TranscriptFormat> {
    let message = v.get("message")?;
    if str_at(message, "role") == "toolResult" {
        return Some(TranscriptFormat::Pi);
    }
    let items = message.get("content").and_then(Value::as_array)?;
    items.iter().find_map(|i| match str_at(i, "type") {
        "toolCall" => Some(TranscriptFormat::Pi),
        "tool_use" | "tool_result" => Some(TranscriptFormat::Droid),
        _ => None,
    })
}
