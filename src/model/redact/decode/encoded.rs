//! Views that decode: base64 runs (a wrapped dump continued across its line breaks) that decode
//! to text or to a private key, hex digit pairs and `\\x41` escapes, and URL-encoded runs.

use std::ops::Range;
use std::sync::OnceLock;

use super::scan::Candidates;
use super::shapes::is_private_key;
use super::{escaped, is_base64, is_token, line_break, View, MIN_RUN};

/// The runs of base64 characters of at least [`MIN_RUN`], continued across line breaks (and
/// the indentation after them) where a line of a multiple of 4 characters ends, as a wrapped
/// base64 or hex dump does; `each` is called with each run as its characters and their
/// positions, in order (one buffer reused from run to run: a large text holds many runs, and
/// few of them decode to anything). A `\/` escape reads as `/`. Only `segments` of the text are
/// walked ([`Candidates::base64`]): no run starts elsewhere, and none reads across their ends.
pub(super) fn base64_runs(
    text: &[u8],
    segments: &[Range<usize>],
    mut each: impl FnMut(&[(u8, Range<usize>)]),
) {
    let chunk_end = |mut i: usize| {
        while i < text.len() {
            if is_base64(text[i]) {
                i += 1;
            } else if text[i] == b'\\' && text.get(i + 1) == Some(&b'/') {
                i += 2;
            } else {
                break;
            }
        }
        i
    };
    let mut run: Vec<(u8, Range<usize>)> = Vec::new();
    for segment in segments {
        walk_segment(text, segment, &chunk_end, &mut run, &mut each);
    }
}

/// The walk of [`base64_runs`] over one segment, which starts at the text's start or after a
/// byte the walk steps over on its own (so nothing before it changes what the walk does).
fn walk_segment(
    text: &[u8],
    segment: &Range<usize>,
    chunk_end: &impl Fn(usize) -> usize,
    run: &mut Vec<(u8, Range<usize>)>,
    each: &mut impl FnMut(&[(u8, Range<usize>)]),
) {
    let mut i = segment.start;
    // Whether `i` follows an escape: a run may start there whatever byte precedes it.
    let mut after_escape = false;
    while i < segment.end {
        if !is_base64(text[i]) {
            i += 1;
            after_escape = false;
            continue;
        }
        // An escape's letter (`n` of `\n`, `t` of `\t`, `u0041` of `\u0041`; after one
        // backslash or more, in a JSON string nested in another) is no part of a run: the run
        // starts after it (`cat .env | base64` output follows a `\n`), at its own alignment.
        if i > 0 && text[i - 1] == b'\\' {
            let unicode = text[i] == b'u'
                && text
                    .get(i + 1..i + 5)
                    .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
            i += if unicode { 5 } else { 1 };
            after_escape = true;
            continue;
        }
        let starts = after_escape || i == 0 || !is_base64(text[i - 1]);
        after_escape = false;
        let first = chunk_end(i);
        // A run shorter than `MIN_RUN` on its first line does not wrap either: most runs
        // (words) end here, before anything is copied.
        if !starts || first - i < MIN_RUN {
            i = first.max(i + 1);
            continue;
        }
        run.clear();
        loop {
            let line_start = run.len();
            while i < text.len() {
                if is_base64(text[i]) {
                    run.push((text[i], i..i + 1));
                    i += 1;
                } else if text[i] == b'\\' && text.get(i + 1) == Some(&b'/') {
                    run.push((b'/', i..i + 2));
                    i += 2;
                } else {
                    break;
                }
            }
            let line = run.len() - line_start;
            let br = if i < text.len() {
                line_break(text, i)
            } else {
                0
            };
            if br == 0 || line < MIN_RUN || !line.is_multiple_of(4) {
                break;
            }
            let mut next = i + br;
            while matches!(text.get(next), Some(b' ' | b'\t')) {
                next += 1;
            }
            if !text.get(next).is_some_and(|&b| is_base64(b)) {
                break;
            }
            i = next;
        }
        while i < text.len() && text[i] == b'=' {
            i += 1;
        }
        if !text.get(i).is_some_and(u8::is_ascii_alphanumeric) {
            each(run);
        }
        while i < text.len() && is_token(text[i]) {
            i += 1;
        }
    }
}

/// Whether `bytes` read as text: UTF-8 without control characters but white space.
fn is_text(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|s| {
        s.chars()
            .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
    })
}

/// The base64 runs of `text` that decode to text (or to a private key), and those of hex
/// digits that do, decoded.
pub(super) fn base64_views(text: &[u8], found: &Candidates) -> Vec<View> {
    static ENCODINGS: OnceLock<[data_encoding::Encoding; 2]> = OnceLock::new();
    let [standard, url_safe] = ENCODINGS.get_or_init(|| {
        [data_encoding::BASE64_NOPAD, data_encoding::BASE64URL_NOPAD].map(|e| {
            let mut spec = e.specification();
            spec.check_trailing_bits = false;
            spec.encoding().expect("a base64 specification")
        })
    });
    let mut out = Vec::new();
    let mut chars = Vec::new();
    base64_runs(text, &found.base64, |run| {
        chars.clear();
        chars.extend(run.iter().map(|(c, _)| *c));
        if chars.len().is_multiple_of(2) && chars.iter().all(u8::is_ascii_hexdigit) {
            let pairs: Vec<(u8, u8, Range<usize>)> = run
                .chunks_exact(2)
                .filter_map(|p| {
                    Some((
                        hex_value(p[0].0)?,
                        hex_value(p[1].0)?,
                        p[0].1.start..p[1].1.end,
                    ))
                })
                .collect();
            out.extend(hex_view(&pairs));
        }
        let is_url_safe = chars.iter().any(|c| matches!(c, b'-' | b'_'));
        if is_url_safe && chars.iter().any(|c| matches!(c, b'+' | b'/')) {
            return;
        }
        let usable = chars.len() / 4 * 4 + [0, 0, 2, 3][chars.len() % 4];
        let encoding = if is_url_safe { url_safe } else { standard };
        let Ok(decoded) = encoding.decode(&chars[..usable]) else {
            return;
        };
        if decoded.len() < 8
            || !(is_text(&decoded)
                || is_private_key(&decoded) && !after_pem_header(text, run[0].1.start))
        {
            return;
        }
        let mut view = View::with_capacity(decoded.len());
        for (k, b) in decoded.into_iter().enumerate() {
            let group = &run[k / 3 * 4..(k / 3 * 4 + 4).min(run.len())];
            view.push(b, group[0].1.start..group[group.len() - 1].1.end);
        }
        out.push(view);
    });
    out
}

/// Whether the line before `at` is a PEM header (`-----BEGIN ...-----`): the block is the PEM
/// rules' to replace whole, header to footer.
fn after_pem_header(text: &[u8], at: usize) -> bool {
    let mut end = at;
    while end > 0 && matches!(text[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    for br in [&b"\n"[..], b"\\n", b"\r\n", b"\\r\\n"] {
        if text[..end].ends_with(br) {
            return text[..end - br.len()].ends_with(b"-----");
        }
    }
    false
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The view of hex digit pairs (each with where it comes from), when they decode to text.
fn hex_view(pairs: &[(u8, u8, Range<usize>)]) -> Option<View> {
    let bytes: Vec<u8> = pairs.iter().map(|(h, l, _)| h << 4 | l).collect();
    if bytes.len() < MIN_RUN / 2 || !is_text(&bytes) {
        return None;
    }
    let mut view = View::with_capacity(bytes.len());
    for (b, (_, _, r)) in bytes.into_iter().zip(pairs) {
        view.push(b, r.clone());
    }
    Some(view)
}

/// The runs of `\x41` escapes of `text` (raw, or inside a JSON string as `\\x41`) that decode
/// to text, decoded. (Plain hex runs are read with the base64 runs.) `found` has where each
/// `\x` is.
pub(super) fn hex_views(text: &[u8], found: &Candidates) -> Vec<View> {
    let mut out = Vec::new();
    // `\x41\x42...`, raw or inside a JSON string (`\\x41`).
    let mut i = 0;
    for &at in &found.hex_escape {
        if at < i {
            continue;
        }
        let mut pairs = Vec::new();
        let mut j = at;
        loop {
            let skip = if text[j..].starts_with(b"\\\\x") {
                3
            } else if text[j..].starts_with(b"\\x") {
                2
            } else {
                break;
            };
            match (
                text.get(j + skip).copied().and_then(hex_value),
                text.get(j + skip + 1).copied().and_then(hex_value),
            ) {
                (Some(h), Some(l)) => {
                    pairs.push((h, l, j..j + skip + 2));
                    j += skip + 2;
                }
                _ => break,
            }
        }
        // A JSON escape `\\x` starts one byte before the `\x` found.
        if let Some(first) = pairs.first_mut() {
            if first.2.start > 0
                && text[first.2.start - 1] == b'\\'
                && text[first.2.start..].starts_with(b"\\x")
            {
                first.2.start -= 1;
            }
        }
        out.extend(hex_view(&pairs));
        i = j.max(at + 2);
    }
    out
}

/// Whether `b` may be part of a URL (or a form body) around a `%XX` escape.
fn is_url(b: u8) -> bool {
    b.is_ascii_graphic()
        && !matches!(
            b,
            b'"' | b'\'' | b'<' | b'>' | b'\\' | b'`' | b'{' | b'}' | b'|'
        )
}

/// The URL-encoded runs of `text` (holding `%XX` escapes), decoded. `found` has where each `%`
/// is.
pub(super) fn percent_views(text: &[u8], found: &Candidates) -> Vec<View> {
    let mut out = Vec::new();
    let mut end = 0;
    for &at in &found.percent {
        if at < end
            || !(text.get(at + 1).is_some_and(u8::is_ascii_hexdigit)
                && text.get(at + 2).is_some_and(u8::is_ascii_hexdigit))
        {
            continue;
        }
        let mut start = at;
        while start > 0 && is_url(text[start - 1]) && !escaped(text, start - 1) {
            start -= 1;
        }
        end = at;
        while end < text.len() && is_url(text[end]) {
            end += 1;
        }
        let mut view = View::with_capacity(end - start);
        let mut i = start;
        while i < end {
            match (
                text[i],
                text.get(i + 1).copied().and_then(hex_value),
                text.get(i + 2).copied().and_then(hex_value),
            ) {
                (b'%', Some(h), Some(l)) if i + 2 < end => {
                    view.push(h << 4 | l, i..i + 3);
                    i += 3;
                }
                _ => {
                    view.push(text[i], i..i + 1);
                    i += 1;
                }
            }
        }
        out.push(view);
    }
    out
}
