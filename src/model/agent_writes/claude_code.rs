//! Claude Code: `user` and `assistant` entries with a `message`. Writes are `assistant`
//! entries whose `message.content[]` holds `tool_use` items named `Edit` (`input.new_string`),
//! `MultiEdit` (`input.edits[].new_string`), `Write` (`input.content`) or `NotebookEdit`
//! (`input.new_source`), the file in `input.file_path` (or `input.notebook_path`). Prompts are
//! `user` entries with text content (not tool results, not `isMeta`); a slash command
//! (`<command-name>/goal</command-name>...<command-args>x</command-args>`) is the prompt
//! `/goal x`, unless it is one of the harness's own commands (`/model`, `/clear`, ...).

use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::jsonl::{Entry, Text};
use super::AgentWrites;

/// An entry's `message`.
#[derive(Deserialize)]
pub(super) struct Message {
    #[serde(default)]
    content: Content,
}

/// `message.content`: a string, or a list of items.
#[derive(Default)]
enum Content {
    #[default]
    None,
    Text(String),
    Items(Vec<Item>),
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a list of content items")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Content, E> {
                Ok(Content::Text(s.to_owned()))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Content, E> {
                Ok(Content::None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Content::Items(items))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Text,
    #[serde(default)]
    name: String,
    #[serde(default)]
    input: Option<ToolInput>,
}

/// The inputs of the file-writing tools; other tools' inputs of other types are skipped.
#[derive(Deserialize, Default)]
struct ToolInput {
    #[serde(default)]
    file_path: Text,
    #[serde(default)]
    notebook_path: Text,
    #[serde(default)]
    new_string: Text,
    #[serde(default)]
    content: Text,
    #[serde(default)]
    new_source: Text,
    #[serde(default)]
    edits: Option<Value>,
}

/// Claude Code's harness commands that never prompt the model (they change a setting, print,
/// or end the session).
const LOCAL_COMMANDS: &[&str] = &[
    "/clear",
    "/compact",
    "/config",
    "/copy",
    "/cost",
    "/exit",
    "/help",
    "/login",
    "/logout",
    "/model",
    "/permissions",
    "/resume",
    "/status",
    "/theme",
    "/vim",
];

/// A slash command the user typed, which Claude Code records as
/// `<command-name>/goal</command-name> ... <command-args>text</command-args>`: the prompt
/// `/goal text`, or an empty prompt (dropped) for a command that does not prompt the model.
pub(super) fn slash_command(text: &str) -> Option<String> {
    let between = |open: &str, close: &str| -> Option<&str> {
        let start = text.find(open)? + open.len();
        let len = text[start..].find(close)?;
        Some(text[start..start + len].trim())
    };
    let name = between("<command-name>", "</command-name>")?;
    if !text.trim_start().starts_with("<command-") {
        return None;
    }
    if LOCAL_COMMANDS.contains(&name) {
        return Some(String::new());
    }
    let args = between("<command-args>", "</command-args>").unwrap_or("");
    Some(format!("{name} {args}").trim().to_owned())
}

/// Reads one entry (on transcript line `line`).
pub(super) fn entry(entry: Entry, line: usize, out: &mut AgentWrites) {
    let Some(message) = entry.message else {
        return;
    };
    let ts = entry.timestamp.as_str();
    match (entry.kind.as_str(), message.content) {
        ("user", _) if entry.is_meta => {}
        ("user", Content::Text(text)) => out.prompt(text, ts, line),
        ("user", Content::Items(items)) => {
            let texts: Vec<&str> = items
                .iter()
                .filter(|i| i.kind == "text")
                .filter_map(|i| i.text.0.as_deref())
                .collect();
            if !texts.is_empty() {
                out.prompt(texts.join("\n"), ts, line);
            }
        }
        ("assistant", Content::Items(items)) => {
            for item in items.iter().filter(|i| i.kind == "tool_use") {
                let Some(input) = &item.input else { continue };
                let file = match input.file_path.as_str() {
                    "" => input.notebook_path.as_str(),
                    f => f,
                };
                let name = item.name.as_str();
                match name {
                    "Edit" => out.write(name, file, input.new_string.as_str(), ts, line),
                    "Write" => out.write(name, file, input.content.as_str(), ts, line),
                    "NotebookEdit" => out.write(name, file, input.new_source.as_str(), ts, line),
                    "MultiEdit" => {
                        let edits = input.edits.as_ref().and_then(Value::as_array);
                        let text: Vec<&str> = edits
                            .into_iter()
                            .flatten()
                            .filter_map(|e| e.get("new_string").and_then(Value::as_str))
                            .collect();
                        out.write(name, file, &text.join("\n"), ts, line);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::{extract, TranscriptFormat};

    const CLAUDE: &str = concat!(
        r#"{"type":"user","message":{"role":"user","content":"add a greeting"},"timestamp":"2026-01-01T10:00:00Z","cwd":"/home/u/proj"}"#,
        "\n",
        r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/home/u/proj/src/hello.go","content":"package src\n\nfunc Hello() string {  \n\treturn \"hi\"\n}\n"}}]},"timestamp":"2026-01-01T10:00:05Z"}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"File created"}]},"timestamp":"2026-01-01T10:00:06Z"}"#,
        "\n",
        r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"<local-command-caveat>x</local-command-caveat>"},"timestamp":"2026-01-01T10:00:07Z"}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":"<command-name>/model</command-name>\n<command-args></command-args>"},"timestamp":"2026-01-01T10:00:08Z"}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":"<command-name>/goal</command-name>\n  <command-message>goal</command-message>\n  <command-args>tidy up</command-args>"},"timestamp":"2026-01-01T10:00:09Z"}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":"<local-command-stdout>Goal set</local-command-stdout>"},"timestamp":"2026-01-01T10:00:10Z"}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"now say bye too"}]},"timestamp":"2026-01-01T10:01:00Z"}"#,
        "\n",
        r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"src/hello.go","old_string":"x","new_string":"func Bye() string { return \"bye\" }"}},{"type":"tool_use","id":"t3","name":"MultiEdit","input":{"file_path":"/home/u/proj/b.go","edits":[{"old_string":"a","new_string":"one"},{"old_string":"b","new_string":"two"}]}},{"type":"tool_use","id":"t4","name":"Bash","input":{"command":"echo x > c.go"}},{"type":"tool_use","id":"t5","name":"mcp__x","input":{"content":[{"x":1}],"file_path":7,"new_string":null}}]},"timestamp":"2026-01-01T10:01:05Z"}"#,
        "\n",
        "this line is not json\n",
        r#"{"type":"summary","summary":"greetings"}"#,
        "\n",
    );

    #[test]
    fn reads_claude_code_writes_and_the_prompt_before_each() {
        let w = extract(CLAUDE.as_bytes());
        assert_eq!(w.format, TranscriptFormat::ClaudeCode);
        assert_eq!(w.skipped_lines, 1);
        let prompts: Vec<&str> = w.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            prompts,
            ["add a greeting", "/goal tidy up", "now say bye too"]
        );
        let writes: Vec<(&str, &str, Option<usize>)> = w
            .writes
            .iter()
            .map(|x| (x.tool.as_str(), x.file.as_str(), x.prompt))
            .collect();
        assert_eq!(
            writes,
            [
                ("Write", "/home/u/proj/src/hello.go", Some(0)),
                ("Edit", "src/hello.go", Some(2)),
                ("MultiEdit", "/home/u/proj/b.go", Some(2)),
            ]
        );
        assert_eq!(w.writes[0].lines[2], "func Hello() string {");
        assert_eq!(w.writes[0].timestamp, "2026-01-01T10:00:05Z");
        assert_eq!(w.writes[2].lines, ["one", "two"]);
        assert_eq!(w.prompts[2].entry, 8);
        assert_eq!(w.prompts[2].timestamp, "2026-01-01T10:01:00Z");
    }
}
