//! Compiles the built-in redaction rules (`src/model/redact/rules.rs`) into DFAs, serialized
//! into `OUT_DIR` and embedded in the binary, so a process loads them instead of compiling ~20
//! regexes on every `write` (docs/performance.md, note (a)). The library deserializes them
//! with `regex_automata::dfa::dense::DFA::from_bytes`, which copies nothing.
//!
//! For each rule, minimized, one of:
//! - for a rule every match of which starts with one of a few literals (`ghp_`, `AKIA`): the
//!   literals and the rule's anchored DFA, run where one of them occurs ([`prefixed`]);
//! - the forward and reverse DFAs of a `regex_automata::dfa::regex::Regex` (leftmost-first,
//!   the regex crate's semantics) ([`unanchored`]).
//!
//! Either finds the rule's matches exactly as `regex::bytes::Regex` does. A rule with neither
//! (its DFAs would exceed 1 MiB, or [`DETERMINIZED_LIMIT`] before minimizing) is left to the
//! regex crate, compiled at run time when the text holds one of its triggers.

#[path = "src/model/redact/rules.rs"]
#[allow(dead_code)]
mod redact_rules;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use regex_automata::dfa::{dense, regex::Regex, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind};

/// The syntax the regex crate's `regex::bytes::Regex` uses: UTF-8 not required of matches.
fn syntax_config() -> syntax::Config {
    syntax::Config::new().utf8(false)
}

fn thompson_config() -> thompson::Config {
    thompson::Config::new().utf8(false)
}

/// The largest DFA determinized before minimizing. The key-assignment rule (`key`, `secret`,
/// `token`: a trigger in nearly every transcript) determinizes to 6.5 MB and minimizes to
/// 157 KB + 50 KB; the rules left out exceed 64 MB before minimizing, which would take seconds
/// and hundreds of MB of the build to try.
const DETERMINIZED_LIMIT: usize = 8 << 20;

/// The most literals a rule's prefilter looks for when the rule has unanchored DFAs too: the
/// searcher of more (a case-insensitive word's 16 spellings) costs more to build (65 µs) than it
/// saves on a 118 KB transcript.
const MAX_PREFIXES: usize = 8;

/// The largest minimized DFAs embedded for one rule.
const EMBEDDED_LIMIT: usize = 1 << 20;

fn write(out: &Path, name: &str, dfa: &dense::DFA<Vec<u32>>, big_endian: bool) {
    let (bytes, pad) = if big_endian {
        dfa.to_bytes_big_endian()
    } else {
        dfa.to_bytes_little_endian()
    };
    std::fs::write(out.join(name), &bytes[pad..]).expect("OUT_DIR is writable");
}

/// `pattern` parsed as the regex crate parses it.
fn parse(pattern: &str) -> Hir {
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .expect("built-in redaction rules parse")
}

/// The bytes a match of `pattern` may hold, as a bit set (`u64` words, low bit first): those of
/// its literals and classes, and every byte from 0x80 for a class with a character beyond
/// ASCII (its UTF-8 bytes); `None` when that is every byte.
fn alphabet(pattern: &str) -> Option<[u64; 4]> {
    fn add(hir: &Hir, set: &mut [bool; 256]) {
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(literal) => literal.0.iter().for_each(|&b| set[usize::from(b)] = true),
            HirKind::Class(Class::Bytes(class)) => {
                for r in class.ranges() {
                    set[usize::from(r.start())..=usize::from(r.end())].fill(true);
                }
            }
            HirKind::Class(Class::Unicode(class)) => {
                for r in class.ranges() {
                    let (start, end) = (u32::from(r.start()) as usize, u32::from(r.end()) as usize);
                    if start < 0x80 {
                        set[start..=end.min(0x7f)].fill(true);
                    }
                    if end >= 0x80 {
                        set[0x80..].fill(true);
                    }
                }
            }
            HirKind::Repetition(r) => add(&r.sub, set),
            HirKind::Capture(c) => add(&c.sub, set),
            HirKind::Concat(all) | HirKind::Alternation(all) => {
                all.iter().for_each(|h| add(h, set))
            }
        }
    }
    let mut set = [false; 256];
    add(&parse(pattern), &mut set);
    if set.iter().all(|&b| b) {
        return None;
    }
    let mut words = [0u64; 4];
    for (b, _) in set.iter().enumerate().filter(|(_, &held)| held) {
        words[b / 64] |= 1 << (b % 64);
    }
    Some(words)
}

/// A rule's search from the literals its matches start with ([`prefixed`]).
struct Prefixed {
    prefixes: Vec<Vec<u8>>,
    dfa: dense::DFA<Vec<u32>>,
}

/// The literals one of which every match of `pattern` starts with, and the anchored DFA of
/// `pattern` to run where one occurs: `None` when the pattern has no such set (a match may
/// start with any of a class: `[A-Za-z0-9_]*key`), or when the DFA exceeds
/// [`EMBEDDED_LIMIT`]. The literals are those the regex
/// crate's own prefilter looks for (`optimize_for_prefix_by_preference`), each a prefix of
/// every match that starts where it occurs.
fn prefixed(pattern: &str) -> Option<Prefixed> {
    let mut seq = Extractor::new()
        .kind(ExtractKind::Prefix)
        .extract(&parse(pattern));
    seq.optimize_for_prefix_by_preference();
    let prefixes: Vec<Vec<u8>> = seq
        .literals()?
        .iter()
        .map(|l| l.as_bytes().to_vec())
        .collect();
    if prefixes.is_empty() || prefixes.iter().any(|p| p.is_empty()) {
        return None;
    }
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .minimize(true)
                .start_kind(StartKind::Anchored)
                .dfa_size_limit(Some(DETERMINIZED_LIMIT))
                .determinize_size_limit(Some(16 << 20)),
        )
        .syntax(syntax_config())
        .thompson(thompson_config())
        .build(pattern)
        .ok()
        .filter(|dfa| dfa.memory_usage() <= EMBEDDED_LIMIT)?;
    Some(Prefixed { prefixes, dfa })
}

/// The forward and reverse DFAs of `pattern`'s unanchored leftmost-first regex: `None` when
/// they exceed [`EMBEDDED_LIMIT`] (a long counted repetition of letters, which an unanchored
/// DFA must track from every start at once), which leaves the rule to the regex crate.
fn unanchored(pattern: &str) -> Option<Regex> {
    Regex::builder()
        .syntax(syntax_config())
        .thompson(thompson_config())
        .dense(
            dense::Config::new()
                .minimize(true)
                .dfa_size_limit(Some(DETERMINIZED_LIMIT))
                .determinize_size_limit(Some(16 << 20)),
        )
        .build(pattern)
        .ok()
        .filter(|re| re.forward().memory_usage() + re.reverse().memory_usage() <= EMBEDDED_LIMIT)
}

/// Writes the anchored DFA of rule `i` and returns its `Finder::Prefixed`.
fn write_prefixed(out: &Path, i: usize, prefixed: &Prefixed, big_endian: bool) -> String {
    write(
        out,
        &format!("redact-anchored-{i}.dfa"),
        &prefixed.dfa,
        big_endian,
    );
    let prefixes = prefixed.prefixes.iter().map(|p| format!("&{p:?}"));
    let prefixes: Vec<String> = prefixes.collect();
    format!(
        "Finder::Prefixed {{ dfa: aligned!(\"redact-anchored-{i}.dfa\"), prefixes: &[{}] }}",
        prefixes.join(", ")
    )
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/model/redact");
    println!("cargo::rerun-if-changed=Cargo.lock");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let big_endian = std::env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("big");
    let patterns: Vec<String> = redact_rules::BUILTIN
        .iter()
        .map(|r| (r.pattern)())
        .collect();

    let mut rust = String::new();
    let mut finders = String::new();
    for (i, pattern) in patterns.iter().enumerate() {
        let finder = match prefixed(pattern) {
            // A few literals: their searcher is cheap to build, and skips what no match starts in.
            Some(p) if p.prefixes.len() <= MAX_PREFIXES => write_prefixed(&out, i, &p, big_endian),
            // More (a case-insensitive word): the unanchored DFAs, or the literals' searcher,
            // built at run time, when the rule has no such DFAs (cheaper than the regex crate's
            // regex).
            prefixed => match (unanchored(pattern), prefixed) {
                (Some(re), _) => {
                    write(
                        &out,
                        &format!("redact-fwd-{i}.dfa"),
                        re.forward(),
                        big_endian,
                    );
                    write(
                        &out,
                        &format!("redact-rev-{i}.dfa"),
                        re.reverse(),
                        big_endian,
                    );
                    format!(
                        "Finder::Unanchored {{ forward: aligned!(\"redact-fwd-{i}.dfa\"), reverse: aligned!(\"redact-rev-{i}.dfa\"), alphabet: {:?} }}",
                        alphabet(pattern)
                    )
                }
                (None, Some(p)) => write_prefixed(&out, i, &p, big_endian),
                (None, None) => "Finder::None".to_owned(),
            },
        };
        writeln!(finders, "    {finder},").unwrap();
    }
    let n = patterns.len();
    writeln!(
        rust,
        "/// How each rule's matches are found, in the order of `BUILTIN`."
    )
    .unwrap();
    writeln!(rust, "pub static FINDERS: [Finder; {n}] = [\n{finders}];").unwrap();
    writeln!(
        rust,
        "/// A digest of the redaction code (every file of `src/model/redact/`) and of `Cargo.lock`\n\
         /// (the regex crates' versions): what the output of the built-in rules depends on."
    )
    .unwrap();
    writeln!(
        rust,
        "pub const CODE_DIGEST: u64 = {:#018x};",
        code_digest()
    )
    .unwrap();
    std::fs::write(out.join("redact_dfas.rs"), rust).expect("OUT_DIR is writable");
}

/// A digest of every file of `src/model/redact/` and its folders (by path, in order) and of
/// `Cargo.lock`: it
/// changes whenever the code that redacts, its rules or the crates they run on change, so a
/// transcript redacted by another build is never taken for one redacted by this build
/// (`Redactor::fingerprint`). Within one build only; a collision would need two versions of the
/// source that hash alike, which no edit makes by chance.
fn code_digest() -> u64 {
    use std::hash::{Hash, Hasher};
    let mut names = Vec::new();
    let mut dirs = vec![PathBuf::from("src/model/redact")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/model/redact is readable") {
            let path = entry.expect("src/model/redact is readable").path();
            match path.is_dir() {
                true => dirs.push(path),
                false => names.push(path),
            }
        }
    }
    names.sort();
    names.push(PathBuf::from("Cargo.lock"));
    let mut hasher = std::hash::DefaultHasher::new();
    for path in names {
        path.hash(&mut hasher);
        std::fs::read(&path)
            .expect("the redaction sources are readable")
            .hash(&mut hasher);
    }
    hasher.finish()
}
