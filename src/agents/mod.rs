//! The agents whose transcripts are read, one folder each, and what a transcript shows: the
//! file-writing tool calls of a session transcript, each with the text it wrote and the user
//! prompt before it, for every agent the reference records (docs/blame.md, "Agents"); the
//! conversation it records; the token usage it records. A layer of its own above `model`: an
//! agent does no I/O of the repository and knows no refs, IDs, network or redactor.
//!
//! The format is recognised from the transcript itself, never from the session's `agent` field
//! (which real data gets wrong: a Cursor transcript in a session labelled Claude Code). Three
//! agents store one JSON document ([`gemini`], [`opencode`], [`kiro`]); the others JSON lines,
//! each line an entry ([`claude_code`], [`codex`], [`cursor`], [`copilot`], [`droid`], [`pi`]):
//! the first entry of a known shape decides, and entries of another shape are skipped. Each
//! agent's folder implements the [`TranscriptReader`] contract: which entries or documents are
//! its, where its prompts and file-writing tool calls are, and its replies, thinking, other tool
//! calls and their outputs, reporting each to a [`turns::Turns`] sink ([`AgentWrites`] keeps
//! prompts and writes, the [`conversation`] view everything), and how it records token usage.
//! The [`registry`] holds every agent, and [`read`] reads a transcript of any of them through
//! it. What the agents share (the sinks, the arguments of a file-writing call whatever the agent
//! names them, `apply_patch` patches) is in [`turns`], which knows no agent.
//!
//! Prompts are the user turns a person typed. Text the harness injects (it starts with `<`:
//! `<environment_context>`, `<local-command-stdout>`, ...) and `[Request interrupted ...`
//! markers are not prompts. Writes made by shell commands are not seen.

mod amp;
mod claude_code;
mod cline;
mod codex;
mod config_file;
mod copilot;
mod cursor;
mod droid;
mod event;
mod gemini;
mod history;
mod hook;
mod id;
mod kiro;
mod opencode;
mod pi;
mod read;
mod registry;
mod turns;

pub use config_file::ConfigFileError;
pub use event::{EventKind, HookEvent, PayloadError, SubagentRef};
pub use history::{CommandHistory, History, ListedSession};
pub use hook::{AgentHooks, Edit, Layout, Wiring};
pub use id::TranscriptFormat;
pub use registry::subagent_call;

/// The agents whose past sessions can be found as files ([`history::all`]), and those whose
/// own command reads them ([`history::by_command`]).
pub mod histories {
    pub use super::history::{all, by_command};
}
/// The agents whose hooks we install, and one by its name ([`hook::all`], [`hook::by_name`]).
pub mod hooks {
    pub use super::hook::{all, by_name, COMMAND};
}
pub use read::conversation;
pub use read::{entry_count, extract, is_transcript_shaped, token_usage, EXTRACT_VERSION};
pub use turns::{is_evidence, same_file, AgentWrite, AgentWrites, Prompt};

use serde_json::Value;

use crate::model::documents::TokenUsage;
use turns::Turns;

/// The contract of an agent's transcript reader: each agent's folder implements it for its
/// format, and the [`registry`] holds every agent's and dispatches to it.
trait TranscriptReader {
    /// The format it reads.
    const FORMAT: TranscriptFormat;
    /// How its transcripts record token usage.
    const USAGE: Usage = Usage::None;
    /// What one entry is read from: a JSON value, or the agent's own typed entry (Claude Code,
    /// Codex: theirs are the large transcripts, decoded into types without building a value).
    type Entry<'e>;

    /// Whether `v` is this agent's: for an agent that writes JSON lines, a line (the first line
    /// an agent claims decides a transcript's format); for one that writes one JSON document,
    /// that document.
    fn claims(v: &Value) -> bool;

    /// Reads the entry `e`, number `entry` (a line of JSONL; a message or turn of a document,
    /// from 1), reporting what it holds to `out`.
    fn read(e: Self::Entry<'_>, entry: usize, out: &mut impl Turns);
}

/// The non-empty lines of a JSONL transcript, each with its index among them (from 0).
type Lines<'l, 't> = &'l mut dyn Iterator<Item = (usize, &'t [u8])>;

/// How an agent's transcripts record token usage (docs/format.md, "Token usage from the
/// transcript"); only the entries from a checkpoint's first on count.
#[derive(Clone, Copy)]
enum Usage {
    /// They record none.
    None,
    /// In their JSON lines: the usage the `lines` (from the first line the agent claimed on)
    /// record from the line of index `start` on, when the format has one.
    Lines(for<'l, 't> fn(Lines<'l, 't>, usize) -> Option<TokenUsage>),
    /// In each message of the document: the tokens of the model call a message records.
    Messages(fn(&Value) -> Option<TokenUsage>),
}
