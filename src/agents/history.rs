//! Where each agent keeps the sessions it ran, for importing them (`session import`,
//! docs/agents.md, "Importing the sessions that came before"): the directories that may hold a
//! work tree's sessions, given the home directory, and which session a file there holds, read
//! from its name and its first line (its header); or, for an agent whose store only its own
//! command reads (OpenCode's database), that command, and which sessions its listing names.
//! Pure: `ops::import` lists the directories, reads the files and runs the commands.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::id::TranscriptFormat;
use crate::model::documents::TokenUsage;

/// An agent's store of past sessions, as files.
#[derive(Debug)]
pub struct History {
    /// The agent's name on our command line (`--agent`).
    pub agent: &'static str,
    /// The format of its transcripts.
    pub format: TranscriptFormat,
    /// The directories that may hold the sessions run in `worktree`, under the home directory
    /// `home`.
    pub places: fn(home: &Path, worktree: &Path) -> Vec<PathBuf>,
    /// How many directory levels below a place its session files lie (1: in it).
    pub depth: usize,
    /// The ID of the session the file at `path` holds, when it is a session run in `worktree`
    /// (or below it); `head` is the file's start, its first line at least.
    pub session: fn(path: &Path, head: &[u8], worktree: &Path) -> Option<String>,
    /// For an agent whose transcript records no token usage, the file beside the transcript at
    /// `path` that holds the session's (its totals), and how to read it from that file's bytes.
    pub usage_beside: Option<UsageBeside>,
}

/// Where an agent keeps a session's token usage beside its transcript, and how it is read.
#[derive(Debug, Clone, Copy)]
pub struct UsageBeside {
    /// The file, given the transcript's path.
    pub file: fn(transcript: &Path) -> Option<PathBuf>,
    /// The session's token usage, from that file's bytes.
    pub read: fn(bytes: &[u8]) -> Option<TokenUsage>,
}

/// An agent's store of past sessions that only its own command reads: `<program> <list...>`,
/// run in the work tree, lists the sessions of its project, and `<program> export <session ID>`
/// prints one session's transcript.
#[derive(Debug)]
pub struct CommandHistory {
    /// The agent's name on our command line (`--agent`).
    pub agent: &'static str,
    /// The format of its transcripts (its exports).
    pub format: TranscriptFormat,
    /// Its command.
    pub program: &'static str,
    /// The arguments that make it list the sessions.
    pub list: &'static [&'static str],
    /// The sessions run in `worktree` (or below it) that `listing`, what the list command
    /// printed, names; none when it is not a listing.
    pub sessions: fn(listing: &[u8], worktree: &Path) -> Vec<ListedSession>,
}

/// A session an agent's listing names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSession {
    /// Its ID.
    pub id: String,
    /// When it was last updated (RFC 3339), when the listing says.
    pub updated_at: Option<String>,
}

/// Every agent whose past sessions only its own command reads.
pub fn by_command() -> [&'static CommandHistory; 1] {
    [&super::opencode::HISTORY]
}

/// Every agent whose past sessions can be found as files.
pub fn all() -> [&'static History; 6] {
    [
        &super::claude_code::HISTORY,
        &super::codex::HISTORY,
        &super::gemini::HISTORY,
        &super::cursor::HISTORY,
        &super::copilot::HISTORY,
        &super::droid::HISTORY,
    ]
}

/// `path` as a directory name with every character but ASCII letters and digits made `-`
/// (`/home/dev/proj` is `-home-dev-proj`), as Claude Code and Cursor name a project's folder.
pub(crate) fn dashed(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The first line of `head` as JSON, else `head` whole (an agent that stores one JSON document
/// may pretty-print it).
pub(crate) fn header(head: &[u8]) -> Option<Value> {
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    serde_json::from_slice(first)
        .ok()
        .or_else(|| serde_json::from_slice(head).ok())
}

/// The string at the JSON pointer `at` of `v`, when there is a non-empty one.
pub(crate) fn string_at(v: &Value, at: &str) -> Option<String> {
    v.pointer(at)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Whether the directory `cwd` a session recorded is `worktree` or lies below it.
pub(crate) fn within(cwd: &str, worktree: &Path) -> bool {
    Path::new(cwd).starts_with(worktree)
}

/// The name of `path` without its extension, when it ends with `.<ext>`.
pub(crate) fn stem_with(path: &Path, ext: &str) -> Option<String> {
    (path.extension()? == ext)
        .then(|| path.file_stem())
        .flatten()
        .map(|s| s.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_places_its_sessions_under_home() {
        let (home, wt) = (Path::new("/h"), Path::new("/h/src/proj.x"));
        assert_eq!(dashed(wt), "-h-src-proj-x");
        for h in all() {
            let places = (h.places)(home, wt);
            assert!(!places.is_empty(), "{}", h.agent);
            assert!(places.iter().all(|p| p.starts_with(home)), "{}", h.agent);
        }
    }

    #[test]
    fn a_session_belongs_to_its_work_tree_or_below() {
        let wt = Path::new("/h/proj");
        assert!(within("/h/proj", wt));
        assert!(within("/h/proj/sub", wt));
        assert!(!within("/h/project", wt));
        assert!(!within("/h", wt));
    }
}
