//! Every agent whose transcripts are read, and which one a transcript is: each agent's claim is
//! asked here, in one order, and what reading its entries takes is dispatched to its reader.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use super::amp::Amp;
use super::claude_code::{self, ClaudeCode};
use super::cline::Cline;
use super::codex::{self, Codex};
use super::copilot::CopilotCli;
use super::cursor::Cursor;
use super::droid::Droid;
use super::gemini::GeminiCli;
use super::id::TranscriptFormat;
use super::kiro::Kiro;
use super::opencode::OpenCode;
use super::pi::Pi;
use super::turns::json::array_at;
use super::turns::{Turns, Unit};
use super::{TranscriptReader, Usage};

/// An agent's format, and its claim on a JSONL entry or a document ([`TranscriptReader::claims`]).
type Claim = (TranscriptFormat, fn(&Value) -> bool);

/// The agents that write JSON lines, each with its claim on a line. No two claim the same line.
const LINE_AGENTS: [Claim; 8] = [
    (ClaudeCode::FORMAT, ClaudeCode::claims),
    (Codex::FORMAT, Codex::claims),
    (Droid::FORMAT, Droid::claims),
    (Pi::FORMAT, Pi::claims),
    (CopilotCli::FORMAT, CopilotCli::claims),
    (Cursor::FORMAT, Cursor::claims),
    (Amp::FORMAT, Amp::claims),
    // Its first format: the messages of the export, one per line.
    (OpenCode::FORMAT, OpenCode::claims_line),
];

/// The agents that write one JSON document, each with its claim on a document, in the order
/// asked (the first that claims a document has it).
const DOCUMENT_AGENTS: [Claim; 4] = [
    (Cline::FORMAT, Cline::claims),
    (GeminiCli::FORMAT, GeminiCli::claims),
    (OpenCode::FORMAT, OpenCode::claims),
    (Kiro::FORMAT, Kiro::claims),
];

/// The format of the JSONL entry `v`, when an agent claims it.
pub(crate) fn line_format(v: &Value) -> Option<TranscriptFormat> {
    claimed(&LINE_AGENTS, v)
}

/// Whether the JSONL entry `v`, which no agent claims, is Claude Code's bookkeeping (before any
/// entry said which agent's transcript it is): an entry of a known shape holding nothing of the
/// conversation.
pub(crate) fn is_bookkeeping_before_format(v: &Value) -> bool {
    claude_code::looks_like_bookkeeping(v)
}

/// The format of the transcript that is the JSON document `doc`, when an agent claims it.
pub(crate) fn document_format(doc: &Value) -> Option<TranscriptFormat> {
    claimed(&DOCUMENT_AGENTS, doc)
}

/// The document the JSON lines `text` come to, when they are the log of an agent that records
/// its document that way (Gemini CLI since 0.60).
pub(crate) fn replayed_document(text: &[u8]) -> Option<Value> {
    super::gemini::replay(text)
}

/// The tool call that started the subagent `agent_id` of the session whose transcript is
/// `transcript`, and the subagent's type, where the agent's transcript records them (Claude
/// Code's and Codex's do).
pub fn subagent_call(transcript: &[u8], agent_id: &str) -> Option<(String, Option<String>)> {
    claude_code::subagent_call(transcript, agent_id)
        .or_else(|| codex::subagent_call(transcript, agent_id))
}

/// The format of the first of `agents` that claims `v`.
fn claimed(agents: &[Claim], v: &Value) -> Option<TranscriptFormat> {
    agents.iter().find(|(_, claims)| claims(v)).map(|(f, _)| *f)
}

/// The entries of `doc`, a document transcript in `format`, and what each is.
pub(crate) fn entries(format: TranscriptFormat, doc: &Value) -> (&[Value], Unit) {
    let (key, unit) = match format {
        TranscriptFormat::GeminiCli => GeminiCli::ENTRIES,
        TranscriptFormat::OpenCode => OpenCode::ENTRIES,
        TranscriptFormat::Cline => Cline::ENTRIES,
        TranscriptFormat::Kiro => Kiro::ENTRIES,
        _ => return (&[], Unit::Message),
    };
    (array_at(doc, key), unit)
}

/// Whether `item`, an entry of a document transcript in `format`, is still being written: an
/// OpenCode assistant message whose step has not ended (OpenCode records its tokens then).
pub(crate) fn in_progress(format: TranscriptFormat, item: &Value) -> bool {
    format == TranscriptFormat::OpenCode && super::opencode::in_progress(item)
}

/// Reads `item`, entry number `entry` of a document transcript in `format`.
pub(crate) fn read_document_entry(
    format: TranscriptFormat,
    item: &Value,
    entry: usize,
    out: &mut impl Turns,
) {
    match format {
        TranscriptFormat::GeminiCli => GeminiCli::read(item, entry, out),
        TranscriptFormat::OpenCode => OpenCode::read(item, entry, out),
        TranscriptFormat::Cline => Cline::read(item, entry, out),
        TranscriptFormat::Kiro => Kiro::read(item, entry, out),
        _ => {}
    }
}

/// Whether a JSONL transcript in `format` is read through typed entries (Claude Code's and
/// Codex's, the large ones: [`read_typed_line`]) rather than JSON values
/// ([`read_value_line`]).
pub(crate) fn typed(format: TranscriptFormat) -> bool {
    matches!(
        format,
        TranscriptFormat::ClaudeCode | TranscriptFormat::Codex
    )
}

/// Reads the JSONL entry `v` (on transcript line `line`) of a transcript in `format`, one read
/// as a JSON value.
pub(crate) fn read_value_line(
    format: TranscriptFormat,
    v: &Value,
    line: usize,
    out: &mut impl Turns,
) {
    match format {
        TranscriptFormat::Cursor => Cursor::read(v, line, out),
        TranscriptFormat::CopilotCli => CopilotCli::read(v, line, out),
        TranscriptFormat::Droid => Droid::read(v, line, out),
        TranscriptFormat::Pi => Pi::read(v, line, out),
        TranscriptFormat::Amp => Amp::read(v, line, out),
        TranscriptFormat::OpenCode => OpenCode::read(v, line, out),
        _ => {}
    }
}

/// Whether the line `raw` of a transcript read through typed entries may hold a prompt or a
/// write: of either of the two agents, whichever the transcript is (a line of the other is
/// skipped once decoded).
pub(crate) fn may_matter(raw: &[u8]) -> bool {
    claude_code::may_matter(raw) || codex::may_matter(raw)
}

/// Reads the line `raw` (line number `line`) of a Claude Code or Codex transcript in `known`
/// format (a line of the other of the two formats is skipped); whether it is JSON.
pub(crate) fn read_typed_line(
    raw: &[u8],
    line: usize,
    known: Option<TranscriptFormat>,
    out: &mut impl Turns,
) -> bool {
    let entry: TypedEntry = match serde_json::from_slice(raw) {
        Ok(e) => e,
        Err(_) => return serde_json::from_slice::<IgnoredAny>(raw).is_ok(),
    };
    let kind = entry.kind.as_str();
    let format = match () {
        _ if claude_code::is_turn(kind, entry.message.is_some()) => TranscriptFormat::ClaudeCode,
        _ if codex::is_entry(kind) => TranscriptFormat::Codex,
        _ if claude_code::is_bookkeeping(kind) && known == Some(TranscriptFormat::ClaudeCode) => {
            out.known();
            return true;
        }
        _ => return true,
    };
    if known != Some(format) {
        return true;
    }
    let TypedEntry {
        kind,
        timestamp,
        is_meta,
        message,
        payload,
    } = entry;
    match format {
        TranscriptFormat::ClaudeCode => {
            let entry = claude_code::Entry {
                kind,
                timestamp,
                is_meta,
                message,
            };
            ClaudeCode::read(entry, line, out);
        }
        _ => {
            let entry = codex::Entry {
                kind,
                timestamp,
                payload,
            };
            Codex::read(entry, line, out);
        }
    }
    true
}

/// A Claude Code or Codex entry: the fields either format uses, the rest skipped unread. Decoded
/// once for both, since which of the two a line is shows only once it is decoded.
#[derive(Deserialize)]
struct TypedEntry {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    timestamp: String,
    #[serde(rename = "isMeta", default)]
    is_meta: bool,
    #[serde(default)]
    message: Option<claude_code::Message>,
    #[serde(default)]
    payload: Option<codex::Payload>,
}

/// How a transcript in `format` records token usage.
pub(crate) fn usage(format: TranscriptFormat) -> Usage {
    match format {
        TranscriptFormat::ClaudeCode => ClaudeCode::USAGE,
        TranscriptFormat::Codex => Codex::USAGE,
        TranscriptFormat::GeminiCli => GeminiCli::USAGE,
        TranscriptFormat::OpenCode => OpenCode::USAGE,
        TranscriptFormat::Cursor => Cursor::USAGE,
        TranscriptFormat::CopilotCli => CopilotCli::USAGE,
        TranscriptFormat::Kiro => Kiro::USAGE,
        TranscriptFormat::Droid => Droid::USAGE,
        TranscriptFormat::Pi => Pi::USAGE,
        TranscriptFormat::Cline => Cline::USAGE,
        TranscriptFormat::Amp => Amp::USAGE,
        TranscriptFormat::Unknown => Usage::None,
    }
}
