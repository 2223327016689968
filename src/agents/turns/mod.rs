//! What an agent's transcript reader reports, and the sinks it reports to: the [`Turns`]
//! contract, what an entry is ([`Unit`]), the prompts and writes [`AgentWrites`] keeps, the
//! rules of what a prompt is ([`prompt`]), and what every reader shares: reading JSON values
//! ([`json`]), the arguments of a file-writing call ([`tool_args`]), `apply_patch` patches
//! ([`patch`]), and the lines of the agents whose turns are content items ([`items`]). A leaf:
//! it knows no agent.

pub(crate) mod items;
pub(crate) mod json;
mod patch;
pub(crate) mod prompt;
mod tool_args;
mod writes;

pub(crate) use patch::patch_files;
pub(crate) use tool_args::subject;
pub use writes::{is_evidence, same_file, AgentWrite, AgentWrites, Prompt};

use serde_json::Value;

/// What an entry of a transcript is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A line (JSONL).
    Line,
    /// A message of a document (Gemini CLI, OpenCode).
    Message,
    /// A turn of a document (Kiro).
    Turn,
}

impl Unit {
    /// Its name, plural.
    pub fn plural(self) -> &'static str {
        match self {
            Unit::Line => "lines",
            Unit::Message => "messages",
            Unit::Turn => "turns",
        }
    }
}

/// What an agent's reader reports of the entries it reads, in transcript order: prompts and
/// file-writing calls always; replies, thinking, every tool call and tool output, and entries
/// of a known shape that hold nothing of the conversation, for a reader that wants them
/// ([`conversation`](crate::agents::conversation)). One reader per agent serves both
/// [`extract`](crate::agents::extract) and the conversation view.
pub(crate) trait Turns {
    /// Whether every entry is read: else only those that may hold a prompt or a write.
    const EVERY_ENTRY: bool;
    /// A user turn (see [`prompt::prompt_text`]).
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
    /// The ID the transcript gives the last [`Turns::call`], when it gives one (a subagent's
    /// task is kept under the ID of the call that started it).
    fn call_id(&mut self, _id: &str) {}
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
