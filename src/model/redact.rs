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
use regex_automata::dfa::{dense, regex::Regex as DfaRegex};
use regex_automata::nfa::thompson::{self, pikevm::PikeVM};
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input};
use serde::Deserialize;
use serde_json::Value;

#[path = "redact_rules.rs"]
mod rules;
use rules::{Builtin, Replace, AUTH_SCHEME, BUILTIN, CREDENTIAL_NAME};

/// The DFAs `build.rs` compiled from [`rules::BUILTIN`], embedded in the binary.
mod compiled {
    /// Bytes aligned as the DFAs' `u32` transition tables must be to load without a copy.
    #[repr(C, align(4))]
    pub struct Aligned<B: ?Sized> {
        pub bytes: B,
    }
    macro_rules! aligned {
        ($name:literal) => {
            &Aligned {
                bytes: *include_bytes!(concat!(env!("OUT_DIR"), "/", $name)),
            }
        };
    }
    include!(concat!(env!("OUT_DIR"), "/redact_dfas.rs"));
}

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

/// A user rule, compiled when the redactor is built.
struct Rule {
    re: Regex,
    replace: Replace,
    /// Only a match at a token start counts (see [`at_token_start`]).
    token_start: bool,
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

/// What replaces one match whose whole is `whole` and whose group `value` is `value` (both
/// ranges of the text `bytes` of the match start at `whole.start`): `None` to keep it.
fn replacement(
    replace: Replace,
    text: &[u8],
    whole: Range<usize>,
    value: Option<Range<usize>>,
) -> Option<Range<usize>> {
    let secret = match (replace, value) {
        (Replace::Whole, _) => Some(whole),
        (Replace::Value, Some(v)) if !is_placeholder(&text[v.clone()]) => Some(v),
        (Replace::EntropyValue, Some(v))
            if !is_placeholder(&text[v.clone()]) && entropy(&text[v.clone()]) >= MIN_ENTROPY =>
        {
            Some(v)
        }
        _ => None,
    };
    secret.filter(|s| &text[s.clone()] != PLACEHOLDER.as_bytes())
}

/// `text` with the secrets among the matches of the user rule `re` replaced, counted in
/// `count`; `None` when `re` does not match.
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
        let value = c.name("value").map(|v| v.range());
        match replacement(replace, text, whole.range(), value) {
            Some(s) => {
                *count += 1;
                let mut out = text[whole.start()..s.start].to_vec();
                out.extend_from_slice(PLACEHOLDER.as_bytes());
                out.extend_from_slice(&text[s.end..whole.end()]);
                out
            }
            None => whole.as_bytes().to_vec(),
        }
    });
    Some(replaced.into_owned())
}

/// A DFA `build.rs` serialized, loaded in place.
type Dfa = dense::DFA<&'static [u32]>;

///
/// Not validated on load: validating costs more than the rest of a small `write` (2 M
/// instructions for the rules a transcript triggers). The test `every_compiled_dfa_is_valid`
/// validates each one.
fn load(aligned: &'static compiled::Aligned<[u8]>) -> Dfa {
    // SAFETY: the bytes are a DFA that `build.rs` serialized with `to_bytes_*_endian` for this
    // target's endianness, with the same `regex-automata` (Cargo.toml pins one exact version
    // for the build script and the library), which is what `from_bytes_unchecked` requires;
    // `Aligned` gives them the 4-byte alignment it needs.
    unsafe { Dfa::from_bytes_unchecked(&aligned.bytes) }
        .expect("build.rs serialized the DFA for this target")
        .0
}

/// The syntax of `regex::bytes::Regex`, which the DFAs were built with too.
fn builtin_syntax() -> syntax::Config {
    syntax::Config::new().utf8(false)
}

/// The engines of one built-in rule, each made the first time it is needed.
struct Engines {
    /// Finds the rule's matches exactly as `regex::bytes::Regex` would (leftmost-first), from
    /// the DFAs `build.rs` compiled; `None` for a rule it left to the regex crate.
    find: OnceLock<Option<DfaRegex<Dfa>>>,
    /// Reads group `value` of a match found: compiled only for a rule that has a match whose
    /// value is not the whole match, and run on the span the DFAs found (as the regex crate
    /// does).
    captures: OnceLock<PikeVM>,
    /// The rule as a `regex::bytes::Regex`: for a rule without DFAs, compiled the first time a
    /// text holds one of its triggers.
    regex: OnceLock<Regex>,
}

static ENGINES: [Engines; BUILTIN.len()] = [const {
    Engines {
        find: OnceLock::new(),
        captures: OnceLock::new(),
        regex: OnceLock::new(),
    }
}; BUILTIN.len()];

impl Builtin {
    fn index(&self) -> usize {
        BUILTIN
            .iter()
            .position(|r| std::ptr::eq(r, self))
            .expect("a built-in rule")
    }

    /// The rule's regex, compiled on first use.
    fn regex(&self) -> &'static Regex {
        ENGINES[self.index()].regex.get_or_init(|| {
            Regex::new(&(self.pattern)()).expect("built-in redaction rules compile")
        })
    }
}

fn finder(i: usize) -> Option<&'static DfaRegex<Dfa>> {
    ENGINES[i]
        .find
        .get_or_init(|| {
            let forward = compiled::FORWARD[i]?;
            let reverse = compiled::REVERSE[i]?;
            Some(DfaRegex::builder().build_from_dfas(load(forward), load(reverse)))
        })
        .as_ref()
}

fn capturer(i: usize) -> &'static PikeVM {
    ENGINES[i].captures.get_or_init(|| {
        PikeVM::builder()
            .syntax(builtin_syntax())
            .thompson(thompson::Config::new().utf8(false))
            .build(&(BUILTIN[i].pattern)())
            .expect("built-in redaction rules compile")
    })
}

/// `text` with the secrets among the matches of built-in rule `i` replaced, counted in
/// `count`; `None` when nothing was replaced. The same as [`replace_secrets`] with the rule's
/// regex.
fn replace_builtin(i: usize, text: &[u8], count: &mut usize) -> Option<Vec<u8>> {
    let rule = &BUILTIN[i];
    let Some(finder) = finder(i) else {
        let before = *count;
        let replaced = replace_secrets(rule.regex(), rule.replace, rule.token_start, text, count);
        return replaced.filter(|_| *count > before);
    };
    let mut out = Vec::new();
    let mut copied = 0;
    let mut changed = false;
    let mut pike: Option<(&PikeVM, _, _)> = None;
    for m in finder.find_iter(text) {
        let whole = m.range();
        if rule.token_start && !at_token_start(text, whole.start) {
            continue;
        }
        let value = if rule.replace == Replace::Whole || rule.value_is_match {
            Some(whole.clone())
        } else {
            let (vm, cache, caps) = pike.get_or_insert_with(|| {
                let vm = capturer(i);
                (vm, vm.create_cache(), vm.create_captures())
            });
            let input = Input::new(text)
                .range(whole.clone())
                .anchored(Anchored::Yes);
            vm.search(cache, &input, caps);
            debug_assert_eq!(caps.get_match().map(|m| m.range()), Some(whole.clone()));
            caps.get_group_by_name("value").map(|v| v.range())
        };
        if let Some(s) = replacement(rule.replace, text, whole.clone(), value) {
            *count += 1;
            changed = true;
            out.extend_from_slice(&text[copied..s.start]);
            out.extend_from_slice(PLACEHOLDER.as_bytes());
            copied = s.end;
        }
    }
    if !changed {
        return None;
    }
    out.extend_from_slice(&text[copied..]);
    Some(out)
}

/// The built-in rules with each rule's `regex::bytes::Regex`, compiled at run time, over the
/// text the rules before it left: the same output as [`redact_builtin`]'s DFAs (the tests
/// compare them), and faster on large texts, where the regex crate's literal prefilters skip
/// most bytes and the ~2 ms of compiling matter little.
fn redact_builtin_at_run_time(input: &[u8]) -> (Vec<u8>, usize) {
    let mut text = input.to_vec();
    let mut count = 0;
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

/// From this size on a text is redacted with [`redact_builtin_at_run_time`]: measured on real
/// transcripts, the DFAs cost less up to about 1 MB and more from about 4 MB on
/// (docs/performance.md, note (a)).
const LARGE_TEXT: usize = 2 << 20;

/// The built-in rules over `input` as bytes: the redacted text and the number of secrets.
///
/// Rule by rule, in order, each over the text the rules before it left, as if each were
/// `regex::bytes::Regex::replace_all`; a rule runs only when the text holds one of its
/// triggers, looked up again whenever a rule changed the text (a replacement can join two
/// pieces into a new trigger).
fn redact_builtin(input: &[u8]) -> (Vec<u8>, usize) {
    #[cfg(test)]
    if tests::REFERENCE.get() {
        return redact_builtin_at_run_time(input);
    }
    if input.len() >= LARGE_TEXT {
        return redact_builtin_at_run_time(input);
    }
    let mut text = Cow::Borrowed(input);
    let mut count = 0;
    let mut triggers = Triggers::new(&text);
    for (i, rule) in BUILTIN.iter().enumerate() {
        if !triggers.any(rule.triggers) || rule.gate.is_some_and(|gate| !gate(&text)) {
            continue;
        }
        if let Some(replaced) = replace_builtin(i, &text, &mut count) {
            text = Cow::Owned(replaced);
            triggers = Triggers::new(&text);
        }
    }
    (text.into_owned(), count)
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

/// What the JSON-aware stages know of the shape of a text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    /// Nothing: the text may be one JSON value (a document over several lines).
    Unknown,
    /// The text is lines of a longer text that is not one JSON value (a part of it
    /// [`Redactor::redact_vec`] cut between lines), so it is redacted line by line as the longer
    /// text would be, even where this part alone would parse as one value.
    Lines,
}

/// `text` cut into pieces: the whole text when it is one JSON value (a document over several
/// lines) and its shape is [`Shape::Unknown`], else its lines, each line that is a JSON value
/// (JSONL) a piece of its own and each run of other lines one piece, so rules for raw text
/// still see across their line breaks. Only lines `maybe_json` accepts are parsed.
fn pieces(text: &[u8], shape: Shape, maybe_json: impl Fn(&[u8]) -> bool) -> Vec<Piece> {
    if shape == Shape::Unknown && is_json(text) {
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
fn redact_escaped(text: &[u8], shape: Shape) -> Option<(Vec<u8>, usize)> {
    let pieces = pieces(text, shape, has_spelling_escape);
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

/// Stages 1 and 2 of [`Redactor`] (the built-in rules) over `input`: the redacted text and the
/// count.
fn redact_builtin_stages(input: &[u8], shape: Shape) -> (Vec<u8>, usize) {
    let (mut text, mut count) = redact_builtin(input);
    if has_spelling_escape(&text) {
        if let Some((t, n)) = redact_escaped(&text, shape) {
            text = t;
            count += n;
        }
    }
    (text, count)
}

/// The size from which [`Redactor::redact_vec`] redacts a text in parts, and about the size of
/// each part: large enough that the rules' set-up per part costs little, small enough that the
/// few copies a part's redaction makes stay a small fraction of the 64 MiB a 100 MB transcript
/// may cost beside itself (docs/performance.md, target 5).
const PART_SIZE: usize = 4 << 20;

/// Where the part of `text` for the built-in stages that ends at or after `from` ends: the
/// first newline at or after `from` with `}` before it and `{` after it, else the text's end.
fn builtin_cut(text: &[u8], from: usize) -> usize {
    let from = from.max(1);
    if from >= text.len() {
        return text.len();
    }
    memchr::memmem::find(&text[from - 1..], b"}\n{").map_or(text.len(), |i| from + i)
}

/// Where the part of `text` for the user rules that ends at or after `from` ends: the first
/// newline at or after `from` whose line before or after is a JSON value, else the text's end.
fn user_cut(text: &[u8], from: usize) -> usize {
    let line_start = |at: usize| memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
    for nl in memchr::memchr_iter(b'\n', text.get(from..).unwrap_or_default()) {
        let at = from + nl;
        let after = &text[at + 1..];
        let next = &after[..memchr::memchr(b'\n', after).unwrap_or(after.len())];
        if is_json(&text[line_start(at)..at]) || is_json(next) {
            return at;
        }
    }
    text.len()
}

/// Rewrites `text` in place a part at a time, keeping the newline after each part:
/// `cut(text, start)` is the end of the part that starts at `start` (a newline's index, or the
/// text's end), `redact` a part's new bytes and count (`None` to keep it). Returns the sum of
/// the counts. Beside `text`, only one part and its rewrite are held at a time.
fn rewrite_in_parts(
    text: &mut Vec<u8>,
    cut: impl Fn(&[u8], usize) -> usize,
    redact: impl Fn(&[u8]) -> Option<(Vec<u8>, usize)>,
) -> usize {
    let mut count = 0;
    // `text[..done]` is rewritten, `text[next..]` still to read; `done <= next` throughout.
    let (mut done, mut next) = (0, 0);
    while next < text.len() {
        let mut end = cut(text, next);
        match redact(&text[next..end]) {
            Some((bytes, n)) => {
                count += n;
                if done + bytes.len() > end {
                    // The rewrites so far are longer than what they replace: make room in
                    // front of the rest (rare: a secret shorter than the placeholder).
                    let more = done + bytes.len() - end;
                    text.reserve_exact(more);
                    text.splice(end..end, std::iter::repeat_n(0, more));
                    end += more;
                }
                text[done..done + bytes.len()].copy_from_slice(&bytes);
                done += bytes.len();
            }
            None => {
                if done < next {
                    text.copy_within(next..end, done);
                }
                done += end - next;
            }
        }
        next = end;
        if next < text.len() {
            text[done] = text[next];
            done += 1;
            next += 1;
        }
    }
    text.truncate(done);
    count
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
        let (text, count) = redact_builtin_stages(input, Shape::Unknown);
        match self.redact_user_stage(&text, Shape::Unknown) {
            Some((t, n)) => (t, count + n),
            None => (text, count),
        }
    }

    /// Stage 3 (the user rules) over `text`; `None` when they change nothing.
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

    /// Redacts `bytes` in place; returns the count. The result is byte for byte
    /// [`Redactor::redact_bytes`]'s; a text with a line break `}\n{` (JSONL) past the first
    /// [`PART_SIZE`] bytes is redacted a part at a time, in place, so a large transcript costs
    /// a few parts of memory beside itself rather than several copies of it.
    pub fn redact_vec(&self, bytes: &mut Vec<u8>) -> usize {
        self.redact_vec_in_parts(bytes, PART_SIZE)
    }

    /// [`Redactor::redact_vec`] with parts of at least `part` bytes (a parameter for the tests).
    ///
    /// Parts are cut only where redacting them one by one gives what redacting the whole text
    /// gives. The built-in stages are cut at a newline between `}` and `{`: no built-in match
    /// holds such a newline (the rules that read across lines, through `\s` or a PEM block's
    /// lines, need a `:`, `=` or space before it, or a base64 or PEM line, `-----END`, `;`,
    /// `:` or `=` after it), so each rule finds the same matches either way; a replacement
    /// never starts at that `{` and only ever leaves a `D` before the newline, so the cut stays
    /// one through every rule; the text holds a newline between a value and `{`, so it is not
    /// one JSON value and its pieces for stage 2 are its lines, where no match crosses from one
    /// JSON line to the next either. The user rules, which read a run of lines that are not
    /// JSON as one text, are cut afterwards, in a second pass, at a newline next to a line that
    /// is a JSON value.
    fn redact_vec_in_parts(&self, bytes: &mut Vec<u8>, part: usize) -> usize {
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
                let (redacted, n) = redact_builtin_stages(text, Shape::Lines);
                (n > 0).then_some((redacted, n))
            },
        );
        if !self.user.is_empty() {
            count += rewrite_in_parts(
                bytes,
                |text, start| user_cut(text, start + part),
                |text| self.redact_user_stage(text, Shape::Lines),
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

    thread_local! {
        /// Makes [`redact_builtin`] run [`redact_builtin_at_run_time`] on this thread.
        pub(super) static REFERENCE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// What the redactor makes of `input` with the regex crate's rules.
    fn reference(r: &Redactor, input: &[u8]) -> (Vec<u8>, usize) {
        REFERENCE.set(true);
        let out = r.redact_bytes(input);
        REFERENCE.set(false);
        out
    }

    /// Asserts the redactor's output on `input` is byte-identical to the reference's, and so is
    /// every built-in rule's own pass (matches, `value` groups, replacements).
    fn assert_same_as_reference(input: &[u8]) {
        let r = Redactor::builtin();
        assert_eq!(
            r.redact_bytes(input),
            reference(&r, input),
            "{:?}",
            String::from_utf8_lossy(input)
        );
        for (i, rule) in BUILTIN.iter().enumerate() {
            if let Some(gate) = rule.gate {
                assert!(
                    !rule.regex().is_match(input) || gate(input),
                    "the gate of rule {i} fails {:?}",
                    String::from_utf8_lossy(input)
                );
            }
            let (mut new, mut old) = (0, 0);
            let want = replace_secrets(
                rule.regex(),
                rule.replace,
                rule.token_start,
                input,
                &mut old,
            )
            .filter(|_| old > 0);
            assert_eq!(
                replace_builtin(i, input, &mut new),
                want,
                "rule {i} on {:?}",
                String::from_utf8_lossy(input)
            );
            assert_eq!(new, old, "rule {i}");
            if let Some(f) = finder(i) {
                let spans: Vec<_> = f.find_iter(input).map(|m| m.range()).collect();
                let want: Vec<_> = rule.regex().find_iter(input).map(|m| m.range()).collect();
                assert_eq!(spans, want, "rule {i}");
            }
        }
    }

    /// One sample per built-in rule, in rule order, that the rule itself redacts.
    const SAMPLE_PER_RULE: [&str; 23] = [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk\n",
        "use AKIAIOSFODNN7EXAMPLE here",
        "token ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
        "github_pat_A1b_A1b_A1b_A1b_A1b_A1b_A1b_A1b_",
        "glpat-abcdefghij0123456789XY",
        "use xoxb-1234567890-abcdefghij now",
        "xapp-1-A0123456789-1234567890123-abcdef0123456789",
        "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMgACJXsicGVy",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "git clone https://alice:s3cretpass@example.com/r.git",
        r#"{"api_key": "abcd1234"}"#,
        r#"{"m":"{\"password\": \"hunter22\"}"}"#,
        "curl -H 'Authorization: token 0123abcdXYZ'",
        "send Bearer Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1 along",
        "Server=db;Password=S3cr3t!x;",
        "DB_PASSWORD=hunter22",
        "MY_SIGNING_KEY=Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1",
    ];

    #[test]
    fn every_builtin_rule_fires_on_its_sample() {
        for (i, sample) in SAMPLE_PER_RULE.iter().enumerate() {
            let text = sample.as_bytes();
            let mut triggers = Triggers::new(text);
            assert!(triggers.any(BUILTIN[i].triggers), "rule {i}: {sample}");
            let mut n = 0;
            let out = replace_builtin(i, text, &mut n)
                .unwrap_or_else(|| panic!("rule {i} does not fire on {sample}"));
            assert!(n > 0, "rule {i}");
            assert!(
                memchr::memmem::find(&out, PLACEHOLDER.as_bytes()).is_some(),
                "rule {i}"
            );
            let (redacted, count) = red(sample);
            assert!(
                count > 0 && redacted.contains(PLACEHOLDER),
                "rule {i}: {sample}"
            );
            assert_same_as_reference(text);
        }
    }

    #[test]
    fn every_compiled_dfa_is_valid() {
        for dfa in compiled::FORWARD.iter().chain(&compiled::REVERSE).flatten() {
            Dfa::from_bytes(&dfa.bytes).unwrap();
        }
        assert!(compiled::FORWARD.iter().filter(|d| d.is_some()).count() >= 19);
    }

    #[test]
    fn rules_whose_value_is_the_match_say_so() {
        for (i, rule) in BUILTIN.iter().enumerate() {
            if !rule.value_is_match {
                continue;
            }
            let pattern = (rule.pattern)();
            assert!(
                pattern.starts_with("(?P<value>") && pattern.ends_with(r")(?-u:\b)"),
                "rule {i}: {pattern}"
            );
            for text in trigger_corpus() {
                for c in rule.regex().captures_iter(text.as_bytes()) {
                    assert_eq!(c.get(0).unwrap().range(), c.name("value").unwrap().range());
                }
            }
        }
    }

    #[test]
    fn the_compiled_rules_redact_every_test_text_as_the_regex_crate_does() {
        for text in trigger_corpus().iter().chain(
            SAMPLE_PER_RULE
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .iter(),
        ) {
            assert_same_as_reference(text.as_bytes());
            let line = serde_json::json!({ "c": text }).to_string();
            assert_same_as_reference(line.as_bytes());
            assert_same_as_reference(line.replace('A', "\\u0041").as_bytes());
        }
    }

    /// Pieces of text around which the rules' matches start, end and fail.
    const FRAGMENTS: &[&str] = &[
        " ",
        "\n",
        "\\n",
        "\\t",
        "\r\n",
        "\"",
        "\\\"",
        "'",
        "\\\\",
        ":",
        "=",
        ";",
        "@",
        "/",
        "://",
        "_",
        "-",
        ".",
        ",",
        "key",
        "KEY",
        "token",
        "secret",
        "password",
        "pwd",
        "auth",
        "Authorization",
        "bearer ",
        "Basic ",
        "api_key",
        "\"api_key\": \"",
        "\\\"password\\\":\\\"",
        "x",
        "abcd",
        "Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1",
        "aaaaaaaaaaaaaaaaaaaaaaaa",
        "REDACTED",
        "${X}",
        "https://u",
        "postgres://app:p",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "MIIEpAIBAAKCAQEA",
        "Proc-Type: 4,ENCRYPTED",
        "ghp_",
        "AKIA",
        "a1B2a1B2a1B2a1B2a1B2",
        "sk-",
        "eyJhbGciOiJIUzI1NiJ9",
        ".eyJ",
        "xoxb-",
        "glpat-",
        "npm_",
        "\u{e9}",
        "\u{212A}",
        "\u{17F}",
        "\u{2003}",
        "\\u0041",
        "\\/",
        "{",
        "}",
        "[",
        "]",
        "hooks.slack.com/services/",
        "sk_live_",
        "Pwd = ",
        "Server=db;",
    ];

    proptest::proptest! {
        /// Texts made of the pieces the rules care about redact byte-identically to the regex
        /// crate's rules, and so does each rule's own pass.
        #[test]
        fn compiled_rules_match_the_regex_crate(
            pieces in proptest::collection::vec(proptest::sample::select(FRAGMENTS), 1..24),
            raw in proptest::collection::vec(proptest::num::u8::ANY, 0..4),
        ) {
            let mut text = pieces.concat().into_bytes();
            text.extend_from_slice(&raw);
            assert_same_as_reference(&text);
        }
    }

    /// The redacted bytes of every file of `$REDACT_CORPUS` (real transcripts) are the same as
    /// the regex crate's rules make of them. `REDACT_CORPUS=DIR cargo test --release --lib
    /// redact -- --ignored`.
    #[test]
    #[ignore = "needs REDACT_CORPUS, a folder of transcripts"]
    fn corpus_is_redacted_as_by_the_regex_crate() {
        let dir = std::env::var("REDACT_CORPUS").expect("REDACT_CORPUS names a folder");
        let r = Redactor::builtin();
        let mut files = 0;
        let mut secrets = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read(entry.unwrap().path()).unwrap();
            let ours = r.redact_bytes(&text);
            assert!(ours == reference(&r, &text), "file {files}");
            for rule in BUILTIN.iter().filter(|r| r.gate.is_some()) {
                assert!(!rule.regex().is_match(&text) || (rule.gate.unwrap())(&text));
            }
            secrets += ours.1;
            files += 1;
        }
        println!("{files} files, {secrets} secrets, all byte-identical");
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

    /// Lines that put secrets of every kind on and next to the cuts of
    /// [`Redactor::redact_vec_in_parts`]: JSONL lines, lines a rule breaks (`{"token":1234567}`
    /// loses its `}`), secrets spelled with escapes, PEM blocks over real lines, raw text, and
    /// the spaces, `=` and `:` the rules read across line breaks.
    fn lines_for_parts() -> Vec<String> {
        let mut lines: Vec<String> = SAMPLE_PER_RULE
            .iter()
            .map(|s| serde_json::json!({ "type": "user", "content": s }).to_string())
            .collect();
        lines.extend(SAMPLE_PER_RULE.iter().map(|s| s.to_string()));
        lines.extend(
            [
                r#"{"token":1234567}"#,
                r#"{"password":"abc"}"#,
                r#"{"c":"key \u0041KIAIOSFODNN7EXAMPLE here"}"#,
                r#"{"c":"ghp\u005fa1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2"}"#,
                r#"{"u":"https:\/\/alice:s3cretpass@example.com\/r"}"#,
                r#"{"k":"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"}"#,
                "-----BEGIN RSA PRIVATE KEY-----",
                "MIIEpAIBAAKCAQEA7",
                "-----END RSA PRIVATE KEY-----",
                "Proc-Type: 4,ENCRYPTED",
                "",
                "  ",
                "password =",
                "= hunter22;",
                "pwd=abcd}",
                ";",
                "DB_PASSWORD:",
                "MY_SIGNING_KEY=",
                "Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1",
                r#"{"a":"MYCORP-123"}"#,
                "MYCORP-456 and",
                "{not json}",
                r#"{"x":1}"#,
                "{",
                "}",
            ]
            .map(str::to_owned),
        );
        lines
    }

    /// Asserts that redacting `text` a part at a time gives the whole-text redaction's bytes
    /// and count, with parts of one byte (a cut wherever one may be) and a few larger sizes.
    fn assert_parts_give_the_whole(r: &Redactor, text: &str) {
        let whole = r.redact_bytes(text.as_bytes());
        for part in [1, 2, 16, text.len() / 2, text.len()] {
            let mut bytes = text.as_bytes().to_vec();
            let n = r.redact_vec_in_parts(&mut bytes, part);
            assert_eq!(
                (String::from_utf8_lossy(&bytes), n),
                (String::from_utf8_lossy(&whole.0), whole.1),
                "part {part} of {text:?}"
            );
        }
    }

    #[test]
    fn redacting_in_parts_gives_the_whole_texts_bytes() {
        let lines = lines_for_parts();
        let users = with_rules(&["MYCORP-[0-9]+", r"(?s)BEGIN.*?END", r"and\s+\S+"]);
        // Every line before every other, between two JSON lines, so each pair meets across a
        // cut.
        for a in &lines {
            for b in &lines {
                let text = [r#"{"x":1}"#, a, b, r#"{"y":2}"#].join("\n");
                for r in [&on(), &users] {
                    assert_parts_give_the_whole(r, &text);
                }
            }
        }
    }

    #[test]
    fn a_part_rewritten_longer_than_it_was_moves_the_rest() {
        // `abcd` becomes `REDACTED`: each part grows by four bytes.
        let text = (0..50)
            .map(|i| format!(r#"{{"n":{i},"c":"pwd=abcd; x"}}"#))
            .collect::<Vec<_>>()
            .join("\n");
        let mut bytes = text.clone().into_bytes();
        assert_eq!(on().redact_vec_in_parts(&mut bytes, 1), 50);
        assert_eq!(bytes, on().redact_bytes(text.as_bytes()).0);
        assert!(bytes.len() > text.len());
    }

    proptest::proptest! {
        /// Any sequence of the lines above, cut at any part size, redacts as the whole text.
        #[test]
        fn parts_redact_as_the_whole_text(
            picks in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 1..12),
            part in 1usize..400,
            users in proptest::bool::ANY,
        ) {
            let lines = lines_for_parts();
            let text = picks.iter().map(|i| i.get(&lines).as_str()).collect::<Vec<_>>().join("\n");
            let r = if users { with_rules(&["MYCORP-[0-9]+", r"(?s)BEGIN.*?END"]) } else { on() };
            let mut bytes = text.clone().into_bytes();
            let n = r.redact_vec_in_parts(&mut bytes, part);
            proptest::prop_assert_eq!((bytes, n), r.redact_bytes(text.as_bytes()));
        }
    }
}
