//! The one read of [`candidates`] held to the scans it replaced, kept here as the oracle: a
//! walk of every byte for base64 runs, another for bare AWS keys, and one search each for `%`,
//! `\x` and `\\\"`.

use std::ops::Range;

use super::encoded::base64_runs;
use super::joined::joined;
use super::line_break;
use super::scan::candidates;
use super::shapes::aws_key;
use crate::model::redact::PLACEHOLDER;

/// The walk of base64 runs over every byte of `text`, as it was before [`candidates`]: each
/// run's characters and positions.
fn base64_runs_of_every_byte(text: &[u8]) -> Vec<Vec<(u8, Range<usize>)>> {
    let mut out = Vec::new();
    let whole = 0..text.len();
    base64_runs(text, std::slice::from_ref(&whole), |run| {
        out.push(run.to_vec())
    });
    out
}

/// The walk for bare AWS keys over every byte of `text`, as it was before [`candidates`]: each
/// maximal run of key bytes checked ([`aws_key`] is the check that walk made, unchanged).
fn aws_keys_of_every_byte(text: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let is_key = |b: u8| b.is_ascii_alphanumeric() || b == b'/' || b == b'+';
    let mut i = 0;
    while i < text.len() {
        if !is_key(text[i]) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < text.len() && is_key(text[end]) {
            end += 1;
        }
        out.extend(aws_key(text, i..end));
        i = end;
    }
    out
}

/// What every separate scan finds in `text` equals what [`candidates`] finds.
fn assert_same_candidates(text: &[u8]) {
    let found = candidates(text);
    let mut runs = Vec::new();
    base64_runs(text, &found.base64, |run| runs.push(run.to_vec()));
    assert_eq!(
        runs,
        base64_runs_of_every_byte(text),
        "base64 runs of {text:?}"
    );
    assert_eq!(
        found.aws,
        aws_keys_of_every_byte(text),
        "AWS keys of {text:?}"
    );
    let percent: Vec<usize> = memchr::memchr_iter(b'%', text).collect();
    assert_eq!(found.percent, percent);
    let hex: Vec<usize> = memchr::memmem::find_iter(text, b"\\x").collect();
    assert_eq!(found.hex_escape, hex);
    let nested = memchr::memmem::find(text, b"\\\\\\\"").is_some();
    assert_eq!(found.nested_quote, nested);
    // The segments are where the walk would start, and apart.
    for w in found.base64.windows(2) {
        assert!(w[0].end < w[1].start);
    }
}

/// Pieces that start, end, continue or break base64 runs and AWS keys.
const PIECES: &[&str] = &[
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "aGVsbG8gd29ybGQgdGhpcyBpcyBhIHNlY3JldA",
    "c2tfbGl2ZV8xMjM0NTY3ODkwYWJjZGVm",
    "0123456789abcdef0123",
    "AKIAIOSFODNN7EXAMPLE",
    "abcd",
    "ABCDEFGH",
    "\\/",
    "\\\\/",
    "\\n",
    "\\\\n",
    "\\r\\n",
    "\\u0041",
    "\\u00",
    "\\x41",
    "\\\\x4",
    "%2F",
    "%",
    "\\\\\\\"",
    "\\\"",
    "\n",
    "\r\n",
    "  ",
    "\t",
    "=",
    "==",
    "-",
    "_",
    "+",
    "/",
    ".",
    ":",
    "\"",
    ",",
    "é",
    "\u{200b}",
    PLACEHOLDER,
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// The one read finds exactly what the separate scans found.
    #[test]
    fn one_read_finds_what_each_scan_found(
        pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..24),
        raw in proptest::collection::vec(proptest::num::u8::ANY, 0..6),
    ) {
        let mut text = pieces.concat().into_bytes();
        text.extend_from_slice(&raw);
        assert_same_candidates(&text);
    }
}

/// A joined view as it was built before its pieces were copied in bulk: byte by byte, each
/// byte from its own place, the bytes of a run of noise gaps going with the byte after them.
fn joined_byte_by_byte(
    text: &[u8],
    start: usize,
    end: usize,
    gaps: &[(Range<usize>, bool)],
) -> (Vec<u8>, Vec<Range<usize>>) {
    let (mut bytes, mut src) = (Vec::new(), Vec::new());
    let mut noise_from = None;
    let mut at = start;
    for (gap, noise) in gaps.iter().cloned().chain([(end..end, false)]) {
        for (i, &b) in text.iter().enumerate().take(gap.start).skip(at) {
            bytes.push(b);
            src.push(noise_from.take().unwrap_or(i)..i + 1);
        }
        if noise {
            noise_from = Some(noise_from.unwrap_or(gap.start));
        }
        at = gap.end;
    }
    (bytes, src)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// A joined view copies its pieces in bulk to the bytes and sources the copy a byte at a
    /// time made: noise gaps and seams, empty pieces between them, gaps at either end.
    #[test]
    fn joined_view_copies_what_a_byte_at_a_time_copied(
        len in 0usize..40,
        cuts in proptest::collection::vec((0usize..40, 0usize..4, proptest::bool::ANY), 0..6),
    ) {
        let text: Vec<u8> = (0..len as u8).map(|i| b'a' + i % 26).collect();
        let mut gaps: Vec<(Range<usize>, bool)> = Vec::new();
        let mut at = 0;
        for (skip, width, noise) in cuts {
            let start = (at + skip % 5).min(len);
            let end = (start + width).min(len);
            gaps.push((start..end, noise));
            at = end;
        }
        let view = joined(&text, 0, len, &gaps);
        proptest::prop_assert_eq!((view.text, view.src), joined_byte_by_byte(&text, 0, len, &gaps));
    }
}

/// A line break starts only at `\n`, `\r` or a backslash, which the concatenations' search
/// relies on to ask [`line_break`] only there.
#[test]
fn a_line_break_starts_only_at_a_newline_return_or_backslash() {
    for b in 0..=255u8 {
        for rest in [&b""[..], b"n", b"\\n", b"\n", b"\r\\n"] {
            let text = [&[b][..], rest].concat();
            if !matches!(b, b'\n' | b'\r' | b'\\') {
                assert_eq!(line_break(&text, 0), 0, "{text:?}");
            }
        }
    }
}

/// Every byte, alone and around a base64 run, reads as the scans read it.
#[test]
fn every_byte_around_a_run() {
    for b in 0..=255u8 {
        for text in [
            vec![b],
            [&[b][..], b"aGVsbG8gd29ybGQgdGhpcyBpcyBhIHNlY3JldA"].concat(),
            [&b"aGVsbG8gd29ybGQgdGhpcyBpcyBhIHNlY3JldA"[..], &[b]].concat(),
            [&b"aGVsbG8gd29y"[..], &[b], b"bGQgdGhpcyBpcyBhIHNlY3JldA"].concat(),
            [&b"wJalrXUtnFEMI/K7MDENG"[..], &[b], b"/bPxRfiCYEXAMPLEKEY"].concat(),
        ] {
            assert_same_candidates(&text);
        }
    }
}
