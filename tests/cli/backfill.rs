//! `backfill transcript|summary|attribution` (docs/format.md, "Backfills" and "Commit messages").

use serde_json::json;

use crate::env::{assert_code, assert_failed, sha256_hex, Store, TestEnv};
use crate::fixtures::{
    assert_json_format, assert_key_order, write_std, HEX_ID, ROOT_KEY_ORDER, ROOT_REQUIRED,
    SESSION_KEY_ORDER, SESSION_REQUIRED, TRANSCRIPT, TRANSCRIPT_2,
};

both_stores! {
    transcript_replaces_and_short_circuits => transcript_replaces_and_short_circuits;
    summary_targets_the_named_or_latest_session => summary_targets_the_named_or_latest_session;
    attribution_sets_combined_attribution => attribution_sets_combined_attribution;
    missing_checkpoint_exits_3 => missing_checkpoint_exits_3;
    invalid_summary_json_changes_nothing => invalid_summary_json_changes_nothing;
}

/// Backfill messages are one line, no trailers (a trailing newline is tolerated).
fn assert_single_line_message(env: &TestEnv, commit: &str, expected: &str) {
    let msg = env.message(commit);
    let body = msg.strip_suffix('\n').unwrap_or(&msg);
    assert_eq!(body, expected, "commit message of {commit}: {msg:?}");
}

fn two_sessions(env: &TestEnv, store: Store) {
    write_std(env, store, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(env, store, HEX_ID, "sess-2", TRANSCRIPT_2);
}

fn transcript_replaces_and_short_circuits(store: Store) {
    let env = TestEnv::new();
    two_sessions(&env, store);
    let before = env.tip(store, HEX_ID);
    let slot1 = env.rev(&env.spec(store, HEX_ID, "1")).unwrap();
    let meta0 = env.blob(store, HEX_ID, "0/metadata.json");

    let final_transcript = b"{\"type\":\"user\",\"message\":\"final words\"}\n";
    let f = env.input_file("final.jsonl", final_transcript);
    let args = [
        "backfill",
        "transcript",
        HEX_ID,
        "--session",
        "sess-1",
        "--transcript",
        f.to_str().unwrap(),
    ];
    env.ok(store, &args);
    let tip = env.tip(store, HEX_ID);
    assert_ne!(tip, before, "a new commit");
    assert_eq!(env.parents(&tip), [before]);
    assert_single_line_message(
        &env,
        &tip,
        &format!("Finalize transcript for Checkpoint: {HEX_ID}"),
    );
    assert_eq!(env.blob(store, HEX_ID, "0/full.jsonl"), final_transcript);
    assert_eq!(
        env.blob_text(store, HEX_ID, "0/content_hash.txt"),
        format!("sha256:{}", sha256_hex(final_transcript))
    );
    assert_eq!(env.blob_text(store, HEX_ID, "0/prompt.txt"), "do the thing");
    assert_eq!(
        env.rev(&env.spec(store, HEX_ID, "1")).unwrap(),
        slot1,
        "other session untouched"
    );
    let new_meta0 = env.json(store, HEX_ID, "0/metadata.json");
    assert_eq!(new_meta0["session_id"], json!("sess-1"));
    assert_eq!(
        new_meta0,
        crate::env::parse_json(&meta0),
        "session metadata unchanged by a transcript backfill"
    );

    // Same bytes again: short-circuit, no new commit.
    env.ok(store, &args);
    assert_eq!(
        env.tip(store, HEX_ID),
        tip,
        "unchanged transcript makes no commit"
    );
}

fn summary_targets_the_named_or_latest_session(store: Store) {
    let env = TestEnv::new();
    two_sessions(&env, store);
    let before = env.tip(store, HEX_ID);
    let summary1 = json!({
        "intent": "Fix <parser> & tests",
        "outcome": "Parser fixed",
        "learnings": {"repo": ["uses make"], "code": [], "workflow": []},
        "friction": [],
        "open_items": []
    });
    let f = env.input_file("summary1.json", summary1.to_string().as_bytes());
    env.ok(
        store,
        &[
            "backfill",
            "summary",
            HEX_ID,
            "--session",
            "sess-1",
            "--summary",
            f.to_str().unwrap(),
        ],
    );
    let tip = env.tip(store, HEX_ID);
    assert_eq!(env.parents(&tip), [before]);
    assert_single_line_message(
        &env,
        &tip,
        &format!("Update summary for checkpoint {HEX_ID} (session: sess-1)"),
    );
    let raw0 = env.blob(store, HEX_ID, "0/metadata.json");
    assert_json_format(&raw0, "0/metadata.json");
    let m0 = env.json(store, HEX_ID, "0/metadata.json");
    assert_key_order(&m0, SESSION_KEY_ORDER, SESSION_REQUIRED, "0/metadata.json");
    assert_eq!(m0["summary"]["intent"], json!("Fix <parser> & tests"));
    assert_eq!(m0["summary"]["outcome"], json!("Parser fixed"));
    let m1 = env.json(store, HEX_ID, "1/metadata.json");
    assert!(m1.get("summary").is_none(), "sess-2 has no summary: {m1}");

    // Without --session the latest session gets it.
    let summary2 = json!({"intent": "Second intent", "outcome": "Second outcome"});
    let f2 = env.input_file("summary2.json", summary2.to_string().as_bytes());
    env.ok(
        store,
        &[
            "backfill",
            "summary",
            HEX_ID,
            "--summary",
            f2.to_str().unwrap(),
        ],
    );
    let tip2 = env.tip(store, HEX_ID);
    assert_eq!(env.parents(&tip2), [tip]);
    assert_single_line_message(
        &env,
        &tip2,
        &format!("Update summary for checkpoint {HEX_ID} (session: sess-2)"),
    );
    let m1 = env.json(store, HEX_ID, "1/metadata.json");
    assert_eq!(m1["summary"]["intent"], json!("Second intent"));
    let m0 = env.json(store, HEX_ID, "0/metadata.json");
    assert_eq!(m0["summary"]["intent"], json!("Fix <parser> & tests"));
}

fn attribution_sets_combined_attribution(store: Store) {
    let env = TestEnv::new();
    two_sessions(&env, store);
    let before = env.tip(store, HEX_ID);
    let slot0 = env.rev(&env.spec(store, HEX_ID, "0")).unwrap();
    let attribution = json!({
        "calculated_at": "2026-10-01T19:12:01Z",
        "agent_lines": 7,
        "agent_removed": 0,
        "human_added": 3,
        "human_modified": 0,
        "human_removed": 0,
        "total_committed": 10,
        "total_lines_changed": 10,
        "agent_percentage": 70,
        "metric_version": 2
    });
    let f = env.input_file("attr.json", attribution.to_string().as_bytes());
    env.ok(
        store,
        &[
            "backfill",
            "attribution",
            HEX_ID,
            "--attribution",
            f.to_str().unwrap(),
        ],
    );
    let tip = env.tip(store, HEX_ID);
    assert_eq!(env.parents(&tip), [before]);
    assert_single_line_message(
        &env,
        &tip,
        &format!("Update checkpoint summary for {HEX_ID}"),
    );
    let raw = env.blob(store, HEX_ID, "metadata.json");
    assert_json_format(&raw, "metadata.json");
    let root = env.json(store, HEX_ID, "metadata.json");
    assert_key_order(&root, ROOT_KEY_ORDER, ROOT_REQUIRED, "metadata.json");
    assert_eq!(root["combined_attribution"]["agent_lines"], json!(7));
    assert_eq!(root["combined_attribution"]["agent_percentage"], json!(70));
    assert_eq!(root["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(
        env.rev(&env.spec(store, HEX_ID, "0")).unwrap(),
        slot0,
        "sessions untouched"
    );

    // A later session write keeps the attribution (sticky).
    write_std(&env, store, HEX_ID, "sess-3", TRANSCRIPT);
    let root = env.json(store, HEX_ID, "metadata.json");
    assert_eq!(root["combined_attribution"]["agent_lines"], json!(7));
}

fn missing_checkpoint_exits_3(store: Store) {
    let env = TestEnv::new();
    // Another checkpoint exists, so the store itself is there.
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let snapshot = env.refs_snapshot();
    let missing = "0badc0ffee00";
    let t = env.input_file("t.jsonl", TRANSCRIPT);
    let j = env.input_file("j.json", b"{\"intent\":\"x\"}");
    let cases: [Vec<&str>; 3] = [
        vec![
            "backfill",
            "transcript",
            missing,
            "--session",
            "sess-1",
            "--transcript",
            t.to_str().unwrap(),
        ],
        vec![
            "backfill",
            "summary",
            missing,
            "--summary",
            j.to_str().unwrap(),
        ],
        vec![
            "backfill",
            "attribution",
            missing,
            "--attribution",
            j.to_str().unwrap(),
        ],
    ];
    for args in &cases {
        let out = env.run(store, args);
        assert_code(&out, 3, &format!("{args:?}"));
        assert_eq!(env.refs_snapshot(), snapshot, "{args:?} changed refs");
    }
}

fn invalid_summary_json_changes_nothing(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let snapshot = env.refs_snapshot();
    let f = env.input_file("bad.json", b"{ not json");
    let out = env.run(
        store,
        &[
            "backfill",
            "summary",
            HEX_ID,
            "--summary",
            f.to_str().unwrap(),
        ],
    );
    assert_failed(&out, "backfill summary with invalid JSON");
    assert_eq!(env.refs_snapshot(), snapshot);
}

#[test]
fn summary_from_stdin() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let out = env
        .cmd_as(Store::Refs)
        .args(["backfill", "summary", HEX_ID, "--summary", "-"])
        .write_stdin(r#"{"intent":"from stdin","outcome":"ok"}"#)
        .output()
        .unwrap();
    crate::env::assert_success(&out, &["backfill summary --summary -"]);
    let m0 = env.json(Store::Refs, HEX_ID, "0/metadata.json");
    assert_eq!(m0["summary"]["intent"], json!("from stdin"));
}
