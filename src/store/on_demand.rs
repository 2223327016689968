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
use crate::store::{CheckpointFiles, StoreError};

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

    /// The repository itself as a partial clone (`git clone --filter`): what completes the
    /// objects a read of its checkpoints needs from its promisor remote, whether or not reads
    /// fetch missing checkpoints (as git's own lazy fetch does); `None` when it is no partial
    /// clone.
    fn promised(&self) -> Option<&dyn Complete>;
}

/// What of a checkpoint a read needs present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted<'a> {
    /// Its documents: every blob but the transcripts' chunks.
    Documents,
    /// Its documents and the file at this path (for a session's `N/full.jsonl`, its chunks).
    File(&'a str),
    /// Every blob: the documents and every session's transcript.
    All,
}

impl<'a> Wanted<'a> {
    /// The documents, with the file at `path` when there is one.
    pub fn documents_and(path: Option<&'a str>) -> Self {
        path.map_or(Wanted::Documents, Wanted::File)
    }
}

/// Completing the objects a read of a checkpoint needs from a promisor remote.
pub trait Complete {
    /// Makes sure every object a read of `path` (or of the documents, when `None`) of the
    /// checkpoint at `tip` (the commit of its ref `reference`, or the checkpoint's tree) needs is
    /// present, fetching what is missing in one batch.
    fn ensure_for_path(
        &self,
        reference: &str,
        tip: Oid,
        path: Option<&str>,
    ) -> Result<(), FetchError>;

    /// Makes sure what `wanted` names of every checkpoint of `refs` (ref name, tip) is present:
    /// a listing's documents, `blame`'s transcripts. One checkpoint after the other unless the
    /// implementation batches them (the partial cache fetches transcripts when they are read).
    fn ensure_many(&self, refs: &[(String, Oid)], wanted: Wanted<'_>) -> Result<(), FetchError> {
        let path = match wanted {
            Wanted::File(path) => Some(path),
            Wanted::Documents | Wanted::All => None,
        };
        refs.iter()
            .try_for_each(|(name, tip)| self.ensure_for_path(name, *tip, path))
    }

    /// Makes sure every tree below `tree` (of the branch `reference`) is present, without
    /// fetching a blob: what finding a checkpoint's directory in a branch needs. Nothing to do
    /// unless the trees may be missing (`--filter=tree:0`).
    fn ensure_trees(&self, _reference: &str, _tree: Oid) -> Result<(), FetchError> {
        Ok(())
    }
}

/// The files of a checkpoint whose objects may be missing (read from the partial cache, or from
/// a repository that is a partial clone): every read first makes sure the objects it needs are
/// there, fetching a transcript on its first read.
pub(crate) struct CompletedFiles<'s> {
    /// What fetches the missing objects.
    pub complete: &'s dyn Complete,
    /// The checkpoint's ref (or branch), for messages.
    pub reference: String,
    /// The checkpoint's commit, or its tree.
    pub tip: Oid,
    /// The files, read once their objects are there.
    pub files: Box<dyn CheckpointFiles + 's>,
}

impl CheckpointFiles for CompletedFiles<'_> {
    fn read(&self, path: &str) -> Result<Vec<u8>, StoreError> {
        self.complete
            .ensure_for_path(&self.reference, self.tip, Some(path))?;
        self.files.read(path)
    }

    fn stream(&self, path: &str) -> Result<Box<dyn std::io::Read + '_>, StoreError> {
        self.complete
            .ensure_for_path(&self.reference, self.tip, Some(path))?;
        self.files.stream(path)
    }
}

/// A repository of checkpoints fetched without their transcripts (the partial cache); it
/// completes what a read needs ([`Complete`]).
pub trait PartialObjects: Complete {
    /// Its object database, for commits, trees and documents already present.
    fn objects(&self) -> Objects<'_>;

    /// The commit `name` points at in it.
    fn tip(&self, name: &str) -> Option<Oid>;

    /// The cached spelling of `id`'s ref and its tip.
    fn locate(&self, id: &CheckpointId) -> Option<(String, Oid)>;

    /// Every checkpoint ref it holds, with its tip.
    fn refs(&self) -> Vec<(CheckpointRef, Oid)>;
}

/// Fetching a remote's copy of the v1 branch and of the layouts it archived, for the
/// git-branch store.
pub trait BranchFetch {
    /// Fetches the remote's v1 branch into `tracking` (its tracking ref), and its archived
    /// layouts (`store::archive`) into their copies under `copies`, in one fetch; whether a
    /// copy moved. A remote that has none of them is `Ok(false)`.
    fn fetch_copies(&self, tracking: &str, copies: &str) -> Result<bool, FetchError>;
}
