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

use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

use regex::bytes::{Captures, Regex};
use serde::Deserialize;
use serde_json::Value;

/// The text every secret is replaced by.
pub const PLACEHOLDER: &str = "REDACTED";

/// Minimum Shannon entropy (bits per character) of a value in a key-like assignment.
const MIN_ENTROPY: f64 = 3.5;

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

/// How a rule replaces its match.
#[derive(Clone, Copy)]
enum Replace {
    /// The whole match.
    Whole,
    /// Only capture group `value` (the key and separator are kept).
    Value,
    /// Only `value`, and only when it looks random (high entropy).
    EntropyValue,
}

/// A user rule, compiled when the redactor is built.
struct Rule {
    re: Regex,
    replace: Replace,
    /// Only a match at a token start counts (see [`at_token_start`]).
    token_start: bool,
}

/// A built-in rule, compiled the first time a text holds one of its triggers: compiling all of
/// them costs more than the rest of a `write` (docs/performance.md, note (a)), and most texts
/// trigger none.
struct Builtin {
    /// Lowercase literals, at least one of which every match contains (ASCII case-insensitively;
    /// the rules' case-insensitive words are ASCII-only, `(?i-u)`, so Unicode case folding such
    /// as the Kelvin sign for `k` cannot match without a trigger).
    triggers: &'static [&'static str],
    pattern: fn() -> String,
    replace: Replace,
    token_start: bool,
    re: OnceLock<Regex>,
}

impl Builtin {
    const fn new(
        triggers: &'static [&'static str],
        pattern: fn() -> String,
        replace: Replace,
        token_start: bool,
    ) -> Builtin {
        Builtin {
            triggers,
            pattern,
            replace,
            token_start,
            re: OnceLock::new(),
        }
    }

    fn regex(&self) -> &Regex {
        self.re.get_or_init(|| {
            Regex::new(&(self.pattern)()).expect("built-in redaction rules compile")
        })
    }
}

/// The triggers a text holds, each looked up once however many rules share it.
struct Triggers {
    /// The text, ASCII-lowercased.
    lower: Vec<u8>,
    looked_up: Vec<(&'static str, bool)>,
}

impl Triggers {
    fn new(text: &[u8]) -> Triggers {
        Triggers {
            lower: text.to_ascii_lowercase(),
            looked_up: Vec::new(),
        }
    }

    /// Whether the text holds one of `triggers`.
    fn any(&mut self, triggers: &[&'static str]) -> bool {
        triggers.iter().any(|t| self.holds(t))
    }

    fn holds(&mut self, trigger: &'static str) -> bool {
        if let Some(&(_, held)) = self.looked_up.iter().find(|(t, _)| *t == trigger) {
            return held;
        }
        let held = memchr::memmem::find(&self.lower, trigger.as_bytes()).is_some();
        self.looked_up.push((trigger, held));
        held
    }
}

/// Whether a match at `start` begins a token: at the start, after a byte that is not a word
/// character, after a JSON string escape (`\n`, `\t`, `\u0020`...), or with an underscore (the
/// `_PASSWORD` of `DB_PASSWORD`). A plain `\b` misses `\nghp_...` because the escape's `n` reads
/// as a word character, and the regex crate has no look-behind; checking here rather than in
/// the pattern also keeps each rule's literal prefilter (`ghp_`, `AKIA`) fast.
fn at_token_start(text: &[u8], start: usize) -> bool {
    if text.get(start) == Some(&b'_') {
        return true;
    }
    match &text[..start] {
        [] | [.., b'\\', b'n' | b'r' | b't' | b'b' | b'f'] => true,
        [.., b'\\', b'u', a, b, c, d] if [a, b, c, d].iter().all(|x| x.is_ascii_hexdigit()) => true,
        [.., last] => !(last.is_ascii_alphanumeric() || *last == b'_'),
    }
}

/// A value that is already a placeholder or obviously not a secret.
fn is_placeholder(v: &[u8]) -> bool {
    let s = String::from_utf8_lossy(v);
    let lower = s.to_ascii_lowercase();
    s == PLACEHOLDER
        || s.starts_with("${")
        || s.starts_with('$')
        || s.starts_with('<')
        || s.chars()
            .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
        || [
            "changeme", "redacted", "none", "null", "true", "false", "password", "secret", "token",
        ]
        .contains(&lower.as_str())
}

fn entropy(v: &[u8]) -> f64 {
    let mut counts = [0usize; 256];
    for &b in v {
        counts[b as usize] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// A quote as it appears raw or inside a JSON string.
const QUOTE: &str = r#"(?:\\?["'])?"#;

/// Member names whose string value is a credential, matched against the whole name: names that
/// end in a credential word (`api_key`, `clientSecret`, `GITHUB_TOKEN`, `aws_secret_access_key`,
/// `Authorization`), or that are exactly a short one (`pwd`, `auth`). `password_hash`,
/// `token_count` or `max_tokens` end in something else and are kept.
const CREDENTIAL_NAME: &str = r"(?i-u:[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|authorization)|(?:[A-Za-z0-9_.\-]*[_.\-])?(?:pwd|auth))";

/// An HTTP authorization scheme kept in front of a redacted credential (`Bearer REDACTED`).
const AUTH_SCHEME: &str = r"(?i-u:bearer|basic|token|bot)[ \t]+";

/// The bytes of one JSON string, escapes whole: never past its closing quote or a line end.
const IN_STRING: &str = r#"(?:[^"\\\n]|\\.)"#;
/// The bytes of a JSON string nested (escaped) inside another JSON string.
const IN_ESCAPED_STRING: &str = r#"(?:[^"\\\n]|\\[^"\\\n]|\\\\(?:\\[^\n]|[^"\\\n]))"#;
/// Real lines that belong to a PEM block: base64 and the RFC 1421 headers, maybe indented (a
/// YAML `|` block), and the blank line after the headers of an encrypted key.
const PEM_LINE: &str = r"(?:\r?\n[ \t]*\r?(?m:$))?\r?\n[ \t]*(?:[A-Za-z0-9+/=]{4,}|(?:Proc-Type|DEK-Info|Comment): [^\r\n]*)\r?(?m:$)";
const PEM_BEGIN: &str = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----";

/// A built-in rule whose match may start anywhere.
const fn rule(
    triggers: &'static [&'static str],
    pattern: fn() -> String,
    replace: Replace,
) -> Builtin {
    Builtin::new(triggers, pattern, replace, false)
}

/// A built-in rule whose match must begin a token.
const fn word(
    triggers: &'static [&'static str],
    pattern: fn() -> String,
    replace: Replace,
) -> Builtin {
    Builtin::new(triggers, pattern, replace, true)
}

/// A provider token, whole, from a token start up to a word boundary.
const fn token(triggers: &'static [&'static str], pattern: fn() -> String) -> Builtin {
    word(triggers, pattern, Replace::Value)
}

/// The pattern of a [`token`] rule: `body` as group `value`, up to a word boundary.
fn token_pattern(body: &str) -> String {
    format!(r"(?P<value>{body})(?-u:\b)")
}

/// The words of the credential-assignment rules.
const CREDENTIAL_WORDS: &[&str] = &["pass", "pwd", "secret", "token", "key", "auth"];

/// The built-in rules, in the order they run.
static BUILTIN: [Builtin; 23] = [
    // PEM private key blocks: within one JSON string (escaped `\n`), or over real lines that
    // hold only base64 and PEM headers. Never across other lines, which would swallow the
    // transcript lines between two markers.
    rule(
        &["-----begin "],
        || {
            format!(
                r"{PEM_BEGIN}(?:{IN_STRING}*?|(?:{PEM_LINE})*?\r?\n[ \t]*)-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            )
        },
        Replace::Whole,
    ),
    // A block cut off before its END line (a `head` of a key file, a truncated paste): up to
    // the end of its JSON string, or over the PEM lines that follow.
    rule(
        &["-----begin "],
        || format!(r"{PEM_BEGIN}(?:{IN_STRING}+(?:{PEM_LINE})*|(?:{PEM_LINE})+)"),
        Replace::Whole,
    ),
    // Provider tokens with recognisable prefixes.
    token(&["akia", "asia"], || {
        token_pattern(r"(?:AKIA|ASIA)[0-9A-Z]{16}")
    }),
    token(&["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], || {
        token_pattern(r"gh[pousr]_[A-Za-z0-9]{36,255}")
    }),
    token(&["github_pat_"], || {
        token_pattern(r"github_pat_[A-Za-z0-9_]{22,255}")
    }),
    token(&["glpat-"], || token_pattern(r"glpat-[A-Za-z0-9_\-]{20,}")),
    token(&["xox"], || {
        token_pattern(r"xox[abposr]-[A-Za-z0-9\-]{10,}")
    }),
    token(&["xapp-"], || {
        token_pattern(r"xapp-[0-9]-[A-Za-z0-9\-]{10,}")
    }),
    token(&["npm_"], || token_pattern(r"npm_[A-Za-z0-9]{36}")),
    token(&["pypi-age"], || {
        token_pattern(r"pypi-AgE[A-Za-z0-9_\-]{50,}")
    }),
    token(&["aiza"], || token_pattern(r"AIza[0-9A-Za-z_\-]{35}")),
    token(&["k_live_", "k_test_"], || {
        token_pattern(r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}")
    }),
    // OpenAI and Anthropic keys: a random run of 20 or more; a hyphenated slug such as
    // `sk-learn-...` has no such run.
    word(
        &["sk-"],
        || r"(?P<value>sk-[A-Za-z0-9_\-]*?[A-Za-z0-9]{20}[A-Za-z0-9_\-]*)(?-u:\b)".to_owned(),
        Replace::EntropyValue,
    ),
    // JWTs; the trigger is the `.eyJ` every one holds, whose `.` makes the search fast.
    token(&[".eyj"], || {
        token_pattern(r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,}")
    }),
    // Slack incoming webhooks: the path is the credential.
    rule(
        &["hooks.slack.com/services/"],
        || r"https://hooks\.slack\.com/services/(?P<value>[A-Za-z0-9/]{20,})".to_owned(),
        Replace::Value,
    ),
    // Credentials in URLs: keep the user, drop the password (up to the last `@` of the
    // authority, so a password with a raw `@` goes whole).
    rule(
        &["://"],
        || r#"[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\\"']*:(?P<value>[^\s/\\"'?#]+)@"#.to_owned(),
        Replace::Value,
    ),
    // Credential members of JSON objects, raw and inside a JSON string: the whole string value
    // (spaces included) goes, the name and an authorization scheme stay.
    rule(
        CREDENTIAL_WORDS,
        || {
            format!(
                r#""{CREDENTIAL_NAME}"[ \t]*:[ \t]*"(?:{AUTH_SCHEME})?(?P<value>{IN_STRING}+)""#
            )
        },
        Replace::Value,
    ),
    rule(
        CREDENTIAL_WORDS,
        || {
            format!(
                r#"\\"{CREDENTIAL_NAME}\\"[ \t]*:[ \t]*\\"(?:{AUTH_SCHEME})?(?P<value>{IN_ESCAPED_STRING}+)\\""#
            )
        },
        Replace::Value,
    ),
    // Authorization headers (`curl -H 'Authorization: Bearer ...'`).
    rule(
        &["auth"],
        || {
            format!(
                r"(?i-u)authorization{QUOTE}[ \t]*[:=][ \t]*{QUOTE}{AUTH_SCHEME}(?P<value>[A-Za-z0-9._~+/\-]+=*)"
            )
        },
        Replace::Value,
    ),
    // A bearer token in prose; only a random-looking one (not "bearer authentication").
    word(
        &["bearer"],
        || r"(?i-u)bearer[ \t]+(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)".to_owned(),
        Replace::EntropyValue,
    ),
    // ADO-style connection strings.
    word(
        &["pass", "pwd"],
        || r"(?i-u:password|pwd)\s*=\s*(?P<value>[^;\s\\]{4,})\s*;".to_owned(),
        Replace::Value,
    ),
    // Credential assignments: `password=...`, `'api_key': '...'`, `DB_PASSWORD=...`.
    word(
        CREDENTIAL_WORDS,
        || {
            format!(
                r#"(?i-u:_?(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret|auth[_\-]?token|aws_secret_access_key)){QUOTE}\s*[:=]\s*{QUOTE}(?P<value>[^\s"'\\,;]{{4,}})"#
            )
        },
        Replace::Value,
    ),
    // High-entropy values assigned to key-like identifiers.
    rule(
        &["key", "secret", "token"],
        || {
            format!(
                r"(?-u:\b)(?i-u:[A-Za-z0-9_\-]*(?:key|secret|token)[A-Za-z0-9_\-]*){QUOTE}\s*[:=]\s*{QUOTE}(?P<value>(?i-u:[A-Za-z0-9+/=_\-]{{20,}}))"
            )
        },
        Replace::EntropyValue,
    ),
];

/// Whether `name` is a JSON member name whose string value is a credential.
fn is_credential_name(name: &str) -> bool {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(&format!("^{CREDENTIAL_NAME}$")).expect("the name pattern compiles")
    })
    .is_match(name)
}

/// The part of a credential member's value to replace: all of it but an authorization scheme.
fn credential_start(value: &str) -> usize {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(&format!("^{AUTH_SCHEME}")).expect("the scheme compiles"))
        .find(value)
        .map_or(0, |m| m.end())
}

/// `text` with the secrets among the matches of `re` replaced, counted in `count`; `None`
/// when `re` does not match.
fn replace_secrets(
    re: &Regex,
    replace: Replace,
    token_start: bool,
    text: &[u8],
    count: &mut usize,
) -> Option<Vec<u8>> {
    if !re.is_match(text) {
        return None;
    }
    let replaced = re.replace_all(text, |c: &Captures<'_>| {
        let whole = c.get(0).expect("group 0 always matches");
        if token_start && !at_token_start(text, whole.start()) {
            return whole.as_bytes().to_vec();
        }
        let value = c.name("value");
        let secret = match (replace, value) {
            (Replace::Whole, _) => Some(whole),
            (Replace::Value, Some(v)) if !is_placeholder(v.as_bytes()) => Some(v),
            (Replace::EntropyValue, Some(v))
                if !is_placeholder(v.as_bytes()) && entropy(v.as_bytes()) >= MIN_ENTROPY =>
            {
                Some(v)
            }
            _ => None,
        };
        match secret {
            Some(s) if s.as_bytes() != PLACEHOLDER.as_bytes() => {
                *count += 1;
                let mut out = whole.as_bytes()[..s.start() - whole.start()].to_vec();
                out.extend_from_slice(PLACEHOLDER.as_bytes());
                out.extend_from_slice(&whole.as_bytes()[s.end() - whole.start()..]);
                out
            }
            _ => whole.as_bytes().to_vec(),
        }
    });
    Some(replaced.into_owned())
}

/// The built-in rules over `input` as bytes: the redacted text and the number of secrets.
fn redact_builtin(input: &[u8]) -> (Vec<u8>, usize) {
    let mut text = input.to_vec();
    let mut count = 0;
    // The triggers are looked up afresh whenever a rule changed the text (a replacement can
    // join two pieces into a new trigger).
    let mut triggers = Triggers::new(&text);
    for rule in &BUILTIN {
        if !triggers.any(rule.triggers) {
            continue;
        }
        if let Some(replaced) = replace_secrets(
            rule.regex(),
            rule.replace,
            rule.token_start,
            &text,
            &mut count,
        ) {
            text = replaced;
            triggers = Triggers::new(&text);
        }
    }
    (text, count)
}

/// Whether `text` holds a JSON escape that spells a character the rules look for (`\u0041` for
/// `A`, `\/` for `/`). The rules read JSON as it is written, so such a spelling hides a secret
/// from them until the string is decoded. (`\\u` counts too: a false alarm only costs a look.)
fn has_spelling_escape(text: &[u8]) -> bool {
    memchr::memmem::find(text, br"\u").is_some() || memchr::memmem::find(text, br"\/").is_some()
}

/// Whether `text` is exactly one JSON value (surrounding whitespace allowed).
fn is_json(text: &[u8]) -> bool {
    std::str::from_utf8(text)
        .is_ok_and(|s| serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok())
}

/// A string literal (quotes included) or a number of a JSON text: the parts rules may rewrite.
struct Token {
    range: Range<usize>,
    string: bool,
}

/// The string literals and numbers of `json` (a valid JSON value), in order.
fn tokens(json: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&b) = json.get(i) {
        let start = i;
        match b {
            b'"' => {
                i += 1;
                while let Some(&c) = json.get(i) {
                    i += if c == b'\\' { 2 } else { 1 };
                    if c == b'"' {
                        break;
                    }
                }
                let range = start..i.min(json.len());
                out.push(Token {
                    range,
                    string: true,
                });
            }
            b'-' | b'0'..=b'9' => {
                while json
                    .get(i)
                    .is_some_and(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                {
                    i += 1;
                }
                out.push(Token {
                    range: start..i,
                    string: false,
                });
            }
            _ => i += 1,
        }
    }
    out
}

/// The text a string literal spells; its raw inside when it does not decode (a lone surrogate
/// escape), so the rules still see it.
fn decode(literal: &[u8]) -> Cow<'_, [u8]> {
    let inner = &literal[1..literal.len().saturating_sub(1).max(1)];
    if !inner.contains(&b'\\') {
        return Cow::Borrowed(inner);
    }
    match serde_json::from_slice::<String>(literal) {
        Ok(s) => Cow::Owned(s.into_bytes()),
        Err(_) => Cow::Borrowed(inner),
    }
}

/// `text` as a JSON string literal.
fn encode(text: &[u8]) -> Vec<u8> {
    serde_json::to_vec(&String::from_utf8_lossy(text)).expect("a string serializes")
}

/// `text` with each range (in order, not overlapping) replaced by its bytes.
fn splice(text: &[u8], edits: Vec<(Range<usize>, Vec<u8>)>) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0;
    for (range, bytes) in edits {
        out.extend_from_slice(&text[copied..range.start]);
        out.extend_from_slice(&bytes);
        copied = range.end;
    }
    out.extend_from_slice(&text[copied..]);
    out
}

/// The bytes between and around the `tokens` of `text`: what a rewrite of tokens must keep.
fn frame<'t>(text: &'t [u8], tokens: &'t [Range<usize>]) -> impl Iterator<Item = &'t [u8]> {
    let ends = std::iter::once(0).chain(tokens.iter().map(|r| r.end));
    let starts = tokens.iter().map(|r| r.start).chain([text.len()]);
    ends.zip(starts).map(move |(end, start)| &text[end..start])
}

/// A piece of a text for the JSON-aware stages: one JSON value, or text that is not JSON.
struct Piece {
    range: Range<usize>,
    json: bool,
}

/// `text` cut into pieces: the whole text when it is one JSON value (a document over several
/// lines), else its lines, each line that is a JSON value (JSONL) a piece of its own and each
/// run of other lines one piece, so rules for raw text still see across their line breaks.
/// Only lines `maybe_json` accepts are parsed.
fn pieces(text: &[u8], maybe_json: impl Fn(&[u8]) -> bool) -> Vec<Piece> {
    if is_json(text) {
        return vec![Piece {
            range: 0..text.len(),
            json: true,
        }];
    }
    let mut out: Vec<Piece> = Vec::new();
    let mut start = 0;
    for line in text.split(|&b| b == b'\n') {
        let range = start..start + line.len();
        start = range.end + 1;
        let json = maybe_json(line) && is_json(line);
        match out.last_mut() {
            Some(last) if !json && !last.json => last.range.end = range.end,
            _ => out.push(Piece { range, json }),
        }
    }
    out
}

/// `text` with the pieces `redact` rewrites replaced, and the count; `None` when it rewrites
/// none.
fn redact_pieces(
    text: &[u8],
    pieces: &[Piece],
    mut redact: impl FnMut(&[u8], bool) -> Option<(Vec<u8>, usize)>,
) -> Option<(Vec<u8>, usize)> {
    let mut count = 0;
    let edits: Vec<_> = pieces
        .iter()
        .filter_map(|p| {
            let (bytes, n) = redact(&text[p.range.clone()], p.json)?;
            count += n;
            Some((p.range.clone(), bytes))
        })
        .collect();
    (!edits.is_empty()).then(|| (splice(text, edits), count))
}

/// Runs `rules` on the text each string and number of `json` (one JSON value) spells, and writes
/// back the ones they changed as JSON strings, so `json` stays valid whatever the rules replace;
/// the tokens nothing matched in keep their bytes. `None` when nothing matched.
fn redact_decoded(
    json: &[u8],
    rules: impl Fn(&[u8]) -> (Vec<u8>, usize),
) -> Option<(Vec<u8>, usize)> {
    let mut count = 0;
    let edits: Vec<_> = tokens(json)
        .into_iter()
        .filter_map(|t| {
            let raw = &json[t.range.clone()];
            let text = if t.string {
                decode(raw)
            } else {
                Cow::Borrowed(raw)
            };
            let (redacted, n) = rules(&text);
            if n == 0 {
                return None;
            }
            count += n;
            Some((t.range, encode(&redacted)))
        })
        .collect();
    (!edits.is_empty()).then(|| (splice(json, edits), count))
}

/// A JSON value with its strings spelled plainly (`\u0041KIA...` as `AKIA...`, `\/` as `/`).
struct Respelled {
    text: Vec<u8>,
    /// The string literals of `text`, in order (one per literal of the original).
    strings: Vec<Range<usize>>,
    /// The string literals of the original.
    original: Vec<Range<usize>>,
}

/// `json` (one JSON value) with its strings spelled plainly; `None` when that changes nothing.
fn respell(json: &[u8]) -> Option<Respelled> {
    let original: Vec<Range<usize>> = tokens(json)
        .into_iter()
        .filter(|t| t.string)
        .map(|t| t.range)
        .collect();
    let mut text = Vec::with_capacity(json.len());
    let mut strings = Vec::with_capacity(original.len());
    let mut copied = 0;
    for r in &original {
        text.extend_from_slice(&json[copied..r.start]);
        let literal = &json[r.clone()];
        let start = text.len();
        if has_spelling_escape(literal) {
            text.extend_from_slice(&encode(&decode(literal)));
        } else {
            text.extend_from_slice(literal);
        }
        strings.push(start..text.len());
        copied = r.end;
    }
    text.extend_from_slice(&json[copied..]);
    (text != json).then_some(Respelled {
        text,
        strings,
        original,
    })
}

/// The built-in rules again over one JSON value, on its plain spelling `r`, so escapes hide no
/// secret. A string nothing new matched in keeps its bytes (and its escapes). `None` when
/// nothing new matched.
fn redact_respelled(json: &[u8], r: &Respelled) -> Option<(Vec<u8>, usize)> {
    let (redacted, count) = redact_builtin(&r.text);
    if count == 0 {
        return None;
    }
    let redacted_strings: Vec<Range<usize>> = if is_json(&redacted) {
        tokens(&redacted)
            .into_iter()
            .filter(|t| t.string)
            .map(|t| t.range)
            .collect()
    } else {
        Vec::new()
    };
    let same_frame = redacted_strings.len() == r.strings.len()
        && frame(&r.text, &r.strings).eq(frame(&redacted, &redacted_strings));
    if !same_frame {
        // A rule rewrote more than string contents: fall back to the decoded strings one by
        // one, which cannot break the JSON.
        return redact_decoded(json, redact_builtin);
    }
    let edits = r
        .original
        .iter()
        .zip(r.strings.iter().zip(&redacted_strings))
        .filter(|(_, (p, q))| r.text[(*p).clone()] != redacted[(*q).clone()])
        .map(|(original, (_, q))| (original.clone(), redacted[q.clone()].to_vec()))
        .collect();
    Some((splice(json, edits), count))
}

/// Stage 2 of [`Redactor`]: the built-in rules over the plain spelling of each JSON value of
/// `text` whose strings spell characters with escapes. `None` when nothing new matched.
fn redact_escaped(text: &[u8]) -> Option<(Vec<u8>, usize)> {
    let pieces = pieces(text, has_spelling_escape);
    let respelled: Vec<(&Piece, Respelled)> = pieces
        .iter()
        .filter(|p| p.json)
        .filter_map(|p| respell(&text[p.range.clone()]).map(|r| (p, r)))
        .collect();
    if respelled.is_empty() {
        return None;
    }
    // One pass over all of them, a line each, finds the few with anything new: a pass per line
    // would pay the rules' set-up once per line. No rule matches across two lines that are each
    // one JSON value (a document over several lines is the only piece, and is redone alone).
    let joined = respelled
        .iter()
        .map(|(_, r)| r.text.as_slice())
        .collect::<Vec<_>>()
        .join(&b'\n');
    let (redacted, n) = redact_builtin(&joined);
    if n == 0 {
        return None;
    }
    let lines: Vec<&[u8]> = redacted.split(|&b| b == b'\n').collect();
    let aligned = lines.len() == respelled.len();
    let mut count = 0;
    let edits: Vec<_> = respelled
        .iter()
        .enumerate()
        .filter(|(i, (_, r))| !aligned || lines[*i] != r.text.as_slice())
        .filter_map(|(_, (p, r))| {
            let (bytes, n) = redact_respelled(&text[p.range.clone()], r)?;
            count += n;
            Some((p.range.clone(), bytes))
        })
        .collect();
    (!edits.is_empty()).then(|| (splice(text, edits), count))
}

/// Whether a pattern can match the empty string (somewhere: `a*`, `\b`, `^` as well as ``).
fn matches_empty(pattern: &str) -> bool {
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .is_ok_and(|hir| hir.properties().minimum_len() == Some(0))
}

/// Redacts secrets. Cheap to build: a built-in rule is compiled once per process, the first
/// time a text holds one of its triggers.
///
/// Text is redacted in up to three stages, each a no-op on text it finds nothing in, so clean
/// text comes out byte-identical:
/// 1. the built-in rules over the raw bytes (they understand JSON string escapes such as `\n`
///    and `\"`, and never break a JSON line);
/// 2. when the text holds a `\uXXXX` or `\/` escape: the built-in rules again over each JSON
///    value (the whole text, or each JSONL line) with its strings spelled plainly;
/// 3. the user rules: on JSON values, over the decoded text of each string (and each number),
///    the changed strings written back as JSON strings, so a user rule cannot break a line;
///    on text that is not JSON, over the raw bytes.
pub struct Redactor {
    enabled: bool,
    user: Vec<Rule>,
}

impl Redactor {
    /// A redactor with the built-in rules plus the settings' user rules. A rule whose pattern
    /// does not compile, or can match the empty string (it would put the placeholder between
    /// every two characters), is an error.
    pub fn new(settings: &RedactionSettings) -> Result<Redactor, RedactError> {
        let mut user = Vec::new();
        for r in &settings.rules {
            let re = Regex::new(&r.pattern).map_err(|e| RedactError::InvalidRule {
                name: r.name.clone(),
                message: e.to_string(),
            })?;
            if matches_empty(&r.pattern) {
                return Err(RedactError::MatchesEmpty {
                    name: r.name.clone(),
                });
            }
            user.push(Rule {
                re,
                replace: Replace::Whole,
                token_start: false,
            });
        }
        Ok(Redactor {
            enabled: settings.enabled != Some(false),
            user,
        })
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

    /// The redacted bytes and the number of secrets replaced.
    pub fn redact_bytes(&self, input: &[u8]) -> (Vec<u8>, usize) {
        if !self.enabled {
            return (input.to_vec(), 0);
        }
        let (mut text, mut count) = redact_builtin(input);
        if has_spelling_escape(&text) {
            if let Some((t, n)) = redact_escaped(&text) {
                text = t;
                count += n;
            }
        }
        if !self.user.is_empty() {
            let pieces = pieces(&text, |_| true);
            if let Some((t, n)) = redact_pieces(&text, &pieces, |piece, json| {
                if json {
                    redact_decoded(piece, |t| self.redact_user(t))
                } else {
                    Some(self.redact_user(piece)).filter(|(_, n)| *n > 0)
                }
            }) {
                text = t;
                count += n;
            }
        }
        (text, count)
    }

    /// The user rules over raw bytes.
    fn redact_user(&self, input: &[u8]) -> (Vec<u8>, usize) {
        let mut text = Cow::Borrowed(input);
        let mut count = 0;
        for rule in &self.user {
            if let Some(replaced) =
                replace_secrets(&rule.re, rule.replace, rule.token_start, &text, &mut count)
            {
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

    /// Redacts `bytes` in place; returns the count.
    pub fn redact_vec(&self, bytes: &mut Vec<u8>) -> usize {
        let (redacted, n) = self.redact_bytes(bytes);
        if n > 0 {
            *bytes = redacted;
        }
        n
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
            RedactError::InvalidRule { .. } | RedactError::MatchesEmpty { .. } => {
                crate::base::error::FAILURE
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> Redactor {
        Redactor::new(&RedactionSettings::default()).unwrap()
    }

    fn red(s: &str) -> (String, usize) {
        on().redact_str(s)
    }

    fn assert_json_lines(s: &str) {
        for line in s.lines() {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|e| panic!("not JSON after redaction: {line}: {e}"));
        }
    }

    /// Asserts `input` redacts to `want` with `n` replacements and every line stays JSON.
    fn assert_jsonl_redacts(input: &str, want: &str, n: usize) {
        let (out, count) = red(input);
        assert_eq!(out, want, "{input}");
        assert_eq!(count, n, "{input}");
        assert_json_lines(&out);
    }

    #[test]
    fn aws_keys_in_a_jsonl_tool_result() {
        let line = r#"{"type":"tool_result","content":"export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nexport AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#;
        assert_jsonl_redacts(
            line,
            r#"{"type":"tool_result","content":"export AWS_ACCESS_KEY_ID=REDACTED\nexport AWS_SECRET_ACCESS_KEY=REDACTED"}"#,
            2,
        );
    }

    #[test]
    fn password_inside_an_escaped_json_string() {
        let line = r#"{"message":"{\"password\": \"hunter22\", \"user\": \"bob\"}"}"#;
        assert_jsonl_redacts(
            line,
            r#"{"message":"{\"password\": \"REDACTED\", \"user\": \"bob\"}"}"#,
            1,
        );
    }

    #[test]
    fn pem_block_with_escaped_newlines() {
        let line = r#"{"content":"key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc==\n-----END RSA PRIVATE KEY-----\nend"}"#;
        assert_jsonl_redacts(line, r#"{"content":"key:\nREDACTED\nend"}"#, 1);
        let real = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n-----END OPENSSH PRIVATE KEY-----\n";
        assert_eq!(red(real), ("REDACTED\n".to_owned(), 1));
        let split = "{\"a\":\"-----BEGIN RSA PRIVATE KEY-----\"}\n{\"b\":\"keep me\"}\n{\"c\":\"-----END RSA PRIVATE KEY-----\"}\n";
        assert_eq!(
            red(split),
            (split.to_owned(), 0),
            "never merges transcript lines"
        );
    }

    #[test]
    fn provider_tokens() {
        let gh = format!("token ghp_{}", "a1B2".repeat(9));
        assert_eq!(red(&gh), ("token REDACTED".to_owned(), 1));
        let pat = format!("github_pat_{}", "A1b_".repeat(8));
        assert_eq!(red(&pat).0, "REDACTED");
        assert_eq!(red("glpat-abcdefghij0123456789XY").0, "REDACTED");
        assert_eq!(
            red("use xoxb-1234567890-abcdefghij now").0,
            "use REDACTED now"
        );
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assert_eq!(red(&format!("Bearer {jwt}")).0, "Bearer REDACTED");
    }

    #[test]
    fn assignments_keep_key_and_separator() {
        assert_eq!(red("DB_PASSWORD=hunter22").0, "DB_PASSWORD=REDACTED");
        assert_eq!(red("api_key: 'abcd1234efgh'").0, "api_key: 'REDACTED'");
        assert_eq!(
            red("Server=db;User Id=sa;Password=S3cr3t!x;").0,
            "Server=db;User Id=sa;Password=REDACTED;"
        );
        assert_eq!(
            red("git clone https://alice:s3cretpass@example.com/r.git").0,
            "git clone https://alice:REDACTED@example.com/r.git"
        );
    }

    #[test]
    fn high_entropy_key_values() {
        assert_eq!(
            red("MY_SIGNING_KEY=Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1").0,
            "MY_SIGNING_KEY=REDACTED"
        );
        let low = "MONKEY_KEY=aaaaaaaaaaaaaaaaaaaaaaaa";
        assert_eq!(red(low), (low.to_owned(), 0));
    }

    #[test]
    fn placeholders_and_prose_are_left_alone() {
        for s in [
            "password=REDACTED",
            "password=${DB_PASSWORD}",
            "password: <your password>",
            "token=***",
            "password=changeme",
            "let token_count = 5;",
            "the password_hint field",
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "see src/auth/token_store.rs",
            "Plain prose about keys and secrets.",
        ] {
            assert_eq!(red(s), (s.to_owned(), 0), "{s}");
        }
    }

    #[test]
    fn binary_bytes_unchanged_and_idempotent() {
        let bin: Vec<u8> = (0u8..=255).chain([0xff, 0xfe, 0x00]).collect();
        assert_eq!(on().redact_bytes(&bin), (bin.clone(), 0));
        let (once, n) = red("DB_PASSWORD=hunter22 AKIAIOSFODNN7EXAMPLE");
        assert_eq!(n, 2);
        assert_eq!(red(&once), (once.clone(), 0));
    }

    #[test]
    fn disabled_and_user_rules() {
        let off = Redactor::new(&RedactionSettings {
            enabled: Some(false),
            rules: vec![],
        })
        .unwrap();
        assert!(!off.is_enabled());
        assert_eq!(off.redact_str("DB_PASSWORD=hunter22").1, 0);
        let custom = Redactor::new(&RedactionSettings {
            enabled: None,
            rules: vec![UserRule {
                name: "ticket".into(),
                pattern: r"ACME-\d{6}".into(),
            }],
        })
        .unwrap();
        assert_eq!(custom.redact_str("see ACME-123456").0, "see REDACTED");
        let bad = Redactor::new(&RedactionSettings {
            enabled: None,
            rules: vec![UserRule {
                name: "broken".into(),
                pattern: "(".into(),
            }],
        });
        assert!(matches!(bad, Err(RedactError::InvalidRule { name, .. }) if name == "broken"));
    }

    #[test]
    fn tokens_right_after_an_escaped_newline() {
        let gh = format!("ghp_{}", "a1B2".repeat(9));
        let sk = "sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY";
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        for secret in [
            gh.as_str(),
            sk,
            jwt,
            "AKIAIOSFODNN7EXAMPLE",
            "xoxb-1234567890-abcdefghij",
        ] {
            for escape in [r"\n", r"\t", r"\r\n"] {
                let line = format!(r#"{{"content":"token:{escape}{secret}{escape}done"}}"#);
                assert_jsonl_redacts(
                    &line,
                    &format!(r#"{{"content":"token:{escape}REDACTED{escape}done"}}"#),
                    1,
                );
            }
        }
        let line = r#"{"content":"cat .env\npassword=hunter22\nDB=x"}"#;
        assert_eq!(
            red(line),
            (
                r#"{"content":"cat .env\npassword=REDACTED\nDB=x"}"#.to_owned(),
                1
            )
        );
    }

    #[test]
    fn credential_members_of_json_objects() {
        for (key, value) in [
            ("api_key", "abcd1234efgh5678"),
            ("password", "correct horse battery staple"),
            ("client_secret", "s3cr3t-v@lue"),
            ("access_token", "ya29.a0AfH6SMBx"),
            (
                "aws_secret_access_key",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ),
            ("apiKey", "k-1"),
            ("GITHUB_TOKEN", "has \\\"quotes\\\" and \\\\ inside"),
        ] {
            let raw =
                format!(r#"{{"type":"tool_use","input":{{"{key}": "{value}", "user": "bob"}}}}"#);
            assert_jsonl_redacts(
                &raw,
                &format!(r#"{{"type":"tool_use","input":{{"{key}": "REDACTED", "user": "bob"}}}}"#),
                1,
            );
        }
        let bearer = r#"{"headers":{"Authorization": "Bearer abc.DEF-123_xyz"}}"#;
        assert_eq!(
            red(bearer),
            (
                r#"{"headers":{"Authorization": "Bearer REDACTED"}}"#.to_owned(),
                1
            )
        );
        // The same members inside a transcript string: quotes are escaped.
        let escaped = r#"{"message":"{\"api_key\": \"abc def\", \"password\":\"p\\\"w\\\\d\", \"Authorization\": \"Basic dXNlcjpwYXNz\", \"n\": 1}"}"#;
        assert_jsonl_redacts(
            escaped,
            r#"{"message":"{\"api_key\": \"REDACTED\", \"password\":\"REDACTED\", \"Authorization\": \"Basic REDACTED\", \"n\": 1}"}"#,
            3,
        );
        let out = red(escaped).0;
        let inner: Value = serde_json::from_str(
            serde_json::from_str::<Value>(&out).unwrap()["message"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(inner["password"], "REDACTED");
    }

    #[test]
    fn credential_members_of_json_values() {
        let mut v = serde_json::json!({
            "outcome": "configured",
            "config": {"api_key": "abcd1234", "password": "two words", "Authorization": "Bearer tok3n.value", "region": "eu"},
            "list": [{"client_secret": "x1"}, {"token": "REDACTED"}, {"access_token": 5}]
        });
        assert_eq!(on().redact_json(&mut v), 4);
        assert_eq!(v["config"]["api_key"], "REDACTED");
        assert_eq!(v["config"]["password"], "REDACTED");
        assert_eq!(v["config"]["Authorization"], "Bearer REDACTED");
        assert_eq!(v["config"]["region"], "eu");
        assert_eq!(v["list"][0]["client_secret"], "REDACTED");
        assert_eq!(v["list"][2]["access_token"], 5);
    }

    #[test]
    fn unterminated_private_keys() {
        let line = r#"{"content":"head id_rsa:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\nAAAABG5vbmU=\n"}"#;
        assert_jsonl_redacts(line, r#"{"content":"head id_rsa:\nREDACTED"}"#, 1);
        // Escaped quotes inside the string are consumed whole, the JSON stays valid.
        let nested = r#"{"m":"{\"k\": \"-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIB\"}"}
{"next":"line"}"#;
        assert_jsonl_redacts(
            nested,
            "{\"m\":\"{\\\"k\\\": \\\"REDACTED\"}\n{\"next\":\"line\"}",
            1,
        );
        // Real lines: the base64 lines go, the prose after them stays.
        let text = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk\nAwEHoUQDQgAE\nthat was the key\n";
        assert_eq!(red(text), ("REDACTED\nthat was the key\n".to_owned(), 1));
        // The transcript lines after an unterminated key are never merged into it.
        let lines =
            "{\"a\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA\"}\n{\"b\":\"keep me\"}\n";
        assert_jsonl_redacts(lines, "{\"a\":\"REDACTED\"}\n{\"b\":\"keep me\"}\n", 1);
        let yaml = "tls:\n  key: |\n    -----BEGIN RSA PRIVATE KEY-----\n    MIIEpAIBAAKCAQEA\n    -----END RSA PRIVATE KEY-----\n  port: 443\n";
        assert_eq!(
            red(yaml),
            ("tls:\n  key: |\n    REDACTED\n  port: 443\n".to_owned(), 1)
        );
        let encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\nMIIEpAIBAAKCAQEA\nabcd==\n\nthe rest\n";
        assert_eq!(red(encrypted), ("REDACTED\n\nthe rest\n".to_owned(), 1));
        let pgp =
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0\n-----END PGP PRIVATE KEY BLOCK-----";
        assert_eq!(red(pgp), ("REDACTED".to_owned(), 1));
    }

    #[test]
    fn more_provider_tokens() {
        for token in [
            "xoxp-1234567890-0987654321-abcdefABCDEF",
            "xapp-1-A0123456789-1234567890123-abcdef0123456789",
            "glpat-xY9_zK3-wQ7vN1mB5cL8",
            "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            "sk-ant-api03-Xy7Qw9Er3Tz5Ui1Op8As2Df6Gh4Jk0LzXcVbNm",
            "sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
            "ASIAY34FZKBOKMUTVV7A",
            "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMgACJXsicGVybWlzc2lvbnMiOiAidXNlciJ9",
        ] {
            let s = format!("use {token} here");
            assert_eq!(red(&s), ("use REDACTED here".to_owned(), 1), "{token}");
        }
        assert_eq!(
            red("curl -H 'Authorization: token 0123abcdXYZ' https://x").0,
            "curl -H 'Authorization: token REDACTED' https://x"
        );
        assert_eq!(
            red("send Bearer Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1 along").0,
            "send Bearer REDACTED along"
        );
        assert_eq!(
            red("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX").0,
            "https://hooks.slack.com/services/REDACTED"
        );
        for (url, want) in [
            (
                "postgres://app:p%40ss%3Aw0rd@db.internal:5432/app",
                "postgres://app:REDACTED@db.internal:5432/app",
            ),
            (
                "https://alice%40corp.com:s3cret@git.corp.com/r.git",
                "https://alice%40corp.com:REDACTED@git.corp.com/r.git",
            ),
            (
                "redis://:hunter22@cache:6379",
                "redis://:REDACTED@cache:6379",
            ),
        ] {
            assert_eq!(red(url), (want.to_owned(), 1), "{url}");
        }
    }

    #[test]
    fn ordinary_code_is_not_a_secret() {
        for s in [
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            r#"{"content":"HEAD is now at 3f786850e387550fdab836ed7e6dc881de23001b\n9fceb02d0ae598e95dc970b74767f19372d61af8"}"#,
            r#"{"request_id":"123e4567-e89b-12d3-a456-426614174000","session":"sess-1"}"#,
            "the logo is data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg== in prose",
            "fn verify(password_hash: &str) -> bool",
            r#"{"password_hash": "$argon2id$v=19$m=65536", "token_count": 12, "max_tokens": 1024}"#,
            r#"{"usage":{"input_tokens":100,"output_tokens":20},"token_type":"bearer"}"#,
            r#"{"password": "", "api_key": null, "secret": "${SECRET}", "token": "<token>"}"#,
            "Bearer tokens go in the Authorization header; use bearer authentication.",
            "-----BEGIN RSA PRIVATE KEY-----",
            "see the task-runner-configuration-loader module and skip-the-long-identifier-here",
            "pip install sk-learn-pipeline-configuration-loader",
            "https://example.com:8443/path and user@example.com",
            "glued to a word: xAKIAIOSFODNN7EXAMPLE, my_ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
            r#"{"content":"line one\nnext line\tindented"}"#,
        ] {
            assert_eq!(red(s), (s.to_owned(), 0), "{s}");
        }
    }

    #[test]
    fn a_secret_several_rules_match_counts_once() {
        let gh = format!("ghp_{}", "a1B2".repeat(9));
        for (input, want) in [
            (
                format!(r#"{{"password": "{gh}"}}"#),
                r#"{"password": "REDACTED"}"#.to_owned(),
            ),
            (
                "curl -H 'Authorization: Bearer Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1'".to_owned(),
                "curl -H 'Authorization: Bearer REDACTED'".to_owned(),
            ),
            (
                r#"{"m":"{\"api_key\": \"sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY\"}"}"#.to_owned(),
                r#"{"m":"{\"api_key\": \"REDACTED\"}"}"#.to_owned(),
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\r\nMIIEpAIBAAKCAQEA\r\n-----END RSA PRIVATE KEY-----\r\n"
                    .to_owned(),
                "REDACTED\r\n".to_owned(),
            ),
            (
                r#"{"c":"x\u003dAKIAIOSFODNN7EXAMPLE"}"#.to_owned(),
                r#"{"c":"x\u003dREDACTED"}"#.to_owned(),
            ),
        ] {
            assert_eq!(red(&input), (want, 1), "{input}");
        }
    }

    /// Texts each built-in rule matches, several per rule, with every alternative of a rule's
    /// words (`pwd`, `auth`, `passwd`, `access-key`...).
    const POSITIVES: &[&str] = &[
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc==\n-----END RSA PRIVATE KEY-----",
        r#"{"c":"-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0\n-----END PGP PRIVATE KEY BLOCK-----"}"#,
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n",
        r#"{"c":"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk"}"#,
        "AKIAIOSFODNN7EXAMPLE ASIAY34FZKBOKMUTVV7A",
        "ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2 gho_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
        "ghu_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2 ghs_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
        "ghr_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2 github_pat_A1b_A1b_A1b_A1b_A1b_A1b_A1b_A1b_",
        "glpat-abcdefghij0123456789XY xoxb-1234567890-abcdefghij xoxp-1234567890-0987654321-abc",
        "xapp-1-A0123456789-1234567890123-abcdef0123456789 npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMgACJXsicGVy",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY sk_live_4eC39HqLyjWDarjtT1zdp7dc rk_test_4eC39HqLyjWDarjtT1",
        "sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY sk-ant-api03-Xy7Qw9Er3Tz5Ui1Op8As2Df6Gh4Jk0LzXcVbNm",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "postgres://app:p%40ss@db:5432/app redis://:hunter22@cache:6379 HTTPS://u:pw@host",
        r#"{"api_key": "abcd1234", "password": "two words", "Authorization": "Bearer tok3n.value"}"#,
        r#"{"auth": "x1y2", "db.pwd": "x1y2", "clientSecret": "s", "private-key": "k", "passphrase": "p"}"#,
        r#"{"GITHUB_TOKEN": "t", "accessKey": "a", "apiKey": "k-1", "passwd": "p", "Api-Key": "v"}"#,
        r#"{"m":"{\"api_key\": \"abc def\", \"password\":\"p\\\"w\\\\d\", \"Authorization\": \"Basic dXNlcjpwYXNz\"}"}"#,
        r#"{"m":"{\"x_auth\": \"v\", \"my.pwd\": \"v\", \"secret\": \"v\", \"access_token\": \"v\"}"}"#,
        "curl -H 'Authorization: token 0123abcdXYZ' AUTHORIZATION=\"Bearer abc.def\"",
        "send Bearer Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1 along, bearer\tAb3dEf6hIj9lMn2pQr5t",
        "Server=db;Password=S3cr3t!x; Pwd = abcd; PWD=efgh;",
        "DB_PASSWORD=hunter22 api_key: 'abcd1234efgh' passwd=abcd pwd: wxyz secret=abcd TOKEN=abcd",
        "access-key=abcd accesskey=abcd client_secret=abcd clientSecret=abcd auth_token=abcd",
        "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY APIKEY=abcd",
        "MY_SIGNING_KEY=Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1 secret_value: \"abcdefghij0123456789XY\"",
        "refresh_token = 'Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1' KEYRING='Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1'",
    ];

    /// The corpus of [`POSITIVES`] with case variants and the non-ASCII letters Unicode case
    /// folding equates with ASCII ones (the Kelvin sign for `k`, the long s for `s`).
    fn trigger_corpus() -> Vec<String> {
        let mut corpus = Vec::new();
        for p in POSITIVES {
            corpus.push(p.to_string());
            corpus.push(p.to_ascii_uppercase());
            corpus.push(p.to_ascii_lowercase());
            corpus.push(
                p.replace(['k', 'K'], "\u{212A}")
                    .replace(['s', 'S'], "\u{17F}"),
            );
        }
        corpus
    }

    #[test]
    fn every_match_of_a_builtin_rule_holds_one_of_its_triggers() {
        let corpus = trigger_corpus();
        for (i, rule) in BUILTIN.iter().enumerate() {
            let mut matches = 0;
            for text in &corpus {
                for m in rule.regex().find_iter(text.as_bytes()) {
                    matches += 1;
                    assert!(
                        Triggers::new(m.as_bytes()).any(rule.triggers),
                        "built-in rule {i} matches {:?}, which holds none of {:?}",
                        String::from_utf8_lossy(m.as_bytes()),
                        rule.triggers
                    );
                }
            }
            assert!(matches > 0, "built-in rule {i}: no example in the corpus");
        }
    }

    #[test]
    fn every_sample_is_redacted_plain_and_spelled_with_escapes() {
        for p in POSITIVES {
            let (plain, n) = red(p);
            assert!(n > 0 && plain != *p, "{p}");
            // The sample inside a JSON string with every letter written as a `\u` escape.
            let escaped: String = p
                .chars()
                .map(|c| match c {
                    'A'..='Z' | 'a'..='z' => format!("\\u{:04x}", c as u32),
                    c => {
                        let s = serde_json::to_string(&c).unwrap();
                        s[1..s.len() - 1].to_owned()
                    }
                })
                .collect();
            let line = format!(r#"{{"c":"{escaped}"}}"#);
            let (out, n) = red(&line);
            assert_json_lines(&out);
            // The same as the sample in a JSON string written plainly.
            let plain_line = serde_json::json!({ "c": p }).to_string();
            let (plain_out, plain_n) = red(&plain_line);
            assert_eq!(n, plain_n, "{line} -> {out}");
            assert_eq!(
                serde_json::from_str::<Value>(&out).unwrap(),
                serde_json::from_str::<Value>(&plain_out).unwrap(),
                "{line}"
            );
        }
    }

    #[test]
    fn triggers_are_lowercase_and_plain_prose_triggers_no_rule() {
        for rule in &BUILTIN {
            for t in rule.triggers {
                assert_eq!(*t, t.to_ascii_lowercase());
            }
        }
        let text = "plain prose about a transcript, nothing to hide\n".repeat(100);
        let mut triggers = Triggers::new(text.as_bytes());
        assert!(BUILTIN.iter().all(|r| !triggers.any(r.triggers)));
        assert_eq!(red(&text), (text.clone(), 0));
    }

    #[test]
    fn json_values() {
        let mut v = serde_json::json!({"intent": "rotate AKIAIOSFODNN7EXAMPLE", "n": 3, "l": ["DB_PASSWORD=hunter22"]});
        assert_eq!(on().redact_json(&mut v), 2);
        assert_eq!(v["intent"], "rotate REDACTED");
        assert_eq!(v["l"][0], "DB_PASSWORD=REDACTED");
    }

    fn with_rules(patterns: &[&str]) -> Redactor {
        Redactor::new(&RedactionSettings {
            enabled: None,
            rules: patterns
                .iter()
                .enumerate()
                .map(|(i, p)| UserRule {
                    name: format!("rule-{i}"),
                    pattern: (*p).to_owned(),
                })
                .collect(),
        })
        .unwrap()
    }

    #[test]
    fn escapes_do_not_hide_secrets() {
        let gh_body = "a1B2".repeat(9);
        for (line, secret) in [
            (
                r#"{"c":"key \u0041\u004b\u0049\u0041QWERTYUIOPASDFGH here"}"#.to_owned(),
                "QWERTYUIOPASDFGH",
            ),
            (
                format!(r#"{{"c":"token ghp\u005f{gh_body}"}}"#),
                gh_body.as_str(),
            ),
            (
                // sk_live_4eC39HqLyjWDarjtT1zdp7dc, every character escaped.
                format!(
                    r#"{{"c":"{}"}}"#,
                    "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
                        .chars()
                        .map(|c| format!("\\u{:04x}", c as u32))
                        .collect::<String>()
                ),
                "\\u0034\\u0065\\u0043",
            ),
            (
                r#"{"c":"\u002d\u002d\u002d\u002d\u002dBEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\nAAAABG5vbmU=\n"}"#.to_owned(),
                "b3BlbnNzaC1rZXktdjEA",
            ),
            (
                r#"{"c":"git clone https:\/\/alice:s3cretpass@example.com\/r.git"}"#.to_owned(),
                "s3cretpass",
            ),
            (
                r#"{"input":{"api\u005fkey": "abcd1234efgh"}}"#.to_owned(),
                "abcd1234efgh",
            ),
        ] {
            let (out, n) = red(&line);
            assert!(!out.contains(secret), "{secret} survives in {out}");
            assert!(out.contains(PLACEHOLDER), "{out}");
            assert_eq!(n, 1, "{line} -> {out}");
            assert_json_lines(&out);
        }
    }

    #[test]
    fn only_the_strings_that_changed_are_spelled_again() {
        let line = r#"{"a":"caf\u00e9 \/ x","b":"\u0041KIAIOSFODNN7EXAMPLE","n":1.5e3}"#;
        assert_jsonl_redacts(
            line,
            r#"{"a":"caf\u00e9 \/ x","b":"REDACTED","n":1.5e3}"#,
            1,
        );
        // Escapes and nothing to find: byte-identical, alone and among other lines.
        let clean =
            "{\"a\":\"caf\\u00e9 \\u001b[0m \\/ \\\\u0041\"}\nnot json \\u0041\n[1,\"\\u00e9\"]\n";
        assert_eq!(red(clean), (clean.to_owned(), 0));
        // A document over several lines is read as one value.
        let doc = "{\n  \"secret\": \"hunter22\",\n  \"c\": \"\\u0041KIAIOSFODNN7EXAMPLE\"\n}\n";
        assert_eq!(
            red(doc),
            (
                "{\n  \"secret\": \"REDACTED\",\n  \"c\": \"REDACTED\"\n}\n".to_owned(),
                2
            )
        );
    }

    #[test]
    fn escaped_lines_are_redacted_in_one_pass_and_the_others_keep_their_bytes() {
        let gh = format!("ghp\\u005f{}", "a1B2".repeat(9));
        let lines = [
            r#"{"a":"caf\u00e9"}"#.to_owned(),
            r#"{"b":"\u0041KIAIOSFODNN7EXAMPLE","c":"\u00e9"}"#.to_owned(),
            r#"{"d":"plain AKIAIOSFODNN7EXAMPLE"}"#.to_owned(),
            format!(r#"{{"e":"x {gh}"}}"#),
            r#"{"f":"\u001b[0m"}"#.to_owned(),
        ];
        let (out, n) = red(&(lines.join("\n") + "\n"));
        let out: Vec<&str> = out.lines().collect();
        assert_eq!(n, 3);
        assert_eq!(out[0], lines[0]);
        assert_eq!(out[1], r#"{"b":"REDACTED","c":"\u00e9"}"#);
        assert_eq!(out[2], r#"{"d":"plain REDACTED"}"#);
        assert_eq!(out[3], r#"{"e":"x REDACTED"}"#);
        assert_eq!(out[4], lines[4]);
    }

    #[test]
    fn user_rules_match_decoded_strings_and_keep_json_valid() {
        let cases: &[(&str, &str, &str)] = &[
            (
                r"MYCORP_KEY=\S+",
                r#"{"content":"export MYCORP_KEY=abc123def"}"#,
                r#"{"content":"export REDACTED"}"#,
            ),
            (
                r"MYCORP_KEY=\S+",
                r#"{"content":"export MYCORP\u005fKEY=abc123def\nnext"}"#,
                r#"{"content":"export REDACTED\nnext"}"#,
            ),
            (
                r".+",
                r#"{"a":"x","b":[1,"y"]}"#,
                r#"{"REDACTED":"REDACTED","REDACTED":["REDACTED","REDACTED"]}"#,
            ),
            (
                r#"\""#,
                r#"{"m":"say \"hi\"","n":"plain"}"#,
                r#"{"m":"say REDACTEDhiREDACTED","n":"plain"}"#,
            ),
            (
                ":",
                r#"{"a": "b:c", "d": 1}"#,
                r#"{"a": "bREDACTEDc", "d": 1}"#,
            ),
            (
                r"4111[0-9]{12}",
                r#"{"card": 4111111111111111}"#,
                r#"{"card": "REDACTED"}"#,
            ),
            (
                r"CORPSECRET-[0-9]+",
                "{\n  \"m\": \"CORPSECRET-42 is it\"\n}",
                "{\n  \"m\": \"REDACTED is it\"\n}",
            ),
        ];
        for (pattern, input, want) in cases {
            let r = with_rules(&[pattern]);
            let (out, n) = r.redact_str(input);
            assert_eq!(&out, want, "{pattern} on {input}");
            assert!(n > 0);
            if !input.contains('\n') || !input.starts_with('{') {
                assert_json_lines(&out);
            } else {
                serde_json::from_str::<Value>(&out).unwrap();
            }
        }
        // Text that is not JSON is matched as it is.
        let r = with_rules(&[r"MYCORP_KEY=\S+"]);
        assert_eq!(
            r.redact_str("export MYCORP_KEY=abc123def and more\nMYCORP_KEY=x"),
            ("export REDACTED and more\nREDACTED".to_owned(), 2)
        );
        // Lines the rule does not match keep their bytes, escapes included.
        let t = "{\"a\":\"caf\\u00e9\"}\n{\"b\":\"MYCORP_KEY=1\"}\n";
        assert_eq!(
            r.redact_str(t),
            (
                "{\"a\":\"caf\\u00e9\"}\n{\"b\":\"REDACTED\"}\n".to_owned(),
                1
            )
        );
    }

    #[test]
    fn a_string_that_does_not_decode_is_matched_as_written() {
        let r = with_rules(&[r"MYCORP_KEY=\S+"]);
        let (out, n) = r.redact_str(r#"{"a":"\ud800 MYCORP_KEY=abc"}"#);
        assert_eq!(n, 1);
        assert!(!out.contains("abc"), "{out}");
        assert_json_lines(&out);
    }

    #[test]
    fn user_rules_that_can_match_nothing_are_refused() {
        for pattern in ["", ".*", "a*", r"\b", "^", "(?m)$", "x?", "(?:abc)?|d"] {
            let err = Redactor::new(&RedactionSettings {
                enabled: None,
                rules: vec![UserRule {
                    name: "greedy".into(),
                    pattern: pattern.into(),
                }],
            })
            .err();
            assert_eq!(
                err,
                Some(RedactError::MatchesEmpty {
                    name: "greedy".into()
                }),
                "{pattern:?}"
            );
        }
        with_rules(&["a+", "CORP-[0-9]+", r"\bx\b", ".+"]);
    }

    #[test]
    fn member_names_of_json_values_are_redacted() {
        let mut v = serde_json::json!({"AKIAIOSFODNN7EXAMPLE": 1, "keep": "x", "z": "ok"});
        assert_eq!(on().redact_json(&mut v), 1);
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"REDACTED":1,"keep":"x","z":"ok"}"#
        );
    }

    proptest::proptest! {
        /// Whatever the strings hold and whatever the user rule, every redacted JSONL line is
        /// still JSON, and a line nothing matched in is unchanged.
        #[test]
        fn user_rules_never_break_json_lines(
            values in proptest::collection::vec("[ -~\u{e9}\n\t\"\\\\]{0,24}", 1..4),
            rule in proptest::sample::select(vec![":", r#"\""#, r"\\", ".+", r"[{}\[\],]", r"MYCORP_KEY=\S+", r"\s+"]),
        ) {
            let line = serde_json::to_string(&serde_json::json!({ "v": values, "k": values[0] })).unwrap();
            let escaped = line.replace('A', "\\u0041");
            for input in [line, escaped] {
                let (out, n) = with_rules(&[rule]).redact_str(&input);
                proptest::prop_assert!(serde_json::from_str::<Value>(&out).is_ok(), "{} -> {}", input, out);
                if n == 0 {
                    proptest::prop_assert_eq!(&out, &input);
                }
            }
        }
    }
}
