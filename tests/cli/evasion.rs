//! The redaction evasion corpus (`tests/fixtures/evasion/`): realistic agent transcripts whose
//! fake secrets are encoded (base64, URL encoding, hex), broken up (zero-width characters, split
//! across JSON strings, string concatenations or lines), nested in JSON strings, or in shapes
//! without a recognisable name (a PEM body without its header, a bare AWS secret key). Each is
//! written through the binary and read back with `git cat-file`: no secret of `secrets.tsv` may
//! be recoverable from what is stored, in any of the encodings a reader could undo; a transcript
//! named `clean-*` holds look-alikes that are no secret and must be stored byte for byte
//! (docs/security.md, guarantee 9). The `gen-*` transcripts, written by `generate.py` beside
//! them, put each placement of issue 56 (base64 after a JSON escape, provider tokens, command-line
//! and config passwords) in each agent format: Claude Code and Codex JSONL, Gemini CLI and
//! OpenCode JSON documents; an encoded placement lists its decoded secret. `tests/secrets_oracle.sh` runs detect-secrets over the same
//! corpus.

use std::collections::BTreeMap;
use std::path::PathBuf;

use data_encoding::{BASE64, BASE64URL_NOPAD, HEXLOWER, HEXUPPER};
use serde_json::Value;

use crate::env::{assert_jsonl, text, Store, TestEnv};

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evasion")
}

/// `secrets.tsv`: each transcript's secrets.
fn planted() -> BTreeMap<String, Vec<String>> {
    let tsv = std::fs::read_to_string(corpus_dir().join("secrets.tsv")).unwrap();
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in tsv.lines().filter(|l| !l.starts_with('#')) {
        let (file, secret) = line.split_once('\t').unwrap();
        map.entry(file.to_owned())
            .or_default()
            .push(secret.to_owned());
    }
    map
}

/// Writes `file` of the corpus as a checkpoint; returns the stored transcript.
fn store(env: &TestEnv, file: &str) -> Vec<u8> {
    let path = corpus_dir().join(file);
    let out = env.write(Store::Refs, "evasion").transcript(&path).run();
    assert_eq!(out.status.code(), Some(0), "{file}: {}", text(&out.stderr));
    let id = text(&out.stdout).trim().to_owned();
    let r = crate::env::checkpoint_ref(&id);
    env.git_bytes(&["cat-file", "blob", &format!("{r}:0/full.jsonl")])
}

/// The JSON documents of a stored transcript: each line of a JSONL one, or the whole of a
/// JSON document (Gemini CLI's, OpenCode's), each checked to parse.
fn documents(stored: &[u8], name: &str) -> Vec<Value> {
    if name.ends_with(".jsonl") {
        assert_jsonl(stored, name);
        let lines = stored.split(|&b| b == b'\n').filter(|l| !l.is_empty());
        return lines.map(|l| serde_json::from_slice(l).unwrap()).collect();
    }
    let doc = serde_json::from_slice(stored)
        .unwrap_or_else(|e| panic!("{name}: the stored document does not parse: {e}"));
    vec![doc]
}

/// The texts a reader gets from `stored` without knowing any secret: the bytes; every JSON
/// string of every document decoded, nested JSON strings decoded in turn, joined with nothing
/// between them (a secret split across strings reads whole) and with newlines.
fn readings(stored: &[u8], name: &str) -> Vec<Vec<u8>> {
    fn strings(v: &Value, depth: usize, out: &mut Vec<String>) {
        match v {
            Value::String(s) => {
                out.push(s.clone());
                if depth > 0 {
                    if let Ok(inner) = serde_json::from_str::<Value>(s) {
                        strings(&inner, depth - 1, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| strings(v, depth, out)),
            Value::Object(m) => m.values().for_each(|v| strings(v, depth, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    for doc in documents(stored, name) {
        strings(&doc, 4, &mut all);
    }
    let mut out = vec![stored.to_vec(), all.concat().into_bytes()];
    out.push(all.join("\n").into_bytes());
    // Without what splits a token: string concatenations, quotes, white space and the
    // characters that show nothing.
    let squeezed: Vec<Vec<u8>> = out
        .iter()
        .map(|t| {
            let t = String::from_utf8_lossy(t);
            let t = regex::Regex::new(r#"["'`]\s*[+.]?\s*["'`]|\\[nrt]|\s|["'`]"#)
                .unwrap()
                .replace_all(&t, "");
            t.chars()
                .filter(|c| !invisible(*c))
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    out.extend(squeezed);
    out
}

fn invisible(c: char) -> bool {
    matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// `secret` and what it becomes in each encoding a reader can undo, twice over: base64 (at
/// each of the three alignments inside a longer text, standard and URL-safe), hex (lower,
/// upper, `\x` escapes) and URL encoding (every byte, or only what must be).
fn spellings(secret: &[u8]) -> Vec<Vec<u8>> {
    fn once(s: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for pad in 0..3 {
            let mut padded = vec![b'.'; pad];
            padded.extend_from_slice(s);
            padded.extend_from_slice(b"..");
            for enc in [BASE64.encode(&padded), BASE64URL_NOPAD.encode(&padded)] {
                // The characters that depend on the secret's bytes only.
                let from = (pad * 4).div_ceil(3).next_multiple_of(4);
                let to = ((pad + s.len()) * 4 / 3) / 4 * 4;
                if to > from {
                    out.push(enc.as_bytes()[from..to].to_vec());
                }
            }
        }
        out.push(HEXLOWER.encode(s).into_bytes());
        out.push(HEXUPPER.encode(s).into_bytes());
        out.push(
            s.iter()
                .flat_map(|b| format!("\\x{b:02x}").into_bytes())
                .collect(),
        );
        out.push(
            s.iter()
                .flat_map(|b| format!("%{b:02X}").into_bytes())
                .collect(),
        );
        out.push(
            percent_encoding::percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                .to_string()
                .into_bytes(),
        );
        out
    }
    let mut all = vec![secret.to_vec()];
    for first in once(secret) {
        all.extend(once(&first));
        all.push(first);
    }
    all
}

fn find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn no_secret_of_the_evasion_corpus_is_stored_recoverable() {
    let env = TestEnv::new();
    let planted = planted();
    let mut files = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !(name.ends_with(".jsonl") || name.ends_with(".json")) {
            continue;
        }
        files += 1;
        let stored = store(&env, &name);
        let original = std::fs::read(corpus_dir().join(&name)).unwrap();
        if name.starts_with("clean-") {
            if stored != original {
                failures.push(format!("{name}: changed:\n{}", text(&stored)));
            }
            continue;
        }
        let secrets = planted
            .get(&name)
            .unwrap_or_else(|| panic!("{name} is in secrets.tsv"));
        let readings = readings(&stored, &name);
        for secret in secrets {
            if let Some(spelling) = spellings(secret.as_bytes())
                .into_iter()
                .find(|s| s.len() >= 12 && readings.iter().any(|r| find(r, s)))
            {
                failures.push(format!(
                    "{name}: {secret} is recoverable as {}:\n{}",
                    text(&spelling),
                    text(&stored)
                ));
            }
        }
    }
    assert!(files >= 30, "{files} transcripts");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
