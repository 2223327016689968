//! Where Cursor's agent keeps its sessions: `~/.cursor/projects/<the workspace, every
//! character but letters and digits as -, none leading>/agent-transcripts/`, each conversation
//! as `<id>.jsonl` or `<id>/<id>.jsonl`.

use std::path::{Path, PathBuf};

use crate::agents::history::{dashed, stem_with, History};
use crate::agents::id::TranscriptFormat;

fn places(home: &Path, worktree: &Path) -> Vec<PathBuf> {
    let slug = dashed(worktree);
    vec![home
        .join(".cursor")
        .join("projects")
        .join(slug.trim_start_matches('-'))
        .join("agent-transcripts")]
}

fn session(path: &Path, _head: &[u8], _worktree: &Path) -> Option<String> {
    stem_with(path, "jsonl")
}

/// Cursor's store of past sessions.
pub(crate) static HISTORY: History = History {
    agent: "cursor",
    format: TranscriptFormat::Cursor,
    places,
    depth: 2,
    session,
    usage_beside: None,
};
