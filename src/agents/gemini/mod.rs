//! Gemini CLI: one JSON document (`sessionId`, `projectHash`, `messages[]`). Prompts are the
//! messages of `type` `user` (`content`, a string or a list of `{text}` parts); writes are the
//! `toolCalls[]` of `gemini` messages named `write_file` (`args.content`), `replace` or
//! `edit_file` (`args.new_string`), or `save_file`, the file in `args.file_path`, or rather in
//! `resultDisplay.filePath` when the call's result has it: `args.file_path` is often relative
//! to the directory Gemini CLI ran in, which may be below the top of the repository (a session
//! in `test-dir/` writes `test.txt`), while the result names the file written by its absolute
//! path.
//!
//! Since 0.60 Gemini CLI records a session as JSON lines instead: a first line of the session's
//! metadata (`sessionId`, `projectHash`, `startTime`, `kind`), then records appended as the
//! session goes: a message (by `id`; one recorded again replaces the earlier, in its place), a
//! metadata update (`{"$set": {...}}`, whose `messages` replace them all), a rewind
//! (`{"$rewindTo": "<id>"}` drops that message and every later one). [`replay`] plays them back
//! into the document older versions wrote, which is read as before. A session resumed in the
//! minute it started in is recorded in the same file again: the messages are set to the resumed
//! history, whose model answers kept their IDs but not their tokens nor their tool calls; each
//! message keeps what it recorded before and the new record lacks.

mod history;
mod hooks;
pub(crate) use history::HISTORY;
pub(crate) use hooks::HOOKS;

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::id::TranscriptFormat;
use super::turns::json::{int, str_at, text_of};
use super::turns::{Turns, Unit};
use super::{TranscriptReader, Usage};
use crate::model::documents::TokenUsage;

/// The document a Gemini CLI session recorded as JSON lines (`text`) comes to, when its first
/// line is such a session's metadata; records that do not parse are skipped.
pub(crate) fn replay(text: &[u8]) -> Option<Value> {
    let mut lines = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty());
    let Value::Object(mut doc) = serde_json::from_slice(lines.next()?).ok()? else {
        return None;
    };
    // Its metadata, not an entry of another agent's JSON lines (Claude Code's carry `sessionId`
    // too).
    let header = ["sessionId", "projectHash", "startTime"]
        .iter()
        .all(|k| doc.contains_key(*k))
        && !doc.contains_key("messages")
        && !doc.contains_key("type");
    if !header {
        return None;
    }
    let mut messages: Vec<Value> = Vec::new();
    // Every message as last recorded, by ID: a resumed history set anew keeps what its
    // messages recorded before and it lacks (a model answer's tokens and tool calls).
    let mut recorded: HashMap<String, Map<String, Value>> = HashMap::new();
    let id_of = |m: &Value| m.get("id").and_then(Value::as_str).map(str::to_owned);
    for line in lines {
        let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if let Some(to) = record.get("$rewindTo").and_then(Value::as_str) {
            let at = messages
                .iter()
                .position(|m| id_of(m).as_deref() == Some(to));
            messages.truncate(at.unwrap_or(0));
        } else if let Some(Value::Object(set)) = record.get("$set") {
            for (k, v) in set {
                match (k.as_str(), v) {
                    ("messages", Value::Array(all)) => {
                        messages = all.iter().map(|m| with_earlier(&recorded, m)).collect();
                        for m in &messages {
                            remember(&mut recorded, m);
                        }
                    }
                    _ => {
                        doc.insert(k.clone(), v.clone());
                    }
                }
            }
        } else if let Some(id) = id_of(&Value::Object(record.clone())) {
            let record = Value::Object(record);
            remember(&mut recorded, &record);
            match messages
                .iter()
                .position(|m| id_of(m).as_deref() == Some(&id))
            {
                Some(at) => messages[at] = record,
                None => messages.push(record),
            }
        } else {
            doc.extend(record);
        }
    }
    doc.insert("messages".into(), Value::Array(messages));
    Some(Value::Object(doc))
}

/// Notes `message` as the last record of its ID.
fn remember(recorded: &mut HashMap<String, Map<String, Value>>, message: &Value) {
    if let (Some(id), Value::Object(fields)) = (message.get("id").and_then(Value::as_str), message)
    {
        recorded.insert(id.to_owned(), fields.clone());
    }
}

/// `message` with the fields it lacks taken from the earlier record of its ID, if any.
fn with_earlier(recorded: &HashMap<String, Map<String, Value>>, message: &Value) -> Value {
    let earlier = message
        .get("id")
        .and_then(Value::as_str)
        .and_then(|id| recorded.get(id));
    match (earlier, message) {
        (Some(earlier), Value::Object(fields)) => {
            let mut merged = earlier.clone();
            merged.extend(fields.clone());
            Value::Object(merged)
        }
        _ => message.clone(),
    }
}

/// Gemini CLI's transcript reader.
pub(crate) struct GeminiCli;

impl GeminiCli {
    /// Where the document's entries are, and what each is.
    pub(crate) const ENTRIES: (&'static str, Unit) = ("messages", Unit::Message);
}

impl TranscriptReader for GeminiCli {
    const FORMAT: TranscriptFormat = TranscriptFormat::GeminiCli;
    const USAGE: Usage = Usage::Messages(tokens);
    type Entry<'e> = &'e Value;

    /// Whether `doc` is a Gemini CLI session: messages with a `type`, and not OpenCode's shape.
    fn claims(doc: &Value) -> bool {
        let Some(messages) = doc.get("messages").and_then(Value::as_array) else {
            return false;
        };
        doc.get("sessionId").is_some()
            || doc.get("projectHash").is_some()
            || messages
                .first()
                .is_some_and(|m| m.get("type").is_some() && m.get("parts").is_none())
    }

    /// Reads message number `entry`; `info`, `error` and `warning` messages are the harness's.
    fn read(m: &Value, entry: usize, out: &mut impl Turns) {
        let ts = str_at(m, "timestamp");
        match str_at(m, "type") {
            "user" => out.prompt(text_of(m.get("content").unwrap_or(&Value::Null)), ts, entry),
            "gemini" => {
                let thoughts = m.get("thoughts").and_then(Value::as_array);
                for t in thoughts.into_iter().flatten() {
                    out.thinking(&format!(
                        "{}: {}",
                        str_at(t, "subject"),
                        str_at(t, "description")
                    ));
                }
                out.reply(&text_of(m.get("content").unwrap_or(&Value::Null)));
                let calls = m.get("toolCalls").and_then(Value::as_array);
                for call in calls.into_iter().flatten() {
                    tool_call(call, ts, entry, out);
                }
            }
            "info" | "error" | "warning" => out.known(),
            _ => {}
        }
    }
}

const WRITE_TOOLS: &[&str] = &["write_file", "replace", "edit_file", "save_file"];

/// Reports a call and its result.
fn tool_call(call: &Value, ts: &str, entry: usize, out: &mut impl Turns) {
    let when = match str_at(call, "timestamp") {
        "" => ts,
        t => t,
    };
    let args = call.get("args").unwrap_or(&Value::Null);
    let name = str_at(call, "name");
    match call
        .pointer("/resultDisplay/filePath")
        .and_then(Value::as_str)
    {
        Some(written) if !written.is_empty() && args.is_object() => {
            let mut args = args.clone();
            args["file_path"] = Value::from(written);
            out.tool_call(WRITE_TOOLS, name, &args, when, entry);
        }
        _ => out.tool_call(WRITE_TOOLS, name, args, when, entry),
    }
    let results = call.get("result").and_then(Value::as_array);
    let outputs: Vec<String> = results
        .into_iter()
        .flatten()
        .filter_map(|r| r.pointer("/functionResponse/response"))
        .map(|r| text_of(r.get("output").or(r.get("error")).unwrap_or(&Value::Null)))
        .collect();
    if !outputs.is_empty() {
        out.output(&outputs.join("\n"));
    }
}

/// A Gemini CLI `gemini` message's `tokens` (`input`, `output`, `cached`).
fn tokens(m: &Value) -> Option<TokenUsage> {
    let t = m.get("tokens").filter(|_| str_at(m, "type") == "gemini")?;
    Some(TokenUsage {
        input_tokens: int(t, "/input"),
        cache_read_tokens: int(t, "/cached"),
        output_tokens: int(t, "/output"),
        ..TokenUsage::default()
    })
}

#[cfg(test)]
mod tests {
    use crate::agents::{extract, TranscriptFormat};

    /// The shape of a real session: pretty-printed, the prompt first, a `write_file` call.
    const GEMINI: &str = r#"{
  "sessionId": "s-1",
  "projectHash": "8b4f",
  "messages": [
    {
      "id": "u1",
      "timestamp": "2026-03-18T20:43:43.177Z",
      "type": "user",
      "content": [{ "text": "write a greeting file" }]
    },
    {
      "id": "g1",
      "timestamp": "2026-03-18T20:43:44.794Z",
      "type": "gemini",
      "content": "I will create it.",
      "toolCalls": [
        { "id": "r", "name": "read_file", "args": { "file_path": "README.md" } },
        {
          "id": "w",
          "name": "write_file",
          "args": { "file_path": "greet.txt", "content": "hello there\n" },
          "timestamp": "2026-03-18T20:52:02.913Z"
        }
      ]
    }
  ]
}
"#;

    /// The JSON lines of 0.60 and later: messages recorded again replace the earlier ones in
    /// their place, a rewind drops what came after, and what is left reads as the document.
    #[test]
    fn a_session_recorded_as_json_lines_reads_as_the_document() {
        let lines = [
            r#"{"sessionId":"s-1","projectHash":"8b4f","startTime":"2026-03-18T20:43:40.000Z","kind":"main"}"#,
            r#"{"id":"u1","timestamp":"2026-03-18T20:43:43.177Z","type":"user","content":[{"text":"write a greeting file"}]}"#,
            r#"{"id":"g1","timestamp":"2026-03-18T20:43:44.794Z","type":"gemini","content":"I will."}"#,
            r#"{"id":"g1","timestamp":"2026-03-18T20:43:44.794Z","type":"gemini","content":"I will create it.","toolCalls":[{"id":"r","name":"read_file","args":{"file_path":"README.md"}},{"id":"w","name":"write_file","args":{"file_path":"greet.txt","content":"hello there\n"},"timestamp":"2026-03-18T20:52:02.913Z"}]}"#,
            r#"{"$set":{"lastUpdated":"2026-03-18T20:52:03.000Z"}}"#,
            r#"{"id":"u2","timestamp":"2026-03-18T20:53:00.000Z","type":"user","content":[{"text":"undo that"}]}"#,
            r#"{"$rewindTo":"u2"}"#,
        ]
        .join("\n");
        let w = extract(lines.as_bytes());
        let doc = extract(GEMINI.as_bytes());
        assert_eq!(w.format, TranscriptFormat::GeminiCli);
        assert_eq!((w.prompts, w.writes), (doc.prompts, doc.writes));
        assert!(crate::agents::is_transcript_shaped(lines.as_bytes()));
        assert_eq!(super::replay(b"{\"type\":\"user\"}\n{}"), None);
        assert_eq!(
            super::replay(b"{\"type\":\"user\",\"sessionId\":\"s\"}\n{}"),
            None,
            "Claude Code's lines carry a sessionId"
        );
    }

    /// A session resumed (`--resume`) in the minute it was started in: Gemini CLI 0.61 starts
    /// its file again there (a second metadata line, the messages set to its opening context),
    /// then sets the messages to the resumed history, whose model answers have kept their IDs
    /// but lost their tokens and tool calls. What those answers recorded before still counts.
    #[test]
    fn a_resumed_history_keeps_what_its_messages_recorded_before() {
        let lines = [
            r#"{"sessionId":"s-1","projectHash":"8b4f","startTime":"2026-03-18T20:43:40.000Z","kind":"main"}"#,
            r#"{"$set":{"messages":[{"id":"ctx","type":"user","content":[{"text":"<session_context>"}]}]}}"#,
            r#"{"id":"u1","type":"user","content":[{"text":"write a greeting file"}]}"#,
            r#"{"id":"g1","type":"gemini","content":"","tokens":{"input":10,"output":120},"toolCalls":[{"id":"w","name":"write_file","args":{"file_path":"greet.txt","content":"hello there\n"}}]}"#,
            r#"{"sessionId":"s-1","projectHash":"8b4f","startTime":"2026-03-18T20:43:50.000Z","kind":"main"}"#,
            r#"{"$set":{"messages":[{"id":"ctx","type":"user","content":[{"text":"<session_context>"}]}]}}"#,
            r#"{"$set":{"messages":[{"id":"ctx","type":"user","content":[{"text":"<session_context>"}]},{"id":"u1","type":"user","content":[{"text":"write a greeting file"}]},{"id":"g1","type":"gemini","content":[{"functionCall":{"name":"write_file"}}]}]}}"#,
            r#"{"id":"u2","type":"user","content":[{"text":"and another"}]}"#,
            r#"{"id":"g2","type":"gemini","content":"Added.","tokens":{"input":10,"output":3}}"#,
        ]
        .join("\n");
        let w = extract(lines.as_bytes());
        let prompts: Vec<&str> = w.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["write a greeting file", "and another"]);
        assert_eq!(w.writes.len(), 1, "{:?}", w.writes);
        let usage = crate::agents::token_usage(lines.as_bytes(), 0).unwrap();
        assert_eq!((usage.output_tokens, usage.api_call_count), (123, 2));
    }

    #[test]
    fn reads_a_gemini_session_document() {
        let w = extract(GEMINI.as_bytes());
        assert_eq!(w.format, TranscriptFormat::GeminiCli);
        assert!(w.is_json());
        assert_eq!(w.prompts[0].text, "write a greeting file");
        assert_eq!(w.prompts[0].entry, 1);
        assert_eq!(w.writes.len(), 1);
        assert_eq!(w.writes[0].tool, "write_file");
        assert_eq!(w.writes[0].file, "greet.txt");
        assert_eq!(w.writes[0].lines, ["hello there"]);
        assert_eq!(w.writes[0].timestamp, "2026-03-18T20:52:02.913Z");
        assert_eq!(w.writes[0].prompt, Some(0));
    }

    /// A session run in a subdirectory: `args.file_path` is relative to it, the result names
    /// the file by its absolute path, which is what matches the repository's path.
    #[test]
    fn the_file_is_the_one_the_result_names() {
        let doc = GEMINI.replace(
            r#""timestamp": "2026-03-18T20:52:02.913Z""#,
            r#""timestamp": "2026-03-18T20:52:02.913Z",
          "resultDisplay": { "fileName": "greet.txt", "filePath": "/home/u/repo/sub/greet.txt" }"#,
        );
        let w = extract(doc.as_bytes());
        assert_eq!(w.writes.len(), 1);
        assert_eq!(w.writes[0].file, "/home/u/repo/sub/greet.txt");
        assert!(crate::agents::same_file(&w.writes[0].file, "sub/greet.txt"));
        assert!(!crate::agents::same_file("greet.txt", "sub/greet.txt"));
    }
}
