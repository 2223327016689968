//! Where Factory Droid keeps its sessions: `~/.factory/sessions/<the directory it ran in, `/`
//! as ->/<session>.jsonl`, beside a `<session>.settings.json`.

use std::path::{Path, PathBuf};

use crate::agents::history::{stem_with, History};
use crate::agents::id::TranscriptFormat;

fn places(home: &Path, worktree: &Path) -> Vec<PathBuf> {
    let dir = worktree.to_string_lossy().replace('/', "-");
    vec![home.join(".factory").join("sessions").join(dir)]
}

fn session(path: &Path, _head: &[u8], _worktree: &Path) -> Option<String> {
    stem_with(path, "jsonl")
}

/// Droid's store of past sessions.
pub(crate) static HISTORY: History = History {
    agent: "droid",
    format: TranscriptFormat::Droid,
    places,
    depth: 1,
    session,
};
