//! Factory AI Droid: a `session_start` line, then each turn a `message` line wrapping a
//! Claude-like message (`message.role`, `message.content[]`). Prompts are the `text` items of
//! user messages that the harness did not inject (a `<system-reminder>` item comes first) and
//! that were not shown to the user only (`visibility`); writes are assistant `tool_use` items
//! named `Create`, `Write` (`input.content`), `Edit` (`input.new_string`), `MultiEdit` or
//! `NotebookEdit`, the file in `input.file_path`.

mod history;
mod hooks;
pub(crate) use history::HISTORY;
pub(crate) use hooks::HOOKS;

use serde_json::Value;

use super::id::TranscriptFormat;
use super::turns::items::{pi_or_droid, ItemTurns};
use super::turns::json::str_at;
use super::turns::Turns;
use super::TranscriptReader;

/// Factory AI Droid's transcript reader.
pub(crate) struct Droid;

impl TranscriptReader for Droid {
    const FORMAT: TranscriptFormat = TranscriptFormat::Droid;
    type Entry<'e> = &'e Value;

    /// Its session header, or a `message` line that is Droid's rather than Pi's.
    fn claims(v: &Value) -> bool {
        match str_at(v, "type") {
            "session_start" => true,
            "message" => pi_or_droid(v) == Some(TranscriptFormat::Droid),
            _ => false,
        }
    }

    /// Reads one entry (on transcript line `line`); the `session_start` header and what was shown
    /// to the user only hold nothing of the conversation.
    fn read(v: &Value, line: usize, out: &mut impl Turns) {
        if str_at(v, "visibility") == "user_only" || str_at(v, "type") == "session_start" {
            out.known();
        } else {
            TURNS.read(v, line, out);
        }
    }
}

const TURNS: ItemTurns = ItemTurns {
    message_at: "/message",
    role_at: "/message/role",
    call: ("tool_use", "input"),
    write_tools: &["Create", "Write", "Edit", "MultiEdit", "NotebookEdit"],
    prompt: |text| (!text.trim_start().starts_with('<')).then_some(text),
};

#[cfg(test)]
mod tests {
    use crate::agents::{extract, TranscriptFormat};

    #[test]
    fn reads_a_droid_session() {
        let droid = concat!(
            r#"{"type":"session_start","id":"s","title":"t","version":2,"cwd":"/w/droid"}"#,
            "\n",
            r#"{"type":"message","id":"1","timestamp":"2026-03-30T18:50:09.639Z","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nctx\n</system-reminder>"},{"type":"text","text":"explain this is for testing droid"}]}}"#,
            "\n",
            r#"{"type":"message","id":"2","timestamp":"2026-03-30T18:50:10.011Z","message":{"role":"user","content":[{"type":"text","text":"Token limit reached."}],"visibility":"user_only"},"visibility":"user_only"}"#,
            "\n",
            r#"{"type":"message","id":"3","timestamp":"2026-03-30T18:50:12.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Create","input":{"file_path":"/w/droid/TESTING.md","content":"For testing Factory Droid.\n"}}]}}"#,
            "\n",
        );
        let w = extract(droid.as_bytes());
        assert_eq!(w.format, TranscriptFormat::Droid);
        let prompts: Vec<&str> = w.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["explain this is for testing droid"]);
        assert_eq!(w.writes[0].tool, "Create");
        assert_eq!(w.writes[0].lines, ["For testing Factory Droid."]);
    }
}
