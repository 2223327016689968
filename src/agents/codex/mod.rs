//! Codex: `response_item`, `event_msg`, `session_meta` and `turn_context` entries, each with a
//! `payload`. Writes are `response_item` payloads that are a `custom_tool_call` or
//! `function_call` named `apply_patch`, whose patch (`input`, or the `input` of the JSON
//! `arguments`) adds `+` lines under `*** Add File:` / `*** Update File:` (`*** Move to:`
//! renames). Prompts are the `user_message` events: what the user typed. A `user` message is
//! the model's input, which repeats each prompt (decorated where the user mentioned files) and
//! adds Codex's own (the repository's AGENTS.md instructions, the environment, subagent
//! notifications, an interrupted turn), none of which has an event: in the corpus every `user`
//! message with an event is a prompt, and none without one is.

mod history;
mod hooks;
pub(crate) use history::HISTORY;
pub(crate) use hooks::HOOKS;

use serde::Deserialize;
use serde_json::Value;

mod usage;

use super::id::TranscriptFormat;
use super::turns::json::{str_at, text_of};
use super::turns::{patch_files, Turns};
use super::{TranscriptReader, Usage};

/// Codex's transcript reader.
pub(crate) struct Codex;

/// The entry types that decide a transcript is Codex's.
const KINDS: [&str; 4] = ["response_item", "event_msg", "session_meta", "turn_context"];

impl TranscriptReader for Codex {
    const FORMAT: TranscriptFormat = TranscriptFormat::Codex;
    const USAGE: Usage = Usage::Lines(usage::from_lines);
    type Entry<'e> = Entry;

    fn claims(v: &Value) -> bool {
        KINDS.contains(&str_at(v, "type"))
    }

    /// Reads one entry (on transcript line `line`). Every `event_msg` but a `user_message`, and
    /// `session_meta`, `turn_context` and `compacted` entries, hold nothing of the conversation
    /// the response items do not (the events repeat them for the user interface).
    fn read(entry: Entry, line: usize, out: &mut impl Turns) {
        let Some(p) = entry.payload else {
            out.known();
            return;
        };
        let ts = entry.timestamp.as_str();
        let texts = |v: &Option<Value>| -> Vec<String> {
            let parts = v.as_ref().and_then(Value::as_array).into_iter().flatten();
            parts
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        };
        match (entry.kind.as_str(), p.kind.as_str()) {
            ("response_item", "message") if p.role == "assistant" => {
                out.reply(&texts(&p.content).join("\n"));
            }
            ("response_item", "reasoning") => match texts(&p.summary) {
                t if t.is_empty() => out.known(),
                t => out.thinking(&t.join("\n")),
            },
            ("response_item", "custom_tool_call" | "function_call") => {
                let args = match (&p.input, &p.arguments) {
                    (Some(input), _) => input.clone(),
                    (_, Some(Value::String(args))) => {
                        serde_json::from_str(args).unwrap_or_else(|_| Value::from(args.as_str()))
                    }
                    (_, Some(args)) => args.clone(),
                    _ => Value::Null,
                };
                out.call(&p.name, &args);
                if p.name == "apply_patch" {
                    let patch = match &args {
                        Value::String(s) => Some(s.as_str()),
                        v => v.get("input").and_then(Value::as_str),
                    };
                    for f in patch.map(patch_files).unwrap_or_default() {
                        out.write(&p.name, &f.file, &f.added.join("\n"), ts, line);
                        out.replaced(&f.removed.join("\n"));
                    }
                }
            }
            ("response_item", "local_shell_call" | "web_search_call") => {
                let name = p.kind.trim_end_matches("_call");
                out.call(name, p.action.as_ref().unwrap_or(&Value::Null));
            }
            ("response_item", kind) if kind.ends_with("_output") => {
                let output = p.output.as_ref().unwrap_or(&Value::Null);
                let text = match output.get("content").or(output.get("output")) {
                    Some(inner) => text_of(inner),
                    None => text_of(output),
                };
                out.output(&tool_output(&text));
            }
            ("event_msg", "user_message") => {
                if let Some(text) = p.message.as_ref().and_then(Value::as_str) {
                    out.prompt(text.to_owned(), ts, line);
                }
            }
            ("response_item", "message")
            | ("event_msg" | "session_meta" | "turn_context" | "compacted", _) => out.known(),
            _ => {}
        }
    }
}

/// Whether an entry of type `kind` is Codex's, in a transcript known to be Codex's: one of the
/// types that decide, or a `compacted` entry (which only follows others, so never decides).
pub(crate) fn is_entry(kind: &str) -> bool {
    KINDS.contains(&kind) || kind == "compacted"
}

/// Whether a JSON line may hold a prompt or a write of Codex's: it has an `apply_patch` call or
/// a `user_message` event, looked for with their quotes (inside a JSON string a quote is
/// escaped, so text that mentions them does not match).
pub(crate) fn may_matter(line: &[u8]) -> bool {
    /// The strings looked for, built once.
    static NEEDLES: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 2]> =
        std::sync::LazyLock::new(|| {
            ["\"apply_patch\"", "\"user_message\""].map(memchr::memmem::Finder::new)
        });
    NEEDLES.iter().any(|f| f.find(line).is_some())
}

/// A Codex entry, decoded into types.
pub(crate) struct Entry {
    pub(crate) kind: String,
    pub(crate) timestamp: String,
    pub(crate) payload: Option<Payload>,
}

/// An entry's `payload`.
#[derive(Deserialize)]
pub(crate) struct Payload {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    role: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    input: Option<Value>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    message: Option<Value>,
    /// A tool call's result (`*_output` items).
    #[serde(default)]
    output: Option<Value>,
    /// A reasoning item's summary parts.
    #[serde(default)]
    summary: Option<Value>,
    /// What a `local_shell_call` or `web_search_call` did.
    #[serde(default)]
    action: Option<Value>,
}

/// What a tool returned, as a person reads it: a command's output without the header Codex
/// puts before it (lines of `Command:`, `Chunk ID:`, `Wall time:`, `Process exited with code
/// N`, `Original token count:`, at least one, then the line `Output:`), with `exit code N`
/// first where N is not 0; the `output` of a JSON document with one (`apply_patch`'s, with its
/// `metadata`). Anything else as it is.
fn tool_output(text: &str) -> String {
    if let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(text) {
        if let Some(Value::String(inner)) = doc.get("output") {
            let code = doc
                .get("metadata")
                .and_then(|m| m.get("exit_code"))
                .and_then(Value::as_i64);
            return with_exit_code(code, inner);
        }
    }
    const HEADER: [&str; 6] = [
        "Command: ",
        "Chunk ID: ",
        "Wall time: ",
        "Process exited with code ",
        "Process running with session ID ",
        "Original token count: ",
    ];
    let mut code = None;
    let mut rest = text;
    while let Some((line, after)) = rest.split_once('\n') {
        if line == "Output:" && rest.len() < text.len() {
            return with_exit_code(code, after);
        }
        if !HEADER.iter().any(|h| line.starts_with(h)) {
            break;
        }
        if let Some(n) = line.strip_prefix("Process exited with code ") {
            code = n.trim().parse().ok();
        }
        rest = after;
    }
    text.to_owned()
}

/// `output` after the line `exit code N` where `code` is known and not 0.
fn with_exit_code(code: Option<i64>, output: &str) -> String {
    match code {
        Some(n) if n != 0 => format!("exit code {n}\n{output}"),
        _ => output.to_owned(),
    }
}

/// The tool call that started the subagent `agent_id`, as Codex's rollout records it: the
/// output of the call that spawned it (`spawn_agent`) names the subagent, and answers the
/// call's `call_id`. The subagent's type is not recorded there. Only lines that hold the ID are
/// parsed.
pub(crate) fn subagent_call(transcript: &[u8], agent_id: &str) -> Option<(String, Option<String>)> {
    super::turns::json::lines_holding(transcript, agent_id).find_map(|v| {
        let p = v.get("payload")?;
        let output = p.get("output")?;
        let names = match output {
            Value::String(text) => text.contains(agent_id),
            other => other.to_string().contains(agent_id),
        };
        (str_at(p, "type") == "function_call_output" && names)
            .then(|| (str_at(p, "call_id").to_owned(), None))
            .filter(|(call, _)| !call.is_empty())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_call_whose_output_names_a_subagent_started_it() {
        let rollout = [
            r#"{"type":"response_item","payload":{"type":"function_call","name":"spawn_agent","arguments":"{\"message\":\"find\"}","call_id":"call_7"}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_7","output":"{\"agent_id\":\"019b-agent\"}"}}"#,
        ]
        .join("\n");
        assert_eq!(
            super::subagent_call(rollout.as_bytes(), "019b-agent"),
            Some(("call_7".to_owned(), None))
        );
        assert_eq!(super::subagent_call(rollout.as_bytes(), "other"), None);
    }

    use crate::agents::{extract, TranscriptFormat};

    const CODEX: &str = concat!(
        r#"{"timestamp":"2026-02-01T09:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/w/proj"}}"#,
        "\n",
        r#"{"timestamp":"2026-02-01T09:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w/proj</cwd>\n</environment_context>"}]}}"#,
        "\n",
        r#"{"timestamp":"2026-02-01T09:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"rename the flag"}]}}"#,
        "\n",
        r#"{"timestamp":"2026-02-01T09:00:02Z","type":"event_msg","payload":{"type":"user_message","message":"rename the flag","images":[]}}"#,
        "\n",
        r#"{"timestamp":"2026-02-01T09:00:09Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"c1","name":"apply_patch","input":"*** Begin Patch\n*** Update File: /w/proj/cmd/main.go\n@@ func main() {\n-\tflag.Bool(\"old\", false, \"\")\n+\tflag.Bool(\"new\", false, \"\")\n context\n*** Add File: docs/x.md\n+# X\n*** Delete File: gone.go\n*** End Patch\n"}}"#,
        "\n",
        r#"{"timestamp":"2026-02-01T09:01:00Z","type":"event_msg","payload":{"type":"user_message","message":"and move it"}}"#,
        "\n",
        r#"{"timestamp":"2026-02-01T09:01:09Z","type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Update File: a.go\\n*** Move to: b.go\\n+var moved = 1\\n*** End Patch\"}","call_id":"c2"}}"#,
        "\n",
        r#"{"timestamp":"2026-02-01T09:01:10Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sed -i s/a/b/ x.go\"}","call_id":"c3"}}"#,
        "\n",
    );

    #[test]
    fn tool_output_drops_codex_s_header_and_keeps_an_exit_code_other_than_0() {
        use super::tool_output;
        let header = "Command: ls\nChunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\na\nb\n";
        assert_eq!(tool_output(header), "a\nb\n");
        let failed =
            "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 2\nOutput:\nno\n";
        assert_eq!(tool_output(failed), "exit code 2\nno\n");
        let running =
            "Chunk ID: 1\nProcess running with session ID 7\nOriginal token count: 0\nOutput:\n";
        assert_eq!(tool_output(running), "");
        let patch = r#"{"output":"Success.\n","metadata":{"exit_code":0}}"#;
        assert_eq!(tool_output(patch), "Success.\n");
        // Not a header: as it is.
        for plain in [
            "Output:\nx",
            "Plan updated",
            "Command: x\nnot a header\nOutput:\ny",
            r#"{"status":1}"#,
        ] {
            assert_eq!(tool_output(plain), plain);
        }
    }

    /// Codex's own input messages (no `user_message` event) are no prompts, and a prompt
    /// decorated with the files the user mentioned is the text the user typed, once.
    #[test]
    fn prompts_are_what_the_user_typed() {
        let codex = concat!(
            r##"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>"}]}}"##,
            "\n",
            r##"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# Files mentioned by the user:\n\n## a.png: /w/a.png\n\n## My request for Codex:\nuse the image"}]}}"##,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"use the image"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: a.md\n+![a](a.png)\n*** End Patch\n"}}"#,
            "\n",
        );
        let w = extract(codex.as_bytes());
        let prompts: Vec<&str> = w.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["use the image"]);
        assert_eq!(w.writes[0].prompt, Some(0));
    }

    #[test]
    fn reads_codex_patches_and_prompts_once_each() {
        let w = extract(CODEX.as_bytes());
        assert_eq!(w.format, TranscriptFormat::Codex);
        let prompts: Vec<&str> = w.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["rename the flag", "and move it"]);
        let writes: Vec<(&str, Vec<&str>, Option<usize>)> = w
            .writes
            .iter()
            .map(|x| {
                (
                    x.file.as_str(),
                    x.lines.iter().map(String::as_str).collect(),
                    x.prompt,
                )
            })
            .collect();
        assert_eq!(
            writes,
            [
                (
                    "/w/proj/cmd/main.go",
                    vec!["\tflag.Bool(\"new\", false, \"\")"],
                    Some(0)
                ),
                ("docs/x.md", vec!["# X"], Some(0)),
                ("b.go", vec!["var moved = 1"], Some(1)),
            ]
        );
    }
}
