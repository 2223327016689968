//! Transcripts of JSON lines: which agent wrote them, and the loop over their lines.
//!
//! The first entry an agent claims decides the format ([`registry::line_format`]); entries of
//! another shape are skipped. Claude Code and Codex transcripts, the large ones, are read
//! through typed entries, and once the format is known only the lines that can hold a prompt or
//! a write ([`registry::may_matter`]) are decoded at all; the other agents' entries are read as
//! JSON values.

use serde_json::Value;

use crate::agents::id::TranscriptFormat;
use crate::agents::registry;
use crate::agents::turns::{AgentWrites, Turns};
use crate::base::lines::split_lines;

/// Reads the writes and prompts of a JSONL transcript.
pub(super) fn extract(transcript: &[u8]) -> AgentWrites {
    let mut out = AgentWrites::new(TranscriptFormat::Unknown);
    let mut reader = JsonLines::default();
    for (i, raw) in split_lines(transcript).enumerate() {
        let raw = raw.trim_ascii();
        if raw.is_empty() {
            continue;
        }
        match reader.line(raw, i + 1, &mut out) {
            true => out.json_lines += 1,
            false => out.skipped_lines += 1,
        }
    }
    out.format = reader.format();
    out
}

/// A JSONL transcript read a line at a time: the format, once an entry of a known shape said.
#[derive(Default)]
pub(super) struct JsonLines {
    known: Option<TranscriptFormat>,
}

impl JsonLines {
    /// The format recognised so far.
    pub(super) fn format(&self) -> TranscriptFormat {
        self.known.unwrap_or(TranscriptFormat::Unknown)
    }

    /// Reads the non-empty line `raw` (line number `line`), reporting to `out`; whether it is
    /// JSON.
    pub(super) fn line<T: Turns>(&mut self, raw: &[u8], line: usize, out: &mut T) -> bool {
        let known = self.known;
        let typed = known.is_some_and(registry::typed);
        // Once the format is known to be one read through typed entries (Claude Code's or
        // Codex's), only lines that can hold a prompt or a write are decoded (unless every
        // entry is wanted); the others (tool results, most of a transcript's bytes) are only
        // checked to look like a JSON object.
        if typed && !T::EVERY_ENTRY && !registry::may_matter(raw) {
            return raw.first() == Some(&b'{') && raw.last() == Some(&b'}');
        }
        if typed {
            return registry::read_typed_line(raw, line, known, out);
        }
        let Ok(value) = serde_json::from_slice::<Value>(raw) else {
            return false;
        };
        let format = match known {
            Some(f) => f,
            None => match registry::line_format(&value) {
                Some(f) => *self.known.insert(f),
                None => {
                    if registry::is_bookkeeping_before_format(&value) {
                        out.known();
                    }
                    return true;
                }
            },
        };
        // The entry that decided: read it as every later one is.
        if registry::typed(format) {
            return registry::read_typed_line(raw, line, self.known, out);
        }
        registry::read_value_line(format, &value, line, out);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_with_spaces_between_tokens_reads_as_compact_json_does() {
        // As Python's json.dumps writes it: `", "` and `": "`. The second prompt must be seen
        // although the format is known by then and most lines are only scanned.
        let spaced = concat!(
            r#"{"type": "user", "message": {"role": "user", "content": "first"}, "timestamp": "t1"}"#,
            "\n",
            r#"{"type": "user", "message": {"role" :"user", "content": [{"type": "tool_result", "tool_use_id" : "x", "content": "read"}]}, "timestamp": "t2"}"#,
            "\n",
            r#"{"type": "user", "message": {"role" : "user", "content": [{"type" : "text", "text": "second"}]}, "timestamp": "t3"}"#,
            "\n",
            r#"{"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "w", "name": "Write", "input": {"file_path": "/p/a.go", "content": "package a\n"}}]}, "timestamp": "t4"}"#,
            "\n",
        );
        let compact: String = spaced
            .replace(": ", ":")
            .replace(" :", ":")
            .replace(", ", ",");
        let (a, b) = (extract(spaced.as_bytes()), extract(compact.as_bytes()));
        assert_eq!(a, b);
        let prompts: Vec<&str> = a.prompts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(prompts, ["first", "second"]);
        assert_eq!(
            a.writes[0].prompt,
            Some(1),
            "the write follows the second prompt"
        );
        assert_eq!(a.json_lines, 4);
    }
}
