//! Reading a transcript whatever its format: which agent's it is (one JSON document, or JSON
//! lines read in one loop, [`jsonl`]), what it shows being written ([`extract`]), the
//! [`conversation`] it records, and the token usage it records ([`usage`]); each dispatched to
//! the agent's reader through the registry.

pub mod conversation;
mod jsonl;
mod usage;

pub use usage::{entry_count, token_usage};

use serde_json::Value;

use super::id::TranscriptFormat;
use super::registry;
use super::turns::AgentWrites;

/// The version of what [`extract`] returns for a given transcript. Bump it whenever a change
/// of the code would make it return something else for some transcript: results cached by an
/// older version (`ops::writes_cache`) are then ignored.
pub const EXTRACT_VERSION: u32 = 9;

/// Reads the writes and prompts of a transcript, whatever its format.
pub fn extract(transcript: &[u8]) -> AgentWrites {
    let Some(doc) = document(transcript) else {
        return jsonl::extract(transcript);
    };
    let mut out = match registry::document_format(&doc.value) {
        Some(format) => {
            let mut out = AgentWrites::new(format);
            let (entries, _) = registry::entries(format, &doc.value);
            for (i, entry) in entries.iter().enumerate() {
                registry::read_document_entry(format, entry, i + 1, &mut out);
            }
            out
        }
        // One line of JSON may be a transcript of one entry.
        None if doc.one_line => return jsonl::extract(transcript),
        None => AgentWrites::new(TranscriptFormat::Unknown),
    };
    out.json_lines = 1;
    out
}

/// Whether `transcript` is in a shape agents write: JSON lines (its first and last non-empty
/// lines each parse as JSON; the lines between are left unparsed, so checking costs nothing
/// on a large transcript), or one JSON document of an agent that stores one (Gemini CLI,
/// OpenCode, Kiro). An empty transcript is one. A transcript that is not is still stored as
/// given; only nothing can be read from it.
pub fn is_transcript_shaped(transcript: &[u8]) -> bool {
    if let Some(doc) = document(transcript) {
        if registry::document_format(&doc.value).is_some() {
            return true;
        }
        if !doc.one_line {
            return false;
        }
    }
    let mut lines = transcript
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty());
    let json = |l: &[u8]| serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok();
    match (lines.next(), lines.next_back()) {
        (None, _) => true,
        (Some(first), last) => json(first) && last.is_none_or(json),
    }
}

/// A transcript that is one JSON document.
struct Document {
    value: Value,
    /// Whether it is on one line (then it may also be JSONL of one entry).
    one_line: bool,
}

/// The transcript as one JSON document, when it may be one: it is a single line, or its first
/// line is not JSON on its own (a pretty-printed document), or it is the JSON lines of an agent
/// that replays them into its document (Gemini CLI). Other JSON lines are never parsed whole.
fn document(transcript: &[u8]) -> Option<Document> {
    let text = transcript.trim_ascii();
    if text.first() != Some(&b'{') {
        return None;
    }
    let first = match memchr::memchr(b'\n', text) {
        None => text,
        Some(at) => &text[..at],
    };
    let one_line = first.len() == text.len();
    if !one_line && serde_json::from_slice::<serde::de::IgnoredAny>(first).is_ok() {
        // JSON lines: a log an agent replays into its document, or a JSONL transcript.
        return registry::replayed_document(text).map(|value| Document {
            value,
            one_line: false,
        });
    }
    let value = serde_json::from_slice(text).ok()?;
    Some(Document { value, one_line })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_and_known_documents_are_transcript_shaped() {
        for shaped in [
            &b""[..],
            b"\n\n",
            b"{\"type\":\"user\"}\n",
            b"{\"a\":1}\n{\"b\":2}\n\n",
            b"{\"kind\":\"other\"}",
            b"{\n  \"sessionId\": \"s\",\n  \"messages\": [{\"type\": \"user\", \"content\": \"hi\"}]\n}\n",
        ] {
            assert!(is_transcript_shaped(shaped), "{}", String::from_utf8_lossy(shaped));
        }
        for not in [
            &b"plain text\n"[..],
            b"{\"a\":1}\nthe end\n",
            b"# Notes\n{\"a\":1}\n",
            b"{\n  \"some\": \"document\"\n}\n",
        ] {
            assert!(
                !is_transcript_shaped(not),
                "{}",
                String::from_utf8_lossy(not)
            );
        }
    }

    #[test]
    fn what_is_not_a_known_transcript_yields_nothing() {
        let text = extract(b"plain text\nnot json either\n");
        assert!(!text.is_json());
        assert_eq!(text.skipped_lines, 2);
        assert_eq!(text.format, TranscriptFormat::Unknown);
        let other = extract(b"{\"kind\":\"other\",\"parts\":[]}\n");
        assert!(other.is_json());
        assert_eq!(other.format, TranscriptFormat::Unknown);
        assert!(other.writes.is_empty());
        let doc = extract(b"{\n  \"kind\": \"other\"\n}\n");
        assert_eq!(doc.format, TranscriptFormat::Unknown);
        assert!(doc.is_json(), "a document of another shape is still JSON");
        assert!(extract(b"").is_json());
    }
}
