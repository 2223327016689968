//! Fetching checkpoint refs: one on demand when a read misses locally, named ones, every one, or
//! those a range of commits links to.
//!
//! Absence and failure are never confused. The remote answering that it has no such ref is
//! [`FetchError::Absent`]-free success ([`Fetched::Absent`]); a transport failure (unreachable
//! host, authentication, timeout) is [`FetchError::Transport`], names the remote without
//! credentials, and is paid once per command: later fetches by the same [`Fetcher`] fail fast
//! with the first error. Absence is not remembered here: [`crate::remote::misses`] remembers
//! it for the reads above, with the tips each fetch and listing sees.
//!
//! No `ls-remote` probe is made first: it sends no ref prefix, so it downloads every ref name of
//! the remote. `git fetch` over protocol v2 asks only for the refs named, each by a glob that
//! matches nothing when the remote lacks it, so one fetch answers for any number of refs, present
//! or not.
//!
//! Fetches run in a side repository holding only the local tips involved, then move the real
//! refs by compare-and-swap: a missing ref is created, a ref behind the remote fast-forwards, a
//! diverged one is left for push recovery. A local checkpoint is never rewound or forced.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::base::id::CheckpointId;
use crate::git::objects::Oid;
use crate::git::refname::{CheckpointRef, CHECKPOINT_REF_PREFIX};
use crate::git::refs::RefEdit;
use crate::git::repo::Repo;
use crate::git::side::{SideError, SideRepo};
use crate::git::subprocess::{self as git, GitError};
use crate::git::url::Remote;
use crate::remote::misses::{self, Misses, Tips};
use crate::store::on_demand::FetchError;

/// New refs created together by [`Fetcher::fetch_new_refs`]: each batch rewrites `packed-refs`
/// once in the files backend, and a fetch interrupted later keeps the batches written.
pub const CREATE_BATCH: usize = 100_000;

/// A ref fetched with [`Fetcher::fetch_new_refs`] and its outcome, or why its ref could not be
/// written.
pub type RefOutcome = (String, Result<Fetched, FetchError>);

/// How long one on-demand fetch may take.
pub const READ_FETCH_BUDGET: Duration = Duration::from_secs(120);

/// The object filter of a partial fetch. Only `blob:none`: trees must arrive, since a checkpoint's
/// documents are found through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchFilter {
    /// No blobs with the trees (documents follow separately, transcripts on read).
    BlobNone,
}

impl FetchFilter {
    /// The `--filter` spec git takes.
    pub fn spec(self) -> &'static str {
        match self {
            FetchFilter::BlobNone => "blob:none",
        }
    }
}

impl FromStr for FetchFilter {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "blob:none" => Ok(FetchFilter::BlobNone),
            other => Err(format!(
                "unsupported filter {other:?}: only blob:none is supported"
            )),
        }
    }
}

/// What a fetch of one ref found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The local ref now holds the remote's commit: created, fast-forwarded, already equal, or
    /// already ahead of it.
    Updated,
    /// The remote has no such ref.
    Absent,
    /// Local and remote histories diverged; the local ref was left alone.
    Diverged,
}

/// Where a local ref stands after a fetch of the remote's version ([`Fetcher::publish`]).
enum Publication {
    /// It holds the remote's commit (it did, or it was created or fast-forwarded to it).
    Same,
    /// It is ahead of the remote's commit.
    Ahead,
    /// Local and remote histories diverged.
    Diverged,
}

/// Where a fetch into a side repository puts the remote's `name`: a name of its own, forced, so
/// that git never refuses it (the side repository's `name` holds our tip, offered to the remote
/// as what we have) and it says what the remote has whatever ours is.
fn fetched_name(name: &str) -> String {
    format!("refs/fetched/{name}")
}

/// The refspec that fetches the remote's ref `name`, forced, into `dest` when the remote has it:
/// a glob whose star follows the whole name, so that a ref the remote lacks matches nothing
/// instead of failing the fetch (git stops a fetch at the first exact ref the remote lacks: a
/// fetch per absent ref made a commit with a thousand trailers ask the remote a thousand
/// times). Over protocol v2 the remote is asked only for refs starting with `name`; a longer
/// one it holds (a foreign ref) is fetched beside it under its own name and never read.
pub(crate) fn exact_glob(name: &str, dest: &str) -> String {
    format!("+{name}*:{dest}*")
}

/// What fetching refs one by one brought ([`Fetcher::fetch_one_by_one`]): the refs written
/// under `refs/fetched/` with their tips, and the remote's refs it could not send.
type OneByOne = (Vec<(String, Oid)>, Vec<String>);

/// The copy under `copies` that the remote's ref `name` (the v1 branch, or an archived layout's
/// ref) is kept in, when it is one that copies keep.
fn archived_copy(copies: &str, name: &str) -> Option<String> {
    use crate::store::archive;
    archive::is_archived(name).then(|| archive::copy_name(copies, name))
}

/// Where a fetcher's notices go (the binaries print them as warnings).
type NoticeSink = Box<dyn Fn(&str)>;

/// Fetches checkpoint refs from one remote, remembering the first transport failure.
pub struct Fetcher<'r> {
    repo: &'r Repo,
    remote: Remote,
    /// Shared with [`Fetcher::sibling`]s: an outage is paid once per command.
    failed: Rc<RefCell<Option<String>>>,
    filter: Option<FetchFilter>,
    notices: RefCell<Vec<String>>,
    on_notice: Option<NoticeSink>,
    /// While set ([`Fetcher::defer_creations`]), refs that do not exist locally yet are
    /// gathered here instead of being created one by one.
    deferred: RefCell<Option<Vec<(String, Oid)>>>,
    /// Trees of a partial clone found whole (every tree below them here) by
    /// [`Complete::ensure_trees`](crate::store::on_demand::Complete::ensure_trees): each is
    /// walked once per command, not once per checkpoint read below it.
    pub(crate) whole_trees: RefCell<Vec<Oid>>,
}

/// Whether git's stderr says the remote lacks the ref (as opposed to failing).
fn is_absent(stderr: &str) -> bool {
    stderr.contains("couldn't find remote ref") || stderr.contains("no such remote ref")
}

impl<'r> Fetcher<'r> {
    /// A fetcher from `remote` (a remote name or URL).
    pub fn new(repo: &'r Repo, remote: Remote) -> Self {
        Fetcher {
            repo,
            remote,
            failed: Rc::new(RefCell::new(None)),
            filter: None,
            notices: RefCell::new(Vec::new()),
            on_notice: None,
            deferred: RefCell::new(None),
            whole_trees: RefCell::new(Vec::new()),
        }
    }

    /// A whole-checkpoint fetcher from the same remote that shares this one's memory of a
    /// transport failure (for the v1 branch beside the refs: one outage, one deadline).
    pub fn sibling(&self) -> Fetcher<'r> {
        Fetcher {
            failed: Rc::clone(&self.failed),
            ..Fetcher::new(self.repo, self.remote.clone())
        }
    }

    /// Makes on-demand fetches of reads partial: into the partial cache with `filter`
    /// (see [`crate::remote::partial`]). Writes still fetch whole checkpoints into the repository.
    pub fn with_filter(mut self, filter: Option<FetchFilter>) -> Self {
        self.filter = filter;
        self
    }

    /// The filter of on-demand fetches for reads, if they are partial.
    pub fn filter(&self) -> Option<FetchFilter> {
        self.filter
    }

    /// Tells the user through `show` what they should know about these fetches (e.g. a server
    /// that ignored the partial-fetch filter); without it, such notices are only logged.
    pub fn on_notice(mut self, show: impl Fn(&str) + 'static) -> Self {
        self.on_notice = Some(Box::new(show));
        self
    }

    /// Passes `message` to the notice callback, once per fetcher.
    pub(crate) fn notice(&self, message: String) {
        let mut notices = self.notices.borrow_mut();
        if notices.contains(&message) {
            return;
        }
        match &self.on_notice {
            Some(show) => show(&message),
            None => log::warn!("{message}"),
        }
        notices.push(message);
    }

    /// The repository fetched into.
    pub fn repo(&self) -> &'r Repo {
        self.repo
    }

    /// The remote as given (a name or a URL; may hold credentials: never show it).
    pub fn remote(&self) -> &Remote {
        &self.remote
    }

    /// The first transport failure of this fetcher, as the error of fetching `reference`.
    pub(crate) fn earlier_failure(&self, reference: &str) -> Result<(), FetchError> {
        match self.failed.borrow().clone() {
            Some(first) => Err(FetchError::Skipped {
                reference: reference.to_owned(),
                first,
            }),
            None => Ok(()),
        }
    }

    /// The remote, as shown (credentials redacted).
    pub fn remote_display(&self) -> String {
        crate::git::url::redact(&self.remote)
    }

    pub(crate) fn transport(&self, reference: &str, message: String) -> FetchError {
        log::info!("fetch from {} failed: {message}", self.remote_display());
        // Said as what it was (unauthenticated, refused, unreachable), as pushes say it.
        let message = match git::RemoteTrouble::of(&message) {
            Some(kind) => format!("{kind}: {message}"),
            None => message,
        };
        let err = FetchError::Transport {
            reference: reference.to_owned(),
            remote: self.remote_display(),
            message,
        };
        self.failed
            .borrow_mut()
            .get_or_insert_with(|| err.to_string());
        err
    }

    pub(crate) fn local(reference: &str, message: impl Into<String>) -> FetchError {
        FetchError::Local {
            reference: reference.to_owned(),
            message: message.into(),
        }
    }

    /// Fetches the remote's v1 branch into `tracking` (its remote-tracking ref, forced as git
    /// forces one) and the layouts it archived (`store::archive`: the unsharded v1 ref, the
    /// checkpoints-v2 refs) into their copies under `copies` (forced, and pruned of what the
    /// remote no longer has); whether a copy moved. One `git fetch` from a side repository,
    /// with glob refspecs (one `ls-refs` prefix each over protocol v2), so a remote that lacks
    /// some of them costs no second round trip, and no other ref of the user's moves. What is
    /// already here (the branch and its copy, the archived refs and their copies) is offered as
    /// `have`s, so only what is new is sent.
    pub fn fetch_copies(&self, tracking: &str, copies: &str) -> Result<bool, FetchError> {
        use crate::store::archive;
        const BRANCH: &str = "refs/heads/entire/checkpoints/v1";
        self.earlier_failure(BRANCH)?;
        let local =
            |e: crate::store::StoreError| Self::local(BRANCH, crate::base::error::error_chain(&e));
        let mut have: Vec<(String, Oid)> = Vec::new();
        for name in [
            BRANCH,
            tracking,
            archive::V1_REF,
            archive::V1_1_REF,
            archive::V2_MAIN,
        ] {
            if let Some(tip) = crate::store::publish::tip_of(self.repo, name).map_err(local)? {
                have.push((name.to_owned(), tip));
            }
        }
        let held = |prefix: &str| -> Result<Vec<(String, Oid)>, FetchError> {
            Ok(self
                .repo
                .refs_under(prefix)
                .map_err(|e| local(e.into()))?
                .into_iter()
                .filter_map(|(n, t)| Some((n, t?)))
                .collect())
        };
        let old_copies = held(copies)?;
        have.extend(held(archive::V2_FULL)?);
        have.extend(old_copies.iter().cloned());
        let side = SideRepo::new(self.repo, &have)
            .map_err(|e| Self::local(BRANCH, format!("create side repository: {e}")))?;
        // A remote cannot hold both `checkpoints/v1` and `checkpoints/v1/...`, so the second
        // glob never writes both `fetched/v1` and `fetched/v1/...` here.
        let specs = [
            format!("+{BRANCH}*:refs/fetched/branch*"),
            format!("+{}*:refs/fetched/v1*", archive::V1_REF),
            format!(
                "+{}*:refs/fetched/v2/*",
                archive::V2_MAIN.trim_end_matches("main")
            ),
        ];
        let (fetched, unservable) = match side.fetch_into(&self.remote, &specs, READ_FETCH_BUDGET) {
            Ok(f) => (f, Vec::new()),
            Err(SideError::Remote(message)) if !git::is_unreachable(&message) => {
                self.fetch_one_by_one(&side, &specs, &message)?
            }
            Err(e) => return Err(self.transport(BRANCH, e.to_string())),
        };
        let mut moved = false;
        let mut wanted: Vec<(String, Oid)> = Vec::new();
        for (name, tip) in fetched {
            let target = match name.strip_prefix("refs/fetched/") {
                Some("branch") => tracking.to_owned(),
                Some("v1") => archive::copy_name(copies, archive::V1_REF),
                // The v1 ref's glob brings the v1.1 ref too.
                Some("v1.1") => archive::copy_name(copies, archive::V1_1_REF),
                Some(rest) => match rest.strip_prefix("v2/") {
                    Some(leaf) => {
                        let original = format!("refs/entire/checkpoints/v2/{leaf}");
                        if !archive::is_archived(&original) {
                            continue;
                        }
                        archive::copy_name(copies, &original)
                    }
                    None => continue,
                },
                None => continue,
            };
            wanted.push((target, tip));
        }
        // The remote's branch and archived tips, as seen: misses recorded against other tips
        // are forgotten (docs/how-it-works.md, "Reads ask the network once").
        let mut memo = Misses::open(self.repo);
        let seen = wanted
            .iter()
            .map(|(n, t)| (n.strip_prefix(copies).unwrap_or("branch"), t.to_string()));
        memo.saw(self.repo, &self.remote, Tips::Copies, misses::digest(seen));
        memo.save();
        for (name, tip) in &wanted {
            let before = crate::store::publish::tip_of(self.repo, name).map_err(local)?;
            if before != Some(*tip) {
                self.repo
                    .set_ref(name, *tip, "entire: fetch")
                    .map_err(|e| local(e.into()))?;
                moved = true;
            }
        }
        // A copy of an archived ref the remote no longer has goes, as `git fetch --prune`
        // drops a remote-tracking ref (the copies are ours; the remote's refs are never touched).
        // A ref the server could not send is not gone: its copy stays as it was.
        let kept: Vec<String> = unservable
            .iter()
            .filter_map(|name| archived_copy(copies, name))
            .collect();
        let gone: Vec<RefEdit> = old_copies
            .into_iter()
            .filter(|(n, _)| !wanted.iter().any(|(w, _)| w == n) && !kept.contains(n))
            .map(|(name, old)| RefEdit::Delete { name, old })
            .collect();
        if !gone.is_empty() {
            self.repo
                .update_refs(&gone, "entire: fetch: pruned")
                .map_err(|e| Self::local(BRANCH, crate::base::error::error_chain(&e)))?;
            moved = true;
        }
        Ok(moved)
    }

    /// After the one fetch of `specs` (globs) failed with `failure` while the remote answered:
    /// each ref they match, fetched alone, so that one the server cannot send (a broken pack, an
    /// object missing from its store) sinks no other. Returns what was fetched, and the refs the
    /// server could not send, each said once as a notice naming it.
    fn fetch_one_by_one(
        &self,
        side: &SideRepo<'_>,
        specs: &[String],
        failure: &str,
    ) -> Result<OneByOne, FetchError> {
        const BRANCH: &str = "refs/heads/entire/checkpoints/v1";
        // Each glob `+<src>*:<dst>*`: its source pattern, and what a match becomes.
        let globs: Vec<(&str, &str)> = specs
            .iter()
            .filter_map(|s| s.trim_start_matches('+').split_once(':'))
            .filter_map(|(src, dst)| Some((src.strip_suffix('*')?, dst.strip_suffix('*')?)))
            .collect();
        let patterns: Vec<String> = globs.iter().map(|(src, _)| format!("{src}*")).collect();
        let listed = side
            .ls_remote(&self.remote, &patterns, READ_FETCH_BUDGET)
            .map_err(|e| self.transport(BRANCH, e.to_string()))?;
        let mut fetched: Vec<(String, Oid)> = Vec::new();
        let mut unservable = Vec::new();
        for (name, _) in listed {
            let Some(dest) = globs
                .iter()
                .find_map(|(src, dst)| name.strip_prefix(src).map(|rest| format!("{dst}{rest}")))
            else {
                continue;
            };
            let spec = format!("+{name}:{dest}");
            match side.fetch_into(&self.remote, &[spec], READ_FETCH_BUDGET) {
                Ok(now) => {
                    for (n, t) in now {
                        if !fetched.iter().any(|(f, _)| *f == n) {
                            fetched.push((n, t));
                        }
                    }
                }
                Err(SideError::Remote(message)) if !git::is_unreachable(&message) => {
                    self.notice(format!(
                        "{} could not send {name} ({message}); its checkpoints are read from what is here",
                        self.remote_display()
                    ));
                    unservable.push(name);
                }
                Err(e) => return Err(self.transport(BRANCH, e.to_string())),
            }
        }
        log::info!("one fetch of every archived ref failed ({failure}); fetched them one by one");
        Ok((fetched, unservable))
    }

    /// Fetches the given refs (at most a few hundred) in one `git fetch`, and publishes each
    /// locally; those the remote lacks are [`Fetched::Absent`], in the same fetch
    /// ([`exact_glob`]).
    pub fn fetch_refs(&self, names: &[String]) -> Result<Vec<(String, Fetched)>, FetchError> {
        let first = names.first().cloned().unwrap_or_default();
        self.earlier_failure(&first)?;
        let deadline = Instant::now() + READ_FETCH_BUDGET;
        let mut out = Vec::new();
        let mut pending: Vec<String> = names.to_vec();
        // Refs now equal to the remote's: recorded as delivered there, in one append.
        let mut published: Vec<(String, Oid)> = Vec::new();
        while !pending.is_empty() {
            // Looked up together: one git process in a reftable repository.
            let local_tips = self
                .repo
                .ref_tips(&pending)
                .map_err(|e| Self::local(&first, crate::base::error::error_chain(&e)))?;
            let locals: Vec<(String, Oid)> =
                local_tips.iter().map(|(n, o)| (n.clone(), *o)).collect();
            let side = SideRepo::new(self.repo, &locals)
                .map_err(|e| Self::local(&first, format!("create side repository: {e}")))?;
            let specs: Vec<String> = pending
                .iter()
                .map(|n| exact_glob(n, &fetched_name(n)))
                .collect();
            let fetch = side.fetch_refspecs(&self.remote, specs);
            let Some(res) = self.attempt(fetch, &mut pending, &mut out, &first, deadline)? else {
                continue;
            };
            if !res.success() {
                return Err(self.transport(&first, git::first_error_line(&res.stderr)));
            }
            for name in pending.drain(..) {
                let Some(theirs) = side.read_ref(&fetched_name(&name)) else {
                    out.push((name, Fetched::Absent));
                    continue;
                };
                let before = local_tips.get(&name).copied();
                let state = match self.publish(&name, theirs, before)? {
                    Publication::Same => {
                        published.push((name.clone(), theirs));
                        Fetched::Updated
                    }
                    Publication::Ahead => Fetched::Updated,
                    Publication::Diverged => Fetched::Diverged,
                };
                out.push((name, state));
            }
        }
        crate::remote::destination::record_delivered(self.repo, &self.remote, &published);
        Ok(out)
    }

    /// Fetches refs the repository does not hold yet, by the commits the remote advertised for
    /// them (`refs`, from [`Fetcher::list_remote_tips`]): one `git fetch --stdin` of those
    /// object IDs per chunk, from an empty side repository, so git writes no ref at all (a
    /// million refs fetched by name would each become a loose file there, and matching that
    /// many refspecs costs git time quadratic in their number); the refs are then created
    /// together ([`Fetcher::write_deferred`], every [`CREATE_BATCH`] refs and at the end). A
    /// chunk the remote refuses by ID (a ref moved or deleted since it was listed) is fetched
    /// by name instead. `progress` gets how many refs were fetched so far, or (`true`) written.
    /// Each ref's outcome, or why its ref could not be written.
    pub fn fetch_new_refs(
        &self,
        refs: &[(String, Oid)],
        progress: &dyn Fn(usize, bool),
    ) -> Result<Vec<RefOutcome>, FetchError> {
        const IDS_PER_FETCH: usize = 50_000;
        self.defer_creations();
        let first = refs.first().map(|(n, _)| n.clone()).unwrap_or_default();
        let mut out: Vec<RefOutcome> = Vec::with_capacity(refs.len());
        let write = |out: &mut Vec<RefOutcome>| {
            progress(out.len(), true);
            let mut changed: std::collections::HashMap<String, Result<Fetched, FetchError>> =
                self.write_deferred().into_iter().collect();
            if changed.is_empty() {
                return;
            }
            for (name, state) in out.iter_mut() {
                if let Some(new) = changed.remove(name.as_str()) {
                    *state = new;
                }
            }
        };
        for (i, chunk) in refs.chunks(IDS_PER_FETCH).enumerate() {
            progress(i * IDS_PER_FETCH, false);
            self.earlier_failure(&first)?;
            let deadline = Instant::now() + READ_FETCH_BUDGET;
            let side = SideRepo::new(self.repo, &[])
                .map_err(|e| Self::local(&first, format!("create side repository: {e}")))?;
            let ids: Vec<Oid> = chunk.iter().map(|(_, oid)| *oid).collect();
            let fetch = side.fetch_ids(&self.remote, &ids, None);
            let res = self.attempt(fetch, &mut Vec::new(), &mut Vec::new(), &first, deadline)?;
            if res.as_ref().is_some_and(git::Output::success) {
                match self.deferred.borrow_mut().as_mut() {
                    Some(deferred) => deferred.extend(chunk.iter().cloned()),
                    None => return Err(Self::local(&first, "new refs fetched without deferral")),
                }
                out.extend(chunk.iter().map(|(n, _)| (n.clone(), Ok(Fetched::Updated))));
                if self.deferred_count() >= CREATE_BATCH {
                    write(&mut out);
                }
                continue;
            }
            if let Some(res) = res {
                if git::is_unreachable(&res.stderr) {
                    return Err(self.transport(&first, git::first_error_line(&res.stderr)));
                }
                log::info!(
                    "fetching {} refs by ID failed ({}); by name instead",
                    chunk.len(),
                    git::first_error_line(&res.stderr)
                );
            }
            for names in chunk.chunks(500) {
                let names: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
                out.extend(
                    self.fetch_refs(&names)?
                        .into_iter()
                        .map(|(n, s)| (n, Ok(s))),
                );
            }
        }
        write(&mut out);
        Ok(out)
    }

    /// Fetches the objects `ids` (and what they reach) from the remote into the repository by
    /// object ID, writing no ref: what a partial clone lacks for a read of the checkpoint whose
    /// ref is `reference`. One `git fetch` per thousand objects.
    pub fn fetch_objects(&self, reference: &str, ids: &[Oid]) -> Result<(), FetchError> {
        const IDS_PER_FETCH: usize = 1000;
        self.earlier_failure(reference)?;
        let deadline = Instant::now() + READ_FETCH_BUDGET;
        for chunk in ids.chunks(IDS_PER_FETCH) {
            let side = SideRepo::new(self.repo, &[])
                .map_err(|e| Self::local(reference, format!("create side repository: {e}")))?;
            // Blobs are asked for by ID; a tree asked for (`--filter=tree:0`) brings the trees
            // below it, whatever filter the clone was made with, and no blob.
            let fetch = side.fetch_ids(&self.remote, chunk, Some("blob:none"));
            let res = self.attempt(fetch, &mut Vec::new(), &mut Vec::new(), reference, deadline)?;
            if let Some(res) = res.filter(|r| !r.success()) {
                return Err(self.transport(reference, git::first_error_line(&res.stderr)));
            }
        }
        log::info!(
            "fetched {} missing object(s) of {reference} from {}",
            ids.len(),
            self.remote_display()
        );
        Ok(())
    }

    /// Runs one `git fetch` of `pending` and sorts out what does not depend on where it ran: a
    /// timeout is a transport failure, a git that cannot run (or is too old) a local one. Refs
    /// the remote lacks move from `pending` to `out` as [`Fetched::Absent`] and `None` is
    /// returned: nothing was fetched, ask again for the rest. Otherwise git's output (it may
    /// still have failed).
    pub(crate) fn attempt(
        &self,
        fetch: git::Git,
        pending: &mut Vec<String>,
        out: &mut Vec<(String, Fetched)>,
        first: &str,
        deadline: Instant,
    ) -> Result<Option<git::Output>, FetchError> {
        let res = match fetch.run(deadline.saturating_duration_since(Instant::now())) {
            Ok(o) => o,
            Err(GitError::Timeout { after, .. }) => {
                return Err(self.transport(first, format!("timed out after {}s", after.as_secs())))
            }
            Err(e) => return Err(Self::local(first, e.to_string())),
        };
        if !res.success() && is_absent(&res.stderr) {
            // git names the first missing ref; drop it and ask again for the rest.
            let missing: Vec<String> = pending
                .iter()
                .filter(|n| res.stderr.contains(n.as_str()))
                .cloned()
                .collect();
            if missing.is_empty() {
                return Err(self.transport(first, git::first_error_line(&res.stderr)));
            }
            log::debug!(
                "{} reports no such ref: {}",
                self.remote_display(),
                missing.join(", ")
            );
            pending.retain(|n| !missing.contains(n));
            out.extend(missing.into_iter().map(|n| (n, Fetched::Absent)));
            return Ok(None);
        }
        Ok(Some(res))
    }

    /// From now on, refs fetched that do not exist locally are not created one by one (each a
    /// loose file in the files backend) but gathered, to be created together by
    /// [`Fetcher::write_deferred`]; they are reported [`Fetched::Updated`] meanwhile.
    pub fn defer_creations(&self) {
        self.deferred.borrow_mut().get_or_insert_with(Vec::new);
    }

    /// How many creations wait for [`Fetcher::write_deferred`].
    pub fn deferred_count(&self) -> usize {
        self.deferred.borrow().as_ref().map_or(0, Vec::len)
    }

    /// Creates the refs gathered since [`Fetcher::defer_creations`] (which stays on), all in one
    /// go (`Repo::create_refs`: into `packed-refs`, or one transaction). When that cannot be
    /// done as a whole (a ref appeared meanwhile), each is published on its own, as without
    /// deferral. Returns the refs whose state is not [`Fetched::Updated`] after all: another
    /// state, or why the ref could not be written.
    pub fn write_deferred(&self) -> Vec<RefOutcome> {
        let pending = match self.deferred.borrow_mut().as_mut() {
            Some(p) => std::mem::take(p),
            None => return Vec::new(),
        };
        if pending.is_empty() {
            return Vec::new();
        }
        let Err(e) = self.repo.create_refs(&pending, "entire: fetch checkpoint") else {
            return Vec::new();
        };
        log::info!(
            "creating {} fetched refs at once failed ({}); one by one instead",
            pending.len(),
            crate::base::error::error_chain(&e)
        );
        pending
            .into_iter()
            .filter_map(|(name, theirs)| {
                let state = crate::store::publish::tip_of(self.repo, &name)
                    .map_err(|e| Self::local(&name, crate::base::error::error_chain(&e)))
                    .and_then(|ours| self.publish_over(&name, theirs, ours))
                    .map(|p| match p {
                        Publication::Same | Publication::Ahead => Fetched::Updated,
                        Publication::Diverged => Fetched::Diverged,
                    });
                (!matches!(state, Ok(Fetched::Updated))).then_some((name, state))
            })
            .collect()
    }

    /// Moves the local ref to `theirs` if that is a creation or a fast-forward; a local ref
    /// ahead of `theirs` or diverged from it is left alone. `before` is the local ref's value
    /// before the fetch: while creations are deferred, one that did not exist waits for
    /// [`Fetcher::write_deferred`] (which checks again that it does not exist).
    fn publish(
        &self,
        name: &str,
        theirs: Oid,
        before: Option<Oid>,
    ) -> Result<Publication, FetchError> {
        if let (None, Some(deferred)) = (before, self.deferred.borrow_mut().as_mut()) {
            deferred.push((name.to_owned(), theirs));
            return Ok(Publication::Same);
        }
        let ours = crate::store::publish::tip_of(self.repo, name)
            .map_err(|e| Self::local(name, crate::base::error::error_chain(&e)))?;
        self.publish_over(name, theirs, ours)
    }

    /// [`Fetcher::publish`] without deferral, the local ref being at `ours`.
    fn publish_over(
        &self,
        name: &str,
        theirs: Oid,
        ours: Option<Oid>,
    ) -> Result<Publication, FetchError> {
        let descends = |a, b| self.repo.is_descendant_of(a, b).unwrap_or(false);
        match ours {
            Some(o) if o == theirs => Ok(Publication::Same),
            Some(o) if descends(o, theirs) => Ok(Publication::Ahead),
            Some(o) if !descends(theirs, o) => Ok(Publication::Diverged),
            _ => (self.repo)
                .set_ref_matching(name, theirs, ours, "entire: fetch checkpoint")
                .map(|_| Publication::Same)
                .map_err(|e| {
                    Self::local(
                        name,
                        format!("update {name}: {}", crate::base::error::error_chain(&e)),
                    )
                }),
        }
    }

    /// Fetches the checkpoints of `ids` on demand, whole, in two fetches at most
    /// ([`fetch_spellings`]); which the remote had, under which ref.
    pub fn fetch_checkpoints(
        &self,
        ids: &[CheckpointId],
    ) -> Result<Vec<(CheckpointId, String, Fetched)>, FetchError> {
        let found = fetch_spellings(ids, |names| self.fetch_refs(names))?;
        for (id, name, state) in &found {
            match state {
                Fetched::Absent => log::info!("{} has no checkpoint {id}", self.remote_display()),
                Fetched::Updated => log::info!("fetched {name} from {}", self.remote_display()),
                Fetched::Diverged => log::info!(
                    "fetched {name} from {}: it diverged from ours, which was kept",
                    self.remote_display()
                ),
            }
        }
        Ok(found)
    }

    /// Every checkpoint ref name on the remote (one `ls-remote` with the prefix; foreign refs
    /// under the prefix are left out).
    pub fn list_remote(&self) -> Result<Vec<CheckpointRef>, FetchError> {
        Ok(self
            .list_remote_tips()?
            .into_iter()
            .map(|(r, _)| r)
            .collect())
    }

    /// Like [`Fetcher::list_remote`], with each ref's commit on the remote (hex). The count is
    /// remembered for `status` (`crate::remote::scale`).
    pub fn list_remote_tips(&self) -> Result<Vec<(CheckpointRef, String)>, FetchError> {
        let side = SideRepo::new(self.repo, &[])
            .map_err(|e| Self::local(CHECKPOINT_REF_PREFIX, e.to_string()))?;
        match side.ls_remote_checkpoints(&self.remote, READ_FETCH_BUDGET) {
            Ok(refs) => {
                log::info!(
                    "{} has {} checkpoint refs (git ls-remote)",
                    self.remote_display(),
                    refs.len()
                );
                crate::remote::scale::record_remote_count(self.repo, &self.remote, refs.len());
                crate::remote::held::record(
                    self.repo,
                    &self.remote,
                    refs.iter().map(|(r, _)| r.id()),
                );
                let mut memo = Misses::open(self.repo);
                let seen = refs.iter().map(|(r, oid)| (r.name(), oid.clone()));
                memo.saw(self.repo, &self.remote, Tips::Refs, misses::digest(seen));
                memo.save();
                Ok(refs)
            }
            Err(e) => Err(self.transport(CHECKPOINT_REF_PREFIX, e.to_string())),
        }
    }
}

/// Fetches the refs of `ids` through `fetch` (one fetch of named refs, whole or filtered): every
/// canonical spelling at once, then, at once too, the case-folded spelling of those the remote
/// lacks (a ref packed on a case-insensitive filesystem), so any number of checkpoints costs
/// two fetches at most. What each ID's ref came to, in the order of `ids`, with the name of the
/// spelling the remote had (the canonical one when it had neither).
pub fn fetch_spellings(
    ids: &[CheckpointId],
    fetch: impl Fn(&[String]) -> Result<Vec<(String, Fetched)>, FetchError>,
) -> Result<Vec<(CheckpointId, String, Fetched)>, FetchError> {
    let by_name = |names: &[String]| -> Result<HashMap<String, Fetched>, FetchError> {
        match names.is_empty() {
            true => Ok(HashMap::new()),
            false => Ok(fetch(names)?.into_iter().collect()),
        }
    };
    let canonical: Vec<String> = ids
        .iter()
        .map(|id| CheckpointRef::canonical(id).name().to_owned())
        .collect();
    let first = by_name(&canonical)?;
    let state = |found: &HashMap<String, Fetched>, name: &str| {
        found.get(name).cloned().unwrap_or(Fetched::Absent)
    };
    let folded: Vec<Option<String>> = ids
        .iter()
        .zip(&canonical)
        .map(|(id, name)| match state(&first, name) {
            Fetched::Absent => CheckpointRef::folded(id).map(|r| r.name().to_owned()),
            _ => None,
        })
        .collect();
    let asked: Vec<String> = folded.iter().flatten().cloned().collect();
    let second = by_name(&asked)?;
    Ok(ids
        .iter()
        .zip(canonical.iter().zip(&folded))
        .map(|(id, (name, folded))| match folded {
            Some(f) if state(&second, f) != Fetched::Absent => {
                (id.clone(), f.clone(), state(&second, f))
            }
            Some(_) => (id.clone(), name.clone(), Fetched::Absent),
            None => (id.clone(), name.clone(), state(&first, name)),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absence_markers() {
        assert!(is_absent(
            "fatal: couldn't find remote ref refs/entire/checkpoints/f6/a1b2c3d4e5f6\n"
        ));
        assert!(!is_absent(
            "fatal: unable to access 'https://x/': Could not resolve host: x\n"
        ));
        assert_eq!(git::first_error_line("warning: x\nfatal: y\n"), "fatal: y");
    }
}
