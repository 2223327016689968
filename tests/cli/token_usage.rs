//! Token usage comes from the transcript: `write` and the commit that condenses a staged
//! session derive each checkpoint's `token_usage` from the transcript of every agent that
//! records usage (fixtures in `tests/fixtures/transcripts/`, in the shapes of the corpus's real
//! transcripts), over the part of the transcript the checkpoint covers; `--token-usage` still
//! wins; agents that record no usage get none; a bad `--token-usage` is a usage error that
//! writes nothing. Results are read with `git cat-file`. (The figures are checked against the
//! reference's on real transcripts by `tests/corpus_tokens.py`, from `tests/corpus.sh`.)

use std::path::Path;

use serde_json::{json, Value};

use crate::commit_hooks::{commit, install_hooks, record, the_trailer};
use crate::env::{assert_code, transcript_fixture, Store, TestEnv};

/// Token usage as stored: the five counters.
fn usage(input: i64, creation: i64, read: i64, output: i64, calls: i64) -> Value {
    json!({
        "input_tokens": input,
        "cache_creation_tokens": creation,
        "cache_read_tokens": read,
        "output_tokens": output,
        "api_call_count": calls,
    })
}

/// `write` of checkpoint `id` with the transcript `file` and `extra` arguments, under the
/// git-branch store; returns session 0's metadata and the root summary, read with git.
fn written(env: &TestEnv, id: &str, file: &Path, extra: &[&str]) -> (Value, Value) {
    env.write(Store::Branch, "s1")
        .id(id)
        .transcript(file)
        .args(extra)
        .ok();
    (
        env.json(Store::Branch, id, "0/metadata.json"),
        env.json(Store::Branch, id, "metadata.json"),
    )
}

#[test]
fn write_derives_token_usage_from_every_agent_transcript_that_records_it() {
    let env = TestEnv::new();
    // Input, cache creation, cache read, output, calls. Claude Code: a streamed reply logs its
    // usage once per content block, counted once (the last). Codex: cumulative totals, input
    // the uncached part, a repeated event still a call. Copilot CLI: the shutdown's totals.
    let cases: &[(&str, Option<[i64; 5]>)] = &[
        ("claude-code.jsonl", Some([4, 2150, 22000, 124, 2])),
        ("codex.jsonl", Some([9076, 0, 17920, 422, 3])),
        ("gemini-cli.json", Some([6343, 0, 0, 38, 1])),
        ("opencode.json", Some([7174, 50, 1000, 185, 1])),
        ("copilot-cli.jsonl", Some([20100, 120, 15000, 171, 1])),
        ("pi.jsonl", Some([6, 2547, 0, 113, 1])),
        ("cursor.jsonl", None),
        ("kiro.json", None),
        ("droid.jsonl", None),
    ];
    for (n, (file, expected)) in cases.iter().enumerate() {
        let expected = expected.map(|[i, c, r, o, calls]| usage(i, c, r, o, calls));
        let (session, root) = written(
            &env,
            &format!("b0000000000{n}"),
            &transcript_fixture(file),
            &[],
        );
        assert_eq!(
            session.get("token_usage"),
            expected.as_ref(),
            "{file}: session"
        );
        assert_eq!(
            root.get("token_usage"),
            expected.as_ref(),
            "{file}: summary"
        );
    }
}

#[test]
fn a_given_token_usage_wins_and_a_bad_one_is_a_usage_error_that_writes_nothing() {
    let env = TestEnv::new();
    let given = r#"{"input_tokens":1,"output_tokens":2,"cost_usd":0.5}"#;
    let (session, _) = written(
        &env,
        "b00000000011",
        &transcript_fixture("claude-code.jsonl"),
        &["--token-usage", given],
    );
    assert_eq!(session["token_usage"]["input_tokens"], 1);
    assert_eq!(session["token_usage"]["output_tokens"], 2);
    assert_eq!(session["token_usage"]["cost_usd"], 0.5);

    let before = env.refs_snapshot();
    for bad in ["oops", "[1]", r#"{"input_tokens":"many"}"#] {
        let out = env.run(
            Store::Branch,
            &["write", "--session", "s2", "--token-usage", bad],
        );
        let err = assert_code(&out, 2, bad);
        assert!(err.contains("--token-usage"), "{bad}: {err}");
        let out = env.run(
            Store::Branch,
            &["session", "record", "--session", "s2", "--token-usage", bad],
        );
        assert_code(&out, 2, bad);
    }
    assert_eq!(env.refs_snapshot(), before, "nothing written");
}

/// Each checkpoint of a session counts only what its window of the transcript holds: the
/// second commit's checkpoint, the Codex calls made since the first.
#[test]
fn each_condensed_checkpoint_counts_the_calls_of_its_own_window() {
    let env = TestEnv::new();
    install_hooks(&env);
    let full = std::fs::read(transcript_fixture("codex.jsonl")).unwrap();
    let first: Vec<u8> = full
        .split_inclusive(|&b| b == b'\n')
        .take(4)
        .flatten()
        .copied()
        .collect();
    record(&env, env.repo(), "codex-1", Some(&first), &[]);
    let (one, _) = commit(&env, None, "a.txt", "first");
    record(&env, env.repo(), "codex-1", Some(&full), &[]);
    let (two, _) = commit(&env, None, "b.txt", "second");
    let store = Store::Branch;
    let one = env.json(store, &the_trailer(&env, &one), "0/metadata.json");
    let two = env.json(store, &the_trailer(&env, &two), "0/metadata.json");
    assert_eq!(one["token_usage"], usage(8742, 0, 4480, 305, 1));
    assert_eq!(two["token_usage"], usage(334, 0, 13440, 117, 2));
    assert_eq!(two["checkpoint_transcript_start"], 4);

    // An OpenCode session is one JSON document: its window counts messages, not lines.
    let doc = std::fs::read(transcript_fixture("opencode.json")).unwrap();
    record(&env, env.repo(), "opencode-1", Some(&doc), &[]);
    let (three, _) = commit(&env, None, "c.txt", "third");
    let three = env.json(store, &the_trailer(&env, &three), "0/metadata.json");
    assert_eq!(three["token_usage"], usage(7174, 50, 1000, 185, 1));
    let mut grown: Value = serde_json::from_slice(&doc).unwrap();
    let messages = grown["messages"].as_array().unwrap().len();
    let mut reply = grown["messages"][1].clone();
    reply["info"]["id"] = "msg_second".into();
    reply["info"]["tokens"] = json!({"input": 10, "output": 20, "cache": {"read": 30, "write": 0}});
    grown["messages"].as_array_mut().unwrap().push(reply);
    let grown = serde_json::to_vec_pretty(&grown).unwrap();
    record(&env, env.repo(), "opencode-1", Some(&grown), &[]);
    let (four, _) = commit(&env, None, "d.txt", "fourth");
    let four = env.json(store, &the_trailer(&env, &four), "0/metadata.json");
    assert_eq!(four["checkpoint_transcript_start"], messages);
    assert_eq!(four["token_usage"], usage(10, 0, 30, 20, 1));
}
