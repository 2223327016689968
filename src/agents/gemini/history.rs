//! Where Gemini CLI keeps its sessions: `~/.gemini/tmp/<project>/chats/session-*.json` (one
//! document) or `.jsonl` (since 0.60), where `<project>` is the SHA-256 of the project's root
//! (hex) or, in newer versions, a short name (the root's last component); the session's
//! `projectHash` (that same SHA-256) says which project it is, and `sessionId` names it.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::agents::history::{header, string_at, History};
use crate::agents::id::TranscriptFormat;

/// The hash Gemini CLI names a project by: SHA-256 of its root's path, in hex.
fn project_hash(worktree: &Path) -> String {
    Sha256::digest(worktree.to_string_lossy().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn places(home: &Path, worktree: &Path) -> Vec<PathBuf> {
    let tmp = home.join(".gemini").join("tmp");
    let mut dirs = vec![tmp.join(project_hash(worktree)).join("chats")];
    if let Some(name) = worktree.file_name() {
        dirs.push(tmp.join(name).join("chats"));
    }
    dirs
}

fn session(path: &Path, head: &[u8], worktree: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy();
    if !(name.starts_with("session-") && (name.ends_with(".json") || name.ends_with(".jsonl"))) {
        return None;
    }
    let doc = header(head)?;
    (string_at(&doc, "/projectHash")? == project_hash(worktree))
        .then(|| string_at(&doc, "/sessionId"))
        .flatten()
}

/// Gemini CLI's store of past sessions.
pub(crate) static HISTORY: History = History {
    agent: "gemini",
    format: TranscriptFormat::GeminiCli,
    places,
    depth: 1,
    session,
    usage_beside: None,
};
