//! One read of a text that finds where each view of [`super::Views::Decoded`] may start, and
//! the bare AWS secret keys: a table of byte classes walked once, the runs of letters and
//! digits that make most of a transcript passed over in a tight loop, in place of a walk of
//! every byte for base64 runs, another for AWS keys and one `memchr` pass each for `%`, `\x`
//! and `\\\"`.

use std::ops::Range;

use super::shapes::aws_key;
use super::MIN_RUN;

/// A byte of a bare AWS secret access key: `[A-Za-z0-9/+]`.
const KEY: u8 = 1;
/// A base64 character, standard or URL-safe: `[A-Za-z0-9+/_-]`.
const BASE64: u8 = 2;
/// A byte no base64 run (nor anything [`super::encoded`] reads around one) crosses: not a token
/// byte, a backslash, white space or a line break.
const SEPARATOR: u8 = 4;
/// A byte some view of decoded text starts on: `%` or a backslash.
const LEAD: u8 = 8;

/// The class of each byte.
static CLASSES: [u8; 256] = classes();

const fn classes() -> [u8; 256] {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        let alnum = byte.is_ascii_alphanumeric();
        let mut class = 0;
        if alnum || byte == b'/' || byte == b'+' {
            class |= KEY | BASE64;
        }
        if byte == b'-' || byte == b'_' {
            class |= BASE64;
        }
        if byte == b'%' || byte == b'\\' {
            class |= LEAD;
        }
        // `super::is_token`'s bytes, and those a wrapped run continues across.
        let kept = alnum
            || matches!(
                byte,
                b'_' | b'-' | b'+' | b'/' | b'=' | b'\\' | b' ' | b'\t' | b'\n' | b'\r'
            );
        if !kept {
            class |= SEPARATOR;
        }
        table[b] = class;
        b += 1;
    }
    table
}

/// What one read of a text found.
#[derive(Default, Debug, PartialEq, Eq)]
pub(super) struct Candidates {
    /// Ranges of the text, in order and apart, outside which no base64 run of [`MIN_RUN`]
    /// characters starts: each starts at the text's start or after a [`SEPARATOR`], ends at the
    /// text's end or after one, and holds [`MIN_RUN`] base64 characters (or `\/`) in a row. A
    /// walk of base64 runs started at one's start reads what a walk from the text's start reads
    /// there, since none reads across a separator.
    pub(super) base64: Vec<Range<usize>>,
    /// Where a `%` is, in order.
    pub(super) percent: Vec<usize>,
    /// Where a `\x` is, in order.
    pub(super) hex_escape: Vec<usize>,
    /// Whether the text holds `\\\"` (a quote of a string nested two deep).
    pub(super) nested_quote: bool,
    /// The bare AWS secret access keys ([`super::shapes::bare_aws_secrets`]), in order.
    pub(super) aws: Vec<Range<usize>>,
}

/// Reads `text` once for its [`Candidates`].
pub(super) fn candidates(text: &[u8]) -> Candidates {
    let mut found = Candidates::default();
    let class = |i: usize| CLASSES[usize::from(text[i])];
    // Base64 characters (and `\/`) in a row before `i`.
    let mut chunk = 0;
    // Where the current segment (between separators) starts, and whether it holds a chunk of
    // `MIN_RUN`.
    let (mut segment, mut hot) = (0, false);
    let mut i = 0;
    while i < text.len() {
        let run = i;
        i += text[run..]
            .iter()
            .position(|&b| CLASSES[usize::from(b)] & KEY == 0)
            .unwrap_or(text.len() - run);
        if i > run {
            // A key is 40 characters, after an escape's letter (`\n`, `\u0041`) at most.
            if (40..=45).contains(&(i - run)) {
                found.aws.extend(aws_key(text, run..i));
            }
            chunk += i - run;
            hot |= chunk >= MIN_RUN;
            if i == text.len() {
                break;
            }
        }
        let c = class(i);
        let byte = text[i];
        if c == 0 {
            // White space, a line break or `=`: nothing starts here, no segment ends.
            chunk = 0;
            i += 1;
            continue;
        }
        if c & BASE64 != 0 || byte == b'\\' && text.get(i + 1) == Some(&b'/') {
            chunk += 1;
            hot |= chunk >= MIN_RUN;
        } else {
            chunk = 0;
        }
        if c & LEAD != 0 {
            if byte == b'%' {
                found.percent.push(i);
            } else if text.get(i + 1) == Some(&b'x') {
                found.hex_escape.push(i);
            } else if text[i..].starts_with(b"\\\\\\\"") {
                found.nested_quote = true;
            }
        }
        if c & SEPARATOR != 0 {
            if hot {
                push_merged(&mut found.base64, segment..i + 1);
                hot = false;
            }
            segment = i + 1;
        }
        i += 1;
    }
    if hot {
        push_merged(&mut found.base64, segment..text.len());
    }
    found
}

/// Adds `range` to `ranges`, joined to the last one when it starts where that one ends.
fn push_merged(ranges: &mut Vec<Range<usize>>, range: Range<usize>) {
    match ranges.last_mut() {
        Some(last) if last.end == range.start => last.end = range.end,
        _ => ranges.push(range),
    }
}
