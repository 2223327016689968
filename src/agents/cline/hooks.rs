//! Cline's hooks: Cline runs each executable file of `.clinerules/hooks/` named after one of its
//! hook events (`TaskStart`, `UserPromptSubmit`, ...; the VS Code extension and the `cline` CLI
//! both read that directory), with a JSON payload on stdin, so `enable --agent cline` writes a
//! script of ours per event, each running our command. The payload names the task (`taskId`;
//! its root session in `sessionContext.rootSessionId`), the work tree (`workspaceRoots[0]`) and
//! the prompt (`userPromptSubmit.prompt`), but no transcript: Cline keeps a session's messages
//! in `<sessions>/<session>/<session>.messages.json`, `<sessions>` being
//! `$CLINE_SESSION_DATA_DIR`, else `$CLINE_DATA_DIR/sessions`, else
//! `${CLINE_DIR:-~/.cline}/data/sessions` (Cline runs its hooks with its own environment)
//! (docs/agents.md).

use std::path::PathBuf;

use crate::agents::event::{EventKind, PayloadKeys};
use crate::agents::hook::{AgentHooks, EventSpec, Layout};
use crate::agents::id::TranscriptFormat;

/// The events of Cline we hook, each a script named after it.
const EVENTS: [EventSpec; 7] = [
    EventSpec::on("TaskStart", EventKind::SessionStart),
    EventSpec::on("TaskResume", EventKind::SessionStart),
    EventSpec::on("UserPromptSubmit", EventKind::Prompt),
    EventSpec::on("PostToolUse", EventKind::ToolUsed),
    EventSpec::on("TaskComplete", EventKind::TurnEnd),
    EventSpec::on("TaskCancel", EventKind::TurnEnd),
    EventSpec::on("SessionShutdown", EventKind::SessionEnd),
];

/// Our script for `event`. Cline parses a hook's stdout as its answer (ours prints nothing)
/// and reports a failing hook: our command already exits 0, and a missing one must not fail
/// the hook either.
fn render(hooks: &AgentHooks, event: &EventSpec) -> String {
    format!(
        "#!/bin/sh\n\
         # Written by `git entire-checkpoint enable --agent cline`: records this repository's\n\
         # Cline tasks as checkpoints. `git entire-checkpoint disable --agent cline` removes it.\n\
         {} || true\n",
        hooks.command(event)
    )
}

/// Where Cline keeps the messages of session `id`.
fn transcript_of(id: &str) -> Option<PathBuf> {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let sessions = env("CLINE_SESSION_DATA_DIR")
        .or_else(|| env("CLINE_DATA_DIR").map(|d| d.join("sessions")))
        .or_else(|| {
            env("CLINE_DIR")
                .or_else(|| env("HOME").map(|h| h.join(".cline")))
                .map(|d| d.join("data").join("sessions"))
        })?;
    Some(sessions.join(id).join(format!("{id}.messages.json")))
}

/// Cline's hooks.
pub(crate) static HOOKS: AgentHooks = AgentHooks {
    name: "cline",
    format: TranscriptFormat::Cline,
    config: ".clinerules/hooks",
    local_config: None,
    layout: Layout::Scripts(render),
    events: &EVENTS,
    payload: PayloadKeys {
        session: &["/sessionContext/rootSessionId", "/taskId"],
        transcript: &[],
        cwd: &["/workspaceRoots/0"],
        prompt: &["/userPromptSubmit/prompt"],
        agent_id: &[],
        agent_transcript: &[],
    },
    dir: ".clinerules",
    binary: "cline",
    note: None,
    export: None,
    transcript_of: Some(transcript_of),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_where_cline_keeps_it() {
        let t = transcript_of("1784094053271_p8pzo").unwrap();
        assert!(
            t.ends_with("sessions/1784094053271_p8pzo/1784094053271_p8pzo.messages.json"),
            "{}",
            t.display()
        );
    }
}
