//! OpenCode: one JSON document, the session export (`info`, `messages[]`, each message an
//! `info` with its `role` and `time.created` in milliseconds, and `parts[]`); in its first
//! format (the reference's 0.4.x), JSON lines of those messages, one per line. Prompts are the
//! `text` parts of user messages (not `synthetic` ones); writes are the `tool` parts of
//! assistant messages named `write` (`state.input.content`), `edit` (`state.input.newString`),
//! `multiedit` or `apply_patch` (`state.input.patchText`), the file in `state.input.filePath`;
//! the first format's `file_write` (`state.input` a JSON string of `path` and `content`, the
//! file also in the part's `filePath`).

mod history;
mod hooks;
pub(crate) use history::HISTORY;
pub(crate) use hooks::HOOKS;

use serde_json::Value;

use super::id::TranscriptFormat;
use super::turns::json::{int, str_at, text_of};
use super::turns::{Turns, Unit};
use super::{TranscriptReader, Usage};
use crate::model::documents::TokenUsage;

/// OpenCode's transcript reader.
pub(crate) struct OpenCode;

impl OpenCode {
    /// Where the document's entries are, and what each is.
    pub(crate) const ENTRIES: (&'static str, Unit) = ("messages", Unit::Message);

    /// Whether the JSONL line `v` is a message of OpenCode's first format (the reference's
    /// 0.4.x integration wrote one `{"info": {...}, "parts": [...]}` message per line, what is
    /// one entry of the export's `messages[]` now).
    pub(crate) fn claims_line(v: &Value) -> bool {
        v.get("info")
            .is_some_and(|info| info.get("role").is_some_and(Value::is_string))
            && v.get("parts").is_some_and(Value::is_array)
    }
}

impl TranscriptReader for OpenCode {
    const FORMAT: TranscriptFormat = TranscriptFormat::OpenCode;
    const USAGE: Usage = Usage::Messages(tokens);
    type Entry<'e> = &'e Value;

    /// Whether `doc` is an OpenCode session export.
    fn claims(doc: &Value) -> bool {
        doc.get("info").is_some_and(Value::is_object)
            && doc
                .get("messages")
                .and_then(Value::as_array)
                .is_some_and(|m| m.iter().all(|m| m.get("parts").is_some()))
    }

    /// Reads message number `entry` (of the export's `messages[]`, or a line of the first
    /// format's JSONL).
    fn read(m: &Value, entry: usize, out: &mut impl Turns) {
        let info = m.get("info").unwrap_or(&Value::Null);
        let ts = millis(info.pointer("/time/created"));
        let parts = m.get("parts").and_then(Value::as_array);
        let parts = parts.into_iter().flatten();
        match str_at(info, "role") {
            "user" => {
                let texts: Vec<&str> = parts
                    .filter(|p| str_at(p, "type") == "text")
                    .filter(|p| p.get("synthetic") != Some(&Value::Bool(true)))
                    .map(|p| str_at(p, "text"))
                    .collect();
                out.prompt(texts.join("\n"), &ts, entry);
            }
            "assistant" => {
                for p in parts {
                    match str_at(p, "type") {
                        "text" => out.reply(str_at(p, "text")),
                        "reasoning" => out.thinking(str_at(p, "text")),
                        "tool" => {
                            let state = p.get("state").unwrap_or(&Value::Null);
                            let when = match millis(state.pointer("/time/start")) {
                                t if t.is_empty() => ts.clone(),
                                t => t,
                            };
                            let input = tool_input(p, state);
                            out.tool_call(WRITE_TOOLS, str_at(p, "tool"), &input, &when, entry);
                            if let Some(output) = state.get("output").or(state.get("error")) {
                                out.output(&text_of(output));
                            }
                        }
                        kind if BOOKKEEPING.contains(&kind) => out.known(),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

const WRITE_TOOLS: &[&str] = &[
    "write",
    "edit",
    "multiedit",
    "apply_patch",
    "patch",
    "file_write",
];

/// The arguments of the tool part `part` whose state is `state`: `state.input`. The first
/// format's `file_write` keeps them as a JSON string (`{"path", "content"}`), its file in the
/// part's own `filePath`: decoded, the file given as `filePath` when the arguments lack one.
fn tool_input(part: &Value, state: &Value) -> Value {
    let input = state.get("input").cloned().unwrap_or(Value::Null);
    let mut input = match input {
        Value::String(text) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        other => other,
    };
    if let (Some(args), Some(file)) = (input.as_object_mut(), part.get("filePath")) {
        if !args.contains_key("path") && !args.contains_key("filePath") {
            args.insert("filePath".to_owned(), file.clone());
        }
    }
    input
}

/// A time in milliseconds since the epoch, as RFC 3339 ("" when there is none).
fn millis(v: Option<&Value>) -> String {
    v.and_then(Value::as_i64)
        .and_then(|ms| time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000).ok())
        .map(crate::base::time::rfc3339_nano_utc)
        .unwrap_or_default()
}

/// Parts that hold nothing of the conversation: step markers, snapshots, the patch summary.
const BOOKKEEPING: &[&str] = &[
    "step-start",
    "step-finish",
    "snapshot",
    "patch",
    "agent",
    "compaction",
];

/// Whether `m` is an assistant message OpenCode has not completed yet (no
/// `info.time.completed`): its step's tokens are not recorded yet.
pub(crate) fn in_progress(m: &Value) -> bool {
    let info = m.get("info").unwrap_or(&Value::Null);
    str_at(info, "role") == "assistant" && info.pointer("/time/completed").is_none()
}

/// An OpenCode assistant message's `info.tokens` (`input`, `output`, `cache.read/write`).
fn tokens(m: &Value) -> Option<TokenUsage> {
    let info = m.get("info").filter(|i| str_at(i, "role") == "assistant")?;
    let t = info.get("tokens")?;
    Some(TokenUsage {
        input_tokens: int(t, "/input"),
        cache_creation_tokens: int(t, "/cache/write"),
        cache_read_tokens: int(t, "/cache/read"),
        output_tokens: int(t, "/output"),
        ..TokenUsage::default()
    })
}

#[cfg(test)]
mod tests {
    use crate::agents::{extract, TranscriptFormat};

    const OPENCODE: &str = r#"{
  "info": { "id": "ses_1", "directory": "/w/nimbus" },
  "messages": [
    {
      "info": { "role": "user", "time": { "created": 1772924668468 } },
      "parts": [
        { "type": "text", "text": "add the workspace check" },
        { "type": "text", "text": "context", "synthetic": true }
      ]
    },
    {
      "info": { "role": "assistant", "time": { "created": 1772924668472 } },
      "parts": [
        { "type": "tool", "tool": "read", "state": { "input": { "filePath": "/w/nimbus/a.ts" } } },
        {
          "type": "tool",
          "tool": "apply_patch",
          "state": {
            "input": { "patchText": "*** Begin Patch\n*** Update File: /w/nimbus/src/a.ts\n@@\n+export const checked = true;\n*** End Patch" },
            "time": { "start": 1772924669000 }
          }
        },
        { "type": "tool", "tool": "edit", "state": { "input": { "filePath": "src/b.ts", "oldString": "x", "newString": "let y = 2;" } } }
      ]
    }
  ]
}"#;

    /// Each write of `w`: its tool, file and lines.
    fn writes_of(w: &crate::agents::AgentWrites) -> Vec<(&str, &str, Vec<&str>)> {
        w.writes
            .iter()
            .map(|x| {
                let lines = x.lines.iter().map(String::as_str).collect();
                (x.tool.as_str(), x.file.as_str(), lines)
            })
            .collect()
    }

    /// The first format, as the reference's 0.4.x wrote it (lines of a real session of the
    /// corpus, shortened): one message per line, a `write` tool part and a `file_write` one.
    const FIRST_FORMAT: &str = concat!(
        r#"{"info":{"role":"user","time":{"created":1771135208448},"id":"m1","sessionID":"s"},"parts":[{"type":"text","text":"Create a poem in a markdown file","id":"p1"}]}"#,
        "\n",
        r##"{"info":{"role":"assistant","time":{"created":1771135208453},"tokens":{"input":13348,"output":178,"reasoning":0,"cache":{"read":0,"write":0}},"id":"m2","sessionID":"s"},"parts":[{"type":"step-start","id":"p2"},{"type":"tool","callID":"c1","tool":"write","state":{"status":"completed","input":{"filePath":"/Users/dev/proj/poem.md","content":"# The Weight of Quiet Code\n\nThere is a silence in the commit,\n"},"output":"","time":{"start":1771135216000}},"id":"p3"}]}"##,
        "\n",
        r#"{"info":{"role":"assistant","time":{"created":1700000042},"id":"m3","sessionID":"s"},"parts":[{"type":"tool","tool":"file_write","filePath":"config.json","state":{"status":"completed","input":"{\"path\":\"config.json\",\"content\":\"{\\n  \\\"port\\\": 3000\\n}\"}","output":"File written"}}]}"#,
        "\n",
    );

    #[test]
    fn reads_the_first_format_one_message_per_line() {
        let w = extract(FIRST_FORMAT.as_bytes());
        assert_eq!(w.format, TranscriptFormat::OpenCode);
        let prompts: Vec<&str> = w.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["Create a poem in a markdown file"]);
        let writes = writes_of(&w);
        assert_eq!(
            writes,
            [
                (
                    "write",
                    "/Users/dev/proj/poem.md",
                    vec![
                        "# The Weight of Quiet Code",
                        "",
                        "There is a silence in the commit,"
                    ]
                ),
                (
                    "file_write",
                    "config.json",
                    vec!["{", "  \"port\": 3000", "}"]
                ),
            ]
        );
        let usage = crate::agents::token_usage(FIRST_FORMAT.as_bytes(), 0).unwrap();
        assert_eq!((usage.input_tokens, usage.output_tokens), (13348, 178));
    }

    #[test]
    fn reads_an_opencode_session_export() {
        let w = extract(OPENCODE.as_bytes());
        assert_eq!(w.format, TranscriptFormat::OpenCode);
        let prompts: Vec<&str> = w.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["add the workspace check"]);
        assert_eq!(w.prompts[0].timestamp, "2026-03-07T23:04:28.468Z");
        let writes = writes_of(&w);
        assert_eq!(
            writes,
            [
                (
                    "apply_patch",
                    "/w/nimbus/src/a.ts",
                    vec!["export const checked = true;"]
                ),
                ("edit", "src/b.ts", vec!["let y = 2;"]),
            ]
        );
        assert_eq!(w.writes[0].timestamp, "2026-03-07T23:04:29Z");
        assert_eq!(w.writes[1].entry, 2);
    }
}
