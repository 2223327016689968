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

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use git2::Oid;

use crate::base::crashpoint::crashpoint;
use crate::base::error::io_context as io_err;
use crate::base::error::ExitStatus;
use crate::base::id::CheckpointId;
use crate::git::refname::{CheckpointRef, ForeignRef};
use crate::git::repo::Repo;
use crate::git::side::{SideError, SideRepo};
use crate::git::subprocess::{self as git, GitError, PushedRef};
use crate::git::url::Remote;
use crate::remote::destination::{fingerprint_of, Delivery, Destination};
use crate::store::merge;
use crate::store::queue::{PushQueue, QueueError};
use crate::store::refs::GitRefsStore;
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
                    if result.is_some_and(|r| r.flag == '*') {
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
                    if results.iter().any(|r| r.dst == name && r.flag == '*') {
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
fn fan_out(
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
enum ReconcileError {
    /// The destination could not be reached: git's error line.
    #[error("{0}")]
    Unreachable(String),
    /// The push machinery failed (a git timeout among them).
    #[error(transparent)]
    Push(#[from] PushError),
}

/// Local checkpoint refs the destination lacks or has at another commit, from one `ls-remote`.
fn reconcile(
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
            e => ReconcileError::Unreachable(e.to_string()),
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

/// What `git push --porcelain` said about one ref.
enum RefResult<'a> {
    /// The remote has it now.
    Landed,
    /// The remote has commits we lack: recoverable by merging. git's summary.
    NonFastForward(&'a str),
    /// Refused otherwise (server hook, protected ref): git's summary.
    Refused(&'a str),
    /// git did not mention the ref.
    Unreported,
}

const UNREPORTED: &str = "not reported by git push";

impl<'a> RefResult<'a> {
    fn of(r: Option<&'a PushedRef>) -> Self {
        match r {
            Some(r) if r.landed() => RefResult::Landed,
            Some(r) if r.non_fast_forward() => RefResult::NonFastForward(&r.summary),
            Some(r) => RefResult::Refused(&r.summary),
            None => RefResult::Unreported,
        }
    }

    fn find(results: &'a [PushedRef], name: &str) -> Self {
        Self::of(results.iter().find(|r| r.dst == name))
    }
}

/// Why a `git push` reported no ref at all; each holds the message for the report.
#[derive(Debug, thiserror::Error)]
enum BatchFailure {
    /// The remote could not be reached: git's error line.
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
enum RecoveryError {
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
fn push_batch(
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

/// One `git push --porcelain --no-verify` of `specs` from a side repository holding `refs`.
/// Per-ref results come back as they are; `Err` only when git reported no ref at all.
fn push_refs(
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
        .git()
        .args(["push", "--porcelain", "--no-verify"])
        .remote(target, specs.iter().map(PushRefspec::as_str))
        .run(deadline.saturating_duration_since(Instant::now()))
        .map_err(|e| match e {
            GitError::Timeout { .. } => BatchFailure::TimedOut(e.to_string()),
            e => BatchFailure::Failed(e.to_string()),
        })?;
    crashpoint("push.after-git-push");
    let results = git::parse_push_porcelain(&out.stdout);
    if results.is_empty() && !out.success() {
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
fn recover_and_push(
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

/// The merged tree of one replayed commit: given the local commit and the current tip's tree.
type MergeStep<'a> =
    dyn Fn(&git2::Commit<'_>, &git2::Tree<'_>) -> Result<(Oid, Vec<String>), StoreError> + 'a;

/// Replays the local commits since the merge base (all of them when the histories are
/// disconnected) on top of `remote`, each tree merged with the current tip by `step`. Commits
/// whose merge changes nothing are dropped (data-less ones, like an empty bootstrap). Returns
/// the new tip, a descendant of `remote`, and the merge decisions.
fn replay(
    repo: &Repo,
    local: Oid,
    remote: Oid,
    step: &MergeStep<'_>,
) -> Result<(Oid, Vec<String>), StoreError> {
    let git = &repo.git;
    let err = crate::store::git_err;
    let base = git.merge_base(local, remote).ok();
    if base == Some(local) {
        return Ok((remote, Vec::new()));
    }
    let mut chain = Vec::new();
    let mut cur = Some(git.find_commit(local).map_err(err("read local tip"))?);
    while let Some(c) = cur {
        if Some(c.id()) == base {
            break;
        }
        cur = c.parents().next();
        chain.push(c);
    }
    chain.reverse();
    let mut tip = git.find_commit(remote).map_err(err("read remote tip"))?;
    let mut notes = Vec::new();
    let committer = repo.signature(&repo.identity("COMMITTER"), "COMMITTER")?;
    for c in chain {
        let theirs = tip.tree().map_err(err("read remote tree"))?;
        let (merged, step_notes) = step(&c, &theirs)?;
        notes.extend(step_notes);
        if merged == theirs.id() {
            continue;
        }
        let tree = git.find_tree(merged).map_err(err("read merged tree"))?;
        let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
        let oid = git
            .commit(None, &c.author(), &committer, &message, &tree, &[&tip])
            .map_err(err("write replayed commit"))?;
        tip = git.find_commit(oid).map_err(err("read replayed commit"))?;
    }
    notes.dedup();
    Ok((tip.id(), notes))
}

/// A replay step for one checkpoint ref: the whole tree is the checkpoint.
fn checkpoint_step<'a>(
    repo: &'a Repo,
    id: &'a CheckpointId,
) -> impl Fn(&git2::Commit<'_>, &git2::Tree<'_>) -> Result<(Oid, Vec<String>), StoreError> + 'a {
    move |c, theirs| {
        let ours = c.tree().map_err(crate::store::git_err("read local tree"))?;
        let m = merge::merge_trees(&repo.git, id, &ours, theirs, "", &repo.settings().limits())?;
        Ok((m.tree, m.notes))
    }
}

/// A replay step for the v1 branch: every checkpoint subtree the local commit changed is merged
/// into the tip's tree (a deletion is never replayed: nothing is dropped).
fn v1_step(
    repo: &Repo,
) -> impl Fn(&git2::Commit<'_>, &git2::Tree<'_>) -> Result<(Oid, Vec<String>), StoreError> + '_ {
    use crate::store::branch::v1_subtrees;
    move |c, theirs| {
        let git = &repo.git;
        let err = crate::store::git_err;
        let ours = c.tree().map_err(err("read local tree"))?;
        let before: HashMap<String, Oid> = match c.parents().next() {
            Some(p) => v1_subtrees(repo, &p.tree().map_err(err("read parent tree"))?)?
                .into_iter()
                .map(|e| (e.path, e.tree))
                .collect(),
            None => HashMap::new(),
        };
        let mut update = git2::build::TreeUpdateBuilder::new();
        let mut notes = Vec::new();
        let mut changed = false;
        for e in v1_subtrees(repo, &ours)? {
            if before.get(&e.path) == Some(&e.tree) {
                continue;
            }
            let Ok(id) = CheckpointId::parse(&e.raw_id) else {
                continue;
            };
            let merged = match theirs.get_path(Path::new(&e.path)) {
                Ok(r) if r.id() != e.tree => {
                    let local = git
                        .find_tree(e.tree)
                        .map_err(err("read local checkpoint"))?;
                    let remote = git
                        .find_tree(r.id())
                        .map_err(err("read remote checkpoint"))?;
                    let m = merge::merge_trees(
                        git,
                        &id,
                        &local,
                        &remote,
                        &format!("/{}", id.v1_path()),
                        &repo.settings().limits(),
                    )?;
                    notes.extend(m.notes);
                    m.tree
                }
                Ok(_) => continue,
                Err(_) => e.tree,
            };
            update.upsert(e.path.as_str(), merged, git2::FileMode::Tree);
            changed = true;
        }
        if !changed {
            return Ok((theirs.id(), notes));
        }
        let tree = update
            .create_updated(git, theirs)
            .map_err(err("write merged v1 tree"))?;
        Ok((tree, notes))
    }
}

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
