//! Rewriting a large text in place a part at a time, cut where redacting the parts one by one
//! gives what redacting the whole text gives ([`super::Redactor::redact_vec`]).

use super::is_json;

/// The size from which [`super::Redactor::redact_vec`] redacts a text in parts, and about the
/// size of each part: large enough that the rules' set-up per part costs little, small enough
/// that what a part's redaction holds (its views cost about ten times the part: each byte of a
/// view carries its source range) keeps a 100 MB write under the 64 MiB it may cost beside the
/// transcript. Measured on real transcripts (docs/performance.md, "The write path after one
/// pass"): 4 MiB parts took the 100 MB write over that budget, 2 MiB parts leave 15 MiB of it
/// for 3% more instructions, 1 MiB parts cost 7.5% more.
pub(super) const PART_SIZE: usize = 2 << 20;

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

/// Rewrites `text` in place a part at a time, keeping the newline after each part:
/// `cut(text, start)` is the end of the part that starts at `start` (a newline's index, or the
/// text's end), `redact` a part's new bytes and count (`None` to keep it). Returns the sum of
/// the counts. Beside `text`, only one part and its rewrite are held at a time.
pub(super) fn rewrite_in_parts(
    text: &mut Vec<u8>,
    cut: impl Fn(&[u8], usize) -> usize,
    redact: impl Fn(&[u8]) -> Option<(Vec<u8>, usize)>,
) -> usize {
    let mut count = 0;
    // `text[..done]` is rewritten, `text[next..]` still to read; `done <= next` throughout.
    let (mut done, mut next) = (0, 0);
    while next < text.len() {
        let mut end = cut(text, next);
        match redact(&text[next..end]) {
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
    text.truncate(done);
    count
}
