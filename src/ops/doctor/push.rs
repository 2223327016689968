//! The checks of the push bookkeeping: queue entries whose ref is gone (`queue-orphan`, dropped
//! by `--fix`), checkpoint refs no queue holds that a destination lacks (`unqueued-unpushed`,
//! enqueued by `--fix`; `delivery-unrecorded`), the v1 branch (`ulid-on-v1`, `v1-disconnected`,
//! replayed locally by `--fix`), and the checkpoint remote's cost and settings
//! (`remote-ref-count`, `checkpoint-remote-invalid`).
//!
//! ## "Unpushed" without the network
//! A checkpoint ref is *unqueued and unpushed* when it is not in the shared queue (which every
//! push fans out to every destination) and some destination a push registered has neither the
//! ref in its own queue nor a delivery record listing the ref at its current tip (the record is
//! kept by [`crate::remote::push`]). A destination that no push registered yet is reconciled against
//! the remote's listing at its first push, so it loses nothing; a registered destination without
//! any delivery record (pushed by a version that kept none) is reported once as
//! [`Code::DeliveryUnrecorded`], with `push --all` as the repair.

use std::collections::{HashMap, HashSet};

use crate::git::objects::Oid;

use super::{git_err, scan, Code, Command, Context, DoctorError, Finding};
use crate::base::id::IdKind;
use crate::git::repo::Repo;
use crate::remote::push::refused::{self, Refusal};
use crate::store::branch::V1_BRANCH_REF;
use crate::store::queue::PushQueue;
use crate::store::StoreKind;

/// Every queue doctor knows: the shared one, then each registered destination's.
fn queues(repo: &Repo) -> Vec<(String, PushQueue)> {
    let mut out = vec![(
        "the shared queue".to_owned(),
        PushQueue::in_common_dir(repo.common_dir()),
    )];
    out.extend(
        crate::remote::destination::destination_books(repo)
            .into_iter()
            .map(|b| (format!("the queue of {}", b.display), b.queue)),
    );
    out
}

/// The refusal of every checkpoint ref remembered for the destination of `fingerprint`, while
/// it holds the hooks' pushes back.
fn refused_namespace(repo: &Repo, fingerprint: &str) -> Option<Refusal> {
    refused::load(repo.common_dir(), fingerprint)
        .namespace
        .filter(Refusal::holds)
}

/// What to do instead of a push to `target` (a remote name or URL) while its server's refusal
/// of every checkpoint ref is remembered; `None` when none is.
pub(super) fn refusal_advice(repo: &Repo, target: &str) -> Option<String> {
    let fingerprint = crate::remote::destination::fingerprint_of(repo, target);
    refused_namespace(repo, &fingerprint).map(|_| refused::advice(target))
}

/// `push-refused`: what a destination's server refused, as remembered by the pushes (offline):
/// every checkpoint ref (subject: the destination), or a ref too large for it (subject: the
/// ref). Hooks hold those back for a while, so the advice is what a person can change, never
/// a push that cannot work.
pub(super) fn push_refused(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let mut out = Vec::new();
    for b in crate::remote::destination::destination_books(cx.repo) {
        let remembered = refused::load(cx.repo.common_dir(), &b.fingerprint);
        if let Some(r) = remembered.namespace.filter(Refusal::holds) {
            out.push(
                Finding::new(
                    Code::PushRefused,
                    &b.display,
                    format!(
                        "refuses checkpoint refs (refs/entire/*); {} wait in its queue; it said: {}",
                        b.queue.peek()?.len(),
                        r.reason
                    ),
                )
                .advise(refused::advice(&b.display)),
            );
        }
        for (name, r) in remembered.too_large.into_iter().filter(|(_, r)| r.holds()) {
            out.push(
                Finding::new(
                    Code::PushRefused,
                    name,
                    format!("refused by {} as {}", b.display, r.reason),
                )
                .advise(
                    "raise the server's limit, or set strategy_options.checkpoint_remote to a \
                     remote that takes it; hooks hold it back for a day, `git entire-checkpoint \
                     push` sends it now",
                ),
            );
        }
    }
    Ok(out)
}

/// `queue-orphan`: queued refs that no longer exist. The fix drops exactly those entries.
pub(super) fn queue_orphans(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let mut out = Vec::new();
    for (what, queue) in queues(cx.repo) {
        let mut gone = Vec::new();
        for name in queue.peek()? {
            if crate::store::publish::tip_of(cx.repo, &name)?.is_none() {
                gone.push(name);
            }
        }
        if cx.fix {
            queue.remove(&gone)?;
        }
        out.extend(gone.into_iter().map(|name| {
            Finding::new(
                Code::QueueOrphan,
                &name,
                format!("queued in {what} but the ref no longer exists"),
            )
            .repair(Command::ours(["doctor", "--fix"]))
            .fixed_if(cx.fix)
        }));
    }
    Ok(out)
}

/// `unqueued-unpushed` and `delivery-unrecorded` (see the module docs for what "unpushed" means
/// offline). The fix enqueues the refs in the shared queue, which the next push fans out to every
/// destination.
pub(super) fn unqueued_unpushed(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let books = crate::remote::destination::destination_books(cx.repo);
    let mut out = Vec::new();
    // The shared queue is fanned out to every destination; a destination's own queue and
    // record cover that destination only.
    let announced: HashSet<String> = PushQueue::in_common_dir(cx.repo.common_dir())
        .peek()?
        .into_iter()
        .collect();
    let mut recorded: Vec<(&str, HashSet<String>, &HashMap<String, Oid>)> = Vec::new();
    for b in &books {
        match &b.delivered {
            Some(d) => recorded.push((&b.display, b.queue.peek()?.into_iter().collect(), d)),
            // Nothing landed there because the server refuses checkpoints (`push-refused`).
            None if refused_namespace(cx.repo, &b.fingerprint).is_some() => {}
            None => out.push(
                Finding::new(
                    Code::DeliveryUnrecorded,
                    &b.display,
                    "pushed to before deliveries were recorded; doctor cannot tell what it lacks",
                )
                .repair(Command::ours(["push", b.display.as_str(), "--all"])),
            ),
        }
    }
    let mut missing: Vec<(String, Vec<&str>)> = Vec::new();
    for (r, oid) in scan(cx.repo)?.refs {
        if announced.contains(r.name()) {
            continue;
        }
        let lacking: Vec<&str> = recorded
            .iter()
            .filter(|(_, queued, d)| !queued.contains(r.name()) && d.get(r.name()) != Some(&oid))
            .map(|(display, _, _)| *display)
            .collect();
        if !lacking.is_empty() {
            missing.push((r.name().to_owned(), lacking));
        }
    }
    if cx.fix {
        let names: Vec<String> = missing.iter().map(|(n, _)| n.clone()).collect();
        PushQueue::in_common_dir(cx.repo.common_dir()).enqueue_all(&names)?;
    }
    out.extend(missing.into_iter().map(|(name, lacking)| {
        Finding::new(
            Code::UnqueuedUnpushed,
            name,
            format!(
                "in no push queue and not delivered to {}",
                lacking.join(", ")
            ),
        )
        .repair(Command::ours(["push", "--all"]))
        .fixed_if(cx.fix)
    }));
    Ok(out)
}

/// `ulid-on-v1` (under a git-branch primary) and `v1-disconnected` (the local branch and a
/// remote-tracking one share no commit). The fix replays the local commits onto the
/// remote-tracking tip of the push remote with the push recovery's merge, locally (no network,
/// no push, no force), so the next push is a fast-forward; other remotes are only reported, as
/// the branch can descend from one unrelated history at a time.
pub(super) fn v1_branch(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let repo = cx.repo;
    let Some(local) = crate::store::publish::tip_of(repo, V1_BRANCH_REF)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    if cx
        .topology
        .as_ref()
        .is_some_and(|t| t.primary() == StoreKind::GitBranch)
    {
        let commit = repo
            .objects()
            .find_commit(local)
            .map_err(git_err("read the v1 tip"))?;
        let tree = commit.tree().map_err(git_err("read the v1 tree"))?;
        for e in crate::store::branch::v1_subtrees(repo, &tree)? {
            if crate::base::id::kind_of(&e.raw_id) == Some(IdKind::Ulid) {
                out.push(Finding::new(
                    Code::UlidOnV1,
                    format!("{V1_BRANCH_REF}:{}", e.path),
                    format!(
                        "checkpoint {} is a ULID on the v1 branch, which the git-branch primary never writes; clients that only know hex IDs cannot read it",
                        e.raw_id
                    ),
                ));
            }
        }
    }
    let push_remote = crate::remote::destination::default_remote(repo);
    for remote in repo.remote_names() {
        let tracking = format!("refs/remotes/{remote}/entire/checkpoints/v1");
        let Some(theirs) = crate::store::publish::tip_of(repo, &tracking)? else {
            continue;
        };
        if repo.histories_meet(local, theirs) {
            continue;
        }
        let fixed = cx.fix
            && push_remote.as_deref() == Some(remote.as_str())
            && crate::remote::push::replay_v1_onto(repo, local, theirs)?.is_ok();
        out.push(
            Finding::new(
                Code::V1Disconnected,
                V1_BRANCH_REF,
                format!("shares no history with {tracking}; a plain push would be refused"),
            )
            .repair(Command::ours(["push", remote.as_str()]))
            .fixed_if(fixed),
        );
    }
    Ok(out)
}

/// `remote-ref-count` (from [`crate::remote::scale::warning`], offline: the count recorded at the last
/// listing or push) and `checkpoint-remote-invalid`. Nothing to fix locally: the advice names
/// the settings and server options that remove the cost.
pub(super) fn remote_ref_count(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let target = match crate::remote::checkpoint_remote::resolve(cx.repo, None) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => {
            // The file that sets it: the per-clone one wins over the committed one.
            let file = cx
                .repo
                .settings()
                .strategy_option(crate::remote::checkpoint_remote::SETTING)
                .map_or_else(|| ".entire/settings.json".to_owned(), |(_, _, file)| file);
            return Ok(vec![Finding::new(
                Code::CheckpointRemoteInvalid,
                file,
                crate::base::error::error_chain(&e),
            )]);
        }
    };
    Ok(crate::remote::scale::warning(cx.repo, &target)
        .map(|message| Finding::new(Code::RemoteRefCount, target.display.clone(), message))
        .into_iter()
        .collect())
}
