//! The commit hooks: `prepare-commit-msg` links a commit to a new checkpoint with an
//! `Entire-Checkpoint:` trailer, and `post-commit` condenses this worktree's staged sessions
//! into it. Neither ever fails the commit; the binary turns their errors into warnings. While a
//! settings file does not parse, neither writes anything: the commit is not linked and the staged
//! sessions stay staged until the file is fixed (a later commit condenses them).

use std::path::Path;
use std::time::Duration;

use crate::git::Git;
use crate::id::CheckpointId;
use crate::model::DEFAULT_STRATEGY;
use crate::repo::Repo;
use crate::session::{SessionError, SessionStore};
use crate::session_id::SessionId;
use crate::settings::{SettingsError, SettingsFiles};
use crate::store::SessionWrite;
use crate::topology::{Topology, TopologyError};
use crate::trailers::{checkpoint_trailers, TrailerValue, CHECKPOINT_TRAILER};

/// Errors of the commit hooks (reported as warnings).
#[derive(Debug, thiserror::Error)]
pub enum CommitHookError {
    /// The commit message file could not be read or written.
    #[error("commit message {path}")]
    Message {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// `git interpret-trailers` failed.
    #[error("add the Entire-Checkpoint trailer: {0}")]
    Trailer(String),
    /// The staged sessions could not be read.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The new commit could not be read.
    #[error("read the new commit: {0}")]
    Commit(String),
    /// A settings file does not parse, so the commit is not linked to a checkpoint.
    #[error("not linking this commit to a checkpoint (the staged sessions stay staged)")]
    NotLinked(#[source] SettingsError),
    /// A settings file does not parse, so nothing is condensed.
    #[error("not condensing the staged sessions (they stay staged)")]
    NotCondensed(#[source] TopologyError),
}

/// What `prepare-commit-msg` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prepared {
    /// Added `Entire-Checkpoint: <id>`.
    Added(CheckpointId),
    /// The message already links a checkpoint; kept as it is.
    Kept,
    /// Nothing to link (no staged activity here, or a merge).
    Nothing,
}

/// `prepare-commit-msg <file> [<source> [<sha>]]`.
pub fn prepare_commit_msg(
    repo: &Repo,
    msg_file: &Path,
    source: Option<&str>,
) -> Result<Prepared, CommitHookError> {
    // A merge records other people's commits; their checkpoints are linked by their own trailers.
    if source == Some("merge") {
        return Ok(Prepared::Nothing);
    }
    let text = std::fs::read_to_string(msg_file).map_err(|source| CommitHookError::Message {
        path: msg_file.display().to_string(),
        source,
    })?;
    if checkpoint_trailers(&text)
        .iter()
        .any(|t| matches!(t, TrailerValue::Valid(_)))
    {
        return Ok(Prepared::Kept);
    }
    if SessionStore::new(repo).pending_here()?.is_empty() {
        return Ok(Prepared::Nothing);
    }
    // A trailer now would link a checkpoint that post-commit then refuses to write.
    SettingsFiles::read(repo.workdir())
        .refuse_writes()
        .map_err(CommitHookError::NotLinked)?;
    let id = crate::topology::mint_checkpoint_id(repo);
    let cwd = repo.workdir().unwrap_or(repo.git_dir());
    let out = Git::new(cwd)
        .args([
            "interpret-trailers",
            "--in-place",
            "--if-exists",
            "doNothing",
            "--trailer",
        ])
        .args([format!("{CHECKPOINT_TRAILER}: {id}")])
        .args([msg_file.as_os_str()])
        .run(Duration::from_secs(30))
        .map_err(|e| CommitHookError::Trailer(e.to_string()))?;
    if !out.success() {
        return Err(CommitHookError::Trailer(out.stderr.trim().to_owned()));
    }
    Ok(Prepared::Added(id))
}

/// What `post-commit` did for each session.
#[derive(Debug, Default)]
pub struct Condensed {
    /// The checkpoint written, if the commit links one.
    pub checkpoint: Option<CheckpointId>,
    /// Sessions condensed into it.
    pub sessions: Vec<String>,
    /// Sessions that failed: `(session, error)`. They stay staged for the next commit.
    pub failed: Vec<(String, String)>,
    /// Malformed trailer values on the commit (ignored).
    pub malformed: Vec<String>,
    /// Mirror failures and queue warnings of the writes.
    pub warnings: Vec<String>,
}

fn changed_files(repo: &Repo) -> Result<(String, String, Vec<String>), String> {
    let git = &repo.git;
    let head = git
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| e.message().to_owned())?;
    let tree = head.tree().map_err(|e| e.message().to_owned())?;
    let parent_tree = head.parents().next().and_then(|p| p.tree().ok());
    let diff = git
        .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), None)
        .map_err(|e| e.message().to_owned())?;
    let mut files = Vec::new();
    for d in diff.deltas() {
        for f in [d.new_file().path(), d.old_file().path()]
            .into_iter()
            .flatten()
        {
            let p = f.to_string_lossy().replace('\\', "/");
            if !files.contains(&p) {
                files.push(p);
            }
        }
    }
    let message = String::from_utf8_lossy(head.message_bytes()).into_owned();
    Ok((head.id().to_string(), message, files))
}

/// `post-commit`: condenses every staged session of this worktree with new activity into the
/// checkpoint the new commit's trailer names.
pub fn post_commit(repo: &Repo, topo: &Topology<'_>) -> Result<Condensed, CommitHookError> {
    let (sha, message, commit_files) = changed_files(repo).map_err(CommitHookError::Commit)?;
    let mut report = Condensed::default();
    let mut ids = Vec::new();
    for t in checkpoint_trailers(&message) {
        match t {
            TrailerValue::Valid(id) => ids.push(id),
            TrailerValue::Malformed(tok) => report.malformed.push(tok),
        }
    }
    let Some(id) = ids.into_iter().next() else {
        return Ok(report);
    };
    report.checkpoint = Some(id.clone());
    let store = SessionStore::new(repo);
    let pending = store.pending_here()?;
    if !pending.is_empty() {
        topo.check_writable()
            .map_err(CommitHookError::NotCondensed)?;
    }
    let subject = message.lines().next().unwrap_or("").trim().to_owned();
    let branch = repo.current_branch().unwrap_or_default();
    for state in pending {
        let Ok(sid) = SessionId::parse(&state.session_id) else {
            continue;
        };
        let result = store.condense(
            &sid,
            id.as_str(),
            |st, transcript| -> Result<usize, TopologyError> {
                let (prompt_start, line_start) = st.window_for(id.as_str());
                let files = if st.files_touched.is_empty() {
                    commit_files.clone()
                } else {
                    commit_files
                        .iter()
                        .filter(|f| st.files_touched.contains(f))
                        .cloned()
                        .collect()
                };
                let prompts: Vec<String> =
                    st.prompts.get(prompt_start..).unwrap_or_default().to_vec();
                let lines = transcript
                    .map(|t| t.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count())
                    .unwrap_or(0);
                let w = SessionWrite {
                    checkpoint_id: id.clone(),
                    session_id: sid.clone(),
                    strategy: DEFAULT_STRATEGY.to_owned(),
                    branch: branch.clone(),
                    commit_sha: sha.clone(),
                    created_at: crate::timefmt::now_rfc3339_nano(),
                    transcript: transcript.map(<[u8]>::to_vec),
                    checkpoints_count: prompts.len().max(1) as i64,
                    prompts,
                    files_touched: files,
                    agent: st.agent.clone(),
                    model: st.model.clone(),
                    token_usage: st.token_usage.clone(),
                    checkpoint_transcript_start: line_start as i64,
                    commit_subject: (!subject.is_empty()).then(|| subject.clone()),
                    author: None,
                    redactions: st.redactions,
                };
                let written = topo.write_session(&w)?;
                report.warnings.extend(written.warnings());
                Ok(lines)
            },
        )?;
        match result {
            Ok(()) => report.sessions.push(sid.to_string()),
            Err(e) => report
                .failed
                .push((sid.to_string(), crate::exit::error_chain(&e))),
        }
    }
    Ok(report)
}
