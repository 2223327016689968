//! `git entire-checkpoint gc`: only checkpoint refs confirmed on their delivery remote at the
//! same commit, queued nowhere and old enough are deleted; every never-delete case is built with
//! plain git; survivors are checked with `git for-each-ref`; pruned checkpoints come back on
//! demand, and an unreachable remote is a fetch failure, never "not found". Bulk writers pack
//! refs; the `pre-auto-gc` hook is installed only when gc is enabled.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::env::{
    assert_success, checkpoint_ref, hooks_dir, parse_json, path_with_bins, stderr, Store, TestEnv,
};
use crate::fixtures::{commit_tree, write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2};

const PLAIN_OLD: &str = "aaaaaaaaaa01";
const UNPUSHED: &str = "aaaaaaaaaa02";
const AHEAD: &str = "aaaaaaaaaa03";
const DIVERGED: &str = "aaaaaaaaaa04";
const BEHIND: &str = "aaaaaaaaaa05";
const TOO_NEW: &str = "aaaaaaaaaa06";

/// A commit of `tree` with `parent`, committed now (not at the fixed test date).
fn commit_now(env: &TestEnv, tree: &str, parent: &str) -> String {
    let now = format!(
        "@{} +0000",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    );
    let out = env
        .git_command_in(
            env.repo(),
            &["commit-tree", tree, "-p", parent, "-m", "now"],
        )
        .env("GIT_COMMITTER_DATE", &now)
        .env("GIT_AUTHOR_DATE", &now)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Sets the local ref of `id` to `commit` (plain git: no queue involved).
fn set_local(env: &TestEnv, id: &str, commit: &str) {
    env.git(&["update-ref", &checkpoint_ref(id), commit]);
}

/// Sets the remote's ref of `id` to `commit` with a plain `git push` (fast-forward only).
fn set_remote(env: &TestEnv, id: &str, commit: &str) {
    env.git(&[
        "push",
        "-q",
        "origin",
        &format!("{commit}:{}", checkpoint_ref(id)),
    ]);
}

/// The world with one checkpoint per case, and the ones gc may delete.
pub(crate) struct Cases {
    pub(crate) env: TestEnv,
    origin: PathBuf,
    deletable: Vec<String>,
}

/// Builds, against a bare `origin`:
/// - `HEX_ID`: written and pushed by us (deletable);
/// - `PLAIN_OLD`: made and pushed with plain git (deletable);
/// - `HEX_ID_2`: written by us (so queued), and put on the remote with plain git;
/// - `UNPUSHED`: local only; `AHEAD`: local is a child of the remote's;
/// - `DIVERGED`: local and remote are different children of one commit;
/// - `BEHIND`: the remote is a child of the local commit;
/// - `TOO_NEW`: pushed, but committed now.
pub(crate) fn cases() -> Cases {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    assert_success(&env.run(Store::Refs, &["push"]), &["push"]);
    let tree = env.git(&["rev-parse", &format!("{}^{{tree}}", checkpoint_ref(HEX_ID))]);
    let tree = tree.trim();
    let base = |msg: &str| commit_tree(&env, tree, None, msg);

    let c = base("plain old");
    set_local(&env, PLAIN_OLD, &c);
    set_remote(&env, PLAIN_OLD, &c);

    write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);
    let tip = env.git(&["rev-parse", &checkpoint_ref(HEX_ID_2)]);
    set_remote(&env, HEX_ID_2, tip.trim());

    set_local(&env, UNPUSHED, &base("unpushed"));

    let c1 = base("ahead base");
    set_remote(&env, AHEAD, &c1);
    set_local(
        &env,
        AHEAD,
        &commit_tree(&env, tree, Some(&c1), "ahead child"),
    );

    let c1 = base("diverged base");
    set_remote(
        &env,
        DIVERGED,
        &commit_tree(&env, tree, Some(&c1), "theirs"),
    );
    set_local(&env, DIVERGED, &commit_tree(&env, tree, Some(&c1), "ours"));

    let c1 = base("behind base");
    set_local(&env, BEHIND, &c1);
    set_remote(
        &env,
        BEHIND,
        &commit_tree(&env, tree, Some(&c1), "remote child"),
    );

    let c = commit_now(&env, tree, &base("too new base"));
    set_local(&env, TOO_NEW, &c);
    set_remote(&env, TOO_NEW, &c);

    Cases {
        env,
        origin,
        deletable: vec![checkpoint_ref(PLAIN_OLD), checkpoint_ref(HEX_ID)],
    }
}

fn gc_json(env: &TestEnv, args: &[&str]) -> Value {
    let mut full = vec!["gc", "--json"];
    full.extend_from_slice(args);
    let out = env.run(Store::Refs, &full);
    assert_success(&out, &full);
    parse_json(&out.stdout)
}

fn loose_checkpoint_refs(dir: &Path) -> Vec<PathBuf> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                walk(&e.path(), out);
            } else {
                out.push(e.path());
            }
        }
    }
    let mut out = Vec::new();
    walk(&dir.join("refs/entire"), &mut out);
    out
}

#[test]
fn gc_deletes_only_confirmed_old_refs_and_packs_the_rest() {
    let w = cases();
    let env = &w.env;
    let before = env.checkpoint_tips();
    let remote_before = env.checkpoint_tips_in(&w.origin);

    let dry = gc_json(env, &["--keep-days", "30", "--dry-run"]);
    assert_eq!(env.checkpoint_tips(), before, "a dry run deletes nothing");
    let mut deleted: Vec<String> = dry["deleted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| checkpoint_ref(v.as_str().unwrap()))
        .collect();
    deleted.sort();
    assert_eq!(deleted, w.deletable);

    let v = gc_json(env, &["--keep-days", "30"]);
    assert_eq!(v["deleted"], dry["deleted"]);
    assert_eq!(v["remote"], json!("origin"));
    assert_eq!(v["remote_count"], json!(remote_before.len()));
    assert_eq!(
        v["kept"],
        json!({"queued": 1, "unpushed": 1, "ahead": 1, "diverged": 2, "too_new": 1, "moved": 0, "not_a_checkpoint": 0}),
        "every reason, zeros included"
    );
    let mut survivors = before.clone();
    for d in &w.deletable {
        survivors.remove(d);
    }
    assert_eq!(
        env.checkpoint_tips(),
        survivors,
        "every other ref survives unchanged"
    );
    assert_eq!(env.checkpoint_tips_in(&w.origin), remote_before);
    assert_eq!(
        loose_checkpoint_refs(&env.common_dir()),
        Vec::<PathBuf>::new(),
        "the namespace is packed"
    );
    match std::fs::read_to_string(env.common_dir().join("reftable/tables.list")) {
        // Packing a reftable repository compacts its tables into one.
        Ok(tables) => assert_eq!(tables.lines().count(), 1, "{tables}"),
        Err(_) => {
            let packed = std::fs::read_to_string(env.common_dir().join("packed-refs")).unwrap();
            assert!(survivors.keys().all(|r| packed.contains(r.as_str())));
        }
    }

    // A second run finds nothing more to delete.
    let again = gc_json(env, &["--keep-days", "30"]);
    assert_eq!(again["deleted"], json!([]));

    // A longer retention keeps even the confirmed ones.
    let w2 = cases();
    let v = gc_json(&w2.env, &["--keep-days", "100000"]);
    assert_eq!(v["deleted"], json!([]));
    assert_eq!(v["kept"]["too_new"], json!(3));
}

#[test]
fn a_pruned_checkpoint_comes_back_on_demand_and_offline_is_a_fetch_failure() {
    let w = cases();
    let env = &w.env;
    let tip = env.checkpoint_tips()[&checkpoint_ref(HEX_ID)].clone();
    gc_json(env, &["--keep-days", "30"]);
    assert!(!env.checkpoint_tips().contains_key(&checkpoint_ref(HEX_ID)));

    let out = env.run(Store::Refs, &["show", HEX_ID, "--json"]);
    assert_success(&out, &["show", HEX_ID]);
    assert_eq!(parse_json(&out.stdout)["checkpoint_id"], json!(HEX_ID));
    assert_eq!(
        env.checkpoint_tips()[&checkpoint_ref(HEX_ID)],
        tip,
        "back at the same commit"
    );

    gc_json(env, &["--keep-days", "30"]);
    let moved = env.root().join("origin-away.git");
    std::fs::rename(&w.origin, &moved).unwrap();
    let out = env.run(Store::Refs, &["show", HEX_ID]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("fetch checkpoint ref"), "{err}");
    assert!(!err.contains("not found"), "{err}");

    // gc itself with the remote unreachable deletes nothing.
    let before = env.checkpoint_tips();
    let out = env.run(Store::Refs, &["gc", "--keep-days", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("could not list the checkpoints of origin, so none was deleted"));
    assert_eq!(env.checkpoint_tips(), before);
}

#[test]
fn without_a_remote_or_a_retention_gc_deletes_nothing_and_says_why() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let before = env.checkpoint_tips();

    let out = env.run(Store::Refs, &["gc", "--keep-days", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no remote to confirm checkpoints against, so none was deleted"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.checkpoint_tips(), before);

    env.bare_remote("origin");
    let out = env.run(Store::Refs, &["gc"]);
    assert_success(&out, &["gc"]);
    assert!(stderr(&out).contains("gc is off"), "{}", stderr(&out));
    assert_eq!(
        gc_json(&env, &[]),
        json!({
            "enabled": false, "dry_run": false, "keep_days": null, "remote": null,
            "remote_count": null, "deleted": [],
            "kept": {"queued": 0, "unpushed": 0, "ahead": 0, "diverged": 0, "too_new": 0, "moved": 0, "not_a_checkpoint": 0}
        }),
        "gc off has the same shape as a run"
    );

    env.write_file(
        ".entire/settings.json",
        br#"{"strategy_options": {"checkpoint_gc_days": "soon"}}"#,
    );
    let out = env.run(Store::Refs, &["gc"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("checkpoint_gc_days"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.checkpoint_tips(), before);
}

#[test]
fn the_retention_setting_enables_gc_and_the_pre_auto_gc_hook() {
    let w = cases();
    let env = &w.env;
    let before = env.checkpoint_tips();
    assert_success(
        &env.run(Store::Refs, &["hooks", "install"]),
        &["hooks", "install"],
    );
    let hook = hooks_dir(env).join("pre-auto-gc");
    assert!(!hook.exists(), "no pre-auto-gc hook while gc is off");
    // The hooks `status --json` lists, each with whether ours runs there.
    let hooks_status = |env: &TestEnv| -> std::collections::BTreeMap<String, bool> {
        let v = parse_json(&env.run(Store::Refs, &["status", "--json"]).stdout);
        v["hooks"]["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                let name = h["name"].as_str().unwrap();
                (name.to_owned(), crate::env::hook_is_ours(&v, name))
            })
            .collect()
    };
    assert!(!hooks_status(env).contains_key("pre-auto-gc"));

    env.write_file(
        ".entire/settings.json",
        br#"{"strategy_options": {"checkpoint_gc_days": 30}}"#,
    );
    let out = env.run(Store::Refs, &["hooks", "install"]);
    assert_success(&out, &["hooks", "install"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("pre-auto-gc"));
    assert!(hook.exists());
    assert_eq!(hooks_status(env).get("pre-auto-gc"), Some(&true));
    assert!(
        String::from_utf8_lossy(&env.run(Store::Refs, &["hooks", "status"]).stdout)
            .contains("pre-auto-gc")
    );

    // git runs the hook before its automatic gc; run it the way git does.
    let out = env
        .bin_cmd(&hook)
        .env("PATH", path_with_bins())
        .env("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs")
        .output()
        .unwrap();
    assert_success(&out, &["pre-auto-gc"]);
    let mut survivors = before;
    for d in &w.deletable {
        survivors.remove(d);
    }
    assert_eq!(
        env.checkpoint_tips(),
        survivors,
        "the hook collected exactly the confirmed refs"
    );

    let out = env.run(Store::Refs, &["hooks", "uninstall"]);
    assert_success(&out, &["hooks", "uninstall"]);
    assert!(!hook.exists());
}

#[test]
fn fetch_all_packs_the_refs_it_brings() {
    let w = cases();
    let env = &w.env;
    let clone = env.clone_of(&w.origin, "clone", &[]);
    let out = env.fetch_in(&clone, &["--all"]);
    assert_success(&out, &["entire-fetch", "--all"]);
    assert_eq!(
        env.checkpoint_tips_in(&clone),
        env.checkpoint_tips_in(&w.origin)
    );
    assert_eq!(
        loose_checkpoint_refs(&clone.join(".git")),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn migrate_packs_the_refs_it_writes() {
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "s1", TRANSCRIPT);
    write_std(&env, Store::Branch, HEX_ID_2, "s2", TRANSCRIPT_2);
    assert_success(&env.run(Store::Refs, &["migrate"]), &["migrate"]);
    assert_eq!(env.checkpoint_tips().len(), 2);
    assert_eq!(
        loose_checkpoint_refs(&env.common_dir()),
        Vec::<PathBuf>::new()
    );
}
