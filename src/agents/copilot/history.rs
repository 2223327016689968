//! Where Copilot CLI keeps its sessions: `~/.copilot/session-state/<session>/events.jsonl`,
//! every project's together; the first event (`session.start`) names the directory it ran in
//! (`data.context.cwd`).

use std::path::{Path, PathBuf};

use crate::agents::history::{header, string_at, within, History};
use crate::agents::id::TranscriptFormat;

fn places(home: &Path, _worktree: &Path) -> Vec<PathBuf> {
    vec![home.join(".copilot").join("session-state")]
}

fn session(path: &Path, head: &[u8], worktree: &Path) -> Option<String> {
    if path.file_name()? != "events.jsonl" {
        return None;
    }
    let start = header(head)?;
    let cwd = string_at(&start, "/data/context/cwd")?;
    within(&cwd, worktree)
        .then(|| string_at(&start, "/data/sessionId"))
        .flatten()
        .or_else(|| {
            let dir = path.parent()?.file_name()?;
            within(&cwd, worktree).then(|| dir.to_string_lossy().into_owned())
        })
}

/// Copilot CLI's store of past sessions.
pub(crate) static HISTORY: History = History {
    agent: "copilot",
    format: TranscriptFormat::CopilotCli,
    places,
    depth: 2,
    session,
    usage_beside: None,
};
