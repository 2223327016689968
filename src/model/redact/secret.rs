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

/// Whether the value `v` of an assignment in `text` is code rather than a literal: unquoted
/// (a literal in code is quoted) and a reference a program makes: a dotted path
/// (`auth.Token`, `process.env.KEY`), a call (`getToken()`), a camelCase name
/// (`installationToken`: words of two or more letters, so a random run of letters is not one),
/// a type or keyword (`string`, `undefined`, `await`), or the assignment's own name passed on
/// (`access_token=access_token`). A password in a `.env` file or a shell is unquoted too, but
/// a plain word (`POSTGRES_PASSWORD=postgres`) or random, and is replaced.
pub(super) fn is_code_reference(text: &[u8], v: Range<usize>) -> bool {
    let before = &text[..v.start];
    if matches!(before.last(), Some(b'"' | b'\'')) {
        return false;
    }
    let value = &text[v];
    let is_ident = |p: &[u8]| {
        p.first()
            .is_some_and(|c| c.is_ascii_alphabetic() || b"_$".contains(c))
            && p.iter()
                .all(|c| c.is_ascii_alphanumeric() || b"_$".contains(c))
    };
    let is_path = |p: &[u8]| !p.is_empty() && p.split(|&c| c == b'.').all(is_ident);
    if let Some(open) = value.iter().position(|&c| c == b'(') {
        return is_path(&value[..open]);
    }
    let value = value.trim_ascii_end();
    let value = value
        .strip_suffix(b"}")
        .or_else(|| value.strip_suffix(b")"))
        .or_else(|| value.strip_suffix(b"]"))
        .unwrap_or(value);
    let dotted = value.contains(&b'.') && is_path(value);
    let keyword = [
        "string",
        "number",
        "boolean",
        "bigint",
        "object",
        "undefined",
        "nil",
        "await",
        "new",
        "any",
        "unknown",
        "void",
        "str",
        "int",
        "bool",
        "bytes",
        "float",
    ]
    .iter()
    .any(|k| value.eq_ignore_ascii_case(k.as_bytes()));
    dotted || keyword || is_camel_case(value) || value == assigned_name(before)
}

/// Whether `v` is a camelCase name: a lowercase word then capitalised ones, each word of two
/// or more letters (`appJwt`, `readReviewGithubTokenHeader`).
fn is_camel_case(v: &[u8]) -> bool {
    if !v.first().is_some_and(u8::is_ascii_lowercase) || !v.iter().all(u8::is_ascii_alphabetic) {
        return false;
    }
    // The lowercase runs between capitals: the first word, then each capitalised word's tail.
    let mut runs = v.split(u8::is_ascii_uppercase);
    let first = runs.next().unwrap_or_default();
    let mut tails = runs.peekable();
    first.len() >= 2 && tails.peek().is_some() && tails.all(|tail| !tail.is_empty())
}

/// The name an assignment ending at the end of `before` assigns to: the identifier before its
/// `=` or `:` (quotes and spaces around them skipped).
fn assigned_name(before: &[u8]) -> &[u8] {
    let end = before.len()
        - before
            .iter()
            .rev()
            .take_while(|c| b" \t=:\"'\\".contains(c))
            .count();
    let name = &before[..end];
    let start = name.len()
        - name
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || b"_-.".contains(c))
            .count();
    &name[start..]
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
    let Some(v) = value else {
        return (replace == Replace::Whole).then_some(whole);
    };
    let random = || entropy(&text[v.clone()]) >= MIN_ENTROPY;
    let code = || is_code_reference(text, v.clone());
    let secret = match replace {
        Replace::Whole => Some(whole),
        _ if is_placeholder(&text[v.clone()]) => None,
        Replace::Value => Some(v),
        Replace::EntropyValue => random().then_some(v),
        Replace::AssignedValue => (!code()).then_some(v),
        Replace::AssignedEntropyValue => (random() && !code()).then_some(v),
    };
    secret.filter(|s| &text[s.clone()] != PLACEHOLDER.as_bytes())
}
