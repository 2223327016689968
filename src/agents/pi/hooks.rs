//! Pi's hooks: Pi has no hook commands but loads every TypeScript extension of
//! `.pi/extensions/` (`@mariozechner/pi-coding-agent`, docs/extensions.md), so `enable --agent
//! pi` writes an extension of ours, `.pi/extensions/entire-checkpoints.ts`, which runs our
//! command with a JSON payload of its own making on `session_start`, `before_agent_start` (the
//! prompt), `tool_result`, `agent_end` (the end of the user's prompt) and `session_shutdown`.
//! The payload names the session file Pi's session manager writes (`~/.pi/agent/sessions/`,
//! JSON lines), the transcript (docs/agents.md).

use crate::agents::event::{EventKind, PayloadKeys};
use crate::agents::hook::{plugin_runner, AgentHooks, EventSpec, Layout};
use crate::agents::id::TranscriptFormat;

/// The events of Pi our extension reports.
const EVENTS: [EventSpec; 5] = [
    EventSpec::on("session_start", EventKind::SessionStart),
    EventSpec::on("before_agent_start", EventKind::Prompt),
    EventSpec::on("tool_result", EventKind::ToolUsed),
    EventSpec::on("agent_end", EventKind::TurnEnd),
    EventSpec::on("session_shutdown", EventKind::SessionEnd),
];

/// Our extension, whole. Each handler returns nothing (a `tool_result` or `before_agent_start`
/// handler that returned something would change Pi's result or prompt) and never throws.
fn render(hooks: &AgentHooks) -> String {
    let run = plugin_runner(hooks.name);
    format!(
        r#"// Written by `git entire-checkpoint enable --agent pi`: records this repository's Pi
// sessions as checkpoints. `git entire-checkpoint disable --agent pi` removes it.
import {{ spawn }} from "node:child_process";

export default function (pi: any) {{
{run}
  // What Pi's session manager says of the session: its ID and its file.
  const send = (event: string, ctx: any, fields: Record<string, unknown> = {{}}) => {{
    let payload = "";
    try {{
      const sessions = ctx?.sessionManager;
      payload = JSON.stringify({{
        hook_event_name: event,
        session_id: sessions?.getSessionId?.(),
        transcript_path: sessions?.getSessionFile?.(),
        cwd: ctx?.cwd,
        ...fields,
      }});
    }} catch {{
      // never disturb the agent
    }}
    return run(event, ctx?.cwd, payload);
  }};
  pi.on("session_start", async (_event: any, ctx: any) => {{
    await send("session_start", ctx);
  }});
  pi.on("before_agent_start", async (event: any, ctx: any) => {{
    await send("before_agent_start", ctx, {{ prompt: event?.prompt }});
  }});
  pi.on("tool_result", async (_event: any, ctx: any) => {{
    await send("tool_result", ctx);
  }});
  pi.on("agent_end", async (_event: any, ctx: any) => {{
    await send("agent_end", ctx);
  }});
  pi.on("session_shutdown", async (_event: any, ctx: any) => {{
    await send("session_shutdown", ctx);
  }});
}}
"#
    )
}

/// Pi's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "pi",
    format: TranscriptFormat::Pi,
    config: ".pi/extensions/entire-checkpoints.ts",
    local_config: None,
    layout: Layout::OwnFile(render),
    events: &EVENTS,
    payload: PayloadKeys::SNAKE_CASE,
    dir: ".pi",
    binary: "pi",
    note: None,
    export: None,
    transcript_of: None,
};
