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
        "Codex runs a repository's hooks only in a folder you trust, once you trust the hooks: start codex in this repository, trust it and approve them under /hooks (then codex exec runs them too; or give codex exec --dangerously-bypass-hook-trust)",
    ),
    export: None,
    transcript_of: None,
};
