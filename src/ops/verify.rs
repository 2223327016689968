//! `verify [<range>]`, for CI: every checkpoint a commit of the range links can be fetched, and
//! (with `require`) no commit holds lines a session wrote without linking a checkpoint.
//!
//! A commit fails when one of its `Entire-Checkpoint` trailers (or links the rewrite map gives
//! it) names a checkpoint that neither a local copy nor the remote holds (fetched on demand, in
//! one batch, by [`stats::read_range`]), that exists but cannot be read, or whose fetch failed
//! (the remote unreachable: whether it holds it is unknown); or when a trailer's value is no
//! checkpoint ID. With `require`, a commit that links no checkpoint also fails when lines it
//! adds are, by the attribution of `blame`, written by a session of a checkpoint linked
//! elsewhere in the range: the agent wrote them, and the commit that carries them does not say
//! so (its hooks did not run, or the session was linked to a later commit). A commit that links
//! no checkpoint cannot be attributed otherwise: a transcript is only ever read through a link.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use crate::git::repo::Repo;
use crate::git::url::Remote;
use crate::model::trailers::{checkpoint_trailers, TrailerValue};
use crate::ops::blame::{CheckpointEntry, CheckpointStatus};
use crate::ops::range::RangeArgs;
use crate::ops::stats::{self, Attribute, StatsError};
use crate::topology::Topology;

/// Why a commit fails.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum Problem {
    /// The checkpoint is held neither here nor on the remote.
    NotFound {
        /// The checkpoint.
        checkpoint_id: String,
    },
    /// The fetch from the remote failed: whether it holds the checkpoint is unknown.
    FetchFailed {
        /// The checkpoint.
        checkpoint_id: String,
        /// Why.
        error: String,
    },
    /// The checkpoint exists but cannot be read.
    Unreadable {
        /// The checkpoint.
        checkpoint_id: String,
        /// Why.
        error: String,
    },
    /// An `Entire-Checkpoint` trailer whose value is no checkpoint ID.
    MalformedTrailer {
        /// The value.
        value: String,
    },
    /// (`--require`) The commit links no checkpoint, but a session of a checkpoint linked
    /// elsewhere in the range wrote lines it adds.
    Unlinked {
        /// How many of its added lines those sessions wrote.
        lines: usize,
        /// The checkpoints whose sessions wrote them.
        written_in: Vec<String>,
    },
}

/// A commit that fails, with why.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// Its full hash.
    pub commit: String,
    /// Its subject line.
    pub subject: String,
    /// What is wrong, one entry per checkpoint or trailer.
    pub problems: Vec<Problem>,
}

/// The result of `verify`.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// The range verified, as git was given it.
    pub range: String,
    /// How many commits it holds.
    pub commit_count: usize,
    /// How many of them link checkpoints.
    pub linked_commit_count: usize,
    /// Whether `--require` was checked.
    pub require: bool,
    /// Whether every commit passed (the command exits 0).
    pub ok: bool,
    /// The commits that fail, newest first.
    pub failures: Vec<Failure>,
    /// The checkpoints the range links, each once, as read.
    pub checkpoints: Vec<CheckpointEntry>,
    /// What the user should hear of (also on stderr).
    pub warnings: Vec<String>,
}

/// Verifies the commits of `range` in `cwd`, fetching the checkpoints no local copy holds
/// from `remote` in one batch (`None`: only what is here counts).
pub fn verify(
    repo: &Repo,
    topo: &Topology<'_>,
    cwd: &Path,
    range: &RangeArgs,
    require: bool,
    remote: Option<&Remote>,
    notice: impl Fn(&str) + Clone + 'static,
) -> Result<VerifyReport, StatsError> {
    // Whether the checkpoints exist needs no transcript; `require` asks what they wrote.
    let attribute = match require {
        true => Attribute::Everywhere,
        false => Attribute::Nothing,
    };
    let read = stats::read_range(repo, topo, cwd, range, remote, notice, attribute)?;
    let ev = &read.evidence;
    let mut failures = Vec::new();
    let mut linked_commit_count = 0;
    for rc in &read.commits {
        let c = &rc.commit;
        let mut problems = Vec::new();
        for t in &checkpoint_trailers(&c.message) {
            if let TrailerValue::Malformed(value) = t {
                problems.push(Problem::MalformedTrailer {
                    value: value.clone(),
                });
            }
        }
        if !rc.checkpoints.is_empty() {
            linked_commit_count += 1;
        }
        for &i in &rc.checkpoints {
            let entry = &ev.checkpoints[i];
            let checkpoint_id = entry.checkpoint_id.clone();
            let error = entry.error.clone().unwrap_or_default();
            problems.extend(match entry.status {
                CheckpointStatus::Read => None,
                CheckpointStatus::NotFound => Some(Problem::NotFound { checkpoint_id }),
                CheckpointStatus::FetchFailed => Some(Problem::FetchFailed {
                    checkpoint_id,
                    error,
                }),
                CheckpointStatus::Unreadable => Some(Problem::Unreadable {
                    checkpoint_id,
                    error,
                }),
            });
        }
        if !rc.written_elsewhere.is_empty() {
            let written_in: BTreeSet<usize> =
                rc.written_elsewhere.keys().map(|&(cp, _)| cp).collect();
            problems.push(Problem::Unlinked {
                lines: rc.written_elsewhere.values().sum(),
                written_in: written_in.iter().map(|&i| ev.id(i).to_string()).collect(),
            });
        }
        if !problems.is_empty() {
            failures.push(Failure {
                commit: c.sha.clone(),
                subject: c.subject.clone(),
                problems,
            });
        }
    }
    let commit_count = read.commits.len();
    let evidence = read.evidence;
    Ok(VerifyReport {
        range: read.range,
        commit_count,
        linked_commit_count,
        require,
        ok: failures.is_empty(),
        failures,
        checkpoints: evidence.checkpoints,
        warnings: evidence.warnings,
    })
}
