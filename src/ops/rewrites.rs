//! The local rewrite map: which commits replaced which, and the checkpoint links a rewritten
//! commit inherited without carrying them in its message.
//!
//! Trailers are the link between a commit and its checkpoints, and git copies them whenever it
//! copies a message (rebase, cherry-pick, `commit --amend` without a new message). Where git
//! builds a new message (`fixup`, a reworded commit, an amend whose trailer the user's editor
//! dropped) the `post-rewrite` hook records here, from git's old→new list, the links the new
//! commit inherited, as `notes.rewriteRef` copies notes. The file lives in
//! `<common dir>/entire/rewrites.json`:
//!
//! ```json
//! {"version":1,"commits":{"<new sha>":{"rewritten_from":["<old sha>"],"checkpoints":["<id>"]}}}
//! ```
//!
//! `checkpoints` holds only the IDs the new commit's message lacks; `rewritten_from` every
//! linked commit it replaced, so a checkpoint's `commit_sha` can be followed to the commit that
//! carries it today.

use crate::base::error::{io_context, IoError};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::base::fs::{read_owned, write_atomic, FileLock};
use crate::base::id::CheckpointId;
use crate::git::repo::Repo;
use crate::model::trailers::{checkpoint_trailers, TrailerValue, Trailers};

const FILE: &str = "rewrites.json";
const VERSION: u32 = 1;

/// Errors reading or writing the rewrite map.
#[derive(Debug, thiserror::Error)]
pub enum RewriteMapError {
    /// The file could not be read, locked or written.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The file is not a rewrite map (left as it is; nothing recorded).
    #[error("rewrite map {path} is corrupt")]
    Corrupt {
        /// The file.
        path: String,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
}

/// What the map knows about one rewritten commit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rewritten {
    /// The linked commits it replaced, oldest record first.
    pub rewritten_from: Vec<String>,
    /// Checkpoint IDs it inherited that its message does not carry.
    pub checkpoints: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct MapFile {
    version: u32,
    commits: BTreeMap<String, Rewritten>,
}

/// The rewrite map of a repository (shared by its worktrees).
#[derive(Debug)]
pub struct RewriteMap {
    file: MapFile,
}

impl RewriteMap {
    fn path(repo: &Repo) -> PathBuf {
        repo.common_dir().join("entire").join(FILE)
    }

    /// Reads the map; a missing file is an empty map.
    pub fn load(repo: &Repo) -> Result<RewriteMap, RewriteMapError> {
        let path = Self::path(repo);
        let shown = path.display().to_string();
        let file = match read_owned(&path, 256 << 20)
            .and_then(|b| b.ok_or(std::io::ErrorKind::NotFound.into()))
        {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|source| RewriteMapError::Corrupt {
                    path: shown,
                    source,
                })?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => MapFile {
                version: VERSION,
                commits: BTreeMap::new(),
            },
            Err(source) => return Err(io_context(format!("rewrite map {shown}"))(source).into()),
        };
        Ok(RewriteMap { file })
    }

    /// What the map records for `commit` (a full SHA), if anything.
    pub fn get(&self, commit: &str) -> Option<&Rewritten> {
        self.file.commits.get(commit)
    }
}

/// How long the history search of [`linking_commits`] may take.
const SEARCH_BUDGET: std::time::Duration = std::time::Duration::from_secs(120);

/// The commits that link checkpoint `id`, newest first: those on branches, tags and
/// remote-tracking branches (the v1 branches excluded) whose `Entire-Checkpoint` trailers name
/// it, found by one `git log`, then those the rewrite map says inherited it.
pub fn linking_commits(
    repo: &Repo,
    map: Option<&RewriteMap>,
    id: &CheckpointId,
) -> Result<Vec<String>, crate::git::subprocess::GitError> {
    let dir = repo.workdir().unwrap_or(repo.common_dir());
    // A parsed ID is letters and digits only: it cannot become an option or a pattern.
    let mut found = Vec::new();
    for (sha, message) in crate::git::plumbing::commits_mentioning(dir, id.as_str(), SEARCH_BUDGET)?
    {
        if links(&message, map.and_then(|m| m.get(&sha))).contains(id) {
            found.push(sha);
        }
    }
    for (sha, r) in map.into_iter().flat_map(|m| &m.file.commits) {
        let inherits = r.checkpoints.iter().any(|c| c == id.as_str());
        if inherits && !found.contains(sha) && repo.has_commit(sha) {
            found.push(sha.clone());
        }
    }
    Ok(found)
}

/// Every checkpoint a commit links: its valid `Entire-Checkpoint` trailers, then what the
/// rewrite map says it inherited, de-duplicated in order.
pub fn links(message: &str, inherited: Option<&Rewritten>) -> Vec<CheckpointId> {
    links_of(checkpoint_trailers(message), inherited)
}

/// [`links`] of a message whose trailers are already parsed.
pub fn links_of(trailers: Trailers, inherited: Option<&Rewritten>) -> Vec<CheckpointId> {
    let mut out: Vec<CheckpointId> = trailers
        .into_iter()
        .filter_map(|t| match t {
            TrailerValue::Valid(id) => Some(id),
            TrailerValue::Malformed(_) => None,
        })
        .collect();
    let mut seen: HashSet<CheckpointId> = out.iter().cloned().collect();
    for id in inherited.into_iter().flat_map(|r| &r.checkpoints) {
        if let Ok(id) = CheckpointId::parse(id) {
            if seen.insert(id.clone()) {
                out.push(id);
            }
        }
    }
    out
}

/// One rewrite to record: `new` replaced `old`, which linked `old_links`.
#[derive(Debug)]
pub struct Rewrite {
    /// The commit replaced.
    pub old: String,
    /// The commit that replaced it.
    pub new: String,
    /// Every checkpoint `old` linked (see [`links`]).
    pub old_links: Vec<CheckpointId>,
    /// The checkpoints `new`'s message carries.
    pub new_trailers: Vec<CheckpointId>,
}

/// Records `rewrites` under the map's lock (so two worktrees rebasing at once both land).
/// Rewrites of commits that linked nothing are not recorded. Returns the IDs that live on only
/// through the map: `(new commit, id)`.
pub fn record(
    repo: &Repo,
    rewrites: &[Rewrite],
) -> Result<Vec<(String, CheckpointId)>, RewriteMapError> {
    let path = RewriteMap::path(repo);
    let io = |source| {
        RewriteMapError::from(io_context(format!("rewrite map {}", path.display()))(
            source,
        ))
    };
    let _lock = FileLock::exclusive(&path.with_extension("json.lock")).map_err(io)?;
    let mut map = RewriteMap::load(repo)?;
    let mut carried = Vec::new();
    let mut changed = false;
    for rw in rewrites.iter().filter(|rw| !rw.old_links.is_empty()) {
        let entry = map.file.commits.entry(rw.new.clone()).or_default();
        if !entry.rewritten_from.contains(&rw.old) {
            entry.rewritten_from.push(rw.old.clone());
            changed = true;
        }
        for id in rw
            .old_links
            .iter()
            .filter(|id| !rw.new_trailers.contains(id))
        {
            if !entry.checkpoints.iter().any(|c| c == id.as_str()) {
                entry.checkpoints.push(id.as_str().to_owned());
                changed = true;
            }
            carried.push((rw.new.clone(), id.clone()));
        }
    }
    if changed {
        map.file.version = VERSION;
        let mut bytes = serde_json::to_vec_pretty(&map.file).expect("the map serializes");
        bytes.push(b'\n');
        write_atomic(&path, &bytes, 0o644).map_err(io)?;
    }
    Ok(carried)
}

/// A commit and the checkpoints it links.
#[derive(Debug)]
pub struct CommitLinks {
    /// The commit's full SHA.
    pub sha: String,
    /// Every checkpoint it links (see [`links`]).
    pub ids: Vec<CheckpointId>,
    /// Its malformed `Entire-Checkpoint` values (ignored).
    pub malformed: Vec<String>,
    /// The warning for the trailers beyond the bound, not read
    /// ([`crate::model::trailers::MAX_TRAILERS`]).
    pub ignored: Option<String>,
}

/// The checkpoints the commit `rev` names (any commit-ish) links, through its trailers and
/// `map`; `None` when `rev` names no commit.
pub fn commit_links(repo: &Repo, map: Option<&RewriteMap>, rev: &str) -> Option<CommitLinks> {
    let (commit, message) = repo.commit_and_message(rev)?;
    let sha = commit.to_string();
    let message = String::from_utf8_lossy(&message);
    let trailers = checkpoint_trailers(&message);
    let malformed = (&trailers)
        .into_iter()
        .filter_map(|t| match t {
            TrailerValue::Malformed(tok) => Some(tok.clone()),
            TrailerValue::Valid(_) => None,
        })
        .collect();
    let ignored = trailers.ignored_notice();
    let ids = links_of(trailers, map.and_then(|m| m.get(&sha)));
    Some(CommitLinks {
        sha,
        ids,
        malformed,
        ignored,
    })
}

impl crate::base::error::ExitStatus for RewriteMapError {
    fn exit_code(&self) -> i32 {
        match self {
            RewriteMapError::Io(_) | RewriteMapError::Corrupt { .. } => crate::base::error::FAILURE,
        }
    }
}
