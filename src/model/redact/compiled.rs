//! The engines of the built-in rules: the DFAs `build.rs` compiled from [`BUILTIN`], embedded
//! in the binary and loaded in place ([`Finder`]), and, made the first time a rule needs them, the
//! capture engine that reads a match's `value` group and the regex crate's `Regex` for a rule
//! `build.rs` left without DFAs.

use std::ops::Range;
use std::sync::OnceLock;

use regex::bytes::Regex;
use regex_automata::dfa::{dense, regex::Regex as DfaRegex, Automaton};
use regex_automata::nfa::thompson::{self, pikevm::PikeVM};
use regex_automata::util::prefilter::Prefilter;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind, Span};

use super::rules::{Builtin, BUILTIN};

/// The DFAs `build.rs` compiled from [`BUILTIN`], embedded in the binary.
pub(super) mod embedded {
    /// Bytes aligned as the DFAs' `u32` transition tables must be to load without a copy.
    #[repr(C, align(4))]
    pub struct Aligned<B: ?Sized> {
        pub bytes: B,
    }
    /// How `build.rs` compiled the search of one rule.
    pub enum Finder {
        /// Every match starts with one of `prefixes`; `dfa` is the rule's anchored DFA.
        Prefixed {
            dfa: &'static Aligned<[u8]>,
            prefixes: &'static [&'static [u8]],
        },
        /// The DFAs of the rule's unanchored leftmost-first regex, and the bytes a match may
        /// hold (a bit set, `None` for every byte).
        Unanchored {
            forward: &'static Aligned<[u8]>,
            reverse: &'static Aligned<[u8]>,
            alphabet: Option<[u64; 4]>,
        },
        /// None: the rule is left to the regex crate.
        None,
    }
    macro_rules! aligned {
        ($name:literal) => {
            &Aligned {
                bytes: *include_bytes!(concat!(env!("OUT_DIR"), "/", $name)),
            }
        };
    }
    include!(concat!(env!("OUT_DIR"), "/redact_dfas.rs"));
}

/// A DFA `build.rs` serialized, loaded in place.
pub(super) type Dfa = dense::DFA<&'static [u32]>;

/// The DFA `build.rs` serialized into `aligned`.
///
/// Not validated on load: validating costs more than the rest of a small `write` (2 M
/// instructions for the rules a transcript triggers). The test `every_compiled_dfa_is_valid`
/// validates each one.
fn load(aligned: &'static embedded::Aligned<[u8]>) -> Dfa {
    // SAFETY: the bytes are a DFA that `build.rs` serialized with `to_bytes_*_endian` for this
    // target's endianness, with the same `regex-automata` (Cargo.toml pins one exact version
    // for the build script and the library), which is what `from_bytes_unchecked` requires;
    // `Aligned` gives them the 4-byte alignment it needs.
    unsafe { Dfa::from_bytes_unchecked(&aligned.bytes) }
        .expect("build.rs serialized the DFA for this target")
        .0
}

/// The syntax of `regex::bytes::Regex`, which the DFAs were built with too.
fn builtin_syntax() -> syntax::Config {
    syntax::Config::new().utf8(false)
}

/// The engines of one built-in rule, each made the first time it is needed.
struct Engines {
    /// Finds the rule's matches exactly as `regex::bytes::Regex` would (leftmost-first), from
    /// the DFAs `build.rs` compiled; `None` for a rule it left to the regex crate.
    find: OnceLock<Option<Finder>>,
    /// Reads group `value` of a match found: compiled only for a rule that has a match whose
    /// value is not the whole match, and run on the span the DFAs found (as the regex crate
    /// does).
    captures: OnceLock<PikeVM>,
    /// [`Engines::captures`] with Unicode off: for a match whose bytes, and the byte either side
    /// of it, are all ASCII ([`capturer`]). `None` for a rule that does not compile so.
    ascii_captures: OnceLock<Option<PikeVM>>,
    /// The rule as a `regex::bytes::Regex`: for a rule without DFAs, compiled the first time a
    /// text holds one of its triggers.
    regex: OnceLock<Regex>,
}

static ENGINES: [Engines; BUILTIN.len()] = [const {
    Engines {
        find: OnceLock::new(),
        captures: OnceLock::new(),
        ascii_captures: OnceLock::new(),
        regex: OnceLock::new(),
    }
}; BUILTIN.len()];

impl Builtin {
    fn index(&self) -> usize {
        BUILTIN
            .iter()
            .position(|r| std::ptr::eq(r, self))
            .expect("a built-in rule")
    }

    /// The rule's regex, compiled on first use.
    pub(super) fn regex(&self) -> &'static Regex {
        ENGINES[self.index()].regex.get_or_init(|| {
            Regex::new(&(self.pattern)()).expect("built-in redaction rules compile")
        })
    }
}

/// A built-in rule's search, from the DFAs `build.rs` compiled.
pub(super) enum Finder {
    /// The rule's anchored DFA, started at each place where one of the literals every match
    /// starts with occurs, found by the prefilter of those literals.
    Prefixed { dfa: Box<Dfa>, prefixes: Prefilter },
    /// The rule's unanchored regex, and the bytes its matches may hold when not every byte.
    Unanchored {
        re: Box<DfaRegex<Dfa>>,
        alphabet: Option<Alphabet>,
    },
}

/// The bytes a rule's matches may hold: a match lies within one run of them.
#[derive(Clone, Copy)]
pub(super) struct Alphabet {
    /// The bytes, a bit set (`u64` words, low bit first).
    set: [u64; 4],
    /// The bytes outside it, when there are at most three (repeated to three): a run's ends
    /// are then found by `memchr3`, which reads a long run many bytes at a time.
    outside: Option<[u8; 3]>,
}

impl Alphabet {
    fn new(set: [u64; 4]) -> Alphabet {
        let mut alphabet = Alphabet { set, outside: None };
        let outside: Vec<u8> = (0..=u8::MAX).filter(|&b| !alphabet.holds(b)).collect();
        if let [first, ..] = outside[..] {
            if outside.len() <= 3 {
                let byte = |k: usize| outside.get(k).copied().unwrap_or(first);
                alphabet.outside = Some([byte(0), byte(1), byte(2)]);
            }
        }
        alphabet
    }

    fn holds(self, b: u8) -> bool {
        self.set[usize::from(b >> 6)] >> (b & 63) & 1 == 1
    }

    /// The run of bytes of the alphabet in `text` around `within`, whose bytes it all holds.
    pub(super) fn run(self, text: &[u8], within: Range<usize>) -> Range<usize> {
        let (before, after) = (&text[..within.start], &text[within.end..]);
        let (start, end) = match self.outside {
            Some([a, b, c]) => (
                memchr::memrchr3(a, b, c, before),
                memchr::memchr3(a, b, c, after),
            ),
            None => (
                before.iter().rposition(|&b| !self.holds(b)),
                after.iter().position(|&b| !self.holds(b)),
            ),
        };
        start.map_or(0, |p| p + 1)..end.map_or(text.len(), |p| within.end + p)
    }

    /// Whether it holds every byte of `bytes`.
    pub(super) fn holds_all(self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.holds(b))
    }
}

impl Finder {
    /// The bytes the rule's matches may hold, when they are not every byte.
    pub(super) fn alphabet(&self) -> Option<Alphabet> {
        match self {
            Finder::Unanchored { alphabet, .. } => *alphabet,
            Finder::Prefixed { .. } => None,
        }
    }

    /// The ranges of the rule's matches within `span` of `text`, in order and not
    /// overlapping: those `regex::bytes::Regex::find_iter` gives over the whole text that lie
    /// in `span` when no match crosses its ends (the bytes around it are read as look-around).
    ///
    /// A prefixed rule's match starts where one of its literals does, so the first place from
    /// which the anchored DFA matches is where the leftmost match starts, and the anchored DFA
    /// ends it where the leftmost-first match ends (its look-behind reads the text before).
    pub(super) fn find_iter<'a>(
        &'a self,
        text: &'a [u8],
        span: Range<usize>,
    ) -> impl Iterator<Item = Range<usize>> + 'a {
        let end = span.end;
        let mut unanchored = match self {
            Finder::Unanchored { re, .. } => {
                Some(re.find_iter(Input::new(text).range(span.clone())))
            }
            Finder::Prefixed { .. } => None,
        };
        let mut at = span.start;
        std::iter::from_fn(move || {
            let Finder::Prefixed { dfa, prefixes } = self else {
                return unanchored.as_mut()?.next().map(|m| m.range());
            };
            while at < end {
                let start = prefixes.find(text, Span::from(at..end))?.start;
                let input = Input::new(text).range(start..end).anchored(Anchored::Yes);
                match dfa
                    .try_search_fwd(&input)
                    .expect("the rules' DFAs have no quit bytes")
                {
                    Some(end) => {
                        // A match holds one of the literals, so it is never empty.
                        at = end.offset().max(start + 1);
                        return Some(start..end.offset());
                    }
                    None => at = start + 1,
                }
            }
            None
        })
    }
}

pub(super) fn finder(i: usize) -> Option<&'static Finder> {
    ENGINES[i]
        .find
        .get_or_init(|| match embedded::FINDERS[i] {
            embedded::Finder::Prefixed { dfa, prefixes } => Some(Finder::Prefixed {
                dfa: Box::new(load(dfa)),
                prefixes: Prefilter::new(MatchKind::LeftmostFirst, prefixes)
                    .expect("a prefilter of non-empty literals"),
            }),
            embedded::Finder::Unanchored {
                forward,
                reverse,
                alphabet,
            } => Some(Finder::Unanchored {
                re: Box::new(DfaRegex::builder().build_from_dfas(load(forward), load(reverse))),
                alphabet: alphabet.map(Alphabet::new),
            }),
            embedded::Finder::None => None,
        })
        .as_ref()
}

/// The engine that reads group `value` of built-in rule `i`'s match `whole` of `text`.
///
/// Where the match and the byte either side of it (what a look-around reads) are ASCII, it is
/// the rule compiled with Unicode off: a Unicode class (`\s`, `[^\s"']`) and case folding then
/// match exactly the ASCII bytes they match with it on, so the groups are the same, and the
/// compile makes no UTF-8 automata for its classes: in a 118 KB write, on the thread the write
/// waits for, 0.92 M instructions instead of 1.24 M and none of the 78 page faults of the
/// compiler's table of UTF-8 sequences. Elsewhere it is the rule as written.
pub(super) fn capturer(i: usize, text: &[u8], whole: &Range<usize>) -> &'static PikeVM {
    let around = whole.start.saturating_sub(1)..(whole.end + 1).min(text.len());
    let ascii = text[around].is_ascii().then(|| {
        ENGINES[i]
            .ascii_captures
            .get_or_init(|| capture_engine(&format!("(?-u){}", (BUILTIN[i].pattern)())))
            .as_ref()
    });
    ascii.flatten().unwrap_or_else(|| written_capturer(i))
}

/// The engine that reads group `value` of built-in rule `i`, compiled as the rule is written.
pub(super) fn written_capturer(i: usize) -> &'static PikeVM {
    ENGINES[i].captures.get_or_init(|| {
        capture_engine(&(BUILTIN[i].pattern)()).expect("built-in redaction rules compile")
    })
}

/// A capture engine of `pattern`, with the syntax the DFAs were built with; `None` when it does
/// not compile.
fn capture_engine(pattern: &str) -> Option<PikeVM> {
    PikeVM::builder()
        .syntax(builtin_syntax())
        .thompson(thompson::Config::new().utf8(false))
        .build(pattern)
        .ok()
}
