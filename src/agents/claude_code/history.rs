//! Where Claude Code keeps its sessions: `~/.claude/projects/<the directory it ran in, every
//! character but letters and digits as ->/<session>.jsonl` (a subagent's transcript lies one
//! level further down, in `<session>/subagents/`, and is not a session of its own).

use std::path::{Path, PathBuf};

use crate::agents::history::{dashed, stem_with, History};
use crate::agents::id::TranscriptFormat;

fn places(home: &Path, worktree: &Path) -> Vec<PathBuf> {
    vec![home.join(".claude").join("projects").join(dashed(worktree))]
}

fn session(path: &Path, _head: &[u8], _worktree: &Path) -> Option<String> {
    stem_with(path, "jsonl")
}

/// Claude Code's store of past sessions.
pub(crate) static HISTORY: History = History {
    agent: "claude-code",
    format: TranscriptFormat::ClaudeCode,
    places,
    depth: 1,
    session,
    usage_beside: None,
};
