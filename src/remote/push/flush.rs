//! Flushing the queues: fan the announced refs out to every destination, reconcile a new
//! destination against its listing, and push each destination's queue in chunks.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::git::objects::Oid;

use super::batch::{
    push_batch, recover_and_push, with_credentials_hint, BatchFailure, RefResult, UNREPORTED,
};
use super::{
    bounded, PushError, DEFAULT_BUDGET, MAX_CHUNK, MAX_CONSECUTIVE_CHUNK_FAILURES,
    MAX_CONSECUTIVE_REF_FAILURES,
};
use crate::base::crashpoint::crashpoint;
use crate::base::error::io_context as io_err;
use crate::git::refname::CheckpointRef;
use crate::git::repo::Repo;
use crate::git::side::{SideError, SideRepo};
use crate::git::subprocess::{self as git, GitError, PushStatus, PushedRef};
use crate::remote::destination::{fingerprint_of, Delivery, Destination};
use crate::store::queue::PushQueue;
use crate::store::refs::GitRefsStore;

/// Options of a flush.
#[derive(Clone, Copy)]
pub struct FlushOptions<'p> {
    /// The time budget of the whole flush.
    pub budget: Duration,
    /// Refs per `git push`, at most [`MAX_CHUNK`].
    pub chunk: usize,
    /// Reconcile against the remote's listing even if the destination is known (`push --all`).
    pub reconcile: bool,
    /// Told `(refs attempted, refs to push)` before each `git push` of a chunk, and once at
    /// the end.
    pub progress: &'p dyn Fn(usize, usize),
    /// The destination is a dedicated checkpoint remote: what it confirms is never sent to
    /// another destination unless the user names that one.
    pub checkpoint_remote: bool,
    /// The user named the destination: refs a checkpoint remote confirmed go there too.
    pub named: bool,
}

impl Default for FlushOptions<'_> {
    fn default() -> Self {
        FlushOptions {
            budget: DEFAULT_BUDGET,
            chunk: MAX_CHUNK,
            reconcile: false,
            progress: &|_, _| {},
            checkpoint_remote: false,
            named: false,
        }
    }
}

/// What a flush did.
#[derive(Debug, Default)]
pub struct FlushReport {
    /// The destination as shown to people.
    pub destination: String,
    /// Refs that were due for this destination.
    pub due: usize,
    /// Refs the remote now has.
    pub pushed: Vec<String>,
    /// How many of them the push created there (new refs, not updates).
    pub created: usize,
    /// Queued refs that no longer exist locally (dropped from the queue).
    pub stale: Vec<String>,
    /// Refs due that a checkpoint remote confirmed, not sent to this destination since the
    /// user did not name it: they stay queued for it.
    pub withheld: Vec<String>,
    /// The checkpoint remotes that confirmed them, as shown.
    pub withheld_for: Vec<String>,
    /// Refs the server refused: `(ref, git's summary)`. They stay queued.
    pub rejected: Vec<(String, String)>,
    /// Refs that failed otherwise: `(ref, reason)`. They stay queued.
    pub failed: Vec<(String, String)>,
    /// Decisions of semantic merges made during recovery.
    pub merge_notes: Vec<String>,
    /// Refs that were merged with the remote's version and then pushed.
    pub recovered: Vec<String>,
    /// Set when the destination could not be reached at all (one redacted git line).
    pub unreachable: Option<String>,
    /// Set when the flush stopped early (budget, consecutive failures).
    pub stopped: Option<String>,
    /// Set when a git call ran out of time and was killed (one line): the flush stopped there,
    /// and everything that did not land stays queued.
    pub timed_out: Option<String>,
}

impl FlushReport {
    /// Refs still waiting for this destination.
    pub fn remaining(&self) -> usize {
        self.due
            .saturating_sub(self.pushed.len() + self.stale.len())
    }
}

/// Runs the git-refs flush to `dest`.
pub fn flush(
    repo: &Repo,
    refs_store: &GitRefsStore<'_>,
    dest: &Destination,
    opts: &FlushOptions<'_>,
) -> Result<FlushReport, PushError> {
    let budget = bounded(opts.budget);
    let deadline = Instant::now() + budget;
    let delivery = Delivery::new(repo.common_dir());
    let shared = refs_store.queue();
    let dest_queue = delivery.queue(&dest.fingerprint);
    let mut report = FlushReport {
        destination: dest.display.clone(),
        ..Default::default()
    };

    // Fast path: nothing announced and nothing pending for a known destination.
    let known = delivery.load().destinations.contains_key(&dest.fingerprint);
    if known && !opts.reconcile && !shared.path().exists() && !dest_queue.path().exists() {
        return Ok(report);
    }
    // Only now is git needed: the empty-queue path above stays within a few milliseconds.
    git::require_supported()?;

    if !known || opts.reconcile {
        // Nothing moved yet: everything announced or pending stays where it is.
        let due = || -> Result<usize, PushError> {
            Ok(shared.peek()?.len().max(dest_queue.peek()?.len()))
        };
        match reconcile(repo, refs_store, dest, deadline) {
            Ok(missing) => dest_queue.enqueue_all(&missing)?,
            Err(ReconcileError::Unreachable(line)) => {
                report.due = due()?;
                report.unreachable = Some(line);
                return Ok(report);
            }
            Err(ReconcileError::Push(PushError::Git(e @ GitError::Timeout { .. }))) => {
                report.due = due()?;
                report.timed_out = Some(e.to_string());
                return Ok(report);
            }
            Err(ReconcileError::Push(e)) => return Err(e),
        }
    }
    fan_out(repo, &delivery, shared, dest, opts.checkpoint_remote)?;

    let mut due = dest_queue.drain()?;
    report.due = due.len();
    if !opts.checkpoint_remote && !opts.named {
        let (confirmed, by) = delivery.confirmed_by_checkpoint_remotes(&dest.fingerprint);
        if !confirmed.is_empty() {
            let (withheld, rest) = due.into_iter().partition(|r| confirmed.contains(r));
            (report.withheld, due) = (withheld, rest);
            if !report.withheld.is_empty() {
                report.withheld_for = by;
            }
        }
    }
    log::debug!("{} checkpoint ref(s) due for {}", due.len(), dest.display);
    let mut existing: Vec<(String, Oid)> = Vec::new();
    for name in due {
        match crate::store::publish::tip_of(repo, &name) {
            Ok(Some(oid)) => match CheckpointRef::parse(&name)
                .ok()
                .and_then(|r| crate::store::refs::shape_problem(repo, r.id(), oid))
            {
                // Never pushed: a remote holding it breaks `gc` in every clone that fetches
                // it. It stays queued, so it goes once it is fixed.
                Some(why) => report
                    .failed
                    .push((name, format!("not a checkpoint, not pushed: {why}"))),
                None => existing.push((name, oid)),
            },
            Ok(None) => report.stale.push(name),
            // A lookup that fails for another reason keeps the ref queued.
            Err(e) => report
                .failed
                .push((name, crate::base::error::error_chain(&e))),
        }
    }
    dest_queue.remove(&report.stale)?;

    let mut consecutive_failures = 0;
    let mut retry: Vec<(String, Oid)> = Vec::new();
    let mut individually: Vec<(String, Oid)> = Vec::new();
    let chunk = opts.chunk.clamp(1, MAX_CHUNK);
    for (i, batch) in existing.chunks(chunk).enumerate() {
        (opts.progress)(i * chunk, existing.len());
        if i > 0 {
            if Instant::now() >= deadline {
                report.stopped = Some(format!("budget ({}s) exhausted", budget.as_secs()));
                break;
            }
            if consecutive_failures >= MAX_CONSECUTIVE_CHUNK_FAILURES {
                report.stopped = Some(format!(
                    "{MAX_CONSECUTIVE_CHUNK_FAILURES} consecutive failed batches"
                ));
                break;
            }
        }
        match push_batch(repo, dest, batch, deadline) {
            Ok(results) => {
                let by_dst: HashMap<&str, &PushedRef> =
                    results.iter().map(|r| (r.dst.as_str(), r)).collect();
                let mut landed = Vec::new();
                let mut delivered = Vec::new();
                let mut any_failed = false;
                for (name, oid) in batch {
                    let result = by_dst.get(name.as_str()).copied();
                    if result.is_some_and(|r| r.status == PushStatus::New) {
                        report.created += 1;
                    }
                    match RefResult::of(result) {
                        RefResult::Landed => {
                            landed.push(name.clone());
                            delivered.push((name.clone(), *oid));
                        }
                        RefResult::NonFastForward(_) => retry.push((name.clone(), *oid)),
                        // A pre-receive hook refuses a whole push for one bad ref: try the
                        // refused refs of a shared batch again one by one.
                        RefResult::Refused(_) if batch.len() > 1 => {
                            any_failed = true;
                            individually.push((name.clone(), *oid))
                        }
                        RefResult::Refused(why) => {
                            any_failed = true;
                            report.rejected.push((name.clone(), why.to_owned()))
                        }
                        RefResult::Unreported => {
                            any_failed = true;
                            report.failed.push((name.clone(), UNREPORTED.into()))
                        }
                    }
                }
                dest_queue.remove(&landed)?;
                delivery.record(&dest.fingerprint, &delivered);
                report.pushed.extend(landed);
                consecutive_failures = if any_failed {
                    consecutive_failures + 1
                } else {
                    0
                };
            }
            Err(BatchFailure::Unreachable(line)) if report.pushed.is_empty() => {
                report.unreachable = Some(line);
                return Ok(report);
            }
            // The remote stalls: another chunk or a retry would only stall again.
            Err(BatchFailure::TimedOut(line)) => {
                report.timed_out = Some(line);
                return Ok(report);
            }
            Err(BatchFailure::Unreachable(line) | BatchFailure::Failed(line)) => {
                consecutive_failures += 1;
                for (name, _) in batch {
                    report.failed.push((name.clone(), line.clone()));
                }
            }
        }
    }

    (opts.progress)(existing.len(), existing.len());
    let mut consecutive = 0;
    for (name, oid) in individually {
        if Instant::now() >= deadline || consecutive >= MAX_CONSECUTIVE_REF_FAILURES {
            report
                .failed
                .push((name, "not retried: the flush stopped early".into()));
            continue;
        }
        match push_batch(repo, dest, &[(name.clone(), oid)], deadline) {
            Ok(results) => match RefResult::find(&results, &name) {
                RefResult::Landed => {
                    consecutive = 0;
                    if results
                        .iter()
                        .any(|r| r.dst == name && r.status == PushStatus::New)
                    {
                        report.created += 1;
                    }
                    dest_queue.remove(std::slice::from_ref(&name))?;
                    delivery.record(&dest.fingerprint, &[(name.clone(), oid)]);
                    report.pushed.push(name);
                }
                RefResult::NonFastForward(_) => retry.push((name, oid)),
                RefResult::Refused(why) => {
                    consecutive += 1;
                    report.rejected.push((name, why.to_owned()));
                }
                RefResult::Unreported => {
                    consecutive += 1;
                    report.failed.push((name, UNREPORTED.into()));
                }
            },
            Err(BatchFailure::TimedOut(line)) => {
                report.timed_out = Some(line);
                return Ok(report);
            }
            Err(BatchFailure::Unreachable(line) | BatchFailure::Failed(line)) => {
                consecutive += 1;
                report.failed.push((name, line));
            }
        }
    }

    for (name, oid) in retry {
        if Instant::now() >= deadline {
            report
                .failed
                .push((name, "budget exhausted before recovery".into()));
            continue;
        }
        match recover_and_push(repo, dest, &name, oid, deadline) {
            Ok((notes, tip)) => {
                report.merge_notes.extend(notes);
                dest_queue.remove(std::slice::from_ref(&name))?;
                delivery.record(&dest.fingerprint, &[(name.clone(), tip)]);
                report.recovered.push(name.clone());
                report.pushed.push(name);
            }
            Err(e) => report
                .failed
                .push((name, crate::base::error::error_chain(&e))),
        }
    }
    crate::remote::scale::record_created(repo, &dest.target, report.created);
    Ok(report)
}

/// Moves the announced refs into the queue of every destination still configured (plus `dest`),
/// then clears them from the shared queue. Destinations no longer configured are forgotten; if
/// they come back they are reconciled afresh. With a checkpoint remote configured, only it is a
/// destination: the code remotes' queues are dropped (`checkpoint_remote::delivery_targets`).
///
/// A destination flushed as a dedicated checkpoint remote (`checkpoint_remote`) is remembered
/// as one, and what it confirmed is kept when it is forgotten: those refs are never sent to
/// another destination unless the user names it ([`FlushOptions::named`]), even once the
/// setting that chose it is gone.
pub(super) fn fan_out(
    repo: &Repo,
    delivery: &Delivery,
    shared: &PushQueue,
    dest: &Destination,
    checkpoint_remote: bool,
) -> Result<(), PushError> {
    let _lock = delivery.lock().map_err(io_err("lock destinations"))?;
    {
        let mut reg = delivery.load();
        let live: Vec<String> = crate::remote::checkpoint_remote::delivery_targets(repo)
            .iter()
            .map(|n| fingerprint_of(repo, n))
            .collect();
        reg.destinations
            .insert(dest.fingerprint.clone(), dest.display.clone());
        if checkpoint_remote {
            reg.checkpoint_remotes
                .insert(dest.fingerprint.clone(), dest.display.clone());
        }
        let gone: Vec<String> = reg
            .destinations
            .keys()
            .filter(|fp| **fp != dest.fingerprint && !live.contains(fp))
            .cloned()
            .collect();
        for fp in gone {
            reg.destinations.remove(&fp);
            let q = delivery.queue(&fp);
            let _ = std::fs::remove_file(q.path());
            if !reg.checkpoint_remotes.contains_key(&fp) {
                let _ = std::fs::remove_file(delivery.ledger(&fp));
            }
        }
        let announced = shared.drain()?;
        for fp in reg.destinations.keys() {
            delivery.queue(fp).enqueue_all(&announced)?;
        }
        delivery.save(&reg).map_err(io_err(format!(
            "write {}",
            delivery.registry_path().display()
        )))?;
        crashpoint("push.after-fan-out");
        shared.remove(&announced)?;
        Ok(())
    }
}

/// Why a reconcile learned nothing about the destination.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReconcileError {
    /// The destination could not be reached: git's error line.
    #[error("{0}")]
    Unreachable(String),
    /// The push machinery failed (a git timeout among them).
    #[error(transparent)]
    Push(#[from] PushError),
}

/// Local checkpoint refs the destination lacks or has at another commit, from one `ls-remote`.
pub(super) fn reconcile(
    repo: &Repo,
    refs_store: &GitRefsStore<'_>,
    dest: &Destination,
    deadline: Instant,
) -> Result<Vec<String>, ReconcileError> {
    let local = refs_store.refs().map_err(PushError::from)?;
    if local.is_empty() {
        return Ok(Vec::new());
    }
    let side = SideRepo::new(repo, &[])
        .map_err(io_err("create side repository"))
        .map_err(PushError::from)?;
    let listed = side
        .ls_remote_checkpoints(
            &dest.target,
            deadline.saturating_duration_since(Instant::now()),
        )
        .map_err(|e| match e {
            SideError::Git(e) => ReconcileError::Push(e.into()),
            e => ReconcileError::Unreachable(with_credentials_hint(e.to_string())),
        })?;
    let remote: HashMap<&str, &str> = listed
        .iter()
        .map(|(r, oid)| (r.name(), oid.as_str()))
        .collect();
    crate::remote::scale::record_remote_count(repo, &dest.target, listed.len());
    log::info!(
        "reconciling with {}: {} local checkpoint ref(s), {} on the remote",
        dest.display,
        local.len(),
        remote.len()
    );
    let (present, missing): (Vec<_>, Vec<_>) = local
        .into_values()
        .partition(|(name, oid)| remote.get(name.as_str()) == Some(&oid.to_string().as_str()));
    // Only what the record lacks: a repeated `push --all` must not grow it by every ref.
    let delivery = Delivery::new(repo.common_dir());
    delivery.compact(&dest.fingerprint);
    let known = delivery.delivered(&dest.fingerprint).unwrap_or_default();
    let news: Vec<(String, Oid)> = present
        .into_iter()
        .filter(|(name, oid)| known.get(name) != Some(oid))
        .collect();
    delivery.record(&dest.fingerprint, &news);
    Ok(missing.into_iter().map(|(name, _)| name).collect())
}
