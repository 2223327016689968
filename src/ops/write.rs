//! The write use cases: `write` (one session written as a checkpoint), `backfill` (a
//! transcript, summary or attribution added to one) and `session record` (a session staged),
//! with the files they are given read here: a path, or standard input for `-`.

use std::io::Read;

use serde_json::Value;

use crate::agents;
use crate::base::error::{ExitStatus, FAILURE};
use crate::base::id::{CheckpointId, InvalidIdError};
use crate::base::session_id::InvalidSessionIdError;
use crate::base::time::{self as timefmt, InvalidTimeError};
use crate::git::repo::Repo;
use crate::model::documents::TokenUsage;
use crate::model::redact;
use crate::ops::session::{Record, SessionError, SessionState, SessionStore};
use crate::ops::writes_cache::WritesCache;
use crate::store::{Backfill, SessionWrite};
use crate::topology::{Topology, TopologyError};

/// Errors of the write commands.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file argument could not be read (`read <path>`, `read standard input`).
    #[error("{context}")]
    Input {
        /// What was being read.
        context: String,
        /// Why it could not be.
        #[source]
        source: std::io::Error,
    },
    /// A JSON argument does not parse (`<what> is not valid JSON`).
    #[error("{context}")]
    NotJson {
        /// Which argument.
        context: String,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// A JSON argument is not an object.
    #[error("{0} must be a JSON object")]
    NotObject(&'static str),
    /// The checkpoint ID given is not one.
    #[error(transparent)]
    InvalidId(#[from] InvalidIdError),
    /// The session ID given is not one.
    #[error(transparent)]
    InvalidSessionId(#[from] InvalidSessionIdError),
    /// The time given is not RFC 3339.
    #[error(transparent)]
    InvalidTime(#[from] InvalidTimeError),
    /// The checkpoint could not be named or written.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The session could not be staged.
    #[error(transparent)]
    Session(#[from] SessionError),
}

impl ExitStatus for WriteError {
    fn exit_code(&self) -> i32 {
        match self {
            WriteError::Input { .. } | WriteError::NotJson { .. } | WriteError::NotObject(_) => {
                FAILURE
            }
            WriteError::InvalidId(e) => e.exit_code(),
            WriteError::InvalidSessionId(e) => e.exit_code(),
            WriteError::InvalidTime(e) => e.exit_code(),
            WriteError::Topology(e) => e.exit_code(),
            WriteError::Session(e) => e.exit_code(),
        }
    }
}

/// Reads a file argument, or standard input for `-`.
fn read_input(path: &str) -> Result<Vec<u8>, WriteError> {
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|source| WriteError::Input {
                context: "read standard input".to_owned(),
                source,
            })?;
        Ok(buf)
    } else {
        std::fs::read(path).map_err(|source| WriteError::Input {
            context: format!("read {path}"),
            source,
        })
    }
}

/// The JSON object the file argument `path` holds (`what` names the argument).
fn read_json_object(path: &str, what: &'static str) -> Result<Value, WriteError> {
    let bytes = read_input(path)?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|source| WriteError::NotJson {
        context: format!("{what} is not valid JSON"),
        source,
    })?;
    if !v.is_object() {
        return Err(WriteError::NotObject(what));
    }
    Ok(v)
}

/// What a session is given on the command line: its transcript file and what it did.
pub struct SessionInput {
    /// The transcript file (`-`: standard input).
    pub transcript: Option<String>,
    /// The prompts.
    pub prompts: Vec<String>,
    /// The files it touched.
    pub files_touched: Vec<String>,
    /// The agent.
    pub agent: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// The token usage given.
    pub token_usage: Option<TokenUsage>,
}

impl SessionInput {
    /// Reads the transcript file, and the token usage given. A transcript in no shape an agent
    /// writes (not JSON lines, nor one JSON document of an agent that stores one) is accepted
    /// as it is, with one warning told to `warn`: nothing can be read from it.
    fn load(&mut self, warn: &dyn Fn(String)) -> Result<Option<Vec<u8>>, WriteError> {
        let transcript = self.transcript.as_deref().map(read_input).transpose()?;
        if let (Some(t), Some(name)) = (&transcript, &self.transcript) {
            if !agents::is_transcript_shaped(t) {
                let name = if name == "-" { "standard input" } else { name };
                warn(format!(
                    "the transcript ({name}) is not JSON lines, nor one JSON document of Gemini CLI, OpenCode or Kiro: it is stored as given, but no prompt, file write or token usage can be read from it"
                ));
            }
        }
        Ok(transcript)
    }
}

/// What `write` is asked.
pub struct WriteAsk {
    /// The session ID.
    pub session: String,
    /// The checkpoint ID (else a new one).
    pub id: Option<String>,
    /// The session's data.
    pub data: SessionInput,
    /// The strategy recorded.
    pub strategy: String,
    /// The branch (else the current one).
    pub branch: Option<String>,
    /// The commit subject recorded.
    pub commit_subject: Option<String>,
    /// When it was created (RFC 3339; else now).
    pub created_at: Option<String>,
}

/// What a write or a backfill did.
pub struct Written {
    /// The checkpoint written.
    pub id: CheckpointId,
    /// Whether it changed (a backfill of what is there already does not).
    pub changed: bool,
    /// What the mirrors said.
    pub warnings: Vec<String>,
}

/// `write`: writes one session as a checkpoint, everything given validated before anything is
/// written; what is set aside is told to `warn`.
pub fn write(
    repo: &Repo,
    topo: &Topology<'_>,
    mut a: WriteAsk,
    warn: &dyn Fn(String),
) -> Result<Written, WriteError> {
    let id = match &a.id {
        Some(raw) => CheckpointId::parse(raw)?,
        None => topo.mint_id(),
    };
    let session_id = redact::session_id(&a.session)?;
    let transcript = a.data.load(warn)?;
    let token_usage = a.data.token_usage.or_else(|| {
        transcript
            .as_deref()
            .and_then(|t| agents::token_usage(t, 0))
    });
    let created_at = match &a.created_at {
        Some(t) => timefmt::rfc3339_nano_utc(timefmt::parse_rfc3339(t)?),
        None => timefmt::now_rfc3339_nano(),
    };
    let w = SessionWrite {
        checkpoint_id: id.clone(),
        session_id,
        strategy: a.strategy,
        branch: a
            .branch
            .or_else(|| repo.current_branch())
            .unwrap_or_default(),
        commit_sha: String::new(),
        created_at,
        transcript,
        transcript_redacted_by: None,
        transcript_hash: None,
        checkpoints_count: a.data.prompts.len().max(1) as i64,
        prompts: a.data.prompts,
        files_touched: a.data.files_touched,
        agent: a.data.agent.unwrap_or_default(),
        model: a.data.model.unwrap_or_default(),
        token_usage,
        checkpoint_transcript_start: 0,
        commit_subject: a.commit_subject,
        author: None,
        redactions: 0,
        tasks: Vec::new(),
        kind: String::new(),
        linked_commits: Vec::new(),
    };
    let report = WritesCache::in_common_dir(repo.common_dir()).write_session(topo, w)?;
    Ok(Written {
        id,
        changed: report.outcome.changed,
        warnings: report.warnings(),
    })
}

/// What `backfill` adds to a checkpoint (named as `show` names one), from file arguments.
pub enum BackfillAsk {
    /// A session's transcript.
    Transcript {
        /// The checkpoint.
        id: String,
        /// The session.
        session: String,
        /// The transcript file.
        transcript: String,
    },
    /// The summary, or one session's.
    Summary {
        /// The checkpoint.
        id: String,
        /// The session, else the checkpoint's summary.
        session: Option<String>,
        /// The summary file (a JSON object).
        summary: String,
    },
    /// The attribution.
    Attribution {
        /// The checkpoint.
        id: String,
        /// The attribution file (a JSON object).
        attribution: String,
    },
}

/// `backfill`: adds what `b` names to its checkpoint.
pub fn backfill(topo: &Topology<'_>, b: BackfillAsk) -> Result<Written, WriteError> {
    let backfill = match b {
        BackfillAsk::Transcript {
            id,
            session,
            transcript,
        } => Backfill::Transcript {
            id: topo.resolve(&id)?,
            session_id: Some(redact::session_id(&session)?),
            transcript: read_input(&transcript)?,
            prompts: Vec::new(),
        },
        BackfillAsk::Summary {
            id,
            session,
            summary,
        } => Backfill::Summary {
            id: topo.resolve(&id)?,
            session_id: session.as_deref().map(redact::session_id).transpose()?,
            summary: read_json_object(&summary, "--summary")?,
        },
        BackfillAsk::Attribution { id, attribution } => Backfill::Attribution {
            id: topo.resolve(&id)?,
            attribution: read_json_object(&attribution, "--attribution")?,
        },
    };
    let report = topo.backfill(&backfill)?;
    Ok(Written {
        id: backfill.id().clone(),
        changed: report.outcome.changed,
        warnings: report.warnings(),
    })
}

/// `session record`: stages what `data` gives for the session `session`; what is set aside is
/// told to `warn`.
pub fn record(
    repo: &Repo,
    topo: &Topology<'_>,
    session: &str,
    mut data: SessionInput,
    warn: &dyn Fn(String),
) -> Result<SessionState, WriteError> {
    let sid = redact::session_id(session)?;
    let transcript = data.load(warn)?;
    // Staging is local and must not lose the agent's step: it goes on while a settings file
    // does not parse (with the built-in rules at least; the commit redacts again).
    Ok(SessionStore::new(repo).record(
        &sid,
        Record {
            transcript,
            prompts: data.prompts,
            files_touched: data.files_touched,
            agent: data.agent,
            model: data.model,
            token_usage: data.token_usage,
            ..Record::default()
        },
        topo.redactor(),
    )?)
}
