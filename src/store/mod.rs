//! The checkpoint stores and the contract they share.
//!
//! Two git-backed stores keep the committed record in the repository's object store:
//! [`refs::GitRefsStore`] (one ref per checkpoint) and [`branch::GitBranchStore`] (the legacy
//! `entire/checkpoints/v1` branch). Both build the checkpoint subtree with the same code
//! (`crate::store::tree`) and differ only in where that subtree is committed.

pub mod archive;
pub mod author_memo;
pub mod branch;
pub mod content;
pub mod fs;
pub mod link_index;
pub(crate) mod merge;
pub mod on_demand;
pub(crate) mod publish;
pub mod queue;
pub mod refs;
pub mod registry;
pub mod summary;
#[cfg(test)]
mod tests;
pub(crate) mod tree;

use std::fmt;

use serde_json::Value;

use crate::base::error::ExitStatus;
use crate::base::id::CheckpointId;
use crate::base::session_id::SessionId;
use crate::git::objects::{Commit, Tree};
use crate::git::repo::{Identity, LibGitError, Repo, RepoError};
use crate::model::documents::{CheckpointSummary, ModelError, SessionMetadata, TokenUsage};
use crate::model::transcript::TranscriptError;
use crate::store::publish::Located;
use crate::store::tree::{Change, SlotTarget};

/// The backend types. The names are the `type` values of the settings block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StoreKind {
    /// One ref per checkpoint under `refs/entire/checkpoints/`.
    GitRefs,
    /// The legacy `entire/checkpoints/v1` branch.
    GitBranch,
}

impl StoreKind {
    /// The settings/JSON name.
    pub fn name(self) -> &'static str {
        match self {
            StoreKind::GitRefs => "git-refs",
            StoreKind::GitBranch => "git-branch",
        }
    }

    /// The ID format this store mints when it is the primary.
    pub fn id_kind(self) -> crate::base::id::IdKind {
        match self {
            StoreKind::GitRefs => crate::base::id::IdKind::Ulid,
            StoreKind::GitBranch => crate::base::id::IdKind::Hex,
        }
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors of the stores.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The checkpoint does not exist in this store.
    #[error("no checkpoint matches \"{id}\": this store does not hold it")]
    NotFound {
        /// The ID looked up.
        id: CheckpointId,
    },
    /// No store routing consults has the checkpoint, locally or on the remote.
    #[error("no checkpoint matches \"{id}\": looked in {places}")]
    NotFoundAnywhere {
        /// The ID looked up.
        id: CheckpointId,
        /// Every place looked at, for the message.
        places: String,
    },
    /// The checkpoint exists but has no such session.
    #[error("checkpoint {id} has no session matching {session:?}")]
    SessionNotFound {
        /// The checkpoint.
        id: CheckpointId,
        /// The slot number or session ID asked for.
        session: String,
    },
    /// The checkpoint exists but has no such file.
    #[error("checkpoint {id}: no file {path}")]
    FileNotFound {
        /// The checkpoint.
        id: CheckpointId,
        /// The path asked for.
        path: String,
    },
    /// A document of an existing checkpoint cannot be decoded. Reads report it; writes refuse
    /// rather than silently dropping the sessions it lists.
    #[error("checkpoint {id}: {path} is corrupt")]
    Corrupt {
        /// The checkpoint.
        id: CheckpointId,
        /// The path of the document inside the checkpoint.
        path: String,
        /// The decode error.
        #[source]
        source: ModelError,
    },
    /// The summary lists a session whose metadata is missing.
    #[error("checkpoint {id}: session {slot} is listed in metadata.json but {dir}/metadata.json is missing")]
    MissingSession {
        /// The checkpoint.
        id: CheckpointId,
        /// The entry's index in `sessions[]`.
        slot: usize,
        /// The directory the entry names.
        dir: String,
    },
    /// A blob of the checkpoint is absent from the object store (a partial clone, a pruned
    /// copy); the other files and checkpoints stay readable.
    #[error("checkpoint {id}: {path} is absent from the object store (blob {oid} is missing, as in a partial clone)")]
    AbsentBlob {
        /// The checkpoint.
        id: CheckpointId,
        /// The file inside the checkpoint.
        path: String,
        /// The missing blob.
        oid: String,
    },
    /// A file stored in chunks lacks one from the middle of its sequence.
    #[error("checkpoint {id}: {path} is missing its chunk {missing}: the chunks after it cannot be joined")]
    ChunkGap {
        /// The checkpoint.
        id: CheckpointId,
        /// The file asked for.
        path: String,
        /// The chunk missing.
        missing: String,
    },
    /// A checkpoints-v2 generation ref that might hold the file is not a commit, and no other
    /// generation holds it.
    #[error(
        "checkpoint {id}: {path} is not in a readable v2 generation ({reference} is not a commit)"
    )]
    Generation {
        /// The checkpoint.
        id: CheckpointId,
        /// The file asked for.
        path: String,
        /// The generation ref that could not be read.
        reference: String,
    },
    /// A `sessions[]` entry of the root `metadata.json` names an unusable path.
    #[error("checkpoint {id}: metadata.json sessions[{entry}] path {path:?} {reason}")]
    BadSessionPath {
        /// The checkpoint.
        id: CheckpointId,
        /// The entry's index.
        entry: usize,
        /// The entry's `metadata` path.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A checkpoint exceeds one of the caps on what a read may cost
    /// ([`crate::config::settings::Limits`]): never read whole, never an abort.
    #[error("checkpoint {id}: {what} is {size} {unit}, more than the limit of {max} ({setting} in .entire/settings.local.json raises it)")]
    OverLimit {
        /// The checkpoint.
        id: CheckpointId,
        /// What is too large (`metadata.json sessions[]`, a path, a tree).
        what: String,
        /// Its size.
        size: u64,
        /// The unit of `size` and `max` (`sessions`, `entries`, `bytes`).
        unit: &'static str,
        /// The limit.
        max: u64,
        /// The setting that raises it.
        setting: &'static str,
    },
    /// A write of one session would overwrite slot 0 that belongs to another session.
    #[error("refusing to overwrite session 0 of checkpoint {id}: existing session ID {existing:?} differs from write session ID {incoming:?}; please report this with the output of `git ls-tree -r {tree}`")]
    SlotConflict {
        /// The checkpoint.
        id: CheckpointId,
        /// The session ID found in slot 0.
        existing: String,
        /// The session ID being written.
        incoming: String,
        /// The tree to report.
        tree: String,
    },
    /// Compare-and-swap publication kept losing races.
    #[error("failed to update ref {ref_name} after {attempts} attempts: expected {expected}, found {actual}")]
    CasExhausted {
        /// The ref.
        ref_name: String,
        /// How many attempts were made.
        attempts: usize,
        /// The tip the last attempt built on.
        expected: String,
        /// The tip found instead.
        actual: String,
    },
    /// A checkpoint ref whose tip is no commit (a blob, tree or tag put there by hand or by
    /// another tool): worded as `doctor` words it.
    #[error("{ref_name}: {why}")]
    NotACommit {
        /// The ref.
        ref_name: String,
        /// What its tip is ([`refs::not_a_commit`]).
        why: String,
    },
    /// A commit just written is not in the object database: its write failed without saying so
    /// (seen on a full disk). Nothing was published: no ref may point at a missing object.
    #[error("{ref_name}: not updated: the commit {oid} just written for it is not in the object database (is the disk full, or the objects directory not writable?)")]
    ObjectNotStored {
        /// The ref that was to move.
        ref_name: String,
        /// The commit that was written.
        oid: String,
    },
    /// A ULID checkpoint would land on the v1 branch as the primary, where readers never look.
    #[error("refusing to write ULID checkpoint {id} to the git-branch store: ULIDs belong in git-refs (git-branch is the primary, so readers would never find it)")]
    UlidOnBranch {
        /// The checkpoint.
        id: CheckpointId,
    },
    /// The transcript cannot be stored.
    #[error("checkpoint {id}: the transcript cannot be stored")]
    Transcript {
        /// The checkpoint.
        id: CheckpointId,
        /// Why.
        #[source]
        source: TranscriptError,
    },
    /// The backend refuses to write at all (e.g. an fs mirror whose directory from an untrusted
    /// settings file lies outside the repository).
    #[error(transparent)]
    Refused(#[from] fs::DirRefused),
    /// Fetching the checkpoint from the remote failed (never reported as absence).
    #[error(transparent)]
    Fetch(#[from] on_demand::FetchError),
    /// A file outside the object database (the fs mirror's) could not be read or written.
    #[error(transparent)]
    Io(#[from] crate::base::error::IoError),
    /// The repository failed underneath.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// A ref could not be moved (for a reason other than a lost race, which is retried).
    #[error(transparent)]
    RefUpdate(#[from] crate::git::refs::RefUpdateError),
}

impl ExitStatus for StoreError {
    fn exit_code(&self) -> i32 {
        match self {
            StoreError::NotFound { .. } | StoreError::NotFoundAnywhere { .. } => {
                crate::base::error::NOT_FOUND
            }
            StoreError::SessionNotFound { .. }
            | StoreError::FileNotFound { .. }
            | StoreError::MissingSession { .. }
            | StoreError::AbsentBlob { .. }
            | StoreError::ChunkGap { .. }
            | StoreError::Generation { .. }
            | StoreError::BadSessionPath { .. }
            | StoreError::OverLimit { .. }
            | StoreError::SlotConflict { .. }
            | StoreError::CasExhausted { .. }
            | StoreError::NotACommit { .. }
            | StoreError::ObjectNotStored { .. }
            | StoreError::UlidOnBranch { .. }
            | StoreError::Refused(_)
            | StoreError::Io(_) => crate::base::error::FAILURE,
            StoreError::Corrupt { source, .. } => source.exit_code(),
            StoreError::Transcript { source, .. } => source.exit_code(),
            StoreError::Fetch(e) => e.exit_code(),
            StoreError::Repo(e) => e.exit_code(),
            StoreError::RefUpdate(e) => e.exit_code(),
        }
    }
}

impl StoreError {
    /// Whether this is one of the "does not exist" errors (checkpoint, session or file).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            StoreError::NotFound { .. }
                | StoreError::NotFoundAnywhere { .. }
                | StoreError::SessionNotFound { .. }
                | StoreError::FileNotFound { .. }
        )
    }
}

/// Where a checkpoint's subtree lives and how a new one is committed: the one thing the two git
/// stores do differently. The write and backfill flows over it are shared.
pub(crate) trait Layout<'r> {
    /// The repository.
    fn repo(&self) -> &'r Repo;
    /// The ref that carries the checkpoint and its tip.
    fn locate(&self) -> Result<Located, StoreError>;
    /// The `sessions[]` path prefix (`""` or `/ab/cdef...`).
    fn prefix(&self) -> String;
    /// The message of an empty orphan commit to start a new ref with, if any.
    fn bootstrap(&self) -> Option<&'static str>;
    /// The checkpoint subtree inside a tip commit.
    fn subtree(&self, tip: Option<&Commit<'r>>) -> Result<Option<Tree<'r>>, StoreError>;
    /// Turns a new checkpoint subtree into the new tree of the ref.
    fn place(&self, tip: Option<&Commit<'r>>, change: Change) -> Result<Change, StoreError>;
}

/// A session write through `layout`, by compare-and-swap.
pub(crate) fn write_via<'r>(
    layout: &dyn Layout<'r>,
    w: &SessionWrite,
) -> Result<WriteOutcome, StoreError> {
    let repo = layout.repo();
    let author = w.author.clone().unwrap_or_else(|| repo.identity("AUTHOR"));
    let prefix = layout.prefix();
    // The attempt that lands is the last one built.
    let mut session = None;
    let mut outcome = publish::publish(
        repo,
        &|| layout.locate(),
        layout.bootstrap(),
        &author,
        &mut |tip| {
            let base = layout.subtree(tip)?;
            let (change, dir) = tree::build_session(
                repo.objects(),
                base.as_ref(),
                &prefix,
                w,
                &repo.settings().limits(),
            )?;
            session = Some(WrittenSession {
                tree: change.tree.to_string(),
                dir,
            });
            layout.place(tip, change).map(Some)
        },
    )?;
    outcome.session = session;
    Ok(outcome)
}

/// A backfill through `layout`, by compare-and-swap. The session slot is pinned to the session
/// ID resolved on the first attempt, so a concurrent append of another session cannot move the
/// update onto the wrong slot (docs/format.md, "Backfills").
pub(crate) fn backfill_via<'r>(
    layout: &dyn Layout<'r>,
    b: &Backfill,
) -> Result<WriteOutcome, StoreError> {
    let repo = layout.repo();
    let mut pinned = b.requested_session();
    let prefix = layout.prefix();
    let author = repo.identity("AUTHOR");
    publish::publish(repo, &|| layout.locate(), None, &author, &mut |tip| {
        let base = layout.subtree(tip)?;
        let target = b.slot_target(pinned.as_deref());
        let limits = repo.settings().limits();
        match tree::build_backfill(repo.objects(), base.as_ref(), &prefix, b, &target, &limits)? {
            None => Ok(None),
            Some((change, sid)) => {
                if pinned.is_none() && !sid.is_empty() {
                    pinned = Some(sid);
                }
                layout.place(tip, change).map(Some)
            }
        }
    })
}

/// Maps an error of the object or ref database into [`StoreError::Repo`] with context.
pub(crate) fn git_err<E: Into<LibGitError>>(
    context: impl Into<String>,
) -> impl FnOnce(E) -> StoreError {
    let f = crate::git::repo::git_err(context);
    move |e| StoreError::Repo(f(e))
}

/// A create or replace of one session in a checkpoint.
#[derive(Debug, Clone)]
pub struct SessionWrite {
    /// The checkpoint (minted by the caller in the primary's format).
    pub checkpoint_id: CheckpointId,
    /// The session being written; its slot is reused when it already exists.
    pub session_id: SessionId,
    /// Strategy name, normally [`crate::model::documents::DEFAULT_STRATEGY`].
    pub strategy: String,
    /// The user's branch at creation ("" when detached).
    pub branch: String,
    /// The user commit this checkpoint is linked to, when known.
    pub commit_sha: String,
    /// RFC 3339 (nano, UTC) creation time of this session record.
    pub created_at: String,
    /// The transcript bytes, stored exactly.
    pub transcript: Option<Vec<u8>>,
    /// The fingerprint of the redaction rules `transcript` is already redacted with, byte for
    /// byte (`Redactor::fingerprint`), when the caller knows it: the topology does not redact
    /// it again when its own rules have that fingerprint.
    pub transcript_redacted_by: Option<String>,
    /// The content hash of `transcript` ([`crate::model::transcript::content_hash`]) when the
    /// caller computed it already; the topology drops it when redaction changes the bytes.
    pub transcript_hash: Option<String>,
    /// This checkpoint's prompts.
    pub prompts: Vec<String>,
    /// Files the session touched (de-duplicated on write, `/`-separated).
    pub files_touched: Vec<String>,
    /// Agent display name.
    pub agent: String,
    /// Model name.
    pub model: String,
    /// Token usage of this session in this checkpoint.
    pub token_usage: Option<TokenUsage>,
    /// Steps in this checkpoint's prompt window.
    pub checkpoints_count: i64,
    /// Line of the session transcript where this checkpoint begins.
    pub checkpoint_transcript_start: i64,
    /// An optional commit subject line placed after the `Checkpoint:` line.
    pub commit_subject: Option<String>,
    /// Author of the checkpoint commit; `None` = the repository identity.
    pub author: Option<Identity>,
    /// Secrets already redacted from this session's data before it got here (the topology adds
    /// what it redacts itself); recorded as the session metadata key `redactions` when non-zero.
    pub redactions: usize,
    /// Subagent tasks of the session to store under the checkpoint's `tasks/` (kept beside the
    /// ones it holds).
    pub tasks: Vec<TaskWrite>,
    /// The session's `kind` (`imported` for a session imported from an agent's own store; empty:
    /// a session recorded as it ran).
    pub kind: String,
    /// Commits linked to the checkpoint from its side (the root's `linked_commits`, unioned with
    /// those it lists): commits made before the checkpoint, which no trailer can name.
    pub linked_commits: Vec<String>,
}

/// A subagent's task, stored as `tasks/<tool-use-id>/` of a checkpoint: `task.json` and the
/// subagent's transcript `agent-<agent-id>.jsonl` (docs/format.md, "Subagent tasks").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskWrite {
    /// The tool call that started the subagent: its directory's name.
    pub tool_use_id: TaskName,
    /// The subagent's ID: its transcript's name.
    pub agent_id: TaskName,
    /// The subagent's type, when the transcript says.
    pub subagent_type: Option<String>,
    /// The subagent's transcript, when it could be read.
    pub transcript: Option<Vec<u8>>,
}

/// A tool-use or agent ID that names a file or directory of a task: 1 to 128 ASCII letters,
/// digits, `_` and `-`, so that it can be nothing else than one path component.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TaskName(String);

impl TaskName {
    /// `s`, when it is one.
    pub fn parse(s: &str) -> Option<TaskName> {
        let ok = !s.is_empty()
            && s.len() <= 128
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        ok.then(|| TaskName(s.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An update of an existing checkpoint.
#[derive(Debug, Clone)]
pub enum Backfill {
    /// Replace a session's transcript (stop-time finalize). `None` session = the latest slot.
    Transcript {
        /// The checkpoint.
        id: CheckpointId,
        /// The session, or the latest when `None` or not found.
        session_id: Option<SessionId>,
        /// The new transcript.
        transcript: Vec<u8>,
        /// Non-empty prompts replace `prompt.txt`.
        prompts: Vec<String>,
    },
    /// Set a session's `summary` object. The slot is resolved once and pinned across retries.
    Summary {
        /// The checkpoint.
        id: CheckpointId,
        /// The session, or the latest when `None`.
        session_id: Option<SessionId>,
        /// The summary object.
        summary: Value,
    },
    /// Set the root `combined_attribution`.
    Attribution {
        /// The checkpoint.
        id: CheckpointId,
        /// The attribution object.
        attribution: Value,
    },
    /// Add commits to the root's `linked_commits` (unioned, never dropped; those listed already
    /// change nothing).
    Links {
        /// The checkpoint.
        id: CheckpointId,
        /// Full object IDs of the commits to link.
        commits: Vec<String>,
    },
}

impl Backfill {
    /// The session a transcript or summary backfill names, if any.
    pub fn requested_session(&self) -> Option<String> {
        match self {
            Backfill::Transcript { session_id, .. } | Backfill::Summary { session_id, .. } => {
                session_id.as_ref().map(|s| s.to_string())
            }
            Backfill::Attribution { .. } | Backfill::Links { .. } => None,
        }
    }

    /// How this backfill picks its slot, given the session it is pinned to (if any): a
    /// transcript for an unknown session falls back to the latest slot; a summary for an unknown
    /// session is an error (docs/format.md, "Backfills").
    pub(crate) fn slot_target<'a>(&self, pinned: Option<&'a str>) -> SlotTarget<'a> {
        match pinned {
            Some(id) => SlotTarget::Session {
                id,
                fallback_latest: matches!(self, Backfill::Transcript { .. }),
            },
            None => SlotTarget::Latest,
        }
    }

    /// The checkpoint this backfill updates.
    pub fn id(&self) -> &CheckpointId {
        match self {
            Backfill::Transcript { id, .. }
            | Backfill::Summary { id, .. }
            | Backfill::Attribution { id, .. }
            | Backfill::Links { id, .. } => id,
        }
    }
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The ref that holds the checkpoint (the spelling that exists).
    pub ref_name: String,
    /// The new tip commit, or the unchanged tip when nothing changed.
    pub commit: String,
    /// False when the write was a no-op (e.g. the same transcript again).
    pub changed: bool,
    /// Set when the write landed but could not be queued for push.
    pub enqueue_error: Option<String>,
    /// Where a session write put the session: what a reader of the checkpoint finds, so that
    /// what is kept about the session can be named without reading the checkpoint back.
    /// `None` for a backfill, and for a write to a store outside the repository (fs).
    pub session: Option<WrittenSession>,
}

/// The session a write wrote, as a reader of its checkpoint finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenSession {
    /// The checkpoint's tree (hex): [`Checkpoint::tree`].
    pub tree: String,
    /// The session's directory in it: one of [`Checkpoint::session_dirs`].
    pub dir: String,
}

/// A checkpoint as read from a store.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// Its ID.
    pub id: CheckpointId,
    /// Which store served it.
    pub store: StoreKind,
    /// The ref that holds it (for git-branch, the branch).
    pub ref_name: String,
    /// The tip commit of that ref.
    pub commit: String,
    /// The checkpoint's tree.
    pub tree: String,
    /// The root summary.
    pub summary: CheckpointSummary,
    /// Each session's metadata, in slot (`sessions[]` entry) order.
    pub sessions: Vec<std::sync::Arc<SessionMetadata>>,
    /// The directory of each session inside the checkpoint, in slot order: what its
    /// `sessions[]` entry names (else its slot number when the directory it names is not
    /// there), not necessarily the slot number.
    pub session_dirs: Vec<String>,
    /// How many of the sessions `sessions[]` lists: those after are session directories the
    /// tree holds that it does not list (docs/format.md, "Sessions `sessions[]` does not list").
    pub listed: usize,
}

impl Checkpoint {
    /// The slot of a session given as a slot number or a session ID.
    pub fn slot_of(&self, selector: &str) -> Result<usize, StoreError> {
        if let Some(i) = self.sessions.iter().position(|s| s.session_id == selector) {
            return Ok(i);
        }
        match selector.parse::<usize>() {
            Ok(i) if i < self.sessions.len() => Ok(i),
            _ => Err(StoreError::SessionNotFound {
                id: self.id.clone(),
                session: selector.to_owned(),
            }),
        }
    }

    /// The newest creation time among the sessions ("" when none has one).
    pub fn created_at(&self) -> String {
        newest_created_at(&self.sessions)
    }
}

/// The newest `created_at` of a set of sessions. RFC 3339 UTC strings written by Go and by us
/// have the same width up to the fraction, so parse to compare rather than trusting string order.
pub(crate) fn newest_created_at<S: std::ops::Deref<Target = SessionMetadata>>(
    sessions: &[S],
) -> String {
    sessions
        .iter()
        .filter_map(|s| {
            crate::base::time::parse_rfc3339(&s.created_at)
                .ok()
                .map(|t| (t, &s.created_at))
        })
        .max_by_key(|(t, _)| *t)
        .map(|(_, s)| s.clone())
        .unwrap_or_default()
}

/// One line of `list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// The ID.
    pub id: CheckpointId,
    /// The store it was listed from.
    pub store: StoreKind,
    /// The newest session creation time (RFC 3339), or the ULID's time, or "".
    pub created_at: String,
    /// Number of sessions.
    pub session_count: usize,
    /// Session IDs in slot order.
    pub session_ids: Vec<String>,
    /// The agents of its sessions, each once, the last session's last, joined by
    /// [`AGENT_SEPARATOR`] (see [`ListLine::agents`]).
    pub agent: String,
    /// What it was about: the first line of its first prompt ([`crate::model::documents::
    /// prompt_subject`]), or "".
    pub subject: String,
    /// Known only from the remote's ref listing (`list --remote`); the counts are unknown.
    pub remote_only: bool,
    /// Why the checkpoint could not be read, when it could not: `list` shows it all the same,
    /// so no checkpoint is ever silently left out.
    pub unreadable: Option<String>,
    /// The commits its root's `linked_commits` names (full object IDs, validated), linked to
    /// it without a trailer ([`crate::model::links`]).
    pub linked_commits: Vec<String>,
    /// Why each other `linked_commits` entry was skipped, for a diagnostic.
    pub refused_links: Vec<String>,
}

impl CheckpointInfo {
    /// The entry of a checkpoint `store` holds but cannot read, for `reason`.
    pub fn unreadable(id: CheckpointId, store: StoreKind, reason: String) -> Self {
        CheckpointInfo {
            store,
            unreadable: Some(reason),
            remote_only: false,
            ..CheckpointInfo::remote_only(id)
        }
    }

    /// The entry of a checkpoint seen only in a remote's listing: created time from a ULID,
    /// unknown ("") for hex.
    pub fn remote_only(id: CheckpointId) -> Self {
        let created_at = id
            .ulid_time_ms()
            .and_then(|ms| {
                time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000).ok()
            })
            .map(crate::base::time::rfc3339_nano_utc)
            .unwrap_or_default();
        CheckpointInfo {
            id,
            store: StoreKind::GitRefs,
            created_at,
            session_count: 0,
            session_ids: Vec::new(),
            agent: String::new(),
            subject: String::new(),
            remote_only: true,
            unreadable: None,
            linked_commits: Vec::new(),
            refused_links: Vec::new(),
        }
    }
}

impl CheckpointInfo {
    /// This entry as a borrowed [`ListLine`].
    pub fn line(&self) -> ListLine<'_> {
        ListLine {
            id: self.id.as_str(),
            store: self.store,
            created_at: &self.created_at,
            session_count: self.session_count,
            session_ids: self.session_ids.iter().map(String::as_str).collect(),
            agent: &self.agent,
            subject: &self.subject,
            remote_only: self.remote_only,
            unreadable: self.unreadable.as_deref(),
            linked_commits: self.linked_commits.iter().map(String::as_str).collect(),
            refused_links: self.refused_links.iter().map(String::as_str).collect(),
        }
    }
}

/// What joins the agents of a checkpoint's sessions in [`CheckpointInfo::agent`].
pub const AGENT_SEPARATOR: &str = ", ";

/// A `list` entry borrowed from where it is held (a [`CheckpointInfo`], or a summary-index
/// record), so that a listing is rendered without a copy of every line: the fields of
/// [`CheckpointInfo`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListLine<'a> {
    /// As [`CheckpointInfo::id`].
    pub id: &'a str,
    /// As [`CheckpointInfo::store`].
    pub store: StoreKind,
    /// As [`CheckpointInfo::created_at`].
    pub created_at: &'a str,
    /// As [`CheckpointInfo::session_count`].
    pub session_count: usize,
    /// As [`CheckpointInfo::session_ids`].
    pub session_ids: Vec<&'a str>,
    /// As [`CheckpointInfo::agent`].
    pub agent: &'a str,
    /// As [`CheckpointInfo::subject`].
    pub subject: &'a str,
    /// As [`CheckpointInfo::remote_only`].
    pub remote_only: bool,
    /// As [`CheckpointInfo::unreadable`].
    pub unreadable: Option<&'a str>,
    /// As [`CheckpointInfo::linked_commits`].
    pub linked_commits: Vec<&'a str>,
    /// As [`CheckpointInfo::refused_links`].
    pub refused_links: Vec<&'a str>,
}

impl<'a> ListLine<'a> {
    /// The agents of the checkpoint's sessions, each once, the last session's last.
    pub fn agents(&self) -> impl Iterator<Item = &'a str> {
        self.agent.split(AGENT_SEPARATOR).filter(|a| !a.is_empty())
    }
}

/// One commit of a checkpoint's history, in the words every JSON output uses (docs/cli.md, "One
/// vocabulary").
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CommitInfo {
    /// Commit hash.
    pub commit: String,
    /// Author time, RFC 3339 in the author's zone.
    pub authored_at: String,
    /// The author.
    pub author: Identity,
    /// The first line of the message.
    pub subject: String,
}

/// Reads from a git-backed store.
pub trait CheckpointReader {
    /// Which store this is.
    fn kind(&self) -> StoreKind;
    /// The checkpoint, or `None` when this store does not have it.
    fn read(&self, id: &CheckpointId) -> Result<Option<Checkpoint>, StoreError>;
    /// The files of the checkpoint's tree, opened once for reading many of them or streaming
    /// one.
    fn files<'s>(&'s self, cp: &Checkpoint) -> Result<Box<dyn CheckpointFiles + 's>, StoreError>;
    /// A file of the checkpoint tree by path (`N/full.jsonl` is reassembled from its chunks);
    /// see [`CheckpointFiles::read`].
    fn read_file(&self, cp: &Checkpoint, path: &str) -> Result<Vec<u8>, StoreError> {
        self.files(cp)?.read(path)
    }
    /// Every checkpoint of this store. Unreadable checkpoints are skipped, never fatal.
    fn list(&self) -> Result<Vec<CheckpointInfo>, StoreError>;
    /// Every checkpoint ID of this store, cheaply (no document reads).
    fn ids(&self) -> Result<Vec<CheckpointId>, StoreError>;
    /// The commits that changed this checkpoint, newest first; `None` when absent.
    fn history(&self, id: &CheckpointId) -> Result<Option<Vec<CommitInfo>>, StoreError>;
    /// Who wrote `cp`, as read by this store (docs/format.md, "Authorship"), found from the tip
    /// it was read from (no second lookup of the checkpoint); `None` when that tip is gone.
    fn author(&self, cp: &Checkpoint) -> Result<Option<Identity>, StoreError>;
}

/// The files of one checkpoint, its tree opened once: `show` reads every session's documents
/// through one, and a transcript of any size is streamed through one.
pub trait CheckpointFiles {
    /// The bytes of `path` (`N/full.jsonl` reassembled from its chunks, joined by `\n`). A
    /// file over [`crate::config::settings::Limits::blob_bytes`] is
    /// [`StoreError::OverLimit`], never read; [`StoreError::FileNotFound`] when there is none.
    fn read(&self, path: &str) -> Result<Vec<u8>, StoreError>;
    /// The same bytes as [`CheckpointFiles::read`], streamed whatever their size: memory stays
    /// bounded (large blobs come from `git cat-file` as it inflates them).
    fn stream(&self, path: &str) -> Result<Box<dyn std::io::Read + '_>, StoreError>;
}

/// Writes to a store.
pub trait CheckpointWriter {
    /// Which store this is (for messages).
    fn name(&self) -> &str;
    /// Creates the checkpoint or adds/replaces one session in it.
    fn write_session(&self, w: &SessionWrite) -> Result<WriteOutcome, StoreError>;
    /// Updates an existing checkpoint; [`StoreError::NotFound`] when it does not exist.
    fn backfill(&self, b: &Backfill) -> Result<WriteOutcome, StoreError>;
}
