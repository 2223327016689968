//! Flushing the queues: fan the announced refs out to every destination, reconcile a new
//! destination against its listing, and push each destination's queue in chunks.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::git::objects::Oid;

use super::batch::{
    push_batch, recover_and_push, with_credentials_hint, BatchFailure, RefResult, UNREPORTED,
};
use super::refused::{Refusal, Refused};
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
    /// Send what the server refused before too (`git entire-checkpoint push`); else what it
    /// refused within [`super::refused::HOLD`] is held back (hooks).
    pub retry_refused: bool,
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
            retry_refused: false,
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
    /// Refs due that were not sent because the server refused them before (every ref, or
    /// these as too large) within [`super::refused::HOLD`]. They stay queued.
    pub held_back: Vec<String>,
    /// Why they were held back: the server's remembered reason.
    pub held_reason: Option<String>,
    /// Set when the server refused every checkpoint ref this flush sent and took none: its
    /// reason. Remembered, so hooks hold back from now on ([`super::refused::advice`]).
    pub refused_namespace: Option<String>,
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

    let refused = super::refused::load(repo.common_dir(), &dest.fingerprint);
    if !opts.retry_refused {
        if let Some(ns) = refused.namespace.as_ref().filter(|r| r.holds()) {
            report.held_back = existing.into_iter().map(|(name, _)| name).collect();
            report.held_reason = Some(ns.reason.clone());
            return Ok(report);
        }
        let (held, rest): (Vec<_>, Vec<_>) = existing.into_iter().partition(|(name, oid)| {
            refused
                .too_large
                .get(name)
                .is_some_and(|r| r.holds_oid(*oid))
        });
        existing = rest;
        if let Some((name, _)) = held.first() {
            report.held_reason = Some(refused.too_large[name].reason.clone());
        }
        report.held_back = held.into_iter().map(|(name, _)| name).collect();
    }

    let mut settle = Settle {
        dest,
        dest_queue: &dest_queue,
        delivery: &delivery,
        report: &mut report,
        retry: Vec::new(),
        too_large: Vec::new(),
    };
    let mut consecutive_failures = 0;
    // Refs a batch failed as a whole (a `pre-receive` hook refuses a whole push for one bad
    // ref; a size limit fails a push whole, over HTTP as a transport error): pushed again in
    // halves, down to single refs, so one bad ref sinks no other.
    let mut split: Vec<Vec<(String, Oid)>> = Vec::new();
    let chunk = opts.chunk.clamp(1, MAX_CHUNK);
    let mut sizes = BatchSizes::new(chunk);
    let mut at = 0;
    while at < existing.len() {
        let batch = &existing[at..existing.len().min(at + sizes.next)];
        (opts.progress)(at, existing.len());
        if at > 0 {
            if Instant::now() >= deadline || sizes.next == 0 {
                settle.report.stopped = Some(format!("budget ({}s) exhausted", budget.as_secs()));
                break;
            }
            if consecutive_failures >= MAX_CONSECUTIVE_CHUNK_FAILURES {
                settle.report.stopped = Some(format!(
                    "{MAX_CONSECUTIVE_CHUNK_FAILURES} consecutive failed batches"
                ));
                break;
            }
        }
        let started = Instant::now();
        let pushed = push_batch(repo, dest, batch, deadline);
        at += batch.len();
        sizes.measured(batch.len(), started.elapsed(), deadline);
        match pushed {
            Ok(results) => {
                let failed = settle.landed_or_failed(batch, &results)?;
                consecutive_failures = if failed.is_empty() {
                    0
                } else {
                    consecutive_failures + 1
                };
                match failed.as_slice() {
                    [] => {}
                    // Alone in its batch: its own refusal.
                    [(name, oid)] if batch.len() == 1 => {
                        settle.single_failed(name, *oid, Failure::of(&results, name))
                    }
                    // Refused beside refs that landed: pushed again alone, as a concurrent
                    // push that created it meanwhile (`cannot lock ref`) is then answered
                    // "up to date".
                    [one] => split.push(vec![one.clone()]),
                    _ => split.extend(halves(failed)),
                }
            }
            Err(BatchFailure::Unreachable(line)) if settle.report.pushed.is_empty() => {
                settle.report.unreachable = Some(line);
                return Ok(report);
            }
            // The remote stalls: another chunk or a retry would only stall again.
            Err(BatchFailure::TimedOut(line)) => {
                settle.report.timed_out = Some(line);
                return Ok(report);
            }
            Err(BatchFailure::Unreachable(line) | BatchFailure::Failed(line)) => {
                consecutive_failures += 1;
                match batch {
                    [(name, oid)] => settle.single_failed(name, *oid, Failure::Transport(&line)),
                    _ => split.extend(halves(batch.to_vec())),
                }
            }
        }
    }
    (opts.progress)(existing.len(), existing.len());

    let mut consecutive = 0;
    while let Some(batch) = split.pop() {
        if Instant::now() >= deadline || consecutive >= MAX_CONSECUTIVE_REF_FAILURES {
            for (name, _) in batch {
                settle
                    .report
                    .failed
                    .push((name, "not retried: the flush stopped early".into()));
            }
            continue;
        }
        let outcome = push_batch(repo, dest, &batch, deadline);
        let failed = match &outcome {
            Ok(results) => settle.landed_or_failed(&batch, results)?,
            Err(BatchFailure::TimedOut(line)) => {
                settle.report.timed_out = Some(line.clone());
                return Ok(report);
            }
            Err(_) => batch.clone(),
        };
        if failed.len() < batch.len() {
            consecutive = 0;
        }
        match (failed.as_slice(), &outcome) {
            ([], _) => {}
            ([one], Ok(_)) if batch.len() > 1 => split.push(vec![one.clone()]),
            ([(name, oid)], Ok(results)) => {
                consecutive += 1;
                settle.single_failed(name, *oid, Failure::of(results, name));
            }
            ([(name, oid)], Err(BatchFailure::Unreachable(line) | BatchFailure::Failed(line))) => {
                consecutive += 1;
                settle.single_failed(name, *oid, Failure::Transport(line));
            }
            _ => split.extend(halves(failed)),
        }
    }
    let Settle {
        retry, too_large, ..
    } = settle;

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
    remember_refusals(repo, dest, refused, &too_large, &mut report);
    crate::remote::scale::record_created(repo, &dest.target, report.created);
    Ok(report)
}

/// Remembers what the server refused ([`super::refused`]), so that hooks stop sending it: the
/// refs too large for it, and whether it refused every checkpoint ref it was sent and took
/// none (then `report.refused_namespace` says so); forgets what landed.
fn remember_refusals(
    repo: &Repo,
    dest: &Destination,
    mut refused: Refused,
    too_large: &[(String, Oid, String)],
    report: &mut FlushReport,
) {
    let before = refused.clone();
    for name in &report.pushed {
        refused.too_large.remove(name);
    }
    for (name, oid, reason) in too_large {
        refused
            .too_large
            .insert(name.clone(), Refusal::now(reason.clone(), Some(*oid)));
    }
    // Refs not tried once the flush stopped early are no sign either way.
    let refused_all =
        report.pushed.is_empty() && too_large.is_empty() && !report.rejected.is_empty();
    if refused_all {
        let reason = report.rejected[0].1.clone();
        refused.namespace = Some(Refusal::now(reason.clone(), None));
        report.refused_namespace = Some(reason);
    } else if !report.pushed.is_empty() {
        refused.namespace = None;
    }
    if refused != before {
        super::refused::save(repo.common_dir(), &dest.fingerprint, &refused);
    }
}

/// How many refs the next `git push` of a flush takes, from the rate the pushes so far went
/// at: a server that runs a hook per ref (gitolite's update hook: 2,000 refs take 112 s) gets
/// batches that end within the budget left, instead of one that the deadline kills half
/// delivered and unrecorded. The first batch is small ([`FIRST_BATCH`]), so the rate is known
/// before a large one is risked; a fast server gets the whole chunk from the second on.
struct BatchSizes {
    /// The most refs a batch may take (the flush's chunk).
    most: usize,
    /// The size of the next batch.
    next: usize,
}

/// Refs in the first `git push` of a flush.
const FIRST_BATCH: usize = 16;

impl BatchSizes {
    fn new(most: usize) -> BatchSizes {
        BatchSizes {
            most,
            next: most.min(FIRST_BATCH),
        }
    }

    /// `refs` took `took`: the next batch is what fits in half the time left before `deadline`
    /// at that rate (at most [`Self::most`]), and none (0) when the time left does not hold two
    /// refs at that rate. Half, not all: a server's rate varies (a loaded machine, a slower
    /// hook), and a push killed at the deadline has delivered refs that are not recorded; the
    /// shrinking tail costs a few small pushes.
    fn measured(&mut self, refs: usize, took: Duration, deadline: Instant) {
        let per_ref = took.as_secs_f64() / refs.max(1) as f64;
        let left = deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        let fits = if per_ref > 0.0 {
            (left * 0.5 / per_ref) as usize
        } else {
            self.most
        };
        self.next = match left < 2.0 * per_ref {
            true => 0,
            false => fits.clamp(1, self.most),
        };
    }
}

/// `batch` (of two refs or more) in two halves, the first last: pushed first from a stack.
fn halves(mut batch: Vec<(String, Oid)>) -> [Vec<(String, Oid)>; 2] {
    debug_assert!(batch.len() > 1, "a single ref is settled, not split");
    let second = batch.split_off(batch.len() / 2);
    [second, batch]
}

/// Why a ref pushed on its own (or refused on its own) did not land.
enum Failure<'a> {
    /// The server refused it: git's summary, with the server's words.
    Refused(&'a str),
    /// git did not mention it.
    Unreported,
    /// The push failed whole (no ref reported): git's error line.
    Transport(&'a str),
}

impl<'a> Failure<'a> {
    /// What `results` say of `name`, which did not land.
    fn of(results: &'a [PushedRef], name: &str) -> Self {
        match RefResult::find(results, name) {
            RefResult::Refused(why) | RefResult::NonFastForward(why) => Failure::Refused(why),
            RefResult::Landed | RefResult::Unreported => Failure::Unreported,
        }
    }
}

/// The per-ref results of a flush's pushes, settled into its report, the destination's queue
/// and its delivery record.
struct Settle<'a> {
    dest: &'a Destination,
    dest_queue: &'a PushQueue,
    delivery: &'a Delivery,
    report: &'a mut FlushReport,
    /// Refs refused as non-fast-forward: recovered by merging after the pushes.
    retry: Vec<(String, Oid)>,
    /// Refs larger than the server accepts, and why.
    too_large: Vec<(String, Oid, String)>,
}

impl Settle<'_> {
    /// Records what of `batch` landed per `results` and sets aside the refs to recover by
    /// merging; returns the refs refused or not reported, in order.
    fn landed_or_failed(
        &mut self,
        batch: &[(String, Oid)],
        results: &[PushedRef],
    ) -> Result<Vec<(String, Oid)>, PushError> {
        let by_dst: HashMap<&str, &PushedRef> =
            results.iter().map(|r| (r.dst.as_str(), r)).collect();
        let (mut landed, mut delivered, mut failed) = (Vec::new(), Vec::new(), Vec::new());
        for (name, oid) in batch {
            let result = by_dst.get(name.as_str()).copied();
            if result.is_some_and(|r| r.status == PushStatus::New) {
                self.report.created += 1;
            }
            match RefResult::of(result) {
                RefResult::Landed => {
                    landed.push(name.clone());
                    delivered.push((name.clone(), *oid));
                }
                RefResult::NonFastForward(_) => self.retry.push((name.clone(), *oid)),
                RefResult::Refused(_) | RefResult::Unreported => failed.push((name.clone(), *oid)),
            }
        }
        self.dest_queue.remove(&landed)?;
        self.delivery.record(&self.dest.fingerprint, &delivered);
        self.report.pushed.extend(landed);
        Ok(failed)
    }

    /// Settles a ref that failed on its own: refused by the server (too large for it when
    /// its words name a size limit), or failed.
    fn single_failed(&mut self, name: &str, oid: Oid, failure: Failure<'_>) {
        let name = name.to_owned();
        match failure {
            Failure::Refused(why) => match git::size_limit(why) {
                Some(limit) => self.too_large(name, oid, format!("too large for it ({limit}): {why}")),
                None => self.report.rejected.push((name, why.to_owned())),
            },
            Failure::Unreported => self.report.failed.push((name, UNREPORTED.into())),
            Failure::Transport(line) => match git::size_limit(line) {
                Some(limit) => self.too_large(name, oid, format!("too large for it ({limit}): {line}")),
                // Others of this flush landed, and this one fails alone: a server that drops
                // a push larger than it accepts instead of answering (Apache in front of
                // `receive.maxInputSize`: an empty reply).
                None if !self.report.pushed.is_empty() => self.too_large(
                    name,
                    oid,
                    format!("too large for it, it seems: it dropped this ref's push alone and took the others, as a size limit does (receive.maxInputSize, a web server's body limit): {line}"),
                ),
                None => self.report.failed.push((name, line.to_owned())),
            },
        }
    }

    /// A ref too large for the server: refused, and remembered so that hooks stop sending it.
    fn too_large(&mut self, name: String, oid: Oid, reason: String) {
        self.report.rejected.push((name.clone(), reason.clone()));
        self.too_large.push((name, oid, reason));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_fits_half_the_time_left_and_none_starts_that_two_refs_would_outlast() {
        let mut sizes = BatchSizes::new(200);
        assert_eq!(sizes.next, FIRST_BATCH);
        let deadline = Instant::now() + Duration::from_secs(10);
        // 0.1 s a ref with about 10 s left: about 50 refs in the next push.
        sizes.measured(16, Duration::from_millis(1600), deadline);
        assert!((45..=50).contains(&sizes.next), "{}", sizes.next);
        // 6 s a ref: two would outlast the 10 s left, so no push starts.
        sizes.measured(1, Duration::from_secs(6), deadline);
        assert_eq!(sizes.next, 0);
        // Instant pushes: as many as a batch may take.
        sizes.measured(16, Duration::ZERO, deadline);
        assert_eq!(sizes.next, 200);
    }
}
