//! What a transcript shows the agent writing: the file-writing tool calls of a session
//! transcript, each with the text it wrote and the user prompt before it, for every agent the
//! reference records (docs/blame.md, "Agents").
//!
//! The format is recognised from the transcript itself, never from the session's `agent` field
//! (which real data gets wrong: a Cursor transcript in a session labelled Claude Code). Three
//! agents store one JSON document ([`gemini`], [`opencode`], [`kiro`]); the others JSON lines,
//! each line an entry ([`claude_code`], [`codex`], [`cursor`], [`copilot`], [`droid`], [`pi`]):
//! the first entry of a known shape decides, and entries of another shape are skipped. One module
//! per agent says where its prompts and file-writing tool calls are, and its replies, thinking,
//! other tool calls and their outputs, reporting each to a `Turns` sink: [`AgentWrites`] keeps
//! prompts and writes, the [`conversation`] view everything. What a call wrote is read from its
//! arguments by [`tool_args`], whatever the agent names them.
//!
//! Prompts are the user turns a person typed. Text the harness injects (it starts with `<`:
//! `<environment_context>`, `<local-command-stdout>`, ...) and `[Request interrupted ...`
//! markers are not prompts. Writes made by shell commands are not seen.

mod claude_code;
mod codex;
pub mod conversation;
mod copilot;
mod cursor;
mod droid;
mod gemini;
mod jsonl;
mod kiro;
mod opencode;
mod pi;
mod tool_args;
mod usage;

pub use usage::{entry_count, token_usage};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The transcript format recognised from its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TranscriptFormat {
    /// Claude Code's session JSONL.
    #[serde(rename = "claude-code")]
    ClaudeCode,
    /// Codex's rollout JSONL.
    #[serde(rename = "codex")]
    Codex,
    /// Gemini CLI's session, one JSON document.
    #[serde(rename = "gemini-cli")]
    GeminiCli,
    /// OpenCode's session export, one JSON document.
    #[serde(rename = "opencode")]
    OpenCode,
    /// Cursor's agent transcript JSONL.
    #[serde(rename = "cursor")]
    Cursor,
    /// GitHub Copilot CLI's `events.jsonl`.
    #[serde(rename = "copilot-cli")]
    CopilotCli,
    /// Kiro's conversation, one JSON document.
    #[serde(rename = "kiro")]
    Kiro,
    /// Factory AI Droid's session JSONL.
    #[serde(rename = "droid")]
    Droid,
    /// Pi's session JSONL.
    #[serde(rename = "pi")]
    Pi,
    /// None of these: no write is read from it.
    #[serde(rename = "unknown")]
    Unknown,
}

impl TranscriptFormat {
    /// The name shown to people and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            TranscriptFormat::ClaudeCode => "claude-code",
            TranscriptFormat::Codex => "codex",
            TranscriptFormat::GeminiCli => "gemini-cli",
            TranscriptFormat::OpenCode => "opencode",
            TranscriptFormat::Cursor => "cursor",
            TranscriptFormat::CopilotCli => "copilot-cli",
            TranscriptFormat::Kiro => "kiro",
            TranscriptFormat::Droid => "droid",
            TranscriptFormat::Pi => "pi",
            TranscriptFormat::Unknown => "unknown",
        }
    }

    /// The agent whose format this is, as the reference names it in a session's `agent`.
    pub fn agent(self) -> &'static str {
        match self {
            TranscriptFormat::ClaudeCode => "Claude Code",
            TranscriptFormat::Codex => "Codex",
            TranscriptFormat::GeminiCli => "Gemini CLI",
            TranscriptFormat::OpenCode => "OpenCode",
            TranscriptFormat::Cursor => "Cursor",
            TranscriptFormat::CopilotCli => "Copilot CLI",
            TranscriptFormat::Kiro => "Kiro",
            TranscriptFormat::Droid => "Factory AI Droid",
            TranscriptFormat::Pi => "Pi",
            TranscriptFormat::Unknown => "an unknown agent",
        }
    }
}

/// A user turn that prompted the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// What the user typed.
    pub text: String,
    /// The entry's time, RFC 3339 ("" when it has none).
    pub timestamp: String,
    /// Where it is: the line number in a JSONL transcript, the message's number in a
    /// transcript that is one JSON document (both from 1).
    pub entry: usize,
}

/// One file-writing tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentWrite {
    /// The tool (`Edit`, `Write`, `apply_patch`, `write_file`, ...).
    pub tool: String,
    /// The file as the tool call names it (absolute or relative to the agent's directory).
    pub file: String,
    /// The lines it wrote, trailing whitespace trimmed.
    pub lines: Vec<String>,
    /// The prompt before it: an index into [`AgentWrites::prompts`].
    pub prompt: Option<usize>,
    /// The entry's time, RFC 3339 ("" when it has none).
    pub timestamp: String,
    /// Where it is, as [`Prompt::entry`].
    pub entry: usize,
}

/// The version of what [`extract`] returns for a given transcript. Bump it whenever a change
/// of the code would make it return something else for some transcript: results cached by an
/// older version (`ops::writes_cache`) are then ignored.
pub const EXTRACT_VERSION: u32 = 5;

/// Everything [`extract`] read from one transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentWrites {
    /// The format recognised.
    pub format: TranscriptFormat,
    /// The file-writing tool calls, in transcript order.
    pub writes: Vec<AgentWrite>,
    /// The prompts, in transcript order.
    pub prompts: Vec<Prompt>,
    /// Lines that are JSON (1 for a transcript that is one JSON document).
    pub json_lines: usize,
    /// Non-empty lines that are not JSON (skipped).
    pub skipped_lines: usize,
}

impl AgentWrites {
    fn new(format: TranscriptFormat) -> Self {
        AgentWrites {
            format,
            writes: Vec::new(),
            prompts: Vec::new(),
            json_lines: 0,
            skipped_lines: 0,
        }
    }

    /// Whether the transcript is JSON at all: some line is JSON, or it is empty.
    pub fn is_json(&self) -> bool {
        self.json_lines > 0 || self.skipped_lines == 0
    }

    /// The files the session wrote, in the order first written, each once.
    pub fn files(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for w in &self.writes {
            if !out.contains(&w.file.as_str()) {
                out.push(&w.file);
            }
        }
        out
    }
}

/// A prompt's text as the user typed it (a slash command as `/name args`), or `None` when the
/// harness injected it (it starts with `<`), it is a `[Request interrupted ...` marker, or it is
/// empty.
fn prompt_text(text: String) -> Option<String> {
    let text = claude_code::slash_command(&text).unwrap_or(text);
    let trimmed = text.trim();
    let injected = trimmed.is_empty()
        || trimmed.starts_with('<')
        || trimmed.starts_with("[Request interrupted");
    (!injected).then_some(text)
}

/// Whether `text` repeats the prompt before it (Codex logs each prompt twice: as a message and
/// as an event).
fn repeats(last: Option<&str>, text: &str) -> bool {
    last.is_some_and(|l| l.trim() == text.trim())
}

/// What an agent's reader reports of the entries it reads, in transcript order: prompts and
/// file-writing calls always; replies, thinking, every tool call and tool output, and entries
/// of a known shape that hold nothing of the conversation, for a reader that wants them
/// ([`conversation`]). One reader per agent serves both [`extract`] and the conversation view.
trait Turns {
    /// Whether every entry is read: else only those that may hold a prompt or a write.
    const EVERY_ENTRY: bool;
    /// A user turn (see [`prompt_text`]).
    fn prompt(&mut self, text: String, timestamp: &str, entry: usize);
    /// A call of `tool` that wrote `text` to `file` (reported after its [`Turns::call`]).
    fn write(&mut self, tool: &str, file: &str, text: &str, timestamp: &str, entry: usize);
    /// The text the call of the last [`Turns::write`] replaced in its file, when known.
    fn replaced(&mut self, _text: &str) {}
    /// What the agent said.
    fn reply(&mut self, _text: &str) {}
    /// What the agent thought, when the transcript keeps it.
    fn thinking(&mut self, _text: &str) {}
    /// A call of any tool, with its arguments.
    fn call(&mut self, _tool: &str, _args: &Value) {}
    /// What a tool returned.
    fn output(&mut self, _text: &str) {}
    /// The entry is of a shape the agent's module knows, and holds nothing of the conversation
    /// (a session header, token counts, a copy of what another entry says).
    fn known(&mut self) {}

    /// Reports a call of `tool` with arguments `args`, and what it wrote when `tool` is one of
    /// the agent's file-writing tools (`write_tools`).
    fn tool_call(
        &mut self,
        write_tools: &[&str],
        tool: &str,
        args: &Value,
        timestamp: &str,
        entry: usize,
    ) {
        self.call(tool, args);
        if !write_tools.contains(&tool) {
            return;
        }
        for w in tool_args::written(args) {
            self.write(tool, &w.file, &w.text, timestamp, entry);
            self.replaced(&w.replaced);
        }
    }
}

impl Turns for AgentWrites {
    const EVERY_ENTRY: bool = false;

    /// Records `text` as a prompt unless the harness injected it or it repeats the last one.
    fn prompt(&mut self, text: String, timestamp: &str, entry: usize) {
        let Some(text) = prompt_text(text) else {
            return;
        };
        if repeats(self.prompts.last().map(|p| p.text.as_str()), &text) {
            return;
        }
        self.prompts.push(Prompt {
            text,
            timestamp: timestamp.to_owned(),
            entry,
        });
    }

    /// Records a call of `tool` that wrote `text` to `file` (nothing when no file is named).
    fn write(&mut self, tool: &str, file: &str, text: &str, timestamp: &str, entry: usize) {
        if file.is_empty() {
            return;
        }
        self.writes.push(AgentWrite {
            tool: tool.to_owned(),
            file: file.to_owned(),
            lines: text.lines().map(|l| l.trim_end().to_owned()).collect(),
            prompt: self.prompts.len().checked_sub(1),
            timestamp: timestamp.to_owned(),
            entry,
        });
    }
}

/// How an agent whose JSON lines hold a `message` of content items (Cursor, Droid, Pi) records
/// a turn: prompts are the `text` items of user messages, tool calls items of one type.
struct ItemTurns {
    /// Where an entry says who speaks (a JSON pointer).
    role_at: &'static str,
    /// The type of a tool-call item, and the member holding its arguments.
    call: (&'static str, &'static str),
    /// The agent's file-writing tools.
    write_tools: &'static [&'static str],
    /// What of a user `text` item is prompt (`None`: none of it).
    prompt: fn(&str) -> Option<&str>,
}

impl ItemTurns {
    /// Reads the entry `v` (on transcript line `line`): its `message`, said by the role at
    /// `role_at`, at its `timestamp`. Tool results are `tool_result` items (their `content`) or
    /// a message of role `toolResult`.
    fn read(&self, v: &Value, line: usize, out: &mut impl Turns) {
        let ts = str_at(v, "timestamp");
        let items = v.pointer("/message/content").and_then(Value::as_array);
        let items = items.into_iter().flatten();
        match v.pointer(self.role_at).and_then(Value::as_str) {
            Some("user") => {
                let texts: Vec<&str> = items
                    .clone()
                    .filter(|i| str_at(i, "type") == "text")
                    .filter_map(|i| (self.prompt)(str_at(i, "text")))
                    .collect();
                out.prompt(texts.join("\n"), ts, line);
                for result in items.filter(|i| str_at(i, "type") == "tool_result") {
                    out.output(&text_of(result.get("content").unwrap_or(&Value::Null)));
                }
            }
            Some("assistant") => {
                let (kind, args) = self.call;
                for item in items {
                    match str_at(item, "type") {
                        "text" => out.reply(str_at(item, "text")),
                        "thinking" => out.thinking(str_at(item, "thinking")),
                        k if k == kind => {
                            let args = item.get(args).unwrap_or(&Value::Null);
                            out.tool_call(self.write_tools, str_at(item, "name"), args, ts, line);
                        }
                        _ => {}
                    }
                }
            }
            Some("toolResult") => {
                out.output(&text_of(
                    v.pointer("/message/content").unwrap_or(&Value::Null),
                ));
            }
            _ => {}
        }
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

/// Reads the writes and prompts of a transcript, whatever its format.
pub fn extract(transcript: &[u8]) -> AgentWrites {
    let Some(doc) = document(transcript) else {
        return jsonl::extract(transcript);
    };
    let mut out = match () {
        _ if gemini::is(&doc.value) => gemini::read(&doc.value),
        _ if opencode::is(&doc.value) => opencode::read(&doc.value),
        _ if kiro::is(&doc.value) => kiro::read(&doc.value),
        // One line of JSON may be a transcript of one entry.
        _ if doc.one_line => return jsonl::extract(transcript),
        _ => AgentWrites::new(TranscriptFormat::Unknown),
    };
    out.json_lines = 1;
    out
}

/// Whether `transcript` is in a shape agents write: JSON lines (its first and last non-empty
/// lines each parse as JSON; the lines between are left unparsed, so checking costs nothing
/// on a large transcript), or one JSON document of an agent that stores one (Gemini CLI,
/// OpenCode, Kiro). An empty transcript is one. A transcript that is not is still stored as
/// given; only nothing can be read from it.
pub fn is_transcript_shaped(transcript: &[u8]) -> bool {
    if let Some(doc) = document(transcript) {
        if gemini::is(&doc.value) || opencode::is(&doc.value) || kiro::is(&doc.value) {
            return true;
        }
        if !doc.one_line {
            return false;
        }
    }
    let mut lines = transcript
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty());
    let json = |l: &[u8]| serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok();
    match (lines.next(), lines.next_back()) {
        (None, _) => true,
        (Some(first), last) => json(first) && last.is_none_or(json),
    }
}

/// A transcript that is one JSON document.
struct Document {
    value: Value,
    /// Whether it is on one line (then it may also be JSONL of one entry).
    one_line: bool,
}

/// The transcript as one JSON document, when it may be one: it is a single line, or its first
/// line is not JSON on its own (a pretty-printed document). JSON lines are never parsed whole.
fn document(transcript: &[u8]) -> Option<Document> {
    let text = transcript.trim_ascii();
    if text.first() != Some(&b'{') {
        return None;
    }
    let first = match memchr::memchr(b'\n', text) {
        None => text,
        Some(at) => &text[..at],
    };
    let one_line = first.len() == text.len();
    if !one_line && serde_json::from_slice::<serde::de::IgnoredAny>(first).is_ok() {
        return None;
    }
    let value = serde_json::from_slice(text).ok()?;
    Some(Document { value, one_line })
}

/// The text of a string, or of a list of parts (strings, or objects with a `text`), joined by
/// newlines; "" for anything else.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                other => other.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The string at `key` of `v` ("" when absent or not a string).
fn str_at<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The array at `key` of `v` (empty when absent or not an array): a document transcript's
/// messages (Gemini CLI, OpenCode) or turns (Kiro).
fn array_at<'v>(v: &'v Value, key: &str) -> &'v [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_and_known_documents_are_transcript_shaped() {
        for shaped in [
            &b""[..],
            b"\n\n",
            b"{\"type\":\"user\"}\n",
            b"{\"a\":1}\n{\"b\":2}\n\n",
            b"{\"kind\":\"other\"}",
            b"{\n  \"sessionId\": \"s\",\n  \"messages\": [{\"type\": \"user\", \"content\": \"hi\"}]\n}\n",
        ] {
            assert!(is_transcript_shaped(shaped), "{}", String::from_utf8_lossy(shaped));
        }
        for not in [
            &b"plain text\n"[..],
            b"{\"a\":1}\nthe end\n",
            b"# Notes\n{\"a\":1}\n",
            b"{\n  \"some\": \"document\"\n}\n",
        ] {
            assert!(
                !is_transcript_shaped(not),
                "{}",
                String::from_utf8_lossy(not)
            );
        }
    }

    #[test]
    fn what_is_not_a_known_transcript_yields_nothing() {
        let text = extract(b"plain text\nnot json either\n");
        assert!(!text.is_json());
        assert_eq!(text.skipped_lines, 2);
        assert_eq!(text.format, TranscriptFormat::Unknown);
        let other = extract(b"{\"kind\":\"other\",\"parts\":[]}\n");
        assert!(other.is_json());
        assert_eq!(other.format, TranscriptFormat::Unknown);
        assert!(other.writes.is_empty());
        let doc = extract(b"{\n  \"kind\": \"other\"\n}\n");
        assert_eq!(doc.format, TranscriptFormat::Unknown);
        assert!(doc.is_json(), "a document of another shape is still JSON");
        assert!(extract(b"").is_json());
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

    #[test]
    fn files_are_listed_once_in_the_order_first_written() {
        let mut w = AgentWrites::new(TranscriptFormat::Pi);
        for f in ["b.go", "a.go", "b.go"] {
            use super::Turns;
            w.write("write", f, "x", "", 1);
        }
        assert_eq!(w.files(), ["b.go", "a.go"]);
    }
}
