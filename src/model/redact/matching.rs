//! Running the built-in rules over a text: each rule only when the text holds one of its
//! triggers (or passes its gate), through the DFAs `build.rs` compiled, or the regex crate's
//! `Regex` for large texts; and one user rule's matches replaced.

use std::borrow::Cow;
use std::ops::Range;

use regex::bytes::Regex;
use regex_automata::nfa::thompson::pikevm::PikeVM;
use regex_automata::{Anchored, Input};

use super::compiled::{capturer, finder, Alphabet};
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

    /// Follows the text as [`replace_ranges`] rewrote it, with placeholders at `placed`: a
    /// trigger it held is taken as held still (the rules of one a replacement removed find
    /// nothing, as it is in each of their matches), and one it did not hold is looked for again
    /// only around the placeholders, with the bytes either side it could span: nowhere else did
    /// the text change.
    pub(super) fn replaced(&mut self, text: &[u8], placed: &[Range<usize>]) {
        self.lower = text.to_ascii_lowercase();
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
    replace_ranges_placing(text, secrets, |_| {})
}

/// [`replace_ranges`], calling `placed` with where each placeholder lies in the new text.
pub(super) fn replace_ranges_placing(
    text: &[u8],
    secrets: &[Range<usize>],
    mut placed: impl FnMut(Range<usize>),
) -> Option<Vec<u8>> {
    if secrets.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0;
    for s in secrets {
        out.extend_from_slice(&text[copied..s.start]);
        placed(out.len()..out.len() + PLACEHOLDER.len());
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
            let vm = capturer(i, text, &whole);
            let (_, cache, caps) = match &mut pike {
                Some((last, ..)) if std::ptr::eq(*last, vm) => pike.as_mut().expect("just matched"),
                _ => pike.insert((vm, vm.create_cache(), vm.create_captures())),
            };
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
/// text the rules before it left: the reference the tests compare [`redact_builtin`]'s DFAs
/// with.
#[cfg(test)]
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

/// The built-in rules over `input` as bytes: the redacted text and the number of secrets.
///
/// Rule by rule, in order, each over the text the rules before it left, as if each were
/// `regex::bytes::Regex::replace_all`; a rule runs only when the text holds one of its
/// triggers (followed through each replacement: one can join two pieces into a new trigger).
/// Most rules read few of the text's bytes: a rule whose matches start with a literal starts
/// only where one does, and one whose matches hold only some bytes reads only the runs of them
/// that hold its triggers ([`windows`]).
pub(super) fn redact_builtin(input: &[u8]) -> (Vec<u8>, usize) {
    #[cfg(test)]
    if REFERENCE.get() {
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
        let mut placed = Vec::with_capacity(secrets.len());
        if let Some(replaced) = replace_ranges_placing(&text, &secrets, |p| placed.push(p)) {
            count += secrets.len();
            text = Cow::Owned(replaced);
            triggers.replaced(&text, &placed);
        }
    }
    (text.into_owned(), count)
}

#[cfg(test)]
thread_local! {
    /// Makes [`redact_builtin`] run [`redact_builtin_at_run_time`] on this thread.
    pub(super) static REFERENCE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
