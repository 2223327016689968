//! Secret redaction on every write path, before any blob is written (docs/decisions.md, "Secrets
//! are redacted before anything is stored"; docs/configuration.md, "Redaction"):
//! `write --transcript/--prompt`, `session record` (the staged files), post-commit condensation,
//! `backfill transcript` and `backfill summary`; the `redaction` settings block (off switch, user
//! rules, invalid rules); the misses a review found (tokens after an escaped newline, credential
//! members of JSON objects, private keys without an END line); and the negative cases (clean data
//! stored byte for byte: SHAs, UUIDs, a base64 image, `password_hash` code untouched). Then issue
//! 13: `backfill attribution`, files touched and names are redacted; JSON escapes (`\u0041KIA`,
//! `ghp\u005f`, a key spelled wholly in escapes, `\u002d` PEM markers, `\/`) hide no secret; user
//! rules match decoded JSON strings and never break a transcript line; a rule that can match the
//! empty string is refused.

use std::process::{Output, Stdio};

use serde_json::{json, Value};

use crate::env::{
    assert_jsonl, parse_json, path_str, path_with_bins, sha256_hex, text, write_settings_text,
    Store, TestEnv,
};

const AWS_KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const PASSWORD: &str = "hunter22";
const GH_TOKEN_BODY: &str = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4";
const GIT_SHA: &str = "9fceb02d0ae598e95dc970b74767f19372d61af8";
const UUID: &str = "123e4567-e89b-12d3-a456-426614174000";

fn gh_token() -> String {
    assert_eq!(GH_TOKEN_BODY.len(), 36);
    format!("ghp_{GH_TOKEN_BODY}")
}

/// Every secret the secret transcript contains.
fn secrets() -> Vec<String> {
    vec![
        AWS_KEY_ID.to_string(),
        AWS_SECRET.to_string(),
        PASSWORD.to_string(),
        gh_token(),
    ]
}

/// A realistic agent transcript with four secrets (AWS key pair in a tool result, a password
/// inside JSON-in-a-string, a GitHub token).
fn secret_transcript() -> Vec<u8> {
    let lines = [
        r#"{"type":"user","message":"set up the deploy credentials"}"#.to_string(),
        format!(
            r#"{{"type":"tool_result","content":"export AWS_ACCESS_KEY_ID={AWS_KEY_ID}\nexport AWS_SECRET_ACCESS_KEY={AWS_SECRET}"}}"#
        ),
        format!(r#"{{"message":"{{\"password\": \"{PASSWORD}\"}}"}}"#),
        format!(
            r#"{{"type":"assistant","message":"I pushed with GITHUB_TOKEN {} as you asked"}}"#,
            gh_token()
        ),
    ];
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}

/// A transcript with no secrets but a git SHA, a UUID and non-UTF-8 bytes.
fn clean_transcript() -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(
        format!(r#"{{"type":"user","message":"revert commit {GIT_SHA} please"}}"#).as_bytes(),
    );
    out.push(b'\n');
    out.extend_from_slice(
        format!(r#"{{"type":"tool_result","request_id":"{UUID}","sha":"{GIT_SHA}"}}"#).as_bytes(),
    );
    out.push(b'\n');
    out.extend_from_slice(
        b"{\"type\":\"assistant\",\"message\":\"latin-1 caf\xe9 \xff\xfe bytes\"}\n",
    );
    // Ordinary code and data that only look like secrets.
    for line in [
        r#"{"type":"assistant","message":"the logo is data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg== inline"}"#,
        r#"{"type":"tool_result","content":"fn verify(password_hash: &str) -> bool {\n    let token_count = 5;\n}"}"#,
        r#"{"type":"tool_use","input":{"password_hash":"$argon2id$v=19","token_type":"bearer"},"usage":{"input_tokens":100,"max_tokens":1024}}"#,
        r#"{"type":"assistant","message":"Bearer tokens go in the Authorization header; see https://example.com:8443/docs"}"#,
    ] {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Asserts `bytes` contains `REDACTED` and none of the secrets.
fn assert_redacted(bytes: &[u8], what: &str) {
    let shown = text(bytes);
    assert!(contains(bytes, "REDACTED"), "{what} has REDACTED:\n{shown}");
    for s in secrets() {
        assert!(!contains(bytes, &s), "{what} still contains {s}:\n{shown}");
    }
}

fn redactions(meta: &Value) -> u64 {
    meta.get("redactions")
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("metadata has a numeric \"redactions\" key: {meta}"))
}

/// `write --session sess-r --transcript <bytes> <extra...>` under `store`; returns the output.
fn write_out(env: &TestEnv, store: Store, transcript: &[u8], extra: &[&str]) -> Output {
    env.write(store, "sess-r")
        .transcript_bytes(transcript)
        .args(extra)
        .run()
}

fn write(env: &TestEnv, store: Store, transcript: &[u8], extra: &[&str]) -> String {
    let out = write_out(env, store, transcript, extra);
    assert_eq!(
        out.status.code(),
        Some(0),
        "write failed:\n{}",
        text(&out.stderr)
    );
    let id = text(&out.stdout).trim().to_string();
    assert!(!id.is_empty());
    id
}

/// `.entire/settings.json` with one user rule.
fn user_rule(env: &TestEnv, name: &str, pattern: &str) {
    user_rule_in(env, "settings.json", name, pattern);
}

/// Writes a redaction block with one user rule into `.entire/<file>`.
fn user_rule_in(env: &TestEnv, file: &str, name: &str, pattern: &str) {
    let body = json!({"redaction": {"rules": [{"name": name, "pattern": pattern}]}});
    write_settings_text(env, file, &body.to_string());
}

/// The non-empty lines of a stored transcript, each parsed (panics on a line that is not JSON).
fn json_lines(bytes: &[u8], what: &str) -> Vec<Value> {
    assert_jsonl(bytes, what);
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// write
// ---------------------------------------------------------------------------------------------

fn write_redacts_transcript_and_prompts(store: Store) {
    let env = TestEnv::new();
    let prompt = format!("use token {} for the deploy", gh_token());
    let id = write(&env, store, &secret_transcript(), &["--prompt", &prompt]);
    let full = env.blob(store, &id, "0/full.jsonl");
    assert_redacted(&full, "full.jsonl");
    assert_jsonl(&full, "full.jsonl");
    assert_eq!(
        full.iter().filter(|&&b| b == b'\n').count(),
        4,
        "the same number of lines"
    );
    let prompt_txt = env.blob(store, &id, "0/prompt.txt");
    assert_redacted(&prompt_txt, "prompt.txt");
    assert!(contains(&prompt_txt, "for the deploy"), "the rest is kept");
    let meta = env.json(store, &id, "0/metadata.json");
    assert_eq!(
        redactions(&meta),
        5,
        "four in the transcript, one in the prompt"
    );
    // Non-secret text is kept.
    assert!(contains(&full, "set up the deploy credentials"));
    assert!(contains(&full, "AWS_SECRET_ACCESS_KEY="));
    // The stored content hash is of the redacted bytes.
    if env.exists(store, &id, "0/content_hash.txt") {
        assert_eq!(
            env.blob_text(store, &id, "0/content_hash.txt"),
            format!("sha256:{}", crate::env::sha256_hex(&full))
        );
    }
}

fn clean_transcript_is_stored_byte_for_byte(store: Store) {
    let env = TestEnv::new();
    let clean = clean_transcript();
    let id = write(
        &env,
        store,
        &clean,
        &["--prompt", &format!("look at {GIT_SHA} and {UUID}")],
    );
    assert_eq!(
        env.blob(store, &id, "0/full.jsonl"),
        clean,
        "byte-identical"
    );
    assert_eq!(
        env.blob_text(store, &id, "0/prompt.txt"),
        format!("look at {GIT_SHA} and {UUID}")
    );
    let meta = env.json(store, &id, "0/metadata.json");
    assert!(
        meta.get("redactions").is_none(),
        "no redactions key: {meta}"
    );
}

const SK_KEY: &str = "sk-proj-Q7vT2mX9pL4kR8sW1nB6cZ3hJ5dF0gY";
const SPACED_PASSWORD: &str = "correct horse battery staple";
const BEARER: &str = "Zx8Qv3Lr9Tb2Nw7Pk4Hs6Jd1";
const CLIENT_SECRET: &str = "cl1ent-s3cret-value";
const KEY_BODY: &str = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU";

/// A transcript with the misses a review found in the first rules: tokens right after an
/// escaped newline, credential members of JSON objects (raw and inside a string, values with
/// spaces, an Authorization header) and a private key cut off before its END line. Eight
/// secrets, each to be counted once.
fn review_transcript() -> Vec<u8> {
    let lines = [
        format!(
            r#"{{"type":"tool_result","content":"$ cat .env\n{}\nOPENAI={SK_KEY}\nok"}}"#,
            gh_token()
        ),
        format!(
            r#"{{"type":"tool_use","input":{{"url":"https://api.example.com","headers":{{"Authorization":"Bearer {BEARER}"}},"body":{{"password":"{SPACED_PASSWORD}","user":"bob"}}}}}}"#
        ),
        format!(
            r#"{{"type":"assistant","message":"config: {{\"client_secret\": \"{CLIENT_SECRET}\", \"api_key\": \"{SPACED_PASSWORD}\", \"region\": \"eu\"}}"}}"#
        ),
        format!(
            r#"{{"type":"tool_result","content":"head -2 id_ed25519:\n-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n"}}"#
        ),
        r#"{"type":"assistant","message":"that was a private key; rotate it"}"#.to_string(),
        format!(r#"{{"type":"user","message":"the token was\n{AWS_KEY_ID}"}}"#),
    ];
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}

fn review_misses_are_redacted(store: Store) {
    let env = TestEnv::new();
    let t = review_transcript();
    let id = write(&env, store, &t, &[]);
    let full = env.blob(store, &id, "0/full.jsonl");
    let shown = text(&full);
    for secret in [
        gh_token().as_str(),
        SK_KEY,
        BEARER,
        "horse",
        CLIENT_SECRET,
        KEY_BODY,
        AWS_KEY_ID,
    ] {
        assert!(
            !contains(&full, secret),
            "{secret} is still stored:\n{shown}"
        );
    }
    assert_jsonl(&full, "full.jsonl");
    let lines: Vec<Value> = full
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6, "no line merged or dropped:\n{shown}");
    // The names and the structure are kept; only the values went.
    assert_eq!(
        lines[0]["content"],
        json!("$ cat .env\nREDACTED\nOPENAI=REDACTED\nok")
    );
    assert_eq!(
        lines[1]["input"]["headers"]["Authorization"],
        json!("Bearer REDACTED")
    );
    assert_eq!(lines[1]["input"]["body"]["password"], json!("REDACTED"));
    assert_eq!(lines[1]["input"]["body"]["user"], json!("bob"));
    let message = lines[2]["message"].as_str().unwrap();
    let inner: Value = serde_json::from_str(message.strip_prefix("config: ").unwrap())
        .unwrap_or_else(|e| panic!("the JSON inside the string stays JSON ({e}): {message}"));
    assert_eq!(
        inner,
        json!({"client_secret": "REDACTED", "api_key": "REDACTED", "region": "eu"})
    );
    assert_eq!(lines[3]["content"], json!("head -2 id_ed25519:\nREDACTED"));
    assert_eq!(
        lines[4]["message"],
        json!("that was a private key; rotate it")
    );
    assert_eq!(lines[5]["message"], json!("the token was\nREDACTED"));
    let meta = env.json(store, &id, "0/metadata.json");
    assert_eq!(redactions(&meta), 8, "each secret counted once: {meta}");
}

both_stores! {
    write_redacts_secrets => write_redacts_transcript_and_prompts;
    review_misses_are_redacted_on_write => review_misses_are_redacted;
    write_keeps_clean_transcripts => clean_transcript_is_stored_byte_for_byte;
}

/// A transcript of several megabytes is redacted in parts, two at a time on a machine of two
/// cores (`model::redact::parts`): every secret in every part is replaced where it stands,
/// parts that grow (a secret shorter than the placeholder) move the rest, and the user rules'
/// second pass over the parts sees the text the first left. The stored blob is compared
/// whole with the text built with each secret already replaced.
#[test]
fn a_transcript_of_megabytes_is_redacted_part_by_part_in_place() {
    let env = TestEnv::new();
    user_rule(&env, "ticket", "MYCORP-[0-9]+");
    let filler = "x".repeat(900);
    let (mut given, mut expected) = (Vec::new(), Vec::new());
    let mut secrets = 0;
    for i in 0..4000 {
        // About 3.7 MB: every 97th line holds a secret, so each part holds several.
        let (said, stored) = match i % 97 {
            0 => (gh_token(), "REDACTED".to_string()),
            1 => ("pwd=abcd; x".to_string(), "pwd=REDACTED; x".to_string()),
            2 => (
                "ticket MYCORP-1234".to_string(),
                "ticket REDACTED".to_string(),
            ),
            _ => (filler.clone(), filler.clone()),
        };
        secrets += usize::from(said != stored);
        for (out, message) in [(&mut given, &said), (&mut expected, &stored)] {
            out.extend_from_slice(
                json!({"type": "assistant", "n": i, "message": message})
                    .to_string()
                    .as_bytes(),
            );
            out.push(b'\n');
        }
    }
    assert!(given.len() > 3 << 20);
    let id = write(&env, Store::Refs, &given, &[]);
    let stored = env.blob(Store::Refs, &id, "0/full.jsonl");
    assert!(
        stored == expected,
        "the stored transcript is the text with each secret replaced"
    );
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(redactions(&meta), secrets as u64, "{meta}");
}

/// Only the user's own settings turn redaction off (the committed file cannot:
/// `trust::committed_settings_can_only_make_redaction_stronger`).
#[test]
fn disabled_redaction_stores_secrets_verbatim() {
    let env = TestEnv::new();
    write_settings_text(
        &env,
        "settings.local.json",
        r#"{"redaction": {"enabled": false}}"#,
    );
    let t = secret_transcript();
    let id = write(&env, Store::Refs, &t, &["--prompt", &gh_token()]);
    assert_eq!(env.blob(Store::Refs, &id, "0/full.jsonl"), t);
    assert_eq!(env.blob_text(Store::Refs, &id, "0/prompt.txt"), gh_token());
    assert!(env
        .json(Store::Refs, &id, "0/metadata.json")
        .get("redactions")
        .is_none());
}

#[test]
fn a_user_rule_redacts_its_matches_as_well_as_the_builtins() {
    let env = TestEnv::new();
    write_settings_text(
        &env,
        "settings.json",
        r#"{"redaction": {"rules": [{"name": "ticket", "pattern": "ACME-[0-9]{6}"}]}}"#,
    );
    let mut t = secret_transcript();
    t.extend_from_slice(
        b"{\"type\":\"user\",\"message\":\"see ticket ACME-123456 and ACME-12\"}\n",
    );
    let id = write(&env, Store::Refs, &t, &["--prompt", "fix ACME-654321"]);
    let full = env.blob(Store::Refs, &id, "0/full.jsonl");
    assert_redacted(&full, "full.jsonl");
    assert_jsonl(&full, "full.jsonl");
    assert!(!contains(&full, "ACME-123456"), "{}", text(&full));
    assert!(contains(&full, "ACME-12\""), "a non-match is kept");
    let prompt = env.blob_text(Store::Refs, &id, "0/prompt.txt");
    assert_eq!(prompt, "fix REDACTED");
    assert!(redactions(&env.json(Store::Refs, &id, "0/metadata.json")) >= 6);
}

/// A rule of the user's own settings that does not compile fails the write (a committed one
/// is set aside with a warning: `trust::committed_settings_can_only_make_redaction_stronger`).
#[test]
fn an_invalid_user_rule_fails_the_write_and_writes_nothing() {
    let env = TestEnv::new();
    write_settings_text(
        &env,
        "settings.local.json",
        r#"{"redaction": {"rules": [{"name": "broken-ticket", "pattern": "ACME-[0-9"}]}}"#,
    );
    let before = env.refs_snapshot();
    let out = write_out(&env, Store::Refs, &secret_transcript(), &["--prompt", "p"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "exit 1:\n{stderr}");
    assert!(
        stderr.contains("broken-ticket"),
        "names the rule:\n{stderr}"
    );
    assert_eq!(env.refs_snapshot(), before, "nothing written");
    let out = write_out(
        &env,
        Store::Branch,
        &secret_transcript(),
        &["--prompt", "p"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(env.refs_snapshot(), before, "nothing written");
}

/// A private key pasted inside one JSON string (escaped newlines) is redacted, a key cut off
/// before its END line is redacted to the end of its string, and a key whose BEGIN and END
/// markers sit on different transcript lines never swallows the line break between them: every
/// line stays a JSON document.
#[test]
fn private_keys_are_redacted_without_merging_transcript_lines() {
    let env = TestEnv::new();
    let body = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi";
    let mut t = Vec::new();
    t.extend_from_slice(
        format!(
            r#"{{"type":"tool_result","content":"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"}}"#
        )
        .as_bytes(),
    );
    t.push(b'\n');
    t.extend_from_slice(
        format!(r#"{{"type":"tool_result","content":"head -3 id_rsa: -----BEGIN OPENSSH PRIVATE KEY-----\n{body}"}}"#)
            .as_bytes(),
    );
    t.push(b'\n');
    t.extend_from_slice(
        br#"{"type":"assistant","message":"that file is a key; I will not print it"}"#,
    );
    t.push(b'\n');
    t.extend_from_slice(
        br#"{"type":"tool_result","content":"tail -1 id_rsa: -----END OPENSSH PRIVATE KEY-----"}"#,
    );
    t.push(b'\n');
    let id = write(&env, Store::Refs, &t, &[]);
    let full = env.blob(Store::Refs, &id, "0/full.jsonl");
    assert_jsonl(&full, "full.jsonl");
    assert_eq!(
        full.iter().filter(|&&b| b == b'\n').count(),
        4,
        "no line was merged:\n{}",
        text(&full)
    );
    for (needle, kept, why) in [
        ("that file is a key", true, "the lines between are kept"),
        (body, false, "the pasted and the cut-off key are redacted"),
        (
            "tail -1 id_rsa: -----END OPENSSH PRIVATE KEY-----",
            true,
            "a lone END marker is no secret",
        ),
    ] {
        assert_eq!(contains(&full, needle), kept, "{why}:\n{}", text(&full));
    }
    assert_eq!(
        redactions(&env.json(Store::Refs, &id, "0/metadata.json")),
        2
    );
}

// ---------------------------------------------------------------------------------------------
// session record and the post-commit condensation
// ---------------------------------------------------------------------------------------------

#[test]
fn session_record_stages_redacted_data_and_the_commit_stores_it_redacted() {
    let env = TestEnv::new();
    let file = env.input(&secret_transcript());
    let prompt = format!("my password={PASSWORD} and {}", gh_token());
    let args = [
        "session",
        "record",
        "--session",
        "sess-rec",
        "--transcript",
        path_str(&file),
        "--prompt",
        &prompt,
    ];
    let out = env.cmd().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let staged = env.common_dir().join("entire/sessions/sess-rec");
    let on_disk = std::fs::read(staged.join("transcript")).expect("staged transcript");
    assert_redacted(&on_disk, "the staged transcript");
    assert_jsonl(&on_disk, "the staged transcript");
    let state = std::fs::read(staged.join("state.json")).unwrap();
    for s in secrets() {
        assert!(
            !contains(&state, &s),
            "state.json has {s}:\n{}",
            text(&state)
        );
    }

    let out = env.cmd().args(["hooks", "install"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    env.write_file("deploy.sh", b"echo deploy\n");
    env.git(&["add", "deploy.sh"]);
    let out = env
        .git_command_in(env.repo(), &["commit", "-q", "-m", "deploy script"])
        .env("PATH", path_with_bins())
        .env("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let msg = env.message("HEAD");
    let id = msg
        .lines()
        .find_map(|l| l.strip_prefix("Entire-Checkpoint: "))
        .unwrap_or_else(|| panic!("the commit is linked:\n{msg}"))
        .trim()
        .to_string();
    let full = env.blob(Store::Refs, &id, "0/full.jsonl");
    assert_redacted(&full, "condensed full.jsonl");
    assert_jsonl(&full, "condensed full.jsonl");
    let prompt_txt = env.blob(Store::Refs, &id, "0/prompt.txt");
    assert_redacted(&prompt_txt, "condensed prompt.txt");
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(
        redactions(&meta),
        6,
        "four in the transcript, two in the prompt"
    );
    // Nothing of the secrets anywhere in the checkpoint's tree.
    let tip = env.tip(Store::Refs, &id);
    for entry in env
        .git(&["ls-tree", "-r", "--name-only", &tip])
        .lines()
        .map(str::to_string)
        .collect::<Vec<_>>()
    {
        let blob = env.git_bytes(&["cat-file", "blob", &format!("{tip}:{entry}")]);
        for s in secrets() {
            assert!(!contains(&blob, &s), "{entry} contains {s}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// backfills
// ---------------------------------------------------------------------------------------------

fn backfill_transcript_redacts(store: Store) {
    let env = TestEnv::new();
    let id = write(&env, store, &clean_transcript(), &["--prompt", "p"]);
    let file = env.input(&secret_transcript());
    let out = env.run(
        store,
        &[
            "backfill",
            "transcript",
            &id,
            "--session",
            "sess-r",
            "--transcript",
            path_str(&file),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let full = env.blob(store, &id, "0/full.jsonl");
    assert_redacted(&full, "backfilled full.jsonl");
    assert_jsonl(&full, "backfilled full.jsonl");
}

fn backfill_summary_redacts(store: Store) {
    let env = TestEnv::new();
    let id = write(&env, store, &clean_transcript(), &["--prompt", "p"]);
    let summary = json!({
        "intent": format!("deploy with password={PASSWORD}"),
        "outcome": format!("pushed using {}", gh_token()),
        "learnings": {
            "repo": [format!("the CI key is {AWS_KEY_ID}")],
            "code": [{"path": "src/deploy.rs", "line": 42, "finding": format!("hard-coded {}", gh_token())}],
            "workflow": ["run the tests first"]
        },
        "friction": [format!("AWS_SECRET_ACCESS_KEY={AWS_SECRET} was in the shell history")],
        "open_items": [],
        "config": {"api_key": SPACED_PASSWORD, "Authorization": format!("Bearer {BEARER}"), "region": "eu"},
        "notes": [format!(r#"sent {{"access_token": "{CLIENT_SECRET}"}} to the API"#)]
    });
    let file = env.input(summary.to_string().as_bytes());
    let out = env.run(
        store,
        &["backfill", "summary", &id, "--summary", path_str(&file)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let raw = env.blob(store, &id, "0/metadata.json");
    assert_redacted(&raw, "session metadata with the summary");
    let meta = parse_json(&raw);
    let s = &meta["summary"];
    assert_eq!(s["intent"], json!("deploy with password=REDACTED"), "{s}");
    assert_eq!(s["outcome"], json!("pushed using REDACTED"));
    assert_eq!(s["learnings"]["repo"], json!(["the CI key is REDACTED"]));
    assert_eq!(s["learnings"]["code"][0]["path"], json!("src/deploy.rs"));
    assert_eq!(s["learnings"]["code"][0]["line"], json!(42));
    assert_eq!(
        s["learnings"]["code"][0]["finding"],
        json!("hard-coded REDACTED")
    );
    assert_eq!(s["learnings"]["workflow"], json!(["run the tests first"]));
    assert!(s["friction"][0].as_str().unwrap().contains("REDACTED"));
    assert_eq!(
        s["config"],
        json!({"api_key": "REDACTED", "Authorization": "Bearer REDACTED", "region": "eu"})
    );
    assert_eq!(
        s["notes"],
        json!([r#"sent {"access_token": "REDACTED"} to the API"#])
    );
    for secret in [SPACED_PASSWORD, BEARER, CLIENT_SECRET] {
        assert!(!contains(&raw, secret), "{secret} is stored");
    }
}

both_stores! {
    backfill_transcript_is_redacted => backfill_transcript_redacts;
    backfill_summary_is_redacted => backfill_summary_redacts;
}

// ---------------------------------------------------------------------------------------------
// issue 13: attribution, files touched and names
// ---------------------------------------------------------------------------------------------

fn backfill_attribution_redacts(store: Store) {
    let env = TestEnv::new();
    let id = write(&env, store, &clean_transcript(), &["--prompt", "p"]);
    let attribution = format!(
        r#"{{"password":"{PASSWORD}","outcome":"api_key=abcd1234efgh","learnings":{{"repo":["{AWS_KEY_ID}"]}},"escaped":"\u0041\u004b\u0049\u0041QWERTYUIOPASDFGH","agent_lines":7}}"#
    );
    let file = env.input(attribution.as_bytes());
    let out = env.run(
        store,
        &[
            "backfill",
            "attribution",
            &id,
            "--attribution",
            path_str(&file),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let raw = env.blob(store, &id, "metadata.json");
    for secret in [PASSWORD, "abcd1234efgh", AWS_KEY_ID, "QWERTYUIOPASDFGH"] {
        assert!(
            !contains(&raw, secret),
            "{secret} is stored:\n{}",
            text(&raw)
        );
    }
    let a = &parse_json(&raw)["combined_attribution"];
    assert_eq!(
        a,
        &json!({"password": "REDACTED", "outcome": "api_key=REDACTED", "learnings": {"repo": ["REDACTED"]}, "escaped": "REDACTED", "agent_lines": 7})
    );
}

both_stores! {
    backfill_attribution_is_redacted => backfill_attribution_redacts;
}

#[test]
fn files_touched_names_and_the_commit_subject_are_redacted() {
    let env = TestEnv::new();
    let subject = format!("deploy with {}", gh_token());
    let id = write(
        &env,
        Store::Refs,
        &clean_transcript(),
        &[
            "--files-touched",
            &format!("keys/{AWS_KEY_ID}.pem"),
            "--files-touched",
            "src/main.rs",
            "--agent",
            &format!("agent password={PASSWORD}"),
            "--commit-subject",
            &subject,
        ],
    );
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(
        meta["files_touched"],
        json!(["keys/REDACTED.pem", "src/main.rs"])
    );
    assert_eq!(meta["agent"], json!("agent password=REDACTED"));
    let message = env.message(&env.tip(Store::Refs, &id));
    assert!(message.contains("deploy with REDACTED"), "{message}");
    for secret in secrets() {
        assert!(
            !message.contains(&secret),
            "{secret} in the commit:\n{message}"
        );
    }
    assert_eq!(redactions(&meta), 3, "{meta}");
}

// ---------------------------------------------------------------------------------------------
// issue 13: JSON escapes
// ---------------------------------------------------------------------------------------------

const STRIPE_KEY: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";

/// `text` with every character written as a `\u` escape.
fn all_escaped(text: &str) -> String {
    text.chars()
        .map(|c| format!("\\u{:04x}", c as u32))
        .collect()
}

/// Each secret shape hidden by escapes, as a transcript line, with what must not survive in the
/// line's decoded strings; the last line has escapes and no secret.
fn escaped_lines() -> Vec<(String, &'static str)> {
    vec![
        (
            r#"{"type":"tool_result","content":"id \u0041\u004b\u0049\u0041QWERTYUIOPASDFGH"}"#.into(),
            "QWERTYUIOPASDFGH",
        ),
        (
            format!(r#"{{"type":"tool_result","content":"ghp\u005f{GH_TOKEN_BODY}"}}"#),
            GH_TOKEN_BODY,
        ),
        (
            format!(
                r#"{{"type":"tool_result","content":"{}"}}"#,
                all_escaped(STRIPE_KEY)
            ),
            "4eC39HqLyjWDarjtT1zdp7dc",
        ),
        (
            format!(
                r#"{{"type":"tool_result","content":"\u002d\u002d\u002d\u002d\u002dBEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\nAAAABG5vbmU=\n"}}"#
            ),
            KEY_BODY,
        ),
        (
            r#"{"type":"tool_result","content":"git clone https:\/\/alice:s3cretpass@example.com\/r.git"}"#.into(),
            "s3cretpass",
        ),
        (
            r#"{"type":"assistant","message":"caf\u00e9 \/ d\u00e9j\u00e0 vu \u001b[0m"}"#.into(),
            "",
        ),
    ]
}

fn escapes_hide_no_secret(store: Store) {
    let env = TestEnv::new();
    let shapes = escaped_lines();
    let mut t = Vec::new();
    for (line, _) in &shapes {
        t.extend_from_slice(line.as_bytes());
        t.push(b'\n');
    }
    let prompt = r#"{"k":"\u0041\u004b\u0049\u0041QWERTYUIOPASDFGH"}"#;
    let id = write(&env, store, &t, &["--prompt", prompt]);
    let full = env.blob(store, &id, "0/full.jsonl");
    let stored: Vec<&[u8]> = full
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let parsed = json_lines(&full, "full.jsonl");
    assert_eq!(parsed.len(), shapes.len(), "{}", text(&full));
    for ((line, secret), (raw, value)) in shapes.iter().zip(stored.iter().zip(&parsed)) {
        if secret.is_empty() {
            assert_eq!(text(raw), *line, "a line without secrets keeps its bytes");
            continue;
        }
        let decoded = value.to_string();
        assert!(
            !decoded.contains(secret) && decoded.contains("REDACTED"),
            "{secret} survives: {}",
            text(raw)
        );
    }
    let prompt_txt = env.blob_text(store, &id, "0/prompt.txt");
    assert_eq!(prompt_txt, r#"{"k":"REDACTED"}"#);
    assert_eq!(
        redactions(&env.json(store, &id, "0/metadata.json")),
        6,
        "five in the transcript, one in the prompt"
    );
}

both_stores! {
    escaped_secrets_are_redacted => escapes_hide_no_secret;
}

// ---------------------------------------------------------------------------------------------
// issue 13: user rules and JSON lines
// ---------------------------------------------------------------------------------------------

/// A transcript for the user-rule cases: strings with quotes, colons, escapes and the secret.
fn user_rule_transcript() -> Vec<u8> {
    let lines = [
        r#"{"content":"export MYCORP_KEY=abc123def"}"#,
        r#"{"type":"tool_result","content":"a: \"quoted\" value\nMYCORP\u005fKEY=zz9\tnext","n":12}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"done: 3 files"}]}}"#,
        "not a JSON line: MYCORP_KEY=raw7 stays raw",
    ];
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}

#[test]
fn user_rules_never_break_transcript_lines() {
    for pattern in [r"MYCORP_KEY=\S+", ".+", r#"\""#, ":"] {
        let env = TestEnv::new();
        user_rule(&env, "mycorp", pattern);
        let t = user_rule_transcript();
        let id = write(&env, Store::Refs, &t, &[]);
        let full = env.blob(Store::Refs, &id, "0/full.jsonl");
        let stored: Vec<&[u8]> = full.split(|&b| b == b'\n').collect();
        assert_eq!(
            stored.len(),
            5,
            "{pattern}: no line merged:\n{}",
            text(&full)
        );
        for line in &stored[..3] {
            serde_json::from_slice::<Value>(line).unwrap_or_else(|e| {
                panic!("{pattern}: a line is no longer JSON ({e}): {}", text(line))
            });
        }
    }
}

#[test]
fn a_user_rule_matches_the_decoded_string_and_the_line_stays_json() {
    let env = TestEnv::new();
    user_rule(&env, "mycorp", r"MYCORP_KEY=\S+");
    let id = write(&env, Store::Refs, &user_rule_transcript(), &[]);
    let full = env.blob(Store::Refs, &id, "0/full.jsonl");
    let lines: Vec<&str> = std::str::from_utf8(&full).unwrap().lines().collect();
    assert_eq!(lines[0], r#"{"content":"export REDACTED"}"#);
    let second: Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(
        second["content"],
        json!("a: \"quoted\" value\nREDACTED\tnext"),
        "the escaped name is found, the tab after the value kept"
    );
    assert_eq!(
        lines[2],
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"done: 3 files"}]}}"#,
        "an unmatched line keeps its bytes"
    );
    assert_eq!(lines[3], "not a JSON line: REDACTED stays raw");
    assert_eq!(
        redactions(&env.json(Store::Refs, &id, "0/metadata.json")),
        3
    );
}

/// A rule of the user's own settings that can match the empty string fails the write (a
/// committed one is set aside with a warning).
#[test]
fn a_user_rule_that_can_match_the_empty_string_is_refused() {
    for pattern in ["", ".*", r"\b", "x?"] {
        let env = TestEnv::new();
        user_rule_in(&env, "settings.local.json", "greedy-rule", pattern);
        let before = env.refs_snapshot();
        let out = write_out(&env, Store::Refs, &secret_transcript(), &["--prompt", "p"]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{pattern:?}: exit 1:\n{stderr}");
        for needle in [
            "greedy-rule",
            ".git/entire/settings.local.json",
            "empty string",
        ] {
            assert!(
                stderr.contains(needle),
                "{pattern:?}: names {needle}:\n{stderr}"
            );
        }
        assert_eq!(env.refs_snapshot(), before, "{pattern:?}: nothing written");
    }
}

#[test]
fn session_record_redacts_what_it_stages_with_the_user_rules() {
    let env = TestEnv::new();
    user_rule(&env, "mycorp", r"MYCORP_KEY=\S+");
    crate::commit_hooks::record(
        &env,
        env.repo(),
        "sess-esc",
        Some(&user_rule_transcript()),
        &[
            "--files-touched",
            &format!("keys/{AWS_KEY_ID}.pem"),
            "--prompt",
            r#"{"k":"\u0041\u004b\u0049\u0041QWERTYUIOPASDFGH"}"#,
        ],
    );
    let staged = env.common_dir().join("entire/sessions/sess-esc");
    let transcript = std::fs::read(staged.join("transcript")).unwrap();
    let lines: Vec<&[u8]> = transcript.split(|&b| b == b'\n').collect();
    let json = json_lines(&lines[..3].join(&b'\n'), "staged transcript");
    assert_eq!(json[0], json!({"content": "export REDACTED"}));
    assert_eq!(text(lines[3]), "not a JSON line: REDACTED stays raw");
    let state = std::fs::read(staged.join("state.json")).unwrap();
    for secret in ["abc123def", "zz9", AWS_KEY_ID, "QWERTYUIOPASDFGH"] {
        assert!(
            !contains(&transcript, secret) && !contains(&state, secret),
            "{secret} is staged"
        );
    }
    let state = parse_json(&state);
    assert_eq!(state["files_touched"], json!(["keys/REDACTED.pem"]));
    assert_eq!(state["redactions"], json!(5));
}

// ---------------------------------------------------------------------------------------------
// The commit's write skips redacting a staged transcript again only when nothing changed since
// `session record` redacted it: the rules (their fingerprint) and the bytes (their hash).
// ---------------------------------------------------------------------------------------------

/// A token no built-in rule takes for a secret, and a user rule that does.
const BUILD_ID: &str = "ZX-99887766";
const BUILD_ID_RULE: &str = r"ZX-[0-9]{8}";

/// Records `transcript` as session `sess-skip` in the hooked repository of `env`, runs
/// `between` (a change after the record), commits through the hooks on the git-refs primary
/// and returns the stored `full.jsonl`, read with `git cat-file`.
fn staged_then_committed(env: &TestEnv, transcript: &[u8], between: impl FnOnce()) -> Vec<u8> {
    crate::commit_hooks::install_hooks(env);
    crate::commit_hooks::record(env, env.repo(), "sess-skip", Some(transcript), &[]);
    between();
    let (head, _) = crate::commit_hooks::commit(env, Some(Store::Refs), "a.txt", "work");
    let id = crate::commit_hooks::the_trailer(env, &head);
    let full = env.blob(Store::Refs, &id, "0/full.jsonl");
    // The commit hashes the staged bytes once: the hash stored is that of the bytes stored.
    assert_eq!(
        env.blob_text(Store::Refs, &id, "0/content_hash.txt"),
        format!("sha256:{}", sha256_hex(&full))
    );
    full
}

/// The staged transcript of session `sess-skip`.
fn staged_transcript(env: &TestEnv) -> std::path::PathBuf {
    env.common_dir()
        .join("entire/sessions/sess-skip/transcript")
}

#[test]
fn the_commit_redacts_a_staged_transcript_again_when_the_rules_changed_since_the_record() {
    let build_line = format!(r#"{{"type":"user","message":"the build id is {BUILD_ID}"}}"#);
    let with_build_id = crate::commit_hooks::lines(&[&build_line]);
    // A user rule added to the local settings, or to the committed ones, after the record.
    for file in ["settings.local.json", "settings.json"] {
        let env = TestEnv::new();
        let full = staged_then_committed(&env, &with_build_id, || {
            let staged = std::fs::read(staged_transcript(&env)).unwrap();
            assert!(contains(&staged, BUILD_ID), "no rule took it at record");
            user_rule_in(&env, file, "build ids", BUILD_ID_RULE);
        });
        assert!(
            !contains(&full, BUILD_ID) && contains(&full, "REDACTED"),
            "a rule of {file} added after the record:\n{}",
            text(&full)
        );
    }
    // Redaction off when the session was recorded, on (the default) when it is committed.
    let env = TestEnv::new();
    write_settings_text(
        &env,
        "settings.local.json",
        r#"{"redaction":{"enabled":false}}"#,
    );
    let full = staged_then_committed(&env, &secret_transcript(), || {
        let staged = std::fs::read(staged_transcript(&env)).unwrap();
        assert!(contains(&staged, &gh_token()), "staged verbatim");
        std::fs::remove_file(env.repo().join(".git/entire/settings.local.json")).unwrap();
    });
    assert_redacted(&full, "recorded with redaction off");
}

#[test]
fn the_commit_redacts_bytes_changed_in_a_staged_transcript_since_the_record() {
    let clean = crate::commit_hooks::lines(&[crate::commit_hooks::LINE_1]);
    // Appended to the staged file, by anything but `session record`.
    let env = TestEnv::new();
    let full = staged_then_committed(&env, &clean, || {
        let mut staged = std::fs::read(staged_transcript(&env)).unwrap();
        staged.extend_from_slice(&secret_transcript());
        std::fs::write(staged_transcript(&env), staged).unwrap();
    });
    assert_redacted(&full, "secrets appended after the record");
    // Replaced in place, at the same length.
    let env = TestEnv::new();
    let padded = {
        let mut t = secret_transcript();
        t.iter_mut()
            .for_each(|b| *b = if *b == b'\n' { b'\n' } else { b' ' });
        t
    };
    let full = staged_then_committed(&env, &padded, || {
        let staged = std::fs::read(staged_transcript(&env)).unwrap();
        assert_eq!(staged.len(), secret_transcript().len());
        std::fs::write(staged_transcript(&env), secret_transcript()).unwrap();
    });
    assert_redacted(&full, "secrets written over the staged bytes");
}

#[test]
fn a_staged_transcript_unchanged_since_the_record_is_stored_as_staged() {
    let env = TestEnv::new();
    user_rule_in(&env, "settings.local.json", "build ids", BUILD_ID_RULE);
    let mut transcript = secret_transcript();
    transcript.extend(crate::commit_hooks::lines(&[&format!(
        r#"{{"type":"user","message":"the build id is {BUILD_ID}"}}"#
    )]));
    let mut staged = Vec::new();
    let full = staged_then_committed(&env, &transcript, || {
        staged = std::fs::read(staged_transcript(&env)).unwrap();
    });
    assert_redacted(&full, "the checkpoint");
    assert!(!contains(&full, BUILD_ID));
    assert_eq!(
        text(&full),
        text(&staged),
        "the staged bytes, stored as they are"
    );
}

/// A session ID is stored as it is (metadata, the `Entire-Session:` trailer, a directory under
/// `.git/entire/sessions/`): one holding a token is refused, without echoing the token, and
/// nothing is written.
#[test]
fn a_session_id_holding_a_token_is_refused_and_not_echoed() {
    let env = TestEnv::new();
    let before = env.refs_snapshot();
    let session = format!("sess-{}", gh_token());
    let out = env
        .write(Store::Refs, &session)
        .transcript_bytes(&clean_transcript())
        .run();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("holds a secret"), "{stderr}");
    assert!(stderr.contains("sess-REDACTED"), "{stderr}");
    assert!(!contains(&out.stderr, &gh_token()), "{stderr}");
    assert_eq!(env.refs_snapshot(), before);
}
