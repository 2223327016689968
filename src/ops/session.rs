//! Staged sessions: what an agent integration records while it works, kept until a commit
//! condenses it into a checkpoint.
//!
//! Each session lives in `<git-common-dir>/entire/sessions/<SID>/` (`state.json` and
//! `transcript`), so every worktree sees them, but a session belongs to the worktree it was
//! last recorded in (the agent works there now) and only that worktree's commits condense it. Every change happens under a
//! per-session lock file (which exists only while held: no lock file outlives a command) and is written through a temp file and a rename, so concurrent
//! `record` calls never lose an update and a crash never leaves a torn file. Everything a record
//! stages is redacted first, so no secret reaches the disk here either.

use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::base::error::io_context as io;
use crate::base::fs::{read_owned, write_atomic, TransientLock};
use crate::base::session_id::SessionId;
use crate::git::repo::Repo;
use crate::model::documents::TokenUsage;
use crate::model::redact::Redactor;
use crate::model::transcript::content_hash;

/// Errors of the session store.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No staged session with that ID.
    #[error("no staged session {0}")]
    NotFound(String),
    /// A state file is not valid.
    #[error("staged session {sid}: state.json is corrupt")]
    Corrupt {
        /// The session.
        sid: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A file operation failed.
    #[error(transparent)]
    Io(#[from] crate::base::error::IoError),
}

/// The persisted state of one staged session.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SessionState {
    /// The session ID.
    pub session_id: String,
    /// The git dir of the worktree the session belongs to: where it was last recorded.
    pub worktree: String,
    /// Agent display name.
    #[serde(default)]
    pub agent: String,
    /// Model name.
    #[serde(default)]
    pub model: String,
    /// Every prompt so far, in order.
    #[serde(default)]
    pub prompts: Vec<String>,
    /// Files touched so far (de-duplicated).
    #[serde(default)]
    pub files_touched: Vec<String>,
    /// Latest token usage.
    #[serde(default)]
    pub token_usage: Option<TokenUsage>,
    /// Whether a transcript has been recorded.
    #[serde(default)]
    pub has_transcript: bool,
    /// Incremented by every record.
    #[serde(default)]
    pub activity: u64,
    /// `activity` at the last condensation.
    #[serde(default)]
    pub condensed_activity: u64,
    /// The checkpoint the last condensation wrote, and the window it used (so an amend that
    /// condenses into the same checkpoint again covers the same prompts, not fewer).
    #[serde(default)]
    pub last_checkpoint: String,
    /// Prompts condensed before the last condensation's window.
    #[serde(default)]
    pub window_prompt_start: usize,
    /// Transcript lines before the last condensation's window.
    #[serde(default)]
    pub window_line_start: usize,
    /// Prompts condensed so far.
    #[serde(default)]
    pub condensed_prompts: usize,
    /// Transcript lines condensed so far.
    #[serde(default)]
    pub condensed_lines: usize,
    /// Secrets redacted from this session's recorded data so far.
    #[serde(default)]
    pub redactions: usize,
    /// RFC 3339 time of the last record.
    #[serde(default)]
    pub updated_at: String,
    /// How the stored transcript was redacted when it was recorded; absent in a session staged
    /// before this was kept (its transcript is then redacted again on commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_redaction: Option<StagedRedaction>,
    /// The agent's own transcript file, when an agent hook recorded the session: the commit
    /// hooks read it again as it is at the commit ([`LiveTranscript`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_transcript: Option<LiveTranscript>,
    /// Subagents that finished and are not yet stored in a checkpoint, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<StagedSubagent>,
}

/// A subagent of a session that finished: its ID, and its own transcript file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct StagedSubagent {
    /// The subagent's ID.
    pub id: String,
    /// Its transcript file, when the agent named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
}

/// The agent's own transcript file of a session, and how long it was when it was last staged.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LiveTranscript {
    /// Its path.
    pub path: String,
    /// Its length in bytes when it was last read into the staged transcript (0: never).
    #[serde(default)]
    pub staged_len: u64,
}

/// The redaction a staged transcript went through: the rules, and the bytes it came out as.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct StagedRedaction {
    /// [`Redactor::fingerprint`] of the rules that redacted it.
    pub rules: String,
    /// [`content_hash`] of the bytes stored.
    pub content_hash: String,
}

impl SessionState {
    /// Whether something was recorded since the last condensation.
    pub fn pending(&self) -> bool {
        self.activity > self.condensed_activity
    }

    /// The fingerprint of the rules the transcript whose [`content_hash`] is `hash` was
    /// redacted with when it was recorded, when it is exactly the bytes that record stored (one
    /// changed or appended since, by anything but a record, gives `None`: it must be redacted
    /// again).
    pub fn transcript_redacted_by(&self, hash: &str) -> Option<&str> {
        self.transcript_redaction
            .as_ref()
            .filter(|r| r.content_hash == hash)
            .map(|r| r.rules.as_str())
    }
}

/// What one `record` call adds.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// The whole transcript so far (replaces the stored one; transcripts only grow).
    pub transcript: Option<Vec<u8>>,
    /// Prompts to append.
    pub prompts: Vec<String>,
    /// Files to merge in.
    pub files_touched: Vec<String>,
    /// Agent name (replaces).
    pub agent: Option<String>,
    /// Model name (replaces).
    pub model: Option<String>,
    /// Token usage (replaces).
    pub token_usage: Option<TokenUsage>,
    /// `prompts` are every prompt of the session so far, read from its transcript: they
    /// replace the recorded ones instead of being appended.
    pub prompts_complete: bool,
    /// The agent's own transcript file (replaces; see [`SessionState::live_transcript`]).
    pub live_transcript: Option<LiveTranscript>,
    /// A subagent that finished (added once).
    pub subagent: Option<StagedSubagent>,
}

/// The marker in `<git-common-dir>/entire/` saying that no staged session has new activity: the
/// commit hooks' scripts skip our binary while it holds (`ops::hooks::fast`).
pub const IDLE_MARKER: &str = "hooks-idle";

/// The staged sessions of a repository.
pub struct SessionStore {
    dir: PathBuf,
    worktree: String,
}

impl SessionStore {
    /// The staged sessions of `repo`, seen from its current worktree.
    pub fn new(repo: &Repo) -> Self {
        let worktree = std::fs::canonicalize(repo.git_dir())
            .unwrap_or_else(|_| repo.git_dir().to_path_buf())
            .display()
            .to_string();
        SessionStore {
            dir: repo.common_dir().join("entire").join("sessions"),
            worktree,
        }
    }

    fn session_dir(&self, sid: &SessionId) -> PathBuf {
        self.dir.join(sid.as_str())
    }

    /// The session's lock: its file exists only while a command holds it.
    fn lock(&self, sid: &SessionId) -> Result<TransientLock, SessionError> {
        let path = self.dir.join(format!(".{sid}.lock"));
        TransientLock::exclusive(&path)
            .map_err(|e| io(format!("lock {}", path.display()))(e).into())
    }

    fn load(&self, sid: &SessionId) -> Result<Option<SessionState>, SessionError> {
        let path = self.session_dir(sid).join("state.json");
        match read_owned(&path, 16 << 20) {
            Ok(Some(bytes)) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|source| SessionError::Corrupt {
                        sid: sid.to_string(),
                        source,
                    })
            }
            Ok(None) => Ok(None),
            Err(e) => Err(io(format!("read {}", path.display()))(e).into()),
        }
    }

    fn save(&self, sid: &SessionId, state: &SessionState) -> Result<(), SessionError> {
        let dir = self.session_dir(sid);
        fs::create_dir_all(&dir).map_err(io(format!("create {}", dir.display())))?;
        let path = dir.join("state.json");
        write_atomic(&path, &crate::model::documents::to_json_bytes(state), 0o644)
            .map_err(|e| io(format!("write {}", path.display()))(e).into())
    }

    /// Adds a record to session `sid` (creating it, or moving it, to this worktree), its transcript, prompts,
    /// files and names redacted by `redactor` before anything is written.
    pub fn record(
        &self,
        sid: &SessionId,
        mut rec: Record,
        redactor: &Redactor,
    ) -> Result<SessionState, SessionError> {
        let redactions = rec
            .transcript
            .as_mut()
            .map_or(0, |t| redactor.redact_vec(t))
            + redactor.redact_strings(
                rec.prompts
                    .iter_mut()
                    .chain(&mut rec.files_touched)
                    .chain(&mut rec.agent)
                    .chain(&mut rec.model),
            );
        let _lock = self.lock(sid)?;
        let mut state = self.load(sid)?.unwrap_or_else(|| SessionState {
            session_id: sid.to_string(),
            ..Default::default()
        });
        // The session goes with the worktree the agent records it from now.
        state.worktree = self.worktree.clone();
        if let Some(t) = &rec.transcript {
            let path = self.session_dir(sid).join("transcript");
            fs::create_dir_all(self.session_dir(sid))
                .map_err(io(format!("create {}", self.dir.display())))?;
            write_atomic(&path, t, 0o644).map_err(io(format!("write {}", path.display())))?;
            state.has_transcript = true;
            state.transcript_redaction = Some(StagedRedaction {
                rules: redactor.fingerprint(),
                content_hash: content_hash(t),
            });
        }
        if rec.prompts_complete {
            state.prompts = rec.prompts;
        } else {
            state.prompts.extend(rec.prompts);
        }
        if let Some(live) = rec.live_transcript {
            state.live_transcript = Some(live);
        }
        if let Some(sub) = rec.subagent {
            if !state.subagents.iter().any(|s| s.id == sub.id) {
                state.subagents.push(sub);
            }
        }
        for f in rec.files_touched {
            let f = f.replace('\\', "/");
            if !f.is_empty() && !state.files_touched.contains(&f) {
                state.files_touched.push(f);
            }
        }
        if let Some(a) = rec.agent {
            state.agent = a;
        }
        if let Some(m) = rec.model {
            state.model = m;
        }
        if rec.token_usage.is_some() {
            state.token_usage = rec.token_usage;
        }
        state.redactions += redactions;
        state.activity += 1;
        state.updated_at = crate::base::time::now_rfc3339_nano();
        // Before the save, so that a process killed right after it leaves no marker that says
        // there is nothing staged; and again after it: a post-commit that marks the store idle
        // either sees this activity or marked it before this takes the marker away (both under
        // the marker's lock).
        self.not_idle()?;
        self.save(sid, &state)?;
        crate::base::crashpoint::crashpoint("session.after-save");
        self.not_idle()?;
        Ok(state)
    }

    /// The [`IDLE_MARKER`] and its lock.
    fn idle_paths(&self) -> (PathBuf, PathBuf) {
        (
            self.dir.with_file_name(IDLE_MARKER),
            self.dir.with_file_name(format!("{IDLE_MARKER}.lock")),
        )
    }

    /// Takes the [`IDLE_MARKER`] away, under its lock.
    fn not_idle(&self) -> Result<(), SessionError> {
        let (marker, lock) = self.idle_paths();
        let _lock =
            TransientLock::exclusive(&lock).map_err(io(format!("lock {}", lock.display())))?;
        match fs::remove_file(&marker) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(io(format!("remove {}", marker.display()))(e).into())
            }
            _ => Ok(()),
        }
    }

    /// Writes the [`IDLE_MARKER`] where no staged session (of any worktree) has new activity,
    /// under its lock; returns whether it did.
    pub fn mark_idle(&self) -> Result<bool, SessionError> {
        let (marker, lock) = self.idle_paths();
        let _lock =
            TransientLock::exclusive(&lock).map_err(io(format!("lock {}", lock.display())))?;
        if self.list()?.iter().any(SessionState::pending) {
            drop(_lock);
            self.not_idle()?;
            return Ok(false);
        }
        write_atomic(&marker, b"", 0o644).map_err(io(format!("write {}", marker.display())))?;
        Ok(true)
    }

    /// Every staged session, sorted by ID.
    pub fn list(&self) -> Result<Vec<SessionState>, SessionError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(format!("read {}", self.dir.display()))(e).into()),
        };
        let mut out = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(sid) = SessionId::parse(&name) else {
                continue;
            };
            if name.starts_with('.') || !e.path().is_dir() {
                continue;
            }
            if let Some(s) = self.load(&sid)? {
                out.push(s);
            }
        }
        out.sort_by(|a, b| a.session_id.cmp(&b.session_id));
        Ok(out)
    }

    /// The staged sessions of the current worktree whose agent's own transcript file is known
    /// ([`SessionState::live_transcript`]).
    pub fn live_here(&self) -> Result<Vec<SessionState>, SessionError> {
        Ok(self
            .list()?
            .into_iter()
            .filter(|s| s.worktree == self.worktree && s.live_transcript.is_some())
            .collect())
    }

    /// The staged sessions of the current worktree with activity since their last condensation.
    pub fn pending_here(&self) -> Result<Vec<SessionState>, SessionError> {
        Ok(self
            .list()?
            .into_iter()
            .filter(|s| s.worktree == self.worktree && s.pending())
            .collect())
    }

    /// The stored transcript of a session.
    pub fn transcript(&self, sid: &SessionId) -> Result<Option<Vec<u8>>, SessionError> {
        let path = self.session_dir(sid).join("transcript");
        // The agent's own transcript, of any size: never through a link or from a FIFO.
        read_owned(&path, u64::MAX).map_err(|e| io(format!("read {}", path.display()))(e).into())
    }

    /// Runs `condense` on a session under its lock; when it succeeds the session is marked
    /// condensed into `checkpoint` up to what it saw. `condense` gets the state and the
    /// transcript and returns the number of transcript lines it covered.
    pub fn condense<E>(
        &self,
        sid: &SessionId,
        checkpoint: &str,
        condense: impl FnOnce(&SessionState, Option<&[u8]>) -> Result<usize, E>,
    ) -> Result<Result<(), E>, SessionError> {
        let _lock = self.lock(sid)?;
        let Some(mut state) = self.load(sid)? else {
            return Err(SessionError::NotFound(sid.to_string()));
        };
        let transcript = self.transcript(sid)?;
        match condense(&state, transcript.as_deref()) {
            Err(e) => Ok(Err(e)),
            Ok(lines) => {
                if state.last_checkpoint != checkpoint {
                    state.window_prompt_start = state.condensed_prompts;
                    state.window_line_start = state.condensed_lines;
                }
                state.last_checkpoint = checkpoint.to_owned();
                state.condensed_prompts = state.prompts.len();
                state.condensed_lines = lines;
                state.condensed_activity = state.activity;
                self.save(sid, &state)?;
                Ok(Ok(()))
            }
        }
    }

    /// Takes the subagents `ids` off session `sid`: their tasks are stored.
    pub fn subagents_stored(&self, sid: &SessionId, ids: &[String]) -> Result<(), SessionError> {
        if ids.is_empty() {
            return Ok(());
        }
        let _lock = self.lock(sid)?;
        let Some(mut state) = self.load(sid)? else {
            return Ok(());
        };
        state.subagents.retain(|s| !ids.contains(&s.id));
        self.save(sid, &state)
    }

    /// Drops a staged session.
    pub fn discard(&self, sid: &SessionId) -> Result<(), SessionError> {
        let dir = self.session_dir(sid);
        // A session that is not there is not found without creating anything (a record racing
        // this one is simply later); one that is is removed under its lock.
        if !dir.exists() {
            return Err(SessionError::NotFound(sid.to_string()));
        }
        let _lock = self.lock(sid)?;
        if !dir.exists() {
            return Err(SessionError::NotFound(sid.to_string()));
        }
        fs::remove_dir_all(&dir).map_err(|e| io(format!("remove {}", dir.display()))(e).into())
    }
}

impl SessionState {
    /// The window a condensation into `checkpoint` covers: `(first prompt, first transcript
    /// line)`. Condensing into the checkpoint the last condensation wrote (an amend) covers the
    /// same window again, extended; a new checkpoint starts where the last one ended.
    pub fn window_for(&self, checkpoint: &str) -> (usize, usize) {
        if self.last_checkpoint == checkpoint {
            (self.window_prompt_start, self.window_line_start)
        } else {
            (self.condensed_prompts, self.condensed_lines)
        }
    }
}

impl crate::base::error::ExitStatus for SessionError {
    fn exit_code(&self) -> i32 {
        match self {
            SessionError::NotFound(_) | SessionError::Corrupt { .. } | SessionError::Io(_) => {
                crate::base::error::FAILURE
            }
        }
    }
}
