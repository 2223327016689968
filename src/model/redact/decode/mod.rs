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
//! finds the rules' matches. The candidates of the decoded views and the bare AWS keys are
//! found in one read of the text ([`scan::candidates`]). Ordinary text comes out
//! byte-identical: only a secret a rule finds in a view changes anything.

use std::ops::Range;

use super::matching::{builtin_spans, replace_ranges};
use super::rules::Builtin;

mod encoded;
mod joined;
mod scan;
mod shapes;
mod strings;
#[cfg(test)]
mod tests;

use encoded::{base64_views, hex_views, percent_views};
use joined::{adjacent_string_views, concatenation_views, invisible_views, line_views};
use scan::{candidates, Candidates};
use shapes::is_private_key;
use strings::nested_json_views;

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

    /// Copies `source[range]` byte for byte, each byte from its own place (in two bulk
    /// extends: a joined view copies most of its bytes, and a push per byte cost more than
    /// the rules' search of them).
    fn copy(&mut self, source: &[u8], range: Range<usize>) {
        self.text.extend_from_slice(&source[range.clone()]);
        self.src.extend(range.map(|i| i..i + 1));
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
    let mut found = None;
    if kind == Views::Decoded {
        let scanned = candidates(text);
        secrets.clone_from(&scanned.aws);
        found = Some(scanned);
    }
    let count = secrets.len()
        + hidden(
            text,
            kind,
            found.as_ref(),
            MAX_DEPTH,
            &mut budget,
            &mut secrets,
        );
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
/// secrets. `depth` is how many more decodings a view may go through; `found` is what
/// [`candidates`] found in `text`, which a `kind` but [`Views::Joined`] needs.
fn hidden(
    text: &[u8],
    kind: Views,
    found: Option<&Candidates>,
    depth: usize,
    budget: &mut usize,
    out: &mut Vec<Range<usize>>,
) -> usize {
    let views = views(text, kind, found, budget);
    if views.is_empty() {
        return 0;
    }
    let mut count = 0;
    for ((view, made), spans) in views.iter().zip(rule_spans(&views)) {
        let mut found = spans;
        let scanned = (*made != Made::Joined).then(|| candidates(&view.text));
        if let Some(scanned) = &scanned {
            found.extend_from_slice(&scanned.aws);
        }
        // A secret in a view that takes out or joins counts only where it crosses a seam (or
        // an invisible character): elsewhere the text shows it as the view does. A decoded
        // view reads differently all through (`%22sk_live_` is no token start, `"sk_live_` is).
        if *made != Made::Decoded {
            found.retain(|s| !view.shows(s));
        } else if is_private_key(&view.text) {
            found.push(0..view.text.len());
        } else if depth > 1 {
            hidden(
                &view.text,
                Views::Nested,
                scanned.as_ref(),
                depth - 1,
                budget,
                &mut found,
            );
        }
        for s in merge(found) {
            count += 1;
            view.source_ranges(s, out);
        }
    }
    count
}

/// The views of `text` of `kind` worth running the rules over, each with what it did, within
/// `budget` bytes of views; `found` is what [`candidates`] found in `text` (needed but for
/// [`Views::Joined`]).
fn views(
    text: &[u8],
    kind: Views,
    found: Option<&Candidates>,
    budget: &mut usize,
) -> Vec<(View, Made)> {
    let mut all: Vec<(View, Made)> = Vec::new();
    if kind != Views::Joined {
        let found = found.expect("the candidates of a text whose decoded views are read");
        let decoded = [
            base64_views(text, found),
            hex_views(text, found),
            percent_views(text, found),
            nested_json_views(text, found),
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

/// The length of the line break at `at`: a newline, raw or as a JSON escape (in a string, or
/// in one nested in another: `\\n`), maybe after a carriage return; 0 when there is none, and
/// always 0 at a byte but `\n`, `\r` and a backslash.
fn line_break(text: &[u8], at: usize) -> usize {
    match &text[at..] {
        [b'\n', ..] => 1,
        [b'\r', b'\n', ..] => 2,
        rest => {
            let slashes = rest.iter().take(4).take_while(|&&b| b == b'\\').count();
            let escape = |from: usize, letter: u8| {
                (1..=3).contains(&slashes)
                    && rest
                        .get(from..from + slashes)
                        .is_some_and(|s| s.iter().all(|&b| b == b'\\'))
                    && rest.get(from + slashes) == Some(&letter)
            };
            let unit = slashes + 1;
            match () {
                () if escape(0, b'n') => unit,
                () if escape(0, b'r') && escape(unit, b'n') => 2 * unit,
                () => 0,
            }
        }
    }
}

/// Whether the byte at `at` is the letter of a backslash escape (`n` of `\n`).
fn escaped(text: &[u8], at: usize) -> bool {
    let backslashes = text[..at].iter().rev().take_while(|&&b| b == b'\\').count();
    backslashes % 2 == 1
}

#[cfg(test)]
thread_local! {
    /// Makes [`redact_hidden`] find nothing on this thread: redaction as it was without views,
    /// for measuring what they cost.
    pub(super) static WITHOUT_VIEWS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
