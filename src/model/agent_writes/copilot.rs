//! GitHub Copilot CLI: `events.jsonl`, one event a line (`type` such as `session.start`,
//! `user.message`, `assistant.message`, `tool.execution_start`, with its `data`). Prompts are
//! `user.message` events (`data.content`, what the user typed, not the `transformedContent`
//! the harness sends); writes are `tool.execution_start` events whose `data.toolName` is
//! `create` (`arguments.file_text`), `edit` or `str_replace` (`arguments.new_str`), or
//! `str_replace_editor`, `write` or `apply_patch`, the file in `arguments.path`.

use serde_json::Value;

use super::{str_at, text_of, Turns};

const WRITE_TOOLS: &[&str] = &[
    "create",
    "edit",
    "str_replace",
    "str_replace_editor",
    "write",
    "apply_patch",
];

/// Reads one event (on transcript line `line`). The tool requests of an `assistant.message`
/// are the calls the `tool.execution_start` events report; `session.*`, `hook.*` and the
/// other `assistant.*` events hold nothing of the conversation.
pub(super) fn entry(v: &Value, line: usize, out: &mut impl Turns) {
    let ts = str_at(v, "timestamp");
    let data = v.get("data").unwrap_or(&Value::Null);
    match str_at(v, "type") {
        "user.message" => out.prompt(str_at(data, "content").to_owned(), ts, line),
        "assistant.message" => match str_at(data, "content") {
            "" => out.known(),
            text => out.reply(text),
        },
        "assistant.reasoning" => out.thinking(str_at(data, "content")),
        "tool.execution_start" => {
            let args = data.get("arguments").unwrap_or(&Value::Null);
            out.tool_call(WRITE_TOOLS, str_at(data, "toolName"), args, ts, line);
        }
        "tool.execution_complete" => {
            let result = data.get("result").unwrap_or(&Value::Null);
            out.output(&match result.get("content") {
                Some(content) => text_of(content),
                None => text_of(result),
            });
        }
        kind if ["session.", "hook.", "assistant."]
            .iter()
            .any(|p| kind.starts_with(p)) =>
        {
            out.known()
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::{extract, TranscriptFormat};

    #[test]
    fn reads_a_copilot_events_file() {
        let copilot = concat!(
            r#"{"type":"session.start","data":{"sessionId":"s","context":{"cwd":"/w"}},"id":"1","timestamp":"2026-03-30T18:55:53.515Z"}"#,
            "\n",
            r#"{"type":"user.message","data":{"content":"create a readme for copilot","transformedContent":"<current_datetime>x</current_datetime>\n\ncreate a readme for copilot"},"id":"2","timestamp":"2026-03-30T18:56:08.410Z"}"#,
            "\n",
            r#"{"type":"assistant.message","data":{"toolRequests":[{"toolCallId":"t","name":"create","arguments":{"path":"/w/README.md","file_text":"For testing Copilot CLI.\n"}}]},"id":"3","timestamp":"2026-03-30T18:56:12.000Z"}"#,
            "\n",
            r#"{"type":"tool.execution_start","data":{"toolCallId":"t","toolName":"create","arguments":{"path":"/w/README.md","file_text":"For testing Copilot CLI.\n"}},"id":"4","timestamp":"2026-03-30T18:56:12.814Z"}"#,
            "\n",
        );
        let w = extract(copilot.as_bytes());
        assert_eq!(w.format, TranscriptFormat::CopilotCli);
        assert_eq!(w.prompts[0].text, "create a readme for copilot");
        assert_eq!(
            w.writes.len(),
            1,
            "the request and its execution are one write"
        );
        assert_eq!(w.writes[0].file, "/w/README.md");
        assert_eq!(w.writes[0].lines, ["For testing Copilot CLI."]);
        assert_eq!(w.writes[0].entry, 4);
    }
}
