//! Kiro: one JSON document (`conversation_id`, `history[]`), each turn a `user` and an
//! `assistant`. Prompts are `user.content.Prompt.prompt`; writes are the
//! `assistant.ToolUse.tool_uses[]` named `fs_write`, the file in `args.path` and the text in
//! `args.file_text` or `args.new_str` when the transcript kept it (often only the path is
//! kept: the file is listed as written, no line attributed). Kiro records no times.

use serde_json::Value;

use super::{AgentWrites, TranscriptFormat};

const WRITE_TOOLS: &[&str] = &["fs_write"];

/// Whether `doc` is a Kiro conversation.
pub(super) fn is(doc: &Value) -> bool {
    doc.get("history").is_some_and(Value::is_array)
}

/// Reads the conversation; an entry is a turn's number (from 1).
pub(super) fn read(doc: &Value) -> AgentWrites {
    let mut out = AgentWrites::new(TranscriptFormat::Kiro);
    let history = doc.get("history").and_then(Value::as_array);
    for (i, turn) in history.into_iter().flatten().enumerate() {
        if let Some(p) = turn
            .pointer("/user/content/Prompt/prompt")
            .and_then(Value::as_str)
        {
            out.prompt(p.to_owned(), "", i + 1);
        }
        let uses = turn
            .pointer("/assistant/ToolUse/tool_uses")
            .and_then(Value::as_array);
        for u in uses.into_iter().flatten() {
            let name = u.get("name").and_then(Value::as_str).unwrap_or("");
            let args = u.get("args").unwrap_or(&Value::Null);
            out.tool_call(WRITE_TOOLS, name, args, "", i + 1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{extract, TranscriptFormat};

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
