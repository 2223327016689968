//! Compiles the built-in redaction rules (`src/model/redact/rules.rs`) into DFAs, serialized
//! into `OUT_DIR` and embedded in the binary, so a process loads them instead of compiling ~20
//! regexes on every `write` (docs/performance.md, note (a)). The library deserializes them
//! with `regex_automata::dfa::dense::DFA::from_bytes`, which copies nothing.
//!
//! For each rule: the forward and reverse DFAs of a `regex_automata::dfa::regex::Regex`
//! (leftmost-first, the regex crate's semantics), which find its matches exactly as
//! `regex::bytes::Regex` does, minimized. A rule whose minimized DFAs would exceed 1 MiB, or
//! whose DFAs before minimizing would exceed [`DETERMINIZED_LIMIT`], is left to the regex
//! crate, compiled at run time when the text holds one of its triggers.

#[path = "src/model/redact/rules.rs"]
#[allow(dead_code)]
mod redact_rules;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use regex_automata::dfa::{dense, regex::Regex};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;

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

/// The largest pair of minimized DFAs embedded for one rule.
const EMBEDDED_LIMIT: usize = 1 << 20;

fn write(out: &Path, name: &str, dfa: &dense::DFA<Vec<u32>>, big_endian: bool) {
    let (bytes, pad) = if big_endian {
        dfa.to_bytes_big_endian()
    } else {
        dfa.to_bytes_little_endian()
    };
    std::fs::write(out.join(name), &bytes[pad..]).expect("OUT_DIR is writable");
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
    let mut forward = String::new();
    let mut reverse = String::new();
    for (i, pattern) in patterns.iter().enumerate() {
        // A rule whose DFAs would be large (a long counted repetition of letters, which an
        // unanchored DFA must track from every start at once) keeps the regex crate's lazy DFA.
        let built = Regex::builder()
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
            .filter(|re| {
                re.forward().memory_usage() + re.reverse().memory_usage() <= EMBEDDED_LIMIT
            });
        match built {
            Some(re) => {
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
                writeln!(forward, "    Some(aligned!(\"redact-fwd-{i}.dfa\")),").unwrap();
                writeln!(reverse, "    Some(aligned!(\"redact-rev-{i}.dfa\")),").unwrap();
            }
            None => {
                writeln!(forward, "    None,").unwrap();
                writeln!(reverse, "    None,").unwrap();
            }
        }
    }
    let n = patterns.len();
    writeln!(rust, "/// Forward DFAs of the rules' leftmost-first regexes; `None` for a rule left to the regex crate.").unwrap();
    writeln!(
        rust,
        "pub static FORWARD: [Option<&Aligned<[u8]>>; {n}] = [\n{forward}];"
    )
    .unwrap();
    writeln!(
        rust,
        "/// Reverse DFAs of the rules' leftmost-first regexes."
    )
    .unwrap();
    writeln!(
        rust,
        "pub static REVERSE: [Option<&Aligned<[u8]>>; {n}] = [\n{reverse}];"
    )
    .unwrap();
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
