//! Links that survive history rewriting, through real `git` and the installed hooks: every way
//! to amend keeps the `Entire-Checkpoint` trailers, an interactive rebase's fixups and squashes
//! keep theirs, and a trailer a rewrite lost anyway stays linked through the rewrite map
//! (`post-rewrite`; docs/how-it-works.md), as `notes.rewriteRef` would keep a note.

use std::path::Path;

use serde_json::{json, Value};

use crate::commit_hooks::{
    amend_after_new_activity, checkpoint_state, commit, install_hooks, lines, record, show_json,
    the_trailer, trailer_ids, LINE_1, SESSION,
};
use crate::env::{parse_json, path_str, text, Store, TestEnv};

/// The store the checkpoints land in: the selected primary, or the default one (git-branch).
fn stored(primary: Option<Store>) -> Store {
    primary.unwrap_or(Store::Branch)
}

/// A commit linked to a checkpoint by a staged session; returns `(commit, id)`.
pub(crate) fn linked_commit(
    env: &TestEnv,
    primary: Option<Store>,
    file: &str,
    msg: &str,
) -> (String, String) {
    record(
        env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1])),
        &["--prompt", msg],
    );
    let (c, _) = commit(env, primary, file, msg);
    let id = the_trailer(env, &c);
    (c, id)
}

fn amend_keeps_the_trailer_whatever_the_message_option(primary: Option<Store>) {
    let env = TestEnv::new();
    install_hooks(&env);
    let (_, id) = linked_commit(&env, primary, "a.txt", "to amend");
    let before = checkpoint_state(&env);
    let msg_file = env.input_file("amend-msg", b"from a file\n");
    let variants: [&[&str]; 6] = [
        &["--amend", "-m", "reworded"],
        &["--amend", "-F", path_str(&msg_file)],
        &["--amend", "--no-edit"],
        &["--amend", "--reset-author", "--no-edit"],
        &["--amend", "--reset-author", "-m", "reworded again"],
        &["-a", "--amend", "-m", "--amend"],
    ];
    for (n, args) in variants.into_iter().enumerate() {
        let old = env.rev("HEAD").unwrap();
        // New content each time: with git's fixed test dates the same tree is the same commit.
        env.write_file("a.txt", format!("amend {n}\n").as_bytes());
        env.git(&["add", "a.txt"]);
        let mut full = vec!["commit", "-q"];
        full.extend_from_slice(args);
        env.git_hooked_ok(primary, env.repo(), &full);
        let new = env.rev("HEAD").unwrap();
        assert_ne!(old, new, "{args:?} rewrote HEAD");
        assert_eq!(
            trailer_ids(&env, &new),
            std::slice::from_ref(&id),
            "{args:?} keeps the one trailer:\n{}",
            env.message(&new)
        );
        assert_eq!(checkpoint_state(&env), before, "{args:?} wrote nothing");
    }
    assert_eq!(env.subject("HEAD"), "--amend");
    assert_eq!(show_json(&env, "HEAD")["checkpoint_id"], json!(id));
}

fn amend_with_a_new_message_condenses_new_activity_into_the_same_checkpoint(
    primary: Option<Store>,
) {
    let env = TestEnv::new();
    install_hooks(&env);
    let store = stored(primary);
    let (_, id) = linked_commit(&env, primary, "a.txt", "first");
    let longer = amend_after_new_activity(&env, primary, &["-m", "reworded"]);
    let head = env.rev("HEAD").unwrap();
    assert_eq!(
        trailer_ids(&env, &head),
        std::slice::from_ref(&id),
        "no new ID"
    );
    let summary = env.json(store, &id, "metadata.json");
    assert_eq!(
        summary["sessions"].as_array().map(Vec::len),
        Some(1),
        "{summary}"
    );
    let meta = env.json(store, &id, "0/metadata.json");
    assert_eq!(meta["commit_sha"], json!(head), "{meta}");
    assert_eq!(env.blob(store, &id, "0/full.jsonl"), longer);
    let prompt = env.blob_text(store, &id, "0/prompt.txt");
    assert!(
        prompt.contains("first") && prompt.contains("second"),
        "{prompt:?}"
    );
}

/// `git rebase -i --autosquash` with no editor stops (the squash's message is taken as it is).
fn autosquash(env: &TestEnv, primary: Option<Store>, onto: &str) {
    let out = env
        .git_hooked_command(
            primary,
            env.repo(),
            &["rebase", "-q", "-i", "--autosquash", onto],
        )
        .env("GIT_SEQUENCE_EDITOR", "true")
        .env("GIT_EDITOR", "true")
        .output()
        .expect("run git rebase");
    assert!(
        out.status.success(),
        "rebase failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn fixup_and_squash_keep_every_trailer(primary: Option<Store>) {
    let env = TestEnv::new();
    install_hooks(&env);
    let base = env.rev("HEAD").unwrap();
    let (_, a) = linked_commit(&env, primary, "a.txt", "feature");
    let (_, b) = linked_commit(&env, primary, "b.txt", "fixup! feature");
    let (_, c) = linked_commit(&env, primary, "c.txt", "squash! feature");
    let (_, d) = linked_commit(&env, primary, "d.txt", "fixup! feature");
    let before = checkpoint_state(&env);
    autosquash(&env, primary, &base);
    let head = env.rev("HEAD").unwrap();
    assert_eq!(env.parents(&head), [base], "one commit left");
    let ids = trailer_ids(&env, &head);
    for id in [&a, &b, &c, &d] {
        assert!(ids.contains(id), "{id} kept:\n{}", env.message(&head));
    }
    assert_eq!(checkpoint_state(&env), before, "nothing written");
    let shown = show_json(&env, "HEAD");
    let shown: Vec<&Value> = shown
        .as_array()
        .unwrap_or_else(|| panic!("four checkpoints: {shown}"))
        .iter()
        .map(|d| &d["checkpoint_id"])
        .collect();
    assert_eq!(shown.len(), 4, "{shown:?}");
}

/// An editor that deletes the `Entire-Checkpoint` lines of the message it is given.
fn dropping_editor(env: &TestEnv) -> String {
    let script = env.root().join("drop-trailer.sh");
    crate::env::write_executable(
        &script,
        "#!/bin/sh\ngrep -v '^Entire-Checkpoint:' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n",
    );
    path_str(&script).to_string()
}

/// `git commit --amend` through the hooks with an editor that drops the trailer; returns the new
/// HEAD, which carries no `Entire-Checkpoint` line.
pub(crate) fn amend_dropping_the_trailer(env: &TestEnv, primary: Option<Store>) -> String {
    let out = env
        .git_hooked_command(primary, env.repo(), &["commit", "-q", "--amend"])
        .env("GIT_EDITOR", dropping_editor(env))
        .output()
        .expect("run git commit");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let new = env.rev("HEAD").unwrap();
    assert!(trailer_ids(env, &new).is_empty(), "the editor dropped it");
    new
}

/// Rebases the current branch (one commit over `main~1`) onto a new commit beside it.
fn rebase_onto_a_new_base(env: &TestEnv, primary: Option<Store>) {
    env.git(&["branch", "-q", "base", "HEAD~1"]);
    env.git(&["checkout", "-q", "base"]);
    env.write_file("base.txt", b"new base\n");
    env.git(&["add", "base.txt"]);
    env.git(&["commit", "-q", "-m", "new base"]);
    env.git(&["checkout", "-q", "main"]);
    env.git_hooked_ok(primary, env.repo(), &["rebase", "-q", "base"]);
}

fn rewrite_map_json(env: &TestEnv) -> Value {
    let path = env.common_dir().join("entire").join("rewrites.json");
    parse_json(&std::fs::read(&path).expect("the rewrite map was written"))
}

fn a_trailer_the_editor_drops_stays_linked_through_the_rewrite_map(primary: Option<Store>) {
    let env = TestEnv::new();
    install_hooks(&env);
    let (old, id) = linked_commit(&env, primary, "a.txt", "to reword");
    let before = checkpoint_state(&env);
    let new = amend_dropping_the_trailer(&env, primary);
    let map = rewrite_map_json(&env);
    assert_eq!(
        map["commits"][&new]["rewritten_from"],
        json!([old]),
        "{map}"
    );
    assert_eq!(map["commits"][&new]["checkpoints"], json!([id]), "{map}");
    assert_eq!(show_json(&env, "HEAD")["checkpoint_id"], json!(id));

    // A rebase that rewrites it again carries the inherited link on.
    rebase_onto_a_new_base(&env, primary);
    let newer = env.rev("HEAD").unwrap();
    assert_ne!(newer, new);
    let map = rewrite_map_json(&env);
    assert_eq!(
        map["commits"][&newer]["rewritten_from"],
        json!([new]),
        "{map}"
    );
    assert_eq!(map["commits"][&newer]["checkpoints"], json!([id]), "{map}");
    assert_eq!(show_json(&env, "HEAD")["checkpoint_id"], json!(id));
    let plain = env.ok_default(&["show", &newer]);
    assert!(plain.contains(&id), "{plain}");
    assert_eq!(
        checkpoint_state(&env),
        before,
        "nothing written to the store"
    );
}

/// A rebase that keeps the trailers records the new commit for each old one all the same, so
/// the checkpoint's `commit_sha` can be followed to the commit that carries it today.
fn a_rebase_records_the_new_commit_for_each_old_one(primary: Option<Store>) {
    let env = TestEnv::new();
    install_hooks(&env);
    let (old, id) = linked_commit(&env, primary, "a.txt", "linked");
    rebase_onto_a_new_base(&env, primary);
    let new = env.rev("HEAD").unwrap();
    assert_eq!(trailer_ids(&env, &new), std::slice::from_ref(&id));
    let map = rewrite_map_json(&env);
    assert_eq!(
        map["commits"][&new]["rewritten_from"],
        json!([old]),
        "{map}"
    );
    assert_eq!(map["commits"][&new]["checkpoints"], json!([]), "{map}");
}

/// `git <args>` in `dir` where none of our hooks runs, as on a forge or in a clone without them.
fn git_without_hooks(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    let none = env.root().join("no-hooks");
    std::fs::create_dir_all(&none).unwrap();
    let setting = format!("core.hooksPath={}", path_str(&none));
    let mut argv = vec!["-c", setting.as_str()];
    argv.extend_from_slice(args);
    env.git_in(dir, &argv)
}

/// doctor's `squash-unlinked` findings under `primary`, with the exit code asserted.
fn squash_findings(env: &TestEnv, primary: Option<Store>, code: i32) -> Vec<Value> {
    let out = env.run_primary_in(primary, env.repo(), &["doctor", "--json"]);
    crate::env::assert_code(&out, code, "doctor --json");
    let doc = parse_json(&out.stdout);
    crate::doctor::findings_of(&doc, "squash-unlinked")
        .into_iter()
        .cloned()
        .collect()
}

/// `git merge --squash`, then `git commit -m` where our hooks do not run: the squash carries no
/// link. doctor reports it (after main moved on too), naming the branch and the checkpoints it
/// drops; while it is `HEAD` and unpushed the repair is the amend that adds their trailers, and
/// once run as given the commit links both and doctor is clean.
fn a_squash_made_without_our_hooks_is_reported_and_relinked(primary: Option<Store>) {
    let env = TestEnv::new();
    let (a, b) = feature_with_two_links(&env, primary);
    commit(&env, primary, "other.txt", "main moves on");
    git_without_hooks(&env, env.repo(), &["merge", "-q", "--squash", "feature"]);
    git_without_hooks(&env, env.repo(), &["commit", "-q", "-m", "Feature"]);
    let squash = env.rev("HEAD").unwrap();
    assert!(trailer_ids(&env, &squash).is_empty());

    let found = squash_findings(&env, primary, 1);
    assert_eq!(found.len(), 1, "{found:?}");
    let short = env.git(&["rev-parse", "--short", &squash]);
    assert_eq!(found[0]["subject"], short.trim());
    let message = found[0]["message"].as_str().unwrap();
    for needle in ["\"Feature\"", "2 linked commit(s) of feature", &a, &b] {
        assert!(message.contains(needle), "{message} names {needle}");
    }
    let argv = crate::env::repair_args(&found[0]).unwrap_or_else(|| panic!("{found:?}"));
    let ta = format!("Entire-Checkpoint: {a}");
    let tb = format!("Entire-Checkpoint: {b}");
    assert_eq!(
        argv,
        [
            "commit",
            "--amend",
            "--no-edit",
            "--trailer",
            &ta,
            "--trailer",
            &tb
        ]
    );
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    env.git_hooked_ok(primary, env.repo(), &argv);
    assert_eq!(trailer_ids(&env, "HEAD"), [a, b]);
    assert!(squash_findings(&env, primary, 0).is_empty());
}

/// A forge's squash merge (made in another clone without our hooks, keeping only the title)
/// reaches this clone by a pull while the squashed branch is still here: doctor reports it with
/// advice, not an amend (the commit is published); `--fix` links the squash from both
/// checkpoints (their `linked_commits`, not this clone's rewrite map), so `show` of the squash
/// reads both checkpoints and doctor is clean.
#[test]
fn a_forge_squash_merge_is_reported_and_fix_relinks_it_here() {
    let env = TestEnv::new();
    install_hooks(&env);
    let origin = env.bare_remote("origin");
    env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    env.git(&["checkout", "-q", "-b", "feature"]);
    let (_, a) = linked_commit(&env, None, "a.txt", "first");
    let (_, b) = linked_commit(&env, None, "b.txt", "second");
    env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "feature"]);
    let forge = env.clone_of(&origin, "forge", &[]);
    git_without_hooks(&env, &forge, &["merge", "-q", "--squash", "origin/feature"]);
    git_without_hooks(&env, &forge, &["commit", "-q", "-m", "Feature (#1)"]);
    git_without_hooks(&env, &forge, &["push", "-q", "origin", "main"]);
    env.git(&["checkout", "-q", "main"]);
    env.git_hooked_ok(
        None,
        env.repo(),
        &["pull", "-q", "--ff-only", "origin", "main"],
    );

    let found = squash_findings(&env, None, 1);
    assert_eq!(
        found.len(),
        1,
        "once, though origin/feature holds them too: {found:?}"
    );
    assert!(found[0]["repair"].is_null(), "no amend of a pushed commit");
    assert!(
        found[0]["advice"]
            .as_str()
            .unwrap()
            .contains("doctor --fix"),
        "{found:?}"
    );
    let fixed = env.run_primary_in(None, env.repo(), &["doctor", "--fix"]);
    crate::env::assert_code(&fixed, 0, "doctor --fix");
    assert!(
        text(&fixed.stdout).contains("linked from checkpoint(s)"),
        "{}",
        text(&fixed.stdout)
    );
    let squash = env.rev("HEAD").unwrap();
    for id in [&a, &b] {
        // Hex IDs: the default primary is the v1 branch.
        let root = env.json(Store::Branch, id, "metadata.json");
        assert_eq!(
            root["linked_commits"],
            json!([{ "sha": squash }]),
            "{root:#}"
        );
    }
    assert!(
        !env.common_dir().join("entire/rewrites.json").exists()
            || rewrite_map_json(&env)["commits"][&squash].is_null(),
        "not through the rewrite map"
    );
    assert!(squash_findings(&env, None, 0).is_empty());
    let shown = show_json(&env, "HEAD");
    let mut shown: Vec<&str> = shown
        .as_array()
        .unwrap_or_else(|| panic!("two checkpoints: {shown}"))
        .iter()
        .map(|d| d["checkpoint_id"].as_str().unwrap())
        .collect();
    shown.sort();
    let mut linked = [a.as_str(), b.as_str()];
    linked.sort();
    assert_eq!(shown, linked);
}

every_primary! {
    amend_keeps_the_trailer_whatever_the_message_option;
    amend_with_a_new_message_condenses_new_activity_into_the_same_checkpoint;
    fixup_and_squash_keep_every_trailer;
    a_trailer_the_editor_drops_stays_linked_through_the_rewrite_map;
    a_rebase_records_the_new_commit_for_each_old_one;
    a_staged_session_waits_for_the_users_own_commit_while_git_recreates_commits;
    merge_squash_keeps_every_link;
    a_squash_made_without_our_hooks_is_reported_and_relinked;
}

#[test]
fn post_rewrite_without_hooks_input_records_nothing() {
    let env = TestEnv::new();
    env.ok_default(&["hook", "post-rewrite", "amend"]);
    assert!(!Path::new(&env.common_dir().join("entire").join("rewrites.json")).exists());
}

/// A session staged while git re-creates commits belongs to the user's next own commit: a
/// reword in `rebase -i`, `cherry-pick`, `revert` and `pull --rebase` run the commit hooks for
/// each commit they make, and none of them may condense it into the checkpoint a re-created
/// commit already links (or link a re-created commit to a new one). Nothing is written until the
/// user commits; then the session goes into a new checkpoint of its own.
fn a_staged_session_waits_for_the_users_own_commit_while_git_recreates_commits(
    primary: Option<Store>,
) {
    const STAGED: &str = "sess-staged-during-rewrites";
    let env = TestEnv::new();
    install_hooks(&env);
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    let base = env.rev("HEAD").unwrap();
    let (linked, id) = linked_commit(&env, primary, "a.txt", "linked");
    let (plain, _) = commit(&env, primary, "b.txt", "plain");
    assert!(trailer_ids(&env, &plain).is_empty(), "nothing was staged");
    let linked_meta = |env: &TestEnv| env.json(stored(primary), &id, "0/metadata.json");
    assert_eq!(linked_meta(&env)["commit_sha"], json!(linked));
    // A branch to cherry-pick onto, made while nothing is staged.
    env.git(&["checkout", "-q", "-b", "side", &base]);
    env.write_file("side.txt", b"side\n");
    env.git(&["add", "side.txt"]);
    env.git(&["commit", "-q", "-m", "side"]);
    env.git(&["checkout", "-q", "main"]);
    record(
        &env,
        env.repo(),
        STAGED,
        Some(&lines(&["{\"type\":\"user\",\"message\":\"staged\"}"])),
        &["--prompt", "staged"],
    );
    let before = checkpoint_state(&env);
    let untouched = |env: &TestEnv, what: &str| {
        assert_eq!(checkpoint_state(env), before, "{what} wrote nothing");
        assert_eq!(
            linked_meta(env)["commit_sha"],
            json!(linked),
            "{what} left the checkpoint's commit"
        );
        let entry = crate::commit_hooks::session_entry(env, env.repo(), STAGED);
        assert_eq!(
            entry["pending"],
            json!(true),
            "{what}: still staged: {entry}"
        );
        let head = env.rev("HEAD").unwrap();
        for commit in [head.clone(), format!("{head}~1")] {
            let ids = trailer_ids(env, &commit);
            assert!(ids.is_empty() || ids == [id.clone()], "{what}: {ids:?}");
        }
    };

    let reword = env
        .git_hooked_command(primary, env.repo(), &["rebase", "-q", "-i", &base])
        .env("GIT_SEQUENCE_EDITOR", "sed -i s/^pick/reword/")
        .env("GIT_EDITOR", "true")
        .output()
        .unwrap();
    assert!(reword.status.success(), "{}", text(&reword.stderr));
    untouched(&env, "rebase -i (reword)");

    env.git(&["checkout", "-q", "side"]);
    env.git_hooked_ok(primary, env.repo(), &["cherry-pick", "main~1", "main"]);
    untouched(&env, "cherry-pick");
    env.git_hooked_ok(primary, env.repo(), &["revert", "--no-edit", "HEAD"]);
    untouched(&env, "revert");

    env.git(&["checkout", "-q", "main"]);
    let other = env.clone_of(&origin, "other", &[]);
    std::fs::write(other.join("upstream.txt"), "upstream\n").unwrap();
    env.git_in(&other, &["add", "upstream.txt"]);
    env.git_in(&other, &["commit", "-q", "-m", "upstream"]);
    env.git_in(&other, &["push", "-q", "origin", "main"]);
    env.git_hooked_ok(
        primary,
        env.repo(),
        &["pull", "-q", "--rebase", "origin", "main"],
    );
    untouched(&env, "pull --rebase");

    let (own, _) = commit(&env, primary, "own.txt", "own");
    let new = the_trailer(&env, &own);
    assert_ne!(new, id);
    let meta = env.json(stored(primary), &new, "0/metadata.json");
    assert_eq!(meta["session_id"], json!(STAGED), "{meta}");
    assert_eq!(meta["commit_sha"], json!(own), "{meta}");
    assert_eq!(linked_meta(&env)["commit_sha"], json!(linked));
}

/// With our hooks installed, a branch `feature` of two linked commits (`a.txt`, `b.txt`); `main`
/// checked out again. Returns their checkpoint IDs, oldest first.
fn feature_with_two_links(env: &TestEnv, primary: Option<Store>) -> (String, String) {
    install_hooks(env);
    env.git(&["checkout", "-q", "-b", "feature"]);
    let (_, a) = linked_commit(env, primary, "a.txt", "first");
    let (_, b) = linked_commit(env, primary, "b.txt", "second");
    env.git(&["checkout", "-q", "main"]);
    (a, b)
}

/// `git merge --squash` then `git commit`: git lists the squashed commits in the message only as
/// indented text, trailers included. The squash commit carries a trailer for each checkpoint
/// they linked, as a squash in `rebase -i` does, and `show` resolves them all.
fn merge_squash_keeps_every_link(primary: Option<Store>) {
    let env = TestEnv::new();
    let (a, b) = feature_with_two_links(&env, primary);
    env.git_hooked_ok(primary, env.repo(), &["merge", "-q", "--squash", "feature"]);
    let before = checkpoint_state(&env);
    env.git_hooked_ok(primary, env.repo(), &["commit", "-q", "--no-edit"]);
    let head = env.rev("HEAD").unwrap();
    assert_eq!(
        trailer_ids(&env, &head),
        [a.clone(), b.clone()],
        "{}",
        env.message(&head)
    );
    assert_eq!(checkpoint_state(&env), before, "nothing written");
    let shown = show_json(&env, "HEAD");
    let mut shown: Vec<String> = shown
        .as_array()
        .unwrap_or_else(|| panic!("two checkpoints: {shown}"))
        .iter()
        .map(|d| d["checkpoint_id"].as_str().unwrap().to_owned())
        .collect();
    shown.sort();
    let mut linked = vec![a, b];
    linked.sort();
    assert_eq!(shown, linked);
}
