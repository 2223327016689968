//! `git entire-fetch`'s operation: fetch many checkpoints from a remote, named by ID, all of
//! its checkpoint refs, or those the `Entire-Checkpoint:` trailers of a range of commits name;
//! whole into the repository, or with a filter into the partial cache. Refs are fetched in
//! chunks; an ID the remote lacks in its canonical spelling is asked for in its case-folded one;
//! hex IDs the remote has no ref for are looked for on its v1 branch; a bulk fetch packs the
//! refs it created. The result is one [`Outcome`] per checkpoint.

use std::collections::{HashMap, HashSet};

use crate::git::objects::Oid;

use serde::Serialize;

use crate::base::error::{ExitStatus, FAILURE, NOT_FOUND, USAGE};
use crate::base::id::{CheckpointId, IdKind, InvalidIdError};
use crate::git::refname::CheckpointRef;
use crate::git::repo::{Repo, RepoError};
use crate::git::url::{self, Remote, RemoteError};
use crate::model::trailers::{checkpoint_trailers, ignored_notice, TrailerValue};
use crate::ops::writes_cache::{WritesCache, FETCH_FILL_BUDGET, FETCH_FILL_CHECKPOINTS};
use crate::remote::checkpoint_remote::{self, CheckpointRemoteError};
use crate::remote::fetch::{Fetched, Fetcher};
use crate::remote::misses::Misses;
use crate::remote::partial::PartialCache;
use crate::store::branch::GitBranchStore;
use crate::store::on_demand::FetchError;
use crate::store::refs::GitRefsStore;
use crate::store::{CheckpointReader, StoreError};
use crate::topology::Topology;

pub use crate::remote::fetch::FetchFilter;

/// Refs per `git fetch` when fetching many.
const FETCH_CHUNK: usize = 500;

/// Why the fetch could not be done, or (after its outcomes: [`Report::failure`]) did not get
/// everything.
#[derive(Debug, thiserror::Error)]
pub enum FetchManyError {
    /// The first word looked like a remote and is refused.
    #[error("remote {shown} is refused")]
    RefusedRemote {
        /// The word, credentials redacted.
        shown: String,
        /// Why.
        #[source]
        source: RemoteError,
    },
    /// No remote was named and none is configured.
    #[error("no remote to fetch from: name one (git entire-fetch <remote> ...)")]
    NoRemote,
    /// The checkpoint remote setting is invalid.
    #[error(transparent)]
    CheckpointRemote(#[from] CheckpointRemoteError),
    /// A word is not a checkpoint ID.
    #[error(transparent)]
    InvalidId(#[from] InvalidIdError),
    /// Neither IDs, `--all` nor `--for`.
    #[error("nothing to fetch: name checkpoint IDs, or use --all or --for <REV-RANGE>")]
    NothingToFetch,
    /// `--for` is not a revision range.
    #[error("--for {range}: not a revision range of this repository")]
    Range {
        /// The range given.
        range: String,
        /// Why.
        #[source]
        source: RepoError,
    },
    /// Reading or writing the repository failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The remote could not be reached (or a fetch failed): the outcomes say what was fetched.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// Checkpoints named on the command line exist neither locally nor on the remote.
    #[error("no checkpoint matches {}: not here, nor on the remote", .missing.iter().map(|m| format!("{m:?}")).collect::<Vec<_>>().join(", "))]
    NotFound {
        /// Every checkpoint not found.
        missing: Vec<String>,
    },
    /// The first word is neither a configured remote (nor a URL or path) nor a checkpoint ID.
    #[error("{0:?} is neither a remote (a configured name, a URL or a path) nor a checkpoint ID")]
    NotRemoteNorId(String),
}

impl ExitStatus for FetchManyError {
    fn exit_code(&self) -> i32 {
        match self {
            FetchManyError::RefusedRemote { source, .. } => source.exit_code(),
            FetchManyError::NoRemote => FAILURE,
            FetchManyError::NothingToFetch | FetchManyError::NotRemoteNorId(_) => USAGE,
            FetchManyError::CheckpointRemote(e) => e.exit_code(),
            FetchManyError::InvalidId(e) => e.exit_code(),
            FetchManyError::Range { source, .. } => source.exit_code(),
            FetchManyError::Store(e) => e.exit_code(),
            FetchManyError::Fetch(e) => e.exit_code(),
            FetchManyError::NotFound { .. } => NOT_FOUND,
        }
    }
}

/// How far a fetch of many refs is: `done` of `total` refs of its phase so far (reported before
/// each `git fetch` of a chunk, and before new refs are written together).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// What is being done.
    pub phase: Phase,
    /// Refs fetched (or written) so far.
    pub done: usize,
    /// Refs to fetch (or write) in this phase.
    pub total: usize,
}

/// The phases of a fetch of many refs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Fetching refs from the remote.
    Fetching,
    /// Creating the new refs fetched, together.
    WritingRefs,
}

/// What to fetch, and from where.
#[derive(Debug, Clone)]
pub struct Request {
    /// The remote.
    pub remote: Remote,
    /// Checkpoints named on the command line.
    pub ids: Vec<CheckpointId>,
    /// Every checkpoint ref of the remote.
    pub all: bool,
    /// The checkpoints the trailers of the commits in this range name.
    pub range: Option<String>,
    /// Fetch checkpoints missing here with this filter, into the partial cache.
    pub filter: Option<FetchFilter>,
    /// List the remote's checkpoint refs first (one `ls-remote`) and fetch only those it has,
    /// in the spelling it has: many named IDs cost two round trips, however many the remote
    /// lacks (`git fetch` stops at the first ref it lacks, so each absent ref costs a fetch).
    pub list_first: bool,
    /// Ask the remote for checkpoints it recently lacked too (`git entire-fetch`, a read's
    /// `--refresh`); otherwise those are not found without asking (`remote::misses`). What the
    /// remote lacks is remembered either way.
    pub ask_again: bool,
}

impl Request {
    /// The request of `[<remote>] [<ID>...]`: a first word that is not a checkpoint ID and is a
    /// configured remote, a URL or a path is the remote (default: the checkpoint remote, else
    /// origin, else the only remote); the rest are checkpoint IDs.
    pub fn from_words(
        repo: &Repo,
        words: &[String],
        all: bool,
        range: Option<String>,
        filter: Option<FetchFilter>,
    ) -> Result<Request, FetchManyError> {
        let mut words = words;
        let remote = match words.split_first() {
            Some((w, rest)) if CheckpointId::parse(w).is_err() && looks_like_remote(repo, w) => {
                let remote = Remote::parse(w).map_err(|source| FetchManyError::RefusedRemote {
                    shown: url::shown(w),
                    source,
                })?;
                words = rest;
                remote
            }
            Some((w, _)) if CheckpointId::parse(w).is_err() => {
                return Err(FetchManyError::NotRemoteNorId(w.clone()));
            }
            _ => checkpoint_remote::resolve(repo, None)?
                .map(|t| t.target)
                .ok_or(FetchManyError::NoRemote)?,
        };
        let ids = words
            .iter()
            .map(|w| CheckpointId::parse(w))
            .collect::<Result<Vec<_>, _>>()?;
        if ids.is_empty() && !all && range.is_none() {
            return Err(FetchManyError::NothingToFetch);
        }
        Ok(Request {
            remote,
            ids,
            all,
            range,
            filter,
            list_first: false,
            ask_again: true,
        })
    }
}

fn looks_like_remote(repo: &Repo, word: &str) -> bool {
    repo.config_string(&format!("remote.{word}.url")).is_some()
        || word.contains('/')
        || word.contains(':')
}

/// Where one checkpoint stands after the fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Already here.
    Present,
    /// Fetched (or already equal to the remote's).
    Fetched,
    /// Neither here nor on the remote.
    NotFound,
    /// Diverged from the remote's; left as it is (the next push merges them).
    Diverged,
    /// The fetch failed (see the outcome's error).
    Failed,
}

impl Status {
    /// The status as the contract spells it (`not_found`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Status::Present => "present",
            Status::Fetched => "fetched",
            Status::NotFound => "not_found",
            Status::Diverged => "diverged",
            Status::Failed => "failed",
        }
    }
}

impl From<&Fetched> for Status {
    fn from(f: &Fetched) -> Status {
        match f {
            Fetched::Updated => Status::Fetched,
            Fetched::Absent => Status::NotFound,
            Fetched::Diverged => Status::Diverged,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !b
}

/// One checkpoint's outcome (the `--json` entry of cli.md).
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The checkpoint ID (a ref name the remote holds that names no checkpoint ID stays as is).
    pub checkpoint_id: String,
    /// Where it stands.
    pub status: Status,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Held in the partial cache, without its transcripts.
    #[serde(skip_serializing_if = "is_false")]
    pub partial: bool,
    /// Not found without asking: the remote lacked it this many seconds ago
    /// (`remote::misses`).
    #[serde(skip)]
    pub remembered: Option<u64>,
}

impl Outcome {
    fn new(id: String, status: Status) -> Outcome {
        Outcome {
            checkpoint_id: id,
            status,
            error: None,
            partial: false,
            remembered: None,
        }
    }
}

/// What the fetch did: one outcome per checkpoint, and whether it got everything.
#[derive(Debug)]
pub struct Report {
    /// Per checkpoint, in the order asked for (then the remote's, then its v1 branch's).
    pub outcomes: Vec<Outcome>,
    transport_error: Option<FetchError>,
    named: Vec<CheckpointId>,
}

impl Report {
    /// How many outcomes have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.outcomes.iter().filter(|o| o.status == status).count()
    }

    /// How many checkpoints diverged from the remote's.
    pub fn diverged(&self) -> usize {
        self.count(Status::Diverged)
    }

    /// One line for people: `fetched N, already present M`, then the other statuses that
    /// occurred (`not found K`, `diverged D`, `failed F`).
    pub fn summary(&self) -> String {
        let mut parts = vec![
            format!("fetched {}", self.count(Status::Fetched)),
            format!("already present {}", self.count(Status::Present)),
        ];
        for status in [Status::NotFound, Status::Diverged, Status::Failed] {
            let n = self.count(status);
            if n > 0 {
                parts.push(format!("{} {n}", status.name().replace('_', " ")));
            }
        }
        parts.join(", ")
    }

    /// Why the command fails after its outcomes: the first transport failure, else the
    /// checkpoints named on the command line (and every other one) not found.
    pub fn failure(&self) -> Option<FetchManyError> {
        if let Some(e) = &self.transport_error {
            return Some(FetchManyError::Store(StoreError::Fetch(e.clone())));
        }
        let not_found = |o: &&Outcome| o.status == Status::NotFound;
        let named_missing = self
            .outcomes
            .iter()
            .filter(not_found)
            .any(|o| self.named.iter().any(|id| id.as_str() == o.checkpoint_id));
        if !named_missing {
            return None;
        }
        let missing: Vec<String> = self
            .outcomes
            .iter()
            .filter(not_found)
            .map(|o| o.checkpoint_id.clone())
            .collect();
        Some(FetchManyError::NotFound { missing })
    }
}

/// How this run fetches refs missing from the repository: whole into it, or with a filter into
/// the partial cache.
struct Mode<'r> {
    fetcher: Fetcher<'r>,
    partial: Option<(PartialCache<'r>, FetchFilter)>,
    /// The v1 branch, locally and as the remote's copy (fetched whole, once, when needed).
    branch: GitBranchStore<'r>,
}

impl Mode<'_> {
    /// Fetches `names`; the flag says whether they ended up in the partial cache.
    fn fetch_refs(&self, names: &[String]) -> Result<(Vec<(String, Fetched)>, bool), FetchError> {
        match &self.partial {
            None => Ok((self.fetcher.fetch_refs(names)?, false)),
            Some((cache, filter)) => {
                let f = cache.fetch_refs(&self.fetcher, names, *filter)?;
                Ok((f.results, !f.whole))
            }
        }
    }

    /// Whether `id` is already here: in the repository, or (for a filtered fetch) in the cache.
    fn present(&self, store: &GitRefsStore<'_>, id: &CheckpointId) -> Result<bool, StoreError> {
        if store.locate_ref(id)?.is_some() {
            return Ok(true);
        }
        if id.kind() == IdKind::Hex && self.branch.holds(id)? {
            return Ok(true);
        }
        Ok(matches!(&self.partial, Some((cache, _)) if cache.has(id)))
    }
}

/// Fetches what `req` asks for. `notice` gets the warnings on the way (malformed trailers, the
/// fetcher's notices, a failed pack). Transport failures and named checkpoints not found do
/// not stop it: see [`Report::failure`].
pub fn run(
    repo: &Repo,
    req: &Request,
    notice: impl Fn(&str) + Clone + 'static,
    progress: &dyn Fn(Progress),
) -> Result<Report, FetchManyError> {
    let on_notice = notice.clone();
    let fetcher = Fetcher::new(repo, req.remote.clone()).on_notice(move |m| on_notice(m));
    let partial = match req.filter {
        Some(filter) => Some((PartialCache::create(repo)?, filter)),
        None => None,
    };
    let mut branch = GitBranchStore::mirror(repo);
    branch.set_remote(crate::remote::on_demand::remote_copy(
        repo,
        fetcher.remote(),
        Some(fetcher.sibling()),
    ));
    let mode = Mode {
        fetcher,
        partial,
        branch,
    };
    let store = GitRefsStore::new(repo);
    let mut outcomes: Vec<Outcome> = Vec::new();

    let mut wanted: Vec<CheckpointId> = req.ids.clone();
    if let Some(range) = &req.range {
        let mut seen: HashSet<CheckpointId> = wanted.iter().cloned().collect();
        let (trailers, ignored) = trailers_in(repo, range)?;
        for t in trailers {
            match t {
                TrailerValue::Valid(id) => {
                    if seen.insert(id.clone()) {
                        wanted.push(id)
                    }
                }
                TrailerValue::Malformed(tok) => notice(&format!(
                    "ignoring malformed Entire-Checkpoint trailer {tok:?}"
                )),
            }
        }
        if let Some(ignored) = ignored_notice(ignored) {
            notice(&ignored);
        }
    }
    let mut to_fetch = Vec::new();
    // Checkpoints the remote lacked a moment ago: not found, without asking it again. (The memo
    // is read again after the fetch: listing and fetching may update it meanwhile.)
    let misses = Misses::open(repo);
    let mut remembered = Vec::new();
    for id in wanted {
        if mode.present(&store, &id)? {
            outcomes.push(Outcome::new(id.to_string(), Status::Present));
        } else if let Some(ago) = misses
            .asked(repo, &req.remote, &id)
            .filter(|_| !req.ask_again)
        {
            remembered.push(Outcome {
                remembered: Some(ago),
                ..Outcome::new(id.to_string(), Status::NotFound)
            });
        } else {
            to_fetch.push(id);
        }
    }
    let mut transport_error = None;
    let listed = match req.list_first && !to_fetch.is_empty() {
        true => match mode.fetcher.list_remote_tips() {
            Ok(tips) => Some(tips.into_iter().map(|(r, _)| r.name().to_owned()).collect()),
            Err(e) => {
                notice(&crate::base::error::error_chain(&e));
                None
            }
        },
        false => None,
    };
    match listed {
        Some(listed) => fetch_listed(
            &mode,
            &to_fetch,
            &listed,
            &mut outcomes,
            &mut transport_error,
            progress,
        ),
        None => fetch_named(
            &mode,
            &to_fetch,
            &mut outcomes,
            &mut transport_error,
            progress,
        ),
    }
    if req.all {
        fetch_all(&mode, &store, &mut outcomes, &mut transport_error, progress)?;
    }
    search_branch(&mode, req.all, &mut outcomes, &mut transport_error)?;
    // What the remote was just asked: what it lacks is remembered, what it had forgotten.
    let ids_with = |status: Status| -> Vec<CheckpointId> {
        outcomes
            .iter()
            .filter(|o| o.status == status)
            .filter_map(|o| CheckpointId::parse(&o.checkpoint_id).ok())
            .collect()
    };
    let mut misses = Misses::open(repo);
    if transport_error.is_none() {
        misses.record(repo, &req.remote, &ids_with(Status::NotFound));
    }
    misses.forget(repo, &req.remote, &ids_with(Status::Fetched));
    misses.save();
    outcomes.extend(remembered);

    if req.all && outcomes.iter().any(|o| o.status == Status::Fetched) {
        // A bulk fetch can create thousands of loose refs: pack them.
        if let Err(e) = crate::ops::gc::pack_checkpoint_refs(repo) {
            notice(&format!(
                "could not pack the checkpoint refs: {}",
                crate::base::error::error_chain(&e)
            ));
        }
    }
    if req.filter.is_none() {
        fill_writes_cache(repo, &outcomes, req.all);
    }
    Ok(Report {
        outcomes,
        transport_error,
        named: req.ids.clone(),
    })
}

/// Makes the writes cache's entries of the checkpoints just fetched (docs/format.md, "The
/// writes cache"), and with `all` (`--all`) then of those already here that lack them (the v1
/// branch a `git clone` brought), within [`FETCH_FILL_BUDGET`] bytes of transcripts and the
/// first [`FETCH_FILL_CHECKPOINTS`] checkpoints, so that the first `blame` after the fetch reads
/// no transcript. Not in a partial clone, whose transcripts a filtered fetch leaves out (reading
/// them here would ask the promisor remote). Never fails, nor slows, the fetch beyond that
/// budget: anything that cannot be read is only logged.
fn fill_writes_cache(repo: &Repo, outcomes: &[Outcome], all: bool) {
    let with = |status: Status| {
        outcomes
            .iter()
            .filter(move |o| o.status == status && !o.partial)
    };
    let cache = WritesCache::in_common_dir(repo.common_dir());
    // A checkpoint here that a fetch already found whole is not read again on every `--all`.
    let present: Vec<&str> = match all {
        true => cache.not_known_complete(with(Status::Present).map(|o| o.checkpoint_id.as_str())),
        false => Vec::new(),
    };
    let ids: Vec<CheckpointId> = with(Status::Fetched)
        .map(|o| o.checkpoint_id.as_str())
        .chain(present)
        .filter_map(|id| CheckpointId::parse(id).ok())
        .take(FETCH_FILL_CHECKPOINTS)
        .collect();
    if ids.is_empty() || repo.promisor_remote().is_some() {
        return;
    }
    let topo = match Topology::open(repo) {
        Ok(topo) => topo,
        Err(e) => {
            log::info!("writes cache: not filled after the fetch: {e}");
            return;
        }
    };
    let filled = cache.fill(&topo, &repo.location(), &ids, FETCH_FILL_BUDGET);
    log::info!(
        "writes cache: {} entries made after the fetch, from {} transcript bytes{}",
        filled.entries,
        filled.bytes,
        if filled.stopped {
            " (budget reached: the rest are made by the first blame)"
        } else {
            ""
        }
    );
}

/// Fetches the canonical refs of `ids` in chunks, then, in one more fetch per chunk, the
/// case-folded spelling of those the remote lacks (a ref packed on a case-insensitive
/// filesystem).
fn fetch_named(
    mode: &Mode<'_>,
    ids: &[CheckpointId],
    outcomes: &mut Vec<Outcome>,
    transport_error: &mut Option<FetchError>,
    progress: &dyn Fn(Progress),
) {
    for (i, chunk) in ids.chunks(FETCH_CHUNK).enumerate() {
        progress(Progress {
            phase: Phase::Fetching,
            done: i * FETCH_CHUNK,
            total: ids.len(),
        });
        let names: Vec<String> = chunk
            .iter()
            .map(|id| CheckpointRef::canonical(id).name().to_owned())
            .collect();
        let (results, partial) = match mode.fetch_refs(&names) {
            Ok(r) => r,
            Err(e) => {
                let msg = crate::base::error::error_chain(&e);
                outcomes.extend(chunk.iter().map(|id| Outcome {
                    error: Some(msg.clone()),
                    ..Outcome::new(id.to_string(), Status::Failed)
                }));
                transport_error.get_or_insert(e);
                continue;
            }
        };
        let states: Vec<Fetched> = results_in_order(&names, results)
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        // The case-folded spelling is asked for only where the canonical one is absent, for
        // the whole chunk in one fetch.
        let folded: Vec<(usize, String)> = chunk
            .iter()
            .zip(&states)
            .enumerate()
            .filter(|(_, (_, s))| **s == Fetched::Absent)
            .filter_map(|(i, (id, _))| CheckpointRef::folded(id).map(|r| (i, r.name().to_owned())))
            .collect();
        let mut refolded: HashMap<usize, (Fetched, bool)> = HashMap::new();
        if !folded.is_empty() {
            let folded_names: Vec<String> = folded.iter().map(|(_, n)| n.clone()).collect();
            match mode.fetch_refs(&folded_names) {
                Ok((results, partial)) => {
                    let found = results_in_order(&folded_names, results);
                    for ((i, _), (_, state)) in folded.iter().zip(found) {
                        refolded.insert(*i, (state, partial));
                    }
                }
                Err(e) => {
                    transport_error.get_or_insert(e);
                }
            }
        }
        for (i, (id, state)) in chunk.iter().zip(states).enumerate() {
            let (state, partial) = refolded.remove(&i).unwrap_or((state, partial));
            outcomes.push(Outcome {
                partial: partial && state == Fetched::Updated,
                ..Outcome::new(id.to_string(), Status::from(&state))
            });
        }
    }
}

/// Fetches `ids` in the spelling the remote's `listed` refs have them, in chunks; the IDs it
/// has in neither are not found without asking again.
fn fetch_listed(
    mode: &Mode<'_>,
    ids: &[CheckpointId],
    listed: &HashSet<String>,
    outcomes: &mut Vec<Outcome>,
    transport_error: &mut Option<FetchError>,
    progress: &dyn Fn(Progress),
) {
    let mut held: Vec<(&CheckpointId, String)> = Vec::new();
    for id in ids {
        let spelling = CheckpointRef::spellings(id)
            .into_iter()
            .map(|r| r.name().to_owned())
            .find(|n| listed.contains(n));
        match spelling {
            Some(name) => held.push((id, name)),
            None => outcomes.push(Outcome::new(id.to_string(), Status::NotFound)),
        }
    }
    for (i, chunk) in held.chunks(FETCH_CHUNK).enumerate() {
        progress(Progress {
            phase: Phase::Fetching,
            done: i * FETCH_CHUNK,
            total: held.len(),
        });
        let names: Vec<String> = chunk.iter().map(|(_, n)| n.clone()).collect();
        match mode.fetch_refs(&names) {
            Ok((results, partial)) => {
                for ((id, _), (_, state)) in chunk.iter().zip(results_in_order(&names, results)) {
                    outcomes.push(Outcome {
                        partial: partial && state == Fetched::Updated,
                        ..Outcome::new(id.to_string(), Status::from(&state))
                    });
                }
            }
            Err(e) => {
                let msg = crate::base::error::error_chain(&e);
                outcomes.extend(chunk.iter().map(|(id, _)| Outcome {
                    error: Some(msg.clone()),
                    ..Outcome::new(id.to_string(), Status::Failed)
                }));
                transport_error.get_or_insert(e);
            }
        }
    }
}

/// Fetches every checkpoint ref of the remote that the repository does not already hold at the
/// remote's commit (those are `present`, not fetched): the ones the repository holds whole
/// (they are only ever updated whole), the others as the mode says.
fn fetch_all(
    mode: &Mode<'_>,
    store: &GitRefsStore<'_>,
    outcomes: &mut Vec<Outcome>,
    transport_error: &mut Option<FetchError>,
    progress: &dyn Fn(Progress),
) -> Result<(), StoreError> {
    let fetcher = &mode.fetcher;
    let remote_refs = match fetcher.list_remote_tips() {
        Ok(r) => r,
        Err(e) => {
            transport_error.get_or_insert(e);
            return Ok(());
        }
    };
    let local: HashMap<String, Oid> = store.refs()?.into_values().collect();
    let (up_to_date, to_fetch): (Vec<_>, Vec<_>) = remote_refs.into_iter().partition(|(r, tip)| {
        local
            .get(r.name())
            .is_some_and(|ours| fetcher.repo().parse_oid(tip).ok() == Some(*ours))
    });
    outcomes.extend(
        up_to_date
            .iter()
            .map(|(r, _)| Outcome::new(r.id().to_string(), Status::Present)),
    );
    let (here, missing): (Vec<String>, Vec<String>) = to_fetch
        .iter()
        .map(|(r, _)| r.name().to_owned())
        .partition(|n| {
            mode.partial.is_none()
                || CheckpointRef::parse(n)
                    .ok()
                    .and_then(|r| store.locate_ref(r.id()).ok().flatten())
                    .is_some()
        });
    // Whole checkpoints new here are fetched by the commits the listing gave (no ref is written
    // by git) and their refs created together, not as a loose file each; the others (behind or
    // diverged) are fetched by name, each published by compare-and-swap.
    let tips: HashMap<&str, Oid> = to_fetch
        .iter()
        .filter_map(|(r, tip)| Some((r.name(), fetcher.repo().parse_oid(tip).ok()?)))
        .collect();
    let (mut new_here, mut here_by_name) = (Vec::new(), Vec::new());
    for name in here {
        match (local.contains_key(&name), tips.get(name.as_str())) {
            (false, Some(tip)) => new_here.push((name, *tip)),
            _ => here_by_name.push(name),
        }
    }
    let total = new_here.len() + here_by_name.len() + missing.len();
    fetcher.defer_creations();
    let write_deferred = |outcomes: &mut Vec<Outcome>| {
        let pending = fetcher.deferred_count();
        if pending == 0 {
            return;
        }
        progress(Progress {
            phase: Phase::WritingRefs,
            done: 0,
            total: pending,
        });
        for (name, state) in fetcher.write_deferred() {
            let Ok(r) = CheckpointRef::parse(&name) else {
                continue;
            };
            let id = r.id().to_string();
            if let Some(o) = outcomes.iter_mut().rev().find(|o| o.checkpoint_id == id) {
                *o = match state {
                    Ok(state) => Outcome::new(id, Status::from(&state)),
                    Err(e) => Outcome {
                        error: Some(crate::base::error::error_chain(&e)),
                        ..Outcome::new(id, Status::Failed)
                    },
                };
            }
        }
        progress(Progress {
            phase: Phase::WritingRefs,
            done: pending,
            total: pending,
        });
    };
    let fetched_new = fetcher.fetch_new_refs(&new_here, &|done, writing| {
        progress(Progress {
            phase: match writing {
                true => Phase::WritingRefs,
                false => Phase::Fetching,
            },
            done,
            total: if writing { new_here.len() } else { total },
        })
    });
    match fetched_new {
        Ok(results) => outcomes.extend(results.into_iter().map(|(name, state)| {
            let id = CheckpointRef::parse(&name)
                .map(|r| r.id().to_string())
                .unwrap_or(name);
            match state {
                Ok(s) => Outcome::new(id, Status::from(&s)),
                Err(e) => Outcome {
                    error: Some(crate::base::error::error_chain(&e)),
                    ..Outcome::new(id, Status::Failed)
                },
            }
        })),
        Err(e) => {
            transport_error.get_or_insert(e);
            return Ok(());
        }
    }
    let whole = here_by_name.chunks(FETCH_CHUNK).map(|c| (c, false));
    let filtered = missing.chunks(FETCH_CHUNK).map(|c| (c, true));
    let mut done = new_here.len();
    for (chunk, filtered) in whole.chain(filtered) {
        progress(Progress {
            phase: Phase::Fetching,
            done: done.min(total),
            total,
        });
        done += chunk.len();
        let result = match filtered {
            true => mode.fetch_refs(chunk),
            false => fetcher.fetch_refs(chunk).map(|r| (r, false)),
        };
        match result {
            Ok((results, partial)) => outcomes.extend(results.into_iter().map(|(name, s)| {
                let id = CheckpointRef::parse(&name)
                    .map(|r| r.id().to_string())
                    .unwrap_or(name);
                Outcome {
                    partial: partial && s == Fetched::Updated,
                    ..Outcome::new(id, Status::from(&s))
                }
            })),
            Err(e) => {
                transport_error.get_or_insert(e);
                break;
            }
        }
    }
    write_deferred(outcomes);
    Ok(())
}

/// Hex IDs the remote has no ref for may be on its v1 branch: one fetch of the branch (always
/// for `--all`, which then lists the branch's checkpoints not listed yet).
fn search_branch(
    mode: &Mode<'_>,
    all: bool,
    outcomes: &mut Vec<Outcome>,
    transport_error: &mut Option<FetchError>,
) -> Result<(), StoreError> {
    let on_branch = |o: &Outcome| {
        o.status == Status::NotFound
            && CheckpointId::parse(&o.checkpoint_id).is_ok_and(|id| id.kind() == IdKind::Hex)
    };
    if !outcomes.iter().any(on_branch) && !all {
        return Ok(());
    }
    let before: HashSet<CheckpointId> = mode.branch.ids()?.into_iter().collect();
    match mode.branch.refresh_remote() {
        Ok(_) => {}
        Err(StoreError::Fetch(e)) => {
            transport_error.get_or_insert(e);
            return Ok(());
        }
        Err(e) => return Err(e),
    }
    for o in outcomes.iter_mut().filter(|o| on_branch(o)) {
        if let Ok(id) = CheckpointId::parse(&o.checkpoint_id) {
            if mode.branch.holds(&id)? {
                o.status = Status::Fetched;
            }
        }
    }
    if all {
        let listed: HashSet<String> = outcomes.iter().map(|o| o.checkpoint_id.clone()).collect();
        for id in mode.branch.ids()? {
            if listed.contains(id.as_str()) {
                continue;
            }
            let status = match before.contains(&id) {
                true => Status::Present,
                false => Status::Fetched,
            };
            outcomes.push(Outcome::new(id.to_string(), status));
        }
    }
    Ok(())
}

/// Orders `results` like `names` (fetch reports absent refs first).
fn results_in_order(names: &[String], results: Vec<(String, Fetched)>) -> Vec<(String, Fetched)> {
    let mut by_name: HashMap<String, Fetched> = results.into_iter().collect();
    names
        .iter()
        .map(|n| (n.clone(), by_name.remove(n).unwrap_or(Fetched::Absent)))
        .collect()
}

/// Every `Entire-Checkpoint:` trailer of the commits in `range` (`A..B`, or one revision and
/// everything it reaches), in walk order, duplicates dropped; and how many were not read, over
/// the bound of their message ([`crate::model::trailers::MAX_TRAILERS`]).
fn trailers_in(repo: &Repo, range: &str) -> Result<(Vec<TrailerValue>, usize), FetchManyError> {
    let messages = repo
        .commit_messages_in(range)
        .map_err(|source| FetchManyError::Range {
            range: range.to_owned(),
            source,
        })?;
    let mut out: Vec<TrailerValue> = Vec::new();
    let mut seen: HashSet<TrailerValue> = HashSet::new();
    let mut ignored = 0;
    for m in messages {
        let trailers = checkpoint_trailers(&m);
        ignored += trailers.ignored;
        for t in trailers {
            if seen.insert(t.clone()) {
                out.push(t);
            }
        }
    }
    Ok((out, ignored))
}
