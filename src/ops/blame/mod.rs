//! `blame` and `why`: each line of a file labelled with the checkpoints of the commit that last
//! changed it, and with whether a transcript of those checkpoints records the agent writing
//! that exact line.
//!
//! The labels ([`Attribution`]): `agent` when a session of a checkpoint linked to the line's
//! commit (trailers, then the rewrite map, then the checkpoints that name the commit in their
//! `linked_commits`: [`crate::ops::side_links`]) has a transcript whose file-writing tool call for
//! this file wrote the line's text (trailing whitespace trimmed) and the line is evidence on
//! its own ([`agents::is_evidence`]: at least one letter or digit); `commit-linked` when
//! the commit links a checkpoint but no transcript shows that (or none could be read: the
//! checkpoint says why); `human` when the commit links no checkpoint; `uncommitted` for lines
//! of the working tree not committed yet. Each checkpoint and transcript is read once however
//! many lines point at it ([`read`]); checkpoints missing locally are fetched first, in one
//! batch. The rule is asked through [`Evidence`], which `stats` and `verify` ask too, of the
//! lines a commit adds. Transcripts of every agent the reference records are read (`agents`); a
//! transcript in no known format is one summary line, never a failure ([`settle`]). `why`
//! answers for one line ([`why`]).

mod evidence;
mod read;
mod settle;
mod why;

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::agents::AgentWrites;
use crate::base::error::error_chain;
use crate::base::id::CheckpointId;
use crate::git::blame::{self as git_blame, BlameCommit};
use crate::git::repo::{Identity, Repo};
use crate::git::url::Remote;
use crate::ops::fetch_many::{self, Status};
use crate::ops::rewrites::{self, RewriteMap};
use crate::ops::side_links::SideLinks;
use crate::ops::writes_cache::LinesOf;
use crate::store::Checkpoint;
use crate::topology::Topology;

/// What `git blame` is asked (the lines, the revision) and how it fails, as the arguments give them.
pub use crate::git::blame::{BlameError, BlameRev, LineRange};
pub use evidence::{Evidence, Links, Writer};
pub use why::{
    start_why, why, why_target, PromptEntry, SessionPrompts, StartedWhy, WhyError, WhyReport,
    WhyWrite,
};

/// What to blame.
#[derive(Debug, Clone)]
pub struct BlameTarget<'a> {
    /// The directory the path is relative to (the caller's working directory), where git
    /// blame runs and finds the repository as the command does.
    pub cwd: &'a Path,
    /// The file, as the user named it.
    pub path: String,
    /// The lines (default: all).
    pub range: Option<LineRange>,
    /// The revision (default: the working tree).
    pub rev: Option<BlameRev>,
}

/// A `git blame` started by [`start`]: it runs while the caller opens the repository and its
/// stores, then [`blame`] labels its lines.
pub struct StartedBlame(pub(super) git_blame::PendingBlame);

/// Starts blaming `target`.
pub fn start(target: &BlameTarget<'_>) -> Result<StartedBlame, BlameError> {
    Ok(StartedBlame(git_blame::start(
        target.cwd,
        &target.path,
        target.range,
        target.rev.as_ref(),
    )?))
}

/// How a line came to be, as far as the checkpoints show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attribution {
    /// A transcript of a linked checkpoint records the agent writing this line.
    Agent,
    /// The commit links checkpoints, but no transcript read shows this line written.
    CommitLinked,
    /// The commit links no checkpoint.
    Human,
    /// Not committed yet.
    Uncommitted,
}

impl Attribution {
    /// The label, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Attribution::Agent => "agent",
            Attribution::CommitLinked => "commit-linked",
            Attribution::Human => "human",
            Attribution::Uncommitted => "uncommitted",
        }
    }
}

/// The tool call that wrote a line.
#[derive(Debug, Clone, Serialize)]
pub struct WriteRef {
    /// The checkpoint.
    pub checkpoint_id: String,
    /// The session's slot in it.
    pub session_index: usize,
    /// The session's ID.
    pub session_id: String,
    /// The tool.
    pub tool: String,
    /// When the call was made, as the transcript records it (`null` in JSON when unknown).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub timestamp: String,
    /// The entry's line in the transcript (1-based).
    pub transcript_line: usize,
    #[serde(skip)]
    prompt: Option<usize>,
}

/// One line of the file.
#[derive(Debug, Clone, Serialize)]
pub struct LineEntry {
    /// Its number.
    pub line: usize,
    /// Its text.
    pub text: String,
    /// The commit that last changed it.
    pub commit: String,
    /// Its label.
    pub attribution: Attribution,
    /// The checkpoints the commit links.
    pub checkpoints: Vec<String>,
    /// For `agent` lines, the write that shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<WriteRef>,
}

/// A commit some line points at, in the words every JSON output uses (docs/cli.md, "One
/// vocabulary").
#[derive(Debug, Clone, Serialize)]
pub struct CommitEntry {
    /// Its full hash.
    pub commit: String,
    /// The author.
    pub author: Identity,
    /// The author time, RFC 3339 in the author's zone.
    pub authored_at: String,
    /// The subject line.
    pub subject: String,
    /// The file's path in that commit.
    pub filename: String,
    /// The checkpoints it links (trailers, then the rewrite map, then the checkpoints that name
    /// it in their `linked_commits`).
    pub checkpoints: Vec<String>,
}

/// Whether a checkpoint could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointStatus {
    /// Read.
    Read,
    /// Neither here nor (when fetching) on the remote.
    NotFound,
    /// Held by no local copy, and the fetch from the remote failed (unreachable, refused):
    /// whether the remote has it is unknown.
    FetchFailed,
    /// It exists but cannot be read (a corrupt document, a session pointing at a missing
    /// directory).
    Unreadable,
}

/// Whether a session's transcript could be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptStatus {
    /// Read, in a known format.
    Read,
    /// Not there: none stored, or its blob is absent (a partial clone, a filtered fetch).
    Absent,
    /// Not JSONL.
    NotJsonl,
    /// JSONL of a format whose writes are not read (another agent).
    UnknownFormat,
    /// It could not be read.
    Unreadable,
}

/// A session of a checkpoint and what its transcript gave.
#[derive(Debug, Clone, Serialize)]
pub struct SessionEntry {
    /// The slot.
    pub session_index: usize,
    /// The session ID.
    pub session_id: String,
    /// The agent, from its metadata (`null` in JSON when it names none).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub agent: String,
    /// The model, from its metadata (`null` in JSON when it names none).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub model: String,
    /// The transcript's state.
    pub transcript: TranscriptStatus,
    /// The format read (`claude-code`, `codex`), when read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<&'static str>,
    /// How many file-writing tool calls it holds.
    pub writes: usize,
    /// Lines of the transcript that are not JSON (skipped).
    pub skipped_lines: usize,
    /// Why the transcript gave nothing, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A checkpoint some commit links.
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointEntry {
    /// Its ID.
    pub checkpoint_id: String,
    /// Whether it was read.
    pub status: CheckpointStatus,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its sessions.
    pub sessions: Vec<SessionEntry>,
}

/// How many lines got each label.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Counts {
    /// `agent`.
    pub agent: usize,
    /// `commit-linked`.
    pub commit_linked: usize,
    /// `human`.
    pub human: usize,
    /// `uncommitted`.
    pub uncommitted: usize,
}

/// The result of `blame`.
#[derive(Debug, Clone, Serialize)]
pub struct BlameReport {
    /// The file as named.
    pub file: String,
    /// The revision blamed (`None`: the working tree).
    pub rev: Option<String>,
    /// The lines.
    pub lines: Vec<LineEntry>,
    /// The commits they point at, once each.
    pub commits: Vec<CommitEntry>,
    /// The checkpoints those commits link, once each.
    pub checkpoints: Vec<CheckpointEntry>,
    /// Lines per label.
    pub counts: Counts,
    /// What the user should hear of (also on stderr): checkpoints not found or unreadable,
    /// transcripts absent or not JSONL, skipped lines, a failed fetch.
    pub warnings: Vec<String>,
    /// Whether something that should be readable was not (a checkpoint that cannot be read, a
    /// transcript that is not JSONL): the command fails after its output.
    #[serde(skip)]
    pub damaged: bool,
}

/// A loaded checkpoint: its sessions' writes, where the transcript could be read.
struct Loaded {
    cp: Option<Checkpoint>,
    sessions: Vec<Option<AgentWrites>>,
}

/// Everything `blame` computed, kept for `why`.
struct Attributed {
    report: BlameReport,
    /// The checkpoints as read, their sessions' writes and the line indexes.
    evidence: Evidence,
    /// What git blame said.
    git_said: git_blame::Blame,
}

/// A blame's report, with everything read to make it.
pub struct Blamed {
    /// The report.
    pub report: BlameReport,
    /// What was read: the linked checkpoints, their sessions' writes, the line indexes, git
    /// blame's answer. On a large history it is hundreds of thousands of small allocations, and
    /// freeing them one by one was a tenth of a warm blame's own work, after its output: a
    /// caller that exits next may leave them to the exit ([`std::mem::forget`]).
    pub read: BlameRead,
}

/// What a blame read (see [`Blamed::read`]).
pub struct BlameRead {
    _evidence: Evidence,
    _git_said: git_blame::Blame,
}

/// Labels every line of the blame `started`; the checkpoints missing locally are fetched from
/// `remote` first, in one batch (`None`: not fetched).
pub fn blame(
    repo: &Repo,
    topo: &Topology<'_>,
    started: StartedBlame,
    remote: Option<&Remote>,
    notice: impl Fn(&str) + Clone + 'static,
) -> Result<Blamed, BlameError> {
    let a = attribute(repo, topo, started, remote, notice)?;
    Ok(Blamed {
        report: a.report,
        read: BlameRead {
            _evidence: a.evidence,
            _git_said: a.git_said,
        },
    })
}

fn attribute(
    repo: &Repo,
    topo: &Topology<'_>,
    started: StartedBlame,
    remote: Option<&Remote>,
    notice: impl Fn(&str) + Clone + 'static,
) -> Result<Attributed, BlameError> {
    let StartedBlame(pending) = started;
    let (path, rev) = (pending.path().to_owned(), pending.rev().cloned());
    // While git blame runs: what does not depend on its answer.
    let mut warnings = Vec::new();
    let map = match RewriteMap::load(repo) {
        Ok(m) => Some(m),
        Err(e) => {
            warnings.push(error_chain(&e));
            None
        }
    };
    // A listing that fails loses only the checkpoint-side links.
    let side = SideLinks::load(topo).unwrap_or_else(|e| {
        warnings.push(format!(
            "the checkpoints' own commit links could not be listed: {}",
            error_chain(&e)
        ));
        SideLinks::default()
    });
    warnings.extend(side.refused.iter().cloned());
    let blamed = pending.finish().map_err(|e| match e {
        // A revision of the other object format is named as such.
        BlameError::Rejected { path, message } => BlameError::Rejected {
            message: repo
                .foreign_oid_in(&message)
                .map_or(message, |e| e.to_string()),
            path,
        },
        e => e,
    })?;
    // Commit → its checkpoints (indices of `links`).
    let mut links = Links::default();
    let commit_cps: Vec<Vec<usize>> = blamed
        .commits
        .iter()
        .map(|c| {
            let mut ids = Vec::new();
            if !c.is_uncommitted() {
                ids = rewrites::commit_links(repo, map.as_ref(), &c.sha).map_or(ids, |l| l.ids);
                side.add_to(&c.sha, &mut ids);
            }
            links.add(ids)
        })
        .collect();
    // Only the lines written to the blamed file, under each name it had, are asked about.
    let mut names: Vec<String> = Vec::new();
    for c in &blamed.commits {
        if !names.contains(&c.filename) {
            names.push(c.filename.clone());
        }
    }
    let lines = Some(LinesOf::Files(&names));
    let mut evidence = Evidence::load(repo, topo, links, remote, notice, warnings, lines);
    let mut warnings = std::mem::take(&mut evidence.warnings);
    // A shallow clone's boundary commit takes the blame for every older line: said, so that a
    // line labelled by it is not taken for its own.
    warnings.extend(history_ends(
        repo,
        blamed.commits.iter().map(|c| c.sha.as_str()),
        "older lines are blamed on it",
    ));

    let mut counts = Counts::default();
    let mut lines = Vec::with_capacity(blamed.lines.len());
    for l in &blamed.lines {
        let commit = &blamed.commits[l.commit];
        let cps = &commit_cps[l.commit];
        let write = evidence
            .writer(cps, &commit.filename, &l.text)
            .map(|w| w.write);
        let attribution = match (commit.is_uncommitted(), cps.is_empty(), &write) {
            (true, _, _) => Attribution::Uncommitted,
            (false, true, _) => Attribution::Human,
            (false, false, Some(_)) => Attribution::Agent,
            (false, false, None) => Attribution::CommitLinked,
        };
        match attribution {
            Attribution::Agent => counts.agent += 1,
            Attribution::CommitLinked => counts.commit_linked += 1,
            Attribution::Human => counts.human += 1,
            Attribution::Uncommitted => counts.uncommitted += 1,
        }
        lines.push(LineEntry {
            line: l.line,
            text: l.text.clone(),
            commit: commit.sha.clone(),
            attribution,
            checkpoints: cps.iter().map(|&c| evidence.id(c).to_string()).collect(),
            write,
        });
    }
    let commits = blamed
        .commits
        .iter()
        .zip(&commit_cps)
        .map(|(c, cps)| {
            let ids = cps.iter().map(|&i| evidence.id(i).to_string()).collect();
            commit_entry(c, ids)
        })
        .collect();
    Ok(Attributed {
        report: BlameReport {
            file: path,
            rev: rev.map(|r| r.as_str().to_owned()),
            lines,
            commits,
            checkpoints: std::mem::take(&mut evidence.checkpoints),
            counts,
            warnings,
            damaged: evidence.damaged,
        },
        evidence,
        git_said: blamed,
    })
}

/// The warning that history ends at those of `commits` that are a shallow clone's boundary
/// (their parents are not here), and `what` that means for the command; `None` when none is.
pub fn history_ends<'a>(
    repo: &Repo,
    commits: impl Iterator<Item = &'a str>,
    what: &str,
) -> Option<String> {
    let boundary = repo.shallow_boundary();
    let ends: Vec<&str> = commits
        .filter(|sha| boundary.iter().any(|b| b == sha))
        .map(|sha| &sha[..sha.len().min(12)])
        .collect();
    (!ends.is_empty()).then(|| {
        format!(
            "history ends at {} (a shallow clone): {what}; `git fetch --deepen=<n>` or `git fetch --unshallow` reads further",
            ends.join(", ")
        )
    })
}

/// Fetches the checkpoints of `ids` missing locally from `remote`, in one batch; returns
/// those still missing with why (not found, or the fetch failed), so that reads do not ask the
/// remote again.
fn fetch_batch(
    repo: &Repo,
    topo: &Topology<'_>,
    remote: Option<&Remote>,
    ids: &[CheckpointId],
    notice: impl Fn(&str) + Clone + 'static,
    warnings: &mut Vec<String>,
) -> HashMap<CheckpointId, (CheckpointStatus, String)> {
    let mut missing = HashMap::new();
    let Some(remote) = remote else {
        return missing;
    };
    if ids.is_empty() {
        return missing;
    }
    let request = fetch_many::Request {
        remote: remote.clone(),
        ids: ids.to_vec(),
        all: false,
        range: None,
        filter: None,
        list_first: true,
        ask_again: topo.asks_again(),
    };
    let report = match fetch_many::run(repo, &request, notice, &|_| {}) {
        Ok(r) => r,
        Err(e) => {
            let why = format!("could not be fetched from {remote}: {}", error_chain(&e));
            warnings.push(format!(
                "could not fetch the missing checkpoints: {}",
                error_chain(&e)
            ));
            return ids
                .iter()
                .map(|id| (id.clone(), (CheckpointStatus::FetchFailed, why.clone())))
                .collect();
        }
    };
    for o in &report.outcomes {
        let Ok(id) = CheckpointId::parse(&o.checkpoint_id) else {
            continue;
        };
        let why = match o.status {
            Status::NotFound => (
                CheckpointStatus::NotFound,
                match o.remembered {
                    None => format!("not found locally or on {remote}"),
                    Some(ago) => format!(
                        "not found locally, nor on {remote} {} ago (--refresh asks again)",
                        crate::remote::misses::age(ago)
                    ),
                },
            ),
            Status::Failed => (
                CheckpointStatus::FetchFailed,
                format!(
                    "could not be fetched from {remote}: {}",
                    o.error.as_deref().unwrap_or("the fetch failed")
                ),
            ),
            Status::Present | Status::Fetched | Status::Diverged => continue,
        };
        missing.insert(id, why);
    }
    missing
}

fn commit_entry(c: &BlameCommit, checkpoints: Vec<String>) -> CommitEntry {
    CommitEntry {
        commit: c.sha.clone(),
        author: Identity {
            name: c.author.clone(),
            email: c.author_mail.clone(),
        },
        authored_at: crate::base::time::rfc3339_at(c.author_time, c.author_tz_minutes),
        subject: c.summary.clone(),
        filename: c.filename.clone(),
        checkpoints,
    }
}
