//! Running the built-in rules over a text: each rule only when the text holds one of its
//! triggers (or passes its gate), through the DFAs `build.rs` compiled, or the regex crate's
//! `Regex` for large texts; and one user rule's matches replaced.

use std::borrow::Cow;
use std::ops::Range;

use regex::bytes::Regex;
use regex_automata::nfa::thompson::pikevm::PikeVM;
use regex_automata::{Anchored, Input};

use super::compiled::{capturer, finder, with_one_pass_dfas, Alphabet};
use super::parts::builtin_cut;
use super::rules::{Builtin, Replace, BUILTIN};
use super::secret::{at_token_start, replacement};
use super::PLACEHOLDER;

/// The triggers a text holds, each looked up once however many rules share it.
pub(super) struct Triggers {
    /// The text, ASCII-lowercased.
    lower: Vec<u8>,
    looked_up: Vec<(&'static str, bool)>,
}

impl Triggers {
    pub(super) fn new(text: &[u8]) -> Triggers {
        Triggers {
            lower: text.to_ascii_lowercase(),
            looked_up: Vec::new(),
        }
    }

    /// The text, ASCII-lowercased.
    pub(super) fn lower(&self) -> &[u8] {
        &self.lower
    }

    /// Follows the text as [`replace_ranges`] rewrote it, `secrets` replaced: a trigger it
    /// held is taken as held still (the rules of one a replacement removed find nothing, as it
    /// is in each of their matches), and one it did not hold is looked for again only where a
    /// placeholder now is, with the bytes either side it could span: nowhere else did the text
    /// change.
    pub(super) fn replaced(&mut self, text: &[u8], secrets: &[Range<usize>]) {
        self.lower = text.to_ascii_lowercase();
        let mut placed = Vec::with_capacity(secrets.len());
        let mut start = 0;
        let mut copied = 0;
        for s in secrets {
            start += s.start - copied;
            placed.push(start..start + PLACEHOLDER.len());
            start += PLACEHOLDER.len();
            copied = s.end;
        }
        let lower = &self.lower;
        for (trigger, held) in self.looked_up.iter_mut().filter(|(_, held)| !*held) {
            let reach = trigger.len() - 1;
            *held = placed.iter().any(|p| {
                let around = p.start.saturating_sub(reach)..(p.end + reach).min(lower.len());
                memchr::memmem::find(&lower[around], trigger.as_bytes()).is_some()
            });
        }
    }

    /// Whether the text holds one of `triggers`.
    pub(super) fn any(&mut self, triggers: &[&'static str]) -> bool {
        triggers.iter().any(|t| self.holds(t))
    }

    fn holds(&mut self, trigger: &'static str) -> bool {
        if let Some(&(_, held)) = self.looked_up.iter().find(|(t, _)| *t == trigger) {
            return held;
        }
        let held = memchr::memmem::find(&self.lower, trigger.as_bytes()).is_some();
        self.looked_up.push((trigger, held));
        held
    }
}

/// Calls `found` with the range of each secret among the matches of `re` in `text`, in order.
fn regex_secrets(
    re: &Regex,
    replace: Replace,
    token_start: bool,
    text: &[u8],
    mut found: impl FnMut(Range<usize>),
) {
    for c in re.captures_iter(text) {
        let whole = c.get(0).expect("group 0 always matches");
        if token_start && !at_token_start(text, whole.start()) {
            continue;
        }
        let value = c.name("value").map(|v| v.range());
        if let Some(s) = replacement(replace, text, whole.range(), value) {
            found(s);
        }
    }
}

/// `text` with each of `secrets` (in order, not overlapping) replaced by the placeholder;
/// `None` when there are none.
pub(super) fn replace_ranges(text: &[u8], secrets: &[Range<usize>]) -> Option<Vec<u8>> {
    if secrets.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0;
    for s in secrets {
        out.extend_from_slice(&text[copied..s.start]);
        out.extend_from_slice(PLACEHOLDER.as_bytes());
        copied = s.end;
    }
    out.extend_from_slice(&text[copied..]);
    Some(out)
}

/// `text` with the secrets among the matches of the user rule `re` replaced, counted in
/// `count`; `None` when `re` does not match.
pub(super) fn replace_secrets(
    re: &Regex,
    replace: Replace,
    token_start: bool,
    text: &[u8],
    count: &mut usize,
) -> Option<Vec<u8>> {
    if !re.is_match(text) {
        return None;
    }
    let mut secrets = Vec::new();
    regex_secrets(re, replace, token_start, text, |s| secrets.push(s));
    *count += secrets.len();
    Some(replace_ranges(text, &secrets).unwrap_or_else(|| text.to_vec()))
}

/// The runs of bytes of `alphabet` in `text` that hold one of `triggers` (found in `lower`, the
/// text ASCII-lowercased), in order. A match of a rule whose matches hold one of its triggers
/// and only bytes of its alphabet lies in one of them: a rule is searched there alone.
fn windows(text: &[u8], lower: &[u8], triggers: &[&str], alphabet: Alphabet) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    for trigger in triggers {
        let finder = memchr::memmem::Finder::new(trigger.as_bytes());
        let mut at = 0;
        while let Some(found) = finder.find(&lower[at..]) {
            let (start, end) = (at + found, at + found + trigger.len());
            if !alphabet.holds_all(&text[start..end]) {
                at = start + 1;
                continue;
            }
            let run = alphabet.run(text, start..end);
            at = run.end;
            runs.push(run);
        }
    }
    // Runs are maximal: two are the same run or apart.
    runs.sort_unstable_by_key(|r| r.start);
    runs.dedup();
    runs
}

/// Calls `found` with the range of each secret built-in rule `i` finds in `text`, in order:
/// what [`replace_secrets`] with the rule's regex would replace. `lower` is the text
/// ASCII-lowercased.
fn builtin_secrets(i: usize, text: &[u8], lower: &[u8], mut found: impl FnMut(Range<usize>)) {
    let rule = &BUILTIN[i];
    #[cfg(test)]
    let reference = REFERENCE.get();
    #[cfg(not(test))]
    let reference = false;
    let finder = if reference { None } else { finder(i) };
    let Some(finder) = finder else {
        return regex_secrets(rule.regex(), rule.replace, rule.token_start, text, found);
    };
    let spans = match finder.alphabet() {
        Some(alphabet) => windows(text, lower, rule.triggers, alphabet),
        None => std::iter::once(0..text.len()).collect(),
    };
    let mut pike: Option<(&PikeVM, _, _)> = None;
    for whole in spans
        .into_iter()
        .flat_map(|span| finder.find_iter(text, span))
    {
        if rule.token_start && !at_token_start(text, whole.start) {
            continue;
        }
        let value = if rule.replace == Replace::Whole || rule.value_is_match {
            Some(whole.clone())
        } else {
            let (vm, cache, caps) = pike.get_or_insert_with(|| {
                let vm = capturer(i);
                (vm, vm.create_cache(), vm.create_captures())
            });
            let input = Input::new(text)
                .range(whole.clone())
                .anchored(Anchored::Yes);
            vm.search(cache, &input, caps);
            debug_assert_eq!(caps.get_match().map(|m| m.range()), Some(whole.clone()));
            caps.get_group_by_name("value").map(|v| v.range())
        };
        if let Some(s) = replacement(rule.replace, text, whole, value) {
            found(s);
        }
    }
}

/// The ranges [`builtin_secrets`] finds, in order.
pub(super) fn builtin_secrets_of(i: usize, text: &[u8], lower: &[u8]) -> Vec<Range<usize>> {
    let mut secrets = Vec::new();
    builtin_secrets(i, text, lower, |s| secrets.push(s));
    secrets
}

/// The ranges of `text` that the built-in rules for which `run` holds find secrets in, each
/// rule run over `text` itself (not over what the rules before it left, as [`redact_builtin`]
/// does), sorted by start; ranges of several rules may overlap.
pub(super) fn builtin_spans(text: &[u8], run: impl Fn(&Builtin) -> bool) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut triggers = Triggers::new(text);
    for (i, rule) in BUILTIN.iter().enumerate() {
        if run(rule) && triggers.any(rule.triggers) && rule.gate.is_none_or(|gate| gate(text)) {
            builtin_secrets(i, text, triggers.lower(), |s| spans.push(s));
        }
    }
    spans.sort_by_key(|s| (s.start, s.end));
    spans
}

/// The built-in rules with each rule's `regex::bytes::Regex`, compiled at run time, over the
/// text the rules before it left: the same output as [`redact_builtin`]'s DFAs (the tests
/// compare them), and faster on large texts, where the regex crate's literal prefilters skip
/// most bytes and the ~2 ms of compiling matter little.
pub(super) fn redact_builtin_at_run_time(input: &[u8]) -> (Vec<u8>, usize) {
    let mut text = input.to_vec();
    let mut count = 0;
    let mut triggers = Triggers::new(&text);
    for rule in &BUILTIN {
        if !triggers.any(rule.triggers) {
            continue;
        }
        if let Some(replaced) = replace_secrets(
            rule.regex(),
            rule.replace,
            rule.token_start,
            &text,
            &mut count,
        ) {
            text = replaced;
            triggers = Triggers::new(&text);
        }
    }
    (text, count)
}

/// From this size on a text is redacted with [`redact_builtin_at_run_time`]: measured on real
/// transcripts, the DFAs cost less up to about 1 MB and more from about 4 MB on
/// (docs/performance.md, note (a)).
const LARGE_TEXT: usize = 2 << 20;

/// From this size on [`redact_builtin`] finds the pieces to redact in one pass: building the
/// lazy DFAs of the rules costs about 17 M instructions, more than the rules' own DFAs cost
/// over a text of a few hundred kilobytes (docs/performance.md, "Redaction in one pass").
const ONE_PASS: usize = 512 << 10;

/// The built-in rules over `input` as bytes: the redacted text and the number of secrets.
///
/// What [`redact_rule_by_rule`] makes of the whole text, found in one pass of each of
/// [`super::compiled::with_one_pass_dfas`]' lazy DFAs (every rule's pattern in one of them,
/// their caches kept for the process), which find the pieces of the text some rule matches in;
/// only those are redacted rule by rule. A piece is a run of lines between two newlines with `}`
/// before and `{` after ([`builtin_cut`]): no match of a rule holds such a newline, and every
/// rule's replacement keeps it, so redacting the pieces one by one gives what redacting the whole
/// text gives (the reasoning of [`super::Redactor::redact_vec_in_parts`]), and a piece no rule
/// matches in is kept as it is. Pieces the DFAs found that share lines are redacted as one, which
/// is again a run of such lines. A transcript's lines with a match are few: most of its bytes are
/// read by these searches alone, rather than once per rule whose trigger the text holds.
pub(super) fn redact_builtin(input: &[u8]) -> (Vec<u8>, usize) {
    #[cfg(test)]
    if REFERENCE.get() {
        return redact_builtin_at_run_time(input);
    }
    #[cfg(test)]
    let small = input.len() < ONE_PASS && !ONE_PASS_ALWAYS.get();
    #[cfg(not(test))]
    let small = input.len() < ONE_PASS;
    if small {
        return redact_rule_by_rule(input);
    }
    let mut pieces = Vec::new();
    with_one_pass_dfas(|dfa, cache| {
        let mut at = 0;
        while at < input.len() {
            let found = dfa
                .try_search_fwd(cache, &Input::new(input).range(at..).earliest(true))
                .expect("the lazy DFAs never give up (one_pass_dfas)");
            let Some(end) = found.map(|m| m.offset()) else {
                break;
            };
            // The piece that holds the match: `at` starts one, and the match, which holds at
            // least one byte, ends at `end`.
            debug_assert!(end > at, "no built-in rule matches the empty string");
            let start = memchr::memmem::rfind(&input[at..end], b"}\n{").map_or(at, |i| at + i + 2);
            let stop = builtin_cut(input, end);
            pieces.push(start..stop);
            at = stop + 1;
        }
    });
    pieces.sort_by_key(|p| p.start);
    let (mut out, mut copied, mut count) = (Vec::new(), 0, 0);
    let mut pieces = pieces.into_iter().peekable();
    while let Some(mut piece) = pieces.next() {
        while let Some(next) = pieces.next_if(|next| next.start <= piece.end) {
            piece.end = piece.end.max(next.end);
        }
        let (redacted, n) = redact_rule_by_rule(&input[piece.clone()]);
        if n > 0 {
            out.extend_from_slice(&input[copied..piece.start]);
            out.extend_from_slice(&redacted);
            copied = piece.end;
            count += n;
        }
    }
    if count == 0 {
        return (input.to_vec(), 0);
    }
    out.extend_from_slice(&input[copied..]);
    (out, count)
}

/// The built-in rules over `input` as bytes: the redacted text and the number of secrets.
///
/// Rule by rule, in order, each over the text the rules before it left, as if each were
/// `regex::bytes::Regex::replace_all`; a rule runs only when the text holds one of its
/// triggers, looked up again whenever a rule changed the text (a replacement can join two
/// pieces into a new trigger).
fn redact_rule_by_rule(input: &[u8]) -> (Vec<u8>, usize) {
    if input.len() >= LARGE_TEXT {
        return redact_builtin_at_run_time(input);
    }
    let mut text = Cow::Borrowed(input);
    let mut count = 0;
    let mut triggers = Triggers::new(&text);
    for (i, rule) in BUILTIN.iter().enumerate() {
        if !triggers.any(rule.triggers) || rule.gate.is_some_and(|gate| !gate(&text)) {
            continue;
        }
        let secrets = builtin_secrets_of(i, &text, triggers.lower());
        if let Some(replaced) = replace_ranges(&text, &secrets) {
            count += secrets.len();
            text = Cow::Owned(replaced);
            triggers.replaced(&text, &secrets);
        }
    }
    (text.into_owned(), count)
}

#[cfg(test)]
thread_local! {
    /// Makes [`redact_builtin`] run [`redact_builtin_at_run_time`] on this thread.
    pub(super) static REFERENCE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Makes [`redact_builtin`] search in one pass whatever the size of the text.
    pub(super) static ONE_PASS_ALWAYS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
