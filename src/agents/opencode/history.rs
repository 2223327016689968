//! Where OpenCode keeps its sessions: in a database of its own, which only `opencode` reads.
//! `opencode session list --format json`, run in a repository, lists its project's sessions
//! (every clone's and worktree's of that repository: a JSON array of `id`, `directory`, and
//! `updated` in milliseconds; nothing at all outside a repository), and `opencode export <id>`
//! prints one, the document our hook reads too.

use std::path::Path;

use serde_json::Value;

use super::millis;
use crate::agents::history::{within, CommandHistory, ListedSession};
use crate::agents::id::TranscriptFormat;

fn sessions(listing: &[u8], worktree: &Path) -> Vec<ListedSession> {
    let Ok(Value::Array(listed)) = serde_json::from_slice(listing) else {
        return Vec::new();
    };
    listed
        .iter()
        .filter(|s| {
            s.get("directory")
                .and_then(Value::as_str)
                .is_some_and(|d| within(d, worktree))
        })
        .filter_map(|s| {
            let id = s.get("id")?.as_str().filter(|id| !id.is_empty())?;
            let updated = millis(s.get("updated"));
            Some(ListedSession {
                id: id.to_owned(),
                updated_at: (!updated.is_empty()).then_some(updated),
            })
        })
        .collect()
}

/// OpenCode's store of past sessions.
pub(crate) static HISTORY: CommandHistory = CommandHistory {
    agent: "opencode",
    format: TranscriptFormat::OpenCode,
    program: "opencode",
    list: &["session", "list", "--format", "json"],
    sessions,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_trees_sessions_are_read_from_opencodes_listing() {
        // As OpenCode 1.18.33 prints it, with a session of another clone of the project.
        let listing = br#"[
  {
    "id": "ses_db566a1d5ffeEy44ID6pKZbBOz",
    "title": "ok",
    "updated": 1796547898716,
    "created": 1796547894826,
    "projectId": "7ad2e3b9a11482e7e2e0aee5e5d556472b44a62b",
    "directory": "/w/repo/sub"
  },
  {"id": "ses_other", "updated": 1796547898716, "directory": "/w/repo-clone"}
]"#;
        assert_eq!(
            sessions(listing, Path::new("/w/repo")),
            [ListedSession {
                id: "ses_db566a1d5ffeEy44ID6pKZbBOz".to_owned(),
                updated_at: Some("2026-12-06T09:04:58.716Z".to_owned()),
            }]
        );
        assert_eq!(sessions(b"", Path::new("/w/repo")), []);
        assert_eq!(sessions(b"{}", Path::new("/w/repo")), []);
    }
}
