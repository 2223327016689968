//! `log <ID>`: the commits of one checkpoint, newest first.

use serde_json::{json, Value};

use crate::env::{assert_code, Store, TestEnv, V1_BRANCH};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2};

fn log(env: &TestEnv, store: Store, id: &str) -> Vec<Value> {
    let v = env.ok_json(store, &["log", id, "--json"]);
    v.as_array()
        .unwrap_or_else(|| panic!("log --json is an array: {v}"))
        .clone()
}

fn backfill_transcript(env: &TestEnv, store: Store, id: &str) {
    let f = env.input_file("final.jsonl", TRANSCRIPT_2);
    env.ok(
        store,
        &[
            "backfill",
            "transcript",
            id,
            "--session",
            "sess-1",
            "--transcript",
            f.to_str().unwrap(),
        ],
    );
}

both_stores! {
    missing_checkpoint_exits_3 => missing_checkpoint_exits_3;
}

fn missing_checkpoint_exits_3(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let out = env.run(store, &["log", "0badc0ffee00", "--json"]);
    assert_code(&out, 3, "log of a missing checkpoint");
}

#[test]
fn refs_log_after_write_and_backfill() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    backfill_transcript(&env, Store::Refs, HEX_ID);
    let entries = log(&env, Store::Refs, HEX_ID);
    assert_eq!(entries.len(), 2, "{entries:?}");
    let ref_name = env.store_ref(Store::Refs, HEX_ID);
    let commits = env.git(&["rev-list", &ref_name]);
    let commits: Vec<&str> = commits.lines().collect();
    assert_eq!(entries[0]["commit"], json!(commits[0]));
    assert_eq!(entries[1]["commit"], json!(commits[1]));
    assert_eq!(
        entries[0]["subject"],
        json!(format!("Finalize transcript for Checkpoint: {HEX_ID}"))
    );
    assert_eq!(
        entries[1]["subject"],
        json!(format!("Checkpoint: {HEX_ID}"))
    );
    // Times are `*_at` as everywhere (the first releases' `time` is gone: CHANGELOG.md).
    for e in &entries {
        assert!(
            e["authored_at"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{e}"
        );
        assert!(e.get("time").is_none(), "{e}");
    }
}

#[test]
fn branch_log_lists_only_this_checkpoints_commits() {
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    let first = env.rev(V1_BRANCH).unwrap();
    write_std(&env, Store::Branch, HEX_ID_2, "sess-9", TRANSCRIPT);
    backfill_transcript(&env, Store::Branch, HEX_ID);
    let last = env.rev(V1_BRANCH).unwrap();
    let entries = log(&env, Store::Branch, HEX_ID);
    let subjects: Vec<&str> = entries
        .iter()
        .map(|e| e["subject"].as_str().expect("subject"))
        .collect();
    assert_eq!(
        subjects,
        [
            format!("Finalize transcript for Checkpoint: {HEX_ID}"),
            format!("Checkpoint: {HEX_ID}")
        ],
        "another checkpoint's commit and the bootstrap commit are not this checkpoint's history"
    );
    assert_eq!(entries[0]["commit"], json!(last));
    assert_eq!(entries[1]["commit"], json!(first));
}
