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
}
