//! Codex: `response_item`, `event_msg`, `session_meta` and `turn_context` entries, each with a
//! `payload`. Writes are `response_item` payloads that are a `custom_tool_call` or
//! `function_call` named `apply_patch`, whose patch (`input`, or the `input` of the JSON
//! `arguments`) adds `+` lines under `*** Add File:` / `*** Update File:` (`*** Move to:`
//! renames). Prompts are what the user typed: the `user_message` events, or, from Codex 0.171.0
//! on, the `item_completed` events whose `item` is a `UserMessage` (its `text` parts). A rollout
//! with both logs each prompt once of each, one after the other, and a prompt that repeats the
//! one before it is read once. A `user` message is the model's input, which repeats each prompt
//! (decorated where the user mentioned files) and adds Codex's own (the repository's AGENTS.md
//! instructions, the environment, subagent notifications, an interrupted turn), none of which
//! has an event: in the corpus every `user` message with an event is a prompt, and none without
//! one is.

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

    /// Reads one entry (on transcript line `line`). Every `event_msg` but a prompt's, and
    /// `session_meta`, `turn_context` and `compacted` entries, hold nothing of the conversation
    /// the response items do not (the events repeat them for the user interface).
    fn read(entry: Entry, line: usize, out: &mut impl Turns) {
        let Some(p) = entry.payload else {
            out.known();
            return;
        };
        let ts = entry.timestamp.as_str();
        let texts = |v: Option<&Value>| -> Vec<String> {
            let parts = v.and_then(Value::as_array).into_iter().flatten();
            parts
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        };
        match (entry.kind.as_str(), p.kind.as_str()) {
            ("response_item", "message") if p.role == "assistant" => {
                out.reply(&texts(p.content.as_ref()).join("\n"));
            }
            ("response_item", "reasoning") => match texts(p.summary.as_ref()) {
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
            ("event_msg", "item_completed")
                if p.item
                    .as_ref()
                    .is_some_and(|i| str_at(i, "type") == "UserMessage") =>
            {
                let content = p.item.as_ref().and_then(|i| i.get("content"));
                out.prompt(texts(content).join("\n"), ts, line);
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

/// Whether a JSON line may hold a prompt or a write of Codex's: it has an `apply_patch` call, a
/// `user_message` event or a `UserMessage` item, looked for with their quotes (inside a JSON
/// string a quote is escaped, so text that mentions them does not match).
pub(crate) fn may_matter(line: &[u8]) -> bool {
    /// The strings looked for, built once.
    static NEEDLES: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 3]> =
        std::sync::LazyLock::new(|| {
            ["\"apply_patch\"", "\"user_message\"", "\"UserMessage\""]
                .map(memchr::memmem::Finder::new)
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
    /// An `item_completed` event's item.
    #[serde(default)]
    item: Option<Value>,
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

    /// A real rollout of Codex 0.171.0 (its first turn, from line 8): the prompt is an
    /// `item_completed` event of a `UserMessage` item (no `user_message` event), read once though
    /// the model's input repeats it; its usage is read from its `token_usage_record`s, written as
    /// soon as a call answers, before the tools the call asked for run.
    const CODEX_0_171: &str = concat!(
        r#"{"timestamp":"2026-12-06T07:35:54.041Z","ordinal":7,"type":"response_item","payload":{"type":"message","id":"msg_01a24a47-dfb9-7b33-887d-6c33ba86b9ae","role":"user","content":[{"type":"input_text","text":"write the notes file and commit it PROMPT-ONE"}],"internal_chat_message_metadata_passthrough":{"turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","create_time":1796542554.0411398,"content_item_kinds":["user.text"],"content_item_metadata":[{"provenance":{"type":"user"}}]}},"metadata":{"history_sequence":3,"sampled_through_sequence":0,"retained_source":{"id":{"message_id":"msg_01a24a47-dfb9-7b33-887d-6c33ba86b9ae","turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","role":"user"},"revision":"retained_01a24a47-dfb9-7b33-887d-6c44ed9ccfca","complete":true},"client_authored":false,"user_input_order":0,"mcp_attribution":{"status":"none"},"model_search_state":"unused"}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.042Z","ordinal":8,"type":"event_msg","payload":{"type":"item_completed","thread_id":"01a24a47-df00-79a2-aa5e-033722706e7e","turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","item":{"type":"UserMessage","id":"01a24a47-dfb9-7b33-887d-6c2e9192bca6","content":[{"type":"text","text":"write the notes file and commit it PROMPT-ONE","text_elements":[]}]},"started_at_ms":1796542554042,"completed_at_ms":1796542554042}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.064Z","ordinal":9,"type":"response_item","payload":{"type":"custom_tool_call","id":"fc_00000001","status":"completed","call_id":"call_00000002","name":"apply_patch","input":"*** Begin Patch\n*** Add File: notes.txt\n+notes by the agent\n*** End Patch\n","internal_chat_message_metadata_passthrough":{"turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046"}},"metadata":{"history_sequence":4,"sampled_through_sequence":3,"client_authored":false,"model_search_state":"unused"}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.066Z","ordinal":10,"type":"token_usage_record","payload":{"thread_id":"01a24a47-df00-79a2-aa5e-033722706e7e","turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","session_id":"01a24a47-df00-79a2-aa5e-033722706e7e","root_turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","response_id":"resp_00000003","usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":120,"reasoning_output_tokens":0,"total_tokens":130},"turn_token_usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":120,"reasoning_output_tokens":0,"total_tokens":130},"thread_token_usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":120,"reasoning_output_tokens":0,"total_tokens":130}}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.093Z","ordinal":13,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":120,"reasoning_output_tokens":0,"total_tokens":130},"last_token_usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":120,"reasoning_output_tokens":0,"total_tokens":130},"last_usage_includes_reasoning":false,"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":null,"secondary":null,"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.121Z","ordinal":14,"type":"response_item","payload":{"type":"function_call","status":"completed","id":"fc_00000004","name":"exec_command","arguments":"{\"cmd\": \"git add notes.txt && git commit -q -m 'Add notes'\"}","call_id":"call_00000005","internal_chat_message_metadata_passthrough":{"turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046"}},"metadata":{"history_sequence":6,"sampled_through_sequence":5,"client_authored":false,"user_input_order":1,"model_search_state":"unused"}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.136Z","ordinal":15,"type":"token_usage_record","payload":{"thread_id":"01a24a47-df00-79a2-aa5e-033722706e7e","turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","session_id":"01a24a47-df00-79a2-aa5e-033722706e7e","root_turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","response_id":"resp_00000006","usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":0,"total_tokens":50},"turn_token_usage":{"input_tokens":20,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":160,"reasoning_output_tokens":0,"total_tokens":180},"thread_token_usage":{"input_tokens":20,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":160,"reasoning_output_tokens":0,"total_tokens":180}}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.330Z","ordinal":18,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":20,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":160,"reasoning_output_tokens":0,"total_tokens":180},"last_token_usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":0,"total_tokens":50},"last_usage_includes_reasoning":false,"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":null,"secondary":null,"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.364Z","ordinal":19,"type":"event_msg","payload":{"type":"item_completed","thread_id":"01a24a47-df00-79a2-aa5e-033722706e7e","turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","item":{"type":"AgentMessage","id":"msg_00000007","content":[{"type":"Text","text":"Done."}]},"started_at_ms":1796542554364,"completed_at_ms":1796542554364}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.368Z","ordinal":20,"type":"response_item","payload":{"type":"message","status":"completed","id":"msg_00000007","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}],"internal_chat_message_metadata_passthrough":{"turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","content_item_kinds":["unknown"]}},"metadata":{"history_sequence":8,"sampled_through_sequence":7,"retained_source":{"id":{"message_id":"msg_00000007","turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","role":"assistant"},"revision":"retained_01a24a47-e100-7e50-b6ce-dc5ba2db11fb","complete":true},"client_authored":false,"user_input_order":2,"model_search_state":"unused"}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.369Z","ordinal":21,"type":"token_usage_record","payload":{"thread_id":"01a24a47-df00-79a2-aa5e-033722706e7e","turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","session_id":"01a24a47-df00-79a2-aa5e-033722706e7e","root_turn_id":"01a24a47-df33-72f1-aaa4-b07aa2b5c046","response_id":"resp_00000008","usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":4,"reasoning_output_tokens":0,"total_tokens":14},"turn_token_usage":{"input_tokens":30,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":164,"reasoning_output_tokens":0,"total_tokens":194},"thread_token_usage":{"input_tokens":30,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":164,"reasoning_output_tokens":0,"total_tokens":194}}}"#,
        "\n",
        r#"{"timestamp":"2026-12-06T07:35:54.370Z","ordinal":22,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":30,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":164,"reasoning_output_tokens":0,"total_tokens":194},"last_token_usage":{"input_tokens":10,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":4,"reasoning_output_tokens":0,"total_tokens":14},"last_usage_includes_reasoning":false,"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":null,"secondary":null,"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}"#,
        "\n",
    );

    #[test]
    fn reads_codex_0_171_s_user_message_items() {
        let w = extract(CODEX_0_171.as_bytes());
        assert_eq!(w.format, TranscriptFormat::Codex);
        let prompts: Vec<&str> = w.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["write the notes file and commit it PROMPT-ONE"]);
        let writes: Vec<(&str, Option<usize>)> = w
            .writes
            .iter()
            .map(|x| (x.file.as_str(), x.prompt))
            .collect();
        assert_eq!(writes, [("notes.txt", Some(0))]);
    }

    /// The usage up to the line after the second call's record (the `git commit` the call asked
    /// for runs there, before the call's `token_count` event) counts both calls, once each; the
    /// rest of the turn, the third.
    #[test]
    fn codex_0_171_s_usage_is_its_records() {
        use crate::agents::token_usage;
        let lines: Vec<&str> = CODEX_0_171.lines().collect();
        let commit = 1 + lines
            .iter()
            .position(|l| l.contains("\"output_tokens\":160"))
            .unwrap();
        let head = lines[..commit].join("\n");
        let first = token_usage(head.as_bytes(), 0).unwrap();
        assert_eq!((first.output_tokens, first.api_call_count), (160, 2));
        let rest = token_usage(CODEX_0_171.as_bytes(), commit).unwrap();
        assert_eq!((rest.output_tokens, rest.api_call_count), (4, 1));
    }

    /// A rollout of the versions that log a prompt both ways (`user_message` event, then
    /// `UserMessage` item) reads it once.
    #[test]
    fn a_prompt_logged_both_ways_is_read_once() {
        let both = concat!(
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"rename it"}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"rename it"}]}}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"type":"Text","text":"Renamed."}]}}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"and move it"}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"and move it"}]}}}"#,
            "\n",
        );
        let w = extract(both.as_bytes());
        let prompts: Vec<&str> = w.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["rename it", "and move it"]);
    }
}
