//! Reading a checkpoint's files by the id of its tree, through a repository handle of the
//! reader's own: for work on a second thread, since a store's handle cannot be shared between
//! threads.
//!
//! A tree id names its whole content, so whatever this reads is what the store that served the
//! checkpoint would return for the same path. What it cannot read (objects only in the partial
//! cache, a blob a filtered fetch left out) is an error here: the caller reads it through the
//! store, which knows where else to look.

use crate::base::id::CheckpointId;
use crate::git::repo::{Repo, RepoError, RepoLocation};
use crate::store::{tree, CheckpointFiles, StoreError};

/// Reads checkpoint files by tree id from a repository opened for it.
pub struct ContentReader {
    repo: Repo,
}

impl ContentReader {
    /// Opens the repository at `at` for this reader. Its handle lists the packs again only at
    /// the first object it does not find ([`Repo::list_packs_again_once`]): what it cannot
    /// read, `blame` reads again through the store, whose handle lists them at every miss, and
    /// the writes cache's fill leaves to the first `blame`.
    pub fn open(at: &RepoLocation) -> Result<Self, RepoError> {
        let mut repo = at.open()?;
        repo.list_packs_again_once();
        Ok(ContentReader { repo })
    }

    /// The file at `path` of checkpoint `id` whose tree is `tree_id` (hex); `N/full.jsonl` is
    /// reassembled from its chunks, as the stores do.
    pub fn read_file(
        &self,
        id: &CheckpointId,
        tree_id: &str,
        path: &str,
    ) -> Result<Vec<u8>, StoreError> {
        let limits = self.repo.settings().limits();
        let oid = self
            .repo
            .parse_oid(tree_id)
            .map_err(|e| StoreError::Repo(e.into()))?;
        let tree = tree::tree_within(self.repo.objects(), oid, id, "of the checkpoint", &limits)?;
        tree::TreeFiles::new(self.repo.objects(), tree, id, limits).read(path)
    }
}
