//! The push policy the pre-push hook, `push` and `migrate --push` share: whether checkpoints go
//! out at all (settings), where to (the checkpoint remote resolved for a code remote), what
//! (the git-refs refs due, or the v1 branch when git-branch is the primary), and when a push
//! that did not happen is an error ([`NotPushed`]). Reporting is the caller's.

use crate::base::error::{ExitStatus, FAILURE};
use crate::git::repo::Repo;
use crate::git::subprocess::RemoteTrouble;
use crate::git::url::Remote;
use crate::remote::checkpoint_remote::{
    self, AwaitingApproval, CheckpointRemoteError, CheckpointTarget,
};
/// What to do about a server that refuses checkpoint refs, as a push's report says it.
pub use crate::remote::push::refused::advice as refusal_advice;
pub use crate::remote::push::DRAIN_NOW;
use crate::remote::push::{self, FlushReport, PushError, V1Push};
use crate::store::refs::GitRefsStore;
use crate::store::StoreKind;
use crate::topology::{Topology, TopologyError};

/// A checkpoint push that did not happen: cut off by its deadline, or the remote could not be
/// reached or refused the v1 branch. Nothing is lost: what did not land stays queued. `push`
/// fails with it (exit 1); the pre-push hook warns and lets the user's push proceed.
#[derive(Debug, thiserror::Error)]
// The reason last: it may end with what git said, which messages quote on lines of their own.
#[error("checkpoints not pushed ({} stay queued for the next push): {reason}", match .queued {
    Some(n) => format!("{n} checkpoint ref(s)"),
    None => "they".to_owned(),
})]
pub struct NotPushed {
    /// What went wrong.
    pub reason: String,
    /// How many refs stay queued, when known.
    pub queued: Option<usize>,
    /// Whether the deadline (the hook budget, in a hook) ran out.
    pub timed_out: bool,
}

/// Why checkpoints could not be pushed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// Writes are refused (a settings file does not parse).
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// There is no remote at all.
    #[error("no remote for checkpoints: add one (git remote add origin <URL>) or set strategy_options.checkpoint_remote in .entire/settings.json")]
    NoRemote,
    /// The checkpoint remote setting is invalid, or the remote is refused.
    #[error(transparent)]
    Remote(#[from] CheckpointRemoteError),
    /// The settings ask for a checkpoint remote the user has not approved: checkpoints stay
    /// queued, and go nowhere else.
    #[error("checkpoints not pushed (they stay queued): {0}")]
    AwaitingApproval(#[from] AwaitingApproval),
    /// The push failed locally.
    #[error(transparent)]
    Push(#[from] PushError),
    /// Nothing could be pushed.
    #[error(transparent)]
    NotPushed(#[from] NotPushed),
}

impl ExitStatus for SyncError {
    fn exit_code(&self) -> i32 {
        match self {
            SyncError::Topology(e) => e.exit_code(),
            SyncError::NoRemote | SyncError::NotPushed(_) | SyncError::AwaitingApproval(_) => {
                FAILURE
            }
            SyncError::Remote(e) => e.exit_code(),
            SyncError::Push(e) => e.exit_code(),
        }
    }
}

/// What a push did.
#[derive(Debug)]
pub enum Synced {
    /// The settings turn pushing off: nothing was pushed, everything stays queued.
    Disabled(PushOff),
    /// The git-refs checkpoint refs due were pushed, all or some.
    Refs(Box<Flushed>),
    /// The git-branch primary's v1 branch.
    Branch {
        /// Where to.
        remote: Remote,
        /// What happened.
        outcome: BranchPush,
    },
}

impl Synced {
    /// Whether nothing is left due after this push: pushing is off, a git-refs flush
    /// delivered every ref due (or found none) and nothing went wrong, or the v1 branch has
    /// nothing the remote lacks (no branch, the remote's copy at its tip, or pushed there now)
    /// (the pre-push hook's scripts may then skip the next such push while nothing is queued
    /// and the v1 branch does not move, `ops::hooks::fast`).
    pub fn nothing_left_due(&self) -> bool {
        match self {
            Synced::Disabled(_) => true,
            Synced::Refs(f) => {
                let r = &f.report;
                r.remaining() == 0
                    && r.rejected.is_empty()
                    && r.failed.is_empty()
                    && r.unreachable.is_none()
                    && r.stopped.is_none()
                    && r.timed_out.is_none()
            }
            Synced::Branch { outcome, .. } => {
                matches!(
                    outcome,
                    BranchPush::NothingToPush | BranchPush::UpToDate | BranchPush::Pushed { .. }
                )
            }
        }
    }
}

/// A flush of the git-refs refs that reached its remote.
#[derive(Debug)]
pub struct Flushed {
    /// What was pushed, refused, merged.
    pub report: FlushReport,
    /// A warning when checkpoints went to a public forge with the code (only when refs were
    /// due).
    pub public_remote_warning: Option<String>,
}

/// A push of the v1 branch that did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchPush {
    /// There is no local v1 branch.
    NothingToPush,
    /// The remote already has it.
    UpToDate,
    /// The remote has no branches yet: the v1 branch waits (it could become the default
    /// branch).
    Deferred,
    /// The branch landed, with the notes of the merges made while syncing.
    Pushed {
        /// Merge decisions.
        notes: Vec<String>,
    },
}

/// The checkpoint remote for the code remote `via` (see [`checkpoint_remote::resolve`]); an
/// error when there is no remote at all.
pub fn target(repo: &Repo, via: Option<&str>) -> Result<CheckpointTarget, SyncError> {
    checkpoint_remote::resolve(repo, via)?.ok_or(SyncError::NoRemote)
}

/// What a push is asked to do.
#[derive(Clone, Copy)]
pub struct PushAsk<'a> {
    /// The code remote the checkpoint remote is resolved for (`None`: the default remote).
    pub via: Option<&'a str>,
    /// The user named `via` on our command line (`push <remote>`): checkpoints a checkpoint
    /// remote confirmed go there too. Unnamed (the pre-push hook, a bare `push`), they go to
    /// no destination but checkpoint remotes.
    pub named: bool,
    /// Reconcile against the remote's listing even if the destination is known (`--all`).
    pub reconcile: bool,
    /// The user asked for this push (`git entire-checkpoint push`, `migrate --push`): what
    /// the server refused before is sent again. A hook holds it back for a while
    /// ([`crate::remote::push::refused`]).
    pub retry_refused: bool,
}

/// Pushes checkpoints the way the pre-push hook and `push` both do, to the checkpoint remote
/// resolved for the code remote `ask.via`. Refused while writes are, and while the settings ask
/// for a checkpoint remote the user has not approved ([`AwaitingApproval`]); nothing when the
/// settings turn pushing off. Checkpoint trouble is an error only when nothing could be pushed
/// ([`NotPushed`]); refusals of single refs are in the report and stay queued.
///
/// `progress` is told `(refs attempted, refs to push)` as the git-refs push goes.
pub fn push(
    repo: &Repo,
    topo: &Topology<'_>,
    ask: PushAsk<'_>,
    progress: &dyn Fn(usize, usize),
) -> Result<Synced, SyncError> {
    // The settings choose whether and where checkpoints go: unknown settings push nothing.
    topo.check_writable()?;
    let target = match enabled_target(repo, ask.via)? {
        Ok(target) => target,
        Err(off) => return Ok(Synced::Disabled(off)),
    };
    if topo.primary() == StoreKind::GitBranch {
        return push_branch(repo, target.target);
    }
    flush_to(repo, topo.refs_store(), &target, ask, progress)
}

/// Pushes the git-refs checkpoint refs due for the checkpoint remote of `ask.via`, whatever the
/// primary (`migrate --push`); nothing when the settings turn pushing off.
pub fn flush(
    repo: &Repo,
    topo: &Topology<'_>,
    ask: PushAsk<'_>,
    progress: &dyn Fn(usize, usize),
) -> Result<Synced, SyncError> {
    match enabled_target(repo, ask.via)? {
        Ok(target) => flush_to(repo, topo.refs_store(), &target, ask, progress),
        Err(off) => Ok(Synced::Disabled(off)),
    }
}

/// The setting that turned pushing off: `strategy_options.push_sessions` is `false` in `file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushOff {
    /// The settings file that says so, as shown.
    pub file: String,
}

impl std::fmt::Display for PushOff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "checkpoint pushing is off: strategy_options.push_sessions is false in {}",
            self.file
        )
    }
}

/// The checkpoint remote for `via`, or the setting that turns pushing off; an error while the
/// settings ask for a checkpoint remote that awaits approval.
fn enabled_target(
    repo: &Repo,
    via: Option<&str>,
) -> Result<Result<CheckpointTarget, PushOff>, SyncError> {
    let files = repo.settings();
    if !files.push_sessions_enabled() {
        // Pushing is off only by an explicit `false`, so the key is there to name.
        if let Some((_, _, file)) = files.strategy_option("push_sessions") {
            return Ok(Err(PushOff { file }));
        }
    }
    if let Some(awaiting) = checkpoint_remote::awaiting_approval(repo) {
        return Err(awaiting.into());
    }
    target(repo, via).map(Ok)
}

fn flush_to(
    repo: &Repo,
    refs_store: &GitRefsStore<'_>,
    target: &CheckpointTarget,
    ask: PushAsk<'_>,
    progress: &dyn Fn(usize, usize),
) -> Result<Synced, SyncError> {
    let dest = crate::remote::destination::destination(repo, &target.target);
    let opts = push::FlushOptions {
        reconcile: ask.reconcile,
        progress,
        checkpoint_remote: !target.carries_code(),
        named: ask.named,
        retry_refused: ask.retry_refused,
        ..Default::default()
    };
    let report = push::flush(repo, refs_store, &dest, &opts)?;
    let d = &report.destination;
    if let Some(why) = &report.timed_out {
        let reason = format!("{why} (pushing to {d})");
        return Err(not_pushed(reason, Some(report.remaining()), true));
    }
    if let Some(line) = &report.unreachable {
        // Said as what it was: a server that refused us is not one we could not reach.
        let reason = match RemoteTrouble::of(line) {
            Some(RemoteTrouble::Unauthenticated) => format!("{d} did not let us in: {line}"),
            Some(RemoteTrouble::Refused) => format!("{d} refused: {line}"),
            Some(RemoteTrouble::Unreachable) | None => format!("couldn't reach {d}: {line}"),
        };
        return Err(not_pushed(reason, Some(report.due), false));
    }
    let public_remote_warning = match report.due {
        0 => None,
        _ => checkpoint_remote::public_remote_warning(repo, target),
    };
    Ok(Synced::Refs(Box::new(Flushed {
        report,
        public_remote_warning,
    })))
}

/// The git-branch primary's push: the v1 branch itself.
fn push_branch(repo: &Repo, remote: Remote) -> Result<Synced, SyncError> {
    let outcome = match push::push_v1(repo, &remote)? {
        V1Push::NothingToPush => BranchPush::NothingToPush,
        V1Push::UpToDate => BranchPush::UpToDate,
        V1Push::Deferred => BranchPush::Deferred,
        V1Push::Pushed { notes } => BranchPush::Pushed { notes },
        V1Push::TimedOut(why) => {
            let reason = format!("{why} (pushing entire/checkpoints/v1 to {remote})");
            return Err(not_pushed(reason, None, true));
        }
        V1Push::Refused(why) => {
            let reason = format!("couldn't push entire/checkpoints/v1 to {remote}: {why}");
            return Err(not_pushed(reason, None, false));
        }
    };
    Ok(Synced::Branch { remote, outcome })
}

fn not_pushed(reason: String, queued: Option<usize>, timed_out: bool) -> SyncError {
    SyncError::NotPushed(NotPushed {
        reason,
        queued,
        timed_out,
    })
}
