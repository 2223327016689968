//! Claude Code's hooks: `hooks` in `.claude/settings.json` (or `.claude/settings.local.json`),
//! each event's entries a matcher and command handlers; the payload on stdin carries
//! `session_id`, `transcript_path`, `cwd`, `hook_event_name` and, for a prompt, `prompt`
//! (docs/agents.md).

use crate::agents::event::PayloadKeys;
use crate::agents::hook::{AgentHooks, Layout, CLAUDE_SHAPED_EVENTS};
use crate::agents::id::TranscriptFormat;

/// Claude Code's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "claude-code",
    format: TranscriptFormat::ClaudeCode,
    config: ".claude/settings.json",
    local_config: Some(".claude/settings.local.json"),
    layout: Layout::Nested { named: false },
    events: &CLAUDE_SHAPED_EVENTS,
    payload: PayloadKeys::SNAKE_CASE,
    dir: ".claude",
    binary: "claude",
    note: None,
    export: None,
    transcript_of: None,
};
