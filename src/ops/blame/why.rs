//! `why`: one line of a file, with the session that wrote it and the prompt before the write,
//! or the prompts of the sessions of its commit's checkpoints.

use serde::Serialize;

use crate::agents;
use crate::base::error::ExitStatus;
use crate::git::blame::{BlameError, LineRange};
use crate::git::repo::Repo;
use crate::git::url::Remote;
use crate::topology::Topology;

use super::{
    attribute, start, Attributed, BlameTarget, CheckpointEntry, CommitEntry, LineEntry,
    StartedBlame, WriteRef,
};

/// A `git blame` of one line started by [`start_why`], for [`why`].
pub struct StartedWhy {
    blame: StartedBlame,
    line: usize,
}

/// Starts blaming line `line` of `target` (whose range is ignored) for [`why`].
pub fn start_why(target: &BlameTarget<'_>, line: usize) -> Result<StartedWhy, BlameError> {
    let target = BlameTarget {
        range: Some(LineRange::single(line)),
        ..target.clone()
    };
    Ok(StartedWhy {
        blame: start(&target)?,
        line,
    })
}

/// Why `why` cannot answer.
#[derive(Debug, thiserror::Error)]
pub enum WhyError {
    /// Blaming the file failed.
    #[error(transparent)]
    Blame(#[from] BlameError),
    /// The target is not `FILE:LINE` (or the `-L` value not a line number).
    #[error("{0}")]
    BadTarget(String),
    /// The line is past the end of the file.
    #[error("{path}: line {line} is out of range (the file has {lines} lines)")]
    OutOfRange {
        /// The file.
        path: String,
        /// The line asked for.
        line: usize,
        /// How many lines the file has.
        lines: usize,
    },
}

impl ExitStatus for WhyError {
    fn exit_code(&self) -> i32 {
        match self {
            WhyError::Blame(e) => e.exit_code(),
            WhyError::BadTarget(_) | WhyError::OutOfRange { .. } => crate::base::error::USAGE,
        }
    }
}

/// A prompt as `why` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PromptEntry {
    /// What the user typed.
    pub text: String,
    /// When, as the transcript records it (`null` in JSON when unknown).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub timestamp: String,
    /// The entry's line in the transcript (1-based).
    pub transcript_line: usize,
}

/// The session that wrote the line, and the prompt before the write.
#[derive(Debug, Clone, Serialize)]
pub struct WhyWrite {
    /// The write.
    #[serde(flatten)]
    pub write: WriteRef,
    /// The agent, from the session's metadata (`null` in JSON when it names none).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub agent: String,
    /// The model, from the session's metadata (`null` in JSON when it names none).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub model: String,
    /// The user turn before the write (`None` when the transcript has none before it).
    pub prompt: Option<PromptEntry>,
}

/// The prompts of a session of a linked checkpoint (for lines no write shows).
#[derive(Debug, Clone, Serialize)]
pub struct SessionPrompts {
    /// The checkpoint.
    pub checkpoint_id: String,
    /// The session's slot.
    pub session_index: usize,
    /// The session ID.
    pub session_id: String,
    /// The agent (`null` in JSON when it names none).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub agent: String,
    /// The model (`null` in JSON when it names none).
    #[serde(serialize_with = "crate::base::json::empty_as_null")]
    pub model: String,
    /// Its prompts, in order (empty when its transcript could not be read).
    pub prompts: Vec<PromptEntry>,
}

/// The result of `why`.
#[derive(Debug, Clone, Serialize)]
pub struct WhyReport {
    /// The file as named.
    pub file: String,
    /// The revision (`None`: the working tree).
    pub rev: Option<String>,
    /// The line, as `blame` labels it.
    #[serde(flatten)]
    pub line: LineEntry,
    /// The commit.
    pub commit_info: CommitEntry,
    /// For `agent` lines: the session and the prompt that led to the write.
    pub agent_write: Option<WhyWrite>,
    /// For other lines with checkpoints: every session's prompts.
    pub sessions: Vec<SessionPrompts>,
    /// The linked checkpoints as `blame` read them (`checkpoints` is the line's list of IDs).
    pub checkpoints_read: Vec<CheckpointEntry>,
    /// As for [`BlameReport::warnings`].
    pub warnings: Vec<String>,
    /// As for [`BlameReport::damaged`].
    #[serde(skip)]
    pub damaged: bool,
}

/// The file and line `why` is asked about: `target` is `FILE:LINE`, or `FILE` when `line`
/// (`-L`) is given; lines count from 1.
pub fn why_target(target: &str, line: Option<&str>) -> Result<(String, usize), WhyError> {
    let (path, line) = match line {
        Some(l) => (target, l),
        None => target.rsplit_once(':').ok_or_else(|| {
            WhyError::BadTarget(format!("{target}: expected FILE:LINE, or FILE -L LINE"))
        })?,
    };
    let n = line
        .parse::<usize>()
        .ok()
        .filter(|&n| n > 0 && !path.is_empty())
        .ok_or_else(|| {
            WhyError::BadTarget(format!("{target}: {line:?} is not a line number (from 1)"))
        })?;
    Ok((path.to_owned(), n))
}

/// `why`: the line of the blame `started`, with the write and the prompt behind it; `remote`
/// as for [`blame`].
pub fn why(
    repo: &Repo,
    topo: &Topology<'_>,
    started: StartedWhy,
    remote: Option<&Remote>,
    notice: impl Fn(&str) + Clone + 'static,
) -> Result<WhyReport, WhyError> {
    let StartedWhy { blame, line } = started;
    let path = blame.0.path().to_owned();
    let out_of_range = |lines| WhyError::OutOfRange {
        path: path.clone(),
        line,
        lines,
    };
    let a = match attribute(repo, topo, blame, remote, notice) {
        Ok(a) => a,
        Err(BlameError::Rejected { message, .. }) if message.contains("has only") => {
            // git: "file <path> has only <n> lines".
            let lines = message
                .rsplit_once("has only ")
                .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
                .unwrap_or(0);
            return Err(out_of_range(lines));
        }
        Err(e) => return Err(e.into()),
    };
    let Attributed {
        report, evidence, ..
    } = a;
    let loaded = evidence.loaded;
    let Some(entry) = report.lines.into_iter().next() else {
        return Err(out_of_range(0));
    };
    let commit_info = report
        .commits
        .into_iter()
        .next()
        .expect("a blamed line has its commit");
    let cp_index = |id: &str| {
        report
            .checkpoints
            .iter()
            .position(|c| c.checkpoint_id == id)
    };
    let agent_write = entry.write.as_ref().and_then(|w| {
        let l = &loaded[cp_index(&w.checkpoint_id)?];
        let meta = &l.cp.as_ref()?.sessions[w.session_index];
        let writes = l.sessions[w.session_index].as_ref()?;
        Some(WhyWrite {
            write: w.clone(),
            agent: meta.agent.clone(),
            model: meta.model.clone(),
            prompt: w.prompt.map(|p| prompt_entry(&writes.prompts[p])),
        })
    });
    let mut sessions = Vec::new();
    if agent_write.is_none() {
        for (c, l) in report.checkpoints.iter().zip(&loaded) {
            let Some(cp) = &l.cp else { continue };
            for (slot, meta) in cp.sessions.iter().enumerate() {
                let prompts = l.sessions[slot]
                    .as_ref()
                    .map(|w| w.prompts.iter().map(prompt_entry).collect())
                    .unwrap_or_default();
                sessions.push(SessionPrompts {
                    checkpoint_id: c.checkpoint_id.clone(),
                    session_index: slot,
                    session_id: meta.session_id.clone(),
                    agent: meta.agent.clone(),
                    model: meta.model.clone(),
                    prompts,
                });
            }
        }
    }
    Ok(WhyReport {
        file: report.file,
        rev: report.rev,
        line: entry,
        commit_info,
        agent_write,
        sessions,
        checkpoints_read: report.checkpoints,
        warnings: report.warnings,
        damaged: report.damaged,
    })
}

fn prompt_entry(p: &agents::Prompt) -> PromptEntry {
    PromptEntry {
        text: p.text.clone(),
        timestamp: p.timestamp.clone(),
        transcript_line: p.entry,
    }
}
