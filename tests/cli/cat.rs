//! `cat <ID> <PATH>`: raw bytes of one file of the checkpoint tree.

use crate::env::{assert_code, assert_failed, assert_success, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT, TRANSCRIPT_2};

both_stores! {
    prints_blob_bytes_exactly => prints_blob_bytes_exactly;
    missing_path_fails => missing_path_fails;
    missing_checkpoint_exits_3 => missing_checkpoint_exits_3;
}

fn prints_blob_bytes_exactly(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(&env, store, HEX_ID, "sess-2", TRANSCRIPT_2);
    for path in [
        "metadata.json",
        "0/metadata.json",
        "0/full.jsonl",
        "0/content_hash.txt",
        "0/prompt.txt",
        "1/full.jsonl",
    ] {
        let out = env.run(store, &["cat", HEX_ID, path]);
        assert_success(&out, &["cat", HEX_ID, path]);
        let expected = env.git_bytes(&["cat-file", "-p", &env.spec(store, HEX_ID, path)]);
        assert_eq!(out.stdout, expected, "cat {path} == git cat-file -p");
    }
    let out = env.run(store, &["cat", HEX_ID, "0/full.jsonl"]);
    assert_eq!(out.stdout, TRANSCRIPT);
    let out = env.run(store, &["cat", HEX_ID, "1/full.jsonl"]);
    assert_eq!(out.stdout, TRANSCRIPT_2);
}

fn missing_path_fails(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    for path in ["nope.txt", "5/full.jsonl", "0/nope"] {
        let out = env.run(store, &["cat", HEX_ID, path]);
        assert_failed(&out, &format!("cat {path}"));
        assert!(out.stdout.is_empty(), "cat {path}: nothing on stdout");
    }
}

fn missing_checkpoint_exits_3(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let out = env.run(store, &["cat", "0badc0ffee00", "metadata.json"]);
    assert_code(&out, 3, "cat of a missing checkpoint");
}
