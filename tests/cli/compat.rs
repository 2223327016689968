//! Reading what other generations wrote, and rewriting it without losing data (docs/decisions.md,
//! "Write the reference's format, read every generation's"; docs/format.md, "Metadata fields" and
//! "JSON").

use serde_json::{json, Value};

use crate::env::{checkpoint_ref, keys, parse_json, sha256_hex, Store, TestEnv};
use crate::fixtures::{
    blob, hand_made_branch, hand_made_ref, tree, Node, ROOT_KEY_ORDER, SESSION_KEY_ORDER,
    TRANSCRIPT_2,
};

const LEGACY_ID: &str = "c0ffee123456";
const LEGACY_TRANSCRIPT: &[u8] = b"{\"type\":\"user\",\"message\":\"legacy hello\"}\n";

/// Root summary as an old generation could have written it: sorted keys, compact, legacy
/// `checkpoint_version`, `context` entries, a null array and a key we do not model.
fn legacy_root(prefix: &str) -> String {
    format!(
        concat!(
            "{{\"checkpoint_id\":\"{id}\",\"checkpoint_version\":\"branch-v1\",",
            "\"checkpoints_count\":2,\"cli_version\":\"0.8.1\",\"files_touched\":null,",
            "\"future_root_key\":{{\"nested\":[1,2]}},",
            "\"sessions\":[{{\"content_hash\":\"{p}/0/content_hash.txt\",\"context\":\"{p}/0/context.md\",",
            "\"metadata\":\"{p}/0/metadata.json\",\"prompt\":\"{p}/0/prompt.txt\",",
            "\"transcript\":\"{p}/0/full.jsonl\"}}],\"strategy\":\"manual-commit\"}}"
        ),
        id = LEGACY_ID,
        p = prefix
    )
}

fn legacy_session() -> String {
    format!(
        r#"{{
  "checkpoint_id": "{LEGACY_ID}",
  "session_id": "legacy-sess",
  "strategy": "manual-commit",
  "created_at": "2026-06-30T10:00:00.5Z",
  "checkpoints_count": 2,
  "files_touched": null,
  "agent": "Claude Code",
  "model": "",
  "transcript_path": "~/.claude/projects/demo/legacy.jsonl",
  "token_usage": {{
    "input_tokens": 1,
    "cache_creation_tokens": 0,
    "cache_read_tokens": 0,
    "output_tokens": 2,
    "api_call_count": 1,
    "cost_usd": 0.5
  }},
  "future_session_key": "keep me"
}}
"#
    )
}

fn legacy_node(prefix: &str) -> Node {
    let hash = format!("sha256:{}", sha256_hex(LEGACY_TRANSCRIPT));
    tree(vec![
        ("metadata.json", blob(legacy_root(prefix).as_bytes())),
        (
            "0",
            tree(vec![
                ("metadata.json", blob(legacy_session().as_bytes())),
                ("full.jsonl", blob(LEGACY_TRANSCRIPT)),
                ("content_hash.txt", blob(hash.as_bytes())),
                ("prompt.txt", blob(b"legacy prompt")),
                ("context.md", blob(b"# Context\n\nlegacy context\n")),
            ]),
        ),
    ])
}

fn make_legacy(env: &TestEnv, store: Store) {
    match store {
        Store::Refs => {
            hand_made_ref(env, &checkpoint_ref(LEGACY_ID), LEGACY_ID, &legacy_node(""));
        }
        Store::Branch => {
            hand_made_branch(env, LEGACY_ID, &legacy_node("/c0/ffee123456"));
        }
    }
}

/// The keys of `v` that `order` knows appear in that order (unknown keys may be anywhere).
fn assert_known_keys_in_order(v: &Value, order: &[&str], what: &str) {
    let positions: Vec<usize> = keys(v)
        .iter()
        .filter_map(|k| order.iter().position(|o| o == k))
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "{what}: known keys out of order: {:?}",
        keys(v)
    );
}

both_stores! {
    legacy_checkpoint_is_read => legacy_checkpoint_is_read;
    rewrite_keeps_unknown_keys => rewrite_keeps_unknown_keys;
    another_session_keeps_legacy_slot => another_session_keeps_legacy_slot;
}

fn legacy_checkpoint_is_read(store: Store) {
    let env = TestEnv::new();
    make_legacy(&env, store);
    let v = env.ok_json(store, &["show", LEGACY_ID, "--json"]);
    assert_eq!(v["checkpoint_id"], json!(LEGACY_ID));
    assert_eq!(v["store"], json!(store.name()));
    assert_eq!(v["commit"], json!(env.tip(store, LEGACY_ID)));
    let stored_root: Value = serde_json::from_str(&legacy_root(match store {
        Store::Refs => "",
        Store::Branch => "/c0/ffee123456",
    }))
    .unwrap();
    assert_eq!(v["summary"], stored_root, "summary as stored");
    assert_eq!(v["summary"]["files_touched"], Value::Null);
    assert_eq!(v["summary"]["future_root_key"], json!({"nested": [1, 2]}));
    let stored_session: Value = serde_json::from_str(&legacy_session()).unwrap();
    assert_eq!(v["sessions"], json!([stored_session]), "sessions as stored");

    let list = env.ok_json(store, &["list", "--json"]);
    assert_eq!(list[0]["checkpoint_id"], json!(LEGACY_ID));
    assert_eq!(list[0]["session_ids"], json!(["legacy-sess"]));

    let t = env.ok(store, &["show", LEGACY_ID, "--transcript"]);
    assert!(t.contains("legacy hello"), "{t}");
    let out = env.run(store, &["cat", LEGACY_ID, "0/context.md"]);
    crate::env::assert_success(&out, &["cat 0/context.md"]);
    assert_eq!(out.stdout, b"# Context\n\nlegacy context\n");
}

fn rewrite_keeps_unknown_keys(store: Store) {
    let env = TestEnv::new();
    make_legacy(&env, store);
    let before = env.tip(store, LEGACY_ID);
    let f = env.input_file("new.jsonl", TRANSCRIPT_2);
    env.ok(
        store,
        &[
            "write",
            "--session",
            "legacy-sess",
            "--id",
            LEGACY_ID,
            "--transcript",
            f.to_str().unwrap(),
            "--files-touched",
            "a.go",
        ],
    );
    let tip = env.tip(store, LEGACY_ID);
    assert_eq!(env.parents(&tip), [before]);
    assert_eq!(env.blob(store, LEGACY_ID, "0/full.jsonl"), TRANSCRIPT_2);

    let meta = parse_json(&env.blob(store, LEGACY_ID, "0/metadata.json"));
    assert_eq!(meta["session_id"], json!("legacy-sess"));
    assert_eq!(
        meta["future_session_key"],
        json!("keep me"),
        "unknown session key preserved: {meta}"
    );
    assert_known_keys_in_order(&meta, SESSION_KEY_ORDER, "0/metadata.json");

    let root = parse_json(&env.blob(store, LEGACY_ID, "metadata.json"));
    assert_eq!(
        root["future_root_key"],
        json!({"nested": [1, 2]}),
        "unknown root key preserved: {root}"
    );
    assert_eq!(
        root["sessions"].as_array().unwrap().len(),
        1,
        "same slot reused"
    );
    assert_eq!(root["files_touched"], json!(["a.go"]));
    assert_known_keys_in_order(&root, ROOT_KEY_ORDER, "metadata.json");
}

fn another_session_keeps_legacy_slot(store: Store) {
    let env = TestEnv::new();
    make_legacy(&env, store);
    let slot0 = env.rev(&env.spec(store, LEGACY_ID, "0")).unwrap();
    let f = env.input_file("new.jsonl", TRANSCRIPT_2);
    env.ok(
        store,
        &[
            "write",
            "--session",
            "new-sess",
            "--id",
            LEGACY_ID,
            "--transcript",
            f.to_str().unwrap(),
        ],
    );
    assert_eq!(
        env.rev(&env.spec(store, LEGACY_ID, "0")).unwrap(),
        slot0,
        "legacy slot 0 (with context.md) untouched"
    );
    let root = parse_json(&env.blob(store, LEGACY_ID, "metadata.json"));
    let sessions = root["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    assert_eq!(
        env.json(store, LEGACY_ID, "1/metadata.json")["session_id"],
        json!("new-sess")
    );
    assert_eq!(root["future_root_key"], json!({"nested": [1, 2]}));
    let v = env.ok_json(store, &["show", LEGACY_ID, "--json"]);
    assert_eq!(v["sessions"][0]["session_id"], json!("legacy-sess"));
    assert_eq!(v["sessions"][1]["session_id"], json!("new-sess"));
}

both_stores! {
    chunked_transcript_is_reassembled => chunked_transcript_is_reassembled;
}

/// A transcript stored in chunks (`full.jsonl`, `full.jsonl.001`, …; docs/format.md, "One
/// checkpoint"):
/// each chunk lost its trailing newline and the reader joins them with one `\n`.
fn chunked_transcript_is_reassembled(store: Store) {
    let env = TestEnv::new();
    let id = "c4c4c4c4c4c4";
    let whole = b"{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n";
    let p = crate::env::tree_prefix(store, id);
    let node = tree(vec![
        (
            "metadata.json",
            blob(crate::fixtures::root_metadata_json(id, &p).as_bytes()),
        ),
        (
            "0",
            tree(vec![
                (
                    "metadata.json",
                    blob(crate::fixtures::session_metadata_json(id, "hand-sess").as_bytes()),
                ),
                ("full.jsonl", blob(b"{\"n\":1}\n{\"n\":2}")),
                ("full.jsonl.001", blob(b"{\"n\":3}")),
                ("full.jsonl.002", blob(b"{\"n\":4}\n")),
                (
                    "content_hash.txt",
                    blob(format!("sha256:{}", sha256_hex(whole)).as_bytes()),
                ),
                ("prompt.txt", blob(b"do the thing")),
            ]),
        ),
    ]);
    match store {
        Store::Refs => {
            hand_made_ref(&env, &checkpoint_ref(id), id, &node);
        }
        Store::Branch => {
            hand_made_branch(&env, id, &node);
        }
    }
    let out = env.run(store, &["cat", id, "0/full.jsonl"]);
    crate::env::assert_success(&out, &["cat 0/full.jsonl"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(whole),
        "chunks joined with a single newline"
    );
    let shown = env.ok(store, &["show", id, "--transcript"]);
    for n in 1..=4 {
        assert!(
            shown.contains(&format!("{{\"n\":{n}}}")),
            "line {n} shown:\n{shown}"
        );
    }
}
