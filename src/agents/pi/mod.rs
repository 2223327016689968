//! Pi: a `session` line, then `message` lines (`message.role` `user`, `assistant` or
//! `toolResult`, `message.content[]`). Prompts are the `text` items of user messages; writes
//! are assistant `toolCall` items named `write` (`arguments.content`) or `edit`
//! (`arguments.newText`, or each of `arguments.edits[]`), the file in `arguments.path`.

mod hooks;
pub(crate) use hooks::HOOKS;

use serde_json::Value;

use super::id::TranscriptFormat;
use super::turns::items::{pi_or_droid, ItemTurns};
use super::turns::json::{int, str_at};
use super::turns::Turns;
use super::{Lines, TranscriptReader, Usage};
use crate::model::documents::TokenUsage;

/// Pi's transcript reader.
pub(crate) struct Pi;

impl TranscriptReader for Pi {
    const FORMAT: TranscriptFormat = TranscriptFormat::Pi;
    const USAGE: Usage = Usage::Lines(usage);
    type Entry<'e> = &'e Value;

    /// Its session header, or a `message` line that is Pi's rather than Droid's.
    fn claims(v: &Value) -> bool {
        match str_at(v, "type") {
            "session" => true,
            "message" => pi_or_droid(v) == Some(TranscriptFormat::Pi),
            _ => false,
        }
    }

    /// Reads one entry (on transcript line `line`); the `session` header and the `model_change`
    /// and `thinking_level_change` entries hold nothing of the conversation.
    fn read(v: &Value, line: usize, out: &mut impl Turns) {
        match str_at(v, "type") {
            "session" | "model_change" | "thinking_level_change" => out.known(),
            _ => TURNS.read(v, line, out),
        }
    }
}

const TURNS: ItemTurns = ItemTurns {
    message_at: "/message",
    role_at: "/message/role",
    call: ("toolCall", "arguments"),
    write_tools: &["write", "edit"],
    prompt: |text| Some(text),
};

/// The usage of the lines from the one of index `start` on: the `usage` of each assistant
/// message (`input`, `output`, `cacheRead`, `cacheWrite`).
fn usage(lines: Lines<'_, '_>, start: usize) -> Option<TokenUsage> {
    let mut sum = TokenUsage::default();
    for (_, raw) in lines.filter(|(i, _)| *i >= start) {
        let Ok(v) = serde_json::from_slice::<Value>(raw) else {
            continue;
        };
        let message = v
            .get("message")
            .filter(|m| str_at(m, "role") == "assistant");
        if let Some(u) = message.and_then(|m| m.get("usage")) {
            sum.add(&TokenUsage {
                input_tokens: int(u, "/input"),
                cache_creation_tokens: int(u, "/cacheWrite"),
                cache_read_tokens: int(u, "/cacheRead"),
                output_tokens: int(u, "/output"),
                ..TokenUsage::default()
            });
            sum.api_call_count += 1;
        }
    }
    Some(sum)
}

#[cfg(test)]
mod tests {
    use crate::agents::{extract, TranscriptFormat};

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
