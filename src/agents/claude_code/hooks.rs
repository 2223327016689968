//! Claude Code's hooks: `hooks` in `.claude/settings.json` (or `.claude/settings.local.json`),
//! each event's entries a matcher and command handlers; the payload on stdin carries
//! `session_id`, `transcript_path`, `cwd`, `hook_event_name` and, for a prompt, `prompt`
//! (docs/agents.md).

use crate::agents::event::{EventKind, PayloadKeys};
use crate::agents::hook::{AgentHooks, EventSpec, Layout};
use crate::agents::id::TranscriptFormat;

/// The events of Claude Code we hook.
const EVENTS: [EventSpec; 6] = [
    EventSpec {
        name: "SessionStart",
        kind: EventKind::SessionStart,
        matcher: None,
    },
    EventSpec {
        name: "UserPromptSubmit",
        kind: EventKind::Prompt,
        matcher: None,
    },
    EventSpec {
        name: "PostToolUse",
        kind: EventKind::ToolUsed,
        matcher: Some("*"),
    },
    EventSpec {
        name: "Stop",
        kind: EventKind::TurnEnd,
        matcher: None,
    },
    EventSpec {
        name: "SubagentStop",
        kind: EventKind::SubagentEnd,
        matcher: None,
    },
    EventSpec {
        name: "SessionEnd",
        kind: EventKind::SessionEnd,
        matcher: None,
    },
];

/// Claude Code's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "claude-code",
    format: TranscriptFormat::ClaudeCode,
    config: ".claude/settings.json",
    local_config: Some(".claude/settings.local.json"),
    layout: Layout::Nested { named: false },
    events: &EVENTS,
    payload: PayloadKeys {
        session: &["/session_id"],
        transcript: &["/transcript_path"],
        cwd: &["/cwd"],
        prompt: &["/prompt"],
    },
    dir: ".claude",
    binary: "claude",
};
