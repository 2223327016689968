//! Minting the ID of a new checkpoint, in the primary's format.

use super::Topology;
use crate::base::id::{CheckpointId, IdKind};
use crate::git::repo::Repo;

/// Mints the ID of a new checkpoint in the configured primary's format; hex when the
/// configuration cannot be read (fail-soft, as hooks must never fail: docs/format.md,
/// "Checkpoint IDs").
pub fn mint_checkpoint_id(repo: &Repo) -> CheckpointId {
    match Topology::open(repo) {
        Ok(t) => t.mint_id(),
        Err(_) => CheckpointId::mint(IdKind::Hex),
    }
}

impl<'r> Topology<'r> {
    /// Mints a new ID in the primary's format.
    pub fn mint_id(&self) -> CheckpointId {
        CheckpointId::mint(self.primary.id_kind())
    }
}
