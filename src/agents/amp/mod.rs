//! Amp: the JSON lines our plugin writes at the end of each turn, one thread message a line as
//! Amp's plugin API gives them (`role` `user`, `assistant` or `info`, `id`, `content[]` of
//! `text`, `thinking`, `tool_use` and `tool_result` blocks). Prompts are the `text` blocks of
//! user messages; writes are the assistant's `tool_use` blocks named `create_file` or
//! `write_file` (`input.content`), `edit_file` (`input.new_str`) or `apply_patch`, the file in
//! `input.path`. The plugin API's messages carry no token usage.

mod hooks;
pub(crate) use hooks::HOOKS;

use serde_json::Value;

use super::id::TranscriptFormat;
use super::turns::items::ItemTurns;
use super::turns::json::str_at;
use super::turns::Turns;
use super::TranscriptReader;

/// Amp's transcript reader.
pub(crate) struct Amp;

impl TranscriptReader for Amp {
    const FORMAT: TranscriptFormat = TranscriptFormat::Amp;
    type Entry<'e> = &'e Value;

    /// A thread message: a role, an ID and content blocks, and nothing wrapping them.
    fn claims(v: &Value) -> bool {
        matches!(str_at(v, "role"), "user" | "assistant" | "info")
            && v.get("id").is_some()
            && v.get("content").is_some_and(Value::is_array)
            && v.get("type").is_none()
            && v.get("message").is_none()
    }

    /// Reads one message (on transcript line `line`); `info` messages are Amp's own notes.
    fn read(v: &Value, line: usize, out: &mut impl Turns) {
        match str_at(v, "role") {
            "info" => out.known(),
            _ => TURNS.read(v, line, out),
        }
    }
}

const TURNS: ItemTurns = ItemTurns {
    message_at: "",
    role_at: "/role",
    call: ("tool_use", "input"),
    write_tools: &["create_file", "write_file", "edit_file", "apply_patch"],
    prompt: |text| Some(text),
};

#[cfg(test)]
mod tests {
    use crate::agents::{extract, TranscriptFormat};

    #[test]
    fn reads_the_thread_messages_of_amps_plugin_api() {
        let amp = concat!(
            r#"{"role":"user","id":0,"content":[{"type":"text","text":"add the notes"}]}"#,
            "\n",
            r##"{"role":"assistant","id":1,"content":[{"type":"thinking","thinking":"x"},{"type":"tool_use","id":"toolu_1","name":"create_file","input":{"path":"/w/notes.md","content":"# Notes\nkept\n"}}]}"##,
            "\n",
            r#"{"role":"user","id":2,"content":[{"type":"tool_result","toolUseID":"toolu_1","status":"done","output":"ok"}]}"#,
            "\n",
            r#"{"role":"assistant","id":3,"content":[{"type":"tool_use","id":"toolu_2","name":"edit_file","input":{"path":"/w/a.rs","old_str":"x","new_str":"let y = 2;"}}]}"#,
            "\n",
            r#"{"role":"info","id":4,"content":[{"type":"text","text":"Thread compacted"}]}"#,
            "\n",
        );
        let w = extract(amp.as_bytes());
        assert_eq!(w.format, TranscriptFormat::Amp);
        assert_eq!(w.prompts.len(), 1);
        assert_eq!(w.prompts[0].text, "add the notes");
        assert_eq!(w.files(), ["/w/notes.md", "/w/a.rs"]);
        assert_eq!(w.writes[0].lines, ["# Notes", "kept"]);
        assert_eq!(w.writes[1].lines, ["let y = 2;"]);
    }
}
