//! Factory Droid's hooks: `hooks` in `.factory/settings.json`, laid out and named as Claude
//! Code's; the payload carries `session_id`, `transcript_path` (under `~/.factory/sessions/`),
//! `cwd` and, for a prompt, `prompt` (docs/agents.md).

use crate::agents::event::PayloadKeys;
use crate::agents::hook::{AgentHooks, Layout, CLAUDE_SHAPED_EVENTS};
use crate::agents::id::TranscriptFormat;

/// Droid's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "droid",
    format: TranscriptFormat::Droid,
    config: ".factory/settings.json",
    local_config: None,
    layout: Layout::Nested { named: false },
    events: &CLAUDE_SHAPED_EVENTS,
    payload: PayloadKeys::SNAKE_CASE,
    dir: ".factory",
    binary: "droid",
    note: None,
    export: None,
    transcript_of: None,
};
