//! Secret redaction, applied to everything a checkpoint stores (transcripts, prompts, summaries,
//! attribution, session metadata) before any blob is written (docs/decisions.md, "Secrets are
//! redacted before anything is stored").
//!
//! Transcripts are agent JSONL, so a secret usually sits inside a JSON string where quotes are
//! escaped (`\"`) and newlines are the two characters `\n`; the built-in rules allow for both,
//! and a second pass reads the strings that spell characters as `\uXXXX` or `\/` escapes
//! plainly, so no escape hides a secret. User rules match the decoded text of JSON strings and
//! their replacement is encoded again, so no rule can break a JSON line. Rules work on bytes (a
//! transcript need not be UTF-8) and replace only what they match, so output is byte-identical
//! to input when nothing matches (see [`Redactor`]).
//!
//! The folder's modules, each one concern: [`rules`] is the table of built-in rules (shared
//! with `build.rs`, which compiles them into DFAs), [`compiled`] loads their engines,
//! [`secret`] decides what of a match is a secret, [`matching`] runs the rules over a text,
//! [`json`] holds the JSON-aware stages (decoding strings for the rules, encoding the
//! replacements), [`decode`] finds the secrets only a decoded or rejoined view of the text shows
//! (base64, hex, URL encoding, nested JSON strings, invisible characters, split tokens), and
//! [`parts`] rewrites a large text in place a part at a time.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use crate::base::session_id::{InvalidSessionIdError, SessionId};
use crate::base::threads::join;

mod compiled;
mod decode;
mod json;
mod matching;
mod parts;
mod rules;
mod secret;
#[cfg(test)]
mod tests;
mod user;

use decode::{redact_hidden, Views};
use json::{has_spelling_escape, pieces, redact_decoded, redact_escaped, redact_pieces, Shape};
use matching::redact_builtin;
use parts::{builtin_cut, plan, rewrite_in_parts, user_cut};
use secret::{credential_start, is_credential_name, is_placeholder};

/// The text every secret is replaced by.
pub const PLACEHOLDER: &str = "REDACTED";

/// Whether `text` is exactly one JSON value (surrounding whitespace allowed). Here, not in
/// [`json`], because [`parts`] cuts a text at JSON lines too, and [`json`] reaches [`parts`]
/// through [`matching`]: the folder's shared pieces are its own.
fn is_json(text: &[u8]) -> bool {
    std::str::from_utf8(text)
        .is_ok_and(|s| serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok())
}

/// Errors building a redactor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedactError {
    /// A user rule's pattern does not compile.
    #[error("redaction rule {name:?}: invalid pattern: {message}")]
    InvalidRule {
        /// The rule's name.
        name: String,
        /// The regex error.
        message: String,
    },
    /// A user rule's pattern can match the empty string (an empty pattern, `.*`, `\b`...):
    /// it would put the placeholder between characters and destroy the text.
    #[error("redaction rule {name:?}: the pattern can match the empty string; make it match at least one character")]
    MatchesEmpty {
        /// The rule's name.
        name: String,
    },
    /// A user rule from an untrusted file would replace much of any transcript.
    #[error("redaction rule {name:?}: the pattern matches {percent}% of a sample transcript; a committed rule may match at most {max}%")]
    TooBroad {
        /// The rule's name.
        name: String,
        /// How much of the sample it matches, in percent.
        percent: u32,
        /// The most allowed, in percent.
        max: u32,
    },
}

/// A user rule: the whole match of `pattern` is replaced.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserRule {
    /// A name for messages.
    pub name: String,
    /// A regular expression (Rust `regex` syntax).
    pub pattern: String,
}

/// The `redaction` block of the settings. Missing block or missing `enabled` = on with the
/// built-in rules; only an explicit `"enabled": false` turns redaction off.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactionSettings {
    /// `false` turns redaction off.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Extra rules, run after the built-ins.
    #[serde(default)]
    pub rules: Vec<UserRule>,
}

/// Stages 1 to 4 of [`Redactor`] (the built-in rules, and the views of [`decode`]) over
/// `input`: the redacted text and the count. With `beside` (the caller runs nothing else at
/// once) and a text of [`BESIDE_FROM`] bytes or more on a machine of several cores, stages 1 and
/// 4 run on a thread of their own beside stage 2 ([`stages_beside`]).
fn redact_builtin_stages(input: &[u8], shape: Shape, beside: bool) -> (Vec<u8>, usize) {
    #[cfg(test)]
    let beside = beside && !test_switches_on();
    let early =
        (beside && input.len() >= BESIDE_FROM && parts::cores() > 1).then(|| stages_beside(input));
    let (decoded, plain, joined) = match early {
        Some(Early {
            decoded,
            plain,
            joined,
        }) => (decoded, Some(plain), joined),
        None => (redact_hidden(input, Views::Decoded), None, None),
    };
    let (mut text, mut count) = match (decoded, plain) {
        (None, Some(plain)) => plain,
        (decoded, _) => {
            let (decoded, n) = decoded.map_or((None, 0), |(t, n)| (Some(t), n));
            let (text, m) = redact_builtin(decoded.as_deref().unwrap_or(input));
            (text, n + m)
        }
    };
    if has_spelling_escape(&text) {
        if let Some((t, n)) = redact_escaped(&text, shape) {
            text = t;
            count += n;
        }
    }
    let joined = match joined {
        // Stage 4 over the input is stage 4 over `text` when stages 1 to 3 changed nothing.
        Some(joined) if text == input => joined,
        _ => redact_hidden(&text, Views::Joined),
    };
    if let Some((t, n)) = joined {
        text = t;
        count += n;
    }
    (text, count)
}

/// Whether a test switch of this thread is on: the stages then stay on this thread, where the
/// switches are read.
#[cfg(test)]
fn test_switches_on() -> bool {
    matching::REFERENCE.get() || decode::WITHOUT_VIEWS.get()
}

/// The size from which [`redact_builtin_stages`] runs stages 1 and 4 beside stage 2: an
/// 8.8 KB transcript's write already gains from it (docs/performance.md, "the stages of one
/// text beside each other"); a prompt or a name is not worth a thread.
const BESIDE_FROM: usize = 4 << 10;

/// What [`stages_beside`] found: stage 1 over the input, stage 2 over the input (what it does
/// when stage 1 finds nothing), and stage 4 over the input (what it does when stages 1 to 3
/// change nothing, the common case; `None` when stage 1 found something).
struct Early {
    decoded: Option<(Vec<u8>, usize)>,
    plain: (Vec<u8>, usize),
    joined: Option<Option<(Vec<u8>, usize)>>,
}

/// Stage 2 over `input` on this thread while another runs stage 1 and, where it finds nothing,
/// stage 4, over the same input ([`join`]): what each finds is what it finds in the sequence,
/// or is not used ([`redact_builtin_stages`] runs a stage again over the text an
/// earlier stage changed).
fn stages_beside(input: &[u8]) -> Early {
    let (plain, (decoded, joined)) = join(|| redact_builtin(input), &|| {
        let decoded = redact_hidden(input, Views::Decoded);
        let joined = decoded
            .is_none()
            .then(|| redact_hidden(input, Views::Joined));
        (decoded, joined)
    });
    Early {
        decoded,
        plain,
        joined,
    }
}

/// Redacts secrets. Cheap to build: a built-in rule is compiled once per process, the first
/// time a text holds one of its triggers.
///
/// Text is redacted in up to five stages, each a no-op on text it finds nothing in, so clean
/// text comes out byte-identical:
/// 1. the decoded views ([`decode`]): the built-in rules over base64, hex and URL-encoded runs
///    and nested JSON strings decoded, the encoded original of each secret found replaced;
/// 2. the built-in rules over the raw bytes (they understand JSON string escapes such as `\n`
///    and `\"`, and never break a JSON line);
/// 3. when the text holds a `\uXXXX` or `\/` escape: the built-in rules again over each JSON
///    value (the whole text, or each JSONL line) with its strings spelled plainly;
/// 4. the joined views ([`decode`]): tokens without their invisible characters, and tokens
///    split across lines, concatenations or adjacent JSON strings put together, each piece of
///    a secret found replaced;
/// 5. the user rules: on JSON values, over the decoded text of each string (and each number),
///    the changed strings written back as JSON strings, so a user rule cannot break a line;
///    on text that is not JSON, over the raw bytes.
pub struct Redactor {
    enabled: bool,
    user: Vec<user::Rule>,
}

impl Redactor {
    /// A redactor with the built-in rules plus the settings' user rules. A rule whose pattern
    /// does not compile, or can match the empty string (it would put the placeholder between
    /// every two characters), is an error.
    pub fn new(settings: &RedactionSettings) -> Result<Redactor, RedactError> {
        Ok(Redactor {
            enabled: settings.enabled != Some(false),
            user: settings
                .rules
                .iter()
                .map(user::Rule::compile)
                .collect::<Result<_, _>>()?,
        })
    }

    /// A redactor for settings from an untrusted file (a committed `.entire/settings.json`),
    /// which can only make redaction stronger: it is never off, and a rule [`Redactor::new`]
    /// refuses, or one that would replace more than [`user::MAX_SAMPLE_SHARE`] of a sample
    /// transcript ([`RedactError::TooBroad`]), is left out. Returns the redactor and one error
    /// per rule left out.
    pub fn untrusted(settings: &RedactionSettings) -> (Redactor, Vec<RedactError>) {
        let mut refused = Vec::new();
        let user = settings
            .rules
            .iter()
            .filter_map(|r| {
                user::Rule::compile(r)
                    .and_then(|rule| rule.narrow(&r.name))
                    .map_err(|e| refused.push(e))
                    .ok()
            })
            .collect();
        (
            Redactor {
                enabled: true,
                user,
            },
            refused,
        )
    }

    /// A redactor with the built-in rules only.
    pub fn builtin() -> Redactor {
        Redactor {
            enabled: true,
            user: Vec::new(),
        }
    }

    /// A redactor that changes nothing.
    pub fn disabled() -> Redactor {
        Redactor {
            enabled: false,
            user: Vec::new(),
        }
    }

    /// Whether redaction is on.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// What this redactor's output depends on, as `sha256:<hex>`: whether it is on, the build of
    /// the redaction code and its built-in rules ([`compiled::embedded::CODE_DIGEST`]), and
    /// every user rule's pattern in order (names change nothing). Two redactors with the same
    /// fingerprint give the same bytes for any text; text one of them redacted is redacted for
    /// the other too (redaction is idempotent: a redacted text comes out unchanged), so a
    /// transcript staged by `session record` with these rules need not be redacted again.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"entire-checkpoints redaction 1\0");
        h.update(compiled::embedded::CODE_DIGEST.to_le_bytes());
        h.update([u8::from(self.enabled)]);
        for rule in &self.user {
            let pattern = rule.pattern().as_bytes();
            h.update((pattern.len() as u64).to_le_bytes());
            h.update(pattern);
        }
        format!("sha256:{}", data_encoding::HEXLOWER.encode(&h.finalize()))
    }

    /// The redacted bytes and the number of secrets replaced.
    pub fn redact_bytes(&self, input: &[u8]) -> (Vec<u8>, usize) {
        if !self.enabled {
            return (input.to_vec(), 0);
        }
        let (text, count) = redact_builtin_stages(input, Shape::Unknown, true);
        match self.redact_user_stage(&text, Shape::Unknown) {
            Some((t, n)) => (t, count + n),
            None => (text, count),
        }
    }

    /// Stage 5 (the user rules) over `text`; `None` when they change nothing.
    fn redact_user_stage(&self, text: &[u8], shape: Shape) -> Option<(Vec<u8>, usize)> {
        if self.user.is_empty() {
            return None;
        }
        let pieces = pieces(text, shape, |_| true);
        redact_pieces(text, &pieces, |piece, json| {
            if json {
                redact_decoded(piece, |t| self.redact_user(t))
            } else {
                Some(self.redact_user(piece)).filter(|(_, n)| *n > 0)
            }
        })
    }

    /// The user rules over raw bytes.
    fn redact_user(&self, input: &[u8]) -> (Vec<u8>, usize) {
        let mut text = Cow::Borrowed(input);
        let mut count = 0;
        for rule in &self.user {
            if let Some(replaced) = rule.replace(&text, &mut count) {
                text = Cow::Owned(replaced);
            }
        }
        (text.into_owned(), count)
    }

    /// [`Redactor::redact_bytes`] for text.
    pub fn redact_str(&self, input: &str) -> (String, usize) {
        let (bytes, n) = self.redact_bytes(input.as_bytes());
        // Only ASCII is ever inserted and matches end on character boundaries of valid input.
        (
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            n,
        )
    }

    /// Redacts `bytes` in place; returns the count. The result is byte for byte
    /// [`Redactor::redact_bytes`]'s; a text with a line break `}\n{` (JSONL) past the first
    /// [`parts::PART_SIZE`] bytes is redacted a part at a time, in place, so a large transcript costs
    /// a few parts of memory beside itself rather than several copies of it. On a machine of
    /// several cores, a text of a megabyte or more is cut in smaller parts, redacted two at
    /// once ([`parts::plan`]).
    pub fn redact_vec(&self, bytes: &mut Vec<u8>) -> usize {
        let (workers, part) = plan(bytes.len());
        self.redact_vec_in_parts(bytes, part, workers)
    }

    /// [`Redactor::redact_vec`] with parts of at least `part` bytes, `workers` of them
    /// redacted at once (parameters for the tests).
    ///
    /// Parts are cut only where redacting them one by one gives what redacting the whole text
    /// gives. The built-in stages are cut at a newline between `}` and `{`: no built-in match
    /// holds such a newline (the rules that read across lines, through `\s` or a PEM block's
    /// lines, need a `:`, `=` or space before it, or a base64 or PEM line, `-----END`, `;`,
    /// `:` or `=` after it), so each rule finds the same matches either way; a replacement
    /// never starts at that `{` and only ever leaves a `D` before the newline, so the cut stays
    /// one through every rule; the text holds a newline between a value and `{`, so it is not
    /// one JSON value and its pieces for stage 3 are its lines, where no match crosses from one
    /// JSON line to the next either. The views of [`decode`] hold no such newline either (a
    /// token, a base64 run or a URL never holds `}` or `{`, and joined strings are of one
    /// line). The user rules, which read a run of lines that are not
    /// JSON as one text, are cut afterwards, in a second pass, at a newline next to a line that
    /// is a JSON value.
    pub(super) fn redact_vec_in_parts(
        &self,
        bytes: &mut Vec<u8>,
        part: usize,
        workers: usize,
    ) -> usize {
        if !self.enabled {
            return 0;
        }
        if builtin_cut(bytes, part) == bytes.len() {
            let (redacted, n) = self.redact_bytes(bytes);
            if n > 0 {
                *bytes = redacted;
            }
            return n;
        }
        let mut count = rewrite_in_parts(
            bytes,
            |text, start| builtin_cut(text, start + part),
            |text| {
                // Parts are already redacted several at once.
                let (redacted, n) = redact_builtin_stages(text, Shape::Lines, false);
                (n > 0).then_some((redacted, n))
            },
            workers,
        );
        if !self.user.is_empty() {
            count += rewrite_in_parts(
                bytes,
                |text, start| user_cut(text, start + part),
                |text| self.redact_user_stage(text, Shape::Lines),
                workers,
            );
        }
        count
    }

    /// Redacts each of `texts` in place; returns the count.
    pub fn redact_strings<'a>(&self, texts: impl IntoIterator<Item = &'a mut String>) -> usize {
        texts
            .into_iter()
            .map(|s| {
                let (redacted, n) = self.redact_str(s);
                if n > 0 {
                    *s = redacted;
                }
                n
            })
            .sum()
    }

    /// Redacts every string inside a JSON value, member names included; returns the count.
    pub fn redact_json(&self, value: &mut Value) -> usize {
        match value {
            Value::String(s) => self.redact_strings([s]),
            Value::Array(a) => a.iter_mut().map(|v| self.redact_json(v)).sum(),
            Value::Object(m) => {
                let mut count = 0;
                for (name, v) in m.iter_mut() {
                    count += match v {
                        Value::String(s) if is_credential_name(name) => {
                            let start = credential_start(s);
                            if start == s.len() || is_placeholder(&s.as_bytes()[start..]) {
                                0
                            } else {
                                s.replace_range(start.., PLACEHOLDER);
                                1
                            }
                        }
                        _ => self.redact_json(v),
                    };
                }
                let names: Vec<(String, usize)> =
                    m.keys().map(|name| self.redact_str(name)).collect();
                if names.iter().any(|(_, n)| *n > 0) {
                    // Rebuilt in order: a map cannot rename a key in place.
                    let old = std::mem::take(m);
                    for ((name, n), (_, v)) in names.into_iter().zip(old) {
                        count += n;
                        m.insert(name, v);
                    }
                }
                count
            }
            _ => 0,
        }
    }
}

impl crate::base::error::ExitStatus for RedactError {
    fn exit_code(&self) -> i32 {
        match self {
            RedactError::InvalidRule { .. }
            | RedactError::MatchesEmpty { .. }
            | RedactError::TooBroad { .. } => crate::base::error::FAILURE,
        }
    }
}

/// `s` as a session ID, refused when the built-in rules find a secret in it: a session ID is
/// stored as it is (in `metadata.json`, the `Entire-Session:` trailer, a directory name under
/// `.git/entire/sessions/`), so one holding a token would put the token in all three. The
/// error names the ID with its secret redacted.
pub fn session_id(s: &str) -> Result<SessionId, InvalidSessionIdError> {
    let (redacted, secrets) = Redactor::builtin().redact_str(s);
    if secrets > 0 {
        return Err(InvalidSessionIdError {
            input: redacted,
            reason: "holds a secret (a credential the redaction rules find)",
        });
    }
    SessionId::parse(s)
}
