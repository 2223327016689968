//! Cursor: JSON lines `{"role", "message": {"content": [...]}}` with no `type`. Prompts are the
//! `text` items of user lines, the text inside `<user_query>` when Cursor wrapped it so;
//! writes are assistant `tool_use` items named `Write` (`input.contents`), `StrReplace`,
//! `Edit`, `MultiEdit` or `search_replace`, the file in `input.path` (or `file_path`). Most
//! Cursor transcripts keep only text: their sessions show prompts and no write.

mod history;
mod hooks;
pub(crate) use history::HISTORY;
pub(crate) use hooks::HOOKS;

use serde_json::Value;

use super::id::TranscriptFormat;
use super::turns::items::ItemTurns;
use super::turns::json::str_at;
use super::turns::Turns;
use super::TranscriptReader;

/// Cursor's transcript reader.
pub(crate) struct Cursor;

impl TranscriptReader for Cursor {
    const FORMAT: TranscriptFormat = TranscriptFormat::Cursor;
    type Entry<'e> = &'e Value;

    /// A line with no `type`, a `role` and a `message`.
    fn claims(v: &Value) -> bool {
        str_at(v, "type").is_empty()
            && v.get("role").is_some_and(Value::is_string)
            && v.get("message").is_some_and(Value::is_object)
    }

    /// Reads one entry (on transcript line `line`).
    fn read(v: &Value, line: usize, out: &mut impl Turns) {
        TURNS.read(v, line, out);
    }
}

const TURNS: ItemTurns = ItemTurns {
    message_at: "/message",
    role_at: "/role",
    call: ("tool_use", "input"),
    write_tools: &["Write", "StrReplace", "Edit", "MultiEdit", "search_replace"],
    prompt: |text| Some(user_query(text)),
};

/// The user's query inside the `<user_query>` wrapper Cursor adds, or the whole text.
fn user_query(text: &str) -> &str {
    let inner = text
        .split_once("<user_query>")
        .and_then(|(_, rest)| rest.split_once("</user_query>"));
    inner.map_or(text, |(q, _)| q.trim())
}

#[cfg(test)]
mod tests {
    use crate::agents::{extract, TranscriptFormat};

    #[test]
    fn reads_a_cursor_transcript() {
        let cursor = concat!(
            r#"{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nadd a note for testing\n</user_query>"}]}}"#,
            "\n",
            r##"{"role":"assistant","message":{"content":[{"type":"text","text":"Creating it."},{"type":"tool_use","name":"Write","input":{"path":"/w/proj/notes.md","contents":"# Notes\n\nFor testing.\n"}}]}}"##,
            "\n",
        );
        let w = extract(cursor.as_bytes());
        assert_eq!(w.format, TranscriptFormat::Cursor);
        assert_eq!(w.prompts[0].text, "add a note for testing");
        assert_eq!(w.writes[0].file, "/w/proj/notes.md");
        assert_eq!(w.writes[0].lines, ["# Notes", "", "For testing."]);
        assert_eq!(w.writes[0].entry, 2);
    }
}
