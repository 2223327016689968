//! A hook event of any agent, agent-neutral: what happened, to which session, and where the
//! session's transcript is, read from the JSON payload the agent hands its hook command.

use std::path::PathBuf;

use serde_json::Value;

/// What an event says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A session started (or resumed).
    SessionStart,
    /// The user submitted a prompt.
    Prompt,
    /// A tool call finished.
    ToolUsed,
    /// The agent finished its turn.
    TurnEnd,
    /// A subagent finished.
    SubagentEnd,
    /// The session ended.
    SessionEnd,
}

impl EventKind {
    /// Whether the agent's transcript is read and staged at this event: at the ends of turns
    /// and sessions, so that a crash or an exit loses nothing. The other events only note that
    /// the session is active (cheap: they run on every prompt and tool call, and the agent waits
    /// for them); the commit hooks read the transcript as it is at the commit.
    pub fn stages_transcript(self) -> bool {
        matches!(
            self,
            EventKind::TurnEnd | EventKind::SubagentEnd | EventKind::SessionEnd
        )
    }
}

/// One event, as read from its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEvent {
    /// What happened.
    pub kind: EventKind,
    /// The agent's session ID (not yet validated as a staged session's name).
    pub session_id: String,
    /// The session's transcript, when the payload names it (or the agent's layout does).
    pub transcript: Option<PathBuf>,
    /// The directory the agent works in, when the payload says.
    pub cwd: Option<PathBuf>,
    /// The prompt the user submitted, for a [`EventKind::Prompt`] whose payload carries it.
    pub prompt: Option<String>,
    /// The subagent that finished, for a [`EventKind::SubagentEnd`] whose payload names it.
    pub subagent: Option<SubagentRef>,
}

/// A subagent, as the event of its end names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentRef {
    /// Its ID.
    pub id: String,
    /// Its own transcript, when the payload names it.
    pub transcript: Option<PathBuf>,
}

/// Why a payload could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// The payload is not a JSON object.
    #[error("the hook's input is not a JSON object: {0}")]
    NotJson(String),
    /// The payload names no session.
    #[error("the hook's input names no session (none of {0})")]
    NoSession(String),
}

/// Where an agent's payload keeps each thing, as JSON pointers tried in order.
#[derive(Debug, Clone, Copy)]
pub struct PayloadKeys {
    /// The session ID.
    pub session: &'static [&'static str],
    /// The transcript's path.
    pub transcript: &'static [&'static str],
    /// The working directory.
    pub cwd: &'static [&'static str],
    /// The prompt.
    pub prompt: &'static [&'static str],
    /// The ID of a subagent that finished.
    pub agent_id: &'static [&'static str],
    /// That subagent's transcript.
    pub agent_transcript: &'static [&'static str],
}

impl PayloadKeys {
    /// The keys of Claude Code's payloads, which Codex, Droid and Gemini CLI share.
    pub const SNAKE_CASE: PayloadKeys = PayloadKeys {
        session: &["/session_id"],
        transcript: &["/transcript_path"],
        cwd: &["/cwd"],
        prompt: &["/prompt"],
        agent_id: &["/agent_id"],
        agent_transcript: &["/agent_transcript_path"],
    };

    /// Reads the event `kind` from `payload` (the bytes the agent wrote on the hook's stdin).
    pub fn read(&self, kind: EventKind, payload: &[u8]) -> Result<HookEvent, PayloadError> {
        let v: Value =
            serde_json::from_slice(payload).map_err(|e| PayloadError::NotJson(e.to_string()))?;
        if !v.is_object() {
            return Err(PayloadError::NotJson("not an object".into()));
        }
        let text = |keys: &[&str]| {
            keys.iter().find_map(|k| {
                v.pointer(k)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
            })
        };
        let session_id =
            text(self.session).ok_or_else(|| PayloadError::NoSession(self.session.join(", ")))?;
        Ok(HookEvent {
            kind,
            session_id,
            transcript: text(self.transcript).map(PathBuf::from),
            cwd: text(self.cwd).map(PathBuf::from),
            prompt: (kind == EventKind::Prompt)
                .then(|| text(self.prompt))
                .flatten(),
            subagent: (kind == EventKind::SubagentEnd)
                .then(|| text(self.agent_id))
                .flatten()
                .map(|id| SubagentRef {
                    id,
                    transcript: text(self.agent_transcript).map(PathBuf::from),
                }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: PayloadKeys = PayloadKeys {
        session: &["/session_id", "/sessionId"],
        transcript: &["/transcript_path"],
        cwd: &["/cwd"],
        prompt: &["/prompt"],
        agent_id: &["/agent_id"],
        agent_transcript: &["/agent_transcript_path"],
    };

    #[test]
    fn a_payload_is_read_by_its_keys_in_order() {
        let e = KEYS
            .read(
                EventKind::Prompt,
                br#"{"sessionId": "s2", "transcript_path": "/t.jsonl", "cwd": "/p", "prompt": "hi"}"#,
            )
            .unwrap();
        assert_eq!(e.session_id, "s2");
        assert_eq!(e.transcript, Some(PathBuf::from("/t.jsonl")));
        assert_eq!(e.prompt.as_deref(), Some("hi"));
        let e = KEYS
            .read(
                EventKind::ToolUsed,
                br#"{"session_id": "s", "prompt": "x"}"#,
            )
            .unwrap();
        assert_eq!((e.transcript, e.prompt), (None, None));
        assert!(matches!(
            KEYS.read(EventKind::TurnEnd, br#"{"session_id": ""}"#),
            Err(PayloadError::NoSession(_))
        ));
        assert!(matches!(
            KEYS.read(EventKind::TurnEnd, b"[1]"),
            Err(PayloadError::NotJson(_))
        ));
    }
}
