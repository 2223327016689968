//! Codex's hooks: `hooks` in `.codex/hooks.json`, laid out and named as Claude Code's (event,
//! matcher, command handlers); the payload carries `session_id`, `transcript_path` (the rollout
//! JSONL under `~/.codex/sessions/`), `cwd` and, for a prompt, `prompt` (docs/agents.md).

use crate::agents::event::PayloadKeys;
use crate::agents::hook::{AgentHooks, Layout, CLAUDE_SHAPED_EVENTS};
use crate::agents::id::TranscriptFormat;

/// Codex's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "codex",
    format: TranscriptFormat::Codex,
    config: ".codex/hooks.json",
    local_config: None,
    layout: Layout::Nested { named: false },
    events: &CLAUDE_SHAPED_EVENTS,
    payload: PayloadKeys::SNAKE_CASE,
    dir: ".codex",
    binary: "codex",
    note: Some(
        "Codex runs a repository's hooks only once you trust them: start codex in this repository and approve them under /hooks (codex exec skips them unless given --dangerously-bypass-hook-trust)",
    ),
    export: None,
    transcript_of: None,
};
