//! The redactor's behaviour, and the compiled rules against the regex crate's.

use std::time::{Duration, Instant};

use serde_json::Value;

use regex_automata::nfa::thompson::pikevm::PikeVM;
use regex_automata::{Anchored, Input};

use super::compiled::{capturer, embedded, finder, written_capturer, Dfa};
use super::matching::{
    builtin_secrets_of, replace_ranges, replace_ranges_placing, replace_secrets, Triggers,
    REFERENCE,
};
use super::rules::BUILTIN;
use super::*;

fn on() -> Redactor {
    Redactor::new(&RedactionSettings::default()).unwrap()
}

fn red(s: &str) -> (String, usize) {
    on().redact_str(s)
}

/// What the redactor makes of `input` with the regex crate's rules.
fn reference(r: &Redactor, input: &[u8]) -> (Vec<u8>, usize) {
    REFERENCE.set(true);
    let out = r.redact_bytes(input);
    REFERENCE.set(false);
    out
}

/// Asserts the redactor's output on `input` is byte-identical to the reference's, and so is
/// every built-in rule's own pass (matches, `value` groups, replacements).
fn assert_same_as_reference(input: &[u8]) {
    let r = Redactor::builtin();
    assert_eq!(
        r.redact_bytes(input),
        reference(&r, input),
        "{:?}",
        String::from_utf8_lossy(input)
    );
    for (i, rule) in BUILTIN.iter().enumerate() {
        if let Some(gate) = rule.gate {
            assert!(
                !rule.regex().is_match(input) || gate(input),
                "the gate of rule {i} fails {:?}",
                String::from_utf8_lossy(input)
            );
        }
        let (mut new, mut old) = (0, 0);
        let want = replace_secrets(
            rule.regex(),
            rule.replace,
            rule.token_start,
            input,
            &mut old,
        )
        .filter(|_| old > 0);
        assert_eq!(
            replace_builtin(i, input, &mut new),
            want,
            "rule {i} on {:?}",
            String::from_utf8_lossy(input)
        );
        assert_eq!(new, old, "rule {i}");
        if let Some(f) = finder(i) {
            let spans: Vec<_> = f.find_iter(input, 0..input.len()).collect();
            let want: Vec<_> = rule.regex().find_iter(input).map(|m| m.range()).collect();
            assert_eq!(spans, want, "rule {i}");
        }
    }
}

/// `text` with the secrets among the matches of built-in rule `i` replaced, counted in
/// `count`; `None` when nothing was replaced: what [`replace_secrets`] with the rule's regex
/// gives.
fn replace_builtin(i: usize, text: &[u8], count: &mut usize) -> Option<Vec<u8>> {
    let secrets = builtin_secrets_of(i, text, &text.to_ascii_lowercase());
    *count += secrets.len();
    replace_ranges(text, &secrets)
}

/// One sample per built-in rule, in rule order, that the rule itself redacts.
const SAMPLE_PER_RULE: [&str; 29] = [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk\n",
    "use AKIAIOSFODNN7EXAMPLE here",
    "token ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
    "github_pat_A1b_A1b_A1b_A1b_A1b_A1b_A1b_A1b_",
    "glpat-abcdefghij0123456789XY",
    "use xoxb-1234567890-abcdefghij now",
    "xapp-1-A0123456789-1234567890123-abcdef0123456789",
    "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMgACJXsicGVy",
    "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH",
    "TWILIO=SK0123456789abcdef0123456789abcdef",
    "sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "git clone https://alice:s3cretpass@example.com/r.git",
    r#"{"api_key": "abcd1234"}"#,
    r#"{"m":"{\"password\": \"hunter22\"}"}"#,
    "curl -H 'Authorization: token 0123abcdXYZ'",
    "send Bearer Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1 along",
    "Private-Lines: 2\nAAAAgQCx7Zb3\nAAAAQQD4Lk9v\nPrivate-MAC: 0a1b",
    "curl -u admin:Zx8Qv3Lr9T https://example.com",
    "echo Zx8Qv3Lr9T | gpg --batch --passphrase-fd 0 -c notes.txt",
    "db:\n  user: app\n  pass: Zx8Qv3Lr9T\n",
    "Server=db;Password=S3cr3t!x;",
    "DB_PASSWORD=hunter22",
    "MY_SIGNING_KEY=Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1",
];

#[test]
fn every_builtin_rule_fires_on_its_sample() {
    for (i, sample) in SAMPLE_PER_RULE.iter().enumerate() {
        let text = sample.as_bytes();
        let mut triggers = Triggers::new(text);
        assert!(triggers.any(BUILTIN[i].triggers), "rule {i}: {sample}");
        let mut n = 0;
        let out = replace_builtin(i, text, &mut n)
            .unwrap_or_else(|| panic!("rule {i} does not fire on {sample}"));
        assert!(n > 0, "rule {i}");
        assert!(
            memchr::memmem::find(&out, PLACEHOLDER.as_bytes()).is_some(),
            "rule {i}"
        );
        let (redacted, count) = red(sample);
        assert!(
            count > 0 && redacted.contains(PLACEHOLDER),
            "rule {i}: {sample}"
        );
        assert_same_as_reference(text);
    }
}

/// The triggers follow a replacement: one the placeholder makes with the bytes beside it
/// (`REDACTED` then `api`: `dapi`) is found, one only the replaced secret held is taken as held
/// still, and one looked up only after is looked for in the new text.
#[test]
fn triggers_follow_a_replacement() {
    let text = b"key=abcapi x";
    let mut triggers = Triggers::new(text);
    assert!(!triggers.any(&["dapi"]));
    assert!(triggers.any(&["abc"]));
    let secrets = [std::ops::Range { start: 4, end: 7 }];
    let mut placed = Vec::new();
    let replaced = replace_ranges_placing(text, &secrets, |p| placed.push(p)).unwrap();
    assert_eq!(replaced, b"key=REDACTEDapi x");
    assert_eq!(&replaced[placed[0].clone()], b"REDACTED");
    triggers.replaced(&replaced, &placed);
    assert!(triggers.any(&["dapi"]));
    assert!(triggers.any(&["abc"]));
    assert!(triggers.any(&["i x"]) && !triggers.any(&["bca"]));
    assert_eq!(triggers.lower(), b"key=redactedapi x");
}

/// Each rule's matches are found where a false start comes just before them: the samples with
/// a letter of the match's first bytes put again in front of it (`AAKIA…`, `gghp_…`,
/// `github_patgithub_pat_…`), twice in a row, and run together.
#[test]
fn a_match_right_after_a_false_start_is_found() {
    for sample in SAMPLE_PER_RULE {
        for k in 1..=sample.len().min(12) {
            for (i, _) in sample
                .char_indices()
                .filter(|&(i, _)| i + k <= sample.len())
            {
                let Some(head) = sample.get(i..i + k) else {
                    continue;
                };
                let text = format!("{}{head}{}", &sample[..i], &sample[i..]);
                assert_same_as_reference(text.as_bytes());
            }
        }
        assert_same_as_reference(format!("{sample}{sample}").as_bytes());
    }
}

/// Every rule's matches in its sample, alone and between non-ASCII letters, have the same
/// `value` group whichever engine reads them: a match whose bytes and neighbours are ASCII is
/// read by the rule compiled with Unicode off, any other by the rule as written.
#[test]
fn ascii_matches_are_read_with_unicode_off_and_the_same_groups() {
    let read = |vm: &PikeVM, text: &[u8], whole: &std::ops::Range<usize>| {
        let (mut cache, mut caps) = (vm.create_cache(), vm.create_captures());
        let input = Input::new(text)
            .range(whole.clone())
            .anchored(Anchored::Yes);
        vm.search(&mut cache, &input, &mut caps);
        let value = caps.get_group_by_name("value").map(|v| v.range());
        (caps.get_match().map(|m| m.range()), value)
    };
    let mut both = [0, 0];
    for (i, sample) in SAMPLE_PER_RULE.iter().enumerate() {
        let Some(finder) = finder(i) else {
            continue;
        };
        for text in [sample.to_string(), format!("\u{e9}{sample}\u{e9}")] {
            let text = text.as_bytes();
            for whole in finder.find_iter(text, 0..text.len()) {
                let chosen = capturer(i, text, &whole);
                let written = written_capturer(i);
                assert_eq!(
                    read(chosen, text, &whole),
                    read(written, text, &whole),
                    "rule {i}: {sample}"
                );
                let around = whole.start.saturating_sub(1)..(whole.end + 1).min(text.len());
                let ascii = text[around].is_ascii();
                assert_eq!(!std::ptr::eq(chosen, written), ascii, "rule {i}: {sample}");
                both[usize::from(ascii)] += 1;
            }
        }
    }
    assert!(both[0] > 0 && both[1] > 0, "{both:?}");
}

#[test]
fn every_compiled_dfa_is_valid() {
    let dfas = embedded::FINDERS.iter().flat_map(|f| match f {
        embedded::Finder::Prefixed { dfa, .. } => vec![dfa],
        embedded::Finder::Unanchored {
            forward, reverse, ..
        } => vec![forward, reverse],
        embedded::Finder::None => vec![],
    });
    for dfa in dfas {
        Dfa::from_bytes(&dfa.bytes).unwrap();
    }
    let compiled = embedded::FINDERS.iter();
    assert!(
        compiled
            .filter(|f| !matches!(f, embedded::Finder::None))
            .count()
            >= 23
    );
}

/// The rules a transcript triggers almost always (a `key`, `secret` or `token` anywhere in it)
/// have DFAs compiled by `build.rs`: compiling the regex crate's regex of the key-assignment
/// rule was 2.4 M instructions of a 118 KB `write`, more than searching its text.
#[test]
fn the_rules_of_common_words_are_compiled_at_build_time() {
    for (i, rule) in BUILTIN.iter().enumerate() {
        let common = rule
            .triggers
            .iter()
            .any(|t| ["key", "secret", "token", "password"].contains(t));
        if common {
            assert!(
                !matches!(embedded::FINDERS[i], embedded::Finder::None),
                "rule {i} ({:?}) is compiled at run time",
                rule.triggers
            );
        }
    }
}

#[test]
fn rules_whose_value_is_the_match_say_so() {
    for (i, rule) in BUILTIN.iter().enumerate() {
        if !rule.value_is_match {
            continue;
        }
        let pattern = (rule.pattern)();
        assert!(
            pattern.starts_with("(?P<value>") && pattern.ends_with(r")(?-u:\b)"),
            "rule {i}: {pattern}"
        );
        for text in trigger_corpus() {
            for c in rule.regex().captures_iter(text.as_bytes()) {
                assert_eq!(c.get(0).unwrap().range(), c.name("value").unwrap().range());
            }
        }
    }
}

#[test]
fn the_compiled_rules_redact_every_test_text_as_the_regex_crate_does() {
    for text in trigger_corpus().iter().chain(
        SAMPLE_PER_RULE
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .iter(),
    ) {
        assert_same_as_reference(text.as_bytes());
        let line = serde_json::json!({ "c": text }).to_string();
        assert_same_as_reference(line.as_bytes());
        assert_same_as_reference(line.replace('A', "\\u0041").as_bytes());
    }
}

/// Pieces of text around which the rules' matches start, end and fail.
const FRAGMENTS: &[&str] = &[
    " ",
    "\n",
    "\\n",
    "\\t",
    "\r\n",
    "\"",
    "\\\"",
    "'",
    "\\\\",
    ":",
    "=",
    ";",
    "@",
    "/",
    "://",
    "_",
    "-",
    ".",
    ",",
    "key",
    "KEY",
    "token",
    "secret",
    "password",
    "pwd",
    "auth",
    "Authorization",
    "bearer ",
    "Basic ",
    "api_key",
    "\"api_key\": \"",
    "\\\"password\\\":\\\"",
    "x",
    "abcd",
    "Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1",
    "aaaaaaaaaaaaaaaaaaaaaaaa",
    "REDACTED",
    "${X}",
    "https://u",
    "postgres://app:p",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "MIIEpAIBAAKCAQEA",
    "Proc-Type: 4,ENCRYPTED",
    "ghp_",
    "AKIA",
    "a1B2a1B2a1B2a1B2a1B2",
    "sk-",
    "eyJhbGciOiJIUzI1NiJ9",
    ".eyJ",
    "xoxb-",
    "glpat-",
    "npm_",
    "\u{e9}",
    "\u{212A}",
    "\u{17F}",
    "\u{2003}",
    "\\u0041",
    "\\/",
    "{",
    "}",
    "[",
    "]",
    "hooks.slack.com/services/",
    "sk_live_",
    "Pwd = ",
    "Server=db;",
    "github_pat_",
    "pypi-AgE",
    "AIza",
    "glrt-",
    "hf_",
    "SG.",
    "SK",
    "1234567:AA",
    "M",
    "-",
    "_",
    "Private-Lines: ",
    "echo ",
    "A",
    "g",
    "s",
    ",",
    ";",
    "#",
    "'",
    "\t",
    "MY_SIGNING_KEY=",
    "password: ",
];

proptest::proptest! {
    /// Texts made of the pieces the rules care about redact byte-identically to the regex
    /// crate's rules, and so does each rule's own pass. Single letters make a literal a match
    /// starts with begin one byte before the match (`AAKIA…`, `gghp_…`); separators end the
    /// runs of bytes a rule's matches may hold, where it is searched alone.
    #[test]
    fn compiled_rules_match_the_regex_crate(
        pieces in proptest::collection::vec(proptest::sample::select(FRAGMENTS), 1..24),
        raw in proptest::collection::vec(proptest::num::u8::ANY, 0..4),
    ) {
        let mut text = pieces.concat().into_bytes();
        text.extend_from_slice(&raw);
        assert_same_as_reference(&text);
    }
}

/// The redacted bytes of every file of `$REDACT_CORPUS` (real transcripts) are the same as
/// the regex crate's rules make of them. `REDACT_CORPUS=DIR cargo test --release --lib
/// redact -- --ignored`.
#[test]
#[ignore = "needs REDACT_CORPUS, a folder of transcripts"]
fn corpus_is_redacted_as_by_the_regex_crate() {
    let dir = std::env::var("REDACT_CORPUS").expect("REDACT_CORPUS names a folder");
    let r = Redactor::builtin();
    let mut files = 0;
    let mut secrets = 0;
    let (mut with, mut without, mut hidden) = (Duration::ZERO, Duration::ZERO, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry_path = entry.unwrap().path();
        let text = std::fs::read(&entry_path).unwrap();
        let started = Instant::now();
        let ours = r.redact_bytes(&text);
        with += started.elapsed();
        super::decode::WITHOUT_VIEWS.set(true);
        let started = Instant::now();
        let plain = r.redact_bytes(&text);
        without += started.elapsed();
        super::decode::WITHOUT_VIEWS.set(false);
        if ours != plain {
            // What the views change in real transcripts, to be read: secrets, or look-alikes.
            println!(
                "{entry_path:?}: {} secrets, {} without views",
                ours.1, plain.1
            );
        }
        hidden += ours.1.saturating_sub(plain.1);
        assert!(ours == reference(&r, &text), "file {files}");
        for rule in BUILTIN.iter().filter(|r| r.gate.is_some()) {
            assert!(!rule.regex().is_match(&text) || (rule.gate.unwrap())(&text));
        }
        secrets += ours.1;
        files += 1;
    }
    println!("{files} files, {secrets} secrets ({hidden} only views show), all byte-identical");
    println!(
        "redaction {with:?}, without the decoded and joined views {without:?}: {:.2}x",
        with.as_secs_f64() / without.as_secs_f64()
    );
}

fn assert_json_lines(s: &str) {
    for line in s.lines() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("not JSON after redaction: {line}: {e}"));
    }
}

/// Asserts `input` redacts to `want` with `n` replacements and every line stays JSON.
fn assert_jsonl_redacts(input: &str, want: &str, n: usize) {
    let (out, count) = red(input);
    assert_eq!(out, want, "{input}");
    assert_eq!(count, n, "{input}");
    assert_json_lines(&out);
}

#[test]
fn aws_keys_in_a_jsonl_tool_result() {
    let line = r#"{"type":"tool_result","content":"export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nexport AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#;
    assert_jsonl_redacts(
        line,
        r#"{"type":"tool_result","content":"export AWS_ACCESS_KEY_ID=REDACTED\nexport AWS_SECRET_ACCESS_KEY=REDACTED"}"#,
        2,
    );
}

#[test]
fn password_inside_an_escaped_json_string() {
    let line = r#"{"message":"{\"password\": \"hunter22\", \"user\": \"bob\"}"}"#;
    assert_jsonl_redacts(
        line,
        r#"{"message":"{\"password\": \"REDACTED\", \"user\": \"bob\"}"}"#,
        1,
    );
}

#[test]
fn pem_block_with_escaped_newlines() {
    let line = r#"{"content":"key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc==\n-----END RSA PRIVATE KEY-----\nend"}"#;
    assert_jsonl_redacts(line, r#"{"content":"key:\nREDACTED\nend"}"#, 1);
    let real = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n-----END OPENSSH PRIVATE KEY-----\n";
    assert_eq!(red(real), ("REDACTED\n".to_owned(), 1));
    let split = "{\"a\":\"-----BEGIN RSA PRIVATE KEY-----\"}\n{\"b\":\"keep me\"}\n{\"c\":\"-----END RSA PRIVATE KEY-----\"}\n";
    assert_eq!(
        red(split),
        (split.to_owned(), 0),
        "never merges transcript lines"
    );
}

#[test]
fn provider_tokens() {
    let gh = format!("token ghp_{}", "a1B2".repeat(9));
    assert_eq!(red(&gh), ("token REDACTED".to_owned(), 1));
    let pat = format!("github_pat_{}", "A1b_".repeat(8));
    assert_eq!(red(&pat).0, "REDACTED");
    assert_eq!(red("glpat-abcdefghij0123456789XY").0, "REDACTED");
    assert_eq!(
        red("use xoxb-1234567890-abcdefghij now").0,
        "use REDACTED now"
    );
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    assert_eq!(red(&format!("Bearer {jwt}")).0, "Bearer REDACTED");
}

#[test]
fn assignments_keep_key_and_separator() {
    assert_eq!(red("DB_PASSWORD=hunter22").0, "DB_PASSWORD=REDACTED");
    assert_eq!(red("api_key: 'abcd1234efgh'").0, "api_key: 'REDACTED'");
    assert_eq!(
        red("Server=db;User Id=sa;Password=S3cr3t!x;").0,
        "Server=db;User Id=sa;Password=REDACTED;"
    );
    assert_eq!(
        red("git clone https://alice:s3cretpass@example.com/r.git").0,
        "git clone https://alice:REDACTED@example.com/r.git"
    );
}

#[test]
fn high_entropy_key_values() {
    assert_eq!(
        red("MY_SIGNING_KEY=Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1").0,
        "MY_SIGNING_KEY=REDACTED"
    );
    let low = "MONKEY_KEY=aaaaaaaaaaaaaaaaaaaaaaaa";
    assert_eq!(red(low), (low.to_owned(), 0));
}

#[test]
fn placeholders_and_prose_are_left_alone() {
    for s in [
        "password=REDACTED",
        "password=${DB_PASSWORD}",
        "password: <your password>",
        "token=***",
        "password=changeme",
        "let token_count = 5;",
        "the password_hint field",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "see src/auth/token_store.rs",
        "Plain prose about keys and secrets.",
    ] {
        assert_eq!(red(s), (s.to_owned(), 0), "{s}");
    }
}

#[test]
fn binary_bytes_unchanged_and_idempotent() {
    let bin: Vec<u8> = (0u8..=255).chain([0xff, 0xfe, 0x00]).collect();
    assert_eq!(on().redact_bytes(&bin), (bin.clone(), 0));
    let (once, n) = red("DB_PASSWORD=hunter22 AKIAIOSFODNN7EXAMPLE");
    assert_eq!(n, 2);
    assert_eq!(red(&once), (once.clone(), 0));
}

#[test]
fn disabled_and_user_rules() {
    let off = Redactor::new(&RedactionSettings {
        enabled: Some(false),
        rules: vec![],
    })
    .unwrap();
    assert!(!off.is_enabled());
    assert_eq!(off.redact_str("DB_PASSWORD=hunter22").1, 0);
    let custom = Redactor::new(&RedactionSettings {
        enabled: None,
        rules: vec![UserRule {
            name: "ticket".into(),
            pattern: r"ACME-\d{6}".into(),
        }],
    })
    .unwrap();
    assert_eq!(custom.redact_str("see ACME-123456").0, "see REDACTED");
    let bad = Redactor::new(&RedactionSettings {
        enabled: None,
        rules: vec![UserRule {
            name: "broken".into(),
            pattern: "(".into(),
        }],
    });
    assert!(matches!(bad, Err(RedactError::InvalidRule { name, .. }) if name == "broken"));
}

#[test]
fn tokens_right_after_an_escaped_newline() {
    let gh = format!("ghp_{}", "a1B2".repeat(9));
    let sk = "sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY";
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    for secret in [
        gh.as_str(),
        sk,
        jwt,
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-1234567890-abcdefghij",
    ] {
        for escape in [r"\n", r"\t", r"\r\n"] {
            let line = format!(r#"{{"content":"token:{escape}{secret}{escape}done"}}"#);
            assert_jsonl_redacts(
                &line,
                &format!(r#"{{"content":"token:{escape}REDACTED{escape}done"}}"#),
                1,
            );
        }
    }
    let line = r#"{"content":"cat .env\npassword=hunter22\nDB=x"}"#;
    assert_eq!(
        red(line),
        (
            r#"{"content":"cat .env\npassword=REDACTED\nDB=x"}"#.to_owned(),
            1
        )
    );
}

#[test]
fn credential_members_of_json_objects() {
    for (key, value) in [
        ("api_key", "abcd1234efgh5678"),
        ("password", "correct horse battery staple"),
        ("client_secret", "s3cr3t-v@lue"),
        ("access_token", "ya29.a0AfH6SMBx"),
        (
            "aws_secret_access_key",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        ("apiKey", "k-1"),
        ("GITHUB_TOKEN", "has \\\"quotes\\\" and \\\\ inside"),
    ] {
        let raw = format!(r#"{{"type":"tool_use","input":{{"{key}": "{value}", "user": "bob"}}}}"#);
        assert_jsonl_redacts(
            &raw,
            &format!(r#"{{"type":"tool_use","input":{{"{key}": "REDACTED", "user": "bob"}}}}"#),
            1,
        );
    }
    let bearer = r#"{"headers":{"Authorization": "Bearer abc.DEF-123_xyz"}}"#;
    assert_eq!(
        red(bearer),
        (
            r#"{"headers":{"Authorization": "Bearer REDACTED"}}"#.to_owned(),
            1
        )
    );
    // The same members inside a transcript string: quotes are escaped.
    let escaped = r#"{"message":"{\"api_key\": \"abc def\", \"password\":\"p\\\"w\\\\d\", \"Authorization\": \"Basic dXNlcjpwYXNz\", \"n\": 1}"}"#;
    assert_jsonl_redacts(
        escaped,
        r#"{"message":"{\"api_key\": \"REDACTED\", \"password\":\"REDACTED\", \"Authorization\": \"Basic REDACTED\", \"n\": 1}"}"#,
        3,
    );
    let out = red(escaped).0;
    let inner: Value = serde_json::from_str(
        serde_json::from_str::<Value>(&out).unwrap()["message"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(inner["password"], "REDACTED");
}

#[test]
fn credential_members_of_json_values() {
    let mut v = serde_json::json!({
        "outcome": "configured",
        "config": {"api_key": "abcd1234", "password": "two words", "Authorization": "Bearer tok3n.value", "region": "eu"},
        "list": [{"client_secret": "x1"}, {"token": "REDACTED"}, {"access_token": 5}]
    });
    assert_eq!(on().redact_json(&mut v), 4);
    assert_eq!(v["config"]["api_key"], "REDACTED");
    assert_eq!(v["config"]["password"], "REDACTED");
    assert_eq!(v["config"]["Authorization"], "Bearer REDACTED");
    assert_eq!(v["config"]["region"], "eu");
    assert_eq!(v["list"][0]["client_secret"], "REDACTED");
    assert_eq!(v["list"][2]["access_token"], 5);
}

#[test]
fn unterminated_private_keys() {
    let line = r#"{"content":"head id_rsa:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\nAAAABG5vbmU=\n"}"#;
    assert_jsonl_redacts(line, r#"{"content":"head id_rsa:\nREDACTED"}"#, 1);
    // Escaped quotes inside the string are consumed whole, the JSON stays valid.
    let nested = r#"{"m":"{\"k\": \"-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIB\"}"}
{"next":"line"}"#;
    assert_jsonl_redacts(
        nested,
        "{\"m\":\"{\\\"k\\\": \\\"REDACTED\"}\n{\"next\":\"line\"}",
        1,
    );
    // Real lines: the base64 lines go, the prose after them stays.
    let text = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk\nAwEHoUQDQgAE\nthat was the key\n";
    assert_eq!(red(text), ("REDACTED\nthat was the key\n".to_owned(), 1));
    // The transcript lines after an unterminated key are never merged into it.
    let lines =
        "{\"a\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA\"}\n{\"b\":\"keep me\"}\n";
    assert_jsonl_redacts(lines, "{\"a\":\"REDACTED\"}\n{\"b\":\"keep me\"}\n", 1);
    let yaml = "tls:\n  key: |\n    -----BEGIN RSA PRIVATE KEY-----\n    MIIEpAIBAAKCAQEA\n    -----END RSA PRIVATE KEY-----\n  port: 443\n";
    assert_eq!(
        red(yaml),
        ("tls:\n  key: |\n    REDACTED\n  port: 443\n".to_owned(), 1)
    );
    let encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\nMIIEpAIBAAKCAQEA\nabcd==\n\nthe rest\n";
    assert_eq!(red(encrypted), ("REDACTED\n\nthe rest\n".to_owned(), 1));
    let pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0\n-----END PGP PRIVATE KEY BLOCK-----";
    assert_eq!(red(pgp), ("REDACTED".to_owned(), 1));
}

#[test]
fn more_provider_tokens() {
    for token in [
        "xoxp-1234567890-0987654321-abcdefABCDEF",
        "xapp-1-A0123456789-1234567890123-abcdef0123456789",
        "glpat-xY9_zK3-wQ7vN1mB5cL8",
        "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "sk-ant-api03-Xy7Qw9Er3Tz5Ui1Op8As2Df6Gh4Jk0LzXcVbNm",
        "sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "ASIAY34FZKBOKMUTVV7A",
        "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMgACJXsicGVybWlzc2lvbnMiOiAidXNlciJ9",
    ] {
        let s = format!("use {token} here");
        assert_eq!(red(&s), ("use REDACTED here".to_owned(), 1), "{token}");
    }
    assert_eq!(
        red("curl -H 'Authorization: token 0123abcdXYZ' https://x").0,
        "curl -H 'Authorization: token REDACTED' https://x"
    );
    assert_eq!(
        red("send Bearer Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1 along").0,
        "send Bearer REDACTED along"
    );
    assert_eq!(
        red("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX").0,
        "https://hooks.slack.com/services/REDACTED"
    );
    for (url, want) in [
        (
            "postgres://app:p%40ss%3Aw0rd@db.internal:5432/app",
            "postgres://app:REDACTED@db.internal:5432/app",
        ),
        (
            "https://alice%40corp.com:s3cret@git.corp.com/r.git",
            "https://alice%40corp.com:REDACTED@git.corp.com/r.git",
        ),
        (
            "redis://:hunter22@cache:6379",
            "redis://:REDACTED@cache:6379",
        ),
    ] {
        assert_eq!(red(url), (want.to_owned(), 1), "{url}");
    }
}

#[test]
fn ordinary_code_is_not_a_secret() {
    for s in [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        r#"{"content":"HEAD is now at 3f786850e387550fdab836ed7e6dc881de23001b\n9fceb02d0ae598e95dc970b74767f19372d61af8"}"#,
        r#"{"request_id":"123e4567-e89b-12d3-a456-426614174000","session":"sess-1"}"#,
        "the logo is data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg== in prose",
        "fn verify(password_hash: &str) -> bool",
        r#"{"password_hash": "$argon2id$v=19$m=65536", "token_count": 12, "max_tokens": 1024}"#,
        r#"{"usage":{"input_tokens":100,"output_tokens":20},"token_type":"bearer"}"#,
        r#"{"password": "", "api_key": null, "secret": "${SECRET}", "token": "<token>"}"#,
        "Bearer tokens go in the Authorization header; use bearer authentication.",
        "-----BEGIN RSA PRIVATE KEY-----",
        "see the task-runner-configuration-loader module and skip-the-long-identifier-here",
        "pip install sk-learn-pipeline-configuration-loader",
        "https://example.com:8443/path and user@example.com",
        "glued to a word: xAKIAIOSFODNN7EXAMPLE, my_ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
        r#"{"content":"line one\nnext line\tindented"}"#,
    ] {
        assert_eq!(red(s), (s.to_owned(), 0), "{s}");
    }
}

#[test]
fn a_secret_several_rules_match_counts_once() {
    let gh = format!("ghp_{}", "a1B2".repeat(9));
    for (input, want) in [
        (
            format!(r#"{{"password": "{gh}"}}"#),
            r#"{"password": "REDACTED"}"#.to_owned(),
        ),
        (
            "curl -H 'Authorization: Bearer Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1'".to_owned(),
            "curl -H 'Authorization: Bearer REDACTED'".to_owned(),
        ),
        (
            r#"{"m":"{\"api_key\": \"sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY\"}"}"#.to_owned(),
            r#"{"m":"{\"api_key\": \"REDACTED\"}"}"#.to_owned(),
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\r\nMIIEpAIBAAKCAQEA\r\n-----END RSA PRIVATE KEY-----\r\n"
                .to_owned(),
            "REDACTED\r\n".to_owned(),
        ),
        (
            r#"{"c":"x\u003dAKIAIOSFODNN7EXAMPLE"}"#.to_owned(),
            r#"{"c":"x\u003dREDACTED"}"#.to_owned(),
        ),
    ] {
        assert_eq!(red(&input), (want, 1), "{input}");
    }
}

/// Texts each built-in rule matches, several per rule, with every alternative of a rule's
/// words (`pwd`, `auth`, `passwd`, `access-key`...).
const POSITIVES: &[&str] = &[
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc==\n-----END RSA PRIVATE KEY-----",
    r#"{"c":"-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0\n-----END PGP PRIVATE KEY BLOCK-----"}"#,
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n",
    r#"{"c":"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk"}"#,
    "AKIAIOSFODNN7EXAMPLE ASIAY34FZKBOKMUTVV7A",
    "ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2 gho_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
    "ghu_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2 ghs_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
    "ghr_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2 github_pat_A1b_A1b_A1b_A1b_A1b_A1b_A1b_A1b_",
    "glpat-abcdefghij0123456789XY xoxb-1234567890-abcdefghij xoxp-1234567890-0987654321-abc",
    "xapp-1-A0123456789-1234567890123-abcdef0123456789 npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMgACJXsicGVy",
    "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY sk_live_4eC39HqLyjWDarjtT1zdp7dc rk_test_4eC39HqLyjWDarjtT1",
    "sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY sk-ant-api03-Xy7Qw9Er3Tz5Ui1Op8As2Df6Gh4Jk0LzXcVbNm",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "postgres://app:p%40ss@db:5432/app redis://:hunter22@cache:6379 HTTPS://u:pw@host",
    r#"{"api_key": "abcd1234", "password": "two words", "Authorization": "Bearer tok3n.value"}"#,
    r#"{"auth": "x1y2", "db.pwd": "x1y2", "clientSecret": "s", "private-key": "k", "passphrase": "p"}"#,
    r#"{"GITHUB_TOKEN": "t", "accessKey": "a", "apiKey": "k-1", "passwd": "p", "Api-Key": "v"}"#,
    r#"{"m":"{\"api_key\": \"abc def\", \"password\":\"p\\\"w\\\\d\", \"Authorization\": \"Basic dXNlcjpwYXNz\"}"}"#,
    r#"{"m":"{\"x_auth\": \"v\", \"my.pwd\": \"v\", \"secret\": \"v\", \"access_token\": \"v\"}"}"#,
    "curl -H 'Authorization: token 0123abcdXYZ' AUTHORIZATION=\"Bearer abc.def\"",
    "send Bearer Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1 along, bearer\tAb3dEf6hIj9lMn2pQr5t",
    "Server=db;Password=S3cr3t!x; Pwd = abcd; PWD=efgh;",
    "DB_PASSWORD=hunter22 api_key: 'abcd1234efgh' passwd=abcd pwd: wxyz secret=abcd TOKEN=abcd",
    "access-key=abcd accesskey=abcd client_secret=abcd clientSecret=abcd auth_token=abcd",
    "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY APIKEY=abcd",
    "MY_SIGNING_KEY=Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1 secret_value: \"abcdefghij0123456789XY\"",
    "refresh_token = 'Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1' KEYRING='Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1'",
    "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 glrt-aB3dE6gH9jK2mN5pQ8sT",
    "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "hvs.CAESIJ3k9v2Lq8T7pRz1WmXnYbCdEfGh shpat_0123456789abcdef0123456789abcdef dapi0123456789abcdef0123456789abcdef-2",
    "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE",
    "key-0123456789abcdef0123456789abcdef whsec_aB3dE6gH9jK2mN5pQ8sT1vwX4zA7cD0f sq0atp-aB3dE6gH9jK2mN5pQ8sT1v",
    "SK0123456789abcdef0123456789abcdef 123456789:AAaB3dE6gH9jK2mN5pQ8sT1vwX4zA7cD0fG",
    "MTA4NjQ2MDQ0NzAwMjQwOTg3Ng.GhYx1a.aB3dE6gH9jK2mN5pQ8sT1vwX4zA7cD0fG3iJ6l",
    "Private-Lines: 2\nAAAAgQCx7Zb3\nAAAAQQD4Lk9v\nPrivate-MAC: 0a1b",
    "curl -s -u admin:Zx8Qv3Lr9T https://x mysql -u root -pZx8Qv3Lr9T shop",
    "docker login -u bob -p Zx8Qv3Lr9T r.io; sshpass -p 'Zx8Qv3Lr9T' ssh h; x --password=Zx8Qv3Lr9T",
    "machine api.example.com login bob password Zx8Qv3Lr9T AZURE_OPENAI_KEY=0123456789abcdef0123456789abcdef",
    "DB_PASS=Zx8Qv3Lr9T SSHPASS=Zx8Qv3Lr9T",
    "echo 'Zx8Qv3Lr9T' | gpg --batch --yes --passphrase-fd 0 -c notes.txt",
    "db:\n  pass: Zx8Qv3Lr9T\nusers:\n  - pass: '9x!abQ'\n",
    "postgres://app:Zx8/Qv3Lr9T@db:5432/app",
];

/// The corpus of [`POSITIVES`] with case variants and the non-ASCII letters Unicode case
/// folding equates with ASCII ones (the Kelvin sign for `k`, the long s for `s`).
fn trigger_corpus() -> Vec<String> {
    let mut corpus = Vec::new();
    for p in POSITIVES {
        corpus.push(p.to_string());
        corpus.push(p.to_ascii_uppercase());
        corpus.push(p.to_ascii_lowercase());
        corpus.push(
            p.replace(['k', 'K'], "\u{212A}")
                .replace(['s', 'S'], "\u{17F}"),
        );
    }
    corpus
}

#[test]
fn every_match_of_a_builtin_rule_holds_one_of_its_triggers() {
    let corpus = trigger_corpus();
    for (i, rule) in BUILTIN.iter().enumerate() {
        let mut matches = 0;
        for text in &corpus {
            for m in rule.regex().find_iter(text.as_bytes()) {
                matches += 1;
                assert!(
                    Triggers::new(m.as_bytes()).any(rule.triggers),
                    "built-in rule {i} matches {:?}, which holds none of {:?}",
                    String::from_utf8_lossy(m.as_bytes()),
                    rule.triggers
                );
            }
        }
        assert!(matches > 0, "built-in rule {i}: no example in the corpus");
    }
}

#[test]
fn every_sample_is_redacted_plain_and_spelled_with_escapes() {
    for p in POSITIVES {
        let (plain, n) = red(p);
        assert!(n > 0 && plain != *p, "{p}");
        // The sample inside a JSON string with every letter written as a `\u` escape.
        let escaped: String = p
            .chars()
            .map(|c| match c {
                'A'..='Z' | 'a'..='z' => format!("\\u{:04x}", c as u32),
                c => {
                    let s = serde_json::to_string(&c).unwrap();
                    s[1..s.len() - 1].to_owned()
                }
            })
            .collect();
        let line = format!(r#"{{"c":"{escaped}"}}"#);
        let (out, n) = red(&line);
        assert_json_lines(&out);
        // The same as the sample in a JSON string written plainly.
        let plain_line = serde_json::json!({ "c": p }).to_string();
        let (plain_out, plain_n) = red(&plain_line);
        assert_eq!(n, plain_n, "{line} -> {out}");
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            serde_json::from_str::<Value>(&plain_out).unwrap(),
            "{line}"
        );
    }
}

#[test]
fn triggers_are_lowercase_and_plain_prose_triggers_no_rule() {
    for rule in &BUILTIN {
        for t in rule.triggers {
            assert_eq!(*t, t.to_ascii_lowercase());
        }
    }
    let text = "plain prose about a transcript, nothing to hide\n".repeat(100);
    let mut triggers = Triggers::new(text.as_bytes());
    assert!(BUILTIN.iter().all(|r| !triggers.any(r.triggers)));
    assert_eq!(red(&text), (text.clone(), 0));
}

#[test]
fn json_values() {
    let mut v = serde_json::json!({"intent": "rotate AKIAIOSFODNN7EXAMPLE", "n": 3, "l": ["DB_PASSWORD=hunter22"]});
    assert_eq!(on().redact_json(&mut v), 2);
    assert_eq!(v["intent"], "rotate REDACTED");
    assert_eq!(v["l"][0], "DB_PASSWORD=REDACTED");
}

fn with_rules(patterns: &[&str]) -> Redactor {
    Redactor::new(&RedactionSettings {
        enabled: None,
        rules: patterns
            .iter()
            .enumerate()
            .map(|(i, p)| UserRule {
                name: format!("rule-{i}"),
                pattern: (*p).to_owned(),
            })
            .collect(),
    })
    .unwrap()
}

#[test]
fn escapes_do_not_hide_secrets() {
    let gh_body = "a1B2".repeat(9);
    for (line, secret) in [
        (
            r#"{"c":"key \u0041\u004b\u0049\u0041QWERTYUIOPASDFGH here"}"#.to_owned(),
            "QWERTYUIOPASDFGH",
        ),
        (
            format!(r#"{{"c":"token ghp\u005f{gh_body}"}}"#),
            gh_body.as_str(),
        ),
        (
            // sk_live_4eC39HqLyjWDarjtT1zdp7dc, every character escaped.
            format!(
                r#"{{"c":"{}"}}"#,
                "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
                    .chars()
                    .map(|c| format!("\\u{:04x}", c as u32))
                    .collect::<String>()
            ),
            "\\u0034\\u0065\\u0043",
        ),
        (
            r#"{"c":"\u002d\u002d\u002d\u002d\u002dBEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\nAAAABG5vbmU=\n"}"#.to_owned(),
            "b3BlbnNzaC1rZXktdjEA",
        ),
        (
            r#"{"c":"git clone https:\/\/alice:s3cretpass@example.com\/r.git"}"#.to_owned(),
            "s3cretpass",
        ),
        (
            r#"{"input":{"api\u005fkey": "abcd1234efgh"}}"#.to_owned(),
            "abcd1234efgh",
        ),
    ] {
        let (out, n) = red(&line);
        assert!(!out.contains(secret), "{secret} survives in {out}");
        assert!(out.contains(PLACEHOLDER), "{out}");
        assert_eq!(n, 1, "{line} -> {out}");
        assert_json_lines(&out);
    }
}

#[test]
fn only_the_strings_that_changed_are_spelled_again() {
    let line = r#"{"a":"caf\u00e9 \/ x","b":"\u0041KIAIOSFODNN7EXAMPLE","n":1.5e3}"#;
    assert_jsonl_redacts(
        line,
        r#"{"a":"caf\u00e9 \/ x","b":"REDACTED","n":1.5e3}"#,
        1,
    );
    // Escapes and nothing to find: byte-identical, alone and among other lines.
    let clean =
        "{\"a\":\"caf\\u00e9 \\u001b[0m \\/ \\\\u0041\"}\nnot json \\u0041\n[1,\"\\u00e9\"]\n";
    assert_eq!(red(clean), (clean.to_owned(), 0));
    // A document over several lines is read as one value.
    let doc = "{\n  \"secret\": \"hunter22\",\n  \"c\": \"\\u0041KIAIOSFODNN7EXAMPLE\"\n}\n";
    assert_eq!(
        red(doc),
        (
            "{\n  \"secret\": \"REDACTED\",\n  \"c\": \"REDACTED\"\n}\n".to_owned(),
            2
        )
    );
}

#[test]
fn escaped_lines_are_redacted_in_one_pass_and_the_others_keep_their_bytes() {
    let gh = format!("ghp\\u005f{}", "a1B2".repeat(9));
    let lines = [
        r#"{"a":"caf\u00e9"}"#.to_owned(),
        r#"{"b":"\u0041KIAIOSFODNN7EXAMPLE","c":"\u00e9"}"#.to_owned(),
        r#"{"d":"plain AKIAIOSFODNN7EXAMPLE"}"#.to_owned(),
        format!(r#"{{"e":"x {gh}"}}"#),
        r#"{"f":"\u001b[0m"}"#.to_owned(),
    ];
    let (out, n) = red(&(lines.join("\n") + "\n"));
    let out: Vec<&str> = out.lines().collect();
    assert_eq!(n, 3);
    assert_eq!(out[0], lines[0]);
    assert_eq!(out[1], r#"{"b":"REDACTED","c":"\u00e9"}"#);
    assert_eq!(out[2], r#"{"d":"plain REDACTED"}"#);
    assert_eq!(out[3], r#"{"e":"x REDACTED"}"#);
    assert_eq!(out[4], lines[4]);
}

#[test]
fn user_rules_match_decoded_strings_and_keep_json_valid() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r"MYCORP_KEY=\S+",
            r#"{"content":"export MYCORP_KEY=abc123def"}"#,
            r#"{"content":"export REDACTED"}"#,
        ),
        (
            r"MYCORP_KEY=\S+",
            r#"{"content":"export MYCORP\u005fKEY=abc123def\nnext"}"#,
            r#"{"content":"export REDACTED\nnext"}"#,
        ),
        (
            r".+",
            r#"{"a":"x","b":[1,"y"]}"#,
            r#"{"REDACTED":"REDACTED","REDACTED":["REDACTED","REDACTED"]}"#,
        ),
        (
            r#"\""#,
            r#"{"m":"say \"hi\"","n":"plain"}"#,
            r#"{"m":"say REDACTEDhiREDACTED","n":"plain"}"#,
        ),
        (
            ":",
            r#"{"a": "b:c", "d": 1}"#,
            r#"{"a": "bREDACTEDc", "d": 1}"#,
        ),
        (
            r"4111[0-9]{12}",
            r#"{"card": 4111111111111111}"#,
            r#"{"card": "REDACTED"}"#,
        ),
        (
            r"CORPSECRET-[0-9]+",
            "{\n  \"m\": \"CORPSECRET-42 is it\"\n}",
            "{\n  \"m\": \"REDACTED is it\"\n}",
        ),
    ];
    for (pattern, input, want) in cases {
        let r = with_rules(&[pattern]);
        let (out, n) = r.redact_str(input);
        assert_eq!(&out, want, "{pattern} on {input}");
        assert!(n > 0);
        if !input.contains('\n') || !input.starts_with('{') {
            assert_json_lines(&out);
        } else {
            serde_json::from_str::<Value>(&out).unwrap();
        }
    }
    // Text that is not JSON is matched as it is.
    let r = with_rules(&[r"MYCORP_KEY=\S+"]);
    assert_eq!(
        r.redact_str("export MYCORP_KEY=abc123def and more\nMYCORP_KEY=x"),
        ("export REDACTED and more\nREDACTED".to_owned(), 2)
    );
    // Lines the rule does not match keep their bytes, escapes included.
    let t = "{\"a\":\"caf\\u00e9\"}\n{\"b\":\"MYCORP_KEY=1\"}\n";
    assert_eq!(
        r.redact_str(t),
        (
            "{\"a\":\"caf\\u00e9\"}\n{\"b\":\"REDACTED\"}\n".to_owned(),
            1
        )
    );
}

#[test]
fn a_string_that_does_not_decode_is_matched_as_written() {
    let r = with_rules(&[r"MYCORP_KEY=\S+"]);
    let (out, n) = r.redact_str(r#"{"a":"\ud800 MYCORP_KEY=abc"}"#);
    assert_eq!(n, 1);
    assert!(!out.contains("abc"), "{out}");
    assert_json_lines(&out);
}

#[test]
fn user_rules_that_can_match_nothing_are_refused() {
    for pattern in ["", ".*", "a*", r"\b", "^", "(?m)$", "x?", "(?:abc)?|d"] {
        let err = Redactor::new(&RedactionSettings {
            enabled: None,
            rules: vec![UserRule {
                name: "greedy".into(),
                pattern: pattern.into(),
            }],
        })
        .err();
        assert_eq!(
            err,
            Some(RedactError::MatchesEmpty {
                name: "greedy".into()
            }),
            "{pattern:?}"
        );
    }
    with_rules(&["a+", "CORP-[0-9]+", r"\bx\b", ".+"]);
}

#[test]
fn member_names_of_json_values_are_redacted() {
    let mut v = serde_json::json!({"AKIAIOSFODNN7EXAMPLE": 1, "keep": "x", "z": "ok"});
    assert_eq!(on().redact_json(&mut v), 1);
    assert_eq!(
        serde_json::to_string(&v).unwrap(),
        r#"{"REDACTED":1,"keep":"x","z":"ok"}"#
    );
}

proptest::proptest! {
    /// Whatever the strings hold and whatever the user rule, every redacted JSONL line is
    /// still JSON, and a line nothing matched in is unchanged.
    #[test]
    fn user_rules_never_break_json_lines(
        values in proptest::collection::vec("[ -~\u{e9}\n\t\"\\\\]{0,24}", 1..4),
        rule in proptest::sample::select(vec![":", r#"\""#, r"\\", ".+", r"[{}\[\],]", r"MYCORP_KEY=\S+", r"\s+"]),
    ) {
        let line = serde_json::to_string(&serde_json::json!({ "v": values, "k": values[0] })).unwrap();
        let escaped = line.replace('A', "\\u0041");
        for input in [line, escaped] {
            let (out, n) = with_rules(&[rule]).redact_str(&input);
            proptest::prop_assert!(serde_json::from_str::<Value>(&out).is_ok(), "{} -> {}", input, out);
            if n == 0 {
                proptest::prop_assert_eq!(&out, &input);
            }
        }
    }
}

/// Lines that put secrets of every kind on and next to the cuts of
/// [`Redactor::redact_vec_in_parts`]: JSONL lines, lines a rule breaks (`{"token":1234567}`
/// loses its `}`), secrets spelled with escapes, PEM blocks over real lines, raw text, and
/// the spaces, `=` and `:` the rules read across line breaks.
fn lines_for_parts() -> Vec<String> {
    let mut lines: Vec<String> = SAMPLE_PER_RULE
        .iter()
        .map(|s| serde_json::json!({ "type": "user", "content": s }).to_string())
        .collect();
    lines.extend(SAMPLE_PER_RULE.iter().map(|s| s.to_string()));
    lines.extend(
        [
            r#"{"token":1234567}"#,
            r#"{"password":"abc"}"#,
            r#"{"c":"key \u0041KIAIOSFODNN7EXAMPLE here"}"#,
            r#"{"c":"ghp\u005fa1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2"}"#,
            r#"{"u":"https:\/\/alice:s3cretpass@example.com\/r"}"#,
            r#"{"k":"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"}"#,
            "-----BEGIN RSA PRIVATE KEY-----",
            "MIIEpAIBAAKCAQEA7",
            "-----END RSA PRIVATE KEY-----",
            "Proc-Type: 4,ENCRYPTED",
            "",
            "  ",
            "password =",
            "= hunter22;",
            "pwd=abcd}",
            ";",
            "DB_PASSWORD:",
            "MY_SIGNING_KEY=",
            "Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1",
            r#"{"a":"MYCORP-123"}"#,
            "MYCORP-456 and",
            // Secrets only a decoded or joined view shows (`decode`).
            r#"{"c":"Z2hwX2ExQjJhMUIyYTFCMmExQjJhMUIyYTFCMmExQjJhMUIyYTFCMg=="}"#,
            "Z2hwX2ExQjJhMUIyYTFCMmExQjJhMUIyYTFCMmExQjJhMUIyYTFCMg==",
            r#"{"u":"https://x.example/?t=%67hp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2"}"#,
            "{\"c\":\"AKIA\u{200B}IOSFODNN7EXAMPLE\"}",
            r#"{"c":["AKIAIOSF","ODNN7EXAMPLE"]}"#,
            r#"{"c":"key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc""}"#,
            "token ghp_a1B2a1B2a1B2a1B2a1B2",
            "a1B2a1B2a1B2a1B2 end",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "{not json}",
            r#"{"x":1}"#,
            "{",
            "}",
        ]
        .map(str::to_owned),
    );
    lines
}

/// Asserts that redacting `text` a part at a time gives the whole-text redaction's bytes
/// and count, with parts of one byte (a cut wherever one may be) and a few larger sizes.
fn assert_parts_give_the_whole(r: &Redactor, text: &str) {
    let whole = r.redact_bytes(text.as_bytes());
    for part in [1, 2, 16, text.len() / 2, text.len()] {
        for workers in [1, 2, 3] {
            let mut bytes = text.as_bytes().to_vec();
            let n = r.redact_vec_in_parts(&mut bytes, part, workers);
            assert_eq!(
                (String::from_utf8_lossy(&bytes), n),
                (String::from_utf8_lossy(&whole.0), whole.1),
                "part {part}, {workers} at once, of {text:?}"
            );
        }
    }
}

#[test]
fn redacting_in_parts_gives_the_whole_texts_bytes() {
    let lines = lines_for_parts();
    let users = with_rules(&["MYCORP-[0-9]+", r"(?s)BEGIN.*?END", r"and\s+\S+"]);
    // Every line before every other, between two JSON lines, so each pair meets across a
    // cut.
    for a in &lines {
        for b in &lines {
            let text = [r#"{"x":1}"#, a, b, r#"{"y":2}"#].join("\n");
            for r in [&on(), &users] {
                assert_parts_give_the_whole(r, &text);
            }
        }
    }
}

#[test]
fn a_part_rewritten_longer_than_it_was_moves_the_rest() {
    // `abcd` becomes `REDACTED`: each part grows by four bytes.
    let text = (0..50)
        .map(|i| format!(r#"{{"n":{i},"c":"pwd=abcd; x"}}"#))
        .collect::<Vec<_>>()
        .join("\n");
    let mut bytes = text.clone().into_bytes();
    assert_eq!(on().redact_vec_in_parts(&mut bytes, 1, 1), 50);
    assert_eq!(bytes, on().redact_bytes(text.as_bytes()).0);
    assert!(bytes.len() > text.len());
    // Several parts at once, each grown: the later ones still land after the earlier.
    let mut bytes = text.clone().into_bytes();
    assert_eq!(on().redact_vec_in_parts(&mut bytes, 1, 3), 50);
    assert_eq!(bytes, on().redact_bytes(text.as_bytes()).0);
}

/// Parts taken by whichever thread is free land in the text's order: while one thread is held
/// on a slow part the other takes the next ones, and each rewrite (its part upper-cased, every
/// third one longer than it was) lands where its part was.
#[test]
fn parts_taken_as_threads_free_up_land_in_order() {
    let lines: Vec<String> = (0..40).map(|i| format!(r#"{{"n":{i}}}"#)).collect();
    let slow = |i: usize| i.is_multiple_of(3);
    let rewrite = |line: &[u8]| {
        let i: usize = String::from_utf8_lossy(&line[5..line.len() - 1])
            .parse()
            .unwrap();
        let mut out = line.to_ascii_uppercase();
        if slow(i) {
            std::thread::sleep(Duration::from_millis(3));
            out.extend_from_slice(b" +");
        }
        out
    };
    let want: Vec<Vec<u8>> = lines.iter().map(|l| rewrite(l.as_bytes())).collect();
    let mut bytes = lines.join("\n").into_bytes();
    let n = super::parts::rewrite_in_parts(
        &mut bytes,
        |text, start| memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i),
        |part| Some((rewrite(part), 1)),
        2,
    );
    assert_eq!(n, 40);
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        String::from_utf8_lossy(&want.join(&b'\n'))
    );
}

/// Stages 1 and 4 run beside stage 2 ([`super::stages_beside`]) give what the stages give one
/// after the other, whichever stages find secrets: each line of [`lines_for_parts`] (secrets
/// only a decoded view shows, ones the rules find in the raw text, ones only a joined view
/// shows, clean lines) alone and beside a secret of each of those stages, between clean lines
/// enough for the text to be run beside.
#[test]
fn stages_run_beside_each_other_give_what_they_give_in_turn() {
    let clean = r#"{"type":"assistant","message":"nothing to see here, only text"}"#;
    let filler = vec![clean; (super::BESIDE_FROM / clean.len()) + 1].join("\n");
    let others = [
        clean,
        // Stage 1 (base64), stage 2 (the raw text), stage 4 (adjacent strings).
        r#"{"c":"Z2hwX2ExQjJhMUIyYTFCMmExQjJhMUIyYTFCMmExQjJhMUIyYTFCMmExQjJhMUIyYTFCMg=="}"#,
        "token ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2",
        r#"{"c":["AKIAIOSF","ODNN7EXAMPLE"]}"#,
    ];
    for line in lines_for_parts() {
        for other in others {
            let text = format!("{filler}\n{line}\n{filler}\n{other}");
            for shape in [Shape::Lines, Shape::Unknown] {
                assert_eq!(
                    super::redact_builtin_stages(text.as_bytes(), shape, true),
                    super::redact_builtin_stages(text.as_bytes(), shape, false),
                    "{line:?} and {other:?}"
                );
            }
        }
    }
}

proptest::proptest! {
    /// Any sequence of the lines above, cut at any part size, redacts as the whole text.
    #[test]
    fn parts_redact_as_the_whole_text(
        picks in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 1..12),
        part in 1usize..400,
        workers in 1usize..4,
        users in proptest::bool::ANY,
    ) {
        let lines = lines_for_parts();
        let text = picks.iter().map(|i| i.get(&lines).as_str()).collect::<Vec<_>>().join("\n");
        let r = if users { with_rules(&["MYCORP-[0-9]+", r"(?s)BEGIN.*?END"]) } else { on() };
        let mut bytes = text.clone().into_bytes();
        let n = r.redact_vec_in_parts(&mut bytes, part, workers);
        proptest::prop_assert_eq!((bytes, n), r.redact_bytes(text.as_bytes()));
    }
}

/// Secrets only a decoded, cleaned or joined view shows (`decode/`): each redacted where it
/// stands in the text (the encoded run, each piece of a split token), every line still JSON.
#[test]
fn encodings_and_splits_do_not_hide_secrets() {
    let cases: &[(&str, &str, usize)] = &[
        // base64 of a `.env` file: the groups of 4 characters that hold a byte of the token
        (
            r#"{"c":"R0lUSFVCX1RPS0VOPWdocF9hMUIyYTFCMmExQjJhMUIyYTFCMmExQjJhMUIyYTFCMmExQjIKREVCVUc9MQo="}"#,
            r#"{"c":"R0lUSFVCX1RPS0VOREDACTEDREVCVUc9MQo="}"#,
            1,
        ),
        // base64 right after a JSON escape (`cat .env | base64` output, a tab-indented
        // token): the escape's letter is no part of the run
        (
            r#"{"c":"$ cat .env | base64\nR0lUSFVCX1RPS0VOPWdocF9hMUIyYTFCMmExQjJhMUIyYTFCMmExQjJhMUIyYTFCMmExQjIKREVCVUc9MQo=\n"}"#,
            r#"{"c":"$ cat .env | base64\nR0lUSFVCX1RPS0VOREDACTEDREVCVUc9MQo=\n"}"#,
            1,
        ),
        (
            r#"{"c":"token:\tZ2hwX2ExQjJhMUIyYTFCMmExQjJhMUIyYTFCMmExQjJhMUIyYTFCMg=="}"#,
            r#"{"c":"token:\tREDACTED=="}"#,
            1,
        ),
        // base64 of base64 of `password=...`
        (
            "echo Y0dGemMzZHZjbVE5V25nNFVYWXpUSEk1VkdJeVRuYzNVR3Mw | base64 -d",
            "echo Y0dGemMzZHZjbVE5REDACTED | base64 -d",
            1,
        ),
        // hex, plain and as `\x` escapes inside a JSON string
        (
            "6768705f613142326131423261314232613142326131423261314232613142326131423261314232",
            "REDACTED",
            1,
        ),
        (
            r#"{"c":"b'\\x67\\x68\\x70\\x5f\\x61\\x31\\x42\\x32\\x61\\x31\\x42\\x32\\x61\\x31\\x42\\x32\\x61\\x31\\x42\\x32\\x61\\x31\\x42\\x32\\x61\\x31\\x42\\x32\\x61\\x31\\x42\\x32\\x61\\x31\\x42\\x32\\x61\\x31\\x42\\x32'"}"#,
            r#"{"c":"b'REDACTED'"}"#,
            1,
        ),
        // URL encoding, of one character or of all
        (
            r#"{"u":"https://x.example/?t=%67hp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2&x=1"}"#,
            r#"{"u":"https://x.example/?t=REDACTED&x=1"}"#,
            1,
        ),
        // a string nested three deep
        (
            r#"{"c":"{\"d\":\"{\\\"password\\\": \\\"Zx8Qv3Lr9Tb2\\\"}\"}"}"#,
            r#"{"c":"{\"d\":\"{\\\"password\\\": \\\"REDACTED\\\"}\"}"}"#,
            1,
        ),
        // invisible characters inside a token, raw and escaped
        (
            "{\"c\":\"AKIA\u{200b}IOSFODNN7EXAMPLE\"}",
            r#"{"c":"REDACTED"}"#,
            1,
        ),
        (
            r#"{"c":"sk_live_4eC3\u00ad9HqLyjWDarjtT1zdp7dc"}"#,
            r#"{"c":"REDACTED"}"#,
            1,
        ),
        // adjacent strings of one JSON line, a string concatenation, two lines
        (
            r#"{"c":["AKIAIOSF","ODNN7EXAMPLE"]}"#,
            r#"{"c":["REDACTED","REDACTED"]}"#,
            1,
        ),
        (
            r#"{"c":"key = \"sk_live_\" + \"4eC39HqLyjWDarjtT1zdp7dc\""}"#,
            r#"{"c":"key = \"REDACTED\" + \"REDACTED\""}"#,
            1,
        ),
        (
            r#"{"c":"AccessKeyId  AKIACXPEEP6W\n3TDCYUWQ   Active"}"#,
            r#"{"c":"AccessKeyId  REDACTED\nREDACTED   Active"}"#,
            1,
        ),
        // a token split across two entries of a JSONL transcript, and across two parts of a
        // pretty-printed document, each on a line of its own
        (
            "{\"c\":\"key AKIAIOSF\"}\n{\"c\":\"ODNN7EXAMPLE here\"}",
            "{\"c\":\"key REDACTED\"}\n{\"c\":\"REDACTED here\"}",
            1,
        ),
        (
            "[\n  {\"text\": \"use ghp_a1B2a1B2a1B2a1B2a1B2\"},\n  {\"text\": \"a1B2a1B2a1B2a1B2a1B2 now\"}\n]",
            "[\n  {\"text\": \"use REDACTED\"},\n  {\"text\": \"REDACTED now\"}\n]",
            1,
        ),
        // a PEM body without its header, and a bare AWS secret access key
        (
            r#"{"c":"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKj"}"#,
            r#"{"c":"REDACTED\nREDACTED"}"#,
            1,
        ),
        (
            r#"{"c":"$ sed -n 2,3p k.pem\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKj"}"#,
            r#"{"c":"$ sed -n 2,3p k.pem\nREDACTED\nREDACTED"}"#,
            1,
        ),
        (
            "aws_access_key_id,aws_secret\nAKIAS4EDEMTD54KBYO5Q,z1pVnVf6nDNEFH6VcS/uxAI5U81kdIm+E6wUBXg1",
            "aws_access_key_id,aws_secret\nREDACTED,REDACTED",
            2,
        ),
    ];
    for (input, want, n) in cases {
        let (out, count) = red(input);
        assert_eq!(&out, want, "{input}");
        assert_eq!(count, *n, "{input}");
        if input.starts_with('{') {
            assert_json_lines(&out);
        }
        assert_eq!(red(&out), (out.clone(), 0), "idempotent: {out}");
    }
}

/// What the views read and is no secret comes out byte for byte: encoded data that decodes to
/// nothing secret, and look-alikes of real transcripts (a name on one line and a value on the
/// next, escaped line breaks inside a nested string, a run after an escape letter).
#[test]
fn views_leave_look_alikes_alone() {
    let texts = [
        // base64 of prose, of a PNG; hex digests; a git SHA; a UUID
        r#"{"c":"SGVsbG8sIHdvcmxkISBUaGlzIGlzIGZpbmUu"}"#,
        r#"{"data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}"#,
        "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 and 123e4567-e89b-12d3-a456-426614174000",
        r#"{"u":"https://example.com/search?q=rust%20regex&redirect=%2Fhome%3Fa%3D1"}"#,
        // pieces put together that make a name and a value of ordinary text
        "\t\ts.password = password\n2398\t\treturn s",
        r#"{"c":"--source-bearer-token   source bearer token\n+--source-insecure-skip-tls-verify  skip"}"#,
        r#"{"c":["password","hunter2 is what we call it"]}"#,
        // a nested string's escaped line breaks are no white space to the rules
        r#"{"c":"{\"d\":\"x = {\\\"a\\\": 1}\\nif not api_key:\\n   716→ return\"}"}"#,
        r#"{"c":"{\"d\":\"TokenAuth:\\ninternal/planner/benchmark_test.go:7\", \"e\":\"\\\"\"}"}"#,
        // 40 characters after a `\u` escape's letter, and after a nested `\\n`'s
        r#"{"c":"x\u005fa1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2"}"#,
        r#"{"c":"ZDI1NTE5\\nAAAAQLn2hdEdYiTF5MFug8L+mVD6fU/Zx8Qv3Lr\\nuk/lW8VIW"}"#,
        // grep -n output of a TOML file (no `.pgpass` line); test runners' verdicts and a pass
        // of a plan are no credential assignments
        r#"{"c":"mise.toml:12:[tasks.test:e2e:lifecycle]\nmise.toml:21:[tasks.test:unit]"}"#,
        r#"{"c":"--- PASS: TestCloseOnce (0.00s)\nPASS\nok  \tpkg 0.01s","d":"Second pass: rewrite"}"#,
        // emoji joined by zero-width joiners, right-to-left text
        "{\"c\":\"family \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467} and \u{202b}abc\u{202c}\"}",
    ];
    for text in texts {
        assert_eq!(red(text), (text.to_owned(), 0), "{text}");
    }
}

/// Secrets of different rules that overlap (a token inside a credential assignment, a URL's
/// password, a bearer JWT, a credential member holding a provider key) or touch (one right
/// after another, on one line and on lines either side of a part's cut `}\n{`) are redacted
/// exactly as the rules one after another over the whole text do: the rules in order decide
/// what goes, whichever way each finds its matches (from a literal, in the runs of its bytes,
/// or over the whole text).
#[test]
fn overlapping_and_adjacent_secrets_of_different_rules() {
    let ghp = "ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2";
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    let discord = "MTA4NjQ2MDQ0NzAwMjQwOTg3Ng.GhYx1a.aB3dE6gH9jK2mN5pQ8sT1vwX4zA7cD0fG3iJ6l";
    let cases = [
        format!("token={ghp}"),
        format!("GITHUB_TOKEN={ghp};"),
        format!("https://alice:{ghp}@github.com/r"),
        format!("Authorization: Bearer {jwt}"),
        r#"{"api_key": "AKIAIOSFODNN7EXAMPLE"}"#.to_owned(),
        format!(r#"{{"c":"{{\"password\":\"{ghp}\"}}"}}"#),
        format!("AKIAIOSFODNN7EXAMPLE {ghp} xoxb-1234567890-abcdefghij"),
        format!("AKIAIOSFODNN7EXAMPLE,{ghp}"),
        format!("pwd=hunter22;token={ghp}"),
        format!("sk-proj-Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1 {ghp}"),
        format!("-----BEGIN RSA PRIVATE KEY-----\\n{ghp}\\n-----END RSA PRIVATE KEY-----"),
        format!("{discord} {ghp}"),
        format!("token={discord}"),
        format!("{ghp}\n{discord}"),
        format!("SK0123456789abcdef0123456789abcdef,{ghp} 123456789:AAaB3dE6gH9jK2mN5pQ8sT1vwX4zA7cD0fG"),
    ];
    for case in &cases {
        assert_same_as_reference(case.as_bytes());
        let line = serde_json::json!({ "c": case }).to_string();
        assert_same_as_reference(line.as_bytes());
    }
    // All of them on lines of one JSONL text, each next to the others across the cuts: the
    // whole text redacts as each line alone does.
    let lines: Vec<String> = cases
        .iter()
        .map(|c| serde_json::json!({ "c": c }).to_string())
        .collect();
    let text = lines.join("\n");
    assert_same_as_reference(text.as_bytes());
    let r = Redactor::builtin();
    let (whole, n) = r.redact_bytes(text.as_bytes());
    let each: Vec<(Vec<u8>, usize)> = lines.iter().map(|l| r.redact_bytes(l.as_bytes())).collect();
    assert_eq!(n, each.iter().map(|(_, n)| n).sum::<usize>());
    assert_eq!(
        whole,
        each.into_iter()
            .map(|(t, _)| t)
            .collect::<Vec<_>>()
            .join(&b'\n')
    );
    assert!(!String::from_utf8_lossy(&whole).contains("a1B2a1B2"));
}

/// The fingerprint a staged transcript is recorded with changes with everything that changes
/// the output (on or off, each user rule's pattern, their order), and with nothing else (a
/// rule's name; a rule an untrusted file had left out).
#[test]
fn the_fingerprint_follows_what_changes_the_output() {
    let rule = |name: &str, pattern: &str| UserRule {
        name: name.to_owned(),
        pattern: pattern.to_owned(),
    };
    let with = |rules: Vec<UserRule>, enabled: Option<bool>| {
        Redactor::new(&RedactionSettings { enabled, rules })
            .unwrap()
            .fingerprint()
    };
    let builtin = Redactor::builtin().fingerprint();
    assert!(builtin.starts_with("sha256:") && builtin.len() == 7 + 64);
    assert_eq!(with(Vec::new(), None), builtin);
    assert_ne!(Redactor::disabled().fingerprint(), builtin);
    let (a, b) = (rule("a", "ZX-[0-9]{8}"), rule("b", "QQ[a-z]{6}"));
    let ab = with(vec![a.clone(), b.clone()], None);
    assert_ne!(ab, builtin);
    assert_ne!(ab, with(vec![b.clone(), a.clone()], None), "order");
    assert_ne!(ab, with(vec![a.clone()], None));
    assert_ne!(ab, with(vec![a.clone(), b.clone()], Some(false)));
    assert_ne!(
        ab,
        with(vec![rule("a", "ZX-[0-9]{8}QQ[a-z]{6}")], None),
        "boundaries"
    );
    assert_eq!(
        ab,
        with(vec![rule("x", &a.pattern), rule("y", &b.pattern)], None)
    );
    let broad = RedactionSettings {
        enabled: None,
        rules: vec![rule("all", "[a-z]+")],
    };
    assert_eq!(Redactor::untrusted(&broad).0.fingerprint(), builtin);
}

/// An assignment whose value is code (unquoted, and a reference a program makes) is kept; the
/// same spelling quoted, a plain word or a random one in a `.env` line or a shell is replaced.
/// The kept ones are the shapes the false-positive run on the corpus found most
/// (tests/redaction_false_positives.sh), in the escaped form a transcript holds them too.
#[test]
fn assignments_of_code_are_kept_and_literals_replaced() {
    for kept in [
        "creds := Creds{Token: auth.Token}",
        "  password: string\n  database: string",
        "const token = await fetchToken()",
        "apiKey: process.env.OPENAI_API_KEY,",
        "return TokenResponse(access_token=access_token, token_type=kind)",
        "headers.token = installationToken;",
        "secret = getArtifactDownloadSecret(run)",
        "client_secret: this.clientSecret",
        "REVIEW_TOKEN: undefined,",
        "    config.password = decodeURIComponent(url.password);",
        r#"{"cmd": "x\n  idempotencyToken: string\n"}"#,
    ] {
        let (out, n) = red(kept);
        assert_eq!((out.as_str(), n), (kept, 0), "kept: {kept:?}");
        assert_same_as_reference(kept.as_bytes());
    }
    for (literal, want) in [
        (r#"password: "hunter22""#, r#"password: "REDACTED""#),
        (
            "POSTGRES_PASSWORD=postgres psql",
            "POSTGRES_PASSWORD=REDACTED psql",
        ),
        ("token='installationToken'", "token='REDACTED'"),
        ("password=kTqzWmPd", "password=REDACTED"),
        (
            "GITSYNC_SOURCE_TOKEN=SUPERSECRET go run .",
            "GITSYNC_SOURCE_TOKEN=REDACTED go run .",
        ),
        (
            r#"{"c": "token: \"appJwt\""}"#,
            r#"{"c": "token: \"REDACTED\""}"#,
        ),
        (
            "MY_SIGNING_KEY=Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1",
            "MY_SIGNING_KEY=REDACTED",
        ),
    ] {
        assert_eq!(red(literal).0, want, "replaced: {literal:?}");
        assert_same_as_reference(literal.as_bytes());
    }
}

/// What the `pass:` and gpg rules must leave alone: Go's test output, prose, a count, a word, a
/// passphrase file descriptor without a piped value.
#[test]
fn pass_and_gpg_look_alikes_are_kept() {
    for kept in [
        "--- PASS: TestParse (0.00s)\nPASS\nok  \tpkg\t0.01s",
        "first pass: collect\nsecond pass: rewrite the file",
        "steps:\n  pass: 3\n  fail: 0\n",
        "check:\n  pass: true\n",
        r#"{"output": "=== RUN   TestX\n--- PASS: TestX (0.01s)\n"}"#,
        "gpg --batch --passphrase-fd 3 -d secret.gpg < in",
        "cat notes | gpg --passphrase-fd 0",
    ] {
        let (out, n) = red(kept);
        assert_eq!((out.as_str(), n), (kept, 0), "kept: {kept:?}");
        assert_same_as_reference(kept.as_bytes());
    }
}
