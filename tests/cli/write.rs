//! `write`: the on-disk result checked with real git plumbing (docs/format.md).

use serde_json::{json, Value};

use crate::env::{
    branch_dir, checkpoint_ref, keys, sha256_hex, tree_prefix, Store, TestEnv, REFS_PREFIX,
    V1_BRANCH,
};
use crate::fixtures::{
    assert_json_format, assert_key_order, write_std, CREATED_AT, HEX_ID, HEX_ID_2, ROOT_KEY_ORDER,
    ROOT_REQUIRED, SESSION_KEY_ORDER, SESSION_REQUIRED, TOKEN_KEY_ORDER, TRANSCRIPT, TRANSCRIPT_2,
};

both_stores! {
    prints_exactly_the_id => prints_exactly_the_id;
    session_metadata_key_order_and_values => session_metadata_key_order_and_values;
    root_metadata_format_and_key_order => root_metadata_format_and_key_order;
    session_files_layout => session_files_layout;
    message_with_agent_and_commit_subject => message_with_agent_and_commit_subject;
    second_session_appends_slot_1 => second_session_appends_slot_1;
    same_session_rewrite_replaces_slot_0 => same_session_rewrite_replaces_slot_0;
    concurrent_writers_lose_nothing => concurrent_writers_lose_nothing;
    binary_transcript_is_stored_byte_exact => binary_transcript_is_stored_byte_exact;
    transcript_from_stdin => transcript_from_stdin;
    token_usage_recorded_and_summed => token_usage_recorded_and_summed;
    files_touched_deduplicated_and_not_html_escaped => files_touched_deduplicated_and_not_html_escaped;
    write_without_transcript_or_prompt => write_without_transcript_or_prompt;
    multiple_prompts_are_joined => multiple_prompts_are_joined;
    strategy_model_branch_flags => strategy_model_branch_flags;
    a_large_transcript_is_a_loose_object_git_reads => a_large_transcript_is_a_loose_object_git_reads;
    small_objects_are_stored_loose_objects_git_reads => small_objects_are_stored_loose_objects_git_reads;
}

fn prints_exactly_the_id(store: Store) {
    let env = TestEnv::new();
    let out = write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    assert_eq!(out, format!("{HEX_ID}\n"));
}

fn session_metadata_key_order_and_values(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let raw = env.blob(store, HEX_ID, "0/metadata.json");
    assert_json_format(&raw, "0/metadata.json");
    let meta = env.json(store, HEX_ID, "0/metadata.json");
    assert_key_order(
        &meta,
        SESSION_KEY_ORDER,
        SESSION_REQUIRED,
        "0/metadata.json",
    );
    assert_eq!(meta["checkpoint_id"], json!(HEX_ID));
    assert_eq!(meta["session_id"], json!("sess-1"));
    assert_eq!(meta["strategy"], json!("manual-commit"));
    assert_eq!(meta["created_at"], json!(CREATED_AT));
    assert_eq!(meta["files_touched"], json!(["a.go"]));
    assert_eq!(
        meta["model"],
        json!(""),
        "model is always present, \"\" when unknown"
    );
    assert!(
        meta["checkpoints_count"].is_i64(),
        "checkpoints_count is an integer"
    );
    assert!(meta.get("agent").is_none(), "agent is omitted when empty");
}

fn root_metadata_format_and_key_order(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let raw = env.blob(store, HEX_ID, "metadata.json");
    assert_json_format(&raw, "metadata.json");
    let root = env.json(store, HEX_ID, "metadata.json");
    assert_key_order(&root, ROOT_KEY_ORDER, ROOT_REQUIRED, "metadata.json");
    assert_eq!(root["checkpoint_id"], json!(HEX_ID));
    assert_eq!(root["strategy"], json!("manual-commit"));
    assert_eq!(root["files_touched"], json!(["a.go"]));
    let p = tree_prefix(store, HEX_ID);
    let sessions = root["sessions"].as_array().expect("sessions array");
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        keys(&sessions[0]),
        ["metadata", "transcript", "content_hash", "prompt"]
    );
    assert_eq!(
        sessions[0],
        json!({
            "metadata": format!("{p}/0/metadata.json"),
            "transcript": format!("{p}/0/full.jsonl"),
            "content_hash": format!("{p}/0/content_hash.txt"),
            "prompt": format!("{p}/0/prompt.txt"),
        })
    );
}

fn session_files_layout(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let base = env.spec(store, HEX_ID, "");
    assert_eq!(env.ls_tree(&base), ["0", "metadata.json"]);
    assert_eq!(
        env.ls_tree(&env.spec(store, HEX_ID, "0")),
        [
            "content_hash.txt",
            "full.jsonl",
            "metadata.json",
            "prompt.txt"
        ]
    );
    assert_eq!(env.blob(store, HEX_ID, "0/full.jsonl"), TRANSCRIPT);
    let hash = env.blob(store, HEX_ID, "0/content_hash.txt");
    assert_eq!(hash.len(), 71, "sha256:<64 hex>, no newline");
    assert_eq!(
        String::from_utf8(hash).unwrap(),
        format!("sha256:{}", sha256_hex(TRANSCRIPT))
    );
    assert_eq!(env.blob_text(store, HEX_ID, "0/prompt.txt"), "do the thing");
    // Regular files are 100644.
    let listing = env.git(&["ls-tree", "-r", &base]);
    for line in listing.lines() {
        assert!(line.starts_with("100644 blob "), "unexpected mode: {line}");
    }
}

fn message_with_agent_and_commit_subject(store: Store) {
    let env = TestEnv::new();
    let t = env.input_file("t.jsonl", TRANSCRIPT);
    env.ok(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--transcript",
            t.to_str().unwrap(),
            "--agent",
            "Claude Code",
            "--commit-subject",
            "Fix the parser",
        ],
    );
    let tip = env.tip(store, HEX_ID);
    assert_eq!(
        env.message(&tip),
        format!(
            "Checkpoint: {HEX_ID}\n\nFix the parser\n\nEntire-Session: sess-1\nEntire-Strategy: manual-commit\nEntire-Agent: Claude Code\n"
        )
    );
    let meta = env.json(store, HEX_ID, "0/metadata.json");
    assert_eq!(meta["agent"], json!("Claude Code"));
    assert_key_order(
        &meta,
        SESSION_KEY_ORDER,
        SESSION_REQUIRED,
        "0/metadata.json",
    );
}

fn strategy_model_branch_flags(store: Store) {
    let env = TestEnv::new();
    env.ok(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--model",
            "claude-test-model",
            "--strategy",
            "auto-commit",
            "--branch",
            "feature/x",
            "--created-at",
            CREATED_AT,
        ],
    );
    let meta = env.json(store, HEX_ID, "0/metadata.json");
    assert_eq!(meta["model"], json!("claude-test-model"));
    assert_eq!(meta["strategy"], json!("auto-commit"));
    assert_eq!(meta["branch"], json!("feature/x"));
    let root = env.json(store, HEX_ID, "metadata.json");
    assert_eq!(root["strategy"], json!("auto-commit"));
    assert_eq!(root["branch"], json!("feature/x"));
    let tip = env.tip(store, HEX_ID);
    assert_eq!(
        env.message(&tip),
        format!("Checkpoint: {HEX_ID}\n\nEntire-Session: sess-1\nEntire-Strategy: auto-commit\n")
    );
}

fn second_session_appends_slot_1(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let first_tip = env.tip(store, HEX_ID);
    let slot0 = env.rev(&env.spec(store, HEX_ID, "0")).unwrap();

    let t2 = env.input_file("t2.jsonl", TRANSCRIPT_2);
    env.ok(
        store,
        &[
            "write",
            "--session",
            "sess-2",
            "--id",
            HEX_ID,
            "--transcript",
            t2.to_str().unwrap(),
            "--files-touched",
            "b.go",
            "--created-at",
            CREATED_AT,
        ],
    );
    let tip = env.tip(store, HEX_ID);
    assert_ne!(tip, first_tip);
    assert_eq!(
        env.parents(&tip),
        [first_tip],
        "one parent: the previous tip"
    );
    assert_eq!(
        env.rev(&env.spec(store, HEX_ID, "0")).unwrap(),
        slot0,
        "slot 0 untouched by another session's write"
    );
    assert_eq!(
        env.ls_tree(&env.spec(store, HEX_ID, "")),
        ["0", "1", "metadata.json"]
    );
    assert_eq!(env.blob(store, HEX_ID, "1/full.jsonl"), TRANSCRIPT_2);
    let meta1 = env.json(store, HEX_ID, "1/metadata.json");
    assert_eq!(meta1["session_id"], json!("sess-2"));

    let root = env.json(store, HEX_ID, "metadata.json");
    let p = tree_prefix(store, HEX_ID);
    let sessions = root["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    assert_eq!(
        sessions[0]["metadata"],
        json!(format!("{p}/0/metadata.json"))
    );
    assert_eq!(
        sessions[1]["metadata"],
        json!(format!("{p}/1/metadata.json"))
    );
    assert_eq!(
        sessions[1]["transcript"],
        json!(format!("{p}/1/full.jsonl"))
    );
    assert_eq!(
        root["files_touched"],
        json!(["a.go", "b.go"]),
        "sorted union of the sessions' files"
    );
    assert_eq!(
        env.message(&tip),
        format!("Checkpoint: {HEX_ID}\n\nEntire-Session: sess-2\nEntire-Strategy: manual-commit\n")
    );
}

fn same_session_rewrite_replaces_slot_0(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let first_tip = env.tip(store, HEX_ID);
    assert!(env.exists(store, HEX_ID, "0/prompt.txt"));

    // Rewrite without prompts: the whole slot is replaced, so prompt.txt disappears.
    let t2 = env.input_file("t2.jsonl", TRANSCRIPT_2);
    env.ok(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--transcript",
            t2.to_str().unwrap(),
            "--files-touched",
            "c.go",
            "--created-at",
            CREATED_AT,
        ],
    );
    let tip = env.tip(store, HEX_ID);
    assert_eq!(env.parents(&tip), [first_tip]);
    assert_eq!(
        env.ls_tree(&env.spec(store, HEX_ID, "")),
        ["0", "metadata.json"]
    );
    assert!(
        !env.exists(store, HEX_ID, "0/prompt.txt"),
        "stale prompt.txt must be gone after the slot rewrite"
    );
    assert_eq!(env.blob(store, HEX_ID, "0/full.jsonl"), TRANSCRIPT_2);
    assert_eq!(
        env.blob_text(store, HEX_ID, "0/content_hash.txt"),
        format!("sha256:{}", sha256_hex(TRANSCRIPT_2))
    );
    let root = env.json(store, HEX_ID, "metadata.json");
    assert_eq!(root["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(root["files_touched"], json!(["c.go"]));
    assert_eq!(root["sessions"][0]["prompt"], json!(""));
}

fn binary_transcript_is_stored_byte_exact(store: Store) {
    let env = TestEnv::new();
    let bytes: Vec<u8> = [
        &[0xff, 0xfe, 0x00, 0x01][..],
        b"plain text\n",
        &[0x80, 0x81, 0xc3, 0x28, 0x00, b'\r', b'\n'],
        &[0xf0, 0x28, 0x8c, 0xbc],
    ]
    .concat();
    assert!(std::str::from_utf8(&bytes).is_err());
    let f = env.input_file("binary.bin", &bytes);
    env.ok(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--transcript",
            f.to_str().unwrap(),
        ],
    );
    assert_eq!(env.blob(store, HEX_ID, "0/full.jsonl"), bytes);
    assert_eq!(
        env.blob_text(store, HEX_ID, "0/content_hash.txt"),
        format!("sha256:{}", sha256_hex(&bytes))
    );
    let out = env.run(store, &["cat", HEX_ID, "0/full.jsonl"]);
    crate::env::assert_success(&out, &["cat"]);
    assert_eq!(out.stdout, bytes, "cat returns the raw bytes");
}

fn transcript_from_stdin(store: Store) {
    let env = TestEnv::new();
    let out = env
        .cmd_as(store)
        .args([
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--transcript",
            "-",
        ])
        .write_stdin(TRANSCRIPT)
        .output()
        .unwrap();
    crate::env::assert_success(&out, &["write --transcript -"]);
    assert_eq!(env.blob(store, HEX_ID, "0/full.jsonl"), TRANSCRIPT);
}

fn token_usage_recorded_and_summed(store: Store) {
    let env = TestEnv::new();
    let usage1 = r#"{"input_tokens":10,"cache_creation_tokens":1,"cache_read_tokens":2,"output_tokens":3,"api_call_count":1}"#;
    let usage2 = r#"{"output_tokens":5,"input_tokens":20,"api_call_count":2,"cache_read_tokens":4,"cache_creation_tokens":0}"#;
    for (session, usage) in [("sess-1", usage1), ("sess-2", usage2)] {
        env.ok(
            store,
            &[
                "write",
                "--session",
                session,
                "--id",
                HEX_ID,
                "--token-usage",
                usage,
            ],
        );
    }
    let m0 = env.json(store, HEX_ID, "0/metadata.json");
    assert_key_order(&m0, SESSION_KEY_ORDER, SESSION_REQUIRED, "0/metadata.json");
    assert_eq!(
        m0["token_usage"],
        json!({"input_tokens":10,"cache_creation_tokens":1,"cache_read_tokens":2,"output_tokens":3,"api_call_count":1})
    );
    let m1 = env.json(store, HEX_ID, "1/metadata.json");
    assert_eq!(
        keys(&m1["token_usage"]),
        &TOKEN_KEY_ORDER[..5],
        "token_usage written in the reference order whatever the input order"
    );
    let root = env.json(store, HEX_ID, "metadata.json");
    assert_key_order(&root, ROOT_KEY_ORDER, ROOT_REQUIRED, "metadata.json");
    assert_eq!(
        root["token_usage"],
        json!({"input_tokens":30,"cache_creation_tokens":1,"cache_read_tokens":6,"output_tokens":8,"api_call_count":3})
    );
}

fn files_touched_deduplicated_and_not_html_escaped(store: Store) {
    let env = TestEnv::new();
    let odd = "dir/<a>&b.go";
    env.ok(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--files-touched",
            odd,
            "--files-touched",
            "a.go",
            "--files-touched",
            odd,
        ],
    );
    let raw = String::from_utf8(env.blob(store, HEX_ID, "metadata.json")).unwrap();
    assert!(raw.contains(odd), "<, >, & written literally:\n{raw}");
    assert_json_format(raw.as_bytes(), "metadata.json");
    let root = env.json(store, HEX_ID, "metadata.json");
    assert_eq!(root["files_touched"], json!(["a.go", odd]));

    let raw = String::from_utf8(env.blob(store, HEX_ID, "0/metadata.json")).unwrap();
    assert!(raw.contains(odd), "<, >, & written literally:\n{raw}");
    let meta = env.json(store, HEX_ID, "0/metadata.json");
    let mut files: Vec<String> = meta["files_touched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(files.len(), 2, "duplicates removed: {files:?}");
    files.sort();
    assert_eq!(files, ["a.go", odd]);
}

fn write_without_transcript_or_prompt(store: Store) {
    let env = TestEnv::new();
    env.ok(store, &["write", "--session", "sess-1", "--id", HEX_ID]);
    assert_eq!(
        env.ls_tree(&env.spec(store, HEX_ID, "0")),
        ["metadata.json"]
    );
    let root = env.json(store, HEX_ID, "metadata.json");
    let p = tree_prefix(store, HEX_ID);
    assert_eq!(
        root["sessions"][0],
        json!({"metadata": format!("{p}/0/metadata.json"), "prompt": ""}),
        "transcript/content_hash omitted, prompt always present"
    );
    assert_eq!(keys(&root["sessions"][0]), ["metadata", "prompt"]);
}

fn multiple_prompts_are_joined(store: Store) {
    let env = TestEnv::new();
    env.ok(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--prompt",
            "first prompt",
            "--prompt",
            "second\nprompt",
        ],
    );
    assert_eq!(
        env.blob_text(store, HEX_ID, "0/prompt.txt"),
        "first prompt\n\n---\n\nsecond\nprompt"
    );
}

#[test]
fn refs_write_creates_orphan_ref_with_reference_message() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let name = format!("{REFS_PREFIX}f6/{HEX_ID}");
    assert_eq!(checkpoint_ref(HEX_ID), name);
    assert_eq!(env.refs_under(REFS_PREFIX), std::slice::from_ref(&name));
    let tip = env.rev(&name).unwrap();
    assert!(
        env.parents(&tip).is_empty(),
        "the first write is an orphan commit"
    );
    assert_eq!(
        env.message(&tip),
        "Checkpoint: a1b2c3d4e5f6\n\nEntire-Session: sess-1\nEntire-Strategy: manual-commit\n"
    );
    assert_eq!(env.subject(&tip), "Checkpoint: a1b2c3d4e5f6");
    // The checkpoint is the whole tree of the commit.
    assert_eq!(
        env.git(&["ls-tree", "--name-only", "-r", &name])
            .lines()
            .collect::<Vec<_>>(),
        [
            "0/content_hash.txt",
            "0/full.jsonl",
            "0/metadata.json",
            "0/prompt.txt",
            "metadata.json"
        ]
    );
    assert_eq!(
        env.git(&["log", "-1", "--format=%an <%ae>|%cn <%ce>", &tip])
            .trim(),
        "Test Author <test@example.com>|Test Author <test@example.com>"
    );
    // The user's branch, index and work tree are untouched.
    assert_eq!(env.git(&["rev-list", "--count", "main"]).trim(), "1");
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

#[test]
fn refs_write_of_a_ulid_uses_last_two_chars_as_shard() {
    let env = TestEnv::new();
    let id = crate::fixtures::ULID_ID;
    let out = write_std(&env, Store::Refs, id, "sess-1", TRANSCRIPT);
    assert_eq!(out, format!("{id}\n"));
    assert_eq!(
        env.refs_under(REFS_PREFIX),
        [format!("{REFS_PREFIX}ZN/{id}")]
    );
    let root = env.json(Store::Refs, id, "metadata.json");
    assert_eq!(root["checkpoint_id"], json!(id));
}

#[test]
fn branch_write_bootstraps_v1_branch() {
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    let commits = env.git(&["rev-list", V1_BRANCH]);
    let commits: Vec<&str> = commits.lines().collect();
    assert_eq!(commits.len(), 2, "bootstrap commit + checkpoint commit");
    let init = commits[1];
    assert!(env.parents(init).is_empty());
    assert_eq!(env.subject(init), "Initialize sessions branch");
    assert_eq!(
        env.message(init).trim_end(),
        "Initialize sessions branch",
        "single-line bootstrap message"
    );
    assert_eq!(
        env.rev(&format!("{init}^{{tree}}")).unwrap(),
        env.empty_tree()
    );
    let tip = commits[0];
    assert_eq!(env.parents(tip), [init]);
    assert_eq!(
        env.message(tip),
        "Checkpoint: a1b2c3d4e5f6\n\nEntire-Session: sess-1\nEntire-Strategy: manual-commit\n"
    );
    assert_eq!(env.ls_tree(&format!("{V1_BRANCH}:")), ["a1"]);
    assert_eq!(env.ls_tree(&format!("{V1_BRANCH}:a1")), ["b2c3d4e5f6"]);
    assert_eq!(
        env.refs_under(REFS_PREFIX),
        Vec::<String>::new(),
        "git-branch primary writes no checkpoint ref"
    );
    // The user's branch, HEAD, index and work tree stay where they were.
    assert_eq!(env.git(&["symbolic-ref", "HEAD"]).trim(), "refs/heads/main");
    assert_eq!(env.git(&["rev-list", "--count", "main"]).trim(), "1");
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

#[test]
fn branch_write_leaves_other_checkpoints_untouched() {
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    let dir = format!("{V1_BRANCH}:{}", branch_dir(HEX_ID));
    let before = env.rev(&dir).unwrap();
    let tip1 = env.rev(V1_BRANCH).unwrap();

    // Another shard, then the same shard directory `a1/`.
    write_std(&env, Store::Branch, HEX_ID_2, "sess-9", TRANSCRIPT_2);
    let tip2 = env.rev(V1_BRANCH).unwrap();
    assert_eq!(env.parents(&tip2), std::slice::from_ref(&tip1));
    assert_eq!(
        env.rev(&dir).unwrap(),
        before,
        "other checkpoint subtree untouched"
    );

    let same_shard = "a1ffffffff00";
    write_std(&env, Store::Branch, same_shard, "sess-7", TRANSCRIPT_2);
    let tip3 = env.rev(V1_BRANCH).unwrap();
    assert_eq!(env.parents(&tip3), [tip2]);
    assert_eq!(
        env.rev(&dir).unwrap(),
        before,
        "sibling in the same shard untouched"
    );
    assert_eq!(env.ls_tree(&format!("{V1_BRANCH}:")), ["a1", "f6"]);
    assert_eq!(
        env.ls_tree(&format!("{V1_BRANCH}:a1")),
        ["b2c3d4e5f6", "ffffffff00"]
    );
    let root: Value = env.json(Store::Branch, same_shard, "metadata.json");
    assert_eq!(
        root["sessions"][0]["metadata"],
        json!("/a1/ffffffff00/0/metadata.json")
    );
}

fn is_crockford(c: char) -> bool {
    "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)
}

#[test]
fn refs_mints_a_ulid_without_id() {
    let env = TestEnv::new();
    let out = env.ok(Store::Refs, &["write", "--session", "sess-1"]);
    let id = out.strip_suffix('\n').expect("ID + newline");
    assert_eq!(id.len(), 26, "ULID: {id:?}");
    assert!(id.chars().all(is_crockford), "canonical ULID: {id}");
    assert!(('0'..='7').contains(&id.chars().next().unwrap()));
    assert_eq!(env.refs_under(REFS_PREFIX), [checkpoint_ref(id)]);
    let root = env.json(Store::Refs, id, "metadata.json");
    assert_eq!(root["checkpoint_id"], json!(id));
}

fn assert_hex_id(out: &str) -> String {
    let id = out.strip_suffix('\n').expect("ID + newline");
    assert_eq!(id.len(), 12, "hex ID: {id:?}");
    assert!(
        id.chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
        "lowercase hex: {id}"
    );
    id.to_string()
}

#[test]
fn branch_mints_hex_without_id() {
    let env = TestEnv::new();
    let id = assert_hex_id(&env.ok(Store::Branch, &["write", "--session", "sess-1"]));
    let root = env.json(Store::Branch, &id, "metadata.json");
    assert_eq!(root["checkpoint_id"], json!(id));
    assert!(env.refs_under(REFS_PREFIX).is_empty());
}

#[test]
fn default_primary_is_git_branch() {
    let env = TestEnv::new();
    let out = env
        .cmd()
        .args(["write", "--session", "sess-1", "--prompt", "do the thing"])
        .output()
        .unwrap();
    crate::env::assert_success(&out, &["write (default primary)"]);
    let id = assert_hex_id(&String::from_utf8(out.stdout).unwrap());
    assert!(env.rev(V1_BRANCH).is_some(), "v1 branch created");
    let root = env.json(Store::Branch, &id, "metadata.json");
    assert_eq!(root["checkpoint_id"], json!(id));
    assert!(
        env.refs_under(REFS_PREFIX).is_empty(),
        "no git-refs ref under the default topology"
    );
}

#[test]
fn two_ids_get_two_refs_in_their_shards() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let first = env.tip(Store::Refs, HEX_ID);
    write_std(&env, Store::Refs, HEX_ID_2, "sess-1", TRANSCRIPT);
    assert_eq!(
        env.refs_under(REFS_PREFIX),
        [
            format!("{REFS_PREFIX}a1/{HEX_ID_2}"),
            format!("{REFS_PREFIX}f6/{HEX_ID}")
        ]
    );
    assert_eq!(env.tip(Store::Refs, HEX_ID), first, "other ref untouched");
    assert!(env.parents(&env.tip(Store::Refs, HEX_ID_2)).is_empty());
}

/// Several processes write different sessions into one checkpoint and into other checkpoints at
/// the same time; every write that reported success is in the result (docs/decisions.md, "No
/// lost checkpoint"). No timing is asserted, only the final state.
fn concurrent_writers_lose_nothing(store: Store) {
    let env = TestEnv::new();
    let sessions: Vec<String> = (0..6).map(|i| format!("sess-{i}")).collect();
    let other_ids = ["0a0a0a0a0a01", "0b0b0b0b0b02", "0c0c0c0c0c03"];
    let mut children = Vec::new();
    for s in &sessions {
        let mut cmd = env.std_cmd(store);
        cmd.args(["write", "--session", s, "--id", HEX_ID, "--prompt", s]);
        children.push(cmd.spawn().expect("spawn writer"));
    }
    for id in other_ids {
        let mut cmd = env.std_cmd(store);
        cmd.args(["write", "--session", "solo", "--id", id]);
        children.push(cmd.spawn().expect("spawn writer"));
    }
    for child in children {
        let out = child.wait_with_output().expect("wait for writer");
        assert!(
            out.status.success(),
            "a concurrent write failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let root = env.json(store, HEX_ID, "metadata.json");
    let slots = root["sessions"].as_array().unwrap().len();
    assert_eq!(slots, sessions.len(), "one slot per session: {root}");
    let mut seen: Vec<String> = (0..slots)
        .map(|i| {
            let m = env.json(store, HEX_ID, &format!("{i}/metadata.json"));
            let sid = m["session_id"].as_str().unwrap().to_string();
            assert_eq!(
                env.blob_text(store, HEX_ID, &format!("{i}/prompt.txt")),
                sid,
                "slot {i} holds its own session's files"
            );
            sid
        })
        .collect();
    seen.sort();
    assert_eq!(seen, sessions);
    for id in other_ids {
        let root = env.json(store, id, "metadata.json");
        assert_eq!(root["checkpoint_id"], json!(id));
    }
    let listed = env.ok_json(store, &["list", "--json"]);
    assert_eq!(listed.as_array().unwrap().len(), 1 + other_ids.len());
}

/// A transcript over the 50 MiB chunk limit is stored as `full.jsonl` + `full.jsonl.001`, each
/// under the limit and cut at a line boundary; `cat` reassembles it byte for byte and
/// `content_hash.txt` is the hash of the whole transcript.
#[test]
fn a_transcript_over_50_mib_is_chunked_at_lines() {
    const LIMIT: usize = 50 * 1024 * 1024;
    let env = TestEnv::new();
    let line = format!(
        "{{\"type\":\"assistant\",\"text\":\"{}\"}}\n",
        "x".repeat(1000)
    );
    let lines = LIMIT / line.len() + 100;
    let transcript = line.repeat(lines).into_bytes();
    assert!(transcript.len() > LIMIT);
    write_std(&env, Store::Refs, HEX_ID, "sess-1", &transcript);
    let tree = env.ls_tree(&format!("{}:0", checkpoint_ref(HEX_ID)));
    assert!(tree.iter().any(|e| e == "full.jsonl"), "{tree:?}");
    assert!(tree.iter().any(|e| e == "full.jsonl.001"), "{tree:?}");
    for chunk in ["full.jsonl", "full.jsonl.001"] {
        let bytes = env.blob(Store::Refs, HEX_ID, &format!("0/{chunk}"));
        assert!(bytes.len() <= LIMIT, "{chunk} is {} bytes", bytes.len());
        assert!(bytes.starts_with(b"{\"type\""), "{chunk} starts at a line");
    }
    let cat = env
        .cmd_as(Store::Refs)
        .args(["cat", HEX_ID, "0/full.jsonl"])
        .output()
        .unwrap();
    assert!(cat.status.success());
    assert!(
        cat.stdout == transcript,
        "cat reassembles the transcript exactly"
    );
    assert_eq!(
        env.blob_text(Store::Refs, HEX_ID, "0/content_hash.txt"),
        format!("sha256:{}", sha256_hex(&transcript))
    );
}

/// A transcript large enough to be compressed while its ID is computed is the loose object git
/// would write: git reads it back byte for byte, `fsck --strict` finds nothing wrong, the file is
/// read-only as git's are, and no temporary file is left beside it. Written again under another
/// ID (the object is already there), it is the same object, and nothing is left over either.
fn a_large_transcript_is_a_loose_object_git_reads(store: Store) {
    let env = TestEnv::new();
    let transcript: Vec<u8> = (0..4000)
        .flat_map(|n| {
            format!("{{\"type\":\"user\",\"n\":{n},\"text\":\"line {n} of a long session\"}}\n")
                .into_bytes()
        })
        .collect();
    assert!(transcript.len() > 128 << 10);
    write_std(&env, store, HEX_ID, "sess-1", &transcript);
    let blob_of = |id: &str| {
        let spec = env.spec(store, id, "0/full.jsonl");
        env.git(&["rev-parse", &spec]).trim().to_owned()
    };
    let blob = blob_of(HEX_ID);
    assert_eq!(env.git_bytes(&["cat-file", "blob", &blob]), transcript);
    let objects = env.common_dir().join("objects");
    let leftovers = || {
        std::fs::read_dir(&objects)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("tmp_"))
            .collect::<Vec<_>>()
    };
    assert_eq!(leftovers(), Vec::<String>::new());
    let loose = objects.join(&blob[..2]).join(&blob[2..]);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&loose).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o444, "{}", loose.display());
    let fsck = env.git_output(&["fsck", "--strict", "--no-dangling"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    write_std(&env, store, HEX_ID_2, "sess-2", &transcript);
    assert_eq!(blob_of(HEX_ID_2), blob);
    assert_eq!(leftovers(), Vec::<String>::new());
}

/// The small objects of a write (its commit, every tree on the way to the checkpoint, the
/// metadata) are loose objects of one stored deflate block (docs/format.md, "Loose objects"):
/// their files begin with the zlib header and a final stored block's, are read-only, and git reads
/// them back; each tree is the one `git mktree` makes of its own listing (git's serialisation and
/// order), and `fsck --strict` finds nothing wrong, also after a second checkpoint is put beside
/// the first.
fn small_objects_are_stored_loose_objects_git_reads(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(&env, store, HEX_ID_2, "sess-2", TRANSCRIPT_2);
    let objects = env.common_dir().join("objects");
    let commit = env.tip(store, HEX_ID_2);
    let mut small = vec![commit.clone()];
    let mut path = String::new();
    let mut trees = vec![format!("{commit}^{{tree}}")];
    for part in env
        .spec(store, HEX_ID_2, "0")
        .split_once(':')
        .unwrap()
        .1
        .split('/')
    {
        path = if path.is_empty() {
            part.to_owned()
        } else {
            format!("{path}/{part}")
        };
        trees.push(format!("{commit}:{path}"));
    }
    for spec in &trees {
        let tree = env.git(&["rev-parse", spec]).trim().to_owned();
        let listing = env.git_bytes(&["ls-tree", &tree]);
        assert_eq!(env.git_stdin(&["mktree"], &listing), tree, "{spec}");
        small.push(tree);
    }
    small.push(
        env.git(&["rev-parse", &env.spec(store, HEX_ID_2, "0/metadata.json")])
            .trim()
            .to_owned(),
    );
    use std::os::unix::fs::PermissionsExt;
    for oid in &small {
        let loose = objects.join(&oid[..2]).join(&oid[2..]);
        let bytes = std::fs::read(&loose).unwrap_or_else(|e| panic!("{}: {e}", loose.display()));
        assert_eq!(bytes[..3], [0x78, 0x01, 0x01], "{}", loose.display());
        let mode = std::fs::metadata(&loose).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o444, "{}", loose.display());
        env.git(&["cat-file", "-p", oid]);
    }
    let fsck = env.git_output(&["fsck", "--strict", "--no-dangling"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}
