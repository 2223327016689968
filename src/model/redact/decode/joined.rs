//! Views that put a token back together: invisible characters taken out, a token broken across
//! lines, string concatenations (`"sk_live_" + "..."`) and adjacent strings of one JSON line
//! joined, each with a little context before it for the rules that read a name first.

use std::collections::HashMap;
use std::ops::Range;

use super::super::PLACEHOLDER;
use super::strings::string_literals;
use super::{escaped, is_token, line_break, View, CONTEXT, MIN_JOINED};

/// The length of the invisible character at `at` (zero-width spaces and joiners, bidi marks,
/// the soft hyphen, word joiners, the byte-order mark, tag characters), raw or as a `\uXXXX`
/// escape; 0 when there is none.
fn invisible(text: &[u8], at: usize) -> usize {
    let is_invisible = |c: u32| {
        matches!(c, 0xAD | 0x34F | 0x61C | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E
            | 0x2060..=0x2064 | 0x2066..=0x2069 | 0xFEFF | 0xE0000..=0xE007F)
    };
    let rest = &text[at..];
    if rest.starts_with(b"\\u") && rest.len() >= 6 {
        let hex = std::str::from_utf8(&rest[2..6]).ok();
        if hex
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .is_some_and(is_invisible)
        {
            return 6;
        }
        return 0;
    }
    if rest.first().is_some_and(|b| *b >= 0xC2) {
        let len = match rest[0] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        if let Some(c) = rest.get(..len).and_then(|b| std::str::from_utf8(b).ok()) {
            if c.chars().next().is_some_and(|c| is_invisible(c as u32)) {
                return len;
            }
        }
    }
    0
}

/// Where a view of a token that starts at `start` begins: up to [`CONTEXT`] bytes before it,
/// at a place that is not inside a word.
fn context_start(text: &[u8], start: usize) -> usize {
    let mut s = start.saturating_sub(CONTEXT);
    while s < start && s > 0 && text[s - 1].is_ascii_alphanumeric() {
        s += 1;
    }
    s
}

/// The end of the token run at or after `at`, and a few bytes more for the rules' boundaries.
fn run_end(text: &[u8], at: usize) -> usize {
    let mut e = at;
    while e < text.len() && is_token(text[e]) {
        e += 1;
    }
    e
}

/// The start of the token run that ends at `end` (not counting the letter of an escape).
fn run_start(text: &[u8], end: usize) -> usize {
    let mut s = end;
    while s > 0 && is_token(text[s - 1]) {
        s -= 1;
    }
    if s < end && escaped(text, s) {
        s += 1;
    }
    s
}

/// A view of `text` from `start` to `end` without the `gaps` (sorted, inside it): the bytes
/// of each gap that is `noise` go with the byte after it (they are taken out of a token);
/// the others are seams between two pieces of a token.
pub(super) fn joined(text: &[u8], start: usize, end: usize, gaps: &[(Range<usize>, bool)]) -> View {
    let mut view = View::with_capacity(end - start);
    let mut at = start;
    let mut noise_from = None;
    let copy = |view: &mut View, range: Range<usize>, noise_from: &mut Option<usize>| {
        // The noise before a piece goes with its first byte; the rest are copied as they are.
        let rest = match noise_from.take() {
            Some(from) if !range.is_empty() => {
                view.push(text[range.start], from..range.start + 1);
                range.start + 1..range.end
            }
            noise => {
                *noise_from = noise;
                range
            }
        };
        view.copy(text, rest);
    };
    for (gap, noise) in gaps {
        copy(&mut view, at..gap.start, &mut noise_from);
        if *noise {
            noise_from = Some(noise_from.unwrap_or(gap.start));
        }
        at = gap.end;
    }
    copy(&mut view, at..end, &mut noise_from);
    view
}

/// Tokens with invisible characters inside, seen without them.
pub(super) fn invisible_views(text: &[u8]) -> Vec<View> {
    let mut out = Vec::new();
    let candidates = [
        &b"\xE2\x80"[..],
        b"\xE2\x81",
        b"\xEF\xBB\xBF",
        b"\xC2\xAD",
        b"\xCD\x8F",
        b"\xD8\x9C",
        b"\xE1\xA0\x8E",
        b"\xF3\xA0",
        b"\\u",
    ];
    let mut positions: Vec<usize> = candidates
        .iter()
        .flat_map(|c| memchr::memmem::find_iter(text, c).collect::<Vec<_>>())
        .filter(|&p| invisible(text, p) > 0)
        .collect();
    positions.sort_unstable();
    let mut i = 0;
    while i < positions.len() {
        let first = positions[i];
        // The invisible characters of one token: between token bytes, maybe several.
        let mut gaps = Vec::new();
        let mut at = first;
        loop {
            let len = invisible(text, at);
            if len == 0 {
                break;
            }
            gaps.push((at..at + len, true));
            at += len;
            at = run_end(text, at);
            while i < positions.len() && positions[i] < at {
                i += 1;
            }
        }
        let start = run_start(text, first);
        if start < first && at > gaps.last().map_or(0, |g| g.0.end) {
            out.push(joined(text, context_start(text, start), at, &gaps));
        }
        while i < positions.len() && positions[i] < at {
            i += 1;
        }
        if i < positions.len() && positions[i] == first {
            i += 1;
        }
    }
    out
}

/// Tokens broken across lines (a terminal's or `fold`'s wrapping), seen joined: a line that
/// ends inside a run of token characters and the next that starts with one, for as many lines
/// as continue so.
pub(super) fn line_views(text: &[u8]) -> Vec<View> {
    let raw = memchr::memchr_iter(b'\n', text).map(|nl| match nl {
        1.. if text[nl - 1] == b'\r' => nl - 1,
        _ => nl,
    });
    let escapes = memchr::memmem::find_iter(text, b"\\n")
        .filter(|&at| !escaped(text, at))
        .map(|at| match at {
            2.. if &text[at - 2..at] == b"\\r" && !escaped(text, at - 2) => at - 2,
            _ => at,
        });
    let mut seams: Vec<usize> = raw.chain(escapes).collect();
    // Two sorted runs: the stable sort merges them, where the unstable one sorted them again.
    seams.sort();
    seam_views(text, seams, line_break)
}

/// The views of the tokens joined at `seams`: `len(text, at)` is the length of the seam that
/// starts at `at` (0: none); a token continues across a seam with token bytes on both sides,
/// and across the next seams its pieces end at.
fn seam_views(text: &[u8], seams: Vec<usize>, len: impl Fn(&[u8], usize) -> usize) -> Vec<View> {
    let mut out = Vec::new();
    let mut last_end = 0;
    for &at in &seams {
        // A piece that is the placeholder was a secret whole (redacting is idempotent).
        if at < last_end
            || at == 0
            || !is_token(text[at - 1])
            || text[..at].ends_with(PLACEHOLDER.as_bytes())
        {
            continue;
        }
        let start = run_start(text, at);
        let mut gaps = Vec::new();
        let mut seam = at;
        let mut end = at;
        loop {
            let l = len(text, seam);
            if l == 0 || !text.get(seam + l).is_some_and(|&b| is_token(b)) {
                break;
            }
            gaps.push((seam..seam + l, false));
            end = run_end(text, seam + l);
            seam = end;
            if seam >= text.len() {
                break;
            }
        }
        if gaps.is_empty() {
            continue;
        }
        let pieces: usize = (end - start) - gaps.iter().map(|(g, _)| g.len()).sum::<usize>();
        if start == at || pieces < MIN_JOINED {
            continue;
        }
        last_end = end;
        out.push(joined(text, context_start(text, start), end, &gaps));
    }
    out
}

/// The length of a string concatenation at `at` (a closing quote, `+`, `.` or `,` maybe, white
/// space or a line break, an opening quote of the same kind; in code as written or inside a
/// JSON string, where its quotes are `\"`); 0 when there is none.
fn concatenation(text: &[u8], at: usize) -> usize {
    let quote: &[u8] = match &text[at..] {
        [b'\\', b'"', ..] => b"\\\"",
        [q @ (b'"' | b'\'' | b'`'), ..] => std::slice::from_ref(q),
        _ => return 0,
    };
    let mut i = at + quote.len();
    let (mut operator, mut space) = (None, false);
    loop {
        match text.get(i) {
            Some(b' ' | b'\t') => {
                space = true;
                i += 1;
            }
            Some(&op @ (b'+' | b'.' | b',')) if operator.is_none() => {
                operator = Some(op);
                i += 1;
            }
            // Only these bytes start a line break: most quotes are followed by none of them.
            Some(b'\n' | b'\r' | b'\\') if line_break(text, i) > 0 => {
                space = true;
                i += line_break(text, i);
            }
            _ => break,
        }
    }
    // `"a","b"` without white space is JSON, which the JSON-aware views read; a string
    // followed by `:` is a member name, not the next piece of a list.
    let joins = match operator {
        Some(b',') => space && !member_name(text, i + quote.len(), quote),
        None => space,
        Some(_) => true,
    };
    if joins && text[i..].starts_with(quote) {
        i + quote.len() - at
    } else {
        0
    }
}

/// Whether the string whose content starts at `at`, quoted with `quote`, is followed by `:`.
fn member_name(text: &[u8], at: usize, quote: &[u8]) -> bool {
    let Some(close) = text.get(at..).and_then(|t| memchr::memmem::find(t, quote)) else {
        return false;
    };
    let rest = &text[at + close + quote.len()..];
    rest.iter().find(|b| !matches!(b, b' ' | b'\t')) == Some(&b':')
}

/// Tokens split by string concatenations (`"sk_live_" + "..."`, `'ab' 'cd'`), seen joined.
pub(super) fn concatenation_views(text: &[u8]) -> Vec<View> {
    let seams: Vec<usize> = memchr::memchr3_iter(b'"', b'\'', b'`', text)
        .map(|q| {
            if q > 0 && text[q - 1] == b'\\' {
                q - 1
            } else {
                q
            }
        })
        .filter(|&at| concatenation(text, at) > 0)
        .collect();
    seam_views(text, seams, concatenation)
}

/// Tokens split across two string values, seen joined: a value and the next value of one JSON
/// line, or the next value of the same member name on that line or a later one (the `text` of
/// consecutive content blocks, of consecutive entries of a JSONL transcript, of consecutive
/// parts of a pretty-printed document, each on its own line).
pub(super) fn adjacent_string_views(text: &[u8]) -> Vec<View> {
    let mut out = Vec::new();
    let mut line_start = 0;
    // The last value of each member name so far, over lines: the next entry of a JSONL
    // transcript, or the next part of a pretty-printed document, continues the text of the
    // same member (`"text"`, `"content"`, `"output"`) of the one before.
    // Hashed with foldhash: a member name per string value of the text (only looked up, never
    // iterated, so the hasher changes no output).
    let mut last_of_name: HashMap<&[u8], Range<usize>, foldhash::fast::RandomState> =
        HashMap::default();
    for line_end in memchr::memchr_iter(b'\n', text).chain([text.len()]) {
        let line = line_start..line_end;
        line_start = line_end + 1;
        let indent = text[line.clone()]
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        if !matches!(text.get(line.start + indent), Some(b'{' | b'[' | b'"')) {
            continue;
        }
        let values = json_values(text, line);
        let mut previous: Option<&Range<usize>> = None;
        for (name, value) in &values {
            let last = last_of_name
                .insert(&text[name.clone()], value.clone())
                .filter(|v| previous != Some(v));
            for a in previous.into_iter().chain(last.as_ref()) {
                if let Some(view) = string_pair_view(text, a, value) {
                    out.push(view);
                }
            }
            previous = Some(value);
        }
    }
    out
}

/// The view of the end of string literal `a` joined to the start of string literal `b`, when
/// `a` ends and `b` starts with token bytes that make [`MIN_JOINED`] together.
fn string_pair_view(text: &[u8], a: &Range<usize>, b: &Range<usize>) -> Option<View> {
    let a_end = a.end - 1;
    let b_start = b.start + 1;
    let tail = run_start(text, a_end).max(a.start + 1);
    let head = run_end(text, b_start).min(b.end - 1);
    if tail == a_end
        || head == b_start
        || (a_end - tail) + (head - b_start) < MIN_JOINED
        || text[..a_end].ends_with(PLACEHOLDER.as_bytes())
    {
        return None;
    }
    let from = context_start(text, tail).max(a.start + 1);
    let mut view = View::with_capacity((a_end - from) + (head - b_start));
    view.copy(text, from..a_end);
    view.copy(text, b_start..head);
    Some(view)
}

/// The string values of the JSON value on `line` (not its member names), each with the member
/// name it belongs to (for an array's elements, the array's), in order.
fn json_values(text: &[u8], line: Range<usize>) -> Vec<(Range<usize>, Range<usize>)> {
    let literals: Vec<Range<usize>> = string_literals(&text[line.clone()])
        .into_iter()
        .map(|r| r.start + line.start..r.end + line.start)
        .collect();
    // The member name each container was opened under, innermost last.
    let mut names: Vec<Range<usize>> = vec![Range::default()];
    let mut current = 0..0;
    let mut out = Vec::new();
    let mut at = line.start;
    for lit in literals {
        for &b in &text[at..lit.start] {
            match b {
                b'{' | b'[' => names.push(current.clone()),
                b'}' | b']' => {
                    names.pop();
                }
                _ => {}
            }
        }
        let next = text[lit.end..line.end]
            .iter()
            .find(|b| !b.is_ascii_whitespace());
        if next == Some(&b':') {
            current = lit.clone();
        } else {
            let name = if text[at..lit.start].contains(&b':') {
                current.clone()
            } else {
                names.last().cloned().unwrap_or(0..0)
            };
            out.push((name, lit.clone()));
        }
        at = lit.end;
    }
    out
}
