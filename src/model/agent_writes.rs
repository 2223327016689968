//! What a transcript shows the agent writing: the file-writing tool calls of a Claude Code or
//! Codex JSONL transcript, each with the text it wrote and the user prompt before it.
//!
//! Claude Code: `assistant` entries whose `message.content[]` holds `tool_use` items named
//! `Edit` (`input.new_string`), `MultiEdit` (`input.edits[].new_string`), `Write`
//! (`input.content`) or `NotebookEdit` (`input.new_source`), the file in `input.file_path` (or
//! `input.notebook_path`). Codex: `response_item` entries whose payload is a `custom_tool_call`
//! or `function_call` named `apply_patch`, whose patch (`input`, or the `input` of the JSON
//! `arguments`) adds `+` lines under `*** Add File:` / `*** Update File:` (`*** Move to:`
//! renames). Prompts are the user turns a person typed: Claude's `user` entries with text
//! content (not tool results, not `isMeta`), Codex's `user` messages and `user_message` events.
//! Text the harness injects (it starts with `<`: `<environment_context>`,
//! `<local-command-stdout>`, ...) and `[Request interrupted ...` markers are not prompts; a slash
//! command (`<command-name>/goal</command-name>...<command-args>x</command-args>`) is the prompt
//! `/goal x`, unless it is one of the harness's own commands (`/model`, `/clear`, ...). Lines that are not JSON are skipped and counted; JSON of any other shape is skipped.
//! Writes made by shell commands are not seen.

use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The transcript format recognised from its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TranscriptFormat {
    /// Claude Code's session JSONL.
    ClaudeCode,
    /// Codex's rollout JSONL.
    Codex,
    /// JSON lines of neither shape (another agent): no write is read from it.
    Unknown,
}

impl TranscriptFormat {
    /// The name shown to people and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            TranscriptFormat::ClaudeCode => "claude-code",
            TranscriptFormat::Codex => "codex",
            TranscriptFormat::Unknown => "unknown",
        }
    }
}

/// A user turn that prompted the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// What the user typed.
    pub text: String,
    /// The entry's `timestamp` ("" when it has none).
    pub timestamp: String,
    /// The entry's line number in the transcript (1-based).
    pub entry: usize,
}

/// One file-writing tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentWrite {
    /// The tool (`Edit`, `Write`, `apply_patch`, ...).
    pub tool: String,
    /// The file as the tool call names it (absolute or relative to the agent's directory).
    pub file: String,
    /// The lines it wrote, trailing whitespace trimmed.
    pub lines: Vec<String>,
    /// The prompt before it: an index into [`AgentWrites::prompts`].
    pub prompt: Option<usize>,
    /// The entry's `timestamp` ("" when it has none).
    pub timestamp: String,
    /// The entry's line number in the transcript (1-based).
    pub entry: usize,
}

/// The version of what [`extract`] returns for a given transcript. Bump it whenever a change
/// of the code would make it return something else for some transcript: results cached by an
/// older version (`ops::writes_cache`) are then ignored.
pub const EXTRACT_VERSION: u32 = 2;

/// Everything [`extract`] read from one transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentWrites {
    /// The format recognised (the first entry of a known shape decides).
    pub format: TranscriptFormat,
    /// The file-writing tool calls, in transcript order.
    pub writes: Vec<AgentWrite>,
    /// The prompts, in transcript order.
    pub prompts: Vec<Prompt>,
    /// Lines that are JSON.
    pub json_lines: usize,
    /// Non-empty lines that are not JSON (skipped).
    pub skipped_lines: usize,
}

impl AgentWrites {
    /// Whether the transcript is JSONL at all: some line is JSON, or it is empty.
    pub fn is_jsonl(&self) -> bool {
        self.json_lines > 0 || self.skipped_lines == 0
    }
}

/// Whether a line of code is evidence on its own: after trimming, it holds at least one
/// letter or digit. Blank lines and lines of punctuation only (`}`, `)`, `*/`) are written
/// everywhere, so finding one in a tool call proves nothing.
pub fn is_evidence(line: &str) -> bool {
    line.chars().any(char::is_alphanumeric)
}

/// Whether the file a tool call names (`tool_path`) is `repo_path` (relative to the top of
/// the repository): equal once `./` and backslashes are normalised, or ending in `/<repo_path>`.
/// Agents name files by absolute paths in their own checkout, which may be anywhere.
pub fn same_file(tool_path: &str, repo_path: &str) -> bool {
    let tool = tool_path.replace('\\', "/");
    let tool = tool.trim_start_matches("./");
    let repo = repo_path.trim_start_matches("./");
    !repo.is_empty()
        && (tool == repo
            || tool
                .strip_suffix(repo)
                .is_some_and(|rest| rest.ends_with('/')))
}

/// Reads the writes and prompts of a JSONL transcript.
pub fn extract(transcript: &[u8]) -> AgentWrites {
    let mut out = AgentWrites {
        format: TranscriptFormat::Unknown,
        writes: Vec::new(),
        prompts: Vec::new(),
        json_lines: 0,
        skipped_lines: 0,
    };
    let mut known = None;
    for (i, raw) in lines(transcript).enumerate() {
        let raw = raw.trim_ascii();
        if raw.is_empty() {
            continue;
        }
        // Once the format is known, only lines that can hold a prompt or a write are decoded;
        // the others (tool results, most of a transcript's bytes) are only checked to look like
        // a JSON object.
        if known.is_some() && !may_matter(raw) {
            match raw.first() == Some(&b'{') && raw.last() == Some(&b'}') {
                true => out.json_lines += 1,
                false => out.skipped_lines += 1,
            }
            continue;
        }
        let entry: Entry = match serde_json::from_slice(raw) {
            Ok(e) => e,
            Err(_) => {
                match serde_json::from_slice::<IgnoredAny>(raw) {
                    Ok(_) => out.json_lines += 1,
                    Err(_) => out.skipped_lines += 1,
                }
                continue;
            }
        };
        out.json_lines += 1;
        let format = match entry.kind.as_str() {
            "user" | "assistant" if entry.message.is_some() => TranscriptFormat::ClaudeCode,
            "response_item" | "event_msg" | "session_meta" | "turn_context" => {
                TranscriptFormat::Codex
            }
            _ => continue,
        };
        if *known.get_or_insert(format) != format {
            continue;
        }
        let line = i + 1;
        match format {
            TranscriptFormat::ClaudeCode => claude_entry(entry, line, &mut out),
            TranscriptFormat::Codex => codex_entry(entry, line, &mut out),
            TranscriptFormat::Unknown => {}
        }
    }
    out.format = known.unwrap_or(TranscriptFormat::Unknown);
    out
}

/// Whether a JSON line may be a prompt or a write: it has a `tool_use` item, an `apply_patch`
/// call, a `user_message` event, or a user turn that is not only tool results. Strings are
/// looked for with their quotes: inside a JSON string a quote is escaped, so text that mentions
/// them does not match; a member (`"role": "user"`) may have whitespace around its colon.
fn may_matter(line: &[u8]) -> bool {
    /// The strings looked for, built once: building a searcher costs about as much as running
    /// it over a short line.
    static NEEDLES: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 6]> =
        std::sync::LazyLock::new(|| {
            [
                "\"tool_use\"",
                "\"apply_patch\"",
                "\"user_message\"",
                "\"role\"",
                "\"tool_use_id\"",
                "\"type\"",
            ]
            .map(memchr::memmem::Finder::new)
        });
    let [tool_use, apply_patch, user_message, role, tool_use_id, kind] = &*NEEDLES;
    let has = |f: &memchr::memmem::Finder<'_>| f.find(line).is_some();
    // The occurrences of `"key"` that are a member's key, each with what follows its colon.
    let members = |key: &'static memchr::memmem::Finder<'static>| {
        key.find_iter(line).filter_map(|at| {
            let rest = line[at + key.needle().len()..].trim_ascii_start();
            Some(rest.strip_prefix(b":")?.trim_ascii_start())
        })
    };
    let member = |key, value: &[u8]| members(key).any(|v| v.starts_with(value));
    has(tool_use)
        || has(apply_patch)
        || has(user_message)
        || (member(role, b"\"user\"")
            && (members(tool_use_id).next().is_none() || member(kind, b"\"text\"")))
}

/// The lines of `text`, without their newlines (as `split` on `\n` gives them, the last one
/// possibly empty), found with `memchr` rather than byte by byte.
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let r = rest?;
        match memchr::memchr(b'\n', r) {
            Some(at) => {
                rest = Some(&r[at + 1..]);
                Some(&r[..at])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// A transcript entry: the fields either format uses, the rest skipped unread.
#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    timestamp: String,
    #[serde(rename = "isMeta", default)]
    is_meta: bool,
    #[serde(default)]
    message: Option<ClaudeMessage>,
    #[serde(default)]
    payload: Option<CodexPayload>,
}

#[derive(Deserialize)]
struct ClaudeMessage {
    #[serde(default)]
    content: Content,
}

/// Claude's `message.content`: a string, or a list of items.
#[derive(Default)]
enum Content {
    #[default]
    None,
    Text(String),
    Items(Vec<ClaudeItem>),
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
struct ClaudeItem {
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

/// A string, or nothing when the value is of another type (skipped unread).
#[derive(Default)]
struct Text(Option<String>);

impl Text {
    fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text, E> {
                Ok(Text(Some(s.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Text, E> {
                Ok(Text(Some(s)))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Text, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct CodexPayload {
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
}

/// Records `text` as a prompt unless the harness injected it, or it repeats the last prompt
/// (Codex logs each prompt twice: as a message and as an event).
fn push_prompt(out: &mut AgentWrites, text: String, timestamp: &str, entry: usize) {
    let text = slash_command(&text).unwrap_or(text);
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed.starts_with('<') || trimmed.starts_with("[Request interrupted")
    {
        return;
    }
    if out.prompts.last().is_some_and(|p| p.text.trim() == trimmed) {
        return;
    }
    out.prompts.push(Prompt {
        text,
        timestamp: timestamp.to_owned(),
        entry,
    });
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
fn slash_command(text: &str) -> Option<String> {
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

fn push_write(out: &mut AgentWrites, tool: &str, file: &str, text: &str, ts: &str, entry: usize) {
    if file.is_empty() {
        return;
    }
    out.writes.push(AgentWrite {
        tool: tool.to_owned(),
        file: file.to_owned(),
        lines: text.lines().map(|l| l.trim_end().to_owned()).collect(),
        prompt: out.prompts.len().checked_sub(1),
        timestamp: ts.to_owned(),
        entry,
    });
}

fn claude_entry(entry: Entry, line: usize, out: &mut AgentWrites) {
    let Some(message) = entry.message else {
        return;
    };
    let ts = entry.timestamp.as_str();
    match (entry.kind.as_str(), message.content) {
        ("user", _) if entry.is_meta => {}
        ("user", Content::Text(text)) => push_prompt(out, text, ts, line),
        ("user", Content::Items(items)) => {
            let texts: Vec<&str> = items
                .iter()
                .filter(|i| i.kind == "text")
                .filter_map(|i| i.text.0.as_deref())
                .collect();
            if !texts.is_empty() {
                push_prompt(out, texts.join("\n"), ts, line);
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
                    "Edit" => push_write(out, name, file, input.new_string.as_str(), ts, line),
                    "Write" => push_write(out, name, file, input.content.as_str(), ts, line),
                    "NotebookEdit" => {
                        push_write(out, name, file, input.new_source.as_str(), ts, line)
                    }
                    "MultiEdit" => {
                        let edits = input.edits.as_ref().and_then(Value::as_array);
                        let text: Vec<&str> = edits
                            .into_iter()
                            .flatten()
                            .filter_map(|e| e.get("new_string").and_then(Value::as_str))
                            .collect();
                        push_write(out, &item.name, file, &text.join("\n"), ts, line);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn codex_entry(entry: Entry, line: usize, out: &mut AgentWrites) {
    let Some(p) = entry.payload else { return };
    let ts = entry.timestamp.as_str();
    match (entry.kind.as_str(), p.kind.as_str()) {
        ("response_item", "message") if p.role == "user" => {
            let texts: Vec<&str> = p
                .content
                .as_ref()
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .collect();
            if !texts.is_empty() {
                push_prompt(out, texts.join("\n"), ts, line);
            }
        }
        ("event_msg", "user_message") => {
            if let Some(text) = p.message.as_ref().and_then(Value::as_str) {
                push_prompt(out, text.to_owned(), ts, line);
            }
        }
        ("response_item", "custom_tool_call" | "function_call") if p.name == "apply_patch" => {
            let patch = match (&p.input, &p.arguments) {
                (Some(Value::String(s)), _) => Some(s.clone()),
                (_, Some(Value::String(args))) => match serde_json::from_str::<Value>(args) {
                    Ok(v) => v.get("input").and_then(Value::as_str).map(str::to_owned),
                    Err(_) => Some(args.clone()),
                },
                _ => None,
            };
            for (file, added) in patch.as_deref().map(patch_files).unwrap_or_default() {
                push_write(out, &p.name, &file, &added.join("\n"), ts, line);
            }
        }
        _ => {}
    }
}

/// The files a Codex patch adds lines to, with those lines (without their `+`), in order.
fn patch_files(patch: &str) -> Vec<(String, Vec<&str>)> {
    let mut files: Vec<(String, Vec<&str>)> = Vec::new();
    let mut current: Option<usize> = None;
    for l in patch.lines() {
        if let Some(path) = l
            .strip_prefix("*** Add File: ")
            .or_else(|| l.strip_prefix("*** Update File: "))
        {
            files.push((path.trim().to_owned(), Vec::new()));
            current = Some(files.len() - 1);
        } else if let Some(path) = l.strip_prefix("*** Move to: ") {
            if let Some(i) = current {
                files[i].0 = path.trim().to_owned();
            }
        } else if l.starts_with("*** Delete File: ") {
            current = None;
        } else if let (Some(added), Some(i)) = (l.strip_prefix('+'), current) {
            files[i].1.push(added);
        }
    }
    files.retain(|(_, added)| !added.is_empty());
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_what_a_split_on_newlines_gives() {
        for text in ["", "\n", "a", "a\n", "a\nb", "a\n\nb\n", "\n\n", "{}\r\n{}"] {
            let want: Vec<&[u8]> = text.as_bytes().split(|&b| b == b'\n').collect();
            assert_eq!(lines(text.as_bytes()).collect::<Vec<_>>(), want, "{text:?}");
        }
    }

    #[test]
    fn json_with_spaces_between_tokens_reads_as_compact_json_does() {
        // As Python's json.dumps writes it: `", "` and `": "`. The second prompt must be seen
        // although the format is known by then and most lines are only scanned.
        let spaced = concat!(
            r#"{"type": "user", "message": {"role": "user", "content": "first"}, "timestamp": "t1"}"#,
            "\n",
            r#"{"type": "user", "message": {"role" :"user", "content": [{"type": "tool_result", "tool_use_id" : "x", "content": "read"}]}, "timestamp": "t2"}"#,
            "\n",
            r#"{"type": "user", "message": {"role" : "user", "content": [{"type" : "text", "text": "second"}]}, "timestamp": "t3"}"#,
            "\n",
            r#"{"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "w", "name": "Write", "input": {"file_path": "/p/a.go", "content": "package a\n"}}]}, "timestamp": "t4"}"#,
            "\n",
        );
        let compact: String = spaced
            .replace(": ", ":")
            .replace(" :", ":")
            .replace(", ", ",");
        let (a, b) = (extract(spaced.as_bytes()), extract(compact.as_bytes()));
        assert_eq!(a, b);
        let prompts: Vec<&str> = a.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["first", "second"]);
        assert_eq!(
            a.writes[0].prompt,
            Some(1),
            "the write follows the second prompt"
        );
    }

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

    #[test]
    fn what_is_not_a_known_transcript_yields_nothing() {
        let text = extract(b"plain text\nnot json either\n");
        assert!(!text.is_jsonl());
        assert_eq!(text.skipped_lines, 2);
        let other = extract(b"{\"kind\":\"gemini\",\"parts\":[]}\n");
        assert!(other.is_jsonl());
        assert_eq!(other.format, TranscriptFormat::Unknown);
        assert!(other.writes.is_empty());
        assert!(extract(b"").is_jsonl());
    }

    #[test]
    fn evidence_and_file_matching() {
        assert!(is_evidence("\treturn nil"));
        for weak in ["", "   ", "}", "\t});", "*/", "]"] {
            assert!(!is_evidence(weak), "{weak:?}");
        }
        assert!(same_file("/home/u/proj/src/a.go", "src/a.go"));
        assert!(same_file("./src/a.go", "src/a.go"));
        assert!(same_file("src\\a.go", "src/a.go"));
        assert!(!same_file("/home/u/proj/xsrc/a.go", "src/a.go"));
        assert!(!same_file("/home/u/proj/src/a.go", "a.go.bak"));
        assert!(!same_file("a.go", ""));
    }
}
