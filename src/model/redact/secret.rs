//! What of a match is a secret: where a token starts, which values are placeholders or too
//! regular to be random, which JSON member names hold credentials, and so what one match of a
//! rule replaces.

use std::ops::Range;
use std::sync::OnceLock;

use super::rules::{Replace, AUTH_SCHEME, CREDENTIAL_NAME};
use super::PLACEHOLDER;

/// Minimum Shannon entropy (bits per character) of a value in a key-like assignment.
const MIN_ENTROPY: f64 = 3.5;

/// Whether a match at `start` begins a token: at the start, after a byte that is not a word
/// character, after a JSON string escape (`\n`, `\t`, `\u0020`...), or with an underscore (the
/// `_PASSWORD` of `DB_PASSWORD`). A plain `\b` misses `\nghp_...` because the escape's `n` reads
/// as a word character, and the regex crate has no look-behind; checking here rather than in
/// the pattern also keeps each rule's literal prefilter (`ghp_`, `AKIA`) fast.
pub(super) fn at_token_start(text: &[u8], start: usize) -> bool {
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
pub(super) fn is_placeholder(v: &[u8]) -> bool {
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

/// The Shannon entropy of `v`, in bits per byte.
pub(super) fn entropy(v: &[u8]) -> f64 {
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
pub(super) fn is_credential_name(name: &str) -> bool {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(&format!("^{CREDENTIAL_NAME}$")).expect("the name pattern compiles")
    })
    .is_match(name)
}

/// The part of a credential member's value to replace: all of it but an authorization scheme.
pub(super) fn credential_start(value: &str) -> usize {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(&format!("^{AUTH_SCHEME}")).expect("the scheme compiles"))
        .find(value)
        .map_or(0, |m| m.end())
}

/// What replaces one match whose whole is `whole` and whose group `value` is `value` (both
/// ranges of the text `bytes` of the match start at `whole.start`): `None` to keep it.
pub(super) fn replacement(
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
