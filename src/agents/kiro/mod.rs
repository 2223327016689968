//! Kiro: one JSON document (`conversation_id`, `history[]`), each turn a `user` and an
//! `assistant`. Prompts are `user.content.Prompt.prompt`; writes are the
//! `assistant.ToolUse.tool_uses[]` named `fs_write`, the file in `args.path` and the text in
//! `args.file_text` or `args.new_str` when the transcript kept it (often only the path is
//! kept: the file is listed as written, no line attributed). Kiro records no times.

use serde_json::Value;

use super::id::TranscriptFormat;
use super::turns::json::{str_at, text_of};
use super::turns::{Turns, Unit};
use super::TranscriptReader;

/// Kiro's transcript reader.
pub(crate) struct Kiro;

impl Kiro {
    /// Where the document's entries are, and what each is.
    pub(crate) const ENTRIES: (&'static str, Unit) = ("history", Unit::Turn);
}

impl TranscriptReader for Kiro {
    const FORMAT: TranscriptFormat = TranscriptFormat::Kiro;
    type Entry<'e> = &'e Value;

    /// Whether `doc` is a Kiro conversation.
    fn claims(doc: &Value) -> bool {
        doc.get("history").is_some_and(Value::is_array)
    }

    /// Reads turn number `entry`: the user's prompt or tool results, the assistant's response or
    /// tool uses.
    fn read(turn: &Value, entry: usize, out: &mut impl Turns) {
        if let Some(p) = turn
            .pointer("/user/content/Prompt/prompt")
            .and_then(Value::as_str)
        {
            out.prompt(p.to_owned(), "", entry);
        }
        let results = turn
            .pointer("/user/content/ToolUseResults/tool_use_results")
            .and_then(Value::as_array);
        for r in results.into_iter().flatten() {
            out.output(&text_of(r.get("content").unwrap_or(&Value::Null)));
        }
        let assistant = turn.get("assistant").unwrap_or(&Value::Null);
        if let Some(text) = assistant
            .pointer("/Response/content")
            .or(assistant.pointer("/ToolUse/content"))
            .and_then(Value::as_str)
        {
            out.reply(text);
        }
        let uses = assistant
            .pointer("/ToolUse/tool_uses")
            .and_then(Value::as_array);
        for u in uses.into_iter().flatten() {
            let args = u.get("args").unwrap_or(&Value::Null);
            out.tool_call(WRITE_TOOLS, str_at(u, "name"), args, "", entry);
        }
    }
}

const WRITE_TOOLS: &[&str] = &["fs_write"];

#[cfg(test)]
mod tests {
    use crate::agents::{extract, TranscriptFormat};

    #[test]
    fn reads_a_kiro_conversation() {
        let kiro = r##"{"conversation_id":"","history":[{"user":{"content":{"Prompt":{"prompt":"add a comment"}}},"assistant":{"Response":{"content":"ok"}}},{"user":{"content":null},"assistant":{"ToolUse":{"tool_uses":[{"id":"","name":"fs_write","args":{"path":"kiro/README.md"}},{"name":"fs_write","args":{"command":"create","path":"kiro/NOTES.md","file_text":"# Notes\nkept\n"}}]}}}]}"##;
        let w = extract(kiro.as_bytes());
        assert_eq!(w.format, TranscriptFormat::Kiro);
        assert_eq!(w.prompts[0].text, "add a comment");
        assert_eq!(w.files(), ["kiro/README.md", "kiro/NOTES.md"]);
        assert!(w.writes[0].lines.is_empty(), "only the path was kept");
        assert_eq!(w.writes[1].lines, ["# Notes", "kept"]);
        assert_eq!(w.writes[1].prompt, Some(0));
    }
}
