//! `list <revision-range>`: the commits of a range that carry `Entire-Checkpoint` trailers (or
//! inherited links of the rewrite map, or that a checkpoint names in its `linked_commits`:
//! [`crate::ops::side_links`]), each with its checkpoints, in `git log`'s order.
//!
//! The range is read by one `git log` that prints each commit's hash, author date, subject and
//! message (whose links are found by the one trailer rule, `model::trailers`), never a walk per
//! commit, and each commit is handed on as git
//! prints it. Every checkpoint is read once, however many commits name it; those missing
//! locally are fetched in one batch ([`fetch_many::run`]) once the range is read.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::time::Duration;

use crate::base::error::{error_chain, ExitStatus, FAILURE, USAGE};
use crate::base::id::CheckpointId;
use crate::git::plumbing;
use crate::git::repo::Repo;
use crate::git::subprocess::{first_error_line, GitError, Running};
use crate::git::url::Remote;
use crate::model::trailers::{checkpoint_trailers, TrailerValue};
use crate::ops::fetch_many::{self, FetchManyError, Request};
use crate::ops::rewrites::{self, RewriteMap};
use crate::ops::side_links::SideLinks;
use crate::remote::fetch::FetchFilter;
use crate::store::{summary, CheckpointInfo, StoreError};
use crate::topology::{Listing, ListingById, Topology};

/// From this many checkpoints on, a range reads them from the listing (its summary index: one
/// file, whatever their number, but every checkpoint ref is enumerated) rather than one by one
/// (a ref and a few objects each); measured in docs/performance.md.
const INDEXED_FROM: usize = 64;

/// The largest summary index (about 8,000 checkpoints) for which the listing is read while
/// `git log` runs, before the range's checkpoints are known (measured in docs/performance.md).
const EARLY_LISTING_MAX: u64 = 1 << 20;

/// How long the local `git log` of a range may take.
const LOG_BUDGET: Duration = Duration::from_secs(600);

/// The `git log` options a range may use that take no value.
const FLAGS: [&str; 8] = [
    "--first-parent",
    "--no-merges",
    "--merges",
    "--all",
    "--branches",
    "--tags",
    "--remotes",
    "--ancestry-path",
];

/// The `git log` options a range may use as `--name=value`; the first two take a count.
const VALUED: [&str; 9] = [
    "--max-count",
    "--skip",
    "--since",
    "--after",
    "--until",
    "--before",
    "--author",
    "--committer",
    "--grep",
];

/// Errors of listing a range.
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    /// A word that starts with `-` is not one of the `git log` options a range may use.
    #[error("{0:?} is not a revision-range option list accepts (see `git entire-checkpoint list --help`: -n <N>, -<N>, --max-count=<N>, --skip=<N>, --since=, --until=, --after=, --before=, --author=, --committer=, --grep=, --first-parent, --no-merges, --merges, --all, --branches, --tags, --remotes, --ancestry-path)")]
    Disallowed(String),
    /// A count option without a whole number.
    #[error("{option} needs a whole number, got {value:?}")]
    Count {
        /// The option.
        option: String,
        /// What was given.
        value: String,
    },
    /// git rejected the range.
    #[error("not a revision range of this repository: {message}{}", .shallow.as_ref().map_or(String::new(), |end| format!(" (a shallow clone: its history ends at {end}; `git fetch --deepen=<n>` or `git fetch --unshallow` reads further)")))]
    Rejected {
        /// git's error line.
        message: String,
        /// Where history ends, when the repository is a shallow clone (the likely reason).
        shallow: Option<String>,
    },
    /// git could not be run.
    #[error(transparent)]
    Git(#[from] GitError),
    /// Reading a checkpoint failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The batch fetch could not start.
    #[error(transparent)]
    Fetch(#[from] FetchManyError),
}

impl ExitStatus for RangeError {
    fn exit_code(&self) -> i32 {
        match self {
            RangeError::Disallowed(_) | RangeError::Count { .. } | RangeError::Rejected { .. } => {
                USAGE
            }
            RangeError::Git(_) => FAILURE,
            RangeError::Store(e) => e.exit_code(),
            RangeError::Fetch(e) => e.exit_code(),
        }
    }
}

/// A revision range from the command line, checked: the allowed `git log` options (in
/// `--name=value` form), then the revisions, which git receives after `--end-of-options` so
/// that none can be taken for an option.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeArgs {
    options: Vec<String>,
    revisions: Vec<String>,
}

fn count(option: &str, value: &str) -> Result<String, RangeError> {
    match value.parse::<u64>() {
        Ok(n) => Ok(format!("{option}={n}")),
        Err(_) => Err(RangeError::Count {
            option: option.to_owned(),
            value: value.to_owned(),
        }),
    }
}

impl RangeArgs {
    /// Checks `words`: revisions and ranges (`main..HEAD`, `HEAD~5..`, `A...B`, `^A`), and the
    /// options `-n <N>`, `-n<N>`, `-<N>`, [`VALUED`] as `--name=value` and [`FLAGS`]. Any other
    /// word starting with `-` is [`RangeError::Disallowed`]: the words are the user's, but
    /// git options such as `--output=` must not reach git.
    pub fn parse(words: &[String]) -> Result<RangeArgs, RangeError> {
        let mut args = RangeArgs::default();
        let mut words = words.iter();
        while let Some(w) = words.next() {
            if !w.starts_with('-') || w == "-" {
                args.revisions.push(w.clone());
                continue;
            }
            let option = if w == "-n" {
                let value = words.next().map(String::as_str).unwrap_or("");
                count("--max-count", value)?
            } else if let Some(n) = w.strip_prefix("-n") {
                count("--max-count", n)?
            } else if w[1..].bytes().all(|b| b.is_ascii_digit()) {
                count("--max-count", &w[1..])?
            } else if FLAGS.contains(&w.as_str()) {
                w.clone()
            } else {
                match w.split_once('=') {
                    Some((name @ ("--max-count" | "--skip"), value)) => count(name, value)?,
                    Some((name, _)) if VALUED.contains(&name) => w.clone(),
                    _ => return Err(RangeError::Disallowed(w.clone())),
                }
            };
            args.options.push(option);
        }
        Ok(args)
    }

    /// The checked options and the revisions, for a `git log` of the range.
    pub fn parts(&self) -> (&[String], &[String]) {
        (&self.options, &self.revisions)
    }
}

/// What `list <range>` shows of one checkpoint a commit names.
#[derive(Debug, Clone)]
pub enum Linked {
    /// Found (locally, or fetched just now), or found but unreadable: its list line.
    Listed(CheckpointInfo),
    /// In no store, locally or on the remote.
    NotFound(CheckpointId),
}

/// One commit of the range that links checkpoints.
#[derive(Debug, Clone)]
pub struct RangeCommit {
    /// The full SHA.
    pub sha: String,
    /// Author time, RFC 3339 in the author's zone.
    pub authored_at: String,
    /// The subject line.
    pub subject: String,
    /// Its checkpoints, in trailer order, then the rewrite map's.
    pub checkpoints: Vec<Linked>,
}

/// What [`list`] found besides the commits it handed on.
#[derive(Debug)]
pub struct RangeSummary {
    /// How many commits the range has (linked or not).
    pub scanned: usize,
    /// Why the batch fetch failed, when it did: the checkpoints it was for are shown as not
    /// found, and the command fails after the listing.
    pub fetch_failure: Option<FetchManyError>,
    /// The commits of the range where history ends (a shallow clone's boundary: their parents
    /// are not here), short, in the order met.
    pub history_ends_at: Vec<String>,
}

/// One commit as `git log` printed it: hash, author date, subject, whole message.
fn parse_record(record: &str) -> Option<(&str, &str, &str, &str)> {
    let (head, message) = record.split_once('\n').unwrap_or((record, ""));
    let (sha, rest) = head.split_once(' ')?;
    let (date, subject) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((sha, date, subject, message))
}

/// The `git log` of a range, started by [`start`] and read by [`list`].
pub struct RangeLog {
    git: Running,
}

/// Starts the `git log` of `range` in `cwd`, where git finds the repository as the command
/// does: git walks the range while the command opens the repository and its stores.
pub fn start(cwd: &Path, range: &RangeArgs) -> Result<RangeLog, RangeError> {
    // The whole message: links are found by the reference's rule, anywhere in it
    // (docs/format.md, "Trailers"), not by git's trailer parsing.
    let format = "%H %aI %s%n%B";
    let git = plumbing::start_log(cwd, format, &range.options, &range.revisions, LOG_BUDGET)?;
    Ok(RangeLog { git })
}

/// Hands each commit of the range of `log` that links checkpoints to `emit`, in `git log`'s
/// order (newest first), as `git log` prints it: the first lines come while git is still
/// writing the rest. With `fetch_from`, the checkpoints missing locally are fetched from it in
/// one batch (filtered into the partial cache when `strategy_options.filtered_fetches` says so)
/// once the range is read; the commits from the first that names one on wait for that batch.
/// `notice` gets the warnings (malformed trailers, a rewrite map that cannot be read, the
/// fetch's notices). Nothing is emitted when git rejects the range.
pub fn list(
    repo: &Repo,
    topo: &Topology<'_>,
    log: RangeLog,
    fetch_from: Option<Remote>,
    notice: impl Fn(&str) + Clone + 'static,
    mut emit: impl FnMut(RangeCommit),
) -> Result<RangeSummary, RangeError> {
    let RangeLog { git: mut log } = log;
    // While git walks the range (with a negative end it prints nothing before it has walked it
    // all): what resolving its links needs. The listing a long range reads its checkpoints
    // from, when it is cheap: a guess that costs no time when right, and little when wrong.
    let map = RewriteMap::load(repo)
        .map_err(|e| notice(&error_chain(&e)))
        .ok();
    // Set once listed (`Some(None)`: the listing failed and is not tried again).
    let listing: OnceCell<Option<Listing>> = OnceCell::new();
    if cheap_listing(repo) {
        let _ = listing.set(topo.list().ok());
    }
    // The checkpoints' own links: from the listing when it is read already, else through the
    // stores' indexes. One that cannot be read loses only those links.
    let side = match listing.get() {
        Some(Some(l)) => SideLinks::of_listing(l),
        _ => SideLinks::load(topo).unwrap_or_else(|e| {
            notice(&format!(
                "the checkpoints' own commit links could not be listed: {}",
                error_chain(&e)
            ));
            SideLinks::default()
        }),
    };
    for refused in &side.refused {
        notice(refused);
    }
    fn by_id(l: &Option<Listing>) -> Option<ListingById<'_>> {
        l.as_ref().map(Listing::by_id)
    }
    let mut links = Links {
        topo,
        by_id: listing.get().and_then(by_id),
        found: HashMap::new(),
    };
    let fetching = fetch_from.is_some();
    let mut scanned = 0;
    let boundary: HashSet<String> = repo.shallow_boundary().into_iter().collect();
    let mut history_ends_at = Vec::new();
    // The commits not emitted yet, in order: while the way to read checkpoints is not chosen,
    // and from the first that names a checkpoint to fetch on.
    let mut held: VecDeque<(RangeCommit, Vec<CheckpointId>)> = VecDeque::new();
    let mut blocked = false;
    let mut distinct = HashSet::new();
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let piece = log.next_output()?;
        let end = piece.is_none();
        pending.extend_from_slice(&piece.unwrap_or_default());
        // `-z`: records are separated by NUL; the last one ends with the output.
        let mut start = 0;
        let mut records = Vec::new();
        while let Some(at) = memchr::memchr(0, &pending[start..]) {
            records.push(start..start + at);
            start += at + 1;
        }
        if end {
            records.push(start..pending.len());
        }
        for r in records {
            let record = String::from_utf8_lossy(&pending[r]);
            let record = record.trim_start_matches('\n');
            if record.trim().is_empty() {
                continue;
            }
            let Some((sha, date, subject, message)) = parse_record(record) else {
                continue;
            };
            scanned += 1;
            let trailers = checkpoint_trailers(message);
            let short = &sha[..sha.len().min(12)];
            if boundary.contains(sha) {
                history_ends_at.push(short.to_owned());
            }
            for t in &trailers {
                if let TrailerValue::Malformed(tok) = t {
                    notice(&format!(
                        "{short}: ignoring malformed Entire-Checkpoint trailer {tok:?}"
                    ));
                }
            }
            if let Some(ignored) = trailers.ignored_notice() {
                notice(&format!("{short}: {ignored}"));
            }
            let mut ids = rewrites::links_of(trailers, map.as_ref().and_then(|m| m.get(sha)));
            side.add_to(sha, &mut ids);
            if ids.is_empty() {
                continue;
            }
            if listing.get().is_none() {
                distinct.extend(ids.iter().cloned());
            }
            let commit = RangeCommit {
                sha: sha.to_owned(),
                authored_at: date.to_owned(),
                subject: subject.to_owned(),
                checkpoints: Vec::new(),
            };
            held.push_back((commit, ids));
        }
        if end {
            break;
        }
        pending.drain(..start);
        // Many checkpoints: read from the listing's summary index (one file) rather than one
        // by one (several objects each).
        if listing.get().is_none() && distinct.len() >= INDEXED_FROM {
            links.by_id = by_id(listing.get_or_init(|| topo.list().ok()));
        }
        if listing.get().is_some() && !blocked {
            while let Some((commit, ids)) = held.pop_front() {
                let ready = ids
                    .iter()
                    .all(|id| links.resolve(id).is_some() || !fetching);
                if !ready {
                    blocked = true;
                    held.push_front((commit, ids));
                    break;
                }
                emit(links.commit(commit, ids));
            }
        }
    }
    let out = log.wait()?;
    if !out.success() {
        let message = first_error_line(&out.stderr);
        return Err(RangeError::Rejected {
            message: repo
                .foreign_oid_in(&message)
                .map_or(message, |e| e.to_string()),
            shallow: repo
                .shallow_boundary()
                .first()
                .map(|sha| sha[..sha.len().min(12)].to_owned()),
        });
    }
    // In order of first mention, each once.
    let mut seen = HashSet::new();
    let mut missing = Vec::new();
    for id in held.iter().flat_map(|(_, ids)| ids) {
        if seen.insert(id) && links.resolve(id).is_none() {
            missing.push(id.clone());
        }
    }
    let mut fetch_failure = None;
    if let (Some(remote), false) = (fetch_from, missing.is_empty()) {
        let filter = repo
            .settings()
            .filtered_fetches_enabled()
            .then_some(FetchFilter::BlobNone);
        let request = Request {
            remote,
            ids: missing.clone(),
            all: false,
            range: None,
            filter,
            // Two round trips however many of the range's checkpoints the remote lacks.
            list_first: true,
            ask_again: topo.asks_again(),
        };
        let report = fetch_many::run(repo, &request, notice, &|_| {})?;
        // Absent from the remote is not a failure here: such a checkpoint is shown as not found.
        fetch_failure = report
            .failure()
            .filter(|e| !matches!(e, FetchManyError::NotFound { .. }));
        for id in missing {
            let info = read(topo, &id);
            links.found.insert(id, info);
        }
    }
    for (commit, ids) in held {
        emit(links.commit(commit, ids));
    }
    Ok(RangeSummary {
        scanned,
        fetch_failure,
        history_ends_at,
    })
}

/// How [`list`] reads the checkpoints the commits name: each once, however many commits name
/// it; from the listing when there is one, else one by one.
struct Links<'t, 'r, 'l> {
    topo: &'t Topology<'r>,
    /// The listing, when read.
    by_id: Option<ListingById<'l>>,
    found: HashMap<CheckpointId, Option<CheckpointInfo>>,
}

impl Links<'_, '_, '_> {
    /// Checkpoint `id`'s list line, `None` when no store has it here.
    fn resolve(&mut self, id: &CheckpointId) -> &Option<CheckpointInfo> {
        let (topo, by_id) = (self.topo, &self.by_id);
        self.found.entry(id.clone()).or_insert_with(|| {
            // A line the listing could not read is read on its own, which says why.
            let line = by_id.as_ref().and_then(|l| l.get(id.as_str()));
            match line.filter(|l| l.unreadable.is_none()) {
                Some(line) => Some(info_of_line(id, &line)),
                None => read(topo, id),
            }
        })
    }

    /// `commit` with its checkpoints, each as resolved.
    fn commit(&self, mut commit: RangeCommit, ids: Vec<CheckpointId>) -> RangeCommit {
        commit.checkpoints = ids
            .into_iter()
            .map(|id| match self.found.get(&id).cloned().flatten() {
                Some(info) => Linked::Listed(info),
                None => Linked::NotFound(id),
            })
            .collect();
        commit
    }
}

/// Whether listing every checkpoint costs little enough to do it before knowing that the range
/// needs it: the summary index exists and holds at most [`EARLY_LISTING_MAX`] bytes.
fn cheap_listing(repo: &Repo) -> bool {
    std::fs::symlink_metadata(summary::path(repo.common_dir()))
        .is_ok_and(|m| m.is_file() && m.len() <= EARLY_LISTING_MAX)
}

/// The entry of checkpoint `id` from its listed `line`.
fn info_of_line(id: &CheckpointId, line: &crate::store::ListLine<'_>) -> CheckpointInfo {
    CheckpointInfo {
        id: id.clone(),
        store: line.store,
        created_at: line.created_at.to_owned(),
        session_count: line.session_count,
        session_ids: line.session_ids.iter().map(|s| (*s).to_owned()).collect(),
        agent: line.agent.to_owned(),
        subject: line.subject.to_owned(),
        remote_only: line.remote_only,
        unreadable: None,
        linked_commits: line
            .linked_commits
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        refused_links: line.refused_links.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// The list line of `id` as held locally: `None` when no store has it; a checkpoint that
/// cannot be read gets its line all the same, saying why.
fn read(topo: &Topology<'_>, id: &CheckpointId) -> Option<CheckpointInfo> {
    match topo.read(id) {
        Ok(Some(cp)) => Some(topo.info(&cp)),
        Ok(None) => None,
        Err(e) => {
            let store = topo.read_order(id.kind())[0];
            Some(CheckpointInfo::unreadable(
                id.clone(),
                store,
                error_chain(&e),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<RangeArgs, RangeError> {
        RangeArgs::parse(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options_are_allowed_by_name_and_revisions_pass_through() {
        let a = parse(&[
            "-n",
            "20",
            "-5",
            "-n3",
            "--since=2.weeks",
            "--no-merges",
            "main..HEAD",
        ])
        .unwrap();
        assert_eq!(
            a.options,
            [
                "--max-count=20",
                "--max-count=5",
                "--max-count=3",
                "--since=2.weeks",
                "--no-merges"
            ]
        );
        assert_eq!(a.revisions, ["main..HEAD"]);
        for bad in [
            "--output=out.txt",
            "--format=%H",
            "-p",
            "--since",
            "--exec=x",
            "--",
        ] {
            assert!(
                matches!(parse(&[bad]), Err(RangeError::Disallowed(_))),
                "{bad}"
            );
        }
        assert!(matches!(parse(&["-n", "x"]), Err(RangeError::Count { .. })));
        assert!(matches!(parse(&["-n"]), Err(RangeError::Count { .. })));
    }

    #[test]
    fn records_split_into_their_fields() {
        assert_eq!(
            parse_record("abc 2026-01-01T00:00:00+00:00 fix: it\nEntire-Checkpoint: x\n"),
            Some((
                "abc",
                "2026-01-01T00:00:00+00:00",
                "fix: it",
                "Entire-Checkpoint: x\n"
            ))
        );
        assert_eq!(
            parse_record("abc 2026-01-01T00:00:00+00:00 "),
            Some(("abc", "2026-01-01T00:00:00+00:00", "", ""))
        );
    }
}
