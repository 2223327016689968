//! Real data shapes, built by hand with git plumbing: `sessions[]` entries that point at
//! non-consecutive directories (as older reference versions left them after merges), 20+
//! sessions, compact transcripts and keys we do not model; and bad input (a path outside the
//! checkpoint, a missing or shared directory, a non-checkpoint entry on the branch, blobs
//! absent from the object store). `list` never silently omits a checkpoint it cannot read.

use serde_json::{json, Value};

use crate::env::{
    assert_code, assert_failed, checkpoint_ref, parse_json, tree_prefix, Store, TestEnv, V1_BRANCH,
};
use crate::fixtures::{
    blob, checkpoint_node, commit_tree, hand_made_ref, root_metadata_json, tree, write_node,
    write_std, Node,
};

const ID: &str = "a1b2c3d4e5f6";
const OTHER: &str = "0123456789ab";

/// The root summary of a checkpoint whose sessions live in `dirs`, with keys we do not model
/// (as the reference's newer versions write them) at the root and in each entry. `paths`
/// overrides the `metadata` path of an entry.
fn root_json(store: Store, id: &str, dirs: &[&str], paths: &[(usize, &str)]) -> String {
    let p = tree_prefix(store, id);
    let sessions: Vec<Value> = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let metadata = paths
                .iter()
                .find(|(at, _)| *at == i)
                .map(|(_, path)| (*path).to_string())
                .unwrap_or(format!("{p}/{d}/metadata.json"));
            json!({
                "metadata": metadata,
                "transcript": format!("{p}/{d}/full.jsonl"),
                "compact_transcript": format!("{p}/{d}/transcript.jsonl"),
                "content_hash": format!("{p}/{d}/content_hash.txt"),
                "prompt": format!("{p}/{d}/prompt.txt"),
                "initial_attribution": {"agent_lines": i, "human_lines": 0},
            })
        })
        .collect();
    let doc = json!({
        "cli_version": "0.4.9",
        "checkpoint_id": id,
        "strategy": "manual-commit",
        "checkpoints_count": dirs.len(),
        "files_touched": ["a.go"],
        "sessions": sessions,
        "session_metrics": {"turns": 7},
        "prompt_attributions": [{"prompt": 0, "lines": 3}],
    });
    serde_json::to_string_pretty(&doc).unwrap() + "\n"
}

fn session_dir(id: &str, dir: &str) -> Node {
    let meta = json!({
        "cli_version": "0.4.9",
        "checkpoint_id": id,
        "session_id": format!("sess-{dir}"),
        "strategy": "manual-commit",
        "created_at": "2026-09-01T08:00:00Z",
        "checkpoints_count": 1,
        "files_touched": ["a.go"],
        "agent": "Codex",
        "turn_id": format!("turn-{dir}"),
        "save_step_count": 2,
        "compact_transcript_start": 0,
    });
    let transcript = format!("{{\"dir\":\"{dir}\"}}\n");
    tree(vec![
        (
            "metadata.json",
            blob(serde_json::to_string_pretty(&meta).unwrap().as_bytes()),
        ),
        ("full.jsonl", blob(transcript.as_bytes())),
        ("transcript.jsonl", blob(b"{\"compact\":true}\n")),
        ("content_hash.txt", blob(b"sha256:0\n")),
        ("prompt.txt", blob(format!("prompt {dir}").as_bytes())),
    ])
}

/// The tree of a checkpoint whose `sessions[]` is `root` and which holds `present`.
fn node(id: &str, root: &str, present: &[&str]) -> Node {
    let mut entries = vec![("metadata.json", blob(root.as_bytes()))];
    entries.extend(present.iter().map(|d| (*d, session_dir(id, d))));
    tree(entries)
}

/// Stores each `(id, node)` in `store`: a ref each, or one v1 branch commit holding them all.
fn store_all(env: &TestEnv, store: Store, all: Vec<(&str, Node)>) {
    match store {
        Store::Refs => {
            for (id, n) in &all {
                hand_made_ref(env, &checkpoint_ref(id), id, n);
            }
        }
        Store::Branch => {
            let root = Node::Tree(
                all.into_iter()
                    .map(|(id, n)| {
                        let (head, rest) = id.split_at(2);
                        (head.to_string(), Node::Tree(vec![(rest.to_string(), n)]))
                    })
                    .collect(),
            );
            let tree = write_node(env, &root);
            let tip = commit_tree(env, &tree, None, "Checkpoint: several\n");
            env.git(&["update-ref", V1_BRANCH, &tip]);
        }
    }
}

fn checkpoint(env: &TestEnv, store: Store, id: &str, root: &str, present: &[&str]) {
    store_all(env, store, vec![(id, node(id, root, present))]);
}

/// A valid one-session checkpoint `OTHER`.
fn good(store: Store) -> (&'static str, Node) {
    let root = root_metadata_json(OTHER, &tree_prefix(store, OTHER));
    (OTHER, checkpoint_node(OTHER, "s", root.as_bytes(), b"{}\n"))
}

/// The `git ls-tree` lines (mode, type, object, name) of a checkpoint's root.
fn ls_tree_root(env: &TestEnv, store: Store, id: &str) -> Vec<String> {
    env.git(&["ls-tree", &env.spec(store, id, "")])
        .lines()
        .map(str::to_owned)
        .collect()
}

fn list_json(env: &TestEnv, store: Store) -> (Option<i32>, Vec<Value>, String) {
    let out = env.run(store, &["list", "--json"]);
    let v = parse_json(&out.stdout);
    let arr = v.as_array().cloned().unwrap_or_default();
    (
        out.status.code(),
        arr,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Directories 0 and 2..=23: 23 sessions with a gap where `1/` was.
fn gapped_dirs() -> Vec<String> {
    std::iter::once(0)
        .chain(2..=23)
        .map(|n| n.to_string())
        .collect()
}

fn gapped_slots_are_read_from_the_directories_sessions_names(store: Store) {
    let env = TestEnv::new();
    let dirs = gapped_dirs();
    let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    checkpoint(&env, store, ID, &root_json(store, ID, &dirs, &[]), &dirs);
    let shown = env.ok_json(store, &["show", ID, "--json"]);
    let sids: Vec<&Value> = shown["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["session_id"])
        .collect();
    let expected: Vec<Value> = dirs.iter().map(|d| json!(format!("sess-{d}"))).collect();
    assert_eq!(sids, expected.iter().collect::<Vec<_>>());
    assert_eq!(
        shown["sessions"][1]["turn_id"],
        json!("turn-2"),
        "unknown keys shown"
    );
    let transcript = env.ok(store, &["show", ID, "--transcript", "--session", "sess-2"]);
    assert_eq!(transcript, "{\"dir\":\"2\"}\n");
    let (code, listed, stderr) = list_json(&env, store);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(listed[0]["session_count"], json!(23));
}

fn a_write_to_a_gapped_checkpoint_uses_a_free_directory(store: Store) {
    let env = TestEnv::new();
    let dirs = ["0", "2", "3"];
    let root = root_json(store, ID, &dirs, &[]);
    checkpoint(&env, store, ID, &root, &dirs);
    let before = ls_tree_root(&env, store, ID);
    let old_root: Value = serde_json::from_str(&root).unwrap();
    write_std(&env, store, ID, "sess-new", b"{\"new\":1}\n");
    let after = ls_tree_root(&env, store, ID);
    for line in before.iter().filter(|l| !l.ends_with("\tmetadata.json")) {
        assert!(after.contains(line), "{line} kept as it was: {after:?}");
    }
    assert!(
        after.iter().any(|l| l.ends_with("\t4")),
        "the new session went to 4/: {after:?}"
    );
    let new_root = env.json(store, ID, "metadata.json");
    let entries = new_root["sessions"].as_array().unwrap();
    assert_eq!(entries.len(), 4);
    assert_eq!(entries[..3], old_root["sessions"].as_array().unwrap()[..]);
    let p = tree_prefix(store, ID);
    assert_eq!(
        entries[3]["metadata"],
        json!(format!("{p}/4/metadata.json"))
    );
    assert_eq!(new_root["session_metrics"], old_root["session_metrics"]);
    assert_eq!(
        new_root["prompt_attributions"],
        old_root["prompt_attributions"]
    );
    assert_eq!(
        env.json(store, ID, "4/metadata.json")["session_id"],
        json!("sess-new")
    );
    // Rewriting a gapped session rewrites its own directory, not `<index>/`.
    write_std(&env, store, ID, "sess-3", b"{\"again\":1}\n");
    assert_eq!(env.blob(store, ID, "3/full.jsonl"), b"{\"again\":1}\n");
    assert_eq!(env.blob(store, ID, "2/full.jsonl"), b"{\"dir\":\"2\"}\n");
}

/// One bad checkpoint beside a good one: `show` of the bad one names the problem, `list` still
/// lists both, marks the bad one and exits 1, and nothing is written.
fn assert_bad(env: &TestEnv, store: Store, id: &str, problem: &str) {
    let refs = env.refs_snapshot();
    let out = env.run(store, &["show", id]);
    let err = assert_failed(&out, "show of a bad checkpoint");
    assert!(err.contains(id) && err.contains(problem), "{err}");
    let (code, listed, stderr) = list_json(env, store);
    assert_eq!(code, Some(1), "list exits 1: {stderr}");
    let bad = listed
        .iter()
        .find(|e| e["checkpoint_id"] == json!(id))
        .unwrap_or_else(|| panic!("{id} listed: {listed:?}"));
    assert!(
        bad["error"].as_str().is_some_and(|e| e.contains(problem)),
        "{bad}"
    );
    assert!(stderr.contains(id) && stderr.contains(problem), "{stderr}");
    let good = listed
        .iter()
        .find(|e| e["checkpoint_id"] == json!(OTHER))
        .expect("the good checkpoint is listed");
    assert!(good.get("error").is_none(), "{good}");
    let human = env.run(store, &["list"]);
    let text = assert_code(&human, 1, "list");
    assert!(text.contains(problem), "{text}");
    assert!(String::from_utf8_lossy(&human.stdout).contains("unreadable"));
    assert_eq!(env.refs_snapshot(), refs, "nothing written");
}

/// `(sessions[] directories, overridden metadata paths, directories present, the problem)`.
type BadCase = (
    &'static [&'static str],
    &'static [(usize, &'static str)],
    &'static [&'static str],
    &'static str,
);

fn bad_session_paths_are_named_and_the_others_stay_readable(store: Store) {
    let cases: [BadCase; 6] = [
        (
            &["0"],
            &[(0, "/../0/metadata.json")],
            &["0"],
            "points outside the checkpoint",
        ),
        (
            &["0"],
            &[(0, "/ff/ffffffffff/0/metadata.json")],
            &["0"],
            "points outside the checkpoint",
        ),
        (
            &["0", "1"],
            &[(1, "/0/metadata.json")],
            &["0"],
            "names the same directory",
        ),
        (&["0", "7"], &[], &["0"], "7/metadata.json is missing"),
        // A doubled path that still escapes.
        (
            &["0"],
            &[(0, "/a1/b2c3d4e5f6/a1/b2c3d4e5f6/../0/metadata.json")],
            &["0"],
            "points outside the checkpoint",
        ),
        (
            &["0"],
            &[(0, "/a1/b2c3d4e5f6/ff/ffffffffff/0/metadata.json")],
            &["0"],
            "points outside the checkpoint",
        ),
    ];
    for (dirs, paths, present, problem) in cases {
        let env = TestEnv::new();
        let bad = node(ID, &root_json(store, ID, dirs, paths), present);
        store_all(&env, store, vec![(ID, bad), good(store)]);
        assert_bad(&env, store, ID, problem);
    }
}

#[test]
fn a_non_checkpoint_entry_on_the_branch_is_listed_as_unreadable() {
    // A directory without a checkpoint, then a blob, where a checkpoint belongs.
    a_non_checkpoint_entry_is_listed(tree(vec![("notes.txt", blob(b"not a checkpoint\n"))]));
    a_non_checkpoint_entry_is_listed(blob(b"a file, not a directory\n"));
}

fn a_non_checkpoint_entry_is_listed(entry: Node) {
    let env = TestEnv::new();
    let (head, rest) = ID.split_at(2);
    let (other, good_node) = good(Store::Branch);
    let (oh, orest) = other.split_at(2);
    let root = Node::Tree(vec![
        (
            oh.to_string(),
            Node::Tree(vec![(orest.to_string(), good_node)]),
        ),
        (
            head.to_string(),
            Node::Tree(vec![(rest.to_string(), entry)]),
        ),
    ]);
    let tree = write_node(&env, &root);
    let tip = commit_tree(&env, &tree, None, "odd\n");
    env.git(&["update-ref", V1_BRANCH, &tip]);
    let (code, listed, stderr) = list_json(&env, Store::Branch);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(
        stderr.contains(&format!("{head}/{rest}")) && stderr.contains("not a checkpoint"),
        "{stderr}"
    );
}

/// Removes a loose object, as a partial clone or the corpus snapshot leaves a blob absent.
fn drop_object(env: &TestEnv, oid: &str) {
    let path = env
        .common_dir()
        .join("objects")
        .join(&oid[..2])
        .join(&oid[2..]);
    std::fs::remove_file(&path).expect("the object is loose");
}

fn absent_blobs_are_clear_errors_and_stop_nothing_else(store: Store) {
    let env = TestEnv::new();
    let dirs = ["0", "2"];
    let root = root_json(store, ID, &dirs, &[]);
    store_all(&env, store, vec![(ID, node(ID, &root, &dirs)), good(store)]);
    let transcript = env.git(&["rev-parse", &env.spec(store, ID, "2/full.jsonl")]);
    drop_object(&env, transcript.trim());
    let out = env.run(store, &["show", ID, "--transcript", "--session", "sess-2"]);
    let err = assert_failed(&out, "show of an absent transcript");
    assert!(err.contains(ID) && err.contains("2/full.jsonl"), "{err}");
    let (code, listed, stderr) = list_json(&env, store);
    assert_eq!((code, listed.len()), (Some(0), 2), "{stderr}");

    let meta = env.git(&["rev-parse", &env.spec(store, ID, "2/metadata.json")]);
    drop_object(&env, meta.trim());
    // The summary index the listing above wrote trusts the object store, as git's commit-graph
    // does: a blob lost without its ref moving is found by `doctor`, which compares every record
    // with its checkpoint, and `--fix` deletes the index (docs/decisions.md, "A summary index
    // for list").
    if store == Store::Refs {
        let report = env.run(store, &["doctor", "--json", "--fix"]);
        let report: Value = serde_json::from_slice(&report.stdout).unwrap();
        let found = report["findings"].as_array().unwrap();
        assert!(
            found
                .iter()
                .any(|f| f["code"] == "summary-index" && f["fixed"] == true),
            "{report}"
        );
        assert!(!crate::summary_index::index_path(&env).exists());
    }
    assert_bad(&env, store, ID, "2/metadata.json");
}

/// Shapes the reference wrote that it reads: session paths with the checkpoint's path doubled
/// (read from the directory they name), an entry naming a directory that is not there (read
/// from `<slot>/`), and session directories `sessions[]` does not list (shown after the listed
/// ones, reached by `--session`). Nothing is written.
fn doubled_paths_missing_directories_and_unlisted_sessions_are_read(store: Store) {
    let env = TestEnv::new();
    let doubled = format!(
        "/{}/{}/{}/{}/1/metadata.json",
        &ID[..2],
        &ID[2..],
        &ID[..2],
        &ID[2..]
    );
    let root = root_json(
        store,
        ID,
        &["0", "1", "2"],
        &[(1, doubled.as_str()), (2, "/9/metadata.json")],
    );
    store_all(
        &env,
        store,
        vec![
            (ID, node(ID, &root, &["0", "1", "2", "3", "5"])),
            good(store),
        ],
    );
    let refs = env.refs_snapshot();
    let v = env.ok_json(store, &["show", ID, "--json"]);
    let sessions: Vec<&str> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, ["sess-0", "sess-1", "sess-2", "sess-3", "sess-5"]);
    assert_eq!(v["unlisted_sessions"], json!([3, 4]));
    crate::schemas::assert_valid("show.json", "show of unlisted sessions", &v);
    let human = env.ok(store, &["show", ID]);
    assert!(
        human.contains("  listed   no: directory 5/ is not in sessions[]\n"),
        "{human}"
    );
    // --session reaches an unlisted session, by slot and by ID.
    for sel in ["4", "sess-5"] {
        let out = env.ok(store, &["show", ID, "--session", sel, "--transcript"]);
        assert_eq!(out, "{\"dir\":\"5\"}\n");
    }
    let out = env.ok(store, &["show", ID, "--session", "1", "--transcript"]);
    assert_eq!(out, "{\"dir\":\"1\"}\n", "the doubled path names 1/");
    let list = env.ok_json(store, &["list", "--json"]);
    let mine = list
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["checkpoint_id"] == ID)
        .unwrap();
    assert_eq!(mine["session_count"], 5);
    assert_eq!(env.refs_snapshot(), refs, "nothing written");
}

both_stores! {
    doubled_paths => doubled_paths_missing_directories_and_unlisted_sessions_are_read;
    gapped_slots => gapped_slots_are_read_from_the_directories_sessions_names;
    gapped_write => a_write_to_a_gapped_checkpoint_uses_a_free_directory;
    bad_session_paths => bad_session_paths_are_named_and_the_others_stay_readable;
    absent_blobs => absent_blobs_are_clear_errors_and_stop_nothing_else;
}

/// A v1 branch whose tip is a merge commit (older writers merged concurrent branch tips): every
/// checkpoint on it is read, listed and logged, and the next write builds on the merge.
#[test]
fn a_merge_commit_on_the_branch_is_read_and_written_on() {
    let env = TestEnv::new();
    let ids = ["a1b2c3d4e5f6", "f6e5d4c3b2a1", "0a0b0c0d0e0f"];
    let mut tips = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let t = env.input_file(&format!("t{i}.jsonl"), b"{}\n");
        let out = env.run(
            Store::Branch,
            &[
                "write",
                "--id",
                id,
                "--session",
                &format!("s{i}"),
                "--transcript",
                t.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{out:?}");
        tips.push(env.rev(V1_BRANCH).unwrap());
    }
    let tree = env.rev(&format!("{}^{{tree}}", tips[2])).unwrap();
    let merge = env
        .git_stdin(
            &["commit-tree", &tree, "-p", &tips[1], "-p", &tips[0]],
            b"Merge concurrent checkpoint writes\n",
        )
        .trim()
        .to_owned();
    env.git(&["update-ref", V1_BRANCH, &merge]);

    let (code, listed, stderr) = list_json(&env, Store::Branch);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(listed.len(), 3, "{listed:?}");
    for id in ids {
        let out = env.run(Store::Branch, &["show", id, "--json"]);
        assert!(out.status.success(), "show {id}: {out:?}");
        let out = env.run(Store::Branch, &["log", id, "--json"]);
        assert!(out.status.success(), "log {id}: {out:?}");
    }
    let t = env.input_file("t3.jsonl", b"{}\n");
    let out = env.run(
        Store::Branch,
        &[
            "write",
            "--id",
            "123456789abc",
            "--session",
            "s3",
            "--transcript",
            t.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let tip = env.rev(V1_BRANCH).unwrap();
    assert_eq!(
        env.parents(&tip),
        vec![merge],
        "the write builds on the merge"
    );
    assert_eq!(list_json(&env, Store::Branch).1.len(), 4);
}
