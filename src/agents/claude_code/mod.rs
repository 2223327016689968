//! Claude Code: `user` and `assistant` entries with a `message`. Writes are `assistant`
//! entries whose `message.content[]` holds `tool_use` items named `Edit` (`input.new_string`),
//! `MultiEdit` (`input.edits[].new_string`), `Write` (`input.content`) or `NotebookEdit`
//! (`input.new_source`), the file in `input.file_path` (or `input.notebook_path`). Prompts are
//! `user` entries with text content (not tool results, not `isMeta`); a slash command
//! (`<command-name>/goal</command-name>...<command-args>x</command-args>`) is the prompt
//! `/goal x`, unless it is one of the harness's own commands (`/model`, `/clear`, ...): the
//! sinks read that of every agent's prompts (`turns::prompt` says why).

mod history;
mod hooks;
mod message;
mod usage;

pub(crate) use history::HISTORY;
pub(crate) use hooks::HOOKS;
pub(crate) use message::Message;

use serde_json::Value;

use super::id::TranscriptFormat;
use super::turns::json::{str_at, text_of};
use super::turns::Turns;
use super::{TranscriptReader, Usage};
use message::{Content, Item};

/// Claude Code's transcript reader.
pub(crate) struct ClaudeCode;

impl TranscriptReader for ClaudeCode {
    const FORMAT: TranscriptFormat = TranscriptFormat::ClaudeCode;
    const USAGE: Usage = Usage::Lines(usage::from_lines);
    type Entry<'e> = Entry;

    fn claims(v: &Value) -> bool {
        is_turn(
            str_at(v, "type"),
            v.get("message").is_some_and(Value::is_object),
        )
    }

    /// Reads one entry (on transcript line `line`).
    fn read(entry: Entry, line: usize, out: &mut impl Turns) {
        let Some(message) = entry.message else {
            return;
        };
        let ts = entry.timestamp.as_str();
        match (entry.kind.as_str(), message.content) {
            ("user", _) if entry.is_meta => out.known(),
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
                for result in items.iter().filter(|i| i.kind == "tool_result") {
                    out.output(&text_of(result.content.as_ref().unwrap_or(&Value::Null)));
                }
            }
            ("assistant", Content::Text(text)) => out.reply(&text),
            ("assistant", Content::Items(items)) => {
                for item in &items {
                    match item.kind.as_str() {
                        "text" => out.reply(item.text.as_str()),
                        "thinking" => out.thinking(item.thinking.as_str()),
                        "tool_use" => tool_use(item, ts, line, out),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// A Claude Code entry, decoded into types.
pub(crate) struct Entry {
    pub(crate) kind: String,
    pub(crate) timestamp: String,
    pub(crate) is_meta: bool,
    pub(crate) message: Option<Message>,
}

/// Whether an entry of type `kind` is a turn of Claude Code's: a `user` or `assistant` entry
/// with a `message` (`has_message`).
pub(crate) fn is_turn(kind: &str, has_message: bool) -> bool {
    matches!(kind, "user" | "assistant") && has_message
}

/// Whether a JSON line may hold a prompt or a write of Claude Code's: it has a `tool_use` item,
/// or it is a user turn that is not only tool results. Strings are looked for with their
/// quotes: inside a JSON string a quote is escaped, so text that mentions them does not match;
/// a member (`"role": "user"`) may have whitespace around its colon.
pub(crate) fn may_matter(line: &[u8]) -> bool {
    /// The strings looked for, built once: building a searcher costs about as much as running
    /// it over a short line.
    static NEEDLES: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 4]> =
        std::sync::LazyLock::new(|| {
            ["\"tool_use\"", "\"role\"", "\"tool_use_id\"", "\"type\""]
                .map(memchr::memmem::Finder::new)
        });
    let [tool_use, role, tool_use_id, kind] = &*NEEDLES;
    // The occurrences of `"key"` that are a member's key, each with what follows its colon.
    let members = |key: &'static memchr::memmem::Finder<'static>| {
        key.find_iter(line).filter_map(|at| {
            let rest = line[at + key.needle().len()..].trim_ascii_start();
            Some(rest.strip_prefix(b":")?.trim_ascii_start())
        })
    };
    let member = |key, value: &[u8]| members(key).any(|v| v.starts_with(value));
    tool_use.find(line).is_some()
        || (member(role, b"\"user\"")
            && (members(tool_use_id).next().is_none() || member(kind, b"\"text\"")))
}

/// Entry types that hold nothing of the conversation: the harness's own bookkeeping.
const BOOKKEEPING: &[&str] = &[
    "agent-name",
    "ai-title",
    "attachment",
    "bridge-session",
    "custom-title",
    "file-history-snapshot",
    "last-prompt",
    "mode",
    "permission-mode",
    "pr-link",
    "progress",
    "queue-operation",
    "summary",
    "system",
];

/// Whether an entry of type `kind` is Claude Code's bookkeeping, in a transcript known to be
/// Claude Code's.
pub(crate) fn is_bookkeeping(kind: &str) -> bool {
    BOOKKEEPING.contains(&kind)
}

/// Whether the entry `v`, before any entry said which agent's transcript it is, is Claude
/// Code's bookkeeping: of one of its types, with one of its session or message identifiers.
pub(crate) fn looks_like_bookkeeping(v: &Value) -> bool {
    is_bookkeeping(str_at(v, "type"))
        && ["sessionId", "parentUuid", "messageId", "leafUuid", "uuid"]
            .iter()
            .any(|k| v.get(k).is_some())
}

/// Reports a `tool_use` item, and what it wrote when it is one of the file-writing tools.
fn tool_use(item: &Item, ts: &str, line: usize, out: &mut impl Turns) {
    let Some(input) = &item.input else { return };
    let name = item.name.as_str();
    out.call(name, input);
    out.call_id(&item.id);
    let file = match str_at(input, "file_path") {
        "" => str_at(input, "notebook_path"),
        f => f,
    };
    match name {
        "Edit" => {
            out.write(name, file, str_at(input, "new_string"), ts, line);
            out.replaced(str_at(input, "old_string"));
        }
        "Write" => out.write(name, file, str_at(input, "content"), ts, line),
        "NotebookEdit" => out.write(name, file, str_at(input, "new_source"), ts, line),
        "MultiEdit" => {
            let edits = input.get("edits").and_then(Value::as_array);
            let text: Vec<&str> = edits
                .into_iter()
                .flatten()
                .filter_map(|e| e.get("new_string").and_then(Value::as_str))
                .collect();
            out.write(name, file, &text.join("\n"), ts, line);
            let old: Vec<&str> = edits
                .into_iter()
                .flatten()
                .filter_map(|e| e.get("old_string").and_then(Value::as_str))
                .collect();
            out.replaced(&old.join("\n"));
        }
        _ => {}
    }
}

/// The tool call that started the subagent `agent_id`, and the subagent's type, as the session
/// transcript records them: the result of an `Agent` (or `Task`) call names the subagent it ran
/// (`toolUseResult.agentId`) and answers the call's `tool_use_id`. Only lines that hold the ID
/// are parsed.
pub(crate) fn subagent_call(transcript: &[u8], agent_id: &str) -> Option<(String, Option<String>)> {
    super::turns::json::lines_holding(transcript, agent_id).find_map(|v| {
        let result = v.get("toolUseResult")?;
        if result.get("agentId").and_then(Value::as_str) != Some(agent_id) {
            return None;
        }
        let call = v
            .pointer("/message/content")?
            .as_array()?
            .iter()
            .find_map(|c| c.get("tool_use_id").and_then(Value::as_str))?;
        let kind = result
            .get("agentType")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Some((call.to_owned(), kind))
    })
}

#[cfg(test)]
mod tests {
    use crate::agents::{extract, TranscriptFormat};

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
