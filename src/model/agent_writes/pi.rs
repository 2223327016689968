//! Pi: a `session` line, then `message` lines (`message.role` `user`, `assistant` or
//! `toolResult`, `message.content[]`). Prompts are the `text` items of user messages; writes
//! are assistant `toolCall` items named `write` (`arguments.content`) or `edit`
//! (`arguments.newText`, or each of `arguments.edits[]`), the file in `arguments.path`.

use serde_json::Value;

use super::{str_at, ItemTurns, TranscriptFormat, Turns};

const TURNS: ItemTurns = ItemTurns {
    role_at: "/message/role",
    call: ("toolCall", "arguments"),
    write_tools: &["write", "edit"],
    prompt: |text| Some(text),
};

/// Which of Pi and Droid (both wrap turns in `message` lines) a `message` line without its
/// session header is in, when it says: Pi's have `toolCall` items and `toolResult` messages,
/// Droid's Claude-like `tool_use` and `tool_result` items.
pub(super) fn or_droid(v: &Value) -> Option<TranscriptFormat> {
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

/// Reads one entry (on transcript line `line`); the `session` header and the `model_change`
/// and `thinking_level_change` entries hold nothing of the conversation.
pub(super) fn entry(v: &Value, line: usize, out: &mut impl Turns) {
    match str_at(v, "type") {
        "session" | "model_change" | "thinking_level_change" => out.known(),
        _ => TURNS.read(v, line, out),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{extract, TranscriptFormat};

    #[test]
    fn reads_a_pi_session() {
        let pi = concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-04-24T20:33:40.331Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"1","parentId":null,"timestamp":"2026-04-24T20:34:05.190Z","message":{"role":"user","content":[{"type":"text","text":"add a readme for pi"}]}}"#,
            "\n",
            r##"{"type":"message","id":"2","parentId":"1","timestamp":"2026-04-24T20:34:08.310Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"x"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"ls"}},{"type":"toolCall","id":"d","name":"write","arguments":{"path":"pi/README.md","content":"# pi\n\nTests for pi.\n"}}]}}"##,
            "\n",
            r#"{"type":"message","id":"3","parentId":"2","timestamp":"2026-04-24T20:34:09.000Z","message":{"role":"toolResult","toolName":"write","content":[{"type":"text","text":"ok"}]}}"#,
            "\n",
        );
        let w = extract(pi.as_bytes());
        assert_eq!(w.format, TranscriptFormat::Pi);
        assert_eq!(w.prompts[0].text, "add a readme for pi");
        assert_eq!(w.writes.len(), 1);
        assert_eq!(w.writes[0].file, "pi/README.md");
        assert_eq!(w.writes[0].lines, ["# pi", "", "Tests for pi."]);
    }
}
