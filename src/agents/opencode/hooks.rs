//! OpenCode's hooks: OpenCode has no hook commands, so `enable --agent opencode` writes a
//! plugin of ours, `.opencode/plugins/entire-checkpoints.ts` (OpenCode loads every plugin file
//! of that directory), which runs our command with a JSON payload of its own making on
//! `session.created`, each user message (`chat.message`), each tool call (`tool.execute.after`)
//! and `session.idle` (the end of a turn). OpenCode keeps sessions in its own store and names no
//! transcript file: the session is read with `opencode export <session ID>` (docs/agents.md).

use crate::agents::event::{EventKind, PayloadKeys};
use crate::agents::hook::{AgentHooks, EventSpec, Layout, COMMAND};
use crate::agents::id::TranscriptFormat;

/// The events of OpenCode our plugin reports.
const EVENTS: [EventSpec; 4] = [
    EventSpec::on("session.created", EventKind::SessionStart),
    EventSpec::on("chat.message", EventKind::Prompt),
    EventSpec::on("tool.execute.after", EventKind::ToolUsed),
    EventSpec::on("session.idle", EventKind::TurnEnd),
];

/// Our plugin, whole. Bun's shell runs our command with the payload on stdin, quietly and never
/// throwing, and not at all when our command is not on `PATH` (OpenCode 1.18.33 then hung on
/// git's failure, run after run): a failing hook must not disturb OpenCode.
fn render(_: &AgentHooks) -> String {
    format!(
        r#"// Written by `git entire-checkpoint enable --agent opencode`: records this repository's
// OpenCode sessions as checkpoints. `git entire-checkpoint disable --agent opencode` removes it.
export const EntireCheckpoints = async ({{ $, directory }}: any) => {{
  const send = async (event: string, fields: Record<string, unknown>) => {{
    const payload = JSON.stringify({{ hook_event_name: event, cwd: directory, ...fields }})
    // Without our command on PATH, Bun's shell can wait forever on git's "not a git command".
    if (!Bun.which("git-entire-checkpoint")) return
    try {{
      await $`{COMMAND} opencode ${{event}} < ${{new Response(payload)}}`.cwd(directory).quiet().nothrow()
    }} catch {{
      // never disturb the agent
    }}
  }}
  return {{
    event: async ({{ event }}: any) => {{
      if (event?.type === "session.created") {{
        await send("session.created", {{ session_id: event.properties?.info?.id }})
      }} else if (event?.type === "session.idle") {{
        await send("session.idle", {{ session_id: event.properties?.sessionID }})
      }}
    }},
    "chat.message": async (input: any, output: any) => {{
      const prompt = (output?.parts ?? [])
        .filter((p: any) => p?.type === "text" && !p?.synthetic)
        .map((p: any) => p.text)
        .join("\n")
      await send("chat.message", {{ session_id: input?.sessionID, prompt }})
    }},
    "tool.execute.after": async (input: any) => {{
      await send("tool.execute.after", {{ session_id: input?.sessionID, tool: input?.tool }})
    }},
  }}
}}
"#
    )
}

/// OpenCode's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "opencode",
    format: TranscriptFormat::OpenCode,
    config: ".opencode/plugins/entire-checkpoints.ts",
    local_config: None,
    layout: Layout::OwnFile(render),
    events: &EVENTS,
    payload: PayloadKeys::SNAKE_CASE,
    dir: ".opencode",
    binary: "opencode",
    note: None,
    export: Some("opencode"),
    transcript_of: None,
};
