//! Amp's hooks: Amp has no hook commands but loads every TypeScript plugin of `.amp/plugins/`
//! (the `@ampcode/plugin` API, run by Amp's own Bun), so `enable --agent amp` writes a plugin of
//! ours, `.amp/plugins/entire-checkpoints.ts`, which runs our command with a JSON payload of its
//! own making on `session.start`, `agent.start` (the prompt), `tool.result` and `agent.end` (the
//! end of the user's prompt). Amp keeps its threads on its server and names no transcript file:
//! at `agent.end` the plugin appends the turn's messages (the event's `messages`, the plugin
//! API's thread messages) as JSON lines to `<git-common-dir>/entire/amp/<thread>.jsonl`, the
//! transcript it names (docs/agents.md).

use crate::agents::event::{EventKind, PayloadKeys};
use crate::agents::hook::{plugin_runner, AgentHooks, EventSpec, Layout};
use crate::agents::id::TranscriptFormat;

/// The events of Amp our plugin reports.
const EVENTS: [EventSpec; 4] = [
    EventSpec::on("session.start", EventKind::SessionStart),
    EventSpec::on("agent.start", EventKind::Prompt),
    EventSpec::on("tool.result", EventKind::ToolUsed),
    EventSpec::on("agent.end", EventKind::TurnEnd),
];

/// Our plugin, whole. `agent.start`, `tool.result` and `agent.end` are requests whose answer
/// changes Amp's turn: ours answer nothing (`undefined`), and never throw.
fn render(hooks: &AgentHooks) -> String {
    let run = plugin_runner(hooks.name);
    format!(
        r#"// Written by `git entire-checkpoint enable --agent amp`: records this repository's Amp
// threads as checkpoints. `git entire-checkpoint disable --agent amp` removes it.
import {{ spawn, spawnSync }} from "node:child_process";
import {{ appendFileSync, mkdirSync }} from "node:fs";
import {{ fileURLToPath }} from "node:url";
import {{ isAbsolute, join }} from "node:path";

export default function (amp: any) {{
{run}
  const root = (ctx: any): string | undefined => {{
    const uri = ctx?.system?.workspaceRoot;
    try {{
      return uri ? fileURLToPath(String(uri)) : undefined;
    }} catch {{
      return undefined;
    }}
  }};
  // The thread's transcript: what its turns said, one message a line, where git keeps its data.
  const transcript = (cwd: string | undefined, thread: unknown): string | undefined => {{
    if (typeof thread !== "string" || !/^[A-Za-z0-9_-]+$/.test(thread)) return undefined;
    const git = spawnSync("git", ["rev-parse", "--git-common-dir"], {{ cwd, encoding: "utf8" }});
    const dir = git.status === 0 ? git.stdout.trim() : "";
    if (!dir) return undefined;
    return join(isAbsolute(dir) ? dir : join(cwd ?? process.cwd(), dir), "entire", "amp", `${{thread}}.jsonl`);
  }};
  const thread = (event: any, ctx: any): unknown => event?.thread?.id ?? ctx?.thread?.id;
  const send = (event: string, ctx: any, thread: unknown, fields: Record<string, unknown> = {{}}) => {{
    const cwd = root(ctx);
    let payload = "";
    try {{
      payload = JSON.stringify({{
        hook_event_name: event,
        session_id: thread,
        transcript_path: transcript(cwd, thread),
        cwd,
        ...fields,
      }});
    }} catch {{
      // never disturb the agent
    }}
    return run(event, cwd, payload);
  }};
  amp.on("session.start", async (event: any, ctx: any) => {{
    await send("session.start", ctx, thread(event, ctx));
  }});
  amp.on("agent.start", async (event: any, ctx: any) => {{
    await send("agent.start", ctx, thread(event, ctx), {{ prompt: event?.message }});
    return {{}};
  }});
  amp.on("tool.result", async (event: any, ctx: any) => {{
    await send("tool.result", ctx, thread(event, ctx));
    return undefined;
  }});
  amp.on("agent.end", async (event: any, ctx: any) => {{
    try {{
      const file = transcript(root(ctx), thread(event, ctx));
      if (file) {{
        mkdirSync(join(file, ".."), {{ recursive: true }});
        const lines = (event?.messages ?? []).map((m: any) => JSON.stringify(m) + "\n").join("");
        appendFileSync(file, lines);
      }}
    }} catch {{
      // never disturb the agent
    }}
    await send("agent.end", ctx, thread(event, ctx));
    return undefined;
  }});
}}
"#
    )
}

/// Amp's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "amp",
    format: TranscriptFormat::Amp,
    config: ".amp/plugins/entire-checkpoints.ts",
    local_config: None,
    layout: Layout::OwnFile(render),
    events: &EVENTS,
    payload: PayloadKeys::SNAKE_CASE,
    dir: ".amp",
    binary: "amp",
    note: None,
    export: None,
    transcript_of: None,
};
