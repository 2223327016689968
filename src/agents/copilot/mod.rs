//! GitHub Copilot CLI: `events.jsonl`, one event a line (`type` such as `session.start`,
//! `user.message`, `assistant.message`, `tool.execution_start`, with its `data`). Prompts are
//! `user.message` events (`data.content`, what the user typed, not the `transformedContent`
//! the harness sends); writes are `tool.execution_start` events whose `data.toolName` is
//! `create` (`arguments.file_text`), `edit` or `str_replace` (`arguments.new_str`), or
//! `str_replace_editor`, `write` or `apply_patch`, the file in `arguments.path`.

mod history;
mod hooks;
pub(crate) use history::HISTORY;
pub(crate) use hooks::HOOKS;

use serde_json::Value;

use super::id::TranscriptFormat;
use super::turns::json::{int, str_at, text_of};
use super::turns::Turns;
use super::{Lines, TranscriptReader, Usage};
use crate::model::documents::TokenUsage;

/// GitHub Copilot CLI's transcript reader.
pub(crate) struct CopilotCli;

impl TranscriptReader for CopilotCli {
    const FORMAT: TranscriptFormat = TranscriptFormat::CopilotCli;
    const USAGE: Usage = Usage::Lines(usage);
    type Entry<'e> = &'e Value;

    /// An event: a dotted `type` with its `data`.
    fn claims(v: &Value) -> bool {
        str_at(v, "type").contains('.') && v.get("data").is_some_and(Value::is_object)
    }

    /// Reads one event (on transcript line `line`). The tool requests of an `assistant.message`
    /// are the calls the `tool.execution_start` events report; `session.*`, `hook.*` and the
    /// other `assistant.*` events hold nothing of the conversation.
    fn read(v: &Value, line: usize, out: &mut impl Turns) {
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
}

const WRITE_TOOLS: &[&str] = &[
    "create",
    "edit",
    "str_replace",
    "str_replace_editor",
    "write",
    "apply_patch",
];

/// The usage of the events from the line of index `start` on: the `usage` of each
/// `session.usage_record` (one per model call, as 1.0.102 records them), else the
/// `modelMetrics` of `session.shutdown` events (totals per model), else the `outputTokens` of
/// each `assistant.message`.
fn usage(lines: Lines<'_, '_>, start: usize) -> Option<TokenUsage> {
    let mut records = TokenUsage::default();
    let (mut messages, mut shutdown) = (TokenUsage::default(), TokenUsage::default());
    let add = |sum: &mut TokenUsage, usage: &Value, calls: i64| {
        sum.input_tokens += int(usage, "/inputTokens");
        sum.cache_creation_tokens += int(usage, "/cacheWriteTokens");
        sum.cache_read_tokens += int(usage, "/cacheReadTokens");
        sum.output_tokens += int(usage, "/outputTokens");
        sum.api_call_count += calls;
    };
    for (_, raw) in lines.filter(|(i, _)| *i >= start) {
        let Ok(v) = serde_json::from_slice::<Value>(raw) else {
            continue;
        };
        match str_at(&v, "type") {
            "session.usage_record" => {
                if let Some(usage) = v.pointer("/data/usage") {
                    add(&mut records, usage, 1);
                }
            }
            "assistant.message" => {
                if let Some(out) = v.pointer("/data/outputTokens").and_then(Value::as_i64) {
                    messages.output_tokens += out;
                    messages.api_call_count += 1;
                }
            }
            "session.shutdown" => {
                let models = v.pointer("/data/modelMetrics").and_then(Value::as_object);
                for m in models.into_iter().flat_map(|m| m.values()) {
                    let usage = m.get("usage").unwrap_or(&Value::Null);
                    add(&mut shutdown, usage, int(m, "/requests/count"));
                }
            }
            _ => {}
        }
    }
    // The records count each call once, in the window; a shutdown's totals include every
    // message's output.
    Some(
        [records, shutdown]
            .into_iter()
            .find(|u| u.api_call_count > 0)
            .unwrap_or(messages),
    )
}

#[cfg(test)]
mod tests {
    use crate::agents::{extract, TranscriptFormat};

    /// 1.0.102 records each model call's usage as it comes, so a commit made during a turn (the
    /// agent's own) counts the calls before it, and the next one the rest.
    #[test]
    fn each_model_call_counts_once_from_its_usage_record() {
        let record = |out: u32| {
            format!(
                r#"{{"type":"session.usage_record","data":{{"usage":{{"model":"m","inputTokens":10,"outputTokens":{out},"cacheReadTokens":2,"cacheWriteTokens":0}}}}}}"#
            )
        };
        let lines = [
            r#"{"type":"user.message","data":{"content":"hi"}}"#.to_owned(),
            record(120),
            r#"{"type":"assistant.message","data":{"content":""}}"#.to_owned(),
            record(40),
            r#"{"type":"assistant.message","data":{"content":"Done."}}"#.to_owned(),
            r#"{"type":"session.shutdown","data":{"modelMetrics":{"m":{"requests":{"count":2},"usage":{"inputTokens":20,"outputTokens":160}}}}}"#.to_owned(),
        ]
        .join("\n");
        let usage = crate::agents::token_usage(lines.as_bytes(), 0).unwrap();
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                usage.api_call_count
            ),
            (20, 160, 4, 2)
        );
        let usage = crate::agents::token_usage(lines.as_bytes(), 3).unwrap();
        assert_eq!((usage.output_tokens, usage.api_call_count), (40, 1));
    }

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
