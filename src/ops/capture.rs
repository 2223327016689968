//! Capture: an agent's own hooks record its sessions (`git entire-checkpoint agent-hook <agent>
//! <event>`), and `enable --agent` wires them (docs/agents.md).
//!
//! A hook reads the agent's payload ([`crate::agents::HookEvent`]) and stages the session in
//! this worktree ([`SessionStore`]), remembering the agent's own transcript file. Events the
//! agent waits for on every prompt and tool call only note that the session is active; the
//! transcript is read, redacted and staged at the end of a turn, of a subagent and of the
//! session, so a crash loses nothing. Prompts, files touched and the agent come from the
//! transcript itself. An agent often commits by itself before its turn ends: the commit hooks
//! read each live transcript again as it is at the commit ([`refresh_live`]), so the checkpoint
//! holds the session up to that commit, and the next commit's holds what came after (the
//! session's windows of prompts and transcript lines).
//!
//! A hook never disturbs the agent: the binary prints nothing on stdout and exits 0 whatever
//! happens; a failure is one line on stderr and a note in `<git-common-dir>/entire/` that
//! `status` shows ([`last_failure`]).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agents::{self, AgentHooks, EventKind, HookEvent, PayloadError, TranscriptFormat};
use crate::base::error::{ExitStatus, FAILURE, USAGE};
use crate::base::fs::{read_owned, write_atomic};
use crate::base::session_id::{InvalidSessionIdError, SessionId};
use crate::git::repo::{Repo, RepoError};
use crate::model::redact;
use crate::model::redact::Redactor;
use crate::ops::session::{
    LiveTranscript, Record, SessionError, SessionState, SessionStore, StagedSubagent,
};
use crate::store::{TaskName, TaskWrite};

/// The most bytes of a hook's payload read (a tool's output can be large; what we use is not).
const MAX_PAYLOAD_BYTES: u64 = 64 << 20;

/// The note of the last failed hook, in `<git-common-dir>/entire/`.
const FAILURE_NOTE: &str = "agent-hook-failure.json";

/// Errors of an agent hook.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// No agent of that name.
    #[error("unknown agent {0:?} (known: {known})", known = known_agents())]
    UnknownAgent(String),
    /// The payload could not be read.
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// The payload's session ID cannot name a staged session.
    #[error(transparent)]
    SessionId(#[from] InvalidSessionIdError),
    /// The hook's input could not be read.
    #[error("cannot read the hook's input")]
    Input(#[source] std::io::Error),
    /// The agent's transcript could not be read.
    #[error("cannot read the agent's transcript {path}")]
    Transcript {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Staging failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The repository could not be opened.
    #[error(transparent)]
    Repo(#[from] RepoError),
}

impl ExitStatus for CaptureError {
    fn exit_code(&self) -> i32 {
        match self {
            CaptureError::UnknownAgent(_) => USAGE,
            CaptureError::Payload(_)
            | CaptureError::SessionId(_)
            | CaptureError::Input(_)
            | CaptureError::Transcript { .. }
            | CaptureError::Session(_) => FAILURE,
            CaptureError::Repo(e) => e.exit_code(),
        }
    }
}

/// The names of the agents whose hooks we install, for messages.
pub fn known_agents() -> String {
    agents::hooks::all()
        .iter()
        .map(|a| a.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The agent named `name`.
fn agent(name: &str) -> Result<&'static AgentHooks, CaptureError> {
    agents::hooks::by_name(name).ok_or_else(|| CaptureError::UnknownAgent(name.to_owned()))
}

/// Reads a hook's payload from `input`, at most [`MAX_PAYLOAD_BYTES`].
fn read_payload(input: impl Read) -> Result<Vec<u8>, CaptureError> {
    let mut buf = Vec::new();
    input
        .take(MAX_PAYLOAD_BYTES)
        .read_to_end(&mut buf)
        .map_err(CaptureError::Input)?;
    Ok(buf)
}

/// What a hook did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The session.
    pub session: String,
    /// What happened.
    pub kind: EventKind,
    /// Whether the agent's transcript was read and staged.
    pub staged_transcript: bool,
}

/// `agent-hook <agent> <event>`: reads the payload from `input`, finds the repository the event
/// is about (the payload's working directory, where the process moves, else the current one)
/// and records the event there, redacted with the settings' rules (the built-in ones at least,
/// while a settings file does not parse: staging must not lose the agent's step, and the commit
/// redacts again). A failure is noted for `status` and a success clears that note.
pub fn run_hook(
    agent_name: &str,
    event_name: &str,
    input: impl Read,
) -> Result<Captured, CaptureError> {
    let mut common_dir = None;
    let result = (|| {
        let agent = agent(agent_name)?;
        let payload = read_payload(input)?;
        let event = agent.read_event(event_name, &payload)?;
        if let Some(dir) = event.cwd.as_deref().filter(|d| d.is_dir()) {
            std::env::set_current_dir(dir).map_err(CaptureError::Input)?;
        }
        let repo = Repo::discover()?;
        common_dir = Some(repo.common_dir().to_path_buf());
        let redactor = repo
            .settings()
            .redactor()
            .unwrap_or_else(|_| Redactor::builtin());
        record_event(&repo, agent, &event, &redactor)
    })();
    if let Some(dir) = &common_dir {
        match &result {
            Ok(_) => clear_failure(dir, agent_name),
            Err(e) => note_failure(
                dir,
                &HookFailure {
                    at: crate::base::time::now_rfc3339_nano(),
                    agent: agent_name.to_owned(),
                    event: event_name.to_owned(),
                    message: crate::base::error::error_chain(e),
                },
            ),
        }
    }
    result
}

/// Records the event `event` of `agent` into the staged sessions of `repo`, with `redactor`.
fn record_event(
    repo: &Repo,
    agent: &AgentHooks,
    event: &HookEvent,
    redactor: &Redactor,
) -> Result<Captured, CaptureError> {
    let sid = redact::session_id(&event.session_id)?;
    let transcript = event.transcript.as_deref().map(|t| match &event.cwd {
        Some(cwd) if t.is_relative() => cwd.join(t),
        _ => t.to_path_buf(),
    });
    let store = SessionStore::new(repo);
    let live = transcript.as_ref().map(|p| LiveTranscript {
        path: p.display().to_string(),
        staged_len: 0,
    });
    let read = match (&live, event.kind.stages_transcript(), agent.export) {
        (Some(live), true, _) => read_live(repo, &live.path)?,
        (None, true, Some(program)) => exported(repo, program, &sid)?,
        _ => None,
    };
    let staged_transcript = read.is_some();
    let subagent = event.subagent.as_ref().map(|s| StagedSubagent {
        id: s.id.clone(),
        transcript: s.transcript.as_ref().map(|p| p.display().to_string()),
    });
    let mut rec = match read {
        Some(read) => read.into_record(repo, agent.format),
        None => Record {
            // Without a transcript, the payload's prompt is all there is; with one, prompts are
            // read from it when it is staged (a prompt noted here would be counted twice).
            prompts: match &live {
                None => event.prompt.iter().cloned().collect(),
                Some(_) => Vec::new(),
            },
            agent: Some(agent.format.agent().to_owned()),
            live_transcript: live,
            ..Record::default()
        },
    };
    rec.subagent = subagent;
    store.record(&sid, rec, redactor)?;
    Ok(Captured {
        session: sid.to_string(),
        kind: event.kind,
        staged_transcript,
    })
}

/// An agent's transcript as read now.
pub(crate) struct LiveRead {
    /// Its file, to read again at a commit; empty: none (an export, or a session imported whole).
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl LiveRead {
    /// The record of this transcript: it whole, with every prompt and file it shows; the agent
    /// is the one whose format it is, else the one of `fallback` (the agent whose hooks or
    /// store it came from).
    pub(crate) fn into_record(self, repo: &Repo, fallback: TranscriptFormat) -> Record {
        let writes = agents::extract(&self.bytes);
        let root = repo.workdir().map(Path::to_path_buf);
        let real_root = root.as_deref().and_then(|r| std::fs::canonicalize(r).ok());
        let mut files: Vec<String> = Vec::new();
        for w in &writes.writes {
            let file = relative_to(&w.file, root.as_deref(), real_root.as_deref());
            if !files.contains(&file) {
                files.push(file);
            }
        }
        let len = self.bytes.len() as u64;
        // The transcript says which agent wrote it: another agent may run this one's hooks
        // (Cursor and Copilot CLI run Claude Code's).
        let format = match writes.format {
            TranscriptFormat::Unknown => fallback,
            format => format,
        };
        Record {
            transcript: Some(self.bytes),
            prompts: writes.prompts.into_iter().map(|p| p.text).collect(),
            prompts_complete: true,
            files_touched: files,
            agent: Some(format.agent().to_owned()),
            // An export has no file to read again at a commit.
            live_transcript: (!self.path.is_empty()).then_some(LiveTranscript {
                path: self.path,
                staged_len: len,
            }),
            ..Record::default()
        }
    }
}

/// How long an agent's command (the export of a session, a listing of sessions) may take.
const AGENT_COMMAND_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// The transcript of session `sid` as the agent's `program export <sid>` prints it (OpenCode
/// keeps sessions in a store of its own), at most the read cap; `None` when it fails (the
/// session is then staged without it, and the failure said once on stderr by the caller).
fn exported(repo: &Repo, program: &str, sid: &SessionId) -> Result<Option<LiveRead>, CaptureError> {
    let bytes = export_of(repo, program, sid).map_err(|source| CaptureError::Transcript {
        path: format!("{program} export {sid}"),
        source,
    })?;
    Ok(bytes.map(|bytes| LiveRead {
        path: String::new(),
        bytes,
    }))
}

/// What the agent's `program export <sid>` prints, by [`agent_command_output`]; `None` for a
/// session ID that could be read as an option, which is not passed.
pub(crate) fn export_of(
    repo: &Repo,
    program: &str,
    sid: &SessionId,
) -> std::io::Result<Option<Vec<u8>>> {
    if sid.as_str().starts_with('-') {
        return Ok(None);
    }
    agent_command_output(repo, program, &["export", sid.as_str()]).map(Some)
}

/// What the agent's command `program args` prints on stdout, at most the per-clone read cap,
/// run in the work tree (and with `PWD` naming it: OpenCode takes its directory from `PWD`
/// before the working directory) with nothing on stdin, within 60 s. An error when it cannot
/// be started (`NotFound`: the agent is not installed), does not finish in time (it is killed)
/// or fails.
pub(crate) fn agent_command_output(
    repo: &Repo,
    program: &str,
    args: &[&str],
) -> std::io::Result<Vec<u8>> {
    let dir = repo.workdir().unwrap_or(repo.git_dir());
    let mut child = std::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PWD", dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().expect("piped");
    let cap = repo.settings().limits().blob_bytes;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.take(cap).read_to_end(&mut bytes).map(|_| bytes)
    });
    let deadline = std::time::Instant::now() + AGENT_COMMAND_DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "it did not finish in 60 s",
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let bytes = reader.join().unwrap_or_else(|_| Ok(Vec::new()))?;
    if !status.success() {
        return Err(std::io::Error::other(format!("it exited with {status}")));
    }
    Ok(bytes)
}

/// `file` (as a tool call names it) relative to the work tree `root` (or its real path), when
/// it is inside it; as it is otherwise.
fn relative_to(file: &str, root: Option<&Path>, real_root: Option<&Path>) -> String {
    let path = Path::new(file);
    [root, real_root]
        .into_iter()
        .flatten()
        .find_map(|r| path.strip_prefix(r).ok())
        .map_or_else(|| file.to_owned(), |p| p.to_string_lossy().into_owned())
}

/// Reads the agent's transcript at `path`, at most the per-clone read cap
/// (`limits.blob_bytes`); `None` when it does not exist (yet).
fn read_live(repo: &Repo, path: &str) -> Result<Option<LiveRead>, CaptureError> {
    let cap = repo.settings().limits().blob_bytes;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(CaptureError::Transcript {
                path: path.to_owned(),
                source,
            })
        }
    };
    let mut bytes = Vec::new();
    file.take(cap)
        .read_to_end(&mut bytes)
        .map_err(|source| CaptureError::Transcript {
            path: path.to_owned(),
            source,
        })?;
    Ok(Some(LiveRead {
        path: path.to_owned(),
        bytes,
    }))
}

/// Stages again, as they are now, the agents' transcripts of this worktree's sessions that
/// changed since they were last staged: what the commit being made condenses. A session whose
/// agent keeps it in a store of its own (OpenCode) is exported again while it has been active
/// since its last condensation: the agent may commit before its turn ends, and so before its
/// hooks export the session. Best effort: a transcript that cannot be read keeps what was
/// staged, and the reason is returned.
pub fn refresh_live(repo: &Repo) -> Vec<String> {
    let store = SessionStore::new(repo);
    let Ok(sessions) = store.live_here() else {
        return Vec::new();
    };
    let exported_here = store
        .pending_here()
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.live_transcript.is_none() && agent_of(s).is_some_and(|a| a.export.is_some()));
    let redactor = repo
        .settings()
        .redactor()
        .unwrap_or_else(|_| Redactor::builtin());
    let mut problems = Vec::new();
    for state in sessions.into_iter().chain(exported_here) {
        if let Err(e) = refresh_one(repo, &store, &state, &redactor) {
            problems.push(format!(
                "session {}: {}",
                state.session_id,
                crate::base::error::error_chain(&e)
            ));
        }
    }
    problems
}

fn refresh_one(
    repo: &Repo,
    store: &SessionStore,
    state: &SessionState,
    redactor: &Redactor,
) -> Result<(), CaptureError> {
    let Some(agent) = agent_of(state) else {
        return Ok(());
    };
    let sid = SessionId::parse(&state.session_id)?;
    let read = match (&state.live_transcript, agent.export) {
        (Some(live), _) => {
            let len = std::fs::metadata(&live.path).map_or(0, |m| m.len());
            if len == 0 || len == live.staged_len {
                return Ok(());
            }
            read_live(repo, &live.path)?
        }
        (None, Some(program)) => exported(repo, program, &sid)?,
        (None, None) => None,
    };
    if let Some(read) = read {
        store.record(&sid, read.into_record(repo, agent.format), redactor)?;
    }
    Ok(())
}

/// The agent whose hooks recorded `state`, by the name they recorded.
fn agent_of(state: &SessionState) -> Option<&'static AgentHooks> {
    agents::hooks::all()
        .into_iter()
        .find(|a| a.format.agent() == state.agent)
}

/// The tasks of the subagents of `state` that its transcript (`transcript`, the session's)
/// shows the calls of: each with its own transcript, read now at most the per-clone read cap
/// (redaction is the store's). Subagents whose call is not there yet wait for a later commit.
pub fn subagent_tasks(repo: &Repo, state: &SessionState, transcript: &[u8]) -> Vec<TaskWrite> {
    let cap = repo.settings().limits().blob_bytes;
    state
        .subagents
        .iter()
        .filter_map(|sub| {
            let (call, kind) = agents::subagent_call(transcript, &sub.id)?;
            let read = |path: &String| -> Option<Vec<u8>> {
                let mut bytes = Vec::new();
                std::fs::File::open(path)
                    .and_then(|f| f.take(cap).read_to_end(&mut bytes))
                    .ok()
                    .map(|_| bytes)
            };
            Some(TaskWrite {
                tool_use_id: TaskName::parse(&call)?,
                agent_id: TaskName::parse(&sub.id)?,
                subagent_type: kind,
                transcript: sub.transcript.as_ref().and_then(read),
            })
        })
        .collect()
}

/// The note of a hook that failed: when, which, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookFailure {
    /// RFC 3339 time.
    pub at: String,
    /// The agent.
    pub agent: String,
    /// The event, as the agent names it.
    pub event: String,
    /// What went wrong.
    pub message: String,
}

fn failure_note(common_dir: &Path) -> PathBuf {
    common_dir.join("entire").join(FAILURE_NOTE)
}

/// Notes that a hook failed, for `status` (best effort: the hook must not fail for it).
fn note_failure(common_dir: &Path, failure: &HookFailure) {
    let dir = common_dir.join("entire");
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        write_atomic(
            &failure_note(common_dir),
            &crate::model::documents::to_json_bytes(failure),
            0o644,
        )
    });
    if let Err(e) = written {
        log::info!("could not note the hook's failure: {e}");
    }
}

/// Takes away the note of a failed hook: a hook of that agent has succeeded since.
fn clear_failure(common_dir: &Path, agent: &str) {
    if last_failure(common_dir).is_some_and(|f| f.agent == agent) {
        let _ = std::fs::remove_file(failure_note(common_dir));
    }
}

/// The last failure of an agent hook no later hook of that agent has cleared.
pub fn last_failure(common_dir: &Path) -> Option<HookFailure> {
    read_owned(&failure_note(common_dir), 1 << 16)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_relative_to_the_work_tree() {
        let root = Path::new("/home/u/proj");
        assert_eq!(
            relative_to("/home/u/proj/src/a.rs", Some(root), None),
            "src/a.rs"
        );
        assert_eq!(
            relative_to("/elsewhere/b.rs", Some(root), None),
            "/elsewhere/b.rs"
        );
        assert_eq!(relative_to("src/c.rs", Some(root), None), "src/c.rs");
        assert_eq!(
            relative_to("/real/proj/d.rs", Some(root), Some(Path::new("/real/proj"))),
            "d.rs"
        );
    }
}
