//! Checkpoint-side commit links (`linked_commits` in a checkpoint's root `metadata.json`): a
//! commit with no `Entire-Checkpoint` trailer that a checkpoint names is that checkpoint's for
//! `show`, `list <range>`, `blame`, `why` and `doctor`; `link` writes such a link in the
//! reference's format; hostile entries are skipped with a diagnostic.

use serde_json::{json, Value};

use crate::blame::{checkpoint, CLAUDE, FILE};
use crate::env::{assert_code, stderr, stdout, Store, TestEnv};
use crate::fixtures::{hand_made, root_metadata_json, HEX_ID, TRANSCRIPT};

/// What the agent's Write wrote (lines 1-5), committed as it was.
const WRITTEN: &str = "package hello\n\nfunc Hello() string {\n\treturn \"hi\"\n}\n";

/// Commits `FILE` holding `text` with `message` (no trailer); returns the commit.
fn commit(env: &TestEnv, text: &str, message: &str) -> String {
    env.write_file(FILE, text.as_bytes());
    env.git(&["add", FILE]);
    env.git(&["commit", "-q", "-m", message]);
    env.git(&["rev-parse", "HEAD"]).trim().to_owned()
}

/// The root `metadata.json` of checkpoint `id` in `store`, as git holds it.
fn root(env: &TestEnv, store: Store, id: &str) -> Value {
    env.json(store, id, "metadata.json")
}

/// A squash-merged commit with no trailer whose checkpoint names it (written by the reference,
/// with an entry that names another repository and hostile ones): `show <commit>` shows the
/// checkpoint instead of "not found"; the hostile entries are never used, and said.
#[test]
fn show_reads_a_commit_a_checkpoint_names_and_skips_hostile_entries() {
    for store in Store::ALL {
        let env = TestEnv::new();
        let sha = commit(&env, WRITTEN, "squashed feature (#12)");
        let mut doc: Value = serde_json::from_str(&root_metadata_json(
            HEX_ID,
            &crate::env::tree_prefix(store, HEX_ID),
        ))
        .unwrap();
        doc["linked_commits"] = json!([
            {"sha": sha, "repo": "gh/owner/repo"},
            {"sha": "--output=pwned"},
            {"sha": "HEAD"},
            {"sha": "abc"},
        ]);
        hand_made(&env, store, HEX_ID, Some(doc.to_string().as_bytes()));
        let out = env.run(store, &["show", "HEAD"]);
        let err = assert_code(&out, 0, "show a linked commit");
        assert!(stdout(&out).contains(HEX_ID), "{store:?}: {}", stdout(&out));
        assert!(
            err.contains("--output=pwned") && err.contains("\"abc\""),
            "{err}"
        );
        assert!(!env.repo().join("pwned").exists());
        // The commit before it has no trailer and no checkpoint names it: still not found.
        commit(&env, "other\n", "unrelated");
        let out = env.run(store, &["show", "HEAD"]);
        let err = assert_code(&out, 3, "show an unlinked commit");
        assert!(err.contains("no checkpoint names it"), "{err}");
    }
}

/// `link` writes the link into the checkpoint's root in the reference's format (unioned with
/// what is there, once), and `show`, `blame`, `why` and `list <range>` read it: the agent's
/// lines of a commit with no trailer are the agent's, not a human's.
#[test]
fn link_writes_the_reference_format_and_blame_list_and_why_read_it() {
    for store in Store::ALL {
        let env = TestEnv::new();
        checkpoint(&env, env.repo(), store, HEX_ID, CLAUDE, "Claude Code");
        let base = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
        let sha = commit(&env, WRITTEN, "add hello (#7)");
        let before = env.tip(store, HEX_ID);
        let json = env.ok_json(store, &["blame", FILE, "--json"]);
        assert_eq!(json["counts"]["human"], 5, "{store:?}: unlinked: {json:#}");

        let out = env.ok(store, &["link", "HEAD", &HEX_ID[..6]]);
        assert_eq!(out.trim(), HEX_ID);
        let linked = env.tip(store, HEX_ID);
        assert_ne!(linked, before, "a new checkpoint commit");
        assert_eq!(env.parents(&linked), [before], "{store:?}: no rewrite");
        let doc = root(&env, store, HEX_ID);
        assert_eq!(doc["linked_commits"], json!([{"sha": sha}]), "{doc:#}");
        assert_eq!(doc["sessions"].as_array().unwrap().len(), 1);
        // Idempotent: the same link again writes nothing.
        let out = env.run(store, &["link", &sha, HEX_ID]);
        assert!(stderr(&out).contains("already links"), "{}", stderr(&out));
        assert_eq!(env.tip(store, HEX_ID), linked);

        let shown = env.ok(store, &["show", "HEAD"]);
        assert!(shown.contains(HEX_ID), "{shown}");
        let json = env.ok_json(store, &["blame", FILE, "--json"]);
        assert_eq!(json["counts"]["agent"], 3, "{store:?}: {json:#}");
        assert_eq!(json["counts"]["commit_linked"], 2, "{store:?}: {json:#}");
        assert_eq!(json["counts"]["human"], 0, "{store:?}: {json:#}");
        assert_eq!(json["lines"][0]["checkpoints"][0], HEX_ID);
        let why = env.ok_json(store, &["why", &format!("{FILE}:1"), "--json"]);
        assert_eq!(why["attribution"], "agent", "{why:#}");
        assert_eq!(why["agent_write"]["checkpoint_id"], HEX_ID);
        let range = format!("{base}..HEAD");
        let doc = env.ok_json(store, &["list", &range, "--json"]);
        assert_eq!(doc["commits"][0]["commit"], sha, "{doc:#}");
        assert_eq!(
            doc["commits"][0]["checkpoints"][0]["checkpoint_id"], HEX_ID,
            "{doc:#}"
        );
    }
}

/// `link` of something that is no commit, or to a checkpoint held nowhere, is "not found" and
/// writes nothing.
#[test]
fn link_refuses_what_is_no_commit_or_no_checkpoint() {
    let env = TestEnv::new();
    checkpoint(&env, env.repo(), Store::Refs, HEX_ID, CLAUDE, "Claude Code");
    let tip = env.tip(Store::Refs, HEX_ID);
    let out = env.run(Store::Refs, &["link", "--upload-pack=x", HEX_ID]);
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = env.run(Store::Refs, &["link", "no-such-branch", HEX_ID]);
    assert_code(&out, 3, "no commit");
    let out = env.run(Store::Refs, &["link", "HEAD", "f6e5d4c3b2a1"]);
    assert_code(&out, 3, "no checkpoint");
    assert_eq!(env.tip(Store::Refs, HEX_ID), tip);
}

/// The links of the v1 branch's checkpoints are read through the link index, by checkpoint
/// subtree: what it records for the subtree is what counts (the root is not read again), and a
/// change to the checkpoint (a new subtree) is read anew.
#[test]
fn branch_links_are_read_through_the_link_index() {
    let env = TestEnv::new();
    checkpoint(
        &env,
        env.repo(),
        Store::Branch,
        HEX_ID,
        CLAUDE,
        "Claude Code",
    );
    let sha = commit(&env, WRITTEN, "add hello (#7)");
    let out = env.run(Store::Branch, &["show", "HEAD"]);
    assert_code(&out, 3, "not linked yet");
    let index = env.common_dir().join("entire/branch-links");
    let built: Value = serde_json::from_slice(&std::fs::read(&index).unwrap()).unwrap();
    let subtree = env
        .git(&[
            "rev-parse",
            &format!(
                "{}:{}",
                crate::env::V1_BRANCH,
                &crate::env::branch_dir(HEX_ID)
            ),
        ])
        .trim()
        .to_owned();
    assert_eq!(built["trees"][&subtree], json!({}), "{built:#}");
    // The index says the subtree links the commit: trusted for exactly that subtree.
    let forged = json!({"version": 1, "trees": {&subtree: {"links": [sha]}}});
    std::fs::write(&index, forged.to_string()).unwrap();
    assert!(env.ok(Store::Branch, &["show", "HEAD"]).contains(HEX_ID));
    std::fs::write(&index, b"\x00not json").unwrap();
    assert_code(&env.run(Store::Branch, &["show", "HEAD"]), 3, "rebuilt");
    env.ok(Store::Branch, &["link", "HEAD", HEX_ID]);
    assert!(env.ok(Store::Branch, &["show", "HEAD"]).contains(HEX_ID));
}

/// Adds `0/entity_deltas.json` (what the reference's companion tool writes into a session) to
/// checkpoint `id` in `dir` as a new commit on its ref.
fn add_entity_deltas(env: &TestEnv, dir: &std::path::Path, id: &str, bytes: &[u8]) {
    let name = crate::env::checkpoint_ref(id);
    let tip = env.git_in(dir, &["rev-parse", &name]).trim().to_owned();
    let blob = env.git_stdin_in(dir, &["hash-object", "-w", "--stdin"], bytes);
    let mut slot = env.git_in(dir, &["ls-tree", &format!("{tip}:0")]);
    slot.push_str(&format!(
        "100644 blob {}\tentity_deltas.json\n",
        blob.trim()
    ));
    let slot = env.git_stdin_in(dir, &["mktree"], slot.as_bytes());
    let root: String = env
        .git_in(dir, &["ls-tree", &tip])
        .lines()
        .map(|l| match l.ends_with("\t0") {
            true => format!("040000 tree {}\t0\n", slot.trim()),
            false => format!("{l}\n"),
        })
        .collect();
    let root = env.git_stdin_in(dir, &["mktree"], root.as_bytes());
    let commit = env.git_stdin_in(
        dir,
        &["commit-tree", root.trim(), "-p", &tip],
        b"entity deltas\n",
    );
    env.git_in(dir, &["update-ref", &name, commit.trim()]);
}

/// Two clones link different commits to one checkpoint, and one of them has the session's
/// `entity_deltas.json`: the push that meets the other's version merges them, unioning
/// `linked_commits` by sha and keeping `entity_deltas.json`.
#[test]
fn a_diverged_checkpoint_unions_its_links_and_keeps_entity_deltas() {
    use crate::push::{add_remote, push_in, second_clone, write};
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    let first = commit(&env, WRITTEN, "squashed one (#1)");
    let second = commit(&env, "other\n", "squashed two (#2)");
    env.git(&["push", "-q", "origin", "main"]);
    assert_code(&push_in(&env, env.repo(), &["origin"]), 0, "first push");

    let laptop = second_clone(&env, &origin, "laptop");
    env.ok_in(Store::Refs, &laptop, &["link", &first, HEX_ID]);
    add_entity_deltas(&env, &laptop, HEX_ID, b"{\"schema\":\"1.0\"}\n");
    assert_code(
        &push_in(&env, &laptop, &["origin"]),
        0,
        "push from the laptop",
    );

    env.ok(Store::Refs, &["link", &second, HEX_ID]);
    let out = push_in(&env, env.repo(), &["origin"]);
    assert_code(&out, 0, "push of the diverged checkpoint");
    let name = crate::env::checkpoint_ref(HEX_ID);
    let merged = crate::env::json_in(&env, &origin, &format!("{name}:metadata.json"));
    assert_eq!(
        merged["linked_commits"],
        json!([{"sha": first}, {"sha": second}]),
        "{merged:#}"
    );
    let deltas = env.git_in(
        &origin,
        &["cat-file", "-p", &format!("{name}:0/entity_deltas.json")],
    );
    assert_eq!(deltas, "{\"schema\":\"1.0\"}\n");
}
