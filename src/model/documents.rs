//! The checkpoint documents: the root `metadata.json` summary and each session's
//! `<slot>/metadata.json` (docs/format.md, "Metadata fields" and "JSON").
//!
//! Fields are declared in the reference's key order, which is the order they are written in.
//! Keys this version does not model (legacy `checkpoint_version`, `context`, `transcript_path`,
//! or anything a newer writer adds) are kept in `extra` and written back after the known keys,
//! so rewriting a document never drops data. Every array accepts `null`.

// The fields are the documents' JSON keys, listed key by key in docs/format.md, "Metadata fields".
#![allow(missing_docs)]

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// Subagent token usage nests; summation and validation stop at this depth
/// (`MaxSubagentDepth`), because a hostile deep chain would otherwise blow up the root summary.
pub const MAX_SUBAGENT_DEPTH: usize = 16;

/// The strategy every checkpoint written by this tool records.
pub const DEFAULT_STRATEGY: &str = "manual-commit";

/// The longest subject [`prompt_subject`] returns, in characters (more is cut with `…`).
pub const SUBJECT_CHARS: usize = 200;

/// What a checkpoint or session was about, for one-line listings: the first non-empty line of
/// its first prompt (`prompt.txt` holds the prompts in order), trimmed, at most
/// [`SUBJECT_CHARS`] characters; `None` when there is no such line. Invalid UTF-8 is replaced.
pub fn prompt_subject(prompts: &[u8]) -> Option<String> {
    // The first line is near the start: only that much is decoded, however long the file.
    let head = &prompts[..prompts.len().min(SUBJECT_CHARS * 8 + 4096)];
    let text = String::from_utf8_lossy(head);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(match line.char_indices().nth(SUBJECT_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    })
}

/// Errors decoding a document.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The bytes are not the expected JSON document.
    #[error("invalid {what}")]
    Json {
        /// Which document (e.g. `root metadata.json`).
        what: &'static str,
        /// The decoder's error.
        #[source]
        source: serde_json::Error,
    },
    /// Token usage nested deeper than [`MAX_SUBAGENT_DEPTH`].
    #[error("token usage nests subagent_tokens deeper than {MAX_SUBAGENT_DEPTH} levels")]
    TooDeep,
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Token counters (docs/format.md, "Metadata fields", `token_usage`). Variant fields such as
/// `cost_usd` are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenUsage {
    #[serde(default)]
    pub input_tokens: i64,
    #[serde(default)]
    pub cache_creation_tokens: i64,
    #[serde(default)]
    pub cache_read_tokens: i64,
    #[serde(default)]
    pub output_tokens: i64,
    #[serde(default)]
    pub api_call_count: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_tokens: Option<Box<TokenUsage>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TokenUsage {
    /// Parses caller-supplied JSON, rejecting nesting deeper than [`MAX_SUBAGENT_DEPTH`].
    pub fn parse_input(text: &str) -> Result<Self, ModelError> {
        // Check the depth on the generic value first: serde_json's own recursion limit (128)
        // would otherwise be the only bound.
        let value: Value = serde_json::from_str(text).map_err(|source| ModelError::Json {
            what: "token usage",
            source,
        })?;
        let mut depth = 0;
        let mut cur = &value;
        while let Some(next) = cur.get("subagent_tokens").filter(|v| !v.is_null()) {
            depth += 1;
            if depth > MAX_SUBAGENT_DEPTH {
                return Err(ModelError::TooDeep);
            }
            cur = next;
        }
        serde_json::from_value(value).map_err(|source| ModelError::Json {
            what: "token usage",
            source,
        })
    }

    /// Adds `other` into `self`, recursing into `subagent_tokens` up to the depth cap.
    pub fn add(&mut self, other: &TokenUsage) {
        self.add_at(other, 0);
    }

    fn add_at(&mut self, other: &TokenUsage, depth: usize) {
        self.input_tokens += other.input_tokens;
        self.cache_creation_tokens += other.cache_creation_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.output_tokens += other.output_tokens;
        self.api_call_count += other.api_call_count;
        if let Some(sub) = &other.subagent_tokens {
            if depth + 1 < MAX_SUBAGENT_DEPTH {
                self.subagent_tokens
                    .get_or_insert_with(Default::default)
                    .add_at(sub, depth + 1);
            }
        }
    }

    /// Input + cache creation + cache read + output: the figure people are shown.
    pub fn total(&self) -> i64 {
        self.input_tokens + self.cache_creation_tokens + self.cache_read_tokens + self.output_tokens
    }
}

/// One entry of the root summary's `sessions` array: paths from the commit tree root, with a
/// leading `/` (`/0/metadata.json` in git-refs, `/ab/cdef012345/0/metadata.json` on the branch).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionFilePaths {
    #[serde(default)]
    pub metadata: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub transcript: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub compact_transcript: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub content_hash: String,
    #[serde(default)]
    pub prompt: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub assets_manifest: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The root `metadata.json` (CheckpointSummary).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckpointSummary {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cli_version: String,
    /// Empty string or a valid ID (validated by [`CheckpointSummary::from_json`]).
    #[serde(default)]
    pub checkpoint_id: String,
    #[serde(default)]
    pub strategy: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub branch: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub commit_sha: String,
    #[serde(default)]
    pub checkpoints_count: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub files_touched: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub sessions: Vec<SessionFilePaths>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_usage: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_usage: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combined_attribution: Option<Value>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub has_review: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub has_investigation: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub imported: bool,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub token_usage_version: i64,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A session's `<slot>/metadata.json` (Metadata).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMetadata {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cli_version: String,
    #[serde(default)]
    pub checkpoint_id: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub strategy: String,
    #[serde(default)]
    pub created_at: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub branch: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub commit_sha: String,
    #[serde(default)]
    pub checkpoints_count: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub save_step_count: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub files_touched: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agent: String,
    #[serde(default)]
    pub model: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub turn_id: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_task: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_use_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub transcript_identifier_at_start: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checkpoint_transcript_start: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub token_transcript_start: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub transcript_lines_at_start: i64,
    /// A pointer in the reference: absent = legacy delta compact file, `0` = full file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_transcript_start: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_usage: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_usage: Option<Value>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skill_events_version: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_events: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_metrics: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_attribution: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_attributions: Option<Value>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_skills: Option<Value>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub review_prompt: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub investigate_run_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub investigate_topic: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn decode<T: DeserializeOwned>(bytes: &[u8], what: &'static str) -> Result<T, ModelError> {
    serde_json::from_slice(bytes).map_err(|source| ModelError::Json { what, source })
}

fn check_id_field(id: &str, what: &'static str) -> Result<(), ModelError> {
    if id.is_empty() {
        return Ok(());
    }
    crate::base::id::CheckpointId::parse(id)
        .map(|_| ())
        .map_err(|e| ModelError::Json {
            what,
            source: serde::de::Error::custom(e),
        })
}

impl CheckpointSummary {
    /// Decodes a root `metadata.json`; `checkpoint_id` must be empty or a valid ID.
    pub fn from_json(bytes: &[u8]) -> Result<Self, ModelError> {
        let s: Self = decode(bytes, "root metadata.json")?;
        check_id_field(&s.checkpoint_id, "root metadata.json")?;
        Ok(s)
    }

    /// Encodes in the reference format.
    pub fn to_json(&self) -> Vec<u8> {
        to_json_bytes(self)
    }
}

impl SessionMetadata {
    /// Decodes a session `metadata.json`; `checkpoint_id` must be empty or a valid ID.
    pub fn from_json(bytes: &[u8]) -> Result<Self, ModelError> {
        let s: Self = decode(bytes, "session metadata.json")?;
        check_id_field(&s.checkpoint_id, "session metadata.json")?;
        Ok(s)
    }

    /// Encodes in the reference format.
    pub fn to_json(&self) -> Vec<u8> {
        to_json_bytes(self)
    }

    /// The intent of the session's summary (`summary.intent`), when it has one.
    pub fn intent(&self) -> Option<&str> {
        self.summary.as_ref()?.get("intent")?.as_str()
    }
}

/// A `serde_json` formatter that writes what Go's `json.Encoder` writes with `SetIndent("", "  ")`
/// and `SetEscapeHTML(false)`: 2-space indent, `<>&` literal, and U+2028/U+2029 escaped (Go
/// always escapes those two line separators).
struct GoFormatter(serde_json::ser::PrettyFormatter<'static>);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {
        $(fn $name<W: ?Sized + std::io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> std::io::Result<()> {
            self.0.$name(w $(, $arg)*)
        })*
    };
}

impl serde_json::ser::Formatter for GoFormatter {
    delegate!(
        begin_array(),
        end_array(),
        begin_array_value(first: bool),
        end_array_value(),
        begin_object(),
        end_object(),
        begin_object_key(first: bool),
        begin_object_value(),
        end_object_value(),
    );

    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some(pos) = rest.find(['\u{2028}', '\u{2029}']) {
            w.write_all(&rest.as_bytes()[..pos])?;
            let c = rest[pos..].chars().next().unwrap_or('\u{2028}');
            write!(w, "\\u{:04x}", c as u32)?;
            rest = &rest[pos + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }
}

/// Encodes any document the way the reference does: 2-space indent, no HTML escaping, one
/// trailing newline.
pub fn to_json_bytes<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    let fmt = GoFormatter(serde_json::ser::PrettyFormatter::with_indent(b"  "));
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    // Serializing plain data structures into a Vec cannot fail.
    value
        .serialize(&mut ser)
        .expect("serializing a document to memory");
    out.push(b'\n');
    out
}

impl crate::base::error::ExitStatus for ModelError {
    fn exit_code(&self) -> i32 {
        match self {
            ModelError::Json { .. } | ModelError::TooDeep => crate::base::error::FAILURE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `metadata` fuzz target: without correctly rounded float parsing, a number
    /// kept under an unknown key changed by one ulp on every rewrite (`1.5666666666666669`
    /// decoded as `1.5666666666666667`).
    #[test]
    fn floats_under_unknown_keys_survive_a_rewrite() {
        for text in [
            r#"{"checkpoint_id":"","future":[1.566666666666666666666666]}"#,
            r#"{"checkpoint_id":"","future":1.5666666666666669}"#,
        ] {
            let doc = CheckpointSummary::from_json(text.as_bytes()).unwrap();
            let again = CheckpointSummary::from_json(&doc.to_json()).unwrap();
            assert_eq!(again, doc, "{text}");
        }
        let doc = CheckpointSummary::from_json(br#"{"x":1.5666666666666669}"#).unwrap();
        assert_eq!(doc.extra["x"].as_f64(), Some(1.5666666666666669_f64));
    }

    #[test]
    fn session_metadata_key_order_and_format() {
        let m = SessionMetadata {
            checkpoint_id: "a1b2c3d4e5f6".into(),
            session_id: "sess-1".into(),
            strategy: DEFAULT_STRATEGY.into(),
            created_at: "2026-10-01T19:12:01.19884Z".into(),
            checkpoints_count: 1,
            files_touched: vec!["a.go".into()],
            agent: "Claude <Code> & co".into(),
            ..Default::default()
        };
        let text = String::from_utf8(m.to_json()).unwrap();
        let expected = r#"{
  "checkpoint_id": "a1b2c3d4e5f6",
  "session_id": "sess-1",
  "strategy": "manual-commit",
  "created_at": "2026-10-01T19:12:01.19884Z",
  "checkpoints_count": 1,
  "files_touched": [
    "a.go"
  ],
  "agent": "Claude <Code> & co",
  "model": ""
}
"#;
        assert_eq!(text, expected);
    }

    #[test]
    fn legacy_and_unknown_keys_survive_a_round_trip() {
        let input = br#"{"checkpoint_id":"a1b2c3d4e5f6","strategy":"manual-commit","checkpoints_count":1,"files_touched":null,"sessions":[{"metadata":"/a1/b2c3d4e5f6/0/metadata.json","transcript":"/a1/b2c3d4e5f6/0/full.jsonl","context":"/a1/b2c3d4e5f6/0/context.md","content_hash":"","prompt":""}],"checkpoint_version":"branch-v1","future_key":{"x":[1,2]}}"#;
        let s = CheckpointSummary::from_json(input).unwrap();
        assert!(s.files_touched.is_empty());
        assert_eq!(
            s.sessions[0].extra["context"],
            "/a1/b2c3d4e5f6/0/context.md"
        );
        let out = String::from_utf8(s.to_json()).unwrap();
        assert!(out.contains("\"checkpoint_version\": \"branch-v1\""));
        assert!(out.contains("\"future_key\": {\n    \"x\": [\n      1,\n      2\n    ]\n  }"));
        assert!(out.contains("\"context\": \"/a1/b2c3d4e5f6/0/context.md\""));
        let again = CheckpointSummary::from_json(out.as_bytes()).unwrap();
        assert_eq!(again, s);
    }

    #[test]
    fn session_nulls_and_legacy_transcript_path() {
        let input = br#"{"checkpoint_id":"","session_id":"s","files_touched":null,"transcript_path":"/tmp/x.jsonl","compact_transcript_start":0}"#;
        let m = SessionMetadata::from_json(input).unwrap();
        assert_eq!(m.compact_transcript_start, Some(0));
        let out = String::from_utf8(m.to_json()).unwrap();
        assert!(out.contains("\"compact_transcript_start\": 0"));
        assert!(out.contains("\"transcript_path\": \"/tmp/x.jsonl\""));
    }

    #[test]
    fn invalid_checkpoint_id_field_rejected() {
        let err = CheckpointSummary::from_json(br#"{"checkpoint_id":"../x"}"#).unwrap_err();
        assert!(crate::base::error::error_chain(&err).contains("invalid checkpoint ID"));
        assert!(CheckpointSummary::from_json(b"{not json").is_err());
    }

    #[test]
    fn go_escapes_line_separators_only() {
        let v = serde_json::json!({"s": "a\u{2028}b\u{2029}c<&>\n"});
        let out = String::from_utf8(to_json_bytes(&v)).unwrap();
        assert_eq!(out, "{\n  \"s\": \"a\\u2028b\\u2029c<&>\\n\"\n}\n");
    }

    #[test]
    fn token_usage_sum_recurses_with_cap() {
        let mut deep = TokenUsage {
            input_tokens: 1,
            ..Default::default()
        };
        for _ in 0..40 {
            deep = TokenUsage {
                input_tokens: 1,
                subagent_tokens: Some(Box::new(deep)),
                ..Default::default()
            };
        }
        let mut sum = TokenUsage::default();
        sum.add(&deep);
        sum.add(&deep);
        assert_eq!(sum.input_tokens, 2);
        let mut depth = 0;
        let mut cur = &sum;
        while let Some(next) = cur.subagent_tokens.as_deref() {
            depth += 1;
            cur = next;
        }
        assert_eq!(depth, MAX_SUBAGENT_DEPTH - 1);
        assert_eq!(
            sum.subagent_tokens.as_ref().unwrap().input_tokens,
            2,
            "nested counters are summed too"
        );
    }

    #[test]
    fn token_usage_input_depth_cap() {
        let mut text = String::from("{\"input_tokens\":1}");
        for _ in 0..MAX_SUBAGENT_DEPTH {
            text = format!("{{\"input_tokens\":1,\"subagent_tokens\":{text}}}");
        }
        assert!(TokenUsage::parse_input(&text).is_ok());
        let deeper = format!("{{\"subagent_tokens\":{text}}}");
        assert!(matches!(
            TokenUsage::parse_input(&deeper),
            Err(ModelError::TooDeep)
        ));
        assert!(TokenUsage::parse_input("nope").is_err());
        let kept = TokenUsage::parse_input(r#"{"input_tokens":3,"cost_usd":0.25}"#).unwrap();
        assert_eq!(kept.extra["cost_usd"], 0.25);
    }
}
