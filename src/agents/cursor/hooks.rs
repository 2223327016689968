//! Cursor's hooks (the editor's agent and `cursor-agent`): `{"version": 1, "hooks": {...}}` in
//! `.cursor/hooks.json`, each event a list of commands; the payload carries `conversation_id`
//! (the session), `transcript_path`, `workspace_roots` and, for a prompt, `prompt`
//! (docs/agents.md).

use crate::agents::event::{EventKind, PayloadKeys};
use crate::agents::hook::{AgentHooks, EventSpec, Layout};
use crate::agents::id::TranscriptFormat;

/// The events of Cursor we hook.
const EVENTS: [EventSpec; 5] = [
    EventSpec::on("sessionStart", EventKind::SessionStart),
    EventSpec::on("beforeSubmitPrompt", EventKind::Prompt),
    EventSpec::on("afterFileEdit", EventKind::ToolUsed),
    EventSpec::on("stop", EventKind::TurnEnd),
    EventSpec::on("sessionEnd", EventKind::SessionEnd),
];

/// Cursor's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "cursor",
    format: TranscriptFormat::Cursor,
    config: ".cursor/hooks.json",
    local_config: None,
    layout: Layout::Flat,
    events: &EVENTS,
    payload: PayloadKeys {
        session: &["/conversation_id", "/session_id"],
        transcript: &["/transcript_path"],
        cwd: &["/workspace_roots/0", "/cwd"],
        prompt: &["/prompt"],
        agent_id: &[],
        agent_transcript: &[],
    },
    dir: ".cursor",
    binary: "cursor-agent",
    note: None,
    export: None,
    transcript_of: None,
};
