//! Publishing a new commit on a ref by compare-and-swap.
//!
//! Every write reads the ref's tip, builds the new tree from it, commits with the tip as the
//! only parent (no parent for a new ref) and moves the ref only if it still points at that tip.
//! A lost race rebuilds from the fresh tip and tries again, up to [`MAX_ATTEMPTS`] times, with a
//! jittered backoff that grows exponentially (docs/decisions.md, "Compare-and-swap with bounded
//! retries"). Nothing is ever force-updated over a tip we did not build on.

use std::time::Duration;

use crate::git::objects::Commit;
use crate::git::objects::Oid;

use crate::base::crashpoint::{crashpoint, fault};
use crate::git::repo::{Identity, Repo};
use crate::store::tree::Change;
use crate::store::{git_err, StoreError, WriteOutcome};

/// How many times a write rebuilds after losing a race before giving up.
pub const MAX_ATTEMPTS: usize = 16;

/// Where a ref is and what it points at.
pub(crate) struct Located {
    /// The ref name to update (the spelling that exists, else the canonical one).
    pub name: String,
    /// Its current tip, `None` when it does not exist.
    pub tip: Option<Oid>,
}

/// Resolves a ref's tip; a missing ref is `None`, any other failure is an error (never "new").
pub(crate) fn tip_of(repo: &Repo, name: &str) -> Result<Option<Oid>, StoreError> {
    repo.ref_tip(name).map_err(StoreError::Repo)
}

/// Sleeps before retry `attempt` (1-based): a random time below a cap that doubles from 2 ms up
/// to [`MAX_BACKOFF`]. A fixed 8–16 ms cap let 12 writers racing on the one v1 branch exhaust
/// their 16 attempts now and then (tests/cli/concurrency.rs); spreading the retries out makes
/// the winners finish and leave room for the rest.
fn backoff(attempt: usize) {
    let cap = MIN_BACKOFF
        .saturating_mul(1 << attempt.min(16))
        .min(MAX_BACKOFF);
    let jitter = rand::random::<u64>() % cap.as_micros() as u64;
    std::thread::sleep(Duration::from_micros(jitter + 1_000));
}

/// The first retry waits below twice this.
const MIN_BACKOFF: Duration = Duration::from_millis(1);
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_millis(200);

/// What the build step returns: the new tree and message, or `None` for "nothing to change".
pub(crate) type BuildResult = Result<Option<Change>, StoreError>;

/// Runs the compare-and-swap loop.
///
/// `locate` finds the ref each attempt. `build` gets the current tip commit (`None` for a new
/// ref) and returns the new tree; it is called again after a lost race. `bootstrap`, when set,
/// is the message of an empty-tree orphan commit made the parent of the first write to a new
/// ref (the v1 branch's `Initialize sessions branch`).
pub(crate) fn publish<'r>(
    repo: &'r Repo,
    locate: &dyn Fn() -> Result<Located, StoreError>,
    bootstrap: Option<&str>,
    author: &Identity,
    build: &mut dyn FnMut(Option<&Commit<'r>>) -> BuildResult,
) -> Result<WriteOutcome, StoreError> {
    let git = repo.objects();
    let author_sig = repo.signature(author, "AUTHOR")?;
    let committer_sig = repo.signature(&repo.identity("COMMITTER"), "COMMITTER")?;
    let mut last_seen = String::new();
    let mut expected = String::new();
    for attempt in 0..MAX_ATTEMPTS {
        if attempt > 0 {
            backoff(attempt);
        }
        let loc = locate()?;
        let tip_commit = match loc.tip {
            Some(oid) => Some(
                git.find_commit(oid)
                    .map_err(git_err(format!("read tip of {}", loc.name)))?,
            ),
            None => None,
        };
        let Some(change) = build(tip_commit.as_ref())? else {
            return Ok(WriteOutcome {
                ref_name: loc.name,
                commit: loc.tip.map(|o| o.to_string()).unwrap_or_default(),
                changed: false,
                enqueue_error: None,
                session: None,
            });
        };
        let tree = git
            .find_tree(change.tree)
            .map_err(git_err("read new tree"))?;
        let parent = match (&tip_commit, bootstrap) {
            (Some(c), _) => Some(c.clone()),
            (None, Some(msg)) => {
                let empty = git
                    .tree_builder(None)
                    .and_then(|mut b| b.write())
                    .map_err(git_err("write empty tree"))?;
                let empty = git.find_tree(empty).map_err(git_err("read empty tree"))?;
                let oid = git
                    .commit(
                        &author_sig,
                        &committer_sig,
                        &format!("{msg}\n"),
                        &empty,
                        &[],
                    )
                    .map_err(git_err("write bootstrap commit"))?;
                Some(
                    git.find_commit(oid)
                        .map_err(git_err("read bootstrap commit"))?,
                )
            }
            (None, None) => None,
        };
        let parents: Vec<&Commit<'r>> = parent.iter().collect();
        let new = git
            .commit(
                &author_sig,
                &committer_sig,
                &change.message,
                &tree,
                &parents,
            )
            .map_err(git_err("write checkpoint commit"))?;
        if fault("publish.commit-lost") {
            lose_loose_object(repo, new);
        }
        // A write that failed without saying so (seen on a full disk) is named as such, not as
        // the ref update's "target OID doesn't exist"; and no ref is moved onto a missing
        // commit (git-refs' own compare-and-swap does not look at the object).
        if git.header(new).is_err() {
            return Err(StoreError::ObjectNotStored {
                ref_name: loc.name,
                oid: new.to_string(),
            });
        }
        let reflog = change.message.lines().next().unwrap_or("checkpoint");
        // The expected old value is checked under the ref's lock. A create expects "must not
        // exist": libgit2's plain non-forced create checks existence before taking the lock,
        // so two concurrent creators could both succeed and one orphan commit would be lost
        // (found by tests/cli/write.rs concurrent_writers_lose_nothing).
        crashpoint("publish.before-ref-update");
        let result = repo.set_ref_matching(&loc.name, new, loc.tip, reflog);
        match result {
            Ok(()) => {
                crashpoint("publish.after-ref-update");
                return Ok(WriteOutcome {
                    ref_name: loc.name,
                    commit: new.to_string(),
                    changed: true,
                    enqueue_error: None,
                    session: None,
                });
            }
            Err(e) if e.lost_race() => {
                log::info!(
                    "lost a race on {} (attempt {}); rebuilding from the new tip",
                    loc.name,
                    attempt + 1
                );
                let zero = repo.object_format().zero();
                expected = loc.tip.unwrap_or(zero).to_string();
                last_seen = tip_of(repo, &loc.name)?.unwrap_or(zero).to_string();
            }
            Err(e) => return Err(StoreError::RefUpdate(e)),
        }
    }
    Err(StoreError::CasExhausted {
        ref_name: locate()?.name,
        attempts: MAX_ATTEMPTS,
        expected,
        actual: last_seen,
    })
}

/// The fault `publish.commit-lost` (`base::crashpoint`): removes the loose object `oid`, as a
/// full disk that lost its write would leave the object database.
fn lose_loose_object(repo: &Repo, oid: Oid) {
    let hex = oid.to_string();
    let path = repo
        .common_dir()
        .join("objects")
        .join(&hex[..2])
        .join(&hex[2..]);
    if let Err(e) = std::fs::remove_file(&path) {
        log::warn!("fault publish.commit-lost: remove {}: {e}", path.display());
    }
}
