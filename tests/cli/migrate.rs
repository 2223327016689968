//! `migrate [--dry-run]`: every checkpoint of the v1 branch copied into a hex-named git-refs ref
//! (docs/format.md, "Migration from the v1 branch"; docs/how-it-works.md, "Where reads look").
//! Verified with real `git` plumbing.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::env::{
    assert_code, assert_success, branch_dir, checkpoint_ref, parse_json, sha256_hex, stderr,
    stdout, Store, TestEnv, V1_BRANCH,
};
use crate::fixtures::{
    blob, checkpoint_node, commit_tree, root_metadata_json, session_message, strip_v1_prefix, tree,
    write_node, write_std, Node, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2, ULID_ID,
};

const V1_TRACKING: &str = "refs/remotes/origin/entire/checkpoints/v1";
const NOTHING: &str = "No checkpoints found on the v1 branch \u{2014} nothing to migrate.\n";
const REFS_ONLY: &str = r#"{"checkpoints": {"primary": {"type": "git-refs"}}}"#;
const PARALLEL: &str =
    r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}]}}"#;
const HEX_ID_3: &str = "c0ffee123456";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Runs `migrate <extra>`, asserting success; returns stdout.
fn migrate(env: &TestEnv, extra: &[&str]) -> String {
    let mut args = vec!["migrate"];
    args.extend_from_slice(extra);
    let out = env.run_default(&args);
    assert_success(&out, &args);
    stdout(&out)
}

fn migrated_line(m: usize, s: usize, t: usize) -> String {
    format!("Migrated {m} checkpoint(s) to refs ({s} already up to date, {t} total).\n")
}

fn would_line(m: usize, s: usize, t: usize) -> String {
    format!("Would migrate {m} checkpoint(s) to refs ({s} already up to date, {t} total).\n")
}

fn import_subject(id: &str) -> String {
    format!("Import checkpoint {id} (migrated from git-branch)")
}

fn count_objects(env: &TestEnv) -> String {
    env.git(&["count-objects", "-v"])
}

/// `git ls-tree -r <spec>` lines (mode, type, oid, path), sorted.
fn ls_tree_r(env: &TestEnv, spec: &str) -> Vec<String> {
    let mut v: Vec<String> = env
        .git(&["ls-tree", "-r", spec])
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// Drops the root `metadata.json` line from an `ls-tree -r` listing.
fn without_root_metadata(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .filter(|l| l.split('\t').nth(1) != Some("metadata.json"))
        .collect()
}

/// The v1 root summary of `id` normalised the way migration must: `checkpoint_version` removed,
/// `/<id[:2]>/<id[2:]>` stripped from every string of every `sessions[]` entry.
fn normalised(mut root: Value, id: &str) -> Value {
    root.as_object_mut()
        .expect("root summary is an object")
        .remove("checkpoint_version");
    strip_v1_prefix(root, id)
}

/// Asserts that the ref of `id` is the migration of the v1 subtree `v1_spec` (a rev spec of the
/// checkpoint's directory in some v1 commit): same entries, every blob except the root
/// `metadata.json` byte-identical, the root summary normalised.
fn assert_migrated_from(env: &TestEnv, id: &str, v1_spec: &str) {
    let r = checkpoint_ref(id);
    assert!(env.rev(&r).is_some(), "{r} was not created");
    assert_eq!(
        env.ls_tree(&r),
        env.ls_tree(v1_spec),
        "top-level entries of {r} vs {v1_spec}"
    );
    assert_eq!(
        without_root_metadata(ls_tree_r(env, &r)),
        without_root_metadata(ls_tree_r(env, v1_spec)),
        "every file except the root metadata.json is byte-identical ({r} vs {v1_spec})"
    );
    let v1_root =
        parse_json(&env.git_bytes(&["cat-file", "blob", &format!("{v1_spec}/metadata.json")]));
    let ref_root = env.json(Store::Refs, id, "metadata.json");
    assert!(
        ref_root.get("checkpoint_version").is_none(),
        "checkpoint_version removed: {ref_root}"
    );
    for entry in ref_root["sessions"].as_array().expect("sessions") {
        for (k, v) in entry.as_object().expect("entry") {
            if let Some(s) = v.as_str() {
                assert!(
                    !s.starts_with(&format!("/{}/", branch_dir(id))),
                    "sessions[].{k} still has the v1 prefix: {s}"
                );
            }
        }
    }
    assert_eq!(
        ref_root,
        normalised(v1_root, id),
        "root metadata.json of {r}: the normalised v1 summary"
    );
}

/// A v1 branch built by hand: an init commit, then one commit holding every `(id, subtree)`.
fn hand_made_v1(env: &TestEnv, entries: Vec<(&str, Node)>) -> String {
    let mut shards: BTreeMap<String, Vec<(String, Node)>> = BTreeMap::new();
    for (id, node) in entries {
        shards
            .entry(id[..2].to_string())
            .or_default()
            .push((id[2..].to_string(), node));
    }
    let root = Node::Tree(
        shards
            .into_iter()
            .map(|(shard, children)| (shard, Node::Tree(children)))
            .collect(),
    );
    let init = commit_tree(env, &env.empty_tree(), None, "Initialize sessions branch\n");
    let tree_oid = write_node(env, &root);
    let tip = commit_tree(
        env,
        &tree_oid,
        Some(&init),
        &session_message(HEX_ID, "hand"),
    );
    env.git(&["update-ref", V1_BRANCH, &tip]);
    tip
}

fn v1_spec(id: &str) -> String {
    format!("{V1_BRANCH}:{}", branch_dir(id))
}

/// Two hex checkpoints on the v1 branch, written through the binary (the first with two
/// sessions).
fn two_on_v1(env: &TestEnv) {
    write_std(env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(env, Store::Branch, HEX_ID, "sess-2", TRANSCRIPT_2);
    write_std(env, Store::Branch, HEX_ID_2, "sess-3", TRANSCRIPT);
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn migrates_every_v1_checkpoint_into_hex_named_refs() {
    let env = TestEnv::new();
    two_on_v1(&env);
    let v1_tip = env.rev(V1_BRANCH).unwrap();
    let out = env.run_default(&["migrate"]);
    assert_success(&out, &["migrate"]);
    assert_eq!(stdout(&out), migrated_line(2, 0, 2));
    assert_eq!(stderr(&out), "", "no warnings for a clean migration");
    assert_eq!(
        env.checkpoint_refs(),
        vec![
            "refs/entire/checkpoints/a1/f6e5d4c3b2a1".to_string(),
            "refs/entire/checkpoints/f6/a1b2c3d4e5f6".to_string(),
        ],
        "RefName(hex): shard = last two characters"
    );
    for id in [HEX_ID, HEX_ID_2] {
        let tip = env.tip(Store::Refs, id);
        assert_eq!(env.subject(&tip), import_subject(id));
        assert_eq!(
            env.parents(&tip),
            Vec::<String>::new(),
            "orphan import commit"
        );
        assert_migrated_from(&env, id, &v1_spec(id));
    }
    // The session subtrees are reused as they are.
    assert_eq!(
        env.rev(&format!("{}:0", checkpoint_ref(HEX_ID))),
        env.rev(&format!("{V1_BRANCH}:a1/b2c3d4e5f6/0"))
    );
    assert_eq!(
        env.rev(&format!("{}:1", checkpoint_ref(HEX_ID))),
        env.rev(&format!("{V1_BRANCH}:a1/b2c3d4e5f6/1"))
    );
    let root = env.json(Store::Refs, HEX_ID, "metadata.json");
    assert_eq!(
        root["sessions"],
        json!([
            {
                "metadata": "/0/metadata.json",
                "transcript": "/0/full.jsonl",
                "content_hash": "/0/content_hash.txt",
                "prompt": "/0/prompt.txt"
            },
            {
                "metadata": "/1/metadata.json",
                "transcript": "/1/full.jsonl",
                "content_hash": "/1/content_hash.txt",
                "prompt": "/1/prompt.txt"
            }
        ]),
        "v1 paths rebased to the checkpoint root"
    );
    assert_eq!(
        env.rev(V1_BRANCH).unwrap(),
        v1_tip,
        "the v1 branch is untouched"
    );
    assert_eq!(
        env.queued_in(None, env.repo()),
        2,
        "migrated refs are queued for push"
    );
}

#[test]
fn normalisation_drops_checkpoint_version_and_keeps_unknown_keys() {
    let env = TestEnv::new();
    let p = format!("/{}", branch_dir(HEX_ID_3));
    let legacy_root = format!(
        concat!(
            "{{\"checkpoint_id\":\"{id}\",\"checkpoint_version\":\"branch-v1\",",
            "\"checkpoints_count\":2,\"cli_version\":\"0.8.1\",\"files_touched\":[\"a.go\"],",
            "\"future_root_key\":{{\"nested\":[1,2]}},",
            "\"sessions\":[{{\"content_hash\":\"{p}/0/content_hash.txt\",\"context\":\"{p}/0/context.md\",",
            "\"metadata\":\"{p}/0/metadata.json\",\"prompt\":\"\",\"label\":\"not a path\",",
            "\"transcript\":\"{p}/0/full.jsonl\"}}],\"strategy\":\"manual-commit\"}}"
        ),
        id = HEX_ID_3,
        p = p
    );
    let hash = format!("sha256:{}", sha256_hex(TRANSCRIPT));
    let legacy = tree(vec![
        ("metadata.json", blob(legacy_root.as_bytes())),
        (
            "0",
            tree(vec![
                ("content_hash.txt", blob(hash.as_bytes())),
                ("context.md", blob(b"# Context\n")),
                ("full.jsonl", blob(TRANSCRIPT)),
                (
                    "metadata.json",
                    blob(crate::fixtures::session_metadata_json(HEX_ID_3, "legacy").as_bytes()),
                ),
            ]),
        ),
    ]);
    hand_made_v1(&env, vec![(HEX_ID_3, legacy)]);
    assert_eq!(migrate(&env, &[]), migrated_line(1, 0, 1));
    assert_migrated_from(&env, HEX_ID_3, &v1_spec(HEX_ID_3));
    let root = env.json(Store::Refs, HEX_ID_3, "metadata.json");
    assert_eq!(root["future_root_key"], json!({"nested": [1, 2]}));
    assert_eq!(root["cli_version"], json!("0.8.1"));
    assert_eq!(root["sessions"][0]["context"], json!("/0/context.md"));
    assert_eq!(root["sessions"][0]["label"], json!("not a path"));
    assert_eq!(root["sessions"][0]["prompt"], json!(""));
    assert_eq!(root["sessions"][0]["metadata"], json!("/0/metadata.json"));
    assert!(root.get("checkpoint_version").is_none());
}

#[test]
fn unchanged_metadata_reuses_the_v1_subtree() {
    // Root paths already relative to the checkpoint and no checkpoint_version: nothing to
    // normalise, so the ref's tree is the v1 subtree itself.
    let env = TestEnv::new();
    let root = root_metadata_json(HEX_ID, "");
    let node = checkpoint_node(HEX_ID, "hand-sess", root.as_bytes(), TRANSCRIPT);
    hand_made_v1(&env, vec![(HEX_ID, node)]);
    assert_eq!(migrate(&env, &[]), migrated_line(1, 0, 1));
    assert_eq!(
        env.rev(&format!("{}^{{tree}}", checkpoint_ref(HEX_ID))),
        env.rev(&v1_spec(HEX_ID)),
        "the v1 subtree hash is reused verbatim"
    );
}

#[test]
fn rerun_writes_nothing_and_keeps_refs_queued() {
    let env = TestEnv::new();
    two_on_v1(&env);
    assert_eq!(migrate(&env, &[]), migrated_line(2, 0, 2));
    let refs = env.refs_snapshot();
    let objects = count_objects(&env);
    assert_eq!(migrate(&env, &[]), migrated_line(0, 2, 2));
    assert_eq!(env.refs_snapshot(), refs, "no ref moved");
    assert_eq!(count_objects(&env), objects, "no new objects");
    assert_eq!(
        env.queued_in(None, env.repo()),
        2,
        "still queued, not duplicated"
    );
    for id in [HEX_ID, HEX_ID_2] {
        assert_eq!(env.parents(&env.tip(Store::Refs, id)), Vec::<String>::new());
    }
}

#[test]
fn new_and_updated_v1_checkpoints_migrate_on_a_later_run() {
    let env = TestEnv::new();
    two_on_v1(&env);
    assert_eq!(migrate(&env, &[]), migrated_line(2, 0, 2));
    let first_tip = env.tip(Store::Refs, HEX_ID);
    let untouched_tip = env.tip(Store::Refs, HEX_ID_2);
    // A new checkpoint and a backfill of an already migrated one, both on v1.
    write_std(&env, Store::Branch, HEX_ID_3, "sess-4", TRANSCRIPT_2);
    let f = env.input_file("summary.json", br#"{"intent": "later", "outcome": "done"}"#);
    env.ok(
        Store::Branch,
        &[
            "backfill",
            "summary",
            HEX_ID,
            "--summary",
            f.to_str().unwrap(),
        ],
    );
    assert_eq!(migrate(&env, &[]), migrated_line(2, 1, 3));
    // The updated checkpoint's ref advanced by one import commit on top of the old tip.
    let tip = env.tip(Store::Refs, HEX_ID);
    assert_ne!(tip, first_tip);
    assert_eq!(env.parents(&tip), vec![first_tip]);
    assert_eq!(env.subject(&tip), import_subject(HEX_ID));
    assert_migrated_from(&env, HEX_ID, &v1_spec(HEX_ID));
    assert_eq!(
        env.json(Store::Refs, HEX_ID, "1/metadata.json")["summary"]["intent"],
        json!("later")
    );
    assert_eq!(env.tip(Store::Refs, HEX_ID_2), untouched_tip);
    assert_migrated_from(&env, HEX_ID_3, &v1_spec(HEX_ID_3));
    assert_eq!(env.queued_in(None, env.repo()), 3);
}

#[test]
fn existing_ref_with_other_sessions_keeps_them_beside_the_import() {
    let env = TestEnv::new();
    // Session A written under git-branch, then session B into the same checkpoint under
    // git-refs: the migrated tip must show both (merged by session), never A alone.
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(&env, Store::Refs, HEX_ID, "sess-refs", TRANSCRIPT_2);
    let before = env.tip(Store::Refs, HEX_ID);
    assert_eq!(migrate(&env, &[]), migrated_line(1, 0, 1));
    let tip = env.tip(Store::Refs, HEX_ID);
    assert_eq!(env.parents(&tip), vec![before], "never a force: parented");
    assert_eq!(env.subject(&tip), import_subject(HEX_ID));
    let root: Value =
        parse_json(&env.git_bytes(&["cat-file", "blob", &format!("{tip}:metadata.json")]));
    let sessions = root["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "both sessions on the tip: {root}");
    let mut ids = Vec::new();
    for s in sessions {
        let path = s["metadata"].as_str().unwrap().trim_start_matches('/');
        let meta: Value =
            parse_json(&env.git_bytes(&["cat-file", "blob", &format!("{tip}:{path}")]));
        ids.push(meta["session_id"].as_str().unwrap().to_owned());
    }
    ids.sort();
    assert_eq!(ids, vec!["sess-1", "sess-refs"]);
    let transcript = |sid: &str| {
        let i = sessions
            .iter()
            .position(|s| {
                let path = s["metadata"].as_str().unwrap().trim_start_matches('/');
                let meta: Value =
                    parse_json(&env.git_bytes(&["cat-file", "blob", &format!("{tip}:{path}")]));
                meta["session_id"] == sid
            })
            .unwrap();
        let path = sessions[i]["transcript"]
            .as_str()
            .unwrap()
            .trim_start_matches('/');
        env.git_bytes(&["cat-file", "blob", &format!("{tip}:{path}")])
    };
    assert_eq!(transcript("sess-1"), TRANSCRIPT);
    assert_eq!(transcript("sess-refs"), TRANSCRIPT_2);
    assert_eq!(migrate(&env, &[]), migrated_line(0, 1, 1), "idempotent");
    assert_eq!(env.tip(Store::Refs, HEX_ID), tip);
}

#[test]
fn dry_run_writes_nothing() {
    let env = TestEnv::new();
    two_on_v1(&env);
    let refs = env.refs_snapshot();
    let objects = count_objects(&env);
    let queue_file = env
        .repo()
        .join(".git")
        .join("entire-checkpoint-push-queue.jsonl");
    assert_eq!(migrate(&env, &["--dry-run"]), would_line(2, 0, 2));
    assert_eq!(env.refs_snapshot(), refs, "no refs written");
    assert_eq!(env.checkpoint_refs(), Vec::<String>::new());
    assert_eq!(count_objects(&env), objects, "no objects written");
    assert!(!queue_file.exists(), "nothing queued");
    assert_eq!(env.queued_in(None, env.repo()), 0);
    // The real run still has everything to do; a dry run afterwards has nothing.
    assert_eq!(migrate(&env, &[]), migrated_line(2, 0, 2));
    let refs = env.refs_snapshot();
    let objects = count_objects(&env);
    assert_eq!(migrate(&env, &["--dry-run"]), would_line(0, 2, 2));
    assert_eq!(env.refs_snapshot(), refs);
    assert_eq!(count_objects(&env), objects);
}

#[test]
fn dry_run_counts_an_update_without_writing_it() {
    let env = TestEnv::new();
    two_on_v1(&env);
    migrate(&env, &[]);
    let f = env.input_file("summary.json", br#"{"intent": "changed"}"#);
    env.ok(
        Store::Branch,
        &[
            "backfill",
            "summary",
            HEX_ID_2,
            "--summary",
            f.to_str().unwrap(),
        ],
    );
    let refs = env.refs_snapshot();
    let objects = count_objects(&env);
    assert_eq!(migrate(&env, &["--dry-run"]), would_line(1, 1, 2));
    assert_eq!(env.refs_snapshot(), refs);
    assert_eq!(
        count_objects(&env),
        objects,
        "not even the new metadata blob"
    );
}

#[test]
fn corrupt_v1_entry_is_skipped_and_the_rest_migrate() {
    let env = TestEnv::new();
    let good_root = root_metadata_json(HEX_ID, &format!("/{}", branch_dir(HEX_ID)));
    let good = checkpoint_node(HEX_ID, "hand-sess", good_root.as_bytes(), TRANSCRIPT);
    let bad = checkpoint_node(HEX_ID_3, "hand-sess", b"{ this is not json", TRANSCRIPT);
    let good_2_root = root_metadata_json(HEX_ID_2, &format!("/{}", branch_dir(HEX_ID_2)));
    let good_2 = checkpoint_node(HEX_ID_2, "hand-sess", good_2_root.as_bytes(), TRANSCRIPT_2);
    hand_made_v1(
        &env,
        vec![(HEX_ID, good), (HEX_ID_3, bad), (HEX_ID_2, good_2)],
    );
    let out = env.run_default(&["migrate"]);
    let err = assert_code(&out, 1, "migrate with a corrupt v1 entry");
    assert!(
        err.contains(&branch_dir(HEX_ID_3)) || err.contains(HEX_ID_3),
        "the warning names the corrupt entry: {err}"
    );
    let text = stdout(&out);
    assert!(
        text.starts_with("Migrated 2 checkpoint(s) to refs (0 already up to date, "),
        "stdout: {text}"
    );
    assert_eq!(
        text.lines().count(),
        1,
        "diagnostics stay off stdout: {text}"
    );
    let mut expected = vec![checkpoint_ref(HEX_ID_2), checkpoint_ref(HEX_ID)];
    expected.sort();
    assert_eq!(env.checkpoint_refs(), expected);
    assert_eq!(
        env.rev(&checkpoint_ref(HEX_ID_3)),
        None,
        "corrupt entry not migrated"
    );
    assert_migrated_from(&env, HEX_ID, &v1_spec(HEX_ID));
    assert_migrated_from(&env, HEX_ID_2, &v1_spec(HEX_ID_2));
    // A re-run reports the same entry again and leaves the good refs alone.
    let refs = env.refs_snapshot();
    let out = env.run_default(&["migrate"]);
    let err = assert_code(&out, 1, "re-run with a corrupt v1 entry");
    assert!(
        err.contains(&branch_dir(HEX_ID_3)) || err.contains(HEX_ID_3),
        "{err}"
    );
    assert!(
        stdout(&out).starts_with("Migrated 0 checkpoint(s) to refs (2 already up to date, "),
        "{}",
        stdout(&out)
    );
    assert_eq!(env.refs_snapshot(), refs);
}

#[test]
fn without_a_v1_branch_there_is_nothing_to_migrate() {
    let env = TestEnv::new();
    assert_eq!(migrate(&env, &[]), NOTHING);
    assert_eq!(migrate(&env, &["--dry-run"]), NOTHING);
    // Checkpoints in refs alone do not change that.
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let refs = env.refs_snapshot();
    assert_eq!(migrate(&env, &[]), NOTHING);
    assert_eq!(env.refs_snapshot(), refs);
}

#[test]
fn falls_back_to_the_origin_tracking_branch() {
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    let tip = env.rev(V1_BRANCH).unwrap();
    env.git(&["update-ref", V1_TRACKING, &tip]);
    env.git(&["update-ref", "-d", V1_BRANCH]);
    assert_eq!(migrate(&env, &[]), migrated_line(1, 0, 1));
    assert_migrated_from(
        &env,
        HEX_ID,
        &format!("{V1_TRACKING}:{}", branch_dir(HEX_ID)),
    );
    assert_eq!(env.rev(V1_BRANCH), None, "the local branch is not created");
    assert_eq!(env.rev(V1_TRACKING), Some(tip));
}

#[test]
fn the_local_v1_branch_wins_over_the_tracking_branch() {
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID_2, "sess-remote", TRANSCRIPT);
    let remote_tip = env.rev(V1_BRANCH).unwrap();
    env.git(&["update-ref", V1_TRACKING, &remote_tip]);
    env.git(&["update-ref", "-d", V1_BRANCH]);
    write_std(&env, Store::Branch, HEX_ID, "sess-local", TRANSCRIPT);
    assert_eq!(migrate(&env, &[]), migrated_line(1, 0, 1));
    assert_eq!(env.checkpoint_refs(), vec![checkpoint_ref(HEX_ID)]);
    assert_migrated_from(&env, HEX_ID, &v1_spec(HEX_ID));
}

#[test]
fn after_migration_a_refs_primary_reads_hex_from_refs() {
    // Scenario 63.
    let env = TestEnv::new();
    two_on_v1(&env);
    migrate(&env, &[]);
    env.write_file(".entire/settings.json", REFS_ONLY.as_bytes());
    for id in [HEX_ID, HEX_ID_2] {
        let out = env.run_default(&["show", id, "--json", "--no-fetch"]);
        assert_success(&out, &["show", id]);
        let v = parse_json(&out.stdout);
        assert_eq!(v["store"], json!("git-refs"), "{id}");
        assert_eq!(v["ref"], json!(checkpoint_ref(id)), "{id}");
        assert_eq!(v["commit"], json!(env.tip(Store::Refs, id)), "{id}");
        let v1_session = env.json(Store::Branch, id, "0/metadata.json");
        assert_eq!(v["sessions"][0], v1_session, "{id}: session 0 as on v1");
        let out = env.run_default(&["cat", id, "0/full.jsonl"]);
        assert_success(&out, &["cat", id]);
        assert_eq!(out.stdout, env.blob(Store::Branch, id, "0/full.jsonl"));
    }
    let out = env.run_default(&["list", "--json"]);
    assert_success(&out, &["list", "--json"]);
    let entries = parse_json(&out.stdout);
    let entries = entries.as_array().expect("array");
    assert_eq!(entries.len(), 2, "de-duplicated: {entries:?}");
    for e in entries {
        assert_eq!(e["store"], json!("git-refs"), "{e}");
    }
    // The default topology still reads the branch copy.
    std::fs::remove_file(env.repo().join(".entire/settings.json")).unwrap();
    let out = env.run_default(&["show", HEX_ID, "--json", "--no-fetch"]);
    assert_success(&out, &["show", HEX_ID]);
    assert_eq!(parse_json(&out.stdout)["store"], json!("git-branch"));
}

#[test]
fn a_ulid_left_only_on_the_v1_mirror_is_restored_into_refs() {
    // Written in the parallel rollout, then its ref lost: v1 still has it, and migration
    // brings it back under its RefName.
    let env = TestEnv::new();
    env.write_file(".entire/settings.json", PARALLEL.as_bytes());
    let f = env.input_file("t.jsonl", TRANSCRIPT);
    let out = env.run_default(&[
        "write",
        "--session",
        "sess-1",
        "--id",
        ULID_ID,
        "--transcript",
        f.to_str().unwrap(),
    ]);
    assert_success(&out, &["write"]);
    let original_root = env.json(Store::Refs, ULID_ID, "metadata.json");
    env.git(&["update-ref", "-d", &checkpoint_ref(ULID_ID)]);
    assert_eq!(migrate(&env, &[]), migrated_line(1, 0, 1));
    assert_migrated_from(&env, ULID_ID, &v1_spec(ULID_ID));
    assert_eq!(
        env.json(Store::Refs, ULID_ID, "metadata.json"),
        original_root
    );
    let out = env.run_default(&["show", ULID_ID, "--json", "--no-fetch"]);
    assert_success(&out, &["show", ULID_ID]);
    assert_eq!(parse_json(&out.stdout)["store"], json!("git-refs"));
}

#[test]
fn normalisation_leaves_null_arrays_alone() {
    // Older writers encode empty slices as `null`. Migration only rebases the session paths and
    // drops `checkpoint_version` (docs/format.md, "Migration from the v1 branch"); any other
    // value stays as stored.
    let env = TestEnv::new();
    let p = format!("/{}", branch_dir(HEX_ID));
    let root = format!(
        concat!(
            "{{\"checkpoint_id\":\"{id}\",\"strategy\":\"manual-commit\",",
            "\"checkpoints_count\":1,\"files_touched\":null,",
            "\"sessions\":[{{\"metadata\":\"{p}/0/metadata.json\",",
            "\"transcript\":\"{p}/0/full.jsonl\",\"prompt\":\"\"}}]}}"
        ),
        id = HEX_ID,
        p = p
    );
    let node = checkpoint_node(HEX_ID, "hand-sess", root.as_bytes(), TRANSCRIPT);
    hand_made_v1(&env, vec![(HEX_ID, node)]);
    assert_eq!(migrate(&env, &[]), migrated_line(1, 0, 1));
    let migrated = env.json(Store::Refs, HEX_ID, "metadata.json");
    assert_eq!(
        migrated["sessions"][0]["metadata"],
        json!("/0/metadata.json")
    );
    assert_eq!(
        migrated["files_touched"],
        Value::Null,
        "files_touched: null must survive migration unchanged: {migrated}"
    );
}

#[test]
fn a_queue_failure_fails_the_migration() {
    // Unlike a session write, nothing else would announce the migrated refs, so an enqueue
    // failure is a hard error (docs/format.md, "Migration from the v1 branch").
    let env = TestEnv::new();
    two_on_v1(&env);
    std::fs::create_dir_all(
        env.repo()
            .join(".git")
            .join("entire-checkpoint-push-queue.jsonl"),
    )
    .unwrap();
    let out = env.run_default(&["migrate"]);
    let err = assert_code(&out, 1, "migrate with an unwritable queue");
    assert!(err.contains("queue"), "the error names the queue: {err}");
    assert!(
        !stdout(&out).starts_with("Migrated 2"),
        "no success summary: {}",
        stdout(&out)
    );
}
