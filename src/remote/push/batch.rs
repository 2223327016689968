//! One `git push` of a batch of checkpoint refs from a side repository, its per-ref results,
//! and the recovery of a ref the remote refused as non-fast-forward.

use std::time::Instant;

use crate::git::objects::Oid;

use super::replay::{checkpoint_step, replay};
use super::PushRefspec;
use crate::base::crashpoint::crashpoint;
use crate::git::refname::{CheckpointRef, ForeignRef};
use crate::git::repo::Repo;
use crate::git::side::{SideError, SideRepo};
use crate::git::subprocess::{self as git, GitError, PushedRef};
use crate::git::url::Remote;
use crate::remote::destination::Destination;
use crate::store::StoreError;

/// What `git push --porcelain` said about one ref.
pub(super) enum RefResult<'a> {
    /// The remote has it now.
    Landed,
    /// The remote has commits we lack: recoverable by merging. git's summary.
    NonFastForward(&'a str),
    /// Refused otherwise (server hook, protected ref): git's summary.
    Refused(&'a str),
    /// git did not mention the ref.
    Unreported,
}

pub(super) const UNREPORTED: &str = "not reported by git push";

impl<'a> RefResult<'a> {
    pub(super) fn of(r: Option<&'a PushedRef>) -> Self {
        match r {
            Some(r) if r.landed() => RefResult::Landed,
            Some(r) if r.non_fast_forward() => RefResult::NonFastForward(&r.summary),
            Some(r) => RefResult::Refused(&r.summary),
            None => RefResult::Unreported,
        }
    }

    pub(super) fn find(results: &'a [PushedRef], name: &str) -> Self {
        Self::of(results.iter().find(|r| r.dst == name))
    }
}

/// Why a `git push` reported no ref at all; each holds the message for the report.
#[derive(Debug, thiserror::Error)]
pub(super) enum BatchFailure {
    /// The remote could not be reached, or did not let us in: git's error line.
    #[error("{0}")]
    Unreachable(String),
    /// git ran out of time and was killed.
    #[error("{0}")]
    TimedOut(String),
    /// git could not run, or failed otherwise: its error line.
    #[error("{0}")]
    Failed(String),
}

/// Why a ref refused as non-fast-forward could not be recovered. It stays queued; the report
/// shows the error with its sources.
#[derive(Debug, thiserror::Error)]
pub(super) enum RecoveryError {
    /// The queued name is not a checkpoint ref.
    #[error(transparent)]
    NotACheckpoint(#[from] ForeignRef),
    /// The side repository could not be created.
    #[error("create side repository: {0}")]
    SideRepo(std::io::Error),
    /// The remote's version could not be fetched.
    #[error("fetch for recovery failed: {0}")]
    Fetch(SideError),
    /// The replay failed.
    #[error(transparent)]
    Replay(#[from] StoreError),
    /// The local ref moved meanwhile, so the compare-and-swap left it alone.
    #[error("the local ref moved during recovery; it stays queued")]
    RefMoved(#[source] crate::git::refs::RefUpdateError),
    /// The push of the replayed tip reported no ref at all.
    #[error(transparent)]
    Push(#[from] BatchFailure),
    /// The push of the replayed tip was refused: git's summary.
    #[error("push after merge refused: {0}")]
    Refused(String),
    /// git did not mention the ref.
    #[error("push after merge: {UNREPORTED}")]
    Unreported,
}

/// Pushes the checkpoint refs of `batch` (each to the same name) in one `git push`.
pub(super) fn push_batch(
    repo: &Repo,
    dest: &Destination,
    batch: &[(String, Oid)],
    deadline: Instant,
) -> Result<Vec<PushedRef>, BatchFailure> {
    // One glob refspec over a side repository holding exactly these refs: git matches every
    // explicit refspec against every ref the remote advertises (200 explicit refspecs against a
    // remote with 100,000 checkpoint refs took 10 s of matching; docs/performance.md).
    let refs: Vec<(String, Oid)> = batch
        .iter()
        .filter(|(name, _)| CheckpointRef::parse(name).is_ok())
        .cloned()
        .collect();
    let spec = PushRefspec::checkpoint_namespace();
    push_refs(repo, &dest.target, &refs, &[spec], deadline)
}

/// What to do when the remote wants credentials: a hook never asks for them (it must not hold
/// the user's push), so they must be stored, or given to an interactive push.
const CREDENTIALS_HINT: &str = "the server wants credentials, and a hook never asks for them: \
store them with a credential helper (`git help credential`), or run `git entire-checkpoint push`, \
which may ask";

/// `line`, git's error, with what to do when it says the remote wants credentials.
pub(super) fn with_credentials_hint(line: String) -> String {
    match git::unauthenticated_line(&line) {
        Some(_) => format!("{line} ({CREDENTIALS_HINT})"),
        None => line,
    }
}

/// One `git push --porcelain --no-verify` of `specs` from a side repository holding `refs`.
/// Per-ref results come back as they are; `Err` only when git reported no ref at all.
pub(super) fn push_refs(
    repo: &Repo,
    target: &Remote,
    refs: &[(String, Oid)],
    specs: &[PushRefspec],
    deadline: Instant,
) -> Result<Vec<PushedRef>, BatchFailure> {
    let side = SideRepo::new(repo, refs)
        .map_err(|e| BatchFailure::Failed(format!("create side repository: {e}")))?;
    crashpoint("push.before-git-push");
    let out = side
        .push(
            target,
            specs.iter().map(PushRefspec::as_str),
            deadline.saturating_duration_since(Instant::now()),
        )
        .map_err(|e| match e {
            GitError::Timeout { .. } => BatchFailure::TimedOut(e.to_string()),
            e => BatchFailure::Failed(e.to_string()),
        })?;
    crashpoint("push.after-git-push");
    let mut results = git::parse_push_porcelain(&out.stdout);
    // The server's own reason (a hook's, a policy's) goes with each ref it refused; the report
    // shows one refusal, so it is said once.
    if let Some(words) = git::server_words(&out.stderr) {
        for r in results.iter_mut().filter(|r| r.remote_rejected()) {
            r.summary = format!("{} (the server said: {words})", r.summary);
        }
    }
    if results.is_empty() && !out.success() {
        // A server that does not let us in refuses every batch alike: the flush stops and says
        // so (not split and retried ref by ref, nor reported as pushed with failures).
        if let Some(line) = git::unauthenticated_line(&out.stderr) {
            return Err(BatchFailure::Unreachable(with_credentials_hint(line)));
        }
        let line = git::first_error_line(&out.stderr);
        return Err(if git::is_unreachable(&out.stderr) {
            BatchFailure::Unreachable(line)
        } else {
            BatchFailure::Failed(line)
        });
    }
    Ok(results)
}

/// Fetches the remote's version of `name`, replays the local commits on top of it with a
/// semantic merge, moves the local ref there by compare-and-swap and pushes again.
pub(super) fn recover_and_push(
    repo: &Repo,
    dest: &Destination,
    name: &str,
    local: Oid,
    deadline: Instant,
) -> Result<(Vec<String>, Oid), RecoveryError> {
    let cref = CheckpointRef::parse(name)?;
    let side = SideRepo::new(repo, &[]).map_err(RecoveryError::SideRepo)?;
    let remote = side
        .fetch_one(
            &dest.target,
            name,
            deadline.saturating_duration_since(Instant::now()),
        )
        .map_err(RecoveryError::Fetch)?;
    let step = checkpoint_step(repo, cref.id());
    let (tip, notes) = replay(repo, local, remote, &step)?;
    repo.set_ref_matching(
        name,
        tip,
        Some(local),
        "entire: merge remote checkpoint history",
    )
    .map_err(RecoveryError::RefMoved)?;
    let results = push_batch(repo, dest, &[(name.to_owned(), tip)], deadline)?;
    match RefResult::find(&results, name) {
        RefResult::Landed => Ok((notes, tip)),
        RefResult::NonFastForward(why) | RefResult::Refused(why) => {
            Err(RecoveryError::Refused(why.to_owned()))
        }
        RefResult::Unreported => Err(RecoveryError::Unreported),
    }
}
