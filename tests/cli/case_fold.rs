//! Case-folded shard spellings (docs/format.md, "Case folding"):
//! a checkpoint ref that exists only under the other-case shard is read, and writes advance that
//! same ref instead of creating a second one.

use serde_json::json;

use crate::env::{Store, TestEnv, REFS_PREFIX};
use crate::fixtures::{
    checkpoint_node, hand_made_ref, root_metadata_json, TRANSCRIPT, TRANSCRIPT_2,
};

const FOLD_ULID: &str = "01M2DCHJCHTR9T9MZTSB7WV76B";

fn folded_checkpoint(id: &str, folded_shard: &str, packed: bool) {
    // Packed refs are the files backend's.
    let env = match packed {
        true => TestEnv::with_files_refs(),
        false => TestEnv::new(),
    };
    let folded = format!("{REFS_PREFIX}{folded_shard}/{id}");
    let node = checkpoint_node(
        id,
        "hand-sess",
        root_metadata_json(id, "").as_bytes(),
        TRANSCRIPT,
    );
    let original = hand_made_ref(&env, &folded, id, &node);
    if packed {
        env.git(&["pack-refs", "--all"]);
        let packed_refs = std::fs::read_to_string(env.repo().join(".git/packed-refs")).unwrap();
        assert!(packed_refs.contains(&folded), "ref is packed");
        assert!(
            !env.repo().join(".git").join(&folded).exists(),
            "no loose ref remains"
        );
    }

    // Read.
    let v = env.ok_json(Store::Refs, &["show", id, "--json", "--no-fetch"]);
    assert_eq!(v["checkpoint_id"], json!(id));
    assert_eq!(v["commit"], json!(original));
    assert_eq!(v["ref"], json!(folded), "show reports the spelling it read");
    let list = env.ok_json(Store::Refs, &["list", "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["checkpoint_id"], json!(id));
    let out = env.run(Store::Refs, &["cat", id, "0/full.jsonl"]);
    crate::env::assert_success(&out, &["cat"]);
    assert_eq!(out.stdout, TRANSCRIPT);

    // Write another session: advances the folded ref, creates no canonical twin.
    crate::fixtures::write_std(&env, Store::Refs, id, "sess-2", TRANSCRIPT_2);
    assert_eq!(
        env.refs_under(REFS_PREFIX),
        std::slice::from_ref(&folded),
        "exactly one ref for the ID"
    );
    let tip = env.rev(&folded).unwrap();
    assert_eq!(
        env.parents(&tip),
        std::slice::from_ref(&original),
        "write parented on the folded tip"
    );
    let sessions = env.git(&["cat-file", "-p", &format!("{folded}:metadata.json")]);
    let root: serde_json::Value = serde_json::from_str(&sessions).unwrap();
    assert_eq!(root["sessions"].as_array().unwrap().len(), 2);

    // A backfill also advances the same ref.
    let f = env.input_file("final.jsonl", b"{\"final\":true}\n");
    env.ok(
        Store::Refs,
        &[
            "backfill",
            "transcript",
            id,
            "--session",
            "hand-sess",
            "--transcript",
            f.to_str().unwrap(),
        ],
    );
    assert_eq!(env.refs_under(REFS_PREFIX), std::slice::from_ref(&folded));
    let tip2 = env.rev(&folded).unwrap();
    assert_eq!(env.parents(&tip2), [tip]);
    let v = env.ok_json(Store::Refs, &["show", id, "--json", "--no-fetch"]);
    assert_eq!(v["commit"], json!(tip2));
}

#[test]
fn ulid_under_lowercase_shard_loose() {
    folded_checkpoint(FOLD_ULID, "6b", false);
}

#[test]
fn ulid_under_lowercase_shard_packed() {
    folded_checkpoint(FOLD_ULID, "6b", true);
}

#[test]
fn hex_under_uppercase_shard_packed() {
    folded_checkpoint("a1b2c3d4e5f6", "F6", true);
}
