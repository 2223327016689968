//! What the stores need of the network, as traits the stores define and the remote layer
//! implements (its `on_demand` module). The stores never fetch on their own: the topology
//! hands them a capability, and without one a read sees only what is held locally.
//!
//! - [`OnDemand`]: fetch missing checkpoints, in one batch (whole into the repository, or partially into
//!   the partial cache), and open that cache.
//! - [`PartialObjects`]: read a checkpoint from the partial cache, completing the objects a read
//!   needs (documents, a transcript's chunks) from the promisor remote.
//! - [`BranchFetch`]: fetch a remote's copy of the v1 branch into its tracking ref, and of the
//!   layouts it archived into their copies.
//!
//! Their one failure type, [`FetchError`], never means absence: a remote that lacks the
//! checkpoint is success with nothing found.

use crate::git::objects::Objects;
use crate::git::objects::Oid;

use crate::base::id::CheckpointId;
use crate::git::refname::CheckpointRef;

/// Errors of a fetch.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FetchError {
    /// The remote could not be reached or refused us; nothing is known about the ref.
    #[error("fetch {} from {remote}: {message}", named(reference))]
    Transport {
        /// The ref asked for.
        reference: String,
        /// The remote, credentials redacted.
        remote: String,
        /// git's first error line, redacted.
        message: String,
    },
    /// An earlier fetch of this command already failed; not retried.
    #[error("fetch {}: skipped, an earlier checkpoint-ref fetch already failed in this operation: {first}", named(reference))]
    Skipped {
        /// The ref asked for.
        reference: String,
        /// The first failure.
        first: String,
    },
    /// Local bookkeeping failed.
    #[error("fetch {}: {message}", named(reference))]
    Local {
        /// The ref asked for.
        reference: String,
        /// What failed.
        message: String,
    },
}

impl crate::base::error::ExitStatus for FetchError {
    fn exit_code(&self) -> i32 {
        match self {
            FetchError::Transport { .. }
            | FetchError::Skipped { .. }
            | FetchError::Local { .. } => crate::base::error::FAILURE,
        }
    }
}

/// A fetched reference as messages name it: one checkpoint ref, or every one under a prefix
/// (`git entire-fetch --all` lists them first).
fn named(reference: &str) -> String {
    match reference.ends_with('/') {
        true => format!("the checkpoint refs ({reference}*)"),
        false => format!("checkpoint ref {reference}"),
    }
}

impl FetchError {
    /// What went wrong, without the ref it happened to (git's line for a transport failure).
    pub fn reason(&self) -> String {
        match self {
            FetchError::Transport { message, .. } | FetchError::Local { message, .. } => {
                message.clone()
            }
            FetchError::Skipped { first, .. } => first.clone(),
        }
    }
}

/// Fetching checkpoints missing locally, for the git-refs store.
pub trait OnDemand<'r> {
    /// The remote a miss is fetched from (credentials redacted); `None` when reads do not fetch.
    fn remote_display(&self) -> Option<&str>;

    /// Fetches the checkpoints of `ids` so that a local read finds them, in the repository or in
    /// the partial cache: all in one batch (two fetches at most, however many there are). Only
    /// asked when [`OnDemand::remote_display`] names a remote. A remote that lacks some or all
    /// of them is `Ok`.
    fn fetch_checkpoints(&self, ids: &[CheckpointId]) -> Result<(), FetchError>;

    /// The partial cache, if one exists (created by a filtered fetch).
    fn open_partial(&self) -> Result<Option<Box<dyn PartialObjects + 'r>>, FetchError>;
}

/// A repository of checkpoints fetched without their transcripts (the partial cache).
pub trait PartialObjects {
    /// Its object database, for commits, trees and documents already present.
    fn objects(&self) -> Objects<'_>;

    /// The commit `name` points at in it.
    fn tip(&self, name: &str) -> Option<Oid>;

    /// The cached spelling of `id`'s ref and its tip.
    fn locate(&self, id: &CheckpointId) -> Option<(String, Oid)>;

    /// Every checkpoint ref it holds, with its tip.
    fn refs(&self) -> Vec<(CheckpointRef, Oid)>;

    /// Makes sure every object a read of `path` (or of the documents, when `None`) of the
    /// checkpoint at `tip` needs is present, fetching what is missing.
    fn ensure_for_path(
        &self,
        reference: &str,
        tip: Oid,
        path: Option<&str>,
    ) -> Result<(), FetchError>;
}

/// Fetching a remote's copy of the v1 branch and of the layouts it archived, for the
/// git-branch store.
pub trait BranchFetch {
    /// Fetches the remote's v1 branch into `tracking` (its tracking ref), and its archived
    /// layouts (`store::archive`) into their copies under `copies`, in one fetch; whether a
    /// copy moved. A remote that has none of them is `Ok(false)`.
    fn fetch_copies(&self, tracking: &str, copies: &str) -> Result<bool, FetchError>;
}
