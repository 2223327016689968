//! Rewriting a large text in place a part at a time, cut where redacting the parts one by one
//! gives what redacting the whole text gives ([`super::Redactor::redact_vec`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::is_json;
use crate::base::threads::join;

/// The size from which [`super::Redactor::redact_vec`] redacts a text in parts, and about the
/// size of each part: large enough that the rules' set-up per part costs little, small enough
/// that what a part's redaction holds (its views cost about ten times the part: each byte of a
/// view carries its source range) keeps a 100 MB write under the 64 MiB it may cost beside the
/// transcript. Measured on real transcripts (docs/performance.md, "The write path after one
/// pass"): 4 MiB parts took the 100 MB write over that budget, 2 MiB parts leave 15 MiB of it
/// for 3% more instructions, 1 MiB parts cost 7.5% more.
pub(super) const PART_SIZE: usize = 2 << 20;

/// The size from which a text is redacted in parts on several threads at once, where the
/// machine has more than one core. A thread other than the first determinises the rules'
/// states again in caches of its own (the regex crate's and [`super::compiled`]'s), which
/// costs about what half the redaction of a few hundred kilobytes saves: measured on the
/// shared corpus's transcripts (docs/performance.md, "parts redacted two at a time"), two
/// threads gave nothing at 77 KB, 118 KB and 395 KB, and took 15% off the write at 1.3 MB.
const PARALLEL_FROM: usize = 1 << 20;

/// The most parts redacted at once. Each costs its views (about ten times the part) and a
/// cache of the rules' states: with parts of [`PART_SIZE`] / 2, two cost about what one part
/// of [`PART_SIZE`] did, and the two cores of the benchmark machine are used.
const MOST_WORKERS: usize = 2;

/// How many parts of a text of `len` bytes are redacted at once, and the least size of each:
/// one part of [`PART_SIZE`] at a time below [`PARALLEL_FROM`] or on one core, else the text
/// cut in as many parts as there are threads, up to [`PART_SIZE`] / threads each.
pub(super) fn plan(len: usize) -> (usize, usize) {
    let workers = if len < PARALLEL_FROM { 1 } else { cores() }.clamp(1, MOST_WORKERS);
    (workers, (len / workers).clamp(1, PART_SIZE / workers))
}

/// The cores this process may run on (asked once).
pub(super) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Where the part of `text` for the built-in stages that ends at or after `from` ends: the
/// first newline at or after `from` with `}` before it and `{` after it, else the text's end.
pub(super) fn builtin_cut(text: &[u8], from: usize) -> usize {
    let from = from.max(1);
    if from >= text.len() {
        return text.len();
    }
    memchr::memmem::find(&text[from - 1..], b"}\n{").map_or(text.len(), |i| from + i)
}

/// Where the part of `text` for the user rules that ends at or after `from` ends: the first
/// newline at or after `from` whose line before or after is a JSON value, else the text's end.
pub(super) fn user_cut(text: &[u8], from: usize) -> usize {
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

/// A part's new bytes and the secrets replaced in it, `None` when it is kept as it is.
type Rewrite = Option<(Vec<u8>, usize)>;

/// How many parts in a row, for each thread, [`rewrite_in_parts`] hands out before it puts their
/// rewrites in place. The threads take the parts one at a time as each is free, so they wait
/// for each other only at the end of a row: handed out two at a time, one thread per part, a
/// part that took longer than its neighbour held the other thread idle (35 ms of the 13.7 MB
/// transcript's 245 ms of redaction, under `perf`). Beside the text, a row's rewrites are held:
/// with parts of a megabyte on two threads, at most 8 MB.
const PARTS_A_THREAD: usize = 4;

/// Rewrites `text` in place a part at a time, keeping the newline after each part:
/// `cut(text, start)` is the end of the part that starts at `start` (a newline's index, or the
/// text's end), `redact` a part's new bytes and count (`None` to keep it). Returns the sum of
/// the counts. Rows of [`PARTS_A_THREAD`] parts for each of `workers` threads (the caller's
/// among them) are redacted at once, each thread taking the row's next part when it is free;
/// the rewrites are put in place in order, so the result is the one a part at a time gives.
/// Beside `text`, only a row's rewrites are held at a time.
pub(super) fn rewrite_in_parts(
    text: &mut Vec<u8>,
    cut: impl Fn(&[u8], usize) -> usize,
    redact: impl Fn(&[u8]) -> Rewrite + Sync,
    workers: usize,
) -> usize {
    let mut count = 0;
    // `text[..done]` is rewritten, `text[next..]` still to read; `done <= next` throughout.
    let (mut done, mut next) = (0, 0);
    while next < text.len() {
        // The lengths of the next parts, each after the previous one's newline.
        let row = workers.max(1) * PARTS_A_THREAD;
        let mut lens = Vec::with_capacity(row);
        let mut at = next;
        while lens.len() < row && at < text.len() {
            let end = cut(text, at);
            lens.push(end - at);
            at = end + 1;
        }
        let rewrites = redact_each(&text[next..], &lens, &redact, workers);
        for (len, rewrite) in lens.into_iter().zip(rewrites) {
            let mut end = next + len;
            match rewrite {
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
    }
    text.truncate(done);
    count
}

/// `redact` of each part of `text` (parts of `lens` bytes, each followed by one newline), in
/// order, made by `workers` threads at once ([`take_parts`]).
fn redact_each(
    text: &[u8],
    lens: &[usize],
    redact: &(impl Fn(&[u8]) -> Rewrite + Sync),
    workers: usize,
) -> Vec<Rewrite> {
    let mut parts = Vec::with_capacity(lens.len());
    let mut at = 0;
    for &len in lens {
        parts.push(&text[at..at + len]);
        at += len + 1;
    }
    let next = AtomicUsize::new(0);
    let mut made = take_parts(&parts, &next, redact, workers.clamp(1, parts.len().max(1)));
    made.sort_unstable_by_key(|(i, _)| *i);
    made.into_iter().map(|(_, rewrite)| rewrite).collect()
}

/// `redact` of the parts of `parts` not taken yet, on this thread and `threads - 1` beside it
/// ([`join`]), each taking the next part (`next`) when it is free: the index and rewrite of
/// each part, in no order.
fn take_parts(
    parts: &[&[u8]],
    next: &AtomicUsize,
    redact: &(impl Fn(&[u8]) -> Rewrite + Sync),
    threads: usize,
) -> Vec<(usize, Rewrite)> {
    let take = || {
        let mut made = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(part) = parts.get(i) else {
                return made;
            };
            made.push((i, redact(part)));
        }
    };
    if threads <= 1 {
        return take();
    }
    let (mut made, beside) = join(take, &|| take_parts(parts, next, redact, threads - 1));
    made.extend(beside);
    made
}
