//! Gemini CLI's hooks: `hooks` in `.gemini/settings.json`, each event's entries a matcher and
//! named command handlers; its own event names (a prompt is `BeforeAgent`, the end of a turn
//! `AfterAgent`, a tool call `AfterTool`); the payload carries `session_id`, `transcript_path`,
//! `cwd` and `prompt` (docs/agents.md).

use crate::agents::event::{EventKind, PayloadKeys};
use crate::agents::hook::{AgentHooks, EventSpec, Layout};
use crate::agents::id::TranscriptFormat;

/// The events of Gemini CLI we hook.
const EVENTS: [EventSpec; 5] = [
    EventSpec::on("SessionStart", EventKind::SessionStart),
    EventSpec::on("BeforeAgent", EventKind::Prompt),
    EventSpec::on("AfterTool", EventKind::ToolUsed).matching("*"),
    EventSpec::on("AfterAgent", EventKind::TurnEnd),
    EventSpec::on("SessionEnd", EventKind::SessionEnd),
];

/// Gemini CLI's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "gemini",
    format: TranscriptFormat::GeminiCli,
    config: ".gemini/settings.json",
    local_config: None,
    layout: Layout::Nested { named: true },
    events: &EVENTS,
    payload: PayloadKeys::SNAKE_CASE,
    dir: ".gemini",
    binary: "gemini",
    note: None,
    export: None,
    transcript_of: None,
};
