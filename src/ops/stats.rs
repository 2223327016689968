//! `stats [<range>]`: how many of the lines a range of commits adds an agent wrote, by the
//! attribution `blame` uses ([`Evidence`]: the transcripts' own file-writing tool calls), per
//! commit and in total, and grouped by file, author or agent.
//!
//! The lines are git's (`git log -p`, counted as `--numstat` counts them: [`patch`]); each line a
//! commit adds is asked of the checkpoints that commit links. The range's commits and their
//! added lines, attributed, are also what `verify` checks ([`read_range`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::base::error::error_chain;
use crate::base::error::{ExitStatus, FAILURE, USAGE};
use crate::git::patch::{self, PatchCommit, PatchError};
use crate::git::repo::{Identity, Repo};
use crate::git::subprocess::GitError;
use crate::git::url::Remote;
use crate::ops::blame::{history_ends, CheckpointEntry, Evidence, Links};
use crate::ops::range::{RangeArgs, RangeError};
use crate::ops::rewrites::{self, RewriteMap};
use crate::ops::writes_cache::LinesOf;
use crate::topology::Topology;

/// How long the `git log -p` of a range may take.
const LOG_BUDGET: Duration = Duration::from_secs(600);

/// Why a range could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// The range's words are not a range `list` would take.
    #[error(transparent)]
    Range(#[from] RangeError),
    /// git refused the range.
    #[error("not a revision range of this repository: {0}")]
    Rejected(String),
    /// No range was named, and there is nothing to compare HEAD with.
    #[error("no range given, and HEAD has no upstream and there is no default branch (origin/HEAD, main, master) to compare it with: name a range, as `main..HEAD`")]
    NoBase,
    /// git could not be run.
    #[error(transparent)]
    Git(#[from] GitError),
}

impl From<PatchError> for StatsError {
    fn from(e: PatchError) -> StatsError {
        match e {
            PatchError::Git(e) => StatsError::Git(e),
            PatchError::Rejected(message) => StatsError::Rejected(message),
        }
    }
}

impl ExitStatus for StatsError {
    fn exit_code(&self) -> i32 {
        match self {
            StatsError::Range(e) => e.exit_code(),
            StatsError::Rejected(_) | StatsError::NoBase => USAGE,
            StatsError::Git(_) => FAILURE,
        }
    }
}

/// Lines of a commit, a file, an author or a writer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Lines {
    /// Lines added (git's count).
    pub added: usize,
    /// Lines removed (git's count).
    pub removed: usize,
    /// Of the added lines, those a transcript shows an agent writing (`agent` in blame).
    pub agent_written: usize,
    /// Of the added lines, those of commits that link checkpoints whose transcripts do not show
    /// them written: people's, or an agent's that no transcript read shows (`commit-linked`).
    pub commit_linked: usize,
    /// Of the added lines, those of commits that link no checkpoint (`human`).
    pub human: usize,
    /// `agent_written / added` (0 when nothing was added).
    pub ai_share: f64,
}

impl Lines {
    fn add(&mut self, other: &Lines) {
        self.added += other.added;
        self.removed += other.removed;
        self.agent_written += other.agent_written;
        self.commit_linked += other.commit_linked;
        self.human += other.human;
        self.ai_share = share(self.agent_written, self.added);
    }
}

/// `part / whole`, rounded to four places; 0 for an empty whole.
fn share(part: usize, whole: usize) -> f64 {
    match whole {
        0 => 0.0,
        w => (part as f64 / w as f64 * 10_000.0).round() / 10_000.0,
    }
}

/// The lines one agent (and model) wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentLines {
    /// The agent its session's metadata names (`null` in JSON when none).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub agent: String,
    /// The model (`null` in JSON when none).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub model: String,
    /// The added lines attributed to it.
    pub lines: usize,
}

/// One commit of the range.
#[derive(Debug, Clone, Serialize)]
pub struct CommitStats {
    /// Its full hash.
    pub commit: String,
    /// The author.
    pub author: Identity,
    /// The author time, RFC 3339.
    pub authored_at: String,
    /// The subject line.
    pub subject: String,
    /// The checkpoints it links (trailers, then the rewrite map).
    pub checkpoints: Vec<String>,
    /// Whether it is a merge (git shows no diff for it: no lines).
    pub merge: bool,
    /// Its lines.
    #[serde(flatten)]
    pub lines: Lines,
    /// Its agent lines per agent and model.
    pub agents: Vec<AgentLines>,
}

/// How `--by` groups the lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupBy {
    /// Per file (its path in the commit).
    File,
    /// Per commit author (`Name <email>`).
    Author,
    /// Per writer: each agent and model, then `people` (the lines no transcript shows an agent
    /// writing; removed lines belong to no writer and are not counted here).
    Agent,
}

/// One group of `--by`.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// The file, author or writer.
    pub key: String,
    /// Its lines.
    #[serde(flatten)]
    pub lines: Lines,
}

/// The result of `stats`.
#[derive(Debug, Clone, Serialize)]
pub struct StatsReport {
    /// The range measured, as git was given it.
    pub range: String,
    /// Its commits, newest first.
    pub commits: Vec<CommitStats>,
    /// All of them.
    pub total: Lines,
    /// The agent lines of all of them per agent and model, most first.
    pub agents: Vec<AgentLines>,
    /// The grouping asked for, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<GroupBy>,
    /// Its groups, most added lines first (empty without `by`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<Group>>,
    /// The checkpoints the commits link, each once, as read.
    pub checkpoints: Vec<CheckpointEntry>,
    /// What the user should hear of (also on stderr).
    pub warnings: Vec<String>,
    /// Whether the attribution is incomplete for a reason that is a failure (a checkpoint or
    /// transcript that exists but cannot be read, a failed fetch): the command fails after its
    /// output.
    #[serde(skip)]
    pub damaged: bool,
}

/// A range's commits, each added line attributed: what `stats` and `verify` read.
pub struct ReadRange {
    /// The range, as git was given it.
    pub range: String,
    /// The commits, newest first.
    pub commits: Vec<ReadCommit>,
    /// The checkpoints they link, read.
    pub evidence: Evidence,
}

/// One commit of a [`ReadRange`].
pub struct ReadCommit {
    /// The commit as git gave it (the added lines' text dropped once attributed).
    pub commit: PatchCommit,
    /// The checkpoints it links, indices of the evidence.
    pub checkpoints: Vec<usize>,
    /// Per file (as in `commit.files`): added lines per writing session `(checkpoint,
    /// session)`, those the session wrote.
    pub written: Vec<BTreeMap<(usize, usize), usize>>,
    /// For a commit that links no checkpoint, when asked: its added lines that a session of
    /// a checkpoint linked elsewhere in the range wrote into the same file, per session.
    pub written_elsewhere: BTreeMap<(usize, usize), usize>,
}

/// The range `words` names, or without words the default: HEAD's commits not on its upstream,
/// else not on the default branch (said through `notice`); [`StatsError::NoBase`] when neither
/// exists.
pub fn range_args(
    cwd: &Path,
    words: &[String],
    notice: &dyn Fn(&str),
) -> Result<RangeArgs, StatsError> {
    if !words.is_empty() {
        return Ok(RangeArgs::parse(words)?);
    }
    let base = match patch::upstream(cwd)? {
        Some(upstream) => upstream,
        None => {
            let Some(default) = patch::default_branch(cwd)? else {
                return Err(StatsError::NoBase);
            };
            notice(&format!(
                "HEAD has no upstream: reading its commits not on {default} (name a range to read others)"
            ));
            default
        }
    };
    Ok(RangeArgs::parse(&[format!("{base}..HEAD")])?)
}

/// Which lines [`read_range`] attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attribute {
    /// None: only the checkpoints are read, no transcript.
    Nothing,
    /// Each commit's added lines, asked of the checkpoints it links.
    Linked,
    /// Those, and the added lines of a commit that links no checkpoint, asked of every
    /// checkpoint the range links ([`ReadCommit::written_elsewhere`]).
    Everywhere,
}

/// Reads the commits of `range` in `cwd` and attributes the lines they add as `attribute`
/// says; the checkpoints they link that no local copy holds are fetched from `remote` first,
/// in one batch.
pub fn read_range(
    repo: &Repo,
    topo: &Topology<'_>,
    cwd: &Path,
    range: &RangeArgs,
    remote: Option<&Remote>,
    notice: impl Fn(&str) + Clone + 'static,
    attribute: Attribute,
) -> Result<ReadRange, StatsError> {
    let (options, revisions) = range.parts();
    let described = revisions.join(" ");
    let commits = patch::log_patches(cwd, options, revisions, LOG_BUDGET)?;
    let mut warnings = Vec::new();
    let map = RewriteMap::load(repo)
        .map_err(|e| warnings.push(error_chain(&e)))
        .ok();
    // A shallow clone's boundary commit has no parent here: git shows it adding every line of
    // its tree, which is said, so that its count is not taken for its own change.
    warnings.extend(history_ends(
        repo,
        commits.iter().map(|c| c.sha.as_str()),
        "its lines count as all of its tree",
    ));
    let mut links = Links::default();
    let linked: Vec<Vec<usize>> = commits
        .iter()
        .map(|c| {
            let inherited = map.as_ref().and_then(|m| m.get(&c.sha));
            links.add(rewrites::links(&c.message, inherited))
        })
        .collect();
    let every = links.all();
    let transcripts = attribute != Attribute::Nothing;
    let mut evidence = Evidence::load(
        repo,
        topo,
        links,
        remote,
        notice,
        warnings,
        transcripts.then_some(LinesOf::All),
    );
    let mut read = Vec::with_capacity(commits.len());
    for (mut commit, checkpoints) in commits.into_iter().zip(linked) {
        let mut written = Vec::with_capacity(commit.files.len());
        let mut written_elsewhere = BTreeMap::new();
        for file in &mut commit.files {
            let mut by_session = BTreeMap::new();
            for text in std::mem::take(&mut file.added_lines) {
                if !transcripts {
                    continue;
                }
                if !checkpoints.is_empty() {
                    if let Some(w) = evidence.writer(&checkpoints, &file.path, &text) {
                        *by_session
                            .entry((w.checkpoint, w.write.session_index))
                            .or_default() += 1;
                    }
                } else if attribute == Attribute::Everywhere {
                    if let Some(w) = evidence.writer(&every, &file.path, &text) {
                        *written_elsewhere
                            .entry((w.checkpoint, w.write.session_index))
                            .or_default() += 1;
                    }
                }
            }
            written.push(by_session);
        }
        read.push(ReadCommit {
            commit,
            checkpoints,
            written,
            written_elsewhere,
        });
    }
    Ok(ReadRange {
        range: described,
        commits: read,
        evidence,
    })
}

/// `stats`: the lines of the commits of `range`, attributed, grouped `by`.
pub fn stats(
    repo: &Repo,
    topo: &Topology<'_>,
    cwd: &Path,
    range: &RangeArgs,
    by: Option<GroupBy>,
    remote: Option<&Remote>,
    notice: impl Fn(&str) + Clone + 'static,
) -> Result<StatsReport, StatsError> {
    let read = read_range(repo, topo, cwd, range, remote, notice, Attribute::Linked)?;
    let ev = &read.evidence;
    let writer = |(c, s): (usize, usize)| {
        let session = ev.session(c, s);
        (session.agent.clone(), session.model.clone())
    };
    let mut total = Lines::default();
    let mut agents: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut groups: BTreeMap<String, Lines> = BTreeMap::new();
    let mut commits = Vec::with_capacity(read.commits.len());
    for rc in &read.commits {
        let c = &rc.commit;
        let mut lines = Lines::default();
        let mut mine: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (file, written) in c.files.iter().zip(&rc.written) {
            let agent_written: usize = written.values().sum();
            let rest = file.added - agent_written;
            let f = Lines {
                added: file.added,
                removed: file.removed,
                agent_written,
                commit_linked: if rc.checkpoints.is_empty() { 0 } else { rest },
                human: if rc.checkpoints.is_empty() { rest } else { 0 },
                ai_share: share(agent_written, file.added),
            };
            lines.add(&f);
            for (&session, &n) in written {
                *mine.entry(writer(session)).or_default() += n;
            }
            match by {
                Some(GroupBy::File) => groups.entry(file.path.clone()).or_default().add(&f),
                Some(GroupBy::Author) => groups
                    .entry(format!("{} <{}>", c.author.name, c.author.email))
                    .or_default()
                    .add(&f),
                Some(GroupBy::Agent) => {
                    let people = Lines {
                        added: rest,
                        commit_linked: f.commit_linked,
                        human: f.human,
                        ..Lines::default()
                    };
                    groups.entry(PEOPLE.to_owned()).or_default().add(&people);
                    for (&session, &n) in written {
                        let (agent, model) = writer(session);
                        let wrote = Lines {
                            added: n,
                            agent_written: n,
                            ..Lines::default()
                        };
                        groups
                            .entry(writer_key(&agent, &model))
                            .or_default()
                            .add(&wrote);
                    }
                }
                None => {}
            }
        }
        total.add(&lines);
        for (k, n) in &mine {
            *agents.entry(k.clone()).or_default() += n;
        }
        commits.push(CommitStats {
            commit: c.sha.clone(),
            author: c.author.clone(),
            authored_at: c.authored_at.clone(),
            subject: c.subject.clone(),
            checkpoints: rc
                .checkpoints
                .iter()
                .map(|&i| ev.id(i).to_string())
                .collect(),
            merge: c.parents > 1,
            lines,
            agents: agent_lines(mine),
        });
    }
    let groups = by.map(|_| {
        let mut groups: Vec<Group> = groups
            .into_iter()
            .filter(|(_, lines)| lines.added + lines.removed > 0)
            .map(|(key, lines)| Group { key, lines })
            .collect();
        groups.sort_by_key(|g| std::cmp::Reverse(g.lines.added));
        groups
    });
    let ReadRange {
        range, evidence, ..
    } = read;
    Ok(StatsReport {
        range,
        commits,
        total,
        agents: agent_lines(agents),
        by,
        groups,
        checkpoints: evidence.checkpoints,
        warnings: evidence.warnings,
        damaged: evidence.damaged,
    })
}

/// The key of `--by agent`'s group of the lines no transcript shows an agent writing.
pub const PEOPLE: &str = "people";

/// The key of `--by agent`'s group of one agent and model.
fn writer_key(agent: &str, model: &str) -> String {
    let agent = match agent {
        "" => "(unknown agent)",
        a => a,
    };
    match model {
        "" => agent.to_owned(),
        m => format!("{agent} ({m})"),
    }
}

/// The counts per agent and model, most first.
fn agent_lines(counts: BTreeMap<(String, String), usize>) -> Vec<AgentLines> {
    let mut out: Vec<AgentLines> = counts
        .into_iter()
        .map(|((agent, model), lines)| AgentLines {
            agent,
            model,
            lines,
        })
        .collect();
    out.sort_by_key(|a| std::cmp::Reverse(a.lines));
    out
}
