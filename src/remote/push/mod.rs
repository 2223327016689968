//! Pushing checkpoint refs: fast-forward only, never forced, with recovery, to every remote.
//!
//! ## Delivery to every remote
//! The reference's queue forgets a ref once it reached *any* remote (its #1635). Here the shared
//! queue (`entire-checkpoint-push-queue.jsonl`, written by every git-refs write and compatible
//! with the reference) only *announces* changed refs. At each push, the announced refs are fanned
//! out into one queue per known destination (`<common>/entire/push-queues/<fingerprint>.jsonl`,
//! keyed by a hash of the remote's push URL), and a destination's queue loses a ref only when
//! that destination confirmed it. A destination seen for the first time (a new remote, or a
//! remote whose URL changed) is reconciled against its `ls-remote` listing, so it receives every
//! checkpoint it lacks, queued or not.
//!
//! ## Delivery record
//! Every ref a destination confirmed (a landed push, a recovery, a reconcile that found the
//! remote already at our tip, a fetch that published the remote's tip) is appended to
//! `<common>/entire/push-delivered/<fingerprint>.jsonl` as `{"ref","oid"}` (last line wins).
//! It is what `doctor` reads offline to tell a delivered ref from one whose queue record was
//! lost. Recording is best effort: a failure only costs `doctor` a false "unpushed". The
//! reconcile of `push --all` compacts the record to one line per ref.
//!
//! ## Cost
//! Pushes run from a *side repository*: an empty bare repository in a temp dir under the common
//! dir whose object store is the real one and whose config includes the real config, holding
//! only the refs being pushed. git matches explicit refspecs against every local ref, so pushing
//! from the real repository would scale with the number of checkpoint refs (docs/decisions.md,
//! "Network operations run from a side repository").
//!
//! ## Divergence
//! A ref the remote refuses as non-fast-forward is fetched into the side repository, the local
//! commits are replayed on top of the remote tip with a semantic merge (`crate::store::merge`), the local
//! ref moves there by compare-and-swap, and the push is retried: still a fast-forward. A ref the
//! server itself refuses (`[remote rejected]`, a hook, a protected ref) stays queued.
//!
//! Here: the refspecs, the budgets and the errors; in `flush` the queues fanned out and pushed
//! per destination, in `batch` one `git push` and the recovery of a refused ref, in `replay`
//! the merge of local commits onto the remote's, and in `v1` the push of the legacy branch.

use std::fmt;
use std::time::{Duration, Instant};

use crate::base::error::ExitStatus;
use crate::git::repo::Repo;
use crate::git::subprocess::{self as git, GitError};
use crate::store::queue::QueueError;
use crate::store::StoreError;

/// Most refs in one `git push`.
pub const MAX_CHUNK: usize = 200;
/// The default time budget of a whole flush.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(120);
/// Environment variable: the hook budget in whole seconds (wins over the setting).
pub const HOOK_BUDGET_ENV: &str = "ENTIRE_HOOK_BUDGET_SECONDS";
/// The hook budget when neither [`HOOK_BUDGET_ENV`] nor the setting gives one.
pub const DEFAULT_HOOK_BUDGET: Duration = Duration::from_secs(30);
/// The hook budgets accepted, in seconds; a value outside is clamped into it. The committed
/// settings file is untrusted: it must not be able to make a hook hang.
pub const HOOK_BUDGET_RANGE: std::ops::RangeInclusive<u64> = 1..=600;
/// What drains a backlog a hook's budget cut short: said where the budget ran out.
pub const DRAIN_NOW: &str =
    "`git entire-checkpoint push` drains the queue now, without the hook's budget";
/// Consecutive failed chunks after which a flush stops.
pub const MAX_CONSECUTIVE_CHUNK_FAILURES: usize = 2;
/// Consecutive failed single-ref retries after which a flush stops retrying.
pub const MAX_CONSECUTIVE_REF_FAILURES: usize = 5;

/// A push refspec `<ref>:<ref>`. It can only name the checkpoint namespace or the v1 branch, so it
/// can never carry `+` (force) nor name anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushRefspec(String);

impl PushRefspec {
    /// The refspec that pushes every checkpoint ref of the pushing repository to the same name
    /// (used from a side repository that holds only the refs to push).
    pub fn checkpoint_namespace() -> Self {
        let p = crate::git::refname::CHECKPOINT_REF_PREFIX;
        PushRefspec(format!("{p}*:{p}*"))
    }

    /// The refspec that pushes the git-branch store's v1 branch to the same name.
    pub fn v1_branch() -> Self {
        let b = crate::store::branch::V1_BRANCH_REF;
        PushRefspec(format!("{b}:{b}"))
    }

    /// The refspec text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PushRefspec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Errors that stop a push before it starts.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// A queue file could not be read or written.
    #[error(transparent)]
    Queue(#[from] QueueError),
    /// git could not be run.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The repository failed underneath.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file operation failed.
    #[error(transparent)]
    Io(#[from] crate::base::error::IoError),
}

impl ExitStatus for PushError {
    fn exit_code(&self) -> i32 {
        match self {
            PushError::Queue(e) => e.exit_code(),
            PushError::Git(e) => e.exit_code(),
            PushError::Store(e) => e.exit_code(),
            PushError::Io(_) => crate::base::error::FAILURE,
        }
    }
}

/// How long a hook (pre-push, pre-auto-gc) may spend on the network in total:
/// [`HOOK_BUDGET_ENV`], else `strategy_options.hook_budget_seconds`, else
/// [`DEFAULT_HOOK_BUDGET`]; clamped into [`HOOK_BUDGET_RANGE`]. The committed settings file can
/// only shorten it: a longer value there counts as the default.
pub fn hook_budget(repo: &Repo) -> Duration {
    if let Some(budget) = git::env_seconds(HOOK_BUDGET_ENV, HOOK_BUDGET_RANGE) {
        return budget;
    }
    match repo.settings().hook_budget_seconds() {
        Some((s, source)) => {
            let budget = git::clamped_seconds(s, HOOK_BUDGET_RANGE);
            if source.trusted() {
                budget
            } else {
                budget.min(DEFAULT_HOOK_BUDGET)
            }
        }
        None => DEFAULT_HOOK_BUDGET,
    }
}

/// `budget` from now, shortened to the process's network deadline (a hook's budget).
fn bounded(budget: Duration) -> Duration {
    match git::network_deadline() {
        Some(at) => budget.min(at.saturating_duration_since(Instant::now())),
        None => budget,
    }
}

mod batch;
mod flush;
pub mod refused;
mod replay;
mod v1;

pub use flush::{flush, FlushOptions, FlushReport};
pub(crate) use v1::replay_v1_onto;
pub use v1::{push_v1, V1Push};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refspec_is_never_forced() {
        let spec = PushRefspec::checkpoint_namespace();
        assert_eq!(
            spec.as_str(),
            "refs/entire/checkpoints/*:refs/entire/checkpoints/*"
        );
        assert!(!spec.as_str().starts_with('+'));
    }
}
