//! The objects of a repository, as the layers above see them: their IDs ([`Oid`]), and blobs
//! whose size has no bound, streamed from `git cat-file`, which inflates a large blob piece by
//! piece (git stores blobs over `core.bigFileThreshold` undeltified and streams them), so
//! neither process ever holds it whole.

use std::path::Path;

use crate::git::repo::{LibGitError, Repo};
use crate::git::subprocess::{Git, GitError, Stream};

/// The ID of an object, of either format ([`crate::git::format::ObjectFormat`]). It is
/// libgit2's for now: every layer above names it from here, so that its representation can
/// change in this one place.
pub use git2::Oid;

/// The bytes of blob `oid` of the repository whose git dir is `git_dir`, as a stream.
pub fn stream_blob(git_dir: &Path, oid: &str) -> Result<Stream, GitError> {
    Git::new(git_dir)
        .env("GIT_DIR", git_dir)
        .args(["cat-file", "blob", oid])
        .stream()
}

/// A commit and what it changed against its first parent.
#[derive(Debug, Clone)]
pub struct CommitChange {
    /// The commit.
    pub id: Oid,
    /// Its message (lossily UTF-8).
    pub message: String,
    /// The paths it changed (both sides of a rename), `/`-separated, each once, in the diff's
    /// order.
    pub paths: Vec<String>,
}

/// Walks of the commit graph and reads of single commits, for the layers above that need an
/// answer about history and no libgit2 type.
impl Repo {
    /// Whether `commit` descends from `ancestor` (is reachable back to it, and is not it).
    pub fn is_descendant_of(&self, commit: Oid, ancestor: Oid) -> Result<bool, LibGitError> {
        Ok(self.git.graph_descendant_of(commit, ancestor)?)
    }

    /// Whether the histories of `a` and `b` meet (they have a merge base).
    pub fn histories_meet(&self, a: Oid, b: Oid) -> bool {
        self.git.merge_base(a, b).is_ok()
    }

    /// When commit `id` was made: its committer time, in seconds since the epoch.
    pub fn commit_time(&self, id: Oid) -> Result<i64, LibGitError> {
        Ok(self.git.find_commit(id)?.time().seconds())
    }

    /// The commit `rev` names (any commit-ish) and its raw message, or `None` when it names
    /// none.
    pub fn commit_and_message(&self, rev: &str) -> Option<(Oid, Vec<u8>)> {
        let commit = self.git.find_commit(self.resolve_commit(rev)?).ok()?;
        Some((commit.id(), commit.message_bytes().to_vec()))
    }

    /// The URL pushes to the configured remote `name` go to (its `pushurl`, else its `url`),
    /// or `None` when no remote of that name is configured.
    pub fn push_url(&self, name: &str) -> Option<String> {
        let remote = self.git.find_remote(name).ok()?;
        remote
            .pushurl()
            .ok()
            .flatten()
            .or_else(|| remote.url().ok())
            .map(str::to_owned)
    }

    /// The commit `rev` names and what it changed against its first parent (everything, for
    /// a root commit); an error when `rev` names no commit.
    pub fn commit_change(&self, rev: &str) -> Result<CommitChange, LibGitError> {
        let git = &self.git;
        let head = self
            .resolve_commit(rev)
            .ok_or_else(|| git2::Error::from_str("the revision names no commit"))
            .and_then(|oid| git.find_commit(oid))?;
        let tree = head.tree()?;
        let parent_tree = head.parents().next().and_then(|p| p.tree().ok());
        let diff = git.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), None)?;
        let mut paths = Vec::new();
        for d in diff.deltas() {
            for f in [d.new_file().path(), d.old_file().path()]
                .into_iter()
                .flatten()
            {
                let p = f.to_string_lossy().replace('\\', "/");
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
        }
        Ok(CommitChange {
            id: head.id(),
            message: String::from_utf8_lossy(head.message_bytes()).into_owned(),
            paths,
        })
    }
}
