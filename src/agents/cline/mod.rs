//! Cline: one JSON document, the session's messages file (`~/.cline/data/sessions/<session>/
//! <session>.messages.json`, version 1: `version`, `sessionId`, `messages[]`), each message a
//! `role` (`user` or `assistant`) and Anthropic-style `content[]` blocks. Prompts are the `text`
//! blocks of user messages, inside the `<user_input mode="...">` wrapper Cline puts around what
//! the user typed when it is there; writes are the assistant's `tool_use` blocks named `editor`
//! (`input.new_text`, the file in `input.path`) or `apply_patch` (`input.input`); the usage is
//! each assistant message's `metrics`.

mod hooks;
pub(crate) use hooks::HOOKS;

use serde_json::Value;

use super::id::TranscriptFormat;
use super::turns::items::ItemTurns;
use super::turns::json::{int, str_at};
use super::turns::{Turns, Unit};
use super::{TranscriptReader, Usage};
use crate::model::documents::TokenUsage;

/// Cline's transcript reader.
pub(crate) struct Cline;

impl Cline {
    /// Where the document's entries are, and what each is.
    pub(crate) const ENTRIES: (&'static str, Unit) = ("messages", Unit::Message);
}

impl TranscriptReader for Cline {
    const FORMAT: TranscriptFormat = TranscriptFormat::Cline;
    const USAGE: Usage = Usage::Messages(tokens);
    type Entry<'e> = &'e Value;

    /// Whether `doc` is a Cline messages file: a numbered version, a session, and messages of a
    /// `role` and content blocks (Gemini CLI's, also of a `sessionId`, have a `type`).
    fn claims(doc: &Value) -> bool {
        doc.get("version").is_some_and(Value::is_u64)
            && doc.get("sessionId").is_some_and(Value::is_string)
            && doc
                .get("messages")
                .and_then(Value::as_array)
                .is_some_and(|m| {
                    m.iter().all(|m| {
                        m.get("role").is_some_and(Value::is_string)
                            && m.get("content").is_some_and(Value::is_array)
                    })
                })
    }

    /// Reads message number `entry`.
    fn read(m: &Value, entry: usize, out: &mut impl Turns) {
        TURNS.read(m, entry, out);
    }
}

const TURNS: ItemTurns = ItemTurns {
    message_at: "",
    role_at: "/role",
    call: ("tool_use", "input"),
    write_tools: &["editor", "apply_patch"],
    prompt: user_input,
};

/// What the user typed, of a user `text` block: inside Cline's `<user_input mode="...">`
/// wrapper when it is there (mode notices and attached files are around it), else the block.
fn user_input(text: &str) -> Option<&str> {
    let Some(start) = text.find("<user_input") else {
        return Some(text);
    };
    let rest = &text[start..];
    let open = rest.find('>')? + 1;
    let close = rest.find("</user_input>").unwrap_or(rest.len());
    rest.get(open..close)
}

/// A Cline assistant message's `metrics` (`inputTokens`, `outputTokens`, `cacheReadTokens`,
/// `cacheWriteTokens`): the last assistant message of each turn carries them.
fn tokens(m: &Value) -> Option<TokenUsage> {
    let metrics = m
        .get("metrics")
        .filter(|_| str_at(m, "role") == "assistant")?;
    Some(TokenUsage {
        input_tokens: int(metrics, "/inputTokens"),
        cache_creation_tokens: int(metrics, "/cacheWriteTokens"),
        cache_read_tokens: int(metrics, "/cacheReadTokens"),
        output_tokens: int(metrics, "/outputTokens"),
        ..TokenUsage::default()
    })
}

#[cfg(test)]
mod tests {
    use crate::agents::{extract, token_usage, TranscriptFormat};

    /// A session as Cline's SDK writes it (its `messages-contract-v1`): the prompt wrapped,
    /// an `editor` call, its result, and the turn's metrics on the last assistant message.
    const CLINE: &str = r##"{
  "version": 1,
  "updated_at": "2026-04-22T17:42:10.123Z",
  "agent": "lead",
  "sessionId": "1784094053271_p8pzo",
  "messages": [
    {"id": "u1", "role": "user", "content": [{"type": "text", "text": "<mode_notice>The user switched from plan mode to act mode before sending this message.</mode_notice><user_input mode=\"act\">add the notes</user_input>"}]},
    {"id": "a1", "role": "assistant", "ts": 1745343730123, "modelInfo": {"id": "claude-sonnet-4-6", "provider": "anthropic"},
     "content": [{"type": "thinking", "thinking": "write it"}, {"type": "tool_use", "id": "t1", "name": "editor", "input": {"path": "/w/notes.md", "new_text": "# Notes\nkept\n"}}]},
    {"id": "u2", "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": false}]},
    {"id": "a2", "role": "assistant", "ts": 1745343731456, "modelInfo": {"id": "claude-sonnet-4-6", "provider": "anthropic"},
     "metrics": {"inputTokens": 21, "outputTokens": 8, "cacheReadTokens": 3, "cacheWriteTokens": 1, "cost": 0.13},
     "content": [{"type": "text", "text": "Done."}]}
  ]
}"##;

    #[test]
    fn reads_a_cline_messages_file() {
        let w = extract(CLINE.as_bytes());
        assert_eq!(w.format, TranscriptFormat::Cline);
        assert_eq!(w.prompts.len(), 1);
        assert_eq!(w.prompts[0].text, "add the notes");
        assert_eq!(w.files(), ["/w/notes.md"]);
        assert_eq!(w.writes[0].lines, ["# Notes", "kept"]);
        let usage = token_usage(CLINE.as_bytes(), 0).unwrap();
        assert_eq!((usage.input_tokens, usage.output_tokens), (21, 8));
        assert_eq!(
            (usage.cache_read_tokens, usage.cache_creation_tokens),
            (3, 1)
        );
        assert_eq!(super::user_input("plain"), Some("plain"));
    }
}
