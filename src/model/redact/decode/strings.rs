//! Views of JSON strings nested two or more strings deep, each decoded one level.

use std::ops::Range;

use super::scan::Candidates;
use super::View;

/// The JSON string literals of `text` that hold a string nested two strings deep (`\\\"`),
/// each decoded once, so the rules for strings one level deep see it. `found` tells whether
/// the text holds one.
pub(super) fn nested_json_views(text: &[u8], found: &Candidates) -> Vec<View> {
    let mut out = Vec::new();
    if !found.nested_quote {
        return out;
    }
    for literal in string_literals(text) {
        let inner = literal.start + 1..literal.end - 1;
        if memchr::memmem::find(&text[inner.clone()], b"\\\\\\\"").is_some() {
            out.push(unescape(text, inner));
        }
    }
    out
}

/// The ranges of the JSON string literals of `text`, quotes included, in order.
pub(super) fn string_literals(text: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(open) = memchr::memchr(b'"', &text[i..]).map(|p| i + p) {
        let mut j = open + 1;
        loop {
            match memchr::memchr3(b'"', b'\\', b'\n', &text[j..]).map(|p| j + p) {
                Some(k) if text[k] == b'\\' => j = k + 2,
                Some(k) if text[k] == b'"' => {
                    out.push(open..k + 1);
                    j = k + 1;
                    break;
                }
                Some(k) => {
                    j = k + 1;
                    break;
                }
                None => return out,
            }
            if j >= text.len() {
                return out;
            }
        }
        i = j;
    }
    out
}

/// The content `range` of a JSON string literal decoded one level, each character knowing its
/// escape, but for the escapes of control characters (`\n`, `\t`...), which stay as written:
/// the rules read a JSON string with its line breaks escaped, as they read the strings of a
/// transcript line, where `\n` is no white space (`api_key:\n  716` assigns nothing).
fn unescape(text: &[u8], range: Range<usize>) -> View {
    let mut view = View::with_capacity(range.len());
    let mut i = range.start;
    while i < range.end {
        if text[i] != b'\\' || i + 1 >= range.end {
            view.push(text[i], i..i + 1);
            i += 1;
            continue;
        }
        let simple = match text[i + 1] {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            _ => None,
        };
        if let Some(b) = simple {
            view.push(b, i..i + 2);
            i += 2;
            continue;
        }
        let unit = |at: usize| {
            let hex = text.get(at + 2..at + 6)?;
            (text[at..].starts_with(b"\\u") && at + 6 <= range.end)
                .then(|| u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok())
                .flatten()
        };
        let (c, len) = match unit(i) {
            Some(hi @ 0xD800..=0xDBFF) => match unit(i + 6) {
                Some(lo @ 0xDC00..=0xDFFF) => (
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)),
                    12,
                ),
                _ => (None, 6),
            },
            Some(u) => (char::from_u32(u), 6),
            None => (None, 2),
        };
        match c.filter(|c| !c.is_ascii_control()) {
            Some(c) => {
                let mut buf = [0; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    view.push(b, i..i + len);
                }
            }
            None => view.copy(text, i..i + len.min(range.end - i)),
        }
        i += len;
    }
    view
}
