//! Where Codex keeps its sessions: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`,
//! every project's together; the first line (`session_meta`) names the session (`payload.id`)
//! and the directory it ran in (`payload.cwd`).

use std::path::{Path, PathBuf};

use crate::agents::history::{header, string_at, within, History};
use crate::agents::id::TranscriptFormat;

fn places(home: &Path, _worktree: &Path) -> Vec<PathBuf> {
    vec![home.join(".codex").join("sessions")]
}

fn session(path: &Path, head: &[u8], worktree: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy();
    if !(name.starts_with("rollout-") && name.ends_with(".jsonl")) {
        return None;
    }
    let meta = header(head)?;
    if string_at(&meta, "/type").as_deref() != Some("session_meta") {
        return None;
    }
    within(&string_at(&meta, "/payload/cwd")?, worktree)
        .then(|| string_at(&meta, "/payload/id"))
        .flatten()
}

/// Codex's store of past sessions.
pub(crate) static HISTORY: History = History {
    agent: "codex",
    format: TranscriptFormat::Codex,
    places,
    depth: 4,
    session,
    usage_beside: None,
};
