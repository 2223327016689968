//! Pushing the legacy v1 branch: fast-forward, or replay the local commits onto the remote's
//! and push again.

use std::time::Instant;

use crate::git::objects::Oid;

use super::batch::{push_refs, BatchFailure, RefResult, UNREPORTED};
use super::replay::{replay, v1_step};
use super::{bounded, PushError, PushRefspec, DEFAULT_BUDGET};
use crate::base::error::io_context as io_err;
use crate::git::repo::Repo;
use crate::git::side::SideRepo;
use crate::git::url::Remote;
use crate::store::StoreError;

/// What a push of the v1 branch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum V1Push {
    /// There is no local v1 branch.
    NothingToPush,
    /// The remote-tracking branch already equals the local one.
    UpToDate,
    /// The remote has no remote-tracking refs at all (likely empty): pushing now could make
    /// the v1 branch a new repository's default branch, so it waits.
    Deferred,
    /// The branch landed (after a sync with the remote's branch when `notes` says so).
    Pushed {
        /// Decisions of semantic merges made while syncing.
        notes: Vec<String>,
    },
    /// git refused or failed (one redacted line); the branch is pushed again next time.
    Refused(String),
    /// git ran out of time and was killed (one line); the branch is pushed again next time.
    TimedOut(String),
}

/// Pushes `refs/heads/entire/checkpoints/v1` to `remote`, fast-forward only.
pub fn push_v1(repo: &Repo, remote: &Remote) -> Result<V1Push, PushError> {
    use crate::store::branch::V1_BRANCH_REF;
    let Some(local) = crate::store::publish::tip_of(repo, V1_BRANCH_REF)? else {
        return Ok(V1Push::NothingToPush);
    };
    let is_named = repo.remote_names().iter().any(|n| n == remote.as_str());
    if is_named {
        let tracking = format!("refs/remotes/{remote}/entire/checkpoints/v1");
        if crate::store::publish::tip_of(repo, &tracking)? == Some(local) {
            return Ok(V1Push::UpToDate);
        }
        let any_tracking = repo
            .has_refs_under(&format!("refs/remotes/{remote}/"))
            .unwrap_or(false);
        if !any_tracking {
            return Ok(V1Push::Deferred);
        }
    }
    let deadline = Instant::now() + bounded(DEFAULT_BUDGET);
    let mut notes = Vec::new();
    let mut tip = local;
    for attempt in 0..2 {
        let refs = [(V1_BRANCH_REF.to_owned(), tip)];
        let results = match push_refs(repo, remote, &refs, &[PushRefspec::v1_branch()], deadline) {
            Ok(r) => r,
            Err(BatchFailure::TimedOut(line)) => return Ok(V1Push::TimedOut(line)),
            Err(BatchFailure::Unreachable(line) | BatchFailure::Failed(line)) => {
                return Ok(V1Push::Refused(line))
            }
        };
        match RefResult::find(&results, V1_BRANCH_REF) {
            RefResult::Landed => {
                if is_named {
                    let tracking = format!("refs/remotes/{remote}/entire/checkpoints/v1");
                    let _ = repo.set_ref(&tracking, tip, "entire: pushed");
                }
                return Ok(V1Push::Pushed { notes });
            }
            RefResult::NonFastForward(_) if attempt == 0 => {
                // Fetch the remote branch, replay our commits on it checkpoint by checkpoint,
                // move the local branch there by compare-and-swap, and push again.
                let side = SideRepo::new(repo, &[]).map_err(io_err("create side repository"))?;
                let theirs = match side.fetch_one(
                    remote,
                    V1_BRANCH_REF,
                    deadline.saturating_duration_since(Instant::now()),
                ) {
                    Ok(t) => t,
                    Err(line) => {
                        return Ok(V1Push::Refused(format!("fetch for sync failed: {line}")))
                    }
                };
                match replay_v1_onto(repo, tip, theirs)? {
                    Ok((merged, n)) => {
                        notes.extend(n);
                        tip = merged;
                    }
                    Err(moved) => {
                        return Ok(V1Push::Refused(format!(
                            "the local branch moved during sync ({moved})"
                        )))
                    }
                }
            }
            RefResult::NonFastForward(why) | RefResult::Refused(why) => {
                return Ok(V1Push::Refused(why.to_owned()))
            }
            RefResult::Unreported => return Ok(V1Push::Refused(UNREPORTED.into())),
        }
    }
    Ok(V1Push::Refused(
        "still not a fast-forward after syncing".into(),
    ))
}

/// Replays the local v1 commits since the merge base with `theirs` (all of them when the
/// histories are disconnected) on top of `theirs`, checkpoint by checkpoint, and moves the local
/// branch there by compare-and-swap from `local`. Local only: `theirs` must already be in the
/// object store (a fetched or remote-tracking tip). The result is a descendant of `theirs`, so
/// the next push is a fast-forward. `Ok(Err(_))` when the branch moved meanwhile: git's error
/// about the failed compare-and-swap.
pub(crate) fn replay_v1_onto(
    repo: &Repo,
    local: Oid,
    theirs: Oid,
) -> Result<Result<(Oid, Vec<String>), crate::git::refs::RefUpdateError>, StoreError> {
    use crate::store::branch::V1_BRANCH_REF;
    let step = v1_step(repo);
    let (merged, notes) = replay(repo, local, theirs, &step)?;
    match repo.set_ref_matching(
        V1_BRANCH_REF,
        merged,
        Some(local),
        "entire: sync v1 with remote",
    ) {
        Ok(_) => Ok(Ok((merged, notes))),
        Err(e) => Ok(Err(e)),
    }
}
