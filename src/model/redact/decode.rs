//! Secrets the rules see only once a text is decoded or put back together: stages 1 and 4 of
//! [`super::Redactor`], a stage of its own beside the rules' pass.
//!
//! A *view* is a text made from a range of another, each of its bytes knowing the bytes of the
//! other it came from: a base64, hex or URL-encoded run decoded, a JSON string nested two or
//! more strings deep decoded one level, a token with invisible characters taken out, a token
//! split across lines, string concatenations (`"sk_live_" + "..."`) or adjacent strings of one
//! JSON line put back together. The built-in rules run over each view (over a joined one only
//! the rules for prefixed provider tokens, [`Made::Joined`]); a secret they find there that the
//! text itself does not show (it covers a decoded byte, or crosses a place where the view took
//! out or joined) is replaced in the text where it came from: the encoded bytes, or each piece
//! of a split token on its own (so a JSON line stays valid). Decoded views are decoded again, to
//! [`MAX_DEPTH`] levels (as gitleaks' `--max-decode-depth`), within a byte budget. Two shapes
//! without a rule of their own are also recognised: a PEM private key body without its header
//! (base64 whose bytes are a DER private key or an OpenSSH key), and a bare AWS secret access
//! key (a token of exactly 40 random characters).
//!
//! Every view starts from a candidate that is rare in ordinary text and found by a regular
//! language (a base64 or hex run of at least [`MIN_RUN`] characters, `%XX`, `\\\"`, an
//! invisible character between token characters, a quote-joining operator or a line break
//! between token characters, a JSON string ending and the next starting with token
//! characters), so the candidates can join the single pass of a multi-pattern automaton that
//! finds the rules' matches. Ordinary text comes out byte-identical: only a secret a rule finds
//! in a view changes anything.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

use super::matching::{builtin_spans, replace_ranges};
use super::rules::Builtin;
use super::PLACEHOLDER;

/// How many times a decoded text is decoded again.
pub(super) const MAX_DEPTH: usize = 4;

/// The shortest base64 or hex run decoded.
const MIN_RUN: usize = 16;

/// How much context before a joined token a view keeps, for the rules that read a name before
/// a value (`api_key = ...`).
const CONTEXT: usize = 48;

/// The shortest token two joined pieces must make together.
const MIN_JOINED: usize = 12;

/// A text made from (a range of) another.
struct View {
    text: Vec<u8>,
    /// For each byte of `text`, the range of the source it comes from.
    src: Vec<Range<usize>>,
}

impl View {
    /// An empty view with room for `len` bytes (views are built a byte at a time).
    fn with_capacity(len: usize) -> View {
        View {
            text: Vec::with_capacity(len),
            src: Vec::with_capacity(len),
        }
    }

    fn push(&mut self, byte: u8, src: Range<usize>) {
        self.text.push(byte);
        self.src.push(src);
    }

    /// Copies `source[range]` byte for byte.
    fn copy(&mut self, source: &[u8], range: Range<usize>) {
        for i in range {
            self.push(source[i], i..i + 1);
        }
    }

    /// Whether the source shows `span` of the view as it is: its bytes are one contiguous run
    /// of the source, each copied. A secret the rules find there was already found in the
    /// source.
    fn shows(&self, span: &Range<usize>) -> bool {
        let src = &self.src[span.clone()];
        src.iter().all(|r| r.len() == 1) && src.windows(2).all(|w| w[1].start == w[0].end)
    }

    /// The ranges of the source `span` of the view comes from: contiguous pieces merged, a
    /// place where the view joined two pieces left between them.
    fn source_ranges(&self, span: Range<usize>, out: &mut Vec<Range<usize>>) {
        let mut current: Option<Range<usize>> = None;
        for r in &self.src[span] {
            current = match current {
                Some(c) if r.start <= c.end => Some(c.start..c.end.max(r.end)),
                Some(c) => {
                    out.push(c);
                    Some(r.clone())
                }
                None => Some(r.clone()),
            };
        }
        out.extend(current);
    }
}

/// Which views of a text to read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Views {
    /// The decoded ones (and, inside them, the [`Views::Nested`] ones), and the bare AWS
    /// secret keys: before the rules run over the text, which could otherwise replace part of
    /// an encoded run and hide the rest.
    Decoded,
    /// The ones that take invisible characters out of a token or join pieces of one: after
    /// the rules ran over the text, so a piece that was a secret whole is already the
    /// placeholder and is joined to nothing.
    Joined,
    /// The views of a decoded view: decoded again and cleaned of invisible characters, not
    /// joined (the rules have not run over it, so a whole token would be joined to the next
    /// line's first word).
    Nested,
}

/// `text` with the secrets only its `kind` of views show replaced, and how many; `None` when
/// there are none.
pub(super) fn redact_hidden(text: &[u8], kind: Views) -> Option<(Vec<u8>, usize)> {
    #[cfg(test)]
    if WITHOUT_VIEWS.get() {
        return None;
    }
    let mut budget = 4 * text.len() + (64 << 10);
    let mut secrets = Vec::new();
    if kind == Views::Decoded {
        secrets = bare_aws_secrets(text);
    }
    let count = secrets.len() + hidden(text, kind, MAX_DEPTH, &mut budget, &mut secrets);
    replace_ranges(text, &merge(secrets)).map(|t| (t, count))
}

/// Sorted, overlapping and touching ranges merged (one placeholder for one run of secrets).
fn merge(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// What a view did to the text it comes from, which decides what it may show.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Made {
    /// Decoded (base64, hex, `%XX`, a nested JSON string): it reads differently all through,
    /// every rule runs over it, and it may be decoded again.
    Decoded,
    /// Invisible characters taken out of a token: every rule runs over it.
    Cleaned,
    /// Pieces of a token put together (across lines, string concatenations, adjacent JSON
    /// strings): only the rules for tokens recognisable by their prefix
    /// ([`Builtin::prefixed`]) run over it, since pieces put together make a name and a value
    /// of ordinary text (`password = password` on one line, `2398` on the next).
    Joined,
}

/// The secrets the built-in rules find in each of `views`, in the view's own coordinates: one
/// pass of the rules over the views of each [`Made`] that runs every rule and one of the
/// prefixed rules over the others, a blank line between two views (no rule reads across one
/// into the next; a match that would is cut at its view's end).
fn rule_spans(views: &[(View, Made)]) -> Vec<Vec<Range<usize>>> {
    let mut out = vec![Vec::new(); views.len()];
    for joined in [false, true] {
        let mut text = Vec::new();
        let mut starts = Vec::new();
        for (k, (v, made)) in views.iter().enumerate() {
            if (*made == Made::Joined) == joined {
                starts.push((text.len(), k));
                text.extend_from_slice(&v.text);
                text.extend_from_slice(b"\n\n");
            }
        }
        if starts.is_empty() {
            continue;
        }
        for s in builtin_spans(&text, |rule: &Builtin| !joined || rule.prefixed) {
            let (start, k) = starts[starts.partition_point(|&(st, _)| st <= s.start) - 1];
            let len = views[k].0.text.len();
            let from = s.start - start;
            if from < len {
                out[k].push(from..(s.end - start).min(len));
            }
        }
    }
    out
}

/// Adds to `out` the ranges of `text` that hold secrets only its views show; returns how many
/// secrets. `depth` is how many more decodings a view may go through.
fn hidden(
    text: &[u8],
    kind: Views,
    depth: usize,
    budget: &mut usize,
    out: &mut Vec<Range<usize>>,
) -> usize {
    let views = views(text, kind, budget);
    if views.is_empty() {
        return 0;
    }
    let mut count = 0;
    for ((view, made), spans) in views.iter().zip(rule_spans(&views)) {
        let mut found = spans;
        if *made != Made::Joined {
            found.extend(bare_aws_secrets(&view.text));
        }
        // A secret in a view that takes out or joins counts only where it crosses a seam (or
        // an invisible character): elsewhere the text shows it as the view does. A decoded
        // view reads differently all through (`%22sk_live_` is no token start, `"sk_live_` is).
        if *made != Made::Decoded {
            found.retain(|s| !view.shows(s));
        } else if is_private_key(&view.text) {
            found.push(0..view.text.len());
        } else if depth > 1 {
            hidden(&view.text, Views::Nested, depth - 1, budget, &mut found);
        }
        for s in merge(found) {
            count += 1;
            view.source_ranges(s, out);
        }
    }
    count
}

/// The views of `text` of `kind` worth running the rules over, each with what it did, within
/// `budget` bytes of views.
fn views(text: &[u8], kind: Views, budget: &mut usize) -> Vec<(View, Made)> {
    let mut all: Vec<(View, Made)> = Vec::new();
    if kind != Views::Joined {
        let decoded = [
            base64_views(text),
            hex_views(text),
            percent_views(text),
            nested_json_views(text),
        ];
        all.extend(decoded.into_iter().flatten().map(|v| (v, Made::Decoded)));
    }
    if kind != Views::Decoded {
        all.extend(
            invisible_views(text)
                .into_iter()
                .map(|v| (v, Made::Cleaned)),
        );
    }
    if kind == Views::Joined {
        let joined = [
            line_views(text),
            concatenation_views(text),
            adjacent_string_views(text),
        ];
        all.extend(joined.into_iter().flatten().map(|v| (v, Made::Joined)));
    }
    let mut out = Vec::new();
    for (view, made) in all {
        if view.text.len() > *budget {
            break;
        }
        *budget -= view.text.len();
        out.push((view, made));
    }
    out
}

/// A byte of a token: what secrets are made of.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/' | b'=')
}

fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

/// The length of the line break at `at`: a newline, raw or as a JSON escape, maybe after a
/// carriage return; 0 when there is none.
fn line_break(text: &[u8], at: usize) -> usize {
    match &text[at..] {
        [b'\n', ..] => 1,
        [b'\r', b'\n', ..] => 2,
        [b'\\', b'n', ..] => 2,
        [b'\\', b'r', b'\\', b'n', ..] => 4,
        _ => 0,
    }
}

/// Whether the byte at `at` is the letter of a backslash escape (`n` of `\n`).
fn escaped(text: &[u8], at: usize) -> bool {
    let backslashes = text[..at].iter().rev().take_while(|&&b| b == b'\\').count();
    backslashes % 2 == 1
}

/// The runs of base64 characters of at least [`MIN_RUN`], continued across line breaks (and
/// the indentation after them) where a line of a multiple of 4 characters ends, as a wrapped
/// base64 or hex dump does; `each` is called with each run as its characters and their
/// positions, in order (one buffer reused from run to run: a large text holds many runs, and
/// few of them decode to anything). A `\/` escape reads as `/`.
fn base64_runs(text: &[u8], mut each: impl FnMut(&[(u8, Range<usize>)])) {
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
    let mut i = 0;
    while i < text.len() {
        if !is_base64(text[i]) {
            i += 1;
            continue;
        }
        let starts = i == 0 || !is_base64(text[i - 1]) || escaped(text, i - 1);
        let first = chunk_end(i);
        // A run shorter than `MIN_RUN` on its first line does not wrap either: most runs
        // (words) end here, before anything is copied.
        if !starts || escaped(text, i) || first - i < MIN_RUN {
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
            each(&run);
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
fn base64_views(text: &[u8]) -> Vec<View> {
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
    base64_runs(text, |run| {
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
/// to text, decoded. (Plain hex runs are read with the base64 runs.)
fn hex_views(text: &[u8]) -> Vec<View> {
    let mut out = Vec::new();
    // `\x41\x42...`, raw or inside a JSON string (`\\x41`).
    let mut i = 0;
    while let Some(at) = memchr::memmem::find(&text[i..], b"\\x").map(|p| i + p) {
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

/// The URL-encoded runs of `text` (holding `%XX` escapes), decoded.
fn percent_views(text: &[u8]) -> Vec<View> {
    let mut out = Vec::new();
    let mut end = 0;
    for at in memchr::memchr_iter(b'%', text) {
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

/// The JSON string literals of `text` that hold a string nested two strings deep (`\\\"`),
/// each decoded once, so the rules for strings one level deep see it.
fn nested_json_views(text: &[u8]) -> Vec<View> {
    let mut out = Vec::new();
    if memchr::memmem::find(text, b"\\\\\\\"").is_none() {
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
fn string_literals(text: &[u8]) -> Vec<Range<usize>> {
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
fn joined(text: &[u8], start: usize, end: usize, gaps: &[(Range<usize>, bool)]) -> View {
    let mut view = View::with_capacity(end - start);
    let mut at = start;
    let mut noise_from = None;
    let copy = |view: &mut View, range: Range<usize>, noise_from: &mut Option<usize>| {
        for (i, &b) in text[range.clone()].iter().enumerate() {
            let i = range.start + i;
            view.push(b, noise_from.take().unwrap_or(i)..i + 1);
        }
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
fn invisible_views(text: &[u8]) -> Vec<View> {
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
fn line_views(text: &[u8]) -> Vec<View> {
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
    seams.sort_unstable();
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
            Some(_) if line_break(text, i) > 0 => {
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
fn concatenation_views(text: &[u8]) -> Vec<View> {
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

/// Tokens split across two string values of one JSON line, seen joined: a value and the next
/// value, or the next value of the same member name (the `text` of consecutive content
/// blocks).
fn adjacent_string_views(text: &[u8]) -> Vec<View> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line_end in memchr::memchr_iter(b'\n', text).chain([text.len()]) {
        let line = line_start..line_end;
        line_start = line_end + 1;
        if !text[line.clone()].starts_with(b"{") && !text[line.clone()].starts_with(b"[") {
            continue;
        }
        let values = json_values(text, line);
        // The last value of each member name so far.
        let mut last_of_name: HashMap<&[u8], &Range<usize>> = HashMap::new();
        let mut previous: Option<&Range<usize>> = None;
        for (name, value) in &values {
            let mut pairs = Vec::new();
            if let Some(p) = previous {
                pairs.push(p.clone());
            }
            if let Some(v) = last_of_name.insert(&text[name.clone()], value) {
                if previous != Some(v) {
                    pairs.push(v.clone());
                }
            }
            for a in pairs {
                if let Some(view) = string_pair_view(text, &a, value) {
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

/// Whether `bytes` are a private key: DER that opens as PKCS #1, PKCS #8 or SEC 1 keys do (a
/// sequence whose first element is the version 0 or 1, then an integer, an algorithm or an
/// octet string), or an OpenSSH private key. A certificate or a public key opens otherwise.
fn is_private_key(bytes: &[u8]) -> bool {
    if bytes.starts_with(b"openssh-key-v1\0") {
        return true;
    }
    let header = match bytes {
        [0x30, 0x80, ..] => return false,
        [0x30, 0x81, _, rest @ ..] => rest,
        [0x30, 0x82, _, _, rest @ ..] => rest,
        [0x30, 0x83, _, _, _, rest @ ..] => rest,
        [0x30, len, rest @ ..] if *len < 0x80 => rest,
        _ => return false,
    };
    bytes.len() >= 32 && matches!(header, [0x02, 0x01, 0x00 | 0x01, 0x02 | 0x30 | 0x04, ..])
}

/// Bare AWS secret access keys: tokens of exactly 40 characters of `[A-Za-z0-9/+]` with upper
/// and lower case letters and digits, few `/` and `+`, not all hex, and random (high entropy).
fn bare_aws_secrets(text: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let is_key = |b: u8| b.is_ascii_alphanumeric() || b == b'/' || b == b'+';
    let mut i = 0;
    while i < text.len() {
        if !is_key(text[i]) {
            i += 1;
            continue;
        }
        // An escape, at any depth of nesting (`\n`, `\\n`, `\u005f`), starts no key.
        let after_backslash = i > 0 && text[i - 1] == b'\\';
        let start = match text[i] {
            b'u' if after_backslash
                && text
                    .get(i + 1..i + 5)
                    .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) =>
            {
                i + 5
            }
            b'n' | b'r' | b't' | b'b' | b'f' | b'u' if after_backslash => i + 1,
            _ => i,
        };
        let mut end = start;
        while end < text.len() && is_key(text[end]) {
            end += 1;
        }
        let word = |b: &u8| b.is_ascii_alphanumeric() || b"_-+/.".contains(b);
        let t = &text[start..end.max(start)];
        if t.len() == 40
            && (start > i || start == 0 || !word(&text[start - 1]))
            && !text.get(end).is_some_and(|b| word(b) || *b == b'=')
            && looks_random_key(t)
            && memchr::memmem::find(t, PLACEHOLDER.as_bytes()).is_none()
        {
            out.push(start..end);
        }
        i = end.max(i + 1);
    }
    out
}

fn looks_random_key(t: &[u8]) -> bool {
    let has = |f: fn(&u8) -> bool| t.iter().any(f);
    let symbols = t.iter().filter(|&&b| b == b'/' || b == b'+').count();
    has(u8::is_ascii_uppercase)
        && has(u8::is_ascii_lowercase)
        && has(u8::is_ascii_digit)
        && symbols <= 3
        && !t.windows(2).any(|w| w == b"//")
        && super::secret::entropy(t) >= 4.3
}

#[cfg(test)]
thread_local! {
    /// Makes [`redact_hidden`] find nothing on this thread: redaction as it was without views,
    /// for measuring what they cost.
    pub(super) static WITHOUT_VIEWS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
