//! The conversation a transcript records, for a person to read: each prompt, the agent's
//! replies and thinking, each tool call with what it is about (a file, a command) and what it
//! wrote, each tool's output, in transcript order. Every agent's module reads its own format for
//! this as it does for [`extract`](crate::agents::extract) (the same code, reporting more).
//!
//! Nothing is dropped: every entry (a non-empty line of a JSONL transcript, a message or turn
//! of a transcript that is one JSON document) either gives events, is of a shape its agent's
//! module knows to hold nothing of the conversation (a session header, token counts, a copy of
//! another entry: counted as bookkeeping), or is given whole as [`Turn::Raw`] (not JSON, of no
//! known shape, or before the first entry of a known shape). [`Tally`] counts them.
//!
//! A JSONL transcript is read a line at a time, so memory is bounded by its longest line; a
//! transcript that is one JSON document is read whole.

use std::io::BufRead;

use serde_json::Value;

pub use crate::agents::turns::Unit;

use super::document;
use super::jsonl::JsonLines;
use crate::agents::id::TranscriptFormat;
use crate::agents::registry;
use crate::agents::turns::prompt::{prompt_text, repeats};
use crate::agents::turns::{subject, Turns};

/// One thing the conversation shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// What the user typed.
    Prompt(String),
    /// What the agent said.
    Reply(String),
    /// What the agent thought, when the transcript keeps it.
    Thinking(String),
    /// A tool call.
    ToolCall(ToolCall),
    /// What a tool returned.
    ToolOutput(String),
    /// An entry of no shape known: as stored (a line; a message as compact JSON).
    Raw(String),
}

/// A tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool.
    pub tool: String,
    /// What it is about: the file it names, its command, ... ("" when nothing says).
    pub subject: String,
    /// Its ID in the transcript ("" when the transcript gives none): a subagent it started is
    /// kept under it (`tasks/<id>/`).
    pub id: String,
    /// What it wrote, per file, when it is one of its agent's file-writing tools.
    pub wrote: Vec<Written>,
}

/// The lines a tool call wrote to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file as the call names it.
    pub file: String,
    /// The text it wrote there, line by line.
    pub lines: Vec<String>,
    /// The text it replaced, line by line, when the call says (an edit's old text, a patch's
    /// `-` lines).
    pub replaced: Vec<String>,
}

/// A [`Turn`] and the entry it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The line number in a JSONL transcript, the message's (or turn's) number in a transcript
    /// that is one JSON document (both from 1).
    pub entry: usize,
    /// The prompt's or tool call's time as the transcript records it ("" elsewhere).
    pub timestamp: String,
    /// What it shows.
    pub turn: Turn,
}

/// How the entries of a transcript were accounted for: `entries == shown + bookkeeping + raw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// The format recognised.
    pub format: TranscriptFormat,
    /// What an entry is.
    pub unit: Unit,
    /// Entries read (non-empty lines, messages, turns).
    pub entries: usize,
    /// Entries that gave at least one event other than [`Turn::Raw`].
    pub shown: usize,
    /// Entries of a known shape that hold nothing of the conversation.
    pub bookkeeping: usize,
    /// Entries given whole as [`Turn::Raw`].
    pub raw: usize,
}

/// Reads the transcript `stream`, handing each event to `emit` as soon as its entry is read;
/// stops at the first error of either.
pub fn read(
    mut stream: impl BufRead,
    mut emit: impl FnMut(Event) -> std::io::Result<()>,
) -> std::io::Result<Tally> {
    let mut first = Vec::new();
    stream.read_until(b'\n', &mut first)?;
    let only_line = stream.fill_buf()?.is_empty();
    let trimmed = first.trim_ascii();
    let maybe_document = trimmed.first() == Some(&b'{')
        && (only_line || serde_json::from_slice::<serde::de::IgnoredAny>(trimmed).is_err());
    if maybe_document {
        stream.read_to_end(&mut first)?;
        if let Some(tally) = read_document(&first, &mut emit)? {
            return Ok(tally);
        }
        return read_lines(&mut first.as_slice(), Vec::new(), &mut emit);
    }
    read_lines(&mut stream, first, &mut emit)
}

/// Reads a JSONL transcript whose first line (with its newline) is `first`.
fn read_lines(
    stream: &mut impl BufRead,
    mut line: Vec<u8>,
    emit: &mut impl FnMut(Event) -> std::io::Result<()>,
) -> std::io::Result<Tally> {
    let mut sink = Sink::new(Unit::Line, emit);
    let mut reader = JsonLines::default();
    let mut number = 0;
    if line.is_empty() {
        stream.read_until(b'\n', &mut line)?;
    }
    while !line.is_empty() {
        number += 1;
        let raw = line.trim_ascii();
        if !raw.is_empty() {
            sink.begin(number);
            let json = reader.line(raw, number, &mut sink);
            sink.end(json, || String::from_utf8_lossy(raw).into_owned())?;
        }
        line.clear();
        stream.read_until(b'\n', &mut line)?;
    }
    sink.tally.format = reader.format();
    Ok(sink.tally)
}

/// Reads a transcript that is one JSON document of Gemini CLI, OpenCode or Kiro; `None` when
/// it is not one.
fn read_document(
    text: &[u8],
    emit: &mut impl FnMut(Event) -> std::io::Result<()>,
) -> std::io::Result<Option<Tally>> {
    let Some(doc) = document(text) else {
        return Ok(None);
    };
    let Some(format) = registry::document_format(&doc.value) else {
        return Ok(None);
    };
    let (items, unit) = registry::entries(format, &doc.value);
    let mut sink = Sink::new(unit, emit);
    sink.tally.format = format;
    for (i, item) in items.iter().enumerate() {
        sink.begin(i + 1);
        registry::read_document_entry(format, item, i + 1, &mut sink);
        sink.end(true, || item.to_string())?;
    }
    Ok(Some(sink.tally))
}

/// The [`Turns`] that turns what the agents' readers report into events.
struct Sink<'e, E> {
    emit: &'e mut E,
    tally: Tally,
    /// The entry being read.
    entry: usize,
    /// Events of this entry not yet emitted (a tool call waits for the writes reported after it).
    events: Vec<Event>,
    /// Whether the entry's module said it knows it.
    known: bool,
    /// The last prompt (Codex logs each twice).
    last_prompt: Option<String>,
}

impl<'e, E: FnMut(Event) -> std::io::Result<()>> Sink<'e, E> {
    fn new(unit: Unit, emit: &'e mut E) -> Self {
        Sink {
            emit,
            tally: Tally {
                format: TranscriptFormat::Unknown,
                unit,
                entries: 0,
                shown: 0,
                bookkeeping: 0,
                raw: 0,
            },
            entry: 0,
            events: Vec::new(),
            known: false,
            last_prompt: None,
        }
    }

    fn begin(&mut self, entry: usize) {
        self.entry = entry;
        self.known = false;
        self.tally.entries += 1;
    }

    /// Ends the entry: emits its events, or the entry whole (`raw()`) when it gave none and
    /// its module does not know it (or it is not `json`).
    fn end(&mut self, json: bool, raw: impl FnOnce() -> String) -> std::io::Result<()> {
        if !self.events.is_empty() {
            self.tally.shown += 1;
        } else if self.known && json {
            self.tally.bookkeeping += 1;
        } else {
            self.tally.raw += 1;
            self.push("", Turn::Raw(raw()));
        }
        for event in self.events.drain(..) {
            (self.emit)(event)?;
        }
        Ok(())
    }

    fn push(&mut self, timestamp: &str, turn: Turn) {
        self.events.push(Event {
            entry: self.entry,
            timestamp: timestamp.to_owned(),
            turn,
        });
    }

    /// Pushes `turn` made of `text`, unless `text` is blank (then the entry is known).
    fn text(&mut self, text: &str, turn: fn(String) -> Turn) {
        match text.trim() {
            "" => self.known = true,
            _ => self.push("", turn(text.to_owned())),
        }
    }
}

impl<E: FnMut(Event) -> std::io::Result<()>> Turns for Sink<'_, E> {
    const EVERY_ENTRY: bool = true;

    fn prompt(&mut self, text: String, timestamp: &str, _entry: usize) {
        match prompt_text(text) {
            Some(text) if !repeats(self.last_prompt.as_deref(), &text) => {
                self.last_prompt = Some(text.clone());
                self.push(timestamp, Turn::Prompt(text));
            }
            // Injected by the harness, or a repeat.
            _ => self.known = true,
        }
    }

    fn write(&mut self, tool: &str, file: &str, text: &str, timestamp: &str, _entry: usize) {
        let written = Written {
            file: file.to_owned(),
            lines: text.lines().map(str::to_owned).collect(),
            replaced: Vec::new(),
        };
        match self.events.last_mut() {
            Some(Event {
                turn: Turn::ToolCall(call),
                ..
            }) if call.tool == tool => call.wrote.push(written),
            _ => self.push(
                timestamp,
                Turn::ToolCall(ToolCall {
                    tool: tool.to_owned(),
                    subject: file.to_owned(),
                    id: String::new(),
                    wrote: vec![written],
                }),
            ),
        }
    }

    fn replaced(&mut self, text: &str) {
        if let Some(Event {
            turn: Turn::ToolCall(call),
            ..
        }) = self.events.last_mut()
        {
            if let Some(w) = call.wrote.last_mut() {
                w.replaced = text.lines().map(str::to_owned).collect();
            }
        }
    }

    fn reply(&mut self, text: &str) {
        self.text(text, Turn::Reply);
    }

    fn thinking(&mut self, text: &str) {
        self.text(text, Turn::Thinking);
    }

    fn call(&mut self, tool: &str, args: &Value) {
        let call = ToolCall {
            tool: tool.to_owned(),
            subject: subject(args),
            id: String::new(),
            wrote: Vec::new(),
        };
        self.push("", Turn::ToolCall(call));
    }

    fn call_id(&mut self, id: &str) {
        if let Some(Event {
            turn: Turn::ToolCall(call),
            ..
        }) = self.events.last_mut()
        {
            call.id = id.to_owned();
        }
    }

    fn output(&mut self, text: &str) {
        self.text(text, Turn::ToolOutput);
    }

    fn known(&mut self) {
        self.known = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event of `transcript`, and its tally.
    fn events(transcript: &str) -> (Vec<Event>, Tally) {
        let mut out = Vec::new();
        let tally = read(transcript.as_bytes(), |e| {
            out.push(e);
            Ok(())
        })
        .unwrap();
        assert_eq!(
            tally.entries,
            tally.shown + tally.bookkeeping + tally.raw,
            "{tally:?}"
        );
        (out, tally)
    }

    /// The turns of `transcript`, without the calls' IDs.
    fn turns(transcript: &str) -> Vec<Turn> {
        let mut turns: Vec<Turn> = events(transcript).0.into_iter().map(|e| e.turn).collect();
        for t in &mut turns {
            if let Turn::ToolCall(call) = t {
                call.id.clear();
            }
        }
        turns
    }

    fn call(tool: &str, subject: &str, wrote: &[(&str, &[&str])]) -> Turn {
        Turn::ToolCall(ToolCall {
            tool: tool.to_owned(),
            subject: subject.to_owned(),
            id: String::new(),
            wrote: wrote
                .iter()
                .map(|(f, l)| Written {
                    file: (*f).to_owned(),
                    lines: l.iter().map(|s| (*s).to_owned()).collect(),
                    replaced: Vec::new(),
                })
                .collect(),
        })
    }

    #[test]
    fn a_claude_code_session_reads_as_a_conversation() {
        let t = concat!(
            r#"{"type":"file-history-snapshot","messageId":"x"}"#,
            "\n",
            r#"{"type":"user","message":{"role":"user","content":"add a greeting"},"timestamp":"t1"}"#,
            "\n",
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"tool_use","id":"a","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"b","name":"Write","input":{"file_path":"/p/a.go","content":"package a\nfunc A() {}\n"}}]}}"#,
            "\n\n",
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"a.go\nb.go"}]}}"#,
            "\n",
            r#"{"type":"system","content":"compacted"}"#,
            "\n",
            r#"{"type":"from_the_future","x":1}"#,
            "\n",
            "not json at all\n",
        );
        let (events, tally) = events(t);
        let ids: Vec<&str> = events
            .iter()
            .filter_map(|e| match &e.turn {
                Turn::ToolCall(c) => Some(c.id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["a", "b"], "each call keeps its ID");
        assert_eq!(
            turns(t),
            [
                Turn::Prompt("add a greeting".to_owned()),
                Turn::Thinking("hm".to_owned()),
                Turn::Reply("ok".to_owned()),
                call("Bash", "ls", &[]),
                call(
                    "Write",
                    "/p/a.go",
                    &[("/p/a.go", &["package a", "func A() {}"])]
                ),
                Turn::ToolOutput("a.go\nb.go".to_owned()),
                Turn::Raw(r#"{"type":"from_the_future","x":1}"#.to_owned()),
                Turn::Raw("not json at all".to_owned()),
            ]
        );
        assert_eq!(events[0].timestamp, "t1");
        assert_eq!(events[5].entry, 5, "the blank line is counted");
        assert_eq!(
            (
                tally.format,
                tally.entries,
                tally.shown,
                tally.bookkeeping,
                tally.raw
            ),
            (TranscriptFormat::ClaudeCode, 7, 3, 2, 2)
        );
    }

    #[test]
    fn before_any_entry_says_whose_transcript_it_is_an_unknown_line_is_raw() {
        let t = concat!(
            r#"{"kind":"prologue"}"#,
            "\n",
            r#"{"type":"user","message":{"role":"user","content":"hi"}}"#,
            "\n",
        );
        assert_eq!(
            turns(t),
            [
                Turn::Raw(r#"{"kind":"prologue"}"#.to_owned()),
                Turn::Prompt("hi".to_owned())
            ]
        );
    }

    #[test]
    fn codex_says_each_prompt_once_and_its_events_are_bookkeeping() {
        let t = concat!(
            r#"{"type":"session_meta","payload":{"id":"s"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"rename it"}]}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"rename it"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"plan"}]}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"c"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"a.go"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: b.go\n+package b\n*** End Patch"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Renamed."}]}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"agent_message","message":"Renamed."}}"#,
            "\n",
        );
        let (events, tally) = events(t);
        let turns: Vec<Turn> = events.into_iter().map(|e| e.turn).collect();
        assert_eq!(
            turns,
            [
                Turn::Prompt("rename it".to_owned()),
                Turn::Thinking("plan".to_owned()),
                call("exec_command", "ls", &[]),
                Turn::ToolOutput("a.go".to_owned()),
                call(
                    "apply_patch",
                    "*** Begin Patch",
                    &[("b.go", &["package b"])]
                ),
                Turn::Reply("Renamed.".to_owned()),
            ]
        );
        assert_eq!((tally.entries, tally.bookkeeping, tally.raw), (9, 3, 0));
    }

    #[test]
    fn the_item_agents_show_replies_calls_and_results() {
        let pi = concat!(
            r#"{"type":"session","id":"s"}"#,
            "\n",
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"add a readme"}]}}"#,
            "\n",
            r##"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"Sure."},{"type":"toolCall","name":"write","arguments":{"path":"README.md","content":"# pi\n"}}]}}"##,
            "\n",
            r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"Wrote it"}]}}"#,
            "\n",
        );
        assert_eq!(
            turns(pi),
            [
                Turn::Prompt("add a readme".to_owned()),
                Turn::Reply("Sure.".to_owned()),
                call("write", "README.md", &[("README.md", &["# pi"])]),
                Turn::ToolOutput("Wrote it".to_owned()),
            ]
        );
    }

    #[test]
    fn a_document_reads_message_by_message_and_an_unknown_message_is_raw() {
        let kiro = r#"{"conversation_id":"","history":[{"user":{"content":{"Prompt":{"prompt":"add a note"}}},"assistant":{"Response":{"content":"I will."}}},{"user":{"content":null},"assistant":{"ToolUse":{"tool_uses":[{"name":"fs_write","args":{"path":"n.md","file_text":"note\n"}}]}}},{"odd":1}]}"#;
        let (got, tally) = events(kiro);
        let shown: Vec<Turn> = got.iter().map(|e| e.turn.clone()).collect();
        assert_eq!(
            shown,
            [
                Turn::Prompt("add a note".to_owned()),
                Turn::Reply("I will.".to_owned()),
                call("fs_write", "n.md", &[("n.md", &["note"])]),
                Turn::Raw(r#"{"odd":1}"#.to_owned()),
            ]
        );
        assert_eq!(got[3].entry, 3);
        assert_eq!(
            (tally.format, tally.unit, tally.entries, tally.raw),
            (TranscriptFormat::Kiro, Unit::Turn, 3, 1)
        );
        // Pretty-printed, as Gemini CLI writes it.
        let gemini = "{\n  \"sessionId\": \"s\",\n  \"messages\": [\n    {\"type\": \"user\", \"content\": \"hi\"},\n    {\"type\": \"gemini\", \"content\": \"hello\", \"toolCalls\": [{\"name\": \"read_file\", \"args\": {\"file_path\": \"a.md\"}, \"result\": [{\"functionResponse\": {\"response\": {\"output\": \"# A\"}}}]}]}\n  ]\n}\n";
        assert_eq!(
            turns(gemini),
            [
                Turn::Prompt("hi".to_owned()),
                Turn::Reply("hello".to_owned()),
                call("read_file", "a.md", &[]),
                Turn::ToolOutput("# A".to_owned()),
            ]
        );
    }

    #[test]
    fn what_is_no_transcript_is_raw_line_by_line() {
        let (got, tally) = events("{\n  \"some\": \"document\"\n}\nplain\n");
        assert_eq!(got.len(), 4);
        assert!(got.iter().all(|e| matches!(e.turn, Turn::Raw(_))));
        assert_eq!(
            (tally.format, tally.entries, tally.raw),
            (TranscriptFormat::Unknown, 4, 4)
        );
        assert_eq!(events("").1.entries, 0);
    }
}
