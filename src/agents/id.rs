//! Which agent wrote a transcript: its format, as recognised from the transcript's content, and
//! the agent's name.

use serde::{Deserialize, Serialize};

/// The transcript format recognised from its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TranscriptFormat {
    /// Claude Code's session JSONL.
    #[serde(rename = "claude-code")]
    ClaudeCode,
    /// Codex's rollout JSONL.
    #[serde(rename = "codex")]
    Codex,
    /// Gemini CLI's session, one JSON document.
    #[serde(rename = "gemini-cli")]
    GeminiCli,
    /// OpenCode's session export, one JSON document.
    #[serde(rename = "opencode")]
    OpenCode,
    /// Cursor's agent transcript JSONL.
    #[serde(rename = "cursor")]
    Cursor,
    /// GitHub Copilot CLI's `events.jsonl`.
    #[serde(rename = "copilot-cli")]
    CopilotCli,
    /// Kiro's conversation, one JSON document.
    #[serde(rename = "kiro")]
    Kiro,
    /// Factory AI Droid's session JSONL.
    #[serde(rename = "droid")]
    Droid,
    /// Pi's session JSONL.
    #[serde(rename = "pi")]
    Pi,
    /// Cline's session messages, one JSON document.
    #[serde(rename = "cline")]
    Cline,
    /// Amp's thread messages, as our plugin writes them: JSON lines.
    #[serde(rename = "amp")]
    Amp,
    /// None of these: no write is read from it.
    #[serde(rename = "unknown")]
    Unknown,
}

impl TranscriptFormat {
    /// The name shown to people and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            TranscriptFormat::ClaudeCode => "claude-code",
            TranscriptFormat::Codex => "codex",
            TranscriptFormat::GeminiCli => "gemini-cli",
            TranscriptFormat::OpenCode => "opencode",
            TranscriptFormat::Cursor => "cursor",
            TranscriptFormat::CopilotCli => "copilot-cli",
            TranscriptFormat::Kiro => "kiro",
            TranscriptFormat::Droid => "droid",
            TranscriptFormat::Pi => "pi",
            TranscriptFormat::Cline => "cline",
            TranscriptFormat::Amp => "amp",
            TranscriptFormat::Unknown => "unknown",
        }
    }

    /// The agent whose format this is, as the reference names it in a session's `agent`.
    pub fn agent(self) -> &'static str {
        match self {
            TranscriptFormat::ClaudeCode => "Claude Code",
            TranscriptFormat::Codex => "Codex",
            TranscriptFormat::GeminiCli => "Gemini CLI",
            TranscriptFormat::OpenCode => "OpenCode",
            TranscriptFormat::Cursor => "Cursor",
            TranscriptFormat::CopilotCli => "Copilot CLI",
            TranscriptFormat::Kiro => "Kiro",
            TranscriptFormat::Droid => "Factory AI Droid",
            TranscriptFormat::Pi => "Pi",
            TranscriptFormat::Cline => "Cline",
            TranscriptFormat::Amp => "Amp",
            TranscriptFormat::Unknown => "an unknown agent",
        }
    }
}
