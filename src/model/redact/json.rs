//! The JSON-aware stages: a text cut into pieces (one JSON value, each JSONL line, runs of
//! other lines), the string literals of a JSON value decoded for the rules and written back
//! encoded, and the built-in rules again over the plain spelling of strings that spell
//! characters with `\uXXXX` or `\/` escapes.

use std::borrow::Cow;
use std::ops::Range;

use super::is_json;
use super::matching::redact_builtin;

/// Whether `text` holds a JSON escape that spells a character the rules look for (`\u0041` for
/// `A`, `\/` for `/`). The rules read JSON as it is written, so such a spelling hides a secret
/// from them until the string is decoded. (`\\u` counts too: a false alarm only costs a look.)
pub(super) fn has_spelling_escape(text: &[u8]) -> bool {
    memchr::memmem::find(text, br"\u").is_some() || memchr::memmem::find(text, br"\/").is_some()
}

/// A string literal (quotes included) or a number of a JSON text: the parts rules may rewrite.
pub(super) struct Token {
    pub(super) range: Range<usize>,
    pub(super) string: bool,
}

/// The string literals and numbers of `json` (a valid JSON value), in order.
pub(super) fn tokens(json: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&b) = json.get(i) {
        let start = i;
        match b {
            b'"' => {
                i += 1;
                while let Some(&c) = json.get(i) {
                    i += if c == b'\\' { 2 } else { 1 };
                    if c == b'"' {
                        break;
                    }
                }
                let range = start..i.min(json.len());
                out.push(Token {
                    range,
                    string: true,
                });
            }
            b'-' | b'0'..=b'9' => {
                while json
                    .get(i)
                    .is_some_and(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                {
                    i += 1;
                }
                out.push(Token {
                    range: start..i,
                    string: false,
                });
            }
            _ => i += 1,
        }
    }
    out
}

/// The text a string literal spells; its raw inside when it does not decode (a lone surrogate
/// escape), so the rules still see it.
pub(super) fn decode(literal: &[u8]) -> Cow<'_, [u8]> {
    let inner = &literal[1..literal.len().saturating_sub(1).max(1)];
    if !inner.contains(&b'\\') {
        return Cow::Borrowed(inner);
    }
    match serde_json::from_slice::<String>(literal) {
        Ok(s) => Cow::Owned(s.into_bytes()),
        Err(_) => Cow::Borrowed(inner),
    }
}

/// `text` as a JSON string literal.
fn encode(text: &[u8]) -> Vec<u8> {
    serde_json::to_vec(&String::from_utf8_lossy(text)).expect("a string serializes")
}

/// `text` with each range (in order, not overlapping) replaced by its bytes.
fn splice(text: &[u8], edits: Vec<(Range<usize>, Vec<u8>)>) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0;
    for (range, bytes) in edits {
        out.extend_from_slice(&text[copied..range.start]);
        out.extend_from_slice(&bytes);
        copied = range.end;
    }
    out.extend_from_slice(&text[copied..]);
    out
}

/// The bytes between and around the `tokens` of `text`: what a rewrite of tokens must keep.
fn frame<'t>(text: &'t [u8], tokens: &'t [Range<usize>]) -> impl Iterator<Item = &'t [u8]> {
    let ends = std::iter::once(0).chain(tokens.iter().map(|r| r.end));
    let starts = tokens.iter().map(|r| r.start).chain([text.len()]);
    ends.zip(starts).map(move |(end, start)| &text[end..start])
}

/// A piece of a text for the JSON-aware stages: one JSON value, or text that is not JSON.
pub(super) struct Piece {
    pub(super) range: Range<usize>,
    pub(super) json: bool,
}

/// What the JSON-aware stages know of the shape of a text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Shape {
    /// Nothing: the text may be one JSON value (a document over several lines).
    Unknown,
    /// The text is lines of a longer text that is not one JSON value (a part of it
    /// [`super::Redactor::redact_vec`] cut between lines), so it is redacted line by line as the longer
    /// text would be, even where this part alone would parse as one value.
    Lines,
}

/// `text` cut into pieces: the whole text when it is one JSON value (a document over several
/// lines) and its shape is [`Shape::Unknown`], else its lines, each line that is a JSON value
/// (JSONL) a piece of its own and each run of other lines one piece, so rules for raw text
/// still see across their line breaks. Only lines `maybe_json` accepts are parsed.
pub(super) fn pieces(text: &[u8], shape: Shape, maybe_json: impl Fn(&[u8]) -> bool) -> Vec<Piece> {
    if shape == Shape::Unknown && is_json(text) {
        return vec![Piece {
            range: 0..text.len(),
            json: true,
        }];
    }
    let mut out: Vec<Piece> = Vec::new();
    let mut start = 0;
    for line in crate::base::lines::split_lines(text) {
        let range = start..start + line.len();
        start = range.end + 1;
        let json = maybe_json(line) && is_json(line);
        match out.last_mut() {
            Some(last) if !json && !last.json => last.range.end = range.end,
            _ => out.push(Piece { range, json }),
        }
    }
    out
}

/// `text` with the pieces `redact` rewrites replaced, and the count; `None` when it rewrites
/// none.
pub(super) fn redact_pieces(
    text: &[u8],
    pieces: &[Piece],
    mut redact: impl FnMut(&[u8], bool) -> Option<(Vec<u8>, usize)>,
) -> Option<(Vec<u8>, usize)> {
    let mut count = 0;
    let edits: Vec<_> = pieces
        .iter()
        .filter_map(|p| {
            let (bytes, n) = redact(&text[p.range.clone()], p.json)?;
            count += n;
            Some((p.range.clone(), bytes))
        })
        .collect();
    (!edits.is_empty()).then(|| (splice(text, edits), count))
}

/// Runs `rules` on the text each string and number of `json` (one JSON value) spells, and writes
/// back the ones they changed as JSON strings, so `json` stays valid whatever the rules replace;
/// the tokens nothing matched in keep their bytes. `None` when nothing matched.
pub(super) fn redact_decoded(
    json: &[u8],
    rules: impl Fn(&[u8]) -> (Vec<u8>, usize),
) -> Option<(Vec<u8>, usize)> {
    let mut count = 0;
    let edits: Vec<_> = tokens(json)
        .into_iter()
        .filter_map(|t| {
            let raw = &json[t.range.clone()];
            let text = if t.string {
                decode(raw)
            } else {
                Cow::Borrowed(raw)
            };
            let (redacted, n) = rules(&text);
            if n == 0 {
                return None;
            }
            count += n;
            Some((t.range, encode(&redacted)))
        })
        .collect();
    (!edits.is_empty()).then(|| (splice(json, edits), count))
}

/// A JSON value with its strings spelled plainly (`\u0041KIA...` as `AKIA...`, `\/` as `/`).
struct Respelled {
    text: Vec<u8>,
    /// The string literals of `text`, in order (one per literal of the original).
    strings: Vec<Range<usize>>,
    /// The string literals of the original.
    original: Vec<Range<usize>>,
}

/// `json` (one JSON value) with its strings spelled plainly; `None` when that changes nothing.
fn respell(json: &[u8]) -> Option<Respelled> {
    let original: Vec<Range<usize>> = tokens(json)
        .into_iter()
        .filter(|t| t.string)
        .map(|t| t.range)
        .collect();
    let mut text = Vec::with_capacity(json.len());
    let mut strings = Vec::with_capacity(original.len());
    let mut copied = 0;
    for r in &original {
        text.extend_from_slice(&json[copied..r.start]);
        let literal = &json[r.clone()];
        let start = text.len();
        if has_spelling_escape(literal) {
            text.extend_from_slice(&encode(&decode(literal)));
        } else {
            text.extend_from_slice(literal);
        }
        strings.push(start..text.len());
        copied = r.end;
    }
    text.extend_from_slice(&json[copied..]);
    (text != json).then_some(Respelled {
        text,
        strings,
        original,
    })
}

/// The built-in rules again over one JSON value, on its plain spelling `r`, so escapes hide no
/// secret. A string nothing new matched in keeps its bytes (and its escapes). `None` when
/// nothing new matched.
fn redact_respelled(json: &[u8], r: &Respelled) -> Option<(Vec<u8>, usize)> {
    let (redacted, count) = redact_builtin(&r.text);
    if count == 0 {
        return None;
    }
    let redacted_strings: Vec<Range<usize>> = if is_json(&redacted) {
        tokens(&redacted)
            .into_iter()
            .filter(|t| t.string)
            .map(|t| t.range)
            .collect()
    } else {
        Vec::new()
    };
    let same_frame = redacted_strings.len() == r.strings.len()
        && frame(&r.text, &r.strings).eq(frame(&redacted, &redacted_strings));
    if !same_frame {
        // A rule rewrote more than string contents: fall back to the decoded strings one by
        // one, which cannot break the JSON.
        return redact_decoded(json, redact_builtin);
    }
    let edits = r
        .original
        .iter()
        .zip(r.strings.iter().zip(&redacted_strings))
        .filter(|(_, (p, q))| r.text[(*p).clone()] != redacted[(*q).clone()])
        .map(|(original, (_, q))| (original.clone(), redacted[q.clone()].to_vec()))
        .collect();
    Some((splice(json, edits), count))
}

/// Stage 3 of [`super::Redactor`]: the built-in rules over the plain spelling of each JSON value of
/// `text` whose strings spell characters with escapes. `None` when nothing new matched.
pub(super) fn redact_escaped(text: &[u8], shape: Shape) -> Option<(Vec<u8>, usize)> {
    let pieces = pieces(text, shape, has_spelling_escape);
    let respelled: Vec<(&Piece, Respelled)> = pieces
        .iter()
        .filter(|p| p.json)
        .filter_map(|p| respell(&text[p.range.clone()]).map(|r| (p, r)))
        .collect();
    if respelled.is_empty() {
        return None;
    }
    // One pass over all of them, a line each, finds the few with anything new: a pass per line
    // would pay the rules' set-up once per line. No rule matches across two lines that are each
    // one JSON value (a document over several lines is the only piece, and is redone alone).
    let joined = respelled
        .iter()
        .map(|(_, r)| r.text.as_slice())
        .collect::<Vec<_>>()
        .join(&b'\n');
    let (redacted, n) = redact_builtin(&joined);
    if n == 0 {
        return None;
    }
    let lines: Vec<&[u8]> = redacted.split(|&b| b == b'\n').collect();
    let aligned = lines.len() == respelled.len();
    let mut count = 0;
    let edits: Vec<_> = respelled
        .iter()
        .enumerate()
        .filter(|(i, (_, r))| !aligned || lines[*i] != r.text.as_slice())
        .filter_map(|(_, (p, r))| {
            let (bytes, n) = redact_respelled(&text[p.range.clone()], r)?;
            count += n;
            Some((p.range.clone(), bytes))
        })
        .collect();
    (!edits.is_empty()).then(|| (splice(text, edits), count))
}
