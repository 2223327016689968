//! GitHub Copilot CLI's hooks: a hook file of ours, `.github/hooks/entire-checkpoints.json`
//! (`{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": ...}]}}`; Copilot reads
//! every file of that directory); camelCase events and payloads: `sessionId`, `cwd`, `prompt`,
//! and `transcriptPath` (its `events.jsonl` under `~/.copilot/session-state/<id>/`) when a turn
//! ends (docs/agents.md).

use serde_json::{json, Map, Value};

use crate::agents::event::{EventKind, PayloadKeys};
use crate::agents::hook::{AgentHooks, EventSpec, Layout};
use crate::agents::id::TranscriptFormat;

/// The events of Copilot CLI we hook.
const EVENTS: [EventSpec; 6] = [
    EventSpec::on("sessionStart", EventKind::SessionStart),
    EventSpec::on("userPromptSubmitted", EventKind::Prompt),
    EventSpec::on("postToolUse", EventKind::ToolUsed),
    EventSpec::on("agentStop", EventKind::TurnEnd),
    EventSpec::on("subagentStop", EventKind::SubagentEnd),
    EventSpec::on("sessionEnd", EventKind::SessionEnd),
];

/// Our hook file, whole.
fn render(hooks: &AgentHooks) -> String {
    let mut by_event = Map::new();
    for event in hooks.events {
        by_event.insert(
            event.name.to_owned(),
            json!([{"type": "command", "bash": hooks.command(event), "timeoutSec": 30}]),
        );
    }
    let mut text =
        serde_json::to_string_pretty(&json!({"version": 1, "hooks": Value::Object(by_event)}))
            .expect("a JSON value serializes");
    text.push('\n');
    text
}

/// Copilot CLI's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "copilot",
    format: TranscriptFormat::CopilotCli,
    config: ".github/hooks/entire-checkpoints.json",
    local_config: None,
    layout: Layout::OwnFile(render),
    events: &EVENTS,
    payload: PayloadKeys {
        session: &["/sessionId", "/session_id"],
        transcript: &["/transcriptPath", "/transcript_path"],
        cwd: &["/cwd"],
        prompt: &["/prompt"],
        agent_id: &[],
        agent_transcript: &[],
    },
    dir: ".github/hooks",
    binary: "copilot",
    note: None,
    export: None,
    transcript_of: None,
};
